//! `rewind catalog scan`: asks every MCP server the agent host is configured with for its
//! tools, and says for each which catalog entry classifies it, or proposes one.
//!
//! - [`servers`]: the host's MCP configuration (Claude Code's `~/.claude.json` and
//!   `.mcp.json`).
//! - [`client`]: `initialize` + `tools/list` over stdio or HTTP, under a deadline.
//! - [`propose`]: an entry from a tool's annotations, name and argument names.
//!
//! The tool lists are cached (`mcp-tools.json` in the cache directory, keyed by a hash of
//! each server's configuration) so that `doctor` can report uncovered servers without
//! starting them on every run.

pub(crate) mod client;
pub(crate) mod propose;
pub(crate) mod servers;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use self::propose::Proposal;
use self::servers::{Server, Transport};
use crate::catalog::{Catalog, Classification, ToolClass, ToolName};
use crate::deadline::Deadline;
use crate::lockfile;

/// How long a cached tool list counts for `doctor`.
pub(crate) const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Most tools kept from one server.
const MAX_TOOLS: usize = 5000;

/// What the scan found for one tool.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolReport {
    pub name: String,
    /// The deciding entry's class, or `None` when no catalog lists the tool.
    pub class: Option<ToolClass>,
    /// Where that entry is (`builtin:…` or a file), with its server and tool patterns.
    pub entry: Option<String>,
    /// For a tool no catalog lists: what the scan proposes.
    pub proposal: Option<Proposal>,
    /// Why a human should look at the entry that covers it: a read-only entry for a tool the
    /// server itself annotates `destructiveHint: true`.
    pub review: Option<String>,
}

/// What the scan found for one server.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerReport {
    pub name: String,
    pub origin: String,
    pub transport: String,
    /// The tools, or why they could not be listed.
    pub tools: Result<Vec<ToolReport>, String>,
}

impl ServerReport {
    /// Tools no catalog lists.
    pub(crate) fn uncovered(&self) -> Vec<&ToolReport> {
        self.tools
            .as_ref()
            .map(|tools| tools.iter().filter(|t| t.class.is_none()).collect())
            .unwrap_or_default()
    }
}

/// Where a scan gets each server's tools.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// Start (or connect to) every server, each within this time; the cache is refreshed.
    Servers(Duration),
    /// Only the cache, when no older than this: nothing is started (`doctor` runs in any
    /// directory, and a project's `.mcp.json` is not its to execute).
    Cache(Duration),
}

/// Lists each server's tools (from the servers or the cache) and classifies them.
pub(crate) fn scan(
    servers: &[Server],
    catalog: &Catalog,
    source: Source,
    cache_dir: &Path,
) -> Vec<ServerReport> {
    let mut cache = Cache::read(cache_dir);
    let now = seconds(SystemTime::now());
    let reports = servers
        .iter()
        .map(|server| {
            let key = fingerprint(&server.transport);
            let tools = match source {
                Source::Cache(ttl) => cache
                    .servers
                    .get(&server.name)
                    .filter(|c| c.fingerprint == key && now.saturating_sub(c.at) < ttl.as_secs())
                    .map_or_else(
                        || {
                            Err(String::from(
                                "not scanned since its configuration changed, or for a day",
                            ))
                        },
                        |c| match &c.failed {
                            Some(why) => Err(format!("the last scan failed: {why}")),
                            None => Ok(c.tools.clone()),
                        },
                    ),
                Source::Servers(timeout) => {
                    let listed = client::list_tools(&server.transport, &Deadline::after(timeout))
                        .map_err(|e| format!("{e:#}"));
                    let (tools, failed) = match &listed {
                        Ok(tools) => (tools.clone(), None),
                        Err(why) => (Vec::new(), Some(why.clone())),
                    };
                    cache.servers.insert(
                        server.name.clone(),
                        Cached {
                            fingerprint: key,
                            at: now,
                            tools,
                            failed,
                        },
                    );
                    listed
                }
            };
            ServerReport {
                name: server.name.clone(),
                origin: server.origin.clone(),
                transport: server.transport.describe(),
                tools: tools.map(|tools| {
                    tools
                        .iter()
                        .take(MAX_TOOLS)
                        .filter(|t| t["name"].is_string())
                        .map(|tool| classify(catalog, &server.name, tool))
                        .collect()
                }),
            }
        })
        .collect();
    if matches!(source, Source::Servers(_)) {
        cache.write(cache_dir);
    }
    reports
}

fn classify(catalog: &Catalog, server: &str, tool: &Value) -> ToolReport {
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    let class = catalog.classify(
        &ToolName::Mcp {
            server: server.to_owned(),
            tool: name.clone(),
        },
        &json!({}),
    );
    let entry = match &class {
        Classification::ReadOnly(e) | Classification::Mutating { entry: e, .. } => Some(e),
        _ => None,
    };
    // The server's own word against the entry: an annotation is not proof of read-only, but
    // a server that says its tool destroys something is worth believing until a human looks.
    let review = entry
        .filter(|e| e.class == crate::catalog::ToolClass::ReadOnly)
        .filter(|_| tool["annotations"]["destructiveHint"] == Value::Bool(true))
        .map(|e| {
            format!(
                "{} classifies it read-only, but the server annotates it destructiveHint: true; check that entry",
                e.origin
            )
        });
    ToolReport {
        review,
        proposal: entry.is_none().then(|| propose::propose(tool)),
        class: entry.map(|e| e.class),
        entry: entry.map(|e| format!("{} (server {:?}, tool {:?})", e.origin, e.server, e.tool)),
        name,
    }
}

/// The proposals worth writing, as catalog text: a class is known (flagged ones are
/// written as mutating, with the reason in a comment). Tools a human must decide are left
/// out; they stay unlisted, so the hook asks.
pub(crate) fn proposals_toml(reports: &[ServerReport], stamp: &str) -> String {
    let mut text = String::new();
    for server in reports {
        for tool in server.uncovered() {
            let Some(proposal) = &tool.proposal else {
                continue;
            };
            let Some(class) = proposal.class else {
                continue;
            };
            // A name no catalog entry could hold (white space, wildcards, `__`) stays unlisted.
            let writable = |name: &str| {
                !name.is_empty()
                    && !name.contains(|c: char| c.is_whitespace() || "*?[]{}".contains(c))
            };
            if !writable(&tool.name) || !writable(&server.name) || server.name.contains("__") {
                continue;
            }
            let _ = write!(
                text,
                "\n# catalog scan {stamp}: {}",
                one_line(&proposal.because)
            );
            if let Some(review) = &proposal.review {
                let _ = write!(text, "\n# REVIEW: {}", one_line(review));
            }
            let _ = write!(
                text,
                "\n[[{class}]]\nserver = {}\ntool = {}\n",
                toml_string(&server.name),
                toml_string(&tool.name)
            );
            if class == ToolClass::Mutating {
                if !proposal.vm_arg.is_empty() {
                    let _ = writeln!(text, "vm_arg = {}", toml_list(&proposal.vm_arg));
                }
                if !proposal.session_arg.is_empty() && proposal.vm_arg.is_empty() {
                    let _ = writeln!(text, "session_arg = {}", toml_list(&proposal.session_arg));
                }
                if proposal.vm_arg.is_empty() && proposal.session_arg.is_empty() {
                    text.push_str("ask = \"catalog scan found no argument naming a VM\"\n");
                }
            }
        }
    }
    text
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| toml_string(i)).collect();
    format!("[{}]", quoted.join(", "))
}

/// A hash of everything that decides which server runs, secrets included (only the hash is
/// stored).
fn fingerprint(transport: &Transport) -> String {
    let mut hash = Sha256::new();
    match transport {
        Transport::Stdio { command, args, env } => {
            hash.update(b"stdio\0");
            hash.update(command.as_bytes());
            for part in args.iter().chain(env.iter().flat_map(|(k, v)| [k, v])) {
                hash.update(b"\0");
                hash.update(part.as_bytes());
            }
        }
        Transport::Http { url, headers } => {
            hash.update(b"http\0");
            hash.update(url.as_bytes());
            for (k, v) in headers {
                hash.update(b"\0");
                hash.update(k.as_bytes());
                hash.update(b"\0");
                hash.update(v.as_bytes());
            }
        }
    }
    crate::hex(&hash.finalize())
}

#[derive(Default, Serialize, Deserialize)]
struct Cache {
    servers: BTreeMap<String, Cached>,
}

#[derive(Serialize, Deserialize)]
struct Cached {
    fingerprint: String,
    at: u64,
    tools: Vec<Value>,
    /// Why the last scan could not list the tools, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failed: Option<String>,
}

impl Cache {
    fn path(dir: &Path) -> std::path::PathBuf {
        dir.join("mcp-tools.json")
    }

    /// The cache, or an empty one when it is missing or unreadable.
    fn read(dir: &Path) -> Cache {
        std::fs::read(Self::path(dir))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Best effort: a cache that cannot be written only costs a rescan.
    fn write(&self, dir: &Path) {
        if lockfile::create_private_dir(dir).is_ok()
            && let Ok(bytes) = serde_json::to_vec(self)
        {
            let _ = lockfile::write_private_atomic(&Self::path(dir), &bytes);
        }
    }
}

fn seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(server: &str, tools: &[&str]) -> ServerReport {
        ServerReport {
            name: server.to_owned(),
            origin: String::from("test"),
            transport: String::from("stdio: test"),
            tools: Ok(tools
                .iter()
                .map(|name| ToolReport {
                    name: (*name).to_owned(),
                    class: None,
                    entry: None,
                    review: None,
                    proposal: Some(propose::propose(&json!({
                        "name": name,
                        "inputSchema": {"properties": {"host": {"type": "string"}}},
                        "annotations": {"destructiveHint": true}
                    }))),
                })
                .collect()),
        }
    }

    #[test]
    fn names_no_catalog_entry_could_hold_get_no_proposal_and_the_rest_load() {
        let text = proposals_toml(
            &[
                report("ops", &["restart", "two words", "glob*", ""]),
                report("a__b", &["restart"]),
            ],
            "t",
        );
        assert_eq!(text.matches("[[mutating]]").count(), 1, "{text}");
        let catalog = Catalog::parse(&text, "proposals").expect("the proposals load");
        assert_eq!(catalog.entries()[0].vm_arg, ["host"]);
    }

    #[test]
    fn a_read_only_entry_for_a_tool_the_server_calls_destructive_is_flagged() {
        let catalog = Catalog::parse(
            "[[read_only]]\nserver = \"ops\"\ntool = \"restart_service\"\n\n[[read_only]]\nserver = \"ops\"\ntool = \"show_status\"\n",
            "/home/u/.config/rewind/catalog.toml",
        )
        .expect("parses");
        let restart = json!({"name": "restart_service", "annotations": {"readOnlyHint": false, "destructiveHint": true}});
        let report = classify(&catalog, "ops", &restart);
        assert_eq!(
            report.review.as_deref(),
            Some(
                "/home/u/.config/rewind/catalog.toml classifies it read-only, but the server annotates it destructiveHint: true; check that entry"
            )
        );
        for quiet in [
            json!({"name": "show_status", "annotations": {"readOnlyHint": true}}),
            json!({"name": "show_status"}),
        ] {
            assert_eq!(classify(&catalog, "ops", &quiet).review, None, "{quiet}");
        }
    }
}
