//! The decision table: what the hook answers for each kind of tool call. Pure: the facts go
//! in (classification, VM resolution, guard report), one [`Decision`] comes out.
//!
//! | the call                                          | decision                               |
//! |---------------------------------------------------|----------------------------------------|
//! | local host tool, or classified read-only          | none                                   |
//! | mutating, checkpoint confirmed on every VPG       | none + context (or allow + context)    |
//! | mutating, a VPG's checkpoint failed or never listed | deny, naming VPG, task, state, reason |
//! | mutating, VM unknown to Zerto                     | ask: nothing to rewind to              |
//! | mutating, the reference matches several VMs       | ask, listing the candidates            |
//! | mutating, no VM in the arguments                  | ask                                    |
//! | mutating, several targets in one argument         | ask                                    |
//! | tool in no catalog                                | ask                                    |
//! | ZVM unreachable, login refused, TLS untrusted     | deny (or ask: `on_zvm_error`)          |
//! | catalog or configuration broken, internal error   | deny                                   |
//! | stdin empty, not JSON, oversize, no tool name     | block: exit 2 + one stderr line        |
//! | the hook's budget about to run out                | deny (the watchdog)                    |

use std::fmt::Write as _;

use crate::catalog::{Classification, Entry};
use crate::config::{OnCheckpoint, OnZvmError};
use crate::guard::GuardReport;
use crate::zvm::ZvmError;
use crate::zvm::resolve::Vm;

/// The hook's answer to the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
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
    pub fn label(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Context(_) => "context",
            Self::Allow { .. } => "allow",
            Self::Deny(_) => "deny",
            Self::Ask(_) => "ask",
            Self::Block(_) => "block",
        }
    }

    /// The reason or context text, if any.
    pub fn text(&self) -> Option<&str> {
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

/// What the hook found out about a mutating call on a VM.
pub enum Finding<'a> {
    /// The reference matched no protected VM.
    Unknown { reference: &'a str },
    /// The reference matched several VMs.
    Ambiguous {
        reference: &'a str,
        candidates: &'a [Vm],
    },
    /// The ZVM could not be asked (before or during the guard).
    ZvmError { vm: &'a str, error: &'a ZvmError },
    /// The guard ran.
    Guarded(&'a GuardReport),
}

/// Decides for a call that needs no ZVM: local, shell, read-only, unlisted, or no VM found.
/// Returns `None` for a mutating call with a VM, which needs the ZVM.
pub fn classify_only(tool: &str, class: &Classification) -> Option<Decision> {
    match class {
        Classification::Local | Classification::Shell { .. } | Classification::ReadOnly(_) => {
            Some(Decision::None)
        }
        Classification::Unlisted => Some(Decision::Ask(format!(
            "rewind: {tool} is in no catalog, so nobody has said whether it can change a VM; no Zerto checkpoint was taken. \
             Approve only if it cannot change a VM, or record it with `rewind catalog add`."
        ))),
        Classification::Mutating {
            entry:
                Entry {
                    ask: Some(why), ..
                },
            ..
        } => Some(Decision::Ask(format!(
            "rewind: {tool} can change a VM, but which one cannot be known from the call ({why}), so no Zerto checkpoint was taken. \
             Approve only if nothing on a VM needs rewinding."
        ))),
        Classification::Mutating { entry, vm: None } if !entry.session_arg.is_empty() => {
            Some(Decision::Ask(format!(
                "rewind: {tool} can change a VM, but none of its arguments {} names one, and no session it names was opened \
                 earlier in this agent session (or the server has no [[server]] binding), so no Zerto checkpoint was taken. \
                 Approve only if nothing on a VM needs rewinding.",
                keys(entry)
            )))
        }
        Classification::Mutating { entry, vm: None } => Some(Decision::Ask(format!(
            "rewind: {tool} can change a VM, but none of its arguments {} names one, so no Zerto checkpoint was taken. Approve only if nothing on a VM needs rewinding.",
            keys(entry)
        ))),
        Classification::Mutating { vm: Some(vm), .. } => vm.several().map(|targets| {
            Decision::Ask(format!(
                "rewind: {tool} names several targets in `{}` ({}); rewind checkpoints one VM per call, so none was taken. \
                 Approve only if nothing on them needs rewinding, or make one call per VM.",
                vm.key,
                targets.join(", ")
            ))
        }),
    }
}

fn keys(entry: &Entry) -> String {
    let quoted: Vec<String> = entry
        .vm_arg
        .iter()
        .chain(&entry.session_arg)
        .map(|k| format!("`{k}`"))
        .collect();
    if quoted.is_empty() {
        return String::from("(none: the server is bound at start, and no [[server]] binds it)");
    }
    format!("({})", quoted.join(", "))
}

/// How the hook answers once it knows the ZVM's side.
pub struct Policy {
    pub on_checkpoint: OnCheckpoint,
    pub on_zvm_error: OnZvmError,
}

/// Decides for a mutating call on a VM from what the ZVM said.
pub fn decide(tool: &str, change: &str, finding: &Finding<'_>, policy: &Policy) -> Decision {
    match finding {
        Finding::Unknown { reference } => Decision::Ask(format!(
            "rewind: VM {reference:?} is unknown to Zerto, so there is no checkpoint to rewind to if {tool} goes wrong. Approve only if that is acceptable."
        )),
        Finding::Ambiguous {
            reference,
            candidates,
        } => {
            let list: Vec<String> = candidates
                .iter()
                .map(|vm| format!("{} ({})", vm.name, vm.id))
                .collect();
            Decision::Ask(format!(
                "rewind: {reference:?} matches {} VMs in Zerto: {}. No checkpoint was taken; name the VM by its vmIdentifier or add a [vm_aliases] entry.",
                candidates.len(),
                list.join(", ")
            ))
        }
        Finding::ZvmError { vm, error } if error.is_connection_problem() => {
            zvm_error(vm, &error.to_string(), policy)
        }
        Finding::ZvmError { vm, error } => Decision::Deny(format!(
            "rewind: no checkpoint of VM {vm:?} could be taken, so {tool} was not allowed: {error}"
        )),
        Finding::Guarded(report) => {
            if report.confirmed() {
                let context = checkpoint_context(report, change);
                match policy.on_checkpoint {
                    OnCheckpoint::Context => Decision::Context(context),
                    OnCheckpoint::Allow => Decision::Allow {
                        reason: format!(
                            "rewind: Zerto checkpoint confirmed on VM {}",
                            report.vm.name
                        ),
                        context,
                    },
                }
            } else if let Some(error) = report.only_zvm_error() {
                zvm_error(&report.vm.name, &error.to_string(), policy)
            } else {
                Decision::Deny(refusal(report, tool))
            }
        }
    }
}

fn zvm_error(vm: &str, error: &str, policy: &Policy) -> Decision {
    let text = format!("rewind: could not ask Zerto for a checkpoint of VM {vm:?}: {error}");
    match policy.on_zvm_error {
        OnZvmError::Deny => Decision::Deny(text),
        OnZvmError::Ask => Decision::Ask(text),
    }
}

/// The deny reason: every VPG that has no confirmed checkpoint, and why.
fn refusal(report: &GuardReport, tool: &str) -> String {
    let mut text = format!(
        "rewind: Zerto did not confirm a checkpoint of VM {:?}, so {tool} was not allowed.",
        report.vm.name
    );
    for vpg in &report.vpgs {
        match &vpg.result {
            Ok(tagged) => {
                let _ = write!(
                    text,
                    " VPG {}: checkpoint {} confirmed.",
                    vpg.vpg.name, tagged.checkpoint.checkpoint_identifier
                );
            }
            Err(why) => {
                let _ = write!(text, " VPG {}: {why}.", vpg.vpg.name);
            }
        }
    }
    text
}

/// The context the model receives when every VPG has a listed tagged checkpoint.
pub fn checkpoint_context(report: &GuardReport, change: &str) -> String {
    let mut text = format!(
        "rewind: Zerto checkpoint confirmed before this call on VM {}.",
        report.vm.name
    );
    for vpg in &report.vpgs {
        let Ok(tagged) = &vpg.result else { continue };
        let _ = write!(
            text,
            "\n- VPG {}: tagged checkpoint {} at {}",
            vpg.vpg.name, tagged.checkpoint.checkpoint_identifier, tagged.checkpoint.time_stamp
        );
        match &tagged.previous {
            Some(previous) => {
                let _ = write!(
                    text,
                    "; fallback {} at {} (the newest checkpoint before rewind ran)",
                    previous.checkpoint_identifier, previous.time_stamp
                );
            }
            None => text.push_str("; no earlier checkpoint to fall back to"),
        }
        text.push('.');
    }
    text.push_str(
        "\nUse the tagged checkpoint: Zerto listed it before this call was released, so it precedes the change. \
         Use the fallback only if the change reached the VM by another path before the tag was stamped \
         (cloud-protected VPGs stamp tags up to ~30 s after the request).",
    );
    let _ = write!(
        text,
        "\nTo restore a file this call changes: rewind recover --vm {} --change {change} --path <file>",
        report.vm.name
    );
    text
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::guard::{Refusal, Tagged, VpgOutcome};
    use crate::tag::Tag;
    use crate::zvm::resolve::VpgRef;
    use crate::zvm::wire::{Checkpoint, TaskState};

    fn checkpoint(id: &str) -> Checkpoint {
        Checkpoint {
            checkpoint_identifier: id.into(),
            time_stamp: "2026-03-02T09:00:00Z".into(),
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
                result,
            })
            .collect();
        GuardReport {
            vm: Vm {
                id: "vm-id".into(),
                name: "db01".into(),
                vpgs: vpgs.iter().map(|v| v.vpg.clone()).collect(),
            },
            tag: Tag::new("a", "t", "db01", "c", SystemTime::UNIX_EPOCH),
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
            attempts: 1,
            cadence: Duration::from_secs(5),
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
        let Decision::Deny(reason) = decide("mcp__ssh__exec", "c", &Finding::Guarded(&r), &CONTEXT)
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
    fn zvm_trouble_follows_on_zvm_error_but_a_zerto_refusal_always_denies() {
        let soft = Policy {
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Ask,
        };
        let r = report(vec![tagged("10"), unreachable()]);
        assert!(matches!(
            decide("t", "c", &Finding::Guarded(&r), &soft),
            Decision::Ask(_)
        ));
        assert!(matches!(
            decide("t", "c", &Finding::Guarded(&r), &CONTEXT),
            Decision::Deny(_)
        ));
        let mixed = report(vec![
            unreachable(),
            Err(Refusal::TagNotListed {
                task_id: "t".into(),
            }),
        ]);
        assert!(matches!(
            decide("t", "c", &Finding::Guarded(&mixed), &soft),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn only_connection_problems_follow_on_zvm_error() {
        let soft = Policy {
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Ask,
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
            let finding = Finding::ZvmError { vm: "db01", error };
            assert!(
                matches!(decide("t", "c", &finding, &soft), Decision::Deny(_)),
                "{error}"
            );
        }
        let report = report(vec![Err(Refusal::Zvm(refused))]);
        assert!(matches!(
            decide("t", "c", &Finding::Guarded(&report), &soft),
            Decision::Deny(_)
        ));
        let down = ZvmError::Unreachable {
            method: "GET",
            url: "https://zvm/v1/vms".into(),
            detail: "refused".into(),
        };
        let finding = Finding::ZvmError {
            vm: "db01",
            error: &down,
        };
        assert!(matches!(
            decide("t", "c", &finding, &soft),
            Decision::Ask(_)
        ));
    }

    #[test]
    fn confirmed_gives_context_or_allow_with_the_recover_command() {
        let r = report(vec![tagged("10"), tagged("11")]);
        let Decision::Context(text) = decide("t", "toolu_9", &Finding::Guarded(&r), &CONTEXT)
        else {
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
        };
        assert!(matches!(
            decide("t", "c", &Finding::Guarded(&r), &allow),
            Decision::Allow { .. }
        ));
    }

    #[test]
    fn a_guard_with_no_vpg_is_not_confirmed() {
        let r = report(Vec::new());
        assert!(matches!(
            decide("t", "c", &Finding::Guarded(&r), &CONTEXT),
            Decision::Deny(_)
        ));
    }
}
