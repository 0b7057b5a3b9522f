//! `rewind hook`: one tool call in, one decision out, always in time.
//!
//! The steps, in order:
//!
//! 1. Read stdin (bounded) and turn it into a neutral `ToolCall` through the host's dialect
//!    ([`crate::host`]).
//! 2. Load the configuration and classify the call (`plan`): pure CPU and local files, on
//!    the main thread. Most calls end here (read-only, local, unlisted, no VM, a pattern that
//!    cannot be known, …).
//! 3. Only a call that reaches exact VMs needs the ZVM: then a worker thread runs the guard
//!    under `catch_unwind` while the main thread is a watchdog that denies when the budget is
//!    spent.
//! 4. Every decision is audited, the watchdog's too, then rendered in the host's dialect.
//!
//! Every path ends in exit 0 with a valid decision, or exit 2 with one line on stderr: the
//! whole of it runs under `catch_unwind`, and stderr is written only through
//! `crate::console::err`, which cannot panic. A timeout, a panic (exit 101) or output that is
//! not JSON would let the call run unguarded on the real host.
//!
//! Stdin is read on its own thread under the budget: the hosts close it once the payload is
//! written, and one that kept it open gets a refusal (exit 2) before the budget ends rather
//! than a hook that never answers.

mod args;

pub use args::HookArgs;

use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::audit::{self, AuditCheckpoint, Record};
use crate::catalog::{Bound, Catalog, Classification, Entry, ToolName};
use crate::config::{self, Config};
use crate::deadline::Deadline;
use crate::decision::{self, Decision, Finding, Policy};
use crate::guard;
use crate::host::{self, Event, Host, MAX_INPUT, ToolCall, Unreadable};
use crate::sessions::Sessions;
use crate::shell;
use crate::targets::{Target, Targets};

/// Time kept back from the watchdog's deadline for the worker to answer first.
const WORKER_MARGIN: Duration = Duration::from_millis(500);
/// Time kept back from the budget for the audit append, so that even the watchdog's deny
/// is written before the budget ends.
const AUDIT_ALLOWANCE: Duration = Duration::from_millis(300);

/// What the worker is doing, for the watchdog's deny message.
pub(crate) struct Progress {
    doing: Mutex<String>,
}

impl Progress {
    /// Progress starting with `doing`.
    pub(crate) fn starting(doing: &str) -> Arc<Progress> {
        Arc::new(Progress {
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
impl guard::Watch for Progress {
    fn progress(&self, _event: &guard::Progress<'_>) {}

    fn step(&self, text: &str) {
        self.set(text.to_owned());
    }
}

/// What the hook found, for the audit trail.
#[derive(Debug, Default, Clone)]
pub(crate) struct Facts {
    /// An after-the-call payload: the tool ran.
    pub(crate) ran: bool,
    pub(crate) class: &'static str,
    /// Every VM the call reaches (references until resolved, then Zerto's names).
    pub(crate) vms: Vec<String>,
    /// The references that were not Zerto's names, once resolved.
    pub(crate) named: Vec<String>,
    pub(crate) vpgs: Vec<String>,
    pub(crate) checkpoints: Vec<AuditCheckpoint>,
    /// The broker decided and recorded this call itself: the hook records nothing more.
    pub(crate) brokered: bool,
}

/// The outcome of one hook call.
#[derive(Debug)]
pub(crate) struct Evaluation {
    pub(crate) decision: Decision,
    pub(crate) call: Option<ToolCall>,
    pub(crate) facts: Facts,
}

/// What classification decides before any I/O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// The answer, known without the ZVM.
    Decided(Decision),
    /// The call reaches exactly these VMs: the guard must run.
    Guard(Vec<Target>),
}

/// Runs the hook as a process: stdin to decision. Nothing in here may panic out.
pub fn run(args: &HookArgs) -> ExitCode {
    let (host, config_path, managed) = (args.host, args.config.as_deref(), args.managed);
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
                &Finding::Internal(&panic_message(&*panic)),
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
                decision: Decision::Block(format!(
                    "rewind: cannot read stdin ({e}); refusing the call"
                )),
                call: None,
                facts: Facts::default(),
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
                        decision: Decision::Block(format!(
                            "rewind: {why}, so no decision can reach the host; refusing the call"
                        )),
                        call: Some(call),
                        facts: Facts::default(),
                    }
                } else {
                    evaluate_call(call, &config, config_error.as_deref(), &deadline)
                };
                (dialect.get(), evaluation)
            }
        },
    };
    // The VM references a call named are kept and shown without the credentials in them.
    let mut evaluation = evaluation;
    for reference in evaluation
        .facts
        .vms
        .iter_mut()
        .chain(evaluation.facts.named.iter_mut())
    {
        *reference = crate::redact::strip_credentials(reference);
    }
    record(&config, &evaluation, &deadline);
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
    read_within(&mut std::io::stdin().lock(), deadline)
}

/// [`read_stdin`] from any input that can be polled.
fn read_within(
    input: &mut (impl Read + std::os::fd::AsFd),
    deadline: &Deadline,
) -> std::io::Result<Vec<u8>> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    // Larger than stdin's own buffer, so every read goes straight to the descriptor and
    // nothing waits in a buffer that `poll` cannot see.
    let mut chunk = vec![0; 64 * 1024];
    let mut input_bytes = Vec::new();
    loop {
        let wait = u16::try_from(deadline.remaining().as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(wait)) {
            Ok(0) if deadline.expired() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "still open when the budget ran out",
                ));
            }
            // A wait shorter than the deadline (at most 65 s at a time), or a signal.
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        let read = match input.read(&mut chunk) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if read == 0 {
            return Ok(input_bytes);
        }
        input_bytes.extend_from_slice(&chunk[..read]);
        if input_bytes.len() > MAX_INPUT {
            return Ok(input_bytes);
        }
    }
}

fn unreadable_evaluation(unreadable: &Unreadable) -> Evaluation {
    let finding = match unreadable {
        Unreadable::AfterTheCall => Finding::AfterTheCall,
        other => Finding::BadInput(other),
    };
    Evaluation {
        decision: decision::decide("", "", &finding, &Policy::default()),
        call: None,
        facts: Facts::default(),
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
        Err(why) => Some(decide(call, &Finding::UnknownServer { why: &why }, config)),
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
    let mut facts = Facts::default();
    let unnamed = match config_error {
        None => name_server(&mut call, config),
        Some(_) => None,
    };
    let plan = match unnamed {
        Some(decision) => Plan::Decided(decision),
        None => match config_error {
            Some(_) if call.event == Event::AfterTool => {
                facts.ran = true;
                Plan::Decided(Decision::None)
            }
            Some(error) => Plan::Decided(decide(&call, &Finding::ConfigError(error), config)),
            None => plan(&call, config, &mut facts),
        },
    };
    let decision = match plan {
        Plan::Decided(decision) => decision,
        Plan::Guard(targets) => {
            let progress = Progress::starting("starting the guard");
            let worker_call = call.clone();
            let worker_config = config.clone();
            let worker_progress = Arc::clone(&progress);
            let watchdog = deadline.shortened_by(AUDIT_ALLOWANCE);
            let worker_deadline = watchdog.shortened_by(WORKER_MARGIN);
            let guarded = supervise(&watchdog, &progress, move || {
                let mut facts = Facts::default();
                let decision = guard_targets(
                    &worker_call,
                    &targets,
                    &worker_config,
                    &worker_deadline,
                    &worker_progress,
                    &mut facts,
                );
                (decision, facts)
            });
            match guarded {
                Supervised::Done((decision, worker_facts)) => {
                    facts = Facts {
                        class: facts.class,
                        ..worker_facts
                    };
                    decision
                }
                Supervised::Failed(finding) => decide(&call, &finding.as_finding(), config),
            }
        }
    };
    Evaluation {
        decision,
        call: Some(call),
        facts,
    }
}

fn policy(config: &Config) -> Policy {
    Policy {
        on_checkpoint: config.hook.on_checkpoint,
        on_zvm_error: config.hook.on_zvm_error,
    }
}

fn decide(call: &ToolCall, finding: &Finding<'_>, config: &Config) -> Decision {
    decision::decide(&call.tool, &call.change_id(), finding, &policy(config))
}

/// Classifies a call without any I/O beyond reading the catalogs: the one code path behind
/// both `rewind hook` and `rewind check`.
pub(crate) fn plan(call: &ToolCall, config: &Config, facts: &mut Facts) -> Plan {
    match &call.event {
        Event::BeforeTool => {}
        // After the call: nothing to decide, but the audit trail notes that it ran.
        Event::AfterTool => {
            facts.ran = true;
            return Plan::Decided(decide(call, &Finding::AfterTheCall, config));
        }
        Event::Unknown(event) => {
            return Plan::Decided(decide(call, &Finding::UnknownEvent(event), config));
        }
    }
    // Before the catalogs: a call that would undo rewind itself asks, whatever carries it.
    let protected = crate::selfguard::Protected::new(config);
    if let Some(why) = crate::selfguard::check_call(call, &protected) {
        facts.class = "self-protection";
        return Plan::Decided(decide(call, &Finding::SelfProtection(&why), config));
    }
    let name = ToolName::parse(&call.tool, call.server.as_deref());
    let server = match &name {
        ToolName::Mcp { server, .. } => Some(server.as_str()),
        ToolName::Host(_) => None,
    };
    let catalog =
        match Catalog::load_for(server, config.hook.builtin_catalogs, &config.hook.catalogs) {
            Ok(catalog) => catalog,
            Err(e) => {
                return Plan::Decided(decide(
                    call,
                    &Finding::CatalogError(&format!("{e:#}")),
                    config,
                ));
            }
        };
    let class = catalog.classify(&name, &call.input);
    facts.class = class_name(&class);
    if let (
        ToolName::Mcp { server, .. },
        Classification::ReadOnly(entry) | Classification::Mutating { entry, .. },
    ) = (&name, &class)
        && let Err(why) = remember_session(&catalog, server, entry, call)
    {
        return Plan::Decided(decide(call, &Finding::VmNotInCall { why: &why }, config));
    }
    match class {
        Classification::Local | Classification::ReadOnly(_) => {
            Plan::Decided(decide(call, &Finding::NoVmConcern, config))
        }
        Classification::Shell {
            command,
            dialect,
            entry,
        } => {
            // A command server's command: the same self-protection as the host's shell tool
            // (which was checked above).
            if let Some(why) = command
                .as_deref()
                .filter(|_| entry.is_some())
                .and_then(|c| crate::selfguard::command(c, dialect, &protected))
            {
                facts.class = "self-protection";
                return Plan::Decided(decide(call, &Finding::SelfProtection(&why), config));
            }
            shell_plan(call, command.as_deref(), dialect, config, facts)
        }
        Classification::Unlisted => Plan::Decided(decide(call, &Finding::Unlisted, config)),
        Classification::Mutating { entry, .. } if entry.ask.is_some() => {
            let why = entry.ask.as_deref().unwrap_or_default();
            Plan::Decided(decide(call, &Finding::VmNotInCall { why }, config))
        }
        Classification::Mutating { entry, targets } => {
            let targets = match &name {
                ToolName::Mcp { server, .. } => bind(&catalog, server, &entry, targets, call),
                ToolName::Host(_) => targets,
            };
            match targets {
                Targets::Missing { looked_for } if !entry.session_arg.is_empty() => {
                    Plan::Decided(decide(
                        call,
                        &Finding::NoVm {
                            looked_for: &looked_for,
                            sessions: true,
                        },
                        config,
                    ))
                }
                targets => decide_targets(call, targets, config, facts),
            }
        }
    }
}

/// Longest the shell classifier may spend (parsing, `ssh -G`, the inventory) before it asks.
const SHELL_TIME_MAX: Duration = Duration::from_secs(10);

/// A call that runs a command: the shell classifier finds its targets (the one code path
/// `rewind check --command` shares), and they go through [`decide_targets`] like any other.
fn shell_plan(
    call: &ToolCall,
    command: Option<&str>,
    dialect: shell::Dialect,
    config: &Config,
    facts: &mut Facts,
) -> Plan {
    let Some(command) = command else {
        return Plan::Decided(decide(
            call,
            &Finding::UnusableVm {
                source: "its command argument",
                why: "is missing or not a string",
            },
            config,
        ));
    };
    let until = Instant::now() + (config.hook.budget / 4).min(SHELL_TIME_MAX);
    let judgement = match shell::judge(command, dialect, config, call.cwd.as_deref(), until) {
        Ok(judgement) => judgement,
        Err(e) => {
            return Plan::Decided(decide(
                call,
                &Finding::CatalogError(&format!("{e:#}")),
                config,
            ));
        }
    };
    // Redacted before it is clipped: a clip could cut a secret from the word that marks it.
    let source = format!(
        "the command `{}`",
        shell::clip(&crate::redact::redact_text(command))
    );
    let typed = matches!(
        call.tool.as_str(),
        crate::catalog::TYPED_SHELL | crate::catalog::TYPED_POWERSHELL
    );
    match judgement.outcome {
        // Typed into a shell that may itself be on another machine (an ssh session): text
        // that names a remote program or a protected machine asks.
        shell::Outcome::NoDecision if typed && judgement.mentions_a_machine => decide_targets(
            call,
            Targets::Unknowable {
                source,
                part: shell::clip(&crate::redact::redact_text(command)),
                why: String::from(
                    "(it is typed into a shell that is already running, whose machine is not known)",
                ),
            },
            config,
            facts,
        ),
        shell::Outcome::NoDecision => Plan::Decided(decide(call, &Finding::NoVmConcern, config)),
        shell::Outcome::Ask { part, why } => decide_targets(
            call,
            Targets::Unknowable {
                source,
                part,
                why: format!("({why})"),
            },
            config,
            facts,
        ),
        shell::Outcome::Checkpoint(vms) => {
            decide_targets(call, Targets::exact(vms, &source), config, facts)
        }
    }
}

/// Remembers the session a call opens (`ssh_connect {name, host}`) as being on its VM. A
/// store that cannot be written makes the opening call itself ask (the error says why): an
/// older record of the same name would otherwise put the follow-ups on the old VM while the
/// server runs them on the new one.
fn remember_session(
    catalog: &Catalog,
    server: &str,
    entry: &Entry,
    call: &ToolCall,
) -> Result<(), String> {
    let host_session = call.session.as_deref().unwrap_or_default();
    if host_session.is_empty() {
        return Ok(());
    }
    // A session opened on no one exact VM is remembered as ambiguous: a follow-up asks even
    // if the same name was opened on a known VM before.
    if let Some((session, vm)) = catalog.session_opened(server, entry, &call.input)
        && let Err(e) = config::state_dir().and_then(|dir| {
            Sessions::in_dir(&dir).remember(
                host_session,
                server,
                &session,
                vm.as_deref(),
                SystemTime::now(),
            )
        })
    {
        return Err(format!(
            "the session {session:?} it opens could not be remembered: {e:#}; a later call in that session would be checkpointed on another VM"
        ));
    }
    Ok(())
}

/// A mutating call naming no VM itself is put on the VM its server or an earlier session
/// binds it to. Anything else is left as the call's own arguments said.
fn bind(
    catalog: &Catalog,
    server: &str,
    entry: &Entry,
    targets: Targets,
    call: &ToolCall,
) -> Targets {
    let Targets::Missing { .. } = targets else {
        return catalog.through_profiles(server, targets);
    };
    let host_session = call.session.as_deref().unwrap_or_default();
    // Without a state directory nothing was remembered: the call then asks.
    let sessions = config::state_dir().ok().map(|dir| Sessions::in_dir(&dir));
    let recall = |session: &str| {
        sessions
            .as_ref()
            .filter(|_| !host_session.is_empty())
            .and_then(|s| s.recall(host_session, server, session, SystemTime::now()))
    };
    match catalog.bound_target(server, entry, &call.input, &recall) {
        Bound::Vm { vm, source } => Targets::exact([vm], &source),
        Bound::No | Bound::UnknownSession { .. } => Targets::Missing {
            looked_for: entry.looked_for(),
        },
    }
}

/// The decision table's side of "which VMs does this call reach": exact targets within
/// `[hook] max_vms` go to the guard; anything else is decided here. Every classifier (a
/// catalog's `vm_arg`, a server bound to one host, the shell parser) ends here.
pub(crate) fn decide_targets(
    call: &ToolCall,
    targets: Targets,
    config: &Config,
    facts: &mut Facts,
) -> Plan {
    let max = config.hook.max_vms;
    let decided = |finding: &Finding<'_>| Plan::Decided(decide(call, finding, config));
    match targets {
        Targets::Exact(list) => {
            facts.vms = list.iter().map(|t| t.reference.clone()).collect();
            if list.len() > max {
                decided(&Finding::TooManyVms {
                    count: list.len(),
                    max,
                })
            } else {
                Plan::Guard(list)
            }
        }
        Targets::Missing { looked_for } => decided(&Finding::NoVm {
            looked_for: &looked_for,
            sessions: false,
        }),
        Targets::Unusable { source, why } => decided(&Finding::UnusableVm {
            source: &source,
            why: &why,
        }),
        Targets::Unknowable { source, part, why } => decided(&Finding::Unknowable {
            source: &source,
            part: &part,
            why: &why,
        }),
    }
}

/// The mutating path ([`guard::protect`]): find every VM in Zerto (or ask the broker to),
/// guard them all, decide from what the ZVM said.
pub(crate) fn guard_targets(
    call: &ToolCall,
    targets: &[Target],
    config: &Config,
    deadline: &Deadline,
    progress: &Progress,
    facts: &mut Facts,
) -> Decision {
    let references: Vec<&str> = targets.iter().map(|t| t.reference.as_str()).collect();
    let change = guard::Change {
        caller: call.caller(),
        id: call.change_id(),
        action: call.tool.clone(),
    };
    let protected = guard::protect(config, &references, &change, deadline, progress);
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
    fn as_finding(&self) -> Finding<'_> {
        match self {
            Self::Panicked(message) | Self::CannotStart(message) => Finding::Internal(message),
            Self::BudgetSpent { budget, doing } => Finding::BudgetSpent {
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
    progress: &Progress,
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

fn class_name(class: &Classification) -> &'static str {
    match class {
        Classification::Local => "local",
        Classification::Shell { .. } => "shell",
        Classification::ReadOnly(_) => "read-only",
        Classification::Mutating { .. } => "mutating",
        Classification::Unlisted => "unlisted",
    }
}

/// Appends the decision to the audit trail, waiting at most [`AUDIT_ALLOWANCE`]; a failure is
/// said on stderr, never decisive (stderr of an exit-0 hook only reaches the host's debug
/// log).
fn record(config: &Config, evaluation: &Evaluation, deadline: &Deadline) {
    let Evaluation {
        decision,
        call,
        facts,
    } = evaluation;
    let call = call.as_ref();
    let record = Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host: call.map(|c| c.host.name().to_owned()).unwrap_or_default(),
        session: call.and_then(|c| c.session.clone()),
        change: call.and_then(|c| c.change.clone()),
        tool: call.map(|c| c.tool.clone()).unwrap_or_default(),
        class: facts.class.to_owned(),
        vms: facts.vms.clone(),
        named: facts.named.clone(),
        vpgs: facts.vpgs.clone(),
        checkpoints: facts.checkpoints.clone(),
        decision: if facts.ran {
            crate::audit::Outcome::Ran
        } else {
            decision.outcome()
        },
        reason: decision.text().map(str::to_owned),
        duration_ms: u64::try_from(deadline.elapsed().as_millis()).unwrap_or(u64::MAX),
        args: call.map(|c| audit::summarise(&c.input)).unwrap_or_default(),
    };
    if facts.brokered {
        // The broker's own record of the guard, with the caller's credentials, is the one.
        return;
    }
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
        config
            .hook
            .audit_path()
            .and_then(|path| audit::append_within(path, &record, wait))
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
        let progress = Progress::starting("");
        let deadline = Deadline::after(Duration::from_secs(10));
        let outcome = supervise(&deadline, &progress, || -> () {
            panic!("catalog index out of range")
        });
        let Supervised::Failed(failure) = outcome else {
            panic!("failure expected");
        };
        assert_eq!(
            decision::decide("t", "c", &failure.as_finding(), &Policy::default()),
            Decision::Deny(String::from(
                "rewind: internal error (catalog index out of range); the call was not allowed"
            ))
        );
    }

    #[test]
    fn a_decision_made_when_the_budget_is_spent_is_still_audited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = Config::defaults();
        let path = dir.path().join("audit.jsonl");
        config.hook.audit_log = Some(path.clone());
        let spent = Deadline::after(Duration::ZERO);
        let evaluation = Evaluation {
            decision: Decision::Deny(String::from("rewind: the hook's budget ran out")),
            call: None,
            facts: Facts::default(),
        };
        record(&config, &evaluation, &spent);
        let audit = std::fs::read_to_string(&path).expect("audited");
        assert!(audit.contains("budget ran out"), "{audit}");
    }

    /// Stdin is read to its end when the host closes it, and refused with a time-out when it
    /// stays open past the deadline, whatever was written before.
    #[test]
    fn stdin_is_read_to_its_end_or_refused_at_the_deadline() {
        use std::io::Write as _;
        let (mut reader, mut writer) = std::io::pipe().expect("pipe");
        writer.write_all(b"{}").expect("written");
        drop(writer);
        let deadline = Deadline::after(Duration::from_secs(10));
        assert_eq!(read_within(&mut reader, &deadline).expect("read"), b"{}");

        let (mut reader, mut writer) = std::io::pipe().expect("pipe");
        writer.write_all(b"{\"tool_name\":").expect("written");
        let short = Deadline::after(Duration::from_millis(50));
        let started = Instant::now();
        let err = read_within(&mut reader, &short).expect_err("still open");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        drop(writer);
    }

    /// More than the largest payload is read no further than one byte past it: the caller
    /// refuses it whole rather than reading on.
    #[test]
    fn stdin_past_the_largest_payload_stops_one_chunk_later() {
        let mut big = std::io::Cursor::new(vec![b' '; MAX_INPUT * 3]);
        let mut file = tempfile::tempfile().expect("tempfile");
        std::io::copy(&mut big, &mut file).expect("written");
        std::io::Seek::rewind(&mut file).expect("rewound");
        let read = read_within(&mut file, &Deadline::after(Duration::from_secs(10))).expect("read");
        assert!(read.len() > MAX_INPUT && read.len() <= MAX_INPUT + 64 * 1024);
    }

    #[test]
    fn a_worker_past_the_deadline_is_a_deny_saying_what_it_was_doing() {
        let progress = Progress::starting("waiting for Zerto");
        let deadline = Deadline::after(Duration::from_millis(50));
        let outcome = supervise(&deadline, &progress, || {
            std::thread::sleep(Duration::from_secs(5));
        });
        let Supervised::Failed(failure) = outcome else {
            panic!("failure expected");
        };
        let Decision::Deny(reason) =
            decision::decide("t", "c", &failure.as_finding(), &Policy::default())
        else {
            panic!("deny expected");
        };
        assert!(
            reason.contains("budget ran out while waiting for Zerto"),
            "{reason}"
        );
    }
}
