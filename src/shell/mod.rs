//! Shell commands typed into an agent's shell tool: which remote machines they reach, and
//! whether what they run there can change anything.
//!
//! The command is parsed, never grepped: `posix` (bash, with `brush-parser`: pure Rust, MIT,
//! a real AST with here-documents and the pieces of each word, so `web01` is told from
//! `$HOST`; tree-sitter-bash needs a C build and a grammar crate, `yash-syntax` is GPL-3 and
//! cannot be linked) or `powershell` turn the text into simple commands; wrappers (`sudo`,
//! `env`, `nohup`, `timeout`, `nice`, `time`, `exec`, `command`, `bash -c '…'`, `pwsh -c`) are
//! looked through (`wrappers`); each remote program named in the shell catalog (`catalog`,
//! `catalogs/shell.toml`) is read by its grammar (`programs`) into targets and a remote
//! command, and the remote command is parsed again and judged against a read-only allowlist
//! (`remote`). `resolve` then turns ssh aliases and Ansible patterns into exact VM
//! references.
//!
//! The outcome ([`Verdict`]): `Local` (no remote program: not this tool's business, no
//! decision), `ReadOnly` (remote work that only reads: no checkpoint), `Mutating` with the
//! exact targets, or `Unknown` with the part of the command that could not be known (ask). A
//! parse error, an unsupported construct, a cap on commands or depth, or a spent budget is
//! `Unknown` when the text mentions a remote program, never "no remote program".

pub(crate) mod catalog;
pub(crate) mod dialect;
mod net;
mod posix;
mod powershell;
mod programs;
mod remote;
pub(crate) mod resolve;
mod runners;
mod wrappers;

use std::fmt;
use std::time::Instant;

use serde::Serialize;

pub use self::catalog::ShellCatalog;
pub use self::dialect::Dialect;
use crate::inventory::Inventory;

/// Most simple commands one call may hold before the analysis gives up (→ ask).
const MAX_COMMANDS: usize = 2000;
/// Deepest nesting (`bash -c "$(…)"`, remote commands inside remote commands) followed.
const MAX_DEPTH: usize = 16;
/// Deepest nesting of brackets and compound commands handed to a parser (it recurses per
/// level); deeper text asks.
const MAX_NESTING: usize = 48;
/// Longest command text analysed; longer text that mentions a remote program → ask.
const MAX_TEXT: usize = 256 * 1024;

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
    /// An ssh destination; `ssh -G` may map it to another HostName. `config` is a `-F` file
    /// named on the command line.
    Ssh {
        #[serde(skip_serializing_if = "Option::is_none")]
        config: Option<String>,
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

/// What the hook should do with a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "verdict", content = "detail")]
pub enum Verdict {
    /// No remote program: no decision.
    Local,
    /// Only read-only remote work: no checkpoint, no decision.
    ReadOnly,
    /// Remote work that can change these targets: checkpoint them first.
    Mutating(Vec<Target>),
    /// Something could not be known: ask, saying which part and why.
    Unknown { part: String, why: String },
}

/// The analysis of one command string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Analysis {
    pub verdict: Verdict,
    pub(crate) findings: Vec<Finding>,
}

impl Analysis {
    fn local() -> Analysis {
        Analysis {
            verdict: Verdict::Local,
            findings: Vec::new(),
        }
    }
}

/// Counters and limits shared by one analysis, through every nested text.
pub(crate) struct Walk {
    pub(crate) commands: Vec<Cmd>,
    /// Loop variables bound while a literal `for` body is walked.
    pub(crate) bindings: Vec<(String, String)>,
    depth: usize,
    count: usize,
    until: Option<Instant>,
}

impl Walk {
    fn new(until: Option<Instant>) -> Walk {
        Walk {
            commands: Vec::new(),
            bindings: Vec::new(),
            depth: 0,
            count: 0,
            until,
        }
    }

    pub(crate) fn enter(&mut self) -> Result<(), Unknown> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unknown(format!(
                "the command nests deeper than {MAX_DEPTH} levels"
            )));
        }
        self.check_time()
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(crate) fn count(&mut self) -> Result<(), Unknown> {
        self.count += 1;
        if self.count > MAX_COMMANDS {
            return Err(Unknown(format!(
                "the command holds more than {MAX_COMMANDS} simple commands"
            )));
        }
        self.check_time()
    }

    fn check_time(&self) -> Result<(), Unknown> {
        match self.until {
            Some(until) if Instant::now() >= until => Err(Unknown(String::from(
                "the time to analyse the command ran out",
            ))),
            _ => Ok(()),
        }
    }

    /// Parses `text` in `dialect` and returns its simple commands.
    pub(crate) fn parse(&mut self, text: &str, dialect: Dialect) -> Result<Vec<Cmd>, Unknown> {
        if text.len() > MAX_TEXT {
            return Err(Unknown(format!(
                "the command is longer than {} KiB",
                MAX_TEXT / 1024
            )));
        }
        if nesting_depth(text, dialect) > MAX_NESTING {
            return Err(Unknown(format!(
                "the command nests deeper than {MAX_NESTING} levels"
            )));
        }
        let outer = std::mem::take(&mut self.commands);
        let result = match dialect {
            Dialect::Posix => posix::walk_text(text, self),
            Dialect::PowerShell => powershell::walk_text(text, self),
        };
        let commands = std::mem::replace(&mut self.commands, outer);
        result.map(|()| commands)
    }
}

/// An upper bound on how deeply `text` nests, quotes ignored: brackets, and in POSIX text
/// the compound commands (`if`, `while`, `until`, `for`, `select`, `case`) that the parser
/// recurses into. Checked before parsing, so no input can take a parser's recursion to the
/// end of the stack; past [`MAX_NESTING`] the command asks.
fn nesting_depth(text: &str, dialect: Dialect) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut word = String::new();
    let keyword = |word: &mut String, depth: &mut usize, deepest: &mut usize| {
        if dialect == Dialect::Posix {
            match word.as_str() {
                "if" | "while" | "until" | "for" | "select" | "coproc" | "function" => {
                    *depth += 1;
                    *deepest = (*deepest).max(*depth);
                }
                // Each of a case's patterns ends in a `)` that takes one level off again.
                "case" => {
                    *depth += 2;
                    *deepest = (*deepest).max(*depth);
                }
                "fi" | "done" | "esac" => *depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        word.clear();
    };
    for c in text.chars() {
        match c {
            '(' | '{' | '[' => {
                keyword(&mut word, &mut depth, &mut deepest);
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | '}' | ']' => {
                keyword(&mut word, &mut depth, &mut deepest);
                depth = depth.saturating_sub(1);
            }
            c if c.is_alphanumeric() || c == '_' || c == '-' => word.push(c),
            _ => keyword(&mut word, &mut depth, &mut deepest),
        }
    }
    keyword(&mut word, &mut depth, &mut deepest);
    deepest
}

/// The simple commands of `text` as the parser sees them (wrappers are not looked through,
/// `$(…)` and process substitutions are included), for checks that read words and output
/// redirections rather than remote programs.
pub(crate) fn simple_commands(text: &str, dialect: Dialect) -> Result<Vec<Cmd>, Unknown> {
    Walk::new(None).parse(text, dialect)
}

/// Analyses a command string: its remote programs, their targets and remote commands, and
/// the verdict. Pure: no process is started (see `resolve` for that). `known` is the
/// protected-VM net: a program the catalog does not know that names one of them asks.
/// `until` bounds the time spent; past it the verdict is `Unknown`.
pub fn analyse(
    command: &str,
    dialect: Dialect,
    catalog: &ShellCatalog,
    known: &Inventory,
    until: Option<Instant>,
) -> Analysis {
    // Every command is parsed: what cannot be read asks, and a quick look at the text
    // cannot tell a name built at run time (`x=ss; ${x}h`) from local work.
    if command.trim().is_empty() {
        return Analysis::local();
    }
    let mut walk = Walk::new(until);
    let mut findings = Vec::new();
    let result = programs::analyse_text(command, dialect, catalog, known, &mut walk, &mut findings);
    let verdict = match result {
        Err(Unknown(why)) => Verdict::Unknown {
            part: catalog
                .first_mention(command)
                .map_or_else(|| clip(command), str::to_owned),
            why,
        },
        Ok(()) => summarise(&findings),
    };
    Analysis { verdict, findings }
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

fn summarise(findings: &[Finding]) -> Verdict {
    if let Some(f) = findings.iter().find(|f| f.unknown.is_some()) {
        return Verdict::Unknown {
            part: f.program.clone(),
            why: f.unknown.clone().unwrap_or_default(),
        };
    }
    let mut targets: Vec<Target> = Vec::new();
    for finding in findings.iter().filter(|f| f.class == Class::Mutating) {
        for target in &finding.targets {
            if !targets.contains(target) {
                targets.push(target.clone());
            }
        }
    }
    if !targets.is_empty() {
        return Verdict::Mutating(targets);
    }
    if findings.is_empty() {
        Verdict::Local
    } else {
        Verdict::ReadOnly
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TargetKind::Ssh { .. } => write!(f, "ssh:{}", self.name),
            TargetKind::Host => write!(f, "host:{}", self.name),
            TargetKind::Ansible { .. } => write!(f, "ansible:{}", self.name),
            TargetKind::Vm => write!(f, "vm:{}", self.name),
        }
    }
}

impl fmt::Display for Analysis {
    /// The explanation `rewind check --command` prints, one finding per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::Local => writeln!(f, "local: no remote program, no decision")?,
            Verdict::ReadOnly => writeln!(f, "read-only: remote work only reads, no checkpoint")?,
            Verdict::Mutating(targets) => {
                let names: Vec<String> = targets.iter().map(ToString::to_string).collect();
                writeln!(f, "mutating: checkpoint {}", names.join(", "))?;
            }
            Verdict::Unknown { part, why } => writeln!(f, "unknown (ask): `{part}`: {why}")?,
        }
        for finding in &self.findings {
            let names: Vec<String> = finding.targets.iter().map(ToString::to_string).collect();
            write!(
                f,
                "  {} → [{}] {}",
                finding.program,
                names.join(", "),
                match finding.class {
                    Class::ReadOnly => "read-only",
                    Class::Mutating => "mutating",
                }
            )?;
            if let Some(remote) = &finding.remote {
                write!(f, " remote={remote:?}")?;
            }
            match &finding.unknown {
                Some(unknown) if *unknown == finding.why => write!(f, ": unknown: {unknown}")?,
                Some(unknown) => write!(f, ": {} (unknown: {unknown})", finding.why)?,
                None => write!(f, ": {}", finding.why)?,
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

/// What the hook does with a command once its targets are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Local, or remote work that only reads: no decision.
    NoDecision,
    /// Something could not be known: ask, saying which part and why.
    Ask { part: String, why: String },
    /// Checkpoint these VM references before the command runs.
    Checkpoint(Vec<String>),
}

/// The analysis of a command and what follows from it: the one code path shared by the hook
/// and `rewind check --command`.
#[derive(Debug, Clone)]
pub(crate) struct Judgement {
    pub(crate) analysis: Analysis,
    pub(crate) outcome: Outcome,
    /// Whether the text names a remote program or a machine rewind protects at all.
    pub(crate) mentions_a_machine: bool,
}

/// Analyses `command` with the configured shell catalogs and resolves the targets of its
/// mutating work (`ssh -G`, the Ansible inventory) before `until`. `cwd` is the directory the
/// command runs in. Errors are catalog errors (the hook denies on them).
pub(crate) fn judge(
    command: &str,
    dialect: Dialect,
    config: &crate::config::Config,
    cwd: Option<&std::path::Path>,
    until: Instant,
) -> anyhow::Result<Judgement> {
    let catalog = ShellCatalog::load(true, &config.shell.catalogs)?;
    let mut known = Inventory::load_cached();
    for (alias, vm) in &config.vm_aliases {
        known.add(alias);
        known.add(vm);
    }
    let analysis = analyse(command, dialect, &catalog, &known, Some(until));
    let outcome = match &analysis.verdict {
        Verdict::Local | Verdict::ReadOnly => Outcome::NoDecision,
        Verdict::Unknown { part, why } => Outcome::Ask {
            part: part.clone(),
            why: why.clone(),
        },
        Verdict::Mutating(targets) => {
            let options = resolve::Options {
                resolve_ssh_config: config.shell.resolve_ssh_config,
                ansible_inventory: config.shell.ansible_inventory.clone(),
                home: crate::config::home_dir(),
                cwd: cwd.map(std::path::Path::to_path_buf),
            };
            match resolve::resolve(targets, &options, until) {
                Ok(references) if references.is_empty() => Outcome::Ask {
                    part: clip(command),
                    why: String::from("names no target to checkpoint"),
                },
                Ok(references) => Outcome::Checkpoint(references),
                Err(why) => Outcome::Ask {
                    part: targets
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    why,
                },
            }
        }
    };
    let mentions_a_machine = catalog.names_a_program(command).is_some()
        || command
            .split(net::is_separator)
            .any(|word| net::protected(word, &known).is_some());
    Ok(Judgement {
        analysis,
        outcome,
        mentions_a_machine,
    })
}
