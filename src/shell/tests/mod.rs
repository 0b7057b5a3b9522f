//! The table: commands as agents type them, with their targets, remote command and class.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

mod arguments;
mod dialects;
mod powershell;
mod remote_code;
mod remote_programs;
mod world;

use super::resolve::{self, Options};
use super::{Dialect, ShellCatalog, Verdict, analyse};
use crate::inventory::Inventory;

/// (dialect, command). The expected outcome of each is in the snapshot, one block per case.
const CASES: &[(Dialect, &str)] = &[
    // Local commands: no decision.
    (Dialect::Posix, "git status"),
    (
        Dialect::Posix,
        "cd /src/rewind && cargo test --workspace -- --nocapture",
    ),
    (Dialect::Posix, "ls -la ~/.ssh"),
    (Dialect::Posix, "cat ~/.ssh/config | grep -i hostname"),
    (Dialect::Posix, "ssh-keygen -t ed25519 -f /tmp/k -N ''"),
    (Dialect::Posix, "echo 'remember to ssh web01 later'"),
    (Dialect::Posix, "git commit -m \"fix ssh timeout\""),
    (Dialect::Posix, "command -v ssh"),
    (Dialect::Posix, "ssh -G web01"),
    (Dialect::Posix, "ssh -V"),
    // ssh: targets and remote commands.
    (Dialect::Posix, "ssh jp-ubuntu 'sudo systemctl restart app'"),
    (Dialect::Posix, "ssh jp-ubuntu cat /etc/hostname"),
    (Dialect::Posix, "ssh root@10.0.0.5 uptime"),
    (
        Dialect::Posix,
        "ssh -p 2222 -i ~/.ssh/id_ed25519 admin@web01 'df -h'",
    ),
    (
        Dialect::Posix,
        "ssh -p2222 -oStrictHostKeyChecking=no web01 reboot",
    ),
    (
        Dialect::Posix,
        "ssh -o ConnectTimeout=5 -o BatchMode=yes -l deploy web01 -- ls /srv",
    ),
    (Dialect::Posix, "ssh -tt web01 sudo apt-get upgrade -y"),
    (Dialect::Posix, "ssh ssh://deploy@web01:2222 uptime"),
    (
        Dialect::Posix,
        "ssh -J bastion web01 'systemctl status nginx'",
    ),
    (
        Dialect::Posix,
        "ssh -J admin@bastion:22 web01 'sudo systemctl stop nginx'",
    ),
    (Dialect::Posix, "ssh web01"),
    (Dialect::Posix, "ssh -N -L 5432:localhost:5432 db01"),
    (
        Dialect::Posix,
        "ssh web01 -l admin 'tail -n 100 /var/log/syslog'",
    ),
    (
        Dialect::Posix,
        "ssh web01 \"grep -c ERROR /var/log/app.log\"",
    ),
    (Dialect::Posix, "ssh web01 echo \\$HOME"),
    (Dialect::Posix, "ssh web01 'cat /etc/app.conf > /tmp/copy'"),
    (Dialect::Posix, "ssh web01 'cat /etc/app.conf 2>/dev/null'"),
    (Dialect::Posix, "ssh web01 'echo x | sudo tee /etc/motd'"),
    (
        Dialect::Posix,
        "ssh web01 \"sed -i 's/a/b/' /etc/app.conf\"",
    ),
    (Dialect::Posix, "ssh web01 \"sed -n '1,5p' /etc/app.conf\""),
    (
        Dialect::Posix,
        "ssh web01 'find /var/log -name \"*.gz\" -delete'",
    ),
    (Dialect::Posix, "ssh web01 'find /etc -name \"*.conf\"'"),
    (
        Dialect::Posix,
        "ssh web01 'journalctl -u app --since today | tail'",
    ),
    (
        Dialect::Posix,
        "ssh web01 'sudo journalctl --vacuum-time=2d'",
    ),
    (
        Dialect::Posix,
        "ssh web01 'docker ps -a && docker logs --tail 50 app'",
    ),
    (Dialect::Posix, "ssh web01 'docker restart app'"),
    (Dialect::Posix, "ssh web01 'ip a; ss -tlnp; free -m'"),
    (
        Dialect::Posix,
        "ssh web01 'sudo ip addr add 10.0.0.9/24 dev eth0'",
    ),
    (
        Dialect::Posix,
        "ssh web01 'ps aux | grep [j]ava | awk \"{print \\$2}\"'",
    ),
    (Dialect::Posix, "ssh web01 \"bash -c 'uptime; df -h'\""),
    (
        Dialect::Posix,
        "ssh web01 sudo bash -c \"'rm -rf /tmp/cache'\"",
    ),
    (Dialect::Posix, "ssh web01 'hostname'"),
    (Dialect::Posix, "ssh web01 'hostname new-name'"),
    (Dialect::Posix, "ssh -o RemoteCommand='uptime' web01"),
    (Dialect::Posix, "ssh -o RemoteCommand='sudo reboot' web01"),
    (
        Dialect::Posix,
        "ssh -o ProxyCommand='ssh -W %h:%p bastion' web01 uptime",
    ),
    (
        Dialect::Posix,
        "ssh -o 'ProxyCommand=ssh bastion sudo reboot' web01 uptime",
    ),
    (Dialect::Posix, "ssh -F ./ssh_config web01 'sudo reboot'"),
    (
        Dialect::Posix,
        "ssh -o HostName=10.1.2.3 anything 'sudo reboot'",
    ),
    // Here-documents and standard input.
    (
        Dialect::Posix,
        "ssh web01 bash -s <<'EOF'\nsudo systemctl restart app\nEOF",
    ),
    (
        Dialect::Posix,
        "ssh web01 bash -s <<'EOF'\nuptime\ndf -h\nEOF",
    ),
    (Dialect::Posix, "ssh web01 <<EOF\ncat /etc/os-release\nEOF"),
    (Dialect::Posix, "ssh web01 'bash -s' < deploy.sh"),
    (Dialect::Posix, "cat deploy.sh | ssh web01 bash"),
    // Lists, pipelines, subshells, substitutions, wrappers.
    (
        Dialect::Posix,
        "cd infra && ssh web01 'sudo systemctl reload nginx'",
    ),
    (
        Dialect::Posix,
        "ssh web01 'cat /etc/app.conf' | ssh db01 'tee /etc/app.conf'",
    ),
    (Dialect::Posix, "ssh web01 uptime; ssh db01 'sudo reboot'"),
    (Dialect::Posix, "(cd /tmp && ssh web01 'touch /tmp/x')"),
    (Dialect::Posix, "echo $(ssh web01 'cat /etc/hostname')"),
    (
        Dialect::Posix,
        "x=`ssh db01 'sudo rm -f /var/lib/app.lock'`",
    ),
    (
        Dialect::Posix,
        "if ssh web01 'test -f /etc/app.conf'; then echo ok; fi",
    ),
    (
        Dialect::Posix,
        "timeout 30 ssh web01 'sudo systemctl restart app'",
    ),
    (
        Dialect::Posix,
        "nohup ssh web01 'sudo /opt/app/upgrade.sh' > /tmp/log 2>&1 &",
    ),
    (Dialect::Posix, "sudo -u deploy ssh web01 'rm -rf /srv/old'"),
    (
        Dialect::Posix,
        "env SSH_AUTH_SOCK=/tmp/agent nice -n 10 ssh web01 reboot",
    ),
    (Dialect::Posix, "time ssh web01 uptime"),
    (Dialect::Posix, "exec ssh web01"),
    (Dialect::Posix, "bash -c \"ssh web01 'sudo reboot'\""),
    (Dialect::Posix, "sh -lc 'ssh web01 uptime'"),
    (Dialect::Posix, "s\\sh web01 'sudo reboot'"),
    (Dialect::Posix, "/usr/bin/ssh web01 'sudo reboot'"),
    // What cannot be known: ask.
    (
        Dialect::Posix,
        "for h in web01 db01; do ssh $h 'sudo reboot'; done",
    ),
    (Dialect::Posix, "ssh $HOST 'sudo systemctl restart app'"),
    (Dialect::Posix, "ssh \"$(pick-host)\" uptime"),
    (Dialect::Posix, "ssh web01 \"sudo rm -rf $DIR\""),
    (Dialect::Posix, "eval \"ssh $TARGET reboot\""),
    (Dialect::Posix, "eval 'ssh web01 uptime'"),
    (
        Dialect::Posix,
        "cat hosts.txt | xargs -I{} ssh {} 'sudo reboot'",
    ),
    (
        Dialect::Posix,
        "find . -name '*.host' -exec ssh {} uptime \\;",
    ),
    (Dialect::Posix, "$SSH web01 reboot"),
    (Dialect::Posix, "ssh web01 'sudo reboot"),
    (Dialect::Posix, "echo \"unterminated && git status"),
    // scp, rsync, sftp.
    (Dialect::Posix, "scp app.conf web01:/etc/app/"),
    (Dialect::Posix, "scp web01:/var/log/app.log ./logs/"),
    (
        Dialect::Posix,
        "scp -P 2222 -i key.pem ./build.tgz deploy@10.0.0.7:/tmp/",
    ),
    (Dialect::Posix, "scp -r web01:/etc/nginx db01:/tmp/nginx"),
    (Dialect::Posix, "scp $FILE $DEST"),
    (Dialect::Posix, "rsync -avz --delete ./ web01:/srv/"),
    (Dialect::Posix, "rsync -avzn --delete ./ web01:/srv/"),
    (
        Dialect::Posix,
        "rsync -av -e 'ssh -p 2222' web01:/var/backups/ ./backups/",
    ),
    (
        Dialect::Posix,
        "rsync -av --remove-source-files web01:/var/spool/out/ ./in/",
    ),
    (Dialect::Posix, "sftp web01:/etc/hosts ./hosts"),
    (Dialect::Posix, "sftp deploy@web01"),
    // Ansible.
    (Dialect::Posix, "ansible all -m ping"),
    (
        Dialect::Posix,
        "ansible web01 -m shell -a 'systemctl restart app' --become",
    ),
    (Dialect::Posix, "ansible web01,db01 -a 'uptime'"),
    (
        Dialect::Posix,
        "ansible webservers -m ansible.builtin.setup",
    ),
    (
        Dialect::Posix,
        "ansible webservers -m service -a 'name=nginx state=restarted'",
    ),
    (
        Dialect::Posix,
        "ansible 'web*' -m copy -a 'src=a dest=/etc/a'",
    ),
    (
        Dialect::Posix,
        "ansible all -i inventory.ini -m copy -a 'src=a dest=/etc/a' --check",
    ),
    (Dialect::Posix, "ansible 'webservers:!web02' -m reboot"),
    (
        Dialect::Posix,
        "ansible-playbook -l 'web01,db01' --check site.yml",
    ),
    (Dialect::Posix, "ansible-playbook -l 'web01,db01' site.yml"),
    (
        Dialect::Posix,
        "ansible-playbook -i inventory.ini --limit webservers deploy.yml",
    ),
    (Dialect::Posix, "ansible-playbook site.yml"),
    // Windows from a POSIX shell.
    (Dialect::Posix, "winrs -r:win01 ipconfig /all"),
    (Dialect::Posix, "winrs -r:win01 -u:admin net stop spooler"),
    (
        Dialect::Posix,
        "psexec \\\\win01 -u admin -s cmd /c del C:\\temp\\x.log",
    ),
    (Dialect::Posix, "psexec \\\\win01,win02 hostname"),
    (Dialect::Posix, "psexec '\\\\win01' -s net stop spooler"),
    (Dialect::PowerShell, "psexec \\\\win01 -accepteula ipconfig"),
    (
        Dialect::PowerShell,
        "psexec64.exe \\\\win01 -u admin -p $pw reg add HKLM\\Software\\X /f",
    ),
    (
        Dialect::Posix,
        "smbclient //win01/share -U admin -c 'put report.xlsx'",
    ),
    (
        Dialect::Posix,
        "smbclient //win01/share -c 'ls; get report.xlsx'",
    ),
    (Dialect::Posix, "smbclient -L win01 -N"),
    (
        Dialect::Posix,
        "pwsh -c \"Invoke-Command -ComputerName win01 -ScriptBlock { Restart-Service Spooler }\"",
    ),
    // VM-level CLIs.
    (Dialect::Posix, "govc vm.power -off -vm web01"),
    (Dialect::Posix, "govc vm.power -on web01 db01"),
    (Dialect::Posix, "govc vm.destroy /dc1/vm/old/web09"),
    (
        Dialect::Posix,
        "govc snapshot.create -vm web01 before-upgrade",
    ),
    (Dialect::Posix, "govc snapshot.create before-upgrade"),
    (Dialect::Posix, "govc vm.info web01"),
    (Dialect::Posix, "virsh shutdown web01 --mode acpi"),
    (Dialect::Posix, "virsh -c qemu+ssh://hv1/system list --all"),
    (
        Dialect::Posix,
        "virsh snapshot-revert --domain web01 --snapshotname clean",
    ),
    // PowerShell.
    (
        Dialect::PowerShell,
        "Invoke-Command -ComputerName win01,win02 -ScriptBlock { Restart-Service W3SVC }",
    ),
    (
        Dialect::PowerShell,
        "Invoke-Command -ComputerName win01 -ScriptBlock { Get-Service W3SVC | Select-Object Status }",
    ),
    (
        Dialect::PowerShell,
        "icm -cn 'win01','win02' { Get-Process | Sort-Object CPU }",
    ),
    (
        Dialect::PowerShell,
        "Invoke-Command -Session $s -ScriptBlock { Stop-Service Spooler }",
    ),
    (
        Dialect::PowerShell,
        "Invoke-Command -ComputerName $servers -ScriptBlock { Restart-Computer -Force }",
    ),
    (
        Dialect::PowerShell,
        "Invoke-Command -ScriptBlock { Get-ChildItem }",
    ),
    (Dialect::PowerShell, "Enter-PSSession win01"),
    (
        Dialect::PowerShell,
        "$s = New-PSSession -ComputerName win01 -Credential $cred",
    ),
    (
        Dialect::PowerShell,
        "Restart-Computer -ComputerName win01,win02 -Force",
    ),
    (
        Dialect::PowerShell,
        "Restart-Computer -ComputerName win01 -WhatIf",
    ),
    (Dialect::PowerShell, "Stop-Computer"),
    (Dialect::PowerShell, "Stop-VM -VM web01 -Confirm:$false"),
    (Dialect::PowerShell, "Get-VM web01 | Stop-VM"),
    (
        Dialect::PowerShell,
        "Get-ChildItem C:\\repo | Where-Object { $_.Length -gt 1kb }",
    ),
    (
        Dialect::PowerShell,
        "ssh web01 'sudo systemctl restart app'",
    ),
    (
        Dialect::PowerShell,
        "'web01','db01' | ForEach-Object { ssh $_ 'sudo reboot' }",
    ),
    (
        Dialect::PowerShell,
        "foreach ($h in $hosts) { Restart-Computer -ComputerName $h }",
    ),
];

#[test]
fn the_shell_table() {
    let home = tempfile::tempdir().expect("temp home");
    std::fs::create_dir_all(home.path().join(".ssh")).expect("mkdir .ssh");
    std::fs::write(
        home.path().join(".ssh/config"),
        "Host web01\n  HostName jp-ubuntu\n  User deploy\n\nHost db01\n  HostName 10.0.0.21\n",
    )
    .expect("ssh config");
    let inventory = home.path().join("hosts.ini");
    std::fs::write(
        &inventory,
        "[webservers]\nweb01 ansible_host=jp-ubuntu\nweb02\n\n[db]\ndb01\n",
    )
    .expect("inventory");
    std::fs::write(
        home.path().join("inventory.ini"),
        "[webservers]\nweb03\nweb04 ansible_host=10.0.0.14\n",
    )
    .expect("second inventory");
    std::fs::write(
        home.path().join("ssh_config"),
        "Host web01\n  HostName 10.9.9.9\n",
    )
    .expect("-F config");
    let options = Options {
        resolve_ssh_config: true,
        ansible_inventory: Some(inventory),
        home: Some(home.path().to_path_buf()),
        cwd: Some(home.path().to_path_buf()),
    };
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    assert!(CASES.len() >= 80, "the table has {} cases", CASES.len());
    let mut table = String::new();
    for (dialect, command) in CASES {
        let analysis = analyse(command, *dialect, &catalog, &Inventory::default(), None);
        let _ = writeln!(table, "$ {command}");
        if *dialect == Dialect::PowerShell {
            let _ = writeln!(table, "  (PowerShell)");
        }
        for line in analysis.to_string().lines() {
            let _ = writeln!(table, "  {line}");
        }
        if let Verdict::Mutating(targets) = &analysis.verdict {
            let until = Instant::now() + Duration::from_secs(10);
            let resolved = match resolve::resolve(targets, &options, until) {
                Ok(names) => format!("VMs: {}", names.join(", ")),
                Err(e) => format!("unknown (ask): {e}"),
            };
            let _ = writeln!(table, "  → {resolved}");
        }
        table.push('\n');
    }
    insta::assert_snapshot!(table);
}

/// mosh names its destination and command as ssh does, whatever its options.
#[test]
fn mosh_reaches_its_destination_like_ssh() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    for command in [
        "mosh web01 sudo reboot",
        "mosh -- admin@web01 sudo reboot",
        "mosh --ssh 'ssh -p 2222' -p 60001 web01 sudo reboot",
        "mosh --ssh='ssh -p 2222' --predict=always web01",
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

#[track_caller]
fn assert_asks(command: &str, dialect: Dialect) {
    let verdict = verdict_of(command, dialect);
    assert!(
        matches!(verdict, Verdict::Unknown { .. }),
        "{command}: {verdict:?}"
    );
}

/// The decision for `command` in the words of the corpus: `none`, `ask`, or `checkpoint`
/// and the targets, sorted.
fn decision_of(command: &str, dialect: Dialect) -> String {
    decision_in(command, dialect, &Inventory::default())
}

/// Checks each (command, decision) of a table in `dialect`, listing every one that differs.
#[track_caller]
fn assert_decisions(dialect: Dialect, table: &[(&str, &str)]) {
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(command, want)| {
            let got = decision_of(command, dialect);
            (got != *want).then(|| format!("{command}: want {want}, got {got}"))
        })
        .collect();
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// The verdict for `command` with the shipped shell catalog and no protected machines.
pub(super) fn verdict_of(command: &str, dialect: Dialect) -> Verdict {
    verdict_with(command, dialect, &Inventory::default())
}

/// The verdict for `command` with the shipped shell catalog and `known` protected.
pub(super) fn verdict_with(command: &str, dialect: Dialect, known: &Inventory) -> Verdict {
    let catalog = ShellCatalog::builtin().expect("catalog");
    analyse(command, dialect, &catalog, known, None).verdict
}

/// [`decision_of`] with `known` protected, the targets' names in lower case.
pub(super) fn decision_in(command: &str, dialect: Dialect, known: &Inventory) -> String {
    match verdict_with(command, dialect, known) {
        Verdict::Local | Verdict::ReadOnly => String::from("none"),
        Verdict::Unknown { .. } => String::from("ask"),
        Verdict::Mutating(targets) => {
            let mut names: Vec<String> = targets
                .into_iter()
                .map(|t| t.name.to_ascii_lowercase())
                .collect();
            names.sort();
            names.dedup();
            format!("checkpoint {}", names.join(","))
        }
    }
}
