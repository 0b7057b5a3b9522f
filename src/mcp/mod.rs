//! `rewind mcp`: the explicit tools (find a VM, list and take checkpoints, plan and run a file
//! restore, list and end FLR sessions) as an MCP server over stdio. A convenience for agents
//! that plan with checkpoints and for hosts without hooks; the hook stays the gate.
//!
//! The server is its own binary, `rewind-mcp`, which `rewind mcp` runs in its place: the MCP
//! SDK and its async runtime (one thread, for the protocol) are then linked neither into
//! `rewind` nor into `rewind-hook`, the binary every hook call starts. Every ZVM call runs on a blocking thread through
//! the same library functions the command line uses; with `[broker] socket`, every tool asks the
//! broker instead and reads no password, token or ZVM address (`checkpoint_vm` through
//! `guard::protect`, like the hook). stdout carries the protocol and nothing else; diagnostics
//! go to stderr.

mod calls;
mod plans;
mod restore;
mod server;
pub mod tools;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use rmcp::ServiceExt as _;

use self::server::Server;
use crate::cli::McpArgs;

/// The command line of `rewind-mcp` (what `rewind mcp` passes on).
#[derive(Debug, Parser)]
#[command(
    name = "rewind-mcp",
    version,
    about = "The MCP server of `rewind mcp`, on stdio."
)]
pub struct ServerCli {
    /// Configuration file [default: $REWIND_CONFIG, ./.rewind.toml, ~/.config/rewind/config.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub args: McpArgs,
}

/// `rewind-mcp`: serves, then exits 0, or 1 with the reason on stderr.
pub fn main(cli: &ServerCli) -> ExitCode {
    match serve(cli.config.as_deref(), &cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::console::err(format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// Longest the server waits, after the client leaves, for running calls to clean up (an FLR
/// session to be unmounted).
const CLOSING_GRACE: Duration = Duration::from_secs(150);

/// Serves MCP on stdin/stdout until the client closes it.
pub fn serve(config_path: Option<&Path>, args: &McpArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    let server = Server::new(config_path.map(Path::to_path_buf), args.plan_ttl.into());
    let running = server.running();
    let outcome = runtime.block_on(async move {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP client did not initialize")?;
        service.waiting().await.context("the MCP server stopped")?;
        anyhow::Ok(())
    });
    // The client left: stop what still runs (a restore unmounts), then let it finish.
    Server::interrupt_all(&running);
    runtime.shutdown_timeout(CLOSING_GRACE);
    outcome
}
