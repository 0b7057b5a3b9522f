//! `rewind log` filters and `rewind completions`.

use serde_json::{Value, json};

use rewind::sim::{FailState, Fault};

use crate::support::{Setup, TestEnv, hook_input};

#[test]
fn log_filters_by_session_and_time_and_refuses_an_unknown_decision() {
    let env = TestEnv::start();
    let mut input: serde_json::Value = serde_json::from_slice(&hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu", "path": "/etc/hosts"}),
        "toolu_log1",
    ))
    .expect("JSON");
    input["session_id"] = json!("3f2a9c1e-aaaa");
    env.hook(input.to_string().as_bytes());
    input["session_id"] = json!("77777777-bbbb");
    input["tool_use_id"] = json!("toolu_log2");
    env.hook(input.to_string().as_bytes());

    let lines = |args: &[&str]| -> usize {
        let mut all = vec!["log", "--json"];
        all.extend_from_slice(args);
        let run = env.run(&all, b"");
        run.success();
        run.stdout.lines().count()
    };
    assert_eq!(lines(&[]), 2);
    assert_eq!(lines(&["--session", "3f2a9c1e"]), 1);
    assert_eq!(lines(&["--session", "nope"]), 0);
    assert_eq!(lines(&["--since", "1h"]), 2);
    assert_eq!(lines(&["--since", "2999-01-01T00:00:00Z"]), 0);
    assert_eq!(lines(&["--decision", "none"]), 2);

    let bad = env.run(&["log", "--decision", "foo"], b"");
    assert_eq!(bad.code, 2, "{bad:#?}");
    assert!(
        bad.stderr.contains("ran") && bad.stderr.contains("context"),
        "{bad:#?}"
    );
    let bad_time = env.run(&["log", "--since", "yesterday-ish"], b"");
    bad_time.failure();
    assert!(bad_time.stderr.contains("ISO-8601"), "{bad_time:#?}");
}

/// `rewind log --json` with these filters, one record per line.
/// `rewind log --json | head -1`: the reader closes the pipe, which is no failure of `log`.
/// It ends with 0 and says nothing, as `cat` would; before, it printed
/// "error: Broken pipe (os error 32)" and exited 1, which `set -o pipefail` scripts read as
/// a failed command.
#[test]
fn a_reader_that_closes_the_pipe_is_not_an_error() {
    let env = TestEnv::start();
    let input = hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu", "path": "/etc/hosts"}),
        "toolu_pipe",
    );
    env.hook(&input);
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = env.command(&["log", "--json"]);
    cmd.stdin(std::process::Stdio::null()).stdout(writer);
    let out = cmd.output().expect("rewind runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

fn logged(env: &TestEnv, filters: &[&str]) -> Vec<Value> {
    let mut args = vec!["log", "--json"];
    args.extend_from_slice(filters);
    let run = env.run(&args, b"");
    run.success();
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// `rewind guard` and `rewind recover` runs are in the trail with words `--decision` takes:
/// a confirmed guard is `context` (its checkpoint listed), a refused one `deny`, a restore
/// that wrote the file `recovered`, one that could not `recover-failed`, each with the VM,
/// the change and why.
#[test]
fn guard_and_recover_runs_are_in_the_log_under_their_own_decisions() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::InsertFails {
            vpg: "db01-azure".into(),
            state: FailState::Failed,
            reason: "Journal storage is full".into(),
        }],
        ..Setup::default()
    });
    env.run(&["guard", "--vm", "jp-ubuntu", "--change", "toolu_g1"], b"")
        .success();
    env.run(&["guard", "--vm", "db01", "--change", "toolu_g2"], b"")
        .failure();
    let recover = |change: &str| {
        crate::recover::recover_change(&env, "jp-ubuntu", "/etc/app.conf", change, &["--yes"])
    };
    recover("toolu_g1").success();
    recover("toolu_nope").failure();

    let confirmed = logged(&env, &["--decision", "context"]);
    assert_eq!(confirmed.len(), 1, "{confirmed:#?}");
    assert_eq!(confirmed[0]["tool"], "rewind guard");
    assert_eq!(confirmed[0]["change"], "toolu_g1");
    assert_eq!(confirmed[0]["vms"], json!(["jp-ubuntu"]));
    assert_eq!(confirmed[0]["checkpoints"][0]["vpg"], "jp-ubuntu-vpg");

    let refused = logged(&env, &["--decision", "deny"]);
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert_eq!(refused[0]["change"], "toolu_g2");
    let reason = refused[0]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("db01-azure") && reason.contains("Journal storage is full"),
        "{reason}"
    );

    let recovered = logged(&env, &["--decision", "recovered"]);
    assert_eq!(recovered.len(), 1, "{recovered:#?}");
    assert_eq!(recovered[0]["tool"], "rewind recover");
    assert_eq!(recovered[0]["change"], "toolu_g1");
    assert_eq!(recovered[0]["vpgs"], json!(["jp-ubuntu-vpg"]));
    let checkpoint = confirmed[0]["checkpoints"][0]["id"].as_str().expect("id");
    let reason = recovered[0]["reason"].as_str().expect("reason");
    assert!(
        reason.contains(&format!("from checkpoint {checkpoint} "))
            && reason.contains("app.conf")
            && reason.contains("sha256"),
        "{reason}"
    );

    let failed = logged(&env, &["--decision", "recover-failed"]);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0]["change"], "toolu_nope");
    let reason = failed[0]["reason"].as_str().expect("reason");
    assert!(reason.contains("toolu_nope"), "{reason}");

    // The change's whole story, and the person's view of it.
    assert_eq!(logged(&env, &["--change", "toolu_g1"]).len(), 2);
    let text = env.run(&["log", "--change", "toolu_g1"], b"");
    text.success();
    assert!(
        text.stdout.contains("rewind guard") && text.stdout.contains("recovered"),
        "{text:#?}"
    );
    // One column per field, whatever the decision's length (`context`, `recovered`).
    let tool_columns: Vec<Option<usize>> = text
        .stdout
        .lines()
        .map(|line| line.find("rewind "))
        .collect();
    assert_eq!(tool_columns.len(), 2, "{text:#?}");
    assert_eq!(tool_columns[0], tool_columns[1], "{text:#?}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    let env = TestEnv::start();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = env.run(&["completions", shell], b"");
        run.success();
        assert!(
            run.stdout.contains("trust") && run.stdout.contains("uninstall"),
            "{shell}: {run:#?}"
        );
    }
}

/// The single-user trail is chained too: `rewind log --verify` holds over what the hook wrote,
/// and names the line after an edited one, or after a deleted one, and exits 1.
#[test]
fn log_verify_names_the_line_where_the_single_user_trail_was_rewritten() {
    let env = TestEnv::start();
    for n in 0..4 {
        env.hook(&hook_input(
            "mcp__ssh__exec",
            &json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
            &format!("toolu_chain{n}"),
        ));
    }
    let trail = env.path("state/audit.jsonl");
    let whole = env.run(&["log", "--verify"], b"");
    whole.success();
    assert!(
        whole.stdout.contains("the hash chain holds over 4 lines"),
        "{whole:#?}"
    );
    let original = std::fs::read_to_string(&trail).expect("trail");
    let lines: Vec<&str> = original.lines().collect();

    // The agent turns its second call's record into a denial.
    let mut edited = lines.clone();
    let denial = edited[1].replace("\"decision\":\"context\"", "\"decision\":\"deny\"");
    assert_ne!(denial, edited[1]);
    edited[1] = &denial;
    std::fs::write(&trail, format!("{}\n", edited.join("\n"))).expect("edit");
    let run = env.run(&["log", "--verify"], b"");
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr
            .contains("audit.jsonl line 3: the hash chain breaks"),
        "{run:#?}"
    );

    // The agent deletes its third call's record.
    let mut deleted = lines.clone();
    deleted.remove(2);
    std::fs::write(&trail, format!("{}\n", deleted.join("\n"))).expect("delete");
    let run = env.run(&["log", "--verify"], b"");
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("line 3:"), "{run:#?}");
}

/// A long tool name widens its column for every row, so the columns after it stay aligned.
#[test]
fn log_columns_stay_aligned_with_a_long_tool_name() {
    let env = TestEnv::start();
    for (tool, id) in [
        ("mcp__ssh__read_file", "toolu_col1"),
        (
            "mcp__a_server_with_a_long_name__read_a_rather_long_file",
            "toolu_col2",
        ),
    ] {
        env.hook(&hook_input(
            tool,
            &json!({"host": "jp-ubuntu", "path": "/etc/hosts"}),
            id,
        ));
    }
    let run = env.run(&["log"], b"");
    run.success();
    let columns: Vec<usize> = run
        .stdout
        .lines()
        .filter_map(|line| line.find("toolu_col").map(|at| line[..at].chars().count()))
        .collect();
    assert_eq!(columns.len(), 2, "{}", run.stdout);
    assert_eq!(
        columns[0], columns[1],
        "the change column moved:\n{}",
        run.stdout
    );
}

/// The trail keeps a call's input only as a digest keyed with a key beside it: no secret the
/// input carried reaches it, and an operator holding the input proves which record it was
/// written for. `[audit] store_input = "redacted"` keeps the redacted input too.
#[test]
fn the_trail_keeps_a_keyed_digest_of_the_input_that_proves_it_and_no_secret() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::start();
    let secret = "Zq7-not-in-any-list";
    let input = json!({"host": "jp-ubuntu", "command": "uptime", "args": ["-p", secret]});
    let stdin = hook_input("mcp__ssh__exec", &input, "toolu_digest_1");
    let run = env.hook(&stdin);
    run.success();
    assert!(!run.stdout.contains(secret), "{}", run.stdout);
    let trail = env.path("state/audit.jsonl");
    let text = std::fs::read_to_string(&trail).expect("trail");
    assert!(!text.contains(secret), "{text}");
    let record: Value = serde_json::from_str(text.lines().next().expect("a record")).expect("JSON");
    assert!(
        record["input"]
            .as_str()
            .is_some_and(|d| d.starts_with("hmac-sha256:")),
        "{record}"
    );
    assert!(
        record.get("args").is_none(),
        "no input kept by default: {record}"
    );
    let key = std::fs::metadata(env.path("state/audit.jsonl.key")).expect("the key");
    assert_eq!(key.permissions().mode() & 0o777, 0o600);

    let stdin_file = env.path("stdin.json");
    std::fs::write(&stdin_file, &stdin).expect("written");
    let tool_input = env.path("input.json");
    std::fs::write(&tool_input, input.to_string()).expect("written");
    let other = env.path("other.json");
    std::fs::write(
        &other,
        json!({"host": "jp-ubuntu", "command": "uptime"}).to_string(),
    )
    .expect("written");
    let prove = |file: &std::path::Path| {
        env.run(
            &[
                "log",
                "--prove",
                "1",
                "--input",
                file.to_str().expect("UTF-8"),
            ],
            b"",
        )
    };
    for file in [&stdin_file, &tool_input] {
        let proved = prove(file);
        proved.success();
        assert!(
            proved.stdout.contains("was written for this input"),
            "{proved:#?}"
        );
    }
    let refused = prove(&other);
    assert_eq!(refused.code, 1, "{refused:#?}");
    assert!(
        refused.stderr.contains("was not written for this input"),
        "{refused:#?}"
    );

    let config = std::fs::read_to_string(&env.config).expect("config");
    std::fs::write(
        &env.config,
        format!("{config}\n[audit]\nstore_input = \"redacted\"\n"),
    )
    .expect("config");
    let flagged = json!({"host": "jp-ubuntu", "command": "uptime", "args": ["--password", secret]});
    env.hook(&hook_input("mcp__ssh__exec", &flagged, "toolu_digest_2"))
        .success();
    let text = std::fs::read_to_string(&trail).expect("trail");
    assert!(!text.contains(secret), "{text}");
    let second: Value = serde_json::from_str(text.lines().last().expect("a record")).expect("JSON");
    assert_eq!(
        second["args"]["args"],
        json!(["--password", "[redacted]"]),
        "{second}"
    );
    // An array argument is read as an argv: `-p`'s value goes whatever the program.
    env.hook(&hook_input("mcp__ssh__exec", &input, "toolu_digest_3"))
        .success();
    let text = std::fs::read_to_string(&trail).expect("trail");
    assert!(!text.contains(secret), "{text}");
    assert_eq!(second["args"]["host"], "jp-ubuntu");
    env.run(&["log", "--verify"], b"").success();
}

/// Through a broker, only the broker holds the trail and its key: an operator proves a record
/// against the input they hold, another input is told apart, and the agent's user may not ask.
#[test]
fn an_operator_proves_a_record_through_the_broker_and_the_agents_user_cannot() {
    use crate::broker::{Deployment, can_switch_users, mutating, operator};
    fn prove<'a>(number: &'a str, file: &'a str) -> [&'a str; 5] {
        ["log", "--prove", number, "--input", file]
    }
    if !can_switch_users("an_operator_proves_a_record_through_the_broker") {
        return;
    }
    let mut d = Deployment::new(Setup::default());
    d.start_broker();
    let (run, _) = d.hook(&mutating("toolu_prove"));
    assert_eq!(run.code, 0, "{run:#?}");
    let number = d
        .trail()
        .iter()
        .position(|r| r["op"] == "guard" && r["change"] == "toolu_prove")
        .map_or_else(
            || panic!("the guard is recorded: {:#?}", d.trail()),
            |at| (at + 1).to_string(),
        );

    let input = |name: &str, command: &str| {
        let path = d.env.path(name);
        std::fs::write(
            &path,
            json!({"host": "jp-ubuntu", "command": command}).to_string(),
        )
        .expect("written");
        crate::broker::set_mode(&path, 0o644);
        path.display().to_string()
    };
    let held = input("held.json", "systemctl restart app");
    let other = input("other.json", "uptime");

    let proved = operator(&d, &prove(&number, &held));
    proved.success();
    assert!(
        proved.stdout.contains("was written for this input")
            && proved.stdout.contains("(the broker's)"),
        "{proved:#?}"
    );
    let differs = operator(&d, &prove(&number, &other));
    assert_eq!(differs.code, 1, "{differs:#?}");
    assert!(
        differs.stderr.contains("was not written for this input"),
        "{differs:#?}"
    );

    let agent = crate::support::run(d.rewind_as_hook_user(&prove(&number, &held)), b"");
    assert_ne!(agent.code, 0, "{agent:#?}");
    assert!(
        !agent.stdout.contains("was written for this input"),
        "{agent:#?}"
    );
    d.recorded("the agent's attempt is recorded as refused", |r| {
        r["op"] == "prove" && r["peer"]["uid"] == 65534
    });
}
