//! `rewind`: a pre-tool-use hook that pins a Zerto tagged checkpoint before an AI agent
//! changes a virtual machine, and the operator's tools to restore files from it.
//!
//! Where things live:
//! - [`hook`]: `rewind hook`, the host's pre-tool-use call: stdin in, one decision out, always
//!   in time (exit 0 with JSON, or exit 2 with one stderr line; never anything else). It is
//!   also the whole of the `rewind-hook` binary, which links nothing else and is what
//!   `install` writes into the hosts' settings; when a call needs checkpoints and no broker is
//!   configured, `rewind-hook` has `rewind` beside it take them (`guard::Direct`), so no ZVM
//!   client, HTTP or TLS code starts with every tool call.
//! - [`host`]: each agent host's dialect: its stdin as one neutral `ToolCall`, one neutral
//!   decision back in its words. Nothing past it knows which host is calling.
//! - `classify`: a neutral call, the configuration and the catalogs to a plan (the answer, or
//!   the exact VMs to guard); no I/O of its own: it reads through a lookup it is handed and
//!   returns what to remember, so `rewind check` shares it without side effects.
//! - `decision`: the decision table, pure: every answer is a `Case` through one `decide`.
//! - [`catalog`]: which tools change VMs and which argument names the VM.
//! - [`targets`]: which VMs a call reaches (host patterns), or why that cannot be known;
//!   [`inventory`]: the machines rewind protects, kept locally for the shell analysis.
//! - `guard`: a tagged checkpoint on every VPG of the call's VMs, confirmed as listed, under a
//!   deadline; `guard::protect`, the one mutating path of the hook, `rewind mcp`, `rewind guard`
//!   and the broker (the local ZVM client or the broker, chosen there once); `progress` shows a
//!   running guard's phases to a person or an MCP client.
//! - [`zvm`]: every Zerto REST call, the one HTTP agent, login and the shared token cache.
//! - `selfguard`: calls that would undo rewind itself (its configuration, catalogs, hook
//!   entries, the ZVM's own address) are asked about, whatever tool carries them.
//! - `recover`: File Level Restore of a guest file, always unmounted.
//! - `vmrestore`: `rewind restore-vm`, a whole VM back to a checkpoint (journal VM restore
//!   with an explicit commit or rollback), or previewed in a failover test.
//! - [`mcp`]: `rewind mcp`, the same operations as MCP tools over stdio, served by the
//!   `rewind-mcp` binary so that its SDK and runtime stay out of the hook's binary.
//! - `broker`: `rewind broker`, the one process holding the ZVM credentials, the token cache
//!   and the audit trail, for the hook and the operators over a Unix socket; `platform`: the
//!   operating-system calls it needs (peer credentials, owners and modes).
//! - [`sim`]: the built-in ZVM simulator (tests, demo, anyone without a ZVM).
//! - [`commands`]: the operator's other commands; [`cli`]: the command line.
//! - [`config`], [`audit`], [`tag`], [`deadline`], [`lockfile`], `redact` (secrets
//!   out of every text that leaves the process), [`time`], `console` (the one stdout writer),
//!   `glob` (the catalogs' `*` and `?` patterns):
//!   the pieces they share.
//!
//! Exit codes (`exit`): `hook` exits 0 (a decision on stdout) or 2 (blocked, one line on
//! stderr); the other commands exit 0 on success, 1 on failure (the reason on stderr), 2 on a
//! usage error; `restore-vm` also 3 (refused, nothing started) and 4 (rolled back).

pub mod audit;
pub(crate) mod broker;
pub mod catalog;
pub(crate) mod classify;
pub mod cli;
pub mod commands;
pub mod config;
pub(crate) mod console;
pub mod deadline;
pub(crate) mod decision;
pub(crate) mod exit;
pub(crate) mod glob;
pub(crate) mod guard;
pub mod hook;
pub mod host;
pub mod inventory;
pub mod lockfile;
pub mod mcp;
pub(crate) mod platform;
pub(crate) mod progress;
pub(crate) mod recover;
pub(crate) mod redact;
pub(crate) mod scan;
pub(crate) mod selfguard;
pub(crate) mod sessions;
pub mod shell;
pub mod sim;
pub(crate) mod suggest;
pub mod tag;
pub mod targets;
pub mod time;
pub(crate) mod vmrestore;
pub mod zvm;

use std::process::ExitCode;

use cli::{CatalogCommand, Cli, Command};

/// Runs one command and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let config = cli.global.config.as_deref();
    match cli.command {
        Command::Hook(args) => hook::run(
            &hook::HookArgs {
                config: config.map(std::path::Path::to_path_buf),
                host: args.host,
                managed: args.managed,
            },
            hook::Direct::HERE,
        ),
        Command::HookGuard(args) => report(guard::serve(config, args.managed)),
        Command::Check(args) => report(commands::catalog::check(config, &args)),
        Command::Find(args) => report(match broker::commands::brokered(config) {
            Some(brokered) => broker::commands::find(&brokered, &args),
            None => commands::zerto::find(config, &args),
        }),
        Command::Vms(args) => report(match broker::commands::brokered(config) {
            Some(brokered) => broker::commands::vms(&brokered, &args),
            None => commands::zerto::vms(config, &args),
        }),
        Command::Checkpoints(args) => report(commands::zerto::checkpoints(config, &args)),
        Command::Guard(args) => report(commands::zerto::guard(config, &args)),
        Command::Mcp(args) => report(commands::mcp::run_server(config, &args)),
        Command::Install(args) => report(commands::install::install(config, &args)),
        Command::Uninstall(args) => report(commands::install::uninstall(&args)),
        Command::Doctor(args) => report(commands::doctor::doctor(config, &args)),
        Command::Trust(args) => report(commands::trust::trust(config, &args)),
        Command::Catalog(CatalogCommand::Lint) => report(commands::catalog::lint(config)),
        Command::Catalog(CatalogCommand::List { json }) => {
            report(commands::catalog::list(config, json))
        }
        Command::Catalog(CatalogCommand::Add(args)) => {
            report(commands::catalog::add(config, &args))
        }
        Command::Catalog(CatalogCommand::Scan(args)) => {
            report(commands::catalog::scan(config, &args))
        }
        Command::Log(args) => report(commands::log::log(config, &args)),
        Command::Selftest(args) => report(commands::selftest::selftest(config, &args)),
        Command::Sim(args) => report(sim::serve(config, &args)),
        Command::Broker(args) => report(broker::serve(config, &args.socket)),
        Command::Recover(args) => report(match broker::commands::brokered(config) {
            Some(brokered) => broker::commands::recover(&brokered, &args),
            None => recover::recover(config, &args),
        }),
        Command::Flr(command) => report(match broker::commands::brokered(config) {
            Some(brokered) => broker::commands::flr(&brokered, &command),
            None => recover::flr(config, &command),
        }),
        Command::RestoreVm(args) => match broker::commands::brokered(config) {
            Some(brokered) => broker::commands::restore_vm(&brokered, &args),
            None => vmrestore::restore_vm(config, &args),
        },
        Command::Demo(args) => report(commands::demo::demo(&args)),
        Command::Completions(args) => report(commands::completions(args.shell)),
        Command::Man(args) => report(commands::man_pages(&args.out)),
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

/// Prints an operator-facing error with its cause chain; 0 on success, else the code its
/// cause stands for ([`exit::of_error`]). A reader that went away (`rewind log | head`) is no
/// failure of the command: it ends quietly, as `cat` or `grep` would, instead of printing
/// "Broken pipe" under the lines it wanted.
fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => exit::code(exit::OK),
        Err(err) if console::reader_went_away(&err) => exit::code(exit::OK),
        Err(err) => {
            console::err(format!("error: {err:#}"));
            exit::code(exit::of_error(&err))
        }
    }
}
