//! Whole-process cost of the hook as the hosts run it (`rewind-hook hook`) on the calls that
//! need no network (read-only, local and unlisted tools, local and read-only shell commands),
//! of the same hook in the whole `rewind` binary and of `rewind --version`, against a floor measured in the same run:
//! `benches/floor`, the least a Rust hook can do (read stdin, parse it with serde_json).
//!
//! Method: `LOOP` (100) back-to-back runs from one `sh` loop, each case's loop right after the
//! same loop of the floor binary, `ROUNDS` (7) rounds. Each run's stdout is one file, as a
//! host's pipe takes it: a hook whose stdout has no reader (`/dev/null`) takes its refusal
//! path, which is not the path measured here. The figures are the CPU time (user + system,
//! from the kernel's accounting of the waited-for children) and the wall time of a loop, the
//! median over rounds; the ratio is the median of each round's case/floor CPU ratio. One `sh`
//! for the whole loop, so a shell's own start-up does not hide the difference. Peak
//! resident memory comes from GNU time's `%M` (max over runs), minor page faults from its `%R`
//! (median), beside the floor's, and with valgrind installed the instructions of one run
//! under callgrind: unlike times, none of these depends on the machine's load, which is
//! printed too.
//!
//! Every case runs on a configured machine: a user MCP catalog, a user shell catalog and a
//! protected-VM net of 500 VMs.
//!
//! `cargo bench --bench hook`. Environment: `ROUNDS`, `LOOP`; `BEFORE=<path to another
//! rewind or rewind-hook binary>` measures that binary's hook too, in the same rounds, for
//! before/after figures. Goal: read-only, local and unlisted ≤ 1.2× the floor's CPU, a local
//! shell command ≤ 1.3×; peak RSS ≤ 4 MiB.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{median, ms, private};

const READ_ONLY: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"mcp__ssh__read_file","tool_input":{"host":"jp-ubuntu","path":"/etc/app.conf"},"tool_use_id":"toolu_1","mcp_server":{"name":"ssh"}}"#;
const LOCAL: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/tmp/notes.txt"},"tool_use_id":"toolu_2"}"#;
const UNLISTED: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"mcp__weather__forecast","tool_input":{"city":"Oslo"},"tool_use_id":"toolu_3"}"#;
/// Every Bash call reaches the hook: a 200-character local command (no remote program).
const BASH_LOCAL: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cd /home/dev/src/rewind && RUST_BACKTRACE=1 cargo test --locked --workspace --all-features -- --test-threads=2 shell:: 2>&1 | tail -n 40 && git status --short && git diff --stat","description":"Run the tests"},"tool_use_id":"toolu_4"}"#;
/// A read-only ssh command: parsed, its remote command judged, nothing resolved.
const BASH_SSH_READ: &[u8] = br#"{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ssh -p 2222 -o ConnectTimeout=5 deploy@jp-ubuntu 'journalctl -u app --since today | tail -n 50'"},"tool_use_id":"toolu_5"}"#;

/// A configured machine, as the hook meets it on a real install: a user MCP catalog and a
/// user shell catalog in the config, and the protected-VM net holding 500 VMs (a name and a
/// guest IP each), as a listing of the ZVM writes it. Returns the config's path.
fn configured(home: &Path) -> PathBuf {
    let mcp = home.join("catalog.toml");
    std::fs::write(
        &mcp,
        "[[mutating]]\nserver = \"deploy\"\ntool = \"run_*\"\nvm_arg = [\"host\"]\n\n[[read_only]]\nserver = \"deploy\"\ntool = \"status\"\n",
    )
    .expect("user catalog");
    let shell = home.join("shell-catalog.toml");
    std::fs::write(
        &shell,
        "[[program]]\nnames = [\"frobnicate\"]\ngrammar = \"fleet\"\nhost_operand = \"all\"\nread_only = [\"status\"]\n",
    )
    .expect("user shell catalog");
    let mut references: Vec<String> = (0..500)
        .flat_map(|i| {
            [
                format!("vm-{i:03}"),
                format!("10.1.{}.{}", i / 250, i % 250 + 1),
            ]
        })
        .collect();
    references.sort();
    let cache = home.join("cache/rewind");
    std::fs::create_dir_all(&cache).expect("cache");
    std::fs::write(
        cache.join("protected-vms"),
        format!(
            "# rewind protected VMs v1: one reference a line, lower case, sorted\n{}",
            references.join("\n")
        ),
    )
    .expect("inventory");
    let config = home.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[hook]\nbudget_secs = 150\ncatalogs = [{:?}]\n\n[shell]\ncatalogs = [{:?}]\n",
            mcp.display().to_string(),
            shell.display().to_string(),
        ),
    )
    .expect("config");
    config
}

/// One measured command: the program, its arguments, the stdin file.
struct Case {
    name: String,
    program: PathBuf,
    args: Vec<&'static str>,
    stdin: PathBuf,
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

fn main() {
    let rounds = env_number("ROUNDS", 7);
    let runs = env_number("LOOP", 100);
    let home = tempfile::tempdir().expect("tempdir");
    let config = configured(home.path());
    let cases = cases(home.path());
    let floor = copied(&build_floor(), home.path(), "floor");
    let floor_case = |input: &Path| Case {
        name: String::from("floor"),
        program: floor.clone(),
        args: Vec::new(),
        stdin: input.to_path_buf(),
    };

    let load_before = load_average();
    let mut floors: Vec<Took> = Vec::new();
    let mut samples: Vec<Vec<(Took, f64)>> = vec![Vec::new(); cases.len()];
    for _ in 0..rounds {
        for (i, case) in cases.iter().enumerate() {
            let base = run_loop(&floor_case(&case.stdin), runs, home.path(), &config);
            let took = run_loop(case, runs, home.path(), &config);
            floors.push(base);
            samples[i].push((took, took.cpu.as_secs_f64() / base.cpu.as_secs_f64()));
        }
    }
    println!(
        "CPU (user + system) and wall time of {runs} back-to-back runs from one sh loop, stdout to a file, median of {rounds} rounds, each after the floor's loop"
    );
    println!(
        "load average before: {load_before}; after: {}",
        load_average()
    );
    println!("  {:<40} {:>11} {:>11}", "", "CPU", "wall");
    println!(
        "  {:<40} {:>11} {:>11}",
        "floor (read stdin, parse JSON)",
        ms(median(floors.iter().map(|t| t.cpu).collect())),
        ms(median(floors.iter().map(|t| t.wall).collect())),
    );
    for (case, samples) in cases.iter().zip(samples) {
        let cpu = median(samples.iter().map(|s| s.0.cpu).collect());
        let wall = median(samples.iter().map(|s| s.0.wall).collect());
        let mut ratios: Vec<f64> = samples.iter().map(|s| s.1).collect();
        ratios.sort_by(f64::total_cmp);
        println!(
            "  {:<40} {:>11} {:>11}   x{:.2} of the floor's CPU",
            case.name,
            ms(cpu),
            ms(wall),
            ratios[ratios.len() / 2]
        );
    }
    peak_memory(&floor, &cases, home.path(), &config);
    instructions(&floor, &cases, home.path(), &config);
}

/// The measured cases, their payloads written under `home`: the hook as the hosts run it,
/// `BEFORE`'s hook, the whole binary's hook and its start alone.
fn cases(home: &Path) -> Vec<Case> {
    let stdin = |name: &str, bytes: &[u8]| {
        let path = home.join(name);
        std::fs::write(&path, bytes).expect("payload");
        path
    };
    let (read_only, local, unlisted) = (
        stdin("read-only.json", READ_ONLY),
        stdin("local.json", LOCAL),
        stdin("unlisted.json", UNLISTED),
    );
    let (bash_local, bash_ssh_read) = (
        stdin("bash-local.json", BASH_LOCAL),
        stdin("bash-ssh-read.json", BASH_SSH_READ),
    );
    let hook = copied(Path::new(env!("CARGO_BIN_EXE_rewind-hook")), home, "this");
    let rewind = copied(Path::new(env!("CARGO_BIN_EXE_rewind")), home, "this");
    let mut binaries = vec![(String::new(), hook)];
    if let Some(before) = std::env::var_os("BEFORE") {
        let before = copied(Path::new(&before), home, "before");
        binaries.insert(0, (String::from("before: "), before));
    }
    let mut cases = vec![
        Case {
            name: String::from("rewind --version"),
            program: rewind.clone(),
            args: vec!["--version"],
            stdin: read_only.clone(),
        },
        Case {
            name: String::from("rewind hook, read-only tool"),
            program: rewind,
            args: vec!["hook"],
            stdin: read_only.clone(),
        },
    ];
    for (label, binary) in &binaries {
        for (what, input) in [
            ("read-only tool", &read_only),
            ("local tool", &local),
            ("unlisted tool", &unlisted),
            ("Bash local command (200 ch)", &bash_local),
            ("Bash read-only ssh", &bash_ssh_read),
        ] {
            let program = binary
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            cases.push(Case {
                name: format!("{label}{program} hook, {what}"),
                program: binary.clone(),
                args: vec!["hook"],
                stdin: input.clone(),
            });
        }
    }
    cases
}

/// A copy of `binary` in `home/<dir>/`, under its own name; its path. Every measured binary
/// runs from a copy made the same way: the hook just written by the linker ran a read-only
/// call about 6 % slower than a byte-identical copy of it in the same directory (the state of
/// the file in the page cache, not its bytes), so a build compared with an older binary
/// copied elsewhere measured how each file was written instead of what it does.
fn copied(binary: &Path, home: &Path, dir: &str) -> PathBuf {
    let dir = home.join(dir);
    std::fs::create_dir_all(&dir).expect("a directory for the copies");
    let copy = dir.join(binary.file_name().expect("a binary has a file name"));
    std::fs::copy(binary, &copy).unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    copy
}

/// Builds `benches/floor` in release mode beside this target directory; its path.
fn build_floor() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_rewind"));
    let target = exe
        .parent()
        .and_then(Path::parent)
        .expect("the binary lives in target/<profile>/")
        .join("floor");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/floor/Cargo.toml");
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--locked",
            "--quiet",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the floor binary did not build");
    target.join("release/rewind-bench-floor")
}

/// What one loop cost.
#[derive(Clone, Copy)]
struct Took {
    /// User + system time of the loop's processes (the shell's own share is the same for
    /// every case).
    cpu: Duration,
    wall: Duration,
}

/// The CPU and wall time of one `sh` loop running `case` `runs` times, each run's stdout the
/// same file, opened once for the loop as a host's pipe stays open, and its stderr
/// `/dev/null`; fails loudly on a bad exit. Truncating the file at every run instead made the
/// file system write the previous run's answer out at once (ext4 does so for a truncated file
/// holding unwritten data): a cost of the loop, paid by whatever writes an answer, and no
/// part of a hook's work.
fn run_loop(case: &Case, runs: usize, home: &Path, config: &Path) -> Took {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"exec >> "$OUTPUT" 2>/dev/null; i=0; while [ "$i" -lt "$RUNS" ]; do "$@" < "$INPUT" || exit 9; i=$((i + 1)); done"#)
        .arg("sh")
        .arg(&case.program)
        .args(&case.args)
        .env("RUNS", runs.to_string())
        .env("INPUT", &case.stdin)
        .env("OUTPUT", home.join("stdout"))
        .stdin(Stdio::null());
    private(&mut cmd, home, config);
    let cpu_before = children_cpu();
    let started = Instant::now();
    let status = cmd.status().expect("sh runs");
    let wall = started.elapsed();
    let cpu = children_cpu().saturating_sub(cpu_before);
    assert!(status.success(), "{}: a run failed ({status})", case.name);
    Took { cpu, wall }
}

/// User + system time of every child this process has waited for (and theirs), so far. The
/// benchmark is a separate crate, outside the library's platform module: this is its one
/// OS-specific function (the benchmark runs its cases through `sh`, on Unix only).
#[cfg(unix)]
fn children_cpu() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let time = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(u64::try_from(t.tv_sec()).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec()).unwrap_or(0))
    };
    time(usage.user_time()) + time(usage.system_time())
}

/// Not measured where there is no `getrusage`.
#[cfg(not(unix))]
fn children_cpu() -> Duration {
    Duration::ZERO
}

/// The load average (1, 5, 15 minutes) as the kernel reports it, to judge how noisy a run was.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| String::from("unknown"),
        |text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        },
    )
}

/// Peak resident memory and minor page faults, from GNU time's `%M` (KiB) and `%R`, when it
/// is installed: memory the max over runs, faults the median. Neither depends on the machine's
/// load, unlike the times above.
fn peak_memory(floor: &Path, cases: &[Case], home: &Path, config: &Path) {
    let gnu_time = Path::new("/usr/bin/time");
    if !gnu_time.exists() {
        println!("peak memory not measured: /usr/bin/time (GNU time) is not installed");
        return;
    }
    let measure = |program: &Path, args: &[&str], input: &Path| -> (u64, u64) {
        let mut cmd = Command::new(gnu_time);
        cmd.args(["-f", "%M %R"]);
        let out = run_under(cmd, program, args, input, home, config);
        let text = String::from_utf8_lossy(&out.stderr);
        let mut numbers = text
            .lines()
            .last()
            .unwrap_or_default()
            .split_whitespace()
            .map(|n| n.parse::<u64>().expect("GNU time printed %M %R"));
        let kib = numbers.next().expect("GNU time printed %M");
        let faults = numbers.next().expect("GNU time printed %R");
        (kib, faults)
    };
    let of_10 = |f: &dyn Fn() -> (u64, u64)| {
        let runs: Vec<(u64, u64)> = (0..10).map(|_| f()).collect();
        let kib = runs.iter().map(|r| r.0).max().unwrap_or(0);
        let mut faults: Vec<u64> = runs.iter().map(|r| r.1).collect();
        faults.sort_unstable();
        (kib, faults[faults.len() / 2])
    };
    let (base, base_faults) = of_10(&|| measure(floor, &[], &cases[0].stdin));
    println!("peak resident memory, max of 10 runs (GNU time %M); minor page faults, median (%R)");
    println!("  {:<36} {base:>7} KiB {base_faults:>12} faults", "floor");
    for case in cases {
        let (kib, faults) = of_10(&|| measure(&case.program, &case.args, &case.stdin));
        #[expect(clippy::cast_precision_loss, reason = "KiB and fault counts are small")]
        let (ratio, fault_ratio) = (kib as f64 / base as f64, faults as f64 / base_faults as f64);
        println!(
            "  {:<36} {kib:>7} KiB x{ratio:.2} {faults:>6} faults x{fault_ratio:.2}",
            case.name
        );
    }
}

/// Instructions of one run of each, under callgrind, when valgrind is installed: the count
/// that moves only with the code, where the times above move with the machine's load too.
fn instructions(floor: &Path, cases: &[Case], home: &Path, config: &Path) {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("instructions not counted: valgrind is not installed");
        return;
    }
    let count = |program: &Path, args: &[&str], input: &Path| -> u64 {
        let mut cmd = Command::new("valgrind");
        cmd.arg("--tool=callgrind").arg(format!(
            "--callgrind-out-file={}",
            home.join("callgrind.out").display()
        ));
        let out = run_under(cmd, program, args, input, home, config);
        // `==123== Collected : 574586`
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|line| line.split_once("Collected :"))
            .and_then(|(_, n)| n.trim().parse().ok())
            .expect("callgrind printed its count")
    };
    let base = count(floor, &[], &cases[0].stdin);
    println!("instructions of one run (valgrind --tool=callgrind)");
    println!("  {:<36} {:>7.2} M", "floor", millions(base));
    for case in cases {
        let n = count(&case.program, &case.args, &case.stdin);
        #[expect(clippy::cast_precision_loss, reason = "instruction counts are small")]
        let ratio = n as f64 / base as f64;
        println!("  {:<36} {:>7.2} M x{ratio:.2}", case.name, millions(n));
    }
}

/// One run of `program` under `tool` (GNU time, valgrind), as the loops run it: `input` on
/// stdin, stdout a file, in the bench's own home and configuration; the tool's output.
fn run_under(
    mut tool: Command,
    program: &Path,
    args: &[&str],
    input: &Path,
    home: &Path,
    config: &Path,
) -> std::process::Output {
    tool.arg(program)
        .args(args)
        .stdin(std::fs::File::open(input).expect("stdin"))
        .stdout(std::fs::File::create(home.join("stdout")).expect("stdout file"));
    private(&mut tool, home, config);
    tool.output().expect("the measuring tool runs")
}

#[expect(clippy::cast_precision_loss, reason = "instruction counts are small")]
fn millions(n: u64) -> f64 {
    n as f64 / 1e6
}
