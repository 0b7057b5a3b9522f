//! Claude Code: its settings files.

pub mod settings;
