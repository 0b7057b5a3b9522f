//! `rewind`: a pre-tool-use hook that pins a Zerto tagged checkpoint before an AI agent
//! changes a virtual machine, and the operator's tools to restore files from it.
//!
//! Where things live:
//! - [`sim`]: the built-in ZVM simulator (tests, demo, anyone without a ZVM).
//! - [`time`]: UTC timestamps as Zerto writes them.

pub mod cli;
pub mod config;
pub mod deadline;
pub mod guard;
pub mod lockfile;
pub mod secret;
pub mod sim;
pub mod tag;
pub mod time;
pub mod zvm;

use std::process::ExitCode;

use cli::{Cli, Command};

/// Runs one command and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Sim(args) => report(sim::serve(&args)),
        _ => report(Err(anyhow::anyhow!("this command is not built yet"))),
    }
}

/// Lower-case hexadecimal of some bytes (hashes, cache keys).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .map(char::from)
        .collect()
}

/// Prints an operator-facing error with its cause chain; 0 on success, 1 on failure.
fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
