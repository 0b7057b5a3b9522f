//! What the real Claude Code does with a PreToolUse hook's answer, proved with stand-in hooks
//! (tiny shell scripts), before and independently of `rewind hook`. Each test is named for the
//! host behaviour it pins; if a Claude Code upgrade changes one, the test says which.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::claude::{ClaudeCode, ClaudeRun, Hook, PermissionMode, text, tool_use};

const CALL_ID: &str = "toolu_e2e_01";
const TOOL: &str = "mcp__ssh__exec";

/// The sample of what Claude Code sends a PreToolUse hook for an MCP call, kept as a fixture
/// for the hook's own tests and checked against the real host here.
const SAMPLE: &str = "tests/fixtures/hook/claude-code-2.1.332-sample.json";

fn mutating_input() -> Value {
    json!({"host": "jp-ubuntu", "command": "sudo sed -i s/a/b/ /etc/app.conf"})
}

/// One MCP call, then a text answer; the tool is allowed by the user's own rules, so without a
/// hook it runs.
fn one_allowed_call() -> ClaudeCode {
    ClaudeCode::new()
        .prompt("Change the app config on jp-ubuntu.")
        .script([tool_use(CALL_ID, TOOL, mutating_input()), text("Done.")])
        .permission_mode(PermissionMode::Default)
        .allowed_tools([TOOL])
}

/// A stand-in hook that reads its stdin, prints `decision` and exits 0.
fn printing_hook(cc: &ClaudeCode, decision: &Value) -> PathBuf {
    let answer = cc.root().join("decision.json");
    fs::write(&answer, decision.to_string()).expect("write the stand-in decision");
    cc.write_executable(
        "hook.sh",
        &format!("#!/bin/sh\ncat >/dev/null\ncat '{}'\n", answer.display()),
    )
}

fn assert_not_run(run: &ClaudeRun) {
    assert!(
        run.mcp_calls.is_empty(),
        "the MCP tool must not have run\n{}",
        run.describe()
    );
}

fn assert_ran_once(run: &ClaudeRun) {
    assert_eq!(
        run.mcp_tools_called(),
        ["ssh.exec"],
        "the MCP tool should have run once\n{}",
        run.describe()
    );
}

/// Asserts the model got an error tool result for the call that contains `needle`.
/// Also asserts Claude Code lists the call in `permission_denials`.
fn assert_refused_with(run: &ClaudeRun, needle: &str) {
    let result = run
        .tool_result(CALL_ID)
        .unwrap_or_else(|| panic!("no tool_result reached the model\n{}", run.describe()));
    assert!(
        result.is_error && result.text.contains(needle),
        "expected an error result containing {needle:?}, got {result:?}\n{}",
        run.describe()
    );
    assert_eq!(
        run.denied_ids(),
        [CALL_ID],
        "permission_denials\n{}",
        run.describe()
    );
    assert!(
        run.status.success(),
        "a refused call still ends the run normally\n{}",
        run.describe()
    );
}

#[test]
fn hook_receives_the_recorded_stdin_and_no_decision_lets_an_allowed_call_run() {
    let cc = one_allowed_call();
    let captured = cc.root().join("hook-stdin.json");
    let env_seen = cc.root().join("hook-env.txt");
    // Exec form: the capture path arrives as an argument, no shell in between.
    let hook = cc.write_executable(
        "capture.sh",
        "#!/bin/sh\ncat > \"$1\"\nprintf '%s' \"$REWIND_E2E_MARK\" > \"$2\"\n",
    );
    let hook = Hook::exec(hook).args([path_str(&captured), path_str(&env_seen)]);
    let run = cc.hook(hook).env("REWIND_E2E_MARK", "passed-through").run();

    assert_ran_once(&run);
    assert_eq!(run.mcp_calls[0]["arguments"], mutating_input());
    assert!(run.permission_denials().is_empty(), "{}", run.describe());
    assert_eq!(run.result_text(), "Done.");
    assert_eq!(
        fs::read_to_string(&env_seen).expect("the hook ran"),
        "passed-through",
        "the hook inherits the environment given to Claude Code"
    );

    let stdin = fs::read_to_string(&captured).expect("the hook captured its stdin");
    let scrubbed = scrub_hook_stdin(&stdin, run.root());
    let parsed: Value = serde_json::from_str(&scrubbed).expect("scrubbed stdin is still JSON");
    let sample: Value = serde_json::from_str(
        &fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE))
            .expect("read the recorded sample"),
    )
    .expect("the sample is JSON");
    assert_eq!(
        parsed, sample,
        "Claude Code's hook stdin no longer matches {SAMPLE}; if the host changed on purpose, \
         replace the file with:\n{scrubbed}"
    );
}

#[test]
fn hook_deny_blocks_the_call_even_under_bypass_permissions_and_the_model_reads_the_reason() {
    let cc = one_allowed_call().permission_mode(PermissionMode::BypassPermissions);
    let hook = printing_hook(
        &cc,
        &json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "E2E-DENY: checkpoint failed on vpg-1",
        }}),
    );
    let run = cc.hook(Hook::exec(hook)).run();

    assert_not_run(&run);
    assert_refused_with(&run, "E2E-DENY: checkpoint failed on vpg-1");
    assert_refused_with(&run, "hook error");
}

#[test]
fn hook_additional_context_without_a_decision_lets_the_call_run_and_reaches_the_model() {
    let cc = one_allowed_call();
    let hook = printing_hook(
        &cc,
        &json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "E2E-CONTEXT: checkpoint rewind-1 taken",
        }}),
    );
    let run = cc.hook(Hook::exec(hook)).run();

    assert_ran_once(&run);
    let result = run
        .tool_result(CALL_ID)
        .expect("the tool result reached the model");
    assert!(!result.is_error, "{result:?}");
    let seen = run.model_saw_after(CALL_ID);
    assert!(
        seen.contains("PreToolUse:mcp__ssh__exec hook additional context: E2E-CONTEXT: checkpoint rewind-1 taken"),
        "the model did not receive the hook's context:\n{seen}\n{}",
        run.describe()
    );
}

#[test]
fn hook_past_its_timeout_with_on_failure_block_blocks_the_call() {
    let cc = one_allowed_call();
    let hook = cc.write_executable("slow.sh", "#!/bin/sh\nexec sleep 30\n");
    let run = cc.hook(Hook::exec(hook).timeout_secs(1)).run();

    assert_not_run(&run);
    assert_refused_with(&run, "timed out; blocking because onFailure is \"block\"");
}

#[test]
fn hook_panicking_with_exit_101_with_on_failure_block_blocks_the_call() {
    let cc = one_allowed_call();
    let hook = cc.write_executable(
        "panic.sh",
        "#!/bin/sh\ncat >/dev/null\necho \"thread 'main' panicked at src/main.rs:1:1\" >&2\nexit 101\n",
    );
    let run = cc.hook(Hook::exec(hook)).run();

    assert_not_run(&run);
    assert_refused_with(&run, "failed; blocking because onFailure is \"block\"");
    // The first line of the hook's stderr reaches the model too.
    assert_refused_with(&run, "thread 'main' panicked");
}

#[test]
fn hook_panicking_with_exit_101_without_on_failure_lets_the_call_run_unguarded() {
    let cc = one_allowed_call();
    let hook = cc.write_executable("panic.sh", "#!/bin/sh\ncat >/dev/null\nexit 101\n");
    let run = cc.hook(Hook::exec(hook).without_on_failure()).run();

    assert_ran_once(&run);
}

fn path_str(path: &Path) -> String {
    path.to_str().expect("temporary paths are UTF-8").to_owned()
}

/// Replaces what changes from run to run in a hook's stdin with stable placeholders: the
/// temporary root (also in the slug Claude Code makes of it for the transcript directory), the
/// session id and the prompt id. Keeps the host's own key order and layout.
fn scrub_hook_stdin(stdin: &str, root: &Path) -> String {
    let parsed: Value = serde_json::from_str(stdin).expect("the hook's stdin is JSON");
    let mut text = stdin.to_owned();
    for (key, placeholder) in [("session_id", "<session-id>"), ("prompt_id", "<prompt-id>")] {
        if let Some(id) = parsed[key].as_str().filter(|id| !id.is_empty()) {
            text = text.replace(id, placeholder);
        }
    }
    let root = path_str(root);
    let slug: String = root
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    text.replace(&root, "<tmp>").replace(&slug, "<tmp-slug>")
}
