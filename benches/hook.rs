//! Whole-process latency and peak memory of `rewind hook` on calls that need no network:
//! a read-only tool and an unlisted tool, beside baseline processes measured in the same run
//! (interleaved, so machine noise hits all of them alike).
//!
//! `cargo bench --bench hook` (RUNS=n to change the sample count; default 300).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod support;

use std::process::Command;
use std::time::Duration;

use support::{median, ms, private, rewind, time};

const READ_ONLY: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"mcp__ssh__read_file","tool_input":{"host":"jp-ubuntu","path":"/etc/app.conf"},"tool_use_id":"toolu_1","mcp_server":{"name":"ssh"}}"#;
const UNLISTED: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"mcp__weather__forecast","tool_input":{"city":"Oslo"},"tool_use_id":"toolu_2"}"#;

/// A named way to run one process and time it.
type Case<'a> = (&'static str, Box<dyn Fn() -> Duration + 'a>);

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(300);
    let home = tempfile::tempdir().expect("tempdir");
    let config = home.path().join("config.toml");
    std::fs::write(&config, "[hook]\nbudget_secs = 150\n").expect("config");

    let hook = || {
        let mut cmd = rewind();
        private(&mut cmd, home.path(), &config);
        cmd.arg("hook");
        cmd
    };
    let cases: Vec<Case<'_>> = vec![
        (
            "baseline: /bin/true",
            Box::new(|| time(&mut Command::new("true"), b"", 0)),
        ),
        (
            "baseline: cat (reads stdin)",
            Box::new(|| time(&mut Command::new("cat"), READ_ONLY, 0)),
        ),
        (
            "rewind --version",
            Box::new(|| time(rewind().arg("--version"), b"", 0)),
        ),
        (
            "rewind hook, read-only tool",
            Box::new(|| time(&mut hook(), READ_ONLY, 0)),
        ),
        (
            "rewind hook, unlisted tool",
            Box::new(|| time(&mut hook(), UNLISTED, 0)),
        ),
    ];
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
            "  {name:<32} {:>10}   x{:.1} of /bin/true",
            ms(*m),
            m.as_secs_f64() / baseline.as_secs_f64()
        );
    }

    peak_memory(home.path(), &config);
}

/// Peak resident memory, from GNU time's %M (KiB), when it is installed.
fn peak_memory(home: &std::path::Path, config: &std::path::Path) {
    let gnu_time = std::path::Path::new("/usr/bin/time");
    if gnu_time.exists() {
        let peak = |args: &[&str], stdin: &[u8], rewind_env: bool| -> u64 {
            let mut cmd = Command::new(gnu_time);
            cmd.args(["-f", "%M"]).args(args);
            if rewind_env {
                private(&mut cmd, home, config);
            }
            let out = {
                use std::io::Write as _;
                let mut child = cmd
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("time starts");
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(stdin)
                    .expect("write");
                child.wait_with_output().expect("time ends")
            };
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
                .expect("GNU time printed %M")
        };
        let bin = env!("CARGO_BIN_EXE_rewind");
        let max_of = |f: &dyn Fn() -> u64| (0..20).map(|_| f()).max().unwrap_or(0);
        println!("peak resident memory, max of 20 runs (GNU time %M)");
        println!(
            "  {:<32} {:>7} KiB",
            "baseline: /bin/true",
            max_of(&|| peak(&["true"], b"", false))
        );
        println!(
            "  {:<32} {:>7} KiB",
            "rewind hook, read-only tool",
            max_of(&|| peak(&[bin, "hook"], READ_ONLY, true))
        );
        println!(
            "  {:<32} {:>7} KiB",
            "rewind hook, unlisted tool",
            max_of(&|| peak(&[bin, "hook"], UNLISTED, true))
        );
    } else {
        println!("peak memory not measured: /usr/bin/time (GNU time) is not installed");
    }
}
