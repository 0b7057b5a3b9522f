//! What the benchmarks share: running a command as a whole process, medians, a private home.

#![allow(dead_code, reason = "each benchmark uses part of this")]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The release binary under test.
pub(crate) fn rewind() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rewind"))
}

/// Runs `cmd` to the end with `stdin`; returns its wall time, failing loudly on a bad exit.
pub(crate) fn time(cmd: &mut Command, stdin: &[u8], expect_code: i32) -> Duration {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("stdin written");
    let out = child.wait_with_output().expect("ends");
    let elapsed = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(expect_code),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

/// The median of some durations.
pub(crate) fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Milliseconds with two decimals.
pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The lab simulator at `time_scale` and a config for it, under a private home.
pub(crate) struct Lab {
    pub(crate) home: tempfile::TempDir,
    pub(crate) sim: rewind::sim::Sim,
    pub(crate) config: std::path::PathBuf,
}

impl Lab {
    pub(crate) fn start(time_scale: f64) -> Lab {
        let home = tempfile::tempdir().expect("tempdir");
        let mut options =
            rewind::sim::SimOptions::new(rewind::sim::Scenario::lab(), home.path().join("sim"));
        options.time_scale = time_scale;
        let sim = rewind::sim::Sim::start(options).expect("simulator");
        let config = home.path().join("config.toml");
        std::fs::write(&config, sim.zvm_config()).expect("config");
        Lab { home, sim, config }
    }

    /// `rewind <args>` against this lab.
    pub(crate) fn rewind(&self, args: &[&str]) -> Command {
        let mut cmd = rewind();
        private(&mut cmd, self.home.path(), &self.config);
        cmd.env("REWIND_ZVM_PASSWORD", self.sim.password())
            .args(args);
        cmd
    }
}

/// Points `rewind` at a private home and config so no user state is read or written.
pub(crate) fn private(cmd: &mut Command, home: &Path, config: &Path) {
    cmd.env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("REWIND_CONFIG", config);
}
