//! What the real Codex CLI, Gemini CLI and GitHub Copilot CLI do with a pre-tool-use hook's
//! answer, proved with stand-in hooks (tiny shell scripts) and the real host binaries (see
//! [`crate::agents`]). Each test is named for the host behaviour it pins; `docs/hosts.md` has the
//! table these rows come from. If a host upgrade changes one, the test says which.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::agents::{Agent, AgentKind, AgentRun, StandIn, call, mcp_exec, say};

const CALL_ID: &str = "call_e2e_01";

fn mutating_input() -> Value {
    json!({"host": "jp-ubuntu", "command": "sudo sed -i s/a/b/ /etc/app.conf"})
}

/// One call of the stub's `exec` tool (allowed by the user's own settings), then a text answer.
fn one_allowed_call(kind: AgentKind) -> Agent {
    Agent::new(kind)
        .prompt("Change the app config on jp-ubuntu.")
        .script([mcp_exec(kind, CALL_ID, mutating_input()), say("Done.")])
}

/// A stand-in hook that reads its stdin, prints `stdout`, prints `stderr` on stderr and exits
/// with `code`.
fn stand_in(agent: &Agent, stdout: &str, stderr: &str, code: u8) -> StandIn {
    let out = agent.root().join("stand-in.out");
    let err = agent.root().join("stand-in.err");
    fs::write(&out, stdout).expect("write the stand-in's stdout");
    fs::write(&err, stderr).expect("write the stand-in's stderr");
    let script = agent.write_executable(
        "stand-in.sh",
        "#!/bin/sh\ncat >/dev/null\ncat \"$1\"\ncat \"$2\" >&2\nexit \"$3\"\n",
    );
    StandIn::exec(script).args([path_str(&out), path_str(&err), code.to_string()])
}

fn printing(agent: &Agent, decision: &Value) -> StandIn {
    stand_in(agent, &decision.to_string(), "", 0)
}

/// A stand-in that never answers: the host's timeout (1 s) has to end it.
fn sleeping(agent: &Agent) -> StandIn {
    let script = agent.write_executable("slow.sh", "#!/bin/sh\ncat >/dev/null\nexec sleep 60\n");
    StandIn::exec(script).timeout_secs(1)
}

/// What a Rust panic looks like from outside: a message on stderr and exit 101.
fn panicking(agent: &Agent) -> StandIn {
    stand_in(
        agent,
        "",
        "thread 'main' panicked at src/main.rs:1:1:\nE2E-PANIC\n",
        101,
    )
}

#[track_caller]
fn assert_ran_once(run: &AgentRun) {
    assert_eq!(
        run.mcp_tools_called(),
        ["ssh.exec"],
        "the MCP tool should have run once\n{}",
        run.describe()
    );
}

#[track_caller]
fn assert_not_run(run: &AgentRun) {
    assert!(
        run.mcp_calls.is_empty(),
        "the MCP tool must not have run\n{}",
        run.describe()
    );
}

/// Asserts the model's tool result for the call contains every needle.
#[track_caller]
fn assert_told(run: &AgentRun, needles: &[&str]) {
    let result = run
        .tool_result(CALL_ID)
        .unwrap_or_else(|| panic!("no tool result reached the model\n{}", run.describe()));
    for needle in needles {
        assert!(
            result.contains(needle),
            "expected the tool result to contain {needle:?}, got {result:?}\n{}",
            run.describe()
        );
    }
}

fn path_str(path: &Path) -> String {
    path.to_str().expect("temporary paths are UTF-8").to_owned()
}

/// Replaces what changes from run to run in a hook's stdin with placeholders (ids, times, the
/// transcript path, the temporary root, this checkout's `tests/e2e`), keeping the host's own key
/// order.
fn scrub_hook_stdin(stdin: &str, root: &Path) -> String {
    let mut parsed: Value = serde_json::from_str(stdin).expect("the hook's stdin is JSON");
    if let Some(map) = parsed.as_object_mut() {
        for (key, value) in map.iter_mut() {
            let placeholder = match key.as_str() {
                "session_id" | "sessionId" => "<session-id>",
                "turn_id" => "<turn-id>",
                "timestamp" => "<timestamp>",
                "transcript_path" => "<transcript>",
                _ => continue,
            };
            // A number stays a number (Copilot's camelCase timestamp is epoch milliseconds).
            *value = if value.is_number() {
                json!(0)
            } else {
                json!(placeholder)
            };
        }
    }
    parsed
        .to_string()
        .replace(&path_str(root), "<tmp>")
        .replace(&path_str(&crate::claude::e2e_dir()), "<e2e>")
}

/// Runs `agent` with a stand-in that captures its stdin and says nothing, and checks the
/// captured payload against the recorded sample `fixture` (under `tests/fixtures/hosts/`).
fn assert_payload_matches(agent: Agent, fixture: &str) -> AgentRun {
    let captured = agent.root().join("hook-stdin.json");
    let hook = agent.write_executable("capture.sh", "#!/bin/sh\ncat > \"$1\"\n");
    let run = agent
        .hook(StandIn::exec(hook).args([path_str(&captured)]))
        .run();
    let stdin = fs::read_to_string(&captured)
        .unwrap_or_else(|_| panic!("the hook never ran\n{}", run.describe()));
    let scrubbed = scrub_hook_stdin(&stdin, run.root());
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(fixture);
    let sample: Value = fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    assert_eq!(
        serde_json::from_str::<Value>(&scrubbed).expect("scrubbed stdin is JSON"),
        sample,
        "the hook's stdin no longer matches tests/fixtures/hosts/{fixture}; if the host changed on \
         purpose, replace the file with:\n{scrubbed}"
    );
    run
}

fn rewind_bin() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_rewind"))
        .canonicalize()
        .expect("the rewind binary exists")
}

/// The shipped snippet for `kind` (`hooks/<host>.*.json`), with the real binary's path.
pub(crate) fn shipped_snippet(kind: AgentKind) -> Value {
    let file = match kind {
        AgentKind::Codex => "codex.hooks.json",
        AgentKind::Gemini => "gemini.settings.json",
        AgentKind::Copilot | AgentKind::CopilotPascal => "copilot.hooks.json",
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("hooks")
        .join(file);
    let text = fs::read_to_string(&path).expect("the shipped snippet");
    let bin = path_str(&rewind_bin());
    serde_json::from_str(&text.replace("/usr/local/bin/rewind", &bin))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

mod codex {
    use super::*;

    const KIND: AgentKind = AgentKind::Codex;

    fn decision(permission: &str) -> Value {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": permission,
            "permissionDecisionReason": "E2E-REASON: checkpoint failed on vpg-1",
        }})
    }

    #[test]
    fn sends_the_recorded_payload_for_an_mcp_call_and_no_decision_lets_it_run() {
        let run = assert_payload_matches(one_allowed_call(KIND), "codex-0.171.0-mcp.json");
        assert_ran_once(&run);
    }

    #[test]
    fn sends_its_shell_tool_as_bash_with_a_command_string() {
        let agent = Agent::new(KIND).script([
            call(
                "call_e2e_sh",
                "exec_command",
                json!({"cmd": "ssh jp-ubuntu sudo systemctl restart app"}),
            ),
            say("Done."),
        ]);
        assert_payload_matches(agent, "codex-0.171.0-shell.json");
    }

    #[test]
    fn deny_blocks_the_call_and_the_model_reads_the_reason() {
        let agent = one_allowed_call(KIND);
        let hook = printing(&agent, &decision("deny"));
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(
            &run,
            &[
                "blocked by PreToolUse hook",
                "E2E-REASON: checkpoint failed on vpg-1",
            ],
        );
    }

    #[test]
    fn ask_is_not_supported_and_the_call_runs() {
        let agent = one_allowed_call(KIND);
        let hook = printing(&agent, &decision("ask"));
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }

    #[test]
    fn allow_does_not_lift_an_approval_the_user_requires() {
        let agent = one_allowed_call(KIND).mcp_not_allowed();
        let hook = printing(&agent, &decision("allow"));
        let run = agent.hook(hook).run();
        assert_not_run(&run);
    }

    #[test]
    fn additional_context_reaches_the_model_and_the_call_runs() {
        let agent = one_allowed_call(KIND);
        let hook = printing(
            &agent,
            &json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": "E2E-CONTEXT: checkpoint rewind-1 taken",
            }}),
        );
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
        let seen = run.model_saw_after(CALL_ID);
        assert!(
            seen.contains("E2E-CONTEXT: checkpoint rewind-1 taken"),
            "{seen}\n{}",
            run.describe()
        );
    }

    #[test]
    fn exit_2_blocks_and_the_model_reads_stderr() {
        let agent = one_allowed_call(KIND);
        let hook = stand_in(&agent, "", "E2E-STDERR: refused\n", 2);
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(&run, &["E2E-STDERR: refused"]);
    }

    #[test]
    fn a_hook_past_its_timeout_lets_the_call_run_unguarded() {
        let agent = one_allowed_call(KIND);
        let hook = sleeping(&agent);
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }

    #[test]
    fn a_panicking_hook_lets_the_call_run_unguarded() {
        let agent = one_allowed_call(KIND);
        let hook = panicking(&agent);
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }
}

mod gemini {
    use super::*;

    const KIND: AgentKind = AgentKind::Gemini;

    fn decision(decision: &str) -> Value {
        json!({"decision": decision, "reason": "E2E-REASON: checkpoint failed on vpg-1"})
    }

    #[test]
    fn sends_the_recorded_payload_for_an_mcp_call_and_no_decision_lets_it_run() {
        let run = assert_payload_matches(one_allowed_call(KIND), "gemini-0.61.0-mcp.json");
        assert_ran_once(&run);
    }

    #[test]
    fn sends_its_shell_tool_as_run_shell_command() {
        let agent = Agent::new(KIND).script([
            call(
                "call_e2e_sh",
                "run_shell_command",
                json!({"command": "ssh jp-ubuntu sudo systemctl restart app", "description": "restart"}),
            ),
            say("Done."),
        ]);
        assert_payload_matches(agent, "gemini-0.61.0-shell.json");
    }

    #[test]
    fn deny_blocks_the_call_and_the_model_reads_the_reason() {
        let agent = one_allowed_call(KIND);
        let hook = printing(&agent, &decision("deny"));
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(
            &run,
            &[
                "Tool execution blocked",
                "E2E-REASON: checkpoint failed on vpg-1",
            ],
        );
    }

    #[test]
    fn ask_does_not_stop_a_call_the_settings_allow() {
        let agent = one_allowed_call(KIND);
        let hook = printing(&agent, &decision("ask"));
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }

    #[test]
    fn additional_context_before_the_call_does_not_reach_the_model() {
        let agent = one_allowed_call(KIND);
        let hook = printing(
            &agent,
            &json!({"hookSpecificOutput": {
                "hookEventName": "BeforeTool",
                "additionalContext": "E2E-CONTEXT: checkpoint rewind-1 taken",
            }}),
        );
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
        let seen = run.model_saw_after(CALL_ID);
        assert!(!seen.contains("E2E-CONTEXT"), "{seen}");
    }

    #[test]
    fn json_on_stdout_wins_over_exit_2() {
        let agent = one_allowed_call(KIND);
        let hook = stand_in(
            &agent,
            &json!({"decision": "allow"}).to_string(),
            "E2E-STDERR: refused\n",
            2,
        );
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }

    #[test]
    fn exit_2_with_text_blocks_and_the_model_reads_stderr() {
        let agent = one_allowed_call(KIND);
        let hook = stand_in(&agent, "", "E2E-STDERR: refused\n", 2);
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(&run, &["E2E-STDERR: refused"]);
    }

    #[test]
    fn a_panicking_hook_blocks_the_call_with_its_stderr() {
        let agent = one_allowed_call(KIND);
        let hook = panicking(&agent);
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(&run, &["panicked"]);
    }

    #[test]
    fn a_hook_past_its_timeout_lets_the_call_run_unguarded() {
        let agent = one_allowed_call(KIND);
        let hook = sleeping(&agent);
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }
}

mod copilot {
    use super::*;

    const KIND: AgentKind = AgentKind::Copilot;

    fn decision(permission: &str) -> Value {
        json!({
            "permissionDecision": permission,
            "permissionDecisionReason": "E2E-REASON: checkpoint failed on vpg-1",
        })
    }

    #[test]
    fn sends_the_recorded_camel_case_payload_without_a_call_id() {
        let run = assert_payload_matches(one_allowed_call(KIND), "copilot-1.0.102-mcp.json");
        assert_ran_once(&run);
    }

    #[test]
    fn sends_the_recorded_claude_shaped_payload_under_pre_tool_use() {
        let run = assert_payload_matches(
            one_allowed_call(AgentKind::CopilotPascal),
            "copilot-1.0.102-mcp-pascal.json",
        );
        assert_ran_once(&run);
    }

    #[test]
    fn sends_its_shell_tool_as_bash() {
        let agent = Agent::new(KIND).script([
            call(
                "call_e2e_sh",
                "bash",
                json!({"command": "ssh jp-ubuntu sudo systemctl restart app", "description": "restart"}),
            ),
            say("Done."),
        ]);
        assert_payload_matches(agent, "copilot-1.0.102-shell.json");
    }

    #[test]
    fn sends_its_shell_tool_claude_shaped_under_pre_tool_use() {
        let agent = Agent::new(AgentKind::CopilotPascal).script([
            call(
                "call_e2e_sh",
                "bash",
                json!({"command": "ssh jp-ubuntu sudo systemctl restart app", "description": "restart"}),
            ),
            say("Done."),
        ]);
        assert_payload_matches(agent, "copilot-1.0.102-shell-pascal.json");
    }

    #[test]
    fn deny_blocks_the_call_and_the_model_reads_the_reason() {
        let agent = one_allowed_call(KIND);
        let hook = printing(&agent, &decision("deny"));
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(
            &run,
            &[
                "Denied by preToolUse hook",
                "E2E-REASON: checkpoint failed on vpg-1",
            ],
        );
    }

    #[test]
    fn ask_without_anyone_to_ask_is_a_refusal_with_the_reason() {
        let agent = one_allowed_call(KIND);
        let hook = printing(&agent, &decision("ask"));
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(
            &run,
            &[
                "unable to ask user for confirmation",
                "E2E-REASON: checkpoint failed on vpg-1",
            ],
        );
    }

    #[test]
    fn allow_bypasses_the_users_own_permission_rules() {
        let agent = one_allowed_call(KIND).mcp_not_allowed();
        let hook = printing(&agent, &decision("allow"));
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }

    #[test]
    fn additional_context_reaches_the_model_and_the_call_runs() {
        let agent = one_allowed_call(KIND);
        let hook = printing(
            &agent,
            &json!({"additionalContext": "E2E-CONTEXT: checkpoint rewind-1 taken"}),
        );
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
        let seen = run.model_saw_after(CALL_ID);
        assert!(
            seen.contains("E2E-CONTEXT: checkpoint rewind-1 taken"),
            "{seen}\n{}",
            run.describe()
        );
    }

    #[test]
    fn exit_2_blocks_but_the_model_does_not_read_stderr() {
        let agent = one_allowed_call(KIND);
        let hook = stand_in(&agent, "", "E2E-STDERR: refused\n", 2);
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(&run, &["hook exited with code 2"]);
        let told = run.tool_result(CALL_ID).unwrap_or_default();
        assert!(!told.contains("E2E-STDERR"), "{told}");
    }

    #[test]
    fn a_panicking_hook_blocks_the_call() {
        let agent = one_allowed_call(KIND);
        let hook = panicking(&agent);
        let run = agent.hook(hook).run();
        assert_not_run(&run);
        assert_told(&run, &["hook errored"]);
    }

    #[test]
    fn a_hook_past_its_timeout_lets_the_call_run_unguarded() {
        let agent = one_allowed_call(KIND);
        let hook = sleeping(&agent);
        let run = agent.hook(hook).run();
        assert_ran_once(&run);
    }
}

/// The real `rewind hook --host <host>`, run by each real host for an MCP call, facing the ZVM
/// simulator: the checkpoint is listed before the tool runs, a refused call does not run, and
/// the model (or, in Gemini CLI, the user) is told what happened.
mod guarded {
    use rewind::sim::InsertRecord;

    use super::*;
    use crate::claude::logged_at;
    use crate::support::{Setup, TestEnv};

    const BUDGET_SECS: u64 = 5;

    fn rewind_env() -> TestEnv {
        TestEnv::with(Setup {
            hook: format!("budget_secs = {BUDGET_SECS}"),
            ..Setup::default()
        })
    }

    /// `kind` asked to change the app config on `vm` with one MCP call, `rewind hook` installed
    /// from the shipped snippet (the host timeout at the default budget + 30 s).
    fn guarded_call_on(env: &TestEnv, kind: AgentKind, vm: &str) -> Agent {
        let mut agent = Agent::new(kind)
            .prompt(&format!("Change the app config on {vm}."))
            .script([
                mcp_exec(
                    kind,
                    CALL_ID,
                    json!({"host": vm, "command": "sudo sed -i s/a/b/ /etc/app.conf"}),
                ),
                say("Done."),
            ])
            .hooks_file(shipped_snippet(kind));
        for (key, value) in env.hook_env() {
            agent = agent.env(&key, value);
        }
        agent
    }

    /// The simulator's only insert: listed, Completed, on jp-ubuntu's VPG; and listed before the
    /// MCP server received the call.
    #[track_caller]
    fn listed_before_the_call(env: &TestEnv, run: &AgentRun) -> InsertRecord {
        let inserts = env.sim.inserts();
        assert_eq!(inserts.len(), 1, "{inserts:#?}\n{}", run.describe());
        let insert = inserts.into_iter().next().expect("one insert");
        assert_eq!(insert.vpg_name, "jp-ubuntu-vpg");
        assert_eq!(insert.task_state, "Completed", "{insert:#?}");
        assert_ran_once(run);
        let listed = insert.listed_at.expect("listed");
        let (now, wall) = (std::time::Instant::now(), std::time::SystemTime::now());
        let listed_wall = wall - now.duration_since(listed);
        let ms = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .expect("after 1970")
                .as_millis()
        };
        assert!(
            ms(listed_wall) <= ms(logged_at(&run.mcp_calls[0])),
            "Zerto listed the tag after the MCP server received the call"
        );
        insert
    }

    #[test]
    fn codex_checkpoint_is_tagged_with_the_call_id_and_listed_before_the_call_runs() {
        let env = rewind_env();
        let run = guarded_call_on(&env, AgentKind::Codex, "jp-ubuntu").run();
        let insert = listed_before_the_call(&env, &run);
        assert!(
            insert.tag.contains(&format!("| change={CALL_ID} |")),
            "{insert:#?}"
        );
        let seen = run.model_saw_after(CALL_ID);
        for needle in [
            "rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu.",
            &format!("rewind recover --vm jp-ubuntu --change {CALL_ID} --path <file>"),
        ] {
            assert!(
                seen.contains(needle),
                "{needle:?} not in:\n{seen}\n{}",
                run.describe()
            );
        }
    }

    #[test]
    fn codex_call_on_an_unknown_vm_is_refused_because_codex_cannot_ask() {
        let env = rewind_env();
        let run = guarded_call_on(&env, AgentKind::Codex, "mail01").run();
        assert_not_run(&run);
        assert!(env.sim.inserts().is_empty());
        assert_told(
            &run,
            &[
                "is unknown to Zerto",
                "Codex CLI cannot ask a human before a call",
            ],
        );
    }

    #[test]
    fn gemini_checkpoint_is_listed_before_the_call_runs_and_the_user_sees_it() {
        let env = rewind_env();
        let run = guarded_call_on(&env, AgentKind::Gemini, "jp-ubuntu").run();
        let insert = listed_before_the_call(&env, &run);
        // Gemini sends no call id: the change id is rewind's own.
        assert!(insert.tag.contains("| change=rewind-"), "{insert:#?}");
        assert!(
            run.stderr
                .contains("rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu."),
            "the user was not shown the checkpoint\n{}",
            run.describe()
        );
    }

    #[test]
    fn gemini_call_on_an_unknown_vm_is_refused_and_the_model_reads_why() {
        let env = rewind_env();
        let run = guarded_call_on(&env, AgentKind::Gemini, "mail01").run();
        assert_not_run(&run);
        assert_told(
            &run,
            &[
                "is unknown to Zerto",
                "Gemini CLI cannot ask a human before a call",
            ],
        );
    }

    #[test]
    fn copilot_checkpoint_is_listed_before_the_call_runs_and_the_model_gets_the_recover_command() {
        let env = rewind_env();
        let run = guarded_call_on(&env, AgentKind::Copilot, "jp-ubuntu").run();
        let insert = listed_before_the_call(&env, &run);
        assert!(insert.tag.contains("| change=rewind-"), "{insert:#?}");
        let seen = run.model_saw_after(CALL_ID);
        for needle in [
            "rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu.",
            "rewind recover --vm jp-ubuntu --change rewind-",
        ] {
            assert!(
                seen.contains(needle),
                "{needle:?} not in:\n{seen}\n{}",
                run.describe()
            );
        }
    }

    #[test]
    fn copilot_call_on_an_unknown_vm_is_not_run_without_a_human() {
        let env = rewind_env();
        let run = guarded_call_on(&env, AgentKind::Copilot, "mail01").run();
        assert_not_run(&run);
        assert_told(
            &run,
            &["unable to ask user for confirmation", "is unknown to Zerto"],
        );
    }
}
