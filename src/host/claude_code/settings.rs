//! Claude Code's `settings.json`: `~/.claude/settings.json`, `.claude/settings.json` (shared
//! with the project) and `.claude/settings.local.json` (this machine only).
//!
//! Shape: `hooks.<Event>` is a list of matcher groups `{matcher, hooks: [handler…]}`. A
//! matcher is `*`, empty or absent (every tool), a list of exact names split on `|` or `,`
//! when it holds only letters, digits, `_`, `-`, spaces, `,` and `|`, and otherwise an
//! unanchored regular expression. Handlers run in exec form (`command` + `args`), the
//! timeout is in seconds, and `onFailure: "block"` makes a timeout or crash block the call.
//! `"disableAllHooks": true` runs no hook at all.

use serde_json::Value;

use crate::host::Host;
use crate::host::settings::{
    Events, Layout, Managed, OnFailure, STATUS, Shape, Syntax, home, nothing_else,
};

/// Tools whose calls reach the hook: the shell tools (their commands are parsed for remote
/// programs), the file tools (only a write to rewind's own files or a host's hook settings,
/// or a read of the token cache, is asked about) and every MCP tool.
pub const MATCHER: &str = "Bash|PowerShell|Edit|MultiEdit|Write|NotebookEdit|Read|mcp__.*";
/// The PreToolUse event, where the hook decides.
pub const PRE_TOOL_USE: &str = "PreToolUse";
/// The PostToolUse event, where the hook records that a call ran.
pub const POST_TOOL_USE: &str = "PostToolUse";

/// Claude Code's settings files.
pub static LAYOUT: Layout = Layout {
    host: Host::ClaudeCode,
    title: "Claude Code",
    shape: Shape::Grouped,
    events: &[Events {
        before: PRE_TOOL_USE,
        after: POST_TOOL_USE,
        matcher: Some(MATCHER),
        must_reach: &["Bash", "PowerShell"],
        mcp: true,
        after_matcher: Some("Bash|PowerShell|mcp__.*"),
        files_only: false,
    }],
    syntax: Syntax::NamesOrRegex {
        plain: |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '),
        separators: &[','],
    },
    old_matchers: &["mcp__.*", "Bash|PowerShell|mcp__.*"],
    program_keys: &["command"],
    args_key: Some("args"),
    timeout_key: "timeout",
    unit: crate::host::settings::Unit::Seconds,
    default_timeout_secs: Some(600.0),
    on_failure: OnFailure::Blocks {
        key: "onFailure",
        value: "block",
    },
    before_fields: &[("statusMessage", STATUS)],
    after_fields: &[],
    mcp_name: crate::host::names::mcp,
    user,
    project: ".claude/settings.json",
    local: Some(".claude/settings.local.json"),
    also: nothing_else,
    kill_switch,
    after_install: None,
    managed: Managed {
        linux: "/etc/claude-code/managed-settings.json",
        macos: "/Library/Application Support/ClaudeCode/managed-settings.json",
        windows: r"C:\Program Files\ClaudeCode\managed-settings.json",
        // Claude Code reads `managed-settings.json`, then each `managed-settings.d/*.json`
        // (not a dot file) in sorted order, merging objects key by key, appending lists and
        // letting a later file's scalar win. rewind's hook groups are list elements, so no
        // file before or after can take them out; only its lock is a scalar. `50-` sorts in
        // the middle of the usual `10-`…`90-` numbering: an organisation can still override
        // the lock on purpose with a later file, and `doctor` names such a file.
        drop_in: "managed-settings.d/50-rewind.json",
        lock: &["allowManagedHooksOnly"],
        lock_also: "every hook that is not in managed settings: the users' and projects' own hooks (user, project and local settings) and plugins' hooks, unless managed settings force-enable the plugin",
        still_off: "a user's \"disableAllHooks\": true does not switch off managed hooks; only \"disableAllHooks\" in managed settings itself does",
        outlives_kill_switch: true,
        beyond_lock: "",
        source: "anthropics/claude-code examples/mdm/README.md, examples/settings/README.md, CHANGELOG.md; code.claude.com/docs/en/settings",
    },
};

fn user() -> anyhow::Result<std::path::PathBuf> {
    home(".claude/settings.json")
}

fn kill_switch(settings: &Value) -> Option<String> {
    (settings.get("disableAllHooks") == Some(&Value::Bool(true))).then(|| {
        String::from(
            "\"disableAllHooks\": true: Claude Code runs no hook at all, so nothing is guarded",
        )
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::host::settings::{Invocation, Matcher};

    fn run(path: &str) -> Invocation {
        Invocation::new(Path::new(path), None, Host::ClaudeCode)
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
        LAYOUT
            .merge(&mut settings, &run("/opt/rewind/bin/rewind"), 180)
            .expect("merge");
        let once = settings.clone();
        LAYOUT
            .merge(&mut settings, &run("/opt/rewind/bin/rewind"), 180)
            .expect("again");
        assert_eq!(settings, once, "second install changes nothing");
        let groups = settings["hooks"]["PreToolUse"].as_array().expect("array");
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0], before["hooks"]["PreToolUse"][0]);
        assert_eq!(groups[1]["matcher"], MATCHER);
        assert_eq!(
            groups[1]["hooks"][0]["args"],
            json!(["hook", "--host", "claude-code"])
        );
        for key in ["permissions", "model"] {
            assert_eq!(settings[key], before[key]);
        }
        assert_eq!(LAYOUT.remove(&mut settings), 2);
        assert_eq!(settings, before, "uninstall restores the original");
    }

    #[test]
    fn an_existing_rewind_handler_is_updated_in_place_under_the_users_matcher() {
        let mut settings = json!({"hooks": {"PreToolUse": [
            {"matcher": "mcp__ssh__.*", "hooks": [{"type": "command", "command": "/old/rewind", "args": ["hook"], "timeout": 60}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/older/rewind hook"}]}
        ]}});
        LAYOUT
            .merge(&mut settings, &run("/new/rewind"), 180)
            .expect("merge");
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
        LAYOUT
            .merge(&mut settings, &run("/new/rewind"), 180)
            .expect("merge");
        assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], MATCHER);
        let matcher = Matcher::new(LAYOUT.syntax, Some(MATCHER));
        for tool in ["Bash", "PowerShell", "mcp__ssh__exec"] {
            assert!(matcher.matches(tool), "{tool}");
        }
    }

    #[test]
    fn removing_takes_only_rewinds_handlers() {
        let mut settings = json!({"hooks": {
            "PreToolUse": [
                {"matcher": "mcp__.*", "hooks": [
                    {"type": "command", "command": "/usr/bin/audit-mcp"},
                    {"type": "command", "command": "/bin/rewind", "args": ["hook", "--host", "claude-code"]}
                ]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/bin/rewind hook"}]}
            ],
            "Stop": []
        }});
        assert_eq!(LAYOUT.remove(&mut settings), 2);
        assert_eq!(
            settings,
            json!({"hooks": {
                "PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/usr/bin/audit-mcp"}]}],
                "Stop": []
            }})
        );
        assert_eq!(LAYOUT.remove(&mut settings), 0);
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
                Matcher::new(LAYOUT.syntax, matcher).matches(tool),
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
        assert!(kill_switch(&settings).is_some());
        let found = LAYOUT.inspect(Path::new("s.json"), &settings);
        assert_eq!(found.len(), 1);
        let h = &found[0];
        assert_eq!(
            h.pinned_config(),
            Some(std::path::PathBuf::from("/etc/r.toml"))
        );
        assert_eq!(h.timeout, Some(90.0));
        assert!(!h.fail_closed);
        assert!(!h.matcher.matches("mcp__winrm__run"));
    }
}
