//! Configuration mistakes as the user meets them: in the hook's deny reason (which the model
//! reads) and in `rewind doctor`.

use crate::support::{self, TestEnv, hook_input};

/// A password written in the wrong type is still a password: neither the hook's reason nor
/// doctor's report may quote it; both name the file, line, column and key.
#[test]
fn a_misspelled_password_is_never_quoted_by_the_hook_or_doctor() {
    let env = TestEnv::start();
    for (line, secret) in [
        ("password = 8675309123", "8675309123"),
        ("password = true", "true"),
        ("password = 8675309.125", "8675309"),
        ("password = [\"hunter2\"]", "hunter2"),
        ("password = hunter2", "hunter2"),
    ] {
        std::fs::write(
            &env.config,
            format!("[zvm]\nurl = \"https://127.0.0.1:1\"\n{line}\n"),
        )
        .expect("write config");
        let hook = env.hook(&hook_input(
            "mcp__ssh__exec",
            &serde_json::json!({"host": "jp-ubuntu", "command": "reboot"}),
            "toolu_cfg",
        ));
        assert_eq!(hook.code, 0, "{hook:#?}");
        assert_eq!(hook.decision(), "deny", "{hook:#?}");
        let reason = hook.reason();
        assert!(
            reason.contains("config.toml: line 3 column 12: `zvm.password`"),
            "{reason}"
        );
        assert!(!hook.stdout.contains(secret), "{line}: {hook:#?}");
        assert!(!hook.stderr.contains(secret), "{line}: {hook:#?}");

        let doctor = env.run(&["doctor"], b"");
        doctor.failure();
        assert!(doctor.stdout.contains("`zvm.password`"), "{doctor:#?}");
        assert!(!doctor.stdout.contains(secret), "{line}: {doctor:#?}");
        assert!(!doctor.stderr.contains(secret), "{line}: {doctor:#?}");
    }
}

/// A mutating call for the lab's protected VM.
fn mutating(id: &str) -> Vec<u8> {
    hook_input(
        "mcp__ssh__exec",
        &serde_json::json!({"host": "jp-ubuntu", "command": "systemctl restart app"}),
        id,
    )
}

/// Without `$HOME` (and no XDG variables) there is no directory of the user's own: the
/// mutating call is denied saying so, never guarded from a shared temporary directory.
#[test]
fn without_home_a_mutating_call_is_denied_saying_why() {
    let env = TestEnv::start();
    let mut cmd = env.command(&["hook"]);
    cmd.env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME");
    let run = support::run(cmd, &mutating("toolu_nohome"));
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.decision(), "deny", "{run:#?}");
    assert!(
        run.reason()
            .contains("neither $XDG_CACHE_HOME nor $HOME is set"),
        "{run:#?}"
    );
    // A relative XDG directory is ignored, as the specification says.
    let mut cmd = env.command(&["hook"]);
    cmd.env_remove("HOME")
        .env("XDG_CACHE_HOME", "cache")
        .env_remove("XDG_STATE_HOME");
    let run = support::run(cmd, &mutating("toolu_relative"));
    assert_eq!(run.decision(), "deny", "{run:#?}");
}

/// Without XDG variables the token cache and the sessions live where the XDG base directory
/// specification puts them under `$HOME`: the token cache in `~/.cache/rewind`, the default
/// audit trail in `~/.local/state/rewind`.
#[cfg(target_os = "linux")]
#[test]
fn without_xdg_variables_the_directories_are_the_xdg_defaults_under_home() {
    let env = TestEnv::start();
    let config = std::fs::read_to_string(&env.config).expect("config");
    let without_audit_log: Vec<&str> = config
        .lines()
        .filter(|l| !l.trim_start().starts_with("audit_log"))
        .collect();
    std::fs::write(&env.config, without_audit_log.join("\n")).expect("write config");
    let home = env.path("home");
    let mut cmd = env.command(&["hook"]);
    cmd.env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME");
    let run = support::run(cmd, &mutating("toolu_xdg_defaults"));
    assert!(run.stdout.contains("checkpoint confirmed"), "{run:#?}");
    let listed = |dir: &str| {
        std::fs::read_dir(home.join(dir))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert!(
        !listed(".cache/rewind").is_empty(),
        "{:?}",
        listed(".cache")
    );
    assert!(
        !listed(".local/state/rewind").is_empty(),
        "{:?}",
        listed(".local/state")
    );
    assert!(!env.path("cache").exists() && !env.path("state/rewind").exists());
}

/// A cache or state directory that group or others can write (or another user owns) is
/// refused: whoever writes there can swap the token cache, a lock or the audit trail.
#[cfg(unix)]
#[test]
fn directories_others_can_write_are_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::start();
    let cache = env.path("cache/rewind");
    std::fs::create_dir_all(&cache).expect("cache");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o775)).expect("chmod");
    let run = env.hook(&mutating("toolu_shared_cache"));
    assert_eq!(run.decision(), "deny", "{run:#?}");
    assert!(run.reason().contains("group or others"), "{run:#?}");
    assert!(!cache.join("locks").exists(), "nothing created in it");

    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let state = env.path("state");
    std::fs::create_dir_all(&state).expect("state");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let run = env.hook(&mutating("toolu_shared_state"));
    assert!(
        run.reason().contains("toolu_shared_state"),
        "guarded: {run:#?}"
    );
    assert!(
        run.stderr.contains("audit trail not written") && run.stderr.contains("group or others"),
        "{run:#?}"
    );
    let trail = std::fs::read_to_string(state.join("audit.jsonl")).unwrap_or_default();
    assert!(!trail.contains("toolu_shared_state"), "{trail}");
}

/// A symbolic link planted where the audit trail goes does not redirect the append.
#[cfg(unix)]
#[test]
fn a_planted_link_does_not_redirect_the_audit_trail() {
    let env = TestEnv::start();
    let victim = env.path("victim");
    std::fs::write(&victim, b"precious\n").expect("victim");
    let state = env.path("state");
    std::fs::create_dir_all(&state).expect("state");
    std::os::unix::fs::symlink(&victim, state.join("audit.jsonl")).expect("plant");
    let run = env.hook(&hook_input(
        "mcp__ssh__read_file",
        &serde_json::json!({"host": "jp-ubuntu", "path": "/etc/hostname"}),
        "toolu_link",
    ));
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stderr.contains("audit trail not written"), "{run:#?}");
    assert_eq!(std::fs::read(&victim).expect("victim"), b"precious\n");
}

/// Runs the hook and kills it if it has not answered within a minute (a hang guard, not a
/// timing assertion): a hook that never answers is the failure under test.
fn hook_or_hang(env: &TestEnv, config: &std::path::Path) -> Option<support::Run> {
    hook_or_hang_with(env, config, &mutating("toolu_odd_config"))
}

/// [`hook_or_hang`] with a payload of the caller's.
fn hook_or_hang_with(
    env: &TestEnv,
    config: &std::path::Path,
    payload: &[u8],
) -> Option<support::Run> {
    hook_or_hang_in(env, config, payload, &[])
}

/// [`hook_or_hang_with`] with more environment variables.
fn hook_or_hang_in(
    env: &TestEnv,
    config: &std::path::Path,
    payload: &[u8],
    vars: &[(&str, &std::path::Path)],
) -> Option<support::Run> {
    use std::io::Write as _;
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut cmd = env.command(&["hook"]);
    cmd.envs(vars.iter().copied());
    cmd.env("REWIND_CONFIG", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("rewind starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(payload).expect("write");
    drop(stdin);
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("output");
    let ended = std::time::Instant::now();
    Some(support::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: ended - started,
        ended,
    })
}

/// A FIFO, a file far too large and a directory, each named `<prefix>fifo.toml` and so on.
#[cfg(unix)]
fn odd_files(env: &TestEnv, prefix: &str) -> [std::path::PathBuf; 3] {
    let fifo = env.path(&format!("{prefix}fifo.toml"));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let huge = env.path(&format!("{prefix}huge.toml"));
    std::fs::write(&huge, "#".repeat(8 * 1024 * 1024)).expect("write");
    let dir = env.path(&format!("{prefix}dir.toml"));
    std::fs::create_dir(&dir).expect("mkdir");
    [fifo, huge, dir]
}

/// A configuration or catalog file that is a FIFO, a directory or far too large is a deny
/// naming the file: never a read that blocks forever (no answer lets the call run on hosts
/// that fail open) nor a parse that outlasts the budget.
#[cfg(unix)]
#[test]
fn a_config_or_catalog_that_is_a_fifo_or_huge_is_denied_not_waited_on() {
    let env = TestEnv::start();
    let [fifo, huge, dir] = odd_files(&env, "");
    let real = std::fs::read_to_string(&env.config).expect("config");
    for (n, odd) in [&fifo, &huge, &dir].into_iter().enumerate() {
        // As the config file itself, and as a catalog the config names.
        let with_catalog = env.path(&format!("with-catalog-{n}.toml"));
        std::fs::write(
            &with_catalog,
            real.replace(
                "[hook]\n",
                &format!("[hook]\ncatalogs = [{:?}]\n", odd.display().to_string()),
            ),
        )
        .expect("write");
        for config in [odd, &with_catalog] {
            let run = hook_or_hang(&env, config)
                .unwrap_or_else(|| panic!("no answer with {}", config.display()));
            assert_eq!(run.code, 0, "{run:#?}");
            assert_eq!(run.decision(), "deny", "{run:#?}");
            assert!(
                run.reason().contains(&odd.display().to_string()),
                "names the file: {run:#?}"
            );
        }
    }
    // The one server config a catalog may name (tufantunc/ssh-mcp's profiles) is read the
    // same way.
    for odd in [&fifo, &huge, &dir] {
        let catalog = env.path("ssh-mcp.toml");
        std::fs::write(
            &catalog,
            format!(
                "[[server]]\nname = \"ssh-mcp\"\nssh_mcp_config = {:?}\n",
                odd.display().to_string()
            ),
        )
        .expect("write");
        let config = env.path("with-ssh-mcp.toml");
        std::fs::write(
            &config,
            real.replace(
                "[hook]\n",
                &format!("[hook]\ncatalogs = [{:?}]\n", catalog.display().to_string()),
            ),
        )
        .expect("write");
        let run = hook_or_hang(&env, &config)
            .unwrap_or_else(|| panic!("no answer with ssh_mcp_config {}", odd.display()));
        assert_eq!(run.code, 0, "{run:#?}");
        assert_ne!(run.decision(), "none", "{run:#?}");
    }
    assert!(env.sim.inserts().is_empty());
}

/// A shell catalog (`[shell] catalogs`) that is a FIFO, a directory or far too large: a shell
/// call is denied naming the file, never a read that blocks the hook (the catalogs are read
/// before any watchdog runs).
#[cfg(unix)]
#[test]
fn a_shell_catalog_that_is_a_fifo_or_huge_is_denied_not_waited_on() {
    let env = TestEnv::start();
    let [fifo, huge, dir] = odd_files(&env, "shell-");
    let real = std::fs::read_to_string(&env.config).expect("config");
    let call = hook_input(
        "Bash",
        &serde_json::json!({"command": "ssh jp-ubuntu sudo reboot"}),
        "toolu_shell_odd",
    );
    for (n, odd) in [&fifo, &huge, &dir].into_iter().enumerate() {
        let config = env.path(&format!("with-shell-catalog-{n}.toml"));
        std::fs::write(
            &config,
            format!(
                "{real}\n[shell]\ncatalogs = [{:?}]\n",
                odd.display().to_string()
            ),
        )
        .expect("write");
        let run = hook_or_hang_with(&env, &config, &call)
            .unwrap_or_else(|| panic!("no answer with shell catalog {}", odd.display()));
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(run.decision(), "deny", "{run:#?}");
        assert!(
            run.reason().contains(&odd.display().to_string()),
            "names the file: {run:#?}"
        );
    }
    assert!(env.sim.inserts().is_empty());
}

/// An Ansible inventory that is a FIFO or far too large asks, naming it; an `ansible.cfg`
/// that is a FIFO is passed over like an unreadable one. Neither is a read that holds the
/// hook until its budget runs out.
#[cfg(unix)]
#[test]
fn an_inventory_or_ansible_cfg_that_is_a_fifo_or_huge_is_not_waited_on() {
    let env = TestEnv::start();
    let [fifo, huge, _] = odd_files(&env, "inventory-");
    let real = std::fs::read_to_string(&env.config).expect("config");
    let call = hook_input(
        "Bash",
        &serde_json::json!({"command": "ansible webservers -m shell -a 'sudo reboot'"}),
        "toolu_inventory_odd",
    );
    for (n, odd) in [&fifo, &huge].into_iter().enumerate() {
        let config = env.path(&format!("with-inventory-{n}.toml"));
        std::fs::write(
            &config,
            format!(
                "{real}\n[shell]\nansible_inventory = {:?}\n",
                odd.display().to_string()
            ),
        )
        .expect("write");
        let run = hook_or_hang_with(&env, &config, &call)
            .unwrap_or_else(|| panic!("no answer with inventory {}", odd.display()));
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(run.decision(), "ask", "{run:#?}");
        assert!(
            run.reason().contains(&odd.display().to_string()),
            "names the inventory: {run:#?}"
        );
    }
    let run = hook_or_hang_in(&env, &env.config, &call, &[("ANSIBLE_CONFIG", &fifo)])
        .expect("an answer with ANSIBLE_CONFIG naming a FIFO");
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.decision(),
        "ask",
        "no inventory to expand the group: {run:#?}"
    );
    assert!(env.sim.inserts().is_empty());
}

/// An unset password variable is traced back to the setting and the file that name it, in
/// an operator command and in the hook's deny alike: "the config" did not say which file
/// (the hook's is pinned by install, not necessarily the one the person edits) or which key.
#[test]
fn an_unset_password_variable_names_the_setting_and_the_file() {
    let env = TestEnv::start();
    let expected = format!(
        "environment variable REWIND_ZVM_PASSWORD (named by [zvm] password_env in {}) is not set",
        env.config.display()
    );
    let mut cmd = env.command(&["find", "jp-ubuntu"]);
    cmd.env_remove("REWIND_ZVM_PASSWORD");
    let run = support::run(cmd, b"");
    assert_eq!(run.code, 5, "a configuration that cannot be used: {run:#?}");
    assert!(run.stderr.contains(&expected), "{run:#?}");

    let mut cmd = env.command(&["hook"]);
    cmd.env_remove("REWIND_ZVM_PASSWORD");
    let run = support::run(
        cmd,
        &hook_input(
            "mcp__ssh__exec",
            &serde_json::json!({"host": "jp-ubuntu", "command": "reboot"}),
            "toolu_unset_password",
        ),
    );
    run.success();
    assert_eq!(run.decision(), "deny", "{run:#?}");
    assert!(run.reason().contains(&expected), "{run:#?}");
}
