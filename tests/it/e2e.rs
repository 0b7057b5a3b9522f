//! The real `rewind hook`, run by the real Claude Code (see [`crate::claude`]) for an MCP call,
//! facing the ZVM simulator: what really ran (the MCP stub's log), what the model was told (the
//! fake API's request log) and what Zerto did (the simulator's inserts).

use std::fs;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rewind::commands::install::HOST_TIMEOUT_MARGIN_SECS;
use rewind::sim::{FailState, Fault, InsertRecord};
use serde_json::{Value, json};

use crate::claude::{ClaudeCode, ClaudeRun, Hook, PermissionMode, logged_at, text, tool_use};
use crate::support::{Setup, TestEnv, hook_bin};

const CALL_ID: &str = "toolu_e2e_rewind_01";
const TOOL: &str = "mcp__ssh__exec";
const BUDGET_SECS: u64 = 5;

fn change_on(host: &str) -> Value {
    json!({"host": host, "command": "sudo sed -i s/a/b/ /etc/app.conf"})
}

fn rewind_env(faults: Vec<Fault>) -> TestEnv {
    TestEnv::with(Setup {
        hook: format!("budget_secs = {BUDGET_SECS}"),
        faults,
        ..Setup::default()
    })
}

/// Claude Code asked to change the app config on `host`: one `mcp__ssh__exec` call, then
/// "Done."; the environment `rewind` needs to find `env`'s config and simulator. The tool is
/// not yet allowed by any rule.
fn claude_for(env: &TestEnv, host: &str) -> ClaudeCode {
    let mut cc = ClaudeCode::new()
        .prompt(&format!("Change the app config on {host}."))
        .script([tool_use(CALL_ID, TOOL, change_on(host)), text("Done.")])
        .permission_mode(PermissionMode::Default);
    // HOME and PATH stay Claude Code's own; the hook inherits the rest.
    for (key, value) in env.hook_env() {
        cc = cc.env(&key, value);
    }
    cc
}

/// `claude_for`, with the tool allowed by the user's rules and `rewind hook` installed the way
/// `rewind install` writes it: exec form, host timeout = budget + margin, `onFailure: block`.
fn guarded_call_on(env: &TestEnv, host: &str) -> ClaudeCode {
    claude_for(env, host).allowed_tools([TOOL]).hook(
        Hook::exec(hook_bin())
            .args(["hook"])
            .timeout_secs(BUDGET_SECS + HOST_TIMEOUT_MARGIN_SECS),
    )
}

#[track_caller]
fn assert_not_run(run: &ClaudeRun) {
    assert!(
        run.mcp_calls.is_empty(),
        "the MCP tool must not have run\n{}",
        run.describe()
    );
    assert_eq!(
        run.denied_ids(),
        [CALL_ID],
        "permission_denials\n{}",
        run.describe()
    );
}

/// The error tool result the model received for the call.
#[track_caller]
fn refusal_seen_by_model(run: &ClaudeRun) -> String {
    let result = run
        .tool_result(CALL_ID)
        .unwrap_or_else(|| panic!("no tool_result reached the model\n{}", run.describe()));
    assert!(result.is_error, "{result:?}\n{}", run.describe());
    result.text
}

/// The call ran once with its arguments, and the model received rewind's checkpoint context
/// naming `insert`'s checkpoint and the recover command for this call.
#[track_caller]
fn assert_ran_with_checkpoint_context(run: &ClaudeRun, insert: &InsertRecord) {
    assert_eq!(run.mcp_tools_called(), ["ssh.exec"], "{}", run.describe());
    assert_eq!(run.mcp_calls[0]["arguments"], change_on("jp-ubuntu"));
    assert!(run.permission_denials().is_empty(), "{}", run.describe());
    let result = run.tool_result(CALL_ID).expect("the tool result");
    assert!(!result.is_error, "{result:?}");
    let seen = run.model_saw_after(CALL_ID);
    let context = "PreToolUse:mcp__ssh__exec hook additional context: \
                   rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu.";
    let recover = format!("rewind recover --vm jp-ubuntu --change {CALL_ID} --path <file>");
    let checkpoint = format!(
        "VPG jp-ubuntu-vpg: tagged checkpoint {}",
        insert
            .checkpoint_id
            .as_deref()
            .expect("a written checkpoint")
    );
    for needle in [context, &checkpoint, &recover] {
        assert!(
            seen.contains(needle),
            "the model did not receive {needle:?}; it saw:\n{seen}\n{}",
            run.describe()
        );
    }
    assert_eq!(run.result_text(), "Done.");
}

/// The simulator's only insert: a listed checkpoint on jp-ubuntu's VPG tagged with the call.
#[track_caller]
fn the_listed_checkpoint(env: &TestEnv) -> InsertRecord {
    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 1, "one checkpoint per call: {inserts:#?}");
    let insert = inserts.into_iter().next().expect("one insert");
    assert_eq!(insert.vpg_name, "jp-ubuntu-vpg");
    assert!(
        insert.tag.starts_with(&format!("ai:{CALL_ID} | ")),
        "{insert:#?}"
    );
    assert_eq!(insert.task_state, "Completed", "{insert:#?}");
    assert!(insert.listed_at.is_some(), "never listed: {insert:#?}");
    insert
}

/// `at`, a past instant of this process, on the wall clock.
fn wall_clock(at: Instant) -> SystemTime {
    let (now, wall) = (Instant::now(), SystemTime::now());
    wall - now.duration_since(at)
}

fn millis_since_epoch(at: SystemTime) -> u128 {
    at.duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis()
}

#[test]
fn a_confirmed_checkpoint_is_listed_before_the_call_runs_and_the_model_gets_the_recover_command() {
    let env = rewind_env(Vec::new());
    let run = guarded_call_on(&env, "jp-ubuntu").run();

    let insert = the_listed_checkpoint(&env);
    assert_ran_with_checkpoint_context(&run, &insert);
    // The stub stamps the call in whole milliseconds, rounded down: compare at that grain.
    let listed = millis_since_epoch(wall_clock(insert.listed_at.expect("listed")));
    let called = millis_since_epoch(logged_at(&run.mcp_calls[0]));
    assert!(
        listed <= called,
        "Zerto listed the tag at {listed} ms, after the MCP server received the call at {called} ms"
    );
}

#[test]
fn a_failed_checkpoint_keeps_the_call_from_running_and_the_model_reads_zertos_reason() {
    let reason = "The VPG is not meeting its SLA: journal history is being rebuilt.";
    let env = rewind_env(vec![Fault::InsertFails {
        vpg: "jp-ubuntu-vpg".into(),
        state: FailState::Failed,
        reason: reason.into(),
    }]);
    let run = guarded_call_on(&env, "jp-ubuntu").run();

    assert_not_run(&run);
    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 1, "{inserts:#?}");
    assert_eq!(inserts[0].task_state, "Failed");
    let told = refusal_seen_by_model(&run);
    let expected = format!(
        "PreToolUse:mcp__ssh__exec hook error: rewind: Zerto did not confirm a checkpoint of VM \
         \"jp-ubuntu\", so mcp__ssh__exec was not allowed. VPG jp-ubuntu-vpg: checkpoint task {} \
         ended Failed: {reason}",
        inserts[0].task_id
    );
    assert!(
        told.contains(&expected),
        "expected {expected:?}, the model got {told:?}"
    );
}

#[test]
fn a_call_on_a_vm_unknown_to_zerto_does_not_run_unattended_and_the_model_is_told_why() {
    let env = rewind_env(Vec::new());
    let run = guarded_call_on(&env, "mail01").run();

    assert_not_run(&run);
    assert!(env.sim.inserts().is_empty(), "nothing to checkpoint");
    let told = refusal_seen_by_model(&run);
    let reason = "rewind: VM \"mail01\" is unknown to Zerto, so there is no checkpoint to rewind \
                  to if mcp__ssh__exec goes wrong. Approve only if that is acceptable.";
    assert!(told.contains(reason), "the model got {told:?}");
}

#[test]
fn a_hung_zvm_is_denied_by_rewind_within_its_budget_not_by_the_host_timeout() {
    let env = rewind_env(vec![Fault::Hang { route: "*".into() }]);
    let run = guarded_call_on(&env, "jp-ubuntu").run();

    assert_not_run(&run);
    assert!(env.sim.inserts().is_empty());
    let told = refusal_seen_by_model(&run);
    assert!(
        told.starts_with("PreToolUse:mcp__ssh__exec hook error: rewind: ")
            && (told.contains("ZVM did not answer in time")
                || told.contains(&format!("the hook's {BUDGET_SECS} s budget ran out"))),
        "rewind's own deny, not the host's timeout, should reach the model: {told:?}"
    );
    // The hook's own account of its time (the audit trail) is within its budget; the host's
    // view (from the model's tool_use to the result coming back, which also holds Claude
    // Code's own work on a busy machine) only has to stay far from the host's timeout.
    let audit = fs::read_to_string(env.path("state/audit.jsonl")).expect("audit trail");
    let record: Value =
        serde_json::from_str(audit.lines().last().expect("a record")).expect("JSON");
    assert_eq!(record["decision"], "deny", "{record}");
    let took = record["duration_ms"].as_u64().expect("duration_ms");
    assert!(
        took <= BUDGET_SECS * 1000,
        "the hook took {took} ms of its {BUDGET_SECS} s budget"
    );
    let [asked, answered] = [&run.requests[0], &run.requests[1]].map(logged_at);
    let held = answered.duration_since(asked).expect("in order");
    assert!(
        held < Duration::from_secs(BUDGET_SECS + HOST_TIMEOUT_MARGIN_SECS / 2),
        "the call was held {held:?}, near the host's timeout"
    );
}

#[test]
fn rewind_install_twice_into_existing_local_settings_guards_the_real_host() {
    let env = rewind_env(Vec::new());
    // Claude Code 2.1.332 does not apply `permissions.allow` from the committed project
    // settings to this call (measured; the local and user settings files do), so the user's
    // rule comes from the command line, as in the tests above.
    let cc = claude_for(&env, "jp-ubuntu")
        .allowed_tools([TOOL])
        .keep_settings_file();
    let post_log = cc.root().join("post-tool-use.json");
    let post_hook = cc.write_executable(
        "post-tool-use.sh",
        &format!("#!/bin/sh\ncat > '{}'\n", post_log.display()),
    );
    // The project's shared settings enable its MCP servers; install writes this machine's
    // settings.local.json, which already holds the user's own hooks and permissions.
    fs::write(
        cc.settings_path(),
        r#"{"enableAllProjectMcpServers": true}"#,
    )
    .expect("write the project's settings");
    let settings = cc.settings_path().with_file_name("settings.local.json");
    let existing = json!({
        "enableAllProjectMcpServers": true,
        "permissions": {"allow": [TOOL, "Bash(ls:*)"], "deny": ["Read(./.env)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/lint-bash"}]}],
            "PostToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": post_hook}]}],
        },
    });
    let original = serde_json::to_string_pretty(&existing).expect("JSON");
    fs::write(&settings, &original).expect("write the user's settings");

    let install = || {
        let mut cmd = env.command(&["install", "--scope", "local"]);
        cmd.current_dir(cc.project_dir());
        let run = crate::support::run(cmd, b"");
        run.success();
        run.stdout
    };
    assert!(install().contains("installed the rewind hook for Claude Code in"));
    let once = fs::read_to_string(&settings).expect("installed settings");
    assert!(install().contains("already up to date"));
    assert_eq!(fs::read_to_string(&settings).expect("settings"), once);
    let backups: Vec<_> = fs::read_dir(settings.parent().expect("dir"))
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("settings.local.json.rewind-backup-")
        })
        .collect();
    assert_eq!(backups.len(), 1, "one change, one backup");
    assert_eq!(
        fs::read_to_string(backups[0].path()).expect("backup"),
        original
    );

    let installed: Value = serde_json::from_str(&once).expect("JSON");
    for key in ["enableAllProjectMcpServers", "permissions"] {
        assert_eq!(installed[key], existing[key], "{key} kept");
    }
    // The user's PostToolUse hook is kept; ours (recording that a call ran) comes after it.
    let post = installed["hooks"]["PostToolUse"]
        .as_array()
        .expect("PostToolUse");
    assert_eq!(post.len(), 2, "{installed:#}");
    assert_eq!(post[0], existing["hooks"]["PostToolUse"][0]);
    // The config install found ($REWIND_CONFIG here) is pinned by its absolute path.
    let pinned = json!([
        "--config",
        fs::canonicalize(&env.config).expect("config path"),
        "hook",
        "--host",
        "claude-code"
    ]);
    assert_eq!(post[1]["hooks"][0]["args"], pinned);
    let pre = installed["hooks"]["PreToolUse"]
        .as_array()
        .expect("PreToolUse");
    assert_eq!(pre.len(), 2, "{installed:#}");
    assert_eq!(pre[0], existing["hooks"]["PreToolUse"][0]);
    assert_eq!(
        pre[1]["matcher"],
        rewind::host::claude_code::settings::MATCHER
    );
    let entry = &pre[1]["hooks"][0];
    assert_eq!(pre[1]["hooks"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        entry["command"],
        hook_bin().to_str().expect("UTF-8 path"),
        "the installed command is the hook binary beside the one that ran `rewind install`"
    );
    assert_eq!(entry["args"], pinned);
    assert_eq!(entry["timeout"], BUDGET_SECS + HOST_TIMEOUT_MARGIN_SECS);
    assert_eq!(entry["onFailure"], "block");

    let run = cc.run();
    let insert = the_listed_checkpoint(&env);
    assert_ran_with_checkpoint_context(&run, &insert);
    let post: Value =
        serde_json::from_str(&fs::read_to_string(&post_log).expect("the user's PostToolUse ran"))
            .expect("JSON");
    assert_eq!(post["tool_use_id"], CALL_ID);

    // rewind's own PostToolUse entry recorded in the audit trail that the guarded call ran.
    let log = env.run(&["log", "--change", CALL_ID, "--json"], b"");
    let decisions: Vec<String> = log
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("audit JSON")["decision"].to_string())
        .collect();
    assert_eq!(decisions, ["\"context\"", "\"ran\""], "{log:#?}");
}

/// Installed into Claude Code's administrator file, the hook outlives the user's own
/// `"disableAllHooks": true`: the change still waits for its tag. The administrator file (and
/// the system configuration it pins) are laid over `/etc` in a private mount namespace for
/// this run only ([`ClaudeCode::etc_overlay`]), never written to the real `/etc`.
#[test]
fn a_managed_entry_still_guards_when_the_user_switches_every_hook_off() {
    assert!(
        rewind::lockfile::is_root(),
        "the administrator layer is root's: this test runs as root, as CI does"
    );
    let env = rewind_env(Vec::new());
    let machine = tempfile::tempdir().expect("machine root");
    let system = machine.path().join("etc/rewind/config.toml");
    fs::create_dir_all(system.parent().expect("dir")).expect("mkdir");
    fs::copy(&env.config, &system).expect("system configuration");
    fs::set_permissions(&system, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .expect("chmod");
    let root = machine.path().display().to_string();
    env.run(
        &[
            "install",
            "--host",
            "claude-code",
            "--scope",
            "managed",
            "--root",
            &root,
        ],
        b"",
    )
    .success();

    let cc = claude_for(&env, "jp-ubuntu")
        .allowed_tools([TOOL])
        .etc_overlay(&machine.path().join("etc"));
    fs::create_dir_all(cc.root().join("home/.claude")).expect("mkdir");
    crate::claude::write_json(
        &cc.root().join("home/.claude/settings.json"),
        &json!({"disableAllHooks": true}),
    );
    let run = cc.run();

    let insert = the_listed_checkpoint(&env);
    assert_ran_with_checkpoint_context(&run, &insert);
    let listed = millis_since_epoch(wall_clock(insert.listed_at.expect("listed")));
    let called = millis_since_epoch(logged_at(&run.mcp_calls[0]));
    assert!(
        listed <= called,
        "Zerto listed the tag at {listed} ms, after the MCP server received the call at {called} ms"
    );
}
