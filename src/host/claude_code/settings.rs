//! Claude Code's `settings.json`: where each scope's file is, the entries `rewind install`
//! writes, merging them in and taking them out without touching anything else, and reading
//! back what is really installed (for `doctor`).
//!
//! Shape: `hooks.<Event>` is a list of matcher groups `{matcher, hooks: [handler…]}`. A
//! matcher is `*`, empty or absent (every tool), a list of exact names split on `|` or `,`
//! when it holds only letters, digits, `_`, `-`, spaces, `,` and `|`, and otherwise an
//! unanchored regular expression.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};

use crate::cli::Scope;

/// Tools whose calls reach the hook: the shell tools (their commands are parsed for remote
/// programs) and every MCP tool.
pub const MATCHER: &str = "Bash|PowerShell|mcp__.*";
/// The matcher earlier versions wrote; an install over it widens it to [`MATCHER`].
const OLD_MATCHER: &str = "mcp__.*";
/// The PreToolUse event, where the hook decides.
pub const PRE_TOOL_USE: &str = "PreToolUse";
/// The PostToolUse event, where the hook records that a call ran.
pub const POST_TOOL_USE: &str = "PostToolUse";

/// The settings file of a scope: `~/.claude/settings.json`, `./.claude/settings.json` (shared
/// with the project) or `./.claude/settings.local.json` (this machine only).
pub fn path(scope: Scope) -> anyhow::Result<PathBuf> {
    Ok(match scope {
        Scope::User => crate::config::home_dir()
            .context("$HOME is not set")?
            .join(".claude/settings.json"),
        Scope::Project => std::env::current_dir()?.join(".claude/settings.json"),
        Scope::Local => std::env::current_dir()?.join(".claude/settings.local.json"),
    })
}

/// The PreToolUse handler: exec form, blocking when it cannot answer, `timeout` in seconds.
pub fn pre_tool_use_handler(command: &str, args: &[String], timeout: u64) -> Value {
    json!({
        "type": "command",
        "command": command,
        "args": args,
        "timeout": timeout,
        "onFailure": "block",
        "statusMessage": "rewind: Zerto checkpoint before a VM change",
    })
}

/// The PostToolUse handler: records in the audit trail that a call ran. It decides nothing,
/// so a failure of it blocks nothing.
pub fn post_tool_use_handler(command: &str, args: &[String]) -> Value {
    json!({
        "type": "command",
        "command": command,
        "args": args,
        "timeout": 10,
    })
}

/// Parses a settings file's text; anything but a JSON object is refused, naming the file.
pub fn parse(text: &str, path: &Path) -> anyhow::Result<Value> {
    let value: Value = serde_json::from_str(text)
        .with_context(|| format!("{} is not valid JSON; not touching it", path.display()))?;
    if !value.is_object() {
        bail!("{} is not a JSON object; not touching it", path.display());
    }
    Ok(value)
}

/// The text written for settings.
pub fn render(settings: &Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(settings)? + "\n")
}

/// Puts our handler into `hooks.<event>`: replaces an existing rewind handler in place (keeping
/// the user's matcher), drops repeats, or adds a matcher group for MCP tools. Nothing else is
/// touched.
pub fn merge(settings: &mut Value, event: &str, handler: &Value) -> anyhow::Result<()> {
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
    let mut placed = false;
    for group in groups.iter_mut() {
        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            continue;
        };
        let before = handlers.len();
        let mut ours = false;
        for h in handlers.iter_mut() {
            if is_rewind_handler(h) {
                *h = if placed { Value::Null } else { handler.clone() };
                ours = !placed;
                placed = true;
            }
        }
        handlers.retain(|h| !h.is_null());
        if handlers.is_empty() && before > 0 {
            *group = Value::Null;
        } else if ours && group.get("matcher").and_then(Value::as_str) == Some(OLD_MATCHER) {
            group["matcher"] = json!(MATCHER);
        }
    }
    groups.retain(|g| !g.is_null());
    if !placed {
        groups.push(json!({ "matcher": MATCHER, "hooks": [handler] }));
    }
    Ok(())
}

/// Takes every rewind handler out of every event; a group, event list or `hooks` object left
/// empty by that goes too (one that was empty before stays). Returns how many were removed.
pub fn remove(settings: &mut Value) -> usize {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return 0;
    };
    let mut removed = 0;
    let mut emptied_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let had_groups = !groups.is_empty();
        for group in groups.iter_mut() {
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            let before = handlers.len();
            handlers.retain(|h| !is_rewind_handler(h));
            let gone = before - handlers.len();
            removed += gone;
            if gone > 0 && handlers.is_empty() {
                *group = Value::Null;
            }
        }
        groups.retain(|g| !g.is_null());
        if had_groups && groups.is_empty() {
            emptied_events.push(event.clone());
        }
    }
    let had_events = !hooks.is_empty();
    for event in emptied_events {
        hooks.remove(&event);
    }
    if had_events
        && hooks.is_empty()
        && let Some(root) = settings.as_object_mut()
    {
        root.remove("hooks");
    }
    removed
}

/// A handler that runs `rewind … hook`.
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

/// Which tool names a matcher selects, as Claude Code evaluates it.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `*`, empty or absent.
    Everything,
    /// Exact names.
    Names(Vec<String>),
    /// An unanchored regular expression.
    Pattern(regex::Regex),
    /// A pattern that does not compile: it selects nothing.
    Broken(String),
}

impl Matcher {
    /// Reads a group's `matcher` value.
    pub fn new(text: Option<&str>) -> Matcher {
        let text = text.unwrap_or_default().trim();
        if text.is_empty() || text == "*" {
            return Matcher::Everything;
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if plain {
            return Matcher::Names(
                text.split(['|', ','])
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned)
                    .collect(),
            );
        }
        regex::Regex::new(text).map_or_else(|_| Matcher::Broken(text.to_owned()), Matcher::Pattern)
    }

    /// Whether a call to `tool` reaches the group's handlers.
    pub fn matches(&self, tool: &str) -> bool {
        match self {
            Matcher::Everything => true,
            Matcher::Names(names) => names.iter().any(|n| n == tool),
            Matcher::Pattern(re) => re.is_match(tool),
            Matcher::Broken(_) => false,
        }
    }
}

/// One rewind handler found in a settings file.
#[derive(Debug, Clone)]
pub struct Installed {
    pub event: String,
    /// The group's matcher as written (`None`: absent).
    pub matcher_text: Option<String>,
    pub matcher: Matcher,
    /// The program (exec form) or the whole shell string.
    pub command: String,
    /// The arguments in exec form; `None` for shell form.
    pub args: Option<Vec<String>>,
    /// Seconds; `None` means the host's default (600 s for command hooks).
    pub timeout: Option<f64>,
    pub blocks_on_failure: bool,
}

impl Installed {
    /// The file given to `--config`, when the handler pins one.
    pub fn pinned_config(&self) -> Option<PathBuf> {
        let args = self.args.as_ref()?;
        args.iter()
            .position(|a| a == "--config")
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
    }
}

/// What a settings file says about hooks.
#[derive(Debug, Clone, Default)]
pub struct Inspection {
    /// `"disableAllHooks": true`: no hook runs at all.
    pub all_hooks_disabled: bool,
    pub handlers: Vec<Installed>,
}

/// The host's default timeout for a command hook, in seconds.
pub const DEFAULT_TIMEOUT_SECS: f64 = 600.0;

/// Reads every rewind handler and the kill switch from parsed settings.
pub fn inspect(settings: &Value) -> Inspection {
    let mut handlers = Vec::new();
    if let Some(hooks) = settings.get("hooks").and_then(Value::as_object) {
        for (event, groups) in hooks {
            for group in groups.as_array().into_iter().flatten() {
                let matcher_text = group
                    .get("matcher")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let matcher = Matcher::new(matcher_text.as_deref());
                for h in group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|h| is_rewind_handler(h))
                {
                    handlers.push(Installed {
                        event: event.clone(),
                        matcher_text: matcher_text.clone(),
                        matcher: matcher.clone(),
                        command: h
                            .get("command")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        args: h.get("args").and_then(Value::as_array).map(|a| {
                            a.iter()
                                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                                .collect()
                        }),
                        timeout: h.get("timeout").and_then(Value::as_f64),
                        blocks_on_failure: h.get("onFailure").and_then(Value::as_str)
                            == Some("block"),
                    });
                }
            }
        }
    }
    Inspection {
        all_hooks_disabled: settings.get("disableAllHooks") == Some(&Value::Bool(true)),
        handlers,
    }
}

/// The tool name Claude Code gives a tool of an MCP server.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(path: &str) -> Value {
        pre_tool_use_handler(path, &[String::from("hook")], 180)
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
            PRE_TOOL_USE,
            &handler("/opt/rewind/bin/rewind"),
        )
        .expect("merge");
        let once = settings.clone();
        merge(
            &mut settings,
            PRE_TOOL_USE,
            &handler("/opt/rewind/bin/rewind"),
        )
        .expect("again");
        assert_eq!(settings, once, "second install changes nothing");
        let groups = settings["hooks"]["PreToolUse"].as_array().expect("array");
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0], before["hooks"]["PreToolUse"][0]);
        assert_eq!(groups[1]["matcher"], MATCHER);
        for key in ["permissions", "model"] {
            assert_eq!(settings[key], before[key]);
        }
        assert_eq!(remove(&mut settings), 1);
        assert_eq!(settings, before, "uninstall restores the original");
    }

    #[test]
    fn an_existing_rewind_handler_is_updated_in_place_under_the_users_matcher() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "mcp__ssh__.*", "hooks": [{"type": "command", "command": "/old/rewind", "args": ["hook"], "timeout": 60}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/older/rewind hook"}]}
        ]}});
        merge(&mut settings, PRE_TOOL_USE, &handler("/new/rewind")).expect("merge");
        let groups = settings["hooks"]["PreToolUse"].as_array().expect("array");
        assert_eq!(groups.len(), 1, "{settings:#}");
        assert_eq!(groups[0]["matcher"], "mcp__ssh__.*");
        assert_eq!(groups[0]["hooks"][0]["command"], "/new/rewind");
    }

    #[test]
    fn an_install_over_the_old_mcp_only_matcher_routes_the_shell_tools_too() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/old/rewind", "args": ["hook"]}]}
        ]}});
        merge(&mut settings, PRE_TOOL_USE, &handler("/new/rewind")).expect("merge");
        assert_eq!(
            settings["hooks"]["PreToolUse"][0]["matcher"],
            "Bash|PowerShell|mcp__.*"
        );
        assert!(Matcher::new(Some(MATCHER)).matches("Bash"));
        assert!(Matcher::new(Some(MATCHER)).matches("PowerShell"));
        assert!(Matcher::new(Some(MATCHER)).matches("mcp__ssh__exec"));
    }

    #[test]
    fn removing_takes_only_rewinds_handlers() {
        let mut settings = json!({"hooks": {
            "PreToolUse": [
                {"matcher": "mcp__.*", "hooks": [
                    {"type": "command", "command": "/usr/bin/audit-mcp"},
                    {"type": "command", "command": "/bin/rewind", "args": ["hook"]}
                ]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/bin/rewind hook"}]}
            ],
            "Stop": []
        }});
        assert_eq!(remove(&mut settings), 2);
        assert_eq!(
            settings,
            json!({"hooks": {
                "PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/usr/bin/audit-mcp"}]}],
                "Stop": []
            }})
        );
        assert_eq!(remove(&mut settings), 0);
    }

    #[test]
    fn matchers_follow_claude_codes_rules() {
        let cases = [
            (None, "mcp__ssh__exec", true),
            (Some("*"), "Bash", true),
            (Some(""), "Bash", true),
            (Some("Bash"), "Bash", true),
            (Some("Bash"), "BashOutput", false),
            (Some("Bash|PowerShell"), "PowerShell", true),
            (Some("Bash, mcp__ssh__exec"), "mcp__ssh__exec", true),
            (Some("mcp__ssh"), "mcp__ssh__exec", false),
            (Some("mcp__.*"), "mcp__ssh__exec", true),
            (Some("mcp__ssh__.*"), "mcp__winrm__run", false),
            (Some("Edit.*"), "NotebookEdit", true),
            (Some("^Edit$"), "NotebookEdit", false),
            (Some("mcp__(ssh"), "mcp__ssh__exec", false),
        ];
        for (matcher, tool, expected) in cases {
            assert_eq!(
                Matcher::new(matcher).matches(tool),
                expected,
                "{matcher:?} on {tool}"
            );
        }
    }

    #[test]
    fn inspection_reads_the_kill_switch_and_each_handler() {
        let settings = json!({
            "disableAllHooks": true,
            "hooks": {"PreToolUse": [{"matcher": "mcp__ssh__.*", "hooks": [
                {"type": "command", "command": "/bin/rewind", "args": ["--config", "/etc/r.toml", "hook"], "timeout": 90}
            ]}]}
        });
        let found = inspect(&settings);
        assert!(found.all_hooks_disabled);
        assert_eq!(found.handlers.len(), 1);
        let h = &found.handlers[0];
        assert_eq!(h.pinned_config(), Some(PathBuf::from("/etc/r.toml")));
        assert_eq!(h.timeout, Some(90.0));
        assert!(!h.blocks_on_failure);
        assert!(!h.matcher.matches("mcp__winrm__run"));
    }
}
