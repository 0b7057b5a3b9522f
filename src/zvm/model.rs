//! What `rewind` knows about the ZVM's objects once an answer has been checked: VMs with
//! their VPGs and guest IPs, checkpoints with a real time, tasks with a state, File Level
//! Restore sessions and the entries they browse. The client builds these at the wire
//! boundary (`wire`), once; nothing past it reads Zerto's field names or parses its times.

use std::fmt;
use std::time::SystemTime;

/// A VM as Zerto protects it, with every VPG that protects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vm {
    /// The vmIdentifier (`<vcenter guid>.vm-<n>`).
    pub id: String,
    pub name: String,
    /// Every VPG protecting the VM, in the order the ZVM listed them.
    pub vpgs: Vec<VpgRef>,
    /// Every guest IP address Zerto knows for the VM, in the order it listed them.
    pub ips: Vec<String>,
}

impl Vm {
    /// The names of the VM's VPGs, joined by commas (`none` when it has none).
    pub fn vpg_names(&self) -> String {
        if self.vpgs.is_empty() {
            return String::from("none");
        }
        self.vpgs
            .iter()
            .map(|v| v.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The VM for a person choosing among several: `web (<id>), IPs 10.0.0.41, VPG web-a`.
    pub fn describe(&self) -> String {
        let ips = if self.ips.is_empty() {
            String::from("no IP known")
        } else {
            format!("IPs {}", self.ips.join(", "))
        };
        format!(
            "{} ({}), {ips}, VPG {}",
            self.name,
            self.id,
            self.vpg_names()
        )
    }
}

/// A VPG by id and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VpgRef {
    pub id: String,
    pub name: String,
}

/// A VPG with the health Zerto reports for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vpg {
    pub id: String,
    pub name: String,
    /// Zerto's VPG status number (1 is MeetingSLA).
    pub status: Option<i64>,
    /// Zerto's words for the status (`MeetingSLA`, `NotMeetingSLA`, …).
    pub health: Option<String>,
    /// Zerto's VPG sub-status number (0 None, 1 InitialSync, 25 ReplicationPausedUserInitiated…).
    pub sub_status: Option<i64>,
    /// Zerto's words for the sub-status.
    pub sub_status_text: Option<String>,
    /// The RPO Zerto measures, in seconds.
    pub actual_rpo_secs: Option<i64>,
    pub protected_site: Option<String>,
    pub recovery_site: Option<String>,
    /// The journal history the VPG is configured to keep.
    pub configured_history: Option<std::time::Duration>,
    /// The journal history it actually holds now.
    pub actual_history: Option<std::time::Duration>,
    /// A failover test running on the VPG: its stage in Zerto's words (`running` when Zerto
    /// names none); `None` when no test runs.
    pub running_test: Option<String>,
}

impl Vpg {
    /// Why a whole-VM recovery from this VPG cannot start now, if it cannot: Zerto recovers
    /// no VPG that is initialising or syncing (a bitmap sync excepted), and one not meeting
    /// its SLA holds a journal that may not reach the point asked for.
    pub fn not_recoverable(&self) -> Option<String> {
        const INITIALIZING: i64 = 0;
        const MEETING_SLA: i64 = 1;
        let health = self.health.as_deref().unwrap_or("unknown");
        let sub = self.sub_status_text.as_deref().unwrap_or_default();
        let syncing =
            sub.to_ascii_lowercase().contains("sync") && !sub.eq_ignore_ascii_case("BitmapSync");
        if self.status == Some(INITIALIZING) || health.eq_ignore_ascii_case("Initializing") {
            Some(format!("VPG {} is initialising ({health})", self.name))
        } else if syncing {
            Some(format!("VPG {} is syncing ({sub})", self.name))
        } else if self.status != Some(MEETING_SLA) && !health.eq_ignore_ascii_case("MeetingSLA") {
            Some(format!(
                "VPG {} is not meeting its SLA ({health})",
                self.name
            ))
        } else {
            None
        }
    }
}

/// A journal checkpoint of one VPG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Zerto's checkpoint id (a number, kept as text as Zerto's answers and FLR take it).
    pub id: String,
    /// When the checkpoint was taken.
    pub at: SystemTime,
    /// The tag, for a tagged checkpoint.
    pub tag: Option<String>,
}

impl Checkpoint {
    /// The checkpoint's time as ISO-8601 UTC with milliseconds, as shown and recorded.
    pub fn time(&self) -> String {
        crate::time::format_utc_millis(self.at)
    }
}

/// A Zerto task (`GET /v1/tasks/{id}`), such as a checkpoint insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub state: TaskState,
    /// Percent done, when Zerto says.
    pub progress: Option<u8>,
    /// Zerto's CompleteReason; empty when it gave none.
    pub reason: String,
    /// The TaskIdentifier, when the answer carries it.
    pub id: Option<String>,
    /// Zerto's task type (`InsertTaggedCP`, `FlrJournalMount`, …), when given.
    pub kind: Option<String>,
    /// The VPGs the task names among its related entities.
    pub vpg_ids: Vec<String>,
}

/// What Zerto does with a journal VM restore once it is ready for commit and its wait runs
/// out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitPolicy {
    /// Roll the restore back by itself after the wait.
    Rollback,
    /// Commit it by itself after the wait.
    Commit,
    /// Wait for a person to commit or roll back.
    None,
}

/// What Zerto does with the running VM when a journal VM restore starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownPolicy {
    /// Leave it as it is.
    None,
    /// Shut the guest down gracefully (needs the guest tools).
    Shutdown,
    /// Shut down gracefully, then power off after Zerto's own wait.
    ForceShutdown,
}

impl ShutdownPolicy {
    /// The policy in Zerto's word.
    pub fn as_zerto(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Shutdown => "Shutdown",
            Self::ForceShutdown => "ForceShutdown",
        }
    }
}

/// A journal VM restore to ask Zerto for: one VM, from one VPG's journal, to one checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreRequest {
    pub vpg_id: String,
    pub checkpoint_id: String,
    pub commit_policy: CommitPolicy,
    pub shutdown_policy: ShutdownPolicy,
    /// How long the restored VM waits for a commit before the policy applies.
    pub wait: std::time::Duration,
}

/// Which body `RestoreCommit` and `RestoreRollback` were sent with: the VPG id as a bare JSON
/// string (the API reference), or none at all (Zerto's own SDK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionBody {
    VpgString,
    Empty,
}

/// The state of a Zerto task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    InProgress,
    WaitingForUserInput,
    Paused,
    Failed,
    Stopped,
    Completed,
    Cancelling,
    /// A state number this version of `rewind` does not know: not terminal.
    Other(i64),
}

impl TaskState {
    /// Failed, Stopped and Completed end a task; anything else may still change.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Failed | Self::Stopped | Self::Completed)
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Other(n) => write!(f, "state {n}"),
            named => write!(f, "{named:?}"),
        }
    }
}

/// A File Level Restore session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlrSession {
    pub id: String,
    /// Where the mount is; `None` when Zerto did not say.
    pub status: Option<FlrStatus>,
    pub vm_id: Option<String>,
    pub vpg_id: Option<String>,
    pub checkpoint_id: Option<String>,
    /// When the mount was requested, when Zerto gave a readable time.
    pub mounted_at: Option<SystemTime>,
}

/// The mount state of a File Level Restore session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlrStatus {
    /// `MountInProgress`.
    Mounting,
    /// `MountCompletedSuccessfully`: browsable.
    Mounted,
    /// `MountFailed`.
    Failed,
    /// Any other state Zerto names (an unmount in progress, a state added later).
    Other(String),
}

impl FlrStatus {
    /// The state in Zerto's own word.
    pub fn as_zerto(&self) -> &str {
        match self {
            Self::Mounting => "MountInProgress",
            Self::Mounted => "MountCompletedSuccessfully",
            Self::Failed => "MountFailed",
            Self::Other(word) => word,
        }
    }
}

impl fmt::Display for FlrStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_zerto())
    }
}

/// One entry a mounted checkpoint lists: a volume at the root, a directory or file below.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEntry {
    /// The volume path (`Volume1-Ext4/etc/app.conf`) or, from some ZVMs, the bare name.
    pub path: String,
    /// Whether it can be browsed into (true when Zerto did not say).
    pub browsable: bool,
    pub size: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vpg(status: i64, health: &str, sub: &str) -> Vpg {
        Vpg {
            id: "v".into(),
            name: "web".into(),
            status: Some(status),
            health: Some(health.into()),
            sub_status: None,
            sub_status_text: Some(sub.into()),
            actual_rpo_secs: None,
            protected_site: None,
            recovery_site: None,
            configured_history: None,
            actual_history: None,
            running_test: None,
        }
    }

    #[test]
    fn only_a_vpg_meeting_its_sla_and_not_syncing_is_recoverable() {
        assert_eq!(vpg(1, "MeetingSLA", "None").not_recoverable(), None);
        assert_eq!(vpg(1, "MeetingSLA", "BitmapSync").not_recoverable(), None);
        let why = |v: Vpg| v.not_recoverable().unwrap_or_default();
        assert!(why(vpg(0, "Initializing", "InitialSync")).contains("initialising"));
        assert!(why(vpg(1, "MeetingSLA", "DeltaSync")).contains("syncing (DeltaSync)"));
        assert!(why(vpg(2, "NotMeetingSLA", "None")).contains("not meeting its SLA"));
    }
}
