//! Claude Code's PreToolUse protocol: the JSON it sends on stdin, the JSON it accepts back.
//! Measured on the real host: unknown fields must be tolerated (the host adds them between
//! versions), and the decision must sit inside `hookSpecificOutput`.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::decision::Decision;

/// Largest stdin accepted; a larger payload is refused rather than truncated.
pub const MAX_INPUT: usize = 1024 * 1024;

/// The fields of a hook call `rewind` reads; everything else is ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub mcp_server: Option<McpServer>,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct McpServer {
    pub name: Option<String>,
}

/// Why stdin is not a usable hook call (each becomes exit 2 with one line on stderr).
#[derive(Debug, PartialEq, Eq)]
pub enum InputError {
    Empty,
    TooLarge,
    NotJson(String),
    NoToolName,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("rewind: empty hook input on stdin; refusing the call"),
            Self::TooLarge => write!(
                f,
                "rewind: hook input is larger than {} KiB; refusing the call",
                MAX_INPUT / 1024
            ),
            Self::NotJson(e) => {
                write!(f, "rewind: hook input is not JSON ({e}); refusing the call")
            }
            Self::NoToolName => {
                f.write_str("rewind: hook input has no tool_name; refusing the call")
            }
        }
    }
}

/// Parses the bytes read from stdin (at most `MAX_INPUT + 1`).
pub fn parse(bytes: &[u8]) -> Result<HookInput, InputError> {
    if bytes.len() > MAX_INPUT {
        return Err(InputError::TooLarge);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError::Empty);
    }
    let input: HookInput = serde_json::from_slice(bytes).map_err(|e| {
        let mut text = e.to_string();
        text.truncate(120);
        InputError::NotJson(text)
    })?;
    match &input.tool_name {
        Some(name) if !name.trim().is_empty() => Ok(input),
        _ => Err(InputError::NoToolName),
    }
}

/// Whether stdin is a PostToolUse call (the tool already ran), judged from the raw bytes so
/// that an oversize payload is recognised too. Only a `hook_event_name` that comes before
/// `tool_input` counts: the host writes it there, and the agent controls what is inside
/// `tool_input`. Anything else is not "after the call" and is refused as usual.
pub fn is_after_the_call(stdin: &[u8]) -> bool {
    let find = |needle: &[u8]| stdin.windows(needle.len()).position(|w| w == needle);
    match (
        find(br#""hook_event_name":"PostToolUse""#),
        find(br#""tool_input":"#),
    ) {
        (Some(event), Some(input)) => event < input,
        _ => false,
    }
}

impl HookInput {
    /// The tool name (checked non-empty by [`parse`]).
    pub fn tool(&self) -> &str {
        self.tool_name.as_deref().unwrap_or_default()
    }

    /// `mcp_server.name` when the host sent it.
    pub fn server_hint(&self) -> Option<&str> {
        self.mcp_server.as_ref().and_then(|s| s.name.as_deref())
    }

    /// `claude-code/<first 8 characters of the session id>`, for the checkpoint tag.
    pub fn agent(&self) -> String {
        let session: String = self
            .session_id
            .as_deref()
            .unwrap_or("nosession")
            .chars()
            .take(8)
            .collect();
        format!("claude-code/{session}")
    }
}

/// What the process writes and returns for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub code: u8,
}

/// Renders a decision in Claude Code's schema.
pub fn render(decision: &Decision) -> Rendered {
    let json = |value: Value| Rendered {
        stdout: Some(value.to_string()),
        stderr: None,
        code: 0,
    };
    let decide = |kind: &str, reason: &str| {
        json(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": kind,
                "permissionDecisionReason": reason,
            }
        }))
    };
    match decision {
        Decision::None => json(json!({})),
        Decision::Context(context) => json(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": context,
            }
        })),
        Decision::Allow { reason, context } => json(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": reason,
                "additionalContext": context,
            }
        })),
        Decision::Deny(reason) => decide("deny", reason),
        Decision::Ask(reason) => decide("ask", reason),
        Decision::Block(line) => Rendered {
            stdout: None,
            stderr: Some(one_line(line)),
            code: 2,
        },
    }
}

/// Folds text onto one line (the host shows only the first line of stderr).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_measured_claude_code_payload() {
        let input = parse(
            br#"{"session_id":"bca1211f-aaaa","transcript_path":"/t.jsonl","cwd":"/tmp/proj",
            "prompt_id":"2f96","permission_mode":"default","effort":{"level":"medium"},
            "hook_event_name":"PreToolUse","tool_name":"mcp__ssh__exec",
            "tool_input":{"host":"jp-ubuntu","command":"sudo sed -i s/a/b/ /etc/app.conf"},
            "tool_use_id":"toolu_01AAA","mcp_server":{"name":"ssh","source":"project"}}"#,
        )
        .expect("parses");
        assert_eq!(input.tool(), "mcp__ssh__exec");
        assert_eq!(input.server_hint(), Some("ssh"));
        assert_eq!(input.agent(), "claude-code/bca1211f");
        assert_eq!(input.tool_input["host"], "jp-ubuntu");
    }

    #[test]
    fn bad_input_is_refused_with_a_reason() {
        assert_eq!(parse(b"").unwrap_err(), InputError::Empty);
        assert_eq!(parse(b" \n").unwrap_err(), InputError::Empty);
        assert_eq!(
            parse(br#"{"tool_input":{}}"#).unwrap_err(),
            InputError::NoToolName
        );
        assert!(matches!(
            parse(b"{nope").unwrap_err(),
            InputError::NotJson(_)
        ));
        assert_eq!(
            parse(&vec![b' '; MAX_INPUT + 1]).unwrap_err(),
            InputError::TooLarge
        );
    }

    #[test]
    fn a_post_tool_use_call_is_recognised_even_when_oversize() {
        let mut big =
            br#"{"hook_event_name":"PostToolUse","tool_name":"mcp__ssh__exec","tool_input":{},"tool_response":""#
                .to_vec();
        big.extend(vec![b'x'; MAX_INPUT + 10]);
        assert!(is_after_the_call(&big));
        assert_eq!(parse(&big).unwrap_err(), InputError::TooLarge);
        assert!(!is_after_the_call(br#"{"hook_event_name":"PreToolUse"}"#));
        // The agent cannot smuggle the event in through its own arguments.
        let mut forged = br#"{"hook_event_name":"PreToolUse","tool_name":"mcp__ssh__exec","tool_input":{"hook_event_name":"PostToolUse","x":""#.to_vec();
        forged.extend(vec![b'x'; MAX_INPUT + 10]);
        assert!(!is_after_the_call(&forged));
    }

    #[test]
    fn block_is_exit_2_with_one_stderr_line() {
        let r = render(&Decision::Block("a\nb".into()));
        assert_eq!(
            r,
            Rendered {
                stdout: None,
                stderr: Some("a b".into()),
                code: 2
            }
        );
    }
}
