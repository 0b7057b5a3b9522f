//! GitHub Copilot CLI (and the Copilot cloud agent, which reads the same hook files).

pub mod protocol;
pub mod settings;
