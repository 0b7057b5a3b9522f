//! The settings seam: what every host's settings file has in common, so that `install`,
//! `uninstall` and `doctor` are written once and each host's `settings.rs` only describes
//! its own file.
//!
//! A host describes itself with one [`Layout`]: where each scope's file is, whether its
//! events hold matcher groups (`hooks.<Event>: [{matcher, hooks: [handler…]}]`, Claude Code,
//! Codex CLI, Gemini CLI) or handlers directly (`{"version": 1, "hooks": {"<event>":
//! [handler…]}}`, Copilot CLI, Cursor), which events rewind uses and which tools must reach
//! them, how a matcher is evaluated, how a handler names its program and its timeout, and
//! what happens when the hook fails. Merging rewind's entries in, taking exactly them out
//! and reading back what is installed are then the same code for every host.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};

use super::Host;
use crate::cli::Scope;

/// Seconds the host waits beyond the hook's budget before it gives up on the hook.
pub const HOST_TIMEOUT_MARGIN_SECS: u64 = 30;
/// The line a host shows while the before-the-call entry runs.
pub const STATUS: &str = "rewind: Zerto checkpoint before a VM change";
/// Seconds an after-the-call entry may take: it only records that a call ran.
pub const AFTER_TIMEOUT_SECS: u64 = 10;

/// How the host runs the hook: the program and its arguments,
/// `<binary> [--config <file>] hook --host <name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub command: String,
    pub args: Vec<String>,
}

/// The binary a host should run for the hook, given the `rewind` binary: `rewind-hook` beside
/// it (as `cargo install` and a build put it), which links only the hook and so starts
/// faster on every tool call; `rewind` itself (whose `hook` is the same code) when there is
/// none. Both read the same command line.
pub fn hook_binary(rewind: &Path) -> PathBuf {
    // Where `rewind-hook` cannot have `rewind` take its checkpoints (see
    // `platform::LOCAL_SOCKETS`), `rewind hook` takes them in its own process.
    let beside = rewind.with_file_name(crate::platform::executable("rewind-hook"));
    if crate::platform::LOCAL_SOCKETS && beside.is_file() {
        beside
    } else {
        rewind.to_path_buf()
    }
}

impl Invocation {
    /// `<binary> [--config <file>] hook --host <host>`.
    pub fn new(binary: &Path, config: Option<&Path>, host: Host) -> Invocation {
        let mut args = Vec::new();
        if let Some(config) = config {
            args.push(String::from("--config"));
            args.push(config.display().to_string());
        }
        args.extend(["hook", "--host", host.name()].map(String::from));
        Invocation {
            command: binary.display().to_string(),
            args,
        }
    }

    /// `<binary> --config <file> hook --host <host> --managed`: the entry of the
    /// administrator layer, whose hook reads only the pinned, root-owned configuration.
    pub fn managed(binary: &Path, config: &Path, host: Host) -> Invocation {
        let mut run = Invocation::new(binary, Some(config), host);
        run.args.push(String::from("--managed"));
        run
    }

    /// One command line for hosts that run a shell string, each word quoted for a POSIX
    /// shell when it needs it.
    pub fn line(&self) -> String {
        std::iter::once(&self.command)
            .chain(&self.args)
            .map(|word| {
                shlex::try_quote(word).map_or_else(|_| word.clone(), std::borrow::Cow::into_owned)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Whether the host's events hold matcher groups or handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `hooks.<Event>: [{matcher, hooks: [handler…]}]`.
    Grouped,
    /// `{"version": 1, "hooks": {"<event>": [handler…]}}`, a matcher (if any) in the handler.
    Flat,
}

/// How a host reads a `matcher`.
#[derive(Debug, Clone, Copy)]
pub enum Syntax {
    /// `*`, empty or absent: every tool; only `plain` characters: exact names split on `|`
    /// (and the other `separators`); anything else an unanchored regular expression that
    /// selects nothing when it does not compile (Claude Code, Codex CLI).
    NamesOrRegex {
        plain: fn(char) -> bool,
        separators: &'static [char],
    },
    /// An unanchored regular expression; one that does not compile is an exact name
    /// (Gemini CLI). `*`, empty or absent: every tool.
    RegexOrLiteral,
    /// A regular expression that must match the whole name (Copilot CLI); absent: every tool.
    Anchored,
    /// An unanchored regular expression; absent, empty or `*`: everything (Cursor).
    Regex,
}

/// Which tool names a matcher selects, as its host evaluates it.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `*`, empty or absent.
    Everything,
    /// Exact names.
    Names(Vec<String>),
    /// A regular expression.
    Pattern(regex::Regex),
    /// A pattern that does not compile: it selects nothing.
    Broken(String),
}

impl Matcher {
    /// Reads a `matcher` value the way `syntax` says.
    pub fn new(syntax: Syntax, text: Option<&str>) -> Matcher {
        let Some(text) = text.map(str::trim) else {
            return Matcher::Everything;
        };
        if !matches!(syntax, Syntax::Anchored) && (text.is_empty() || text == "*") {
            return Matcher::Everything;
        }
        let regex = |pattern: &str| regex::Regex::new(pattern).ok();
        match syntax {
            Syntax::NamesOrRegex { plain, separators } => {
                if text
                    .chars()
                    .all(|c| plain(c) || c == '|' || separators.contains(&c))
                {
                    return Matcher::Names(
                        text.split(|c| c == '|' || separators.contains(&c))
                            .map(str::trim)
                            .filter(|n| !n.is_empty())
                            .map(str::to_owned)
                            .collect(),
                    );
                }
                regex(text).map_or_else(|| Matcher::Broken(text.to_owned()), Matcher::Pattern)
            }
            Syntax::RegexOrLiteral => {
                regex(text).map_or_else(|| Matcher::Names(vec![text.to_owned()]), Matcher::Pattern)
            }
            Syntax::Anchored => regex(&format!("^(?:{text})$"))
                .map_or_else(|| Matcher::Broken(text.to_owned()), Matcher::Pattern),
            Syntax::Regex => {
                regex(text).map_or_else(|| Matcher::Broken(text.to_owned()), Matcher::Pattern)
            }
        }
    }

    /// Whether a call to `tool` (or a command, for hosts that match command text) reaches
    /// the entry.
    pub fn matches(&self, tool: &str) -> bool {
        match self {
            Matcher::Everything => true,
            Matcher::Names(names) => names.iter().any(|n| n == tool),
            Matcher::Pattern(re) => re.is_match(tool),
            Matcher::Broken(_) => false,
        }
    }
}

/// One pair of events rewind uses: one before the call (it decides), one after (it records
/// that the call ran).
#[derive(Debug, Clone, Copy)]
pub struct Events {
    pub before: &'static str,
    pub after: &'static str,
    /// The matcher rewind writes (`None`: none, every call reaches the entry).
    pub matcher: Option<&'static str>,
    /// What must reach the before-the-call entry besides MCP tools: the host's shell tool
    /// names (or, where the matcher reads command text, sample commands).
    pub must_reach: &'static [&'static str],
    /// Whether the host's MCP tools come through this event.
    pub mcp: bool,
    /// The matcher of the after-the-call entry when it differs from `matcher`: the file
    /// tools reach the before-the-call entry only for the self-protection check, and their
    /// running is not worth a line of the audit trail each.
    pub after_matcher: Option<&'static str>,
    /// The event serves only the self-protection check of the host's file tools: it has no
    /// after-the-call entry, and `doctor` only warns when it is missing.
    pub files_only: bool,
}

/// The unit of a host's `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Milliseconds,
}

impl Unit {
    /// `secs` in this unit.
    pub fn from_secs(self, secs: u64) -> u64 {
        match self {
            Unit::Seconds => secs,
            Unit::Milliseconds => secs * 1000,
        }
    }

    /// A value in this unit, in seconds.
    pub fn to_secs(self, value: f64) -> f64 {
        match self {
            Unit::Seconds => value,
            Unit::Milliseconds => value / 1000.0,
        }
    }

    /// `s` or `ms`.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Milliseconds => "ms",
        }
    }
}

/// What the host does when the hook times out or crashes.
#[derive(Debug, Clone, Copy)]
pub enum OnFailure {
    /// The handler field that makes the host block the call (`onFailure: "block"`,
    /// `failClosed: true`); rewind writes it and `doctor` fails an entry without it.
    Blocks {
        key: &'static str,
        value: &'static str,
    },
    /// The host has no such option: what it does, said plainly by `install` and `doctor`.
    Open(&'static str),
}

/// The files of one scope: the one `install` writes and others the host also reads hooks
/// from (for `doctor` and `uninstall`).
#[derive(Debug, Clone)]
pub struct Files {
    pub write: PathBuf,
    pub also: Vec<PathBuf>,
}

/// A host's administrator layer: the file `install --scope managed` writes, which only an
/// administrator can change, and what can still switch its entries off.
#[derive(Debug, Clone, Copy)]
pub struct Managed {
    /// The file on Linux (and other Unix systems but macOS).
    pub linux: &'static str,
    /// The file on macOS.
    pub macos: &'static str,
    /// The file on Windows; empty where the host documents none (its policy then comes from
    /// the registry or from nowhere an installer can write).
    pub windows: &'static str,
    /// rewind's own file in the host's drop-in directory beside the administrator file,
    /// relative to that file's directory (Claude Code: `managed-settings.d/50-rewind.json`):
    /// `install --scope managed` writes it instead of editing the organisation's file. Empty:
    /// the host reads no drop-in directory.
    pub drop_in: &'static str,
    /// What `--lock` sets: `(dotted key, true)` pairs, so that users' own hooks and kill
    /// switches cannot switch the managed entries off. Empty: the host has no such setting.
    pub lock: &'static [&'static str],
    /// What `--lock` also switches off, said by `install` and the README.
    pub lock_also: &'static str,
    /// What a user can still do to keep the managed entries from running (without `--lock`,
    /// or despite it), said by `install` and `doctor`.
    pub still_off: &'static str,
    /// Whether the managed entries run even where a user's file sets the host's kill switch
    /// (without `--lock`).
    pub outlives_kill_switch: bool,
    /// A kill switch the lock does not cover, as named in its `doctor` line (empty: none).
    pub beyond_lock: &'static str,
    /// Where the path and keys are taken from (repository and path, or the documentation).
    pub source: &'static str,
}

impl Managed {
    /// The file on this system, as the host reads it (empty where the host documents none).
    pub fn path(&self) -> &'static str {
        crate::platform::per_os(self.linux, self.macos, self.windows)
    }

    /// Every OS's file the host documents.
    pub fn paths(&self) -> Vec<&'static str> {
        let mut paths = vec![self.linux];
        for path in [self.macos, self.windows] {
            if !path.is_empty() && !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }

    /// The file `install --scope managed` writes on this system (as the running system sees
    /// it): rewind's drop-in where the host reads one, else the administrator file.
    pub fn target(&self) -> PathBuf {
        let file = Path::new(self.path());
        match file.parent() {
            Some(dir) if !self.drop_in.is_empty() => dir.join(self.drop_in),
            _ => file.to_path_buf(),
        }
    }

    /// [`Managed::target`] under `root`.
    pub fn target_under(&self, root: &Path) -> PathBuf {
        let file = self.under(root);
        match file.parent() {
            Some(dir) if !self.drop_in.is_empty() => dir.join(self.drop_in),
            _ => file,
        }
    }

    /// Every file of the administrator layer under `root`, in the order the host reads and
    /// merges them: the administrator file, then each drop-in whose name ends in `.json` and
    /// does not start with `.`, sorted as JavaScript sorts strings (by UTF-16 code unit), as
    /// Claude Code does. Files that do not exist are left out, but the administrator file.
    #[expect(
        clippy::case_sensitive_file_extension_comparisons,
        reason = "Claude Code's own test is a case-sensitive endsWith(\".json\")"
    )]
    pub fn layer_files(&self, root: &Path) -> Vec<PathBuf> {
        let file = self.under(root);
        let mut files = vec![file.clone()];
        let dir = match (file.parent(), Path::new(self.drop_in).parent()) {
            (Some(dir), Some(sub)) if !self.drop_in.is_empty() => dir.join(sub),
            _ => return files,
        };
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| name.ends_with(".json") && !name.starts_with('.'))
            .collect();
        names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        files.extend(names.into_iter().map(|name| dir.join(name)));
        files
    }

    /// The file on this system under `root` (`/` on a running system, an image's root when
    /// one is being built): the path's root and drive are dropped, its names kept.
    pub fn under(&self, root: &Path) -> PathBuf {
        let mut path = root.to_path_buf();
        path.extend(
            Path::new(self.path())
                .components()
                .filter_map(|part| match part {
                    std::path::Component::Normal(name) => Some(name),
                    _ => None,
                }),
        );
        path
    }
}

/// Everything rewind needs to know about one host's settings files.
pub struct Layout {
    pub host: Host,
    /// The host's name for people.
    pub title: &'static str,
    pub shape: Shape,
    pub events: &'static [Events],
    pub syntax: Syntax,
    /// Matchers earlier rewind versions wrote: an install over one widens it.
    pub old_matchers: &'static [&'static str],
    /// Handler keys that may name the program, the first being the one rewind writes.
    pub program_keys: &'static [&'static str],
    /// The key of the argument list (exec form), or `None` when the program key holds a
    /// whole shell command line.
    pub args_key: Option<&'static str>,
    pub timeout_key: &'static str,
    pub unit: Unit,
    /// The host's timeout for a handler that sets none, in seconds (`None`: not documented).
    pub default_timeout_secs: Option<f64>,
    pub on_failure: OnFailure,
    /// Extra fields of the before-the-call handler (status lines, names).
    pub before_fields: &'static [(&'static str, &'static str)],
    /// Extra fields of the after-the-call handler.
    pub after_fields: &'static [(&'static str, &'static str)],
    /// The tool name the host gives a tool of an MCP server.
    pub mcp_name: fn(&str, &str) -> String,
    /// The file `install` writes for user scope.
    pub user: fn() -> anyhow::Result<PathBuf>,
    /// The file `install` writes for project scope, relative to the project (the current
    /// directory).
    pub project: &'static str,
    /// The file for local scope (this machine only), where the host has one.
    pub local: Option<&'static str>,
    /// The other files of a scope the host reads hooks from, given the one rewind writes.
    pub also: fn(&Path) -> Vec<PathBuf>,
    /// A setting in a parsed file that keeps rewind's entries from running.
    pub kill_switch: fn(&Value) -> Option<String>,
    /// What a person must do after installing, if anything.
    pub after_install: Option<&'static str>,
    /// The administrator layer.
    pub managed: Managed,
}

/// One rewind handler found in a settings file.
#[derive(Debug, Clone)]
pub struct Installed {
    pub file: PathBuf,
    pub event: String,
    /// The matcher as written (`None`: absent).
    pub matcher_text: Option<String>,
    pub matcher: Matcher,
    /// The program the host runs.
    pub program: String,
    /// The words after the program.
    pub args: Vec<String>,
    /// Whether the program and its arguments are given apart (no shell in between).
    pub exec_form: bool,
    /// The timeout as written, in the host's unit (`None`: the host's default).
    pub timeout: Option<f64>,
    /// Whether the entry carries the host's fail-closed setting.
    pub fail_closed: bool,
}

impl Installed {
    /// The file given to `--config`, when the handler pins one.
    pub fn pinned_config(&self) -> Option<PathBuf> {
        self.args
            .iter()
            .position(|a| a == "--config")
            .and_then(|i| self.args.get(i + 1))
            .map(PathBuf::from)
    }

    /// The host given to `--host`, when the handler names one.
    pub fn host_arg(&self) -> Option<&str> {
        self.args
            .iter()
            .position(|a| a == "--host")
            .and_then(|i| self.args.get(i + 1))
            .map(String::as_str)
    }
}

/// `~/<relative>`.
pub fn home(relative: &str) -> anyhow::Result<PathBuf> {
    Ok(crate::config::home_dir()
        .context("$HOME is not set")?
        .join(relative))
}

/// `$<var>` when it is set and not empty, else `~/<default>`.
pub fn home_or(var: &str, default: &str) -> anyhow::Result<PathBuf> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => home(default),
    }
}

/// `./<relative>` in the current directory.
pub fn here(relative: &str) -> anyhow::Result<PathBuf> {
    Ok(std::env::current_dir()
        .context("cannot tell the current directory")?
        .join(relative))
}

/// No other file.
pub fn nothing_else(_: &Path) -> Vec<PathBuf> {
    Vec::new()
}

/// No setting turns rewind's entries off.
pub fn no_kill_switch(_: &Value) -> Option<String> {
    None
}

impl Layout {
    /// The files of a scope, or why the host has no such scope.
    pub fn files(&self, scope: Scope) -> anyhow::Result<Files> {
        let write = match (scope, self.local) {
            (Scope::User, _) => (self.user)()?,
            (Scope::Project, _) => here(self.project)?,
            (Scope::Local, Some(local)) => here(local)?,
            (Scope::Managed, _) if self.managed.path().is_empty() => bail!(
                "{} documents no administrator file on this system",
                self.title
            ),
            (Scope::Managed, _) => PathBuf::from(self.managed.path()),
            (Scope::Local, None) => bail!(
                "{} has no local scope: it reads {} (user) and ./{} (project); use --scope user",
                self.title,
                (self.user)().map_or_else(
                    |_| String::from("a per-user file"),
                    |p| p.display().to_string()
                ),
                self.project
            ),
        };
        Ok(Files {
            also: (self.also)(&write),
            write,
        })
    }

    /// The host's timeout for the before-the-call entry: `budget + 30 s` in its unit.
    pub fn before_timeout(&self, budget_secs: u64) -> u64 {
        self.unit.from_secs(budget_secs + HOST_TIMEOUT_MARGIN_SECS)
    }

    /// A handler running `run`, before the call (with `timeout` in the host's unit and the
    /// fail-closed field) or after it.
    pub fn handler(&self, run: &Invocation, before: bool, timeout: u64) -> Value {
        let mut handler = Map::new();
        handler.insert("type".into(), json!("command"));
        if let Some(args_key) = self.args_key {
            handler.insert(self.program_keys[0].into(), json!(run.command));
            handler.insert(args_key.into(), json!(run.args));
        } else {
            handler.insert(self.program_keys[0].into(), json!(run.line()));
        }
        handler.insert(self.timeout_key.into(), json!(timeout));
        let fields = if before {
            if let OnFailure::Blocks { key, value } = self.on_failure {
                let value = if value == "true" {
                    json!(true)
                } else {
                    json!(value)
                };
                handler.insert(key.into(), value);
            }
            self.before_fields
        } else {
            self.after_fields
        };
        for (key, value) in fields {
            handler.insert((*key).into(), json!(value));
        }
        Value::Object(handler)
    }

    /// Puts rewind's entries (running `run`, the before-the-call one with `timeout` in the
    /// host's unit) into parsed settings. An existing rewind entry is replaced in place
    /// (keeping a matcher its user chose), repeats go, and nothing else is touched.
    pub fn merge(
        &self,
        settings: &mut Value,
        run: &Invocation,
        timeout: u64,
    ) -> anyhow::Result<()> {
        let root = settings
            .as_object_mut()
            .context("the settings are not a JSON object")?;
        if self.shape == Shape::Flat && !root.contains_key("version") {
            root.insert("version".into(), json!(1));
        }
        let hooks = root
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .context("\"hooks\" in the settings is not an object")?;
        // Every before-the-call event first, then every after-the-call one.
        for before in [true, false] {
            for events in self.events {
                if !before && events.files_only {
                    continue;
                }
                let event = if before { events.before } else { events.after };
                let matcher = if before {
                    events.matcher
                } else {
                    events.after_matcher.or(events.matcher)
                };
                let timeout = if before {
                    timeout
                } else {
                    self.unit.from_secs(AFTER_TIMEOUT_SECS)
                };
                let handler = self.handler(run, before, timeout);
                let list = hooks
                    .entry(event)
                    .or_insert_with(|| Value::Array(Vec::new()))
                    .as_array_mut()
                    .with_context(|| format!("\"hooks.{event}\" in the settings is not a list"))?;
                match self.shape {
                    Shape::Grouped => self.merge_grouped(list, matcher, &handler),
                    Shape::Flat => self.merge_flat(list, matcher, handler),
                }
            }
        }
        Ok(())
    }

    fn merge_grouped(&self, groups: &mut Vec<Value>, matcher: Option<&str>, handler: &Value) {
        let mut placed = false;
        for group in groups.iter_mut() {
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            let before = handlers.len();
            let mut ours = false;
            for h in handlers.iter_mut() {
                if self.is_rewind(h) {
                    *h = if placed { Value::Null } else { handler.clone() };
                    ours = !placed;
                    placed = true;
                }
            }
            handlers.retain(|h| !h.is_null());
            if handlers.is_empty() && before > 0 {
                *group = Value::Null;
            } else if ours && self.is_old_matcher(group.get("matcher")) {
                set_matcher(group, matcher);
            }
        }
        groups.retain(|g| !g.is_null());
        if !placed {
            let mut group = Map::new();
            if let Some(matcher) = matcher {
                group.insert("matcher".into(), json!(matcher));
            }
            group.insert("hooks".into(), json!([handler.clone()]));
            groups.push(Value::Object(group));
        }
    }

    fn merge_flat(&self, handlers: &mut Vec<Value>, matcher: Option<&str>, handler: Value) {
        let mut placed = false;
        for h in handlers.iter_mut() {
            if !self.is_rewind(h) {
                continue;
            }
            if placed {
                *h = Value::Null;
                continue;
            }
            let kept = h.get("matcher").cloned();
            *h = handler.clone();
            if self.is_old_matcher(kept.as_ref()) {
                set_matcher(h, matcher);
            } else if let Some(kept) = kept {
                h["matcher"] = kept;
            }
            placed = true;
        }
        handlers.retain(|h| !h.is_null());
        if !placed {
            let mut handler = handler;
            set_matcher(&mut handler, matcher);
            handlers.push(handler);
        }
    }

    /// Absent, or a matcher an earlier rewind wrote.
    fn is_old_matcher(&self, matcher: Option<&Value>) -> bool {
        match matcher {
            None => true,
            Some(m) => m.as_str().is_some_and(|m| self.old_matchers.contains(&m)),
        }
    }

    /// Takes every rewind handler out of every event; a group, an event list or a `hooks`
    /// object left empty by that goes too (one that was empty before stays). Returns how
    /// many were removed.
    pub fn remove(&self, settings: &mut Value) -> usize {
        let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
            return 0;
        };
        let mut removed = 0;
        let mut emptied = Vec::new();
        for (event, list) in hooks.iter_mut() {
            let Some(list) = list.as_array_mut() else {
                continue;
            };
            let had = !list.is_empty();
            match self.shape {
                Shape::Grouped => {
                    for group in list.iter_mut() {
                        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut)
                        else {
                            continue;
                        };
                        let before = handlers.len();
                        handlers.retain(|h| !self.is_rewind(h));
                        let gone = before - handlers.len();
                        removed += gone;
                        if gone > 0 && handlers.is_empty() {
                            *group = Value::Null;
                        }
                    }
                    list.retain(|g| !g.is_null());
                }
                Shape::Flat => {
                    let before = list.len();
                    list.retain(|h| !self.is_rewind(h));
                    removed += before - list.len();
                }
            }
            if had && list.is_empty() {
                emptied.push(event.clone());
            }
        }
        let had_events = !hooks.is_empty();
        for event in emptied {
            hooks.remove(&event);
        }
        if had_events
            && hooks.is_empty()
            && let Some(root) = settings.as_object_mut()
        {
            root.remove("hooks");
        }
        removed
    }

    /// The program and the words after it, as the handler names them.
    fn command_of(&self, handler: &Value) -> Option<(String, Vec<String>, bool)> {
        let program = self
            .program_keys
            .iter()
            .find_map(|key| handler.get(*key).and_then(Value::as_str))?;
        if let Some(args) = self
            .args_key
            .and_then(|key| handler.get(key))
            .and_then(Value::as_array)
        {
            let args = args
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            return Some((program.to_owned(), args, true));
        }
        let words = shlex::split(program)
            .unwrap_or_else(|| program.split_whitespace().map(str::to_owned).collect());
        let (first, rest) = words.split_first()?;
        Some((first.clone(), rest.to_vec(), false))
    }

    /// A handler that runs `rewind … hook`: the program is named `rewind` or `rewind-<suffix>`
    /// (a copy kept by version, say; `.exe` or not), or is this very binary, whatever its name.
    /// A stale entry of an older copy is then replaced by install, named by doctor and taken
    /// out by uninstall, never left to block every call.
    pub fn is_rewind(&self, handler: &Value) -> bool {
        self.command_of(handler).is_some_and(|(program, args, _)| {
            args.iter().any(|a| a == "hook") && is_rewind_program(Path::new(&program))
        })
    }

    /// Every rewind handler in parsed settings read from `file`.
    pub fn inspect(&self, file: &Path, settings: &Value) -> Vec<Installed> {
        let mut found = Vec::new();
        let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
            return found;
        };
        for (event, list) in hooks {
            for item in list.as_array().into_iter().flatten() {
                let (matcher_text, handlers): (Option<&str>, Vec<&Value>) = match self.shape {
                    Shape::Grouped => (
                        item.get("matcher").and_then(Value::as_str),
                        item.get("hooks")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .collect(),
                    ),
                    Shape::Flat => (item.get("matcher").and_then(Value::as_str), vec![item]),
                };
                for h in handlers {
                    let Some((program, args, exec_form)) =
                        self.command_of(h).filter(|_| self.is_rewind(h))
                    else {
                        continue;
                    };
                    let fail_closed = match self.on_failure {
                        OnFailure::Blocks { key, value } => h.get(key).is_some_and(|v| {
                            v.as_str() == Some(value) || (value == "true" && v == &json!(true))
                        }),
                        OnFailure::Open(_) => false,
                    };
                    found.push(Installed {
                        file: file.to_path_buf(),
                        event: event.clone(),
                        matcher_text: matcher_text.map(str::to_owned),
                        matcher: Matcher::new(self.syntax, matcher_text),
                        program,
                        args,
                        exec_form,
                        timeout: h.get(self.timeout_key).and_then(Value::as_f64),
                        fail_closed,
                    });
                }
            }
        }
        found
    }
}

/// Whether `program` is a rewind binary (see [`Layout::is_rewind`]); `rewind-mcp` is not one.
fn is_rewind_program(program: &Path) -> bool {
    let named = program
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|name| {
            let name = name.strip_suffix(".exe").unwrap_or(name);
            name == "rewind"
                || name
                    .strip_prefix("rewind-")
                    .is_some_and(|rest| rest != "mcp")
        });
    named
        || std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .is_ok_and(|this| std::fs::canonicalize(program).is_ok_and(|p| p == this))
}

impl Layout {
    /// Takes every rewind handler out of a TOML file's `[hooks]` (Codex CLI's inline hooks in
    /// `config.toml`), keeping every other line, comment and format as it was. Returns the
    /// new text and how many were removed.
    pub fn remove_toml(&self, text: &str, path: &Path) -> anyhow::Result<(String, usize)> {
        let mut doc: toml_edit::DocumentMut = text
            .parse()
            .with_context(|| format!("{} is not valid TOML; not touching it", path.display()))?;
        let mut removed = 0;
        let mut hooks_emptied = false;
        if let Some(hooks) = doc.get_mut("hooks").and_then(|h| h.as_table_like_mut()) {
            let events: Vec<String> = hooks.iter().map(|(k, _)| k.to_owned()).collect();
            let had_events = !events.is_empty();
            for event in events {
                let Some(groups) = hooks.get_mut(&event) else {
                    continue;
                };
                let emptied = prune_tables(groups, |group| {
                    let Some(handlers) = group.get_mut("hooks") else {
                        return false;
                    };
                    prune_tables(handlers, |handler| {
                        let ours = self.is_rewind(&self.toml_handler(handler));
                        removed += usize::from(ours);
                        ours
                    })
                });
                if emptied {
                    hooks.remove(&event);
                }
            }
            hooks_emptied = had_events && hooks.is_empty();
        }
        if hooks_emptied {
            doc.remove("hooks");
        }
        Ok((doc.to_string(), removed))
    }

    /// The program and argument keys of a TOML handler, as JSON.
    fn toml_handler(&self, handler: &dyn toml_edit::TableLike) -> Value {
        let mut map = Map::new();
        for key in self.program_keys.iter().chain(self.args_key.iter()) {
            let value = match handler.get(key).and_then(toml_edit::Item::as_value) {
                Some(toml_edit::Value::String(s)) => json!(s.value()),
                Some(toml_edit::Value::Array(words)) => json!(
                    words
                        .iter()
                        .filter_map(toml_edit::Value::as_str)
                        .collect::<Vec<_>>()
                ),
                _ => continue,
            };
            map.insert((*key).to_owned(), value);
        }
        Value::Object(map)
    }
}

/// A `retain` predicate keeping the items whose verdict, in order, is false.
fn not_dropped<T: ?Sized>(verdicts: &[bool]) -> impl FnMut(&T) -> bool + '_ {
    let mut next = verdicts.iter();
    move |_| !next.next().copied().unwrap_or(false)
}

/// Drops the tables of a TOML list (`[[x]]` or an inline array) for which `drop` says so;
/// `drop` may change the ones it keeps. Whether the list had tables and is now empty.
fn prune_tables(
    item: &mut toml_edit::Item,
    mut drop: impl FnMut(&mut dyn toml_edit::TableLike) -> bool,
) -> bool {
    let mut verdicts = Vec::new();
    match item {
        toml_edit::Item::ArrayOfTables(list) => {
            for table in list.iter_mut() {
                verdicts.push(drop(table));
            }
            list.retain(not_dropped(&verdicts));
            !verdicts.is_empty() && list.is_empty()
        }
        toml_edit::Item::Value(toml_edit::Value::Array(list)) => {
            for value in list.iter_mut() {
                verdicts.push(value.as_inline_table_mut().is_some_and(|t| drop(t)));
            }
            list.retain(not_dropped(&verdicts));
            !verdicts.is_empty() && list.is_empty()
        }
        _ => false,
    }
}

fn set_matcher(item: &mut Value, matcher: Option<&str>) {
    if let Some(map) = item.as_object_mut() {
        match matcher {
            Some(m) => {
                map.insert("matcher".into(), json!(m));
            }
            None => {
                map.remove("matcher");
            }
        }
    }
}

/// Parses a settings file's text: JSON, or TOML for a `.toml` file (read, never written);
/// anything but an object is refused, naming the file.
pub fn parse(text: &str, path: &Path) -> anyhow::Result<Value> {
    let value: Value = if path.extension().is_some_and(|e| e == "toml") {
        let table: toml::Table = toml::from_str(text)
            .with_context(|| format!("{} is not valid TOML; not touching it", path.display()))?;
        serde_json::to_value(table)?
    } else {
        serde_json::from_str(text)
            .with_context(|| format!("{} is not valid JSON; not touching it", path.display()))?
    };
    if !value.is_object() {
        bail!("{} is not a JSON object; not touching it", path.display());
    }
    Ok(value)
}

/// The text written for settings.
pub fn render(settings: &Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(settings)? + "\n")
}

/// The other `*.json` files in the directory of `file`, sorted (a directory that does not
/// exist has none).
pub fn other_json_files(file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p != file && p.is_file())
        .collect();
    files.sort();
    files
}

/// Merges a later document of an administrator layer into what the earlier ones gave, as
/// Claude Code merges `managed-settings.json` and its drop-ins: objects key by key, lists
/// appended (an element already there is not added again), anything else replaced.
pub fn merge_layer(into: &mut Value, later: &Value) {
    match (into, later) {
        (Value::Object(into), Value::Object(later)) => {
            for (key, value) in later {
                match into.get_mut(key) {
                    Some(at) => merge_layer(at, value),
                    None => {
                        into.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(into), Value::Array(later)) => {
            for value in later {
                if !into.contains(value) {
                    into.push(value.clone());
                }
            }
        }
        (into, later) => *into = later.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_names_its_administrator_file_per_os_and_an_image_root_keeps_its_names() {
        let claude = Host::ClaudeCode.settings().managed;
        assert_eq!(
            claude.paths(),
            [
                "/etc/claude-code/managed-settings.json",
                "/Library/Application Support/ClaudeCode/managed-settings.json",
                r"C:\Program Files\ClaudeCode\managed-settings.json",
            ]
        );
        // Codex documents one Unix file and no Windows one; Copilot's Windows policy is the
        // registry's.
        assert_eq!(
            Host::Codex.settings().managed.paths(),
            ["/etc/codex/requirements.toml"]
        );
        assert_eq!(
            Host::Copilot.settings().managed.paths(),
            ["/etc/github-copilot/policy.d/rewind.json"]
        );
        let here = claude.path();
        assert!(claude.paths().contains(&here), "{here}");
        let image = Path::new("/srv/image");
        let under = claude.under(image);
        assert!(under.starts_with(image), "{}", under.display());
        assert!(
            under.ends_with("ClaudeCode/managed-settings.json")
                || under.ends_with("claude-code/managed-settings.json"),
            "{}",
            under.display()
        );
    }

    #[test]
    fn the_administrator_layer_is_read_in_claude_codes_order_and_merged_its_way() {
        let claude = Host::ClaudeCode.settings().managed;
        let root = tempfile::tempdir().expect("root");
        let base = claude.under(root.path());
        let dir = base.parent().expect("dir").join("managed-settings.d");
        std::fs::create_dir_all(&dir).expect("mkdir");
        for name in [
            "a.json",
            "B.json",
            "9-b.json",
            "50-rewind.json",
            "10-a.json",
            ".x.json",
            "c.txt",
        ] {
            std::fs::write(dir.join(name), "{}").expect("write");
        }
        std::fs::create_dir(dir.join("d.json")).expect("a directory is no drop-in");
        let names: Vec<String> = claude
            .layer_files(root.path())
            .iter()
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                base.file_name().expect("name").to_string_lossy().as_ref(),
                "10-a.json",
                "50-rewind.json",
                "9-b.json",
                "B.json",
                "a.json"
            ]
        );
        assert_eq!(claude.target_under(root.path()), dir.join("50-rewind.json"));
        // Hosts without a drop-in directory write their administrator file.
        let gemini = Host::Gemini.settings().managed;
        assert_eq!(gemini.target_under(root.path()), gemini.under(root.path()));

        let mut merged = serde_json::json!({
            "hooks": {"PreToolUse": [{"matcher": "Bash"}]},
            "allowManagedHooksOnly": true,
            "env": {"A": "1"}
        });
        merge_layer(
            &mut merged,
            &serde_json::json!({
                "hooks": {"PreToolUse": [{"matcher": "Bash"}, {"matcher": "mcp__.*"}]},
                "allowManagedHooksOnly": false,
                "env": {"B": "2"}
            }),
        );
        assert_eq!(
            merged,
            serde_json::json!({
                "hooks": {"PreToolUse": [{"matcher": "Bash"}, {"matcher": "mcp__.*"}]},
                "allowManagedHooksOnly": false,
                "env": {"A": "1", "B": "2"}
            })
        );
    }

    #[test]
    fn a_command_line_quotes_what_a_shell_would_split() {
        let run = Invocation::new(
            Path::new("/opt/my tools/rewind"),
            Some(Path::new("/etc/r.toml")),
            Host::Codex,
        );
        assert_eq!(
            run.line(),
            "'/opt/my tools/rewind' --config /etc/r.toml hook --host codex"
        );
        assert_eq!(
            shlex::split(&run.line()).expect("splits"),
            std::iter::once(run.command.clone())
                .chain(run.args.clone())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_toml_file_loses_exactly_rewinds_handlers_and_keeps_its_comments() {
        let text = r#"# my Codex settings
model = "gpt-5" # the default

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "python3 ~/.codex/policy.py" # keep me
[[hooks.PreToolUse.hooks]]
type = "command"
command = "/opt/rewind hook --host codex"

[[hooks.PostToolUse]]
hooks = [{ type = "command", command = "'/opt/my tools/rewind' hook --host codex", timeout = 10 }]
"#;
        let (after, removed) = crate::host::codex::settings::LAYOUT
            .remove_toml(text, Path::new("config.toml"))
            .expect("TOML");
        assert_eq!(removed, 2);
        assert_eq!(
            after,
            r#"# my Codex settings
model = "gpt-5" # the default

[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "python3 ~/.codex/policy.py" # keep me
"#
        );
    }

    #[test]
    fn matcher_syntaxes_follow_their_hosts() {
        let gemini = |m| Matcher::new(Syntax::RegexOrLiteral, Some(m));
        assert!(gemini("^mcp_").matches("mcp_ssh_exec"));
        assert!(!gemini("^mcp_").matches("run_shell_command"));
        assert!(gemini("read_.*").matches("pre_read_file"), "unanchored");
        assert!(
            gemini("mcp_(ssh").matches("mcp_(ssh"),
            "a broken regex is a literal"
        );
        let copilot = |m| Matcher::new(Syntax::Anchored, Some(m));
        assert!(copilot("bash").matches("bash"));
        assert!(!copilot("bash").matches("read_bash"), "anchored");
        assert!(copilot("bash|powershell|.+-.+").matches("ssh-exec"));
        assert!(!copilot("bash|powershell|.+-.+").matches("view"));
        assert!(Matcher::new(Syntax::Anchored, None).matches("view"));
        assert!(!Matcher::new(Syntax::Regex, Some("ssh (")).matches("ssh ("));
    }
}
