//! Hypervisor CLIs that name the VM itself: `govc` (`-vm`, `vm.*` subcommands) and `virsh` (a
//! domain, or the hypervisor a `-c` connection names).

use super::exec::{self, Exec, Inner, Shell};
use super::{Ctx, finding, fixed, not_fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::net;
use crate::shell::types::{Arg, Class, Finding, Stdin, Target, TargetKind, Unknown};

pub(super) fn govc(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let Some(sub) = args.first() else {
        return Ok(());
    };
    let Some(subcommand) = fixed(ctx, program, sub, "the subcommand") else {
        return Ok(());
    };
    if matches!(subcommand, "guest.run" | "guest.start") {
        return govc_guest_run(ctx, program, subcommand, &args[1..]);
    }
    let mut vm_flags: Vec<(String, Arg)> = Vec::new();
    let mut operands = Vec::new();
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if text.starts_with('-') && text.len() > 1 {
            let flag = text.trim_start_matches('-');
            let (key, inline) = flag
                .split_once('=')
                .map_or((flag, None), |(k, v)| (k, Some(v)));
            let value = match inline {
                Some(v) => Some(Arg {
                    raw: v.to_owned(),
                    value: arg.value.as_ref().map(|_| v.to_owned()),
                }),
                None if program.takes_value(&format!("-{key}")) => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
                None => None,
            };
            if let Some(value) = value
                && (key == "vm" || key.starts_with("vm."))
            {
                vm_flags.push((key.to_owned(), value));
            }
            continue;
        }
        operands.push(arg.clone());
    }
    // `vm.question -answer 0` answers the VM's pending question.
    let answers = subcommand == "vm.question"
        && args
            .iter()
            .any(|a| a.text().trim_start_matches('-').starts_with("answer"));
    let class = if program.is_read_only(subcommand) && !answers {
        Class::ReadOnly
    } else if program.is_mutating(subcommand) {
        Class::Mutating
    } else {
        ctx.findings.push(unknown_finding(
            program,
            format!("govc {subcommand} is in neither the read-only nor the mutating list"),
        ));
        return Ok(());
    };
    let mut names: Vec<Arg> = vm_flags.iter().map(|(_, v)| v.clone()).collect();
    if names.is_empty() && subcommand.starts_with("vm.") {
        names = operands;
    }
    let why = match class {
        Class::ReadOnly => format!("govc {subcommand} only reads"),
        Class::Mutating => format!("govc {subcommand} changes the VM"),
    };
    if class == Class::ReadOnly {
        ctx.findings.push(finding(program, Vec::new(), class, why));
        return Ok(());
    }
    if names.is_empty() {
        ctx.findings.push(unknown_finding(
            program,
            format!("govc {subcommand} names no VM (-vm)"),
        ));
        return Ok(());
    }
    vm_targets(ctx, program, &names, why);
    Ok(())
}

/// `govc guest.run -vm web01 [-l user:pass] [-e NAME=value] [-d input] PROGRAM ARGS…`: the
/// program runs in the guest through its tools, with the arguments joined as a shell reads
/// them. Flags end at the first word that is not one, as Go's flag package reads them.
fn govc_guest_run(
    ctx: &mut Ctx<'_>,
    program: &Program,
    subcommand: &str,
    args: &[Arg],
) -> Result<(), Unknown> {
    let mut vms: Vec<Arg> = Vec::new();
    let mut env: Vec<Arg> = Vec::new();
    let mut stdin = Stdin::Inherited;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if text == "--" {
            break;
        }
        if !text.starts_with('-') || text.len() < 2 {
            i -= 1;
            break;
        }
        let flag = text.trim_start_matches('-');
        let (key, value) = match flag.split_once('=') {
            Some((k, v)) => (
                k,
                Some(Arg {
                    raw: v.to_owned(),
                    value: arg.value.as_ref().map(|_| v.to_owned()),
                }),
            ),
            None if program.takes_value(&format!("-{flag}")) => {
                i += 1;
                (flag, args.get(i - 1).cloned())
            }
            None => (flag, None),
        };
        match (key, value) {
            ("vm", Some(v)) => vms.push(v),
            ("e", Some(v)) => env.push(v),
            ("d", Some(v)) => stdin = Stdin::Text(v),
            _ => {}
        }
    }
    let words = &args[i.min(args.len())..];
    // `-e LD_PRELOAD=…` sets the program's environment: judged as an assignment before it.
    let mut line: Vec<Arg> = env
        .into_iter()
        .map(|a| match &a.value {
            Some(v) => match v.split_once('=') {
                Some((name, value)) => Arg::literal(format!(
                    "{name}={}",
                    shlex::try_quote(value).map_or_else(|_| String::from("''"), Into::into)
                )),
                None => a,
            },
            None => a,
        })
        .collect();
    line.extend(words.iter().cloned());
    let inner = if words.is_empty() {
        Inner::Unread(format!("govc {subcommand} names no program to run"))
    } else {
        Inner::Line(line)
    };
    let targets = if vms.is_empty() {
        Err(format!("govc {subcommand} names no VM (-vm)"))
    } else {
        vms.iter()
            .map(|vm| match vm.value.as_deref() {
                Some(v) => Ok(v),
                None => Err(format!(
                    "the VM `{}` is only known when the command runs",
                    vm.raw
                )),
            })
            .collect::<Result<Vec<&str>, String>>()
            .map(|names| names.into_iter().flat_map(vm_names).collect())
    };
    exec::run(
        ctx,
        program,
        Exec {
            targets,
            inner,
            shell: Shell::Sh,
            stdin,
        },
    )
}

/// The VMs one value names: `web01,web02`, and govc's inventory paths (`/dc/vm/folder/web01`
/// names web01).
fn vm_names(value: &str) -> Vec<Target> {
    value
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|part| Target {
            name: part.rsplit('/').next().unwrap_or(part).to_owned(),
            kind: TargetKind::Vm,
        })
        .collect()
}

pub(super) fn vm_targets(ctx: &mut Ctx<'_>, program: &Program, names: &[Arg], why: String) {
    let mut targets = Vec::new();
    for name in names {
        let Some(value) = fixed(ctx, program, name, "the VM") else {
            return;
        };
        targets.extend(vm_names(value));
    }
    ctx.findings
        .push(finding(program, targets, Class::Mutating, why));
}

const VIRSH_VALUE_OPTIONS: &[&str] = &[
    "--mode",
    "--file",
    "--xml",
    "--xmlfile",
    "--snapshotname",
    "--name",
    "--description",
    "--target",
    "--source",
    "--type",
    "--driver",
    "--subdriver",
    "--cache",
    "--io",
    "--sourcetype",
    "--targetbus",
    "--mac",
    "--model",
    "--bus",
    "--size",
    "--nvram",
    "--memory",
    "--count",
    "--timeout",
    "--signame",
    "--parent",
    "--diskspec",
    "--memspec",
    "--format",
];

/// Whether a subcommand on virsh's read-only list sets something with these arguments:
/// `domtime --sync`/`--now`/`--time` set the guest's clock, `dommemstat --period` (with
/// `--config` or `--live`) changes the domain, `snapshot-current DOMAIN NAME` makes NAME the
/// current snapshot.
fn virsh_sets(subcommand: &str, rest: &[Arg]) -> bool {
    let has = |names: &[&str]| {
        rest.iter()
            .any(|a| names.iter().any(|n| a.text().split('=').next() == Some(*n)))
    };
    let operands = rest.iter().filter(|a| !a.text().starts_with('-')).count();
    match subcommand {
        "domtime" => has(&["--sync", "--now", "--time"]),
        "dommemstat" => has(&["--period"]),
        "snapshot-current" => operands > 1 || has(&["--snapshotname"]),
        _ => false,
    }
}

pub(super) fn virsh(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if !text.starts_with('-') {
            break;
        }
        i += if program.takes_value(text) { 2 } else { 1 };
    }
    // `virsh -c` with its value missing: no further word.
    let i = i.min(args.len());
    // `virsh --version`, `virsh -h`: it prints and ends.
    let prints = args[..i]
        .iter()
        .any(|a| matches!(a.text(), "-v" | "-V" | "--version" | "-h" | "--help"));
    if prints && i == args.len() {
        return Ok(());
    }
    let Some(sub) = args.get(i) else {
        ctx.findings.push(unknown_finding(
            program,
            String::from("an interactive virsh shell can run any command"),
        ));
        return Ok(());
    };
    let Some(subcommand) = fixed(ctx, program, sub, "the subcommand") else {
        return Ok(());
    };
    // `domtime` reads the guest's clock, and sets it with --sync, --time or --now.
    let sets = virsh_sets(subcommand, &args[i + 1..]);
    if program.is_read_only(subcommand) && !sets {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("virsh {subcommand} only reads"),
        ));
        return Ok(());
    }
    // A network, pool, volume or interface is no VM: the machine that changes is the
    // hypervisor a `-c qemu+ssh://host/…` connection names; without one, this machine's own
    // hypervisor changes, whose VMs' networks or disks may go with it (ask).
    if [
        "net-",
        "pool-",
        "vol-",
        "iface-",
        "nwfilter-",
        "secret-",
        "nodedev-",
    ]
    .iter()
    .any(|p| subcommand.starts_with(p))
    {
        let finding = virsh_hypervisor(program, &args[..i], subcommand);
        ctx.findings.push(finding);
        return Ok(());
    }
    let rest = &args[i + 1..];
    let domain = virsh_domain(rest);
    if subcommand == "qemu-agent-command" {
        return virsh_agent(ctx, program, rest);
    }
    let why = format!("virsh {subcommand} changes the domain");
    match domain {
        Some(d) => vm_targets(ctx, program, &[d], why),
        None => ctx.findings.push(unknown_finding(
            program,
            format!("virsh {subcommand} names no domain"),
        )),
    }
    Ok(())
}

/// The finding for a virsh subcommand that changes a hypervisor, not a VM: the machine the
/// connection (`-c qemu+ssh://host/…`) names; without one, this machine's own hypervisor
/// changes, whose VMs' networks or disks may go with it (ask). `options` are the words before
/// the subcommand.
fn virsh_hypervisor(program: &Program, options: &[Arg], subcommand: &str) -> Finding {
    let connection = options
        .windows(2)
        .find(|w| matches!(w[0].text(), "-c" | "--connect"))
        .map(|w| w[1].clone())
        .or_else(|| {
            options.iter().find_map(|a| {
                a.text()
                    .strip_prefix("--connect=")
                    .map(|v| Arg::literal(v.to_owned()))
            })
        });
    let hosts = connection
        .as_ref()
        .and_then(|uri| uri.value.as_deref())
        .map(net::hosts_in)
        .unwrap_or_default();
    match (hosts.first(), &connection) {
        (Some(host), _) if !host.is_empty() => finding(
            program,
            vec![Target {
                name: (*host).to_owned(),
                kind: TargetKind::Host,
            }],
            Class::Mutating,
            format!("virsh {subcommand} changes the hypervisor it connects to"),
        ),
        (_, Some(uri)) if uri.value.is_none() => not_fixed(program, "the connection", &uri.raw),
        _ => unknown_finding(
            program,
            format!("virsh {subcommand} changes this hypervisor, not a VM rewind can name"),
        ),
    }
}

/// The domain a virsh subcommand's words name: `--domain`, or the first operand.
fn virsh_domain(rest: &[Arg]) -> Option<Arg> {
    let mut domain = None;
    let mut j = 0;
    while let Some(arg) = rest.get(j) {
        let text = arg.text();
        j += 1;
        if let Some(value) = text.strip_prefix("--domain=") {
            domain = Some(Arg::literal(value.to_owned()));
            break;
        }
        if text == "--domain" {
            domain = rest.get(j).cloned();
            break;
        }
        if text.starts_with("--") {
            if VIRSH_VALUE_OPTIONS.contains(&text) {
                j += 1;
            }
            continue;
        }
        if domain.is_none() {
            domain = Some(arg.clone());
        }
    }
    domain
}

/// QEMU guest agent commands that only report on the guest.
const AGENT_READ_ONLY: &[&str] = &[
    "guest-info",
    "guest-ping",
    "guest-sync",
    "guest-sync-delimited",
    "guest-exec-status",
    "guest-get-osinfo",
    "guest-get-host-name",
    "guest-get-time",
    "guest-get-timezone",
    "guest-get-users",
    "guest-get-vcpus",
    "guest-get-fsinfo",
    "guest-get-disks",
    "guest-get-memory-blocks",
    "guest-get-memory-block-info",
    "guest-get-devices",
    "guest-get-cpustats",
    "guest-get-diskstats",
    "guest-get-load",
    "guest-fsfreeze-status",
    "guest-network-get-interfaces",
    "guest-network-get-route",
];

/// `virsh qemu-agent-command DOMAIN '{"execute": …}'`: a command the guest agent runs. One
/// that only reports decides nothing; `guest-exec` runs a program in the guest, judged as a
/// remote command; anything else, or JSON not read, asks.
fn virsh_agent(ctx: &mut Ctx<'_>, program: &Program, rest: &[Arg]) -> Result<(), Unknown> {
    let mut operands = Vec::new();
    let mut json = None;
    let mut j = 0;
    while let Some(arg) = rest.get(j) {
        let text = arg.text();
        j += 1;
        if let Some(value) = text.strip_prefix("--cmd=") {
            json = Some(Arg {
                raw: value.to_owned(),
                value: arg.value.as_ref().map(|_| value.to_owned()),
            });
        } else if matches!(text, "--cmd" | "--domain" | "--timeout") {
            if text == "--cmd" {
                json = rest.get(j).cloned();
            }
            j += 1;
        } else if !text.starts_with("--") {
            operands.push(arg.clone());
        }
    }
    let has_domain = rest
        .iter()
        .any(|a| a.text() == "--domain" || a.text().starts_with("--domain="));
    let json = json.or_else(|| operands.get(usize::from(!has_domain)).cloned());
    let parsed: Option<serde_json::Value> = json
        .as_ref()
        .and_then(|j| j.value.as_deref())
        .and_then(|text| serde_json::from_str(text).ok());
    let execute = parsed
        .as_ref()
        .and_then(|v| v.get("execute"))
        .and_then(serde_json::Value::as_str);
    let inner = match execute {
        Some(name) if AGENT_READ_ONLY.contains(&name) => {
            ctx.findings.push(finding(
                program,
                Vec::new(),
                Class::ReadOnly,
                format!("the guest agent's `{name}` only reports"),
            ));
            return Ok(());
        }
        Some("guest-exec") => agent_exec(parsed.as_ref().and_then(|v| v.get("arguments"))),
        Some(name) => Inner::Unread(format!("the guest agent's `{name}` can change the guest")),
        None => Inner::Unread(String::from("the guest agent's command is not read here")),
    };
    exec::run(
        ctx,
        program,
        Exec {
            targets: Err(String::from(
                "what the guest agent does in the guest beyond a report is asked about",
            )),
            inner,
            shell: Shell::Sh,
            stdin: Stdin::Inherited,
        },
    )
}

/// The program a `guest-exec` runs: its `path` and `arg`, after the `env` it sets. Input data
/// sent to it is not read.
fn agent_exec(arguments: Option<&serde_json::Value>) -> Inner {
    let strings = |key: &str| -> Option<Vec<String>> {
        match arguments?.get(key) {
            None => Some(Vec::new()),
            Some(list) => list
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect(),
        }
    };
    let path = arguments
        .and_then(|a| a.get("path"))
        .and_then(serde_json::Value::as_str);
    let unread = || Inner::Unread(String::from("the program guest-exec runs is not read here"));
    if arguments.is_some_and(|a| a.get("input-data").is_some()) {
        return Inner::Unread(String::from(
            "guest-exec sends input to the program, which is not read here",
        ));
    }
    let (Some(path), Some(args), Some(env)) = (path, strings("arg"), strings("env")) else {
        return unread();
    };
    let words: Vec<Arg> = std::iter::once(path.to_owned())
        .chain(args)
        .map(Arg::literal)
        .collect();
    let env: Vec<Arg> = env.into_iter().map(Arg::literal).collect();
    Inner::Text(exec::argv_line(&env, &words))
}
