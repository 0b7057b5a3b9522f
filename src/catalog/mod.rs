//! Tool catalogs: which tool calls can change a VM, which only read, and which argument names
//! the VM. Shipped catalogs (`catalogs/*.toml`) are compiled in; user catalogs named by the
//! config load after them.
//!
//! Which entry decides a call: a match in a later file beats any match in an earlier one;
//! within one file the most specific match wins (the most characters that are not `*` or
//! `?`), and on a tie `mutating` beats `read_only`, since guessing "read-only" fails open.

mod load;

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::glob::glob_chars;
pub use crate::glob::glob_match;
use crate::shell::dialect::Dialect;
use crate::targets::Targets;

/// One catalog shipped with `rewind`: its TOML source (shown and linted as it is) and what
/// the build compiled from it for the hook (see `build.rs`): the same document as JSON, and
/// the server names and patterns it spells out, one a line.
#[derive(Debug, Clone, Copy)]
pub struct Shipped {
    /// `builtin:<file>.toml`, as errors and `rewind catalog list` name it.
    pub origin: &'static str,
    pub toml: &'static str,
    json: &'static str,
    servers: &'static str,
    /// Its entries one a line with their server and tool patterns, or `whole` (see
    /// `build.rs`).
    entries: &'static str,
}

impl Shipped {
    /// The server names and patterns this catalog spells out.
    fn servers(&self) -> impl Iterator<Item = &'static str> {
        self.servers.lines()
    }

    /// Its entries and bindings, read from the compiled JSON.
    fn load(&self) -> anyhow::Result<(Vec<Entry>, Vec<ServerBinding>)> {
        load::parse_compiled(self.json, self.origin)
    }

    /// What classifying a call to `tool` of `server` needs of it: the entries whose server
    /// and tool patterns match the call, read from the build's index, in [`Shipped::load`]'s
    /// order; the whole file when it binds servers. Any other entry could never decide the
    /// call.
    fn load_matching(
        &self,
        server: &str,
        tool: &str,
    ) -> anyhow::Result<(Vec<Entry>, Vec<ServerBinding>)> {
        match load::indexed_entries(
            self.entries,
            self.origin,
            |pattern| server_match(pattern, server),
            |pattern| glob_match(pattern, tool),
        ) {
            Some(entries) => Ok((entries?, Vec::new())),
            None => self.load(),
        }
    }
}

/// A shipped catalog by its file stem: the source and the build's compiled forms of it.
macro_rules! shipped_catalog {
    ($stem:literal) => {
        Shipped {
            origin: concat!("builtin:", $stem, ".toml"),
            toml: include_str!(concat!("../../catalogs/", $stem, ".toml")),
            json: include_str!(concat!(env!("OUT_DIR"), "/catalogs/", $stem, ".json")),
            servers: include_str!(concat!(env!("OUT_DIR"), "/catalogs/", $stem, ".servers")),
            entries: include_str!(concat!(env!("OUT_DIR"), "/catalogs/", $stem, ".entries")),
        }
    };
}

/// The catalogs shipped with `rewind`, in load order: the generic shapes first, so that each
/// server's own catalog after it wins for that server's tools.
pub const BUILTIN: &[Shipped] = &[
    shipped_catalog!("generic"),
    shipped_catalog!("aap-mcp"),
    shipped_catalog!("aionda-mcp-ssh"),
    shipped_catalog!("ansible-dev-tools"),
    shipped_catalog!("bsahane-ansible-mcp"),
    shipped_catalog!("bvisible-ssh-manager"),
    shipped_catalog!("classfang-ssh-mcp-server"),
    shipped_catalog!("cursortouch-windows-mcp"),
    shipped_catalog!("inframcp-winrm"),
    shipped_catalog!("lightspeed-ssh-mcp"),
    shipped_catalog!("muchiny-ssh-bridge"),
    shipped_catalog!("tarnover-sysoperator"),
    shipped_catalog!("tufantunc-ssh-mcp"),
    shipped_catalog!("vmware-aiops"),
    shipped_catalog!("command-servers"),
    shipped_catalog!("rewind"),
];

/// Host tools that only touch the agent's own machine: they never reach a VM.
const LOCAL_TOOLS: &[&str] = &[
    "Read",
    "Edit",
    "MultiEdit",
    "Write",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "NotebookEdit",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "AskUserQuestion",
    "ExitPlanMode",
    "BashOutput",
    "KillShell",
    "KillBash",
    "Skill",
    "SlashCommand",
    "ToolSearch",
];

/// Host tools that run shell commands: their `command` is parsed for remote programs.
const SHELL_TOOLS: &[(&str, Dialect)] = &[
    ("Bash", Dialect::Posix),
    ("PowerShell", Dialect::PowerShell),
    // Text typed into a shell already running (Codex `write_stdin`, Copilot `write_bash`):
    // which machine that shell is on is not known.
    (TYPED_SHELL, Dialect::Posix),
    (TYPED_POWERSHELL, Dialect::PowerShell),
];

/// The neutral names of the tools that type into a running shell.
pub(crate) const TYPED_SHELL: &str = "ShellInput";
pub(crate) const TYPED_POWERSHELL: &str = "PowerShellInput";

/// What a catalog entry says about a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolClass {
    Mutating,
    ReadOnly,
}

impl std::fmt::Display for ToolClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Mutating => "mutating",
            Self::ReadOnly => "read_only",
        })
    }
}

/// The guest platform an entry is for (informational).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    Linux,
    Windows,
    Any,
}

/// One checked catalog entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub class: ToolClass,
    /// MCP server name or glob; `*` matches any.
    pub server: String,
    /// Tool name or glob.
    pub tool: String,
    /// Keys (or `/json/pointers`) of the arguments naming the VM; every one present names VMs.
    pub vm_arg: Vec<String>,
    /// The argument (key or `/json/pointer`) holding a command string, for tools that run
    /// one (Desktop Commander's `start_process.command`): it is parsed like a shell command.
    pub shell_arg: Option<String>,
    /// The language of that command string.
    pub shell: Dialect,
    pub platform: Platform,
    pub note: Option<String>,
    /// The server is started for one host (`[[server]]` binds it): with no `vm_arg` in the
    /// call, the call targets that host.
    pub bound_at_start: bool,
    /// The argument naming the session this call opens (`ssh_connect {name}`): the session is
    /// remembered as being on this call's VM.
    pub opens_session: Option<String>,
    /// Arguments naming a session an earlier call opened (`ssh_exec {sessionName}`).
    pub session_arg: Vec<String>,
    /// Why the VM a call changes cannot be known from the call (the playbook's own `hosts:`, a
    /// server-side group): such a call always asks, saying why.
    pub ask: Option<String>,
    /// The file (or `builtin:` name) the entry came from.
    pub origin: String,
    /// The position of that file in load order.
    pub file: usize,
}

impl Entry {
    /// Where a call's VM is looked for, for messages: `` (`host`, `sessionName`) ``.
    pub fn looked_for(&self) -> String {
        let quoted: Vec<String> = self
            .vm_arg
            .iter()
            .chain(&self.session_arg)
            .map(|k| format!("`{k}`"))
            .collect();
        if quoted.is_empty() {
            return String::from(
                "(none: the server is bound at start, and no [[server]] binds it)",
            );
        }
        format!("({})", quoted.join(", "))
    }

    /// How specific the entry is: the characters of server and tool that are not wildcards.
    fn specificity(&self) -> usize {
        self.server
            .chars()
            .chain(self.tool.chars())
            .filter(|c| !matches!(c, '*' | '?'))
            .count()
    }
}

/// `[[server]] name = "prod-ssh"  vm = "web01"`: a server started for one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerBinding {
    /// The server's name as in `mcp__<server>__<tool>` (matched like entry servers).
    pub name: String,
    /// The VM the server acts on when a call names none (`vm`, else the default profile of
    /// the server's own config); `None` when neither says.
    pub vm: Option<String>,
    /// Profile name → host, from tufantunc/ssh-mcp's own `config.toml` (`ssh_mcp_config`):
    /// a call's `profile` is read through it.
    pub profiles: Option<std::collections::BTreeMap<String, String>>,
    /// The file the binding came from.
    pub origin: String,
}

/// Every loaded entry, in load order, and the server bindings (a later file's wins).
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    servers: Vec<ServerBinding>,
    /// How many files were appended (entries carry their file's number).
    files: usize,
}

/// A tool name as the host sends it, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolName {
    /// `mcp__<server>__<tool>`.
    Mcp { server: String, tool: String },
    /// A host built-in such as `Read` or `Bash`.
    Host(String),
}

impl ToolName {
    /// Splits `mcp__<server>__<tool>`. When the host names the server (`mcp_server.name`), that
    /// name is trusted over guessing where the server part ends.
    pub fn parse(name: &str, server_hint: Option<&str>) -> ToolName {
        let Some(rest) = name.strip_prefix("mcp__") else {
            return ToolName::Host(name.to_owned());
        };
        if let Some(server) = server_hint
            && let Some(tool) = rest.strip_prefix(server).and_then(|t| t.strip_prefix("__"))
        {
            return ToolName::Mcp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            };
        }
        match rest.split_once("__") {
            Some((server, tool)) => ToolName::Mcp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            },
            None => ToolName::Host(name.to_owned()),
        }
    }
}

/// How a tool call is classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Classification {
    /// A host tool that only touches the local machine.
    Local,
    /// A tool that runs a command string (a host shell tool, or an entry with `shell_arg`):
    /// the command decides, through [`crate::shell`]. `command` is `None` when the argument
    /// is missing or not a string.
    Shell {
        command: Option<String>,
        dialect: Dialect,
        entry: Option<Entry>,
    },
    ReadOnly(Entry),
    /// A mutating entry decides; `targets` are the VMs its `vm_arg` names.
    Mutating {
        entry: Entry,
        targets: Targets,
    },
    /// In no catalog.
    Unlisted,
}

impl Catalog {
    /// Loads the built-in catalogs (when `builtin`) and then `files`, in order.
    pub fn load(builtin: bool, files: &[impl AsRef<Path>]) -> anyhow::Result<Catalog> {
        let mut catalog = Catalog::default();
        if builtin {
            for shipped in BUILTIN {
                catalog.append(shipped.load()?);
            }
        }
        for file in files {
            catalog.append(load::read(file.as_ref())?);
        }
        Ok(catalog)
    }

    /// Loads what classifying one call needs: every user file (a broken one is an error
    /// whatever the call), and of the shipped catalogs only those naming a server pattern
    /// that matches the call's server (none for a host tool), and of those only the entries
    /// whose server and tool patterns match the call (the build indexes them). The hook
    /// starts once per call: nothing else shipped is deserialized. Entries keep the file
    /// positions and order [`Catalog::load`] gives them, so precedence is the same; the
    /// result serves this one tool only.
    pub fn load_for(
        name: &ToolName,
        builtin: bool,
        files: &[impl AsRef<Path>],
    ) -> anyhow::Result<Catalog> {
        let mut catalog = Catalog::default();
        let call = match name {
            ToolName::Mcp { server, tool } => Some((server, tool)),
            ToolName::Host(_) => None,
        };
        if builtin {
            for shipped in BUILTIN {
                if let Some((server, tool)) = call.filter(|(server, _)| {
                    shipped
                        .servers()
                        .any(|pattern| server_match(pattern, server))
                }) {
                    catalog.append(shipped.load_matching(server, tool)?);
                } else {
                    catalog.files += 1;
                }
            }
        }
        for file in files {
            catalog.append(load::read(file.as_ref())?);
        }
        Ok(catalog)
    }

    /// Every server name the catalogs (the shipped ones when `builtin`, then `files`) spell
    /// out, without `*` (a `?` stands for one character, as in `desktop?commander`): to tell
    /// where a host's `<server>-<tool>` splits. The shipped files are read line by line, not
    /// parsed.
    pub fn literal_servers(
        builtin: bool,
        files: &[impl AsRef<Path>],
    ) -> anyhow::Result<Vec<String>> {
        let literal = |name: &str| !name.is_empty() && !name.contains('*');
        let mut names: Vec<String> = Vec::new();
        if builtin {
            for shipped in BUILTIN {
                names.extend(shipped.servers().filter(|p| literal(p)).map(str::to_owned));
            }
        }
        for file in files {
            let (entries, servers) = load::read(file.as_ref())?;
            names.extend(entries.into_iter().map(|e| e.server));
            names.extend(servers.into_iter().map(|s| s.name));
        }
        names.retain(|name| literal(name));
        names.sort_unstable();
        names.dedup();
        Ok(names)
    }

    /// Adds one file's entries after those already loaded.
    fn append(&mut self, (mut entries, servers): (Vec<Entry>, Vec<ServerBinding>)) {
        self.files += 1;
        for entry in &mut entries {
            entry.file = self.files;
        }
        self.entries.extend(entries);
        self.servers.extend(servers);
    }

    /// Parses one catalog's text on its own (for tests and `catalog lint`).
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Catalog> {
        let (entries, servers) = load::parse(text, origin)?;
        Ok(Catalog {
            entries,
            servers,
            files: 1,
        })
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The `[[server]]` bindings, in load order.
    pub fn servers(&self) -> &[ServerBinding] {
        &self.servers
    }

    /// The VM a server is bound to, if a `[[server]]` names it (the latest file wins).
    pub fn server_binding(&self, server: &str) -> Option<&ServerBinding> {
        self.servers
            .iter()
            .rev()
            .find(|b| same_server(&b.name, server))
    }

    /// Classifies a call: the deciding entry is the one from the latest file, then the most
    /// specific, then `mutating` (see the module docs).
    pub fn classify(&self, name: &ToolName, input: &Value) -> Classification {
        let (server, tool) = match name {
            ToolName::Host(tool) if LOCAL_TOOLS.contains(&tool.as_str()) => {
                return Classification::Local;
            }
            ToolName::Host(tool)
                if let Some((_, dialect)) = SHELL_TOOLS.iter().find(|(t, _)| t == tool) =>
            {
                return Classification::Shell {
                    command: input
                        .get("command")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    dialect: *dialect,
                    entry: None,
                };
            }
            ToolName::Host(_) => return Classification::Unlisted,
            ToolName::Mcp { server, tool } => (server, tool),
        };
        let Some(entry) = self
            .entries
            .iter()
            .filter(|e| server_match(&e.server, server) && glob_match(&e.tool, tool))
            .max_by_key(|e| (e.file, e.specificity(), e.class == ToolClass::Mutating))
        else {
            return Classification::Unlisted;
        };
        if let Some(key) = &entry.shell_arg {
            return Classification::Shell {
                command: lookup(input, key).and_then(command_text),
                dialect: entry.shell,
                entry: Some(entry.clone()),
            };
        }
        match entry.class {
            ToolClass::ReadOnly => Classification::ReadOnly(entry.clone()),
            ToolClass::Mutating => Classification::Mutating {
                entry: entry.clone(),
                targets: match Targets::from_vm_arg(&entry.vm_arg, input) {
                    Targets::Missing { .. } => Targets::Missing {
                        looked_for: entry.looked_for(),
                    },
                    targets => targets,
                },
            },
        }
    }
}

/// A command string, or an argv list quoted back into one.
fn command_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Array(items) if !items.is_empty() => {
            let words: Option<Vec<String>> = items
                .iter()
                .map(|w| {
                    w.as_str()
                        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
                })
                .collect();
            words.map(|w| w.join(" "))
        }
        _ => None,
    }
}

/// Where a mutating call's VM comes from when none of its own `vm_arg` keys is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// Not bound: the call's own arguments decide (or name nothing).
    No,
    /// The server's `[[server]]` binding, or the session an earlier call opened: the VM,
    /// and where the binding comes from (for messages).
    Vm { vm: String, source: String },
    /// The call names a session (`key` = `name`) nobody remembers opening.
    UnknownSession { key: String, name: String },
}

impl Catalog {
    /// The VM a mutating call is bound to when it names none itself: the session its
    /// `session_arg` names (looked up with `recall`), else its server's `[[server]]` binding.
    /// A call that has any of its `vm_arg` keys is never bound: every key present names VMs.
    pub fn bound_target(
        &self,
        server: &str,
        entry: &Entry,
        input: &Value,
        recall: &dyn Fn(&str) -> Option<String>,
    ) -> Bound {
        if entry.ask.is_some() || entry.vm_arg.iter().any(|key| lookup(input, key).is_some()) {
            return Bound::No;
        }
        if let Some((key, value)) = entry
            .session_arg
            .iter()
            .find_map(|key| lookup(input, key).map(|v| (key, v)))
        {
            let name = session_name(value).unwrap_or_default();
            return match (!name.is_empty()).then(|| recall(&name)).flatten() {
                Some(vm) => Bound::Vm {
                    vm,
                    source: format!("`{key}` (session {name:?} opened earlier)"),
                },
                None => Bound::UnknownSession {
                    key: key.clone(),
                    name,
                },
            };
        }
        match self.server_binding(server) {
            Some(ServerBinding {
                name, vm: Some(vm), ..
            }) => Bound::Vm {
                vm: vm.clone(),
                source: format!("[[server]] {name}"),
            },
            _ => Bound::No,
        }
    }

    /// A call's targets read through its server's own profiles (`ssh_mcp_config`): a
    /// reference from the `profile` argument becomes that profile's host; a profile the file
    /// does not have cannot be known. Other targets pass unchanged.
    pub fn through_profiles(&self, server: &str, targets: Targets) -> Targets {
        let Some(profiles) = self
            .server_binding(server)
            .and_then(|b| b.profiles.as_ref())
        else {
            return targets;
        };
        let Targets::Exact(list) = targets else {
            return targets;
        };
        let mut mapped = Vec::with_capacity(list.len());
        for target in list {
            if target.source != "`profile`" {
                mapped.push(target);
                continue;
            }
            match profiles.get(&target.reference) {
                Some(host) => mapped.push(crate::targets::VmRef {
                    reference: host.clone(),
                    source: format!("`profile` {:?} in the server's config", target.reference),
                }),
                None => {
                    return Targets::Unknowable {
                        source: target.source,
                        part: target.reference,
                        why: String::from("is no profile in the server's config.toml"),
                    };
                }
            }
        }
        Targets::Exact(mapped)
    }

    /// For a call whose entry opens a session: the session's name and the one VM it is on
    /// (the call's `vm_arg`, else its server's binding), or `None` for the VM when that is not
    /// one exact VM. `None` when the call names no session.
    pub fn session_opened(
        &self,
        server: &str,
        entry: &Entry,
        input: &Value,
    ) -> Option<(String, Option<String>)> {
        let key = entry.opens_session.as_deref()?;
        let name = session_name(lookup(input, key)?)?;
        if name.is_empty() {
            return None;
        }
        let vm = if entry.vm_arg.iter().any(|k| lookup(input, k).is_some()) {
            // A session is on one host: a value naming several (or none) binds nothing.
            match self.through_profiles(server, Targets::from_vm_arg(&entry.vm_arg, input)) {
                Targets::Exact(list) if list.len() == 1 => Some(list[0].reference.clone()),
                _ => None,
            }
        } else {
            self.server_binding(server).and_then(|b| b.vm.clone())
        };
        Some((name, vm))
    }
}

/// A user entry that makes shipped mutating tools read-only: legal, but it switches guarding
/// off for them, so `catalog lint` and `doctor` name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadow {
    /// The user's read-only entry.
    pub entry: Entry,
    /// The shipped mutating entries it overrides, as `server tool`.
    pub shipped: Vec<String>,
}

impl Shadow {
    /// One line naming the entry and what it switches off.
    pub fn describe(&self) -> String {
        const SHOWN: usize = 5;
        let mut names = self.shipped[..self.shipped.len().min(SHOWN)].join(", ");
        if self.shipped.len() > SHOWN {
            let _ = write!(names, ", and {} more", self.shipped.len() - SHOWN);
        }
        format!(
            "{}: [[read_only]] server {:?} tool {:?} makes {} shipped mutating tool entr{} read-only, so the hook takes no checkpoint before them: {names}",
            self.entry.origin,
            self.entry.server,
            self.entry.tool,
            self.shipped.len(),
            if self.shipped.len() == 1 { "y" } else { "ies" },
        )
    }
}

impl Catalog {
    /// Read-only entries outside the shipped catalogs that override shipped mutating ones
    /// (their server and tool patterns overlap; user files always load later, so they win).
    pub fn shadows(&self) -> Vec<Shadow> {
        let shipped: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.origin.starts_with("builtin:") && e.class == ToolClass::Mutating)
            .collect();
        self.entries
            .iter()
            .filter(|e| !e.origin.starts_with("builtin:") && e.class == ToolClass::ReadOnly)
            .filter_map(|user| {
                let hits: Vec<String> = shipped
                    .iter()
                    .filter(|s| {
                        (server_match(&user.server, &s.server)
                            || server_match(&s.server, &user.server))
                            && (glob_match(&user.tool, &s.tool) || glob_match(&s.tool, &user.tool))
                    })
                    .map(|s| format!("{} {}", s.server, s.tool))
                    .collect();
                (!hits.is_empty()).then(|| Shadow {
                    entry: user.clone(),
                    shipped: hits,
                })
            })
            .collect()
    }
}

/// A key (or `/json/pointer`) in a tool call's arguments.
fn lookup<'a>(input: &'a Value, key: &str) -> Option<&'a Value> {
    if key.starts_with('/') {
        input.pointer(key)
    } else {
        input.get(key)
    }
}

/// A session name or id as a string: servers use names and numeric ids (a process id).
fn session_name(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One character of a server name as compared: lower case, with `-`, `_` and every
/// character Claude Code would turn into `_` (a dot, a space, a slash) as one and the same
/// character. Compared character by character, never collected: the hook matches every
/// shipped catalog's server patterns on each call, and an allocation per comparison was most
/// of its classification time.
fn normalise_server_char(c: char) -> char {
    match c {
        '*' | '?' => c,
        c if c.is_ascii_alphanumeric() => c.to_ascii_lowercase(),
        _ => '-',
    }
}

/// Whether a catalog's server pattern matches a server name: globs, case-insensitively, with
/// `-` and `_` the same (`ssh_manager` matches `ssh-manager`, `SSH-Manager` too).
pub fn server_match(pattern: &str, server: &str) -> bool {
    glob_chars(
        pattern.chars().map(normalise_server_char),
        server.chars().map(normalise_server_char),
    )
}

/// Whether two server names (or patterns) are the same once normalised.
pub fn same_server(a: &str, b: &str) -> bool {
    a.chars()
        .map(normalise_server_char)
        .eq(b.chars().map(normalise_server_char))
}

#[cfg(test)]
mod tests;
