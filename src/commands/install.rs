//! `rewind install` and `rewind uninstall`: put the hook's entries into an agent host's
//! settings, or take exactly them out, without disturbing anything else.
//!
//! Every change keeps the previous file as a timestamped backup that is never overwritten,
//! and the settings file keeps its mode. User and local scope pin this binary and the config
//! found now by absolute path; project scope is shared with everyone who clones the project,
//! so it names `rewind` on PATH and pins no config, or is refused with the reason.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context as _, bail};

use super::say;
use crate::cli::{InstallArgs, Scope};
use crate::config::{Config, SecretSource};
use crate::host::claude_code::settings::{self, POST_TOOL_USE, PRE_TOOL_USE};

/// Seconds the host waits beyond the hook's budget before it gives up on the hook.
pub const HOST_TIMEOUT_MARGIN_SECS: u64 = 30;

/// How the host runs the hook: the program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub command: String,
    pub args: Vec<String>,
}

impl Invocation {
    /// `<binary> [--config <file>] hook`.
    pub fn new(binary: &Path, config: Option<&Path>) -> Invocation {
        let mut args = Vec::new();
        if let Some(config) = config {
            args.push(String::from("--config"));
            args.push(config.display().to_string());
        }
        args.push(String::from("hook"));
        Invocation {
            command: binary.display().to_string(),
            args,
        }
    }
}

/// The host's timeout for a hook with this configuration's budget.
pub fn host_timeout(config: &Config) -> u64 {
    let budget = config.hook.budget.as_secs_f64().ceil();
    // Budgets are at most an hour (checked when the config loads), so this cannot truncate.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "bounded above"
    )]
    let budget = budget as u64;
    budget + HOST_TIMEOUT_MARGIN_SECS
}

/// `rewind install --host claude-code --scope user|project|local`.
pub fn install(config_path: Option<&Path>, args: &InstallArgs) -> anyhow::Result<()> {
    only_claude_code(args)?;
    let config = Config::discover(config_path)?;
    let path = settings::path(args.scope)?;
    let mut warnings = Vec::new();
    let invocation = if args.scope == Scope::Project {
        portable_invocation(&path)?
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
        Invocation::new(&binary, config_arg.as_deref())
    };
    if args.scope == Scope::Project && config.origin.is_some() {
        warnings.push(format!(
            "project scope pins no config: each person's hook reads $REWIND_CONFIG or ~/.config/rewind/config.toml, not {}",
            config.origin.as_deref().unwrap_or(Path::new("")).display()
        ));
    }
    let timeout = host_timeout(&config);
    let pre = settings::pre_tool_use_handler(&invocation.command, &invocation.args, timeout);
    let post = settings::post_tool_use_handler(&invocation.command, &invocation.args);

    let (original, mut value) = read_settings(&path)?;
    settings::merge(&mut value, PRE_TOOL_USE, &pre)?;
    settings::merge(&mut value, POST_TOOL_USE, &post)?;
    let text = settings::render(&value)?;
    let shown = format!("{} {}", invocation.command, invocation.args.join(" "));
    if original.as_deref() == Some(text.as_str()) {
        say(format!(
            "the rewind hook in {} is already up to date",
            path.display()
        ));
    } else {
        let backup = write_with_backup(&path, original.as_deref(), &text)?;
        say(format!("installed the rewind hook in {}", path.display()));
        say(format!(
            "  {PRE_TOOL_USE}: {shown} (timeout {timeout} s, onFailure block): decides before each call"
        ));
        say(format!(
            "  {POST_TOOL_USE}: {shown} (timeout 10 s): records in the audit trail that a call ran"
        ));
        match backup {
            Some(backup) => say(format!(
                "  the previous file is kept as {}",
                backup.display()
            )),
            None => say("  (a new file: nothing to back up)"),
        }
    }
    warnings.extend(setup_warnings(&config));
    for warning in warnings {
        crate::console::err(format!("warning: {warning}"));
    }
    Ok(())
}

/// `rewind uninstall --scope …`: removes every rewind entry from that file, nothing else.
pub fn uninstall(args: &InstallArgs) -> anyhow::Result<()> {
    only_claude_code(args)?;
    let path = settings::path(args.scope)?;
    let (original, mut value) = read_settings(&path)?;
    let Some(original) = original else {
        say(format!(
            "{} does not exist: nothing to remove",
            path.display()
        ));
        return Ok(());
    };
    let removed = settings::remove(&mut value);
    if removed == 0 {
        say(format!(
            "no rewind entry in {}: nothing changed",
            path.display()
        ));
        return Ok(());
    }
    let text = settings::render(&value)?;
    let backup = write_with_backup(&path, Some(&original), &text)?;
    say(format!(
        "removed {removed} rewind entr{} from {}",
        if removed == 1 { "y" } else { "ies" },
        path.display()
    ));
    if let Some(backup) = backup {
        say(format!(
            "  the previous file is kept as {}",
            backup.display()
        ));
    }
    Ok(())
}

/// Other hosts' settings are not written by this build.
fn only_claude_code(args: &InstallArgs) -> anyhow::Result<()> {
    if args.host != crate::host::Host::ClaudeCode {
        bail!(
            "rewind cannot install into {} yet: this build speaks only Claude Code's hook protocol",
            args.host.name()
        );
    }
    Ok(())
}

/// Project scope: `rewind` found on PATH, or a refusal that says why and what to do.
fn portable_invocation(path: &Path) -> anyhow::Result<Invocation> {
    if find_on_path("rewind").is_none() {
        bail!(
            "--scope project writes {}, which is shared with everyone who clones the project, so it cannot name this machine's rewind binary; `rewind` is not on PATH here. Put rewind on PATH (cargo install --path .) and install again, or use --scope local (.claude/settings.local.json, this machine only)",
            path.display()
        );
    }
    Ok(Invocation {
        command: String::from("rewind"),
        args: vec![String::from("hook")],
    })
}

/// The file a bare program name runs, searched on PATH.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// What a person must know after installing: no config, no password source.
fn setup_warnings(config: &Config) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(zvm) = &config.zvm else {
        warnings.push(String::from(
            "no configuration with a [zvm] section was found: every mutating call will be denied until one exists (see `rewind doctor`)",
        ));
        return warnings;
    };
    if let SecretSource::Env(var) = &zvm.password {
        if std::env::var_os(var).is_none_or(|v| v.is_empty()) {
            warnings.push(format!(
                "${var} is not set here: without it every mutating call will be denied"
            ));
        }
        warnings.push(format!(
            "${var} must be set in the environment the agent host runs in (the hook inherits it from there, not from this shell)"
        ));
    }
    warnings
}

/// The file's text (when it exists) and its parsed settings (`{}` when it does not).
fn read_settings(path: &Path) -> anyhow::Result<(Option<String>, serde_json::Value)> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let value = settings::parse(&text, path)?;
            Ok((Some(text), value))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((None, serde_json::Value::Object(serde_json::Map::new())))
        }
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    }
}

/// Keeps `original` as a new backup (never overwriting one), then replaces the file keeping
/// its mode. Returns the backup's path.
fn write_with_backup(
    path: &Path,
    original: Option<&str>,
    text: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let backup = match original {
        Some(original) => Some(keep_backup(path, original)?),
        None => None,
    };
    super::replace_keeping_mode(path, text.as_bytes())?;
    Ok(backup)
}

/// Writes `<file>.rewind-backup-<UTC time>` (with `-2`, `-3`… when taken), owner-only.
pub fn keep_backup(path: &Path, contents: &str) -> anyhow::Result<PathBuf> {
    use std::io::Write as _;
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now())
        .to_string()
        .replace([':', '-'], "");
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for n in 1..1000 {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = path.with_file_name(format!("{name}.rewind-backup-{stamp}{suffix}"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o600);
        }
        match options.open(&candidate) {
            Ok(mut file) => {
                file.write_all(contents.as_bytes())
                    .with_context(|| format!("cannot write the backup {}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot write the backup {}", candidate.display()));
            }
        }
    }
    bail!("too many backups of {} this second", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_timeout_is_budget_plus_margin() {
        let config =
            Config::parse("[hook]\nbudget_secs = 150\n", Path::new("c.toml")).expect("config");
        assert_eq!(host_timeout(&config), 180);
        let inv = Invocation::new(Path::new("/bin/rewind"), Some(Path::new("/etc/r.toml")));
        assert_eq!(inv.args, ["--config", "/etc/r.toml", "hook"]);
    }

    #[test]
    fn every_backup_is_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        let first = keep_backup(&path, "one").expect("first");
        let second = keep_backup(&path, "two").expect("second");
        assert_ne!(first, second);
        assert_eq!(std::fs::read_to_string(first).expect("first"), "one");
        assert_eq!(std::fs::read_to_string(second).expect("second"), "two");
    }
}
