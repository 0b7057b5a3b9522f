//! Hypervisor CLIs that name the VM itself: `govc` (`-vm`, `vm.*` subcommands) and `virsh` (a
//! domain, or the hypervisor a `-c` connection names).

use super::{Ctx, finding, fixed, not_fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::net;
use crate::shell::types::{Arg, Class, Target, TargetKind, Unknown};

pub(super) fn govc(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let Some(sub) = args.first() else {
        return Ok(());
    };
    let Some(subcommand) = fixed(ctx, program, sub, "the subcommand") else {
        return Ok(());
    };
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
    let class = if program.is_read_only(subcommand) {
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

fn vm_targets(ctx: &mut Ctx<'_>, program: &Program, names: &[Arg], why: String) {
    let mut targets = Vec::new();
    for name in names {
        let Some(value) = fixed(ctx, program, name, "the VM") else {
            return;
        };
        for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            // govc takes inventory paths: /dc/vm/folder/web01 names web01.
            let vm = part.rsplit('/').next().unwrap_or(part);
            targets.push(Target {
                name: vm.to_owned(),
                kind: TargetKind::Vm,
            });
        }
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

pub(super) fn virsh(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if !text.starts_with('-') {
            break;
        }
        i += if program.takes_value(text) { 2 } else { 1 };
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
    if program.is_read_only(subcommand) {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("virsh {subcommand} only reads"),
        ));
        return Ok(());
    }
    // A network, pool, volume or interface is no VM: the machine that changes is the
    // hypervisor a `-c qemu+ssh://host/…` connection names (none: this machine).
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
        let connection = args[..i]
            .windows(2)
            .find(|w| matches!(w[0].text(), "-c" | "--connect"))
            .map(|w| w[1].clone())
            .or_else(|| {
                args[..i].iter().find_map(|a| {
                    a.text()
                        .strip_prefix("--connect=")
                        .map(|v| Arg::literal(v.to_owned()))
                })
            });
        if let Some(uri) = connection {
            let hosts = uri.value.as_deref().map(net::hosts_in).unwrap_or_default();
            match hosts.first() {
                Some(host) if !host.is_empty() => ctx.findings.push(finding(
                    program,
                    vec![Target {
                        name: (*host).to_owned(),
                        kind: TargetKind::Host,
                    }],
                    Class::Mutating,
                    format!("virsh {subcommand} changes the hypervisor it connects to"),
                )),
                _ if uri.value.is_none() => {
                    ctx.findings
                        .push(not_fixed(program, "the connection", &uri.raw));
                }
                _ => {}
            }
        }
        return Ok(());
    }
    let rest = &args[i + 1..];
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
