//! Every row of the decision table in every other host's dialect: each fixture scene of
//! `tests/fixtures/hook/` (the simulator, faults and configuration of its `<case>.toml`), with
//! the call respelled the way that host sends it (event, tool names, argument keys, as recorded
//! in `tests/fixtures/hosts/`), fed to the real `rewind hook --host <host>`. One snapshot per
//! host lists what each row becomes in that host's output format.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::hook::{regex_escape, scene_env};
use crate::support::Run;

#[derive(Clone, Copy)]
pub(crate) enum Spelling {
    Codex,
    Gemini,
    Copilot,
    Cursor,
}

impl Spelling {
    pub(crate) fn host(self) -> &'static str {
        match self {
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Copilot => "copilot",
            Self::Cursor => "cursor",
        }
    }
}

/// Claude Code's names for the tools the fixtures use, in each host's words.
fn native_tool(spelling: Spelling, tool: &str) -> String {
    let mcp = tool
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"));
    match (spelling, mcp, tool) {
        (Spelling::Codex, _, _) => tool.to_owned(),
        (Spelling::Gemini, Some((server, name)), _) => format!("mcp_{server}_{name}"),
        (Spelling::Gemini, None, "Bash") => "run_shell_command".to_owned(),
        (Spelling::Gemini, None, "Read") => "read_file".to_owned(),
        (Spelling::Gemini, None, "Edit") => "replace".to_owned(),
        (Spelling::Gemini, None, "Write") => "write_file".to_owned(),
        (Spelling::Copilot, Some((server, name)), _) => format!("{server}-{name}"),
        (Spelling::Copilot, None, "Bash") => "bash".to_owned(),
        (Spelling::Copilot, None, "Read") => "view".to_owned(),
        (Spelling::Copilot, None, "Edit") => "edit".to_owned(),
        (Spelling::Copilot, None, "Write") => "create".to_owned(),
        (Spelling::Cursor, Some((_, name)), _) => format!("MCP:{name}"),
        (Spelling::Cursor, None, "Bash") => "Shell".to_owned(),
        (_, _, other) => other.to_owned(),
    }
}

/// The fixture's call as `spelling`'s host sends it. Bytes that are not a Claude-shaped call
/// (empty, not JSON, no tool name) are sent as they are: every dialect must refuse them.
pub(crate) fn respell(spelling: Spelling, fixture: &[u8]) -> Vec<u8> {
    let Ok(Value::Object(claude)) = serde_json::from_slice::<Value>(fixture) else {
        return fixture.to_vec();
    };
    let Some(tool) = claude.get("tool_name").and_then(Value::as_str) else {
        return fixture.to_vec();
    };
    let mut event = claude
        .get("hook_event_name")
        .cloned()
        .unwrap_or(Value::Null);
    // A fixture about an event Claude Code does not send may name one this host does send:
    // swap it for Claude's spelling so the row stays about an event the host does not send.
    let own = match spelling {
        Spelling::Gemini => "BeforeTool",
        Spelling::Cursor => "preToolUse",
        Spelling::Codex | Spelling::Copilot => "",
    };
    if !own.is_empty() && event == own {
        event = json!("PreToolUse ");
    }
    let input = claude.get("tool_input").cloned().unwrap_or(json!({}));
    let id = claude.get("tool_use_id").cloned().unwrap_or(Value::Null);
    let before = event == "PreToolUse";
    let mcp = tool
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"));
    let native = native_tool(spelling, tool);
    let mut out = Map::new();
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    match spelling {
        Spelling::Codex => {
            put("session_id", json!("019a0000-0000-7000-8000-00000000c0de"));
            put("turn_id", json!("019a0000-0000-7000-8000-0000000000a1"));
            put(
                "transcript_path",
                json!("/home/dev/.codex/sessions/r.jsonl"),
            );
            put("cwd", json!("/home/dev/ops"));
            put("hook_event_name", event);
            put("model", json!("gpt-5-codex"));
            put("permission_mode", json!("default"));
            put("tool_name", json!(native));
            put("tool_input", input);
            put("tool_use_id", id);
        }
        Spelling::Gemini => {
            let event = match event.as_str() {
                Some("PreToolUse") => json!("BeforeTool"),
                Some("PostToolUse") => json!("AfterTool"),
                _ => event,
            };
            put("session_id", json!("6e3d0000-0000-4000-8000-00000000face"));
            put(
                "transcript_path",
                json!("/home/dev/.gemini/tmp/ops/chats/s.jsonl"),
            );
            put("cwd", json!("/home/dev/ops"));
            put("hook_event_name", event);
            put("timestamp", json!("2026-12-01T04:18:12.553Z"));
            put("tool_name", json!(native));
            put("tool_input", input);
            if let Some((server, name)) = mcp {
                put(
                    "mcp_context",
                    json!({"server_name": server, "tool_name": name, "command": "node", "args": []}),
                );
            }
        }
        // The camelCase payload has no event name: a fixture about an odd event is sent in
        // the Claude-shaped spelling Copilot uses under `PreToolUse`.
        Spelling::Copilot if before => {
            put("sessionId", json!("c0b11070-0000-4000-8000-000000000001"));
            put("timestamp", json!(1_796_098_717_577_u64));
            put("cwd", json!("/home/dev/ops"));
            put("toolName", json!(native));
            put("toolArgs", input);
        }
        Spelling::Copilot => {
            put("hook_event_name", event);
            put("session_id", json!("c0b11070-0000-4000-8000-000000000001"));
            put("timestamp", json!("2026-12-01T04:18:51.023Z"));
            put("cwd", json!("/home/dev/ops"));
            put("tool_name", json!(native));
            put("tool_input", input);
        }
        Spelling::Cursor => cursor(&mut out, event, before, mcp, tool, &native, input, id),
    }
    Value::Object(out).to_string().into_bytes()
}

/// The fixture's call as Cursor sends it: an MCP call as `beforeMCPExecution` (arguments as a
/// JSON string, the server by its command, not its name), a shell call as
/// `beforeShellExecution`, anything else as `preToolUse`.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one call, each named"
)]
fn cursor(
    out: &mut Map<String, Value>,
    event: Value,
    before: bool,
    mcp: Option<(&str, &str)>,
    tool: &str,
    native: &str,
    input: Value,
    id: Value,
) {
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    put(
        "conversation_id",
        json!("c0501000-0000-4000-8000-000000000001"),
    );
    put(
        "generation_id",
        json!("9e0e0000-0000-4000-8000-000000000001"),
    );
    put("model", json!("claude-4-sonnet"));
    put("cursor_version", json!("1.7.2"));
    put("workspace_roots", json!(["/home/dev/ops"]));
    put("user_email", json!("dev@example.com"));
    put("transcript_path", Value::Null);
    match (before, mcp, tool) {
        (true, Some((_, name)), _) => {
            put("hook_event_name", json!("beforeMCPExecution"));
            put("tool_name", json!(name));
            put("tool_input", json!(input.to_string()));
            put("command", json!("npx -y mcp-server"));
        }
        (true, None, "Bash") => {
            put("hook_event_name", json!("beforeShellExecution"));
            put(
                "command",
                input.get("command").cloned().unwrap_or(Value::Null),
            );
            put("cwd", json!("/home/dev/ops"));
        }
        _ => {
            let event = if before { json!("preToolUse") } else { event };
            put("hook_event_name", event);
            put("tool_name", json!(native));
            put("tool_input", input);
            put("tool_use_id", id);
        }
    }
}

/// What one row became: the exit code, stdout as JSON, and stderr when it is the answer.
pub(crate) fn outcome(run: &Run) -> Value {
    let stdout: Value = if run.stdout.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {run:#?}"))
    };
    assert!(matches!(run.code, 0 | 2), "only exit 0 or 2: {run:#?}");
    if run.code == 2 {
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "exit 2 says one line: {run:#?}"
        );
    }
    json!({
        "exit_code": run.code,
        "stdout": stdout,
        "stderr": if run.code == 2 { Value::from(run.stderr.trim_end()) } else { Value::Null },
    })
}

/// The `*.json` files of `dir`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// Runs each fixture, in its scene, through `rewind hook --host <host>` with the host and stdin
/// `call` gives for it: the outcomes by fixture name, and the scenes' temporary directories
/// (as regexes, for the snapshot filters).
fn decide_each(
    fixtures: &[PathBuf],
    call: impl Fn(&str, &Path) -> (String, Vec<u8>),
) -> (Map<String, Value>, Vec<String>) {
    let mut rows = Map::new();
    let mut temps = Vec::new();
    for path in fixtures {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 name");
        let env = scene_env(path);
        let (host, stdin) = call(name, path);
        let run = env.run(&["hook", "--host", &host], &stdin);
        rows.insert(name.to_owned(), outcome(&run));
        temps.push(regex_escape(&env.dir.path().display().to_string()));
    }
    (rows, temps)
}

/// What changes from run to run in an outcome: ports, temporary directories, and the change id
/// rewind makes up (time and randomness) for Gemini and Copilot, which send no call id.
fn filters(temps: &[String]) -> Vec<(&str, &str)> {
    let mut filters: Vec<(&str, &str)> = vec![
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[port]"),
        (
            r"--change rewind-\d{8}T\d{6}Z-[0-9a-f]{16}",
            "--change rewind-[made-up]",
        ),
    ];
    filters.extend(temps.iter().map(|t| (t.as_str(), "[tmp]")));
    filters
}

fn every_row_in(spelling: Spelling) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hook");
    let (rows, temps) = decide_each(&json_files(&dir), |_, path| {
        let fixture = std::fs::read(path).expect("fixture");
        (spelling.host().to_owned(), respell(spelling, &fixture))
    });
    insta::with_settings!({ filters => filters(&temps), snapshot_suffix => spelling.host() }, {
        insta::assert_json_snapshot!(Value::Object(rows));
    });
}

/// A payload recorded from a real host (`tests/fixtures/hosts/`), its placeholders filled in
/// with values of the recorded shapes.
fn unscrub(recorded: &str) -> Vec<u8> {
    recorded
        .replace("<session-id>", "019a2311-1089-7342-b8fd-76844a6affc8")
        .replace("<turn-id>", "019a2311-10a2-7cd0-9a55-0c7d2b3e9f41")
        .replace("<timestamp>", "2026-12-01T04:18:12.553Z")
        .replace("<transcript>", "/home/dev/.agent/sessions/s.jsonl")
        .replace("<tmp>", "/home/dev")
        .replace("<e2e>", "/home/dev/rewind/tests/e2e")
        .into_bytes()
}

/// Each payload a real host sent (MCP and shell calls, as the end-to-end tests record them),
/// fed to `rewind hook --host <host>` against the simulator: what the host gets back.
#[test]
fn every_recorded_host_payload_gets_its_hosts_decision() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    let fixtures = json_files(&dir);
    assert!(fixtures.len() >= 6, "{fixtures:?}");
    let (rows, temps) = decide_each(&fixtures, |name, path| {
        let host = name.split('-').next().expect("<host>-<version>-<call>");
        let recorded = std::fs::read_to_string(path).expect("a recording");
        (host.to_owned(), unscrub(&recorded))
    });
    insta::with_settings!({ filters => filters(&temps) }, {
        insta::assert_json_snapshot!(Value::Object(rows));
    });
}

#[test]
fn every_decision_table_row_for_codex() {
    every_row_in(Spelling::Codex);
}

#[test]
fn every_decision_table_row_for_gemini() {
    every_row_in(Spelling::Gemini);
}

#[test]
fn every_decision_table_row_for_copilot() {
    every_row_in(Spelling::Copilot);
}

#[test]
fn every_decision_table_row_for_cursor() {
    every_row_in(Spelling::Cursor);
}

/// Every hook entry of a shipped snippet: `(event, handler)`, whether the host nests handlers
/// in matcher groups (Codex, Gemini) or lists them flat (Copilot, Cursor).
fn snippet_handlers(snippet: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (event, entries) in snippet["hooks"].as_object().expect("a hooks object") {
        for entry in entries.as_array().expect("a list per event") {
            match entry["hooks"].as_array() {
                Some(handlers) => out.extend(handlers.iter().map(|h| (event.clone(), h.clone()))),
                None => out.push((event.clone(), entry.clone())),
            }
        }
    }
    out
}

/// A shipped snippet: file, host, events before the call, events after it, timeout key,
/// timeout unit per second.
type Snippet<'a> = (&'a str, &'a str, &'a [&'a str], &'a [&'a str], &'a str, u64);

#[test]
fn the_shipped_snippets_run_rewind_hook_for_their_host_with_the_budget_plus_margin() {
    let budget_plus_margin =
        rewind::commands::install::host_timeout(&rewind::config::Config::defaults());
    let cases: [Snippet; 4] = [
        (
            "codex.hooks.json",
            "codex",
            &["PreToolUse"],
            &["PostToolUse"],
            "timeout",
            1,
        ),
        (
            "gemini.settings.json",
            "gemini",
            &["BeforeTool"],
            &["AfterTool"],
            "timeout",
            1000,
        ),
        (
            "copilot.hooks.json",
            "copilot",
            &["preToolUse"],
            &["postToolUse"],
            "timeoutSec",
            1,
        ),
        (
            "cursor.hooks.json",
            "cursor",
            &["beforeShellExecution", "beforeMCPExecution"],
            &["afterShellExecution", "afterMCPExecution"],
            "timeout",
            1,
        ),
    ];
    // Cursor's file tools reach preToolUse only for the self-protection check: no
    // after-the-call entry.
    let cases = cases.map(|(file, host, before, after, key, unit)| {
        let before: &[&str] = if host == "cursor" {
            &["beforeShellExecution", "beforeMCPExecution", "preToolUse"]
        } else {
            before
        };
        (file, host, before, after, key, unit)
    });
    for (file, host, before, after, timeout_key, unit) in cases {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("hooks")
            .join(file);
        let snippet: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect(file))
            .unwrap_or_else(|e| panic!("{file} is not JSON: {e}"));
        let handlers = snippet_handlers(&snippet);
        let events: Vec<&str> = handlers.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(events, [before, after].concat(), "{file}");
        for (event, handler) in &handlers {
            // Exec form where the host has one (Copilot), else one command line.
            let line = match handler["exec"].as_str() {
                Some(exec) => {
                    let args: Vec<&str> = handler["args"]
                        .as_array()
                        .expect("args")
                        .iter()
                        .map(|a| a.as_str().expect("string args"))
                        .collect();
                    format!("{exec} {}", args.join(" "))
                }
                None => handler["command"].as_str().expect("a command").to_owned(),
            };
            assert_eq!(
                line,
                format!("/usr/local/bin/rewind-hook hook --host {host}"),
                "{file} {event}"
            );
            let timeout = handler[timeout_key].as_u64().expect("a timeout");
            if before.contains(&event.as_str()) {
                assert_eq!(timeout, budget_plus_margin * unit, "{file} {event}");
            } else {
                assert_eq!(timeout, 10 * unit, "{file} {event}");
            }
        }
    }
    let cursor: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/cursor.hooks.json"),
        )
        .expect("cursor snippet"),
    )
    .expect("JSON");
    for event in ["beforeShellExecution", "beforeMCPExecution", "preToolUse"] {
        assert_eq!(cursor["hooks"][event][0]["failClosed"], true, "{event}");
    }
}

/// The matcher of every before-the-call group in a shipped snippet (Codex, Gemini).
fn before_matchers(file: &str, event: &str) -> Vec<regex::Regex> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("hooks")
        .join(file);
    let snippet: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect(file)).expect("JSON");
    snippet["hooks"][event]
        .as_array()
        .expect("groups")
        .iter()
        .map(|group| {
            regex::Regex::new(group["matcher"].as_str().expect("a matcher")).expect("a regex")
        })
        .collect()
}

#[test]
fn the_shipped_matchers_route_each_hosts_shell_mcp_and_file_tools_and_nothing_else() {
    // Both hosts test a matcher as a regular expression against the tool name they put in the
    // hook's payload (the names recorded in tests/fixtures/hosts/). The file tools reach the
    // hook for the self-protection check only.
    let cases: [(&str, &str, &[&str], &[&str]); 2] = [
        (
            "codex.hooks.json",
            "PreToolUse",
            &[
                "Bash",
                "mcp__ssh__exec",
                "mcp__desktop-commander__start_process",
                "apply_patch",
            ],
            &["Edit", "Write", "xBash", "Bashful", "web_search"],
        ),
        (
            "gemini.settings.json",
            "BeforeTool",
            &[
                "run_shell_command",
                "mcp_ssh_exec",
                "mcp_desktop-commander_start_process",
                "read_file",
                "write_file",
                "replace",
            ],
            &["glob", "web_fetch", "run_shell_command_x", "xmcp_a_b"],
        ),
    ];
    for (file, event, routed, skipped) in cases {
        let matchers = before_matchers(file, event);
        for tool in routed {
            assert!(
                matchers.iter().any(|m| m.is_match(tool)),
                "{file} must route {tool}"
            );
        }
        for tool in skipped {
            assert!(
                !matchers.iter().any(|m| m.is_match(tool)),
                "{file} must not route {tool}"
            );
        }
    }
    // Copilot CLI matches the whole tool name: its shell tools, its file tools and every MCP
    // tool (`<server>-<tool>`), none of its other local tools.
    let copilot: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/copilot.hooks.json"),
        )
        .expect("copilot snippet"),
    )
    .expect("JSON");
    let matcher = copilot["hooks"]["preToolUse"][0]["matcher"]
        .as_str()
        .expect("a matcher");
    let whole = regex::Regex::new(&format!("^(?:{matcher})$")).expect("a regex");
    for tool in [
        "bash",
        "powershell",
        "ssh-exec",
        "desktop-commander-start_process",
        "view",
        "edit",
        "create",
    ] {
        assert!(whole.is_match(tool), "copilot must route {tool}");
    }
    for tool in ["glob", "report_intent", "read_bash", "bashful"] {
        assert!(!whole.is_match(tool), "copilot must not route {tool}");
    }
}

/// Cursor and Copilot CLI also run the hooks in Claude Code's settings files, with their own
/// payloads, so an entry installed with `--host claude-code` answers them as their own entry
/// would: a Cursor shell call to an unknown VM is Cursor's deny (Cursor does not enforce an
/// ask), never Claude Code's ask.
#[test]
fn a_claude_code_entry_run_by_cursor_or_copilot_answers_as_the_senders_own_entry() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    let cursor_shell = json!({
        "conversation_id": "c0501000-0000-4000-8000-000000000001",
        "generation_id": "9e0e0000-0000-4000-8000-000000000001",
        "cursor_version": "1.7.2",
        "workspace_roots": ["/home/dev/ops"],
        "hook_event_name": "preToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": "ssh nosuch-vm sudo reboot", "working_directory": "/home/dev/ops"},
        "tool_use_id": "tu1",
    });
    let mut cases = vec![("cursor", cursor_shell.to_string().into_bytes())];
    for call in ["mcp", "mcp-pascal", "shell", "shell-pascal"] {
        let recorded = std::fs::read_to_string(dir.join(format!("copilot-1.0.102-{call}.json")))
            .expect("a recorded Copilot payload");
        cases.push(("copilot", unscrub(&recorded)));
    }
    let made_up = regex::Regex::new(r"rewind-\d{8}T\d{6}Z-[0-9a-f]{16}").expect("a regex");
    for (sender, stdin) in cases {
        let answers: Vec<String> = [sender, "claude-code"]
            .map(|host| {
                // A fresh simulator each: the second checkpoint would have another id.
                let env = scene_env(&dir.join("copilot-1.0.102-shell.json"));
                let run = env.run(&["hook", "--host", host], &stdin);
                made_up
                    .replace_all(&outcome(&run).to_string(), "rewind-[made-up]")
                    .into_owned()
            })
            .into();
        assert_eq!(
            answers[0],
            answers[1],
            "{sender}: {}",
            String::from_utf8_lossy(&stdin)
        );
        if sender == "cursor" {
            let answer: Value = serde_json::from_str(&answers[1]).expect("JSON");
            assert_eq!(answer["stdout"]["permission"], "deny", "{answer}");
        }
    }
}

/// A payload that names two events (which no host writes), the after-the-call one before
/// `tool_input` and the before-the-call one after it, or the other way round: a deny in every
/// dialect, whichever order, never a call read as already run (which passes), and no
/// checkpoint.
#[test]
fn two_event_names_in_one_payload_are_a_deny_whatever_their_order() {
    let env = crate::support::TestEnv::start();
    let input = r#"{"host":"jp-ubuntu","command":"reboot"}"#;
    // (host, its own before and after names, the rest of its payload)
    let hosts = [
        (
            "claude-code",
            "PreToolUse",
            "PostToolUse",
            r#""session_id":"s","permission_mode":"default","tool_name":"mcp__ssh__exec","tool_use_id":"toolu_2e""#,
        ),
        (
            "codex",
            "PreToolUse",
            "PostToolUse",
            r#""session_id":"s","turn_id":"t","tool_name":"mcp__ssh__exec","tool_use_id":"call_2e""#,
        ),
        (
            "gemini",
            "BeforeTool",
            "AfterTool",
            r#""session_id":"s","transcript_path":"/t","timestamp":"2026","tool_name":"mcp_ssh_exec""#,
        ),
        (
            "copilot",
            "PreToolUse",
            "PostToolUse",
            r#""session_id":"s","timestamp":"2026","tool_name":"ssh-exec""#,
        ),
        (
            "cursor",
            "preToolUse",
            "postToolUse",
            r#""conversation_id":"c","generation_id":"g","cursor_version":"1.7.2","tool_name":"MCP:exec","tool_use_id":"tu2e""#,
        ),
    ];
    for (host, before, after, rest) in hosts {
        for (first, second) in [(after, before), (before, after)] {
            let stdin = format!(
                r#"{{{rest},"hook_event_name":"{first}","tool_input":{input},"hook_event_name":"{second}"}}"#
            );
            let run = env.run(&["hook", "--host", host], stdin.as_bytes());
            let answer = run.stdout.trim();
            assert!(
                answer.contains("\"deny\"") && answer.contains("two event names"),
                "{host} {first}/{second}: {run:?}"
            );
            assert!(env.sim.inserts().is_empty(), "{host}: no checkpoint");
        }
    }
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    assert!(!audit.contains("\"ran\""), "{audit}");
}

/// Copilot joins server and tool as `<server>-<tool>`, and both may hold `-`: the name splits
/// at the longest server Copilot is configured with (its user file or the call's directory),
/// so `ssh-ops-exec` is server `ssh-ops`'s `exec` (checkpointed), and `rewind-lab-exec` is
/// not the read-only `rewind` server's `lab-exec`. A name no configured server settles asks.
/// Both payload shapes Copilot sends carry it.
#[test]
fn a_copilot_tool_name_splits_at_the_server_copilot_is_configured_with() {
    let env = crate::support::TestEnv::start();
    let work = env.path("work");
    std::fs::create_dir_all(env.path("home/.copilot")).expect("mkdir");
    std::fs::create_dir_all(&work).expect("mkdir");
    let input = json!({"host": "jp-ubuntu", "command": "sudo reboot"});
    let payloads = |tool: &str| {
        [
            json!({"sessionId": "s-1", "timestamp": 1, "cwd": work, "toolName": tool, "toolArgs": input}),
            json!({"hook_event_name": "PreToolUse", "session_id": "s-1", "timestamp": "2026-12-01T04:18:51.023Z",
                   "cwd": work, "tool_name": tool, "tool_input": input}),
        ]
    };
    let decide = |stdin: &Value| {
        let run = env.run(&["hook", "--host", "copilot"], stdin.to_string().as_bytes());
        assert_eq!(run.code, 0, "{run:?}");
        serde_json::from_str::<Value>(&run.stdout).expect("JSON")
    };

    // Nothing configured: `ssh-ops-exec` and `rewind-lab-exec` can each be read two ways.
    for tool in ["ssh-ops-exec", "rewind-lab-exec"] {
        for payload in payloads(tool) {
            let answer = decide(&payload);
            assert_eq!(answer["permissionDecision"], "ask", "{tool}: {answer}");
            let reason = answer["permissionDecisionReason"].as_str().expect("reason");
            assert!(reason.contains("could be server"), "{tool}: {reason}");
        }
    }
    assert!(env.sim.inserts().is_empty());

    // Configured: the user's file names `ssh-ops`, the call's directory `rewind-lab`.
    std::fs::write(
        env.path("home/.copilot/mcp-config.json"),
        json!({"mcpServers": {"ssh-ops": {"command": "npx", "args": ["ssh-mcp"]}}}).to_string(),
    )
    .expect("write");
    std::fs::write(
        work.join(".mcp.json"),
        json!({"mcpServers": {"rewind-lab": {"command": "rewind", "args": ["mcp"]}}}).to_string(),
    )
    .expect("write");
    for payload in payloads("ssh-ops-exec") {
        let answer = decide(&payload);
        let context = answer["additionalContext"].as_str().unwrap_or_default();
        assert!(context.contains("tagged checkpoint"), "{answer}");
    }
    assert_eq!(env.sim.inserts().len(), 2, "one checkpoint per call");
    for payload in payloads("rewind-lab-exec") {
        let answer = decide(&payload);
        assert_eq!(answer["permissionDecision"], "ask", "{answer}");
        let reason = answer["permissionDecisionReason"].as_str().expect("reason");
        assert!(
            reason.contains("mcp__rewind-lab__exec is in no catalog"),
            "{reason}"
        );
    }
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    assert!(audit.contains(r#""tool":"mcp__ssh-ops__exec""#), "{audit}");
    assert!(
        !audit.contains(r#""tool":"mcp__rewind__lab-exec""#),
        "{audit}"
    );
}

/// Cursor names an MCP call's server only by its `command` or `url`: the server is looked up
/// in Cursor's own `mcp.json` (the user's, and the workspace's under `workspace_roots`), so a
/// catalogued server is checkpointed instead of refused. A command no file configures stays
/// unnamed: refused, as Cursor cannot ask.
#[test]
fn a_cursor_mcp_call_is_named_from_cursors_own_mcp_json() {
    let env = crate::support::TestEnv::start();
    let root = env.path("work");
    std::fs::create_dir_all(env.path("home/.cursor")).expect("mkdir");
    std::fs::create_dir_all(root.join(".cursor")).expect("mkdir");
    std::fs::write(
        env.path("home/.cursor/mcp.json"),
        json!({"mcpServers": {"ssh": {"command": "npx", "args": ["-y", "ssh-mcp"]}}}).to_string(),
    )
    .expect("write");
    std::fs::write(
        root.join(".cursor/mcp.json"),
        json!({"mcpServers": {"ssh-bridge": {"url": "http://127.0.0.1:9/mcp"}}}).to_string(),
    )
    .expect("write");
    let call = |server: (&str, &str), tool: &str, input: Value| {
        let mut payload = json!({
            "conversation_id": "c0501000-0000-4000-8000-000000000002",
            "generation_id": "9e0e0000-0000-4000-8000-000000000002",
            "cursor_version": "1.7.2",
            "workspace_roots": [root],
            "hook_event_name": "beforeMCPExecution",
            "tool_name": tool,
            "tool_input": input.to_string(),
        });
        payload[server.0] = json!(server.1);
        let run = env.run(
            &["hook", "--host", "cursor"],
            payload.to_string().as_bytes(),
        );
        assert_eq!(run.code, 0, "{run:?}");
        serde_json::from_str::<Value>(&run.stdout).expect("JSON")
    };
    let reboot = json!({"host": "jp-ubuntu", "command": "sudo reboot"});
    let answer = call(("command", "npx -y ssh-mcp"), "exec", reboot.clone());
    assert!(
        answer["agent_message"]
            .as_str()
            .is_some_and(|m| m.contains("tagged checkpoint")),
        "{answer}"
    );
    assert_ne!(answer["permission"], "deny", "{answer}");
    let answer = call(
        ("url", "http://127.0.0.1:9/mcp"),
        "ssh_exec",
        reboot.clone(),
    );
    assert!(
        answer["agent_message"]
            .as_str()
            .is_some_and(|m| m.contains("tagged checkpoint")),
        "{answer}"
    );
    assert_eq!(env.sim.inserts().len(), 2);
    // A command no mcp.json configures: unnamed, refused.
    let answer = call(("command", "npx other-mcp"), "exec", reboot);
    assert_eq!(answer["permission"], "deny", "{answer}");
    assert_eq!(env.sim.inserts().len(), 2);
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    assert!(audit.contains(r#""tool":"mcp__ssh__exec""#), "{audit}");
    assert!(
        audit.contains(r#""tool":"mcp__ssh-bridge__ssh_exec""#),
        "{audit}"
    );
    assert!(audit.contains(r#""tool":"mcp__unnamed__exec""#), "{audit}");
}

/// A call with a password in it, through every host dialect: the answer (reason, context,
/// stderr) and the audit trail (arguments, reason, the VMs named) carry no secret, whether the
/// call quotes a command, names a VM with credentials in it, or both.
#[test]
fn no_secret_reaches_an_answer_or_the_audit_trail_in_any_dialect() {
    const SECRET: &str = "S3CR3T";
    let env = crate::support::TestEnv::start();
    let commands = [
        r#"ssh $H "mysql -uroot -pS3CR3T -e 'drop database app'""#,
        "ansible-playbook -e 'ansible_password=S3CR3T' site.yml",
        r#"pdsh -w web[01-03] "mysql -pS3CR3T -e 'drop database app'""#,
        "ssh admin:S3CR3T@unknownvm sudo reboot",
        "SSHPASS=S3CR3T sshpass -e ssh $H reboot",
        "ipmitool -H $BMC -U admin -P S3CR3T power reset",
        "pwsh -c 'Invoke-Command -ComputerName $H { net user admin S3CR3T }'",
        "ssh $H \"echo S3CR3T | sudo -S reboot\"",
    ];
    let hosts = [
        ("jp-ubuntu", "the VM, named with credentials"),
        ("admin:S3CR3T@unknownvm", "an unknown VM, with credentials"),
        ("ssh://admin:S3CR3T@jp-ubuntu:22/", "a URL with credentials"),
        ("https://admin:S3CR3T@jp-ubuntu/", "a URL with credentials"),
    ];
    let shell = |host: &str, command: &str| -> Value {
        match host {
            "claude-code" => {
                json!({"session_id": "s", "permission_mode": "default", "hook_event_name": "PreToolUse",
                                    "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_s"})
            }
            "codex" => json!({"session_id": "s", "turn_id": "t", "hook_event_name": "PreToolUse",
                              "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_s"}),
            "gemini" => {
                json!({"session_id": "s", "transcript_path": "/t", "timestamp": "2026", "hook_event_name": "BeforeTool",
                               "tool_name": "run_shell_command", "tool_input": {"command": command}})
            }
            "copilot" => {
                json!({"sessionId": "s", "timestamp": 1, "toolName": "bash", "toolArgs": {"command": command}})
            }
            _ => json!({"conversation_id": "c", "generation_id": "g", "cursor_version": "1.7.2",
                        "hook_event_name": "beforeShellExecution", "command": command}),
        }
    };
    let mcp = |host: &str, input: &Value| -> Value {
        match host {
            "claude-code" => {
                json!({"session_id": "s", "permission_mode": "default", "hook_event_name": "PreToolUse",
                                    "tool_name": "mcp__ssh__exec", "tool_input": input, "tool_use_id": "toolu_m"})
            }
            "codex" => json!({"session_id": "s", "turn_id": "t", "hook_event_name": "PreToolUse",
                              "tool_name": "mcp__ssh__exec", "tool_input": input, "tool_use_id": "call_m"}),
            "gemini" => {
                json!({"session_id": "s", "transcript_path": "/t", "timestamp": "2026", "hook_event_name": "BeforeTool",
                               "tool_name": "mcp_ssh_exec", "tool_input": input})
            }
            "copilot" => {
                json!({"sessionId": "s", "timestamp": 1, "toolName": "ssh-exec", "toolArgs": input})
            }
            _ => json!({"conversation_id": "c", "generation_id": "g", "cursor_version": "1.7.2",
                        "hook_event_name": "preToolUse", "tool_name": "MCP:exec", "tool_input": input, "tool_use_id": "tu"}),
        }
    };
    let mut asked = 0;
    for host in ["claude-code", "codex", "gemini", "copilot", "cursor"] {
        let mut payloads: Vec<Value> = commands.iter().map(|c| shell(host, c)).collect();
        for (vm, _) in hosts {
            payloads.push(mcp(
                host,
                &json!({"host": vm, "command": "mysql -pS3CR3T -e 'drop database app'"}),
            ));
        }
        for payload in payloads {
            let run = env.run(&["hook", "--host", host], payload.to_string().as_bytes());
            assert!(
                !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
                "{host}: {payload}\n{run:?}"
            );
            assert!(matches!(run.code, 0 | 2), "{run:?}");
            asked += usize::from(run.stdout.contains("\"ask\"") || run.stdout.contains("\"deny\""));
        }
    }
    assert!(asked > 20, "most of these calls are questions: {asked}");
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audited");
    assert!(!audit.contains(SECRET), "{audit}");
    // The VM a call named with credentials is still said, without them.
    assert!(audit.contains("unknownvm"), "{audit}");
}
