//! The Debian package: what `[package.metadata.deb]` ships exists, the man pages `rewind man`
//! writes cover every command, and the `/etc/rewind/config.toml` it installs sets nothing and
//! lets no change to a VM through unguarded.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::{hook_input, run};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The binary with a clean environment and an empty home, so that no configuration but the
/// one it is given can be found.
fn rewind(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rewind"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .current_dir(home)
        .args(args);
    cmd
}

/// The commands `rewind --help` lists.
fn commands_of_the_help(home: &Path) -> Vec<String> {
    let help = run(rewind(home, &["--help"]), b"");
    help.success();
    help.stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn man_writes_a_page_for_rewind_and_every_command_of_the_help() {
    let home = tempfile::tempdir().expect("a temporary directory");
    let out = home.path().join("man");
    let made = run(
        rewind(home.path(), &["man", out.to_str().expect("UTF-8")]),
        b"",
    );
    made.success();
    assert!(made.stdout.is_empty(), "{made:#?}");
    let page = |name: &str| {
        std::fs::read_to_string(out.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}\n{made:#?}"))
    };
    let top = page("rewind");
    assert!(top.contains(".TH rewind 1"), "{top}");
    let commands = commands_of_the_help(home.path());
    assert!(commands.len() >= 12, "{commands:?}");
    for command in &commands {
        let text = page(&format!("rewind-{command}"));
        assert!(text.contains(".SH NAME"), "rewind-{command}.1:\n{text}");
        // The header names the version; the page offers no --version the command lacks.
        let version = env!("CARGO_PKG_VERSION");
        let header = text
            .lines()
            .find(|l| l.starts_with(".TH "))
            .unwrap_or_default();
        assert!(
            header.ends_with(&format!(" {version}\" ")),
            "rewind-{command}.1: {header}"
        );
        assert!(
            !text.contains("\\-\\-version"),
            "rewind-{command}.1:\n{text}"
        );
        assert!(
            top.contains(&format!("rewind-{command}(1)").replace('-', "\\-")),
            "rewind.1 does not point at rewind-{command}(1)"
        );
    }
    // Each subcommand of a command group has its own page, and hidden commands have none.
    for name in ["rewind-flr-list", "rewind-flr-end", "rewind-catalog-scan"] {
        page(name);
    }
    for hidden in ["rewind-hook-guard", "rewind-man", "rewind-help"] {
        assert!(!out.join(format!("{hidden}.1")).exists(), "{hidden}.1");
    }
    // rewind-hook(1) gives the command line the hosts run, which `rewind-hook` alone accepts.
    let hook = page("rewind-hook");
    assert!(
        hook.contains("rewind\\-hook [\\-\\-config FILE] hook [\\-\\-host HOST] [\\-\\-managed]"),
        "{hook}"
    );
    assert!(
        !hook.contains("\\-\\-help"),
        "rewind-hook takes no --help:\n{hook}"
    );
    let pages = std::fs::read_dir(&out).expect("the pages").count();
    assert!(
        made.stderr.contains(&format!("{pages} man pages in ")),
        "{made:#?}"
    );
}

#[test]
fn man_says_why_it_cannot_write_its_pages() {
    let home = tempfile::tempdir().expect("a temporary directory");
    let file = home.path().join("a-file");
    std::fs::write(&file, "").expect("a file");
    let made = run(
        rewind(home.path(), &["man", file.to_str().expect("UTF-8")]),
        b"",
    );
    assert_eq!(made.code, 1, "{made:#?}");
    assert!(made.stderr.contains("a-file"), "{made:#?}");
}

/// The file the package installs as /etc/rewind/config.toml.
fn packaged_config() -> PathBuf {
    root().join("contrib/deb/config.toml")
}

/// As shipped, the system configuration sets nothing: a call that changes a VM is denied
/// (there is no ZVM to checkpoint it on), and a call that changes none goes on.
#[test]
fn the_packaged_config_lets_no_change_to_a_vm_through() {
    let home = tempfile::tempdir().expect("a temporary directory");
    let config = packaged_config();
    let config = config.to_str().expect("UTF-8");
    let change = hook_input(
        "mcp__ssh__exec",
        &json!({"host": "web01", "command": "sudo reboot"}),
        "toolu_packaged1",
    );
    let hook = run(rewind(home.path(), &["--config", config, "hook"]), &change);
    hook.success();
    assert_eq!(hook.decision(), "deny", "{hook:#?}");
    assert!(hook.reason().contains("[zvm]"), "{hook:#?}");
    let read = hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "web01", "path": "/etc/hostname"}),
        "toolu_packaged2",
    );
    let hook = run(rewind(home.path(), &["--config", config, "hook"]), &read);
    hook.success();
    assert_eq!(hook.decision(), "none", "{hook:#?}");
    let lint = run(
        rewind(home.path(), &["--config", config, "catalog", "lint"]),
        b"",
    );
    lint.success();
    assert!(!lint.stderr.contains("warning"), "{lint:#?}");
}

/// Every setting the packaged file shows commented out is a real key with a value rewind
/// takes: with each one uncommented, the file still loads, without a warning.
#[test]
fn every_setting_the_packaged_config_shows_is_one_rewind_reads() {
    let text = std::fs::read_to_string(packaged_config()).expect("contrib/deb/config.toml");
    let setting = regex::Regex::new(r#"^# (\[[a-z_]+\]|"?[a-z_.]+"? = .+)$"#).expect("regex");
    let mut shown = 0;
    let uncommented: String = text
        .lines()
        .map(|line| {
            if setting.is_match(line) {
                shown += 1;
                format!("{}\n", &line[2..])
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert!(shown >= 20, "only {shown} settings found:\n{uncommented}");
    let home = tempfile::tempdir().expect("a temporary directory");
    let file = home.path().join("config.toml");
    std::fs::write(&file, &uncommented).expect("a config");
    let lint = run(
        rewind(
            home.path(),
            &["--config", file.to_str().expect("UTF-8"), "catalog", "lint"],
        ),
        b"",
    );
    lint.success();
    assert!(!lint.stderr.contains("warning"), "{lint:#?}\n{uncommented}");
}

/// What `[package.metadata.deb]` lists: every file it names from the source tree exists
/// (the ones from `target/release` are built by contrib/deb/build), the configuration is a
/// conffile, and the broker's unit, moved to /usr/bin by the package's drop-in, runs the same
/// command line as the unit shipped for a copy installed by hand.
#[test]
fn the_package_ships_files_that_exist() {
    let manifest: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("Cargo.toml parses");
    let deb = manifest
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("deb"))
        .expect("[package.metadata.deb]");
    let assets = deb
        .get("assets")
        .and_then(toml::Value::as_array)
        .expect("assets");
    let mut targets = Vec::new();
    for asset in assets {
        let [source, target, mode] = asset.as_array().expect("[source, target, mode]").as_slice()
        else {
            panic!("{asset:?}");
        };
        let (source, target) = (
            source.as_str().expect("a source"),
            target.as_str().expect("a target"),
        );
        assert!(matches!(mode.as_str(), Some("644" | "755")), "{asset:?}");
        targets.push(target.to_owned());
        if let Some(built) = source.strip_prefix("target/release/") {
            let name = built.split('/').next().expect("a name");
            assert!(
                ["rewind", "rewind-hook", "rewind-mcp", "deb-assets"].contains(&name),
                "{source}: not built by contrib/deb/build"
            );
            continue;
        }
        let (dir, pattern) = source.rsplit_once('/').unwrap_or(("", source));
        let matched = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|e| panic!("{source}: {e}"))
            .filter_map(Result::ok)
            .filter(|entry| entry.path().is_file())
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_str().expect("UTF-8");
                match pattern.split_once('*') {
                    Some((start, end)) => name.starts_with(start) && name.ends_with(end),
                    None => name == pattern,
                }
            })
            .count();
        assert!(matched > 0, "{source} names no file");
    }
    for bin in ["rewind", "rewind-hook", "rewind-mcp"] {
        assert!(
            assets
                .iter()
                .any(|a| a[0].as_str() == Some(&format!("target/release/{bin}"))),
            "{bin} is not shipped"
        );
    }
    let conffiles = deb
        .get("conf-files")
        .and_then(toml::Value::as_array)
        .expect("conf-files");
    assert_eq!(conffiles, &[toml::Value::from("/etc/rewind/config.toml")]);
    assert!(
        targets.contains(&String::from("etc/rewind/config.toml")),
        "{targets:?}"
    );

    let exec_start = |path: &str| -> String {
        let text = std::fs::read_to_string(root().join(path)).expect("a unit");
        text.lines()
            .filter_map(|l| l.strip_prefix("ExecStart="))
            .rfind(|l| !l.is_empty())
            .unwrap_or_else(|| panic!("{path} has no ExecStart"))
            .to_owned()
    };
    let by_hand = exec_start("contrib/systemd/rewind-broker.service");
    let packaged = exec_start("contrib/deb/rewind-broker.service.d/package.conf");
    assert_eq!(
        packaged,
        by_hand.replacen("/usr/local/bin/rewind ", "/usr/bin/rewind ", 1)
    );
    assert_ne!(packaged, by_hand);
}
