//! `rewind hook` when its own streams fail it (a closed stdout or stderr, stdin left open)
//! or its budget is spent: it still ends with a decision or exit 2, and audits what it did.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Setup, TestEnv, hook_input};

/// Runs `rewind hook` with one of its output pipes closed by the reader before it writes.
fn hook_with_closed(
    env: &TestEnv,
    args: &[&str],
    stdin: &[u8],
    close_stdout: bool,
) -> (i32, String) {
    use std::io::{Read as _, Write as _};
    use std::process::Stdio;
    let mut child = env
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut kept = String::new();
    if close_stdout {
        drop(child.stdout.take());
    } else {
        drop(child.stderr.take());
    }
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("write stdin");
    drop(input);
    if close_stdout {
        let _ = child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut kept);
    } else {
        let _ = child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut kept);
    }
    let status = child.wait().expect("wait");
    (status.code().unwrap_or(-1), kept)
}

/// stderr is a pipe whose reader is gone: every stderr write fails (EPIPE). The hook still
/// answers on stdout with exit 0 (a config warning, an audit trail that cannot be written) or
/// blocks with exit 2 (bad stdin); it never panics into exit 101.
#[test]
fn a_closed_stderr_never_turns_into_exit_101() {
    let env = TestEnv::start();
    // A warning on every run (TLS verification off) and an audit trail that cannot be written.
    let config = std::fs::read_to_string(&env.config).expect("config");
    let config = config
        .replace("[zvm]\n", "[zvm]\ninsecure_tls = true\n")
        .lines()
        .filter(|l| !l.starts_with("audit_log"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\naudit_log = \"/dev/null/audit.jsonl\"\n";
    std::fs::write(&env.config, config).expect("config");

    let read_only = hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu"}),
        "toolu_e1",
    );
    let (code, stdout) = hook_with_closed(&env, &["hook"], &read_only, false);
    assert_eq!((code, stdout.trim()), (0, "{}"));

    let mutating = hook_input("mcp__ssh__exec", &json!({"host": "jp-ubuntu"}), "toolu_e2");
    let (code, stdout) = hook_with_closed(&env, &["hook"], &mutating, false);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("tagged checkpoint"), "{stdout}");

    let (code, stdout) = hook_with_closed(&env, &["hook"], b"{not json", false);
    assert_eq!((code, stdout.as_str()), (2, ""));
}

/// Codex CLI and Gemini CLI run a call whose hook exits 2 with nothing on stderr, as a closed
/// stderr leaves it: for them, input the hook cannot read is refused on stdout as well (Gemini
/// reads stdout whatever the exit code; Codex reads no stdout on exit 2, so its deny goes
/// with exit 0). Copilot CLI gets its deny beside the exit 2 too.
#[test]
fn with_stderr_closed_unreadable_input_is_still_refused_on_hosts_that_need_stderr() {
    let env = TestEnv::start();
    for (host, code, deny) in [
        ("gemini", 2, "/decision"),
        ("copilot", 2, "/permissionDecision"),
        ("codex", 0, "/hookSpecificOutput/permissionDecision"),
    ] {
        for stdin in [&b"{not json"[..], b"", b"[1,2]"] {
            let (got, stdout) = hook_with_closed(&env, &["hook", "--host", host], stdin, false);
            let answer: Value = serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("{host}: a JSON answer, not {stdout:?}: {e}"));
            assert_eq!(got, code, "{host}: {stdout}");
            assert_eq!(
                answer.pointer(deny),
                Some(&json!("deny")),
                "{host}: {stdout}"
            );
        }
    }
}

/// stdout is closed before the decision is written: exit 2 (still a block for a host that
/// reads the exit code), never 101.
#[test]
fn a_closed_stdout_is_exit_2() {
    let env = TestEnv::start();
    let call = hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu"}),
        "toolu_o1",
    );
    let (code, stderr) = hook_with_closed(&env, &["hook"], &call, true);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("stdout's reader is gone"), "{stderr}");
}

/// stdout closed by the parent (`rewind hook >&-`): the runtime puts `/dev/null` in its place,
/// so the write "succeeds" and nobody sees the answer. The hook must block with exit 2 instead
/// of exiting 0 with the decision lost, take no checkpoint for a call it refuses, and say
/// `block` in the audit trail, not the `context` nobody received.
#[test]
fn a_stdout_closed_by_the_parent_is_exit_2_not_a_lost_deny() {
    use std::io::Write as _;
    use std::process::Stdio;
    let env = TestEnv::start();
    let hook = env.command(&["hook"]);
    let mut wrapped = std::process::Command::new("sh");
    wrapped
        .arg("-c")
        .arg("exec \"$@\" >&-")
        .arg("sh")
        .arg(hook.get_program())
        .args(hook.get_args())
        .env_clear()
        .current_dir(hook.get_current_dir().expect("dir"));
    for (key, value) in hook.get_envs() {
        if let Some(value) = value {
            wrapped.env(key, value);
        }
    }
    let mut child = wrapped
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let call = hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "reboot"}),
        "toolu_o2",
    );
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&call)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "rewind: stdout leads nowhere, so no decision can reach the host; refusing the call"
    );
    assert!(
        env.sim.inserts().is_empty(),
        "no checkpoint for a call that is refused"
    );
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    let record: Value =
        serde_json::from_str(audit.lines().last().expect("a record")).expect("json");
    assert_eq!(record["decision"], "block", "{record}");
    assert_eq!(record["tool"], "mcp__ssh__exec", "{record}");
}

/// stdout is `/dev/full` (every write fails) or a pipe whose reader is already gone: the
/// answer cannot be written, so the hook refuses before the guard (exit 2, its reason on
/// stderr), takes no checkpoint for the call the host will run without an answer, and audits
/// the block.
#[test]
fn a_stdout_that_cannot_be_written_takes_no_checkpoint() {
    use std::io::Write as _;
    use std::process::Stdio;
    let env = TestEnv::start();
    let call = hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "reboot"}),
        "toolu_o3",
    );
    for (stdout, why) in [
        ("/dev/full", "stdout is /dev/full, where every write fails"),
        ("broken pipe", "stdout's reader is gone"),
    ] {
        let mut command = env.command(&["hook"]);
        command.stdin(Stdio::piped()).stderr(Stdio::piped());
        if stdout == "/dev/full" {
            command.stdout(std::fs::File::create("/dev/full").expect("/dev/full"));
        } else {
            command.stdout(Stdio::piped());
        }
        let mut child = command.spawn().expect("spawn");
        // The reader goes before the hook has read its call.
        drop(child.stdout.take());
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&call)
            .expect("write stdin");
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stdout}: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!("rewind: {why}, so no decision can reach the host; refusing the call"),
            "{stdout}"
        );
        assert!(env.sim.inserts().is_empty(), "{stdout}: no checkpoint");
        let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
        let record: Value =
            serde_json::from_str(audit.lines().last().expect("a record")).expect("json");
        assert_eq!(record["decision"], "block", "{stdout}: {record}");
    }
}

/// A password command that hangs past the budget: the call is denied inside the budget, the
/// deny is in the audit trail, and the command (with its children) is killed, not orphaned.
#[test]
fn a_spent_budget_is_audited_and_leaves_no_password_command_behind() {
    let env = TestEnv::with(Setup {
        hook: String::from("budget_secs = 2"),
        ..Setup::default()
    });
    let pids = env.path("pids");
    let config = std::fs::read_to_string(&env.config)
        .expect("config")
        .replace(
            "password_env = \"REWIND_ZVM_PASSWORD\"",
            &format!(
                "password_command = \"sleep 60 & echo $! > {p}; echo $$ >> {p}; wait\"",
                p = pids.display()
            ),
        );
    std::fs::write(&env.config, config).expect("config");
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "reboot"}),
        "toolu_slow",
    ));
    assert_eq!(run.decision(), "deny", "{run:#?}");
    assert!(run.elapsed < Duration::from_secs(3), "{run:#?}");
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    let record: Value = serde_json::from_str(audit.lines().last().expect("line")).expect("json");
    assert_eq!(record["decision"], "deny", "{record}");
    assert_eq!(record["change"], "toolu_slow", "{record}");
    let text = std::fs::read_to_string(&pids).expect("the command ran");
    for pid in text.split_whitespace() {
        crate::support::eventually(&format!("process {pid} to end"), || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
            matches!(state, None | Some('Z' | 'X'))
        });
    }
}

/// The watchdog's own deny. The guard here outlives the budget: the ZVM password comes from a
/// command that prints it and exits but leaves a child (in its own session, so out of reach
/// of the command's process group) holding its output open, and the guard's worker waits for
/// that output past its own deadline. The watchdog then denies within the budget, saying what
/// the guard was doing, and that deny is the audit trail's last line.
#[test]
fn a_decision_made_when_the_budget_is_spent_is_still_audited() {
    let env = TestEnv::with(Setup {
        hook: String::from("budget_secs = 4"),
        ..Setup::default()
    });
    let pid = env.path("pid");
    // The command prints the password only once its child has left the process group (the
    // child writes `pid` after `setsid`), so stopping the group cannot end the child.
    let config = std::fs::read_to_string(&env.config)
        .expect("config")
        .replace(
            "password_env = \"REWIND_ZVM_PASSWORD\"",
            &format!(
                "password_command = \"setsid sh -c 'echo $$ > {p}; exec sleep 30' & while [ ! -s {p} ]; do sleep 0.05; done; echo secret\"",
                p = pid.display()
            ),
        );
    std::fs::write(&env.config, config).expect("config");
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "reboot"}),
        "toolu_outlived",
    ));
    let held = std::fs::read_to_string(&pid).expect("the password command ran");
    let _ = std::process::Command::new("kill").arg(held.trim()).status();

    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.decision(), "deny", "{run:#?}");
    let reason = run.reason();
    assert!(
        reason.contains(" budget ran out while "),
        "the watchdog's deny, not the worker's: {reason}"
    );
    // Long before the 30 s the worker would take; the hook's own account of its time (the
    // audit trail) is within its budget even on a busy machine.
    assert!(run.elapsed < Duration::from_secs(10), "{run:#?}");
    assert!(env.sim.inserts().is_empty(), "{run:#?}");
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    let record: Value = serde_json::from_str(audit.lines().last().expect("line")).expect("json");
    assert_eq!(record["decision"], "deny", "{record}");
    assert_eq!(record["change"], "toolu_outlived", "{record}");
    assert_eq!(record["reason"], reason.as_str(), "{record}");
    let took = record["duration_ms"].as_u64().expect("duration_ms");
    assert!(took <= 4000, "the hook took {took} ms of its 4 s budget");
}
