//! The protected-VM net on a configured machine: `rewind vms` lists the simulator's VMs over
//! HTTPS, which writes the inventory the hook reads; then a program no grammar reads that
//! names one of those VMs is asked about through the real `rewind hook`, and one a user's
//! shell catalog says acts on its argument is checkpointed.

use std::fmt::Write as _;

use crate::support::{TestEnv, hook_input};

/// Commands a new user tried after `rewind vms`, with no `[vm_aliases]`: each names a VM the
/// simulator protects (jp-ubuntu, its guest IP 10.0.0.11, win2019-1) through a program no
/// grammar reads, or through one that only prints or looks names up.
const COMMANDS: &[&str] = &[
    "frobnicate jp-ubuntu --restart",
    "mytool --host=jp-ubuntu reboot",
    "mytool --host 10.0.0.11 reboot",
    "deploy-it admin@jp-ubuntu.corp.example:/srv/app",
    "TARGET=win2019-1 ./roll-out.sh",
    "grep -r jp-ubuntu docs/",
    "ping -c 1 jp-ubuntu",
    "frobnicate web-07 --restart",
];

fn decide(env: &TestEnv, command: &str, id: &str) -> (String, String) {
    decide_in(env, command, id, "/tmp")
}

/// The decision for `command` run in the directory `cwd`.
fn decide_in(env: &TestEnv, command: &str, id: &str, cwd: &str) -> (String, String) {
    let mut call: serde_json::Value = serde_json::from_slice(&hook_input(
        "Bash",
        &serde_json::json!({ "command": command }),
        id,
    ))
    .expect("json");
    call["cwd"] = serde_json::json!(cwd);
    let run = env.hook(call.to_string().as_bytes());
    assert_eq!(run.code, 0, "{command}: {}", run.stderr);
    // No output at all is no decision; a decision of none with a reason is the context
    // that names a confirmed checkpoint.
    let reason = run.reason();
    let decision = match run.decision() {
        none if none == "none" && reason.is_empty() => String::from("no decision"),
        none if none == "none" => String::from("checkpoint confirmed"),
        decision => decision,
    };
    (decision, reason)
}

fn table(env: &TestEnv) -> String {
    let mut out = String::new();
    for (i, command) in COMMANDS.iter().enumerate() {
        let (decision, reason) = decide(env, command, &format!("toolu_net_{i}"));
        writeln!(out, "{command}\n  → {decision}: {reason}").expect("write");
    }
    out
}

#[test]
fn after_rewind_vms_a_program_no_grammar_reads_that_names_a_protected_vm_asks() {
    let env = TestEnv::start();
    // Before any listing there is no inventory: the net has nothing to catch with.
    let before = table(&env);
    assert!(!before.contains("→ ask"), "{before}");

    let vms = env.run(&["vms"], b"");
    vms.success();
    let stored = env.path("cache/rewind/protected-vms");
    let mode = std::fs::metadata(&stored)
        .expect("`rewind vms` writes the inventory")
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );

    let after = table(&env);
    insta::assert_snapshot!(after);
    assert_eq!(after.matches("→ ask").count(), 5, "{after}");
}

#[test]
fn a_program_the_users_catalog_says_acts_on_its_argument_is_checkpointed() {
    let env = TestEnv::start();
    env.run(&["vms"], b"").success();
    let catalog = env.path("shell-catalog.toml");
    std::fs::write(
        &catalog,
        "[[program]]\nnames = [\"frobnicate\"]\ngrammar = \"fleet\"\nhost_operand = \"all\"\nread_only = [\"--status\"]\n",
    )
    .expect("write catalog");
    let mut config = std::fs::read_to_string(&env.config).expect("config");
    write!(
        config,
        "\n[shell]\ncatalogs = [{:?}]\n",
        catalog.display().to_string()
    )
    .expect("write");
    std::fs::write(&env.config, config).expect("config");

    let (decision, reason) = decide(&env, "frobnicate jp-ubuntu --restart", "toolu_net_cp");
    assert_eq!(decision, "checkpoint confirmed", "{reason}");
    assert!(
        reason.contains("jp-ubuntu") && reason.contains("rewind recover"),
        "{reason}"
    );
    let (decision, reason) = decide(&env, "frobnicate jp-ubuntu --status", "toolu_net_ro");
    assert_eq!((decision.as_str(), reason.as_str()), ("no decision", ""));
}

#[test]
fn doctor_says_when_the_net_is_missing_and_when_a_listing_refreshed_it() {
    let env = TestEnv::start();
    // Doctor's own ZVM checks list the VMs, so the net is written by the time it reports.
    let run = env.run(&["doctor"], b"");
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("ok") && l.contains("protected-vm net: 9 references")),
        "{}",
        run.stdout
    );
    let bare = TestEnv::start();
    std::fs::write(&bare.config, "").expect("empty config");
    let run = bare.run(&["doctor"], b"");
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("warn") && l.contains("run `rewind vms`")),
        "{}",
        run.stdout
    );
}

#[test]
fn vmrun_and_kamal_checkpoint_the_vms_their_file_and_configuration_name() {
    let env = TestEnv::start();
    env.run(&["vms"], b"").success();
    let (decision, reason) = decide(
        &env,
        "vmrun -T esx stop /vmfs/volumes/ds1/jp-ubuntu/jp-ubuntu.vmx",
        "toolu_vmrun",
    );
    assert_eq!(decision, "checkpoint confirmed", "{reason}");
    assert!(reason.contains("on VM jp-ubuntu"), "{reason}");

    // Kamal's servers come from config/deploy.yml in the command's own directory.
    let app = env.path("app");
    std::fs::create_dir_all(app.join("config")).expect("mkdir");
    let cwd = app.display().to_string();
    let (decision, reason) = decide_in(&env, "kamal deploy", "toolu_kamal_none", &cwd);
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains("config/deploy.yml could not be read"),
        "{reason}"
    );
    std::fs::write(
        app.join("config/deploy.yml"),
        "service: app\nimage: me/app\nservers:\n  web:\n    - jp-ubuntu\n  job:\n    hosts:\n      - 10.0.0.21\n",
    )
    .expect("write deploy.yml");
    let (decision, reason) = decide_in(&env, "kamal deploy", "toolu_kamal", &cwd);
    assert_eq!(decision, "checkpoint confirmed", "{reason}");
    assert!(
        reason.contains("jp-ubuntu") && reason.contains("win2019-1"),
        "{reason}"
    );
    let (decision, reason) = decide_in(&env, "kamal app logs -f", "toolu_kamal_logs", &cwd);
    assert_eq!((decision.as_str(), reason.as_str()), ("no decision", ""));
}

/// Issue 33 through the real hook on a configured machine: an address in another spelling
/// reaches the VM Zerto lists by its guest IP; a command that first changes where a name goes
/// asks for the change it then makes by that name; work handed to cron or tmux to run later
/// is checkpointed now; reading any of it decides nothing.
#[test]
fn one_command_one_world_and_what_runs_later_through_the_hook() {
    let env = TestEnv::start();
    env.run(&["vms"], b"").success();
    let cases: &[(&str, &str, &str)] = &[
        // 10.0.0.31 as one number, 10.0.0.11 in hex: the guest IPs compared as addresses.
        (
            "mysql -h 167772191 -e 'DROP DATABASE app'",
            "checkpoint confirmed",
            "db01",
        ),
        (
            "socat - TCP:0xa00000b:6379",
            "checkpoint confirmed",
            "jp-ubuntu",
        ),
        (
            "echo '10.0.0.31 jp-ubuntu' | sudo tee -a /etc/hosts && ssh jp-ubuntu sudo reboot",
            "ask",
            "/etc/hosts",
        ),
        (
            "printf 'Host jp-ubuntu\\n  HostName 10.0.0.31\\n' > /tmp/c && ssh -F /tmp/c jp-ubuntu sudo reboot",
            "ask",
            "/tmp/c",
        ),
        (
            "cat >> ~/.ssh/config <<EOF\nHost jp-ubuntu\n  HostName 10.0.0.31\nEOF\nssh jp-ubuntu sudo reboot",
            "ask",
            ".ssh/config",
        ),
        (
            "ssh -o \"HostName=${TARGET:-10.0.0.31}\" jp-ubuntu sudo reboot",
            "ask",
            "HostName",
        ),
        (
            "GIT_SSH_COMMAND='ssh -o HostName=10.0.0.31' git push build:repo main",
            "ask",
            "git",
        ),
        (
            "echo '@reboot ssh db01 sudo reboot' | crontab -",
            "checkpoint confirmed",
            "db01",
        ),
        (
            "tmux set-hook -g client-attached 'run-shell \"ssh db01 sudo reboot\"'",
            "checkpoint confirmed",
            "db01",
        ),
        ("crontab -l", "no decision", ""),
        ("cat /etc/hosts", "no decision", ""),
        ("ssh jp-ubuntu uptime", "no decision", ""),
        ("nc -z db01 22", "no decision", ""),
    ];
    for (i, (command, want, named)) in cases.iter().enumerate() {
        let (decision, reason) = decide(&env, command, &format!("toolu_world_{i}"));
        assert_eq!(decision, *want, "{command}: {reason}");
        assert!(reason.contains(named), "{command}: {reason}");
    }
}

#[test]
fn code_handed_to_an_interpreter_checkpoints_the_vm_it_reaches_after_rewind_vms() {
    let env = TestEnv::start();
    // Before any listing the net knows no machine: a socket to an address is not caught.
    let socket = "python3 -c 'import socket; s=socket.create_connection((\"10.0.0.11\",6379)); s.sendall(b\"FLUSHALL\\r\\n\")'";
    let (decision, reason) = decide(&env, socket, "toolu_code_before");
    assert_eq!((decision.as_str(), reason.as_str()), ("no decision", ""));
    env.run(&["vms"], b"").success();

    // A raw socket to jp-ubuntu's guest address, a database driver naming db01.
    let (decision, reason) = decide(&env, socket, "toolu_code_socket");
    assert_eq!(decision, "checkpoint confirmed", "{reason}");
    assert!(reason.contains("jp-ubuntu"), "{reason}");
    let (decision, reason) = decide(
        &env,
        "python3 -c 'import pymysql; pymysql.connect(host=\"db01\").cursor().execute(\"DROP DATABASE app\")'",
        "toolu_code_db",
    );
    assert_eq!(decision, "checkpoint confirmed", "{reason}");
    assert!(reason.contains("db01"), "{reason}");
    // A command the code starts, from a versioned interpreter.
    let (decision, reason) = decide(
        &env,
        "lua5.4 -e 'os.execute(\"ssh jp-ubuntu sudo reboot\")'",
        "toolu_code_lua",
    );
    assert_eq!(decision, "checkpoint confirmed", "{reason}");
    assert!(reason.contains("jp-ubuntu"), "{reason}");
    // A connection whose machine the code takes from its arguments asks.
    let (decision, reason) = decide(
        &env,
        "python3 -c 'import socket,sys; socket.create_connection((sys.argv[1],6379))' db01",
        "toolu_code_argv",
    );
    assert_eq!(decision, "ask", "{reason}");
    // Read-only work stays without a decision.
    for (i, command) in [
        "python3 -c 'import os; os.system(\"ssh jp-ubuntu uptime\")'",
        "python3 -c 'print(1)'",
        "node -e 'console.log(process.version)'",
    ]
    .iter()
    .enumerate()
    {
        let (decision, reason) = decide(&env, command, &format!("toolu_code_ro_{i}"));
        assert_eq!(
            (decision.as_str(), reason.as_str()),
            ("no decision", ""),
            "{command}"
        );
    }
}
