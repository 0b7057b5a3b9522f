//! Whole-VM recovery in the simulator: journal VM restore (`/v1/vms/{id}/Restore`,
//! `RestoreCommit`, `RestoreRollback`) and failover test (`/v1/vpgs/{id}/FailoverTest`,
//! `FailoverTestStop`).
//!
//! Each VM carries a content marker, a number standing for everything on its disks: a change
//! bumps it ([`World::bump_marker`]), a checkpoint remembers the marker it saw (the newest
//! written before it, by the same sequence as guest files), a restore ready for commit shows
//! the checkpoint's marker, a commit keeps it and a rollback puts back the marker from before.
//! A failover test builds test VMs at the recovery site and never touches the marker.
//!
//! A restore's start task runs [`RESTORE_SECS`], then completes at "ready for commit", or
//! with a `restore-waits-for-commit` fault sits in state 2 until a commit or rollback. A
//! commit policy of Rollback (0) or Commit (1) applies itself when the restore's wait runs
//! out after it is ready (0 s: at once); None (2) waits for ever.

use serde_json::Value;

use super::faults::Fault;
use super::http::{Request, Response};
use super::routes::field;
use super::state::{COMPLETED, FAILED, STOPPED, TaskKind, World};

/// Sim seconds from a restore request until the VM is ready for commit.
pub(crate) const RESTORE_SECS: f64 = 30.0;
/// Sim seconds a commit or rollback runs.
pub(crate) const DECISION_SECS: f64 = 10.0;
/// Sim seconds until a failover test's VMs are up.
pub(crate) const TEST_START_SECS: f64 = 20.0;
/// Sim seconds a failover test takes to stop.
pub(crate) const TEST_STOP_SECS: f64 = 10.0;

/// What ended a restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Committed,
    RolledBack,
    Failed,
}

/// One journal VM restore.
#[derive(Debug, Clone)]
pub(crate) struct Restore {
    pub(crate) vm: usize,
    pub(crate) vpg: usize,
    pub(crate) checkpoint: u64,
    /// The marker the checkpoint holds, and the one the VM held before.
    pub(crate) restored: u64,
    pub(crate) before: u64,
    pub(crate) task: usize,
    pub(crate) ready_at: f64,
    /// 0 Rollback, 1 Commit, 2 None.
    pub(crate) policy: u8,
    pub(crate) wait: f64,
    /// When it ended (or will), and how.
    pub(crate) ended: Option<(f64, Ending)>,
    /// The marker written at "ready".
    applied: bool,
}

impl Restore {
    /// Still running (restoring, or ready for commit) at `now`.
    pub(crate) fn running(&self, now: f64) -> bool {
        self.ended.is_none_or(|(at, _)| now < at)
    }
}

/// One failover test of a VPG.
#[derive(Debug, Clone)]
pub(crate) struct FailoverTest {
    pub(crate) vpg: usize,
    pub(crate) vms: Vec<usize>,
    pub(crate) checkpoint: u64,
    pub(crate) started: f64,
    pub(crate) up_at: f64,
    /// When the stop ends, once asked for.
    pub(crate) stops_at: Option<f64>,
}

impl FailoverTest {
    pub(crate) fn running(&self, now: f64) -> bool {
        self.stops_at.is_none_or(|at| now < at)
    }

    /// `RunningFailOverTestApi.Stage` at `now`.
    pub(crate) fn stage(&self, now: f64) -> &'static str {
        if self.stops_at.is_some() {
            "Stopping"
        } else if now < self.up_at {
            "Starting"
        } else {
            "Testing"
        }
    }
}

/// The whole-VM operations and every VM's marker, for `GET /_sim/whole-vm`.
pub(crate) fn view(world: &World, now: f64) -> Value {
    let vm_name = |vm: usize| world.scenario.vms[vm].name.clone();
    let vpg_name = |vpg: usize| world.scenario.vpgs[vpg].name.clone();
    let restores: Vec<Value> = world
        .restores
        .iter()
        .map(|r| {
            let state = match r.ended {
                Some((at, ending)) if now >= at => format!("{ending:?}"),
                _ if now >= r.ready_at => String::from("ReadyForCommit"),
                _ => String::from("Restoring"),
            };
            serde_json::json!({
                "vm": vm_name(r.vm), "vpg": vpg_name(r.vpg), "checkpoint": r.checkpoint.to_string(),
                "task": world.tasks[r.task].id, "state": state,
            })
        })
        .collect();
    let tests: Vec<Value> = world
        .failover_tests
        .iter()
        .map(|t| {
            serde_json::json!({
                "vpg": vpg_name(t.vpg),
                "vms": t.vms.iter().map(|&vm| vm_name(vm)).collect::<Vec<_>>(),
                "checkpoint": t.checkpoint.to_string(),
                "stage": if t.running(now) { t.stage(now) } else { "Stopped" },
            })
        })
        .collect();
    let markers: serde_json::Map<String, Value> = (0..world.scenario.vms.len())
        .map(|vm| (vm_name(vm), Value::from(world.marker(vm))))
        .collect();
    serde_json::json!({ "restores": restores, "failover_tests": tests, "markers": markers })
}

impl World {
    /// A change on a VM: its content marker moves on; returns the new one.
    pub(crate) fn bump_marker(&mut self, vm: usize, now: f64) -> u64 {
        self.advance(now);
        let next = self.markers[vm].iter().map(|m| m.1).max().unwrap_or(0) + 1;
        let seq = self.take_seq();
        self.markers[vm].push((seq, next));
        next
    }

    /// The VM's content marker now.
    pub(crate) fn marker(&self, vm: usize) -> u64 {
        self.markers[vm].last().map_or(0, |m| m.1)
    }

    /// The marker a checkpoint (by sequence number) holds of a VM.
    pub(crate) fn marker_at(&self, vm: usize, seq: u64) -> u64 {
        self.markers[vm]
            .iter()
            .take_while(|m| m.0 < seq)
            .last()
            .map_or(0, |m| m.1)
    }

    fn set_marker(&mut self, vm: usize, marker: u64) {
        let seq = self.take_seq();
        self.markers[vm].push((seq, marker));
    }

    /// Applies what has become due by `now`: restores reaching "ready" show the checkpoint's
    /// content, waits running out apply the commit policy, rollbacks put the content back.
    pub(crate) fn settle_restores(&mut self, now: f64) {
        for r in 0..self.restores.len() {
            let restore = self.restores[r].clone();
            if restore.ended.is_none() && !restore.applied && now >= restore.ready_at {
                self.restores[r].applied = true;
                self.set_marker(restore.vm, restore.restored);
            }
            let restore = self.restores[r].clone();
            if restore.ended.is_none() && restore.applied && restore.policy != 2 {
                let due = restore.ready_at + restore.wait;
                if now >= due {
                    let ending = if restore.policy == 1 {
                        Ending::Committed
                    } else {
                        Ending::RolledBack
                    };
                    self.end_restore(r, due, ending);
                }
            }
        }
    }

    /// Ends restore `r` at `at`: the content goes back on a rollback; a start task still
    /// running (or waiting for input) ends.
    fn end_restore(&mut self, r: usize, at: f64, ending: Ending) {
        let restore = self.restores[r].clone();
        self.restores[r].ended = Some((at, ending));
        if ending == Ending::RolledBack && restore.applied {
            self.set_marker(restore.vm, restore.before);
        }
        let task = &mut self.tasks[restore.task];
        if task.ends.is_none_or(|end| end > at) {
            task.ends = Some(at);
            task.outcome = match ending {
                Ending::Committed => (COMPLETED, String::new()),
                Ending::RolledBack => (STOPPED, String::from("The restore was rolled back.")),
                Ending::Failed => (FAILED, String::from("The restore failed.")),
            };
        }
    }

    fn running_restore_of(&self, vm: usize, now: f64) -> Option<&Restore> {
        self.restores
            .iter()
            .rev()
            .find(|r| r.vm == vm && r.running(now))
    }

    fn running_test_of(&self, vpg: usize, now: f64) -> Option<&FailoverTest> {
        self.failover_tests
            .iter()
            .find(|t| t.vpg == vpg && t.running(now))
    }

    /// The stage of the VPG's running failover test, if one runs.
    pub(crate) fn test_stage(&self, vpg: usize, now: f64) -> Option<&'static str> {
        self.running_test_of(vpg, now).map(|t| t.stage(now))
    }

    /// Why Zerto would recover nothing of this VPG now: initialising, or syncing (a bitmap
    /// sync excepted).
    fn unrecoverable(&self, vpg: usize) -> Option<String> {
        let spec = &self.scenario.vpgs[vpg];
        if spec.status.1.eq_ignore_ascii_case("Initializing") {
            return Some(format!("VPG '{}' is initializing.", spec.name));
        }
        let sub = &spec.sub_status.1;
        let lower = sub.to_ascii_lowercase();
        (lower.contains("sync") && lower != "bitmapsync")
            .then(|| format!("VPG '{}' is synchronizing ({sub}).", spec.name))
    }

    fn task_id(&self, task: usize) -> String {
        self.tasks[task].id.clone()
    }
}

/// `POST /v1/vms/{id}/Restore`.
pub(crate) fn restore(world: &mut World, request: &Request, vm_id: &str, now: f64) -> Response {
    if world
        .faults
        .appliance(|f| matches!(f, Fault::Restore500).then_some(()))
        .is_some()
    {
        return Response::message(500, "Object reference not set to an instance of an object.");
    }
    let body = match request.json() {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let Some(vm) = world.vm_by_id(vm_id) else {
        return Response::message(400, &format!("VM '{vm_id}' is not protected by any VPG."));
    };
    let text = |key: &str| match field(&body, key) {
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let Some(vpg) = text("vpgIdentifier").and_then(|id| world.vpg_by_id(&id)) else {
        return Response::message(400, "vpgIdentifier does not name a VPG.");
    };
    if !world.scenario.vpgs[vpg].vms.contains(&vm) {
        return Response::message(
            400,
            &format!(
                "VM '{vm_id}' is not protected by VPG '{}'.",
                world.scenario.vpgs[vpg].name
            ),
        );
    }
    let Some(checkpoint_id) = text("checkpointIdentifier") else {
        return Response::message(400, "checkpointIdentifier is required.");
    };
    let Some((checkpoint, seq)) = world
        .listed_checkpoint(vpg, &checkpoint_id, now)
        .map(|cp| (cp.id, cp.seq))
    else {
        return Response::message(
            400,
            &format!(
                "Checkpoint '{checkpoint_id}' is not in the journal of VPG '{}'.",
                world.scenario.vpgs[vpg].name
            ),
        );
    };
    if let Some(refusal) = busy(world, vm, vpg, now) {
        return refusal;
    }
    let number = |key: &str, default: u64| {
        field(&body, key)
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
            .unwrap_or(default)
    };
    let policy = u8::try_from(number("commitPolicy", 0).min(2)).unwrap_or(0);
    #[expect(
        clippy::cast_precision_loss,
        reason = "a wait in seconds, far below 2^52"
    )]
    let wait = number("timeToWaitBeforeContinueInSeconds", 0) as f64;
    let fails = world.faults.appliance(|f| match f {
        Fault::RestoreFails { reason } => Some(reason.clone()),
        _ => None,
    });
    let waits = world
        .faults
        .appliance(|f| matches!(f, Fault::RestoreWaitsForCommit).then_some(()))
        .is_some();
    let ready_at = now + RESTORE_SECS;
    let (ends, outcome) = match &fails {
        Some(reason) => (Some(ready_at), (FAILED, reason.clone())),
        None if waits => (None, (COMPLETED, String::new())),
        None => (Some(ready_at), (COMPLETED, String::new())),
    };
    let task = world.start_task(TaskKind::RestoreVm, now, ends, outcome);
    world.tasks[task].vpg = Some(vpg);
    if waits {
        world.tasks[task].waits_from = Some(ready_at);
    }
    let restored = world.marker_at(vm, seq);
    let before = world.marker(vm);
    world.restores.push(super::restore::Restore {
        vm,
        vpg,
        checkpoint,
        restored,
        before,
        task,
        ready_at,
        policy,
        wait,
        ended: fails.map(|_| (ready_at, Ending::Failed)),
        applied: false,
    });
    Response::json(200, &Value::from(world.task_id(task)))
}

/// Why no restore of `vm` from `vpg` can start now: the VPG cannot be recovered, or a
/// restore of the VM or a failover test of the VPG is running.
fn busy(world: &World, vm: usize, vpg: usize, now: f64) -> Option<Response> {
    if let Some(why) = world.unrecoverable(vpg) {
        return Some(Response::message(400, &why));
    }
    if let Some(running) = world.running_restore_of(vm, now) {
        return Some(Response::message(
            400,
            &format!(
                "A restore of VM '{}' is already in progress (task {}).",
                world.scenario.vms[vm].id,
                world.task_id(running.task)
            ),
        ));
    }
    world.running_test_of(vpg, now).map(|_| {
        Response::message(
            400,
            &format!(
                "A failover test of VPG '{}' is in progress.",
                world.scenario.vpgs[vpg].name
            ),
        )
    })
}

/// `POST /v1/vms/{id}/RestoreCommit` and `RestoreRollback`: the body may be the VPG id as a
/// bare JSON string, an object naming it, or nothing (a `restore-decision-no-body` fault
/// refuses any body).
pub(crate) fn decide(
    world: &mut World,
    request: &Request,
    vm_id: &str,
    commit: bool,
    now: f64,
) -> Response {
    let no_body = world
        .faults
        .appliance(|f| matches!(f, Fault::RestoreDecisionNoBody).then_some(()))
        .is_some();
    let empty = request.body.iter().all(u8::is_ascii_whitespace);
    if no_body && !empty {
        return Response::message(400, "The request is invalid: this action takes no body.");
    }
    if !empty && let Err(refusal) = request.json() {
        return refusal;
    }
    let Some(vm) = world.vm_by_id(vm_id) else {
        return Response::message(400, &format!("VM '{vm_id}' is not protected by any VPG."));
    };
    let Some(r) = world
        .restores
        .iter()
        .rposition(|r| r.vm == vm && r.running(now))
    else {
        return Response::message(
            400,
            &format!("There is no restore of VM '{vm_id}' to commit or roll back."),
        );
    };
    let restore = world.restores[r].clone();
    if commit && !restore.applied {
        return Response::message(
            400,
            &format!("The restore of VM '{vm_id}' is not ready for commit yet."),
        );
    }
    let (kind, ending) = if commit {
        (TaskKind::RestoreVmCommit, Ending::Committed)
    } else {
        (TaskKind::RestoreVmRollback, Ending::RolledBack)
    };
    let done = now + DECISION_SECS;
    let task = world.start_task(kind, now, Some(done), (COMPLETED, String::new()));
    world.tasks[task].vpg = Some(restore.vpg);
    world.end_restore(r, now, ending);
    Response::json(200, &Value::from(world.task_id(task)))
}

/// `POST /v1/vpgs/{id}/FailoverTest`.
pub(crate) fn test_start(world: &mut World, request: &Request, vpg: usize, now: f64) -> Response {
    let body = if request.body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match request.json() {
            Ok(body) => body,
            Err(refusal) => return refusal,
        }
    };
    let name = world.scenario.vpgs[vpg].name.clone();
    let checkpoint = match field(&body, "checkpointIdentifier") {
        None | Some(Value::Null) => world.listed_checkpoints(vpg, now).last().map(|cp| cp.id),
        Some(id) => {
            let id = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
            world.listed_checkpoint(vpg, &id, now).map(|cp| cp.id)
        }
    };
    let Some(checkpoint) = checkpoint else {
        return Response::message(
            400,
            &format!("The checkpoint is not in the journal of VPG '{name}'."),
        );
    };
    let mut vms = Vec::new();
    match field(&body, "vmIdentifiers") {
        None | Some(Value::Null) => vms.clone_from(&world.scenario.vpgs[vpg].vms),
        Some(Value::Array(ids)) => {
            for id in ids {
                let found = id
                    .as_str()
                    .and_then(|id| world.vm_by_id(id))
                    .filter(|vm| world.scenario.vpgs[vpg].vms.contains(vm));
                let Some(vm) = found else {
                    return Response::message(
                        400,
                        &format!("VM {id} is not protected by VPG '{name}'."),
                    );
                };
                vms.push(vm);
            }
        }
        Some(_) => return Response::message(400, "vmIdentifiers must be a list."),
    }
    if let Some(why) = world.unrecoverable(vpg) {
        return Response::message(400, &why);
    }
    if world.running_test_of(vpg, now).is_some() {
        return Response::message(
            400,
            &format!("A failover test of VPG '{name}' is already in progress."),
        );
    }
    if let Some(r) = world
        .restores
        .iter()
        .find(|r| r.vpg == vpg && r.running(now))
    {
        return Response::message(
            400,
            &format!(
                "A restore in VPG '{name}' is in progress (task {}).",
                world.task_id(r.task)
            ),
        );
    }
    let up_at = now + TEST_START_SECS;
    let task = world.start_task(
        TaskKind::FailoverTest,
        now,
        Some(up_at),
        (COMPLETED, String::new()),
    );
    world.tasks[task].vpg = Some(vpg);
    world.failover_tests.push(FailoverTest {
        vpg,
        vms,
        checkpoint,
        started: now,
        up_at,
        stops_at: None,
    });
    Response::json(200, &Value::from(world.task_id(task)))
}

/// `POST /v1/vpgs/{id}/FailoverTestStop`: powers the test VMs off and removes them; with a
/// `retag-on-test-stop` fault the tested checkpoint's tag becomes "Tested at <start>".
pub(crate) fn test_stop(world: &mut World, vpg: usize, now: f64) -> Response {
    let Some(t) = world
        .failover_tests
        .iter()
        .position(|t| t.vpg == vpg && t.running(now) && t.stops_at.is_none())
    else {
        return Response::message(
            400,
            &format!(
                "No failover test of VPG '{}' is in progress.",
                world.scenario.vpgs[vpg].name
            ),
        );
    };
    let done = now + TEST_STOP_SECS;
    world.failover_tests[t].stops_at = Some(done);
    let task = world.start_task(
        TaskKind::StopFailoverTest,
        now,
        Some(done),
        (COMPLETED, String::new()),
    );
    world.tasks[task].vpg = Some(vpg);
    let retag = world
        .faults
        .appliance(|f| matches!(f, Fault::RetagOnTestStop).then_some(()))
        .is_some();
    if retag {
        let test = world.failover_tests[t].clone();
        let started = crate::time::format_utc(world.clock.time_at(test.started));
        world.retag(vpg, test.checkpoint, &format!("Tested at {started}"));
    }
    Response::json(200, &Value::from(world.task_id(task)))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::sim::clock::Clock;
    use crate::sim::scenario::Scenario;

    fn world() -> World {
        let scenario = Scenario::lab();
        let start = crate::time::parse_utc("2026-01-05T10:00:00Z").expect("time");
        World::new(scenario, Clock::new(Instant::now(), start, 1.0, false))
    }

    fn post(body: &Value) -> Request {
        Request {
            method: "POST".into(),
            path: "/".into(),
            query: Vec::new(),
            headers: Vec::new(),
            body: if body.is_null() {
                Vec::new()
            } else {
                serde_json::to_vec(body).expect("json")
            },
        }
    }

    #[test]
    fn a_restore_shows_the_checkpoint_then_a_rollback_puts_the_change_back() {
        let mut w = world();
        let vm = w.vm_by_id(&w.scenario.vms[0].id.clone()).expect("vm");
        let vpg = w.vpgs_of(vm)[0];
        w.advance(10.0);
        let checkpoint = w.listed_checkpoints(vpg, 10.0).last().expect("cp").id;
        let broken = w.bump_marker(vm, 11.0);
        let vm_id = w.scenario.vms[vm].id.clone();
        let body = serde_json::json!({"vpgIdentifier": w.scenario.vpgs[vpg].id,
            "checkpointIdentifier": checkpoint.to_string(), "commitPolicy": 2});
        let answer = restore(&mut w, &post(&body), &vm_id, 12.0);
        assert_eq!(answer.status, 200);
        let again = restore(&mut w, &post(&body), &vm_id, 13.0);
        assert_eq!(again.status, 400, "one restore of a VM at a time");
        w.advance(12.0 + RESTORE_SECS);
        assert_eq!(w.marker(vm), 0, "ready: the checkpoint's content");
        let rollback = decide(&mut w, &post(&Value::Null), &vm_id, false, 50.0);
        assert_eq!(rollback.status, 200);
        assert_eq!(
            w.marker(vm),
            broken,
            "rolled back: the change is there again"
        );
    }

    #[test]
    fn a_rollback_policy_applies_itself_when_the_wait_runs_out() {
        let mut w = world();
        let vm = 0;
        let vpg = w.vpgs_of(vm)[0];
        let checkpoint = w.listed_checkpoints(vpg, 0.0).last().expect("cp").id;
        let broken = w.bump_marker(vm, 1.0);
        let vm_id = w.scenario.vms[vm].id.clone();
        let body = serde_json::json!({"vpgIdentifier": w.scenario.vpgs[vpg].id,
            "checkpointIdentifier": checkpoint, "commitPolicy": 0,
            "timeToWaitBeforeContinueInSeconds": 300});
        assert_eq!(restore(&mut w, &post(&body), &vm_id, 2.0).status, 200);
        w.advance(2.0 + RESTORE_SECS + 299.0);
        assert_eq!(w.marker(vm), 0);
        w.advance(2.0 + RESTORE_SECS + 300.0);
        assert_eq!(w.marker(vm), broken);
        assert!(w.running_restore_of(vm, 400.0).is_none());
    }

    #[test]
    fn a_failover_test_never_touches_the_vm() {
        let mut w = world();
        let vpg = w.vpgs_of(0)[0];
        let broken = w.bump_marker(0, 1.0);
        let start = test_start(&mut w, &post(&Value::Null), vpg, 2.0);
        assert_eq!(start.status, 200);
        assert_eq!(w.test_stage(vpg, 3.0), Some("Starting"));
        assert_eq!(w.test_stage(vpg, 2.0 + TEST_START_SECS), Some("Testing"));
        assert_eq!(
            test_start(&mut w, &post(&Value::Null), vpg, 30.0).status,
            400
        );
        assert_eq!(test_stop(&mut w, vpg, 40.0).status, 200);
        assert_eq!(w.test_stage(vpg, 40.0 + TEST_STOP_SECS), None);
        assert_eq!(w.marker(0), broken);
    }
}
