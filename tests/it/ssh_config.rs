//! The agent writes its own `~/.ssh/config`. The hook reads it, as ssh would, and never runs
//! it: a `Match exec` the hook would have run (and that could answer differently inside the
//! hook than for the real connection) asks, and a `Match user` block sends the checkpoint
//! to the machine ssh really reaches for the user the command names.

use serde_json::json;

use crate::support::{TestEnv, hook_input};

fn write_config(env: &TestEnv, text: &str) {
    std::fs::create_dir_all(env.path("home/.ssh")).expect("create ~/.ssh");
    std::fs::write(env.path("home/.ssh/config"), text).expect("write ~/.ssh/config");
}

/// The VPGs the simulator was asked to checkpoint, sorted.
fn checkpointed(env: &TestEnv) -> Vec<String> {
    let mut vpgs: Vec<String> = env.sim.inserts().into_iter().map(|i| i.vpg_name).collect();
    vpgs.sort_unstable();
    vpgs.dedup();
    vpgs
}

#[test]
fn the_hook_never_runs_the_agents_ssh_configuration() {
    let env = TestEnv::start();
    let marker = env.path("match-exec-ran");
    write_config(
        &env,
        &format!(
            "Match exec \"touch {}\"\n  HostName 10.0.0.31\n",
            marker.display()
        ),
    );
    let run = env.hook(&hook_input(
        "Bash",
        &json!({"command": "ssh jp-ubuntu sudo reboot"}),
        "toolu_ssh_exec",
    ));
    assert_eq!(run.decision(), "ask", "{run:#?}");
    assert!(run.reason().contains("Match exec"), "{run:#?}");
    assert!(
        !marker.exists(),
        "the hook ran the configuration's Match exec"
    );
    assert!(checkpointed(&env).is_empty());
}

#[test]
fn a_match_user_block_sends_the_checkpoint_where_ssh_goes() {
    let env = TestEnv::start();
    // 10.0.0.31 is db01's guest address in the simulator's lab.
    write_config(&env, "Match user deploy\n  HostName 10.0.0.31\n");
    for (i, command) in [
        "ssh deploy@jp-ubuntu sudo systemctl restart app",
        "ssh -l deploy jp-ubuntu sudo systemctl restart app",
        "scp ./app.conf deploy@jp-ubuntu:/etc/app.conf",
    ]
    .iter()
    .enumerate()
    {
        let before = env.sim.inserts().len();
        let run = env.hook(&hook_input(
            "Bash",
            &json!({ "command": command }),
            &format!("toolu_match_user_{i}"),
        ));
        assert_eq!(run.decision(), "none", "{command}: {run:#?}");
        let vpgs: Vec<String> = env.sim.inserts()[before..]
            .iter()
            .map(|i| i.vpg_name.clone())
            .collect();
        assert!(
            vpgs.iter().all(|v| v.starts_with("db01-")) && !vpgs.is_empty(),
            "{command}: {vpgs:?}"
        );
    }
    // Another user is not matched: ssh reaches jp-ubuntu itself.
    let before = env.sim.inserts().len();
    let run = env.hook(&hook_input(
        "Bash",
        &json!({"command": "ssh admin@jp-ubuntu sudo systemctl restart app"}),
        "toolu_match_other",
    ));
    assert_eq!(run.decision(), "none", "{run:#?}");
    let vpgs: Vec<String> = env.sim.inserts()[before..]
        .iter()
        .map(|i| i.vpg_name.clone())
        .collect();
    assert_eq!(vpgs, ["jp-ubuntu-vpg"]);
}
