//! Codex CLI's hooks: `$CODEX_HOME/hooks.json` (default `~/.codex/hooks.json`) and
//! `<project>/.codex/hooks.json`, which rewind writes; Codex also reads inline `[hooks]` of
//! the `config.toml` beside each (read here, for `doctor`, never written).
//!
//! Shape: Claude Code's matcher groups. A matcher of only letters, digits, `_` and `|` is
//! a list of exact names, anything else an unanchored regular expression. Handlers are one
//! shell command line, the timeout is in seconds (default 600), and there is no fail-closed
//! option: a hook that times out or crashes lets the call run. Codex runs a new or changed
//! hook only once a person has reviewed and trusted it (`/hooks`). `[features] hooks =
//! false` in `config.toml` turns every hook off.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::host::Host;
use crate::host::settings::{
    Events, Layout, Managed, OnFailure, STATUS, Shape, Syntax, Unit, home_or,
};

/// The shell tools (every name Codex versions have used, and `write_stdin`, which types
/// into a running one), `apply_patch` (only a patch to
/// rewind's own files or a host's hook settings is refused) and every MCP tool.
pub const MATCHER: &str =
    "^(Bash|shell|local_shell|shell_command|exec_command|write_stdin|apply_patch)$|^mcp__";

/// Codex CLI's hook files.
pub static LAYOUT: Layout = Layout {
    host: Host::Codex,
    title: "Codex CLI",
    shape: Shape::Grouped,
    events: &[Events {
        before: "PreToolUse",
        after: "PostToolUse",
        matcher: Some(MATCHER),
        must_reach: &[
            "Bash",
            "shell",
            "local_shell",
            "shell_command",
            "exec_command",
            "write_stdin",
        ],
        mcp: true,
        after_matcher: Some("^(Bash|shell|local_shell|shell_command|exec_command)$|^mcp__"),
        files_only: false,
    }],
    syntax: Syntax::NamesOrRegex {
        plain: |c| c.is_ascii_alphanumeric() || c == '_',
        separators: &[],
    },
    old_matchers: &[
        "^mcp__.*",
        "^(Bash|shell|local_shell|shell_command|exec_command)$|^mcp__",
    ],
    program_keys: &["command"],
    args_key: None,
    timeout_key: "timeout",
    unit: Unit::Seconds,
    default_timeout_secs: Some(600.0),
    on_failure: OnFailure::Open(
        "Codex CLI runs the call unguarded when the hook times out or crashes (it has no fail-closed option): only rewind's own budget stands between a hung ZVM and an unguarded call",
    ),
    before_fields: &[("statusMessage", STATUS)],
    after_fields: &[],
    mcp_name: crate::host::names::mcp,
    user,
    project: ".codex/hooks.json",
    local: None,
    also,
    kill_switch,
    after_install: Some(
        "Codex CLI runs a new or changed hook only after a person trusts it: open /hooks in Codex and trust the rewind entries",
    ),
    managed: Managed {
        linux: "/etc/codex/requirements.toml",
        macos: "/etc/codex/requirements.toml",
        // The documentation names /etc/codex/requirements.toml "on Unix systems" and no
        // Windows file.
        windows: "",
        drop_in: "",
        lock: &["allow_managed_hooks_only", "features.hooks"],
        lock_also: "every hook from users' and projects' config.toml and hooks.json, and session hooks",
        still_off: "without --lock, `[features] hooks = false` in a user's config.toml turns every hook off",
        outlives_kill_switch: false,
        beyond_lock: "",
        source: "openai/codex docs/config.md (Lifecycle hooks), codex-rs/core/src/config_loader/config_requirements.rs, pull request openai/codex#18893",
    },
};

fn user() -> anyhow::Result<PathBuf> {
    Ok(home_or("CODEX_HOME", ".codex")?.join("hooks.json"))
}

/// Codex also reads inline `[hooks]` from the `config.toml` beside `hooks.json`.
fn also(hooks: &Path) -> Vec<PathBuf> {
    vec![hooks.with_file_name("config.toml")]
}

fn kill_switch(settings: &Value) -> Option<String> {
    let features = settings.get("features")?;
    ["hooks", "codex_hooks"]
        .into_iter()
        .find(|key| features.get(key) == Some(&Value::Bool(false)))
        .map(|key| {
            format!(
                "[features] {key} = false: Codex CLI runs no hook at all, so nothing is guarded"
            )
        })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::host::settings::{Invocation, Matcher, parse};

    #[test]
    fn the_matcher_reaches_every_shell_name_and_mcp_tool_only() {
        let matcher = Matcher::new(LAYOUT.syntax, Some(MATCHER));
        for tool in LAYOUT.events[0]
            .must_reach
            .iter()
            .chain(&["mcp__ssh__exec"])
        {
            assert!(matcher.matches(tool), "{tool}");
        }
        // apply_patch reaches the hook for the self-protection check.
        assert!(matcher.matches("apply_patch"));
        for tool in ["BashOutput", "read_file", "web_search"] {
            assert!(!matcher.matches(tool), "{tool}");
        }
        // Codex's exact-name rule: a plain name never matches a longer one.
        assert!(!Matcher::new(LAYOUT.syntax, Some("mcp__ssh")).matches("mcp__ssh__exec"));
    }

    #[test]
    fn inline_toml_hooks_and_the_feature_switch_are_read() {
        let text = r#"
model = "gpt-5"
[features]
hooks = false
[[hooks.PreToolUse]]
matcher = "^mcp__"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "/opt/rewind/bin/rewind hook --host codex"
timeout = 180
"#;
        let value = parse(text, Path::new("config.toml")).expect("TOML");
        assert!(kill_switch(&value).is_some());
        let found = LAYOUT.inspect(Path::new("config.toml"), &value);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].program, "/opt/rewind/bin/rewind");
        assert_eq!(found[0].host_arg(), Some("codex"));
        assert_eq!(found[0].timeout, Some(180.0));
    }

    #[test]
    fn an_install_over_the_mcp_only_snippet_widens_it_and_keeps_the_rest() {
        let mut settings = json!({"hooks": {
            "PreToolUse": [
                {"matcher": "^mcp__.*", "hooks": [{"type": "command", "command": "/usr/local/bin/rewind hook --host codex", "timeout": 180}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 ~/.codex/hooks/lint.py"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
        }});
        let run = Invocation::new(Path::new("/usr/local/bin/rewind"), None, Host::Codex);
        LAYOUT.merge(&mut settings, &run, 180).expect("merge");
        let pre = &settings["hooks"]["PreToolUse"];
        assert_eq!(pre[0]["matcher"], MATCHER);
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "python3 ~/.codex/hooks/lint.py"
        );
        assert_eq!(
            settings["hooks"]["Stop"][0]["hooks"][0]["command"],
            "notify-send done"
        );
        assert_eq!(LAYOUT.remove(&mut settings), 2);
        assert_eq!(
            settings["hooks"]["PreToolUse"].as_array().map(Vec::len),
            Some(1)
        );
    }
}
