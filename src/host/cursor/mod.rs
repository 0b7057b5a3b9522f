//! Cursor (the IDE agent and `cursor-agent`).

pub mod protocol;
