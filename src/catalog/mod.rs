//! Tool catalogs: which tool calls can change a VM, which only read, and which argument names
//! the VM. Shipped catalogs (`catalogs/*.toml`) are compiled in; user catalogs named by the
//! config load after them.
//!
//! Which entry decides a call: a match in a later file beats any match in an earlier one;
//! within one file the most specific match wins (the most characters that are not `*` or
//! `?`), and on a tie `mutating` beats `read_only`, since guessing "read-only" fails open.

mod load;

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::shell::Dialect;

/// The catalogs shipped with `rewind`, in load order.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "builtin:linux.toml",
        include_str!("../../catalogs/linux.toml"),
    ),
    (
        "builtin:windows.toml",
        include_str!("../../catalogs/windows.toml"),
    ),
    (
        "builtin:command-servers.toml",
        include_str!("../../catalogs/command-servers.toml"),
    ),
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
];

/// What a catalog entry says about a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Mutating,
    ReadOnly,
}

impl std::fmt::Display for Class {
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
    pub class: Class,
    /// MCP server name or glob; `*` matches any.
    pub server: String,
    /// Tool name or glob.
    pub tool: String,
    /// Keys (or `/json/pointers`) of the arguments naming the VM; first present wins.
    pub vm_arg: Vec<String>,
    /// The argument (key or `/json/pointer`) holding a command string, for tools that run
    /// one (Desktop Commander's `start_process.command`): it is parsed like a shell command.
    pub shell_arg: Option<String>,
    /// The language of that command string.
    pub shell: Dialect,
    pub platform: Platform,
    pub note: Option<String>,
    /// The file (or `builtin:` name) the entry came from.
    pub origin: String,
    /// The position of that file in load order.
    pub file: usize,
}

impl Entry {
    /// How specific the entry is: the characters of server and tool that are not wildcards.
    fn specificity(&self) -> usize {
        self.server
            .chars()
            .chain(self.tool.chars())
            .filter(|c| !matches!(c, '*' | '?'))
            .count()
    }
}

/// Every loaded entry, in load order.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
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

/// Where a VM reference was found in a tool call's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmArg {
    /// The `vm_arg` key or pointer that matched.
    pub key: String,
    pub value: String,
}

impl VmArg {
    /// The targets named, when the argument names more than one (`"web01,db01"`, an array).
    pub fn several(&self) -> Option<Vec<&str>> {
        let parts: Vec<&str> = self
            .value
            .split([',', ';', ' '])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        (parts.len() > 1).then_some(parts)
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
    Mutating {
        entry: Entry,
        vm: Option<VmArg>,
    },
    /// In no catalog.
    Unlisted,
}

impl Catalog {
    /// Loads the built-in catalogs (when `builtin`) and then `files`, in order.
    pub fn load(builtin: bool, files: &[impl AsRef<Path>]) -> anyhow::Result<Catalog> {
        let mut catalog = Catalog::default();
        if builtin {
            for (name, text) in BUILTIN {
                catalog.append(load::parse(text, name)?);
            }
        }
        for file in files {
            catalog.append(load::read(file.as_ref())?);
        }
        Ok(catalog)
    }

    /// Adds one file's entries after those already loaded.
    fn append(&mut self, mut entries: Vec<Entry>) {
        let file = self.entries.last().map_or(0, |e| e.file + 1);
        for entry in &mut entries {
            entry.file = file;
        }
        self.entries.extend(entries);
    }

    /// Parses one catalog's text on its own (for tests and `catalog lint`).
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Catalog> {
        Ok(Catalog {
            entries: load::parse(text, origin)?,
        })
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
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
            .filter(|e| glob_match(&e.server, server) && glob_match(&e.tool, tool))
            .max_by_key(|e| (e.file, e.specificity(), e.class == Class::Mutating))
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
            Class::ReadOnly => Classification::ReadOnly(entry.clone()),
            Class::Mutating => Classification::Mutating {
                entry: entry.clone(),
                vm: find_vm_arg(&entry.vm_arg, input),
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

/// An argument by key, or by JSON pointer when the key starts with `/`.
fn lookup<'a>(input: &'a Value, key: &str) -> Option<&'a Value> {
    if key.starts_with('/') {
        input.pointer(key)
    } else {
        input.get(key)
    }
}

/// The first `vm_arg` key present in `input` with a usable value.
fn find_vm_arg(keys: &[String], input: &Value) -> Option<VmArg> {
    keys.iter().find_map(|key| {
        let value = lookup(input, key)?;
        let text = match value {
            Value::String(s) => s.trim().to_owned(),
            // Several targets stay visible as a list ("a, b") rather than being skipped.
            Value::Array(items) => {
                let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                names?.join(", ")
            }
            _ => return None,
        };
        (!text.is_empty()).then(|| VmArg {
            key: key.clone(),
            value: text,
        })
    })
}

/// `*` matches any run of characters, `?` one; everything else literally, case-sensitively.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn builtin() -> Catalog {
        Catalog::load(true, &[] as &[&Path]).expect("shipped catalogs load")
    }

    #[test]
    fn splits_mcp_names_with_and_without_the_host_hint() {
        assert_eq!(
            ToolName::parse("mcp__ssh__exec", None),
            ToolName::Mcp {
                server: "ssh".into(),
                tool: "exec".into()
            }
        );
        assert_eq!(
            ToolName::parse("mcp__a__b__run", Some("a__b")),
            ToolName::Mcp {
                server: "a__b".into(),
                tool: "run".into()
            }
        );
        assert_eq!(ToolName::parse("Read", None), ToolName::Host("Read".into()));
    }

    #[test]
    fn globs() {
        assert!(glob_match("write_*", "write_file"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("r?n", "run"));
        assert!(!glob_match("write_*", "read_file"));
        assert!(!glob_match("exec", "exec2"));
        assert!(glob_match("*_file", "put_file"));
    }

    #[test]
    fn shipped_catalogs_classify_common_shapes() {
        let cat = builtin();
        let exec = ToolName::parse("mcp__ssh__exec", None);
        let Classification::Mutating { vm, .. } =
            cat.classify(&exec, &json!({"host": "jp-ubuntu", "command": "reboot"}))
        else {
            panic!("ssh exec is mutating");
        };
        assert_eq!(
            vm,
            Some(VmArg {
                key: "host".into(),
                value: "jp-ubuntu".into()
            })
        );
        assert!(matches!(
            cat.classify(&ToolName::parse("mcp__ssh__read_file", None), &json!({})),
            Classification::ReadOnly(_)
        ));
        assert!(matches!(
            cat.classify(
                &ToolName::parse("mcp__winrm__run_command", None),
                &json!({"computer_name": "win2019-1"})
            ),
            Classification::Mutating { vm: Some(_), .. }
        ));
        assert_eq!(
            cat.classify(&ToolName::parse("Edit", None), &json!({})),
            Classification::Local
        );
        assert_eq!(
            cat.classify(&ToolName::parse("mcp__weather__forecast", None), &json!({})),
            Classification::Unlisted
        );
    }

    #[test]
    fn later_entries_win_and_pointers_reach_nested_arguments() {
        let mut cat = Catalog::parse(
            "[[mutating]]\nserver = \"*\"\ntool = \"write_*\"\nvm_arg = [\"/target/host\", \"host\"]\n",
            "a.toml",
        )
        .expect("a");
        cat.entries.extend(
            Catalog::parse(
                "[[read_only]]\nserver = \"fs\"\ntool = \"write_log\"\n",
                "b.toml",
            )
            .expect("b")
            .entries,
        );
        let log = cat.classify(&ToolName::parse("mcp__fs__write_log", None), &json!({}));
        assert!(
            matches!(log, Classification::ReadOnly(ref e) if e.origin == "b.toml"),
            "{log:?}"
        );
        let Classification::Mutating { vm, .. } = cat.classify(
            &ToolName::parse("mcp__fs__write_file", None),
            &json!({"target": {"host": "db01"}, "host": "ignored"}),
        ) else {
            panic!("mutating");
        };
        assert_eq!(vm.map(|v| v.value), Some("db01".into()));
    }

    #[test]
    fn within_a_file_the_most_specific_entry_wins_and_ties_go_to_mutating() {
        let cat = Catalog::parse(
            r#"
            [[mutating]]
            server = "vm*"
            tool = "restart_*"
            vm_arg = ["vm"]

            [[read_only]]
            server = "vm*"
            tool = "*"

            [[read_only]]
            server = "vm*"
            tool = "restart_status"

            [[read_only]]
            server = "ops"
            tool = "*_status"

            [[mutating]]
            server = "ops"
            tool = "restart*"
            vm_arg = ["vm"]
            "#,
            "one.toml",
        )
        .expect("parses");
        let class = |name: &str| cat.classify(&ToolName::parse(name, None), &json!({"vm": "x"}));
        assert!(matches!(
            class("mcp__vmware__restart_vm"),
            Classification::Mutating { .. }
        ));
        assert!(matches!(
            class("mcp__vmware__list_vms"),
            Classification::ReadOnly(_)
        ));
        assert!(matches!(
            class("mcp__vmware__restart_status"),
            Classification::ReadOnly(_)
        ));
        assert!(
            matches!(
                class("mcp__ops__restart_status"),
                Classification::Mutating { .. }
            ),
            "a tie fails safe"
        );
    }

    #[test]
    fn several_targets_are_seen_as_several() {
        let cat = builtin();
        let play = ToolName::parse("mcp__ansible__run_playbook", None);
        for input in [
            json!({"limit": "web01,db01"}),
            json!({"hosts": ["web01", "db01"]}),
        ] {
            let Classification::Mutating { vm: Some(vm), .. } = cat.classify(&play, &input) else {
                panic!("mutating with a VM: {input}");
            };
            assert_eq!(vm.several(), Some(vec!["web01", "db01"]), "{input}");
        }
        let one = VmArg {
            key: "host".into(),
            value: "root@jp-ubuntu:22".into(),
        };
        assert_eq!(one.several(), None);
    }

    #[test]
    fn mutating_call_without_the_vm_argument_has_no_vm() {
        let cat = builtin();
        let Classification::Mutating { vm, .. } = cat.classify(
            &ToolName::parse("mcp__ssh__exec", None),
            &json!({"command": "ls"}),
        ) else {
            panic!("mutating");
        };
        assert_eq!(vm, None);
    }

    #[test]
    fn bad_catalogs_are_loud_and_name_file_and_entry() {
        let cases = [
            (
                "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\nvm_args = [\"host\"]\n",
                "unknown field `vm_args`",
            ),
            (
                "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\n",
                "needs vm_arg",
            ),
            (
                "[[read_only]]\nserver = \"\"\ntool = \"x\"\n",
                "can never match",
            ),
            (
                "[[read_only]]\nserver = \"ssh\"\ntool = \"a b\"\n",
                "white space",
            ),
            (
                "[[read_only]]\nserver = \"ssh\"\ntool = \"x\"\n[[read_only]]\nserver = \"ssh\"\ntool = \"x\"\n",
                "listed twice",
            ),
            (
                "[[writes]]\nserver = \"ssh\"\ntool = \"x\"\n",
                "unknown field `writes`",
            ),
            ("[[mutating]\n", "catalog bad.toml"),
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", Catalog::parse(text, "bad.toml").expect_err(text));
            assert!(err.contains("bad.toml"), "{err}");
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }
}
