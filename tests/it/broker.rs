//! `rewind broker` as it is deployed: the broker as one user (root), holding the simulator's
//! credentials, token cache and audit trail; the hook as another (`nobody`, through
//! `setpriv`), configured with nothing but `[broker] socket`. The tests need root to switch
//! users (CI runs as root); elsewhere they say why they are skipped.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rewind::sim::Fault;
use serde_json::{Value, json};

use crate::support::{self, Run, Setup, TestEnv, eventually, hook_input};

/// The hook's user.
pub(crate) const HOOK_USER: &str = "nobody";
const HOOK_GROUP: &str = "nogroup";

pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// False (and a line saying why) when the tests cannot switch users here.
pub(crate) fn can_switch_users(test: &str) -> bool {
    if !is_root() {
        // Said on the test's stderr, where `cargo test` shows a skipped test's reason.
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: switching to user {HOOK_USER} needs root (CI runs as root)"
        );
        return false;
    }
    true
}

pub(crate) fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The simulator, the broker's private files under a root-owned directory, and a
/// configuration for the hook's user that names only the socket.
pub(crate) struct Deployment {
    pub(crate) env: TestEnv,
    pub(crate) socket: PathBuf,
    /// The hook's side: its configuration and home, readable by the hook's user.
    hook_dir: tempfile::TempDir,
    broker: Option<Child>,
}

impl Deployment {
    pub(crate) fn new(setup: Setup) -> Deployment {
        let env = TestEnv::with(setup);
        // Others may pass through the broker's directory to the socket, but not list it;
        // the configuration is the broker's alone.
        set_mode(env.dir.path(), 0o711);
        set_mode(&env.config, 0o600);
        let run_dir = env.path("run");
        std::fs::create_dir(&run_dir).expect("run dir");
        set_mode(&run_dir, 0o755);
        let socket = run_dir.join("broker.sock");
        let hook_dir = tempfile::tempdir().expect("tempdir");
        set_mode(hook_dir.path(), 0o755);
        let home = hook_dir.path().join("home");
        std::fs::create_dir(&home).expect("home");
        std::os::unix::fs::chown(&home, Some(65534), Some(65534)).expect("chown home");
        Deployment {
            env,
            socket,
            hook_dir,
            broker: None,
        }
        .with_hook_config("budget_secs = 30")
    }

    /// Writes the hook's configuration: `[broker] socket` and these `[hook]` lines.
    pub(crate) fn with_hook_config(self, hook: &str) -> Deployment {
        let text = format!(
            "[hook]\n{hook}\n\n[broker]\nsocket = {:?}\n",
            self.socket.display().to_string()
        );
        let path = self.hook_config();
        std::fs::write(&path, text).expect("hook config");
        set_mode(&path, 0o644);
        self
    }

    pub(crate) fn hook_config(&self) -> PathBuf {
        self.hook_dir.path().join("hook.toml")
    }

    /// Starts `rewind broker` as root and waits for its socket. Its stderr goes to
    /// `broker.log` in the test's directory, not into the test run's output.
    pub(crate) fn start_broker(&mut self) {
        let socket = self.socket.display().to_string();
        let config = self.env.config.display().to_string();
        let log = std::fs::File::create(self.env.path("broker.log")).expect("broker.log");
        set_mode(&self.env.path("broker.log"), 0o600);
        let child = self
            .env
            .command(&["broker", "--config", &config, "--socket", &socket])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("broker starts");
        self.broker = Some(child);
        eventually("the broker's socket", || self.socket.exists());
    }

    /// The running broker's process id.
    pub(crate) fn broker_pid(&self) -> Option<u32> {
        self.broker.as_ref().map(Child::id)
    }

    /// Stops the broker and starts it again on the same files.
    pub(crate) fn restart_broker(&mut self) {
        if let Some(mut child) = self.broker.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.socket);
        self.start_broker();
    }

    /// A command run as the hook's user, with nothing of the broker's environment.
    pub(crate) fn as_hook_user(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            &format!("--reuid={HOOK_USER}"),
            &format!("--regid={HOOK_GROUP}"),
            "--clear-groups",
        ])
        .arg(program)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", self.hook_dir.path().join("home"))
        .env("REWIND_CONFIG", self.hook_config())
        .current_dir(self.hook_dir.path());
        cmd
    }

    pub(crate) fn rewind_as_hook_user(&self, args: &[&str]) -> Command {
        self.as_hook_user(Path::new(env!("CARGO_BIN_EXE_rewind")), args)
    }

    /// `rewind hook` as the hook's user; the run and the hook's pid.
    pub(crate) fn hook(&self, stdin: &[u8]) -> (Run, u32) {
        let mut cmd = self.rewind_as_hook_user(&["hook"]);
        let started = Instant::now();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hook starts");
        let pid = child.id();
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("write stdin");
        let out = child.wait_with_output().expect("hook ends");
        let ended = Instant::now();
        (
            Run {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                elapsed: started.elapsed(),
                ended,
            },
            pid,
        )
    }

    /// The first line of the broker's trail that `matches`; fails the test with `what` and
    /// the whole trail when there is none.
    pub(crate) fn recorded(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let trail = self.trail();
        trail
            .iter()
            .find(|r| matches(r))
            .cloned()
            .unwrap_or_else(|| panic!("{what}: {trail:#?}"))
    }

    /// The broker's audit trail, line by line.
    pub(crate) fn trail(&self) -> Vec<Value> {
        std::fs::read_to_string(self.env.path("state/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        if let Some(mut child) = self.broker.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub(crate) fn mutating(id: &str) -> Vec<u8> {
    hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
        id,
    )
}

/// The hook's user guards through the socket: the tag names the call, the broker's trail
/// names the hook's uid and pid, and nothing the hook's user can read holds a credential.
#[test]
fn the_hook_as_another_user_guards_through_the_broker_and_reads_no_credential() {
    if !can_switch_users("the_hook_as_another_user_guards_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();

    let (run, pid) = d.hook(&mutating("toolu_brk1"));
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.decision(), "none", "a confirmed checkpoint: {run:#?}");
    let context = run.reason();
    assert!(context.contains("toolu_brk1"), "{context}");
    let inserts = d.env.sim.inserts();
    assert_eq!(inserts.len(), 1, "{inserts:?}");
    let tag = &inserts[0].tag;
    assert!(
        tag.starts_with("ai:toolu_brk1 | claude-code/") && tag.contains("vm=jp-ubuntu"),
        "the broker built the tag from the call: {tag}"
    );
    assert!(inserts[0].listed_at.is_some(), "listed before the answer");

    let guard = d.recorded("the broker recorded the guard", |r| {
        r["op"] == "guard" && r["change"] == "toolu_brk1"
    });
    assert_eq!(guard["peer"]["uid"], 65534, "{guard}");
    assert_eq!(guard["peer"]["pid"], json!(pid), "{guard}");
    assert_eq!(guard["user"], HOOK_USER, "{guard}");
    assert_eq!(guard["decision"], "context", "{guard}");
    assert_eq!(guard["checkpoints"][0]["vpg"], "jp-ubuntu-vpg", "{guard}");

    // A read-only call is decided by the hook alone and recorded by the broker too.
    let (read_only, _) = d.hook(&hook_input(
        "Read",
        &json!({"file_path": "/etc/hosts"}),
        "toolu_ro",
    ));
    assert_eq!(read_only.code, 0, "{read_only:#?}");
    let record = d.recorded("the hook's decision reached the broker's trail", |r| {
        r["op"] == "record" && r["change"] == "toolu_ro"
    });
    assert_eq!(record["peer"]["uid"], 65534, "{record}");

    // Nothing of the broker's can be read by the hook's user: configuration, token cache,
    // audit trail; and its environment holds no password.
    let mut secrets = vec![d.env.config.clone(), d.env.path("state/audit.jsonl")];
    let cache = d.env.path("cache/rewind");
    for entry in walk(&cache) {
        secrets.push(entry);
    }
    assert!(
        secrets
            .iter()
            .any(|p| p.to_string_lossy().contains("token")),
        "the broker keeps a token cache: {secrets:?}"
    );
    for path in &secrets {
        let cat = support::run(
            d.as_hook_user(Path::new("/bin/cat"), &[&path.display().to_string()]),
            b"",
        );
        assert_ne!(cat.code, 0, "{HOOK_USER} read {}: {cat:#?}", path.display());
        assert!(cat.stdout.is_empty(), "{cat:#?}");
    }
    let env = support::run(d.as_hook_user(Path::new("/usr/bin/env"), &[]), b"");
    assert!(!env.stdout.contains(d.env.sim.password()), "{env:#?}");

    // Lookups through the broker, for the agent's user.
    let find = support::run(d.rewind_as_hook_user(&["find", "jp-ubuntu"]), b"");
    find.success();
    assert!(find.stdout.contains("VPG jp-ubuntu-vpg"), "{find:#?}");
    let listed = support::run(
        d.rewind_as_hook_user(&["checkpoints", "jp-ubuntu", "--change", "toolu_brk1"]),
        b"",
    );
    listed.success();
    assert!(listed.stdout.contains(tag.as_str()), "{listed:#?}");

    // doctor says which mode each side is in.
    let doctor = support::run(d.rewind_as_hook_user(&["doctor"]), b"");
    assert!(
        doctor.stdout.contains("is served by user id 0")
            && doctor.stdout.contains("reads no ZVM credentials"),
        "{doctor:#?}"
    );
    let single = d.env.run(&["doctor"], b"");
    assert!(
        single.stdout.contains("single-user mode")
            && single
                .stdout
                .contains("an agent running as this user can read them"),
        "{single:#?}"
    );

    // The trail's chain holds.
    let verify = d.env.run(&["log", "--verify"], b"");
    verify.success();
    assert!(verify.stdout.contains("hash chain holds"), "{verify:#?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Asserts the run is a deny in time, naming the socket.
#[track_caller]
fn denied_naming(run: &Run, socket: &Path, within: Duration, why: &str) {
    assert_eq!(
        run.code, 0,
        "{why}: never exit 101 or anything but a decision: {run:#?}"
    );
    assert_eq!(run.decision(), "deny", "{why}: {run:#?}");
    let reason = run.reason();
    assert!(
        reason.contains(&socket.display().to_string()),
        "{why}: the reason names the socket: {reason}"
    );
    assert!(run.elapsed < within, "{why}: took {:?}", run.elapsed);
}

/// A fake broker on the socket, owned by root: accepts, reads the request, then does `act`.
fn fake_broker(socket: &Path, act: fn(&mut std::os::unix::net::UnixStream)) {
    let listener = UnixListener::bind(socket).expect("bind");
    set_mode(socket, 0o666);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            act(&mut stream);
        }
    });
}

/// Whatever is wrong with the broker, the hook denies within its budget and says which socket.
#[test]
fn a_broker_down_wrong_slow_or_killed_is_a_deny_in_time() {
    if !can_switch_users("a_broker_down_wrong_slow_or_killed_is_a_deny_in_time") {
        return;
    }
    // Not running: no socket at all.
    let d = Deployment::new(Setup::default()).with_hook_config("budget_secs = 5");
    let (run, _) = d.hook(&mutating("toolu_down"));
    denied_naming(&run, &d.socket, Duration::from_secs(6), "no broker");
    assert!(
        run.reason().contains("is `rewind broker` running"),
        "{run:#?}"
    );

    // A socket someone else (the hook's own user) serves.
    let listener = UnixListener::bind(&d.socket).expect("bind");
    std::os::unix::fs::chown(&d.socket, Some(65534), Some(65534)).expect("chown");
    let (run, _) = d.hook(&mutating("toolu_owned"));
    denied_naming(
        &run,
        &d.socket,
        Duration::from_secs(6),
        "socket of another user",
    );
    assert!(
        run.reason().contains("belongs to user id 65534"),
        "{run:#?}"
    );
    drop(listener);
    std::fs::remove_file(&d.socket).expect("rm");

    // An answer that is not JSON.
    fake_broker(&d.socket, |s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\n");
    });
    let (run, _) = d.hook(&mutating("toolu_garbage"));
    denied_naming(&run, &d.socket, Duration::from_secs(6), "garbage answer");
    assert!(run.reason().contains("not its protocol"), "{run:#?}");
    std::fs::remove_file(&d.socket).expect("rm");

    // A broker that never answers, against a 5 s budget.
    fake_broker(&d.socket, |_| std::thread::sleep(Duration::from_secs(60)));
    let (run, _) = d.hook(&mutating("toolu_slow"));
    denied_naming(&run, &d.socket, Duration::from_secs(6), "slow broker");
    assert!(run.elapsed > Duration::from_secs(3), "it waited: {run:#?}");
    assert!(
        d.env.sim.inserts().is_empty(),
        "no fake broker reached Zerto"
    );

    // With on_zvm_error = "ask", a broker that is down asks instead.
    std::fs::remove_file(&d.socket).expect("rm");
    let d = d.with_hook_config("budget_secs = 5\non_zvm_error = \"ask\"");
    let (run, _) = d.hook(&mutating("toolu_ask"));
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.decision(), "ask", "{run:#?}");
}

/// The broker killed while the guard waits for Zerto to list the tag: a deny, at once.
#[test]
fn a_broker_killed_mid_guard_is_a_deny() {
    if !can_switch_users("a_broker_killed_mid_guard_is_a_deny") {
        return;
    }
    let mut d = Deployment::new(Setup {
        faults: vec![Fault::TagNeverListed {
            vpg: "jp-ubuntu-vpg".into(),
        }],
        ..Setup::default()
    })
    .with_hook_config("budget_secs = 20");
    d.start_broker();
    let socket = d.socket.clone();
    let mut broker = d.broker.take().expect("broker");
    let sim = &d.env.sim;
    std::thread::scope(|scope| {
        let killer = scope.spawn(|| {
            eventually("the broker inserted the checkpoint", || {
                !sim.inserts().is_empty()
            });
            broker.kill().expect("kill");
            let _ = broker.wait();
            Instant::now()
        });
        let (run, _) = d.hook(&mutating("toolu_killed"));
        let killed_at = killer.join().expect("killer");
        denied_naming(&run, &socket, Duration::from_secs(20), "killed broker");
        assert!(
            run.ended.duration_since(killed_at) < Duration::from_secs(3),
            "denied as soon as the broker died: {run:#?}"
        );
        assert!(run.reason().contains("closed"), "{run:#?}");
    });
}

/// A guest file as it was before the agent's change.
const BEFORE: &[u8] = b"listen = 0.0.0.0:8080\nmode = safe\n";

/// `rewind <args>` as root, an operator, configured with nothing but the socket.
pub(crate) fn operator(d: &Deployment, args: &[&str]) -> Run {
    let home = d.env.path("operator-home");
    std::fs::create_dir_all(&home).expect("home");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("REWIND_CONFIG", d.hook_config())
        .current_dir(&home)
        .args(args);
    support::run(cmd, b"")
}

/// File Level Restore is for operators: the agent's user is refused before anything is
/// mounted (and the refusal recorded with its uid); root gets the bytes from before the change.
#[test]
fn recover_through_the_broker_is_refused_to_the_hook_user_and_served_to_an_operator() {
    if !can_switch_users("recover_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    d.env
        .sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", BEFORE)
        .expect("seed");
    let (run, _) = d.hook(&mutating("toolu_rec"));
    assert_eq!(run.decision(), "none", "guarded: {run:#?}");
    d.env
        .sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", b"broken\n")
        .expect("break");

    let recover = [
        "recover",
        "--vm",
        "jp-ubuntu",
        "--path",
        "/etc/app.conf",
        "--change",
        "toolu_rec",
        "--yes",
        "--out",
    ];
    let agent_out = d.hook_dir.path().join("home");
    let mut args: Vec<&str> = recover.to_vec();
    let agent_dir = agent_out.display().to_string();
    args.push(&agent_dir);
    let refused = support::run(d.rewind_as_hook_user(&args), b"");
    assert_eq!(refused.code, 8, "the broker refused: {refused:#?}");
    assert!(
        refused.stderr.contains("may not recover"),
        "the broker names the refusal: {refused:#?}"
    );
    assert!(!agent_out.join("app.conf").exists(), "nothing written");
    for other in [&["flr", "list"][..], &["flr", "end", "x"], &["log"]] {
        let run = support::run(d.rewind_as_hook_user(other), b"");
        assert_eq!(run.code, 8, "the broker refused {other:?}: {run:#?}");
        assert!(run.stderr.contains("may not"), "{other:?}: {run:#?}");
    }
    assert!(d.env.sim.flr_sessions().is_empty(), "nothing was mounted");
    let refusal = d.recorded("the refused recover is recorded", |r| r["op"] == "recover");
    assert_eq!(refusal["peer"]["uid"], 65534, "{refusal}");
    assert_eq!(refusal["decision"], "refused", "{refusal}");

    let out = d.env.path("restored");
    std::fs::create_dir(&out).expect("out");
    let mut args: Vec<&str> = recover.to_vec();
    let out_dir = out.display().to_string();
    args.push(&out_dir);
    let served = operator(&d, &args);
    served.success();
    assert_eq!(
        std::fs::read(out.join("app.conf")).expect("written"),
        BEFORE,
        "identical bytes: {served:#?}"
    );
    let sha = rewind::hex(&<sha2::Sha256 as sha2::Digest>::digest(BEFORE));
    assert!(served.stdout.contains(&sha), "{served:#?}");
    eventually("every FLR session to be gone", || {
        d.env.sim.flr_sessions().is_empty()
    });
    let done = d.recorded("the operator's recover is recorded", |r| {
        r["op"] == "recover" && r["peer"]["uid"] == 0
    });
    assert_eq!(done["decision"], "ok", "{done}");

    // The operator reads the trail through the broker, and its chain holds.
    let log = operator(&d, &["log", "--change", "toolu_rec"]);
    log.success();
    assert!(
        log.stdout.contains("context") && log.stdout.contains("[nobody uid 65534 pid "),
        "the guard, and who asked for it: {log:#?}"
    );
    let json = operator(&d, &["log", "--json", "--change", "toolu_rec"]);
    json.success();
    let line: Value =
        serde_json::from_str(json.stdout.lines().next().expect("a line")).expect("JSON");
    assert_eq!(line["peer"]["uid"], 65534, "{json:#?}");
    assert!(line["prev"].is_string(), "the line as written: {json:#?}");
    let verify = operator(&d, &["log", "--verify"]);
    verify.success();
    assert!(verify.stdout.contains("hash chain holds"), "{verify:#?}");
}

/// Agents of two users share one broker: parallel guards of one VPG are all confirmed, each
/// call tagged once under its own change id, with one login to the ZVM between them.
#[test]
fn parallel_hooks_share_one_broker_one_login_and_tag_each_call() {
    if !can_switch_users("parallel_hooks_share_one_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let ids: Vec<String> = (0..4).map(|n| format!("toolu_par{n}")).collect();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let workers: Vec<_> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| {
                let d = &d;
                scope.spawn(move || {
                    if n % 2 == 0 {
                        d.hook(&mutating(id)).0
                    } else {
                        // Root's agent: the same broker, another user.
                        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
                        cmd.env_clear()
                            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                            .env("HOME", d.env.path("operator-home"))
                            .env("REWIND_CONFIG", d.hook_config())
                            .arg("hook");
                        std::fs::create_dir_all(d.env.path("operator-home")).expect("home");
                        support::run(cmd, &mutating(id))
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("hook"))
            .collect()
    });
    for (run, id) in runs.iter().zip(&ids) {
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(run.decision(), "none", "confirmed: {run:#?}");
        assert!(run.reason().contains(id.as_str()), "{run:#?}");
    }
    let inserts = d.env.sim.inserts();
    for id in &ids {
        let tagged = inserts
            .iter()
            .filter(|i| i.tag.starts_with(&format!("ai:{id} |")) && i.task_state == "Completed")
            .count();
        assert_eq!(tagged, 1, "{id} tagged once: {inserts:#?}");
    }
    assert_eq!(d.env.sim.stats().token_requests, 1, "one login for all");
    let uids: std::collections::BTreeSet<String> = d
        .trail()
        .iter()
        .filter(|r| r["op"] == "guard")
        .map(|r| r["peer"]["uid"].to_string())
        .collect();
    assert_eq!(uids.len(), 2, "both users' guards recorded: {uids:?}");
}

/// The broker does not start on a configuration others can read or change, nor with a socket
/// directory others can write (anyone could put their own socket in its place).
#[test]
fn the_broker_refuses_to_start_on_files_others_can_change() {
    let d = Deployment::new(Setup::default());
    let start = |d: &Deployment| {
        let config = d.env.config.display().to_string();
        let socket = d.socket.display().to_string();
        d.env
            .run(&["broker", "--config", &config, "--socket", &socket], b"")
    };
    for (mode, says) in [
        (0o644, "can be read by every local user"),
        (0o620, "can be written by group or others"),
        (0o602, "can be written by group or others"),
    ] {
        set_mode(&d.env.config, mode);
        let run = start(&d);
        assert_eq!(run.code, 1, "mode {mode:o}: {run:#?}");
        assert!(
            run.stderr.contains(says) && run.stderr.contains("config.toml"),
            "mode {mode:o}: {run:#?}"
        );
    }
    set_mode(&d.env.config, 0o600);
    set_mode(&d.env.path("run"), 0o777);
    let run = start(&d);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("socket directory")
            && run.stderr.contains("written by group or others"),
        "{run:#?}"
    );
    assert!(!d.socket.exists(), "no socket was made");
}

/// `rewind doctor` as the agents' user in broker mode: the socket (there, its owner, its
/// directory), who serves it, the credentials said plainly to be out of this user's reach, and
/// the ZVM checks as the broker makes them, through a `status` request any local user may
/// make, which names neither the ZVM's address nor its account. When the ZVM refuses the
/// broker, doctor fails naming the step, still without the address.
#[test]
fn doctor_as_the_agents_user_checks_the_zvm_through_the_broker() {
    if !can_switch_users("doctor_as_the_agents_user_checks_the_zvm_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    let (url, user) = (d.env.sim.url(), d.env.sim.username().to_owned());
    let address = url.trim_start_matches("https://").to_owned();
    let password = d.env.sim.password().to_owned();
    let secret_free = |doctor: &Run| {
        for secret in [address.as_str(), user.as_str(), password.as_str()] {
            assert!(
                !doctor.stdout.contains(secret) && !doctor.stderr.contains(secret),
                "doctor showed {secret:?}: {doctor:#?}"
            );
        }
    };

    // Down: the socket is missing, and nothing else is claimed.
    let down = support::run(d.rewind_as_hook_user(&["doctor"]), b"");
    assert!(
        down.stdout.contains(&format!(
            "FAIL  broker socket: no socket at {}",
            d.socket.display()
        )) && down.stdout.contains("FAIL  broker: the broker at"),
        "{down:#?}"
    );
    assert!(!down.stdout.contains("ok    broker"), "{down:#?}");

    d.start_broker();
    let doctor = support::run(d.rewind_as_hook_user(&["doctor"]), b"");
    for line in [
        format!(
            "ok    broker socket: {}: a socket of root (uid 0), mode 666, in a directory only root and the broker's account can change",
            d.socket.display()
        ),
        format!(
            "ok    broker: {} is served by user id 0",
            d.socket.display()
        ),
        String::from("ok    credentials: out of this user's reach (uid 65534)"),
        String::from("ok    broker zvm configuration: "),
        String::from("ok    broker authentication: the broker is logged in to its ZVM"),
        String::from("ok    broker vpgs: 6 VPGs, each can take a restorable checkpoint"),
        String::from("warn  broker selftest: never run against the broker's ZVM"),
    ] {
        assert!(doctor.stdout.contains(&line), "{line:?} in {doctor:#?}");
    }
    assert!(!doctor.stdout.contains("FAIL  broker"), "{doctor:#?}");
    secret_free(&doctor);
    // The broker sees the ZVM as doctor sees it with the credentials in hand.
    let single = d.env.run(&["doctor"], b"");
    let vms = single
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("ok    zvm api: "))
        .unwrap_or_else(|| panic!("single-user doctor counts the VMs: {single:#?}"));
    assert!(
        doctor
            .stdout
            .contains(&format!("ok    broker zvm api: {vms}\n")),
        "{vms:?} in {doctor:#?}"
    );
    let asked = d.recorded("the broker recorded the status request", |r| {
        r["op"] == "status"
    });
    assert_eq!(asked["peer"]["uid"], 65534, "{asked}");

    // The ZVM refuses the broker's login: the step fails, in words without the address.
    d.env.sim.add_fault(Fault::Status {
        route: String::from("POST /auth/*"),
        status: 401,
        times: None,
    });
    d.env.sim.expire_tokens();
    let refused = support::run(d.rewind_as_hook_user(&["doctor"]), b"");
    assert!(
        refused.stdout.contains("FAIL  broker ")
            && refused
                .stdout
                .contains("the broker's ZVM refused its login (HTTP 401)")
            && refused
                .stdout
                .contains("run `rewind doctor` as the broker's account for the details"),
        "{refused:#?}"
    );
    secret_free(&refused);
}

/// `systemd-socket-activate` (systemd's own tool for its socket activation protocol: it
/// listens, and at the first connection runs the program with the socket as fd 3 and
/// `LISTEN_FDS`/`LISTEN_PID` set) in front of `rewind broker`, with the broker's environment.
fn socket_activated(d: &Deployment, listen: &Path) -> Command {
    let mut cmd = Command::new("systemd-socket-activate");
    cmd.arg(format!("--listen={}", listen.display()))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", d.env.path("home"))
        .env("XDG_CACHE_HOME", d.env.path("cache"))
        .env("XDG_STATE_HOME", d.env.path("state"))
        .env(
            "REWIND_ZVM_PASSWORD",
            std::fs::read_to_string(d.env.path("password")).expect("password"),
        );
    // Each passed on by name: the values stay out of the command line.
    for name in [
        "PATH",
        "HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "REWIND_ZVM_PASSWORD",
    ] {
        cmd.arg(format!("--setenv={name}"));
    }
    cmd.arg(env!("CARGO_BIN_EXE_rewind"))
        .args(["broker", "--config"])
        .arg(&d.env.config)
        .arg("--socket")
        .arg(&d.socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn socket_activate_is_installed() {
    let found = Command::new("systemd-socket-activate")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "systemd-socket-activate is missing: install systemd (apt-get install systemd; .ci/run does)"
    );
}

/// Socket activation as the shipped `rewind-broker.socket` sets it up: the socket exists
/// before the broker runs, the first connection (the hook's, as another user) starts it, and
/// the broker answers on the socket it was handed rather than binding its own.
#[test]
fn the_broker_serves_the_socket_systemd_passes_it() {
    if !can_switch_users("the_broker_serves_the_socket_systemd_passes_it") {
        return;
    }
    socket_activate_is_installed();
    let mut d = Deployment::new(Setup::default());
    let child = socket_activated(&d, &d.socket.clone())
        .spawn()
        .expect("systemd-socket-activate starts");
    d.broker = Some(child);
    eventually("systemd's socket", || d.socket.exists());
    // SocketMode=0666 in the shipped unit: every local user may connect.
    set_mode(&d.socket, 0o666);

    let (run, pid) = d.hook(&mutating("toolu_sock1"));
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.decision(), "none", "a confirmed checkpoint: {run:#?}");
    assert!(run.reason().contains("toolu_sock1"), "{run:#?}");
    let inserts = d.env.sim.inserts();
    assert_eq!(inserts.len(), 1, "{inserts:?}");
    assert!(
        inserts[0].tag.starts_with("ai:toolu_sock1 | "),
        "{inserts:?}"
    );
    let guard = d.recorded("the broker recorded the guard", |r| {
        r["op"] == "guard" && r["change"] == "toolu_sock1"
    });
    assert_eq!(guard["peer"]["pid"], json!(pid), "{guard}");

    let mut broker = d.broker.take().expect("the broker");
    let _ = broker.kill();
    let out = broker.wait_with_output().expect("the broker ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "serving on {} (passed by systemd)",
            d.socket.display()
        )),
        "the broker took the socket it was handed: {stderr}"
    );
    assert!(
        !stderr.contains(d.env.sim.password()),
        "no secret on its stderr: {stderr}"
    );
}

/// A socket handed over for another path than `--socket` (a unit whose ListenStream= and
/// ExecStart disagree) is refused, naming both: the hook's configuration names `--socket`.
#[test]
fn the_broker_refuses_a_passed_socket_that_is_not_its_socket() {
    if !can_switch_users("the_broker_refuses_a_passed_socket_that_is_not_its_socket") {
        return;
    }
    socket_activate_is_installed();
    let d = Deployment::new(Setup::default());
    let other = d.env.path("run/other.sock");
    let mut child = socket_activated(&d, &other)
        .spawn()
        .expect("systemd-socket-activate starts");
    eventually("systemd's socket", || other.exists());
    // The first connection starts the broker, which refuses and closes it unanswered.
    let mut stream = std::os::unix::net::UnixStream::connect(&other).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
    assert!(answer.is_empty(), "no answer: {answer}");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("the broker ends");
    assert_eq!(out.status.code(), Some(1), "{out:#?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "systemd passed the socket {}, not --socket {}",
            other.display(),
            d.socket.display()
        )),
        "{stderr}"
    );
    assert!(!d.socket.exists(), "the broker bound nothing of its own");
}

/// The real Claude Code (pinned as for the other end-to-end tests) running its hook as
/// another user in broker mode: the change runs only after Zerto lists its tag, and the
/// broker's trail names the hook's user.
#[test]
fn claude_code_with_its_hook_in_broker_mode_runs_the_change_only_after_its_tag_is_listed() {
    use crate::claude::{ClaudeCode, Hook, PermissionMode, logged_at, text, tool_use};
    const CALL: &str = "toolu_e2e_broker_01";
    const TOOL: &str = "mcp__ssh__exec";
    if !can_switch_users("claude_code_with_its_hook_in_broker_mode") {
        return;
    }
    let input = json!({"host": "jp-ubuntu", "command": "sudo sed -i s/a/b/ /etc/app.conf"});
    let mut d = Deployment::new(Setup::default()).with_hook_config("budget_secs = 20");
    d.start_broker();
    let rewind = crate::support::rewind_bin().display().to_string();
    let run = ClaudeCode::new()
        .prompt("Change the app config on jp-ubuntu.")
        .script([tool_use(CALL, TOOL, input.clone()), text("Done.")])
        .permission_mode(PermissionMode::Default)
        .env("REWIND_CONFIG", d.hook_config().display().to_string())
        .allowed_tools([TOOL])
        .hook(
            Hook::exec("setpriv")
                .args([
                    &format!("--reuid={HOOK_USER}"),
                    &format!("--regid={HOOK_GROUP}"),
                    "--clear-groups",
                    &rewind,
                    "hook",
                ])
                .timeout_secs(20 + rewind::commands::install::HOST_TIMEOUT_MARGIN_SECS),
        )
        .run();

    assert_eq!(run.mcp_tools_called(), ["ssh.exec"], "{}", run.describe());
    assert_eq!(run.mcp_calls[0]["arguments"], input);
    let inserts = d.env.sim.inserts();
    assert_eq!(inserts.len(), 1, "{inserts:#?}");
    assert!(
        inserts[0].tag.starts_with(&format!("ai:{CALL} |")),
        "{inserts:#?}"
    );
    let listed = inserts[0].listed_at.expect("listed");
    let (now, wall) = (Instant::now(), std::time::SystemTime::now());
    let listed_wall = wall - now.duration_since(listed);
    let ms = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis()
    };
    assert!(
        ms(listed_wall) <= ms(logged_at(&run.mcp_calls[0])),
        "Zerto listed the tag after the MCP server received the call\n{}",
        run.describe()
    );
    assert!(
        run.model_saw_after(CALL)
            .contains("rewind recover --vm jp-ubuntu --change toolu_e2e_broker_01"),
        "{}",
        run.describe()
    );
    let guard = d.recorded("the broker recorded it", |r| {
        r["op"] == "guard" && r["change"] == CALL
    });
    assert_eq!(guard["peer"]["uid"], 65534, "{guard}");
}

/// `rewind mcp` run as the agent's user with only `[broker] socket`: `checkpoint_vm` is
/// tagged by the broker as the MCP client, and the broker's trail names the user; the
/// operator-only tools are not served to it.
#[test]
fn rewind_mcp_as_the_agents_user_checkpoints_through_the_broker() {
    if !can_switch_users("rewind_mcp_as_the_agents_user_checkpoints_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let mut mcp = crate::mcp::Mcp::start_command(d.rewind_as_hook_user(&["mcp"]));
    assert!(
        !tool_names(&mut mcp).contains(&String::from("restore_vm")),
        "the whole-VM restore is offered to operators only"
    );
    let result = mcp.call(
        "checkpoint_vm",
        json!({"vm": "jp-ubuntu", "reason": "edit app.conf"}),
    );
    assert_eq!(result["isError"], false, "{result:#}");
    let out = &result["structuredContent"];
    assert_eq!(out["decision"], "confirmed", "{out:#}");
    let change = out["change"].as_str().expect("change").to_owned();
    let tag = out["vpgs"][0]["tag"].as_str().expect("tag");
    assert!(
        tag.starts_with("ai:mcp-")
            && tag.contains(" | mcp/mcp-test | edit app.conf | vm=jp-ubuntu | "),
        "{tag}"
    );
    assert!(out["vpgs"][0]["checkpoint"]["id"].is_string(), "{out:#}");
    assert_eq!(out["vms"][0]["name"], "jp-ubuntu", "{out:#}");
    let inserts = d.env.sim.inserts();
    assert_eq!(inserts.len(), 1, "{inserts:#?}");
    assert!(
        inserts[0].tag.starts_with(&format!("ai:{change} |")),
        "{inserts:#?}"
    );
    let guard = d.recorded("the broker recorded it", |r| {
        r["op"] == "guard" && r["change"] == json!(change)
    });
    assert_eq!(guard["peer"]["uid"], 65534, "{guard}");
    assert_eq!(guard["host"], "mcp/mcp-test", "{guard}");

    // Every other tool goes through the broker too: the lookups and the plan for the
    // agent's user; the restore and the FLR sessions are refused to it, nothing mounted.
    let found = mcp.call("find_vm", json!({"vm": "jp-ubuntu"}));
    assert_eq!(found["isError"], false, "{found:#}");
    let vpg = &found["structuredContent"]["vpgs"][0];
    assert_eq!(vpg["name"], "jp-ubuntu-vpg", "{found:#}");
    assert!(
        vpg["health"].is_string() && vpg["cadence_secs"].is_u64(),
        "{found:#}"
    );
    let listed = mcp.call(
        "list_checkpoints",
        json!({"vm": "jp-ubuntu", "change": change}),
    );
    assert_eq!(listed["isError"], false, "{listed:#}");
    assert_eq!(
        listed["structuredContent"]["vpgs"][0]["checkpoints"][0]["tag"], tag,
        "{listed:#}"
    );
    let plan = mcp.call(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": "/etc/app.conf", "change": change}),
    );
    assert_eq!(plan["isError"], false, "{plan:#}");
    let plan = &plan["structuredContent"];
    assert_eq!(plan["checkpoint"]["tag"], tag, "{plan:#}");
    let out = d.hook_dir.path().join("home");
    let refused = mcp.call(
        "recover_file",
        json!({
            "plan_id": plan["plan_id"],
            "confirm": true,
            "confirm_id": change,
            "out": out.display().to_string(),
        }),
    );
    assert_eq!(refused["isError"], true, "{refused:#}");
    assert!(
        refused.to_string().contains("may not recover"),
        "the broker names the refusal: {refused:#}"
    );
    assert!(!out.join("app.conf").exists(), "nothing written");
    let sessions = mcp.call("flr_sessions", json!({}));
    assert_eq!(sessions["isError"], true, "{sessions:#}");
    assert!(
        sessions.to_string().contains("may not flr-list"),
        "{sessions:#}"
    );
    assert!(d.env.sim.flr_sessions().is_empty(), "nothing was mounted");
    let trail = d.trail();
    for op in ["checkpoints", "plan", "recover", "flr-list"] {
        let record = trail
            .iter()
            .find(|r| r["op"] == op)
            .unwrap_or_else(|| panic!("the broker recorded {op}: {trail:#?}"));
        assert_eq!(record["peer"]["uid"], 65534, "{record}");
    }
}

/// `rewind mcp` run by an operator (root) with only `[broker] socket`: `recover_file` is
/// served through the broker with the bytes from before the change, and no FLR session stays.
#[test]
fn rewind_mcp_as_an_operator_restores_a_file_through_the_broker() {
    if !can_switch_users("rewind_mcp_as_an_operator_restores_a_file_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    d.env
        .sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", BEFORE)
        .expect("seed");
    let home = d.env.path("operator-home");
    std::fs::create_dir_all(&home).expect("home");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("REWIND_CONFIG", d.hook_config())
        .current_dir(&home)
        .arg("mcp");
    let mut mcp = crate::mcp::Mcp::start_command(cmd);
    assert!(
        tool_names(&mut mcp).contains(&String::from("restore_vm")),
        "an operator's session is offered the whole-VM restore"
    );
    let guarded = mcp.call(
        "checkpoint_vm",
        json!({"vm": "jp-ubuntu", "reason": "edit app.conf"}),
    );
    assert_eq!(
        guarded["structuredContent"]["decision"], "confirmed",
        "{guarded:#}"
    );
    let change = guarded["structuredContent"]["change"].clone();
    d.env
        .sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", b"broken\n")
        .expect("break");
    let plan = mcp.call(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": "/etc/app.conf", "change": change}),
    );
    let plan = &plan["structuredContent"];
    let restored = mcp.call(
        "recover_file",
        json!({
            "plan_id": plan["plan_id"],
            "confirm": true,
            "confirm_id": change,
            "out": home.display().to_string(),
        }),
    );
    assert_eq!(restored["isError"], false, "{restored:#}");
    assert_eq!(
        std::fs::read(home.join("app.conf")).expect("written"),
        BEFORE,
        "identical bytes: {restored:#}"
    );
    let sha = rewind::hex(&<sha2::Sha256 as sha2::Digest>::digest(BEFORE));
    assert_eq!(restored["structuredContent"]["sha256"], sha, "{restored:#}");
    assert!(
        restored["structuredContent"]["session"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{restored:#}"
    );
    eventually("every FLR session to be gone", || {
        d.env.sim.flr_sessions().is_empty()
    });
}

/// `rewind guard` as the agent's user with only `[broker] socket`: the broker tags it with
/// the user the kernel names, each run gets its own change id, and the broker's trail
/// records it; a user the broker's `guard_users` leaves out is refused, and nothing inserted.
/// `rewind vms` as the agents' user, with only `[broker] socket` in its configuration, lists
/// what the broker's ZVM protects, the same list the operator sees with the credentials.
#[test]
fn rewind_vms_as_another_user_goes_through_the_broker() {
    if !can_switch_users("rewind_vms_as_another_user_goes_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let through = support::run(d.rewind_as_hook_user(&["vms", "--json"]), b"");
    through.success();
    let direct = support::run(d.env.command(&["vms", "--json"]), b"");
    direct.success();
    assert!(
        through.json()["vms"]
            .as_array()
            .is_some_and(|vms| !vms.is_empty()),
        "{through:#?}"
    );
    assert_eq!(through.json(), direct.json());
    let record = d.recorded("the broker recorded the request", |r| r["op"] == "vms");
    assert_eq!(record["peer"]["uid"], 65534, "{record}");
}

#[test]
fn rewind_guard_as_another_user_goes_through_the_broker() {
    if !can_switch_users("rewind_guard_as_another_user_goes_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let caller = std::fs::read_to_string(d.hook_config()).expect("hook config");
    assert!(
        !caller.contains("[zvm]") && !caller.contains("password"),
        "{caller}"
    );
    let readable = regex::Regex::new(r"^manual-\d{8}T\d{6}Z-[0-9a-f]{12}$").expect("regex");
    let mut changes = Vec::new();
    for _ in 0..2 {
        let run = support::run(
            d.rewind_as_hook_user(&["guard", "--vm", "jp-ubuntu", "--json"]),
            b"",
        );
        run.success();
        let out = run.json();
        assert_eq!(out["confirmed"], true, "{run:#?}");
        let change = out["change"].as_str().expect("change").to_owned();
        assert!(readable.is_match(&change), "readable and unique: {change}");
        let tag = out["tag"].as_str().expect("tag");
        assert!(
            tag.starts_with(&format!(
                "ai:{change} | cli/{HOOK_USER} | manual | vm=jp-ubuntu | "
            )),
            "the broker names the user: {tag}"
        );
        assert!(out["vpgs"][0]["checkpoint"]["id"].is_string(), "{run:#?}");
        changes.push(change);
    }
    assert_ne!(changes[0], changes[1], "each run its own change id");
    let inserts = d.env.sim.inserts();
    assert_eq!(inserts.len(), 2, "{inserts:#?}");
    assert!(
        inserts.iter().all(|i| i.listed_at.is_some()),
        "{inserts:#?}"
    );
    let record = d.recorded("the broker recorded the guard", |r| {
        r["op"] == "guard" && r["change"] == changes[0].as_str()
    });
    assert_eq!(record["peer"]["uid"], 65534, "{record}");
    assert_eq!(record["tool"], "rewind guard", "{record}");
    assert_eq!(record["decision"], "context", "{record}");

    // Guarding only for another user: this one is refused before anything is inserted.
    if let Some(mut broker) = d.broker.take() {
        broker.kill().expect("kill");
        let _ = broker.wait();
    }
    std::fs::remove_file(&d.socket).expect("the old socket");
    let mut config = std::fs::read_to_string(&d.env.config).expect("config");
    config.push_str("\n[broker]\nguard_users = [\"daemon\"]\n");
    std::fs::write(&d.env.config, config).expect("config");
    d.start_broker();
    let refused = support::run(d.rewind_as_hook_user(&["guard", "--vm", "jp-ubuntu"]), b"");
    assert_eq!(refused.code, 1, "{refused:#?}");
    assert!(
        refused.stderr.contains("may not guard")
            && refused.stderr.contains(&d.socket.display().to_string()),
        "{refused:#?}"
    );
    assert_eq!(d.env.sim.inserts().len(), 2, "nothing more was inserted");
}

/// `rewind restore-vm` with only `[broker] socket`: the agent's user is refused before
/// anything starts (and the refusal recorded with its uid); an operator's restore is run by
/// the broker with its credentials, while `--verify` runs on the operator's side (with the
/// operator's environment), and each step lands in the broker's trail under the operator.
#[test]
fn restore_vm_through_the_broker_is_for_operators_and_verifies_on_their_side() {
    if !can_switch_users("restore_vm_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let (run, _) = d.hook(&mutating("toolu_rvm"));
    assert_eq!(run.decision(), "none", "guarded: {run:#?}");
    let broken = d.env.sim.change_vm("jp-ubuntu").expect("the VM exists");

    let restore = ["restore-vm", "jp-ubuntu", "--change", "toolu_rvm", "--yes"];
    let refused = support::run(d.rewind_as_hook_user(&restore), b"");
    assert_eq!(refused.code, 3, "refused, nothing started: {refused:#?}");
    assert!(
        refused.stderr.contains("may not restore-vm"),
        "{refused:#?}"
    );
    assert_eq!(d.env.sim.whole_vm_operations(), (0, 0));
    let refusal = d.recorded("the refused restore is recorded", |r| {
        r["op"] == "restore-vm"
    });
    assert_eq!(refusal["peer"]["uid"], 65534, "{refusal}");

    let operator_restore = |verify: &str| {
        let home = d.env.path("operator-home");
        std::fs::create_dir_all(&home).expect("home");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("REWIND_CONFIG", d.hook_config())
            .env("OPERATOR_SIDE", "yes")
            .current_dir(&home)
            .args(restore)
            .args(["--json", "--verify", verify]);
        support::run(cmd, b"")
    };
    let rolled_back = operator_restore("touch \"$HOME/verified\"; exit 1");
    assert_eq!(rolled_back.code, 4, "{rolled_back:#?}");
    assert!(
        d.env.path("operator-home/verified").exists(),
        "the verification ran where the operator is: {rolled_back:#?}"
    );
    assert_eq!(d.env.sim.vm_marker("jp-ubuntu"), Some(broken));
    assert_eq!(rolled_back.json()["outcome"], "rolled-back");

    let committed = operator_restore("test \"$OPERATOR_SIDE\" = yes");
    committed.success();
    let doc = committed.json();
    assert_eq!(doc["outcome"], "committed", "{doc:#}");
    assert_eq!(doc["user"], "root", "{doc:#}");
    assert!(
        committed
            .stderr
            .contains("ready:       the VM is ready for commit"),
        "the broker's lines reach the operator: {committed:#?}"
    );
    assert_eq!(
        d.env.sim.vm_marker("jp-ubuntu"),
        Some(0),
        "back before the change"
    );
    let done = d.recorded("the committed restore is recorded", |r| {
        r["op"] == "restore-vm" && r["decision"] == "vm-restored"
    });
    assert_eq!(done["peer"]["uid"], 0, "{done}");
    assert_eq!(done["change"], "toolu_rvm", "{done}");
}

/// An operator's `rewind restore-vm` killed while the broker runs the restore: the broker
/// sees its operator gone and rolls the restore back at once (not only after Zerto's wait).
#[test]
fn a_killed_operator_side_makes_the_broker_roll_the_restore_back() {
    if !can_switch_users("a_killed_operator_side") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let (run, _) = d.hook(&mutating("toolu_rvk"));
    assert_eq!(run.decision(), "none", "guarded: {run:#?}");
    let broken = d.env.sim.change_vm("jp-ubuntu").expect("the VM exists");
    let home = d.env.path("operator-home");
    std::fs::create_dir_all(&home).expect("home");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rewind"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("REWIND_CONFIG", d.hook_config())
        .current_dir(&home)
        .args(["restore-vm", "jp-ubuntu", "--change", "toolu_rvk", "--yes"])
        .args([
            "--rollback-after",
            "24h",
            "--verify",
            "touch verifying; sleep 60",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rewind starts");
    eventually("the verification to start", || {
        home.join("verifying").exists()
    });
    assert_eq!(d.env.sim.whole_vm_operations().0, 1, "ready for commit");
    child.kill().expect("kill");
    let _ = child.wait();
    eventually("the broker to roll back", || {
        d.env.sim.whole_vm_operations() == (0, 0)
    });
    assert_eq!(d.env.sim.vm_marker("jp-ubuntu"), Some(broken));
    let rolled_back = |r: &Value| r["op"] == "restore-vm" && r["decision"] == "rolled-back";
    eventually("the rollback's end to be recorded", || {
        d.trail().iter().any(rolled_back)
    });
    let rolled = d.recorded("the rollback is recorded", |r| {
        r["op"] == "restore-vm" && r["decision"] == "rolled-back"
    });
    assert_eq!(rolled["peer"]["uid"], 0, "{rolled}");
}

/// The names `tools/list` offers.
fn tool_names(mcp: &mut crate::mcp::Mcp) -> Vec<String> {
    let listed = mcp.request("tools/list", json!({}));
    listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Through a broker, the hook reads the protected-VM net the broker publishes beside its
/// socket, not the agent's own cache (which the agent could empty): after a listing, a
/// program no grammar reads that names a protected VM asks, whatever the agent's cache says;
/// a published file others could change is not believed.
#[test]
fn the_hook_reads_the_net_the_broker_publishes_not_the_agents_cache() {
    if !can_switch_users("the_hook_reads_the_net_the_broker_publishes") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    operator(&d, &["vms"]).success();
    let published = d.socket.with_file_name("protected-vms");
    let text = std::fs::read_to_string(&published).expect("the broker published its net");
    assert!(text.lines().any(|l| l == "jp-ubuntu"), "{text}");
    // The agent empties the net in its own cache.
    let cache = d.hook_dir.path().join("home/.cache/rewind");
    std::fs::create_dir_all(&cache).expect("cache");
    std::fs::write(cache.join("protected-vms"), "").expect("emptied");
    let command = |id: &str| {
        hook_input(
            "Bash",
            &json!({"command": "frobnicate jp-ubuntu --restart"}),
            id,
        )
    };
    let (run, _) = d.hook(&command("toolu_net1"));
    assert_eq!(run.decision(), "ask", "{run:#?}");
    assert!(run.reason().contains("jp-ubuntu"), "{run:#?}");
    set_mode(&published, 0o666);
    let (run, _) = d.hook(&command("toolu_net2"));
    assert_eq!(
        run.decision(),
        "none",
        "a net anyone could change is not believed: {run:#?}"
    );
}
