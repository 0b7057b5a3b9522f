//! The broker attacked from the agent's side: forged records, reused change ids, a trail cut
//! short, a full disk, a configuration its group can read, an error that would show the ZVM's
//! address. Each test runs the real broker as root and the agent as another user (they need
//! root, as `broker.rs`'s do, and say why they are skipped elsewhere).

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use rewind::sim::Fault;
use serde_json::{Value, json};

use crate::broker::{Deployment, can_switch_users, mutating, operator, set_mode};
use crate::support::{Setup, hook_input};

/// One request line sent straight to the broker's socket (as root, the test's user); the
/// answer's last line.
fn ask(d: &Deployment, request: &Value) -> Value {
    let mut stream = UnixStream::connect(&d.socket).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut line = request.to_string().into_bytes();
    line.push(b'\n');
    stream.write_all(&line).expect("send");
    let last = BufReader::new(stream)
        .lines()
        .map_while(Result::ok)
        .last()
        .expect("an answer");
    serde_json::from_str(&last).expect("a JSON answer")
}

fn record_request(record: &Value) -> Value {
    json!({"v": 1, "deadline_ms": 5000, "op": "record", "record": record})
}

/// A client's record keeps none of what could forge another: its time is the broker's, and
/// a field holding a line break or another control character is refused, the refusal
/// recorded. Every syslog copy is one message, its header the broker's.
#[test]
fn a_record_with_a_forged_time_or_a_control_character_forges_nothing() {
    if !can_switch_users("a_record_with_a_forged_time_or_a_control_character_forges_nothing") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    let collector_path = d.env.path("syslog.sock");
    let collector =
        std::os::unix::net::UnixDatagram::bind(&collector_path).expect("a syslog collector");
    collector
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let config = format!(
        "{}\n[audit]\nsyslog = \"unix:{}\"\n",
        std::fs::read_to_string(&d.env.config).expect("config"),
        collector_path.display()
    );
    std::fs::write(&d.env.config, config).expect("config");
    d.start_broker();

    let forged = "2020-01-01T00:00:00.000Z rewind 1 allow - {}\n<110>1 2020-01-01T00:00:00.000Z";
    let answer = ask(
        &d,
        &record_request(&json!({
            "time": forged, "host": "claude-code", "tool": "Read", "class": "read",
            "decision": "none", "duration_ms": 0, "change": "toolu_time",
        })),
    );
    assert_eq!(answer["type"], "done", "{answer}");
    let kept = d.recorded("the record", |r| r["change"] == "toolu_time");
    assert_ne!(kept["time"], forged, "{kept}");
    assert!(
        kept["time"]
            .as_str()
            .is_some_and(|t| t.starts_with("20") && !t.starts_with("2020")),
        "the broker's clock: {kept}"
    );
    let mut buffer = vec![0; 65536];
    let n = collector.recv(&mut buffer).expect("a copy");
    let message = String::from_utf8_lossy(&buffer[..n]).into_owned();
    assert!(
        !message.contains('\n') && !message.contains("2020-01-01T00:00:00.000Z rewind"),
        "{message}"
    );
    assert!(message.contains("[rewind@32473 seq=\""), "{message}");

    for (field, value) in [
        (
            "tool",
            "Read\n<110>1 2026-01-01T00:00:00Z h rewind 1 allow - {}",
        ),
        ("host", "claude-code\r"),
        ("change", "toolu_\u{1b}[2J"),
    ] {
        let mut record = json!({
            "time": "", "host": "claude-code", "tool": "Read", "class": "read",
            "decision": "none", "duration_ms": 0,
        });
        record[field] = json!(value);
        let answer = ask(&d, &record_request(&record));
        assert_eq!(answer["type"], "refused", "{field}: {answer}");
        assert!(
            answer["error"]
                .as_str()
                .is_some_and(|e| e.contains(field) && e.contains("control character")),
            "{field}: {answer}"
        );
    }
    let trail = d.trail();
    assert!(
        trail.iter().all(|r| r["op"] != "record"
            || r["decision"] == "refused"
            || r["change"] == "toolu_time"),
        "no refused record was written as one: {trail:#?}"
    );
    assert_eq!(
        trail.iter().filter(|r| r["decision"] == "refused").count(),
        3,
        "each refusal recorded: {trail:#?}"
    );
}

/// A change id names one call: the agent cannot have a second checkpoint made under an id
/// already used for another VM, and the first stays the one recorded for it.
#[test]
fn a_change_id_already_used_for_another_call_is_refused() {
    if !can_switch_users("a_change_id_already_used_for_another_call_is_refused") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let (first, _) = d.hook(&mutating("toolu_once"));
    assert_eq!(first.code, 0, "{first:#?}");
    assert!(first.reason().contains("toolu_once"), "{first:#?}");
    // The same call again (a host that runs its hook twice) is served.
    let (again, _) = d.hook(&mutating("toolu_once"));
    assert!(!again.reason().contains("already used"), "{again:#?}");
    let inserted = d.env.sim.inserts().len();

    let (other, _) = d.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "db01", "command": "systemctl restart app"}),
        "toolu_once",
    ));
    assert_eq!(other.decision(), "deny", "{other:#?}");
    assert!(other.reason().contains("already used"), "{other:#?}");
    assert_eq!(
        d.env.sim.inserts().len(),
        inserted,
        "no checkpoint for the reused id"
    );

    // Over the socket as the agent's user would: the same answer, and after a restart too.
    d.restart_broker();
    let answer = ask(
        &d,
        &json!({"v": 1, "deadline_ms": 20000, "op": "guard", "host": "claude-code",
            "change": "toolu_once", "tool": "Bash", "vms": ["db01"],
            "on_checkpoint": "context", "on_zvm_error": "deny"}),
    );
    assert_eq!(answer["result"]["decision"]["kind"], "deny", "{answer}");
    assert_eq!(
        d.env.sim.inserts().len(),
        inserted,
        "none after a restart either"
    );
}

/// The head kept outside the trail shows what the chain alone cannot: the last record cut
/// off, or edited, is named by its number.
#[test]
fn a_trail_cut_short_or_edited_at_its_end_fails_verification() {
    if !can_switch_users("a_trail_cut_short_or_edited_at_its_end_fails_verification") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let (run, _) = d.hook(&mutating("toolu_cut"));
    assert_eq!(run.code, 0, "{run:#?}");
    let (read, _) = d.hook(&hook_input(
        "Read",
        &json!({"file_path": "/etc/hosts"}),
        "toolu_read",
    ));
    assert_eq!(read.code, 0, "{read:#?}");
    let whole = operator(&d, &["log", "--verify"]);
    whole.success();
    assert!(
        whole.stdout.contains("ends where its head says"),
        "{whole:#?}"
    );
    // Read after the operator's request, which the broker records too.
    let trail = d.env.path("state/audit.jsonl");
    let text = std::fs::read_to_string(&trail).expect("trail");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 2, "{text}");

    // The last record edited: named by its number. (The next record the broker writes
    // anchors whatever is then last; the syslog copy keeps each line's hash.)
    let last = lines.len();
    let mut edited: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let end = edited.len() - 1;
    edited[end] = edited[end].replace("\"decision\":\"ok\"", "\"decision\":\"error\"");
    assert_ne!(edited[end], lines[end], "the edit changed the line");
    std::fs::write(&trail, format!("{}\n", edited.join("\n"))).expect("edit");
    let changed = operator(&d, &["log", "--verify"]);
    assert_ne!(changed.code, 0, "{changed:#?}");
    assert!(
        changed.stderr.contains(&format!("line {last}")) && changed.stderr.contains("edited"),
        "{changed:#?}"
    );

    // The last record cut off: the trail ends before the record its head names.
    let text = std::fs::read_to_string(&trail).expect("trail");
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&trail, format!("{}\n", lines[..lines.len() - 1].join("\n"))).expect("cut");
    let cut = operator(&d, &["log", "--verify"]);
    assert_ne!(cut.code, 0, "{cut:#?}");
    let last = lines.len();
    assert!(
        cut.stderr.contains(&format!("line {last}")) && cut.stderr.contains("cut off"),
        "{cut:#?}"
    );
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// With the trail's file system full, a guard is denied naming the trail, no partial line
/// is left behind, and the broker's status (doctor) says why; once there is room again, guards
/// are confirmed and the chain holds.
#[test]
fn a_full_disk_denies_every_guard_and_leaves_no_partial_record() {
    if !can_switch_users("a_full_disk_denies_every_guard_and_leaves_no_partial_record") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    let state = d.env.path("state");
    std::fs::create_dir_all(&state).expect("state");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"])
        .arg(&state)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        let _ = writeln!(
            std::io::stderr(),
            "skipped a_full_disk_denies_every_guard: cannot mount a tmpfs here"
        );
        return;
    }
    let _mount = Mounted(state.clone());
    d.start_broker();
    let (first, _) = d.hook(&mutating("toolu_room"));
    assert_eq!(first.code, 0, "{first:#?}");
    assert!(first.reason().contains("toolu_room"), "{first:#?}");

    // Fill the file system to its last byte.
    let filler = state.join("filler");
    let mut file = std::fs::File::create(&filler).expect("filler");
    let block = vec![b'x'; 512];
    while file.write_all(&block).is_ok() {}
    while file.write_all(b"x").is_ok() {}
    drop(file);

    let (full, _) = d.hook(&mutating("toolu_full"));
    assert_eq!(full.decision(), "deny", "{full:#?}");
    assert!(
        full.reason().contains("audit trail") && full.reason().contains("audit.jsonl"),
        "names the trail: {full:#?}"
    );
    let doctor = operator(&d, &["doctor"]);
    assert!(
        doctor.stdout.contains("could not write its audit trail"),
        "{doctor:#?}"
    );

    std::fs::remove_file(&filler).expect("room again");
    let verify = operator(&d, &["log", "--verify"]);
    verify.success();
    let (later, _) = d.hook(&mutating("toolu_later"));
    assert!(later.reason().contains("toolu_later"), "{later:#?}");
    assert!(
        d.trail()
            .iter()
            .all(|r| r["change"] != "toolu_full" || r["decision"] != "context"),
        "no confirmation of the call the trail could not record"
    );
}

/// A configuration its group can read is refused like one every user can read, naming the
/// file and the chmod that fixes it; so are a state directory others can enter and a
/// configuration of another user.
#[test]
fn the_broker_refuses_a_configuration_its_group_can_read() {
    if !can_switch_users("the_broker_refuses_a_configuration_its_group_can_read") {
        return;
    }
    let d = Deployment::new(Setup::default());
    let start = |d: &Deployment| {
        let config = d.env.config.display().to_string();
        let socket = d.socket.display().to_string();
        d.env
            .run(&["broker", "--config", &config, "--socket", &socket], b"")
    };
    set_mode(&d.env.config, 0o640);
    let run = start(&d);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("config.toml")
            && run.stderr.contains("can be read by its group")
            && run.stderr.contains("chmod g-rwx"),
        "{run:#?}"
    );
    set_mode(&d.env.config, 0o600);
    std::os::unix::fs::chown(&d.env.config, Some(65534), None).expect("chown");
    let run = start(&d);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("belongs to user id 65534"), "{run:#?}");
    std::os::unix::fs::chown(&d.env.config, Some(0), None).expect("chown back");

    let state = d.env.path("state");
    std::fs::create_dir_all(&state).expect("state");
    set_mode(&state, 0o755);
    let run = start(&d);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("state") && run.stderr.contains("chmod go-rwx"),
        "{run:#?}"
    );
    assert!(!d.socket.exists(), "no socket was made");
}

/// With the ZVM refusing the insert, the agent's deny says what failed and what to do, never
/// the ZVM's address, port or route.
#[test]
fn the_agents_error_names_no_url_address_or_route() {
    if !can_switch_users("the_agents_error_names_no_url_address_or_route") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    d.env.sim.add_fault(Fault::Status {
        route: String::from("POST /v1/vpgs/*/checkpoints"),
        status: 500,
        times: None,
    });
    let (run, _) = d.hook(&mutating("toolu_down"));
    assert_eq!(run.decision(), "deny", "{run:#?}");
    let reason = run.reason();
    let port = d
        .env
        .sim
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    for leak in ["https://", "127.0.0.1", "/v1/", port.trim_end_matches('/')] {
        assert!(!reason.contains(leak), "{leak} in {reason}");
    }
    assert!(
        reason.contains("HTTP 500") && reason.contains("rewind doctor"),
        "{reason}"
    );
}

/// 64 connections that send a byte now and then and never finish their request do not keep
/// the broker from a guard: it is served while they stay open, and each of them is closed
/// within the whole-request deadline, however slowly it trickles.
#[test]
fn idle_connections_do_not_hold_a_guard_back() {
    if !can_switch_users("idle_connections_do_not_hold_a_guard_back") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let mut idle: Vec<UnixStream> = (0..64)
        .map(|_| {
            let mut stream = UnixStream::connect(&d.socket).expect("connect");
            stream.write_all(b"{").expect("a first byte");
            stream
        })
        .collect();
    for stream in &mut idle {
        let _ = stream.write_all(b" ");
    }
    let (run, _) = d.hook(&mutating("toolu_slow"));
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.reason().contains("toolu_slow") && !run.reason().contains("busy"),
        "served while 64 connections idle: {run:#?}"
    );
    // A peer that trickles a space every 200 ms is cut off by the whole-request deadline
    // (5 s), not kept alive by each byte.
    let mut slow = UnixStream::connect(&d.socket).expect("connect");
    slow.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let started = std::time::Instant::now();
    let mut closed = false;
    while started.elapsed() < Duration::from_secs(15) {
        if slow.write_all(b" ").is_err() {
            closed = true;
            break;
        }
        let mut byte = [0u8; 512];
        match std::io::Read::read(&mut slow, &mut byte) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Ok(_) | Err(_) => {
                closed = true;
                break;
            }
        }
    }
    assert!(
        closed,
        "a trickling peer was served past the request deadline"
    );
    drop(idle);
}

/// One peer cannot grow the trail without bound: past its quota its requests are refused, one
/// line records that, and the trail stops growing for it.
#[test]
fn a_flood_of_records_is_bounded_and_recorded_once() {
    if !can_switch_users("a_flood_of_records_is_bounded_and_recorded_once") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let reason = "x".repeat(4000);
    let mut refused = 0;
    for n in 0..600 {
        let answer = ask(
            &d,
            &record_request(&json!({
                "time": "", "host": "claude-code", "tool": "Read", "class": "read",
                "decision": "none", "duration_ms": 0, "change": format!("toolu_flood{n}"),
                "reason": reason,
            })),
        );
        if answer["type"] == "refused" {
            assert!(
                answer["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("audit trail")),
                "{answer}"
            );
            refused += 1;
        }
    }
    assert!(refused > 0, "the flood was never refused");
    let size = std::fs::metadata(d.env.path("state/audit.jsonl"))
        .expect("trail")
        .len();
    assert!(size < 2 * 1024 * 1024, "the trail grew to {size} bytes");
    let summaries = d
        .trail()
        .iter()
        .filter(|r| r["tool"] == "broker:quota")
        .count();
    assert_eq!(summaries, 1, "one line says the quota was reached");
}

/// The shipped service unit keeps its exposure at most 2.0 as `systemd-analyze security`
/// scores it (a system-call filter, memory and task limits, a read-only system). Skipped,
/// saying so, where systemd-analyze cannot score a unit file offline.
#[test]
fn the_shipped_unit_scores_at_most_2_on_systemd_analyze_security() {
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/systemd/rewind-broker.service");
    let Ok(out) = Command::new("systemd-analyze")
        .args(["security", "--offline=yes"])
        .arg(&unit)
        .output()
    else {
        let _ = writeln!(
            std::io::stderr(),
            "skipped the unit's score: systemd-analyze is not installed"
        );
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(score) = text
        .lines()
        .find_map(|l| l.split_once("Overall exposure level for rewind-broker.service: "))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
    else {
        let _ = writeln!(
            std::io::stderr(),
            "skipped the unit's score: this systemd-analyze cannot score a unit file offline: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    };
    assert!(score <= 2.0, "exposure {score}:\n{text}");
}

/// The broker's peak resident memory (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmHWM")
}

/// Requests near the size limit from many connections at once, JSON nested past any parser's
/// depth, connections half-closed mid-request and a burst of idle ones: the broker's peak
/// memory stays under 64 MiB, and a guard is served afterwards.
#[test]
fn the_brokers_memory_stays_bounded_under_attack() {
    if !can_switch_users("the_brokers_memory_stays_bounded_under_attack") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let pid = d.broker_pid().expect("the broker runs");
    let big = format!(
        "{{\"v\":1,\"deadline_ms\":5000,\"op\":\"resolve\",\"vms\":[\"{}\"]}}\n",
        "x".repeat(1024 * 1024 - 100)
    );
    let nested = format!("{}{}\n", "[".repeat(200_000), "]".repeat(200_000));
    std::thread::scope(|scope| {
        for n in 0..24 {
            let (socket, big, nested) = (&d.socket, &big, &nested);
            scope.spawn(move || {
                let Ok(mut stream) = UnixStream::connect(socket) else {
                    return;
                };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let payload = if n % 2 == 0 { big } else { nested };
                let _ = stream.write_all(payload.as_bytes());
                let _ = std::io::Read::read(&mut stream, &mut [0u8; 256]);
            });
        }
        for _ in 0..32 {
            let socket = &d.socket;
            scope.spawn(move || {
                let Ok(mut stream) = UnixStream::connect(socket) else {
                    return;
                };
                let _ = stream.write_all(&b"{\"v\":1,\"op\":\"reso".repeat(1000));
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let _ = std::io::Read::read(&mut stream, &mut [0u8; 256]);
            });
        }
    });
    let idle: Vec<UnixStream> = (0..200)
        .filter_map(|_| UnixStream::connect(&d.socket).ok())
        .collect();
    let peak = peak_rss_kib(pid);
    assert!(
        peak <= 64 * 1024,
        "the broker's memory peaked at {peak} KiB under attack"
    );
    drop(idle);
    let (run, _) = d.hook(&mutating("toolu_after"));
    assert!(
        run.reason().contains("toolu_after"),
        "served after the attack: {run:#?}"
    );
}

/// The soak the contract asks for: 12 hooks guarding changes through one broker for
/// `REWIND_SOAK_SECS` (600 by default) while an attacker on another account floods it with
/// records and idle connections. No hook is let through without its tagged checkpoint, and
/// every confirmed call is in the trail. Ignored by default (it takes ten minutes):
/// `cargo test --test it soak -- --ignored`.
#[test]
#[ignore = "a ten-minute soak; run with --ignored"]
fn soak_twelve_hooks_through_one_flooded_broker() {
    if !can_switch_users("soak_twelve_hooks_through_one_flooded_broker") {
        return;
    }
    let secs = std::env::var("REWIND_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let until = std::time::Instant::now() + Duration::from_secs(secs);
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let pid = d.broker_pid().expect("the broker runs");
    let confirmed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let d = &d;
        // The attacker: records past its quota and connections left idle, again and again.
        scope.spawn(move || {
            let mut n = 0u64;
            while std::time::Instant::now() < until {
                n += 1;
                let _ = UnixStream::connect(&d.socket).and_then(|mut s| s.write_all(b"{"));
                if let Ok(mut s) = UnixStream::connect(&d.socket) {
                    let line = format!(
                        "{}\n",
                        record_request(&json!({"time": "", "host": "claude-code", "tool": "Read",
                            "class": "read", "decision": "none", "duration_ms": 0,
                            "change": format!("toolu_soakflood{n}"), "reason": "y".repeat(4000)}))
                    );
                    let _ = s.write_all(line.as_bytes());
                }
            }
        });
        for hook in 0..12 {
            let confirmed = &confirmed;
            scope.spawn(move || {
                let mut n = 0;
                while std::time::Instant::now() < until {
                    n += 1;
                    let id = format!("toolu_soak{hook}x{n}");
                    let (run, _) = d.hook(&mutating(&id));
                    match run.decision().as_str() {
                        // The default policy: the call goes on with its checkpoint named.
                        "none" => {
                            assert!(run.reason().contains(&id), "untagged: {run:#?}");
                            confirmed.lock().expect("lock").push(id);
                        }
                        "deny" | "ask" => {}
                        other => panic!("{other}: {run:#?}"),
                    }
                }
            });
        }
    });
    let confirmed = confirmed.into_inner().expect("lock");
    assert!(!confirmed.is_empty(), "no hook was confirmed");
    let trail = d.trail();
    for id in &confirmed {
        assert!(
            trail
                .iter()
                .any(|r| r["change"] == json!(id) && r["op"] == "guard"),
            "confirmed but not recorded: {id}"
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "soak: {} confirmed guards in {secs} s, broker peak RSS {} KiB",
        confirmed.len(),
        peak_rss_kib(pid)
    );
}
