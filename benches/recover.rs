//! Time from `rewind recover` starting to the file being written, against the sum of the
//! simulator's configured latencies at time scale 1 (the lab's 20 s mount); the difference is
//! what `rewind` adds. Also the whole run, which includes the unmount (5 s) being waited out.
//!
//! `cargo bench --bench recover` (RUNS=n; default 3).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{Lab, median, ms};

/// The lab scenario's `mount_secs` and `unmount_secs`.
const MOUNT: Duration = Duration::from_secs(20);
const UNMOUNT: Duration = Duration::from_secs(5);

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let lab = Lab::start(1.0);
    let command = |args: &[&str]| lab.rewind(args);
    let guarded = command(&["guard", "--vm", "jp-ubuntu", "--change", "bench-recover"])
        .stdout(Stdio::null())
        .status()
        .expect("guard");
    assert!(guarded.success());

    let mut to_written = Vec::new();
    let mut totals = Vec::new();
    for n in 0..runs {
        let out = lab.home.path().join(format!("out-{n}"));
        let file = out.join("app.conf");
        let started = Instant::now();
        let mut child = command(&[
            "recover",
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/app.conf",
            "--change",
            "bench-recover",
            "--yes",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("recover");
        let mut written = None;
        let status = loop {
            if written.is_none() && file.exists() {
                written = Some(started.elapsed());
            }
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(status.success());
        to_written.push(written.unwrap_or_else(|| started.elapsed()));
        totals.push(started.elapsed());
    }
    let written = median(to_written);
    let total = median(totals);
    println!("rewind recover at time scale 1, median of {runs} runs");
    println!(
        "  start to file written: {}   configured mount latency {}   rewind adds {}",
        ms(written),
        ms(MOUNT),
        ms(written.saturating_sub(MOUNT))
    );
    println!(
        "  whole run incl. unmount: {}   configured mount + unmount {}   rewind adds {}",
        ms(total),
        ms(MOUNT + UNMOUNT),
        ms(total.saturating_sub(MOUNT + UNMOUNT))
    );
}
