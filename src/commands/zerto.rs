//! `rewind find`, `rewind checkpoints`, `rewind guard`: the Zerto side by hand.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::bail;
use serde_json::json;

use super::{client, say, warn_config};
use crate::audit;
use crate::broker::protocol::{
    Op, VmCheckpoints, VpgCheckpoints, VpgState, WireCheckpoint, WireVm,
};
use crate::cli::{CheckpointsArgs, GuardArgs, VmArgs};
use crate::config::Config;
use crate::deadline::Deadline;
use crate::guard;
use crate::tag;
use crate::zvm::resolve::{self, Resolution};
use crate::zvm::{Client, NotFound, Vm};

/// Set by Ctrl-C during `rewind guard`.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Time allowed for a lookup command.
const LOOKUP_BUDGET: Duration = Duration::from_secs(60);

/// Resolves a reference to exactly one VM, or explains why not, listing the VMs it may
/// have meant.
pub fn find_vm(
    client: &Client,
    config: &Config,
    reference: &str,
    deadline: &Deadline,
) -> anyhow::Result<Vm> {
    one(resolve::resolve(
        client,
        reference,
        &config.vm_aliases,
        deadline,
    )?)
    .map_err(|not_one| not_one.error())
}

/// A reference that is not exactly one VM, with the VMs it may mean.
struct NotOne {
    reference: String,
    /// Several VMs match (else none does, and `candidates` are near misses).
    ambiguous: bool,
    candidates: Vec<Vm>,
}

fn one(resolution: Resolution) -> Result<Vm, NotOne> {
    match resolution {
        Resolution::Found(vm) => Ok(vm),
        Resolution::Unknown { reference, near } => Err(NotOne {
            reference,
            ambiguous: false,
            candidates: near,
        }),
        Resolution::Ambiguous {
            reference,
            candidates,
        } => Err(NotOne {
            reference,
            ambiguous: true,
            candidates,
        }),
    }
}

impl NotOne {
    /// Unknown (with the VMs whose name contains the reference or whose IP starts with it)
    /// or ambiguous (with every candidate), each candidate by name, vmIdentifier, guest IPs
    /// and VPGs.
    fn error(&self) -> anyhow::Error {
        let mut list = String::new();
        for vm in &self.candidates {
            list.push_str("\n  ");
            list.push_str(&vm.describe());
        }
        let reference = &self.reference;
        if self.ambiguous {
            anyhow::anyhow!(
                "{reference:?} matches {} VMs; name one by its vmIdentifier:{list}",
                self.candidates.len()
            )
        } else if list.is_empty() {
            NotFound::Vm(format!(
                "VM {reference:?} is unknown to Zerto: no protected VM has that name, identifier or IP (`rewind vms` lists the VMs Zerto protects)"
            ))
            .into()
        } else {
            NotFound::Vm(format!(
                "VM {reference:?} is unknown to Zerto: no protected VM has that name, identifier or IP; it may mean one of these (`rewind vms` lists them all):{list}"
            ))
            .into()
        }
    }

    /// The `find --json` document: no VM, and the candidates.
    fn json(&self) -> serde_json::Value {
        json!({
            "vm": null,
            "vpgs": [],
            "found": if self.ambiguous { "ambiguous" } else { "unknown" },
            "candidates": self.candidates.iter().map(vm_json).collect::<Vec<_>>(),
        })
    }
}

/// A VM as `--json` shows it: name, id, guest IPs and VPGs.
fn vm_json(vm: &Vm) -> serde_json::Value {
    json!({
        "name": vm.name,
        "id": vm.id,
        "ips": vm.ips,
        "vpgs": vm.vpgs.iter().map(|v| json!({"name": v.name, "id": v.id})).collect::<Vec<_>>(),
    })
}

/// `rewind vms [--json]`: every VM Zerto protects, with its guest IPs and VPGs.
pub fn vms(config_path: Option<&Path>, args: &crate::cli::VmsArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    show_vms(client.vms(None, &deadline)?, args)
}

/// Prints the protected VMs, by name (`rewind vms`, here or through the broker).
pub(crate) fn show_vms(mut vms: Vec<Vm>, args: &crate::cli::VmsArgs) -> anyhow::Result<()> {
    vms.sort_by_key(|vm| vm.name.to_lowercase());
    if args.json {
        return super::print_json(&json!({
            "vms": vms.iter().map(vm_json).collect::<Vec<_>>(),
        }));
    }
    if vms.is_empty() {
        say("Zerto protects no VM");
        return Ok(());
    }
    let width = vms
        .iter()
        .map(|vm| vm.name.chars().count())
        .max()
        .unwrap_or(0);
    for vm in &vms {
        let ips = if vm.ips.is_empty() {
            String::from("-")
        } else {
            vm.ips.join(",")
        };
        say(format!(
            "{:<width$}  {ips:<15}  {}  ({})",
            vm.name,
            vm.vpg_names(),
            vm.id
        ));
    }
    say(format!("{} protected VMs", vms.len()));
    Ok(())
}

/// `rewind find <vm>`: the VM and its VPGs; for a reference that is not exactly one VM, the
/// candidates (with `--json`, as a document on stdout too) and exit 1.
pub fn find(config_path: Option<&Path>, args: &VmArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let vm = match one(resolve::resolve(
        &client,
        &args.vm,
        &config.vm_aliases,
        &deadline,
    )?) {
        Ok(vm) => vm,
        Err(not_one) => {
            if args.json {
                super::print_json(&not_one.json())?;
            }
            return Err(not_one.error());
        }
    };
    if args.json {
        return super::print_json(&json!({
            "vm": {"name": vm.name, "id": vm.id, "ips": vm.ips},
            "vpgs": vm.vpgs.iter().map(|v| json!({"name": v.name, "id": v.id})).collect::<Vec<_>>(),
            "found": "one",
            "candidates": [],
        }));
    }
    say(format!("{} ({})", &vm.name, vm.id));
    if !vm.ips.is_empty() {
        say(format!("  IPs {}", &vm.ips.join(", ")));
    }
    for vpg in &vm.vpgs {
        say(format!("  VPG {} ({})", vpg.name, vpg.id));
    }
    Ok(())
}

/// A VM's checkpoints (those since `since` ago, or all), oldest first, and each VPG's state:
/// what the broker's `checkpoints` answers, and what `rewind checkpoints` and `rewind mcp`'s
/// lookups show in either mode.
pub(crate) fn vm_checkpoints(
    client: &Client,
    config: &Config,
    reference: &str,
    since: Option<Duration>,
    deadline: &Deadline,
) -> anyhow::Result<VmCheckpoints> {
    let vm = find_vm(client, config, reference, deadline)?;
    let since = since.map(|ago| SystemTime::now() - ago);
    let mut vpgs = Vec::new();
    for vpg in &vm.vpgs {
        let rows = client.checkpoints(&vpg.id, since, deadline)?;
        let (state, state_error) = match client.vpg(&vpg.id, deadline) {
            Ok(v) => (
                Some(VpgState {
                    status: v.status,
                    health: v.health,
                    actual_rpo_secs: v.actual_rpo_secs,
                    protected_site: v.protected_site,
                    recovery_site: v.recovery_site,
                    journal_history_secs: v
                        .configured_history
                        .or(v.actual_history)
                        .map(|h| h.as_secs()),
                }),
                None,
            ),
            Err(e) => (None, Some(e.to_string())),
        };
        vpgs.push(VpgCheckpoints {
            vpg: vpg.name.clone(),
            id: vpg.id.clone(),
            checkpoints: rows
                .iter()
                .map(|c| WireCheckpoint {
                    id: c.id.clone(),
                    time: c.time(),
                    tag: c.tag.clone(),
                })
                .collect(),
            state,
            state_error,
        });
    }
    Ok(VmCheckpoints {
        vm: WireVm::from(&vm),
        vpgs,
    })
}

/// Every checkpoint of a VM, from Zerto or through the broker.
fn every_checkpoint(config: &Config, reference: &str) -> anyhow::Result<VmCheckpoints> {
    let deadline = Deadline::after(LOOKUP_BUDGET);
    if config.broker.socket.is_none() {
        return vm_checkpoints(&client(config)?, config, reference, None, &deadline);
    }
    let op = Op::Checkpoints {
        vm: reference.to_owned(),
        since_secs: None,
    };
    let answer = crate::broker::client::call(&config.broker, op, &deadline, &mut |_| {})?;
    serde_json::from_value(answer)
        .map_err(|e| anyhow::anyhow!("the broker's checkpoints answer is not its protocol ({e})"))
}

/// `rewind checkpoints <vm> [--change ID] [--limit N | --all] [--json]`, through the broker
/// when the configuration names one.
pub fn checkpoints(config_path: Option<&Path>, args: &CheckpointsArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let found = every_checkpoint(&config, &args.vm)?;
    let vm = &found.vm;
    let mut total = 0;
    let mut vpgs_json = Vec::new();
    for vpg in &found.vpgs {
        let rows = &vpg.checkpoints;
        let matching: Vec<_> = rows
            .iter()
            .filter(|c| match &args.change {
                Some(change) => c
                    .tag
                    .as_deref()
                    .is_some_and(|t| tag::is_for_change(t, change)),
                None => true,
            })
            .collect();
        let keep = if args.all || args.change.is_some() {
            matching.len()
        } else {
            args.limit.min(matching.len())
        };
        let shown = &matching[matching.len() - keep..];
        total += shown.len();
        // How long the journal keeps a checkpoint: until about its time plus the history.
        let history = vpg
            .state
            .as_ref()
            .and_then(|s| s.journal_history_secs)
            .map(Duration::from_secs);
        let until = |c: &WireCheckpoint| {
            let at = crate::time::parse_utc(&c.time).ok()?;
            history.map(|h| at + h)
        };
        if args.json {
            vpgs_json.push(json!({
                "name": vpg.vpg,
                "id": vpg.id,
                "total": rows.len(),
                "shown": shown.len(),
                "journal_history_mins": history.map(|h| h.as_secs() / 60),
                "checkpoints": shown.iter().map(|c| json!({
                    "id": c.id,
                    "time": c.time,
                    "restorable_until": until(c).map(crate::time::format_utc),
                    "tag": c.tag,
                })).collect::<Vec<_>>(),
            }));
            continue;
        }
        let what = match &args.change {
            Some(change) => format!(
                "{} of {} checkpoints tagged change={}",
                shown.len(),
                rows.len(),
                change
            ),
            None if shown.len() < rows.len() => format!(
                "the newest {} of {} checkpoints (--all shows every one)",
                shown.len(),
                rows.len()
            ),
            None => format!("{} checkpoints", rows.len()),
        };
        let kept = history.map_or(String::new(), |h| {
            format!("; journal history {}", crate::decision::history_words(h))
        });
        say(format!("VPG {} ({}): {what}{kept}", vpg.vpg, vpg.id));
        for c in shown {
            let until = until(c).map_or(String::new(), |t| {
                format!("  restorable until about {}", crate::decision::about_utc(t))
            });
            say(format!(
                "  {:>10}  {}{until}  {}",
                c.id,
                c.time,
                c.tag.as_deref().unwrap_or_default()
            ));
        }
    }
    if args.json {
        super::print_json(&json!({
            "vm": {"name": vm.name, "id": vm.id},
            "vpgs": vpgs_json,
        }))?;
    }
    if let Some(change) = &args.change
        && total == 0
    {
        bail!("no checkpoint of VM {} is tagged change={change}", vm.name);
    }
    Ok(())
}

/// `rewind guard --vm <vm>`: tag every VPG now and wait until listed (`guard::protect`:
/// through the broker when the configuration names one, which then records the run).
/// The hint under an unknown VM: the nearest name of the protected VMs `rewind vms` last
/// listed, and the command that lists them.
fn did_you_mean_vm(reference: &str) -> String {
    let inventory = crate::inventory::Inventory::load_cached();
    match crate::suggest::nearest(reference, inventory.names()) {
        Some(name) => format!("did you mean {name}? `rewind vms` lists them"),
        None => String::from("`rewind vms` lists the VMs Zerto protects"),
    }
}

pub fn guard(config_path: Option<&Path>, args: &GuardArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    // The command line checked the range (a usage error otherwise).
    let budget = args
        .budget
        .map_or(config.hook.budget, Duration::from_secs_f64);
    let deadline = Deadline::after(budget);
    let change = guard::Change {
        caller: guard::Caller::Operator {
            user: std::env::var("USER").unwrap_or_else(|_| String::from("operator")),
        },
        id: args.change.clone().unwrap_or_else(manual_change_id),
        action: args.action.clone(),
        input: None,
    };
    // Ctrl-C stops the wait (an insert already sent stays in Zerto) and the run is still
    // recorded; without a handler it would end the process with nothing recorded.
    if let Err(e) = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst)) {
        crate::console::err(format!(
            "warning: Ctrl-C will end rewind guard without recording it: {e}"
        ));
    }
    let started = SystemTime::now();
    let watch = crate::progress::Operator::for_stderr(deadline.started(), &INTERRUPTED);
    let protected = guard::protect(
        guard::Direct::HERE,
        &config,
        &[&args.vm],
        &change,
        &deadline,
        &watch,
    );
    watch.finish();
    let change = change.id;
    let (Some(vm), Some(vm_id), Some(first)) = (
        protected.vms.first(),
        protected.vm_ids.first(),
        protected.vpgs.first(),
    ) else {
        // The guard did not run: the VM was not found, or Zerto (or the broker) not asked.
        let why = protected
            .decision
            .text()
            .unwrap_or("no checkpoint was taken");
        let why = why.strip_prefix("rewind: ").unwrap_or(why);
        if INTERRUPTED.load(Ordering::SeqCst) {
            bail!("cancelled by Ctrl-C on VM {}: {why}", args.vm);
        }
        if why.contains("is unknown to Zerto") {
            return Err(NotFound::Vm(format!("{why}\n{}", did_you_mean_vm(&args.vm))).into());
        }
        bail!("{why}");
    };
    let tag = &first.tag;
    let (vpgs_json, lines, refused) = outcome(&protected.vpgs);
    if !protected.brokered {
        audit_guard(
            &config, &args.vm, &protected, &change, tag, &refused, started,
        );
    }
    if args.json {
        super::print_json(&json!({
            "vm": {"name": vm, "id": vm_id},
            "change": change,
            "tag": tag,
            "confirmed": refused.is_empty(),
            "vpgs": vpgs_json,
        }))?;
    } else {
        say(format!("VM {vm} ({vm_id}) tag: {tag}"));
        for line in lines {
            say(line);
        }
    }
    if !refused.is_empty() && INTERRUPTED.load(Ordering::SeqCst) {
        bail!(
            "cancelled by Ctrl-C on VM {vm} (a checkpoint already inserted stays in Zerto):\n  {}",
            refused.join("\n  ")
        );
    }
    if !refused.is_empty() {
        bail!("checkpoint refused on VM {vm}:\n  {}", refused.join("\n  "));
    }
    if !args.json {
        say(format!(
            "recover with: rewind recover --vm {vm} --change {change} --path <file>"
        ));
    }
    Ok(())
}

/// A change id for `rewind guard` without `--change`: readable (`manual-`, the UTC time to
/// the second) and unique (12 random hex digits), so that `recover --change` never finds
/// another run's checkpoint, as a process id, which the system reuses, could.
fn manual_change_id() -> String {
    let at = crate::time::format_utc(SystemTime::now()).replace(['-', ':'], "");
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("manual-{at}-{}", random.get(..12).unwrap_or_default())
}

/// Each VPG's result as JSON, as lines for a person, and the refusals.
fn outcome(vpgs: &[guard::VpgProtection]) -> (Vec<serde_json::Value>, Vec<String>, Vec<String>) {
    let mut refused = Vec::new();
    let mut vpgs_json = Vec::new();
    let mut lines = Vec::new();
    for vpg in vpgs {
        let point = |c: &crate::zvm::Checkpoint| json!({"id": c.id, "time": c.time()});
        vpgs_json.push(json!({
            "name": vpg.vpg.name,
            "id": vpg.vpg.id,
            "checkpoint": vpg.checkpoint.as_ref().map(point),
            "task": vpg.task,
            "fallback": vpg.fallback.as_ref().map(point),
            "error": vpg.error,
        }));
        match (&vpg.checkpoint, &vpg.error) {
            (Some(checkpoint), None) => {
                lines.push(format!(
                    "  VPG {}: checkpoint {} at {} (task {})",
                    &vpg.vpg.name,
                    checkpoint.id,
                    checkpoint.time(),
                    vpg.task.as_deref().unwrap_or("?")
                ));
                if let Some(previous) = &vpg.fallback {
                    lines.push(format!(
                        "    fallback: checkpoint {} at {} (newest before the guard)",
                        previous.id,
                        previous.time()
                    ));
                }
            }
            (_, why) => refused.push(format!(
                "VPG {}: {}",
                vpg.vpg.name,
                why.as_deref().unwrap_or("no confirmed checkpoint")
            )),
        }
    }
    (vpgs_json, lines, refused)
}

/// Records a `rewind guard` run in the audit trail, like a hook decision: `context` when
/// every VPG confirmed, `cancelled` when Ctrl-C stopped it, `deny` otherwise. `reference`:
/// the VM as the operator named it.
fn audit_guard(
    config: &Config,
    reference: &str,
    protected: &guard::Protection,
    change: &str,
    tag: &str,
    refused: &[String],
    started: SystemTime,
) {
    let record = audit::Record {
        time: crate::time::format_utc_millis(started),
        host: String::from("cli"),
        session: None,
        change: Some(change.to_owned()),
        tool: String::from("rewind guard"),
        class: String::from("guard"),
        vms: protected.vms.clone(),
        named: audit::named_otherwise(&[reference], &protected.vms),
        vpgs: protected.vpg_names(),
        checkpoints: protected.audit_checkpoints(),
        decision: if refused.is_empty() {
            audit::Ending::Context
        } else if protected.cancelled() {
            audit::Ending::Cancelled
        } else {
            audit::Ending::Deny
        },
        reason: Some(if refused.is_empty() {
            format!("tag {tag}")
        } else {
            refused.join("; ")
        }),
        duration_ms: u64::try_from(
            SystemTime::now()
                .duration_since(started)
                .unwrap_or_default()
                .as_millis(),
        )
        .unwrap_or(u64::MAX),
        input: None,
        args: serde_json::Value::Null,
    };
    if let Err(e) = audit::Trail::of(config).and_then(|trail| audit::append(trail, &record)) {
        crate::console::err(format!("warning: the audit trail was not written: {e:#}"));
    }
}
