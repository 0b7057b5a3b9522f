//! `rewind broker`: the one process that holds the ZVM configuration, the token cache and
//! the audit trail, serving the protocol ([`super::protocol`]) on a Unix socket. Each
//! connection is one request, identified by the kernel's `SO_PEERCRED`, authorised from
//! `[broker]`, answered within the caller's deadline, and recorded with the caller's uid, gid
//! and pid.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::protocol::{self, Answer, GuardRequest, Op, VERSION};
use crate::audit::{self, Ending, Record};
use crate::config::{self, Config, StoreInput};
use crate::deadline::Deadline;
use crate::platform::{self, LocalListener, LocalStream, Peer};

/// The longest a client may take to send its whole request line.
const REQUEST_WAIT: Duration = Duration::from_secs(5);
/// Connections of one user still sending their request line; a newer one closes that user's
/// oldest, so idle connections cannot hold the broker from anyone, nor from their own user's
/// next call.
const WAITING_PER_USER: usize = 8;
/// Connections of one user being served at once; more are refused at once.
const SERVING_PER_USER: usize = 32;
/// How much one user's requests may add to the trail per [`QUOTA_WINDOW`]; past it, the
/// user's requests are refused (a guard denied) until the window ends, and one line says so.
const TRAIL_QUOTA: usize = 1024 * 1024;
/// The window of [`TRAIL_QUOTA`].
const QUOTA_WINDOW: Duration = Duration::from_secs(60);
/// The longest deadline a request may ask for.
const DEADLINE_MAX: Duration = Duration::from_secs(3600);
/// Time kept back from the caller's deadline to write the answer.
const ANSWER_MARGIN: Duration = Duration::from_millis(150);
/// Connections open at once; more are refused at once rather than queued past their
/// deadlines.
const CONNECTIONS_MAX: usize = 256;
/// The bytes all connections' long request lines may hold at once: eight of the longest.
const READING_MAX: usize = 8 * protocol::REQUEST_MAX;

/// The broker's state, shared by every connection.
pub(crate) struct Broker {
    config: Config,
    audit: PathBuf,
    own_uid: u32,
    /// `None`: every local user may guard.
    guard: Option<Allowed>,
    operators: Allowed,
    /// Each change id a guard was asked for, and the call it was asked for ([`call_of`]):
    /// read back from the trail at start, so an id names one call for good.
    changes: Mutex<HashMap<String, String>>,
    /// Why the last record could not be written, while it could not: every guard is denied
    /// until a record is written again, and `status` says so.
    trail_failure: Mutex<Option<String>>,
    /// The broker's cache directory, where every full listing leaves the protected-VM net.
    cache: PathBuf,
    /// Where the net is published for the hooks (beside the socket), once serving.
    net: Option<PathBuf>,
    /// Each user's connections, waiting for their request or served.
    peers: Mutex<Peers>,
    /// What the request lines still being read may hold between them past their first bytes.
    reading: protocol::ReadBudget,
}

/// Each user's connections and use of the trail.
#[derive(Default)]
struct Peers {
    next: u64,
    /// Per uid: the connections still sending their request, oldest first.
    waiting: HashMap<u32, std::collections::VecDeque<(u64, LocalStream)>>,
    /// Per uid: connections being served.
    serving: HashMap<u32, usize>,
    /// Per uid: when its quota window began, the bytes it added since, and whether its
    /// refusal was recorded.
    quota: HashMap<u32, (Instant, usize, bool)>,
}

/// Users and groups, as ids.
#[derive(Debug, Default)]
struct Allowed {
    uids: Vec<u32>,
    gids: Vec<u32>,
}

impl Allowed {
    fn from_names(users: &[String], groups: &[String], origin: &str) -> anyhow::Result<Allowed> {
        let mut allowed = Allowed::default();
        for user in users {
            let Some(uid) = platform::uid_named(user) else {
                bail!("{origin}: [broker] names user {user:?}, which this system does not know");
            };
            allowed.uids.push(uid);
        }
        for group in groups {
            let Some(gid) = platform::gid_named(group) else {
                bail!("{origin}: [broker] names group {group:?}, which this system does not know");
            };
            allowed.gids.push(gid);
        }
        Ok(allowed)
    }

    fn admits(&self, peer: &Peer) -> bool {
        self.uids.contains(&peer.uid)
            || (!self.gids.is_empty()
                && platform::groups_of(peer.uid, peer.gid)
                    .iter()
                    .any(|g| self.gids.contains(g)))
    }
}

/// Who may ask for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Status: every local user (it says what works, and nothing of the ZVM's address or
    /// credentials).
    Anyone,
    /// Resolve, VMs, checkpoints, plan, guard, record: the agents' users (nothing is mounted or
    /// read from a guest).
    Guard,
    /// Log, FLR, recover, restore-vm: root, the broker's account and `[broker] operator_*`.
    Operator,
}

fn role(op: &Op) -> Role {
    match op {
        Op::Resolve { .. }
        | Op::Vms
        | Op::Checkpoints { .. }
        | Op::Plan(_)
        | Op::Guard(_)
        | Op::Record { .. } => Role::Guard,
        Op::Log
        | Op::Prove { .. }
        | Op::FlrList
        | Op::FlrEnd { .. }
        | Op::Recover(_)
        | Op::RestoreVm(_) => Role::Operator,
        Op::Status => Role::Anyone,
    }
}

impl Broker {
    /// The broker for `config`, after checking that nobody but its own account (and root) can
    /// change its configuration or state.
    pub(crate) fn new(config_path: &Path, mut config: Config) -> anyhow::Result<Broker> {
        let own_uid = platform::effective_uid();
        let origin = config_path.display().to_string();
        refuse_unless_private(config_path, own_uid, "configuration", Closed::Wholly)?;
        if let Some(dir) = config_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            refuse_unless_private(dir, own_uid, "configuration's directory", Closed::ToWriters)?;
        }
        config.require_zvm()?;
        // The broker is the end of the line: it never asks another broker.
        config.broker.socket = None;
        let cache = config::cache_dir().context("the broker's token cache and locks")?;
        refuse_unless_private(&cache, own_uid, "token cache directory", Closed::Wholly)?;
        let audit = config.hook.audit_path()?.to_path_buf();
        if let Some(dir) = audit.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::lockfile::create_private_dir(dir)
                .with_context(|| format!("the broker's audit trail {}", audit.display()))?;
            refuse_unless_private(dir, own_uid, "state directory", Closed::Wholly)?;
        }
        for file in [audit.clone(), audit::head_path(&audit)] {
            if file.exists() {
                refuse_unless_private(&file, own_uid, "audit trail", Closed::Wholly)?;
            }
        }
        let changes = Mutex::new(used_changes(&audit));
        let broker = &config.broker;
        let guard = if broker.guard_users.is_empty() && broker.guard_groups.is_empty() {
            None
        } else {
            Some(Allowed::from_names(
                &broker.guard_users,
                &broker.guard_groups,
                &origin,
            )?)
        };
        let mut operators =
            Allowed::from_names(&broker.operator_users, &broker.operator_groups, &origin)?;
        operators.uids.extend([0, own_uid]);
        Ok(Broker {
            config,
            audit,
            own_uid,
            guard,
            operators,
            changes,
            trail_failure: Mutex::new(None),
            peers: Mutex::new(Peers::default()),
            reading: protocol::ReadBudget::new(READING_MAX),
            cache,
            net: None,
        })
    }

    /// Publishes the protected-VM net of the last full listing beside the socket, where the
    /// hooks it serves read it and their agents cannot change it. Best effort: a net that
    /// cannot be published is said on stderr, and the hooks' net is then what it was.
    fn publish_net(&self) {
        let Some(net) = &self.net else { return };
        let listed = crate::inventory::Inventory::load(&self.cache);
        if listed.is_empty() {
            return;
        }
        if let Err(e) = listed.publish(net) {
            crate::console::err(format!(
                "rewind broker: the protected-VM net was not published at {}: {e}",
                net.display()
            ));
        }
    }

    fn allowed(&self, role: Role, peer: &Peer) -> bool {
        let operator = self.operators.admits(peer);
        match role {
            Role::Anyone => true,
            Role::Operator => operator,
            Role::Guard => operator || self.guard.as_ref().is_none_or(|g| g.admits(peer)),
        }
    }
}

/// How closed a file or directory the broker uses must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closed {
    /// Neither group nor others may write it (a directory every user passes through).
    ToWriters,
    /// Neither group nor others may read, write or enter it (the configuration, which holds
    /// or names the credentials; the trail; the state and cache directories).
    Wholly,
}

/// Refuses `path` unless it belongs to `own_uid` or root and is closed to group and others
/// as `closed` says; the error names the file and the `chmod` that fixes it.
fn refuse_unless_private(
    path: &Path,
    own_uid: u32,
    what: &str,
    closed: Closed,
) -> anyhow::Result<()> {
    let owned = platform::ownership(path)
        .with_context(|| format!("the broker's {what} {}", path.display()))?;
    if owned.uid != own_uid && owned.uid != 0 {
        bail!(
            "the broker's {what} {} belongs to user id {}, not to the broker's account ({own_uid}) or root; refusing to start; run: chown {own_uid} {}",
            path.display(),
            owned.uid,
            path.display()
        );
    }
    if owned.mode & 0o022 != 0 {
        bail!(
            "the broker's {what} {} can be written by group or others (mode {:o}); refusing to start; run: chmod go-w {}",
            path.display(),
            owned.mode & 0o7777,
            path.display()
        );
    }
    if closed == Closed::Wholly && owned.mode & 0o077 != 0 {
        let (who, fix) = if owned.mode & 0o007 != 0 {
            ("every local user", "go-rwx")
        } else {
            ("its group", "g-rwx")
        };
        bail!(
            "the broker's {what} {} can be read by {who} (mode {:o}); refusing to start; run: chmod {fix} {}",
            path.display(),
            owned.mode & 0o7777,
            path.display()
        );
    }
    Ok(())
}

/// `rewind broker`: binds `socket` (or takes over the one systemd passes, socket activation)
/// and serves until killed.
pub(crate) fn serve(config_path: Option<&Path>, socket: &Path) -> anyhow::Result<()> {
    // Before anything else: reading LISTEN_FDS also removes it from the environment, so that
    // no command the broker runs (a password_command) believes the socket is its own.
    let mut passed = platform::passed_sockets();
    let Some(config_path) = config_path else {
        bail!(
            "rewind broker needs --config FILE: the configuration with [zvm], owned by the broker's account, mode 0600"
        );
    };
    let config = Config::load(config_path)?;
    for warning in &config.warnings {
        crate::console::err(format!("rewind broker: warning: {warning}"));
    }
    let mut broker = Broker::new(config_path, config)?;
    broker.net = Some(super::client::published_net_path(socket));
    broker.publish_net();
    let broker = Arc::new(broker);
    let (listener, from) = if passed.len() > 0 {
        (
            adopt(&mut passed, socket, broker.own_uid)?,
            " (passed by systemd)",
        )
    } else {
        (bind(socket, broker.own_uid)?, "")
    };
    crate::console::err(format!(
        "rewind broker: serving on {}{from} (protocol version {VERSION}), audit trail {}",
        socket.display(),
        broker.audit.display()
    ));
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if active.fetch_add(1, Ordering::SeqCst) >= CONNECTIONS_MAX {
            active.fetch_sub(1, Ordering::SeqCst);
            let _ = protocol::write_answer(
                &stream,
                &Answer::Refused {
                    error: format!("busy: {CONNECTIONS_MAX} requests are being served"),
                },
            );
            continue;
        }
        let broker = Arc::clone(&broker);
        let done = Arc::clone(&active);
        let spawned = std::thread::Builder::new()
            .name(String::from("broker-conn"))
            .spawn(move || {
                let _ = catch_unwind(AssertUnwindSafe(|| {
                    connection(&broker, &stream);
                    broker.publish_net();
                }));
                done.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Binds the socket after checking its directory, replacing a stale socket of ours; every
/// local user may connect (authorisation is by `SO_PEERCRED`, per request).
fn bind(socket: &Path, own_uid: u32) -> anyhow::Result<LocalListener> {
    let dir = socket
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    refuse_unless_private(dir, own_uid, "socket directory", Closed::ToWriters)?;
    match platform::ownership(socket) {
        Ok(owned) if owned.is_socket && owned.uid == own_uid => std::fs::remove_file(socket)
            .with_context(|| format!("cannot remove the old socket {}", socket.display()))?,
        Ok(_) => bail!(
            "{} exists and is not a socket of the broker's account; refusing to replace it",
            socket.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => bail!("cannot look at {}: {e}", socket.display()),
    }
    // Bound under a temporary name and renamed into place once its mode is set: a client
    // never meets the socket before every user may connect to it.
    let mut staging = socket.as_os_str().to_owned();
    staging.push(format!(".{}", std::process::id()));
    let staging = PathBuf::from(staging);
    let _ = std::fs::remove_file(&staging);
    let listener = LocalListener::bind(&staging)
        .with_context(|| format!("cannot bind {}", staging.display()))?;
    platform::set_mode(&staging, 0o666)
        .with_context(|| format!("cannot set the mode of {}", staging.display()))?;
    std::fs::rename(&staging, socket)
        .with_context(|| format!("cannot move the socket to {}", socket.display()))?;
    Ok(listener)
}

/// Takes over the listening socket systemd passed (socket activation: `LISTEN_FDS`, fd 3),
/// with the checks [`bind`] makes on a socket of its own: it must be bound to `socket` (the
/// `--socket` the unit's ExecStart names), in a directory nobody but root and the broker's
/// account can change, and the socket file must be root's or the broker's account's.
fn adopt(
    passed: &mut platform::Passed,
    socket: &Path,
    own_uid: u32,
) -> anyhow::Result<LocalListener> {
    if passed.len() != 1 {
        bail!(
            "systemd passed {} sockets; the broker listens on one (one ListenStream= in rewind-broker.socket)",
            passed.len()
        );
    }
    let (listener, address) = platform::adopt_passed_listener(passed)
        .map_err(|why| anyhow::anyhow!("the socket systemd passed (fd 3) {why}"))?;
    let wanted = std::path::absolute(socket).unwrap_or_else(|_| socket.to_path_buf());
    match address.as_deref() {
        Some(bound) if bound == wanted => {}
        Some(bound) => bail!(
            "systemd passed the socket {}, not --socket {}; make ListenStream= in rewind-broker.socket and --socket the same path",
            bound.display(),
            wanted.display()
        ),
        None => bail!(
            "systemd passed a socket with no path; ListenStream= in rewind-broker.socket must be --socket's path {}",
            wanted.display()
        ),
    }
    let dir = wanted
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("/"));
    refuse_unless_private(dir, own_uid, "socket directory", Closed::ToWriters)?;
    let owned = platform::ownership(&wanted)
        .with_context(|| format!("the socket systemd passed, {}", wanted.display()))?;
    if !owned.is_socket {
        bail!(
            "{} is not a socket any more (something else took its path); refusing to start",
            wanted.display()
        );
    }
    if owned.uid != own_uid && owned.uid != 0 {
        bail!(
            "the socket {} belongs to user id {}, not to the broker's account ({own_uid}) or root (SocketUser= in rewind-broker.socket); refusing to start",
            wanted.display(),
            owned.uid
        );
    }
    Ok(listener)
}

/// What a request came to, for the trail.
struct Ended {
    outcome: Ending,
    reason: Option<String>,
}

/// One connection: one request, its answer, its record.
fn connection(broker: &Broker, stream: &LocalStream) {
    let started = Instant::now();
    let Ok(peer) = platform::peer(stream) else {
        return;
    };
    let ticket = broker.waiting(&peer, stream);
    let read = protocol::read_request(stream, REQUEST_WAIT, &broker.reading);
    broker.done_waiting(peer.uid, ticket);
    let Some(_serving) = broker.serving(&peer) else {
        let error = format!(
            "busy: user id {} has {SERVING_PER_USER} requests being served",
            peer.uid
        );
        let _ = protocol::write_answer(stream, &Answer::Refused { error });
        return;
    };
    if let Some(error) = broker.over_quota(&peer) {
        let _ = protocol::write_answer(stream, &Answer::Refused { error });
        return;
    }
    let request = match read {
        None => return,
        Some(Ok(request)) => request,
        Some(Err(error)) => return broker.refuse(stream, &peer, "unknown", None, started, error),
    };
    let name = request.op.name();
    if let Err(error) = request.op.check_references() {
        return broker.refuse(stream, &peer, name, None, started, error);
    }
    if !broker.allowed(role(&request.op), &peer) {
        let error = not_allowed(&peer, &request.op);
        return broker.refuse(stream, &peer, name, Some(&request.op), started, error);
    }
    let wanted = Duration::from_millis(request.deadline_ms).min(DEADLINE_MAX);
    let deadline = Deadline::starting_at(started, wanted).shortened_by(ANSWER_MARGIN);
    let _ = stream.set_write_timeout(Some(wanted.max(Duration::from_millis(100))));
    if let Op::Guard(guard) = &request.op {
        return broker.guard(stream, &peer, guard, &deadline, started);
    }
    if let Op::Record { record } = &request.op {
        return broker.record(stream, &peer, record, started);
    }
    if let Op::RestoreVm(restore) = &request.op {
        return broker.restore_vm(stream, &peer, restore);
    }
    let answered = catch_unwind(AssertUnwindSafe(|| {
        super::operations::serve(&broker.config, &broker.audit, &request.op, &deadline)
    }))
    .unwrap_or_else(|_| {
        Err(anyhow::anyhow!(
            "internal error (a panic) while serving {name}"
        ))
    });
    let answered = match (answered, &request.op) {
        (Ok(status), Op::Status) => Ok(broker.with_trail_check(status, &peer)),
        (answered, _) => answered,
    };
    let (answer, outcome) = match answered {
        Ok(result) => (
            Answer::Done { result },
            Ended {
                outcome: Ending::Ok,
                reason: None,
            },
        ),
        Err(e) => {
            let error = format!("{e:#}");
            (
                Answer::Refused {
                    error: error.clone(),
                },
                Ended {
                    outcome: Ending::Error,
                    reason: Some(error),
                },
            )
        }
    };
    // Recorded before the answer, as a guard is.
    broker.audit_request(&peer, name, Some(&request.op), started, &outcome);
    let _ = protocol::write_answer(stream, &answer);
}

/// Why `peer` may not run `op`.
fn not_allowed(peer: &Peer, op: &Op) -> String {
    let who = platform::user_name(peer.uid).unwrap_or_else(|| peer.uid.to_string());
    let (uid, name) = (peer.uid, op.name());
    match role(op) {
        Role::Operator => format!(
            "user {who} (uid {uid}) may not {name}: only root, the broker's account and [broker] operator_users/operator_groups may"
        ),
        Role::Guard | Role::Anyone => format!(
            "user {who} (uid {uid}) may not {name}: not in [broker] guard_users/guard_groups"
        ),
    }
}

fn refused(error: String) -> Ended {
    Ended {
        outcome: Ending::Refused,
        reason: Some(error),
    }
}

impl Broker {
    /// Appends `record` to the broker's trail with who asked (and, for a guard, the call its
    /// change id names), durably: nothing is confirmed before this returns `Ok`. A failure is
    /// kept until a record is written again.
    fn append(
        &self,
        record: &Record,
        op: &str,
        peer: &Peer,
        call: Option<&str>,
    ) -> anyhow::Result<()> {
        let mut extra = serde_json::Map::new();
        extra.insert(String::from("op"), Value::String(op.to_owned()));
        extra.insert(String::from("peer"), serde_json::to_value(peer)?);
        if let Some(name) = platform::user_name(peer.uid) {
            extra.insert(String::from("user"), Value::String(name));
        }
        if let Some(call) = call {
            extra.insert(String::from(CALL_KEY), Value::String(call.to_owned()));
        }
        let trail = audit::Trail {
            path: &self.audit,
            syslog: self.config.audit.syslog.as_ref(),
        };
        let appended = audit::append_durable(trail, record, &extra);
        self.charge(peer.uid, serde_json::to_vec(record).map_or(0, |r| r.len()));
        let failure = appended.as_ref().err().map(|e| format!("{e:#}"));
        if let Some(failure) = &failure {
            crate::console::err(format!("rewind broker: audit trail not written: {failure}"));
        }
        if let Ok(mut kept) = self.trail_failure.lock() {
            *kept = failure;
        }
        appended.map(drop)
    }

    /// Counts `stream` among `peer`'s connections waiting for their request, closing that
    /// user's oldest when it has more than [`WAITING_PER_USER`]. Returns the ticket
    /// [`Broker::done_waiting`] takes.
    fn waiting(&self, peer: &Peer, stream: &LocalStream) -> u64 {
        let Ok(mut peers) = self.peers.lock() else {
            return 0;
        };
        peers.next += 1;
        let ticket = peers.next;
        let Ok(clone) = stream.try_clone() else {
            return ticket;
        };
        let queue = peers.waiting.entry(peer.uid).or_default();
        queue.push_back((ticket, clone));
        while queue.len() > WAITING_PER_USER {
            if let Some((_, oldest)) = queue.pop_front() {
                let _ = oldest.shutdown(std::net::Shutdown::Both);
            }
        }
        ticket
    }

    fn done_waiting(&self, uid: u32, ticket: u64) {
        if let Ok(mut peers) = self.peers.lock()
            && let Some(queue) = peers.waiting.get_mut(&uid)
        {
            queue.retain(|(t, _)| *t != ticket);
            if queue.is_empty() {
                peers.waiting.remove(&uid);
            }
        }
    }

    /// Counts a connection of `peer` as served until the returned guard is dropped; `None`
    /// when that user already has [`SERVING_PER_USER`].
    fn serving(&self, peer: &Peer) -> Option<Serving<'_>> {
        let mut peers = self.peers.lock().ok()?;
        let count = peers.serving.entry(peer.uid).or_default();
        if *count >= SERVING_PER_USER {
            return None;
        }
        *count += 1;
        Some(Serving {
            broker: self,
            uid: peer.uid,
        })
    }

    /// Adds `bytes` to what `uid` wrote to the trail in its window.
    fn charge(&self, uid: u32, bytes: usize) {
        if let Ok(mut peers) = self.peers.lock() {
            let now = Instant::now();
            let entry = peers.quota.entry(uid).or_insert((now, 0, false));
            if now.duration_since(entry.0) >= QUOTA_WINDOW {
                *entry = (now, 0, false);
            }
            entry.1 += bytes;
        }
    }

    /// Why `peer` is refused, when its requests added more than [`TRAIL_QUOTA`] to the trail
    /// in its window; the first refusal of a window is recorded, once.
    fn over_quota(&self, peer: &Peer) -> Option<String> {
        let (error, first) = {
            let mut peers = self.peers.lock().ok()?;
            let entry = peers.quota.get_mut(&peer.uid)?;
            let left = QUOTA_WINDOW.checked_sub(entry.0.elapsed())?;
            if entry.1 <= TRAIL_QUOTA {
                return None;
            }
            let first = !entry.2;
            entry.2 = true;
            let error = format!(
                "rewind: user id {} added {} bytes to the broker's audit trail in the last {} s, more than the {TRAIL_QUOTA} allowed; its requests are refused, and every change denied, for {} s more",
                peer.uid,
                entry.1,
                QUOTA_WINDOW.as_secs(),
                left.as_secs() + 1
            );
            (error, first)
        };
        if first {
            let record = Record {
                time: crate::time::format_utc_millis(SystemTime::now()),
                host: String::from("broker"),
                tool: String::from("broker:quota"),
                class: String::from("broker"),
                decision: Ending::Refused,
                reason: Some(error.clone()),
                ..Record::default()
            };
            let _ = self.append(&record, "quota", peer, None);
        }
        Some(error)
    }

    /// A `status` answer with the trail's check added (whether the last record was written),
    /// and whether `peer` is one of the operators.
    fn with_trail_check(&self, mut status: Value, peer: &Peer) -> Value {
        // Whether the asking user is one of the broker's operators (for `rewind mcp`).
        status["operator"] = json!(self.allowed(Role::Operator, peer));
        let failure = self.trail_failure.lock().ok().and_then(|f| f.clone());
        let check = match failure {
            None => json!({"check": "audit trail", "status": "ok",
                "detail": format!("the broker writes its audit trail {}", self.audit.display())}),
            Some(failure) => json!({"check": "audit trail", "status": "fail",
                "detail": format!("the broker could not write its audit trail ({failure}); it denies every guard until it can: free or fix the trail's file system")}),
        };
        if let Some(checks) = status.get_mut("checks").and_then(Value::as_array_mut) {
            checks.push(check);
        }
        status
    }

    /// A client's record, checked ([`admit_record`]) and written, or refused (and the refusal
    /// recorded).
    fn record(&self, stream: &LocalStream, peer: &Peer, record: &Record, started: Instant) {
        let error = match admit_record(record, self.config.audit.store_input) {
            Ok(record) => match self.append(&record, "record", peer, None) {
                Ok(()) => {
                    let _ = protocol::write_answer(stream, &Answer::Done { result: json!({}) });
                    return;
                }
                Err(e) => format!("{e:#}"),
            },
            Err(error) => {
                self.audit_request(peer, "record", None, started, &refused(error.clone()));
                error
            }
        };
        let _ = protocol::write_answer(stream, &Answer::Refused { error });
    }

    /// An operator's `rewind restore-vm`, run here and relayed; each step recorded under them.
    fn restore_vm(&self, stream: &LocalStream, peer: &Peer, request: &protocol::RestoreVmRequest) {
        // Nothing starts that the trail could not hold.
        let requested = Record {
            time: crate::time::format_utc_millis(SystemTime::now()),
            host: String::from("broker"),
            tool: String::from("broker:restore-vm"),
            class: String::from("broker"),
            vms: vec![request.vm.clone()],
            change: request.change.clone(),
            decision: Ending::Ok,
            reason: Some(String::from("requested")),
            args: audit::summarise(&json!({
                "checkpoint": request.checkpoint, "vpg": request.vpg, "preview": request.preview,
            })),
            ..Record::default()
        };
        if let Err(e) = self.append(&requested, "restore-vm", peer, None) {
            let error = format!(
                "the rewind broker could not write its audit trail ({e:#}), so no restore starts until it can; nothing was started"
            );
            let _ = protocol::write_answer(stream, &Answer::Refused { error });
            return;
        }
        let user = platform::user_name(peer.uid).unwrap_or_else(|| format!("uid {}", peer.uid));
        let record = |record: &Record| {
            let _ = self.append(record, "restore-vm", peer, None);
        };
        let document = super::restore::serve(&self.config, stream, user, request, &record);
        let _ = protocol::write_answer(stream, &Answer::Done { result: document });
    }

    /// Refuses a request before it runs: recorded before the answer, as every refusal is.
    fn refuse(
        &self,
        stream: &LocalStream,
        peer: &Peer,
        op: &str,
        request: Option<&Op>,
        started: Instant,
        error: String,
    ) {
        self.audit_request(peer, op, request, started, &refused(error.clone()));
        let _ = protocol::write_answer(stream, &Answer::Refused { error });
    }

    /// Records a request other than a guard (or one refused before it ran).
    fn audit_request(
        &self,
        peer: &Peer,
        op: &str,
        request: Option<&Op>,
        started: Instant,
        outcome: &Ended,
    ) {
        let mut vms = Vec::new();
        let mut args = Value::Null;
        match request {
            Some(Op::Resolve { vms: refs }) => vms.clone_from(refs),
            Some(Op::Checkpoints { vm, .. }) => vms.push(vm.clone()),
            Some(Op::Recover(r) | Op::Plan(r)) => {
                vms.push(r.vm.clone());
                args = audit::summarise(
                    &json!({"path": r.path, "change": r.change, "checkpoint": r.checkpoint}),
                );
            }
            Some(Op::FlrEnd { session }) => args = json!({"session": session}),
            _ => {}
        }
        let record = Record {
            time: crate::time::format_utc_millis(SystemTime::now()),
            host: String::from("broker"),
            tool: format!("broker:{op}"),
            class: String::from("broker"),
            vms,
            decision: outcome.outcome,
            reason: outcome.reason.clone(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            args,
            ..Record::default()
        };
        let _ = self.append(&record, op, peer, None);
    }

    /// Takes `change` for `call`, unless it was taken for another call: `Err` says so.
    fn take_change(&self, change: &str, call: &str) -> Result<(), String> {
        let Ok(mut changes) = self.changes.lock() else {
            return Err(String::from(
                "internal error: the change ids are unreadable",
            ));
        };
        match changes.get(change) {
            Some(taken) if taken != call => Err(format!(
                "rewind: change id {change:?} was already used for another call (other VMs or another tool); a change id names one call, so no checkpoint was taken and this call is not allowed"
            )),
            Some(_) => Ok(()),
            None => {
                changes.insert(change.to_owned(), call.to_owned());
                Ok(())
            }
        }
    }

    /// The guard, its progress streamed, its decision answered once it is recorded. A record
    /// the trail did not take turns the answer into a deny naming the trail.
    fn guard(
        &self,
        stream: &LocalStream,
        peer: &Peer,
        request: &GuardRequest,
        deadline: &Deadline,
        started: Instant,
    ) {
        let user = platform::user_name(peer.uid).unwrap_or_else(|| format!("uid{}", peer.uid));
        let call = call_of(request);
        let evaluated = match self.take_change(&request.change, &call) {
            Err(text) => Err(Denied(text)),
            Ok(()) => super::operations::guard(&self.config, request, &user, deadline, &|text| {
                // A client gone does not stop the guard: its checkpoint may still serve.
                let _ = protocol::write_answer(
                    stream,
                    &Answer::Progress {
                        text: text.to_owned(),
                    },
                );
            })
            .map_err(Refused),
        };
        let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (answer, record) = match evaluated {
            Ok((result, mut record)) => {
                record.duration_ms = elapsed();
                let result = serde_json::to_value(&result).unwrap_or(Value::Null);
                (Answer::Done { result }, record)
            }
            Err(failed) => {
                let (decision, answer, error) = match failed {
                    Denied(text) => (Ending::Deny, denial(request, text.clone()), text),
                    Refused(error) => (
                        Ending::Refused,
                        Answer::Refused {
                            error: error.clone(),
                        },
                        error,
                    ),
                };
                let record = Record {
                    time: crate::time::format_utc_millis(SystemTime::now()),
                    host: request.host.clone(),
                    session: request.session.clone(),
                    change: Some(request.change.clone()),
                    tool: request.tool.clone(),
                    class: String::from("broker"),
                    vms: request.vms.clone(),
                    decision,
                    reason: Some(error),
                    duration_ms: elapsed(),
                    input: request.input.clone().filter(|i| audit::is_fingerprint(i)),
                    ..Record::default()
                };
                (answer, record)
            }
        };
        // Recorded before the answer: the change never runs ahead of its record, and without
        // its record it does not run.
        let answer = match self.append(&record, "guard", peer, Some(&call)) {
            Ok(()) => answer,
            Err(_) => denial(
                request,
                format!(
                    "rewind: the rewind broker could not write its audit trail {}, so no change is allowed until it can (the trail's file system may be full or read-only); an operator's `rewind doctor` says why",
                    self.audit.display()
                ),
            ),
        };
        let _ = protocol::write_answer(stream, &answer);
    }
}

/// A connection counted as served, until dropped.
struct Serving<'a> {
    broker: &'a Broker,
    uid: u32,
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        if let Ok(mut peers) = self.broker.peers.lock()
            && let Some(count) = peers.serving.get_mut(&self.uid)
        {
            *count = count.saturating_sub(1);
            if *count == 0 {
                peers.serving.remove(&self.uid);
            }
        }
    }
}

/// Why a guard did not run: a deny for the agent, or a refusal of the request.
enum GuardFailure {
    Denied(String),
    Refused(String),
}
use GuardFailure::{Denied, Refused};

/// A guard's answer that denies the call, naming why.
fn denial(request: &GuardRequest, text: String) -> Answer {
    let result = protocol::GuardResult {
        decision: protocol::WireDecision::Deny { text },
        vms: request.vms.clone(),
        named: Vec::new(),
        vpgs: Vec::new(),
        checkpoints: Vec::new(),
        details: Vec::new(),
        vm_ids: Vec::new(),
    };
    Answer::Done {
        result: serde_json::to_value(&result).unwrap_or(Value::Null),
    }
}

/// The key under which a guard's trail line names the call its change id was taken for.
const CALL_KEY: &str = "call";

/// What a change id is taken for: the caller's host and session, the tool and the VMs it
/// names (in any order, any case), as a SHA-256.
fn call_of(request: &GuardRequest) -> String {
    let mut vms: Vec<String> = request.vms.iter().map(|v| v.to_lowercase()).collect();
    vms.sort();
    vms.dedup();
    let call = json!([request.host, request.session, request.tool, vms]);
    audit::line_hash(call.to_string().as_bytes())
}

/// The change ids the trail's guard lines took, and for which calls; an unreadable trail
/// gives none (the chain's check says why).
fn used_changes(trail: &Path) -> HashMap<String, String> {
    let mut used = HashMap::new();
    let Ok(file) = std::fs::File::open(trail) else {
        return used;
    };
    for line in std::io::BufRead::lines(std::io::BufReader::new(file)).map_while(Result::ok) {
        let Ok(line) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let (Some(change), Some(call)) = (
            line.get("change").and_then(Value::as_str),
            line.get(CALL_KEY).and_then(Value::as_str),
        ) {
            used.entry(change.to_owned())
                .or_insert_with(|| call.to_owned());
        }
    }
    used
}

/// The longest a text field of a client's record may be, in bytes.
const RECORD_FIELD_MAX: usize = 512;
/// The longest a record's reason may be, in bytes.
const RECORD_REASON_MAX: usize = 4096;
/// The most names a record's list may hold.
const RECORD_ITEMS_MAX: usize = 64;
/// The longest a record's summarised arguments may be, as JSON.
const RECORD_ARGS_MAX: usize = 8192;

/// A client's record as the broker writes it: its time the broker's clock, its input only as
/// the fingerprint the trail's writer turns into a keyed digest, its arguments summarised
/// again and kept only where the broker's `[audit] store_input` says, every field checked. A field too long, or holding a control character
/// (a line break could pass for a second record in a copy that is not JSON), is refused,
/// naming the field. The reason may break lines (JSON escapes them).
fn admit_record(record: &Record, store: StoreInput) -> Result<Record, String> {
    let text = |field: &str, value: &str, max: usize, breaks: bool| -> Result<(), String> {
        if value.len() > max {
            return Err(format!(
                "record refused: its {field} is {} bytes, more than {max}",
                value.len()
            ));
        }
        if let Some(c) = value
            .chars()
            .find(|c| c.is_control() && !(breaks && matches!(c, '\n' | '\t')))
        {
            return Err(format!(
                "record refused: its {field} holds the control character U+{:04X}",
                u32::from(c)
            ));
        }
        Ok(())
    };
    let short = |field: &str, value: &str| text(field, value, RECORD_FIELD_MAX, false);
    short("host", &record.host)?;
    short("tool", &record.tool)?;
    short("class", &record.class)?;
    for (field, value) in [("session", &record.session), ("change", &record.change)] {
        if let Some(value) = value {
            short(field, value)?;
        }
    }
    for (field, list) in [
        ("vms", &record.vms),
        ("named", &record.named),
        ("vpgs", &record.vpgs),
    ] {
        if list.len() > RECORD_ITEMS_MAX {
            return Err(format!(
                "record refused: its {field} names {} items, more than {RECORD_ITEMS_MAX}",
                list.len()
            ));
        }
        for item in list {
            short(field, item)?;
        }
    }
    if record.checkpoints.len() > RECORD_ITEMS_MAX {
        return Err(format!(
            "record refused: it names {} checkpoints, more than {RECORD_ITEMS_MAX}",
            record.checkpoints.len()
        ));
    }
    for checkpoint in &record.checkpoints {
        for value in [&checkpoint.vpg, &checkpoint.id, &checkpoint.time]
            .into_iter()
            .chain(checkpoint.fallback.as_ref())
        {
            short("checkpoints", value)?;
        }
    }
    if let Some(reason) = &record.reason {
        text("reason", reason, RECORD_REASON_MAX, true)?;
    }
    if let Some(input) = &record.input
        && !audit::is_fingerprint(input)
    {
        return Err(String::from(
            "record refused: its input is kept only as the fingerprint `sha256:<64 hex digits>`",
        ));
    }
    let args = match store {
        StoreInput::Redacted => audit::summarise(&record.args),
        StoreInput::Digest => Value::Null,
    };
    let size = args.to_string().len();
    if size > RECORD_ARGS_MAX {
        return Err(format!(
            "record refused: its arguments are {size} bytes once summarised, more than {RECORD_ARGS_MAX}"
        ));
    }
    Ok(Record {
        time: crate::time::format_utc_millis(SystemTime::now()),
        args,
        ..record.clone()
    })
}

#[cfg(test)]
mod tests;
