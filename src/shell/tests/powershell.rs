//! PowerShell read as PowerShell binds it: parameter names case-insensitive, abbreviated to
//! any prefix and with backticks inside; each case is tried in every spelling of its host and
//! its case.

use super::super::{Dialect, ShellCatalog, Verdict, analyse};
use crate::inventory::Inventory;

/// The verdict for PowerShell `command`, with the shipped catalog and no protected machines.
fn verdict(command: &str) -> Verdict {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    analyse(
        command,
        Dialect::PowerShell,
        &catalog,
        &Inventory::default(),
        None,
    )
    .verdict
}

/// `template` with `{h}` written as each spelling PowerShell reads as the same name (bare,
/// single- and double-quoted), each also in upper and lower case.
fn spellings(template: &str) -> Vec<String> {
    let mut all = Vec::new();
    for host in ["win01", "'win01'", "\"win01\""] {
        let command = template.replace("{h}", host);
        all.push(command.to_uppercase());
        all.push(command.to_lowercase());
        all.push(command);
    }
    all.dedup();
    all
}

/// Every spelling of `template` checkpoints exactly `want` (names compared without case).
#[track_caller]
fn checkpoints(template: &str, want: &[&str]) {
    for command in spellings(template) {
        match verdict(&command) {
            Verdict::Mutating(targets) => {
                let mut got: Vec<String> = targets
                    .iter()
                    .map(|t| t.name.to_ascii_lowercase())
                    .collect();
                got.sort();
                got.dedup();
                assert_eq!(got, want, "{command}");
            }
            other => panic!("{command}: {other:?}, want a checkpoint of {want:?}"),
        }
    }
}

/// Every spelling of `template` is left without a decision.
#[track_caller]
fn no_decision(template: &str) {
    for command in spellings(template) {
        let got = verdict(&command);
        assert!(
            matches!(got, Verdict::Local | Verdict::ReadOnly),
            "{command}: {got:?}"
        );
    }
}

/// Every spelling of `template` asks.
#[track_caller]
fn asks(template: &str) {
    for command in spellings(template) {
        let got = verdict(&command);
        assert!(matches!(got, Verdict::Unknown { .. }), "{command}: {got:?}");
    }
}

/// A parameter name is any unambiguous prefix of the name, in any case, and a backtick in it
/// is taken away; `-Name:value` attaches the value. An abbreviation that could be a parameter
/// naming the computer is read as that parameter.
#[test]
fn parameter_names_are_read_as_powershell_binds_them() {
    for template in [
        "Set-Service -ComputerName {h} -Name Spooler -Status Stopped",
        "Set-Service -Comp {h} -Name Spooler -Status Stopped",
        "Set-Service -ComputerN {h} -Name Spooler -Status Stopped",
        "Set-Service -Comp`uterName {h} -Name Spooler -Status Stopped",
        "Set-Service -ComputerName:{h} -Name Spooler -Status Stopped",
        "Set-Service -Name Spooler -Status Stopped -Co {h}",
        "Invoke-CimMethod -Comp {h} -ClassName Win32_Process -MethodName Create",
        "Remove-CimInstance -Query 'select * from Win32_Environment' -Compu {h}",
        "Invoke-Command -Comp`uterName {h} { Restart-Service W3SVC }",
        "Invoke-Command -ComputerN {h} -ScriptBlock { Restart-Service W3SVC }",
        "Invoke-Command -ScriptBlock { Restart-Service W3SVC } -Comp {h}",
        "Invoke-Command -ComputerName:{h} -ScriptBlock { Restart-Service W3SVC }",
        "Restart-Computer -Comp`uterName {h} -Force",
        "Restart-Computer -Force -ComputerN {h}",
        "Copy-Item .\\app -Dest`ination \\\\win01\\share\\app",
        "Copy-Item -Path .\\app -Destination:\\\\win01\\share\\app",
        "Copy-Item .\\app \\\\win01\\share\\app -WhatIf:$false",
        "Set-Service -Comp {h} -Name Spooler -Status Stopped -WhatIf:$false",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "Invoke-Command -Comp {h} -ScriptBlock { Get-Service W3SVC }",
        "Set-Service -Comp {h} -Name Spooler -Status Stopped -WhatIf",
        "Set-Service -Comp {h} -Name Spooler -Status Stopped -Wh",
        "Restart-Computer -Comp {h} -WhatI",
    ] {
        no_decision(template);
    }
    // A quoted word is an argument, never a parameter name.
    checkpoints(
        "Invoke-Command {h} { Restart-Service W3SVC } -ArgumentList '-ComputerName'",
        &["win01"],
    );
    asks("Invoke-Command -Comp`uterName $target { Restart-Service W3SVC }");
}
