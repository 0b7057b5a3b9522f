//! Secrets recognisable by their own shape, wherever they stand: private keys and tokens
//! with a well-known prefix.

use super::REDACTED;

/// A PEM private key (`-----BEGIN … PRIVATE KEY-----` through its `-----END …-----`, or to
/// the end of the text when there is none) goes whole: a key pasted into a file's content or
/// a here-doc has no secret-looking name beside it.
pub(super) fn redact_private_keys(text: &str) -> std::borrow::Cow<'_, str> {
    const BEGIN: &str = "-----BEGIN ";
    const DASHES: &str = "-----";
    if !text.contains(BEGIN) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let label_len = [after.find(DASHES), after.find('\n')]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(after.len());
        if !after[..label_len].contains("PRIVATE") {
            out.push_str(&rest[..start + BEGIN.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(REDACTED);
        let body = &after[label_len..];
        rest = body
            .find("-----END ")
            .map(|end| &body[end + "-----END ".len()..])
            .and_then(|tail| tail.find(DASHES).map(|e| &tail[e + DASHES.len()..]))
            .unwrap_or("");
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The prefixes of [`redact_tokens`]'s tokens.
pub(super) const PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xapp-",
    "sk-ant-",
    "sk-proj-",
    "npm_",
    "eyJ",
    "b3BlbnNzaC1rZXktdjE",
];

/// The first bytes of [`PREFIXES`].
pub(super) const TOKEN_STARTS: &[u8] = b"gxsneb";

/// Tokens recognisable by their prefix wherever they stand (a URL's user, a header, an
/// argument): GitHub's, GitLab's, Slack's, OpenAI's and Anthropic's, npm's, JSON Web Tokens,
/// and OpenSSH private keys in their base64 form (`b3BlbnNzaC1rZXktdjE…`, no PEM armour).
pub(super) fn redact_tokens(text: &str) -> std::borrow::Cow<'_, str> {
    const LEAST: usize = 16;
    let token_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '=');
    let mut out = String::new();
    let mut last = 0;
    let mut at = 0;
    let bytes = text.as_bytes();
    while at < text.len() {
        // Only an ASCII byte that starts a prefix may start a token: the others (a byte
        // inside a character too) are passed over without looking back or ahead.
        if !TOKEN_STARTS.contains(&bytes[at]) {
            at += 1;
            continue;
        }
        let rest = &text[at..];
        let starts_word = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        let prefix = PREFIXES.iter().find(|p| rest.starts_with(**p));
        if let (true, Some(prefix)) = (starts_word, prefix) {
            let len = rest.find(|c: char| !token_char(c)).unwrap_or(rest.len());
            // A JSON Web Token has three dot-separated parts; the others are long enough.
            let jwt = *prefix != "eyJ" || rest[..len].matches('.').count() == 2;
            if len >= prefix.len() + LEAST && jwt {
                out.push_str(&text[last..at]);
                out.push_str(REDACTED);
                at += len;
                last = at;
                continue;
            }
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    if last == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}
