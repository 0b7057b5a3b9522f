//! `rewind doctor`: each piece the hook depends on, one pass or fail line each.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use serde_json::Value;

use super::{clean, say};
use crate::catalog::Catalog;
use crate::cli::{DoctorArgs, Scope};
use crate::commands::install::{self, is_rewind_handler};
use crate::config::Config;
use crate::deadline::Deadline;
use crate::zvm::Client;

/// Time allowed for the ZVM checks.
const ZVM_BUDGET: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Checks {
    passed: usize,
    warned: usize,
    failed: usize,
}

impl Checks {
    fn pass(&mut self, what: &str, detail: impl AsRef<str>) {
        self.passed += 1;
        say(format!("ok    {what}: {}", detail.as_ref()));
    }

    fn warn(&mut self, what: &str, detail: impl AsRef<str>) {
        self.warned += 1;
        say(format!("warn  {what}: {}", detail.as_ref()));
    }

    fn fail(&mut self, what: &str, detail: impl AsRef<str>) {
        self.failed += 1;
        say(format!("FAIL  {what}: {}", detail.as_ref()));
    }
}

/// Runs every check; fails when any check failed.
pub fn doctor(config_path: Option<&Path>, args: &DoctorArgs) -> anyhow::Result<()> {
    let mut checks = Checks::default();
    let config = match Config::discover(config_path) {
        Ok(config) => {
            let origin = config.origin.as_ref().map_or_else(
                || String::from("no file found, defaults apply"),
                |p| p.display().to_string(),
            );
            checks.pass("config", origin);
            for warning in &config.warnings {
                checks.warn("config", warning);
            }
            config
        }
        Err(e) => {
            checks.fail("config", format!("{e:#}"));
            bail!("{} check(s) failed", checks.failed);
        }
    };

    match Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs) {
        Ok(catalog) => {
            checks.pass(
                "catalogs",
                format!(
                    "{} entries ({} user file(s))",
                    catalog.entries().len(),
                    config.hook.catalogs.len()
                ),
            );
            for (pass, what, detail) in super::catalog::doctor_findings(&catalog) {
                if pass {
                    checks.pass(&what, detail);
                } else {
                    checks.warn(&what, detail);
                }
            }
        }
        Err(e) => checks.fail("catalogs", format!("{e:#}")),
    }

    zvm_checks(&config, &mut checks);
    hook_checks(&config, args.settings.as_deref(), &mut checks);

    say(format!(
        "{} passed, {} warnings, {} failed",
        checks.passed, checks.warned, checks.failed
    ));
    if checks.failed > 0 {
        bail!("{} check(s) failed", checks.failed);
    }
    Ok(())
}

fn zvm_checks(config: &Config, checks: &mut Checks) {
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(e) => return checks.fail("zvm", format!("{e:#}")),
    };
    checks.pass("zvm url", &zvm.url);
    match (&zvm.ca_cert, zvm.insecure_tls) {
        (_, true) => checks.warn("tls", "verification is OFF (insecure_tls = true)"),
        (Some(ca), false) => checks.pass("tls", format!("verified against {}", ca.display())),
        (None, false) => checks.pass("tls", "verified against the public web roots"),
    }
    let client = match Client::new(zvm, &crate::config::cache_dir()) {
        Ok(client) => client,
        Err(e) => return checks.fail("zvm client", e.to_string()),
    };
    let deadline = Deadline::after(ZVM_BUDGET);
    if let Err(e) = client.authenticate(&deadline) {
        return checks.fail("authentication", e.to_string());
    }
    checks.pass("authentication", format!("logged in as {:?}", zvm.username));
    match client.vms(None, &deadline) {
        Ok(rows) => checks.pass("zvm reachable", format!("{} protected VM rows", rows.len())),
        Err(e) => return checks.fail("zvm reachable", e.to_string()),
    }
    match client.vpgs(&deadline) {
        Ok(vpgs) => {
            for vpg in vpgs {
                let status = vpg.status_description.clone().unwrap_or_else(|| {
                    vpg.status
                        .map_or_else(|| String::from("unknown"), |s| format!("status {s}"))
                });
                let healthy =
                    matches!(vpg.status, Some(1)) || status.eq_ignore_ascii_case("MeetingSLA");
                let what = format!("vpg {}", clean(&vpg.vpg_name));
                if healthy {
                    checks.pass(&what, status);
                } else {
                    checks.warn(&what, format!("{status}: checkpoints may fail or lag"));
                }
            }
        }
        Err(e) => checks.fail("vpgs", e.to_string()),
    }
}

fn hook_checks(config: &Config, explicit: Option<&Path>, checks: &mut Checks) {
    let candidates: Vec<PathBuf> = match explicit {
        Some(path) => vec![path.to_path_buf()],
        None => [Scope::User, Scope::Project]
            .into_iter()
            .filter_map(|s| install::settings_path(s).ok())
            .collect(),
    };
    let budget = config.hook.budget.as_secs_f64();
    let mut found = false;
    for path in candidates {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let settings: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                checks.fail("hook", format!("{} is not valid JSON: {e}", path.display()));
                continue;
            }
        };
        let rewind_handlers = |event: &str| -> Vec<Value> {
            settings
                .pointer(&format!("/hooks/{event}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                .flatten()
                .filter(|h| is_rewind_handler(h))
                .cloned()
                .collect()
        };
        let pre = rewind_handlers("PreToolUse");
        if !pre.is_empty() && rewind_handlers("PostToolUse").is_empty() {
            checks.warn(
                &format!("hook in {}", path.display()),
                "no PostToolUse entry: the audit trail will not show which calls ran; run `rewind install`",
            );
        }
        for handler in &pre {
            found = true;
            let what = format!("hook in {}", path.display());
            let timeout = handler
                .get("timeout")
                .and_then(Value::as_f64)
                .unwrap_or(600.0);
            let blocks = handler.get("onFailure").and_then(Value::as_str) == Some("block");
            let exec = handler.get("args").is_some();
            let binary = handler
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if timeout <= budget {
                checks.fail(&what, format!("timeout {timeout} s is not above the budget {budget} s: the host would cancel the hook and run the call unguarded"));
            } else if !blocks {
                checks.fail(
                    &what,
                    "onFailure is not \"block\": a crash or timeout would let the call through",
                );
            } else if !exec {
                checks.warn(&what, "shell form: a profile script printing to stdout would corrupt decisions; reinstall with `rewind install`");
            } else if !Path::new(binary).is_file() {
                checks.fail(&what, format!("{binary} does not exist"));
            } else {
                checks.pass(
                    &what,
                    format!("timeout {timeout} s > budget {budget} s, onFailure block"),
                );
            }
        }
    }
    if !found {
        checks.fail("hook", "no rewind hook installed; run `rewind install`");
    }
}
