//! [`protect`]: the one mutating path, for the hook, `rewind mcp`'s `checkpoint_vm`,
//! `rewind guard` and the broker serving any of them. It takes the references a call names,
//! what its tags are made of ([`Change`]), a deadline and a [`Watch`], and returns the
//! decision by the one table ([`crate::decision`]) with every VPG's tag, checkpoint and
//! restorable-until window ([`Protection`]).
//!
//! Whether the ZVM is asked from here or through the broker (`[broker] socket`) is decided
//! here once: through the broker, no password, token or ZVM address is read, and a broker
//! that cannot be asked is a deny (or an ask under `on_zvm_error = "ask"`) naming its socket.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{GuardReport, Refusal, Watch, guard};
use crate::audit::{self, AuditCheckpoint};
use crate::broker::protocol::{self, GuardRequest, GuardResult, Op, VpgDetail, WireCheckpoint};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::decision::{self, Case, Decision, Policy};
use crate::host::Host;
use crate::tag::Tag;
use crate::zvm::resolve;
use crate::zvm::{Checkpoint, Client, VpgRef, ZvmError};

/// Who asks for the checkpoints: the second field of their tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Caller {
    /// An agent host's hook, in one of its sessions (`claude-code/3f2a9c1e`).
    Hook { host: Host, session: Option<String> },
    /// `rewind mcp`'s `checkpoint_vm` for an MCP client: `mcp/<client>`.
    Mcp(String),
    /// `rewind guard`, run by this user (`cli/<user>`). Through the broker, the broker
    /// names the user from the kernel's peer credentials instead.
    Operator { user: String },
}

/// What a guard's tags are made of: who asks, the change id (first in the tag, so that a
/// name Zerto lists cut short still confirms), and what is about to happen.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) caller: Caller,
    pub(crate) id: String,
    /// The tool, the step's reason, or `rewind guard --action`.
    pub(crate) action: String,
    /// The fingerprint of the call's input ([`crate::audit::input_fingerprint`]), for the
    /// record of its guard: a hook's call has one.
    pub(crate) input: Option<String>,
}

impl Caller {
    /// The tag's agent field: `claude-code/3f2a9c1e` (the host and the first 8 characters
    /// of its session), `mcp/<client>`, `cli/<user>`.
    pub(crate) fn agent(&self) -> String {
        match self {
            Caller::Hook { host, session } => {
                let session: String = session
                    .as_deref()
                    .unwrap_or("nosession")
                    .chars()
                    .take(8)
                    .collect();
                format!("{}/{session}", host.name())
            }
            Caller::Mcp(agent) => agent.clone(),
            Caller::Operator { user } => format!("cli/{user}"),
        }
    }
}

impl Change {
    /// How a decision names the call: the hook's tool, the `checkpoint_vm` step, the
    /// operator's change.
    pub(super) fn step(&self) -> String {
        match &self.caller {
            Caller::Mcp(_) => format!("the step {:?}", self.action),
            Caller::Operator { .. } => format!("the change {:?}", self.action),
            Caller::Hook { .. } => self.action.clone(),
        }
    }

    /// The guard request for this change on `references`, with `[hook]`'s policy: what the
    /// broker, or `rewind` beside `rewind-hook`, is asked.
    pub(super) fn request(&self, config: &Config, references: &[&str]) -> GuardRequest {
        let (on_checkpoint, on_zvm_error) = protocol::policy_words(&config.hook);
        let (host, session) = self.wire_caller();
        GuardRequest {
            host,
            session,
            change: self.id.clone(),
            tool: self.action.clone(),
            vms: references.iter().map(|r| (*r).to_owned()).collect(),
            on_checkpoint,
            on_zvm_error,
            input: self.input.clone(),
        }
    }

    /// The caller as a guard request names it (`host`, `session`).
    fn wire_caller(&self) -> (String, Option<String>) {
        match &self.caller {
            Caller::Hook { host, session } => (host.name().to_owned(), session.clone()),
            Caller::Mcp(agent) => (agent.clone(), None),
            Caller::Operator { .. } => (String::from(OPERATOR_HOST), None),
        }
    }

    /// The change a guard request describes, `peer_user` being who sent it (for
    /// `rewind guard`, whose tag names the user the kernel says is asking).
    pub(crate) fn from_request(request: &GuardRequest, peer_user: &str) -> Result<Change, String> {
        let caller = if let Some(host) = Host::ALL.into_iter().find(|h| h.name() == request.host) {
            Caller::Hook {
                host,
                session: request.session.clone(),
            }
        } else if request
            .host
            .strip_prefix("mcp/")
            .is_some_and(|client| !client.is_empty())
        {
            Caller::Mcp(request.host.clone())
        } else if request.host == OPERATOR_HOST {
            Caller::Operator {
                user: peer_user.to_owned(),
            }
        } else {
            return Err(format!("host {:?} is not one rewind knows", request.host));
        };
        Ok(Change {
            caller,
            id: request.change.clone(),
            action: request.tool.clone(),
            input: request.input.clone(),
        })
    }
}

/// The `host` of a guard request from `rewind guard`.
const OPERATOR_HOST: &str = "cli";

/// What [`protect`] came to.
#[derive(Debug)]
pub(crate) struct Protection {
    pub(crate) decision: Decision,
    /// The VMs: Zerto's names once found, else the references as the call named them.
    pub(crate) vms: Vec<String>,
    /// The vmIdentifier of each of `vms`, when they were all found.
    pub(crate) vm_ids: Vec<String>,
    /// The references that were not Zerto's names.
    pub(crate) named: Vec<String>,
    /// Every VPG protecting the VMs, once each; empty when the guard did not run.
    pub(crate) vpgs: Vec<VpgProtection>,
    /// The broker guarded, and recorded the call in its trail.
    pub(crate) brokered: bool,
    /// The caller stopped waiting for the broker's answer.
    stopped: bool,
}

/// One VPG of a guard: its tag, and its confirmed checkpoint or why there is none.
#[derive(Debug, Clone)]
pub(crate) struct VpgProtection {
    pub(crate) vpg: VpgRef,
    /// The VMs of the call this VPG protects.
    pub(crate) vms: Vec<String>,
    pub(crate) tag: String,
    /// The tagged checkpoint, as Zerto lists it.
    pub(crate) checkpoint: Option<Checkpoint>,
    /// The newest checkpoint before the guard inserted its own.
    pub(crate) fallback: Option<Checkpoint>,
    /// The Zerto task of the insert, when one was sent.
    pub(crate) task: Option<String>,
    /// The VPG's journal history, when Zerto says it.
    pub(crate) history: Option<Duration>,
    /// What the VPG's status says about the point, when it is not meeting its SLA.
    pub(crate) degraded: Option<String>,
    /// Why there is no confirmed checkpoint.
    pub(crate) error: Option<String>,
    /// The caller stopped waiting (a checkpoint already inserted stays in Zerto).
    pub(crate) cancelled: bool,
}

impl VpgProtection {
    fn from_outcome(outcome: &super::VpgOutcome) -> VpgProtection {
        let (checkpoint, fallback, history, degraded) = match &outcome.result {
            Ok(t) => (
                Some(t.checkpoint.clone()),
                t.previous.clone(),
                t.history,
                t.degraded.clone(),
            ),
            Err(_) => (None, None, None, None),
        };
        VpgProtection {
            vpg: outcome.vpg.clone(),
            vms: outcome.vms.clone(),
            tag: outcome.tag.as_str().to_owned(),
            checkpoint,
            fallback,
            task: match &outcome.result {
                Ok(t) => Some(t.task_id.clone()),
                Err(why) => why.task_id().map(str::to_owned),
            },
            history,
            degraded,
            error: outcome.result.as_ref().err().map(ToString::to_string),
            cancelled: matches!(outcome.result, Err(Refusal::Cancelled { .. })),
        }
    }

    /// Until about when the checkpoint can be restored: its time plus the journal history.
    pub(crate) fn restorable_until(&self) -> Option<SystemTime> {
        Some(self.checkpoint.as_ref()?.at + self.history?)
    }

    fn to_wire(&self) -> VpgDetail {
        let wire = |c: &Checkpoint| WireCheckpoint {
            id: c.id.clone(),
            time: c.time(),
            tag: c.tag.clone(),
        };
        VpgDetail {
            vpg: self.vpg.name.clone(),
            vpg_id: self.vpg.id.clone(),
            vms: self.vms.clone(),
            tag: self.tag.clone(),
            checkpoint: self.checkpoint.as_ref().map(wire),
            fallback: self.fallback.as_ref().map(wire),
            error: self.error.clone(),
            task: self.task.clone(),
            journal_history_secs: self.history.map(|h| h.as_secs()),
            degraded: self.degraded.clone(),
            cancelled: self.cancelled,
        }
    }

    fn from_wire(detail: VpgDetail) -> Result<VpgProtection, String> {
        let point = |c: WireCheckpoint| -> Result<Checkpoint, String> {
            Ok(Checkpoint {
                at: crate::time::parse_utc(&c.time).map_err(|e| format!("{e:#}"))?,
                id: c.id,
                tag: c.tag,
            })
        };
        Ok(VpgProtection {
            vpg: VpgRef {
                id: detail.vpg_id,
                name: detail.vpg,
            },
            vms: detail.vms,
            tag: detail.tag,
            checkpoint: detail.checkpoint.map(point).transpose()?,
            fallback: detail.fallback.map(point).transpose()?,
            task: detail.task,
            history: detail.journal_history_secs.map(Duration::from_secs),
            degraded: detail.degraded,
            error: detail.error,
            cancelled: detail.cancelled,
        })
    }
}

impl Protection {
    /// No guard ran: `decision` says why.
    pub(super) fn unguarded(references: &[&str], decision: Decision) -> Protection {
        Protection {
            decision,
            vms: references.iter().map(|r| (*r).to_owned()).collect(),
            vm_ids: Vec::new(),
            named: Vec::new(),
            vpgs: Vec::new(),
            brokered: false,
            stopped: false,
        }
    }

    fn from_report(report: &GuardReport, references: &[&str], decision: Decision) -> Protection {
        let vms: Vec<String> = report.vms.iter().map(|vm| vm.name.clone()).collect();
        Protection {
            decision,
            named: audit::named_otherwise(references, &vms),
            vms,
            vm_ids: report.vms.iter().map(|vm| vm.id.clone()).collect(),
            vpgs: report
                .vpgs
                .iter()
                .map(VpgProtection::from_outcome)
                .collect(),
            brokered: false,
            stopped: false,
        }
    }

    /// The VPGs' names, as the audit trail records them.
    pub(crate) fn vpg_names(&self) -> Vec<String> {
        self.vpgs.iter().map(|v| v.vpg.name.clone()).collect()
    }

    /// The confirmed checkpoints, as the audit trail records them.
    pub(crate) fn audit_checkpoints(&self) -> Vec<AuditCheckpoint> {
        self.vpgs
            .iter()
            .filter_map(|v| {
                let checkpoint = v.checkpoint.as_ref()?;
                Some(AuditCheckpoint {
                    vpg: v.vpg.name.clone(),
                    id: checkpoint.id.clone(),
                    time: checkpoint.time(),
                    fallback: v.fallback.as_ref().map(|p| p.id.clone()),
                })
            })
            .collect()
    }

    /// True when the caller stopped waiting before every VPG was confirmed.
    pub(crate) fn cancelled(&self) -> bool {
        self.stopped || self.vpgs.iter().any(|v| v.cancelled)
    }

    /// The guard's outcome as the broker answers it; `None` for a decision a guard never
    /// makes (no opinion, a block).
    pub(crate) fn to_wire(&self) -> Option<GuardResult> {
        Some(GuardResult {
            decision: protocol::WireDecision::from_decision(&self.decision)?,
            vms: self.vms.clone(),
            named: self.named.clone(),
            vpgs: self.vpg_names(),
            checkpoints: self.audit_checkpoints(),
            details: self.vpgs.iter().map(VpgProtection::to_wire).collect(),
            vm_ids: self.vm_ids.clone(),
        })
    }

    /// The guard's outcome as `rewind` answered it, by the broker (`brokered`: which then
    /// recorded the call) or for `rewind-hook`.
    pub(super) fn from_wire(result: GuardResult, brokered: bool) -> Result<Protection, String> {
        Ok(Protection {
            decision: result.decision.into_decision(),
            vms: result.vms,
            vm_ids: result.vm_ids,
            named: result.named,
            vpgs: result
                .details
                .into_iter()
                .map(VpgProtection::from_wire)
                .collect::<Result<_, _>>()?,
            brokered,
            stopped: false,
        })
    }
}

/// The decision table's settings from `[hook]`.
pub(super) fn policy(config: &Config) -> Policy {
    Policy {
        on_checkpoint: config.hook.on_checkpoint,
        on_zvm_error: config.hook.on_zvm_error,
        operator: false,
    }
}

/// Finds every VM `references` name in Zerto, inserts a tagged checkpoint on each of their
/// VPGs (once each) and waits until Zerto lists them, all within `deadline`, telling `watch`
/// what it does; decides by the table with `[hook]`'s policy. With `[broker] socket`, the
/// broker does all of it and this reads no ZVM credential.
pub(crate) fn protect(
    direct: Direct,
    config: &Config,
    references: &[&str],
    change: &Change,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> Protection {
    match &config.broker.socket {
        Some(socket) => through_broker(config, socket, references, change, deadline, watch),
        None => (direct.0)(config, references, change, deadline, watch),
    }
}

/// Where a guard that asks the ZVM itself (no `[broker] socket`) runs, chosen by the binary:
/// `rewind` and `rewind-mcp` run it in their own process; `rewind-hook` has `rewind` beside it
/// run it (`rewind hook-guard`), so that the hook's binary, which starts on every tool call,
/// links no ZVM client, HTTP or TLS code.
#[derive(Clone, Copy)]
pub struct Direct(DirectGuard);

type DirectGuard = fn(&Config, &[&str], &Change, &Deadline, &dyn Watch) -> Protection;

impl Direct {
    /// In this process.
    pub const HERE: Direct = Direct(locally);
    /// In `rewind` beside this process's binary.
    pub const BESIDE: Direct = Direct(super::helper::through);
}

/// The guard a request asks for ([`GuardRequest`], as the broker and `rewind`'s guard for
/// `rewind-hook` receive it), run here: the tag made from the request's fields
/// (`peer_user`, who the kernel says is asking, names the operator of a `rewind guard`), the
/// decision made by the caller's policy.
pub(crate) fn for_request(
    config: &Config,
    request: &GuardRequest,
    peer_user: &str,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> Result<Protection, String> {
    let (on_checkpoint, on_zvm_error) = request.policy()?;
    let change = Change::from_request(request, peer_user)?;
    let mut config = config.clone();
    config.hook.on_checkpoint = on_checkpoint;
    config.hook.on_zvm_error = on_zvm_error;
    let references: Vec<&str> = request.vms.iter().map(String::as_str).collect();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        protect(Direct::HERE, &config, &references, &change, deadline, watch)
    }))
    .map_err(|_| String::from("internal error: the guard panicked"))
}

fn locally(
    config: &Config,
    references: &[&str],
    change: &Change,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> Protection {
    let step = change.step();
    let policy = Policy {
        // The operator's own `rewind guard` is told the ZVM's details; an agent is not.
        operator: matches!(change.caller, Caller::Operator { .. }),
        ..policy(config)
    };
    let decide = |finding: &Case<'_>| decision::decide(&step, &change.id, finding, &policy);
    let all = references.join(",");
    let zvm_error = |error: &ZvmError| {
        Protection::unguarded(references, decide(&Case::ZvmError { vms: &all, error }))
    };
    let setup = |e: anyhow::Error| zvm_error(&ZvmError::Setup(format!("{e:#}")));
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(e) => return setup(e),
    };
    // No fallback to a shared directory: without the user's own, no token cache or lock,
    // and a deny that says so.
    let cache = match config::cache_dir() {
        Ok(dir) => dir,
        Err(e) => return setup(e),
    };
    let client = match Client::new(zvm, &cache) {
        Ok(client) => client,
        Err(e) => return zvm_error(&e),
    };
    watch.step(&match references {
        [one] => format!("looking up VM {one:?} in Zerto"),
        many => format!("looking up VMs {} in Zerto", many.join(", ")),
    });
    let vms = match resolve::resolve_targets(&client, references, &config.vm_aliases, deadline) {
        Ok(Ok(vms)) => vms,
        Ok(Err(unresolved)) => {
            return Protection::unguarded(references, decide(&Case::from(&unresolved)));
        }
        Err(error) => return zvm_error(&error),
    };
    let names: Vec<&str> = vms.iter().map(|vm| vm.name.as_str()).collect();
    watch.step(&format!(
        "waiting for Zerto to list the tagged checkpoint of VM {}",
        names.join(", ")
    ));
    let agent = change.caller.agent();
    let now = SystemTime::now();
    let tag_for = |names: &str| Tag::new(&agent, &change.action, names, &change.id, now);
    let report = guard(
        &client,
        &vms,
        &tag_for,
        &cache.join("locks"),
        deadline,
        watch,
    );
    let decision = decide(&Case::Guarded(&report));
    Protection::from_report(&report, references, decision)
}

/// The guard asked of the broker: it resolves, tags (building the tag from the change's
/// fields), confirms, decides with this configuration's policy, and records the call.
/// Whatever goes wrong with the broker (down, slow, killed, an answer that is not its
/// protocol) is a deny, or an ask under `on_zvm_error = "ask"`, naming the socket.
fn through_broker(
    config: &Config,
    socket: &Path,
    references: &[&str],
    change: &Change,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> Protection {
    let at = socket.display();
    watch.step(&format!("waiting for the rewind broker at {at}"));
    let request = change.request(config, references);
    let answer = crate::broker::client::call_watched(
        &config.broker,
        Op::Guard(request),
        deadline,
        &mut |text| watch.relayed(&format!("{text} (through the rewind broker at {at})")),
        &|| watch.cancelled(),
    )
    .map_err(crate::broker::client::BrokerError::into_text)
    .and_then(|value| {
        serde_json::from_value::<GuardResult>(value)
            .map_err(|e| e.to_string())
            .and_then(|result| Protection::from_wire(result, true))
            .map_err(|e| format!("the broker at {at}: its guard answer is not its protocol ({e})"))
    });
    answer.unwrap_or_else(|error| {
        let decision = decision::decide(
            &change.step(),
            &change.id,
            &Case::BrokerFailed {
                vms: &references.join(","),
                error: &error,
            },
            &policy(config),
        );
        Protection {
            stopped: watch.cancelled(),
            ..Protection::unguarded(references, decision)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: &str, session: Option<&str>) -> GuardRequest {
        GuardRequest {
            host: host.to_owned(),
            session: session.map(str::to_owned),
            change: String::from("c-1"),
            tool: String::from("Bash"),
            vms: vec![String::from("web01")],
            on_checkpoint: String::from("context"),
            on_zvm_error: String::from("deny"),
            input: None,
        }
    }

    /// The tag's agent comes from what the request may say (the host, its session, the MCP
    /// client), except for `rewind guard`, whose user the broker takes from the kernel.
    #[test]
    fn a_guard_request_names_its_caller_and_an_operator_is_the_peer() {
        let agent = |host: &str, session: Option<&str>| {
            Change::from_request(&request(host, session), "alice").map(|c| c.caller.agent())
        };
        assert_eq!(
            agent("claude-code", Some("3f2a9c1e-77aa")),
            Ok(String::from("claude-code/3f2a9c1e"))
        );
        assert_eq!(agent("mcp/cursor", None), Ok(String::from("mcp/cursor")));
        assert_eq!(agent("cli", None), Ok(String::from("cli/alice")));
        assert!(
            agent("cli/root", None).is_err(),
            "a user is never taken from the request"
        );
        assert!(agent("mcp/", None).is_err());
        assert!(agent("zvm-admin", None).is_err());
    }

    /// What a broker answers for a VPG reads back as it was: the checkpoint, its task, and
    /// until about when it can be restored.
    #[test]
    fn a_vpg_outcome_crosses_the_socket_whole() {
        let at = crate::time::parse_utc("2026-03-02T09:00:00.123Z").expect("time");
        let vpg = VpgProtection {
            vpg: VpgRef {
                id: String::from("id-1"),
                name: String::from("web-vpg"),
            },
            vms: vec![String::from("web01")],
            tag: String::from("ai:c-1 | claude-code/3f2a9c1e | Bash | vm=web01 | t"),
            checkpoint: Some(Checkpoint {
                id: String::from("1030"),
                at,
                tag: Some(String::from("ai:c-1 | …")),
            }),
            fallback: None,
            task: Some(String::from("t-1")),
            history: Some(Duration::from_secs(4 * 3600)),
            degraded: Some(String::from("RpoNotMeetingSLA: replication is behind")),
            error: None,
            cancelled: false,
        };
        let back = VpgProtection::from_wire(
            serde_json::from_value(serde_json::to_value(vpg.to_wire()).expect("json"))
                .expect("wire"),
        )
        .expect("reads back");
        assert_eq!(back.vpg, vpg.vpg);
        assert_eq!(back.checkpoint, vpg.checkpoint);
        assert_eq!(back.task, vpg.task);
        assert_eq!(back.degraded, vpg.degraded);
        assert_eq!(
            back.restorable_until(),
            Some(at + Duration::from_secs(4 * 3600))
        );
    }
}
