//! Reading catalog files: the TOML as written (`Raw*`, unknown keys rejected), then checked
//! into [`Entry`]s. Every error names the file and the entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;

use super::{Entry, Platform, ServerBinding, ToolClass, same_server};
use crate::shell::dialect::Dialect;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    mutating: Vec<RawEntry>,
    #[serde(default)]
    read_only: Vec<RawEntry>,
    #[serde(default)]
    server: Vec<RawServer>,
}

/// `[[server]]`: a server started for one host.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    vm: Option<String>,
    ssh_mcp_config: Option<String>,
}

/// The part of tufantunc/ssh-mcp's own `config.toml` (v2) that says which host a profile is.
#[derive(Deserialize)]
struct SshMcpConfig {
    #[serde(default)]
    defaults: SshMcpDefaults,
    #[serde(default)]
    profiles: Vec<SshMcpProfile>,
}

#[derive(Deserialize, Default)]
struct SshMcpDefaults {
    #[serde(rename = "defaultProfile")]
    default_profile: Option<String>,
}

#[derive(Deserialize)]
struct SshMcpProfile {
    name: String,
    host: String,
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
    #[serde(default)]
    bound_at_start: bool,
    opens_session: Option<String>,
    #[serde(default)]
    session_arg: Vec<String>,
    ask: Option<String>,
}

/// Parses one catalog's text; `origin` names it in errors and in [`Entry::origin`].
pub(super) fn parse(text: &str, origin: &str) -> anyhow::Result<(Vec<Entry>, Vec<ServerBinding>)> {
    let raw: RawCatalog = toml::from_str(text).map_err(|e| {
        let message = e.to_string();
        let mean = crate::suggest::unknown_field(&message)
            .map_or_else(String::new, |m| format!("\ndid you mean `{m}`?"));
        anyhow::anyhow!("catalog {origin}: {}{mean}", message.trim_end())
    })?;
    checked(raw, origin)
}

/// Reads a shipped catalog as the build compiled it (its TOML as JSON, see `build.rs`), with
/// the same checks as [`parse`].
pub(super) fn parse_compiled(
    json: &str,
    origin: &str,
) -> anyhow::Result<(Vec<Entry>, Vec<ServerBinding>)> {
    let raw: RawCatalog = serde_json::from_str(json)
        .map_err(|e| anyhow::anyhow!("catalog {origin} (as compiled): {e}"))?;
    checked(raw, origin)
}

/// Reads, of a shipped catalog's compiled index (`<name>.entries`, see `build.rs`), the
/// entries whose server pattern `server_wanted` and tool pattern `tool_wanted` accept, in the
/// order [`parse_compiled`] gives them; `None` when the file is not indexed line by line (it
/// binds servers), so that it must be read whole. The entries are not checked again: the
/// shipped catalogs are checked where they are built and tested (each compiled file equal to
/// its source, every shipped file valid), and the text is compiled in, so a check here could
/// only ever pass.
pub(super) fn indexed_entries(
    index: &str,
    origin: &str,
    server_wanted: impl Fn(&str) -> bool,
    tool_wanted: impl Fn(&str) -> bool,
) -> Option<anyhow::Result<Vec<Entry>>> {
    let mut entries = Vec::new();
    let mut rest = index;
    // A catalog's entries mostly name one server pattern: a run of entries with the same
    // pattern asks its match once.
    let mut last_server: Option<(&str, bool)> = None;
    while !rest.is_empty() {
        let (section, after) = split_tab(rest)?;
        let (server, after) = split_tab(after)?;
        let (tool, after) = split_tab(after)?;
        let (length, after) = split_tab(after)?;
        let json = after.get(..length.parse().ok()?)?;
        rest = after[json.len()..].strip_prefix('\n')?;
        let class = match section {
            "mutating" => ToolClass::Mutating,
            "read_only" => ToolClass::ReadOnly,
            _ => return None,
        };
        let server_matches = match last_server {
            Some((pattern, answer)) if pattern == server => answer,
            _ => {
                let answer = server_wanted(server);
                last_server = Some((server, answer));
                answer
            }
        };
        if !server_matches || !tool_wanted(tool) {
            continue;
        }
        match serde_json::from_str::<RawEntry>(json) {
            Ok(raw) => entries.push(into_entry(raw, class, origin)),
            Err(e) => {
                return Some(Err(anyhow::anyhow!("catalog {origin} (as compiled): {e}")));
            }
        }
    }
    Some(Ok(entries))
}

/// `text` before and after its first tab. A byte loop: the fields are a few bytes long, and
/// `split_once('\t')` sets up a search of the whole rest of the index for each.
fn split_tab(text: &str) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == b'\t')?;
    Some((&text[..at], &text[at + 1..]))
}

/// A catalog's entries and bindings, checked one by one and against each other.
fn checked(raw: RawCatalog, origin: &str) -> anyhow::Result<(Vec<Entry>, Vec<ServerBinding>)> {
    let mut entries = Vec::new();
    for (section, class, list) in [
        ("mutating", ToolClass::Mutating, raw.mutating),
        ("read_only", ToolClass::ReadOnly, raw.read_only),
    ] {
        for (index, entry) in list.into_iter().enumerate() {
            entries.push(check(entry, class, section, index + 1, origin)?);
        }
    }
    for (i, a) in entries.iter().enumerate() {
        if let Some(b) = entries[i + 1..]
            .iter()
            .find(|b| same_server(&b.server, &a.server) && b.tool == a.tool)
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
    let servers = raw
        .server
        .into_iter()
        .enumerate()
        .map(|(index, server)| check_server(server, origin, index))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for (i, a) in servers.iter().enumerate() {
        if servers[i + 1..]
            .iter()
            .any(|b| same_server(&a.name, &b.name))
        {
            bail!(
                "catalog {origin}: [[server]] {:?} is bound twice; keep one",
                a.name
            );
        }
    }
    Ok((entries, servers))
}

fn check_server(raw: RawServer, origin: &str, index: usize) -> anyhow::Result<ServerBinding> {
    let at = format!(
        "catalog {origin}: [[server]] #{} ({:?})",
        index + 1,
        raw.name
    );
    if raw.name.trim().is_empty() || raw.name.contains(['*', '?']) {
        bail!("{at}: name must be one server's name, without wildcards");
    }
    let profiles = match &raw.ssh_mcp_config {
        Some(path) => Some(read_ssh_mcp_config(path, origin).with_context(|| at.clone())?),
        None => None,
    };
    // An explicit vm wins; else the server's default profile (or its only one).
    let vm = match (raw.vm.as_deref().map(str::trim), &profiles) {
        (Some(""), _) => bail!("{at}: vm is empty; name the VM the server is started for"),
        (Some(vm), _) => Some(vm.to_owned()),
        (None, Some((map, default))) => default
            .clone()
            .or_else(|| {
                (map.len() == 1)
                    .then(|| map.keys().next().cloned())
                    .flatten()
            })
            .and_then(|profile| map.get(&profile).cloned()),
        (None, None) => bail!(
            "{at}: say which VM the server is started for (vm), or where its own config is (ssh_mcp_config)"
        ),
    };
    Ok(ServerBinding {
        name: raw.name,
        vm,
        profiles: profiles.map(|(map, _)| map),
        origin: origin.to_owned(),
    })
}

/// Reads tufantunc/ssh-mcp's `config.toml`: each profile's host, and the default profile.
fn read_ssh_mcp_config(
    path: &str,
    origin: &str,
) -> anyhow::Result<(BTreeMap<String, String>, Option<String>)> {
    let path = if let Some(rest) = path.strip_prefix("~/") {
        crate::config::home_dir()
            .context("ssh_mcp_config starts with ~/ but there is no home directory")?
            .join(rest)
    } else {
        // Relative to the catalog file that names it.
        let path = PathBuf::from(path);
        match Path::new(origin).parent() {
            Some(dir) if path.is_relative() && !origin.starts_with("builtin:") => dir.join(path),
            _ => path,
        }
    };
    let text = crate::config::read_text_file(&path)
        .with_context(|| format!("cannot read ssh_mcp_config {}", path.display()))?;
    let config: SshMcpConfig = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}", crate::config::describe_toml_error(&text, &path, &e)))?;
    let map: BTreeMap<String, String> = config
        .profiles
        .into_iter()
        .map(|p| (p.name, p.host))
        .collect();
    Ok((map, config.defaults.default_profile))
}

/// Reads and parses a catalog file.
pub(super) fn read(path: &Path) -> anyhow::Result<(Vec<Entry>, Vec<ServerBinding>)> {
    let text = crate::config::read_text_file(path)
        .with_context(|| format!("cannot read catalog {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Where an entry is, as errors name it; put into words only for an error, since the hook
/// checks every entry of the catalogs it loads on each call.
struct EntryAt<'a> {
    origin: &'a str,
    section: &'a str,
    number: usize,
    server: &'a str,
    tool: &'a str,
}

impl std::fmt::Display for EntryAt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "catalog {}: [[{}]] #{} (server {:?}, tool {:?})",
            self.origin, self.section, self.number, self.server, self.tool
        )
    }
}

fn check(
    raw: RawEntry,
    class: ToolClass,
    section: &str,
    number: usize,
    origin: &str,
) -> anyhow::Result<Entry> {
    let name = EntryAt {
        origin,
        section,
        number,
        server: &raw.server,
        tool: &raw.tool,
    };
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
    let opens = raw.opens_session.is_some();
    check_shell_arg(&raw, class, &name)?;
    match class {
        ToolClass::Mutating
            if raw.vm_arg.is_empty()
                && raw.session_arg.is_empty()
                && !raw.bound_at_start
                && raw.ask.is_none()
                && raw.shell_arg.is_none() =>
        {
            bail!(
                "{name}: a mutating entry needs vm_arg (the argument keys naming the VM), \
                 session_arg (the argument naming a session an earlier call opened), bound_at_start = true, \
                 shell_arg (the argument holding a command), or ask = \"why its VM cannot be known\""
            )
        }
        ToolClass::ReadOnly if raw.ask.is_some() => {
            bail!("{name}: ask is only read for mutating entries")
        }
        ToolClass::ReadOnly if !opens && (!raw.vm_arg.is_empty() || raw.bound_at_start) => {
            bail!(
                "{name}: vm_arg and bound_at_start are only read for mutating entries and for entries that open a session"
            )
        }
        ToolClass::ReadOnly if !raw.session_arg.is_empty() => {
            bail!("{name}: session_arg is only read for mutating entries")
        }
        _ => {}
    }
    if opens && raw.vm_arg.is_empty() && !raw.bound_at_start {
        bail!(
            "{name}: an entry that opens a session needs vm_arg or bound_at_start = true, to know which VM the session is on"
        );
    }
    if let Some(key) = &raw.opens_session
        && key.trim().is_empty()
    {
        bail!("{name}: opens_session is empty; name the argument that names the session");
    }
    for key in raw.vm_arg.iter().chain(&raw.session_arg) {
        if key.trim().is_empty() {
            bail!("{name}: vm_arg or session_arg has an empty key");
        }
        if key.starts_with('/') && key.len() == 1 {
            bail!("{name}: vm_arg {key:?} is not a JSON pointer to a field");
        }
    }
    Ok(into_entry(raw, class, origin))
}

/// A checked entry's raw form as an [`Entry`], its defaults filled in.
fn into_entry(raw: RawEntry, class: ToolClass, origin: &str) -> Entry {
    Entry {
        class,
        server: raw.server,
        tool: raw.tool,
        vm_arg: raw.vm_arg,
        shell_arg: raw.shell_arg,
        shell: raw.shell.unwrap_or(Dialect::Posix),
        platform: raw.platform.unwrap_or(Platform::Any),
        note: raw.note,
        bound_at_start: raw.bound_at_start,
        opens_session: raw.opens_session,
        session_arg: raw.session_arg,
        ask: raw.ask.filter(|a| !a.trim().is_empty()),
        origin: origin.to_owned(),
        file: 0,
    }
}

/// `shell_arg` (and its `shell`) stands alone: the command names the targets.
fn check_shell_arg(raw: &RawEntry, class: ToolClass, name: &EntryAt<'_>) -> anyhow::Result<()> {
    let Some(key) = &raw.shell_arg else {
        if raw.shell.is_some() {
            bail!("{name}: shell is only read with shell_arg");
        }
        return Ok(());
    };
    if class == ToolClass::ReadOnly {
        bail!("{name}: shell_arg is only read for mutating entries (the command decides)");
    }
    if !raw.vm_arg.is_empty()
        || !raw.session_arg.is_empty()
        || raw.bound_at_start
        || raw.ask.is_some()
        || raw.opens_session.is_some()
    {
        bail!(
            "{name}: shell_arg stands alone (the command names its targets): drop vm_arg, session_arg, bound_at_start, opens_session and ask"
        );
    }
    if key.trim().is_empty() || key == "/" {
        bail!("{name}: shell_arg {key:?} names no argument");
    }
    Ok(())
}
