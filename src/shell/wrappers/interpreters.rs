//! Programs handed code (`python3 -c`, `perl -e`, `node --eval=`, `gdb -ex`, code on standard
//! input): the code texts, found by `code`, are read where the protected-VM net is known.

use super::Next;
use crate::shell::code::{self, Family};
use crate::shell::types::{Arg, Stdin};

/// Whether `text` may reach another machine by a means no catalog program names: a library
/// that code handed to an interpreter would use, or `systemd-run --host`. Part of the fast
/// test for local commands.
pub(crate) fn may_reach_without_a_program(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("systemd-run")
        || lower.contains("--sshlogin")
        || lower.contains("--slf")
        || (lower.contains("parallel") && lower.contains("-s"))
        || code::REMOTE_SHELLS.iter().any(|l| lower.contains(l))
}

/// The code a program of `family` is handed.
pub(super) fn interpreter(family: &Family, args: &[Arg], stdin: &Stdin) -> Next {
    Next::Code(code::handed(family, args, stdin))
}
