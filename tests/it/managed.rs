//! `rewind install|uninstall --scope managed`: each host's administrator file, written under a
//! temporary root (`--root`, never the real /etc), byte for byte the shipped example of
//! `hooks/managed/`; and the hook run from such an entry, which reads only the pinned
//! configuration and denies when anyone but root can change it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use tempfile::TempDir;

use crate::support::{Run, TestEnv, hook_input, run};

/// A host, its administrator file under the root, the shipped example, and whether it
/// has a lock.
const HOSTS: [(&str, &str, &str, bool); 5] = [
    (
        "claude-code",
        "etc/claude-code/managed-settings.d/50-rewind.json",
        "claude-code.managed-settings.d.50-rewind.json",
        true,
    ),
    (
        "codex",
        "etc/codex/requirements.toml",
        "codex.requirements.toml",
        true,
    ),
    (
        "gemini",
        "etc/gemini-cli/settings.json",
        "gemini.system-settings.json",
        true,
    ),
    (
        "copilot",
        "etc/github-copilot/policy.d/rewind.json",
        "copilot.policy.json",
        false,
    ),
    (
        "cursor",
        "etc/cursor/hooks.json",
        "cursor.enterprise-hooks.json",
        false,
    ),
];

fn binary() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_rewind"))
        .expect("binary")
        .display()
        .to_string()
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A machine root with a system configuration only root can change.
fn machine() -> TempDir {
    let root = tempfile::tempdir().expect("tempdir");
    let config = root.path().join("etc/rewind/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    std::fs::write(&config, "[hook]\nbudget_secs = 150\n").expect("config");
    set_mode(&config, 0o644);
    root
}

fn rewind(root: &Path, args: &[&str]) -> Run {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root.join("home"))
        .args(args)
        .arg("--root")
        .arg(root);
    run(cmd, b"")
}

/// The managed layer is root's, and these tests need root to own what they create, as it
/// does on a real machine (CI runs as root). Anyone else gets the refusal, which is checked
/// instead.
fn is_root() -> bool {
    if rewind::lockfile::is_root() {
        return true;
    }
    let home = tempfile::tempdir().expect("home");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.env_clear().env("HOME", home.path()).args([
        "install",
        "--host",
        "claude-code",
        "--scope",
        "managed",
    ]);
    let out = run(cmd, b"");
    out.failure();
    assert!(
        out.stderr.contains("which only root may change"),
        "{out:#?}"
    );
    false
}

#[test]
fn each_hosts_administrator_file_is_the_shipped_example_byte_for_byte() {
    if !is_root() {
        return;
    }
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/managed");
    for (host, file, example, lock) in HOSTS {
        let root = machine();
        let mut args = vec!["install", "--host", host, "--scope", "managed"];
        if lock {
            args.push("--lock");
        }
        let out = rewind(root.path(), &args);
        out.success();
        let path = root.path().join(file);
        let written = std::fs::read_to_string(&path).expect(file);
        let expected = std::fs::read_to_string(shipped.join(example)).expect(example);
        assert_eq!(
            written.replace(&binary(), "/usr/local/bin/rewind"),
            expected,
            "{host}: hooks/managed/{example} differs from what install writes"
        );
        // Every user's host reads it; only root writes it.
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{host}");
        assert!(
            out.stdout
                .contains("each run reads only /etc/rewind/config.toml"),
            "{out:#?}"
        );
        // A second install changes nothing.
        let again = rewind(root.path(), &args);
        again.success();
        assert!(again.stdout.contains("already up to date"), "{again:#?}");
        // Uninstall takes exactly rewind's entries out; a lock stays in an administrator file
        // (it may be policy).
        let gone = rewind(
            root.path(),
            &["uninstall", "--host", host, "--scope", "managed"],
        );
        gone.success();
        // rewind's own drop-in goes with its entries and its lock.
        let Ok(left) = std::fs::read_to_string(&path) else {
            assert_eq!(host, "claude-code", "{file} is gone");
            continue;
        };
        assert!(!left.contains("rewind"), "{host}: {left}");
        if lock {
            assert!(
                left.contains("allowManagedHooksOnly")
                    || left.contains("allow_managed_hooks_only")
                    || left.contains("\"enabled\": true"),
                "{host}: {left}"
            );
        }
    }
}

#[test]
fn an_administrator_file_keeps_the_organisations_own_settings() {
    if !is_root() {
        return;
    }
    let root = machine();
    let path = root.path().join("etc/gemini-cli/settings.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    let policy = json!({
        "security": {"auth": {"enforcedType": "oauth-personal"}},
        "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "/opt/org/audit"}]}]}
    });
    std::fs::write(&path, serde_json::to_string_pretty(&policy).expect("json")).expect("write");
    rewind(
        root.path(),
        &["install", "--host", "gemini", "--scope", "managed"],
    )
    .success();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    assert_eq!(written["security"], policy["security"]);
    assert_eq!(
        written["hooks"]["BeforeTool"][0],
        policy["hooks"]["BeforeTool"][0]
    );
    assert!(written.get("hooksConfig").is_none(), "no lock unless asked");
    rewind(
        root.path(),
        &["uninstall", "--host", "gemini", "--scope", "managed"],
    )
    .success();
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    assert_eq!(after, policy);
}

/// `policy` with the groups of the shipped Claude Code example added, as an older install
/// wrote them into `managed-settings.json`.
fn with_shipped_entries(policy: &serde_json::Value) -> serde_json::Value {
    let mut older = policy.clone();
    let shipped: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("hooks/managed/claude-code.managed-settings.d.50-rewind.json"),
        )
        .expect("example"),
    )
    .expect("json");
    for event in ["PreToolUse", "PostToolUse"] {
        let list = older["hooks"]
            .as_object_mut()
            .expect("hooks")
            .entry(event)
            .or_insert_with(|| json!([]));
        for group in shipped["hooks"][event].as_array().expect("groups") {
            list.as_array_mut().expect("list").push(group.clone());
        }
    }
    older
}

/// Claude Code merges `managed-settings.d/*.json` over `managed-settings.json`: rewind writes
/// a drop-in of its own and leaves the organisation's file alone, moves the entries an older
/// install left there, and `doctor` reads the layer merged as Claude Code does.
#[test]
fn claude_codes_entries_live_in_a_drop_in_of_their_own() {
    if !is_root() {
        return;
    }
    let env = TestEnv::start();
    let root = machine();
    let system = root.path().join("etc/rewind/config.toml");
    std::fs::copy(&env.config, &system).expect("copy");
    set_mode(&system, 0o644);
    let base = root.path().join("etc/claude-code/managed-settings.json");
    let drop_in = root
        .path()
        .join("etc/claude-code/managed-settings.d/50-rewind.json");
    std::fs::create_dir_all(base.parent().expect("dir")).expect("mkdir");
    let policy = json!({
        "permissions": {"disableBypassPermissionsMode": "disable"},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/org/audit"}]}]}
    });
    // An older rewind wrote its entries into the organisation's file.
    let older = with_shipped_entries(&policy);
    std::fs::write(&base, serde_json::to_string_pretty(&older).expect("json")).expect("write");

    let out = rewind(
        root.path(),
        &["install", "--host", "claude-code", "--scope", "managed"],
    );
    out.success();
    assert!(out.stdout.contains("own drop-in"), "{out:#?}");
    assert!(out.stdout.contains("an older install wrote"), "{out:#?}");
    let left: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).expect("base")).expect("json");
    assert_eq!(
        left, policy,
        "only rewind's entries left the organisation's file"
    );
    let ours = std::fs::read_to_string(&drop_in).expect("drop-in");
    assert!(ours.contains("--managed"), "{ours}");

    let checks = doctor(&env, root.path(), "claude-code");
    let active = check(&checks, "layer Claude Code", "managed: ");
    assert!(
        active.2.ends_with("managed-settings.d/50-rewind.json"),
        "{active:?}"
    );
    assert_eq!(
        check(&checks, "50-rewind.json", "only root can change").0,
        "ok"
    );
    // A drop-in read later switches every hook off: doctor names it.
    let later = root
        .path()
        .join("etc/claude-code/managed-settings.d/90-org.json");
    std::fs::write(&later, r#"{"disableAllHooks": true}"#).expect("later");
    // A dot file is not read by Claude Code, nor by doctor.
    std::fs::write(
        root.path()
            .join("etc/claude-code/managed-settings.d/.99-off.json"),
        r#"{"disableAllHooks": true}"#,
    )
    .expect("dot file");
    let checks = doctor(&env, root.path(), "claude-code");
    let off = check(&checks, "90-org.json", "disableAllHooks");
    assert_eq!(off.0, "fail", "{off:?}");
    assert!(
        !checks.iter().any(|(_, c, _)| c.contains(".99-off.json")),
        "{checks:#?}"
    );
    // A later drop-in overriding rewind's lock is named too.
    rewind(
        root.path(),
        &[
            "install",
            "--host",
            "claude-code",
            "--scope",
            "managed",
            "--lock",
        ],
    )
    .success();
    std::fs::write(&later, r#"{"allowManagedHooksOnly": false}"#).expect("later");
    let checks = doctor(&env, root.path(), "claude-code");
    let overridden = check(&checks, "layer Claude Code", "90-org.json");
    assert_eq!(overridden.0, "warn", "{overridden:?}");
    assert!(
        overridden.2.contains("lock is overridden"),
        "{overridden:?}"
    );
    std::fs::remove_file(&later).expect("rm");

    let out = rewind(
        root.path(),
        &["uninstall", "--host", "claude-code", "--scope", "managed"],
    );
    out.success();
    assert!(!drop_in.exists(), "{out:#?}");
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).expect("base")).expect("json");
    assert_eq!(after, policy);
}

#[test]
fn install_refuses_a_system_configuration_others_can_change_and_a_lock_the_host_lacks() {
    if !is_root() {
        return;
    }
    let root = machine();
    let config = root.path().join("etc/rewind/config.toml");
    set_mode(&config, 0o666);
    let out = rewind(
        root.path(),
        &["install", "--host", "gemini", "--scope", "managed"],
    );
    out.failure();
    assert!(
        out.stderr.contains("can be changed by others than root")
            && out.stderr.contains("config.toml"),
        "{out:#?}"
    );
    assert!(!root.path().join("etc/gemini-cli/settings.json").exists());
    set_mode(&config, 0o644);
    let out = rewind(
        root.path(),
        &[
            "install", "--host", "cursor", "--scope", "managed", "--lock",
        ],
    );
    out.failure();
    assert!(out.stderr.contains("nothing to --lock"), "{out:#?}");
    let out = rewind(root.path(), &["install", "--host", "cursor", "--lock"]);
    out.failure();
    assert!(out.stderr.contains("--scope managed only"), "{out:#?}");
}

#[test]
fn a_missing_system_configuration_is_said_and_pinned_anyway() {
    if !is_root() {
        return;
    }
    let root = tempfile::tempdir().expect("tempdir");
    let out = rewind(
        root.path(),
        &["install", "--host", "copilot", "--scope", "managed"],
    );
    out.success();
    assert!(
        out.stderr
            .contains("/etc/rewind/config.toml does not exist yet"),
        "{out:#?}"
    );
    let written =
        std::fs::read_to_string(root.path().join("etc/github-copilot/policy.d/rewind.json"))
            .expect("written");
    assert!(written.contains("\"/etc/rewind/config.toml\""), "{written}");
}

/// The hook as a managed entry runs it: `--config <pinned> hook --host … --managed`.
fn managed_hook(env: &TestEnv, config: &Path, stdin: &[u8]) -> Run {
    let config = config.display().to_string();
    let mut cmd = env.command(&[
        "--config",
        &config,
        "hook",
        "--host",
        "claude-code",
        "--managed",
    ]);
    // What the user's environment points at is not read.
    cmd.env("REWIND_CONFIG", env.path("elsewhere.toml"));
    run(cmd, stdin)
}

fn system_config(env: &TestEnv) -> PathBuf {
    let dir = env.path("etc/rewind");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let config = dir.join("config.toml");
    std::fs::copy(&env.config, &config).expect("copy");
    set_mode(&config, 0o644);
    config
}

#[test]
fn a_managed_hook_reads_only_its_pinned_root_owned_configuration() {
    if !is_root() {
        return;
    }
    let env = TestEnv::start();
    let config = system_config(&env);
    // The user's own configuration would wave everything through; it is never read.
    std::fs::write(env.path("elsewhere.toml"), "[hook\nbroken").expect("write");
    let call = hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "sudo systemctl restart nginx"}),
        "toolu_01MANAGED",
    );
    let out = managed_hook(&env, &config, &call);
    out.success();
    assert!(
        out.stdout.contains("Zerto checkpoint confirmed"),
        "the pinned configuration guards the call: {out:#?}"
    );

    // Anyone may write it: every call is denied, saying why.
    set_mode(&config, 0o666);
    let out = managed_hook(&env, &config, &call);
    out.success();
    assert_eq!(out.decision(), "deny", "{out:#?}");
    assert!(
        out.reason().contains("can be changed by others than root"),
        "{out:#?}"
    );
    set_mode(&config, 0o644);

    // A catalog it names that others can write: the same.
    let catalog = env.path("etc/rewind/catalog.toml");
    std::fs::write(&catalog, "").expect("catalog");
    set_mode(&catalog, 0o646);
    let text = std::fs::read_to_string(&config).expect("config");
    let text = text.replacen(
        "[hook]\n",
        &format!("[hook]\ncatalogs = [{:?}]\n", catalog.display().to_string()),
        1,
    );
    std::fs::write(&config, text).expect("write");
    let out = managed_hook(&env, &config, &call);
    assert_eq!(out.decision(), "deny", "{out:#?}");
    assert!(out.reason().contains("catalog"), "{out:#?}");

    // An entry that pins nothing is refused too.
    let mut cmd = env.command(&["hook", "--host", "claude-code", "--managed"]);
    cmd.env("REWIND_CONFIG", &config);
    let out = run(cmd, &call);
    assert_eq!(out.decision(), "deny", "{out:#?}");
    assert!(out.reason().contains("must pin"), "{out:#?}");
}

/// `rewind doctor --json` with the hosts' administrator files under `root`: each check's
/// status and detail by name (the last of a name).
fn doctor(env: &TestEnv, root: &Path, host: &str) -> Vec<(String, String, String)> {
    let root = root.display().to_string();
    let out = env.run(&["doctor", "--host", host, "--root", &root, "--json"], b"");
    out.json()["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("status"), text("check"), text("detail"))
        })
        .collect()
}

fn check<'a>(
    checks: &'a [(String, String, String)],
    name: &str,
    detail: &str,
) -> &'a (String, String, String) {
    checks
        .iter()
        .find(|(_, c, d)| c.contains(name) && d.contains(detail))
        .unwrap_or_else(|| panic!("no {name:?} check saying {detail:?}: {checks:#?}"))
}

#[test]
fn doctor_names_the_active_layer_and_what_can_still_switch_it_off() {
    if !is_root() {
        return;
    }
    let env = TestEnv::start();
    let root = tempfile::tempdir().expect("root");
    let system = root.path().join("etc/rewind/config.toml");
    std::fs::create_dir_all(system.parent().expect("dir")).expect("mkdir");
    std::fs::copy(&env.config, &system).expect("copy");
    set_mode(&system, 0o644);
    rewind(
        root.path(),
        &["install", "--host", "claude-code", "--scope", "managed"],
    )
    .success();
    // The user switches every hook off in their own settings.
    let user = env.path("home/.claude/settings.json");
    std::fs::create_dir_all(user.parent().expect("dir")).expect("mkdir");
    std::fs::write(&user, r#"{"disableAllHooks": true}"#).expect("user settings");

    let checks = doctor(&env, root.path(), "claude-code");
    assert_eq!(check(&checks, "layer Claude Code", "managed: ").0, "ok");
    assert_eq!(check(&checks, "layer Claude Code", "not locked").0, "warn");
    let switch = check(&checks, "settings.json", "still runs");
    assert_eq!(switch.0, "warn", "{switch:?}");
    assert_eq!(
        check(&checks, "50-rewind.json", "only root can change").0,
        "ok"
    );

    // Anyone may now rewrite the pinned configuration: a fail naming it.
    set_mode(&system, 0o666);
    let checks = doctor(&env, root.path(), "claude-code");
    let entry = check(&checks, "50-rewind.json", "others than root");
    assert_eq!(entry.0, "fail", "{entry:?}");
    assert!(entry.2.contains("config.toml"), "{entry:?}");
    set_mode(&system, 0o644);

    // Codex CLI: a user's `[features] hooks = false` switches managed hooks off too, unless
    // the managed layer is locked.
    rewind(
        root.path(),
        &["install", "--host", "codex", "--scope", "managed"],
    )
    .success();
    let codex = env.path("home/.codex/config.toml");
    std::fs::create_dir_all(codex.parent().expect("dir")).expect("mkdir");
    std::fs::write(&codex, "[features]\nhooks = false\n").expect("codex config");
    let checks = doctor(&env, root.path(), "codex");
    assert_eq!(check(&checks, "config.toml", "--lock").0, "fail");
    rewind(
        root.path(),
        &["install", "--host", "codex", "--scope", "managed", "--lock"],
    )
    .success();
    let checks = doctor(&env, root.path(), "codex");
    assert_eq!(check(&checks, "layer Codex CLI", "locked").0, "ok");
    assert_eq!(check(&checks, "config.toml", "still runs").0, "warn");
}

/// `rewind <args>` in a private mount namespace where `etc` is laid over `/etc` (an overlay
/// whose writes land in a tmpfs; the real `/etc` is never touched), with `home` as `HOME`.
fn with_etc(etc: &Path, home: &Path, args: &[&str]) -> Run {
    let mut cmd = std::process::Command::new("unshare");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .args(["-m", "--", "sh", "-c"])
        .arg(
            "set -e; t=$(mktemp -d); mount -t tmpfs tmpfs \"$t\"; mkdir \"$t/up\" \"$t/work\"; \
             mount -t overlay overlay -o lowerdir=/etc,upperdir=\"$t/up\",workdir=\"$t/work\" /etc; \
             cp -a \"$0\"/. /etc/; exec \"$@\"",
        )
        .arg(etc)
        .arg(env!("CARGO_BIN_EXE_rewind"))
        .args(args);
    run(cmd, b"")
}

#[test]
fn the_system_configuration_is_read_after_the_users() {
    if !is_root() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let etc = dir.path().join("etc");
    std::fs::create_dir_all(etc.join("rewind")).expect("mkdir");
    std::fs::write(etc.join("rewind/config.toml"), "[hook]\nbudget_secs = 42\n").expect("system");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let origin = |out: &Run| {
        out.json()["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["check"] == "config")
            .map(|c| c["detail"].as_str().unwrap_or_default().to_owned())
            .expect("a config check")
    };
    let out = with_etc(&etc, &home, &["doctor", "--json"]);
    assert_eq!(origin(&out), "/etc/rewind/config.toml", "{out:#?}");
    // The user's own file comes first.
    let user = home.join(".config/rewind/config.toml");
    std::fs::create_dir_all(user.parent().expect("dir")).expect("mkdir");
    std::fs::write(&user, "[hook]\nbudget_secs = 7\n").expect("user");
    let out = with_etc(&etc, &home, &["doctor", "--json"]);
    assert_eq!(origin(&out), user.display().to_string(), "{out:#?}");
}

/// `--print-mdm` writes nothing and prints the document an MDM delivers: the drop-in's
/// entries, on stdout alone, and where macOS and Windows read them on stderr.
#[test]
fn print_mdm_prints_the_drop_ins_settings_and_writes_nothing() {
    let root = machine();
    let out = rewind(
        root.path(),
        &[
            "install",
            "--host",
            "claude-code",
            "--scope",
            "managed",
            "--lock",
            "--print-mdm",
        ],
    );
    out.success();
    let printed: serde_json::Value = serde_json::from_str(&out.stdout).expect("stdout is JSON");
    assert!(
        !root.path().join("etc/claude-code").exists(),
        "--print-mdm wrote under the root"
    );
    for place in [
        "com.anthropic.claudecode",
        r"HKLM\SOFTWARE\Policies\ClaudeCode",
        "Settings",
        "managedSourcesBehavior",
    ] {
        assert!(out.stderr.contains(place), "{place}: {out:#?}");
    }
    assert_eq!(printed["allowManagedHooksOnly"], true);
    // The same entries `install` writes into its drop-in, where root may write one.
    if is_root() {
        rewind(
            root.path(),
            &[
                "install",
                "--host",
                "claude-code",
                "--scope",
                "managed",
                "--lock",
            ],
        )
        .success();
        let written: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                root.path()
                    .join("etc/claude-code/managed-settings.d/50-rewind.json"),
            )
            .expect("drop-in"),
        )
        .expect("json");
        assert_eq!(printed, written);
    }
    // Only Claude Code reads settings from an MDM; and it goes with --scope managed.
    let codex = rewind(
        root.path(),
        &[
            "install",
            "--host",
            "codex",
            "--scope",
            "managed",
            "--print-mdm",
        ],
    );
    codex.failure();
    assert!(
        codex.stderr.contains("no settings an MDM delivers"),
        "{codex:#?}"
    );
    let user = rewind(
        root.path(),
        &["install", "--host", "claude-code", "--print-mdm"],
    );
    user.failure();
    assert!(user.stderr.contains("--scope managed only"), "{user:#?}");
}
