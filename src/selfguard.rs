//! Guarding the guard: calls that would undo rewind's own safety net are asked about,
//! whatever tool carries them.
//!
//! What is protected, and why each ask names it:
//! - running `rewind recover`, `restore-vm`, `flr end`, `uninstall`, `install`, `trust`, `catalog add` or
//!   `catalog scan --write`, and the MCP twins of restore (`recover_file`, `flr_end` of the
//!   server registered as `rewind`);
//! - writing, moving, removing or unpacking over rewind's configuration (user and
//!   `/etc/rewind`), catalogs, state, audit trail and its head, token and inventory cache,
//!   the binary the hooks run, any host's hook settings (user, project and administrator
//!   files), and, under a managed install, the ssh configuration the hook reads
//!   (`known_hosts` aside). A command is read as the shell analysis reads it, with its
//!   tables, not copies of them: its wrappers (`shell::wrappers`: `sudo --user root`,
//!   `busybox`, `timeout`, `bash -c`, `find -exec`, `python3 -c`), its variables
//!   (`d=~/.claude; … $d/settings.json`), what each program writes, removes or unpacks
//!   (`shell::writes`: redirections, `sed -Ei.orig`, `awk -i inplace`, `tar -C ~ -x`,
//!   `unzip -d`, `cp --target-directory=`, `find -delete`, `git checkout`/`stash` in a work
//!   tree above a protected file) and what interpreters' code starts or changes
//!   (`shell::code`: `os.system`, `shutil.rmtree`, `fs.rmSync`, `unlink`); a `cd` moves
//!   where relative paths land. The host's own file tools count (`Edit`, `Write`,
//!   `MultiEdit`, Codex's `apply_patch`, Gemini's `write_file`/`replace`, Copilot's
//!   `create`/`edit`, Cursor's `Write`/`Delete`), and so does text typed into a running
//!   shell (Codex `write_stdin`, Copilot `write_bash`). Reading these files asks nothing;
//! - any request to the configured ZVM's own address (HTTP clients, interpreters naming it, an
//!   MCP tool given its URL), and reading the token cache or the ZVM password's variable.
//!
//! Pure but for reading the environment (`$HOME`, the XDG directories): no file is opened,
//! no process started. An ordinary command is turned away by a substring test before it is
//! parsed, so the common call costs what a read-only one does.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::{Config, SecretSource};
use crate::host::{Host, ToolCall};
use crate::shell::code::Handed;
use crate::shell::wrappers::Next;
use crate::shell::writes::Effect;
use crate::shell::{self, Cmd, Dialect, Stdin};

mod powershell;

/// Deepest `bash -c '…'` / `pwsh -c …` nesting followed.
const MAX_DEPTH: usize = 8;

/// What a protected file is, in the words of an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Config,
    Catalog,
    Audit,
    State,
    TokenCache,
    Certificate,
    Binary,
    /// The ssh configuration the hook reads to tell which machine a command reaches.
    SshConfig,
    Hooks(&'static str),
    /// A relative path after a `cd` to a place known only when the command runs.
    Unseen,
}

impl What {
    fn describe(self) -> String {
        match self {
            What::Config => String::from(
                "rewind's configuration, which says which ZVM guards the VMs and how the hook answers",
            ),
            What::Unseen => String::from(
                "a path in a directory known only when the command runs, which may be one of rewind's",
            ),
            What::Catalog => String::from("rewind's catalog, which decides what is checkpointed"),
            What::Audit => String::from("rewind's audit trail, the record of every decision"),
            What::State => String::from(
                "rewind's state (the audit trail and the sessions that bind calls to VMs)",
            ),
            What::TokenCache => {
                String::from("rewind's ZVM token cache, a live credential for the ZVM")
            }
            What::Certificate => String::from("the certificate rewind trusts for the ZVM"),
            What::Binary => String::from("the rewind binary the hooks run"),
            What::SshConfig => String::from(
                "the ssh configuration rewind reads to tell which machine a command reaches",
            ),
            What::Hooks(host) => {
                format!("{host}'s hook settings, where rewind's hook is installed")
            }
        }
    }
}

/// How a protected path is recognised in a normalised (lower-case, `/`-separated) path.
#[derive(Debug, Clone)]
enum Place {
    /// This absolute file.
    File(String),
    /// Everything under this absolute directory.
    Under(String),
    /// A path ending in these components (project files, wherever the project is).
    Tail(String),
}

#[derive(Debug, Clone)]
struct Spot {
    place: Place,
    what: What,
    /// The path as rewind knows it, for a message.
    shown: String,
}

impl Spot {
    /// Everything under the directory `dir`.
    fn under(dir: &Path, what: What, home: Option<&str>) -> Spot {
        let shown = dir.to_string_lossy().into_owned();
        Spot {
            place: Place::Under(norm_path(&shown, home)),
            what,
            shown,
        }
    }
}

/// The directories a command's relative paths may be read from: the one the call runs in
/// (when the host says) and every one a `cd` of the command changes to, all of them, since a
/// subshell's `cd` ends with it. After a `cd` to a place only known when the command runs, a
/// relative path may be anywhere: writing or removing one asks.
#[derive(Debug, Clone, Default)]
struct Dirs {
    /// Absolute, normalised.
    known: Vec<String>,
    /// A `cd` went to a place known only when the command runs (or past [`Dirs::MOST`]).
    unknown: bool,
}

impl Dirs {
    /// Most directories followed; past them a relative path may be anywhere.
    const MOST: usize = 16;

    /// The directory the call runs in, normalised, if the host says.
    fn at(cwd: Option<&Path>, home: Option<&str>) -> Dirs {
        Dirs {
            known: cwd
                .map(|c| norm_path(&c.to_string_lossy(), home))
                .filter(|c| absolute(c))
                .into_iter()
                .collect(),
            unknown: false,
        }
    }

    /// After a `cd` to `target`.
    fn change_to(&mut self, target: &CdTo<'_>, home: Option<&str>) {
        let target = match target {
            CdTo::Home => home,
            CdTo::Unseen | CdTo::Dir("-") => None,
            CdTo::Dir(word) => Some(*word),
        };
        let added: Vec<String> = match target.map(|word| (word, norm_path(word, home))) {
            Some((_, dir)) if absolute(&dir) => vec![dir],
            // Joined as written: a relative path's `..` normalise away on their own.
            Some((word, _)) if !self.known.is_empty() => self
                .known
                .iter()
                .map(|base| norm_path(&format!("{base}/{word}"), home))
                .collect(),
            // No directory to start from (the host did not say): relative paths are read as
            // written, before a relative `cd` as after it.
            Some(_) => return,
            _ => {
                self.unknown = true;
                return;
            }
        };
        for dir in added {
            if !self.known.contains(&dir) {
                self.known.push(dir);
            }
        }
        if self.known.len() > Self::MOST {
            self.unknown = true;
        }
    }
}

/// The programs that change the shell's directory (`cd`, `pushd`, `Set-Location`).
const DIRECTORY_CHANGERS: &[&str] = &[
    "cd",
    "pushd",
    "chdir",
    "set-location",
    "sl",
    "push-location",
];

/// Where a command that changes the directory goes.
enum CdTo<'a> {
    /// `cd` alone.
    Home,
    /// A place known only when the command runs (`cd "$D"`).
    Unseen,
    /// The directory as written (`-` for the last one).
    Dir(&'a str),
}

/// What a call does to a protected thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Edit,
    Remove,
    Read,
}

impl Act {
    fn verb(self) -> &'static str {
        match self {
            Act::Edit => "edits",
            Act::Remove => "removes or moves",
            Act::Read => "reads",
        }
    }
}

/// Everything the check protects, from the configuration and the environment. The files and
/// directories (which take the binary's path, the home directory and every host's settings
/// files to gather) are gathered the first time a call needs them, once: most calls (an MCP
/// tool's, given no path of this machine to write) never do. The token cache, which every
/// command that is not a quick miss is searched for, is gathered on its own: a command that
/// names rewind but writes and removes nothing needs no other.
#[derive(Debug, Clone)]
pub(crate) struct Protected {
    /// What the configuration names, for [`file_spots`].
    named: Named,
    spots: OnceCell<Vec<Spot>>,
    /// The token cache's directory, one of [`Protected::spots`].
    token_cache: OnceCell<Option<Spot>>,
    home: OnceCell<Option<String>>,
    /// The ZVM's host (and `host:port`), lower-case.
    zvm: Vec<String>,
    /// Environment variables that hold the ZVM's secrets.
    secrets: Vec<String>,
    /// Cheap substrings: a command holding none of them is not parsed at all.
    needles: OnceCell<Vec<String>>,
}

/// The files the configuration puts under protection, as it names them.
#[derive(Debug, Clone, Default)]
struct Named {
    /// The configuration file in use.
    origin: Option<PathBuf>,
    /// The configured catalogs (the hook's, then the shell's).
    catalogs: Vec<PathBuf>,
    audit: Option<PathBuf>,
    /// The ZVM's certificate.
    ca_cert: Option<PathBuf>,
    /// A managed install: the ssh configuration the hook reads is the administrator's to
    /// change.
    managed: bool,
}

/// Settings files of every host's hooks, wherever the project or the home directory is.
const HOOK_TAILS: &[(&str, &str)] = &[
    (".claude/settings.json", "Claude Code"),
    (".claude/settings.local.json", "Claude Code"),
    ("managed-settings.json", "Claude Code"),
    ("claude-code/managed-settings.d", "Claude Code"),
    // macOS `/Library/Application Support/ClaudeCode`, Windows `C:\Program Files\ClaudeCode`
    // (paths are compared in lower case).
    ("claudecode/managed-settings.d", "Claude Code"),
    (".codex/hooks.json", "Codex CLI"),
    (".codex/config.toml", "Codex CLI"),
    ("codex/requirements.toml", "Codex CLI"),
    ("codex/managed_config.toml", "Codex CLI"),
    (".gemini/settings.json", "Gemini CLI"),
    ("gemini-cli/settings.json", "Gemini CLI"),
    ("geminicli/settings.json", "Gemini CLI"),
    (".cursor/hooks.json", "Cursor"),
    ("cursor/hooks.json", "Cursor"),
    (".copilot/hooks", "Copilot CLI"),
    (".copilot/settings.json", "Copilot CLI"),
    (".github/hooks", "Copilot CLI"),
    (".github/copilot/settings.json", "Copilot CLI"),
    (".github/copilot/settings.local.json", "Copilot CLI"),
    ("github-copilot/policy.d", "Copilot CLI"),
];

/// Names that make a command worth parsing.
const NEEDLES: &[&str] = &[
    "rewind",
    ".claude",
    "claude-code",
    "claudecode",
    ".codex",
    "codex/",
    ".gemini",
    "gemini-cli",
    "geminicli",
    "cursor",
    "copilot",
    ".github/hooks",
    "managed-settings",
];

/// Spellings of directories above protected files (the home directory's own path is added).
const ANCESTORS: &[&str] = &[
    "~",
    "$home",
    "${home}",
    "userprofile",
    ".config",
    ".local",
    ".cache",
    "/etc",
    "/library",
];

impl Protected {
    /// What `config` (and the environment this process runs in) puts under protection.
    /// Nothing is read yet but the configuration: see [`Protected::spots`].
    pub(crate) fn new(config: &Config) -> Protected {
        let (zvm, secrets) = zvm_facts(config);
        Protected {
            named: Named {
                origin: config.origin.clone(),
                catalogs: config
                    .hook
                    .catalogs
                    .iter()
                    .chain(&config.shell.catalogs)
                    .cloned()
                    .collect(),
                // `audit_path` without its error, which reads the environment.
                audit: config.hook.audit_log.clone(),
                ca_cert: config.zvm.as_ref().and_then(|zvm| zvm.ca_cert.clone()),
                managed: config.managed,
            },
            spots: OnceCell::new(),
            token_cache: OnceCell::new(),
            home: OnceCell::new(),
            zvm,
            secrets,
            needles: OnceCell::new(),
        }
    }

    /// What is protected, given its parts (nothing left to gather).
    #[cfg(test)]
    fn from_parts(
        spots: Vec<Spot>,
        home: Option<String>,
        zvm: Vec<String>,
        secrets: Vec<String>,
    ) -> Protected {
        let token_cache = spots.iter().find(|s| s.what == What::TokenCache).cloned();
        Protected {
            named: Named::default(),
            token_cache: OnceCell::from(token_cache),
            spots: OnceCell::from(spots),
            home: OnceCell::from(home),
            zvm,
            secrets,
            needles: OnceCell::new(),
        }
    }

    /// The home directory, normalised.
    fn home(&self) -> Option<&str> {
        self.home
            .get_or_init(|| {
                crate::config::home_dir().map(|h| norm_path(&h.to_string_lossy(), None))
            })
            .as_deref()
    }

    /// Every protected file and directory, gathered on first use.
    fn spots(&self) -> &[Spot] {
        self.spots.get_or_init(|| {
            let home = self.home();
            let mut spots = file_spots(&self.named, home);
            spots.extend(dir_spots(
                home,
                self.token_cache().cloned(),
                self.named.managed,
            ));
            spots
        })
    }

    /// The token cache's directory, gathered alone.
    fn token_cache(&self) -> Option<&Spot> {
        self.token_cache
            .get_or_init(|| {
                let dir = crate::config::cache_dir_path().ok()?;
                Some(Spot::under(&dir, What::TokenCache, self.home()))
            })
            .as_ref()
    }

    /// The substrings a command must hold to be parsed at all, from the spots.
    fn needles(&self) -> &[String] {
        self.needles.get_or_init(|| self.gather_needles())
    }

    fn gather_needles(&self) -> Vec<String> {
        let mut needles: Vec<String> = NEEDLES.iter().map(|n| (*n).to_owned()).collect();
        for spot in self.spots() {
            // `config` would be a needle of most commands: ssh's directory is one instead.
            if spot.what == What::SshConfig {
                for name in [".ssh", "ssh_config"] {
                    if !needles.iter().any(|n| n == name) {
                        needles.push(name.to_owned());
                    }
                }
                continue;
            }
            let text = match &spot.place {
                Place::File(p) | Place::Under(p) => p.rsplit('/').next().unwrap_or(p),
                Place::Tail(t) => t.rsplit('/').next().unwrap_or(t),
            };
            if !text.is_empty() && !needles.iter().any(|n| n == text) {
                needles.push(text.to_owned());
            }
        }
        // Directories above protected files: removing one removes them.
        needles.extend(ANCESTORS.iter().map(|n| (*n).to_owned()));
        needles.extend(self.home().map(str::to_owned));
        needles.extend(self.zvm.iter().cloned());
        needles.extend(self.secrets.iter().map(|s| s.to_ascii_lowercase()));
        needles
    }

    /// The protected thing a path names, if any. `destructive`: a directory above a
    /// protected file counts too (`rm -rf ~/.claude`).
    fn find(&self, word: &str, destructive: bool) -> Option<(What, String)> {
        self.find_among(word, destructive, self.spots())
    }

    /// As [`Protected::find`], among `spots`.
    fn find_among<'s>(
        &self,
        word: &str,
        destructive: bool,
        spots: impl IntoIterator<Item = &'s Spot>,
    ) -> Option<(What, String)> {
        let path = norm_path(word, self.home());
        if path.is_empty() {
            return None;
        }
        let shown = word.to_owned();
        // A glob is compared by the part before its first wildcard.
        let glob = path.find(['*', '?', '[']);
        for spot in spots {
            let hit = match (&spot.place, glob) {
                (Place::File(file), None) => {
                    path == *file || (destructive && is_under(file, &path))
                }
                (Place::Under(dir), None) => {
                    path == *dir || is_under(&path, dir) || (destructive && is_under(dir, &path))
                }
                (Place::Tail(tail), None) => {
                    ends_with_components(&path, tail)
                        || is_under_tail(&path, tail)
                        || (destructive
                            && tail_dir(tail).is_some_and(|d| ends_with_components(&path, d)))
                }
                (Place::File(full), Some(at)) => {
                    let prefix = &path[..at];
                    prefix.contains('/') && full.starts_with(prefix)
                }
                // Above the directory, or inside it (`rm -rf ~/.config/rewind/*`).
                (Place::Under(dir), Some(at)) => {
                    let prefix = &path[..at];
                    prefix.contains('/')
                        && (dir.starts_with(prefix)
                            || prefix
                                .strip_prefix(dir.as_str())
                                .is_some_and(|inside| inside.starts_with('/')))
                }
                (Place::Tail(tail), Some(at)) => {
                    let prefix = &path[..at];
                    let prefix = prefix.trim_start_matches("./");
                    (!prefix.is_empty() && tail.starts_with(prefix))
                        || tail_dir(tail).is_some_and(|d| prefix.ends_with(&format!("{d}/")))
                        // Inside a directory the tail names (`.github/hooks/*`).
                        || ends_with_components(prefix.trim_end_matches('/'), tail)
                }
            };
            if hit {
                return Some((spot.what, shown));
            }
        }
        None
    }

    /// Whether a name test of `find` (`-name 'audit*'`) could match a protected file or a
    /// directory above one: a component of a protected path, or a file rewind keeps in its
    /// own directories.
    fn names_match(&self, patterns: &[String]) -> bool {
        /// Files rewind keeps in its configuration, state and cache directories.
        const INSIDE: &[&str] = &[
            "config.toml",
            "audit.jsonl",
            "audit.jsonl.head",
            "sessions.json",
            "inventory.json",
            "token.json",
            "catalog.toml",
            "shell.toml",
        ];
        let mut names: Vec<&str> = INSIDE.to_vec();
        for spot in self.spots() {
            let (Place::File(p) | Place::Under(p) | Place::Tail(p)) = &spot.place;
            names.extend(p.split('/').filter(|c| !c.is_empty()));
        }
        patterns.iter().any(|pattern| {
            let pattern = pattern.trim_matches(['"', '\'']).to_ascii_lowercase();
            names.iter().any(|name| glob_matches(&pattern, name))
        })
    }

    /// The protected file directly inside the directory `word` names, if any (a copy into
    /// that directory may replace it).
    fn parent_of(&self, word: &str) -> Option<(What, String)> {
        let dir = norm_path(word, self.home());
        if dir.is_empty() {
            return None;
        }
        self.spots().iter().find_map(|spot| {
            let hit = match &spot.place {
                Place::File(file) => file
                    .rsplit_once('/')
                    .is_some_and(|(parent, _)| parent == dir),
                Place::Under(_) => false,
                Place::Tail(tail) => tail_dir(tail).is_some_and(|d| ends_with_components(&dir, d)),
            };
            hit.then(|| (spot.what, word.to_owned()))
        })
    }

    /// As [`Protected::find`], a relative path also read from each of `dirs`.
    fn find_from(&self, word: &str, destructive: bool, dirs: &Dirs) -> Option<(What, String)> {
        // `$PWD/x` and `$(pwd)/x` are `./x`.
        if let Some(rest) = in_working_directory(word) {
            return self
                .find_from(&format!(".{rest}"), destructive, dirs)
                .map(|(what, _)| (what, word.to_owned()));
        }
        self.read_in_dirs(word, dirs, |path| self.find(path, destructive))
    }

    /// As [`Protected::parent_of`], a relative path also read from each of `dirs`.
    fn parent_from(&self, word: &str, dirs: &Dirs) -> Option<(What, String)> {
        self.read_in_dirs(word, dirs, |path| self.parent_of(path))
    }

    /// What `look` finds at `word`, or, for a relative path, at `word` read from each of
    /// `dirs` (shown as the call wrote it); from a directory not known, a relative path may
    /// be anything of rewind's.
    fn read_in_dirs(
        &self,
        word: &str,
        dirs: &Dirs,
        look: impl Fn(&str) -> Option<(What, String)>,
    ) -> Option<(What, String)> {
        look(word).or_else(|| {
            if !relative(word, self.home()) {
                return None;
            }
            let found = dirs
                .known
                .iter()
                .find_map(|dir| look(&format!("{dir}/{word}")))
                .map(|(what, _)| what);
            found
                .or(dirs.unknown.then_some(What::Unseen))
                .map(|what| (what, word.to_owned()))
        })
    }

    /// Whether `text` (code, a URL, an argument) names the ZVM's own address.
    fn names_zvm(&self, text: &str) -> bool {
        let text = text.to_ascii_lowercase();
        self.zvm.iter().any(|host| contains_host(&text, host))
    }

    /// Whether `text` names a protected file anywhere in it (an interpreter's code).
    fn mentions(&self, text: &str) -> Option<(What, String)> {
        self.mentions_among(text, self.spots())
    }

    /// As [`Protected::mentions`], among `spots`.
    fn mentions_among<'s>(
        &self,
        text: &str,
        spots: impl IntoIterator<Item = &'s Spot>,
    ) -> Option<(What, String)> {
        let normal = norm_text(text, self.home());
        spots.into_iter().find_map(|spot| {
            let needle = match &spot.place {
                Place::File(p) | Place::Under(p) | Place::Tail(p) => p.as_str(),
            };
            (!needle.is_empty() && normal.contains(needle)).then(|| (spot.what, spot.shown.clone()))
        })
    }

    /// Whether `text` can name nothing protected, so that it need not be parsed: it holds no
    /// needle, and no word of it is an absolute path above a protected file or directory.
    fn quick_miss(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        let dequoted: String = lower
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\' | '`'))
            .collect();
        let slashed = lower.replace('\\', "/");
        // Most texts hold no quote or backslash: one spelling to search.
        let same = slashed == dequoted;
        let holds = |needle: &str| dequoted.contains(needle) || (!same && slashed.contains(needle));
        // The fixed names first: a text holding one is parsed whatever the rest gathers.
        if NEEDLES.iter().any(|n| holds(n)) {
            return false;
        }
        let needle = self.needles().iter().any(|n| holds(n));
        !needle
            && !self.names_an_ancestor(&dequoted)
            && (same || !self.names_an_ancestor(&slashed))
            && !changes_directory_unseen(&lower)
    }

    /// Whether a word of `text` is an absolute path that [`Protected::find`] reads as naming,
    /// or lying above, something protected (`rm -rf /`, `rm -rf /home`, `rm -rf /home/*`): no
    /// needle is in such a word, and removing it removes what is under it.
    fn names_an_ancestor(&self, text: &str) -> bool {
        text.split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>' | '=')
        })
        .filter(|word| word.starts_with('/'))
        .any(|word| self.find(word, true).is_some())
    }
}

/// The single files under protection: the configuration in use, the catalogs, the audit
/// trail, the ZVM's certificate, this binary and every host's user and administrator files.
fn file_spots(named: &Named, home: Option<&str>) -> Vec<Spot> {
    let mut spots = Vec::new();
    let mut file = |path: &Path, what| {
        let shown = path.to_string_lossy().into_owned();
        spots.push(Spot {
            place: Place::File(norm_path(&shown, home)),
            what,
            shown,
        });
    };
    if let Some(origin) = &named.origin {
        file(origin, What::Config);
    }
    if let Some(path) = std::env::var_os("REWIND_CONFIG").filter(|p| !p.is_empty()) {
        file(Path::new(&path), What::Config);
    }
    for catalog in named
        .catalogs
        .iter()
        .cloned()
        .chain(crate::config::default_user_catalog())
    {
        file(&catalog, What::Catalog);
    }
    if let Some(audit) = &named.audit {
        file(audit, What::Audit);
        // The trail's head, which `log --verify` checks the trail against.
        file(&crate::audit::head_path(audit), What::Audit);
    }
    if let Some(ca) = &named.ca_cert {
        file(ca, What::Certificate);
    }
    if let Ok(exe) = std::env::current_exe() {
        // The running binary and its siblings: the hook may run as `rewind-hook` while the
        // settings and `install` name `rewind`, or the reverse.
        let real = std::fs::canonicalize(&exe).ok();
        for exe in std::iter::once(exe).chain(real) {
            for sibling in ["rewind", "rewind-hook", "rewind-mcp"] {
                file(&exe.with_file_name(sibling), What::Binary);
            }
            file(&exe, What::Binary);
        }
    }
    for host in Host::ALL {
        let layout = host.settings();
        if let Ok(user) = (layout.user)() {
            file(&user, What::Hooks(layout.title));
        }
        for managed in layout.managed.paths() {
            file(Path::new(managed), What::Hooks(layout.title));
        }
    }
    spots
}

/// The directories under protection (rewind's configuration, state and token cache) and the
/// hook settings files of every host wherever the project is.
fn dir_spots(home: Option<&str>, token_cache: Option<Spot>, managed: bool) -> Vec<Spot> {
    let mut spots = Vec::new();
    if let Some(home_dir) = crate::config::home_dir() {
        spots.push(Spot::under(
            &home_dir.join(".config/rewind"),
            What::Config,
            home,
        ));
    }
    spots.push(Spot::under(Path::new("/etc/rewind"), What::Config, home));
    if managed {
        // ssh's own files (not `known_hosts`): where the hook reads a destination's machine.
        let user = crate::config::home_dir().map(|h| h.join(".ssh"));
        for dir in user
            .iter()
            .map(PathBuf::as_path)
            .chain([Path::new("/etc/ssh")])
        {
            let (file, included) = if dir.starts_with("/etc/ssh") {
                ("ssh_config", "ssh_config.d")
            } else {
                ("config", "config.d")
            };
            let shown = dir.join(file).to_string_lossy().into_owned();
            spots.push(Spot {
                place: Place::File(norm_path(&shown, home)),
                what: What::SshConfig,
                shown,
            });
            spots.push(Spot::under(&dir.join(included), What::SshConfig, home));
        }
    }
    if let Ok(dir) = crate::config::state_dir() {
        spots.push(Spot::under(&dir, What::State, home));
    }
    spots.extend(token_cache);
    spots.push(Spot {
        place: Place::Tail(String::from(".rewind.toml")),
        what: What::Config,
        shown: String::from(".rewind.toml"),
    });
    for (tail, host) in HOOK_TAILS {
        spots.push(Spot {
            place: Place::Tail((*tail).to_owned()),
            what: What::Hooks(host),
            shown: (*tail).to_owned(),
        });
    }
    spots
}

/// The ZVM's host (lower-case) and the environment variables that hold its secrets.
fn zvm_facts(config: &Config) -> (Vec<String>, Vec<String>) {
    let mut zvm = Vec::new();
    let mut secrets = Vec::new();
    if let Some(config) = &config.zvm {
        if let Ok(uri) = config.url.parse::<ureq::http::Uri>()
            && let Some(host) = uri.host()
        {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            zvm.push(host.to_ascii_lowercase());
        }
        for source in std::iter::once(&config.password).chain(&config.client_secret) {
            if let SecretSource::Env { var, .. } = source {
                secrets.push(var.clone());
            }
        }
    }
    (zvm, secrets)
}

/// The ask for `act` on `what`, naming the path as the call wrote it.
fn ask(act: Act, what: What, path: &str) -> String {
    format!(
        "rewind: this {} {} ({}). rewind asks a person before any call that could switch off or get around its own safety net; approve only if that is what you mean.",
        act.verb(),
        what.describe(),
        crate::redact::redact_text(&shell::clip(path))
    )
}

fn ask_run(what: &str) -> String {
    format!(
        "rewind: this {what}. rewind asks a person before any call that could switch off or get around its own safety net; approve only if that is what you mean."
    )
}

/// The ask for a call that would undo the safety net, if it is one. Runs before the
/// catalogs: a host's file tool or shell tool needs none.
pub(crate) fn check_call(call: &ToolCall, protected: &Protected) -> Option<String> {
    match call.tool.as_str() {
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            file_tool(&call.input, call.cwd.as_deref(), protected)
        }
        // Reading asks for the token cache alone, so nothing else is gathered.
        "Read" | "NotebookRead" => {
            let dirs = Dirs::at(call.cwd.as_deref(), protected.home());
            let token_cache =
                |path: &str| protected.find_among(path, false, protected.token_cache());
            paths_of(&call.input).into_iter().find_map(|path| {
                let (what, shown) = protected.read_in_dirs(&path, &dirs, token_cache)?;
                Some(ask(Act::Read, what, &shown))
            })
        }
        "Bash" => command_text(&call.input)
            .and_then(|c| command(&c, Dialect::Posix, call.cwd.as_deref(), protected)),
        "PowerShell" => command_text(&call.input)
            .and_then(|c| command(&c, Dialect::PowerShell, call.cwd.as_deref(), protected)),
        // Text typed into a shell already running (Codex `write_stdin`, Copilot
        // `write_bash`/`write_powershell`) runs as a command does.
        crate::catalog::TYPED_SHELL => command_text(&call.input)
            .and_then(|c| command(&c, Dialect::Posix, call.cwd.as_deref(), protected)),
        crate::catalog::TYPED_POWERSHELL => command_text(&call.input)
            .and_then(|c| command(&c, Dialect::PowerShell, call.cwd.as_deref(), protected)),
        _ => mcp_tool(call, protected),
    }
}

fn command_text(input: &Value) -> Option<String> {
    input
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The MCP twins of restore on rewind's own server, and a ZVM URL given to any tool.
fn mcp_tool(call: &ToolCall, protected: &Protected) -> Option<String> {
    let (server, tool) = match crate::catalog::ToolName::parse(&call.tool, call.server.as_deref()) {
        crate::catalog::ToolName::Mcp { server, tool } => (server, tool),
        crate::catalog::ToolName::Host(_) => return None,
    };
    if server == "rewind" {
        match tool.as_str() {
            "recover_file" => {
                return Some(ask_run(
                    "restores a guest file from a Zerto checkpoint onto this machine (rewind mcp's recover_file can read any file of any protected VM)",
                ));
            }
            "flr_end" => {
                return Some(ask_run(
                    "unmounts a File Level Restore session (rewind mcp's flr_end), which may be a person's restore in progress",
                ));
            }
            "restore_vm" => {
                return Some(ask_run(
                    "puts a whole VM back to a Zerto checkpoint or previews it (rewind mcp's restore_vm)",
                ));
            }
            _ => return None,
        }
    }
    let mut strings = Vec::new();
    collect_strings(&call.input, &mut strings, 0);
    strings.iter().find_map(|s| {
        let lower = s.to_ascii_lowercase();
        protected
            .zvm
            .iter()
            .any(|host| {
                lower.contains(&format!("://{host}"))
                    || lower.contains(&format!("{host}:"))
                    || lower == *host
            })
            .then(|| {
                ask_run(&format!(
                    "gives {tool} the ZVM's own address ({}), which rewind's checkpoints depend on; its requests are rewind's to make",
                    shell::clip(s)
                ))
            })
    })
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > 16 {
        return;
    }
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_strings(v, out, depth + 1)),
        Value::Object(map) => map
            .values()
            .for_each(|v| collect_strings(v, out, depth + 1)),
        _ => {}
    }
}

/// The paths a file tool's arguments name.
fn paths_of(input: &Value) -> Vec<String> {
    const KEYS: &[&str] = &[
        "file_path",
        "path",
        "filePath",
        "notebook_path",
        "target_file",
        "file",
        "absolute_path",
    ];
    let mut paths: Vec<String> = KEYS
        .iter()
        .filter_map(|k| input.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    // `read_many_files` and similar: a list of paths.
    for key in ["paths", "file_paths"] {
        if let Some(list) = input.get(key).and_then(Value::as_array) {
            paths.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
    // Codex's and Copilot's `apply_patch`: the files the patch names.
    let mut strings = Vec::new();
    collect_strings(input, &mut strings, 0);
    for text in strings {
        if text.contains("*** Begin Patch") {
            paths.extend(patch_paths(text));
        }
    }
    paths
}

/// The files an `apply_patch` patch adds, updates, deletes or moves to.
fn patch_paths(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|line| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        })
        .map(|p| p.trim().to_owned())
        .collect()
}

/// The ask for a file tool's edit of a protected file, its relative paths read from `cwd`.
fn file_tool(input: &Value, cwd: Option<&Path>, protected: &Protected) -> Option<String> {
    let dirs = Dirs::at(cwd, protected.home());
    paths_of(input).into_iter().find_map(|path| {
        let (what, shown) = protected.find_from(&path, false, &dirs)?;
        Some(ask(Act::Edit, what, &shown))
    })
}

/// The ask for a shell command that would undo the safety net, if it is one. `cwd`: the
/// directory it runs in, when the caller knows.
pub(crate) fn command(
    text: &str,
    dialect: Dialect,
    cwd: Option<&Path>,
    protected: &Protected,
) -> Option<String> {
    // The directory must miss too: a relative path from a protected directory or one above
    // it (`rm config.toml` in `~/.config/rewind`, `rm -rf home` in `/`) may hold no needle.
    // `..` climbs from the directory to where a needle-free word names an ancestor.
    let cwd_misses =
        || cwd.is_none_or(|c| protected.quick_miss(&c.to_string_lossy()) && !text.contains(".."));
    if protected.quick_miss(text) && cwd_misses() {
        return None;
    }
    // The token cache and the ZVM's secrets: by any means at all.
    if let Some(found) = reads_secrets(text, protected) {
        return Some(found);
    }
    let mut dirs = Dirs::at(cwd, protected.home());
    commands(text, dialect, protected, &mut dirs, &[], 0)
}

fn reads_secrets(text: &str, protected: &Protected) -> Option<String> {
    if let Some((what, shown)) = protected.mentions_among(text, protected.token_cache()) {
        return Some(ask(Act::Read, what, &shown));
    }
    protected
        .secrets
        .iter()
        .find(|var| contains_word(text, var))
        .map(|var| {
            ask_run(&format!(
                "reads ${var}, the ZVM password rewind's checkpoints are taken with"
            ))
        })
}

/// What a variable the command sets may be built from before the command sets any: the
/// home directory (`d=$HOME/.claude`), spelled as a path is read (`~`).
const OUTER: &[(&str, &str)] = &[("HOME", "~")];

fn commands(
    text: &str,
    dialect: Dialect,
    protected: &Protected,
    dirs: &mut Dirs,
    vars: &[(String, String)],
    depth: usize,
) -> Option<String> {
    // Past the depth followed, or not parsed: what it names is all there is to go on.
    let parsed = (depth <= MAX_DEPTH)
        .then(|| shell::simple_commands(text, dialect).ok())
        .flatten();
    let Some(parsed) = parsed else {
        return protected
            .mentions(text)
            .map(|(what, shown)| ask(Act::Edit, what, &shown));
    };
    // `d=~/.claude; … $d/settings.json`: the variables the text sets, read as the shell
    // analysis reads them.
    let mut vars = vars.to_vec();
    if dialect == Dialect::Posix {
        let mut around: Vec<(String, String)> = OUTER
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        around.extend(vars.iter().cloned());
        let set = shell::variables(&parsed, &around);
        vars.extend(set);
    }
    // `$d = "$HOME\.claude"; Remove-Item "$d\settings.json"`: in PowerShell, each word with
    // the value its variables hold where it is used.
    let mut values = powershell::Values::default();
    let mut before: Option<Cmd> = None;
    parsed.iter().find_map(|cmd| {
        let cmd = if dialect == Dialect::Posix {
            bind(cmd, &vars)
        } else {
            let bound = values.bind(cmd);
            values.note(cmd);
            bound
        };
        let producer = before.replace(cmd.clone());
        if let Some(target) = cd_target(&cmd, protected.home()) {
            dirs.change_to(&target, protected.home());
            return None;
        }
        if let Some(found) = producer
            .filter(|_| cmd.stdin == Stdin::Pipe)
            .and_then(|producer| from_a_pipe(&cmd, &producer, protected, dirs))
        {
            return Some(found);
        }
        simple(&cmd, dialect, protected, dirs, &vars, depth)
    })
}

/// `find ~/.claude -type f | xargs rm`: a command that changes the names its input lists
/// (`xargs`, `parallel` running a program the table says changes its operands), fed by a
/// command that names a protected path (or a directory above one).
fn from_a_pipe(cmd: &Cmd, producer: &Cmd, protected: &Protected, dirs: &Dirs) -> Option<String> {
    let name = program_name(cmd.words.first()?.text());
    if !matches!(name.as_str(), "xargs" | "parallel") {
        return None;
    }
    let Next::Argv(mut words) = shell::wrappers::unwrap(catalog()?, &cmd.words, &cmd.stdin) else {
        return None;
    };
    words.push(shell::Arg::literal(String::from("{}")));
    let inner = Cmd {
        words,
        ..Cmd::default()
    };
    if !shell::writes::changes(&inner)
        .iter()
        .any(|c| c.path.contains("{}"))
    {
        return None;
    }
    producer.words.iter().skip(1).find_map(|word| {
        let (what, shown) = protected.find_from(word.text(), true, dirs)?;
        Some(ask(Act::Remove, what, &shown))
    })
}

/// `cmd` with its words and the file it redirects to given the values of `vars`.
fn bind(cmd: &Cmd, vars: &[(String, String)]) -> Cmd {
    let mut bound = if cmd.words.iter().any(|w| w.value.is_none()) {
        shell::with_values(cmd, vars)
    } else {
        cmd.clone()
    };
    if let Some(target) = cmd.writes.as_deref().filter(|t| t.contains('$')) {
        let word = Cmd {
            words: vec![shell::Arg::dynamic(target.to_owned())],
            ..Cmd::default()
        };
        if let Some(value) = shell::with_values(&word, vars)
            .words
            .first()
            .and_then(|w| w.value.clone())
        {
            bound.writes = Some(value);
        }
    }
    bound
}

/// The directory `env` or `sudo` runs its command in (`-C`/`-D dir`, `--chdir[=]dir`), if
/// the command names one.
fn wrapper_dir(cmd: &Cmd) -> Option<CdTo<'_>> {
    let (first, args) = cmd.words.split_first()?;
    let short = match program_name(first.text()).as_str() {
        "env" => "-C",
        "sudo" => "-D",
        _ => return None,
    };
    let options = args
        .iter()
        .enumerate()
        .take_while(|(_, a)| a.text().starts_with('-'));
    for (i, word) in options {
        let text = word.text();
        if let Some(dir) = text.strip_prefix("--chdir=") {
            return Some(word.value.as_ref().map_or(CdTo::Unseen, |_| CdTo::Dir(dir)));
        }
        if text == short || text == "--chdir" {
            let dir = args.get(i + 1)?;
            return Some(dir.value.as_deref().map_or(CdTo::Unseen, CdTo::Dir));
        }
    }
    None
}

/// Where a command that changes the directory (`cd`, `pushd`, `Set-Location`) goes; `None`
/// for any other command.
fn cd_target<'c>(cmd: &'c Cmd, home: Option<&str>) -> Option<CdTo<'c>> {
    let words = match cmd.words.first().map(|w| program_name(w.text())).as_deref() {
        Some("builtin" | "command") => &cmd.words[1..],
        _ => &cmd.words[..],
    };
    let (first, args) = words.split_first()?;
    if !DIRECTORY_CHANGERS.contains(&program_name(first.text()).as_str()) {
        return None;
    }
    let mut operands = args.iter().filter(|a| {
        let text = a.text();
        !(text.starts_with('-') && text.len() > 1) || text.eq_ignore_ascii_case("-")
    });
    Some(match operands.next() {
        None if args.iter().any(|a| a.value.is_none()) => CdTo::Unseen,
        None => CdTo::Home,
        Some(arg) => {
            if let Some(value) = arg.value.as_deref() {
                return Some(CdTo::Dir(value));
            }
            // `"$HOME"/.claude`: a home spelling is known.
            let dir = norm_path(&arg.raw, home);
            if absolute(&dir) && !dir.contains(['$', '`']) {
                CdTo::Dir(&arg.raw)
            } else {
                CdTo::Unseen
            }
        }
    })
}

/// A program's name: its file name, lower-case, without `.exe`.
fn program_name(word: &str) -> String {
    let name = word
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase();
    name.strip_suffix(".exe").map(str::to_owned).unwrap_or(name)
}

/// The built-in shell catalog, which the wrapper table reads for the few wrappers whose
/// reading depends on it (`alias`, `xargs`, `parallel`); made on first use, and its entries
/// read only if one of those asks (as the hook's own analysis reads them).
fn catalog() -> Option<&'static shell::ShellCatalog> {
    static CATALOG: std::sync::OnceLock<Option<shell::ShellCatalog>> = std::sync::OnceLock::new();
    CATALOG
        .get_or_init(|| shell::ShellCatalog::load(true, &[] as &[&Path]).ok())
        .as_ref()
}

/// Most wrappers looked through in one simple command.
const MAX_WRAPPERS: usize = 16;

/// One simple command: what it writes, removes or unpacks, what it runs behind its wrappers
/// (the shell analysis's table: `sudo --user root`, `env -i`, `busybox`, `timeout 5`,
/// `bash -c '…'`, `find -exec`, `python3 -c '…'`), and `rewind` itself.
fn simple(
    cmd: &Cmd,
    dialect: Dialect,
    protected: &Protected,
    dirs: &mut Dirs,
    vars: &[(String, String)],
    depth: usize,
) -> Option<String> {
    if let Some(target) = &cmd.writes
        && let Some((what, shown)) = protected.find_from(target, false, dirs)
    {
        return Some(ask(Act::Edit, what, &shown));
    }
    let mut level = Cmd {
        writes: None,
        ..cmd.clone()
    };
    // `env -C dir rm x`, `sudo -D dir rm x`: that one command runs there.
    let mut there: Option<Dirs> = None;
    for _ in 0..MAX_WRAPPERS {
        let dirs: &Dirs = there.as_ref().unwrap_or(dirs);
        if let Some(found) = program(&level, protected, dirs) {
            return Some(found);
        }
        let Some(catalog) = catalog() else {
            // No wrapper table: what the words name is all there is to go on.
            return words_mention(&level.words, protected);
        };
        let next = shell::wrappers::unwrap(catalog, &level.words, &level.stdin);
        let nested = |text: &str, dialect| {
            let mut inner = dirs.clone();
            commands(text, dialect, protected, &mut inner, vars, depth + 1)
        };
        match next {
            Next::No | Next::Nothing => return interpreter_operands(&level, protected),
            Next::Argv(words) => {
                if let Some(target) = wrapper_dir(&level) {
                    let mut moved = dirs.clone();
                    moved.change_to(&target, protected.home());
                    there = Some(moved);
                }
                level = Cmd {
                    words,
                    writes: None,
                    ..cmd.clone()
                };
            }
            Next::Text(text, inner) => {
                return match &text.value {
                    Some(value) => nested(value, inner),
                    None => words_mention(std::slice::from_ref(&text), protected),
                };
            }
            Next::Texts(texts, inner) => {
                return texts.iter().find_map(|text| match &text.value {
                    Some(value) => nested(value, inner),
                    None => words_mention(std::slice::from_ref(text), protected),
                });
            }
            Next::Commands(list) => {
                let mut dirs = dirs.clone();
                return list.into_iter().find_map(|words| {
                    let inner = Cmd {
                        words,
                        writes: None,
                        ..cmd.clone()
                    };
                    simple(&inner, dialect, protected, &mut dirs, vars, depth + 1)
                });
            }
            // `echo 'rm ~/.claude/settings.json' | sh`: the text the pipe carries.
            Next::Piped(_) => {
                return match cmd.piped.as_ref().and_then(|p| p.value.as_deref()) {
                    Some(text) if cmd.stdin == Stdin::Pipe => nested(text, dialect),
                    _ => None,
                };
            }
            Next::Opaque(_) | Next::Ask(_) => return words_mention(&level.words, protected),
            Next::Code(handed) => return code(&handed, protected, dirs, vars, depth),
        }
    }
    words_mention(&level.words, protected)
}

/// What one program (wrappers not yet looked through) does to something protected: `rewind`
/// run, a request to the ZVM, or a path it writes, removes or unpacks into, by the shell
/// analysis's table of what programs write.
fn program(cmd: &Cmd, protected: &Protected, dirs: &Dirs) -> Option<String> {
    let (first, args) = cmd.words.split_first()?;
    let program = program_name(first.text());
    let args: Vec<String> = args.iter().map(|a| a.text().to_owned()).collect();
    if (program == "rewind" || program.strip_prefix("rewind-").is_some_and(|r| r != "mcp"))
        && let Some(found) = rewind_command(&args)
    {
        return Some(found);
    }
    let stdin_text = match &cmd.stdin {
        Stdin::Text(arg) => Some(arg.text().to_owned()),
        _ => None,
    };
    if (is_http_client(&program) || is_interpreter(&program))
        && let Some(text) = args
            .iter()
            .map(String::as_str)
            .chain(stdin_text.as_deref())
            .find(|a| protected.names_zvm(a))
    {
        return Some(ask_run(&format!(
            "sends a request to the ZVM's own address ({}), which rewind's checkpoints depend on; its requests are rewind's to make",
            shell::clip(text)
        )));
    }
    let copier = shell::writes::is_copier(&program);
    shell::writes::changes(cmd).into_iter().find_map(|change| {
        let (act, destructive) = match change.effect {
            Effect::Write => (Act::Edit, false),
            Effect::Remove => (Act::Remove, true),
            Effect::Into => (Act::Edit, true),
        };
        let (what, shown) = protected
            .find_from(&change.path, destructive, dirs)
            // A copy into the directory of a protected file may replace it.
            .or_else(|| {
                (copier && change.effect == Effect::Write)
                    .then(|| protected.parent_from(&change.path, dirs))
                    .flatten()
            })?;
        // `find ~ -name '*.pyc' -delete`: only what the name tests match is removed.
        if !change.names.is_empty() && !protected.names_match(&change.names) {
            return None;
        }
        Some(ask(act, what, &shown))
    })
}

/// The operands of an interpreter that runs a script not read here (`python3 fix.py
/// ~/.claude/settings.json`): a protected path among them may be written.
fn interpreter_operands(cmd: &Cmd, protected: &Protected) -> Option<String> {
    let first = cmd.words.first()?;
    if !is_interpreter(&program_name(first.text())) {
        return None;
    }
    let stdin_text = match &cmd.stdin {
        Stdin::Text(arg) => Some(arg.text()),
        _ => None,
    };
    cmd.words[1..]
        .iter()
        .map(shell::Arg::text)
        .chain(stdin_text)
        .find_map(|a| protected.mentions(a))
        .map(|(what, shown)| ask(Act::Edit, what, &shown))
}

/// Words that run as something not read here (`eval "$x"`): a protected path they name.
fn words_mention(words: &[shell::Arg], protected: &Protected) -> Option<String> {
    words
        .iter()
        .find_map(|w| protected.mentions(&w.raw))
        .map(|(what, shown)| ask(Act::Edit, what, &shown))
}

/// Code handed to an interpreter: the commands it starts, judged as commands, and, when it
/// calls something that writes, removes or moves files (`shutil.rmtree`, `open(…, 'w')`,
/// `fs.rmSync`, `unlink`), every path its strings name.
fn code(
    handed: &Handed,
    protected: &Protected,
    dirs: &Dirs,
    vars: &[(String, String)],
    depth: usize,
) -> Option<String> {
    handed.texts.iter().find_map(|text| {
        let Some(code) = text.value.as_deref() else {
            return words_mention(std::slice::from_ref(text), protected);
        };
        code_text(handed.lang, code, protected, dirs, vars, depth)
    })
}

fn code_text(
    lang: shell::code::Lang,
    code: &str,
    protected: &Protected,
    dirs: &Dirs,
    vars: &[(String, String)],
    depth: usize,
) -> Option<String> {
    if depth > MAX_DEPTH {
        return protected
            .mentions(code)
            .map(|(what, shown)| ask(Act::Edit, what, &shown));
    }
    for run in shell::code::scan(lang, code).runs {
        let found = match run {
            shell::code::Run::Command(text) => commands(
                &text,
                Dialect::Posix,
                protected,
                &mut dirs.clone(),
                vars,
                depth + 1,
            ),
            shell::code::Run::Code(inner, text) => {
                code_text(inner, &text, protected, dirs, vars, depth + 1)
            }
            shell::code::Run::Dynamic(_) => None,
        };
        if found.is_some() {
            return found;
        }
    }
    if !shell::code::changes_files(lang, code) {
        return None;
    }
    if let Some((what, shown)) = protected.mentions(code) {
        return Some(ask(Act::Edit, what, &shown));
    }
    path_words(code).find_map(|word| {
        let (what, shown) = protected.find_from(word, true, dirs)?;
        Some(ask(Act::Edit, what, &shown))
    })
}

/// The words of code that look like paths: a `/` in them, or a name starting with a dot
/// (`'.claude'` in `os.path.join(home, '.claude')`).
fn path_words(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| {
        !(c.is_alphanumeric()
            || matches!(
                c,
                '.' | '_' | '-' | '/' | '~' | '$' | '{' | '}' | ':' | '\\'
            ))
    })
    .filter(|w| {
        !matches!(*w, "" | "." | ".." | "/" | "//")
            && (w.contains('/') || (w.starts_with('.') && w.len() > 2))
    })
}

fn is_http_client(program: &str) -> bool {
    matches!(
        program,
        "curl"
            | "wget"
            | "http"
            | "https"
            | "xh"
            | "httpie"
            | "aria2c"
            | "nc"
            | "ncat"
            | "socat"
            | "openssl"
            | "invoke-restmethod"
            | "irm"
            | "invoke-webrequest"
            | "iwr"
            | "curl.exe"
    )
}

fn is_interpreter(program: &str) -> bool {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "python"
            | "node"
            | "nodejs"
            | "deno"
            | "bun"
            | "perl"
            | "ruby"
            | "php"
            | "lua"
            | "osascript"
            | "pwsh"
            | "powershell"
            | "jshell"
            | "groovy"
    )
}

/// `rewind <subcommand>` that would undo the net.
fn rewind_command(args: &[String]) -> Option<String> {
    let mut words = args.iter().map(String::as_str).filter(|w| !w.is_empty());
    let mut positional = Vec::new();
    let mut write = false;
    while let Some(word) = words.next() {
        if word == "--config" {
            words.next();
        } else if word == "--write" {
            write = true;
        } else if !word.starts_with('-') {
            positional.push(word);
        }
    }
    let what = match positional.as_slice() {
        ["recover", ..] => {
            "runs `rewind recover`, which restores a guest file from a Zerto checkpoint (any file of any protected VM) onto this machine"
        }
        ["restore-vm", ..] => {
            "runs `rewind restore-vm`, which puts a whole protected VM back to an earlier checkpoint (or starts a failover test of it): an operator's decision"
        }
        ["flr", "end", ..] => {
            "runs `rewind flr end`, which unmounts a File Level Restore session that may be a person's restore in progress"
        }
        ["uninstall", ..] => {
            "runs `rewind uninstall`, which takes rewind's hook out of a host's settings so that nothing is guarded"
        }
        ["install", ..] => {
            "runs `rewind install`, which rewrites rewind's hook entries in a host's settings"
        }
        ["trust", ..] => {
            "runs `rewind trust`, which changes which certificate rewind trusts for the ZVM"
        }
        ["catalog", "add", ..] => {
            "runs `rewind catalog add`, which edits rewind's catalog, which decides what is checkpointed"
        }
        ["catalog", "scan", ..] if write => {
            "runs `rewind catalog scan --write`, which edits rewind's catalog, which decides what is checkpointed"
        }
        _ => return None,
    };
    Some(ask_run(what))
}

/// Whether `text` holds `word` with no letter, digit or `_` on either side.
fn contains_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        !text[..at].chars().next_back().is_some_and(is_word)
            && !text[at + word.len()..].chars().next().is_some_and(is_word)
    })
}

/// Whether `text` names `host` as a host (not inside a longer name).
fn contains_host(text: &str, host: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
    text.match_indices(host).any(|(at, _)| {
        let mut after = text[at + host.len()..].chars();
        let longer = match after.next() {
            Some(c) if c.is_ascii_alphanumeric() || c == '-' => true,
            // `zvm.example.org` is another name; `zvm.example.` (a sentence's end) is not.
            Some('.') => after.next().is_some_and(|c| c.is_ascii_alphanumeric()),
            _ => false,
        };
        !text[..at].chars().next_back().is_some_and(is_name) && !longer
    })
}

/// A path as written, normalised for comparison: quotes dropped, `~`, `$HOME`, `${HOME}`
/// and `$env:USERPROFILE` replaced by the home directory, `\` read as `/`, `.` components
/// and doubled slashes dropped, `..` applied, lower-case.
fn norm_path(word: &str, home: Option<&str>) -> String {
    let text = norm_text(word.trim(), home);
    let absolute = text.starts_with('/');
    // Most paths are already normal (no empty, `.` or `..` part): nothing to rebuild.
    // Split as bytes: `str::split` on a char searches for each part anew.
    if text
        .as_bytes()
        .split(|&b| b == b'/')
        .skip(usize::from(absolute))
        .all(|part| !matches!(part, b"" | b"." | b".."))
    {
        return text;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// How a command names the home directory (lower-case): POSIX, PowerShell and cmd.exe.
const HOME_SPELLINGS: [&str; 5] = [
    "${home}",
    "$home",
    "$env:userprofile",
    "$env:home",
    "%userprofile%",
];

/// Text with home-directory spellings replaced, quotes dropped and `\` read as `/`,
/// lower-case.
fn norm_text(text: &str, home: Option<&str>) -> String {
    // Byte tests, not `contains` of a char set (a char at a time): this runs for every
    // protected path on every call that needs them, and most texts hold none of these.
    let holds = |text: &str, set: &[u8]| text.bytes().any(|b| set.contains(&b));
    let mut text = if holds(text, b"'\"`") {
        text.replace(['\'', '"', '`'], "")
    } else {
        text.to_owned()
    };
    text.make_ascii_lowercase();
    if holds(&text, b"\\") {
        text = text.replace('\\', "/");
    }
    // Every home spelling below holds `$`, `%` or `~`.
    if let Some(home) = home.filter(|_| holds(&text, b"$%~")) {
        for spelling in HOME_SPELLINGS {
            text = text.replace(spelling, home);
        }
        if text == "~" || text.starts_with("~/") {
            text = format!("{home}{}", &text[1..]);
        }
        text = text.replace(" ~/", &format!(" {home}/"));
        text = text.replace("=~/", &format!("={home}/"));
        text = text.replace("(~/", &format!("({home}/"));
    }
    text
}

/// Whether `text` (lower-case) changes to a directory its words do not name: `cd` alone (the
/// home directory), `cd -`, or a target that expands (`cd "$D"`). Relative paths after it
/// need no needle to reach something protected; after a `cd` to a named directory they do,
/// or the directory's own name is one.
fn changes_directory_unseen(text: &str) -> bool {
    // A command's end is a word of its own: `cd && …` goes home.
    let mut spaced = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, ';' | '&' | '|' | '(' | ')' | '\n') {
            spaced.push_str(" ; ");
        } else {
            spaced.push(c);
        }
    }
    let mut words = spaced.split_whitespace().peekable();
    while let Some(word) = words.next() {
        let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
        if !DIRECTORY_CHANGERS.contains(&name) {
            continue;
        }
        // Past its options (`cd -P`, `Set-Location -Path`).
        let target = loop {
            match words.peek() {
                Some(w) if w.starts_with('-') && *w != "-" => {
                    words.next();
                }
                other => break other.copied(),
            }
        };
        if target.is_none_or(|t| t == "-" || t == ";" || t.contains(['$', '`'])) {
            return true;
        }
    }
    false
}

/// Whether `word` is a relative path (not empty, not from `/`, `~` or a home spelling).
fn relative(word: &str, home: Option<&str>) -> bool {
    !word.trim().is_empty() && !word.starts_with('-') && !absolute(&norm_path(word, home))
}

/// Whether a normalised path is absolute: from `/`, or from a drive (`c:/users`).
fn absolute(path: &str) -> bool {
    match path.as_bytes() {
        [b'/', ..] => true,
        [drive, b':', b'/', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}

/// What follows the working directory's own name in `word` (`$PWD/x`, `"${PWD}"/x`,
/// `$(pwd)/x`), if it starts with one.
fn in_working_directory(word: &str) -> Option<&str> {
    let bare = word.trim_start_matches(['"', '\'']);
    ["$pwd", "${pwd}", "$(pwd)", "$env:pwd", "$pwd.path"]
        .iter()
        .find_map(|name| {
            let head = bare.get(..name.len())?;
            head.eq_ignore_ascii_case(name)
                .then(|| bare[name.len()..].trim_start_matches(['"', '\'']))
                .filter(|rest| rest.is_empty() || rest.starts_with(['/', '\\']))
        })
}

/// Whether the shell glob `pattern` (`*`, `?`, `[…]` read as any one character) matches
/// all of `name`.
fn glob_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|at| go(rest, &n[at..])),
            Some(('[', rest)) => match (rest.iter().position(|c| *c == ']'), n.split_first()) {
                (Some(end), Some((_, tail))) => go(&rest[end + 1..], tail),
                _ => false,
            },
            Some((c, rest)) => n
                .split_first()
                .is_some_and(|(first, tail)| (*c == '?' || c == first) && go(rest, tail)),
        }
    }
    // Stars in a row are one; the pattern is bounded, so the match is too.
    let mut p: Vec<char> = Vec::new();
    for c in pattern.chars().take(32) {
        if !(c == '*' && p.last() == Some(&'*')) {
            p.push(c);
        }
    }
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// Whether `path` is strictly inside `dir`.
fn is_under(path: &str, dir: &str) -> bool {
    path.len() > dir.len()
        && path.starts_with(dir)
        && (dir.ends_with('/') || path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// Whether `path` ends with the components of `tail`.
fn ends_with_components(path: &str, tail: &str) -> bool {
    path.strip_suffix(tail)
        .is_some_and(|head| head.is_empty() || head.ends_with('/'))
}

/// Whether `path` is inside a directory that `tail` names (`.github/hooks/x.json`).
fn is_under_tail(path: &str, tail: &str) -> bool {
    // At the start of each component, without building `/{tail}/` or a substring searcher
    // (which costs more to set up than a path is long).
    let starts = std::iter::once(0).chain(path.match_indices('/').map(|(at, _)| at + 1));
    starts.filter_map(|at| path.get(at..)).any(|rest| {
        rest.strip_prefix(tail)
            .is_some_and(|after| after.starts_with('/'))
    })
}

/// The directory part of a tail (`.claude` of `.claude/settings.json`).
fn tail_dir(tail: &str) -> Option<&str> {
    tail.rsplit_once('/').map(|(dir, _)| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path helpers, written to allocate nothing, answer as their plain definitions do
    /// (kept here as the reference), on paths built from the pieces that matter: separators,
    /// repeats that overlap, upper case, quotes, backslashes, non-ASCII.
    #[test]
    fn the_path_helpers_answer_as_their_definitions() {
        let pieces = [
            "", "/", "a", "a/a", ".github", "hooks", "A", "'", "\\", "é", "~", "$HOME",
        ];
        let (mut texts, mut tails): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
        for a in pieces {
            for b in pieces {
                tails.push(format!("{a}{b}"));
                tails.push(format!("{a}/{b}"));
                for c in pieces {
                    texts.push(format!("{a}{b}{c}"));
                    texts.push(format!("{a}/{b}/{c}"));
                }
            }
        }
        for path in &texts {
            for tail in &tails {
                assert_eq!(
                    ends_with_components(path, tail),
                    path == tail || path.ends_with(&format!("/{tail}")),
                    "{path:?} {tail:?}"
                );
                assert_eq!(
                    is_under_tail(path, tail),
                    path.starts_with(&format!("{tail}/")) || path.contains(&format!("/{tail}/")),
                    "{path:?} {tail:?}"
                );
            }
            // Before any home spelling is replaced (that part is unchanged).
            let plain: String = path
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '`'))
                .map(|c| {
                    if c == '\\' {
                        '/'
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect();
            assert_eq!(norm_text(path, None), plain, "{path:?}");
        }
    }

    /// A path already normal comes back as it is; one with empty, `.` or `..` parts is
    /// rebuilt, at the root as well as relative.
    #[test]
    fn paths_are_normalised_the_same_with_or_without_the_quick_return() {
        for (path, normal) in [
            ("/etc/rewind/config.toml", "/etc/rewind/config.toml"),
            ("/etc//rewind/./config.toml", "/etc/rewind/config.toml"),
            (
                "/etc/rewind/../rewind/config.toml",
                "/etc/rewind/config.toml",
            ),
            ("/", "/"),
            ("", ""),
            ("a/b/", "a/b"),
            ("./a", "a"),
            ("/home/u/.config/rewind", "/home/u/.config/rewind"),
            ("C:\\Users\\U\\.rewind", "c:/users/u/.rewind"),
            ("~/.config/rewind/../x", "/home/u/.config/x"),
        ] {
            assert_eq!(norm_path(path, Some("/home/u")), normal, "{path:?}");
        }
    }

    #[test]
    fn paths_normalise_home_spellings_and_dots() {
        let home = Some("/home/ann");
        assert_eq!(
            norm_path("~/.claude/./settings.json", home),
            "/home/ann/.claude/settings.json"
        );
        assert_eq!(
            norm_path("\"$HOME\"/.config/rewind/../rewind/config.toml", home),
            "/home/ann/.config/rewind/config.toml"
        );
        assert_eq!(
            norm_path(r"$env:USERPROFILE\.claude\settings.json", home),
            "/home/ann/.claude/settings.json"
        );
    }

    /// A machine with home `/home/ann`, a catalog outside the home directory, the audit trail,
    /// the token cache and every host's project files, and the ZVM `zvm.example`.
    fn protected() -> Protected {
        let home = String::from("/home/ann");
        let spot = |place, what| Spot {
            place,
            what,
            shown: String::from("x"),
        };
        let mut spots = vec![
            spot(
                Place::File(String::from("/srv/policy/vm-tools.toml")),
                What::Catalog,
            ),
            spot(
                Place::File(String::from("/home/ann/.claude/settings.json")),
                What::Hooks("Claude Code"),
            ),
            spot(
                Place::Under(String::from("/home/ann/.config/rewind")),
                What::Config,
            ),
            spot(
                Place::Under(String::from("/home/ann/.local/state/rewind")),
                What::State,
            ),
            spot(
                Place::Under(String::from("/home/ann/.cache/rewind")),
                What::TokenCache,
            ),
        ];
        spots.extend(
            HOOK_TAILS
                .iter()
                .map(|(tail, host)| spot(Place::Tail((*tail).to_owned()), What::Hooks(host))),
        );
        Protected::from_parts(
            spots,
            Some(home),
            vec![String::from("zvm.example")],
            vec![String::from("REWIND_ZVM_PASSWORD")],
        )
    }

    #[test]
    fn shell_commands_that_would_undo_rewind_ask_and_others_do_not() {
        let p = protected();
        let posix = [
            // Writes, under any spelling of the path or the program.
            ("echo x >> /srv/policy/vm-tools.toml", true),
            ("tee /srv/policy//./vm-tools.toml < x", true),
            (
                "sudo -n env A=1 nohup timeout 5 sed -i.bak s/a/b/ ~/.config/rewind/config.toml",
                true,
            ),
            ("install -m 600 x.toml -t ~/.config/rewind", true),
            ("cp -r ~/backup/.claude/settings.json ~/.claude/", true),
            ("cp ~/.claude/settings.json /tmp/settings.json", false),
            ("cp notes.txt ~/", false),
            ("cp ~/backup/settings.json ~/.claude/settings.json", true),
            ("ln -sf /dev/null ~/.claude/settings.json", true),
            (
                "dd if=/dev/zero of=/home/ann/.local/state/rewind/audit.jsonl",
                true,
            ),
            ("rm -rf ~/.config", true),
            ("rm -rf ~/.config/nvim", false),
            // A directory above them all, named by no needle.
            ("rm -rf /", true),
            ("rm -rf /home", true),
            ("rm -rf /srv/*", true),
            ("cd /tmp && rm -rf /srv", true),
            ("rm -rf /var", false),
            ("rm -rf /tmp/build", false),
            ("ls /", false),
            ("rm -f ~/.claude/*.json", true),
            ("rm -rf ~/.local/state/rewind/*", true),
            ("rm -rf ~/.local/state/rewind-old/*", false),
            ("rm .github/hooks/*", true),
            ("mv proj/.gemini proj/.gemini.off", true),
            ("perl -pi -e s/rewind/true/ ~/.codex/config.toml", true),
            (
                "python3 - <<'EOF'\nopen('/home/ann/.cursor/hooks.json','w').write('{}')\nEOF",
                true,
            ),
            ("eval 'rm ~/.codex/hooks.json'", true),
            (
                "sh -c \"truncate -s0 ~/.local/state/rewind/audit.jsonl\"",
                true,
            ),
            // The ZVM, the token cache and the password.
            (
                "wget -qO- --no-check-certificate https://zvm.example/v1/vpgs",
                true,
            ),
            ("curl https://zvm.example.org/", false),
            ("node -e \"fetch('https://ZVM.example:443/v1/vms')\"", true),
            ("base64 ~/.cache/rewind/tokens/abc.json", true),
            ("printenv REWIND_ZVM_PASSWORD", true),
            ("echo $REWIND_ZVM_PASSWORD_FILE", false),
            // rewind's own commands.
            ("rewind-1.2 uninstall --host codex", true),
            (
                "rewind --config /etc/r.toml recover --vm a --change b --path /x",
                true,
            ),
            ("rewind catalog scan", false),
            ("rewind-mcp", false),
            ("rewind guard --vm web01 --reason test", false),
            // Ordinary.
            ("git commit -am 'rewind: fix'", false),
            ("grep -r rewind ~/.claude/settings.json", false),
            ("ls ~/.cache/other", false),
        ];
        for (command, asks) in posix {
            assert_eq!(
                command_ask(command, Dialect::Posix, &p).is_some(),
                asks,
                "{command}"
            );
        }
        let powershell = [
            (
                r"Set-Content -Path $env:USERPROFILE\.claude\settings.json -Value '{}'",
                true,
            ),
            ("Remove-Item -Recurse ~/.config/rewind", true),
            (
                "Copy-Item x.json -Destination ~/.gemini/settings.json",
                true,
            ),
            ("Get-Content ~/.claude/settings.json", false),
            ("iwr https://zvm.example/v1/vms -SkipCertificateCheck", true),
            ("Invoke-WebRequest https://example.com", false),
        ];
        for (command, asks) in powershell {
            assert_eq!(
                command_ask(command, Dialect::PowerShell, &p).is_some(),
                asks,
                "{command}"
            );
        }
    }

    /// The issue's misses and their kin: the shell analysis's wrapper table, its reading of
    /// variables, archives and copies unpacked into a directory, `find -delete`, in-place
    /// flags glued behind others, interpreters' file calls and git's work-tree rewrites;
    /// each with a read-only twin that stays quiet.
    #[test]
    fn the_shell_analysis_tables_are_the_self_guards() {
        let p = protected();
        let home = Some(Path::new("/home/ann"));
        let project = Some(Path::new("/home/ann/src/app"));
        let cases: [(&str, Option<&Path>, bool); 36] = [
            ("d=~/.claude; echo '{}' > $d/settings.json", None, true),
            ("d=~/.claude; cat $d/settings.json", None, false),
            ("f=settings.json; sed -i s/a/b/ ~/.claude/$f", None, true),
            ("f=settings.json; sed -n 1p ~/.claude/$f", None, false),
            (
                "d=$HOME/.config/rewind; rm -f \"$d/config.toml\"",
                None,
                true,
            ),
            ("s=~/.local/state; rm -rf $s/rewind", None, true),
            ("s=~/.local/state; ls $s/rewind", None, false),
            ("find ~/.claude -name settings.json -delete", None, true),
            ("find ~/.local/state -name 'audit*' -delete", None, true),
            ("find ~ -name '*.pyc' -delete", None, false),
            ("find ~/.claude -name '*.json' -exec rm {} \\;", None, true),
            (
                "find ~/.claude -name '*.json' -exec cat {} \\;",
                None,
                false,
            ),
            ("tar -C ~ -xf x.tar", None, true),
            ("tar -C /tmp/x -xf x.tar", None, false),
            ("tar -tf x.tar", home, false),
            ("unzip -o x.zip -d ~", None, true),
            ("unzip -l x.zip", home, false),
            (
                "awk -i inplace '{print}' ~/.claude/settings.json",
                None,
                true,
            ),
            ("awk '{print}' ~/.claude/settings.json", None, false),
            ("sed -Ei.orig 's/a/b/' ~/.claude/settings.json", None, true),
            ("sed -E 's/a/b/' ~/.claude/settings.json", None, false),
            (
                "sudo --user root rm /home/ann/.claude/settings.json",
                None,
                true,
            ),
            ("busybox rm ~/.claude/settings.json", None, true),
            (
                "cp --target-directory=$HOME/.claude settings.json",
                None,
                true,
            ),
            ("git checkout -- .claude/settings.json", home, true),
            ("git stash", home, true),
            ("git stash", project, false),
            ("git status", home, false),
            (
                "python3 -c \"import shutil, os; shutil.rmtree(os.path.expanduser('~/.claude'))\"",
                None,
                true,
            ),
            (
                "python3 -c \"print(open('/home/ann/.claude/settings.json').read())\"",
                None,
                false,
            ),
            (
                "node -e \"require('fs').rmSync('/home/ann/.claude', {recursive: true})\"",
                None,
                true,
            ),
            (
                "perl -e 'unlink \"/home/ann/.config/rewind/config.toml\"'",
                None,
                true,
            ),
            ("bash -c 'f() { rm -rf ~/.claude; }; f'", None, true),
            ("echo 'rm -f ~/.claude/settings.json' | sh", None, true),
            ("(cd ~/.claude && : > settings.json)", None, true),
            (
                "env -i timeout 5 nice -n 5 ionice -c3 stdbuf -o0 rm ~/.claude/settings.json",
                None,
                true,
            ),
        ];
        for (text, cwd, asks) in cases {
            let found = command(text, Dialect::Posix, cwd, &p);
            assert_eq!(found.is_some(), asks, "{text}: {found:?}");
        }
    }

    fn command_ask(text: &str, dialect: Dialect, p: &Protected) -> Option<String> {
        command(text, dialect, None, p)
    }

    /// Relative paths are read from the directory the call runs in and from every directory
    /// a `cd` of the command goes to, literal or not: a `cd` cannot take a path out of sight.
    #[test]
    fn relative_paths_are_read_from_where_the_command_runs() {
        let p = protected();
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("rm settings.json", Some("/home/ann/.claude"), true),
            ("rm settings.json", Some("/home/ann/src/app"), false),
            ("echo '{}' > settings.json", Some("/home/ann/.claude"), true),
            ("rm -rf *", Some("/home/ann/.config/rewind"), true),
            ("rm -rf .", Some("/home/ann/.local/state/rewind"), true),
            ("rm -rf home", Some("/"), true),
            ("rm -rf build", Some("/home/ann/src/app"), false),
            ("cd ~/.claude && rm settings.json", None, true),
            ("cd /home/ann && rm -rf .cache", None, true),
            ("cd / && rm -rf home", None, true),
            ("cd .. && rm -rf ann", Some("/home/ann/src"), false),
            ("cd ../.. && rm -rf ann", Some("/home/ann/src"), true),
            ("(cd /tmp && make) && rm -rf ann", Some("/home"), true),
            ("cd && cd .config && rm -rf rewind", None, true),
            ("pushd ~/.config/rewind; tee config.toml < x", None, true),
            ("cd /tmp && rm -rf build settings.json", None, false),
            ("cd src && rm -rf build", Some("/home/ann/app"), false),
            ("cd && rm -rf *", None, true),
            (
                "cd \"$HOME\"/.claude && rm -f settings.local.json",
                None,
                true,
            ),
            ("builtin cd ~/.claude && rm settings.json", None, true),
            ("env -C ~/.claude rm settings.json", None, true),
            ("sudo -D ~/.claude rm -f settings.json", None, true),
            ("env --chdir=/tmp rm -f settings.json", None, false),
            ("env --chdir ~/.claude rm -f settings.json", None, true),
            ("cd ~/.claude && rm -f \"$PWD/settings.json\"", None, true),
            ("rm -rf ../home", Some("/tmp"), true),
            (
                "cat x | tee -a /tmp/log",
                Some("/home/ann/.local/state/rewind"),
                false,
            ),
            // No directory to start from: relative paths are read as written.
            ("cd sub && rm -rf build", None, false),
            // A directory known only when the command runs: any relative path written or
            // removed there may be rewind's.
            ("cd \"$D\" && rm -rf build", None, true),
            ("cd - && rm -f notes.txt", None, true),
            ("cd \"$D\" && ls -la build", None, false),
        ];
        for (text, cwd, asks) in cases {
            assert_eq!(
                command(text, Dialect::Posix, cwd.map(Path::new), &p).is_some(),
                *asks,
                "{text} in {cwd:?}"
            );
        }
        let powershell = "Set-Location ~/.claude; Remove-Item settings.json";
        assert!(command(powershell, Dialect::PowerShell, None, &p).is_some());
        let windows = Some(Path::new(r"C:\Users\ann\.claude"));
        assert!(
            command(
                "Remove-Item settings.json",
                Dialect::PowerShell,
                windows,
                &p
            )
            .is_some()
        );
        // The file tools read a relative path from the call's directory too.
        let relative = serde_json::json!({"file_path": "settings.json"});
        assert!(file_tool(&relative, Some(Path::new("/home/ann/.claude")), &p).is_some());
        assert!(file_tool(&relative, Some(Path::new("/home/ann/app")), &p).is_none());
        // And a read of the token cache from inside its directory.
        let read = |cwd: &str| ToolCall {
            host: Host::ClaudeCode,
            session: None,
            change: None,
            tool: String::from("Read"),
            server: None,
            input: serde_json::json!({"file_path": "tokens/a.json"}),
            event: crate::host::Event::BeforeTool,
            cwd: Some(PathBuf::from(cwd)),
            server_hint: None,
        };
        assert!(check_call(&read("/home/ann/.cache/rewind"), &p).is_some());
        assert!(check_call(&read("/home/ann/app"), &p).is_none());
    }

    #[test]
    fn a_patch_names_every_file_it_touches() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Update File: x.json\n*** Move to: .codex/hooks.json\n*** End Patch\n";
        assert_eq!(
            patch_paths(patch),
            ["src/a.rs", "x.json", ".codex/hooks.json"]
        );
        let p = protected();
        assert!(file_tool(&serde_json::json!({"input": patch}), None, &p).is_some());
        let in_src = serde_json::json!({"file_path": "/home/ann/src/a.rs"});
        assert!(file_tool(&in_src, None, &p).is_none());
    }

    /// What is protected is gathered only when a call needs it, and the decisions are those
    /// of having gathered it all first: for file tools, shell commands in both dialects and
    /// MCP tools, over paths spelled every way the check reads them (home spellings, quotes,
    /// `..`, `.`, `//`, case, `\`) and paths that name nothing protected. An MCP tool's call
    /// that gives no path to a file tool gathers nothing, and a read gathers the token cache
    /// alone.
    #[test]
    fn gathering_on_first_use_decides_as_gathering_everything_first() {
        let config = Config::parse(
            "[hook]\ncatalogs = [\"/srv/policy/vm-tools.toml\"]\naudit_log = \"/var/log/rewind/audit.jsonl\"\n\
             [zvm]\nurl = \"https://zvm.example\"\npassword_env = \"REWIND_ZVM_PASSWORD\"\nca_cert = \"/srv/zvm-ca.pem\"\n",
            Path::new("/srv/rewind/config.toml"),
        )
        .expect("valid");
        let paths = [
            "~/.config/rewind/../rewind/config.toml",
            "~/.config/rewind/../nvim/init.lua",
            "$HOME/.claude/settings.json",
            "${HOME}/.claude/settings.local.json",
            "\"$HOME\"/.claude/settings.json",
            "'~/.codex/config.toml'",
            "~/.CLAUDE/Settings.JSON",
            r"$env:USERPROFILE\.claude\settings.json",
            r"C:\Users\Ann\.gemini\settings.json",
            "//srv//policy/./vm-tools.toml",
            "/srv/policy/../policy/VM-TOOLS.toml",
            "/srv/rewind/config.toml",
            "./.rewind.toml",
            "proj/.github/hooks/x.json",
            "/var/log/rewind/audit.jsonl",
            "/var/log/rewind",
            "/srv/zvm-ca.pem",
            "~/.cache/rewind/tokens/a.json",
            "~/.local/state/rewind",
            "/etc/rewind/config.toml",
            "/etc/app.conf",
            "notes.txt",
            "~/.claude/",
            "~/.claude/*.json",
            "/",
            "",
        ];
        let mut calls: Vec<(&str, Value)> = Vec::new();
        for path in paths {
            for tool in ["Edit", "Write", "Read"] {
                calls.push((tool, serde_json::json!({"file_path": path})));
            }
            for command in [
                format!("echo x > {path}"),
                format!("rm -rf {path}"),
                format!("cat {path}"),
                format!("cp x.json {path}"),
                format!("sed -i s/a/b/ {path}"),
                format!("python3 -c \"open('{path}','w')\""),
                format!("bash -c 'tee {path} < x'"),
            ] {
                calls.push(("Bash", serde_json::json!({ "command": command })));
            }
            calls.push((
                "PowerShell",
                serde_json::json!({ "command": format!("Set-Content -Path {path} -Value x") }),
            ));
            calls.push(("mcp__fs__write_file", serde_json::json!({"path": path})));
            calls.push((
                "mcp__ssh__read_file",
                serde_json::json!({"host": "web01", "path": path}),
            ));
        }
        for (tool, input) in [
            (
                "mcp__ssh__exec",
                serde_json::json!({"host": "web01", "command": "uptime"}),
            ),
            (
                "mcp__http__get",
                serde_json::json!({"url": "https://zvm.example:443/v1/vpgs"}),
            ),
            (
                "mcp__http__get",
                serde_json::json!({"url": "https://zvm.example.org/"}),
            ),
            ("mcp__rewind__recover_file", serde_json::json!({})),
            ("mcp__rewind__flr_end", serde_json::json!({})),
            ("mcp__rewind__restore_vm", serde_json::json!({})),
            (
                "Bash",
                serde_json::json!({"command": "printenv REWIND_ZVM_PASSWORD"}),
            ),
            ("Bash", serde_json::json!({"command": "rewind uninstall"})),
            ("Bash", serde_json::json!({"command": "ls -la"})),
            (
                "Bash",
                serde_json::json!({"command": "curl https://zvm.example/v1/vms"}),
            ),
        ] {
            calls.push((tool, input));
        }
        let everything = Protected::new(&config);
        everything.needles();
        for (tool, input) in calls {
            let call = ToolCall {
                host: Host::ClaudeCode,
                session: None,
                change: None,
                tool: tool.to_owned(),
                server: None,
                input,
                event: crate::host::Event::BeforeTool,
                cwd: None,
                server_hint: None,
            };
            let on_first_use = Protected::new(&config);
            assert_eq!(
                check_call(&call, &on_first_use),
                check_call(&call, &everything),
                "{tool} {}",
                call.input
            );
            if tool.starts_with("mcp__") {
                assert!(
                    on_first_use.spots.get().is_none() && on_first_use.home.get().is_none(),
                    "{tool} gathered what it does not need"
                );
            }
            if tool == "Read" {
                assert!(
                    on_first_use.spots.get().is_none(),
                    "{tool} gathered more than the token cache"
                );
            }
        }
        // A command that names rewind (an everyday command in its own checkout) and writes or
        // removes nothing is searched for the token cache alone.
        for text in [
            "cd ~/src/rewind && cargo test 2>&1 | tail -n 40 && git status --short",
            "git -C /home/dev/rewind log --oneline | head",
        ] {
            let on_first_use = Protected::new(&config);
            assert_eq!(
                command(text, Dialect::Posix, None, &on_first_use),
                None,
                "{text}"
            );
            assert!(
                on_first_use.spots.get().is_none() && on_first_use.token_cache.get().is_some(),
                "{text} gathered what it does not need"
            );
        }
    }

    #[test]
    fn a_host_is_matched_as_a_whole_name() {
        assert!(contains_host(
            "https://zvm.example:443/v1/vpgs",
            "zvm.example"
        ));
        assert!(!contains_host("https://myzvm.example/", "zvm.example"));
        assert!(!contains_host("zvm.example.org", "zvm.example"));
    }
}
