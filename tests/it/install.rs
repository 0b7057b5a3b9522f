//! `rewind install` / `rewind uninstall` on real files, and `rewind doctor` reading back what
//! is really installed: each way a settings file goes wrong must fail doctor, not pass it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Run, TestEnv};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("settings")).expect("JSON")
}

fn backups(path: &Path) -> Vec<PathBuf> {
    let prefix = format!(
        "{}.rewind-backup-",
        path.file_name().expect("name").to_string_lossy()
    );
    let mut found: Vec<PathBuf> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
}

#[test]
fn every_install_that_changes_the_file_keeps_its_own_backup_and_the_mode() {
    let env = TestEnv::start();
    let path = env.path("home/.claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
    let original = r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}"#;
    std::fs::write(&path, original).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }

    let first = env.run(&["install"], b"");
    first.success();
    for said in [
        "PreToolUse:",
        "PostToolUse:",
        "onFailure block",
        "the previous file is kept as",
    ] {
        assert!(first.stdout.contains(said), "{said}: {first:#?}");
    }
    assert!(
        first
            .stderr
            .contains("REWIND_ZVM_PASSWORD must be set in the environment the agent host runs in"),
        "{first:#?}"
    );
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o644, "the settings file keeps its mode");
    let installed = std::fs::read_to_string(&path).expect("installed");

    // A second change (another budget) keeps a second backup; the first one is untouched.
    let config = std::fs::read_to_string(&env.config).expect("config");
    std::fs::write(
        &env.config,
        config.replace("budget_secs = 30", "budget_secs = 40"),
    )
    .expect("config");
    std::thread::sleep(std::time::Duration::from_millis(10));
    env.run(&["install"], b"").success();
    let kept = backups(&path);
    assert_eq!(kept.len(), 2, "{kept:?}");
    let contents: Vec<String> = kept
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("backup"))
        .collect();
    assert!(
        contents.contains(&original.to_owned()),
        "the original is kept"
    );
    assert!(contents.contains(&installed), "the first install is kept");
    assert_eq!(
        read_json(&path)["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"],
        70
    );

    let same = env.run(&["install"], b"");
    assert!(same.stdout.contains("already up to date"), "{same:#?}");
    assert_eq!(backups(&path).len(), 2, "no change, no backup");
}

#[test]
fn uninstall_removes_exactly_rewinds_entries() {
    let env = TestEnv::start();
    let path = env.path("home/.claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
    let original = json!({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "/usr/bin/audit-mcp"}]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "log-bash"}]}]
        }
    });
    std::fs::write(&path, original.to_string()).expect("write");
    env.run(&["install"], b"").success();
    assert_ne!(read_json(&path), original);
    let removed = env.run(&["uninstall"], b"");
    removed.success();
    assert!(
        removed.stdout.contains("removed 2 rewind entries"),
        "{removed:#?}"
    );
    assert_eq!(read_json(&path), original);
    let again = env.run(&["uninstall"], b"");
    assert!(again.stdout.contains("nothing changed"), "{again:#?}");
}

#[test]
fn local_scope_writes_settings_local_json() {
    let env = TestEnv::start();
    env.run(&["install", "--scope", "local"], b"").success();
    let local = read_json(&env.path(".claude/settings.local.json"));
    assert!(local["hooks"]["PreToolUse"].is_array(), "{local:#}");
    assert!(!env.path(".claude/settings.json").exists());
    assert!(!env.path("home/.claude/settings.json").exists());
}

#[test]
fn project_scope_is_portable_or_refused_with_the_reason() {
    let env = TestEnv::start();
    let refused = env.run(&["install", "--scope", "project"], b"");
    refused.failure();
    assert!(
        refused
            .stderr
            .contains("shared with everyone who clones the project")
            && refused.stderr.contains("--scope local"),
        "{refused:#?}"
    );
    assert!(!env.path(".claude/settings.json").exists());

    // With rewind on PATH, the entries name it there and pin nothing of this machine.
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rewind"), bin.join("rewind")).expect("link");
    let mut cmd = env.command(&["install", "--scope", "project"]);
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    cmd.env("PATH", path);
    let run = crate::support::run(cmd, b"");
    run.success();
    let text = std::fs::read_to_string(env.path(".claude/settings.json")).expect("project");
    assert!(
        !text.contains(&env.dir.path().display().to_string()),
        "{text}"
    );
    let settings: Value = serde_json::from_str(&text).expect("JSON");
    let handler = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(handler["command"], "rewind");
    assert_eq!(handler["args"], json!(["hook"]));
    assert!(
        run.stderr.contains("project scope pins no config"),
        "{run:#?}"
    );
}

#[test]
fn install_warns_when_no_config_exists() {
    let env = TestEnv::start();
    let mut cmd = env.command(&["install"]);
    cmd.env_remove("REWIND_CONFIG");
    let run = crate::support::run(cmd, b"");
    run.success();
    assert!(
        run.stderr.contains("no configuration with a [zvm] section"),
        "{run:#?}"
    );
}

/// Installs, lets `edit` change the user settings, and runs doctor.
fn doctor_after(edit: impl FnOnce(&mut Value, &TestEnv)) -> Run {
    let env = TestEnv::start();
    env.run(&["install"], b"").success();
    let path = env.path("home/.claude/settings.json");
    let mut settings = read_json(&path);
    edit(&mut settings, &env);
    std::fs::write(&path, settings.to_string()).expect("write");
    env.run(&["doctor"], b"")
}

#[track_caller]
fn assert_fails_hook(run: &Run, says: &str) {
    run.failure();
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL  hook") && l.contains(says));
    assert!(
        line.is_some(),
        "no FAIL hook line saying {says:?}: {run:#?}"
    );
}

#[test]
fn doctor_passes_a_fresh_install() {
    let env = TestEnv::start();
    env.run(&["install"], b"").success();
    let run = env.run(&["doctor"], b"");
    run.success();
    assert!(run.stdout.contains("ok    hook in"), "{run:#?}");
}

#[test]
fn doctor_fails_disable_all_hooks() {
    let run = doctor_after(|s, _| s["disableAllHooks"] = json!(true));
    assert_fails_hook(&run, "disableAllHooks");
}

#[test]
fn doctor_fails_a_matcher_narrowed_to_one_server() {
    let run = doctor_after(|s, _| {
        s["hooks"]["PreToolUse"][0]["matcher"] = json!("mcp__ssh__.*");
    });
    assert_fails_hook(&run, "does not cover");
}

#[test]
fn doctor_fails_a_stale_second_entry_whose_binary_is_gone() {
    let run = doctor_after(|s, _| {
        let groups = s["hooks"]["PreToolUse"].as_array_mut().expect("groups");
        groups.push(json!({"matcher": "mcp__.*", "hooks": [{
            "type": "command", "command": "/opt/old/bin/rewind", "args": ["hook"],
            "timeout": 180, "onFailure": "block"
        }]}));
    });
    assert_fails_hook(&run, "2 rewind entries");
    assert_fails_hook(&run, "/opt/old/bin/rewind does not exist");
}

#[test]
fn doctor_judges_the_timeout_against_the_config_the_entry_pins() {
    let run = doctor_after(|s, env| {
        let other = env.path("other.toml");
        let text = std::fs::read_to_string(&env.config).expect("config");
        std::fs::write(
            &other,
            text.replace("budget_secs = 30", "budget_secs = 200"),
        )
        .expect("other");
        let handler = &mut s["hooks"]["PreToolUse"][0]["hooks"][0];
        handler["args"] = json!(["--config", other.display().to_string(), "hook"]);
    });
    assert_fails_hook(&run, "not above the budget 200 s");
}
