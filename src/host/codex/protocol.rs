//! Codex CLI's `PreToolUse` protocol. Measured on Codex CLI 0.171.0 (`docs/hosts.md`):
//!
//! - stdin: Claude-like `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id` (the
//!   model's call id), plus `turn_id` and `model`. MCP tools arrive as `mcp__<server>__<tool>`;
//!   the shell tool as `Bash` with a string `command` (older builds: `shell` with an argv list).
//! - stdout: `hookSpecificOutput.permissionDecision: "deny"` with a reason blocks and the
//!   model reads the reason; `additionalContext` reaches the model as a developer message.
//! - What it cannot say: `ask` is unsupported (the call runs), so an ask is rendered as a deny
//!   saying a human must run or approve the call. `allow` lifts nothing, so it is rendered
//!   as the context alone.
//! - It fails open on a hook timeout and on a crash: there is no fail-closed option.
//!
//! Events read: exactly `PreToolUse` and `PostToolUse`.

use serde_json::{Map, Value, json};

use crate::decision::Decision;
use crate::host::names;
use crate::host::{Host, Rendered, ToolCall, Unreadable, event, payload, text, tool_name};

/// Whether a payload is Codex's: it sends `turn_id` with every hook call.
pub(crate) fn fingerprint(payload: &Map<String, Value>) -> bool {
    payload.contains_key("turn_id")
}

/// Reads the bytes from stdin as a call.
pub(crate) fn read(bytes: &[u8]) -> Result<ToolCall, Unreadable> {
    let payload = payload(bytes)?;
    let tool = tool_name(&payload, "tool_name")?;
    let event = event(payload.get("hook_event_name"), "PreToolUse", "PostToolUse");
    let args = payload.get("tool_input").cloned().unwrap_or(Value::Null);
    let (tool, input) = match tool.as_str() {
        "Bash" | "shell" | "local_shell" | "shell_command" => {
            ("Bash".to_owned(), names::shell_input(args, "command"))
        }
        "exec_command" => ("Bash".to_owned(), names::shell_input(args, "cmd")),
        "apply_patch" => ("Edit".to_owned(), args),
        // Characters typed into a running `exec_command` session.
        "write_stdin" => (
            crate::catalog::TYPED_SHELL.to_owned(),
            names::shell_input(args, "chars"),
        ),
        _ => (tool, args),
    };
    Ok(ToolCall {
        host: Host::Codex,
        session: text(&payload, "session_id"),
        change: text(&payload, "tool_use_id"),
        tool,
        server: None,
        input,
        event,
        cwd: crate::host::working_directory(&payload),
        server_hint: None,
    })
}

/// Renders a decision in Codex's schema.
pub(crate) fn render(decision: &Decision) -> Rendered {
    let deny = |reason: &str| {
        Rendered::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }))
    };
    let context = |context: &str| {
        Rendered::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": context,
            }
        }))
    };
    match decision {
        Decision::None => Rendered::json(&json!({})),
        Decision::Context(text) | Decision::Allow { context: text, .. } => context(text),
        Decision::Deny(reason) => deny(reason),
        Decision::Ask(reason) => deny(&names::ask_as_deny(reason, "Codex CLI")),
        // Codex runs the call on exit 2 with nothing on stderr (a closed one) and reads no
        // stdout then: its own deny, exit 0, blocks whatever happened to stderr.
        Decision::Block(line) => deny(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Event;

    const RECORDED: &str = r#"{"session_id":"01a22fd1-4de8-7193-9439-7e8e00d1992f","turn_id":"01a22fd1-4e18","transcript_path":"/h/.codex/sessions/r.jsonl","cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-e2e","permission_mode":"bypassPermissions","tool_name":"mcp__ssh__exec","tool_input":{"host":"jp-ubuntu","command":"touch /etc/x"},"tool_use_id":"call_e2e_01"}"#;

    #[test]
    fn reads_the_recorded_mcp_call() {
        let call = read(RECORDED.as_bytes()).expect("reads");
        assert_eq!(call.host, Host::Codex);
        assert_eq!(call.tool, "mcp__ssh__exec");
        assert_eq!(call.change.as_deref(), Some("call_e2e_01"));
        assert_eq!(call.caller().agent(), "codex/01a22fd1");
        assert_eq!(call.event, Event::BeforeTool);
        assert_eq!(call.input["host"], "jp-ubuntu");
    }

    #[test]
    fn the_shell_tool_is_bash_with_a_string_command_whatever_the_spelling() {
        for (tool, input) in [
            ("Bash", json!({"command": "ssh web01 reboot"})),
            (
                "shell",
                json!({"command": ["bash", "-lc", "ssh web01 reboot"]}),
            ),
            ("exec_command", json!({"cmd": "ssh web01 reboot"})),
        ] {
            let payload = json!({"turn_id": "t", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
            let call = read(payload.to_string().as_bytes()).expect("reads");
            assert_eq!(call.tool, "Bash", "{tool}");
            assert_eq!(call.input["command"], "ssh web01 reboot", "{tool}");
        }
    }

    #[test]
    fn only_the_exact_event_names_are_read() {
        for (event, expected) in [
            ("PreToolUse", Event::BeforeTool),
            ("PostToolUse", Event::AfterTool),
            ("preToolUse", Event::Unknown("preToolUse".into())),
            ("BeforeTool", Event::Unknown("BeforeTool".into())),
        ] {
            let payload = json!({"turn_id": "t", "hook_event_name": event, "tool_name": "Bash", "tool_input": {}});
            assert_eq!(
                read(payload.to_string().as_bytes()).expect("reads").event,
                expected
            );
        }
    }

    #[test]
    fn an_ask_is_a_deny_that_says_a_human_must_run_it() {
        let rendered = render(&Decision::Ask(
            "rewind: VM web01 is unknown to Zerto.".into(),
        ));
        let out: Value =
            serde_json::from_str(rendered.stdout.as_deref().expect("json")).expect("json");
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .expect("reason");
        assert!(
            reason.starts_with("rewind: VM web01 is unknown"),
            "{reason}"
        );
        assert!(reason.contains("a human must run this call"), "{reason}");
        assert_eq!(rendered.code, 0);
    }
}
