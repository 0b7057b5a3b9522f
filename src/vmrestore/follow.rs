//! Following a Zerto task to its end at one request a second, with the ZVM's percentage
//! and the elapsed time on a terminal; asking the operator without blocking on Ctrl-C; the
//! `--verify` command.

use std::io::IsTerminal as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::deadline::Deadline;
use crate::zvm::{Client, Task, TaskState};

/// The pause between two polls of a task: never more than one request a second.
pub(crate) const POLL: Duration = Duration::from_secs(1);

/// How a followed task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Completed, or (for a restore) waiting for the operator's commit: ready.
    Done(TaskState),
    /// Failed or stopped, with Zerto's reason.
    Failed(TaskState, String),
    /// Ctrl-C while waiting.
    Interrupted,
    /// Still running when the time ran out.
    TimedOut(Option<u8>),
}

/// Polls `task` once a second until it ends, or (with `waiting_is_done`) waits for input.
/// A poll that fails is tried again on the next second; three failures in a row end the wait
/// with the last error.
pub(crate) fn follow(
    client: &Client,
    task: &str,
    what: &str,
    waiting_is_done: bool,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<Ended> {
    let started = Instant::now();
    let live = std::io::stderr().is_terminal();
    let mut failures = 0;
    let mut progress = None;
    loop {
        if !pause(POLL, deadline, interrupted) {
            clear(live);
            return Ok(if interrupted.load(Ordering::SeqCst) {
                Ended::Interrupted
            } else {
                Ended::TimedOut(progress)
            });
        }
        let state: Task = match client.task(task, deadline) {
            Ok(state) => {
                failures = 0;
                state
            }
            Err(e) if failures < 2 && !deadline.expired() => {
                failures += 1;
                crate::console::err(format!(
                    "{what}: reading task {task} failed ({e}); trying again"
                ));
                continue;
            }
            Err(e) => {
                clear(live);
                return Err(e.into());
            }
        };
        progress = state.progress;
        if live {
            crate::console::prompt(&format!(
                "\r{what}: {} % ({} s, {})\x1b[K",
                state.progress.unwrap_or(0),
                started.elapsed().as_secs(),
                state.state
            ));
        }
        match state.state {
            TaskState::Completed => {
                clear(live);
                return Ok(Ended::Done(state.state));
            }
            TaskState::WaitingForUserInput if waiting_is_done => {
                clear(live);
                return Ok(Ended::Done(state.state));
            }
            TaskState::Failed | TaskState::Stopped => {
                clear(live);
                return Ok(Ended::Failed(state.state, state.reason));
            }
            _ => {}
        }
    }
}

fn clear(live: bool) {
    if live {
        crate::console::prompt("\r\x1b[K");
    }
}

/// Sleeps `wanted`, waking early on Ctrl-C; false when interrupted or out of time.
pub(crate) fn pause(wanted: Duration, deadline: &Deadline, interrupted: &AtomicBool) -> bool {
    let until = Instant::now() + wanted;
    loop {
        if interrupted.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        if !deadline.sleep((until - now).min(Duration::from_millis(100))) {
            return false;
        }
    }
}

/// An answer of the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Yes,
    No,
    Interrupted,
}

/// Asks a yes/no question on the terminal; Ctrl-C while it waits is an answer too.
pub(crate) fn ask(question: &str, interrupted: &AtomicBool) -> Answer {
    crate::console::prompt(question);
    match read_line(interrupted) {
        Some(line) if matches!(line.trim(), "y" | "Y" | "yes" | "Yes" | "YES") => Answer::Yes,
        Some(_) => Answer::No,
        None => Answer::Interrupted,
    }
}

/// Waits for Enter; false on Ctrl-C.
pub(crate) fn enter(interrupted: &AtomicBool) -> bool {
    read_line(interrupted).is_some()
}

/// One line from stdin, read on its own thread so that Ctrl-C is noticed while it waits.
fn read_line(interrupted: &AtomicBool) -> Option<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = std::io::stdin().read_line(&mut line).map(|_| line);
        let _ = tx.send(read);
    });
    loop {
        if interrupted.load(Ordering::SeqCst) {
            crate::console::prompt("\n");
            return None;
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(line)) => return Some(line),
            Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Some(String::new());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Runs the operator's `--verify` command with their shell (`$SHELL -c`, else `sh -c`), its
/// output on stderr (stdout may carry the JSON document): whether it exited 0, how it ended,
/// and whether the terminal's Ctrl-C ended it (which the command, in the same foreground
/// group, may see before this process's own handler does).
pub(crate) fn verify(command: &str) -> anyhow::Result<(bool, String, bool)> {
    let shell = std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "sh".into());
    let status = Command::new(&shell)
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", shell.to_string_lossy()))?;
    let interrupted = crate::platform::ended_by_interrupt(status);
    let words = match status.code() {
        _ if interrupted => String::from("interrupted"),
        Some(code) => format!("exit {code}"),
        None => String::from("killed by a signal"),
    };
    Ok((status.success(), words, interrupted))
}
