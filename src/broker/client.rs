//! The client side: one request to the broker, its progress, its answer, under the caller's
//! deadline. Every failure is a [`BrokerError`] naming the socket; the caller turns it into a
//! deny (or an ask under `on_zvm_error = "ask"`), never into a call let through.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::protocol::{
    ANSWER_MAX, Answer, AnswerLine, Op, Question, Reply, ReplyKind, Request, VERSION,
};
use crate::config::BrokerConfig;
use crate::deadline::Deadline;
use crate::platform::{self, LocalStream};

/// Time kept back from the caller's deadline for the answer to cross the socket.
const TRANSIT: Duration = Duration::from_millis(150);
/// The longest a wait for the broker's answer goes without looking at the caller's cancel.
const CANCEL_CHECK: Duration = Duration::from_millis(100);

/// Why the broker gave no usable answer. The text names the socket.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BrokerError {
    /// No answer: no broker configured, one that cannot be reached or trusted, a connection
    /// lost, an answer out of protocol or none in time.
    #[error("{0}")]
    Failed(String),
    /// The broker answered and refused the request (its reason in the text). An operator
    /// command exits 8 on it (`exit::DENIED`).
    #[error("{0}")]
    Refused(String),
}

impl BrokerError {
    /// Whether the broker answered and refused.
    pub(crate) fn is_refusal(&self) -> bool {
        matches!(self, Self::Refused(_))
    }

    /// The text alone.
    pub(crate) fn into_text(self) -> String {
        match self {
            Self::Failed(text) | Self::Refused(text) => text,
        }
    }

    /// The same failure, its text naming the broker's socket.
    fn at(self, socket: &Path) -> Self {
        let name = |text: String| format!("the broker at {}: {text}", socket.display());
        match self {
            Self::Failed(text) => Self::Failed(name(text)),
            Self::Refused(text) => Self::Refused(name(text)),
        }
    }
}

impl From<String> for BrokerError {
    fn from(text: String) -> Self {
        Self::Failed(text)
    }
}

/// Sends `op` to the broker `config` names and returns its final answer, telling `progress`
/// each progress line. Returns within `deadline` (reads and writes time out at it).
pub(crate) fn call(
    config: &BrokerConfig,
    op: Op,
    deadline: &Deadline,
    progress: &mut dyn FnMut(&str),
) -> Result<Value, BrokerError> {
    call_watched(config, op, deadline, progress, &|| false)
}

/// [`call`], which stops waiting (and closes the connection) soon after `cancelled` says so.
pub(crate) fn call_watched(
    config: &BrokerConfig,
    op: Op,
    deadline: &Deadline,
    progress: &mut dyn FnMut(&str),
    cancelled: &dyn Fn() -> bool,
) -> Result<Value, BrokerError> {
    let Some(socket) = config.socket.as_deref() else {
        return Err(BrokerError::Failed(String::from(
            "no [broker] socket is configured",
        )));
    };
    let stream = connect(socket, &config.user).map_err(|e| BrokerError::from(e).at(socket))?;
    let parts = Exchange {
        grace: Duration::ZERO,
        progress,
        cancelled,
        talk: None,
    };
    run(&stream, op, deadline, parts).map_err(|e| e.at(socket))
}

/// The operator's side of a request the broker asks questions in (`rewind restore-vm`).
pub(crate) trait Conversation {
    /// The answer to one of the broker's questions.
    fn answer(&mut self, question: &Question) -> ReplyKind;
    /// True (once) when the operator has just interrupted: the broker is told at once.
    fn interrupted(&mut self) -> bool;
}

/// [`call`] for a request the broker asks `talk` questions in; the connection stays open
/// until the broker's final answer, however long that takes within `deadline`.
pub(crate) fn converse(
    config: &BrokerConfig,
    op: Op,
    deadline: &Deadline,
    progress: &mut dyn FnMut(&str),
    talk: &mut dyn Conversation,
) -> Result<Value, BrokerError> {
    let Some(socket) = config.socket.as_deref() else {
        return Err(BrokerError::Failed(String::from(
            "no [broker] socket is configured",
        )));
    };
    let stream = connect(socket, &config.user).map_err(|e| BrokerError::from(e).at(socket))?;
    let parts = Exchange {
        grace: Duration::ZERO,
        progress,
        cancelled: &|| false,
        talk: Some(talk),
    };
    run(&stream, op, deadline, parts).map_err(|e| e.at(socket))
}

/// Connects to the broker `config` names without asking anything: who serves its socket, for
/// `rewind doctor`.
pub(crate) fn reach(config: &BrokerConfig) -> Result<platform::Peer, BrokerError> {
    let Some(socket) = config.socket.as_deref() else {
        return Err(BrokerError::Failed(String::from(
            "no [broker] socket is configured",
        )));
    };
    let fail = |what: String| BrokerError::from(what).at(socket);
    let stream = connect(socket, &config.user).map_err(fail)?;
    platform::peer(&stream).map_err(|e| fail(e.to_string()))
}

/// The file beside the broker's socket where the broker publishes the protected-VM net.
pub(crate) fn published_net_path(socket: &Path) -> std::path::PathBuf {
    socket.with_file_name("protected-vms")
}

/// The protected-VM net the broker `config` names publishes beside its socket, believed only
/// when it and its directory belong to root or the broker's account and nobody else may
/// change them (the agent's own cache is not read: it could empty it). Empty otherwise.
pub(crate) fn published_net(config: &BrokerConfig) -> crate::inventory::Inventory {
    let Some(socket) = config.socket.as_deref() else {
        return crate::inventory::Inventory::default();
    };
    let path = published_net_path(socket);
    let owners = trusted_owners(&config.user);
    let trusted = |p: &Path| {
        platform::ownership(p).is_ok_and(|o| owners.contains(&o.uid) && o.mode & 0o022 == 0)
    };
    let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
    if is_file && trusted(&path) && path.parent().is_some_and(trusted) {
        crate::inventory::Inventory::load_file(&path)
    } else {
        crate::inventory::Inventory::default()
    }
}

/// The uids that may serve the broker's socket: root and the broker's account.
fn trusted_owners(user: &str) -> Vec<u32> {
    let mut owners = vec![0];
    owners.extend(platform::uid_named(user));
    owners
}

/// Connects, refusing a socket (or a process serving it) that neither root nor the broker's
/// account owns: anyone else could answer "confirmed" in the broker's place.
fn connect(socket: &Path, user: &str) -> Result<platform::LocalStream, String> {
    let owners = trusted_owners(user);
    let owned = match platform::ownership(socket) {
        Ok(owned) => owned,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(String::from(
                "no such socket; is `rewind broker` running (systemctl status rewind-broker)?",
            ));
        }
        Err(e) => return Err(format!("cannot look at the socket: {e}")),
    };
    if !owned.is_socket {
        return Err(String::from("is not a socket"));
    }
    if !owners.contains(&owned.uid) {
        return Err(format!(
            "the socket belongs to user id {}, not to root or the broker's account {user:?} ([broker] user); refusing to trust it",
            owned.uid
        ));
    }
    if let Some(dir) = socket.parent()
        && let Ok(dir_owned) = platform::ownership(dir)
        && (!owners.contains(&dir_owned.uid) || dir_owned.mode & 0o022 != 0)
    {
        return Err(format!(
            "its directory {} can be changed by users other than root and the broker's account {user:?} (owner {}, mode {:o}); refusing to trust it",
            dir.display(),
            dir_owned.uid,
            dir_owned.mode
        ));
    }
    let stream = platform::LocalStream::connect(socket).map_err(|e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            String::from("connection refused: the broker is not running")
        } else {
            format!("cannot connect: {e}")
        }
    })?;
    let server = platform::peer(&stream).map_err(|e| format!("cannot tell who serves it: {e}"))?;
    if !owners.contains(&server.uid) {
        return Err(format!(
            "it is served by user id {} (pid {}), not by root or the broker's account {user:?}; refusing to trust it",
            server.uid, server.pid
        ));
    }
    Ok(stream)
}

/// One request and its answer on a connected stream (the broker's socket, or the socket pair
/// `rewind-hook` shares with `rewind`): the request asks for an answer within `deadline`, and
/// the answer is waited for until `grace` after it (a guard answering just past its deadline,
/// as one in this process would, is still heard).
pub(crate) fn exchange(
    stream: &platform::LocalStream,
    op: Op,
    deadline: &Deadline,
    grace: Duration,
    progress: &mut dyn FnMut(&str),
    cancelled: &dyn Fn() -> bool,
) -> Result<Value, String> {
    let parts = Exchange {
        grace,
        progress,
        cancelled,
        talk: None,
    };
    run(stream, op, deadline, parts).map_err(BrokerError::into_text)
}

/// What an exchange does besides waiting for the final answer.
struct Exchange<'a> {
    grace: Duration,
    progress: &'a mut dyn FnMut(&str),
    cancelled: &'a dyn Fn() -> bool,
    talk: Option<&'a mut dyn Conversation>,
}

/// Sends the request line, asking for an answer within `budget`.
fn send_request(stream: &LocalStream, op: Op, budget: &Deadline) -> Result<(), String> {
    let request = Request {
        v: VERSION,
        deadline_ms: u64::try_from(budget.remaining().as_millis()).unwrap_or(u64::MAX),
        op,
    };
    let mut line = serde_json::to_vec(&request).map_err(|e| e.to_string())?;
    line.push(b'\n');
    (&*stream)
        .write_all(&line)
        .map_err(|e| format!("cannot send the request: {e}"))
}

/// One answer line, of this protocol's version.
fn parse_answer(bytes: &[u8]) -> Result<Answer, String> {
    let answer: AnswerLine = serde_json::from_slice(bytes)
        .map_err(|e| format!("it answered something that is not its protocol ({e})"))?;
    if answer.v != VERSION {
        return Err(format!(
            "it speaks protocol version {}, this rewind version {VERSION}; install the same rewind on both sides",
            answer.v
        ));
    }
    Ok(answer.answer)
}

/// Sends one reply line.
fn reply(stream: &LocalStream, reply: ReplyKind) -> Result<(), String> {
    let mut line = serde_json::to_vec(&Reply { v: VERSION, reply }).map_err(|e| e.to_string())?;
    line.push(b'\n');
    (&*stream)
        .write_all(&line)
        .map_err(|e| format!("cannot send the operator's answer: {e}"))
}

fn run(
    stream: &LocalStream,
    op: Op,
    deadline: &Deadline,
    parts: Exchange<'_>,
) -> Result<Value, BrokerError> {
    let Exchange {
        grace,
        progress,
        cancelled,
        mut talk,
    } = parts;
    let budget = deadline.shortened_by(TRANSIT);
    let waited = Deadline::starting_at(deadline.started(), deadline.budget() + grace);
    let deadline = &waited;
    let timeout = |deadline: &Deadline| {
        let left = deadline.remaining();
        if left.is_zero() {
            Err(String::from("no answer before the budget ran out"))
        } else {
            Ok(Some(left))
        }
    };
    stream
        .set_write_timeout(timeout(deadline)?)
        .map_err(|e| e.to_string())?;
    send_request(stream, op, &budget)?;
    let mut reader = BufReader::new(stream);
    let mut bytes = Vec::new();
    loop {
        if let Some(talk) = talk.as_deref_mut()
            && talk.interrupted()
        {
            reply(stream, ReplyKind::Interrupt)?;
        }
        if cancelled() {
            return Err(BrokerError::Failed(String::from(
                "cancelled while waiting for its answer; a checkpoint it already inserted stays in Zerto",
            )));
        }
        // In slices, to see a cancel soon; a line cut by a slice's end is read on.
        let slice = timeout(deadline)?.map(|left| left.min(CANCEL_CHECK));
        stream.set_read_timeout(slice).map_err(|e| e.to_string())?;
        let room = (ANSWER_MAX + 1).saturating_sub(bytes.len()) as u64;
        let read = (&mut reader).take(room).read_until(b'\n', &mut bytes);
        match read {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) && !deadline.expired() =>
            {
                continue;
            }
            Ok(0) => {
                return Err(BrokerError::Failed(String::from(
                    "the connection closed before an answer (it stopped or was killed)",
                )));
            }
            Ok(_) if bytes.len() > ANSWER_MAX => {
                return Err(BrokerError::Failed(String::from(
                    "an answer longer than the protocol allows",
                )));
            }
            Ok(_) if !bytes.ends_with(b"\n") => {
                return Err(BrokerError::Failed(String::from(
                    "the connection closed in the middle of an answer (it stopped or was killed)",
                )));
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(BrokerError::Failed(format!(
                    "no answer within the {} ms left of the budget",
                    deadline
                        .budget()
                        .saturating_sub(deadline.elapsed())
                        .as_millis()
                )));
            }
            Err(e) => return Err(BrokerError::Failed(format!("cannot read the answer: {e}"))),
        }
        let answer = parse_answer(&bytes)?;
        bytes.clear();
        match answer {
            Answer::Progress { text } => progress(&text),
            Answer::Done { result } => return Ok(result),
            Answer::Refused { error } => {
                return Err(BrokerError::Refused(format!("refused: {error}")));
            }
            Answer::Question { question } => match talk.as_deref_mut() {
                Some(talk) => reply(stream, talk.answer(&question))?,
                None => {
                    return Err(BrokerError::Failed(String::from(
                        "it asked a question this request has no one to answer",
                    )));
                }
            },
        }
    }
}
