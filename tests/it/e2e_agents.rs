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
    let bin = path_str(&crate::support::rewind_bin());
    serde_json::from_str(&text.replace("/usr/local/bin/rewind", &bin))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const REASON: &str = "E2E-REASON: checkpoint failed on vpg-1";
const CONTEXT: &str = "E2E-CONTEXT: checkpoint rewind-1 taken";
const STDERR: &str = "E2E-STDERR: refused\n";

/// What one host says, in its own schema, for the rows below.
struct HostAnswers {
    kind: AgentKind,
    /// A decision (`deny`, `ask`, `allow`) with [`REASON`].
    decision: fn(&str) -> Value,
    /// Context for the model, no decision.
    context: fn() -> Value,
}

const CODEX: HostAnswers = HostAnswers {
    kind: AgentKind::Codex,
    decision: |permission| {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": permission,
            "permissionDecisionReason": REASON,
        }})
    },
    context: || json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": CONTEXT}}),
};

const GEMINI: HostAnswers = HostAnswers {
    kind: AgentKind::Gemini,
    decision: |decision| json!({"decision": decision, "reason": REASON}),
    context: || json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "additionalContext": CONTEXT}}),
};

const COPILOT: HostAnswers = HostAnswers {
    kind: AgentKind::Copilot,
    decision: |permission| json!({"permissionDecision": permission, "permissionDecisionReason": REASON}),
    context: || json!({"additionalContext": CONTEXT}),
};

/// `host` runs the one allowed MCP call with a stand-in that prints its `decision`.
fn with_decision(host: &HostAnswers, decision: &str) -> AgentRun {
    let agent = one_allowed_call(host.kind);
    let hook = printing(&agent, &(host.decision)(decision));
    agent.hook(hook).run()
}

/// `host` runs the one MCP call, not allowed by the user, with a stand-in that answers `allow`.
fn allow_on_an_unapproved_call(host: &HostAnswers) -> AgentRun {
    let agent = one_allowed_call(host.kind).mcp_not_allowed();
    let hook = printing(&agent, &(host.decision)("allow"));
    agent.hook(hook).run()
}

/// `host` runs the one allowed MCP call with a stand-in that prints context and no decision;
/// returns the run and what the model received after the call.
fn with_context(host: &HostAnswers) -> (AgentRun, String) {
    let agent = one_allowed_call(host.kind);
    let hook = printing(&agent, &(host.context)());
    let run = agent.hook(hook).run();
    let seen = run.model_saw_after(CALL_ID);
    (run, seen)
}

/// `kind` runs the one allowed MCP call with a stand-in that exits 2 with [`STDERR`].
fn exit_2_with_stderr(kind: AgentKind) -> AgentRun {
    let agent = one_allowed_call(kind);
    let hook = stand_in(&agent, "", STDERR, 2);
    agent.hook(hook).run()
}

fn past_its_timeout(kind: AgentKind) -> AgentRun {
    let agent = one_allowed_call(kind);
    let hook = sleeping(&agent);
    agent.hook(hook).run()
}

fn panicking_hook(kind: AgentKind) -> AgentRun {
    let agent = one_allowed_call(kind);
    let hook = panicking(&agent);
    agent.hook(hook).run()
}

/// `kind`'s shell tool `tool` asked to run a change: the hook's stdin must match `fixture`.
fn shell_payload(kind: AgentKind, tool: &str, arguments: Value, fixture: &str) {
    let agent = Agent::new(kind).script([call("call_e2e_sh", tool, arguments), say("Done.")]);
    assert_payload_matches(agent, fixture);
}

const SHELL_CHANGE: &str = "ssh jp-ubuntu sudo systemctl restart app";

#[track_caller]
fn assert_context_seen(run: &AgentRun, seen: &str) {
    assert!(seen.contains(CONTEXT), "{seen}\n{}", run.describe());
}

mod codex {
    use super::*;

    const HOST: HostAnswers = CODEX;

    #[test]
    fn sends_the_recorded_payload_for_an_mcp_call_and_no_decision_lets_it_run() {
        let run = assert_payload_matches(one_allowed_call(HOST.kind), "codex-0.171.0-mcp.json");
        assert_ran_once(&run);
    }

    #[test]
    fn sends_its_shell_tool_as_bash_with_a_command_string() {
        let args = json!({"cmd": SHELL_CHANGE});
        shell_payload(HOST.kind, "exec_command", args, "codex-0.171.0-shell.json");
    }

    #[test]
    fn deny_blocks_the_call_and_the_model_reads_the_reason() {
        let run = with_decision(&HOST, "deny");
        assert_not_run(&run);
        assert_told(&run, &["blocked by PreToolUse hook", REASON]);
    }

    #[test]
    fn ask_is_not_supported_and_the_call_runs() {
        assert_ran_once(&with_decision(&HOST, "ask"));
    }

    #[test]
    fn allow_does_not_lift_an_approval_the_user_requires() {
        assert_not_run(&allow_on_an_unapproved_call(&HOST));
    }

    #[test]
    fn additional_context_reaches_the_model_and_the_call_runs() {
        let (run, seen) = with_context(&HOST);
        assert_ran_once(&run);
        assert_context_seen(&run, &seen);
    }

    #[test]
    fn exit_2_blocks_and_the_model_reads_stderr() {
        let run = exit_2_with_stderr(HOST.kind);
        assert_not_run(&run);
        assert_told(&run, &[STDERR.trim_end()]);
    }

    #[test]
    fn a_hook_past_its_timeout_lets_the_call_run_unguarded() {
        assert_ran_once(&past_its_timeout(HOST.kind));
    }

    #[test]
    fn a_panicking_hook_lets_the_call_run_unguarded() {
        assert_ran_once(&panicking_hook(HOST.kind));
    }
}

mod gemini {
    use super::*;

    const HOST: HostAnswers = GEMINI;

    #[test]
    fn sends_the_recorded_payload_for_an_mcp_call_and_no_decision_lets_it_run() {
        let run = assert_payload_matches(one_allowed_call(HOST.kind), "gemini-0.61.0-mcp.json");
        assert_ran_once(&run);
    }

    #[test]
    fn sends_its_shell_tool_as_run_shell_command() {
        let args = json!({"command": SHELL_CHANGE, "description": "restart"});
        shell_payload(
            HOST.kind,
            "run_shell_command",
            args,
            "gemini-0.61.0-shell.json",
        );
    }

    #[test]
    fn deny_blocks_the_call_and_the_model_reads_the_reason() {
        let run = with_decision(&HOST, "deny");
        assert_not_run(&run);
        assert_told(&run, &["Tool execution blocked", REASON]);
    }

    #[test]
    fn ask_does_not_stop_a_call_the_settings_allow() {
        assert_ran_once(&with_decision(&HOST, "ask"));
    }

    #[test]
    fn additional_context_before_the_call_does_not_reach_the_model() {
        let (run, seen) = with_context(&HOST);
        assert_ran_once(&run);
        assert!(!seen.contains("E2E-CONTEXT"), "{seen}");
    }

    #[test]
    fn json_on_stdout_wins_over_exit_2() {
        let agent = one_allowed_call(HOST.kind);
        let allow = (HOST.decision)("allow").to_string();
        let hook = stand_in(&agent, &allow, STDERR, 2);
        assert_ran_once(&agent.hook(hook).run());
    }

    #[test]
    fn exit_2_with_text_blocks_and_the_model_reads_stderr() {
        let run = exit_2_with_stderr(HOST.kind);
        assert_not_run(&run);
        assert_told(&run, &[STDERR.trim_end()]);
    }

    #[test]
    fn a_panicking_hook_blocks_the_call_with_its_stderr() {
        let run = panicking_hook(HOST.kind);
        assert_not_run(&run);
        assert_told(&run, &["panicked"]);
    }

    #[test]
    fn a_hook_past_its_timeout_lets_the_call_run_unguarded() {
        assert_ran_once(&past_its_timeout(HOST.kind));
    }
}

mod copilot {
    use super::*;

    const HOST: HostAnswers = COPILOT;

    #[test]
    fn sends_the_recorded_camel_case_payload_without_a_call_id() {
        let run = assert_payload_matches(one_allowed_call(HOST.kind), "copilot-1.0.102-mcp.json");
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
        let args = json!({"command": SHELL_CHANGE, "description": "restart"});
        shell_payload(HOST.kind, "bash", args, "copilot-1.0.102-shell.json");
    }

    #[test]
    fn sends_its_shell_tool_claude_shaped_under_pre_tool_use() {
        let args = json!({"command": SHELL_CHANGE, "description": "restart"});
        let fixture = "copilot-1.0.102-shell-pascal.json";
        shell_payload(AgentKind::CopilotPascal, "bash", args, fixture);
    }

    #[test]
    fn deny_blocks_the_call_and_the_model_reads_the_reason() {
        let run = with_decision(&HOST, "deny");
        assert_not_run(&run);
        assert_told(&run, &["Denied by preToolUse hook", REASON]);
    }

    #[test]
    fn ask_without_anyone_to_ask_is_a_refusal_with_the_reason() {
        let run = with_decision(&HOST, "ask");
        assert_not_run(&run);
        assert_told(&run, &["unable to ask user for confirmation", REASON]);
    }

    #[test]
    fn allow_bypasses_the_users_own_permission_rules() {
        assert_ran_once(&allow_on_an_unapproved_call(&HOST));
    }

    #[test]
    fn additional_context_reaches_the_model_and_the_call_runs() {
        let (run, seen) = with_context(&HOST);
        assert_ran_once(&run);
        assert_context_seen(&run, &seen);
    }

    #[test]
    fn exit_2_blocks_but_the_model_does_not_read_stderr() {
        let run = exit_2_with_stderr(HOST.kind);
        assert_not_run(&run);
        assert_told(&run, &["hook exited with code 2"]);
        let told = run.tool_result(CALL_ID).unwrap_or_default();
        assert!(!told.contains("E2E-STDERR"), "{told}");
    }

    #[test]
    fn a_panicking_hook_blocks_the_call() {
        let run = panicking_hook(HOST.kind);
        assert_not_run(&run);
        assert_told(&run, &["hook errored"]);
    }

    #[test]
    fn a_hook_past_its_timeout_lets_the_call_run_unguarded() {
        assert_ran_once(&past_its_timeout(HOST.kind));
    }
}

/// The real `rewind hook --host <host>`, run by each real host for an MCP call, facing the ZVM
/// simulator: the checkpoint is listed before the tool runs, a refused call does not run, and
/// the model (or, in Gemini CLI, the user) is told what happened.
mod guarded {
    use rewind::sim::InsertRecord;

    use super::*;
    use crate::support::{Setup, TestEnv, epoch_ms, tag_change};

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
        let listed = epoch_ms(insert.listed_at.expect("listed"));
        let called = run.mcp_calls[0]["at_ms"].as_u64().expect("at_ms");
        assert!(
            listed <= u128::from(called),
            "Zerto listed the tag at {listed} ms, the MCP server received the call at {called} ms"
        );
        insert
    }

    /// A change on jp-ubuntu under `kind`: the checkpoint is listed before the call runs, and
    /// the recover command with the tag's own change id is shown to the model (or, where the
    /// host has no channel to it before a call, the user). Returns the tag's change id.
    fn confirmed(kind: AgentKind, to_model: bool) -> String {
        let env = rewind_env();
        let run = guarded_call_on(&env, kind, "jp-ubuntu").run();
        let insert = listed_before_the_call(&env, &run);
        let change = tag_change(&insert.tag).to_owned();
        let shown = if to_model {
            run.model_saw_after(CALL_ID)
        } else {
            run.stderr.clone()
        };
        for needle in [
            "rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu.",
            &format!("rewind recover --vm jp-ubuntu --change {change} --path <file>"),
        ] {
            assert!(
                shown.contains(needle),
                "{needle:?} not shown:\n{shown}\n{}",
                run.describe()
            );
        }
        change
    }

    /// A change on mail01, which Zerto does not know, under `kind`: not run, nothing tagged, and
    /// the model reads every needle.
    fn unknown(kind: AgentKind, needles: &[&str]) {
        let env = rewind_env();
        let run = guarded_call_on(&env, kind, "mail01").run();
        assert_not_run(&run);
        assert!(env.sim.inserts().is_empty());
        assert_told(&run, needles);
    }

    #[test]
    fn codex_checkpoint_is_tagged_with_the_call_id_and_listed_before_the_call_runs() {
        assert_eq!(confirmed(AgentKind::Codex, true), CALL_ID);
    }

    #[test]
    fn codex_call_on_an_unknown_vm_is_refused_because_codex_cannot_ask() {
        let needles = [
            "is unknown to Zerto",
            "Codex CLI cannot ask a human before a call",
        ];
        unknown(AgentKind::Codex, &needles);
    }

    #[test]
    fn gemini_checkpoint_is_listed_before_the_call_runs_and_the_user_sees_it() {
        // Gemini sends no call id: the change id is rewind's own.
        assert!(confirmed(AgentKind::Gemini, false).starts_with("rewind-"));
    }

    #[test]
    fn gemini_call_on_an_unknown_vm_is_refused_and_the_model_reads_why() {
        let needles = [
            "is unknown to Zerto",
            "Gemini CLI cannot ask a human before a call",
        ];
        unknown(AgentKind::Gemini, &needles);
    }

    #[test]
    fn copilot_checkpoint_is_listed_before_the_call_runs_and_the_model_gets_the_recover_command() {
        assert!(confirmed(AgentKind::Copilot, true).starts_with("rewind-"));
    }

    #[test]
    fn copilot_call_on_an_unknown_vm_is_not_run_without_a_human() {
        let needles = ["unable to ask user for confirmation", "is unknown to Zerto"];
        unknown(AgentKind::Copilot, &needles);
    }
}
