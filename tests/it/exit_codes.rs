//! The operator commands' exit codes (docs/decisions.md): a script tells a configuration that
//! cannot be used (5), a ZVM it cannot reach (6), a name Zerto does not have (7) and a refusal
//! (8) apart from any other failure (1); the hook, whatever goes wrong, still answers with 0.

use crate::support::{Setup, TestEnv, closed_port_url, hook_input};

const CONFIG: i32 = 5;
const UNREACHABLE: i32 = 6;
const NOT_FOUND: i32 = 7;
const DENIED: i32 = 8;

/// A mutating MCP call on a VM the simulator protects.
fn mutating_call() -> Vec<u8> {
    hook_input(
        "mcp__ssh__run_command",
        &serde_json::json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
        "toolu_exit",
    )
}

#[test]
fn a_configuration_that_cannot_be_used_exits_5_and_the_hook_denies() {
    let env = TestEnv::start();
    std::fs::write(&env.config, "[zvm\nurl = \"https://zvm\"\n").expect("config");
    let broken = env.run(&["vms"], b"");
    assert_eq!(broken.code, CONFIG, "{broken:#?}");
    assert!(broken.stderr.contains("config.toml"), "{broken:#?}");
    let hook = env.hook(&mutating_call());
    assert_eq!(hook.code, 0, "{hook:#?}");
    assert_eq!(hook.decision(), "deny", "{hook:#?}");

    let missing = env.path("nowhere.toml").display().to_string();
    let unreadable = env.run(&["--config", &missing, "checkpoints", "jp-ubuntu"], b"");
    assert_eq!(unreadable.code, CONFIG, "{unreadable:#?}");
    assert!(
        unreadable.stderr.contains("cannot read config file"),
        "{unreadable:#?}"
    );

    std::fs::write(&env.config, "[hook]\nbudget_secs = 5\n").expect("config");
    let no_zvm = env.run(&["find", "jp-ubuntu"], b"");
    assert_eq!(no_zvm.code, CONFIG, "{no_zvm:#?}");
    assert!(
        no_zvm.stderr.contains("has no [zvm] section"),
        "{no_zvm:#?}"
    );
}

#[test]
fn a_zvm_that_cannot_be_reached_or_trusted_exits_6() {
    let down = TestEnv::with(Setup {
        url: Some(closed_port_url()),
        ..Setup::default()
    });
    let run = down.run(&["vms"], b"");
    assert_eq!(run.code, UNREACHABLE, "{run:#?}");
    assert!(run.stderr.contains("ZVM unreachable"), "{run:#?}");
    let hook = down.hook(&mutating_call());
    assert_eq!((hook.code, hook.decision()), (0, String::from("deny")));

    let untrusted = TestEnv::with(Setup {
        trust_ca: false,
        ..Setup::default()
    });
    let run = untrusted.run(&["find", "jp-ubuntu"], b"");
    assert_eq!(run.code, UNREACHABLE, "{run:#?}");
    assert!(run.stderr.contains("is not trusted"), "{run:#?}");
}

#[test]
fn a_vm_zerto_does_not_protect_exits_7_and_an_ambiguous_name_1() {
    let env = TestEnv::start();
    for args in [
        &["find", "no-such-vm"][..],
        &["checkpoints", "no-such-vm"],
        &["guard", "--vm", "no-such-vm"],
    ] {
        let run = env.run(args, b"");
        assert_eq!(run.code, NOT_FOUND, "{args:?}: {run:#?}");
        assert!(run.stderr.contains("is unknown to Zerto"), "{run:#?}");
    }
    let json = env.run(&["find", "no-such-vm", "--json"], b"");
    assert_eq!(json.code, NOT_FOUND, "{json:#?}");
    assert_eq!(json.json()["found"], "unknown", "{json:#?}");
    // Two VMs are named `web`: a name that is not one VM, not a missing one.
    let ambiguous = env.run(&["find", "web"], b"");
    assert_eq!(ambiguous.code, 1, "{ambiguous:#?}");
    assert!(ambiguous.stderr.contains("matches 2 VMs"), "{ambiguous:#?}");
}

#[test]
fn a_login_zerto_refuses_exits_8() {
    let env = TestEnv::with(Setup {
        password: Some(String::from("not the password")),
        ..Setup::default()
    });
    let run = env.run(&["vms"], b"");
    assert_eq!(run.code, DENIED, "{run:#?}");
    assert!(run.stderr.contains("authentication refused"), "{run:#?}");
    let hook = env.hook(&mutating_call());
    assert_eq!((hook.code, hook.decision()), (0, String::from("deny")));
}

#[test]
fn the_top_level_help_gives_the_exit_codes() {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
    command.arg("--help");
    let help = crate::support::run(command, b"");
    help.success();
    for code in [
        "2 usage error",
        "5 configuration unusable",
        "6 ZVM unreachable or not trusted",
        "7 VM, checkpoint or path not found",
        "8 refused by Zerto or the broker",
        "the hook exits only 0 or 2",
    ] {
        assert!(help.stdout.contains(code), "{code}: {help:#?}");
    }
}
