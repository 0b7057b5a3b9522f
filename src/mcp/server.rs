//! The MCP side: `tools/list`, and `tools/call` run on a blocking thread with progress
//! notifications, cancellation, and one audit record per call.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, NumberOrString, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;

use super::calls::{self, Answer, Call, Facts};
use super::plans::Plans;
use super::tools;
use crate::audit::{self, Ending, Record};
use crate::config::Config;

/// How often a long call says it is still working when nothing else happened.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// The server's state, shared by every call.
pub(super) struct Server {
    config_path: Option<PathBuf>,
    plans: Arc<Plans>,
    /// A random prefix for change ids made from request ids, unique to this server.
    instance: String,
    /// The interrupt flags of the calls running now, set when the server closes.
    running: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
}

impl Server {
    /// A server reading its configuration from `config_path` (or the usual places) on each
    /// call, keeping restore plans for `plan_ttl`.
    pub(super) fn new(config_path: Option<PathBuf>, plan_ttl: Duration) -> Self {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        Self {
            config_path,
            plans: Arc::new(Plans::new(plan_ttl)),
            instance: uuid[..8].to_owned(),
            running: Arc::default(),
        }
    }

    /// Asks every running call to stop (an FLR mount is then ended).
    pub(super) fn interrupt_all(running: &Mutex<Vec<Arc<AtomicBool>>>) {
        if let Ok(flags) = running.lock() {
            for flag in flags.iter() {
                flag.store(true, Ordering::SeqCst);
            }
        }
    }

    /// The flags [`Server::interrupt_all`] sets.
    pub(super) fn running(&self) -> Arc<Mutex<Vec<Arc<AtomicBool>>>> {
        Arc::clone(&self.running)
    }

    /// The tools this session is offered: the operators' tools only to an operator.
    async fn offered(&self) -> Vec<rmcp::model::Tool> {
        let config_path = self.config_path.clone();
        let operator = tokio::task::spawn_blocking(move || {
            super::restore::operator_session(config_path.as_deref())
        })
        .await
        .unwrap_or(false);
        tools::all()
            .into_iter()
            .filter(|t| operator || !tools::operator_only(&t.name))
            .collect()
    }

    /// The change id for a `checkpoint_vm` request: a string request id as it is, a number
    /// made unique to this server (clients number their requests from 0 in each session).
    fn change_id(&self, id: &NumberOrString) -> String {
        match id {
            NumberOrString::String(s) if !s.trim().is_empty() => s.to_string(),
            NumberOrString::String(_) => format!("mcp-{}", self.instance),
            NumberOrString::Number(n) => format!("mcp-{}-{n}", self.instance),
        }
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.to_string();
        let offered = self.offered().await;
        if !offered.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool {name:?}; this server has {}",
                    offered
                        .iter()
                        .map(|t| t.name.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let client = context
            .client_info()
            .map_or_else(|| String::from("unknown"), |c| c.name);
        let change = self.change_id(&context.id);
        let interrupted = Arc::new(AtomicBool::new(false));
        if let Ok(mut running) = self.running.lock() {
            running.push(Arc::clone(&interrupted));
        }

        // Progress from the blocking thread, forwarded as notifications (with a heartbeat).
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let forwarder = context
            .meta
            .get_progress_token()
            .map(|token| tokio::spawn(forward_progress(context.peer.clone(), token, rx)));

        let job = {
            let config_path = self.config_path.clone();
            let plans = Arc::clone(&self.plans);
            let interrupted = Arc::clone(&interrupted);
            let name = name.clone();
            tokio::task::spawn_blocking(move || {
                let started = Instant::now();
                let progress = move |text: String| {
                    let _ = tx.send(text);
                };
                let progress = Mutex::new(progress);
                let say = |text: String| {
                    if let Ok(p) = progress.lock() {
                        p(text);
                    }
                };
                let agent = format!("mcp/{client}");
                let call = Call {
                    config_path: config_path.as_deref(),
                    agent: &agent,
                    change: &change,
                    plans: &plans,
                    interrupted: &interrupted,
                    progress: &say,
                };
                let mut facts = Facts::default();
                let outcome = calls::run(&name, args.clone(), &call, &mut facts);
                audit_call(
                    config_path.as_deref(),
                    &name,
                    &agent,
                    &args,
                    &facts,
                    &outcome,
                    started,
                );
                outcome
            })
        };
        let mut job = std::pin::pin!(job);
        let outcome = tokio::select! {
            done = &mut job => done,
            () = context.ct.cancelled() => {
                // Stop at the next step; the restore then unmounts. Wait for that cleanup.
                interrupted.store(true, Ordering::SeqCst);
                job.await
            }
        };
        if let Ok(mut running) = self.running.lock() {
            running.retain(|f| !Arc::ptr_eq(f, &interrupted));
        }
        if let Some(forwarder) = forwarder {
            forwarder.abort();
        }
        Ok(match outcome {
            Ok(Ok(answer)) => result(answer),
            Ok(Err(error)) => CallToolResult::error(vec![ContentBlock::text(
                crate::console::sanitise(&format!("rewind: {error:#}")).into_owned(),
            )]),
            Err(join) => CallToolResult::error(vec![ContentBlock::text(format!(
                "rewind: internal error: {join}"
            ))]),
        })
    }
}

/// The answer as the client receives it; every string sanitised (`crate::console`), since
/// the transport, not `console`, writes it to stdout.
fn result(mut answer: Answer) -> CallToolResult {
    crate::console::sanitise_value(&mut answer.value);
    let mut result = if answer.is_error {
        CallToolResult::structured_error(answer.value)
    } else {
        CallToolResult::structured(answer.value)
    };
    // The text first: clients that show only text then show what a person would read.
    result.content.insert(
        0,
        ContentBlock::text(crate::console::sanitise(&answer.text).into_owned()),
    );
    result
}

/// Sends each progress message as a notification, and a heartbeat when a long step is quiet.
async fn forward_progress(
    peer: rmcp::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let started = Instant::now();
    let mut count = 0.0;
    let mut last = String::from("working");
    loop {
        let message = tokio::select! {
            next = rx.recv() => match next {
                Some(text) => { last.clone_from(&text); text }
                None => return,
            },
            () = tokio::time::sleep(HEARTBEAT) => {
                format!("{last} ({} s)", started.elapsed().as_secs())
            }
        };
        count += 1.0;
        let mut param = ProgressNotificationParam::new(token.clone(), count);
        param.message = Some(crate::console::sanitise(&message).into_owned());
        if peer.notify_progress(param).await.is_err() {
            return;
        }
    }
}

/// One audit line per call, like a hook decision; a failure is said on stderr.
fn audit_call(
    config_path: Option<&Path>,
    tool: &str,
    agent: &str,
    args: &Value,
    facts: &Facts,
    outcome: &anyhow::Result<Answer>,
    started: Instant,
) {
    let decision = match (facts.decision, outcome) {
        (Some(decided), _) => decided,
        (_, Ok(answer)) if answer.is_error => Ending::Error,
        (_, Ok(_)) => Ending::Ok,
        (_, Err(e)) if e.to_string().starts_with("refused") => Ending::Refused,
        (_, Err(_)) => Ending::Error,
    };
    let reason = match outcome {
        Ok(answer) => answer.text.lines().next().map(str::to_owned),
        Err(e) => Some(format!("{e:#}")),
    };
    let record = Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        host: agent.to_owned(),
        session: None,
        change: facts.change.clone(),
        tool: tool.to_owned(),
        class: String::from(if tools::read_only(tool) {
            "read-only"
        } else {
            "mutating"
        }),
        vms: facts.vms.clone(),
        named: facts.named.clone(),
        vpgs: facts.vpgs.clone(),
        checkpoints: facts.checkpoints.clone(),
        decision,
        reason,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        input: Some(audit::input_fingerprint(args)),
        args: Value::Null,
    };
    let config = Config::discover(config_path).unwrap_or_else(|_| Config::defaults());
    let record = Record {
        args: if config.audit.store_input == crate::config::StoreInput::Redacted {
            audit::summarise(args)
        } else {
            Value::Null
        },
        ..record
    };
    let written = audit::Trail::of(&config).and_then(|trail| audit::append(trail, &record));
    if let Err(e) = written {
        crate::console::err(format!("rewind: audit trail not written: {e:#}"));
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rewind", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "rewind: Zerto tagged checkpoints and file restores for the VMs an agent changes. \
                 Call checkpoint_vm before a risky step on a VM; keep the change id it returns. \
                 To bring a file back: recover_plan, show the plan to the person, then recover_file \
                 with the id they type.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.offered().await))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await.map(Into::into)
    }
}
