//! The agent hosts: what is particular to each one lives under its own module.

pub mod claude_code;
