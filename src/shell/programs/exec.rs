//! The one shape of every program that runs a command on another machine (`winrs`, `psexec`,
//! `govc guest.run`, `salt … cmd.run`, `bolt command run`, `fab -- …`, `pyinfra … exec`,
//! `docker exec` on a remote engine, `qm guest exec`, `gcloud compute ssh --command`, `az vm
//! run-command`, `aws ssm send-command`, a QEMU agent's `guest-exec`): each grammar reads
//! where the command runs, the command and its shell into an [`Exec`], and [`run`] judges
//! the command as an ssh remote command is judged (`remote`): read-only → no decision;
//! anything else → a checkpoint of the targets, or a question when they cannot be known. A
//! command that is itself an ssh to a further machine is followed, and that machine judged.

use super::{Ctx, finding, text_in, unknown_finding};
use crate::shell::catalog::{Grammar, Program};
use crate::shell::dialect::Dialect;
use crate::shell::remote;
use crate::shell::types::{Arg, Class, Finding, Stdin, Target, Unknown};
use crate::shell::wrappers::{Next, join, unwrap};

/// The shell that reads a remote command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shell {
    /// A POSIX shell (`sh -c`).
    Sh,
    /// Windows' cmd.exe: `a & b` and `a && b` run one after the other.
    Cmd,
    /// PowerShell.
    Pwsh,
}

impl From<Dialect> for Shell {
    fn from(dialect: Dialect) -> Shell {
        match dialect {
            Dialect::Posix => Shell::Sh,
            Dialect::PowerShell => Shell::Pwsh,
        }
    }
}

/// What runs on the machines.
pub(super) enum Inner {
    /// A command line, as a shell on the machine reads it (`winrs -r:h ipconfig /all`).
    Line(Vec<Arg>),
    /// One text a shell runs (`--command 'uptime'`), or a program's argv quoted as one
    /// ([`argv_line`]: `docker exec app ls -l`).
    Text(Arg),
    /// Something runs that is not read here (a script file, an interactive shell): why.
    Unread(String),
}

/// A command run on other machines, as a grammar reads it.
pub(super) struct Exec {
    /// The machines it runs on, or why they cannot be known from the text.
    pub(super) targets: Result<Vec<Target>, String>,
    pub(super) inner: Inner,
    pub(super) shell: Shell,
    /// What the command reads on its standard input there.
    pub(super) stdin: Stdin,
}

/// Judges the command and records the finding: none to checkpoint when it only reads, its
/// targets when it can change them, a question when it can and they are not known.
pub(super) fn run(ctx: &mut Ctx<'_>, program: &Program, exec: Exec) -> Result<(), Unknown> {
    let text = match &exec.inner {
        Inner::Line(words) => Some(join(words)),
        Inner::Text(text) => Some(text.clone()),
        Inner::Unread(_) => None,
    };
    if exec.shell == Shell::Sh
        && let Some(relayed) = text.as_ref().and_then(|t| t.value.as_deref())
        && relays(ctx, relayed)
    {
        // `gcloud compute ssh bastion --command 'ssh db01 reboot'`: the machine only
        // relays; db01's command is judged.
        text_in(ctx, relayed, Dialect::Posix)?;
        let targets = exec.targets.unwrap_or_default();
        ctx.findings.push(finding(
            program,
            targets,
            Class::ReadOnly,
            String::from("relays to another machine through ssh"),
        ));
        return Ok(());
    }
    let (class, why) = match (&exec.inner, &text) {
        (Inner::Unread(why), _) => (Class::Mutating, why.clone()),
        (
            _,
            Some(Arg {
                value: Some(text), ..
            }),
        ) => judge(ctx, exec.shell, text, &exec.stdin),
        (_, _) => (
            Class::Mutating,
            String::from("the remote command holds text expanded on this machine first"),
        ),
    };
    let remote = text
        .map(|t| t.value.unwrap_or(t.raw))
        .filter(|t| !t.is_empty());
    record(ctx, program, exec.targets, class, why, remote);
    Ok(())
}

/// Records what a program does on its targets: read-only, a change of the targets named, or
/// a question when it changes machines that are not known (`targets` is why).
pub(super) fn record(
    ctx: &mut Ctx<'_>,
    program: &Program,
    targets: Result<Vec<Target>, String>,
    class: Class,
    why: String,
    remote: Option<String>,
) {
    let mut f = match targets {
        Ok(targets) if class == Class::ReadOnly || !targets.is_empty() => {
            finding(program, targets, class, why)
        }
        Ok(_) => unknown_finding(
            program,
            format!("{why}, on machines that are not written in the command"),
        ),
        Err(unknown) if class == Class::Mutating => {
            let mut f = unknown_finding(program, unknown);
            f.why = why;
            f
        }
        Err(_) => finding(program, Vec::new(), class, why),
    };
    f.remote = remote;
    ctx.findings.push(f);
}

/// The class of a remote command in its shell, and why.
pub(super) fn judge(ctx: &mut Ctx<'_>, shell: Shell, text: &str, stdin: &Stdin) -> (Class, String) {
    match shell {
        Shell::Sh => {
            follow_ssh(ctx, text);
            remote::classify(&mut ctx.judge(), text, stdin)
        }
        Shell::Cmd => remote::classify_cmd(&mut ctx.judge(), text),
        Shell::Pwsh => remote::classify_windows(&mut ctx.judge(), text),
    }
}

/// An argv as the command line a shell would read to run it: each word quoted as needed.
fn argv_text(words: &[Arg]) -> Arg {
    let values: Option<Vec<&str>> = words.iter().map(|a| a.value.as_deref()).collect();
    let raw = join(words).raw;
    match values.map(shlex::try_join) {
        Some(Ok(text)) => Arg {
            raw,
            value: Some(text),
        },
        _ => Arg { raw, value: None },
    }
}

/// Follows each ssh a remote command runs onward (`uptime; ssh db01 reboot`, `sudo ssh db01
/// …`, `bash -c 'ssh db01 …'`): the machine it reaches is analysed as if the command were
/// typed here, so that a change there is checkpointed (or asked about) besides the machine
/// the command runs on, which the remote judgment already counts as changed.
pub(super) fn follow_ssh(ctx: &mut Ctx<'_>, text: &str) {
    let Ok(commands) = ctx.walk.parse(text, Dialect::Posix) else {
        return;
    };
    for cmd in commands {
        let mut words = cmd.words.clone();
        // Through the wrappers to the program itself.
        for _ in 0..8 {
            let Some(first) = words.first().and_then(|w| w.value.as_deref()) else {
                break;
            };
            if ctx
                .catalog
                .program(first)
                .is_some_and(|p| p.grammar == Grammar::Ssh)
            {
                onward(ctx, &words);
                break;
            }
            match unwrap(ctx.catalog, &words, &cmd.stdin) {
                Next::Argv(inner) => words = inner,
                Next::Text(
                    Arg {
                        value: Some(inner), ..
                    },
                    Dialect::Posix,
                ) => {
                    if ctx.walk.enter().is_ok() {
                        follow_ssh(ctx, &inner);
                        ctx.walk.leave();
                    }
                    break;
                }
                _ => break,
            }
        }
    }
}

/// Analyses one ssh a remote command runs, its words quoted as they were.
fn onward(ctx: &mut Ctx<'_>, words: &[Arg]) {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| match &w.value {
            Some(v) => shlex::try_quote(v).map_or_else(|_| w.raw.clone(), Into::into),
            None => w.raw.clone(),
        })
        .collect();
    let text = quoted.join(" ");
    let result = match ctx.walk.enter() {
        Ok(()) => {
            let result = text_in(ctx, &text, Dialect::Posix);
            ctx.walk.leave();
            result
        }
        Err(e) => Err(e),
    };
    if let Err(Unknown(why)) = result {
        ctx.findings.push(Finding {
            program: String::from("ssh"),
            targets: Vec::new(),
            unknown: Some(why.clone()),
            remote: Some(text),
            class: Class::Mutating,
            why,
        });
    }
}

/// A program's argv as the command line a shell reads, after `NAME=value` assignments of the
/// environment it is given (`-e LD_PRELOAD=…`), each word quoted as needed.
pub(super) fn argv_line(env: &[Arg], words: &[Arg]) -> Arg {
    let mut raw: Vec<String> = env.iter().map(|a| a.raw.clone()).collect();
    raw.push(join(words).raw);
    let assignments: Option<Vec<String>> = env
        .iter()
        .map(|a| {
            let (name, value) = a.value.as_deref()?.split_once('=')?;
            Some(format!("{name}={}", shlex::try_quote(value).ok()?))
        })
        .collect();
    let command = argv_text(words).value;
    Arg {
        raw: raw.join(" "),
        value: assignments.zip(command).map(|(mut a, c)| {
            a.push(c);
            a.join(" ")
        }),
    }
}

/// Whether a remote command is one ssh to a further machine and nothing else.
pub(super) fn relays(ctx: &Ctx<'_>, text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or_default();
    ctx.catalog
        .program(first)
        .is_some_and(|p| p.grammar == Grammar::Ssh)
        && !text.contains([';', '&', '|', '\n', '`', '$', '(', '<', '>'])
}
