//! The classifier: one neutral [`ToolCall`] and the configuration in, a [`Plan`] out (the
//! answer, or the exact VMs the guard must checkpoint first). The one code path behind
//! `rewind hook` and `rewind check`.
//!
//! No I/O of its own. What it reads beyond the call and the configuration (what rewind
//! protects of itself, the catalogs, the sessions earlier calls opened, the shell analysis
//! with its inventory and the ssh configuration) comes through the [`Lookup`] its caller hands it; what a call asks to be remembered (a session
//! it opens) comes back in [`Classified::remember`], for the caller to write or not: the
//! hook writes it, `rewind check` does not.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::catalog::{Bound, Catalog, Classification, Entry, ToolName, same_server};
use crate::config::Config;
use crate::decision::{self, Case, Decision, Policy};
use crate::host::{Event, ToolCall};
use crate::sessions::Recalled;
use crate::shell;
use crate::targets::{Targets, VmRef};

/// Longest the shell classifier may spend (parsing, the ssh configuration, the inventory) before it asks.
const SHELL_TIME_MAX: Duration = Duration::from_secs(10);

/// What classification decides before any call to the ZVM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// The answer, known without the ZVM.
    Decided(Decision),
    /// The call reaches exactly these VMs: the guard must run.
    Guard(Vec<VmRef>),
}

/// What the classifier reads from outside the call and the configuration. Read-only: the
/// hook and `rewind check` hand in the same one, reading this machine's files.
pub(crate) trait Lookup {
    /// What rewind protects of itself on this machine (its files, hook entries, the ZVM).
    fn protected(&self) -> crate::selfguard::Protected;

    /// The catalogs that cover a call to the tool `name` (an MCP server's, or the host's).
    fn catalog(&self, name: &ToolName) -> anyhow::Result<Catalog>;

    /// What is remembered of the session `session` of `server`, opened in the host's
    /// session `host_session`.
    fn recall(&self, host_session: &str, server: &str, session: &str) -> Recalled;

    /// The shell analysis of a command typed (`typed`: into a shell already running) or
    /// passed to a tool, its targets resolved, within `until`.
    fn judge(
        &self,
        command: &str,
        dialect: shell::Dialect,
        cwd: Option<&Path>,
        typed: bool,
        until: Instant,
    ) -> anyhow::Result<shell::Judgement>;
}

/// A session a call opens, to be remembered so that later calls naming it reach its VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Remember {
    /// The host's session id: sessions never cross agent sessions.
    pub(crate) host_session: String,
    pub(crate) server: String,
    /// The session's name, as later calls name it.
    pub(crate) session: String,
    /// The one VM it is on; `None` when the call named no one exact VM.
    pub(crate) vm: Option<String>,
}

impl Remember {
    /// What a later call in the same host session recalls of this session, had this been
    /// remembered over `before` (what was remembered of it): the same name opened on another
    /// VM, or on no one VM, is ambiguous.
    fn over(&self, before: Recalled) -> Recalled {
        match (&self.vm, before) {
            (Some(vm), Recalled::Nothing) => Recalled::Vm(vm.clone()),
            (Some(vm), Recalled::Vm(earlier)) if earlier == *vm => Recalled::Vm(earlier),
            _ => Recalled::Ambiguous,
        }
    }
}

/// What the classifier noted of a call, for the audit trail.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Noted {
    /// An after-the-call payload: the tool ran.
    pub(crate) ran: bool,
    /// The call's class (`read-only`, `mutating`, `shell`, `self-protection`, …).
    pub(crate) class: &'static str,
    /// The VM references the call reaches, as the call names them.
    pub(crate) vms: Vec<String>,
}

/// A classified call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classified {
    pub(crate) plan: Plan,
    pub(crate) noted: Noted,
    /// The session the call opens, for the caller to remember before it answers.
    pub(crate) remember: Option<Remember>,
}

impl Classified {
    /// The call whose session could not be remembered (`why`) asks instead: an older record of
    /// the same name would otherwise put the follow-ups on the old VM while the server runs
    /// them on the new one.
    pub(crate) fn not_remembered(self, call: &ToolCall, config: &Config, why: &str) -> Classified {
        let session = self
            .remember
            .as_ref()
            .map(|r| r.session.as_str())
            .unwrap_or_default();
        let why = format!(
            "the session {session:?} it opens could not be remembered: {why}; a later call in that session would be checkpointed on another VM"
        );
        Classified {
            plan: Plan::Decided(decide(call, &Case::VmNotInCall { why: &why }, config)),
            noted: Noted {
                class: self.noted.class,
                ..Noted::default()
            },
            remember: None,
        }
    }
}

/// The hook's policy words from its configuration.
pub(crate) fn policy(config: &Config) -> Policy {
    Policy {
        on_checkpoint: config.hook.on_checkpoint,
        on_zvm_error: config.hook.on_zvm_error,
        operator: false,
    }
}

/// The decision table's answer to `case` about `call`, under the configured policy.
pub(crate) fn decide(call: &ToolCall, case: &Case<'_>, config: &Config) -> Decision {
    decision::decide(&call.tool, &call.change_id(), case, &policy(config))
}

/// Classifies a call, reading only through `lookup`.
pub(crate) fn plan(call: &ToolCall, config: &Config, lookup: &dyn Lookup) -> Classified {
    let mut noted = Noted::default();
    let mut remember = None;
    let plan = classify(call, config, lookup, &mut noted, &mut remember);
    Classified {
        plan,
        noted,
        remember,
    }
}

fn classify(
    call: &ToolCall,
    config: &Config,
    lookup: &dyn Lookup,
    noted: &mut Noted,
    remember: &mut Option<Remember>,
) -> Plan {
    match &call.event {
        Event::BeforeTool => {}
        // After the call: nothing to decide, but the audit trail notes that it ran.
        Event::AfterTool => {
            noted.ran = true;
            return Plan::Decided(decide(call, &Case::AfterTheCall, config));
        }
        Event::Unknown(event) => {
            return Plan::Decided(decide(call, &Case::UnknownEvent(event), config));
        }
    }
    // Before the catalogs: a call that would undo rewind itself asks, whatever carries it.
    let protected = lookup.protected();
    if let Some(why) = crate::selfguard::check_call(call, &protected) {
        noted.class = "self-protection";
        return Plan::Decided(decide(call, &Case::SelfProtection(&why), config));
    }
    let name = ToolName::parse(&call.tool, call.server.as_deref());
    let catalog = match lookup.catalog(&name) {
        Ok(catalog) => catalog,
        Err(e) => {
            return Plan::Decided(decide(call, &Case::CatalogError(&format!("{e:#}")), config));
        }
    };
    let class = catalog.classify(&name, &call.input);
    noted.class = class_name(&class);
    if let (
        ToolName::Mcp { server, .. },
        Classification::ReadOnly(entry) | Classification::Mutating { entry, .. },
    ) = (&name, &class)
    {
        *remember = session_opened(&catalog, server, entry, call);
    }
    match class {
        Classification::Local | Classification::ReadOnly(_) => {
            Plan::Decided(decide(call, &Case::NoVmConcern, config))
        }
        Classification::Shell {
            command,
            dialect,
            entry,
        } => {
            // A command server's command: the same self-protection as the host's shell tool
            // (which was checked above).
            if let Some(why) = command
                .as_deref()
                .filter(|_| entry.is_some())
                .and_then(|c| crate::selfguard::command(c, dialect, None, &protected))
            {
                noted.class = "self-protection";
                return Plan::Decided(decide(call, &Case::SelfProtection(&why), config));
            }
            shell_plan(call, command.as_deref(), dialect, config, lookup, noted)
        }
        Classification::Unlisted => Plan::Decided(decide(call, &Case::Unlisted, config)),
        Classification::Mutating { entry, .. } if entry.ask.is_some() => {
            let why = entry.ask.as_deref().unwrap_or_default();
            Plan::Decided(decide(call, &Case::VmNotInCall { why }, config))
        }
        Classification::Mutating { entry, targets } => {
            let targets = match &name {
                ToolName::Mcp { server, .. } => bind(
                    &catalog,
                    server,
                    &entry,
                    targets,
                    call,
                    lookup,
                    remember.as_ref(),
                ),
                ToolName::Host(_) => targets,
            };
            match targets {
                Targets::Missing { looked_for } if !entry.session_arg.is_empty() => {
                    Plan::Decided(decide(
                        call,
                        &Case::NoVm {
                            looked_for: &looked_for,
                            sessions: true,
                        },
                        config,
                    ))
                }
                targets => decide_targets(call, targets, config, noted),
            }
        }
    }
}

/// A call that runs a command: the shell classifier finds its targets (the one code path
/// `rewind check --command` shares), and they go through [`decide_targets`] like any other.
fn shell_plan(
    call: &ToolCall,
    command: Option<&str>,
    dialect: shell::Dialect,
    config: &Config,
    lookup: &dyn Lookup,
    noted: &mut Noted,
) -> Plan {
    let Some(command) = command else {
        return Plan::Decided(decide(
            call,
            &Case::UnusableVm {
                source: "its command argument",
                why: "is missing or not a string",
            },
            config,
        ));
    };
    let until = Instant::now() + (config.hook.budget / 4).min(SHELL_TIME_MAX);
    let typed = matches!(
        call.tool.as_str(),
        crate::catalog::TYPED_SHELL | crate::catalog::TYPED_POWERSHELL
    );
    let judgement = match lookup.judge(command, dialect, call.cwd.as_deref(), typed, until) {
        Ok(judgement) => judgement,
        Err(e) => {
            return Plan::Decided(decide(call, &Case::CatalogError(&format!("{e:#}")), config));
        }
    };
    // The answer quotes only the words that made the decision (the program, the host word,
    // the option), never the command: a secret in a form no redaction knows stays out of it.
    let source = String::from("the command");
    match judgement.outcome {
        // Typed into a shell that may itself be on another machine (an ssh session): text
        // that names a remote program or a protected machine asks.
        shell::Outcome::NoDecision if judgement.mentions_a_machine => decide_targets(
            call,
            Targets::Unknowable {
                source,
                // The program the text starts with, as the words that decided.
                part: shell::clip(&crate::redact::redact_text(
                    command.split_whitespace().next().unwrap_or_default(),
                )),
                why: String::from(
                    "(it is typed into a shell that is already running, whose machine is not known)",
                ),
            },
            config,
            noted,
        ),
        shell::Outcome::NoDecision => Plan::Decided(decide(call, &Case::NoVmConcern, config)),
        shell::Outcome::Ask { part, why } => decide_targets(
            call,
            Targets::Unknowable {
                source,
                part,
                why: format!("({why})"),
            },
            config,
            noted,
        ),
        shell::Outcome::Checkpoint(vms) => {
            decide_targets(call, Targets::exact(vms, &source), config, noted)
        }
    }
}

/// The session a call opens (`ssh_connect {name, host}`), on its VM, when the host names its
/// own session (without one nothing is remembered). A session opened on no one exact VM is
/// remembered as ambiguous: a follow-up asks even if the same name was opened on a known VM
/// before.
fn session_opened(
    catalog: &Catalog,
    server: &str,
    entry: &Entry,
    call: &ToolCall,
) -> Option<Remember> {
    let host_session = call.session.as_deref().unwrap_or_default();
    if host_session.is_empty() {
        return None;
    }
    let (session, vm) = catalog.session_opened(server, entry, &call.input)?;
    Some(Remember {
        host_session: host_session.to_owned(),
        server: server.to_owned(),
        session,
        vm,
    })
}

/// A mutating call naming no VM itself is put on the VM its server or an earlier session
/// binds it to (a session this same call opens counts as remembered). Anything else is left
/// as the call's own arguments said.
fn bind(
    catalog: &Catalog,
    server: &str,
    entry: &Entry,
    targets: Targets,
    call: &ToolCall,
    lookup: &dyn Lookup,
    opened: Option<&Remember>,
) -> Targets {
    let Targets::Missing { .. } = targets else {
        return catalog.through_profiles(server, targets);
    };
    let host_session = call.session.as_deref().unwrap_or_default();
    let recall = |session: &str| {
        if host_session.is_empty() {
            return None;
        }
        let before = lookup.recall(host_session, server, session);
        match opened {
            Some(opened)
                if opened.host_session == host_session
                    && same_server(&opened.server, server)
                    && opened.session == session =>
            {
                opened.over(before).vm()
            }
            _ => before.vm(),
        }
    };
    match catalog.bound_target(server, entry, &call.input, &recall) {
        Bound::Vm { vm, source } => Targets::exact([vm], &source),
        Bound::No | Bound::UnknownSession { .. } => Targets::Missing {
            looked_for: entry.looked_for(),
        },
    }
}

/// The decision table's side of "which VMs does this call reach": exact targets within
/// `[hook] max_vms` go to the guard; anything else is decided here. Every classifier (a
/// catalog's `vm_arg`, a server bound to one host, the shell parser) ends here.
fn decide_targets(call: &ToolCall, targets: Targets, config: &Config, noted: &mut Noted) -> Plan {
    let max = config.hook.max_vms;
    let decided = |case: &Case<'_>| Plan::Decided(decide(call, case, config));
    match targets {
        Targets::Exact(list) => {
            noted.vms = list.iter().map(|t| t.reference.clone()).collect();
            if list.len() > max {
                decided(&Case::TooManyVms {
                    count: list.len(),
                    max,
                })
            } else {
                Plan::Guard(list)
            }
        }
        Targets::Missing { looked_for } => decided(&Case::NoVm {
            looked_for: &looked_for,
            sessions: false,
        }),
        Targets::Unusable { source, why } => decided(&Case::UnusableVm {
            source: &source,
            why: &why,
        }),
        Targets::Unknowable { source, part, why } => decided(&Case::Unknowable {
            source: &source,
            part: &part,
            why: &why,
        }),
    }
}

fn class_name(class: &Classification) -> &'static str {
    match class {
        Classification::Local => "local",
        Classification::Shell { .. } => "shell",
        Classification::ReadOnly(_) => "read-only",
        Classification::Mutating { .. } => "mutating",
        Classification::Unlisted => "unlisted",
    }
}
