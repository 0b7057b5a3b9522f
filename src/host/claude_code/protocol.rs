//! Claude Code's PreToolUse protocol: the JSON it sends on stdin, the JSON it accepts back.
//! Measured on the real host: unknown fields must be tolerated (the host adds them between
//! versions), and the decision must sit inside `hookSpecificOutput`.
//!
//! Events read: exactly `PreToolUse` and `PostToolUse`. Any other spelling (`preToolUse`,
//! `"PreToolUse "`, Gemini's `BeforeTool`, an empty or missing name) is an unknown event.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::decision::Decision;
use crate::host::{Host, Rendered, ToolCall, Unreadable, precheck, short};

/// The fields of a hook call `rewind` reads; everything else is ignored.
#[derive(Debug, Clone, Deserialize)]
struct HookInput {
    #[serde(default)]
    session_id: Option<String>,
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    mcp_server: Option<McpServer>,
    /// Any JSON: a `cwd` of an odd type is ignored, never a reason to refuse the payload.
    #[serde(default)]
    cwd: Value,
}

#[derive(Debug, Clone, Deserialize)]
struct McpServer {
    name: Option<String>,
}

/// Whether a payload is Claude Code's: it sends `permission_mode` with every hook call, and
/// its tool call ids start with `toolu_`.
pub(crate) fn fingerprint(payload: &Map<String, Value>) -> bool {
    payload.contains_key("permission_mode")
        || payload
            .get("tool_use_id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with("toolu_"))
}

/// Reads the bytes from stdin (at most `MAX_INPUT + 1`) as a call.
pub(crate) fn read(bytes: &[u8]) -> Result<ToolCall, Unreadable> {
    if let Err(e) = precheck(bytes) {
        // After the call nothing can be refused: an odd PostToolUse payload gets no answer.
        return Err(if is_after_the_call(bytes) {
            Unreadable::AfterTheCall
        } else {
            e
        });
    }
    // The event apart: a payload naming two (see `payload`) is read, and the event is unknown.
    let (input, event_name) = match crate::host::payload(bytes) {
        Ok(mut map) => {
            let event_name = map.remove("hook_event_name");
            match serde_json::from_value::<HookInput>(Value::Object(map)) {
                Ok(input) => (input, event_name),
                Err(_) if is_after_the_call(bytes) => return Err(Unreadable::AfterTheCall),
                Err(e) => return Err(Unreadable::NotJson(short(&e.to_string()))),
            }
        }
        Err(_) if is_after_the_call(bytes) => return Err(Unreadable::AfterTheCall),
        Err(e) => return Err(e),
    };
    let tool = match input.tool_name {
        Some(name) if !name.trim().is_empty() => name,
        _ if is_after_the_call(bytes) => return Err(Unreadable::AfterTheCall),
        _ => return Err(Unreadable::NoToolName),
    };
    let event = crate::host::event(event_name.as_ref(), "PreToolUse", "PostToolUse");
    Ok(ToolCall {
        host: Host::ClaudeCode,
        session: input.session_id,
        change: input.tool_use_id,
        tool,
        server: input.mcp_server.and_then(|s| s.name),
        input: input.tool_input,
        event,
        cwd: input
            .cwd
            .as_str()
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_absolute()),
        server_hint: None,
    })
}

/// Whether stdin is a PostToolUse call (the tool already ran), judged from the raw bytes so
/// that an oversize payload is recognised too. Only a `hook_event_name` that comes before
/// `tool_input` counts: the host writes it there, and the agent controls what is inside
/// `tool_input`. Anything else is not "after the call" and is refused as usual.
pub(crate) fn is_after_the_call(stdin: &[u8]) -> bool {
    let find = |needle: &[u8]| stdin.windows(needle.len()).position(|w| w == needle);
    let key: &[u8] = br#""hook_event_name":"#;
    match (
        find(br#""hook_event_name":"PostToolUse""#),
        find(br#""tool_input":"#),
    ) {
        // Exactly one event name in the whole payload, before the input: a payload that names
        // two (which the host never writes) is not trusted to be after the call, whichever
        // comes first and wherever the second one is.
        (Some(event), Some(input)) => {
            event < input && stdin.windows(key.len()).filter(|w| *w == key).count() == 1
        }
        _ => false,
    }
}

/// Renders a decision in Claude Code's schema.
pub(crate) fn render(decision: &Decision) -> Rendered {
    let decide = |kind: &str, reason: &str| {
        Rendered::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": kind,
                "permissionDecisionReason": reason,
            }
        }))
    };
    match decision {
        Decision::None => Rendered::json(&json!({})),
        Decision::Context(context) => Rendered::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": context,
            }
        })),
        Decision::Allow { reason, context } => Rendered::json(&json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": reason,
                "additionalContext": context,
            }
        })),
        Decision::Deny(reason) => decide("deny", reason),
        Decision::Ask(reason) => decide("ask", reason),
        Decision::Block(line) => Rendered::block(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Event;
    use crate::host::MAX_INPUT;

    #[test]
    fn reads_the_measured_claude_code_payload() {
        let call = read(
            br#"{"session_id":"bca1211f-aaaa","transcript_path":"/t.jsonl","cwd":"/tmp/proj",
            "prompt_id":"2f96","permission_mode":"default","effort":{"level":"medium"},
            "hook_event_name":"PreToolUse","tool_name":"mcp__ssh__exec",
            "tool_input":{"host":"jp-ubuntu","command":"sudo sed -i s/a/b/ /etc/app.conf"},
            "tool_use_id":"toolu_01AAA","mcp_server":{"name":"ssh","source":"project"}}"#,
        )
        .expect("parses");
        assert_eq!(call.tool, "mcp__ssh__exec");
        assert_eq!(call.server.as_deref(), Some("ssh"));
        assert_eq!(call.caller().agent(), "claude-code/bca1211f");
        assert_eq!(call.input["host"], "jp-ubuntu");
        assert_eq!(call.event, Event::BeforeTool);
    }

    #[test]
    fn only_the_exact_event_names_are_read() {
        for (event, expected) in [
            (r#""PreToolUse""#, Event::BeforeTool),
            (r#""PostToolUse""#, Event::AfterTool),
            (r#""preToolUse""#, Event::Unknown("preToolUse".into())),
            (r#""BeforeTool""#, Event::Unknown("BeforeTool".into())),
            (r#""PreToolUse ""#, Event::Unknown("PreToolUse ".into())),
            (r#""""#, Event::Unknown(String::new())),
            ("null", Event::Unknown(String::new())),
        ] {
            let payload = format!(
                r#"{{"permission_mode":"default","hook_event_name":{event},"tool_name":"mcp__ssh__exec","tool_input":{{}}}}"#
            );
            assert_eq!(
                read(payload.as_bytes()).expect("reads").event,
                expected,
                "{event}"
            );
        }
    }

    #[test]
    fn bad_input_is_refused_with_a_reason() {
        assert_eq!(read(b"").unwrap_err(), Unreadable::Empty);
        assert_eq!(read(b" \n").unwrap_err(), Unreadable::Empty);
        assert_eq!(
            read(br#"{"tool_input":{}}"#).unwrap_err(),
            Unreadable::NoToolName
        );
        assert!(matches!(
            read(b"{nope").unwrap_err(),
            Unreadable::NotJson(_)
        ));
        assert_eq!(
            read(b"[1,2]").unwrap_err(),
            Unreadable::NotObject("a JSON array")
        );
        assert_eq!(
            read(b"\"mcp__ssh__exec\"").unwrap_err(),
            Unreadable::NotObject("a JSON string")
        );
        assert_eq!(
            read(&vec![b' '; MAX_INPUT + 1]).unwrap_err(),
            Unreadable::TooLarge
        );
    }

    #[test]
    fn two_event_names_are_an_unknown_event_not_read_as_after_the_call() {
        for payload in [
            br#"{"hook_event_name":"PreToolUse","hook_event_name":"PostToolUse","permission_mode":"default","tool_name":"mcp__ssh__exec","tool_input":{}}"#.as_slice(),
            br#"{"hook_event_name":"PostToolUse","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"mcp__ssh__exec","tool_input":{}}"#,
            br#"{"hook_event_name":"PostToolUse","permission_mode":"default","tool_name":"mcp__ssh__exec","tool_input":{},"hook_event_name":"PreToolUse"}"#,
        ] {
            assert!(!is_after_the_call(payload));
            let event = read(payload).expect("reads").event;
            assert!(
                matches!(&event, Event::Unknown(names) if names.contains("two event names")),
                "{event:?}"
            );
        }
    }

    #[test]
    fn a_post_tool_use_call_is_recognised_even_when_oversize() {
        let mut big =
            br#"{"hook_event_name":"PostToolUse","tool_name":"mcp__ssh__exec","tool_input":{},"tool_response":""#
                .to_vec();
        big.extend(vec![b'x'; MAX_INPUT + 10]);
        assert!(is_after_the_call(&big));
        assert_eq!(read(&big).unwrap_err(), Unreadable::AfterTheCall);
        assert!(!is_after_the_call(br#"{"hook_event_name":"PreToolUse"}"#));
        // The agent cannot smuggle the event in through its own arguments.
        let mut forged = br#"{"hook_event_name":"PreToolUse","tool_name":"mcp__ssh__exec","tool_input":{"hook_event_name":"PostToolUse","x":""#.to_vec();
        forged.extend(vec![b'x'; MAX_INPUT + 10]);
        assert!(!is_after_the_call(&forged));
        assert_eq!(read(&forged).unwrap_err(), Unreadable::TooLarge);
    }
}
