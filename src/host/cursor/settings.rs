//! Cursor's `hooks.json`: `~/.cursor/hooks.json` and `<project>/.cursor/hooks.json`.
//!
//! Shape: `{"version": 1, "hooks": {"<event>": [handler…]}}`, a flat list per event. rewind
//! uses `beforeShellExecution` (whose matcher, if any, reads the command text) and
//! `beforeMCPExecution`, where Cursor can ask, with their after-the-call twins. Handlers are
//! one shell command line with a timeout in seconds; `failClosed: true` makes a crash,
//! timeout or unreadable answer block the call (without it, all three let it run).

use crate::host::Host;
use crate::host::settings::{
    Events, Layout, Managed, OnFailure, Shape, Syntax, Unit, home, no_kill_switch, nothing_else,
};

/// Cursor's hook files.
pub static LAYOUT: Layout = Layout {
    host: Host::Cursor,
    title: "Cursor",
    shape: Shape::Flat,
    events: &[
        Events {
            before: "beforeShellExecution",
            after: "afterShellExecution",
            matcher: None,
            // The matcher reads the command text: commands that reach a VM must pass it.
            must_reach: &[
                "ssh web01 sudo systemctl restart nginx",
                "ansible-playbook -i inventory site.yml",
                "pwsh -c Restart-Computer -ComputerName win01",
            ],
            mcp: false,
            after_matcher: None,
            files_only: false,
        },
        Events {
            before: "beforeMCPExecution",
            after: "afterMCPExecution",
            matcher: None,
            must_reach: &[],
            mcp: true,
            after_matcher: None,
            files_only: false,
        },
        Events {
            before: "preToolUse",
            after: "postToolUse",
            // The file tools: only a write to rewind's own files or a host's hook settings,
            // or a read of the token cache, is refused.
            matcher: Some("Write|Edit|Delete|Read"),
            must_reach: &[],
            mcp: false,
            after_matcher: None,
            files_only: true,
        },
    ],
    syntax: Syntax::Regex,
    old_matchers: &[],
    program_keys: &["command"],
    args_key: None,
    timeout_key: "timeout",
    unit: Unit::Seconds,
    default_timeout_secs: None,
    on_failure: OnFailure::Blocks {
        key: "failClosed",
        value: "true",
    },
    before_fields: &[],
    after_fields: &[],
    // Cursor names the MCP tool without its server.
    mcp_name: |_, tool| tool.to_owned(),
    user,
    project: ".cursor/hooks.json",
    local: None,
    also: nothing_else,
    kill_switch: no_kill_switch,
    after_install: None,
    managed: Managed {
        linux: "/etc/cursor/hooks.json",
        macos: "/Library/Application Support/Cursor/hooks.json",
        windows: r"C:\ProgramData\Cursor\hooks.json",
        drop_in: "",
        lock: &[],
        lock_also: "",
        still_off: "Cursor documents no setting that switches enterprise hooks off",
        outlives_kill_switch: true,
        beyond_lock: "",
        source: "cursor.com/docs/agent/hooks (Configuration: enterprise hooks.json)",
    },
};

fn user() -> anyhow::Result<std::path::PathBuf> {
    home(".cursor/hooks.json")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::host::settings::Invocation;

    #[test]
    fn both_before_events_block_on_failure_and_the_users_hooks_stay() {
        let mut file = json!({"version": 1, "hooks": {
            "afterFileEdit": [{"command": "./hooks/format.sh"}],
            "beforeShellExecution": [{"command": "./hooks/audit.sh", "matcher": "git push"}]
        }});
        let before = file.clone();
        let run = Invocation::new(Path::new("/usr/local/bin/rewind"), None, Host::Cursor);
        LAYOUT.merge(&mut file, &run, 180).expect("merge");
        for event in ["beforeShellExecution", "beforeMCPExecution"] {
            let ours = file["hooks"][event]
                .as_array()
                .and_then(|l| l.last())
                .expect("ours");
            assert_eq!(ours["command"], "/usr/local/bin/rewind hook --host cursor");
            assert_eq!(ours["failClosed"], true, "{event}");
            assert_eq!(ours["timeout"], 180);
            assert!(ours.get("matcher").is_none());
        }
        assert_eq!(file["hooks"]["afterMCPExecution"][0]["timeout"], 10);
        // The file tools reach preToolUse for the self-protection check, and only they.
        assert_eq!(
            file["hooks"]["preToolUse"][0]["matcher"],
            "Write|Edit|Delete|Read"
        );
        assert_eq!(file["hooks"]["preToolUse"][0]["failClosed"], true);
        assert!(
            file["hooks"].get("postToolUse").is_none(),
            "no record of each file call"
        );
        assert_eq!(LAYOUT.remove(&mut file), 5);
        assert_eq!(file, before);
    }
}
