//! OpenAI Codex CLI.

pub mod protocol;
