//! The word pass: each word in its place in its command, with what the word before asked of
//! it (a secret flag's value, an `Authorization` header's credential, a quoted SQL literal).

use std::borrow::Cow;

use super::REDACTED;
use super::names::{is_secret_key, key_words};

/// A word as the pass leaves it (most are kept as they are, borrowed), and the quote a
/// secret that goes on into later words opened.
type Word<'w> = (Cow<'w, str>, Option<char>);

/// A redacted value as a [`Word`].
fn owned<'w>((text, quote): (String, Option<char>)) -> Word<'w> {
    (Cow::Owned(text), quote)
}

/// Programs whose `-p<secret>` (written together) is a password.
pub(super) const GLUED_P: &[&str] = &[
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
pub(super) fn secret_flag(program: &str, flag: &str) -> bool {
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
pub(super) const LOGIN_P: &[&str] = &[
    "docker", "podman", "nerdctl", "buildah", "helm", "oras", "crane", "regctl", "az", "cf", "oc",
    "argocd",
];

/// Authorization schemes: the word after `Authorization:` that is not the credential.
pub(super) fn is_auth_scheme(word: &str) -> bool {
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
pub(super) fn user_secret_flag(program: &str, flag: &str) -> Option<char> {
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
pub(super) fn separates_commands(word: &str) -> bool {
    matches!(word, ";" | "&&" | "||" | "|" | "&" | "(" | ")" | "{" | "}")
}

/// What the word before asked of this one.
#[derive(Clone, Copy, Default)]
pub(super) enum Pending {
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
pub(super) struct Command {
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
pub(super) struct Redactor {
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
            // The word's buffer is reused: this runs for every word of every text.
            self.command.previous.clear();
            self.command.previous.push_str(word);
            self.command.previous.make_ascii_lowercase();
        }
        out.push_str(&text[last..]);
        out
    }

    /// One word in its place; `next` is the word after it, if any.
    fn word<'w>(&mut self, word: &'w str, next: Option<&str>) -> Word<'w> {
        match std::mem::take(&mut self.pending) {
            Pending::Assignment if word == "=" => {
                self.pending = Pending::Secret;
                return (word.into(), None);
            }
            // PowerShell names the parameter: `ConvertTo-SecureString -String "x"`.
            Pending::Secret if word.eq_ignore_ascii_case("-String") => {
                self.pending = Pending::Secret;
                return (word.into(), None);
            }
            Pending::Secret => return owned(redact_value(word)),
            Pending::Credential => {
                let bare = word.trim_start_matches(['\'', '"']);
                // `Authorization: Bearer x`: the scheme stays when a credential follows it in
                // the same header, the credential goes.
                if is_auth_scheme(bare)
                    && !word.ends_with(['\'', '"'])
                    && next.is_some_and(|n| !separates_commands(n))
                {
                    self.pending = Pending::Secret;
                    return (word.into(), None);
                }
                return owned(redact_value(word));
            }
            Pending::AfterSeparator(sep) => {
                return match word.split_once(sep) {
                    Some((user, rest)) if !rest.is_empty() => {
                        let (value, quote) = redact_value(rest);
                        (format!("{user}{sep}{value}").into(), quote)
                    }
                    _ => (word.into(), None),
                };
            }
            Pending::Literal if word.starts_with(['\'', '"']) => return owned(redact_value(word)),
            Pending::OptionValue => return (word.into(), None),
            Pending::None | Pending::Assignment | Pending::Literal => {}
        }
        if separates_commands(word) {
            self.command = Command::default();
            return (word.into(), None);
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
    fn argument<'w>(&mut self, word: &'w str) -> (Word<'w>, Pending) {
        let ((redacted, quote), mut pending) = redact_word(word, &self.command.program);
        if redacted != word || !matches!(pending, Pending::None | Pending::Assignment) {
            return ((redacted, quote), pending);
        }
        let lower = word.to_ascii_lowercase();
        let program = self.command.program.as_str();
        if self.command.is_option(word) {
            if self.vector && program.is_empty() && word == "-p" {
                return ((redacted, quote), Pending::Secret);
            }
            let login = self.command.login && LOGIN_P.contains(&program);
            if login && word == "-p" {
                return ((redacted, quote), Pending::Secret);
            }
            if login && word.len() > 2 && word.starts_with("-p") && !word.starts_with("--") {
                return ((format!("-p{REDACTED}").into(), None), Pending::None);
            }
            pending = self.command.option(word);
            return ((redacted, quote), pending);
        }
        if self.command.positional_secret(word) {
            return (owned(redact_value(word)), Pending::None);
        }
        if lower == "login" && LOGIN_P.contains(&program) {
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
pub(super) fn program_name(word: &str) -> String {
    program_part(word).to_ascii_lowercase()
}

/// The program a word names as written: marks around it dropped, its last path component.
fn program_part(word: &str) -> &str {
    let bare = word.trim_matches(['\'', '"', '(', '`']);
    bare.rsplit(['/', '\\']).next().unwrap_or(bare)
}

pub(super) fn is_known_program(word: &str) -> bool {
    // [`program_name`] without its allocation: every known name is ASCII and at most
    // `LONGEST` bytes long, so a longer or non-ASCII name is none of them.
    const LONGEST: usize = 16;
    let last = program_part(word);
    if last.len() > LONGEST || !last.is_ascii() {
        return false;
    }
    let mut lower = [0u8; LONGEST];
    lower[..last.len()].copy_from_slice(last.as_bytes());
    lower[..last.len()].make_ascii_lowercase();
    std::str::from_utf8(&lower[..last.len()]).is_ok_and(is_known_name)
}

/// Whether a program's name (as [`program_name`] gives it) is one whose words this pass
/// knows more of.
pub(super) fn is_known_name(name: &str) -> bool {
    GLUED_P.contains(&name)
        || LOGIN_P.contains(&name)
        || secret_flag(name, "-p")
        || secret_flag(name, "-P")
        || matches!(
            name,
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

/// [`redact_word`]'s rules on a word that a `:` or an `=` splits (a URL, `user:secret@host`,
/// `pass:x`, `KEY=value`, `key:` and `key:value`), in order; `None` when none applies. Most
/// words hold neither: one look at the bytes instead of a search for each rule.
fn separated<'w>(word: &'w str) -> Option<(Word<'w>, Pending)> {
    let keep = |word: &'w str| (Cow::Borrowed(word), None);
    let (colon, equals) = word.bytes().fold((false, false), |(colon, equals), byte| {
        (colon || byte == b':', equals || byte == b'=')
    });
    // A URL with a password: `scheme://user:secret@host`.
    if colon && let Some(redacted) = redact_url_password(word) {
        return Some(((redacted.into(), None), Pending::None));
    }
    // `user:secret@host` without a scheme (`ssh admin:x@web01`, a VM reference).
    if colon && let Some(redacted) = redact_user_password(word) {
        return Some(((redacted.into(), None), Pending::None));
    }
    // OpenSSL's `pass:secret` (`-passin pass:x`).
    if colon && let Some(secret) = word.strip_prefix("pass:").filter(|s| !s.is_empty()) {
        let (value, quote) = redact_value(secret);
        return Some(((format!("pass:{value}").into(), quote), Pending::None));
    }
    // `KEY=value`, `--password=value`, `{"pw":"x"}` glued, `$env:TOKEN="x"`.
    if equals && let Some((key, value)) = word.split_once('=') {
        if is_secret_key(key) {
            if value.is_empty() {
                // `PASSWORD= x` or `$env:PASSWORD = "x"`: the value is the next word.
                return Some((keep(word), Pending::Secret));
            }
            let (value, quote) = redact_value(value);
            return Some(((format!("{key}={value}").into(), quote), Pending::None));
        }
        // An option list or a nested assignment: `-o user=u,password=x`,
        // `--from-literal=password=x`, `user=u&password=x`.
        if let Some(redacted) = redact_listed(value) {
            return Some(((format!("{key}={redacted}").into(), None), Pending::None));
        }
    }
    // `"pw": "x"`, `password: x` (JSON, YAML, HTTP headers).
    // A path or URL ending in `:` (`POST https://zvm/…/token:`) names no key.
    if colon
        && let Some(key) = word.strip_suffix(':').or_else(|| word.strip_suffix("\":"))
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
        return Some((keep(word), next));
    }
    if colon
        && let Some((key, value)) = word.split_once(':')
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
            return Some(((format!("{key}:{value}").into(), quote), Pending::None));
        }
    }
    None
}

/// One word, seen on its own: its redacted form (and an open quote if the secret goes on
/// into later words), and what it asks of the next word.
pub(super) fn redact_word<'w>(word: &'w str, program: &str) -> (Word<'w>, Pending) {
    let keep = |word: &'w str| (Cow::Borrowed(word), None);
    if let Some(found) = separated(word) {
        return found;
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
            return (
                (format!("{user}{sep}{REDACTED}").into(), None),
                Pending::None,
            );
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
            return ((format!("-p{secret}").into(), quote), Pending::None);
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
pub(super) fn redact_listed(value: &str) -> Option<String> {
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
pub(super) fn redact_value(value: &str) -> (String, Option<char>) {
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

/// Where `word` first holds `://`. Searched from each `:`: a substring searcher costs more to
/// set up than most words are long, and every word is asked.
pub(super) fn scheme_mark(word: &str) -> Option<usize> {
    word.match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| word[at + 1..].starts_with("//"))
}

/// `scheme://user:secret@host/…` → `scheme://user:[redacted]@host/…`.
pub(super) fn redact_url_password(word: &str) -> Option<String> {
    let scheme_end = scheme_mark(word)? + 3;
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
pub(super) fn redact_user_password(word: &str) -> Option<String> {
    let lead = word.len() - word.trim_start_matches(['\'', '"', '(']).len();
    let body = &word[lead..];
    if scheme_mark(body).is_some() {
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

/// The words of `text` (runs of non-white-space, any Unicode white space between) with their
/// byte offsets.
pub(super) fn words_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < text.len() {
            let (space, len) = white_space_at(text, at);
            if !space {
                break;
            }
            at += len;
        }
        if at == text.len() {
            return None;
        }
        let start = at;
        while at < text.len() {
            let (space, len) = white_space_at(text, at);
            if space {
                break;
            }
            at += len;
        }
        Some((start, &text[start..at]))
    })
}

/// Whether the character at byte `at` (a character boundary) of `text` is white space, and
/// its length: an ASCII byte is looked at as it is, only another character decoded.
fn white_space_at(text: &str, at: usize) -> (bool, usize) {
    let byte = text.as_bytes()[at];
    if byte.is_ascii() {
        return (char::from(byte).is_whitespace(), 1);
    }
    text[at..]
        .chars()
        .next()
        .map_or((false, 1), |c| (c.is_whitespace(), c.len_utf8()))
}

/// [`Redactor::text`] over free text, from a fresh start.
pub(super) fn redact_words(text: &str) -> String {
    Redactor::default().text(text)
}
