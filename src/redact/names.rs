//! Whether a name (a JSON key, an environment variable, an option without its dashes) says
//! that its value is a secret: a rule on the words of the name, not a list of names.

/// Whether a key (a JSON key, an environment variable, a command-line flag without its
/// dashes) names a secret. The key is split into words (`_`, `-`, `.`, `:`, camelCase), so a
/// host called `passage01` or a `max_tokens` limit is not a secret, while `pw`, `MYSQL_PWD`,
/// `apiKey`, `X-Auth-Token`, `DB_PASSWORD` and `credentials_file` are.
///
/// The rule: a name says secret when one of its words says secret, password, pass, pwd,
/// token, pin, otp or credential (also run together, `dbpass`, `SSHPASS`), or when it ends
/// in a key (`key`, `api_key`, `sshkey`; not `StrictHostKeyChecking`), or when a key's or
/// identity's content follows (`identity_file_content`, `key_data`).
pub(crate) fn is_secret_key(key: &str) -> bool {
    if key.is_ascii() && !may_name_secret(key.as_bytes()) {
        return false;
    }
    names_secret(key)
}

/// Whether an ASCII key holds, in any case, one of the pieces that every rule of
/// [`is_secret_key`] needs in some word of the key (`pw`, `pass`, `otp`, `secret`, `token`,
/// `key`, `auth`, `cred`, `cookie`, `bearer`, `pin`, `identity`): a key without any says no
/// secret, and most words of a command (`cargo`, `--locked`, `status`) are such keys. Not
/// for other text: a non-ASCII letter may lower-case to ASCII (`K`, the Kelvin sign, is `k`).
pub(super) fn may_name_secret(key: &[u8]) -> bool {
    let has = |at: usize, piece: &[u8]| {
        key.get(at..at + piece.len())
            .is_some_and(|k| k.eq_ignore_ascii_case(piece))
    };
    (0..key.len()).any(|at| match key[at].to_ascii_lowercase() {
        b'p' => has(at, b"pw") || has(at, b"pass") || has(at, b"pin"),
        b'o' => has(at, b"otp"),
        b's' => has(at, b"secret"),
        b't' => has(at, b"token"),
        b'k' => has(at, b"key"),
        b'a' => has(at, b"auth"),
        b'c' => has(at, b"cred") || has(at, b"cookie"),
        b'b' => has(at, b"bearer"),
        b'i' => has(at, b"identity"),
        _ => false,
    })
}

/// [`is_secret_key`]'s rule on the words of the key, without the pre-check.
pub(super) fn names_secret(key: &str) -> bool {
    let words = key_words(key);
    let pair =
        |first: &str, second: &str| words.windows(2).any(|w| w[0] == first && w[1] == second);
    let last = words.last().map(String::as_str).unwrap_or_default();
    let content = |w: &str| {
        matches!(
            w,
            "content"
                | "contents"
                | "data"
                | "material"
                | "pem"
                | "text"
                | "value"
                | "b64"
                | "base64"
        )
    };
    words.iter().any(|word| secret_word(word))
        || last == "key"
        || (last.ends_with("key")
            && last.len() > 3
            && !matches!(last, "hotkey" | "monkey" | "turkey" | "hockey" | "jockey"))
        || (last.ends_with("pass")
            && !matches!(
                last,
                "bypass" | "compass" | "encompass" | "overpass" | "underpass" | "trespass"
            ))
        || last == "pin"
        || words.windows(2).any(|w| {
            (w[0] == "identity" || w[0] == "key" || w[0].ends_with("key")) && content(&w[1])
        })
        || words
            .windows(3)
            .any(|w| (w[0] == "identity" || w[0] == "key") && w[1] == "file" && content(&w[2]))
        || [
            "api",
            "private",
            "access",
            "secret",
            "signing",
            "encryption",
            "master",
            "ssh",
            "ssl",
            "tls",
            "client",
            "deploy",
        ]
        .iter()
        .any(|first| pair(first, "key"))
        || pair("client", "secret")
}

pub(super) fn secret_word(word: &str) -> bool {
    matches!(
        word,
        "pw" | "pwd"
            | "pass"
            | "passcode"
            | "otp"
            | "totp"
            | "hotp"
            | "passwd"
            | "secret"
            | "secrets"
            | "token"
            | "apikey"
            | "auth"
            | "authorization"
            | "privatekey"
            | "cred"
            | "creds"
            | "cookie"
            | "bearer"
    ) || word.starts_with("credential")
        // Run together: `dbpassword`, `pgpassword`, `clientsecret`, `xauthtoken`.
        || ["password", "passwd", "passphrase"]
            .iter()
            .any(|w| word.contains(w))
        || ["secret", "token", "apikey", "privatekey"]
            .iter()
            .any(|w| word.ends_with(w))
}

/// The lowercase words of a key: split at non-alphanumerics and at a lowercase-to-uppercase
/// step (`apiKey` → `api`, `key`).
pub(super) fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_numeric();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}
