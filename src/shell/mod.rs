//! Shell commands typed into an agent's shell tool: which remote machines they reach, and
//! whether what they run there can change anything.
//!
//! The command is parsed, never grepped: `posix` (bash, with `brush-parser`: pure Rust, MIT,
//! a real AST with here-documents and the pieces of each word, so `web01` is told from
//! `$HOST`; tree-sitter-bash needs a C build and a grammar crate, `yash-syntax` is GPL-3 and
//! cannot be linked) or `powershell` turn the text into simple commands; wrappers (`sudo`,
//! `env`, `nohup`, `timeout`, `nice`, `time`, `exec`, `command`, `bash -c '…'`, `pwsh -c`) are
//! looked through (`wrappers`); code handed to an interpreter (`python3 -c`, `perl -e`,
//! `gdb -ex`) is read for the commands it starts and the connections it opens (`code`); each
//! remote program named in the shell catalog (`catalog`, `catalogs/shell.toml`) is read by its
//! grammar (`programs`) into targets and a remote command, and the remote command is parsed
//! again and judged against a read-only allowlist (`remote`). `resolve` then turns ssh aliases
//! and Ansible patterns into exact VM references. What they all share sits below them: `types`
//! (words, simple commands, findings), `dialect`, and `walk` (the limits every nested text
//! counts against, and the parse of a text into simple commands).
//!
//! The outcome ([`Verdict`]): `Local` (no remote program: not this tool's business, no
//! decision), `ReadOnly` (remote work that only reads: no checkpoint), `Mutating` with the
//! exact targets, or `Unknown` with the part of the command that could not be known (ask). A
//! parse error, an unsupported construct, a cap on commands or depth, or a spent budget is
//! `Unknown` when the text mentions a remote program, never "no remote program".

pub(crate) mod catalog;
pub(crate) mod code;
mod deploy_config;
pub(crate) mod dialect;
mod net;
mod posix;
mod powershell;
mod programs;
mod remote;
pub(crate) mod resolve;
mod runners;
mod ssh_config;
mod types;
mod walk;
pub(crate) mod wrappers;
pub(crate) mod writes;

use std::fmt;
use std::time::Instant;

use serde::Serialize;

pub use self::catalog::ShellCatalog;
pub use self::dialect::Dialect;
pub use self::types::Target;
pub(crate) use self::types::{Arg, Class, Cmd, Finding, Stdin, Unknown, clip};
use self::walk::Walk;
use crate::inventory::Inventory;

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

/// The simple commands of `text` as the parser sees them (wrappers are not looked through,
/// `$(…)` and process substitutions are included), for checks that read words and output
/// redirections rather than remote programs.
pub(crate) fn simple_commands(text: &str, dialect: Dialect) -> Result<Vec<Cmd>, Unknown> {
    Walk::new(None).parse(text, dialect)
}

/// The variables `commands` (one parsed POSIX text) set exactly once, to a value the text
/// fixes given `outer` (the variables known around it, innermost last): what `$NAME`
/// expands to after them, as the shell analysis reads it.
pub(crate) fn variables(commands: &[Cmd], outer: &[(String, String)]) -> Vec<(String, String)> {
    programs::assigned_values(commands, outer)
}

/// `cmd` with each word whose only expansions are `vars` (innermost last) or the command's
/// own loop bindings given its value, split as bash splits an unquoted expansion: the same
/// reading the shell analysis gives a word.
pub(crate) fn with_values(cmd: &Cmd, vars: &[(String, String)]) -> Cmd {
    programs::bind_values(cmd, vars)
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
    // `web01.corp.example.`: a fully qualified name's root dot names the same machine.
    for target in findings.iter_mut().flat_map(|f| f.targets.iter_mut()) {
        if let Some(name) = net::without_root_dot(&target.name) {
            target.name = name.to_owned();
        }
    }
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
    /// Whether the text names a remote program or a machine rewind protects at all: asked
    /// only of text typed into a running shell that the analysis leaves without a decision
    /// (`false` for any other).
    pub(crate) mentions_a_machine: bool,
}

/// Analyses `command` with the configured shell catalogs and resolves the targets of its
/// mutating work (the ssh configuration, the Ansible inventory) before `until`. `cwd` is the directory the
/// command runs in; `typed`, whether it is typed into a shell already running (whose machine
/// is not known). Errors are catalog errors (the hook denies on them).
pub(crate) fn judge(
    command: &str,
    dialect: Dialect,
    config: &crate::config::Config,
    cwd: Option<&std::path::Path>,
    typed: bool,
    until: Instant,
) -> anyhow::Result<Judgement> {
    let catalog = ShellCatalog::load(true, &config.shell.catalogs)?;
    // Through a broker, the net it publishes: the agent's own cache is the agent's to empty.
    let mut known = if config.broker.socket.is_some() {
        crate::broker::client::published_net(&config.broker)
    } else {
        Inventory::load_cached()
    };
    for (alias, vm) in &config.vm_aliases {
        known.add(alias);
        known.add(vm);
    }
    let analysis = analyse(command, dialect, &catalog, &known, Some(until));
    let mentions_a_machine = typed
        && matches!(analysis.verdict, Verdict::Local | Verdict::ReadOnly)
        && (catalog.names_a_program(command).is_some()
            || command
                .split(net::is_separator)
                .any(|word| net::protected(word, &known).is_some()));
    // The built-in catalog is read when the command first needs it: broken (it never is),
    // nothing it found can be trusted.
    catalog.builtin_error()?;
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
    Ok(Judgement {
        analysis,
        outcome,
        mentions_a_machine,
    })
}
