//! `rewind hook` as Claude Code runs it: one snapshot per row of the decision table, each a
//! fixture file fed on stdin to the real binary facing the simulator (frozen clock, so
//! checkpoint ids and times are the same on every run).
//!
//! A fixture `tests/fixtures/hook/<case>.json` is stdin byte for byte; an optional
//! `<case>.toml` beside it sets the scene: `faults` (simulator faults), `hook` (extra `[hook]`
//! lines), `trust_ca = false`, `zvm = "down"`, `catalog` (a user catalog's text),
//! `time_scale` (default 100), `scenario` (a simulator scenario's text instead of the lab).
//! `claude-code-2.1.332-sample.json` is the confirmed one-VPG row, with the payload the real
//! Claude Code sent (captured by the end-to-end harness).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use rewind::sim::Fault;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::{Setup, TestEnv, closed_port_url, hook_input};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Scene {
    #[serde(default)]
    faults: Vec<Fault>,
    hook: Option<String>,
    trust_ca: Option<bool>,
    zvm: Option<String>,
    catalog: Option<String>,
    time_scale: Option<f64>,
    scenario: Option<String>,
}

#[test]
fn every_decision_table_row() {
    insta::glob!("../fixtures", "hook/*.json", |path| {
        let env = scene_env(path);
        let stdin = std::fs::read(path).expect("fixture");
        let run = env.hook(&stdin);
        let stdout: Value = if run.stdout.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&run.stdout)
                .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {run:#?}"))
        };
        assert!(matches!(run.code, 0 | 2), "only exit 0 or 2: {run:#?}");
        if run.code == 2 {
            assert_eq!(
                run.stderr.lines().count(),
                1,
                "exit 2 says one line: {run:#?}"
            );
            assert!(stdout.is_null(), "exit 2 prints no decision: {run:#?}");
        }
        let temp = regex_escape(&env.dir.path().display().to_string());
        insta::with_settings!({
            filters => vec![
                (r"127\.0\.0\.1:\d+", "127.0.0.1:[port]"),
                (temp.as_str(), "[tmp]"),
            ],
        }, {
            insta::assert_json_snapshot!(json!({
                "exit_code": run.code,
                "stdout": stdout,
                "stderr": if run.code == 2 { Value::from(run.stderr.trim_end()) } else { Value::Null },
            }));
        });
    });
}

/// The simulator and configuration a fixture's `<case>.toml` asks for.
pub(crate) fn scene_env(path: &Path) -> TestEnv {
    let scene = scene_for(path);
    let env = TestEnv::with(Setup {
        frozen: true,
        time_scale: scene.time_scale.unwrap_or(100.0),
        scenario: scene.scenario.as_deref().map(|text| {
            rewind::sim::Scenario::from_toml(text, "fixture scenario").expect("scenario")
        }),
        ..Setup::default()
    });
    let mut hook = scene
        .hook
        .clone()
        .unwrap_or_else(|| String::from("budget_secs = 30"));
    if let Some(catalog) = &scene.catalog {
        let file = env.path("catalog.toml");
        std::fs::write(&file, catalog).expect("write catalog");
        let _ = write!(hook, "\ncatalogs = [{:?}]", file.display().to_string());
    }
    env.write_config(&Setup {
        trust_ca: scene.trust_ca.unwrap_or(true),
        url: scene.zvm.as_deref().map(|down| {
            assert_eq!(down, "down", "zvm = \"down\" is the only choice");
            closed_port_url()
        }),
        hook,
        ..Setup::default()
    });
    for fault in &scene.faults {
        env.sim.add_fault(fault.clone());
    }
    env
}

fn scene_for(fixture: &Path) -> Scene {
    let sidecar = fixture.with_extension("toml");
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", sidecar.display())),
        Err(_) => Scene::default(),
    }
}

pub(crate) fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = r"\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// The contract the host relies on: a 5 s budget ends in a deny before 6 s, whether the ZVM
/// hangs or Zerto never lists the tag.
#[test]
fn the_budget_holds_for_a_hung_zvm_and_a_tag_that_never_lists() {
    let cases = [
        Fault::Hang { route: "*".into() },
        Fault::TagNeverListed {
            vpg: "jp-ubuntu-vpg".into(),
        },
    ];
    for fault in cases {
        let env = TestEnv::with(Setup {
            hook: String::from("budget_secs = 5"),
            faults: vec![fault.clone()],
            ..Setup::default()
        });
        let run = env.hook(&hook_input(
            "mcp__ssh__exec",
            &json!({"host": "jp-ubuntu", "command": "reboot"}),
            "toolu_b",
        ));
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(run.decision(), "deny", "{fault:?}: {run:#?}");
        assert!(
            run.elapsed < Duration::from_secs(6),
            "{fault:?}: a 5 s budget took {:?}",
            run.elapsed
        );
    }
}

/// A confirmed call: the tag starts with the tool_use_id and names the VM, and the context
/// gives the exact recover command.
#[test]
fn a_confirmed_call_tags_the_change_and_hands_the_model_the_recover_command() {
    let env = TestEnv::start();
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "x"}),
        "toolu_ctx_9",
    ));
    assert_eq!(run.decision(), "none", "{run:#?}");
    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 1);
    let tag = &inserts[0].tag;
    assert!(
        tag.starts_with("ai:toolu_ctx_9 | claude-code/5e55i0n0 | mcp__ssh__exec | vm=jp-ubuntu | "),
        "{tag}"
    );
    let context = run.reason();
    assert!(
        context.contains(inserts[0].checkpoint_id.as_deref().expect("id")),
        "{context}"
    );
    assert!(
        context.contains("rewind recover --vm jp-ubuntu --change toolu_ctx_9 --path <file>"),
        "{context}"
    );
}

/// Every decision lands in the audit trail, readable with `rewind log`.
#[test]
fn decisions_are_audited_and_filtered_by_rewind_log() {
    let env = TestEnv::start();
    env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "password": "hunter2"}),
        "toolu_a1",
    ));
    env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "mail01"}),
        "toolu_a2",
    ));
    env.hook(&hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu"}),
        "toolu_a3",
    ));
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audit trail");
    assert_eq!(audit.lines().count(), 3);
    assert!(
        !audit.contains("hunter2"),
        "secret-looking arguments are redacted"
    );
    let asks = env.run(&["log", "--decision", "ask", "--json"], b"");
    asks.success();
    assert_eq!(asks.stdout.lines().count(), 1, "{asks:#?}");
    assert!(asks.stdout.contains("toolu_a2"));
    // Read-only calls name no VM (their catalog entries have no vm_arg): one line.
    let by_vm = env.run(&["log", "--vm", "jp-ubuntu"], b"");
    assert_eq!(by_vm.stdout.lines().count(), 1, "{by_vm:#?}");
    assert!(
        by_vm.stdout.contains("jp-ubuntu-vpg:"),
        "the checkpoint is listed: {by_vm:#?}"
    );
}

/// The hook runs in the agent's working directory, where the agent could write a
/// `.rewind.toml` that waves everything through: the hook never reads one.
#[test]
fn the_hook_ignores_a_rewind_toml_in_the_agents_working_directory() {
    let env = TestEnv::start();
    std::fs::write(
        env.path("wave.toml"),
        "[[read_only]]\nserver = \"*\"\ntool = \"*\"\n",
    )
    .expect("catalog");
    std::fs::write(
        env.path(".rewind.toml"),
        "[hook]\ncatalogs = [\"wave.toml\"]\n",
    )
    .expect("config");
    let call = hook_input(
        "mcp__vmware__power_off",
        &json!({"vm": "jp-ubuntu"}),
        "toolu_cwd",
    );

    let mut hook = env.command(&["hook"]);
    hook.env_remove("REWIND_CONFIG");
    let run = crate::support::run(hook, &call);
    assert_eq!(run.decision(), "ask", "{run:#?}");

    // An operator's command in that directory does read it.
    let mut check = env.command(&["check", "mcp__vmware__power_off"]);
    check.env_remove("REWIND_CONFIG");
    let explained = crate::support::run(check, b"");
    assert!(
        explained.stdout.contains("class:    read-only"),
        "{explained:#?}"
    );
}

/// On a running clock (not the frozen one of the snapshots), the fallback the model is told
/// about is a real, untagged checkpoint from before the tagged one, on every VPG.
#[test]
fn the_fallback_is_an_earlier_untagged_checkpoint_the_zvm_lists() {
    let env = TestEnv::with(Setup {
        time_scale: 20.0,
        ..Setup::default()
    });
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "db01", "command": "x"}),
        "toolu_fb",
    ));
    let context = run.reason();
    for vpg in ["db01-local", "db01-azure"] {
        let line = context
            .lines()
            .find(|l| l.starts_with(&format!("- VPG {vpg}: tagged checkpoint ")))
            .unwrap_or_else(|| panic!("no line for {vpg}: {context}"));
        let words: Vec<&str> = line.split([' ', ';']).filter(|w| !w.is_empty()).collect();
        // "- VPG <vpg>: tagged checkpoint <id> at <time> fallback <id> at <time> (...)"
        let (tagged, tagged_at) = (words[5], words[7]);
        let (fallback, fallback_at) = (words[9], words[11]);
        let listed = env.sim.checkpoints(vpg);
        let tag = listed
            .iter()
            .find(|c| c.id == tagged)
            .expect("the tagged checkpoint is listed");
        assert!(
            tag.tag
                .as_deref()
                .is_some_and(|t| t.starts_with("ai:toolu_fb | ")),
            "{tag:?}"
        );
        let earlier = listed
            .iter()
            .find(|c| c.id == fallback)
            .expect("the fallback is listed");
        assert_eq!(earlier.tag, None, "{line}");
        let at = |t: &str| rewind::time::parse_utc(t).expect("time");
        assert!(at(fallback_at) < at(tagged_at), "{line}");
    }
}

/// An MCP call that names two VMs under two of its entry's `vm_arg` keys may act on either
/// (which one the server picks is not known): both are checkpointed before it runs.
#[test]
fn every_vm_argument_present_is_checkpointed() {
    let env = TestEnv::start();
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "server": "db01", "command": "sudo systemctl restart app"}),
        "toolu_two_keys",
    ));
    assert_eq!(run.decision(), "none", "{run:#?}");
    let mut per_vpg: Vec<String> = env.sim.inserts().into_iter().map(|i| i.vpg_name).collect();
    per_vpg.sort_unstable();
    assert_eq!(per_vpg, ["db01-azure", "db01-local", "jp-ubuntu-vpg"]);
}

/// Two VMs protected by one VPG: that VPG gets one insert, its tag naming both VMs and the
/// change, and both VMs' recover commands find it.
#[test]
fn a_vpg_shared_by_two_vms_of_one_call_is_tagged_once() {
    let scenario = rewind::sim::Scenario::from_toml(
        r#"
username = "admin"
password = "zerto-sim"
[[vm]]
name = "app01"
id = "d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-301"
ips = ["10.0.1.1"]
guest_os = "linux"
[[vm]]
name = "app02"
id = "d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-302"
ips = ["10.0.1.2"]
guest_os = "linux"
[[vpg]]
name = "app-vpg"
profile = "vsphere"
vms = ["app01", "app02"]
[[vpg]]
name = "app02-extra"
profile = "vsphere"
vms = ["app02"]
"#,
        "test",
    )
    .expect("scenario");
    let env = TestEnv::with(Setup {
        scenario: Some(scenario),
        ..Setup::default()
    });
    let run = env.hook(&hook_input(
        "mcp__ansible__run_playbook",
        &json!({"limit": "app01:app02,10.0.1.2"}),
        "toolu_shared",
    ));
    assert_eq!(run.decision(), "none", "{run:#?}");
    let inserts = env.sim.inserts();
    let mut per_vpg: Vec<&str> = inserts.iter().map(|i| i.vpg_name.as_str()).collect();
    per_vpg.sort_unstable();
    assert_eq!(per_vpg, ["app-vpg", "app02-extra"], "{inserts:#?}");
    for insert in &inserts {
        assert!(insert.tag.starts_with("ai:toolu_shared | "), "{insert:?}");
    }
    let shared = inserts
        .iter()
        .find(|i| i.vpg_name == "app-vpg")
        .expect("shared");
    assert!(shared.tag.contains("vm=app01,app02 |"), "{shared:?}");
    for vm in ["app01", "app02"] {
        let listed = env.run(&["checkpoints", vm, "--change", "toolu_shared"], b"");
        listed.success();
        assert!(
            run.reason().contains(&format!(
                "rewind recover --vm {vm} --change toolu_shared --path <file>"
            )),
            "{run:#?}"
        );
    }
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audit");
    let record: Value = serde_json::from_str(audit.lines().last().expect("line")).expect("json");
    assert_eq!(record["vms"], json!(["app01", "app02"]));
    assert_eq!(record["vpgs"], json!(["app-vpg", "app02-extra"]));
    assert_eq!(record["checkpoints"].as_array().map(Vec::len), Some(2));
}

/// `rewind check --payload` and the hook share one classification: for every fixture, what
/// `check` says the hook will do is what the hook's snapshot shows it did.
#[test]
fn check_agrees_with_the_hook_on_every_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hook");
    let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() > 20);
    let env = TestEnv::start();
    for fixture in fixtures {
        let scene = scene_for(&fixture);
        let mut hook = scene
            .hook
            .clone()
            .unwrap_or_else(|| String::from("budget_secs = 30"));
        if let Some(catalog) = &scene.catalog {
            let file = env.path("catalog.toml");
            std::fs::write(&file, catalog).expect("write catalog");
            let _ = write!(hook, "\ncatalogs = [{:?}]", file.display().to_string());
        }
        env.write_config(&Setup {
            hook,
            ..Setup::default()
        });
        let name = fixture
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "tests/it/snapshots/it__hook__every_decision_table_row@{name}.snap"
        ));
        let text = std::fs::read_to_string(&snapshot).expect("snapshot");
        let hook: Value =
            serde_json::from_str(&text[text.find("\n{").expect("json")..]).expect("json");
        let checked = env.run(&["check", "--payload", &fixture.display().to_string()], b"");
        checked.success();
        // The decision comes last, and a reason may run over several lines.
        let stdout = format!("\n{}", checked.stdout);
        let said = stdout
            .split_once("\ndecision: ")
            .map_or_else(
                || panic!("{name}: no decision line: {checked:#?}"),
                |(_, decision)| decision.trim_end(),
            )
            .replace(&env.dir.path().display().to_string(), "[tmp]");
        let specific = &hook["stdout"]["hookSpecificOutput"];
        let reason = specific["permissionDecisionReason"]
            .as_str()
            .or_else(|| specific["additionalContext"].as_str())
            .unwrap_or_default();
        let label = specific["permissionDecision"].as_str().unwrap_or("none");
        if let Some(line) = said.strip_prefix("block (exit 2): ") {
            assert_eq!(hook["exit_code"], 2, "{name}");
            assert_eq!(hook["stderr"], line, "{name}");
        } else if said.starts_with("checkpoint every VPG") {
            // The hook asked Zerto: its answer is a checkpoint, or came from the ZVM.
            assert!(
                reason.contains("Zerto") || reason.contains("ZVM") || reason.contains("budget"),
                "{name}: {reason}"
            );
        } else if said == "none" {
            assert_eq!(hook["stdout"], json!({}), "{name}");
        } else {
            assert_eq!(said, format!("{label}: {reason}"), "{name}");
        }
    }
}

/// A second host hidden in brackets, a URL or an Ansible subscript is never dropped: the call
/// either asks or checkpoints every VM it reaches, never the first one alone.
#[test]
fn a_host_hidden_behind_brackets_a_url_or_a_subscript_is_never_dropped() {
    let env = TestEnv::start();
    for (n, value) in [
        "[10.0.0.11]:22:db01",
        "[10.0.0.11]:db01",
        "ssh://root@10.0.0.11/:db01",
        "ssh://root@jp-ubuntu:22/x:db01",
        "ssh://[10.0.0.11]:22:db01",
        "jp-ubuntu[0:1]",
    ]
    .into_iter()
    .enumerate()
    {
        let before = env.sim.inserts().len();
        let run = env.hook(&hook_input(
            "mcp__ssh__exec",
            &json!({"host": value, "command": "rm -rf /srv/app"}),
            &format!("toolu_hidden_{n}"),
        ));
        let inserts = env.sim.inserts();
        let tagged: Vec<&str> = inserts[before..]
            .iter()
            .map(|i| i.vpg_name.as_str())
            .collect();
        match run.decision().as_str() {
            "ask" => assert!(tagged.is_empty(), "{value}: asked but tagged {tagged:?}"),
            "none" => assert!(
                tagged.iter().any(|v| v.starts_with("db01")),
                "{value}: db01 reached with no checkpoint on it: {tagged:?} {run:#?}"
            ),
            other => panic!("{value}: unexpected {other}: {run:#?}"),
        }
    }
}

/// A host that writes the payload but never closes stdin still gets its answer within the
/// budget (a refusal, exit 2 with one line), not a hook that outlives it.
#[test]
fn stdin_left_open_is_refused_within_the_budget() {
    use std::io::Write as _;
    use std::process::Stdio;
    let env = TestEnv::with(Setup {
        hook: String::from("budget_secs = 2"),
        ..Setup::default()
    });
    let mut child = env
        .command(&["hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rewind starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(&hook_input(
            "mcp__ssh__exec",
            &json!({"host": "jp-ubuntu", "command": "reboot"}),
            "toolu_open_stdin",
        ))
        .expect("write");
    stdin.flush().expect("flush");
    // Held open until the hook has answered, or a minute has passed (a hang guard).
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the hook never answered while stdin stayed open");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stdin);
    let output = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("stdin"), "{stderr}");
    assert!(env.sim.inserts().is_empty());
}

/// `--host` fixes the dialect: a host this build has no dialect for is refused with exit 2 and
/// a line saying so, whatever the payload. Without `--host`, a payload no host's fingerprint
/// matches is refused the same way; Claude Code's is recognised.
/// `--host` fixes the dialect: another host's payload read in the wrong one names an event that
/// host does not send, and is denied. Without `--host`, a payload no host's fingerprint matches
/// is refused with exit 2 and a line saying so; Claude Code's is recognised.
#[test]
fn another_hosts_payload_under_the_wrong_host_is_denied_and_unrecognisable_payloads_are_blocked() {
    let env = TestEnv::start();
    let call = hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "reboot"}),
        "toolu_h1",
    );
    // Claude Code's payload under Gemini's or Cursor's dialect: not an event those hosts send.
    for host in ["gemini", "cursor"] {
        let run = env.run(&["hook", "--host", host], &call);
        assert_eq!(run.code, 0, "{host}: {run:#?}");
        assert!(
            run.stdout
                .contains("is not one this host sends before a tool call")
                && run.stdout.contains("deny"),
            "{host}: {run:#?}"
        );
    }
    assert!(env.sim.inserts().is_empty());
    let bare = br#"{"hook_event_name":"PreToolUse","tool_name":"mcp__ssh__exec","tool_input":{"host":"jp-ubuntu"}}"#;
    let run = env.hook(bare);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stderr.contains("cannot tell which agent host"),
        "{run:#?}"
    );
    assert!(env.sim.inserts().is_empty());
    let run = env.run(&["hook", "--host", "claude-code"], bare);
    assert_eq!(run.decision(), "none", "{run:#?}");
    assert!(run.reason().contains("tagged checkpoint"), "{run:#?}");
}

/// tufantunc/ssh-mcp v2 names a profile of its own config.toml; with `ssh_mcp_config` the
/// hook reads that file: a profile becomes its host, no profile means the default profile,
/// and a profile the file lacks asks.
#[test]
fn ssh_mcp_profiles_are_read_from_the_servers_own_config() {
    let env = TestEnv::start();
    let ssh_config = env.path("ssh-mcp.toml");
    std::fs::write(
        &ssh_config,
        "[defaults]\ndefaultProfile = \"app\"\ncommandTimeoutMs = 60000\n\n\
         [[profiles]]\nname = \"app\"\nhost = \"jp-ubuntu\"\nport = 22\nuser = \"deploy\"\n\n\
         [[profiles]]\nname = \"database\"\nhost = \"db01\"\nauth = \"agent\"\n",
    )
    .expect("write");
    let catalog = env.path("catalog.toml");
    std::fs::write(
        &catalog,
        format!(
            "[[server]]\nname = \"ssh-mcp\"\nssh_mcp_config = {:?}\n",
            ssh_config.display().to_string()
        ),
    )
    .expect("write catalog");
    env.write_config(&Setup {
        hook: format!(
            "budget_secs = 30\ncatalogs = [{:?}]",
            catalog.display().to_string()
        ),
        ..Setup::default()
    });
    let cases = [
        (json!({"command": "reboot", "profile": "database"}), "db01"),
        (json!({"command": "reboot"}), "jp-ubuntu"),
    ];
    for (i, (input, vm)) in cases.iter().enumerate() {
        let id = format!("toolu_profile_{i}");
        let run = env.hook(&hook_input("mcp__ssh-mcp__run-command", input, &id));
        assert_eq!(run.decision(), "none", "{input}: {run:#?}");
        assert!(
            run.reason().contains(&format!("VM {vm}")),
            "{input}: {run:#?}"
        );
        assert!(
            env.sim
                .inserts()
                .iter()
                .any(|i| i.tag.starts_with(&format!("ai:{id} | "))
                    && i.tag.contains(&format!(" | vm={vm} | "))),
            "{input}"
        );
    }
    let unknown = env.hook(&hook_input(
        "mcp__ssh-mcp__run-command",
        &json!({"command": "reboot", "profile": "staging"}),
        "toolu_profile_x",
    ));
    assert_eq!(unknown.decision(), "ask", "{unknown:#?}");
    assert!(unknown.reason().contains("staging"), "{unknown:#?}");
}

/// Reopening a session name on another VM while the session store cannot be written must not
/// leave the old record in charge: the reopening call asks, so the follow-up in that session
/// is never checkpointed on the first VM while the server runs it on the second.
#[test]
fn a_session_reopened_while_the_store_is_locked_asks_instead_of_keeping_the_old_vm() {
    let env = TestEnv::start();
    let first = env.hook(&hook_input(
        "mcp__ssh__ssh_connect",
        &json!({"name": "s1", "host": "jp-ubuntu"}),
        "toolu_reopen_1",
    ));
    assert_eq!(first.decision(), "none", "{first:#?}");
    let held = rewind::lockfile::lock(
        &env.path("state/rewind/sessions.lock"),
        &rewind::deadline::Deadline::after(Duration::from_secs(5)),
    )
    .expect("hold the session store's lock");
    let reopen = env.hook(&hook_input(
        "mcp__ssh__ssh_connect",
        &json!({"name": "s1", "host": "db01"}),
        "toolu_reopen_2",
    ));
    drop(held);
    assert_eq!(reopen.decision(), "ask", "{reopen:#?}");
    assert!(reopen.reason().contains("\"s1\""), "{reopen:#?}");
    assert!(env.sim.inserts().is_empty());
}

/// Text typed into a shell that is already running (Codex `write_stdin`, Copilot
/// `write_bash`) may land on another machine: naming a remote program or a protected
/// machine asks (a deny that says so where the host cannot ask); ordinary typing does not.
#[test]
fn typing_into_a_running_shell_that_names_a_machine_asks() {
    let env = TestEnv::start();
    let cases = [
        (
            "codex",
            serde_json::json!({"session_id": "s", "turn_id": "t", "transcript_path": "/t", "cwd": "/tmp",
                "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
                "tool_name": "write_stdin", "tool_input": {"session_id": 3, "chars": "ssh web01 uptime\n"},
                "tool_use_id": "c1"}),
        ),
        (
            "copilot",
            serde_json::json!({"timestamp": 1, "cwd": "/tmp", "toolName": "write_bash",
                "toolArgs": serde_json::json!({"shellId": "1", "input": "ssh web01 uptime\n"}).to_string()}),
        ),
    ];
    for (host, payload) in cases {
        let run = env.run(&["hook", "--host", host], payload.to_string().as_bytes());
        assert!(
            run.stdout.contains("already running") || run.stderr.contains("already running"),
            "{host}: exit {} stdout {} stderr {}",
            run.code,
            run.stdout,
            run.stderr
        );
        let mut quiet = payload.clone();
        let typed = if host == "codex" {
            &mut quiet["tool_input"]["chars"]
        } else {
            &mut quiet["toolArgs"]
        };
        *typed = if host == "codex" {
            serde_json::json!("ls -la\n")
        } else {
            serde_json::json!(serde_json::json!({"shellId": "1", "input": "ls -la\n"}).to_string())
        };
        let run = env.run(&["hook", "--host", host], quiet.to_string().as_bytes());
        assert!(
            run.code == 0 && !run.stdout.contains("already running"),
            "{host}: ordinary typing: {} {}",
            run.stdout,
            run.stderr
        );
    }
}

/// `rewind-hook`, what `install` writes, decides exactly as `rewind hook` does, guard
/// included; given another command line it refuses the call (exit 2, one line) rather than
/// letting a mistyped host entry run it unguarded.
#[test]
fn the_hook_binary_decides_as_rewind_hook_and_refuses_another_command_line() {
    let env = TestEnv::start();
    // The environment and directory `rewind` gets, given to `rewind-hook`.
    let hook_binary = |args: &[&str]| {
        let base = env.command(args);
        let mut lean = std::process::Command::new(env!("CARGO_BIN_EXE_rewind-hook"));
        lean.env_clear()
            .envs(
                base.get_envs()
                    .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
            )
            .current_dir(base.get_current_dir().expect("a directory"))
            .args(args);
        lean
    };
    for (tool, input, id) in [
        (
            "mcp__ssh__read_file",
            json!({"host": "jp-ubuntu", "path": "/etc/hosts"}),
            "toolu_ro",
        ),
        (
            "mcp__ssh__exec",
            json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
            "toolu_mut",
        ),
        (
            "mcp__weather__forecast",
            json!({"city": "Oslo"}),
            "toolu_unlisted",
        ),
        (
            "mcp__vmware__power_off",
            json!({"vm": "nowhere-01"}),
            "toolu_unknown",
        ),
    ] {
        let call = hook_input(tool, &input, id);
        let lean = crate::support::run(hook_binary(&["hook", "--host", "claude-code"]), &call);
        let whole = crate::support::run(env.command(&["hook", "--host", "claude-code"]), &call);
        assert_eq!(lean.code, 0, "{lean:#?}");
        assert_eq!(
            lean.decision(),
            whole.decision(),
            "{tool}: {lean:#?} {whole:#?}"
        );
        // The two records agree on everything but when, how long and which checkpoint
        // (`rewind-hook` has `rewind` beside it take the checkpoints).
        let trail = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
        let records: Vec<Value> = trail
            .lines()
            .rev()
            .take(2)
            .map(|line| serde_json::from_str(line).expect("json"))
            .collect();
        let comparable = |record: &Value| {
            let mut record = record.clone();
            let fields = record.as_object_mut().expect("an object");
            for varying in ["time", "duration_ms", "prev"] {
                fields.remove(varying);
            }
            if let Some(Value::Array(points)) = fields.get_mut("checkpoints") {
                for point in points {
                    let point = point.as_object_mut().expect("an object");
                    for varying in ["id", "time", "fallback"] {
                        point.remove(varying);
                    }
                }
            }
            if let Some(Value::String(reason)) = fields.get_mut("reason") {
                *reason = reason.lines().next().unwrap_or_default().to_owned();
            }
            record
        };
        assert_eq!(
            comparable(&records[0]),
            comparable(&records[1]),
            "{tool}: {records:#?}"
        );
    }
    for args in [
        &["--host", "claude-code"][..],
        &["hook", "--host", "vscode"],
        &["hook", "--help"],
    ] {
        let call = hook_input(
            "mcp__vmware__power_off",
            &json!({"vm": "jp-ubuntu"}),
            "toolu_x",
        );
        let refused = crate::support::run(hook_binary(args), &call);
        assert_eq!(refused.code, 2, "{args:?}: {refused:#?}");
        assert!(refused.stdout.is_empty(), "{refused:#?}");
        assert_eq!(refused.stderr.lines().count(), 1, "{refused:#?}");
        assert!(
            refused.stderr.contains("usage: rewind-hook"),
            "{refused:#?}"
        );
    }
}

/// `rewind-hook` has `rewind` beside it take the checkpoints: without it, a call that needs
/// one is denied (naming the binary it could not run), and calls that need none are
/// answered as ever.
#[test]
fn the_hook_binary_without_rewind_beside_it_denies_what_needs_a_checkpoint() {
    let env = TestEnv::start();
    let alone = tempfile::tempdir().expect("tempdir");
    let lean = alone.path().join("rewind-hook");
    std::fs::copy(env!("CARGO_BIN_EXE_rewind-hook"), &lean).expect("copied");
    let hook = |tool: &str, input: &Value, id: &str| {
        let base = env.command(&["hook", "--host", "claude-code"]);
        let mut command = std::process::Command::new(&lean);
        command
            .env_clear()
            .envs(
                base.get_envs()
                    .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
            )
            .current_dir(base.get_current_dir().expect("a directory"))
            .args(["hook", "--host", "claude-code"]);
        crate::support::run(command, &hook_input(tool, input, id))
    };
    let mutating = hook(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
        "toolu_alone",
    );
    assert_eq!(mutating.code, 0, "{mutating:#?}");
    assert_eq!(mutating.decision(), "deny", "{mutating:#?}");
    let missing = alone.path().join("rewind").display().to_string();
    assert!(
        mutating
            .reason()
            .contains(&format!("the guard in {missing} cannot start")),
        "{mutating:#?}"
    );
    let read_only = hook(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu", "path": "/etc/hosts"}),
        "toolu_alone_ro",
    );
    assert_eq!(read_only.code, 0, "{read_only:#?}");
    assert_eq!(read_only.decision(), "none", "{read_only:#?}");
}

/// `rewind hook` (and `rewind-hook hook`) started by a person at a terminal says in one line
/// what it reads and how to try a call, and exits with the usage code at once instead of
/// waiting in silence for a payload; with stdin a pipe the same command still decides.
#[test]
fn the_hook_at_a_terminal_says_what_it_reads_and_exits_with_the_usage_code() {
    let env = TestEnv::start();
    for bin in [crate::support::rewind_bin(), crate::support::hook_bin()] {
        // `script` gives the command a terminal (a pseudo-terminal) on stdin, stdout and
        // stderr, and exits with its code; `timeout` ends a hook that waits instead.
        let line = format!("{} hook", bin.display());
        let mut cmd = std::process::Command::new("timeout");
        cmd.args(["20", "script", "-qec", &line, "/dev/null"])
            .env("HOME", env.path("home"))
            .env("XDG_CACHE_HOME", env.path("cache"))
            .env("XDG_STATE_HOME", env.path("state"))
            .env("REWIND_CONFIG", &env.config);
        let run = crate::support::run(cmd, b"");
        assert_eq!(run.code, 2, "{run:#?}");
        assert!(
            run.stdout
                .contains("reads an agent host's pre-tool-use hook JSON on stdin")
                && run.stdout.contains("rewind check --command"),
            "{run:#?}"
        );
        assert!(run.elapsed < Duration::from_secs(10), "{run:#?}");
    }
    let piped = env.hook(&hook_input(
        "Read",
        &json!({"file_path": "/etc/hosts"}),
        "toolu_tty",
    ));
    assert_eq!(piped.code, 0, "{piped:#?}");
    assert!(
        !piped.stderr.contains("reads an agent host's"),
        "{piped:#?}"
    );
}
