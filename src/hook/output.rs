//! The one place that writes the hook's answer to stdout (and its one stderr line).

use std::io::Write as _;
use std::process::ExitCode;

use super::claude_code::Rendered;

/// Writes a rendered decision and returns the exit code the process must end with.
pub(super) fn emit(rendered: &Rendered) -> ExitCode {
    if let Some(text) = &rendered.stdout {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
            // The host is gone or stdout is closed: nobody can read a decision. Exit 2 still
            // blocks if anything is listening for the exit code.
            eprintln!("rewind: could not write the decision to stdout");
            return ExitCode::from(2);
        }
    }
    if let Some(line) = &rendered.stderr {
        eprintln!("{line}");
    }
    ExitCode::from(rendered.code)
}
