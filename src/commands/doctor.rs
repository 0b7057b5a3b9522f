//! `rewind doctor`: each piece the hook depends on, one pass or fail line each.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;

use super::say;
use crate::catalog::{Catalog, Class};
use crate::cli::{DoctorArgs, Scope};
use crate::commands::install;
use crate::config::Config;
use crate::deadline::Deadline;
use crate::host::claude_code::settings::{self, Installed, POST_TOOL_USE, PRE_TOOL_USE};
use crate::zvm::Client;
use crate::zvm::tls::{self, ProbeError, Trust};

/// Time allowed for the ZVM checks.
const ZVM_BUDGET: Duration = Duration::from_secs(30);
/// Time allowed to connect and finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Checks {
    passed: usize,
    warned: usize,
    failed: usize,
    /// Collect for one JSON document instead of printing lines.
    json: bool,
    items: Vec<serde_json::Value>,
}

impl Checks {
    fn record(&mut self, status: &str, what: &str, detail: &str) {
        if self.json {
            self.items
                .push(serde_json::json!({"status": status, "check": what, "detail": detail}));
        } else {
            let label = match status {
                "ok" => "ok   ",
                "warn" => "warn ",
                _ => "FAIL ",
            };
            say(format!("{label} {what}: {detail}"));
        }
    }

    fn pass(&mut self, what: &str, detail: impl AsRef<str>) {
        self.passed += 1;
        self.record("ok", what, detail.as_ref());
    }

    fn warn(&mut self, what: &str, detail: impl AsRef<str>) {
        self.warned += 1;
        self.record("warn", what, detail.as_ref());
    }

    fn fail(&mut self, what: &str, detail: impl AsRef<str>) {
        self.failed += 1;
        self.record("fail", what, detail.as_ref());
    }

    /// The summary line, or the whole JSON document.
    fn finish(&self) -> anyhow::Result<()> {
        if self.json {
            super::print_json(&serde_json::json!({
                "checks": self.items,
                "passed": self.passed,
                "warnings": self.warned,
                "failed": self.failed,
            }))?;
        } else {
            say(format!(
                "{} passed, {} warnings, {} failed",
                self.passed, self.warned, self.failed
            ));
        }
        if self.failed > 0 {
            bail!("{} check(s) failed", self.failed);
        }
        Ok(())
    }
}

/// Runs every check; fails when any check failed.
pub fn doctor(config_path: Option<&Path>, args: &DoctorArgs) -> anyhow::Result<()> {
    let mut checks = Checks {
        json: args.json,
        ..Checks::default()
    };
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
            return checks.finish();
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
    hook_checks(args.settings.as_deref(), &mut checks);

    checks.finish()
}

/// The ZVM in order: reachable, TLS, login, API. Each stage is claimed only once it was
/// shown, with a fresh handshake and a fresh login (the token cache is not used), and a
/// failed stage ends the ZVM checks.
fn zvm_checks(config: &Config, checks: &mut Checks) {
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(e) => return checks.fail("zvm", format!("{e:#}")),
    };
    checks.pass("zvm url", &zvm.url);
    let trust = match Trust::from_config(zvm) {
        Ok(trust) => trust,
        Err(e) => return checks.fail("tls", e.to_string()),
    };
    if zvm.url.starts_with("https://") {
        match tls::handshake(&zvm.url, &trust, HANDSHAKE_TIMEOUT) {
            Ok(_) => {
                checks.pass("zvm reachable", "TCP connection made");
                if matches!(trust, Trust::Anything) {
                    checks.warn("tls", trust.describe());
                } else {
                    checks.pass("tls", trust.describe());
                }
            }
            Err(ProbeError::Tls(detail)) => {
                checks.pass("zvm reachable", "TCP connection made");
                return checks.fail(
                    "tls",
                    format!(
                        "{detail}; run `rewind trust {}` to see the certificate and pin it",
                        zvm.url
                    ),
                );
            }
            Err(ProbeError::Unreachable(detail)) => {
                return checks.fail(
                    "zvm reachable",
                    format!("{detail}; check [zvm] url, the port, and that this machine may reach the ZVM"),
                );
            }
            Err(ProbeError::Url(detail)) => return checks.fail("zvm url", detail),
        }
    } else {
        checks.warn("tls", "plain http: nothing is encrypted or verified");
    }
    let cache = match crate::config::cache_dir() {
        Ok(dir) => dir,
        Err(e) => return checks.fail("cache directory", format!("{e:#}")),
    };
    let client = match Client::new(zvm, &cache) {
        Ok(client) => client,
        Err(e) => return checks.fail("zvm client", e.to_string()),
    };
    let deadline = Deadline::after(ZVM_BUDGET);
    if let Err(e) = client.fresh_login(&deadline) {
        return checks.fail("authentication", e.to_string());
    }
    checks.pass(
        "authentication",
        format!("logged in as {:?} (a fresh login)", zvm.username),
    );
    match client.vms(None, &deadline) {
        Ok(rows) => checks.pass("zvm api", format!("{} protected VM rows", rows.len())),
        Err(e) => return checks.fail("zvm api", e.to_string()),
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
                let what = format!("vpg {}", vpg.vpg_name);
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

/// The hook entries really installed: no kill switch, exactly one rewind entry per event
/// across the settings files, a binary that exists, a matcher that covers every catalogued
/// mutating tool, and a timeout above the budget of the config the entry itself reads.
fn hook_checks(explicit: Option<&Path>, checks: &mut Checks) {
    let candidates: Vec<PathBuf> = match explicit {
        Some(path) => vec![path.to_path_buf()],
        None => [Scope::User, Scope::Project, Scope::Local]
            .into_iter()
            .filter_map(|s| settings::path(s).ok())
            .collect(),
    };
    let mut found: Vec<(PathBuf, Installed)> = Vec::new();
    for path in candidates {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let value = match settings::parse(&text, &path) {
            Ok(value) => value,
            Err(e) => {
                checks.fail("hook", format!("{e:#}"));
                continue;
            }
        };
        let inspection = settings::inspect(&value);
        if inspection.all_hooks_disabled {
            checks.fail(
                &format!("hook in {}", path.display()),
                "\"disableAllHooks\": true: the host runs no hook at all, so nothing is guarded",
            );
        }
        found.extend(inspection.handlers.into_iter().map(|h| (path.clone(), h)));
    }
    let pre: Vec<&(PathBuf, Installed)> = found
        .iter()
        .filter(|(_, h)| h.event == PRE_TOOL_USE)
        .collect();
    if pre.is_empty() {
        return checks.fail("hook", "no rewind hook installed; run `rewind install`");
    }
    for event in [PRE_TOOL_USE, POST_TOOL_USE] {
        let places: Vec<String> = found
            .iter()
            .filter(|(_, h)| h.event == event)
            .map(|(path, h)| format!("{} ({})", path.display(), h.command))
            .collect();
        if places.len() > 1 {
            checks.fail(
                &format!("hook {event}"),
                format!(
                    "{} rewind entries run for each call: {}; keep one (`rewind uninstall --scope …` removes a scope's)",
                    places.len(),
                    places.join(", ")
                ),
            );
        }
    }
    if !found.iter().any(|(_, h)| h.event == POST_TOOL_USE) {
        checks.warn(
            "hook",
            "no PostToolUse entry: the audit trail will not show which calls ran; run `rewind install`",
        );
    }
    for (path, handler) in pre {
        check_handler(path, handler, checks);
    }
}

/// One PreToolUse entry, judged with the config it pins (or the one the hook would find).
fn check_handler(path: &Path, handler: &Installed, checks: &mut Checks) {
    let what = format!("hook in {}", path.display());
    let program = if handler.args.is_some() {
        handler.command.clone()
    } else {
        handler
            .command
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let exists = if program.contains(std::path::MAIN_SEPARATOR) || program.contains('/') {
        Path::new(&program).is_file()
    } else {
        install::find_on_path(&program).is_some()
    };
    if !exists {
        return checks.fail(
            &what,
            format!("{program} does not exist: with onFailure block every matched call is blocked; run `rewind install` again"),
        );
    }
    let config = match handler.pinned_config() {
        Some(pinned) => Config::load(&pinned),
        None => Config::discover_for_hook(None),
    };
    let config = match config {
        Ok(config) => config,
        Err(e) => {
            return checks.fail(
                &what,
                format!("the config this entry reads does not load: {e:#}"),
            );
        }
    };
    let origin = config.origin.as_ref().map_or_else(
        || String::from("no config file (defaults)"),
        |p| p.display().to_string(),
    );
    let budget = config.hook.budget.as_secs_f64();
    let timeout = handler.timeout.unwrap_or(settings::DEFAULT_TIMEOUT_SECS);
    let mut problems = Vec::new();
    if timeout <= budget {
        problems.push(format!("timeout {timeout} s is not above the budget {budget} s of {origin}: the host would cancel the hook and run the call unguarded"));
    }
    if !handler.blocks_on_failure {
        problems.push(String::from(
            "onFailure is not \"block\": a crash or timeout would let the call through",
        ));
    }
    match Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs) {
        Ok(catalog) => {
            let missed: Vec<String> = catalog
                .entries()
                .iter()
                .filter(|e| e.class == Class::Mutating)
                .map(|e| settings::mcp_tool_name(&sample(&e.server), &sample(&e.tool)))
                .filter(|tool| !handler.matcher.matches(tool))
                .collect();
            if !missed.is_empty() {
                problems.push(format!(
                    "matcher {:?} does not cover catalogued mutating tools such as {}",
                    handler.matcher_text.as_deref().unwrap_or("*"),
                    missed
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Err(e) => problems.push(format!("the catalogs of {origin} do not load: {e:#}")),
    }
    if !problems.is_empty() {
        return checks.fail(&what, problems.join("; "));
    }
    if handler.args.is_none() {
        checks.warn(&what, "shell form: a profile script printing to stdout would corrupt decisions; reinstall with `rewind install`");
    } else {
        checks.pass(
            &what,
            format!(
                "{program}, config {origin}: timeout {timeout} s > budget {budget} s, onFailure block, matcher covers the catalogued tools"
            ),
        );
    }
}

/// A concrete name a catalog glob matches (`write_*` → `write_x`, `*` → `x`).
fn sample(glob: &str) -> String {
    glob.replace(['*', '?'], "x")
}
