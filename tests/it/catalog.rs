//! Catalog commands and `rewind doctor`, as a user runs them.

use std::path::Path;

use crate::support::{Setup, TestEnv, hook_input};

#[test]
fn catalog_add_teaches_the_hook_a_tool_and_check_explains_it() {
    let env = TestEnv::start();
    let before = env.run(
        &[
            "check",
            "mcp__deploy__push",
            "--input",
            r#"{"target":"jp-ubuntu"}"#,
        ],
        b"",
    );
    before.success();
    assert!(before.stdout.contains("class:    unlisted"), "{before:#?}");

    // No [hook] catalogs in this config: `add` writes the default user catalog, which loads.
    let added = env.run(
        &[
            "catalog",
            "add",
            "mutating",
            "--server",
            "deploy",
            "--tool",
            "push",
            "--vm-arg",
            "target",
            "--note",
            "ships a build",
        ],
        b"",
    );
    added.success();
    assert!(
        env.path("home/.config/rewind/catalog.toml").is_file(),
        "{added:#?}"
    );

    let after = env.run(
        &[
            "check",
            "mcp__deploy__push",
            "--input",
            r#"{"target":"jp-ubuntu"}"#,
        ],
        b"",
    );
    after.success();
    assert!(after.stdout.contains("class:    mutating"), "{after:#?}");
    assert!(
        after
            .stdout
            .contains("VM:       jp-ubuntu (argument `target`)"),
        "{after:#?}"
    );

    let hook = env.hook(&crate::support::hook_input(
        "mcp__deploy__push",
        &serde_json::json!({"target": "jp-ubuntu"}),
        "toolu_d1",
    ));
    assert!(
        hook.reason().contains("tagged checkpoint"),
        "the hook guards it now: {hook:#?}"
    );

    let twice = env.run(
        &[
            "catalog",
            "add",
            "read-only",
            "--server",
            "deploy",
            "--tool",
            "push",
        ],
        b"",
    );
    twice.failure();
    assert!(
        twice.stderr.contains("is already in") && !twice.stderr.contains("listed twice"),
        "a duplicate is named as such, not as a broken file: {twice:#?}"
    );
    let lint = env.run(&["catalog", "lint"], b"");
    lint.success();
    assert!(
        lint.stdout
            .lines()
            .any(|l| l.contains("catalog.toml (1 entry)")),
        "the one entry added, counted in words: {lint:#?}"
    );
}

#[test]
fn catalog_lint_fails_on_a_broken_user_catalog_naming_file_and_key() {
    let env = TestEnv::start();
    let file = env.path("mine.toml");
    std::fs::write(
        &file,
        "[[read_only]]\nserver = \"ssh\"\ntool = \"x\"\nplatfrom = \"linux\"\n",
    )
    .expect("write");
    env.write_config(&Setup {
        hook: format!("catalogs = [{:?}]", file.display().to_string()),
        ..Setup::default()
    });
    let lint = env.run(&["catalog", "lint"], b"");
    lint.failure();
    assert!(
        lint.stdout.contains("ok    builtin:tufantunc-ssh-mcp.toml"),
        "{lint:#?}"
    );
    assert!(
        lint.stdout.contains("mine.toml") && lint.stdout.contains("platfrom"),
        "{lint:#?}"
    );
}

/// Before any install, the hook is the next step of a newcomer's quickstart, not a failure:
/// doctor succeeds and names the install command; a settings file asked about that has no
/// entry still fails.
#[test]
fn doctor_passes_with_the_hook_installed_and_says_install_is_next_without() {
    let env = TestEnv::start();
    let missing = env.run(&["doctor"], b"");
    missing.success();
    assert!(
        missing.stdout.contains(
            "next  hook: not installed yet: `rewind install --host claude-code` (or --host "
        ),
        "{missing:#?}"
    );
    assert!(
        missing.stdout.contains("0 failed, 1 next step") && !missing.stdout.contains("FAIL"),
        "{missing:#?}"
    );
    let empty = env.path("empty-settings.json");
    std::fs::write(&empty, "{}").expect("write");
    let asked = env.run(
        &["doctor", "--settings", empty.to_str().expect("UTF-8")],
        b"",
    );
    asked.failure();
    assert!(
        asked.stdout.contains("FAIL  hook: no rewind hook in "),
        "{asked:#?}"
    );
    assert!(
        missing.stdout.contains("ok    authentication"),
        "{missing:#?}"
    );
    assert!(
        missing.stdout.contains("ok    vpg jp-ubuntu-vpg"),
        "{missing:#?}"
    );

    env.run(&["install", "--scope", "user"], b"").success();
    // The PostToolUse entry records that a call ran.
    let ran = env.run(&["hook"], br#"{"hook_event_name":"PostToolUse","tool_name":"mcp__ssh__exec","tool_input":{},"tool_use_id":"toolu_ran","tool_response":"ok"}"#);
    assert_eq!((ran.code, ran.stdout.trim()), (0, "{}"), "{ran:#?}");
    let log = env.run(
        &[
            "log",
            "--decision",
            "ran",
            "--change",
            "toolu_ran",
            "--json",
        ],
        b"",
    );
    assert_eq!(log.stdout.lines().count(), 1, "{log:#?}");
    let healthy = env.run(&["doctor"], b"");
    healthy.success();
    assert!(healthy.stdout.contains("onFailure block"), "{healthy:#?}");
    assert!(
        !healthy.stdout.contains("no PostToolUse entry"),
        "{healthy:#?}"
    );

    // Without the PostToolUse entry the hook still guards, but doctor says what is lost.
    let settings_path = env.path("home/.claude/settings.json");
    let mut settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).expect("settings"))
            .expect("JSON");
    settings["hooks"]
        .as_object_mut()
        .expect("hooks")
        .remove("PostToolUse");
    std::fs::write(&settings_path, settings.to_string()).expect("write");
    let partial = env.run(&["doctor"], b"");
    partial.success();
    assert!(
        partial
            .stdout
            .contains("warn  hook Claude Code: no PostToolUse entry"),
        "{partial:#?}"
    );

    let untrusted = TestEnv::with(Setup {
        trust_ca: false,
        ..Setup::default()
    });
    let tls = untrusted.run(&["doctor"], b"");
    tls.failure();
    assert!(tls.stdout.contains("FAIL  tls: "), "{tls:#?}");
    assert!(!tls.stdout.contains("ok    tls"), "{tls:#?}");
}

/// Every command `rewind --help` lists is in the guide's command table (docs/commands.md),
/// so the documentation cannot drift from the binary.
#[test]
fn the_command_table_lists_every_command_of_the_help() {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.arg("--help").env_clear();
    let help = crate::support::run(cmd, b"");
    let table = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md");
    let text = std::fs::read_to_string(&table).expect("docs/commands.md");
    let commands: Vec<&str> = help
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 12, "{}", help.stdout);
    for command in commands {
        assert!(
            text.contains(&format!("`rewind {command}")),
            "docs/commands.md lacks `rewind {command}`"
        );
    }
}

/// A later catalog file beats an earlier one even where the earlier entry is more specific,
/// in both directions (read-only over mutating and back), for `check` and the hook alike,
/// and a user file beats the shipped catalogs.
#[test]
fn a_later_catalog_file_beats_an_earlier_more_specific_one() {
    let env = TestEnv::start();
    let first = env.path("first.toml");
    let second = env.path("second.toml");
    std::fs::write(
        &first,
        "[[mutating]]\nserver = \"fs\"\ntool = \"write_log\"\nvm_arg = [\"host\"]\n\n\
         [[read_only]]\nserver = \"fs\"\ntool = \"read_config\"\n",
    )
    .expect("write");
    std::fs::write(
        &second,
        "[[read_only]]\nserver = \"*\"\ntool = \"write_*\"\n\n\
         [[mutating]]\nserver = \"*\"\ntool = \"read_*\"\nvm_arg = [\"host\"]\n\n\
         [[read_only]]\nserver = \"ssh\"\ntool = \"*\"\n",
    )
    .expect("write");
    let class = |tool: &str| {
        let run = env.run(&["check", tool, "--input", r#"{"host":"jp-ubuntu"}"#], b"");
        run.success();
        let line = |prefix: &str| {
            run.stdout
                .lines()
                .find(|l| l.starts_with(prefix))
                .unwrap_or_default()
                .to_owned()
        };
        (line("class:"), line("entry:"))
    };
    let hook = |tool: &str, id: &str| {
        env.hook(&hook_input(
            tool,
            &serde_json::json!({"host": "jp-ubuntu"}),
            id,
        ))
    };
    for (order, later, earlier) in [
        ([&first, &second], "second.toml", "first.toml"),
        ([&second, &first], "first.toml", "second.toml"),
    ] {
        env.write_config(&Setup {
            hook: format!(
                "budget_secs = 30\ncatalogs = [{:?}, {:?}]",
                order[0].display().to_string(),
                order[1].display().to_string()
            ),
            ..Setup::default()
        });
        let (write_class, write_entry) = class("mcp__fs__write_log");
        let (read_class, read_entry) = class("mcp__fs__read_config");
        if later == "second.toml" {
            // The later file's wildcards beat the earlier file's exact names.
            assert_eq!(write_class, "class:    read-only");
            assert_eq!(read_class, "class:    mutating");
            assert_eq!(hook("mcp__fs__write_log", "toolu_p1").stdout.trim(), "{}");
            let guarded = hook("mcp__fs__read_config", "toolu_p2");
            assert!(guarded.reason().contains("toolu_p2"), "{guarded:#?}");
            // The user file's `ssh *` read-only beats the shipped, more specific `ssh exec`.
            let (ssh_class, ssh_entry) = class("mcp__ssh__exec");
            assert_eq!(ssh_class, "class:    read-only");
            assert!(ssh_entry.contains(later), "{ssh_entry}");
        } else {
            assert_eq!(write_class, "class:    mutating");
            assert_eq!(read_class, "class:    read-only");
            assert_eq!(hook("mcp__fs__read_config", "toolu_p3").stdout.trim(), "{}");
            let guarded = hook("mcp__fs__write_log", "toolu_p4");
            assert!(guarded.reason().contains("toolu_p4"), "{guarded:#?}");
        }
        assert!(write_entry.contains(later), "{write_entry}");
        assert!(read_entry.contains(later), "{read_entry}");
        assert!(!read_entry.contains(earlier), "{read_entry}");
    }
}

#[test]
fn catalog_add_names_the_missing_flag_and_a_duplicate() {
    let env = TestEnv::start();
    let missing = env.run(
        &[
            "catalog", "add", "mutating", "--server", "foo", "--tool", "bar",
        ],
        b"",
    );
    missing.failure();
    assert!(missing.stderr.contains("--vm-arg"), "{missing:#?}");
    env.run(
        &[
            "catalog", "add", "mutating", "--server", "foo", "--tool", "bar", "--vm-arg", "host",
        ],
        b"",
    )
    .success();
    let twice = env.run(
        &[
            "catalog",
            "add",
            "read-only",
            "--server",
            "foo",
            "--tool",
            "bar",
        ],
        b"",
    );
    twice.failure();
    assert!(
        twice.stderr.contains("already in") && twice.stderr.contains("nothing was written"),
        "{twice:#?}"
    );
}

/// The commands a `--help` lists, each with its path (`["flr", "list"]`).
fn commands_of(path: &[String]) -> Vec<Vec<String>> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.args(path).arg("--help").env_clear();
    let help = crate::support::run(cmd, b"");
    help.stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(|c| {
            let mut sub = path.to_vec();
            sub.push(c.to_owned());
            sub
        })
        .collect()
}

/// Every subcommand's `--help`, as the binary prints it, ends with examples; the top-level
/// help says where the configuration is looked for, in order.
#[test]
fn every_subcommands_help_has_examples() {
    let mut todo = commands_of(&[]);
    assert!(todo.len() >= 12, "{todo:?}");
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
        cmd.args(&path).arg("--help").env_clear();
        let help = crate::support::run(cmd, b"");
        assert!(
            help.stdout.contains("\nExamples:\n  "),
            "rewind {}:\n{}",
            path.join(" "),
            help.stdout
        );
        todo.extend(commands_of(&path));
        seen += 1;
    }
    assert!(seen >= 25, "{seen}");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.arg("--help").env_clear();
    let top = crate::support::run(cmd, b"").stdout;
    assert!(
        top.contains("--config FILE, $REWIND_CONFIG, ./.rewind.toml (not read by the hook), ~/.config/rewind/config.toml, /etc/rewind/config.toml"),
        "{top}"
    );
}

/// `rewind check --command` answers as the hook's shell tool does, self-guard included: a
/// command that switches the hook off is asked about by both, and a read-only one by neither.
#[test]
fn check_command_applies_the_self_guard_as_the_hook_does() {
    let env = TestEnv::start();
    for (command, decided) in [
        ("rm -f ~/.claude/settings.json", "ask"),
        ("d=~/.claude; echo '{}' > $d/settings.json", "ask"),
        ("cat ~/.claude/settings.json", "none"),
    ] {
        let hook = env.hook(&hook_input(
            "Bash",
            &serde_json::json!({ "command": command }),
            "toolu_c1",
        ));
        assert_eq!(hook.decision(), decided, "{command}: {hook:#?}");
        let check = env.run(&["check", "--command", command], b"");
        check.success();
        let said = check
            .stdout
            .lines()
            .find_map(|line| line.strip_prefix("decision: "))
            .unwrap_or_default();
        assert!(said.starts_with(decided), "{command}: {check:#?}");
        if decided == "ask" {
            assert!(said.contains("hook settings"), "{command}: {check:#?}");
        }
    }
}
