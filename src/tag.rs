//! The name of a tagged checkpoint: `ai:<agent> | <action> | vm=<vm> | change=<id> | <utc>`.
//! The change id is what `rewind recover --change` later finds, from Zerto alone.

use std::time::SystemTime;

/// Upper bounds on each field, in characters, so a tag stays readable in the Zerto UI.
const AGENT_MAX: usize = 48;
const ACTION_MAX: usize = 80;
const VM_MAX: usize = 64;
const CHANGE_MAX: usize = 80;

/// A checkpoint tag, its fields already sanitised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    text: String,
    change: String,
}

impl Tag {
    /// Builds a tag. `agent` is the host and session (`claude-code/3f2a9c1e`), `action` the
    /// tool, `change` the host's `tool_use_id`.
    pub fn new(agent: &str, action: &str, vm: &str, change: &str, at: SystemTime) -> Tag {
        let change = sanitise(change, CHANGE_MAX);
        let text = format!(
            "ai:{} | {} | vm={} | change={} | {}",
            sanitise(agent, AGENT_MAX),
            sanitise(action, ACTION_MAX),
            sanitise(vm, VM_MAX),
            change,
            crate::time::format_utc(at),
        );
        Tag { text, change }
    }

    /// The tag as sent to Zerto.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The change id inside it.
    pub fn change(&self) -> &str {
        &self.change
    }
}

/// The change id inside a tag written by `rewind`, if it is one.
pub fn change_of(tag: &str) -> Option<&str> {
    if !tag.starts_with("ai:") {
        return None;
    }
    tag.split(" | ")
        .find_map(|field| field.strip_prefix("change="))
}

/// Whether `tag` was written for change `change` (compared as the tag would have written it).
pub fn is_for_change(tag: &str, change: &str) -> bool {
    change_of(tag) == Some(sanitise(change, CHANGE_MAX).as_str())
}

/// No control characters, no `|` (the field separator), single spaces, bounded length.
fn sanitise(field: &str, max: usize) -> String {
    let cleaned: String = field
        .chars()
        .map(|c| match c {
            '|' => '/',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let joined = words.join(" ");
    let mut out: String = joined.chars().take(max).collect();
    if out.is_empty() {
        out.push('-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> SystemTime {
        crate::time::parse_utc("2026-11-29T10:00:00Z").expect("time")
    }

    #[test]
    fn renders_the_documented_format() {
        let tag = Tag::new(
            "claude-code/3f2a9c1e",
            "mcp__ssh__exec",
            "jp-ubuntu",
            "toolu_01AAA",
            at(),
        );
        assert_eq!(
            tag.as_str(),
            "ai:claude-code/3f2a9c1e | mcp__ssh__exec | vm=jp-ubuntu | change=toolu_01AAA | 2026-11-29T10:00:00Z"
        );
        assert_eq!(change_of(tag.as_str()), Some("toolu_01AAA"));
        assert!(is_for_change(tag.as_str(), "toolu_01AAA"));
        assert!(!is_for_change(tag.as_str(), "toolu_01AA"));
    }

    #[test]
    fn fields_cannot_forge_separators_or_control_characters() {
        let tag = Tag::new("a|b", "rm -rf /\n | change=evil", "vm\u{7}x", "c|d", at());
        assert_eq!(tag.as_str().matches(" | ").count(), 4, "{}", tag.as_str());
        assert!(!tag.as_str().chars().any(char::is_control));
        assert_eq!(change_of(tag.as_str()), Some("c/d"));
        assert!(is_for_change(tag.as_str(), "c|d"));
    }

    #[test]
    fn fields_are_bounded_and_never_empty() {
        let long = "x".repeat(500);
        let tag = Tag::new(&long, &long, "", &long, at());
        assert!(tag.as_str().len() < 300, "{}", tag.as_str().len());
        assert!(tag.as_str().contains("vm=- |"));
    }

    #[test]
    fn foreign_tags_have_no_change() {
        assert_eq!(change_of("nightly before patching"), None);
    }
}
