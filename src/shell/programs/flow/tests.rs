use super::*;

#[test]
fn a_variable_assigned_once_is_counted_once() {
    let once = assigned_once(
        "$s = New-PSSession -ComputerName win01; $c = 'a'; $c = 'b'; $t.Name = 1; [string]$v = 2; $a, $b = 1, 2; $i++; foreach ($h in $list) {}; & { param($p) }; Get-CimInstance -CimSession $s -Filter \"Name='x'\"",
    );
    assert_eq!(once, ["s", "t", "v", "b", "a", "i", "h", "p"]);
    assert_eq!(assigned_once("$x = 1; $x += 2"), Vec::<String>::new());
    assert_eq!(assigned_once("$script:x = 1; $x = 2"), Vec::<String>::new());
    for unseen in [
        "$s = 1; Set-Variable -Name s -Value 2",
        "$s = 1; Get-Service -ov s",
        "$s = 1; Get-Service -OutV:s",
        "$s = 1; . .\\setup.ps1",
        "$s = 1; sv s 2",
    ] {
        assert!(assigned_once(unseen).is_empty(), "{unseen}");
    }
}

#[test]
fn a_method_call_names_its_receiver() {
    for (raw, receiver, method) in [
        ("$svc.Start()", "$svc", "Start"),
        ("[void]$svc.Stop()", "$svc", "Stop"),
        (
            "(Get-WmiObject Win32_Service -ComputerName win01).StopService()",
            "(Get-WmiObject Win32_Service -ComputerName win01)",
            "StopService",
        ),
        ("$vm.ExtensionData.RebootGuest()", "$vm", "RebootGuest"),
    ] {
        assert_eq!(receiver_and_method(raw), Some((receiver, method)), "{raw}");
    }
    assert_eq!(receiver_and_method("$svc.Status"), None);
    assert!(!changes("GetOwner") && !changes("ToString") && changes("Kill"));
}

#[test]
fn a_table_s_entries_are_spaced() {
    assert_eq!(
        spaced_entries("a='x=y';b=$true;c=@{d=1}"),
        "a = 'x=y';b = $true;c = @{d=1}"
    );
}
