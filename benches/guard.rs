//! Requests per guard call and detection lag: `rewind guard` as a process against the
//! simulator's vSphere-profile VPG at time scale 1 (a 5 s journal, the tag listed ~4 s after
//! the insert). Detection lag is the time from the simulator listing the tag to the guard
//! process ending: what the hook adds on top of Zerto's own latency.
//!
//! `cargo bench --bench guard` (RUNS=n; default 9).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod support;

use std::time::{Duration, Instant};

use support::{Lab, median, ms, time};

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9);
    let lab = Lab::start(1.0);
    let sim = &lab.sim;

    let mut requests = Vec::new();
    let mut lags = Vec::new();
    let mut walls = Vec::new();
    let mut insert_to_listed = Vec::new();
    for n in 0..=runs {
        let before = sim.stats();
        let change = format!("bench-{n}");
        let mut cmd = lab.rewind(&["guard", "--vm", "jp-ubuntu", "--change", &change]);
        let wall = time(&mut cmd, b"", 0);
        let ended = Instant::now();
        let after = sim.stats();
        let insert = sim
            .inserts()
            .into_iter()
            .find(|i| i.tag.starts_with(&format!("ai:bench-{n} | ")))
            .expect("inserted");
        let listed = insert.listed_at.expect("listed");
        if n == 0 {
            // The first run logs in; the rest reuse the cached token, as hook calls do.
            println!(
                "first run (with login): {} requests, {} token request(s)",
                after.requests - before.requests,
                after.token_requests
            );
            continue;
        }
        requests.push(after.requests - before.requests);
        lags.push(ended.saturating_duration_since(listed));
        walls.push(wall);
        insert_to_listed.push(listed.saturating_duration_since(insert.received_at));
    }
    requests.sort_unstable();
    println!("rewind guard on a vSphere VPG at time scale 1, {runs} runs after the first");
    println!(
        "  requests per guard call: median {}, min {}, max {}",
        requests[requests.len() / 2],
        requests[0],
        requests[requests.len() - 1]
    );
    println!(
        "  wall time:                       median {}",
        ms(median(walls))
    );
    println!(
        "  simulator: insert to tag listed: median {} (the scenario's 4 s tag latency)",
        ms(median(insert_to_listed))
    );
    println!(
        "  detection lag (listed to return): median {}",
        ms(median(lags.clone()))
    );
    println!(
        "  detection lag, max:               {}",
        ms(lags.into_iter().max().unwrap_or(Duration::ZERO))
    );
    let stats = sim.stats();
    println!("  requests by route over all runs:");
    for (route, count) in &stats.by_route {
        println!("    {count:>4}  {route}");
    }
}
