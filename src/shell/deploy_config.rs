//! The servers a deploy tool's own configuration lists: Kamal's YAML (`servers:` as a list,
//! or roles each with a list or `hosts:`; `accessories:` with `host:`/`hosts:`; a
//! destination file's servers over the base file's) and Capistrano's stage files (`server
//! "web01", …` and `role :app, %w{web01 web02}` lines). Anything whose value is only known
//! when the tool runs (ERB, Ruby code, a variable) is an error saying so: the hook asks.

use std::path::{Path, PathBuf};

use yaml_serde::Value;

/// The largest configuration file read.
const MAX_BYTES: u64 = 1 << 20;

/// The servers `path` lists (of `roles`, a comma list, when given; Capistrano's roles are
/// not filtered: every server of the stage is checkpointed).
pub(crate) fn servers(path: &Path, roles: Option<&str>) -> Result<Vec<String>, String> {
    let is_ruby = path.extension().is_some_and(|e| e == "rb");
    let text = read(path)?;
    let hosts = if is_ruby {
        capistrano(&text).map_err(|why| format!("{}: {why}", path.display()))?
    } else {
        let mut hosts = kamal(&text, roles).map_err(|why| format!("{}: {why}", path.display()))?;
        if hosts.is_empty()
            && let Some(base) = base_of(path)
        {
            let text = read(&base)?;
            hosts = kamal(&text, roles).map_err(|why| format!("{}: {why}", base.display()))?;
        }
        hosts
    };
    if hosts.is_empty() {
        return Err(format!("{} lists no server", path.display()));
    }
    Ok(hosts)
}

/// The text of a regular file of at most [`MAX_BYTES`]: a FIFO would block the hook and a
/// device never end, whatever size they report.
fn read(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let unread = |why: String| {
        format!(
            "the deploy configuration {} could not be read ({why})",
            path.display()
        )
    };
    let metadata = std::fs::metadata(path).map_err(|e| unread(e.to_string()))?;
    if !metadata.is_file() {
        return Err(unread(String::from("not a regular file")));
    }
    let file = std::fs::File::open(path).map_err(|e| unread(e.to_string()))?;
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| unread(e.to_string()))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(unread(String::from("larger than 1 MiB")));
    }
    Ok(text)
}

/// `config/deploy.staging.yml` → `config/deploy.yml`, the file a destination extends.
fn base_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("deploy.")?;
    (rest.matches('.').count() == 1).then(|| path.with_file_name("deploy.yml"))
}

fn kamal(text: &str, roles: Option<&str>) -> Result<Vec<String>, String> {
    let config: Value =
        yaml_serde::from_str(text).map_err(|e| format!("not YAML Kamal reads ({e})"))?;
    let wanted: Option<Vec<&str>> = roles.map(|r| r.split(',').map(str::trim).collect());
    let mut hosts = Vec::new();
    match config.get("servers") {
        None | Some(Value::Null) => {}
        Some(Value::Sequence(list)) => host_list(list, &mut hosts)?,
        Some(Value::Mapping(by_role)) => {
            for (role, servers) in by_role {
                let role = role.as_str().unwrap_or_default();
                if wanted.as_ref().is_some_and(|w| !w.contains(&role)) {
                    continue;
                }
                match servers.get("hosts").unwrap_or(servers) {
                    Value::Sequence(list) => host_list(list, &mut hosts)?,
                    other => {
                        return Err(format!("servers.{role} is not a list of hosts ({other:?})"));
                    }
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "servers is not a list or a map of roles ({other:?})"
            ));
        }
    }
    if let Some(Value::Mapping(accessories)) = config.get("accessories") {
        for (_, accessory) in accessories {
            if let Some(host) = accessory.get("host") {
                host_list(std::slice::from_ref(host), &mut hosts)?;
            }
            if let Some(Value::Sequence(list)) = accessory.get("hosts") {
                host_list(list, &mut hosts)?;
            }
        }
    }
    Ok(hosts)
}

/// Kamal's host entries: `web01`, or `web01: [tag]` (a host with tags).
fn host_list(list: &[Value], hosts: &mut Vec<String>) -> Result<(), String> {
    for entry in list {
        let host = match entry {
            Value::String(host) => host.as_str(),
            Value::Mapping(tagged) if tagged.len() == 1 => tagged
                .keys()
                .next()
                .and_then(Value::as_str)
                .unwrap_or_default(),
            other => return Err(format!("a server entry is not a host name ({other:?})")),
        };
        push(host, hosts)?;
    }
    Ok(())
}

fn push(host: &str, hosts: &mut Vec<String>) -> Result<(), String> {
    if host.contains("<%") || host.contains("#{") || host.contains('$') {
        return Err(format!(
            "the server `{host}` is only known when the tool runs"
        ));
    }
    let host = crate::shell::programs::host_of(host.trim());
    if host.is_empty() {
        return Err(String::from("a server entry is empty"));
    }
    if !hosts.contains(&host) {
        hosts.push(host);
    }
    Ok(())
}

/// Capistrano's `server "host", …` and `role :name, %w{a b}` / `["a", "b"]` / `"a"` lines.
fn capistrano(text: &str) -> Result<Vec<String>, String> {
    let mut hosts = Vec::new();
    for line in text.lines().map(str::trim) {
        // `server "web01", …` and `role :app, …` (a call: a space or a bracket after the name).
        let call = |name: &str| {
            line.strip_prefix(name)
                .filter(|rest| rest.starts_with([' ', '(']))
                .map(|rest| rest.trim_start_matches([' ', '(']))
        };
        let args = if let Some(rest) = call("server") {
            rest
        } else if let Some(rest) = call("role").filter(|r| r.starts_with(':')) {
            rest.split_once(',').map_or("", |(_, list)| list.trim())
        } else {
            continue;
        };
        for host in literal_hosts(args).ok_or_else(|| {
            format!("`{line}` names its servers with Ruby code, not literal strings")
        })? {
            push(host, &mut hosts)?;
        }
    }
    Ok(hosts)
}

/// The strings at the start of Ruby arguments: `"a"`, `'a'`, `%w{a b}`, `["a", "b"]`.
fn literal_hosts(args: &str) -> Option<Vec<&str>> {
    if let Some(rest) = args.strip_prefix("%w").or_else(|| args.strip_prefix("%W")) {
        let close = match rest.chars().next()? {
            '{' => '}',
            '[' => ']',
            '(' => ')',
            '<' => '>',
            _ => return None,
        };
        let body = rest.get(1..)?.split(close).next()?;
        return Some(body.split_whitespace().collect());
    }
    if let Some(rest) = args.strip_prefix('[') {
        let body = rest.split(']').next()?;
        return body
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(quoted)
            .collect();
    }
    quoted(args.split(',').next()?.trim()).map(|h| vec![h])
}

/// The text of a plain `"…"` or `'…'` string (no interpolation).
fn quoted(text: &str) -> Option<&str> {
    let quote = text.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = text.get(1..)?;
    let end = body.find(quote)?;
    let value = &body[..end];
    (!value.contains("#{")).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn kamal_servers_in_every_shape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let list = write(
            dir.path(),
            "config/deploy.yml",
            "service: app\nimage: me/app\nservers:\n  - web01\n  - deploy@10.0.0.5\nenv:\n  secret: [KEY]\naccessories:\n  db:\n    image: mysql\n    host: db01\n",
        );
        assert_eq!(
            servers(&list, None),
            Ok(vec!["web01".into(), "10.0.0.5".into(), "db01".into()])
        );
        let roles = write(
            dir.path(),
            "roles/deploy.yml",
            "servers:\n  web:\n    - web01\n    - web02: [canary]\n  job:\n    hosts:\n      - web03\n    cmd: bin/jobs\n",
        );
        assert_eq!(
            servers(&roles, None),
            Ok(vec!["web01".into(), "web02".into(), "web03".into()])
        );
        assert_eq!(servers(&roles, Some("job")), Ok(vec!["web03".into()]));
        // A destination without servers of its own takes the base file's.
        let staging = write(
            dir.path(),
            "config/deploy.staging.yml",
            "env:\n  clear:\n    X: 1\n",
        );
        assert_eq!(servers(&staging, None), servers(&list, None));
        let erb = write(
            dir.path(),
            "erb/deploy.yml",
            "servers:\n  - <%= ENV['HOST'] %>\n",
        );
        assert!(servers(&erb, None).is_err());
        assert!(servers(&dir.path().join("missing.yml"), None).is_err());
        // A device or a FIFO is no configuration: refused before any read that could block.
        assert!(servers(Path::new("/dev/zero"), None).is_err());
        let fifo = dir.path().join("fifo.yml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(servers(&fifo, None).is_err());
        }
        let empty = write(dir.path(), "empty/deploy.yml", "service: app\n");
        assert!(servers(&empty, None).is_err());
    }

    #[test]
    fn capistrano_stage_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let stage = write(
            dir.path(),
            "config/deploy/production.rb",
            "# comment: server 'ignored'\nserver \"web01\", user: \"deploy\", roles: %w{app web}\nserver 'db01', roles: [:db]\nrole :app, %w{deploy@web02:2222 web01}\nrole :worker, [\"10.0.0.5\"]\nset :branch, 'main'\n",
        );
        assert_eq!(
            servers(&stage, None),
            Ok(vec![
                "web01".into(),
                "db01".into(),
                "web02".into(),
                "10.0.0.5".into()
            ])
        );
        let code = write(
            dir.path(),
            "config/deploy/staging.rb",
            "server fetch(:host), user: 'deploy'\n",
        );
        assert!(servers(&code, None).is_err());
        let interpolated = write(
            dir.path(),
            "config/deploy/qa.rb",
            "server \"#{ENV['HOST']}\", user: 'deploy'\n",
        );
        assert!(servers(&interpolated, None).is_err());
    }
}
