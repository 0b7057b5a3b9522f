//! Options read as each program reads them, strict read-only judgments of remote commands, and code in arguments.

use super::*;

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
