//! What the broker does for each operation, with its own configuration and ZVM client: the
//! same code paths as the single-user commands, so both modes decide alike.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use base64::Engine as _;
use serde_json::{Value, json};

use super::protocol::{GuardRequest, GuardResult, Op, RecoverRequest, Recovered, WireDecision};
use crate::audit::{self, Filter, Record};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::host::{Event, Host, ToolCall};
use crate::recover::Point;
use crate::targets::VmRef;
use crate::zvm::{Client, Vm};

/// How often a running guard's progress is looked at, to be sent on.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// Longest field the broker takes into a tag (the tag itself is sanitised and bounded).
const FIELD_MAX: usize = 512;

fn client(config: &Config) -> anyhow::Result<Client> {
    let zvm = config.require_zvm()?;
    let cache = config::cache_dir()?;
    Ok(Client::new(zvm, &cache)?)
}

/// Serves every operation but guard and record.
pub(crate) fn serve(
    config: &Config,
    trail: &Path,
    op: &Op,
    deadline: &Deadline,
) -> anyhow::Result<Value> {
    match op {
        Op::Resolve { vms } => {
            let client = client(config)?;
            let refs: Vec<&str> = vms.iter().map(String::as_str).collect();
            Ok(
                match crate::zvm::resolve::resolve_targets(
                    &client,
                    &refs,
                    &config.vm_aliases,
                    deadline,
                )? {
                    Ok(found) => json!({"vms": found.iter().map(vm_json).collect::<Vec<_>>()}),
                    Err(crate::zvm::resolve::Unresolved::Unknown { references, .. }) => {
                        json!({"unknown": references})
                    }
                    Err(crate::zvm::resolve::Unresolved::Ambiguous {
                        reference,
                        candidates,
                    }) => json!({"ambiguous": {
                        "reference": reference,
                        "candidates": candidates.iter().map(vm_json).collect::<Vec<_>>(),
                    }}),
                },
            )
        }
        Op::Checkpoints { vm } => {
            let client = client(config)?;
            let vm = crate::commands::zerto::find_vm(&client, config, vm, deadline)?;
            let mut vpgs = Vec::new();
            for vpg in &vm.vpgs {
                let rows = client.checkpoints(&vpg.id, None, deadline)?;
                vpgs.push(json!({
                    "vpg": vpg.name,
                    "id": vpg.id,
                    "checkpoints": rows.iter().map(|c| json!({
                        "id": c.id, "time": c.time(), "tag": c.tag,
                    })).collect::<Vec<_>>(),
                }));
            }
            Ok(json!({"vm": vm_json(&vm), "vpgs": vpgs}))
        }
        Op::Log => {
            // Every line as written: the record, and who asked (`peer`, `user`, `op`, `prev`).
            // Read as records first, for the error that names a line that is not one.
            audit::read(trail, &Filter::default())?;
            let text = match std::fs::read_to_string(trail) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => return Err(e).with_context(|| format!("reading {}", trail.display())),
            };
            let records = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(serde_json::from_str::<Value>)
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("reading {}", trail.display()))?;
            let chain = if trail.exists() {
                match audit::verify(trail)? {
                    audit::Chain::Whole { lines, legacy } => {
                        json!({"whole": true, "lines": lines, "legacy": legacy})
                    }
                    audit::Chain::Broken { line, why } => {
                        json!({"whole": false, "line": line, "why": why})
                    }
                }
            } else {
                json!({"whole": true, "lines": 0, "legacy": 0})
            };
            Ok(json!({ "records": records, "chain": chain, "trail": trail }))
        }
        Op::FlrList => {
            let client = client(config)?;
            let sessions = client.flr_sessions(None, deadline)?;
            Ok(json!({"sessions": sessions.iter().map(|s| json!({
                "id": s.id,
                "status": s.status.as_ref().map(crate::zvm::FlrStatus::as_zerto),
                "vm": s.vm_id,
                "checkpoint": s.checkpoint_id,
                "mounted": s.mounted_at.map(crate::time::format_utc),
            })).collect::<Vec<_>>()}))
        }
        Op::FlrEnd { session } => {
            let client = client(config)?;
            let task = crate::recover::unmount(&client, session)?;
            Ok(json!({"session": session, "task": task}))
        }
        Op::Recover(request) => recover(config, request, deadline).map(|r| json!(r)),
        Op::Guard(_) | Op::Record { .. } => {
            anyhow::bail!("{} is served elsewhere", op.name())
        }
    }
}

fn vm_json(vm: &Vm) -> Value {
    json!({
        "name": vm.name,
        "id": vm.id,
        "ips": vm.ips,
        "vpgs": vm.vpgs.iter().map(|v| json!({"name": v.name, "id": v.id})).collect::<Vec<_>>(),
    })
}

/// A File Level Restore into a private directory of the broker's, the bytes answered.
fn recover(
    config: &Config,
    wire: &RecoverRequest,
    deadline: &Deadline,
) -> anyhow::Result<Recovered> {
    let point = Point::choose(
        wire.change.clone(),
        wire.checkpoint.clone(),
        wire.before.clone(),
    )
    .map_err(|e| match e {
        crate::recover::PointError::Missing => {
            anyhow::anyhow!("name the checkpoint: a change id, a checkpoint id or a time")
        }
        crate::recover::PointError::Several => {
            anyhow::anyhow!("name one checkpoint: a change id, a checkpoint id or a time")
        }
        crate::recover::PointError::Time(e) => e.context("before"),
    })?;
    let mut request =
        crate::recover::RecoverRequest::new(wire.vm.clone(), wire.path.clone(), point)?;
    request.vpg.clone_from(&wire.vpg);
    request.volume.clone_from(&wire.volume);
    let cache = config::cache_dir()?;
    let out = tempfile::Builder::new()
        .prefix("recover-")
        .tempdir_in(&cache)
        .context("a private directory for the restored file")?;
    request.out = out.path().to_path_buf();
    let client = client(config)?;
    let plan = crate::recover::plan(&client, config, &request, deadline)?;
    let never = AtomicBool::new(false);
    let restored = crate::recover::restore_plan(
        &client,
        &plan,
        request.volume.as_deref(),
        false,
        deadline,
        &never,
        &mut |_| {},
    )?;
    let bytes = std::fs::read(&plan.destination)
        .with_context(|| format!("reading back {}", plan.destination.display()))?;
    Ok(Recovered {
        vm: plan.vm.name.clone(),
        vpg: plan.vpg.name.clone(),
        checkpoint: plan.checkpoint.id.clone(),
        path: plan.guest_path.clone(),
        sha256: restored.sha256,
        content: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// The guard for a caller: the tag made here from the request's fields, the decision made
/// by the same table as the hook's, with the caller's policy.
pub(crate) fn guard(
    config: &Config,
    request: &GuardRequest,
    deadline: &Deadline,
    progress: &mut dyn FnMut(&str),
) -> Result<(GuardResult, Record), String> {
    let (on_checkpoint, on_zvm_error) = super::server::policy(request)?;
    let mcp = request
        .host
        .strip_prefix("mcp/")
        .is_some_and(|client| !client.is_empty());
    let host = Host::ALL.into_iter().find(|h| h.name() == request.host);
    if host.is_none() && !mcp {
        return Err(format!("host {:?} is not one rewind knows", request.host));
    }
    check_request(config, request)?;
    let mut config = config.clone();
    config.hook.on_checkpoint = on_checkpoint;
    config.hook.on_zvm_error = on_zvm_error;
    let Some(host) = host else {
        progress(&format!(
            "inserting a tagged checkpoint on every VPG of {} and waiting until Zerto lists it",
            request.vms.join(", ")
        ));
        return Ok(guard_for_mcp(&config, request, deadline));
    };
    let call = ToolCall {
        host,
        session: request.session.clone(),
        change: Some(request.change.clone()),
        tool: request.tool.clone(),
        server: None,
        input: Value::Null,
        event: Event::BeforeTool,
        cwd: None,
        server_hint: None,
    };
    let targets: Vec<VmRef> = request
        .vms
        .iter()
        .map(|vm| VmRef {
            reference: vm.clone(),
            source: String::from("the guard request"),
        })
        .collect();
    let watched = crate::hook::WorkerStatus::starting("starting the guard");
    let (decision, facts) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut facts = crate::hook::AuditFacts::default();
            let decision = crate::hook::guard_targets(
                &call, &targets, &config, deadline, &watched, &mut facts,
            );
            (decision, facts)
        });
        let mut said = String::new();
        while !worker.is_finished() {
            let doing = watched.doing();
            if doing != said {
                progress(&doing);
                said = doing;
            }
            std::thread::sleep(PROGRESS_EVERY);
        }
        worker
            .join()
            .map_err(|_| String::from("internal error: the guard panicked"))
    })?;
    let wire = WireDecision::from_decision(&decision)
        .ok_or_else(|| format!("internal error: the guard decided {}", decision.label()))?;
    let record = Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host: host.name().to_owned(),
        session: request.session.clone(),
        change: Some(request.change.clone()),
        tool: request.tool.clone(),
        class: String::from("mutating"),
        vms: facts.vms.clone(),
        named: facts.named.clone(),
        vpgs: facts.vpgs.clone(),
        checkpoints: facts.checkpoints.clone(),
        decision: decision.outcome(),
        reason: decision.text().map(str::to_owned),
        duration_ms: 0,
        args: Value::Null,
    };
    Ok((
        GuardResult {
            decision: wire,
            vms: facts.vms,
            named: facts.named,
            vpgs: facts.vpgs,
            checkpoints: facts.checkpoints,
            details: Vec::new(),
            vm_ids: Vec::new(),
        },
        record,
    ))
}

/// Each VPG of a guard: its tag, and its checkpoint or why none.
fn vpg_details(
    report: &crate::guard::GuardReport,
    tag_for: &dyn Fn(&str) -> crate::tag::Tag,
) -> Vec<super::protocol::VpgDetail> {
    let wire = |c: &crate::zvm::Checkpoint| super::protocol::WireCheckpoint {
        id: c.id.clone(),
        time: c.time(),
        tag: c.tag.clone(),
    };
    report
        .vpgs
        .iter()
        .map(|v| super::protocol::VpgDetail {
            vpg: v.vpg.name.clone(),
            vms: v.vms.clone(),
            tag: tag_for(&v.vms.join(",")).as_str().to_owned(),
            checkpoint: v.result.as_ref().ok().map(|t| wire(&t.checkpoint)),
            fallback: v
                .result
                .as_ref()
                .ok()
                .and_then(|t| t.previous.as_ref().map(wire)),
            error: v.result.as_ref().err().map(ToString::to_string),
        })
        .collect()
}

/// Refuses a guard request naming no VM, too many, no change id, or an oversized field.
fn check_request(config: &Config, request: &GuardRequest) -> Result<(), String> {
    if request.vms.is_empty() {
        return Err(String::from("a guard names at least one VM"));
    }
    if request.vms.len() > config.hook.max_vms {
        return Err(format!(
            "{} VMs in one guard, more than this broker's [hook] max_vms ({})",
            request.vms.len(),
            config.hook.max_vms
        ));
    }
    let fields = [&request.change, &request.tool]
        .into_iter()
        .chain(request.session.as_ref())
        .chain(&request.vms);
    if fields.clone().any(|f| f.len() > FIELD_MAX) || request.change.trim().is_empty() {
        return Err(format!(
            "a change id is needed, and no field may be longer than {FIELD_MAX} bytes"
        ));
    }
    Ok(())
}

/// `rewind mcp`'s `checkpoint_vm`: tagged `ai:<change> | mcp/<client> | <reason> | …` as it tags in
/// single-user mode, decided by the same table, with each VPG's tag and outcome.
fn guard_for_mcp(
    config: &Config,
    request: &GuardRequest,
    deadline: &Deadline,
) -> (GuardResult, Record) {
    use crate::decision::{self, Case, Policy};
    let policy = Policy {
        on_checkpoint: config.hook.on_checkpoint,
        on_zvm_error: config.hook.on_zvm_error,
    };
    let step = format!("the step {:?}", request.tool);
    let decide = |finding: &Case<'_>| decision::decide(&step, &request.change, finding, &policy);
    let refs: Vec<&str> = request.vms.iter().map(String::as_str).collect();
    let all = refs.join(",");
    let mut facts = crate::hook::AuditFacts::default();
    facts.vms.clone_from(&request.vms);
    let mut details = Vec::new();
    let mut vm_ids = Vec::new();
    let prepared = config::cache_dir()
        .map_err(|e| crate::zvm::ZvmError::Setup(format!("{e:#}")))
        .and_then(|cache| {
            let zvm = config
                .require_zvm()
                .map_err(|e| crate::zvm::ZvmError::Setup(format!("{e:#}")))?;
            Ok((Client::new(zvm, &cache)?, cache))
        });
    let decision = match prepared {
        Err(error) => decide(&Case::ZvmError {
            vms: &all,
            error: &error,
        }),
        Ok((client, cache)) => {
            match crate::zvm::resolve::resolve_targets(&client, &refs, &config.vm_aliases, deadline)
            {
                Err(error) => decide(&Case::ZvmError {
                    vms: &all,
                    error: &error,
                }),
                Ok(Err(unresolved)) => decide(&Case::from(&unresolved)),
                Ok(Ok(vms)) => {
                    let now = SystemTime::now();
                    let tag_for = |names: &str| {
                        crate::tag::Tag::new(
                            &request.host,
                            &request.tool,
                            names,
                            &request.change,
                            now,
                        )
                    };
                    let report = crate::guard::guard(
                        &client,
                        &vms,
                        &tag_for,
                        &cache.join("locks"),
                        deadline,
                        &crate::guard::Quiet,
                    );
                    facts.vms = report.vms.iter().map(|vm| vm.name.clone()).collect();
                    vm_ids = report.vms.iter().map(|vm| vm.id.clone()).collect();
                    facts.named = audit::named_otherwise(&refs, &facts.vms);
                    facts.vpgs = report.vpgs.iter().map(|v| v.vpg.name.clone()).collect();
                    facts.checkpoints = report.audit_checkpoints();
                    details = vpg_details(&report, &tag_for);
                    decide(&Case::Guarded(&report))
                }
            }
        }
    };
    let record = Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host: request.host.clone(),
        change: Some(request.change.clone()),
        tool: String::from("checkpoint_vm"),
        class: String::from("mutating"),
        vms: facts.vms.clone(),
        named: facts.named.clone(),
        vpgs: facts.vpgs.clone(),
        checkpoints: facts.checkpoints.clone(),
        decision: decision.outcome(),
        reason: decision.text().map(str::to_owned),
        args: audit::summarise(&json!({"reason": request.tool})),
        ..Record::default()
    };
    let wire = WireDecision::from_decision(&decision).unwrap_or(WireDecision::Deny {
        text: format!(
            "rewind: internal error: the guard decided {}",
            decision.label()
        ),
    });
    (
        GuardResult {
            decision: wire,
            vms: facts.vms,
            named: facts.named,
            vpgs: facts.vpgs,
            checkpoints: facts.checkpoints,
            details,
            vm_ids,
        },
        record,
    )
}
