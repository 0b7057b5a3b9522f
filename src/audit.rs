//! The audit trail: one JSON line per hook decision, appended under a lock, read back by
//! `rewind log`. Tool arguments are summarised and secret-looking keys redacted.

use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deadline::Deadline;
use crate::lockfile;
use crate::secret;

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
                    let value = if secret::is_secret_key(k) {
                        Value::String(String::from(secret::REDACTED))
                    } else {
                        summarise(v)
                    };
                    (k.clone(), value)
                })
                .collect(),
        ),
        // An argument vector: a secret flag's value is the next item.
        Value::Array(items) if items.iter().all(Value::is_string) => Value::Array(
            secret::redact_args(items.iter().take(20).filter_map(Value::as_str))
                .into_iter()
                .map(|item| summarise(&Value::String(item)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().take(20).map(summarise).collect()),
        Value::String(s) => {
            let text = secret::redact_text(s);
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

    /// What once reached `audit.jsonl` verbatim, as the hook summarises tool arguments.
    #[test]
    fn the_audit_summary_keeps_no_secret() {
        let mut cases = vec![
            json!({"pw": "hunter2"}),
            json!({"command": "mysql -phunter2"}),
            json!({"command": "curl -u admin:hunter2 https://web01/api"}),
            json!({"command": "sshpass -p hunter2 ssh web01 uptime"}),
            json!({"script": "X=1\nDB_PASSWORD=hunter2"}),
            json!({"command": "deploy --password\thunter2"}),
            json!({"url": "https://admin:hunter2@web01.example/"}),
            json!({"args": ["--token", "hunter2"]}),
            json!({"env": {"MYSQL_PWD": "hunter2"}}),
            json!({"options": [{"name": "x", "credentials": {"user": "a", "hunter2": 1}}]}),
        ];
        for key in [
            "pw",
            "pwd",
            "passwd",
            "pass",
            "secret",
            "token",
            "apikey",
            "api_key",
            "auth",
            "credential",
            "credentials",
            "private_key",
        ] {
            for value in [
                json!("hunter2"),
                json!(8_675_309),
                json!(["hunter2"]),
                json!({"v": "hunter2"}),
            ] {
                cases.push(json!({ key: value }));
            }
        }
        for args in cases {
            let summary = summarise(&args).to_string();
            assert!(
                !summary.contains("hunter2") && !summary.contains("8675309"),
                "{args} -> {summary}"
            );
        }
        let ordinary =
            json!({"host": "passage01", "command": "ssh -p 2222 passage01 'cat /etc/passwd'"});
        assert_eq!(summarise(&ordinary), ordinary);
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
