//! Shell variables a command text sets, and the words that only expand them given their
//! values, so that `h=web01; ssh $h reboot` is read as `ssh web01 reboot`.

use super::is_name;
use crate::shell::posix;
use crate::shell::types::{Arg, Cmd, Stdin};

/// As [`assigned_once`], and also each variable set exactly once to a value whose expansions
/// are all known: `outer` (the environment the text runs in, innermost last) and the
/// variables set before it (`d=$HOME/.claude`).
pub(crate) fn assigned_values(
    commands: &[Cmd],
    outer: &[(String, String)],
) -> Vec<(String, String)> {
    let (mut fixed, unknown) = assigned_once(commands);
    for name in unknown {
        let raw: Vec<&str> = commands
            .iter()
            .flat_map(|cmd| {
                let exported = cmd
                    .words
                    .first()
                    .and_then(|w| w.value.as_deref())
                    .is_some_and(|w| {
                        matches!(w, "export" | "declare" | "typeset" | "local" | "readonly")
                    });
                cmd.assignments.iter().map(String::as_str).chain(
                    cmd.words
                        .iter()
                        .skip(1)
                        .filter(move |_| exported)
                        .map(|w| w.raw.as_str()),
                )
            })
            .filter_map(|a| a.split_once('='))
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .collect();
        let [value] = raw.as_slice() else {
            continue;
        };
        let lookup = |n: &str| {
            fixed
                .iter()
                .rev()
                .chain(outer.iter().rev())
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        if let Some(value) = posix::evaluate(value, &lookup) {
            fixed.push((name, value));
        }
    }
    fixed
}

/// Variables `commands` set (`NAME=value`, `export`, `declare -x`, `readonly`, `printf -v`,
/// `read`, …): those set exactly once, to a literal value, with that value (what `$NAME`
/// expands to afterwards), and the names of the others, whose value is only known when the
/// command runs.
pub(super) fn assigned_once(commands: &[Cmd]) -> (Vec<(String, String)>, Vec<String>) {
    let mut seen: Vec<(String, Option<String>)> = Vec::new();
    for cmd in commands {
        for (name, value) in set_by(cmd) {
            match seen.iter_mut().find(|(n, _)| *n == name) {
                Some((_, known)) => *known = None,
                None => seen.push((name, value)),
            }
        }
    }
    // IFS set at all changes how every unquoted expansion splits: keep that it was set.
    let mut fixed = Vec::new();
    let mut unknown = Vec::new();
    for (name, value) in seen {
        match value {
            Some(v) => fixed.push((name, v)),
            None if name == "IFS" => fixed.push((name, String::new())),
            None => unknown.push(name),
        }
    }
    (fixed, unknown)
}

/// The variables one command sets for the commands after it, each with its value when the
/// text fixes it: `NAME=value` alone; `export`, `declare`, `typeset`, `local` and `readonly`
/// (also after `builtin`, `command` or `eval`), a brace in the name naming each name it
/// expands to; `printf -v NAME FORMAT`; `read NAME…` (the here-string's line when there is
/// one name); `mapfile`/`readarray`.
pub(super) fn set_by(cmd: &Cmd) -> Vec<(String, Option<String>)> {
    // `assignments` keeps an expanding value as written: `$`/backticks mark it.
    let literal = |value: &str| (!value.contains(['$', '`'])).then(|| value.to_owned());
    let mut words = cmd.words.as_slice();
    while let Some((first, rest)) = words.split_first()
        && matches!(first.value.as_deref(), Some("builtin" | "command" | "eval"))
        && rest.first().is_some_and(|w| !w.text().starts_with('-'))
    {
        words = rest;
    }
    let Some((first, rest)) = words.split_first() else {
        return cmd
            .assignments
            .iter()
            .filter_map(|a| a.split_once('='))
            .map(|(name, value)| (name.to_owned(), literal(value)))
            .collect();
    };
    let operands = || rest.iter().filter(|w| !w.text().starts_with(['-', '+']));
    match first.value.as_deref() {
        Some("export" | "declare" | "typeset" | "local" | "readonly") => {
            // `declare -n r=h` names another variable, `-i` evaluates arithmetic: the
            // value is not the text.
            let computed = rest
                .iter()
                .any(|w| w.text().starts_with(['-', '+']) && w.text().contains(['n', 'i']));
            set_names(operands(), computed)
        }
        Some("printf") => match rest {
            [flag, name, format, args @ ..] if flag.text() == "-v" => {
                // `printf -v h web01`, `printf -v h %s web01`: the text itself.
                let value = match (format.value.as_deref(), args) {
                    (Some("%s"), [arg]) => arg.value.clone(),
                    (Some(f), []) if !f.contains(['%', '\\']) => Some(f.to_owned()),
                    _ => None,
                };
                vec![(name.text().trim_end_matches(']').to_owned(), value)]
            }
            _ => Vec::new(),
        },
        Some("read") => {
            let mut names = Vec::new();
            let mut skip = false;
            for word in rest {
                let text = word.text();
                if std::mem::take(&mut skip) {
                    continue;
                }
                if text.starts_with('-') {
                    skip =
                        text.len() > 1 && text.ends_with(['a', 'd', 'i', 'n', 'N', 'p', 't', 'u']);
                } else {
                    names.push(text.to_owned());
                }
            }
            let line = match (&cmd.stdin, names.as_slice()) {
                (Stdin::Text(text), [_]) => text
                    .value
                    .as_deref()
                    .map(|t| t.trim_matches([' ', '\t', '\n']).to_owned())
                    .filter(|t| !t.contains('\n')),
                _ => None,
            };
            if names.is_empty() {
                names.push(String::from("REPLY"));
            }
            names.into_iter().map(|n| (n, line.clone())).collect()
        }
        Some("mapfile" | "readarray") => {
            let name = operands().next_back().map_or("MAPFILE", Arg::text);
            vec![(name.to_owned(), None)]
        }
        _ => Vec::new(),
    }
}

/// The variables `export`/`declare`-like operands set, each with its literal value (none
/// when `computed`, or when it expands), a brace in a name naming every name it expands to.
fn set_names<'w>(
    operands: impl Iterator<Item = &'w Arg>,
    computed: bool,
) -> Vec<(String, Option<String>)> {
    let literal =
        |value: &str| (!computed && !value.contains(['$', '`'])).then(|| value.to_owned());
    operands
        .filter_map(|w| {
            let (name, value) = match &w.value {
                Some(text) => {
                    let (name, value) = text.split_once('=')?;
                    (name.to_owned(), literal(value))
                }
                None => (w.raw.split_once('=')?.0.to_owned(), None),
            };
            Some((name, value))
        })
        .flat_map(|(name, value)| {
            braced_names(&name)
                .into_iter()
                .map(move |n| (n, value.clone()))
        })
        .filter(|(name, _)| is_name(name))
        .collect()
}

/// The names a name with a brace expansion in it stands for (`{PGHOST,PGX}` → both); the
/// name itself when it has none.
fn braced_names(name: &str) -> Vec<String> {
    if let Some((head, rest)) = name.split_once('{')
        && let Some((inner, tail)) = rest.split_once('}')
        && inner.contains(',')
    {
        return inner
            .split(',')
            .flat_map(|part| braced_names(&format!("{head}{part}{tail}")))
            .collect();
    }
    vec![name.to_owned()]
}

/// `cmd` with the words whose expansions are all bound (by `vars`, innermost last, or the
/// command's own loop bindings) given their values.
pub(crate) fn bind_values(cmd: &Cmd, vars: &[(String, String)]) -> Cmd {
    let lookup = |name: &str| -> Option<String> {
        cmd.bindings
            .iter()
            .rev()
            .chain(vars.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    // An unquoted expansion is split into words on IFS; when the text sets IFS itself, the
    // split is not followed and the word stays dynamic.
    let ifs_set = vars.iter().any(|(n, _)| n == "IFS");
    let mut words = Vec::new();
    for word in &cmd.words {
        let value = match &word.value {
            Some(_) => None,
            None if !word.raw.contains('$') => None,
            None => posix::evaluate(&word.raw, &lookup),
        };
        let Some(value) = value else {
            words.push(word.clone());
            continue;
        };
        let quoted = word.raw.contains(['"', '\'']);
        if quoted {
            words.push(Arg {
                raw: word.raw.clone(),
                value: Some(value),
            });
        } else if ifs_set {
            words.push(word.clone());
        } else {
            words.extend(value.split_whitespace().map(|part| Arg {
                raw: word.raw.clone(),
                value: Some(part.to_owned()),
            }));
        }
    }
    Cmd {
        words,
        ..cmd.clone()
    }
}
