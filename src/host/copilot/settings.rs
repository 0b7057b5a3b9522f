//! GitHub Copilot CLI's hook files: every `*.json` in `$COPILOT_HOME/hooks/` (default
//! `~/.copilot/hooks/`) and in `<project>/.github/hooks/`. rewind writes its own file,
//! `rewind.json`, in that directory and reads the others for `doctor` and `uninstall`.
//!
//! Shape: `{"version": 1, "hooks": {"preToolUse": [handler…]}}`, a flat list per event. A
//! handler's `matcher` is a regular expression that must match the whole tool name (absent:
//! every tool). Handlers run in exec form (`exec` + `args`; hand-written ones may use `bash`
//! or `command`), with `timeoutSec` in seconds (default 30). A hook that crashes blocks the
//! call; one that times out lets it run. A file that is not valid JSON is skipped without a
//! word.

use crate::host::Host;
use crate::host::settings::{
    Events, Layout, Managed, OnFailure, Shape, Syntax, Unit, home_or, no_kill_switch,
    other_json_files,
};

/// The shell tools, the file tools (only a write to rewind's own files or a host's hook
/// settings, or a read of the token cache, is asked about) and every MCP tool
/// (`<server>-<tool>`; no built-in tool has a `-`).
pub const MATCHER: &str = "bash|powershell|write_bash|write_powershell|create|edit|str_replace_editor|apply_patch|view|.+-.+";
/// The file rewind writes in the hooks directory.
const FILE: &str = "rewind.json";

/// Copilot CLI's hook files.
pub static LAYOUT: Layout = Layout {
    host: Host::Copilot,
    title: "Copilot CLI",
    shape: Shape::Flat,
    events: &[Events {
        before: "preToolUse",
        after: "postToolUse",
        matcher: Some(MATCHER),
        must_reach: &["bash", "powershell", "write_bash", "write_powershell"],
        mcp: true,
        after_matcher: Some("bash|powershell|.+-.+"),
        files_only: false,
    }],
    syntax: Syntax::Anchored,
    old_matchers: &["bash|powershell|.+-.+"],
    program_keys: &["exec", "bash", "command"],
    args_key: Some("args"),
    timeout_key: "timeoutSec",
    unit: Unit::Seconds,
    default_timeout_secs: Some(30.0),
    on_failure: OnFailure::Open(
        "Copilot CLI runs the call unguarded when the hook times out (a crash blocks it): only rewind's own budget stands between a hung ZVM and an unguarded call",
    ),
    before_fields: &[],
    after_fields: &[],
    mcp_name: |server, tool| format!("{server}-{tool}"),
    user,
    project: ".github/hooks/rewind.json",
    local: None,
    also: other_json_files,
    kill_switch: no_kill_switch,
    after_install: None,
    managed: Managed {
        linux: "/etc/github-copilot/policy.d/rewind.json",
        macos: "/etc/github-copilot/policy.d/rewind.json",
        // Windows policy comes from the registry, not a file.
        windows: "",
        drop_in: "",
        lock: &[],
        lock_also: "",
        still_off: "users cannot switch policy hooks off (disableAllHooks does not reach them); Copilot CLI reads the file only while root owns it and group and others cannot write it",
        outlives_kill_switch: true,
        beyond_lock: "",
        source: "github/docs content/copilot/reference/hooks-reference.md (Policy hooks)",
    },
};

fn user() -> anyhow::Result<std::path::PathBuf> {
    Ok(home_or("COPILOT_HOME", ".copilot")?
        .join("hooks")
        .join(FILE))
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
            "bash",
            "powershell",
            "ssh-exec",
            "prod-ssh-run-cmd",
            "view",
            "edit",
            "create",
        ] {
            assert!(matcher.matches(tool), "{tool}");
        }
        for tool in ["read_bash", "web_fetch", "bashful", "glob", "task"] {
            assert!(!matcher.matches(tool), "{tool}");
        }
    }

    #[test]
    fn a_hand_written_entry_is_replaced_and_the_users_hooks_stay() {
        let mut file = json!({"version": 1, "hooks": {"preToolUse": [
            {"type": "command", "bash": "./scripts/audit.sh", "cwd": ".github/hooks", "timeoutSec": 10},
            {"type": "command", "bash": "/usr/local/bin/rewind hook --host copilot", "timeoutSec": 60}
        ], "sessionStart": [{"type": "command", "bash": "echo start >> log"}]}});
        let run = Invocation::new(Path::new("/usr/local/bin/rewind"), None, Host::Copilot);
        LAYOUT.merge(&mut file, &run, 180).expect("merge");
        let pre = file["hooks"]["preToolUse"].as_array().expect("list");
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["bash"], "./scripts/audit.sh");
        assert_eq!(pre[1]["exec"], "/usr/local/bin/rewind");
        assert_eq!(pre[1]["args"], json!(["hook", "--host", "copilot"]));
        assert_eq!(pre[1]["timeoutSec"], 180);
        assert_eq!(pre[1]["matcher"], MATCHER);
        assert_eq!(LAYOUT.remove(&mut file), 2);
        assert_eq!(
            file["hooks"]["preToolUse"].as_array().map(Vec::len),
            Some(1)
        );
        assert!(file["hooks"]["sessionStart"].is_array());
    }
}
