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
        "PreToolUse (",
        "PostToolUse (",
        "onFailure block",
        "the previous file is kept as",
    ] {
        assert!(first.stdout.contains(said), "{said}: {first:#?}");
    }
    assert!(
        first
            .stderr
            .contains("REWIND_ZVM_PASSWORD must be set in the environment Claude Code runs in"),
        "{first:#?}"
    );
    // The binary under test is a cargo build output, which `cargo clean` would take away.
    assert!(
        first
            .stderr
            .contains("a build inside a cargo target directory"),
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
    assert_eq!(handler["args"], json!(["hook", "--host", "claude-code"]));
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
    // Where it looked, so that the person knows where to put one.
    assert!(
        run.stderr.contains(
            "no configuration found (--config, $REWIND_CONFIG, ./.rewind.toml, ~/.config/rewind/config.toml, /etc/rewind/config.toml)"
        ),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains("every mutating call will be denied"),
        "{run:#?}"
    );

    // A file without [zvm] is named.
    let bare = env.path("bare.toml");
    std::fs::write(&bare, "[hook]\nbudget_secs = 30\n").expect("write");
    let mut cmd = env.command(&["--config", bare.to_str().expect("UTF-8"), "install"]);
    cmd.env_remove("REWIND_CONFIG");
    let run = crate::support::run(cmd, b"");
    run.success();
    assert!(
        run.stderr
            .contains(&format!("{} has no [zvm] section", bare.display())),
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
fn doctor_fails_a_matcher_narrowed_to_one_server_or_without_the_shell_tools() {
    for (matcher, says) in [
        ("mcp__ssh__.*", "does not cover"),
        ("mcp__.*", "such as Bash, PowerShell"),
    ] {
        let run = doctor_after(|s, _| {
            s["hooks"]["PreToolUse"][0]["matcher"] = json!(matcher);
        });
        assert_fails_hook(&run, says);
    }
}

/// A second entry left by an older copy, under rewind's own name or a versioned one.
fn stale_entry(program: &str) -> Value {
    json!({"matcher": "mcp__.*", "hooks": [{
        "type": "command", "command": program, "args": ["hook", "--host", "claude-code"],
        "timeout": 180, "onFailure": "block"
    }]})
}

#[test]
fn doctor_fails_a_stale_second_entry_whose_binary_is_gone() {
    for program in ["/opt/old/bin/rewind", "/opt/old/bin/rewind-0.1.0"] {
        let run = doctor_after(|s, _| {
            let groups = s["hooks"]["PreToolUse"].as_array_mut().expect("groups");
            groups.push(stale_entry(program));
        });
        assert_fails_hook(&run, "2 rewind entries");
        assert_fails_hook(&run, &format!("{program} does not exist"));
    }
}

/// An entry of a copy named by its version is rewind's own: install replaces it, uninstall
/// takes it out, and neither touches `rewind-mcp` or another program's hook.
#[test]
fn install_and_uninstall_recognise_an_older_copy_named_by_its_version() {
    let env = TestEnv::start();
    let path = env.path("home/.claude/settings.json");
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    let others = json!({"matcher": "Bash", "hooks": [
        {"type": "command", "command": "/usr/local/bin/rewind-mcp", "args": ["hook"]},
        {"type": "command", "command": "/usr/local/bin/audit-hook"}
    ]});
    let settings = json!({"hooks": {"PreToolUse": [
        stale_entry("/opt/old/bin/rewind-0.1.0"), others
    ]}});
    std::fs::write(&path, settings.to_string()).expect("write");

    env.run(&["install"], b"").success();
    let text = std::fs::read_to_string(&path).expect("settings");
    assert!(!text.contains("rewind-0.1.0"), "replaced: {text}");
    assert_eq!(read_json(&path)["hooks"]["PreToolUse"][1], others, "{text}");
    env.run(&["doctor"], b"").success();

    std::fs::write(&path, settings.to_string()).expect("write");
    env.run(&["uninstall"], b"").success();
    let after = read_json(&path);
    assert_eq!(after["hooks"]["PreToolUse"], json!([others]), "{after}");
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

/// One host's files as `rewind install --host <name>` writes them under a temporary HOME.
struct HostCase {
    name: &'static str,
    /// The file install writes, under the test directory.
    file: &'static str,
    /// The shipped snippet, under `hooks/`.
    snippet: &'static str,
    /// Matcher groups (`hooks.<event>: [{matcher, hooks}]`) or handlers listed flat.
    grouped: bool,
    before: &'static str,
    timeout_key: &'static str,
    /// Units of the host's timeout per second.
    unit: u64,
    /// The key naming the program.
    program_key: &'static str,
    /// What a user's own file looks like before rewind comes (`None`: rewind's file is new,
    /// the user's hooks live in other files of the directory).
    existing: Option<&'static str>,
    /// The user's other files beside it, which rewind must never change.
    siblings: &'static [(&'static str, &'static str)],
    /// Whether the host runs the call unguarded when the hook times out.
    fails_open: bool,
}

const CLAUDE_CODE: HostCase = HostCase {
    name: "claude-code",
    file: "home/.claude/settings.json",
    snippet: "claude-code.settings.json",
    grouped: true,
    before: "PreToolUse",
    timeout_key: "timeout",
    unit: 1,
    program_key: "command",
    existing: Some(
        r#"{"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/lint-bash"}]}], "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}}"#,
    ),
    siblings: &[],
    fails_open: false,
};

const CODEX: HostCase = HostCase {
    name: "codex",
    file: "home/.codex/hooks.json",
    snippet: "codex.hooks.json",
    grouped: true,
    before: "PreToolUse",
    timeout_key: "timeout",
    unit: 1,
    program_key: "command",
    existing: Some(
        r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 ~/.codex/hooks/policy.py", "timeout": 30}]}
    ],
    "SessionStart": [
      {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "~/.codex/hooks/banner.sh", "statusMessage": "loading notes"}]}
    ]
  }
}
"#,
    ),
    siblings: &[(
        "home/.codex/config.toml",
        "model = \"gpt-5\"\napproval_policy = \"on-request\"\n\n[mcp_servers.ssh]\ncommand = \"npx\"\nargs = [\"-y\", \"ssh-mcp\"]\n",
    )],
    fails_open: true,
};

const GEMINI: HostCase = HostCase {
    name: "gemini",
    file: "home/.gemini/settings.json",
    snippet: "gemini.settings.json",
    grouped: true,
    before: "BeforeTool",
    timeout_key: "timeout",
    unit: 1000,
    program_key: "command",
    existing: Some(
        r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"preferredEditor": "vim", "vimMode": true},
  "mcpServers": {"ssh": {"command": "npx", "args": ["-y", "ssh-mcp"], "trust": false}},
  "hooksConfig": {"enabled": true, "disabled": ["format-on-save"]},
  "hooks": {
    "BeforeTool": [{"matcher": "write_file|replace", "hooks": [{"type": "command", "name": "secret-scan", "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/scan.sh", "timeout": 5000}]}],
    "AfterTool": [{"matcher": "write_file", "sequential": true, "hooks": [{"type": "command", "name": "format-on-save", "command": "prettier --write"}]}]
  }
}
"#,
    ),
    siblings: &[],
    fails_open: true,
};

const COPILOT: HostCase = HostCase {
    name: "copilot",
    file: "home/.copilot/hooks/rewind.json",
    snippet: "copilot.hooks.json",
    grouped: false,
    before: "preToolUse",
    timeout_key: "timeoutSec",
    unit: 1,
    program_key: "exec",
    existing: None,
    siblings: &[
        (
            "home/.copilot/hooks/audit.json",
            r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./scripts/audit.sh", "powershell": "./scripts/audit.ps1", "cwd": "scripts", "timeoutSec": 10}], "sessionStart": [{"type": "command", "bash": "date >> ~/.copilot/sessions.log"}]}}"#,
        ),
        (
            "home/.copilot/hooks/scripts/audit.sh",
            "#!/bin/sh\ncat >> audit.log\n",
        ),
    ],
    fails_open: true,
};

const CURSOR: HostCase = HostCase {
    name: "cursor",
    file: "home/.cursor/hooks.json",
    snippet: "cursor.hooks.json",
    grouped: false,
    before: "beforeMCPExecution",
    timeout_key: "timeout",
    unit: 1,
    program_key: "command",
    existing: Some(
        r#"{"version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}], "beforeShellExecution": [{"command": "./hooks/audit.sh", "matcher": "git push"}], "stop": [{"command": "./hooks/stop.sh", "loop_limit": 3}]}}"#,
    ),
    siblings: &[],
    fails_open: false,
};

const HOSTS: [HostCase; 5] = [CLAUDE_CODE, CODEX, GEMINI, COPILOT, CURSOR];

fn repo_file(relative: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn rewind_bin() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_rewind"))
        .expect("binary")
        .display()
        .to_string()
}

#[test]
fn the_shipped_snippets_are_exactly_what_install_writes() {
    for host in HOSTS {
        let env = TestEnv::start();
        let mut cmd = env.command(&["install", "--host", host.name]);
        cmd.env_remove("REWIND_CONFIG");
        crate::support::run(cmd, b"").success();
        let written = std::fs::read_to_string(env.path(host.file)).expect(host.file);
        assert_eq!(
            written.replace(&rewind_bin(), "/usr/local/bin/rewind"),
            repo_file(&format!("hooks/{}", host.snippet)),
            "{}: hooks/{} differs from what install writes",
            host.name,
            host.snippet
        );
    }
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The before-the-call handler install wrote for `host` (the last one of its event).
fn before_handler<'a>(host: &HostCase, settings: &'a mut Value) -> &'a mut Value {
    let entry = settings["hooks"][host.before]
        .as_array_mut()
        .and_then(|entries| entries.last_mut())
        .expect("an entry on the before event");
    if host.grouped {
        &mut entry["hooks"][0]
    } else {
        entry
    }
}

/// The user's own files for `host` before rewind comes (their mode 0640); the path of the
/// file install writes.
fn user_files(env: &TestEnv, host: &HostCase) -> PathBuf {
    let path = env.path(host.file);
    std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
    for (sibling, text) in host.siblings {
        let sibling = env.path(sibling);
        std::fs::create_dir_all(sibling.parent().expect("dir")).expect("dir");
        std::fs::write(sibling, text).expect("sibling");
    }
    if let Some(existing) = host.existing {
        std::fs::write(&path, existing).expect("existing");
        #[cfg(unix)]
        chmod(&path, 0o640);
    }
    path
}

#[test]
fn every_host_installs_idempotently_keeps_the_users_settings_backups_and_mode() {
    for host in HOSTS {
        let env = TestEnv::start();
        let path = user_files(&env, &host);
        let siblings_kept = || {
            for (sibling, text) in host.siblings {
                assert_eq!(
                    &std::fs::read_to_string(env.path(sibling)).expect("sibling"),
                    text,
                    "{}: {sibling} changed",
                    host.name
                );
            }
        };
        let first_backups = usize::from(host.existing.is_some());

        let first = env.run(&["install", "--host", host.name], b"");
        first.success();
        assert!(
            first.stdout.contains("installed the rewind hook"),
            "{first:#?}"
        );
        assert!(
            first
                .stderr
                .contains("REWIND_ZVM_PASSWORD must be set in the environment"),
            "{first:#?}"
        );
        assert_eq!(
            first.stderr.contains("unguarded when the hook times out"),
            host.fails_open,
            "{}: {first:#?}",
            host.name
        );
        assert_eq!(backups(&path).len(), first_backups, "{}", host.name);
        #[cfg(unix)]
        if host.existing.is_some() {
            assert_eq!(mode(&path), 0o640, "{} keeps its mode", host.name);
        }
        siblings_kept();
        let mut installed = read_json(&path);
        assert_eq!(
            before_handler(&host, &mut installed)[host.timeout_key],
            60 * host.unit,
            "{}: budget 30 s + 30 s in the host's unit",
            host.name
        );

        let again = env.run(&["install", "--host", host.name], b"");
        assert!(again.stdout.contains("already up to date"), "{again:#?}");
        assert_eq!(
            backups(&path).len(),
            first_backups,
            "{}: no change, no backup",
            host.name
        );

        let config = std::fs::read_to_string(&env.config).expect("config");
        std::fs::write(
            &env.config,
            config.replace("budget_secs = 30", "budget_secs = 40"),
        )
        .expect("config");
        env.run(&["install", "--host", host.name], b"").success();
        let kept = backups(&path);
        assert_eq!(kept.len(), first_backups + 1, "{}: {kept:?}", host.name);
        let contents: Vec<String> = kept
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("backup"))
            .collect();
        if let Some(existing) = host.existing {
            assert!(
                contents.contains(&existing.to_owned()),
                "{}: the original is kept",
                host.name
            );
        }
        let mut changed = read_json(&path);
        assert_eq!(
            before_handler(&host, &mut changed)[host.timeout_key],
            70 * host.unit,
            "{}",
            host.name
        );

        let removed = env.run(&["uninstall", "--host", host.name], b"");
        removed.success();
        assert!(removed.stdout.contains("rewind entries"), "{removed:#?}");
        match host.existing {
            Some(existing) => assert_eq!(
                read_json(&path),
                serde_json::from_str::<Value>(existing).expect("JSON"),
                "{}: uninstall leaves exactly the user's settings",
                host.name
            ),
            // A file install made holds nothing else once rewind's entries are out: gone.
            None => assert!(!path.exists(), "{}: {removed:#?}", host.name),
        }
        #[cfg(unix)]
        if host.existing.is_some() {
            assert_eq!(mode(&path), 0o640, "{} keeps its mode", host.name);
        }
        siblings_kept();
        let nothing = env.run(&["uninstall", "--host", host.name], b"");
        assert!(nothing.stdout.contains("nothing changed"), "{nothing:#?}");
    }
}

#[test]
fn a_host_without_a_local_scope_refuses_it_with_the_reason() {
    for host in ["codex", "gemini", "copilot", "cursor"] {
        let env = TestEnv::start();
        let run = env.run(&["install", "--host", host, "--scope", "local"], b"");
        run.failure();
        assert!(
            run.stderr.contains("has no local scope") && run.stderr.contains("--scope user"),
            "{run:#?}"
        );
    }
}

#[test]
fn project_scope_writes_each_hosts_project_file_with_rewind_from_path() {
    let env = TestEnv::start();
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rewind"), bin.join("rewind")).expect("link");
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    for (host, file, key) in [
        (
            "codex",
            ".codex/hooks.json",
            "/hooks/PreToolUse/0/hooks/0/command",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "/hooks/BeforeTool/0/hooks/0/command",
        ),
        (
            "copilot",
            ".github/hooks/rewind.json",
            "/hooks/preToolUse/0/exec",
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            "/hooks/beforeMCPExecution/0/command",
        ),
    ] {
        let mut cmd = env.command(&["install", "--host", host, "--scope", "project"]);
        cmd.env("PATH", &path);
        crate::support::run(cmd, b"").success();
        let text = std::fs::read_to_string(env.path(file)).expect(file);
        assert!(
            !text.contains(&env.dir.path().display().to_string()),
            "{text}"
        );
        let written = read_json(&env.path(file));
        let expected = if host == "copilot" {
            String::from("rewind")
        } else {
            format!("rewind hook --host {host}")
        };
        assert_eq!(
            written.pointer(key),
            Some(&json!(expected)),
            "{host}: {written:#}"
        );
    }
}

#[test]
fn a_stale_copilot_entry_in_another_hooks_file_is_named_and_uninstalled_too() {
    let env = TestEnv::start();
    let other = env.path("home/.copilot/hooks/hooks.json");
    std::fs::create_dir_all(other.parent().expect("dir")).expect("dir");
    let theirs = json!({"type": "command", "bash": "./audit.sh"});
    std::fs::write(
        &other,
        json!({"version": 1, "hooks": {"preToolUse": [
            theirs,
            {"type": "command", "bash": "/usr/local/bin/rewind hook --host copilot", "timeoutSec": 180}
        ]}})
        .to_string(),
    )
    .expect("write");
    let run = env.run(&["install", "--host", "copilot"], b"");
    run.success();
    assert!(
        run.stderr.contains("hooks.json also holds 1 rewind entry"),
        "{run:#?}"
    );
    let doctor = env.run(&["doctor", "--host", "copilot"], b"");
    assert_fails_hook(&doctor, "2 rewind entries");
    env.run(&["uninstall", "--host", "copilot"], b"").success();
    assert_eq!(
        read_json(&other),
        json!({"version": 1, "hooks": {"preToolUse": [theirs]}})
    );
}

/// Runs doctor for `host` after `edit` changed the file install wrote.
fn doctor_edited(env: &TestEnv, host: &HostCase, edit: impl FnOnce(&mut Value)) -> Run {
    let path = env.path(host.file);
    let installed = std::fs::read_to_string(&path).expect("installed");
    let mut settings: Value = serde_json::from_str(&installed).expect("JSON");
    edit(&mut settings);
    std::fs::write(&path, settings.to_string()).expect("write");
    let run = env.run(&["doctor", "--host", host.name], b"");
    std::fs::write(&path, installed).expect("restore");
    run
}

/// A matcher each host reads as covering only one MCP server.
fn narrowed(host: &HostCase) -> &'static str {
    match host.name {
        "claude-code" => "mcp__ssh__.*",
        "codex" => "^mcp__ssh__",
        "gemini" => "^mcp_ssh_",
        "copilot" => "ssh-.+",
        _ => "^exec$",
    }
}

#[test]
fn doctor_fails_every_hosts_false_oks() {
    for host in HOSTS {
        let env = TestEnv::start();
        env.run(&["install", "--host", host.name], b"").success();
        let fresh = env.run(&["doctor", "--host", host.name], b"");
        fresh.success();
        assert!(
            fresh.stdout.contains("ok    hook in"),
            "{}: {fresh:#?}",
            host.name
        );
        assert_eq!(
            fresh.stdout.contains("unguarded when the hook times out"),
            host.fails_open,
            "{}: the fail-open warning: {fresh:#?}",
            host.name
        );

        let stale = doctor_edited(&env, &host, |s| {
            let handler = before_handler(&host, s);
            let program = handler[host.program_key]
                .as_str()
                .expect("program")
                .to_owned();
            handler[host.program_key] =
                json!(program.replace(&rewind_bin(), "/opt/old/bin/rewind"));
        });
        assert_fails_hook(&stale, "/opt/old/bin/rewind-hook does not exist");

        let narrow = doctor_edited(&env, &host, |s| {
            let list = s["hooks"][host.before].as_array_mut().expect("list");
            list.last_mut().expect("entry")["matcher"] = json!(narrowed(&host));
        });
        assert_fails_hook(&narrow, "does not cover");

        let duplicate = doctor_edited(&env, &host, |s| {
            let list = s["hooks"][host.before].as_array_mut().expect("list");
            let copy = list.last().expect("entry").clone();
            list.push(copy);
        });
        assert_fails_hook(&duplicate, "2 rewind entries");

        let short = doctor_edited(&env, &host, |s| {
            before_handler(&host, s)[host.timeout_key] = json!(30 * host.unit);
        });
        assert_fails_hook(&short, "not above the budget 30 s");
    }
}

#[test]
fn doctor_reads_codex_config_toml_and_gemini_switches() {
    let env = TestEnv::start();
    env.run(&["install", "--host", "codex"], b"").success();
    let toml = env.path("home/.codex/config.toml");
    std::fs::write(&toml, "model = \"gpt-5\"\n[features]\nhooks = false\n").expect("toml");
    let off = env.run(&["doctor", "--host", "codex"], b"");
    assert_fails_hook(&off, "hooks = false");
    std::fs::write(
        &toml,
        "[[hooks.PreToolUse]]\nmatcher = \"^mcp__\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/usr/local/bin/rewind hook --host codex\"\ntimeout = 180\n",
    )
    .expect("toml");
    let twice = env.run(&["doctor", "--host", "codex"], b"");
    assert_fails_hook(&twice, "2 rewind entries");
    let uninstall = env.run(&["uninstall", "--host", "codex"], b"");
    uninstall.success();
    assert!(
        uninstall.stdout.contains("config.toml") && uninstall.stdout.contains("hooks.json"),
        "{uninstall:#?}"
    );
    // It held nothing but rewind's entry: removed, not left empty.
    assert!(!toml.exists(), "{uninstall:#?}");

    env.run(&["install", "--host", "gemini"], b"").success();
    let settings = env.path("home/.gemini/settings.json");
    let mut value = read_json(&settings);
    value["hooksConfig"] = json!({"disabled": ["rewind"]});
    std::fs::write(&settings, value.to_string()).expect("write");
    let skipped = env.run(&["doctor", "--host", "gemini"], b"");
    assert_fails_hook(&skipped, "hooksConfig.disabled");
}

/// A settings file kept elsewhere and linked in (a dotfiles repository): install writes
/// through the link, which stays a link; a link to nothing is refused and left as it is.
#[cfg(unix)]
#[test]
fn a_symlinked_settings_file_stays_a_link_and_a_dangling_one_is_refused() {
    let env = TestEnv::start();
    let dotfiles = env.path("dotfiles/gemini.json");
    std::fs::create_dir_all(dotfiles.parent().expect("dir")).expect("dir");
    std::fs::write(&dotfiles, r#"{"theme": "dark"}"#).expect("write");
    let link = env.path("home/.gemini/settings.json");
    std::fs::create_dir_all(link.parent().expect("dir")).expect("dir");
    std::os::unix::fs::symlink(&dotfiles, &link).expect("symlink");

    env.run(&["install", "--host", "gemini"], b"").success();
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    let written = read_json(&dotfiles);
    assert_eq!(written["theme"], "dark", "{written}");
    assert!(written["hooks"]["BeforeTool"].is_array(), "{written}");

    let dangling = env.path("home/.cursor/hooks.json");
    std::fs::create_dir_all(dangling.parent().expect("dir")).expect("dir");
    std::os::unix::fs::symlink(env.path("nowhere/hooks.json"), &dangling).expect("symlink");
    let refused = env.run(&["install", "--host", "cursor"], b"");
    assert_ne!(refused.code, 0, "{refused:#?}");
    assert!(refused.stderr.contains("symbolic link"), "{refused:#?}");
    assert!(
        std::fs::symlink_metadata(&dangling)
            .expect("link")
            .file_type()
            .is_symlink()
    );
}

/// Install then uninstall into an empty home leaves nothing behind for any host: the file
/// install made (and its directory's other files) is gone, and no backup was made of a file
/// that did not exist or of one that held only rewind's entries. A file with something else
/// in it stays, with a backup.
#[test]
fn install_then_uninstall_into_an_empty_home_leaves_no_file_and_no_backup() {
    let env = TestEnv::start();
    for host in ["claude-code", "codex", "gemini", "copilot", "cursor"] {
        let installed = env.run(&["install", "--host", host], b"");
        installed.success();
        assert!(
            installed
                .stdout
                .contains("(a new file: nothing to back up)"),
            "{installed:#?}"
        );
        let removed = env.run(&["uninstall", "--host", host], b"");
        removed.success();
        assert!(
            removed.stdout.contains("which held nothing else"),
            "{removed:#?}"
        );
    }
    let left: Vec<PathBuf> = walk(&env.path("home"));
    assert!(left.is_empty(), "left behind: {left:#?}");

    let path = env.path("home/.claude/settings.json");
    std::fs::write(&path, r#"{"model": "opus"}"#).expect("write");
    env.run(&["install"], b"").success();
    env.run(&["uninstall"], b"").success();
    assert_eq!(read_json(&path), json!({"model": "opus"}));
    assert_eq!(backups(&path).len(), 2, "install's and uninstall's");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
