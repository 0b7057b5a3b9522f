//! Gemini CLI's `settings.json`: `~/.gemini/settings.json` (under `$GEMINI_CLI_HOME` when
//! set) and `<project>/.gemini/settings.json`.
//!
//! Shape: matcher groups under `hooks.BeforeTool` / `hooks.AfterTool`. A matcher is an
//! unanchored regular expression; one that does not compile is an exact name. Handlers are
//! one shell command line with a `name`, and the timeout is in **milliseconds** (default
//! 60 000). There is no fail-closed option: a hook that times out, or exits without printing
//! anything, lets the call run. `hooksConfig.enabled: false` turns every hook off, and a
//! hook whose name is in `hooksConfig.disabled` does not run. Project hooks run only in
//! trusted folders.

use std::path::PathBuf;

use serde_json::Value;

use crate::host::Host;
use crate::host::settings::{
    Events, Layout, Managed, OnFailure, STATUS, Shape, Syntax, Unit, home, nothing_else,
};

/// The shell tool, the file tools (only a write to rewind's own files or a host's hook
/// settings, or a read of the token cache, is asked about) and every MCP tool
/// (`mcp_<server>_<tool>`).
pub const MATCHER: &str =
    "^(run_shell_command|write_file|replace|read_file|read_many_files)$|^mcp_";
/// The `name` of rewind's entries (what `hooksConfig.disabled` would list).
const NAME: &str = "rewind";

/// Gemini CLI's settings files.
pub static LAYOUT: Layout = Layout {
    host: Host::Gemini,
    title: "Gemini CLI",
    shape: Shape::Grouped,
    events: &[Events {
        before: "BeforeTool",
        after: "AfterTool",
        matcher: Some(MATCHER),
        must_reach: &["run_shell_command"],
        mcp: true,
        after_matcher: Some("^run_shell_command$|^mcp_"),
        files_only: false,
    }],
    syntax: Syntax::RegexOrLiteral,
    old_matchers: &["^mcp_.*", "^run_shell_command$|^mcp_"],
    program_keys: &["command"],
    args_key: None,
    timeout_key: "timeout",
    unit: Unit::Milliseconds,
    default_timeout_secs: Some(60.0),
    on_failure: OnFailure::Open(
        "Gemini CLI runs the call unguarded when the hook times out or exits without a word (it has no fail-closed option): only rewind's own budget stands between a hung ZVM and an unguarded call",
    ),
    before_fields: &[("name", NAME), ("description", STATUS)],
    after_fields: &[("name", NAME)],
    mcp_name: |server, tool| format!("mcp_{server}_{tool}"),
    user,
    project: ".gemini/settings.json",
    local: None,
    also: nothing_else,
    kill_switch,
    after_install: None,
    managed: Managed {
        linux: "/etc/gemini-cli/settings.json",
        macos: "/Library/Application Support/GeminiCli/settings.json",
        windows: r"C:\ProgramData\gemini-cli\settings.json",
        drop_in: "",
        lock: &["hooksConfig.enabled"],
        lock_also: "nothing else: system settings override user settings, so a user's hooksConfig.enabled = false no longer turns every hook off",
        still_off: "a user's hooksConfig.disabled naming rewind (lists are merged, so system settings cannot clear it), and GEMINI_CLI_SYSTEM_SETTINGS_PATH pointing Gemini CLI at another system file",
        outlives_kill_switch: false,
        beyond_lock: "hooksConfig.disabled",
        source: "google-gemini/gemini-cli packages/cli/src/config/settings.ts (getSystemSettingsPath), docs/cli/enterprise.md, packages/cli/src/config/settingsSchema.ts (hooksConfig)",
    },
};

fn user() -> anyhow::Result<PathBuf> {
    match std::env::var_os("GEMINI_CLI_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir).join(".gemini/settings.json")),
        None => home(".gemini/settings.json"),
    }
}

fn kill_switch(settings: &Value) -> Option<String> {
    let config = settings.get("hooksConfig")?;
    if config.get("enabled") == Some(&Value::Bool(false)) {
        return Some(String::from(
            "\"hooksConfig.enabled\": false: Gemini CLI runs no hook at all, so nothing is guarded",
        ));
    }
    config
        .get("disabled")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n == NAME))
        .then(|| {
            String::from("\"hooksConfig.disabled\" lists \"rewind\": Gemini CLI skips rewind's entries, so nothing is guarded")
        })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::host::settings::{Invocation, Matcher};

    #[test]
    fn the_matcher_reaches_the_shell_and_mcp_tools_only() {
        let matcher = Matcher::new(LAYOUT.syntax, Some(MATCHER));
        // The file tools reach the hook for the self-protection check.
        for tool in [
            "run_shell_command",
            "mcp_ssh_exec",
            "mcp_prod_ssh_run_cmd",
            "read_file",
            "write_file",
            "replace",
        ] {
            assert!(matcher.matches(tool), "{tool}");
        }
        for tool in ["web_fetch", "glob", "pre_write_file", "replace_all"] {
            assert!(!matcher.matches(tool), "{tool}");
        }
    }

    #[test]
    fn install_keeps_a_real_settings_file_and_its_other_hooks() {
        let mut settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"preferredEditor": "vim"},
            "mcpServers": {"ssh": {"command": "node", "args": ["ssh-mcp.js"]}},
            "hooks": {"BeforeTool": [{"matcher": "write_file|replace", "hooks": [
                {"type": "command", "name": "secret-scan", "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/scan.sh", "timeout": 5000}
            ]}]}
        });
        let before = settings.clone();
        let run = Invocation::new(Path::new("/usr/bin/rewind"), None, Host::Gemini);
        LAYOUT.merge(&mut settings, &run, 180_000).expect("merge");
        let ours = &settings["hooks"]["BeforeTool"][1];
        assert_eq!(ours["matcher"], MATCHER);
        assert_eq!(
            ours["hooks"][0]["command"],
            "/usr/bin/rewind hook --host gemini"
        );
        assert_eq!(ours["hooks"][0]["timeout"], 180_000);
        assert_eq!(
            settings["hooks"]["AfterTool"][0]["hooks"][0]["timeout"],
            10_000
        );
        assert_eq!(LAYOUT.remove(&mut settings), 2);
        assert_eq!(settings, before);
    }

    #[test]
    fn both_off_switches_are_seen() {
        assert!(kill_switch(&json!({"hooksConfig": {"enabled": false}})).is_some());
        assert!(kill_switch(&json!({"hooksConfig": {"disabled": ["rewind"]}})).is_some());
        assert!(kill_switch(&json!({"hooksConfig": {"disabled": ["other"]}})).is_none());
    }
}
