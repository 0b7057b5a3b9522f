//! The `rewind` binary: parse the command line, hand it to the library, return its exit code.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    // `rewind hook` without building the whole command line: it runs on every tool call.
    if let Some(hook) = rewind::hook::HookArgs::parse(&args) {
        return rewind::hook::run(&hook, rewind::hook::Direct::HERE);
    }
    rewind::run(rewind::cli::Cli::parse_from(args))
}
