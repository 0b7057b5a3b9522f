//! POSIX/bash commands into simple commands, with `brush-parser`.
//!
//! Why `brush-parser`: it is the parser of the brush shell (MIT), pure Rust (no C build, no
//! grammar crate), and it gives a real AST: lists, pipelines, subshells, brace groups, loops,
//! functions, here-documents with their bodies, and, through its word parser, the pieces of
//! each word, so a literal word (`web01`, `'web01'`, `w\eb01`) is told apart from one with
//! `$VAR`, `$(…)` or backticks. tree-sitter-bash needs a C build and a grammar crate and gives
//! untyped nodes; `yash-syntax` is GPL-3 and cannot be linked into this Apache-2.0 binary.
//!
//! The walk visits every simple command, including those inside `$(…)`, backticks, process
//! substitutions and here-documents that expand; each comes out as a [`Cmd`] whose words know
//! whether they are literal. Past a nesting depth or a number of commands the walk gives up
//! with [`Unknown`]: a cap is never read as "no remote program".

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};

use super::types::{Arg, Cmd, Stdin, Unknown};
use super::walk::Walk;

/// Parses `text` as a shell program and appends its simple commands to `walk`.
pub(super) fn walk_text(text: &str, walk: &mut Walk) -> Result<(), Unknown> {
    walk.enter()?;
    let options = brush_parser::ParserOptions::default();
    let mut parser = brush_parser::Parser::new(std::io::BufReader::new(text.as_bytes()), &options);
    let program = parser.parse_program().map_err(Unknown::unparsed)?;
    for list in &program.complete_commands {
        compound_list(list, walk)?;
    }
    walk.leave();
    Ok(())
}

fn compound_list(list: &ast::CompoundList, walk: &mut Walk) -> Result<(), Unknown> {
    for item in &list.0 {
        and_or(&item.0, walk)?;
    }
    Ok(())
}

fn and_or(list: &ast::AndOrList, walk: &mut Walk) -> Result<(), Unknown> {
    pipeline(&list.first, walk)?;
    for next in &list.additional {
        match next {
            ast::AndOr::And(p) | ast::AndOr::Or(p) => pipeline(p, walk)?,
        }
    }
    Ok(())
}

fn pipeline(pipeline: &ast::Pipeline, walk: &mut Walk) -> Result<(), Unknown> {
    // What the previous command writes into the pipe, when the text fixes it.
    let mut produced: Option<Arg> = None;
    for (i, command) in pipeline.seq.iter().enumerate() {
        let piped = i > 0;
        let input = produced.take();
        match command {
            ast::Command::Simple(simple) => {
                simple_command(simple, piped, input, walk)?;
                produced = walk.commands.last().and_then(output_of);
            }
            ast::Command::Compound(compound, redirects) => {
                if let Some(redirects) = redirects {
                    for redirect in &redirects.0 {
                        // A compound command's output redirection writes locally, unless it
                        // sends to another machine (`{ …; } > /dev/tcp/h/p`).
                        redirect_words(redirect, walk)?;
                        if let Some(path) = socket_written(redirect) {
                            walk.commands.push(Cmd {
                                writes: Some(path),
                                ..Cmd::default()
                            });
                        }
                    }
                }
                compound_command(compound, walk)?;
            }
            ast::Command::Function(function) => {
                // Redirections of a function body run each time it is called.
                for redirect in function.body.1.iter().flat_map(|r| r.0.iter()) {
                    redirect_words(redirect, walk)?;
                    if let Some(path) = socket_written(redirect) {
                        walk.commands.push(Cmd {
                            writes: Some(path),
                            ..Cmd::default()
                        });
                    }
                }
                compound_command(&function.body.0, walk)?;
                walk.functions.push(function.fname.value.clone());
            }
            ast::Command::ExtendedTest(test, _) => {
                // `[[ … ]]` only tests, but its words may hold `$(…)`.
                let rendered = test.to_string();
                for piece in pieces(&rendered)? {
                    substitutions(&piece.piece, walk)?;
                }
            }
        }
    }
    Ok(())
}

fn compound_command(command: &ast::CompoundCommand, walk: &mut Walk) -> Result<(), Unknown> {
    walk.enter()?;
    match command {
        ast::CompoundCommand::Arithmetic(command) => arithmetic(&command.expr.value, walk)?,
        ast::CompoundCommand::ArithmeticForClause(clause) => {
            for expr in [&clause.initializer, &clause.condition, &clause.updater]
                .into_iter()
                .flatten()
            {
                arithmetic(&expr.value, walk)?;
            }
            compound_list(&clause.body.list, walk)?;
        }
        ast::CompoundCommand::BraceGroup(group) => compound_list(&group.list, walk)?,
        ast::CompoundCommand::Subshell(subshell) => compound_list(&subshell.list, walk)?,
        ast::CompoundCommand::ForClause(clause) => {
            let mut values = Vec::new();
            for value in clause.values.iter().flatten() {
                values.extend(to_args(&value.value, walk)?);
            }
            // Over a short literal list the body is read once per value, the variable bound
            // (`for h in web01 web02; do ssh $h …`); otherwise `$h` stays dynamic there.
            let literal: Option<Vec<String>> = values.iter().map(|v| v.value.clone()).collect();
            match literal {
                Some(literal) if !literal.is_empty() && literal.len() <= MAX_LOOP_VALUES => {
                    for value in literal {
                        walk.bindings.push((clause.variable_name.clone(), value));
                        let result = compound_list(&clause.body.list, walk);
                        walk.bindings.pop();
                        result?;
                    }
                }
                _ => compound_list(&clause.body.list, walk)?,
            }
        }
        ast::CompoundCommand::CaseClause(clause) => {
            to_arg(&clause.value.value, walk)?;
            for case in &clause.cases {
                // A pattern's substitutions run when the case is tried.
                for pattern in &case.patterns {
                    to_arg(&pattern.value, walk)?;
                }
                if let Some(body) = &case.cmd {
                    compound_list(body, walk)?;
                }
            }
        }
        ast::CompoundCommand::IfClause(clause) => {
            compound_list(&clause.condition, walk)?;
            compound_list(&clause.then, walk)?;
            for other in clause.elses.iter().flatten() {
                if let Some(condition) = &other.condition {
                    compound_list(condition, walk)?;
                }
                compound_list(&other.body, walk)?;
            }
        }
        ast::CompoundCommand::WhileClause(clause) | ast::CompoundCommand::UntilClause(clause) => {
            compound_list(&clause.0, walk)?;
            compound_list(&clause.1.list, walk)?;
        }
        ast::CompoundCommand::Coprocess(coprocess) => {
            pipeline(
                &ast::Pipeline {
                    timed: None,
                    bang: false,
                    seq: vec![(*coprocess.body).clone()],
                },
                walk,
            )?;
        }
    }
    walk.leave();
    Ok(())
}

fn simple_command(
    simple: &ast::SimpleCommand,
    piped: bool,
    input: Option<Arg>,
    walk: &mut Walk,
) -> Result<(), Unknown> {
    walk.count()?;
    let mut cmd = Cmd {
        stdin: if piped { Stdin::Pipe } else { Stdin::Inherited },
        piped: input,
        bindings: walk.bindings.clone(),
        ..Cmd::default()
    };
    for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
        item_into(item, true, &mut cmd, walk)?;
    }
    if let Some(name) = &simple.word_or_name {
        cmd.words.push(to_arg(&name.value, walk)?);
    }
    for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
        item_into(item, false, &mut cmd, walk)?;
    }
    walk.commands.push(cmd);
    Ok(())
}

fn item_into(
    item: &ast::CommandPrefixOrSuffixItem,
    in_prefix: bool,
    cmd: &mut Cmd,
    walk: &mut Walk,
) -> Result<(), Unknown> {
    match item {
        ast::CommandPrefixOrSuffixItem::Word(w) => cmd.words.extend(to_args(&w.value, walk)?),
        ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, w) => {
            let arg = to_arg(&w.value, walk)?;
            if in_prefix {
                // The word is the whole `NAME=value`.
                let text = arg.text();
                cmd.assignments.push(if text.contains('=') {
                    text.to_owned()
                } else {
                    format!("{}={text}", assignment.name)
                });
            } else {
                cmd.words.push(arg);
            }
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
            compound_list(&subshell.list, walk)?;
            cmd.words.push(Arg::dynamic(String::from("<(…)")));
        }
        ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
            redirect_into(redirect, cmd, walk)?;
        }
    }
    Ok(())
}

fn redirect_into(
    redirect: &ast::IoRedirect,
    cmd: &mut Cmd,
    walk: &mut Walk,
) -> Result<(), Unknown> {
    match redirect {
        ast::IoRedirect::HereDocument(fd, doc) if fd.is_none_or(|fd| fd == 0) => {
            cmd.stdin = Stdin::Text(heredoc_arg(doc, walk)?);
        }
        ast::IoRedirect::HereString(fd, w) if fd.is_none_or(|fd| fd == 0) => {
            let arg = to_arg(&w.value, walk)?;
            cmd.stdin = Stdin::Text(arg);
        }
        ast::IoRedirect::File(fd, kind, target) => {
            let mut substituted = false;
            let target_arg = match target {
                ast::IoFileRedirectTarget::Filename(w)
                | ast::IoFileRedirectTarget::Duplicate(w) => Some(to_arg(&w.value, walk)?),
                ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                    compound_list(&subshell.list, walk)?;
                    substituted = true;
                    None
                }
                ast::IoFileRedirectTarget::Fd(_) => None,
            };
            match kind {
                // `< <(…)` reads what another command writes, as a pipe does.
                ast::IoFileRedirectKind::Read if fd.is_none_or(|fd| fd == 0) && substituted => {
                    cmd.stdin = Stdin::Pipe;
                }
                ast::IoFileRedirectKind::Read if fd.is_none_or(|fd| fd == 0) => {
                    cmd.stdin = Stdin::File(target_arg.and_then(|a| a.value));
                }
                ast::IoFileRedirectKind::Write
                | ast::IoFileRedirectKind::Append
                | ast::IoFileRedirectKind::Clobber
                | ast::IoFileRedirectKind::ReadAndWrite => {
                    // `> 1` writes a file named 1; only `/dev/null` and its kin write nothing.
                    // Bash's `/dev/tcp/HOST/PORT` sends to another machine: that write wins.
                    if let Some(arg) = target_arg
                        && !is_harmless_sink(&arg)
                    {
                        if socket_host(&arg.raw).is_some() {
                            cmd.writes = Some(arg.raw);
                        } else {
                            cmd.writes.get_or_insert(arg.raw);
                        }
                    }
                }
                // `>&2` duplicates a descriptor; `>&file` (bash) writes the file.
                ast::IoFileRedirectKind::DuplicateOutput => {
                    if let Some(arg) = target_arg
                        && !arg
                            .value
                            .as_deref()
                            .is_some_and(|v| v == "-" || v.chars().all(|c| c.is_ascii_digit()))
                        && !is_harmless_sink(&arg)
                    {
                        cmd.writes.get_or_insert(arg.raw);
                    }
                }
                _ => {}
            }
        }
        ast::IoRedirect::OutputAndError(w, _) => {
            let arg = to_arg(&w.value, walk)?;
            if !is_harmless_sink(&arg) {
                cmd.writes.get_or_insert(arg.raw);
            }
        }
        ast::IoRedirect::HereDocument(_, doc) => {
            heredoc_arg(doc, walk)?;
        }
        ast::IoRedirect::HereString(_, w) => {
            to_arg(&w.value, walk)?;
        }
    }
    Ok(())
}

/// The `/dev/tcp/…` or `/dev/udp/…` path a redirection writes to, as written.
fn socket_written(redirect: &ast::IoRedirect) -> Option<String> {
    let rendered = redirect.to_string();
    let at = rendered
        .find("/dev/tcp/")
        .or_else(|| rendered.find("/dev/udp/"))?;
    rendered[..at].contains('>').then(|| {
        rendered[at..]
            .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\''))
            .next()
            .unwrap_or_default()
            .to_owned()
    })
}

/// The host of bash's network redirection `/dev/tcp/HOST/PORT` (or `/dev/udp/…`), as written.
pub(crate) fn socket_host(path: &str) -> Option<&str> {
    let rest = path
        .trim_matches(['"', '\''])
        .strip_prefix("/dev/tcp/")
        .or_else(|| path.trim_matches(['"', '\'']).strip_prefix("/dev/udp/"))?;
    Some(rest.split('/').next().unwrap_or(rest))
}

/// The text a command writes to its standard output when the command text fixes it:
/// `echo` and `printf` of literal words, `cat` of a here-document, `base64 -d` and `rev` of
/// such text. `None` when it is not known (a file, a network, an expansion).
pub(super) fn output_of(cmd: &Cmd) -> Option<Arg> {
    use base64::Engine as _;
    let name = cmd.words.first()?.value.as_deref()?;
    let args = &cmd.words[1..];
    let input = || match &cmd.stdin {
        Stdin::Text(text) => text.value.clone(),
        Stdin::Pipe => cmd.piped.as_ref().and_then(|p| p.value.clone()),
        _ => None,
    };
    let text = match name.rsplit('/').next().unwrap_or(name) {
        "echo" => {
            let words: Vec<&Arg> = args.iter().skip_while(|a| a.text() == "-n").collect();
            let values: Option<Vec<&str>> = words.iter().map(|a| a.value.as_deref()).collect();
            let text = values?.join(" ");
            (!text.contains('\\')).then_some(text)?
        }
        "printf" => match args {
            [format] if !format.text().contains(['%', '\\']) => format.value.clone()?,
            [format, arg] if format.text() == "%s" || format.text() == "%s\\n" => {
                arg.value.clone()?
            }
            _ => return None,
        },
        "cat" if args.is_empty() => input()?,
        "base64"
            if args
                .iter()
                .any(|a| matches!(a.text(), "-d" | "--decode" | "-D")) =>
        {
            let encoded: String = input()?.split_whitespace().collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()?
        }
        "rev" if args.is_empty() => input()?
            .lines()
            .map(|line| line.chars().rev().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    Some(Arg::literal(text))
}

/// Most values of a literal `for` list whose body is read once per value.
const MAX_LOOP_VALUES: usize = 16;

/// The substitutions inside an arithmetic expression (`(( x = $(cmd) ))`) run.
fn arithmetic(expr: &str, walk: &mut Walk) -> Result<(), Unknown> {
    if !expr.contains("$(") && !expr.contains('`') {
        return Ok(());
    }
    match word::parse(expr, &brush_parser::ParserOptions::default()) {
        Ok(pieces) => {
            for piece in &pieces {
                substitutions(&piece.piece, walk)?;
            }
            Ok(())
        }
        Err(_) => Err(Unknown(String::from(
            "an arithmetic expression runs a command that could not be read",
        ))),
    }
}

/// The substitutions inside a redirection of a compound command still run.
fn redirect_words(redirect: &ast::IoRedirect, walk: &mut Walk) -> Result<(), Unknown> {
    let mut scratch = Cmd::default();
    redirect_into(redirect, &mut scratch, walk)
}

fn is_harmless_sink(arg: &Arg) -> bool {
    matches!(
        arg.value.as_deref(),
        Some("/dev/null" | "/dev/stdout" | "/dev/stderr")
    )
}

fn heredoc_arg(doc: &ast::IoHereDocument, walk: &mut Walk) -> Result<Arg, Unknown> {
    let text = &doc.doc.value;
    if !doc.requires_expansion {
        return Ok(Arg::literal(text.clone()));
    }
    let options = brush_parser::ParserOptions::default();
    let pieces = word::parse_heredoc(text, &options)
        .map_err(|e| Unknown(format!("a here-document could not be parsed ({e})")))?;
    let mut value = Some(String::new());
    for piece in &pieces {
        substitutions(&piece.piece, walk)?;
        literal_into(&piece.piece, &mut value);
    }
    Ok(Arg {
        raw: text.clone(),
        value,
    })
}

/// A raw word as written into an [`Arg`]: its literal value when it has no expansion, and
/// every command substitution inside it walked as commands of its own.
pub(super) fn to_arg(raw: &str, walk: &mut Walk) -> Result<Arg, Unknown> {
    if is_plain(raw) {
        return Ok(Arg::literal(raw.to_owned()));
    }
    let mut value = Some(String::new());
    for piece in pieces(raw)? {
        substitutions(&piece.piece, walk)?;
        literal_into(&piece.piece, &mut value);
    }
    Ok(Arg {
        raw: raw.to_owned(),
        value,
    })
}

/// A word as the shell hands it on after brace expansion (`web0{1,2}` is `web01 web02`,
/// `web{01..03}` three words): a literal word with a brace expression is each of its
/// expansions, up to [`MAX_BRACE_WORDS`]; any other word is one.
fn to_args(raw: &str, walk: &mut Walk) -> Result<Vec<Arg>, Unknown> {
    if raw.contains('{')
        && !raw.contains(['\'', '"', '$', '`', '\\'])
        && let Some(words) = brace_expand(raw).filter(|w| w.len() > 1)
    {
        return words.iter().map(|word| to_arg(word, walk)).collect();
    }
    Ok(vec![to_arg(raw, walk)?])
}

/// The most words one brace expansion is read as; a longer one stays one word.
const MAX_BRACE_WORDS: usize = 64;

/// Bash's brace expansion of a word without quotes or expansions: `{a,b}` lists and
/// `{1..3}`, `{01..03}`, `{a..c}` sequences (with an optional step), nested and in
/// sequence. None when it would make more than [`MAX_BRACE_WORDS`] words.
fn brace_expand(word: &str) -> Option<Vec<String>> {
    let Some((open, close)) = next_brace(word, 0) else {
        return Some(vec![word.to_owned()]);
    };
    let (prefix, inner, suffix) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
    let members: Vec<String> = if let Some(list) = members(inner) {
        let mut out = Vec::new();
        for member in list {
            out.extend(brace_expand(member)?);
        }
        out
    } else if let Some(seq) = sequence(inner) {
        seq
    } else {
        // Not an expression: the brace is text; the rest may still hold one.
        let rest = brace_expand(&word[open + 1..])?;
        return Some(
            rest.into_iter()
                .map(|r| format!("{}{r}", &word[..=open]))
                .collect(),
        );
    };
    let tails = brace_expand(suffix)?;
    if members.len().saturating_mul(tails.len()) > MAX_BRACE_WORDS {
        return None;
    }
    let mut out = Vec::new();
    for member in &members {
        for tail in &tails {
            out.push(format!("{prefix}{member}{tail}"));
        }
    }
    Some(out)
}

/// The first `{` at or after `from` and its matching `}`.
fn next_brace(word: &str, from: usize) -> Option<(usize, usize)> {
    let open = from + word[from..].find('{')?;
    let mut depth = 0usize;
    for (at, c) in word[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, open + at));
                }
            }
            _ => {}
        }
    }
    None
}

/// The members of `a,b,{c,d}` split at its top-level commas; None for fewer than two.
fn members(inner: &str) -> Option<Vec<&str>> {
    let mut list = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                list.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    list.push(&inner[start..]);
    (list.len() > 1).then_some(list)
}

/// `1..3`, `01..03` (padded to the wider end), `5..1..2`, `a..c`: the sequence's words.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let ([start, end] | [start, end, _]) = parts[..] else {
        return None;
    };
    let step = match parts.get(2) {
        Some(step) => step.parse::<i64>().ok()?.unsigned_abs().max(1),
        None => 1,
    };
    let step = usize::try_from(step).ok()?;
    if let (Ok(a), Ok(b)) = (start.parse::<i64>(), end.parse::<i64>()) {
        let padded = |s: &str| s.trim_start_matches('-').starts_with('0') && s.len() > 1;
        let width = if padded(start) || padded(end) {
            start.len().max(end.len())
        } else {
            0
        };
        let count = usize::try_from(a.abs_diff(b)).ok()? / step + 1;
        if count > MAX_BRACE_WORDS {
            return None;
        }
        let down = a > b;
        return Some(
            (0..count)
                .map(|k| {
                    let k = i64::try_from(k * step).unwrap_or(0);
                    let n = if down { a - k } else { a + k };
                    format!("{n:0width$}")
                })
                .collect(),
        );
    }
    let (mut a, mut b) = (start.chars(), end.chars());
    let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else {
        return None;
    };
    if !a.is_ascii_alphabetic() || !b.is_ascii_alphabetic() {
        return None;
    }
    let (lo, hi) = (a.min(b), a.max(b));
    let mut letters: Vec<String> = (lo..=hi).step_by(step).map(String::from).collect();
    if a > b {
        letters.reverse();
    }
    Some(letters)
}

/// Whether a word is plain text to the shell: none of its characters starts an expansion,
/// a quote, an escape, a pattern or a tilde, so it is its own value and runs nothing. Most
/// words of a command are (`cargo`, `--locked`, `/home/dev`, `user@host:8080`), and the word
/// parser costs thousands of instructions a word.
fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b':' | b'=' | b',' | b'+' | b'%' | b'@'
                )
        })
}

fn pieces(raw: &str) -> Result<Vec<WordPieceWithSource>, Unknown> {
    let options = brush_parser::ParserOptions::default();
    word::parse(raw, &options).map_err(|e| Unknown(format!("a word could not be parsed ({e})")))
}

/// Walks the commands a word piece runs when it expands.
fn substitutions(piece: &WordPiece, walk: &mut Walk) -> Result<(), Unknown> {
    match piece {
        WordPiece::CommandSubstitution(inner) | WordPiece::BackquotedCommandSubstitution(inner) => {
            walk_text(inner, walk)
        }
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for piece in inner {
                substitutions(&piece.piece, walk)?;
            }
            Ok(())
        }
        WordPiece::ArithmeticExpression(expr) => arithmetic(&expr.value, walk),
        WordPiece::ParameterExpansion(expr) => {
            // `${x:-$(cmd)}` runs cmd: look inside the expression's text too.
            let text = format!("{expr:?}");
            if text.contains("$(") || text.contains('`') {
                return Err(Unknown(String::from(
                    "a command substitution inside a parameter expansion is not followed",
                )));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The value of `$'…'` text: `\x73sh` is `ssh`. `None` for an escape not decoded here.
fn ansi_c(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut code = 0u32;
        let mut n = 0;
        while n < max
            && let Some(d) = chars.peek().and_then(|c| c.to_digit(radix))
        {
            code = code * radix + d;
            chars.next();
            n += 1;
        }
        (n > 0).then_some(code)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            c @ ('\\' | '\'' | '"' | '?') => c,
            'x' => char::from_u32(digits(&mut chars, 16, 2)?)?,
            'u' => char::from_u32(digits(&mut chars, 16, 4)?)?,
            'U' => char::from_u32(digits(&mut chars, 16, 8)?)?,
            c @ '0'..='7' => {
                let mut code = c.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                char::from_u32(code)?
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

/// Appends a piece's literal text to `value`, or clears it when the piece expands.
fn literal_into(piece: &WordPiece, value: &mut Option<String>) {
    let Some(text) = value.as_mut() else {
        return;
    };
    match piece {
        WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => text.push_str(t),
        WordPiece::EscapeSequence(e) => text.push_str(e.strip_prefix('\\').unwrap_or(e)),
        WordPiece::AnsiCQuotedText(t) => match ansi_c(t) {
            Some(decoded) => text.push_str(&decoded),
            None => *value = None,
        },
        WordPiece::TildeExpansion(tilde) => {
            // A tilde never names a host; keep it as written.
            text.push('~');
            if let word::TildeExpr::UserHome(user) = tilde {
                text.push_str(user);
            }
        }
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for piece in inner {
                literal_into(&piece.piece, value);
            }
        }
        _ => *value = None,
    }
}

/// The value of a word whose only expansions are variables the text itself binds (`$h` in a
/// literal `for` loop, `x=ss; ${x}h`): `None` when any part stays unknown.
pub(super) fn evaluate(raw: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let mut value = String::new();
    for piece in pieces(raw).ok()? {
        evaluate_piece(&piece.piece, lookup, &mut value)?;
    }
    Some(value)
}

fn evaluate_piece(
    piece: &WordPiece,
    lookup: &dyn Fn(&str) -> Option<String>,
    value: &mut String,
) -> Option<()> {
    match piece {
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for piece in inner {
                evaluate_piece(&piece.piece, lookup, value)?;
            }
        }
        WordPiece::ParameterExpansion(word::ParameterExpr::Parameter {
            parameter: word::Parameter::Named(name),
            indirect: false,
        }) => value.push_str(&lookup(name)?),
        other => {
            let mut literal = Some(String::new());
            literal_into(other, &mut literal);
            value.push_str(&literal?);
        }
    }
    Some(())
}

/// Whether the shell changes this literal word before running it: unquoted glob characters
/// (`/usr/bin/ss[h]`, `/usr/bin/s?h`) or a brace expansion (`{ssh,web01,reboot}`).
pub(super) fn expands_when_run(raw: &str) -> bool {
    if !raw.contains(['*', '?', '[', '{']) {
        return false;
    }
    let Ok(pieces) = pieces(raw) else {
        return true;
    };
    pieces.iter().any(|piece| match &piece.piece {
        WordPiece::Text(text) => {
            text.contains(['*', '?', '['])
                || (text.contains('{') && (text.contains(',') || text.contains("..")))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the word parser makes of a word, as `to_arg` read every word before it knew
    /// plain ones.
    fn parsed(raw: &str) -> Option<String> {
        let mut value = Some(String::new());
        for piece in pieces(raw).expect("a plain word parses") {
            literal_into(&piece.piece, &mut value);
        }
        value
    }

    #[test]
    fn braces_expand_as_bash_expands_them() {
        let cases: [(&str, &[&str]); 9] = [
            ("web0{1,2}", &["web01", "web02"]),
            ("{web,db}01", &["web01", "db01"]),
            ("web{01..03}", &["web01", "web02", "web03"]),
            ("n{3..1}", &["n3", "n2", "n1"]),
            ("{a..e..2}", &["a", "c", "e"]),
            ("{a,b{1,2}}x", &["ax", "b1x", "b2x"]),
            ("{}", &["{}"]),
            ("x{a}y", &["x{a}y"]),
            ("{x,y}-{1..2}", &["x-1", "x-2", "y-1", "y-2"]),
        ];
        for (word, want) in cases {
            assert_eq!(brace_expand(word).unwrap_or_default(), want, "{word}");
        }
        // Too long a sequence stays one word (a name no inventory holds).
        assert_eq!(
            brace_expand("h{1..1000}").unwrap_or_default(),
            ["h{1..1000}"]
        );
        assert_eq!(brace_expand("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"), None);
    }

    #[test]
    fn a_plain_word_is_what_the_word_parser_reads() {
        let alphabet: Vec<char> = ('a'..='c')
            .chain(['Z', '0', '9'])
            .chain("-_./:=,+%@".chars())
            .collect();
        let mut words: Vec<String> = alphabet.iter().map(char::to_string).collect();
        for a in &alphabet {
            for b in &alphabet {
                for c in &alphabet {
                    words.push(format!("{a}{b}{c}"));
                }
            }
        }
        words.extend(
            [
                "--test-threads=2",
                "RUST_BACKTRACE=1",
                "deploy@jp-ubuntu:/srv/app",
                "/home/dev/src/rewind",
                "a=b=c",
                "100%",
                "x+y",
                "-o=ConnectTimeout=5",
            ]
            .map(String::from),
        );
        for word in &words {
            assert!(is_plain(word), "{word}");
            assert_eq!(parsed(word).as_deref(), Some(word.as_str()), "{word}");
        }
        // Anything that may expand, quote, escape or glob goes to the parser.
        for word in [
            "", "~", "~/x", "a~", "$x", "a$", "`x`", "'x'", "\"x\"", "a\\b", "*", "a?", "[a]",
            "{a,b}", "!x", "a b", "a;b", "a&b", "a|b", "(a)", "<a", "a>", "#x", "é",
        ] {
            assert!(!is_plain(word), "{word}");
        }
    }
}
