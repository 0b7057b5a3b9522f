//! The simulated ZVM's state: inventory, journals (checkpoints), tagged-checkpoint inserts and
//! tasks, evolving on a [`Clock`].
//!
//! Nothing runs in the background. Every request first calls [`World::advance`], which
//! materialises, in time order, every event that has become due since the last call: periodic
//! checkpoints every journal gap, and tagged checkpoints at their stamp time. Task states are
//! read off the clock. Tests drive it with injected sim seconds.

use std::time::SystemTime;

use super::Stats;
use super::auth::Auth;
use super::clock::Clock;
use super::faults::{FailState, FaultSet, InsertFault};
use super::flr::Flr;
use super::guest::GuestFiles;
use super::ids;
use super::scenario::Scenario;

/// Task states on the wire.
pub(crate) const IN_PROGRESS: u8 = 1;
pub(crate) const WAITING_FOR_USER_INPUT: u8 = 2;
pub(crate) const FAILED: u8 = 4;
pub(crate) const STOPPED: u8 = 5;
pub(crate) const COMPLETED: u8 = 6;

/// The reason a concurrent checkpoint operation gives, like the live ZVM's second insert.
pub(crate) const BUSY_REASON: &str =
    "Cannot insert a tagged checkpoint: another checkpoint operation is in progress on this VPG";

/// One journal entry.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoint {
    pub(crate) id: u64,
    /// Position in the global order of checkpoints and guest-file writes.
    pub(crate) seq: u64,
    /// Sim seconds after the start at which it was written.
    pub(crate) at: f64,
    /// The reported `TimeStamp`.
    pub(crate) time: SystemTime,
    pub(crate) tag: Option<String>,
    /// When it shows up in the list (sim seconds); `None` = never.
    pub(crate) listed_from: Option<f64>,
}

impl Checkpoint {
    pub(crate) fn listed(&self, now: f64) -> bool {
        self.listed_from.is_some_and(|from| from <= now)
    }
}

#[derive(Debug, Default)]
struct Journal {
    checkpoints: Vec<Checkpoint>,
    /// Index of the next periodic checkpoint (at `k * journal_gap`).
    next_periodic: u64,
}

/// What a task does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskKind {
    InsertTaggedCp,
    FlrJournalMount,
    FlrJournalUnmount,
    RestoreVm,
    RestoreVmCommit,
    RestoreVmRollback,
    FailoverTest,
    StopFailoverTest,
}

impl TaskKind {
    /// Every kind, as `GET /v1/tasks/types` lists them.
    pub(crate) const ALL: [TaskKind; 8] = [
        TaskKind::InsertTaggedCp,
        TaskKind::FlrJournalMount,
        TaskKind::FlrJournalUnmount,
        TaskKind::RestoreVm,
        TaskKind::RestoreVmCommit,
        TaskKind::RestoreVmRollback,
        TaskKind::FailoverTest,
        TaskKind::StopFailoverTest,
    ];

    pub(crate) fn wire(self) -> &'static str {
        match self {
            TaskKind::InsertTaggedCp => "InsertTaggedCP",
            TaskKind::FlrJournalMount => "FlrJournalMount",
            TaskKind::FlrJournalUnmount => "FlrJournalUnmount",
            TaskKind::RestoreVm => "RestoreVm",
            TaskKind::RestoreVmCommit => "RestoreVmCommit",
            TaskKind::RestoreVmRollback => "RestoreVmRollback",
            TaskKind::FailoverTest => "FailOverTest",
            TaskKind::StopFailoverTest => "StopFailOverTest",
        }
    }
}

/// A ZVM task: runs from `started` until `ends` (never, when `None`), then has `outcome`.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub(crate) id: String,
    pub(crate) kind: TaskKind,
    pub(crate) started: f64,
    pub(crate) ends: Option<f64>,
    /// Terminal state and CompleteReason once ended.
    pub(crate) outcome: (u8, String),
    pub(crate) vpg: Option<usize>,
    pub(crate) flr_session: Option<String>,
    /// From then until it ends, the task waits in WaitingForUserInput (a restore ready for
    /// commit, on an appliance that keeps its start task open).
    pub(crate) waits_from: Option<f64>,
}

impl Task {
    /// `(State, Progress)` at `now`.
    pub(crate) fn status(&self, now: f64) -> (u8, u8) {
        match self.ends {
            Some(end) if now >= end => (
                self.outcome.0,
                if self.outcome.0 == COMPLETED { 100 } else { 0 },
            ),
            _ if self.waits_from.is_some_and(|from| now >= from) => (WAITING_FOR_USER_INPUT, 100),
            Some(end) if end > self.started => {
                let done = ((now - self.started) / (end - self.started)).clamp(0.0, 0.99);
                (IN_PROGRESS, progress_percent(done))
            }
            None if self.waits_from.is_some() => {
                let until = self.waits_from.unwrap_or(self.started);
                let span = (until - self.started).max(1.0);
                let done = ((now - self.started) / span).clamp(0.0, 0.99);
                (IN_PROGRESS, progress_percent(done))
            }
            _ => (IN_PROGRESS, 0),
        }
    }

    /// When it ended, if it has.
    pub(crate) fn ended(&self, now: f64) -> Option<f64> {
        self.ends.filter(|&end| now >= end)
    }
}

fn progress_percent(fraction: f64) -> u8 {
    let mut percent = 0_u8;
    while percent < 99 && f64::from(percent + 1) <= fraction * 100.0 {
        percent += 1;
    }
    percent
}

/// One tagged-checkpoint insert request.
#[derive(Debug, Clone)]
pub(crate) struct Insert {
    pub(crate) vpg: usize,
    pub(crate) tag: String,
    pub(crate) task: usize,
    pub(crate) received: f64,
    pub(crate) received_at: std::time::Instant,
    /// When its checkpoint is written, when it will succeed.
    pub(crate) stamp_at: Option<f64>,
    pub(crate) listed_at: Option<f64>,
    pub(crate) checkpoint: Option<u64>,
}

/// An insert as reported by the simulator's own API.
#[derive(Debug, Clone)]
pub(crate) struct InsertView {
    pub(crate) vpg_name: String,
    pub(crate) vpg_id: String,
    pub(crate) tag: String,
    pub(crate) task_id: String,
    pub(crate) received: f64,
    pub(crate) received_at: std::time::Instant,
    pub(crate) listed: Option<f64>,
    pub(crate) state: u8,
    pub(crate) checkpoint_id: Option<String>,
}

/// The name of a task state.
pub(crate) fn state_name(state: u8) -> &'static str {
    match state {
        IN_PROGRESS => "InProgress",
        WAITING_FOR_USER_INPUT => "WaitingForUserInput",
        FAILED => "Failed",
        STOPPED => "Stopped",
        COMPLETED => "Completed",
        _ => "Unknown",
    }
}

/// The simulated ZVM.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) scenario: Scenario,
    pub(crate) clock: Clock,
    journals: Vec<Journal>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) inserts: Vec<Insert>,
    pub(crate) faults: FaultSet,
    pub(crate) files: Vec<GuestFiles>,
    pub(crate) flr: Flr,
    /// Journal VM restores, oldest first.
    pub(crate) restores: Vec<super::restore::Restore>,
    /// Failover tests, oldest first.
    pub(crate) failover_tests: Vec<super::restore::FailoverTest>,
    /// Each VM's content marker over time: `(sequence, marker)`, oldest first.
    pub(crate) markers: Vec<Vec<(u64, u64)>>,
    pub(crate) auth: Auth,
    pub(crate) stats: Stats,
    /// Until when a `retry-after` answer asked clients to wait (real time).
    pub(crate) retry_after_until: Option<std::time::Instant>,
    next_checkpoint: u64,
    next_seq: u64,
    next_task: u64,
    processed: f64,
}

impl World {
    /// A world at the start of `scenario`: guest files seeded, journals holding their history.
    pub(crate) fn new(scenario: Scenario, clock: Clock) -> World {
        let mut faults = FaultSet::default();
        for fault in &scenario.faults {
            faults.add(fault.clone());
        }
        let seeded = clock.start_offset(-86_400.0);
        let files = scenario
            .vms
            .iter()
            .map(|vm| {
                let mut files = GuestFiles::new(vm.guest_os);
                for (path, text) in &vm.files {
                    // Paths were checked when the scenario was validated.
                    let _ = files.write(path, text.as_bytes(), 0, seeded);
                }
                files
            })
            .collect();
        let markers = vec![Vec::new(); scenario.vms.len()];
        let mut world = World {
            restores: Vec::new(),
            failover_tests: Vec::new(),
            markers,
            journals: scenario
                .vpgs
                .iter()
                .map(|_| Journal {
                    checkpoints: Vec::new(),
                    next_periodic: 1,
                })
                .collect(),
            scenario,
            clock,
            tasks: Vec::new(),
            inserts: Vec::new(),
            faults,
            files,
            flr: Flr::default(),
            auth: Auth::new(),
            stats: Stats::default(),
            retry_after_until: None,
            next_checkpoint: 1001,
            next_seq: 1,
            next_task: 1,
            processed: 0.0,
        };
        for vpg in 0..world.scenario.vpgs.len() {
            let gap = world.scenario.vpgs[vpg].timing.journal_gap;
            for i in (0..world.scenario.vpgs[vpg].history_checkpoints).rev() {
                let at = -f64::from(i) * gap;
                let time = world.clock.start_offset(at);
                world.write_checkpoint(vpg, at, time, None, Some(at));
            }
        }
        world
    }

    /// The next sequence number (orders checkpoints and guest-file writes).
    pub(crate) fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    fn write_checkpoint(
        &mut self,
        vpg: usize,
        at: f64,
        time: SystemTime,
        tag: Option<String>,
        listed_from: Option<f64>,
    ) -> u64 {
        let id = self.next_checkpoint;
        self.next_checkpoint += 1;
        let seq = self.take_seq();
        self.journals[vpg].checkpoints.push(Checkpoint {
            id,
            seq,
            at,
            time,
            tag,
            listed_from,
        });
        id
    }

    /// Materialises every event due by `now` (sim seconds), in time order.
    pub(crate) fn advance(&mut self, now: f64) {
        if now < self.processed {
            return;
        }
        let frozen = self.clock.frozen();
        if !frozen {
            self.skip_expired_periodics(now);
        }
        loop {
            let stamp = self
                .inserts
                .iter()
                .enumerate()
                .filter(|(_, ins)| ins.checkpoint.is_none())
                .filter_map(|(i, ins)| ins.stamp_at.filter(|&at| at <= now).map(|at| (at, i)))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let periodic = if frozen {
                None
            } else {
                (0..self.journals.len())
                    .map(|v| (self.periodic_at(v), v))
                    .filter(|&(at, _)| at <= now)
                    .min_by(|a, b| a.0.total_cmp(&b.0))
            };
            match (stamp, periodic) {
                (Some((at, i)), Some((p_at, _))) if at <= p_at => self.stamp(i, at),
                (Some((at, i)), None) => self.stamp(i, at),
                (_, Some((at, v))) => {
                    self.journals[v].next_periodic += 1;
                    let time = self.clock.start_offset(at);
                    self.write_checkpoint(v, at, time, None, Some(at));
                }
                (None, None) => break,
            }
        }
        self.processed = now;
        self.settle_restores(now);
        if !frozen {
            for (v, journal) in self.journals.iter_mut().enumerate() {
                let cutoff = now - self.scenario.vpgs[v].journal_history_secs();
                journal.checkpoints.retain(|cp| cp.at >= cutoff);
            }
        }
    }

    fn periodic_at(&self, vpg: usize) -> f64 {
        #[expect(
            clippy::cast_precision_loss,
            reason = "checkpoint counts stay far below 2^52"
        )]
        let k = self.journals[vpg].next_periodic as f64;
        k * self.scenario.vpgs[vpg].timing.journal_gap
    }

    /// After a long idle stretch, jumps over periodic checkpoints that would already have
    /// dropped out of the journal instead of writing and discarding them one by one.
    fn skip_expired_periodics(&mut self, now: f64) {
        for v in 0..self.journals.len() {
            let spec = &self.scenario.vpgs[v];
            let cutoff = now - spec.journal_history_secs();
            if self.periodic_at(v) < cutoff {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "positive and bounded by the elapsed time"
                )]
                let first_kept = (cutoff / spec.timing.journal_gap).ceil() as u64;
                self.journals[v].next_periodic = first_kept.max(self.journals[v].next_periodic);
            }
        }
    }

    fn stamp(&mut self, insert: usize, at: f64) {
        let ins = &self.inserts[insert];
        let (vpg, tag, received, listed_at) =
            (ins.vpg, ins.tag.clone(), ins.received, ins.listed_at);
        let offset = self.scenario.vpgs[vpg].timing.stamp_offset;
        let time = self.clock.stamp_time(received, offset);
        let id = self.write_checkpoint(vpg, at, time, Some(tag), listed_at);
        self.inserts[insert].checkpoint = Some(id);
    }

    /// Gives a checkpoint of a VPG a new tag (Zerto tags a tested checkpoint when the test
    /// stops, on some versions).
    pub(crate) fn retag(&mut self, vpg: usize, checkpoint: u64, tag: &str) {
        if let Some(cp) = self.journals[vpg]
            .checkpoints
            .iter_mut()
            .find(|cp| cp.id == checkpoint)
        {
            cp.tag = Some(tag.to_owned());
        }
    }

    /// The checkpoints of a VPG listed at `now`, oldest first.
    pub(crate) fn listed_checkpoints(&self, vpg: usize, now: f64) -> Vec<&Checkpoint> {
        let mut rows: Vec<&Checkpoint> = self.journals[vpg]
            .checkpoints
            .iter()
            .filter(|cp| cp.listed(now))
            .collect();
        rows.sort_by(|a, b| a.time.cmp(&b.time).then(a.id.cmp(&b.id)));
        rows
    }

    /// A checkpoint of a VPG by id, if it is listed at `now`.
    pub(crate) fn listed_checkpoint(&self, vpg: usize, id: &str, now: f64) -> Option<&Checkpoint> {
        self.journals[vpg]
            .checkpoints
            .iter()
            .find(|cp| cp.id.to_string() == id.trim() && cp.listed(now))
    }

    /// Records a new content of a guest file of the VM a reference (name or id) denotes, at
    /// `now`: checkpoints written from now on see it, earlier ones do not.
    pub(crate) fn write_guest_file(
        &mut self,
        vm: &str,
        path: &str,
        bytes: &[u8],
        now: f64,
    ) -> Result<(), String> {
        let index = match self.scenario.vm_matches(vm).as_slice() {
            [one] => *one,
            [] => return Err(format!("no VM named {vm:?}")),
            many => return Err(format!("{vm:?} names {} VMs; use the VM's id", many.len())),
        };
        self.advance(now);
        let seq = self.take_seq();
        let written = self.clock.time_at(now);
        self.files[index].write(path, bytes, seq, written)
    }

    /// Starts a task; returns its index.
    pub(crate) fn start_task(
        &mut self,
        kind: TaskKind,
        now: f64,
        ends: Option<f64>,
        outcome: (u8, String),
    ) -> usize {
        let n = self.next_task;
        self.next_task += 1;
        let id = format!(
            "{}.{}",
            ids::guid("task", &n.to_string()),
            self.scenario.site_id
        );
        self.tasks.push(Task {
            id,
            kind,
            started: now,
            ends,
            outcome,
            vpg: None,
            flr_session: None,
            waits_from: None,
        });
        self.tasks.len() - 1
    }

    /// Handles `POST /v1/vpgs/{id}/checkpoints` at `now`; returns the task index.
    pub(crate) fn insert_tagged(
        &mut self,
        vpg: usize,
        tag: &str,
        now: f64,
        received_at: std::time::Instant,
    ) -> usize {
        self.advance(now);
        let spec = &self.scenario.vpgs[vpg];
        let timing = spec.timing;
        let (name, id) = (spec.name.clone(), spec.id.clone());
        let is_vpg = |r: &str| r.eq_ignore_ascii_case(&name) || r.eq_ignore_ascii_case(&id);
        let busy = self
            .inserts
            .iter()
            .any(|ins| ins.vpg == vpg && self.tasks[ins.task].ended(now).is_none());
        let forced = if busy {
            Some(InsertFault::Busy)
        } else {
            self.faults.insert(is_vpg)
        };
        let never_listed = self.faults.tag_never_listed(is_vpg);
        let (ends, outcome, succeeds) = match forced {
            None => (now + timing.task, (COMPLETED, String::new()), true),
            Some(InsertFault::Busy) => (now, (FAILED, BUSY_REASON.to_owned()), false),
            Some(InsertFault::Fail { state, reason }) => {
                let code = if state == FailState::Stopped {
                    STOPPED
                } else {
                    FAILED
                };
                (now + timing.task, (code, reason), false)
            }
        };
        let task = self.start_task(TaskKind::InsertTaggedCp, now, Some(ends), outcome);
        self.tasks[task].vpg = Some(vpg);
        self.inserts.push(Insert {
            vpg,
            tag: tag.to_owned(),
            task,
            received: now,
            received_at,
            stamp_at: succeeds.then_some(now + timing.stamp_offset),
            listed_at: (succeeds && !never_listed).then_some(now + timing.tag_latency),
            checkpoint: None,
        });
        self.advance(now);
        task
    }

    /// The inserts as seen at `now`.
    pub(crate) fn insert_views(&self, now: f64) -> Vec<InsertView> {
        self.inserts
            .iter()
            .map(|ins| {
                let spec = &self.scenario.vpgs[ins.vpg];
                let task = &self.tasks[ins.task];
                InsertView {
                    vpg_name: spec.name.clone(),
                    vpg_id: spec.id.clone(),
                    tag: ins.tag.clone(),
                    task_id: task.id.clone(),
                    received: ins.received,
                    received_at: ins.received_at,
                    listed: ins.listed_at.filter(|&at| at <= now),
                    state: task.status(now).0,
                    checkpoint_id: ins.checkpoint.map(|id| id.to_string()),
                }
            })
            .collect()
    }

    /// Index of the VPG with this id (any case).
    pub(crate) fn vpg_by_id(&self, id: &str) -> Option<usize> {
        self.scenario
            .vpgs
            .iter()
            .position(|vpg| vpg.id.eq_ignore_ascii_case(id))
    }

    /// Index of the VPG with this name (any case).
    pub(crate) fn vpg_by_name(&self, name: &str) -> Option<usize> {
        self.scenario
            .vpgs
            .iter()
            .position(|vpg| vpg.name.eq_ignore_ascii_case(name))
    }

    /// Index of the VM with this id (any case).
    pub(crate) fn vm_by_id(&self, id: &str) -> Option<usize> {
        self.scenario
            .vms
            .iter()
            .position(|vm| vm.id.eq_ignore_ascii_case(id))
    }

    /// The VPGs protecting a VM, in scenario order.
    pub(crate) fn vpgs_of(&self, vm: usize) -> Vec<usize> {
        (0..self.scenario.vpgs.len())
            .filter(|&v| self.scenario.vpgs[v].vms.contains(&vm))
            .collect()
    }

    /// Index of a task by id (any case).
    pub(crate) fn task_by_id(&self, id: &str) -> Option<usize> {
        self.tasks
            .iter()
            .position(|task| task.id.eq_ignore_ascii_case(id))
    }
}

impl super::scenario::VpgSpec {
    pub(crate) fn journal_history_secs(&self) -> f64 {
        f64::from(self.journal_history_mins) * 60.0
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::sim::faults::Fault;

    const SCENARIO: &str = r#"
        start = "2026-01-05T10:00:00Z"
        username = "u"
        password = "p"
        [[vm]]
        name = "a"
        guest_os = "linux"
        [[vpg]]
        name = "fast"
        profile = "vsphere"
        vms = ["a"]
        history_checkpoints = 3
        [[vpg]]
        name = "cloud"
        profile = "aws"
        vms = ["a"]
        history_checkpoints = 2
    "#;

    fn world(frozen: bool) -> World {
        let scenario = Scenario::from_toml(SCENARIO, "t").expect("valid");
        let start = scenario.start.expect("start set");
        World::new(scenario, Clock::new(Instant::now(), start, 1.0, frozen))
    }

    fn times(world: &World, vpg: usize, now: f64) -> Vec<String> {
        world
            .listed_checkpoints(vpg, now)
            .iter()
            .map(|cp| crate::time::format_utc(cp.time))
            .collect()
    }

    #[test]
    fn history_is_seeded_before_the_start() {
        let w = world(false);
        assert_eq!(
            times(&w, 0, 0.0),
            [
                "2026-01-05T09:59:50Z",
                "2026-01-05T09:59:55Z",
                "2026-01-05T10:00:00Z"
            ]
        );
        assert_eq!(
            times(&w, 1, 0.0),
            ["2026-01-05T09:49:30Z", "2026-01-05T10:00:00Z"]
        );
        let ids: Vec<u64> = w
            .listed_checkpoints(0, 0.0)
            .iter()
            .map(|cp| cp.id)
            .collect();
        assert_eq!(ids, [1001, 1002, 1003]);
    }

    #[test]
    fn periodic_checkpoints_follow_the_journal_gap() {
        let mut w = world(false);
        w.advance(12.0);
        assert_eq!(
            times(&w, 0, 12.0)[3..],
            ["2026-01-05T10:00:05Z", "2026-01-05T10:00:10Z"]
        );
        assert_eq!(times(&w, 1, 12.0).len(), 2, "AWS writes one every 630 s");
        w.advance(631.0);
        assert_eq!(
            times(&w, 1, 631.0).last().map(String::as_str),
            Some("2026-01-05T10:10:30Z")
        );
    }

    #[test]
    fn the_journal_keeps_only_its_history() {
        let mut w = world(false);
        w.advance(10.0 * 3600.0);
        let rows = w.listed_checkpoints(0, 36_000.0);
        assert_eq!(
            rows.len(),
            721,
            "60 minutes of 5 s checkpoints, both ends included"
        );
        assert_eq!(
            crate::time::format_utc(rows[0].time),
            "2026-01-05T19:00:00Z"
        );
    }

    #[test]
    fn a_tagged_insert_completes_then_is_listed() {
        let mut w = world(false);
        let task = w.insert_tagged(0, "tag-1", 2.0, Instant::now());
        assert_eq!(w.tasks[task].status(2.5), (IN_PROGRESS, 50));
        assert_eq!(w.tasks[task].status(3.0), (COMPLETED, 100));
        w.advance(5.9);
        assert!(
            !w.listed_checkpoints(0, 5.9)
                .iter()
                .any(|cp| cp.tag.is_some()),
            "listed after 4 s"
        );
        w.advance(6.0);
        let tagged: Vec<_> = w
            .listed_checkpoints(0, 6.0)
            .into_iter()
            .filter(|cp| cp.tag.is_some())
            .collect();
        assert_eq!(tagged.len(), 1);
        assert_eq!(
            crate::time::format_utc(tagged[0].time),
            "2026-01-05T10:00:02Z"
        );
        assert_eq!(w.inserts[0].checkpoint, Some(tagged[0].id));
    }

    #[test]
    fn cloud_tags_are_stamped_after_the_request() {
        let mut w = world(false);
        w.insert_tagged(1, "t", 100.0, Instant::now());
        w.advance(227.0);
        assert!(
            w.listed_checkpoints(1, 227.0)
                .iter()
                .all(|cp| cp.tag.is_none())
        );
        w.advance(228.0);
        let rows = w.listed_checkpoints(1, 228.0);
        let tagged = rows
            .iter()
            .find(|cp| cp.tag.is_some())
            .expect("listed after 128 s");
        assert_eq!(
            crate::time::format_utc(tagged.time),
            "2026-01-05T10:02:10Z",
            "stamped 30 s after the request"
        );
    }

    #[test]
    fn back_to_back_inserts_fail_the_second() {
        let mut w = world(false);
        let first = w.insert_tagged(0, "one", 1.0, Instant::now());
        let second = w.insert_tagged(0, "two", 1.2, Instant::now());
        let other_vpg = w.insert_tagged(1, "three", 1.2, Instant::now());
        assert_eq!(w.tasks[second].status(1.2).0, FAILED);
        assert_eq!(w.tasks[second].outcome.1, BUSY_REASON);
        assert_eq!(w.tasks[first].status(5.0).0, COMPLETED);
        assert_eq!(w.tasks[other_vpg].status(5.0).0, COMPLETED);
        let third = w.insert_tagged(0, "four", 2.5, Instant::now());
        assert_eq!(
            w.tasks[third].status(4.0).0,
            COMPLETED,
            "free again once the first ended"
        );
    }

    #[test]
    fn faults_shape_inserts() {
        let mut w = world(false);
        w.faults.add(Fault::InsertBusy {
            vpg: "FAST".into(),
            times: 1,
        });
        w.faults.add(Fault::TagNeverListed { vpg: "fast".into() });
        let busy = w.insert_tagged(0, "a", 1.0, Instant::now());
        assert_eq!(w.tasks[busy].status(1.0), (FAILED, 0));
        let ok = w.insert_tagged(0, "b", 2.0, Instant::now());
        w.advance(100.0);
        assert_eq!(w.tasks[ok].status(100.0).0, COMPLETED);
        assert!(w.inserts[1].checkpoint.is_some(), "written");
        assert!(
            w.listed_checkpoints(0, 100.0)
                .iter()
                .all(|cp| cp.tag.is_none()),
            "never listed"
        );
        w.faults.clear();
        w.faults.add(Fault::InsertFails {
            vpg: "cloud".into(),
            state: FailState::Stopped,
            reason: "nope".into(),
        });
        let stopped = w.insert_tagged(1, "c", 101.0, Instant::now());
        assert_eq!(w.tasks[stopped].status(200.0), (STOPPED, 0));
        assert_eq!(w.tasks[stopped].outcome.1, "nope");
    }

    #[test]
    fn a_frozen_clock_reports_the_start_and_writes_no_periodics() {
        let mut w = world(true);
        w.insert_tagged(1, "t", 10.0, Instant::now());
        w.advance(5000.0);
        assert_eq!(times(&w, 0, 5000.0).len(), 3);
        let rows = w.listed_checkpoints(1, 5000.0);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            crate::time::format_utc(rows[2].time),
            "2026-01-05T10:00:30Z"
        );
        assert_eq!(rows[2].tag.as_deref(), Some("t"));
    }

    #[test]
    fn progress_is_a_whole_percentage_below_100_while_running() {
        assert_eq!(progress_percent(0.0), 0);
        assert_eq!(progress_percent(0.505), 50);
        assert_eq!(progress_percent(5.0), 99);
    }
}
