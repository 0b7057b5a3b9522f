//! `rewind restore-vm` against the simulator over HTTPS: a guarded change "breaks" the VM
//! (its content marker moves on), and the VM is put back to the checkpoint pinned before
//! it, previewed in a failover test, or left as it is when the command refuses or rolls back.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rewind::sim::{Fault, Scenario};
use serde_json::{Value, json};

use crate::support::{Run, Setup, TestEnv, eventually, hook_input};

const VM: &str = "jp-ubuntu";

/// A guarded change on `vm` (as the hook does it), then the change itself: the VM's marker
/// moves on. Returns the marker the change left.
fn guarded_change(env: &TestEnv, vm: &str, change: &str) -> u64 {
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": vm, "command": "sudo apt-get -y dist-upgrade"}),
        change,
    ));
    assert!(
        run.reason().contains("tagged checkpoint"),
        "guarded: {run:#?}"
    );
    env.sim.change_vm(vm).expect("the VM exists")
}

fn restore_vm(env: &TestEnv, args: &[&str]) -> Run {
    let mut all = vec!["restore-vm"];
    all.extend_from_slice(args);
    env.run(&all, b"")
}

fn marker(env: &TestEnv) -> u64 {
    env.sim.vm_marker(VM).expect("marker")
}

fn task_polls(env: &TestEnv) -> u64 {
    env.sim
        .stats()
        .by_route
        .get("GET /v1/tasks/{id}")
        .copied()
        .unwrap_or(0)
}

fn started_restore(env: &TestEnv) -> bool {
    env.sim
        .stats()
        .by_route
        .contains_key("POST /v1/vms/{id}/Restore")
}

/// The trail's records of restore-vm: (decision, step).
fn trail_steps(env: &TestEnv) -> Vec<(String, String)> {
    std::fs::read_to_string(env.path("state/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|r| r["tool"] == "rewind restore-vm")
        .map(|r| {
            (
                r["decision"].as_str().unwrap_or_default().to_owned(),
                r["args"]["step"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_committed_restore_puts_the_vm_back_to_the_point_before_the_change() {
    let env = TestEnv::start();
    let broken = guarded_change(&env, VM, "toolu_v1");
    assert_eq!(broken, 1);
    let polls_before = task_polls(&env);
    let started = Instant::now();
    let run = restore_vm(&env, &[VM, "--change", "toolu_v1", "--yes"]);
    let elapsed = started.elapsed();
    run.success();
    assert_eq!(marker(&env), 0, "the VM is at the checkpoint: {run:#?}");
    assert!(run.stdout.contains("committed:"), "{run:#?}");
    assert!(
        run.stdout
            .contains("found by the id the audit trail recorded"),
        "{run:#?}"
    );
    assert_eq!(env.sim.whole_vm_operations(), (0, 0));
    // At most one request a second while following tasks, and (everything but the waits
    // between polls) at most a second of rewind's own.
    let polls = task_polls(&env) - polls_before;
    assert!(
        Duration::from_secs(polls) <= elapsed + Duration::from_secs(1),
        "{polls} polls in {elapsed:?}"
    );
    let own = elapsed.saturating_sub(Duration::from_secs(polls));
    assert!(
        own <= Duration::from_secs(1),
        "overhead {own:?} ({polls} polls in {elapsed:?})"
    );
    let steps = trail_steps(&env);
    for step in [
        "restore-started",
        "ready-for-commit",
        "commit-started",
        "committed",
    ] {
        assert!(steps.iter().any(|(_, s)| s == step), "{step} in {steps:?}");
    }
    assert!(steps.contains(&("vm-restored".to_owned(), "committed".to_owned())));
}

#[test]
fn a_failed_verification_rolls_the_restore_back() {
    let env = TestEnv::start();
    let broken = guarded_change(&env, VM, "toolu_v2");
    let run = restore_vm(
        &env,
        &[
            VM,
            "--change",
            "toolu_v2",
            "--yes",
            "--verify",
            "echo checking; false",
        ],
    );
    assert_eq!(run.code, 4, "rolled back: {run:#?}");
    assert!(run.stdout.contains("--verify failed (exit 1)"), "{run:#?}");
    assert!(
        run.stderr.contains("checking"),
        "the check's output on stderr: {run:#?}"
    );
    assert_eq!(
        marker(&env),
        broken,
        "the VM is as it was before the restore"
    );
    assert_eq!(env.sim.whole_vm_operations(), (0, 0));
    assert!(trail_steps(&env).contains(&("rolled-back".to_owned(), "rolled-back".to_owned())));
}

#[test]
fn a_passing_verification_lets_the_commit_go_on() {
    let env = TestEnv::start();
    guarded_change(&env, VM, "toolu_v3");
    let run = restore_vm(
        &env,
        &[VM, "--change", "toolu_v3", "--yes", "--verify", "true"],
    );
    run.success();
    assert_eq!(marker(&env), 0);
}

#[test]
fn without_a_terminal_or_yes_nothing_is_started() {
    let env = TestEnv::start();
    let broken = guarded_change(&env, VM, "toolu_v4");
    let run = restore_vm(&env, &[VM, "--change", "toolu_v4"]);
    assert_eq!(run.code, 3, "{run:#?}");
    assert!(run.stderr.contains("pass --yes"), "{run:#?}");
    assert!(!started_restore(&env));
    assert_eq!(marker(&env), broken);
}

#[test]
fn unknown_vms_and_changes_are_refused_naming_how_to_list_them() {
    let env = TestEnv::start();
    let run = restore_vm(&env, &["no-such-vm", "--change", "toolu_x", "--yes"]);
    assert_eq!(run.code, 3, "{run:#?}");
    assert!(run.stderr.contains("`rewind vms`"), "{run:#?}");
    let run = restore_vm(&env, &[VM, "--change", "toolu_never", "--yes"]);
    assert_eq!(run.code, 3, "{run:#?}");
    assert!(
        run.stderr.contains("change toolu_never")
            && run.stderr.contains("`rewind checkpoints jp-ubuntu`"),
        "{run:#?}"
    );
    let run = restore_vm(&env, &[VM, "--checkpoint", "99999999", "--yes"]);
    assert_eq!(run.code, 3, "{run:#?}");
    assert!(!started_restore(&env));
    assert!(
        trail_steps(&env)
            .iter()
            .all(|(d, s)| d == "refused" && s == "refused")
    );
}

/// The lab with one VPG changed by `edit` (a TOML snippet placed in the VPG's table).
fn lab_with(vpg_line: &str) -> Scenario {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/lab.toml"))
        .expect("lab");
    let text = text.replacen(
        "vms = [\"jp-ubuntu\"]",
        &format!("vms = [\"jp-ubuntu\"]\n{vpg_line}"),
        1,
    );
    Scenario::from_toml(&text, "lab").expect("scenario")
}

#[test]
fn a_vpg_syncing_initialising_or_not_meeting_its_sla_is_refused() {
    for (line, words) in [
        ("sub_status = \"DeltaSync\"", "is syncing (DeltaSync)"),
        ("status = \"Initializing\"", "is initialising"),
        ("status = \"NotMeetingSLA\"", "is not meeting its SLA"),
    ] {
        let env = TestEnv::with(Setup {
            scenario: Some(lab_with(line)),
            ..Setup::default()
        });
        let run = restore_vm(
            &env,
            &[
                VM,
                "--checkpoint",
                "1001",
                "--vpg",
                "jp-ubuntu-vpg",
                "--yes",
            ],
        );
        assert_eq!(run.code, 3, "{line}: {run:#?}");
        assert!(run.stderr.contains(words), "{line}: {run:#?}");
        assert!(!started_restore(&env), "{line}");
    }
}

#[test]
fn a_checkpoint_that_left_the_journal_is_refused_as_such() {
    // 20x: the journal's one minute is 3 s, time enough for the guard to see its checkpoint
    // listed even on a loaded machine, and the checkpoint is out of the journal 4 s later.
    let env = TestEnv::with(Setup {
        scenario: Some(lab_with("journal_history_mins = 1")),
        time_scale: 20.0,
        ..Setup::default()
    });
    guarded_change(&env, VM, "toolu_v5");
    std::thread::sleep(Duration::from_secs(4));
    let run = restore_vm(&env, &[VM, "--change", "toolu_v5", "--yes"]);
    assert_eq!(run.code, 3, "{run:#?}");
    assert!(run.stderr.contains("has left the journal"), "{run:#?}");
    assert!(!started_restore(&env));
}

/// `rewind restore-vm <args>` started in the background, in its own process group.
fn spawn(env: &TestEnv, args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt as _;
    let mut all = vec!["restore-vm"];
    all.extend_from_slice(args);
    let mut cmd: Command = env.command(&all);
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().expect("rewind starts")
}

fn kill_group(child: &mut Child) {
    let pid = child.id().to_string();
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status();
    let _ = child.wait();
}

#[test]
fn a_killed_rewind_leaves_nothing_half_done_and_a_running_restore_is_left_alone() {
    let env = TestEnv::start();
    let broken = guarded_change(&env, VM, "toolu_v6");
    let mut first = spawn(
        &env,
        &[
            VM,
            "--change",
            "toolu_v6",
            "--yes",
            "--rollback-after",
            "5m",
            "--verify",
            "sleep 60",
        ],
    );
    eventually("the restore to be ready for commit", || marker(&env) == 0);
    let second = restore_vm(&env, &[VM, "--change", "toolu_v6", "--yes"]);
    assert_eq!(second.code, 3, "{second:#?}");
    assert!(second.stderr.contains("already in progress"), "{second:#?}");
    kill_group(&mut first);
    assert_eq!(
        env.sim.whole_vm_operations().0,
        1,
        "the restore waits for a commit"
    );
    // Rollback after 5 minutes: 3 s at 100x.
    eventually("Zerto to roll back by itself", || marker(&env) == broken);
    assert_eq!(env.sim.whole_vm_operations(), (0, 0));
}

#[test]
fn a_preview_runs_a_failover_test_and_leaves_the_vm_alone() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::RetagOnTestStop],
        ..Setup::default()
    });
    let broken = guarded_change(&env, VM, "toolu_v7");
    let mut preview = spawn(
        &env,
        &[VM, "--change", "toolu_v7", "--preview", "--hold", "3s"],
    );
    eventually("the test VM to be up", || {
        env.sim.whole_vm_operations().1 == 1
    });
    let during = restore_vm(&env, &[VM, "--change", "toolu_v7", "--yes"]);
    assert_eq!(during.code, 3, "{during:#?}");
    assert!(during.stderr.contains("failover test"), "{during:#?}");
    let status = preview.wait().expect("preview ends");
    let mut out = String::new();
    std::io::Read::read_to_string(preview.stdout.as_mut().expect("stdout"), &mut out)
        .expect("read");
    assert!(status.success(), "{out}");
    assert!(out.contains("\"jp-ubuntu - testing recovery\""), "{out}");
    assert!(out.contains("re-tagged:"), "{out}");
    assert_eq!(env.sim.whole_vm_operations(), (0, 0));
    assert_eq!(marker(&env), broken, "the preview touched nothing");
    // The re-tagged checkpoint is still found by the id the trail recorded.
    let run = restore_vm(&env, &[VM, "--change", "toolu_v7", "--yes"]);
    run.success();
    assert_eq!(marker(&env), 0);
}

#[test]
fn a_start_task_waiting_for_input_and_a_body_less_commit_are_both_understood() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::RestoreWaitsForCommit, Fault::RestoreDecisionNoBody],
        ..Setup::default()
    });
    guarded_change(&env, VM, "toolu_v8");
    let run = restore_vm(&env, &[VM, "--change", "toolu_v8", "--yes", "--json"]);
    run.success();
    assert_eq!(marker(&env), 0);
    let doc = run.json();
    let steps = doc["steps"].as_array().expect("steps");
    let step = |name: &str| {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        step("ready-for-commit")["state"],
        "WaitingForUserInput",
        "{doc:#}"
    );
    assert_eq!(step("commit-started")["detail"], "no body", "{doc:#}");
}

#[test]
fn a_failed_restore_and_a_500_are_reported_with_zertos_words() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::RestoreFails {
            reason: String::from("the datastore is not accessible"),
        }],
        ..Setup::default()
    });
    let broken = guarded_change(&env, VM, "toolu_v9");
    let run = restore_vm(&env, &[VM, "--change", "toolu_v9", "--yes"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("the datastore is not accessible"),
        "{run:#?}"
    );
    assert_eq!(marker(&env), broken);

    env.sim.clear_faults();
    env.sim.add_fault(Fault::Restore500);
    let run = restore_vm(&env, &[VM, "--change", "toolu_v9", "--yes"]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("Object reference not set"), "{run:#?}");
    assert_eq!(marker(&env), broken);
}

#[test]
fn the_json_document_of_a_committed_restore() {
    let env = TestEnv::with(Setup {
        frozen: true,
        ..Setup::default()
    });
    guarded_change(&env, VM, "toolu_vjson");
    let run = restore_vm(&env, &[VM, "--change", "toolu_vjson", "--yes", "--json"]);
    run.success();
    let value = run.json();
    insta::with_settings!({
        filters => vec![
            (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[0-9a-f-]+", "[task]"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[time]"),
            (r#""user": "[^"]*""#, r#""user": "[user]""#),
        ],
    }, {
        insta::assert_snapshot!("restore_vm_committed", serde_json::to_string_pretty(&value).expect("JSON"));
    });
}

/// `rewind restore-vm <args>` on a terminal (util-linux `script` gives it one), answering
/// the questions with `answers`; `None` where `script` is not installed.
fn on_a_terminal(env: &TestEnv, args: &[&str], answers: &[u8]) -> Option<Run> {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let rewind = env!("CARGO_BIN_EXE_rewind");
    let mut line = format!("{} restore-vm", shlex::try_quote(rewind).expect("quotable"));
    for arg in args {
        line.push(' ');
        line.push_str(&shlex::try_quote(arg).expect("quotable"));
    }
    let template = env.command(&[]);
    let mut cmd = Command::new(script);
    cmd.env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    cmd.current_dir(env.dir.path())
        .args(["-qec", &line, "/dev/null"]);
    Some(crate::support::run(cmd, answers))
}

#[test]
fn no_at_the_commit_question_rolls_back_and_no_at_the_first_starts_nothing() {
    let env = TestEnv::start();
    let broken = guarded_change(&env, VM, "toolu_v10");
    let Some(run) = on_a_terminal(&env, &[VM, "--change", "toolu_v10"], b"n\n") else {
        return;
    };
    assert_eq!(run.code, 3, "not confirmed: {run:#?}");
    assert!(!started_restore(&env), "{run:#?}");
    let run = on_a_terminal(&env, &[VM, "--change", "toolu_v10"], b"y\nn\n").expect("script");
    assert_eq!(run.code, 4, "rolled back: {run:#?}");
    assert!(run.stdout.contains("the operator answered no"), "{run:#?}");
    assert_eq!(marker(&env), broken);
    let run = on_a_terminal(&env, &[VM, "--change", "toolu_v10"], b"y\ny\n").expect("script");
    assert_eq!(run.code, 0, "committed: {run:#?}");
    assert_eq!(marker(&env), 0);
}

#[test]
fn ctrl_c_while_verifying_rolls_the_restore_back() {
    let env = TestEnv::start();
    let broken = guarded_change(&env, VM, "toolu_v11");
    let started = env.path("verifying");
    let verify = format!("touch {}; sleep 30", started.display());
    let mut child = spawn(
        &env,
        &[VM, "--change", "toolu_v11", "--yes", "--verify", &verify],
    );
    // Ctrl-C the whole foreground group once the verification runs.
    eventually("the verification to start", || started.exists());
    let group = format!("-{}", child.id());
    Command::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .expect("kill");
    let status = child.wait().expect("rewind ends");
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().expect("stdout"), &mut out).expect("read");
    assert_eq!(status.code(), Some(4), "{out}");
    assert!(
        out.contains("interrupted (Ctrl-C) while verifying"),
        "{out}"
    );
    assert_eq!(marker(&env), broken);
    assert_eq!(env.sim.whole_vm_operations(), (0, 0));
}

#[test]
fn a_vm_in_two_vpgs_restores_from_the_first_recorded_or_the_one_named() {
    let env = TestEnv::start();
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "db01", "command": "sudo systemctl stop postgresql"}),
        "toolu_v12",
    ));
    assert!(
        run.reason().contains("tagged checkpoint"),
        "guarded: {run:#?}"
    );
    let broken = env.sim.change_vm("db01").expect("db01");
    let run = restore_vm(&env, &["db01", "--change", "toolu_v12", "--yes", "--json"]);
    run.success();
    let doc = run.json();
    assert_eq!(doc["vpg"]["name"], "db01-local", "{doc:#}");
    assert_eq!(doc["other_vpgs"][0]["vpg"], "db01-azure", "{doc:#}");
    assert!(run.stderr.contains("also:        checkpoint"), "{run:#?}");
    assert_eq!(env.sim.vm_marker("db01"), Some(0));
    env.sim.change_vm("db01").expect("db01");
    let run = restore_vm(
        &env,
        &[
            "db01",
            "--change",
            "toolu_v12",
            "--vpg",
            "db01-azure",
            "--yes",
            "--json",
        ],
    );
    run.success();
    assert_eq!(run.json()["vpg"]["name"], "db01-azure");
    assert_eq!(env.sim.vm_marker("db01"), Some(0));
    assert!(broken > 0);
}
