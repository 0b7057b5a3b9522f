//! Drives the real Codex CLI, Gemini CLI and GitHub Copilot CLI (pinned in
//! `tests/e2e/package.json`) against the scripted fake model API `tests/e2e/fake-model.mjs` on
//! loopback and the stub MCP server, so a test can see what each host really does with a
//! pre-tool-use hook's answer. No network and no login: each host is pointed at the fake with its
//! own documented base-URL setting and a made-up key.
//!
//! | host | model API | base URL from | non-interactive run | hooks file |
//! |---|---|---|---|---|
//! | Codex CLI | OpenAI Responses | a `[model_providers]` entry in `$CODEX_HOME/config.toml` | `codex exec` | `$CODEX_HOME/hooks.json` |
//! | Gemini CLI | Gemini API | `GOOGLE_GEMINI_BASE_URL` with `GEMINI_API_KEY` | `gemini -p` | `~/.gemini/settings.json` |
//! | Copilot CLI | OpenAI Chat Completions | `COPILOT_PROVIDER_BASE_URL` with `COPILOT_OFFLINE=true` | `copilot -p` | `~/.copilot/hooks/*.json` |
//!
//! ```ignore
//! let run = Agent::new(AgentKind::Gemini)
//!     .script([call("call_e2e_01", "mcp_ssh_exec", json!({"host": "h", "command": "ls"})), say("Done.")])
//!     .hook(StandIn::exec(path))
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
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::claude::{e2e_dir, read_jsonl, run_with_deadline, shorten_strings};

const INSTALL_HINT: &str = "install it with `npm ci --prefix tests/e2e --no-audit --no-fund` \
     from the repository root (needs Node.js and npm)";

/// One of the agent hosts this module drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentKind {
    Codex,
    Gemini,
    /// Copilot CLI with its hook registered under the camelCase `preToolUse` event (its own
    /// payload: `toolName`, `toolArgs`).
    Copilot,
    /// Copilot CLI with its hook registered under `PreToolUse` (the Claude-compatible payload:
    /// `tool_name`, `tool_input`).
    CopilotPascal,
}

impl AgentKind {
    /// The launcher in `tests/e2e/node_modules/.bin`.
    fn bin_name(self) -> &'static str {
        match self {
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Copilot | Self::CopilotPascal => "copilot",
        }
    }

    /// The version the behaviour in these tests was measured on, as `--version` prints it.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Self::Codex => "0.171.0",
            Self::Gemini => "0.61.0",
            Self::Copilot | Self::CopilotPascal => "1.0.102",
        }
    }

    /// The name the model uses for the stub's `exec` tool on server `ssh`, and the namespace the
    /// host offers it in (Codex groups an MCP server's tools in a namespace).
    pub(crate) fn mcp_exec_tool(self) -> (Option<&'static str>, &'static str) {
        match self {
            Self::Codex => (Some("mcp__ssh"), "exec"),
            Self::Gemini => (None, "mcp_ssh_exec"),
            Self::Copilot | Self::CopilotPascal => (None, "ssh-exec"),
        }
    }
}

/// The checked launcher for `kind`; panics with the install instructions when it is unusable.
fn agent_bin(kind: AgentKind) -> &'static Path {
    static BINS: OnceLock<[Result<PathBuf, String>; 3]> = OnceLock::new();
    let bins = BINS.get_or_init(|| {
        [AgentKind::Codex, AgentKind::Gemini, AgentKind::Copilot].map(|k| locate(&e2e_dir(), k))
    });
    let slot = match kind {
        AgentKind::Codex => &bins[0],
        AgentKind::Gemini => &bins[1],
        AgentKind::Copilot | AgentKind::CopilotPascal => &bins[2],
    };
    match slot {
        Ok(bin) => bin,
        Err(why) => panic!("{why}"),
    }
}

/// Where `npm ci --prefix tests/e2e` puts `kind`'s launcher, or why it cannot be used.
pub(crate) fn locate(e2e: &Path, kind: AgentKind) -> Result<PathBuf, String> {
    let bin = e2e.join("node_modules/.bin").join(kind.bin_name());
    if !bin.exists() {
        return Err(format!(
            "{} is not installed for the end-to-end tests ({} is missing): {INSTALL_HINT}",
            kind.bin_name(),
            bin.display()
        ));
    }
    let home = tempfile::tempdir().map_err(|e| format!("temporary HOME: {e}"))?;
    let out = Command::new(&bin)
        .arg("--version")
        .env("HOME", home.path())
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PKG_CACHE_HOME", copilot_cache())
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run {}: {err}; {INSTALL_HINT}", bin.display()))?;
    let version = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !version.contains(kind.version()) {
        return Err(format!(
            "{} --version printed {:?} ({}), the tests are measured on {}: {INSTALL_HINT}",
            bin.display(),
            version.trim(),
            out.status,
            kind.version()
        ));
    }
    Ok(bin)
}

/// Copilot CLI unpacks its JavaScript (about 240 MB) into a package cache on first start; one
/// shared cache under `node_modules` keeps every test from unpacking its own copy.
fn copilot_cache() -> PathBuf {
    e2e_dir().join("node_modules/.copilot-pkg-cache")
}

/// A scripted model turn that calls one tool, in the host's own tool naming.
pub(crate) fn call(id: &str, name: &str, arguments: Value) -> Value {
    let mut turn = json!({"type": "tool_call", "id": id, "name": name});
    turn["arguments"] = arguments;
    turn
}

/// A scripted model turn that calls the stub's `exec` tool on server `ssh` as `kind` names it.
pub(crate) fn mcp_exec(kind: AgentKind, id: &str, arguments: Value) -> Value {
    let (namespace, name) = kind.mcp_exec_tool();
    let mut turn = call(id, name, arguments);
    if let Some(namespace) = namespace {
        turn["namespace"] = json!(namespace);
    }
    turn
}

/// A scripted model turn that answers with text and ends the agent loop.
pub(crate) fn say(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// One pre-tool-use hook entry: a command with arguments and the host's timeout.
#[derive(Debug, Clone)]
pub(crate) struct StandIn {
    command: PathBuf,
    args: Vec<String>,
    timeout_secs: u64,
}

impl StandIn {
    /// Runs `command` (an absolute path) before every tool call, with a 20 s timeout.
    pub(crate) fn exec(command: impl Into<PathBuf>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            timeout_secs: 20,
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

    /// The host's timeout for this hook, in seconds (written in the host's own unit).
    pub(crate) fn timeout_secs(mut self, secs: u64) -> Self {
        self.timeout_secs = secs;
        self
    }

    /// The command line as one shell string, every word single-quoted.
    fn shell_line(&self) -> String {
        std::iter::once(self.command.to_string_lossy().into_owned())
            .chain(self.args.iter().cloned())
            .map(|word| format!("'{}'", word.replace('\'', r"'\''")))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Builder for one non-interactive run of an agent host in a fresh temporary project.
///
/// Layout of [`Agent::root`]: `project/` (the working directory), `home/` (`HOME`, and
/// `CODEX_HOME` under it), `logs/` (fake API and MCP stub logs).
pub(crate) struct Agent {
    kind: AgentKind,
    dir: TempDir,
    root: PathBuf,
    prompt: String,
    script: Vec<Value>,
    hook: Option<StandIn>,
    /// A whole hooks file in the host's own format (a shipped snippet), instead of `hook`.
    hooks_file: Option<Value>,
    env: Vec<(String, String)>,
    /// Whether the MCP server's tools run without asking (the user's own rules allow them).
    mcp_allowed: bool,
    /// Whether the host's shell tool runs commands outside its sandbox (Codex).
    full_shell_access: bool,
    timeout: Duration,
}

impl Agent {
    /// A project with the MCP stub as server `ssh` (its tools allowed), no hook, and a 90 s
    /// limit on the whole run.
    pub(crate) fn new(kind: AgentKind) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("rewind-agent-")
            .tempdir()
            .expect("create a temporary directory");
        let root = dir
            .path()
            .canonicalize()
            .expect("canonicalize the temporary directory");
        for sub in [
            "project",
            "home/.codex",
            "home/.gemini",
            "home/.copilot/hooks",
            "logs",
        ] {
            fs::create_dir_all(root.join(sub)).expect("create the temporary project layout");
        }
        Self {
            kind,
            dir,
            root,
            prompt: "Do the task.".to_owned(),
            script: Vec::new(),
            hook: None,
            hooks_file: None,
            env: Vec::new(),
            mcp_allowed: true,
            full_shell_access: false,
            timeout: Duration::from_secs(90),
        }
    }

    pub(crate) fn kind(&self) -> AgentKind {
        self.kind
    }

    /// The temporary directory holding the project, `HOME` and the logs (canonical path).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Writes an executable file under the root (e.g. a stand-in hook) and returns its path.
    pub(crate) fn write_executable(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.root.join(name);
        fs::write(&path, contents).expect("write an executable");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod +x");
        path
    }

    pub(crate) fn prompt(mut self, prompt: &str) -> Self {
        prompt.clone_into(&mut self.prompt);
        self
    }

    /// The model's turns, in order: [`call`], [`mcp_exec`] and [`say`] values.
    pub(crate) fn script(mut self, turns: impl IntoIterator<Item = Value>) -> Self {
        self.script = turns.into_iter().collect();
        self
    }

    /// The pre-tool-use hook, registered for every tool in the host's own hooks file.
    pub(crate) fn hook(mut self, hook: StandIn) -> Self {
        self.hook = Some(hook);
        self
    }

    /// Installs a whole hooks file in the host's own format: for Codex `$CODEX_HOME/hooks.json`,
    /// for Gemini its `hooks` key in `~/.gemini/settings.json`, for Copilot
    /// `~/.copilot/hooks/rewind.json`.
    pub(crate) fn hooks_file(mut self, file: Value) -> Self {
        self.hooks_file = Some(file);
        self
    }

    /// An environment variable for the host, inherited by the hooks it runs.
    pub(crate) fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.to_owned(), value.into()));
        self
    }

    /// Leaves the MCP server's tools needing approval: in a non-interactive run nobody can
    /// give it, so without a hook's `allow` they do not run.
    pub(crate) fn mcp_not_allowed(mut self) -> Self {
        self.mcp_allowed = false;
        self
    }

    /// Lets the host's shell tool run commands outside its sandbox, so a stand-in on `PATH` can
    /// write its log (Codex's `exec` sandbox is read-only by default; the others have none).
    pub(crate) fn full_shell_access(mut self) -> Self {
        self.full_shell_access = true;
        self
    }

    /// Writes the host's files, starts the fake API, runs the host and collects the logs.
    /// Panics (failing the test) if the host is missing or hangs.
    pub(crate) fn run(self) -> AgentRun {
        let bin = agent_bin(self.kind);
        let logs = self.root.join("logs");
        let script_path = self.root.join("script.json");
        write_json(&script_path, &Value::Array(self.script.clone()));
        let api = FakeModel::start(&script_path, &logs);
        let base = format!("http://127.0.0.1:{}", api.port);

        let mut cmd = Command::new(bin);
        cmd.current_dir(self.root.join("project"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("NO_COLOR", "1");
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            cmd.env("TMPDIR", tmp);
        }
        match self.kind {
            AgentKind::Codex => self.configure_codex(&mut cmd, &base, &logs),
            AgentKind::Gemini => self.configure_gemini(&mut cmd, &base, &logs),
            AgentKind::Copilot | AgentKind::CopilotPascal => {
                self.configure_copilot(&mut cmd, &base, &logs);
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));

        let started = Instant::now();
        let output = run_with_deadline(cmd, self.timeout);
        let elapsed = started.elapsed();
        drop(api);

        AgentRun {
            kind: self.kind,
            status: output.status,
            stdout: output.stdout,
            stderr: output.stderr,
            requests: read_jsonl(&logs.join("requests.jsonl")),
            mcp_calls: read_jsonl(&logs.join("mcp-calls.jsonl")),
            elapsed,
            root: self.root,
            _dir: self.dir,
        }
    }

    fn stub_args(logs: &Path) -> (Vec<String>, Value) {
        let stub = e2e_dir().join("mcp-stub.mjs");
        (
            vec![
                stub.to_string_lossy().into_owned(),
                "--name".to_owned(),
                "ssh".to_owned(),
            ],
            json!({"MCP_STUB_LOG": logs.join("mcp-calls.jsonl")}),
        )
    }

    /// `codex exec` with a custom model provider (Responses API) at the fake, the MCP stub in
    /// `config.toml`, and the hook in `$CODEX_HOME/hooks.json`.
    fn configure_codex(&self, cmd: &mut Command, base: &str, logs: &Path) {
        let codex_home = self.root.join("home/.codex");
        let (stub_args, stub_env) = Self::stub_args(logs);
        let config = json!({
            "model": "gpt-e2e",
            "model_provider": "e2e",
            "model_providers": {"e2e": {
                "name": "e2e fake",
                "base_url": format!("{base}/v1"),
                "env_key": "REWIND_E2E_MODEL_KEY",
                "wire_api": "responses",
                "request_max_retries": 0,
                "stream_max_retries": 0,
            }},
            "mcp_servers": {"ssh": {
                "command": "node",
                "args": stub_args,
                "env": stub_env,
                "default_tools_approval_mode": if self.mcp_allowed { "approve" } else { "prompt" },
            }},
        });
        let toml = toml::to_string(&config).expect("serialize config.toml");
        fs::write(codex_home.join("config.toml"), toml).expect("write config.toml");
        if let Some(file) = &self.hooks_file {
            write_json(&codex_home.join("hooks.json"), file);
        } else if let Some(hook) = &self.hook {
            write_json(
                &codex_home.join("hooks.json"),
                &json!({"hooks": {"PreToolUse": [{
                    "matcher": ".*",
                    "hooks": [{"type": "command", "command": hook.shell_line(), "timeout": hook.timeout_secs}],
                }]}}),
            );
        }
        cmd.env("CODEX_HOME", &codex_home)
            .env("REWIND_E2E_MODEL_KEY", "e2e-not-a-key")
            .args([
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-hook-trust",
                "--json",
            ]);
        if self.full_shell_access {
            cmd.args(["--sandbox", "danger-full-access"]);
        }
        cmd.arg(&self.prompt);
    }

    /// `gemini -p` with an API key and `GOOGLE_GEMINI_BASE_URL` at the fake, the MCP stub and
    /// the hook in `~/.gemini/settings.json`. An explicit model skips the model router.
    fn configure_gemini(&self, cmd: &mut Command, base: &str, logs: &Path) {
        let (stub_args, stub_env) = Self::stub_args(logs);
        let mut settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
            "mcpServers": {"ssh": {
                "command": "node",
                "args": stub_args,
                "env": stub_env,
                "trust": self.mcp_allowed,
            }},
        });
        if let Some(file) = &self.hooks_file {
            settings["hooks"] = file["hooks"].clone();
        } else if let Some(hook) = &self.hook {
            settings["hooks"] = json!({"BeforeTool": [{
                "matcher": ".*",
                "hooks": [{"type": "command", "command": hook.shell_line(), "timeout": hook.timeout_secs * 1000}],
            }]});
        }
        write_json(&self.root.join("home/.gemini/settings.json"), &settings);
        cmd.env("GEMINI_API_KEY", "e2e-not-a-key")
            .env("GOOGLE_GEMINI_BASE_URL", base)
            .args(["-p", &self.prompt])
            .args([
                "--output-format",
                "json",
                "-m",
                "gemini-2.5-flash",
                "--yolo",
            ]);
    }

    /// `copilot -p` offline with a custom OpenAI-compatible provider at the fake (Chat
    /// Completions), the MCP stub from `--additional-mcp-config`, and the hook in
    /// `~/.copilot/hooks/`.
    fn configure_copilot(&self, cmd: &mut Command, base: &str, logs: &Path) {
        let (stub_args, stub_env) = Self::stub_args(logs);
        let mcp = self.root.join("mcp-config.json");
        write_json(
            &mcp,
            &json!({"mcpServers": {"ssh": {
                "type": "local",
                "command": "node",
                "args": stub_args,
                "env": stub_env,
                "tools": ["*"],
            }}}),
        );
        if let Some(file) = &self.hooks_file {
            write_json(&self.root.join("home/.copilot/hooks/rewind.json"), file);
        } else if let Some(hook) = &self.hook {
            let event = if self.kind == AgentKind::CopilotPascal {
                "PreToolUse"
            } else {
                "preToolUse"
            };
            write_json(
                &self.root.join("home/.copilot/hooks/e2e.json"),
                &json!({"version": 1, "hooks": {event: [{
                    "type": "command",
                    "bash": hook.shell_line(),
                    "timeoutSec": hook.timeout_secs,
                }]}}),
            );
        }
        cmd.env("COPILOT_OFFLINE", "true")
            .env("COPILOT_PROVIDER_BASE_URL", format!("{base}/v1"))
            .env("COPILOT_PROVIDER_API_KEY", "e2e-not-a-key")
            .env("COPILOT_MODEL", "gpt-4.1")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("COPILOT_PKG_CACHE_HOME", copilot_cache())
            .args(["-p", &self.prompt, "--output-format", "json"])
            .arg(format!("--additional-mcp-config=@{}", mcp.display()));
        if self.mcp_allowed {
            cmd.arg("--allow-all-tools");
        } else {
            // Something must be allowed for a non-interactive run; not the MCP server.
            cmd.arg("--allow-tool=shell(echo)");
        }
    }
}

/// What one run did, from the fake API's and the MCP stub's logs.
pub(crate) struct AgentRun {
    pub(crate) kind: AgentKind,
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The agent loop's requests to the fake API (each consumed one scripted turn).
    pub(crate) requests: Vec<Value>,
    /// Every `tools/call` the MCP stub received: `{server, tool, arguments, id, at_ms}`.
    pub(crate) mcp_calls: Vec<Value>,
    pub(crate) elapsed: Duration,
    root: PathBuf,
    _dir: TempDir,
}

impl AgentRun {
    /// The temporary root the run used.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The names (`server.tool`) of the MCP tools that really ran, in order.
    pub(crate) fn mcp_tools_called(&self) -> Vec<String> {
        self.mcp_calls
            .iter()
            .map(|c| format!("{}.{}", str_of(&c["server"]), str_of(&c["tool"])))
            .collect()
    }

    /// The conversation of the last agent-loop request, in the host's wire shape.
    fn last_items(&self) -> &[Value] {
        let body = self.requests.last().map(|r| &r["body"]);
        let list = match self.kind {
            AgentKind::Codex => body.and_then(|b| b["input"].as_array()),
            AgentKind::Gemini => body.and_then(|b| b["contents"].as_array()),
            AgentKind::Copilot | AgentKind::CopilotPascal => {
                body.and_then(|b| b["messages"].as_array())
            }
        };
        list.map_or(&[], Vec::as_slice)
    }

    /// The result the model received for tool call `id`, as text.
    pub(crate) fn tool_result(&self, id: &str) -> Option<String> {
        self.last_items().iter().find_map(|item| match self.kind {
            AgentKind::Codex => (item["type"] == "function_call_output" && item["call_id"] == id)
                .then(|| text_of(&item["output"])),
            AgentKind::Gemini => item["parts"].as_array().and_then(|parts| {
                parts
                    .iter()
                    .filter_map(|p| p.get("functionResponse"))
                    .find(|r| r["id"] == id)
                    .map(|r| text_of(&r["response"]))
            }),
            AgentKind::Copilot | AgentKind::CopilotPascal => (item["role"] == "tool"
                && item["tool_call_id"] == id)
                .then(|| text_of(&item["content"])),
        })
    }

    /// Everything the model received after its call `id`, up to its next turn: the tool result
    /// and the messages beside it (where hook context lands), joined by newlines.
    pub(crate) fn model_saw_after(&self, id: &str) -> String {
        let items = self.last_items();
        let is_the_call = |item: &Value| match self.kind {
            AgentKind::Codex => item["type"] == "function_call" && item["call_id"] == id,
            AgentKind::Gemini => item["parts"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["functionCall"]["id"] == id)),
            AgentKind::Copilot | AgentKind::CopilotPascal => item["tool_calls"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["id"] == id)),
        };
        let Some(start) = items.iter().position(is_the_call) else {
            return String::new();
        };
        items[start + 1..]
            .iter()
            .map(text_of)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A summary for assertion messages: exit status, output, and the logs.
    pub(crate) fn describe(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:?} exit status: {}  elapsed: {:?}",
            self.kind, self.status, self.elapsed
        );
        let _ = writeln!(out, "stdout (tail): {}", tail(&self.stdout, 3000));
        let _ = writeln!(out, "stderr (tail): {}", tail(&self.stderr, 3000));
        let _ = writeln!(out, "MCP calls: {:?}", self.mcp_calls);
        let last: Vec<Value> = self
            .last_items()
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(|m| shorten_strings(m, 400))
            .collect();
        let _ = writeln!(
            out,
            "last items to the model (long strings cut): {}",
            serde_json::to_string_pretty(&last).unwrap_or_default()
        );
        out
    }
}

fn tail(text: &str, max: usize) -> &str {
    let trimmed = text.trim();
    let mut start = trimmed.len().saturating_sub(max);
    while !trimmed.is_char_boundary(start) {
        start += 1;
    }
    &trimmed[start..]
}

/// Every string inside `value`, depth first, joined by newlines.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(text_of)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "type" | "id" | "role" | "call_id" | "name"))
            .map(|(_, v)| text_of(v))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn write_json(path: &Path, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("serialize JSON");
    fs::write(path, text).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
}

/// The scripted fake model API (`tests/e2e/fake-model.mjs`), stopped on drop.
pub(crate) struct FakeModel {
    pub(crate) port: u16,
    child: std::process::Child,
    _stdin: std::process::ChildStdin,
}

impl FakeModel {
    pub(crate) fn start(script: &Path, log_dir: &Path) -> Self {
        use std::io::{BufRead as _, BufReader};
        let mut child = Command::new("node")
            .arg(e2e_dir().join("fake-model.mjs"))
            .arg("--script")
            .arg(script)
            .arg("--log-dir")
            .arg(log_dir)
            .args(["--exit-on-stdin-eof", "true"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| {
                panic!("cannot start node for the fake model API ({err}): install Node.js")
            });
        let stdin = child.stdin.take().expect("piped stdin");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut first)
            .expect("read the fake model API's port");
        let port = first.trim().parse().unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the fake model API printed no port (got {first:?})")
        });
        Self {
            port,
            child,
            _stdin: stdin,
        }
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_missing_agent_fails_with_the_install_command() {
    let empty = tempfile::tempdir().expect("tempdir");
    for kind in [AgentKind::Codex, AgentKind::Gemini, AgentKind::Copilot] {
        let why = locate(empty.path(), kind).expect_err("nothing is installed there");
        assert!(why.contains("npm ci --prefix tests/e2e"), "{why}");
    }
}

#[test]
fn fake_model_speaks_each_dialect_from_one_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("script.json");
    let args = json!({"host": "h", "command": "ls"});
    let mut namespaced = call("call_r", "exec", args.clone());
    namespaced["namespace"] = json!("mcp__ssh");
    write_json(
        &script,
        &json!([
            namespaced,
            call("call_c", "ssh-exec", args.clone()),
            call("call_g", "mcp_ssh_exec", args.clone()),
            say("Done."),
        ]),
    );
    let api = FakeModel::start(&script, dir.path());
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let url = |path: &str| format!("http://127.0.0.1:{}{path}", api.port);
    let post = |path: &str, body: Value| -> String {
        agent
            .post(&url(path))
            .send_json(body)
            .unwrap_or_else(|e| panic!("POST {path}: {e}"))
            .body_mut()
            .read_to_string()
            .expect("a body")
    };
    let tools = json!([{"type": "function", "name": "x"}]);

    // A side request (no tools) is answered and consumes nothing.
    let side = post("/v1/chat/completions", json!({"messages": []}));
    assert!(side.contains("e2e side answer"), "{side}");

    let responses = post(
        "/v1/responses",
        json!({"stream": true, "tools": tools, "input": []}),
    );
    let done: Vec<Value> = responses
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).expect("SSE data is JSON"))
        .filter(|e: &Value| e["type"] == "response.output_item.done")
        .collect();
    assert_eq!(done.len(), 1, "{responses}");
    assert_eq!(done[0]["item"]["type"], "function_call");
    assert_eq!(done[0]["item"]["namespace"], "mcp__ssh");
    assert_eq!(done[0]["item"]["name"], "exec");
    assert_eq!(done[0]["item"]["call_id"], "call_r");
    assert_eq!(
        serde_json::from_str::<Value>(done[0]["item"]["arguments"].as_str().expect("a string"))
            .expect("arguments are JSON"),
        args
    );
    assert!(responses.contains("response.completed"), "{responses}");

    let chat = post(
        "/v1/chat/completions",
        json!({"stream": false, "tools": tools, "messages": []}),
    );
    let chat: Value = serde_json::from_str(&chat).expect("a JSON completion");
    assert_eq!(chat["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        chat["choices"][0]["message"]["tool_calls"][0]["id"],
        "call_c"
    );
    assert_eq!(
        chat["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "ssh-exec"
    );

    let gemini = post(
        "/v1beta/models/gemini-e2e:generateContent",
        json!({"tools": [{"functionDeclarations": [{"name": "x"}]}], "contents": []}),
    );
    let gemini: Value = serde_json::from_str(&gemini).expect("a JSON response");
    let part = &gemini["candidates"][0]["content"]["parts"][0]["functionCall"];
    assert_eq!(part["name"], "mcp_ssh_exec");
    assert_eq!(part["id"], "call_g");
    assert_eq!(part["args"], args);

    let last = post(
        "/v1beta/models/gemini-e2e:streamGenerateContent",
        json!({"tools": [{"functionDeclarations": [{"name": "x"}]}], "contents": []}),
    );
    assert!(
        last.starts_with("data: ") && last.contains("Done."),
        "{last}"
    );
    drop(api);
    assert_eq!(read_jsonl(&dir.path().join("requests.jsonl")).len(), 4);
    assert_eq!(read_jsonl(&dir.path().join("side-requests.jsonl")).len(), 1);
}
