//! The newcomer's quickstart in one terminal: `rewind sim --background` writes a configuration
//! for itself, and every later command of the same user (one environment: a temporary HOME and
//! XDG directories, no `REWIND_CONFIG`, no password variable) works with nothing edited.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Run, eventually, hook_bin, hook_input, run};

/// One user's environment: a home, cache and state directories, nothing else.
struct User {
    dir: tempfile::TempDir,
}

impl User {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        Self { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("XDG_STATE_HOME", self.path("state"))
            .current_dir(self.dir.path());
    }

    fn run(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
        self.env(&mut cmd);
        cmd.args(args);
        run(cmd, b"")
    }

    fn config(&self) -> PathBuf {
        self.path("home/.config/rewind/config.toml")
    }

    /// The pid `sim.json` records, if any.
    fn sim_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.path("state/rewind/sim.json")).ok()?;
        let record: serde_json::Value = serde_json::from_str(&text).ok()?;
        i32::try_from(record["pid"].as_u64()?).ok()
    }
}

impl Drop for User {
    /// A failed test leaves no simulator behind.
    fn drop(&mut self) {
        if let Some(pid) = self.sim_pid() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

fn url_in(config: &Path) -> String {
    let text = std::fs::read_to_string(config).expect("config");
    text.lines()
        .find_map(|l| l.strip_prefix("url = "))
        .expect("a url")
        .trim_matches('"')
        .to_owned()
}

#[test]
fn the_quickstart_runs_in_one_terminal_with_nothing_edited() {
    let user = User::new();
    let started = user.run(&["sim", "--background", "--port", "0", "--time-scale", "100"]);
    started.success();
    assert!(
        started.stdout.contains("rewind sim: wrote ")
            && started.stdout.contains("in the background")
            && started.stdout.contains("`rewind sim stop`"),
        "{started:#?}"
    );
    let config = std::fs::read_to_string(user.config()).expect("a configuration written");
    assert!(config.starts_with("# Written by `rewind sim`"), "{config}");
    assert!(
        !config.contains("zerto-sim"),
        "the password is not inline: {config}"
    );
    let secret = user.path("home/.config/rewind/config.sim-password");
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&secret).expect("meta").permissions()
        ) & 0o777,
        0o600
    );

    let vms = user.run(&["vms"]);
    vms.success();
    assert!(vms.stdout.contains("jp-ubuntu"), "{vms:#?}");
    let before = user.run(&["doctor"]);
    assert_eq!(before.code, 0, "{before:#?}");
    assert!(
        before
            .stdout
            .contains("next  hook: not installed yet: `rewind install --host claude-code`"),
        "{before:#?}"
    );
    user.run(&["install", "--host", "claude-code"]).success();
    let doctor = user.run(&["doctor"]);
    assert_eq!(doctor.code, 0, "{doctor:#?}");
    assert!(!doctor.stdout.contains("FAIL"), "{doctor:#?}");

    let guard = user.run(&["guard", "--vm", "jp-ubuntu", "--change", "quickstart-1"]);
    guard.success();
    assert!(guard.stdout.contains("checkpoint"), "{guard:#?}");

    // The hook the host runs, with the host's environment (not the password's variable).
    let mut hook = Command::new(hook_bin());
    user.env(&mut hook);
    hook.arg("hook");
    let decided = run(
        hook,
        &hook_input(
            "Bash",
            &serde_json::json!({"command": "ssh jp-ubuntu 'sudo systemctl restart app'"}),
            "toolu_quickstart_2",
        ),
    );
    assert_eq!(decided.code, 0, "{decided:#?}");
    assert!(
        decided.reason().contains("checkpoint"),
        "the call goes on with a checkpoint: {decided:#?}"
    );

    let out = user.path("restored");
    std::fs::create_dir_all(&out).expect("out");
    let recovered = user.run(&[
        "recover",
        "--vm",
        "jp-ubuntu",
        "--change",
        "quickstart-1",
        "--path",
        "/etc/hostname",
        "--out",
        out.to_str().expect("UTF-8"),
        "--yes",
    ]);
    recovered.success();
    assert_eq!(
        std::fs::read_to_string(out.join("hostname")).expect("restored"),
        "jp-ubuntu\n"
    );

    let pid = user.sim_pid().expect("recorded");
    let stopped = user.run(&["sim", "stop"]);
    stopped.success();
    assert!(
        stopped.stdout.contains(&format!(
            "stopped the simulator on {}",
            url_in(&user.config())
        )),
        "{stopped:#?}"
    );
    // Ended (reaped by whoever adopted it, a moment later).
    eventually("the simulator's process ends", || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    let again = user.run(&["sim", "stop"]);
    again.success();
    assert!(
        again.stdout.contains("no simulator is running"),
        "{again:#?}"
    );
}

/// A restart on another port rewrites the configuration the simulator wrote, and a file of
/// the user's own is never touched.
#[test]
fn a_restart_keeps_its_own_configuration_right_and_leaves_the_users_alone() {
    let user = User::new();
    user.run(&["sim", "--background", "--port", "0"]).success();
    let first = url_in(&user.config());
    user.run(&["sim", "stop"]).success();
    user.run(&["sim", "--background", "--port", "0"]).success();
    let second = url_in(&user.config());
    assert_ne!(first, second, "a free port is another port");
    user.run(&["vms"]).success();
    let busy = user.run(&["sim", "--background", "--port", "0"]);
    assert_eq!(busy.code, 1, "{busy:#?}");
    assert!(busy.stderr.contains("already runs"), "{busy:#?}");
    user.run(&["sim", "stop"]).success();

    let own = "[zvm]\nurl = \"https://zvm.example\"\npassword_env = \"P\"\n";
    std::fs::write(user.config(), own).expect("write");
    let started = user.run(&["sim", "--background", "--port", "0"]);
    started.success();
    assert!(
        started
            .stdout
            .contains("is your own configuration and stays as it is"),
        "{started:#?}"
    );
    assert_eq!(std::fs::read_to_string(user.config()).expect("config"), own);
    user.run(&["sim", "stop"]).success();

    let elsewhere = user.path("lab.toml");
    let written = user.run(&[
        "sim",
        "--background",
        "--port",
        "0",
        "--write-config",
        elsewhere.to_str().expect("UTF-8"),
    ]);
    written.success();
    let found = user.run(&[
        "--config",
        elsewhere.to_str().expect("UTF-8"),
        "find",
        "db01",
    ]);
    user.run(&["sim", "stop"]).success();
    found.success();
}
