//! XenServer's and XCP-ng's `xe COMMAND key=value …`: a VM-level command names its VM with
//! `vm=` (a name or a uuid) or, outside `*-param-set`, `name-label=`. A VM or an object of one
//! named by uuid alone (`uuid=`, `snapshot-uuid=`, `vdi-uuid=`), a selection by other fields
//! (`power-state=running --multiple`), and a change of the host or pool itself ask: which VM
//! they change is not in the text.

use super::{Ctx, finding, fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::types::{Arg, Class, Target, TargetKind, Unknown};

/// Object classes whose commands change a VM (or something of one: its snapshot, disk,
/// network interface, block device).
const VM_OBJECTS: &[&str] = &[
    "vm-",
    "snapshot-",
    "template-",
    "vbd-",
    "vif-",
    "vdi-",
    "vgpu-",
];

pub(super) fn xe(ctx: &mut Ctx<'_>, program: &Program, args: &[Arg]) -> Result<(), Unknown> {
    let mut command = None;
    let mut params: Vec<(String, Arg)> = Vec::new();
    let mut multiple = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let text = arg.text();
        if text.starts_with('-') {
            multiple |= text == "--multiple";
            i += usize::from(program.takes_value(text));
            continue;
        }
        match text.split_once('=') {
            Some((key, value)) => params.push((
                key.to_ascii_lowercase(),
                Arg {
                    raw: value.to_owned(),
                    value: arg.value.as_ref().map(|_| value.to_owned()),
                },
            )),
            None if command.is_none() => command = Some(arg),
            None => {}
        }
    }
    let Some(word) = command else {
        return Ok(());
    };
    let Some(command) = fixed(ctx, program, word, "the xe command") else {
        return Ok(());
    };
    let command = command.to_ascii_lowercase();
    if program.is_read_only(&command) {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("xe {command} only reads"),
        ));
        return Ok(());
    }
    if !VM_OBJECTS.iter().any(|o| command.starts_with(o)) {
        ctx.findings.push(unknown_finding(
            program,
            format!("xe {command} changes the XenServer host or pool, not a VM rewind can name"),
        ));
        return Ok(());
    }
    let name_selects = !command.ends_with("-param-set") && !command.ends_with("-param-clear");
    let selector = params.iter().find(|(key, _)| {
        key == "vm" || (name_selects && command.starts_with("vm-") && key == "name-label")
    });
    match selector {
        Some((_, name)) if !multiple => {
            let Some(vm) = fixed(ctx, program, name, "the VM") else {
                return Ok(());
            };
            ctx.findings.push(finding(
                program,
                vec![Target {
                    name: vm.to_owned(),
                    kind: TargetKind::Vm,
                }],
                Class::Mutating,
                format!("xe {command} changes the VM"),
            ));
        }
        _ => ctx.findings.push(unknown_finding(
            program,
            format!("xe {command} names its VM by uuid or by a selection, not by name"),
        )),
    }
    Ok(())
}
