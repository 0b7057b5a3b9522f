//! Google Gemini CLI.

pub mod protocol;
pub mod settings;
