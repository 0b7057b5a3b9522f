//! Zerto's own text with terminal controls in it (VM and VPG names, a task's reason, a guest
//! file's name) reaches every command's output and the hook's decision with each control
//! replaced: nothing the ZVM says can recolour, hide, rewrite or retitle what a person reads.

use rewind::sim::Scenario;
use serde_json::json;

use crate::support::{Run, Setup, TestEnv, hook_input};

/// A lab whose names carry escape sequences, a carriage return, NUL, BEL, DEL, a C1 CSI and
/// a right-to-left override. VMs are named by IP on the command line.
const SCENARIO: &str = r#"
auth = "keycloak"
username = "admin"
password = "zerto-sim"
client_id = "zerto-client"
site_name = "lab-site"
mount_secs = 2
unmount_secs = 1

[[vm]]
name = "evil\u001b[31m-vm\r\u0000"
id = "d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-901"
ips = ["10.0.0.98"]
guest_os = "linux"

[vm.files]
"/etc/a\u001b[2Jb.conf" = "mode = safe\n"

[[vm]]
name = "full\u009b2J-vm\u0007"
id = "d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-902"
ips = ["10.0.0.97"]
guest_os = "linux"

[[vpg]]
name = "vpg\u001b[8m-hidden\r\u202egpv"
profile = "vsphere"
vms = ["d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-901"]

[[vpg]]
name = "vpg\u001b]0;pwned\u0007-full\u007f"
profile = "vsphere"
vms = ["d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-902"]

[[fault]]
kind = "insert-fails"
vpg = "vpg\u001b]0;pwned\u0007-full\u007f"
state = "failed"
reason = "journal \u001b[41mfull\r\u0000 ok"
"#;

/// The characters that may not reach a terminal: controls other than newline and tab, and
/// the bidirectional overrides.
fn unsafe_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t') || ('\u{202a}'..='\u{202e}').contains(&c)
        })
        .collect()
}

/// Both streams are free of controls, JSON escapes of them included, and `needles` (the
/// sanitised forms of Zerto's text) show that the text did reach the output.
#[track_caller]
fn assert_clean(run: &Run, needles: &[&str]) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            unsafe_chars(text).is_empty(),
            "{stream} has controls:\n{run:#?}"
        );
        for escape in ["\\u001b", "\\u0000", "\\u0007", "\\r", "\\u009b", "\\u007f"] {
            assert!(!text.contains(escape), "{stream} has {escape}:\n{run:#?}");
        }
    }
    let both = format!("{}{}", run.stdout, run.stderr);
    for needle in needles {
        assert!(both.contains(needle), "missing {needle:?}:\n{run:#?}");
    }
}

fn env() -> TestEnv {
    TestEnv::with(Setup {
        scenario: Some(Scenario::from_toml(SCENARIO, "hostile.toml").expect("scenario")),
        ..Setup::default()
    })
}

const VM: &str = "evil\u{fffd}[31m-vm\u{fffd}\u{fffd}";
const VPG: &str = "vpg\u{fffd}[8m-hidden\u{fffd}\u{fffd}gpv";
const FULL_VPG: &str = "vpg\u{fffd}]0;pwned\u{fffd}-full\u{fffd}";
const REASON: &str = "journal \u{fffd}[41mfull\u{fffd}\u{fffd} ok";

#[test]
fn find_checkpoints_and_guard_print_zerto_names_without_controls() {
    let env = env();
    let find = env.run(&["find", "10.0.0.98"], b"");
    find.success();
    assert_clean(&find, &[VM, VPG]);
    let json = env.run(&["find", "10.0.0.98", "--json"], b"");
    json.success();
    assert_clean(&json, &[]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(value["vm"]["name"], VM, "{json:#?}");

    let guard = env.run(&["guard", "--vm", "10.0.0.98", "--change", "c-1"], b"");
    guard.success();
    assert_clean(&guard, &[VM, VPG]);

    let checkpoints = env.run(&["checkpoints", "10.0.0.98", "--change", "c-1"], b"");
    checkpoints.success();
    assert_clean(&checkpoints, &[VPG, "change=c-1"]);

    let refused = env.run(&["guard", "--vm", "10.0.0.97"], b"");
    refused.failure();
    assert_clean(&refused, &[FULL_VPG, REASON, "full\u{fffd}2J-vm\u{fffd}"]);
}

#[test]
fn the_hooks_decisions_carry_zerto_text_without_controls() {
    let env = env();
    let context = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "10.0.0.98", "command": "touch /etc/x"}),
        "toolu_h1",
    ));
    context.success();
    assert_clean(&context, &[]);
    assert!(context.reason().contains(VPG), "{context:#?}");

    let deny = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "10.0.0.97", "command": "touch /etc/x"}),
        "toolu_h2",
    ));
    deny.success();
    assert_eq!(deny.decision(), "deny", "{deny:#?}");
    assert_clean(&deny, &[]);
    let reason = deny.reason();
    assert!(
        reason.contains(FULL_VPG) && reason.contains(REASON),
        "{deny:#?}"
    );

    // The audit trail keeps Zerto's words as they were; `log --json` prints them safely.
    let log = env.run(&["log", "--json"], b"");
    log.success();
    assert_clean(&log, &[]);
}

#[test]
fn recover_prints_the_plan_and_the_browsed_file_without_controls() {
    let env = env();
    env.run(&["guard", "--vm", "10.0.0.98", "--change", "c-r"], b"")
        .success();
    let out = env.path("out");
    let run = env.run(
        &[
            "recover",
            "--vm",
            "10.0.0.98",
            "--change",
            "c-r",
            "--path",
            "/etc/a\u{1b}[2Jb.conf",
            "--out",
            out.to_str().expect("utf-8"),
            "--yes",
        ],
        b"",
    );
    run.success();
    assert_clean(&run, &[VM, VPG, "/etc/a\u{fffd}[2Jb.conf", "unmounted:"]);
}
