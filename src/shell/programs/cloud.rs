//! The cloud CLIs where they reach into a VM: `gcloud compute ssh` (its `--command`), `gcloud
//! compute scp` (the instance it writes to), `gcloud compute instances ACTION NAME…`, `az vm
//! run-command invoke` (its `--scripts`, in the shell its `--command-id` names), `az vm
//! ACTION -n NAME`, and `aws ssm send-command` (the `commands` of a shell document, on
//! instance ids that name no VM here). Anything else of `az` and `aws` is read as the `fleet`
//! grammar reads it; anything else of `gcloud` as a program no grammar reads.

use super::exec::{self, Exec, Inner, Shell};
use super::{Ctx, finding, fleet, host_of, unknown_finding, unread_program};
use crate::shell::catalog::Program;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown};

/// A cloud CLI's words: its operands, and its options with the values they took.
#[derive(Default)]
struct Words<'a> {
    operands: Vec<&'a Arg>,
    /// (option, values): `--scripts` takes every word up to the next option.
    values: Vec<(String, Vec<Arg>)>,
    flags: Vec<String>,
    /// The words after a literal `--`.
    after_dashes: Vec<Arg>,
}

impl Words<'_> {
    /// The values of the last of these options given.
    fn value(&self, names: &[&str]) -> Option<&[Arg]> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.as_slice())
    }
}

/// Options that take every word up to the next option as values (Azure's `nargs='+'`).
const MANY_VALUES: &[&str] = &["--scripts", "--instance-ids", "--ids"];

fn words<'a>(program: &Program, args: &'a [Arg]) -> Words<'a> {
    let mut parsed = Words::default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if text == "--" {
            parsed.after_dashes = args[i..].to_vec();
            break;
        }
        if !text.starts_with('-') || text.len() < 2 {
            parsed.operands.push(arg);
            continue;
        }
        if let Some((key, value)) = text.split_once('=').filter(|_| text.starts_with("--")) {
            let value = Arg {
                raw: value.to_owned(),
                value: arg.value.as_ref().map(|_| value.to_owned()),
            };
            parsed.values.push((key.to_owned(), vec![value]));
        } else if MANY_VALUES.contains(&text) {
            let mut values = Vec::new();
            while let Some(next) = args.get(i).filter(|a| !a.text().starts_with('-')) {
                values.push(next.clone());
                i += 1;
            }
            parsed.values.push((text.to_owned(), values));
        } else if program.takes_value(text) {
            parsed
                .values
                .push((text.to_owned(), args.get(i).cloned().into_iter().collect()));
            i += 1;
        } else {
            parsed.flags.push(text.to_owned());
        }
    }
    parsed
}

pub(super) fn cloud(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let mut parsed = words(program, args);
    // `gcloud beta compute ssh …`: a release track before the command group.
    if program.names[0] == "gcloud"
        && parsed
            .operands
            .first()
            .is_some_and(|a| matches!(a.text(), "alpha" | "beta" | "preview"))
    {
        parsed.operands.remove(0);
    }
    let operand = |k: usize| parsed.operands.get(k).map_or("", |a| a.text());
    match (program.names[0].as_str(), operand(0), operand(1)) {
        ("gcloud", "compute", "ssh") => gcloud_ssh(ctx, program, &parsed, cmd),
        ("gcloud", "compute", "scp") => gcloud_scp(ctx, program, &parsed),
        ("gcloud", "compute", "instances") => gcloud_instances(ctx, program, &parsed, cmd),
        // A tunnel to one port of the instance runs nothing there.
        ("gcloud", "compute", "start-iap-tunnel") => Ok(()),
        ("gcloud", "compute", "instance-groups") => {
            gcloud_instance_groups(ctx, program, &parsed);
            Ok(())
        }
        ("gcloud", ..) => {
            let name = cmd.words.first().map_or("", Arg::text).to_owned();
            unread_program(ctx, &name, cmd)
        }
        ("az", "vm" | "vmss", "run-command") if operand(2) == "invoke" => {
            az_run_command(ctx, program, &parsed, operand(0) == "vmss")
        }
        ("az", "vm", action) if program.is_mutating(action) => az_vm(ctx, program, &parsed),
        ("aws", "ssm", "send-command") => aws_send_command(ctx, program, &parsed),
        _ => fleet::fleet(ctx, program, args, cmd),
    }
}

/// `gcloud compute instance-groups [managed|unmanaged] ACTION GROUP`: listings only read;
/// anything else (a rolling restart, a resize, recreating instances) changes instances the
/// text does not name.
fn gcloud_instance_groups(ctx: &mut Ctx<'_>, program: &Program, parsed: &Words<'_>) {
    let reads = parsed.operands.iter().skip(2).any(|a| {
        matches!(
            a.text(),
            "list"
                | "describe"
                | "list-instances"
                | "list-errors"
                | "get-named-ports"
                | "describe-instance"
                | "list-instance-configs"
        )
    });
    if !reads {
        ctx.findings.push(unknown_finding(
            program,
            String::from("changes the instances of a group, which the command does not name"),
        ));
    }
}

/// The machine a value names (`admin@web01`, `web01`), or why it is not known.
fn machine(arg: &Arg) -> Result<Vec<Target>, String> {
    match arg.value.as_deref() {
        Some(name) => Ok(vec![Target {
            name: host_of(name),
            kind: TargetKind::Host,
        }]),
        None => Err(format!(
            "the machine `{}` is only known when the command runs",
            arg.raw
        )),
    }
}

/// `gcloud compute ssh [USER@]INSTANCE [--command CMD] [-- SSH_ARGS]`.
fn gcloud_ssh(
    ctx: &mut Ctx<'_>,
    program: &Program,
    parsed: &Words<'_>,
    cmd: &Cmd,
) -> Result<(), Unknown> {
    if parsed.flags.iter().any(|f| f == "--dry-run") {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            String::from("--dry-run only prints the ssh command"),
        ));
        return Ok(());
    }
    let Some(instance) = parsed.operands.get(2) else {
        return Ok(());
    };
    let inner = if !parsed.after_dashes.is_empty() || parsed.value(&["--ssh-flag"]).is_some() {
        Inner::Unread(String::from(
            "passes arguments to ssh that are not read here",
        ))
    } else {
        match parsed.value(&["--command"]).and_then(<[Arg]>::first) {
            Some(command) => Inner::Text(command.clone()),
            None => Inner::Unread(String::from("opens an interactive session on the instance")),
        }
    };
    let stdin = if parsed.value(&["--command"]).is_some() {
        cmd.stdin.clone()
    } else {
        Stdin::Inherited
    };
    exec::run(
        ctx,
        program,
        Exec {
            targets: machine(instance),
            inner,
            shell: Shell::Sh,
            stdin,
        },
    )
}

/// `gcloud compute scp SRC… DEST`: `[USER@]INSTANCE:PATH` as the destination writes to that
/// instance; as a source it only reads.
fn gcloud_scp(ctx: &mut Ctx<'_>, program: &Program, parsed: &Words<'_>) -> Result<(), Unknown> {
    let copies = &parsed.operands[2.min(parsed.operands.len())..];
    let Some((destination, sources)) = copies.split_last() else {
        return Ok(());
    };
    let remote = |a: &Arg| {
        a.text()
            .split_once(':')
            .filter(|(host, _)| !host.is_empty() && !host.contains('/'))
            .map(|(host, _)| host.to_owned())
    };
    match remote(destination) {
        Some(_) if destination.value.is_none() => ctx.findings.push(unknown_finding(
            program,
            format!(
                "the destination `{}` is only known when the command runs",
                destination.raw
            ),
        )),
        Some(host) => ctx.findings.push(finding(
            program,
            vec![Target {
                name: host_of(&host),
                kind: TargetKind::Host,
            }],
            Class::Mutating,
            String::from("copies files onto the instance"),
        )),
        None if sources.iter().any(|s| remote(s).is_some()) => ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            String::from("copies files from the instance"),
        )),
        None => {}
    }
    Ok(())
}

/// `gcloud compute instances ACTION NAME…`: an action the catalog lists as reading decides
/// nothing; one it lists as changing checkpoints the instances named; any other asks.
fn gcloud_instances(
    ctx: &mut Ctx<'_>,
    program: &Program,
    parsed: &Words<'_>,
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let Some(action) = parsed.operands.get(2).map(|a| a.text()) else {
        return Ok(());
    };
    if program.is_read_only(action) {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("`instances {action}` only reads"),
        ));
        return Ok(());
    }
    if !program.is_mutating(action) {
        ctx.findings.push(unknown_finding(
            program,
            format!("`gcloud compute instances {action}` is not read here"),
        ));
        return Ok(());
    }
    let names = &parsed.operands[3..];
    let mut targets = Vec::new();
    for name in names {
        match machine(name) {
            Ok(found) => targets.extend(found),
            Err(why) => {
                ctx.findings.push(unknown_finding(program, why));
                return Ok(());
            }
        }
    }
    if targets.is_empty() {
        let name = cmd.words.first().map_or("", Arg::text);
        ctx.findings.push(unknown_finding(
            program,
            format!("`{name} compute instances {action}` names no instance"),
        ));
        return Ok(());
    }
    ctx.findings.push(finding(
        program,
        targets,
        Class::Mutating,
        format!("`instances {action}` changes the instances"),
    ));
    Ok(())
}

/// The VMs an `az vm` call names: `-n`/`--name`, or the last part of each `--ids`.
fn az_targets(parsed: &Words<'_>) -> Result<Vec<Target>, String> {
    let names: Vec<Arg> = match (parsed.value(&["-n", "--name"]), parsed.value(&["--ids"])) {
        (Some(names), _) => names.to_vec(),
        (None, Some(ids)) => ids
            .iter()
            .map(|id| Arg {
                raw: id.raw.clone(),
                value: id
                    .value
                    .as_deref()
                    .and_then(|v| v.trim_end_matches('/').rsplit('/').next())
                    .map(str::to_owned),
            })
            .collect(),
        (None, None) => return Err(String::from("names no VM (-n or --ids)")),
    };
    let mut targets = Vec::new();
    for name in &names {
        targets.extend(machine(name)?);
    }
    if targets.is_empty() {
        return Err(String::from("names no VM (-n or --ids)"));
    }
    Ok(targets)
}

/// `az vm ACTION -n NAME` for an action the catalog lists as changing the VM.
fn az_vm(ctx: &mut Ctx<'_>, program: &Program, parsed: &Words<'_>) -> Result<(), Unknown> {
    let action = parsed.operands.get(1).map_or("", |a| a.text());
    let why = format!("`az vm {action}` changes the VM");
    ctx.findings.push(match az_targets(parsed) {
        Ok(targets) => finding(program, targets, Class::Mutating, why),
        Err(unknown) => unknown_finding(program, unknown),
    });
    Ok(())
}

/// Run commands that only read whatever they are given.
const AZ_READ_ONLY_COMMANDS: &[&str] = &["ifconfig", "ipconfig"];

/// `az vm run-command invoke -n NAME --command-id RunShellScript --scripts '…'`: the scripts
/// in the shell the command id names (a file `@x.sh` or parameters are not read); a scale
/// set's instance id names no VM here.
fn az_run_command(
    ctx: &mut Ctx<'_>,
    program: &Program,
    parsed: &Words<'_>,
    scale_set: bool,
) -> Result<(), Unknown> {
    let id = parsed
        .value(&["--command-id"])
        .and_then(<[Arg]>::first)
        .map(|a| a.text().to_ascii_lowercase())
        .unwrap_or_default();
    let shell = match id.as_str() {
        "runshellscript" => Some(Shell::Sh),
        "runpowershellscript" => Some(Shell::Pwsh),
        _ => None,
    };
    let scripts = parsed.value(&["--scripts"]).unwrap_or_default();
    if AZ_READ_ONLY_COMMANDS.contains(&id.as_str()) && scripts.is_empty() {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("the run command `{id}` only reads"),
        ));
        return Ok(());
    }
    let inner = if shell.is_none() {
        Inner::Unread(format!("the run command `{id}` is not read here"))
    } else if parsed.value(&["--parameters"]).is_some() {
        Inner::Unread(String::from(
            "passes parameters to the script, which are not read",
        ))
    } else if scripts.is_empty() {
        Inner::Unread(String::from("names no script"))
    } else if let Some(file) = scripts.iter().find(|s| s.text().starts_with('@')) {
        Inner::Unread(format!(
            "runs the script in `{}`, which is not read",
            file.raw
        ))
    } else {
        let lines: Option<Vec<&str>> = scripts.iter().map(|s| s.value.as_deref()).collect();
        let raw: Vec<&str> = scripts.iter().map(|s| s.raw.as_str()).collect();
        Inner::Text(Arg {
            raw: raw.join("\n"),
            value: lines.map(|l| l.join("\n")),
        })
    };
    let targets = if scale_set {
        Err(String::from("a scale set's instance id names no VM here"))
    } else {
        az_targets(parsed)
    };
    exec::run(
        ctx,
        program,
        Exec {
            targets,
            inner,
            shell: shell.unwrap_or(Shell::Sh),
            stdin: Stdin::Inherited,
        },
    )
}

/// `aws ssm send-command --document-name AWS-RunShellScript --parameters
/// 'commands=["uptime"]' --instance-ids i-…`: the commands of a shell document, judged; the
/// instance ids (or tags) name no VM here.
fn aws_send_command(
    ctx: &mut Ctx<'_>,
    program: &Program,
    parsed: &Words<'_>,
) -> Result<(), Unknown> {
    let document = parsed
        .value(&["--document-name"])
        .and_then(<[Arg]>::first)
        .map(|a| a.text().to_owned())
        .unwrap_or_default();
    let shell = match document.as_str() {
        "AWS-RunShellScript" => Some(Shell::Sh),
        "AWS-RunPowerShellScript" => Some(Shell::Pwsh),
        _ => None,
    };
    let parameters = parsed.value(&["--parameters"]).and_then(<[Arg]>::first);
    let inner = match (shell, parameters) {
        // The whole request can come from a file instead.
        _ if parsed
            .value(&["--cli-input-json", "--cli-input-yaml"])
            .is_some() =>
        {
            Inner::Unread(String::from("the request is read from input not read here"))
        }
        (None, _) => Inner::Unread(format!("the document `{document}` is not read here")),
        (Some(_), None) => Inner::Unread(String::from("names no commands")),
        (Some(_), Some(parameters)) => match parameters.value.as_deref().map(ssm_commands) {
            Some(Ok(lines)) => Inner::Text(Arg::literal(lines.join("\n"))),
            Some(Err(why)) => Inner::Unread(why),
            None => Inner::Unread(format!(
                "the parameters `{}` are only known when the command runs",
                parameters.raw
            )),
        },
    };
    exec::run(
        ctx,
        program,
        Exec {
            targets: Err(String::from(
                "SSM names instances by ids or tags, which name no VM here",
            )),
            inner,
            shell: shell.unwrap_or(Shell::Sh),
            stdin: Stdin::Inherited,
        },
    )
}

/// The `commands` of an SSM shell document's parameters, written as JSON (`{"commands":
/// […]}`) or in the CLI's shorthand (`commands=[…]`, `commands=uptime`). Any other
/// parameter, or a file, is not read.
fn ssm_commands(text: &str) -> Result<Vec<String>, String> {
    let unread = || format!("the parameters `{text}` are not read here");
    let value: serde_json::Value = if text.trim_start().starts_with('{') {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|_| unread())?;
        if map.keys().any(|k| k != "commands") {
            return Err(unread());
        }
        map.get("commands").cloned().ok_or_else(unread)?
    } else {
        let list = text.strip_prefix("commands=").ok_or_else(unread)?;
        if list.starts_with('[') {
            serde_json::from_str(list).map_err(|_| unread())?
        } else if list.contains([',', '[', ']', '{', '}']) {
            return Err(unread());
        } else {
            serde_json::Value::String(list.to_owned())
        }
    };
    match value {
        serde_json::Value::String(line) => Ok(vec![line]),
        serde_json::Value::Array(lines) => lines
            .into_iter()
            .map(|l| l.as_str().map(str::to_owned).ok_or_else(unread))
            .collect(),
        _ => Err(unread()),
    }
}
