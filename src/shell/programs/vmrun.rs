//! VMware's `vmrun` (Workstation, Fusion, ESX through `-T esx -h host`): options, a command,
//! then the VM named by its `.vmx` file. The VM is the file's stem, or the directory holding
//! it, whichever the protected-VM net knows (`/vmfs/volumes/ds1/web01/web01.vmx` is web01).
//! Commands that run a program in the guest have that program judged as a remote command.

use super::exec::{self, Exec, Inner, Shell};
use super::{Ctx, finding, fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::types::{Arg, Class, Stdin, Target, TargetKind, Unknown};

/// Commands that name no VM: they list what the host runs or knows.
const HOST_COMMANDS: &[&str] = &["list", "listregisteredvm", "listhostnetworks"];

/// Commands that run a program in the guest: the program and its arguments follow the VM
/// after these flags.
const GUEST_RUNS: &[&str] = &["runprograminguest"];
const GUEST_RUN_FLAGS: &[&str] = &["-nowait", "-activewindow", "-interactive"];

pub(super) fn vmrun(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let mut i = 0;
    while let Some(arg) = args.get(i).filter(|a| a.text().starts_with('-')) {
        i += if program.takes_value(arg.text()) {
            2
        } else {
            1
        };
    }
    let Some(word) = args.get(i) else {
        return Ok(());
    };
    let Some(command) = fixed(ctx, program, word, "the vmrun command") else {
        return Ok(());
    };
    let command = command.to_ascii_lowercase();
    if HOST_COMMANDS.contains(&command.as_str()) {
        return Ok(());
    }
    let Some(vmx) = args.get(i + 1) else {
        ctx.findings.push(unknown_finding(
            program,
            format!("vmrun {command} names no .vmx file"),
        ));
        return Ok(());
    };
    let Some(path) = fixed(ctx, program, vmx, "the .vmx file") else {
        return Ok(());
    };
    let vm = Target {
        name: vm_of(path, ctx),
        kind: TargetKind::Vm,
    };
    if GUEST_RUNS.contains(&command.as_str()) {
        let rest = &args[i + 2..];
        let skip = rest
            .iter()
            .take_while(|a| GUEST_RUN_FLAGS.contains(&a.text().to_ascii_lowercase().as_str()))
            .count();
        let inner = match &rest[skip..] {
            [] => Inner::Unread(format!("vmrun {command} names no program")),
            words => Inner::Line(words.to_vec()),
        };
        return exec::run(
            ctx,
            program,
            Exec {
                targets: Ok(vec![vm]),
                inner,
                shell: Shell::Sh,
                stdin: Stdin::default(),
            },
        );
    }
    let finding = if program.is_read_only(&command) {
        finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("vmrun {command} only reads"),
        )
    } else {
        finding(
            program,
            vec![vm],
            Class::Mutating,
            format!("vmrun {command} changes the VM"),
        )
    };
    ctx.findings.push(finding);
    Ok(())
}

/// The VM a `.vmx` path names: its stem, or else its directory when only that is protected
/// (`[ds1] web01/web01.vmx`, `C:\VMs\web01\Windows Server.vmx`).
fn vm_of(path: &str, ctx: &Ctx<'_>) -> String {
    let mut parts = path
        .rsplit(['/', '\\'])
        .map(|p| p.rsplit_once("] ").map_or(p, |(_, rest)| rest).trim());
    let file = parts.next().unwrap_or(path);
    let stem = file
        .len()
        .checked_sub(4)
        .filter(|&at| file.is_char_boundary(at) && file[at..].eq_ignore_ascii_case(".vmx"))
        .map_or(file, |at| &file[..at]);
    match parts.next() {
        Some(dir) if !ctx.known.contains(stem) && ctx.known.contains(dir) => dir.to_owned(),
        _ => stem.to_owned(),
    }
}
