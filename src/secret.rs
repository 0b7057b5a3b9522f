//! Secrets: a string that must never be printed ([`Secret`]), and the redaction of secrets
//! that others wrote into text we keep (tool arguments in the audit trail): secret-looking
//! keys, `KEY=value` on any line, `--password x`, `-p<secret>` for the programs that take
//! one, `user:secret` for curl, and `user:secret@` in URLs.

use std::fmt;

/// Holds a secret. `Debug` and `Display` print a placeholder; only [`Secret::expose`] reveals it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that sends it over the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// What replaces a secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// Whether a key (a JSON key, an environment variable, a command-line flag without its
/// dashes) names a secret. The key is split into words (`_`, `-`, `.`, `:`, camelCase), so a
/// host called `passage01` or a `max_tokens` limit is not a secret, while `pw`, `MYSQL_PWD`,
/// `apiKey`, `X-Auth-Token`, `DB_PASSWORD` and `credentials_file` are.
pub(crate) fn is_secret_key(key: &str) -> bool {
    let words = key_words(key);
    let pair =
        |first: &str, second: &str| words.windows(2).any(|w| w[0] == first && w[1] == second);
    words.iter().any(|word| secret_word(word))
        || [
            "api",
            "private",
            "access",
            "secret",
            "signing",
            "encryption",
            "master",
        ]
        .iter()
        .any(|first| pair(first, "key"))
        || pair("client", "secret")
}

fn secret_word(word: &str) -> bool {
    matches!(
        word,
        "pw" | "pwd"
            | "pass"
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
fn key_words(key: &str) -> Vec<String> {
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

/// Programs whose `-p<secret>` (written together) is a password.
const GLUED_P: &[&str] = &[
    "mysql",
    "mysqladmin",
    "mysqldump",
    "mysqlimport",
    "mysqlcheck",
    "mysqlshow",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
    "sshpass",
];

/// Flags that take a secret as their next word, per program (beyond `--password`-like flags,
/// which every program gets).
fn secret_flag(program: &str, flag: &str) -> bool {
    match program {
        "sshpass" => flag == "-p",
        "redis-cli" => flag == "-a",
        "ldapsearch" | "ldapmodify" | "ldapadd" | "ldapdelete" | "ldappasswd" => flag == "-w",
        _ => false,
    }
}

/// Flags whose next word is `user:secret` (curl, wget-like tools) or `user%secret` (smbclient).
fn user_secret_flag(program: &str, flag: &str) -> Option<char> {
    match (program, flag) {
        ("curl", "-u" | "--user" | "--proxy-user" | "-U") => Some(':'),
        ("smbclient" | "rpcclient" | "smbmap", "-U" | "--user") => Some('%'),
        _ => None,
    }
}

/// Words that end one simple command and start the next.
fn separates_commands(word: &str) -> bool {
    matches!(word, ";" | "&&" | "||" | "|" | "&" | "(" | ")" | "{" | "}")
}

/// What the word before asked of this one.
#[derive(Clone, Copy, Default)]
enum Pending {
    #[default]
    None,
    /// The whole word is a secret.
    Secret,
    /// The word is `user<sep>secret`: the part after `sep` is.
    AfterSeparator(char),
    /// The word before was a secret-looking name: if this word is `=`, the next is a secret
    /// (`$env:TOKEN = "x"`).
    Assignment,
}

/// Walks words in order, remembering the program of the current command and what the last
/// word asked of the next.
#[derive(Default)]
struct Redactor {
    program: String,
    pending: Pending,
    /// Inside a quoted secret that spans words: the quote that closes it.
    open_quote: Option<char>,
}

impl Redactor {
    fn text(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, word) in words_with_offsets(text) {
            if let Some(quote) = self.open_quote {
                // Still inside the secret: these words and the space between them go.
                last = start + word.len();
                if let Some(end) = word.find(quote) {
                    self.open_quote = None;
                    out.push_str(&word[end..]);
                }
                continue;
            }
            out.push_str(&text[last..start]);
            last = start + word.len();
            if matches!(self.pending, Pending::Assignment) {
                self.pending = Pending::None;
                if word == "=" {
                    self.pending = Pending::Secret;
                    out.push_str(word);
                    continue;
                }
            }
            let (redacted, quote) = match self.pending {
                Pending::Secret => {
                    self.pending = Pending::None;
                    let bare = word.trim_start_matches(['\'', '"']);
                    if matches!(bare.to_ascii_lowercase().as_str(), "bearer" | "basic") {
                        // `Authorization: Bearer x`: the scheme stays, the credential goes.
                        self.pending = Pending::Secret;
                        out.push_str(word);
                        continue;
                    }
                    redact_value(word)
                }
                Pending::AfterSeparator(sep) => {
                    self.pending = Pending::None;
                    match word.split_once(sep) {
                        Some((user, rest)) if !rest.is_empty() => {
                            let (value, quote) = redact_value(rest);
                            (format!("{user}{sep}{value}"), quote)
                        }
                        _ => (word.to_owned(), None),
                    }
                }
                Pending::None | Pending::Assignment => {
                    let (redacted, next) = redact_word(word, &self.program);
                    self.pending = next;
                    if separates_commands(word) || word.ends_with(';') {
                        self.program.clear();
                    } else if self.program.is_empty() || is_known_program(word) {
                        self.program = program_name(word);
                    }
                    redacted
                }
            };
            self.open_quote = quote;
            out.push_str(&redacted);
        }
        out.push_str(&text[last..]);
        out
    }
}

/// Redacts the secrets written inline in free text (a command, a script, a here-doc):
/// everything that is not a secret is kept byte for byte, white space included.
pub(crate) fn redact_text(text: &str) -> String {
    Redactor::default().text(text)
}

/// Redacts an argument vector (`["--token", "x"]`): as [`redact_text`], across items, and
/// an item that follows a secret flag goes whole.
pub(crate) fn redact_args<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut redactor = Redactor::default();
    items
        .into_iter()
        .map(|item| {
            redactor.open_quote = None;
            if matches!(redactor.pending, Pending::Secret) {
                redactor.pending = Pending::None;
                String::from(REDACTED)
            } else {
                redactor.text(item)
            }
        })
        .collect()
}

/// The program a word names: its last path component, lowercase.
fn program_name(word: &str) -> String {
    let bare = word.trim_matches(['\'', '"', '(', '`']);
    bare.rsplit('/').next().unwrap_or(bare).to_ascii_lowercase()
}

fn is_known_program(word: &str) -> bool {
    let name = program_name(word);
    GLUED_P.contains(&name.as_str())
        || secret_flag(&name, "-p")
        || matches!(
            name.as_str(),
            "curl" | "smbclient" | "rpcclient" | "smbmap" | "redis-cli" | "ldapsearch"
        )
}

/// One word, seen on its own: its redacted form (and an open quote if the secret goes on
/// into later words), and what it asks of the next word.
fn redact_word(word: &str, program: &str) -> ((String, Option<char>), Pending) {
    let keep = |word: &str| (word.to_owned(), None);
    // A URL with a password: `scheme://user:secret@host`.
    if let Some(redacted) = redact_url_password(word) {
        return ((redacted, None), Pending::None);
    }
    // `KEY=value`, `--password=value`, `{"pw":"x"}` glued, `$env:TOKEN="x"`.
    if let Some((key, value)) = word.split_once('=')
        && is_secret_key(key)
    {
        if value.is_empty() {
            // `PASSWORD= x` or `$env:PASSWORD = "x"`: the value is the next word.
            return (keep(word), Pending::Secret);
        }
        let (value, quote) = redact_value(value);
        return ((format!("{key}={value}"), quote), Pending::None);
    }
    // `"pw": "x"`, `password: x` (JSON, YAML, HTTP headers).
    if let Some(key) = word.strip_suffix(':').or_else(|| word.strip_suffix("\":"))
        && is_secret_key(key)
    {
        return (keep(word), Pending::Secret);
    }
    if let Some((key, value)) = word.split_once(':')
        && !value.is_empty()
        && !value.starts_with("//")
        && key.starts_with(['"', '{', '\''])
        && is_secret_key(key)
    {
        let (value, quote) = redact_value(value);
        return ((format!("{key}:{value}"), quote), Pending::None);
    }
    if let Some(flag) = word.strip_prefix('-') {
        let flag_name = flag.trim_start_matches('-');
        if let Some(sep) = user_secret_flag(program, word) {
            return (keep(word), Pending::AfterSeparator(sep));
        }
        // `-uadmin:secret` for curl, glued.
        if let Some(sep) = word
            .get(..2)
            .and_then(|flag| user_secret_flag(program, flag))
            && !word.starts_with("--")
            && word.len() > 2
            && let Some((user, secret)) = word.split_once(sep)
            && !secret.is_empty()
        {
            return ((format!("{user}{sep}{REDACTED}"), None), Pending::None);
        }
        if secret_flag(program, word) {
            return (keep(word), Pending::Secret);
        }
        // `-phunter2` for mysql and sshpass: the password glued to the flag.
        if GLUED_P.contains(&program)
            && let Some(secret) = word.strip_prefix("-p")
            && !secret.is_empty()
        {
            return ((format!("-p{REDACTED}"), None), Pending::None);
        }
        if !flag_name.is_empty() && is_secret_key(flag_name) {
            return (keep(word), Pending::Secret);
        }
    }
    if !word.starts_with('-') && is_secret_key(word) {
        return (keep(word), Pending::Assignment);
    }
    // PowerShell: `ConvertTo-SecureString "x" -AsPlainText`.
    if word.eq_ignore_ascii_case("ConvertTo-SecureString") {
        return (keep(word), Pending::Secret);
    }
    if word.eq_ignore_ascii_case("bearer") {
        return (keep(word), Pending::Secret);
    }
    (keep(word), Pending::None)
}

/// Redacts a value: a quoted one keeps its closing punctuation, and an unclosed quote says
/// the secret goes on into the next words.
fn redact_value(value: &str) -> (String, Option<char>) {
    let Some(quote) = value.chars().next().filter(|c| matches!(c, '\'' | '"')) else {
        // `x;`, `x)` or `x'`: the closing punctuation that ends the word stays.
        let secret = value.trim_end_matches([';', ')', '&', '|', ',', '\'', '"', '}', ']']);
        let secret = if secret.is_empty() { value } else { secret };
        return (format!("{REDACTED}{}", &value[secret.len()..]), None);
    };
    match value[1..].find(quote) {
        Some(end) => (format!("{quote}{REDACTED}{}", &value[1 + end..]), None),
        None => (format!("{quote}{REDACTED}"), Some(quote)),
    }
}

/// `scheme://user:secret@host/…` → `scheme://user:[redacted]@host/…`.
fn redact_url_password(word: &str) -> Option<String> {
    let scheme_end = word.find("://")? + 3;
    let rest = &word[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let at = authority.rfind('@')?;
    let (user, secret) = authority[..at].split_once(':')?;
    if secret.is_empty() {
        return None;
    }
    Some(format!(
        "{}{user}:{REDACTED}{}",
        &word[..scheme_end],
        &rest[at..]
    ))
}

/// The words of `text` (runs of non-white-space, any Unicode white space between) with their
/// byte offsets.
fn words_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = rest.peek() {
            if !c.is_whitespace() {
                break;
            }
            rest.next();
        }
        let (start, _) = *rest.peek()?;
        let mut end = text.len();
        while let Some(&(i, c)) = rest.peek() {
            if c.is_whitespace() {
                end = i;
                break;
            }
            rest.next();
        }
        Some((start, &text[start..end]))
    })
}

#[cfg(test)]
mod tests {
    use super::{Secret, is_secret_key, redact_text};

    #[test]
    fn never_formats_the_value() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?} {s} {s:#?}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
    }

    /// Secrets written into commands and scripts, as agents write them (text, redacted).
    const INLINE: &[(&str, &str)] = &[
        ("mysql -phunter2", "mysql -p[redacted]"),
        (
            "mysql -uroot -phunter2 -h db01 app",
            "mysql -uroot -p[redacted] -h db01 app",
        ),
        (
            "sudo /usr/bin/mysqldump -phunter2 app",
            "sudo /usr/bin/mysqldump -p[redacted] app",
        ),
        ("mysql -p app", "mysql -p app"),
        (
            "curl -u admin:hunter2 https://x",
            "curl -u admin:[redacted] https://x",
        ),
        (
            "curl --user admin:hunter2 https://x",
            "curl --user admin:[redacted] https://x",
        ),
        (
            "curl -uadmin:hunter2 https://x",
            "curl -uadmin:[redacted] https://x",
        ),
        ("curl -u admin https://x", "curl -u admin https://x"),
        (
            "sshpass -p hunter2 ssh web01",
            "sshpass -p [redacted] ssh web01",
        ),
        (
            "sshpass -phunter2 ssh web01",
            "sshpass -p[redacted] ssh web01",
        ),
        ("X=1\nDB_PASSWORD=hunter2", "X=1\nDB_PASSWORD=[redacted]"),
        (
            "X=1\r\n\tDB_PASSWORD=hunter2\n",
            "X=1\r\n\tDB_PASSWORD=[redacted]\n",
        ),
        (
            "deploy --password\thunter2 --env prod",
            "deploy --password\t[redacted] --env prod",
        ),
        (
            "deploy --password\u{a0}hunter2",
            "deploy --password\u{a0}[redacted]",
        ),
        (
            "mysql --password=hunter2 -e 'select 1'",
            "mysql --password=[redacted] -e 'select 1'",
        ),
        (
            "deploy --api-token s3cr3t --env prod",
            "deploy --api-token [redacted] --env prod",
        ),
        (
            "PGPASSWORD=hunter2 psql -h db01",
            "PGPASSWORD=[redacted] psql -h db01",
        ),
        ("MYSQL_PWD=hunter2 mysql", "MYSQL_PWD=[redacted] mysql"),
        (
            "export GITHUB_TOKEN=hunter2; make",
            "export GITHUB_TOKEN=[redacted]; make",
        ),
        (
            "AWS_SECRET_ACCESS_KEY=hunter2 aws s3 ls",
            "AWS_SECRET_ACCESS_KEY=[redacted] aws s3 ls",
        ),
        (
            "PASSWORD=\"hunter 2 x\" ./run",
            "PASSWORD=\"[redacted]\" ./run",
        ),
        ("PASSWORD='hunter 2' ./run", "PASSWORD='[redacted]' ./run"),
        (
            "$env:ZVM_PASSWORD = \"hunter2\"",
            "$env:ZVM_PASSWORD = \"[redacted]\"",
        ),
        (
            "curl -H 'Authorization: Bearer hunter2' x",
            "curl -H 'Authorization: Bearer [redacted]' x",
        ),
        (
            "curl -H 'Authorization: Basic aHVudGVyMg==' x",
            "curl -H 'Authorization: Basic [redacted]' x",
        ),
        (
            "curl -H 'X-Auth-Token: hunter2' x",
            "curl -H 'X-Auth-Token: [redacted]' x",
        ),
        (
            "echo '{\"pw\": \"hunter2\"}' > c.json",
            "echo '{\"pw\": \"[redacted]\"}' > c.json",
        ),
        (
            "echo '{\"pw\":\"hunter2\"}' > c.json",
            "echo '{\"pw\":\"[redacted]\"}' > c.json",
        ),
        (
            "cat <<EOF\npassword: hunter2\nEOF",
            "cat <<EOF\npassword: [redacted]\nEOF",
        ),
        (
            "git clone https://bob:hunter2@git.example/r.git",
            "git clone https://bob:[redacted]@git.example/r.git",
        ),
        (
            "psql postgres://app:hunter2@db01:5432/app",
            "psql postgres://app:[redacted]@db01:5432/app",
        ),
        ("redis-cli -a hunter2 ping", "redis-cli -a [redacted] ping"),
        (
            "ldapsearch -D cn=admin -w hunter2",
            "ldapsearch -D cn=admin -w [redacted]",
        ),
        (
            "smbclient //fs01/c -U admin%hunter2",
            "smbclient //fs01/c -U admin%[redacted]",
        ),
        (
            "$p = ConvertTo-SecureString 'hunter2' -AsPlainText",
            "$p = ConvertTo-SecureString '[redacted]' -AsPlainText",
        ),
        // Ordinary arguments stay: hosts, paths and limits that only look like secrets.
        (
            "ssh passage01 'cat /etc/passwd'",
            "ssh passage01 'cat /etc/passwd'",
        ),
        (
            "ssh -p 2222 passage01 uptime",
            "ssh -p 2222 passage01 uptime",
        ),
        (
            "scp -P 22 app.conf passage01:/etc/",
            "scp -P 22 app.conf passage01:/etc/",
        ),
        (
            "ansible-playbook -l passage01 site.yml -e max_tokens=5",
            "ansible-playbook -l passage01 site.yml -e max_tokens=5",
        ),
        (
            "grep -r author= src/ && echo pass",
            "grep -r author= src/ && echo pass",
        ),
        ("tar -cpf x.tar /srv", "tar -cpf x.tar /srv"),
        (
            "https://web01.example/path?x=1",
            "https://web01.example/path?x=1",
        ),
        ("", ""),
    ];

    /// Each secret redacted, the rest kept byte for byte.
    #[test]
    fn inline_secrets_are_redacted_and_everything_else_kept() {
        for &(text, expected) in INLINE {
            assert_eq!(redact_text(text), expected, "{text:?}");
        }
    }

    #[test]
    fn secret_keys_by_word() {
        for key in [
            "pw",
            "pwd",
            "passwd",
            "pass",
            "password",
            "Password",
            "db_password",
            "DB_PASSWORD",
            "secret",
            "client_secret",
            "clientSecret",
            "token",
            "access_token",
            "apikey",
            "api_key",
            "apiKey",
            "API-KEY",
            "auth",
            "Authorization",
            "x-auth-token",
            "credential",
            "credentials",
            "credentialsFile",
            "private_key",
            "privateKey",
            "passphrase",
            "ssh_passphrase",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "host",
            "passage01",
            "command",
            "max_tokens",
            "keyboard",
            "key",
            "path",
            "compass",
            "bypass",
            "author",
            "target",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }
}
