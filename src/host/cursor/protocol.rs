//! Cursor's hook protocol, from its documented schema (no build of Cursor runs headless here,
//! so nothing below is measured; `docs/hosts.md` says so).
//!
//! - stdin: every event carries `conversation_id`, `generation_id`, `hook_event_name`,
//!   `cursor_version`, `workspace_roots`. `beforeShellExecution` sends the `command` string;
//!   `beforeMCPExecution` sends `tool_name`, `tool_input` (documented as a JSON string) and the
//!   server's `url` or `command`, but not its name; `preToolUse` sends `tool_name`
//!   (`Shell`, `Read`, `Write`, …, MCP tools as `MCP:<tool>`), `tool_input` and `tool_use_id`.
//! - stdout: `{"permission": "allow" | "deny" | "ask", "user_message", "agent_message"}`
//!   (older builds read `decision` and `reason`: both spellings are written); exit 2 blocks.
//! - What it cannot say: `ask` is not enforced on `preToolUse`, and one answer cannot know the
//!   event, so an ask is rendered as a deny saying a human must run or approve the call.
//!   No decision with the checkpoint is `agent_message` and `user_message` without a
//!   `permission`; `allow` is rendered the same (whether it skips the user's rules is not
//!   documented).
//! - An MCP call names no server. `beforeMCPExecution`'s `command` or `url` is looked up in
//!   Cursor's own `mcp.json` files (`host::servers`): the one server configured so names the
//!   call. Otherwise (and for `preToolUse`'s `MCP:<tool>`, which says nothing of the server)
//!   it is server `unnamed`, which only catalog entries for any server (`server = "*"`)
//!   match; anything else is unlisted, an ask.
//!
//! Events read: exactly `beforeShellExecution`, `beforeMCPExecution`, `preToolUse` (before the
//! call) and `afterShellExecution`, `afterMCPExecution`, `postToolUse` (after it).

use serde_json::{Map, Value, json};

use crate::decision::Decision;
use crate::host::names;
use crate::host::servers::ServerHint;
use crate::host::{Event, Host, Rendered, ToolCall, Unreadable, payload};

/// The server name of an MCP call Cursor does not name.
pub const UNNAMED_SERVER: &str = "unnamed";

const LOCAL: &[(&str, &str)] = &[
    ("Read", "Read"),
    ("Write", "Write"),
    ("Edit", "Edit"),
    ("Delete", "Write"),
    ("Grep", "Grep"),
    ("Glob", "Glob"),
    ("LS", "LS"),
    ("Task", "Task"),
    ("WebFetch", "WebFetch"),
    ("WebSearch", "WebSearch"),
];

/// Whether a payload is Cursor's: it sends `cursor_version`, or a conversation and a
/// generation id.
pub(crate) fn fingerprint(payload: &Map<String, Value>) -> bool {
    let has = |key: &str| payload.contains_key(key);
    has("cursor_version") || (has("conversation_id") && has("generation_id"))
}

/// Reads the bytes from stdin as a call.
pub(crate) fn read(bytes: &[u8]) -> Result<ToolCall, Unreadable> {
    let payload = payload(bytes)?;
    // Cursor's fields read as absent when blank (a blank command is no call to read).
    let text = |key: &str| crate::host::text(&payload, key).filter(|s| !s.trim().is_empty());
    let event_name = text("hook_event_name").unwrap_or_default();
    let event = match event_name.as_str() {
        // Two event names (see `payload`): unknown, naming both.
        _ if payload.get("hook_event_name").is_some_and(Value::is_array) => {
            crate::host::event(payload.get("hook_event_name"), "", "")
        }
        "beforeShellExecution" | "beforeMCPExecution" | "preToolUse" => Event::BeforeTool,
        "afterShellExecution" | "afterMCPExecution" | "postToolUse" => Event::AfterTool,
        _ => Event::Unknown(event_name.clone()),
    };
    let mut server_hint = None;
    let (tool, server, input) = match event_name.as_str() {
        "beforeShellExecution" | "afterShellExecution" => {
            let Some(command) = text("command") else {
                return Err(Unreadable::NoToolName);
            };
            ("Bash".to_owned(), None, json!({"command": command}))
        }
        "beforeMCPExecution" | "afterMCPExecution" => {
            let Some(tool) = text("tool_name") else {
                return Err(Unreadable::NoToolName);
            };
            // Named later from Cursor's own mcp.json files, by the command or URL.
            let dirs = payload
                .get("workspace_roots")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .chain(text("cwd").as_deref())
                .map(std::path::PathBuf::from)
                .collect();
            server_hint = Some(ServerHint::Launched {
                command: text("command"),
                url: text("url"),
                dirs,
            });
            (
                names::mcp(UNNAMED_SERVER, &tool),
                Some(UNNAMED_SERVER.to_owned()),
                names::arguments(payload.get("tool_input")),
            )
        }
        _ => {
            let Some(native) = text("tool_name") else {
                return Err(Unreadable::NoToolName);
            };
            let input = names::arguments(payload.get("tool_input"));
            if native == "Shell" {
                (
                    "Bash".to_owned(),
                    None,
                    names::shell_input(input, "command"),
                )
            } else if let Some(tool) = native.strip_prefix("MCP:") {
                (
                    names::mcp(UNNAMED_SERVER, tool),
                    Some(UNNAMED_SERVER.to_owned()),
                    input,
                )
            } else if let Some((_, local)) = LOCAL.iter().find(|(n, _)| *n == native) {
                ((*local).to_owned(), None, input)
            } else {
                (native, None, input)
            }
        }
    };
    Ok(ToolCall {
        host: Host::Cursor,
        session: text("conversation_id"),
        change: text("tool_use_id"),
        tool,
        server,
        input,
        event,
        cwd: crate::host::working_directory(&payload),
        server_hint,
    })
}

/// Renders a decision in Cursor's schema (both field spellings).
pub(crate) fn render(decision: &Decision) -> Rendered {
    let decide = |kind: &str, reason: &str| {
        Rendered::json(&json!({
            "permission": kind,
            "decision": kind,
            "user_message": reason,
            "agent_message": reason,
            "reason": reason,
        }))
    };
    match decision {
        Decision::None => Rendered::json(&json!({})),
        Decision::Context(text) | Decision::Allow { context: text, .. } => {
            Rendered::json(&json!({"user_message": text, "agent_message": text}))
        }
        Decision::Deny(reason) => decide("deny", reason),
        Decision::Ask(reason) => decide("deny", &names::ask_as_deny(reason, "Cursor")),
        Decision::Block(line) => Rendered::block(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMON: &str = r#""conversation_id":"c0ffee00-1111","generation_id":"g1","model":"m","cursor_version":"1.7.2","workspace_roots":["/p"],"user_email":"u@example.com","transcript_path":null"#;

    #[test]
    fn reads_a_shell_event_as_bash() {
        let call = read(format!(r#"{{{COMMON},"hook_event_name":"beforeShellExecution","command":"ssh web01 reboot","cwd":"/p"}}"#).as_bytes())
            .expect("reads");
        assert_eq!(call.host, Host::Cursor);
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.input, json!({"command": "ssh web01 reboot"}));
        assert_eq!(call.caller().agent(), "cursor/c0ffee00");
        assert_eq!(call.event, Event::BeforeTool);
    }

    #[test]
    fn reads_an_mcp_event_with_its_input_as_a_json_string() {
        let call = read(format!(r#"{{{COMMON},"hook_event_name":"beforeMCPExecution","tool_name":"exec","tool_input":"{{\"host\":\"web01\"}}","command":"npx ssh-mcp"}}"#).as_bytes())
            .expect("reads");
        assert_eq!(call.tool, "mcp__unnamed__exec");
        assert_eq!(call.server.as_deref(), Some(UNNAMED_SERVER));
        assert_eq!(call.input, json!({"host": "web01"}));
    }

    #[test]
    fn reads_pre_tool_use_names() {
        for (native, neutral) in [
            ("Shell", "Bash"),
            ("MCP:exec", "mcp__unnamed__exec"),
            ("Read", "Read"),
            ("Delete", "Write"),
            ("Mystery", "Mystery"),
        ] {
            let payload = format!(
                r#"{{{COMMON},"hook_event_name":"preToolUse","tool_name":"{native}","tool_input":{{"command":"ls"}},"tool_use_id":"tu1"}}"#
            );
            let call = read(payload.as_bytes()).expect("reads");
            assert_eq!(call.tool, neutral);
            assert_eq!(call.change.as_deref(), Some("tu1"));
        }
    }

    #[test]
    fn only_the_documented_event_names_are_read() {
        let payload = format!(
            r#"{{{COMMON},"hook_event_name":"PreToolUse","tool_name":"Shell","tool_input":{{}}}}"#
        );
        assert_eq!(
            read(payload.as_bytes()).expect("reads").event,
            Event::Unknown("PreToolUse".into())
        );
        let shell_without_command =
            format!(r#"{{{COMMON},"hook_event_name":"beforeShellExecution"}}"#);
        assert_eq!(
            read(shell_without_command.as_bytes()).unwrap_err(),
            Unreadable::NoToolName
        );
    }

    #[test]
    fn json_that_is_not_an_object_is_named_for_what_it_is() {
        assert_eq!(
            read(b"[1,2]").unwrap_err(),
            Unreadable::NotObject("a JSON array")
        );
        assert_eq!(
            read(b"null").unwrap_err(),
            Unreadable::NotObject("JSON null")
        );
        assert!(matches!(
            read(b"{nope").unwrap_err(),
            Unreadable::NotJson(_)
        ));
    }

    #[test]
    fn an_ask_is_a_deny_in_both_spellings() {
        let rendered = render(&Decision::Ask(
            "rewind: VM web01 is unknown to Zerto.".into(),
        ));
        let out: Value =
            serde_json::from_str(rendered.stdout.as_deref().expect("json")).expect("json");
        assert_eq!(out["permission"], "deny");
        assert_eq!(out["decision"], "deny");
        assert!(
            out["agent_message"]
                .as_str()
                .expect("text")
                .contains("a human must run this call")
        );
    }
}
