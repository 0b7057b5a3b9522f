//! The secret suite: secrets in every shape an agent writes them, through the real `rewind
//! hook` in each host's dialect, against the simulator (so a call that can change a VM is
//! checkpointed and recorded), with the trail copied to a syslog collector. No secret may
//! reach the answer, the trail or the collector: the trail keeps a call's input only as a
//! keyed digest, and the answer quotes only the words that made its decision.

use std::fmt::Write as _;
use std::os::unix::net::UnixDatagram;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::TestEnv;

/// Commands run on a VM, each with its secret written `SECRET`: sent as an MCP `exec` on the
/// protected VM, as `ssh jp-ubuntu '…'`, and (every third) as `ssh $H '…'`, whose host is
/// only known when it runs.
const REMOTE: &[&str] = &[
    "mysql -uroot -pSECRET -e 'drop database app'",
    "mysql -u root --password=SECRET app",
    "mysql -u root --password SECRET app",
    "mysqladmin -u root password SECRET",
    "mysql -e \"SET PASSWORD FOR root = PASSWORD('SECRET')\"",
    "mysql -e \"CREATE USER a IDENTIFIED BY 'SECRET'\"",
    "mysql -e \"ALTER USER a IDENTIFIED WITH mysql_native_password BY 'SECRET'\"",
    "psql -c \"ALTER ROLE app WITH PASSWORD 'SECRET'\"",
    "PGPASSWORD=SECRET psql -h localhost -c 'drop table t'",
    "sqlcmd -S . -U sa -P SECRET -Q 'DROP DATABASE app'",
    "sqlcmd -Q \"ALTER LOGIN sa WITH PASSWORD = 'SECRET'\"",
    "sqlplus system/SECRET@orcl @drop.sql",
    "redis-cli -a SECRET FLUSHALL",
    "redis-cli CONFIG SET requirepass SECRET",
    "redis-cli AUTH SECRET",
    "rabbitmqctl add_user admin SECRET",
    "rabbitmqctl change_password admin SECRET",
    "cqlsh -u cassandra -p SECRET -e 'DROP KEYSPACE k'",
    "mongosh -u root -p SECRET --eval 'db.dropDatabase()'",
    "mongosh --eval 'db.changeUserPassword(\"root\", \"SECRET\")'",
    "mongosh 'mongodb://root:SECRET@localhost/admin' --eval 'db.dropDatabase()'",
    "7z a -pSECRET backup.7z /srv",
    "zip -P SECRET backup.zip /srv",
    "openssl enc -aes256 -k SECRET -in a -out b",
    "openssl pkcs12 -export -passout pass:SECRET -out c.p12",
    "aws configure set aws_secret_access_key SECRET",
    "AWS_SECRET_ACCESS_KEY=SECRET aws s3 rm s3://b --recursive",
    "mc alias set s3 https://s3.local minio SECRET",
    "snmpset -v3 -u u -l authPriv -a SHA -A SECRET -x AES -X SECRET localhost 1.3 s v",
    "ldappasswd -x -D cn=admin -w SECRET -s SECRET uid=x",
    "ldapmodify -x -D cn=admin -w SECRET -f change.ldif",
    "echo SECRET | sudo -S reboot",
    "sudo -S reboot <<< SECRET",
    "echo 'root:SECRET' | chpasswd",
    "echo SECRET | passwd --stdin root",
    "printf 'SECRET\\nSECRET\\n' | smbpasswd -s -a u",
    "smbpasswd -a u <<< $'SECRET\\nSECRET'",
    "htpasswd -b /etc/htpasswd admin SECRET",
    "echo 'db01:5432:*:postgres:SECRET' >> ~/.pgpass",
    "echo 'machine api.example login u password SECRET' > ~/.netrc",
    "cat > /etc/app.env <<EOF\nDB_PASSWORD=SECRET\nEOF",
    "cat > /etc/app.json <<'EOF'\n{\"DB_PASSWORD\": \"SECRET\"}\nEOF",
    "export API_TOKEN=SECRET; ./deploy.sh",
    "DB_PASS=SECRET ./migrate.sh",
    "curl -u admin:SECRET -X DELETE http://localhost:8080/api/app",
    "curl -H 'Authorization: Bearer SECRET' -X POST http://localhost/api/restart",
    "curl -H 'authorization:Bearer SECRET' -X POST http://localhost/api/restart",
    "curl -H 'X-Api-Key: SECRET' -X POST http://localhost/api/restart",
    "curl -E client.pem:SECRET -X POST https://localhost/api",
    "curl -X POST 'https://admin:SECRET@localhost/api'",
    "curl -X POST 'https://admin:SE/CRET@localhost/api'",
    "curl --oauth2-bearer SECRET -X DELETE https://localhost/x",
    "curl -b 'session=SECRET' -X POST https://localhost/x",
    "http -a admin:SECRET POST http://localhost/api",
    "wget --password=SECRET --post-data x http://localhost/api",
    "docker login -u admin -p SECRET registry.local",
    "echo SECRET | docker login -u admin --password-stdin registry.local",
    "helm repo add r https://charts --username u --password SECRET",
    "kubectl create secret generic s --from-literal=password=SECRET",
    "vault login SECRET",
    "vault kv put secret/app password=SECRET",
    "git clone https://user:SECRET@git.local/repo.git",
    "git remote set-url origin https://x-access-token:SECRET@github.com/o/r",
    "useradd -p SECRET bob",
    "usermod -p SECRET bob",
    "net user admin SECRET /add",
    "ipmitool -I lanplus -H bmc -U admin -P SECRET power reset",
    "sshpass -p SECRET ssh db01 reboot",
    "rsync -a /srv rsync://u:SECRET@backup/srv",
    "lftp -u admin,SECRET ftp://backup -e 'rm x'",
    "smbclient //fs/share -U admin%SECRET -c 'del x'",
    "java -Djavax.net.ssl.keyStorePassword=SECRET -jar app.jar",
    "./configure --db-pass SECRET && make install",
    "terraform apply -var db_password=SECRET -auto-approve",
    "ansible-playbook -e 'ansible_become_password=SECRET' site.yml",
    "tool --client-secret SECRET --apply",
    "deploy --pin SECRET --otp SECRET",
    "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n-----END OPENSSH PRIVATE KEY-----' > ~/.ssh/id_ed25519",
];

/// Commands run here that reach a VM themselves (or a machine by a name that is not one),
/// each with its secret written `SECRET`.
const LOCAL: &[&str] = &[
    "mysql -h jp-ubuntu -uroot -pSECRET -e 'drop database app'",
    "mysql -h jp-ubuntu --password=SECRET -e 'drop table t'",
    "psql 'postgresql://app:SECRET@jp-ubuntu/app' -c 'drop table t'",
    "psql postgres://app:SECRET@jp-ubuntu:5432/app -c 'truncate t'",
    "PGPASSWORD=SECRET psql -h jp-ubuntu -c 'drop table t'",
    "redis-cli -h jp-ubuntu -a SECRET FLUSHALL",
    "redis-cli -u redis://:SECRET@jp-ubuntu:6379 FLUSHALL",
    "mongosh 'mongodb://root:SECRET@jp-ubuntu/admin' --eval 'db.dropDatabase()'",
    "curl -u admin:SECRET -X DELETE http://jp-ubuntu:8080/api/app",
    "curl -X POST 'https://admin:SECRET@jp-ubuntu/api'",
    "curl -X POST 'https://admin:SE/CRET@jp-ubuntu/api'",
    "curl -X POST https://admin:SECRET@unknown-vm-7/api",
    "curl -H 'authorization:Bearer SECRET' -X POST http://jp-ubuntu/api/restart",
    "curl -H 'Authorization: Basic SECRET' -X DELETE http://jp-ubuntu/api",
    "curl -E client.pem:SECRET -X POST https://jp-ubuntu/api",
    "http -a admin:SECRET POST http://jp-ubuntu/api",
    "http POST http://jp-ubuntu/api Authorization:'Bearer SECRET'",
    "sshpass -p SECRET ssh jp-ubuntu reboot",
    "SSHPASS=SECRET sshpass -e ssh jp-ubuntu reboot",
    "ssh admin:SECRET@jp-ubuntu sudo reboot",
    "ssh admin:SECRET@unknownvm sudo reboot",
    "ssh jp-ubuntu 'sudo -S reboot' <<< SECRET",
    "echo SECRET | ssh jp-ubuntu sudo -S reboot",
    "ipmitool -H jp-ubuntu -U admin -P SECRET power reset",
    "sqlcmd -S jp-ubuntu -U sa -P SECRET -Q 'DROP DATABASE app'",
    "sqlcmd -S jp-ubuntu -Q \"ALTER LOGIN sa WITH PASSWORD = 'SECRET'\"",
    "mysql -h jp-ubuntu -e \"CREATE USER a IDENTIFIED BY 'SECRET'\"",
    "xfreerdp /v:jp-ubuntu /u:admin /p:SECRET",
    "winrs -r:jp-ubuntu -u:admin -p:SECRET shutdown /r",
    "psexec \\\\jp-ubuntu -u admin -p SECRET shutdown /r",
    "rsync -a /srv rsync://u:SECRET@jp-ubuntu/srv",
    "smbclient //jp-ubuntu/share -U admin%SECRET -c 'del x'",
    "git push https://user:SECRET@jp-ubuntu/repo.git main",
    "ansible jp-ubuntu -m shell -a 'reboot' -e ansible_password=SECRET",
    "ansible-playbook -i jp-ubuntu, -e 'ansible_password=SECRET' site.yml",
    "ssh jp-ubuntu \"mysql -pSECRET -e 'drop database app'\"",
    "ssh $H \"mysql -uroot -pSECRET -e 'drop database app'\"",
    "pdsh -w web[01-03] \"mysql -pSECRET -e 'drop database app'\"",
    "ssh web$N 'echo SECRET | passwd --stdin root'",
    "pwsh -c 'Invoke-Command -ComputerName jp-ubuntu { net user admin SECRET }'",
    "pwsh -c '$p = ConvertTo-SecureString -AsPlainText \"SECRET\" -Force; Restart-Computer -ComputerName jp-ubuntu -Credential (New-Object PSCredential(\"admin\", $p))'",
    "pwsh -c 'Restart-Computer -ComputerName jp-ubuntu -Credential (New-Object System.Management.Automation.PSCredential(\"u\", (ConvertTo-SecureString \"SECRET\" -AsPlainText -Force)))'",
    "pwsh -c '$env:DB_PASSWORD = \"SECRET\"; Invoke-Command -ComputerName jp-ubuntu { Restart-Service app }'",
    "curl -X DELETE \"http://jp-ubuntu/api?token=SECRET\"",
    "curl -X DELETE \"http://jp-ubuntu/api?api_key=SECRET&x=1\"",
    "kubectl --token SECRET --server https://jp-ubuntu:6443 delete pod x",
    "docker -H ssh://admin:SECRET@jp-ubuntu rm -f app",
    "DOCKER_HOST=tcp://jp-ubuntu:2376 docker --tlsverify login -u a -p SECRET",
    "nc jp-ubuntu 6379 <<< 'AUTH SECRET'",
    "vault login -address=https://jp-ubuntu:8200 SECRET",
];

/// The protected VM's `exec` tool's input with an array or a nested object, each holding
/// `SECRET`.
fn structured() -> Vec<Value> {
    let argv = |command: &str, args: &[&str]| json!({"host": "jp-ubuntu", "command": command, "args": args});
    vec![
        argv("uptime", &["-p", "SECRET"]),
        argv("mysql", &["-uroot", "-pSECRET", "-e", "drop database app"]),
        argv("mysql", &["--password", "SECRET", "app"]),
        argv("deploy", &["--token=SECRET"]),
        argv("deploy", &["--api-key", "SECRET"]),
        argv("curl", &["-u", "admin:SECRET", "-X", "DELETE", "http://x"]),
        argv("curl", &["-E", "cert.pem:SECRET", "https://x"]),
        argv("curl", &["-H", "authorization:Bearer SECRET", "https://x"]),
        argv("curl", &["-X", "POST", "https://admin:SE/CRET@x/api"]),
        argv("http", &["-a", "admin:SECRET", "POST", "http://x"]),
        argv("zip", &["-P", "SECRET", "x.zip", "f"]),
        argv("7z", &["a", "-pSECRET", "x.7z"]),
        argv("snmpset", &["-A", "SECRET", "-X", "SECRET", "h"]),
        argv("ldappasswd", &["-w", "SECRET", "-s", "SECRET", "uid=x"]),
        argv("redis-cli", &["-a", "SECRET", "FLUSHALL"]),
        argv(
            "sqlcmd",
            &["-U", "sa", "-P", "SECRET", "-Q", "drop database a"],
        ),
        argv("openssl", &["enc", "-k", "SECRET"]),
        argv("tool", &["--client-secret", "SECRET"]),
        json!({"host": "jp-ubuntu", "command": "deploy", "env": {"DB_PASSWORD": "SECRET"}}),
        json!({"host": "jp-ubuntu", "command": "deploy", "env": [{"name": "API_TOKEN", "value": "SECRET"}]}),
        json!({"host": "jp-ubuntu", "command": "deploy", "headers": [["Authorization", "Bearer SECRET"]]}),
        json!({"host": "jp-ubuntu", "command": "deploy", "options": {"auth": {"user": "a", "pass": "SECRET"}}}),
        json!({"host": "jp-ubuntu", "command": "deploy", "options": {"args": ["-p", "SECRET"]}}),
        json!({"host": "jp-ubuntu", "command": "deploy", "steps": [{"run": "mysql -pSECRET"}, {"run": "echo ok"}]}),
        json!({"host": "jp-ubuntu", "command": "deploy", "connection": "Server=x;User Id=sa;Password=SECRET;"}),
        json!({"host": "jp-ubuntu", "command": "deploy", "url": "postgresql://app:SECRET@db/app"}),
        json!({"host": "jp-ubuntu", "command": "deploy", "note": "the password is SECRET"}),
        json!({"host": "jp-ubuntu", "command": "deploy", "stdin": "SECRET\nSECRET\n"}),
        json!({"host": "admin:SECRET@jp-ubuntu", "command": "reboot"}),
        json!({"host": "ssh://admin:SECRET@jp-ubuntu:22/", "command": "reboot"}),
        json!({"host": "https://admin:SE/CRET@jp-ubuntu/api", "command": "reboot"}),
        json!({"host": "admin:SECRET@unknownvm", "command": "reboot"}),
        json!({"host": "jp-ubuntu", "command": "deploy", "args": ["-p", "SECRET"], "nested": {"deeper": {"args": ["--password", "SECRET"]}}}),
    ]
}

/// The hook's stdin for a shell command or an MCP `exec` in `host`'s dialect.
fn payload(host: &str, tool: Option<&Value>, command: &str, id: &str) -> Value {
    let (claude_tool, input) = match tool {
        Some(input) => ("mcp__ssh__exec", input.clone()),
        None => ("Bash", json!({ "command": command })),
    };
    match host {
        "codex" => json!({"session_id": "s", "turn_id": "t", "hook_event_name": "PreToolUse",
            "tool_name": claude_tool, "tool_input": input, "tool_use_id": id}),
        "gemini" => json!({"session_id": "s", "transcript_path": "/t", "timestamp": "2026",
            "hook_event_name": "BeforeTool",
            "tool_name": if tool.is_some() { "mcp_ssh_exec" } else { "run_shell_command" },
            "tool_input": input}),
        "copilot" => json!({"sessionId": "s", "timestamp": 1,
            "toolName": if tool.is_some() { "ssh-exec" } else { "bash" }, "toolArgs": input}),
        "cursor" if tool.is_none() => json!({"conversation_id": "c", "generation_id": id,
            "cursor_version": "1.7.2", "hook_event_name": "beforeShellExecution", "command": command}),
        "cursor" => json!({"conversation_id": "c", "generation_id": id, "cursor_version": "1.7.2",
            "hook_event_name": "preToolUse", "tool_name": "MCP:exec", "tool_input": input, "tool_use_id": id}),
        _ => {
            json!({"session_id": "s", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": claude_tool, "tool_input": input, "tool_use_id": id,
            "mcp_server": {"name": "ssh", "source": "project"}})
        }
    }
}

/// `text` single-quoted for a POSIX shell.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// One call of the suite: its secret, what it is, and the hook's stdin.
struct Case {
    secret: String,
    what: String,
    host: &'static str,
    stdin: Value,
}

/// Every case, each shape with its own secret (so a leak names its shape).
fn cases() -> (Vec<Case>, usize) {
    const HOSTS: [&str; 5] = ["claude-code", "codex", "gemini", "copilot", "cursor"];
    let mut cases = Vec::new();
    let mut shapes = 0;
    let mut add = |n: &mut usize, what: String, build: &dyn Fn(&str, &str, &str) -> Value| {
        *n += 1;
        let secret = format!("Qz{n}vK8wsecret");
        // Every shape through Claude Code, and every other one through another host in turn.
        let hosts: &[&'static str] = if (*n).is_multiple_of(2) {
            &[HOSTS[0], HOSTS[1 + (*n / 2) % 4]]
        } else {
            &[HOSTS[0]]
        };
        for &host in hosts {
            let id = format!("toolu_secret_{n}_{host}");
            cases.push(Case {
                secret: secret.clone(),
                what: what.replace("SECRET", &secret),
                host,
                stdin: build(host, &secret, &id),
            });
        }
    };
    for (i, remote) in REMOTE.iter().enumerate() {
        add(
            &mut shapes,
            format!("exec on jp-ubuntu: {remote}"),
            &|host, secret, id| {
                let input =
                    json!({"host": "jp-ubuntu", "command": remote.replace("SECRET", secret)});
                payload(host, Some(&input), "", id)
            },
        );
        let over = if i % 3 == 0 { "$H" } else { "jp-ubuntu" };
        add(
            &mut shapes,
            format!("ssh {over} {remote}"),
            &|host, secret, id| {
                let command = format!("ssh {over} {}", quoted(&remote.replace("SECRET", secret)));
                payload(host, None, &command, id)
            },
        );
    }
    for local in LOCAL {
        add(&mut shapes, (*local).to_owned(), &|host, secret, id| {
            payload(host, None, &local.replace("SECRET", secret), id)
        });
    }
    for input in structured() {
        add(&mut shapes, input.to_string(), &|host, secret, id| {
            let input: Value =
                serde_json::from_str(&input.to_string().replace("SECRET", secret)).expect("JSON");
            payload(host, Some(&input), "", id)
        });
    }
    (cases, shapes)
}

/// Every case through the real hook; no secret in any answer, the trail or the collector.
#[test]
fn no_secret_of_any_shape_reaches_an_answer_the_trail_or_syslog() {
    let env = TestEnv::start();
    let socket = env.path("syslog.sock");
    let collector = UnixDatagram::bind(&socket).expect("collector");
    let received = Arc::new(Mutex::new(String::new()));
    let copies = Arc::clone(&received);
    std::thread::spawn(move || {
        let mut buffer = vec![0; 256 * 1024];
        while let Ok(n) = collector.recv(&mut buffer) {
            if let Ok(mut copies) = copies.lock() {
                copies.push_str(&String::from_utf8_lossy(&buffer[..n]));
                copies.push('\n');
            }
        }
    });
    let config = std::fs::read_to_string(&env.config).expect("config");
    std::fs::write(
        &env.config,
        format!(
            "{config}\n[audit]\nsyslog = \"unix:{}\"\n",
            socket.display()
        ),
    )
    .expect("config");

    let (cases, shapes) = cases();
    assert!(shapes >= 150, "{shapes} shapes");
    let mut leaks = String::new();
    let mut decisions = std::collections::BTreeMap::<String, usize>::new();
    for case in &cases {
        let run = env.run(
            &["hook", "--host", case.host],
            case.stdin.to_string().as_bytes(),
        );
        assert!(matches!(run.code, 0 | 2), "{}: {run:?}", case.what);
        if run.stdout.contains(&case.secret) || run.stderr.contains(&case.secret) {
            let _ = writeln!(
                leaks,
                "answer ({}): {}\n  {}",
                case.host, case.what, run.stdout
            );
        }
        let decision = ["\"ask\"", "\"deny\"", "checkpoint confirmed"]
            .into_iter()
            .find(|word| run.stdout.contains(word))
            .unwrap_or("none");
        *decisions.entry(decision.to_owned()).or_default() += 1;
    }
    let trail = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("trail");
    crate::support::eventually("the collector has every copy", || {
        received.lock().map_or(0, |r| r.lines().count()) >= trail.lines().count()
    });
    let copies = received.lock().expect("copies").clone();
    for case in &cases {
        for (place, text) in [("trail", &trail), ("syslog", &copies)] {
            if let Some(line) = text.lines().find(|l| l.contains(&case.secret)) {
                let _ = writeln!(leaks, "{place} ({}): {}\n  {line}", case.host, case.what);
            }
        }
    }
    assert!(leaks.is_empty(), "secrets leaked:\n{leaks}");
    assert_eq!(trail.lines().count(), cases.len(), "one record per call");
    // The suite reaches the guard: most calls are checkpointed or asked about.
    assert!(
        decisions.get("checkpoint confirmed").copied().unwrap_or(0) > 100
            && decisions.get("\"ask\"").copied().unwrap_or(0) > 20,
        "{decisions:?}"
    );
}
