//! Drives the real Claude Code CLI (pinned in `tests/e2e/package.json`) against a scripted fake of
//! the Anthropic Messages API on loopback and a stub MCP server, so a test can see what the host
//! really does with a pre-tool-use hook's answer. No network is used.
//!
//! ```ignore
//! let cc = ClaudeCode::new();
//! let hook = cc.write_executable("hook.sh", "#!/bin/sh\ncat >/dev/null\n");
//! let run = cc
//!     .script([tool_use("toolu_e2e_01", "mcp__ssh__exec", json!({"host": "h", "command": "ls"})), text("Done.")])
//!     .hook(Hook::exec(hook).timeout_secs(5))
//!     .permission_mode(PermissionMode::Default)
//!     .allowed_tools(["mcp__ssh__exec"])
//!     .run();
//! assert_eq!(run.mcp_tools_called(), ["ssh.exec"]);
//! ```
//!
//! Set up once: `npm ci --prefix tests/e2e`. Without it every test using this module fails.

#![allow(
    dead_code,
    reason = "shared by several test modules; not every helper is used by every one"
)]

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tempfile::TempDir;

/// The Claude Code version the host behaviour in these tests was measured on.
pub(crate) const CLAUDE_CODE_VERSION: &str = "2.1.332";

const INSTALL_HINT: &str = "install it with `npm ci --prefix tests/e2e --no-audit --no-fund` \
     from the repository root (needs Node.js and npm)";

/// `tests/e2e` in this repository: the pinned Claude Code, the fake API and the MCP stub.
pub(crate) fn e2e_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e")
}

/// Where `npm ci --prefix tests/e2e` puts the `claude` launcher, or why it cannot be used.
pub(crate) fn locate_claude(e2e: &Path) -> Result<PathBuf, String> {
    let bin = e2e.join("node_modules/.bin/claude");
    if !bin.exists() {
        return Err(format!(
            "Claude Code is not installed for the end-to-end tests ({} is missing): {INSTALL_HINT}",
            bin.display()
        ));
    }
    let out = Command::new(&bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run {}: {err}; {INSTALL_HINT}", bin.display()))?;
    let version = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        // The package ships a placeholder that its postinstall replaces with the native binary;
        // an npm that skipped install scripts leaves the placeholder in place.
        return Err(format!(
            "{} --version failed ({}): {}{}\nIf install scripts were skipped, run \
             `node tests/e2e/node_modules/@anthropic-ai/claude-code/install.cjs`, or {INSTALL_HINT}",
            bin.display(),
            out.status,
            version,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if !version.starts_with(CLAUDE_CODE_VERSION) {
        return Err(format!(
            "{} is version {}, the tests are measured on {CLAUDE_CODE_VERSION}: {INSTALL_HINT}",
            bin.display(),
            version.trim()
        ));
    }
    Ok(bin)
}

/// The checked `claude` launcher; panics with the install instructions when it is unusable.
fn claude_bin() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(|| locate_claude(&e2e_dir())) {
        Ok(bin) => bin,
        Err(why) => panic!("{why}"),
    }
}

/// A scripted model turn that calls one tool.
pub(crate) fn tool_use(id: &str, name: &str, input: Value) -> Value {
    let mut turn = json!({"type": "tool_use", "id": id, "name": name});
    turn["input"] = input;
    turn
}

/// A scripted model turn that answers with text and ends the agent loop.
pub(crate) fn text(answer: &str) -> Value {
    json!({"type": "text", "text": answer})
}

/// A scripted model turn made of several blocks at once, e.g. two [`tool_use`] calls.
pub(crate) fn blocks(turns: impl IntoIterator<Item = Value>) -> Value {
    json!({"type": "multi", "blocks": turns.into_iter().collect::<Vec<_>>()})
}

/// The `--permission-mode` Claude Code runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PermissionMode {
    Default,
    AcceptEdits,
    DontAsk,
    Plan,
    /// Needs `IS_SANDBOX=1` when run as root; the builder sets it.
    BypassPermissions,
}

impl PermissionMode {
    fn as_arg(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::DontAsk => "dontAsk",
            Self::Plan => "plan",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

/// Which tools the MCP stub exposes (see `tests/e2e/mcp-stub.mjs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum McpFlavor {
    /// `exec {host, command}` and `read_file {host, path}`.
    Linux,
    /// `run_powershell {host, script}` and `read_file {host, path}`.
    Windows,
}

/// One PreToolUse hook entry, written in exec form (`command` + `args`, no shell).
#[derive(Debug, Clone)]
pub(crate) struct Hook {
    matcher: String,
    command: PathBuf,
    args: Vec<String>,
    timeout_secs: u64,
    on_failure: Option<String>,
}

impl Hook {
    /// Runs `command` (an absolute path) for every MCP tool call, with a 10 s timeout and
    /// `"onFailure": "block"`.
    pub(crate) fn exec(command: impl Into<PathBuf>) -> Self {
        Self {
            matcher: "mcp__.*".to_owned(),
            command: command.into(),
            args: Vec::new(),
            timeout_secs: 10,
            on_failure: Some("block".to_owned()),
        }
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    pub(crate) fn matcher(mut self, matcher: &str) -> Self {
        matcher.clone_into(&mut self.matcher);
        self
    }

    /// The host's `timeout` for this hook, in seconds.
    pub(crate) fn timeout_secs(mut self, secs: u64) -> Self {
        self.timeout_secs = secs;
        self
    }

    /// Leaves `onFailure` out: the host's default (fail open) applies.
    pub(crate) fn without_on_failure(mut self) -> Self {
        self.on_failure = None;
        self
    }

    fn to_settings(&self) -> Value {
        let mut handler = json!({
            "type": "command",
            "command": self.command,
            "args": self.args,
            "timeout": self.timeout_secs,
        });
        if let Some(on_failure) = &self.on_failure {
            handler["onFailure"] = json!(on_failure);
        }
        json!({"matcher": self.matcher, "hooks": [handler]})
    }
}

/// Builder for one `claude -p` run in a fresh temporary project.
///
/// Layout of [`ClaudeCode::root`]: `project/` (the working directory, with `.mcp.json` and
/// `.claude/settings.json`), `home/` (`HOME`, so no user settings leak in), `logs/` (fake API
/// and MCP stub logs). Stand-in hooks may be written anywhere under the root.
pub(crate) struct ClaudeCode {
    dir: TempDir,
    root: PathBuf,
    prompt: String,
    script: Vec<Value>,
    hooks: Vec<Hook>,
    mcp_servers: Vec<(String, McpFlavor)>,
    /// Other stdio MCP servers, as `.mcp.json` entries.
    stdio_servers: Vec<(String, Value)>,
    settings: serde_json::Map<String, Value>,
    env: Vec<(String, String)>,
    mode: PermissionMode,
    allowed_tools: Vec<String>,
    timeout: Duration,
    keep_settings: bool,
    extra_args: Vec<String>,
    /// Files laid over `/etc` for this run only (see [`ClaudeCode::etc_overlay`]).
    etc: Option<PathBuf>,
}

impl ClaudeCode {
    /// A project with the MCP stub as server `ssh`, no hook, default permission mode, and a
    /// 60 s limit on the whole run.
    pub(crate) fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("rewind-e2e-")
            .tempdir()
            .expect("create a temporary directory");
        // Claude Code reports canonical paths (cwd, transcript_path); match them.
        let root = dir
            .path()
            .canonicalize()
            .expect("canonicalize the temporary directory");
        for sub in ["project/.claude", "home", "logs"] {
            fs::create_dir_all(root.join(sub)).expect("create the temporary project layout");
        }
        Self {
            dir,
            root,
            prompt: "Do the task.".to_owned(),
            script: Vec::new(),
            hooks: Vec::new(),
            mcp_servers: vec![("ssh".to_owned(), McpFlavor::Linux)],
            stdio_servers: Vec::new(),
            settings: serde_json::Map::new(),
            env: Vec::new(),
            mode: PermissionMode::Default,
            allowed_tools: Vec::new(),
            timeout: Duration::from_secs(60),
            keep_settings: false,
            extra_args: Vec::new(),
            etc: None,
        }
    }

    /// Runs Claude Code (and so its hooks) in a private mount namespace where the files under
    /// `dir` are laid over `/etc` (an overlay whose writes land in a tmpfs): the way to give
    /// it administrator files such as `/etc/claude-code/managed-settings.json` without
    /// touching the real `/etc`. Needs root.
    pub(crate) fn etc_overlay(mut self, dir: &Path) -> Self {
        self.etc = Some(dir.to_path_buf());
        self
    }

    /// The temporary directory holding the project, `HOME` and the logs (canonical path).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Claude Code's working directory.
    pub(crate) fn project_dir(&self) -> PathBuf {
        self.root.join("project")
    }

    /// Writes an executable file under the root (e.g. a stand-in hook) and returns its path.
    pub(crate) fn write_executable(&self, name: &str, contents: &str) -> PathBuf {
        write_executable(&self.root, name, contents)
    }

    pub(crate) fn prompt(mut self, prompt: &str) -> Self {
        prompt.clone_into(&mut self.prompt);
        self
    }

    /// The model's turns, in order: [`tool_use`] and [`text`] values.
    pub(crate) fn script(mut self, turns: impl IntoIterator<Item = Value>) -> Self {
        self.script = turns.into_iter().collect();
        self
    }

    /// Adds a PreToolUse hook entry to the project's settings.
    pub(crate) fn hook(mut self, hook: Hook) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Adds another MCP stub server (the `ssh` one is always there).
    pub(crate) fn mcp_server(mut self, name: &str, flavor: McpFlavor) -> Self {
        self.mcp_servers.push((name.to_owned(), flavor));
        self
    }

    /// Adds a real stdio MCP server (e.g. `rewind mcp`) as `name` in `.mcp.json`.
    pub(crate) fn mcp_stdio(
        mut self,
        name: &str,
        command: &Path,
        args: &[&str],
        env: &[(String, String)],
    ) -> Self {
        let env: serde_json::Map<String, Value> = env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        self.stdio_servers.push((
            name.to_owned(),
            json!({"type": "stdio", "command": command, "args": args, "env": env}),
        ));
        self
    }

    /// The project's `.claude/settings.json`.
    pub(crate) fn settings_path(&self) -> PathBuf {
        self.project_dir().join(".claude/settings.json")
    }

    /// Runs with the `.claude/settings.json` the test wrote (e.g. with `rewind install`) as it
    /// is: [`Self::hook`] and [`Self::setting`] must not be used, and the file must enable the
    /// project's MCP servers itself (`"enableAllProjectMcpServers": true`).
    pub(crate) fn keep_settings_file(mut self) -> Self {
        self.keep_settings = true;
        self
    }

    /// Sets a top-level key of `.claude/settings.json` (e.g. `permissions`).
    pub(crate) fn setting(mut self, key: &str, value: Value) -> Self {
        self.settings.insert(key.to_owned(), value);
        self
    }

    /// An environment variable for Claude Code, inherited by the hooks it runs.
    pub(crate) fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.to_owned(), value.into()));
        self
    }

    pub(crate) fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// `--allowedTools`: tools that run without a prompt (in `-p` a prompt is a refusal).
    pub(crate) fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Another command-line argument for `claude -p` (e.g. `--plugin-dir=DIR`).
    pub(crate) fn arg(mut self, arg: impl Into<String>) -> Self {
        self.extra_args.push(arg.into());
        self
    }

    /// Hard limit for the whole `claude -p` run; past it the process group is killed.
    pub(crate) fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Writes the project files, starts the fake API, runs `claude -p` and collects the logs.
    /// Panics (failing the test) if Claude Code is missing, hangs, or prints no JSON result.
    pub(crate) fn run(self) -> ClaudeRun {
        let claude = claude_bin();
        let logs = self.root.join("logs");
        self.write_project(&logs);
        let script_path = self.root.join("script.json");
        write_json(&script_path, &Value::Array(self.script.clone()));
        let api = FakeServer::start("fake-anthropic.mjs", &script_path, &logs);

        let mut cmd = match &self.etc {
            None => Command::new(claude),
            Some(dir) => {
                // unshare -m: a mount namespace of its own; the overlay's upper layer is a
                // tmpfs, so nothing reaches the real /etc; then the files, then claude.
                let mut cmd = Command::new("unshare");
                cmd.args(["-m", "--", "sh", "-c"])
                    .arg(
                        "set -e; t=$(mktemp -d); mount -t tmpfs tmpfs \"$t\"; \
                         mkdir \"$t/up\" \"$t/work\"; \
                         mount -t overlay overlay -o lowerdir=/etc,upperdir=\"$t/up\",workdir=\"$t/work\" /etc; \
                         cp -a \"$0\"/. /etc/; exec \"$@\"",
                    )
                    .arg(dir)
                    .arg(claude);
                cmd
            }
        };
        cmd.current_dir(self.project_dir())
            .arg("-p")
            .arg(&self.prompt)
            .args([
                "--output-format",
                "json",
                "--permission-mode",
                self.mode.as_arg(),
            ])
            .args(&self.extra_args);
        if !self.allowed_tools.is_empty() {
            // `=` form, last: the option takes several values and must not swallow anything.
            cmd.arg(format!("--allowedTools={}", self.allowed_tools.join(",")));
        }
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", api.port),
            )
            .env("ANTHROPIC_API_KEY", "test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("NO_PROXY", "127.0.0.1,localhost");
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            cmd.env("TMPDIR", tmp);
        }
        if self.mode == PermissionMode::BypassPermissions {
            cmd.env("IS_SANDBOX", "1");
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));

        let started = Instant::now();
        let output = run_with_deadline(cmd, self.timeout);
        let elapsed = started.elapsed();
        drop(api);

        let result = serde_json::from_str(&output.stdout).unwrap_or(Value::Null);
        let run = ClaudeRun {
            status: output.status,
            stdout: output.stdout,
            stderr: output.stderr,
            result,
            requests: read_jsonl(&logs.join("requests.jsonl")),
            side_requests: read_jsonl(&logs.join("side-requests.jsonl")),
            other_routes: read_jsonl(&logs.join("other-routes.jsonl")),
            mcp_calls: read_jsonl(&logs.join("mcp-calls.jsonl")),
            elapsed,
            root: self.root,
            _dir: self.dir,
        };
        assert!(
            run.result.is_object(),
            "claude -p printed no JSON result\n{}",
            run.describe()
        );
        run
    }

    fn write_project(&self, logs: &Path) {
        let stub = e2e_dir().join("mcp-stub.mjs");
        let mut servers: serde_json::Map<String, Value> = self
            .mcp_servers
            .iter()
            .map(|(name, flavor)| {
                let flavor = match flavor {
                    McpFlavor::Linux => "linux",
                    McpFlavor::Windows => "windows",
                };
                let server = json!({
                    "type": "stdio",
                    "command": "node",
                    "args": [stub, "--name", name, "--flavor", flavor],
                    "env": {"MCP_STUB_LOG": logs.join("mcp-calls.jsonl")},
                });
                (name.clone(), server)
            })
            .collect();
        servers.extend(self.stdio_servers.iter().cloned());
        write_json(
            &self.project_dir().join(".mcp.json"),
            &json!({"mcpServers": servers}),
        );

        if self.keep_settings {
            assert!(
                self.hooks.is_empty() && self.settings.is_empty(),
                "keep_settings_file() runs the test's own settings file; do not add hooks or settings"
            );
            assert!(
                self.settings_path().is_file(),
                "keep_settings_file(): the test wrote no {}",
                self.settings_path().display()
            );
            return;
        }
        let mut settings = self.settings.clone();
        settings.insert("enableAllProjectMcpServers".to_owned(), json!(true));
        if !self.hooks.is_empty() {
            let entries: Vec<Value> = self.hooks.iter().map(Hook::to_settings).collect();
            settings.insert("hooks".to_owned(), json!({"PreToolUse": entries}));
        }
        write_json(&self.settings_path(), &Value::Object(settings));
    }
}

/// What one `claude -p` run did, from Claude Code's own result and the fakes' logs.
pub(crate) struct ClaudeRun {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The `--output-format json` result object.
    pub(crate) result: Value,
    /// Bodies of the agent loop's requests to the fake API (each consumed one scripted turn),
    /// with `seq`, `turn`, `path`, `headers`, `body` and `at_ms` (see [`logged_at`]).
    pub(crate) requests: Vec<Value>,
    /// Requests that offered no tools (titles, probes): answered, never scripted.
    pub(crate) side_requests: Vec<Value>,
    /// Any other route Claude Code called on the fake API.
    pub(crate) other_routes: Vec<Value>,
    /// Every `tools/call` the MCP stub received: `{server, tool, arguments, id, at_ms}`.
    pub(crate) mcp_calls: Vec<Value>,
    pub(crate) elapsed: Duration,
    root: PathBuf,
    _dir: TempDir,
}

/// A tool result as the model received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolResult {
    pub(crate) text: String,
    pub(crate) is_error: bool,
}

impl ClaudeRun {
    /// The temporary root the run used (paths in logs and hook input are under it).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// `permission_denials` from the JSON result.
    pub(crate) fn permission_denials(&self) -> &[Value] {
        self.result["permission_denials"]
            .as_array()
            .map_or(&[], Vec::as_slice)
    }

    /// The `tool_use_id`s Claude Code lists in `permission_denials`.
    pub(crate) fn denied_ids(&self) -> Vec<&str> {
        self.permission_denials()
            .iter()
            .map(|d| d["tool_use_id"].as_str().unwrap_or("<no tool_use_id>"))
            .collect()
    }

    /// The final text Claude Code reported (`result`).
    pub(crate) fn result_text(&self) -> &str {
        self.result["result"].as_str().unwrap_or_default()
    }

    /// The names (`server.tool`) of the MCP tools that really ran, in order.
    pub(crate) fn mcp_tools_called(&self) -> Vec<String> {
        self.mcp_calls
            .iter()
            .map(|c| format!("{}.{}", str_of(&c["server"]), str_of(&c["tool"])))
            .collect()
    }

    /// The messages of the last agent-loop request: the whole conversation the model saw.
    fn last_messages(&self) -> &[Value] {
        self.requests
            .last()
            .and_then(|r| r["body"]["messages"].as_array())
            .map_or(&[], Vec::as_slice)
    }

    /// The `tool_result` the model received for a tool call.
    pub(crate) fn tool_result(&self, tool_use_id: &str) -> Option<ToolResult> {
        self.last_messages()
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)
            .map(|b| ToolResult {
                text: content_text(&b["content"]),
                is_error: b["is_error"].as_bool().unwrap_or(false),
            })
    }

    /// Everything the model received after a tool call, up to its next turn: the tool result,
    /// the text blocks beside it, and the user or system messages that follow (where hook
    /// context lands), joined by newlines. Empty if the call never got a result.
    pub(crate) fn model_saw_after(&self, tool_use_id: &str) -> String {
        let messages = self.last_messages();
        let Some(start) = messages.iter().position(|m| {
            m["content"].as_array().is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)
            })
        }) else {
            return String::new();
        };
        messages[start..]
            .iter()
            .take_while(|m| m["role"] != "assistant")
            .map(|m| content_text(&m["content"]))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A summary for assertion messages: exit status, result, stderr, and the logs.
    pub(crate) fn describe(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "exit status: {}  elapsed: {:?}",
            self.status, self.elapsed
        );
        let _ = writeln!(out, "stdout: {}", self.stdout.trim());
        let _ = writeln!(out, "stderr: {}", self.stderr.trim());
        let _ = writeln!(out, "MCP calls: {:?}", self.mcp_calls);
        let _ = writeln!(out, "side requests: {}", self.side_requests.len());
        let _ = writeln!(out, "other routes: {:?}", self.other_routes);
        let _ = writeln!(
            out,
            "last messages to the model (long strings cut): {}",
            last_three(self.last_messages())
        );
        out
    }
}

/// The text of a message or tool_result `content`: a string or a list of blocks.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("tool_result") => content_text(&b["content"]),
                _ => str_of(&b["text"]).to_owned(),
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A copy of `value` with every string longer than `max` characters cut, for readable failures.
pub(crate) fn shorten_strings(value: &Value, max: usize) -> Value {
    match value {
        Value::String(s) if s.chars().count() > max => {
            Value::String(format!("{}…", s.chars().take(max).collect::<String>()))
        }
        Value::Array(items) => items.iter().map(|v| shorten_strings(v, max)).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), shorten_strings(v, max)))
            .collect(),
        other => other.clone(),
    }
}

/// Writes `root/name` with `contents`, executable, and returns its path.
pub(crate) fn write_executable(root: &Path, name: &str, contents: &str) -> PathBuf {
    let path = root.join(name);
    fs::write(&path, contents).expect("write an executable");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod +x");
    path
}

/// The last three of `items` as pretty JSON, long strings cut: the end of a conversation, for
/// assertion messages.
pub(crate) fn last_three(items: &[Value]) -> String {
    let tail: Vec<Value> = items
        .iter()
        .rev()
        .take(3)
        .rev()
        .map(|m| shorten_strings(m, 400))
        .collect();
    serde_json::to_string_pretty(&tail).unwrap_or_default()
}

/// The wall-clock time in a fake API or MCP stub log line (`at_ms`: whole milliseconds since
/// the Unix epoch, rounded down, as JavaScript's `Date.now()` gives it).
pub(crate) fn logged_at(line: &Value) -> SystemTime {
    let ms = line["at_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("log line without at_ms: {line}"));
    UNIX_EPOCH + Duration::from_millis(ms)
}

pub(crate) fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

pub(crate) fn write_json(path: &Path, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("serialize JSON");
    fs::write(path, text).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
}

/// Parses a JSONL log; a missing file is an empty log.
pub(crate) fn read_jsonl(path: &Path) -> Vec<Value> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|err| panic!("{}: bad JSONL line {l:?}: {err}", path.display()))
        })
        .collect()
}

/// A scripted fake model API from `tests/e2e/` (`fake-anthropic.mjs` for Claude Code,
/// `fake-model.mjs` for the other hosts) on a free port of 127.0.0.1, stopped on drop.
pub(crate) struct FakeServer {
    pub(crate) port: u16,
    child: Child,
    // Held open: the server exits when it closes, even if this process dies without dropping.
    _stdin: ChildStdin,
}

impl FakeServer {
    /// Starts `tests/e2e/<fake>` answering from `script`, logging into `log_dir`.
    pub(crate) fn start(fake: &str, script: &Path, log_dir: &Path) -> Self {
        let mut child = Command::new("node")
            .arg(e2e_dir().join(fake))
            .arg("--script")
            .arg(script)
            .arg("--log-dir")
            .arg(log_dir)
            .args(["--exit-on-stdin-eof", "true"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start node for {fake} ({err}): install Node.js"));
        let stdin = child.stdin.take().expect("piped stdin");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut first)
            .expect("read the fake API's port");
        let port = first.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("{fake} printed no port (got {first:?})")
        });
        Self {
            port,
            child,
            _stdin: stdin,
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) struct Output {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cmd` in its own process group with stdin closed; past `limit` the whole group (the
/// host, its hooks, its MCP servers) is killed and the test fails.
pub(crate) fn run_with_deadline(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {}: {err}", cmd.get_program().display()));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for claude") {
            break status;
        }
        if Instant::now() >= deadline {
            // Still running, so the group id is still ours.
            // The shell's own kill (no procps needed); dash wants `-KILL -PGID`, not `--`.
            let _ = Command::new("sh")
                .args(["-c", r#"kill -KILL -"$1""#, "sh"])
                .arg(child.id().to_string())
                .status();
            let _ = child.kill();
            let _ = child.wait();
            let out = stdout
                .recv_timeout(Duration::from_secs(2))
                .unwrap_or_default();
            let err = stderr
                .recv_timeout(Duration::from_secs(2))
                .unwrap_or_default();
            panic!(
                "{} ran past {limit:?} and was killed\nstdout: {out}\nstderr: {err}",
                cmd.get_program().display()
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    // A grandchild that kept a pipe open must not hang the test.
    let collect =
        |rx: mpsc::Receiver<String>| rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    Output {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

#[test]
fn a_missing_claude_fails_with_the_install_command() {
    let empty = tempfile::tempdir().expect("tempdir");
    let why = locate_claude(empty.path()).expect_err("nothing is installed there");
    assert!(why.contains("npm ci --prefix tests/e2e"), "{why}");
}

#[test]
fn fake_api_follows_its_script_and_answers_side_requests_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("script.json");
    write_json(
        &script,
        &json!([
            blocks([
                tool_use(
                    "toolu_e2e_01",
                    "mcp__ssh__exec",
                    json!({"host": "h", "command": "ls"})
                ),
                tool_use(
                    "toolu_e2e_02",
                    "mcp__ssh__read_file",
                    json!({"host": "h", "path": "/etc/hosts"})
                ),
            ]),
            text("Done."),
        ]),
    );
    let api = FakeServer::start("fake-anthropic.mjs", &script, dir.path());
    let url = format!("http://127.0.0.1:{}/v1/messages", api.port);
    // Loopback only: a proxy from the environment must not see this traffic.
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let post = |body: Value| -> Value {
        agent
            .post(&url)
            .send_json(body)
            .expect("POST /v1/messages")
            .body_mut()
            .read_json()
            .expect("a JSON message")
    };
    let side = post(
        json!({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "title?"}]}),
    );
    assert_eq!(side["content"][0]["type"], "text");
    let main = post(json!({
        "model": "m",
        "max_tokens": 100,
        "tools": [{"name": "mcp__ssh__exec", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "go"}],
    }));
    assert_eq!(main["stop_reason"], "tool_use");
    let ids: Vec<&Value> = main["content"]
        .as_array()
        .expect("content blocks")
        .iter()
        .map(|b| &b["id"])
        .collect();
    assert_eq!(ids, ["toolu_e2e_01", "toolu_e2e_02"]);
    assert_eq!(
        main["content"][0]["input"],
        json!({"host": "h", "command": "ls"})
    );
    let next =
        post(json!({"model": "m", "max_tokens": 100, "tools": [{"name": "x"}], "messages": []}));
    assert_eq!(next["stop_reason"], "end_turn");
    assert_eq!(next["content"][0]["text"], "Done.");
    drop(api);
    assert_eq!(read_jsonl(&dir.path().join("side-requests.jsonl")).len(), 1);
    assert_eq!(read_jsonl(&dir.path().join("requests.jsonl")).len(), 2);
}
