//! The single integration test binary: one module per area.
//!
//! Unix only: the tests stand in for ssh, hosts and services with `sh` scripts, plant links,
//! set modes and owners, and drive the broker's Unix socket. On Windows the library's unit
//! tests run (`cargo test --lib`); this is the one place outside `src/platform/` that names
//! an OS, since an integration test cannot reach the library's private platform module.
#![cfg(unix)]

mod agents;
mod appliance;
mod broker;
mod broker_attacks;
mod catalog;
mod claude;
mod config;
mod corpus;

mod demo;
mod docs;
mod doctor;
mod e2e;
mod e2e_agents;
mod e2e_agents_shell;
mod e2e_host;
mod e2e_mcp;
mod e2e_plugin;
mod e2e_shell;
mod exit_codes;
mod hook;
mod hook_hosts;
mod hook_sessions;
mod hook_streams;
mod hostile;
mod install;
mod json;
mod log;
mod managed;
mod mcp;
mod net;
mod package;
mod props;
mod quickstart;
mod recover;
mod restore_vm;
mod scan;
mod secrets;
mod selfguard;
mod selfguard_corpus;
mod servers;
mod ssh_config;
mod support;
mod syslog;
mod tls;
mod zerto;
