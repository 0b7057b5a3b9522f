//! Issue 33's world: every spelling of an address, raw sockets and connection strings, a
//! command that changes where a later part of it goes, and work handed to something that
//! runs it later. The machines are those of the simulator's lab.

use super::decision_in;
use crate::inventory::Inventory;
use crate::shell::Dialect;

fn lab() -> Inventory {
    Inventory::of([
        "jp-ubuntu",
        "10.0.0.11",
        "win2019-1",
        "10.0.0.21",
        "db01",
        "10.0.0.31",
        "web",
        "10.0.0.41",
        "10.0.0.42",
    ])
}

#[track_caller]
fn expect(cases: &[(&str, &str)]) {
    let known = lab();
    for (command, want) in cases {
        assert_eq!(
            decision_in(command, Dialect::Posix, &known),
            *want,
            "{command}"
        );
    }
}

#[test]
fn a_database_host_is_an_address_in_any_spelling_and_a_port_only_after_a_comma() {
    expect(&[
        (
            "mysql -h 167772191 -e 'DROP DATABASE app'",
            "checkpoint 167772191",
        ),
        (
            "mysql --host=0xa00001f -e 'DROP DATABASE app'",
            "checkpoint 0xa00001f",
        ),
        ("psql -h 10.31 -c 'DROP TABLE t'", "checkpoint 10.31"),
        ("redis-cli -h 167772191 FLUSHALL", "checkpoint 167772191"),
        (
            "sqlcmd -S 167772191,1433 -Q 'DROP DATABASE app'",
            "checkpoint 167772191",
        ),
        (
            "sqlcmd -S tcp:db01,1433 -Q 'DROP DATABASE app'",
            "checkpoint db01",
        ),
        ("mysql -h 167772191 -e 'SELECT 1'", "none"),
        // This machine in any spelling is no VM.
        ("mysql -h 2130706433 -e 'DROP DATABASE app'", "none"),
        ("psql -h 127.1 -c 'DROP TABLE t'", "none"),
        ("mysql -h '[::1]' -e 'DROP DATABASE app'", "none"),
        (
            "psql 'postgresql://[::ffff:127.0.0.1]/app' -c 'DROP TABLE t'",
            "none",
        ),
    ]);
}

#[test]
fn a_raw_socket_to_a_protected_machine_is_a_change_of_it() {
    expect(&[
        ("socat - TCP:jp-ubuntu:6379", "checkpoint jp-ubuntu"),
        ("socat - TCP4:10.0.0.31:6379", "checkpoint 10.0.0.31"),
        ("socat STDIO OPENSSL:db01:443,verify=0", "checkpoint db01"),
        (
            "socat - 'TCP6:[::ffff:10.0.0.31]:6379'",
            "checkpoint ::ffff:10.0.0.31",
        ),
        ("socat - SOCKS4:proxy.example:db01:6379", "checkpoint db01"),
        ("echo FLUSHALL | nc db01 6379", "checkpoint db01"),
        ("nc -w 3 0xa00001f 6379", "checkpoint 0xa00001f"),
        ("ncat --ssl db01 443", "checkpoint db01"),
        ("netcat db01 6379 < cmds.txt", "checkpoint db01"),
        ("telnet db01 6379", "checkpoint db01"),
        // A probe or a listener connects nowhere; a machine rewind does not protect is left
        // to the net, which knows nothing of it.
        ("nc -z db01 22", "none"),
        ("nc -zv db01 20-25", "none"),
        ("nc -l 8080", "none"),
        ("socat TCP-LISTEN:8080,fork -", "none"),
        ("nc example.com 80", "none"),
        ("socat - TCP:example.com:80", "none"),
        // A ProxyCommand's relay only carries ssh's own connection.
        (
            "ssh -o 'ProxyCommand=nc 10.0.0.31 22' jp-ubuntu uptime",
            "none",
        ),
        (
            "ssh -o 'ProxyCommand=socat - TCP:10.0.0.31:22' jp-ubuntu sudo reboot",
            "checkpoint 10.0.0.31",
        ),
    ]);
}

#[test]
fn connection_strings_name_their_server_to_the_net() {
    expect(&[
        ("java -jar migrate.jar jdbc:mysql://db01:3306/app", "ask"),
        (
            "flyway -url=jdbc:sqlserver://db01:1433;databaseName=app migrate",
            "ask",
        ),
        (
            "liquibase --url=jdbc:oracle:thin:@//db01:1521/svc update",
            "ask",
        ),
        (
            "dotnet run -- 'Server=db01;Database=app;Trusted_Connection=True'",
            "ask",
        ),
        (
            "dotnet run -- 'Data Source=tcp:10.0.0.31,1433;Initial Catalog=app'",
            "ask",
        ),
        ("dotnet run -- 'Server=build01;Database=app'", "none"),
    ]);
    let known = lab();
    assert_eq!(
        decision_in(
            "Invoke-Sqlcmd -ConnectionString 'Server=db01;Database=app' -Query 'DROP TABLE t'",
            Dialect::PowerShell,
            &known
        ),
        "ask"
    );
}

#[test]
fn a_command_that_changes_where_a_name_goes_asks_for_what_it_then_changes_by_name() {
    expect(&[
        (
            "printf 'Host jp-ubuntu\\n  HostName 10.0.0.31\\n' > /tmp/c && ssh -F /tmp/c jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "printf 'Host jp-ubuntu\\n  HostName 10.0.0.31\\n' >> ~/.ssh/config && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "echo '10.0.0.31 jp-ubuntu' >> /etc/hosts && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "echo '10.0.0.31 jp-ubuntu' | sudo tee -a /etc/hosts; ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "sudo cp hosts.new /etc/hosts && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "sudo install -m 644 hosts /etc/ && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "dd if=hosts of=/etc/hosts && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "sudo sed -i '$a 10.0.0.31 jp-ubuntu' /etc/hosts; ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "cp lab.conf ~/.ssh/config.d/ && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "mv /tmp/c /etc/ssh/ssh_config && ssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "cat >> ~/.ssh/config <<EOF\nHost jp-ubuntu\n  HostName 10.0.0.31\nEOF\nssh jp-ubuntu sudo reboot",
            "ask",
        ),
        (
            "echo 'nameserver 10.9.9.9' > /etc/resolv.conf; mysql -h db01 -e 'DROP DATABASE app'",
            "ask",
        ),
        ("HOSTALIASES=/tmp/aliases ssh jp-ubuntu sudo reboot", "ask"),
        ("export HOSTALIASES=/tmp/aliases; telnet db01", "ask"),
        (
            "ssh -o \"HostName=${TARGET:-10.0.0.31}\" jp-ubuntu sudo reboot",
            "ask",
        ),
        ("ssh -F \"$CFG\" jp-ubuntu sudo reboot", "ask"),
        (
            "GIT_SSH_COMMAND='ssh -o HostName=10.0.0.31' git push build:repo main",
            "ask",
        ),
        (
            "git -c core.sshCommand='ssh -o HostName=10.0.0.31' push build:repo main",
            "ask",
        ),
        (
            "git config core.sshCommand 'ssh -F /tmp/c' && git push build:repo main",
            "ask",
        ),
    ]);
}

#[test]
fn a_windows_hosts_file_moves_names_too_but_another_machines_does_not() {
    let known = lab();
    for (command, want) in [
        (
            "Add-Content -Path C:\\Windows\\System32\\drivers\\etc\\hosts -Value '10.0.0.31 jp-ubuntu'; Restart-Computer -ComputerName jp-ubuntu",
            "ask",
        ),
        (
            "Add-Content -Path \\\\win2019-1\\c$\\Windows\\System32\\drivers\\etc\\hosts -Value '10.0.0.9 cache'",
            "checkpoint win2019-1",
        ),
        (
            "Restart-Computer -ComputerName jp-ubuntu",
            "checkpoint jp-ubuntu",
        ),
    ] {
        assert_eq!(
            decision_in(command, Dialect::PowerShell, &known),
            want,
            "{command}"
        );
    }
}

#[test]
fn a_name_the_command_leaves_alone_is_judged_as_it_is() {
    expect(&[
        // A variable later used as a host is judged against its written value.
        ("export H=db01; ssh $H sudo reboot", "checkpoint db01"),
        ("H=db01; H=web; ssh $H sudo reboot", "ask"),
        (
            "ssh jp-ubuntu 'ssh 10.0.0.31 sudo reboot'",
            "checkpoint 10.0.0.31,jp-ubuntu",
        ),
        // An address is no name; a write after the change, a read, and files that do not
        // move names change nothing.
        (
            "echo '10.0.0.31 jp-ubuntu' >> /etc/hosts && ssh 10.0.0.11 sudo reboot",
            "checkpoint 10.0.0.11",
        ),
        (
            "ssh jp-ubuntu sudo reboot; echo '10.0.0.31 jp-ubuntu' >> /etc/hosts",
            "checkpoint jp-ubuntu",
        ),
        (
            "echo '10.0.0.31 jp-ubuntu' >> /etc/hosts && ssh jp-ubuntu uptime",
            "none",
        ),
        (
            "ssh-keyscan jp-ubuntu >> ~/.ssh/known_hosts && ssh jp-ubuntu sudo reboot",
            "checkpoint jp-ubuntu",
        ),
        (
            "cp /etc/hosts /tmp/hosts && ssh jp-ubuntu sudo reboot",
            "checkpoint jp-ubuntu",
        ),
        (
            "printf 'x' > /tmp/c && ssh -F /tmp/other jp-ubuntu sudo reboot",
            "checkpoint jp-ubuntu",
        ),
        (
            "GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy' git push build:repo main",
            "none",
        ),
        ("cat /etc/hosts", "none"),
        ("ssh -G jp-ubuntu", "none"),
        ("ssh jp-ubuntu uptime", "none"),
    ]);
}

#[test]
fn work_handed_on_to_run_later_is_judged_now() {
    expect(&[
        (
            "tmux set-hook -g client-attached 'run-shell \"ssh db01 sudo reboot\"'",
            "checkpoint db01",
        ),
        (
            "tmux set-hook -g after-new-window 'send-keys \"ssh db01 sudo reboot\" Enter'",
            "checkpoint db01",
        ),
        (
            "tmux bind-key R run-shell 'ssh db01 sudo reboot'",
            "checkpoint db01",
        ),
        (
            "tmux bind -n F5 new-window 'ssh db01 sudo reboot'",
            "checkpoint db01",
        ),
        (
            "tmux set -g default-command 'ssh db01 sudo reboot'",
            "checkpoint db01",
        ),
        ("tmux new -d 'ssh db01 sudo reboot'", "checkpoint db01"),
        (
            "tmux send-keys -t x 'ssh db01 sudo reboot' Enter",
            "checkpoint db01",
        ),
        (
            "screen -S s -X exec ssh db01 sudo reboot",
            "checkpoint db01",
        ),
        (
            "screen -S s -X exec .!. ssh db01 sudo reboot",
            "checkpoint db01",
        ),
        (
            "screen -X stuff 'ssh db01 sudo reboot\\n'",
            "checkpoint db01",
        ),
        (
            "echo '@reboot ssh db01 sudo reboot' | crontab -",
            "checkpoint db01",
        ),
        (
            "crontab - <<EOF\nMAILTO=ops\n# nightly\n0 3 * * * ssh db01 'sudo systemctl restart app' >/dev/null 2>&1\nEOF",
            "checkpoint db01",
        ),
        (
            "echo '*/5 * * * * ssh db01 sudo reboot' > /tmp/cr && crontab /tmp/cr",
            "checkpoint db01",
        ),
        ("crontab <(echo '* * * * * ssh db01 sudo reboot')", "ask"),
        (
            "(crontab -l; echo '0 3 * * * ssh db01 sudo reboot') | crontab -",
            "ask",
        ),
        (
            "echo '0 3 * * * root ssh db01 sudo reboot' | sudo tee /etc/cron.d/nightly",
            "checkpoint db01",
        ),
        (
            "echo 'ssh db01 sudo reboot' > /etc/cron.daily/restart",
            "checkpoint db01",
        ),
        (
            "echo 'ssh db01 sudo reboot' > /tmp/job && at -f /tmp/job now",
            "checkpoint db01",
        ),
        ("at now <<EOF\nssh db01 sudo reboot\nEOF", "checkpoint db01"),
        ("vagrant ssh -c 'ssh db01 sudo reboot'", "checkpoint db01"),
        (
            "vagrant ssh web1 --command='mysql -h 10.0.0.31 -e \"DROP DATABASE app\"'",
            "checkpoint 10.0.0.31",
        ),
        ("vagrant ssh db01 -c 'sudo reboot'", "ask"),
        ("systemd-run ssh db01 sudo reboot", "checkpoint db01"),
        ("nohup ssh db01 sudo reboot &", "checkpoint db01"),
    ]);
}

#[test]
fn looking_at_what_runs_later_stays_quiet() {
    expect(&[
        ("crontab -l", "none"),
        ("crontab -u root -l", "none"),
        ("crontab -e", "none"),
        ("crontab -r", "none"),
        // A table on disk is, like a script on disk, not read.
        ("crontab jobs.txt", "none"),
        ("crontab -l | grep -v backup | crontab -", "none"),
        (
            "echo '0 3 * * * /usr/local/bin/backup.sh' | crontab -",
            "none",
        ),
        ("echo '0 3 * * * ssh db01 uptime' | crontab -", "none"),
        (
            "echo '0 3 * * * root /usr/bin/backup' > /etc/cron.d/backup",
            "none",
        ),
        ("cp job /etc/cron.d/ && ssh db01 uptime", "none"),
        ("cat /etc/crontab", "none"),
        ("tmux ls", "none"),
        ("tmux set -g mouse on", "none"),
        ("tmux set-hook -gu client-attached", "none"),
        ("tmux bind r source-file ~/.tmux.conf", "none"),
        (
            "tmux set-hook -g pane-died 'run-shell \"ssh db01 uptime\"'",
            "none",
        ),
        ("screen -ls", "none"),
        ("screen -S s -X exec ssh db01 uptime", "none"),
        ("vagrant ssh -c uptime", "none"),
        ("vagrant ssh -c 'sudo reboot'", "none"),
        ("vagrant up", "none"),
        ("at -l", "none"),
    ]);
}
