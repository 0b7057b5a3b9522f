//! `rewind selftest --vm <test VM> [--path <guest file>] [--capture FILE]`: the whole loop,
//! once, against the configured ZVM, one line per step with its time and result: login, VM
//! lookup and VPG health, a tagged checkpoint confirmed (with its listing latency), the
//! checkpoint list, an FLR mount, a browse, the file downloaded and hashed, the unmount
//! confirmed. Nothing stays mounted, on failure or Ctrl-C either. `--capture` writes the shape
//! of every answer (field names and JSON types, no values).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};

use super::{say, warn_config};
use crate::cli::SelftestArgs;
use crate::config::{AuthMode, Config, ZvmConfig};
use crate::deadline::Deadline;
use crate::guard::{self, Health, Phase, Progress, Watch};
use crate::recover::{Plan, Step};
use crate::tag::Tag;
use crate::zvm::{Client, FlrStatus};

/// Set by Ctrl-C: the run stops at its next step and unmounts.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Time allowed for the whole run (an AWS-protected VPG lists a tag after minutes).
const BUDGET: Duration = Duration::from_secs(15 * 60);

/// The steps printed, and whether each held.
struct Steps {
    started: Instant,
    failed: Vec<String>,
    count: usize,
}

impl Steps {
    fn line(&mut self, ok: bool, step: &str, detail: &str) {
        self.count += 1;
        let secs = self.started.elapsed().as_secs_f64();
        say(format!(
            "{secs:>7.1} s  {}  {step}: {detail}",
            if ok { "ok  " } else { "FAIL" }
        ));
        if !ok {
            self.failed.push(step.to_owned());
        }
    }

    fn check<T>(&mut self, step: &str, result: anyhow::Result<(T, String)>) -> Option<T> {
        match result {
            Ok((value, detail)) => {
                self.line(true, step, &detail);
                Some(value)
            }
            Err(e) => {
                self.line(false, step, &format!("{e:#}"));
                None
            }
        }
    }
}

/// The marker `doctor` reads: when `selftest` last held against a ZVM.
pub fn marker(zvm_url: &str) -> anyhow::Result<PathBuf> {
    use sha2::Digest as _;
    let digest = crate::hex(&sha2::Sha256::digest(zvm_url.as_bytes()));
    Ok(crate::config::cache_dir()?
        .join("selftest")
        .join(&digest[..16]))
}

/// `rewind selftest`.
pub fn selftest(config_path: Option<&Path>, args: &SelftestArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let zvm = config.require_zvm()?;
    let mut client = super::client(&config)?;
    if args.capture.is_some() {
        client.keep_shapes();
    }
    if let Err(e) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
        bail!(
            "cannot catch Ctrl-C, so an interrupted self-test could leave a checkpoint mounted: {e}"
        );
    }
    say(format!("rewind selftest against {}", zvm.url));
    let mut steps = Steps {
        started: Instant::now(),
        failed: Vec::new(),
        count: 0,
    };
    let deadline = Deadline::after(BUDGET);
    run(&client, &config, zvm, args, &deadline, &mut steps);
    if let Some(file) = &args.capture {
        let shapes = serde_json::json!({
            "rewind": env!("CARGO_PKG_VERSION"),
            "answers": client.shapes(),
        });
        let text = serde_json::to_string_pretty(&shapes)?;
        std::fs::write(file, text + "\n")
            .with_context(|| format!("cannot write the capture to {}", file.display()))?;
        say(format!(
            "answer shapes (names and types, no values) written to {}",
            file.display()
        ));
    }
    if steps.failed.is_empty() {
        if let Ok(path) = marker(&zvm.url) {
            if let Some(dir) = path.parent() {
                let _ = crate::lockfile::create_private_dir(dir);
            }
            let _ = std::fs::write(&path, crate::time::format_utc(SystemTime::now()));
        }
        say(format!("selftest: all {} steps held", steps.count));
        Ok(())
    } else {
        bail!(
            "selftest: {} of {} steps failed: {}",
            steps.failed.len(),
            steps.count,
            steps.failed.join(", ")
        )
    }
}

fn login_words(zvm: &ZvmConfig) -> String {
    match (zvm.auth, &zvm.client_secret) {
        (AuthMode::Keycloak, Some(_)) => {
            format!(
                "Keycloak client-credentials grant, client {}",
                zvm.client_id
            )
        }
        (AuthMode::Keycloak, None) => format!(
            "Keycloak password grant, user {}, client {}",
            zvm.username, zvm.client_id
        ),
        (AuthMode::Session, _) => format!(
            "9.x session, user {}, AuthenticationMethod {} ({})",
            zvm.username,
            zvm.session_method.number(),
            zvm.session_method.word()
        ),
    }
}

fn stopped() -> anyhow::Result<()> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        bail!("interrupted (Ctrl-C)");
    }
    Ok(())
}

/// Every step; stops at the first that leaves nothing to go on with.
fn run(
    client: &Client,
    config: &Config,
    zvm: &ZvmConfig,
    args: &SelftestArgs,
    deadline: &Deadline,
    steps: &mut Steps,
) {
    let login = client
        .fresh_login(deadline)
        .map(|()| ((), login_words(zvm)))
        .map_err(anyhow::Error::from);
    if steps.check("login", login).is_none() {
        return;
    }
    let lookup = stopped().and_then(|()| lookup(client, config, &args.vm, deadline));
    let Some(vm) = steps.check("VM lookup", lookup) else {
        return;
    };
    let tagged = stopped().and_then(|()| tag(client, &vm, deadline));
    let Some((vpg, checkpoint)) = steps.check("tagged checkpoint", tagged) else {
        return;
    };
    let listing = stopped().and_then(|()| {
        let since = SystemTime::now() - Duration::from_secs(3600);
        let rows = client.checkpoints(&vpg.id, Some(since), deadline)?;
        let ours = rows.iter().any(|c| c.id == checkpoint.id);
        if !ours {
            bail!("checkpoint {} is missing from the list", checkpoint.id);
        }
        Ok((
            (),
            format!(
                "VPG {}: {} checkpoints in the last hour, {} tagged, ours among them",
                vpg.name,
                rows.len(),
                rows.iter().filter(|c| c.tag.is_some()).count()
            ),
        ))
    });
    if steps.check("checkpoint list", listing).is_none() {
        return;
    }
    let offered = stopped().and_then(|()| whole_vm_offered(client, deadline));
    steps.check("whole-VM recovery", offered);
    if args.failover_test {
        let test = stopped().and_then(|()| failover_test(client, &vm, &vpg, &checkpoint, deadline));
        steps.check("failover test", test);
    }
    let plan = Plan {
        vm,
        vpg,
        checkpoint,
        guest_path: args.path.clone().unwrap_or_default(),
        destination: PathBuf::new(),
    };
    match &args.path {
        Some(path) => restore(client, plan, path, deadline, steps),
        None => browse_only(client, &plan, deadline, steps),
    }
}

/// Whether the ZVM offers journal VM restore and failover test, from the task types it
/// lists: nothing is started.
fn whole_vm_offered(client: &Client, deadline: &Deadline) -> anyhow::Result<((), String)> {
    let types = match client.task_types(deadline) {
        Ok(types) => types,
        Err(e) if matches!(e.status(), Some(404 | 405)) => {
            return Ok((
                (),
                String::from(
                    "the ZVM does not list its task types (GET /v1/tasks/types): whether it offers journal VM restore and failover test is unknown",
                ),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let find = |pick: &dyn Fn(&str) -> bool| {
        types
            .iter()
            .find(|t| pick(&t.to_ascii_lowercase()))
            .cloned()
    };
    let test = find(&|t| t.contains("failovertest") && !t.contains("stop"));
    let restore = find(&|t| {
        t.contains("restore")
            && !t.contains("flr")
            && !t.contains("commit")
            && !t.contains("rollback")
    });
    let words = |found: Option<String>, what: &str| match found {
        Some(kind) => format!("{what}: offered (task type {kind})"),
        None => format!(
            "{what}: no task type for it among the {} listed",
            types.len()
        ),
    };
    Ok((
        (),
        format!(
            "{}; {}",
            words(restore, "journal VM restore"),
            words(test, "failover test")
        ),
    ))
}

/// `--failover-test`: a failover test of the VM from the tagged checkpoint, started, followed
/// until the test VM is up, and stopped; the VM itself is not touched.
fn failover_test(
    client: &Client,
    vm: &crate::zvm::Vm,
    vpg: &crate::zvm::VpgRef,
    checkpoint: &crate::zvm::Checkpoint,
    deadline: &Deadline,
) -> anyhow::Result<((), String)> {
    let wait = |task: &str| -> anyhow::Result<()> {
        loop {
            let state = client.task(task, deadline)?;
            match state.state {
                crate::zvm::TaskState::Completed => return Ok(()),
                s if s.is_terminal() => bail!("task {task} ended {s}: {}", state.reason),
                _ => {}
            }
            if INTERRUPTED.load(Ordering::SeqCst) || !deadline.sleep(Duration::from_secs(1)) {
                bail!("task {task} was still running");
            }
        }
    };
    let started = Instant::now();
    let task = client.failover_test(&vpg.id, &checkpoint.id, &[&vm.id], deadline)?;
    let up = wait(&task);
    let up_secs = started.elapsed().as_secs_f64();
    let stop = client.failover_test_stop(&vpg.id, up.is_ok(), "rewind selftest", deadline)?;
    let stopped = wait(&stop);
    up?;
    stopped?;
    Ok((
        (),
        format!(
            "VPG {}: test VM up in {up_secs:.1} s (task {task}), stopped (task {stop})",
            vpg.name
        ),
    ))
}

/// Mount, find and download the file (hashed), unmount: `recover`'s own restore, into a
/// temporary directory that is removed after.
fn restore(client: &Client, mut plan: Plan, path: &str, deadline: &Deadline, steps: &mut Steps) {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            steps.line(false, "FLR", &format!("no temporary directory: {e}"));
            return;
        }
    };
    let name = crate::recover::guest_file_name(path).unwrap_or("file");
    plan.destination = dir.path().join(name);
    let mut session = String::new();
    let mut lines: Vec<(bool, &'static str, String)> = Vec::new();
    let steps_cell = Mutex::new(&mut *steps);
    let mut report = |step: Step| {
        let mut steps = steps_cell
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match step {
            Step::Mounted { session: s } => {
                steps.line(true, "FLR mount", &format!("session {s}"));
                session = s;
            }
            Step::Mounting { .. } => {}
            Step::MountReady { secs } => {
                steps.line(true, "FLR mounted", &format!("browsable after {secs:.1} s"));
            }
            Step::Downloading { volume_path } => steps.line(
                true,
                "browse",
                &format!("{path} is {volume_path} in the mounted checkpoint"),
            ),
            Step::Unmounted { session, task } => {
                lines.push((true, "unmount", format!("session {session}, Zerto task {task}")));
            }
            Step::NotUnmounted { session, error } => lines.push((
                false,
                "unmount",
                format!("session {session} may still be mounted ({error}); end it with `rewind flr end {session}`"),
            )),
        }
    };
    let restored = crate::recover::restore_plan(
        client,
        &plan,
        None,
        false,
        deadline,
        &INTERRUPTED,
        &mut report,
    );
    let steps = steps_cell
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match restored {
        Ok(file) => steps.line(
            true,
            "download",
            &format!("{} bytes, sha256 {}", file.size, file.sha256),
        ),
        Err(e) => steps.line(false, "download", &format!("{e:#}")),
    }
    for (ok, step, detail) in lines {
        steps.line(ok, step, &detail);
    }
    if !session.is_empty() {
        confirm_gone(client, &session, steps);
    }
}

/// Mount, browse the volumes, unmount: the loop without a file.
fn browse_only(client: &Client, plan: &Plan, deadline: &Deadline, steps: &mut Steps) {
    let mounted = client
        .flr_mount(&plan.vpg.id, &plan.vm.id, &plan.checkpoint.id, deadline)
        .map_err(anyhow::Error::from)
        .map(|s| {
            (
                s.clone(),
                format!("session {s} for checkpoint {}", plan.checkpoint.id),
            )
        });
    let Some(session) = steps.check("FLR mount", mounted) else {
        return;
    };
    let browse = wait_mounted(client, &session, deadline).and_then(|secs| {
        steps.line(true, "FLR mounted", &format!("browsable after {secs:.1} s"));
        stopped()?;
        let volumes = client.flr_browse(&session, "", deadline)?;
        let names: Vec<&str> = volumes.iter().map(|v| v.path.as_str()).collect();
        Ok((
            (),
            format!("{} volumes at the root: {}", names.len(), names.join(", ")),
        ))
    });
    steps.check("browse", browse);
    let unmounted = crate::recover::unmount(client, &session)
        .map(|task| ((), format!("session {session}, Zerto task {task}")));
    steps.check("unmount", unmounted);
    confirm_gone(client, &session, steps);
}

/// Polls until the session is mounted; returns how long it took.
fn wait_mounted(client: &Client, session: &str, deadline: &Deadline) -> anyhow::Result<f64> {
    let started = Instant::now();
    loop {
        stopped()?;
        match client
            .flr_session(session, deadline)?
            .and_then(|s| s.status)
        {
            Some(FlrStatus::Mounted) => return Ok(started.elapsed().as_secs_f64()),
            Some(FlrStatus::Failed) => bail!("the mount of session {session} failed"),
            _ => {}
        }
        if !deadline.sleep(Duration::from_millis(500)) {
            bail!("session {session} was not mounted in time");
        }
    }
}

/// Polls until the ZVM no longer lists the session.
fn confirm_gone(client: &Client, session: &str, steps: &mut Steps) {
    let deadline = Deadline::after(Duration::from_secs(120));
    let gone = loop {
        match client.flr_session(session, &deadline) {
            Ok(None) => break Ok(((), format!("session {session} is no longer listed"))),
            Ok(Some(_)) if deadline.sleep(Duration::from_millis(500)) => {}
            Ok(Some(s)) => {
                break Err(anyhow::anyhow!(
                    "session {session} is still listed ({}); end it with `rewind flr end {session}`",
                    s.status.as_ref().map_or("no status", FlrStatus::as_zerto)
                ));
            }
            Err(e) => break Err(e.into()),
        }
    };
    steps.check("unmount confirmed", gone);
}

/// Times each VPG's insert from Zerto's acceptance to the listing of its tag.
#[derive(Default)]
struct Timing {
    accepted: Mutex<Vec<(String, Duration)>>,
    listed: Mutex<Vec<(String, Duration)>>,
}

impl Timing {
    fn latency(&self, vpg: &str) -> Option<Duration> {
        let find = |list: &Mutex<Vec<(String, Duration)>>| {
            list.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .rev()
                .find(|(id, _)| id == vpg)
                .map(|(_, at)| *at)
        };
        Some(find(&self.listed)?.saturating_sub(find(&self.accepted)?))
    }
}

impl Watch for Timing {
    fn progress(&self, event: &Progress<'_>) {
        let list = match event.phase {
            Phase::Task { .. } => &self.accepted,
            Phase::Confirmed { .. } => &self.listed,
            _ => return,
        };
        list.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((event.vpg.id.clone(), event.elapsed));
    }

    fn cancelled(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }
}

/// The VM and the health of each of its VPGs; an error when one cannot give a restorable point.
fn lookup(
    client: &Client,
    config: &Config,
    reference: &str,
    deadline: &Deadline,
) -> anyhow::Result<(crate::zvm::Vm, String)> {
    let vm = super::zerto::find_vm(client, config, reference, deadline)?;
    let mut words = Vec::new();
    let mut unrestorable = Vec::new();
    for vpg in &vm.vpgs {
        let state = client.vpg(&vpg.id, deadline)?;
        let history = state
            .configured_history
            .map(|h| format!("; journal history {}", crate::decision::history_words(h)))
            .unwrap_or_default();
        let status = match guard::health(&state) {
            Health::Restorable => state
                .health
                .clone()
                .unwrap_or_else(|| "status not given".into()),
            Health::Degraded(note) => note,
            Health::Unrestorable(status) => {
                unrestorable.push(format!("{} ({status})", vpg.name));
                status
            }
        };
        words.push(format!("VPG {} ({status}{history})", vpg.name));
    }
    if !unrestorable.is_empty() {
        bail!(
            "VM {} found, but no restorable checkpoint can be taken on {}",
            vm.name,
            unrestorable.join(", ")
        );
    }
    let detail = format!("VM {} ({}) in {}", vm.name, vm.id, words.join(", "));
    Ok((vm, detail))
}

/// A tagged checkpoint on every VPG of the VM, confirmed as listed, with the latency.
fn tag(
    client: &Client,
    vm: &crate::zvm::Vm,
    deadline: &Deadline,
) -> anyhow::Result<((crate::zvm::VpgRef, crate::zvm::Checkpoint), String)> {
    let change = format!(
        "selftest-{}-{}",
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        std::process::id()
    );
    let now = SystemTime::now();
    let tag_for = |names: &str| Tag::new("rewind/selftest", "selftest", names, &change, now);
    let timing = Timing::default();
    let report = guard::guard(
        client,
        std::slice::from_ref(vm),
        &tag_for,
        &crate::config::cache_dir()?.join("locks"),
        deadline,
        &timing,
    );
    let mut words = Vec::new();
    let mut first = None;
    for outcome in &report.vpgs {
        match &outcome.result {
            Ok(tagged) => {
                let latency = timing.latency(&outcome.vpg.id).map_or(String::new(), |d| {
                    format!(
                        ", listed {:.1} s after Zerto accepted the insert",
                        d.as_secs_f64()
                    )
                });
                let cut = match tagged.checkpoint.tag.as_deref() {
                    Some(listed) if listed != tag_for(&vm.name).as_str() => format!(
                        "; Zerto lists its name as {} characters of {}",
                        listed.chars().count(),
                        tag_for(&vm.name).as_str().chars().count()
                    ),
                    _ => String::new(),
                };
                words.push(format!(
                    "VPG {}: checkpoint {} at {}{latency}{cut}",
                    outcome.vpg.name,
                    tagged.checkpoint.id,
                    tagged.checkpoint.time()
                ));
                first.get_or_insert_with(|| (outcome.vpg.clone(), tagged.checkpoint.clone()));
            }
            Err(why) => bail!("VPG {}: {why}", outcome.vpg.name),
        }
    }
    let first = first.context("the VM is in no VPG")?;
    Ok((first, format!("change {change}: {}", words.join("; "))))
}
