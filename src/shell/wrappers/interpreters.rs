//! Interpreters handed code (`python3 -c`, `perl -e`, `node -e`, code on standard input): code
//! that names a remote program or a library that reaches other machines asks.

use super::Next;
use crate::shell::catalog::ShellCatalog;
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
        || REMOTE_LIBRARIES[..REMOTE_LIBRARIES.len() - GENERIC_RUNNERS]
            .iter()
            .any(|l| lower.contains(l))
}

/// How many entries at the end of [`REMOTE_LIBRARIES`] only start programs, which matters
/// only when the program is a remote one.
const GENERIC_RUNNERS: usize = 5;

/// Libraries that code handed to an interpreter would use to reach another machine, then
/// the calls that start programs.
const REMOTE_LIBRARIES: &[&str] = &[
    "paramiko",
    "fabric",
    "netmiko",
    "asyncssh",
    "pexpect",
    "pxssh",
    "telnetlib",
    "winrm",
    "pypsrp",
    "pssh",
    "impacket",
    "smbprotocol",
    "libvirt",
    "pyvmomi",
    "net::ssh",
    "net::openssh",
    "net::telnet",
    "ssh2",
    "node-ssh",
    "subprocess",
    "child_process",
    "system(",
    "exec(",
    "popen",
];

/// `python3 -c CODE`, `perl -e CODE`, `node -e CODE`, or code on standard input: code that
/// names a remote program or a library that reaches other machines asks; which machine it
/// reaches is not read.
pub(super) fn interpreter(catalog: &ShellCatalog, name: &str, args: &[Arg], stdin: &Stdin) -> Next {
    let mut code: Vec<&Arg> = Vec::new();
    for (i, arg) in args.iter().enumerate().skip(1) {
        let text = arg.text();
        // `-c`, `-e`, `-pe`, `-lne`, `--eval`, `--print`: the code is the next word.
        let short_code = text.starts_with('-')
            && !text.starts_with("--")
            && text.ends_with(['c', 'e', 'E', 'r', 'p']);
        if short_code || matches!(text, "--eval" | "--print") {
            code.extend(args.get(i + 1));
        }
    }
    if let Stdin::Text(body) = stdin {
        code.push(body);
    }
    // `… | python3`: the code is what the pipe carries, which is not read as that language.
    let runs_a_file = args[1..].iter().any(|a| !a.text().starts_with('-'));
    if *stdin == Stdin::Pipe && code.is_empty() && !runs_a_file {
        return Next::Ask(format!(
            "`{name}` runs code read from a pipe, which is not read here"
        ));
    }
    let reaches = |code: &Arg| {
        let lower = code.raw.to_ascii_lowercase();
        let remote_program = catalog.names_a_program(&code.raw).is_some();
        let library = REMOTE_LIBRARIES
            .iter()
            .find(|l| lower.contains(*l))
            .copied();
        let runner = REMOTE_LIBRARIES[REMOTE_LIBRARIES.len() - GENERIC_RUNNERS..]
            .iter()
            .any(|r| library == Some(*r));
        // Starting a program only matters when it is a remote one.
        if runner || library.is_none() {
            remote_program
        } else {
            true
        }
    };
    if code.iter().any(|c| reaches(c)) {
        Next::Ask(format!(
            "`{name}` runs code that can reach another machine, and which one is not read"
        ))
    } else {
        Next::Nothing
    }
}
