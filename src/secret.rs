//! Secrets: a string that must never be printed ([`Secret`]), and the redaction of secrets
//! that others wrote into text we keep (tool arguments in the audit trail, the command a
//! decision quotes, every decision's text): secret-looking keys (by a rule on the words of
//! the name, see [`is_secret_key`]), `KEY=value` on any line and inside option lists,
//! `--password x`, `-p<secret>` and `-p <secret>` for the programs that take one,
//! `user:secret` for curl, `user:secret@` in URLs, the scheme's credential in an
//! `Authorization` header, a password piped or here-stringed into a program that reads it from
//! stdin (`echo x | sudo -S`, `chpasswd`), the positional passwords of `net user`, `net use`
//! and `htpasswd -b`, SQL's `IDENTIFIED BY 'x'`, private keys (PEM or OpenSSH's base64) and
//! tokens by their well-known prefixes. What is not a secret stays byte for byte, so the
//! audit trail still says which VM a call reached.

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
///
/// The rule: a name says secret when one of its words says secret, password, pass, pwd,
/// token, pin, otp or credential (also run together, `dbpass`, `SSHPASS`), or when it ends
/// in a key (`key`, `api_key`, `sshkey`; not `StrictHostKeyChecking`), or when a key's or
/// identity's content follows (`identity_file_content`, `key_data`).
pub(crate) fn is_secret_key(key: &str) -> bool {
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

fn secret_word(word: &str) -> bool {
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
        "sshpass" | "psexec" | "psexec.exe" | "psexec64" | "psexec64.exe" | "paexec" | "mongo"
        | "mongosh" | "mongodump" | "mongorestore" | "mongoexport" | "mongoimport" | "rdesktop"
        | "useradd" | "usermod" => flag == "-p",
        "sqlcmd" | "sqlcmd.exe" | "bcp" | "osql" | "ipmitool" => flag == "-P",
        "redis-cli" => flag == "-a",
        "ldapsearch" | "ldapmodify" | "ldapadd" | "ldapdelete" | "ldappasswd" => flag == "-w",
        "curl" => matches!(flag, "-b" | "--cookie" | "--oauth2-bearer"),
        "openssl" => flag == "-k",
        "schtasks" | "schtasks.exe" => flag.eq_ignore_ascii_case("/rp"),
        _ => false,
    }
}

/// Programs whose `login` subcommand takes the password as `-p <secret>` (or glued).
const LOGIN_P: &[&str] = &[
    "docker", "podman", "nerdctl", "buildah", "helm", "oras", "crane", "regctl", "az", "cf", "oc",
    "argocd",
];

/// Authorization schemes: the word after `Authorization:` that is not the credential.
fn is_auth_scheme(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "bearer"
            | "basic"
            | "token"
            | "digest"
            | "negotiate"
            | "ntlm"
            | "apikey"
            | "api-key"
            | "ssws"
            | "splunk"
            | "bot"
            | "oauth"
            | "jwt"
            | "hmac"
            | "aws4-hmac-sha256"
    )
}

/// Flags whose next word is `user:secret` (curl, wget-like tools) or `user%secret` (smbclient).
fn user_secret_flag(program: &str, flag: &str) -> Option<char> {
    match (program, flag) {
        ("curl", "-u" | "--user" | "--proxy-user" | "-U")
        | ("skopeo" | "podman" | "buildah", "--creds" | "--src-creds" | "--dest-creds") => {
            Some(':')
        }
        ("smbclient" | "rpcclient" | "smbmap", "-U" | "--user") => Some('%'),
        ("lftp", "-u" | "--user") => Some(','),
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
    /// The word is the value of an `Authorization` header: a scheme (`Bearer`) stays and
    /// the credential after it goes.
    Credential,
    /// The word is `user<sep>secret`: the part after `sep` is.
    AfterSeparator(char),
    /// The word before was a secret-looking name: if this word is `=`, the next is a secret
    /// (`$env:TOKEN = "x"`).
    Assignment,
    /// The word before was SQL's `PASSWORD` or `IDENTIFIED BY`: a quoted literal is a secret.
    Literal,
    /// The word is an option's value, not a positional argument (`htpasswd -C 10`).
    OptionValue,
}

/// What is known about the command being walked: its program and what its words so far
/// say about the ones to come.
#[derive(Default)]
struct Command {
    /// The program's name (last path component, lower case); empty before the first word.
    program: String,
    /// The arguments after the program that are not options, lower case.
    positional: Vec<String>,
    /// A [`LOGIN_P`] program's `login` subcommand was seen.
    login: bool,
    /// `htpasswd -b` (the password is an argument) and `-n` (no file argument).
    batch: bool,
    no_file: bool,
    /// The word before, lower case (SQL's `IDENTIFIED BY`).
    previous: String,
}

impl Command {
    fn new(program: String) -> Self {
        Self {
            program,
            ..Self::default()
        }
    }

    /// Whether `word`, a positional argument of this command, is a password by its place:
    /// `net user <name> <password>`, `net use [dev] \\host\share <password>`,
    /// `htpasswd -b <file> <user> <password>` (no file with `-n`), `openssl passwd <pw>`,
    /// `mkpasswd <pw>`, `aws configure set <secret key> <value>`.
    fn positional_secret(&self, word: &str) -> bool {
        let n = self.positional.len() + 1;
        let first = self.positional.first().map(String::as_str);
        let bare = word.trim_matches(['\'', '"']);
        match self.program.as_str() {
            "net" | "net.exe" | "net1" | "net1.exe" => match first {
                Some("user") => n == 3 && bare != "*",
                Some("use") => {
                    bare != "*"
                        && self
                            .positional
                            .last()
                            .is_some_and(|p| p.trim_matches(['\'', '"']).starts_with(r"\\"))
                }
                _ => false,
            },
            "htpasswd" => self.batch && n == if self.no_file { 2 } else { 3 },
            "openssl" => first == Some("passwd") && n >= 2,
            "mkpasswd" => n == 1,
            // `mysqladmin password <new>`, `vault login <token>`, `setx <NAME> <value>`.
            "mysqladmin" => self.positional.last().is_some_and(|p| p == "password"),
            "vault" => first == Some("login") && n == 2 && !bare.contains('='),
            "setx" | "setx.exe" => n == 2 && first.is_some_and(is_secret_key),
            "aws" => {
                n == 4
                    && self.positional[..2] == ["configure", "set"]
                    && is_secret_key(&self.positional[2])
            }
            _ => false,
        }
    }

    /// Notes an option word: `htpasswd`'s `-b`/`-n`, and whether the option takes the next
    /// word as its value.
    fn option(&mut self, word: &str) -> Pending {
        match self.program.as_str() {
            "htpasswd" if !word.starts_with("--") => {
                let cluster = &word[1..];
                self.batch |= cluster.contains('b');
                self.no_file |= cluster.contains('n');
                if cluster.ends_with(['C', 'r']) {
                    return Pending::OptionValue;
                }
            }
            "mkpasswd" if matches!(word, "-m" | "-S" | "-R" | "-P" | "--method" | "--salt") => {
                return Pending::OptionValue;
            }
            _ => {}
        }
        Pending::None
    }

    /// Options start with `-`; `net` and `schtasks` take `/switches` too.
    fn is_option(&self, word: &str) -> bool {
        word.starts_with('-')
            || (word.starts_with('/')
                && matches!(
                    self.program.as_str(),
                    "net" | "net.exe" | "net1" | "net1.exe" | "schtasks" | "schtasks.exe"
                ))
    }
}

/// Walks words in order, remembering the current command and what the last word asked of
/// the next.
#[derive(Default)]
struct Redactor {
    command: Command,
    pending: Pending,
    /// Inside a quoted secret that spans words: the quote that closes it.
    open_quote: Option<char>,
    /// Walking an argument vector whose program is not known: `-p` is taken as a password
    /// flag, as most programs that have one spell it.
    vector: bool,
}

impl Redactor {
    fn text(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let words: Vec<(usize, &str)> = words_with_offsets(text).collect();
        for (i, &(start, word)) in words.iter().enumerate() {
            if let Some(quote) = self.open_quote {
                // Still inside the secret: these words and the space between them go.
                last = start + word.len();
                if let Some(end) = word.find(quote) {
                    self.open_quote = None;
                    out.push_str(&word[end..]);
                }
                continue;
            }
            let gap = &text[last..start];
            out.push_str(gap);
            last = start + word.len();
            if gap.contains('\n') {
                // A new line is a new command (a script, a here-doc).
                self.command = Command::default();
            }
            let next = words.get(i + 1).map(|&(_, w)| w);
            let (redacted, quote) = self.word(word, next);
            self.open_quote = quote;
            out.push_str(&redacted);
            self.command.previous = word.to_ascii_lowercase();
        }
        out.push_str(&text[last..]);
        out
    }

    /// One word in its place; `next` is the word after it, if any.
    fn word(&mut self, word: &str, next: Option<&str>) -> (String, Option<char>) {
        match std::mem::take(&mut self.pending) {
            Pending::Assignment if word == "=" => {
                self.pending = Pending::Secret;
                return (word.to_owned(), None);
            }
            // PowerShell names the parameter: `ConvertTo-SecureString -String "x"`.
            Pending::Secret if word.eq_ignore_ascii_case("-String") => {
                self.pending = Pending::Secret;
                return (word.to_owned(), None);
            }
            Pending::Secret => return redact_value(word),
            Pending::Credential => {
                let bare = word.trim_start_matches(['\'', '"']);
                // `Authorization: Bearer x`: the scheme stays when a credential follows it in
                // the same header, the credential goes.
                if is_auth_scheme(bare)
                    && !word.ends_with(['\'', '"'])
                    && next.is_some_and(|n| !separates_commands(n))
                {
                    self.pending = Pending::Secret;
                    return (word.to_owned(), None);
                }
                return redact_value(word);
            }
            Pending::AfterSeparator(sep) => {
                return match word.split_once(sep) {
                    Some((user, rest)) if !rest.is_empty() => {
                        let (value, quote) = redact_value(rest);
                        (format!("{user}{sep}{value}"), quote)
                    }
                    _ => (word.to_owned(), None),
                };
            }
            Pending::Literal if word.starts_with(['\'', '"']) => return redact_value(word),
            Pending::OptionValue => return (word.to_owned(), None),
            Pending::None | Pending::Assignment | Pending::Literal => {}
        }
        if separates_commands(word) {
            self.command = Command::default();
            return (word.to_owned(), None);
        }
        let starts = self.command.program.is_empty() && !word.starts_with('-');
        if starts || is_known_program(word) {
            // A program may have a secret-looking name (`htpasswd`): only one that asks
            // nothing more of the next word than an `=` starts a command.
            if let ((same, None), pending @ (Pending::None | Pending::Assignment)) =
                redact_word(word, "")
                && same == word
            {
                self.command = Command::new(program_name(word));
                self.pending = pending;
                return (same, None);
            }
        }
        let (redacted, pending) = self.argument(word);
        self.pending = pending;
        if word.ends_with(';') {
            self.command = Command::default();
        }
        redacted
    }

    /// An argument of the current command: its redacted form and what it asks of the next.
    fn argument(&mut self, word: &str) -> ((String, Option<char>), Pending) {
        let program = self.command.program.clone();
        let ((redacted, quote), mut pending) = redact_word(word, &program);
        if redacted != word || !matches!(pending, Pending::None | Pending::Assignment) {
            return ((redacted, quote), pending);
        }
        let lower = word.to_ascii_lowercase();
        if self.command.is_option(word) {
            if self.vector && program.is_empty() && word == "-p" {
                return ((redacted, quote), Pending::Secret);
            }
            let login = self.command.login && LOGIN_P.contains(&program.as_str());
            if login && word == "-p" {
                return ((redacted, quote), Pending::Secret);
            }
            if login && word.len() > 2 && word.starts_with("-p") && !word.starts_with("--") {
                return ((format!("-p{REDACTED}"), None), Pending::None);
            }
            pending = self.command.option(word);
            return ((redacted, quote), pending);
        }
        if self.command.positional_secret(word) {
            return (redact_value(word), Pending::None);
        }
        if lower == "login" && LOGIN_P.contains(&program.as_str()) {
            self.command.login = true;
        }
        // SQL: `IDENTIFIED BY 'x'`, `PASSWORD 'x'`.
        if lower.trim_matches(['\'', '"']) == "password"
            || (lower == "by" && self.command.previous == "identified")
        {
            pending = Pending::Literal;
        }
        self.command.positional.push(lower);
        ((redacted, quote), pending)
    }
}

/// Redacts the secrets written inline in free text (a command, a script, a here-doc):
/// everything that is not a secret is kept byte for byte, white space included.
pub(crate) fn redact_text(text: &str) -> String {
    let text = redact_private_keys(text);
    let text = redact_tokens(&text);
    let text = redact_stdin_secrets(&text);
    Redactor::default().text(&text)
}

/// A PEM private key (`-----BEGIN … PRIVATE KEY-----` through its `-----END …-----`, or to
/// the end of the text when there is none) goes whole: a key pasted into a file's content or
/// a here-doc has no secret-looking name beside it.
fn redact_private_keys(text: &str) -> std::borrow::Cow<'_, str> {
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

/// Tokens recognisable by their prefix wherever they stand (a URL's user, a header, an
/// argument): GitHub's, GitLab's, Slack's, OpenAI's and Anthropic's, npm's, JSON Web Tokens,
/// and OpenSSH private keys in their base64 form (`b3BlbnNzaC1rZXktdjE…`, no PEM armour).
fn redact_tokens(text: &str) -> std::borrow::Cow<'_, str> {
    const PREFIXES: &[&str] = &[
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
    const LEAST: usize = 16;
    let token_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '=');
    let mut out = String::new();
    let mut last = 0;
    let mut at = 0;
    while at < text.len() {
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

/// How a program reads a secret from its standard input.
#[derive(Clone, Copy)]
enum FromStdin {
    /// The whole input is the secret (`sudo -S`, `passwd --stdin`, `docker login
    /// --password-stdin`).
    Whole,
    /// The input is `user:secret` lines (`chpasswd`).
    AfterColon,
}

/// Whether the command in `words` reads a secret from stdin, and in which form.
fn reads_secret_from_stdin(words: &[&str]) -> Option<FromStdin> {
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
fn ends_command(word: &str) -> bool {
    separates_commands(word) && word != "|" || word.ends_with(';')
}

/// A password piped or here-stringed into a program that reads it from stdin:
/// `echo x | sudo -S …`, `printf '%s\n' x | passwd --stdin root`, `echo 'u:x' | chpasswd`,
/// `(echo x; echo x) | smbpasswd -s -a u`, `sudo -S … <<< x`. The echoed words go, the
/// command and its targets stay.
fn redact_stdin_secrets(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('|') && !text.contains("<<<") {
        return std::borrow::Cow::Borrowed(text);
    }
    // Words, with a `|` or `<<<` glued to a neighbour split off (`x|sudo`).
    let mut words: Vec<(usize, &str)> = Vec::new();
    for (start, word) in words_with_offsets(text) {
        let mut rest = word;
        let mut offset = start;
        while let Some(at) = rest.find(['|', '<']) {
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
fn echoed(
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
fn redact_span(text: &str, kind: FromStdin) -> String {
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

/// Redacts an argument vector (`["--token", "x"]`): as [`redact_text`], across items, and
/// an item that follows a secret flag goes whole. `program` names the program the vector
/// is for when the call says it (a sibling `command` key); without one, `-p`'s value is
/// taken for a password.
pub(crate) fn redact_args<'a>(
    program: Option<&str>,
    items: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut redactor = Redactor {
        vector: true,
        command: Command::new(program.map(program_name).unwrap_or_default()),
        ..Redactor::default()
    };
    items
        .into_iter()
        .map(|item| {
            redactor.open_quote = None;
            if matches!(redactor.pending, Pending::Secret | Pending::Credential) {
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
    bare.rsplit(['/', '\\'])
        .next()
        .unwrap_or(bare)
        .to_ascii_lowercase()
}

fn is_known_program(word: &str) -> bool {
    let name = program_name(word);
    GLUED_P.contains(&name.as_str())
        || LOGIN_P.contains(&name.as_str())
        || secret_flag(&name, "-p")
        || secret_flag(&name, "-P")
        || matches!(
            name.as_str(),
            "curl"
                | "smbclient"
                | "rpcclient"
                | "smbmap"
                | "redis-cli"
                | "ldapsearch"
                | "net"
                | "net.exe"
                | "net1"
                | "htpasswd"
                | "mkpasswd"
                | "skopeo"
                | "lftp"
                | "schtasks"
                | "schtasks.exe"
                | "ipmitool"
                | "openssl"
                | "mysqladmin"
                | "vault"
                | "setx"
                | "setx.exe"
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
    // `user:secret@host` without a scheme (`ssh admin:x@web01`, a VM reference).
    if let Some(redacted) = redact_user_password(word) {
        return ((redacted, None), Pending::None);
    }
    // OpenSSL's `pass:secret` (`-passin pass:x`).
    if let Some(secret) = word.strip_prefix("pass:").filter(|s| !s.is_empty()) {
        let (value, quote) = redact_value(secret);
        return ((format!("pass:{value}"), quote), Pending::None);
    }
    // `KEY=value`, `--password=value`, `{"pw":"x"}` glued, `$env:TOKEN="x"`.
    if let Some((key, value)) = word.split_once('=') {
        if is_secret_key(key) {
            if value.is_empty() {
                // `PASSWORD= x` or `$env:PASSWORD = "x"`: the value is the next word.
                return (keep(word), Pending::Secret);
            }
            let (value, quote) = redact_value(value);
            return ((format!("{key}={value}"), quote), Pending::None);
        }
        // An option list or a nested assignment: `-o user=u,password=x`,
        // `--from-literal=password=x`, `user=u&password=x`.
        if let Some(redacted) = redact_listed(value) {
            return ((format!("{key}={redacted}"), None), Pending::None);
        }
    }
    // `"pw": "x"`, `password: x` (JSON, YAML, HTTP headers).
    // A path or URL ending in `:` (`POST https://zvm/…/token:`) names no key.
    if let Some(key) = word.strip_suffix(':').or_else(|| word.strip_suffix("\":"))
        && !key.contains('/')
        && is_secret_key(key)
    {
        let header = key_words(key)
            .last()
            .is_some_and(|w| matches!(w.as_str(), "authorization" | "auth"));
        let next = if header {
            Pending::Credential
        } else {
            Pending::Secret
        };
        return (keep(word), next);
    }
    if let Some((key, value)) = word.split_once(':')
        && !value.is_empty()
        && !value.starts_with("//")
    {
        // `"pw":"x"` glued, and Windows' `/p:x`, `-p:x`, `/password:x` (winrs, xfreerdp,
        // cmdkey).
        let switch = key
            .strip_prefix(['/', '-'])
            .map(|k| k.trim_start_matches('-'))
            .filter(|k| k.eq_ignore_ascii_case("p") || is_secret_key(k));
        if switch.is_some() || (key.starts_with(['"', '{', '\'']) && is_secret_key(key)) {
            let (value, quote) = redact_value(value);
            return ((format!("{key}:{value}"), quote), Pending::None);
        }
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
            let (secret, quote) = redact_value(secret);
            return ((format!("-p{secret}"), quote), Pending::None);
        }
        // `--password-stdin` and the like take no value.
        if !flag_name.is_empty() && is_secret_key(flag_name) && !flag_name.ends_with("stdin") {
            return (keep(word), Pending::Secret);
        }
    }
    if secret_flag(program, word) {
        return (keep(word), Pending::Secret);
    }
    if !word.starts_with('-') && is_secret_key(word) {
        return (keep(word), Pending::Assignment);
    }
    // PowerShell: `ConvertTo-SecureString "x" -AsPlainText`, `(ConvertTo-SecureString
    // -String "x" …)`.
    let bare = word.trim_start_matches(['(', '$', '@']);
    if bare.eq_ignore_ascii_case("ConvertTo-SecureString") {
        return (keep(word), Pending::Secret);
    }
    if word.eq_ignore_ascii_case("bearer") {
        return (keep(word), Pending::Secret);
    }
    (keep(word), Pending::None)
}

/// A value that is a list of `key=value` items (separated by `,`, `&` or `;`) or one nested
/// assignment, with each secret key's value redacted; `None` when nothing in it is secret.
fn redact_listed(value: &str) -> Option<String> {
    if !value.contains('=') {
        return None;
    }
    let mut changed = false;
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while !rest.is_empty() {
        let end = rest.find([',', '&', ';']).unwrap_or(rest.len());
        let item = &rest[..end];
        match item.split_once('=') {
            Some((key, secret)) if is_secret_key(key) && !secret.is_empty() => {
                let (secret, _) = redact_value(secret);
                out.push_str(key);
                out.push('=');
                out.push_str(&secret);
                changed = true;
            }
            _ => out.push_str(item),
        }
        out.push_str(&rest[end..(end + 1).min(rest.len())]);
        rest = &rest[(end + 1).min(rest.len())..];
    }
    changed.then_some(out)
}

/// Redacts a value: a quoted one keeps its closing punctuation, and an unclosed quote says
/// the secret goes on into the next words.
fn redact_value(value: &str) -> (String, Option<char>) {
    if value.starts_with(REDACTED) {
        // Redacted already (a token found by its prefix).
        return (value.to_owned(), None);
    }
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

/// `user:secret@host…` (no scheme) → `user:[redacted]@host…`: a user without `@`, `/` or
/// white space, a password up to the last `@`.
fn redact_user_password(word: &str) -> Option<String> {
    let lead = word.len() - word.trim_start_matches(['\'', '"', '(']).len();
    let body = &word[lead..];
    if body.contains("://") {
        return None;
    }
    let at = body.rfind('@')?;
    let (user, secret) = body[..at].split_once(':')?;
    if user.is_empty()
        || secret.is_empty()
        || secret.starts_with(REDACTED)
        || user.contains(['@', '/', '\\', '=', '$'])
        || body[at + 1..].is_empty()
    {
        return None;
    }
    Some(format!("{}{user}:{REDACTED}{}", &word[..lead], &body[at..]))
}

/// A VM reference as it may be shown or kept: the credentials in it (`ssh://admin:x@web01/`,
/// `admin:x@web01`) stripped, and anything else secret in it redacted.
pub(crate) fn strip_credentials(reference: &str) -> String {
    let (scheme, rest) = match reference.find("://") {
        Some(at) => reference.split_at(at + 3),
        None => ("", reference),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let stripped = match rest[..authority_end].rfind('@') {
        Some(at) if rest[..at].contains(':') || !scheme.is_empty() => {
            format!("{scheme}{}", &rest[at + 1..])
        }
        _ => reference.to_owned(),
    };
    redact_text(&stripped)
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
            "SSHPASS=hunter2 sshpass -e ssh web01",
            "SSHPASS=[redacted] sshpass -e ssh web01",
        ),
        (
            "ipmitool -H bmc -U admin -P hunter2 power reset",
            "ipmitool -H bmc -U admin -P [redacted] power reset",
        ),
        (
            "mysqladmin -u root password hunter2",
            "mysqladmin -u root password [redacted]",
        ),
        (
            "openssl enc -aes256 -k hunter2 -in f",
            "openssl enc -aes256 -k [redacted] -in f",
        ),
        ("vault login hunter2", "vault login [redacted]"),
        (
            "vault login -method=userpass",
            "vault login -method=userpass",
        ),
        ("setx API_TOKEN hunter2", "setx API_TOKEN [redacted]"),
        ("setx PATH C:\\bin", "setx PATH C:\\bin"),
        (
            "ssh admin:hunter2@unknownvm reboot",
            "ssh admin:[redacted]@unknownvm reboot",
        ),
        (
            "deploy --pin 1234 --otp 9876",
            "deploy --pin [redacted] --otp [redacted]",
        ),
        (
            "ssh -o StrictHostKeyChecking=no web01",
            "ssh -o StrictHostKeyChecking=no web01",
        ),
        // A URL ending in a secret-looking path names no key.
        (
            "POST https://zvm/auth/token: io: Connection refused",
            "POST https://zvm/auth/token: io: Connection refused",
        ),
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
        // A password piped or here-stringed into a program that reads it from stdin.
        (
            "echo hunter2 | sudo -S systemctl restart app",
            "echo [redacted] | sudo -S systemctl restart app",
        ),
        (
            "echo 'hunter2' | sudo -S -u root reboot",
            "echo '[redacted]' | sudo -S -u root reboot",
        ),
        (
            "ssh -p 2222 web01 'echo hunter2 | sudo -S reboot'",
            "ssh -p 2222 web01 'echo [redacted] | sudo -S reboot'",
        ),
        (
            "echo hunter2|sudo --stdin id",
            "echo [redacted]|sudo --stdin id",
        ),
        (
            "echo -n 'hunter 2' | sudo -kS whoami",
            "echo -n '[redacted]' | sudo -kS whoami",
        ),
        (
            "printf '%s\\n' hunter2 | passwd --stdin root",
            "printf '%s\\n' [redacted] | passwd --stdin root",
        ),
        (
            "echo 'admin:hunter2' | chpasswd",
            "echo 'admin:[redacted]' | chpasswd",
        ),
        (
            "echo \"admin:hunter 2\" | sudo chpasswd",
            "echo \"admin:[redacted]\" | sudo chpasswd",
        ),
        (
            "(echo hunter2; echo hunter2) | smbpasswd -s -a bob",
            "(echo [redacted]; echo [redacted]) | smbpasswd -s -a bob",
        ),
        (
            "sudo -S apt-get install -y nginx <<< 'hunter 2'",
            "sudo -S apt-get install -y nginx <<< '[redacted]'",
        ),
        (
            "chpasswd <<< admin:hunter2",
            "chpasswd <<< admin:[redacted]",
        ),
        (
            "echo hunter2 | docker login -u bob --password-stdin r.example",
            "echo [redacted] | docker login -u bob --password-stdin r.example",
        ),
        // Passwords by their place on the command line.
        (
            "net user admin hunter2 /add",
            "net user admin [redacted] /add",
        ),
        (
            "net use Z: \\\\fs01\\c$ hunter2 /user:corp\\admin",
            "net use Z: \\\\fs01\\c$ [redacted] /user:corp\\admin",
        ),
        (
            "docker login -u bob -p hunter2 registry.example",
            "docker login -u bob -p [redacted] registry.example",
        ),
        (
            "docker login --password hunter2 registry.example",
            "docker login --password [redacted] registry.example",
        ),
        (
            "podman login -phunter2 r.example",
            "podman login -p[redacted] r.example",
        ),
        (
            "az login -u bob -p hunter2",
            "az login -u bob -p [redacted]",
        ),
        (
            "htpasswd -b /etc/nginx/.htpasswd bob hunter2",
            "htpasswd -b /etc/nginx/.htpasswd bob [redacted]",
        ),
        (
            "htpasswd -cbB -C 10 .htpasswd bob hunter2",
            "htpasswd -cbB -C 10 .htpasswd bob [redacted]",
        ),
        ("htpasswd -nb bob hunter2", "htpasswd -nb bob [redacted]"),
        ("openssl passwd -6 hunter2", "openssl passwd -6 [redacted]"),
        (
            "mysql -uroot -p'hunter 2' app",
            "mysql -uroot -p'[redacted]' app",
        ),
        (
            "sqlcmd -S db01 -U sa -P hunter2 -Q 'select 1'",
            "sqlcmd -S db01 -U sa -P [redacted] -Q 'select 1'",
        ),
        (
            "psexec \\\\web01 -u admin -p hunter2 cmd",
            "psexec \\\\web01 -u admin -p [redacted] cmd",
        ),
        (
            "winrs -r:web01 -u:admin -p:hunter2 ipconfig",
            "winrs -r:web01 -u:admin -p:[redacted] ipconfig",
        ),
        (
            "xfreerdp /v:web01 /u:admin /p:hunter2",
            "xfreerdp /v:web01 /u:admin /p:[redacted]",
        ),
        (
            "mount -t cifs -o username=bob,password=hunter2,vers=3 //fs01/c /mnt",
            "mount -t cifs -o username=bob,password=[redacted],vers=3 //fs01/c /mnt",
        ),
        (
            "kubectl create secret generic db --from-literal=password=hunter2",
            "kubectl create secret generic db --from-literal=password=[redacted]",
        ),
        (
            "openssl rsa -in k.pem -passin pass:hunter2",
            "openssl rsa -in k.pem -passin pass:[redacted]",
        ),
        (
            "aws configure set aws_secret_access_key hunter2",
            "aws configure set aws_secret_access_key [redacted]",
        ),
        (
            "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2'\"",
            "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY '[redacted]'\"",
        ),
        (
            "psql -c \"ALTER ROLE app WITH PASSWORD 'hunter2'\"",
            "psql -c \"ALTER ROLE app WITH PASSWORD '[redacted]'\"",
        ),
        (
            "$c = New-Object PSCredential('admin', (ConvertTo-SecureString 'hunter2' -AsPlainText -Force))",
            "$c = New-Object PSCredential('admin', (ConvertTo-SecureString '[redacted]' -AsPlainText -Force))",
        ),
        (
            "ConvertTo-SecureString -String 'hunter2' -AsPlainText",
            "ConvertTo-SecureString -String '[redacted]' -AsPlainText",
        ),
        // Headers, keys and tokens.
        (
            "curl -H 'Authorization: token hunter2' https://web01/api",
            "curl -H 'Authorization: token [redacted]' https://web01/api",
        ),
        (
            "curl -H 'Authorization: hunter2' https://web01/api",
            "curl -H 'Authorization: [redacted]' https://web01/api",
        ),
        (
            "curl -b 'session=hunter2' https://web01/",
            "curl -b '[redacted]' https://web01/",
        ),
        (
            "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git",
            "git clone https://[redacted]@github.com/o/r.git",
        ),
        (
            "ssh_key=b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "ssh_key=[redacted]",
        ),
        (
            "deploy --ssh-key AAAAB3NzaC1yc2EAAAADAQABAAABAQ web01",
            "deploy --ssh-key [redacted] web01",
        ),
        (
            "private_key: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
            "private_key: [redacted]",
        ),
        (
            "cat key | b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "cat key | [redacted]",
        ),
        (
            "ansible web01 -m user -a 'name=bob password=hunter2'",
            "ansible web01 -m user -a 'name=bob password=[redacted]'",
        ),
        // Ordinary arguments stay: hosts, paths and limits that only look like secrets.
        ("echo hello | grep h", "echo hello | grep h"),
        (
            "echo 'mode = fast' | sudo tee /etc/app.conf",
            "echo 'mode = fast' | sudo tee /etc/app.conf",
        ),
        ("net user admin /add", "net user admin /add"),
        ("net user admin * /add", "net user admin * /add"),
        ("docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"),
        ("htpasswd -c .htpasswd bob", "htpasswd -c .htpasswd bob"),
        (
            "aws configure set region eu-west-1",
            "aws configure set region eu-west-1",
        ),
        (
            "mount -o ro,noatime /dev/sdb1 /mnt",
            "mount -o ro,noatime /dev/sdb1 /mnt",
        ),
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
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
            "[redacted]\n",
        ),
        (
            "cat > /root/.ssh/id_rsa <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nEOF",
            "cat > /root/.ssh/id_rsa <<EOF\n[redacted]\nEOF",
        ),
        (
            "key: -----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHz cut before the end",
            "key: [redacted]",
        ),
        (
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        ),
    ];

    /// Each secret redacted, the rest kept byte for byte.
    #[test]
    fn inline_secrets_are_redacted_and_everything_else_kept() {
        let wrong: Vec<String> = INLINE
            .iter()
            .filter(|(text, expected)| redact_text(text) != *expected)
            .map(|(text, expected)| {
                format!(
                    "{text:?}\n  gave {:?}\n  want {expected:?}",
                    redact_text(text)
                )
            })
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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
            "key",
            "SSHPASS",
            "db_pass",
            "pin",
            "otp",
            "identity_file_content",
            "ssh_key",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "host",
            "passage01",
            "command",
            "max_tokens",
            "keyboard",
            "StrictHostKeyChecking",
            "key_name",
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
