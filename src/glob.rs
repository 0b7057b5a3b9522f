//! Glob patterns as catalogs write them (`write_*`, `r?n`): a leaf every catalog shares.

/// `*` matches any run of characters, `?` one; everything else literally, case-sensitively.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    glob_chars(pattern.chars(), text.chars())
}

/// [`glob_match`] over two character iterators: a position is a clone of an iterator, so
/// backtracking to the last `*` needs no buffer.
pub(crate) fn glob_chars<P, T>(mut pattern: P, mut text: T) -> bool
where
    P: Iterator<Item = char> + Clone,
    T: Iterator<Item = char> + Clone,
{
    // After the last `*` seen: the pattern past it, and where in the text it started.
    let mut star: Option<(P, T)> = None;
    loop {
        let mut text_next = text.clone();
        let Some(t) = text_next.next() else { break };
        let mut pattern_next = pattern.clone();
        match pattern_next.next() {
            Some('*') => {
                star = Some((pattern_next.clone(), text.clone()));
                pattern = pattern_next;
            }
            Some(p) if p == '?' || p == t => {
                pattern = pattern_next;
                text = text_next;
            }
            _ => match &mut star {
                // Let the `*` take one more character and try again from there.
                Some((after_star, from)) => {
                    from.next();
                    pattern = after_star.clone();
                    text = from.clone();
                }
                None => return false,
            },
        }
    }
    pattern.all(|c| c == '*')
}
