//! Every exit code `rewind` returns, in one place.
//!
//! | code | `rewind hook`                                   | other commands                         |
//! |------|-------------------------------------------------|----------------------------------------|
//! | 0    | a decision was written on stdout               | success                                |
//! | 1    | never                                           | the operation failed (reason on stderr) |
//! | 2    | blocked: one line on stderr, no decision        | usage error (clap), bad arguments       |
//!
//! A hook never exits 1 or 101: on the hosts `rewind` serves, any code but 0 and 2 lets the
//! tool call run unguarded.

use std::process::ExitCode;

/// Success; for the hook, a decision on stdout.
pub const OK: u8 = 0;
/// An operator command failed; the reason is on stderr. Never used by the hook.
pub const FAILED: u8 = 1;
/// The hook blocked the call with one line on stderr, or the command line was wrong (clap's
/// own usage errors exit 2 as well).
pub const BLOCKED: u8 = 2;
/// The same code, named for usage errors.
pub const USAGE: u8 = BLOCKED;

/// The process status for one of the codes above.
pub fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}
