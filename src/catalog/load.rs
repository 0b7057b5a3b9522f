//! Reading catalog files: the TOML as written (`Raw*`, unknown keys rejected), then checked
//! into [`Entry`]s. Every error names the file and the entry.

use std::path::Path;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use super::{Class, Entry, Platform};
use crate::shell::Dialect;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    mutating: Vec<RawEntry>,
    #[serde(default)]
    read_only: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    server: String,
    tool: String,
    #[serde(default)]
    vm_arg: Vec<String>,
    shell_arg: Option<String>,
    shell: Option<Dialect>,
    platform: Option<Platform>,
    note: Option<String>,
}

/// Parses one catalog's text; `origin` names it in errors and in [`Entry::origin`].
pub(super) fn parse(text: &str, origin: &str) -> anyhow::Result<Vec<Entry>> {
    let raw: RawCatalog = toml::from_str(text)
        .map_err(|e| anyhow::anyhow!("catalog {origin}: {}", e.to_string().trim_end()))?;
    let mut entries = Vec::new();
    for (section, class, list) in [
        ("mutating", Class::Mutating, raw.mutating),
        ("read_only", Class::ReadOnly, raw.read_only),
    ] {
        for (index, entry) in list.into_iter().enumerate() {
            let at = format!("catalog {origin}: [[{section}]] #{}", index + 1);
            entries.push(check(entry, class, &at, origin)?);
        }
    }
    for (i, a) in entries.iter().enumerate() {
        if let Some(b) = entries[i + 1..]
            .iter()
            .find(|b| b.server == a.server && b.tool == a.tool)
        {
            bail!(
                "catalog {origin}: server {:?} tool {:?} is listed twice ({} and {}); keep one",
                a.server,
                a.tool,
                a.class,
                b.class
            );
        }
    }
    Ok(entries)
}

/// Reads and parses a catalog file.
pub(super) fn read(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read catalog {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

fn check(raw: RawEntry, class: Class, at: &str, origin: &str) -> anyhow::Result<Entry> {
    let name = format!("{at} (server {:?}, tool {:?})", raw.server, raw.tool);
    for (key, value) in [("server", &raw.server), ("tool", &raw.tool)] {
        if value.trim().is_empty() {
            bail!("{name}: {key} is empty, so the entry can never match");
        }
        if value.chars().any(char::is_whitespace) {
            bail!("{name}: {key} contains white space, which no tool name has");
        }
        if value.contains("**") || value.contains(['[', ']', '{', '}']) {
            bail!("{name}: {key} may only use * and ? as wildcards");
        }
    }
    if raw.server.contains("__") {
        bail!(
            "{name}: server must not contain \"__\" (it separates server and tool in mcp__<server>__<tool>)"
        );
    }
    match (&raw.shell_arg, class) {
        (Some(_), Class::ReadOnly) => {
            bail!("{name}: shell_arg is only read for mutating entries (the command decides)")
        }
        (Some(_), _) if !raw.vm_arg.is_empty() => {
            bail!(
                "{name}: give vm_arg or shell_arg, not both (with shell_arg the command names its targets)"
            )
        }
        (Some(key), _) if key.trim().is_empty() || key == "/" => {
            bail!("{name}: shell_arg {key:?} names no argument")
        }
        (None, _) if raw.shell.is_some() => {
            bail!("{name}: shell is only read with shell_arg")
        }
        _ => {}
    }
    match class {
        Class::Mutating if raw.vm_arg.is_empty() && raw.shell_arg.is_none() => {
            bail!(
                "{name}: a mutating entry needs vm_arg (the argument keys naming the VM) or shell_arg (the argument holding a command)"
            )
        }
        Class::ReadOnly if !raw.vm_arg.is_empty() => {
            bail!("{name}: vm_arg is only read for mutating entries")
        }
        _ => {}
    }
    for key in &raw.vm_arg {
        if key.trim().is_empty() {
            bail!("{name}: vm_arg has an empty key");
        }
        if key.starts_with('/') && key.len() == 1 {
            bail!("{name}: vm_arg {key:?} is not a JSON pointer to a field");
        }
    }
    Ok(Entry {
        class,
        server: raw.server,
        tool: raw.tool,
        vm_arg: raw.vm_arg,
        shell_arg: raw.shell_arg,
        shell: raw.shell.unwrap_or(Dialect::Posix),
        platform: raw.platform.unwrap_or(Platform::Any),
        note: raw.note,
        origin: origin.to_owned(),
        file: 0,
    })
}
