//! The `rewind` binary: parse the command line, hand it to the library, return its exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    rewind::run(rewind::cli::Cli::from_env())
}
