//! The broker's line protocol, version [`VERSION`]: one JSON request per line from the
//! client, then any number of `progress` lines and one final `done` or `refused` line from the
//! broker, on a Unix stream socket. Every line carries `"v"`; a line of another version, or one
//! that does not parse, ends the exchange.
//!
//! ```text
//! → {"v":1,"deadline_ms":149000,"op":"guard","host":"claude-code","session":"3f2a…","change":"toolu_01…","tool":"Bash","vms":["web01"],"on_checkpoint":"context","on_zvm_error":"deny"}
//! ← {"v":1,"type":"progress","text":"looking up VM \"web01\" in Zerto"}
//! ← {"v":1,"type":"done","result":{"decision":{"kind":"context","text":"…"},"vms":["web01"],…}}
//! ```

use crate::platform::LocalStream;
use std::io::{Read as _, Write as _};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::{AuditCheckpoint, Record};
use crate::config::{OnCheckpoint, OnZvmError};
use crate::decision::Decision;

/// The protocol's version; a broker answers a request of another version with `refused`.
pub(crate) const VERSION: u32 = 1;
/// The longest request line a broker reads.
pub(crate) const REQUEST_MAX: usize = 1024 * 1024;
/// The longest answer line a client reads (a recovered file travels in one, base64).
pub(crate) const ANSWER_MAX: usize = 192 * 1024 * 1024;

/// One request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Request {
    pub v: u32,
    /// How long the caller still waits, in milliseconds: the broker answers within it.
    pub deadline_ms: u64,
    #[serde(flatten)]
    pub op: Op,
}

/// What the caller asks for.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub(crate) enum Op {
    /// Which protected VMs these references are, with their VPGs.
    Resolve { vms: Vec<String> },
    /// Every VM Zerto protects, with its guest IPs and VPGs (`rewind vms`).
    Vms,
    /// The checkpoints of one VM's VPGs (those since `since_secs` ago, or all), with each
    /// VPG's state: a [`VmCheckpoints`].
    Checkpoints {
        vm: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_secs: Option<u64>,
    },
    /// The checkpoint and VPG a restore of one file would use, mounting nothing: a
    /// [`WirePlan`].
    Plan(RecoverRequest),
    /// The hook's guard: tagged checkpoints on every VPG of these VMs, confirmed as listed.
    /// The broker builds the tag from these fields; nothing else reaches it.
    Guard(GuardRequest),
    /// A decision the client made without the ZVM, for the broker's trail.
    Record { record: Record },
    /// Whether the broker reaches its ZVM: each check passed, warned or failed, without the
    /// ZVM's address or credentials (any local user; for `rewind doctor`).
    Status,
    /// The trail's records (operators).
    Log,
    /// Whether record `record` of the trail keeps the digest of an input with one of these
    /// `fingerprints` (operators: the trail's key never leaves the broker).
    Prove {
        record: u64,
        fingerprints: Vec<String>,
    },
    /// The FLR sessions open on the ZVM (operators).
    FlrList,
    /// Unmount one FLR session (operators).
    FlrEnd { session: String },
    /// File Level Restore of one guest file (operators).
    Recover(RecoverRequest),
    /// A whole VM back to a checkpoint, or previewed in a failover test (operators): the
    /// broker runs it and relays its lines and questions ([`Answer::Question`], [`Reply`]).
    RestoreVm(RestoreVmRequest),
}

/// The longest VM reference a request may name: a vSphere VM's name is at most 80
/// characters, a DNS name 253.
const REFERENCE_MAX: usize = 512;
/// The most VM references one request may name.
const REFERENCES_MAX: usize = 64;

impl Op {
    /// Refuses a request naming more VMs, or longer references, than any call does, before
    /// any of them is looked up, copied into an answer or recorded.
    pub(crate) fn check_references(&self) -> Result<(), String> {
        let references: &[String] = match self {
            Self::Resolve { vms } | Self::Guard(GuardRequest { vms, .. }) => vms,
            Self::Checkpoints { vm, .. }
            | Self::Plan(RecoverRequest { vm, .. })
            | Self::Recover(RecoverRequest { vm, .. })
            | Self::RestoreVm(RestoreVmRequest { vm, .. }) => std::slice::from_ref(vm),
            _ => &[],
        };
        if references.len() > REFERENCES_MAX {
            return Err(format!(
                "{} refused: it names {} VMs, more than {REFERENCES_MAX}",
                self.name(),
                references.len()
            ));
        }
        match references.iter().find(|r| r.len() > REFERENCE_MAX) {
            Some(long) => Err(format!(
                "{} refused: a VM reference of {} bytes, longer than {REFERENCE_MAX}",
                self.name(),
                long.len()
            )),
            None => Ok(()),
        }
    }

    /// The operation's name, as on the wire and in the trail.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Resolve { .. } => "resolve",
            Self::Vms => "vms",
            Self::Checkpoints { .. } => "checkpoints",
            Self::Plan(_) => "plan",
            Self::Guard(_) => "guard",
            Self::Record { .. } => "record",
            Self::Status => "status",
            Self::Log => "log",
            Self::Prove { .. } => "prove",
            Self::FlrList => "flr-list",
            Self::FlrEnd { .. } => "flr-end",
            Self::Recover(_) => "recover",
            Self::RestoreVm(_) => "restore-vm",
        }
    }
}

/// What the tag is made of, and how the caller's decision table is set.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GuardRequest {
    /// The agent host's name (`claude-code`), `mcp/<client>` for `rewind mcp`'s
    /// `checkpoint_vm` (whose `tool` is then the step's reason), or `cli` for `rewind guard`
    /// (whose tag then names the user the kernel says is asking).
    pub host: String,
    #[serde(default)]
    pub session: Option<String>,
    /// The host's id for the call (`tool_use_id`).
    pub change: String,
    /// The tool (the tag's action).
    pub tool: String,
    /// The references the call names, as the hook found them.
    pub vms: Vec<String>,
    /// `context` or `allow`.
    pub on_checkpoint: String,
    /// `deny` or `ask`.
    pub on_zvm_error: String,
    /// The fingerprint of the call's input (`sha256:…`), which the broker's record keeps as
    /// a digest keyed with its trail's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
}

impl GuardRequest {
    /// The decision table's policy the request names.
    pub(crate) fn policy(&self) -> Result<(OnCheckpoint, OnZvmError), String> {
        let on_checkpoint = match self.on_checkpoint.as_str() {
            "context" => OnCheckpoint::Context,
            "allow" => OnCheckpoint::Allow,
            other => return Err(format!("on_checkpoint {other:?} is not context or allow")),
        };
        let on_zvm_error = match self.on_zvm_error.as_str() {
            "deny" => OnZvmError::Deny,
            "ask" => OnZvmError::Ask,
            other => return Err(format!("on_zvm_error {other:?} is not deny or ask")),
        };
        Ok((on_checkpoint, on_zvm_error))
    }
}

/// The words a guard request carries for `[hook] on_checkpoint` and `on_zvm_error`.
pub(crate) fn policy_words(hook: &crate::config::HookConfig) -> (String, String) {
    let on_checkpoint = match hook.on_checkpoint {
        OnCheckpoint::Context => "context",
        OnCheckpoint::Allow => "allow",
    };
    let on_zvm_error = match hook.on_zvm_error {
        OnZvmError::Deny => "deny",
        OnZvmError::Ask => "ask",
    };
    (on_checkpoint.to_owned(), on_zvm_error.to_owned())
}

/// One file to bring back from a checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RecoverRequest {
    pub vm: String,
    pub path: String,
    #[serde(default)]
    pub change: Option<String>,
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// An ISO-8601 UTC time or a duration ago: the newest checkpoint before it.
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub vpg: Option<String>,
    #[serde(default)]
    pub volume: Option<String>,
}

/// `rewind restore-vm`'s arguments, as the operator gave them. The `--verify` command stays
/// with the operator: the broker asks for its result ([`Question::Verify`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RestoreVmRequest {
    pub vm: String,
    #[serde(default)]
    pub change: Option<String>,
    #[serde(default)]
    pub checkpoint: Option<String>,
    #[serde(default)]
    pub vpg: Option<String>,
    #[serde(default)]
    pub preview: bool,
    #[serde(default)]
    pub hold_secs: Option<u64>,
    /// The operator has a `--verify` command.
    #[serde(default)]
    pub verify: bool,
    pub rollback_after_secs: u64,
    /// `force`, `graceful` or `none`.
    pub shutdown: String,
    /// Who answers the restore's questions.
    pub answers: Answers,
}

impl RestoreVmRequest {
    /// The request for the operator's `args`; `can_answer`: questions reach a person.
    pub(crate) fn new(args: &crate::cli::RestoreVmArgs, can_answer: bool) -> RestoreVmRequest {
        RestoreVmRequest {
            vm: args.vm.clone(),
            change: args.change.clone(),
            checkpoint: args.checkpoint.clone(),
            vpg: args.vpg.clone(),
            preview: args.preview,
            hold_secs: args.hold.map(|h| h.as_secs()),
            verify: args.verify.is_some(),
            rollback_after_secs: args.rollback_after.as_secs(),
            shutdown: clap::ValueEnum::to_possible_value(&args.shutdown)
                .map_or_else(|| String::from("force"), |v| v.get_name().to_owned()),
            answers: if args.yes {
                Answers::Yes
            } else if can_answer {
                Answers::Terminal
            } else {
                Answers::Nobody
            },
        }
    }
}

/// Who answers a restore's questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Answers {
    /// `--yes`: every question is answered yes, none is asked.
    Yes,
    /// The operator, at a terminal.
    Terminal,
    /// Nobody: nothing that needs an answer starts.
    Nobody,
}

/// A question the broker asks the operator during a [`Op::RestoreVm`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Question {
    /// Yes or no.
    YesNo { text: String },
    /// Press Enter.
    Enter { text: String },
    /// Run the `--verify` command and say how it went.
    Verify,
}

/// The operator's line to the broker during a [`Op::RestoreVm`]: an answer, or an interrupt
/// (Ctrl-C) at any time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Reply {
    pub v: u32,
    #[serde(flatten)]
    pub reply: ReplyKind,
}

/// What the operator says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "kebab-case")]
pub(crate) enum ReplyKind {
    Yes,
    No,
    Enter,
    Verified { passed: bool, words: String },
    Interrupt,
}

/// The longest reply line a broker reads.
pub(crate) const REPLY_MAX: usize = 64 * 1024;

/// One answer line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct AnswerLine {
    pub v: u32,
    #[serde(flatten)]
    pub answer: Answer,
}

/// What an answer line says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub(crate) enum Answer {
    /// The broker is still working: what it is doing now.
    Progress { text: String },
    /// The final answer.
    Done { result: Value },
    /// Not done: not allowed, not understood, or failed; the reason.
    Refused { error: String },
    /// A question to the operator, answered by one [`Reply`] line.
    Question { question: Question },
}

/// A guard's outcome: the decision and what the audit trail keeps of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GuardResult {
    pub decision: WireDecision,
    #[serde(default)]
    pub vms: Vec<String>,
    #[serde(default)]
    pub named: Vec<String>,
    #[serde(default)]
    pub vpgs: Vec<String>,
    #[serde(default)]
    pub checkpoints: Vec<AuditCheckpoint>,
    /// Each VPG's tag and outcome (for `rewind mcp`'s `checkpoint_vm`).
    #[serde(default)]
    pub details: Vec<VpgDetail>,
    /// The vmIdentifier of each of `vms`, when the guard resolved them (`checkpoint_vm`).
    #[serde(default)]
    pub vm_ids: Vec<String>,
}

/// One VPG of a guard: its tag, and its checkpoint or why none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VpgDetail {
    pub vpg: String,
    #[serde(default)]
    pub vpg_id: String,
    pub vms: Vec<String>,
    pub tag: String,
    #[serde(default)]
    pub checkpoint: Option<WireCheckpoint>,
    #[serde(default)]
    pub fallback: Option<WireCheckpoint>,
    #[serde(default)]
    pub error: Option<String>,
    /// The Zerto task of the insert, when one was sent.
    #[serde(default)]
    pub task: Option<String>,
    /// The VPG's journal history, when Zerto says it: how long the checkpoint stays
    /// restorable.
    #[serde(default)]
    pub journal_history_secs: Option<u64>,
    /// What the VPG's status says about the point, when it is not meeting its SLA.
    #[serde(default)]
    pub degraded: Option<String>,
    /// The guard stopped waiting because its caller cancelled.
    #[serde(default)]
    pub cancelled: bool,
}

/// A checkpoint as listed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WireCheckpoint {
    pub id: String,
    pub time: String,
    #[serde(default)]
    pub tag: Option<String>,
}

/// A guard's decision on the wire. A guard never answers "no decision" or "block".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum WireDecision {
    Context { text: String },
    Allow { reason: String, context: String },
    Deny { text: String },
    Ask { text: String },
}

impl WireDecision {
    /// The decision as sent; `None` for one a guard never makes.
    pub(crate) fn from_decision(decision: &Decision) -> Option<WireDecision> {
        Some(match decision {
            Decision::Context(text) => Self::Context { text: text.clone() },
            Decision::Allow { reason, context } => Self::Allow {
                reason: reason.clone(),
                context: context.clone(),
            },
            Decision::Deny(text) => Self::Deny { text: text.clone() },
            Decision::Ask(text) => Self::Ask { text: text.clone() },
            Decision::None | Decision::Block(_) => return None,
        })
    }

    pub(crate) fn into_decision(self) -> Decision {
        match self {
            Self::Context { text } => Decision::Context(text),
            Self::Allow { reason, context } => Decision::Allow { reason, context },
            Self::Deny { text } => Decision::Deny(text),
            Self::Ask { text } => Decision::Ask(text),
        }
    }
}

/// A VM as the broker names it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WireVm {
    pub name: String,
    pub id: String,
    #[serde(default)]
    pub ips: Vec<String>,
    #[serde(default)]
    pub vpgs: Vec<WireVpg>,
}

impl From<&crate::zvm::Vm> for WireVm {
    fn from(vm: &crate::zvm::Vm) -> WireVm {
        WireVm {
            name: vm.name.clone(),
            id: vm.id.clone(),
            ips: vm.ips.clone(),
            vpgs: vm
                .vpgs
                .iter()
                .map(|v| WireVpg {
                    name: v.name.clone(),
                    id: v.id.clone(),
                })
                .collect(),
        }
    }
}

impl From<WireVm> for crate::zvm::Vm {
    fn from(vm: WireVm) -> crate::zvm::Vm {
        crate::zvm::Vm {
            id: vm.id,
            name: vm.name,
            vpgs: vm
                .vpgs
                .into_iter()
                .map(|v| crate::zvm::VpgRef {
                    id: v.id,
                    name: v.name,
                })
                .collect(),
            ips: vm.ips,
        }
    }
}

/// A VPG by name and id.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WireVpg {
    pub name: String,
    pub id: String,
}

/// The answer to `checkpoints`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VmCheckpoints {
    pub vm: WireVm,
    pub vpgs: Vec<VpgCheckpoints>,
}

/// One VPG's checkpoints, oldest first, and its state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VpgCheckpoints {
    pub vpg: String,
    pub id: String,
    pub checkpoints: Vec<WireCheckpoint>,
    /// The VPG's state, when Zerto answered for it (else `state_error` says why not).
    #[serde(default)]
    pub state: Option<VpgState>,
    #[serde(default)]
    pub state_error: Option<String>,
}

/// What Zerto says of a VPG.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct VpgState {
    #[serde(default)]
    pub status: Option<i64>,
    #[serde(default)]
    pub health: Option<String>,
    #[serde(default)]
    pub actual_rpo_secs: Option<i64>,
    #[serde(default)]
    pub protected_site: Option<String>,
    #[serde(default)]
    pub recovery_site: Option<String>,
    /// The journal history it keeps (configured, else actual).
    #[serde(default)]
    pub journal_history_secs: Option<u64>,
}

/// The answer to `plan`: what a restore of the file would use.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WirePlan {
    pub vm: WireVm,
    pub vpg: WireVpg,
    pub checkpoint: WireCheckpoint,
    pub path: String,
}

/// A recovered file: its bytes (base64) and where it came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Recovered {
    pub vm: String,
    pub vpg: String,
    pub checkpoint: String,
    pub path: String,
    pub sha256: String,
    /// The file's bytes, base64 (standard alphabet, padded).
    pub content: String,
    /// The FLR session the broker mounted, and the task that unmounted it.
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub unmount_task: Option<String>,
}

impl Recovered {
    /// The file's bytes, once they hash to what the broker read; never written otherwise.
    pub(crate) fn verified_bytes(&self) -> anyhow::Result<Vec<u8>> {
        use anyhow::Context as _;
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.content)
            .context("the broker's file content is not base64")?;
        let sha256 = crate::audit::line_hash(&bytes);
        if sha256 != self.sha256 {
            anyhow::bail!(
                "the file the broker sent does not hash to what it read (sha256 {sha256}, not {}); nothing was written",
                self.sha256
            );
        }
        Ok(bytes)
    }
}

/// One check of a `status` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StatusCheck {
    pub check: String,
    /// `ok`, `warn` or `fail`.
    pub status: String,
    pub detail: String,
}

/// A `status` answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Status {
    /// The broker's account: its uid, and name when the system knows it.
    pub uid: u32,
    #[serde(default)]
    pub user: Option<String>,
    pub checks: Vec<StatusCheck>,
}

/// Writes one answer line.
pub(crate) fn write_answer(mut stream: &LocalStream, answer: &Answer) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(&AnswerLine {
        v: VERSION,
        answer: answer.clone(),
    })?;
    line.push(b'\n');
    stream.write_all(&line)
}

/// A request line this short is read without drawing on the [`ReadBudget`]: every request
/// rewind itself sends but an unusually large `record` fits.
const REQUEST_FREE: usize = 16 * 1024;

/// The bytes a broker may hold at once for request lines still being read past
/// [`REQUEST_FREE`], across all its connections. Without it, every connection may hold a
/// request near [`REQUEST_MAX`] at the same time, and a peer with many connections multiplies
/// the broker's memory by their number.
pub(crate) struct ReadBudget {
    left: std::sync::atomic::AtomicUsize,
}

impl ReadBudget {
    pub(crate) const fn new(bytes: usize) -> Self {
        Self {
            left: std::sync::atomic::AtomicUsize::new(bytes),
        }
    }

    /// Takes `bytes` from the budget, or nothing when fewer are left.
    fn take(&self, bytes: usize) -> bool {
        use std::sync::atomic::Ordering;
        self.left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(bytes)
            })
            .is_ok()
    }

    fn give(&self, bytes: usize) {
        self.left
            .fetch_add(bytes, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A request line being read: its bytes, never more than it holds of the budget, which it
/// gives back when dropped.
struct Line<'b> {
    bytes: Vec<u8>,
    held: usize,
    budget: &'b ReadBudget,
}

impl Line<'_> {
    /// Appends `more`, first taking from the budget what the line's growth past
    /// [`REQUEST_FREE`] needs; `false` (and nothing appended) when the budget has not that much
    /// left.
    fn extend(&mut self, more: &[u8]) -> bool {
        let wanted = self.bytes.len() + more.len();
        if wanted > self.bytes.capacity() {
            let capacity = wanted
                .max(self.bytes.capacity() * 2)
                .min(REQUEST_MAX + 8192);
            let needed = capacity
                .saturating_sub(REQUEST_FREE)
                .saturating_sub(self.held);
            if needed > 0 {
                if !self.budget.take(needed) {
                    return false;
                }
                self.held += needed;
            }
            self.bytes.reserve_exact(capacity - self.bytes.len());
        }
        self.bytes.extend_from_slice(more);
        true
    }
}

impl Drop for Line<'_> {
    fn drop(&mut self) {
        self.budget.give(self.held);
    }
}

/// Reads the request line, waiting at most `wait` for all of it (one deadline for the whole
/// line, however slowly it trickles in) and reading no more than [`REQUEST_MAX`], nor more
/// than `budget` has left past [`REQUEST_FREE`]; `None` when the client sent nothing.
pub(crate) fn read_request(
    stream: &LocalStream,
    wait: Duration,
    budget: &ReadBudget,
) -> Option<Result<Request, String>> {
    let deadline = std::time::Instant::now() + wait;
    let mut line = Line {
        bytes: Vec::new(),
        held: 0,
        budget,
    };
    let mut chunk = [0u8; 8192];
    let mut reader = stream;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Some(Err(format!(
                "the request line did not arrive within {} ms",
                wait.as_millis()
            )));
        }
        let _ = stream.set_read_timeout(Some(left));
        match reader.read(&mut chunk) {
            Ok(0) if line.bytes.is_empty() => return None,
            Ok(0) => break,
            Ok(n) => {
                let end = chunk[..n].iter().position(|b| *b == b'\n');
                if line.bytes.len() + end.map_or(n, |e| e + 1) > REQUEST_MAX {
                    return Some(Err(String::from("request too long")));
                }
                if !line.extend(&chunk[..end.map_or(n, |e| e + 1)]) {
                    return Some(Err(String::from(
                        "busy: other connections' long requests are being read",
                    )));
                }
                if end.is_some() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Some(Err(format!("cannot read the request: {e}"))),
        }
    }
    let bytes = &line.bytes;
    Some(match serde_json::from_slice::<Request>(bytes) {
        Ok(request) if request.v == VERSION => Ok(request),
        Ok(request) => Err(format!(
            "protocol version {} is not served here (this broker speaks {VERSION})",
            request.v
        )),
        Err(e) => Err(format!("not a request of protocol version {VERSION}: {e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_request_reads_back_as_sent() {
        let line = r#"{"v":1,"deadline_ms":5000,"op":"guard","host":"claude-code","change":"toolu_1","tool":"Bash","vms":["web01"],"on_checkpoint":"context","on_zvm_error":"deny"}"#;
        let request: Request = serde_json::from_str(line).expect("parses");
        assert_eq!(request.v, VERSION);
        let Op::Guard(guard) = &request.op else {
            panic!("a guard");
        };
        assert_eq!(guard.vms, ["web01"]);
        assert_eq!(guard.session, None);
        let again: Request =
            serde_json::from_str(&serde_json::to_string(&request).expect("json")).expect("parses");
        assert_eq!(again.op.name(), "guard");
    }

    /// A request of the first protocol version, before `checkpoints` named a window, still
    /// reads.
    #[test]
    fn a_checkpoints_request_without_a_window_reads() {
        let line = r#"{"v":1,"deadline_ms":5000,"op":"checkpoints","vm":"web01"}"#;
        let request: Request = serde_json::from_str(line).expect("parses");
        assert!(matches!(
            request.op,
            Op::Checkpoints {
                since_secs: None,
                ..
            }
        ));
    }

    #[test]
    fn a_status_request_carries_nothing_but_its_deadline() {
        let request: Request =
            serde_json::from_str(r#"{"v":1,"deadline_ms":30000,"op":"status"}"#).expect("parses");
        assert!(matches!(request.op, Op::Status));
        assert_eq!(request.op.name(), "status");
    }

    #[test]
    fn a_request_naming_too_many_or_too_long_vms_is_refused() {
        let resolve = |vms: Vec<String>| Op::Resolve { vms };
        assert!(
            resolve(vec![String::from("web01"); 64])
                .check_references()
                .is_ok()
        );
        let many = resolve(vec![String::from("web01"); 65]).check_references();
        assert_eq!(
            many.unwrap_err(),
            "resolve refused: it names 65 VMs, more than 64"
        );
        let long = Op::Checkpoints {
            vm: "x".repeat(1000),
            since_secs: None,
        };
        assert_eq!(
            long.check_references().unwrap_err(),
            "checkpoints refused: a VM reference of 1000 bytes, longer than 512"
        );
    }

    #[test]
    fn an_unknown_operation_does_not_parse() {
        let line = r#"{"v":1,"deadline_ms":5000,"op":"delete-vpg","vpg":"x"}"#;
        assert!(serde_json::from_str::<Request>(line).is_err());
    }
}
