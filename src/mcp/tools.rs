//! The tools `rewind mcp` offers: their names, descriptions, annotations, and the argument and
//! result types their JSON schemas are generated from.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Checkpoints listed per VPG when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 20;
/// Most checkpoints listed per VPG.
pub const MAX_LIMIT: usize = 500;

/// Arguments of `find_vm`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindVmArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
}

/// Arguments of `list_checkpoints`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListCheckpointsArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
    /// Only checkpoints tagged for this change id.
    #[serde(default)]
    pub change: Option<String>,
    /// Newest checkpoints to list per VPG (default 20, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<usize>,
}

/// Arguments of `checkpoint_vm`: `vm` or `vms`, not both.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointVmArgs {
    /// The VM to checkpoint (name, vmIdentifier, guest IP, user@host, host:port or FQDN).
    #[serde(default)]
    pub vm: Option<String>,
    /// Several VMs to checkpoint at once, instead of `vm`.
    #[serde(default)]
    pub vms: Option<Vec<String>>,
    /// What is about to happen, recorded in the checkpoint's tag.
    pub reason: String,
}

/// Arguments of `recover_plan`: exactly one of `change`, `checkpoint`, `before`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoverPlanArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
    /// Guest path of the file, e.g. /etc/app.conf or C:\Users\x\y.txt.
    pub path: String,
    /// Restore from the checkpoint tagged for this change id.
    #[serde(default)]
    pub change: Option<String>,
    /// Restore from this checkpoint id.
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// Restore from the newest checkpoint before this UTC time (ISO-8601).
    #[serde(default)]
    pub before: Option<String>,
    /// The VPG to restore from when the VM is in several.
    #[serde(default)]
    pub vpg: Option<String>,
    /// The FLR volume label to read the file from, when the path is on several volumes.
    #[serde(default)]
    pub volume: Option<String>,
}

/// Arguments of `recover_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoverFileArgs {
    /// The plan id `recover_plan` returned.
    pub plan_id: String,
    /// Must be true: the person approving has read the plan.
    #[serde(default)]
    pub confirm: bool,
    /// The change id or checkpoint id the plan names, typed by the person approving.
    #[serde(default)]
    pub confirm_id: Option<String>,
    /// Directory to write the file into (default: the server's working directory). An
    /// existing file is never overwritten.
    #[serde(default)]
    pub out: Option<String>,
}

/// Arguments of `flr_sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlrSessionsArgs {
    /// Only sessions of this VM.
    #[serde(default)]
    pub vm: Option<String>,
}

/// Arguments of `flr_end`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlrEndArgs {
    /// The session id (FlrSessionIdentifier).
    pub session: String,
}

/// A VM as Zerto knows it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VmOut {
    pub name: String,
    pub id: String,
}

/// A checkpoint row.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckpointOut {
    pub id: String,
    /// Zerto's time stamp (UTC).
    pub time: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The change id in a tag written by rewind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

/// Result of `find_vm`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FindVmOut {
    pub vm: VmOut,
    pub vpgs: Vec<VpgHealth>,
}

/// A VPG, its health and its checkpoint cadence.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VpgHealth {
    pub name: String,
    pub id: String,
    /// Zerto's VPG status number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<i64>,
    /// Zerto's description of the status (e.g. "Meeting SLA").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    /// Zerto's actual RPO in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_rpo_secs: Option<i64>,
    /// The median gap between recent checkpoints, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cadence_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protected_site: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_site: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_checkpoint: Option<CheckpointOut>,
    /// Why part of this VPG could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Result of `list_checkpoints`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListCheckpointsOut {
    pub vm: VmOut,
    pub vpgs: Vec<VpgCheckpoints>,
}

/// The checkpoints of one VPG, newest last.
#[derive(Debug, Serialize, JsonSchema)]
pub struct VpgCheckpoints {
    pub vpg: String,
    pub vpg_id: String,
    /// Checkpoints the VPG has in all (before `change` and `limit`).
    pub total: usize,
    pub checkpoints: Vec<CheckpointOut>,
}

/// Result of `checkpoint_vm`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckpointVmOut {
    /// `confirmed` (every VPG of every VM has a listed tagged checkpoint), `denied` (Zerto
    /// refused or did not finish), `ask` (no checkpoint possible: a person must decide) or
    /// `cancelled` (the request was cancelled while waiting; a checkpoint already inserted
    /// stays in Zerto, and each VPG's `error` says so).
    pub decision: String,
    /// The change id in the tags: `recover_plan {change}` finds these checkpoints later.
    pub change: String,
    /// What rewind says about it, as the hook would.
    pub reason: String,
    /// The VMs as Zerto knows them (empty when they could not all be found).
    pub vms: Vec<VmOut>,
    /// Every VPG protecting them, once each, with its tagged checkpoint or why there is none.
    pub vpgs: Vec<GuardedVpg>,
}

/// The tagged checkpoint of one VPG, or why there is none.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GuardedVpg {
    pub vpg: String,
    /// The VMs of the call this VPG protects.
    pub vms: Vec<String>,
    /// The tag inserted on this VPG.
    pub tag: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointOut>,
    /// The newest checkpoint that existed before the guard ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<CheckpointOut>,
    /// Until about when the checkpoint can be restored, from the VPG's journal history
    /// ("restorable until about 2026-03-02 10:00 UTC (journal history 1 h)").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restorable: Option<String>,
    /// The same time, ISO-8601 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restorable_until: Option<String>,
    /// The VPG's status when it is not meeting its SLA: the checkpoint may be listed late, or
    /// age out sooner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Result of `recover_plan`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RecoverPlanOut {
    /// Pass to `recover_file`; valid once, for `expires_in_secs`.
    pub plan_id: String,
    pub expires_in_secs: u64,
    pub vm: VmOut,
    pub vpg: String,
    pub checkpoint: CheckpointOut,
    pub path: String,
    /// The file name written into `recover_file`'s `out` directory.
    pub file_name: String,
    /// Ids the person approving may type as `confirm_id`.
    pub confirm_ids: Vec<String>,
}

/// Arguments of `restore_vm`: exactly one of `change`, `checkpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreVmArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
    /// Restore to the checkpoint pinned for this change id.
    #[serde(default)]
    pub change: Option<String>,
    /// Restore to this checkpoint id.
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// The VPG whose journal to restore from, when the VM is in several.
    #[serde(default)]
    pub vpg: Option<String>,
    /// Only preview: a failover test from the checkpoint, stopped after `hold_secs`; the VM
    /// itself is not touched.
    #[serde(default)]
    pub preview: bool,
    /// With `preview`: seconds to keep the test VM up before stopping it (default 0).
    #[serde(default)]
    pub hold_secs: Option<u64>,
    /// Must be true to start anything: the person approving has read the plan.
    #[serde(default)]
    pub confirm: bool,
    /// The checkpoint id or change id of the plan, typed by the person approving.
    #[serde(default)]
    pub confirm_id: Option<String>,
}

/// Result of `restore_vm`: the document `rewind restore-vm --json` prints, and whether
/// anything was started.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RestoreVmOut {
    /// `planned` (nothing started: confirm it), `committed`, `previewed`, `rolled-back`,
    /// `refused` or `failed`.
    pub outcome: String,
    /// The ids the person approving may type as `confirm_id`.
    pub confirm_ids: Vec<String>,
    /// What the restore said, line by line.
    pub lines: Vec<String>,
    /// The whole document.
    pub document: serde_json::Value,
}

/// The tools only an operator's session is offered.
pub fn operator_only(name: &str) -> bool {
    name == "restore_vm"
}

/// Result of `recover_file`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RecoverFileOut {
    /// Where the file was written.
    pub destination: String,
    pub size: u64,
    pub sha256: String,
    /// The File Level Restore session used, now unmounted.
    pub session: String,
    pub unmount_task: String,
}

/// Result of `flr_sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlrSessionsOut {
    pub sessions: Vec<FlrSessionOut>,
}

/// A File Level Restore session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlrSessionOut {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vm_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vpg_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount_time: Option<String>,
}

/// Result of `flr_end`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlrEndOut {
    pub session: String,
    pub unmount_task: String,
}

/// Whether a tool only reads.
pub fn read_only(name: &str) -> bool {
    matches!(
        name,
        "find_vm" | "list_checkpoints" | "recover_plan" | "flr_sessions"
    )
}

/// Every tool, as `tools/list` shows it.
pub fn all() -> Vec<Tool> {
    vec![
        tool::<FindVmArgs, FindVmOut>(
            "find_vm",
            "Find a VM in Zerto: its identifier, every VPG that protects it, their health and checkpoint cadence.",
            reads("Find a VM"),
        ),
        tool::<ListCheckpointsArgs, ListCheckpointsOut>(
            "list_checkpoints",
            "List the newest checkpoints of every VPG that protects a VM, or only those tagged for one change id.",
            reads("List checkpoints"),
        ),
        tool::<CheckpointVmArgs, CheckpointVmOut>(
            "checkpoint_vm",
            "Insert a tagged Zerto checkpoint on every VPG of a VM (or of several) and wait until Zerto lists it, \
             before a risky step. Returns the change id to recover from later. `decision` is `confirmed` only \
             when every VPG has one; otherwise do not go on without a person's approval.",
            ToolAnnotations::with_title("Checkpoint VMs")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        ),
        tool::<RecoverPlanArgs, RecoverPlanOut>(
            "recover_plan",
            "Plan the restore of one guest file from a checkpoint (by change id, checkpoint id or time). Nothing is \
             mounted or written. Show the plan to the person; `recover_file` needs its plan id and an id from \
             `confirm_ids` typed by that person.",
            reads("Plan a file restore"),
        ),
        tool::<RecoverFileArgs, RecoverFileOut>(
            "recover_file",
            "Run a plan from `recover_plan`: mount the checkpoint with Zerto File Level Restore, write the file \
             into `out` (never over an existing file), always unmount. Needs `confirm: true` and `confirm_id`, \
             the change or checkpoint id of the plan as the person approving typed it.",
            ToolAnnotations::with_title("Restore a file")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(true),
        ),
        tool::<RestoreVmArgs, RestoreVmOut>(
            "restore_vm",
            "Put a whole VM back to a checkpoint with Zerto's journal VM restore (committed only after Zerto says it \
             is ready), or only preview it in a failover test. Without `confirm` it plans and starts nothing: show \
             the plan to the person; then call again with `confirm: true` and an id from `confirm_ids` typed by them. \
             Offered to operators only.",
            ToolAnnotations::with_title("Restore a whole VM")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(true),
        ),
        tool::<FlrSessionsArgs, FlrSessionsOut>(
            "flr_sessions",
            "List Zerto File Level Restore sessions (mounted checkpoints), optionally of one VM.",
            reads("List FLR sessions"),
        ),
        tool::<FlrEndArgs, FlrEndOut>(
            "flr_end",
            "Unmount a File Level Restore session, e.g. one a crash left mounted.",
            ToolAnnotations::with_title("End an FLR session")
                .read_only(false)
                .destructive(true)
                .idempotent(true)
                .open_world(true),
        ),
    ]
}

fn reads(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .open_world(true)
}

fn tool<A: JsonSchema + 'static, R: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    let input = schema_for_input::<A>().unwrap_or_else(|_| Arc::default());
    Tool::new(name, description, input)
        .with_raw_output_schema(schema_for_output::<R>())
        .with_annotations(annotations)
}
