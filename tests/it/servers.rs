//! The shipped catalogs against the tools real MCP servers list.
//!
//! Each `tests/fixtures/tools-list/<server>.json` is a `tools/list` result as the server
//! answers it (tool names and the arguments naming a target as in the source file it names),
//! the server's documented name, and what each tool must be: `read_only`, `mutating:<the
//! argument naming the VM>`, `server` (bound at start: the `[[server]]` binding's VM),
//! `session:<argument>` (a session an earlier call opened), `ask` (its VM cannot be known),
//! `unlisted` or `none` (mutating, but no VM found). A server started for one host (any expectation says `server`) gets a
//! `[[server]]` binding, as its user would write. The call is built with every argument
//! of the schema filled in; a second expectation, when given, is for a call with only the
//! required arguments. A tool whose `annotations` (as `tools/list` sends them) say it is not
//! read-only is never classified read-only, unless the fixture's `reviewed` says why.

use std::path::Path;

use rewind::catalog::{Bound, Catalog, Classification, ToolName};
use rewind::targets::Targets;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Deserialize)]
struct Fixture {
    server: String,
    source: String,
    result: ToolsList,
    expect: Map<String, Value>,
    /// Tools classified read-only against the server's own annotation, each with the reason.
    #[serde(default)]
    reviewed: Map<String, Value>,
}

#[derive(Deserialize)]
struct ToolsList {
    tools: Vec<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    name: String,
    #[serde(rename = "inputSchema")]
    input_schema: Value,
    #[serde(default)]
    annotations: Value,
}

/// The VM the test's `[[server]]` binding names, and the one a remembered session is on.
const BOUND_VM: &str = "bound-vm";
const SESSION_VM: &str = "session-vm";

/// A value for each property: a string names itself (`v-<name>`), so the test can tell which
/// argument the VM came from.
fn sample(name: &str, schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("integer" | "number") => json!(7),
        Some("boolean") => json!(false),
        Some("array") => json!([format!("v-{name}")]),
        Some("object") => {
            let mut object = Map::new();
            for (key, inner) in schema["properties"].as_object().into_iter().flatten() {
                object.insert(key.clone(), sample(key, inner));
            }
            Value::Object(object)
        }
        _ => json!(format!("v-{name}")),
    }
}

fn input(schema: &Value, required_only: bool) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut object = Map::new();
    for (key, prop) in schema["properties"].as_object().into_iter().flatten() {
        if !required_only || required.contains(&key.as_str()) {
            object.insert(key.clone(), sample(key, prop));
        }
    }
    Value::Object(object)
}

/// What the hook would make of the call, in the fixture's words.
fn outcome(catalog: &Catalog, server: &str, tool: &str, input: &Value) -> String {
    let name = ToolName::Mcp {
        server: server.to_owned(),
        tool: tool.to_owned(),
    };
    // A remembered session exists for every session name the test fills in.
    let recall = |session: &str| session.starts_with("v-").then(|| SESSION_VM.to_owned());
    match catalog.classify(&name, input) {
        Classification::ReadOnly(_) => String::from("read_only"),
        Classification::Unlisted => String::from("unlisted"),
        Classification::Local => String::from("host tool"),
        Classification::Shell { command, .. } => format!(
            "runs a command: {}",
            command.as_deref().unwrap_or("(missing)")
        ),
        Classification::Mutating { entry, .. } if entry.ask.is_some() => String::from("ask"),
        Classification::Mutating { entry, targets } => {
            // (argument, VM): where the VM came from (without the quoting) and the VM.
            let vm = match targets {
                Targets::Exact(list) => list
                    .first()
                    .map(|t| (t.source.replace('`', ""), t.reference.clone())),
                Targets::Missing { .. } => {
                    match catalog.bound_target(server, &entry, input, &recall) {
                        Bound::Vm { vm, source } => Some((source.replace('`', ""), vm)),
                        Bound::No | Bound::UnknownSession { .. } => None,
                    }
                }
                Targets::Unusable { .. } | Targets::Unknowable { .. } => None,
            };
            match vm {
                None => String::from("none"),
                Some((_, value)) if value == BOUND_VM => String::from("server"),
                Some((key, value)) if value == SESSION_VM => {
                    format!("session:{}", key.split(' ').next().unwrap_or_default())
                }
                Some((key, value)) => {
                    assert!(
                        value
                            .contains(&format!("v-{}", key.rsplit('/').next().unwrap_or_default())),
                        "{tool}: the VM {value:?} did not come from argument {key}",
                    );
                    format!("mutating:{key}")
                }
            }
        }
    }
}

#[test]
fn every_real_server_tool_lands_in_its_class_with_the_right_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut checked = 0;
    let mut failures = Vec::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tools-list");
    let mut paths: Vec<_> = std::fs::read_dir(&fixtures)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    for path in paths {
        let fixture: Fixture = serde_json::from_slice(&std::fs::read(&path).expect("read"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            !fixture.source.is_empty(),
            "{}: say where the tools came from",
            path.display()
        );
        // Servers started for one host get the binding a user writes for them.
        let bound_at_start = fixture
            .expect
            .values()
            .any(|e| e.to_string().contains("server"));
        let binding = dir.path().join(format!("{}.toml", fixture.server));
        let text = if bound_at_start {
            format!(
                "[[server]]\nname = {:?}\nvm = {BOUND_VM:?}\n",
                fixture.server
            )
        } else {
            String::new()
        };
        std::fs::write(&binding, text).expect("write binding");
        let catalog = Catalog::load(true, &[&binding]).expect("shipped catalogs load");
        assert_eq!(
            fixture.result.tools.len(),
            fixture.expect.len(),
            "{}: one expectation per tool",
            path.display()
        );
        for tool in &fixture.result.tools {
            let expected = &fixture.expect[&tool.name];
            let cases: Vec<(&str, bool)> = match expected {
                Value::String(all) => vec![(all.as_str(), false)],
                Value::Array(both) => vec![
                    (both[0].as_str().expect("string"), false),
                    (both[1].as_str().expect("string"), true),
                ],
                other => panic!("{}: bad expectation {other}", tool.name),
            };
            let says_it_changes = tool.annotations["readOnlyHint"] == json!(false)
                || tool.annotations["destructiveHint"] == json!(true);
            if says_it_changes
                && cases.iter().any(|(want, _)| *want == "read_only")
                && !fixture.reviewed.contains_key(&tool.name)
            {
                failures.push(format!(
                    "{} {}: read_only, but the server annotates it {}",
                    path.file_name().unwrap_or_default().display(),
                    tool.name,
                    tool.annotations
                ));
            }
            for (want, required_only) in cases {
                let call = input(&tool.input_schema, required_only);
                // Claude Code keeps the configured name's case and `-`, and turns `.` into `_`.
                let got = outcome(&catalog, &fixture.server, &tool.name, &call);
                checked += 1;
                if got != want {
                    failures.push(format!(
                        "{} {}__{} {call}: expected {want}, got {got}",
                        path.file_name().unwrap_or_default().display(),
                        fixture.server,
                        tool.name
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 200, "only {checked} calls checked");
}

#[test]
fn server_names_match_whatever_case_and_separator_the_user_configured() {
    let catalog = Catalog::load(true, &[] as &[&Path]).expect("loads");
    for server in ["mcp-ssh", "mcp_ssh", "MCP-SSH", "Mcp_Ssh"] {
        let name = ToolName::Mcp {
            server: server.to_owned(),
            tool: String::from("runRemoteCommand"),
        };
        let class = catalog.classify(&name, &json!({"hostAlias": "web01", "command": "ls"}));
        assert!(
            matches!(
                class,
                Classification::Mutating { targets: Targets::Exact(ref list), .. }
                    if list[0].reference == "web01"
            ),
            "{server}: {class:?}"
        );
    }
    // Tool names keep their case: `RunRemoteCommand` is another tool.
    let other = ToolName::Mcp {
        server: String::from("mcp-ssh"),
        tool: String::from("RunRemoteCommand"),
    };
    assert_eq!(
        catalog.classify(&other, &json!({})),
        Classification::Unlisted
    );
}

/// The generic catalog's read-only entries are exact names: a server rewind has no catalog
/// for may name any tool anything, so a tool that only starts like a read
/// (`download_and_exec`, `list_and_delete`) is never waved through.
#[test]
fn the_generic_catalog_waves_through_no_tool_that_only_starts_like_a_read() {
    let catalog = Catalog::load(true, &[] as &[&Path]).expect("loads");
    let cases = [
        ("ssh", "download_and_exec"),
        ("ssh", "download_then_run"),
        ("ssh", "list_and_delete"),
        ("ssh", "stat_and_chmod"),
        ("ssh", "read_file_and_replace"),
        ("ansible", "inventory_apply"),
        ("ansible", "update_inventory"),
        ("powershell", "get_and_invoke"),
        ("winrm", "get_then_set_service"),
        ("smb", "read_and_delete"),
        ("smb", "list_then_remove"),
        ("smb", "get_and_overwrite"),
    ];
    for (server, tool) in cases {
        let name = ToolName::Mcp {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        let class = catalog.classify(&name, &json!({"host": "web01"}));
        assert!(
            !matches!(class, Classification::ReadOnly(_)),
            "{server}/{tool}: {class:?}"
        );
    }
    // The exact names stay read-only.
    for (server, tool) in [("ssh", "download_file"), ("ssh", "list_directory")] {
        let name = ToolName::Mcp {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
        assert!(matches!(
            catalog.classify(&name, &json!({"host": "web01"})),
            Classification::ReadOnly(_)
        ));
    }
}
