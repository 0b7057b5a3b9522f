//! What each tool does, on a blocking thread: the same library calls (and the same error
//! reasons) as the command line, with results as the tools' typed outputs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use serde::Serialize;
use serde_json::Value;

use super::plans::Plans;
use super::tools::{
    CheckpointOut, CheckpointVmArgs, CheckpointVmOut, DEFAULT_LIMIT, FindVmArgs, FindVmOut,
    FlrEndArgs, FlrEndOut, FlrSessionOut, FlrSessionsArgs, FlrSessionsOut, GuardedVpg,
    ListCheckpointsArgs, ListCheckpointsOut, MAX_LIMIT, RecoverFileArgs, RecoverFileOut,
    RecoverPlanArgs, RecoverPlanOut, VmOut, VpgCheckpoints, VpgHealth,
};
use crate::audit::{AuditCheckpoint, Ending};
use crate::commands::zerto::find_vm;
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::decision::{self, Case, Decision, Policy};
use crate::guard::{self, GuardReport, Refusal, VpgOutcome};
use crate::recover::{self, Point, PointError, RecoverRequest, Step};
use crate::tag::{self, Tag};
use crate::zvm::resolve;
use crate::zvm::{Checkpoint, Client, Vm, ZvmError};

/// Time allowed for a lookup tool.
const LOOKUP_BUDGET: Duration = Duration::from_secs(60);
/// Longest a `recover_file` may take (mounting a large VM can take minutes).
const RECOVER_BUDGET: Duration = Duration::from_secs(60 * 60);
/// How far back `find_vm` looks to measure a VPG's cadence.
const CADENCE_WINDOW: Duration = Duration::from_secs(30 * 60);

/// What one call needs besides its arguments.
pub(super) struct Call<'a> {
    pub config_path: Option<&'a Path>,
    /// `mcp/<client name>`: the agent in a checkpoint's tag.
    pub agent: &'a str,
    /// The change id `checkpoint_vm` tags with.
    pub change: &'a str,
    pub plans: &'a Plans,
    /// Set when the client cancels the call or the server is closing.
    pub interrupted: &'a AtomicBool,
    /// Progress for the client.
    pub progress: &'a (dyn Fn(String) + Sync),
}

/// What a call found, for the audit trail.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub change: Option<String>,
    pub vms: Vec<String>,
    /// The references that were not Zerto's names, once resolved.
    pub named: Vec<String>,
    pub vpgs: Vec<String>,
    pub checkpoints: Vec<AuditCheckpoint>,
    /// What the audit trail records, when the tool decides it (`checkpoint_vm`: the hook's
    /// decision or `cancelled`; `recover_file`: `recovered` or `recover-failed`).
    pub decision: Option<Ending>,
}

/// A tool's answer: structured content, and whether it is an error for the model.
#[derive(Debug)]
pub(super) struct Answer {
    pub value: Value,
    pub is_error: bool,
    /// The text the model reads first.
    pub text: String,
}

impl Answer {
    fn ok(value: &impl Serialize, text: String) -> anyhow::Result<Answer> {
        Ok(Answer {
            value: serde_json::to_value(value)?,
            is_error: false,
            text,
        })
    }
}

/// Runs tool `name` with `args` (already a JSON object).
pub(super) fn run(
    name: &str,
    args: Value,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    match name {
        "find_vm" => find(&parse(args)?, call, facts),
        "list_checkpoints" => list_checkpoints(&parse(args)?, call, facts),
        "checkpoint_vm" => checkpoint_vm(parse(args)?, call, facts),
        "recover_plan" => recover_plan(parse(args)?, call, facts),
        "recover_file" => recover_file(&parse(args)?, call, facts),
        "flr_sessions" => flr_sessions(&parse(args)?, call),
        "flr_end" => flr_end(&parse(args)?, call),
        other => bail!("no tool {other:?}"),
    }
}

/// Arguments into their type, or an error naming the field that is wrong: serde's own
/// message names a missing or unknown field but not one of the wrong type (`"limit": "ten"`
/// gave only "invalid type: string, expected usize"), so the path is put in front.
fn parse<T: serde::de::DeserializeOwned>(args: Value) -> anyhow::Result<T> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            anyhow::anyhow!("invalid arguments: {}", e.inner())
        } else {
            anyhow::anyhow!("invalid arguments: `{path}`: {}", e.inner())
        }
    })
}

fn setup(call: &Call<'_>) -> anyhow::Result<(Config, Client)> {
    let config = Config::discover(call.config_path)?;
    for warning in &config.warnings {
        crate::console::err(format!("rewind: warning: {warning}"));
    }
    let client = crate::commands::client(&config)?;
    Ok((config, client))
}

fn vm_out(vm: &Vm) -> VmOut {
    VmOut {
        name: vm.name.clone(),
        id: vm.id.clone(),
    }
}

fn checkpoint_out(c: &Checkpoint) -> CheckpointOut {
    CheckpointOut {
        id: c.id.clone(),
        time: c.time(),
        tag: c.tag.clone(),
        change: c.tag.as_deref().and_then(tag::change_of).map(str::to_owned),
    }
}

fn note_vm(facts: &mut Facts, vm: &Vm) {
    facts.vms = vec![vm.name.clone()];
    facts.vpgs = vm.vpgs.iter().map(|v| v.name.clone()).collect();
}

fn find(args: &FindVmArgs, call: &Call<'_>, facts: &mut Facts) -> anyhow::Result<Answer> {
    let (config, client) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let vm = find_vm(&client, &config, &args.vm, &deadline)?;
    note_vm(facts, &vm);
    let since = SystemTime::now() - CADENCE_WINDOW;
    let vpgs = vm
        .vpgs
        .iter()
        .map(|vpg| {
            let mut out = VpgHealth {
                name: vpg.name.clone(),
                id: vpg.id.clone(),
                status: None,
                health: None,
                actual_rpo_secs: None,
                cadence_secs: None,
                protected_site: None,
                recovery_site: None,
                newest_checkpoint: None,
                error: None,
            };
            let mut errors = Vec::new();
            match client.vpg(&vpg.id, &deadline) {
                Ok(detail) => {
                    out.status = detail.status;
                    out.health = detail.health;
                    out.actual_rpo_secs = detail.actual_rpo_secs;
                    out.protected_site = detail.protected_site;
                    out.recovery_site = detail.recovery_site;
                }
                Err(e) => errors.push(e.to_string()),
            }
            match client.checkpoints(&vpg.id, Some(since), &deadline) {
                Ok(rows) => {
                    let mut times: Vec<SystemTime> = rows.iter().map(|c| c.at).collect();
                    times.sort();
                    if times.len() > 1 {
                        out.cadence_secs = Some(guard::cadence_of(&times).as_secs());
                    }
                    out.newest_checkpoint = rows.iter().max_by_key(|c| c.at).map(checkpoint_out);
                }
                Err(e) => errors.push(e.to_string()),
            }
            if !errors.is_empty() {
                out.error = Some(errors.join("; "));
            }
            out
        })
        .collect::<Vec<_>>();
    let mut text = format!("VM {} ({})", vm.name, vm.id);
    for v in &vpgs {
        let _ = write!(
            text,
            "\n  VPG {} ({}): {}{}",
            v.name,
            v.id,
            v.health.as_deref().unwrap_or("health unknown"),
            v.cadence_secs
                .map(|s| format!(", a checkpoint every ~{s} s"))
                .unwrap_or_default()
        );
    }
    Answer::ok(
        &FindVmOut {
            vm: vm_out(&vm),
            vpgs,
        },
        text,
    )
}

fn list_checkpoints(
    args: &ListCheckpointsArgs,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        bail!("invalid arguments: limit must be between 1 and {MAX_LIMIT}, not {limit}");
    }
    let (config, client) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let vm = find_vm(&client, &config, &args.vm, &deadline)?;
    note_vm(facts, &vm);
    facts.change.clone_from(&args.change);
    let mut vpgs = Vec::new();
    let mut found = 0;
    for vpg in &vm.vpgs {
        let rows = client.checkpoints(&vpg.id, None, &deadline)?;
        let total = rows.len();
        let shown: Vec<&Checkpoint> = rows
            .iter()
            .filter(|c| {
                args.change.as_deref().is_none_or(|change| {
                    c.tag
                        .as_deref()
                        .is_some_and(|t| tag::is_for_change(t, change))
                })
            })
            .collect();
        let skip = shown.len().saturating_sub(limit);
        found += shown.len() - skip;
        vpgs.push(VpgCheckpoints {
            vpg: vpg.name.clone(),
            vpg_id: vpg.id.clone(),
            total,
            checkpoints: shown[skip..].iter().map(|c| checkpoint_out(c)).collect(),
        });
    }
    if let Some(change) = &args.change
        && found == 0
    {
        bail!("no checkpoint of VM {} is tagged change={change}", vm.name);
    }
    let mut text = format!("VM {} ({}): {found} checkpoints shown", vm.name, vm.id);
    for v in &vpgs {
        for c in &v.checkpoints {
            let _ = write!(
                text,
                "\n  {}  {}  {}  {}",
                v.vpg,
                c.id,
                c.time,
                c.tag.as_deref().unwrap_or_default()
            );
        }
    }
    Answer::ok(
        &ListCheckpointsOut {
            vm: vm_out(&vm),
            vpgs,
        },
        text,
    )
}

/// `confirmed`, `denied` or `ask`: the hook's decision in the words of a tool result.
fn label(decision: &Decision) -> &'static str {
    match decision {
        Decision::Context(_) | Decision::Allow { .. } | Decision::None => "confirmed",
        Decision::Deny(_) | Decision::Block(_) => "denied",
        Decision::Ask(_) => "ask",
    }
}

fn checkpoint_vm(
    args: CheckpointVmArgs,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    let mut references = match (args.vm, args.vms) {
        (Some(vm), None) => vec![vm],
        (None, Some(vms)) if !vms.is_empty() => vms,
        (Some(_), Some(_)) => bail!("invalid arguments: give `vm` or `vms`, not both"),
        _ => bail!("invalid arguments: name the VM to checkpoint in `vm` (or several in `vms`)"),
    };
    let mut seen = std::collections::HashSet::new();
    references.retain(|r| seen.insert(r.clone()));
    if references.iter().any(|r| r.trim().is_empty()) {
        bail!("invalid arguments: a VM reference is empty");
    }
    if args.reason.trim().is_empty() {
        bail!("invalid arguments: `reason` must say what is about to happen");
    }
    let config = Config::discover(call.config_path)?;
    if config.broker.socket.is_some() {
        return checkpoint_vm_through_broker(&args.reason, &references, &config, call, facts);
    }
    let (config, client) = setup(call)?;
    let deadline = Deadline::after(config.hook.budget);
    let change = call.change;
    facts.change = Some(change.to_owned());
    facts.vms.clone_from(&references);
    let (decision, report) =
        guard_vms(&args.reason, &references, &config, &client, call, &deadline);
    let vpgs: Vec<GuardedVpg> = report
        .as_ref()
        .map(|(report, tags)| report.vpgs.iter().zip(tags).map(guarded_vpg).collect())
        .unwrap_or_default();
    if let Some((report, _)) = &report {
        facts.vms = report.vms.iter().map(|vm| vm.name.clone()).collect();
        facts.named = crate::audit::named_otherwise(&references, &facts.vms);
        facts.vpgs = report.vpgs.iter().map(|v| v.vpg.name.clone()).collect();
        facts.checkpoints = report.audit_checkpoints();
    }
    // The tasks of the inserts a cancel left waiting (empty: none was sent), when the request
    // was cancelled or its client left while the guard waited.
    let cancelled: Option<Vec<&str>> = report.as_ref().and_then(|(r, _)| {
        let mut any = false;
        let tasks = r
            .vpgs
            .iter()
            .filter_map(|v| match &v.result {
                Err(Refusal::Cancelled { task_id }) => {
                    any = true;
                    task_id.as_deref()
                }
                _ => None,
            })
            .collect();
        any.then_some(tasks)
    });
    facts.decision = Some(if cancelled.is_some() {
        Ending::Cancelled
    } else {
        decision.outcome()
    });
    let reason = decision.text().unwrap_or_default().to_owned();
    let out = CheckpointVmOut {
        decision: if cancelled.is_some() {
            "cancelled"
        } else {
            label(&decision)
        }
        .to_owned(),
        change: change.to_owned(),
        reason: reason.clone(),
        vms: report
            .as_ref()
            .map(|(r, _)| r.vms.iter().map(vm_out).collect())
            .unwrap_or_default(),
        vpgs,
    };
    let stopped = match &cancelled {
        None => String::new(),
        Some(tasks) if tasks.is_empty() => {
            String::from("; stopped waiting before any checkpoint was inserted")
        }
        Some(tasks) => format!(
            "; stopped waiting: the checkpoint inserted by Zerto task {} stays in Zerto (not undone)",
            tasks.join(", ")
        ),
    };
    let text = format!(
        "decision: {}; change id: {change}{stopped}\n{reason}",
        out.decision
    );
    let mut answer = Answer::ok(&out, text)?;
    answer.is_error = out.decision != "confirmed";
    Ok(answer)
}

/// `checkpoint_vm` with `[broker] socket`: the broker tags (as `mcp/<client>`, the reason as
/// the action), confirms and decides; a broker that cannot be asked is a deny (or an ask under
/// `on_zvm_error = "ask"`) naming its socket.
fn checkpoint_vm_through_broker(
    reason: &str,
    references: &[String],
    config: &Config,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    use crate::broker::protocol::{GuardRequest, GuardResult, Op};
    let deadline = Deadline::after(config.hook.budget);
    let change = call.change;
    facts.change = Some(change.to_owned());
    facts.vms = references.to_vec();
    let (on_checkpoint, on_zvm_error) = crate::broker::protocol::policy_words(&config.hook);
    let request = GuardRequest {
        host: call.agent.to_owned(),
        session: None,
        change: change.to_owned(),
        tool: reason.to_owned(),
        vms: references.to_vec(),
        on_checkpoint,
        on_zvm_error,
    };
    let answer =
        crate::broker::client::call(&config.broker, Op::Guard(request), &deadline, &mut |text| {
            (call.progress)(text.to_owned());
        })
        .map_err(|e| e.0)
        .and_then(|value| {
            serde_json::from_value::<GuardResult>(value)
                .map_err(|e| format!("the broker's guard answer is not its protocol ({e})"))
        });
    let (decision, result) = match answer {
        Ok(result) => (result.decision.clone().into_decision(), Some(result)),
        Err(error) => {
            let policy = Policy {
                on_checkpoint: config.hook.on_checkpoint,
                on_zvm_error: config.hook.on_zvm_error,
            };
            let finding = Case::BrokerFailed {
                vms: &references.join(","),
                error: &error,
            };
            let step = format!("the step {reason:?}");
            (decision::decide(&step, change, &finding, &policy), None)
        }
    };
    facts.decision = Some(decision.outcome());
    let (vms, vpgs) = match &result {
        Some(result) => {
            facts.vms.clone_from(&result.vms);
            facts.named.clone_from(&result.named);
            facts.vpgs.clone_from(&result.vpgs);
            facts.checkpoints.clone_from(&result.checkpoints);
            brokered_out(result)
        }
        None => (Vec::new(), Vec::new()),
    };
    let reason_text = decision.text().unwrap_or_default().to_owned();
    let out = CheckpointVmOut {
        decision: label(&decision).to_owned(),
        change: change.to_owned(),
        reason: reason_text.clone(),
        vms,
        vpgs,
    };
    let text = format!(
        "decision: {}; change id: {change}\n{reason_text}",
        out.decision
    );
    let mut answer = Answer::ok(&out, text)?;
    answer.is_error = out.decision != "confirmed";
    Ok(answer)
}

/// The VMs and VPGs of a guard the broker ran, as `checkpoint_vm` shows them.
fn brokered_out(result: &crate::broker::protocol::GuardResult) -> (Vec<VmOut>, Vec<GuardedVpg>) {
    let checkpoint = |c: &crate::broker::protocol::WireCheckpoint| CheckpointOut {
        id: c.id.clone(),
        time: c.time.clone(),
        tag: c.tag.clone(),
        change: c.tag.as_deref().and_then(tag::change_of).map(str::to_owned),
    };
    let vms = result
        .vms
        .iter()
        .zip(
            result
                .vm_ids
                .iter()
                .chain(std::iter::repeat(&String::new())),
        )
        .map(|(name, id)| VmOut {
            name: name.clone(),
            id: id.clone(),
        })
        .collect();
    let vpgs = result
        .details
        .iter()
        .map(|d| GuardedVpg {
            vpg: d.vpg.clone(),
            vms: d.vms.clone(),
            tag: d.tag.clone(),
            checkpoint: d.checkpoint.as_ref().map(checkpoint),
            fallback: d.fallback.as_ref().map(checkpoint),
            error: d.error.clone(),
        })
        .collect();
    (vms, vpgs)
}

/// The hook's mutating path for `references`: resolve every VM, guard them all under one
/// deadline, and decide by the same table. The report, and the tag of each of its VPGs, are
/// there when the guard ran.
fn guard_vms(
    reason: &str,
    references: &[String],
    config: &Config,
    client: &Client,
    call: &Call<'_>,
    deadline: &Deadline,
) -> (Decision, Option<(GuardReport, Vec<String>)>) {
    let policy = Policy {
        on_checkpoint: config.hook.on_checkpoint,
        on_zvm_error: config.hook.on_zvm_error,
    };
    let step = format!("the step {reason:?}");
    let decide = |finding: &Case<'_>| decision::decide(&step, call.change, finding, &policy);
    let refs: Vec<&str> = references.iter().map(String::as_str).collect();
    let locks = match config::cache_dir() {
        Ok(dir) => dir.join("locks"),
        Err(e) => {
            let error = ZvmError::Setup(format!("{e:#}"));
            let all = refs.join(",");
            let finding = Case::ZvmError {
                vms: &all,
                error: &error,
            };
            return (decide(&finding), None);
        }
    };
    (call.progress)(format!("looking up {} in Zerto", refs.join(", ")));
    let vms = match resolve::resolve_targets(client, &refs, &config.vm_aliases, deadline) {
        Ok(Ok(vms)) => vms,
        Ok(Err(unresolved)) => return (decide(&Case::from(&unresolved)), None),
        Err(error) => {
            let all = refs.join(",");
            return (
                decide(&Case::ZvmError {
                    vms: &all,
                    error: &error,
                }),
                None,
            );
        }
    };
    let names: Vec<&str> = vms.iter().map(|vm| vm.name.as_str()).collect();
    (call.progress)(format!(
        "inserting a tagged checkpoint on every VPG of {} and waiting until Zerto lists it",
        names.join(", ")
    ));
    let now = SystemTime::now();
    let tag_for = |vm_names: &str| Tag::new(call.agent, reason, vm_names, call.change, now);
    let watch = crate::progress::Lines::new(call.progress).cancelled_by(call.interrupted);
    let report = guard::guard(client, &vms, &tag_for, &locks, deadline, &watch);
    let decision = decide(&Case::Guarded(&report));
    (call.progress)(format!("{}: {}", names.join(", "), label(&decision)));
    // The guard tags each VPG for the names of the VMs it protects, joined by commas.
    let tags = report
        .vpgs
        .iter()
        .map(|v| tag_for(&v.vms.join(",")).as_str().to_owned())
        .collect();
    (decision, Some((report, tags)))
}

fn guarded_vpg((outcome, tag): (&VpgOutcome, &String)) -> GuardedVpg {
    let (checkpoint, fallback, error) = match &outcome.result {
        Ok(tagged) => (
            Some(checkpoint_out(&tagged.checkpoint)),
            tagged.previous.as_ref().map(checkpoint_out),
            None,
        ),
        Err(why) => (None, None, Some(why.to_string())),
    };
    GuardedVpg {
        vpg: outcome.vpg.name.clone(),
        vms: outcome.vms.clone(),
        tag: tag.clone(),
        checkpoint,
        fallback,
        error,
    }
}

fn recover_plan(
    args: RecoverPlanArgs,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    let point = Point::choose(args.change, args.checkpoint, args.before).map_err(|e| match e {
        PointError::Several => anyhow::anyhow!(
            "invalid arguments: give one of `change`, `checkpoint` or `before`, not several"
        ),
        PointError::Missing => anyhow::anyhow!(
            "invalid arguments: say which point to restore from: `change` (a change id), `checkpoint` (an id) or `before` (a UTC time)"
        ),
        PointError::Time(e) => anyhow::anyhow!("invalid arguments: `before`: {e:#}"),
    })?;
    let request = RecoverRequest {
        vpg: args.vpg,
        volume: args.volume,
        // The destination is decided when the plan runs; a plan only reads.
        out: std::env::temp_dir().join(format!("rewind-plan-{}", uuid::Uuid::new_v4().simple())),
        ..RecoverRequest::new(args.vm, args.path, point)?
    };
    let (config, client) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let plan = recover::plan(&client, &config, &request, &deadline)?;
    note_vm(facts, &plan.vm);
    facts.vpgs = vec![plan.vpg.name.clone()];
    let checkpoint = checkpoint_out(&plan.checkpoint);
    facts.change.clone_from(&checkpoint.change);
    let mut confirm_ids = vec![checkpoint.id.clone()];
    confirm_ids.extend(checkpoint.change.clone());
    let plan_id = call.plans.add(
        plan.clone(),
        request.volume.clone(),
        request.file_name.clone(),
        confirm_ids.clone(),
    );
    let text = format!(
        "plan {plan_id}: restore {} of VM {} from checkpoint {} at {} (VPG {}{}). Show this to the person; \
         recover_file needs this plan id, confirm: true and confirm_id typed by them ({}). Valid for {} s.",
        plan.guest_path,
        plan.vm.name,
        checkpoint.id,
        checkpoint.time,
        plan.vpg.name,
        checkpoint
            .tag
            .as_deref()
            .map(|t| format!(", tag {t}"))
            .unwrap_or_default(),
        confirm_ids.join(" or "),
        call.plans.ttl().as_secs()
    );
    Answer::ok(
        &RecoverPlanOut {
            plan_id,
            expires_in_secs: call.plans.ttl().as_secs(),
            vm: vm_out(&plan.vm),
            vpg: plan.vpg.name.clone(),
            checkpoint,
            path: plan.guest_path.clone(),
            file_name: request.file_name,
            confirm_ids,
        },
        text,
    )
}

fn recover_file(
    args: &RecoverFileArgs,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    if !args.confirm {
        bail!(
            "refused: recover_file needs `confirm: true` after a person has read the plan; nothing was mounted or written"
        );
    }
    let pending = call
        .plans
        .get(&args.plan_id)
        .map_err(|e| anyhow::anyhow!("refused: {e}"))?;
    note_vm(facts, &pending.plan.vm);
    facts.vpgs = vec![pending.plan.vpg.name.clone()];
    let typed = args
        .confirm_id
        .as_deref()
        .map(str::trim)
        .unwrap_or_default();
    if !pending.confirm_ids.iter().any(|id| id == typed) {
        bail!(
            "refused: `confirm_id` must be one of the ids plan {} names ({}), typed by the person approving; nothing was mounted or written",
            args.plan_id,
            pending.confirm_ids.join(" or ")
        );
    }
    let out_dir = match &args.out {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().context("cannot tell the working directory")?,
    };
    if !out_dir.is_dir() {
        bail!(
            "refused: output directory {} does not exist",
            out_dir.display()
        );
    }
    let destination = out_dir.join(&pending.file_name);
    if destination.exists() {
        bail!(
            "refused: {} already exists and is never overwritten; choose another `out`",
            destination.display()
        );
    }
    if !call.plans.take(&args.plan_id) {
        bail!("refused: plan {} is already running or ran", args.plan_id);
    }
    let mut plan = pending.plan;
    plan.destination = destination;
    // From here on this is a restore run: the audit trail says whether it wrote the file.
    facts.decision = Some(Ending::RecoverFailed);
    let (_, client) = setup(call)?;
    let deadline = Deadline::after(RECOVER_BUDGET);
    let restored = recover::restore_plan(
        &client,
        &plan,
        pending.volume.as_deref(),
        false,
        &deadline,
        call.interrupted,
        &mut |step| {
            let text = match step {
                Step::Mounted { session } => format!("mounted: FLR session {session}"),
                Step::Mounting { status, secs } => format!("mounting… {status} ({secs} s)"),
                Step::MountReady { secs } => format!("mounted in {secs:.1} s"),
                Step::Downloading { volume_path } => format!("downloading {volume_path}"),
                Step::Unmounted { session, task } => {
                    format!("unmounted FLR session {session} (task {task})")
                }
                Step::NotUnmounted { session, error } => {
                    crate::console::err(format!(
                        "rewind: could not unmount FLR session {session}: {error}; run `rewind flr end {session}`"
                    ));
                    format!("could not unmount FLR session {session}: {error}")
                }
            };
            (call.progress)(text);
        },
    )?;
    facts.decision = Some(Ending::Recovered);
    let text = format!(
        "restored {} ({} bytes, sha256 {}); FLR session {} unmounted",
        plan.destination.display(),
        restored.size,
        restored.sha256,
        restored.session
    );
    Answer::ok(
        &RecoverFileOut {
            destination: plan.destination.display().to_string(),
            size: restored.size,
            sha256: restored.sha256,
            session: restored.session,
            unmount_task: restored.unmount_task,
        },
        text,
    )
}

fn flr_sessions(args: &FlrSessionsArgs, call: &Call<'_>) -> anyhow::Result<Answer> {
    let (config, client) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let vm_id = match &args.vm {
        Some(reference) => Some(find_vm(&client, &config, reference, &deadline)?.id),
        None => None,
    };
    let sessions: Vec<FlrSessionOut> = client
        .flr_sessions(vm_id.as_deref(), &deadline)?
        .into_iter()
        .map(|s| FlrSessionOut {
            id: s.id,
            status: s.status.map(|status| status.as_zerto().to_owned()),
            vm_id: s.vm_id,
            vpg_id: s.vpg_id,
            checkpoint_id: s.checkpoint_id,
            mount_time: s.mounted_at.map(crate::time::format_utc),
        })
        .collect();
    let text = if sessions.is_empty() {
        String::from("no File Level Restore sessions")
    } else {
        sessions
            .iter()
            .map(|s| {
                format!(
                    "{}  {}  vm {}  checkpoint {}",
                    s.id,
                    s.status.as_deref().unwrap_or("?"),
                    s.vm_id.as_deref().unwrap_or("?"),
                    s.checkpoint_id.as_deref().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Answer::ok(&FlrSessionsOut { sessions }, text)
}

fn flr_end(args: &FlrEndArgs, call: &Call<'_>) -> anyhow::Result<Answer> {
    let (_, client) = setup(call)?;
    let task = recover::unmount(&client, &args.session)?;
    Answer::ok(
        &FlrEndOut {
            session: args.session.clone(),
            unmount_task: task.clone(),
        },
        format!("unmounted FLR session {} (task {task})", args.session),
    )
}
