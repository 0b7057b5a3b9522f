//! Remote programs hidden behind other names, tools and variables, and local commands that only name one.

use super::*;

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
