//! The redaction of secrets that others wrote into text `rewind` keeps or shows: tool
//! arguments in the audit trail, and every text that leaves the process (each decision's
//! reason or context, the command it quotes, the VM references the trail keeps). What is not
//! a secret stays byte for byte, so the audit trail still says which VM a call reached.
//!
//! Free text goes through the passes in order, each its own module:
//!
//! - [`prefixed`]: private keys (PEM, or OpenSSH's base64) and tokens by their well-known
//!   prefixes, wherever they stand;
//! - [`stdin`]: a password piped or here-stringed into a program that reads it from stdin
//!   (`echo x | sudo -S`, `chpasswd`);
//! - [`words`]: word by word, with the program each word belongs to: the value after a name
//!   that says secret ([`names`]: `--password x`, `KEY=value`, `"token": x`, option lists),
//!   `-p<secret>` and `-p <secret>` for the programs that take one, `user:secret` for curl,
//!   `user:secret@` in URLs and before a host, an `Authorization` header's credential, the
//!   positional passwords of `net user`, `htpasswd -b`, `mysqladmin password`, `vault login`,
//!   `setx`, and SQL's `IDENTIFIED BY 'x'`.
//!
//! An argument vector (an MCP tool's array argument) is read by structure too ([`argv`]):
//! an option that commonly takes a secret takes its value with it, whatever the program.

mod argv;
mod names;
mod prefixed;
mod stdin;
#[cfg(test)]
mod tests;
mod words;

pub(crate) use argv::redact_argv;
pub(crate) use names::is_secret_key;
use words::redact_args;

/// What replaces a secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// Redacts the secrets written inline in free text (a command, a script, a here-doc):
/// everything that is not a secret is kept byte for byte, white space included.
///
/// One call often redacts the same text more than once (a command is quoted in the decision
/// and summarised in the audit record): the last few texts and their redactions are kept, per
/// thread, and a text seen again gets its redaction back without the passes.
pub(crate) fn redact_text(text: &str) -> String {
    /// How many recent texts are kept.
    const RECENT: usize = 4;
    thread_local! {
        static RECENT_TEXTS: std::cell::RefCell<Vec<(String, String)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    if let Some(known) = RECENT_TEXTS.with_borrow(|recent| {
        recent
            .iter()
            .find(|(seen, _)| seen == text)
            .map(|(_, redacted)| redacted.clone())
    }) {
        return known;
    }
    let redacted = redact_passes(text);
    RECENT_TEXTS.with_borrow_mut(|recent| {
        if recent.len() == RECENT {
            recent.remove(0);
        }
        recent.push((text.to_owned(), redacted.clone()));
    });
    redacted
}

/// [`redact_text`]'s passes, in order.
pub(super) fn redact_passes(text: &str) -> String {
    let text = prefixed::redact_private_keys(text);
    let text = prefixed::redact_tokens(&text);
    let text = stdin::redact_stdin_secrets(&text);
    words::redact_words(&text)
}

/// A VM reference as it may be shown or kept: the credentials in it (`ssh://admin:x@web01/`,
/// `admin:x@web01`) stripped, and anything else secret in it redacted.
pub(crate) fn strip_credentials(reference: &str) -> String {
    let (scheme, rest) = match reference.find("://") {
        Some(at) => reference.split_at(at + 3),
        None => ("", reference),
    };
    // The user information runs to the last `@` before a query or fragment, not to the
    // first `/`: a password may hold one (`https://admin:p/w@web01/api`). An `@` after a `/`
    // with no `:` before it is in a path.
    let authority_end = rest.find(['?', '#']).unwrap_or(rest.len());
    let stripped = match rest[..authority_end].rfind('@') {
        Some(at)
            if rest[..at].contains(':') || (!scheme.is_empty() && !rest[..at].contains('/')) =>
        {
            format!("{scheme}{}", &rest[at + 1..])
        }
        _ => reference.to_owned(),
    };
    redact_text(&stripped)
}
