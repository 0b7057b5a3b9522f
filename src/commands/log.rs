//! `rewind log`: the audit trail, filtered.

use std::path::Path;

use anyhow::Context as _;

use super::say;
use crate::audit::{self, Filter};
use crate::cli::LogArgs;
use crate::config::Config;

/// Prints the decisions that pass the filters, oldest first.
pub fn log(config_path: Option<&Path>, args: &LogArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    if let (Some(number), Some(input)) = (args.prove, &args.input) {
        return prove(&config, number, input);
    }
    list(&config, args)
}

/// The records that pass `args`' filters, or `--verify`'s check of the chain.
fn list(config: &Config, args: &LogArgs) -> anyhow::Result<()> {
    let since = args.since.as_deref().map(since).transpose()?;
    let filter = Filter {
        vm: args.vm.as_deref(),
        change: args.change.as_deref(),
        decision: args.decision,
        session: args.session.as_deref(),
        since,
    };
    // Each record, with the broker's line as written (who asked) when it came from one.
    let (records, path): (Vec<(audit::Record, Option<serde_json::Value>)>, _) =
        if config.broker.socket.is_some() {
            let (records, trail) = through_broker(config, args.verify)?;
            let records = records
                .into_iter()
                .filter(|(r, _)| filter.keeps(r))
                .map(|(r, line)| (r, Some(line)))
                .collect();
            (records, trail)
        } else {
            let path = config.hook.audit_path()?;
            if args.verify {
                return verify(path);
            }
            let records = audit::read(path, &filter)?
                .into_iter()
                .map(|r| (r, None))
                .collect();
            (records, path.to_path_buf())
        };
    let path = path.as_path();
    // Columns as wide as their longest value (at least the usual width, at most 48), so a
    // long tool name or VM list moves the columns after it for every row, not for one.
    let widest = |cell: &dyn Fn(&audit::Record) -> usize, least: usize| {
        records
            .iter()
            .map(|(r, _)| cell(r))
            .max()
            .unwrap_or(0)
            .clamp(least, 48)
    };
    let tool_width = widest(&|r| r.tool.chars().count(), 24);
    let vms_width = widest(&|r| r.vms.join(",").chars().count(), 12);
    let change_width = widest(
        &|r| r.change.as_deref().map_or(1, |c| c.chars().count()),
        16,
    );
    for (r, line) in &records {
        if args.json {
            let text = match line {
                Some(line) => serde_json::to_string(line)?,
                None => serde_json::to_string(r)?,
            };
            crate::console::write_json(&text)?;
            continue;
        }
        let who = line
            .as_ref()
            .filter(|l| l["peer"].is_object())
            .map(|l| {
                format!(
                    "[{} uid {} pid {}] ",
                    l["user"].as_str().unwrap_or("?"),
                    l["peer"]["uid"],
                    l["peer"]["pid"]
                )
            })
            .unwrap_or_default();
        let detail = if r.checkpoints.is_empty() {
            r.reason
                .as_deref()
                .map(|t| t.chars().take(100).collect::<String>())
                .unwrap_or_default()
        } else {
            r.checkpoints
                .iter()
                .map(|c| format!("{}:{}", c.vpg, c.id))
                .collect::<Vec<_>>()
                .join(" ")
        };
        say(format!(
            "{}  {:<14} {:<tool_width$} {:<vms_width$} {:<change_width$} {who}{}",
            r.time,
            // As a string, so that the width pads it (the longest word is recover-failed).
            r.decision.to_string(),
            fit(&r.tool, tool_width),
            fit(
                &if r.vms.is_empty() {
                    String::from("-")
                } else {
                    r.vms.join(",")
                },
                vms_width
            ),
            fit(r.change.as_deref().unwrap_or("-"), change_width),
            &detail
        ));
    }
    if records.is_empty() && !args.json {
        say(format!("no matching decisions in {}", path.display()));
    }
    Ok(())
}

/// `text` cut to `width` characters, its last one `…` when cut (`--json` has it whole).
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The broker's trail (operators only: the broker refuses anyone else), and where it is; with
/// `verify`, its chain is reported instead and no records are returned.
fn through_broker(
    config: &Config,
    verify: bool,
) -> anyhow::Result<(Vec<(audit::Record, serde_json::Value)>, std::path::PathBuf)> {
    let answer = crate::broker::client::call(
        &config.broker,
        crate::broker::protocol::Op::Log,
        &crate::deadline::Deadline::after(std::time::Duration::from_secs(60)),
        &mut |_| {},
    )?;
    let trail = std::path::PathBuf::from(answer["trail"].as_str().unwrap_or("the broker's trail"));
    if verify {
        let chain = &answer["chain"];
        if chain["whole"] == true {
            say(format!(
                "{} (the broker's): the hash chain holds over {} lines{}",
                trail.display(),
                chain["lines"],
                if chain["anchored"] == true {
                    ", and the trail ends where its head says"
                } else {
                    ""
                }
            ));
            return Ok((Vec::new(), trail));
        }
        anyhow::bail!(
            "{} (the broker's) line {}: the hash chain breaks: {}",
            trail.display(),
            chain["line"],
            chain["why"].as_str().unwrap_or_default()
        );
    }
    let lines: Vec<serde_json::Value> = serde_json::from_value(answer["records"].clone())
        .context("the broker's records are not a list")?;
    let records = lines
        .into_iter()
        .map(|line| {
            serde_json::from_value::<audit::Record>(line.clone())
                .map(|record| (record, line))
                .context("the broker sent a line that is not an audit record")
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((records, trail))
}

/// `--verify`: the chain whole (how many lines), or the first line where it breaks.
fn verify(path: &Path) -> anyhow::Result<()> {
    match audit::verify(path)? {
        audit::Chain::Whole {
            lines,
            legacy,
            anchored,
        } => {
            say(format!(
                "{}: the hash chain holds over {lines} line{}",
                path.display(),
                if lines == 1 { "" } else { "s" }
            ));
            if legacy > 0 {
                say(format!(
                    "note: the first {legacy} line{} predate the chain and cannot be checked",
                    if legacy == 1 { "" } else { "s" }
                ));
            }
            if anchored {
                say(format!(
                    "the trail ends where its head {} says: no line was cut from the end",
                    audit::head_path(path).display()
                ));
            } else {
                say(String::from(
                    "note: the trail has no head, so the chain cannot show lines cut from the end; the copy sent by [audit] syslog can",
                ));
            }
            Ok(())
        }
        audit::Chain::Broken { line, why } => {
            anyhow::bail!(
                "{} line {line}: the hash chain breaks: {why}",
                path.display()
            )
        }
    }
}

/// The fingerprints an input file may stand for: its JSON as it is, and the input of the
/// call it holds when it is a hook's stdin.
fn fingerprints(input: &Path) -> anyhow::Result<Vec<String>> {
    let bytes = std::fs::read(input).with_context(|| format!("cannot read {}", input.display()))?;
    let json: serde_json::Value = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not JSON (a tool's input, or a hook's stdin)",
            input.display()
        )
    })?;
    let mut found = vec![audit::input_fingerprint(&json)];
    if let Ok(call) = crate::host::read(None, &bytes) {
        found.push(audit::input_fingerprint(&call.input));
    }
    Ok(found)
}

/// `--prove N --input FILE`: whether record `number` keeps the digest of the input in FILE,
/// checked here, or by the broker, which holds its trail's key.
fn prove(config: &Config, number: u64, input: &Path) -> anyhow::Result<()> {
    let fingerprints = fingerprints(input)?;
    let (proof, trail) = if config.broker.socket.is_some() {
        let answer = crate::broker::client::call(
            &config.broker,
            crate::broker::protocol::Op::Prove {
                record: number,
                fingerprints,
            },
            &crate::deadline::Deadline::after(std::time::Duration::from_secs(60)),
            &mut |_| {},
        )?;
        let proof = match answer["proof"].as_str() {
            Some("Matches") => audit::Proof::Matches,
            Some("Differs") => audit::Proof::Differs,
            _ => audit::Proof::NoDigest,
        };
        let trail = answer["trail"]
            .as_str()
            .unwrap_or("the broker's trail")
            .to_owned();
        (proof, format!("{trail} (the broker's)"))
    } else {
        let path = config.hook.audit_path()?;
        (
            audit::prove(path, number, &fingerprints)?,
            path.display().to_string(),
        )
    };
    match proof {
        audit::Proof::Matches => {
            say(format!(
                "{trail} record {number} was written for this input: its keyed digest matches"
            ));
            Ok(())
        }
        audit::Proof::Differs => anyhow::bail!(
            "{trail} record {number} was not written for this input: it keeps the digest of another"
        ),
        audit::Proof::NoDigest => anyhow::bail!(
            "{trail} record {number} keeps no digest of an input (a record of rewind's own, or one written before inputs were digested), so nothing can be proved"
        ),
    }
}

/// `--since`: an ISO-8601 UTC time, or a duration ago (`2h`, `30m`, `1d`).
fn since(text: &str) -> anyhow::Result<std::time::SystemTime> {
    crate::time::parse_utc_or_ago(text, std::time::SystemTime::now()).context("--since")
}
