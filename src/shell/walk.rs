//! The walk of one analysis: the limits on commands, nesting, text and time that every nested
//! text counts against, and the parse of a text in its dialect into simple commands.

use std::time::Instant;

use super::dialect::Dialect;
use super::types::{Cmd, Unknown};
use super::{posix, powershell};

/// Most simple commands one call may hold before the analysis gives up (→ ask).
const MAX_COMMANDS: usize = 2000;
/// Deepest nesting (`bash -c "$(…)"`, remote commands inside remote commands) followed.
const MAX_DEPTH: usize = 16;
/// Deepest nesting of brackets and compound commands handed to a parser (it recurses per
/// level); deeper text asks.
const MAX_NESTING: usize = 48;
/// Longest command text analysed; longer text that mentions a remote program → ask.
const MAX_TEXT: usize = 256 * 1024;

/// Counters and limits shared by one analysis, through every nested text.
pub(crate) struct Walk {
    pub(crate) commands: Vec<Cmd>,
    /// Loop variables bound while a literal `for` body is walked.
    pub(crate) bindings: Vec<(String, String)>,
    depth: usize,
    count: usize,
    until: Option<Instant>,
}

impl Walk {
    pub(super) fn new(until: Option<Instant>) -> Walk {
        Walk {
            commands: Vec::new(),
            bindings: Vec::new(),
            depth: 0,
            count: 0,
            until,
        }
    }

    pub(crate) fn enter(&mut self) -> Result<(), Unknown> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unknown(format!(
                "the command nests deeper than {MAX_DEPTH} levels"
            )));
        }
        self.check_time()
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(crate) fn count(&mut self) -> Result<(), Unknown> {
        self.count += 1;
        if self.count > MAX_COMMANDS {
            return Err(Unknown(format!(
                "the command holds more than {MAX_COMMANDS} simple commands"
            )));
        }
        self.check_time()
    }

    fn check_time(&self) -> Result<(), Unknown> {
        match self.until {
            Some(until) if Instant::now() >= until => Err(Unknown(String::from(
                "the time to analyse the command ran out",
            ))),
            _ => Ok(()),
        }
    }

    /// Parses `text` in `dialect` and returns its simple commands.
    pub(crate) fn parse(&mut self, text: &str, dialect: Dialect) -> Result<Vec<Cmd>, Unknown> {
        if text.len() > MAX_TEXT {
            return Err(Unknown(format!(
                "the command is longer than {} KiB",
                MAX_TEXT / 1024
            )));
        }
        if nesting_depth(text, dialect) > MAX_NESTING {
            return Err(Unknown(format!(
                "the command nests deeper than {MAX_NESTING} levels"
            )));
        }
        let outer = std::mem::take(&mut self.commands);
        let result = match dialect {
            Dialect::Posix => posix::walk_text(text, self),
            Dialect::PowerShell => powershell::walk_text(text, self),
        };
        let commands = std::mem::replace(&mut self.commands, outer);
        result.map(|()| commands)
    }
}

/// An upper bound on how deeply `text` nests, quotes ignored: brackets, and in POSIX text
/// the compound commands (`if`, `while`, `until`, `for`, `select`, `case`) that the parser
/// recurses into. Checked before parsing, so no input can take a parser's recursion to the
/// end of the stack; past [`MAX_NESTING`] the command asks.
fn nesting_depth(text: &str, dialect: Dialect) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut word = String::new();
    let keyword = |word: &mut String, depth: &mut usize, deepest: &mut usize| {
        if dialect == Dialect::Posix {
            match word.as_str() {
                "if" | "while" | "until" | "for" | "select" | "coproc" | "function" => {
                    *depth += 1;
                    *deepest = (*deepest).max(*depth);
                }
                // Each of a case's patterns ends in a `)` that takes one level off again.
                "case" => {
                    *depth += 2;
                    *deepest = (*deepest).max(*depth);
                }
                "fi" | "done" | "esac" => *depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        word.clear();
    };
    for c in text.chars() {
        match c {
            '(' | '{' | '[' => {
                keyword(&mut word, &mut depth, &mut deepest);
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | '}' | ']' => {
                keyword(&mut word, &mut depth, &mut deepest);
                depth = depth.saturating_sub(1);
            }
            c if c.is_alphanumeric() || c == '_' || c == '-' => word.push(c),
            _ => keyword(&mut word, &mut depth, &mut deepest),
        }
    }
    keyword(&mut word, &mut depth, &mut deepest);
    deepest
}
