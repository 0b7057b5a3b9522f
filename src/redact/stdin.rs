//! A password written to the standard input of a program that reads it from there: piped
//! (`echo x | sudo -S`) or here-stringed (`sudo -S … <<< x`).

use super::REDACTED;
use super::words::{program_name, separates_commands, words_with_offsets};

/// How a program reads a secret from its standard input.
#[derive(Clone, Copy)]
pub(super) enum FromStdin {
    /// The whole input is the secret (`sudo -S`, `passwd --stdin`, `docker login
    /// --password-stdin`).
    Whole,
    /// The input is `user:secret` lines (`chpasswd`).
    AfterColon,
}

/// Whether the command in `words` reads a secret from stdin, and in which form.
pub(super) fn reads_secret_from_stdin(words: &[&str]) -> Option<FromStdin> {
    let mut words = words
        .iter()
        .map(|w| w.trim_matches(['\'', '"', '(', ')', '`']))
        .filter(|w| !w.is_empty())
        .skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let program = program_name(words.next()?);
    let rest: Vec<&str> = words.collect();
    // A wrapper (`sudo chpasswd`, `env X=1 passwd --stdin u`): the program it runs decides,
    // unless it reads a secret itself (`sudo -S`).
    if matches!(
        program.as_str(),
        "sudo" | "doas" | "env" | "nohup" | "time" | "nice" | "stdbuf"
    ) && let Some(kind) = (0..rest.len())
        .filter(|&j| !rest[j].starts_with('-'))
        .find_map(|j| reads_secret_from_stdin(&rest[j..]))
    {
        return Some(kind);
    }
    let has = |flag: &str| rest.contains(&flag);
    let whole = match program.as_str() {
        "sudo" => {
            has("--stdin")
                || rest
                    .iter()
                    .take_while(|w| w.starts_with('-'))
                    .any(|w| !w.starts_with("--") && w.contains('S'))
        }
        "passwd" => has("--stdin"),
        "chpasswd" | "chgpasswd" => return Some(FromStdin::AfterColon),
        "smbpasswd" => has("-s"),
        "kinit" | "cryptsetup" => true,
        "htpasswd" => rest
            .iter()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('i')),
        "gpg" | "gpg2" => rest.iter().any(|w| w.starts_with("--passphrase-fd")),
        "gh" => has("--with-token"),
        "vault" => has("login") && has("-"),
        "openssl" => has("stdin") || rest.iter().any(|w| w.ends_with("stdin")),
        _ => has("--password-stdin"),
    };
    whole.then_some(FromStdin::Whole)
}

/// Where one command ends: `;`, `&&`, `||`, `&`, `(`, `{`, a word ending in `;`.
pub(super) fn ends_command(word: &str) -> bool {
    separates_commands(word) && word != "|" || word.ends_with(';')
}

/// A password piped or here-stringed into a program that reads it from stdin:
/// `echo x | sudo -S …`, `printf '%s\n' x | passwd --stdin root`, `echo 'u:x' | chpasswd`,
/// `(echo x; echo x) | smbpasswd -s -a u`, `sudo -S … <<< x`. The echoed words go, the
/// command and its targets stay.
pub(super) fn redact_stdin_secrets(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('|') && !text.contains("<<<") {
        return std::borrow::Cow::Borrowed(text);
    }
    // Words, with a `|` or `<<<` glued to a neighbour split off (`x|sudo`).
    let mut words: Vec<(usize, &str)> = Vec::new();
    for (start, word) in words_with_offsets(text) {
        let mut rest = word;
        let mut offset = start;
        // Both markers are ASCII: a byte search finds them where a character search would.
        while let Some(at) = rest.bytes().position(|b| matches!(b, b'|' | b'<')) {
            let marker = if rest[at..].starts_with("<<<") {
                3
            } else if rest[at..].starts_with("||") {
                2
            } else if rest[at..].starts_with('|') {
                1
            } else {
                let skip = at + 1;
                words.push((offset, &rest[..skip]));
                offset += skip;
                rest = &rest[skip..];
                continue;
            };
            if at > 0 {
                words.push((offset, &rest[..at]));
            }
            words.push((offset + at, &rest[at..at + marker]));
            offset += at + marker;
            rest = &rest[at + marker..];
        }
        if !rest.is_empty() {
            words.push((offset, rest));
        }
    }
    // Glue back pieces split at a `<` that was not a here-string.
    let line_break = |from: usize, to: usize| text[from..to].contains('\n');
    let mut spans: Vec<(usize, usize, FromStdin)> = Vec::new();
    for (i, &(_, word)) in words.iter().enumerate() {
        if word == "|" {
            let consumer: Vec<&str> = words[i + 1..]
                .iter()
                .take_while(|(_, w)| !ends_command(w) && *w != "|")
                .map(|&(_, w)| w)
                .collect();
            let Some(kind) = reads_secret_from_stdin(&consumer) else {
                continue;
            };
            spans.extend(
                echoed(&words[..i], &line_break)
                    .into_iter()
                    .map(|(a, b)| (a, b, kind)),
            );
        } else if word == "<<<" {
            let first = words[..i]
                .iter()
                .rposition(|(s, w)| ends_command(w) || *w == "|" || line_break(*s, words[i].0))
                .map_or(0, |p| p + 1);
            let command: Vec<&str> = words[first..i].iter().map(|&(_, w)| w).collect();
            let Some(kind) = reads_secret_from_stdin(&command) else {
                continue;
            };
            if let Some(&(start, value)) = words.get(i + 1) {
                let mut end = start + value.len();
                if let Some(quote) = value.chars().next().filter(|c| matches!(c, '\'' | '"'))
                    && (value.len() < 2 || !value.ends_with(quote))
                {
                    // A quoted value with spaces: on to the closing quote.
                    if let Some(&(s, w)) = words[i + 2..].iter().find(|(_, w)| w.contains(quote)) {
                        end = s + w.len();
                    }
                }
                spans.push((start, end, kind));
            }
        }
    }
    if spans.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    spans.sort_by_key(|&(start, _, _)| start);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, kind) in spans {
        if start < last {
            continue;
        }
        out.push_str(&text[last..start]);
        out.push_str(&redact_span(&text[start..end], kind));
        last = end;
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}

/// The byte spans of what `echo`/`printf` print just before a pipe (`words` ends at the
/// pipe): the arguments of the nearest one in the same command, or of each one in a
/// `( … )` group that ends at the pipe.
pub(super) fn echoed(
    words: &[(usize, &str)],
    line_break: &dyn Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    let Some(&(_, last)) = words.last() else {
        return Vec::new();
    };
    let group_start = if last.ends_with(')') {
        words.iter().rposition(|(_, w)| w.starts_with('('))
    } else {
        None
    };
    let mut spans = Vec::new();
    let mut end = words.len();
    loop {
        let from = words[..end]
            .iter()
            .rposition(|&(_, w)| matches!(program_name(w).as_str(), "echo" | "printf"));
        let Some(from) = from else { break };
        if words[from..end]
            .iter()
            .zip(words[from + 1..end].iter())
            .any(|(&(s, w), &(next, _))| {
                (ends_command(w) && group_start.is_none()) || line_break(s, next)
            })
        {
            break;
        }
        let printf = program_name(words[from].1) == "printf";
        let args: Vec<&(usize, &str)> = words[from + 1..end]
            .iter()
            .skip_while(|(_, w)| matches!(*w, "-n" | "-e" | "-E" | "-ne" | "-en" | "--"))
            .enumerate()
            .skip_while(|(n, (_, w))| printf && *n == 0 && w.contains('%'))
            .map(|(_, w)| w)
            .collect();
        if let (Some(first), Some(last)) = (args.first(), args.last()) {
            spans.push((first.0, last.0 + last.1.len()));
        }
        match group_start {
            Some(group) if from > group => end = from,
            _ => break,
        }
        // The echo before this one in the group ends with `;`: its arguments end there.
        while end > 0 && !words[end - 1].1.ends_with(';') && end > from {
            end -= 1;
        }
    }
    spans
}

/// `text` (one or more words) with its secret replaced: quotes and closing punctuation stay,
/// and for `user:secret` the user stays.
pub(super) fn redact_span(text: &str, kind: FromStdin) -> String {
    let inner = text.trim_start_matches(['\'', '"', '(']);
    let lead = &text[..text.len() - inner.len()];
    let core = inner.trim_end_matches(['\'', '"', ';', ')', '|']);
    let trail = &inner[core.len()..];
    let kept = match kind {
        FromStdin::Whole => "",
        FromStdin::AfterColon => core.find(':').map_or("", |at| &core[..=at]),
    };
    format!("{lead}{kept}{REDACTED}{trail}")
}
