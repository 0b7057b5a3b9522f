//! Code is code, wherever it is: the programs that run code handed to them (`python3 -c`,
//! `perl -e`, `node --eval=`, `lua5.4 -e`, `R -e`, `gdb -ex`, `sqlite3` dot-commands, `emacs
//! --eval`, an awk program, code on standard input), and what a literal code text does that
//! matters here: the programs it starts (`os.system("ssh web01 reboot")`,
//! `subprocess.run(["ssh", "web01", "reboot"])`, backticks), the connections it opens
//! (sockets, HTTP clients, database drivers, remote-shell libraries) and the machines its
//! strings name.
//!
//! [`FAMILIES`] says which command names run code and how the code is handed to them;
//! [`LANGUAGES`] lists each language's calls that start a program, open a connection or run
//! more code of the language. [`handed`] finds the code texts of one command; [`scan`] reads
//! one text. What follows from a scan (a command judged by the shell analysis, a checkpoint
//! of the machine a connection names, a question) is decided where the protected-VM net is
//! known, in `programs`.

mod tables;

pub(crate) use self::tables::REMOTE_SHELLS;
use self::tables::{FAMILIES, FILE_CHANGES, LANGUAGES};
use super::net;
use super::types::{Arg, Stdin};

/// A language whose code is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    Perl,
    Ruby,
    JavaScript,
    Php,
    Lua,
    Tcl,
    R,
    Julia,
    Elixir,
    Erlang,
    Lisp,
    AppleScript,
    /// gdb's command lines (`shell …`, `python …`, `target remote host:port`).
    Gdb,
    /// sqlite3's SQL and dot-commands (`.shell …`, `.output |…`).
    Sqlite,
    /// An awk program (its `system()` and pipes are read by `runners`; here, `/inet` files).
    Awk,
}

/// What the first operand of a family's command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A script file: the code, not read here (and standard input is the script's data).
    Script,
    /// The code itself, unless a code option was given (awk).
    Program,
    /// A file the code works on (gdb's program, emacs's files): options are read past it.
    Data,
    /// A database, then SQL or dot-commands (sqlite3).
    Database,
}

/// Programs that run code: their names and how the code is handed to them.
pub(crate) struct Family {
    pub(crate) lang: Lang,
    /// Command names, lower case. A name followed by a version (digits and dots: `python3.12`,
    /// `perl5.36`, `node20`, `lua5.4`, `sqlite3`) is the same family, when `versioned`.
    names: &'static [&'static str],
    versioned: bool,
    /// Options whose value is code: the next word, the rest of a short option's word
    /// (`-cCODE`, `-pe CODE` when `bundles`), or after `=` (`--eval=CODE`).
    code_options: &'static [&'static str],
    /// Short options may be bundled (`-lne`), the code option last.
    bundles: bool,
    /// Options that take a value (the next word, or the rest of a bundle): never code.
    value_options: &'static [&'static str],
    /// Options whose value is a script file or module run instead of code (`python -m`).
    script_options: &'static [&'static str],
    /// Subcommands whose first operand is code (`deno eval CODE`).
    code_subcommands: &'static [&'static str],
    operand: Operand,
    /// Whether code comes on standard input when none is given otherwise.
    stdin: bool,
}

/// The family of a command name (lower case, its directory taken off), if it runs code.
pub(crate) fn family(base: &str) -> Option<&'static Family> {
    let base = base.strip_suffix(".exe").unwrap_or(base);
    FAMILIES.iter().find(|f| {
        f.names.iter().any(|name| {
            base == *name
                || f.versioned
                    && base.strip_prefix(name).is_some_and(|version| {
                        version.starts_with(|c: char| c.is_ascii_digit())
                            && version.chars().all(|c| c.is_ascii_digit() || c == '.')
                    })
        })
    })
}

/// The code one command hands to its program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Handed {
    pub(crate) lang: Lang,
    /// Each code text, as the shell gives it (its value `None` when only known at run time).
    pub(crate) texts: Vec<Arg>,
    /// The code is read from a pipe (`… | python3`).
    pub(crate) from_pipe: bool,
}

/// The code texts `args` (`args[0]` the program) and `stdin` hand to a program of `family`.
pub(crate) fn handed(family: &Family, args: &[Arg], stdin: &Stdin) -> Handed {
    let mut texts = Vec::new();
    // A script, module or program file runs instead of code read from standard input.
    let mut script = false;
    let mut operands = 0;
    let mut options_end = false;
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if !options_end && text == "--" {
            options_end = true;
            continue;
        }
        if options_end || !text.starts_with('-') || text == "-" {
            if operands == 0 && family.code_subcommands.contains(&text) {
                // `deno eval [--print] CODE`: the first operand after the subcommand's options.
                texts.extend(
                    args[i..]
                        .iter()
                        .find(|a| !a.text().starts_with('-'))
                        .cloned(),
                );
                break;
            }
            operands += 1;
            match family.operand {
                Operand::Script => {
                    script = text != "-";
                    break;
                }
                Operand::Program if texts.is_empty() && !script => {
                    texts.push(arg.clone());
                    break;
                }
                Operand::Database if operands > 1 => texts.push(arg.clone()),
                _ => {}
            }
            continue;
        }
        match option(family, args, i - 1) {
            Opt::Code(code, next) => {
                texts.extend(code);
                i = next;
            }
            Opt::Script => {
                script = true;
                break;
            }
            Opt::Skip(next) => i = next,
        }
    }
    let mut from_pipe = false;
    if texts.is_empty() && !script && family.stdin {
        match stdin {
            Stdin::Text(body) => texts.push(body.clone()),
            Stdin::Pipe => from_pipe = true,
            _ => {}
        }
    }
    Handed {
        lang: family.lang,
        texts,
        from_pipe,
    }
}

/// What one option word does.
enum Opt {
    /// Code (none if the word is last), and where the next option is.
    Code(Option<Arg>, usize),
    /// A script or module runs: no more options of the program's own.
    Script,
    /// Not code; where the next word to read is.
    Skip(usize),
}

/// The option at `args[at]`.
fn option(family: &Family, args: &[Arg], at: usize) -> Opt {
    let arg = &args[at];
    let text = arg.text();
    let next = || args.get(at + 1).cloned();
    if family.code_options.contains(&text) {
        return Opt::Code(next(), at + 2);
    }
    if family.script_options.contains(&text) {
        return Opt::Script;
    }
    if family.value_options.contains(&text) {
        return Opt::Skip(at + 2);
    }
    if let Some((name, _)) = text.split_once('=') {
        if family.code_options.contains(&name) {
            return Opt::Code(Some(super::wrappers::attached(arg, name.len() + 1)), at + 1);
        }
        if family.script_options.contains(&name) {
            return Opt::Script;
        }
    }
    if text.starts_with("--") || text.len() < 3 {
        return Opt::Skip(at + 1);
    }
    // A short option with its value attached (`-cCODE`, `-eprint(1)`), or a bundle.
    let letters: Vec<(usize, char)> = text.char_indices().skip(1).collect();
    let last = if family.bundles { letters.len() } else { 1 };
    for &(k, c) in letters.iter().take(last) {
        let mut buf = [0u8; 4];
        let option = format!("-{}", c.encode_utf8(&mut buf));
        let rest = k + c.len_utf8();
        let attached = rest < text.len();
        if family.code_options.contains(&option.as_str()) {
            // `node -pe CODE`: the letters after it are code options too.
            let more_options = text[rest..]
                .chars()
                .all(|c| family.code_options.contains(&format!("-{c}").as_str()));
            return if attached && !more_options {
                Opt::Code(Some(super::wrappers::attached(arg, rest)), at + 1)
            } else {
                Opt::Code(next(), at + 2)
            };
        }
        if family.script_options.contains(&option.as_str()) {
            return Opt::Script;
        }
        if family.value_options.contains(&option.as_str()) {
            return Opt::Skip(if attached { at + 1 } else { at + 2 });
        }
    }
    Opt::Skip(at + 1)
}

/// A language's calls that matter.
struct Language {
    lang: Lang,
    /// Calls that start a program, its command line or argv their first arguments. An entry
    /// ending in `*` is a prefix (`subprocess.*` covers `subprocess.run`).
    process: &'static [&'static str],
    /// Words that say the code starts programs in ways not read (`__import__('subprocess')`).
    process_hints: &'static [&'static str],
    /// Calls that run a code text of the language (`exec(…)`, `eval(…)`).
    eval: &'static [&'static str],
    /// Modules and calls that open connections to other machines (matched in lower case).
    network: &'static [&'static str],
    /// Backticks run a command (Perl, Ruby, PHP; Julia's command literals).
    backticks: bool,
    /// Single quotes delimit strings (not in Lisp, where `'` quotes a form).
    single_quotes: bool,
    /// What starts a comment that runs to the end of the line.
    comment: &'static str,
}

/// What one literal code text does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// What it runs.
    pub(crate) runs: Vec<Run>,
    /// The call that opens a connection, if any.
    pub(crate) reach: Option<Reach>,
    /// Host names its strings hold (other than those of a command it runs).
    pub(crate) hosts: Vec<String>,
    /// Whether one of those strings is plainly a machine's name or address (a URL, an IP
    /// address, `user@host`, `host:port`, a dotted domain name): a connection it opens then
    /// goes where the code says.
    pub(crate) names_a_host: bool,
}

/// Something code runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Run {
    /// A command line, its program and arguments written in the code.
    Command(String),
    /// A program or code built when it runs: why.
    Dynamic(String),
    /// More code of a language, written in the code (`exec("…")`, gdb's `python …`).
    Code(Lang, String),
}

/// How code reaches another machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A library that runs commands or a shell there (paramiko, WinRM, TRAMP).
    RemoteShell(&'static str),
    /// A connection (a socket, HTTP, a database driver).
    Connect(&'static str),
}

/// Whether code of `lang` calls something that writes, removes, moves or changes the mode
/// of a file, or starts a program that may (`shutil.rmtree`, `open(…, 'w')`,
/// `fs.writeFileSync`, perl's `unlink`). A language without such a table may do anything.
pub(crate) fn changes_files(lang: Lang, code: &str) -> bool {
    let Some((_, calls)) = FILE_CHANGES.iter().find(|(l, _)| *l == lang) else {
        return true;
    };
    let code = code.to_ascii_lowercase();
    calls.iter().any(|call| code.contains(call))
}

/// Reads one literal code text of `lang`.
pub(crate) fn scan(lang: Lang, code: &str) -> Scan {
    match lang {
        Lang::Gdb => return gdb(code),
        Lang::Sqlite => return sqlite(code),
        Lang::Awk => return awk(code),
        _ => {}
    }
    let Some(language) = LANGUAGES.iter().find(|l| l.lang == lang) else {
        return Scan::default();
    };
    let (lits, comments) = literals(language, code);
    let mut outside = code.as_bytes().to_vec();
    for (start, end) in lits.iter().map(|l| (l.start, l.end)).chain(comments) {
        outside[start..end].fill(b' ');
    }
    let mut scan = Scan::default();
    let mut consumed = vec![false; lits.len()];
    if language.backticks {
        for (k, lit) in lits.iter().enumerate().filter(|(_, l)| l.backtick) {
            consumed[k] = true;
            scan.runs.push(if lit.dynamic {
                Run::Dynamic(format!("backticks run `{}`, built when it runs", lit.text))
            } else {
                Run::Command(lit.text.clone())
            });
        }
    }
    if lang == Lang::Tcl {
        tcl_exec(code, &outside, &mut scan);
    }
    starts(language, code, &outside, &lits, &mut consumed, &mut scan);
    // A literal that is a pipe to or from a command (`open(F, "ssh web01 reboot |")`).
    for (k, lit) in lits.iter().enumerate() {
        let trimmed = lit.text.trim();
        let inner = trimmed.trim_matches(['|', '-', ' ']);
        if !consumed[k] && (trimmed.starts_with('|') || trimmed.ends_with('|')) && !inner.is_empty()
        {
            consumed[k] = true;
            scan.runs.push(Run::Command(inner.to_owned()));
        }
    }
    let outside_text = String::from_utf8_lossy(&outside);
    if scan.runs.is_empty()
        && language
            .process_hints
            .iter()
            .any(|h| outside_text.contains(h) || code.contains(h))
    {
        scan.runs.push(Run::Dynamic(String::from(
            "the code starts a program in a way not read here",
        )));
    }
    let lower = code.to_ascii_lowercase();
    scan.reach = REMOTE_SHELLS
        .iter()
        .find(|l| lower.contains(*l))
        .map(|l| Reach::RemoteShell(l))
        .or_else(|| {
            language
                .network
                .iter()
                .find(|n| lower.contains(*n))
                .map(|n| Reach::Connect(n))
        });
    for (k, lit) in lits.iter().enumerate() {
        if !consumed[k] {
            hosts_of(&lit.text, &mut scan.hosts);
            scan.names_a_host |= lit
                .text
                .split(|c: char| c.is_whitespace() || matches!(c, ';' | ','))
                .any(is_a_host);
        }
    }
    scan
}

/// Whether a word of a string is plainly a machine: a URL with a host, an IP address,
/// `user@host`, `host:port`, or a dotted name whose last label is a word (`db.example.com`,
/// not `data.json`'s `json`... which a name's last label can also be: both count).
fn is_a_host(word: &str) -> bool {
    let known = crate::inventory::Inventory::default();
    if word.parse::<std::net::IpAddr>().is_ok() || net::could_name_a_host(word, &known) {
        return true;
    }
    let labels: Vec<&str> = word.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && labels
            .last()
            .is_some_and(|l| l.len() >= 2 && l.chars().all(|c| c.is_ascii_alphabetic()))
}

/// The programs and code the calls of `language`'s process and eval entries start.
fn starts(
    language: &Language,
    code: &str,
    outside: &[u8],
    lits: &[Lit],
    consumed: &mut [bool],
    scan: &mut Scan,
) {
    let lang = language.lang;
    // JavaScript's `exec` and `spawn` start programs only as child_process's, Deno's or Bun's.
    let gated =
        lang == Lang::JavaScript && !language.process_hints.iter().any(|h| code.contains(h));
    // Where each call's arguments start: `subprocess.check_output` is one call, found twice.
    let mut seen = Vec::new();
    for entry in language.process.iter().filter(|_| !gated) {
        for at in calls(outside, entry) {
            if seen.contains(&at) {
                continue;
            }
            seen.push(at);
            match arguments(language, code, outside, lits, at) {
                Some(Call::Argv(items)) => {
                    for k in &items {
                        consumed[*k] = true;
                    }
                    let words: Vec<&str> = items.iter().map(|k| lits[*k].text.as_str()).collect();
                    // One string is a command line (`os.system("ssh web01 reboot")`); several
                    // are an argv (`subprocess.run(["ssh", "web01", "reboot"])`).
                    scan.runs.push(Run::Command(match words.as_slice() {
                        [line] => (*line).to_owned(),
                        _ => command_line(&words),
                    }));
                }
                Some(Call::Dynamic) => scan.runs.push(Run::Dynamic(format!(
                    "`{entry}` starts a program built when the code runs"
                ))),
                None => {}
            }
        }
    }
    for entry in language.eval {
        for at in calls(outside, entry) {
            match arguments(language, code, outside, lits, at) {
                Some(Call::Argv(items)) if items.len() == 1 => {
                    consumed[items[0]] = true;
                    scan.runs.push(Run::Code(lang, lits[items[0]].text.clone()));
                }
                Some(_) => scan.runs.push(Run::Dynamic(format!(
                    "`{entry}` runs code built when the code runs"
                ))),
                None => {}
            }
        }
    }
}

/// A string literal of code: where it is, what it holds.
#[derive(Debug)]
struct Lit {
    start: usize,
    end: usize,
    text: String,
    /// Interpolated or concatenated: its value is only known when the code runs.
    dynamic: bool,
    backtick: bool,
}

/// The string literals of `code`, and where its comments are.
fn literals(language: &Language, code: &str) -> (Vec<Lit>, Vec<(usize, usize)>) {
    let bytes = code.as_bytes();
    let mut lits = Vec::new();
    let mut comments = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let line_start = i == 0 || bytes[i - 1].is_ascii_whitespace() || bytes[i - 1] == b';';
        if line_start && bytes[i..].starts_with(language.comment.as_bytes()) {
            let end = bytes[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(bytes.len(), |n| i + n);
            comments.push((i, end));
            i = end;
            continue;
        }
        let is_quote = b == b'"' || b == b'`' || (b == b'\'' && language.single_quotes);
        let Some(lit) = quoted_command(language, code, i)
            .or_else(|| is_quote.then(|| string_literal(language, code, i)))
        else {
            i += 1;
            continue;
        };
        i = lit.end;
        lits.push(lit);
    }
    (lits, comments)
}

/// Perl's `qx{…}` and Ruby's `%x(…)` starting at `i`: backticks by another name.
fn quoted_command(language: &Language, code: &str, i: usize) -> Option<Lit> {
    let bytes = code.as_bytes();
    let quoted_command = match language.lang {
        Lang::Perl => bytes[i..].starts_with(b"qx") && (i == 0 || !is_ident(bytes[i - 1])),
        Lang::Ruby => bytes[i..].starts_with(b"%x"),
        _ => false,
    };
    let &open = bytes.get(i + 2).filter(|_| quoted_command)?;
    if open.is_ascii_alphanumeric() || open.is_ascii_whitespace() {
        return None;
    }
    let close = match open {
        b'{' => b'}',
        b'(' => b')',
        b'[' => b']',
        b'<' => b'>',
        other => other,
    };
    let end = bytes[i + 3..]
        .iter()
        .position(|&c| c == close)
        .map_or(bytes.len(), |n| i + 3 + n);
    let text = code.get(i + 3..end).unwrap_or_default().to_owned();
    Some(Lit {
        start: i,
        end: (end + 1).min(bytes.len()),
        dynamic: text.contains('$'),
        text,
        backtick: true,
    })
}

/// The string literal whose quote (or triple quote) is at `i`, with its escapes read.
fn string_literal(language: &Language, code: &str, i: usize) -> Lit {
    let bytes = code.as_bytes();
    let b = bytes[i];
    let triple = bytes
        .get(i..i + 3)
        .is_some_and(|t| t.iter().all(|&c| c == b));
    let open = if triple { 3 } else { 1 };
    let mut j = i + open;
    let mut text = String::new();
    let mut closed = bytes.len();
    while j < bytes.len() {
        if bytes[j] == b'\\' && j + 1 < bytes.len() {
            let escaped = code[j + 1..].chars().next().unwrap_or('\\');
            text.push(match escaped {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                c => c,
            });
            j += 1 + escaped.len_utf8();
            continue;
        }
        if bytes[j] == b && (!triple || bytes.get(j..j + 3).is_some_and(|t| t == [b, b, b])) {
            closed = j;
            break;
        }
        let c = code[j..].chars().next().unwrap_or(' ');
        text.push(c);
        j += c.len_utf8();
    }
    let end = (closed + open).min(bytes.len());
    let prefix = code[..i]
        .chars()
        .rev()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_lowercase();
    let interpolated = text.contains("${")
        || text.contains("#{")
        || prefix.contains('f') && text.contains('{')
        || b != b'\''
            && matches!(language.lang, Lang::Perl | Lang::Php | Lang::Julia)
            && text.contains(['$', '@']);
    let concatenated = next_operator(code, end);
    Lit {
        start: i,
        end,
        text,
        dynamic: interpolated || concatenated,
        backtick: b == b'`' && language.backticks,
    }
}

/// Whether a literal ending at `end` is joined with what follows (`"ssh " + host`,
/// `"ssh %s" % host`, `"…".format(…)`, Perl's and PHP's `.`, Lua's `..`, Elixir's `<>`).
fn next_operator(code: &str, end: usize) -> bool {
    let rest = code
        .get(end..)
        .unwrap_or_default()
        .trim_start_matches([' ', '\t']);
    rest.starts_with(['+', '%', '.', '*', '<', '~'])
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Where each call of `entry` (or of a name it is a prefix of) starts its arguments, in code
/// with its literals blanked.
fn calls(outside: &[u8], entry: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let prefix = entry.ends_with('*');
    let needle = entry.trim_end_matches('*').as_bytes();
    let mut from = 0;
    while let Some(n) = outside
        .get(from..)
        .and_then(|rest| rest.windows(needle.len()).position(|w| w == needle))
    {
        let at = from + n;
        from = at + 1;
        let before = at.checked_sub(1).map(|k| outside[k]);
        // `os.system` and `system` are calls of `system`; `filesystem` and `$system` are not.
        if before.is_some_and(|b| is_ident(b) || b == b'$' || b == b'-' || b == b'@') {
            continue;
        }
        let mut end = at + needle.len();
        if prefix {
            while outside.get(end).is_some_and(|&b| is_ident(b)) {
                end += 1;
            }
        } else if outside.get(end).is_some_and(|&b| is_ident(b) || b == b'-') {
            continue;
        }
        found.push(end);
    }
    found
}

/// The arguments of a call.
enum Call {
    /// The literals, in order, that make its command line or argv.
    Argv(Vec<usize>),
    /// A program or code built when the code runs.
    Dynamic,
}

/// The arguments of the call whose name ends at `at`: `None` when it is no call
/// (`subprocess.PIPE`).
fn arguments(
    language: &Language,
    code: &str,
    outside: &[u8],
    lits: &[Lit],
    at: usize,
) -> Option<Call> {
    let bytes = code.as_bytes();
    let mut i = at;
    while bytes.get(i).is_some_and(|&b| b == b' ' || b == b'\t') {
        i += 1;
    }
    let spaced = i > at;
    let lit_at = |k: usize| lits.iter().position(|l| l.start == k);
    // Perl, Ruby, Lisp, Tcl and AppleScript call without parentheses (`system "…"`).
    let bare_call = matches!(
        language.lang,
        Lang::Perl | Lang::Ruby | Lang::Lisp | Lang::Tcl | Lang::AppleScript
    );
    let (start, end) = match bytes.get(i) {
        Some(b'(') => (i + 1, matching(outside, i)),
        Some(&b)
            if bare_call
                && (spaced || lit_at(i).is_some())
                && (is_ident(b) || matches!(b, b'$' | b'@' | b'[' | b'"' | b'\'' | b'`')) =>
        {
            (i, statement_end(outside, i))
        }
        _ => return None,
    };
    let mut items = Vec::new();
    let mut j = start;
    while j < end {
        let b = bytes[j];
        if b.is_ascii_whitespace() || b == b',' {
            j += 1;
            continue;
        }
        if let Some(k) = lit_at(j) {
            if lits[k].dynamic {
                return Some(Call::Dynamic);
            }
            items.push(k);
            // A whole command line: what follows is a mode or options (`popen(cmd, "r")`).
            if items.len() == 1 && lits[k].text.trim().contains(char::is_whitespace) {
                break;
            }
            j = lits[k].end;
            continue;
        }
        if matches!(b, b'[' | b'(' | b'{') {
            let Some((inner, close)) = bracketed(outside, lits, j, b) else {
                return Some(Call::Dynamic);
            };
            items.extend(inner);
            j = close + 1;
            continue;
        }
        // A word: a keyword argument, a constant, a list function (`c(…)`), or a name.
        let word_end = (j..end)
            .find(|&k| !(is_ident(bytes[k]) || matches!(bytes[k], b'.' | b':' | b'$' | b'@')))
            .unwrap_or(end);
        let word = code.get(j..word_end).unwrap_or_default();
        let after = code.get(word_end..).unwrap_or_default().trim_start();
        if word.is_empty() {
            // An operator or a callback (`=>`, `->`, `function`): the argv is over.
            if items.is_empty() {
                return Some(Call::Dynamic);
            }
            break;
        }
        if (after.starts_with('=') && !after.starts_with("=="))
            || word.starts_with(':')
            || after.starts_with("=>")
        {
            if items.is_empty() {
                return Some(Call::Dynamic);
            }
            break;
        }
        // R's `c("a", "b")`, a list made by a call.
        if matches!(word, "c" | "list" | "array") && after.starts_with('(') {
            j = word_end + (code.len() - word_end - after.len());
            continue;
        }
        if IGNORED.contains(&word) || word.chars().all(|c| c.is_ascii_digit()) {
            j = word_end;
            continue;
        }
        if matches!(word, "function" | "lambda" | "do" | "fn" | "proc") {
            break;
        }
        return Some(Call::Dynamic);
    }
    if items.is_empty() {
        return Some(Call::Dynamic);
    }
    // `os.execlp("ssh", "ssh", …)`: the program, then its argv with the name again.
    if items.len() > 1 && lits[items[0]].text == lits[items[1]].text {
        items.remove(0);
    }
    Some(Call::Argv(items))
}

/// The literals of the argv inside the bracket `b` at `j` (a list; an options object's
/// `args`, as Deno's `{ args: [...] }`), and where the bracket closes; `None` when the bracket
/// holds names or built strings, whose values are only known when the code runs.
fn bracketed(outside: &[u8], lits: &[Lit], j: usize, b: u8) -> Option<(Vec<usize>, usize)> {
    let close = matching(outside, j);
    let inner: Vec<usize> = lits
        .iter()
        .enumerate()
        .filter(|(_, l)| l.start > j && l.end <= close)
        .map(|(k, _)| k)
        .collect();
    let words = String::from_utf8_lossy(&outside[j + 1..close.min(outside.len())]).into_owned();
    if b == b'{' {
        let argv = if words.contains("args") {
            inner
        } else {
            Vec::new()
        };
        return Some((argv, close));
    }
    if inner.iter().any(|&k| lits[k].dynamic) || has_names(&words) {
        return None;
    }
    Some((inner, close))
}

/// Words an argv may hold between its strings that are no part of it.
const IGNORED: &[&str] = &[
    "nil", "t", "None", "True", "False", "true", "false", "undef", "null", "NULL",
];

/// Whether text between brackets holds a name (a variable), not only literals and commas.
fn has_names(words: &str) -> bool {
    words
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '@')))
        .any(|w| !w.is_empty() && !IGNORED.contains(&w) && !w.chars().all(|c| c.is_ascii_digit()))
}

/// Where the bracket opened at `open` closes (literals blanked), or the end of the text.
fn matching(outside: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &b) in outside.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    outside.len()
}

/// Where a statement that starts at `from` ends: `;`, a line's end, or a bracket it did not
/// open.
fn statement_end(outside: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    for (k, &b) in outside.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' | b';' | b'\n' if depth == 0 => return k,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    outside.len()
}

/// Words joined into the command line a shell would split back into them.
fn command_line(words: &[&str]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c))
            {
                (*w).to_owned()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

/// Tcl's `exec ssh web01 reboot` and `open "|ssh …"`: the words after `exec`, up to the end
/// of the command.
fn tcl_exec(code: &str, outside: &[u8], scan: &mut Scan) {
    for at in calls(outside, "exec") {
        let end = statement_end(outside, at);
        let words = code.get(at..end).unwrap_or_default().trim();
        if words.contains(['$', '[']) {
            scan.runs.push(Run::Dynamic(String::from(
                "Tcl's exec runs a command built when the code runs",
            )));
        } else if !words.is_empty() {
            scan.runs
                .push(Run::Command(words.replace(['{', '}', '"'], "")));
        }
    }
}

/// The host names `text` (a string of code) holds: each word, `user@host`, a URL, a
/// connection string's `Server=`/`host=` part, TRAMP's `/ssh:host:`, gawk's
/// `/inet/tcp/0/host/port`.
fn hosts_of(text: &str, hosts: &mut Vec<String>) {
    for piece in
        text.split(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | '(' | ')' | '"' | '\''))
    {
        if piece.is_empty() {
            continue;
        }
        if let Some(rest) = piece
            .strip_prefix("/inet/")
            .or_else(|| piece.strip_prefix("/inet4/"))
            .or_else(|| piece.strip_prefix("/inet6/"))
        {
            // protocol/local-port/host/remote-port
            hosts.extend(rest.split('/').nth(2).map(str::to_owned));
            continue;
        }
        if let Some(rest) = piece.strip_prefix('/')
            && let Some((method, rest)) = rest.split_once(':')
            && method.chars().all(|c| c.is_ascii_alphanumeric())
        {
            // TRAMP: `/ssh:user@host:/path`, `/ssh:host|sudo:…`.
            let host = rest.split([':', '|']).next().unwrap_or_default();
            hosts.push(host.rsplit('@').next().unwrap_or(host).to_owned());
            continue;
        }
        hosts.extend(net::hosts_in(piece).into_iter().map(str::to_owned));
    }
}

/// gdb's command lines: `shell CMD`, `!CMD`, `pipe …|CMD`, `python CODE`, `target remote
/// host:port`.
fn gdb(code: &str) -> Scan {
    let mut scan = Scan::default();
    for line in code.lines().map(str::trim) {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if let Some(command) = line.strip_prefix('!') {
            scan.runs.push(Run::Command(command.trim().to_owned()));
        } else if matches!(word, "shell" | "she" | "shel") {
            scan.runs.push(Run::Command(rest.to_owned()));
        } else if matches!(word, "pipe" | "|") || word.starts_with('|') {
            let after = line.trim_start_matches("pipe").trim_start_matches('|');
            if let Some((_, command)) = after.split_once('|') {
                scan.runs.push(Run::Command(command.trim().to_owned()));
            }
        } else if matches!(word, "python" | "py" | "python-interactive" | "pi") {
            scan.runs.push(Run::Code(Lang::Python, rest.to_owned()));
        } else if word == "target"
            && let Some(address) = rest
                .strip_prefix("extended-remote")
                .or_else(|| rest.strip_prefix("remote"))
        {
            scan.reach = Some(Reach::Connect("target remote"));
            hosts_of(address.trim(), &mut scan.hosts);
        }
    }
    scan
}

/// sqlite3's dot-commands that run a program: `.shell CMD`, `.system CMD`, and `.output`,
/// `.once` or `.import` to or from `|CMD`.
fn sqlite(code: &str) -> Scan {
    let mut scan = Scan::default();
    for line in code.lines().map(str::trim) {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            ".shell" | ".system" => scan.runs.push(Run::Command(rest.to_owned())),
            ".output" | ".once" | ".import" => {
                let target = rest.trim_start_matches(['"', '\'']);
                if let Some(command) = target.strip_prefix('|') {
                    let command = command.trim_end_matches(['"', '\'']).trim();
                    scan.runs.push(Run::Command(command.to_owned()));
                }
            }
            _ => {}
        }
    }
    scan
}

/// An awk program: gawk's network files (`"/inet/tcp/0/host/port"`). Its `system()` and
/// pipes are read with the program's other commands (`runners`).
fn awk(code: &str) -> Scan {
    let mut scan = Scan::default();
    if code.contains("/inet") {
        scan.reach = Some(Reach::Connect("/inet"));
        hosts_of(code, &mut scan.hosts);
        scan.hosts.retain(|h| !h.is_empty());
    }
    scan
}

#[cfg(test)]
mod tests;
