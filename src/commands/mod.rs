//! The operator's commands (everything but `hook`, `sim` and `recover`): they print for a
//! person on stdout and return errors for `run` to report.

pub mod catalog;
pub mod demo;
pub mod doctor;
pub mod install;
pub mod log;
pub mod zerto;

use std::fmt::Display;

use crate::config::Config;
use crate::zvm::Client;

/// Prints one line of a command's output for a person.
pub fn say(line: impl Display) {
    crate::console::say(line);
}

/// Says the configuration's warnings on stderr, as every run must.
pub fn warn_config(config: &Config) {
    for warning in &config.warnings {
        crate::console::err(format!("warning: {warning}"));
    }
}

/// A ZVM client from the configuration.
pub fn client(config: &Config) -> anyhow::Result<Client> {
    let zvm = config.require_zvm()?;
    Ok(Client::new(zvm, &crate::config::cache_dir())?)
}

/// Replaces control characters in text that came from elsewhere (the ZVM, a tool call)
/// before it reaches a terminal.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}
