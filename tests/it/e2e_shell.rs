//! The real Claude Code runs `ssh` in its `Bash` tool, guarded by the real `rewind hook` facing
//! the ZVM simulator. A fake `ssh` early on `PATH` records each run with its time (nothing
//! leaves the machine): a change on a protected VM runs only after its tagged checkpoint is
//! listed, and the model is told how to recover; a change on a VM Zerto does not know never
//! runs; a read-only remote command runs with no checkpoint.

use rewind::commands::install::HOST_TIMEOUT_MARGIN_SECS;
use rewind::host::claude_code::settings::MATCHER;
use serde_json::json;

use crate::claude::{ClaudeCode, Hook, PermissionMode, text, tool_use};
use crate::support::{FakeSsh, Setup, TestEnv, epoch_ms, hook_bin};

const CHANGE: &str = "toolu_shell_change";
const UNPROTECTED: &str = "toolu_shell_unprotected";
const READ: &str = "toolu_shell_read";
const BUDGET_SECS: u64 = 5;

/// The scripted session: a change on jp-ubuntu, a reboot of mail01 (unknown to Zerto), a read
/// on jp-ubuntu; `rewind hook` installed as `rewind install` writes it; a fake `ssh` first on
/// `PATH`. Returns the run and the fake ssh.
fn run_session(env: &TestEnv) -> (crate::claude::ClaudeRun, FakeSsh) {
    let mut cc = ClaudeCode::new()
        .prompt("Restart the app on jp-ubuntu, reboot mail01, then show jp-ubuntu's hostname.")
        .script([
            tool_use(
                CHANGE,
                "Bash",
                json!({"command": "ssh jp-ubuntu 'sudo systemctl restart app'", "description": "Restart the app"}),
            ),
            tool_use(
                UNPROTECTED,
                "Bash",
                json!({"command": "ssh mail01 'sudo reboot'", "description": "Reboot mail01"}),
            ),
            tool_use(
                READ,
                "Bash",
                json!({"command": "ssh jp-ubuntu cat /etc/hostname", "description": "Show the hostname"}),
            ),
            text("Done."),
        ])
        .permission_mode(PermissionMode::Default)
        .allowed_tools(["Bash"]);
    let ssh = FakeSsh::install(cc.root());
    cc = cc.env("PATH", ssh.path_var());
    for (key, value) in env.hook_env() {
        cc = cc.env(&key, value);
    }
    let run = cc
        .hook(
            Hook::exec(hook_bin())
                .args(["hook"])
                .matcher(MATCHER)
                .timeout_secs(BUDGET_SECS + HOST_TIMEOUT_MARGIN_SECS),
        )
        .run();

    (run, ssh)
}

#[test]
fn ssh_in_the_bash_tool_runs_after_its_checkpoint_is_listed_and_only_then() {
    let env = TestEnv::with(Setup {
        hook: format!("budget_secs = {BUDGET_SECS}"),
        ..Setup::default()
    });
    let (run, ssh) = run_session(&env);

    // What really ran: the change and the read, never the reboot of the unprotected VM.
    let ran = ssh.runs();
    let commands: Vec<&str> = ran.iter().map(|(_, a)| a.as_str()).collect();
    assert_eq!(
        commands,
        [
            "jp-ubuntu sudo systemctl restart app",
            "jp-ubuntu cat /etc/hostname"
        ],
        "{}",
        run.describe()
    );

    // One checkpoint, for the change, listed before the fake ssh ran (both in whole
    // milliseconds, rounded down).
    let inserts = env.sim.inserts();
    assert_eq!(
        inserts.len(),
        1,
        "only the change is checkpointed: {inserts:#?}"
    );
    let insert = &inserts[0];
    assert_eq!(insert.vpg_name, "jp-ubuntu-vpg");
    assert!(
        insert.tag.starts_with(&format!("ai:{CHANGE} | ")),
        "{insert:#?}"
    );
    let listed_ms = epoch_ms(insert.listed_at.expect("the tag was listed"));
    assert!(
        listed_ms <= ran[0].0,
        "Zerto listed the tag at {listed_ms} ms, the fake ssh ran at {} ms",
        ran[0].0
    );

    // The model was told which checkpoint to recover from, and how.
    let seen = run.model_saw_after(CHANGE);
    for needle in [
        "PreToolUse:Bash hook additional context: rewind:",
        "jp-ubuntu",
        &format!("rewind recover --vm jp-ubuntu --change {CHANGE} --path <file>"),
    ] {
        assert!(
            seen.contains(needle),
            "the model did not receive {needle:?}; it saw:\n{seen}\n{}",
            run.describe()
        );
    }

    // The unprotected VM: not run, and the model read why.
    assert_eq!(run.denied_ids(), [UNPROTECTED], "{}", run.describe());
    let refused = run
        .tool_result(UNPROTECTED)
        .expect("a result for the refused call");
    assert!(refused.is_error, "{refused:?}");
    assert!(
        refused.text.contains("mail01") && refused.text.contains("unknown to Zerto"),
        "{refused:?}"
    );

    // The read-only command ran with no decision and no context.
    let read = run.tool_result(READ).expect("a result for the read");
    assert!(
        !read.is_error && read.text.contains("fake-ssh-ran"),
        "{read:?}"
    );
    assert!(
        !run.model_saw_after(READ)
            .contains("hook additional context"),
        "{}",
        run.describe()
    );
    assert_eq!(run.result_text(), "Done.");
}
