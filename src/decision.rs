//! The decision table: every answer the hook gives is a [`Case`] turned into a
//! [`Decision`] by [`decide`], here and nowhere else (a decision the broker made comes back
//! over its socket in its wire form, made by this same table there). Pure: facts in, one
//! decision out.
//!
//! | case                                                 | decision                              |
//! |------------------------------------------------------|---------------------------------------|
//! | stdin empty, not JSON, oversize, no tool, host unknown | block: exit 2 + one stderr line     |
//! | stdin unreadable, or still open when the budget ends | block                                 |
//! | stdout goes where no answer can reach the host       | block                                 |
//! | configuration broken                                 | deny                                  |
//! | catalog broken                                       | deny                                  |
//! | internal error or panic                              | deny                                  |
//! | the hook's budget about to run out (the watchdog)    | deny                                  |
//! | after the call (the tool already ran)                | none (audited as "ran")               |
//! | an event the host's dialect does not know            | deny                                  |
//! | a call that would undo rewind's own safety net       | ask, naming what it protects          |
//! | local host tool, read-only, or no remote target      | none                                  |
//! | tool in no catalog                                   | ask                                   |
//! | mutating, no VM in the arguments, no binding         | ask                                   |
//! | mutating, the catalog says the VM is not in the call | ask, saying why                       |
//! | mutating, the deciding value cannot name a VM        | ask                                   |
//! | mutating, a host pattern that needs an inventory     | ask, naming the part                  |
//! | mutating, more VMs than `[hook] max_vms`             | ask                                   |
//! | mutating, a VM unknown to Zerto                      | ask: nothing to rewind to             |
//! | mutating, a reference matches several VMs            | ask, listing the candidates           |
//! | ZVM unreachable, login refused, TLS untrusted        | deny (or ask: `on_zvm_error`)         |
//! | other ZVM error before the guard                     | deny                                  |
//! | checkpoint confirmed on every VPG of every VM        | none + context (or allow + context)   |
//! | a VPG's checkpoint failed or never listed            | deny, naming VPG, task, state, reason |

use std::fmt::Write as _;
use std::time::Duration;

use crate::config::{OnCheckpoint, OnZvmError};
use crate::guard::{GuardReport, Refusal, VpgOutcome};
use crate::zvm::Vm;
use crate::zvm::ZvmError;
use crate::zvm::resolve::Unresolved;

/// The hook's answer to the host, in no host's words (each dialect renders it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No opinion: the host's own permission rules apply.
    None,
    /// No permission decision, but context for the model (a confirmed checkpoint).
    Context(String),
    /// Allow, with context for the model (`on_checkpoint = "allow"`).
    Allow {
        reason: String,
        context: String,
    },
    Deny(String),
    Ask(String),
    /// Refuse without a structured answer: exit 2 with one line on stderr.
    Block(String),
}

impl Decision {
    /// The short name used in the audit trail and `rewind log --decision`.
    pub(crate) fn label(&self) -> &'static str {
        self.outcome().as_str()
    }

    /// The decision as the audit trail records it.
    pub(crate) fn outcome(&self) -> crate::audit::Ending {
        use crate::audit::Ending;
        match self {
            Self::None => Ending::None,
            Self::Context(_) => Ending::Context,
            Self::Allow { .. } => Ending::Allow,
            Self::Deny(_) => Ending::Deny,
            Self::Ask(_) => Ending::Ask,
            Self::Block(_) => Ending::Block,
        }
    }

    /// The reason or context text, if any.
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Self::None => None,
            Self::Context(text)
            | Self::Deny(text)
            | Self::Ask(text)
            | Self::Block(text)
            | Self::Allow { context: text, .. } => Some(text),
        }
    }
}

/// What the hook found out about a call: one variant per row of the table.
#[derive(Debug)]
pub(crate) enum Case<'a> {
    /// No call to classify, or no way to answer one: refused by exit code.
    Refused(BlockReason<'a>),
    /// The configuration file is broken.
    ConfigError(&'a str),
    /// A catalog is broken.
    CatalogError(&'a str),
    /// A bug in rewind (a panic, a thread that could not start).
    Internal(&'a str),
    /// The watchdog's budget ran out while the worker was `doing` something.
    BudgetSpent { budget: Duration, doing: &'a str },
    /// The tool already ran.
    AfterTheCall,
    /// An event name the host's dialect does not know.
    UnknownEvent(&'a str),
    /// A call that would undo rewind's own safety net ([`crate::selfguard`]): the ask,
    /// naming what it protects.
    SelfProtection(&'a str),
    /// A local tool, a read-only one, or a command that reaches no remote host.
    NoVmConcern,
    /// The tool is in no catalog.
    Unlisted,
    /// The host does not say which MCP server runs the tool, and it cannot be told (`why`).
    UnknownServer { why: &'a str },
    /// A mutating call naming no VM; `looked_for` says where. With `sessions`, the entry
    /// also reads a session an earlier call opened, and none was found.
    NoVm { looked_for: &'a str, sessions: bool },
    /// The catalog says which VM this tool changes cannot be known from its call (`ask`).
    VmNotInCall { why: &'a str },
    /// A mutating call whose deciding value cannot name a VM.
    UnusableVm { source: &'a str, why: &'a str },
    /// A mutating call naming hosts that cannot be known exactly.
    Unknowable {
        source: &'a str,
        part: &'a str,
        why: &'a str,
    },
    /// A mutating call naming more VMs than `[hook] max_vms`.
    TooManyVms { count: usize, max: usize },
    /// These references (of `of` targets) match no protected VM.
    UnknownVm { references: &'a [String], of: usize },
    /// A reference matches several VMs.
    AmbiguousVm {
        reference: &'a str,
        candidates: &'a [Vm],
    },
    /// The ZVM could not be asked before the guard; `vms` names the targets.
    ZvmError { vms: &'a str, error: &'a ZvmError },
    /// The guard ran.
    Guarded(&'a GuardReport),
    /// The broker holding the ZVM credentials could not be asked, or gave no usable answer;
    /// `error` names its socket. Softened by `on_zvm_error` as a ZVM that cannot be reached.
    BrokerFailed { vms: &'a str, error: &'a str },
}

/// Largest stdin accepted from any host; a larger payload is refused rather than truncated.
pub(crate) const MAX_INPUT: usize = 1024 * 1024;

/// Why stdin is not a usable call (each is exit 2 with one line on stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    Empty,
    TooLarge,
    NotJson(String),
    /// JSON, but not an object (`[1,2]`, `"text"`, `42`): names what it is.
    NotObject(&'static str),
    NoToolName,
    /// No `--host`, and the payload matches no host's fingerprint.
    UnknownHost,
    /// A payload sent after the tool ran that cannot be read: nothing to decide.
    AfterTheCall,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("rewind: empty hook input on stdin; refusing the call"),
            Self::TooLarge => write!(
                f,
                "rewind: hook input is larger than {} KiB; refusing the call",
                MAX_INPUT / 1024
            ),
            Self::NotJson(e) => {
                write!(f, "rewind: hook input is not JSON ({e}); refusing the call")
            }
            Self::NotObject(kind) => write!(
                f,
                "rewind: hook input is {kind}, not a JSON object; refusing the call"
            ),
            Self::NoToolName => {
                f.write_str("rewind: hook input has no tool_name; refusing the call")
            }
            Self::UnknownHost => f.write_str(
                "rewind: cannot tell which agent host sent this hook input; refusing the call (install the hook with `--host`)",
            ),
            Self::AfterTheCall => f.write_str("rewind: unreadable input after the call"),
        }
    }
}

/// Why the hook refuses by exit code, before any classification.
#[derive(Debug)]
pub(crate) enum BlockReason<'a> {
    /// stdin is not a call `rewind` can read.
    BadInput(&'a Unreadable),
    /// stdin could not be read, or was still open when the budget ran out (`why`).
    StdinUnreadable(&'a str),
    /// No answer can reach the host (`why`: its stdout is `/dev/null`, closed, full, …).
    NoReader(&'a str),
}

impl std::fmt::Display for BlockReason<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadInput(why) => write!(f, "{why}"),
            Self::StdinUnreadable(why) => {
                write!(f, "rewind: cannot read stdin ({why}); refusing the call")
            }
            Self::NoReader(why) => write!(
                f,
                "rewind: {why}, so no decision can reach the host; refusing the call"
            ),
        }
    }
}

impl<'a> From<&'a Unresolved> for Case<'a> {
    fn from(unresolved: &'a Unresolved) -> Self {
        match unresolved {
            Unresolved::Unknown { references, of } => Case::UnknownVm {
                references,
                of: *of,
            },
            Unresolved::Ambiguous {
                reference,
                candidates,
            } => Case::AmbiguousVm {
                reference,
                candidates,
            },
        }
    }
}

/// How the hook answers where the configuration has a say.
pub(crate) struct Policy {
    pub(crate) on_checkpoint: OnCheckpoint,
    pub(crate) on_zvm_error: OnZvmError,
    /// The decision is for the operator's own command (`rewind guard`), which is told the
    /// ZVM's address and route when a call fails; an agent is told what failed and what to
    /// do ([`ZvmError::for_agent`]).
    pub(crate) operator: bool,
}

impl Policy {
    /// A ZVM failure as this decision's reader may see it.
    fn zvm_text(&self, error: &ZvmError) -> String {
        if self.operator {
            error.to_string()
        } else {
            error.for_agent()
        }
    }
}

impl Default for Policy {
    /// The defaults of `[hook]`: context on a confirmed checkpoint, deny on ZVM trouble.
    fn default() -> Self {
        Self {
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Deny,
            operator: false,
        }
    }
}

/// The decision for a case about a call to `tool` with change id `change`. Its text
/// leaves the process (to the host, the model, the audit trail), so it goes through the same
/// redaction as the call's stored arguments: a command, a VM reference, a parse error or an
/// error message it quotes carries no secret.
pub(crate) fn decide(tool: &str, change: &str, case: &Case<'_>, policy: &Policy) -> Decision {
    let redact = |text: String| crate::redact::redact_text(&text);
    match decide_unredacted(tool, change, case, policy) {
        Decision::None => Decision::None,
        Decision::Context(text) => Decision::Context(redact(text)),
        Decision::Allow { reason, context } => Decision::Allow {
            reason: redact(reason),
            context: redact(context),
        },
        Decision::Deny(text) => Decision::Deny(redact(text)),
        Decision::Ask(text) => Decision::Ask(redact(text)),
        Decision::Block(text) => Decision::Block(redact(text)),
    }
}

fn decide_unredacted(tool: &str, change: &str, case: &Case<'_>, policy: &Policy) -> Decision {
    match case {
        Case::Refused(refusal) => Decision::Block(refusal.to_string()),
        Case::ConfigError(error) => Decision::Deny(format!("rewind: configuration error: {error}")),
        Case::CatalogError(error) => Decision::Deny(format!(
            "rewind: catalog error, so {tool} cannot be classified: {error}"
        )),
        Case::Internal(error) => Decision::Deny(format!(
            "rewind: internal error ({error}); the call was not allowed"
        )),
        Case::BudgetSpent { budget, doing } => Decision::Deny(format!(
            "rewind: the hook's {} s budget ran out while {doing}; no confirmed checkpoint, so the call was not allowed",
            budget.as_secs_f64(),
        )),
        Case::AfterTheCall | Case::NoVmConcern => Decision::None,
        Case::SelfProtection(why) => Decision::Ask((*why).to_owned()),
        Case::UnknownEvent(event) => Decision::Deny(format!(
            "rewind: hook event {event:?} is not one this host sends before a tool call, so {tool} was not allowed; check the hook entry in the host's settings"
        )),
        Case::UnknownServer { why } => Decision::Ask(format!(
            "rewind: {why}, so no catalog can say whether it can change a VM and no Zerto checkpoint was taken. \
             Approve only if it cannot change a VM."
        )),
        Case::Unlisted => Decision::Ask(format!(
            "rewind: {tool} is in no catalog, so nobody has said whether it can change a VM; no Zerto checkpoint was taken. \
             Approve only if it cannot change a VM, or record it with `rewind catalog add`."
        )),
        Case::NoVm {
            looked_for,
            sessions: true,
        } => Decision::Ask(format!(
            "rewind: {tool} can change a VM, but none of its arguments {looked_for} names one, and no session it names was opened \
             earlier in this agent session (or the server has no [[server]] binding), so no Zerto checkpoint was taken. \
             Approve only if nothing on a VM needs rewinding."
        )),
        Case::VmNotInCall { why } => Decision::Ask(format!(
            "rewind: {tool} can change a VM, but which one cannot be known from the call ({why}), so no Zerto checkpoint was taken. \
             Approve only if nothing on a VM needs rewinding."
        )),
        Case::NoVm {
            looked_for,
            sessions: false,
        } => Decision::Ask(format!(
            "rewind: {tool} can change a VM, but none of its arguments {looked_for} names one, so no Zerto checkpoint was taken. Approve only if nothing on a VM needs rewinding."
        )),
        Case::UnusableVm { source, why } => Decision::Ask(format!(
            "rewind: {tool} can change a VM, but {source} {why}, so it names no VM and no Zerto checkpoint was taken. Approve only if nothing on a VM needs rewinding."
        )),
        Case::Unknowable { source, part, why } => Decision::Ask(format!(
            "rewind: {tool} reaches hosts that cannot be known exactly: `{part}` in {source} {why}. No Zerto checkpoint was taken; \
             approve only if nothing on those hosts needs rewinding, or name the hosts one by one."
        )),
        Case::TooManyVms { count, max } => Decision::Ask(format!(
            "rewind: {tool} names {count} hosts, more than the {max} one call may checkpoint ([hook] max_vms); no Zerto checkpoint was taken. \
             Approve only if nothing on them needs rewinding, or split the call."
        )),
        Case::UnknownVm { references, of } => match references {
            [reference] if *of == 1 => Decision::Ask(format!(
                "rewind: VM {reference:?} is unknown to Zerto, so there is no checkpoint to rewind to if {tool} goes wrong. Approve only if that is acceptable."
            )),
            _ => Decision::Ask(format!(
                "rewind: {tool} reaches {of} VMs, and Zerto knows none by {}, so there is nothing to rewind to there; no checkpoint was taken on any of them. Approve only if that is acceptable.",
                quoted(references.iter().map(String::as_str))
            )),
        },
        Case::AmbiguousVm {
            reference,
            candidates,
        } => {
            let list: Vec<String> = candidates.iter().map(Vm::describe).collect();
            Decision::Ask(format!(
                "rewind: {reference:?} matches {} VMs in Zerto: {}. No checkpoint was taken; name the VM by its vmIdentifier or add a [vm_aliases] entry.",
                candidates.len(),
                list.join("; ")
            ))
        }
        Case::ZvmError { vms, error } if error.is_connection_problem() => {
            zvm_error(vms, &policy.zvm_text(error), policy)
        }
        Case::ZvmError { vms, error } => Decision::Deny(format!(
            "rewind: no checkpoint of {} could be taken, so {tool} was not allowed: {}",
            vm_words(vms),
            policy.zvm_text(error)
        )),
        Case::Guarded(report) => guarded(report, tool, change, policy),
        Case::BrokerFailed { vms, error } => {
            let text = format!(
                "rewind: could not ask the rewind broker for a checkpoint of {}: {error}",
                vm_words(vms)
            );
            match policy.on_zvm_error {
                OnZvmError::Deny => Decision::Deny(text),
                OnZvmError::Ask => Decision::Ask(text),
            }
        }
    }
}

/// `VM "a"` for one VM, `VMs "a,b"` for several (names joined by commas).
fn vm_words(vms: &str) -> String {
    if vms.contains(',') {
        format!("VMs {vms:?}")
    } else {
        format!("VM {vms:?}")
    }
}

fn quoted<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|i| format!("{i:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn names(report: &GuardReport) -> String {
    report
        .vms
        .iter()
        .map(|vm| vm.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn guarded(report: &GuardReport, tool: &str, change: &str, policy: &Policy) -> Decision {
    if report.confirmed() {
        let context = checkpoint_context(report, change);
        match policy.on_checkpoint {
            OnCheckpoint::Context => Decision::Context(context),
            OnCheckpoint::Allow => Decision::Allow {
                reason: format!(
                    "rewind: Zerto checkpoint confirmed on {} {}",
                    if report.vms.len() == 1 { "VM" } else { "VMs" },
                    names(report)
                ),
                context,
            },
        }
    } else if let Some(error) = report.only_zvm_error() {
        let vms: Vec<&str> = report.vms.iter().map(|vm| vm.name.as_str()).collect();
        zvm_error(&vms.join(","), &policy.zvm_text(error), policy)
    } else if report.only_unrestorable() && policy.on_zvm_error == OnZvmError::Ask {
        // A VPG whose status rules out a restorable point: [hook] on_zvm_error = "ask" lets
        // a person decide to go on without one.
        Decision::Ask(refusal(
            report,
            tool,
            "needs a person's yes to go on without one",
            policy,
        ))
    } else {
        Decision::Deny(refusal(report, tool, "was not allowed", policy))
    }
}

fn zvm_error(vms: &str, error: &str, policy: &Policy) -> Decision {
    let text = format!(
        "rewind: could not ask Zerto for a checkpoint of {}: {error}",
        vm_words(vms)
    );
    match policy.on_zvm_error {
        OnZvmError::Deny => Decision::Deny(text),
        OnZvmError::Ask => Decision::Ask(text),
    }
}

/// How a VPG is named in a message: with the VMs it protects when the call reaches several.
fn vpg_label(report: &GuardReport, vpg: &VpgOutcome) -> String {
    if report.vms.len() == 1 {
        format!("VPG {}", vpg.vpg.name)
    } else {
        let word = if vpg.vms.len() == 1 { "VM" } else { "VMs" };
        format!("VPG {} ({word} {})", vpg.vpg.name, vpg.vms.join(", "))
    }
}

/// The deny reason: every VPG that has no confirmed checkpoint, and why.
fn refusal(report: &GuardReport, tool: &str, verdict: &str, policy: &Policy) -> String {
    let mut text = match report.vms.as_slice() {
        [vm] => format!(
            "rewind: Zerto did not confirm a checkpoint of VM {:?}, so {tool} {verdict}.",
            vm.name
        ),
        _ => format!(
            "rewind: Zerto did not confirm a checkpoint of every VM this call reaches ({}), so {tool} {verdict}.",
            names(report)
        ),
    };
    for vpg in &report.vpgs {
        let label = vpg_label(report, vpg);
        match &vpg.result {
            Ok(tagged) => {
                let _ = write!(
                    text,
                    " {label}: checkpoint {} confirmed.",
                    tagged.checkpoint.id
                );
            }
            Err(Refusal::Zvm(error)) => {
                let _ = write!(text, " {label}: {}.", policy.zvm_text(error));
            }
            Err(why) => {
                let _ = write!(text, " {label}: {why}.");
            }
        }
    }
    text
}

/// A time to the minute, for people: `2026-03-02 10:00 UTC`.
pub(crate) fn about_utc(at: std::time::SystemTime) -> String {
    let iso = crate::time::format_utc(at);
    format!(
        "{} UTC",
        iso.get(..16).unwrap_or(&iso).replacen('T', " ", 1)
    )
}

/// A journal history in its largest whole unit: `1 h`, `90 min`, `7 d`.
pub(crate) fn history_words(history: std::time::Duration) -> String {
    let minutes = history.as_secs() / 60;
    if minutes >= 24 * 60 && minutes.is_multiple_of(24 * 60) {
        format!("{} d", minutes / (24 * 60))
    } else if minutes >= 60 && minutes.is_multiple_of(60) {
        format!("{} h", minutes / 60)
    } else {
        format!("{minutes} min")
    }
}

/// Until about when a checkpoint taken `at` can be restored from a journal keeping `history`:
/// `restorable until about 2026-03-02 10:00 UTC (journal history 1 h)`.
pub(crate) fn restorable_words(at: std::time::SystemTime, history: Duration) -> String {
    format!(
        "restorable until about {} (journal history {})",
        about_utc(at + history),
        history_words(history)
    )
}

/// What a VPG's degraded status means for its checkpoint: `VPG status NotMeetingSLA: …`.
pub(crate) fn status_words(note: &str) -> String {
    format!("VPG status {note}")
}

/// The context the model receives when every VPG has a listed tagged checkpoint: every VM,
/// VPG and checkpoint, and one recover command per VM.
pub(crate) fn checkpoint_context(report: &GuardReport, change: &str) -> String {
    let mut text = match report.vms.as_slice() {
        [vm] => format!(
            "rewind: Zerto checkpoint confirmed before this call on VM {}.",
            vm.name
        ),
        _ => format!(
            "rewind: Zerto checkpoints confirmed before this call on VMs {}.",
            names(report)
        ),
    };
    for vpg in &report.vpgs {
        let Ok(tagged) = &vpg.result else { continue };
        let _ = write!(
            text,
            "\n- {}: tagged checkpoint {} at {}",
            vpg_label(report, vpg),
            tagged.checkpoint.id,
            tagged.checkpoint.time()
        );
        match &tagged.previous {
            Some(previous) => {
                let _ = write!(
                    text,
                    "; fallback {} at {} (the newest checkpoint before rewind ran)",
                    previous.id,
                    previous.time()
                );
            }
            None => text.push_str("; no earlier checkpoint to fall back to"),
        }
        if let Some(history) = tagged.history {
            let _ = write!(
                text,
                "; {}",
                restorable_words(tagged.checkpoint.at, history)
            );
        }
        text.push('.');
        if let Some(note) = &tagged.degraded {
            let _ = write!(text, " {}.", status_words(note));
        }
    }
    text.push_str(
        "\nUse the tagged checkpoint: Zerto listed it before this call was released, so it precedes the change. \
         Use the fallback only if the change reached the VM by another path before the tag was stamped \
         (cloud-protected VPGs stamp tags up to ~30 s after the request).",
    );
    match report.vms.as_slice() {
        [vm] => {
            let _ = write!(
                text,
                "\nTo restore a file this call changes: rewind recover --vm {} --change {change} --path <file>",
                vm.name
            );
        }
        vms => {
            text.push_str("\nTo restore a file this call changes, one command per VM:");
            for vm in vms {
                let _ = write!(
                    text,
                    "\n  rewind recover --vm {} --change {change} --path <file>",
                    vm.name
                );
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::guard::{Tagged, VpgOutcome};
    use crate::zvm::{Checkpoint, TaskState, VpgRef};

    /// The command a decision quotes goes to the host and the audit trail: its secrets are
    /// redacted there, its hosts kept.
    #[test]
    fn a_quoted_command_part_keeps_its_hosts_and_loses_its_secrets() {
        let decision = decide(
            "Bash",
            "toolu_1",
            &Case::Unknowable {
                source: "the command",
                part: "sshpass -p hunter2 ssh $HOST 'echo hunter2 | sudo -S reboot'",
                why: "names a host only the shell knows",
            },
            &Policy::default(),
        );
        let text = decision.text().expect("a reason");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("ssh $HOST"), "{text}");
    }

    fn checkpoint(id: &str) -> Checkpoint {
        Checkpoint {
            id: id.into(),
            at: crate::time::parse_utc("2026-03-02T09:00:00Z").expect("a time"),
            tag: None,
        }
    }

    fn report(results: Vec<Result<Tagged, Refusal>>) -> GuardReport {
        let vpgs: Vec<VpgOutcome> = results
            .into_iter()
            .enumerate()
            .map(|(n, result)| VpgOutcome {
                vpg: VpgRef {
                    id: format!("id-{n}"),
                    name: format!("vpg-{n}"),
                },
                vms: vec![String::from("db01")],
                tag: crate::tag::Tag::new("t", "t", "db01", "c", std::time::UNIX_EPOCH),
                result,
            })
            .collect();
        GuardReport {
            vms: vec![Vm {
                id: "vm-id".into(),
                name: "db01".into(),
                vpgs: vpgs.iter().map(|v| v.vpg.clone()).collect(),
                ips: Vec::new(),
            }],
            vpgs,
        }
    }

    #[expect(
        clippy::unnecessary_wraps,
        reason = "stands beside the refusals in result lists"
    )]
    fn tagged(id: &str) -> Result<Tagged, Refusal> {
        Ok(confirmed(id))
    }

    fn confirmed(id: &str) -> Tagged {
        Tagged {
            checkpoint: checkpoint(id),
            task_id: "task".into(),
            previous: Some(checkpoint("1")),
            history: None,
            degraded: None,
        }
    }

    fn unreachable() -> Result<Tagged, Refusal> {
        Err(Refusal::Zvm(ZvmError::TimedOut {
            method: "GET",
            url: "https://zvm/v1/tasks/x".into(),
        }))
    }

    const CONTEXT: Policy = Policy {
        on_checkpoint: OnCheckpoint::Context,
        on_zvm_error: OnZvmError::Deny,
        operator: false,
    };

    #[test]
    fn one_vpg_refused_denies_even_when_the_other_is_confirmed() {
        let r = report(vec![
            tagged("10"),
            Err(Refusal::TaskEnded {
                task_id: "t2".into(),
                state: TaskState::Stopped,
                reason: String::new(),
            }),
        ]);
        let Decision::Deny(reason) = decide("mcp__ssh__exec", "c", &Case::Guarded(&r), &CONTEXT)
        else {
            panic!("deny");
        };
        assert!(
            reason.contains("VPG vpg-0: checkpoint 10 confirmed."),
            "{reason}"
        );
        assert!(
            reason.contains("VPG vpg-1: checkpoint task t2 ended Stopped (Zerto gave no reason)."),
            "{reason}"
        );
    }

    #[test]
    fn an_unrestorable_vpg_denies_or_asks_as_on_zvm_error_says_and_names_its_status() {
        let r = report(vec![
            tagged("10"),
            Err(Refusal::Unrestorable {
                status: "MeetingSLA (ReplicationPausedUserInitiated)".into(),
            }),
        ]);
        let Decision::Deny(reason) = decide("t", "c", &Case::Guarded(&r), &CONTEXT) else {
            panic!("deny");
        };
        assert!(
            reason.contains("VPG vpg-1: VPG status is MeetingSLA (ReplicationPausedUserInitiated): no restorable checkpoint can be taken now, so it was not tagged."),
            "{reason}"
        );
        let ask = Policy {
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Ask,
            operator: false,
        };
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&r), &ask),
            Decision::Ask(_)
        ));
        let refused = report(vec![
            Err(Refusal::Unrestorable {
                status: "Initializing".into(),
            }),
            Err(Refusal::TagNotListed {
                task_id: "t".into(),
            }),
        ]);
        assert!(
            matches!(
                decide("t", "c", &Case::Guarded(&refused), &ask),
                Decision::Deny(_)
            ),
            "a Zerto refusal beside it still denies"
        );
    }

    #[test]
    fn the_context_says_until_when_the_point_can_be_restored_and_a_degraded_status() {
        let mut point = confirmed("10");
        point.history = Some(std::time::Duration::from_secs(3600));
        point.degraded = Some("RpoNotMeetingSLA: replication is behind".into());
        let r = report(vec![Ok(point)]);
        let Decision::Context(text) = decide("t", "c", &Case::Guarded(&r), &CONTEXT) else {
            panic!("context");
        };
        let until = about_utc(checkpoint("10").at + std::time::Duration::from_secs(3600));
        assert!(
            text.contains(&format!("; restorable until about {until} (journal history 1 h). VPG status RpoNotMeetingSLA: replication is behind.")),
            "{text}"
        );
        assert_eq!(
            history_words(std::time::Duration::from_secs(90 * 60)),
            "90 min"
        );
        assert_eq!(
            history_words(std::time::Duration::from_secs(7 * 86_400)),
            "7 d"
        );
    }

    #[test]
    fn zvm_trouble_follows_on_zvm_error_but_a_zerto_refusal_always_denies() {
        let soft = Policy {
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Ask,
            operator: false,
        };
        let r = report(vec![tagged("10"), unreachable()]);
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&r), &soft),
            Decision::Ask(_)
        ));
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&r), &CONTEXT),
            Decision::Deny(_)
        ));
        let mixed = report(vec![
            unreachable(),
            Err(Refusal::TagNotListed {
                task_id: "t".into(),
            }),
        ]);
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&mixed), &soft),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn only_connection_problems_follow_on_zvm_error() {
        let soft = Policy {
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Ask,
            operator: false,
        };
        let setup = ZvmError::Setup(
            "environment variable P (named in [zvm] of the config) is not set".into(),
        );
        let refused = ZvmError::Status {
            method: "POST",
            url: "https://zvm/v1/vpgs/x/checkpoints".into(),
            status: 400,
            message: "VPG is initializing".into(),
        };
        for error in [&setup, &refused] {
            let case = Case::ZvmError { vms: "db01", error };
            assert!(
                matches!(decide("t", "c", &case, &soft), Decision::Deny(_)),
                "{error}"
            );
        }
        let report = report(vec![Err(Refusal::Zvm(refused))]);
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&report), &soft),
            Decision::Deny(_)
        ));
        let down = ZvmError::Unreachable {
            method: "GET",
            url: "https://zvm/v1/vms".into(),
            detail: "refused".into(),
        };
        let case = Case::ZvmError {
            vms: "db01",
            error: &down,
        };
        assert!(matches!(decide("t", "c", &case, &soft), Decision::Ask(_)));
    }

    #[test]
    fn confirmed_gives_context_or_allow_with_the_recover_command() {
        let r = report(vec![tagged("10"), tagged("11")]);
        let Decision::Context(text) = decide("t", "toolu_9", &Case::Guarded(&r), &CONTEXT) else {
            panic!("context");
        };
        assert!(text.contains("- VPG vpg-1: tagged checkpoint 11"), "{text}");
        assert!(
            text.ends_with("rewind recover --vm db01 --change toolu_9 --path <file>"),
            "{text}"
        );
        let allow = Policy {
            on_checkpoint: OnCheckpoint::Allow,
            on_zvm_error: OnZvmError::Deny,
            operator: false,
        };
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&r), &allow),
            Decision::Allow { .. }
        ));
    }

    #[test]
    fn a_guard_with_no_vpg_is_not_confirmed() {
        let r = report(Vec::new());
        assert!(matches!(
            decide("t", "c", &Case::Guarded(&r), &CONTEXT),
            Decision::Deny(_)
        ));
    }
}
