//! `rewind broker`: the ZVM credentials, the token cache and the audit trail out of the
//! agent's reach.
//!
//! Every credential the hook can read as the agent's user, the agent can read too. The
//! broker runs under its own account and alone holds them; the hook, `rewind mcp` and the
//! operator's commands, when their configuration names `[broker] socket`, ask it over a
//! Unix socket and read no password, token or ZVM address themselves.
//!
//! - [`protocol`]: the versioned JSON lines on the socket.
//! - `server`: the listener, peer identification (`SO_PEERCRED`), authorisation, the trail.
//! - `operations`: what each request does, through the same code as the single-user commands.
//! - [`client`]: one request under the caller's deadline; every failure names the socket.
//! - [`commands`]: `rewind recover`, `rewind flr` and `rewind find` through the broker (`rewind
//!   guard`, `rewind checkpoints`, the hook and `rewind mcp` choose it where they ask Zerto:
//!   `crate::guard::protect`, `crate::commands::zerto`).

pub(crate) mod client;
pub(crate) mod commands;
mod operations;
pub(crate) mod protocol;
mod restore;
mod server;

pub(crate) use server::serve;
