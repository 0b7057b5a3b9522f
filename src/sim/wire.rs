//! The JSON a ZVM answers with: PascalCase fields (link objects excepted), ints for enums,
//! ISO-8601 UTC times. Only shapes live here; what to answer is decided in `routes`.

use serde_json::{Value, json};

use super::scenario::{GuestOs, Profile};
use super::state::{Checkpoint, Task, World};
use crate::time::{format_utc, format_utc_millis};

/// A link object (`href`, `identifier`, `rel`, `type`: lower-case, as on the wire).
pub(crate) fn link(base: &str, path: &str, identifier: &str, kind: &str) -> Value {
    json!({ "href": format!("{base}{path}"), "identifier": identifier, "rel": "self", "type": kind })
}

fn site_link(world: &World, base: &str, name: &str) -> Value {
    if name == world.scenario.site_name {
        link(
            base,
            "/v1/localsite",
            &world.scenario.site_id,
            "LocalSiteApi",
        )
    } else {
        let id = super::ids::guid("site", name);
        link(base, &format!("/v1/peersites/{id}"), &id, "PeerSiteApi")
    }
}

fn recovery_entity(world: &World, vpg: usize) -> u8 {
    let spec = &world.scenario.vpgs[vpg];
    if spec.recovery_site == world.scenario.site_name {
        0
    } else {
        Profile::Vsphere.entity_type()
    }
}

/// `GET /v1/localsite`.
pub(crate) fn local_site(world: &World, base: &str) -> Value {
    json!({
        "SiteIdentifier": world.scenario.site_id,
        "SiteName": world.scenario.site_name,
        "Location": "Simulated lab",
        "Version": "10.9.10",
        "DisplayVersion": "10.9 U1 (simulated)",
        "ZvmApiVersion": "10.9.10",
        "SiteType": "VCenter",
        "IpAddress": "127.0.0.1",
        "UtcOffsetInMinutes": 0,
        "ContactName": "", "ContactEmail": "", "ContactPhone": "",
        "IsReplicationToSelfEnabled": true,
        "BandwidthThrottlingInMBs": -1,
        "IsLoginBannerEnabled": false,
        "LoginBanner": "",
        "Link": link(base, "/v1/localsite", &world.scenario.site_id, "LocalSiteApi"),
    })
}

/// One row of `GET /v1/vms`: a VM as protected by one VPG.
pub(crate) fn vm_row(world: &World, base: &str, vm: usize, vpg: usize) -> Value {
    let v = &world.scenario.vms[vm];
    let g = &world.scenario.vpgs[vpg];
    let scoped = format!("{}?VpgIdentifier={}", v.id, g.id);
    let guest_os = match v.guest_os {
        GuestOs::Linux => "Ubuntu Linux (64-bit)",
        GuestOs::Windows => "Microsoft Windows Server 2019 (64-bit)",
    };
    json!({
        "VmIdentifier": v.id,
        "VmName": v.name,
        "VpgIdentifier": g.id,
        "VpgName": g.name,
        "Link": link(base, &format!("/v1/vms/{scoped}"), &scoped, "VmApi"),
        "Status": g.status.0,
        "SubStatus": g.sub_status.0,
        "Priority": 1,
        "Entities": { "Protected": g.profile.entity_type(), "Recovery": recovery_entity(world, vpg) },
        "ProtectedSite": site_link(world, base, &g.protected_site),
        "RecoverySite": site_link(world, base, &g.recovery_site),
        "ProtectedSiteName": g.protected_site,
        "RecoverySiteName": g.recovery_site,
        "EnabledActions": { "IsFlrEnabled": true },
        "GuestOs": guest_os,
        "HardwareVersion": "vmx-19",
        "IsAgentInstalled": false,
        "IsVmExists": true,
        "VmNetworkInformation": { "NetworkAdapters": [{
            "DisplayName": "Network adapter 1",
            "NetworkIdentifier": "network-1",
            "IpAddresses": v.ips,
        }] },
        "Volumes": [{ "VmVolumeIdentifier": "scsi:0:0", "PublicCloudVolumeIdentifier": null }],
        "Nics": [{ "NicIdentifier": "Network adapter 1" }],
        "ActualRPO": rpo(g.timing.journal_gap),
        "ProvisionedStorageInMB": 40_960,
        "UsedStorageInMB": 12_288,
        "JournalUsedStorageMb": 512,
        "CpuCoresNum": 2,
        "MemorySizeInMB": 4096,
        "IOPs": 0,
        "ThroughputInMB": 0.0,
        "OutgoingBandWidthInMbps": 0.0,
        "LastTest": null,
        "OrganizationName": "",
    })
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a validated, small, positive gap"
)]
fn rpo(gap: f64) -> u64 {
    gap.ceil() as u64
}

/// One `VpgApi` object.
pub(crate) fn vpg_row(world: &World, base: &str, vpg: usize, now: f64) -> Value {
    let g = &world.scenario.vpgs[vpg];
    let listed = world.listed_checkpoints(vpg, now);
    let earliest = listed.first().map(|cp| checkpoint_row(cp));
    let actual_history = listed.first().map_or(0, |cp| {
        let age = crate::time::secs_between(cp.time, world.clock.time_at(now)) / 60.0;
        minutes(age).min(g.journal_history_mins)
    });
    json!({
        "VpgIdentifier": g.id,
        "VpgName": g.name,
        "VpgDescription": "",
        "VpgType": 0,
        "Link": link(base, &format!("/v1/vpgs/{}", g.id), &g.id, "VpgApi"),
        "Zorg": null,
        "ServiceProfile": null,
        "Priority": 1,
        "VmsCount": g.vms.len(),
        "ProgressPercentage": 100,
        "ProvisionedStorageInMB": 40_960 * g.vms.len(),
        "UsedStorageInMB": 12_288 * g.vms.len(),
        "IOPs": 0,
        "ThroughputInMB": 0.0,
        "ActualRPO": rpo(g.timing.journal_gap),
        "ConfiguredRpoSeconds": 300,
        "LastTest": null,
        "ProtectedSiteName": g.protected_site,
        "ProtectedSite": site_link(world, base, &g.protected_site),
        "RecoverySiteName": g.recovery_site,
        "RecoverySite": site_link(world, base, &g.recovery_site),
        "Entities": { "Protected": g.profile.entity_type(), "Recovery": recovery_entity(world, vpg) },
        "Status": g.status.0,
        "StatusDescription": g.status.1,
        "SubStatus": g.sub_status.0,
        "SubStatusDescription": g.sub_status.1,
        "ActiveProcessesApi": {
            "RunningFailOverTestApi": world.test_stage(vpg, now).map(|stage| json!({ "Stage": stage })),
        },
        "BackupEnabled": false,
        "FailSafeHistory": { "ActualFailSafeHistory": 0, "ConfiguredFailSafeHistory": 0, "FailSafeDescription": "" },
        "HistoryStatusApi": {
            "ActualHistoryInMinutes": actual_history,
            "ConfiguredHistoryInMinutes": g.journal_history_mins,
            "EarliestCheckpoint": earliest,
        },
        "AlertStatus": 0,
    })
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped to the configured history"
)]
fn minutes(value: f64) -> u32 {
    value.clamp(0.0, f64::from(u32::MAX)).floor() as u32
}

/// One checkpoint row.
pub(crate) fn checkpoint_row(cp: &Checkpoint) -> Value {
    json!({
        "CheckpointIdentifier": cp.id.to_string(),
        "TimeStamp": format_utc_millis(cp.time),
        "Tag": cp.tag,
        "Type": 0,
    })
}

/// One task.
pub(crate) fn task(world: &World, base: &str, task: &Task, now: f64) -> Value {
    let (state, progress) = task.status(now);
    let completed = task
        .ended(now)
        .map(|end| format_utc(world.clock.time_at(end)));
    let vpgs: Vec<Value> = task
        .vpg
        .map(|v| {
            let id = &world.scenario.vpgs[v].id;
            link(base, &format!("/v1/vpgs/{id}"), id, "VpgApi")
        })
        .into_iter()
        .collect();
    let flrs: Vec<Value> = task
        .flr_session
        .as_ref()
        .map(|id| {
            link(
                base,
                &format!("/v1/flrs/{id}"),
                id,
                "FlrSessionInformationApi",
            )
        })
        .into_iter()
        .collect();
    json!({
        "TaskIdentifier": task.id,
        "Type": task.kind.wire(),
        "Status": { "State": state, "Progress": progress },
        "InitiatedBy": world.scenario.username,
        "Started": format_utc(world.clock.time_at(task.started)),
        "Completed": completed,
        "CompleteReason": if completed.is_some() { task.outcome.1.as_str() } else { "" },
        "IsCancellable": false,
        "RelatedEntities": {
            "Vpgs": vpgs,
            "Sites": [link(base, "/v1/localsite", &world.scenario.site_id, "LocalSiteApi")],
            "Hosts": [],
            "FlrSessions": flrs,
        },
        "Link": link(base, &format!("/v1/tasks/{}", task.id), &task.id, "TaskApi"),
        "Generation": 1,
    })
}
