//! `rewind hook`: one tool call in, one decision out, always in time.
//!
//! The steps, in order:
//!
//! 1. Load the configuration (a broken one is kept as the reason to deny the call); the
//!    budget counts from the process start, so this is part of it.
//! 2. Read stdin (bounded, polled on the main thread until the budget) and turn it into a
//!    neutral `ToolCall` through the host's dialect ([`crate::host`]). If stdout goes where no
//!    answer can reach the host, the call is refused here.
//! 3. Name the MCP server where the host does not, then classify the call
//!    (`crate::classify`): pure CPU on the main thread, reading this machine's catalogs,
//!    sessions and shell analysis through `LocalFiles`. A session the call opens is then
//!    remembered here, or the call asks. Most calls end here (read-only, local, unlisted, no
//!    VM, a pattern that cannot be known, …).
//! 4. Only a call that reaches exact VMs needs the ZVM: then a worker thread runs the guard
//!    under `catch_unwind` while the main thread is a watchdog that denies when the budget is
//!    spent. The guard runs where the binary says ([`Direct`]): in this process for
//!    `rewind hook`, in `rewind` beside it for `rewind-hook` (which links no ZVM client), or
//!    in the broker when one is configured.
//! 5. Every decision is audited, the watchdog's too: its record (built in `record`) is
//!    appended on the main thread, waiting for another writer's turn only briefly
//!    (`append_record`). Then it is rendered in the host's dialect.
//!
//! Every path ends in exit 0 with a valid decision, or exit 2 with one line on stderr: the
//! whole of it runs under `catch_unwind`, and stderr is written only through
//! `crate::console::err`, which cannot panic. A timeout, a panic (exit 101) or output that is
//! not JSON would let the call run unguarded on the real host.
//!
//! Stdin is polled under the budget: the hosts close it once the payload is written, and one
//! that kept it open gets a refusal (exit 2) before the budget ends rather than a hook that
//! never answers.

mod args;
mod local;
mod record;

pub use crate::guard::Direct;
pub use args::HookArgs;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::audit;
use crate::catalog::Catalog;
use crate::classify::{self, Plan, decide};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::decision::{self, BlockReason, Case, Decision, Policy};
use crate::guard;
use crate::host::{self, Event, Host, MAX_INPUT, ToolCall, Unreadable};
use crate::targets::VmRef;

pub(crate) use local::LocalFiles;
pub(crate) use record::AuditFacts;

/// Time kept back from the watchdog's deadline for the worker to answer first.
const WORKER_MARGIN: Duration = Duration::from_millis(500);
/// Time kept back from the budget for the audit append, so that even the watchdog's deny
/// is written before the budget ends.
const AUDIT_ALLOWANCE: Duration = Duration::from_millis(300);

/// What the guard's worker is doing, for the watchdog's deny message.
pub(crate) struct WorkerStatus {
    doing: Mutex<String>,
}

impl WorkerStatus {
    /// A status starting with `doing`.
    pub(crate) fn starting(doing: &str) -> Arc<WorkerStatus> {
        Arc::new(WorkerStatus {
            doing: Mutex::new(doing.to_owned()),
        })
    }

    pub(crate) fn set(&self, text: String) {
        if let Ok(mut doing) = self.doing.lock() {
            *doing = text;
        }
    }

    pub(crate) fn doing(&self) -> String {
        self.doing
            .lock()
            .map_or_else(|_| String::from("working"), |d| d.clone())
    }
}

/// The guard's steps become what the watchdog's deny says the worker was doing.
impl guard::Watch for WorkerStatus {
    fn progress(&self, _event: &guard::Progress<'_>) {}

    fn step(&self, text: &str) {
        self.set(text.to_owned());
    }
}

/// The outcome of one hook call.
#[derive(Debug)]
pub(crate) struct Evaluation {
    pub(crate) decision: Decision,
    pub(crate) call: Option<ToolCall>,
    pub(crate) facts: AuditFacts,
}

/// Runs the hook as a process: stdin to decision, a guard (when the call needs one and no
/// broker is configured) run where `direct` says. Nothing in here may panic out.
pub fn run(args: &HookArgs, direct: Direct) -> ExitCode {
    // A person who typed `rewind hook` at a terminal would wait in silence for a payload
    // no one is going to type: one isatty call says so. A host always gives a pipe or a
    // file, and the answer is the usage code, a block, whatever runs it.
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return at_a_terminal();
    }
    let (host, config_path, managed) = (args.host, args.config.as_deref(), args.managed);
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    // The dialect, once known, so that even a panic is answered in the host's words.
    let dialect = std::cell::Cell::new(host);
    let answered = catch_unwind(AssertUnwindSafe(|| {
        answer(host, config_path, managed, started, &dialect, direct)
    }));
    let rendered = match answered {
        Ok(rendered) => rendered,
        Err(panic) => {
            let decision = decision::decide(
                "the call",
                "",
                &Case::Internal(&panic_message(&*panic)),
                &Policy::default(),
            );
            // With no dialect known, or a dialect that panics too, refuse by exit code.
            dialect
                .get()
                .and_then(|host| catch_unwind(|| host.render(&decision)).ok())
                .unwrap_or_else(|| {
                    host::Rendered::block(decision.text().unwrap_or("rewind: internal error"))
                })
        }
    };
    rendered.emit()
}

/// `rewind hook` with its stdin a terminal: what it reads and how to try a call, exit 2.
fn at_a_terminal() -> ExitCode {
    crate::console::err(
        "rewind hook reads an agent host's pre-tool-use hook JSON on stdin (the host runs it on every tool call); to try one, run `rewind check --command 'ssh web01 sudo reboot'` or `rewind check --payload call.json`",
    );
    crate::exit::code(crate::exit::BLOCKED)
}

/// A command line that is not the hook's shape, given to the hook's own binary: refused like
/// any call the hook cannot answer (exit 2, one line on stderr), so a host whose entry was
/// mistyped blocks the call rather than running it unguarded.
pub fn usage_error(program: &str) -> ExitCode {
    crate::console::err(format!(
        "rewind: usage: {program} [--config FILE] hook [--host HOST] [--managed] \
         (HOST: claude-code, codex, gemini, copilot, cursor); refusing the call"
    ));
    crate::exit::code(crate::exit::BLOCKED)
}

/// Everything from stdin to the rendered answer (audited).
fn answer(
    host: Option<Host>,
    config_path: Option<&Path>,
    managed: bool,
    started: Instant,
    dialect: &std::cell::Cell<Option<Host>>,
    direct: Direct,
) -> host::Rendered {
    let loaded = if managed {
        Config::load_managed(config_path)
    } else {
        Config::discover_for_hook(config_path)
    };
    let (config, config_error) = match loaded {
        Ok(config) => (config, None),
        // Defaults keep the budget and the audit trail; the call itself is denied.
        Err(e) => (Config::defaults(), Some(format!("{e:#}"))),
    };
    // Said on every run; on exit 0 the host keeps stderr for its debug log.
    for warning in &config.warnings {
        crate::console::err(format!("rewind: warning: {warning}"));
    }
    // The budget counts from the start: reading the config is part of it.
    let deadline = Deadline::starting_at(started, config.hook.budget);
    let read = read_stdin(&deadline.shortened_by(AUDIT_ALLOWANCE));
    let (dialect, evaluation) = match read {
        Err(e) => (
            host,
            Evaluation {
                decision: decision::decide(
                    "",
                    "",
                    &Case::Refused(BlockReason::StdinUnreadable(&e.to_string())),
                    &Policy::default(),
                ),
                call: None,
                facts: AuditFacts::default(),
            },
        ),
        Ok(stdin) => match host::read(host, &stdin) {
            Err((dialect, unreadable)) => (dialect, unreadable_evaluation(&unreadable)),
            Ok(call) => {
                dialect.set(Some(call.host));
                let evaluation = if let Some(why) = crate::console::stdout_unwritable() {
                    // No answer can reach the host (`/dev/null`, a stdout the parent closed,
                    // `/dev/full`, a pipe whose reader is gone): no checkpoint for a call that
                    // will be refused, and the audit trail says what the host got.
                    Evaluation {
                        decision: decide(
                            &call,
                            &Case::Refused(BlockReason::NoReader(why)),
                            &config,
                        ),
                        call: Some(call),
                        facts: AuditFacts::default(),
                    }
                } else {
                    evaluate_call(call, &config, config_error.as_deref(), &deadline, direct)
                };
                (dialect.get(), evaluation)
            }
        },
    };
    append_record(&config, &evaluation, &deadline);
    match dialect {
        Some(host) => host.render(&evaluation.decision),
        None => host::Rendered::block(evaluation.decision.text().unwrap_or("rewind: refusing")),
    }
}

/// Reads stdin to its end (at most `MAX_INPUT + 1` bytes) on this thread, waiting for each
/// chunk only until `deadline`: a host that writes the payload but never closes stdin gets a
/// refusal within the budget, not a hook that outlives it (some hosts run the tool when the
/// hook times out). No thread: the hook starts on every tool call, and a thread costs its
/// start, its stack and an allocator arena each time.
fn read_stdin(deadline: &Deadline) -> std::io::Result<Vec<u8>> {
    crate::platform::read_stdin(deadline, MAX_INPUT)
}

fn unreadable_evaluation(unreadable: &Unreadable) -> Evaluation {
    let case = match unreadable {
        Unreadable::AfterTheCall => Case::AfterTheCall,
        other => Case::Refused(BlockReason::BadInput(other)),
    };
    Evaluation {
        decision: decision::decide("", "", &case, &Policy::default()),
        call: None,
        facts: AuditFacts::default(),
    }
}

/// Names the MCP server of a call whose host does not name it plainly (Copilot's
/// `<server>-<tool>`, Cursor's command or URL) from the host's own configuration and the
/// catalogs' server names: `Some` is the decision when it cannot be told which server it is.
pub(crate) fn name_server(call: &mut ToolCall, config: &Config) -> Option<Decision> {
    let catalogued = || {
        Catalog::literal_servers(config.hook.builtin_catalogs, &config.hook.catalogs)
            .unwrap_or_default()
    };
    let home = config::home_dir();
    match host::servers::name_server(call, home.as_deref(), catalogued) {
        Ok(()) => None,
        Err(why) => Some(decide(call, &Case::UnknownServer { why: &why }, config)),
    }
}

/// Decides on one call: classification on this thread, the guard (if needed) under the
/// watchdog.
fn evaluate_call(
    mut call: ToolCall,
    config: &Config,
    config_error: Option<&str>,
    deadline: &Deadline,
    direct: Direct,
) -> Evaluation {
    let unnamed = match config_error {
        None => name_server(&mut call, config),
        Some(_) => None,
    };
    let classified = match (unnamed, config_error) {
        (Some(decision), _) => (Plan::Decided(decision), classify::Noted::default()),
        (None, Some(_)) if call.event == Event::AfterTool => (
            Plan::Decided(decide(&call, &Case::AfterTheCall, config)),
            classify::Noted {
                ran: true,
                ..classify::Noted::default()
            },
        ),
        (None, Some(error)) => (
            Plan::Decided(decide(&call, &Case::ConfigError(error), config)),
            classify::Noted::default(),
        ),
        (None, None) => {
            let classified = remembered(
                classify::plan(&call, config, &LocalFiles::new(config)),
                &call,
                config,
            );
            (classified.plan, classified.noted)
        }
    };
    let (plan, noted) = classified;
    let mut facts = AuditFacts::from(noted);
    let decision = match plan {
        Plan::Decided(decision) => decision,
        Plan::Guard(targets) => {
            let (decision, worker_facts) = watch_guard(&call, targets, config, deadline, direct);
            if let Some(worker_facts) = worker_facts {
                facts = AuditFacts {
                    class: facts.class,
                    ..worker_facts
                };
            }
            decision
        }
    };
    Evaluation {
        decision,
        call: Some(call),
        facts,
    }
}

/// Writes down the session a classified call opens; a session that cannot be remembered
/// makes the call ask instead (see [`classify::Classified::not_remembered`]).
fn remembered(
    classified: classify::Classified,
    call: &ToolCall,
    config: &Config,
) -> classify::Classified {
    let written = match &classified.remember {
        None => return classified,
        Some(session) => local::remember(session),
    };
    match written {
        Ok(()) => classified,
        Err(e) => classified.not_remembered(call, config, &format!("{e:#}")),
    }
}

/// The guard on a worker thread, the watchdog on this one: the worker's decision and what it
/// found, or the watchdog's decision (and nothing found) when the worker panicked or did not
/// answer in time.
fn watch_guard(
    call: &ToolCall,
    targets: Vec<VmRef>,
    config: &Config,
    deadline: &Deadline,
    direct: Direct,
) -> (Decision, Option<AuditFacts>) {
    let status = WorkerStatus::starting("starting the guard");
    let worker_call = call.clone();
    let worker_config = config.clone();
    let worker_status = Arc::clone(&status);
    let watchdog = deadline.shortened_by(AUDIT_ALLOWANCE);
    let worker_deadline = watchdog.shortened_by(WORKER_MARGIN);
    let guarded = supervise(&watchdog, &status, move || {
        let mut facts = AuditFacts::default();
        let decision = guard_targets(
            direct,
            &worker_call,
            &targets,
            &worker_config,
            &worker_deadline,
            &worker_status,
            &mut facts,
        );
        (decision, facts)
    });
    match guarded {
        Supervised::Done((decision, facts)) => (decision, Some(facts)),
        Supervised::Failed(failure) => (decide(call, &failure.as_case(), config), None),
    }
}

/// The mutating path ([`guard::protect`]): find every VM in Zerto (or ask the broker to),
/// guard them all, decide from what the ZVM said.
fn guard_targets(
    direct: Direct,
    call: &ToolCall,
    targets: &[VmRef],
    config: &Config,
    deadline: &Deadline,
    progress: &WorkerStatus,
    facts: &mut AuditFacts,
) -> Decision {
    let references: Vec<&str> = targets.iter().map(|t| t.reference.as_str()).collect();
    let change = guard::Change {
        caller: call.caller(),
        id: call.change_id(),
        action: call.tool.clone(),
        input: Some(audit::input_fingerprint(&call.input)),
    };
    let protected = guard::protect(direct, config, &references, &change, deadline, progress);
    facts.checkpoints = protected.audit_checkpoints();
    facts.vpgs = protected.vpg_names();
    facts.vms = protected.vms;
    facts.named = protected.named;
    facts.brokered = protected.brokered;
    protected.decision
}

/// How supervised work ended.
enum Supervised<T> {
    Done(T),
    Failed(Failure),
}

/// Why supervised work gave no answer.
enum Failure {
    Panicked(String),
    CannotStart(String),
    BudgetSpent { budget: Duration, doing: String },
}

impl Failure {
    fn as_case(&self) -> Case<'_> {
        match self {
            Self::Panicked(message) | Self::CannotStart(message) => Case::Internal(message),
            Self::BudgetSpent { budget, doing } => Case::BudgetSpent {
                budget: *budget,
                doing,
            },
        }
    }
}

/// Runs `work` on a worker thread under `catch_unwind` while this thread watches the
/// deadline: a panic, or a worker that has not answered when the deadline comes (saying
/// what it was doing), is a failure the decision table denies.
fn supervise<T: Send + 'static>(
    deadline: &Deadline,
    progress: &WorkerStatus,
    work: impl FnOnce() -> T + Send + 'static,
) -> Supervised<T> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(String::from("hook"))
        .spawn(move || {
            // The watchdog may have answered already; nobody listens then.
            let _ = tx.send(catch_unwind(AssertUnwindSafe(work)));
        });
    if let Err(e) = spawned {
        return Supervised::Failed(Failure::CannotStart(format!("cannot start ({e})")));
    }
    match rx.recv_timeout(deadline.remaining()) {
        Ok(Ok(done)) => Supervised::Done(done),
        Ok(Err(panic)) => Supervised::Failed(Failure::Panicked(panic_message(&*panic))),
        Err(_) => Supervised::Failed(Failure::BudgetSpent {
            budget: deadline.budget(),
            doing: progress.doing(),
        }),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| String::from("panic"))
}

/// Appends the decision to the audit trail, waiting at most [`AUDIT_ALLOWANCE`]; a failure is
/// said on stderr, never decisive (stderr of an exit-0 hook only reaches the host's debug
/// log).
fn append_record(config: &Config, evaluation: &Evaluation, deadline: &Deadline) {
    let Some(record) = record::of(evaluation, deadline.elapsed(), config.audit.store_input) else {
        return;
    };
    // Waited for briefly: another writer's turn or a slow broker must not hold the decision.
    let wait = AUDIT_ALLOWANCE;
    let appended = if config.broker.socket.is_some() {
        crate::broker::client::call(
            &config.broker,
            crate::broker::protocol::Op::Record { record },
            &Deadline::after(wait),
            &mut |_| {},
        )
        .map(|_| ())
        .map_err(anyhow::Error::from)
    } else {
        audit::Trail::of(config).and_then(|trail| audit::append_within(trail, &record, wait))
    };
    if let Err(e) = appended {
        crate::console::err(format!("rewind: audit trail not written: {e:#}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_the_worker_is_a_failure_with_its_message() {
        let progress = WorkerStatus::starting("");
        let deadline = Deadline::after(Duration::from_secs(10));
        let outcome = supervise(&deadline, &progress, || -> () {
            panic!("catalog index out of range")
        });
        let Supervised::Failed(failure) = outcome else {
            panic!("failure expected");
        };
        assert_eq!(
            decision::decide("t", "c", &failure.as_case(), &Policy::default()),
            Decision::Deny(String::from(
                "rewind: internal error (catalog index out of range); the call was not allowed"
            ))
        );
    }

    #[test]
    fn a_worker_past_the_deadline_is_a_deny_saying_what_it_was_doing() {
        let progress = WorkerStatus::starting("waiting for Zerto");
        let deadline = Deadline::after(Duration::from_millis(50));
        let outcome = supervise(&deadline, &progress, || {
            std::thread::sleep(Duration::from_secs(5));
        });
        let Supervised::Failed(failure) = outcome else {
            panic!("failure expected");
        };
        let Decision::Deny(reason) =
            decision::decide("t", "c", &failure.as_case(), &Policy::default())
        else {
            panic!("deny expected");
        };
        assert!(
            reason.contains("budget ran out while waiting for Zerto"),
            "{reason}"
        );
    }
}
