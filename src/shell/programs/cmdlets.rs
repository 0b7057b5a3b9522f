//! PowerShell cmdlets: remoting (`Invoke-Command`, `Enter-PSSession`, `New-PSSession`), the
//! computer cmdlets (`Restart-Computer`, `Stop-Computer`), the VM cmdlets (Hyper-V, PowerCLI)
//! and `Start-Process`, with PowerShell's parameter binding (prefixes, aliases, switches).

use super::hypervisors::vm_targets;
use super::{Ctx, finding, host_of, not_fixed, unknown_finding};
use crate::shell::catalog::Program;
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
        .filter(|n| {
            !matches!(
                n.to_ascii_lowercase().as_str(),
                "localhost" | "." | "127.0.0.1" | "::1"
            )
        })
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

pub(super) fn ps_remoting(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    args: &[Arg],
) -> Result<(), Unknown> {
    let parsed = ps_args(args, PS_REMOTING_SWITCHES);
    let lower = name.to_ascii_lowercase();
    let invoke = lower == "invoke-command" || lower == "icm";
    let mut targets = Vec::new();
    let mut unknown = None;
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
            &TargetKind::Ssh { config: None },
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
        unknown = Some(format!(
            "-Session `{}` was opened earlier; which computer it reaches is not known here",
            v.as_ref().map_or("", |a| a.raw.as_str())
        ));
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
    if targets.is_empty() && unknown.is_none() {
        // Invoke-Command without a computer runs on this machine.
        return Ok(());
    }
    let (class, why, remote) = if invoke {
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

pub(super) fn ps_vm(
    ctx: &mut Ctx<'_>,
    program: &Program,
    name: &str,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let parsed = ps_args(
        args,
        &[
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
        ],
    );
    if parsed.has("WhatIf") {
        ctx.findings.push(finding(
            program,
            Vec::new(),
            Class::ReadOnly,
            String::from("-WhatIf only says what it would do"),
        ));
        return Ok(());
    }
    let value = parsed
        .get("VM", &["Name", "VMName"])
        .cloned()
        .or_else(|| parsed.positional.first().cloned().map(Some));
    let why = format!("{name} changes the VM");
    match value {
        Some(Some(arg)) => match ps_names(&arg) {
            Ok(_) => {
                let list = Arg {
                    raw: arg.raw.clone(),
                    value: arg.value.clone(),
                };
                vm_targets(ctx, program, &[list], why);
                if let Some(script) = parsed.get("ScriptText", &[]).cloned().flatten()
                    && let Some(last) = ctx.findings.last_mut()
                {
                    last.remote = Some(script.raw.clone());
                }
            }
            Err(raw) => ctx.findings.push(not_fixed(program, "the VM", &raw)),
        },
        _ if cmd.stdin == Stdin::Pipe => ctx.findings.push(unknown_finding(
            program,
            format!("{name} takes its VM from the pipeline"),
        )),
        _ => ctx
            .findings
            .push(unknown_finding(program, format!("{name} names no VM"))),
    }
    Ok(())
}
