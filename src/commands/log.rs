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
    let since = args.since.as_deref().map(since).transpose()?;
    let filter = Filter {
        vm: args.vm.as_deref(),
        change: args.change.as_deref(),
        decision: args.decision,
        session: args.session.as_deref(),
        since,
    };
    let path = config.hook.audit_path()?;
    let records = audit::read(path, &filter)?;
    for r in &records {
        if args.json {
            crate::console::write_json(&serde_json::to_string(r)?)?;
            continue;
        }
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
            "{}  {:<14} {:<24} {:<12} {:<16} {}",
            r.time,
            // As a string, so that the width pads it (the longest word is recover-failed).
            r.decision.to_string(),
            r.tool,
            if r.vms.is_empty() {
                String::from("-")
            } else {
                r.vms.join(",")
            },
            r.change.as_deref().unwrap_or("-"),
            &detail
        ));
    }
    if records.is_empty() && !args.json {
        say(format!("no matching decisions in {}", path.display()));
    }
    Ok(())
}

/// `--since`: an ISO-8601 UTC time, or a duration ago (`2h`, `30m`, `1d`).
fn since(text: &str) -> anyhow::Result<std::time::SystemTime> {
    crate::time::parse_utc_or_ago(text, std::time::SystemTime::now()).context("--since")
}
