//! `rewind mcp`: the explicit tools (find a VM, list and take checkpoints, plan and run a file
//! restore, list and end FLR sessions) as an MCP server over stdio. A convenience for agents
//! that plan with checkpoints and for hosts without hooks; the hook stays the gate.
//!
//! Only this command starts an async runtime (one thread, for the protocol); every ZVM call
//! runs on a blocking thread through the same library functions the command line uses.
//! stdout carries the protocol and nothing else; diagnostics go to stderr.

mod calls;
mod plans;
mod server;
pub mod tools;

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::ServiceExt as _;

use self::server::Server;
use crate::cli::McpArgs;

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
