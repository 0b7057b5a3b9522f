//! What the ZVM sends, as it sends it: PascalCase keys, unknown fields ignored, enums kept as
//! numbers so that values Zerto adds later do not break parsing.

use serde::{Deserialize, Deserializer};

/// One row of `GET /v1/vms`: a VM as protected by ONE VPG (a VM in two VPGs has two rows).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VmRow {
    pub vm_identifier: String,
    pub vm_name: String,
    pub vpg_identifier: String,
    pub vpg_name: String,
    #[serde(default)]
    pub guest_os: Option<serde_json::Value>,
    #[serde(default)]
    pub vm_network_information: Option<NetworkInformation>,
    #[serde(default)]
    pub protected_site_name: Option<String>,
    #[serde(default)]
    pub recovery_site_name: Option<String>,
    #[serde(default)]
    pub enabled_actions: Option<EnabledActions>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkInformation {
    #[serde(default)]
    pub network_adapters: Vec<NetworkAdapter>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkAdapter {
    #[serde(default)]
    pub ip_addresses: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EnabledActions {
    #[serde(default)]
    pub is_flr_enabled: Option<bool>,
}

impl VmRow {
    /// Every guest IP address Zerto knows for this VM.
    pub fn ips(&self) -> impl Iterator<Item = &str> {
        self.vm_network_information
            .iter()
            .flat_map(|n| &n.network_adapters)
            .flat_map(|a| &a.ip_addresses)
            .map(String::as_str)
    }
}

/// A VPG as `GET /v1/vpgs/{id}` describes it (only what `rewind` reads).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Vpg {
    pub vpg_identifier: String,
    pub vpg_name: String,
    #[serde(default)]
    pub status: Option<i64>,
    #[serde(default)]
    pub status_description: Option<String>,
    #[serde(default, rename = "ActualRPO")]
    pub actual_rpo: Option<i64>,
    #[serde(default)]
    pub protected_site_name: Option<String>,
    #[serde(default)]
    pub recovery_site_name: Option<String>,
}

/// One row of `GET /v1/vpgs/{id}/checkpoints`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Checkpoint {
    #[serde(deserialize_with = "string_or_number")]
    pub checkpoint_identifier: String,
    pub time_stamp: String,
    #[serde(default)]
    pub tag: Option<String>,
}

/// `GET /v1/vpgs/{id}/checkpoints/stats`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CheckpointStats {
    #[serde(default)]
    pub latest: Option<Checkpoint>,
}

/// `GET /v1/tasks/{id}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Task {
    #[serde(default)]
    pub task_identifier: Option<String>,
    pub status: TaskStatus,
    #[serde(default)]
    pub complete_reason: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TaskStatus {
    pub state: i64,
    #[serde(default)]
    pub progress: Option<i64>,
}

/// `Status.State` of a Zerto task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    InProgress,
    WaitingForUserInput,
    Paused,
    Failed,
    Stopped,
    Completed,
    Cancelling,
    Other(i64),
}

impl TaskState {
    pub fn from_wire(value: i64) -> Self {
        match value {
            1 => Self::InProgress,
            2 => Self::WaitingForUserInput,
            3 => Self::Paused,
            4 => Self::Failed,
            5 => Self::Stopped,
            6 => Self::Completed,
            7 => Self::Cancelling,
            other => Self::Other(other),
        }
    }

    /// Failed, Stopped and Completed end a task; anything else may still change.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Failed | Self::Stopped | Self::Completed)
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Other(n) => write!(f, "state {n}"),
            named => write!(f, "{named:?}"),
        }
    }
}

impl Task {
    pub fn state(&self) -> TaskState {
        TaskState::from_wire(self.status.state)
    }

    pub fn reason(&self) -> &str {
        self.complete_reason.as_deref().unwrap_or_default()
    }
}

/// A File Level Restore session (`GET /v1/flrs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FlrSession {
    pub flr_session_identifier: String,
    #[serde(default)]
    pub flr_session_status: Option<String>,
    #[serde(default)]
    pub vm_identifier: Option<String>,
    #[serde(default)]
    pub vpg_identifier: Option<String>,
    #[serde(default, deserialize_with = "opt_string_or_number")]
    pub checkpoint_identifier: Option<String>,
    #[serde(default)]
    pub mount_time: Option<String>,
}

/// `POST /v1/flrs/{id}/browse`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BrowseResult {
    #[serde(default)]
    pub path_items: Vec<PathItem>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PathItem {
    pub path: String,
    #[serde(default, rename = "Type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub is_browsable: Option<bool>,
    #[serde(default)]
    pub size_in_bytes: Option<u64>,
}

fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "expected a string or number, got {other}"
        ))),
    }
}

fn opt_string_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(s) => Ok(Some(s)),
        serde_json::Value::Number(n) => Ok(Some(n.to_string())),
        other => Err(serde::de::Error::custom(format!(
            "expected a string or number, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_unknown_fields_and_numeric_ids() {
        let cp: Checkpoint = serde_json::from_str(
            r#"{"CheckpointIdentifier": 786, "TimeStamp": "2019-07-11T13:47:23Z", "Tag": null, "Type": 1, "Vss": false}"#,
        )
        .expect("parses");
        assert_eq!(cp.checkpoint_identifier, "786");
        let task: Task = serde_json::from_str(
            r#"{"TaskIdentifier":"t.s","Type":"InsertTaggedCP","Status":{"State":9,"Progress":5},"Generation":3}"#,
        )
        .expect("parses");
        assert_eq!(task.state(), TaskState::Other(9));
        assert!(!task.state().is_terminal());
        assert_eq!(task.reason(), "");
    }

    #[test]
    fn terminal_states_are_failed_stopped_completed() {
        let terminal: Vec<i64> = (0..=8)
            .filter(|n| TaskState::from_wire(*n).is_terminal())
            .collect();
        assert_eq!(terminal, [4, 5, 6]);
    }
}
