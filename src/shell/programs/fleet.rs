//! The `fleet` grammar: programs that act on other machines named by an option (`-H host`,
//! `/s host`, `/node:host`, `--host=ssh://host`), by an operand (`salt web01 …`, `cssh a b`,
//! `sc \\win01 stop x`, `curl http://web01/…`) or by the environment (`DOCKER_HOST=…`), and
//! do one action there that the catalog lists as read-only or not.
//!
//! What the catalog entry says (see `catalogs/shell.toml`): `host_options` (value lists hosts),
//! `other_host_options` (hosts picked from a file, a group or a query: ask), `host_operand`
//! (`"1"`, `"2"`: that operand; `"all"`: every operand; `"unc"`: operands written
//! `\\host\…`; `"url"`: operands that are URLs), `host_env` (variables naming the host),
//! `read_only` (actions, globs; entries starting with `-` or `/` are flags that make the
//! whole call read-only, such as a dry run; `""` means no action at all only reads),
//! `mutating_options` (options that change something whatever the action), and
//! `without_host` (`"local"`: with no host named the program acts on this machine;
//! `"ask"`: the hosts come from somewhere not written, such as a fabfile).

#![expect(
    clippy::unnecessary_wraps,
    reason = "every grammar has the one signature `command` dispatches to"
)]

use super::exec::{self, Exec, Inner, Shell};
use super::flow::{self, Held};
use super::{Ctx, finding, unknown_finding, unread_program};
use crate::shell::catalog::Program;
use crate::shell::net;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown};

/// Reads one fleet program's arguments into a finding.
pub(super) fn fleet(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let Options {
        owned,
        operands,
        flags,
        mut elsewhere,
        objects,
        reads_only,
    } = read_options(ctx, program, args);
    let mut hosts: Vec<&Arg> = Vec::new();
    hosts.extend(owned.iter());
    let action_at = operand_hosts(program, !owned.is_empty(), &operands, &mut hosts);
    let env = env_hosts(ctx, program, cmd, &mut elsewhere);
    hosts.extend(env.iter());

    let action = operands
        .iter()
        .enumerate()
        .filter(|(k, a)| *k >= action_at && !hosts.iter().any(|h| std::ptr::eq(*h, **a)))
        .map(|(_, a)| a.text())
        .next();
    let second = operands
        .iter()
        .enumerate()
        .filter(|(k, _)| *k > action_at)
        .map(|(_, a)| a.text())
        .next();
    // `aws ec2 reboot-instances`: only a service in scope is this program's business, and
    // its action is the next word.
    let action = if program.scope.is_empty() {
        action
    } else if action.is_some_and(|a| program.scope.iter().any(|s| s == a)) {
        second
    } else {
        return Ok(());
    };
    let both = match (action, second) {
        (Some(a), Some(b)) => format!("{a} {b}"),
        (Some(a), None) => a.to_owned(),
        _ => String::new(),
    };
    if let Some(asked) = program
        .ask_actions
        .iter()
        .find(|a| both == **a || both.starts_with(&format!("{a} ")))
    {
        ctx.findings.push(unknown_finding(
            program,
            format!(
                "`{} {asked}` points later commands at a machine that is not read here",
                program.names[0]
            ),
        ));
        return Ok(());
    }
    let rest: Vec<&Arg> = operands
        .iter()
        .enumerate()
        .filter(|(k, a)| *k >= action_at && !hosts.iter().any(|h| std::ptr::eq(*h, **a)))
        .map(|(_, a)| *a)
        .skip(usize::from(!program.scope.is_empty()))
        .collect();
    if let Some(mut inner) = exec_command(program, args, &rest, &flags) {
        // `pyinfra … exec --shell-executable /tmp/x -- uptime`: what runs it changes.
        if let Some(option) = flags.iter().find(|f| program.mutating_options.contains(f)) {
            inner = Inner::Unread(format!("`{option}` changes what runs the command"));
        }
        return exec_on_hosts(ctx, program, &hosts, elsewhere, inner, cmd);
    }
    let words: Vec<String> = operands.iter().map(|a| a.text().to_owned()).collect();
    let class = if reads_only {
        Class::ReadOnly
    } else if program.host_operand.as_deref() == Some("url")
        && hosts.iter().any(|h| url_names_an_action(h.text()))
    {
        Class::Mutating
    } else {
        // `qm guest cmd 101 get-osinfo`: an entry of several words may name an operand too.
        let all: Vec<&str> = rest.iter().map(|a| a.text()).collect();
        class_of(
            program,
            &flags,
            &words,
            action,
            &[both.as_str(), &all.join(" ")],
        )
    };
    let why = why(program, class, action);
    if let Some(reason) = elsewhere {
        if class == Class::Mutating {
            ctx.findings.push(unknown_finding(program, reason));
        }
        return Ok(());
    }
    act_on(ctx, program, cmd, &hosts, objects.as_deref(), class, why)
}

/// Why a fleet call's action is judged as it is.
fn why(program: &Program, class: Class, action: Option<&str>) -> String {
    match (class, action) {
        (Class::ReadOnly, Some(action)) => format!("`{action}` only reads"),
        (Class::ReadOnly, None) => String::from("only reads"),
        (Class::Mutating, Some(action)) => {
            format!(
                "`{action}` is not on the read-only list of `{}`",
                program.names[0]
            )
        }
        (Class::Mutating, None) => String::from("can change the host"),
    }
}

/// The hosts the environment names (`DOCKER_HOST=…`); a variable that picks hosts written
/// elsewhere (`DOCKER_CONTEXT=prod`, as `--context`) is why the hosts are not known here.
fn env_hosts(
    ctx: &Ctx<'_>,
    program: &Program,
    cmd: &Cmd,
    elsewhere: &mut Option<String>,
) -> Vec<Arg> {
    if let Some(var) = program
        .other_host_env
        .iter()
        .find(|var| ctx.env(cmd, var).is_some())
    {
        *elsewhere = Some(format!(
            "`{var}` picks hosts that are not written in the command"
        ));
    }
    program
        .host_env
        .iter()
        .filter_map(|var| ctx.env(cmd, var))
        .collect()
}

/// Where a judged fleet call acts: the machines its hosts and the objects it was handed name
/// (a loopback host through the forward it reaches), as a finding; with none written, a
/// question, nothing, or the program run on this machine.
fn act_on(
    ctx: &mut Ctx<'_>,
    program: &Program,
    cmd: &Cmd,
    hosts: &[&Arg],
    objects: Option<&[Target]>,
    class: Class,
    why: String,
) -> Result<(), Unknown> {
    let mut targets: Vec<Target> = Vec::new();
    for host in hosts {
        // `curl https://localhost:8443/…` after `ssh -fNL 8443:localhost:443 web01`: this
        // machine's port reaches the machine the forward ends at.
        if let Some(forwarded) = &ctx.forwarded
            && net::hosts_in(host.text())
                .iter()
                .any(|h| crate::inventory::is_loopback(h))
            && !targets.contains(forwarded)
        {
            targets.push(forwarded.clone());
        }
        match host_names(host) {
            Ok(names) => add_hosts(&mut targets, names),
            Err(why) if class == Class::Mutating => {
                ctx.findings.push(unknown_finding(program, why));
                return Ok(());
            }
            Err(_) => {}
        }
    }
    for target in objects.into_iter().flatten() {
        if !targets.contains(target) {
            targets.push(target.clone());
        }
    }
    if targets.is_empty() {
        // A cmdlet fed objects by the pipeline acts where they came from (this machine, when
        // the text says they are its own).
        let piped = program.windows_flags && cmd.stdin == Stdin::Pipe && objects.is_none();
        if (program.without_host_asks || piped) && class == Class::Mutating {
            ctx.findings.push(unknown_finding(
                program,
                format!(
                    "`{}` acts on hosts that are not written in the command",
                    program.names[0]
                ),
            ));
        } else if !hosts.is_empty() && class == Class::ReadOnly {
            ctx.findings.push(finding(program, targets, class, why));
        } else if hosts.is_empty() && class == Class::Mutating {
            // On this machine: `docker run img ssh web01 reboot` still runs what it names.
            let name = cmd.words.first().map_or("", Arg::text).to_owned();
            return unread_program(ctx, &name, cmd);
        }
        return Ok(());
    }
    ctx.findings.push(finding(program, targets, class, why));
    Ok(())
}

/// What a fleet program's options say: the hosts they name, the operands left, the flags set,
/// the machines the objects it acts on are bound to, and why its hosts are not known here.
struct Options<'a> {
    owned: Vec<Arg>,
    operands: Vec<&'a Arg>,
    flags: Vec<String>,
    elsewhere: Option<String>,
    objects: Option<Vec<Target>>,
    reads_only: bool,
}

/// Reads a fleet program's options, in the program's own conventions (POSIX bundles and
/// prefixes, Windows `/flags`, cmdlet parameters).
fn read_options<'a>(ctx: &mut Ctx<'_>, program: &Program, args: &'a [Arg]) -> Options<'a> {
    let mut owned: Vec<Arg> = Vec::new();
    let mut operands: Vec<&Arg> = Vec::new();
    let mut flags: Vec<String> = Vec::new();
    let mut elsewhere: Option<String> = None;
    // The machines objects the cmdlet acts on are bound to (`-InputObject`, the pipeline, a
    // session): `Err` when which is not known.
    let mut objects: Option<Result<Vec<Target>, String>> = None;
    let mut reads_only = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "--" {
            operands.extend(&args[i + 1..]);
            break;
        }
        let is_option = (text.starts_with('-') && text.len() > 1)
            || (text.starts_with('/') && text.len() > 1 && program.windows_flags);
        // A quoted word is a cmdlet's argument, never a parameter name.
        if !is_option || (program.cmdlet && arg.raw.starts_with(['\'', '"'])) {
            operands.push(arg);
            i += 1;
            continue;
        }
        let (name, attached) = option_name(program, text, &mut flags);
        let name = name.as_str();
        let takes = |list: &[String]| program.names_option(list, name);
        let value = if attached.is_some() {
            attached.map(|v| Arg {
                raw: v.to_owned(),
                value: arg.value.as_ref().map(|_| v.to_owned()),
            })
        } else if takes(&program.host_options)
            || takes(&program.value_options)
            || takes(&program.method_options)
            || (takes(&program.other_host_options)
                && (program.value_options.is_empty() || program.cmdlet))
        {
            i += 1;
            args.get(i).cloned()
        } else {
            None
        };
        if takes(&program.method_options) {
            // `-MethodName GetOwner`: a method that only reads changes nothing.
            reads_only |= value
                .as_ref()
                .and_then(|v| v.value.as_deref())
                .is_some_and(|method| !flow::changes(method));
        }
        if takes(&program.host_options) {
            match value {
                Some(value) => owned.push(value),
                None => elsewhere = Some(format!("`{name}` names no host")),
            }
        } else if takes(&program.other_host_options) {
            // A cmdlet's `-CimSession $s`: a session the command opened earlier.
            match value
                .filter(|_| program.cmdlet)
                .and_then(|v| flow::bound(ctx, &v))
            {
                Some(Ok(opened)) => objects = Some(Ok(opened)),
                Some(Err(why)) => elsewhere = Some(why),
                None => {
                    elsewhere = Some(format!(
                        "`{name}` picks hosts that are not written in the command"
                    ));
                }
            }
        } else if program.cmdlet
            && program.names_option(&[String::from("-InputObject")], name)
            && let Some(value) = value.filter(|v| v.value.is_none())
        {
            // `-InputObject $svc`: objects, acted on where they were fetched.
            objects = Some(flow::bound(ctx, &value).unwrap_or_else(|| {
                Err(format!(
                    "`{name} {}` holds objects whose machine is not known here",
                    value.raw
                ))
            }));
        }
        i += 1;
    }
    // A cmdlet piped objects (`Get-Service -ComputerName win01 | Stop-Service`) acts where
    // they were fetched.
    if objects.is_none()
        && program.cmdlet
        && let Some(Held::Bound(piped)) = &ctx.flow.piped
    {
        objects = Some(piped.clone());
    }
    let objects = match objects {
        Some(Err(why)) if elsewhere.is_none() => {
            elsewhere = Some(why);
            None
        }
        Some(Ok(targets)) => Some(targets),
        _ => None,
    };
    Options {
        owned,
        operands,
        flags,
        elsewhere,
        objects,
        reads_only,
    }
}

/// The option a word sets, in the program's conventions (a short option with its value
/// attached, an unambiguous prefix of a long one, the one of bundled short options that takes
/// a value), and the value attached to it; every switch the word sets goes to `flags`.
fn option_name<'t>(
    program: &Program,
    text: &'t str,
    flags: &mut Vec<String>,
) -> (String, Option<&'t str>) {
    let (name, mut attached) = split_option(text, program.cmdlet);
    let mut name = name.to_owned();
    let posix = !program.windows_flags && !program.cmdlet;
    // `-Hweb01`: a short host option with its value attached.
    if attached.is_none()
        && posix
        && !text.starts_with("--")
        && let Some(short) = program
            .host_options
            .iter()
            .find(|o| o.len() == 2 && text.len() > 2 && text.get(..2) == Some(o.as_str()))
    {
        text[..short.len()].clone_into(&mut name);
        attached = text.get(2..);
    }
    // `--req DELETE`: an unambiguous prefix of a listed long option is that option.
    if posix && let Some(whole) = program.long_option_for(&name) {
        whole.clone_into(&mut name);
    }
    // `-sfX DELETE`, `-sXDELETE`: bundled short options, each one set, the first that
    // takes a value taking the rest of the word or the next one.
    if posix
        && attached.is_none()
        && !text.starts_with("--")
        && text.len() > 2
        && program.bundles_short_options()
        && text[1..].chars().all(|c| c.is_ascii_alphanumeric())
    {
        for (at, letter) in text.char_indices().skip(1) {
            let short = format!("-{letter}");
            let takes_a_value = [
                &program.value_options,
                &program.host_options,
                &program.method_options,
            ]
            .iter()
            .any(|list| list.contains(&short));
            if takes_a_value {
                name = short;
                attached = text.get(at + 1..).filter(|rest| !rest.is_empty());
                break;
            }
            flags.push(short);
        }
    }
    // `-WhatIf:$false` sets no switch.
    match attached {
        Some(value) if program.cmdlet && !value.eq_ignore_ascii_case("$true") => {
            flags.push(text.to_owned());
        }
        _ => flags.push(name.clone()),
    }
    // `-XDELETE`: a short option with its value attached is that option too.
    if posix && !text.starts_with("--") && text.len() > 2 {
        flags.extend(text.get(..2).map(str::to_owned));
    }
    (name, attached)
}

/// Adds to `hosts` the operands that name hosts, as the program's `host_operand` says (an
/// operand names the host only where no option did: `rexec -h web01 'cmd'`); returns where
/// the action's operands begin.
fn operand_hosts<'a>(
    program: &Program,
    named_by_option: bool,
    operands: &[&'a Arg],
    hosts: &mut Vec<&'a Arg>,
) -> usize {
    let mut action_at = 0;
    // An operand names the host only where no option did (`rexec -h web01 'cmd'`).
    let host_operand = program
        .host_operand
        .as_deref()
        .filter(|_| !named_by_option || program.host_operand.as_deref() == Some("url"));
    match host_operand {
        Some("all") => {
            hosts.extend(operands.iter().copied());
            action_at = operands.len();
        }
        // The last one: `reg copy \\a\… \\b\…` writes the second.
        Some("unc") => hosts.extend(
            operands
                .iter()
                .copied()
                .rfind(|a| a.text().starts_with("\\\\") || a.text().starts_with("//")),
        ),
        // `http://web01/x`, and `web01/x` or `web01:8080/x` as curl and httpie take them.
        Some("url") => hosts.extend(operands.iter().copied().filter(|a| {
            let text = a.text();
            text.contains("://")
                || a.value.is_none()
                || text.split_once('/').is_some_and(|(host, _)| {
                    !host.is_empty()
                        && host
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
                })
        })),
        Some(n) => {
            if let Some(at) = n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) {
                if let Some(host) = operands.get(at) {
                    hosts.push(host);
                }
                action_at = at + 1;
            }
        }
        None => {}
    }
    action_at
}

/// The command a call runs on its hosts, when it runs one: the operands after the host for
/// a program whose `remote_command` names no `exec` action (`rexec web01 uptime`), or those
/// after an `exec` action (see [`exec_words`]). `rest` are the operands from the action on.
fn exec_command(program: &Program, args: &[Arg], rest: &[&Arg], flags: &[String]) -> Option<Inner> {
    if program.exec.is_empty() {
        program.remote_command?;
        return Some(if rest.is_empty() {
            Inner::Unread(String::from("opens a shell on the host"))
        } else {
            Inner::Line(rest.iter().map(|a| (*a).clone()).collect())
        });
    }
    program
        .exec
        .iter()
        .find_map(|entry| exec_words(program, entry, args, rest, flags))
}

/// The command one `exec` entry finds: `"--"`, the words after a literal `--` when no action
/// comes before it (`fab -H web01 -- uname -a`; a task there runs the fabfile); `"-r"`, a
/// flag that makes the operands the command (`salt-ssh web01 -r 'df -h'`); `"cmd.run"`,
/// `"command run"`, the operands after those words (with `exec_kwargs`, the first of them,
/// and the others `key=value` arguments of the listed keys: `salt web01 cmd.run 'ls'
/// cwd=/srv`); `"exec *"`, the program's words after the action and the operand each `*`
/// stands for (`docker exec app ls -l`: an argv, its options its own).
fn exec_words(
    program: &Program,
    entry: &str,
    args: &[Arg],
    rest: &[&Arg],
    flags: &[String],
) -> Option<Inner> {
    if entry == "--" {
        let at = args.iter().position(|a| a.text() == "--")?;
        let before = rest
            .iter()
            .any(|r| args[..at].iter().any(|a| std::ptr::eq(a, *r)));
        return (!before).then(|| command_of(&args[at + 1..], "names no command"));
    }
    if entry.starts_with('-') {
        return flags.iter().any(|f| f == entry).then(|| {
            command_of(
                &rest.iter().map(|a| (*a).clone()).collect::<Vec<_>>(),
                "names no command",
            )
        });
    }
    let pattern: Vec<&str> = entry.split_whitespace().collect();
    let literal = pattern.iter().take_while(|p| **p != "*").count();
    if rest.len() < literal
        || !pattern[..literal]
            .iter()
            .zip(rest)
            .all(|(p, a)| a.value.as_deref() == Some(*p))
    {
        return None;
    }
    if literal == pattern.len() {
        let words: Vec<Arg> = rest[literal..].iter().map(|a| (*a).clone()).collect();
        return Some(with_kwargs(program, entry, &words));
    }
    // The argv after the action: options (the environment they set kept), each `*` operand,
    // options again, an optional `--`, then the command.
    let action = rest[literal - 1];
    let mut i = args.iter().position(|a| std::ptr::eq(a, action))? + 1;
    let mut skipped = literal;
    let mut env: Vec<Arg> = Vec::new();
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if text == "--" {
            break;
        }
        if text.starts_with('-') && text.len() > 1 {
            let (key, attached) = split_option(text, program.cmdlet);
            let value = match attached {
                Some(v) => Some(Arg {
                    raw: v.to_owned(),
                    value: arg.value.as_ref().map(|_| v.to_owned()),
                }),
                None if program.takes_value(key) => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
                None => None,
            };
            match key {
                "-e" | "--env" => env.extend(value),
                "--env-file" => {
                    return Some(Inner::Unread(String::from(
                        "sets the command's environment from a file, which is not read",
                    )));
                }
                _ => {}
            }
            continue;
        }
        if skipped < pattern.len() {
            skipped += 1;
            continue;
        }
        i -= 1;
        break;
    }
    let words = args.get(i..).unwrap_or_default();
    Some(if words.is_empty() {
        Inner::Unread(String::from("names no command"))
    } else {
        Inner::Text(exec::argv_line(&env, words))
    })
}

/// The words as the command line they are, or what runs unseen when there are none.
fn command_of(words: &[Arg], none: &str) -> Inner {
    if words.is_empty() {
        Inner::Unread(none.to_owned())
    } else {
        Inner::Line(words.to_vec())
    }
}

/// The command after an action that takes it as one word and keyword arguments (salt's
/// `cmd.run CMD [cwd=…]`): any other argument (`env=`, `shell=`, `stdin=`, `template=`) can
/// change what runs, and is not read. Without `exec_kwargs`, all the words.
fn with_kwargs(program: &Program, entry: &str, words: &[Arg]) -> Inner {
    if program.exec_kwargs.is_empty() {
        return command_of(words, "names no command");
    }
    let Some((first, others)) = words.split_first() else {
        return Inner::Unread(String::from("names no command"));
    };
    let unread = others.iter().find(|w| {
        !w.value
            .as_deref()
            .and_then(|v| v.split_once('='))
            .is_some_and(|(k, _)| program.exec_kwargs.iter().any(|e| e == k))
    });
    match unread {
        Some(word) => Inner::Unread(format!(
            "passes `{}` to `{entry}`, which can change what runs",
            word.raw
        )),
        None => Inner::Line(vec![first.clone()]),
    }
}

/// A command run on the hosts a fleet call names: judged as a remote command. No host named
/// runs it on this machine, unless the hosts come from somewhere not written (`qm`'s ids,
/// a fabfile): then a change asks.
fn exec_on_hosts(
    ctx: &mut Ctx<'_>,
    program: &Program,
    hosts: &[&Arg],
    elsewhere: Option<String>,
    inner: Inner,
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let mut targets: Result<Vec<Target>, String> = match elsewhere {
        Some(reason) => Err(reason),
        None => Ok(Vec::new()),
    };
    for host in hosts {
        match (host_names(host), &mut targets) {
            (Ok(names), Ok(targets)) => add_hosts(targets, names),
            (Err(why), Ok(_)) => targets = Err(why),
            (_, Err(_)) => {}
        }
    }
    if targets.as_ref().is_ok_and(Vec::is_empty) {
        if !program.without_host_asks {
            // On this machine: `docker exec app ssh web01 reboot` still runs what it names.
            let name = cmd.words.first().map_or("", Arg::text).to_owned();
            return unread_program(ctx, &name, cmd);
        }
        targets = Err(format!(
            "`{}` acts on hosts that are not written in the command",
            program.names[0]
        ));
    }
    exec::run(
        ctx,
        program,
        Exec {
            targets,
            inner,
            shell: program.remote_command.map_or(Shell::Sh, Shell::from),
            stdin: cmd.stdin.clone(),
        },
    )
}

/// `--host=h`, `/node:h`, a cmdlet's `-ComputerName:h`: the option's name and its attached
/// value.
fn split_option(text: &str, cmdlet: bool) -> (&str, Option<&str>) {
    let at = if text.starts_with('/') || cmdlet {
        text.find(':')
    } else {
        text.find('=')
    };
    match at {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    }
}

/// The class of the call: a read-only flag reads; a mutating option or word (`wmic … call`)
/// changes; otherwise the action decides.
fn class_of(
    program: &Program,
    flags: &[String],
    words: &[String],
    action: Option<&str>,
    phrases: &[&str],
) -> Class {
    let read_only_flags: Vec<String> = program
        .read_only
        .iter()
        .filter(|r| r.starts_with('-') || r.starts_with('/'))
        .cloned()
        .collect();
    if flags
        .iter()
        .any(|f| program.names_option(&read_only_flags, f))
    {
        return Class::ReadOnly;
    }
    if flags
        .iter()
        .chain(words)
        .any(|f| program.names_option(&program.mutating_options, f))
    {
        return Class::Mutating;
    }
    if program.request_items && words.iter().any(|w| sends_data(w)) {
        return Class::Mutating;
    }
    let action = action.map(str::to_ascii_lowercase).unwrap_or_default();
    // An entry of several words (`file download`) is an action and what follows it.
    let listed = |r: &String| {
        if r.is_empty() {
            action.is_empty()
        } else if r.contains(' ') {
            let r = r.to_ascii_lowercase();
            phrases
                .iter()
                .any(|p| crate::glob::glob_match(&r, &p.to_ascii_lowercase()))
        } else {
            crate::glob::glob_match(&r.to_ascii_lowercase(), &action)
        }
    };
    if program
        .read_only
        .iter()
        .filter(|r| !r.starts_with('-') && !r.starts_with('/'))
        .any(listed)
    {
        Class::ReadOnly
    } else {
        Class::Mutating
    }
}

/// The words that, as a whole segment of a URL's path, a query's name, or the value of a
/// query's `action`, `cmd`, `command` or `op`, ask the server to act when it is fetched
/// (`/manager/text/undeploy?path=/app`, `/api?action=flush`): a GET there is no read.
const ACTION_SEGMENTS: &[&str] = &[
    "deploy", "undeploy", "redeploy", "reboot", "restart", "shutdown", "poweroff", "halt", "stop",
    "start", "reload", "delete", "remove", "kill", "purge", "flush", "reset", "drop", "truncate",
    "destroy", "wipe",
];

/// Whether a URL names an action (see [`ACTION_SEGMENTS`]), ignoring case. Words that only
/// contain one (`/restarts`, `/deployments`, `/stopwatch`) and a search for one
/// (`?q=delete`) read.
fn url_names_an_action(url: &str) -> bool {
    let is_action = |word: &str| ACTION_SEGMENTS.iter().any(|a| word.eq_ignore_ascii_case(a));
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let Some(at) = rest.find(['/', '?']) else {
        return false;
    };
    let rest = &rest[at..];
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    path.split(['/', ';']).any(is_action)
        || query.split('&').any(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            is_action(name)
                || (["action", "cmd", "command", "op"]
                    .iter()
                    .any(|n| name.eq_ignore_ascii_case(n))
                    && is_action(value))
        })
}

/// Whether an HTTPie request item sends data: the earliest separator in it (the longest at
/// one place) is `=`, `:=`, `@`, `=@` or `:=@` (`name=x`, `n:=1`, `f@file`), not a header's
/// `:` or a query's `==`. The URL (`web01/x?a=b`) is no item.
fn sends_data(item: &str) -> bool {
    let Some(at) = item.find(['=', ':', '@']) else {
        return false;
    };
    if at == 0 || item[..at].contains(['/', '?']) {
        return false;
    }
    let rest = &item[at..];
    let separator = [":=@", "=@", "==", ":=", "=", ":", "@"]
        .iter()
        .find(|s| rest.starts_with(**s));
    !matches!(separator, Some(&("==" | ":")) | None)
}

/// Adds each host of `names` to `targets`, once.
fn add_hosts(targets: &mut Vec<Target>, names: Vec<String>) {
    for name in names {
        let target = Target {
            name,
            kind: TargetKind::Host,
        };
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
}

/// The machines one host word names: `web01`, `user@web01`, `web01,db01`, `\\win01`,
/// `ssh://user@web01:22`, `@ssh/10.0.0.5` (pyinfra). `Err` for what stands for hosts that are
/// not written (a glob, a file, a group, a range, a CIDR, a value known only at run time).
fn host_names(host: &Arg) -> Result<Vec<String>, String> {
    let Some(text) = host.value.as_deref() else {
        return Err(format!(
            "the host `{}` is only known when the command runs",
            host.raw
        ));
    };
    let text = text.strip_prefix("@ssh/").unwrap_or(text);
    // pyinfra's connectors for this machine, containers and chroots reach no VM.
    if ["@local", "@docker/", "@podman/", "@chroot/", "@dockerssh/"]
        .iter()
        .any(|c| text.starts_with(c))
    {
        return Ok(Vec::new());
    }
    if text.starts_with('@') {
        return Err(format!("`{text}` names hosts from a file or a group"));
    }
    let looks_like_a_file = [
        ".py", ".yml", ".yaml", ".txt", ".ini", ".json", ".csv", ".cfg",
    ]
    .iter()
    .any(|ext| text.to_ascii_lowercase().ends_with(ext));
    if looks_like_a_file {
        return Err(format!(
            "`{text}` is a file of hosts, which is not read here"
        ));
    }
    let cidr = !text.contains("://")
        && text
            .rsplit_once('/')
            .is_some_and(|(_, bits)| !bits.is_empty() && bits.chars().all(|c| c.is_ascii_digit()));
    // A URL's `?` starts its query: only one in the host part is a pattern.
    let authority = text.split_once("://").map_or(text, |(_, rest)| {
        rest.split_once('/')
            .map_or(rest, |(authority, _)| authority)
    });
    if text.contains(['*', '[']) || authority.contains('?') || cidr {
        return Err(format!(
            "`{text}` stands for hosts that are not written out"
        ));
    }
    // `web01/x` as curl and httpie take it: an http URL.
    let as_url;
    let text = if !text.contains("://")
        && text.contains('/')
        && !text.starts_with(['/', '.', '\\', '@'])
        && !text.contains('@')
    {
        as_url = format!("http://{text}");
        as_url.as_str()
    } else {
        text
    };
    let names: Vec<String> = text
        .split_whitespace()
        .flat_map(net::hosts_in)
        .map(|h| h.trim_start_matches('\\').to_owned())
        .filter(|h| !h.is_empty() && !is_this_machine(h))
        .collect();
    Ok(names)
}

fn is_this_machine(host: &str) -> bool {
    matches!(host.to_ascii_lowercase().as_str(), "." | "unix" | "local")
        || crate::inventory::is_loopback(host)
}

/// The `unc-write` grammar: file commands that write where a path says (`robocopy SRC DEST`,
/// `Copy-Item -Destination \\win01\c$\app`, `Remove-Item \\win01\share\x`). A written path
/// that is a UNC path `\\host\share\…` changes that host; reading from one changes nothing.
/// `host_operand` is the operand that is written (`"1"`, `"2"`), `host_options` the options
/// whose value is written, `other_host_options` those that write through a session (ask),
/// and `read_only` the flags that only list (`robocopy /L`).
/// `/s`, `/Q`, `/a:h`: a switch of cmd.exe's built-ins, one or two letters after a slash.
fn is_cmd_switch(text: &str) -> bool {
    let name = text
        .strip_prefix('/')
        .map_or("", |rest| rest.split_once(':').map_or(rest, |(n, _)| n));
    (1..=2).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphabetic() || c == '?')
}

pub(super) fn unc_write(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let mut written: Vec<Arg> = Vec::new();
    let mut operands: Vec<&Arg> = Vec::new();
    let mut through_session: Vec<Target> = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        let is_option = text.len() > 1
            && (text.starts_with('-') || (program.windows_flags && text.starts_with('/')));
        // A quoted word is a cmdlet's argument, never a parameter name.
        if !is_option || (program.cmdlet && arg.raw.starts_with(['\'', '"'])) {
            // cmd.exe's switches (`rmdir /s /q \\h\x`, `del /f`) are no paths.
            if !is_cmd_switch(text) {
                operands.push(arg);
            }
            i += 1;
            continue;
        }
        let (name, attached) = split_ps_option(text);
        let matches = |list: &[String]| names_parameter(program, list, name);
        // `-WhatIf` or `-WhatIf:$true` only says what would be done; `-WhatIf:$false` does it.
        if matches(&program.read_only) && attached.is_none_or(|v| v.eq_ignore_ascii_case("$true")) {
            return Ok(());
        }
        if matches(&program.other_host_options) {
            // `-ToSession $s`: a session the command opened earlier writes on its computer.
            let session = if let Some(value) = attached {
                Some(Arg::dynamic(value.to_owned()))
            } else {
                i += 1;
                args.get(i).cloned()
            };
            match session.and_then(|s| flow::bound(ctx, &s)) {
                Some(Ok(opened)) => {
                    through_session.extend(opened);
                    i += 1;
                    continue;
                }
                Some(Err(why)) => ctx.findings.push(unknown_finding(program, why)),
                None => ctx.findings.push(unknown_finding(
                    program,
                    format!("`{name}` writes through a session whose machine is not written here"),
                )),
            }
            return Ok(());
        }
        let takes_value = matches(&program.value_options) || matches(&program.host_options);
        let value = match attached {
            // `-Destination:\\win01\share`.
            Some(value) => Some(Arg {
                raw: value.to_owned(),
                value: arg.value.as_ref().map(|_| value.to_owned()),
            }),
            None if takes_value => {
                i += 1;
                args.get(i).cloned()
            }
            None => None,
        };
        if matches(&program.host_options) {
            written.extend(value);
        }
        i += 1;
    }
    match program.host_operand.as_deref() {
        // A move changes where it takes from as much as where it puts.
        Some("all") => written.extend(operands.iter().map(|a| (*a).clone())),
        Some(n) => {
            if let Some(at) = n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) {
                written.extend(operands.get(at).map(|a| (*a).clone()));
            }
        }
        None => {}
    }
    // `Get-ChildItem \\win01\share | Remove-Item`: the items come from the pipeline.
    if written.is_empty() && cmd.stdin == Stdin::Pipe && ctx.names_a_machine() {
        ctx.findings.push(unknown_finding(
            program,
            String::from("acts on items the pipeline hands it, which may be on another machine"),
        ));
        return Ok(());
    }
    let targets = match unc_targets(ctx, written) {
        Ok(targets) => targets,
        Err(why) => {
            ctx.findings.push(unknown_finding(program, why));
            return Ok(());
        }
    };
    if !targets.is_empty() {
        ctx.findings.push(finding(
            program,
            targets,
            Class::Mutating,
            String::from("writes through a UNC path on the host"),
        ));
    }
    if !through_session.is_empty() {
        ctx.findings.push(finding(
            program,
            through_session,
            Class::Mutating,
            String::from("writes through a session on the computer it reaches"),
        ));
    }
    Ok(())
}

/// Whether `name` is one of the parameters `list` names, as PowerShell matches them: the
/// whole name, or a prefix of more than two letters, in any case.
fn names_parameter(program: &Program, list: &[String], name: &str) -> bool {
    program.names_option(list, name)
        || list.iter().any(|o| {
            o.len() >= name.len() && o[..name.len()].eq_ignore_ascii_case(name) && name.len() > 2
                || o.eq_ignore_ascii_case(name)
        })
}

/// The machines the UNC paths a command writes to name (through a mapped drive, a
/// provider-qualified path, or relative to a UNC location the text moved to); `Err` when one
/// of them is only known when the command runs.
fn unc_targets(ctx: &Ctx<'_>, written: Vec<Arg>) -> Result<Vec<Target>, String> {
    let mut targets: Vec<Target> = Vec::new();
    for path in written {
        // `X:\app` after `New-PSDrive X … -Root \\win01\c$`: under the share.
        let path = match ctx.through_drive(&path) {
            Some(under) if under.value.is_none() => {
                return Err(format!(
                    "writes to `{}` through a drive whose share is only known when the command runs",
                    path.raw
                ));
            }
            Some(under) => under,
            None => path,
        };
        // `Microsoft.PowerShell.Core\FileSystem::\\win01\c$`: a provider-qualified path.
        let unqualified = |t: &str| t.rsplit_once("::").map_or(t, |(_, p)| p).to_owned();
        let raw = unqualified(path.raw.trim_matches(['"', '\'']));
        let value = path.value.as_deref().map(unqualified);
        // A relative path after `cd \\win01\c$` lands on that machine.
        let relative = !raw.starts_with(['\\', '/', '$']) && raw.get(1..2).is_none_or(|c| c != ":");
        let (raw, value) = match &ctx.unc_location {
            Some(location) if relative => (location.clone(), Some(location.clone())),
            _ => (raw, value),
        };
        if !(raw.starts_with("\\\\") || raw.starts_with("//")) {
            continue;
        }
        // The machine is known when its own name is literal (`\\win01\c$\x`), whatever
        // follows the share.
        let host = net::hosts_in(value.as_deref().unwrap_or(&raw))
            .into_iter()
            .next()
            .map(str::to_owned)
            .filter(|h| !h.contains(['$', '(', '{']));
        let Some(host) = host else {
            return Err(format!(
                "writes to `{}`, whose machine is only known when the command runs",
                path.raw
            ));
        };
        let target = Target {
            name: host,
            kind: TargetKind::Host,
        };
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    Ok(targets)
}

/// `-Destination:x`, `/MIR`, `-Path`: the option's name (a `:value` attached taken off).
fn split_ps_option(text: &str) -> (&str, Option<&str>) {
    match text[1..].find(':') {
        Some(at) => (&text[..=at], Some(&text[at + 2..])),
        None => (text, None),
    }
}
