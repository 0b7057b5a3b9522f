//! `rewind install`: merges the hook into Claude Code's settings without disturbing anything
//! else. Idempotent (our entry is found and updated, never duplicated), a backup of the
//! previous file is kept, and the entry is in exec form with `onFailure: "block"` and a
//! timeout above the hook's budget.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};

use super::say;
use crate::cli::{InstallArgs, Scope};
use crate::config::{self, Config};
use crate::lockfile;

/// Seconds the host waits beyond the hook's budget before it gives up on the hook.
pub const HOST_TIMEOUT_MARGIN_SECS: u64 = 30;
/// Tools whose calls reach the hook: the shell tools (their commands are parsed for remote
/// programs) and every MCP tool.
pub const MATCHER: &str = "Bash|PowerShell|mcp__.*";
/// The matcher earlier versions wrote; an install over it widens it to [`MATCHER`].
const OLD_MATCHER: &str = "mcp__.*";

/// `rewind install --host claude-code --scope user|project`.
pub fn install(config_path: Option<&Path>, args: &InstallArgs) -> anyhow::Result<()> {
    if args.host != crate::host::Host::ClaudeCode {
        anyhow::bail!(
            "rewind cannot install into {} yet: this build speaks only Claude Code's hook protocol",
            args.host.name()
        );
    }
    let config = Config::discover(config_path)?;
    let settings = settings_path(args.scope)?;
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot tell where the rewind binary is")?;
    // Pin the config found now by its absolute path: the hook then reads exactly this file,
    // whatever directory the agent works in.
    let config_arg = config_path
        .or(config.origin.as_deref())
        .map(std::fs::canonicalize)
        .transpose()
        .context("cannot resolve the config file's path")?;
    let entry = hook_entry(&binary, config_arg.as_deref(), &config);
    let after = after_entry(&binary, config_arg.as_deref());
    let changed = merge_into_file(
        &settings,
        &[("PreToolUse", &entry), ("PostToolUse", &after)],
    )?;
    if changed {
        say(format!(
            "installed the rewind hook in {}",
            settings.display()
        ));
    } else {
        say(format!(
            "the rewind hook in {} is already up to date",
            settings.display()
        ));
    }
    Ok(())
}

/// The settings file of a scope.
pub fn settings_path(scope: Scope) -> anyhow::Result<PathBuf> {
    Ok(match scope {
        Scope::User => config::home_dir()
            .context("$HOME is not set")?
            .join(".claude/settings.json"),
        Scope::Project => std::env::current_dir()?.join(".claude/settings.json"),
    })
}

/// The hook handler `rewind install` writes.
pub fn hook_entry(binary: &Path, config: Option<&Path>, settings: &Config) -> Value {
    let args = hook_args(config);
    let budget = settings.hook.budget.as_secs_f64().ceil();
    // Budgets are at most an hour (checked when the config loads), so this cannot truncate.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "bounded above"
    )]
    let timeout = budget as u64 + HOST_TIMEOUT_MARGIN_SECS;
    json!({
        "type": "command",
        "command": binary.display().to_string(),
        "args": args,
        "timeout": timeout,
        "onFailure": "block",
        "statusMessage": "rewind: Zerto checkpoint before a VM change",
    })
}

/// `[--config <file>] hook`: the arguments both entries run the binary with.
fn hook_args(config: Option<&Path>) -> Vec<Value> {
    let mut args = Vec::new();
    if let Some(config) = config {
        args.push(Value::from("--config"));
        args.push(Value::from(config.display().to_string()));
    }
    args.push(Value::from("hook"));
    args
}

/// The PostToolUse handler: records in the audit trail that a call ran. It decides nothing,
/// so a failure of it blocks nothing.
pub fn after_entry(binary: &Path, config: Option<&Path>) -> Value {
    json!({
        "type": "command",
        "command": binary.display().to_string(),
        "args": hook_args(config),
        "timeout": 10,
    })
}

/// Merges handlers (event, entry) into the settings file; returns whether anything changed.
/// The previous file is kept as `<name>.rewind-backup`.
pub fn merge_into_file(path: &Path, entries: &[(&str, &Value)]) -> anyhow::Result<bool> {
    let (mut settings, original) = match std::fs::read_to_string(path) {
        Ok(text) => {
            let value: Value = serde_json::from_str(&text).with_context(|| {
                format!("{} is not valid JSON; not touching it", path.display())
            })?;
            if !value.is_object() {
                bail!("{} is not a JSON object; not touching it", path.display());
            }
            (value, Some(text))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (json!({}), None),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    for (event, entry) in entries {
        merge(&mut settings, event, entry)?;
    }
    let text = serde_json::to_string_pretty(&settings)? + "\n";
    if original.as_deref() == Some(text.as_str()) {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if let Some(original) = &original {
        let backup = backup_path(path);
        std::fs::write(&backup, original)
            .with_context(|| format!("cannot write the backup {}", backup.display()))?;
    }
    lockfile::write_private_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

/// `settings.json` → `settings.json.rewind-backup`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".rewind-backup");
    path.with_file_name(name)
}

/// Puts our handler into `hooks.<event>`: replaces an existing rewind handler in place, or
/// adds a matcher group for MCP tools. Nothing else is touched.
pub fn merge(settings: &mut Value, event: &str, entry: &Value) -> anyhow::Result<()> {
    let root = settings
        .as_object_mut()
        .context("settings are not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .context("\"hooks\" in the settings is not an object")?;
    let groups = hooks
        .entry(event)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .with_context(|| format!("\"hooks.{event}\" in the settings is not an array"))?;
    // Replace the first rewind handler in place (keeping the user's matcher), drop repeats.
    let mut placed = false;
    for group in groups.iter_mut() {
        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            continue;
        };
        let mut ours = false;
        for handler in handlers.iter_mut() {
            if is_rewind_handler(handler) {
                *handler = if placed { Value::Null } else { entry.clone() };
                ours = !placed;
                placed = true;
            }
        }
        handlers.retain(|h| !h.is_null());
        if ours && group.get("matcher").and_then(Value::as_str) == Some(OLD_MATCHER) {
            group["matcher"] = json!(MATCHER);
        }
    }
    groups.retain(|g| {
        g.get("hooks")
            .and_then(Value::as_array)
            .is_none_or(|h| !h.is_empty())
    });
    if !placed {
        groups.push(json!({ "matcher": MATCHER, "hooks": [entry] }));
    }
    Ok(())
}

/// A handler that runs `rewind ... hook`.
pub fn is_rewind_handler(handler: &Value) -> bool {
    let command = handler
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let program = command.split_whitespace().next().unwrap_or_default();
    let runs_rewind = Path::new(program)
        .file_name()
        .is_some_and(|n| n == "rewind" || n == "rewind.exe");
    let args_hook = handler
        .get("args")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v == "hook"));
    runs_rewind && (args_hook || command.ends_with(" hook"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str) -> Value {
        json!({"type": "command", "command": path, "args": ["hook"], "timeout": 180, "onFailure": "block"})
    }

    #[test]
    fn merging_twice_keeps_one_entry_and_everything_else() {
        let mut settings = json!({
            "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/lint-bash"}]}],
                "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "log"}]}]
            },
            "model": "opus"
        });
        let before = settings.clone();
        merge(
            &mut settings,
            "PreToolUse",
            &entry("/opt/rewind/bin/rewind"),
        )
        .expect("merge");
        let once = settings.clone();
        merge(
            &mut settings,
            "PreToolUse",
            &entry("/opt/rewind/bin/rewind"),
        )
        .expect("merge again");
        assert_eq!(settings, once, "second install changes nothing");
        let groups = settings["hooks"]["PreToolUse"].as_array().expect("array");
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0], before["hooks"]["PreToolUse"][0]);
        assert_eq!(groups[1]["matcher"], MATCHER);
        assert_eq!(groups[1]["hooks"].as_array().map(Vec::len), Some(1));
        for key in ["permissions", "model"] {
            assert_eq!(settings[key], before[key]);
        }
        assert_eq!(
            settings["hooks"]["PostToolUse"],
            before["hooks"]["PostToolUse"]
        );
    }

    #[test]
    fn an_existing_rewind_handler_is_updated_in_place_under_the_users_matcher() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "mcp__ssh__.*", "hooks": [{"type": "command", "command": "/old/rewind", "args": ["hook"], "timeout": 60}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/older/rewind hook"}]}
        ]}});
        merge(&mut settings, "PreToolUse", &entry("/new/rewind")).expect("merge");
        let groups = settings["hooks"]["PreToolUse"].as_array().expect("array");
        assert_eq!(groups.len(), 1, "{settings:#}");
        assert_eq!(groups[0]["matcher"], "mcp__ssh__.*");
        assert_eq!(groups[0]["hooks"][0]["command"], "/new/rewind");
        assert_eq!(groups[0]["hooks"][0]["onFailure"], "block");
    }

    #[test]
    fn an_install_over_the_old_mcp_only_matcher_routes_the_shell_tools_too() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/old/rewind", "args": ["hook"]}]}
        ]}});
        merge(&mut settings, "PreToolUse", &entry("/new/rewind")).expect("merge");
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["matcher"],
            "Bash|PowerShell|mcp__.*"
        );
    }

    #[test]
    fn the_file_is_backed_up_and_garbage_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".claude/settings.json");
        assert!(
            merge_into_file(&path, &[("PreToolUse", &entry("/bin/rewind"))]).expect("new file")
        );
        assert!(
            !backup_path(&path).exists(),
            "nothing to back up for a new file"
        );
        assert!(!merge_into_file(&path, &[("PreToolUse", &entry("/bin/rewind"))]).expect("same"));
        assert!(
            merge_into_file(&path, &[("PreToolUse", &entry("/usr/bin/rewind"))]).expect("changed")
        );
        let backup = std::fs::read_to_string(backup_path(&path)).expect("backup");
        assert!(backup.contains("/bin/rewind"));
        std::fs::write(&path, "{ not json").expect("write");
        let err = merge_into_file(&path, &[("PreToolUse", &entry("/bin/rewind"))])
            .expect_err("refuses")
            .to_string();
        assert!(err.contains("not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{ not json");
    }

    #[test]
    fn handler_timeout_is_budget_plus_margin_and_blocks_on_failure() {
        let config =
            Config::parse("[hook]\nbudget_secs = 150\n", Path::new("c.toml")).expect("config");
        let handler = hook_entry(Path::new("/bin/rewind"), None, &config);
        assert_eq!(handler["timeout"], 180);
        assert_eq!(handler["onFailure"], "block");
        assert_eq!(handler["args"], json!(["hook"]));
        assert!(is_rewind_handler(&handler));
    }
}
