//! `rewind find`, `rewind checkpoints`, `rewind guard`: the Zerto side by hand.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::bail;

use super::{clean, client, say, warn_config};
use crate::cli::{CheckpointsArgs, GuardArgs, VmArgs};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::guard;
use crate::tag::{self, Tag};
use crate::zvm::Client;
use crate::zvm::resolve::{self, Resolution, Vm};

/// Time allowed for a lookup command.
const LOOKUP_BUDGET: Duration = Duration::from_secs(60);

/// Resolves a reference to exactly one VM, or explains why not.
pub fn find_vm(
    client: &Client,
    config: &Config,
    reference: &str,
    deadline: &Deadline,
) -> anyhow::Result<Vm> {
    match resolve::resolve(client, reference, &config.vm_aliases, deadline)? {
        Resolution::Found(vm) => Ok(vm),
        Resolution::Unknown { reference } => {
            bail!(
                "VM {reference:?} is unknown to Zerto: no protected VM has that name, identifier or IP"
            )
        }
        Resolution::Ambiguous {
            reference,
            candidates,
        } => {
            let list: Vec<String> = candidates
                .iter()
                .map(|vm| format!("  {} ({})", clean(&vm.name), vm.id))
                .collect();
            bail!(
                "{reference:?} matches {} VMs; name one by its vmIdentifier:\n{}",
                candidates.len(),
                list.join("\n")
            )
        }
    }
}

/// `rewind find <vm>`.
pub fn find(config_path: Option<&Path>, args: &VmArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let vm = find_vm(&client, &config, &args.vm, &deadline)?;
    say(format!("{} ({})", clean(&vm.name), vm.id));
    for vpg in &vm.vpgs {
        say(format!("  VPG {} ({})", clean(&vpg.name), vpg.id));
    }
    Ok(())
}

/// `rewind checkpoints <vm> [--change ID]`.
pub fn checkpoints(config_path: Option<&Path>, args: &CheckpointsArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(LOOKUP_BUDGET);
    let vm = find_vm(&client, &config, &args.vm, &deadline)?;
    let mut found = 0;
    for vpg in &vm.vpgs {
        let rows = client.checkpoints(&vpg.id, None, &deadline)?;
        say(format!(
            "VPG {} ({}): {} checkpoints",
            clean(&vpg.name),
            vpg.id,
            rows.len()
        ));
        let shown: Vec<_> = rows
            .iter()
            .filter(|c| match &args.change {
                Some(change) => c
                    .tag
                    .as_deref()
                    .is_some_and(|t| tag::is_for_change(t, change)),
                None => true,
            })
            .collect();
        let skip = if args.change.is_none() {
            shown.len().saturating_sub(20)
        } else {
            0
        };
        for c in &shown[skip..] {
            found += 1;
            say(format!(
                "  {:>10}  {}  {}",
                c.checkpoint_identifier,
                c.time_stamp,
                c.tag.as_deref().map(clean).unwrap_or_default()
            ));
        }
    }
    if let Some(change) = &args.change
        && found == 0
    {
        bail!(
            "no checkpoint of VM {} is tagged change={change}",
            clean(&vm.name)
        );
    }
    Ok(())
}

/// `rewind guard --vm <vm>`: tag every VPG now and wait until listed.
pub fn guard(config_path: Option<&Path>, args: &GuardArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(config.hook.budget);
    let vm = find_vm(&client, &config, &args.vm, &deadline)?;
    let change = args.change.clone().unwrap_or_else(|| {
        let secs = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("manual-{secs}-{}", std::process::id())
    });
    let user = std::env::var("USER").unwrap_or_else(|_| String::from("operator"));
    let now = SystemTime::now();
    let tag_for = |names: &str| Tag::new(&format!("cli/{user}"), &args.action, names, &change, now);
    let report = guard::guard(
        &client,
        std::slice::from_ref(&vm),
        &tag_for,
        &config::cache_dir()?.join("locks"),
        &deadline,
    );
    say(format!(
        "VM {} ({}) tag: {}",
        clean(&vm.name),
        vm.id,
        tag_for(&vm.name).as_str()
    ));
    let mut refused = Vec::new();
    for vpg in &report.vpgs {
        match &vpg.result {
            Ok(tagged) => {
                say(format!(
                    "  VPG {}: checkpoint {} at {} (task {})",
                    clean(&vpg.vpg.name),
                    tagged.checkpoint.checkpoint_identifier,
                    tagged.checkpoint.time_stamp,
                    tagged.task_id
                ));
                if let Some(previous) = &tagged.previous {
                    say(format!(
                        "    fallback: checkpoint {} at {} (newest before the guard)",
                        previous.checkpoint_identifier, previous.time_stamp
                    ));
                }
            }
            Err(why) => refused.push(format!("VPG {}: {why}", clean(&vpg.vpg.name))),
        }
    }
    if !refused.is_empty() {
        bail!(
            "checkpoint refused on VM {}:\n  {}",
            clean(&vm.name),
            refused.join("\n  ")
        );
    }
    say(format!(
        "recover with: rewind recover --vm {} --change {change} --path <file>",
        clean(&vm.name)
    ));
    Ok(())
}
