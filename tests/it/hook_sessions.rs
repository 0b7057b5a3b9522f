//! Calls bound to a machine by an earlier call: an MCP server bound to a VM, a session
//! opened on one; the hook checkpoints the bound VM, and `rewind check` remembers nothing.

use std::path::Path;

use serde_json::json;

use crate::support::{Setup, TestEnv, hook_input};

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
            (tag.starts_with("ai:toolu_bound_1 | ") && tag.contains(" | vm=db01 | "))
                || (tag.starts_with("ai:toolu_bound_2 | ") && tag.contains(" | vm=jp-ubuntu | ")),
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
            insert.tag.starts_with("ai:toolu_exec_1 | ") && insert.tag.contains(" | vm=db01 | "),
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

/// `rewind check --payload` runs the hook's classifier without its writes: checking the call
/// that opens a session, or a command, leaves the state and cache directories as they were
/// (so a follow-up is still not placed), while `rewind hook` with the same payload remembers
/// the session and the same follow-up is then checkpointed on its VM.
#[test]
fn check_remembers_no_session_where_the_hook_does() {
    let env = TestEnv::start();
    let connect = env.path("connect.json");
    std::fs::write(
        &connect,
        hook_input(
            "mcp__ssh__ssh_connect",
            &json!({"name": "s1", "host": "db01", "username": "root"}),
            "toolu_conn_c",
        ),
    )
    .expect("write payload");
    let exec = env.path("exec.json");
    std::fs::write(
        &exec,
        hook_input(
            "mcp__ssh__ssh_exec",
            &json!({"sessionName": "s1", "command": "reboot"}),
            "toolu_exec_c",
        ),
    )
    .expect("write payload");
    let check = |payload: &Path| {
        let run = env.run(&["check", "--payload", &payload.display().to_string()], b"");
        run.success();
        run.stdout
    };
    let command = env.path("command.json");
    std::fs::write(
        &command,
        hook_input(
            "Bash",
            &json!({"command": "ssh db01 reboot"}),
            "toolu_bash_c",
        ),
    )
    .expect("write payload");
    let [state, cache] = [env.path("state"), env.path("cache")];
    let before = [files_under(&state), files_under(&cache)];

    let said = check(&connect);
    assert!(said.contains("decision: none"), "{said}");
    assert_eq!(
        [files_under(&state), files_under(&cache)],
        before,
        "check wrote to the state or cache directory"
    );
    let said = check(&exec);
    assert!(
        said.contains("decision: ask"),
        "nothing was remembered: {said}"
    );
    let said = check(&command);
    assert!(said.contains("db01"), "{said}");
    assert_eq!(
        [files_under(&state), files_under(&cache)],
        before,
        "check wrote to the state or cache directory"
    );

    let connected = env.hook(&std::fs::read(&connect).expect("payload"));
    assert_eq!(connected.decision(), "none", "{connected:#?}");
    assert!(
        env.path("state/rewind/sessions.json").is_file(),
        "the hook remembers the session"
    );
    let said = check(&exec);
    assert!(
        said.contains("db01") && said.contains("decision: checkpoint"),
        "the follow-up is placed on the session's VM: {said}"
    );
    assert!(env.sim.inserts().is_empty(), "check asks Zerto nothing");
}

/// Every file under `dir` with its bytes, and every directory (an empty map when `dir` is
/// not there).
fn files_under(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Option<Vec<u8>>> {
    let mut found = std::collections::BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        found.insert(at, None);
        for entry in entries {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read");
                found.insert(path, Some(bytes));
            }
        }
    }
    found
}
