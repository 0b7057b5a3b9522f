//! PowerShell as it runs, and Ansible patterns and inline inventories.

use super::*;

/// PowerShell read as PowerShell runs it: common switches take no value, `-WhatIf:$false`
/// is no dry run, script blocks invoked with `&` and `.` run here, member names in
/// ForEach-Object call methods, calculated properties hold code, and no `Verb-*` family is
/// read-only.
#[test]
fn powershell_is_read_as_it_runs() {
    let catalog = ShellCatalog::builtin().expect("catalog");
    let checkpoint: &[(&str, &str)] = &[
        ("Restart-Computer -Verbose win01", "win01"),
        ("Restart-Computer -Force -Confirm win01", "win01"),
        (
            "Restart-Computer -ComputerName win01 -WhatIf:$false",
            "win01",
        ),
        ("Restart-Computer -ComputerName win01 -WhatIf:$WI", "win01"),
        ("& { Restart-Computer -ComputerName win01 }", "win01"),
        (". { Stop-Computer -ComputerName win01 }", "win01"),
        (
            "Invoke-Command -ComputerName win01 { gsv W3SVC | % Stop }",
            "win01",
        ),
        (
            "Invoke-Command -ComputerName win01 { Get-Process w3wp | ForEach-Object Kill }",
            "win01",
        ),
        (
            "Invoke-Command -ComputerName win01 { Format-Volume -DriveLetter D }",
            "win01",
        ),
        (
            "Invoke-Command -ComputerName win01 { Test-ComputerSecureChannel -Repair }",
            "win01",
        ),
        (
            "Invoke-Command -ComputerName win01 { Get-Service | Select-Object @{n='x';e={ Stop-Service W3SVC }} }",
            "win01",
        ),
    ];
    for (command, want) in checkpoint {
        match analyse(
            command,
            Dialect::PowerShell,
            &catalog,
            &Inventory::default(),
            None,
        )
        .verdict
        {
            Verdict::Mutating(targets) => assert!(
                targets.iter().any(|t| t.name == *want),
                "{command}: {targets:?}"
            ),
            other => panic!("{command}: {other:?}, want a checkpoint of {want}"),
        }
    }
    let by_id =
        "Invoke-Command -VMId 6b32b1c2-0000-4c1e-9a1d-000000000000 { Restart-Service W3SVC }";
    let verdict = analyse(
        by_id,
        Dialect::PowerShell,
        &catalog,
        &Inventory::default(),
        None,
    );
    assert!(
        matches!(verdict.verdict, Verdict::Unknown { .. }),
        "{by_id}"
    );
    for command in [
        "Restart-Computer -ComputerName win01 -WhatIf",
        "Invoke-Command -ComputerName win01 { Get-Service | Select-Object Name, Status }",
        "Invoke-Command -ComputerName win01 { Get-Process | ForEach-Object { $_.Name } }",
    ] {
        assert_eq!(
            analyse(
                command,
                Dialect::PowerShell,
                &catalog,
                &Inventory::default(),
                None
            )
            .verdict,
            Verdict::ReadOnly,
            "{command}"
        );
    }
}

/// An Ansible host pattern on a command line is read as a catalog's `vm_arg` is: `:` separates
/// hosts, but `web01:8080` is web01 on a port (not a host called 8080), an IPv6 address stays
/// whole, and whitespace separates hosts.
#[test]
fn an_ansible_pattern_reads_as_every_host_pattern_does() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    for (pattern, expected) in [
        ("web01:8080", &["web01:8080"][..]),
        ("web01:db01", &["web01", "db01"]),
        ("web01:2222:db01", &["web01:2222", "db01"]),
        ("fe80::1", &["fe80::1"]),
        ("[fe80::1]:22", &["[fe80::1]:22"]),
        ("'web01 db01'", &["web01", "db01"]),
    ] {
        for command in [
            format!("ansible {pattern} -m shell -a reboot"),
            format!("ansible-playbook site.yml -l {pattern}"),
        ] {
            let verdict = analyse(
                &command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None,
            )
            .verdict;
            match &verdict {
                Verdict::Mutating(targets) => assert!(
                    targets
                        .iter()
                        .map(|t| t.name.as_str())
                        .eq(expected.iter().copied()),
                    "{command}: {verdict:?}"
                ),
                _ => panic!("{command}: {verdict:?}"),
            }
        }
    }
}

/// An inline inventory (`-i 'web01:2222,'`) lists hosts as Ansible reads them: `web01:2222`
/// is the host web01, and `ungrouped` holds every host of the list. A pattern naming one of
/// them reaches it, so the command checkpoints it rather than passing as read-only.
#[test]
fn an_inline_inventory_host_with_a_port_is_the_host_a_pattern_names() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    for command in [
        "ansible web01 -i 'web01:2222,' -m shell -a reboot",
        "ansible web01 -i 'web01:2222,db01,' -m shell -a reboot",
        "ansible ungrouped -i 'web01:2222,' -m shell -a reboot",
        "ansible all -i 'web01:2222,' -m shell -a reboot",
    ] {
        let verdict = analyse(
            command,
            Dialect::Posix,
            &catalog,
            &Inventory::default(),
            None,
        )
        .verdict;
        match &verdict {
            Verdict::Mutating(targets) => assert!(
                targets.iter().map(|t| t.name.as_str()).eq(["web01"]),
                "{command}: {verdict:?}"
            ),
            _ => panic!("{command}: {verdict:?}"),
        }
    }
}
