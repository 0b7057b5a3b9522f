//! The name of a tagged checkpoint: `ai:<change> | <agent> | <action> | vm=<vm> | <utc>`.
//! The change id is what `rewind recover --change` later finds, from Zerto alone. It comes
//! first because no source gives Zerto's limit on a checkpoint name: a name listed cut short
//! still starts with it, and the guard confirms its checkpoint by that start.
//!
//! Tags written before this order (`ai:<agent> | <action> | vm=<vm> | change=<id> | <utc>`)
//! are still read.

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
            "ai:{change} | {} | {} | vm={} | {}",
            sanitise(agent, AGENT_MAX),
            sanitise(action, ACTION_MAX),
            sanitise(vm, VM_MAX),
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

    /// Whether a tag Zerto lists is this one: the same text, or this text cut short (or
    /// with trailing blanks dropped) but still holding the whole change id and the separator
    /// after it, so that no other change's tag can pass for it.
    pub fn is_listed_as(&self, listed: &str) -> bool {
        let listed = listed.trim_end();
        let through_change = "ai:".len() + self.change.len() + " |".len();
        listed == self.text || (listed.len() >= through_change && self.text.starts_with(listed))
    }
}

/// The change id inside a tag written by `rewind`, if it is one.
///
/// Decided by position, never by searching: no field can hold ` | `, so the fourth field is
/// `vm=…` in a tag of today's order and `change=…` in one of the earlier order, and a tool
/// named `change=x` cannot pass for a change id.
pub fn change_of(tag: &str) -> Option<&str> {
    let fields: Vec<&str> = tag.strip_prefix("ai:")?.split(" | ").collect();
    match fields.get(3).and_then(|f| f.strip_prefix("change=")) {
        Some(old) => Some(old),
        None => fields.first().copied().filter(|c| !c.is_empty()),
    }
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
            "ai:toolu_01AAA | claude-code/3f2a9c1e | mcp__ssh__exec | vm=jp-ubuntu | 2026-11-29T10:00:00Z"
        );
        assert_eq!(change_of(tag.as_str()), Some("toolu_01AAA"));
        assert!(is_for_change(tag.as_str(), "toolu_01AAA"));
        assert!(!is_for_change(tag.as_str(), "toolu_01AA"));
    }

    #[test]
    fn tags_of_the_earlier_order_are_still_read() {
        let old = "ai:claude-code/3f2a9c1e | mcp__ssh__exec | vm=jp-ubuntu | change=toolu_01AAA | 2026-11-29T10:00:00Z";
        assert_eq!(change_of(old), Some("toolu_01AAA"));
        assert!(is_for_change(old, "toolu_01AAA"));
    }

    #[test]
    fn a_name_listed_cut_short_confirms_only_with_the_whole_change_id() {
        // A Claude Code tool_use_id is 30 characters: cut to 40, the name still holds it.
        let tag = Tag::new(
            "claude-code/3f2a9c1e",
            "mcp__ssh__exec",
            "jp-ubuntu",
            "toolu_01A09q90qw90lq917835lq9x",
            at(),
        );
        let cut: String = tag.as_str().chars().take(40).collect();
        assert!(tag.is_listed_as(&cut), "{cut}");
        assert!(tag.is_listed_as(tag.as_str()));
        assert!(tag.is_listed_as(&format!("{}  ", tag.as_str())));
        // Cut inside the id, or right at its end: another change could read the same.
        let inside: String = tag.as_str().chars().take(20).collect();
        assert!(!tag.is_listed_as(&inside));
        assert!(!tag.is_listed_as("ai:toolu_01A09q90qw90lq917835lq9x"));
        let short = Tag::new("a", "b", "vm", "c-1", at());
        let other = Tag::new("a", "b", "vm", "c-10", at());
        assert!(!short.is_listed_as(&other.as_str()[..13]));
        assert!(!short.is_listed_as(other.as_str()));
        assert!(!short.is_listed_as(""));
    }

    #[test]
    fn fields_cannot_forge_separators_or_control_characters() {
        let tag = Tag::new("a|b", "rm -rf /\n | change=evil", "vm\u{7}x", "c|d", at());
        assert_eq!(tag.as_str().matches(" | ").count(), 4, "{}", tag.as_str());
        assert!(!tag.as_str().chars().any(char::is_control));
        assert_eq!(change_of(tag.as_str()), Some("c/d"));
        let named = Tag::new("a", "change=evil", "vm", "real", at());
        assert_eq!(change_of(named.as_str()), Some("real"));
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
