//! What each tool does, on a blocking thread: the same library calls (and the same error
//! reasons) as the command line, with results as the tools' typed outputs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
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
use crate::broker::protocol::{self, Op};
use crate::commands::zerto::find_vm;
use crate::config::Config;
use crate::deadline::Deadline;
use crate::decision::Decision;
use crate::guard;
use crate::recover::{self, Point, PointError, RecoverRequest, Step};
use crate::tag;
use crate::zvm::{Checkpoint, Client, Vm};

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
    pub(super) fn ok(value: &impl Serialize, text: String) -> anyhow::Result<Answer> {
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
        "restore_vm" => super::restore::restore_vm(&parse(args)?, call, facts),
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

/// Where a tool's ZVM calls go: this process's own client, or the broker.
pub(super) enum Zerto {
    /// Single-user mode: the configuration's `[zvm]`, this user's token cache.
    Direct(Box<Client>),
    /// `[broker] socket`: the broker asks Zerto; no password, token or ZVM address is read
    /// here, and the broker decides who may do what.
    Broker,
}

pub(super) fn setup(call: &Call<'_>) -> anyhow::Result<(Config, Zerto)> {
    let config = Config::discover(call.config_path)?;
    for warning in &config.warnings {
        crate::console::err(format!("rewind: warning: {warning}"));
    }
    let zerto = if config.broker.socket.is_some() {
        Zerto::Broker
    } else {
        Zerto::Direct(Box::new(crate::commands::client(&config)?))
    };
    Ok((config, zerto))
}

/// One request to the broker, its progress passed on to the client; a cancelled call stops
/// waiting for it.
fn ask_broker<T: serde::de::DeserializeOwned>(
    config: &Config,
    op: Op,
    deadline: &Deadline,
    call: &Call<'_>,
) -> anyhow::Result<T> {
    let what = op.name();
    let answer = crate::broker::client::call_watched(
        &config.broker,
        op,
        deadline,
        &mut |text| (call.progress)(text.to_owned()),
        &|| call.interrupted.load(Ordering::SeqCst),
    )?;
    serde_json::from_value(answer)
        .with_context(|| format!("the broker's {what} answer is not its protocol"))
}

/// A VM's checkpoints (since `since` ago, or all) and its VPGs' states, from either side.
fn checkpoints_of(
    config: &Config,
    zerto: &Zerto,
    reference: &str,
    since: Option<Duration>,
    deadline: &Deadline,
    call: &Call<'_>,
) -> anyhow::Result<protocol::VmCheckpoints> {
    match zerto {
        Zerto::Direct(client) => {
            crate::commands::zerto::vm_checkpoints(client, config, reference, since, deadline)
        }
        Zerto::Broker => {
            let op = Op::Checkpoints {
                vm: reference.to_owned(),
                since_secs: since.map(|ago| ago.as_secs()),
            };
            ask_broker(config, op, deadline, call)
        }
    }
}

/// A checkpoint as the broker (and [`crate::commands::zerto::vm_checkpoints`]) lists it.
fn listed(c: &protocol::WireCheckpoint) -> anyhow::Result<Checkpoint> {
    Ok(Checkpoint {
        id: c.id.clone(),
        at: crate::time::parse_utc(&c.time)
            .with_context(|| format!("the time of checkpoint {}", c.id))?,
        tag: c.tag.clone(),
    })
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
    let (config, zerto) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let found = checkpoints_of(
        &config,
        &zerto,
        &args.vm,
        Some(CADENCE_WINDOW),
        &deadline,
        call,
    )?;
    let vm = &found.vm;
    facts.vms = vec![vm.name.clone()];
    facts.vpgs = found.vpgs.iter().map(|v| v.vpg.clone()).collect();
    let mut vpgs = Vec::new();
    for vpg in &found.vpgs {
        let state = vpg.state.clone().unwrap_or_default();
        let rows = vpg
            .checkpoints
            .iter()
            .map(listed)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut times: Vec<SystemTime> = rows.iter().map(|c| c.at).collect();
        times.sort();
        vpgs.push(VpgHealth {
            name: vpg.vpg.clone(),
            id: vpg.id.clone(),
            status: state.status,
            health: state.health,
            actual_rpo_secs: state.actual_rpo_secs,
            cadence_secs: (times.len() > 1).then(|| guard::cadence_of(&times).as_secs()),
            protected_site: state.protected_site,
            recovery_site: state.recovery_site,
            newest_checkpoint: rows.iter().max_by_key(|c| c.at).map(checkpoint_out),
            error: vpg.state_error.clone(),
        });
    }
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
            vm: VmOut {
                name: vm.name.clone(),
                id: vm.id.clone(),
            },
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
    let (config, zerto) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let listing = checkpoints_of(&config, &zerto, &args.vm, None, &deadline, call)?;
    let vm = &listing.vm;
    facts.vms = vec![vm.name.clone()];
    facts.vpgs = listing.vpgs.iter().map(|v| v.vpg.clone()).collect();
    facts.change.clone_from(&args.change);
    let mut vpgs = Vec::new();
    let mut found = 0;
    for vpg in &listing.vpgs {
        let rows = &vpg.checkpoints;
        let total = rows.len();
        let shown: Vec<&protocol::WireCheckpoint> = rows
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
            vpg: vpg.vpg.clone(),
            vpg_id: vpg.id.clone(),
            total,
            checkpoints: shown[skip..]
                .iter()
                .map(|c| CheckpointOut {
                    id: c.id.clone(),
                    time: c.time.clone(),
                    tag: c.tag.clone(),
                    change: c.tag.as_deref().and_then(tag::change_of).map(str::to_owned),
                })
                .collect(),
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
            vm: VmOut {
                name: vm.name.clone(),
                id: vm.id.clone(),
            },
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
    for warning in &config.warnings {
        crate::console::err(format!("rewind: warning: {warning}"));
    }
    let deadline = Deadline::after(config.hook.budget);
    let change = call.change;
    facts.change = Some(change.to_owned());
    let refs: Vec<&str> = references.iter().map(String::as_str).collect();
    let protected = guard::protect(
        guard::Direct::HERE,
        &config,
        &refs,
        &guard::Change {
            caller: guard::Caller::Mcp(call.agent.to_owned()),
            id: change.to_owned(),
            action: args.reason.clone(),
            input: None,
        },
        &deadline,
        &crate::progress::Lines::new(call.progress).cancelled_by(call.interrupted),
    );
    let decision = &protected.decision;
    facts.vms.clone_from(&protected.vms);
    facts.named.clone_from(&protected.named);
    facts.vpgs = protected.vpg_names();
    facts.checkpoints = protected.audit_checkpoints();
    let cancelled = protected.cancelled();
    facts.decision = Some(if cancelled {
        Ending::Cancelled
    } else {
        decision.outcome()
    });
    let said = if cancelled {
        "cancelled"
    } else {
        label(decision)
    };
    (call.progress)(format!("{}: {said}", protected.vms.join(", ")));
    let reason = decision.text().unwrap_or_default().to_owned();
    let out = CheckpointVmOut {
        decision: said.to_owned(),
        change: change.to_owned(),
        reason: reason.clone(),
        vms: protected
            .vms
            .iter()
            .zip(&protected.vm_ids)
            .map(|(name, id)| VmOut {
                name: name.clone(),
                id: id.clone(),
            })
            .collect(),
        vpgs: protected.vpgs.iter().map(guarded_vpg).collect(),
    };
    // The tasks of the inserts a cancel left waiting (none: none was sent), when the request
    // was cancelled or its client left while the guard waited.
    let tasks: Vec<&str> = protected
        .vpgs
        .iter()
        .filter(|v| v.cancelled)
        .filter_map(|v| v.task.as_deref())
        .collect();
    let stopped = match (cancelled, tasks.as_slice()) {
        (false, _) => String::new(),
        (true, []) => String::from("; stopped waiting before any checkpoint was inserted"),
        (true, tasks) => format!(
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

/// One VPG of a guard as `checkpoint_vm` shows it: its tag, its checkpoint (with until about
/// when it can be restored, and a degraded status, in the words of the hook's context) or why
/// there is none.
fn guarded_vpg(vpg: &guard::VpgProtection) -> GuardedVpg {
    let restorable = vpg
        .checkpoint
        .as_ref()
        .zip(vpg.history)
        .map(|(c, history)| crate::decision::restorable_words(c.at, history));
    GuardedVpg {
        vpg: vpg.vpg.name.clone(),
        vms: vpg.vms.clone(),
        tag: vpg.tag.clone(),
        checkpoint: vpg.checkpoint.as_ref().map(checkpoint_out),
        fallback: vpg.fallback.as_ref().map(checkpoint_out),
        restorable,
        restorable_until: vpg.restorable_until().map(crate::time::format_utc),
        status: vpg.degraded.as_deref().map(crate::decision::status_words),
        error: vpg.error.clone(),
    }
}

fn recover_plan(
    args: RecoverPlanArgs,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    let wire = protocol::RecoverRequest {
        vm: args.vm.clone(),
        path: args.path.clone(),
        change: args.change.clone(),
        checkpoint: args.checkpoint.clone(),
        before: args.before.clone(),
        vpg: args.vpg.clone(),
        volume: args.volume.clone(),
    };
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
    let (config, zerto) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let plan = match &zerto {
        Zerto::Direct(client) => recover::plan(client, &config, &request, &deadline)?,
        Zerto::Broker => {
            let planned: protocol::WirePlan = ask_broker(&config, Op::Plan(wire), &deadline, call)?;
            let vpg = crate::zvm::VpgRef {
                id: planned.vpg.id,
                name: planned.vpg.name,
            };
            recover::Plan {
                vm: Vm {
                    id: planned.vm.id,
                    name: planned.vm.name,
                    vpgs: vec![vpg.clone()],
                    ips: planned.vm.ips,
                },
                vpg,
                checkpoint: listed(&planned.checkpoint)?,
                guest_path: planned.path,
                destination: request.destination(),
            }
        }
    };
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
    let (config, zerto) = setup(call)?;
    let deadline = Deadline::after(RECOVER_BUDGET);
    let client = match zerto {
        Zerto::Direct(client) => client,
        Zerto::Broker => {
            let restored = restore_through_broker(&config, &plan, pending.volume, &deadline, call)?;
            facts.decision = Some(Ending::Recovered);
            return restored_answer(&plan.destination, restored);
        }
    };
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
    restored_answer(&plan.destination, restored)
}

/// `recover_file`'s answer for a file written to `destination`.
fn restored_answer(destination: &Path, restored: recover::Restored) -> anyhow::Result<Answer> {
    let text = format!(
        "restored {} ({} bytes, sha256 {}); FLR session {} unmounted",
        destination.display(),
        restored.size,
        restored.sha256,
        restored.session
    );
    Answer::ok(
        &RecoverFileOut {
            destination: destination.display().to_string(),
            size: restored.size,
            sha256: restored.sha256,
            session: restored.session,
            unmount_task: restored.unmount_task,
        },
        text,
    )
}

/// A planned restore run by the broker, which refuses anyone but its operators: the bytes
/// come back, are checked against the broker's hash and written to the plan's destination,
/// never over an existing file.
fn restore_through_broker(
    config: &Config,
    plan: &recover::Plan,
    volume: Option<String>,
    deadline: &Deadline,
    call: &Call<'_>,
) -> anyhow::Result<recover::Restored> {
    let request = protocol::RecoverRequest {
        vm: plan.vm.id.clone(),
        path: plan.guest_path.clone(),
        change: None,
        checkpoint: Some(plan.checkpoint.id.clone()),
        before: None,
        vpg: Some(plan.vpg.id.clone()),
        volume,
    };
    (call.progress)(String::from("asking the rewind broker to restore the file"));
    let recovered: protocol::Recovered = ask_broker(config, Op::Recover(request), deadline, call)?;
    let bytes = recovered.verified_bytes()?;
    let sha256 = recovered.sha256.clone();
    crate::broker::commands::write(&plan.destination, &bytes, false)?;
    Ok(recover::Restored {
        session: recovered.session.unwrap_or_default(),
        size: bytes.len() as u64,
        sha256,
        unmount_task: recovered.unmount_task.unwrap_or_default(),
    })
}

fn flr_sessions(args: &FlrSessionsArgs, call: &Call<'_>) -> anyhow::Result<Answer> {
    let (config, zerto) = setup(call)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let sessions: Vec<FlrSessionOut> = match &zerto {
        Zerto::Direct(client) => {
            let vm_id = match &args.vm {
                Some(reference) => Some(find_vm(client, &config, reference, &deadline)?.id),
                None => None,
            };
            client
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
                .collect()
        }
        Zerto::Broker => {
            let vm_id = match &args.vm {
                Some(reference) => {
                    let op = Op::Resolve {
                        vms: vec![reference.clone()],
                    };
                    let answer = ask_broker(&config, op, &deadline, call)?;
                    Some(crate::broker::commands::one_vm(&answer)?.id)
                }
                None => None,
            };
            let answer: Value = ask_broker(&config, Op::FlrList, &deadline, call)?;
            let text = |s: &Value, key: &str| s[key].as_str().map(str::to_owned);
            answer["sessions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| vm_id.as_deref().is_none_or(|id| s["vm"] == id))
                .map(|s| FlrSessionOut {
                    id: text(s, "id").unwrap_or_default(),
                    status: text(s, "status"),
                    vm_id: text(s, "vm"),
                    vpg_id: text(s, "vpg"),
                    checkpoint_id: text(s, "checkpoint"),
                    mount_time: text(s, "mounted"),
                })
                .collect()
        }
    };
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
    let (config, zerto) = setup(call)?;
    let task = match zerto {
        Zerto::Direct(client) => recover::unmount(&client, &args.session)?,
        Zerto::Broker => {
            let op = Op::FlrEnd {
                session: args.session.clone(),
            };
            let answer: Value = ask_broker(&config, op, &Deadline::after(LOOKUP_BUDGET), call)?;
            answer["task"].as_str().unwrap_or("?").to_owned()
        }
    };
    Answer::ok(
        &FlrEndOut {
            session: args.session.clone(),
            unmount_task: task.clone(),
        },
        format!("unmounted FLR session {} (task {task})", args.session),
    )
}
