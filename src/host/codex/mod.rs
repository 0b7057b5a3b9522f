//! OpenAI Codex CLI.

pub mod protocol;
pub mod settings;
