//! OpenSSH's client configuration, read as `ssh` reads it but without running anything:
//! the files (`-F FILE`, else `~/.ssh/config` then `/etc/ssh/ssh_config`), `Include`, `Host`
//! and `Match` blocks (`host`, `originalhost`, `user`, `localuser`, `all`, `final`), and the
//! first value obtained for `HostName`, `User` and `ProxyCommand`. The configuration is the
//! agent's to write, so the hook never hands it to `ssh -G`: a `Match exec` would run the
//! agent's program inside the hook, and could answer differently there than for the real
//! connection. A criterion that needs a program, the network or DNS to decide is an error:
//! the hook asks.

use std::path::{Path, PathBuf};

/// Most files one lookup reads, `Include`s included (OpenSSH allows 16 levels).
const MAX_FILES: usize = 64;

/// What the configuration says of one destination.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `HostName`, its `%h` replaced by the destination as written.
    pub(crate) hostname: Option<String>,
    /// `ProxyCommand` as written (none for `none`).
    pub(crate) proxy_command: Option<String>,
}

/// Who connects where: the destination as written, the user the command names (`-l`,
/// `user@`), the local user.
pub(crate) struct Query<'a> {
    pub(crate) host: &'a str,
    pub(crate) user: Option<&'a str>,
    pub(crate) local_user: Option<&'a str>,
}

/// Where the configuration comes from: a `-F` file (`none`: no file at all), else the user's
/// and the system's.
pub(crate) struct Files<'a> {
    pub(crate) explicit: Option<PathBuf>,
    pub(crate) home: Option<&'a Path>,
    pub(crate) system: &'a Path,
}

/// The settings for `query`, or why they cannot be known without running something.
pub(crate) fn lookup(files: &Files<'_>, query: &Query<'_>) -> Result<Settings, String> {
    let mut reader = Reader {
        query,
        home: files.home,
        found: Found::default(),
        files_read: 0,
    };
    match &files.explicit {
        Some(path) if path.as_os_str() == "none" => {}
        Some(path) => reader.file(path, Scope::User, 0)?,
        None => {
            if let Some(home) = files.home {
                let user = home.join(".ssh/config");
                if user.is_file() {
                    reader.file(&user, Scope::User, 0)?;
                }
            }
            if files.system.is_file() {
                reader.file(files.system, Scope::System, 0)?;
            }
        }
    }
    let found = reader.found;
    let hostname = match found.hostname {
        Some(name) => Some(expand(&name, query.host)?),
        None => None,
    };
    Ok(Settings {
        hostname,
        proxy_command: found
            .proxy_command
            .filter(|p| !p.eq_ignore_ascii_case("none")),
    })
}

/// `%h` replaced by the destination and `%%` by `%`; any other token depends on what is not
/// read here.
fn expand(value: &str, host: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(host),
            Some('%') => out.push('%'),
            other => {
                return Err(format!(
                    "the HostName `{value}` holds the token %{}, which is not read here",
                    other.map(String::from).unwrap_or_default()
                ));
            }
        }
    }
    Ok(out)
}

/// Whose file is read: a relative `Include` is under `~/.ssh` for the user's, under
/// `/etc/ssh` for the system's.
#[derive(Clone, Copy)]
enum Scope {
    User,
    System,
}

#[derive(Default)]
struct Found {
    hostname: Option<String>,
    user: Option<String>,
    proxy_command: Option<String>,
}

struct Reader<'a> {
    query: &'a Query<'a>,
    home: Option<&'a Path>,
    found: Found,
    files_read: usize,
}

impl Reader<'_> {
    fn file(&mut self, path: &Path, scope: Scope, depth: usize) -> Result<(), String> {
        self.files_read += 1;
        if depth > 16 || self.files_read > MAX_FILES {
            return Err(format!(
                "the ssh configuration includes too many files (at {})",
                path.display()
            ));
        }
        // A file that cannot be read is one ssh would refuse too: the connection fails.
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(());
        };
        // Lines before any Host or Match apply to every destination.
        let mut active = true;
        for line in text.lines() {
            let Some((keyword, args)) = directive(line) else {
                continue;
            };
            match keyword.as_str() {
                "host" => active = host_matches(&args, self.query.host),
                "match" => active = self.match_block(&args, path)?,
                _ if !active => {}
                "include" => {
                    for pattern in &args {
                        for included in self.included(pattern, scope, path)? {
                            self.file(&included, scope, depth + 1)?;
                        }
                    }
                }
                "hostname" => set(&mut self.found.hostname, &args),
                "user" => set(&mut self.found.user, &args),
                "proxycommand" if self.found.proxy_command.is_none() && !args.is_empty() => {
                    self.found.proxy_command = Some(args.join(" "));
                }
                "canonicalizehostname"
                    if args.first().is_some_and(|a| !a.eq_ignore_ascii_case("no")) =>
                {
                    return Err(format!(
                        "{} canonicalizes host names through DNS, which the hook does not ask",
                        path.display()
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether a `Match` line's criteria all hold. A criterion that needs a program, the
    /// network or DNS to decide is an error.
    fn match_block(&self, args: &[String], path: &Path) -> Result<bool, String> {
        let mut words = args.iter();
        let mut all = true;
        while let Some(word) = words.next() {
            let lower = word.to_ascii_lowercase();
            let (negated, criterion) = match lower.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, lower.as_str()),
            };
            let holds = match criterion {
                // The final pass always happens when asked for; nothing canonicalizes here.
                "all" | "final" => true,
                "canonical" => false,
                "host" | "originalhost" | "user" | "localuser" => {
                    let Some(list) = words.next() else {
                        return Err(format!("{}: `Match {word}` has no value", path.display()));
                    };
                    let subject = match criterion {
                        "host" => self.found.hostname.as_deref().map_or_else(
                            || self.query.host.to_owned(),
                            |h| expand(h, self.query.host).unwrap_or_else(|_| h.to_owned()),
                        ),
                        "originalhost" => self.query.host.to_owned(),
                        "user" => match self
                            .query
                            .user
                            .or(self.found.user.as_deref())
                            .or(self.query.local_user)
                        {
                            Some(user) => user.to_owned(),
                            None => {
                                return Err(String::from(
                                    "`Match user` needs the remote user, which is not known here",
                                ));
                            }
                        },
                        _ => match self.query.local_user {
                            Some(user) => user.to_owned(),
                            None => {
                                return Err(String::from(
                                    "`Match localuser` needs the local user, which is not known here",
                                ));
                            }
                        },
                    };
                    list_matches(list, &subject)
                }
                other => {
                    return Err(format!(
                        "{} has `Match {other}`, which decides by running a program, the network or DNS: the hook does not run it, so the machine reached is not known",
                        path.display()
                    ));
                }
            };
            all &= holds != negated;
        }
        Ok(all)
    }

    /// The files an `Include` pattern names, in order: `~` is the home, a relative path is
    /// under `~/.ssh` (or `/etc/ssh`), and a `*` or `?` in the file name is a glob.
    fn included(&self, pattern: &str, scope: Scope, from: &Path) -> Result<Vec<PathBuf>, String> {
        let path = if let Some(rest) = pattern.strip_prefix("~/") {
            let Some(home) = self.home else {
                return Err(format!("{} includes `{pattern}`", from.display()));
            };
            home.join(rest)
        } else if Path::new(pattern).is_absolute() {
            PathBuf::from(pattern)
        } else {
            match (scope, self.home) {
                (Scope::User, Some(home)) => home.join(".ssh").join(pattern),
                (Scope::User, None) => {
                    return Err(format!("{} includes `{pattern}`", from.display()));
                }
                (Scope::System, _) => Path::new("/etc/ssh").join(pattern),
            }
        };
        let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
        else {
            return Ok(Vec::new());
        };
        if dir.to_string_lossy().contains(['*', '?', '[']) {
            return Err(format!(
                "{} includes `{pattern}`, a glob over directories, which is not read here",
                from.display()
            ));
        }
        if !name.contains(['*', '?', '[']) {
            return Ok(vec![path]);
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| {
                        e.file_name()
                            .to_str()
                            .is_some_and(|n| crate::glob::glob_match(name, n))
                    })
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        Ok(found)
    }
}

/// Keeps the first value obtained, as OpenSSH does.
fn set(slot: &mut Option<String>, args: &[String]) {
    if slot.is_none()
        && let Some(value) = args.first()
    {
        *slot = Some(value.clone());
    }
}

/// A line's keyword (lower-case) and arguments: `Keyword arg…` or `Keyword=arg`, arguments
/// split at white space outside double quotes. None for blank lines and comments.
fn directive(line: &str) -> Option<(String, Vec<String>)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let keyword = line[..end].to_ascii_lowercase();
    let rest = line[end..].trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    let mut args = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in rest.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    args.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        args.push(word);
    }
    Some((keyword, args))
}

/// `Host` patterns (separated by white space): any negated match excludes, else any match
/// includes.
fn host_matches(patterns: &[String], host: &str) -> bool {
    pattern_list(patterns.iter().map(String::as_str), host)
}

/// A `Match` criterion's list (separated by commas).
fn list_matches(list: &str, subject: &str) -> bool {
    pattern_list(list.split(','), subject)
}

fn pattern_list<'p>(patterns: impl Iterator<Item = &'p str>, subject: &str) -> bool {
    let subject = subject.to_ascii_lowercase();
    let mut matched = false;
    for pattern in patterns {
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        if wildcard(&pattern.to_ascii_lowercase(), &subject) {
            if negated {
                return false;
            }
            matched = true;
        }
    }
    matched
}

/// OpenSSH's patterns: `*` any run of characters, `?` one; nothing else is special.
fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup_in(config: &str, host: &str, user: Option<&str>) -> Result<Settings, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".ssh")).expect("mkdir");
        std::fs::write(dir.path().join(".ssh/config"), config).expect("config");
        std::fs::write(
            dir.path().join(".ssh/extra.conf"),
            "Host inc\n  HostName 10.0.0.77\n",
        )
        .expect("included");
        lookup(
            &Files {
                explicit: None,
                home: Some(dir.path()),
                system: Path::new("/nonexistent/ssh_config"),
            },
            &Query {
                host,
                user,
                local_user: Some("agent"),
            },
        )
    }

    fn hostname(config: &str, host: &str, user: Option<&str>) -> Option<String> {
        lookup_in(config, host, user).expect("readable").hostname
    }

    #[test]
    fn host_blocks_give_the_first_hostname_obtained() {
        let config = "\
# comment
Include extra.conf
Host web01 web02
  HostName 10.0.0.11
Host web*
  HostName ignored-second
Host db01
  HostName=db01.corp.example
Host *.corp !bad.corp
  HostName %h.internal
Include extra.conf
";
        // An Include inside a Host block applies only to that block's hosts.
        assert_eq!(
            hostname(config, "web01", None).as_deref(),
            Some("10.0.0.11")
        );
        assert_eq!(
            hostname(config, "WEB02", None).as_deref(),
            Some("10.0.0.11")
        );
        assert_eq!(
            hostname(config, "web07", None).as_deref(),
            Some("ignored-second")
        );
        assert_eq!(
            hostname(config, "db01", None).as_deref(),
            Some("db01.corp.example")
        );
        assert_eq!(
            hostname(config, "a.corp", None).as_deref(),
            Some("a.corp.internal")
        );
        assert_eq!(hostname(config, "bad.corp", None), None);
        assert_eq!(hostname(config, "inc", None).as_deref(), Some("10.0.0.77"));
        assert_eq!(hostname(config, "other", None), None);
        let inside = "Host web*\n  Include extra.conf\n";
        assert_eq!(hostname(inside, "inc", None), None);
    }

    #[test]
    fn match_blocks_read_the_user_the_command_names() {
        let config = "\
Match user deploy host jp-ubuntu
  HostName 10.0.0.31
Match originalhost web01 !user root
  HostName 10.0.0.12
Match localuser agent host cache
  HostName 10.0.0.50
";
        assert_eq!(
            hostname(config, "jp-ubuntu", Some("deploy")).as_deref(),
            Some("10.0.0.31")
        );
        assert_eq!(hostname(config, "jp-ubuntu", None), None);
        assert_eq!(
            hostname(config, "web01", None).as_deref(),
            Some("10.0.0.12")
        );
        assert_eq!(hostname(config, "web01", Some("root")), None);
        assert_eq!(
            hostname(config, "cache", None).as_deref(),
            Some("10.0.0.50")
        );
        // `User` from the configuration is the remote user a later `Match user` sees.
        let config = "Host jp-ubuntu\n  User deploy\nMatch user deploy\n  HostName 10.0.0.31\n";
        assert_eq!(
            hostname(config, "jp-ubuntu", None).as_deref(),
            Some("10.0.0.31")
        );
    }

    #[test]
    fn what_needs_a_program_or_the_network_to_decide_is_an_error() {
        for config in [
            "Match exec \"test -e /tmp/flag\"\n  HostName 10.0.0.31\n",
            "Match host x exec true\n",
            "Match localnetwork 10.0.0.0/8\n",
            "Host web01\n  CanonicalizeHostname yes\n",
            "Host web01\n  HostName %r.example\n",
        ] {
            assert!(lookup_in(config, "web01", None).is_err(), "{config}");
        }
        // A Match exec in a block that does not apply is never reached... but is still read.
        assert!(lookup_in("Host other\nMatch exec true\n", "web01", None).is_err());
    }

    #[test]
    fn a_proxy_command_is_kept_as_written() {
        let config = "Host web01\n  ProxyCommand nc 10.0.0.31 22\nHost *\n  ProxyCommand none\n";
        let settings = lookup_in(config, "web01", None).expect("readable");
        assert_eq!(settings.proxy_command.as_deref(), Some("nc 10.0.0.31 22"));
        let other = lookup_in(config, "db01", None).expect("readable");
        assert_eq!(other.proxy_command, None);
    }
}
