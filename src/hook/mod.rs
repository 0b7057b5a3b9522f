//! `rewind hook`: one tool call in, one decision out, always in time.
//!
//! The steps, in order:
//!
//! 1. Load the configuration (a broken one is kept as the reason to deny the call); the
//!    budget counts from the process start, so this is part of it.
//! 2. Read stdin (bounded, on a helper thread under the budget) and turn it into a neutral
//!    [`ToolCall`] through the host's dialect ([`crate::host`]). If stdout goes where no
//!    answer can reach the host, the call is refused here.
//! 3. Name the MCP server where the host does not, then classify the call
//!    ([`crate::classify`]): pure CPU on the main thread, reading this machine's catalogs,
//!    sessions and shell analysis through [`LocalFiles`]. A session the call opens is then
//!    remembered here, or the call asks. Most calls end here (read-only, local, unlisted, no
//!    VM, a pattern that cannot be known, …).
//! 4. Only a call that reaches exact VMs needs the ZVM: then a worker thread runs the guard
//!    under `catch_unwind` while the main thread is a watchdog that denies when the budget is
//!    spent.
//! 5. Every decision is audited, the watchdog's too: its record (built in `record`) is
//!    appended on the helper thread that read stdin ([`append_record`]). Then it is rendered
//!    in the host's dialect.
//!
//! Every path ends in exit 0 with a valid decision, or exit 2 with one line on stderr: the
//! whole of it runs under `catch_unwind`, and stderr is written only through
//! [`crate::console::err`], which cannot panic. A timeout, a panic (exit 101) or output that is
//! not JSON would let the call run unguarded on the real host.
//!
//! Stdin is read on its own thread under the budget: the hosts close it once the payload is
//! written, and one that kept it open gets a refusal (exit 2) before the budget ends rather
//! than a hook that never answers.

mod local;
mod record;

use std::io::Read as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::audit;
use crate::catalog::Catalog;
use crate::classify::{self, Plan, decide};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::decision::{self, BlockReason, Case, Decision, Policy};
use crate::guard;
use crate::host::{self, Event, Host, MAX_INPUT, ToolCall, Unreadable};
use crate::tag::Tag;
use crate::targets::VmRef;
use crate::zvm::resolve;
use crate::zvm::{Client, Vm};

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

/// The outcome of one hook call.
#[derive(Debug)]
pub(crate) struct Evaluation {
    pub(crate) decision: Decision,
    pub(crate) call: Option<ToolCall>,
    pub(crate) facts: AuditFacts,
}

/// Runs the hook as a process: stdin to decision. Nothing in here may panic out.
pub(crate) fn run(host: Option<Host>, config_path: Option<&Path>, managed: bool) -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    // The dialect, once known, so that even a panic is answered in the host's words.
    let dialect = std::cell::Cell::new(host);
    let answered = catch_unwind(AssertUnwindSafe(|| {
        answer(host, config_path, managed, started, &dialect)
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

/// Everything from stdin to the rendered answer (audited).
fn answer(
    host: Option<Host>,
    config_path: Option<&Path>,
    managed: bool,
    started: Instant,
    dialect: &std::cell::Cell<Option<Host>>,
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
    let (read, helper) = read_stdin(&deadline.shortened_by(AUDIT_ALLOWANCE));
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
                    evaluate_call(call, &config, config_error.as_deref(), &deadline)
                };
                (dialect.get(), evaluation)
            }
        },
    };
    append_record(&config, &evaluation, &deadline, helper);
    match dialect {
        Some(host) => host.render(&evaluation.decision),
        None => host::Rendered::block(evaluation.decision.text().unwrap_or("rewind: refusing")),
    }
}

/// An audit record's append (to the local trail, or to the broker's).
type AuditJob = Box<dyn FnOnce() -> anyhow::Result<()> + Send>;

/// The hook's one helper thread, free again after reading stdin: it takes the audit append.
/// Both steps block on things the hook does not control (a host that never closes stdin, a
/// hung file system), so each is waited for under a deadline; one thread serves both because
/// each thread costs its start, its stack and a context switch on every tool call.
struct Helper {
    jobs: mpsc::Sender<AuditJob>,
    done: mpsc::Receiver<anyhow::Result<()>>,
}

/// Reads stdin (at most `MAX_INPUT + 1` bytes) on a helper thread, waiting until `deadline`:
/// a host that writes the payload but never closes stdin gets a refusal within the budget,
/// not a hook that outlives it (some hosts run the tool when the hook times out). The helper
/// comes back when it finished reading in time, for the audit append.
fn read_stdin(deadline: &Deadline) -> (std::io::Result<Vec<u8>>, Option<Helper>) {
    read_on_helper(deadline, || {
        let mut stdin = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_INPUT as u64 + 1)
            .read_to_end(&mut stdin)
            .map(|_| stdin)
    })
}

/// [`read_stdin`] with the reading given: runs `read` on a new helper thread under `deadline`.
fn read_on_helper(
    deadline: &Deadline,
    read: impl FnOnce() -> std::io::Result<Vec<u8>> + Send + 'static,
) -> (std::io::Result<Vec<u8>>, Option<Helper>) {
    let (read_tx, read_rx) = mpsc::channel();
    let (jobs, job_rx) = mpsc::channel::<AuditJob>();
    let (done_tx, done) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(String::from("stdin+audit"))
        .spawn(move || {
            let _ = read_tx.send(read());
            if let Ok(job) = job_rx.recv() {
                let _ = done_tx.send(job());
            }
        });
    if let Err(e) = spawned {
        return (Err(e), None);
    }
    match read_rx.recv_timeout(deadline.remaining()) {
        Ok(read) => (read, Some(Helper { jobs, done })),
        // Still reading: that thread is lost to the audit append.
        Err(_) => (
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "still open when the budget ran out",
            )),
            None,
        ),
    }
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
            let (decision, worker_facts) = watch_guard(&call, targets, config, deadline);
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

/// The mutating path: find every VM in Zerto, guard them all, decide from what the ZVM said.
pub(crate) fn guard_targets(
    call: &ToolCall,
    targets: &[VmRef],
    config: &Config,
    deadline: &Deadline,
    progress: &WorkerStatus,
    facts: &mut AuditFacts,
) -> Decision {
    let references: Vec<&str> = targets.iter().map(|t| t.reference.as_str()).collect();
    facts.vms = references.iter().map(|r| (*r).to_owned()).collect();
    let all = references.join(",");
    if let Some(socket) = &config.broker.socket {
        return guard_through_broker(call, socket, &references, config, deadline, progress, facts);
    }
    let zvm_error =
        |error: &crate::zvm::ZvmError| decide(call, &Case::ZvmError { vms: &all, error }, config);
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(e) => return zvm_error(&crate::zvm::ZvmError::Setup(format!("{e:#}"))),
    };
    // No fallback to a shared directory: without the user's own, no token cache or lock,
    // and a deny that says so.
    let cache = match config::cache_dir() {
        Ok(dir) => dir,
        Err(e) => return zvm_error(&crate::zvm::ZvmError::Setup(format!("{e:#}"))),
    };
    let client = match Client::new(zvm, &cache) {
        Ok(client) => client,
        Err(e) => return zvm_error(&e),
    };

    progress.set(match references.as_slice() {
        [one] => format!("looking up VM {one:?} in Zerto"),
        many => format!("looking up VMs {} in Zerto", many.join(", ")),
    });
    let vms = match resolve_targets(call, &client, &references, config, deadline) {
        Ok(vms) => vms,
        Err(decision) => return decision,
    };
    facts.vms = vms.iter().map(|vm| vm.name.clone()).collect();
    facts.named = audit::named_otherwise(&references, &facts.vms);
    facts.vpgs = Vec::new();
    for vm in &vms {
        for vpg in &vm.vpgs {
            if !facts.vpgs.contains(&vpg.name) {
                facts.vpgs.push(vpg.name.clone());
            }
        }
    }

    progress.set(format!(
        "waiting for Zerto to list the tagged checkpoint of VM {}",
        facts.vms.join(", ")
    ));
    let agent = call.agent();
    let change = call.change_id();
    let now = SystemTime::now();
    let tag_for = |names: &str| Tag::new(&agent, &call.tool, names, &change, now);
    let report = guard::guard(
        &client,
        &vms,
        &tag_for,
        &cache.join("locks"),
        deadline,
        &guard::Quiet,
    );
    facts.checkpoints = report.audit_checkpoints();
    decide(call, &Case::Guarded(&report), config)
}

/// The guard asked of the broker: it resolves, tags (building the tag from these fields),
/// confirms and decides with this hook's policy, and records the call. Whatever goes wrong
/// with the broker (down, slow, killed, an answer that is not its protocol) is a deny, or an
/// ask under `on_zvm_error = "ask"`, naming the socket.
fn guard_through_broker(
    call: &ToolCall,
    socket: &Path,
    references: &[&str],
    config: &Config,
    deadline: &Deadline,
    progress: &WorkerStatus,
    facts: &mut AuditFacts,
) -> Decision {
    use crate::broker::protocol::{GuardRequest, GuardResult, Op};
    progress.set(format!(
        "waiting for the rewind broker at {}",
        socket.display()
    ));
    let (on_checkpoint, on_zvm_error) = crate::broker::protocol::policy_words(&config.hook);
    let request = GuardRequest {
        host: call.host.name().to_owned(),
        session: call.session.clone(),
        change: call.change_id(),
        tool: call.tool.clone(),
        vms: references.iter().map(|r| (*r).to_owned()).collect(),
        on_checkpoint,
        on_zvm_error,
    };
    let answer =
        crate::broker::client::call(&config.broker, Op::Guard(request), deadline, &mut |text| {
            progress.set(format!(
                "{text} (through the rewind broker at {})",
                socket.display()
            ));
        })
        .map_err(|e| e.0)
        .and_then(|value| {
            serde_json::from_value::<GuardResult>(value).map_err(|e| {
                format!(
                    "the broker at {}: its guard answer is not its protocol ({e})",
                    socket.display()
                )
            })
        });
    match answer {
        Ok(result) => {
            facts.vms = result.vms;
            facts.named = result.named;
            facts.vpgs = result.vpgs;
            facts.checkpoints = result.checkpoints;
            facts.brokered = true;
            result.decision.into_decision()
        }
        Err(error) => decide(
            call,
            &Case::BrokerFailed {
                vms: &references.join(","),
                error: &error,
            },
            config,
        ),
    }
}

/// Every reference as exactly one protected VM (duplicates merged), or the decision when one
/// is unknown, ambiguous, or the ZVM cannot be asked.
fn resolve_targets(
    call: &ToolCall,
    client: &Client,
    references: &[&str],
    config: &Config,
    deadline: &Deadline,
) -> Result<Vec<Vm>, Decision> {
    match resolve::resolve_targets(client, references, &config.vm_aliases, deadline) {
        Ok(Ok(vms)) => Ok(vms),
        Ok(Err(unresolved)) => Err(decide(call, &Case::from(&unresolved), config)),
        Err(error) => Err(decide(
            call,
            &Case::ZvmError {
                vms: &references.join(","),
                error: &error,
            },
            config,
        )),
    }
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
fn append_record(
    config: &Config,
    evaluation: &Evaluation,
    deadline: &Deadline,
    helper: Option<Helper>,
) {
    let Some(record) = record::of(evaluation, deadline.elapsed()) else {
        return;
    };
    // On the helper thread (or a new one when stdin kept it), waited for briefly: a hung file
    // system or broker must not hold the decision.
    let wait = AUDIT_ALLOWANCE;
    let job: AuditJob = if config.broker.socket.is_some() {
        let broker = config.broker.clone();
        Box::new(move || {
            crate::broker::client::call(
                &broker,
                crate::broker::protocol::Op::Record { record },
                &Deadline::after(wait),
                &mut |_| {},
            )
            .map(|_| ())
            .map_err(anyhow::Error::from)
        })
    } else {
        let path = config.hook.audit_path().map(Path::to_path_buf);
        Box::new(move || path.and_then(|path| audit::append(&path, &record)))
    };
    let started = if let Some(helper) = helper {
        helper
            .jobs
            .send(job)
            .map(|()| helper.done)
            .map_err(|_| anyhow::anyhow!("the helper thread is gone"))
    } else {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(String::from("audit"))
            .spawn(move || {
                let _ = tx.send(job());
            })
            .map(|_| rx)
            .map_err(anyhow::Error::from)
    };
    let outcome = started.and_then(|done| {
        done.recv_timeout(wait)
            .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within {} ms", wait.as_millis())))
    });
    if let Err(e) = outcome {
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

    /// The thread that read stdin appends the record; a stdin still open at the deadline
    /// keeps its thread, and the record is then appended by a new one.
    #[test]
    fn the_audit_is_appended_whether_or_not_stdin_came_in_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = Config::defaults();
        let path = dir.path().join("audit.jsonl");
        config.hook.audit_log = Some(path.clone());
        let evaluation = |reason: &str| Evaluation {
            decision: Decision::Block(reason.to_owned()),
            call: None,
            facts: AuditFacts::default(),
        };
        let deadline = Deadline::after(Duration::from_secs(10));
        let (read, helper) = read_on_helper(&deadline, || Ok(b"{}".to_vec()));
        assert_eq!(read.expect("read in time"), b"{}");
        assert!(helper.is_some(), "the helper is free for the audit");
        append_record(&config, &evaluation("read in time"), &deadline, helper);

        let short = Deadline::after(Duration::from_millis(50));
        let (read, helper) = read_on_helper(&short, || {
            std::thread::sleep(Duration::from_secs(5));
            Ok(Vec::new())
        });
        assert_eq!(
            read.expect_err("still reading").kind(),
            std::io::ErrorKind::TimedOut
        );
        assert!(helper.is_none(), "a helper still reading is not reused");
        append_record(
            &config,
            &evaluation("stdin never closed"),
            &deadline,
            helper,
        );

        let audit = std::fs::read_to_string(&path).expect("audited");
        let lines: Vec<&str> = audit.lines().collect();
        assert_eq!(lines.len(), 2, "{audit}");
        assert!(lines[0].contains("read in time"), "{audit}");
        assert!(lines[1].contains("stdin never closed"), "{audit}");
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
