//! What a PowerShell variable holds when the text sets it, for the self-guard: `$p =
//! "$HOME\.claude\settings.json"; Remove-Item $p` removes the hook's settings as surely as
//! naming them does. A variable is read where it is used, from the last assignment before
//! it: a quoted string (a double-quoted one with its variables expanded), a bare word, or
//! `Join-Path` of such. Anything else the variable is set to (a command's output, an
//! expression) makes it unknown again, and a word using it stays as written.

use crate::shell::{Arg, Cmd};

/// The home directory, as the self-guard's paths spell it.
const HOME: &str = "~";

/// The variables the commands before this one set, lower-case names, latest last.
#[derive(Debug, Default)]
pub(super) struct Values(Vec<(String, Option<String>)>);

impl Values {
    /// Notes what `cmd` assigns, if it is an assignment: its value when the text fixes it,
    /// else that the variable is no longer known.
    pub(super) fn note(&mut self, cmd: &Cmd) {
        let Some(name) = &cmd.assigned_to else {
            return;
        };
        let value = self.assigned(cmd);
        self.0.push((name.to_ascii_lowercase(), value));
    }

    /// `cmd` with each word that uses a variable the text set, and only known ones, given
    /// its value, as a literal. A word naming only the home directory stays as written: the
    /// self-guard reads it so, and shows it as the agent wrote it.
    pub(super) fn bind(&self, cmd: &Cmd) -> Cmd {
        let mut bound = cmd.clone();
        for word in &mut bound.words {
            if word.raw.contains('$')
                && let Some((value, true)) = self.expand_noting(&word.raw)
            {
                *word = Arg::literal(value);
            }
        }
        bound
    }

    fn assigned(&self, cmd: &Cmd) -> Option<String> {
        match cmd.words.as_slice() {
            [value] => self.expand(&value.raw),
            [program, rest @ ..] if program.raw.eq_ignore_ascii_case("join-path") => {
                let parts: Vec<&Arg> = rest.iter().filter(|w| !w.raw.starts_with('-')).collect();
                let [parent, child] = parts.as_slice() else {
                    return None;
                };
                Some(format!(
                    "{}/{}",
                    self.expand(&parent.raw)?.trim_end_matches(['/', '\\']),
                    self.expand(&child.raw)?.trim_start_matches(['/', '\\'])
                ))
            }
            _ => None,
        }
    }

    /// The text `raw` stands for: a single-quoted string as written, a double-quoted or a
    /// bare one with its variables replaced; `None` when one of them is not known.
    fn expand(&self, raw: &str) -> Option<String> {
        self.expand_noting(raw).map(|(text, _)| text)
    }

    /// [`Values::expand`], and whether a variable the text set was used.
    fn expand_noting(&self, raw: &str) -> Option<(String, bool)> {
        if let Some(inner) = raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            return Some((inner.replace("''", "'"), false));
        }
        let inner = raw
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .unwrap_or(raw);
        let (mut out, mut set) = (String::with_capacity(inner.len()), false);
        let mut rest = inner;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let (name, after) = variable_at(&rest[at + 1..])?;
            if is_home(&name) {
                out.push_str(HOME);
            } else {
                out.push_str(self.value_of(&name)?);
                set = true;
            }
            rest = after;
        }
        out.push_str(rest);
        Some((out, set))
    }

    fn value_of(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(known, _)| known == name)
            .and_then(|(_, value)| value.as_deref())
    }
}

/// Whether the variable `name` (lower-case) is one of the self-guard's spellings of the home
/// directory (`$HOME`, `$env:USERPROFILE`).
fn is_home(name: &str) -> bool {
    super::HOME_SPELLINGS
        .iter()
        .any(|spelling| spelling.strip_prefix('$') == Some(name))
}

/// The variable name (lower-case) at the start of `text` (just past a `$`): `${any name}`,
/// or letters, digits, `_` and one scope or drive colon (`env:HOME`); and the text after it.
fn variable_at(text: &str) -> Option<(String, &str)> {
    if let Some(braced) = text.strip_prefix('{') {
        let end = braced.find('}')?;
        return Some((braced[..end].to_ascii_lowercase(), &braced[end + 1..]));
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    let name = text[..end].trim_end_matches(':');
    (!name.is_empty()).then(|| (name.to_ascii_lowercase(), &text[name.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(assignments: &[(&str, &[&str])]) -> Values {
        let mut values = Values::default();
        for (name, words) in assignments {
            values.note(&Cmd {
                words: words
                    .iter()
                    .map(|w| Arg::dynamic((*w).to_owned()))
                    .collect(),
                assigned_to: Some((*name).to_owned()),
                ..Cmd::default()
            });
        }
        values
    }

    #[test]
    fn strings_and_join_path_give_their_value_and_anything_else_forgets_it() {
        let known = values(&[
            ("d", &["\"$env:USERPROFILE\\.claude\""]),
            ("f", &["Join-Path", "$d", "'settings.json'"]),
            ("q", &["'$HOME'"]),
            ("o", &["Get-Item", "x"]),
        ]);
        assert_eq!(known.expand("\"$d\\x\"").as_deref(), Some("~\\.claude\\x"));
        assert_eq!(
            known.expand("$f").as_deref(),
            Some("~\\.claude/settings.json")
        );
        assert_eq!(
            known.expand("${F}").as_deref(),
            Some("~\\.claude/settings.json")
        );
        assert_eq!(known.expand("$q").as_deref(), Some("$HOME"));
        assert_eq!(known.expand("$o"), None);
        assert_eq!(known.expand("$unset/x"), None);
        let later = values(&[("d", &["'~/.claude'"]), ("d", &["Get-Item", "x"])]);
        assert_eq!(later.expand("$d"), None, "reassigned to what is not read");
    }
}
