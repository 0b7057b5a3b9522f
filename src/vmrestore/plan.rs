//! Which checkpoint a whole-VM rewind goes back to, and whether it may start: everything
//! here only reads, so a refusal leaves the ZVM as it was.

use anyhow::anyhow;

use crate::config::Config;
use crate::deadline::Deadline;
use crate::recover::{Point, search_journal};
use crate::zvm::{Checkpoint, Client, TaskState, Vm, Vpg, VpgRef};

/// How the checkpoint was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FoundBy {
    /// The id the audit trail recorded for the change, checked in Zerto's list by id.
    Trail,
    /// The change's tag in Zerto's list (nothing recorded in this trail).
    Tag,
    /// The checkpoint id given.
    Id,
}

impl FoundBy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Trail => "trail",
            Self::Tag => "tag",
            Self::Id => "id",
        }
    }
}

/// The VM, the VPG whose journal holds the point, and the checkpoint.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) vm: Vm,
    pub(crate) vpg: Vpg,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) found_by: FoundBy,
    /// The same change's checkpoints in the VM's other VPGs, not used.
    pub(crate) others: Vec<(VpgRef, Checkpoint)>,
}

/// What was asked for.
#[derive(Debug, Clone)]
pub(crate) struct Wanted<'a> {
    pub(crate) vm: &'a str,
    pub(crate) change: Option<&'a str>,
    pub(crate) checkpoint: Option<&'a str>,
    pub(crate) vpg: Option<&'a str>,
}

/// A refusal: nothing was started. The text says what and how to go on.
#[derive(Debug)]
pub(crate) struct Refusal(pub(crate) String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

fn refuse(text: String) -> anyhow::Error {
    anyhow!(Refusal(text))
}

/// Finds the VM, its VPG and checkpoint, and refuses what cannot start now. The partial plan
/// found before a refusal is kept in `found` for the trail.
pub(crate) fn plan(
    client: &Client,
    config: &Config,
    wanted: &Wanted<'_>,
    found: &mut Option<(Vm, Option<VpgRef>, Option<Checkpoint>)>,
    deadline: &Deadline,
) -> anyhow::Result<Plan> {
    let vm = crate::commands::zerto::find_vm(client, config, wanted.vm, deadline).map_err(|e| {
        refuse(format!(
            "{e:#}\nnothing was started; `rewind vms` lists the protected VMs"
        ))
    })?;
    *found = Some((vm.clone(), None, None));
    let vpgs: Vec<VpgRef> = match wanted.vpg {
        Some(name) => vec![
            vm.vpgs
                .iter()
                .find(|v| v.name.eq_ignore_ascii_case(name) || v.id == name)
                .cloned()
                .ok_or_else(|| {
                    refuse(format!(
                        "VM {} is not in VPG {name:?}; it is in {}",
                        vm.name,
                        vm.vpg_names()
                    ))
                })?,
        ],
        None => vm.vpgs.clone(),
    };
    let recorded = wanted
        .change
        .map(|change| recorded(config, change, &vm))
        .unwrap_or_default();
    let mut chosen: Option<(VpgRef, Checkpoint, FoundBy)> = None;
    let mut others = Vec::new();
    let mut gone = Vec::new();
    // The VPGs in the order the change recorded them, then the rest.
    let mut ordered: Vec<&VpgRef> = recorded
        .iter()
        .filter_map(|(name, _)| vpgs.iter().find(|v| v.name == *name))
        .collect();
    let rest: Vec<&VpgRef> = vpgs.iter().filter(|v| !ordered.contains(v)).collect();
    ordered.extend(rest);
    for vpg in ordered {
        let (point, by) = match (wanted.change, wanted.checkpoint) {
            (Some(change), _) => match recorded.iter().find(|(name, _)| *name == vpg.name) {
                Some((_, id)) => (Point::Checkpoint(id.clone()), FoundBy::Trail),
                None => (Point::Change(change.to_owned()), FoundBy::Tag),
            },
            (None, Some(id)) => (Point::Checkpoint(id.to_owned()), FoundBy::Id),
            (None, None) => return Err(refuse(String::from("no --change or --checkpoint"))),
        };
        let (hit, _) = search_journal(client, &vpg.id, &point, deadline)?;
        match (hit, &point) {
            (Some(cp), _) if chosen.is_none() => chosen = Some((vpg.clone(), cp, by)),
            (Some(cp), _) => others.push((vpg.clone(), cp)),
            (None, Point::Checkpoint(id)) if by == FoundBy::Trail => {
                gone.push(format!("{id} in VPG {}", vpg.name));
            }
            (None, _) => {}
        }
    }
    let Some((vpg_ref, checkpoint, found_by)) = chosen else {
        return Err(refuse(not_found(&vm, wanted, &gone)));
    };
    *found = Some((vm.clone(), Some(vpg_ref.clone()), Some(checkpoint.clone())));
    let vpg = client.vpg(&vpg_ref.id, deadline)?;
    if let Some(why) = vpg.not_recoverable() {
        return Err(refuse(format!(
            "{why}: Zerto recovers a VM only from a VPG meeting its SLA and not syncing; nothing was started"
        )));
    }
    if let Some(stage) = &vpg.running_test {
        return Err(refuse(format!(
            "a failover test of VPG {} is running (stage {stage}); it is left alone and nothing was started: stop it in Zerto first",
            vpg.name
        )));
    }
    if let Some(task) = running_recovery(client, &vpg.id, deadline) {
        return Err(refuse(format!(
            "{task} is running in VPG {}; it is left alone and nothing was started",
            vpg.name
        )));
    }
    Ok(Plan {
        vm,
        vpg,
        checkpoint,
        found_by,
        others,
    })
}

/// The refusal for a point found in no VPG.
fn not_found(vm: &Vm, wanted: &Wanted<'_>, gone: &[String]) -> String {
    let list = format!("`rewind checkpoints {}` lists its checkpoints", vm.name);
    if !gone.is_empty() {
        return format!(
            "the checkpoint pinned for change {} on VM {} (checkpoint {}, in the audit trail) has left the journal: it is older than the journal's history; nothing was started; {list}",
            wanted.change.unwrap_or_default(),
            vm.name,
            gone.join(", ")
        );
    }
    match (wanted.change, wanted.checkpoint) {
        (Some(change), _) => format!(
            "no checkpoint of VM {} was pinned for change {change} (none in the audit trail, none tagged for it in Zerto); nothing was started; {list}",
            vm.name
        ),
        (None, Some(id)) => format!(
            "VM {} has no checkpoint {id} in the journal of {}; nothing was started; {list}",
            vm.name,
            wanted.vpg.map_or_else(|| vm.vpg_names(), str::to_owned)
        ),
        (None, None) => String::from("no point to restore to"),
    }
}

/// The checkpoints the audit trail recorded for `change` on `vm`: (VPG name, id), in the
/// order recorded, once each VPG. An unreadable trail is nothing recorded.
fn recorded(config: &Config, change: &str, vm: &Vm) -> Vec<(String, String)> {
    let Ok(path) = config.hook.audit_path() else {
        return Vec::new();
    };
    let filter = crate::audit::Filter {
        change: Some(change),
        ..crate::audit::Filter::default()
    };
    let mut found: Vec<(String, String)> = Vec::new();
    for record in crate::audit::read(path, &filter).unwrap_or_default() {
        for cp in record.checkpoints {
            let ours = vm.vpgs.iter().any(|v| v.name == cp.vpg);
            if ours && !found.iter().any(|(vpg, _)| *vpg == cp.vpg) {
                found.push((cp.vpg, cp.id));
            }
        }
    }
    found
}

/// A recovery Zerto is running in the VPG, by its task: a restore or a failover test, or any
/// task of the VPG waiting for a person (a recovery before commit). A ZVM that does not list
/// its tasks is asked nothing more: it refuses a second restore itself.
fn running_recovery(client: &Client, vpg_id: &str, deadline: &Deadline) -> Option<String> {
    let tasks = client.tasks(deadline).ok()?;
    tasks
        .into_iter()
        .filter(|t| !t.state.is_terminal() && t.vpg_ids.iter().any(|id| id == vpg_id))
        .find(|t| {
            let kind = t.kind.as_deref().unwrap_or_default().to_ascii_lowercase();
            t.state == TaskState::WaitingForUserInput
                || ["restore", "failover", "move"]
                    .iter()
                    .any(|w| kind.contains(w))
        })
        .map(|t| {
            format!(
                "Zerto task {} ({}, {})",
                t.id.as_deref().unwrap_or("?"),
                t.kind.as_deref().unwrap_or("unknown type"),
                t.state
            )
        })
}
