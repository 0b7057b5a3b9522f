//! Google Gemini CLI.

pub mod protocol;
