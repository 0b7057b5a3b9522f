//! Database and cache clients against another machine (`mysql -h`, `psql -h` or a libpq
//! connection string, `sqlcmd -S`, `mongosh --host` or a URI, `redis-cli -h`, `cqlsh HOST`,
//! and the dump and restore tools): the server's host is the target, and the statement they
//! send is judged. A statement the catalog lists as reading (`SELECT`, `SHOW`, `EXPLAIN`,
//! psql's `\d`, redis's `GET`, …), calling only functions it lists, decides nothing; any
//! other, a script file, standard input not seen, or an interactive session can change the
//! server's data: a checkpoint of its host. A connection to this machine (no host,
//! `localhost`, a socket path) decides nothing. Which client is which is the first of its
//! catalog names: `mysql`, `mysqldump`, `psql`, `pg_dump`, `pg_restore`, `sqlcmd`,
//! `mongosh`, `redis-cli`, `cqlsh`.

use super::exec;
use super::unread::named_in_words;
use super::{Ctx, text_in};
use crate::glob::glob_match;
use crate::shell::catalog::Program;
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown};

/// A client's words: options with their values, and operands.
#[derive(Default)]
struct Words {
    options: Vec<(String, Option<Arg>)>,
    operands: Vec<Arg>,
}

impl Words {
    /// The values of every use of these options.
    fn values(&self, names: &[&str]) -> Vec<&Arg> {
        self.options
            .iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .filter_map(|(_, v)| v.as_ref())
            .collect()
    }

    /// Whether one of these options is given.
    fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|(k, _)| names.contains(&k.as_str()))
    }
}

/// Reads a client's options as getopt does: values attached (`-hdb01`, `--host=db01`) or
/// next (`-h db01`), short options bundled (`-Bse`), options among the operands unless the
/// client stops at its first operand (redis-cli, whose operands are the command). mysql's
/// `-p` takes its password only attached: `-p` alone prompts.
fn words(program: &Program, args: &[Arg], stop_at_operand: bool, attached_only: &[&str]) -> Words {
    let takes = |o: &str| program.takes_value(o) || program.host_options.iter().any(|h| h == o);
    let mut parsed = Words::default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        i += 1;
        if text == "--" {
            parsed.operands.extend(args[i..].iter().cloned());
            break;
        }
        if !text.starts_with('-') || text.len() < 2 {
            parsed.operands.push(arg.clone());
            if stop_at_operand {
                parsed.operands.extend(args[i..].iter().cloned());
                break;
            }
            continue;
        }
        let part = |at: usize| Arg {
            raw: text[at..].to_owned(),
            value: arg.value.as_ref().map(|v| v[at..].to_owned()),
        };
        if text.starts_with("--") {
            // `--hos=db01`, `--comm '…'`: getopt_long takes an unambiguous prefix.
            let whole = |key: &str| program.long_option_for(key).unwrap_or(key).to_owned();
            match text.split_once('=') {
                Some((key, _)) => parsed.options.push((whole(key), Some(part(key.len() + 1)))),
                None if takes(&whole(text)) => {
                    parsed.options.push((whole(text), args.get(i).cloned()));
                    i += 1;
                }
                None => parsed.options.push((whole(text), None)),
            }
            continue;
        }
        if takes(text) {
            parsed.options.push((text.to_owned(), args.get(i).cloned()));
            i += 1;
            continue;
        }
        // A bundle of letters: the first that takes a value takes the rest or the next word.
        for (k, c) in text[1..].char_indices() {
            let option = format!("-{c}");
            let at = 1 + k + c.len_utf8();
            if attached_only.contains(&option.as_str()) {
                parsed
                    .options
                    .push((option, (at < text.len()).then(|| part(at))));
                break;
            }
            if takes(&option) {
                if at < text.len() {
                    parsed.options.push((option, Some(part(at))));
                } else {
                    parsed.options.push((option, args.get(i).cloned()));
                    i += 1;
                }
                break;
            }
            parsed.options.push((option, None));
        }
    }
    parsed
}

pub(super) fn database(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let kind = program.names[0].as_str();
    let attached_only: &[&str] = if matches!(kind, "mysql" | "mysqldump") {
        &["-p"]
    } else {
        &[]
    };
    let parsed = words(program, args, kind == "redis-cli", attached_only);
    // mysql's `\!` and `system` run a command on this machine, whatever server it talks to.
    if kind == "mysql" {
        for text in parsed.values(&["-e", "--execute"]) {
            for statement in split_statements(text.value.as_deref().unwrap_or_default(), false) {
                let lower = statement.to_ascii_lowercase();
                if let Some(command) = statement
                    .strip_prefix("\\!")
                    .or_else(|| lower.starts_with("system ").then(|| &statement[7..]))
                {
                    text_in(ctx, command.trim(), Dialect::Posix)?;
                }
            }
        }
    }
    // psql's `\!` runs a command on this machine, whatever server it talks to.
    if kind == "psql" {
        for text in parsed.values(&["-c", "--command"]) {
            shell_escapes(ctx, text.value.as_deref().unwrap_or_default())?;
        }
        if let (Stdin::Text(text), _) | (Stdin::Pipe, Some(text)) = (&cmd.stdin, &cmd.piped) {
            shell_escapes(ctx, text.value.as_deref().unwrap_or_default())?;
        }
    }
    let targets = match server(ctx, program, kind, &parsed, cmd) {
        // No server read: this machine, unless a word still names a protected one.
        Ok(targets) if targets.is_empty() => return named_in_words(ctx, kind, cmd),
        targets => targets,
    };
    let (class, why) = match judge(program, kind, &parsed, cmd, false) {
        Ok(why) => (Class::ReadOnly, why),
        Err(why) => (Class::Mutating, why),
    };
    exec::record(ctx, program, targets, class, why, None);
    Ok(())
}

/// What the client does to its server: why it only reads, or why it can change it. A
/// client run on another machine (`remote`) has its `\!` judged as a change there.
fn judge(
    program: &Program,
    kind: &str,
    parsed: &Words,
    cmd: &Cmd,
    remote: bool,
) -> Result<String, String> {
    match kind {
        "mysqldump" | "pg_dump" => {
            dump(program, parsed).map(|()| String::from("only reads the server's data"))
        }
        "pg_restore" => restore(parsed),
        "redis-cli" => redis(program, parsed, cmd),
        _ => statement(program, kind, parsed, cmd, remote),
    }
}

/// Whether a database client run as a remote command (`ssh db01 'psql -c "select 1"'`)
/// only reads: its statement is judged as on this machine, whatever server it talks to
/// from there. `stdin` is what the remote command reads.
pub(crate) fn reads_remotely(program: &Program, cmd: &Cmd, stdin: &Stdin) -> Result<(), String> {
    let kind = program.names[0].as_str();
    let attached_only: &[&str] = if matches!(kind, "mysql" | "mysqldump") {
        &["-p"]
    } else {
        &[]
    };
    let parsed = words(program, &cmd.words[1..], kind == "redis-cli", attached_only);
    // A file the client writes is written on that machine.
    let output: &[&str] = match kind {
        "psql" => &["-o", "--output", "-L", "--log-file"],
        "mysql" => &["--tee"],
        "sqlcmd" => &["-o"],
        "pg_dump" => &["-f", "--file", "-D", "--pgdata"],
        "mysqldump" => &["-r", "--result-file", "--tab", "-T"],
        "pg_restore" => &["-f", "--file"],
        "redis-cli" => &["--rdb", "--functions-rdb"],
        _ => &[],
    };
    if let Some((option, _)) = parsed
        .options
        .iter()
        .find(|(k, _)| output.contains(&k.as_str()))
    {
        return Err(format!("`{option}` writes a file on the host"));
    }
    let cmd = Cmd {
        stdin: stdin.clone(),
        ..cmd.clone()
    };
    judge(program, kind, &parsed, &cmd, true).map(|_| ())
}

/// The machines the client connects to: none for this machine, `Err` when they are not
/// written (a variable, a defaults file, a service name).
fn server(
    ctx: &Ctx<'_>,
    program: &Program,
    kind: &str,
    parsed: &Words,
    cmd: &Cmd,
) -> Result<Vec<Target>, String> {
    let mut hosts: Vec<Arg> = parsed
        .values(
            &program
                .host_options
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .into_iter()
        .cloned()
        .collect();
    let connection_strings: Vec<&Arg> = match kind {
        "psql" | "pg_dump" | "pg_restore" => {
            let mut found = parsed.values(&["-d", "--dbname"]);
            found.extend(parsed.operands.first());
            found
        }
        // `mongosh db01:27017/app`: a host before the database.
        "mongosh" => {
            if let Some(address) = parsed.operands.first()
                && let Some(value) = address.value.as_deref()
                && !value.contains("://")
                && value.contains(['/', ':'])
            {
                hosts.push(Arg::literal(
                    value.split('/').next().unwrap_or(value).to_owned(),
                ));
                Vec::new()
            } else {
                parsed.operands.first().into_iter().collect()
            }
        }
        "cqlsh" => {
            hosts.extend(parsed.operands.first().cloned());
            Vec::new()
        }
        _ => Vec::new(),
    };
    for text in connection_strings {
        let Some(value) = text.value.as_deref() else {
            return Err(format!(
                "the connection `{}` is only known when the command runs",
                text.raw
            ));
        };
        if value.contains("service=") {
            return Err(format!(
                "the service in `{value}` names a server not read here"
            ));
        }
        hosts.extend(connection_hosts(value).into_iter().map(Arg::literal));
    }
    if hosts.is_empty() {
        // The environment's server: PGHOST, MYSQL_HOST, PGSERVICE or a defaults file.
        let env: &[&str] = match kind {
            "psql" | "pg_dump" | "pg_restore" => &["PGHOST", "PGHOSTADDR"],
            "mysql" | "mysqldump" => &["MYSQL_HOST"],
            _ => &[],
        };
        for var in env {
            hosts.extend(ctx.env(cmd, var));
        }
        if parsed.has(&[
            "--defaults-file",
            "--defaults-extra-file",
            "--defaults-group-suffix",
            "--login-path",
        ]) || cmd.assignments.iter().any(|a| a.starts_with("PGSERVICE="))
        {
            return Err(String::from(
                "the server is named in a file or a service, which is not read here",
            ));
        }
    }
    server_targets(ctx, &hosts)
}

/// The machines the server arguments `hosts` name (a loopback address through the forward it
/// reaches; this machine's own names are none).
fn server_targets(ctx: &Ctx<'_>, hosts: &[Arg]) -> Result<Vec<Target>, String> {
    let mut targets: Vec<Target> = Vec::new();
    for host in hosts {
        let Some(value) = host.value.as_deref() else {
            return Err(format!(
                "the server `{}` is only known when the command runs",
                host.raw
            ));
        };
        let names: Vec<String> = if value.contains("://") {
            connection_hosts(value)
                .iter()
                .map(|h| server_name(h))
                .collect()
        } else {
            // `tcp:db01,1433`: sqlcmd's port after a comma. The first part is always a
            // host, an address spelled as one number (`167772191`) too.
            value
                .split(',')
                .enumerate()
                .filter(|(at, part)| *at == 0 || !part.trim().chars().all(|c| c.is_ascii_digit()))
                .map(|(_, part)| server_name(part))
                .collect()
        };
        for name in names {
            // `ssh -fN -L 6543:localhost:5432 db01 && psql -h localhost -p 6543 …`: this
            // machine's port reaches the machine an earlier ssh forwards it to.
            if crate::inventory::is_loopback(&name)
                && let Some(forwarded) = &ctx.forwarded
            {
                if !targets.contains(forwarded) {
                    targets.push(forwarded.clone());
                }
                continue;
            }
            if name.is_empty() || is_this_machine(&name) {
                continue;
            }
            let target = Target {
                name,
                kind: TargetKind::Host,
            };
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
    }
    Ok(targets)
}

/// The hosts a connection string names: a URI (`postgresql://app@db01:5432/app`,
/// `mongodb://db01,db02/app`, `redis://db01`), or libpq's `host=db01 dbname=app`. A plain
/// database name names none.
fn connection_hosts(text: &str) -> Vec<String> {
    if let Some((_, rest)) = text.split_once("://") {
        let authority = rest.split(['/', '?']).next().unwrap_or(rest);
        let hosts = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        return hosts.split(',').map(str::to_owned).collect();
    }
    text.split_whitespace()
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            matches!(key, "host" | "hostaddr").then(|| value.trim_matches(['\'', '"']).to_owned())
        })
        .collect()
}

/// `db01:5432`, `tcp:db01,1433`, `db01\SQLEXPRESS`, `[::1]:5432` → the host.
fn server_name(text: &str) -> String {
    let text = text.trim();
    let text = text.strip_prefix("tcp:").unwrap_or(text);
    // mongosh's `rs0/db01:27017`: a replica set's name before its hosts.
    let text = match text.split_once('/') {
        Some((_, host)) if !text.starts_with('/') => host,
        _ => text,
    };
    let text = text.split('\\').next().unwrap_or(text);
    if let Some(inner) = text.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner).to_owned();
    }
    match text.split_once(':') {
        Some((host, port)) if !port.contains(':') => host.to_owned(),
        _ => text.to_owned(),
    }
}

/// This machine: no VM to checkpoint (a socket directory, a named pipe, `.`, `(local)`).
fn is_this_machine(host: &str) -> bool {
    let lower = host.to_ascii_lowercase();
    matches!(lower.as_str(), "." | "(local)" | "unix")
        || crate::inventory::is_loopback(&lower)
        || lower.starts_with(['/', '@'])
        || lower.starts_with("(localdb)")
        || lower.starts_with("np:")
        || lower.starts_with("lpc:")
        || lower.starts_with("unix:")
}

/// A dump only reads, unless an option changes the server (`--delete-source-logs`).
fn dump(program: &Program, parsed: &Words) -> Result<(), String> {
    match parsed
        .options
        .iter()
        .find(|(k, _)| program.mutating_options.iter().any(|m| m == k))
    {
        Some((option, _)) => Err(format!("`{option}` changes the server")),
        None => Ok(()),
    }
}

/// pg_restore writes into the database `-d` names; without one it prints a script, or
/// with `-l` lists the archive.
fn restore(parsed: &Words) -> Result<String, String> {
    if parsed.has(&["-l", "--list"]) || !parsed.has(&["-d", "--dbname"]) {
        return Ok(String::from("prints the archive and writes no database"));
    }
    Err(String::from("restores into the server's database"))
}

/// The statements a SQL, CQL or JavaScript client sends (`-e`, `-c`, `-Q`, `--eval`, a
/// here-document), judged; a script file, standard input not seen, or none at all (an
/// interactive session) can change the server.
fn statement(
    program: &Program,
    kind: &str,
    parsed: &Words,
    cmd: &Cmd,
    remote: bool,
) -> Result<String, String> {
    let (texts, files, interactive): (&[&str], &[&str], &[&str]) = match kind {
        "mysql" => (&["-e", "--execute", "--init-command"], &[], &[]),
        "psql" => (&["-c", "--command"], &["-f", "--file"], &[]),
        "sqlcmd" => (&["-Q"], &["-i"], &["-q"]),
        "mongosh" => (&["--eval"], &["-f", "--file"], &["--shell"]),
        "cqlsh" => (&["-e", "--execute"], &["-f", "--file"], &[]),
        _ => (&[], &[], &[]),
    };
    if kind == "psql" && parsed.has(&["-l", "--list"]) {
        return Ok(String::from("lists the databases"));
    }
    if let Some(file) = parsed.values(files).first() {
        return Err(format!("runs the script `{}` on the server", file.raw));
    }
    if parsed.has(interactive) {
        return Err(String::from("opens an interactive session on the server"));
    }
    // mongosh's operands after the connection are script files.
    if kind == "mongosh" && parsed.operands.len() > 1 {
        return Err(format!(
            "runs the script `{}` on the server",
            parsed.operands[1].raw
        ));
    }
    let mut statements: Vec<Arg> = parsed.values(texts).into_iter().cloned().collect();
    if statements.is_empty() {
        match (&cmd.stdin, &cmd.piped) {
            (Stdin::Text(text), _) | (Stdin::Pipe, Some(text)) => statements.push(text.clone()),
            (Stdin::Inherited, _) => {
                return Err(String::from("opens an interactive session on the server"));
            }
            _ => {
                return Err(String::from(
                    "runs the statements it reads from standard input, which are not seen",
                ));
            }
        }
    }
    for text in &statements {
        let Some(value) = text.value.as_deref() else {
            return Err(format!(
                "sends `{}`, which is only known when the command runs",
                text.raw
            ));
        };
        if kind == "psql" && value.trim_start().starts_with('\\') {
            meta_commands(program, value, remote)?;
        } else if kind == "psql" {
            // A script's lines that start with `\` are meta-commands.
            let (meta, sql): (Vec<&str>, Vec<&str>) = value
                .lines()
                .partition(|l| l.trim_start().starts_with('\\'));
            for line in meta {
                meta_commands(program, line, remote)?;
            }
            statements_read(program, kind, &sql.join("\n"))?;
        } else {
            statements_read(program, kind, value)?;
        }
    }
    Ok(String::from("its statements only read"))
}

/// The commands psql's `\!` meta-commands run on this machine (`\! ssh web01 reboot`),
/// analysed as commands typed here.
fn shell_escapes(ctx: &mut Ctx<'_>, text: &str) -> Result<(), Unknown> {
    for line in text.lines() {
        for part in line.split("\\\\").map(str::trim) {
            if let Some(command) = part.strip_prefix("\\!") {
                text_in(ctx, command.trim(), Dialect::Posix)?;
            }
        }
    }
    Ok(())
}

/// psql's meta-commands (`\dt`, `\l`, `\x \\ \dt`): those the catalog lists only describe;
/// `\!` runs a command on this machine, analysed as one.
fn meta_commands(program: &Program, text: &str, remote: bool) -> Result<(), String> {
    for part in text.split("\\\\").map(str::trim).filter(|p| !p.is_empty()) {
        let name = part.split_whitespace().next().unwrap_or(part);
        // `\!` runs on the machine psql runs on: here, read as a command of its own
        // (`shell_escapes`); there, a command that is not judged.
        if name == "\\!" && !remote {
            continue;
        }
        if !program.read_only.iter().any(|r| glob_match(r, name)) {
            return Err(format!(
                "`{name}` is not a meta-command that only describes"
            ));
        }
    }
    Ok(())
}

/// Each statement of a SQL, CQL or JavaScript text (split on `;` and, for JavaScript, lines,
/// outside quotes) begins with a word the catalog lists as reading, writes no table or file
/// (`INTO`, `$out`), and calls only functions it lists (`count(`, `find(`).
fn statements_read(program: &Program, kind: &str, text: &str) -> Result<(), String> {
    for statement in split_statements(text, kind == "mongosh") {
        let words: Vec<&str> = statement
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '\\' | '.' | '$')))
            .filter(|w| !w.is_empty())
            .collect();
        let Some(first) = words.first() else {
            continue;
        };
        let first = first.to_ascii_uppercase();
        let keywords: Vec<&String> = program
            .read_only
            .iter()
            .filter(|r| !r.ends_with('('))
            .collect();
        let javascript = kind == "mongosh";
        // A client's own commands (`\gexec` at a line's end, mysql's `\!`, sqlcmd's `:!!`)
        // run beside the SQL.
        if !javascript
            && (!statement.starts_with(char::is_alphabetic) || unquoted_backslash(&statement))
        {
            return Err(format!(
                "`{}` holds a command of the client, which is not read here",
                clip(&statement)
            ));
        }
        if !javascript && !keywords.iter().any(|k| k.eq_ignore_ascii_case(&first)) {
            return Err(format!(
                "sends `{}`, which can change the server",
                clip(&statement)
            ));
        }
        // `EXPLAIN ANALYZE DELETE …` runs the statement it explains.
        if first == "EXPLAIN"
            && words
                .iter()
                .any(|w| w.eq_ignore_ascii_case("analyze") || w.eq_ignore_ascii_case("analyse"))
            && words.iter().any(|w| {
                [
                    "insert", "update", "delete", "merge", "create", "drop", "truncate",
                ]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
            })
        {
            return Err(format!(
                "`{}` runs the statement it explains",
                clip(&statement)
            ));
        }
        if javascript && first == "SHOW" {
            continue;
        }
        if let Some(word) = words.iter().find(|w| {
            ["into", "$out", "$merge", "outfile", "dumpfile"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k))
        }) {
            return Err(format!("`{}` writes with `{word}`", clip(&statement)));
        }
        if let Some(call) = calls(&statement)
            .into_iter()
            .find(|call| !function_reads(program, call))
        {
            return Err(format!(
                "`{}` calls `{call}`, which is not known to only read",
                clip(&statement)
            ));
        }
        // `${…}` in a template literal runs code; an assignment can make a name another
        // function (`x = db.users; x.drop()`).
        if javascript && (statement.contains("${") || assigns(&statement)) {
            return Err(format!(
                "`{}` runs code that is not read here",
                clip(&statement)
            ));
        }
    }
    Ok(())
}

/// SQL's own words that take parentheses, which are no function call.
const SQL_SYNTAX: &[&str] = &[
    "in",
    "exists",
    "any",
    "some",
    "all",
    "values",
    "over",
    "filter",
    "as",
    "from",
    "join",
    "on",
    "using",
    "where",
    "and",
    "or",
    "not",
    "select",
    "within",
    "by",
    "when",
    "then",
    "else",
    "lateral",
    "row",
    "array",
    "cast",
    "extract",
    "case",
    "is",
    "like",
    "between",
    "partition",
    "distinct",
    "count",
    "table",
    "explain",
    "analyze",
    "with",
    "recursive",
];

/// Whether a function call only reads: SQL's own syntax, or a function the catalog lists
/// (`count(`, `pg_size_pretty(`, `find(`), by its name without a schema or an object.
fn function_reads(program: &Program, call: &str) -> bool {
    let name = call.rsplit('.').next().unwrap_or(call).to_ascii_lowercase();
    SQL_SYNTAX.contains(&name.as_str())
        || program
            .read_only
            .iter()
            .filter_map(|r| r.strip_suffix('('))
            .any(|f| glob_match(&f.to_ascii_lowercase(), &name))
}

/// Whether a statement holds a backslash outside quotes.
fn unquoted_backslash(statement: &str) -> bool {
    let mut quote: Option<char> = None;
    for c in statement.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            None if matches!(c, '\'' | '"' | '`') => quote = Some(c),
            None if c == '\\' => return true,
            _ => {}
        }
    }
    false
}

/// Whether a JavaScript statement assigns (`=`, `+=`, but not `==`, `!=`, `<=`, `>=` or an
/// arrow `=>`), outside quotes.
fn assigns(statement: &str) -> bool {
    let chars: Vec<char> = statement.chars().collect();
    let mut quote: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        if matches!(c, '\'' | '"' | '`') {
            quote = Some(c);
            continue;
        }
        if c != '=' {
            continue;
        }
        let before = i.checked_sub(1).map(|k| chars[k]);
        let after = chars.get(i + 1).copied();
        if !matches!(before, Some('=' | '!' | '<' | '>')) && !matches!(after, Some('=' | '>')) {
            return true;
        }
    }
    false
}

/// The names called in a statement: each word right before a `(` (spaces between
/// allowed), outside quotes.
fn calls(statement: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut word = String::new();
    // A word followed by spaces, which a `(` may still call.
    let mut pending: Option<String> = None;
    let mut quote: Option<char> = None;
    // The last character outside quotes and white space before this one.
    let mut last: Option<char> = None;
    for c in statement.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
                last = Some(c);
            }
            continue;
        }
        let previous = last;
        if !c.is_whitespace() {
            last = Some(c);
        }
        let last = previous;
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                word.clear();
                pending = None;
            }
            '(' => {
                let name = if word.is_empty() {
                    pending.take()
                } else {
                    Some(std::mem::take(&mut word))
                };
                // `(f)()`, `x['drop']()`: a call of what is not named here.
                let unnamed = name.is_none() && matches!(last, Some(')' | ']'));
                found.extend(name.or_else(|| unnamed.then(|| String::from("(…)"))));
                pending = None;
            }
            c if c.is_alphanumeric() || matches!(c, '_' | '.' | '$') => {
                if word.is_empty() {
                    pending = None;
                }
                word.push(c);
            }
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    pending = Some(std::mem::take(&mut word));
                }
            }
            _ => {
                word.clear();
                pending = None;
            }
        }
    }
    found
}

/// A text split into statements on `;` (and newlines, for JavaScript) outside quotes,
/// `--` and `/* */` comments dropped.
fn split_statements(text: &str, lines_too: bool) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if let Some(q) = quote {
            current.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.get(i)) {
            ('\'' | '"' | '`', _) => {
                quote = Some(c);
                current.push(c);
            }
            ('-', Some('-')) | ('/', Some('/')) => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            (';', _) => statements.push(std::mem::take(&mut current)),
            ('\n', _) if lines_too => statements.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    statements.push(current);
    statements
        .into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// redis-cli: the command in its operands (`GET k`, `CLIENT LIST`, as the catalog writes
/// them `CLIENT|LIST`), or a mode that only reads (`--scan`, `--bigkeys`, `--stat`).
fn redis(program: &Program, parsed: &Words, cmd: &Cmd) -> Result<String, String> {
    if let Some((option, _)) = parsed
        .options
        .iter()
        .find(|(k, _)| program.mutating_options.iter().any(|m| m == k))
    {
        return Err(format!("`{option}` can change the server"));
    }
    let Some(command) = parsed.operands.first() else {
        if let Some((mode, _)) = parsed
            .options
            .iter()
            .find(|(k, _)| program.read_only.iter().any(|r| r == k))
        {
            return Ok(format!("`{mode}` only reads"));
        }
        return match cmd.stdin {
            Stdin::Inherited => Err(String::from("opens an interactive session on the server")),
            _ => Err(String::from(
                "runs the commands it reads from standard input, which are not seen",
            )),
        };
    };
    let Some(name) = command.value.as_deref() else {
        return Err(format!(
            "runs `{}`, which is only known when the command runs",
            command.raw
        ));
    };
    let name = name.to_ascii_uppercase();
    let two = parsed
        .operands
        .get(1)
        .and_then(|a| a.value.as_deref())
        .map(|sub| format!("{name}|{}", sub.to_ascii_uppercase()));
    let listed = |word: &str| program.read_only.iter().any(|r| r == word);
    if let Some(two) = two.as_deref().filter(|t| listed(t)) {
        Ok(format!("`{}` only reads", two.replace('|', " ")))
    } else if listed(&name) {
        Ok(format!("`{name}` only reads"))
    } else {
        Err(format!("`{}` can change the server", two.unwrap_or(name)))
    }
}

/// A statement shortened for a message.
fn clip(statement: &str) -> String {
    crate::shell::types::clip(statement)
}
