//! `rewind restore-vm`: a whole VM back to the checkpoint pinned before a change, with Zerto's
//! journal VM restore, or only previewed in a failover test.
//!
//! The restore starts with commit policy Rollback and a wait (`--rollback-after`, one hour by
//! default): Zerto never commits by itself, and a restore that rewind stops following (a
//! crash, a kill, a lost connection) is rolled back by Zerto when the wait runs out. Rewind
//! commits only on the operator's yes (or `--yes`) after the VM was checked; a no, Ctrl-C or
//! a failed `--verify` rolls back, and rewind waits for that task and says how it ended.
//!
//! Every step is written to the audit trail; `--json` prints one document at the end. Exit
//! codes: 0 committed (or previewed), 1 failed, 3 refused with nothing started, 4 rolled back.

mod follow;
mod operator;
mod plan;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::anyhow;
use serde_json::{Value, json};

use crate::cli::{RestoreVmArgs, ShutdownArg};
use crate::config::Config;
use crate::deadline::Deadline;
use crate::zvm::{
    Client, CommitPolicy, DecisionBody, RestoreRequest, ShutdownPolicy, TaskState, ZvmError,
};

pub(crate) use self::follow::Answer;
use self::follow::Ended;
pub(crate) use self::operator::Operator;
pub(crate) use self::operator::Terminal;
pub(crate) use self::plan::Refusal;
use self::plan::{Plan, Wanted};

/// Longest the whole preview may take (a test VM can take minutes to come up).
const PREVIEW_BUDGET: Duration = Duration::from_secs(60 * 60);
/// Longest a commit or rollback is followed.
const DECISION_BUDGET: Duration = Duration::from_secs(30 * 60);
/// Longest a failover test's stop is followed, even after Ctrl-C.
const STOP_BUDGET: Duration = Duration::from_secs(10 * 60);

/// How a run ended (a refusal or failure is an error).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Committed,
    RolledBack(String),
    Previewed,
}

/// What the run did, for the `--json` document and the audit trail.
struct Report<'a> {
    operator: &'a dyn Operator,
    json: bool,
    started: SystemTime,
    user: String,
    change: Option<String>,
    preview: bool,
    vm: Option<String>,
    vm_id: Option<String>,
    vpg: Option<(String, String)>,
    checkpoint: Option<crate::zvm::Checkpoint>,
    found_by: Option<&'static str>,
    others: Vec<Value>,
    policy: Value,
    steps: Vec<Value>,
    zerto: Vec<String>,
}

impl<'a> Report<'a> {
    fn new(args: &RestoreVmArgs, operator: &'a dyn Operator) -> Report<'a> {
        Report {
            operator,
            json: args.json,
            started: SystemTime::now(),
            user: operator.user(),
            change: args.change.clone(),
            preview: args.preview,
            vm: None,
            vm_id: None,
            vpg: None,
            checkpoint: None,
            found_by: None,
            others: Vec::new(),
            policy: Value::Null,
            steps: Vec::new(),
            zerto: Vec::new(),
        }
    }

    /// A line for the operator: stdout, or stderr when stdout carries the JSON document.
    fn say(&self, line: impl std::fmt::Display) {
        self.operator.say(&line.to_string(), self.json);
    }

    /// One step: into the document, and into the audit trail.
    fn step(&mut self, step: &str, task: Option<&str>, state: &str, detail: &str) {
        self.steps.push(json!({
            "step": step, "task": task, "state": state,
            "detail": (!detail.is_empty()).then_some(detail),
        }));
        let decision = match step {
            "committed" => crate::audit::Ending::VmRestored,
            "rolled-back" => crate::audit::Ending::RolledBack,
            "refused" => crate::audit::Ending::Refused,
            "failed" => crate::audit::Ending::Error,
            _ => crate::audit::Ending::Ok,
        };
        let reason = match task {
            Some(task) => format!("{step}: task {task} {state}{}", suffix(detail)),
            None => format!("{step}: {state}{}", suffix(detail)),
        };
        self.trail(decision, reason, step, task);
    }

    fn trail(
        &self,
        decision: crate::audit::Ending,
        reason: String,
        step: &str,
        task: Option<&str>,
    ) {
        let args = json!({
            "user": self.user,
            "step": step,
            "preview": self.preview,
            "task": task,
            "vm_id": self.vm_id,
            "vpg_id": self.vpg.as_ref().map(|v| &v.1),
            "checkpoint": self.checkpoint.as_ref().map(|c| &c.id),
            "checkpoint_time": self.checkpoint.as_ref().map(crate::zvm::Checkpoint::time),
        });
        let record = crate::audit::Record {
            time: crate::time::format_utc_millis(SystemTime::now()),
            host: String::from("cli"),
            session: None,
            change: self.change.clone(),
            tool: String::from("rewind restore-vm"),
            class: String::from("restore-vm"),
            vms: self.vm.clone().into_iter().collect(),
            named: Vec::new(),
            vpgs: self.vpg.as_ref().map(|v| v.0.clone()).into_iter().collect(),
            checkpoints: Vec::new(),
            decision,
            reason: Some(reason),
            duration_ms: u64::try_from(self.started.elapsed().unwrap_or_default().as_millis())
                .unwrap_or(u64::MAX),
            input: None,
            args: crate::audit::summarise(&args),
        };
        self.operator.record(&record);
    }

    fn document(&self, outcome: &str, reason: Option<&str>) -> Value {
        json!({
            "outcome": outcome,
            "reason": reason,
            "mode": if self.preview { "preview" } else { "restore" },
            "user": self.user,
            "vm": self.vm.as_ref().map(|name| json!({"name": name, "id": self.vm_id})),
            "vpg": self.vpg.as_ref().map(|(name, id)| json!({"name": name, "id": id})),
            "change": self.change,
            "checkpoint": self.checkpoint.as_ref().map(|c| json!({
                "id": c.id, "time": c.time(), "tag": c.tag, "found_by": self.found_by,
            })),
            "other_vpgs": self.others,
            "policy": self.policy,
            "steps": self.steps,
            "zerto_said": self.zerto,
        })
    }
}

fn suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    }
}

/// `rewind restore-vm` with the ZVM's credentials here: runs, reports, and returns the
/// documented exit code.
pub(crate) fn restore_vm(config_path: Option<&Path>, args: &RestoreVmArgs) -> ExitCode {
    let mut terminal = Terminal::new();
    let config = Config::discover(config_path);
    if let Ok(config) = &config {
        crate::commands::warn_config(config);
        terminal.audit = config.hook.audit_path().ok().map(Path::to_path_buf);
        terminal.syslog.clone_from(&config.audit.syslog);
    }
    let document = execute(config.as_ref(), args, &terminal);
    finish(&document, args.json)
}

/// Runs a restore for `operator` and returns its document (what `--json` prints); a refusal
/// or failure is its `outcome`, with the `reason`, and is in the trail.
pub(crate) fn execute(
    config: Result<&Config, &anyhow::Error>,
    args: &RestoreVmArgs,
    operator: &dyn Operator,
) -> Value {
    let mut report = Report::new(args, operator);
    let result = match config {
        Ok(config) => run(config, args, &mut report),
        Err(e) => Err(anyhow!("{e:#}")),
    };
    let (outcome, reason) = match &result {
        Ok(Outcome::Committed) => ("committed", None),
        Ok(Outcome::Previewed) => ("previewed", None),
        Ok(Outcome::RolledBack(why)) => ("rolled-back", Some(why.clone())),
        Err(e) if e.is::<Refusal>() => ("refused", Some(format!("{e:#}"))),
        Err(e) => ("failed", Some(format!("{e:#}"))),
    };
    if let (Err(_), Some(reason)) = (&result, &reason) {
        report.step(outcome, None, "", reason);
    }
    report.document(outcome, reason.as_deref())
}

/// Says a refusal's or failure's reason, prints the document with `json`, and returns the
/// documented exit code of its outcome.
pub(crate) fn finish(document: &Value, json: bool) -> ExitCode {
    let outcome = document["outcome"].as_str().unwrap_or("failed");
    if matches!(outcome, "refused" | "failed") {
        let reason = document["reason"].as_str().unwrap_or("no reason given");
        crate::console::err(format!("error: {reason}"));
    }
    if json {
        let _ = crate::commands::print_json(document);
    }
    crate::exit::code(match outcome {
        "committed" | "previewed" => crate::exit::OK,
        "rolled-back" => crate::exit::ROLLED_BACK,
        "refused" => crate::exit::REFUSED,
        _ => crate::exit::FAILED,
    })
}

fn run(config: &Config, args: &RestoreVmArgs, report: &mut Report) -> anyhow::Result<Outcome> {
    let client = crate::commands::client(config)?;
    let deadline = Deadline::after(Duration::from_secs(120));
    let wanted = Wanted {
        vm: &args.vm,
        change: args.change.as_deref(),
        checkpoint: args.checkpoint.as_deref(),
        vpg: args.vpg.as_deref(),
    };
    let mut found = None;
    let planned = plan::plan(&client, config, &wanted, &mut found, &deadline);
    if let Some((vm, vpg, checkpoint)) = found {
        report.vm = Some(vm.name);
        report.vm_id = Some(vm.id);
        report.vpg = vpg.map(|v| (v.name, v.id));
        report.checkpoint = checkpoint;
    }
    let plan = planned?;
    report.found_by = Some(plan.found_by.as_str());
    report.others = plan
        .others
        .iter()
        .map(|(vpg, cp)| json!({"vpg": vpg.name, "checkpoint": cp.id, "time": cp.time()}))
        .collect();
    show_plan(report, &plan);
    let operator = report.operator;
    let interrupted = operator.interrupted();
    if args.preview {
        operator.catch_interrupt()?;
        return preview(&client, &plan, args, report, interrupted);
    }
    let shutdown = match args.shutdown {
        ShutdownArg::Force => ShutdownPolicy::ForceShutdown,
        ShutdownArg::Graceful => ShutdownPolicy::Shutdown,
        ShutdownArg::None => ShutdownPolicy::None,
    };
    let request = RestoreRequest {
        vpg_id: plan.vpg.id.clone(),
        checkpoint_id: plan.checkpoint.id.clone(),
        commit_policy: CommitPolicy::Rollback,
        shutdown_policy: shutdown,
        wait: *args.rollback_after,
    };
    report.policy = json!({
        "commit": "Rollback", "rollback_after_secs": request.wait.as_secs(),
        "shutdown": shutdown.as_zerto(),
    });
    report.say(format!(
        "policy:      Zerto rolls the restore back by itself {} after it is ready unless it is committed; the running VM: {}",
        humantime::format_duration(request.wait),
        shutdown.as_zerto()
    ));
    confirm_start(args, operator)?;
    restore(&client, &plan, &request, args, report, interrupted)
}

fn show_plan(report: &Report, plan: &Plan) {
    report.say(format!("VM:          {} ({})", plan.vm.name, plan.vm.id));
    report.say(format!(
        "VPG:         {} ({}){}",
        plan.vpg.name,
        plan.vpg.id,
        if plan.vm.vpgs.len() > 1 {
            format!(" of {}: {}", plan.vm.vpgs.len(), plan.vm.vpg_names())
        } else {
            String::new()
        }
    ));
    report.say(format!(
        "checkpoint:  {} at {}{} (found by {})",
        plan.checkpoint.id,
        plan.checkpoint.time(),
        plan.checkpoint
            .tag
            .as_deref()
            .map(|t| format!(" ({t})"))
            .unwrap_or_default(),
        match plan.found_by {
            plan::FoundBy::Trail => "the id the audit trail recorded for the change",
            plan::FoundBy::Tag => "the change's tag in Zerto's list",
            plan::FoundBy::Id => "the id given",
        }
    ));
    for (vpg, cp) in &plan.others {
        report.say(format!(
            "also:        checkpoint {} of the same change in VPG {} (not used; --vpg {} restores from it)",
            cp.id, vpg.name, vpg.name
        ));
    }
}

/// The yes to start: `--yes`, or the operator's on a terminal; nothing without either.
/// From then on, Ctrl-C rolls back or stops what was started instead of ending the process.
fn confirm_start(args: &RestoreVmArgs, operator: &dyn Operator) -> anyhow::Result<()> {
    if args.yes {
        return operator.catch_interrupt();
    }
    if !operator.can_answer() {
        return Err(anyhow!(Refusal(String::from(
            "nothing was started: no terminal to confirm on; pass --yes to restore without asking"
        ))));
    }
    operator.catch_interrupt()?;
    match operator.ask("Restore this VM to the checkpoint? [y/N] ") {
        Answer::Yes => Ok(()),
        Answer::No | Answer::Interrupted => Err(anyhow!(Refusal(String::from(
            "not confirmed; nothing was started"
        )))),
    }
}

/// Starts the restore, follows it to "ready for commit", checks the VM, then commits or
/// rolls back.
fn restore(
    client: &Client,
    plan: &Plan,
    request: &RestoreRequest,
    args: &RestoreVmArgs,
    report: &mut Report,
    interrupted: &AtomicBool,
) -> anyhow::Result<Outcome> {
    let budget = request.wait;
    let deadline = Deadline::after(budget);
    let task = match client.restore_vm(&plan.vm.id, request, &deadline) {
        Ok(task) => task,
        Err(e) => return Err(start_refused(&e, "the restore", request.wait, report)),
    };
    report.step("restore-started", Some(&task), "accepted", "");
    report.say(format!("restore:     task {task} started"));
    let ended = follow::follow(client, &task, "restoring", true, &deadline, interrupted)?;
    let ready = match ended {
        Ended::Done(state) => state,
        Ended::Failed(state, reason) => {
            report.zerto.push(reason.clone());
            report.step("restore-ended", Some(&task), &state.to_string(), &reason);
            return Err(anyhow!(
                "Zerto's restore task {task} ended {state}: {}; the VM was not restored",
                if reason.is_empty() {
                    "no reason given"
                } else {
                    &reason
                }
            ));
        }
        Ended::Interrupted => {
            return roll_back(client, plan, report, "interrupted (Ctrl-C) while restoring");
        }
        Ended::TimedOut(_) => {
            return roll_back(client, plan, report, "not ready for commit in time");
        }
    };
    let shape = if ready == TaskState::WaitingForUserInput {
        "the start task waits for input"
    } else {
        "the start task completed"
    };
    report.step("ready-for-commit", Some(&task), &ready.to_string(), shape);
    report.say(format!("ready:       the VM is ready for commit ({shape})"));
    check_vm(client, plan, report, &deadline);
    if let Some(command) = &args.verify {
        report.say(format!("verify:      {command}"));
        let (ok, words) = report.operator.verify(command)?;
        report.step(
            "verified",
            None,
            if ok { "passed" } else { "failed" },
            &words,
        );
        if interrupted.load(Ordering::SeqCst) {
            return roll_back(client, plan, report, "interrupted (Ctrl-C) while verifying");
        }
        if !ok {
            return roll_back(client, plan, report, &format!("--verify failed ({words})"));
        }
    }
    let commit = if args.yes {
        Answer::Yes
    } else {
        report.operator.ask("Commit the restore? [y/N] ")
    };
    match commit {
        Answer::Yes => commit_restore(client, plan, report),
        Answer::No => roll_back(client, plan, report, "the operator answered no"),
        Answer::Interrupted => roll_back(
            client,
            plan,
            report,
            "interrupted (Ctrl-C) at the commit question",
        ),
    }
}

/// The error for a start Zerto did not accept: a 4xx is a refusal (nothing started), any
/// other a failure, with what Zerto said.
fn start_refused(e: &ZvmError, what: &str, wait: Duration, report: &mut Report) -> anyhow::Error {
    if let ZvmError::Status { message, .. } = e {
        report.zerto.push(message.clone());
    }
    match e.status() {
        Some(400..=499) => anyhow!(Refusal(format!(
            "Zerto refused {what}: {e}; nothing was started"
        ))),
        Some(_) => anyhow!("Zerto failed to start {what}: {e}"),
        None => anyhow!(
            "{what} got no answer ({e}): if Zerto started it, it rolls it back by itself within {} of being ready",
            humantime::format_duration(wait)
        ),
    }
}

/// What the ZVM says of the VM now: still listed, in which VPGs, and the VPG's health. Said
/// and recorded, never a reason to roll back by itself: what a journal restore does to the
/// VM's listing is not documented, and the operator (or `--verify`) judges.
fn check_vm(client: &Client, plan: &Plan, report: &mut Report, deadline: &Deadline) {
    let listed = client.vms(Some(&plan.vm.id), deadline);
    let vpg = client.vpg(&plan.vpg.id, deadline);
    let text = match (&listed, &vpg) {
        (_, Err(e)) => format!(
            "the ZVM could not be asked about VPG {}: {e}",
            plan.vpg.name
        ),
        (Ok(vms), Ok(vpg)) if !vms.is_empty() => format!(
            "VM {} is listed by Zerto in VPG {}; VPG {} is {}",
            plan.vm.name,
            vms[0].vpg_names(),
            vpg.name,
            vpg.health.as_deref().unwrap_or("of unknown health")
        ),
        (Ok(_), _) => format!(
            "Zerto no longer lists VM {} ({}) under that id",
            plan.vm.name, plan.vm.id
        ),
        (Err(e), _) => format!("the ZVM could not be asked about the VM: {e}"),
    };
    report.say(format!("ZVM:         {text}"));
    let ok = matches!((&listed, &vpg), (Ok(vms), Ok(_)) if !vms.is_empty());
    report.step(
        "vm-state",
        None,
        if ok { "listed" } else { "unknown" },
        &text,
    );
}

/// `RestoreCommit` or `RestoreRollback` in the API reference's body form, and once more with
/// no body when the ZVM refuses that body (Zerto's SDK sends none).
fn decide(
    client: &Client,
    plan: &Plan,
    commit: bool,
    deadline: &Deadline,
) -> Result<(Option<String>, DecisionBody), ZvmError> {
    let send = |form| {
        if commit {
            client.restore_commit(&plan.vm.id, &plan.vpg.id, form, deadline)
        } else {
            client.restore_rollback(&plan.vm.id, &plan.vpg.id, form, deadline)
        }
    };
    match send(DecisionBody::VpgString) {
        Ok(task) => Ok((task, DecisionBody::VpgString)),
        Err(e) if matches!(e.status(), Some(400 | 415)) => {
            send(DecisionBody::Empty).map(|task| (task, DecisionBody::Empty))
        }
        Err(e) => Err(e),
    }
}

fn commit_restore(client: &Client, plan: &Plan, report: &mut Report) -> anyhow::Result<Outcome> {
    let deadline = Deadline::after(DECISION_BUDGET);
    let (task, form) = match decide(client, plan, true, &deadline) {
        Ok(answer) => answer,
        Err(e) => {
            report.step("commit-refused", None, "error", &e.to_string());
            crate::console::err(format!("the commit failed ({e}); rolling back"));
            return roll_back(client, plan, report, &format!("the commit failed: {e}"));
        }
    };
    let ended = follow_decision(
        client,
        task.as_deref(),
        "committing",
        form,
        report,
        &deadline,
    )?;
    if let Some(Ended::Failed(state, reason)) = ended {
        report.zerto.push(reason.clone());
        report.step("commit-ended", task.as_deref(), &state.to_string(), &reason);
        return Err(anyhow!(
            "Zerto's commit task {} ended {state}: {reason}; the restore stays uncommitted and Zerto rolls it back by itself when its wait runs out",
            task.as_deref().unwrap_or("?")
        ));
    }
    report.step("committed", task.as_deref(), "Completed", "");
    report.say(format!(
        "committed:   VM {} is at checkpoint {} ({})",
        plan.vm.name,
        plan.checkpoint.id,
        plan.checkpoint.time()
    ));
    Ok(Outcome::Committed)
}

/// Rolls back under its own budget (Ctrl-C no longer stops anything) and waits for the end.
fn roll_back(
    client: &Client,
    plan: &Plan,
    report: &mut Report,
    why: &str,
) -> anyhow::Result<Outcome> {
    report.say(format!("rollback:    {why}"));
    let deadline = Deadline::after(DECISION_BUDGET);
    let (task, form) = decide(client, plan, false, &deadline).map_err(|e| {
        anyhow!("{why}, and the rollback failed: {e}; Zerto rolls the restore back by itself when its wait runs out")
    })?;
    let ended = follow_decision(
        client,
        task.as_deref(),
        "rolling back",
        form,
        report,
        &deadline,
    )?;
    if let Some(Ended::Failed(state, reason)) = ended {
        report.zerto.push(reason.clone());
        report.step(
            "rollback-ended",
            task.as_deref(),
            &state.to_string(),
            &reason,
        );
        return Err(anyhow!(
            "{why}; Zerto's rollback task {} ended {state}: {reason}",
            task.as_deref().unwrap_or("?")
        ));
    }
    report.step("rolled-back", task.as_deref(), "Completed", why);
    report.say(format!(
        "rolled back: VM {} is as it was before the restore",
        plan.vm.name
    ));
    Ok(Outcome::RolledBack(why.to_owned()))
}

/// Follows a commit's or rollback's task, when Zerto answered one.
fn follow_decision(
    client: &Client,
    task: Option<&str>,
    what: &str,
    form: DecisionBody,
    report: &mut Report,
    deadline: &Deadline,
) -> anyhow::Result<Option<Ended>> {
    let body = match form {
        DecisionBody::VpgString => "the VPG id as the body",
        DecisionBody::Empty => "no body",
    };
    let step = if what == "committing" {
        "commit-started"
    } else {
        "rollback-started"
    };
    report.step(step, task, "accepted", body);
    let Some(task) = task else {
        report.say(format!(
            "{what}: Zerto answered no task id; it accepted the request"
        ));
        return Ok(None);
    };
    // Ctrl-C must not stop the rollback or commit being followed.
    let never = AtomicBool::new(false);
    let ended = follow::follow(client, task, what, false, deadline, &never)?;
    if let Ended::TimedOut(progress) = ended {
        return Err(anyhow!(
            "Zerto's task {task} ({what}) was still running at {} % when the time ran out",
            progress.unwrap_or(0)
        ));
    }
    Ok(Some(ended))
}

/// `--preview`: a failover test of the VM from the checkpoint, up until the operator is
/// done, then stopped; the VM itself is not touched.
fn preview(
    client: &Client,
    plan: &Plan,
    args: &RestoreVmArgs,
    report: &mut Report,
    interrupted: &AtomicBool,
) -> anyhow::Result<Outcome> {
    let deadline = Deadline::after(PREVIEW_BUDGET);
    let task = client
        .failover_test(&plan.vpg.id, &plan.checkpoint.id, &[&plan.vm.id], &deadline)
        .map_err(|e| start_refused(&e, "the failover test", Duration::ZERO, report))?;
    report.step("test-started", Some(&task), "accepted", "");
    report.say(format!("preview:     failover test task {task} started"));
    let ended = follow::follow(
        client,
        &task,
        "test starting",
        false,
        &deadline,
        interrupted,
    );
    let up = match &ended {
        Ok(Ended::Done(_)) => true,
        Ok(Ended::Failed(state, reason)) => {
            report.zerto.push(reason.clone());
            report.step("test-start-ended", Some(&task), &state.to_string(), reason);
            false
        }
        _ => false,
    };
    let mut summary = String::from("stopped before the test VM was up");
    if up {
        report.step("test-up", Some(&task), "Completed", "");
        let site = plan
            .vpg
            .recovery_site
            .as_deref()
            .unwrap_or("the recovery site");
        report.say(format!(
            "test VM:     \"{} - testing recovery\" at {site}, on the test network of VPG {} (Zerto's names; the VM itself is not touched)",
            plan.vm.name, plan.vpg.name
        ));
        summary = hold(args, report, interrupted);
    }
    let outcome = stop_test(client, plan, up, &summary, report);
    match ended? {
        Ended::Failed(state, reason) => Err(anyhow!(
            "Zerto's failover test task {task} ended {state}: {reason}"
        )),
        Ended::Interrupted => Err(anyhow!(
            "interrupted (Ctrl-C); the failover test was stopped"
        )),
        Ended::TimedOut(_) => Err(anyhow!(
            "the test VM was not up in time; the test was stopped"
        )),
        Ended::Done(_) => outcome.map(|()| Outcome::Previewed),
    }
}

/// Keeps the test up as long as asked: `--hold`, or until Enter on a terminal (not with
/// `--yes`). Returns the test's summary for Zerto.
fn hold(args: &RestoreVmArgs, report: &Report, interrupted: &AtomicBool) -> String {
    if let Some(hold) = args.hold {
        report.say(format!(
            "holding:     {hold} (Ctrl-C stops the test sooner)"
        ));
        let until = Deadline::after(*hold);
        follow::pause(*hold, &until, interrupted);
    } else if !args.yes && report.operator.can_answer() {
        report
            .operator
            .enter("Look at the test VM, then press Enter to stop the test ");
    }
    format!(
        "rewind restore-vm --preview of {} by {}",
        report.vm.as_deref().unwrap_or("?"),
        report.user
    )
}

/// Stops the failover test under its own budget, follows the stop, and says whether Zerto
/// re-tagged the tested checkpoint (it is found by id afterwards either way).
fn stop_test(
    client: &Client,
    plan: &Plan,
    success: bool,
    summary: &str,
    report: &mut Report,
) -> anyhow::Result<()> {
    let deadline = Deadline::after(STOP_BUDGET);
    let task = client
        .failover_test_stop(&plan.vpg.id, success, summary, &deadline)
        .map_err(|e| anyhow!("the failover test could not be stopped: {e}; stop it in Zerto"))?;
    report.step("test-stop-started", Some(&task), "accepted", summary);
    let never = AtomicBool::new(false);
    match follow::follow(client, &task, "test stopping", false, &deadline, &never)? {
        Ended::Done(_) => report.step("test-stopped", Some(&task), "Completed", ""),
        Ended::Failed(state, reason) => {
            report.step("test-stopped", Some(&task), &state.to_string(), &reason);
            return Err(anyhow!("Zerto's stop task {task} ended {state}: {reason}"));
        }
        Ended::Interrupted | Ended::TimedOut(_) => {
            return Err(anyhow!(
                "the failover test was still stopping (task {task})"
            ));
        }
    }
    report.say(format!(
        "stopped:     failover test (task {task}); the test VM is removed"
    ));
    let retagged = client
        .checkpoints_between(
            &plan.vpg.id,
            Some(plan.checkpoint.at - Duration::from_secs(1)),
            Some(plan.checkpoint.at + Duration::from_secs(1)),
            &deadline,
        )
        .ok()
        .and_then(|rows| rows.into_iter().find(|c| c.id == plan.checkpoint.id))
        .filter(|c| c.tag != plan.checkpoint.tag);
    if let Some(now) = retagged {
        let tag = now.tag.unwrap_or_default();
        report.say(format!(
            "re-tagged:   Zerto now tags checkpoint {} {tag:?}; rewind finds it by id",
            plan.checkpoint.id
        ));
        report.step("checkpoint-retagged", None, &tag, "");
    }
    Ok(())
}
