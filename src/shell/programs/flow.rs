//! PowerShell read as a data flow. Within one command text, a variable the text assigns once
//! holds what the walk saw assigned to it: a literal (`$h = 'win01'`), a hashtable (`$p = @{
//! … }`, whose keys `@p` splats as parameters), or objects bound to machines: a session opened
//! to them (`New-PSSession`, `New-CimSession`), services, processes or WMI objects fetched from
//! them (`Get-Service -ComputerName`), VMs (`Get-VM`). A pipeline hands its objects on the same
//! way, so `Get-Service -ComputerName win01 | Stop-Service` and `$svc.Stop()` act where the
//! objects came from. A variable the text does not assign, or assigns more than once or by a
//! means not read here (`Set-Variable`, `-OutVariable`, a dot-sourced script), holds what is
//! only known when the command runs.

use std::borrow::Cow;
use std::cell::OnceCell;

use super::{Ctx, cmdlets, code, command, dotnet, remember, text_in, unknown_finding};
use crate::shell::catalog::Grammar;
use crate::shell::dialect::Dialect;
use crate::shell::net;
use crate::shell::powershell::variable_name;
use crate::shell::types::{Arg, Class, Cmd, Finding, Target, Unknown, clip};

/// What a variable, or a command's output, holds as far as the text says.
#[derive(Debug, Clone)]
pub(crate) enum Held {
    /// A string or a list of them the text writes (`'win01'`, `'a','b'`).
    Text(Arg),
    /// A hashtable the text writes: each key as written, and its value.
    Table(Vec<(String, Arg)>),
    /// Objects bound to machines: these (none: this machine's), or why which is not known.
    Bound(Result<Vec<Target>, String>),
    /// Anything else: only known when the command runs.
    Unknown,
}

/// What the walk knows of a PowerShell text's variables and pipes.
#[derive(Default)]
pub(crate) struct Flow {
    /// The variables bound where the walk is, innermost last.
    vars: Vec<(String, Held)>,
    /// How the whole text writes and names its variables, read when first needed.
    writes: OnceCell<Writes>,
    /// What the command being read is handed through a pipe.
    pub(crate) piped: Option<Held>,
}

impl Flow {
    /// What `name` (lower-case, as [`variable_name`] gives it) holds here.
    fn get(&self, name: &str) -> Option<&Held> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, h)| h)
    }

    /// Where a nested text's bindings start, and what the text around it was piped: a
    /// nested text sees the bindings around it, and none of its own outlive it.
    pub(crate) fn enter(&mut self) -> (usize, Option<Held>) {
        (self.vars.len(), self.piped.take())
    }

    /// Drops what a nested text bound, and gives the text around it back its pipe.
    pub(crate) fn leave(&mut self, (bound, piped): (usize, Option<Held>)) {
        self.vars.truncate(bound);
        self.piped = piped;
    }
}

/// Walks a PowerShell text's commands in order: each is read with the variables bound so far
/// and what its pipe hands it, and what it hands on is what its variable, if any, holds.
pub(super) fn walk(ctx: &mut Ctx<'_>, commands: &[Cmd]) -> Result<(), Unknown> {
    let mut out: Vec<Held> = Vec::with_capacity(commands.len());
    for cmd in commands {
        let input = cmd.pipe_from.and_then(|at| out.get(at)).cloned();
        let resolved = resolved(ctx, cmd);
        let cmd = resolved.as_ref();
        let held = if is_value(cmd) {
            // `$h = 'win01'`, `$p = @{ … }`: an expression, not a command; it can still be
            // written to a file.
            remember(ctx, cmd, Dialect::PowerShell)?;
            match cmd.words.first() {
                Some(table) if table.raw.starts_with("@{") => written_table(ctx, table)?,
                _ => output(ctx, cmd, input.as_ref()),
            }
        } else {
            ctx.flow.piped.clone_from(&input);
            let result = read(ctx, cmd);
            ctx.flow.piped = None;
            result?;
            output(ctx, cmd, input.as_ref())
        };
        if let Some(name) = &cmd.assigned_to {
            bind(ctx, name, held.clone());
        }
        out.push(held);
    }
    Ok(())
}

/// Reads one command: a remote program's parameters splatted from a table the text does
/// not write cannot be read (ask); methods called on objects, in its arguments
/// (`Write-Output $svc.Stop()`) or by name on each object piped in (`| ForEach-Object Stop`),
/// act where the objects came from.
fn read(ctx: &mut Ctx<'_>, cmd: &Cmd) -> Result<(), Unknown> {
    // `foreach ($h in 'win01', 'win02') { … }`: the body, once for each item.
    if let Some((variable, items, body)) = literal_loop(ctx, cmd) {
        for item in items {
            let at = ctx.flow.vars.len();
            let value = Held::Text(Arg::literal(item));
            ctx.flow.vars.push((variable.clone(), value));
            let result = text_in(ctx, body, Dialect::PowerShell);
            ctx.flow.vars.truncate(at);
            result?;
        }
        return Ok(());
    }
    // `[Diagnostics.Process]::Start('ssh', 'web01 sudo reboot')`: the command line it starts,
    // judged as `Start-Process` has it judged.
    let statement = cmd
        .words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    if let Some((var, value)) = dotnet::environment_set(&statement) {
        set_environment(ctx, var, value);
    }
    match dotnet::process_started(&statement) {
        Some(Ok(line)) => code(ctx, "Process.Start", &Arg::literal(line), Dialect::Posix)?,
        Some(Err(unread)) => {
            return Err(Unknown(format!(
                "`{}` starts a program through .NET, and which one is only known when it runs",
                clip(&unread)
            )));
        }
        None => {}
    }
    for word in cmd.words.iter().skip(1) {
        if word.value.is_none() && word.raw.starts_with(['$', '(', '[']) {
            method_call(ctx, &word.raw)?;
        }
    }
    if let Some(member) = member_called(cmd)
        && let Some(Held::Bound(bound)) = ctx.flow.piped.clone()
    {
        let raw = cmd.words.iter().map(|w| w.raw.as_str()).collect::<Vec<_>>();
        called(ctx, &raw.join(" "), member, bound)?;
    }
    if let Some(splat) = cmd
        .words
        .iter()
        .skip(1)
        .find(|w| splat_name(&w.raw).is_some())
        && let Some(program) = cmd
            .words
            .first()
            .and_then(|w| w.value.as_deref())
            .and_then(|name| ctx.catalog.program_in(name, Some(Dialect::PowerShell)))
    {
        let f = unknown_finding(
            program,
            format!(
                "the parameters come from `{}`, which this command does not write as a table",
                splat.raw
            ),
        );
        ctx.findings.push(f);
        return Ok(());
    }
    command(ctx, cmd, Dialect::PowerShell)
}

/// Whether a statement is a value rather than a command: an assignment's right side that is
/// a quoted string, a number or a hashtable, or a statement starting with a single-quoted
/// string (`'web01','web02' | …`). A double-quoted one is read as a command all the same:
/// `cmd /c` text is read by the same parser, and cmd runs a program written
/// `"C:\…\ssh.exe"`.
fn is_value(cmd: &Cmd) -> bool {
    let Some(first) = cmd.words.first() else {
        return false;
    };
    let assigned = cmd.assigned_to.is_some()
        && (first.raw.starts_with(['\'', '"'])
            || first.raw.starts_with(|c: char| c.is_ascii_digit())
            || (first.raw.starts_with("@{") && cmd.words.len() == 1));
    assigned || (!cmd.call && first.raw.starts_with('\''))
}

/// Sets the environment variable `var` for the later commands: to `value` when the text
/// writes it, else to a value only known when the command runs.
fn set_environment(ctx: &mut Ctx<'_>, var: String, value: Option<String>) {
    match value {
        Some(value) => ctx.vars.push((var, value)),
        None => ctx.unknown_env.push(var),
    }
}

/// Binds `name` to what it was assigned, when the whole text assigns it only there and, for
/// a table or a list (which whatever they are handed to can change), names it nowhere else
/// but in one use (tables only in splats); a protected machine put in the environment
/// (`$env:TARGET = 'win01'`) is remembered as an `export` is.
fn bind(ctx: &mut Ctx<'_>, name: &str, held: Held) {
    // `$env:PGHOST = 'db01'`: what a later client reads from its environment.
    if let Some(var) = name.strip_prefix("env:") {
        set_environment(
            ctx,
            var.to_ascii_uppercase(),
            match &held {
                Held::Text(arg) => arg.value.clone(),
                _ => None,
            },
        );
    }
    if name.starts_with("env:")
        && let Held::Text(arg) = &held
        && let Some(host) = arg
            .value
            .as_deref()
            .and_then(|v| net::protected(v, ctx.known))
    {
        ctx.exported = Some(host.to_owned());
    }
    let whole = ctx.whole;
    let writes = ctx.flow.writes.get_or_init(|| Writes::of(whole));
    let mentions = writes.mentions(name);
    let kept = writes.once.iter().any(|n| n == name)
        && match &held {
            Held::Table(_) => mentions <= 1,
            Held::Text(list) if list.raw.contains(',') => mentions <= 2,
            _ => true,
        };
    if kept {
        ctx.flow.vars.push((name.to_owned(), held));
    }
}

/// What `arg` holds when it is a variable (`$s`) or an expression in brackets (`(Get-VM
/// web01)`); none for anything else.
pub(super) fn held(ctx: &mut Ctx<'_>, arg: &Arg) -> Option<Held> {
    let raw = arg.raw.as_str();
    if let Some(name) = variable_name(raw) {
        return Some(ctx.flow.get(&name).cloned().unwrap_or(Held::Unknown));
    }
    let inner = raw
        .strip_prefix("@(")
        .or_else(|| raw.strip_prefix('('))?
        .strip_suffix(')')?;
    Some(expression(ctx, inner))
}

/// The machines the objects `arg` holds are bound to (`-Session $s`, `-VM (Get-VM web01)`):
/// none when `arg` holds no objects the text fixes, or is no variable at all.
pub(super) fn bound(ctx: &mut Ctx<'_>, arg: &Arg) -> Option<Result<Vec<Target>, String>> {
    match held(ctx, arg)? {
        Held::Bound(bound) => Some(bound),
        _ => None,
    }
}

/// What an expression's text hands on: the output of its one pipeline.
fn expression(ctx: &mut Ctx<'_>, text: &str) -> Held {
    let Ok(commands) = ctx.walk.parse(text, Dialect::PowerShell) else {
        return Held::Unknown;
    };
    let one_pipeline = commands
        .iter()
        .enumerate()
        .skip(1)
        .all(|(at, cmd)| cmd.pipe_from == Some(at - 1));
    if !one_pipeline {
        return Held::Unknown;
    }
    let mut out: Vec<Held> = Vec::with_capacity(commands.len());
    for cmd in &commands {
        let input = cmd.pipe_from.and_then(|at| out.get(at)).cloned();
        let resolved = resolved(ctx, cmd);
        let held = output(ctx, resolved.as_ref(), input.as_ref());
        out.push(held);
    }
    out.pop().unwrap_or(Held::Unknown)
}

/// Cmdlets that hand on the objects they are given, or some of them.
const PASSING: &[&str] = &[
    "where-object",
    "where",
    "?",
    "select-object",
    "select",
    "sort-object",
    "sort",
    "tee-object",
    "tee",
];

/// What a command hands on: a value it is, objects the catalog says it fetches or opens a
/// session to, what a filter is given; anything else is not known.
fn output(ctx: &mut Ctx<'_>, cmd: &Cmd, input: Option<&Held>) -> Held {
    let Some(first) = cmd.words.first() else {
        return Held::Unknown;
    };
    // `[wmiclass]'\\win01\root\cimv2:Win32_Process'`, `[CimSession]::Create('win01')`:
    // objects bound to the machine the path or the session names.
    if first.raw.starts_with('[') || first.raw.eq_ignore_ascii_case("new-object") {
        let expression = cmd
            .words
            .iter()
            .map(|w| w.raw.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(bound) = dotnet::wmi_bound(&expression) {
            return Held::Bound(bound);
        }
    }
    if cmd.words.len() == 1 && !cmd.call {
        if first.raw.starts_with(['$', '(', '@']) {
            return held(ctx, first).unwrap_or(Held::Unknown);
        }
        if first.value.is_some()
            && (first.raw.starts_with(['\'', '"'])
                || first.raw.starts_with(|c: char| c.is_ascii_digit()))
        {
            return Held::Text(first.clone());
        }
    }
    let Some(name) = first.value.as_deref() else {
        return Held::Unknown;
    };
    let lower = name.to_ascii_lowercase();
    if PASSING.contains(&lower.as_str()) {
        return input.cloned().unwrap_or(Held::Unknown);
    }
    let Some(program) = ctx.catalog.program_in(name, Some(Dialect::PowerShell)) else {
        return Held::Unknown;
    };
    let program = program.clone();
    let args = &cmd.words[1..];
    match program.grammar {
        Grammar::PsObjects => Held::Bound(cmdlets::fetched(ctx, &program, args, input)),
        Grammar::PsRemoting if matches!(lower.as_str(), "new-pssession" | "nsn") => {
            Held::Bound(cmdlets::session(ctx, args))
        }
        _ => Held::Unknown,
    }
}

/// The command with each variable the text binds to a literal written as its value, and
/// each table it splats (`@p`) written as the parameters it holds.
fn resolved<'c>(ctx: &Ctx<'_>, cmd: &'c Cmd) -> Cow<'c, Cmd> {
    let bound = !ctx.flow.vars.is_empty();
    if !cmd.words.iter().any(|w| {
        (w.value.is_none() || w.raw.starts_with('@')) && (bound || w.raw.starts_with(['(', '@']))
    }) {
        return Cow::Borrowed(cmd);
    }
    let mut words = Vec::with_capacity(cmd.words.len());
    for word in &cmd.words {
        match splat_name(&word.raw).and_then(|name| ctx.flow.get(&name)) {
            Some(Held::Table(entries)) => words.extend(splatted(ctx, entries)),
            // `@a` of a list: its items, each a positional argument.
            Some(Held::Text(list)) if list.value.is_some() => words.extend(
                list.text()
                    .split(',')
                    .map(|item| Arg::literal(item.trim().to_owned())),
            ),
            _ => words.push(literal_of(ctx, word).unwrap_or_else(|| word.clone())),
        }
    }
    Cow::Owned(Cmd {
        words,
        ..cmd.clone()
    })
}

/// A table's entries as the parameters a splat binds: `Force = $true` is the switch
/// `-Force`, `Force = $false` is `-Force:$false`.
fn splatted(ctx: &Ctx<'_>, entries: &[(String, Arg)]) -> Vec<Arg> {
    let mut words = Vec::with_capacity(entries.len() * 2);
    for (key, value) in entries {
        let flag = format!("-{key}");
        if value.raw.eq_ignore_ascii_case("$true") {
            words.push(Arg::literal(flag));
        } else if value.raw.eq_ignore_ascii_case("$false") {
            words.push(Arg::literal(format!("{flag}:$false")));
        } else {
            words.push(Arg::literal(flag));
            words.push(literal_of(ctx, value).unwrap_or_else(|| value.clone()));
        }
    }
    words
}

/// `word` with the literal a variable in it holds (`$h`, `"$h"`, `-ComputerName:$h`), or
/// the list it writes in brackets (`@('win01','win02')`).
fn literal_of(ctx: &Ctx<'_>, word: &Arg) -> Option<Arg> {
    if word.value.is_some() {
        return None;
    }
    if let Some(list) = word
        .raw
        .strip_prefix("@(")
        .or_else(|| word.raw.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
        .and_then(literal_list)
    {
        return Some(Arg {
            raw: word.raw.clone(),
            value: Some(list),
        });
    }
    let text = |raw: &str| match variable_name(raw).and_then(|name| ctx.flow.get(&name)) {
        Some(Held::Text(arg)) => arg.value.clone(),
        _ => None,
    };
    let raw = word.raw.as_str();
    if let Some(value) = text(raw).or_else(|| {
        raw.strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .and_then(text)
    }) {
        // Written as the literal is, so that a UNC path reads as one.
        return Some(Arg {
            raw: value.clone(),
            value: Some(value),
        });
    }
    let (parameter, variable) = raw.split_once(':')?;
    if !parameter.starts_with('-') {
        return None;
    }
    let value = text(variable)?;
    Some(Arg {
        raw: format!("{parameter}:'{value}'"),
        value: Some(format!("{parameter}:{value}")),
    })
}

/// The items of a list written as quoted strings and numbers (`'win01', "win02"`), joined
/// by commas; none for anything else (a bare word there runs as a command).
fn literal_list(text: &str) -> Option<String> {
    let mut items = Vec::new();
    for item in text.split(',').map(str::trim) {
        let literal =
            if let Some(inner) = item.strip_prefix('\'').and_then(|i| i.strip_suffix('\'')) {
                (!inner.contains('\'')).then_some(inner)
            } else if let Some(inner) = item.strip_prefix('"').and_then(|i| i.strip_suffix('"')) {
                (!inner.contains(['"', '$', '`'])).then_some(inner)
            } else {
                (!item.is_empty() && item.chars().all(|c| c.is_ascii_digit() || c == '.'))
                    .then_some(item)
            };
        items.push(literal?);
    }
    Some(items.join(","))
}

/// The variable a splat (`@params`) names.
fn splat_name(raw: &str) -> Option<String> {
    let name = raw.strip_prefix('@')?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':'));
    plain.then(|| variable_name(&format!("${name}"))).flatten()
}

/// A hashtable the text writes (`@{ ComputerName = 'win01'; Force = $true }`): its entries,
/// and the commands its values run, read as they run when the table is made.
fn written_table(ctx: &mut Ctx<'_>, table: &Arg) -> Result<Held, Unknown> {
    let Some(inner) = table
        .raw
        .strip_prefix("@{")
        .and_then(|r| r.strip_suffix('}'))
    else {
        return Ok(Held::Unknown);
    };
    let commands = ctx
        .walk
        .parse(&spaced_entries(inner), Dialect::PowerShell)?;
    let mut entries = Vec::new();
    for cmd in &commands {
        match cmd.words.as_slice() {
            [key, equals, value @ ..] if equals.raw == "=" && !value.is_empty() => {
                let Some(key) = key.value.clone() else {
                    return Ok(Held::Unknown);
                };
                let value = match value {
                    [one] => one.clone(),
                    more => Arg::dynamic(
                        more.iter()
                            .map(|a| a.raw.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                };
                entries.push((key, value));
            }
            // A command in brackets inside a value runs when the table is made.
            _ => read(ctx, cmd)?,
        }
    }
    Ok(Held::Table(entries))
}

/// A table's text with each `=` between a key and its value set apart by spaces, so that
/// `@{a='x';b=$true}` parses as the entries `a = 'x'` and `b = $true`.
fn spaced_entries(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '`') => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '{' | '[') => depth += 1,
            (None, ')' | '}' | ']') => depth = depth.saturating_sub(1),
            (None, '=') if depth == 0 => {
                out.push_str(" = ");
                continue;
            }
            // Inside a string, and any other character.
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A method called on objects (`$svc.Start()`, `(Get-WmiObject … -ComputerName win01
/// …).StopService()`): recorded as a change of the machines they are bound to, or asked
/// about when which is not known. `false` when the receiver holds no objects the text fixes.
pub(super) fn method_call(ctx: &mut Ctx<'_>, raw: &str) -> Result<bool, Unknown> {
    let Some((receiver, method)) = receiver_and_method(raw) else {
        return Ok(false);
    };
    let Some(bound) = bound(ctx, &Arg::dynamic(receiver.to_owned())) else {
        return Ok(false);
    };
    called(ctx, raw, method, bound)?;
    Ok(true)
}

/// Records that `raw` calls `method` on objects bound to these machines: a change of them
/// unless the method only reads; asked about when which machines is not known.
fn called(
    ctx: &mut Ctx<'_>,
    raw: &str,
    method: &str,
    bound: Result<Vec<Target>, String>,
) -> Result<(), Unknown> {
    if !changes(method) {
        return Ok(());
    }
    match bound {
        Ok(targets) if targets.is_empty() => Ok(()),
        Ok(targets) => {
            ctx.findings.push(Finding {
                program: clip(raw),
                targets,
                unknown: None,
                remote: None,
                class: Class::Mutating,
                why: format!("calls {method}() on objects from the machine"),
            });
            Ok(())
        }
        Err(why) => Err(Unknown(format!(
            "calls {method}() on objects whose machine is not known: {why}"
        ))),
    }
}

/// The method `ForEach-Object` calls by name on each object piped in (`% Stop`,
/// `ForEach-Object -MemberName Kill`).
fn member_called(cmd: &Cmd) -> Option<&str> {
    let name = cmd.words.first()?.value.as_deref()?.to_ascii_lowercase();
    // The lexer takes a statement's `foreach` for the keyword; piped, it is the cmdlet.
    let per_object = matches!(name.as_str(), "foreach-object" | "%" | "foreach")
        || (name == "%keyword" && cmd.pipe_from.is_some());
    if !per_object {
        return None;
    }
    let mut words = cmd.words[1..].iter();
    while let Some(word) = words.next() {
        let text = word.value.as_deref()?;
        if text.starts_with('{') || word.raw.starts_with('{') {
            return None;
        }
        if let Some(parameter) = text.strip_prefix('-') {
            if "membername".starts_with(&parameter.to_ascii_lowercase()) && parameter.len() > 1 {
                return words.next()?.value.as_deref();
            }
            continue;
        }
        return Some(text);
    }
    None
}

/// `$svc.Start()`, `[void]$svc.Stop()`, `(…).StopService()`, `$vm.ExtensionData.Reboot()`:
/// the receiver and the first method called on it.
fn receiver_and_method(raw: &str) -> Option<(&str, &str)> {
    let mut rest = raw;
    while rest.starts_with('[') {
        rest = rest.get(rest.find(']')? + 1..)?;
    }
    let end = if rest.starts_with('(') {
        let mut depth = 0usize;
        rest.char_indices().find_map(|(at, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at + 1)
        })?
    } else if let Some(name) = rest.strip_prefix('$') {
        1 + name
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ':')))
            .unwrap_or(name.len())
    } else {
        return None;
    };
    let (receiver, mut tail) = rest.split_at(end);
    // `$svc[0].Stop()`: an element is bound where the collection is.
    while tail.starts_with('[') {
        tail = tail.get(tail.find(']')? + 1..)?;
    }
    let call = tail.strip_prefix('.')?;
    let path = &call[..call.find('(')?];
    let method = path.rsplit('.').next()?;
    (!method.is_empty()).then_some((receiver, method))
}

/// Whether a method can change what it is called on: any but those that read (`Get…`,
/// `To…`, `Equals`, `Refresh`, `WaitFor…`).
pub(super) fn changes(method: &str) -> bool {
    let lower = method.to_ascii_lowercase();
    !["get", "to", "equals", "refresh", "waitfor", "compareto"]
        .iter()
        .any(|read| lower.starts_with(read))
}

/// Most items of a literal list a loop is followed through, item by item; a longer list is
/// walked once, its item unknown.
const MAX_ITEMS: usize = 16;

/// Walks a per-object cmdlet's script blocks (`ForEach-Object { … }`, `Where-Object { … }`)
/// with `$_` (and `$PSItem`) bound to what it is piped: once for objects bound to machines,
/// once for each item of a literal list (`'web01','web02' | % { ssh $_ … }`), once unbound
/// for anything else.
pub(super) fn each_item(
    ctx: &mut Ctx<'_>,
    cmd: &Cmd,
    mut walk: impl FnMut(&mut Ctx<'_>) -> Result<(), Unknown>,
) -> Result<(), Unknown> {
    let items: Vec<Held> = match ctx.flow.piped.clone().filter(|_| per_object(cmd)) {
        Some(bound @ Held::Bound(_)) => vec![bound],
        Some(Held::Text(list)) => items(&list)
            .filter(|items| items.len() <= MAX_ITEMS)
            .unwrap_or_default()
            .into_iter()
            .map(|item| Held::Text(Arg::literal(item)))
            .collect(),
        _ => Vec::new(),
    };
    if items.is_empty() {
        return walk(ctx);
    }
    for item in items {
        let at = ctx.flow.vars.len();
        ctx.flow.vars.push((String::from("_"), item.clone()));
        ctx.flow.vars.push((String::from("psitem"), item));
        let result = walk(ctx);
        ctx.flow.vars.truncate(at);
        result?;
    }
    Ok(())
}

/// Whether a command is a per-object cmdlet, whose script blocks run for each object piped
/// in (`ForEach-Object`, `Where-Object`).
fn per_object(cmd: &Cmd) -> bool {
    let name = cmd
        .words
        .first()
        .and_then(|w| w.value.as_deref())
        .unwrap_or_default()
        .to_ascii_lowercase();
    // The lexer takes a statement's `foreach` for the keyword; piped, it is the cmdlet.
    matches!(
        name.as_str(),
        "foreach-object" | "%" | "foreach" | "where-object" | "where" | "?"
    ) || (name == "%keyword" && cmd.pipe_from.is_some())
}

/// Whether a per-object cmdlet's script block is read, item by item, with what it is piped:
/// what the items name is seen where the block uses them.
pub(super) fn reads_each_item(cmd: &Cmd) -> bool {
    per_object(cmd)
        && cmd.words[1..]
            .iter()
            .any(|w| w.raw.starts_with('{') && w.value.is_some())
}

/// The items of a literal the text writes: each string of a list (`'web01', 'web02'`), or the
/// one string; none when a value is only known when the command runs.
fn items(text: &Arg) -> Option<Vec<String>> {
    let value = text.value.as_deref()?;
    if let Some(list) = literal_list(&text.raw) {
        return Some(list.split(',').map(str::to_owned).collect());
    }
    (!value.contains(',')).then(|| vec![value.to_owned()])
}

/// A `foreach ($h in 'win01', 'win02') { … }` statement whose list the text writes (or a
/// variable holds) and whose variable nothing else assigns: the variable, the items and the
/// body.
fn literal_loop<'c>(ctx: &mut Ctx<'_>, cmd: &'c Cmd) -> Option<(String, Vec<String>, &'c str)> {
    let [keyword, head, body, ..] = cmd.words.as_slice() else {
        return None;
    };
    if !keyword.raw.eq_ignore_ascii_case("foreach") || keyword.value.as_deref() != Some("%keyword")
    {
        return None;
    }
    let head = head.raw.strip_prefix('(')?.strip_suffix(')')?;
    let at = head.to_ascii_lowercase().find(" in ")?;
    let variable = variable_name(head[..at].trim())?;
    let list = head[at + 4..].trim();
    let written = list
        .strip_prefix("@(")
        .or_else(|| list.strip_prefix('('))
        .and_then(|l| l.strip_suffix(')'))
        .unwrap_or(list);
    let items = match literal_list(written) {
        Some(list) => list.split(',').map(str::to_owned).collect(),
        None => match ctx.flow.get(&variable_name(list)?) {
            Some(Held::Text(text)) => items(text)?,
            _ => return None,
        },
    };
    let whole = ctx.whole;
    let writes = ctx.flow.writes.get_or_init(|| Writes::of(whole));
    let only_here = writes.once.contains(&variable);
    let body = body
        .value
        .as_deref()
        .filter(|_| body.raw.starts_with('{'))?;
    (only_here && items.len() <= MAX_ITEMS).then_some((variable, items, body))
}

/// How a text writes and names its variables.
#[derive(Default)]
struct Writes {
    /// The variables it assigns exactly once, lower-case (see [`variable_name`]).
    once: Vec<String>,
    /// How many times each variable is written `$name`, lower-case.
    named: Vec<(String, usize)>,
}

impl Writes {
    /// How `text` writes and names its variables: none is assigned once when the text can
    /// set a variable by a means not read here (`Set-Variable`, `-OutVariable` and its kin,
    /// `[ref]`, a dot-sourced script).
    fn of(text: &str) -> Writes {
        Writes {
            once: assigned_once(text),
            named: named(text),
        }
    }

    /// How many times `$name` is written.
    fn mentions(&self, name: &str) -> usize {
        self.named
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, count)| *count)
    }
}

/// How many times each variable is written `$name` in `text` (scopes and braces aside).
fn named(text: &str) -> Vec<(String, usize)> {
    let lower = text.to_ascii_lowercase();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (at, _) in lower.match_indices('$') {
        let rest = &lower[at..];
        let end = 1 + rest[1..]
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ':' | '{' | '}')))
            .unwrap_or(rest.len() - 1);
        if let Some(name) = variable_name(&rest[..end]) {
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, n)) => *n += 1,
                None => counts.push((name, 1)),
            }
        }
    }
    counts
}

/// The variables `text` assigns exactly once, lower-case (see [`variable_name`]): none when
/// the text can set a variable by a means not read here (`Set-Variable`, `New-Variable`,
/// `-OutVariable` and its kin, `[ref]`, a dot-sourced script).
fn assigned_once(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    if sets_variables_unseen(&lower) {
        return Vec::new();
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    let mut count = |name: String| match counts.iter_mut().find(|(n, _)| *n == name) {
        Some((_, n)) => *n += 1,
        None => counts.push((name, 1)),
    };
    let bytes = lower.as_bytes();
    for (at, _) in lower.match_indices('=') {
        // `==`, and the second `=` of one, are no assignment.
        if bytes.get(at + 1) == Some(&b'=') || (at > 0 && bytes[at - 1] == b'=') {
            continue;
        }
        for name in targets_before(&lower[..at]) {
            count(name);
        }
    }
    for (at, _) in lower.match_indices('$') {
        let rest = &lower[at..];
        let name_end = 1 + rest[1..]
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ':' | '{' | '}')))
            .unwrap_or(rest.len() - 1);
        let Some(name) = variable_name(&rest[..name_end]) else {
            continue;
        };
        let after = rest[name_end..].trim_start();
        let before = lower[..at].trim_end();
        // `$i++`, `--$i`, `foreach ($s in …)`.
        let stepped = after.starts_with("++")
            || after.starts_with("--")
            || before.ends_with("++")
            || before.ends_with("--");
        let looped = after.starts_with("in ") || after.starts_with("in(");
        if stepped || looped {
            count(name);
        }
    }
    // `param($a, $b)`, `function f($a)`: parameters, bound by whoever calls.
    for keyword in ["param", "function", "filter"] {
        for (at, _) in lower.match_indices(keyword) {
            let word_start = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '-')));
            let rest = &lower[at + keyword.len()..];
            let Some(open) = rest.find('(') else { continue };
            // `param (…)`; `function name (…)`.
            let between = rest[..open].trim();
            let declares = if keyword == "param" {
                between.is_empty()
            } else {
                !between.is_empty() && !between.contains(char::is_whitespace)
            };
            if !word_start || !declares {
                continue;
            }
            let close = rest[open..].find(')').map_or(rest.len(), |c| open + c);
            for part in rest[open..close].split('$').skip(1) {
                let end = part
                    .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ':')))
                    .unwrap_or(part.len());
                if let Some(name) = variable_name(&format!("${}", &part[..end])) {
                    count(name);
                }
            }
        }
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n == 1)
        .map(|(name, _)| name)
        .collect()
}

/// The variables an assignment whose `=` ends `left` assigns: `$s`, `[string]$s`, `$a, $b`,
/// `$h['k']` and `$p.Name` (which change `$h` and `$p`), `$n += 1`.
fn targets_before(left: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = left
        .trim_end_matches(['+', '-', '*', '/', '%', '?'])
        .trim_end();
    loop {
        let start = rest
            .char_indices()
            .rev()
            .find(|(_, c)| {
                !(c.is_alphanumeric()
                    || matches!(
                        c,
                        '_' | ':' | '$' | '.' | '[' | ']' | '{' | '}' | '\'' | '"'
                    ))
            })
            .map_or(0, |(at, c)| at + c.len_utf8());
        let target = &rest[start..];
        if let Some(dollar) = target.find('$') {
            let name_end = target[dollar + 1..]
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ':' | '{' | '}')))
                .map_or(target.len(), |end| dollar + 1 + end);
            names.extend(variable_name(&target[dollar..name_end]));
        }
        // `$a, $b = …`: a list of targets.
        match rest[..start].trim_end().strip_suffix(',') {
            Some(before) if !target.is_empty() => rest = before.trim_end(),
            _ => break,
        }
    }
    names
}

/// Whether lower-case PowerShell `text` can set a variable in a way [`assigned_once`] does
/// not count: the variable cmdlets and drive, `[ref]`, the common parameters that name a
/// variable (any abbreviation of them), and dot-sourcing a script.
fn sets_variables_unseen(text: &str) -> bool {
    if text.contains("variable") || text.contains("[ref]") {
        return true;
    }
    let words: Vec<&str> = text.split(net::is_separator).collect();
    words.iter().enumerate().any(|(at, word)| {
        let name = word.split(':').next().unwrap_or(word);
        let common = name.strip_prefix('-').is_some_and(|n| {
            ["ov", "pv", "ev", "wv", "iv"].contains(&n)
                || (!n.is_empty()
                    && [
                        "outvariable",
                        "pipelinevariable",
                        "errorvariable",
                        "warningvariable",
                        "informationvariable",
                    ]
                    .iter()
                    .any(|full| full.starts_with(n)))
        });
        let short_cmdlet = matches!(name, "sv" | "nv" | "set" | "clv" | "rv" | "gv");
        // `. .\setup.ps1`, `. $profile`: a script run in this scope.
        let dot_sourced = *word == "."
            && words[at + 1..]
                .iter()
                .find(|w| !w.is_empty())
                .is_some_and(|next| !next.starts_with('{'));
        common || short_cmdlet || dot_sourced
    })
}

#[cfg(test)]
mod tests;
