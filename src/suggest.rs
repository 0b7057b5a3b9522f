//! "Did you mean": the nearest of the valid words to a mistyped one (a VM name, a
//! configuration key, a catalog field), or none when nothing is close enough to be a typo.

/// How alike two words must be (Jaro-Winkler, 1.0 = equal, weighing a shared start) to call
/// one a typo of the other; clap's own suggestions use Jaro 0.7.
const ALIKE: f64 = 0.8;

/// Words longer than this are nobody's typo, and are not compared: the edit distance takes
/// memory in the product of the two lengths, and the word may be a peer's megabyte.
const WORD_MAX: usize = 256;

/// The candidate nearest to `word`, compared without regard to case; `None` when none is
/// close enough or `word` is one of them.
pub(crate) fn nearest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    if word.len() > WORD_MAX {
        return None;
    }
    let word = word.to_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates.into_iter().filter(|c| c.len() <= WORD_MAX) {
        let lower = candidate.to_lowercase();
        if lower == word {
            return None;
        }
        // Jaro-Winkler misses a swap in a short word (`ect` for `etc`): one edit (a swap
        // counts as one) in four characters is a typo too.
        let edits = strsim::damerau_levenshtein(&word, &lower);
        let score = strsim::jaro_winkler(&word, &lower)
            .max(strsim::normalized_damerau_levenshtein(&word, &lower));
        let alike = score >= ALIKE || edits <= (word.chars().count() / 4).max(1);
        if alike && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or `b`"):
/// the nearest expected field to `x`.
pub(crate) fn unknown_field(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    let (field, rest) = rest.split_once('`')?;
    let (_, expected) = rest.split_once("expected ")?;
    let expected = expected.lines().next().unwrap_or_default();
    let fields: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    nearest(field, fields).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_word_and_a_stranger_finds_none() {
        let vms = ["jp-ubuntu", "win2019-1", "db01", "web"];
        assert_eq!(nearest("jp-ubunt", vms), Some("jp-ubuntu"));
        assert_eq!(nearest("JP-UBNUTU", vms), Some("jp-ubuntu"));
        assert_eq!(nearest("win2019", vms), Some("win2019-1"));
        assert_eq!(nearest("ect", ["etc", "home", "var"]), Some("etc"));
        assert_eq!(nearest("mail-server", vms), None);
        assert_eq!(nearest("db01", vms), None, "an exact word is no typo");
        assert_eq!(nearest("x", Vec::<&str>::new()), None);
        let long = "jp-ubuntu".repeat(WORD_MAX);
        assert_eq!(nearest(&long, vms), None, "a megabyte is no typo");
    }

    #[test]
    fn serde_unknown_field_messages_name_the_nearest_expected_field() {
        assert_eq!(
            unknown_field(
                "unknown field `budgt`, expected one of `budget_secs`, `on_checkpoint`, `catalogs`"
            )
            .as_deref(),
            Some("budget_secs")
        );
        assert_eq!(
            unknown_field("unknown field `vm_args`, expected `server` or `vm_arg`").as_deref(),
            Some("vm_arg")
        );
        assert_eq!(
            unknown_field("unknown field `zzz`, expected `server` or `tool`"),
            None
        );
        assert_eq!(unknown_field("invalid type: string"), None);
    }
}
