//! Ansible: `ansible` (a host pattern, a module and its arguments) and `ansible-playbook` (its
//! `--limit`), with the extra vars that can move the connection or run code.

use super::{Ctx, exec, finding, host_of, text_in, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::dialect::Dialect;
use crate::shell::remote;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown, clip};
use crate::targets;

/// An Ansible command line: its operands, the options with their values, and its flags.
struct AnsibleArgs {
    operands: Vec<Arg>,
    /// (option as typed, value) for options that take one.
    values: Vec<(String, Arg)>,
    flags: Vec<String>,
}

fn ansible_args(program: &Program, args: &[Arg]) -> AnsibleArgs {
    let mut parsed = AnsibleArgs {
        operands: Vec::new(),
        values: Vec::new(),
        flags: Vec::new(),
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if !text.starts_with('-') || text == "-" {
            parsed.operands.push(arg.clone());
            continue;
        }
        if let Some((key, value)) = text.split_once('=').filter(|_| text.starts_with("--")) {
            parsed
                .values
                .push((key.to_owned(), Arg::literal(value.to_owned())));
            continue;
        }
        if program.takes_value(text) {
            if let Some(value) = args.get(i) {
                parsed.values.push((text.to_owned(), value.clone()));
            }
            i += 1;
            continue;
        }
        // `-lweb01`, `-mshell`: a short value option with its value attached.
        if !text.starts_with("--")
            && text.len() > 2
            && text.get(..2).is_some_and(|flag| program.takes_value(flag))
        {
            let value = Arg {
                raw: arg.raw.get(2..).unwrap_or_default().to_owned(),
                value: arg
                    .value
                    .as_ref()
                    .map(|v| v.get(2..).unwrap_or_default().to_owned()),
            };
            parsed.values.push((text[..2].to_owned(), value));
            continue;
        }
        parsed.flags.push(text.to_owned());
    }
    parsed
}

/// What `-e`/`--extra-vars` do to a run.
enum Vars {
    /// Nothing that moves the connection or runs code.
    Plain,
    /// `ansible_host` (or `ansible_ssh_host`) is this address: the machine really reached.
    Host(String),
    /// A variable that runs a program or changes how it connects (`ansible_python_interpreter`,
    /// `ansible_ssh_common_args`, `ansible_connection`…): the run can change the host.
    Risky(String),
    /// The variables are in a file or only known at run time.
    Unread(String),
}

/// The extra vars of an Ansible command line, the last one winning as in Ansible.
fn extra_vars(parsed: &AnsibleArgs) -> Vars {
    let mut host = None;
    let mut risky = None;
    for (key, value) in &parsed.values {
        if !matches!(key.as_str(), "-e" | "--extra-vars") {
            continue;
        }
        let Some(text) = value.value.as_deref() else {
            return Vars::Unread(format!(
                "the extra vars `{}` are only known when the command runs",
                value.raw
            ));
        };
        if text.starts_with('@') {
            return Vars::Unread(format!("the extra vars in `{text}` are not read"));
        }
        let pairs: Vec<(String, String)> =
            match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text) {
                Ok(map) => map
                    .into_iter()
                    .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                    .collect(),
                Err(_) if text.trim_start().starts_with(['{', '[', '-']) => {
                    return Vars::Unread(format!("the extra vars `{}` are not read", clip(text)));
                }
                Err(_) => shlex::split(text)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|p| p.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
                    .collect(),
            };
        for (key, value) in pairs {
            match key.as_str() {
                "ansible_host" | "ansible_ssh_host" => host = Some(value),
                k if k.starts_with("ansible_")
                    && (k.ends_with("_interpreter")
                        || k.ends_with("_executable")
                        || k.ends_with("_args")
                        || k.ends_with("_exe")
                        || k.contains("connection")
                        || k.contains("shell")
                        || k.contains("become")
                        || k.contains("port")
                        || k.contains("proxy")) =>
                {
                    risky = Some(format!(
                        "the extra var `{k}` changes how the host is reached or what runs there"
                    ));
                }
                _ => {}
            }
        }
    }
    match (host, risky) {
        (Some(host), _) => Vars::Host(host),
        (None, Some(reason)) => Vars::Risky(reason),
        (None, None) => Vars::Plain,
    }
}

impl AnsibleArgs {
    fn value(&self, names: &[&str]) -> Option<&Arg> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v)
    }
}

/// Targets from an Ansible pattern, split as [`targets::pattern_parts`] splits every host
/// pattern; `Err` with the reason when they cannot be known.
fn ansible_targets(pattern: &Arg, inventory: Option<&Arg>) -> Result<Vec<Target>, String> {
    let Some(text) = pattern.value.as_deref() else {
        return Err(format!(
            "the host pattern `{}` is only known when the command runs",
            pattern.raw
        ));
    };
    if text.contains(['!', '&', '@', '~']) {
        return Err(format!(
            "the host pattern `{text}` uses exclusions, intersections, a file or a regular expression"
        ));
    }
    let inventory = inventory.and_then(|i| i.value.clone());
    // `-i 'web01,db01,'`: an inline inventory is the host list itself, and `all` (or
    // `ungrouped`, where Ansible puts every host of such a list) is all of it. Ansible reads
    // `web01:2222` in the list as the host web01 on port 2222, so the pattern `web01` names it.
    if let Some(inline) = inventory.as_deref().filter(|i| i.contains(',')) {
        let listed: Vec<&str> = inline
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .collect();
        let mut targets = Vec::new();
        for part in targets::pattern_parts(text) {
            let part = part.as_str();
            let hosts: Vec<&str> = if matches!(part, "all" | "*" | "ungrouped") {
                listed.clone()
            } else if part.contains(['*', '?', '[']) {
                return Err(format!(
                    "the host pattern `{part}` is a glob over the inline inventory"
                ));
            } else {
                listed
                    .iter()
                    .copied()
                    .filter(|h| *h == part || host_of(h) == host_of(part))
                    .collect()
            };
            for host in hosts {
                let target = Target {
                    name: host_of(host),
                    kind: TargetKind::Host,
                };
                if !targets.contains(&target) {
                    targets.push(target);
                }
            }
        }
        return Ok(targets);
    }
    Ok(targets::pattern_parts(text)
        .into_iter()
        .map(|name| Target {
            name,
            kind: TargetKind::Ansible {
                inventory: inventory.clone(),
            },
        })
        .collect())
}

/// The command of a command, shell or raw module's free-form arguments, less the
/// parameters the module takes there that change nothing (`chdir=`, `creates=`,
/// `removes=`); `executable=` (the shell that runs it), `stdin=` and `argv=` change what
/// runs, and are not read.
fn free_form(module: &str, text: &str) -> Result<String, String> {
    if module == "raw" {
        return Ok(text.to_owned());
    }
    let key = |piece: &str| piece.split_once('=').map(|(k, _)| k.to_owned());
    let mut kept: Vec<&str> = Vec::new();
    let mut dropped = false;
    for piece in text.split(' ') {
        match key(piece).as_deref() {
            Some("executable" | "stdin" | "argv" | "cmd") => {
                return Err(format!("`{piece}` changes what the module runs"));
            }
            Some(
                "chdir"
                | "creates"
                | "removes"
                | "strip_empty_ends"
                | "stdin_add_newline"
                | "expand_argument_vars",
            ) if !piece.contains(['\'', '"', '`', '$', ';', '|', '&']) => dropped = true,
            _ => kept.push(piece),
        }
    }
    Ok(if dropped {
        kept.join(" ")
    } else {
        text.to_owned()
    })
}

fn module_matches(list: &Program, module: &str) -> bool {
    let short = module.rsplit('.').next().unwrap_or(module);
    list.is_read_only(module) || list.is_read_only(short)
}

pub(super) fn ansible(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let parsed = ansible_args(program, args);
    let Some(pattern) = parsed.operands.first() else {
        return Ok(());
    };
    if parsed
        .flags
        .iter()
        .any(|f| matches!(f.as_str(), "--list-hosts" | "--version" | "-h" | "--help"))
    {
        return Ok(());
    }
    // `ANSIBLE_INVENTORY=web01, ansible all …`: the inventory the environment names.
    let from_env = ctx.env(cmd, "ANSIBLE_INVENTORY");
    let inventory = parsed
        .value(&["-i", "--inventory", "--inventory-file"])
        .or(from_env.as_ref());
    let limit = parsed.value(&["-l", "--limit"]);
    let module = parsed
        .value(&["-m", "--module-name"])
        .map_or(Some("command"), |m| m.value.as_deref());
    let module_args = parsed.value(&["-a", "--args"]);
    let check = parsed.flags.iter().any(|f| f == "--check" || f == "-C");
    let (class, why, remote) = module_class(ctx, program, module, module_args, check)?;
    let selector = limit.unwrap_or(pattern);
    // Extra vars and templates can move the connection or run code on this machine.
    let (class, why) = match extra_vars(&parsed) {
        Vars::Plain => (class, why),
        Vars::Risky(reason) => (Class::Mutating, reason),
        Vars::Host(_) | Vars::Unread(_) => (Class::Mutating, why),
    };
    if let Some(text) = module_args.map(Arg::text)
        && (text.contains("lookup(") || text.contains("query(") || text.contains("pipe"))
        && text.contains("{{")
    {
        return Err(Unknown(format!(
            "`{}` runs a template lookup on this machine, which is not read",
            program.names[0]
        )));
    }
    let mut f = match (extra_vars(&parsed), ansible_targets(selector, inventory)) {
        (Vars::Host(host), Ok(_)) => finding(
            program,
            vec![Target {
                name: host,
                kind: TargetKind::Host,
            }],
            class,
            why,
        ),
        (Vars::Unread(reason), _) if class == Class::Mutating => unknown_finding(program, reason),
        (_, Ok(targets)) => finding(program, targets, class, why),
        (_, Err(reason)) => {
            let mut f = unknown_finding(program, reason);
            f.class = class;
            f
        }
    };
    f.remote = remote;
    if class == Class::ReadOnly {
        // Nothing to checkpoint: the pattern need not be known.
        f.unknown = None;
    }
    ctx.findings.push(f);
    Ok(())
}

/// What an ansible module does to the hosts, with why and the command it runs there (if it
/// names one): a module that only reads, `--check`, a command judged as code (one that only
/// relays through ssh judged where it lands), or a module that can change them.
fn module_class(
    ctx: &mut Ctx<'_>,
    program: &Program,
    module: Option<&str>,
    module_args: Option<&Arg>,
    check: bool,
) -> Result<(Class, String, Option<String>), Unknown> {
    Ok(match module {
        None => (
            Class::Mutating,
            String::from("the module is only known when the command runs"),
            None,
        ),
        Some(_) if check => (
            Class::ReadOnly,
            String::from("--check only reports what would change"),
            None,
        ),
        Some(m) if module_matches(program, m) => {
            (Class::ReadOnly, format!("module {m} only reads"), None)
        }
        Some(m) => {
            let short = m.rsplit('.').next().unwrap_or(m);
            match (short, module_args) {
                ("command" | "shell" | "raw", Some(a)) => match &a.value {
                    // `-a 'ssh db01 reboot'`: the hosts only relay; db01 is judged.
                    Some(text) if exec::relays(ctx, text) => {
                        text_in(ctx, text, Dialect::Posix)?;
                        (
                            Class::ReadOnly,
                            String::from("relays to another machine through ssh"),
                            Some(text.clone()),
                        )
                    }
                    Some(text) => {
                        let (class, why) = match free_form(short, text) {
                            Ok(command) => {
                                exec::follow_ssh(ctx, &command);
                                remote::classify(&mut ctx.judge(), &command, &Stdin::Inherited)
                            }
                            Err(why) => (Class::Mutating, why),
                        };
                        (class, format!("module {m}: {why}"), Some(text.clone()))
                    }
                    None => (
                        Class::Mutating,
                        format!("module {m} runs a command only known when the command runs"),
                        Some(a.raw.clone()),
                    ),
                },
                ("win_shell" | "win_command", Some(a)) => {
                    let (class, why) = remote::classify_windows(&mut ctx.judge(), a.text());
                    (class, format!("module {m}: {why}"), Some(a.raw.clone()))
                }
                _ => (
                    Class::Mutating,
                    format!("module {m} can change the hosts"),
                    None,
                ),
            }
        }
    })
}

pub(super) fn ansible_playbook(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let parsed = ansible_args(program, args);
    match extra_vars(&parsed) {
        Vars::Host(_) | Vars::Unread(_)
            if !parsed.flags.iter().any(|f| f == "--check" || f == "-C") =>
        {
            ctx.findings.push(unknown_finding(
                program,
                String::from(
                    "the extra vars can send the play to another machine, which is not read",
                ),
            ));
            return Ok(());
        }
        _ => {}
    }
    if parsed.operands.is_empty()
        || parsed
            .flags
            .iter()
            .any(|f| matches!(f.as_str(), "--version" | "-h" | "--help"))
    {
        return Ok(());
    }
    // `ANSIBLE_INVENTORY=web01, ansible all …`: the inventory the environment names.
    let from_env = ctx.env(cmd, "ANSIBLE_INVENTORY");
    let inventory = parsed
        .value(&["-i", "--inventory", "--inventory-file"])
        .or(from_env.as_ref());
    if let Some(flag) = parsed.flags.iter().find(|f| program.is_read_only(f)) {
        let targets = parsed
            .value(&["-l", "--limit"])
            .and_then(|l| ansible_targets(l, inventory).ok())
            .unwrap_or_default();
        ctx.findings.push(finding(
            program,
            targets,
            Class::ReadOnly,
            format!("{flag} changes nothing"),
        ));
        return Ok(());
    }
    let why = String::from("runs a playbook that can change the hosts");
    let f = match parsed.value(&["-l", "--limit"]) {
        None => unknown_finding(
            program,
            String::from("no --limit, so the hosts are those of the plays, which are not read"),
        ),
        Some(limit) => match ansible_targets(limit, inventory) {
            Ok(targets) => finding(program, targets, Class::Mutating, why),
            Err(reason) => unknown_finding(program, reason),
        },
    };
    ctx.findings.push(f);
    Ok(())
}
