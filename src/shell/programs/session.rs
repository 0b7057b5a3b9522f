//! Interactive sessions and host lists: `telnet`, `rlogin` (a session on one host), raw
//! sockets (`nc`, `ncat`, `socat`: what they send is not read, and a service may act on it)
//! and `pdsh`, `clush`, `pssh` (one command on a list of hosts), with their options as the
//! catalog lists them.

use super::unread::unread_program;
use super::{Ctx, finding, fixed, host_of, judge_remote};
use crate::shell::catalog::Program;
use crate::shell::types::{Arg, Class, Cmd, Target, TargetKind, Unknown};
use crate::shell::wrappers::attached;

/// Options read as the catalog lists them: returns the index of the first operand and the
/// options seen, each with its value when it takes one. A program whose value options
/// include a long single-dash one (`-pw`) never has its words split into letters.
fn read_options(program: &Program, args: &[Arg]) -> (usize, Vec<(String, Option<Arg>)>) {
    let long_single = program
        .value_options
        .iter()
        .chain(&program.host_options)
        .any(|o| !o.starts_with("--") && o.len() > 2);
    let takes = |o: &str| program.takes_value(o) || program.host_options.iter().any(|h| h == o);
    let mut seen = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "--" {
            return (i + 1, seen);
        }
        if !text.starts_with('-') || text.len() < 2 {
            return (i, seen);
        }
        i += 1;
        if let Some((key, _)) = text.split_once('=').filter(|_| text.starts_with("--")) {
            seen.push((key.to_owned(), Some(attached(arg, key.len() + 1))));
            continue;
        }
        if takes(text) {
            seen.push((text.to_owned(), args.get(i).cloned()));
            i += 1;
            continue;
        }
        if text.starts_with("--") || long_single {
            seen.push((text.to_owned(), None));
            continue;
        }
        // A bundle of letters: the first that takes a value takes the rest or the next word.
        for (k, c) in text[1..].char_indices() {
            let option = format!("-{c}");
            if takes(&option) {
                let value = if 1 + k + c.len_utf8() < text.len() {
                    Some(attached(arg, 1 + k + c.len_utf8()))
                } else {
                    i += 1;
                    args.get(i - 1).cloned()
                };
                seen.push((option, value));
                break;
            }
            seen.push((option, None));
        }
    }
    (i, seen)
}

pub(super) fn session(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let args = &cmd.words[1..];
    let (at, seen) = read_options(program, args);
    if matches!(program.names[0].as_str(), "nc" | "socat") {
        return socket(ctx, program, name, cmd, &args[at.min(args.len())..], &seen);
    }
    let Some(host) = args.get(at) else {
        // No host: the program's own prompt, where a host may be opened later.
        return Ok(());
    };
    let Some(host) = fixed(ctx, program, host, "the host") else {
        return Ok(());
    };
    ctx.findings.push(finding(
        program,
        vec![Target {
            name: host_of(host),
            kind: TargetKind::Host,
        }],
        Class::Mutating,
        String::from("opens an interactive session on the host"),
    ));
    Ok(())
}

/// A raw socket (`nc db01 6379`, `ncat --ssl db01 443`, `socat - TCP:db01:6379`): what it
/// sends a service on a protected machine may change it, so that machine is checkpointed. A
/// listener or a port probe (`nc -l`, `nc -z`) sends nothing anywhere. A host that is not a
/// protected machine, or is only known when the command runs, is left to the rest of the
/// analysis, as for a program no grammar reads.
fn socket(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    cmd: &Cmd,
    operands: &[Arg],
    seen: &[(String, Option<Arg>)],
) -> Result<(), Unknown> {
    let listens = seen
        .iter()
        .any(|(option, _)| matches!(option.as_str(), "-l" | "--listen" | "-z"));
    let hosts: Vec<Option<String>> = if program.names[0] == "socat" {
        operands
            .iter()
            .filter_map(|a| match a.value.as_deref() {
                Some(address) => socat_host(address).map(Some),
                // An address known only when it runs may connect anywhere.
                None => Some(None),
            })
            .collect()
    } else if listens {
        Vec::new()
    } else {
        operands
            .first()
            .map(|a| a.value.as_deref().map(host_of))
            .into_iter()
            .collect()
    };
    // `socat TCP-LISTEN:2222,fork TCP:web01:22`: a port here relays to the host.
    let relays = program.names[0] == "socat"
        && operands.iter().any(|a| {
            a.value.as_deref().is_some_and(|v| {
                v.split([':', ',']).next().is_some_and(|kind| {
                    kind.to_ascii_uppercase().ends_with("-LISTEN")
                        || kind.eq_ignore_ascii_case("TCP-L")
                })
            })
        });
    if relays && let [Some(host)] = hosts.as_slice() {
        ctx.forwarded = Some(Target {
            name: host.clone(),
            kind: TargetKind::Host,
        });
    }
    let mut targets = Vec::new();
    for host in &hosts {
        match host {
            Some(host) if ctx.known.contains(host) => targets.push(Target {
                name: host.clone(),
                kind: TargetKind::Host,
            }),
            _ => return unread_program(ctx, name, cmd),
        }
    }
    if !targets.is_empty() {
        ctx.findings.push(finding(
            program,
            targets,
            Class::Mutating,
            String::from(
                "opens a raw connection to the host, whose service may act on what it sends",
            ),
        ));
    }
    Ok(())
}

/// The host a socat address connects to: `TCP:db01:6379`, `TCP4:`, `TCP6:`, `TCP-CONNECT:`,
/// `OPENSSL:db01:443`, `SSL:`, `UDP:`, `SCTP-CONNECT:` (`[v6]:port` too, options after a
/// comma), and the end host of `SOCKS4:proxy:db01:6379` or `PROXY:proxy:db01:6379`. `None`:
/// an address that connects nowhere else (`-`, `STDIO`, `TCP-LISTEN:`, `EXEC:`, a file).
pub(crate) fn socat_host(address: &str) -> Option<String> {
    let (kind, rest) = address.split_once(':')?;
    let kind = kind.to_ascii_uppercase();
    let rest = rest.split(',').next().unwrap_or(rest);
    let fields = |text: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut text = text;
        while !text.is_empty() {
            if let Some(inner) = text.strip_prefix('[') {
                let (host, after) = inner.split_once(']').unwrap_or((inner, ""));
                out.push(host.to_owned());
                text = after.strip_prefix(':').unwrap_or(after);
            } else {
                let (field, after) = text.split_once(':').unwrap_or((text, ""));
                out.push(field.to_owned());
                text = after;
            }
        }
        out
    };
    let at = match kind.as_str() {
        "TCP" | "TCP4" | "TCP6" | "TCP-CONNECT" | "TCP4-CONNECT" | "TCP6-CONNECT" | "OPENSSL"
        | "SSL" | "OPENSSL-CONNECT" | "UDP" | "UDP4" | "UDP6" | "UDP-CONNECT" | "UDP-SENDTO"
        | "SCTP" | "SCTP-CONNECT" | "DCCP-CONNECT" => 0,
        "SOCKS" | "SOCKS4" | "SOCKS4A" | "SOCKS5" | "SOCKS5-CONNECT" | "PROXY"
        | "PROXY-CONNECT" => 1,
        _ => return None,
    };
    fields(rest).into_iter().nth(at).filter(|h| !h.is_empty())
}

/// One host of a host list (`web01`, `user@web01`, `ssh:user@web01`, `web01:2222`); `Err`
/// when it stands for hosts that are not written here (`^file`, `@group`, `web[01-03]`).
fn list_host(item: &str) -> Result<Option<String>, String> {
    if item.starts_with('-') {
        // pdsh's `-w -web02`: an exclusion only narrows the list.
        return Ok(None);
    }
    if item.starts_with(['^', '@', '/']) || item.contains(['[', ']', '*', '?']) {
        return Err(format!(
            "`{item}` stands for hosts (a file, a group, a range or a pattern) that are not written here"
        ));
    }
    let host = host_of(item);
    let host = match host.split_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h.to_owned(),
        Some((_, h)) => h.to_owned(),
        None => host,
    };
    Ok(Some(host))
}

pub(super) fn host_list(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let (at, seen) = read_options(program, args);
    let mut targets = Vec::new();
    let mut unknown = None;
    for (option, value) in &seen {
        if program.other_host_options.iter().any(|o| o == option) {
            unknown = Some(format!(
                "`{option}` picks hosts from a file, a group or the whole cluster, which are not read"
            ));
        }
        if !program.host_options.iter().any(|o| o == option) {
            continue;
        }
        let Some(value) = value else {
            unknown = Some(format!("`{option}` has no value"));
            continue;
        };
        let Some(list) = value.value.as_deref() else {
            unknown = Some(format!(
                "the hosts `{}` are only known when the command runs",
                value.raw
            ));
            continue;
        };
        for item in list
            .split([',', ' '])
            .map(str::trim)
            .filter(|i| !i.is_empty())
        {
            match list_host(item) {
                Ok(Some(name)) => targets.push(Target {
                    name,
                    kind: TargetKind::Host,
                }),
                Ok(None) => {}
                Err(why) => unknown = Some(why),
            }
        }
    }
    if targets.is_empty() && unknown.is_none() {
        unknown = Some(String::from(
            "names no host, so the hosts are its default list, which is not read",
        ));
    }
    let words = &args[at.min(args.len())..];
    let (class, why, remote) = if words.is_empty() {
        (
            Class::Mutating,
            String::from("opens an interactive session on the hosts"),
            None,
        )
    } else {
        let (text, class, why) = judge_remote(ctx, words, cmd);
        (class, why, Some(text))
    };
    let mut f = finding(program, targets, class, why);
    f.remote = remote;
    if class == Class::Mutating {
        f.unknown = unknown;
    }
    ctx.findings.push(f);
    Ok(())
}
