//! Every exit code `rewind` returns, in one place.
//!
//! | code | `rewind hook`                                   | other commands                         |
//! |------|-------------------------------------------------|----------------------------------------|
//! | 0    | a decision was written on stdout               | success                                |
//! | 1    | never                                           | the operation failed (reason on stderr) |
//! | 2    | blocked: one line on stderr, no decision        | usage error (clap), bad arguments       |
//! | 3    | never                                           | `restore-vm`: refused, nothing started  |
//! | 4    | never                                           | `restore-vm`: started and rolled back   |
//!
//! A usage error is anything the command line alone shows to be wrong, found by clap before
//! the command runs: a missing or unknown argument, and a value out of range
//! (`guard --budget 0`, `checkpoints --limit 0`). A configuration file that is wrong is a
//! failure (1): the command ran and could not do its work.
//!
//! A hook never exits 1 or 101: on the hosts `rewind` serves, any code but 0 and 2 lets the
//! tool call run unguarded.

use std::process::ExitCode;

/// Success; for the hook, a decision on stdout.
pub(crate) const OK: u8 = 0;
/// An operator command failed; the reason is on stderr. Never used by the hook.
pub(crate) const FAILED: u8 = 1;
/// The hook blocked the call with one line on stderr. A wrong command line exits 2 as well:
/// clap's usage errors, `rewind recover` without a restore point among them.
pub(crate) const BLOCKED: u8 = 2;

/// `rewind restore-vm` refused before starting anything in Zerto (unknown VM or change, a
/// checkpoint out of the journal, a VPG that cannot be recovered now, a restore or test
/// already running, nobody to confirm).
pub(crate) const REFUSED: u8 = 3;
/// `rewind restore-vm` started a restore and rolled it back: the VM is as it was before.
pub(crate) const ROLLED_BACK: u8 = 4;

/// The process status for one of the codes above.
pub(crate) fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}
