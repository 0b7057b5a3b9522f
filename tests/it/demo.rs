//! `rewind demo`, the README's "try it" command, runs to the end on its own.

use std::process::Command;

use crate::support::run;

#[test]
fn the_demo_runs_every_row_and_brings_the_file_back() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .args(["demo", "--time-scale", "100"]);
    let demo = run(cmd, b"");
    assert_eq!(demo.code, 0, "{demo:#?}");
    for expected in [
        "→ no decision: the host's own rules apply",
        "→ no decision + context for the model",
        "→ DENY",
        "→ ASK",
        "→ exit 2 (blocked)",
        "byte-identical: the file is back as it was before the agent touched it.",
        "no File Level Restore session is left mounted.",
    ] {
        assert!(
            demo.stdout.contains(expected),
            "missing {expected:?}:\n{}",
            demo.stdout
        );
    }
    assert_eq!(
        demo.stdout.matches("\n16. ").count(),
        1,
        "all sixteen rows ran"
    );
    assert!(
        std::fs::read_dir(home.path())
            .expect("home")
            .next()
            .is_none(),
        "the demo writes nothing into the user's home"
    );
}
