//! The structure pass: an argument vector (an MCP tool's array argument, `["-p", "x"]`) read
//! as a program reads its argv, whatever the program. A list of programs and their options
//! cannot be complete, so an option that commonly takes a secret takes its value with it
//! here, whichever program it is for: an argument summary loses a port or a method now and
//! then, never a password.

use super::REDACTED;
use super::names::is_secret_key;

/// Short options whose value is a password in some well-known program: `-p` (mysql, cqlsh,
/// sshpass, useradd), `-P` (zip, ipmitool, sqlcmd), `-a` (redis-cli, httpie's
/// `user:password`), `-A` and `-X` (snmp's auth and privacy pass phrases), `-w` and `-s`
/// (ldap's bind and new password), `-k` (openssl's pass phrase).
const SECRET_SHORT: &[char] = &['p', 'P', 'a', 'A', 'X', 'w', 's', 'k'];

/// Short options glued to a password (`-pVALUE`: mysql, 7z, zip's `-PVALUE`).
const GLUED_SHORT: &[char] = &['p', 'P'];

/// Options whose value is `name:secret` (`-u admin:x`, `-E cert.pem:x`, `--creds u:x`): the
/// part after the first `:` (or smbclient's `%`) goes.
const USER_SECRET: &[&str] = &[
    "-u",
    "-U",
    "--user",
    "--proxy-user",
    "-E",
    "--cert",
    "--creds",
    "--src-creds",
    "--dest-creds",
    "--auth",
];

/// Header options: the value of a header whose name says secret goes.
const HEADER: &[&str] = &["-H", "--header", "--proxy-header"];

/// Programs whose `-p` is a port, never a password.
const PORT_P: &[&str] = &[
    "ssh",
    "scp",
    "sftp",
    "autossh",
    "ssh-keyscan",
    "ssh-copy-id",
    "mosh",
    "nc",
    "ncat",
    "telnet",
    "docker",
    "podman",
];

/// What an item asks of the next one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Keep,
    Secret,
    UserSecret,
    Header,
}

/// `items` as [`super::redact_args`] leaves them, then read as an argv: the value of an
/// option that commonly takes a secret, `-pVALUE`, `--name=value` and `--name value` for a
/// secret-looking name, the secret part of `user:secret` and of a secret header, and a URL's
/// `user:password@` each go.
///
/// A program whose options the word pass knows ([`super::words::is_known_program`]: `mysql
/// -p` alone prompts) keeps that pass's reading of its short options, as does `-p` for a
/// program whose `-p` is a port (`ssh -p 2222`); the program is the one named beside the
/// vector, or else its first item.
pub(crate) fn redact_argv(program: Option<&str>, items: &[&str]) -> Vec<String> {
    let mut out = super::redact_args(program, items.iter().copied());
    let program = program
        .or_else(|| {
            items
                .first()
                .copied()
                .filter(|first| !first.starts_with('-'))
        })
        .map(super::words::program_name)
        .unwrap_or_default();
    let known = super::words::is_known_name(&program);
    let port_p = PORT_P.contains(&program.as_str());
    let mut next = Next::Keep;
    for (i, item) in items.iter().enumerate() {
        let asked = std::mem::replace(&mut next, Next::Keep);
        let option = item.starts_with('-') && item.len() > 1;
        if option {
            // A known program's short options are the word pass's to read; its `-u`, `-E`
            // and `-H` take `user:secret` and headers here too.
            let short_secret = !item.starts_with("--")
                && (known || (port_p && item.starts_with("-p")))
                && !USER_SECRET.contains(item)
                && !HEADER.contains(item);
            if !short_secret {
                next = option_asks(item);
                if let Some(redacted) = glued(item) {
                    out[i] = redacted;
                }
            }
        }
        if asked != Next::Keep && !option {
            out[i] = match asked {
                Next::Secret => String::from(REDACTED),
                Next::UserSecret => after_separator(&out[i]),
                Next::Header => header(&out[i]),
                Next::Keep => unreachable!("only an asking option reaches here"),
            };
        }
        out[i] = url_userinfo(&out[i]);
    }
    out
}

/// What the option `item` asks of the next item.
fn option_asks(item: &str) -> Next {
    if let Some(short) = item.strip_prefix('-').filter(|s| !s.starts_with('-'))
        && short.chars().count() == 1
        && short.chars().all(|c| SECRET_SHORT.contains(&c))
    {
        return Next::Secret;
    }
    if USER_SECRET.contains(&item) {
        return Next::UserSecret;
    }
    if HEADER.contains(&item) {
        return Next::Header;
    }
    let name = item.trim_start_matches('-');
    if item.starts_with("--") && !name.contains('=') && is_secret_key(name) {
        return Next::Secret;
    }
    Next::Keep
}

/// `-pVALUE` with its value gone, `--name=value` with a secret-looking name's value gone.
fn glued(item: &str) -> Option<String> {
    if let Some(rest) = item.strip_prefix("--") {
        let (name, _) = rest.split_once('=')?;
        return is_secret_key(name).then(|| format!("--{name}={REDACTED}"));
    }
    let mut chars = item.chars().skip(1);
    let flag = chars.next()?;
    (GLUED_SHORT.contains(&flag) && chars.next().is_some()).then(|| format!("-{flag}{REDACTED}"))
}

/// `name:secret` (or `name%secret`) with the secret gone; a value with neither goes whole.
fn after_separator(value: &str) -> String {
    match value.find([':', '%']) {
        Some(at) => format!("{}{REDACTED}", &value[..=at]),
        None => String::from(REDACTED),
    }
}

/// A header whose name says secret (`Authorization`, `Cookie`, `X-Api-Key`) with its value
/// gone, an authorization scheme before it kept; any other header as it is.
fn header(value: &str) -> String {
    let Some((name, rest)) = value.split_once(':') else {
        return value.to_owned();
    };
    let lower = name.trim().to_ascii_lowercase();
    let secret = is_secret_key(&lower)
        || lower.contains("authorization")
        || lower.contains("cookie")
        || lower.contains("api-key")
        || lower.contains("auth");
    if !secret {
        return value.to_owned();
    }
    let trimmed = rest.trim_start();
    let scheme = trimmed
        .split_once(' ')
        .map(|(scheme, _)| scheme)
        .filter(|scheme| super::words::is_auth_scheme(scheme));
    match scheme {
        Some(scheme) => format!("{name}: {scheme} {REDACTED}"),
        None => format!("{name}: {REDACTED}"),
    }
}

/// A URL's `user:password@` with the password gone. The user information runs to the last
/// `@` before a query or fragment, not to the first `/`: a password may hold a `/`.
pub(crate) fn url_userinfo(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|at| at + 3) else {
        return text.to_owned();
    };
    let rest = &text[scheme_end..];
    let end = rest.find(['?', '#', ' ']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return text.to_owned();
    };
    match rest[..at].find(':') {
        Some(colon) if !rest[..at].contains(REDACTED) => format!(
            "{}{}{REDACTED}{}",
            &text[..scheme_end],
            &rest[..=colon],
            &rest[at..]
        ),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Array arguments as MCP tools take them: the secret goes whatever the program.
    #[test]
    fn an_array_argument_is_read_as_an_argv() {
        for (program, items, secret) in [
            (Some("uptime"), vec!["-p", "S3cret1"], "S3cret1"),
            (None, vec!["--password", "S3cret2"], "S3cret2"),
            (Some("mysql"), vec!["-pS3cret3", "-h", "db01"], "S3cret3"),
            (Some("deploy"), vec!["--token=S3cret4"], "S3cret4"),
            (Some("http"), vec!["-a", "user:S3cret5"], "S3cret5"),
            (
                Some("curl"),
                vec!["-E", "cert.pem:S3cret6", "https://x"],
                "S3cret6",
            ),
            (
                Some("curl"),
                vec!["-H", "authorization:Bearer S3cret7", "https://x"],
                "S3cret7",
            ),
            (
                Some("curl"),
                vec!["-X", "POST", "https://admin:S3/cret8@web01/api"],
                "S3/cret8",
            ),
            (
                Some("snmpset"),
                vec!["-A", "S3cret9", "-X", "S3cret10"],
                "S3cret9",
            ),
            (Some("zip"), vec!["-P", "S3cret11", "x.zip"], "S3cret11"),
            (Some("7z"), vec!["a", "-pS3cret12", "x.7z"], "S3cret12"),
            (Some("x"), vec!["-u", "admin:S3cret13"], "S3cret13"),
            (Some("x"), vec!["--api-key", "S3cret14"], "S3cret14"),
        ] {
            let out = redact_argv(program, &items).join(" ");
            assert!(!out.contains(secret), "{items:?} => {out}");
        }
        assert_eq!(
            redact_argv(Some("curl"), &["-X", "POST", "https://admin:p/w@web01/api"]),
            ["-X", "POST", "https://admin:[redacted]@web01/api"],
            "curl's own -X is its method, the password in the URL goes"
        );
        assert_eq!(
            redact_argv(Some("ssh"), &["web01", "uptime"]),
            ["web01", "uptime"],
            "nothing secret: kept"
        );
        assert_eq!(
            redact_argv(Some("curl"), &["-H", "Accept: text/plain"]),
            ["-H", "Accept: text/plain"]
        );
    }

    /// A VM reference keeps its host, never its password, even one holding a `/`; an `@` in
    /// a path is no user information.
    #[test]
    fn a_references_password_goes_even_with_a_slash_in_it() {
        use super::super::strip_credentials;
        assert_eq!(
            strip_credentials("https://admin:p/w@web01/api"),
            "https://web01/api"
        );
        assert_eq!(strip_credentials("ssh://admin:x@web01/"), "ssh://web01/");
        assert_eq!(
            strip_credentials("https://web01/users/@me"),
            "https://web01/users/@me"
        );
        assert_eq!(strip_credentials("admin:x@web01"), "web01");
    }
}
