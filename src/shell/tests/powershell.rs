//! PowerShell read as PowerShell runs it: parameter names case-insensitive, abbreviated to
//! any prefix and with backticks inside; variables, splatted tables, sessions and objects
//! fetched from a machine followed through the command; the VM cmdlets' VM told from the
//! names of checkpoints and parts. Each case is tried in every spelling of its host and its
//! case.

use super::super::{Dialect, ShellCatalog, Verdict, analyse};
use crate::inventory::Inventory;

/// The verdict for PowerShell `command`, with the shipped catalog and no protected machines.
fn verdict(command: &str) -> Verdict {
    static CATALOG: std::sync::OnceLock<ShellCatalog> = std::sync::OnceLock::new();
    let catalog =
        CATALOG.get_or_init(|| ShellCatalog::builtin().expect("the shipped shell catalog loads"));
    analyse(
        command,
        Dialect::PowerShell,
        catalog,
        &Inventory::default(),
        None,
    )
    .verdict
}

/// `template` with `{h}` written as each spelling PowerShell reads as the same name (bare,
/// single- and double-quoted) and `{q}` as each quoted one (where a bare word would be a
/// command), each also in upper and lower case.
fn spellings(template: &str) -> Vec<String> {
    let mut all = Vec::new();
    for (host, quoted) in [
        ("win01", "'win01'"),
        ("'win01'", "'win01'"),
        ("\"win01\"", "\"win01\""),
    ] {
        let command = template.replace("{h}", host).replace("{q}", quoted);
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

/// A table splatted as parameters (`@p`) is read as the parameters it holds, when the command
/// writes it once and hands it to nothing else; any other splat of a remote program asks.
#[test]
fn a_splatted_table_is_read_as_its_parameters() {
    for template in [
        "$p = @{ ComputerName = {q}; ScriptBlock = { Restart-Service W3SVC } }; Invoke-Command @p",
        "$p = @{\n  ScriptBlock = { Restart-Service W3SVC }\n  ComputerName = {q}\n}\nInvoke-Command @p",
        "$p=@{ComputerName={q};Force=$true}; Restart-Computer @p",
        "$p = @{ 'ComputerName' = {q} }; Restart-Computer @p -Force",
        "$copyParams = @{ Path = '.\\app'; Destination = '\\\\win01\\c$\\app'; Recurse = $true }; Copy-Item @copyParams",
        "$p = @{ ComputerName = {q}; WhatIf = $false }; Restart-Computer @p",
        "$p = @{ ComputerName = {q}; Name = 'Spooler'; Status = 'Stopped' }; Set-Service @p",
        "$a = {q}, '-Force'; Restart-Computer @a",
        "$p = @{ VMName = {q}; ScriptBlock = { Restart-Service W3SVC } }; Invoke-Command @p",
        "$p = @{ Name = {q}; Force = $true }; Stop-VM @p",
        "$p = @{ Name = 'Base image'; VMName = {q} }; Restore-VMSnapshot @p",
        "$s = New-PSSession {h}; $p = @{ Session = $s; ScriptBlock = { Restart-Service W3SVC } }; Invoke-Command @p",
        "$s = New-PSSession {h}; $p = @{ Path = '.\\app.zip'; Destination = 'C:\\app'; ToSession = $s }; Copy-Item @p",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "$p = @{ ComputerName = {q}; ScriptBlock = { Get-Process } }; Invoke-Command @p",
        "$p = @{ ComputerName = {q}; WhatIf = $true }; Restart-Computer @p",
        "$p = @{ Path = '.\\app'; Destination = 'C:\\app' }; Copy-Item @p",
    ] {
        no_decision(template);
    }
    for template in [
        "Invoke-Command @params",
        "Invoke-Command @params -ScriptBlock { Get-Process }",
        "$p = Get-Content p.json | ConvertFrom-Json; Invoke-Command @p",
        "$p = @{ ComputerName = (Get-Content servers.txt); ScriptBlock = { Restart-Service W3SVC } }; Invoke-Command @p",
        "$p = @{ ComputerName = {q} }; $p = @{ ComputerName = 'win02' }; Restart-Computer @p",
        "$p = @{ ComputerName = {q} }; $p.ComputerName = 'win02'; Restart-Computer @p",
        "$p = @{ ComputerName = {q} }; $p['ComputerName'] = 'win02'; Restart-Computer @p",
        "$p = @{ ComputerName = {q} }; $p.Remove('ComputerName'); $p.Add('ComputerName', 'win02'); Restart-Computer @p",
        "$p = @{ ComputerName = {q} }; Update-Table $p; Restart-Computer @p",
        "Restart-Computer @p; $p = @{ ComputerName = {q} }",
        "& { $p = @{ ComputerName = {q} } }; Restart-Computer @p",
        "$p = @{ ComputerName = {q} }; Set-Variable p @{ ComputerName = 'win02' }; Restart-Computer @p",
        "Stop-Service @p",
        "Copy-Item @p",
    ] {
        asks(template);
    }
    // A table's commands run when it is made.
    checkpoints(
        "$p = @{ Name = (Restart-Computer -ComputerName {h}) }",
        &["win01"],
    );
}

/// A variable the command assigns once to a literal is that literal where it is used; one
/// it does not assign is only known when it runs.
#[test]
fn a_variable_holds_the_literal_assigned_to_it() {
    for template in [
        "$target = {q}; Invoke-Command -ComputerName $target { Restart-Service W3SVC }",
        "$target = {q}; Invoke-Command -ComputerName \"$target\" { Restart-Service W3SVC }",
        "$target = {q}; Invoke-Command -ComputerName:$target { Restart-Service W3SVC }",
        "$script:target = {q}; Restart-Computer -ComputerName $target",
        "[string]$target = {q}; Restart-Computer $target -Force",
        "$c = {q}; Set-Service -ComputerName $c -Name Spooler -Status Stopped",
        "$share = '\\\\win01\\share'; Copy-Item .\\app $share",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "$list = {q}, 'win02'; Restart-Computer -ComputerName $list",
        "Restart-Computer -ComputerName @({q}, 'win02') -Force",
        "Restart-Computer -ComputerName ({q},'win02')",
    ] {
        checkpoints(template, &["win01", "win02"]);
    }
    for template in [
        "Invoke-Command -ComputerName $target { Restart-Service W3SVC }",
        "$target = Get-Content host.txt; Invoke-Command -ComputerName $target { Restart-Service W3SVC }",
        "$target = win01; Restart-Computer -ComputerName $target",
        "$t = {q}; $t = 'win02'; Restart-Computer -ComputerName $t",
        "$t = {q}; Get-Service -ov t; Restart-Computer -ComputerName $t",
        "$t = {q}; . .\\setup.ps1; Restart-Computer -ComputerName $t",
        "if ($x) { $t = {q} }; Restart-Computer -ComputerName $t",
        "$list = {q}, 'win02'; Edit-List $list; Restart-Computer -ComputerName $list",
        // An assignment that may not run (after `&&` or `||`, inside a condition) is not
        // followed.
        "Test-Path x && $t = {q}; Restart-Computer -ComputerName $t",
        "Test-Path x || $t = {q}; Restart-Computer -ComputerName $t",
        "if ($x -and ($t = {q})) { }; Restart-Computer -ComputerName $t",
    ] {
        asks(template);
    }
}

/// A session opened in the command reaches its computers wherever it is used: a copy to it
/// (`-ToSession`) and a script block run in it change them; a copy from it only reads.
#[test]
fn a_session_reaches_the_computer_it_was_opened_to() {
    for template in [
        "$s = New-PSSession -ComputerName {h}; Copy-Item .\\app.zip -Destination C:\\app -ToSession $s",
        "$s = New-PSSession {h}; Copy-Item .\\app.zip C:\\app -ToSession:$s",
        "$s = New-PSSession -ComputerName {h} -Credential $cred; Invoke-Command -Session $s { Restart-Service W3SVC }",
        "$s = nsn -cn {h}\nicm -Session $s -ScriptBlock { Restart-Service W3SVC }",
        "$s = New-PSSession -ComputerName {h}; Enter-PSSession -Session $s",
        "$s = New-PSSession -ComputerName {h}; Invoke-Command -Session $s { (Get-Service W3SVC).Start() }",
        "$c = New-CimSession -ComputerName {h}; Invoke-CimMethod -CimSession $c -ClassName Win32_Process -MethodName Create -Arguments @{ CommandLine = 'notepad' }",
        "$c = New-CimSession {h}; Get-CimInstance -CimSession $c -ClassName Win32_Service -Filter \"Name='Spooler'\" | Invoke-CimMethod -MethodName StopService",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "$s = New-PSSession -ComputerName {h}; Invoke-Command -Session $s { Get-Process }",
        "$s = New-PSSession -ComputerName {h}; Copy-Item -FromSession $s C:\\logs\\app.log -Destination .\\",
        "$c = New-CimSession -ComputerName {h}; Get-CimInstance -CimSession $c -ClassName Win32_Service",
        "$s = New-PSSession; Invoke-Command -Session $s { Restart-Service W3SVC }",
    ] {
        no_decision(template);
    }
    for template in [
        "Invoke-Command -Session $s { Restart-Service W3SVC }",
        "Copy-Item .\\app.zip -Destination C:\\app -ToSession $s",
        "$s = New-PSSession -ComputerName $h; Invoke-Command -Session $s { Restart-Service W3SVC }",
        "Invoke-Command -Session $s { Restart-Service W3SVC }; $s = New-PSSession {h}",
        "$s = New-PSSession {h}; $s = New-PSSession win02; Invoke-Command -Session $s { Restart-Service W3SVC }",
        "& { $s = New-PSSession {h} }; Invoke-Command -Session $s { Restart-Service W3SVC }",
        "Invoke-CimMethod -CimSession $c -ClassName Win32_Process -MethodName Create",
        // Commands imported from a session run there whenever they are called.
        "$s = New-PSSession {h}; Import-PSSession $s; Restart-Service W3SVC",
    ] {
        asks(template);
    }
}

/// Objects fetched from a machine carry it: a method called on them, a cmdlet they are piped
/// to or handed as `-InputObject`, acts there; filters pass them on; reading them reads.
#[test]
fn objects_fetched_from_a_machine_are_acted_on_there() {
    for template in [
        "$svc = Get-Service -ComputerName {h} W3SVC; $svc.Start()",
        "$svc = Get-Service -ComputerName {h} W3SVC\n[void]$svc.Stop()",
        "(Get-WmiObject win32_service -ComputerName {h} -Filter \"name='spooler'\").StopService()",
        "(gwmi -Class Win32_Service -Filter \"name='WinRM'\" -ComputerName {h}).StopService()",
        "$p = Get-Process -ComputerName {h} -Name notepad; $p.Kill()",
        "$os = Get-CimInstance -ComputerName {h} -ClassName Win32_OperatingSystem; $os | Invoke-CimMethod -MethodName Reboot",
        "Get-Service -ComputerName {h} -Name spooler | Stop-Service",
        "gsv -cn {h} spooler | Restart-Service -Force",
        "Get-Service -ComputerName {h} | Where-Object { $_.Status -eq 'Running' } | Sort-Object Name | Stop-Service",
        "Get-Service -ComputerName {h} -Name spooler | ForEach-Object { $_.Stop() }",
        "$svc = Get-Service -ComputerName {h} W3SVC; Stop-Service -InputObject $svc",
        "Get-CimInstance -ComputerName {h} -ClassName Win32_OperatingSystem | Invoke-CimMethod -MethodName Reboot",
        "Get-WmiObject -Class Win32_Process -ComputerName {h} -Filter \"Name='notepad.exe'\" | Remove-WmiObject",
        "$svcs = Get-Service -ComputerName {h} | Where-Object Status -eq Stopped; $svcs | Start-Service",
        "Get-Service -ComputerName {h} | % Stop",
        "Get-Service -ComputerName {h} | foreach Stop",
        "Get-Service -ComputerName {h} | ForEach-Object -MemberName Stop",
        "$svc = Get-Service -ComputerName {h}; $svc[0].Stop()",
        "$svcs = Get-Service -ComputerName {h}; $svcs.ForEach('Stop')",
        "$svc = Get-Service -ComputerName {h} W3SVC; Write-Output $svc.Stop()",
        "Write-Output (Get-WmiObject Win32_Service -ComputerName {h}).StopService()",
        "$vm = Get-VM {h}; $vm.Stop()",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "Get-Service -ComputerName {h} | Select-Object Name,Status",
        "$svc = Get-Service -ComputerName {h} W3SVC; $svc.Status",
        "$svc = Get-Service -ComputerName {h} W3SVC; $svc.Refresh(); $svc.ToString()",
        "Get-Process -ComputerName {h} | Sort-Object CPU -Descending | Select-Object -First 5",
        "$svc = Get-Service W3SVC; $svc.Stop()",
        "Get-Service Spooler | Stop-Service",
        "(Get-Service W3SVC).Start()",
        "Get-CimInstance -ComputerName {h} -ClassName Win32_Process | Invoke-CimMethod -MethodName GetOwner",
        "Invoke-WmiMethod -ComputerName {h} -Class Win32_Process -Name GetOwner",
    ] {
        no_decision(template);
    }
    checkpoints(
        "Invoke-WmiMethod -ComputerName {h} -Class Win32_Process -Name Create -ArgumentList notepad.exe",
        &["win01"],
    );
    for template in [
        "$svc = Get-Service -ComputerName $h W3SVC; $svc.Stop()",
        "Get-Service -ComputerName $h spooler | Stop-Service",
        "Stop-Service -InputObject $svc",
        "$c = New-CimSession -ComputerName $h; Get-CimInstance -CimSession $c Win32_Service | Invoke-CimMethod -MethodName StopService",
    ] {
        asks(template);
    }
}

/// The VM cmdlets act on the VM their VM parameter or position names, or the pipeline hands
/// them; a checkpoint's, a service's or an adapter's name is never the VM, nor a guest user.
#[test]
fn the_vm_cmdlets_act_on_the_vm_they_name() {
    for template in [
        "Restore-VMSnapshot -Name 'Base image' -VMName {h}",
        "Restore-VMSnapshot -VMName {h} -Name 'Base image' -Confirm:$false",
        "Restore-VMSnapshot 'Base image' {h}",
        "Restore-VMCheckpoint -Name pre -VMName {h}",
        "Remove-VMSnapshot -VMName {h} -Name pre",
        "Remove-VMSnapshot {h} pre",
        "Rename-VMSnapshot -Name pre -VMName {h} -NewName old",
        "Get-VM {h} | Checkpoint-VM -SnapshotName pre",
        "Get-VM -Name {h} | Stop-VM -TurnOff",
        "Get-VMSnapshot -VMName {h} -Name pre | Remove-VMSnapshot",
        "$vm = Get-VM {h}; Stop-VM -VM $vm -Force",
        "Stop-VM -VM (Get-VM {h})",
        "Checkpoint-VM -Name {h} -SnapshotName pre",
        "Checkpoint-VM {h} pre",
        "Save-VM {h}",
        "Rename-VM {h} win01-old",
        "Set-VMMemory -VMName {h} -StartupBytes 4GB",
        "Set-VMMemory {h} -DynamicMemoryEnabled $true",
        "Set-VMProcessor {h} -Count 4",
        "Set-VMNetworkAdapter -VMName {h} -Name 'Network Adapter' -MacAddressSpoofing On",
        "Enable-VMIntegrationService -Name 'Guest Service Interface' -VMName {h}",
        "Disable-VMIntegrationService 'Time Synchronization' {h}",
        "Connect-VMNetworkAdapter -VMName {h} -Name 'Network Adapter' -SwitchName External",
        "Add-VMNetworkAdapter -VMName {h} -SwitchName External",
        "Copy-VMFile -Name {h} -SourcePath .\\app.zip -DestinationPath C:\\app.zip -FileSource Host",
        "Copy-VMFile {h} -SourcePath .\\app.zip -DestinationPath C:\\app.zip -FileSource Host",
        "Restart-VM {h} -Force",
        "Stop-VM -Name {h}",
        "Start-VM {h}",
        "Suspend-VM -Name {h}",
        "Resume-VM {h}",
        "Remove-VM {h} -Force",
        "Set-VM -Name {h} -ProcessorCount 4",
        "Invoke-Command -VMName {h} { Restart-Service W3SVC }",
        "Invoke-Command -VMNa {h} -ScriptBlock { Restart-Service W3SVC } -Credential $cred",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "Copy-VMGuestFile -Source x -Destination y -VM {h} -LocalToGuest -GuestUser admin -GuestPassword p",
        "Copy-VMGuestFile -LocalToGuest -GuestUser admin -GuestPassword p -Source x -Destination y -VM {h}",
        "Copy-VMGuestFile x y {h} -LocalToGuest -GuestUser admin -GuestPassword p",
        "Copy-VMGuestFile -GuestUser admin x y -VM {h} -LocalToGuest",
        "Restart-VMGuest -VM {h}",
        "Restart-VMGuest {h} -Confirm:$false",
        "Set-VM -VM {h} -MemoryGB 8 -Confirm:$false",
        "Set-VM -VM {h} -Name win01-new",
        "Set-VM -Name win01-new -VM {h}",
        "Stop-VM -VM {h} -Kill -Confirm:$false",
        "Start-VM -VM {h}",
        "New-Snapshot -VM {h} -Name pre",
        "New-Snapshot -Name pre -VM {h}",
        "New-Snapshot {h} pre",
        "Get-Snapshot -VM {h} -Name pre | Remove-Snapshot -Confirm:$false",
        "Get-VM {h} | Get-Snapshot -Name pre | Set-Snapshot -Name old",
        "Invoke-VMScript -VM {h} -ScriptText 'Restart-Service W3SVC'",
        "Invoke-VMScript -VM {h} -ScriptText 'sudo reboot' -ScriptType Bash",
        "Invoke-VMScript 'systemctl restart app' {h} -ScriptType Bash",
        "Invoke-VMScript -VM {h} -ScriptText 'hostname web99'",
        "Invoke-VMScript -VM {h} -ScriptText $script",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "Invoke-VMScript -VM {h} -ScriptText 'Get-Service'",
        "Invoke-VMScript -VM {h} -ScriptText 'Get-Service W3SVC' -ScriptType PowerShell",
        "Copy-VMGuestFile -Source /var/log/app.log -Destination .\\ -VM {h} -GuestToLocal -GuestCredential $cred",
        "Get-VM {h}",
        "Get-VMSnapshot -VMName {h} -Name 'Base image'",
        "Export-VMSnapshot -Name 'Base image' -VMName {h} -Path D:\\export",
        "Measure-VM {h}",
        "Get-VM {h} | Measure-VM",
        "Test-VHD D:\\disks\\win01.vhdx",
        "Stop-VM {h} -WhatIf",
    ] {
        no_decision(template);
    }
    // Bash's programs are named in lower case.
    for bash in [
        "Invoke-VMScript -VM win01 -ScriptText 'uptime; df -h' -ScriptType Bash",
        "Invoke-VMScript 'hostname' win01",
    ] {
        assert_eq!(verdict(bash), Verdict::ReadOnly, "{bash}");
    }
    for template in [
        "Get-VM | Stop-VM",
        "Stop-VM -Name web*",
        "Stop-VM -VM $vm",
        "Remove-Snapshot -Snapshot $snap -Confirm:$false",
        "Invoke-Command -VMId 6b32b1c2-0000-4c1e-9a1d-000000000000 { Restart-Service W3SVC }",
        "Get-VMSnapshot -Name pre | Remove-VMSnapshot",
    ] {
        asks(template);
    }
}

/// What a variable or a pipe hands a program no grammar reads still meets the protected-VM
/// net, and so does a value written to a UNC path; a loop whose block is read item by item
/// does not.
#[test]
fn the_protected_net_sees_what_variables_hand_on() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    let known = Inventory::of(["win01", "web01", "web02"]);
    let looped = "'web01', 'web02' | ForEach-Object { ssh $_ 'sudo systemctl restart nginx' }";
    match analyse(looped, Dialect::PowerShell, &catalog, &known, None).verdict {
        Verdict::Mutating(targets) => assert_eq!(targets.len(), 2, "{looped}: {targets:?}"),
        other => panic!("{looped}: {other:?}"),
    }
    for command in [
        "$h = 'win01'; .\\deploy.ps1 -Target $h",
        "$h = 'win01'; $h | .\\deploy.ps1",
        "$env:TARGET = 'win01'; .\\deploy.ps1",
    ] {
        let got = analyse(command, Dialect::PowerShell, &catalog, &known, None).verdict;
        assert!(matches!(got, Verdict::Unknown { .. }), "{command}: {got:?}");
    }
    // A single-quoted list is a value, not a program the net would ask about; a
    // double-quoted word may be one (cmd runs `"C:\\…\\ssh.exe" web01`).
    let listed = "Restart-Computer -ComputerName @('win01','web01') -Force";
    match analyse(listed, Dialect::PowerShell, &catalog, &known, None).verdict {
        Verdict::Mutating(targets) => assert_eq!(targets.len(), 2, "{listed}: {targets:?}"),
        other => panic!("{listed}: {other:?}"),
    }
    let quoted = "\"ssh.exe\" web01 reboot";
    let got = analyse(quoted, Dialect::PowerShell, &catalog, &known, None).verdict;
    assert!(matches!(got, Verdict::Mutating(_)), "{quoted}: {got:?}");
    let written = "$x = 'done' > \\\\win01\\share\\flag.txt";
    let got = analyse(written, Dialect::PowerShell, &catalog, &known, None).verdict;
    assert!(matches!(got, Verdict::Mutating(_)), "{written}: {got:?}");
}

/// Invoke-Command without a computer runs its script block here: what the block runs is
/// read as this machine's commands.
#[test]
fn a_local_invoke_command_runs_its_block_here() {
    for template in [
        "Invoke-Command -ScriptBlock { Restart-Computer -ComputerName {h} }",
        "Invoke-Command { ssh {h} reboot }",
        "$p = @{ ScriptBlock = { Restart-Computer -ComputerName {h} } }; Invoke-Command @p",
    ] {
        checkpoints(template, &["win01"]);
    }
    no_decision("Invoke-Command -ScriptBlock { Get-ChildItem }");
    asks("Invoke-Command -ScriptBlock $sb");
}

/// A `$` that starts no variable is itself: an administrative share (`\\\\win01\\c$`) is a
/// path written out, not one known only when the command runs.
#[test]
fn an_administrative_share_is_written_out() {
    for template in [
        "Copy-Item .\\app.config \\\\win01\\c$\\app\\",
        "Remove-Item \\\\win01\\c$\\temp\\* -Recurse",
        "robocopy .\\build \\\\win01\\c$\\inetpub\\wwwroot /MIR",
        "Get-Date > \\\\win01\\c$\\stamp.txt",
        "Set-Location \\\\win01\\c$\\app; Remove-Item .\\x",
    ] {
        checkpoints(template, &["win01"]);
    }
    no_decision("Write-Output 5$ c$");
    asks("Copy-Item .\\app \\\\$h\\c$\\app");
}

/// A script block is read whatever characters it holds.
#[test]
fn a_script_block_is_read_whatever_it_holds() {
    for template in [
        "'x' | ForEach-Object { Restart-Computer -ComputerName {h} } # café",
        "'x' | ForEach-Object { Restart-Computer -ComputerName {h} # café }",
        "Invoke-Command -ComputerName {h} { Restart-Service W3SVC # née }",
    ] {
        checkpoints(template, &["win01"]);
    }
    no_decision("Invoke-Command -ComputerName {h} { Get-Service # ünïcödé }");
}

/// A loop over a list the command writes is followed item by item: the `foreach` statement's
/// variable and `$_` in `ForEach-Object` are each item in turn.
#[test]
fn a_loop_over_a_written_list_reaches_each_item() {
    for template in [
        "foreach ($h in {q}, 'win02') { Restart-Computer -ComputerName $h -Force }",
        "foreach ($h in @({q}, 'win02')) { Restart-Computer -ComputerName $h }",
        "$list = {q}, 'win02'; foreach ($h in $list) { Restart-Computer -ComputerName $h }",
        "{q}, 'win02' | ForEach-Object { Restart-Computer -ComputerName $_ }",
        "{q}, 'win02' | % { Restart-Computer -ComputerName $PSItem }",
        "{q}, 'win02' | Where-Object { $_ -like 'win*' } | foreach { Restart-Computer $_ }",
    ] {
        checkpoints(template, &["win01", "win02"]);
    }
    checkpoints(
        "'web01', 'web02' | ForEach-Object { ssh $_ 'sudo systemctl restart nginx' }",
        &["web01", "web02"],
    );
    no_decision("foreach ($h in {q}, 'win02') { Invoke-Command -ComputerName $h { Get-Service } }");
    for template in [
        "foreach ($h in Get-Content hosts.txt) { Restart-Computer -ComputerName $h }",
        "foreach ($h in {q}) { $h = 'win02'; Restart-Computer -ComputerName $h }",
        "Get-Content hosts.txt | ForEach-Object { Restart-Computer -ComputerName $_ }",
        "'win01,win02' | ForEach-Object { ssh $_ reboot }",
    ] {
        asks(template);
    }
}

/// .NET's entry points are read as what they do: a program started through
/// `System.Diagnostics.Process` is judged by its command line, a WMI path or a CIM session
/// binds its objects to the machine it names (protected or not), and a command name built
/// from literals is that name; what is only known when the command runs asks.
#[test]
fn dotnet_entry_points_are_read_as_what_they_do() {
    for template in [
        "[System.Diagnostics.Process]::Start('ssh', 'win01 sudo reboot')",
        "$null = [Diagnostics.Process]::Start(\"ssh.exe\", \"win01 sudo reboot\")",
        "New-Object System.Diagnostics.ProcessStartInfo('ssh', 'win01 sudo reboot')",
        "([wmiclass]'\\\\win01\\root\\cimv2:Win32_Process').Create('shutdown /r')",
        "$c = [wmiclass]'\\\\win01\\root\\cimv2:Win32_Process'; $c.Create('shutdown /r')",
        "([wmi]'\\\\win01\\root\\cimv2:Win32_Service.Name=\"Spooler\"').StopService()",
        "$s = [CimSession]::Create({q}); Invoke-CimMethod -CimSession $s -ClassName Win32_Process -MethodName Create",
        "& ('Restart-' + 'Computer') -ComputerName {h} -Force",
        "& (\"{0}-{1}\" -f 'Restart','Computer') -ComputerName {h} -Force",
        ". ('s','s','h' -join '') win01 sudo reboot",
    ] {
        checkpoints(template, &["win01"]);
    }
    for template in [
        "[Diagnostics.Process]::Start($exe, 'win01 sudo reboot')",
        "$p = New-Object System.Diagnostics.ProcessStartInfo('ssh', 'win01 sudo reboot'); [Diagnostics.Process]::Start($p)",
        "$p = New-Object System.Diagnostics.Process; $p.StartInfo.FileName = 'ssh'; [System.Diagnostics.ProcessStartInfo]$i = $p.StartInfo; $p.Start()",
        "([wmiclass]\"\\\\$h\\root\\cimv2:Win32_Process\").Create('shutdown /r')",
        "& ($verb + '-Computer') -ComputerName {h}",
    ] {
        asks(template);
    }
    for template in [
        "[System.Diagnostics.Process]::Start('notepad.exe')",
        "[System.Diagnostics.Process]::GetProcesses() | Select-Object -First 5",
        "([wmiclass]'\\\\win01\\root\\cimv2:Win32_Process').GetInstances()",
        "([wmiclass]'root\\cimv2:Win32_Process').Create('notepad.exe')",
        "$s = [CimSession]::Create({q}); Get-CimInstance -CimSession $s -ClassName Win32_OperatingSystem",
        "& ('Get-' + 'Service') -ComputerName {h}",
    ] {
        no_decision(template);
    }
    // A Linux program's name keeps its case: only this spelling is read-only there.
    let uptime = verdict("[Diagnostics.Process]::Start('ssh', 'win01 uptime')");
    assert!(matches!(uptime, Verdict::ReadOnly), "{uptime:?}");
}

/// A drive mapped to a share (`New-PSDrive`, `New-SmbMapping`, `net use`) puts what is
/// written through it on the share's machine, whether or not rewind protects it; reading
/// through it changes nothing, and a root only known when the command runs asks.
#[test]
fn a_drive_mapped_to_a_share_writes_on_its_machine() {
    for template in [
        "New-PSDrive -Name X -PSProvider FileSystem -Root \\\\win01\\c$; Remove-Item X:\\app -Recurse",
        "New-PSDrive X FileSystem \\\\win01\\c$ -Persist; Copy-Item .\\app X:\\inetpub\\app",
        "ndr -Name Share -PSProvider FileSystem -Root '\\\\win01\\share'; Set-Content -Path Share:\\web.config -Value ''",
        "New-SmbMapping -LocalPath 'Z:' -RemotePath '\\\\win01\\share'; Remove-Item Z:\\old",
        "net use Z: \\\\win01\\share; Remove-Item Z:\\app -Recurse",
        "New-PSDrive -Name X -PSProvider FileSystem -Root \\\\win01\\c$; Get-Date > X:\\stamp.txt",
    ] {
        checkpoints(template, &["win01"]);
    }
    no_decision(
        "New-PSDrive -Name X -PSProvider FileSystem -Root \\\\win01\\c$; Get-ChildItem X:\\logs",
    );
    no_decision("Remove-Item X:\\app -Recurse");
    asks("New-PSDrive -Name X -PSProvider FileSystem -Root $share; Remove-Item X:\\app -Recurse");
}

/// An environment variable PowerShell sets is what a later client reads from it.
#[test]
fn the_environment_powershell_sets_reaches_a_later_client() {
    let cases = [
        ("$env:PGHOST='win01'; psql -c 'DROP TABLE t'", "win01"),
        (
            "$env:MYSQL_HOST = 'win01'; mysql -e 'DROP DATABASE app'",
            "win01",
        ),
        (
            "[Environment]::SetEnvironmentVariable('PGHOST','win01'); psql -c 'DROP TABLE t'",
            "win01",
        ),
    ];
    for (command, want) in cases {
        match verdict(command) {
            Verdict::Mutating(targets) => {
                assert!(
                    targets.iter().any(|t| t.name == want),
                    "{command}: {targets:?}"
                );
            }
            other => panic!("{command}: {other:?}"),
        }
    }
    assert!(matches!(
        verdict("$env:PGHOST = $h; psql -c 'DROP TABLE t'"),
        Verdict::Unknown { .. }
    ));
    assert!(matches!(
        verdict("$env:PGHOST='win01'; psql -c 'SELECT 1'"),
        Verdict::Local | Verdict::ReadOnly
    ));
}
