//! A PowerShell tokenizer good enough for the remoting cmdlets: statements split by `;`,
//! newlines, `|`, `&&` and `||`; words from barewords, `'…'`, `"…"` (with `$var` and
//! `$(…)` making them dynamic), here-strings, `a,b` lists, `-Name:value` parameters, script
//! blocks (`{…}`, kept whole, their text as the value) and sub-expressions (`(…)`, `$(…)`,
//! `@(…)`, walked as commands of their own since they run). Redirections into files are
//! noted. Not a full parser: what it cannot read is an [`Unknown`].

use super::types::{Arg, Cmd, Stdin, Unknown};
use super::walk::Walk;

/// Parses PowerShell `text` and appends its commands to `walk`.
pub(super) fn walk_text(text: &str, walk: &mut Walk) -> Result<(), Unknown> {
    statements(text, walk, false)
}

/// Parses a sub-expression (`(…)`, `$(…)`, `@(…)`) inside a word, whose commands run as part
/// of the word's.
fn walk_nested(text: &str, walk: &mut Walk) -> Result<(), Unknown> {
    statements(text, walk, true)
}

/// Parses `text`'s statements into `walk`. An assignment is noted as one (`assigned_to`)
/// only where it surely runs when its statement does: never in a sub-expression (`if ($a
/// -and ($t = …))`) nor after `&&` or `||`.
fn statements(text: &str, walk: &mut Walk, nested: bool) -> Result<(), Unknown> {
    walk.enter()?;
    let chars: Vec<char> = text.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        at: 0,
    };
    let mut cmd = Cmd::default();
    let mut assigned = None;
    // Whether the statement runs only when the one before it succeeds or fails.
    let mut chained = nested;
    let mut redirect_next = false;
    loop {
        lexer.skip_blanks();
        let Some(c) = lexer.peek() else { break };
        match c {
            '\n' | ';' => {
                lexer.at += 1;
                finish(&mut cmd, walk, Stdin::Inherited, &mut assigned, chained)?;
                chained = nested;
            }
            '|' if lexer.peek_at(1) == Some('|') => {
                lexer.at += 2;
                finish(&mut cmd, walk, Stdin::Inherited, &mut assigned, chained)?;
                chained = true;
            }
            '|' => {
                lexer.at += 1;
                cmd.pipe_from = finish(&mut cmd, walk, Stdin::Pipe, &mut assigned, chained)?;
            }
            '&' if lexer.peek_at(1) == Some('&') => {
                lexer.at += 2;
                finish(&mut cmd, walk, Stdin::Inherited, &mut assigned, chained)?;
                chained = true;
            }
            // The call operator (`& ssh …`) or a background job (`… &`).
            '&' => {
                lexer.at += 1;
                if cmd.words.is_empty() {
                    cmd.call = true;
                }
            }
            '#' => lexer.skip_line(),
            '<' if lexer.peek_at(1) == Some('#') => lexer.skip_block_comment()?,
            '>' | '*' | '1'..='6' if lexer.redirection_len().is_some() => {
                let len = lexer.redirection_len().unwrap_or(1);
                let op: String = chars[lexer.at..lexer.at + len].iter().collect();
                lexer.at += len;
                // `2>&1`, `*>&1`: a stream into another stream.
                if op.ends_with('&') {
                    lexer.skip_digits();
                } else {
                    redirect_next = true;
                }
            }
            // `$p=@{…}`, `$n +=1`: an assignment's operator is a word of its own.
            _ if cmd.words.len() == 1
                && cmd.words[0].raw.starts_with(['$', '['])
                && lexer.assignment_len().is_some() =>
            {
                let len = lexer.assignment_len().unwrap_or(1);
                let op: String = chars[lexer.at..lexer.at + len].iter().collect();
                lexer.at += len;
                cmd.words.push(Arg::literal(op));
            }
            _ => {
                let arg = lexer.word(walk, cmd.words.is_empty())?;
                if redirect_next {
                    redirect_next = false;
                    let sink = arg.text().to_ascii_lowercase();
                    if sink != "$null" && sink != "null" {
                        cmd.writes.get_or_insert(arg.raw);
                    }
                } else if cmd.words.is_empty() && arg.raw == "." {
                    // Dot-sourcing calls the script (its content is not seen) in this scope.
                    cmd.call = true;
                } else {
                    cmd.words.push(arg);
                }
            }
        }
    }
    finish(&mut cmd, walk, Stdin::Inherited, &mut assigned, chained)?;
    walk.leave();
    Ok(())
}

/// Ends the current command, and says where the walk's commands hold it (none when it was
/// empty); `next_stdin` is what the next command reads. `assigned` carries the variable an
/// assignment names from a pipeline's first command to its last; `chained`: the statement may
/// not run at all, so its assignment is not noted.
fn finish(
    cmd: &mut Cmd,
    walk: &mut Walk,
    next_stdin: Stdin,
    assigned: &mut Option<String>,
    chained: bool,
) -> Result<Option<usize>, Unknown> {
    let mut done = std::mem::take(cmd);
    let piped = next_stdin == Stdin::Pipe;
    cmd.stdin = next_stdin;
    if done.words.is_empty() && done.writes.is_none() {
        *assigned = None;
        return Ok(None);
    }
    walk.count()?;
    // `$s = New-PSSession …`, `[string]$v = …`: the assignment's right side is the command.
    if done.words.len() > 2
        && done.words[0].raw.starts_with(['$', '['])
        && matches!(
            done.words[1].raw.as_str(),
            "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "??="
        )
    {
        if done.words[1].raw == "=" && !chained {
            *assigned = variable_name(&done.words[0].raw);
        }
        done.words.drain(..2);
    }
    if !piped {
        done.assigned_to = assigned.take();
    }
    // Language keywords: what follows them runs as commands of their own (script blocks
    // are walked by the analysis), so they are not commands.
    if let Some(first) = done.words.first()
        && first.value.as_deref().is_some_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "foreach"
                    | "for"
                    | "while"
                    | "do"
                    | "if"
                    | "elseif"
                    | "else"
                    | "switch"
                    | "try"
                    | "catch"
                    | "finally"
                    | "function"
                    | "filter"
                    | "param"
                    | "begin"
                    | "process"
                    | "end"
                    | "return"
                    | "trap"
                    | "until"
            )
        })
    {
        done.words[0].value = Some(String::from("%keyword"));
    }
    walk.commands.push(done);
    Ok(Some(walk.commands.len() - 1))
}

/// The variable a word names alone (`$s`, `${s}`, `$script:s`, `[string]$s`): lower-case,
/// without `$`, braces or a scope other than the environment's. None for anything more
/// (`$s.Name`, `$h['k']`, `$a,$b`).
pub(crate) fn variable_name(raw: &str) -> Option<String> {
    let mut rest = raw;
    // Type constraints written before the variable: `[string]$s`, `[int[]]$n`.
    while let Some(inner) = rest.strip_prefix('[') {
        let mut depth = 1usize;
        let end = inner.char_indices().find_map(|(at, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at)
        })?;
        rest = &inner[end + 1..];
    }
    let rest = rest.strip_prefix('$')?;
    let name = match rest.strip_prefix('{') {
        Some(braced) => braced.strip_suffix('}')?,
        None => rest,
    };
    let lower = name.to_ascii_lowercase();
    let unscoped = ["script:", "global:", "local:", "private:"]
        .iter()
        .find_map(|scope| lower.strip_prefix(scope))
        .unwrap_or(&lower);
    let plain = !unscoped.is_empty()
        && unscoped
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '?'))
        && !unscoped.ends_with(':');
    plain.then(|| unscoped.to_owned())
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == '`' && matches!(self.peek_at(1), Some('\n' | '\r')) {
                self.at += 2;
            } else if c == ' ' || c == '\t' || c == '\r' {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.at += 1;
        }
    }

    fn skip_digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn skip_block_comment(&mut self) -> Result<(), Unknown> {
        self.at += 2;
        while self.at + 1 < self.chars.len() {
            if self.chars[self.at] == '#' && self.chars[self.at + 1] == '>' {
                self.at += 2;
                return Ok(());
            }
            self.at += 1;
        }
        Err(Unknown::unparsed("a <# comment #> is not closed"))
    }

    /// The length of a redirection operator at the cursor (`>`, `>>`, `2>`, `*>>`, `2>&1`).
    fn redirection_len(&self) -> Option<usize> {
        let mut len = 0;
        if matches!(self.peek(), Some('*' | '1'..='6')) {
            len = 1;
        }
        if self.peek_at(len) != Some('>') {
            return None;
        }
        len += 1;
        if self.peek_at(len) == Some('>') {
            len += 1;
        }
        if self.peek_at(len) == Some('&') {
            len += 1;
        }
        Some(len)
    }

    /// The length of an assignment operator at the cursor (`=`, `+=`, `??=`; not `==`).
    fn assignment_len(&self) -> Option<usize> {
        let len = match (self.peek()?, self.peek_at(1)) {
            ('=', next) => (next != Some('=')).then_some(1)?,
            ('+' | '-' | '*' | '/' | '%', Some('=')) => 2,
            ('?', Some('?')) if self.peek_at(2) == Some('=') => 3,
            _ => return None,
        };
        Some(len)
    }

    /// One argument: adjacent pieces and comma-joined lists form one word. `first`: the
    /// command's first word, which a variable followed by an assignment ends (`$p=@{…}`).
    fn word(&mut self, walk: &mut Walk, first: bool) -> Result<Arg, Unknown> {
        let start = self.at;
        let mut value = Some(String::new());
        while let Some(c) = self.peek() {
            if first
                && self.chars[start] == '$'
                && self.at > start
                && self.assignment_len().is_some()
            {
                break;
            }
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '|' | '&' | ')' | '}' => break,
                '>' if self.at > start => break,
                ',' => {
                    self.at += 1;
                    push(&mut value, ",");
                    self.skip_blanks();
                }
                '\'' => {
                    let text = self.single_quoted()?;
                    push(&mut value, &text);
                }
                '"' => {
                    let (text, dynamic) = self.double_quoted(walk)?;
                    if dynamic {
                        value = None;
                    } else {
                        push(&mut value, &text);
                    }
                }
                '@' if matches!(self.peek_at(1), Some('\'' | '"')) => {
                    let (text, dynamic) = self.here_string(walk)?;
                    if dynamic {
                        value = None;
                    } else {
                        push(&mut value, &text);
                    }
                }
                '{' => {
                    let open = self.at;
                    let inner = self.balanced('{', '}')?;
                    // A script block: its text is the value; it is judged where it is used.
                    if open == start {
                        let raw: String = self.chars[start..self.at].iter().collect();
                        return Ok(Arg {
                            raw,
                            value: Some(inner),
                        });
                    }
                    value = None;
                }
                '(' => {
                    let inner = self.balanced('(', ')')?;
                    walk_nested(&inner, walk)?;
                    value = None;
                }
                '$' | '@' if self.peek_at(1) == Some('(') => {
                    self.at += 1;
                    let inner = self.balanced('(', ')')?;
                    walk_nested(&inner, walk)?;
                    value = None;
                }
                '$' => {
                    let dollar = self.at;
                    self.at += 1;
                    if self.peek() == Some('{') {
                        self.balanced('{', '}')?;
                    } else {
                        while self.peek().is_some_and(|c| {
                            c.is_alphanumeric() || matches!(c, '_' | ':' | '?' | '^' | '$')
                        }) {
                            self.at += 1;
                        }
                    }
                    let name: String = self.chars[start..self.at].iter().collect();
                    if self.at == dollar + 1 {
                        // `\\win01\c$\app`: a `$` that starts no variable is itself.
                        push(&mut value, "$");
                    } else if name.eq_ignore_ascii_case("$null") && self.at - start == 5 {
                        push(&mut value, "$null");
                    } else {
                        value = None;
                    }
                }
                '`' => {
                    self.at += 1;
                    if let Some(next) = self.peek() {
                        self.at += 1;
                        push(&mut value, &next.to_string());
                    }
                }
                _ => {
                    self.at += 1;
                    push(&mut value, &c.to_string());
                }
            }
        }
        if self.at == start {
            // A lone closing bracket: skip it so the scan moves on.
            self.at += 1;
        }
        let raw: String = self.chars[start..self.at].iter().collect();
        Ok(Arg { raw, value })
    }

    fn single_quoted(&mut self) -> Result<String, Unknown> {
        self.at += 1;
        let mut text = String::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            if c == '\'' {
                if self.peek() == Some('\'') {
                    self.at += 1;
                    text.push('\'');
                    continue;
                }
                return Ok(text);
            }
            text.push(c);
        }
        Err(Unknown::unparsed("a quoted string is not closed"))
    }

    /// A double-quoted string: its text, and whether it expands.
    fn double_quoted(&mut self, walk: &mut Walk) -> Result<(String, bool), Unknown> {
        self.at += 1;
        let mut text = String::new();
        let mut dynamic = false;
        while let Some(c) = self.peek() {
            match c {
                '"' if self.peek_at(1) == Some('"') => {
                    self.at += 2;
                    text.push('"');
                }
                '"' => {
                    self.at += 1;
                    return Ok((text, dynamic));
                }
                '`' => {
                    self.at += 1;
                    if let Some(next) = self.peek() {
                        self.at += 1;
                        text.push(next);
                    }
                }
                '$' if self.peek_at(1) == Some('(') => {
                    self.at += 1;
                    let inner = self.balanced('(', ')')?;
                    walk_nested(&inner, walk)?;
                    dynamic = true;
                }
                '$' if self.peek_at(1).is_some_and(|n| {
                    n.is_alphanumeric() || matches!(n, '_' | '{' | '?' | '^' | '$')
                }) =>
                {
                    self.at += 1;
                    dynamic = true;
                }
                _ => {
                    self.at += 1;
                    text.push(c);
                }
            }
        }
        Err(Unknown::unparsed("a quoted string is not closed"))
    }

    fn here_string(&mut self, walk: &mut Walk) -> Result<(String, bool), Unknown> {
        let quote = self.peek_at(1).unwrap_or('\'');
        self.at += 2;
        let mut text = String::new();
        let mut dynamic = false;
        while let Some(c) = self.peek() {
            if c == '\n' && self.peek_at(1) == Some(quote) && self.peek_at(2) == Some('@') {
                self.at += 3;
                return Ok((text.trim_start_matches(['\r', '\n']).to_owned(), dynamic));
            }
            if quote == '"' && c == '$' {
                if self.peek_at(1) == Some('(') {
                    self.at += 1;
                    let inner = self.balanced('(', ')')?;
                    walk_nested(&inner, walk)?;
                }
                dynamic = true;
            }
            self.at += 1;
            text.push(c);
        }
        Err(Unknown::unparsed("a here-string is not closed"))
    }

    /// The text between `open` at the cursor and its matching `close` (quotes respected).
    fn balanced(&mut self, open: char, close: char) -> Result<String, Unknown> {
        let start = self.at + 1;
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            self.at += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (_, '`') => self.at += 1,
                (None, '\'' | '"') => quote = Some(c),
                (None, c) if c == open => depth += 1,
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(self.chars[start..self.at - 1].iter().collect());
                    }
                }
                _ => {}
            }
        }
        Err(Unknown::unparsed(format!("a `{open}` is not closed")))
    }
}

fn push(value: &mut Option<String>, text: &str) {
    if let Some(v) = value.as_mut() {
        v.push_str(text);
    }
}
