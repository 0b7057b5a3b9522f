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

/// Prints one JSON document on stdout (the `--json` output of a command).
pub fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    crate::console::write_json(&serde_json::to_string_pretty(value)?)?;
    Ok(())
}
