//! Cursor (the IDE agent and `cursor-agent`).

pub mod protocol;
pub mod settings;
