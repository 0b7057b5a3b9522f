//! File copies over ssh: `scp`, `rsync` (with its `-e`/`RSYNC_RSH` remote shell) and `sftp`:
//! the remote operands (`host:path`), which side is written, and a dry run.

use super::ssh::{SshOptions, local_texts, read_rsh, ssh_option};
use super::{Ctx, finding, fixed, host_of, not_fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::types::{Arg, Class, Cmd, Target, Unknown};
use crate::shell::wrappers::lower_base;

/// A `host:path` operand: `Ok(Some(host))`, `Ok(None)` for a local path, `Err` when the host
/// is only known at run time.
fn remote_operand(arg: &Arg) -> Result<Option<String>, String> {
    let text = arg.value.as_deref().unwrap_or(&arg.raw);
    for scheme in ["scp://", "sftp://", "rsync://"] {
        if text.starts_with(scheme) {
            let host = host_of(text);
            return if arg.value.is_none() && host.contains('$') {
                Err(arg.raw.clone())
            } else {
                Ok(Some(host))
            };
        }
    }
    let Some((before, _)) = host_and_path(text) else {
        // No colon: local, unless the whole word is only known at run time.
        return if arg.value.is_none() {
            Err(arg.raw.clone())
        } else {
            Ok(None)
        };
    };
    if before.is_empty() || before.contains('/') {
        return Ok(None);
    }
    // `C:\dir` is a Windows drive, not a host called C.
    if before.len() == 1 && before.chars().all(|c| c.is_ascii_alphabetic()) {
        return Ok(None);
    }
    if arg.value.is_none() && (before.contains('$') || before.contains('`')) {
        return Err(arg.raw.clone());
    }
    Ok(Some(host_of(before.trim_end_matches(':'))))
}

/// `[user@]host:path` split at the colon that ends the host: after the `]` of a bracketed
/// IPv6 address (`root@[::ffff:10.0.0.31]:/etc/x`), else the first. `None`: no host part.
fn host_and_path(text: &str) -> Option<(&str, &str)> {
    let at = match text.split_once('@') {
        Some((user, _)) if !user.contains([':', '/', '[']) => user.len() + 1,
        _ => 0,
    };
    if text[at..].starts_with('[') {
        let close = at + text[at..].find("]:")?;
        return Some((&text[..=close], &text[close + 2..]));
    }
    text.split_once(':')
}

pub(super) fn copy(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let is_rsync = lower_base(name) == "rsync";
    let is_sftp = lower_base(name) == "sftp";
    let CopyArgs {
        operands,
        dry_run,
        removes_sources,
        batch,
        o,
    } = read_options(program, name, args, cmd);
    local_texts(ctx, &o)?;
    if is_sftp {
        return sftp(ctx, program, &operands, batch, &o);
    }
    let Some((destination, sources)) = operands.split_last() else {
        return Ok(());
    };
    let sources = if sources.is_empty() && is_rsync {
        // `rsync host:/path` alone lists the remote directory.
        std::slice::from_ref(destination)
    } else {
        sources
    };
    let listing = operands.len() == 1;
    for source in sources {
        if let Ok(Some(host)) = remote_operand(source) {
            let (class, why) = if removes_sources && !dry_run {
                (
                    Class::Mutating,
                    format!("copies from {host} and removes the source files there"),
                )
            } else {
                (Class::ReadOnly, format!("copies from {host}"))
            };
            ctx.findings.push(finding(
                program,
                vec![Target {
                    name: host,
                    kind: o.target_kind(source.text()),
                }],
                class,
                why,
            ));
        }
    }
    if listing {
        return Ok(());
    }
    match remote_operand(destination) {
        Err(raw) => ctx
            .findings
            .push(not_fixed(program, "the destination", &raw)),
        Ok(None) => {}
        Ok(Some(host)) => {
            let host = match o.endpoint(&host) {
                Ok(host) => host,
                Err(why) => {
                    ctx.findings.push(unknown_finding(program, why));
                    return Ok(());
                }
            };
            let (class, why) = if dry_run {
                (
                    Class::ReadOnly,
                    format!("only shows what it would copy to {host} (dry run)"),
                )
            } else {
                (Class::Mutating, format!("copies files to {host}"))
            };
            let mut f = finding(
                program,
                vec![Target {
                    name: host,
                    kind: o.target_kind(destination.text()),
                }],
                class,
                why,
            );
            f.remote.clone_from(&destination.value);
            ctx.findings.push(f);
        }
    }
    Ok(())
}

/// What a copy program's arguments say: its operands, and the options that change what it
/// does (a dry run, sources removed, an sftp batch, the ssh options it passes on).
struct CopyArgs {
    operands: Vec<Arg>,
    dry_run: bool,
    removes_sources: bool,
    batch: bool,
    o: SshOptions,
}

/// Reads a copy program's options (`rsync` and `sftp` have some of their own).
fn read_options(program: &Program, name: &str, args: &[Arg], cmd: &Cmd) -> CopyArgs {
    let is_rsync = lower_base(name) == "rsync";
    let is_sftp = lower_base(name) == "sftp";
    let mut operands = Vec::new();
    let mut dry_run = false;
    let mut removes_sources = false;
    let mut batch = false;
    let mut o = SshOptions::default();
    // `RSYNC_RSH='ssh -o HostName=…' rsync …`: the remote shell from the environment.
    if is_rsync
        && let Some(rsh) = cmd
            .assignments
            .iter()
            .find_map(|a| a.strip_prefix("RSYNC_RSH="))
    {
        read_rsh(rsh, &mut o);
    }
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if options_done || !text.starts_with('-') || text == "-" {
            operands.push(arg.clone());
            continue;
        }
        if text == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (key, inline) = long
                .split_once('=')
                .map_or((long, None), |(k, v)| (k, Some(v)));
            match key {
                "dry-run" => dry_run = true,
                // Sources removed, or a program run on the remote side in place of rsync.
                "remove-source-files" | "remove-sent-files" | "rsync-path" => {
                    removes_sources = true;
                }
                _ => {}
            }
            if inline.is_none() && program.takes_value(&format!("--{key}")) {
                i += 1;
            }
            if key == "rsh" {
                let value = inline
                    .map(str::to_owned)
                    .or_else(|| args.get(i - 1).map(|a| a.text().to_owned()));
                read_rsh(value.as_deref().unwrap_or_default(), &mut o);
            }
            continue;
        }
        let chars: Vec<char> = text[1..].chars().collect();
        for (k, c) in chars.iter().enumerate() {
            let option = format!("-{c}");
            if program.takes_value(&option) {
                let attached: String = chars[k + 1..].iter().collect();
                let value = if attached.is_empty() {
                    i += 1;
                    args.get(i - 1)
                        .map(|a| a.text().to_owned())
                        .unwrap_or_default()
                } else {
                    attached
                };
                // `-o Key=value`, and scp's and sftp's `-F` ssh configuration (rsync's `-F`
                // is a filter rule).
                if *c == 'o' || (*c == 'F' && !is_rsync) {
                    ssh_option(*c, &value, &mut o);
                }
                if *c == 'e' && is_rsync {
                    read_rsh(&value, &mut o);
                }
                if *c == 'b' && is_sftp {
                    batch = true;
                }
                break;
            }
            if *c == 'n' && is_rsync {
                dry_run = true;
            }
        }
    }
    CopyArgs {
        operands,
        dry_run,
        removes_sources,
        batch,
        o,
    }
}

fn sftp(
    ctx: &mut Ctx<'_>,
    program: &Program,
    operands: &[Arg],
    batch: bool,
    o: &SshOptions,
) -> Result<(), Unknown> {
    let Some(first) = operands.first() else {
        return Ok(());
    };
    let Some(text) = fixed(ctx, program, first, "the destination") else {
        return Ok(());
    };
    let (host, path) = if text.starts_with("sftp://") {
        (host_of(text), text.splitn(4, '/').nth(3).unwrap_or(""))
    } else {
        let (h, p) = host_and_path(text).unwrap_or((text, ""));
        (host_of(h), p)
    };
    let host = match o.endpoint(&host) {
        Ok(host) => host,
        Err(why) => {
            ctx.findings.push(unknown_finding(program, why));
            return Ok(());
        }
    };
    let target = Target {
        name: host.clone(),
        kind: o.target_kind(text),
    };
    let (class, why) = if !batch && !path.is_empty() && !path.ends_with('/') {
        (Class::ReadOnly, format!("fetches {path} from {host}"))
    } else if batch {
        (
            Class::Mutating,
            format!("runs a batch of sftp commands on {host}"),
        )
    } else {
        (
            Class::Mutating,
            format!("opens an interactive sftp session on {host}"),
        )
    };
    ctx.findings
        .push(finding(program, vec![target], class, why));
    Ok(())
}
