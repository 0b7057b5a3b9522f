//! PowerShell cmdlets: remoting (`Invoke-Command`, `Enter-PSSession`, `New-PSSession`), the
//! computer cmdlets (`Restart-Computer`, `Stop-Computer`), the VM cmdlets (Hyper-V, PowerCLI)
//! and `Start-Process`, with PowerShell's parameter binding (prefixes, aliases, switches).

use super::flow::{self, Held};
use super::{Ctx, code, finding, host_of, not_fixed, unknown_finding};
use crate::shell::catalog::Program;
use crate::shell::dialect::Dialect;
use crate::shell::remote;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown, clip};
use crate::shell::wrappers::join;

/// `Start-Process [-FilePath] PROGRAM [[-ArgumentList] ARGS]` (`saps`, `start`): the command
/// line it starts.
pub(super) fn start_process(name: &str, args: &[Arg]) -> Option<Arg> {
    if !matches!(
        name.to_ascii_lowercase().as_str(),
        "start-process" | "saps" | "start"
    ) {
        return None;
    }
    let parsed = ps_args(
        args,
        &[
            "NoNewWindow",
            "PassThru",
            "Wait",
            "UseNewEnvironment",
            "LoadUserProfile",
        ],
    );
    let file = parsed
        .get("FilePath", &["PSPath", "Path"])
        .cloned()
        .flatten()
        .or_else(|| parsed.positional.first().cloned())?;
    let arguments = parsed
        .get("ArgumentList", &["Args"])
        .cloned()
        .flatten()
        .or_else(|| parsed.positional.get(1).cloned());
    let mut words = vec![file];
    if let Some(list) = arguments {
        // `-ArgumentList "web01","reboot"` is a list; its items are joined by spaces.
        words.push(Arg {
            raw: list.raw.replace(',', " "),
            value: list.value.map(|v| v.replace(',', " ")),
        });
    }
    Some(join(&words))
}

/// The drive a command maps to a share: `New-PSDrive [-Name] X [-PSProvider] FileSystem
/// [-Root] \\win01\c$` (`ndr`, `mount`), `New-SmbMapping -LocalPath X: -RemotePath …`,
/// `net use X: \\win01\share`. The drive's name, without its colon, and the root.
pub(super) fn mapped_drive(words: &[Arg]) -> Option<(String, Arg)> {
    let (first, args) = words.split_first()?;
    let name = first.value.as_deref()?.to_ascii_lowercase();
    let (drive, root) = match name.trim_end_matches(".exe") {
        "new-psdrive" | "ndr" | "mount" => {
            let parsed = ps_args(args, &["Persist"]);
            let drive = parsed
                .get("Name", &[])
                .cloned()
                .flatten()
                .or_else(|| parsed.positional.first().cloned())?;
            let root = parsed
                .get("Root", &[])
                .cloned()
                .flatten()
                .or_else(|| parsed.positional.get(2).cloned())?;
            (drive, root)
        }
        "new-smbmapping" => {
            let parsed = ps_args(args, &["Persistent"]);
            let drive = parsed.get("LocalPath", &[]).cloned().flatten()?;
            let root = parsed.get("RemotePath", &[]).cloned().flatten()?;
            (drive, root)
        }
        "net" => match args {
            [verb, drive, root, ..] if verb.text().eq_ignore_ascii_case("use") => {
                (drive.clone(), root.clone())
            }
            _ => return None,
        },
        _ => return None,
    };
    let drive = drive.value?.trim_end_matches(':').to_ascii_lowercase();
    (!drive.is_empty() && !drive.contains(['\\', '/'])).then_some((drive, root))
}

/// PowerShell parameters as typed: `(name, value)` pairs, switches, and positional words.
struct PsArgs {
    named: Vec<(String, Option<Arg>)>,
    positional: Vec<Arg>,
}

/// Whether `given` (without the dash) names `full` or one of its aliases; PowerShell accepts
/// any unambiguous prefix, and an ambiguous one fails before anything runs.
fn ps_param(given: &str, full: &str, aliases: &[&str]) -> bool {
    let given = given.to_ascii_lowercase();
    aliases.iter().any(|a| a.eq_ignore_ascii_case(&given))
        || (!given.is_empty() && full.to_ascii_lowercase().starts_with(&given))
}

/// Switches every cmdlet takes (PowerShell's common parameters and the usual few): never
/// read as taking the next word, so `Restart-Computer -Verbose win01` names win01.
const COMMON_SWITCHES: &[&str] = &[
    "Verbose", "Debug", "WhatIf", "Confirm", "Force", "PassThru", "AsJob",
];

/// Parameters that take a value and are also the start of a switch's name (`-For` of
/// Restart-Computer is not `-Force`): named exactly, they take the next word.
const VALUE_PARAMETERS: &[&str] = &["For", "Delay", "Timeout", "Protocol", "Credential"];

/// A parameter as written (`-Name`, `-Name:value`, `–Name` with an en dash): its name, with
/// any backtick taken away (``-Comp`uterName``), and the value attached to it. A quoted word
/// is an argument, never a parameter.
fn parameter(arg: &Arg) -> Option<(String, Option<Arg>)> {
    // PowerShell takes an en dash, an em dash or a horizontal bar for `-`.
    let dashed = |text: &str| {
        text.strip_prefix(['-', '\u{2013}', '\u{2014}', '\u{2015}'])
            .filter(|rest| rest.starts_with(char::is_alphabetic))
            .map(str::to_owned)
    };
    dashed(&arg.raw)?;
    let written = dashed(arg.text()).or_else(|| dashed(&arg.raw))?;
    let Some((name, value)) = written.split_once(':') else {
        return Some((written, None));
    };
    let raw = arg.raw.split_once(':').map_or(value, |(_, r)| r);
    let value = match &arg.value {
        Some(_) => Some(value.to_owned()),
        None if raw.starts_with('$') || raw.starts_with('(') => None,
        None => Some(raw.trim_matches(['\'', '"']).to_owned()),
    };
    Some((
        name.to_owned(),
        Some(Arg {
            raw: raw.to_owned(),
            value,
        }),
    ))
}

fn ps_args(args: &[Arg], switches: &[&str]) -> PsArgs {
    let mut parsed = PsArgs {
        named: Vec::new(),
        positional: Vec::new(),
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some((name, attached)) = parameter(arg) else {
            parsed.positional.push(arg.clone());
            continue;
        };
        if attached.is_some() {
            parsed.named.push((name, attached));
            continue;
        }
        let takes_a_value = VALUE_PARAMETERS
            .iter()
            .any(|p| p.eq_ignore_ascii_case(&name));
        if !takes_a_value
            && switches
                .iter()
                .chain(COMMON_SWITCHES)
                .any(|s| ps_param(&name, s, &[]) && name.len() >= 2)
        {
            parsed.named.push((name, None));
            continue;
        }
        // A parameter followed by another is a switch: PowerShell never binds a parameter
        // name as a value.
        let value = args
            .get(i)
            .filter(|next| parameter(next).is_none())
            .cloned();
        if value.is_some() {
            i += 1;
        }
        parsed.named.push((name, value));
    }
    parsed
}

impl PsArgs {
    fn get(&self, full: &str, aliases: &[&str]) -> Option<&Option<Arg>> {
        self.named
            .iter()
            .find(|(n, _)| ps_param(n, full, aliases))
            .map(|(_, v)| v)
    }

    /// Whether a switch is set: written (or abbreviated) alone or `:$true`. `-WhatIf:$false`,
    /// and a value only known when the command runs, do not set it.
    fn has(&self, full: &str) -> bool {
        self.named.iter().any(|(n, v)| {
            ps_param(n, full, &[])
                && n.len() >= 2
                && v.as_ref()
                    .is_none_or(|v| v.raw.eq_ignore_ascii_case("$true"))
        })
    }
}

/// Computer names from a PowerShell value (`a,b`, `'a','b'`, `@('a','b')`).
fn ps_names(arg: &Arg) -> Result<Vec<String>, String> {
    let Some(value) = arg.value.as_deref() else {
        return Err(arg.raw.clone());
    };
    // `admin@web01:22` (an ssh -HostName) is web01; `localhost` and `.` are this machine.
    let names: Vec<String> = value
        .split(',')
        .map(|n| n.trim().trim_matches(['\'', '"']))
        .filter(|n| !n.is_empty())
        .map(host_of)
        .filter(|n| n != "." && !crate::inventory::is_loopback(n))
        .collect();
    if names.is_empty() && !value.trim().is_empty() {
        return Ok(names);
    }
    if names.is_empty() {
        Err(arg.raw.clone())
    } else {
        Ok(names)
    }
}

fn add_names(
    value: Option<&Arg>,
    kind: &TargetKind,
    what: &str,
    targets: &mut Vec<Target>,
    unknown: &mut Option<String>,
) {
    match value {
        None => *unknown = Some(format!("{what} has no value")),
        Some(arg) => match ps_names(arg) {
            Ok(names) => targets.extend(names.into_iter().map(|n| Target {
                name: if matches!(kind, TargetKind::Host) {
                    host_of(&n)
                } else {
                    n
                },
                kind: kind.clone(),
            })),
            Err(raw) => {
                *unknown = Some(format!(
                    "{what} `{raw}` is only known when the command runs"
                ));
            }
        },
    }
}

const PS_REMOTING_SWITCHES: &[&str] = &[
    "AsJob",
    "HideComputerName",
    "InDisconnectedSession",
    "EnableNetworkAccess",
    "NoNewScope",
    "RunAsAdministrator",
    "UseSSL",
    "UseWindowsPowerShell",
    "AllowRedirection",
    "EnableNetworkAccess",
];

/// The computers a remoting cmdlet's parameters name (`-ComputerName`, `-HostName`, `-VMName`,
/// `-ConnectionUri`, a `-Session` opened earlier in the command, the first positional word),
/// and why some of them are not known. `invoke`: Invoke-Command, whose first positional
/// word may be the script block.
fn remoting_targets(
    ctx: &mut Ctx<'_>,
    parsed: &PsArgs,
    invoke: bool,
) -> (Vec<Target>, Option<String>) {
    let mut targets = Vec::new();
    let mut unknown = None;
    let mut session = false;
    if let Some(v) = parsed.get("ComputerName", &["cn"]) {
        add_names(
            v.as_ref(),
            &TargetKind::Host,
            "-ComputerName",
            &mut targets,
            &mut unknown,
        );
    }
    if let Some(v) = parsed.get("HostName", &[]) {
        add_names(
            v.as_ref(),
            &TargetKind::Ssh {
                config: None,
                user: None,
            },
            "-HostName",
            &mut targets,
            &mut unknown,
        );
    }
    if let Some(v) = parsed.get("VMName", &[]) {
        add_names(
            v.as_ref(),
            &TargetKind::Vm,
            "-VMName",
            &mut targets,
            &mut unknown,
        );
    }
    if let Some(v) = parsed.get("VMId", &["vmguid", "id"]) {
        unknown = Some(format!(
            "-VMId `{}` names the VM by an id that is not looked up here",
            v.as_ref().map_or("", |a| a.raw.as_str())
        ));
    }
    if let Some(v) = parsed.get("ConnectionUri", &["uri", "cu"]) {
        let uri = v.as_ref().map(|a| Arg {
            raw: a.raw.clone(),
            value: a.value.as_ref().map(|u| {
                let rest = u.split_once("://").map_or(u.as_str(), |(_, r)| r);
                rest.split(['/', ':']).next().unwrap_or(rest).to_owned()
            }),
        });
        add_names(
            uri.as_ref(),
            &TargetKind::Host,
            "-ConnectionUri",
            &mut targets,
            &mut unknown,
        );
    }
    if let Some(v) = parsed.get("Session", &["PSSession"]) {
        match v.as_ref().and_then(|a| flow::bound(ctx, a)) {
            Some(Ok(opened)) => {
                targets.extend(opened);
                session = true;
            }
            Some(Err(why)) => unknown = Some(why),
            None => {
                unknown = Some(format!(
                    "-Session `{}` was opened earlier; which computer it reaches is not known here",
                    v.as_ref().map_or("", |a| a.raw.as_str())
                ));
            }
        }
    }
    // `-SSHConnection @{HostName=…}` and `-Options @{Host=…}` name computers in a table that
    // is not read here.
    for table in ["SSHConnection", "Options"] {
        if let Some(v) = parsed.get(table, &[]) {
            unknown = Some(format!(
                "-{table} `{}` names computers in a table that is not read here",
                clip(v.as_ref().map_or("", |a| a.raw.as_str()))
            ));
        }
    }
    // Enter-PSSession and New-PSSession take the computer as their first positional word;
    // so does Invoke-Command (`icm web01 { … }`) unless that word is the script block.
    if targets.is_empty()
        && unknown.is_none()
        && !session
        && let Some(first) = parsed.positional.first()
        && !(invoke && first.raw.starts_with('{'))
    {
        add_names(
            Some(first),
            &TargetKind::Host,
            "the computer",
            &mut targets,
            &mut unknown,
        );
    }
    (targets, unknown)
}

/// The computers a session `New-PSSession` opens reaches (none: this machine), or why they
/// are not known.
pub(super) fn session(ctx: &mut Ctx<'_>, args: &[Arg]) -> Result<Vec<Target>, String> {
    let parsed = ps_args(args, PS_REMOTING_SWITCHES);
    match remoting_targets(ctx, &parsed, false) {
        (_, Some(why)) => Err(why),
        (targets, None) => Ok(targets),
    }
}

pub(super) fn ps_remoting(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    args: &[Arg],
) -> Result<(), Unknown> {
    let parsed = ps_args(args, PS_REMOTING_SWITCHES);
    let lower = name.to_ascii_lowercase();
    let invoke = lower == "invoke-command" || lower == "icm";
    let (targets, unknown) = remoting_targets(ctx, &parsed, invoke);
    let script = parsed
        .get("ScriptBlock", &["sb"])
        .cloned()
        .flatten()
        .or_else(|| {
            parsed
                .positional
                .iter()
                .find(|a| a.raw.starts_with('{'))
                .cloned()
        });
    if targets.is_empty() && unknown.is_none() {
        // Invoke-Command without a computer runs its script block on this machine.
        return match script.filter(|_| invoke) {
            Some(block) => code(ctx, name, &block, Dialect::PowerShell),
            None => Ok(()),
        };
    }
    let (class, why, remote) = if invoke {
        if parsed.get("FilePath", &["PSPath"]).is_some() {
            (
                Class::Mutating,
                String::from("runs a script file on the computer"),
                None,
            )
        } else {
            match script {
                Some(block) => {
                    let (class, why) = match &block.value {
                        Some(text) => remote::classify_windows(&mut ctx.judge(), text),
                        None => (
                            Class::Mutating,
                            String::from("the script block is only known when the command runs"),
                        ),
                    };
                    (class, why, Some(block.raw))
                }
                None => (
                    Class::Mutating,
                    String::from("runs a command that is not written here"),
                    None,
                ),
            }
        }
    } else if lower.starts_with("enter") || lower == "etsn" {
        (
            Class::Mutating,
            String::from("opens an interactive session on the computer"),
            None,
        )
    } else {
        // New-PSSession: what later runs in the session is judged where it runs
        // (`Invoke-Command -Session $s`).
        (
            Class::ReadOnly,
            String::from("opens a session for later commands on the computer"),
            None,
        )
    };
    let mut f = finding(program, targets, class, why);
    // Which computer is not known; when the work there only reads, that is no matter.
    if class == Class::Mutating {
        f.unknown = unknown;
    } else if unknown.is_some() {
        f.targets.clear();
    }
    f.remote = remote;
    ctx.findings.push(f);
    Ok(())
}

pub(super) fn ps_computer(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let parsed = ps_args(
        args,
        &["Force", "Wait", "AsJob", "WhatIf", "Confirm", "Passthru"],
    );
    let value = parsed
        .get(
            "ComputerName",
            &["cn", "CN", "__SERVER", "Server", "IPAddress"],
        )
        .cloned()
        .or_else(|| {
            parsed
                .positional
                .first()
                .filter(|p| !p.raw.starts_with('@'))
                .cloned()
                .map(Some)
        });
    let Some(value) = value else {
        let what_if = parsed.has("WhatIf");
        if !what_if && cmd.stdin == Stdin::Pipe {
            ctx.findings.push(unknown_finding(
                program,
                String::from("the computers come from the pipeline, which is not read here"),
            ));
        } else if !what_if && args.iter().any(|a| a.raw.starts_with('@')) {
            ctx.findings.push(unknown_finding(
                program,
                String::from("the parameters come from a splatted table, which is not read here"),
            ));
        }
        // No computer: this machine.
        return Ok(());
    };
    let what_if = parsed.has("WhatIf");
    let class = if what_if {
        Class::ReadOnly
    } else {
        Class::Mutating
    };
    let why = if what_if {
        String::from("-WhatIf only says what it would do")
    } else {
        String::from("restarts or stops the computer")
    };
    let f = match value.as_ref().map(ps_names) {
        Some(Ok(names)) => finding(
            program,
            names
                .into_iter()
                .map(|n| Target {
                    name: n,
                    kind: TargetKind::Host,
                })
                .collect(),
            class,
            why,
        ),
        Some(Err(raw)) => not_fixed(program, "-ComputerName", &raw),
        None => unknown_finding(program, String::from("-ComputerName has no value")),
    };
    ctx.findings.push(f);
    Ok(())
}

/// Switches of the VM cmdlets: never read as taking the next word.
const PS_VM_SWITCHES: &[&str] = &[
    "Confirm",
    "WhatIf",
    "Kill",
    "RunAsync",
    "Force",
    "Save",
    "TurnOff",
    "Passthru",
    "DeletePermanently",
    "AsJob",
    "LocalToGuest",
    "GuestToLocal",
    "ToolsWaitOnly",
    "Memory",
    "Quiesce",
    "IncludeChildren",
];

/// The VM parameters of a ps-vm entry that lists none: `-VM`, `-Name` or `-VMName`, else
/// the first positional word.
const DEFAULT_VM_OPTIONS: &[&str] = &["-VM", "-Name", "-VMName"];

/// The VMs a VM cmdlet names: the first of the entry's `vm_options` written, else its
/// `vm_operand`; none when it names none. A VM written as objects (`-VM $vm`, `-VM (Get-VM
/// web01)`) is the VMs they are.
fn vms_named(
    ctx: &mut Ctx<'_>,
    program: &Program,
    parsed: &PsArgs,
) -> Option<Result<Vec<Target>, String>> {
    let defaults: Vec<String>;
    let (options, operand) = if program.vm_options.is_empty() {
        defaults = DEFAULT_VM_OPTIONS.iter().map(|o| (*o).to_owned()).collect();
        (&defaults[..], program.vm_operand.or(Some(1)))
    } else {
        (&program.vm_options[..], program.vm_operand)
    };
    let named = options.iter().find_map(|option| {
        parsed.named.iter().find(|(given, _)| {
            program.names_option(std::slice::from_ref(option), &format!("-{given}"))
        })
    });
    let value = match named {
        Some((given, None)) => return Some(Err(format!("-{given} has no value"))),
        Some((_, Some(value))) => value,
        None => parsed.positional.get(operand?.checked_sub(1)?)?,
    };
    Some(vms_in(ctx, value))
}

/// The VMs one argument names: objects it holds, or names (`web01`, `web01,db01`, an
/// inventory path); a wildcard or a value known only when the command runs is not known.
fn vms_in(ctx: &mut Ctx<'_>, arg: &Arg) -> Result<Vec<Target>, String> {
    if let Some(bound) = flow::bound(ctx, arg) {
        return bound;
    }
    let Some(value) = arg.value.as_deref() else {
        return Err(format!(
            "the VM `{}` is only known when the command runs",
            arg.raw
        ));
    };
    if value.contains(['*', '?', '[']) {
        return Err(format!("`{value}` stands for VMs that are not written out"));
    }
    Ok(value
        .split(',')
        .map(|name| name.trim().trim_matches(['\'', '"']))
        .filter(|name| !name.is_empty())
        .map(|name| Target {
            // PowerCLI takes inventory paths: /dc/vm/folder/web01 names web01.
            name: name.rsplit('/').next().unwrap_or(name).to_owned(),
            kind: TargetKind::Vm,
        })
        .collect())
}

/// Whether a ps-vm entry's `read_only` says this call only reads: `*`, or a switch that is
/// set (`-GuestToLocal`, `-WhatIf`).
fn only_reads(program: &Program, parsed: &PsArgs) -> bool {
    program.read_only.iter().any(|r| r == "*")
        || ["-WhatIf"]
            .iter()
            .copied()
            .chain(program.read_only.iter().map(String::as_str))
            .filter_map(|flag| flag.strip_prefix('-'))
            .any(|flag| parsed.has(flag))
}

pub(super) fn ps_vm(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let switches: Vec<&str> = PS_VM_SWITCHES
        .iter()
        .copied()
        .chain(program.read_only.iter().filter_map(|r| r.strip_prefix('-')))
        .collect();
    let parsed = ps_args(args, &switches);
    if only_reads(program, &parsed) {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            format!("{name} only reads here"),
        ));
        return Ok(());
    }
    // Named or positional, else the VMs the pipeline hands it (`Get-VM web01 | Stop-VM`).
    let vms = vms_named(ctx, program, &parsed).or_else(|| match &ctx.flow.piped {
        Some(Held::Bound(bound)) => Some(bound.clone()),
        _ if cmd.stdin == Stdin::Pipe => Some(Err(format!(
            "{name} takes its VM from the pipeline, which is not read here"
        ))),
        _ => None,
    });
    let targets = match vms {
        Some(Ok(targets)) if !targets.is_empty() => targets,
        Some(Ok(_)) | None => {
            ctx.findings
                .push(unknown_finding(program, format!("{name} names no VM")));
            return Ok(());
        }
        Some(Err(why)) => {
            ctx.findings.push(unknown_finding(program, why));
            return Ok(());
        }
    };
    let (class, why, remote) = if name.eq_ignore_ascii_case("Invoke-VMScript") {
        guest_script(ctx, &parsed)
    } else {
        (Class::Mutating, format!("{name} changes the VM"), None)
    };
    let mut f = finding(program, targets, class, why);
    f.remote = remote;
    ctx.findings.push(f);
    Ok(())
}

/// `Invoke-VMScript`: the script it runs in the guest, judged in its `-ScriptType`. With none
/// the guest's system decides (PowerShell on Windows, Bash on Linux): the script only reads
/// when it reads in both, a cmdlet being no program on Linux.
fn guest_script(ctx: &mut Ctx<'_>, parsed: &PsArgs) -> (Class, String, Option<String>) {
    let script = parsed
        .get("ScriptText", &[])
        .cloned()
        .flatten()
        .or_else(|| parsed.positional.first().cloned());
    let Some(script) = script else {
        return (
            Class::Mutating,
            String::from("runs a script that is not written here"),
            None,
        );
    };
    let Some(text) = script.value.clone() else {
        return (
            Class::Mutating,
            String::from("the script is only known when the command runs"),
            Some(script.raw),
        );
    };
    let kind = parsed
        .get("ScriptType", &[])
        .cloned()
        .flatten()
        .and_then(|t| t.value)
        .map(|t| t.to_ascii_lowercase());
    let (class, why) = match kind.as_deref() {
        Some("bash") => remote::classify(&mut ctx.judge(), &text, &Stdin::Inherited),
        Some("powershell" | "bat") => remote::classify_windows(&mut ctx.judge(), &text),
        _ => match remote::classify_windows(&mut ctx.judge(), &text) {
            (Class::ReadOnly, why) if runs_no_linux_program(ctx, &text) => (Class::ReadOnly, why),
            (Class::ReadOnly, _) => remote::classify(&mut ctx.judge(), &text, &Stdin::Inherited),
            mutating => mutating,
        },
    };
    (class, why, Some(script.raw))
}

/// Whether a script read as Bash runs only PowerShell cmdlets (`Get-Service …`), which are
/// no programs there.
fn runs_no_linux_program(ctx: &mut Ctx<'_>, text: &str) -> bool {
    let Ok(commands) = ctx.walk.parse(text, Dialect::Posix) else {
        return false;
    };
    commands.iter().all(|cmd| {
        cmd.words
            .first()
            .and_then(|w| w.value.as_deref())
            .is_some_and(|name| name.contains('-') && ctx.catalog.windows_read_only(name))
    })
}

/// The ps-objects grammar: cmdlets that fetch objects (or open a CIM session) and only read.
/// What they hand on is read by `flow`.
pub(super) fn ps_objects(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
) -> Result<(), Unknown> {
    let input = ctx.flow.piped.clone();
    match fetched(ctx, program, args, input.as_ref()) {
        // This machine's objects.
        Ok(targets) if targets.is_empty() => {}
        Ok(targets) => ctx.findings.push(finding(
            program,
            targets,
            Class::ReadOnly,
            String::from("only fetches objects"),
        )),
        Err(_) => ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            String::from("only fetches objects"),
        )),
    }
    Ok(())
}

/// The machines the objects a ps-objects cmdlet hands on are bound to: the computers its
/// `host_options` (or `host_operand`) name or the sessions its `other_host_options` hold,
/// the VMs its `vm_options` (or `vm_operand`) name, VMs piped into a VM cmdlet; none for this
/// machine's. `Err`: which is only known when the command runs.
pub(super) fn fetched(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    input: Option<&Held>,
) -> Result<Vec<Target>, String> {
    let parsed = ps_args(args, &[]);
    let mut targets = Vec::new();
    let mut unknown = None;
    let mut named = false;
    for (given, value) in &parsed.named {
        let option = format!("-{given}");
        if program.names_option(&program.host_options, &option) {
            named = true;
            add_names(
                value.as_ref(),
                &TargetKind::Host,
                &option,
                &mut targets,
                &mut unknown,
            );
        } else if program.names_option(&program.other_host_options, &option) {
            named = true;
            match value.as_ref().and_then(|v| flow::bound(ctx, v)) {
                Some(Ok(opened)) => targets.extend(opened),
                Some(Err(why)) => unknown = Some(why),
                None => {
                    unknown = Some(format!(
                        "{option} `{}` was opened before this command",
                        value.as_ref().map_or("", |v| v.raw.as_str())
                    ));
                }
            }
        }
    }
    let operand = program
        .host_operand
        .as_deref()
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| n.checked_sub(1));
    if !named && let Some(first) = operand.and_then(|at| parsed.positional.get(at)) {
        add_names(
            Some(first),
            &TargetKind::Host,
            "the computer",
            &mut targets,
            &mut unknown,
        );
    }
    if let Some(why) = unknown {
        return Err(why);
    }
    if program.vm_options.is_empty() && program.vm_operand.is_none() {
        return Ok(targets);
    }
    match vms_named(ctx, program, &parsed) {
        Some(vms) => targets.extend(vms?),
        None => match input {
            Some(Held::Bound(bound)) => targets.extend(bound.clone()?),
            _ => return Err(String::from("names no VM, so it fetches every one")),
        },
    }
    Ok(targets)
}
