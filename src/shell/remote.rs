//! Is a remote command read-only? It is parsed again and every simple command in it must be
//! on the read-only allowlist of the shell catalog (`[remote]`, or `[windows]` for winrs,
//! psexec and PowerShell script blocks). A redirection into a file, a command name only known
//! at run time, a script read from standard input that is not seen, or any command not listed
//! makes it mutating: a wrong "read-only" fails open, a wrong "mutating" costs a checkpoint.

use super::catalog::{Grammar, RemoteRule, ShellCatalog};
use super::dialect::Dialect;
use super::runners;
use super::types::{Arg, Class, Cmd, Stdin};
use super::walk::Walk;
use super::wrappers::{Next, unwrap};

/// What judging a remote command needs: the catalog's read-only lists, and the limits of
/// the analysis it is part of.
pub(crate) struct Judge<'a> {
    pub(crate) catalog: &'a ShellCatalog,
    pub(crate) walk: &'a mut Walk,
}

/// Classifies a POSIX remote command. `stdin` is what the remote side reads (a here-document
/// given to `ssh host bash -s`).
pub(crate) fn classify(ctx: &mut Judge<'_>, text: &str, stdin: &Stdin) -> (Class, String) {
    let commands = match ctx.walk.parse(text, Dialect::Posix) {
        Ok(commands) => commands,
        Err(e) => {
            return (
                Class::Mutating,
                format!("the remote command could not be judged ({})", e.0),
            );
        }
    };
    let mut readers: Vec<String> = Vec::new();
    if let Err(why) = check_all(ctx, &commands, stdin, &mut readers) {
        return (Class::Mutating, why);
    }
    if readers.is_empty() {
        (Class::ReadOnly, String::from("runs nothing on the host"))
    } else {
        (
            Class::ReadOnly,
            format!("only reads ({})", readers.join(", ")),
        )
    }
}

fn check_all(
    ctx: &mut Judge<'_>,
    commands: &[Cmd],
    stdin: &Stdin,
    readers: &mut Vec<String>,
) -> Result<(), String> {
    for cmd in commands {
        let stdin = if cmd.stdin == Stdin::Inherited {
            stdin
        } else {
            &cmd.stdin
        };
        check(ctx, cmd, stdin, readers)?;
    }
    Ok(())
}

/// A nested remote text (`bash -c '…'`), its readers noted with the outer ones.
fn classify_into(
    ctx: &mut Judge<'_>,
    text: &str,
    stdin: &Stdin,
    readers: &mut Vec<String>,
) -> Result<(), String> {
    let commands = ctx
        .walk
        .parse(text, Dialect::Posix)
        .map_err(|e| format!("the remote command could not be judged ({})", e.0))?;
    check_all(ctx, &commands, stdin, readers)
}

/// The command a wrapper runs on the host, judged with the wrapper's input.
fn check_inner(
    ctx: &mut Judge<'_>,
    cmd: &Cmd,
    words: Vec<Arg>,
    stdin: &Stdin,
    readers: &mut Vec<String>,
) -> Result<(), String> {
    let inner = Cmd {
        words,
        ..cmd.clone()
    };
    if ctx.walk.enter().is_err() {
        return Err(String::from("nests too deeply to be judged"));
    }
    let result = check(ctx, &inner, stdin, readers);
    ctx.walk.leave();
    result
}

fn check(
    ctx: &mut Judge<'_>,
    cmd: &Cmd,
    stdin: &Stdin,
    readers: &mut Vec<String>,
) -> Result<(), String> {
    if let Some(file) = &cmd.writes {
        return Err(format!("writes to {file} on the host"));
    }
    // `LESSOPEN='|reboot %s' less f`, and `PAGER=x` alone (the variable may be exported).
    code_variable(&cmd.assignments)?;
    let Some(first) = cmd.words.first() else {
        return Ok(());
    };
    let Some(name) = first.value.as_deref() else {
        return Err(format!(
            "runs `{}`, a program only known when it runs",
            first.raw
        ));
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    match unwrap(ctx.catalog, &cmd.words, stdin) {
        Next::No => {}
        Next::Nothing
            if matches!(
                base,
                "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "fish"
            ) =>
        {
            return Err(format!("runs a {base} script that is not seen here"));
        }
        Next::Nothing if runs_nothing(base, cmd) => return Ok(()),
        // An awk program is judged by the read-only rules; other code is not read remotely.
        Next::Code(handed) if handed.lang == super::code::Lang::Awk => {}
        Next::Nothing | Next::Code(_) => {
            return Err(format!("runs `{base}`, which is not on the read-only list"));
        }
        Next::Argv(words) => {
            // `env PAGER=x git log`, `sudo LD_PRELOAD=x.so cat f`: the wrapper's own words set
            // the environment of what it runs.
            let own = &cmd.words[1..cmd.words.len().saturating_sub(words.len())];
            let set: Vec<String> = own.iter().map(|w| w.text().to_owned()).collect();
            code_variable(&set)?;
            return check_inner(ctx, cmd, words, stdin, readers);
        }
        Next::Commands(commands) => {
            for words in commands {
                check_inner(ctx, cmd, words, stdin, readers)?;
            }
            return Ok(());
        }
        Next::Text(text, dialect) => return judge_text(ctx, name, text, dialect, stdin, readers),
        Next::Opaque(reason) | Next::Piped(reason) | Next::Ask(reason) => return Err(reason),
        Next::Texts(texts, dialect) => {
            for text in texts {
                judge_text(ctx, name, text, dialect, stdin, readers)?;
            }
            return Ok(());
        }
    }
    // `psql -c 'select 1'`, `redis-cli INFO`: a database client's statement is judged.
    if let Some(program) = ctx
        .catalog
        .program(base)
        .filter(|p| p.grammar == Grammar::Database)
    {
        super::programs::reads_remotely(program, cmd, stdin)?;
        note(readers, base);
        return Ok(());
    }
    let mut args: Vec<&str> = cmd.words[1..].iter().map(Arg::text).collect();
    // `docker compose logs` is Compose's own command line, as `docker-compose logs` is.
    let compose;
    let base = if matches!(base, "docker" | "podman") && args.first() == Some(&"compose") {
        args.remove(0);
        compose = String::from("docker-compose");
        compose.as_str()
    } else {
        base
    };
    // A rule's conditions hold even for a program the plain list names (`rg --pre`).
    if let Some(rule) = ctx.catalog.remote_rule(base) {
        rule_allows(rule, &args)?;
        note(readers, base);
        return Ok(());
    }
    if ctx.catalog.remote_read_only(base) {
        note(readers, base);
        return Ok(());
    }
    Err(format!("runs `{base}`, which is not on the read-only list"))
}

/// Refuses assignments (`NAME=value`) of a variable that makes the command run a program or
/// load code: a read-only program run with `LESSOPEN`, `PAGER` or `LD_PRELOAD` set runs what
/// they name.
fn code_variable(assignments: &[String]) -> Result<(), String> {
    match assignments
        .iter()
        .filter_map(|a| a.split_once('=').map(|(name, _)| name))
        .find(|name| runners::runs_code(name))
    {
        Some(name) => Err(format!(
            "sets `{name}`, which can make it run a program or load code"
        )),
        None => Ok(()),
    }
}

/// Judges a command text a wrapper named `name` runs (`bash -c`, tmux's `send-keys`, an expect
/// `spawn` line), one nesting level deeper, in its dialect: text only known when it runs is
/// never read-only.
fn judge_text(
    ctx: &mut Judge<'_>,
    name: &str,
    text: Arg,
    dialect: Dialect,
    stdin: &Stdin,
    readers: &mut Vec<String>,
) -> Result<(), String> {
    let Some(value) = text.value else {
        return Err(format!(
            "`{name}` runs `{}`, which is only known when it runs",
            text.raw
        ));
    };
    if ctx.walk.enter().is_err() {
        return Err(String::from("nests too deeply to be judged"));
    }
    let result = match dialect {
        Dialect::Posix => classify_into(ctx, &value, stdin, readers),
        Dialect::PowerShell => match classify_windows(ctx, &value) {
            (Class::ReadOnly, _) => Ok(()),
            (Class::Mutating, why) => Err(why),
        },
    };
    ctx.walk.leave();
    result
}

/// Whether a wrapper that was given nothing to run (`command -v x`, `sudo -l`) does nothing
/// itself. Any other (`xargs rm`, `source ./deploy.sh`, `python3 app.py`, `tmux
/// kill-server`, `sudo -e /etc/x`) runs what is not seen or changes something.
fn runs_nothing(base: &str, cmd: &Cmd) -> bool {
    matches!(
        base,
        "command"
            | "alias"
            | "time"
            | "nohup"
            | "nice"
            | "timeout"
            | "exec"
            | "builtin"
            | "env"
            | "setsid"
            | "stdbuf"
            | "chronic"
            | "unbuffer"
            | "sudo"
            | "doas"
            | "xargs"
    ) && !cmd.words[1..]
        .iter()
        .any(|a| matches!(a.text(), "-e" | "--edit"))
}

fn note(readers: &mut Vec<String>, name: &str) {
    if !readers.iter().any(|r| r == name) {
        readers.push(name.to_owned());
    }
}

fn rule_allows(rule: &RemoteRule, args: &[&str]) -> Result<(), String> {
    let name = &rule.command;
    // Options and operands, the values of value options taken with them, so that `-p
    // status reboot` is read as the subcommand `reboot`. An option not known to the rule
    // before the subcommand could take a value and hide it: mutating.
    let takes_value = |option: &str| rule.value_options.iter().any(|v| v == option);
    let mut operands: Vec<&str> = Vec::new();
    let mut options: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if *arg == "--" {
            operands.extend(&args[i..]);
            break;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            options.push(arg);
            let key = arg.split_once('=').map_or(*arg, |(k, _)| k);
            // `-p status`, `--property status`, `-np status` (the last letter of a bundle).
            let last_letter_takes = !arg.starts_with("--")
                && arg.len() > 2
                && arg
                    .chars()
                    .last()
                    .is_some_and(|c| takes_value(&format!("-{c}")));
            let whole_takes = (arg.starts_with("--") || arg.len() == 2) && takes_value(key);
            if !arg.contains('=') && (whole_takes || last_letter_takes) {
                i += 1;
            } else if !rule.subcommands.is_empty()
                && operands.is_empty()
                && !rule.value_options.is_empty()
                && !rule.subcommands.iter().any(|s| s == arg)
                && !known_flag(rule, key)
            {
                return Err(format!(
                    "runs `{name}` with `{arg}` before its subcommand, an option not read here"
                ));
            }
            continue;
        }
        operands.push(arg);
    }
    if !rule.subcommands.is_empty() {
        let first_option = options
            .first()
            .filter(|a| rule.subcommands.iter().any(|s| s == **a));
        let sub = first_option
            .copied()
            .or_else(|| operands.first().copied())
            .unwrap_or("");
        if !rule.subcommands.iter().any(|s| s == sub) {
            return Err(if sub.is_empty() {
                format!("runs `{name}` with no read-only subcommand")
            } else {
                format!("runs `{name} {sub}`, which is not on the read-only list")
            });
        }
    }
    if let Some(at) = rule.action_at {
        // `ip l se eth0 down`: iproute2 takes any abbreviation of a command.
        if let Some(action) = operands.get(at - 1)
            && !rule.actions.iter().any(|a| a.starts_with(action))
        {
            return Err(format!("runs `{name} … {action}`, which changes things"));
        }
        // `ip link s eth0 down`: iproute2 tries `set` before `show` for links, so `s` and
        // `se` set (for addresses and routes `s` is `show`).
        if name == "ip"
            && let [object, action, ..] = operands.as_slice()
            && "link".starts_with(*object)
            && "set".starts_with(*action)
        {
            return Err(format!("runs `ip {object} {action}`, which sets the link"));
        }
    }
    unless_allows(rule, args)?;
    if let Some(only) = &rule.only_options {
        for option in &options {
            let key = option.split_once('=').map_or(*option, |(k, _)| k);
            let known = |o: &str| only.iter().chain(&rule.value_options).any(|k| k == o);
            let understood = if key.starts_with("--") {
                known(key)
            } else {
                key[1..].chars().all(|c| known(&format!("-{c}")))
            };
            if !understood {
                return Err(format!("runs `{name} {option}`, an option not read here"));
            }
        }
    }
    if let Some(max) = rule.operands_max
        && operands.len() > max
    {
        return Err(format!("runs `{name}` with operands, which changes things"));
    }
    if name == "sed" {
        sed_allows(args, &operands)?;
    }
    // `date 010100002020` sets the clock; `date +%s` only formats.
    if name == "date"
        && let Some(operand) = operands.iter().find(|o| !o.starts_with('+'))
    {
        return Err(format!("runs `date {operand}`, which sets the clock"));
    }
    Ok(())
}

/// sed's scripts (each -e value, or else the first operand) only print.
fn sed_allows(args: &[&str], operands: &[&str]) -> Result<(), String> {
    let mut scripts: Vec<&str> = args
        .windows(2)
        .filter(|w| matches!(w[0], "-e" | "--expression"))
        .map(|w| w[1])
        .collect();
    scripts.extend(args.iter().filter_map(|a| a.strip_prefix("--expression=")));
    if scripts.is_empty() {
        scripts.extend(operands.first());
    }
    match scripts.iter().find(|s| !sed_script_reads(s)) {
        Some(script) => Err(format!(
            "runs `sed` with the script `{script}`, which can run commands or write files"
        )),
        None => Ok(()),
    }
}

/// Whether a sed script only prints: every command is one that prints, deletes, moves or
/// substitutes (without the `e` and `w` flags); `e`, `w`, `W`, `r`, `R` and anything not
/// understood are not.
pub(crate) fn sed_script_reads(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            // An address `/re/` or `\cREc`.
            '/' => {
                i += 1;
                while i < chars.len() && chars[i] != '/' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                    i += 1;
                }
            }
            // Separators, line addresses, and commands that print, delete or move text.
            ' '
            | '\t'
            | '\n'
            | ';'
            | '{'
            | '}'
            | '!'
            | ','
            | '$'
            | '+'
            | '~'
            | '0'..='9'
            | 'p'
            | 'P'
            | 'd'
            | 'D'
            | 'q'
            | 'Q'
            | '='
            | 'l'
            | 'n'
            | 'N'
            | 'h'
            | 'H'
            | 'g'
            | 'G'
            | 'x'
            | 'z'
            | 'F' => i += 1,
            // Labels and branches: `:a`, `b a`, `t a`, `T a`.
            ':' | 'b' | 't' | 'T' => {
                i += 1;
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&delimiter) = chars.get(i + 1) else {
                    return false;
                };
                if delimiter == '\\' || delimiter == '\n' {
                    return false;
                }
                i += 2;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delimiter {
                        i += if chars[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                if c == 's' {
                    while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}' | ' ') {
                        if !matches!(chars[i], 'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9') {
                            return false;
                        }
                        i += 1;
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// No argument is one the rule names as changing things (`unless`, `unless_short`,
/// `unless_text`).
fn unless_allows(rule: &RemoteRule, args: &[&str]) -> Result<(), String> {
    let name = &rule.command;
    for arg in args {
        let key = arg.split_once('=').map_or(*arg, |(k, _)| k);
        for unless in &rule.unless {
            let prefix = unless.strip_suffix('*');
            let hit = match prefix {
                Some(prefix) => key.starts_with(prefix),
                None => key == unless,
            } || abbreviates(key, prefix.unwrap_or(unless));
            if hit {
                return Err(format!("runs `{name} {arg}`, which changes things"));
            }
        }
        if !rule.unless_short.is_empty()
            && arg.starts_with('-')
            && !arg.starts_with("--")
            && arg[1..].chars().any(|c| rule.unless_short.contains(c))
        {
            return Err(format!("runs `{name} {arg}`, which changes things"));
        }
        if let Some(text) = rule.unless_text.iter().find(|t| arg.contains(t.as_str())) {
            return Err(format!(
                "runs `{name}` with `{text}` in its arguments, which can change things"
            ));
        }
    }
    Ok(())
}

/// A long option written shorter (`--i` for `--in-place`, `--o` for `--output`): GNU
/// getopt takes any unambiguous prefix, one letter after the dashes included.
fn abbreviates(key: &str, long: &str) -> bool {
    key.starts_with("--") && long.starts_with("--") && key.len() >= 3 && long.starts_with(key)
}

/// Whether a rule knows `option` as a flag without a value before its subcommand.
fn known_flag(rule: &RemoteRule, option: &str) -> bool {
    rule.global_options.iter().any(|o| o == option)
        || rule
            .only_options
            .as_ref()
            .is_some_and(|only| only.iter().any(|o| o == option))
}

/// The texts of the `{ … }` blocks inside a word (a hashtable's `e={ … }`).
fn inner_blocks(raw: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let chars: Vec<char> = raw.chars().collect();
    let mut at = 0;
    while let Some(start) = chars[at..].iter().position(|c| *c == '{').map(|p| at + p) {
        let mut depth = 0usize;
        let mut end = None;
        for (k, c) in chars.iter().enumerate().skip(start) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        // `@{ … }` itself is the hashtable; only the blocks inside it are code.
        if start > 0 && chars[start - 1] == '@' {
            at = start + 1;
            continue;
        }
        blocks.push(chars[start + 1..end].iter().collect());
        at = end + 1;
    }
    blocks
}

/// Classifies a cmd.exe remote command (winrs, psexec) by the `[windows]` list: `a & b`,
/// `a && b` and `a || b` run one after the other, and `cmd /c TEXT` runs TEXT.
pub(crate) fn classify_cmd(ctx: &mut Judge<'_>, text: &str) -> (Class, String) {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    if let Some(rest) = ["cmd /c ", "cmd.exe /c ", "cmd /k ", "cmd.exe /k "]
        .iter()
        .find_map(|p| lower.starts_with(p).then(|| trimmed[p.len()..].trim()))
    {
        let inner = rest
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(rest);
        if ctx.walk.enter().is_err() {
            return (
                Class::Mutating,
                String::from("nests too deeply to be judged"),
            );
        }
        let judged = classify_cmd(ctx, inner);
        ctx.walk.leave();
        return judged;
    }
    // Read by PowerShell's tokenizer, cmd.exe's text must not hide a command: `#` starts no
    // comment in cmd.exe, and neither a backtick nor a single quote protects `&` there.
    let plain: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '#' | '`' | '\'') {
                '_'
            } else {
                c
            }
        })
        .collect();
    classify_windows(ctx, &plain.replace("||", ";").replace('&', ";"))
}

/// Classifies a Windows remote command (cmd.exe or PowerShell) by the `[windows]` list.
/// `gsv W3SVC | % Stop`, `ForEach-Object -MemberName Kill`: a member name calls a method on
/// each object.
fn calls_a_member(name: &str, args: &[Arg]) -> Option<String> {
    if !matches!(
        name.to_ascii_lowercase().as_str(),
        "foreach-object" | "%" | "foreach"
    ) {
        return None;
    }
    let member = args
        .iter()
        .find(|a| !a.raw.starts_with('{') && !a.raw.starts_with('-') && !a.raw.starts_with('('))?;
    Some(format!(
        "`{name} {}` calls a method on each object",
        member.raw
    ))
}

/// `ipconfig /release`, `/renew`, `/flushdns`, `/setclassid`: only its reports read.
fn ipconfig_changes(name: &str, args: &[Arg]) -> Option<String> {
    let switch = args.iter().find(|a| {
        !matches!(
            a.raw.to_ascii_lowercase().as_str(),
            "/all" | "/displaydns" | "/allcompartments" | "/?" | "-all"
        )
    });
    match switch {
        Some(switch) if name.eq_ignore_ascii_case("ipconfig") => Some(format!(
            "runs `ipconfig {}`, which changes the network settings",
            switch.raw
        )),
        _ => None,
    }
}

pub(crate) fn classify_windows(ctx: &mut Judge<'_>, text: &str) -> (Class, String) {
    let commands = match ctx.walk.parse(text, Dialect::PowerShell) {
        Ok(commands) => commands,
        Err(e) => {
            return (
                Class::Mutating,
                format!("the remote command could not be judged ({})", e.0),
            );
        }
    };
    let mut readers: Vec<String> = Vec::new();
    for cmd in &commands {
        if let Some(file) = &cmd.writes {
            return (Class::Mutating, format!("writes to {file} on the computer"));
        }
        let Some(first) = cmd.words.first() else {
            continue;
        };
        let Some(name) = first.value.as_deref() else {
            // `$_.Name` reads a property; `$h = Get-HotFix` is judged by what it runs; a
            // method call (`$_.Kill()`) or anything else is not read.
            let plain = first.raw.starts_with('$') && !first.raw.contains(['(', '[', '{']);
            match cmd.words.get(1).map(|w| w.raw.as_str()) {
                None if plain => continue,
                Some("=") if plain && cmd.words.len() > 2 => {
                    let rest: Vec<String> = cmd.words[2..].iter().map(|w| w.raw.clone()).collect();
                    if ctx.walk.enter().is_err() {
                        return (
                            Class::Mutating,
                            String::from("nests too deeply to be judged"),
                        );
                    }
                    let (class, why) = classify_windows(ctx, &rest.join(" "));
                    ctx.walk.leave();
                    if class == Class::Mutating {
                        return (class, why);
                    }
                    continue;
                }
                _ => {}
            }
            return (
                Class::Mutating,
                format!("runs `{}`, only known when it runs", first.raw),
            );
        };
        if !ctx.catalog.windows_read_only(name) {
            return (
                Class::Mutating,
                format!("runs `{name}`, which is not on the read-only list"),
            );
        }
        if let Some(why) = ipconfig_changes(name, &cmd.words[1..]) {
            return (Class::Mutating, why);
        }
        if let Some(why) = calls_a_member(name, &cmd.words[1..]) {
            return (Class::Mutating, why);
        }
        // Script blocks handed to a read-only cmdlet (`ForEach-Object { … }`) run too, and
        // so do those inside calculated properties (`Select-Object @{e={ … }}`).
        let blocks: Vec<String> = cmd.words[1..]
            .iter()
            .flat_map(|a| {
                if a.raw.starts_with('{') {
                    a.value.clone().into_iter().collect()
                } else {
                    inner_blocks(&a.raw)
                }
            })
            .collect();
        for inner in &blocks {
            {
                if ctx.walk.enter().is_err() {
                    return (
                        Class::Mutating,
                        String::from("nests too deeply to be judged"),
                    );
                }
                let (class, why) = classify_windows(ctx, inner);
                ctx.walk.leave();
                if class == Class::Mutating {
                    return (class, why);
                }
            }
        }
        note(&mut readers, name);
    }
    if readers.is_empty() {
        (
            Class::ReadOnly,
            String::from("runs nothing on the computer"),
        )
    } else {
        (
            Class::ReadOnly,
            format!("only reads ({})", readers.join(", ")),
        )
    }
}
