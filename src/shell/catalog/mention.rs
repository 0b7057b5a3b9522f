//! How a command's text is searched for a catalog's program names: folded to lower case
//! with quoting and expansions taken away, a name counting only where it stands as a word.

/// Whether the `len` bytes at `at` of `folded` stand as a word of their own: no letter or
/// digit right before or after them (`cap` in `cap deploy`, not in `escape`).
pub(super) fn is_word_at(folded: &str, at: usize, len: usize) -> bool {
    let bytes = folded.as_bytes();
    let alnum = |i: Option<usize>| {
        i.and_then(|i| bytes.get(i))
            .is_some_and(u8::is_ascii_alphanumeric)
    };
    !alnum(at.checked_sub(1)) && !alnum(Some(at + len))
}

/// Whether the `len` bytes at `at` of a text [`without_expansions`] made (`origin` maps them
/// back into `chars`) were split apart in the text, or stand there as a word of their own.
pub(super) fn hidden_or_a_word(chars: &[char], origin: &[usize], at: usize, len: usize) -> bool {
    let (first, last) = (origin[at], origin[at + len - 1]);
    let alnum = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    last - first >= len || (!alnum(first.checked_sub(1)) && !alnum(Some(last + 1)))
}

/// `text` lowercased with quotes, backslashes, `$` and backticks taken away.
pub(super) fn folded(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\\' | '\'' | '"' | '$' | '`'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// `text` lowercased with expansions (`$(…)`, `${…}`, `` `…` ``, `$name`, `$@`), quotes,
/// backslashes, `+`, brackets and whitespace taken away; and for each byte of that, the
/// index of the character of `text` it comes from.
pub(super) fn without_expansions(text: &str) -> (String, Vec<usize>) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    let mut i = 0;
    // Past the bracket that closes the one at `open` (or the end of the text).
    let close = |open: usize| -> usize {
        let (start, end) = match chars[open] {
            '(' => ('(', ')'),
            _ => ('{', '}'),
        };
        let mut depth = 0usize;
        for (at, &c) in chars.iter().enumerate().skip(open) {
            if c == start {
                depth += 1;
            } else if c == end {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
        }
        chars.len()
    };
    while let Some(&c) = chars.get(i) {
        match (c, chars.get(i + 1)) {
            ('$', Some('(' | '{')) => i = close(i + 1),
            ('$', Some(&n)) if n.is_ascii_digit() || "@*#?!-$".contains(n) => i += 2,
            ('$', Some(&n)) if n.is_alphabetic() || n == '_' => {
                i += 2;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
            }
            ('`', _) if chars[i + 1..].contains(&'`') => {
                i += 1;
                while chars.get(i).is_some_and(|c| *c != '`') {
                    i += 1;
                }
                i += 1;
            }
            _ => {
                if !(c.is_whitespace() || "\\'\"$`+(){}".contains(c)) {
                    for lower in c.to_lowercase() {
                        out.push(lower);
                        origin.resize(out.len(), i);
                    }
                }
                i += 1;
            }
        }
    }
    (out, origin)
}
