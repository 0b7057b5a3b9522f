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

use super::{Arg, Cmd, Stdin, Unknown, Walk};

/// Parses `text` as a shell program and appends its simple commands to `walk`.
pub(super) fn walk_text(text: &str, walk: &mut Walk) -> Result<(), Unknown> {
    walk.enter()?;
    let options = brush_parser::ParserOptions::default();
    let mut parser = brush_parser::Parser::new(std::io::BufReader::new(text.as_bytes()), &options);
    let program = parser
        .parse_program()
        .map_err(|e| Unknown(format!("the command could not be parsed ({e})")))?;
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
    for (i, command) in pipeline.seq.iter().enumerate() {
        let piped = i > 0;
        match command {
            ast::Command::Simple(simple) => simple_command(simple, piped, walk)?,
            ast::Command::Compound(compound, redirects) => {
                if let Some(redirects) = redirects {
                    for redirect in &redirects.0 {
                        // A compound command's output redirection writes locally: nothing remote.
                        redirect_words(redirect, walk)?;
                    }
                }
                compound_command(compound, walk)?;
            }
            ast::Command::Function(function) => {
                compound_command(&function.body.0, walk)?;
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
        ast::CompoundCommand::Arithmetic(_) | ast::CompoundCommand::ArithmeticForClause(_) => {}
        ast::CompoundCommand::BraceGroup(group) => compound_list(&group.list, walk)?,
        ast::CompoundCommand::Subshell(subshell) => compound_list(&subshell.list, walk)?,
        ast::CompoundCommand::ForClause(clause) => {
            for value in clause.values.iter().flatten() {
                to_arg(&value.value, walk)?;
            }
            // The loop variable expands in the body, so `ssh $h` there is dynamic.
            compound_list(&clause.body.list, walk)?;
        }
        ast::CompoundCommand::CaseClause(clause) => {
            to_arg(&clause.value.value, walk)?;
            for case in &clause.cases {
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
    walk: &mut Walk,
) -> Result<(), Unknown> {
    walk.count()?;
    let mut cmd = Cmd {
        stdin: if piped { Stdin::Pipe } else { Stdin::Inherited },
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
        ast::CommandPrefixOrSuffixItem::Word(w) => cmd.words.push(to_arg(&w.value, walk)?),
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
            let target_arg = match target {
                ast::IoFileRedirectTarget::Filename(w)
                | ast::IoFileRedirectTarget::Duplicate(w) => Some(to_arg(&w.value, walk)?),
                ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                    compound_list(&subshell.list, walk)?;
                    None
                }
                ast::IoFileRedirectTarget::Fd(_) => None,
            };
            match kind {
                ast::IoFileRedirectKind::Read if fd.is_none_or(|fd| fd == 0) => {
                    cmd.stdin = Stdin::File;
                }
                ast::IoFileRedirectKind::Write
                | ast::IoFileRedirectKind::Append
                | ast::IoFileRedirectKind::Clobber
                | ast::IoFileRedirectKind::ReadAndWrite => {
                    if let Some(arg) = target_arg
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

/// The substitutions inside a redirection of a compound command still run.
fn redirect_words(redirect: &ast::IoRedirect, walk: &mut Walk) -> Result<(), Unknown> {
    let mut scratch = Cmd::default();
    redirect_into(redirect, &mut scratch, walk)
}

fn is_harmless_sink(arg: &Arg) -> bool {
    matches!(
        arg.value.as_deref(),
        Some("/dev/null" | "/dev/stdout" | "/dev/stderr" | "1" | "2" | "-")
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
