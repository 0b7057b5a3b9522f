//! GitHub Copilot CLI's `preToolUse` protocol. Measured on Copilot CLI 1.0.102
//! (`docs/hosts.md`):
//!
//! - stdin, two shapes chosen by the event key the hook is registered under: `preToolUse`
//!   sends `sessionId`, epoch-ms `timestamp`, `toolName`, `toolArgs` (an object, or a JSON
//!   string in older builds) and no event name; `PreToolUse` sends `hook_event_name`,
//!   `session_id`, an ISO `timestamp`, `tool_name`, `tool_input`. Neither sends a call id.
//!   MCP tools arrive as `<server>-<tool>`, split against the servers Copilot is configured
//!   with and the catalogs name (`host::servers`; Copilot's own tools use `_`); the shell tools are `bash` and `powershell` (`Bash`, `PowerShell` in the
//!   Claude-shaped payload).
//! - stdout: flat `{"permissionDecision": "deny", "permissionDecisionReason": …}` blocks and
//!   the model reads the reason; `ask` is a prompt, or a refusal with the reason under `-p`;
//!   top-level `additionalContext` reaches the model.
//! - What it cannot say: exit 2 blocks but the model is not told why, so a block also prints
//!   a deny with the reason on stdout. `allow` bypasses the user's own permission rules, so
//!   it is rendered as the context alone.
//! - A crash blocks ("hook errored"); a timeout lets the call run.
//!
//! Events read: a camelCase payload is before the call unless it carries `toolResult`;
//! `hook_event_name` must be exactly `PreToolUse` or `PostToolUse`.

use serde_json::{Map, Value, json};

use crate::decision::Decision;
use crate::host::names;
use crate::host::servers::ServerHint;
use crate::host::{Event, Host, Rendered, ToolCall, Unreadable, event, payload, text, tool_name};

/// Copilot's own tools (either spelling) that only touch the local machine, by the neutral
/// name the catalog knows as local. `write_bash` types into a running shell: not local.
const LOCAL: &[(&str, &str)] = &[
    ("view", "Read"),
    ("create", "Write"),
    ("edit", "Edit"),
    ("str_replace_editor", "Edit"),
    ("apply_patch", "Edit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("web_fetch", "WebFetch"),
    ("task", "Task"),
    ("ask_user", "AskUserQuestion"),
    ("read_bash", "BashOutput"),
    ("list_bash", "BashOutput"),
    ("stop_bash", "KillShell"),
    ("read_powershell", "BashOutput"),
    ("stop_powershell", "KillShell"),
];

/// Whether a payload is Copilot CLI's: camelCase `toolName`/`toolArgs`, or the Claude-shaped
/// payload with a `timestamp` and none of the fields Claude Code and Codex always send.
pub(crate) fn fingerprint(payload: &Map<String, Value>) -> bool {
    let has = |key: &str| payload.contains_key(key);
    has("toolName")
        || has("toolArgs")
        || (has("timestamp")
            && !has("permission_mode")
            && !has("transcript_path")
            && !has("turn_id")
            && !has("mcp_context"))
}

/// Reads the bytes from stdin as a call.
pub(crate) fn read(bytes: &[u8]) -> Result<ToolCall, Unreadable> {
    let payload = payload(bytes)?;
    let camel = payload.contains_key("toolName") || payload.contains_key("toolArgs");
    let (native, args, session, event) = if camel {
        let event = if payload.contains_key("toolResult") {
            Event::AfterTool
        } else {
            Event::BeforeTool
        };
        (
            tool_name(&payload, "toolName")?,
            names::arguments(payload.get("toolArgs")),
            text(&payload, "sessionId"),
            event,
        )
    } else {
        (
            tool_name(&payload, "tool_name")?,
            names::arguments(payload.get("tool_input")),
            text(&payload, "session_id"),
            event(payload.get("hook_event_name"), "PreToolUse", "PostToolUse"),
        )
    };
    let (tool, server, input) = neutral(&native, args);
    // `<server>-<tool>` splits at its first `-` here; the servers Copilot is configured with
    // decide where it really splits (`host::servers`).
    let server_hint = server.is_some().then(|| ServerHint::Joined {
        name: native.clone(),
        cwd: text(&payload, "cwd").map(std::path::PathBuf::from),
    });
    Ok(ToolCall {
        host: Host::Copilot,
        session,
        change: None,
        tool,
        server,
        input,
        event,
        cwd: crate::host::working_directory(&payload),
        server_hint,
    })
}

/// The neutral name, server and arguments of a Copilot tool.
fn neutral(native: &str, args: Value) -> (String, Option<String>, Value) {
    match native {
        "bash" | "Bash" => ("Bash".to_owned(), None, names::shell_input(args, "command")),
        // Text typed into a shell the agent started earlier (`shellId`, `input`).
        "write_bash" => (
            crate::catalog::TYPED_SHELL.to_owned(),
            None,
            names::shell_input(args, "input"),
        ),
        "write_powershell" => (
            crate::catalog::TYPED_POWERSHELL.to_owned(),
            None,
            names::shell_input(args, "input"),
        ),
        "powershell" | "PowerShell" => (
            "PowerShell".to_owned(),
            None,
            names::shell_input(args, "command"),
        ),
        _ => {
            if let Some((_, local)) = LOCAL.iter().find(|(n, _)| *n == native) {
                return ((*local).to_owned(), None, args);
            }
            match native.split_once('-') {
                Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
                    (names::mcp(server, tool), Some(server.to_owned()), args)
                }
                // A Claude-named tool (PreToolUse shape) or one rewind does not know: as sent.
                _ => (native.to_owned(), None, args),
            }
        }
    }
}

/// Renders a decision in Copilot CLI's flat schema.
pub(crate) fn render(decision: &Decision) -> Rendered {
    let decide = |kind: &str, reason: &str| json!({"permissionDecision": kind, "permissionDecisionReason": reason});
    match decision {
        Decision::None => Rendered::json(&json!({})),
        Decision::Context(text) | Decision::Allow { context: text, .. } => {
            Rendered::json(&json!({"additionalContext": text}))
        }
        Decision::Deny(reason) => Rendered::json(&decide("deny", reason)),
        Decision::Ask(reason) => Rendered::json(&decide("ask", reason)),
        // Exit 2 alone reaches the model as "hook exited with code 2": say why on stdout too.
        Decision::Block(line) => Rendered::block_with(line, |reason| decide("deny", reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_recorded_camel_case_mcp_call() {
        let call = read(br#"{"sessionId":"959e7020-6925-4433-ab48-647d9a7b954f","timestamp":1796098717577,"cwd":"/p","toolName":"ssh-exec","toolArgs":{"host":"jp-ubuntu","command":"touch /etc/x"}}"#)
            .expect("reads");
        assert_eq!(call.host, Host::Copilot);
        assert_eq!(call.tool, "mcp__ssh__exec");
        assert_eq!(call.server.as_deref(), Some("ssh"));
        assert_eq!(call.change, None);
        assert_eq!(call.caller().agent(), "copilot/959e7020");
        assert_eq!(call.event, Event::BeforeTool);
        assert_eq!(call.input["host"], "jp-ubuntu");
    }

    #[test]
    fn reads_the_recorded_claude_shaped_call_and_tool_args_as_a_string() {
        let call = read(br#"{"hook_event_name":"PreToolUse","session_id":"4cbbb07d-6db2","timestamp":"2026-12-01T04:18:51.023Z","cwd":"/p","tool_name":"ssh-exec","tool_input":{"host":"jp-ubuntu"}}"#)
            .expect("reads");
        assert_eq!(call.tool, "mcp__ssh__exec");
        assert_eq!(call.event, Event::BeforeTool);
        let call = read(br#"{"timestamp":1,"cwd":"/","toolName":"bash","toolArgs":"{\"command\":\"ssh web01 reboot\"}"}"#)
            .expect("reads");
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.input["command"], "ssh web01 reboot");
    }

    #[test]
    fn the_shell_and_local_tools_get_their_neutral_names() {
        for (native, neutral) in [
            ("bash", "Bash"),
            ("powershell", "PowerShell"),
            ("Bash", "Bash"),
            ("view", "Read"),
            ("edit", "Edit"),
            ("write_bash", "ShellInput"),
            ("Read", "Read"),
        ] {
            let payload = json!({"toolName": native, "toolArgs": {}});
            assert_eq!(
                read(payload.to_string().as_bytes()).expect("reads").tool,
                neutral,
                "{native}"
            );
        }
    }

    #[test]
    fn the_event_comes_from_the_shape_or_the_exact_name() {
        let after = json!({"toolName": "ssh-exec", "toolArgs": {}, "toolResult": {"resultType": "success"}});
        assert_eq!(
            read(after.to_string().as_bytes()).expect("reads").event,
            Event::AfterTool
        );
        let odd = json!({"hook_event_name": "preToolUse", "timestamp": "t", "tool_name": "bash", "tool_input": {}});
        assert_eq!(
            read(odd.to_string().as_bytes()).expect("reads").event,
            Event::Unknown("preToolUse".into())
        );
    }

    #[test]
    fn json_that_is_not_an_object_is_named_for_what_it_is() {
        for (bytes, kind) in [
            (&b"[1,2]"[..], "a JSON array"),
            (b"\"text\"", "a JSON string"),
            (b"42", "a JSON number"),
        ] {
            assert_eq!(read(bytes).unwrap_err(), Unreadable::NotObject(kind));
        }
        assert!(matches!(
            read(b"{nope").unwrap_err(),
            Unreadable::NotJson(_)
        ));
    }

    #[test]
    fn a_block_tells_the_model_why_on_stdout_and_still_exits_2() {
        let rendered = render(&Decision::Block("rewind: hook input is not JSON".into()));
        assert_eq!(rendered.code, 2);
        let out: Value =
            serde_json::from_str(rendered.stdout.as_deref().expect("json")).expect("json");
        assert_eq!(out["permissionDecision"], "deny");
        assert_eq!(
            out["permissionDecisionReason"],
            "rewind: hook input is not JSON"
        );
    }
}
