//! A test environment: the real simulator over HTTPS on 127.0.0.1, a temporary home, a config
//! pointing at the simulator, and the real `rewind` binary run as a process.

#![allow(
    dead_code,
    reason = "shared by several test modules; not every helper is used by every one"
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use rewind::sim::{Fault, Scenario, Sim, SimCertificate, SimOptions};
use tempfile::TempDir;

/// The simulator's fixed clock for deterministic snapshots.
pub(crate) const FROZEN_START: &str = "2026-03-02T09:00:00Z";

/// How a test wants its simulator and config.
pub(crate) struct Setup {
    pub(crate) time_scale: f64,
    pub(crate) frozen: bool,
    /// Put the simulator's certificate in `ca_cert` (false: TLS must refuse it).
    pub(crate) trust_ca: bool,
    /// Point the config at this URL instead of the simulator (e.g. a closed port).
    pub(crate) url: Option<String>,
    /// Extra `[hook]` lines.
    pub(crate) hook: String,
    pub(crate) faults: Vec<Fault>,
    pub(crate) password: Option<String>,
    /// Another scenario than the shipped lab.
    pub(crate) scenario: Option<Scenario>,
    /// The certificate the simulator presents.
    pub(crate) certificate: SimCertificate,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            time_scale: 100.0,
            frozen: false,
            trust_ca: true,
            url: None,
            hook: String::from("budget_secs = 30"),
            faults: Vec::new(),
            password: None,
            scenario: None,
            certificate: SimCertificate::default(),
        }
    }
}

/// What a run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
    pub(crate) ended: Instant,
}

impl Run {
    #[track_caller]
    pub(crate) fn success(&self) -> &Self {
        assert_eq!(self.code, 0, "rewind failed:\n{self:#?}");
        self
    }

    #[track_caller]
    pub(crate) fn failure(&self) -> &Self {
        assert_ne!(self.code, 0, "rewind should have failed:\n{self:#?}");
        self
    }

    /// stdout parsed as JSON (the hook's decision).
    #[track_caller]
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self:#?}"))
    }

    /// The hook's permission decision, `"none"` when there is none.
    pub(crate) fn decision(&self) -> String {
        self.json()
            .pointer("/hookSpecificOutput/permissionDecision")
            .and_then(|v| v.as_str())
            .unwrap_or("none")
            .to_owned()
    }

    pub(crate) fn reason(&self) -> String {
        let json = self.json();
        json.pointer("/hookSpecificOutput/permissionDecisionReason")
            .or_else(|| json.pointer("/hookSpecificOutput/additionalContext"))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

/// A running simulator and a home for `rewind`.
pub(crate) struct TestEnv {
    pub(crate) dir: TempDir,
    pub(crate) sim: Sim,
    pub(crate) config: PathBuf,
}

impl TestEnv {
    pub(crate) fn start() -> TestEnv {
        Self::with(Setup::default())
    }

    #[expect(
        clippy::needless_pass_by_value,
        reason = "call sites build the Setup inline"
    )]
    pub(crate) fn with(setup: Setup) -> TestEnv {
        Self::with_ref(&setup)
    }

    fn with_ref(setup: &Setup) -> TestEnv {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut scenario = setup.scenario.clone().unwrap_or_else(Scenario::lab);
        if setup.frozen {
            scenario = scenario.with_start(rewind::time::parse_utc(FROZEN_START).expect("time"));
        }
        let mut options = SimOptions::new(scenario, dir.path().join("sim"));
        options.port = 0;
        options.time_scale = setup.time_scale;
        options.frozen_clock = setup.frozen;
        options.certificate = setup.certificate.clone();
        let sim = Sim::start(options).expect("simulator starts");
        for fault in &setup.faults {
            sim.add_fault(fault.clone());
        }
        let config = dir.path().join("config.toml");
        let env = TestEnv { dir, sim, config };
        env.write_config(setup);
        env
    }

    /// Rewrites the config for `setup` (the simulator stays).
    pub(crate) fn write_config(&self, setup: &Setup) {
        let url = setup.url.clone().unwrap_or_else(|| self.sim.url());
        let zvm = self.sim.zvm_config_for(&url, setup.trust_ca);
        let text = format!(
            "{zvm}\n[hook]\n{}\naudit_log = {:?}\n",
            setup.hook,
            self.path("state/audit.jsonl").display().to_string(),
        );
        std::fs::write(&self.config, text).expect("write config");
        self.password(setup.password.as_deref().unwrap_or(self.sim.password()));
    }

    fn password(&self, password: &str) {
        std::fs::write(self.path("password"), password).expect("write password");
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The binary with a clean environment: a temporary HOME, the config, no proxies.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("REWIND_CONFIG", &self.config)
            .env(
                "REWIND_ZVM_PASSWORD",
                std::fs::read_to_string(self.path("password")).expect("password"),
            )
            .current_dir(self.dir.path())
            .args(args);
        cmd
    }

    /// Runs `rewind <args>` with `stdin`.
    pub(crate) fn run(&self, args: &[&str], stdin: &[u8]) -> Run {
        run(self.command(args), stdin)
    }

    /// Runs `rewind hook` with `stdin`.
    pub(crate) fn hook(&self, stdin: &[u8]) -> Run {
        self.run(&["hook"], stdin)
    }

    /// What an agent host must pass on to the `rewind hook` it runs: every variable
    /// [`Self::command`] sets except `HOME` and `PATH`, which stay the host's own.
    pub(crate) fn hook_env(&self) -> Vec<(String, String)> {
        self.command(&["hook"])
            .get_envs()
            .filter_map(|(key, value)| {
                let key = key.to_str().expect("UTF-8 variable name");
                let value = value?.to_str().expect("UTF-8 temporary paths");
                (!matches!(key, "HOME" | "PATH")).then(|| (key.to_owned(), value.to_owned()))
            })
            .collect()
    }
}

/// The `rewind` binary under test, by its canonical path (for a host's hook entry).
pub(crate) fn rewind_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rewind"))
        .canonicalize()
        .expect("the rewind binary exists")
}

/// The `rewind-hook` binary under test (what `install` writes into a host's settings), by its
/// canonical path.
pub(crate) fn hook_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rewind-hook"))
        .canonicalize()
        .expect("the rewind-hook binary exists")
}

/// A stand-in `ssh` first on an agent host's `PATH`, so a shell call that reaches for a VM
/// touches nothing: it answers `ssh -G <host>` as OpenSSH does for a host without
/// configuration (the classifier resolves aliases with it), and otherwise appends
/// `<epoch ms> <arguments>` to its log and prints `fake-ssh-ran`.
pub(crate) struct FakeSsh {
    bin: PathBuf,
    log: PathBuf,
}

impl FakeSsh {
    /// Writes `<root>/bin/ssh` and its log path `<root>/ssh-runs.log`.
    pub(crate) fn install(root: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let bin = root.join("bin");
        let log = root.join("ssh-runs.log");
        std::fs::create_dir_all(&bin).expect("create the fake ssh's directory");
        let script = format!(
            "#!/bin/sh\n\
             if [ \"$1\" = -G ]; then for a; do h=$a; done; echo \"hostname $h\"; exit 0; fi\n\
             printf '%s %s\\n' \"$(date +%s%3N)\" \"$*\" >> '{}'\n\
             echo fake-ssh-ran\n",
            log.display()
        );
        let ssh = bin.join("ssh");
        std::fs::write(&ssh, script).expect("write the fake ssh");
        std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).expect("chmod +x");
        Self { bin, log }
    }

    /// `PATH` with the fake first, then this process's own.
    pub(crate) fn path_var(&self) -> String {
        format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// Every run but `-G`, in order: `(epoch ms, arguments joined by spaces)`.
    pub(crate) fn runs(&self) -> Vec<(u128, String)> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let (at, args) = line.split_once(' ').expect("time and arguments");
                (at.parse().expect("milliseconds"), args.to_owned())
            })
            .collect()
    }
}

/// The change id in a checkpoint tag (`ai:<id> | …`).
#[track_caller]
pub(crate) fn tag_change(tag: &str) -> &str {
    rewind::tag::change_of(tag).unwrap_or_else(|| panic!("no change id in the tag {tag:?}"))
}

/// An `Instant` of this process as whole milliseconds since the Unix epoch, rounded down (the
/// grain the fake ssh and the stub logs stamp at).
pub(crate) fn epoch_ms(at: Instant) -> u128 {
    let (now, wall) = (Instant::now(), SystemTime::now());
    (wall - now.duration_since(at))
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis()
}

/// Runs a command to completion with `stdin`.
pub(crate) fn run(mut cmd: Command, stdin: &[u8]) -> Run {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rewind starts");
    let mut input = child.stdin.take().expect("stdin");
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().expect("rewind ends");
    let ended = Instant::now();
    let _ = writer.join();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: ended - started,
        ended,
    }
}

/// A hook call for `tool` with `input`, as Claude Code sends it.
pub(crate) fn hook_input(tool: &str, input: &serde_json::Value, tool_use_id: &str) -> Vec<u8> {
    let server = tool
        .strip_prefix("mcp__")
        .and_then(|r| r.split("__").next());
    let mut call = serde_json::json!({
        "session_id": "5e55i0n0-0000-4000-8000-000000000001",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input.clone(),
        "tool_use_id": tool_use_id,
    });
    if let Some(server) = server {
        call["mcp_server"] = serde_json::json!({"name": server, "source": "project"});
    }
    serde_json::to_vec(&call).expect("json")
}

/// A 127.0.0.1 URL where nothing listens: port 1, which no unprivileged process can bind.
pub(crate) fn closed_port_url() -> String {
    String::from("https://127.0.0.1:1")
}

/// Waits (bounded) until `check` holds; for state the simulator reaches asynchronously.
#[track_caller]
pub(crate) fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {what}");
}

/// Seconds since the Unix epoch (for unique names).
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether `path` exists.
pub(crate) fn exists(path: &Path) -> bool {
    path.exists()
}
