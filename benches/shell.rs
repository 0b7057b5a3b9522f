//! The shell classifier on the agent's hot path: every `Bash` call now reaches the hook. A
//! local command (no remote program) through the whole `rewind hook` process, beside
//! `/bin/true` and `rewind --version` measured in the same run (interleaved); a read-only
//! `ssh` command (parsed, remote command judged, no resolution); the cost of one `ssh -G`
//! (what resolving an `~/.ssh/config` alias adds to a mutating call); and the in-process
//! analysis alone.
//!
//! `cargo bench --bench shell` (RUNS=n to change the sample count; default 300).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use rewind::shell::{Dialect, ShellCatalog, analyse};
use support::{median, ms, private, rewind, time};

/// A 200-character local command, as an agent types it.
const LOCAL: &str = "cd /home/dev/src/rewind && RUST_BACKTRACE=1 cargo test --locked --workspace --all-features -- --test-threads=2 shell:: 2>&1 | tail -n 40 && git status --short && git diff --stat";
const READ_ONLY_SSH: &str = "ssh -p 2222 -o ConnectTimeout=5 deploy@jp-ubuntu 'journalctl -u app --since today | tail -n 50'";

fn bash_call(command: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": "b",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "bench"},
        "tool_use_id": "toolu_bench",
    })
    .to_string()
    .into_bytes()
}

/// A named way to run one process and time it.
type Case<'a> = (&'static str, Box<dyn Fn() -> Duration + 'a>);

fn main() {
    assert_eq!(LOCAL.len(), 200, "the local command is 200 characters");
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(300);
    let home = tempfile::tempdir().expect("tempdir");
    let config = home.path().join("config.toml");
    std::fs::write(&config, "[hook]\nbudget_secs = 150\n").expect("config");
    let local = bash_call(LOCAL);
    let read_only = bash_call(READ_ONLY_SSH);

    let hook = || {
        let mut cmd = rewind();
        private(&mut cmd, home.path(), &config);
        cmd.arg("hook");
        cmd
    };
    let ssh_g = || {
        let mut cmd = Command::new("ssh");
        cmd.args(["-G", "-F", "/dev/null", "jp-ubuntu"]);
        cmd
    };
    let has_ssh = Command::new("ssh").arg("-V").output().is_ok();
    let mut cases: Vec<Case<'_>> = vec![
        (
            "baseline: /bin/true",
            Box::new(|| time(&mut Command::new("true"), b"", 0)),
        ),
        (
            "rewind --version",
            Box::new(|| time(rewind().arg("--version"), b"", 0)),
        ),
        (
            "rewind hook, Bash, local command",
            Box::new(|| time(&mut hook(), &local, 0)),
        ),
        (
            "rewind hook, Bash, read-only ssh",
            Box::new(|| time(&mut hook(), &read_only, 0)),
        ),
    ];
    if has_ssh {
        cases.push((
            "one `ssh -G jp-ubuntu`",
            Box::new(|| time(&mut ssh_g(), b"", 0)),
        ));
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); cases.len()];
    for _ in 0..runs {
        for (i, (_, case)) in cases.iter().enumerate() {
            samples[i].push(case());
        }
    }
    let medians: Vec<Duration> = samples.into_iter().map(median).collect();
    let baseline = medians[0];
    println!("whole-process wall time, median of {runs} interleaved runs");
    for ((name, _), m) in cases.iter().zip(&medians) {
        println!(
            "  {name:<36} {:>10}   x{:.2} of /bin/true",
            ms(*m),
            m.as_secs_f64() / baseline.as_secs_f64()
        );
    }
    if !has_ssh {
        println!("  (no ssh on PATH: the cost of `ssh -G` was not measured)");
    }

    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog");
    println!("in-process analysis, median of {runs} runs (catalog loaded once)");
    for (name, command) in [("local command", LOCAL), ("read-only ssh", READ_ONLY_SSH)] {
        let mut took = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            let analysis = analyse(command, Dialect::Posix, &catalog, None);
            took.push(started.elapsed());
            std::hint::black_box(analysis);
        }
        let micros = median(took).as_secs_f64() * 1e6;
        println!("  {name:<36} {micros:>8.1} µs");
    }
}
