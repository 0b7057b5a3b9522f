//! Windows remoting: `winrs` (`-r:host`), `psexec` (`\\host`) and `smbclient` (a share and the
//! commands run on it), each remote command judged against the Windows read-only list.

use super::exec::{self, Exec, Inner, Shell};
use super::{Ctx, finding, host_of, not_fixed};
use crate::shell::catalog::{Grammar, Program};
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown};

pub(super) fn winrs(ctx: &mut Ctx<'_>, args: &[Arg]) -> Result<(), Unknown> {
    let program = ctx
        .catalog
        .program("winrs")
        .cloned()
        .unwrap_or_else(|| fallback_program("winrs", Grammar::Winrs));
    let mut host = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let lower = arg.raw.to_ascii_lowercase();
        if !lower.starts_with(['-', '/']) {
            break;
        }
        let flag = lower.trim_start_matches(['-', '/']);
        if let Some((key, _)) = flag.split_once(':')
            && (key == "r" || key == "remote")
        {
            host = Some(match &arg.value {
                Some(v) => Ok(v.split_once(':').map_or("", |(_, h)| h).to_owned()),
                None => Err(arg.raw.clone()),
            });
        }
        i += 1;
    }
    let Some(host) = host else {
        return Ok(());
    };
    let targets = match host {
        Ok(h) => Ok(vec![Target {
            name: host_of(
                h.trim_start_matches("http://")
                    .trim_start_matches("https://"),
            ),
            kind: TargetKind::Host,
        }]),
        Err(raw) => Err(format!(
            "the host in `{raw}` is only known when the command runs"
        )),
    };
    let words = &args[i.min(args.len())..];
    let inner = if words.is_empty() {
        Inner::Unread(String::from("opens a remote shell"))
    } else {
        Inner::Line(words.to_vec())
    };
    exec::run(
        ctx,
        &program,
        Exec {
            targets,
            inner,
            shell: Shell::Cmd,
            stdin: Stdin::Inherited,
        },
    )
}

fn fallback_program(name: &str, grammar: Grammar) -> Program {
    Program {
        names: vec![name.to_owned()],
        grammar,
        value_options: Vec::new(),
        read_only: Vec::new(),
        mutating: Vec::new(),
        host_options: Vec::new(),
        other_host_options: Vec::new(),
        host_operand: None,
        host_env: Vec::new(),
        other_host_env: Vec::new(),
        mutating_options: Vec::new(),
        without_host_asks: false,
        windows_flags: false,
        request_items: false,
        dialect: None,
        scope: Vec::new(),
        ask_actions: Vec::new(),
        method_options: Vec::new(),
        remote_command: None,
        exec: Vec::new(),
        exec_kwargs: Vec::new(),
        vm_options: Vec::new(),
        vm_operand: None,
        cmdlet: false,
        origin: String::from("builtin"),
    }
}

pub(super) fn psexec(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let mut i = 0;
    let mut hosts: Option<Result<Vec<String>, String>> = None;
    let mut copied = false;
    while let Some(arg) = args.get(i) {
        // A word known only when it runs is shown as written, quotes and all (`"\\$server"`).
        let text = arg.text().trim_start_matches(['"', '\'']);
        // `\\host` as PowerShell or cmd pass it; `\host` once bash has unescaped it.
        if let Some(list) = text
            .strip_prefix("\\\\")
            .or_else(|| text.strip_prefix('\\'))
        {
            hosts = Some(if arg.value.is_none() || list == "*" {
                Err(arg.raw.clone())
            } else {
                Ok(list.split(',').map(str::to_owned).collect())
            });
            i += 1;
            continue;
        }
        if text.starts_with('@') {
            hosts = Some(Err(arg.raw.clone()));
            i += 1;
            continue;
        }
        if text.starts_with('-') {
            // `-c`: the program is copied from this machine and run, whatever its name.
            copied |= text.eq_ignore_ascii_case("-c");
            i += if program.takes_value(&text.to_ascii_lowercase()) {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let targets = match hosts {
        None => return Ok(()),
        Some(Err(raw)) => Err(format!(
            "the computers in `{raw}` are only known when the command runs"
        )),
        Some(Ok(hosts)) => Ok(hosts
            .into_iter()
            .map(|name| Target {
                name,
                kind: TargetKind::Host,
            })
            .collect()),
    };
    let words = &args[i.min(args.len())..];
    let inner = if words.is_empty() {
        Inner::Unread(String::from("runs a program on the computer"))
    } else if copied {
        Inner::Unread(String::from(
            "copies a program from this machine (-c) and runs it on the computer",
        ))
    } else {
        Inner::Line(words.to_vec())
    };
    exec::run(
        ctx,
        program,
        Exec {
            targets,
            inner,
            shell: Shell::Cmd,
            stdin: Stdin::Inherited,
        },
    )
}

pub(super) fn smbclient(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let mut service = None;
    let mut list_host = None;
    let mut commands: Option<Arg> = None;
    let mut tar_extract = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        match text {
            "-c" | "--command" => {
                commands = args.get(i).cloned();
                i += 1;
            }
            "-L" | "--list" => {
                list_host = args.get(i).cloned();
                i += 1;
            }
            _ if text.starts_with("-T") => {
                let value = if text.len() > 2 {
                    text[2..].to_owned()
                } else {
                    i += 1;
                    args.get(i - 1)
                        .map(|a| a.text().to_owned())
                        .unwrap_or_default()
                };
                tar_extract = Some(value.contains('x'));
            }
            _ if text.starts_with('-') && program.takes_value(text) => i += 1,
            _ if text.starts_with('-') => {}
            _ if service.is_none() => service = Some(arg.clone()),
            _ => {}
        }
    }

    if let Some(host) = list_host.filter(|_| service.is_none()) {
        let host = share_host(&host).unwrap_or_default();
        ctx.findings.push(finding(
            program,
            vec![Target {
                name: host,
                kind: TargetKind::Host,
            }],
            Class::ReadOnly,
            String::from("lists the shares"),
        ));
        return Ok(());
    }
    let Some(service) = service else {
        return Ok(());
    };
    let host = match share_host(&service) {
        Ok(host) => host,
        Err(raw) => {
            ctx.findings.push(not_fixed(program, "the share", &raw));
            return Ok(());
        }
    };
    let script = commands.or(match &cmd.stdin {
        Stdin::Text(text) => Some(text.clone()),
        _ => None,
    });
    let (class, why) = smbclient_class(program, tar_extract, script.as_ref());
    let mut f = finding(
        program,
        vec![Target {
            name: host,
            kind: TargetKind::Host,
        }],
        class,
        why,
    );
    f.remote = script.map(|s| s.value.unwrap_or(s.raw));
    ctx.findings.push(f);
    Ok(())
}

/// The host a share (`//host/share`, `\\host\share`) names, or its text when that is only
/// known when the command runs.
fn share_host(arg: &Arg) -> Result<String, String> {
    let Some(text) = arg.value.as_deref() else {
        return Err(arg.raw.clone());
    };
    let trimmed = text.trim_start_matches(['/', '\\']);
    Ok(trimmed
        .split(['/', '\\'])
        .next()
        .unwrap_or(trimmed)
        .to_owned())
}

/// What an smbclient call does to its share: a tar extract or archive, an interactive session,
/// or the commands it is given (`-c`, standard input), each judged.
fn smbclient_class(
    program: &Program,
    tar_extract: Option<bool>,
    script: Option<&Arg>,
) -> (Class, String) {
    match (tar_extract, script) {
        (Some(true), _) => (
            Class::Mutating,
            String::from("extracts a tar file onto the share"),
        ),
        (Some(false), _) => (
            Class::ReadOnly,
            String::from("archives the share into a tar file"),
        ),
        (None, None) => (
            Class::Mutating,
            String::from("opens an interactive session on the share"),
        ),
        (None, Some(script)) => match &script.value {
            None => (
                Class::Mutating,
                String::from("its commands are only known when the command runs"),
            ),
            Some(text) => {
                let writer = text
                    .split([';', '\n'])
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(|c| c.split_whitespace().next().unwrap_or(c))
                    .find(|word| !program.is_read_only(&word.to_ascii_lowercase()));
                match writer {
                    Some(word) => (Class::Mutating, format!("`{word}` changes the share")),
                    None => (Class::ReadOnly, String::from("its commands only read")),
                }
            }
        },
    }
}
