//! The audit trail: one JSON line per hook decision, appended under a lock, read back by
//! `rewind log`. Tool arguments are summarised and secret-looking keys redacted.

use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deadline::Deadline;
use crate::lockfile;

/// Argument keys whose values never reach the audit trail.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "key",
    "credential",
    "passphrase",
    "auth",
];
/// Longest argument value kept in the summary.
const VALUE_MAX: usize = 120;

/// One decision.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub time: String,
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    pub tool: String,
    pub class: String,
    /// Every VM the call reaches (Zerto's names once resolved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vms: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vpgs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<AuditCheckpoint>,
    pub decision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
}

/// A checkpoint the guard confirmed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AuditCheckpoint {
    pub vpg: String,
    pub id: String,
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// Appends a record to `path`, waiting at most `wait` for the lock.
pub fn append(path: &Path, record: &Record, wait: Duration) -> anyhow::Result<()> {
    let deadline = Deadline::after(wait);
    let _guard = lockfile::lock(&path.with_extension("lock"), &deadline)?;
    if let Some(dir) = path.parent() {
        lockfile::create_private_dir(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    // Decisions name hosts, commands and checkpoints: readable by the user alone.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    file.write_all(&line)?;
    Ok(())
}

/// Which records `rewind log` shows.
#[derive(Debug, Default)]
pub struct Filter<'a> {
    pub vm: Option<&'a str>,
    pub change: Option<&'a str>,
    pub decision: Option<&'a str>,
}

impl Filter<'_> {
    fn keeps(&self, r: &Record) -> bool {
        self.vm
            .is_none_or(|vm| r.vms.iter().any(|v| v.eq_ignore_ascii_case(vm)))
            && self.change.is_none_or(|c| r.change.as_deref() == Some(c))
            && self.decision.is_none_or(|d| r.decision == d)
    }
}

/// Reads the records that pass `filter`; a line that does not parse is reported with its
/// number, not skipped silently.
pub fn read(path: &Path, filter: &Filter<'_>) -> anyhow::Result<Vec<Record>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(anyhow::anyhow!(
                "cannot read audit log {}: {e}",
                path.display()
            ));
        }
    };
    let mut records = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("audit log {} line {}: {e}", path.display(), n + 1))?;
        if filter.keeps(&record) {
            records.push(record);
        }
    }
    Ok(records)
}

/// A summary of tool arguments safe to keep: secret-looking keys redacted, long values cut.
pub fn summarise(args: &Value) -> Value {
    match args {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let lower = k.to_ascii_lowercase();
                    let value = if SECRET_WORDS.iter().any(|w| lower.contains(w)) {
                        Value::String(String::from("[redacted]"))
                    } else {
                        summarise(v)
                    };
                    (k.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().take(20).map(summarise).collect()),
        Value::String(s) => {
            let text = redact_inline(s);
            if text.chars().count() > VALUE_MAX {
                let cut: String = text.chars().take(VALUE_MAX).collect();
                Value::String(format!("{cut}…"))
            } else {
                Value::String(text)
            }
        }
        other => other.clone(),
    }
}

/// Redacts secrets written inline in a command: `password=x`, `--token x`, `--api-key=x`,
/// `Bearer x`. Words are kept; only the values go.
fn redact_inline(text: &str) -> String {
    let secretish = |word: &str| {
        let lower = word.to_ascii_lowercase();
        SECRET_WORDS.iter().any(|w| lower.contains(w))
    };
    let mut out: Vec<String> = Vec::new();
    let mut hide_next = false;
    for word in text.split(' ') {
        if hide_next && !word.is_empty() {
            out.push(String::from("[redacted]"));
            hide_next = false;
            continue;
        }
        match word.split_once('=') {
            Some((key, value)) if !value.is_empty() && secretish(key) => {
                out.push(format!("{key}=[redacted]"));
            }
            _ => {
                let flag = word.starts_with('-') && secretish(word) && !word.contains('=');
                hide_next = flag || word.eq_ignore_ascii_case("bearer");
                out.push(word.to_owned());
            }
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_redacted_and_long_values_cut() {
        let summary = summarise(&json!({
            "host": "jp-ubuntu",
            "Password": "hunter2",
            "nested": {"api_key": "abc", "command": "x".repeat(500)},
        }));
        let text = summary.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("\"abc\""),
            "{text}"
        );
        assert_eq!(summary["host"], "jp-ubuntu");
        assert!(
            summary["nested"]["command"]
                .as_str()
                .expect("str")
                .chars()
                .count()
                <= VALUE_MAX + 1
        );
    }

    #[test]
    fn secrets_written_inline_in_commands_are_redacted() {
        let cases = [
            (
                "mysql --password=Hunter2 -e 'select 1'",
                "mysql --password=[redacted] -e 'select 1'",
            ),
            (
                "deploy --api-token s3cr3t --env prod",
                "deploy --api-token [redacted] --env prod",
            ),
            (
                "PGPASSWORD=pw psql -h db01",
                "PGPASSWORD=[redacted] psql -h db01",
            ),
            (
                "curl -H 'Authorization: Bearer eyJabc' x",
                "curl -H 'Authorization: Bearer [redacted] x",
            ),
            ("systemctl restart app", "systemctl restart app"),
        ];
        for (command, expected) in cases {
            assert_eq!(
                summarise(&json!({ "command": command }))["command"],
                expected
            );
        }
    }

    #[test]
    fn appended_records_read_back_filtered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state/audit.jsonl");
        for (vm, decision) in [
            ("jp-ubuntu", "context"),
            ("db01", "deny"),
            ("jp-ubuntu", "ask"),
        ] {
            let record = Record {
                vms: vec![vm.into()],
                decision: decision.into(),
                tool: "mcp__ssh__exec".into(),
                ..Record::default()
            };
            append(&path, &record, Duration::from_secs(1)).expect("append");
        }
        let all = read(&path, &Filter::default()).expect("read");
        assert_eq!(all.len(), 3);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "the audit trail is private");
        }
        let some = read(
            &path,
            &Filter {
                vm: Some("JP-UBUNTU"),
                decision: Some("ask"),
                ..Filter::default()
            },
        )
        .expect("read");
        assert_eq!(some.len(), 1);
        std::fs::write(&path, "{not json\n").expect("write");
        let err = read(&path, &Filter::default())
            .expect_err("corrupt")
            .to_string();
        assert!(err.contains("line 1"), "{err}");
    }
}
