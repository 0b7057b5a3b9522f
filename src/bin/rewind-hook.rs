//! `rewind-hook`: `rewind hook` alone, the binary `install` writes into the hosts' settings.
//! The hook starts on every tool call, and this binary links only what the hook runs (no
//! command-line parser, simulator, certificate tools or operator commands, and no ZVM client,
//! HTTP or TLS: a call that needs checkpoints has `rewind` beside this binary take them), so
//! each start maps, relocates and touches less.

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    match rewind::hook::HookArgs::parse(&args) {
        Some(hook) => rewind::hook::run(&hook, rewind::hook::Direct::BESIDE),
        None => rewind::hook::usage_error("rewind-hook"),
    }
}
