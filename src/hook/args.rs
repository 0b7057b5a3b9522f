//! The hook's command line, read with `lexopt` rather than the whole command-line parser:
//! the hook starts on every tool call, and `install` writes one fixed shape, `[--config
//! FILE] hook [--host HOST] [--managed]`. That shape (and only it) is read here; anything
//! else is left to the whole command line (`rewind`), or refused (`rewind-hook`). A test
//! holds this reading equal to the whole command line's on every shape it accepts.

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::Arg;

use crate::host::Host;

/// What `rewind hook` was asked to do.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HookArgs {
    pub config: Option<PathBuf>,
    pub host: Option<Host>,
    pub managed: bool,
}

impl HookArgs {
    /// `args` (the program name first) when they are exactly the hook's shape: the word
    /// `hook` once, `--config FILE` before or after it, `--host HOST` and `--managed` after
    /// it, each at most once, `--option=value` or `--option value`. `None` otherwise.
    pub fn parse(args: &[OsString]) -> Option<HookArgs> {
        // lexopt takes `--` silently as the end of the options; the shape has none.
        if args.iter().skip(1).any(|word| word == "--") {
            return None;
        }
        let mut parser = lexopt::Parser::from_iter(args.iter().cloned());
        let mut parsed = HookArgs::default();
        let (mut seen_hook, mut seen_config, mut seen_host) = (false, false, false);
        // An error (a value given to `--managed`) is a shape the hook does not read.
        while let Some(arg) = parser.next().ok()? {
            match arg {
                Arg::Value(word) if word == "hook" && !seen_hook => seen_hook = true,
                Arg::Long("config") if !seen_config => {
                    seen_config = true;
                    let file = value(&mut parser).filter(|file| !file.is_empty())?;
                    parsed.config = Some(PathBuf::from(file));
                }
                Arg::Long("host") if seen_hook && !seen_host => {
                    seen_host = true;
                    let name = value(&mut parser)?;
                    parsed.host = Some(Host::ALL.into_iter().find(|h| h.name() == name)?);
                }
                Arg::Long("managed") if seen_hook && !parsed.managed => parsed.managed = true,
                _ => return None,
            }
        }
        seen_hook.then_some(parsed)
    }
}

/// The value of the option just read, as text: `--option=value` or the next word. A next
/// word that looks like an option is the parser's error, not a value.
fn value(parser: &mut lexopt::Parser) -> Option<String> {
    match parser.optional_value() {
        Some(inline) => inline.into_string().ok(),
        None => parser
            .value()
            .ok()?
            .into_string()
            .ok()
            .filter(|word| !word.starts_with('-')),
    }
}

#[cfg(test)]
mod tests {
    use super::HookArgs;

    fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
        args.iter().map(std::ffi::OsString::from).collect()
    }

    /// Every shape the hook reads gives what the whole command line gives; every shape it
    /// leaves alone is one the whole command line refuses, helps with or runs elsewhere.
    #[test]
    fn the_hook_reading_agrees_with_the_whole_command_line() {
        use crate::cli::{Cli, Command};
        for args in [
            &["rewind", "hook"][..],
            &["rewind", "hook", "--host", "codex"],
            &["rewind", "hook", "--host=gemini", "--config", "/etc/r.toml"],
            &["rewind", "hook", "--config=c.toml"],
            &[
                "rewind",
                "--config",
                "c.toml",
                "hook",
                "--host",
                "claude-code",
            ],
            &["rewind", "--config=/etc/r.toml", "hook", "--host", "cursor"],
            &[
                "rewind",
                "--config",
                "/etc/rewind/config.toml",
                "hook",
                "--host",
                "copilot",
                "--managed",
            ],
            &["rewind", "hook", "--managed", "--host", "codex"],
        ] {
            let fast = HookArgs::parse(&os(args)).expect("the hook's reading accepts it");
            let whole = <Cli as clap::Parser>::try_parse_from(args).expect("valid");
            let Command::Hook(hook) = whole.command else {
                panic!("{args:?} is a hook command line");
            };
            let whole = HookArgs {
                config: whole.global.config,
                host: hook.host,
                managed: hook.managed,
            };
            assert_eq!(fast, whole, "{args:?}");
        }
        for args in [
            &["rewind", "hook", "--help"][..],
            &["rewind", "hook", "-h"],
            &["rewind", "hook", "--host", "vscode"],
            &["rewind", "hook", "--host"],
            &["rewind", "hook", "--host", "--managed"],
            &["rewind", "hook", "--host", "codex", "--host", "gemini"],
            &["rewind", "hook", "--managed=yes"],
            &["rewind", "hook", "extra"],
            &["rewind", "hook", "hook"],
            &["rewind", "hook", "--version"],
            &["rewind", "--host", "codex", "hook"],
            &["rewind", "hook", "--config"],
            &["rewind", "hook", "--config="],
            &["rewind", "check", "mcp__ssh__exec"],
            &["rewind"],
        ] {
            assert_eq!(HookArgs::parse(&os(args)), None, "{args:?}");
            let whole = <Cli as clap::Parser>::try_parse_from(args);
            assert!(
                whole
                    .as_ref()
                    .map_or(true, |cli| !matches!(cli.command, Command::Hook(_))),
                "{args:?}: the whole command line reads a hook call the fast reading misses"
            );
        }
    }

    /// `--` ends the options for a parser, but the hook's shape has none: a line with it is
    /// the whole command line's to read.
    #[test]
    fn a_double_dash_is_not_the_hooks_shape() {
        for args in [
            &["rewind", "hook", "--"][..],
            &["rewind", "--", "hook"],
            &["rewind", "hook", "--", "--managed"],
        ] {
            assert_eq!(HookArgs::parse(&os(args)), None, "{args:?}");
        }
    }

    #[test]
    fn a_word_that_is_not_text_is_left_to_the_whole_command_line() {
        let mut args = os(&["rewind", "hook", "--config"]);
        args.push(crate::platform::not_text());
        assert_eq!(HookArgs::parse(&args), None);
    }
}
