//! `[audit] syslog` against a real rsyslog (the Debian package): started by the test on a
//! loopback TCP port with a temporary configuration, it receives every record of a guarded
//! call as RFC 5424, parsed back here and compared with the trail; stopped, it changes no
//! decision, and the lost copies are counted where `rewind doctor` reports them.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TestEnv, eventually, hook_input};

/// rsyslogd with a temporary configuration: octet-counted TCP on 127.0.0.1, every message's
/// fields written to a file, one line each.
struct Rsyslog {
    child: Child,
    received: std::path::PathBuf,
    port: u16,
}

impl Rsyslog {
    fn start(dir: &std::path::Path) -> Option<Rsyslog> {
        let binary = ["/usr/sbin/rsyslogd", "/sbin/rsyslogd"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let work = dir.join("rsyslog");
        std::fs::create_dir_all(&work).expect("rsyslog dir");
        let received = work.join("received.log");
        let conf = work.join("rsyslog.conf");
        std::fs::write(
            &conf,
            format!(
                "global(workDirectory=\"{work}\")\n\
                 module(load=\"imtcp\")\n\
                 input(type=\"imtcp\" port=\"{port}\" address=\"127.0.0.1\")\n\
                 template(name=\"fields\" type=\"string\" string=\"%pri%|%protocol-version%|%timereported:::date-rfc3339%|%app-name%|%procid%|%msgid%|%msg%\\n\")\n\
                 action(type=\"omfile\" file=\"{received}\" template=\"fields\")\n",
                work = work.display(),
                received = received.display(),
            ),
        )
        .expect("rsyslog.conf");
        let child = Command::new(binary)
            .args(["-n", "-f"])
            .arg(&conf)
            .arg("-i")
            .arg(work.join("rsyslogd.pid"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rsyslogd starts");
        eventually("rsyslogd listening", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Some(Rsyslog {
            child,
            received,
            port,
        })
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Every message received: (priority, version, app-name, procid, msgid, the record).
    fn messages(&self) -> Vec<(u32, String, String, String, String, Value)> {
        std::fs::read_to_string(&self.received)
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let fields: Vec<&str> = line.splitn(7, '|').collect();
                assert_eq!(fields.len(), 7, "{line}");
                (
                    fields[0].parse().expect("pri"),
                    fields[1].to_owned(),
                    fields[3].to_owned(),
                    fields[4].to_owned(),
                    fields[5].to_owned(),
                    serde_json::from_str(fields[6])
                        .unwrap_or_else(|e| panic!("the message is the record ({e}): {line}")),
                )
            })
            .collect()
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        self.stop();
    }
}

fn trail(env: &TestEnv) -> Vec<Value> {
    std::fs::read_to_string(env.path("state/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect()
}

#[test]
fn every_record_reaches_rsyslog_and_a_stopped_collector_changes_no_decision() {
    let env = TestEnv::start();
    let Some(mut rsyslog) = Rsyslog::start(env.dir.path()) else {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"skipped: rsyslogd is not installed (Debian package rsyslog; .ci/run installs it)\n",
        );
        return;
    };
    let config = std::fs::read_to_string(&env.config).expect("config");
    let config = format!(
        "{config}\n[audit]\nsyslog = \"tcp://127.0.0.1:{}\"\n",
        rsyslog.port
    );
    std::fs::write(&env.config, config).expect("config");

    let mutating = |id: &str| {
        hook_input(
            "mcp__ssh__exec",
            &json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
            id,
        )
    };
    let guarded = env.hook(&mutating("toolu_sys1"));
    assert_eq!(guarded.decision(), "none", "{guarded:#?}");
    assert!(guarded.reason().contains("toolu_sys1"), "{guarded:#?}");
    let read_only = env.hook(&hook_input(
        "Read",
        &json!({"file_path": "/etc/hosts"}),
        "toolu_sys2",
    ));
    assert_eq!(read_only.code, 0, "{read_only:#?}");

    let written = trail(&env);
    assert_eq!(written.len(), 2, "{written:#?}");
    eventually("rsyslog received both records", || {
        rsyslog.messages().len() == written.len()
    });
    for ((pri, version, app, procid, msgid, record), line) in
        rsyslog.messages().into_iter().zip(&written)
    {
        assert_eq!(&record, line, "the collector's copy is the trail's line");
        assert_eq!(version, "1");
        assert_eq!(app, "rewind");
        assert!(procid.parse::<u32>().is_ok(), "{procid}");
        assert_eq!(msgid, line["decision"].as_str().expect("decision"));
        assert_eq!(pri, 13 * 8 + 6, "log audit, informational");
    }
    assert!(
        written[0]["checkpoints"][0]["id"].is_string(),
        "the guarded call's checkpoint travels: {written:#?}"
    );

    // The collector down: the same decision, in the same time, and the loss counted.
    rsyslog.stop();
    let down = env.hook(&mutating("toolu_sys3"));
    assert_eq!(down.code, 0, "{down:#?}");
    assert_eq!(down.decision(), guarded.decision(), "{down:#?}");
    assert!(down.reason().contains("toolu_sys3"), "{down:#?}");
    assert!(down.elapsed < Duration::from_secs(10), "{down:#?}");
    assert_eq!(trail(&env).len(), 3, "the trail is still written");
    let lost = std::fs::read_to_string(env.path("state/syslog-lost.log"))
        .expect("the loss is counted beside the trail");
    assert_eq!(lost.lines().count(), 1, "{lost}");
    let doctor = env.run(&["doctor"], b"");
    assert!(
        doctor
            .stdout
            .contains("1 audit record did not reach the syslog collector"),
        "{doctor:#?}"
    );
}
