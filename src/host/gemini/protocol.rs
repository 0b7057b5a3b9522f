//! Gemini CLI's `BeforeTool` protocol. Measured on Gemini CLI 0.61.0 (`docs/hosts.md`):
//!
//! - stdin: `hook_event_name: "BeforeTool"`, `tool_name`, `tool_input`, an ISO `timestamp`,
//!   no call id. MCP tools arrive as `mcp_<server>_<tool>` (ambiguous when either part has an
//!   `_`) with `mcp_context.server_name` and `mcp_context.tool_name`, which are read instead.
//!   The shell tool is `run_shell_command` with a string `command`.
//! - stdout: `{"decision": "deny", "reason": …}` blocks and the model reads the reason.
//!   JSON on stdout decides whatever the exit code; exit 2 with text on stderr blocks.
//! - What it cannot say: before the call there is no channel to the model, so the checkpoint
//!   and the recover command go to the user as `systemMessage`. `ask` has no effect on a call
//!   the settings allow, so an ask is rendered as a deny saying a human must run or approve
//!   it. `allow` changes nothing (the host's policy still runs): rendered as the context.
//! - It fails open when the hook times out (its `timeout` is in milliseconds).
//!
//! Events read: exactly `BeforeTool` and `AfterTool`.

use serde_json::{Map, Value, json};

use crate::decision::Decision;
use crate::host::names;
use crate::host::{Host, Rendered, ToolCall, Unreadable, event, payload, text, tool_name};

/// Gemini's own tools that only touch the local machine, by the neutral name the catalog
/// knows as local.
const LOCAL: &[(&str, &str)] = &[
    ("read_file", "Read"),
    ("read_many_files", "Read"),
    ("write_file", "Write"),
    ("replace", "Edit"),
    ("glob", "Glob"),
    ("grep_search", "Grep"),
    ("search_file_content", "Grep"),
    ("list_directory", "LS"),
    ("web_fetch", "WebFetch"),
    ("google_web_search", "WebSearch"),
    ("write_todos", "TodoWrite"),
    ("save_memory", "TodoWrite"),
    ("ask_user", "AskUserQuestion"),
];

/// Whether a payload is Gemini CLI's: it sends `mcp_context` for MCP tools, and only it sends
/// a `timestamp` beside a `transcript_path` (and no `permission_mode`). The event name alone
/// never decides: a wrong event in another host's payload must reach that host's dialect.
pub(crate) fn fingerprint(payload: &Map<String, Value>) -> bool {
    let has = |key: &str| payload.contains_key(key);
    has("mcp_context") || (has("timestamp") && has("transcript_path") && !has("permission_mode"))
}

/// Reads the bytes from stdin as a call.
pub(crate) fn read(bytes: &[u8]) -> Result<ToolCall, Unreadable> {
    let payload = payload(bytes)?;
    let native = tool_name(&payload, "tool_name")?;
    let event = event(payload.get("hook_event_name"), "BeforeTool", "AfterTool");
    let args = payload.get("tool_input").cloned().unwrap_or(Value::Null);
    let mcp = payload
        .get("mcp_context")
        .and_then(Value::as_object)
        .and_then(|c| match (text(c, "server_name"), text(c, "tool_name")) {
            (Some(server), Some(tool)) if !server.is_empty() && !tool.is_empty() => {
                Some((server, tool))
            }
            _ => None,
        });
    let (tool, server, input) = if let Some((server, tool)) = mcp {
        (names::mcp(&server, &tool), Some(server), args)
    } else if native == "run_shell_command" {
        ("Bash".to_owned(), None, names::shell_input(args, "command"))
    } else if let Some((_, neutral)) = LOCAL.iter().find(|(n, _)| *n == native) {
        ((*neutral).to_owned(), None, args)
    } else {
        // An `mcp_…` name without `mcp_context` cannot be split safely: it stays as sent, and
        // the catalog treats it as unlisted (an ask).
        (native, None, args)
    };
    Ok(ToolCall {
        host: Host::Gemini,
        session: text(&payload, "session_id"),
        change: None,
        tool,
        server,
        input,
        event,
        cwd: crate::host::working_directory(&payload),
        server_hint: None,
    })
}

/// Renders a decision in Gemini CLI's schema.
pub(crate) fn render(decision: &Decision) -> Rendered {
    let answer = |reason: &str| json!({"decision": "deny", "reason": reason});
    let deny = |reason: &str| Rendered::json(&answer(reason));
    match decision {
        Decision::None => Rendered::json(&json!({})),
        Decision::Context(text) | Decision::Allow { context: text, .. } => {
            Rendered::json(&json!({"systemMessage": text}))
        }
        Decision::Deny(reason) => deny(reason),
        Decision::Ask(reason) => deny(&names::ask_as_deny(reason, "Gemini CLI")),
        // Exit 2 with nothing on stderr (a closed one) runs the call; JSON on stdout decides
        // whatever the exit code.
        Decision::Block(line) => Rendered::block_with(line, answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Event;

    const RECORDED: &str = r#"{"session_id":"1f041d3f-72c0-4e30-8fca-3cffbf99bb99","transcript_path":"/h/.gemini/tmp/p/chats/s.jsonl","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-12-01T04:18:12.553Z","tool_name":"mcp_ssh_exec","tool_input":{"host":"jp-ubuntu","command":"touch /etc/x"},"mcp_context":{"server_name":"ssh","tool_name":"exec","command":"node","args":["mcp-stub.mjs"]}}"#;

    #[test]
    fn reads_the_recorded_mcp_call_by_its_context_not_its_name() {
        let call = read(RECORDED.as_bytes()).expect("reads");
        assert_eq!(call.host, Host::Gemini);
        assert_eq!(call.tool, "mcp__ssh__exec");
        assert_eq!(call.server.as_deref(), Some("ssh"));
        assert_eq!(call.change, None);
        assert_eq!(call.caller().agent(), "gemini/1f041d3f");
        assert_eq!(call.event, Event::BeforeTool);
    }

    #[test]
    fn underscores_in_server_and_tool_names_are_taken_from_mcp_context() {
        let payload = json!({"hook_event_name": "BeforeTool", "tool_name": "mcp_prod_ssh_run_cmd",
            "tool_input": {}, "mcp_context": {"server_name": "prod_ssh", "tool_name": "run_cmd"}});
        let call = read(payload.to_string().as_bytes()).expect("reads");
        assert_eq!(call.tool, "mcp__prod_ssh__run_cmd");
        assert_eq!(call.server.as_deref(), Some("prod_ssh"));
    }

    #[test]
    fn the_shell_and_local_tools_get_their_neutral_names() {
        for (native, neutral) in [
            ("run_shell_command", "Bash"),
            ("write_file", "Write"),
            ("replace", "Edit"),
            ("read_file", "Read"),
        ] {
            let payload = json!({"hook_event_name": "BeforeTool", "tool_name": native, "tool_input": {"command": "ls"}});
            assert_eq!(
                read(payload.to_string().as_bytes()).expect("reads").tool,
                neutral
            );
        }
        let unknown =
            json!({"hook_event_name": "BeforeTool", "tool_name": "mcp_a_b_c", "tool_input": {}});
        assert_eq!(
            read(unknown.to_string().as_bytes()).expect("reads").tool,
            "mcp_a_b_c"
        );
    }

    #[test]
    fn only_the_exact_event_names_are_read() {
        for (event, expected) in [
            ("BeforeTool", Event::BeforeTool),
            ("AfterTool", Event::AfterTool),
            ("PreToolUse", Event::Unknown("PreToolUse".into())),
            ("beforeTool", Event::Unknown("beforeTool".into())),
        ] {
            let payload = json!({"hook_event_name": event, "tool_name": "run_shell_command", "tool_input": {}});
            assert_eq!(
                read(payload.to_string().as_bytes()).expect("reads").event,
                expected
            );
        }
    }

    #[test]
    fn the_checkpoint_goes_to_the_user_and_an_ask_is_a_deny() {
        let rendered = render(&Decision::Context("checkpoint rewind-1".into()));
        assert_eq!(
            rendered.stdout.as_deref(),
            Some(r#"{"systemMessage":"checkpoint rewind-1"}"#)
        );
        let rendered = render(&Decision::Ask(
            "rewind: VM web01 is unknown to Zerto.".into(),
        ));
        let out: Value =
            serde_json::from_str(rendered.stdout.as_deref().expect("json")).expect("json");
        assert_eq!(out["decision"], "deny");
        assert!(
            out["reason"]
                .as_str()
                .expect("reason")
                .contains("a human must run this call")
        );
    }
}
