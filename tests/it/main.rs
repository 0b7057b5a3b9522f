//! The single integration test binary: one module per area.

mod agents;
mod appliance;
mod broker;
mod broker_attacks;
mod catalog;
mod claude;
mod config;
mod corpus;

mod demo;
mod doctor;
mod e2e;
mod e2e_agents;
mod e2e_agents_shell;
mod e2e_host;
mod e2e_mcp;
mod e2e_plugin;
mod e2e_shell;
mod hook;
mod hook_hosts;
mod hostile;
mod install;
mod json;
mod log;
mod managed;
mod mcp;
mod net;
mod props;
mod recover;
mod scan;
mod selfguard;
mod servers;
mod support;
mod syslog;
mod tls;
mod zerto;
