//! `rewind recover`: File Level Restore of one guest file from a checkpoint, and
//! `rewind flr list|end` for sessions a crash left mounted.
//!
//! The plan is shown first and nothing happens without an explicit yes. Once a checkpoint is
//! mounted, the session is unmounted on every way out: success, error, and Ctrl-C.

mod file;
mod locate;
mod request;
mod zip;

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};

use crate::cli::{FlrCommand, RecoverArgs};
use crate::commands::{client, say, warn_config, zerto::find_vm};
use crate::config::Config;
use crate::console::err;
use crate::deadline::Deadline;
use crate::tag;
use crate::zvm::{Checkpoint, Client, DownloadError, FlrSession, FlrStatus, Vm, VpgRef, ZvmError};

use self::file::{Hashing, write_atomically};
use self::locate::locate;
pub(crate) use self::request::{Point, PointError, RecoverRequest};

/// Longest a whole recover may take (mounting a large VM can take minutes).
const RECOVER_BUDGET: Duration = Duration::from_secs(60 * 60);
/// Longest the unmount is given, even after an error or Ctrl-C.
const UNMOUNT_BUDGET: Duration = Duration::from_secs(120);
/// How often the mount state is polled.
const MOUNT_POLL: Duration = Duration::from_millis(500);
/// How many times an unmount is asked for before giving up (within [`UNMOUNT_BUDGET`]).
const UNMOUNT_ATTEMPTS: u32 = 5;
/// The pause after the first failed unmount; it doubles after each further one.
const UNMOUNT_RETRY: Duration = Duration::from_secs(2);

/// The checkpoint and file a recover will restore.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub vm: Vm,
    pub vpg: VpgRef,
    pub checkpoint: Checkpoint,
    pub guest_path: String,
    pub destination: PathBuf,
}

/// What a restore reports while it runs, for the caller to show.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// The mount request was accepted: this session now exists and will be unmounted.
    Mounted { session: String },
    /// The session is still mounting (its FLR status, seconds since the mount request).
    Mounting { status: String, secs: u64 },
    /// The checkpoint is mounted and browsable.
    MountReady { secs: f64 },
    /// The file was found at this volume path and is being downloaded.
    Downloading { volume_path: String },
    /// A session was unmounted (ours, or one an unanswered mount request created).
    Unmounted { session: String, task: String },
    /// A session could not be unmounted; somebody must end it.
    NotUnmounted { session: String, error: String },
}

/// The file a restore wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restored {
    pub session: String,
    pub size: u64,
    pub sha256: String,
    /// The Zerto task that unmounted the session.
    pub unmount_task: String,
}

/// `rewind recover`: the run, then its entry in the audit trail (`recovered` or
/// `recover-failed`, with the reason).
pub(crate) fn recover(config_path: Option<&Path>, args: &RecoverArgs) -> anyhow::Result<()> {
    let request = RecoverRequest::try_from(args)?;
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let started = SystemTime::now();
    let mut planned = None;
    let result = run(&config, &request, args.yes, &mut planned);
    audit_recover(&config, &request, planned.as_ref(), &result, started);
    result.map(|_| ())
}

/// Plans, asks (unless `yes`), restores; `planned` keeps the plan for the audit trail.
fn run(
    config: &Config,
    request: &RecoverRequest,
    yes: bool,
    planned: &mut Option<Plan>,
) -> anyhow::Result<Restored> {
    let client = client(config)?;
    let deadline = Deadline::after(RECOVER_BUDGET);
    let plan = planned.insert(plan(&client, config, request, &deadline)?);

    say(format!("VM:          {} ({})", plan.vm.name, plan.vm.id));
    say(format!("VPG:         {} ({})", plan.vpg.name, plan.vpg.id));
    say(format!(
        "checkpoint:  {} at {}{}",
        plan.checkpoint.id,
        plan.checkpoint.time(),
        plan.checkpoint
            .tag
            .as_deref()
            .map(|t| format!(" ({t})"))
            .unwrap_or_default()
    ));
    if let Some(change) = request.point.change() {
        say(format!(
            "             the first checkpoint tagged change={change}; any later one under the same id is not used"
        ));
    }
    say(format!("guest file:  {}", &plan.guest_path));
    if let Some(volume) = &request.volume {
        say(format!("volume:      {volume}"));
    }
    say(format!("destination: {}", plan.destination.display()));
    // Predicted from the journal history: a restore that takes longer may find it aged out.
    if let Some(history) = client
        .vpg(&plan.vpg.id, &deadline)
        .ok()
        .and_then(|v| v.configured_history.or(v.actual_history))
    {
        say(format!(
            "restorable:  until about {} (journal history {})",
            crate::decision::about_utc(plan.checkpoint.at + history),
            crate::decision::history_words(history)
        ));
    }
    confirm(yes)?;

    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    // A second handler cannot be installed in one process; without one, Ctrl-C would kill
    // the process before it unmounts, so say so rather than go on.
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst)).context(
        "cannot catch Ctrl-C, so an interrupted restore could leave the checkpoint mounted",
    )?;
    // The mount's or download's wait, live on a terminal.
    let mut wait: Option<crate::progress::Wait> = None;
    let restored = restore_plan(
        &client,
        plan,
        request.volume.as_deref(),
        request.force,
        &deadline,
        &interrupted,
        &mut |step| match step {
            Step::Mounted { session } => {
                say(format!("session:     {session} (mount requested)"));
                wait = Some(crate::progress::Wait::start("mounting"));
            }
            Step::Mounting { status, secs } => match &wait {
                Some(live) if live.is_live() => live.set(&format!("mounting: {status}")),
                _ => err(format!("mounting: {status} ({secs} s)")),
            },
            Step::MountReady { secs } => {
                wait = None;
                say(format!("mounted:     in {secs:.1} s"));
            }
            Step::Downloading { volume_path } => {
                wait = Some(crate::progress::Wait::start(&format!(
                    "downloading {volume_path}"
                )));
                if !wait.as_ref().is_some_and(crate::progress::Wait::is_live) {
                    err(format!("downloading {volume_path}"));
                }
            }
            Step::Unmounted { session, task } => {
                wait = None;
                say(format!("unmounted:   session {session} (task {task})"));
            }
            Step::NotUnmounted { session, error } => {
                wait = None;
                err(format!(
                    "warning: could not unmount session {session}: {error}\nhint: run `rewind flr end {session}`"
                ));
            }
        },
    )?;
    say(format!(
        "restored:    {} ({} bytes, sha256 {})",
        plan.destination.display(),
        restored.size,
        restored.sha256
    ));
    Ok(restored)
}

/// Records a `rewind recover` run: what was restored from which checkpoint, or why not.
fn audit_recover(
    config: &Config,
    request: &RecoverRequest,
    plan: Option<&Plan>,
    result: &anyhow::Result<Restored>,
    started: SystemTime,
) {
    let from = plan.map_or_else(String::new, |p| {
        format!(
            " from checkpoint {} ({})",
            p.checkpoint.id,
            p.checkpoint.time()
        )
    });
    let (decision, reason) = match result {
        Ok(restored) => (
            crate::audit::Ending::Recovered,
            format!(
                "restored {}{from} to {} ({} bytes, sha256 {})",
                request.guest_path,
                plan.map_or_else(String::new, |p| p.destination.display().to_string()),
                restored.size,
                restored.sha256
            ),
        ),
        Err(e) => (
            crate::audit::Ending::RecoverFailed,
            format!("{}{from}: {e:#}", request.guest_path),
        ),
    };
    let (key, value) = match &request.point {
        Point::Change(change) => ("change", change.clone()),
        Point::Checkpoint(id) => ("checkpoint", id.clone()),
        Point::Before(before) => ("before", crate::time::format_utc_millis(*before)),
    };
    let mut point = serde_json::Map::new();
    point.insert(key.to_owned(), serde_json::Value::from(value));
    for (key, value) in [("vpg", &request.vpg), ("volume", &request.volume)] {
        if let Some(value) = value {
            point.insert(key.to_owned(), serde_json::Value::from(value.as_str()));
        }
    }
    point.insert(
        String::from("path"),
        serde_json::Value::from(request.guest_path.as_str()),
    );
    let vm = plan.map_or_else(|| request.vm.clone(), |p| p.vm.name.clone());
    let record = crate::audit::Record {
        time: crate::time::format_utc_millis(started),
        host: String::from("cli"),
        session: None,
        change: request.point.change().map(str::to_owned),
        tool: String::from("rewind recover"),
        class: String::from("recover"),
        vms: vec![vm.clone()],
        named: crate::audit::named_otherwise(&[&request.vm], &[vm]),
        vpgs: plan.map(|p| p.vpg.name.clone()).into_iter().collect(),
        checkpoints: Vec::new(),
        decision,
        reason: Some(reason),
        duration_ms: u64::try_from(started.elapsed().unwrap_or_default().as_millis())
            .unwrap_or(u64::MAX),
        input: None,
        args: crate::audit::summarise(&serde_json::Value::Object(point)),
    };
    if let Err(e) =
        crate::audit::Trail::of(config).and_then(|trail| crate::audit::append(trail, &record))
    {
        err(format!("warning: the audit trail was not written: {e:#}"));
    }
}

/// Mounts the plan's checkpoint, writes the file to `plan.destination`, and unmounts on every
/// way out: success, error, and `interrupted` (checked between steps and while mounting).
/// Reports each step to `report`; writes nothing to stdout.
pub(crate) fn restore_plan(
    client: &Client,
    plan: &Plan,
    volume: Option<&str>,
    force: bool,
    deadline: &Deadline,
    interrupted: &AtomicBool,
    report: &mut dyn FnMut(Step),
) -> anyhow::Result<Restored> {
    // The sessions of this VM before the mount, so that a mount request left unanswered can
    // be told apart from somebody else's restore of the same checkpoint.
    let known: Option<Vec<String>> = client
        .flr_sessions(Some(&plan.vm.id), deadline)
        .ok()
        .map(|list| list.into_iter().map(|s| s.id).collect());
    let session = match client.flr_mount(&plan.vpg.id, &plan.vm.id, &plan.checkpoint.id, deadline) {
        Ok(session) => session,
        Err(e) => {
            if matches!(e, ZvmError::TimedOut { .. } | ZvmError::Unreachable { .. }) {
                end_unanswered_mount(client, plan, known.as_deref(), report);
            }
            return Err(e).context("File Level Restore could not mount the checkpoint");
        }
    };
    report(Step::Mounted {
        session: session.clone(),
    });
    let result = restore(
        client,
        plan,
        &session,
        volume,
        force,
        deadline,
        interrupted,
        report,
    );
    let unmounted = unmount(client, &session);
    let gone = unmounted
        .as_ref()
        .is_err_and(anyhow::Error::is::<SessionGone>);
    match &unmounted {
        Ok(task) => report(Step::Unmounted {
            session: session.clone(),
            task: task.clone(),
        }),
        // Ended elsewhere (or expired): nothing of it is left mounted, so nothing to report
        // as left behind; the restore's own error says what happened.
        Err(_) if gone => {}
        Err(e) => report(Step::NotUnmounted {
            session: session.clone(),
            error: format!("{e:#}"),
        }),
    }
    if result.is_err() && interrupted.load(Ordering::SeqCst) {
        bail!(
            "interrupted (Ctrl-C): nothing was written, and {}",
            match &unmounted {
                Ok(_) => format!("FLR session {session} was unmounted"),
                Err(_) if gone => format!("FLR session {session} was already ended"),
                Err(_) => format!(
                    "FLR session {session} may still be mounted: end it with `rewind flr end {session}`"
                ),
            }
        );
    }
    let (size, sha256) = result?;
    let unmount_task = unmounted?;
    Ok(Restored {
        session,
        size,
        sha256,
        unmount_task,
    })
}

/// Finds the VM, VPG, checkpoint and destination, refusing early what cannot work.
pub(crate) fn plan(
    client: &Client,
    config: &Config,
    request: &RecoverRequest,
    deadline: &Deadline,
) -> anyhow::Result<Plan> {
    let vm = find_vm(client, config, &request.vm, deadline)?;
    let vpgs: Vec<&VpgRef> = match &request.vpg {
        Some(name) => {
            let vpg = vm
                .vpgs
                .iter()
                .find(|v| v.name.eq_ignore_ascii_case(name) || v.id == *name)
                .with_context(|| {
                    format!(
                        "VM {} is not in VPG {name:?}; it is in {}",
                        vm.name,
                        vm.vpg_names()
                    )
                })?;
            vec![vpg]
        }
        None => vm.vpgs.iter().collect(),
    };

    let mut tagged = Vec::new();
    let mut chosen = None;
    for vpg in &vpgs {
        let (found, rows) = search_journal(client, &vpg.id, &request.point, deadline)?;
        if let Some(found) = found.as_ref() {
            if chosen.is_some()
                && request.vpg.is_none()
                && matches!(request.point, Point::Before(_))
            {
                bail!(
                    "VM {} is in several VPGs ({}); choose one with --vpg",
                    vm.name,
                    vm.vpg_names()
                );
            }
            if chosen.is_none() {
                chosen = Some(((*vpg).clone(), found.clone()));
            }
        }
        tagged.extend(
            rows.iter()
                .filter(|c| c.tag.is_some())
                .map(|c| (vpg.name.clone(), c.clone())),
        );
    }
    let Some((vpg, checkpoint)) = chosen else {
        return Err(no_checkpoint(
            &vm,
            &request.point,
            &tagged,
            &audited(config, &request.point),
        ));
    };
    let destination = request.destination();
    if destination.exists() && !request.force {
        bail!(
            "{} already exists; pass --force to overwrite it",
            destination.display()
        );
    }
    Ok(Plan {
        vm,
        vpg,
        checkpoint,
        guest_path: request.guest_path.clone(),
        destination,
    })
}

/// The first window of the journal to ask for; each one further back is four times longer.
const FIRST_WINDOW: Duration = Duration::from_secs(60 * 60);

/// Finds the point's checkpoint in a VPG's journal, asking for windows of time from the
/// newest backwards (a long journal listed whole is a large, slow answer) until it is found
/// or the window reaches the journal's earliest checkpoint. Returns it and every row read.
pub(crate) fn search_journal(
    client: &Client,
    vpg_id: &str,
    point: &Point,
    deadline: &Deadline,
) -> anyhow::Result<(Option<Checkpoint>, Vec<Checkpoint>)> {
    let pick = |rows: &[Checkpoint]| -> Option<Checkpoint> {
        match point {
            // The first checkpoint tagged for the change: a later one under the same id
            // (asked for after the change, by whoever could) is never the point before it.
            Point::Change(change) => rows
                .iter()
                .filter(|c| {
                    c.tag
                        .as_deref()
                        .is_some_and(|t| tag::is_for_change(t, change))
                })
                .min_by_key(|c| c.at),
            Point::Checkpoint(id) => rows.iter().find(|c| c.id == *id),
            Point::Before(before) => rows.iter().filter(|c| c.at < *before).max_by_key(|c| c.at),
        }
        .cloned()
    };
    let Some(earliest) = client.earliest_checkpoint(vpg_id, deadline)? else {
        return Ok((None, Vec::new()));
    };
    let mut seen: Vec<Checkpoint> = Vec::new();
    let mut end = match point {
        Point::Before(before) => Some(*before),
        Point::Change(_) | Point::Checkpoint(_) => None,
    };
    let mut span = FIRST_WINDOW;
    loop {
        let top = end.unwrap_or_else(SystemTime::now);
        let start = top
            .checked_sub(span)
            .unwrap_or(earliest.at)
            .max(earliest.at);
        let rows = client.checkpoints_between(vpg_id, Some(start), end, deadline)?;
        for row in rows {
            if !seen.iter().any(|c| c.id == row.id) {
                seen.push(row);
            }
        }
        // A change's checkpoint is searched for back to the journal's start: its first one
        // counts, wherever a later one under the same id stands.
        let whole = matches!(point, Point::Change(_));
        if !whole && let Some(found) = pick(&seen) {
            return Ok((Some(found), seen));
        }
        if start <= earliest.at {
            return Ok((pick(&seen), seen));
        }
        end = Some(start);
        span = span.saturating_mul(4);
    }
}

/// The error for a point that matches no checkpoint, listing the tagged ones that exist.
fn no_checkpoint(
    vm: &Vm,
    point: &Point,
    tagged: &[(String, Checkpoint)],
    audited: &[String],
) -> anyhow::Error {
    let what = match point {
        Point::Change(change) if !audited.is_empty() => format!(
            "the checkpoint of change={change} on VM {} (checkpoint {}, in the audit trail) is no longer in Zerto's list: it has aged out of the journal (or the VPG was re-synced)",
            vm.name,
            audited.join(", ")
        ),
        Point::Change(change) => {
            format!("no checkpoint of VM {} is tagged change={change}", vm.name)
        }
        Point::Checkpoint(id) => format!("VM {} has no checkpoint {id}", vm.name),
        Point::Before(before) => format!(
            "VM {} has no checkpoint before {}",
            vm.name,
            crate::time::format_utc_millis(*before)
        ),
    };
    let mut text = what;
    if tagged.is_empty() {
        text.push_str("; it has no tagged checkpoints at all");
    } else {
        text.push_str("; tagged checkpoints that exist:");
        for (vpg, c) in tagged {
            let _ = write!(
                text,
                "\n  {vpg}  {:>8}  {}  {}",
                c.id,
                c.time(),
                c.tag.as_deref().unwrap_or_default()
            );
        }
    }
    crate::zvm::NotFound::Checkpoint(text).into()
}

/// The checkpoint ids the audit trail holds for `--change`, if any (an unreadable trail is
/// nothing to say).
fn audited(config: &Config, point: &Point) -> Vec<String> {
    let Some(change) = point.change() else {
        return Vec::new();
    };
    let Ok(path) = config.hook.audit_path() else {
        return Vec::new();
    };
    let filter = crate::audit::Filter {
        change: Some(change),
        ..crate::audit::Filter::default()
    };
    crate::audit::read(path, &filter)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|r| r.checkpoints.into_iter().map(|c| c.id))
        .collect()
}

/// The file name of a Linux or Windows guest path.
pub(crate) fn guest_file_name(path: &str) -> Option<&str> {
    path.rsplit(['/', '\\'])
        .next()
        .filter(|n| !n.is_empty() && *n != "." && *n != "..")
}

/// Asks for a yes, or refuses where nobody can answer.
pub(crate) fn confirm(yes: bool) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "nothing was mounted or written: no terminal to confirm on; pass --yes to restore without asking"
        );
    }
    crate::console::prompt("Restore this file? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        bail!("not confirmed; nothing was mounted or written")
    }
}

/// With the session mounted: wait for the mount, find the file, stream it to the destination.
/// Returns the size and SHA-256 of what was written.
#[expect(
    clippy::too_many_arguments,
    reason = "the restore's inputs, each used once; a struct would only rename them"
)]
fn restore(
    client: &Client,
    plan: &Plan,
    session: &str,
    volume: Option<&str>,
    force: bool,
    deadline: &Deadline,
    interrupted: &AtomicBool,
    report: &mut dyn FnMut(Step),
) -> anyhow::Result<(u64, String)> {
    wait_for_mount(client, session, deadline, interrupted, report)?;
    let volume_path = locate(
        client,
        session,
        &plan.guest_path,
        volume,
        deadline,
        interrupted,
    )?;
    report(Step::Downloading {
        volume_path: volume_path.clone(),
    });
    let url = client.flr_download_url(session, &volume_path, deadline)?;
    check_interrupt(interrupted)?;
    write_atomically(&plan.destination, force, |file, tmp| {
        let mut out = Hashing::new(file);
        let size = client
            .download_to(&url, &mut out, deadline)
            .map_err(|e| match e {
                DownloadError::Zvm(e) => anyhow::Error::new(e),
                DownloadError::Write(e) => {
                    anyhow::Error::new(e).context(format!("cannot write {}", tmp.display()))
                }
            })?;
        check_interrupt(interrupted)?;
        let sha = out.sha256();
        unzip_in_place(file, tmp, &plan.guest_path).map(|plain| plain.unwrap_or((size, sha)))
    })
}

/// When the download in `file` is a zip archive holding the guest file (and no zip was asked
/// for), replaces it with that file; returns the file's size and SHA-256.
fn unzip_in_place(
    file: &mut std::fs::File,
    tmp: &std::path::Path,
    guest_path: &str,
) -> anyhow::Result<Option<(u64, String)>> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let cannot = || format!("cannot read back {}", tmp.display());
    file.seek(SeekFrom::Start(0)).with_context(cannot)?;
    let mut head = [0_u8; 4];
    let read = file.read(&mut head).with_context(cannot)?;
    if !zip::is_archive_of(&head[..read], guest_path) {
        return Ok(None);
    }
    let name = guest_path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(guest_path)
        .to_owned();
    let dir = tmp.parent().unwrap_or(std::path::Path::new("."));
    let mut plain = tempfile::tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let mut hashing = Hashing::new(&mut plain);
    let size =
        zip::extract(file, &name, &mut hashing).context("the ZVM's download is a zip archive")?;
    let sha = hashing.sha256();
    plain.seek(SeekFrom::Start(0)).with_context(cannot)?;
    file.set_len(0).with_context(cannot)?;
    file.seek(SeekFrom::Start(0)).with_context(cannot)?;
    std::io::copy(&mut plain, file).with_context(|| format!("cannot write {}", tmp.display()))?;
    Ok(Some((size, sha)))
}

fn check_interrupt(interrupted: &AtomicBool) -> anyhow::Result<()> {
    if interrupted.load(Ordering::SeqCst) {
        bail!("interrupted");
    }
    Ok(())
}

fn wait_for_mount(
    client: &Client,
    session: &str,
    deadline: &Deadline,
    interrupted: &AtomicBool,
    report: &mut dyn FnMut(Step),
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut last = String::new();
    loop {
        check_interrupt(interrupted)?;
        let Some(state) = client.flr_session(session, deadline)? else {
            bail!(
                "FLR session {session} disappeared while mounting: the ZVM no longer knows it \
                 (ended elsewhere, or it expired)"
            );
        };
        match state.status {
            Some(FlrStatus::Mounted) => {
                report(Step::MountReady {
                    secs: started.elapsed().as_secs_f64(),
                });
                return Ok(());
            }
            Some(FlrStatus::Failed) => {
                bail!("Zerto could not mount the checkpoint (session {session}: MountFailed)")
            }
            status => {
                let status = status.map_or_else(|| String::from("unknown"), |s| s.to_string());
                if status != last {
                    report(Step::Mounting {
                        status: status.clone(),
                        secs: started.elapsed().as_secs(),
                    });
                    last = status;
                }
            }
        }
        if !deadline.sleep(MOUNT_POLL) {
            bail!("the checkpoint was still mounting when the time ran out");
        }
    }
}

/// The ZVM no longer knows an FLR session (ended elsewhere, or expired): nothing of it is
/// left mounted, and asking again cannot help.
#[derive(Debug)]
pub(crate) struct SessionGone {
    session: String,
    refusal: ZvmError,
}

impl std::fmt::Display for SessionGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the ZVM has no File Level Restore session {}: {}; `rewind flr list` shows the sessions there are",
            self.session, self.refusal
        )
    }
}

impl std::error::Error for SessionGone {}

/// Unmounts under its own budget (the main one may be spent) and returns the task id. A
/// refused unmount (a mount still in progress, a busy ZVM) is asked for again a few times;
/// a session the ZVM does not know is not: that is a [`SessionGone`] error.
pub(crate) fn unmount(client: &Client, session: &str) -> anyhow::Result<String> {
    let deadline = Deadline::after(UNMOUNT_BUDGET);
    let mut pause = UNMOUNT_RETRY;
    let mut attempt = 1;
    let task = loop {
        match client.flr_unmount(session, &deadline) {
            Ok(task) => break task,
            // A refusal for a session the ZVM does not list is final: asking again cannot help.
            Err(e)
                if e.status().is_some_and(|s| (400..500).contains(&s))
                    && matches!(client.flr_session(session, &deadline), Ok(None)) =>
            {
                return Err(SessionGone {
                    session: session.to_owned(),
                    refusal: e,
                }
                .into());
            }
            Err(e) if attempt < UNMOUNT_ATTEMPTS && e.status() != Some(404) => {
                crate::console::err(format!(
                    "unmount refused ({e}); asking again in {} s",
                    pause.as_secs()
                ));
                if !deadline.sleep(pause) {
                    return Err(e.into());
                }
                pause *= 2;
                attempt += 1;
            }
            Err(e) => return Err(e.into()),
        }
    };
    // Wait (briefly) for the session to go away, so `flr list` is clean when we return.
    let until = Deadline::after(Duration::from_secs(30).min(deadline.remaining()));
    while client.flr_session(session, &until)?.is_some() {
        if !until.sleep(MOUNT_POLL) {
            break;
        }
    }
    Ok(task)
}

/// After a mount request that got no answer: the ZVM may have created the session anyway, so
/// unmount any session of this VM and checkpoint that was not there before (`known`).
fn end_unanswered_mount(
    client: &Client,
    plan: &Plan,
    known: Option<&[String]>,
    report: &mut dyn FnMut(Step),
) {
    let deadline = Deadline::after(UNMOUNT_BUDGET);
    let checkpoint = &plan.checkpoint.id;
    let hint = format!(
        "hint: run `rewind flr list --vm {}` and `rewind flr end <id>`",
        plan.vm.id
    );
    let Some(known) = known else {
        crate::console::err(format!(
            "warning: the mount request got no answer, and the sessions of VM {} could not be listed before it, so none is ended here\n{hint}",
            plan.vm.name
        ));
        return;
    };
    let sessions = match client.flr_sessions(Some(&plan.vm.id), &deadline) {
        Ok(sessions) => sessions,
        Err(e) => {
            crate::console::err(format!(
                "warning: the mount request got no answer, and looking for a session it may have created failed: {e}\n{hint}"
            ));
            return;
        }
    };
    let orphans = unanswered_sessions(known, &sessions, &plan.vm.id, checkpoint);
    if orphans.is_empty() {
        crate::console::err(format!(
            "the mount request got no answer; no session of VM {} for checkpoint {checkpoint} was left behind",
            plan.vm.name
        ));
    }
    for id in orphans {
        crate::console::err(format!(
            "the mount request got no answer, but the ZVM created session {id}; unmounting it"
        ));
        match unmount(client, &id) {
            Ok(task) => report(Step::Unmounted { session: id, task }),
            Err(e) if e.is::<SessionGone>() => {}
            Err(e) => report(Step::NotUnmounted {
                session: id,
                error: format!("{e:#}"),
            }),
        }
    }
}

/// The sessions of `vm_id` at `checkpoint` that are not in `known`: the ones a mount request
/// that got no answer created.
fn unanswered_sessions(
    known: &[String],
    sessions: &[FlrSession],
    vm_id: &str,
    checkpoint: &str,
) -> Vec<String> {
    sessions
        .iter()
        .filter(|s| {
            s.vm_id
                .as_deref()
                .is_none_or(|vm| vm.eq_ignore_ascii_case(vm_id))
                && s.checkpoint_id.as_deref() == Some(checkpoint)
                && !known.contains(&s.id)
        })
        .map(|s| s.id.clone())
        .collect()
}

/// `rewind flr list|end`.
pub(crate) fn flr(config_path: Option<&Path>, command: &FlrCommand) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(Duration::from_secs(60));
    match command {
        FlrCommand::List { vm, json } => {
            let vm_id = match vm {
                Some(reference) => Some(find_vm(&client, &config, reference, &deadline)?.id),
                None => None,
            };
            let sessions = client.flr_sessions(vm_id.as_deref(), &deadline)?;
            // Zerto names a session's VM by its vmIdentifier only; a person knows it by name.
            // Without the list the names are unknown, and the sessions still shown.
            let names: std::collections::HashMap<String, String> = if sessions.is_empty() {
                std::collections::HashMap::new()
            } else {
                client
                    .vms(None, &deadline)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|vm| (vm.id, vm.name))
                    .collect()
            };
            let name_of =
                |s: &crate::zvm::FlrSession| s.vm_id.as_ref().and_then(|id| names.get(id)).cloned();
            if *json {
                return crate::commands::print_json(&serde_json::json!({
                    "sessions": sessions.iter().map(|s| serde_json::json!({
                        "id": s.id,
                        "status": s.status.as_ref().map(FlrStatus::as_zerto),
                        "vm": s.vm_id,
                        "vm_name": name_of(s),
                        "checkpoint": s.checkpoint_id,
                        "mounted": s.mounted_at.map(crate::time::format_utc),
                    })).collect::<Vec<_>>(),
                }));
            }
            if sessions.is_empty() {
                say("no File Level Restore sessions");
            }
            for s in &sessions {
                let vm = match (name_of(s), &s.vm_id) {
                    (Some(name), Some(id)) => format!("{name} ({id})"),
                    (None, Some(id)) => id.clone(),
                    (_, None) => String::from("?"),
                };
                say(format!(
                    "{}  {}  vm {vm}  checkpoint {}  mounted {}",
                    s.id,
                    s.status.as_ref().map_or("?", FlrStatus::as_zerto),
                    s.checkpoint_id.as_deref().unwrap_or("?"),
                    s.mounted_at
                        .map_or_else(|| String::from("?"), crate::time::format_utc)
                ));
            }
        }
        FlrCommand::End { id } => {
            let task = unmount(&client, id)?;
            say(format!("unmounted session {id} (task {task})"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_of_guest_paths() {
        assert_eq!(guest_file_name("/etc/app.conf"), Some("app.conf"));
        assert_eq!(guest_file_name("C:\\Users\\x\\y.txt"), Some("y.txt"));
        assert_eq!(guest_file_name("/etc/"), None);
    }

    fn session(id: &str, vm: &str, checkpoint: &str) -> FlrSession {
        FlrSession {
            id: id.to_owned(),
            status: Some(FlrStatus::Mounting),
            vm_id: Some(vm.to_owned()),
            vpg_id: None,
            checkpoint_id: Some(checkpoint.to_owned()),
            mounted_at: None,
        }
    }

    #[test]
    fn only_a_new_session_of_this_vm_and_checkpoint_is_ours_after_an_unanswered_mount() {
        let sessions = [
            session("theirs", "vm-1", "42"),
            session("other-checkpoint", "vm-1", "41"),
            session("other-vm", "vm-2", "42"),
            session("ours", "vm-1", "42"),
        ];
        assert_eq!(
            unanswered_sessions(&["theirs".to_owned()], &sessions, "vm-1", "42"),
            ["ours"]
        );
    }
}
