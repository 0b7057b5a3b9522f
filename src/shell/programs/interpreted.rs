//! Code handed to an interpreter, judged: a command it starts is read as the shell command it
//! is (`os.system("ssh web01 uptime")` only reads); a connection to a machine rewind protects
//! checkpoints that machine (what the code sends it is not read); a remote-shell library
//! whose machine is not named, and code or a program only built when the code runs, ask when
//! anything in the command could name a machine; a protected machine the code names for a
//! purpose not read asks.

use super::unread::unread_program;
use super::{Ctx, text_in};
use crate::shell::code::{self, Handed, Lang, Reach, Run};
use crate::shell::dialect::Dialect;
use crate::shell::net;
use crate::shell::types::{Arg, Class, Cmd, Finding, Stdin, Target, TargetKind, Unknown, clip};

/// Deepest nesting of code inside code (`exec("…exec(…)…")`) followed.
const MAX_NESTED: usize = 4;

/// The code `cmd` (program `name`) runs, then its other words as a program no grammar reads.
pub(super) fn interpreted(
    ctx: &mut Ctx<'_>,
    cmd: &Cmd,
    name: &str,
    handed: &Handed,
) -> Result<(), Unknown> {
    let mut texts = handed.texts.clone();
    if handed.from_pipe {
        // `echo '…' | python3`: read when the text fixes what the pipe carries.
        match &cmd.piped {
            Some(text) if cmd.stdin == Stdin::Pipe => texts.push(text.clone()),
            _ => {
                return Err(Unknown(format!(
                    "`{}` runs code read from a pipe, which is not read here",
                    clip(name)
                )));
            }
        }
    }
    let others = Cmd {
        words: cmd
            .words
            .iter()
            .filter(|w| !handed.texts.contains(w))
            .cloned()
            .collect(),
        ..cmd.clone()
    };
    for text in &texts {
        match &text.value {
            Some(code) => judge(ctx, &others, name, handed.lang, code, 0)?,
            None if ctx.named() || could_name_a_machine(ctx, &others, &text.raw) => {
                return Err(Unknown(format!(
                    "`{}` runs code only known when the command runs (`{}`), and the command may name a machine",
                    clip(name),
                    clip(&text.raw)
                )));
            }
            None => {}
        }
    }
    unread_program(ctx, name, &others)
}

/// Judges one literal code text of `lang`.
fn judge(
    ctx: &mut Ctx<'_>,
    others: &Cmd,
    name: &str,
    lang: Lang,
    text: &str,
    depth: usize,
) -> Result<(), Unknown> {
    let scan = code::scan(lang, text);
    for run in scan.runs {
        match run {
            Run::Command(command) => text_in(ctx, &command, Dialect::Posix)?,
            Run::Code(inner, code) if depth < MAX_NESTED => {
                judge(ctx, others, name, inner, &code, depth + 1)?;
            }
            Run::Code(..) => {
                return Err(Unknown(format!(
                    "`{}` runs code nested deeper than {MAX_NESTED} levels",
                    clip(name)
                )));
            }
            Run::Dynamic(why) if could_name_a_machine(ctx, others, text) => {
                return Err(Unknown(format!("`{}`: {why}", clip(name))));
            }
            Run::Dynamic(_) => {}
        }
    }
    let mut protected: Vec<String> = Vec::new();
    for host in &scan.hosts {
        if ctx.known.contains(host) && !protected.iter().any(|p| p.eq_ignore_ascii_case(host)) {
            protected.push(host.clone());
        }
    }
    match scan.reach {
        Some(reach) if !protected.is_empty() => {
            let means = match reach {
                Reach::RemoteShell(library) | Reach::Connect(library) => library,
            };
            ctx.findings.push(Finding {
                program: name.to_owned(),
                targets: protected
                    .iter()
                    .map(|h| Target {
                        name: h.clone(),
                        kind: TargetKind::Host,
                    })
                    .collect(),
                unknown: None,
                remote: None,
                class: Class::Mutating,
                why: format!(
                    "its code reaches {} through `{means}`, and what it does there is not read",
                    protected.join(", ")
                ),
            });
            Ok(())
        }
        Some(Reach::RemoteShell(library)) => Err(Unknown(format!(
            "`{}` runs code that reaches another machine through `{library}`, and which one is not read",
            clip(name)
        ))),
        Some(Reach::Connect(call))
            if !scan.names_a_host && could_name_a_machine(ctx, others, "") =>
        {
            Err(Unknown(format!(
                "`{}` runs code that connects through `{call}` to a machine it does not name",
                clip(name)
            )))
        }
        None if !protected.is_empty() && lang != Lang::Awk => Err(Unknown(format!(
            "`{}` runs code that names {}, a machine rewind protects, and what it does with it is not read",
            clip(name),
            protected.join(", ")
        ))),
        Some(Reach::Connect(_)) | None => Ok(()),
    }
}

/// Whether anything could name a machine: a protected machine anywhere in the command, a
/// word of the interpreter's own (not its code) that is only known when it runs, could be a
/// host (`user@host`, `host:path`, a URL) or names a remote program, or a remote program
/// named or hidden in `text` (the code that builds a command, `""` for a connection, whose
/// machine a program's name in the code says nothing about).
fn could_name_a_machine(ctx: &Ctx<'_>, others: &Cmd, text: &str) -> bool {
    let names_a_program =
        |t: &str| ctx.catalog.names_a_program(t).is_some() || ctx.catalog.may_hide_a_program(t);
    ctx.names_a_machine()
        || names_a_program(text)
        || others.words.iter().skip(1).any(|w: &Arg| {
            w.value.is_none()
                || net::could_name_a_host(w.text(), ctx.known)
                || names_a_program(&w.raw)
        })
}
