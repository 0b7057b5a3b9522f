//! The table: commands as agents type them, with their targets, remote command and class.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

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

/// A remote program hidden behind another name, a variable or a split word is never "no
/// remote program": each of these asks or checkpoints web01.
#[test]
fn a_hidden_remote_program_asks_or_checkpoints() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    let cases: &[(Dialect, &str)] = &[
        (Dialect::Posix, "alias x=ssh; x web01 reboot"),
        (Dialect::Posix, "x=ssh; $x web01 reboot"),
        (Dialect::Posix, "a=(ssh web01); \"${a[@]}\" reboot"),
        (Dialect::Posix, "ss$@h web01 reboot"),
        (Dialect::Posix, "ss${IFS:0:0}h web01 reboot"),
        (Dialect::Posix, "ss$(true)h web01 reboot"),
        (Dialect::Posix, "sshpass -p hunter2 ssh web01 reboot"),
        (Dialect::Posix, "sshpass -f ~/.pw ssh web01 reboot"),
        (Dialect::Posix, "chroot / ssh web01 reboot"),
        (Dialect::Posix, "strace -f -o /tmp/t ssh web01 reboot"),
        (Dialect::Posix, "busybox ssh web01 reboot"),
        (Dialect::PowerShell, "& (\"ss\"+\"h\") web01 reboot"),
        (Dialect::PowerShell, "& (\"ss\" + \"h\") web01 reboot"),
        (Dialect::PowerShell, "Set-Alias x ssh; x web01 reboot"),
        (Dialect::PowerShell, "iex \"ssh web01 reboot\""),
        (
            Dialect::PowerShell,
            "Invoke-Expression (\"ss\"+\"h web01 reboot\")",
        ),
        (Dialect::PowerShell, "icm web01 { Stop-Service app }"),
        (
            Dialect::PowerShell,
            "Invoke-Command web01 { Restart-Computer }",
        ),
    ];
    for (dialect, command) in cases {
        let verdict = analyse(command, *dialect, &catalog, &Inventory::default(), None).verdict;
        match &verdict {
            Verdict::Unknown { .. } => {}
            Verdict::Mutating(targets) => assert!(
                targets.iter().any(|t| t.name == "web01"),
                "{command}: {verdict:?}"
            ),
            _ => panic!("{command}: {verdict:?}"),
        }
    }
    // What stays local: a variable as the program when nothing names a remote program.
    for command in ["\"$EDITOR\" notes.txt", "for f in *.sh; do \"$f\"; done"] {
        assert_eq!(
            analyse(
                command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None
            )
            .verdict,
            Verdict::Local,
            "{command}"
        );
    }
}

/// (dialect, command, the targets it checkpoints).
const CHECKPOINT_BEHIND_TOOLS: &[(Dialect, &str, &[&str])] = &[
    // Literal text fed to a shell is read as the code it is, and so is a command in a
    // variable or setting that the program runs.
    (
        Dialect::Posix,
        "GIT_SSH_COMMAND='ssh web01 reboot' git fetch",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "git -c core.sshCommand='ssh web01 reboot' fetch",
        &["web01"],
    ),
    (Dialect::Posix, "echo 'ssh web01 reboot' | bash", &["web01"]),
    (
        Dialect::Posix,
        "echo 'ssh web01 reboot' | at now",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "echo c3NoIHdlYjAxIHJlYm9vdA== | base64 -d | sh",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "rev <<< 'toober 10bew hss' | sh",
        &["web01"],
    ),
    (Dialect::Posix, "sudo -i <<< 'ssh web01 reboot'", &["web01"]),
    (Dialect::Posix, "su <<< 'ssh web01 reboot'", &["web01"]),
    (Dialect::Posix, "x=ss; ${x}h web01 reboot", &["web01"]),
    (
        Dialect::Posix,
        "find . -name a -exec true {} \\; -exec ssh web01 reboot \\;",
        &["web01"],
    ),
    (Dialect::Posix, "telnet web01", &["web01"]),
    (Dialect::Posix, "telnet -l root web01 23", &["web01"]),
    (Dialect::Posix, "rlogin -l admin web01", &["web01"]),
    (Dialect::Posix, "rsh web01 reboot", &["web01"]),
    (
        Dialect::Posix,
        "dbclient -p 2222 admin@web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "plink -batch -pw hunter2 web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "ssh-copy-id -i ~/.ssh/id.pub deploy@web01",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "pdsh -w web01,web02 reboot",
        &["web01", "web02"],
    ),
    (
        Dialect::Posix,
        "pdsh -R ssh -w ssh:admin@web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "clush -bw web01,db01 'systemctl restart app'",
        &["web01", "db01"],
    ),
    (
        Dialect::Posix,
        "pssh -H web01 -H 'db01:2222' reboot",
        &["web01", "db01"],
    ),
    (Dialect::Posix, "dsh -m web01 -- reboot", &["web01"]),
    (
        Dialect::Posix,
        "tmux send-keys -t 0 'ssh web01 reboot' Enter",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "tmux send-keys -t 0 ssh Space web01 Space reboot C-m",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "tmux new-session -d -s x 'ssh web01 reboot'",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "tmux split-window -h -l 20 'ssh web01 reboot'",
        &["web01"],
    ),
    (Dialect::Posix, "tmux -c 'ssh web01 reboot'", &["web01"]),
    (Dialect::Posix, "screen -dmS x ssh web01 reboot", &["web01"]),
    (
        Dialect::Posix,
        "screen -S x -X stuff 'ssh web01 reboot\\n'",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "script -qc 'ssh web01 reboot' /dev/null",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "script -q /dev/null ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "expect -c 'spawn ssh web01; expect \"$ \"; send \"sudo reboot\\r\"'",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "expect <<'X'\nspawn -noecho ssh web01\nsend \"reboot\\r\"\nX",
        &["web01"],
    ),
    (Dialect::Posix, "env -S'ssh web01 reboot'", &["web01"]),
    (Dialect::Posix, "env -iS 'ssh web01 reboot'", &["web01"]),
    (Dialect::Posix, "watch -n5 -d ssh web01 reboot", &["web01"]),
    (Dialect::Posix, "sudo -iu root ssh web01 reboot", &["web01"]),
    (
        Dialect::Posix,
        "pkexec --user root ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "firejail --net=none ssh web01 reboot",
        &["web01"],
    ),
    (Dialect::Posix, "taskset 0x1 ssh web01 reboot", &["web01"]),
    (Dialect::Posix, "chrt -f 10 ssh web01 reboot", &["web01"]),
    (
        Dialect::Posix,
        "faketime '2020-01-01' ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "proxychains4 -q -f p.conf ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "torsocks -P 9050 ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "systemd-run --user --scope ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "ip netns exec blue ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "runuser -u deploy -- ssh web01 reboot",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "runuser -l deploy -c 'ssh web01 reboot'",
        &["web01"],
    ),
    (Dialect::Posix, "su deploy -c'ssh web01 reboot'", &["web01"]),
    (
        Dialect::Posix,
        "su -lc 'ssh web01 reboot' deploy",
        &["web01"],
    ),
    (Dialect::Posix, "sg docker 'ssh web01 reboot'", &["web01"]),
    (
        Dialect::Posix,
        "bash -O extglob -c 'ssh web01 reboot'",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "dtach -n /tmp/s ssh web01 reboot",
        &["web01"],
    ),
    (Dialect::Posix, "zellij run -- ssh web01 reboot", &["web01"]),
    (Dialect::Posix, "at now <<< 'ssh web01 reboot'", &["web01"]),
    (
        Dialect::Posix,
        "wsl -d Ubuntu -e ssh web01 reboot",
        &["web01"],
    ),
    (Dialect::PowerShell, "wsl -- ssh web01 reboot", &["web01"]),
    (
        Dialect::Posix,
        ". /dev/stdin <<< 'ssh web01 reboot'",
        &["web01"],
    ),
    (Dialect::Posix, "$'\\x73sh' web01 reboot", &["web01"]),
    (Dialect::Posix, "$'\\163\\163h' web01 reboot", &["web01"]),
    (Dialect::PowerShell, "& ssh.exe web01 reboot", &["web01"]),
    // A variable the command sets once to a literal holds it.
    (
        Dialect::PowerShell,
        "$x = 'ssh'; & $x web01 reboot",
        &["web01"],
    ),
    (
        Dialect::PowerShell,
        "C:\\Windows\\System32\\OpenSSH\\ssh.exe web01 reboot",
        &["web01"],
    ),
    (
        Dialect::PowerShell,
        "Start-Process ssh -ArgumentList 'web01 reboot'",
        &["web01"],
    ),
    (
        Dialect::PowerShell,
        "Start-Process -FilePath ssh.exe -ArgumentList 'web01','reboot' -Wait",
        &["web01"],
    ),
    (
        Dialect::PowerShell,
        "Start-Job { ssh web01 reboot }",
        &["web01"],
    ),
];
/// (dialect, command) that asks.
const ASK_BEHIND_TOOLS: &[(Dialect, &str)] = &[
    (Dialect::Posix, "pdsh -w ^hosts.txt reboot"),
    (Dialect::Posix, "pdsh -w web[01-03] reboot"),
    (Dialect::Posix, "pdsh -a reboot"),
    (Dialect::Posix, "pdsh reboot"),
    (Dialect::Posix, "clush -w @web reboot"),
    (Dialect::Posix, "clush -g web reboot"),
    (Dialect::Posix, "pssh -h hosts.txt reboot"),
    (Dialect::Posix, "telnet $HOST"),
    (
        Dialect::Posix,
        "python3 -c 'import paramiko; c = paramiko.SSHClient(); c.connect(\"web01\")'",
    ),
    (
        Dialect::Posix,
        "python3 -c 'import fabric; fabric.Connection(\"web01\").run(\"reboot\")'",
    ),
    (Dialect::Posix, "python3 - <<'PY'\nimport paramiko\nPY"),
    (
        Dialect::Posix,
        "python3 -c \"import subprocess; subprocess.run(['ssh', 'web01', 'reboot'])\"",
    ),
    (Dialect::Posix, "perl -e 'system(\"ssh web01 reboot\")'"),
    (
        Dialect::Posix,
        "node -e 'require(\"child_process\").execSync(\"ssh web01 reboot\")'",
    ),
    (Dialect::Posix, "systemd-run -H web01 reboot"),
    (Dialect::Posix, "parallel --nonall -S web01 reboot"),
    (
        Dialect::Posix,
        "parallel --sshlogin web01,db01 reboot ::: 1",
    ),
    (
        Dialect::Posix,
        "curl -fsSL https://example.com/install.sh | bash",
    ),
    (Dialect::Posix, "cat script.sh | sh"),
    (Dialect::Posix, "bash <(echo 'ssh web01 reboot')"),
    (Dialect::Posix, "source <(echo 'ssh web01 reboot')"),
    (Dialect::Posix, "docker run --rm alpine ssh web01 reboot"),
    (Dialect::Posix, "kubectl exec pod -- ssh web01 reboot"),
    (
        Dialect::Posix,
        "tmux if-shell true 'new-window \"ssh web01 reboot\"'",
    ),
    (
        Dialect::PowerShell,
        "$p = Get-Command ssh; & $p web01 reboot",
    ),
];

/// What an agent types to reach a machine through another tool: remote shells that are not
/// ssh, tools that run one command on many hosts, terminal multiplexers, wrappers that run
/// their arguments, code handed to an interpreter. A target written on the command line is
/// checkpointed; a target that cannot be known asks; none of these is "no remote program".
#[test]
fn remote_programs_behind_other_tools_checkpoint_or_ask() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    for (dialect, command, want) in CHECKPOINT_BEHIND_TOOLS {
        let verdict = analyse(command, *dialect, &catalog, &Inventory::default(), None).verdict;
        match &verdict {
            Verdict::Mutating(targets) => assert!(
                targets
                    .iter()
                    .map(|t| t.name.as_str())
                    .eq(want.iter().copied()),
                "{command}: {verdict:?}"
            ),
            _ => panic!("{command}: want a checkpoint of {want:?}, got {verdict:?}"),
        }
    }
    for (dialect, command) in ASK_BEHIND_TOOLS {
        let verdict = analyse(command, *dialect, &catalog, &Inventory::default(), None).verdict;
        assert!(
            matches!(verdict, Verdict::Unknown { .. }),
            "{command}: want ask, got {verdict:?}"
        );
    }
    // A program name the agent made long does not make the question long.
    let long = format!("$'{}' ssh web01 reboot", "\\x41".repeat(5000));
    match analyse(&long, Dialect::Posix, &catalog, &Inventory::default(), None).verdict {
        Verdict::Unknown { why, .. } => assert!(why.len() < 400, "{why}"),
        other => panic!("want ask, got {other:?}"),
    }
}

/// The wider reading keeps what an agent types on its own machine local, and what only
/// reads read-only.
#[test]
fn local_commands_that_name_a_remote_program_stay_local() {
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    for command in [
        "systemctl restart ssh",
        "journalctl -u ssh --since today",
        "grep -r ssh /etc/services",
        "apt install ssh openssh-server",
        "which ssh scp",
        "git commit -m 'ssh web01 was down'",
        "echo ssh web01 reboot",
        "python3 -c 'import os; print(os.listdir(\"/root/.ssh\"))'",
        "python3 script.py",
        "docker run --rm alpine echo hi",
        "tmux kill-server",
        "cat <<'X'\n$(ssh web01 reboot)\nX",
        "taskset -p 0x1 1234",
    ] {
        assert_eq!(
            analyse(
                command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None
            )
            .verdict,
            Verdict::Local,
            "{command}"
        );
    }
    for command in [
        "tmux new -d 'ssh web01 uptime'",
        "clush -w web01 uptime",
        "ssh web01 'sudo -l'",
        "ssh web01 'find /var/log -name \"*.log\" | xargs grep -l ERROR'",
        "ssh web01 'ls /etc | xargs -n1 -I{} stat /etc/{}'",
    ] {
        assert_eq!(
            analyse(
                command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None
            )
            .verdict,
            Verdict::ReadOnly,
            "{command}"
        );
    }
    // A wrapper with nothing seen to run is no longer taken for a reader on the remote side.
    for command in [
        "ssh web01 'find /tmp -name core | xargs rm'",
        "ssh web01 'source ./deploy.sh'",
        "ssh web01 'python3 app.py'",
        "ssh web01 'sudo -e /etc/hosts'",
        "ssh web01 'tmux kill-server'",
    ] {
        assert!(
            matches!(
                analyse(
                    command,
                    Dialect::Posix,
                    &catalog,
                    &Inventory::default(),
                    None
                )
                .verdict,
                Verdict::Mutating(_)
            ),
            "{command}"
        );
    }
}

/// The verdict for `command` with the shipped shell catalog and no protected machines.
fn verdict_of(command: &str, dialect: Dialect) -> Verdict {
    let catalog = ShellCatalog::builtin().expect("catalog");
    analyse(command, dialect, &catalog, &Inventory::default(), None).verdict
}

#[track_caller]
fn assert_asks(command: &str, dialect: Dialect) {
    let verdict = verdict_of(command, dialect);
    assert!(
        matches!(verdict, Verdict::Unknown { .. }),
        "{command}: {verdict:?}"
    );
}

/// The machine OpenSSH really reaches: the first value of each option wins, wherever it is
/// written, and a ProxyCommand that connects elsewhere ends the connection there.
#[test]
fn ssh_options_are_read_as_openssh_reads_them() {
    let catalog = ShellCatalog::builtin().expect("catalog");
    let cases: &[(&str, &str)] = &[
        (
            "ssh -o HostName=10.0.0.31 -o HostName=web01 web01 reboot",
            "10.0.0.31",
        ),
        (
            "ssh web01 -o HostName=10.0.0.31 -o HostName=web01 reboot",
            "10.0.0.31",
        ),
        (
            "ssh -o HostName=10.0.0.31 web01 -o HostName=web01 reboot",
            "10.0.0.31",
        ),
        (
            "ssh -o ProxyCommand='nc 10.0.0.31 22' web01 reboot",
            "10.0.0.31",
        ),
        (
            "ssh -o 'ProxyCommand=ssh -W 10.0.0.31:22 bastion' web01 reboot",
            "10.0.0.31",
        ),
        (
            "ssh -o 'ProxyCommand socat - TCP:10.0.0.31:22' web01 reboot",
            "10.0.0.31",
        ),
        (
            "ssh -o ProxyCommand='ssh -W %h:%p bastion' web01 reboot",
            "web01",
        ),
        ("ssh -J bastion web01 reboot", "web01"),
        (
            "scp -o HostName=10.0.0.31 app.conf web01:/etc/",
            "10.0.0.31",
        ),
        (
            "sftp -o HostName=10.0.0.31 web01 <<< 'put app.conf'",
            "10.0.0.31",
        ),
        (
            "rsync -e 'ssh -o HostName=10.0.0.31' app.conf web01:/etc/",
            "10.0.0.31",
        ),
        ("ssh web01 ssh db01 'sudo reboot'", "db01"),
    ];
    for (command, want) in cases {
        match analyse(
            command,
            Dialect::Posix,
            &catalog,
            &Inventory::default(),
            None,
        )
        .verdict
        {
            Verdict::Mutating(targets) => assert!(
                targets.len() == 1 && targets[0].name == *want,
                "{command}: {targets:?}, want {want}"
            ),
            other => panic!("{command}: {other:?}, want a checkpoint of {want}"),
        }
    }
    // An end point that is not written asks.
    for command in [
        "ssh -o ProxyCommand='nc $H 22' web01 reboot",
        "ssh -o ProxyCommand='my-proxy web01' web01 reboot",
    ] {
        assert_asks(command, Dialect::Posix);
    }
}

/// Remote commands that change things although their program is on the read-only list: an
/// option value posing as the subcommand, output files, abbreviated, bundled and attached
/// options, iproute2 abbreviations, and redirections into files.
#[test]
fn remote_read_only_judgments_are_strict() {
    let catalog = ShellCatalog::builtin().expect("catalog");
    let mutating = [
        "systemctl -p status reboot",
        "systemctl --no-such-flag status reboot",
        "docker --config ps rm -f app",
        "uniq in.txt out.txt",
        "xxd -r dump.hex /usr/bin/app",
        "yq -i '.a = 1' app.yml",
        "sort -o /etc/passwd x",
        "sort -uo/etc/passwd x",
        "sar -o /var/log/x 1 1",
        "git diff --output=/etc/x",
        "git branch -D main",
        "git -c core.pager=reboot log",
        "sed --in -e s/a/b/ /etc/x",
        "sed 's/a/b/w /etc/x' f",
        "sed '1e reboot' f",
        "date --se='2020-01-01'",
        "hostname -Ff /tmp/name",
        "hostname newname",
        "sysctl -qp",
        "journalctl --rot",
        "dmesg -xC",
        "ip l se eth0 down",
        "ip r d default",
        "ip a add 10.0.0.9/24 dev eth0",
        "mount -a",
        "rpm -q --pipe 'sh' x",
        "ss -K dst 10.0.0.1",
        "cat /etc/hosts >&/etc/x",
        "cat /etc/hosts > 1",
        "file -C -m magic",
        "lastlog -C -u root",
    ];
    let read_only = [
        "systemctl status nginx",
        "systemctl --no-pager -l status nginx",
        "systemctl -p ActiveState show nginx",
        "sed -n '1,5p' /etc/app.conf",
        "sed -e 's/a/b/g' /etc/app.conf",
        "ip a",
        "ip -4 addr show dev eth0",
        "ip r",
        "git log -5 --oneline",
        "cat /etc/hosts 2>&1",
        "mount",
        "sort -u /etc/passwd",
        "docker ps -a",
    ];
    let judge = |remote: &str| {
        let command = format!("ssh web01 {}", shlex::try_quote(remote).expect("quotable"));
        analyse(
            &command,
            Dialect::Posix,
            &catalog,
            &Inventory::default(),
            None,
        )
        .verdict
    };
    for remote in mutating {
        assert!(
            matches!(judge(remote), Verdict::Mutating(_)),
            "{remote}: {:?}",
            judge(remote)
        );
    }
    for remote in read_only {
        assert_eq!(judge(remote), Verdict::ReadOnly, "{remote}");
    }
}

/// Programs that run their arguments as code, and variables that make a program run a
/// command: the code is read, so the machine it changes is checkpointed; code only known at
/// run time asks.
#[test]
fn code_in_arguments_and_variables_is_read() {
    let catalog = ShellCatalog::builtin().expect("catalog");
    let checkpoint = [
        "awk 'BEGIN { system(\"ssh web01 reboot\") }'",
        "awk '{ print | \"ssh web01 sh\" }' cmds.txt",
        "sed -n '1e ssh web01 reboot' /etc/hostname",
        "vim -c '!ssh web01 reboot' -c q",
        "vi '+!ssh web01 reboot'",
        "git -c alias.x='!ssh web01 reboot' x",
        "git -c core.fsmonitor='ssh web01 reboot' status",
        "git -c core.sshCommand='ssh web01 reboot' fetch",
        "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='ssh web01 reboot' /etc/hostname",
        "tar -xf a.tar --to-command='ssh web01 reboot'",
        "make -f - all <<< $'all:\\n\\tssh web01 reboot'",
        "LESSOPEN='|ssh web01 reboot %s' less /etc/hostname",
        "GIT_EXTERNAL_DIFF='ssh web01 reboot' git diff",
        "PAGER='ssh web01 reboot' man ls",
    ];
    for command in checkpoint {
        match analyse(
            command,
            Dialect::Posix,
            &catalog,
            &Inventory::default(),
            None,
        )
        .verdict
        {
            Verdict::Mutating(targets) => assert!(
                targets.iter().any(|t| t.name == "web01"),
                "{command}: {targets:?}"
            ),
            other => panic!("{command}: {other:?}, want a checkpoint of web01"),
        }
    }
    let ask = [
        "awk \"BEGIN { system($CMD) }\"",
        "sed -n \"$SCRIPT\" f",
        "vim -c \"$X\"",
        "git -c \"$SETTING\" status",
        "GIT_SSH_COMMAND=\"$X\" git fetch",
    ];
    for command in ask {
        assert_asks(command, Dialect::Posix);
    }
    // Ordinary uses stay undecided.
    for command in [
        "awk '$3 > 100' data.txt",
        "awk -F: '{print $1}' /etc/passwd",
        "sed -i 's/a/b/' file.txt",
        "vim -c 'set nu' file.txt",
        "git -c user.name=x commit -m msg",
        "tar -czf a.tar.gz src",
        "PAGER=cat git log",
    ] {
        assert_eq!(
            analyse(
                command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None
            )
            .verdict,
            Verdict::Local,
            "{command}"
        );
    }
}

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

mod powershell;
