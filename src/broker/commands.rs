//! The operator's commands when the configuration names `[broker] socket`: `rewind recover`,
//! `rewind flr list|end` and `rewind find` ask the broker, which refuses anyone but its operators, and read
//! no credentials here.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::Value;

use super::client::{self, Conversation};
use super::protocol::{
    Op, Question, RecoverRequest, Recovered, ReplyKind, RestoreVmRequest, WireVm,
};
use crate::cli::{FlrCommand, RecoverArgs, RestoreVmArgs};
use crate::commands::say;
use crate::config::Config;
use crate::deadline::Deadline;
use crate::vmrestore::{Answer, Operator as _, Terminal};

/// The time a restore through the broker may take (mount, browse, download, unmount).
const RECOVER_BUDGET: Duration = Duration::from_secs(30 * 60);
/// The time a listing or an unmount may take.
const FLR_BUDGET: Duration = Duration::from_secs(120);

/// The configuration, when it names a broker: the commands then go through it.
pub(crate) fn brokered(config_path: Option<&Path>) -> Option<Config> {
    Config::discover(config_path)
        .ok()
        .filter(|c| c.broker.socket.is_some())
}

/// `rewind recover` through the broker: the broker mounts, finds, downloads and unmounts; the
/// file is written here (never over an existing one without `--force`) and its SHA-256 checked
/// against the broker's.
pub(crate) fn recover(config: &Config, args: &RecoverArgs) -> anyhow::Result<()> {
    let Some(file_name) = crate::recover::guest_file_name(&args.path) else {
        bail!("guest path {:?} names no file", args.path);
    };
    let destination = args.out.join(file_name);
    if destination.exists() && !args.force {
        bail!(
            "{} exists; nothing was mounted or written (pass --force to replace it)",
            destination.display()
        );
    }
    let point = match (&args.change, &args.checkpoint, &args.before) {
        (Some(change), _, _) => format!("the checkpoint of change {change}"),
        (_, Some(id), _) => format!("checkpoint {id}"),
        (_, _, Some(before)) => format!("the newest checkpoint before {before}"),
        _ => bail!("name the checkpoint: --change, --checkpoint or --before"),
    };
    say(format!("VM:          {}", args.vm));
    say(format!("guest file:  {}", args.path));
    say(format!("checkpoint:  {point}"));
    say(format!("destination: {}", destination.display()));
    say("through:     the rewind broker");
    crate::recover::confirm(args.yes)?;
    let request = RecoverRequest {
        vm: args.vm.clone(),
        path: args.path.clone(),
        change: args.change.clone(),
        checkpoint: args.checkpoint.clone(),
        before: args.before.clone(),
        vpg: args.vpg.clone(),
        volume: args.volume.clone(),
    };
    let answer = client::call(
        &config.broker,
        Op::Recover(request),
        &Deadline::after(RECOVER_BUDGET),
        &mut |text| crate::console::err(text),
    )?;
    let recovered: Recovered =
        serde_json::from_value(answer).context("the broker's answer is not a recovered file")?;
    let bytes = recovered.verified_bytes()?;
    let sha256 = &recovered.sha256;
    write(&destination, &bytes, args.force)?;
    say(format!(
        "restored:    {} from VM {} VPG {} checkpoint {} ({} bytes, sha256 {sha256})",
        destination.display(),
        recovered.vm,
        recovered.vpg,
        recovered.checkpoint,
        bytes.len()
    ));
    Ok(())
}

/// `rewind restore-vm` through the broker, which runs it with its credentials and trail for
/// its operators only: this side shows its lines, answers its questions at this terminal,
/// runs `--verify` here (never as the broker's account), and passes Ctrl-C on, so that the
/// broker rolls back or stops what it started.
pub(crate) fn restore_vm(config: &Config, args: &RestoreVmArgs) -> std::process::ExitCode {
    let terminal = Terminal::new();
    let document = terminal
        .catch_interrupt()
        .and_then(|()| ask_broker(config, args, &terminal))
        .unwrap_or_else(|e| {
            let outcome = if format!("{e:#}").contains("refused: ") {
                "refused"
            } else {
                "failed"
            };
            serde_json::json!({"outcome": outcome, "reason": format!("{e:#}")})
        });
    crate::vmrestore::finish(&document, args.json)
}

fn ask_broker(config: &Config, args: &RestoreVmArgs, terminal: &Terminal) -> anyhow::Result<Value> {
    let request = RestoreVmRequest::new(args, terminal.can_answer());
    // The broker follows its own budgets; this side waits as long as the longest of them.
    let budget = *args.rollback_after + args.hold.map_or(Duration::ZERO, |h| *h) + RESTORE_SLACK;
    let mut talk = AtTerminal {
        terminal,
        verify: args.verify.as_deref(),
        told: false,
    };
    let mut progress = |text: &str| terminal.say(text, args.json);
    Ok(client::converse(
        &config.broker,
        Op::RestoreVm(request),
        &Deadline::after(budget),
        &mut progress,
        &mut talk,
    )?)
}

/// The time a restore through the broker may take beyond Zerto's own rollback wait.
const RESTORE_SLACK: Duration = Duration::from_secs(2 * 60 * 60);

/// The operator at this terminal, answering the broker.
struct AtTerminal<'a> {
    terminal: &'a Terminal,
    verify: Option<&'a str>,
    told: bool,
}

impl Conversation for AtTerminal<'_> {
    fn answer(&mut self, question: &Question) -> ReplyKind {
        match question {
            Question::YesNo { text } => match self.terminal.ask(text) {
                Answer::Yes => ReplyKind::Yes,
                Answer::No => ReplyKind::No,
                Answer::Interrupted => ReplyKind::Interrupt,
            },
            Question::Enter { text } => {
                if self.terminal.enter(text) {
                    ReplyKind::Enter
                } else {
                    ReplyKind::Interrupt
                }
            }
            Question::Verify => match self.verify.map(|command| self.terminal.verify(command)) {
                Some(Ok((passed, words))) => ReplyKind::Verified { passed, words },
                Some(Err(e)) => ReplyKind::Verified {
                    passed: false,
                    words: format!("{e:#}"),
                },
                None => ReplyKind::Verified {
                    passed: false,
                    words: String::from("no --verify command was given"),
                },
            },
        }
    }

    fn interrupted(&mut self) -> bool {
        let now = self
            .terminal
            .interrupted()
            .load(std::sync::atomic::Ordering::SeqCst);
        let first = now && !self.told;
        self.told |= now;
        first
    }
}

/// Writes `bytes` beside `destination` and renames it into place (refusing to replace an
/// existing file unless `force`).
pub(crate) fn write(destination: &Path, bytes: &[u8], force: bool) -> anyhow::Result<()> {
    use std::io::Write as _;
    let dir = destination
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".rewind-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    let persisted = if force {
        tmp.persist(destination).map(|_| ())
    } else {
        tmp.persist_noclobber(destination).map(|_| ())
    };
    persisted.map_err(|e| anyhow::anyhow!("cannot write {}: {}", destination.display(), e.error))
}

/// `rewind flr list|end` through the broker.
pub(crate) fn flr(config: &Config, command: &FlrCommand) -> anyhow::Result<()> {
    let deadline = Deadline::after(FLR_BUDGET);
    match command {
        FlrCommand::List { vm, json } => {
            let answer = client::call(&config.broker, Op::FlrList, &deadline, &mut |_| {})?;
            let sessions: Vec<Value> = answer["sessions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|s| {
                    vm.as_deref()
                        .is_none_or(|vm| s["vm"].as_str().is_some_and(|id| id == vm))
                })
                .collect();
            if *json {
                return crate::commands::print_json(&serde_json::json!({ "sessions": sessions }));
            }
            if sessions.is_empty() {
                say("no File Level Restore sessions");
            }
            for s in &sessions {
                let text = |key: &str| s[key].as_str().unwrap_or("?").to_owned();
                say(format!(
                    "{}  {}  vm {}  checkpoint {}  mounted {}",
                    text("id"),
                    text("status"),
                    text("vm"),
                    text("checkpoint"),
                    text("mounted")
                ));
            }
        }
        FlrCommand::End { id } => {
            let answer = client::call(
                &config.broker,
                Op::FlrEnd {
                    session: id.clone(),
                },
                &deadline,
                &mut |_| {},
            )?;
            say(format!(
                "unmounted session {id} (task {})",
                answer["task"].as_str().unwrap_or("?")
            ));
        }
    }
    Ok(())
}

/// The time a lookup through the broker may take.
const LOOKUP_BUDGET: Duration = Duration::from_secs(60);

/// `rewind vms` through the broker.
pub(crate) fn vms(config: &Config, args: &crate::cli::VmsArgs) -> anyhow::Result<()> {
    let answer = client::call(
        &config.broker,
        Op::Vms,
        &Deadline::after(LOOKUP_BUDGET),
        &mut |_| {},
    )?;
    let vms: Vec<WireVm> = serde_json::from_value(answer["vms"].clone()).map_err(|e| {
        anyhow::anyhow!(
            "the broker at {}: its vms answer is not its protocol ({e})",
            config
                .broker
                .socket
                .as_deref()
                .unwrap_or(std::path::Path::new("?"))
                .display()
        )
    })?;
    let vms: Vec<crate::zvm::Vm> = vms.into_iter().map(crate::zvm::Vm::from).collect();
    // The hook on this account reads the net from its own cache, never the broker's.
    if let Ok(dir) = crate::config::cache_dir() {
        crate::inventory::Inventory::listed(&vms).store(&dir);
    }
    crate::commands::zerto::show_vms(vms, args)
}

/// `rewind find` through the broker.
pub(crate) fn find(config: &Config, args: &crate::cli::VmArgs) -> anyhow::Result<()> {
    let answer = client::call(
        &config.broker,
        Op::Resolve {
            vms: vec![args.vm.clone()],
        },
        &Deadline::after(LOOKUP_BUDGET),
        &mut |_| {},
    )?;
    let vm = one_vm(&answer)?;
    if args.json {
        return crate::commands::print_json(&serde_json::json!({
            "vm": {"name": vm.name, "id": vm.id, "ips": vm.ips},
            "vpgs": vm.vpgs,
            "found": "one",
            "candidates": [],
        }));
    }
    say(format!("{} ({})", vm.name, vm.id));
    if !vm.ips.is_empty() {
        say(format!("  IPs {}", vm.ips.join(", ")));
    }
    for vpg in &vm.vpgs {
        say(format!("  VPG {} ({})", vpg.name, vpg.id));
    }
    Ok(())
}

/// The one VM a `resolve` answer for one reference names, or why there is not one.
pub(crate) fn one_vm(answer: &Value) -> anyhow::Result<WireVm> {
    if let Some(unknown) = answer.get("unknown") {
        return Err(crate::zvm::NotFound::Vm(format!(
            "VM {unknown} is unknown to Zerto: no protected VM has that name, identifier or IP"
        ))
        .into());
    }
    if let Some(ambiguous) = answer.get("ambiguous") {
        let names: Vec<String> = ambiguous["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|vm| format!("{} ({})", text(&vm["name"]), text(&vm["id"])))
            .collect();
        bail!(
            "{} matches {} VMs; name one by its vmIdentifier: {}",
            ambiguous["reference"],
            names.len(),
            names.join(", ")
        );
    }
    serde_json::from_value(answer["vms"][0].clone())
        .context("the broker's resolve answer is not its protocol")
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}
