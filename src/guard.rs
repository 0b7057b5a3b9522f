//! The guard: a tagged checkpoint on every VPG that protects the VMs a call reaches,
//! confirmed as listed, under one deadline. Callers go through [`protect`], the one mutating
//! path (the hook, `rewind mcp`, `rewind guard`, the broker): it finds the VMs, runs [`guard`]
//! here or asks the broker to, and decides.
//!
//! The VPGs of all the VMs are taken as one set (a VPG protecting two of them is tagged once,
//! its tag naming both). For each VPG, in parallel: take the VPG's cross-process lock, note the newest checkpoint
//! that already exists, insert the tagged checkpoint (the answer is a task id, not a result),
//! poll the task to a terminal state, refuse unless it Completed, then poll the checkpoint
//! list until a row with our tag appears (a name Zerto lists cut short still holds the change
//! id, which comes first). Waits follow the VPG's journal cadence:
//! a vSphere-protected VPG lists a tag within seconds, an AWS-protected one after minutes.
//!
//! The caller watches through a [`Watch`]: each VPG's [`Phase`] as it changes, with the time
//! since the guard started and, while waiting for the listing, when the cadence predicts it.
//! The same watch may ask the guard to stop waiting ([`Watch::cancelled`]); a checkpoint
//! already inserted then stays in Zerto, and the VPG's result says so. The hook's watch shows
//! no phase: it only keeps [`Watch::step`]'s words for the watchdog's deny.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::deadline::Deadline;
use crate::lockfile;
use crate::tag::Tag;
use crate::zvm::{Checkpoint, Client, TaskState, Vm, Vpg, VpgRef, ZvmError};

mod helper;
mod protect;
pub(crate) use helper::serve;
pub use protect::Direct;
pub(crate) use protect::{Caller, Change, Protection, VpgProtection, for_request, protect};

/// How far back to look for the checkpoints that show a VPG's cadence.
const HISTORY_WINDOW: Duration = Duration::from_secs(30 * 60);
/// Journal gap assumed when the history shows none.
const DEFAULT_CADENCE: Duration = Duration::from_secs(5);

/// Where one VPG's guard is. Each is reported once, when the guard enters it (an insert
/// retried after a concurrent one elsewhere enters [`Phase::Inserting`] again).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Phase<'a> {
    /// Taking the VPG's turn, reading its recent checkpoints, sending the tagged insert.
    Inserting,
    /// Zerto accepted the insert; its task has not ended yet.
    Task { task_id: &'a str },
    /// The task completed; the tagged checkpoint is not listed yet.
    Listing {
        task_id: &'a str,
        /// The VPG's journal cadence, as its recent checkpoints show it.
        cadence: Duration,
        /// When the cadence predicts the listing, counted like [`Progress::elapsed`].
        expected: Duration,
    },
    /// Zerto lists the tagged checkpoint.
    Confirmed { checkpoint_id: &'a str },
    /// No confirmed checkpoint on this VPG.
    Failed { refusal: &'a Refusal },
}

/// One VPG's guard entering a [`Phase`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Progress<'a> {
    pub(crate) vpg: &'a VpgRef,
    pub(crate) phase: Phase<'a>,
    /// Time since the guard's deadline started.
    pub(crate) elapsed: Duration,
}

/// What watches a guard: told of each phase, from the guard's worker threads, and asked
/// between polls whether to go on.
pub(crate) trait Watch: Sync {
    /// A VPG's guard entered a phase. Must return quickly (the guard waits for it).
    fn progress(&self, event: &Progress<'_>);

    /// True when the caller no longer wants the answer (a cancelled MCP request, a client
    /// that left): the guard stops waiting at its next pause.
    fn cancelled(&self) -> bool {
        false
    }

    /// What [`protect`] is doing before or around the guard (looking the VMs up, asking the
    /// broker), in words.
    fn step(&self, _text: &str) {}

    /// A progress line of the broker's guard: by default said like a [`Watch::step`].
    fn relayed(&self, text: &str) {
        self.step(text);
    }
}

/// A watch that hands each step's words on, as the broker's progress lines (the phases
/// stay with the guard).
pub(crate) struct Relay<'a>(pub(crate) &'a (dyn Fn(&str) + Sync));

impl Watch for Relay<'_> {
    fn progress(&self, _event: &Progress<'_>) {}

    fn step(&self, text: &str) {
        (self.0)(text);
    }
}

/// The longest a guard sleeps without looking at [`Watch::cancelled`].
const CANCEL_CHECK: Duration = Duration::from_millis(100);

/// The outcome for one VPG.
#[derive(Debug)]
pub(crate) struct VpgOutcome {
    pub(crate) vpg: VpgRef,
    /// The names of the call's VMs this VPG protects.
    pub(crate) vms: Vec<String>,
    /// The tag inserted (or meant) for this VPG.
    pub(crate) tag: Tag,
    pub(crate) result: Result<Tagged, Refusal>,
}

/// A tagged checkpoint that Zerto lists.
#[derive(Debug, Clone)]
pub(crate) struct Tagged {
    pub(crate) checkpoint: Checkpoint,
    pub(crate) task_id: String,
    /// The newest checkpoint that existed before this guard inserted its own.
    pub(crate) previous: Option<Checkpoint>,
    /// The VPG's journal history, when Zerto says it: the checkpoint can be restored for
    /// about that long after it was taken.
    pub(crate) history: Option<Duration>,
    /// What the VPG's status says about the point, when it is not meeting its SLA.
    pub(crate) degraded: Option<String>,
}

/// What a VPG's status says about a checkpoint taken now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Health {
    /// Replicating as configured (or a status `rewind` does not know: the checkpoint still
    /// has to be confirmed as listed).
    Restorable,
    /// Tag it, but say this: the point may be listed late, or history is shorter.
    Degraded(String),
    /// No restorable point can come of it: do not tag.
    Unrestorable(String),
}

/// Zerto's VPG status names, by number (0–8).
const STATUSES: [&str; 9] = [
    "Initializing",
    "MeetingSLA",
    "NotMeetingSLA",
    "HistoryNotMeetingSLA",
    "RpoNotMeetingSLA",
    "FailingOver",
    "Moving",
    "Deleting",
    "Recovered",
];

/// Sub-statuses under which no restorable point can come of a checkpoint: initial or full
/// sync, configuration needed, errors, failing over, moving, deleting, replication paused,
/// journal or recovery storage errors.
const UNRESTORABLE_SUB_STATUSES: [(i64, &str); 24] = [
    (1, "InitialSync"),
    (2, "Creating"),
    (3, "VolumeInitialSync"),
    (7, "NeedsConfiguration"),
    (8, "Error"),
    (9, "EmptyProtectionGroup"),
    (10, "DisconnectedFromPeerNoRecoveryPoints"),
    (11, "FullSync"),
    (13, "VolumeFullSync"),
    (14, "FailingOverCommitting"),
    (15, "FailingOverBeforeCommit"),
    (16, "FailingOverRollingBack"),
    (17, "Promoting"),
    (18, "MovingCommitting"),
    (19, "MovingBeforeCommit"),
    (20, "MovingRollingBack"),
    (21, "Deleting"),
    (22, "PendingRemove"),
    (25, "ReplicationPausedUserInitiated"),
    (26, "ReplicationPausedSystemInitiated"),
    (27, "RecoveryStorageProfileError"),
    (29, "RollingBack"),
    (30, "RecoveryStorageError"),
    (31, "JournalStorageError"),
];

/// Reads a VPG's status and sub-status (by number, or by Zerto's words when the number is
/// missing).
pub(crate) fn health(vpg: &Vpg) -> Health {
    let status = vpg.status.or_else(|| {
        let text = vpg.health.as_deref()?;
        STATUSES
            .iter()
            .position(|s| s.eq_ignore_ascii_case(text.trim()))
            .and_then(|i| i64::try_from(i).ok())
    });
    let status_name = |n: i64| {
        usize::try_from(n)
            .ok()
            .and_then(|i| STATUSES.get(i).copied())
            .map(str::to_owned)
            .or_else(|| vpg.health.clone())
            .unwrap_or_else(|| format!("status {n}"))
    };
    let sub = vpg.sub_status.and_then(|n| {
        UNRESTORABLE_SUB_STATUSES
            .iter()
            .find(|(m, _)| *m == n)
            .map(|(_, name)| *name)
    });
    let sub = sub.or_else(|| {
        let text = vpg.sub_status_text.as_deref()?.trim();
        UNRESTORABLE_SUB_STATUSES
            .iter()
            .find(|(_, name)| name.eq_ignore_ascii_case(text))
            .map(|(_, name)| *name)
    });
    match (status, sub) {
        (Some(n @ (0 | 5 | 6 | 7 | 8)), sub) => Health::Unrestorable(match sub {
            Some(sub) => format!("{} ({sub})", status_name(n)),
            None => status_name(n),
        }),
        (status, Some(sub)) => Health::Unrestorable(match status {
            Some(n) => format!("{} ({sub})", status_name(n)),
            None => sub.to_owned(),
        }),
        (Some(2), None) => Health::Degraded(String::from(
            "NotMeetingSLA: the checkpoint may be listed late, and the journal history may be shorter than configured",
        )),
        (Some(3), None) => Health::Degraded(String::from(
            "HistoryNotMeetingSLA: the journal holds less history than configured, so the checkpoint may age out sooner",
        )),
        (Some(4), None) => Health::Degraded(String::from(
            "RpoNotMeetingSLA: replication is behind, so the checkpoint may be listed late",
        )),
        _ => Health::Restorable,
    }
}

/// Why a VPG has no confirmed checkpoint.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The insert task reached Failed or Stopped.
    TaskEnded {
        task_id: String,
        state: TaskState,
        reason: String,
    },
    /// The deadline came while the task was still running.
    TaskUnfinished { task_id: String, state: TaskState },
    /// The task Completed but the tag was not listed before the deadline.
    TagNotListed { task_id: String },
    /// The VPG's status says no restorable checkpoint can come of it now (initialising,
    /// syncing, failing over, moving, deleting, paused, storage errors): it was not tagged.
    Unrestorable { status: String },
    /// Another `rewind` process kept the VPG's lock until the deadline.
    Busy(String),
    /// The caller stopped waiting ([`Watch::cancelled`]). An insert already sent (its task
    /// named here) is not undone: the checkpoint it makes stays in Zerto.
    Cancelled { task_id: Option<String> },
    /// The ZVM could not be asked.
    Zvm(ZvmError),
    /// A bug in rewind (a guard thread panicked).
    Internal(String),
}

impl Refusal {
    /// The Zerto task of the insert this VPG's guard sent, when it sent one: a refusal after
    /// the insert still names the task that may yet make the checkpoint.
    pub(crate) fn task_id(&self) -> Option<&str> {
        match self {
            Self::TaskEnded { task_id, .. }
            | Self::TaskUnfinished { task_id, .. }
            | Self::TagNotListed { task_id }
            | Self::Cancelled {
                task_id: Some(task_id),
            } => Some(task_id),
            Self::Cancelled { task_id: None }
            | Self::Unrestorable { .. }
            | Self::Busy(_)
            | Self::Zvm(_)
            | Self::Internal(_) => None,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TaskEnded {
                task_id,
                state,
                reason,
            } => {
                write!(f, "checkpoint task {task_id} ended {state}")?;
                if reason.is_empty() {
                    f.write_str(" (Zerto gave no reason)")
                } else {
                    write!(f, ": {reason}")
                }
            }
            Self::TaskUnfinished { task_id, state } => write!(
                f,
                "checkpoint task {task_id} was still {state} when the budget ran out; check that task in Zerto"
            ),
            Self::TagNotListed { task_id } => write!(
                f,
                "the tagged checkpoint was not listed before the budget ran out; check Zerto task {task_id} before concluding the insert failed"
            ),
            Self::Unrestorable { status } => write!(
                f,
                "VPG status is {status}: no restorable checkpoint can be taken now, so it was not tagged"
            ),
            Self::Busy(detail) => f.write_str(detail),
            Self::Cancelled { task_id: None } => {
                f.write_str("cancelled before a checkpoint was inserted")
            }
            Self::Cancelled {
                task_id: Some(task_id),
            } => write!(
                f,
                "cancelled while waiting; the checkpoint inserted by Zerto task {task_id} is not undone and stays in Zerto"
            ),
            Self::Zvm(e) => write!(f, "{e}"),
            Self::Internal(detail) => write!(f, "internal error: {detail}"),
        }
    }
}

/// What the guard did for the VMs of one call.
#[derive(Debug)]
pub(crate) struct GuardReport {
    /// The VMs, in the order the call named them.
    pub(crate) vms: Vec<Vm>,
    /// Every VPG protecting any of them, once each.
    pub(crate) vpgs: Vec<VpgOutcome>,
}

impl GuardReport {
    /// True when every VPG has a listed tagged checkpoint.
    pub(crate) fn confirmed(&self) -> bool {
        !self.vpgs.is_empty() && self.vpgs.iter().all(|v| v.result.is_ok())
    }

    /// True when every VPG without a checkpoint was not tagged because of its status, or
    /// because the ZVM could not be asked: the cases `[hook] on_zvm_error` may soften.
    pub(crate) fn only_unrestorable(&self) -> bool {
        let mut any = false;
        for vpg in &self.vpgs {
            match &vpg.result {
                Ok(_) => {}
                Err(Refusal::Unrestorable { .. }) => any = true,
                Err(Refusal::Zvm(e)) if e.is_connection_problem() => {}
                Err(_) => return false,
            }
        }
        any
    }

    /// The ZVM error, when every VPG without a checkpoint failed only because the ZVM could
    /// not be asked (unreachable, TLS, authentication), not because Zerto refused or did not
    /// finish the checkpoint.
    pub(crate) fn only_zvm_error(&self) -> Option<&ZvmError> {
        let mut first = None;
        for vpg in &self.vpgs {
            match &vpg.result {
                Ok(_) => {}
                Err(Refusal::Zvm(e)) if e.is_connection_problem() => {
                    first.get_or_insert(e);
                }
                Err(_) => return None,
            }
        }
        first
    }
}

/// Inserts a tag on every VPG of `vms` (each VPG once) in parallel and waits until each is
/// listed, telling `watch` each VPG's phases. `tag_for` makes a VPG's tag from the names of
/// the VMs it protects.
pub(crate) fn guard(
    client: &Client,
    vms: &[Vm],
    tag_for: &dyn Fn(&str) -> Tag,
    lock_dir: &Path,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> GuardReport {
    let mut plan: Vec<(VpgRef, Vec<String>)> = Vec::new();
    for vm in vms {
        for vpg in &vm.vpgs {
            match plan.iter_mut().find(|(p, _)| p.id == vpg.id) {
                Some((_, names)) => {
                    if !names.contains(&vm.name) {
                        names.push(vm.name.clone());
                    }
                }
                None => plan.push((vpg.clone(), vec![vm.name.clone()])),
            }
        }
    }
    let tags: Vec<Tag> = plan
        .iter()
        .map(|(_, names)| tag_for(&names.join(",")))
        .collect();
    let vpgs = std::thread::scope(|scope| {
        let workers: Vec<_> = plan
            .iter()
            .zip(&tags)
            .map(|((vpg, _), tag)| {
                let task = VpgGuard {
                    client,
                    vpg,
                    tag,
                    lock: lock_path(lock_dir, &vpg.id),
                    deadline: *deadline,
                    watch,
                    inserted_task: std::cell::RefCell::new(None),
                };
                scope.spawn(move || task.watched())
            })
            .collect();
        plan.iter()
            .zip(&tags)
            .zip(workers)
            .map(|(((vpg, names), tag), worker)| VpgOutcome {
                vpg: vpg.clone(),
                vms: names.clone(),
                tag: tag.clone(),
                result: worker.join().unwrap_or_else(|_| {
                    Err(Refusal::Internal(String::from(
                        "the guard of this VPG panicked",
                    )))
                }),
            })
            .collect()
    });
    GuardReport {
        vms: vms.to_vec(),
        vpgs,
    }
}

fn lock_path(dir: &Path, vpg_id: &str) -> PathBuf {
    let safe: String = vpg_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("vpg-{safe}.lock"))
}

struct VpgGuard<'a> {
    client: &'a Client,
    vpg: &'a VpgRef,
    tag: &'a Tag,
    lock: PathBuf,
    deadline: Deadline,
    watch: &'a dyn Watch,
    /// The task of the last insert Zerto accepted, for a cancelled guard to name.
    inserted_task: std::cell::RefCell<Option<String>>,
}

impl VpgGuard<'_> {
    /// [`VpgGuard::run`], its phases told to the watch, a stop for a cancel said as one.
    fn watched(&self) -> Result<Tagged, Refusal> {
        let mut result = self.run();
        if result.is_err() && self.watch.cancelled() {
            result = Err(Refusal::Cancelled {
                task_id: self.inserted_task.borrow().clone(),
            });
        }
        match &result {
            Ok(tagged) => self.tell(Phase::Confirmed {
                checkpoint_id: &tagged.checkpoint.id,
            }),
            Err(refusal) => self.tell(Phase::Failed { refusal }),
        }
        result
    }

    fn tell(&self, phase: Phase<'_>) {
        self.watch.progress(&Progress {
            vpg: self.vpg,
            phase,
            elapsed: self.deadline.elapsed(),
        });
    }

    /// Sleeps for `wanted` (less if the deadline comes first), looking at the watch's cancel
    /// every [`CANCEL_CHECK`]. False when the deadline has passed or the watch cancelled.
    fn sleep(&self, wanted: Duration) -> bool {
        let until = Instant::now() + wanted;
        loop {
            if self.watch.cancelled() {
                return false;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return !self.deadline.expired();
            }
            if !self.deadline.sleep(left.min(CANCEL_CHECK)) {
                return false;
            }
        }
    }

    /// Calls `ask` until it answers or fails for good: a transient failure (a lost
    /// connection, one request timing out, a 5xx) is retried after the next poll pause while
    /// the deadline allows, so one glitch during a long wait does not deny the call.
    fn patiently<T>(
        &self,
        pause: &mut Polling,
        mut ask: impl FnMut() -> Result<T, ZvmError>,
    ) -> Result<T, ZvmError> {
        loop {
            match ask() {
                Err(e) if e.is_transient() && self.sleep(pause.next()) => {}
                answer => return answer,
            }
        }
    }

    fn run(&self) -> Result<Tagged, Refusal> {
        let deadline = &self.deadline;
        if self.watch.cancelled() {
            return Err(Refusal::Cancelled { task_id: None });
        }
        self.tell(Phase::Inserting);
        let mut pause = Polling::new(
            Duration::from_millis(250),
            Duration::from_secs(2),
            Duration::from_secs(2),
        );
        let state = self
            .patiently(&mut pause, || self.client.vpg(&self.vpg.id, deadline))
            .map_err(Refusal::Zvm)?;
        let degraded = match health(&state) {
            Health::Unrestorable(status) => return Err(Refusal::Unrestorable { status }),
            Health::Degraded(note) => Some(note),
            Health::Restorable => None,
        };
        let history = state.configured_history.or(state.actual_history);
        // Our turn on this VPG: from before the insert until its task ends (Zerto fails an
        // insert that arrives while another one's task is running). Waiting for the tag to be
        // listed needs no turn, so a slow cloud VPG does not hold up the next call.
        let stop = || self.watch.cancelled();
        let turn = lockfile::lock_unless(&self.lock, deadline, &stop).map_err(|e| {
            Refusal::Busy(match e {
                lockfile::LockError::TimedOut { .. } => String::from(
                    "another rewind process was checkpointing this VPG until the budget ran out",
                ),
                other @ lockfile::LockError::Io { .. } => other.to_string(),
            })
        })?;
        let (previous, cadence) = self.history()?;
        let since = previous.as_ref().map(|c| c.at);

        let mut retry_pause = Duration::from_secs(1);
        let mut inserted;
        let task_id = loop {
            inserted = Instant::now();
            let task_id = self
                .client
                .insert_tagged_checkpoint(&self.vpg.id, self.tag.as_str(), deadline)
                .map_err(Refusal::Zvm)?;
            self.inserted_task.replace(Some(task_id.clone()));
            self.tell(Phase::Task { task_id: &task_id });
            match self.wait_for_task(&task_id, cadence)? {
                // Zerto's own SDK reads a 401 on a task (after a fresh token) as "finished and
                // no longer accessible": the checkpoint list says whether it made the tag.
                None | Some((TaskState::Completed, _)) => break task_id,
                Some((state, reason)) if is_concurrent_insert(&reason) => {
                    // Another insert (from another machine) held the VPG: wait it out, retry.
                    if !self.sleep(retry_pause) {
                        return Err(Refusal::TaskEnded {
                            task_id,
                            state,
                            reason,
                        });
                    }
                    retry_pause = (retry_pause * 2).min(cadence.max(Duration::from_secs(2)));
                    self.tell(Phase::Inserting);
                }
                Some((state, reason)) => {
                    return Err(Refusal::TaskEnded {
                        task_id,
                        state,
                        reason,
                    });
                }
            }
        };

        drop(turn);
        self.tell(Phase::Listing {
            task_id: &task_id,
            cadence,
            expected: inserted.saturating_duration_since(deadline.started())
                + expected_listing(cadence),
        });
        let checkpoint = self.wait_for_tag(&task_id, since, cadence, inserted)?;
        Ok(Tagged {
            checkpoint,
            task_id,
            previous,
            history,
            degraded,
        })
    }

    /// The newest existing checkpoint and the journal cadence the recent ones show.
    fn history(&self) -> Result<(Option<Checkpoint>, Duration), Refusal> {
        let deadline = &self.deadline;
        let since = SystemTime::now() - HISTORY_WINDOW;
        let mut pause = Polling::new(
            Duration::from_millis(250),
            Duration::from_secs(2),
            Duration::from_secs(2),
        );
        let mut recent = self
            .patiently(&mut pause, || {
                self.client.checkpoints(&self.vpg.id, Some(since), deadline)
            })
            .map_err(Refusal::Zvm)?;
        if recent.is_empty() {
            // Clocks differ, or the journal is quiet: ask Zerto for its newest checkpoint.
            recent.extend(
                self.patiently(&mut pause, || {
                    self.client.latest_checkpoint(&self.vpg.id, deadline)
                })
                .map_err(Refusal::Zvm)?,
            );
        }
        recent.sort_by_key(|c| c.at);
        let cadence = cadence_of(&recent.iter().map(|c| c.at).collect::<Vec<_>>());
        Ok((recent.pop(), cadence))
    }

    /// Polls the task until it ends; returns its final state and CompleteReason, or `None`
    /// when the ZVM refuses to show it even with a renewed token (HTTP 401).
    fn wait_for_task(
        &self,
        task_id: &str,
        cadence: Duration,
    ) -> Result<Option<(TaskState, String)>, Refusal> {
        let deadline = &self.deadline;
        let mut pause = Polling::new(
            Duration::from_millis(200),
            cadence / 20,
            Duration::from_secs(5),
        );
        loop {
            let task = match self.patiently(&mut pause, || self.client.task(task_id, deadline)) {
                Err(ZvmError::Status { status: 401, .. }) => return Ok(None),
                other => other,
            };
            let task = task.map_err(|e| match e {
                ZvmError::TimedOut { .. } => Refusal::TaskUnfinished {
                    task_id: task_id.to_owned(),
                    state: TaskState::InProgress,
                },
                other => Refusal::Zvm(other),
            })?;
            let state = task.state;
            if state.is_terminal() {
                return Ok(Some((state, task.reason)));
            }
            if !self.sleep(pause.next()) {
                return Err(Refusal::TaskUnfinished {
                    task_id: task_id.to_owned(),
                    state,
                });
            }
        }
    }

    /// Polls the checkpoint list until a row carries our tag (exactly, or cut short but with
    /// the whole change id, [`Tag::is_listed_as`]): once when the task
    /// has ended, then sparsely until shortly before the listing Zerto's cadence predicts
    /// ([`TagWatch`]), densely around it, and with growing pauses after, so the tag is seen
    /// soon after it is listed without asking more often everywhere.
    fn wait_for_tag(
        &self,
        task_id: &str,
        since: Option<SystemTime>,
        cadence: Duration,
        inserted: Instant,
    ) -> Result<Checkpoint, Refusal> {
        let deadline = &self.deadline;
        let not_listed = || Refusal::TagNotListed {
            task_id: task_id.to_owned(),
        };
        let mut watch = TagWatch::new(inserted, cadence);
        loop {
            let rows = match self.patiently(&mut watch.retry, || {
                self.client.checkpoints(&self.vpg.id, since, deadline)
            }) {
                Ok(rows) => rows,
                Err(ZvmError::TimedOut { .. }) => return Err(not_listed()),
                Err(e) => return Err(Refusal::Zvm(e)),
            };
            if let Some(row) = rows
                .into_iter()
                .find(|c| c.tag.as_deref().is_some_and(|t| self.tag.is_listed_as(t)))
            {
                return Ok(row);
            }
            if !self.sleep(watch.pause(Instant::now())) {
                return Err(not_listed());
            }
        }
    }
}

/// Whether a Failed insert's reason says another checkpoint operation held the VPG.
fn is_concurrent_insert(reason: &str) -> bool {
    let reason = reason.to_ascii_lowercase();
    ["in progress", "another", "concurrent", "already running"]
        .iter()
        .any(|needle| reason.contains(needle))
}

/// The median gap between consecutive checkpoint times, bounded to 1 s..15 min.
pub(crate) fn cadence_of(times: &[SystemTime]) -> Duration {
    let mut gaps: Vec<Duration> = times
        .windows(2)
        .filter_map(|w| w[1].duration_since(w[0]).ok())
        .filter(|g| !g.is_zero())
        .collect();
    if gaps.is_empty() {
        return DEFAULT_CADENCE;
    }
    gaps.sort();
    gaps[gaps.len() / 2].clamp(Duration::from_secs(1), Duration::from_secs(15 * 60))
}

/// How long after the insert Zerto lists a tag, for a VPG with this journal cadence:
/// measured 4 s at a 5 s cadence (vSphere), 34 s at 60 s (Azure), 128 s at 630 s (AWS);
/// between and beyond those, on the straight line through them on a log-log scale.
fn expected_listing(cadence: Duration) -> Duration {
    const MEASURED: [(f64, f64); 3] = [(5.0, 4.0), (60.0, 34.0), (630.0, 128.0)];
    let c = cadence.as_secs_f64().max(0.1);
    let segment = if c < MEASURED[1].0 {
        (MEASURED[0], MEASURED[1])
    } else {
        (MEASURED[1], MEASURED[2])
    };
    let ((c0, l0), (c1, l1)) = segment;
    let slope = (l1.ln() - l0.ln()) / (c1.ln() - c0.ln());
    let latency = (l0.ln() + slope * (c.ln() - c0.ln())).exp();
    Duration::from_secs_f64(latency.clamp(0.1, 900.0))
}

/// When to ask again whether the tag is listed. Before the expected listing, sparsely (half
/// the time left each time); from a twentieth of the expected latency before it, densely (a
/// fortieth: 100 ms on vSphere); past it by a quarter (at least 1 s), with growing pauses
/// capped by the cadence, as Zerto may simply be slow.
struct TagWatch {
    window_start: Instant,
    window_end: Instant,
    dense: Duration,
    after: Polling,
    /// Pauses between retries of a transient failure.
    retry: Polling,
}

impl TagWatch {
    fn new(inserted: Instant, cadence: Duration) -> Self {
        let latency = expected_listing(cadence);
        let expected = inserted + latency;
        let lead = (latency / 20).clamp(Duration::from_millis(100), Duration::from_secs(5));
        let dense = (latency / 40).clamp(Duration::from_millis(50), Duration::from_secs(2));
        Self {
            window_start: expected.checked_sub(lead).unwrap_or(expected),
            window_end: expected + (latency / 4).max(Duration::from_secs(1)),
            dense,
            after: Polling::new(dense, cadence / 10, Duration::from_secs(10)),
            retry: Polling::new(
                Duration::from_millis(250),
                cadence / 10,
                Duration::from_secs(10),
            ),
        }
    }

    fn pause(&mut self, now: Instant) -> Duration {
        if now < self.window_start {
            let left = self.window_start - now;
            // Half the time left, but never a pause so short it only adds requests, nor one
            // longer than 10 s (a slow VPG's tag may still come early).
            let pause = if left > self.dense * 4 {
                left / 2
            } else {
                left
            };
            pause.min(Duration::from_secs(10))
        } else if now < self.window_end {
            self.dense
        } else {
            self.after.next()
        }
    }
}

/// Poll intervals that start short and grow (x1.5) to a cap set by the cadence.
struct Polling {
    next: Duration,
    cap: Duration,
}

impl Polling {
    fn new(first: Duration, by_cadence: Duration, ceiling: Duration) -> Self {
        let cap = by_cadence.clamp(first, ceiling);
        Self { next: first, cap }
    }

    fn next(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 3 / 2).min(self.cap);
        now
    }
}

#[cfg(test)]
mod tests;
