//! `rewind hook`: one tool call in, one decision out, always in time.
//!
//! Every path ends in exit 0 with a valid decision, or exit 2 with one line on stderr, before
//! the budget runs out: the work runs on a worker thread under `catch_unwind`, and the main
//! thread is a watchdog that denies when the budget is spent. A timeout, a panic (exit 101)
//! or output that is not JSON would let the call run unguarded on the real host.

pub mod claude_code;
mod output;

use std::io::Read as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use self::claude_code::HookInput;
use crate::audit::{self, AuditCheckpoint, Record};
use crate::catalog::{Bound, Catalog, Classification, ToolName};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::decision::{self, Decision, Finding, Policy};
use crate::guard;
use crate::sessions::Sessions;
use crate::tag::Tag;
use crate::zvm::Client;
use crate::zvm::resolve::{self, Resolution};

/// Time kept back from the budget for the worker to answer before the watchdog does.
const WORKER_MARGIN: Duration = Duration::from_millis(500);
/// Longest the audit append may wait for its lock.
const AUDIT_WAIT: Duration = Duration::from_millis(500);

/// What the worker shares with the watchdog: what it is doing (for the deny message) and the
/// call it is deciding on (for the audit trail).
#[derive(Default)]
pub struct Progress {
    doing: String,
    input: Option<HookInput>,
}

impl Progress {
    fn starting(doing: &str) -> Arc<Mutex<Progress>> {
        Arc::new(Mutex::new(Progress {
            doing: doing.to_owned(),
            input: None,
        }))
    }
}

/// Runs the hook as a process: stdin to decision, with the watchdog.
pub fn run(config_path: Option<&Path>) -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    let started = std::time::Instant::now();
    let (config, config_error) = match Config::discover_for_hook(config_path) {
        Ok(config) => (config, None),
        // Defaults keep the budget and the audit trail; the call itself is denied.
        Err(e) => (Config::defaults(), Some(format!("{e:#}"))),
    };
    // Said on every run; on exit 0 the host keeps stderr for its debug log.
    for warning in &config.warnings {
        eprintln!("rewind: warning: {warning}");
    }
    // The budget counts from the start: reading the config is part of it.
    let deadline = Deadline::starting_at(started, config.hook.budget);
    let progress = Progress::starting("reading the tool call");

    let worker_progress = Arc::clone(&progress);
    let worker_config = config.clone();
    let evaluation = supervise(&deadline, &progress, move || {
        let mut stdin = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(claude_code::MAX_INPUT as u64 + 1)
            .read_to_end(&mut stdin);
        match (read, config_error) {
            (Err(e), _) => Evaluation::answer(Decision::Block(format!(
                "rewind: cannot read stdin ({e}); refusing the call"
            ))),
            (Ok(_), Some(_)) if claude_code::is_after_the_call(&stdin) => {
                Evaluation::answer(Decision::None)
            }
            (Ok(_), Some(error)) => Evaluation {
                decision: Decision::Deny(format!("rewind: configuration error: {error}")),
                input: claude_code::parse(&stdin).ok(),
                facts: Facts::default(),
            },
            (Ok(_), None) => evaluate(
                &stdin,
                &worker_config,
                &deadline.shortened_by(WORKER_MARGIN),
                &worker_progress,
            ),
        }
    });
    let rendered = claude_code::render(&evaluation.decision);
    record(&config, evaluation, &deadline);
    output::emit(&rendered)
}

/// Runs `work` on a worker thread under `catch_unwind` while this thread watches the
/// deadline: a panic becomes a deny with its message, and so does a worker that has not
/// answered when the deadline comes (saying what it was doing).
fn supervise(
    deadline: &Deadline,
    progress: &Arc<Mutex<Progress>>,
    work: impl FnOnce() -> Evaluation + Send + 'static,
) -> Evaluation {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(String::from("hook"))
        .spawn(move || {
            // The watchdog may have answered already; nobody listens then.
            let _ = tx.send(catch_unwind(AssertUnwindSafe(work)));
        });
    if let Err(e) = spawned {
        return Evaluation::answer(Decision::Deny(format!(
            "rewind: internal error: cannot start ({e})"
        )));
    }
    match rx.recv_timeout(deadline.remaining()) {
        Ok(Ok(done)) => done,
        Ok(Err(panic)) => Evaluation::answer(Decision::Deny(format!(
            "rewind: internal error ({}); the call was not allowed",
            panic_message(&*panic)
        ))),
        Err(_) => {
            let (doing, input) = progress.lock().map_or_else(
                |_| (String::from("working"), None),
                |p| (p.doing.clone(), p.input.clone()),
            );
            Evaluation {
                decision: Decision::Deny(format!(
                    "rewind: the hook's {} s budget ran out while {doing}; no confirmed checkpoint, so the call was not allowed",
                    deadline.budget().as_secs_f64(),
                )),
                input,
                facts: Facts::default(),
            }
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| String::from("panic"))
}

/// What the worker found, for the decision and the audit trail.
#[derive(Default)]
struct Facts {
    /// A PostToolUse call: the tool ran.
    ran: bool,
    class: &'static str,
    vm: Option<String>,
    vpgs: Vec<String>,
    checkpoints: Vec<AuditCheckpoint>,
}

/// The outcome of one hook call.
pub struct Evaluation {
    pub decision: Decision,
    pub input: Option<HookInput>,
    facts: Facts,
}

impl Evaluation {
    fn answer(decision: Decision) -> Self {
        Self {
            decision,
            input: None,
            facts: Facts::default(),
        }
    }
}

/// Decides on raw stdin bytes: the whole hook minus process plumbing. The demo calls this.
pub fn evaluate(
    stdin: &[u8],
    config: &Config,
    deadline: &Deadline,
    progress: &Mutex<Progress>,
) -> Evaluation {
    let mut facts = Facts::default();
    match claude_code::parse(stdin) {
        Ok(input) => {
            if let Ok(mut p) = progress.lock() {
                p.input = Some(input.clone());
            }
            Evaluation {
                decision: decide(&input, config, deadline, progress, &mut facts),
                input: Some(input),
                facts,
            }
        }
        // After the call nothing can be refused: an odd PostToolUse payload gets no answer.
        Err(_) if claude_code::is_after_the_call(stdin) => Evaluation::answer(Decision::None),
        Err(e) => Evaluation {
            decision: Decision::Block(e.to_string()),
            input: None,
            facts,
        },
    }
}

fn set_progress(progress: &Mutex<Progress>, text: String) {
    if let Ok(mut p) = progress.lock() {
        p.doing = text;
    }
}

fn decide(
    input: &HookInput,
    config: &Config,
    deadline: &Deadline,
    progress: &Mutex<Progress>,
    facts: &mut Facts,
) -> Decision {
    match input.hook_event_name.as_deref() {
        None | Some("PreToolUse") => {}
        // After the call: nothing to decide, but the audit trail notes that it ran.
        Some("PostToolUse") => {
            facts.ran = true;
            return Decision::None;
        }
        Some(_) => return Decision::None,
    }
    let tool = input.tool();
    let catalog = match Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs) {
        Ok(catalog) => catalog,
        Err(e) => {
            return Decision::Deny(format!(
                "rewind: catalog error, so {tool} cannot be classified: {e:#}"
            ));
        }
    };
    let name = ToolName::parse(tool, input.server_hint());
    let class = bind(
        &catalog,
        &name,
        catalog.classify(&name, &input.tool_input),
        input,
    );
    facts.class = class_name(&class);
    if let Classification::Shell {
        command, dialect, ..
    } = &class
    {
        let Some(command) = command else {
            return Decision::Ask(format!(
                "rewind: {tool} gives no command to read, so what it runs cannot be known; no Zerto checkpoint was taken."
            ));
        };
        set_progress(progress, String::from("reading the command"));
        let until = std::time::Instant::now() + deadline.remaining();
        let cwd = input.cwd.as_deref().map(Path::new);
        let judgement = match crate::shell::judge(command, *dialect, config, cwd, until) {
            Ok(judgement) => judgement,
            Err(e) => {
                return Decision::Deny(format!(
                    "rewind: shell catalog error, so {tool} cannot be classified: {e:#}"
                ));
            }
        };
        return match judgement.outcome {
            crate::shell::Outcome::NoDecision => Decision::None,
            crate::shell::Outcome::Ask { part, why } => Decision::Ask(format!(
                "rewind: {tool} reaches hosts that cannot be known exactly: `{part}` in the command: {why}. No Zerto checkpoint was taken; approve only if nothing on those hosts needs rewinding, or name the hosts one by one."
            )),
            crate::shell::Outcome::Checkpoint(vms) if vms.len() == 1 => {
                checkpoint_vm(input, &vms[0], config, deadline, progress, facts)
            }
            crate::shell::Outcome::Checkpoint(vms) => Decision::Ask(format!(
                "rewind: {tool} changes several VMs ({}); one VM per call is checkpointed, so none was taken.",
                vms.join(", ")
            )),
        };
    }
    if let Some(decision) = decision::classify_only(tool, &class) {
        return decision;
    }
    let Classification::Mutating {
        vm: Some(vm_arg), ..
    } = &class
    else {
        return Decision::Deny(format!("rewind: internal error classifying {tool}"));
    };
    checkpoint_vm(input, &vm_arg.value, config, deadline, progress, facts)
}

/// Puts a call on the VM its server or an earlier session binds it to, when its arguments
/// name none, and remembers the session a call opens. The store is only touched for entries
/// that open or name sessions; a store that cannot be written makes the follow-up ask.
fn bind(
    catalog: &Catalog,
    name: &ToolName,
    class: Classification,
    input: &HookInput,
) -> Classification {
    let ToolName::Mcp { server, .. } = name else {
        return class;
    };
    let sessions = Sessions::in_dir(&config::state_dir());
    let host_session = input.session_id.as_deref().unwrap_or_default();
    let (Classification::ReadOnly(entry) | Classification::Mutating { entry, .. }) = &class else {
        return class;
    };
    if let Some((session, vm)) = catalog.session_opened(server, entry, &input.tool_input)
        && !host_session.is_empty()
        && let Err(e) = sessions.remember(host_session, server, &session, &vm, SystemTime::now())
    {
        eprintln!("rewind: session {session:?} not remembered: {e:#}");
    }
    let Classification::Mutating { entry, vm: None } = class else {
        return class;
    };
    let recall = |session: &str| {
        (!host_session.is_empty())
            .then(|| sessions.recall(host_session, server, session, SystemTime::now()))
            .flatten()
    };
    match catalog.bound_target(server, &entry, &input.tool_input, &recall) {
        Bound::Vm(vm) => Classification::Mutating {
            entry,
            vm: Some(vm),
        },
        Bound::No | Bound::UnknownSession { .. } => Classification::Mutating { entry, vm: None },
    }
}

/// The mutating path: find the VM in Zerto, guard it, decide from what the ZVM said.
fn checkpoint_vm(
    input: &HookInput,
    reference: &str,
    config: &Config,
    deadline: &Deadline,
    progress: &Mutex<Progress>,
    facts: &mut Facts,
) -> Decision {
    let tool = input.tool();
    facts.vm = Some(reference.to_owned());
    let policy = Policy {
        on_checkpoint: config.hook.on_checkpoint,
        on_zvm_error: config.hook.on_zvm_error,
    };
    let change = input
        .tool_use_id
        .clone()
        .unwrap_or_else(|| format!("rewind-{}", std::process::id()));

    let zvm_error = |error: &crate::zvm::ZvmError| {
        decision::decide(
            tool,
            &change,
            &Finding::ZvmError {
                vm: reference,
                error,
            },
            &policy,
        )
    };
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(e) => {
            let error = crate::zvm::ZvmError::Setup(format!("{e:#}"));
            return zvm_error(&error);
        }
    };
    let cache = config::cache_dir();
    let client = match Client::new(zvm, &cache) {
        Ok(client) => client,
        Err(e) => return zvm_error(&e),
    };

    set_progress(progress, format!("looking up VM {reference:?} in Zerto"));
    let vm = match resolve::resolve(&client, reference, &config.vm_aliases, deadline) {
        Err(e) => return zvm_error(&e),
        Ok(Resolution::Unknown { reference }) => {
            return decision::decide(
                tool,
                &change,
                &Finding::Unknown {
                    reference: &reference,
                },
                &policy,
            );
        }
        Ok(Resolution::Ambiguous {
            reference,
            candidates,
        }) => {
            return decision::decide(
                tool,
                &change,
                &Finding::Ambiguous {
                    reference: &reference,
                    candidates: &candidates,
                },
                &policy,
            );
        }
        Ok(Resolution::Found(vm)) => vm,
    };
    facts.vm = Some(vm.name.clone());
    facts.vpgs = vm.vpgs.iter().map(|v| v.name.clone()).collect();

    set_progress(
        progress,
        format!(
            "waiting for Zerto to list the tagged checkpoint of VM {}",
            vm.name
        ),
    );
    let tag = Tag::new(&input.agent(), tool, &vm.name, &change, SystemTime::now());
    let report = guard::guard(&client, &vm, &tag, &cache.join("locks"), deadline);
    facts.checkpoints = report
        .vpgs
        .iter()
        .filter_map(|v| {
            let tagged = v.result.as_ref().ok()?;
            Some(AuditCheckpoint {
                vpg: v.vpg.name.clone(),
                id: tagged.checkpoint.checkpoint_identifier.clone(),
                time: tagged.checkpoint.time_stamp.clone(),
                fallback: tagged
                    .previous
                    .as_ref()
                    .map(|p| p.checkpoint_identifier.clone()),
            })
        })
        .collect();
    decision::decide(tool, &change, &Finding::Guarded(&report), &policy)
}

fn class_name(class: &Classification) -> &'static str {
    match class {
        Classification::Local => "local",
        Classification::Shell { .. } => "shell",
        Classification::ReadOnly(_) => "read-only",
        Classification::Mutating { .. } => "mutating",
        Classification::Unlisted => "unlisted",
    }
}

/// Appends the decision to the audit trail; a failure is said on stderr, never decisive.
/// (stderr of an exit-0 hook only reaches the host's debug log.)
fn record(config: &Config, evaluation: Evaluation, deadline: &Deadline) {
    let Evaluation {
        decision,
        input,
        facts,
    } = evaluation;
    let input = input.as_ref();
    let record = Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host: String::from("claude-code"),
        session: input.and_then(|i| i.session_id.clone()),
        change: input.and_then(|i| i.tool_use_id.clone()),
        tool: input.map(|i| i.tool().to_owned()).unwrap_or_default(),
        class: facts.class.to_owned(),
        vm: facts.vm,
        vpgs: facts.vpgs,
        checkpoints: facts.checkpoints,
        decision: if facts.ran { "ran" } else { decision.label() }.to_owned(),
        reason: decision.text().map(str::to_owned),
        duration_ms: u64::try_from(deadline.elapsed().as_millis()).unwrap_or(u64::MAX),
        args: input
            .map(|i| audit::summarise(&i.tool_input))
            .unwrap_or_default(),
    };
    // On its own thread, waited for briefly: a hung file system must not hold the decision.
    let wait = AUDIT_WAIT.min(deadline.remaining());
    let path = config.hook.audit_log.clone();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(String::from("audit"))
        .spawn(move || {
            let _ = tx.send(audit::append(&path, &record, wait));
        });
    let outcome = match spawned {
        Ok(_) => rx
            .recv_timeout(wait)
            .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within {} ms", wait.as_millis()))),
        Err(e) => Err(e.into()),
    };
    if let Err(e) = outcome {
        eprintln!("rewind: audit trail not written: {e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_the_worker_is_a_deny_with_its_message() {
        let progress = Progress::starting("");
        let deadline = Deadline::after(Duration::from_secs(10));
        let evaluation = supervise(&deadline, &progress, || {
            panic!("catalog index out of range")
        });
        assert_eq!(
            evaluation.decision,
            Decision::Deny(String::from(
                "rewind: internal error (catalog index out of range); the call was not allowed"
            ))
        );
    }

    #[test]
    fn a_worker_past_the_deadline_is_a_deny_saying_what_it_was_doing() {
        let progress = Progress::starting("waiting for Zerto");
        let deadline = Deadline::after(Duration::from_millis(50));
        let evaluation = supervise(&deadline, &progress, || {
            std::thread::sleep(Duration::from_secs(5));
            Evaluation::answer(Decision::None)
        });
        let Decision::Deny(reason) = evaluation.decision else {
            panic!("deny expected");
        };
        assert!(
            reason.contains("budget ran out while waiting for Zerto"),
            "{reason}"
        );
    }
}
