//! The pieces every reader of a command shares: its words and simple commands, the findings
//! the grammars make of them, and why something cannot be known. A leaf: it names no other
//! part of the analysis.

use std::fmt;

use serde::Serialize;

/// One word of a command: as written, and its value when it has no expansion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Arg {
    pub(crate) raw: String,
    /// `None` when the word holds `$VAR`, `$(…)`, backticks or another expansion.
    pub(crate) value: Option<String>,
}

impl Arg {
    pub(crate) fn literal(text: String) -> Arg {
        Arg {
            raw: text.clone(),
            value: Some(text),
        }
    }

    pub(crate) fn dynamic(raw: String) -> Arg {
        Arg { raw, value: None }
    }

    /// The value, or the text as written when it expands.
    pub(crate) fn text(&self) -> &str {
        self.value.as_deref().unwrap_or(&self.raw)
    }
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Stdin {
    #[default]
    Inherited,
    /// A pipe from the previous command.
    Pipe,
    /// A file (`< script.sh`): its path when the text fixes it.
    File(Option<String>),
    /// A here-document or here-string.
    Text(Arg),
}

/// One simple command, after parsing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cmd {
    pub(crate) words: Vec<Arg>,
    pub(crate) stdin: Stdin,
    /// The first file an output redirection writes to (not `/dev/null`).
    pub(crate) writes: Option<String>,
    /// `NAME=value` words before the command name (the value as written when it expands).
    pub(crate) assignments: Vec<String>,
    /// PowerShell's call operator runs it (`& $x web01`): a leading variable is the program.
    pub(crate) call: bool,
    /// What the previous command of a pipeline writes into this one, when the text fixes it
    /// (`echo 'ssh web01 reboot' | sh`).
    pub(crate) piped: Option<Arg>,
    /// Variables bound around this command by a literal `for` list, innermost last.
    pub(crate) bindings: Vec<(String, String)>,
    /// Run by a wrapper of the same simple command (`sudo`, `env`, `nice`): what belongs to
    /// the whole command (its variables' code, its redirections) was read with the wrapper.
    pub(crate) wrapped: bool,
    /// PowerShell: the variable (lower-case, without `$` or a scope) that what this command
    /// hands on is assigned to (`$s = New-PSSession …`, the last command of `$x = a | b`).
    pub(crate) assigned_to: Option<String>,
    /// PowerShell: the command (by its place among the commands of the same parse) whose
    /// output this one reads through a pipe.
    pub(crate) pipe_from: Option<usize>,
}

/// Why the analysis cannot say what the command does: the hook asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unknown(pub(crate) String);

/// How a parser's refusal of a text begins, so that a text the parser cannot read is told
/// from one past a limit (which always asks).
const UNPARSED: &str = "the command could not be parsed";

impl Unknown {
    pub(crate) fn unparsed(detail: impl fmt::Display) -> Unknown {
        Unknown(format!("{UNPARSED} ({detail})"))
    }

    /// Whether the parser could not read the text (as opposed to a limit or a rule).
    pub(crate) fn is_unparsed(&self) -> bool {
        self.0.starts_with(UNPARSED)
    }
}

/// What a command does on a remote machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Class {
    ReadOnly,
    Mutating,
}

/// How a target is named, which decides how it resolves to a VM reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub(crate) enum TargetKind {
    /// An ssh destination; the ssh configuration may map it to another HostName. `config` is
    /// a `-F` file named on the command line, `user` the remote user it names (`-l`,
    /// `user@`), which a `Match user` block reads.
    Ssh {
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// A host name or address (WinRM, SMB, psexec).
    Host,
    /// An Ansible host pattern, expanded through the inventory.
    Ansible {
        #[serde(skip_serializing_if = "Option::is_none")]
        inventory: Option<String>,
    },
    /// The VM itself (govc, virsh, PowerCLI).
    Vm,
    /// The servers a deploy tool's configuration file (the target's name, relative to the
    /// command's directory) lists, of these roles only when given (`web,workers`).
    Deploy {
        #[serde(skip_serializing_if = "Option::is_none")]
        roles: Option<String>,
    },
}

/// A machine a command reaches, as named in the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    pub name: String,
    #[serde(flatten)]
    pub(crate) kind: TargetKind,
}

/// One remote program found in the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Finding {
    /// The program as the catalog names it (`ssh`, `Invoke-Command`).
    pub(crate) program: String,
    pub(crate) targets: Vec<Target>,
    /// Why the targets cannot be known before the command runs (→ ask).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) unknown: Option<String>,
    /// The command run on the remote side, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) remote: Option<String>,
    pub(crate) class: Class,
    /// Why the class is what it is, in words for the model and the operator.
    pub(crate) why: String,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TargetKind::Ssh { .. } => write!(f, "ssh:{}", self.name),
            TargetKind::Host => write!(f, "host:{}", self.name),
            TargetKind::Ansible { .. } => write!(f, "ansible:{}", self.name),
            TargetKind::Vm => write!(f, "vm:{}", self.name),
            TargetKind::Deploy { .. } => write!(f, "deploy:{}", self.name),
        }
    }
}

/// A command shortened for a message: its first line, at most 80 characters.
pub(crate) fn clip(command: &str) -> String {
    let line = command.lines().next().unwrap_or_default();
    let mut clipped: String = line.chars().take(80).collect();
    if clipped.len() < command.len() {
        clipped.push('…');
    }
    clipped
}
