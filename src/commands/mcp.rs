//! `rewind mcp`: runs the `rewind-mcp` server binary in this process's place, so that the MCP
//! SDK is never linked into `rewind` itself (see [`crate::mcp`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::cli::McpArgs;

/// The server binary's name.
const SERVER: &str = "rewind-mcp";

/// Where `rewind-mcp` is: beside this binary (as `cargo install` puts it), else on `PATH`.
fn server_path() -> anyhow::Result<PathBuf> {
    let beside = std::env::current_exe()
        .context("cannot tell where the rewind binary is")?
        .with_file_name(SERVER);
    if beside.is_file() {
        return Ok(beside);
    }
    let on_path = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(SERVER))
        .find(|p| p.is_file());
    match on_path {
        Some(path) => Ok(path),
        None => bail!(
            "`rewind mcp` runs the {SERVER} binary, which is installed beside rewind \
             (`cargo install --path .` installs rewind, rewind-hook and rewind-mcp); there is none at {} nor on PATH",
            beside.display()
        ),
    }
}

/// `rewind mcp`: becomes `rewind-mcp` with the same configuration and options.
pub fn run_server(config: Option<&Path>, args: &McpArgs) -> anyhow::Result<()> {
    let server = server_path()?;
    let mut command = Command::new(&server);
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    command.arg("--plan-ttl").arg(args.plan_ttl.to_string());
    // On Unix it only returns on failure: stdin and stdout are the server's from here on.
    crate::platform::replace_process(&mut command)
        .with_context(|| format!("cannot run {}", server.display()))
}
