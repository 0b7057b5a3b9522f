//! Could a word name a machine? The protected-VM net and the test for words that could name
//! any host at all.
//!
//! A program the shell catalog does not know is not read by a grammar, so rewind cannot say
//! which machine it reaches. When one of its arguments names a machine rewind protects (as a
//! word, `user@host`, `host:path`, a URL, a UNC path `\\host\share`, an option's attached
//! value `/node:host`, `--host=host`, or a `NAME=value` whose value does), the hook asks. A
//! short list of programs that only look a name up or print it ([`INERT`]) stays undecided.

use crate::inventory::Inventory;

/// Programs that never change the machine a name in their arguments stands for: they print
/// it, search text for it, or ask a resolver or the network whether it answers.
const INERT: &[&str] = &[
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ping",
    "ping6",
    "fping",
    "dig",
    "host",
    "nslookup",
    "drill",
    "getent",
    "whois",
    "traceroute",
    "traceroute6",
    "tracepath",
    "mtr",
    "arping",
    // SNMP reads (snmpset is not here).
    "snmpwalk",
    "snmpbulkwalk",
    "snmpget",
    "snmpbulkget",
    "snmpgetnext",
    "snmptable",
    "snmpstatus",
    "snmpdf",
    "ssh-keygen",
    "ssh-keyscan",
    "true",
    "false",
    ":",
    "test",
    "[",
    "cd",
    "pwd",
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "less",
    "more",
    "sort",
    "uniq",
    "cut",
    "tr",
    "column",
    "diff",
    "jq",
    "yq",
    "man",
    "which",
    "type",
    "whereis",
    "sleep",
    "date",
    "export",
    "unset",
    "read",
    "local",
    "declare",
    "typeset",
    "readonly",
    // `builtin export …`: only a shell builtin, whose own words are judged.
    "builtin",
    "return",
    "exit",
    "set",
    "shift",
    // PowerShell's and cmd.exe's listings of a directory (`dir \\\\win01\\c$\\logs`).
    "dir",
    "gci",
    "write-host",
    "write-output",
    "select-string",
    "test-connection",
    "resolve-dnsname",
    "test-netconnection",
    "get-help",
    "get-command",
    // Windows built-ins that only query another machine (`/s host`, `/server:host`).
    "tasklist",
    "systeminfo",
    "getmac",
    "driverquery",
    "gpresult",
    "query",
    "quser",
    "qwinsta",
    "qprocess",
    "msg",
    "whoami",
    "nbtstat",
    "nltest",
    "ipconfig",
    "pathping",
    "tracert",
    // Dumps and key management that change no guest.
    "pg_dump",
    "pg_dumpall",
    "mysqldump",
    "salt-key",
    // Sessions opened for later commands, judged where those commands run.
    "new-cimsession",
    "connect-pssession",
    "connect-wsman",
    "enable-wsmancredssp",
];

/// PowerShell's verbs that only read, by the language's own convention (`Get-Service
/// -ComputerName win01`): such a cmdlet naming a protected machine needs no question.
const READING_VERBS: &[&str] = &[
    "get-",
    "test-",
    "measure-",
    "select-",
    "format-",
    "find-",
    "search-",
    "show-",
    "compare-",
    "resolve-",
    "convertto-",
    "convertfrom-",
    "receive-",
    "read-",
    "out-string",
    "out-host",
    "out-gridview",
    "trace-",
    "watch-",
    "wait-",
];

/// Whether a program only reads or prints whatever machine its words name.
pub(crate) fn is_inert(base: &str) -> bool {
    INERT.contains(&base)
        || (base.contains('-')
            && READING_VERBS.iter().any(|v| base.starts_with(v))
            && !matches!(
                base,
                "format-volume" | "format-disk" | "test-computersecurechannel"
            ))
}

/// Where a rough scan of command text for host names splits it: white space, quotes and the
/// shell's and PowerShell's separators (`;`, `|`, `&`, brackets, list commas).
pub(crate) fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | '|' | ';' | '&')
}

/// The host names a word may hold: the word itself, or the host of `user@host`,
/// `host:path`, `scheme://user@host:port/…`, `\\host\share`, `//host/share`, a comma list,
/// and the value of an attached option (`--host=h`, `/node:h`, `-ComputerName:h`) or of an
/// assignment (`DOCKER_HOST=ssh://h`).
pub(crate) fn hosts_in(word: &str) -> Vec<&str> {
    let mut hosts = Vec::new();
    collect(word, &mut hosts, 0);
    hosts
}

fn collect<'a>(word: &'a str, hosts: &mut Vec<&'a str>, depth: usize) {
    let word = word.trim_matches(|c: char| matches!(c, '"' | '\'' | ' '));
    if word.is_empty() || depth > 3 {
        return;
    }
    // `{"host":"web01"}`: each string of a JSON object or list.
    if ["{\"", "[{", "[\""].iter().any(|p| word.starts_with(p)) {
        for part in word
            .split(['{', '}', '[', ']', '"', ',', ':'])
            .filter(|p| !p.is_empty())
        {
            collect(part, hosts, depth + 1);
        }
        return;
    }
    // `-Hweb01`, `-Swin01`: a short option with its value attached.
    if let Some(value) = attached_short(word) {
        collect(value, hosts, depth + 1);
        return;
    }
    // `node/web01`: a machine named by its kind.
    if let Some((kind, name)) = word.split_once('/')
        && MACHINE_KINDS.contains(&kind)
        && !name.is_empty()
        && !name.contains('/')
    {
        hosts.push(name);
        return;
    }
    // `udp:web01:161`, `tcp:web02`: a transport before the address.
    if let Some((transport, rest)) = word.split_once(':')
        && TRANSPORTS.iter().any(|t| t.eq_ignore_ascii_case(transport))
        && !rest.starts_with("//")
    {
        collect(rest, hosts, depth + 1);
        return;
    }
    // An option with its value attached, or a `NAME=value` assignment.
    if let Some(value) = attached_value(word) {
        collect(value, hosts, depth + 1);
        return;
    }
    // An ADO or JDBC property list: `Server=db01;Database=app`, `Data Source=tcp:db01,1433;…`.
    if word.contains(';') && !word.contains("://") {
        for part in word.split(';') {
            let value = part.split_once('=').map_or(part, |(_, v)| v).trim();
            let value = value
                .get(..4)
                .filter(|p| p.eq_ignore_ascii_case("tcp:"))
                .map_or(value, |_| &value[4..]);
            collect(value, hosts, depth + 1);
        }
        return;
    }
    if word.contains(',') {
        for part in word.split(',') {
            collect(part, hosts, depth + 1);
        }
        return;
    }
    // PowerShell's WSMan drive: `WSMan:\host\…` configures that host.
    if let Some(rest) = word
        .get(..7)
        .filter(|drive| drive.eq_ignore_ascii_case("wsman:\\"))
        .and_then(|_| word.get(7..))
    {
        hosts.extend(rest.split('\\').next().filter(|h| !h.is_empty()));
        return;
    }
    // `\\host\share`, `//host/share`.
    if let Some(rest) = word
        .strip_prefix("\\\\")
        .or_else(|| word.strip_prefix("//"))
    {
        hosts.extend(rest.split(['\\', '/']).next().filter(|h| !h.is_empty()));
        return;
    }
    // `scheme://[user[:password]@]host[:port][/…]`, `jdbc:sqlserver://host:1433;…`.
    if let Some((_, rest)) = word.split_once("://") {
        let authority = rest.split(['/', '?', '#', ';']).next().unwrap_or_default();
        let host = authority.rsplit('@').next().unwrap_or(authority);
        hosts.push(strip_port(host));
        return;
    }
    // `user@host`, `user@host:path`, Oracle's `jdbc:oracle:thin:@//host:1521/service`.
    let after_user = word
        .rsplit_once('@')
        .map_or(word, |(_, host)| host.strip_prefix("//").unwrap_or(host));
    // `[v6]`, `[v6]:port`, `[v6]:path`.
    if let Some(inner) = after_user.strip_prefix('[') {
        hosts.extend(inner.split(']').next().filter(|h| !h.is_empty()));
        return;
    }
    // `host:path`, `host::module`, `host:/repo::archive` (not `C:\…`, not an IPv6 address).
    let host = match after_user.split_once(':') {
        Some((host, _))
            if host.len() > 1
                && !host.contains('/')
                && after_user.parse::<std::net::Ipv6Addr>().is_err() =>
        {
            host
        }
        _ => after_user,
    };
    if !host.contains(['/', '\\']) {
        hosts.push(host);
    }
}

/// The words before a `/` that make the rest a machine's name (`kubectl debug node/web01`).
const MACHINE_KINDS: &[&str] = &[
    "node", "nodes", "no", "host", "hosts", "machine", "machines",
];

/// The transports written before an address (`udp:web01:161`, `tcp:web02`).
const TRANSPORTS: &[&str] = &[
    "tcp", "udp", "tcp4", "tcp6", "udp4", "udp6", "tls", "dtls", "ssl", "sctp",
];

/// `-Hweb01`: the value attached to a one-letter option (not `--x`, not `-x=v`).
fn attached_short(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('-')?;
    let mut chars = rest.chars();
    let letter = chars.next()?;
    let value = chars.as_str();
    (letter.is_ascii_alphabetic()
        && !value.is_empty()
        && !value.starts_with('-')
        && !value.contains(['=', ':']))
    .then_some(value)
}

/// `--host=h`, `-H=h`, `/node:h`, `/s:h`, `-ComputerName:h`, `NAME=value`: the value.
fn attached_value(word: &str) -> Option<&str> {
    let (head, value) = if let Some(rest) = word.strip_prefix('/') {
        // `/node:h`; a path such as `/etc/x` has no `:` after a flag name.
        let (flag, value) = rest.split_once(':')?;
        if flag.is_empty() || !flag.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        (flag, value)
    } else {
        let at = word.find(['=', ':'])?;
        let (head, value) = (&word[..at], &word[at + 1..]);
        // `-x:v` and `--x=v` options; `NAME=value` assignments.
        let name = head.trim_start_matches('-');
        let is_option = head.starts_with('-') && word.as_bytes()[at] == b'='
            || head.starts_with('-') && head.len() > 2;
        let is_assignment = !head.starts_with('-')
            && word.as_bytes()[at] == b'='
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if name.is_empty() || !(is_option || is_assignment) {
            return None;
        }
        (head, value)
    };
    (!head.is_empty()).then_some(value)
}

fn strip_port(host: &str) -> &str {
    if let Some(inner) = host.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

/// The first protected machine `word` names, if any.
pub(crate) fn protected<'w>(word: &'w str, known: &Inventory) -> Option<&'w str> {
    if known.is_empty() {
        return None;
    }
    let named = |word: &'w str| {
        hosts_in(word)
            .into_iter()
            .map(|h| without_root_dot(h).unwrap_or(h))
            .find(|h| known.contains(h))
    };
    if let Some(host) = named(word) {
        return Some(host);
    }
    // `-t 'web01 db01'`: a list of machines in one word, every word of it a protected one
    // (a sentence or a command that mentions one is text, read elsewhere if it runs).
    let mut parts = word
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\''))
        .filter(|p| !p.is_empty())
        .peekable();
    parts.peek()?;
    let hosts: Option<Vec<&str>> = parts.map(named).collect();
    hosts?.into_iter().next()
}

/// `web01.corp.example.` without its root dot: the same machine. None for a name that has
/// none (or is only dots).
pub(crate) fn without_root_dot(name: &str) -> Option<&str> {
    name.strip_suffix('.')
        .filter(|n| !n.is_empty() && !n.ends_with('.'))
}

/// Whether `word` could name some machine, protected or not: a protected name, `user@host`,
/// `host:path`, a URL with a host, or a UNC path. Used where the program is not known at all
/// (a program name built at run time), so any hint of a host asks.
pub(crate) fn could_name_a_host(word: &str, known: &Inventory) -> bool {
    if protected(word, known).is_some() {
        return true;
    }
    let word = word.trim_matches(|c: char| matches!(c, '"' | '\''));
    if word.starts_with("\\\\") || word.contains("://") {
        return true;
    }
    if word.starts_with('-') || word.starts_with('/') || word.starts_with('.') {
        return false;
    }
    let host_like = |h: &str| {
        !h.is_empty()
            && h.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']'))
    };
    match word.split_once('@') {
        Some((user, rest)) if !user.is_empty() => {
            return host_like(rest.split(':').next().unwrap_or(rest));
        }
        _ => {}
    }
    matches!(word.split_once(':'), Some((host, _)) if host.len() > 1 && host_like(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_host_in_every_spelling() {
        let cases = [
            ("web01", vec!["web01"]),
            ("admin@web01", vec!["web01"]),
            ("admin@web01:/etc/app.conf", vec!["web01"]),
            ("web01:/etc/app.conf", vec!["web01"]),
            ("ssh://admin:pw@web01:22/", vec!["web01"]),
            ("qemu+ssh://root@kvm01/system", vec!["kvm01"]),
            ("https://[fe80::1]:8443/x", vec!["fe80::1"]),
            ("\\\\win01\\c$\\temp", vec!["win01"]),
            ("//win01/share", vec!["win01"]),
            ("/node:win01", vec!["win01"]),
            ("--host=web01", vec!["web01"]),
            ("-ComputerName:win01", vec!["win01"]),
            ("DOCKER_HOST=ssh://deploy@web01", vec!["web01"]),
            ("web01,db01", vec!["web01", "db01"]),
            ("web01::/srv-backup", vec!["web01"]),
            ("web01:/backup::{now}", vec!["web01"]),
            ("fe80::1", vec!["fe80::1"]),
            ("--host=[::ffff:a00:1f]", vec!["::ffff:a00:1f"]),
            ("root@[fe80::1]:/etc/x", vec!["fe80::1"]),
            ("jdbc:mysql://db01:3306/app", vec!["db01"]),
            ("jdbc:sqlserver://db01:1433;databaseName=app", vec!["db01"]),
            ("jdbc:oracle:thin:@db01:1521:orcl", vec!["db01"]),
            ("jdbc:oracle:thin:@//db01:1521/svc", vec!["db01"]),
            ("--url=jdbc:postgresql://db01/app", vec!["db01"]),
            ("Server=db01;Database=app", vec!["db01", "app"]),
            (
                "Data Source=tcp:db01,1433;Initial Catalog=app",
                vec!["db01", "1433", "app"],
            ),
            ("-Hweb01", vec!["web01"]),
            ("udp:web01:161", vec!["web01"]),
            ("TCP:web01", vec!["web01"]),
            ("node/web01", vec!["web01"]),
            ("target.host=web01", vec!["web01"]),
            ("{\"host\":\"web01\"}", vec!["host", "web01"]),
            ("./logs/web01/app.log", vec![]),
            ("/etc/web01.conf", vec![]),
        ];
        for (word, hosts) in cases {
            assert_eq!(hosts_in(word), hosts, "{word}");
        }
    }

    #[test]
    fn the_net_catches_protected_machines_only() {
        let known = Inventory::of(["web01", "10.0.0.5", "win01"]);
        assert_eq!(protected("deploy@web01", &known), Some("web01"));
        assert_eq!(protected("\\\\10.0.0.5\\c$", &known), Some("10.0.0.5"));
        assert_eq!(protected("web02", &known), None);
        assert_eq!(protected("web01.log", &known), None);
        assert_eq!(protected("localhost:8080", &known), None);
        assert_eq!(protected("web01.", &known), Some("web01"));
        assert_eq!(protected("web01 win01", &known), Some("web01"));
        assert_eq!(protected("ssh web01 reboot", &known), None);
    }

    #[test]
    fn words_that_could_name_any_host() {
        let known = Inventory::default();
        for word in [
            "a@b",
            "host:/path",
            "https://x/",
            "\\\\h\\s",
            "h.example:22",
        ] {
            assert!(could_name_a_host(word, &known), "{word}");
        }
        for word in [
            "main.c",
            "-o",
            "app",
            "./x:y",
            "/usr/bin/x",
            "--flag=a:b",
            "C:",
        ] {
            assert!(!could_name_a_host(word, &known), "{word}");
        }
    }
}
