//! Every exit code `rewind` returns, in one place, and the one place an operator command's
//! error becomes its code.
//!
//! | code | `rewind hook`                                   | other commands                          |
//! |------|-------------------------------------------------|-----------------------------------------|
//! | 0    | a decision was written on stdout               | success                                 |
//! | 1    | never                                           | any other failure (reason on stderr)    |
//! | 2    | blocked: one line on stderr, no decision        | usage error (clap), bad arguments       |
//! | 3    | never                                           | `restore-vm`: refused, nothing started  |
//! | 4    | never                                           | `restore-vm`: started and rolled back   |
//! | 5    | never                                           | the configuration cannot be used        |
//! | 6    | never                                           | the ZVM unreachable, too slow, untrusted |
//! | 7    | never                                           | a VM, checkpoint or guest path not found |
//! | 8    | never                                           | Zerto or the broker refused             |
//!
//! A usage error is anything the command line alone shows to be wrong, found by clap before
//! the command runs: a missing or unknown argument, and a value out of range
//! (`guard --budget 0`, `checkpoints --limit 0`). A configuration file that is wrong is 5: the
//! command ran and could not do its work until the file is fixed.
//!
//! Codes 5 to 8 tell a script what to do next: fix the configuration (5), try again later or
//! fix the network (6), correct the name it passed (7), see who may do what (8). The cause is
//! the first typed error in the error's chain, outermost first (the most specific, as the code
//! that knew it wrapped it): [`ConfigError`], [`ZvmError`], [`NotFound`], [`BrokerError`], an
//! I/O permission error; an error none of them is (a failed checkpoint, a broker that cannot be
//! reached, a ZVM answer that makes no sense, a name that matches several VMs) is 1. The
//! numbers never change meaning; a new cause gets a new number.
//!
//! A hook never exits 1 or 101, nor 5 to 8: on the hosts `rewind` serves, any code but 0 and 2
//! lets the tool call run unguarded. Its failures are decisions (deny or ask) with exit 0.

use std::process::ExitCode;

use crate::broker::client::BrokerError;
use crate::config::ConfigError;
use crate::zvm::{NotFound, ZvmError};

/// Success; for the hook, a decision on stdout.
pub(crate) const OK: u8 = 0;
/// An operator command failed for a reason none of the codes below names; the reason is on
/// stderr. Never used by the hook.
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

/// The configuration cannot be used: the file cannot be read, is not TOML or holds a wrong
/// setting; no configuration or no `[zvm]` where the command needs one; a `ca_cert` or a
/// password source (`password_env`, `password_file`, `password_command`) that gives nothing.
pub(crate) const CONFIG: u8 = 5;
/// The ZVM could not be reached (refused, reset, no such host), did not answer in time, or
/// presented a TLS certificate that is not trusted.
pub(crate) const UNREACHABLE: u8 = 6;
/// What the command names does not exist: a VM Zerto does not protect, no checkpoint for the
/// change, checkpoint id or time asked for, a guest path the checkpoint does not hold.
pub(crate) const NOT_FOUND: u8 = 7;
/// Refused: Zerto refused rewind's login or the request (HTTP 401 or 403), the broker
/// answered and refused the request, or the system denied access to a file or socket.
pub(crate) const DENIED: u8 = 8;

/// The process status for one of the codes above.
pub(crate) fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}

/// The code of an operator command's failure: its first typed cause, outermost first, else
/// [`FAILED`].
pub(crate) fn of_error(error: &anyhow::Error) -> u8 {
    error.chain().find_map(of_cause).unwrap_or(FAILED)
}

/// The code one cause in an error's chain stands for, if it is one that names one.
fn of_cause(cause: &(dyn std::error::Error + 'static)) -> Option<u8> {
    if cause.is::<ConfigError>() {
        return Some(CONFIG);
    }
    if cause.is::<NotFound>() {
        return Some(NOT_FOUND);
    }
    if let Some(zvm) = cause.downcast_ref::<ZvmError>() {
        return Some(of_zvm(zvm));
    }
    if let Some(broker) = cause.downcast_ref::<BrokerError>() {
        return broker.is_refusal().then_some(DENIED);
    }
    if let Some(io) = cause.downcast_ref::<std::io::Error>() {
        return (io.kind() == std::io::ErrorKind::PermissionDenied).then_some(DENIED);
    }
    None
}

fn of_zvm(error: &ZvmError) -> u8 {
    match error {
        ZvmError::Setup(_) => CONFIG,
        ZvmError::Unreachable { .. } | ZvmError::TimedOut { .. } | ZvmError::Tls { .. } => {
            UNREACHABLE
        }
        ZvmError::Auth { .. }
        | ZvmError::Status {
            status: 401 | 403, ..
        } => DENIED,
        ZvmError::Status { .. } | ZvmError::Decode { .. } => FAILED,
    }
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::*;

    fn unreachable() -> ZvmError {
        ZvmError::Unreachable {
            method: "GET",
            url: String::from("https://zvm:443/v1/vms"),
            detail: String::from("connection refused"),
        }
    }

    #[test]
    fn each_typed_cause_has_its_code() {
        let status = |status| ZvmError::Status {
            method: "POST",
            url: String::from("https://zvm:443/v1/vpgs"),
            status,
            message: String::new(),
        };
        let cases: Vec<(anyhow::Error, u8)> = vec![
            (anyhow::anyhow!("something else"), FAILED),
            (ConfigError::Invalid(String::from("bad")).into(), CONFIG),
            (ZvmError::Setup(String::from("no password")).into(), CONFIG),
            (unreachable().into(), UNREACHABLE),
            (
                ZvmError::TimedOut {
                    method: "GET",
                    url: String::new(),
                }
                .into(),
                UNREACHABLE,
            ),
            (
                NotFound::Vm(String::from("VM x is unknown")).into(),
                NOT_FOUND,
            ),
            (NotFound::Path(String::from("/etc/x")).into(), NOT_FOUND),
            (status(403).into(), DENIED),
            (status(401).into(), DENIED),
            (status(500).into(), FAILED),
            (BrokerError::Refused(String::from("no")).into(), DENIED),
            (BrokerError::Failed(String::from("gone")).into(), FAILED),
            (
                std::io::Error::from(std::io::ErrorKind::PermissionDenied).into(),
                DENIED,
            ),
            (
                std::io::Error::from(std::io::ErrorKind::NotFound).into(),
                FAILED,
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(of_error(&error), expected, "{error:#}");
        }
    }

    #[test]
    fn the_cause_is_found_under_context_and_the_outermost_decides() {
        let wrapped = Err::<(), _>(unreachable())
            .context("File Level Restore could not mount the checkpoint")
            .context("rewind recover")
            .expect_err("an error");
        assert_eq!(of_error(&wrapped), UNREACHABLE);
        let outer = anyhow::Error::new(ConfigError::Unreadable {
            path: std::path::PathBuf::from("/etc/rewind/config.toml"),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
        assert_eq!(of_error(&outer), CONFIG);
    }
}
