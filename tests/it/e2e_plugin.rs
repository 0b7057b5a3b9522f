//! The Claude Code plugin (`.claude-plugin/plugin.json` and `hooks/hooks.json` at the root of
//! this repository): it installs the same entries as `rewind install`, and the real Claude Code
//! loads it and runs the real `rewind hook` from it against the simulator.

use std::path::{Path, PathBuf};

use rewind::commands::install::{Invocation, host_timeout};
use rewind::config::Config;
use rewind::host::Host;
use rewind::host::claude_code::settings;
use serde_json::{Value, json};

use crate::claude::{ClaudeCode, PermissionMode, text, tool_use};
use crate::support::{Setup, TestEnv};

const CALL_ID: &str = "toolu_e2e_plugin_01";
const TOOL: &str = "mcp__ssh__exec";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(relative: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(relative))
        .unwrap_or_else(|e| panic!("read {relative}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not JSON: {e}"))
}

#[test]
fn the_plugin_hooks_are_the_entries_install_writes_with_rewind_from_path() {
    let manifest = read_json(".claude-plugin/plugin.json");
    assert_eq!(manifest["name"], "rewind");
    let plugin = read_json("hooks/hooks.json");
    let run = Invocation::new(Path::new("rewind"), None, Host::ClaudeCode);
    let layout = Host::ClaudeCode.settings();
    let before = &plugin["hooks"]["PreToolUse"][0];
    assert_eq!(before["matcher"], settings::MATCHER);
    assert_eq!(
        before["hooks"][0],
        layout.handler(&run, true, host_timeout(&Config::defaults()))
    );
    let after = &plugin["hooks"]["PostToolUse"][0];
    assert_eq!(
        after["matcher"],
        layout.events[0].after_matcher.unwrap_or(settings::MATCHER)
    );
    assert_eq!(after["hooks"][0], layout.handler(&run, false, 10));
    // Nothing but those two events.
    assert_eq!(
        plugin["hooks"]
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["PreToolUse".to_owned(), "PostToolUse".to_owned()])
    );
}

fn rewind_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rewind"))
        .canonicalize()
        .expect("the rewind binary exists")
        .parent()
        .expect("a directory")
        .to_owned()
}

#[test]
fn claude_code_loads_the_plugin_and_its_hook_checkpoints_before_the_call_runs() {
    let env = TestEnv::with(Setup {
        hook: "budget_secs = 5".to_owned(),
        ..Setup::default()
    });
    let path = format!(
        "{}:{}",
        rewind_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cc = ClaudeCode::new()
        .prompt("Change the app config on jp-ubuntu.")
        .script([
            tool_use(
                CALL_ID,
                TOOL,
                json!({"host": "jp-ubuntu", "command": "sudo sed -i s/a/b/ /etc/app.conf"}),
            ),
            text("Done."),
        ])
        .permission_mode(PermissionMode::Default)
        .allowed_tools([TOOL])
        .arg(format!("--plugin-dir={}", repo().display()))
        .env("PATH", path);
    // HOME and PATH stay Claude Code's own; the hook inherits the rest.
    for (key, value) in env.hook_env() {
        cc = cc.env(&key, value);
    }
    let run = cc.run();

    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 1, "{inserts:#?}\n{}", run.describe());
    assert!(
        inserts[0].tag.starts_with(&format!("ai:{CALL_ID} | ")),
        "{inserts:#?}"
    );
    assert!(inserts[0].listed_at.is_some(), "{inserts:#?}");
    assert_eq!(run.mcp_tools_called(), ["ssh.exec"], "{}", run.describe());
    let seen = run.model_saw_after(CALL_ID);
    assert!(
        seen.contains("rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu."),
        "{seen}\n{}",
        run.describe()
    );
}
