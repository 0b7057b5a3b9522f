//! Claude Code: the primary host. Its hook protocol lives in [`protocol`].

pub mod protocol;
