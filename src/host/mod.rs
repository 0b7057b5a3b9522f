//! Agent hosts and their hook dialects: the only part of `rewind` that reads or writes a
//! host's words.
//!
//! A dialect turns the bytes a host writes on the hook's stdin into one neutral `ToolCall`,
//! and one neutral `Decision` back into what that host reads (stdout JSON and an exit
//! code). Everything past the dialect (classification, targets, the guard, the decision
//! table, the audit trail) sees only those two types. Which host called stays in
//! `ToolCall::host`, and past the dialect it is only a name: the tag's agent and the audit
//! trail's `host` field show it, and the hook hands the decision back to that host's
//! dialect. Two parts still know hosts by more than a name: the shipped catalog names
//! the host tools by Claude Code's names (`Bash`, `Edit`, …, which the other dialects
//! rename theirs to), and `install`, `doctor` and the self-protection know each host's
//! settings files ([`settings`]).
//!
//! # What a dialect provides
//!
//! A dialect is one module `host/<name>/protocol.rs` with three functions, wired in by one
//! arm in each `match` of `Host` below:
//!
//! - `fingerprint(&serde_json::Map<String, Value>) -> bool`: whether a parsed payload is
//!   unmistakably this host's (used by `detect` when `--host` is absent). Look at fields
//!   only that host sends; never at the event name alone, since a wrong event must still
//!   reach the dialect that can refuse it. It sees the top level only: each key, with its
//!   value when that is a string and `null` when it is anything else.
//! - `read(&[u8]) -> Result<ToolCall, Unreadable>`: the payload as a call. Read only the exact
//!   event names the host documents; any other event that names a tool becomes
//!   `Event::Unknown` (the decision table denies it), a payload with no tool is
//!   `Unreadable::NoToolName`. Tolerate unknown fields: hosts add them between versions.
//! - `render(&Decision) -> Rendered`: the decision in the host's schema, with the exit code.
//!   A host with no `ask` renders `Decision::Ask` as a deny whose reason says a human must
//!   run or approve the call in a host that can ask. A host with no context channel puts the
//!   checkpoint and the recover command of `Decision::Context` where it shows text to the
//!   model (the reason) or the user (stderr on exit 0), and renders "no decision" the way that
//!   host spells it. `Decision::Block` is exit 2 with one line on stderr
//!   (`Rendered::block`); where a closed stderr would let the call run, the host's own deny
//!   goes on stdout too (Gemini, Copilot: `Rendered::block_with`), or instead with exit 0
//!   (Codex, which reads no stdout on exit 2).
//!
//! A host without a dialect yet is refused at `Host::read` (exit 2 with a line saying so),
//! never passed.

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
mod names;
pub(crate) mod servers;
pub mod settings;

use serde_json::Value;

use crate::decision::Decision;

// Why stdin is refused and how much of it is read: refusals the decision table words, so they
// live there (a dialect renders decisions; the decision table knows no dialect).
pub(crate) use crate::decision::{MAX_INPUT, Unreadable};

/// The agent hosts `rewind hook --host` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Cursor (agent and CLI).
    Cursor,
}

impl Host {
    /// The name used in `--host`, checkpoint tags and the audit trail.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Copilot => "copilot",
            Self::Cursor => "cursor",
        }
    }

    /// This host's settings files: where `install` writes, what `doctor` reads back.
    pub fn settings(self) -> &'static settings::Layout {
        match self {
            Self::ClaudeCode => &claude_code::settings::LAYOUT,
            Self::Codex => &codex::settings::LAYOUT,
            Self::Gemini => &gemini::settings::LAYOUT,
            Self::Copilot => &copilot::settings::LAYOUT,
            Self::Cursor => &cursor::settings::LAYOUT,
        }
    }

    /// Every host, in the order `doctor` reports them.
    pub const ALL: [Host; 5] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::Gemini,
        Self::Copilot,
        Self::Cursor,
    ];

    /// Reads a payload in this host's dialect.
    pub(crate) fn read(self, stdin: &[u8]) -> Result<ToolCall, Unreadable> {
        match self {
            Self::ClaudeCode => claude_code::protocol::read(stdin),
            Self::Codex => codex::protocol::read(stdin),
            Self::Gemini => gemini::protocol::read(stdin),
            Self::Copilot => copilot::protocol::read(stdin),
            Self::Cursor => cursor::protocol::read(stdin),
        }
    }

    /// Writes a decision in this host's dialect.
    pub(crate) fn render(self, decision: &Decision) -> Rendered {
        match self {
            Self::ClaudeCode => claude_code::protocol::render(decision),
            Self::Codex => codex::protocol::render(decision),
            Self::Gemini => gemini::protocol::render(decision),
            Self::Copilot => copilot::protocol::render(decision),
            Self::Cursor => cursor::protocol::render(decision),
        }
    }

    /// Whether a parsed payload carries this host's fingerprint.
    fn fingerprint(self, payload: &serde_json::Map<String, Value>) -> bool {
        match self {
            Self::ClaudeCode => claude_code::protocol::fingerprint(payload),
            Self::Cursor => cursor::protocol::fingerprint(payload),
            Self::Codex => codex::protocol::fingerprint(payload),
            Self::Gemini => gemini::protocol::fingerprint(payload),
            Self::Copilot => copilot::protocol::fingerprint(payload),
        }
    }
}

/// Which host wrote `stdin`, when `--host` is absent: the first whose fingerprint matches.
/// `None` when the bytes are not a JSON object or no host's fingerprint matches.
pub(crate) fn detect(stdin: &[u8]) -> Option<Host> {
    if stdin.len() > MAX_INPUT {
        // Too large to parse; only a Claude Code after-the-call payload is worth naming.
        return claude_code::protocol::is_after_the_call(stdin).then_some(Host::ClaudeCode);
    }
    let Ok(Top(payload)) = serde_json::from_slice::<Top>(stdin) else {
        return None;
    };
    fingerprinted(&payload)
}

/// The first host whose fingerprint a parsed payload carries, most specific first: Cursor
/// and Copilot may run hooks configured for Claude Code.
fn fingerprinted(payload: &serde_json::Map<String, Value>) -> Option<Host> {
    [
        Host::Cursor,
        Host::Copilot,
        Host::Codex,
        Host::Gemini,
        Host::ClaudeCode,
    ]
    .into_iter()
    .find(|host| host.fingerprint(payload))
}

/// A JSON object's top level as fingerprints see it: every key (the last of repeated ones
/// wins, as in a `Value`), a string value kept and any other value `null`. What is below
/// the top level is stepped over, not built: the dialect reads the payload again in full.
struct Top(serde_json::Map<String, Value>);

/// A top-level value as [`Top`] keeps it.
struct Shallow(Value);

impl<'de> serde::Deserialize<'de> for Top {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Top;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
                let mut top = serde_json::Map::new();
                while let Some((key, Shallow(value))) = map.next_entry::<String, Shallow>()? {
                    top.insert(key, value);
                }
                Ok(Top(top))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl<'de> serde::Deserialize<'de> for Shallow {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Shallow;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_str<E>(self, text: &str) -> Result<Shallow, E> {
                Ok(Shallow(Value::String(text.to_owned())))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_unit<E>(self) -> Result<Shallow, E> {
                Ok(Shallow(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Shallow, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Shallow(Value::Null))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Shallow, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Shallow(Value::Null))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// When the host calls the hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// Before the tool runs: the call to decide on.
    BeforeTool,
    /// After the tool ran: nothing to decide, the audit trail notes that it ran.
    AfterTool,
    /// An event name the dialect does not know, exactly as sent.
    Unknown(String),
}

/// The working directory a payload names: `cwd`, else the first of Cursor's
/// `workspace_roots`; only an absolute path counts.
pub(crate) fn working_directory(
    payload: &serde_json::Map<String, Value>,
) -> Option<std::path::PathBuf> {
    payload
        .get("cwd")
        .and_then(Value::as_str)
        .or_else(|| {
            payload
                .get("workspace_roots")
                .and_then(Value::as_array)
                .and_then(|roots| roots.first())
                .and_then(Value::as_str)
        })
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// One tool call, in no host's words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub(crate) host: Host,
    /// The host's session id, if it sent one.
    pub(crate) session: Option<String>,
    /// The host's id for this call (`tool_use_id`): the change id in tags and recover.
    pub(crate) change: Option<String>,
    /// The tool name as the host sent it (`mcp__ssh__exec`, `Bash`).
    pub(crate) tool: String,
    /// The MCP server, when the host names it separately from the tool.
    pub(crate) server: Option<String>,
    /// The tool's arguments.
    pub(crate) input: Value,
    pub(crate) event: Event,
    /// The directory the call runs in, as the host sends it (`cwd`): relative paths in a
    /// command (`ssh -F ./ssh.cfg`, `-i inventory`) are read from there.
    pub(crate) cwd: Option<std::path::PathBuf>,
    /// What the host says about the MCP server where it does not name it plainly (Copilot's
    /// `<server>-<tool>`, Cursor's command or URL): [`servers::name_server`] names it.
    pub(crate) server_hint: Option<servers::ServerHint>,
}

impl ToolCall {
    /// Who asks for this call's checkpoints: the host, in the call's session (the agent
    /// field of a checkpoint tag, [`crate::guard::Change::agent`]).
    pub(crate) fn caller(&self) -> crate::guard::Caller {
        crate::guard::Caller::Hook {
            host: self.host,
            session: self.session.clone(),
        }
    }

    /// The change id, or one made up for this process when the host sent none
    /// ([`made_up_change_id`]).
    pub(crate) fn change_id(&self) -> String {
        self.change.clone().unwrap_or_else(made_up_change_id)
    }
}

/// The change id of a call whose host sends none (Gemini, Copilot), the same for the whole
/// process: `rewind-<UTC time to the second>-<16 random hex digits>`. Unique across
/// processes, so `rewind recover --change` never finds the checkpoint of another call, as it
/// could with a process id, which the system reuses.
pub(crate) fn made_up_change_id() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let at = crate::time::format_utc(std::time::SystemTime::now()).replace(['-', ':'], "");
        format!(
            "rewind-{at}-{}",
            uuid::Uuid::new_v4()
                .simple()
                .to_string()
                .get(..16)
                .unwrap_or_default()
        )
    })
    .clone()
}

/// The payload every dialect reads: size and emptiness checked, then parsed as one JSON object.
/// Bytes that are not JSON are `NotJson`; JSON that is not an object (`[1,2]`, `"text"`) is
/// `NotObject`, naming what it is.
///
/// A key the object names twice (which no host writes) reads as the list of all its values,
/// in order, which no field of a hook payload accepts: two event names are an unknown event
/// (a deny), two tool names no tool name, whichever of them comes first. A JSON parser keeps
/// only one of them, and which one differs between readers.
pub(crate) fn payload(stdin: &[u8]) -> Result<serde_json::Map<String, Value>, Unreadable> {
    precheck(stdin)?;
    match serde_json::from_slice::<Payload>(stdin) {
        Ok(Payload::Object(map)) => Ok(map),
        Ok(Payload::Other(other)) => Err(Unreadable::NotObject(json_kind(&other))),
        Err(e) => Err(Unreadable::NotJson(short(&e.to_string()))),
    }
}

/// A payload's top level as [`payload`] reads it: an object whose repeated keys keep every
/// value, or any other JSON value.
enum Payload {
    Object(serde_json::Map<String, Value>),
    Other(Value),
}

impl<'de> serde::Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> serde::de::Visitor<'de> for Top {
            type Value = Payload;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Payload, A::Error> {
                let mut map = serde_json::Map::new();
                let mut repeated: Vec<String> = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    let value: Value = access.next_value()?;
                    match map.get_mut(&key) {
                        None => {
                            map.insert(key, value);
                        }
                        Some(Value::Array(values)) if repeated.contains(&key) => {
                            values.push(value);
                        }
                        Some(first) => {
                            *first = Value::Array(vec![first.take(), value]);
                            repeated.push(key);
                        }
                    }
                }
                Ok(Payload::Object(map))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Payload, A::Error> {
                while access.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Payload::Other(Value::Array(Vec::new())))
            }
            fn visit_str<E>(self, _: &str) -> Result<Payload, E> {
                Ok(Payload::Other(Value::String(String::new())))
            }
            fn visit_bool<E>(self, b: bool) -> Result<Payload, E> {
                Ok(Payload::Other(Value::Bool(b)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Payload, E> {
                Ok(Payload::Other(Value::from(n)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Payload, E> {
                Ok(Payload::Other(Value::from(n)))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Payload, E> {
                Ok(Payload::Other(Value::from(n)))
            }
            fn visit_unit<E>(self) -> Result<Payload, E> {
                Ok(Payload::Other(Value::Null))
            }
        }
        deserializer.deserialize_any(Top)
    }
}

/// A string field of a payload (any other type reads as absent).
pub(crate) fn text(payload: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    payload.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The tool a payload names under `key`: a string that is not blank, else `NoToolName`.
pub(crate) fn tool_name(
    payload: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<String, Unreadable> {
    text(payload, key)
        .filter(|name| !name.trim().is_empty())
        .ok_or(Unreadable::NoToolName)
}

/// The event a host's event name denotes: exactly `before` or `after` (the host's own
/// spelling), else unknown as sent (absent, or not a string, reads as empty). Two names (a
/// key the payload repeats, see [`payload`]) are unknown, whatever they are and in whichever
/// order.
pub(crate) fn event(name: Option<&Value>, before: &str, after: &str) -> Event {
    match name {
        Some(Value::String(name)) if name == before => Event::BeforeTool,
        Some(Value::String(name)) if name == after => Event::AfterTool,
        Some(Value::String(name)) => Event::Unknown(name.clone()),
        Some(Value::Array(names)) => Event::Unknown(format!(
            "{} (two event names in one payload)",
            names
                .iter()
                .map(|name| name
                    .as_str()
                    .map_or_else(|| name.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(" and ")
        )),
        _ => Event::Unknown(String::new()),
    }
}

/// Checks shared by every dialect before parsing: size and emptiness.
pub(crate) fn precheck(stdin: &[u8]) -> Result<(), Unreadable> {
    if stdin.len() > MAX_INPUT {
        return Err(Unreadable::TooLarge);
    }
    if stdin.iter().all(u8::is_ascii_whitespace) {
        return Err(Unreadable::Empty);
    }
    Ok(())
}

/// Reads stdin with `--host` when given, else with the dialect [`detect`] finds.
///
/// Cursor and Copilot CLI also run the hooks in Claude Code's settings files, sending their
/// own payloads to an entry installed with `--host claude-code`. Such a payload is read, and
/// answered, in the dialect of the host that really sent it: read as Claude Code's, a Cursor
/// `Shell` call would be an ask, which Cursor does not enforce.
pub(crate) fn read(
    host: Option<Host>,
    stdin: &[u8],
) -> Result<ToolCall, (Option<Host>, Unreadable)> {
    let host = match host {
        Some(Host::ClaudeCode) => match detect(stdin) {
            Some(sender @ (Host::Cursor | Host::Copilot)) => sender,
            _ => Host::ClaudeCode,
        },
        Some(host) => host,
        None => {
            // Say what is wrong with the bytes before saying the host is unknown.
            match (detect(stdin), precheck(stdin)) {
                (Some(host), _) => host,
                (None, Err(e)) => return Err((None, e)),
                (None, Ok(())) => {
                    return Err((
                        None,
                        match serde_json::from_slice::<Value>(stdin) {
                            Err(e) => Unreadable::NotJson(short(&e.to_string())),
                            Ok(value) if !value.is_object() => {
                                Unreadable::NotObject(json_kind(&value))
                            }
                            Ok(_) => Unreadable::UnknownHost,
                        },
                    ));
                }
            }
        }
    };
    host.read(stdin).map_err(|e| (Some(host), e))
}

/// What a JSON value that is not an object is, in words.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "a JSON array",
        Value::String(_) => "a JSON string",
        Value::Number(_) => "a JSON number",
        Value::Bool(_) => "a JSON boolean",
        Value::Null => "JSON null",
        Value::Object(_) => "a JSON object",
    }
}

/// A parse error cut to a length fit for one stderr line.
pub(crate) fn short(text: &str) -> String {
    text.chars().take(120).collect()
}

/// What the process writes and returns for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    pub(crate) stdout: Option<String>,
    pub(crate) stderr: Option<String>,
    pub(crate) code: u8,
}

impl Rendered {
    /// A JSON answer on stdout, exit 0.
    pub(crate) fn json(value: &Value) -> Self {
        Self {
            stdout: Some(value.to_string()),
            stderr: None,
            code: crate::exit::OK,
        }
    }

    /// Exit 2 with `text` folded onto one stderr line (hosts show only the first line).
    pub(crate) fn block(text: &str) -> Self {
        Self {
            stdout: None,
            stderr: Some(text.split_whitespace().collect::<Vec<_>>().join(" ")),
            code: crate::exit::BLOCKED,
        }
    }

    /// [`Rendered::block`] with the same refusal on stdout as `answer` spells it, for a host
    /// that reads stdout whatever the exit code: a closed stderr then still blocks, with a
    /// reason.
    pub(crate) fn block_with(text: &str, answer: impl FnOnce(&str) -> Value) -> Self {
        let mut block = Self::block(text);
        block.stdout = block.stderr.as_deref().map(|line| answer(line).to_string());
        block
    }

    /// Writes the answer (through the one stdout writer) and returns the exit code. A stdout
    /// nobody reads (a broken pipe, or closed: `/dev/null` in its place) becomes exit 2, which
    /// still blocks if anything reads the exit code.
    pub(crate) fn emit(&self) -> std::process::ExitCode {
        if let Some(text) = &self.stdout
            && (crate::console::stdout_unwritable().is_some()
                || crate::console::write_json(text).is_err())
        {
            // One line: a refusal's own reason when it has one.
            crate::console::err(
                self.stderr
                    .as_deref()
                    .unwrap_or("rewind: could not write the decision to stdout"),
            );
            return crate::exit::code(crate::exit::BLOCKED);
        }
        if let Some(line) = &self.stderr {
            crate::console::err(line);
        }
        crate::exit::code(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_host_is_detected_from_its_own_fields() {
        let cases = [
            (
                r#"{"session_id":"s","transcript_path":"/t","cwd":"/","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"mcp__ssh__exec","tool_input":{},"tool_use_id":"toolu_1"}"#,
                Some(Host::ClaudeCode),
            ),
            (
                r#"{"conversation_id":"c","generation_id":"g","cursor_version":"1.7","hook_event_name":"preToolUse","tool_name":"Shell"}"#,
                Some(Host::Cursor),
            ),
            (
                r#"{"session_id":"s","transcript_path":"/t","cwd":"/","hook_event_name":"BeforeTool","timestamp":"2026","tool_name":"run_shell_command"}"#,
                Some(Host::Gemini),
            ),
            (
                r#"{"session_id":"s","turn_id":"t","model":"gpt","hook_event_name":"PreToolUse","tool_name":"Bash","permission_mode":"default","transcript_path":"/t"}"#,
                Some(Host::Codex),
            ),
            (
                r#"{"timestamp":1704614600000,"cwd":"/","toolName":"bash","toolArgs":"{}"}"#,
                Some(Host::Copilot),
            ),
            (r#"{"tool_name":"mcp__ssh__exec","tool_input":{}}"#, None),
            ("[1]", None),
            ("not json", None),
        ];
        for (payload, host) in cases {
            assert_eq!(detect(payload.as_bytes()), host, "{payload}");
        }
    }

    #[test]
    fn a_claude_code_entry_run_by_cursor_or_copilot_reads_the_senders_payload() {
        let cases = [
            (
                r#"{"conversation_id":"c","generation_id":"g","cursor_version":"1.7.2","hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ssh web01 reboot"},"tool_use_id":"tu1"}"#,
                Host::Cursor,
            ),
            (
                r#"{"hook_event_name":"PreToolUse","session_id":"s","timestamp":"2026-12-01T04:18:12.553Z","cwd":"/p","tool_name":"Bash","tool_input":{"command":"ssh web01 reboot"}}"#,
                Host::Copilot,
            ),
            (
                r#"{"timestamp":1704614600000,"cwd":"/","toolName":"bash","toolArgs":"{\"command\":\"ssh web01 reboot\"}"}"#,
                Host::Copilot,
            ),
            (
                r#"{"session_id":"s","transcript_path":"/t","cwd":"/","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ssh web01 reboot"},"tool_use_id":"toolu_1"}"#,
                Host::ClaudeCode,
            ),
            // Neither fingerprint: read as the host the entry names.
            (
                r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ssh web01 reboot"}}"#,
                Host::ClaudeCode,
            ),
        ];
        for (payload, sender) in cases {
            let call = read(Some(Host::ClaudeCode), payload.as_bytes()).expect(payload);
            assert_eq!(call.host, sender, "{payload}");
        }
        // Only Claude Code's files are shared: another host's entry keeps its own dialect.
        let cursor = cases[0].0.as_bytes();
        assert_eq!(
            read(Some(Host::Codex), cursor).map(|c| c.host),
            Ok(Host::Codex)
        );
    }

    #[test]
    fn the_recorded_payload_of_every_host_is_detected_as_that_host() {
        let cases = [
            (
                r#"{"session_id":"01a22fd1","turn_id":"01a22fd1-4e18","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-e2e","permission_mode":"bypassPermissions","tool_name":"mcp__ssh__exec","tool_input":{"host":"jp-ubuntu"},"tool_use_id":"call_e2e_01"}"#,
                Host::Codex,
            ),
            (
                r#"{"session_id":"1f041d3f","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-12-01T04:18:12.553Z","tool_name":"mcp_ssh_exec","tool_input":{"host":"jp-ubuntu"},"mcp_context":{"server_name":"ssh","tool_name":"exec"}}"#,
                Host::Gemini,
            ),
            (
                r#"{"sessionId":"959e7020","timestamp":1796098717577,"cwd":"/p","toolName":"ssh-exec","toolArgs":{"host":"jp-ubuntu"}}"#,
                Host::Copilot,
            ),
            (
                r#"{"hook_event_name":"PreToolUse","session_id":"4cbbb07d","timestamp":"2026-12-01T04:18:51.023Z","cwd":"/p","tool_name":"ssh-exec","tool_input":{"host":"jp-ubuntu"}}"#,
                Host::Copilot,
            ),
        ];
        for (payload, host) in cases {
            assert_eq!(detect(payload.as_bytes()), Some(host), "{payload}");
            let call = read(None, payload.as_bytes()).expect("reads");
            assert_eq!(call.host, host);
            assert_eq!(call.tool, "mcp__ssh__exec", "{payload}");
            assert_eq!(call.event, Event::BeforeTool, "{payload}");
        }
    }

    /// Detection from the top level (`Top`) names the host a full parse names, for every
    /// payload recorded from a host or written for the hook's tests, and for variants of
    /// them whose values change type or whose keys repeat.
    #[test]
    fn detection_from_the_top_level_names_the_host_a_full_parse_names() {
        let full = |bytes: &[u8]| match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(payload)) => fingerprinted(&payload),
            _ => None,
        };
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut payloads: Vec<Vec<u8>> = Vec::new();
        for dir in ["hosts", "hook"] {
            for entry in std::fs::read_dir(fixtures.join(dir)).expect("fixtures") {
                let path = entry.expect("entry").path();
                if path.extension().is_some_and(|e| e == "json") {
                    payloads.push(std::fs::read(&path).expect("fixture"));
                }
            }
        }
        let mut variants = Vec::new();
        for payload in &payloads {
            let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(payload) else {
                continue;
            };
            for key in map.keys() {
                for value in [
                    json!(null),
                    json!(1),
                    json!([]),
                    json!({}),
                    json!("toolu_x"),
                ] {
                    let mut changed = map.clone();
                    changed.insert(key.clone(), value);
                    variants.push(Value::Object(changed).to_string().into_bytes());
                }
                // The key again, last, with another value.
                let text = Value::Object(map.clone()).to_string();
                let repeated = format!("{},{}:\"toolu_y\"}}", &text[..text.len() - 1], json!(key));
                variants.push(repeated.into_bytes());
            }
        }
        assert!(payloads.len() > 20, "the fixtures are found");
        for payload in payloads.iter().chain(&variants) {
            assert_eq!(
                detect(payload),
                full(payload),
                "{}",
                String::from_utf8_lossy(payload)
            );
        }
    }

    #[test]
    fn another_hosts_event_name_does_not_move_a_payload_to_that_host() {
        // Claude Code's fields with Gemini's event name: Claude's dialect reads it and names
        // the event unknown (a deny), rather than Gemini's dialect reading it as a call.
        let payload = br#"{"session_id":"s","transcript_path":"/t","permission_mode":"default","hook_event_name":"BeforeTool","tool_name":"mcp__ssh__exec","tool_input":{},"tool_use_id":"toolu_1"}"#;
        assert_eq!(detect(payload), Some(Host::ClaudeCode));
        assert_eq!(
            read(None, payload).expect("reads").event,
            Event::Unknown("BeforeTool".into())
        );
    }

    #[test]
    fn without_host_an_unrecognisable_payload_is_refused() {
        assert_eq!(
            read(None, br#"{"tool_name":"mcp__ssh__exec"}"#),
            Err((None, Unreadable::UnknownHost))
        );
        assert_eq!(read(None, b"  "), Err((None, Unreadable::Empty)));
        assert!(matches!(
            read(None, b"{nope"),
            Err((None, Unreadable::NotJson(_)))
        ));
    }

    #[test]
    fn every_dialect_names_json_that_is_not_an_object() {
        for host in [
            Host::ClaudeCode,
            Host::Codex,
            Host::Gemini,
            Host::Copilot,
            Host::Cursor,
        ] {
            for (bytes, kind) in [
                (&b"[1,2]"[..], "a JSON array"),
                (b" \"text\" ", "a JSON string"),
                (b"true", "a JSON boolean"),
            ] {
                assert_eq!(
                    host.read(bytes),
                    Err(Unreadable::NotObject(kind)),
                    "{host:?}"
                );
            }
            assert!(
                matches!(host.read(b"{\"tool_name\":"), Err(Unreadable::NotJson(_))),
                "{host:?}"
            );
        }
    }

    #[test]
    fn a_made_up_change_id_carries_the_time_and_randomness_not_the_process_id() {
        let id = made_up_change_id();
        let shape = regex::Regex::new(r"^rewind-\d{8}T\d{6}Z-[0-9a-f]{16}$").expect("regex");
        assert!(shape.is_match(&id), "{id}");
        assert!(!id.ends_with(&format!("-{}", std::process::id())), "{id}");
        // One id for the whole process: the tag and the recover command agree.
        assert_eq!(made_up_change_id(), id);
    }

    #[test]
    fn block_is_exit_2_with_one_stderr_line() {
        let r = Rendered::block("a\nb");
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
