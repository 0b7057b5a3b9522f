//! `restore_vm`: `rewind restore-vm` as a tool, for operators' sessions only. A call without
//! `confirm` plans and starts nothing; the restore or preview starts only on a second call
//! with the plan's checkpoint id or change id typed by the person approving, and it then
//! runs as `--yes` would (no `--verify`): committed once Zerto says it is ready.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::bail;
use serde_json::Value;

use super::calls::{Answer, Call, Facts, Zerto, setup};
use super::tools::{RestoreVmArgs, RestoreVmOut};
use crate::audit::{Ending, Record};
use crate::broker::client::Conversation;
use crate::broker::protocol::{Op, Question, ReplyKind, RestoreVmRequest};
use crate::cli::{self, ShutdownArg};
use crate::deadline::Deadline;
use crate::vmrestore::{self, Operator};

/// Zerto's own rollback wait for a restore started here.
const ROLLBACK_AFTER: Duration = Duration::from_secs(60 * 60);
/// The time a restore may take beyond that wait.
const SLACK: Duration = Duration::from_secs(2 * 60 * 60);

/// Whether this server's user may be offered the operators' tools: with the ZVM's
/// credentials here, yes; through the broker, when the broker counts them among its operators.
pub(super) fn operator_session(config_path: Option<&std::path::Path>) -> bool {
    let Ok(config) = crate::config::Config::discover(config_path) else {
        return false;
    };
    if config.broker.socket.is_none() {
        return crate::commands::client(&config).is_ok();
    }
    let deadline = Deadline::after(Duration::from_secs(10));
    crate::broker::client::call(&config.broker, Op::Status, &deadline, &mut |_| {})
        .is_ok_and(|status| status["operator"] == true)
}

pub(super) fn restore_vm(
    args: &RestoreVmArgs,
    call: &Call<'_>,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    if args.change.is_some() == args.checkpoint.is_some() {
        bail!("invalid arguments: give one of `change` or `checkpoint`");
    }
    facts.vms = vec![args.vm.clone()];
    facts.change.clone_from(&args.change);
    let typed = args
        .confirm_id
        .as_deref()
        .map(str::trim)
        .filter(|id| args.confirm && !id.is_empty());
    // The point is what the person typed: the change, or a checkpoint id.
    let (change, checkpoint) = match typed {
        Some(id) if Some(id) == args.change.as_deref() => (args.change.clone(), None),
        Some(id) if args.checkpoint.as_deref().is_none_or(|given| given == id) => {
            (None, Some(id.to_owned()))
        }
        Some(id) => bail!(
            "refused: `confirm_id` {id:?} is not the checkpoint the call names; nothing was started"
        ),
        None => (args.change.clone(), args.checkpoint.clone()),
    };
    let approved = typed.is_some();
    let cli_args = cli::RestoreVmArgs {
        vm: args.vm.clone(),
        change,
        checkpoint,
        vpg: args.vpg.clone(),
        // Unconfirmed, even a preview only plans.
        preview: args.preview && approved,
        hold: args
            .hold_secs
            .map(|s| humantime::Duration::from(Duration::from_secs(s))),
        verify: None,
        rollback_after: humantime::Duration::from(ROLLBACK_AFTER),
        shutdown: ShutdownArg::Force,
        yes: approved,
        json: true,
    };
    let (config, zerto) = setup(call)?;
    let operator = AtMcp {
        call,
        lines: Mutex::new(Vec::new()),
        audit: config.hook.audit_path().ok().map(PathBuf::from),
        syslog: config.audit.syslog.clone(),
        told: AtomicBool::new(false),
    };
    let document = match zerto {
        Zerto::Direct(_) => vmrestore::execute(Ok(&config), &cli_args, &operator),
        Zerto::Broker => through_broker(&config, &cli_args, &operator)?,
    };
    let lines = operator.lines.into_inner().unwrap_or_default();
    answer(document, lines, approved, facts)
}

/// The run as the broker does it, this server answering its questions.
fn through_broker(
    config: &crate::config::Config,
    args: &cli::RestoreVmArgs,
    operator: &AtMcp<'_>,
) -> anyhow::Result<Value> {
    // Nobody at a terminal: the typed id was the only answer.
    let request = RestoreVmRequest::new(args, false);
    let mut talk = operator;
    let mut progress = |text: &str| operator.say(text, true);
    Ok(crate::broker::client::converse(
        &config.broker,
        Op::RestoreVm(request),
        &Deadline::after(ROLLBACK_AFTER + SLACK),
        &mut progress,
        &mut talk,
    )?)
}

/// The tool's answer for a run's document: an unconfirmed plan is not an error.
fn answer(
    document: Value,
    lines: Vec<String>,
    approved: bool,
    facts: &mut Facts,
) -> anyhow::Result<Answer> {
    let outcome = document["outcome"].as_str().unwrap_or("failed").to_owned();
    let checkpoint = document["checkpoint"]["id"].as_str().map(str::to_owned);
    let change = document["change"].as_str().map(str::to_owned);
    let confirm_ids: Vec<String> = checkpoint.iter().chain(change.iter()).cloned().collect();
    facts.decision = match outcome.as_str() {
        "committed" => Some(Ending::VmRestored),
        "rolled-back" => Some(Ending::RolledBack),
        _ => None,
    };
    let planned = !approved && outcome == "refused" && checkpoint.is_some();
    let (outcome, text) = if planned {
        let text = format!(
            "plan: {}. Nothing was started. Show this to the person; restore_vm runs it with confirm: true and \
             confirm_id typed by them ({}).",
            lines.join("; "),
            confirm_ids.join(" or ")
        );
        (String::from("planned"), text)
    } else {
        let reason = document["reason"].as_str().unwrap_or_default();
        (
            outcome.clone(),
            format!(
                "{outcome}: {}",
                if reason.is_empty() {
                    lines.join("; ")
                } else {
                    reason.to_owned()
                }
            ),
        )
    };
    let is_error = !matches!(outcome.as_str(), "planned" | "committed" | "previewed");
    let mut answer = Answer::ok(
        &RestoreVmOut {
            outcome,
            confirm_ids,
            lines,
            document,
        },
        text,
    )?;
    answer.is_error = is_error;
    Ok(answer)
}

/// The operator behind this MCP session: nobody at a terminal; the typed id was the answer.
struct AtMcp<'a> {
    call: &'a Call<'a>,
    lines: Mutex<Vec<String>>,
    audit: Option<PathBuf>,
    syslog: Option<crate::config::SyslogTarget>,
    told: AtomicBool,
}

impl Operator for AtMcp<'_> {
    fn say(&self, line: &str, _json: bool) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line.to_owned());
        }
        (self.call.progress)(line.to_owned());
    }

    fn can_answer(&self) -> bool {
        false
    }

    fn ask(&self, _question: &str) -> vmrestore::Answer {
        vmrestore::Answer::No
    }

    fn enter(&self, _prompt: &str) -> bool {
        true
    }

    fn verify(&self, _command: &str) -> anyhow::Result<(bool, String)> {
        Ok((
            false,
            String::from("an MCP session has no --verify command"),
        ))
    }

    fn catch_interrupt(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn interrupted(&self) -> &AtomicBool {
        self.call.interrupted
    }

    fn user(&self) -> String {
        let uid = crate::platform::effective_uid();
        let user = crate::platform::user_name(uid).unwrap_or_else(|| format!("uid {uid}"));
        format!("{user} ({})", self.call.agent)
    }

    fn record(&self, record: &Record) {
        let Some(path) = &self.audit else { return };
        let trail = crate::audit::Trail {
            path,
            syslog: self.syslog.as_ref(),
        };
        if let Err(e) = crate::audit::append(trail, record) {
            crate::console::err(format!("rewind: audit trail not written: {e:#}"));
        }
    }
}

impl Conversation for &AtMcp<'_> {
    fn answer(&mut self, question: &Question) -> ReplyKind {
        match question {
            Question::YesNo { .. } => ReplyKind::No,
            Question::Enter { .. } => ReplyKind::Enter,
            Question::Verify => ReplyKind::Verified {
                passed: false,
                words: String::from("an MCP session has no --verify command"),
            },
        }
    }

    fn interrupted(&mut self) -> bool {
        self.call.interrupted.load(Ordering::SeqCst) && !self.told.swap(true, Ordering::SeqCst)
    }
}
