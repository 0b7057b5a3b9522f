//! The real Codex CLI, Gemini CLI and Copilot CLI run `ssh` in their own shell tool, guarded by
//! the real `rewind hook --host <host>` (installed from the shipped snippet in `hooks/`) facing
//! the ZVM simulator. A fake `ssh` first on `PATH` records each run with its time, so nothing
//! leaves the machine and the test sees what really ran.
//!
//! One host run per host plays the whole session: a change on a protected VM (runs only after
//! its tagged checkpoint is listed, and the checkpoint and the recover command are shown where
//! that host shows a hook's text), a change on a VM whose checkpoint Zerto fails, a change on a
//! VM Zerto does not know (neither runs; the model reads why), and a read-only command (runs,
//! no checkpoint).

use rewind::sim::{FailState, Fault, InsertRecord};
use serde_json::{Value, json};

use crate::agents::{Agent, AgentKind, AgentRun, call, say};
use crate::support::{FakeSsh, Setup, TestEnv, epoch_ms};

const CHANGE: &str = "call_sh_change";
const FAILING: &str = "call_sh_failing";
const UNKNOWN: &str = "call_sh_unknown";
const READ: &str = "call_sh_read";
const BUDGET_SECS: u64 = 5;
const ZERTO_REASON: &str = "The VPG is not meeting its SLA: journal history is being rebuilt.";

/// How one host offers its shell tool to the model, and where it shows a hook's text.
struct ShellHost {
    kind: AgentKind,
    /// The model's call of the shell tool for `command`, in the host's own tool and argument
    /// names.
    call: fn(&str, &str) -> Value,
    /// The host's words for a hook's refusal, before the hook's reason.
    refused_with: &'static str,
    /// What a host that cannot ask adds to an ask it turns into a refusal.
    cannot_ask: &'static str,
    /// Whether the checkpoint text reaches the model (else only the user, on stderr).
    context_to_model: bool,
}

const CODEX: ShellHost = ShellHost {
    kind: AgentKind::Codex,
    // Codex 0.171 offers its shell as `exec_command {cmd}`; the hook sees `Bash {command}`.
    call: |id, command| call(id, "exec_command", json!({"cmd": command})),
    refused_with: "blocked by PreToolUse hook",
    cannot_ask: "Codex CLI cannot ask a human before a call",
    context_to_model: true,
};

const GEMINI: ShellHost = ShellHost {
    kind: AgentKind::Gemini,
    call: |id, command| {
        call(
            id,
            "run_shell_command",
            json!({"command": command, "description": "as asked"}),
        )
    },
    refused_with: "Tool execution blocked",
    cannot_ask: "Gemini CLI cannot ask a human before a call",
    context_to_model: false,
};

const COPILOT: ShellHost = ShellHost {
    kind: AgentKind::Copilot,
    call: |id, command| {
        call(
            id,
            "bash",
            json!({"command": command, "description": "as asked"}),
        )
    },
    refused_with: "Denied by preToolUse hook",
    // Copilot CLI can ask; under `-p` nobody answers, and it refuses with the reason.
    cannot_ask: "unable to ask user for confirmation",
    context_to_model: true,
};

/// The session on `host`: its snippet installed, the fake ssh first on `PATH` (also for a
/// login shell, which resets `PATH` from the profile files), win2019-1's VPG failing every
/// checkpoint.
fn run_session(host: &ShellHost) -> (TestEnv, AgentRun, FakeSsh) {
    let env = TestEnv::with(Setup {
        hook: format!("budget_secs = {BUDGET_SECS}"),
        faults: vec![Fault::InsertFails {
            vpg: "win2019-aws".into(),
            state: FailState::Failed,
            reason: ZERTO_REASON.into(),
        }],
        ..Setup::default()
    });
    let mut agent = Agent::new(host.kind)
        .prompt(
            "Restart nginx on jp-ubuntu and win2019-1, reboot mail01, then show jp-ubuntu's uptime.",
        )
        .script([
            (host.call)(CHANGE, "ssh jp-ubuntu 'sudo systemctl restart nginx'"),
            (host.call)(FAILING, "ssh win2019-1 'sudo systemctl restart nginx'"),
            (host.call)(UNKNOWN, "ssh mail01 'sudo reboot'"),
            (host.call)(READ, "ssh jp-ubuntu uptime"),
            say("Done."),
        ])
        .hooks_file(crate::e2e_agents::shipped_snippet(host.kind))
        .full_shell_access();
    let ssh = FakeSsh::install(agent.root());
    agent = agent.env("PATH", ssh.path_var());
    // Codex runs its shell as `bash -lc`: the login profile must keep the fake first too.
    let profile = format!("export PATH={}\n", ssh.path_var());
    for file in ["home/.bash_profile", "home/.profile"] {
        std::fs::write(agent.root().join(file), &profile).expect("write a login profile");
    }
    for (key, value) in env.hook_env() {
        agent = agent.env(&key, value);
    }
    let run = agent.run();
    (env, run, ssh)
}

/// The change id in a checkpoint tag (`… | change=<id> | …`).
fn change_of(insert: &InsertRecord) -> &str {
    insert
        .tag
        .split(" | ")
        .find_map(|part| part.strip_prefix("change="))
        .unwrap_or_else(|| panic!("no change id in {insert:#?}"))
}

#[track_caller]
fn assert_contains(haystack: &str, needles: &[&str], what: &str, run: &AgentRun) {
    for needle in needles {
        assert!(
            haystack.contains(needle),
            "{what} lacks {needle:?}:\n{haystack}\n{}",
            run.describe()
        );
    }
}

fn guarded_session(host: &ShellHost) {
    let (env, run, ssh) = run_session(host);

    // What really ran: the change on jp-ubuntu and the read, nothing on win2019-1 or mail01.
    let ran = ssh.runs();
    let commands: Vec<&str> = ran.iter().map(|(_, args)| args.as_str()).collect();
    assert_eq!(
        commands,
        ["jp-ubuntu sudo systemctl restart nginx", "jp-ubuntu uptime"],
        "{}",
        run.describe()
    );

    // jp-ubuntu: one checkpoint, Completed, listed before the fake ssh ran. win2019-1: its VPG
    // tried, and failed. mail01 and the read: nothing.
    let inserts = env.sim.inserts();
    let on = |vpg: &str| {
        inserts
            .iter()
            .filter(|i| i.vpg_name == vpg)
            .collect::<Vec<_>>()
    };
    let jp = on("jp-ubuntu-vpg");
    assert_eq!(jp.len(), 1, "{inserts:#?}\n{}", run.describe());
    let checkpoint = jp[0];
    assert_eq!(checkpoint.task_state, "Completed", "{checkpoint:#?}");
    let listed = epoch_ms(checkpoint.listed_at.expect("the tag was listed"));
    assert!(
        listed <= ran[0].0,
        "Zerto listed the tag at {listed} ms, the fake ssh ran at {} ms",
        ran[0].0
    );
    assert!(
        on("win2019-aws").iter().all(|i| i.task_state == "Failed") && !on("win2019-aws").is_empty(),
        "{inserts:#?}"
    );
    assert!(
        inserts
            .iter()
            .all(|i| ["jp-ubuntu-vpg", "win2019-aws"].contains(&i.vpg_name.as_str())),
        "{inserts:#?}"
    );

    // The change id in the tag is the one the model (or the user) is told to recover with: the
    // model's call id where the host sends one (Codex), else one rewind made up.
    let change = change_of(checkpoint);
    if host.kind == AgentKind::Codex {
        assert_eq!(change, CHANGE);
    } else {
        assert!(change.starts_with("rewind-"), "{checkpoint:#?}");
    }
    let recover = format!("rewind recover --vm jp-ubuntu --change {change} --path <file>");
    let confirmed = "rewind: Zerto checkpoint confirmed before this call on VM jp-ubuntu.";
    if host.context_to_model {
        let seen = run.model_saw_after(CHANGE);
        assert_contains(&seen, &[confirmed, &recover], "what the model saw", &run);
    } else {
        assert_contains(
            &run.stderr,
            &[confirmed, &recover],
            "what the user saw",
            &run,
        );
    }
    let changed = run.tool_result(CHANGE).unwrap_or_default();
    assert_contains(&changed, &["fake-ssh-ran"], "the change's result", &run);

    // The refused calls: the model reads the host's refusal and rewind's reason.
    let failing = run.tool_result(FAILING).unwrap_or_default();
    assert_contains(
        &failing,
        &[
            host.refused_with,
            "Zerto did not confirm a checkpoint of VM \"win2019-1\"",
            ZERTO_REASON,
        ],
        "the failed checkpoint's refusal",
        &run,
    );
    let unknown = run.tool_result(UNKNOWN).unwrap_or_default();
    assert_contains(
        &unknown,
        &["\"mail01\" is unknown to Zerto", host.cannot_ask],
        "the unknown VM's refusal",
        &run,
    );

    // The read ran, with no checkpoint text beside it.
    let read = run.tool_result(READ).unwrap_or_default();
    assert_contains(&read, &["fake-ssh-ran"], "the read's result", &run);
    assert!(
        !run.model_saw_after(READ).contains("rewind:"),
        "{}",
        run.describe()
    );
}

#[test]
fn codex_runs_ssh_in_its_shell_only_after_the_checkpoint_is_listed() {
    guarded_session(&CODEX);
}

#[test]
fn gemini_runs_ssh_in_its_shell_only_after_the_checkpoint_is_listed() {
    guarded_session(&GEMINI);
}

#[test]
fn copilot_runs_ssh_in_its_shell_only_after_the_checkpoint_is_listed() {
    guarded_session(&COPILOT);
}
