//! The hook's audit record: what it found about a call, and the [`Record`] it appends.

use std::time::{Duration, SystemTime};

use crate::audit::{self, AuditCheckpoint, Record};
use crate::classify::Noted;
use crate::config::StoreInput;
use crate::redact::strip_credentials;

use super::Evaluation;

/// What the hook found about a call, for the audit trail.
#[derive(Debug, Default, Clone)]
pub(crate) struct AuditFacts {
    /// An after-the-call payload: the tool ran.
    pub(crate) ran: bool,
    pub(crate) class: &'static str,
    /// Every VM the call reaches (references until resolved, then Zerto's names).
    pub(crate) vms: Vec<String>,
    /// The references that were not Zerto's names, once resolved.
    pub(crate) named: Vec<String>,
    pub(crate) vpgs: Vec<String>,
    pub(crate) checkpoints: Vec<AuditCheckpoint>,
    /// The broker decided and recorded this call itself: the hook records nothing more.
    pub(crate) brokered: bool,
}

impl From<Noted> for AuditFacts {
    fn from(noted: Noted) -> Self {
        AuditFacts {
            ran: noted.ran,
            class: noted.class,
            vms: noted.vms,
            ..AuditFacts::default()
        }
    }
}

/// The record of one hook call that took `took`; `None` when the broker recorded it. The
/// call's input is kept as its fingerprint (which the trail's writer turns into a keyed
/// digest), and redacted beside it only where `store` says so.
pub(super) fn of(evaluation: &Evaluation, took: Duration, store: StoreInput) -> Option<Record> {
    let Evaluation {
        decision,
        call,
        facts,
    } = evaluation;
    if facts.brokered {
        // The broker's own record of the guard, with the caller's credentials, is the one.
        return None;
    }
    let call = call.as_ref();
    Some(Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host: call.map(|c| c.host.name().to_owned()).unwrap_or_default(),
        session: call.and_then(|c| c.session.clone()),
        change: call.and_then(|c| c.change.clone()),
        tool: call.map(|c| c.tool.clone()).unwrap_or_default(),
        class: facts.class.to_owned(),
        // The VM references a call named are kept and shown without the credentials in them.
        vms: facts.vms.iter().map(|r| strip_credentials(r)).collect(),
        named: facts.named.iter().map(|r| strip_credentials(r)).collect(),
        vpgs: facts.vpgs.clone(),
        checkpoints: facts.checkpoints.clone(),
        decision: if facts.ran {
            audit::Ending::Ran
        } else {
            decision.outcome()
        },
        reason: decision.text().map(str::to_owned),
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        input: call.map(|c| audit::input_fingerprint(&c.input)),
        args: match (call, store) {
            (Some(c), StoreInput::Redacted) => audit::summarise(&c.input),
            _ => serde_json::Value::Null,
        },
    })
}
