//! `rewind install` and `rewind uninstall`: put the hook's entries into an agent host's
//! settings, or take exactly them out, without disturbing anything else.
//!
//! Every change keeps the previous file as a timestamped backup that is never overwritten
//! (but a file that did not exist has none, and a file that held only rewind's entries is
//! removed by uninstall),
//! and the settings file keeps its mode. User and local scope pin this binary and the config
//! found now by absolute path; project scope is shared with everyone who clones the project,
//! so it names `rewind` on PATH and pins no config, or is refused with the reason.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use super::say;
use crate::cli::{InstallArgs, Scope};
use crate::config::{Config, SecretSource};
use crate::host::Host;
use crate::host::settings::{AFTER_TIMEOUT_SECS, Layout, OnFailure, hook_binary, parse, render};
pub use crate::host::settings::{HOST_TIMEOUT_MARGIN_SECS, Invocation};

/// The hook's budget in whole seconds (budgets are at most an hour, checked when the config
/// loads).
pub fn budget_secs(config: &Config) -> u64 {
    let budget = config.hook.budget.as_secs_f64().ceil();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "bounded above"
    )]
    let budget = budget as u64;
    budget
}

/// The host's timeout in seconds for a hook with this configuration's budget.
pub fn host_timeout(config: &Config) -> u64 {
    budget_secs(config) + HOST_TIMEOUT_MARGIN_SECS
}

/// `rewind install --host <host> --scope user|project|local|managed`.
pub fn install(config_path: Option<&Path>, args: &InstallArgs) -> anyhow::Result<()> {
    if args.scope == Scope::Managed {
        return super::managed::install(config_path, args);
    }
    refuse_managed_options(args)?;
    let layout = args.host.settings();
    let config = Config::discover(config_path)?;
    let files = layout.files(args.scope)?;
    let path = files.write;
    let mut warnings = Vec::new();
    let run = if args.scope == Scope::Project {
        portable_invocation(&path, args.host)?
    } else {
        let binary = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .context("cannot tell where the rewind binary is")?;
        // Pin the config found now by its absolute path: the hook then reads exactly this
        // file, whatever directory the agent works in.
        let config_arg = config_path
            .or(config.origin.as_deref())
            .map(std::fs::canonicalize)
            .transpose()
            .context("cannot resolve the config file's path")?;
        if built_in_place(&binary) {
            warnings.push(format!(
                "the hook runs {}, a build inside a cargo target directory: `cargo clean` or the next build removes or replaces it, and the hook with it; install a copy (`cargo install --path .`) and run `rewind install` from there",
                binary.display()
            ));
        }
        Invocation::new(&hook_binary(&binary), config_arg.as_deref(), args.host)
    };
    if args.scope == Scope::Project && config.origin.is_some() {
        warnings.push(format!(
            "project scope pins no config: each person's hook reads $REWIND_CONFIG or ~/.config/rewind/config.toml, not {}",
            config.origin.as_deref().unwrap_or(Path::new("")).display()
        ));
    }
    let timeout = layout.before_timeout(budget_secs(&config));

    let (original, mut value) = read_settings(&path)?;
    layout.merge(&mut value, &run, timeout)?;
    let text = render(&value)?;
    if original.as_deref() == Some(text.as_str()) {
        say(format!(
            "the rewind hook in {} is already up to date",
            path.display()
        ));
    } else {
        let backup = write_with_backup(&path, original.as_deref(), &text)?;
        say(format!(
            "installed the rewind hook for {} in {}",
            layout.title,
            path.display()
        ));
        describe_entries(layout, &run, timeout);
        match backup {
            Some(backup) => say(format!(
                "  the previous file is kept as {}",
                backup.display()
            )),
            None => say("  (a new file: nothing to back up)"),
        }
    }
    for other in &files.also {
        let Ok(text) = std::fs::read_to_string(other) else {
            continue;
        };
        let found = parse(&text, other).map_or(0, |v| layout.inspect(other, &v).len());
        if found > 0 {
            warnings.push(format!(
                "{} also holds {found} rewind entr{}: {} would run rewind twice for each call; run `rewind uninstall --host {}` and install again",
                other.display(),
                if found == 1 { "y" } else { "ies" },
                layout.title,
                args.host.name(),
            ));
        }
    }
    if let OnFailure::Open(what) = layout.on_failure {
        warnings.push(String::from(what));
    }
    if let Some(note) = layout.after_install {
        warnings.push(String::from(note));
    }
    warnings.extend(setup_warnings(&config, layout));
    for warning in warnings {
        crate::console::err(format!("warning: {warning}"));
    }
    Ok(())
}

/// One line per entry written: the event, what reaches it, the command, the timeout in the
/// host's unit and what the host does when the hook fails.
pub(super) fn describe_entries(layout: &Layout, run: &Invocation, timeout: u64) {
    let shown = run.line();
    let unit = layout.unit.symbol();
    let failure = match layout.on_failure {
        OnFailure::Blocks { key, value } => format!(", {key} {value}"),
        OnFailure::Open(_) => String::from(", no fail-closed option"),
    };
    for events in layout.events {
        let reach = events
            .matcher
            .map_or_else(|| String::from("every call"), |m| format!("matcher {m:?}"));
        say(format!(
            "  {} ({reach}): {shown} (timeout {timeout} {unit}{failure}): decides before each call",
            events.before
        ));
        if events.files_only {
            continue;
        }
        let reach = events
            .after_matcher
            .or(events.matcher)
            .map_or_else(|| String::from("every call"), |m| format!("matcher {m:?}"));
        say(format!(
            "  {} ({reach}): {shown} (timeout {} {unit}): records in the audit trail that a call ran",
            events.after,
            layout.unit.from_secs(AFTER_TIMEOUT_SECS)
        ));
    }
}

/// `rewind uninstall --host <host> --scope …`: removes every rewind entry from that scope's
/// files, nothing else.
pub fn uninstall(args: &InstallArgs) -> anyhow::Result<()> {
    if args.scope == Scope::Managed {
        return super::managed::uninstall(args);
    }
    refuse_managed_options(args)?;
    let layout = args.host.settings();
    let files = layout.files(args.scope)?;
    let mut total = 0;
    for path in std::iter::once(&files.write).chain(&files.also) {
        let Some(original) = read_existing(path)? else {
            continue;
        };
        // A TOML file (Codex CLI's config.toml) is edited in place, keeping its comments.
        let (text, removed, emptied) = if path.extension().is_some_and(|e| e == "toml") {
            let (text, removed) = layout.remove_toml(&original, path)?;
            let emptied = text.trim().is_empty();
            (text, removed, emptied)
        } else {
            let mut value = parse(&original, path)?;
            let removed = layout.remove(&mut value);
            let emptied = holds_nothing_else(layout, args.host, &value);
            (render(&value)?, removed, emptied)
        };
        if removed == 0 {
            continue;
        }
        if emptied {
            // Only rewind's entries were in it (install made it): nothing to keep.
            std::fs::remove_file(path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            say(format!(
                "removed {} and {}, which held nothing else",
                rewind_entries(removed),
                path.display()
            ));
            total += removed;
            continue;
        }
        let backup = write_with_backup(path, Some(&original), &text)?;
        say(format!(
            "removed {} from {}",
            rewind_entries(removed),
            path.display()
        ));
        say_backup(backup.as_deref());
        total += removed;
    }
    if total == 0 {
        say(format!(
            "no rewind entry in {}: nothing changed",
            files.write.display()
        ));
    }
    Ok(())
}

/// Whether settings rewind's entries were taken out of hold nothing else: `{}`, or what
/// installing into no file and uninstalling again leaves (a host's `"version": 1`).
fn holds_nothing_else(layout: &Layout, host: Host, value: &serde_json::Value) -> bool {
    if value.as_object().is_some_and(serde_json::Map::is_empty) {
        return true;
    }
    let mut skeleton = serde_json::Value::Object(serde_json::Map::new());
    let run = Invocation::new(Path::new("rewind"), None, host);
    if layout.merge(&mut skeleton, &run, 1).is_err() {
        return false;
    }
    layout.remove(&mut skeleton);
    *value == skeleton
}

/// `--lock` and `--root` only mean something for the administrator's file.
fn refuse_managed_options(args: &InstallArgs) -> anyhow::Result<()> {
    if args.lock || args.root.is_some() || args.print_mdm {
        bail!("--lock, --root and --print-mdm go with --scope managed only");
    }
    Ok(())
}

/// Project scope: `rewind` found on PATH, or a refusal that says why and what to do.
fn portable_invocation(path: &Path, host: Host) -> anyhow::Result<Invocation> {
    if find_on_path("rewind").is_none() {
        let instead = if host == Host::ClaudeCode {
            "or use --scope local (.claude/settings.local.json, this machine only)"
        } else {
            "or use --scope user"
        };
        bail!(
            "--scope project writes {}, which is shared with everyone who clones the project, so it cannot name this machine's rewind binary; `rewind` is not on PATH here. Put rewind on PATH (cargo install --path .) and install again, {instead}",
            path.display()
        );
    }
    Ok(Invocation::new(Path::new("rewind"), None, host))
}

/// The file a bare program name runs, searched on PATH.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// What a person must know after installing: no config, no password source.
/// Whether `binary` is a cargo build output (`…/target/debug/rewind`, `…/target/release/…`).
fn built_in_place(binary: &Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = binary.iter().collect();
    parts
        .windows(2)
        .any(|w| w[0] == "target" && (w[1] == "debug" || w[1] == "release"))
}

fn setup_warnings(config: &Config, layout: &Layout) -> Vec<String> {
    let mut warnings = Vec::new();
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(why) => {
            warnings.push(format!(
                "{why}. Until the hook's configuration has a [zvm] section, every mutating call will be denied (see `rewind doctor`)"
            ));
            return warnings;
        }
    };
    if let SecretSource::Env { var, .. } = &zvm.password {
        if std::env::var_os(var).is_none_or(|v| v.is_empty()) {
            warnings.push(format!(
                "${var} is not set here: without it every mutating call will be denied"
            ));
        }
        warnings.push(format!(
            "${var} must be set in the environment {} runs in (the hook inherits it from there, not from this shell)",
            layout.title
        ));
    }
    warnings
}

/// The file's text, or `None` when it does not exist.
pub(super) fn read_existing(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    }
}

/// The file's text (when it exists) and its parsed settings (`{}` when it does not).
pub(super) fn read_settings(path: &Path) -> anyhow::Result<(Option<String>, serde_json::Value)> {
    let text = read_existing(path)?;
    let value = match &text {
        Some(text) => parse(text, path)?,
        None => serde_json::Value::Object(serde_json::Map::new()),
    };
    Ok((text, value))
}

/// `n` rewind entries, in words: "1 rewind entry", "3 rewind entries".
pub(super) fn rewind_entries(n: usize) -> String {
    format!("{n} rewind entr{}", if n == 1 { "y" } else { "ies" })
}

/// Says where the previous file is kept, when there was one.
pub(super) fn say_backup(backup: Option<&Path>) {
    if let Some(backup) = backup {
        say(format!(
            "  the previous file is kept as {}",
            backup.display()
        ));
    }
}

/// Keeps `original` as a new backup (never overwriting one), then replaces the file keeping
/// its mode. Returns the backup's path.
pub(super) fn write_with_backup(
    path: &Path,
    original: Option<&str>,
    text: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let backup = match original {
        Some(original) => Some(super::keep_backup(path, original)?),
        None => None,
    };
    super::replace_keeping_mode(path, text.as_bytes())?;
    Ok(backup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_timeout_is_budget_plus_margin() {
        let config =
            Config::parse("[hook]\nbudget_secs = 150\n", Path::new("c.toml")).expect("config");
        assert_eq!(host_timeout(&config), 180);
        assert_eq!(Host::Gemini.settings().before_timeout(150), 180_000);
        let inv = Invocation::new(
            Path::new("/bin/rewind"),
            Some(Path::new("/etc/r.toml")),
            Host::ClaudeCode,
        );
        assert_eq!(
            inv.args,
            ["--config", "/etc/r.toml", "hook", "--host", "claude-code"]
        );
    }

    #[test]
    fn every_backup_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        let first = super::super::keep_backup(&path, "one").expect("first");
        let second = super::super::keep_backup(&path, "two").expect("second");
        assert_ne!(first, second);
        assert_eq!(std::fs::read_to_string(first).expect("first"), "one");
        assert_eq!(std::fs::read_to_string(second).expect("second"), "two");
    }
}
