//! `rewind hook` as Claude Code runs it: one snapshot per row of the decision table, each a
//! fixture file fed on stdin to the real binary facing the simulator (frozen clock, so
//! checkpoint ids and times are the same on every run).
//!
//! A fixture `tests/fixtures/hook/<case>.json` is stdin byte for byte; an optional
//! `<case>.toml` beside it sets the scene: `faults` (simulator faults), `hook` (extra `[hook]`
//! lines), `trust_ca = false`, `zvm = "down"`, `catalog` (a user catalog's text),
//! `time_scale` (default 100).
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
}

#[test]
fn every_decision_table_row() {
    insta::glob!("../fixtures", "hook/*.json", |path| {
        let scene = scene_for(path);
        let env = TestEnv::with(Setup {
            frozen: true,
            time_scale: scene.time_scale.unwrap_or(100.0),
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

fn scene_for(fixture: &Path) -> Scene {
    let sidecar = fixture.with_extension("toml");
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", sidecar.display())),
        Err(_) => Scene::default(),
    }
}

fn regex_escape(text: &str) -> String {
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

/// A confirmed call: the tag holds `change=<tool_use_id>` and names the VM, and the context
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
        tag.starts_with(
            "ai:claude-code/5e55i0n0 | mcp__ssh__exec | vm=jp-ubuntu | change=toolu_ctx_9 | "
        ),
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
                .is_some_and(|t| t.contains("change=toolu_fb")),
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

/// A server started for one host (`[[server]]`) names no host in its calls: the checkpoint
/// goes on the bound VM, and a call that does name one (v2's `profile`) goes there instead.
#[test]
fn a_server_bound_call_is_checkpointed_on_the_bound_vm() {
    let env = TestEnv::start();
    let catalog = env.path("catalog.toml");
    std::fs::write(&catalog, "[[server]]\nname = \"ssh_mcp\"\nvm = \"db01\"\n")
        .expect("write catalog");
    env.write_config(&Setup {
        hook: format!(
            "budget_secs = 30\ncatalogs = [{:?}]",
            catalog.display().to_string()
        ),
        ..Setup::default()
    });
    let run = env.hook(&hook_input(
        "mcp__ssh-mcp__exec",
        &json!({"command": "systemctl restart postgresql"}),
        "toolu_bound_1",
    ));
    assert_eq!(run.decision(), "none", "{run:#?}");
    assert!(run.reason().contains("on VM db01"), "{run:#?}");
    let run = env.hook(&hook_input(
        "mcp__ssh-mcp__run-command",
        &json!({"command": "reboot", "profile": "jp-ubuntu"}),
        "toolu_bound_2",
    ));
    assert!(run.reason().contains("on VM jp-ubuntu"), "{run:#?}");
    let tags: Vec<String> = env.sim.inserts().iter().map(|i| i.tag.clone()).collect();
    assert!(!tags.is_empty(), "{tags:?}");
    for tag in &tags {
        assert!(
            tag.contains("vm=db01 | change=toolu_bound_1")
                || tag.contains("vm=jp-ubuntu | change=toolu_bound_2"),
            "{tags:?}"
        );
    }
    let before = tags.len();

    // Without the binding, the same call has no VM and asks.
    env.write_config(&Setup::default());
    let run = env.hook(&hook_input(
        "mcp__ssh-mcp__exec",
        &json!({"command": "reboot"}),
        "toolu_bound_3",
    ));
    assert_eq!(run.decision(), "ask", "{run:#?}");
    assert_eq!(env.sim.inserts().len(), before);
}

/// `ssh_connect {name, host}` is read-only and remembered; the `ssh_exec {sessionName}` that
/// follows is checkpointed on that host. A session never opened, or opened in another agent
/// session, asks.
#[test]
fn a_session_bound_call_is_checkpointed_on_the_vm_its_session_was_opened_on() {
    let env = TestEnv::start();
    let connect = env.hook(&hook_input(
        "mcp__ssh__ssh_connect",
        &json!({"name": "s1", "host": "db01", "username": "root"}),
        "toolu_conn_1",
    ));
    assert_eq!(connect.decision(), "none", "{connect:#?}");
    assert!(connect.reason().is_empty(), "{connect:#?}");
    assert!(env.sim.inserts().is_empty(), "connecting changes nothing");

    let exec = env.hook(&hook_input(
        "mcp__ssh__ssh_exec",
        &json!({"sessionName": "s1", "command": "systemctl restart postgresql"}),
        "toolu_exec_1",
    ));
    assert_eq!(exec.decision(), "none", "{exec:#?}");
    assert!(exec.reason().contains("on VM db01"), "{exec:#?}");
    let inserts = env.sim.inserts();
    assert!(!inserts.is_empty());
    for insert in &inserts {
        assert!(
            insert.tag.contains("vm=db01 | change=toolu_exec_1"),
            "{}",
            insert.tag
        );
    }

    let unknown = env.hook(&hook_input(
        "mcp__ssh__ssh_exec",
        &json!({"sessionName": "s2", "command": "reboot"}),
        "toolu_exec_2",
    ));
    assert_eq!(unknown.decision(), "ask", "{unknown:#?}");
    assert!(
        unknown.reason().contains("no session it names was opened"),
        "{unknown:#?}"
    );

    let mut other_session: serde_json::Value = serde_json::from_slice(&hook_input(
        "mcp__ssh__ssh_exec",
        &json!({"sessionName": "s1", "command": "reboot"}),
        "toolu_exec_3",
    ))
    .expect("json");
    other_session["session_id"] = json!("another-agent-session");
    let other = env.hook(&serde_json::to_vec(&other_session).expect("json"));
    assert_eq!(other.decision(), "ask", "{other:#?}");
    assert_eq!(env.sim.inserts().len(), inserts.len());

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(env.path("state/rewind/sessions.json"))
            .expect("the session store")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
