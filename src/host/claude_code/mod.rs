//! Claude Code: the primary host. Its hook protocol lives in [`protocol`].

pub(crate) mod protocol;
