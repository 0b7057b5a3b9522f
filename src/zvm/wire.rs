//! What the ZVM sends, as it sends it: PascalCase keys, unknown fields ignored, enums kept as
//! numbers so that values Zerto adds later do not break parsing. Private to the client: each
//! answer is turned into the types of `model` here, once, and an answer that cannot be
//! used is an error naming the object and the field.
//!
//! Every key is also read in camelCase (`latest`, `vmNetworkInformation`), the other casing
//! appliances answer in. A field an operation needs is never read as empty because it is
//! missing: its absence is an error naming it (the caller adds the call), while `null` keeps
//! its meaning. Fields older appliances do not send (`VmNetworkInformation` before 9.x) stay
//! optional.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Deserializer};

use super::model::{
    Checkpoint, CommitPolicy, DecisionBody, FlrSession, FlrStatus, PathEntry, RestoreRequest,
    ShutdownPolicy, Task, TaskState, Vm, Vpg, VpgRef,
};

/// One row of `GET /v1/vms`: a VM as protected by ONE VPG (a VM in two VPGs has two rows).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct VmRow {
    #[serde(alias = "vmIdentifier")]
    vm_identifier: String,
    /// Null for a VM being deleted (the spec marks it nullable).
    #[serde(default, alias = "vmName")]
    vm_name: Option<String>,
    #[serde(alias = "vpgIdentifier")]
    vpg_identifier: String,
    #[serde(default, alias = "vpgName")]
    vpg_name: Option<String>,
    /// Not sent by 7.x and 8.x appliances: a VM is then found by name or id only.
    #[serde(default, alias = "vmNetworkInformation")]
    vm_network_information: Option<NetworkInformation>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct NetworkInformation {
    #[serde(default, alias = "networkAdapters")]
    network_adapters: Option<Vec<NetworkAdapter>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct NetworkAdapter {
    #[serde(default, alias = "ipAddresses")]
    ip_addresses: Option<Vec<Option<String>>>,
}

/// The rows of `GET /v1/vms` as VMs: rows of one vmIdentifier become one VM with every VPG
/// (once each) and every guest IP (once each), in the order listed. A row without a VM name
/// (a VM being deleted) is left out: no name, IP or alias can reach it; a VPG without a name
/// is named by its identifier, so that it is still tagged.
pub(super) fn vms(rows: Vec<VmRow>) -> Result<Vec<Vm>, String> {
    let mut vms: Vec<Vm> = Vec::new();
    let has_name = |row: &VmRow| row.vm_name.as_deref().is_some_and(|n| !n.trim().is_empty());
    // A nameless row of a VM that another row names still counts: its VPG must be tagged.
    let names: Vec<(String, String)> = rows
        .iter()
        .filter(|row| has_name(row))
        .map(|row| {
            (
                row.vm_identifier.clone(),
                row.vm_name.clone().unwrap_or_default(),
            )
        })
        .collect();
    let rows = rows.into_iter().filter_map(|mut row| {
        if !has_name(&row) {
            row.vm_name = Some(
                names
                    .iter()
                    .find(|(id, _)| *id == row.vm_identifier)?
                    .1
                    .clone(),
            );
        }
        Some(row)
    });
    for (n, row) in rows.enumerate() {
        if row.vm_identifier.trim().is_empty() {
            return Err(format!("VM row {n}: VmIdentifier is empty"));
        }
        if row.vpg_identifier.trim().is_empty() {
            return Err(format!("VM {}: VpgIdentifier is empty", row.vm_identifier));
        }
        let vpg = VpgRef {
            name: row
                .vpg_name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| row.vpg_identifier.clone()),
            id: row.vpg_identifier,
        };
        let ips = row
            .vm_network_information
            .into_iter()
            .flat_map(|n| n.network_adapters.unwrap_or_default())
            .flat_map(|a| a.ip_addresses.unwrap_or_default())
            .flatten()
            .map(|ip| ip.trim().to_owned())
            .filter(|ip| !ip.is_empty());
        let index = vms
            .iter()
            .position(|vm| vm.id == row.vm_identifier)
            .unwrap_or_else(|| {
                vms.push(Vm {
                    id: row.vm_identifier,
                    name: row.vm_name.unwrap_or_default(),
                    vpgs: Vec::new(),
                    ips: Vec::new(),
                });
                vms.len() - 1
            });
        let vm = &mut vms[index];
        if !vm.vpgs.contains(&vpg) {
            vm.vpgs.push(vpg);
        }
        for ip in ips {
            if !vm.ips.contains(&ip) {
                vm.ips.push(ip);
            }
        }
    }
    Ok(vms)
}

/// A VPG as `GET /v1/vpgs[/{id}]` describes it (only what `rewind` reads).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct VpgRow {
    #[serde(alias = "vpgIdentifier")]
    vpg_identifier: String,
    #[serde(alias = "vpgName")]
    vpg_name: String,
    /// The health gate reads it: missing (as opposed to null) is an error, not a VPG whose
    /// status is unknown.
    #[serde(default, alias = "status")]
    status: Field<i64>,
    #[serde(default, alias = "statusDescription")]
    status_description: Field<String>,
    #[serde(default, alias = "subStatus")]
    sub_status: Option<i64>,
    #[serde(default, alias = "subStatusDescription")]
    sub_status_description: Option<String>,
    #[serde(
        default,
        rename = "ActualRPO",
        alias = "actualRPO",
        alias = "actualRpo"
    )]
    actual_rpo: Option<i64>,
    #[serde(default, alias = "protectedSiteName")]
    protected_site_name: Option<String>,
    #[serde(default, alias = "recoverySiteName")]
    recovery_site_name: Option<String>,
    #[serde(default, alias = "historyStatusApi")]
    history_status_api: Option<HistoryStatus>,
    #[serde(default, alias = "activeProcessesApi")]
    active_processes_api: Option<ActiveProcesses>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ActiveProcesses {
    #[serde(default, alias = "runningFailOverTestApi")]
    running_fail_over_test_api: Option<RunningTest>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RunningTest {
    #[serde(default, alias = "stage")]
    stage: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct HistoryStatus {
    #[serde(default, alias = "actualHistoryInMinutes")]
    actual_history_in_minutes: Option<i64>,
    #[serde(default, alias = "configuredHistoryInMinutes")]
    configured_history_in_minutes: Option<i64>,
}

pub(super) fn vpg(row: VpgRow) -> Result<Vpg, String> {
    if row.vpg_identifier.trim().is_empty() {
        return Err(format!("VPG {:?}: VpgIdentifier is empty", row.vpg_name));
    }
    if row.status.is_missing() && row.status_description.is_missing() {
        return Err(format!(
            "VPG {:?}: no Status (nor StatusDescription), which says whether a checkpoint taken now can be restored",
            row.vpg_name
        ));
    }
    let minutes = |m: Option<i64>| {
        m.and_then(|m| u64::try_from(m).ok())
            .filter(|m| *m > 0)
            .map(|m| Duration::from_secs(m * 60))
    };
    let history = row.history_status_api.as_ref();
    Ok(Vpg {
        id: row.vpg_identifier,
        name: row.vpg_name,
        status: row.status.value(),
        health: row.status_description.value(),
        sub_status: row.sub_status,
        sub_status_text: row.sub_status_description,
        actual_rpo_secs: row.actual_rpo,
        protected_site: row.protected_site_name,
        recovery_site: row.recovery_site_name,
        configured_history: minutes(history.and_then(|h| h.configured_history_in_minutes)),
        actual_history: minutes(history.and_then(|h| h.actual_history_in_minutes)),
        running_test: row
            .active_processes_api
            .and_then(|p| p.running_fail_over_test_api)
            .map(|test| {
                test.stage
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or_else(|| String::from("running"))
            }),
    })
}

pub(super) fn vpgs(rows: Vec<VpgRow>) -> Result<Vec<Vpg>, String> {
    rows.into_iter().map(vpg).collect()
}

/// One row of `GET /v1/vpgs/{id}/checkpoints`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CheckpointRow {
    #[serde(deserialize_with = "string_or_number", alias = "checkpointIdentifier")]
    checkpoint_identifier: String,
    #[serde(alias = "timeStamp", alias = "timestamp")]
    time_stamp: String,
    #[serde(default, alias = "tag")]
    tag: Option<String>,
}

pub(super) fn checkpoint(row: CheckpointRow) -> Result<Checkpoint, String> {
    let id = row.checkpoint_identifier.trim().to_owned();
    if id.is_empty() {
        return Err(String::from("a checkpoint's CheckpointIdentifier is empty"));
    }
    let at = time(&row.time_stamp).map_err(|why| format!("checkpoint {id}: TimeStamp {why}"))?;
    Ok(Checkpoint {
        id,
        at,
        tag: row.tag,
    })
}

pub(super) fn checkpoints(rows: Vec<CheckpointRow>) -> Result<Vec<Checkpoint>, String> {
    rows.into_iter().map(checkpoint).collect()
}

/// `GET /v1/vpgs/{id}/checkpoints/stats`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CheckpointStats {
    /// Null when the journal holds no checkpoint; missing is an error.
    #[serde(default, alias = "earliest")]
    earliest: Field<CheckpointRow>,
    #[serde(default, alias = "latest")]
    latest: Field<CheckpointRow>,
}

pub(super) fn earliest(stats: CheckpointStats) -> Result<Option<Checkpoint>, String> {
    stats_field("Earliest", stats.earliest)
}

pub(super) fn latest(stats: CheckpointStats) -> Result<Option<Checkpoint>, String> {
    stats_field("Latest", stats.latest)
}

/// One checkpoint of the stats: null is "none", a missing field an error naming it.
fn stats_field(name: &str, field: Field<CheckpointRow>) -> Result<Option<Checkpoint>, String> {
    if field.is_missing() {
        return Err(format!(
            "no {name} field (the checkpoint it names is what was asked)"
        ));
    }
    field
        .value()
        .map(checkpoint)
        .transpose()
        .map_err(|why| format!("{name}: {why}"))
}

/// `GET /v1/tasks/{id}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct TaskRow {
    #[serde(alias = "status")]
    status: TaskStatus,
    #[serde(default, alias = "completeReason")]
    complete_reason: Option<String>,
    #[serde(default, alias = "taskIdentifier")]
    task_identifier: Option<String>,
    #[serde(default, rename = "Type", alias = "type")]
    kind: Option<serde_json::Value>,
    #[serde(default, alias = "relatedEntities")]
    related_entities: Option<RelatedEntities>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RelatedEntities {
    #[serde(default, alias = "vpgs")]
    vpgs: Option<Vec<Link>>,
}

/// A link object (lower-case keys on every version).
#[derive(Debug, Clone, Deserialize)]
struct Link {
    #[serde(default, alias = "Identifier")]
    identifier: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TaskStatus {
    #[serde(alias = "state")]
    state: i64,
    #[serde(default, alias = "progress")]
    progress: Option<i64>,
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "every conversion at the boundary has the same shape"
)]
pub(super) fn task(row: TaskRow) -> Result<Task, String> {
    Ok(Task {
        state: task_state(row.status.state),
        progress: row
            .status
            .progress
            .and_then(|p| u8::try_from(p.clamp(0, 100)).ok()),
        reason: row.complete_reason.unwrap_or_default(),
        id: row.task_identifier.filter(|id| !id.trim().is_empty()),
        kind: row.kind.and_then(|kind| match kind {
            serde_json::Value::String(text) => Some(text),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }),
        vpg_ids: row
            .related_entities
            .and_then(|r| r.vpgs)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|link| link.identifier)
            .collect(),
    })
}

pub(super) fn tasks(rows: Vec<TaskRow>) -> Result<Vec<Task>, String> {
    rows.into_iter().map(task).collect()
}

/// The body of `POST /v1/vms/{id}/Restore`, in the names and numbers Zerto's SDK sends.
pub(super) fn restore_body(request: &RestoreRequest) -> serde_json::Value {
    let commit = match request.commit_policy {
        CommitPolicy::Rollback => 0,
        CommitPolicy::Commit => 1,
        CommitPolicy::None => 2,
    };
    let shutdown = match request.shutdown_policy {
        ShutdownPolicy::None => 0,
        ShutdownPolicy::Shutdown => 1,
        ShutdownPolicy::ForceShutdown => 2,
    };
    serde_json::json!({
        "vpgIdentifier": request.vpg_id,
        "checkpointIdentifier": request.checkpoint_id,
        "commitPolicy": commit,
        "shutdownPolicy": shutdown,
        "timeToWaitBeforeContinueInSeconds": request.wait.as_secs(),
    })
}

/// The body of `RestoreCommit` / `RestoreRollback` in one of its two forms.
pub(super) fn decision_body(form: DecisionBody, vpg_id: &str) -> Option<serde_json::Value> {
    match form {
        DecisionBody::VpgString => Some(serde_json::Value::from(vpg_id)),
        DecisionBody::Empty => None,
    }
}

/// The body of `POST /v1/vpgs/{id}/FailoverTest` for some VMs from one checkpoint.
pub(super) fn failover_test_body(checkpoint_id: &str, vm_ids: &[&str]) -> serde_json::Value {
    serde_json::json!({ "checkpointIdentifier": checkpoint_id, "vmIdentifiers": vm_ids })
}

/// The body of `POST /v1/vpgs/{id}/FailoverTestStop`.
pub(super) fn failover_test_stop_body(success: bool, summary: &str) -> serde_json::Value {
    serde_json::json!({ "failoverTestSuccess": success, "failoverTestSummary": summary })
}

/// A string answer (a task id) that may also come back empty: `None` then.
pub(super) fn optional_string(text: &str) -> Result<Option<String>, String> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::String(id)) if !id.trim().is_empty() => Ok(Some(id)),
        Ok(serde_json::Value::Null | serde_json::Value::String(_)) => Ok(None),
        _ => Err(format!("expected a task id (a JSON string), got {text:?}")),
    }
}

/// `Status.State` of a Zerto task.
fn task_state(value: i64) -> TaskState {
    match value {
        1 => TaskState::InProgress,
        2 => TaskState::WaitingForUserInput,
        3 => TaskState::Paused,
        4 => TaskState::Failed,
        5 => TaskState::Stopped,
        6 => TaskState::Completed,
        7 => TaskState::Cancelling,
        other => TaskState::Other(other),
    }
}

/// A File Level Restore session (`GET /v1/flrs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct FlrSessionRow {
    #[serde(alias = "flrSessionIdentifier")]
    flr_session_identifier: String,
    #[serde(default, alias = "flrSessionStatus")]
    flr_session_status: Option<String>,
    #[serde(default, alias = "vmIdentifier")]
    vm_identifier: Option<String>,
    #[serde(default, alias = "vpgIdentifier")]
    vpg_identifier: Option<String>,
    #[serde(
        default,
        deserialize_with = "opt_string_or_number",
        alias = "checkpointIdentifier"
    )]
    checkpoint_identifier: Option<String>,
    #[serde(default, alias = "mountTime")]
    mount_time: Option<String>,
}

pub(super) fn flr_session(row: FlrSessionRow) -> Result<FlrSession, String> {
    if row.flr_session_identifier.trim().is_empty() {
        return Err(String::from(
            "a File Level Restore session's FlrSessionIdentifier is empty",
        ));
    }
    let status = row
        .flr_session_status
        .filter(|s| !s.trim().is_empty())
        .map(|s| match s.as_str() {
            "MountInProgress" => FlrStatus::Mounting,
            "MountCompletedSuccessfully" => FlrStatus::Mounted,
            "MountFailed" => FlrStatus::Failed,
            _ => FlrStatus::Other(s),
        });
    Ok(FlrSession {
        id: row.flr_session_identifier,
        status,
        vm_id: row.vm_identifier,
        vpg_id: row.vpg_identifier,
        checkpoint_id: row.checkpoint_identifier,
        // Only shown to people: an unreadable MountTime must not stop the listing or the
        // reaping of sessions, so it is left out rather than refused.
        mounted_at: row.mount_time.as_deref().and_then(|t| time(t).ok()),
    })
}

pub(super) fn flr_sessions(rows: Vec<FlrSessionRow>) -> Result<Vec<FlrSession>, String> {
    rows.into_iter().map(flr_session).collect()
}

/// `POST /v1/flrs/{id}/browse`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct BrowseResult {
    /// Required: an answer without it (another casing, another shape) must not read as an
    /// empty folder, which would say the file is not in the checkpoint.
    #[serde(alias = "pathItems")]
    path_items: Vec<PathItem>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PathItem {
    #[serde(alias = "path")]
    path: String,
    #[serde(default, alias = "isBrowsable")]
    is_browsable: Option<bool>,
    #[serde(default, alias = "sizeInBytes")]
    size_in_bytes: Option<u64>,
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "every conversion at the boundary has the same shape"
)]
pub(super) fn entries(result: BrowseResult) -> Result<Vec<PathEntry>, String> {
    Ok(result
        .path_items
        .into_iter()
        .map(|item| PathEntry {
            path: item.path,
            browsable: item.is_browsable.unwrap_or(true),
            size: item.size_in_bytes,
        })
        .collect())
}

/// A time as Zerto writes it: ISO-8601 UTC (`2019-07-11T16:51:07.022Z`, 8.x and later), or
/// the `/Date(1520423877045)/` of 7.x and earlier.
fn time(text: &str) -> Result<SystemTime, String> {
    let trimmed = text.trim();
    if let Some(inner) = trimmed
        .strip_prefix("/Date(")
        .and_then(|s| s.strip_suffix(")/"))
    {
        // The milliseconds are UTC; an offset after them only says where it was written.
        let digits = inner
            .find(['+', '-'])
            .filter(|i| *i > 0)
            .map_or(inner, |i| &inner[..i]);
        return digits
            .parse::<u64>()
            .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
            .map_err(|_| format!("{trimmed:?} is not a /Date(milliseconds)/ time"));
    }
    crate::time::parse_utc(trimmed).map_err(|_| {
        format!("{trimmed:?} is not an ISO-8601 UTC time such as 2019-07-11T13:47:23Z")
    })
}

/// A field an operation needs, with `#[serde(default)]`: missing (the default) is told apart
/// from null, so that its absence can be an error rather than read as empty.
#[derive(Debug, Clone, Default)]
enum Field<T> {
    #[default]
    Missing,
    Null,
    Given(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map_or(Field::Null, Field::Given))
    }
}

impl<T> Field<T> {
    fn is_missing(&self) -> bool {
        matches!(self, Field::Missing)
    }

    /// The value; `None` when null or missing.
    fn value(self) -> Option<T> {
        match self {
            Field::Given(value) => Some(value),
            Field::Missing | Field::Null => None,
        }
    }
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

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).expect("parses")
    }

    #[test]
    fn tolerates_unknown_fields_and_numeric_ids() {
        let cp = checkpoint(parse(
            r#"{"CheckpointIdentifier": 786, "TimeStamp": "2019-07-11T13:47:23Z", "Tag": null, "Type": 1, "Vss": false}"#,
        ))
        .expect("usable");
        assert_eq!(cp.id, "786");
        assert_eq!(cp.time(), "2019-07-11T13:47:23.000Z");
        let task = task(parse(
            r#"{"TaskIdentifier":"t.s","Type":"InsertTaggedCP","Status":{"State":9,"Progress":5},"Generation":3}"#,
        ))
        .expect("usable");
        assert_eq!(task.state, TaskState::Other(9));
        assert_eq!(task.progress, Some(5));
        assert!(!task.state.is_terminal());
        assert_eq!(task.reason, "");
    }

    #[test]
    fn terminal_states_are_failed_stopped_completed() {
        let terminal: Vec<i64> = (0..=8).filter(|n| task_state(*n).is_terminal()).collect();
        assert_eq!(terminal, [4, 5, 6]);
    }

    #[test]
    fn old_and_new_zerto_times_give_the_same_instant() {
        let iso = time("2018-03-07T11:57:57.045Z").expect("iso");
        assert_eq!(time("/Date(1520423877045)/"), Ok(iso));
        assert_eq!(time("/Date(1520423877045+0100)/"), Ok(iso));
        assert_eq!(
            time("2018-03-07T11:57:57.045"),
            Ok(iso),
            "no Z is read as UTC"
        );
    }

    #[test]
    fn an_unusable_checkpoint_time_names_the_checkpoint_and_the_field() {
        let err = checkpoint(parse(
            r#"{"CheckpointIdentifier": "41", "TimeStamp": "yesterday"}"#,
        ))
        .unwrap_err();
        assert_eq!(
            err,
            "checkpoint 41: TimeStamp \"yesterday\" is not an ISO-8601 UTC time such as 2019-07-11T13:47:23Z"
        );
        let err =
            checkpoint(parse(r#"{"CheckpointIdentifier": "", "TimeStamp": "x"}"#)).unwrap_err();
        assert!(err.contains("CheckpointIdentifier is empty"), "{err}");
        let err = latest(parse(
            r#"{"Latest": {"CheckpointIdentifier": 7, "TimeStamp": "/Date(x)/"}}"#,
        ))
        .unwrap_err();
        assert_eq!(
            err,
            "Latest: checkpoint 7: TimeStamp \"/Date(x)/\" is not a /Date(milliseconds)/ time"
        );
    }

    #[test]
    fn rows_of_one_vm_become_one_vm_with_every_vpg_and_ip() {
        let rows: Vec<VmRow> = parse(
            r#"[
              {"VmIdentifier":"b.vm-2","VmName":"db01","VpgIdentifier":"v1","VpgName":"Gold",
               "VmNetworkInformation":{"NetworkAdapters":[{"IpAddresses":["10.0.0.31"]},{"IpAddresses":["fe80::1",null," "]}]}},
              {"VmIdentifier":"a.vm-1","VmName":"web","VpgIdentifier":"v1","VpgName":"Gold"},
              {"VmIdentifier":"b.vm-2","VmName":"db01","VpgIdentifier":"v2","VpgName":"Silver",
               "VmNetworkInformation":{"NetworkAdapters":[{"IpAddresses":["10.0.0.31","10.0.1.31"]}]}},
              {"VmIdentifier":"b.vm-2","VmName":"db01","VpgIdentifier":"v2","VpgName":"Silver"}
            ]"#,
        );
        let vms = vms(rows).expect("usable");
        assert_eq!(vms.len(), 2);
        assert_eq!(vms[0].name, "db01");
        assert_eq!(vms[0].vpg_names(), "Gold, Silver");
        assert_eq!(vms[0].ips, ["10.0.0.31", "fe80::1", "10.0.1.31"]);
        assert_eq!(vms[1].vpg_names(), "Gold");
        assert!(vms[1].ips.is_empty());
    }

    #[test]
    fn a_row_without_names_never_fails_the_listing_nor_drops_a_vpg() {
        let rows: Vec<VmRow> = parse(
            r#"[
              {"VmIdentifier":"s.vm-9","VmName":null,"VpgIdentifier":"v1","VpgName":null},
              {"VmIdentifier":"b.vm-2","VmName":"db01","VpgIdentifier":"v1","VpgName":"Gold"},
              {"VmIdentifier":"b.vm-2","VmName":null,"VpgIdentifier":"v3","VpgName":null},
              {"VmIdentifier":"a.vm-1","VmName":"web","VpgIdentifier":"v1"}
            ]"#,
        );
        let vms = vms(rows).expect("usable");
        let names: Vec<&str> = vms.iter().map(|vm| vm.name.as_str()).collect();
        assert_eq!(
            names,
            ["db01", "web"],
            "the nameless VM being deleted is left out"
        );
        assert_eq!(vms[0].vpg_names(), "Gold, v3", "its VPG named by its id");
    }

    /// Every recorded response in `tests/fixtures/zvm/` is read by the parser of the call it
    /// answers, and what `rewind` needs from it comes out.
    #[test]
    fn every_recorded_zvm_response_is_read() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zvm");
        let mut read = 0;
        for entry in std::fs::read_dir(&dir).expect("tests/fixtures/zvm") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("name")
                .to_owned();
            if name == "README.md" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("fixture");
            let call = name.split_once("--").map_or("", |(call, _)| call);
            match call {
                "vms" => {
                    let rows: Vec<VmRow> = serde_json::from_str(&text).expect(&name);
                    let count = rows.len();
                    let vms = vms(rows).expect(&name);
                    assert_eq!(vms.len(), count, "{name}: one VM per row here");
                    for vm in &vms {
                        assert!(
                            !vm.name.is_empty() && vm.id.contains(".vm-"),
                            "{name}: {vm:?}"
                        );
                        assert!(
                            vm.vpgs
                                .iter()
                                .all(|v| !v.id.is_empty() && !v.name.is_empty()),
                            "{name}: {vm:?}"
                        );
                    }
                }
                "vpg" => {
                    let raw: serde_json::Value = serde_json::from_str(&text).expect(&name);
                    let row: VpgRow = serde_json::from_value(raw.clone()).expect(&name);
                    let vpg = vpg(row).expect(&name);
                    assert!(vpg.status.is_some() && vpg.sub_status.is_some(), "{name}");
                    let minutes = raw["HistoryStatusApi"]["ConfiguredHistoryInMinutes"]
                        .as_u64()
                        .expect(&name);
                    assert_eq!(
                        vpg.configured_history,
                        Some(Duration::from_secs(minutes * 60)),
                        "{name}: journal history"
                    );
                    assert_eq!(
                        crate::guard::health(&vpg),
                        crate::guard::Health::Restorable,
                        "{name}: a VPG meeting its SLA"
                    );
                    let earliest: CheckpointRow = serde_json::from_value(
                        raw["HistoryStatusApi"]["EarliestCheckpoint"].clone(),
                    )
                    .expect(&name);
                    checkpoint(earliest).expect(&name);
                }
                other => panic!("{name}: no parser for call {other:?} (see the folder's README)"),
            }
            read += 1;
        }
        assert!(read >= 3, "{read} recorded responses");
    }

    #[test]
    fn a_browse_answer_without_its_items_is_an_error_not_an_empty_folder() {
        assert!(serde_json::from_str::<BrowseResult>(r#"{"MainPathItem": null}"#).is_err());
        assert!(serde_json::from_str::<BrowseResult>(r#"{"Pathitems": []}"#).is_err());
        let camel: BrowseResult =
            serde_json::from_str(r#"{"pathItems": [{"Path": "Volume1-Ext4"}]}"#)
                .expect("camelCase");
        assert_eq!(entries(camel).expect("entries")[0].path, "Volume1-Ext4");
    }

    /// The other casing appliances answer in reads as the PascalCase one, field by field,
    /// instead of as empty defaults (no IPs, no latest checkpoint, an unknown VPG status).
    #[test]
    fn camel_case_answers_read_as_the_pascal_case_ones() {
        let vms = vms(parse(
            r#"[{"vmIdentifier":"b.vm-2","vmName":"db01","vpgIdentifier":"v1","vpgName":"Gold",
                 "vmNetworkInformation":{"networkAdapters":[{"ipAddresses":["10.0.0.31"]}]}}]"#,
        ))
        .expect("usable");
        assert_eq!(vms[0].name, "db01");
        assert_eq!(vms[0].vpg_names(), "Gold");
        assert_eq!(vms[0].ips, ["10.0.0.31"]);

        let stats = r#"{"earliest": null,
            "latest": {"checkpointIdentifier": 9, "timeStamp": "2026-03-02T09:00:00Z", "tag": "ai:t1 | x"}}"#;
        let latest = latest(parse(stats))
            .expect("usable")
            .expect("a latest checkpoint");
        assert_eq!(
            (latest.id.as_str(), latest.tag.as_deref()),
            ("9", Some("ai:t1 | x"))
        );
        assert_eq!(earliest(parse(stats)), Ok(None), "null: an empty journal");

        let vpg = vpg(parse(
            r#"{"vpgIdentifier":"v1","vpgName":"Gold","status":0,"subStatus":1,"actualRPO":7,
                "historyStatusApi":{"configuredHistoryInMinutes":60,"actualHistoryInMinutes":5}}"#,
        ))
        .expect("usable");
        assert_eq!((vpg.status, vpg.sub_status), (Some(0), Some(1)));
        assert_eq!(vpg.actual_rpo_secs, Some(7));
        assert_eq!(vpg.configured_history, Some(Duration::from_secs(3600)));
        assert!(
            matches!(
                crate::guard::health(&vpg),
                crate::guard::Health::Unrestorable(_)
            ),
            "the gate reads the camelCase status: {vpg:?}"
        );

        let task = task(parse(
            r#"{"status":{"state":4,"progress":100},"completeReason":"no"}"#,
        ))
        .expect("usable");
        assert_eq!(
            (task.state, task.reason.as_str()),
            (TaskState::Failed, "no")
        );
        let sessions = flr_sessions(parse(
            r#"[{"flrSessionIdentifier":"s1","flrSessionStatus":"MountCompletedSuccessfully","checkpointIdentifier":42,"vmIdentifier":"b.vm-2"}]"#,
        ))
        .expect("usable");
        assert_eq!(sessions[0].status, Some(FlrStatus::Mounted));
        assert_eq!(sessions[0].checkpoint_id.as_deref(), Some("42"));
        assert_eq!(sessions[0].vm_id.as_deref(), Some("b.vm-2"));
        let items = entries(parse(
            r#"{"pathItems":[{"path":"etc","isBrowsable":true},{"path":"app.conf","isBrowsable":false,"sizeInBytes":31}]}"#,
        ))
        .expect("usable");
        assert_eq!(
            (items[1].path.as_str(), items[1].browsable, items[1].size),
            ("app.conf", false, Some(31))
        );
    }

    /// A field an operation needs that is missing under every known casing is an error naming
    /// it, not an empty default; null keeps its meaning (no checkpoint, status unknown).
    #[test]
    fn a_missing_field_an_operation_needs_is_an_error_naming_it() {
        let drifted: CheckpointStats = parse(
            r#"{"LatestCheckpoint": {"CheckpointIdentifier": 9, "TimeStamp": "2026-03-02T09:00:00Z"}}"#,
        );
        let err = latest(drifted.clone()).unwrap_err();
        assert!(err.starts_with("no Latest field"), "{err}");
        let err = earliest(drifted).unwrap_err();
        assert!(err.starts_with("no Earliest field"), "{err}");
        assert_eq!(latest(parse(r#"{"Latest": null}"#)), Ok(None));

        let err = vpg(parse(
            r#"{"VpgIdentifier":"v1","VpgName":"Gold","VpgStatus":1}"#,
        ))
        .unwrap_err();
        assert!(
            err.starts_with("VPG \"Gold\": no Status (nor StatusDescription)"),
            "{err}"
        );
        let unknown = vpg(parse(
            r#"{"VpgIdentifier":"v1","VpgName":"Gold","Status":null}"#,
        ))
        .expect("a null status is an unknown one");
        assert_eq!(unknown.status, None);
        let described = vpg(parse(
            r#"{"VpgIdentifier":"v1","VpgName":"Gold","StatusDescription":"MeetingSLA"}"#,
        ))
        .expect("a status given in words");
        assert_eq!(described.health.as_deref(), Some("MeetingSLA"));
    }

    #[test]
    fn flr_states_and_times() {
        let sessions = flr_sessions(parse(
            r#"[{"FlrSessionIdentifier":"s1","FlrSessionStatus":"MountCompletedSuccessfully","CheckpointIdentifier":42,"MountTime":"2026-03-02T09:00:00Z"},
                {"FlrSessionIdentifier":"s2","FlrSessionStatus":"UnmountInProgress","MountTime":"soon"},
                {"FlrSessionIdentifier":"s3"}]"#,
        ))
        .expect("usable");
        assert_eq!(sessions[0].status, Some(FlrStatus::Mounted));
        assert_eq!(sessions[0].checkpoint_id.as_deref(), Some("42"));
        assert!(sessions[0].mounted_at.is_some());
        assert_eq!(
            sessions[1].status.as_ref().map(FlrStatus::as_zerto),
            Some("UnmountInProgress")
        );
        assert_eq!(sessions[1].mounted_at, None);
        assert_eq!(sessions[2].status, None);
    }

    #[test]
    fn whole_vm_restore_answers_and_bodies() {
        let task = super::task(parse::<TaskRow>(
            r#"{"TaskIdentifier": "t.1", "Type": "JournalVmRestore", "Status": {"State": 2, "Progress": 100},
                "RelatedEntities": {"Vpgs": [{"identifier": "vpg-1", "href": "h", "rel": "self", "type": "VpgApi"}]}}"#,
        ))
        .expect("task");
        assert_eq!(task.state, TaskState::WaitingForUserInput);
        assert_eq!(
            (
                task.id.as_deref(),
                task.kind.as_deref(),
                task.vpg_ids.as_slice()
            ),
            (
                Some("t.1"),
                Some("JournalVmRestore"),
                ["vpg-1".to_owned()].as_slice()
            )
        );
        let bare = super::task(parse::<TaskRow>(r#"{"Status": {"State": 1}}"#)).expect("task");
        assert!(bare.id.is_none() && bare.kind.is_none() && bare.vpg_ids.is_empty());

        let testing = |processes: &str| {
            let row = format!(
                r#"{{"VpgIdentifier": "v", "VpgName": "n", "Status": 1, "ActiveProcessesApi": {processes}}}"#
            );
            vpg(parse::<VpgRow>(&row)).expect("vpg").running_test
        };
        assert_eq!(testing(r#"{"RunningFailOverTestApi": null}"#), None);
        assert_eq!(testing("null"), None);
        assert_eq!(
            testing(r#"{"RunningFailOverTestApi": {"Stage": "Testing"}}"#).as_deref(),
            Some("Testing")
        );
        assert_eq!(
            testing(r#"{"runningFailOverTestApi": {"stage": null}}"#).as_deref(),
            Some("running")
        );

        let body = restore_body(&RestoreRequest {
            vpg_id: "vpg-1".into(),
            checkpoint_id: "1042".into(),
            commit_policy: CommitPolicy::Rollback,
            shutdown_policy: ShutdownPolicy::Shutdown,
            wait: Duration::from_secs(3600),
        });
        assert_eq!(
            body,
            serde_json::json!({"vpgIdentifier": "vpg-1", "checkpointIdentifier": "1042",
                "commitPolicy": 0, "shutdownPolicy": 1, "timeToWaitBeforeContinueInSeconds": 3600})
        );
        assert_eq!(
            decision_body(DecisionBody::VpgString, "v"),
            Some(serde_json::json!("v"))
        );
        assert_eq!(decision_body(DecisionBody::Empty, "v"), None);
        assert_eq!(optional_string("\"t.2\""), Ok(Some("t.2".to_owned())));
        assert_eq!(optional_string(""), Ok(None));
        assert_eq!(optional_string("null"), Ok(None));
        assert!(optional_string("{\"a\": 1}").is_err());
    }
}
