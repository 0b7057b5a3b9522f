//! `rewind`: a pre-tool-use hook that pins a Zerto tagged checkpoint before an AI agent
//! changes a virtual machine, and the operator's tools to restore files from it.
//!
//! Where things live:
//! - [`sim`]: the built-in ZVM simulator (tests, demo, anyone without a ZVM).
//! - [`time`]: UTC timestamps as Zerto writes them.

pub mod cli;
pub mod sim;
pub mod time;

use std::process::ExitCode;

use cli::{Cli, Command};

/// Runs one command and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Sim(args) => report(sim::serve(&args)),
        _ => report(Err(anyhow::anyhow!("this command is not built yet"))),
    }
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
