//! The person running a restore: at this terminal, or at the far end of the broker's socket
//! (where the broker runs the restore with its own credentials and relays every line and
//! question to the operator's `rewind`). The restore's steps talk only to this seam.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

use super::follow::{self, Answer};
use crate::audit::Record;

/// What a restore needs of its operator.
pub(crate) trait Operator {
    /// One line for the operator (`json`: stdout carries a document, so not there).
    fn say(&self, line: &str, json: bool);
    /// Whether a question can be answered at all (a terminal on the operator's side).
    fn can_answer(&self) -> bool;
    /// A yes/no question; Ctrl-C while it waits is an answer too.
    fn ask(&self, question: &str) -> Answer;
    /// Waits for Enter after `prompt`; false on Ctrl-C.
    fn enter(&self, prompt: &str) -> bool;
    /// Runs the operator's `--verify` command where the operator is: Ok(passed, words).
    fn verify(&self, command: &str) -> anyhow::Result<(bool, String)>;
    /// From now on, Ctrl-C sets [`Operator::interrupted`] instead of ending the process.
    fn catch_interrupt(&self) -> anyhow::Result<()>;
    /// Set once the operator interrupted.
    fn interrupted(&self) -> &AtomicBool;
    /// The operator's name, for the trail and the document.
    fn user(&self) -> String;
    /// Writes one step's record to the audit trail.
    fn record(&self, record: &Record);
}

/// The operator at this terminal, with the ZVM's credentials in this process.
pub(crate) struct Terminal {
    interrupted: Arc<AtomicBool>,
    /// The trail the steps are written to, when the configuration names one.
    pub(crate) audit: Option<PathBuf>,
    /// The collector that gets a copy of each line (`[audit] syslog`).
    pub(crate) syslog: Option<crate::config::SyslogTarget>,
}

impl Terminal {
    pub(crate) fn new() -> Terminal {
        Terminal {
            interrupted: Arc::new(AtomicBool::new(false)),
            audit: None,
            syslog: None,
        }
    }
}

impl Operator for Terminal {
    fn say(&self, line: &str, json: bool) {
        if json {
            crate::console::err(line);
        } else {
            crate::console::say(line);
        }
    }

    fn can_answer(&self) -> bool {
        std::io::stdin().is_terminal()
    }

    fn ask(&self, question: &str) -> Answer {
        follow::ask(question, &self.interrupted)
    }

    fn enter(&self, prompt: &str) -> bool {
        crate::console::prompt(prompt);
        follow::enter(&self.interrupted)
    }

    fn verify(&self, command: &str) -> anyhow::Result<(bool, String)> {
        let (passed, words, interrupted) = follow::verify(command)?;
        if interrupted {
            // The Ctrl-C that ended the command is the operator's, whether or not the
            // handler has seen it yet.
            self.interrupted.store(true, Ordering::SeqCst);
        }
        Ok((passed, words))
    }

    fn catch_interrupt(&self) -> anyhow::Result<()> {
        let flag = Arc::clone(&self.interrupted);
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .context("cannot catch Ctrl-C, so an interrupted restore could not be rolled back; nothing was started")
    }

    fn interrupted(&self) -> &AtomicBool {
        &self.interrupted
    }

    fn user(&self) -> String {
        let uid = crate::platform::effective_uid();
        crate::platform::user_name(uid).unwrap_or_else(|| format!("uid {uid}"))
    }

    fn record(&self, record: &Record) {
        let Some(path) = &self.audit else { return };
        let trail = crate::audit::Trail {
            path,
            syslog: self.syslog.as_ref(),
        };
        if let Err(e) = crate::audit::append(trail, record) {
            crate::console::err(format!("warning: the audit trail was not written: {e:#}"));
        }
    }
}
