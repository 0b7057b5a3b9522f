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
        "jp-ubuntu's content marker after the preview: 1",
        "committed:   VM jp-ubuntu is at checkpoint",
        "the VM is back at the point the hook pinned before the change.",
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
    the_story_checkpoint_is_listed_at_its_tag_time(&demo.stdout);
}

/// The story's checkpoint as `recover` prints it — `checkpoint:  1420 at <listed time> (ai:…
/// | <tag time>)` — is listed within seconds of the time in its tag: the simulator runs its
/// cadences faster, but reports the real clock the hook stamped the tag with.
fn the_story_checkpoint_is_listed_at_its_tag_time(stdout: &str) {
    let line = stdout
        .lines()
        .find(|line| line.starts_with("checkpoint:") && line.contains("ai:toolu_demo_story"))
        .unwrap_or_else(|| panic!("recover names the story's checkpoint:\n{stdout}"));
    let listed = line
        .split(" at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("a listed time in {line:?}"));
    let tagged = line
        .trim_end_matches(')')
        .rsplit(" | ")
        .next()
        .unwrap_or_else(|| panic!("a tag time in {line:?}"));
    let parse =
        |text: &str| rewind::time::parse_utc(text).unwrap_or_else(|e| panic!("{e:#} in {line:?}"));
    let (listed, tagged) = (parse(listed), parse(tagged));
    let gap = listed
        .duration_since(tagged)
        .or_else(|_| tagged.duration_since(listed))
        .expect("a gap");
    assert!(
        gap.as_secs_f64() < 5.0,
        "the checkpoint is listed {gap:?} away from its tag's time: {line}"
    );
}

/// The README's first command is `cargo run --release -- demo`: with two binaries in the
/// package, cargo refuses a bare `cargo run` ("could not determine which binary to run")
/// unless the manifest names the default one, and that one must be the CLI with `demo`.
#[test]
fn the_readme_try_it_command_picks_the_rewind_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    assert!(
        readme.contains("\ncargo run --release -- demo\n"),
        "the README's try-it command changed; keep this test in step"
    );
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("Cargo.toml parses");
    let bins = manifest
        .get("bin")
        .and_then(toml::Value::as_array)
        .map_or(0, Vec::len);
    if bins > 1 {
        let default_run = manifest
            .get("package")
            .and_then(|p| p.get("default-run"))
            .and_then(toml::Value::as_str);
        assert_eq!(
            default_run,
            Some("rewind"),
            "{bins} binaries: `cargo run -- demo` needs package.default-run = \"rewind\""
        );
    }
}
