//! The property suite: generated hook calls against the simulator, run through the real
//! binary, with simulator faults rotating. Whatever the input, the hook:
//!
//! - exits 0 or 2 and nothing else;
//! - on exit 0 prints exactly one JSON object;
//! - answers with context or allow only when every protected VM named in the deciding value
//!   has a listed tag carrying this call's change id on each of its VPGs;
//! - never answers `{}` to a call the shipped catalogs classify as mutating.
//!
//! `cargo test --test it props` runs 200 cases (each one process; `PROPTEST_CASES` changes
//! the number). Run it longer with e.g.
//! `PROPTEST_CASES=5000 cargo test --release --test it props`. A failing case is shrunk and
//! its seed kept in `tests/it/proptest-regressions/`, which is committed so it is run first
//! from then on.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};
use rewind::catalog::{Catalog, Classification, ToolName};
use rewind::sim::{FailState, Fault};
use serde_json::{Value, json};

use crate::support::{Setup, TestEnv};

/// The lab's protected VMs (a unique name each) and their VPGs.
const LAB: &[(&str, &[&str])] = &[
    ("jp-ubuntu", &["jp-ubuntu-vpg"]),
    ("db01", &["db01-local", "db01-azure"]),
    ("win2019-1", &["win2019-aws"]),
];

/// Tool names as hosts send them: mutating, read-only, local, shell, unlisted.
const TOOLS: &[&str] = &[
    "mcp__ssh-mcp__exec",
    "mcp__ssh__exec",
    "mcp__ssh-manager__ssh_execute",
    "mcp__ssh__write_file",
    "mcp__ssh__read_file",
    "mcp__ansible-mcp__run_playbook",
    "mcp__winrm__run_command",
    "mcp__vmware-aiops__vm_power_off",
    "mcp__weather__forecast",
    "Read",
    "Edit",
    "Bash",
];

/// Keys a VM may hide under.
const VM_KEYS: &[&str] = &[
    "host", "hostname", "server", "vm", "target", "limit", "hosts",
];

/// Event names: the real one, near misses, other hosts' and nonsense.
const EVENTS: &[&str] = &[
    "PreToolUse",
    "PreToolUse",
    "PreToolUse",
    "preToolUse",
    "PreToolUse ",
    "",
    "BeforeTool",
    "PostToolUse",
    "pre_tool_use",
];

/// Look-alikes and spellings of a tool name.
fn spell(tool: &str, how: u8) -> String {
    match how % 8 {
        0..=2 => tool.to_owned(),
        3 => tool.to_uppercase(),
        4 => format!(" {tool}\t"),
        5 => tool.replacen("__", "___", 1),
        // Cyrillic `ѕ` for `s`: looks the same, is another tool.
        6 => tool.replacen('s', "\u{455}", 1),
        _ => format!("{tool}__extra"),
    }
}

/// A VM value of any JSON type: names, patterns, lists, and the wrong types.
fn vm_value() -> impl Strategy<Value = Value> {
    let name = prop::sample::select(vec![
        "jp-ubuntu",
        "db01",
        "win2019-1",
        "web",
        "nosuchvm",
        "JP-UBUNTU",
        "root@jp-ubuntu",
        "jp-ubuntu:22",
        "jp-ubuntu.lab",
        "jp-ubuntu.lab:db01",
        "jp-ubuntu,db01",
        "jp-ubuntu:!db01",
        "jp-ubuntu:&prod",
        "web*",
        "all",
        "@hosts.txt",
        "db[01:02]",
        "~jp.*",
        "",
        " ",
    ]);
    prop_oneof![
        4 => name.clone().prop_map(|n| json!(n)),
        1 => prop::collection::vec(name.clone(), 0..4).prop_map(|v| json!(v)),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(|f| json!(f)),
        1 => name.prop_map(|n| json!({"name": n})),
        1 => Just(json!(["jp-ubuntu", null])),
    ]
}

prop_compose! {
    fn call()(
        tool in prop::sample::select(TOOLS),
        how in any::<u8>(),
        event in prop::sample::select(EVENTS),
        keys in prop::collection::vec((prop::sample::select(VM_KEYS), vm_value()), 0..3),
        command in prop::sample::select(vec!["uptime", "rm -rf /tmp/x", "ssh db01 reboot", ""]),
        id in 0_u32..1_000_000,
        // A third of the calls are well formed, so the guard runs and its answers are checked.
        clean in prop::sample::select(vec![None, None, Some(0_usize), Some(1), Some(2), Some(3)]),
    ) -> (Value, String) {
        let (tool, event, keys) = match clean {
            None => (spell(tool, how), event, keys),
            Some(n) => {
                let vms: Vec<Value> = match n {
                    0 => vec![json!("jp-ubuntu")],
                    1 => vec![json!("db01")],
                    2 => vec![json!(["jp-ubuntu", "db01"])],
                    _ => vec![json!("jp-ubuntu,db01")],
                };
                (String::from("mcp__ssh__exec"), "PreToolUse", vms.into_iter().map(|v| ("host", v)).collect())
            }
        };
        let mut input = serde_json::Map::new();
        for (key, value) in keys {
            input.insert(key.to_owned(), value);
        }
        input.insert("command".into(), json!(command));
        let change = format!("toolu_prop{id}");
        let server = tool.strip_prefix("mcp__").and_then(|r| r.split("__").next()).map(str::to_owned);
        let mut payload = json!({
            "session_id": "5e55i0n0-0000-4000-8000-00000000prop",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": Value::Object(input),
            "tool_use_id": change,
        });
        if let Some(server) = server {
            payload["mcp_server"] = json!({"name": server});
        }
        (payload, change)
    }
}

/// A byte-level mutation of a payload: flips, cuts, insertions.
fn mutate(bytes: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for &(at, kind, byte) in edits {
        if out.is_empty() {
            out.push(byte);
            continue;
        }
        let at = at % out.len();
        match kind % 4 {
            0 => out[at] ^= byte | 1,
            1 => out.truncate(at),
            2 => out.insert(at, byte),
            _ => {
                out.remove(at);
            }
        }
    }
    out
}

/// The faults one case may run under: mostly none, and the quick ones more often than the
/// ones that wait for the budget.
fn fault(n: usize) -> Option<Fault> {
    match n % 48 {
        0 | 24 => Some(Fault::Status {
            route: "*".into(),
            status: 503,
            times: Some(2),
        }),
        2 | 26 => Some(Fault::InsertFails {
            vpg: "jp-ubuntu-vpg".into(),
            state: FailState::Failed,
            reason: "simulated".into(),
        }),
        3 | 27 => Some(Fault::InsertBusy {
            vpg: "db01-local".into(),
            times: 1,
        }),
        4 | 28 => Some(Fault::Status {
            route: "POST /v1/vpgs/*".into(),
            status: 500,
            times: Some(1),
        }),
        // These wait for the budget: rarer.
        1 => Some(Fault::Drop {
            route: "GET /v1/vms*".into(),
        }),
        5 => Some(Fault::TagNeverListed {
            vpg: "db01-azure".into(),
        }),
        6 if n % 96 == 6 => Some(Fault::Hang {
            route: "GET /v1/tasks/*".into(),
        }),
        _ => None,
    }
}

/// The lab VMs a value names: its strings split at pattern separators, `user@`, `:port` and
/// domain suffixes, compared without case.
fn named_vms(value: &Value) -> Vec<&'static str> {
    let mut texts = Vec::new();
    collect_strings(value, &mut texts);
    LAB.iter()
        .map(|(vm, _)| *vm)
        .filter(|vm| {
            texts.iter().any(|text| {
                text.split([',', ':', ';', ' ', '@', '&', '!'])
                    .map(|part| part.split('.').next().unwrap_or(part))
                    .any(|part| part.eq_ignore_ascii_case(vm))
            })
        })
        .collect()
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Whether the shipped catalogs classify this call as mutating.
fn is_mutating(catalog: &Catalog, payload: &Value) -> bool {
    let Some(tool) = payload["tool_name"].as_str() else {
        return false;
    };
    let name = ToolName::parse(
        tool,
        payload.pointer("/mcp_server/name").and_then(Value::as_str),
    );
    matches!(
        catalog.classify(&name, &payload["tool_input"]),
        Classification::Mutating { .. }
    )
}

/// The argument keys that name the call's machines: the `vm_arg` keys of the catalog entry
/// that classifies it (a server reads no other argument for its host), else every key a VM
/// may hide under.
fn machine_keys(catalog: &Catalog, payload: &Value) -> Vec<String> {
    let tool = payload["tool_name"].as_str().unwrap_or_default();
    let name = ToolName::parse(
        tool,
        payload.pointer("/mcp_server/name").and_then(Value::as_str),
    );
    match catalog.classify(&name, &payload["tool_input"]) {
        Classification::Mutating { entry, .. } if !entry.vm_arg.is_empty() => entry.vm_arg,
        _ => VM_KEYS.iter().map(|key| (*key).to_owned()).collect(),
    }
}

/// Every protected VM the call's machine arguments name has a listed tag carrying `change`
/// on each of its VPGs; else which one has none.
fn tags_listed(
    env: &TestEnv,
    keys: &[String],
    payload: &Value,
    change: &str,
) -> Result<(), String> {
    for key in keys {
        let Some(value) = payload["tool_input"].get(key) else {
            continue;
        };
        for vm in named_vms(value) {
            let vpgs = LAB
                .iter()
                .find(|(name, _)| *name == vm)
                .map(|l| l.1)
                .unwrap_or_default();
            for vpg in vpgs {
                let tagged = env.sim.checkpoints(vpg).iter().any(|cp| {
                    cp.tag
                        .as_deref()
                        .is_some_and(|t| t.starts_with(&format!("ai:{change} | ")))
                });
                if !tagged {
                    return Err(format!("{vm} on {vpg} has no listed tag for {change}"));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn the_hook_holds_its_invariants_on_generated_calls() {
    let env = TestEnv::with(Setup {
        hook: String::from("budget_secs = 2"),
        ..Setup::default()
    });
    let none: &[&str] = &[];
    let catalog = Catalog::load(true, none).expect("shipped catalogs");
    let case = AtomicUsize::new(0);
    // What the cases reached: exit 2, a release (context or allow), a refusal (deny or ask).
    let (blocked, released_count, refused) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/it/proptest-regressions/props.txt"
        )))),
        ..ProptestConfig::default()
    });
    let edits = prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..4);
    runner
        .run(
            &(call(), edits, any::<bool>()),
            |((payload, change), edits, mutated)| {
                let n = case.fetch_add(1, Ordering::Relaxed);
                env.sim.clear_faults();
                if let Some(fault) = fault(n) {
                    env.sim.add_fault(fault);
                }
                let clean = serde_json::to_vec(&payload).expect("json");
                let stdin = if mutated && !edits.is_empty() {
                    mutate(&clean, &edits)
                } else {
                    clean.clone()
                };
                let run = env.hook(&stdin);
                prop_assert!(
                    run.code == 0 || run.code == 2,
                    "exit {}: {run:#?}",
                    run.code
                );
                if run.code == 2 {
                    blocked.fetch_add(1, Ordering::Relaxed);
                    prop_assert_eq!(run.stderr.trim().lines().count(), 1, "{:#?}", run);
                    return Ok(());
                }
                let answer: Value = serde_json::from_str(&run.stdout).map_err(|e| {
                    TestCaseError::fail(format!("stdout is not one JSON value ({e}): {run:#?}"))
                })?;
                prop_assert!(answer.is_object(), "{run:#?}");
                if stdin != clean {
                    return Ok(());
                }
                let output = &answer["hookSpecificOutput"];
                let decision = output["permissionDecision"].as_str();
                let released = decision == Some("allow")
                    || (decision.is_none() && output.get("additionalContext").is_some());
                if matches!(decision, Some("deny" | "ask")) {
                    refused.fetch_add(1, Ordering::Relaxed);
                }
                if released {
                    released_count.fetch_add(1, Ordering::Relaxed);
                    tags_listed(&env, &machine_keys(&catalog, &payload), &payload, &change)
                        .map_err(|e| TestCaseError::fail(format!("{e}: {run:#?}")))?;
                }
                let event = payload["hook_event_name"].as_str().unwrap_or_default();
                if event != "PostToolUse" && is_mutating(&catalog, &payload) {
                    prop_assert!(
                        answer != json!({}),
                        "a mutating call got {{}}: {payload} {run:#?}"
                    );
                }
                Ok(())
            },
        )
        .expect("the hook's invariants hold");
    let counts = [&blocked, &released_count, &refused].map(|c| c.load(Ordering::Relaxed));
    // With enough cases the generators reach every kind of answer.
    if case.load(Ordering::Relaxed) >= 100 {
        assert!(
            counts.iter().all(|&c| c > 0),
            "exit 2, released, refused: {counts:?}"
        );
    }
}

/// Ways to run a program that the shell takes away before it runs: each leaves `ssh` (or
/// another remote program) running while its name is split or wrapped.
const SPLITTERS: &[&str] = &[
    "",
    "''",
    "\"\"",
    "\\",
    "$@",
    "$*",
    "${IFS:0:0}",
    "$(true)",
    "`true`",
    "${X#*}",
];
const WRAPPERS: &[&str] = &[
    "",
    "sudo ",
    "env FOO=1 ",
    "command ",
    "exec ",
    "nohup ",
    "time ",
    "sshpass -p hunter2 ",
    "busybox ",
    "chroot / ",
    "strace -f ",
    "timeout 5 ",
    "nice -n 5 ",
    "bash -c ",
];

/// A remote program whose name is split by quotes or an empty expansion, behind any wrapper,
/// is never "no remote program" (no decision): the analysis checkpoints or asks.
#[test]
fn a_split_or_wrapped_remote_program_is_never_local() {
    use rewind::inventory::Inventory;
    use rewind::shell::{Dialect, ShellCatalog, Verdict, analyse};
    let catalog = ShellCatalog::builtin().expect("shipped shell catalog");
    let programs = ["ssh", "scp", "rsync", "ansible", "autossh"];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = (
        0..programs.len(),
        0usize..8,
        0..SPLITTERS.len(),
        0..WRAPPERS.len(),
    );
    runner
        .run(&strategy, |(p, at, s, w)| {
            let program = programs[p];
            // A backslash escapes the next character, so it never ends the word.
            let at = match SPLITTERS[s] {
                "\\" => at % program.len(),
                _ => at % (program.len() + 1),
            };
            let word = format!("{}{}{}", &program[..at], SPLITTERS[s], &program[at..]);
            let args = match program {
                "ansible" => "web01 -m reboot",
                "scp" | "rsync" => "/tmp/x web01:/etc/x",
                _ => "web01 reboot",
            };
            let command = match WRAPPERS[w] {
                "bash -c " => format!("bash -c '{} {args}'", word.replace('\'', "'\\''")),
                wrapper => format!("{wrapper}{word} {args}"),
            };
            let verdict = analyse(
                &command,
                Dialect::Posix,
                &catalog,
                &Inventory::default(),
                None,
            )
            .verdict;
            prop_assert!(
                matches!(verdict, Verdict::Mutating(_) | Verdict::Unknown { .. }),
                "{command}: {verdict:?}"
            );
            Ok(())
        })
        .expect("every split or wrapped remote program checkpoints or asks");
}

/// The attack classes as generators: a remote program's name built at run time (variables,
/// defaults, globs, braces, substitutions, `$'…'` escapes), its command encoded and fed to a
/// shell (echo, base64, rev, here-strings, pipes), behind wrappers with their options. What
/// the analysis cannot read exactly asks; what it can read checkpoints web01. Never no
/// decision.
#[test]
fn generated_attacks_never_pass_undecided() {
    use base64::Engine as _;
    use rewind::inventory::Inventory;
    use rewind::shell::{Dialect, ShellCatalog, Verdict, analyse};
    let catalog = ShellCatalog::builtin().expect("shipped shell catalog");
    let known = Inventory::of(["web01"]);
    let names: [fn(&str) -> String; 10] = [
        |p| p.to_owned(),
        |p| format!("x={}; ${{x}}{}", &p[..2], &p[2..]),
        |p| format!("${{X:-{}}}{}", &p[..2], &p[2..]),
        |p| format!("/usr/bin/{}?", &p[..p.len() - 1]),
        |p| format!("/usr/bin/{}[{}]", &p[..p.len() - 1], &p[p.len() - 1..]),
        |p| format!("$(printf {p})"),
        |p| format!("$'\\x{:02x}{}'", p.as_bytes()[0], &p[1..]),
        |p| format!("\"{}\"\"{}\"", &p[..1], &p[1..]),
        |p| format!("c='{p}'; $c"),
        |p| format!("`echo {p}`"),
    ];
    let feeds: [fn(&str) -> String; 7] = [
        |c| c.to_owned(),
        |c| format!("echo '{c}' | sh"),
        |c| {
            format!(
                "echo {} | base64 -d | bash",
                base64::engine::general_purpose::STANDARD.encode(c)
            )
        },
        |c| format!("rev <<< '{}' | sh", c.chars().rev().collect::<String>()),
        |c| format!("bash -s <<< '{c}'"),
        |c| format!("sh -c '{c}'"),
        |c| format!("eval '{c}'"),
    ];
    let wrappers = [
        "",
        "sudo ",
        "sudo -p x -u root ",
        "setsid -w ",
        "linux64 -R ",
        "nohup ",
        "timeout -s KILL 9 ",
        "env -i ",
        "nice -n 3 ",
        "stdbuf -oL ",
        "sshpass -e ",
        "time -p ",
        "command ",
        "exec ",
        "flock /tmp/l ",
        "chronic ",
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = (
        0..names.len(),
        0..feeds.len(),
        0..wrappers.len(),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(n, f, w, scp)| {
            let (program, rest) = if scp {
                ("scp", "/tmp/x web01:/etc/x")
            } else {
                ("ssh", "web01 reboot")
            };
            let inner = format!("{}{} {rest}", wrappers[w], names[n](program));
            // A name built with a quote cannot sit inside the single quotes of a feed.
            let command = if inner.contains('\'') {
                inner
            } else {
                feeds[f](&inner)
            };
            let verdict = analyse(&command, Dialect::Posix, &catalog, &known, None).verdict;
            match &verdict {
                Verdict::Unknown { .. } => {}
                Verdict::Mutating(targets) => prop_assert!(
                    targets.iter().any(|t| t.name == "web01"),
                    "{command}: {verdict:?}"
                ),
                _ => prop_assert!(false, "{command}: {verdict:?}"),
            }
            Ok(())
        })
        .expect("every generated attack checkpoints web01 or asks");
}

/// PowerShell's spellings of one change, with no protected machine known (the net is not
/// what catches them): the cmdlet's name built from literal pieces (`+`, `-join`, `-f`), or
/// started through .NET, a parameter name abbreviated and broken by backticks, the machine
/// bare or quoted or reached through a WMI path, a CIM session or a mapped drive. Each
/// checkpoints win01 or asks; none passes undecided.
#[test]
fn generated_powershell_spellings_never_pass_undecided() {
    use rewind::inventory::Inventory;
    use rewind::shell::{Dialect, ShellCatalog, Verdict, analyse};
    let catalog = ShellCatalog::builtin().expect("shipped shell catalog");
    let known = Inventory::default();
    let names: [fn(&str) -> String; 6] = [
        |p| p.to_owned(),
        |p| format!("& ('{}' + '{}')", &p[..3], &p[3..]),
        |p| format!(". ('{}','{}' -join '')", &p[..2], &p[2..]),
        |p| format!("& (\"{{1}}{{0}}\" -f '{}','{}')", &p[4..], &p[..4]),
        |p| format!("& (-join ('{}', \"{}\"))", &p[..5], &p[5..]),
        |p| format!("& $('{}' + '{}')", &p[..1], &p[1..]),
    ];
    let hosts = ["win01", "'win01'", "\"win01\"", "WIN01"];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = (
        0..names.len(),
        0..hosts.len(),
        4usize..=12,
        proptest::option::of(1usize..12),
        0usize..6,
    );
    runner
        .run(&strategy, |(n, h, keep, tick, shape)| {
            // `-Comp`, `-ComputerN`, ``-Comp`uterName``: any prefix of four letters or more,
            // a backtick anywhere after the first letter.
            let mut parameter = String::from(&"ComputerName"[..keep]);
            if let Some(at) = tick.filter(|at| *at < parameter.len()) {
                parameter.insert(at, '`');
            }
            let host = hosts[h];
            let command = match shape {
                0 => format!("{} -{parameter} {host} -Force", names[n]("Restart-Computer")),
                1 => format!(
                    "{} -{parameter} {host} -ScriptBlock {{ Restart-Service W3SVC }}",
                    names[n]("Invoke-Command")
                ),
                2 => String::from(
                    "[System.Diagnostics.Process]::Start('psexec.exe', '\\\\win01 -s shutdown /r')",
                ),
                3 => String::from(
                    "([wmiclass]'\\\\win01\\root\\cimv2:Win32_Process').Create('shutdown /r')",
                ),
                4 => String::from(
                    "$s = [CimSession]::Create('win01'); Invoke-CimMethod -CimSession $s -ClassName Win32_Process -MethodName Create -Arguments @{CommandLine='shutdown /r'}",
                ),
                _ => format!(
                    "New-PSDrive -Name X -PSProvider FileSystem -Root \\\\win01\\c$; {} X:\\app -Recurse",
                    names[n]("Remove-Item")
                ),
            };
            let verdict = analyse(&command, Dialect::PowerShell, &catalog, &known, None).verdict;
            match &verdict {
                Verdict::Unknown { .. } => {}
                Verdict::Mutating(targets) => prop_assert!(
                    targets.iter().any(|t| t.name.eq_ignore_ascii_case("win01")),
                    "{command}: {verdict:?}"
                ),
                _ => prop_assert!(false, "{command}: {verdict:?}"),
            }
            Ok(())
        })
        .expect("every generated PowerShell spelling checkpoints win01 or asks");
}

/// Deeply nested and very long commands, of every compound kind, in every host's payload:
/// the hook answers with exit 0 and a decision, or exit 2 with one line, never a crash.
#[test]
fn deep_and_long_commands_never_crash_the_hook() {
    let env = TestEnv::start();
    let shapes: [fn(usize) -> String; 9] = [
        |n| {
            format!(
                "{}ssh web01 reboot{}",
                "if true; then ".repeat(n),
                "; fi".repeat(n)
            )
        },
        |n| {
            format!(
                "{}ssh web01 reboot{}",
                "while false; do ".repeat(n),
                "; done".repeat(n)
            )
        },
        |n| {
            format!(
                "{}ssh web01 reboot{}",
                "case x in x) ".repeat(n),
                " ;; esac".repeat(n)
            )
        },
        |n| format!("{}ssh web01 reboot{}", "(".repeat(n), ")".repeat(n)),
        |n| format!("{}ssh web01 reboot{}", "{ ".repeat(n), "; }".repeat(n)),
        |n| format!("echo {}ssh web01 reboot{}", "$(".repeat(n), ")".repeat(n)),
        |n| format!("{}ssh web01 reboot", "coproc ".repeat(n)),
        |n| {
            format!(
                "for i in 1; do {}ssh web01 reboot{} done",
                "for j in 2; do ".repeat(n),
                "; done".repeat(n)
            )
        },
        |n| format!("echo {}", "x".repeat(n * 100)),
    ];
    for (k, shape) in shapes.iter().enumerate() {
        for depth in [60, 1_500, 20_000] {
            let command = shape(depth);
            let payload = serde_json::json!({
                "session_id": "s", "transcript_path": "/t", "cwd": "/tmp",
                "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": command}, "tool_use_id": format!("deep-{k}-{depth}")
            });
            let run = env.run(
                &["hook", "--host", "claude-code"],
                payload.to_string().as_bytes(),
            );
            assert!(
                run.code == 0 && run.stdout.starts_with('{')
                    || run.code == 2 && run.stderr.lines().count() == 1,
                "shape {k} depth {depth}: exit {} stdout {:?} stderr {:?}",
                run.code,
                run.stdout.chars().take(200).collect::<String>(),
                run.stderr.chars().take(200).collect::<String>()
            );
            if k < 8 {
                // A checkpoint of web01 or a question, never silence.
                assert!(
                    run.code == 2
                        || run.stdout.contains("web01")
                        || run.stdout.contains("\"ask\"")
                        || run.stdout.contains("deny"),
                    "shape {k} depth {depth}: {}",
                    run.stdout.chars().take(300).collect::<String>()
                );
            }
        }
    }
}

/// One IPv4 address in a spelling `inet_aton` reads: one to four parts, each decimal, hex
/// (`0x`) or octal (leading `0`), the last part filling the bytes the others leave; or as an
/// IPv4-mapped IPv6 address, dotted or in hex groups, bracketed or not.
fn spell_address(address: u32, parts: usize, radixes: &[u8], form: u8) -> String {
    let part = |value: u32, radix: u8| match radix % 3 {
        0 => value.to_string(),
        1 => format!("0x{value:x}"),
        _ => format!("0{value:o}"),
    };
    let bytes = address.to_be_bytes();
    match form % 6 {
        0..=2 => {
            let leading = parts.clamp(1, 4) - 1;
            let mut words: Vec<String> = (0..leading)
                .map(|i| part(u32::from(bytes[i]), radixes[i]))
                .collect();
            let last = address & (u32::MAX >> (8 * leading));
            words.push(part(last, radixes[3]));
            words.join(".")
        }
        3 => format!("::ffff:{}.{}.{}.{}", bytes[0], bytes[1], bytes[2], bytes[3]),
        4 => format!("::ffff:{:x}:{:x}", address >> 16, address & 0xffff),
        _ => format!(
            "[0:0:0:0:0:ffff:{:x}:{:x}]",
            address >> 16,
            address & 0xffff
        ),
    }
}

/// Every spelling of a protected guest IP, in every program that reaches a server by it,
/// names that machine: the analysis checkpoints a target the protected-VM net (which compares
/// addresses as numbers) holds, or, for a program no grammar reads, asks. A spelling of
/// another address is never taken for it.
#[test]
fn an_address_in_any_spelling_names_its_machine_in_every_program() {
    use rewind::inventory::Inventory;
    use rewind::shell::{Dialect, ShellCatalog, Verdict, analyse};
    let catalog = ShellCatalog::builtin().expect("shipped shell catalog");
    let known = Inventory::of(["db01", "10.0.0.31"]);
    let programs: [fn(&str) -> String; 11] = [
        |a| format!("ssh {a} sudo reboot"),
        |a| format!("ssh root@{a} sudo reboot"),
        |a| format!("mysql -h {a} -e 'DROP DATABASE app'"),
        |a| format!("psql -h {a} -c 'DROP TABLE t'"),
        |a| format!("redis-cli -h {a} FLUSHALL"),
        |a| format!("sqlcmd -S {a},1433 -Q 'DROP DATABASE app'"),
        |a| format!("socat - TCP:{}:6379", bracketed(a)),
        |a| format!("nc -w 3 {a} 6379"),
        |a| format!("telnet {a}"),
        |a| format!("scp ./app.conf root@{}:/etc/app.conf", bracketed(a)),
        |a| format!("mytool --host={a} restart"),
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = (
        0..programs.len(),
        1usize..=4,
        proptest::collection::vec(any::<u8>(), 4),
        any::<u8>(),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(p, parts, radixes, form, other)| {
            // 10.0.0.31, or a neighbour the net does not hold.
            let address = if other { 0x0a00_0020 } else { 0x0a00_001f };
            let spelled = spell_address(address, parts, &radixes, form);
            let command = programs[p](&spelled);
            let verdict = analyse(&command, Dialect::Posix, &catalog, &known, None).verdict;
            let unread = command.starts_with("mytool");
            match (&verdict, other) {
                (Verdict::Mutating(targets), false) if !unread => prop_assert!(
                    targets.iter().any(|t| known.contains(&t.name)),
                    "{command}: {verdict:?}"
                ),
                (Verdict::Unknown { .. }, false) if unread => {}
                (Verdict::Mutating(targets), true) => prop_assert!(
                    !targets.iter().any(|t| known.contains(&t.name)),
                    "{command}: {verdict:?}"
                ),
                (Verdict::Local | Verdict::ReadOnly, true) => {}
                _ => prop_assert!(false, "{command}: {verdict:?}"),
            }
            Ok(())
        })
        .expect("every spelling of a protected address names it");
}

/// An IPv6 address in a `host:port` word is bracketed; anything else is left as it is.
fn bracketed(address: &str) -> String {
    if address.contains(':') && !address.starts_with('[') {
        format!("[{address}]")
    } else {
        address.to_owned()
    }
}
