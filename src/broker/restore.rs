//! `rewind restore-vm` served by the broker, for its operators only: the broker runs the
//! restore with its own credentials and trail, and relays each line and question to the
//! operator's `rewind`, which answers them (and runs the operator's `--verify` command where
//! the operator is, never as the broker's account). A connection that closes, or a Ctrl-C
//! the operator's side reports, interrupts the restore: what was started is rolled back or
//! stopped, as at a terminal.

use std::io::{BufRead as _, BufReader, Read as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use serde_json::Value;

use super::protocol::{
    self, Answer, Answers, Question, REPLY_MAX, Reply, ReplyKind, RestoreVmRequest, VERSION,
};
use crate::audit::Record;
use crate::cli::{RestoreVmArgs, ShutdownArg};
use crate::config::Config;
use crate::platform::LocalStream;
use crate::vmrestore::{self, Operator};

/// How often a wait for the operator's answer looks for an interrupt.
const LOOK: Duration = Duration::from_millis(100);

/// Runs the restore `request` asks for over `stream` for `user`, writing each step with
/// `record`, and returns its document (the broker's final answer).
pub(super) fn serve(
    config: &Config,
    stream: &LocalStream,
    user: String,
    request: &RestoreVmRequest,
    record: &dyn Fn(&Record),
) -> Value {
    let interrupted = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        if let Ok(reading) = stream.try_clone() {
            let interrupted = &interrupted;
            scope.spawn(move || read_replies(&reading, &tx, interrupted));
        } else {
            interrupted.store(true, Ordering::SeqCst);
        }
        let relay = Relay {
            stream,
            replies: Mutex::new(rx),
            interrupted: &interrupted,
            interactive: request.answers == Answers::Terminal,
            user,
            record,
        };
        let document = match args(request) {
            Ok(args) => vmrestore::execute(Ok(config), &args, &relay),
            Err(e) => vmrestore::execute(Err(&e), &placeholder(request), &relay),
        };
        // Ends the reader: the operator's side has its answer coming.
        let _ = stream.shutdown(std::net::Shutdown::Read);
        document
    })
}

/// The operator's lines, until the connection closes: answers go to `tx`; an interrupt, or
/// the end of the connection, sets `interrupted`.
fn read_replies(stream: &LocalStream, tx: &mpsc::Sender<ReplyKind>, interrupted: &AtomicBool) {
    let _ = stream.set_read_timeout(None);
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        let room = REPLY_MAX as u64 + 1;
        match (&mut reader).take(room).read_until(b'\n', &mut line) {
            Ok(n) if n > 0 && line.len() <= REPLY_MAX && line.ends_with(b"\n") => {}
            _ => break,
        }
        match serde_json::from_slice::<Reply>(&line) {
            Ok(Reply {
                v: VERSION,
                reply: ReplyKind::Interrupt,
            }) => interrupted.store(true, Ordering::SeqCst),
            Ok(Reply { v: VERSION, reply }) => {
                if tx.send(reply).is_err() {
                    break;
                }
            }
            _ => break,
        }
    }
    interrupted.store(true, Ordering::SeqCst);
}

/// The operator's arguments, checked as the command line checks them.
fn args(request: &RestoreVmRequest) -> anyhow::Result<RestoreVmArgs> {
    let rollback_after = crate::cli::rollback_after(&format!("{}s", request.rollback_after_secs))
        .map_err(|e| {
        anyhow::anyhow!("rollback_after_secs {}: {e}", request.rollback_after_secs)
    })?;
    let shutdown =
        <ShutdownArg as clap::ValueEnum>::from_str(&request.shutdown, false).map_err(|_| {
            anyhow::anyhow!(
                "shutdown {:?} is not force, graceful or none",
                request.shutdown
            )
        })?;
    if usize::from(request.change.is_some()) + usize::from(request.checkpoint.is_some()) != 1 {
        anyhow::bail!("name the point to restore to: change or checkpoint, one of them");
    }
    Ok(RestoreVmArgs {
        rollback_after,
        shutdown,
        ..placeholder(request)
    })
}

/// The request's fields as arguments, with the defaults where they may be wrong.
fn placeholder(request: &RestoreVmRequest) -> RestoreVmArgs {
    RestoreVmArgs {
        vm: request.vm.clone(),
        change: request.change.clone(),
        checkpoint: request.checkpoint.clone(),
        vpg: request.vpg.clone(),
        preview: request.preview,
        hold: request
            .hold_secs
            .map(|s| humantime::Duration::from(Duration::from_secs(s))),
        verify: request
            .verify
            .then(|| String::from("the operator's --verify command")),
        rollback_after: humantime::Duration::from(Duration::from_secs(3600)),
        shutdown: ShutdownArg::Force,
        yes: request.answers == Answers::Yes,
        json: true,
    }
}

/// The operator at the far end of the socket.
struct Relay<'a> {
    stream: &'a LocalStream,
    replies: Mutex<mpsc::Receiver<ReplyKind>>,
    interrupted: &'a AtomicBool,
    interactive: bool,
    user: String,
    record: &'a dyn Fn(&Record),
}

impl Relay<'_> {
    /// Asks `question` and waits for the answer; `None` when the operator interrupted or left.
    fn question(&self, question: Question) -> Option<ReplyKind> {
        if protocol::write_answer(self.stream, &Answer::Question { question }).is_err() {
            self.interrupted.store(true, Ordering::SeqCst);
            return None;
        }
        let replies = self.replies.lock().ok()?;
        loop {
            if self.interrupted.load(Ordering::SeqCst) {
                return None;
            }
            match replies.recv_timeout(LOOK) {
                Ok(reply) => return Some(reply),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    }
}

impl Operator for Relay<'_> {
    fn say(&self, line: &str, _json: bool) {
        let text = line.to_owned();
        let _ = protocol::write_answer(self.stream, &Answer::Progress { text });
    }

    fn can_answer(&self) -> bool {
        self.interactive
    }

    fn ask(&self, question: &str) -> vmrestore::Answer {
        let text = question.to_owned();
        match self.question(Question::YesNo { text }) {
            Some(ReplyKind::Yes) => vmrestore::Answer::Yes,
            Some(_) => vmrestore::Answer::No,
            None => vmrestore::Answer::Interrupted,
        }
    }

    fn enter(&self, prompt: &str) -> bool {
        let text = prompt.to_owned();
        self.question(Question::Enter { text }).is_some()
    }

    fn verify(&self, _command: &str) -> anyhow::Result<(bool, String)> {
        match self.question(Question::Verify) {
            Some(ReplyKind::Verified { passed, words }) => Ok((passed, words)),
            Some(other) => Err(anyhow::anyhow!(
                "the operator's side answered {other:?} to the --verify question"
            )),
            None => Ok((false, String::from("the operator interrupted it or left"))),
        }
    }

    fn catch_interrupt(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn interrupted(&self) -> &AtomicBool {
        self.interrupted
    }

    fn user(&self) -> String {
        self.user.clone()
    }

    fn record(&self, record: &Record) {
        (self.record)(record);
    }
}
