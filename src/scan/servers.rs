//! The MCP servers an agent host is configured with, read from the host's own files.
//!
//! Claude Code keeps them in `~/.claude.json` (`mcpServers` for the user, and
//! `projects.<dir>.mcpServers` per project) and in a project's `.mcp.json` (`mcpServers`).
//! A server runs a command over stdio (`command`, `args`, `env`) or is reached over HTTP
//! (`type = "http"` or `"sse"`, `url`, `headers`). The `env` values and `headers` often hold
//! secrets: they are passed to the server and never printed.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde_json::Value;

/// How to reach one configured server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// Never prints `env`, `args` or `headers`: they may carry passwords and tokens.
impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Transport {
    /// What a person may see: the program's file name, or the URL without query, user info
    /// or fragment. Arguments, environment and headers are left out.
    pub fn describe(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => {
                // A command with white space or `=` in it is more than a program (`TOKEN=… x`
                // pasted as the command) and is not shown.
                let program = if command.contains(|c: char| c.is_whitespace() || c == '=') {
                    String::from("(a command line)")
                } else {
                    Path::new(command)
                        .file_name()
                        .map_or_else(|| command.clone(), |n| n.to_string_lossy().into_owned())
                };
                format!("stdio: {program} (+{} arguments)", args.len())
            }
            Self::Http { url, .. } => format!("http: {}", redact_url(url)),
        }
    }
}

/// A URL cut to scheme, host, port and path.
fn redact_url(url: &str) -> String {
    let cut = url.find(['?', '#']).map_or(url, |at| &url[..at]);
    match cut.split_once("://") {
        Some((scheme, rest)) => {
            let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            format!("{scheme}://{rest}")
        }
        None => cut.to_owned(),
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The key it is configured under: `mcp__<name>__<tool>`.
    pub name: String,
    /// Where it is configured (file, and project when per project).
    pub origin: String,
    pub transport: Transport,
}

/// The servers configured for Claude Code for a project in `project_dir`: the user's, that
/// project's in `~/.claude.json`, and the project's `.mcp.json`. A later one with the same
/// name replaces an earlier one (project settings win).
pub(crate) fn claude_code(home: Option<&Path>, project_dir: &Path) -> anyhow::Result<Vec<Server>> {
    let mut servers: Vec<Server> = Vec::new();
    let mut add = |found: Vec<Server>| {
        for server in found {
            servers.retain(|s| s.name != server.name);
            servers.push(server);
        }
    };
    if let Some(home) = home {
        let path = home.join(".claude.json");
        if let Some(json) = read_json(&path)? {
            let origin = path.display().to_string();
            add(parse_map(&json["mcpServers"], &origin)?);
            let project = project_dir.display().to_string();
            if let Some(entry) = json["projects"].get(&project) {
                add(parse_map(
                    &entry["mcpServers"],
                    &format!("{origin} (project {project})"),
                )?);
            }
        }
    }
    let path = project_dir.join(".mcp.json");
    if let Some(json) = read_json(&path)? {
        add(parse_map(&json["mcpServers"], &path.display().to_string())?);
    }
    Ok(servers)
}

/// The servers in one file shaped like `.mcp.json` (`{"mcpServers": {...}}`).
pub(crate) fn from_file(path: &Path) -> anyhow::Result<Vec<Server>> {
    let json = read_json(path)?.with_context(|| format!("{} does not exist", path.display()))?;
    parse_map(&json["mcpServers"], &path.display().to_string())
}

fn read_json(path: &Path) -> anyhow::Result<Option<Value>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            anyhow::anyhow!(
                "{} is not JSON: line {}, column {}",
                path.display(),
                e.line(),
                e.column()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn parse_map(map: &Value, origin: &str) -> anyhow::Result<Vec<Server>> {
    let Some(map) = map.as_object() else {
        return Ok(Vec::new());
    };
    map.iter()
        .map(|(name, config)| {
            parse_server(config)
                .map(|transport| Server {
                    name: name.clone(),
                    origin: origin.to_owned(),
                    transport,
                })
                .with_context(|| format!("{origin}: mcpServers.{name}"))
        })
        .collect()
}

fn parse_server(config: &Value) -> anyhow::Result<Transport> {
    let strings = |value: &Value, what: &str| -> anyhow::Result<BTreeMap<String, String>> {
        let Some(map) = value.as_object() else {
            return Ok(BTreeMap::new());
        };
        map.iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                // The value is never quoted: it may be a secret.
                _ => anyhow::bail!("{what}.{k} is not a string"),
            })
            .collect()
    };
    let kind = config["type"].as_str().unwrap_or("stdio");
    match kind {
        "http" | "sse" | "streamable-http" => {
            let url = config["url"]
                .as_str()
                .context("an HTTP server needs url")?
                .to_owned();
            Ok(Transport::Http {
                url,
                headers: strings(&config["headers"], "headers")?,
            })
        }
        "stdio" => {
            let command = config["command"]
                .as_str()
                .context("a stdio server needs command")?
                .to_owned();
            let args = match &config["args"] {
                Value::Null => Vec::new(),
                Value::Array(items) => items
                    .iter()
                    .map(|a| {
                        a.as_str()
                            .map(str::to_owned)
                            .context("args must be strings")
                    })
                    .collect::<anyhow::Result<_>>()?,
                _ => anyhow::bail!("args is not a list"),
            };
            Ok(Transport::Stdio {
                command,
                args,
                env: strings(&config["env"], "env")?,
            })
        }
        other => anyhow::bail!("type {other:?} is not stdio, http or sse"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_project_and_mcp_json_servers_are_read_and_project_ones_win() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&project).expect("mkdir");
        let claude = serde_json::json!({
            "mcpServers": {
                "ssh": {"command": "/usr/bin/ssh-mcp", "args": ["--password", "hunter2"], "env": {"TOKEN": "s3cret"}},
                "aap": {"type": "http", "url": "https://user:pw@aap.example/mcp?token=abc"}
            },
            "projects": {project.display().to_string(): {"mcpServers": {"ssh": {"command": "other"}}}}
        });
        std::fs::write(dir.path().join(".claude.json"), claude.to_string()).expect("write");
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"vm": {"command": "npx", "args": ["vmware-aiops"]}}}"#,
        )
        .expect("write");
        let servers = claude_code(Some(dir.path()), &project).expect("read");
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["aap", "ssh", "vm"]);
        assert_eq!(
            servers[1].transport.describe(),
            "stdio: other (+0 arguments)"
        );
        let shown = format!("{servers:?}");
        for secret in ["hunter2", "s3cret", "token=abc", "user:pw"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert_eq!(
            servers[0].transport.describe(),
            "http: https://aap.example/mcp"
        );
    }

    #[test]
    fn a_bad_entry_names_file_and_server_but_not_the_value() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"ssh": {"command": "x", "env": {"PW": 8675309}}}}"#,
        )
        .expect("write");
        let err = format!("{:#}", from_file(&path).expect_err("bad env"));
        assert!(
            err.contains("mcpServers.ssh") && err.contains("env.PW"),
            "{err}"
        );
        assert!(!err.contains("8675309"), "{err}");
    }
}
