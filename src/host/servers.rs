//! The MCP server of a call whose host does not name it plainly, from the host's own
//! configuration:
//!
//! - Copilot CLI joins server and tool as `<server>-<tool>`, and both may contain `-`
//!   (`rewind-lab-exec` is server `rewind-lab`'s `exec`, not server `rewind`'s `lab-exec`).
//!   The name is split against the servers Copilot is configured with and the servers the
//!   catalogs name, the longest match first; a name that stays ambiguous asks.
//! - Cursor names the server of a `beforeMCPExecution` call only by its `command` or `url`.
//!   They are looked up in Cursor's own `mcp.json` files (the user's `~/.cursor/mcp.json`,
//!   and `.cursor/mcp.json` under each workspace root and the call's directory); a call
//!   whose command or URL names no one server stays unnamed (an ask, unless a catalog entry
//!   covers any server).
//!
//! Only files are read here, each bounded in size; a file that is missing or not JSON names
//! no server.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::host::names;
use crate::host::{Event, ToolCall};

/// What a host says about a call's server instead of its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServerHint {
    /// Copilot's `<server>-<tool>`, as sent, and the directory the call runs in.
    Joined { name: String, cwd: Option<PathBuf> },
    /// Cursor's `command` or `url` of the server, and the directories whose
    /// `.cursor/mcp.json` may configure it (workspace roots, the call's directory).
    Launched {
        command: Option<String>,
        url: Option<String>,
        dirs: Vec<PathBuf>,
    },
}

/// Largest configuration file read.
const MAX_FILE: u64 = 1024 * 1024;
/// Most directories of one call whose configuration is read.
const MAX_DIRS: usize = 8;

/// Names the server of `call` from its hint, in place: `call.server` and `call.tool` become
/// the server's name and `mcp__<server>__<tool>`. `catalogued` gives the server names the
/// catalogs hold (asked for only when a Copilot name can be split more than one way). `Err`
/// says why the call must ask: its server cannot be told.
pub(crate) fn name_server(
    call: &mut ToolCall,
    home: Option<&Path>,
    catalogued: impl FnOnce() -> Vec<String>,
) -> Result<(), String> {
    // Nothing is decided on a call that already ran or names an unknown event.
    if call.event != Event::BeforeTool {
        return Ok(());
    }
    match call.server_hint.clone() {
        None => Ok(()),
        Some(ServerHint::Joined { name, cwd }) => {
            let configured = copilot_servers(home, cwd.as_deref());
            match split(&name, &configured, catalogued) {
                Ok((server, tool)) => {
                    call.tool = names::mcp(&server, &tool);
                    call.server = Some(server);
                    Ok(())
                }
                // No guessed server stays behind: the call is known by the name as sent.
                Err(why) => {
                    call.tool = name;
                    call.server = None;
                    Err(why)
                }
            }
        }
        Some(ServerHint::Launched { command, url, dirs }) => {
            let tool = call
                .tool
                .rsplit_once("__")
                .map_or(call.tool.as_str(), |(_, tool)| tool)
                .to_owned();
            if let Some(server) = cursor_server(home, &dirs, command.as_deref(), url.as_deref()) {
                call.tool = names::mcp(&server, &tool);
                call.server = Some(server);
            }
            Ok(())
        }
    }
}

/// Splits Copilot's `<server>-<tool>`: at the longest configured server name it starts with;
/// else at its only `-`; else at the longest catalogued name, when no longer split is
/// possible. Anything else is ambiguous (`Err` names the readings).
fn split(
    joined: &str,
    configured: &[String],
    catalogued: impl FnOnce() -> Vec<String>,
) -> Result<(String, String), String> {
    // Every reading: (server, tool), longest server first.
    let mut readings: Vec<(&str, &str)> = joined
        .match_indices('-')
        .map(|(at, _)| (&joined[..at], &joined[at + 1..]))
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
        .collect();
    readings.reverse();
    let owned = |(server, tool): (&str, &str)| (server.to_owned(), tool.to_owned());
    let is_one_of = |names: &[String], server: &str| {
        names
            .iter()
            .any(|name| crate::catalog::server_match(name, server))
    };
    if let Some(reading) = readings.iter().find(|(s, _)| is_one_of(configured, s)) {
        return Ok(owned(*reading));
    }
    match readings.as_slice() {
        [] => return Err(format!("{joined:?} names no server and tool")),
        [only] => return Ok(owned(*only)),
        _ => {}
    }
    let catalogued = catalogued();
    if let Some(longest) = readings.first()
        && is_one_of(&catalogued, longest.0)
    {
        return Ok(owned(*longest));
    }
    let said: Vec<String> = readings
        .iter()
        .map(|(server, tool)| format!("server {server:?}'s tool {tool:?}"))
        .collect();
    Err(format!(
        "Copilot names the MCP tool {joined:?}, which could be {}; no configured server tells which",
        said.join(" or ")
    ))
}

/// The servers Copilot CLI is configured with: `$COPILOT_HOME/mcp-config.json` (else
/// `~/.copilot/mcp-config.json`), and the call's directory's `.mcp.json`,
/// `.vscode/mcp.json` and `.github/copilot/mcp.json`.
fn copilot_servers(home: Option<&Path>, cwd: Option<&Path>) -> Vec<String> {
    let mut files = Vec::new();
    match std::env::var_os("COPILOT_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => files.push(dir.join("mcp-config.json")),
        _ => files.extend(home.map(|h| h.join(".copilot/mcp-config.json"))),
    }
    if let Some(cwd) = cwd.filter(|d| d.is_absolute()) {
        for rel in [".mcp.json", ".vscode/mcp.json", ".github/copilot/mcp.json"] {
            files.push(cwd.join(rel));
        }
    }
    files
        .iter()
        .filter_map(|file| read_json(file))
        .flat_map(|json| servers_of(&json).into_iter().map(|(name, _)| name))
        .collect()
}

/// The `(name, configuration)` of every server a `mcp.json` lists (`mcpServers`, or VS
/// Code's `servers`).
fn servers_of(json: &Value) -> Vec<(String, Value)> {
    ["mcpServers", "servers"]
        .iter()
        .filter_map(|key| json[key].as_object())
        .flatten()
        .map(|(name, config)| (name.clone(), config.clone()))
        .collect()
}

/// The one server Cursor's `mcp.json` files configure with this command line or URL.
fn cursor_server(
    home: Option<&Path>,
    dirs: &[PathBuf],
    command: Option<&str>,
    url: Option<&str>,
) -> Option<String> {
    let mut files: Vec<PathBuf> = home
        .map(|h| h.join(".cursor/mcp.json"))
        .into_iter()
        .collect();
    files.extend(
        dirs.iter()
            .filter(|d| d.is_absolute())
            .take(MAX_DIRS)
            .map(|d| d.join(".cursor/mcp.json")),
    );
    let servers: Vec<(String, Value)> = files
        .iter()
        .filter_map(|file| read_json(file))
        .flat_map(|json| servers_of(&json))
        .collect();
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    // Only one name may answer: two servers launched alike cannot be told apart.
    let one = |matches: &dyn Fn(&Value) -> bool| -> Option<String> {
        let mut names: Vec<&str> = servers
            .iter()
            .filter(|(_, config)| matches(config))
            .map(|(name, _)| name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        match names.as_slice() {
            [name] => Some((*name).to_owned()),
            _ => None,
        }
    };
    if let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) {
        let bare = |u: &str| u.trim().trim_end_matches('/').to_owned();
        return one(&|config: &Value| config["url"].as_str().is_some_and(|u| bare(u) == bare(url)));
    }
    let command = words(command?);
    if command.is_empty() {
        return None;
    }
    let line = |config: &Value| -> Option<String> {
        let program = config["command"].as_str()?;
        let args: Vec<&str> = config["args"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        Some(words(&format!("{program} {}", args.join(" "))))
    };
    // The whole command line first, then the program alone (a host that sends only it).
    one(&|config: &Value| line(config).is_some_and(|l| l == command)).or_else(|| {
        one(&|config: &Value| {
            config["command"]
                .as_str()
                .is_some_and(|program| words(program) == command)
        })
    })
}

/// A JSON file, if it exists, is small enough and parses.
fn read_json(path: &Path) -> Option<Value> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_FILE {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn split_of(
        joined: &str,
        configured: &[&str],
        catalogued: &[&str],
    ) -> Result<(String, String), String> {
        split(joined, &names(configured), || names(catalogued))
    }

    #[test]
    fn a_copilot_name_splits_at_the_longest_configured_server() {
        let ok = |server: &str, tool: &str| Ok((server.to_owned(), tool.to_owned()));
        // The issue's case: `rewind` is catalogued read-only, `rewind-lab` is configured.
        assert_eq!(
            split_of("rewind-lab-exec", &["rewind-lab"], &["rewind"]),
            ok("rewind-lab", "exec")
        );
        assert_eq!(
            split_of("rewind-lab-exec", &["rewind", "rewind-lab"], &[]),
            ok("rewind-lab", "exec")
        );
        assert_eq!(split_of("ssh-exec", &[], &[]), ok("ssh", "exec"));
        assert_eq!(
            split_of("ssh-bridge-ssh_exec", &[], &["ssh-bridge", "rewind"]),
            ok("ssh-bridge", "ssh_exec")
        );
        assert_eq!(
            split_of("rewind-guard", &["rewind"], &["rewind"]),
            ok("rewind", "guard")
        );
        // A catalog's `?` stands for the separator.
        assert_eq!(
            split_of(
                "desktop-commander-start_process",
                &[],
                &["desktop?commander"]
            ),
            ok("desktop-commander", "start_process")
        );
    }

    #[test]
    fn a_copilot_name_no_configured_server_settles_asks() {
        // Only the shorter reading is catalogued: a longer server may be the real one.
        let why = split_of("rewind-lab-exec", &[], &["rewind"]).expect_err("ambiguous");
        assert!(
            why.contains(r#"server "rewind-lab"'s tool "exec""#)
                && why.contains(r#"server "rewind"'s tool "lab-exec""#),
            "{why}"
        );
        assert!(split_of("a-b-c", &[], &[]).is_err());
        assert!(split_of("-x", &[], &[]).is_err());
    }

    #[test]
    fn copilot_reads_its_user_and_workspace_server_lists() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let work = dir.path().join("work");
        std::fs::create_dir_all(home.join(".copilot")).expect("mkdir");
        std::fs::create_dir_all(work.join(".vscode")).expect("mkdir");
        std::fs::write(
            home.join(".copilot/mcp-config.json"),
            r#"{"mcpServers": {"rewind-lab": {"command": "rewind", "args": ["mcp"]}}}"#,
        )
        .expect("write");
        std::fs::write(
            work.join(".vscode/mcp.json"),
            r#"{"servers": {"ops-box": {"type": "http", "url": "https://ops/mcp"}}}"#,
        )
        .expect("write");
        let mut found = copilot_servers(Some(&home), Some(&work));
        found.sort();
        assert_eq!(found, ["ops-box", "rewind-lab"]);
    }

    #[test]
    fn cursor_finds_the_server_by_its_command_line_or_url() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let root = dir.path().join("work");
        std::fs::create_dir_all(home.join(".cursor")).expect("mkdir");
        std::fs::create_dir_all(root.join(".cursor")).expect("mkdir");
        std::fs::write(
            home.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"ssh": {"command": "npx", "args": ["-y", "ssh-mcp", "--", "--host=web01"]},
                               "vmware-aiops": {"url": "https://aiops.example/mcp"}}}"#,
        )
        .expect("write");
        std::fs::write(
            root.join(".cursor/mcp.json"),
            r#"{"mcpServers": {"ssh-bridge": {"command": "/usr/local/bin/mcp-ssh-bridge"},
                               "twin-a": {"command": "node", "args": ["same.js"]},
                               "twin-b": {"command": "node", "args": ["same.js"]}}}"#,
        )
        .expect("write");
        let dirs = [root.clone()];
        let find = |command: Option<&str>, url: Option<&str>| {
            cursor_server(Some(&home), &dirs, command, url)
        };
        assert_eq!(
            find(Some("npx -y ssh-mcp -- --host=web01"), None).as_deref(),
            Some("ssh")
        );
        assert_eq!(
            find(Some("/usr/local/bin/mcp-ssh-bridge"), None).as_deref(),
            Some("ssh-bridge")
        );
        assert_eq!(
            find(None, Some("https://aiops.example/mcp/")).as_deref(),
            Some("vmware-aiops")
        );
        // Two servers launched alike, and a command nobody configured: no name.
        assert_eq!(find(Some("node same.js"), None), None);
        assert_eq!(find(Some("npx other-mcp"), None), None);
        assert_eq!(find(None, Some("https://elsewhere/mcp")), None);
        // Without the workspace's file, its servers are unknown.
        assert_eq!(
            cursor_server(
                Some(&home),
                &[],
                Some("/usr/local/bin/mcp-ssh-bridge"),
                None
            ),
            None
        );
    }
}
