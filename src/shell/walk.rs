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
    /// Functions the text defines: their bodies are walked where they are defined, so a
    /// call of one runs nothing the walk has not seen.
    pub(crate) functions: Vec<String>,
    depth: usize,
    count: usize,
    until: Option<Instant>,
}

impl Walk {
    pub(super) fn new(until: Option<Instant>) -> Walk {
        Walk {
            commands: Vec::new(),
            bindings: Vec::new(),
            functions: Vec::new(),
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
        // A fresh walk's parse of a whole text depends on the text and the dialect alone (the
        // time limit aside): the self-protection check and the analysis of one call read the
        // same command, and the second takes the first's commands and count (handed over, not
        // copied: a third reading of the text parses it again).
        let fresh = self.depth == 0
            && self.count == 0
            && self.bindings.is_empty()
            && self.commands.is_empty()
            && self.functions.is_empty();
        if fresh
            && let Some((commands, count, functions)) =
                LAST_PARSE.with(|last| last.borrow_mut().take(text, dialect))
        {
            self.count = count;
            self.functions = functions;
            return Ok(commands);
        }
        let outer = std::mem::take(&mut self.commands);
        let result = match dialect {
            Dialect::Posix => posix::walk_text(text, self),
            Dialect::PowerShell => powershell::walk_text(text, self),
        };
        let commands = std::mem::replace(&mut self.commands, outer);
        if fresh && result.is_ok() {
            let parsed = Parsed {
                text: text.to_owned(),
                dialect,
                commands: commands.clone(),
                count: self.count,
                functions: self.functions.clone(),
            };
            LAST_PARSE.with(|last| *last.borrow_mut() = LastParse(Some(parsed)));
        }
        result.map(|()| commands)
    }
}

/// A whole text a fresh walk parsed, with what it found and counted.
struct Parsed {
    text: String,
    dialect: Dialect,
    commands: Vec<Cmd>,
    count: usize,
    functions: Vec<String>,
}

/// The last whole text parsed on this thread.
#[derive(Default)]
struct LastParse(Option<Parsed>);

impl LastParse {
    /// Whether the last whole text parsed is `text` in `dialect`.
    fn holds(&self, text: &str, dialect: Dialect) -> bool {
        self.0
            .as_ref()
            .is_some_and(|p| p.dialect == dialect && p.text == text)
    }

    /// The commands and count of `text` in `dialect` if it is the last whole text parsed,
    /// taken out.
    fn take(&mut self, text: &str, dialect: Dialect) -> Option<(Vec<Cmd>, usize, Vec<String>)> {
        if !self.holds(text, dialect) {
            return None;
        }
        self.0.take().map(|p| (p.commands, p.count, p.functions))
    }
}

thread_local! {
    static LAST_PARSE: std::cell::RefCell<LastParse> = std::cell::RefCell::default();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str, dialect: Dialect) -> (String, usize) {
        let mut walk = Walk::new(None);
        let commands = walk.parse(text, dialect).expect("parsed");
        (format!("{commands:?}"), walk.count)
    }

    /// A whole text parsed again (the self-protection check, then the analysis) gives the
    /// same commands and the same count as a parse of its own, and another text or dialect
    /// is never answered with the last one's commands.
    #[test]
    fn a_text_parsed_again_is_what_a_parse_of_its_own_gives() {
        let texts = [
            (
                "cd /src && cargo test 2>&1 | tail -n 40 && git status",
                Dialect::Posix,
            ),
            ("for h in a b; do ssh $h reboot; done", Dialect::Posix),
            ("x=ss; ${x}h web01 'uptime'", Dialect::Posix),
            (
                "Get-Service | Where-Object Status -eq Running",
                Dialect::PowerShell,
            ),
            ("ssh web01 uptime", Dialect::Posix),
            ("ssh web01 uptime", Dialect::PowerShell),
        ];
        for (text, dialect) in texts {
            LAST_PARSE.with(|last| *last.borrow_mut() = LastParse::default());
            let alone = parsed(text, dialect);
            assert!(
                LAST_PARSE.with(|last| last.borrow().holds(text, dialect)),
                "{text}"
            );
            assert_eq!(parsed(text, dialect), alone, "{text}");
        }
        // The last parse was PowerShell's: the POSIX reading of the same text is its own.
        LAST_PARSE.with(|last| *last.borrow_mut() = LastParse::default());
        let posix = parsed("ssh web01 uptime", Dialect::Posix);
        parsed("ssh web01 uptime", Dialect::PowerShell);
        assert_eq!(parsed("ssh web01 uptime", Dialect::Posix), posix);
        // A walk already inside a text (a nested parse) never takes the last whole text's.
        let mut inside = Walk::new(None);
        inside.count = 1;
        inside
            .parse("ssh web01 uptime", Dialect::Posix)
            .expect("parsed");
        assert_eq!(inside.count, 1 + posix.1);
    }
}
