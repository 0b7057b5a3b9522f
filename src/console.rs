//! The one stdout writer and a stderr writer that never fails.
//!
//! stdout is the hook's protocol with its host, so nothing else writes it: clippy's
//! `disallowed-methods` refuses `std::io::stdout` outside this module and `print_stdout`
//! refuses `println!`. stderr may be a pipe whose reader is gone; `eprintln!` would panic
//! there (exit 101, which a host reads as "run the call unguarded"), so every stderr line
//! goes through [`err`], which drops write errors (clippy's `disallowed-macros` refuses
//! `eprintln!` and `eprint!`).

use std::io::Write as _;

/// Writes `text` and a newline to stdout, flushed. The error is the caller's to judge: the
/// hook turns it into exit 2, an operator command into a failure.
#[expect(
    clippy::disallowed_methods,
    reason = "the single stdout writer the rest of the crate goes through"
)]
pub(crate) fn write_line(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Whether stdout leads nowhere: `/dev/null`, which is also what the Rust runtime puts in
/// place of a stdout the parent closed (`rewind hook >&-`), so writes there "succeed". A
/// decision written there reaches no host; the hook then blocks instead.
#[expect(
    clippy::disallowed_methods,
    reason = "inspects the single stdout, writes nothing"
)]
pub(crate) fn stdout_is_void() -> bool {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return true;
    };
    match (
        std::fs::File::from(fd).metadata(),
        std::fs::metadata("/dev/null"),
    ) {
        (Ok(out), Ok(null)) => out.file_type().is_char_device() && out.rdev() == null.rdev(),
        _ => false,
    }
}

/// Prints one line of an operator command's output for a person. A closed stdout is not
/// worth a panic: the line is dropped.
pub(crate) fn say(text: impl std::fmt::Display) {
    let _ = write_line(&text.to_string());
}

/// Writes one line to stderr, ignoring every error (a closed or broken stderr).
pub(crate) fn err(text: impl std::fmt::Display) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
    let _ = stderr.flush();
}

/// Writes `text` to stderr with no newline (a question waiting for an answer), ignoring errors.
pub(crate) fn prompt(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
    let _ = stderr.flush();
}
