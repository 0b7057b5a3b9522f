//! Deploy tools whose servers come from their own configuration: Kamal (`config/deploy.yml`,
//! `config/deploy.<destination>.yml`) and Capistrano (`config/deploy/<stage>.rb`). A host
//! filter written on the command line (`kamal --hosts=web01`, `HOSTS=web01 cap …`) names the
//! machines exactly; else the target is the configuration file, which the hook reads from the
//! command's directory when it resolves targets (and asks when it cannot). Subcommands that
//! only show the configuration or read logs decide nothing; Kamal's `exec` has its command
//! judged as a remote command.

use super::exec::{self, Shell};
use super::{Ctx, finding, fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown};
use crate::shell::wrappers::join;

/// Kamal's options that take a value (given `--x=v` or `--x v`).
const KAMAL_VALUES: &[&str] = &[
    "-c",
    "--config-file",
    "-d",
    "--destination",
    "-h",
    "--hosts",
    "-r",
    "--roles",
    "--version",
    "-e",
    "--env",
    "--skip-hooks-for",
];

/// The options and operands of one command line, options split from their values.
struct Line<'a> {
    options: Vec<(&'a str, Option<&'a Arg>, Option<Arg>)>,
    operands: Vec<&'a Arg>,
}

impl<'a> Line<'a> {
    fn read(args: &'a [Arg], takes_value: impl Fn(&str) -> bool) -> Line<'a> {
        let mut line = Line {
            options: Vec::new(),
            operands: Vec::new(),
        };
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            i += 1;
            let text = arg.text();
            if text == "--" {
                line.operands.extend(&args[i..]);
                break;
            }
            if !text.starts_with('-') || text.len() == 1 {
                line.operands.push(arg);
                continue;
            }
            match text.split_once('=') {
                Some((name, value)) => line.options.push((name, None, Some(value_of(arg, value)))),
                None if takes_value(text) => {
                    line.options.push((text, args.get(i), None));
                    i += 1;
                }
                None => line.options.push((text, None, None)),
            }
        }
        line
    }

    /// The value of the first of `names` given, as written (`None` inside: only known when
    /// the command runs).
    fn value(&self, names: &[&str]) -> Option<Arg> {
        self.options
            .iter()
            .find(|(name, _, _)| names.contains(name))
            .map(|(_, next, inline)| match (next, inline) {
                (_, Some(v)) => v.clone(),
                (Some(arg), None) => (*arg).clone(),
                (None, None) => Arg::literal(String::new()),
            })
    }

    fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|(name, _, _)| names.contains(name))
    }
}

pub(super) fn kamal(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let line = Line::read(args, |o| KAMAL_VALUES.contains(&o));
    let words: Vec<&str> = line.operands.iter().map(|a| a.text()).collect();
    let action = match words.as_slice() {
        [] => return Ok(()),
        [one] => (*one).to_owned(),
        [one, two, ..] => format!("{one} {two}"),
    };
    if line.has(&["--help"]) || words[0] == "help" || program.is_read_only(&action) {
        return Ok(());
    }
    // `kamal app exec 'CMD'`, `kamal server exec CMD`, `kamal accessory exec db CMD`.
    if let Some(at) = words.iter().position(|w| *w == "exec") {
        let skip = if words.first() == Some(&"accessory") {
            2
        } else {
            1
        };
        let inner: Vec<Arg> = line.operands[(at + skip).min(line.operands.len())..]
            .iter()
            .map(|a| (*a).clone())
            .collect();
        let interactive = line.has(&["-i", "--interactive"]);
        let class = match join(&inner).value {
            Some(text) if !inner.is_empty() => {
                exec::judge(ctx, Shell::Sh, &text, &Stdin::default()).0
            }
            _ => Class::Mutating,
        };
        if class == Class::ReadOnly && !interactive {
            ctx.findings.push(finding(
                program,
                Vec::new(),
                Class::ReadOnly,
                format!("kamal {action} runs a command that only reads"),
            ));
            return Ok(());
        }
    }
    let why = format!("kamal {action} changes the servers it deploys to");
    if let Some(hosts) = line.value(&["-h", "--hosts"]) {
        host_targets(ctx, program, &hosts, why);
        return Ok(());
    }
    let config = match line.value(&["-c", "--config-file"]) {
        Some(file) => file,
        None => match line.value(&["-d", "--destination"]) {
            Some(d) if d.value.is_some() => Arg::literal(format!("config/deploy.{}.yml", d.text())),
            Some(d) => d,
            None => Arg::literal(String::from("config/deploy.yml")),
        },
    };
    let roles = line.value(&["-r", "--roles"]);
    config_target(ctx, program, &config, roles, why);
    Ok(())
}

pub(super) fn capistrano(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let line = Line::read(args, |o| {
        matches!(
            o,
            "-r" | "--roles" | "-z" | "--hosts" | "-f" | "--rakefile" | "-I"
        )
    });
    let read_only_flag = line
        .options
        .iter()
        .any(|(name, _, _)| program.is_read_only(name));
    let Some((stage, tasks)) = line.operands.split_first() else {
        return Ok(());
    };
    let names: Vec<&str> = tasks
        .iter()
        .map(|a| a.text())
        .filter(|t| !t.contains('='))
        .collect();
    let only_reads = read_only_flag
        || program.is_read_only(stage.text()) && names.is_empty()
        || !names.is_empty() && names.iter().all(|t| program.is_read_only(t));
    if only_reads {
        return Ok(());
    }
    let why = format!(
        "cap {} {} changes the servers of that stage",
        stage.text(),
        names.join(" ")
    );
    // Rake takes `NAME=value` among its tasks as the environment, as before the command.
    let filter = line.value(&["-z", "--hosts"]).or_else(|| {
        let assigned = cmd.assignments.iter().find_map(|a| {
            let value = a.strip_prefix("HOSTS=")?;
            Some(if value.contains(['$', '`']) {
                Arg::dynamic(value.to_owned())
            } else {
                Arg::literal(value.to_owned())
            })
        });
        assigned.or_else(|| {
            tasks
                .iter()
                .find_map(|t| t.text().strip_prefix("HOSTS=").map(|v| value_of(t, v)))
        })
    });
    if let Some(hosts) = filter {
        host_targets(ctx, program, &hosts, why);
        return Ok(());
    }
    let Some(stage) = fixed(ctx, program, stage, "the stage") else {
        return Ok(());
    };
    let config = Arg::literal(format!("config/deploy/{stage}.rb"));
    let roles = line.value(&["-r", "--roles"]);
    config_target(ctx, program, &config, roles, why);
    Ok(())
}

/// `value`, a part of `arg`'s text, as an argument only known when the command runs when
/// `arg` is.
fn value_of(arg: &Arg, value: &str) -> Arg {
    match arg.value {
        Some(_) => Arg::literal(value.to_owned()),
        None => Arg::dynamic(value.to_owned()),
    }
}

/// Hosts a filter names exactly (`web01,web02`), each checkpointed.
fn host_targets(ctx: &mut Ctx<'_>, program: &Program, hosts: &Arg, why: String) {
    let Some(list) = fixed(ctx, program, hosts, "the host filter") else {
        return;
    };
    let targets: Vec<Target> = list
        .split(',')
        .map(|h| super::host_of(h.trim()))
        .filter(|h| !h.is_empty())
        .map(|name| Target {
            name,
            kind: TargetKind::Host,
        })
        .collect();
    if targets.is_empty() {
        ctx.findings.push(unknown_finding(
            program,
            String::from("the host filter is empty"),
        ));
    } else {
        ctx.findings
            .push(finding(program, targets, Class::Mutating, why));
    }
}

/// The servers of a configuration file, read when the targets resolve.
fn config_target(
    ctx: &mut Ctx<'_>,
    program: &Program,
    config: &Arg,
    roles: Option<Arg>,
    why: String,
) {
    let Some(file) = fixed(ctx, program, config, "the configuration file") else {
        return;
    };
    // `… > config/deploy.yml && kamal deploy`: the hook would read the file before the
    // command writes it.
    let bare = |path: &str| path.trim_start_matches("./").to_owned();
    if ctx
        .written
        .iter()
        .any(|(path, _)| bare(path).ends_with(&bare(file)))
    {
        ctx.findings.push(unknown_finding(
            program,
            format!("the command writes {file} before the deploy reads it"),
        ));
        return;
    }
    let roles = match roles {
        Some(r) => match fixed(ctx, program, &r, "the roles") {
            Some(r) => Some(r.to_owned()),
            None => return,
        },
        None => None,
    };
    ctx.findings.push(finding(
        program,
        vec![Target {
            name: file.to_owned(),
            kind: TargetKind::Deploy { roles },
        }],
        Class::Mutating,
        why,
    ));
}
