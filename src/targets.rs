//! Which VMs a tool call reaches: an exact list of references, or why that cannot be known.
//!
//! Every classifier feeds the decision table through [`Targets`]: a catalog entry's `vm_arg`
//! (read here, as an Ansible-style host pattern), a server bound to one host, and the shell
//! classifier with the hosts it found on a command line. A value is read as a host pattern:
//!
//! - separators `,` `:` `;` and whitespace split it into hosts (`web01:db01` is two hosts);
//!   `host:port` stays one host when everything after the `:` is digits, and `[v6]:port`,
//!   `user@host` and `ssh://…` forms are single references;
//! - a range `web[01:03]` (numbers, zero padding kept, or single letters) expands exactly;
//! - `all`, `*`, globs (`*`, `?`, `[…]` that is not a range), regexes (`~…`), operators
//!   (`!x`, `&x`) and files (`@hosts.txt`) name hosts that cannot be known without an
//!   inventory: the targets are unknowable, and the part that is says so.

use serde_json::Value;

/// Most hosts a range may expand to before it counts as unknowable (a bound on memory; the
/// decision table asks long before, at `[hook] max_vms`).
const EXPANSION_MAX: usize = 4096;

/// Which VMs a call reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targets {
    /// Exactly these references (never empty, no duplicates ignoring case), each to be
    /// resolved to one VM.
    Exact(Vec<Target>),
    /// Nothing in the call names a VM. `looked_for` says where the classifier looked.
    Missing { looked_for: String },
    /// The value that decides is present but cannot name a VM (empty, a number, an object…).
    Unusable { source: String, why: String },
    /// The value names hosts that cannot be expanded to exact VMs.
    Unknowable {
        source: String,
        part: String,
        why: String,
    },
}

/// One VM reference and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// A VM name, vmIdentifier, IP, `user@host`, `host:port` or FQDN.
    pub reference: String,
    /// Where it came from, for messages: ``the argument `limit` ``, ``the command `ssh …` ``.
    pub source: String,
}

impl Targets {
    /// Exact targets from references found in one place; duplicates (ignoring case) dropped.
    /// An empty list is [`Targets::Missing`].
    pub fn exact(references: impl IntoIterator<Item = String>, source: &str) -> Targets {
        let mut list: Vec<Target> = Vec::new();
        for reference in references {
            if !list
                .iter()
                .any(|t| t.reference.eq_ignore_ascii_case(&reference))
            {
                list.push(Target {
                    reference,
                    source: source.to_owned(),
                });
            }
        }
        if list.is_empty() {
            Targets::Missing {
                looked_for: source.to_owned(),
            }
        } else {
            Targets::Exact(list)
        }
    }

    /// Reads the value of one argument as the VMs it names: a string is a host pattern, a
    /// list of strings is a list of host patterns; anything else is unusable.
    pub fn from_value(value: &Value, source: &str) -> Targets {
        let unusable = |why: &str| Targets::Unusable {
            source: source.to_owned(),
            why: why.to_owned(),
        };
        let patterns: Vec<&str> = match value {
            Value::String(text) => vec![text.as_str()],
            Value::Array(items) if items.is_empty() => return unusable("is an empty list"),
            Value::Array(items) => {
                let Some(texts) = items.iter().map(Value::as_str).collect::<Option<Vec<_>>>()
                else {
                    return unusable("is a list with something other than host names in it");
                };
                texts
            }
            Value::Null => return unusable("is null"),
            Value::Bool(_) => return unusable("is true or false, not a host"),
            Value::Number(_) => return unusable("is a number, not a host name"),
            Value::Object(_) => return unusable("is an object, not a host name"),
        };
        let mut hosts = Vec::new();
        for pattern in patterns {
            if pattern.trim().is_empty() {
                return unusable("is empty (an empty Ansible limit means every host)");
            }
            match parse_pattern(pattern) {
                Ok(found) => hosts.extend(found),
                Err(Unknowable { part, why }) => {
                    return Targets::Unknowable {
                        source: source.to_owned(),
                        part,
                        why,
                    };
                }
            }
            if hosts.len() > EXPANSION_MAX {
                return Targets::Unknowable {
                    source: source.to_owned(),
                    part: pattern.to_owned(),
                    why: format!("expands to more than {EXPANSION_MAX} hosts"),
                };
            }
        }
        Targets::exact(hosts, source)
    }

    /// The targets of a catalog entry's `vm_arg` keys: the first key that is present in
    /// `input` decides, whatever its value (hole-free: a present but unusable value never
    /// falls through to a later key).
    pub fn from_vm_arg(keys: &[String], input: &Value) -> Targets {
        for key in keys {
            let value = if key.starts_with('/') {
                input.pointer(key)
            } else {
                input.get(key)
            };
            if let Some(value) = value {
                return Targets::from_value(value, &format!("`{key}`"));
            }
        }
        let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
        Targets::Missing {
            looked_for: format!("({})", quoted.join(", ")),
        }
    }
}

/// A part of a pattern that cannot be expanded, and why.
#[derive(Debug, PartialEq, Eq)]
struct Unknowable {
    part: String,
    why: String,
}

/// The exact hosts an Ansible-style pattern names, or the part that makes it unknowable.
fn parse_pattern(pattern: &str) -> Result<Vec<String>, Unknowable> {
    let unknowable = |part: &str, why: &str| Unknowable {
        part: part.to_owned(),
        why: why.to_owned(),
    };
    let mut hosts = Vec::new();
    for chunk in split_outside_brackets(pattern, |c| c == ',' || c == ';' || c.is_whitespace()) {
        if let Some((_, rest)) = chunk.split_once("://") {
            // `ssh://user@host:port/path`: one reference, when it cannot be read as more.
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host);
            if path.contains(':') || split_colons(host).len() != 1 {
                return Err(unknowable(
                    chunk,
                    "is a URL that may name more than one host",
                ));
            }
            hosts.push(chunk.to_owned());
            continue;
        }
        for part in split_colons(chunk) {
            if part.starts_with('~') {
                return Err(unknowable(part, "is a regular expression"));
            }
            if part.starts_with('@') {
                return Err(unknowable(part, "reads hosts from a file"));
            }
            if part.starts_with('!') {
                return Err(unknowable(part, "excludes hosts from a set"));
            }
            if part.starts_with('&') {
                return Err(unknowable(part, "intersects with a set of hosts"));
            }
            if part.eq_ignore_ascii_case("all") || part == "*" {
                return Err(unknowable(part, "means every host in the inventory"));
            }
            if part.contains('[') && !part.starts_with('[') {
                hosts.extend(expand_range(part)?);
                continue;
            }
            if part.contains(['*', '?']) {
                return Err(unknowable(part, "is a glob"));
            }
            hosts.push(part.to_owned());
        }
    }
    Ok(hosts)
}

/// Splits at separator characters that are not inside `[…]`; drops empty pieces.
fn split_outside_brackets(text: &str, is_separator: impl Fn(char) -> bool) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0 && is_separator(c) => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// Splits one chunk at `:` into hosts, keeping `host:port` (digits after the colon),
/// `[v6]:port` and bare IPv6 addresses whole.
fn split_colons(chunk: &str) -> Vec<&str> {
    if chunk.starts_with('[') || chunk.parse::<std::net::Ipv6Addr>().is_ok() {
        return vec![chunk];
    }
    let pieces = split_outside_brackets(chunk, |c| c == ':');
    let mut hosts: Vec<&str> = Vec::new();
    for piece in pieces {
        let is_port = piece.chars().all(|c| c.is_ascii_digit());
        match hosts.pop() {
            // Widen the previous host to include `:port`.
            Some(previous) if is_port => {
                let from = offset_in(chunk, previous);
                let to = offset_in(chunk, piece) + piece.len();
                hosts.push(&chunk[from..to]);
            }
            previous => {
                hosts.extend(previous);
                hosts.push(piece);
            }
        }
    }
    hosts
}

/// Where `part` (a subslice of `whole`) starts in it.
fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

/// Expands `prefix[a:b]suffix` (one range per host; numbers keep their zero padding,
/// letters go one by one). Anything else in brackets is a glob.
fn expand_range(part: &str) -> Result<Vec<String>, Unknowable> {
    let glob = || Unknowable {
        part: part.to_owned(),
        why: String::from("is a glob"),
    };
    let (prefix, rest) = part.split_once('[').ok_or_else(glob)?;
    let (range, suffix) = rest.split_once(']').ok_or_else(glob)?;
    if suffix.contains(['[', '*', '?']) || prefix.contains(['*', '?']) {
        return Err(Unknowable {
            part: part.to_owned(),
            why: String::from("has more than one range or a glob beside a range"),
        });
    }
    let (from, to) = range.split_once(':').ok_or_else(glob)?;
    let too_many = || Unknowable {
        part: part.to_owned(),
        why: format!("expands to more than {EXPANSION_MAX} hosts"),
    };
    if let (Ok(a), Ok(b)) = (from.parse::<u64>(), to.parse::<u64>())
        && from.chars().all(|c| c.is_ascii_digit())
        && to.chars().all(|c| c.is_ascii_digit())
    {
        if a > b {
            return Err(glob());
        }
        if b - a >= EXPANSION_MAX as u64 {
            return Err(too_many());
        }
        let width = if from.len() > 1 && from.starts_with('0') {
            from.len()
        } else {
            0
        };
        return Ok((a..=b)
            .map(|n| format!("{prefix}{n:0width$}{suffix}"))
            .collect());
    }
    let letter = |s: &str| {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c),
            _ => None,
        }
    };
    match (letter(from), letter(to)) {
        (Some(a), Some(b)) if a <= b => {
            Ok((a..=b).map(|c| format!("{prefix}{c}{suffix}")).collect())
        }
        _ => Err(glob()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refs(targets: &Targets) -> Vec<&str> {
        match targets {
            Targets::Exact(list) => list.iter().map(|t| t.reference.as_str()).collect(),
            other => panic!("exact expected: {other:?}"),
        }
    }

    fn pattern(text: &str) -> Targets {
        Targets::from_value(&json!(text), "`limit`")
    }

    #[test]
    fn exact_patterns_name_every_host() {
        let cases: &[(&str, &[&str])] = &[
            ("jp-ubuntu", &["jp-ubuntu"]),
            ("jp-ubuntu.lab:db01", &["jp-ubuntu.lab", "db01"]),
            ("jp-ubuntu,db01", &["jp-ubuntu", "db01"]),
            ("jp-ubuntu; db01\tweb01", &["jp-ubuntu", "db01", "web01"]),
            ("jp-ubuntu:22", &["jp-ubuntu:22"]),
            ("root@jp-ubuntu:2222:db01", &["root@jp-ubuntu:2222", "db01"]),
            ("web[01:03]", &["web01", "web02", "web03"]),
            ("db[a:c].lab", &["dba.lab", "dbb.lab", "dbc.lab"]),
            ("web[8:10]", &["web8", "web9", "web10"]),
            ("[fe80::1]:22", &["[fe80::1]:22"]),
            ("fe80::1", &["fe80::1"]),
            ("ssh://root@jp-ubuntu:22/", &["ssh://root@jp-ubuntu:22/"]),
            ("db01,DB01", &["db01"]),
        ];
        for (text, expected) in cases {
            assert_eq!(refs(&pattern(text)), *expected, "{text}");
        }
    }

    #[test]
    fn patterns_that_need_an_inventory_are_unknowable_naming_the_part() {
        for (text, part) in [
            ("jp-ubuntu.lab:all", "all"),
            ("jp-ubuntu:!db01", "!db01"),
            ("jp-ubuntu:&prod", "&prod"),
            ("@hosts.txt", "@hosts.txt"),
            ("web*", "web*"),
            ("db0?", "db0?"),
            ("~web\\d+", "~web\\d+"),
            ("*", "*"),
            ("ssh://root@db01:22/x:web02", "ssh://root@db01:22/x:web02"),
            ("ssh://db01:web02", "ssh://db01:web02"),
            ("web[x1:3]", "web[x1:3]"),
            ("web[1:3]x[1:2]", "web[1:3]x[1:2]"),
            ("web[0:99999]", "web[0:99999]"),
        ] {
            match pattern(text) {
                Targets::Unknowable { part: got, .. } => assert_eq!(got, part, "{text}"),
                other => panic!("{text}: unknowable expected, got {other:?}"),
            }
        }
    }

    #[test]
    fn the_first_present_key_decides_even_when_unusable() {
        let keys = vec![
            String::from("hosts"),
            String::from("limit"),
            String::from("/extra_vars/target"),
            String::from("pattern"),
        ];
        let unusable = [
            json!({"hosts": ["db01", null], "pattern": "jp-ubuntu"}),
            json!({"limit": "", "extra_vars": {"target": "jp-ubuntu"}}),
            json!({"limit": "  ", "pattern": "jp-ubuntu"}),
            json!({"limit": 42, "pattern": "jp-ubuntu"}),
            json!({"limit": {"a": 1}, "pattern": "jp-ubuntu"}),
            json!({"limit": true, "pattern": "jp-ubuntu"}),
            json!({"limit": null, "pattern": "jp-ubuntu"}),
            json!({"hosts": [], "pattern": "jp-ubuntu"}),
        ];
        for input in unusable {
            assert!(
                matches!(
                    Targets::from_vm_arg(&keys, &input),
                    Targets::Unusable { .. }
                ),
                "{input}"
            );
        }
        assert_eq!(
            refs(&Targets::from_vm_arg(
                &keys,
                &json!({"hosts": ["db01", "jp-ubuntu:db01"], "pattern": "x"})
            )),
            ["db01", "jp-ubuntu"]
        );
        assert_eq!(
            refs(&Targets::from_vm_arg(
                &keys,
                &json!({"extra_vars": {"target": "db01"}})
            )),
            ["db01"]
        );
        assert_eq!(
            Targets::from_vm_arg(&keys, &json!({"other": "db01"})),
            Targets::Missing {
                looked_for: String::from("(`hosts`, `limit`, `/extra_vars/target`, `pattern`)")
            }
        );
    }
}
