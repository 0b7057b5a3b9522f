//! What the broker does for each operation, with its own configuration and ZVM client: the
//! same code paths as the single-user commands, so both modes decide alike.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use base64::Engine as _;
use serde_json::{Value, json};

use super::protocol::{
    GuardRequest, GuardResult, Op, RecoverRequest, Recovered, Status, StatusCheck, WireCheckpoint,
    WirePlan, WireVm, WireVpg,
};
use crate::audit::{self, Filter, Record};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::guard::{Caller, Change};
use crate::recover::Point;
use crate::zvm::{Client, ZvmError};

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
                    Ok(found) => json!({"vms": found.iter().map(WireVm::from).collect::<Vec<_>>()}),
                    Err(crate::zvm::resolve::Unresolved::Unknown { references, .. }) => {
                        json!({"unknown": references})
                    }
                    Err(crate::zvm::resolve::Unresolved::Ambiguous {
                        reference,
                        candidates,
                    }) => json!({"ambiguous": {
                        "reference": reference,
                        "candidates": candidates.iter().map(WireVm::from).collect::<Vec<_>>(),
                    }}),
                },
            )
        }
        Op::Vms => {
            let client = client(config)?;
            let vms = client.vms(None, deadline)?;
            Ok(json!({"vms": vms.iter().map(WireVm::from).collect::<Vec<_>>()}))
        }
        Op::Checkpoints { vm, since_secs } => {
            let client = client(config)?;
            let since = since_secs.map(Duration::from_secs);
            let found =
                crate::commands::zerto::vm_checkpoints(&client, config, vm, since, deadline)?;
            Ok(json!(found))
        }
        Op::Plan(request) => plan(config, request, deadline).map(|p| json!(p)),
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
                    audit::Chain::Whole {
                        lines,
                        legacy,
                        anchored,
                    } => {
                        json!({"whole": true, "lines": lines, "legacy": legacy, "anchored": anchored})
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
        Op::Prove {
            record,
            fingerprints,
        } => {
            let proof = audit::prove(trail, *record, fingerprints)?;
            Ok(json!({ "proof": format!("{proof:?}"), "trail": trail }))
        }
        Op::FlrList => {
            let client = client(config)?;
            let sessions = client.flr_sessions(None, deadline)?;
            Ok(json!({"sessions": sessions.iter().map(|s| json!({
                "id": s.id,
                "status": s.status.as_ref().map(crate::zvm::FlrStatus::as_zerto),
                "vm": s.vm_id,
                "vpg": s.vpg_id,
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
        Op::Status => Ok(json!(status(config, deadline))),
        Op::Guard(_) | Op::Record { .. } | Op::RestoreVm(_) => {
            anyhow::bail!("{} is served elsewhere", op.name())
        }
    }
}

/// What `status` says: the ZVM checks `rewind doctor` makes, run with the broker's
/// configuration and token, each said without the ZVM's address or credentials (any local
/// user may ask).
fn status(config: &Config, deadline: &Deadline) -> Status {
    let uid = crate::platform::effective_uid();
    let mut checks = Vec::new();
    let mut check = |check: &str, status: &str, detail: String| {
        checks.push(StatusCheck {
            check: check.to_owned(),
            status: status.to_owned(),
            detail,
        });
    };
    zvm_status(config, deadline, &mut check);
    let tested = config
        .zvm
        .as_ref()
        .and_then(|zvm| crate::commands::selftest::marker(&zvm.url).ok())
        .and_then(|path| std::fs::read_to_string(path).ok());
    match tested {
        Some(at) => check(
            "selftest",
            "ok",
            format!("held against the broker's ZVM at {}", at.trim()),
        ),
        None => check(
            "selftest",
            "warn",
            String::from(
                "never run against the broker's ZVM: run `rewind selftest --vm <a test VM> --path <a small guest file>` once as the broker's account",
            ),
        ),
    }
    Status {
        uid,
        user: crate::platform::user_name(uid),
        checks,
    }
}

/// Client, login, the API, the VPGs' health, in order; a failed step ends them.
fn zvm_status(config: &Config, deadline: &Deadline, check: &mut dyn FnMut(&str, &str, String)) {
    let Ok(client) = client(config) else {
        return check(
            "zvm configuration",
            "fail",
            String::from(
                "the broker's [zvm] settings cannot make a ZVM client; run `rewind doctor` as the broker's account",
            ),
        );
    };
    check(
        "zvm configuration",
        "ok",
        String::from("the broker's [zvm] settings make a client"),
    );
    if let Err(e) = client.authenticate(deadline) {
        return check("authentication", "fail", without_address(&e));
    }
    check(
        "authentication",
        "ok",
        String::from("the broker is logged in to its ZVM (its own token)"),
    );
    match client.vms(None, deadline) {
        Ok(vms) => check("zvm api", "ok", format!("{} protected VMs", vms.len())),
        Err(e) => return check("zvm api", "fail", without_address(&e)),
    }
    let vpgs = match client.vpgs(deadline) {
        Ok(vpgs) => vpgs,
        Err(e) => return check("vpgs", "fail", without_address(&e)),
    };
    let unhealthy: Vec<String> = vpgs
        .iter()
        .filter(|vpg| !matches!(crate::guard::health(vpg), crate::guard::Health::Restorable))
        .map(|vpg| {
            let status = vpg.health.clone().unwrap_or_else(|| {
                vpg.status
                    .map_or_else(|| String::from("unknown"), |s| format!("status {s}"))
            });
            format!("{} ({status})", vpg.name)
        })
        .collect();
    if unhealthy.is_empty() {
        check(
            "vpgs",
            "ok",
            format!("{} VPGs, each can take a restorable checkpoint", vpgs.len()),
        );
    } else {
        check(
            "vpgs",
            "warn",
            format!(
                "{} of {} VPGs may not give a restorable checkpoint now: {}",
                unhealthy.len(),
                vpgs.len(),
                unhealthy.join(", ")
            ),
        );
    }
}

/// A ZVM failure in words that name neither the ZVM's address nor a credential: any local
/// user may read a `status` answer. The broker's own `rewind doctor` says the rest.
fn without_address(e: &ZvmError) -> String {
    let what = match e {
        ZvmError::Setup(_) => String::from("the broker's [zvm] settings cannot make a ZVM client"),
        ZvmError::Unreachable { .. } => String::from("the broker cannot reach its ZVM"),
        ZvmError::Tls { .. } => String::from("the broker does not trust its ZVM's TLS certificate"),
        ZvmError::TimedOut { .. } => String::from("the broker's ZVM did not answer in time"),
        ZvmError::Auth { status, .. } => {
            format!("the broker's ZVM refused its login (HTTP {status})")
        }
        ZvmError::Status { status, .. } => format!("the broker's ZVM answered HTTP {status}"),
        ZvmError::Decode { .. } => {
            String::from("the broker's ZVM answered something that is not what Zerto sends")
        }
    };
    format!("{what}; run `rewind doctor` as the broker's account for the details")
}

/// The restore a request names, its file written under `out`.
fn restore_request(
    wire: &RecoverRequest,
    out: &Path,
) -> anyhow::Result<crate::recover::RecoverRequest> {
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
    request.out = out.to_path_buf();
    Ok(request)
}

/// What a restore would use, mounting nothing (the plan's file name points into a directory
/// that does not exist, so no file stands in its way).
fn plan(config: &Config, wire: &RecoverRequest, deadline: &Deadline) -> anyhow::Result<WirePlan> {
    let nowhere = config::cache_dir()?.join(format!("plan-{}", uuid::Uuid::new_v4().simple()));
    let request = restore_request(wire, &nowhere)?;
    let client = client(config)?;
    let plan = crate::recover::plan(&client, config, &request, deadline)?;
    Ok(WirePlan {
        vm: WireVm {
            name: plan.vm.name.clone(),
            id: plan.vm.id.clone(),
            ips: plan.vm.ips.clone(),
            vpgs: Vec::new(),
        },
        vpg: WireVpg {
            name: plan.vpg.name.clone(),
            id: plan.vpg.id.clone(),
        },
        checkpoint: WireCheckpoint {
            id: plan.checkpoint.id.clone(),
            time: plan.checkpoint.time(),
            tag: plan.checkpoint.tag.clone(),
        },
        path: plan.guest_path,
    })
}

/// A File Level Restore into a private directory of the broker's, the bytes answered.
fn recover(
    config: &Config,
    wire: &RecoverRequest,
    deadline: &Deadline,
) -> anyhow::Result<Recovered> {
    let cache = config::cache_dir()?;
    let out = tempfile::Builder::new()
        .prefix("recover-")
        .tempdir_in(&cache)
        .context("a private directory for the restored file")?;
    let request = restore_request(wire, out.path())?;
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
        session: Some(restored.session),
        unmount_task: Some(restored.unmount_task),
    })
}

/// The guard for a caller ([`crate::guard::protect`], with this broker's ZVM): the tag made
/// here from the request's fields (`peer_user`, who the kernel says is asking, names the
/// operator of a `rewind guard`), the decision made by the same table as the hook's, with the
/// caller's policy.
pub(crate) fn guard(
    config: &Config,
    request: &GuardRequest,
    peer_user: &str,
    deadline: &Deadline,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(GuardResult, Record), String> {
    request.policy()?;
    let change = Change::from_request(request, peer_user)?;
    check_request(config, request)?;
    let protected = crate::guard::for_request(
        config,
        request,
        peer_user,
        deadline,
        &crate::guard::Relay(progress),
    )?;
    let result = protected.to_wire().ok_or_else(|| {
        format!(
            "internal error: the guard decided {}",
            protected.decision.label()
        )
    })?;
    let (host, tool, class, args) = match &change.caller {
        Caller::Hook { host, .. } => (
            host.name().to_owned(),
            request.tool.clone(),
            "mutating",
            Value::Null,
        ),
        Caller::Mcp(agent) => (
            agent.clone(),
            String::from("checkpoint_vm"),
            "mutating",
            audit::summarise(&json!({"reason": request.tool})),
        ),
        Caller::Operator { .. } => (
            String::from("cli"),
            String::from("rewind guard"),
            "guard",
            audit::summarise(&json!({"action": request.tool})),
        ),
    };
    let record = Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host,
        session: request.session.clone(),
        change: Some(request.change.clone()),
        tool,
        class: class.to_owned(),
        vms: protected.vms.clone(),
        named: protected.named.clone(),
        vpgs: protected.vpg_names(),
        checkpoints: protected.audit_checkpoints(),
        decision: if protected.cancelled() {
            audit::Ending::Cancelled
        } else {
            protected.decision.outcome()
        },
        reason: protected.decision.text().map(str::to_owned),
        duration_ms: 0,
        input: change.input.clone(),
        args,
    };
    Ok((result, record))
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
    if request
        .input
        .as_ref()
        .is_some_and(|input| !audit::is_fingerprint(input))
    {
        return Err(String::from(
            "a guard's input is sent only as its fingerprint `sha256:<64 hex digits>`",
        ));
    }
    if fields
        .chain([&request.host])
        .any(|f| f.chars().any(char::is_control))
    {
        return Err(String::from(
            "a guard's fields may hold no control character (a line break, an escape)",
        ));
    }
    Ok(())
}
