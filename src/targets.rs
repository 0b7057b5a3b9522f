//! Which VMs a tool call reaches: an exact list of references, or why that cannot be known.
//!
//! Every classifier feeds the decision table through [`Targets`]: a catalog entry's `vm_arg`
//! (read here, as an Ansible-style host pattern), a server bound to one host, and the shell
//! classifier with the hosts it found on a command line. A value is read as a host pattern:
//!
//! - separators `,` `:` `;` and whitespace split it into hosts (`web01:db01` is two hosts);
//!   `host:port` stays one host when everything after the `:` is digits, and `[ip]:port`,
//!   `user@host` and `ssh://user@host:port/` forms are single references (only in exactly
//!   those shapes: `[ip]:22:db01` is two hosts, a URL with anything more is unknowable);
//!   `user:password@host` is the one host `user@host`, its password kept nowhere;
//! - `all`, `*`, globs (`*`, `?`, `[…]`), subscripts (`web[0:2]`: Ansible takes the hosts of
//!   the group `web` by position, not `web0`…`web2`), regexes (`~…`), operators (`!x`, `&x`)
//!   and files (`@hosts.txt`) name hosts that cannot be known without an inventory: the
//!   targets are unknowable, and the part that is says so.

use serde_json::Value;

/// Most hosts one value may name before it counts as unknowable (a bound on work; the
/// decision table asks long before, at `[hook] max_vms`).
const EXPANSION_MAX: usize = 4096;

/// Which VMs a call reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targets {
    /// Exactly these references (never empty, no duplicates ignoring case), each to be
    /// resolved to one VM.
    Exact(Vec<VmRef>),
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
pub struct VmRef {
    /// A VM name, vmIdentifier, IP, `user@host`, `host:port` or FQDN.
    pub reference: String,
    /// Where it came from, for messages: ``the argument `limit` ``, ``the command `ssh …` ``.
    pub source: String,
}

impl Targets {
    /// Exact targets from references found in one place; duplicates (ignoring case) dropped.
    /// An empty list is [`Targets::Missing`].
    pub fn exact(references: impl IntoIterator<Item = String>, source: &str) -> Targets {
        let mut list: Vec<VmRef> = Vec::new();
        for reference in references {
            if !list
                .iter()
                .any(|t| t.reference.eq_ignore_ascii_case(&reference))
            {
                list.push(VmRef {
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

    /// The targets of a catalog entry's `vm_arg` keys: every key present in `input` names
    /// VMs, since which of them the server acts on is not known (`{"host": "web01",
    /// "target": "db01"}` reaches both). A present value that is unusable or unknowable
    /// decides for the whole call (hole-free: it never falls through to another key).
    pub fn from_vm_arg(keys: &[String], input: &Value) -> Targets {
        let mut found: Vec<VmRef> = Vec::new();
        for key in keys {
            let value = if key.starts_with('/') {
                input.pointer(key)
            } else {
                input.get(key)
            };
            let Some(value) = value else { continue };
            match Targets::from_value(value, &format!("`{key}`")) {
                Targets::Exact(refs) => {
                    for r in refs {
                        if !found
                            .iter()
                            .any(|t| t.reference.eq_ignore_ascii_case(&r.reference))
                        {
                            found.push(r);
                        }
                    }
                }
                other => return other,
            }
        }
        if !found.is_empty() {
            return Targets::Exact(found);
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
    for part in pattern_parts(pattern) {
        if part.contains("://") {
            // `ssh://user@host:port/`: one reference, but only in exactly that shape. Ansible
            // splits any other `:` in it (`ssh://a/:db01` is also db01).
            if !is_url_reference(&part) {
                return Err(unknowable(
                    &part,
                    "is a URL with more in it than a user, a host and a port",
                ));
            }
            hosts.push(part);
            continue;
        }
        if part.starts_with('~') {
            return Err(unknowable(&part, "is a regular expression"));
        }
        if part.starts_with('@') {
            return Err(unknowable(&part, "reads hosts from a file"));
        }
        if part.starts_with('!') {
            return Err(unknowable(&part, "excludes hosts from a set"));
        }
        if part.starts_with('&') {
            return Err(unknowable(&part, "intersects with a set of hosts"));
        }
        if part.eq_ignore_ascii_case("all") || part == "*" {
            return Err(unknowable(&part, "means every host in the inventory"));
        }
        if part.starts_with('[') {
            if !is_bracketed_ip(&part) {
                return Err(unknowable(&part, "is a glob"));
            }
        } else if part.contains(['[', ']']) {
            // Ansible reads `web[0:2]` as the first hosts of the group `web` (a subscript,
            // by position), and `db[ab]` as a glob: neither names hosts by itself.
            return Err(unknowable(
                &part,
                "selects hosts by position in a group, or is a glob",
            ));
        }
        if part.contains(['*', '?']) {
            return Err(unknowable(&part, "is a glob"));
        }
        hosts.push(part);
    }
    Ok(hosts)
}

/// The parts of an Ansible host pattern, each a host, a group, a glob or an operator
/// (`!x`, `&x`), as in the module docs: split at `,` `;` and whitespace outside brackets,
/// then at `:`, keeping `host:port`, `[ip]:port`, a bare IPv6 address and a
/// `scheme://…` reference whole (`web01:8080` is one host on port 8080, `web01:db01` two
/// hosts). `user:password@host` is `user@host`, its password kept nowhere. The one reading of
/// a pattern, for a catalog's `vm_arg` and for `ansible` on a command line.
pub(crate) fn pattern_parts(pattern: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for chunk in split_outside_brackets(pattern, |c| c == ',' || c == ';' || c.is_whitespace()) {
        // `user:password@host` (a URL's or not): one host, reached as `user@host`. The
        // password is no host (`admin:x@web01` is not `admin` and `x@web01`).
        let chunk = drop_password(chunk);
        if chunk.contains("://") {
            parts.push(chunk);
        } else {
            parts.extend(split_colons(&chunk).into_iter().map(str::to_owned));
        }
    }
    parts
}

/// `chunk` with the password of a `user:password@` in front of its host left out:
/// `admin:x@web01` is `admin@web01`, `ssh://admin:x@web01:22/` is `ssh://admin@web01:22/`.
fn drop_password(chunk: &str) -> String {
    let (scheme, rest) = match chunk.find("://") {
        Some(at) => chunk.split_at(at + 3),
        None => ("", chunk),
    };
    let authority_end = if scheme.is_empty() {
        rest.len()
    } else {
        rest.find(['/', '?', '#']).unwrap_or(rest.len())
    };
    let Some(at) = rest[..authority_end].rfind('@') else {
        return chunk.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) if !user.is_empty() && !user.contains(['[', ']']) => {
            format!("{scheme}{user}{}", &rest[at..])
        }
        _ => chunk.to_owned(),
    }
}

/// `[ip]` or `[ip]:port`, and nothing else.
fn is_bracketed_ip(part: &str) -> bool {
    let Some((inner, rest)) = part.strip_prefix('[').and_then(|p| p.split_once(']')) else {
        return false;
    };
    let port_ok = rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|port| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()));
    port_ok && inner.parse::<std::net::IpAddr>().is_ok()
}

/// `scheme://[user@]host[:port][/path]` where the host is a name or a bracketed IP, the port
/// digits, and the path has no `:`.
fn is_url_reference(chunk: &str) -> bool {
    let Some((scheme, rest)) = chunk.split_once("://") else {
        return false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host_ok = if host.starts_with('[') {
        is_bracketed_ip(host)
    } else {
        let (name, port) = host.split_once(':').unwrap_or((host, ""));
        !name.is_empty()
            && !name.contains(['[', ']', ':', '*', '?'])
            && port.chars().all(|c| c.is_ascii_digit())
    };
    scheme_ok && host_ok && !path.contains(':') && !rest.contains("://")
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
/// `[v6]:port` and bare IPv6 addresses whole. `[v6]:22:db01` is `[v6]:22` and `db01`.
fn split_colons(chunk: &str) -> Vec<&str> {
    if chunk.parse::<std::net::Ipv6Addr>().is_ok() {
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
    fn a_password_in_a_reference_is_no_host_and_is_kept_nowhere() {
        assert_eq!(
            refs(&pattern("admin:S3CR3T@unknownvm")),
            ["admin@unknownvm"]
        );
        assert_eq!(
            refs(&pattern("ssh://admin:S3CR3T@web01:22/")),
            ["ssh://admin@web01:22/"]
        );
        assert_eq!(
            refs(&pattern("https://admin:S3CR3T@web01/,db01")),
            ["https://admin@web01/", "db01"]
        );
        // Not a password: Ansible's `web01:db01` and `user@host:22` are as before.
        assert_eq!(refs(&pattern("web01:db01")), ["web01", "db01"]);
        assert_eq!(refs(&pattern("root@web01:22")), ["root@web01:22"]);
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
            ("[fe80::1]:22", &["[fe80::1]:22"]),
            ("[fe80::1]:22:db01", &["[fe80::1]:22", "db01"]),
            ("[10.0.0.11]:db01", &["[10.0.0.11]", "db01"]),
            ("fe80::1", &["fe80::1"]),
            ("ssh://root@jp-ubuntu:22/", &["ssh://root@jp-ubuntu:22/"]),
            ("db01,DB01", &["db01"]),
        ];
        for (text, expected) in cases {
            assert_eq!(refs(&pattern(text)), *expected, "{text}");
        }
    }

    /// The one split of a pattern, shared with the shell's `ansible` and `ansible-playbook`:
    /// groups, globs and operators come out as parts for an inventory to expand.
    #[test]
    fn a_pattern_splits_into_parts_keeping_ports_and_ipv6_addresses_whole() {
        let cases: &[(&str, &[&str])] = &[
            ("web01:8080", &["web01:8080"]),
            ("web01:db01", &["web01", "db01"]),
            ("webservers:!web02", &["webservers", "!web02"]),
            ("web*:&prod", &["web*", "&prod"]),
            ("web[0:2]:db01", &["web[0:2]", "db01"]),
            ("fe80::1", &["fe80::1"]),
            ("[fe80::1]:22:db01", &["[fe80::1]:22", "db01"]),
            ("web01 db01,all", &["web01", "db01", "all"]),
            ("admin:S3CR3T@web01:22", &["admin@web01:22"]),
            ("ssh://root@web01:22/", &["ssh://root@web01:22/"]),
        ];
        for (text, expected) in cases {
            assert_eq!(pattern_parts(text), *expected, "{text}");
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
            // Subscripts pick a group's hosts by position; letters in brackets are a glob.
            ("web[01:03]", "web[01:03]"),
            ("web[2]", "web[2]"),
            ("db[a:c].lab", "db[a:c].lab"),
            ("[jp-ubuntu]", "[jp-ubuntu]"),
            ("[10.0.0.11]x", "[10.0.0.11]x"),
            // A URL is one reference only as user, host and port.
            ("ssh://root@10.0.0.11/:db01", "ssh://root@10.0.0.11/:db01"),
            (
                "ssh://root@jp-ubuntu:22/x:db01",
                "ssh://root@jp-ubuntu:22/x:db01",
            ),
            ("ssh://[10.0.0.11]:22:db01", "ssh://[10.0.0.11]:22:db01"),
            ("db01:ssh://jp-ubuntu", "db01:ssh://jp-ubuntu"),
        ] {
            match pattern(text) {
                Targets::Unknowable { part: got, .. } => assert_eq!(got, part, "{text}"),
                other => panic!("{text}: unknowable expected, got {other:?}"),
            }
        }
    }

    #[test]
    fn every_present_key_names_vms_and_an_unusable_one_decides() {
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
            ["db01", "jp-ubuntu", "x"]
        );
        assert_eq!(
            refs(&Targets::from_vm_arg(
                &keys,
                &json!({"hosts": "jp-ubuntu", "pattern": "db01", "limit": "JP-UBUNTU"})
            )),
            ["jp-ubuntu", "db01"]
        );
        assert!(matches!(
            Targets::from_vm_arg(&keys, &json!({"hosts": "jp-ubuntu", "pattern": "web*"})),
            Targets::Unknowable { .. }
        ));
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
