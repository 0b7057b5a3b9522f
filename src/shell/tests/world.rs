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
