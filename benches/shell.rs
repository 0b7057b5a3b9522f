//! What the shell classifier adds beside the whole-process figures of `benches/hook.rs`
//! (which runs a local `Bash` command and a read-only `ssh` command through `rewind hook`
//! against the floor binary): the in-process analysis alone. Resolving an `~/.ssh/config`
//! alias reads the file in process (it used to run `ssh -G`).
//!
//! `cargo bench --bench shell` (RUNS=n to change the sample count; default 200).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod support;

use std::time::Instant;

use rewind::inventory::Inventory;
use rewind::shell::{Dialect, ShellCatalog, analyse};
use support::median;

/// A local command of 177 characters, as an agent types it (the one `benches/hook.rs` runs).
const LOCAL: &str = "cd /home/dev/src/rewind && RUST_BACKTRACE=1 cargo test --locked --workspace --all-features -- --test-threads=2 shell:: 2>&1 | tail -n 40 && git status --short && git diff --stat";
const READ_ONLY_SSH: &str = "ssh -p 2222 -o ConnectTimeout=5 deploy@jp-ubuntu 'journalctl -u app --since today | tail -n 50'";
const MUTATING_SSH: &str = "cd infra && ssh -J bastion deploy@web01 'sudo systemctl restart app && sudo tee /etc/motd < /dev/null'";

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog");
    println!("in-process analysis, median of {runs} runs (catalog loaded once)");
    for (name, command) in [
        ("local command (177 ch)", LOCAL),
        ("read-only ssh", READ_ONLY_SSH),
        ("mutating ssh with a jump host", MUTATING_SSH),
    ] {
        let mut took = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            let analysis = analyse(
                command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None,
            );
            took.push(started.elapsed());
            std::hint::black_box(analysis);
        }
        let micros = median(took).as_secs_f64() * 1e6;
        println!("  {name:<36} {micros:>8.1} µs");
    }
    let started = Instant::now();
    let loaded = ShellCatalog::builtin().expect("the shipped shell catalog");
    let took = started.elapsed();
    std::hint::black_box(loaded);
    println!(
        "  {:<36} {:>8.1} µs",
        "loading the shell catalog",
        took.as_secs_f64() * 1e6
    );
}
