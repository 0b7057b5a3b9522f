//! The operator's commands (everything but `hook`, `sim` and `recover`): they print for a
//! person on stdout and return errors for `run` to report.

pub mod catalog;
pub mod demo;
pub mod doctor;
pub mod install;
pub mod log;
pub mod managed;
pub mod mcp;
pub mod selftest;
pub mod trust;
pub mod zerto;

use std::fmt::Display;

use crate::config::Config;
use crate::zvm::Client;

/// Prints one line of a command's output for a person.
pub fn say(line: impl Display) {
    crate::console::say(line);
}

/// Says the configuration's warnings on stderr, as every run must.
pub fn warn_config(config: &Config) {
    for warning in &config.warnings {
        crate::console::err(format!("warning: {warning}"));
    }
}

/// A ZVM client from the configuration.
pub fn client(config: &Config) -> anyhow::Result<Client> {
    let zvm = config.require_zvm()?;
    Ok(Client::new(zvm, &crate::config::cache_dir()?)?)
}

/// Writes `<file>.rewind-backup-<UTC time>` (with `-2`, `-3`… when taken), owner-only.
pub fn keep_backup(path: &std::path::Path, contents: &str) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context as _;
    use std::io::Write as _;
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        .to_string()
        .replace([':', '-'], "");
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for n in 1..1000 {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = path.with_file_name(format!("{name}.rewind-backup-{stamp}{suffix}"));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        crate::platform::create_with_mode(&mut options, 0o600);
        match options.open(&candidate) {
            Ok(mut file) => {
                file.write_all(contents.as_bytes())
                    .with_context(|| format!("cannot write the backup {}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot write the backup {}", candidate.display()));
            }
        }
    }
    anyhow::bail!("too many backups of {} this second", path.display())
}

/// Replaces a file's contents atomically (a temporary file beside it, renamed over it),
/// keeping the original's permissions; a new file gets owner-only permissions. A symbolic
/// link (dotfiles kept elsewhere) is written through, so the link stays a link; a link to
/// nothing is refused rather than replaced by a file.
pub fn replace_keeping_mode(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use std::io::Write as _;
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            resolved = std::fs::canonicalize(path).with_context(|| {
                format!(
                    "{} is a symbolic link to {}, which cannot be reached; not replacing the link",
                    path.display(),
                    std::fs::read_link(path).unwrap_or_default().display()
                )
            })?;
            resolved.as_path()
        }
        _ => path,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let permissions = match std::fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write beside {}", path.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(tmp.path(), permissions)
            .with_context(|| format!("cannot set the mode of {}", tmp.path().display()))?;
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// `rewind completions <shell>`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<()> {
    use clap::CommandFactory as _;
    let mut script = Vec::new();
    clap_complete::generate(
        shell,
        &mut crate::cli::Cli::command(),
        "rewind",
        &mut script,
    );
    let text = String::from_utf8(script)?;
    crate::console::write_line(text.trim_end())?;
    Ok(())
}

/// `rewind man <DIR>`: a man page for `rewind` and each command it lists (`rewind-install.1`,
/// `rewind-flr-list.1`, …), written into `dir`, made from the command-line definition itself,
/// so that it says what `--help` says. The binaries installed beside `rewind` are named as
/// the commands they stand for: `rewind-mcp.1` is `rewind mcp`'s page, and `rewind-hook.1`
/// says how the hosts run the hook.
pub fn man_pages(dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use clap::CommandFactory as _;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let written = |e: std::io::Error| anyhow::anyhow!("cannot write into {}: {e}", dir.display());
    clap_mangen::generate_to(versioned(crate::cli::Cli::command()), dir).map_err(written)?;
    clap_mangen::Man::new(hook_command())
        .generate_to(dir)
        .map_err(written)?;
    let count = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "1"))
        .count();
    crate::console::err(format!("{count} man pages in {}", dir.display()));
    Ok(())
}

/// `command` with its version given to every command under it, for their pages' headers
/// (clap gives it only to the top), and no `--version` option added to them: the commands
/// themselves take none.
fn versioned(command: clap::Command) -> clap::Command {
    command.mut_subcommands(|sub| {
        versioned(
            sub.version(env!("CARGO_PKG_VERSION"))
                .disable_version_flag(true),
        )
    })
}

/// `rewind-hook`'s command line, for its man page (`rewind-hook.1`, which stands for `rewind
/// hook` too: the two answer alike). The binary parses it by hand and links no command-line
/// parser (see src/bin/rewind-hook.rs), so it takes no `--help` or `--version` either.
fn hook_command() -> clap::Command {
    use clap::{Arg, ArgAction};
    clap::Command::new("rewind-hook")
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_flag(true)
        .disable_version_flag(true)
        .about("Decide on one tool call: the host's pre-tool-use JSON on stdin, the decision on stdout")
        .long_about(
            "rewind-hook [--config FILE] hook [--host HOST] [--managed]\n\n\
             The pre-tool-use hook, as agent hosts run it: `rewind install` writes this command \
             line into each host's settings. It answers exactly as `rewind hook` does, from a \
             binary that starts faster on every tool call. A call that needs checkpoints has \
             `rewind`, installed beside it, take them. Any other command line is a usage error \
             (exit 2, one line on stderr), so the host blocks the call rather than running it \
             unguarded. Every decision and exit code: /usr/share/doc/rewind/docs/decisions.md.",
        )
        .arg(
            Arg::new("config")
                .long("config")
                .value_name("FILE")
                .help("The configuration file [default: $REWIND_CONFIG, ~/.config/rewind/config.toml, /etc/rewind/config.toml]"),
        )
        .arg(
            Arg::new("host")
                .long("host")
                .value_name("HOST")
                .value_parser(["claude-code", "codex", "gemini", "copilot", "cursor"])
                .help("The agent host calling the hook [default: recognised from the payload; refused when it cannot be told]"),
        )
        .arg(
            Arg::new("managed")
                .long("managed")
                .action(ArgAction::SetTrue)
                .help("Run from a managed (administrator) entry: read only the --config file, and deny every call when anyone but root can change it"),
        )
}

/// Prints one JSON document on stdout (the `--json` output of a command).
pub fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    crate::console::write_json(&serde_json::to_string_pretty(value)?)?;
    Ok(())
}
