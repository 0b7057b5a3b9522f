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
    // A command code starts, written in the code, is read as the command it is.
    (
        Dialect::Posix,
        "python3 -c \"import subprocess; subprocess.run(['ssh', 'web01', 'reboot'])\"",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "perl -e 'system(\"ssh web01 reboot\")'",
        &["web01"],
    ),
    (
        Dialect::Posix,
        "node -e 'require(\"child_process\").execSync(\"ssh web01 reboot\")'",
        &["web01"],
    ),
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
    // Code that starts a program whose name or machine is only known when it runs.
    (
        Dialect::Posix,
        "python3 -c 'import os; os.system(\"ssh \" + host + \" reboot\")'",
    ),
    (Dialect::Posix, "perl -e 'system(\"ssh $host reboot\")'"),
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
pub(super) fn verdict_of(command: &str, dialect: Dialect) -> Verdict {
    verdict_with(command, dialect, &Inventory::default())
}

/// The verdict for `command` with the shipped shell catalog and `known` protected.
pub(super) fn verdict_with(command: &str, dialect: Dialect, known: &Inventory) -> Verdict {
    let catalog = ShellCatalog::builtin().expect("catalog");
    analyse(command, dialect, &catalog, known, None).verdict
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

/// The decision for `command` in the words of the corpus: `none`, `ask`, or `checkpoint`
/// and the targets, sorted.
fn decision_of(command: &str, dialect: Dialect) -> String {
    decision_in(command, dialect, &Inventory::default())
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

/// A variable that makes a program run a command or load code, set in front of a remote
/// command that only reads (or with `env`, `sudo`, or alone before it), makes that command
/// one that can change the host.
#[test]
fn variables_that_run_code_make_a_remote_command_change_its_host() {
    let mut table: Vec<(String, &str)> = Vec::new();
    for (variable, reader) in [
        ("LESSOPEN", "less /etc/hosts"),
        ("LESSCLOSE", "less /etc/hosts"),
        ("GIT_EXTERNAL_DIFF", "git diff"),
        ("GIT_SSH_COMMAND", "git log"),
        ("PAGER", "git log"),
        ("GIT_PAGER", "git log"),
        ("EDITOR", "crontab -l"),
        ("VISUAL", "crontab -l"),
        ("LD_PRELOAD", "cat /etc/hosts"),
        ("LD_LIBRARY_PATH", "ls /"),
        ("BASH_ENV", "uptime"),
        ("ENV", "uptime"),
        ("PROMPT_COMMAND", "uptime"),
        ("PS4", "uptime"),
        ("SHELLOPTS", "uptime"),
    ] {
        for remote in [
            format!("{variable}=\"|reboot %s\" {reader}"),
            format!("{variable}='|reboot %s' {reader}"),
            format!("env {variable}=/tmp/x {reader}"),
            format!("sudo {variable}=/tmp/x {reader}"),
            format!("export {variable}=/tmp/x; {reader}"),
            format!("{variable}=/tmp/x; {reader}"),
            format!("uptime && {variable}=/tmp/x {reader}"),
        ] {
            let quoted = shlex::try_quote(&remote).expect("quotable").into_owned();
            table.push((format!("ssh web01 {quoted}"), "checkpoint web01"));
        }
    }
    table.push((
        String::from("ssh web01 'LESSOPEN=\"|reboot %s\" less /etc/hosts'"),
        "checkpoint web01",
    ));
    // Set or sent by ssh itself.
    for (command, want) in [
        (
            "ssh -o SetEnv=PAGER=reboot web01 git log",
            "checkpoint web01",
        ),
        (
            "ssh -o 'SetEnv LANG=C LESSOPEN=|reboot' web01 less f",
            "checkpoint web01",
        ),
        (
            "ssh -o 'SendEnv LESS*' web01 less /etc/hosts",
            "checkpoint web01",
        ),
        (
            "ssh web01 -o SendEnv=LD_PRELOAD cat /etc/hosts",
            "checkpoint web01",
        ),
        ("ssh -o SetEnv=LANG=C web01 uptime", "none"),
        ("ssh -o 'SendEnv LANG LC_*' web01 uptime", "none"),
    ] {
        table.push((command.to_owned(), want));
    }
    // Other variables, and the same programs without them, still only read.
    for remote in [
        "'LC_ALL=C ls -l /etc'",
        "'TZ=UTC date'",
        "'env LANG=C uptime'",
        "'less /etc/hosts'",
        "'git log -3'",
    ] {
        table.push((format!("ssh web01 {remote}"), "none"));
    }
    let table: Vec<(&str, &str)> = table.iter().map(|(c, w)| (c.as_str(), *w)).collect();
    assert_decisions(Dialect::Posix, &table);
}

/// A port forward with no remote command (`-N`, or `SessionType none`) runs nothing on the
/// host and reads nothing from it: no decision, whatever the order and spelling of its
/// options; `localhost` in a forward spec is never a target. A command given with it is
/// still judged.
#[test]
fn a_port_forward_runs_nothing_on_its_host() {
    assert_decisions(
        Dialect::Posix,
        &[
            ("ssh -N -L 5432:localhost:5432 db01", "none"),
            ("ssh -fN -D 1080 web01", "none"),
            ("ssh -N -R 8080:localhost:80 web01", "none"),
            ("ssh -L 5432:localhost:5432 -N db01", "none"),
            ("ssh -NL 5432:localhost:5432 db01", "none"),
            ("ssh -fNL5432:localhost:5432 admin@db01", "none"),
            ("ssh db01 -N -L 5432:localhost:5432", "none"),
            ("ssh -N -L 8080:localhost:80 localhost", "none"),
            (
                "ssh -o SessionType=none -L 5432:localhost:5432 db01",
                "none",
            ),
            (
                "ssh -N -o 'ExitOnForwardFailure yes' -L 5432:db:5432 db01",
                "none",
            ),
            ("autossh -M 0 -f -N -L 5432:localhost:5432 db01", "none"),
            // Without -N the same forward opens a session on the host.
            ("ssh -L 5432:localhost:5432 db01", "checkpoint db01"),
            ("ssh -N web01 'sudo reboot'", "checkpoint web01"),
            (
                "ssh -N -o 'LocalCommand ssh web02 reboot' -o PermitLocalCommand=yes web01",
                "checkpoint web02",
            ),
        ],
    );
}

/// (command, decision) for programs that run a command on another machine.
const REMOTE_EXEC: &[(&str, &str)] = &[
    // psexec and winrs: cmd.exe's command line.
    ("psexec \\\\win01 ipconfig", "none"),
    ("psexec \\\\win01 ipconfig /all", "none"),
    ("psexec \\\\win01 -u admin -p pw hostname", "none"),
    ("psexec \\\\win01 -s cmd /c \"ipconfig & hostname\"", "none"),
    ("psexec \\\\win01 net stop spooler", "checkpoint win01"),
    ("psexec \\\\win01 -c ipconfig", "checkpoint win01"),
    (
        "psexec \\\\win01 cmd /c \"ipconfig & net stop spooler\"",
        "checkpoint win01",
    ),
    ("psexec \\\\win01,win02 tasklist", "none"),
    ("psexec \\\\$H tasklist", "none"),
    ("psexec \\\\$H net stop spooler", "ask"),
    ("winrs -r:win01 whoami", "none"),
    (
        "winrs -r:win01 -u:admin \"ipconfig /all & hostname\"",
        "none",
    ),
    ("winrs /r:win01 whoami", "none"),
    (
        "winrs -r:win01 \"whoami & net stop spooler\"",
        "checkpoint win01",
    ),
    ("winrs -r:win01", "checkpoint win01"),
    // govc: a program run in the guest, and the guest verbs.
    ("govc guest.run -vm web01 uname -a", "none"),
    ("govc guest.run -vm=web01 cat /etc/os-release", "none"),
    ("govc guest.run -l root:pw -vm web01 df -h", "none"),
    ("govc guest.run -vm /dc/vm/web01 ps aux", "none"),
    ("govc guest.start -vm web01 uptime", "none"),
    (
        "govc guest.run -vm web01 systemctl restart app",
        "checkpoint web01",
    ),
    (
        "govc guest.start -vm web01 /sbin/reboot",
        "checkpoint web01",
    ),
    (
        "govc guest.run -vm web01 sort -o /etc/passwd x",
        "checkpoint web01",
    ),
    (
        "govc guest.run -vm web01 -e LD_PRELOAD=/tmp/x.so cat /etc/hosts",
        "checkpoint web01",
    ),
    (
        "govc guest.run -vm web01 -d reboot /bin/sh",
        "checkpoint web01",
    ),
    (
        "govc guest.run -vm web01 ssh db01 reboot",
        "checkpoint db01",
    ),
    ("govc guest.run -vm $VM reboot", "ask"),
    ("govc guest.run uname -a", "none"),
    ("govc guest.df -vm web01", "none"),
    ("govc guest.ls -vm web01 /etc", "none"),
    ("govc guest.ps -vm web01", "none"),
    ("govc guest.getenv -vm web01 PATH", "none"),
    ("govc guest.download -vm web01 /etc/hosts ./hosts", "none"),
    (
        "govc guest.upload -vm web01 ./app.conf /etc/app.conf",
        "checkpoint web01",
    ),
    ("govc guest.rm -vm web01 /tmp/x", "checkpoint web01"),
    ("govc guest.mkdir -vm web01 /tmp/x", "checkpoint web01"),
    ("govc guest.kill -vm web01 -p 42", "checkpoint web01"),
    ("govc guest.chmod -vm web01 0644 /etc/x", "checkpoint web01"),
    // Salt: cmd.run's command, and its keyword arguments.
    ("salt web01 cmd.run uptime", "none"),
    ("salt 'web01' cmd.run 'ls -l /srv'", "none"),
    ("salt web01 cmd.run 'df -h' cwd=/srv runas=app", "none"),
    ("salt web01 test.ping", "none"),
    ("salt web01 grains.items", "none"),
    (
        "salt web01,db01 cmd.run 'systemctl restart app'",
        "checkpoint db01,web01",
    ),
    (
        "salt web01 cmd.run ls env='{\"LD_PRELOAD\": \"/tmp/x.so\"}'",
        "checkpoint web01",
    ),
    (
        "salt web01 cmd.run 'cat /etc/hosts' template=jinja",
        "checkpoint web01",
    ),
    (
        "salt web01 cmd.script salt://scripts/fix.sh",
        "checkpoint web01",
    ),
    ("salt '*' cmd.run uptime", "none"),
    ("salt '*' cmd.run reboot", "ask"),
    ("salt-ssh web01 -r 'df -h'", "none"),
    ("salt-ssh web01 -r 'rm -rf /tmp/x'", "checkpoint web01"),
    // Bolt, Fabric, pyinfra, rexec.
    ("bolt command run uptime --targets web01,db01", "none"),
    ("bolt command run 'df -h' -t web01", "none"),
    ("bolt command run --targets=web01 'cat /etc/hosts'", "none"),
    (
        "bolt command run 'sudo reboot' -t web01",
        "checkpoint web01",
    ),
    ("bolt script run ./fix.sh -t web01", "checkpoint web01"),
    ("fab -H web01 -- uname -a", "none"),
    ("fab -H web01,web02 -- 'df -h'", "none"),
    ("fab -H web01 -- sudo reboot", "checkpoint web01"),
    ("fab -H web01 deploy", "checkpoint web01"),
    ("fab -H web01 deploy -- uname -a", "checkpoint web01"),
    ("fab deploy", "ask"),
    ("pyinfra web01 exec -- uptime", "none"),
    ("pyinfra web01 exec -- tail -n 50 /var/log/syslog", "none"),
    ("pyinfra web01 exec -- reboot", "checkpoint web01"),
    (
        "pyinfra web01 exec --shell-executable /tmp/x -- uptime",
        "checkpoint web01",
    ),
    ("rexec web01 uptime", "none"),
    ("rexec web01 reboot", "checkpoint web01"),
    // An ssh onward from the machine is followed, and its machine judged too.
    (
        "ssh bastion 'uptime; ssh db01 reboot'",
        "checkpoint bastion,db01",
    ),
    (
        "ssh web01 'bash -c \"ssh db01 reboot\"'",
        "checkpoint db01,web01",
    ),
    ("ssh web01 'grep ssh /var/log/auth.log'", "none"),
    (
        "gcloud compute ssh bastion --command 'sudo ssh -o StrictHostKeyChecking=no db01 \"systemctl restart x\"'",
        "checkpoint bastion,db01",
    ),
    (
        "salt web01 cmd.run 'uptime && ssh db01 reboot'",
        "checkpoint db01,web01",
    ),
    (
        "ansible web01 -m shell -a 'uptime; ssh db01 reboot'",
        "checkpoint db01,web01",
    ),
    // Ansible's command, shell and raw modules.
    ("ansible web01 -m shell -a 'uptime'", "none"),
    (
        "ansible web01 -m ansible.builtin.command -a 'df -h'",
        "none",
    ),
    ("ansible web01 -a 'cat /etc/os-release'", "none"),
    ("ansible web01 -m raw -a 'uptime'", "none"),
    ("ansible web01 -a 'hostname chdir=/tmp'", "none"),
    (
        "ansible web01 -m shell -a 'ls creates=/x chdir=/tmp'",
        "none",
    ),
    ("ansible web01 -m raw -a 'reboot'", "checkpoint web01"),
    (
        "ansible web01 -a 'uptime executable=/tmp/x'",
        "checkpoint web01",
    ),
    (
        "ansible web01 -m shell -a 'cat /etc/hosts stdin=reboot'",
        "checkpoint web01",
    ),
    (
        "ansible web01 -m shell -a 'ssh db01 reboot'",
        "checkpoint db01",
    ),
    ("ansible web01 -m shell -a 'ssh db01 uptime'", "none"),
    // A remote container engine: the container runs on its host.
    ("docker -H ssh://web01 exec app ls", "none"),
    ("docker -H ssh://web01 exec -it app ls -la /srv", "none"),
    (
        "docker --host=ssh://web01 exec -u root -w /tmp app cat /etc/hosts",
        "none",
    ),
    ("DOCKER_HOST=ssh://web01 docker ps", "none"),
    ("DOCKER_HOST=ssh://web01 docker exec app ps aux", "none"),
    (
        "docker -H ssh://web01 exec app rm -rf /srv/cache",
        "checkpoint web01",
    ),
    (
        "docker -H ssh://web01 exec app sort -o /etc/passwd x",
        "checkpoint web01",
    ),
    (
        "docker -H ssh://web01 exec -e LD_PRELOAD=/x.so app cat f",
        "checkpoint web01",
    ),
    (
        "docker -H ssh://web01 exec --env-file ./env app cat f",
        "checkpoint web01",
    ),
    (
        "docker -H ssh://web01 exec -it app bash",
        "checkpoint web01",
    ),
    ("docker exec app ls", "none"),
    ("docker -H ssh://web01 container exec app ls", "none"),
    (
        "docker -H ssh://web01 container exec app reboot",
        "checkpoint web01",
    ),
    // Proxmox: an id names no machine here.
    ("qm guest exec 101 -- cat /etc/os-release", "none"),
    ("qm guest exec 101 --timeout 10 -- uname -a", "none"),
    ("qm guest exec 101 -- systemctl restart app", "ask"),
    ("pct exec 101 -- ls /etc", "none"),
    ("pct exec 101 -- apt-get -y upgrade", "ask"),
    // Cloud CLIs.
    ("gcloud compute ssh web01 --command uptime", "none"),
    (
        "gcloud compute ssh admin@web01 --zone=europe-west1-b --command='df -h'",
        "none",
    ),
    (
        "gcloud compute ssh --zone europe-west1-b web01 --command 'cat /etc/hosts'",
        "none",
    ),
    (
        "gcloud compute ssh db01 --command 'sudo systemctl restart postgresql'",
        "checkpoint db01",
    ),
    ("gcloud compute ssh web01", "checkpoint web01"),
    (
        "gcloud compute ssh web01 -- -L 8080:localhost:80",
        "checkpoint web01",
    ),
    (
        "gcloud compute ssh bastion --command 'ssh db01 reboot'",
        "checkpoint db01",
    ),
    (
        "gcloud compute ssh bastion --command 'ssh db01 uptime'",
        "none",
    ),
    (
        "gcloud compute scp ./app.conf web01:/tmp",
        "checkpoint web01",
    ),
    ("gcloud compute scp --recurse web01:/var/log ./logs", "none"),
    (
        "gcloud compute instances stop db01 --zone europe-west1-b",
        "checkpoint db01",
    ),
    ("gcloud compute instances describe web01", "none"),
    ("gcloud config list", "none"),
    ("gcloud beta compute ssh web01 --command uptime", "none"),
    (
        "az vm run-command invoke -g rg -n web01 --command-id RunShellScript --scripts 'uptime && df -h'",
        "none",
    ),
    (
        "az vm run-command invoke --name web01 -g rg --scripts 'uptime' 'df -h' --command-id RunShellScript",
        "none",
    ),
    (
        "az vm run-command invoke -g rg -n win01 --command-id RunPowerShellScript --scripts 'Get-Service'",
        "none",
    ),
    (
        "az vm run-command invoke -g rg -n win01 --command-id RunPowerShellScript --scripts 'Restart-Service W3SVC'",
        "checkpoint win01",
    ),
    (
        "az vm run-command invoke -g rg -n web01 --command-id RunShellScript --scripts @fix.sh",
        "checkpoint web01",
    ),
    (
        "az vm run-command invoke -g rg -n web01 --command-id RunShellScript --scripts 'cat $1' --parameters /etc/hosts",
        "checkpoint web01",
    ),
    (
        "az vmss run-command invoke -g rg -n set --instance-id 3 --command-id RunShellScript --scripts reboot",
        "ask",
    ),
    ("az vm restart -g rg -n web01", "checkpoint web01"),
    ("az vm list -o table", "none"),
    (
        "aws ssm send-command --document-name AWS-RunShellScript --parameters 'commands=[\"uptime\"]' --instance-ids i-0abc",
        "none",
    ),
    (
        "aws ssm send-command --instance-ids i-0abc --document-name AWS-RunShellScript --parameters '{\"commands\":[\"uptime\",\"df -h\"]}'",
        "none",
    ),
    (
        "aws ssm send-command --document-name AWS-RunShellScript --parameters commands=uptime --targets Key=tag:role,Values=web",
        "none",
    ),
    (
        "aws ssm send-command --document-name AWS-RunShellScript --parameters 'commands=[\"sudo reboot\"]' --instance-ids i-0abc",
        "ask",
    ),
    (
        "aws ssm send-command --document-name AWS-ApplyPatchBaseline --instance-ids i-0abc",
        "ask",
    ),
    (
        "aws ssm send-command --cli-input-json file://req.json --document-name AWS-RunShellScript --parameters commands=uptime",
        "ask",
    ),
    // A QEMU guest agent: a report decides nothing, guest-exec is judged, the rest asks.
    (
        "virsh qemu-agent-command web01 '{\"execute\":\"guest-info\"}'",
        "none",
    ),
    (
        "virsh qemu-agent-command web01 '{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"/bin/cat\",\"arg\":[\"/etc/os-release\"],\"capture-output\":true}}'",
        "none",
    ),
    (
        "virsh qemu-agent-command web01 '{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"/sbin/reboot\"}}'",
        "ask",
    ),
    (
        "virsh qemu-agent-command --domain web01 --cmd '{\"execute\":\"guest-shutdown\"}'",
        "ask",
    ),
    ("virsh qemu-agent-command web01 \"$J\"", "ask"),
];

/// Every program that runs a command on another machine has it judged as an ssh remote
/// command is: a command that only reads decides nothing; anything else checkpoints the
/// machines named, or asks when they cannot be known (a Proxmox id, a host pattern). An ssh
/// from there to a further machine is followed.
#[test]
fn a_command_run_on_another_machine_is_judged_whatever_runs_it() {
    assert_decisions(Dialect::Posix, REMOTE_EXEC);
}

/// (command, decision) for database and cache clients.
const DATABASE_CLIENTS: &[(&str, &str)] = &[
    // A statement that only reads decides nothing, however the server is named.
    ("mysql -h db01 -u app -p -e 'SHOW DATABASES'", "none"),
    ("mysql -hdb01 -uapp -psecret -e 'SELECT 1'", "none"),
    (
        "mysql --host=db01 --execute='SELECT count(*) FROM orders'",
        "none",
    ),
    ("mysql -u app -e 'SHOW PROCESSLIST' -h db01 -P 3307", "none"),
    ("mysql -h db01 -Bse 'SELECT now()'", "none"),
    (
        "mysql -h db01 app -e 'DESCRIBE orders; EXPLAIN SELECT * FROM orders'",
        "none",
    ),
    (
        "psql -h db01 -U app -c 'select count(*) from orders'",
        "none",
    ),
    ("psql -h db01 -p 5433 -c 'SHOW max_connections'", "none"),
    ("psql --host=db01 -c '\\dt'", "none"),
    ("psql -h db01 -c '\\l'", "none"),
    ("psql -h db01 -c '\\d+ orders'", "none"),
    ("psql 'host=db01 dbname=app user=app' -c 'select 1'", "none"),
    (
        "psql postgresql://app@db01:5432/app -c 'SELECT pg_size_pretty(pg_database_size(current_database()))'",
        "none",
    ),
    (
        "psql -d 'postgres://app@db01/app' -c 'EXPLAIN DELETE FROM t'",
        "none",
    ),
    ("psql -h db01 -l", "none"),
    ("PGHOST=db01 psql -c 'select version()'", "none"),
    ("psql -h db01 <<< 'SELECT 1'", "none"),
    ("echo 'SELECT 1' | psql -h db01", "none"),
    ("pg_dump -h db01 app > local.sql", "none"),
    ("pg_dumpall --host=db01 -f all.sql", "none"),
    ("mysqldump -h db01 app > dump.sql", "none"),
    ("pg_restore -l ./app.dump", "none"),
    ("pg_restore -h db01 ./app.dump > app.sql", "none"),
    ("sqlcmd -S db01 -Q 'SELECT @@VERSION'", "none"),
    (
        "sqlcmd -S tcp:db01,1433 -U sa -P pw -Q 'SELECT name FROM sys.databases'",
        "none",
    ),
    (
        "mongosh --host db01 --eval 'db.users.find().limit(5)'",
        "none",
    ),
    (
        "mongosh 'mongodb://db01:27017/app' --eval 'db.stats()'",
        "none",
    ),
    (
        "mongosh db01:27017/app --eval 'db.orders.countDocuments({})'",
        "none",
    ),
    ("redis-cli -h db01 INFO replication", "none"),
    ("redis-cli -h db01 -p 6380 -a pw GET session:1", "none"),
    ("redis-cli -h db01 KEYS 'user:*'", "none"),
    ("redis-cli -h db01 CLIENT LIST", "none"),
    ("redis-cli -h db01 --scan --pattern 'user:*'", "none"),
    ("redis-cli -u redis://db01:6379/0 DBSIZE", "none"),
    ("redis-cli -h db01 ping", "none"),
    ("cqlsh db01 -e 'SELECT * FROM ks.t LIMIT 5'", "none"),
    ("cqlsh db01 9042 -e 'DESCRIBE KEYSPACES'", "none"),
    // Anything else can change the server's data.
    ("mysql --host=db01 -e 'DROP TABLE x'", "checkpoint db01"),
    (
        "mysql -h db01 -e 'SELECT 1; TRUNCATE sessions'",
        "checkpoint db01",
    ),
    (
        "mysql -h db01 -e \"SELECT * FROM t INTO OUTFILE '/tmp/x'\"",
        "checkpoint db01",
    ),
    ("mysql -h db01 -e 'source /tmp/x.sql'", "checkpoint db01"),
    (
        "mysql -h 10.0.0.5 -u root -p app < ./schema.sql",
        "checkpoint 10.0.0.5",
    ),
    ("mysql -h db01", "checkpoint db01"),
    ("mysql -h db01 -e \"$SQL\"", "checkpoint db01"),
    ("psql -h db01 -c 'drop table sessions'", "checkpoint db01"),
    (
        "psql -h db01 -c 'UPDATE users SET admin = true'",
        "checkpoint db01",
    ),
    (
        "psql -h db01 -c 'SELECT purge_old_orders()'",
        "checkpoint db01",
    ),
    (
        "psql -h db01 -c 'SELECT pg_terminate_backend(42)'",
        "checkpoint db01",
    ),
    (
        "psql -h db01 -c 'SELECT * INTO backup FROM orders'",
        "checkpoint db01",
    ),
    (
        "psql -h db01 -c 'EXPLAIN ANALYZE DELETE FROM t'",
        "checkpoint db01",
    ),
    ("psql -h db01 -f ./migrations/0042.sql", "checkpoint db01"),
    ("psql -h db01 -c '\\i ./x.sql'", "checkpoint db01"),
    (
        "psql -h db01 <<< \"select 'drop table x' \\gexec\"",
        "checkpoint db01",
    ),
    (
        "mysql -h db01 -e 'select 1; \\! ssh web01 reboot'",
        "checkpoint db01,web01",
    ),
    ("mysql -e 'system ssh web01 reboot'", "checkpoint web01"),
    ("sqlcmd -S db01 -Q ':!! select'", "checkpoint db01"),
    ("psql -h db01", "checkpoint db01"),
    ("cat x.sql | psql -h db01", "checkpoint db01"),
    (
        "pg_restore -h db01 -U app -d app ./app.dump",
        "checkpoint db01",
    ),
    (
        "mysqldump -h db01 --delete-source-logs app > d.sql",
        "checkpoint db01",
    ),
    ("sqlcmd -S db01 -Q 'DELETE FROM t'", "checkpoint db01"),
    ("sqlcmd -S db01 -i ./fix.sql", "checkpoint db01"),
    (
        "mongosh 'mongodb://db01:27017/app' --eval 'db.sessions.drop()'",
        "checkpoint db01",
    ),
    (
        "mongosh --host db01 --eval 'db.users.updateMany({}, {$set: {a: 1}})'",
        "checkpoint db01",
    ),
    ("mongosh --host db01 app ./fix.js", "checkpoint db01"),
    (
        "mongosh --host db01 --eval 'print(`${db.dropDatabase()}`)'",
        "checkpoint db01",
    ),
    (
        "mongosh --host db01 --eval '(db.users.drop)()'",
        "checkpoint db01",
    ),
    (
        "mongosh --host db01 --eval \"db.users['drop']()\"",
        "checkpoint db01",
    ),
    (
        "mongosh --host db01 --eval 'db.users.find({a: 1}).count() == 2 || (x = 1)'",
        "checkpoint db01",
    ),
    (
        "mongosh --host db01 --eval 'db.users.find({name: \"a=b\"})'",
        "none",
    ),
    ("redis-cli -h db01 FLUSHALL", "checkpoint db01"),
    (
        "redis-cli -h db01 CONFIG SET maxmemory 1gb",
        "checkpoint db01",
    ),
    ("redis-cli -h db01 DEL session:1", "checkpoint db01"),
    ("redis-cli -h db01", "checkpoint db01"),
    ("redis-cli -h db01 --pipe < cmds.txt", "checkpoint db01"),
    ("cqlsh db01 -e 'TRUNCATE ks.t'", "checkpoint db01"),
    ("cqlsh db01 -f ./schema.cql", "checkpoint db01"),
    ("psql -h $DB -c 'drop table x'", "ask"),
    ("psql -h $DB -c 'select 1'", "none"),
    ("mysql --defaults-file=./prod.cnf -e 'DROP TABLE x'", "ask"),
    // This machine: no decision, whatever the statement.
    ("mysql -u root -e 'DROP DATABASE x'", "none"),
    ("mysql -h localhost -e 'DROP DATABASE x'", "none"),
    ("mysql -h 127.0.0.1 -P 3306 -p -e 'DROP DATABASE x'", "none"),
    ("psql -h /var/run/postgresql -c 'drop table x'", "none"),
    ("psql -c 'drop table x'", "none"),
    ("psql app", "none"),
    ("redis-cli FLUSHALL", "none"),
    ("redis-cli -p 6380 -a pw FLUSHALL", "none"),
    ("sqlcmd -S . -Q 'DROP TABLE t'", "none"),
    ("mongosh --eval 'db.dropDatabase()'", "none"),
    // psql's `\!` runs a command here.
    ("psql -c '\\! ssh web01 reboot'", "checkpoint web01"),
    ("psql -h db01 -c '\\! ls'", "none"),
];

/// A database or cache client talking to another machine has its statement judged; a
/// port, a password or a socket is never a target.
#[test]
fn a_database_client_on_another_machine_is_judged_by_its_statement() {
    assert_decisions(Dialect::Posix, DATABASE_CLIENTS);
}

/// A database client run on the machine it reaches (`ssh db01 'psql -c …'`) has its
/// statement judged as it is on this machine; a file it writes there, or psql's `\!`, is a
/// change of that machine.
#[test]
fn a_database_client_in_a_remote_command_is_judged_by_its_statement() {
    assert_decisions(
        Dialect::Posix,
        &[
            (
                "ssh db01 \"psql -U app -c 'select count(*) from users'\"",
                "none",
            ),
            (
                "ssh db01 'sudo -u postgres psql -c \"SHOW max_connections\"'",
                "none",
            ),
            ("ssh db01 'mysql -e \"SHOW PROCESSLIST\"'", "none"),
            ("ssh db01 'redis-cli INFO memory'", "none"),
            ("ssh db01 'pg_dump app' > app.sql", "none"),
            ("ssh db01 'echo \"select 1\" | psql app'", "none"),
            (
                "ssh db01 'sudo -u postgres psql -c \"drop table x\"'",
                "checkpoint db01",
            ),
            ("ssh db01 \"psql -c '\\\\! reboot'\"", "checkpoint db01"),
            (
                "ssh db01 \"psql -c 'select 1' -o /etc/motd\"",
                "checkpoint db01",
            ),
            (
                "ssh db01 'pg_dump -f /var/backups/app.sql app'",
                "checkpoint db01",
            ),
            (
                "ssh db01 'redis-cli --rdb /tmp/dump.rdb'",
                "checkpoint db01",
            ),
            ("ssh db01 'redis-cli FLUSHALL'", "checkpoint db01"),
            ("ssh db01 psql", "checkpoint db01"),
            ("mysqldump -h db01 --tab=/tmp app", "checkpoint db01"),
        ],
    );
}
mod powershell;
mod world;

/// Code handed to interpreters with the simulator's VMs protected: what the code starts or
/// connects to is checkpointed, what it builds at run time asks when the command could name
/// a machine, and read-only or local code decides nothing.
#[test]
fn code_handed_to_interpreters_meets_the_net() {
    let known = Inventory::of([
        "jp-ubuntu",
        "10.0.0.11",
        "win2019-1",
        "10.0.0.21",
        "db01",
        "10.0.0.31",
    ]);
    let cases: &[(&str, &str)] = &[
        (
            "python3 -c 'import socket; s=socket.create_connection((\"10.0.0.11\",6379)); s.sendall(b\"FLUSHALL\\r\\n\")'",
            "checkpoint 10.0.0.11",
        ),
        (
            "python3 -c 'import pymysql; pymysql.connect(host=\"db01\").cursor().execute(\"DROP DATABASE app\")'",
            "checkpoint db01",
        ),
        (
            "luajit -e 'os.execute(\"ssh jp-ubuntu sudo reboot\")'",
            "checkpoint jp-ubuntu",
        ),
        (
            "python3 -c 'import os; os.system(\"ssh jp-ubuntu uptime\")'",
            "none",
        ),
        ("python3 -c \"$(cat job.py)\" jp-ubuntu", "ask"),
        ("python3 -c \"$(cat job.py)\"", "none"),
        ("python3 -c 'import os; os.system(cmd)'", "none"),
        (
            "python3 -c 'import os; os.system(cmd)' deploy@host.example",
            "ask",
        ),
        (
            "python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], 22))' db01",
            "ask",
        ),
        ("python3 -c 'print(\"jp-ubuntu\")'", "ask"),
        (
            "node -e \"require('http').createServer((q, r) => r.end('ok')).listen(3000)\"",
            "none",
        ),
        (
            "python3 -c 'import urllib.request; print(urllib.request.urlopen(\"https://pypi.org/simple/\").status)'",
            "none",
        ),
        ("python3 -c 'import http.server'", "none"),
        (
            "ruby -rsocket -e 'TCPSocket.new(\"10.0.0.21\", 3389)'",
            "checkpoint 10.0.0.21",
        ),
        ("awk '$1 == \"db01\" {print $2}' hosts.txt", "none"),
    ];
    let mut wrong = Vec::new();
    for (command, want) in cases {
        let got = match verdict_with(command, Dialect::Posix, &known) {
            Verdict::Local | Verdict::ReadOnly => String::from("none"),
            Verdict::Unknown { .. } => String::from("ask"),
            Verdict::Mutating(targets) => format!(
                "checkpoint {}",
                targets
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        if got != *want {
            wrong.push(format!("{command}: want {want}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
