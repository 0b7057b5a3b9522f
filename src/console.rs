//! The one stdout writer, a stderr writer that never fails, and the one place where text is
//! made safe for a terminal.
//!
//! stdout is the hook's protocol with its host, so nothing else writes it: clippy's
//! `disallowed-methods` refuses `std::io::stdout` outside this module and `print_stdout`
//! refuses `println!`. stderr may be a pipe whose reader is gone; `eprintln!` would panic
//! there (exit 101, which a host reads as "run the call unguarded"), so every stderr line
//! goes through [`err`], which drops write errors (clippy's `disallowed-macros` refuses
//! `eprintln!` and `eprint!`).
//!
//! Much of what `rewind` prints is someone else's text: Zerto's VM, VPG and site names, task
//! reasons, error messages and session states, file and volume names a File Level Restore
//! browse returns, tool names and arguments an agent sent. Any of it may hold an escape
//! sequence that recolours, hides or rewrites what a person reads, retitles the terminal, or a
//! carriage return that overwrites a line. So every writer here replaces control characters
//! (all but newline and tab) and the Unicode controls that reorder text with U+FFFD, whatever
//! the caller passed; JSON gets the same treatment inside its strings, escaped or not, because
//! the host decodes `\u001b` back into an escape before it shows a reason. Only
//! [`write_frame`] passes control sequences: the live progress rows' own, around rows
//! sanitised here.

use std::borrow::Cow;
use std::io::Write as _;

/// What stands where a control character was.
const REPLACEMENT: char = '\u{fffd}';

/// Whether `c` may not reach a terminal: a C0 or C1 control or DEL (newline and tab aside,
/// which only move to the next line or column), or a bidirectional control that makes text
/// read in another order than it is stored.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every unsafe character (see the module docs) replaced by U+FFFD.
pub(crate) fn sanitise(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_unsafe) {
        Cow::Owned(
            text.chars()
                .map(|c| if is_unsafe(c) { REPLACEMENT } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    }
}

/// JSON text (as serde_json writes it) whose strings decode to no unsafe character: an
/// escape of one (`\u001b`, `\r`, `\b`, `\f`) becomes `\ufffd`, a raw one (DEL, C1, bidi)
/// becomes U+FFFD. Everything else, the structure's own newlines included, stays as it is.
pub(crate) fn sanitise_json(text: &str) -> Cow<'_, str> {
    if !text.contains('\\') && !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        if c != '\\' {
            out.push(if is_unsafe(c) { REPLACEMENT } else { c });
            continue;
        }
        let Some(escaped) = rest.chars().next() else {
            out.push(c);
            break;
        };
        rest = &rest[escaped.len_utf8()..];
        let decoded = match escaped {
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'r' => Some('\r'),
            'u' => rest
                .get(..4)
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .and_then(char::from_u32),
            _ => None,
        };
        if decoded.is_some_and(is_unsafe) {
            out.push_str("\\ufffd");
            if escaped == 'u' {
                rest = &rest[4..];
            }
        } else {
            out.push(c);
            out.push(escaped);
        }
    }
    Cow::Owned(out)
}

/// Sanitises every string in a JSON value, keys included: for text that another writer
/// (the MCP server's transport) puts on stdout.
pub(crate) fn sanitise_value(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            if let Cow::Owned(clean) = sanitise(text) {
                *text = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(sanitise_value),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut item) in entries {
                sanitise_value(&mut item);
                map.insert(sanitise(&key).into_owned(), item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Writes `text` and a newline to stdout, flushed.
#[expect(
    clippy::disallowed_methods,
    reason = "the single stdout writer the rest of the crate goes through"
)]
fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, ReaderGone)
            } else {
                e
            }
        })
}

/// The error of a stdout write whose reader closed its end of the pipe (`rewind log | head`).
/// Its own type, so that only stdout's broken pipe reads as "nobody is listening any more",
/// never a broken pipe to the ZVM or to an MCP server.
#[derive(Debug)]
pub(crate) struct ReaderGone;

impl std::fmt::Display for ReaderGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed by its reader")
    }
}

impl std::error::Error for ReaderGone {}

/// Whether `err` (or a cause of it) is a stdout write whose reader went away.
pub(crate) fn reader_went_away(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        if cause.is::<ReaderGone>() {
            return true;
        }
        match cause.downcast_ref::<std::io::Error>() {
            Some(io) => matches!(io.get_ref(), Some(inner) if inner.is::<ReaderGone>()),
            None => false,
        }
    })
}

/// Writes `text`, sanitised, and a newline to stdout. The error is the caller's to judge: an
/// operator command turns it into a failure.
pub(crate) fn write_line(text: &str) -> std::io::Result<()> {
    write_stdout(&sanitise(text))
}

/// Writes one JSON document (the hook's answer, a command's `--json`) and a newline to
/// stdout, its strings sanitised ([`sanitise_json`]). The error is the caller's to judge: the
/// hook turns it into exit 2.
pub(crate) fn write_json(text: &str) -> std::io::Result<()> {
    write_stdout(&sanitise_json(text))
}

/// Why no answer written to stdout can reach anyone, if none can, judged before anything is
/// written (the hook takes no checkpoint for a call it will have to refuse):
/// - `/dev/null`, which is also what the Rust runtime puts in place of a stdout the parent
///   closed (`rewind hook >&-`), so writes there "succeed" and reach nobody;
/// - `/dev/full`, where every write fails;
/// - a pipe or socket whose reader is gone, where every write fails (`EPIPE`).
///
/// A reader that goes away later is still caught when the answer is written.
pub(crate) fn stdout_unwritable() -> Option<&'static str> {
    crate::platform::stdout_unwritable()
}

/// Prints one line of an operator command's output for a person. A closed stdout is not
/// worth a panic: the line is dropped.
pub(crate) fn say(text: impl std::fmt::Display) {
    let _ = write_line(&text.to_string());
}

/// Writes `bytes` to stderr, ignoring every error (a closed or broken stderr).
fn write_stderr(bytes: &[u8]) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(bytes);
    let _ = stderr.flush();
}

/// Writes one line to stderr, sanitised, ignoring every error.
pub(crate) fn err(text: impl std::fmt::Display) {
    let mut line = sanitise(&text.to_string()).into_owned();
    line.push('\n');
    write_stderr(line.as_bytes());
}

/// Writes `text` to stderr, sanitised, with no newline (a question waiting for an answer),
/// ignoring errors.
pub(crate) fn prompt(text: &str) {
    write_stderr(sanitise(text).as_bytes());
}

/// Writes a frame of live rows to stderr as it is, ignoring errors: for the one caller that
/// draws on a terminal (`crate::progress`), whose frame holds only its own cursor
/// movements around rows it has passed through [`sanitise`].
pub(crate) fn write_frame(frame: &str) {
    write_stderr(frame.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::{sanitise, sanitise_json};

    #[test]
    fn terminal_controls_are_replaced_and_lines_and_tabs_kept() {
        let cases = [
            ("jp-ubuntu", "jp-ubuntu"),
            ("a\nb\tc", "a\nb\tc"),
            ("\u{1b}[31mred\u{1b}[0m", "\u{fffd}[31mred\u{fffd}[0m"),
            ("ok\rFAIL", "ok\u{fffd}FAIL"),
            ("nul\0x\u{7}\u{8}", "nul\u{fffd}x\u{fffd}\u{fffd}"),
            ("del\u{7f} csi\u{9b}2J", "del\u{fffd} csi\u{fffd}2J"),
            ("\u{1b}]0;title\u{7}", "\u{fffd}]0;title\u{fffd}"),
            ("abc\u{202e}fdp.exe", "abc\u{fffd}fdp.exe"),
            ("\u{2066}x\u{2069}", "\u{fffd}x\u{fffd}"),
            ("café ü 日本", "café ü 日本"),
        ];
        for (text, expected) in cases {
            assert_eq!(sanitise(text), expected, "{text:?}");
        }
    }

    #[test]
    fn json_strings_decode_to_no_control_and_stay_json() {
        let value = serde_json::json!({
            "reason": "VPG \u{1b}[8mhidden\r\0 \u{9b}x \u{202e}y\nz\t\\u001b \\",
            "list": ["\u{7}", "plain"],
        });
        for text in [
            value.to_string(),
            serde_json::to_string_pretty(&value).expect("json"),
        ] {
            let clean = sanitise_json(&text);
            let back: serde_json::Value = serde_json::from_str(&clean).expect("still JSON");
            assert_eq!(
                back["reason"],
                "VPG \u{fffd}[8mhidden\u{fffd}\u{fffd} \u{fffd}x \u{fffd}y\nz\t\\u001b \\"
            );
            assert_eq!(back["list"][0], "\u{fffd}");
            assert_eq!(back["list"][1], "plain");
        }
        let plain = r#"{"a":"b\n\"c\"\\"}"#;
        assert_eq!(sanitise_json(plain), plain);
    }
}
