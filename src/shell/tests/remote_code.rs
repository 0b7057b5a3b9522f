//! Whatever runs on another machine is judged as code: variables that run code, port forwards, commands relayed further, database clients and interpreters.

use super::*;

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
