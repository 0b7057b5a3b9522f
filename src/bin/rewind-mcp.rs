//! `rewind-mcp`: the MCP server `rewind mcp` runs. A binary of its own so that the MCP SDK and
//! its async runtime are not even linked into `rewind`, whose hook starts on every tool call.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    rewind::mcp::main(&rewind::mcp::ServerCli::parse())
}
