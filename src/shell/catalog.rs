//! The shell catalog (`catalogs/shell.toml` and user files): which programs reach another
//! machine, the grammar that reads their arguments, and the read-only allowlist for remote
//! commands. The TOML as written (`Raw*`, unknown keys rejected) is checked into
//! [`ShellCatalog`]; every error names the file and the entry.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use super::dialect::Dialect;
use crate::glob::glob_match;
use mention::{folded, hidden_or_a_word, is_word_at, without_expansions};
use raw::{RawProgram, RawRule, RawShellCatalog, check_program, check_rule, check_word};

mod mention;
mod raw;
#[cfg(test)]
mod tests;

/// The shell catalog shipped with `rewind`.
pub(crate) const BUILTIN: (&str, &str) = (
    "builtin:shell.toml",
    include_str!("../../catalogs/shell.toml"),
);

/// [`BUILTIN`] as the build compiled it for the hook: the same document as JSON (see
/// `build.rs`), read several times faster than the TOML when a shell command needs it.
const BUILTIN_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/catalogs/shell.json"));

/// How a program's arguments are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Grammar {
    /// OpenSSH `ssh`: options, a destination, then the remote command.
    Ssh,
    /// `scp`, `sftp`, `rsync`: `host:path` operands; the last one is the destination.
    Copy,
    /// `ansible <pattern> -m module -a args`.
    Ansible,
    /// `ansible-playbook -l limit playbook.yml`.
    AnsiblePlaybook,
    /// `winrs -r:host command`.
    Winrs,
    /// `psexec \\host command`.
    Psexec,
    /// `smbclient //host/share -c 'commands'`.
    Smbclient,
    /// `govc <subcommand> -vm X` or positional VM names.
    Govc,
    /// `virsh <subcommand> <domain>`.
    Virsh,
    /// PowerShell remoting: `Invoke-Command`, `Enter-PSSession`, `New-PSSession`.
    PsRemoting,
    /// `Restart-Computer` / `Stop-Computer -ComputerName`.
    PsComputer,
    /// PowerCLI and Hyper-V cmdlets that act on a VM: `vm_options`, `vm_operand`, the
    /// pipeline.
    PsVm,
    /// Cmdlets that fetch objects and only read (`Get-Service -ComputerName`, `Get-VM`): what
    /// they hand on carries the machine it is bound to (see `programs::flow`).
    PsObjects,
    /// `telnet host [port]`, `rlogin host`: an interactive session on the first operand.
    Session,
    /// `pdsh -w a,b cmd`, `clush -w …`, `pssh -H …`: one command on the hosts listed by
    /// `host_options`; `other_host_options` pick hosts that are not written (ask).
    HostList,
    /// One action on hosts named by options, operands or the environment (`salt`, `docker
    /// -H`, `systemctl -H`, `shutdown /m`, `sc \\host`, `curl URL`): see `shell::fleet`.
    Fleet,
    /// The cloud CLIs where they reach into a VM (`gcloud compute ssh --command`, `az vm
    /// run-command invoke`, `aws ssm send-command`), the `fleet` grammar for the rest of
    /// `az` and `aws`: see `shell::cloud`.
    Cloud,
    /// Database and cache clients (`mysql -h`, `psql -h`, `redis-cli -h`, …): the server's
    /// host, and the statement judged by the `read_only` words and functions; see
    /// `shell::database`.
    Database,
    /// File commands that write where a path says (`robocopy`, `Copy-Item`, `Remove-Item`):
    /// a written UNC path `\\host\share` changes that host; see `shell::fleet`.
    UncWrite,
    /// VMware's `vmrun <command> <path.vmx>`: the VM is the `.vmx` file's.
    Vmrun,
    /// XenServer's `xe <command> vm=<name>`.
    Xe,
    /// Kamal: servers from `config/deploy.yml`, or `--hosts`.
    Kamal,
    /// Capistrano: `cap <stage> <task>`, servers from `config/deploy/<stage>.rb`.
    Capistrano,
}

/// One remote program.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is an independent switch of a catalog entry, set in the TOML"
)]
pub(crate) struct Program {
    pub(crate) names: Vec<String>,
    pub(crate) grammar: Grammar,
    pub(crate) value_options: Vec<String>,
    pub(crate) read_only: Vec<String>,
    pub(crate) mutating: Vec<String>,
    /// Options whose value lists hosts (host-list grammar).
    pub(crate) host_options: Vec<String>,
    /// Options that pick hosts from a file, a group or the whole cluster (host-list and
    /// fleet grammars).
    pub(crate) other_host_options: Vec<String>,
    /// Which operands name hosts (fleet grammar): `"1"`, `"2"`, `"all"`, `"unc"`, `"url"`.
    pub(crate) host_operand: Option<String>,
    /// Environment variables that name the host (fleet grammar): `DOCKER_HOST`.
    pub(crate) host_env: Vec<String>,
    /// Environment variables that pick hosts the command does not write, a context's or a
    /// connection's name (fleet grammar): `DOCKER_CONTEXT`, `CONTAINER_CONNECTION`.
    pub(crate) other_host_env: Vec<String>,
    /// Options (or operand words, such as wmic's `call`) that make the call change something
    /// whatever its action (fleet grammar).
    pub(crate) mutating_options: Vec<String>,
    /// With no host named, the hosts come from somewhere not written: ask (fleet grammar).
    pub(crate) without_host_asks: bool,
    /// Options are also written `/x` and `/x:value` (Windows programs; fleet grammar).
    pub(crate) windows_flags: bool,
    /// Operands after the URL are HTTPie's request items: `field=value`, `field:=json` and
    /// `field@file` send data, which makes the request a POST (fleet grammar).
    pub(crate) request_items: bool,
    /// Only in text of this dialect (`cp` is Copy-Item in PowerShell alone).
    pub(crate) dialect: Option<Dialect>,
    /// The services that are this program's business (`aws ec2`, `az vm`; fleet grammar):
    /// others act on no machine, and the action is the word after the service.
    pub(crate) scope: Vec<String>,
    /// Actions that point later commands elsewhere (`docker context use`): ask.
    pub(crate) ask_actions: Vec<String>,
    /// Options naming the method a cmdlet calls on its objects (`Invoke-CimMethod
    /// -MethodName`; fleet grammar): one that only reads (`GetOwner`) makes the call read-only.
    pub(crate) method_options: Vec<String>,
    /// The operands after the host are a command run there, in this dialect (`rexec`,
    /// impacket's tools; fleet grammar): it is judged as a remote command.
    pub(crate) remote_command: Option<Dialect>,
    /// Actions after which the operands are a command run on the hosts, judged as a remote
    /// command (`cmd.run`, `command run`, `exec *`, `--`; fleet grammar): see `exec_words`
    /// in `shell::fleet`.
    pub(crate) exec: Vec<String>,
    /// The keyword arguments (`cwd` for `cwd=/srv`) an exec action takes after its command
    /// without changing what runs (fleet grammar); any other argument is not read.
    pub(crate) exec_kwargs: Vec<String>,
    /// The parameters naming the VM, the first written winning (ps-vm and ps-objects
    /// grammars): `-VMName` where `-Name` names a checkpoint or an adapter.
    pub(crate) vm_options: Vec<String>,
    /// Which positional argument is the VM when no `vm_options` is written: 1-based.
    pub(crate) vm_operand: Option<usize>,
    /// PowerShell cmdlets (a `ps-*` grammar, or a Windows entry named `Verb-Noun`): their
    /// parameters are bound as PowerShell binds them (see [`Program::names_option`]).
    pub(crate) cmdlet: bool,
    /// The file (or `builtin:` name) the entry came from.
    pub(crate) origin: String,
}

impl Program {
    /// Whether `option` (as typed, before any `=value`) takes a value.
    pub(crate) fn takes_value(&self, option: &str) -> bool {
        self.value_options.iter().any(|o| o == option)
    }

    /// Every option the entry lists as taking a value, naming hosts or changing things.
    fn acting_options(&self) -> impl Iterator<Item = &String> {
        self.value_options
            .iter()
            .chain(&self.host_options)
            .chain(&self.other_host_options)
            .chain(&self.mutating_options)
            .chain(&self.method_options)
            .filter(|o| o.starts_with('-'))
    }

    /// Every option the entry lists, whatever it says of it.
    fn listed_options(&self) -> impl Iterator<Item = &String> {
        self.acting_options()
            .chain(self.read_only.iter().filter(|o| o.starts_with('-')))
    }

    /// The listed long option `given` abbreviates (`--req` for `--request`): programs that
    /// parse with `getopt_long` (curl among them) take any unambiguous prefix. None when
    /// `given` is listed itself, or abbreviates no listed option or several. A read-only
    /// option is never the one meant: a list is not every option a program has, and `--noop`
    /// of `bolt apply` is no `--noop-plan`.
    pub(crate) fn long_option_for(&self, given: &str) -> Option<&str> {
        if !given.starts_with("--") || given.len() < 4 || self.listed_options().any(|o| o == given)
        {
            return None;
        }
        let mut found = self
            .acting_options()
            .filter(|o| o.starts_with("--") && o.starts_with(given));
        let first = found.next()?;
        found.all(|o| o == first).then_some(first.as_str())
    }

    /// Whether the program bundles short options as POSIX utilities do (`-sfX DELETE`): none
    /// of its listed options is a long one written with one dash (`-vm`, `-pw`).
    pub(crate) fn bundles_short_options(&self) -> bool {
        !self.cmdlet
            && !self.windows_flags
            && self
                .listed_options()
                .all(|o| o.starts_with("--") || o.chars().count() == 2)
    }

    /// Whether `name` is in the `read_only` list (globs allowed).
    pub(crate) fn is_read_only(&self, name: &str) -> bool {
        self.read_only.iter().any(|p| glob_match(p, name))
    }

    /// Whether `name` is in the `mutating` list (globs allowed).
    pub(crate) fn is_mutating(&self, name: &str) -> bool {
        self.mutating.iter().any(|p| glob_match(p, name))
    }

    /// Whether the option written `given` (before any value) is one of `options`: the same
    /// word (without regard to case for a Windows entry), or for a cmdlet any option it
    /// abbreviates. PowerShell binds a parameter by any prefix of its name and refuses an
    /// ambiguous one before anything runs, so an abbreviation is taken for every option it
    /// could stand for: the one naming the computer among them.
    pub(crate) fn names_option(&self, options: &[String], given: &str) -> bool {
        options.iter().any(|option| {
            if self.cmdlet {
                given.len() > 1
                    && option
                        .get(..given.len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(given))
            } else if self.windows_flags {
                option.eq_ignore_ascii_case(given)
            } else {
                option == given
            }
        })
    }
}

/// Whether a Windows entry's names make it a cmdlet's: one of them is `Verb-Noun`, letters
/// on either side of one hyphen (`Invoke-CimMethod`, `Copy-Item`), as PowerShell names its
/// commands.
fn names_a_cmdlet(names: &[String]) -> bool {
    names.iter().any(|name| {
        name.split_once('-').is_some_and(|(verb, noun)| {
            [verb, noun].iter().all(|part| {
                part.starts_with(|c: char| c.is_ascii_alphabetic())
                    && part.chars().all(|c| c.is_ascii_alphanumeric())
            })
        })
    })
}

/// A remote command that is read-only under conditions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RemoteRule {
    pub(crate) command: String,
    /// The first operand must be one of these (`""`: no operand at all is fine too).
    pub(crate) subcommands: Vec<String>,
    /// Any argument equal to one of these (or starting with it, for a trailing `*`) makes the
    /// command mutating.
    pub(crate) unless: Vec<String>,
    /// A short-option bundle (`-ni`) holding one of these letters makes it mutating.
    pub(crate) unless_short: String,
    /// Any argument containing one of these texts makes it mutating.
    pub(crate) unless_text: Vec<String>,
    /// More operands (arguments not starting with `-`) than this make it mutating.
    pub(crate) operands_max: Option<usize>,
    /// The options that take the next word as their value: never read as the subcommand.
    pub(crate) value_options: Vec<String>,
    /// When set, every option must be one of these or of `value_options` (bundles split
    /// into letters); any other option makes the command mutating.
    pub(crate) only_options: Option<Vec<String>>,
    /// The flags (no value) understood before a subcommand; any other option there makes
    /// the command mutating, since it could take a value and hide the subcommand.
    pub(crate) global_options: Vec<String>,
    /// For programs whose action is a later operand (`ip link set`): its position (1-based)
    /// and the actions that only read, each also matching its abbreviations.
    pub(crate) action_at: Option<usize>,
    pub(crate) actions: Vec<String>,
}

/// The checked shell catalog: built-in entries first, then user files (a later program with
/// the same name replaces the earlier one).
///
/// The built-in part is read and checked as lookups need it: a command that names none of its
/// programs (told from the names the build lists) never pays for any, one that names `ssh`
/// reads and checks that program alone, and a remote command reads the rule for its name
/// alone. User files are read and checked when the catalog is loaded. A built-in part met
/// broken makes its lookups find nothing, and `builtin_error` gives its error.
#[derive(Clone, Default)]
pub struct ShellCatalog {
    /// The built-in entries, when loaded at all, less what the user files replace.
    builtin: Option<Lazy>,
    /// The user files' entries, checked.
    user: Entries,
    /// The names of the user files' programs not kept to a dialect, lower-cased: with the
    /// built-in ones, the names the fast "no remote program" test looks for.
    user_mentions: Vec<String>,
}

/// The built-in catalog, each part read on first use.
#[derive(Clone)]
struct Lazy {
    compiled: Compiled,
    /// The whole catalog, for what lists every program (`rewind catalog list`, the tests).
    whole: OnceLock<Result<Entries, String>>,
    /// Each program by its place in the file; `None` once user files list all its names.
    programs: Box<[OnceLock<Option<Program>>]>,
    /// Each remote rule by its place in the file; `None` once a user file has its command's.
    rules: Box<[OnceLock<Option<RemoteRule>>]>,
    /// The first error a part gave when read.
    error: OnceLock<String>,
}

/// What the build compiled of the built-in catalog (see `build.rs`).
#[derive(Clone, Copy)]
struct Compiled {
    /// The whole catalog as JSON, whose names [`BUILTIN_NAMES`] lists.
    json: &'static str,
    /// Each program as JSON, one a line, and where each starts (then where the text ends).
    programs: &'static str,
    program_at: &'static [usize],
    /// Each remote rule as `<command>\t<length>\t<JSON>`, one a line.
    rules: &'static str,
    rule_count: usize,
    /// `[remote] read_only` and `[windows] read_only`, one word a line.
    remote_read_only: &'static str,
    windows_read_only: &'static str,
}

// What the build made of the built-in catalog (see `build.rs`): `BUILTIN_NAMES`, each
// program name ASCII-lower-cased, lower-cased, the dialect its program is kept to and its
// program's place, sorted by the first; `BUILTIN_MENTIONS`, the names kept to no dialect,
// lower-cased and ASCII-lower-cased, sorted by the first; `NAME_TEXT`, which the names are
// spans of; and each part's text.
include!(concat!(env!("OUT_DIR"), "/catalogs/shell.parts.rs"));

/// Where a name lies in `NAME_TEXT`. The name tables hold spans, not `&str`s: the loader
/// writes every pointer of a position-independent binary at each start, and the tables of
/// `&str`s were 7 of the 17 pages it wrote, each a page fault and a copy.
#[derive(Clone, Copy)]
struct Span(usize, usize);

impl Span {
    fn text(self) -> &'static str {
        NAME_TEXT.get(self.0..self.1).unwrap_or_default()
    }

    /// [`Span::text`]'s bytes, for comparisons (no test of char boundaries).
    fn bytes(self) -> &'static [u8] {
        NAME_TEXT.as_bytes().get(self.0..self.1).unwrap_or_default()
    }

    /// The name's first two bytes, if it has two (for tables built at compile time).
    const fn first_two(self) -> Option<(u8, u8)> {
        let bytes = NAME_TEXT.as_bytes();
        if self.1 >= self.0 + 2 && self.0 + 1 < bytes.len() {
            Some((bytes[self.0], bytes[self.0 + 1]))
        } else {
            None
        }
    }
}

const COMPILED: Compiled = Compiled {
    json: BUILTIN_JSON,
    programs: BUILTIN_PROGRAMS,
    program_at: &BUILTIN_PROGRAM_AT,
    rules: BUILTIN_RULES,
    rule_count: BUILTIN_RULE_COUNT,
    remote_read_only: BUILTIN_REMOTE_READ_ONLY,
    windows_read_only: BUILTIN_WINDOWS_READ_ONLY,
};

impl Lazy {
    fn new(compiled: Compiled) -> Lazy {
        Lazy {
            compiled,
            whole: OnceLock::new(),
            programs: (1..compiled.program_at.len().max(1))
                .map(|_| OnceLock::new())
                .collect(),
            rules: (0..compiled.rule_count).map(|_| OnceLock::new()).collect(),
            error: OnceLock::new(),
        }
    }

    /// Notes a part's error (the first one met is the one told).
    fn broken(&self, error: String) {
        let _ = self.error.set(error);
    }

    /// The program at `index` in the file, read and checked on first use, less the names
    /// `user` lists.
    fn program(&self, index: usize, user: &Entries) -> Option<&Program> {
        let slot = self.programs.get(index)?;
        slot.get_or_init(|| {
            let at = || format!("shell catalog {}: [[program]] #{}", BUILTIN.0, index + 1);
            let read = || -> anyhow::Result<Program> {
                let (start, end) = (
                    self.compiled.program_at.get(index),
                    self.compiled.program_at.get(index + 1),
                );
                let json = start
                    .zip(end)
                    .and_then(|(start, end)| self.compiled.programs.get(*start..*end))
                    .ok_or_else(|| anyhow::anyhow!("{} is not in the compiled catalog", at()))?;
                let raw: RawProgram = serde_json::from_str(json)
                    .map_err(|e| anyhow::anyhow!("{} (as compiled): {e}", at()))?;
                check_program(raw, &at, BUILTIN.0)
            };
            match read() {
                Ok(mut program) => {
                    program.names.retain(|n| !user.lists(n));
                    (!program.names.is_empty()).then_some(program)
                }
                Err(e) => {
                    self.broken(format!("{e:#}"));
                    None
                }
            }
        })
        .as_ref()
    }

    /// The remote rule for `command`, read and checked on first use, unless a user file has
    /// its own.
    fn rule(&self, command: &str, user: &Entries) -> Option<&RemoteRule> {
        let (index, json) = self.rule_text(command)?;
        self.rules
            .get(index)?
            .get_or_init(|| {
                let at = || {
                    format!(
                        "shell catalog {}: [[remote.rule]] #{}",
                        BUILTIN.0,
                        index + 1
                    )
                };
                let read = serde_json::from_str::<RawRule>(json)
                    .map_err(|e| anyhow::anyhow!("{} (as compiled): {e}", at()))
                    .and_then(|raw| check_rule(raw, &at));
                match read {
                    Ok(rule) => (!user.remote_rules.iter().any(|u| u.command == rule.command))
                        .then_some(rule),
                    Err(e) => {
                        self.broken(format!("{e:#}"));
                        None
                    }
                }
            })
            .as_ref()
    }

    /// The place in the file of the remote rule for `command`, and its compiled JSON.
    fn rule_text(&self, command: &str) -> Option<(usize, &'static str)> {
        let mut rest = self.compiled.rules;
        let mut index = 0;
        while !rest.is_empty() {
            let (name, after) = rest.split_once('\t')?;
            let (length, after) = after.split_once('\t')?;
            let json = after.get(..length.parse().ok()?)?;
            if name == command {
                return Some((index, json));
            }
            rest = after[json.len()..].strip_prefix('\n')?;
            index += 1;
        }
        None
    }

    /// Drops from the parts read so far what `user` replaces (see [`Entries::replaced_by`]).
    fn replaced_by(&mut self, user: &Entries) {
        if let Some(Ok(whole)) = self.whole.get_mut() {
            whole.replaced_by(user);
        }
        for slot in &mut self.programs {
            if let Some(Some(program)) = slot.get_mut() {
                program.names.retain(|n| !user.lists(n));
                if program.names.is_empty() {
                    *slot = OnceLock::from(None);
                }
            }
        }
        for slot in &mut self.rules {
            if let Some(Some(rule)) = slot.get_mut()
                && user.remote_rules.iter().any(|u| u.command == rule.command)
            {
                *slot = OnceLock::from(None);
            }
        }
    }

    /// Whether any part has been read (tests of what reads them).
    #[cfg(test)]
    fn is_read(&self) -> bool {
        self.whole.get().is_some()
            || self.programs.iter().any(|p| p.get().is_some())
            || self.rules.iter().any(|r| r.get().is_some())
    }
}

/// The first two bytes of the names in `BUILTIN_MENTIONS`, a bit for each pair (`a`, `b`)
/// at bit `b % 64` of word `a * 4 + b / 64`: a place in a text whose two bytes start no name
/// is passed over without looking names up.
static MENTION_STARTS: [u64; 1024] = {
    let mut table = [0u64; 1024];
    let mut i = 0;
    while i < BUILTIN_MENTIONS.len() {
        if let Some((a, b)) = BUILTIN_MENTIONS[i].0.first_two() {
            table[((a as usize) << 2) | ((b as usize) >> 6)] |= 1 << (b % 64);
        }
        i += 1;
    }
    table
};

/// Whether a name in `BUILTIN_MENTIONS` is shorter than two bytes: then no place is passed
/// over.
const SHORT_MENTION: bool = {
    let mut i = 0;
    let mut short = false;
    while i < BUILTIN_MENTIONS.len() {
        short |= BUILTIN_MENTIONS[i].0.first_two().is_none();
        i += 1;
    }
    short
};

/// The checked entries of one or more files, in load order.
#[derive(Debug, Clone, Default)]
struct Entries {
    programs: Vec<Program>,
    /// Remote commands that only read, with no conditions.
    remote_read_only: BTreeSet<String>,
    remote_rules: Vec<RemoteRule>,
    /// Windows commands and cmdlets that only read (globs, case-insensitive).
    windows_read_only: Vec<String>,
}

impl ShellCatalog {
    /// The built-in catalog (when `builtin`) and then `files`, in order. The built-in part is
    /// read when first needed; the files are read and checked now.
    pub(crate) fn load(builtin: bool, files: &[impl AsRef<Path>]) -> anyhow::Result<ShellCatalog> {
        let mut catalog = ShellCatalog {
            builtin: builtin.then(|| Lazy::new(COMPILED)),
            ..ShellCatalog::default()
        };
        for file in files {
            let path = file.as_ref();
            // Read on the hook's main thread, before any watchdog: never a blocking read.
            let text = crate::config::read_text_file(path)
                .with_context(|| format!("cannot read shell catalog {}", path.display()))?;
            catalog.extend(&text, &path.display().to_string())?;
        }
        Ok(catalog)
    }

    /// The built-in catalog alone, read and checked now.
    pub fn builtin() -> anyhow::Result<ShellCatalog> {
        let catalog = Self::load(true, &[] as &[&Path])?;
        catalog.builtin_entries();
        catalog.builtin_error()?;
        Ok(catalog)
    }

    /// Parses one catalog's text on its own, for the tests of its checks.
    #[cfg(test)]
    fn parse(text: &str, origin: &str) -> anyhow::Result<ShellCatalog> {
        let mut catalog = ShellCatalog::default();
        catalog.extend(text, origin)?;
        Ok(catalog)
    }

    /// Adds one file's entries after those already loaded.
    pub(crate) fn extend(&mut self, text: &str, origin: &str) -> anyhow::Result<()> {
        let raw: RawShellCatalog = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("shell catalog {origin}: {}", e.to_string().trim_end()))?;
        self.user.add(raw, origin)?;
        self.user_mentions = self
            .user
            .programs
            .iter()
            .filter(|p| p.dialect.is_none())
            .flat_map(|p| p.names.iter())
            .map(|n| n.to_lowercase())
            .collect();
        // Built-in parts read already lose what this file replaces.
        if let Some(builtin) = self.builtin.as_mut() {
            builtin.replaced_by(&self.user);
        }
        Ok(())
    }

    /// The built-in entries, less what the user files replace, read and checked on the first
    /// call; `None` when the built-in catalog is not loaded, or is broken (see
    /// [`Self::builtin_error`]).
    fn builtin_entries(&self) -> Option<&Entries> {
        let lazy = self.builtin.as_ref()?;
        let entries = lazy.whole.get_or_init(|| {
            let raw = serde_json::from_str(lazy.compiled.json)
                .map_err(|e| format!("shell catalog {} (as compiled): {e}", BUILTIN.0))?;
            let mut entries = Entries::default();
            entries.add(raw, BUILTIN.0).map_err(|e| format!("{e:#}"))?;
            entries.replaced_by(&self.user);
            Ok(entries)
        });
        entries.as_ref().ok()
    }

    /// The error of a built-in catalog that was read and found broken (it never is: a test
    /// holds the compiled catalog valid). Lookups meet it as "nothing found", so whoever judges
    /// a command with the catalog asks this before trusting the answer.
    pub(crate) fn builtin_error(&self) -> anyhow::Result<()> {
        let Some(lazy) = self.builtin.as_ref() else {
            return Ok(());
        };
        match (lazy.whole.get(), lazy.error.get()) {
            (Some(Err(e)), _) | (_, Some(e)) => Err(anyhow::anyhow!("{e}")),
            _ => Ok(()),
        }
    }

    /// Whether any built-in part has been read (tests of what reads them).
    #[cfg(test)]
    fn builtin_is_read(&self) -> bool {
        self.builtin.as_ref().is_some_and(Lazy::is_read)
    }

    /// The places in the file of the built-in programs not kept to another dialect that list
    /// `word` (ASCII case ignored), told from the names the build lists.
    fn builtin_places(word: &str, dialect: Option<Dialect>) -> impl Iterator<Item = usize> {
        let folded = || word.bytes().map(|b| b.to_ascii_lowercase());
        let first =
            BUILTIN_NAMES.partition_point(|(key, ..)| key.bytes().iter().copied().lt(folded()));
        BUILTIN_NAMES[first..]
            .iter()
            .take_while(move |(key, ..)| key.text().eq_ignore_ascii_case(word))
            .filter(move |(_, _, d, _)| d.is_none() || *d == dialect)
            .map(|(.., place)| *place)
    }

    /// Every program, in load order.
    pub(crate) fn programs(&self) -> Vec<&Program> {
        let builtin = self.builtin_entries().map(|e| e.programs.as_slice());
        builtin
            .unwrap_or_default()
            .iter()
            .chain(&self.user.programs)
            .collect()
    }

    /// The program a command name (`ssh`, `/usr/bin/ssh`, `INVOKE-COMMAND`, `ssh.exe`) runs,
    /// if any. Windows finds `ssh.exe` when `ssh` is typed and runs it when `ssh.exe` is.
    pub(crate) fn program(&self, command: &str) -> Option<&Program> {
        self.program_in(command, None)
    }

    /// As [`Self::program`], also finding the entries kept to `dialect`'s text.
    pub(crate) fn program_in(&self, command: &str, dialect: Option<Dialect>) -> Option<&Program> {
        let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
        let stem = [".exe", ".com", ".cmd", ".bat"]
            .iter()
            .find_map(|ext| {
                let at = base.len().checked_sub(ext.len())?;
                let tail = base.as_bytes().get(at..)?;
                tail.eq_ignore_ascii_case(ext.as_bytes())
                    .then(|| base.get(..at))
                    .flatten()
            })
            .unwrap_or(base);
        let runs = |p: &&Program| {
            (p.dialect.is_none() || p.dialect == dialect)
                && p.names
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(base) || n.eq_ignore_ascii_case(stem))
        };
        // A user file's program comes after (and replaces) the built-in ones.
        if let Some(program) = self.user.programs.iter().rev().find(runs) {
            return Some(program);
        }
        // The last program in the file that runs (a later one replaces an earlier one).
        let lazy = self.builtin.as_ref()?;
        let mut places: Vec<usize> = Self::builtin_places(base, dialect).collect();
        // Most names have no extension: their stem is the name itself.
        if stem.len() < base.len() {
            places.extend(Self::builtin_places(stem, dialect));
        }
        places.sort_unstable();
        places.dedup();
        places
            .into_iter()
            .rev()
            .filter_map(|place| lazy.program(place, &self.user))
            .find(runs)
    }

    /// Whether a remote command only reads, whatever its arguments (`[remote] read_only`).
    pub(crate) fn remote_read_only(&self, command: &str) -> bool {
        self.user.remote_read_only.contains(command)
            || self
                .builtin
                .as_ref()
                .is_some_and(|b| b.compiled.remote_read_only.lines().any(|w| w == command))
    }

    /// The rule under which a remote command is read-only (`[[remote.rule]]`), if any.
    pub(crate) fn remote_rule(&self, command: &str) -> Option<&RemoteRule> {
        // A user file's rule replaces the built-in one for the same command.
        fn find<'a>(rules: &'a [RemoteRule], command: &str) -> Option<&'a RemoteRule> {
            rules.iter().find(|r| r.command == command)
        }
        find(&self.user.remote_rules, command)
            .or_else(|| self.builtin.as_ref()?.rule(command, &self.user))
    }

    /// Every name of a remote program not kept to a dialect, lower-cased: what the fast "no
    /// remote program" tests look for.
    fn mentions(&self) -> impl Iterator<Item = &str> {
        let builtin: &[_] = if self.builtin.is_some() {
            &BUILTIN_NAMES
        } else {
            &[]
        };
        builtin
            .iter()
            .filter(|(key, _, dialect, _)| dialect.is_none() && !self.user.lists(key.text()))
            .map(|(_, lower, ..)| lower.text())
            .chain(self.user_mentions.iter().map(String::as_str))
    }

    /// The first word of `text` that names a remote program as a command would (`ssh`,
    /// `/usr/bin/ssh`, `'ssh'` in a list), unlike a name inside another word (`~/.ssh`).
    pub(crate) fn names_a_program(&self, text: &str) -> Option<&str> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.'))
            .filter(|word| !word.is_empty())
            .find_map(|word| self.program(word).map(|p| p.names[0].as_str()))
    }

    /// Whether `text` could name a remote program at all: the fast path for local commands.
    /// Quotes, backslashes and `$` are ignored first, since `s\sh` and `'s'sh` run `ssh`.
    pub(crate) fn mentions_a_program(&self, text: &str) -> bool {
        self.first_mention(text).is_some()
    }

    /// Whether `text` could run a remote program whose name is split by what the shell takes
    /// away before running it: expansions (`ss$(true)h`, `ss${IFS:0:0}h`, `ss$@h`), quotes,
    /// and PowerShell's concatenation (`& ("ss" + "h")`). Wider than
    /// [`Self::mentions_a_program`]: a hit only means the text is parsed. A name whose
    /// letters stand next to each other in the text is hidden by nothing, and counts only as
    /// a word of its own (`xe` in `exec` is no name), unless the text sets `IFS`.
    pub(crate) fn may_hide_a_program(&self, text: &str) -> bool {
        // `$'\x73sh'`: an escaped letter is decoded by the parser, not seen here.
        if text.contains("$'") && text.contains('\\') {
            return true;
        }
        let (stripped, origin) = without_expansions(text);
        // With IFS set, any letter may split words (`IFS=x; c=sshxweb01; $c`).
        let splits_anywhere = text.contains("IFS");
        let chars: Vec<char> = text.chars().collect();
        self.first_in(&stripped, &|at, len| {
            splits_anywhere || hidden_or_a_word(&chars, &origin, at, len)
        })
        .is_some()
    }

    /// The first remote program `text` names as a word of its own (as
    /// [`Self::mentions_a_program`] reads it): `cap` in `cap deploy`, not in `escape`.
    pub(crate) fn first_mention(&self, text: &str) -> Option<&str> {
        let folded = folded(text);
        self.first_in(&folded, &|at, len| is_word_at(&folded, at, len))
    }

    /// The name (not kept to a dialect, lower-cased) that `folded` holds first where
    /// `accept` takes its byte span, the longest of those starting there.
    fn first_in(&self, folded: &str, accept: &dyn Fn(usize, usize) -> bool) -> Option<&str> {
        let user = self.user_mentions.iter().filter_map(|name| {
            folded
                .match_indices(name.as_str())
                .find(|(at, _)| accept(*at, name.len()))
                .map(|(at, _)| (at, name.as_str()))
        });
        let builtin = self
            .builtin
            .is_some()
            .then(|| self.builtin_first_in(folded, accept));
        user.chain(builtin.flatten())
            .min_by_key(|(at, name)| (*at, usize::MAX - name.len()))
            .map(|(_, name)| name)
    }

    /// Where `folded` first holds a built-in name (one a user file does not replace), and the
    /// longest one there: the names starting with each byte of the text are looked up in
    /// [`BUILTIN_MENTIONS`], sorted, rather than every name searched for in the whole text.
    fn builtin_first_in(
        &self,
        folded: &str,
        accept: &dyn Fn(usize, usize) -> bool,
    ) -> Option<(usize, &'static str)> {
        let kept = |key: &str| !self.user.lists(key);
        // An empty name (the catalog's checks refuse it) is held by every text.
        if let Some((name, key)) = BUILTIN_MENTIONS.first()
            && name.text().is_empty()
            && kept(key.text())
        {
            return Some((0, name.text()));
        }
        let bytes = folded.as_bytes();
        (0..bytes.len()).find_map(|at| {
            let rest = &bytes[at..];
            if let [a, b, ..] = rest
                && !SHORT_MENTION
                && MENTION_STARTS[(usize::from(*a) << 2) | (usize::from(*b) >> 6)] & (1 << (b % 64))
                    == 0
            {
                return None;
            }
            let first = BUILTIN_MENTIONS.partition_point(|(name, _)| name.bytes() < &rest[..1]);
            BUILTIN_MENTIONS[first..]
                .iter()
                .take_while(|(name, _)| name.bytes().first() == rest.first())
                .filter(|(name, key)| {
                    rest.starts_with(name.bytes())
                        && accept(at, name.bytes().len())
                        && kept(key.text())
                })
                .map(|(name, _)| name.text())
                .max_by_key(|name| name.len())
                .map(|name| (at, name))
        })
    }

    /// Whether a Windows command or cmdlet only reads.
    pub(crate) fn windows_read_only(&self, name: &str) -> bool {
        let lower = name.to_lowercase();
        let any = |list: &[String]| list.iter().any(|p| glob_match(&p.to_lowercase(), &lower));
        any(&self.user.windows_read_only)
            || self.builtin.as_ref().is_some_and(|b| {
                b.compiled
                    .windows_read_only
                    .lines()
                    .any(|p| glob_match(&p.to_lowercase(), &lower))
            })
    }
}

#[expect(
    clippy::missing_fields_in_debug,
    reason = "shows the catalog the fields make together, not how it is kept"
)]
impl std::fmt::Debug for ShellCatalog {
    /// The catalog as loaded, built-in entries (read for this) and user files' together.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let builtin = self.builtin_entries();
        let both = builtin.into_iter().chain([&self.user]);
        let remote_read_only: BTreeSet<&String> =
            both.clone().flat_map(|e| &e.remote_read_only).collect();
        let mut debug = f.debug_struct("ShellCatalog");
        debug
            .field("programs", &self.programs())
            .field("remote_read_only", &remote_read_only)
            .field(
                "remote_rules",
                &both
                    .clone()
                    .flat_map(|e| &e.remote_rules)
                    .collect::<Vec<_>>(),
            )
            .field(
                "windows_read_only",
                &both.flat_map(|e| &e.windows_read_only).collect::<Vec<_>>(),
            )
            .field("mentions", &{
                let mut names: Vec<&str> = self.mentions().collect();
                names.sort_unstable();
                names
            });
        if let Err(e) = self.builtin_error() {
            debug.field("builtin_error", &format!("{e:#}"));
        }
        debug.finish()
    }
}

impl Entries {
    /// Adds one file's entries, read, after those already loaded.
    fn add(&mut self, raw: RawShellCatalog, origin: &str) -> anyhow::Result<()> {
        let mut seen = BTreeSet::new();
        // The programs of earlier files: this file's names are unique within it (checked
        // below), so only those can lose names to it.
        let earlier_files = self.programs.len();
        for (index, program) in raw.program.into_iter().enumerate() {
            let at = || format!("shell catalog {origin}: [[program]] #{}", index + 1);
            let program = check_program(program, &at, origin)?;
            for name in &program.names {
                if !seen.insert(name.to_lowercase()) {
                    bail!(
                        "{}: name {name:?} is listed twice in this file; keep one",
                        at()
                    );
                }
            }
            // A later file's program replaces the names it lists.
            for earlier in &mut self.programs[..earlier_files] {
                earlier
                    .names
                    .retain(|n| !program.names.iter().any(|m| m.eq_ignore_ascii_case(n)));
            }
            self.programs.push(program);
        }
        self.programs.retain(|p| !p.names.is_empty());
        if let Some(remote) = raw.remote {
            for name in remote.read_only {
                check_word(&name, || {
                    format!("shell catalog {origin}: [remote] read_only")
                })?;
                self.remote_read_only.insert(name);
            }
            for (index, rule) in remote.rule.into_iter().enumerate() {
                let at = || format!("shell catalog {origin}: [[remote.rule]] #{}", index + 1);
                let rule = check_rule(rule, &at)?;
                self.remote_rules.retain(|r| r.command != rule.command);
                self.remote_rules.push(rule);
            }
        }
        if let Some(windows) = raw.windows {
            for name in windows.read_only {
                check_word(&name, || {
                    format!("shell catalog {origin}: [windows] read_only")
                })?;
                self.windows_read_only.push(name);
            }
        }
        Ok(())
    }

    /// Drops what `user` (the user files' entries) replaces: the names its programs list
    /// (a program left with none goes) and the remote rules for its rules' commands.
    fn replaced_by(&mut self, user: &Entries) {
        for program in &mut self.programs {
            program.names.retain(|n| !user.lists(n));
        }
        self.programs.retain(|p| !p.names.is_empty());
        self.remote_rules
            .retain(|r| !user.remote_rules.iter().any(|u| u.command == r.command));
    }

    /// Whether one of these programs lists `name` (ASCII case ignored).
    fn lists(&self, name: &str) -> bool {
        self.programs
            .iter()
            .any(|p| p.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
    }
}
