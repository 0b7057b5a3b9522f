//! Claude Code: the primary host. Its hook protocol lives in `protocol`, its settings files
//! (where `rewind install` writes, what `doctor` reads back) in [`settings`], the settings an
//! MDM delivers in [`mdm`].

pub mod mdm;
pub(crate) mod protocol;
pub mod settings;
