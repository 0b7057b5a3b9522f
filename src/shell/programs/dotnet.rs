//! PowerShell's .NET side, read as what it does: a string built from literals is the string
//! it builds (`& ('Restart-' + 'Computer')`, `. ('s','s','h' -join '')`, `("{0}-{1}" -f
//! 'Stop','Computer')`), a program started through `System.Diagnostics.Process` is judged as
//! `Start-Process` would be, and a WMI path or a CIM session binds its objects to the machine
//! it names, whether or not rewind protects it.

use crate::shell::types::{Target, TargetKind};

/// The string a PowerShell expression builds from literals alone: quoted strings joined by
/// `+`, `-join` and `-f`, in PowerShell's precedence (`,` binds tightest, then `-f`, `+`,
/// `-join`). None for anything that is only known when the command runs (a variable, a
/// call, an operator not read here).
pub(super) fn literal_string(expression: &str) -> Option<String> {
    let tokens = tokens(expression)?;
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
    };
    let value = parser.join()?;
    (parser.at == tokens.len()).then_some(())?;
    match value.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

#[derive(Debug, PartialEq)]
enum Token {
    Text(String),
    Comma,
    Plus,
    Join,
    Format,
    Open,
    Close,
}

/// `expression`'s tokens, or none when it holds anything but literals and the operators
/// [`literal_string`] reads. `$(…)` and `@(…)` open as `(…)` does.
fn tokens(expression: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = expression.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(&c) = chars.get(at) {
        at += 1;
        match c {
            ' ' | '\t' => {}
            ',' => out.push(Token::Comma),
            '+' => out.push(Token::Plus),
            '(' => out.push(Token::Open),
            '$' | '@' if chars.get(at) == Some(&'(') => {
                at += 1;
                out.push(Token::Open);
            }
            ')' => out.push(Token::Close),
            '\'' | '"' => {
                let mut text = String::new();
                loop {
                    let next = *chars.get(at)?;
                    at += 1;
                    if next == c {
                        // `''` inside '…' (and `""` inside "…") is the quote itself.
                        if chars.get(at) == Some(&c) {
                            at += 1;
                        } else {
                            break;
                        }
                    } else if c == '"' && matches!(next, '$' | '`') {
                        // A double-quoted string expands variables and escapes.
                        return None;
                    }
                    text.push(next);
                }
                out.push(Token::Text(text));
            }
            '-' => {
                let word: String = chars[at..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                at += word.len();
                match word.to_ascii_lowercase().as_str() {
                    "join" => out.push(Token::Join),
                    "f" => out.push(Token::Format),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// A recursive-descent reading of [`tokens`]; every value is a list of strings (a scalar is
/// a list of one).
struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
}

impl Parser<'_> {
    fn eat(&mut self, token: &Token) -> bool {
        let found = self.tokens.get(self.at) == Some(token);
        if found {
            self.at += 1;
        }
        found
    }

    /// `-join LIST`, or `A -join SEP`, each side a sum.
    fn join(&mut self) -> Option<Vec<String>> {
        if self.eat(&Token::Join) {
            return Some(vec![self.sum()?.concat()]);
        }
        let mut value = self.sum()?;
        while self.eat(&Token::Join) {
            let separator = self.sum()?;
            let [separator] = separator.as_slice() else {
                return None;
            };
            value = vec![value.join(separator)];
        }
        Some(value)
    }

    /// `A + B`: strings concatenate; a list on either side is not read.
    fn sum(&mut self) -> Option<Vec<String>> {
        let mut value = self.format()?;
        while self.eat(&Token::Plus) {
            let right = self.format()?;
            match (value.as_slice(), right.as_slice()) {
                ([left], [right]) => value = vec![format!("{left}{right}")],
                _ => return None,
            }
        }
        Some(value)
    }

    /// `"{0}-{1}" -f A, B`: each `{n}` replaced by the nth item.
    fn format(&mut self) -> Option<Vec<String>> {
        let mut value = self.list()?;
        while self.eat(&Token::Format) {
            let items = self.list()?;
            let [template] = value.as_slice() else {
                return None;
            };
            value = vec![formatted(template, &items)?];
        }
        Some(value)
    }

    fn list(&mut self) -> Option<Vec<String>> {
        let mut items = self.primary()?;
        while self.eat(&Token::Comma) {
            items.extend(self.primary()?);
        }
        Some(items)
    }

    fn primary(&mut self) -> Option<Vec<String>> {
        match self.tokens.get(self.at)? {
            Token::Text(text) => {
                self.at += 1;
                Some(vec![text.clone()])
            }
            Token::Open => {
                self.at += 1;
                let inner = self.join()?;
                self.eat(&Token::Close).then_some(inner)
            }
            _ => None,
        }
    }
}

/// `template` with each `{n}` replaced by `items[n]` and `{{`/`}}` by a brace; none for a
/// format specifier (`{0:x}`) or an index past the items.
fn formatted(template: &str, items: &[String]) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("{{").or_else(|| tail.strip_prefix("}}")) {
            out.push_str(&tail[..1]);
            rest = after;
            continue;
        }
        let close = tail.find('}')?;
        let index: usize = tail[1..close].trim().parse().ok()?;
        out.push_str(items.get(index)?);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// What a PowerShell statement starts through `System.Diagnostics.Process`: the command line
/// of `[Diagnostics.Process]::Start('ssh', 'web01 sudo reboot')` (or of a `ProcessStartInfo`
/// built from literals), `Err` with what is not read when the program or its arguments are
/// only known when it runs (a variable, a start info filled in later). None when `statement`
/// starts no process: reading processes (`[Diagnostics.Process]::GetProcesses()`) starts
/// none.
pub(super) fn process_started(statement: &str) -> Option<Result<String, String>> {
    let lower = statement.to_ascii_lowercase();
    let unread = || Err(statement.trim().to_owned());
    let Some(start) = ["process]::start", "processstartinfo"]
        .iter()
        .find_map(|m| lower.find(m).map(|at| at + m.len()))
    else {
        // `New-Object System.Diagnostics.Process`: what it starts is filled in later.
        let created = lower.contains("diagnostics.process")
            && (lower.contains("new-object") || lower.contains("]::new("));
        return created.then(unread);
    };
    // The arguments of the call or constructor: `Start(…)`, `ProcessStartInfo(…)`,
    // `ProcessStartInfo]::new(…)`, `-ArgumentList 'ssh', '…'`.
    let after = &statement[start..];
    let after = after
        .strip_prefix("]::new")
        .or_else(|| after.strip_prefix("]::New"))
        .unwrap_or(after);
    let Some(inner) = after.strip_prefix('(').and_then(|rest| {
        let mut depth = 1usize;
        let end = rest.char_indices().find_map(|(at, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at)
        })?;
        Some(&rest[..end])
    }) else {
        return Some(unread());
    };
    // Each argument on its own: `'ssh', 'web01 sudo reboot'`.
    let mut words = Vec::new();
    for part in split_top_level(inner) {
        match literal_string(part) {
            Some(word) => words.push(word),
            None => return Some(unread()),
        }
    }
    if words.is_empty() {
        return Some(unread());
    }
    Some(Ok(words.join(" ")))
}

/// What `[Environment]::SetEnvironmentVariable('PGHOST', 'db01')` in `statement` sets: the
/// variable's name, upper-case, and its value when the text writes it. None when the
/// statement sets no variable, or names it only at run time.
pub(super) fn environment_set(statement: &str) -> Option<(String, Option<String>)> {
    let lower = statement.to_ascii_lowercase();
    let marker = "environment]::setenvironmentvariable(";
    let at = lower.find(marker)? + marker.len();
    let inner = statement[at..]
        .rsplit_once(')')
        .map_or(&statement[at..], |(a, _)| a);
    let parts = split_top_level(inner);
    let name = literal_string(parts.first()?)?.to_ascii_uppercase();
    let value = parts.get(1).and_then(|v| literal_string(v));
    Some((name, value))
}

/// `text` split at the commas outside brackets and quotes.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut from = 0;
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                parts.push(&text[from..at]);
                from = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[from..]);
    parts
}

/// The machine a WMI object or a CIM session in `expression` is bound to: the machine of a
/// WMI path (`[wmiclass]'\\win01\root\cimv2:Win32_Process'`, `[wmi]'…'`, `New-Object
/// System.Management.ManagementClass('\\win01\…')`) or of `[CimSession]::Create('win01')`.
/// `Ok` with no target for this machine (`\\.\`, `localhost`, no machine written), `Err`
/// when the machine is only known when the command runs; none when `expression` is none of
/// these.
pub(super) fn wmi_bound(expression: &str) -> Option<Result<Vec<Target>, String>> {
    let lower = expression.to_ascii_lowercase();
    let text = lower.trim_start();
    let (path, what) = if let Some(at) = lower.find("cimsession]::create(") {
        let rest = &expression[at + "cimsession]::create(".len()..];
        let argument = split_top_level(rest.rsplit_once(')').map_or(rest, |(a, _)| a))[0];
        (argument.trim(), "the CIM session's computer")
    } else if text.starts_with("[wmi")
        || text.starts_with("[system.management.management")
        || lower.contains("management.managementclass")
        || lower.contains("management.managementobject")
    {
        let at = expression.find(['\'', '"'])?;
        (
            expression[at..].trim_end_matches(')').trim(),
            "the WMI path's machine",
        )
    } else {
        return None;
    };
    let Some(value) = literal_string(path) else {
        return Some(Err(format!(
            "{what} in `{}` is not written out",
            path.trim()
        )));
    };
    let host = if let Some(unc) = value
        .strip_prefix("\\\\")
        .or_else(|| value.strip_prefix("//"))
    {
        unc.split(['\\', '/']).next().unwrap_or_default()
    } else if what.starts_with("the CIM") {
        value.as_str()
    } else {
        ""
    };
    if host.is_empty() || host == "." || host.eq_ignore_ascii_case("localhost") {
        return Some(Ok(Vec::new()));
    }
    Some(Ok(vec![Target {
        name: host.to_owned(),
        kind: TargetKind::Host,
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_built_from_literals_is_the_string_it_builds() {
        for (expression, want) in [
            ("'Restart-' + 'Computer'", "Restart-Computer"),
            ("('Restart-' + \"Computer\")", "Restart-Computer"),
            ("'s','s','h' -join ''", "ssh"),
            ("-join ('s', 'sh')", "ssh"),
            ("\"{0}-{1}\" -f 'Restart','Computer'", "Restart-Computer"),
            ("('{1}{0}' -F 'h', 'ss')", "ssh"),
            ("'it''s'", "it's"),
            ("$('a' + 'b')", "ab"),
            ("'{{0}}' -f 'x'", "{0}"),
        ] {
            assert_eq!(
                literal_string(expression).as_deref(),
                Some(want),
                "{expression}"
            );
        }
        for unread in [
            "$a + 'Computer'",
            "\"$prefix-Computer\"",
            "'a' -replace 'a','b'",
            "'{0:x}' -f 'a'",
            "'{2}' -f 'a'",
            "'a','b'",
            "('a'",
            "[string]::Join('', 's', 'sh')",
        ] {
            assert_eq!(literal_string(unread), None, "{unread}");
        }
    }

    #[test]
    fn a_process_start_is_its_command_line() {
        for (statement, want) in [
            (
                "[System.Diagnostics.Process]::Start('ssh','web01 sudo reboot')",
                "ssh web01 sudo reboot",
            ),
            (
                "[Diagnostics.Process]::Start( \"ssh.exe\" , ('web01 ' + 'sudo reboot'))",
                "ssh.exe web01 sudo reboot",
            ),
            (
                "New-Object System.Diagnostics.ProcessStartInfo('ssh', 'web01 reboot')",
                "ssh web01 reboot",
            ),
            (
                "[System.Diagnostics.ProcessStartInfo]::new('ssh', 'web01 reboot')",
                "ssh web01 reboot",
            ),
        ] {
            assert_eq!(process_started(statement), Some(Ok(want.to_owned())));
        }
        for unread in [
            "[Diagnostics.Process]::Start($p)",
            "[Diagnostics.Process]::Start($exe, 'web01 reboot')",
            "$i = New-Object System.Diagnostics.ProcessStartInfo",
        ] {
            assert!(matches!(process_started(unread), Some(Err(_))), "{unread}");
        }
        assert_eq!(
            process_started("[Diagnostics.Process]::GetProcesses()"),
            None
        );
    }

    #[test]
    fn a_wmi_path_or_cim_session_binds_to_its_machine() {
        let host = |e: &str| {
            wmi_bound(e).map(|b| b.map(|t| t.into_iter().map(|t| t.name).collect::<Vec<_>>()))
        };
        let one = |h: &str| Some(Ok(vec![h.to_owned()]));
        assert_eq!(
            host("[wmiclass]'\\\\win01\\root\\cimv2:Win32_Process'"),
            one("win01")
        );
        assert_eq!(
            host("[WMI]\"//win01/root/cimv2:Win32_Service.Name='x'\""),
            one("win01")
        );
        assert_eq!(host("[CimSession]::Create('win01')"), one("win01"));
        assert_eq!(
            host(
                "New-Object System.Management.ManagementClass('\\\\win01\\root\\cimv2:Win32_Process')"
            ),
            one("win01")
        );
        assert_eq!(
            host("[wmiclass]'root\\cimv2:Win32_Process'"),
            Some(Ok(Vec::new()))
        );
        assert_eq!(
            host("[wmiclass]'\\\\.\\root\\cimv2:Win32_Process'"),
            Some(Ok(Vec::new()))
        );
        assert!(matches!(
            host("[wmiclass]\"\\\\$h\\root\\cimv2:Win32_Process\""),
            Some(Err(_))
        ));
        assert!(matches!(host("[CimSession]::Create($h)"), Some(Err(_))));
        assert_eq!(host("[string]'x'"), None);
    }
}
