//! `--json` output: one document per command, in stable shapes (documented in docs/commands.md).
//! The simulator's clock is frozen, so ids and times are the same on every run; what the
//! machine varies (the port, the temporary directory) is filtered after its shape is checked.

use serde_json::Value;

use rewind::sim::{FailState, Fault};

use crate::support::{Setup, TestEnv};

fn frozen() -> TestEnv {
    TestEnv::with(Setup {
        frozen: true,
        ..Setup::default()
    })
}

/// Runs `rewind <args>`, checks stdout is one JSON document, and snapshots it.
#[track_caller]
fn snapshot(env: &TestEnv, name: &str, args: &[&str]) -> Value {
    let run = env.run(args, b"");
    let value: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document ({e}): {run:#?}"));
    let temp = regex::escape(&env.dir.path().display().to_string());
    insta::with_settings!({
        filters => vec![
            (r"127\.0\.0\.1:\d+", "127.0.0.1:[port]"),
            (temp.as_str(), "[tmp]"),
            (r"manual-\d{8}T\d{6}Z-[0-9a-f]{12}", "manual-[id]"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[time]"),
        ],
    }, {
        insta::assert_snapshot!(name, serde_json::to_string_pretty(&value).expect("JSON"));
    });
    value
}

#[test]
fn find_checkpoints_and_guard_speak_json() {
    let env = frozen();
    let found = snapshot(&env, "find", &["find", "jp-ubuntu", "--json"]);
    assert_eq!(found["vm"]["name"], "jp-ubuntu");

    let guarded = snapshot(
        &env,
        "guard",
        &[
            "guard",
            "--vm",
            "jp-ubuntu",
            "--change",
            "toolu_json",
            "--json",
        ],
    );
    assert_eq!(guarded["confirmed"], true);
    // The run is in the audit trail, like a hook decision.
    let log = env.run(
        &[
            "log",
            "--change",
            "toolu_json",
            "--decision",
            "context",
            "--json",
        ],
        b"",
    );
    let record: Value = serde_json::from_str(log.stdout.trim()).expect("one audit line");
    assert_eq!(record["tool"], "rewind guard");
    assert_eq!(
        record["checkpoints"][0]["id"],
        guarded["vpgs"][0]["checkpoint"]["id"]
    );

    let listed = snapshot(
        &env,
        "checkpoints_change",
        &[
            "checkpoints",
            "jp-ubuntu",
            "--change",
            "toolu_json",
            "--json",
        ],
    );
    assert_eq!(listed["vpgs"][0]["shown"], 1);

    let limited = env.run(&["checkpoints", "jp-ubuntu", "--limit", "3", "--json"], b"");
    let limited: Value = serde_json::from_str(&limited.stdout).expect("JSON");
    let vpg = &limited["vpgs"][0];
    assert_eq!(vpg["shown"], 3);
    assert_eq!(vpg["checkpoints"].as_array().map(Vec::len), Some(3));
    assert!(vpg["total"].as_u64().expect("total") > 3, "{limited:#}");
    let text = env.run(&["checkpoints", "jp-ubuntu", "--limit", "3"], b"");
    assert!(
        text.stdout
            .contains(&format!("the newest 3 of {} checkpoints", vpg["total"])),
        "{text:#?}"
    );
}

/// A VPG whose insert was sent but not confirmed still names its Zerto task in `guard --json`
/// (the task that may yet make the checkpoint, or that says why not), as the text does; a
/// runbook reading the document must not have to parse the error sentence for it.
#[test]
fn a_refused_guard_names_each_vpg_task_in_json() {
    let env = TestEnv::with(Setup {
        faults: vec![
            Fault::InsertFails {
                vpg: "db01-local".into(),
                state: FailState::Failed,
                reason: "Journal storage is full".into(),
            },
            Fault::TagNeverListed {
                vpg: "db01-azure".into(),
            },
        ],
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "db01", "--budget", "3", "--json"], b"");
    assert_eq!(run.code, 1, "{run:#?}");
    let doc: Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(doc["confirmed"], false, "{doc:#}");
    let vpgs = doc["vpgs"].as_array().expect("vpgs");
    assert_eq!(vpgs.len(), 2, "{doc:#}");
    for vpg in vpgs {
        assert!(vpg["checkpoint"].is_null(), "{doc:#}");
        let task = vpg["task"]
            .as_str()
            .unwrap_or_else(|| panic!("no task: {doc:#}"));
        assert!(!task.is_empty(), "{doc:#}");
        let error = vpg["error"].as_str().expect("error");
        assert!(
            error.contains(task),
            "the error and the task differ: {doc:#}"
        );
        assert!(run.stderr.contains(task), "{run:#?}");
    }
}

/// A name two VMs share, and a part of a name, are not one VM: `find` exits 1 (ambiguous) or 7
/// (unknown) and lists the candidates by name, id, guest IPs and VPGs, on stderr for a person and, with `--json`,
/// in the same document shape as a found VM.
#[test]
fn find_lists_the_candidates_of_a_name_that_is_not_one_vm() {
    let env = frozen();
    let shared = env.run(&["find", "web"], b"");
    assert_eq!(shared.code, 1, "{shared:#?}");
    assert!(shared.stdout.is_empty(), "{shared:#?}");
    for line in [
        "\"web\" matches 2 VMs; name one by its vmIdentifier:",
        "  web (d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-201), IPs 10.0.0.41, VPG web-a",
    ] {
        assert!(shared.stderr.contains(line), "{line}\n{shared:#?}");
    }
    assert!(
        shared.stderr.contains("IPs 10.0.0.42, VPG web-b"),
        "{shared:#?}"
    );

    let partial = env.run(&["find", "ubuntu"], b"");
    assert_eq!(partial.code, 7, "not found: {partial:#?}");
    assert!(
        partial.stderr.contains(
            "VM \"ubuntu\" is unknown to Zerto: no protected VM has that name, identifier or IP; it may mean one of these (`rewind vms` lists them all):\n  jp-ubuntu ("
        ) && partial.stderr.contains("IPs 10.0.0.11, VPG jp-ubuntu-vpg"),
        "{partial:#?}"
    );

    let ambiguous = snapshot(&env, "find_ambiguous", &["find", "web", "--json"]);
    assert_eq!(ambiguous["found"], "ambiguous");
    let unknown = snapshot(&env, "find_partial", &["find", "10.0.0.", "--json"]);
    assert_eq!(unknown["found"], "unknown");
    let names: Vec<&str> = unknown["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names.len(),
        5,
        "every VM has an IP in 10.0.0.x: {unknown:#}"
    );
    let nothing = env.run(&["find", "mail01", "--json"], b"");
    assert_eq!(nothing.code, 7, "not found");
    let nothing: Value = serde_json::from_str(&nothing.stdout).expect("JSON");
    assert_eq!(nothing["candidates"], serde_json::json!([]));
    assert_eq!(nothing["vm"], Value::Null);
}

#[test]
fn doctor_catalog_check_and_flr_speak_json() {
    let env = frozen();
    let doctor = env.run(&["doctor", "--json"], b"");
    let doctor: Value = serde_json::from_str(&doctor.stdout).expect("doctor JSON");
    assert!(doctor["checks"].as_array().is_some_and(|c| !c.is_empty()));
    for check in doctor["checks"].as_array().into_iter().flatten() {
        assert!(
            matches!(
                check["status"].as_str(),
                Some("ok" | "warn" | "fail" | "next")
            ),
            "{check}"
        );
        assert!(
            check["check"].is_string() && check["detail"].is_string(),
            "{check}"
        );
    }
    // Nothing installed yet is the next step, counted apart from failures.
    assert_eq!(doctor["next"].as_u64(), Some(1), "{doctor}");
    assert_eq!(
        doctor["failed"].as_u64(),
        Some(
            doctor["checks"]
                .as_array()
                .map_or(0, |c| c.iter().filter(|c| c["status"] == "fail").count()
                    as u64)
        )
    );

    snapshot(
        &env,
        "check_mutating",
        &[
            "check",
            "mcp__ssh__exec",
            "--input",
            r#"{"host":"jp-ubuntu","command":"reboot"}"#,
            "--json",
        ],
    );
    snapshot(&env, "flr_list", &["flr", "list", "--json"]);
    let list = env.run(&["catalog", "list", "--json"], b"");
    let list: Value = serde_json::from_str(&list.stdout).expect("catalog JSON");
    let first = &list["entries"][0];
    for key in ["class", "server", "tool", "vm_arg", "note", "from"] {
        assert!(first.get(key).is_some(), "{key}: {first}");
    }
}

/// `catalog list --json` of a user catalog alone: each entry with its class, server, tool,
/// VM arguments, note and file.
#[test]
fn catalog_list_speaks_json() {
    let env = TestEnv::with(Setup {
        hook: String::from(
            "budget_secs = 30\nbuiltin_catalogs = false\ncatalogs = [\"catalog.toml\"]",
        ),
        ..Setup::default()
    });
    std::fs::write(
        env.path("catalog.toml"),
        "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\nvm_arg = [\"host\"]\nnote = \"runs a command\"\n\n\
         [[read_only]]\nserver = \"ssh\"\ntool = \"read_*\"\n",
    )
    .expect("catalog");
    snapshot(&env, "catalog_list", &["catalog", "list", "--json"]);
}
