//! Configuration: where it is found, what it may contain, and the validated form the rest of
//! the program reads. Unknown keys are errors naming the file and key; secrets stay in
//! `secrecy`'s [`SecretString`] (no `Display`, a redacted `Debug`, wiped when dropped) and are
//! resolved only when a request needs them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use crate::deadline::Deadline;
use crate::platform::UserDir;
use secrecy::SecretString;

/// The hook's default budget: under the host timeout of 180 s that `rewind install` writes.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(150);
/// The longest `[hook] budget_secs` a configuration may set.
pub const MAX_BUDGET_SECS: f64 = 3600.0;
/// The most VMs one call may checkpoint before the hook asks instead (`[hook] max_vms`).
pub const DEFAULT_MAX_VMS: usize = 16;

/// Everything `rewind` reads from its configuration file.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file this came from; `None` when no file was found and defaults apply.
    pub origin: Option<PathBuf>,
    /// Read for a managed hook entry: only the file it pins, which only root can change.
    pub managed: bool,
    pub zvm: Option<ZvmConfig>,
    pub hook: HookConfig,
    pub shell: ShellConfig,
    /// Other names for VMs (`"web01.corp.example" = "jp-ubuntu"`), matched case-insensitively.
    pub vm_aliases: BTreeMap<String, String>,
    /// `[broker]`: the broker this client talks to, or the rules a broker serves by.
    pub broker: BrokerConfig,
    /// `[audit]`: where records go besides the trail.
    pub audit: AuditConfig,
    /// Problems worth saying on every run (a literal password, TLS verification off).
    pub warnings: Vec<String>,
}

/// The broker's account when `[broker] user` names none.
pub const DEFAULT_BROKER_USER: &str = "rewind";

/// `[broker]`: read by both sides. A client (the hook, `rewind mcp`, the operator's commands)
/// with `socket` set asks the broker there and reads no ZVM credentials; `rewind broker` reads
/// who may do what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerConfig {
    /// The broker's Unix socket (client side).
    pub socket: Option<PathBuf>,
    /// The account the broker runs as (client side): a socket served by any other account but
    /// root is refused, so nobody else can answer in its place.
    pub user: String,
    /// Who may resolve, list checkpoints and guard (user names or numeric ids); with both lists
    /// empty, every local user who can reach the socket.
    pub guard_users: Vec<String>,
    pub guard_groups: Vec<String>,
    /// Who may recover files, list and end FLR sessions and read the trail, besides root and
    /// the broker's own account.
    pub operator_users: Vec<String>,
    pub operator_groups: Vec<String>,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            socket: None,
            user: DEFAULT_BROKER_USER.to_owned(),
            guard_users: Vec::new(),
            guard_groups: Vec::new(),
            operator_users: Vec::new(),
            operator_groups: Vec::new(),
        }
    }
}

/// `[audit]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditConfig {
    /// Each record also goes out as an RFC 5424 message to this collector.
    pub syslog: Option<SyslogTarget>,
    /// What a record keeps of a call's input besides its keyed digest.
    pub store_input: StoreInput,
}

/// `[audit] store_input`: what a record keeps of the call's input (a tool's arguments, a
/// command). Each record keeps a keyed digest of it whatever this says, so that an operator
/// holding an input can prove it (`rewind log --prove`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StoreInput {
    /// `"digest"`, the default: the digest alone, so no secret the call carried reaches the
    /// trail, however it was written.
    #[default]
    Digest,
    /// `"redacted"`: the input too, with the secrets rewind recognises redacted (values cut,
    /// lists capped). A secret written in a way rewind does not recognise is kept.
    Redacted,
}

impl StoreInput {
    fn parse(text: &str) -> Result<StoreInput, String> {
        match text {
            "digest" => Ok(StoreInput::Digest),
            "redacted" => Ok(StoreInput::Redacted),
            other => Err(format!(
                "{other:?} is not \"digest\" (the default: the input's keyed digest only) or \"redacted\" (the input too, its recognised secrets redacted)"
            )),
        }
    }
}

/// A syslog collector: `unix:/dev/log`, `tcp://host:601` (also written `host:601`, the
/// default: RFC 6587 octet counting) or `udp://host:514` (only when named: a datagram can be
/// spoofed by anyone who can reach the collector).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyslogTarget {
    Unix(PathBuf),
    Udp(String),
    Tcp(String),
}

impl SyslogTarget {
    /// Parses the `[audit] syslog` value; the error says what a value looks like.
    pub fn parse(text: &str) -> Result<SyslogTarget, String> {
        let host_port = |rest: &str| {
            let ok = rest
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
            if ok {
                Ok(rest.to_owned())
            } else {
                Err(format!(
                    "{text:?} has no host:port (e.g. udp://logs.example:514)"
                ))
            }
        };
        if let Some(path) = text.strip_prefix("unix:") {
            if path.starts_with('/') {
                return Ok(SyslogTarget::Unix(PathBuf::from(path)));
            }
            return Err(format!(
                "{text:?} must name an absolute socket path (e.g. unix:/dev/log)"
            ));
        }
        if let Some(rest) = text.strip_prefix("udp://") {
            return host_port(rest).map(SyslogTarget::Udp);
        }
        if let Some(rest) = text.strip_prefix("tcp://") {
            return host_port(rest).map(SyslogTarget::Tcp);
        }
        // No scheme: TCP with octet counting, the default; UDP is only ever asked for by
        // name, since anyone can send a datagram that looks like a copy.
        if !text.contains("://") && host_port(text).is_ok() {
            return Ok(SyslogTarget::Tcp(text.to_owned()));
        }
        Err(format!(
            "{text:?} is not unix:/path, udp://host:port or tcp://host:port"
        ))
    }
}

impl std::fmt::Display for SyslogTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unix(path) => write!(f, "unix:{}", path.display()),
            Self::Udp(to) => write!(f, "udp://{to}"),
            Self::Tcp(to) => write!(f, "tcp://{to}"),
        }
    }
}

/// How to reach and authenticate to the ZVM.
#[derive(Debug, Clone)]
pub struct ZvmConfig {
    /// Base URL without a trailing slash, e.g. `https://zvm.example:443`.
    pub url: String,
    pub auth: AuthMode,
    pub username: String,
    pub password: SecretSource,
    pub client_id: String,
    /// With a client secret, the Keycloak client-credentials grant is used instead of the
    /// password grant.
    pub client_secret: Option<SecretSource>,
    /// The `AuthenticationMethod` of a 9.x session login (`auth = "session"`).
    pub session_method: SessionMethod,
    /// A CA to verify against, or one self-signed certificate to pin.
    pub ca_cert: Option<PathBuf>,
    /// The SHA-256 of the one certificate the ZVM may present.
    pub tls_fingerprint: Option<Fingerprint>,
    pub insecure_tls: bool,
}

/// Which login scheme the ZVM speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    /// ZVM 10.x and Linux ZVMA 9.5+: Keycloak OpenID Connect tokens.
    Keycloak,
    /// Windows ZVM 9.x: `POST /v1/session/add`, then the `x-zerto-session` header.
    Session,
}

/// Which account a Windows ZVM 9.x session login (`POST /v1/session/add`) checks the
/// credentials against: its `{"AuthenticationMethod": n}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionMethod {
    /// 1: a hypervisor manager (vCenter) account, as Zerto's own PowerShell wrapper sends.
    Vcenter,
    /// 0: a Windows account of the ZVM's host.
    Windows,
}

impl SessionMethod {
    /// The number Zerto expects.
    pub fn number(self) -> u8 {
        match self {
            Self::Vcenter => 1,
            Self::Windows => 0,
        }
    }

    /// The configuration word.
    pub fn word(self) -> &'static str {
        match self {
            Self::Vcenter => "vcenter",
            Self::Windows => "windows",
        }
    }
}

/// Where a secret comes from. Only [`SecretSource::resolve`] produces the value.
#[derive(Clone)]
pub enum SecretSource {
    /// An environment variable, and the setting that names it (`[zvm] password_env in
    /// <file>`), so that an unset variable is traced back to the line to fix.
    Env {
        var: String,
        setting: String,
    },
    Command(String),
    /// A private file (no access for group or others) whose first line is the secret, and
    /// the setting that names it.
    File {
        path: PathBuf,
        setting: String,
    },
    Literal(SecretString),
}

impl std::fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Env { var, .. } => write!(f, "Env({var})"),
            Self::Command(_) => f.write_str("Command(***)"),
            Self::File { path, .. } => write!(f, "File({})", path.display()),
            Self::Literal(_) => f.write_str("Literal(***)"),
        }
    }
}

/// Whether `name` is spelled as environment variables conventionally are: upper-case
/// letters, digits and `_`, not starting with a digit.
fn is_variable_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl SecretSource {
    /// Reads the secret: from the environment variable, or the first line the command prints.
    /// A command still running when `deadline` comes is killed with its whole process group
    /// (a shell's children too), never left behind.
    pub fn resolve(&self, deadline: &Deadline) -> anyhow::Result<SecretString> {
        match self {
            Self::Env { var, setting } => match std::env::var(var) {
                Ok(value) if !value.is_empty() => Ok(SecretString::from(value)),
                // A name that no shell would give a variable may be the secret itself, pasted
                // under the wrong key: it is not printed back.
                _ if !is_variable_name(var) => bail!(
                    "the environment variable named by {setting} is not set, and its name is not a variable's (A-Z, 0-9, _): it takes the name of the variable that holds the secret, never the secret"
                ),
                _ => bail!("environment variable {var} (named by {setting}) is not set"),
            },
            Self::Command(command) => run_password_command(command, deadline),
            Self::File { path, setting } => read_password_file(path, setting),
            Self::Literal(secret) => Ok(secret.clone()),
        }
    }
}

/// The first line of a `password_file`, refused when group or others can read or change the
/// file (as ssh refuses a private key anyone else can read).
fn read_password_file(path: &Path, setting: &str) -> anyhow::Result<SecretString> {
    let text = read_text_file(path)
        .with_context(|| format!("cannot read {} (named by {setting})", path.display()))?;
    if let Some(mode) = crate::platform::mode(path)
        && mode & 0o077 != 0
    {
        bail!(
            "{} (named by {setting}) can be read or changed by others (mode {:o}): `chmod 600` it",
            path.display(),
            mode & 0o777
        );
    }
    let line = text.lines().next().unwrap_or_default();
    if line.is_empty() {
        bail!("{} (named by {setting}) is empty", path.display());
    }
    Ok(SecretString::from(line.to_owned()))
}

/// Runs `password_command` in its own process group and reads the first line it prints.
fn run_password_command(command: &str, deadline: &Deadline) -> anyhow::Result<SecretString> {
    use std::io::Read as _;
    use wait_timeout::ChildExt as _;

    let mut shell = crate::platform::shell_command(command);
    crate::platform::own_process_group(&mut shell);
    let mut child = shell
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("could not run password_command")?;
    let mut stdout = child
        .stdout
        .take()
        .context("could not read password_command's output")?;
    // Read on a thread so that a command printing more than a pipe holds cannot stall.
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let Ok(Some(status)) = child.wait_timeout(deadline.remaining()) else {
        crate::platform::kill_group(&mut child);
        bail!("password_command did not finish in time and was stopped");
    };
    // The shell may have left children holding the pipe: end them before reading.
    crate::platform::kill_group(&mut child);
    if !status.success() {
        bail!("password_command failed with {status}");
    }
    let bytes = reader
        .join()
        .map_err(|_| anyhow::anyhow!("could not read password_command's output"))?;
    let text =
        String::from_utf8(bytes).context("password_command printed something that is not UTF-8")?;
    let line = text.lines().next().unwrap_or_default().to_owned();
    if line.is_empty() {
        bail!("password_command printed nothing");
    }
    Ok(SecretString::from(line))
}

/// What the hook does and how long it may take.
#[derive(Debug, Clone)]
pub struct HookConfig {
    pub budget: Duration,
    pub on_checkpoint: OnCheckpoint,
    pub on_zvm_error: OnZvmError,
    /// User catalogs, loaded after the built-in ones; later entries win.
    pub catalogs: Vec<PathBuf>,
    pub builtin_catalogs: bool,
    /// The audit trail; `None` when the user has no state directory (see [`state_dir`]).
    pub audit_log: Option<PathBuf>,
    /// The most VMs one call may checkpoint; a call naming more is an ask.
    pub max_vms: usize,
}

impl Default for HookConfig {
    fn default() -> Self {
        HookConfig {
            budget: DEFAULT_BUDGET,
            on_checkpoint: OnCheckpoint::Context,
            on_zvm_error: OnZvmError::Deny,
            // Without a list, the catalog `rewind catalog add` writes is read if present.
            catalogs: default_user_catalog()
                .filter(|p| p.is_file())
                .into_iter()
                .collect(),
            builtin_catalogs: true,
            audit_log: state_dir().ok().map(|dir| dir.join("audit.jsonl")),
            max_vms: DEFAULT_MAX_VMS,
        }
    }
}

/// How shell commands are read (`[shell]`).
#[derive(Debug, Clone)]
pub struct ShellConfig {
    /// Resolve `~/.ssh/config` aliases by reading the configuration (never running it).
    pub resolve_ssh_config: bool,
    /// The inventory for Ansible patterns without `-i`; `None`: the one Ansible would read.
    pub ansible_inventory: Option<PathBuf>,
    /// User shell catalogs, loaded after the built-in `shell.toml`.
    pub catalogs: Vec<PathBuf>,
    /// Past this age the protected-VM net is reported stale by `doctor`.
    pub inventory_max_age: std::time::Duration,
}

/// `[shell] inventory_max_age_hours` when not set: a day.
const DEFAULT_INVENTORY_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            resolve_ssh_config: true,
            ansible_inventory: None,
            catalogs: Vec::new(),
            inventory_max_age: DEFAULT_INVENTORY_MAX_AGE,
        }
    }
}

/// The answer for a mutating call whose checkpoint is confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnCheckpoint {
    /// No decision plus `additionalContext`: the user's permission rules still apply.
    Context,
    /// `allow` plus `additionalContext`: skips the user's permission prompt.
    Allow,
}

/// The answer when the ZVM cannot be reached, refuses the login, or is not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnZvmError {
    Deny,
    Ask,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    zvm: Option<RawZvm>,
    hook: Option<RawHook>,
    shell: Option<RawShell>,
    vm_aliases: Option<BTreeMap<String, String>>,
    broker: Option<RawBroker>,
    audit: Option<RawAudit>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBroker {
    socket: Option<PathBuf>,
    user: Option<String>,
    guard_users: Option<Vec<String>>,
    guard_groups: Option<Vec<String>>,
    operator_users: Option<Vec<String>>,
    operator_groups: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    syslog: Option<String>,
    store_input: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShell {
    resolve_ssh_config: Option<bool>,
    ansible_inventory: Option<PathBuf>,
    catalogs: Option<Vec<PathBuf>>,
    inventory_max_age_hours: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawZvm {
    url: String,
    auth: Option<AuthMode>,
    username: Option<String>,
    password_env: Option<String>,
    password_command: Option<String>,
    password_file: Option<PathBuf>,
    password: Option<String>,
    client_id: Option<String>,
    client_secret_env: Option<String>,
    session_method: Option<SessionMethod>,
    ca_cert: Option<PathBuf>,
    tls_fingerprint: Option<String>,
    insecure_tls: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHook {
    budget_secs: Option<f64>,
    on_checkpoint: Option<OnCheckpoint>,
    on_zvm_error: Option<OnZvmError>,
    catalogs: Option<Vec<PathBuf>>,
    builtin_catalogs: Option<bool>,
    audit_log: Option<PathBuf>,
    max_vms: Option<usize>,
}

/// A configuration `rewind` cannot use. The operator commands exit 5 on it (`exit::CONFIG`);
/// the hook denies the call with its text.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read config file {}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No file, or one that is not TOML, holds a wrong setting, lacks a section the command
    /// needs or cannot be trusted; the text says which and where.
    #[error("{0}")]
    Invalid(String),
}

impl ConfigError {
    /// Any other error met while reading a configuration, its causes kept in the text.
    fn invalid(error: &anyhow::Error) -> Self {
        Self::Invalid(format!("{error:#}"))
    }
}

impl Config {
    /// Finds and loads the configuration: `explicit` (from `--config`), then `$REWIND_CONFIG`,
    /// `./.rewind.toml`, `~/.config/rewind/config.toml`, [`SYSTEM_CONFIG`]. No file at all
    /// means defaults.
    pub fn discover(explicit: Option<&Path>) -> anyhow::Result<Config> {
        Self::search(explicit, true)
    }

    /// The hook's search: as [`Config::discover`] but without `./.rewind.toml`. The hook runs
    /// in the agent's working directory, where the agent's own file tools could write one
    /// that waves every call through.
    pub fn discover_for_hook(explicit: Option<&Path>) -> anyhow::Result<Config> {
        Self::search(explicit, false)
    }

    fn search(explicit: Option<&Path>, working_dir: bool) -> anyhow::Result<Config> {
        if let Some(path) = explicit {
            return Self::load(path);
        }
        if let Some(path) = std::env::var_os("REWIND_CONFIG").filter(|p| !p.is_empty()) {
            return Self::load(Path::new(&path));
        }
        let local = PathBuf::from(".rewind.toml");
        if working_dir && local.is_file() {
            return Self::load(&local);
        }
        if let Some(home) = home_dir() {
            let user = home.join(".config/rewind/config.toml");
            if user.is_file() {
                return Self::load(&user);
            }
        }
        let system = Path::new(SYSTEM_CONFIG);
        if system.is_file() {
            return Self::load(system);
        }
        Ok(Self::defaults())
    }

    /// The configuration of a hook run from a managed entry: only the file the entry pins,
    /// refused when anyone but root can change it or a catalog it names (whoever can would
    /// switch the guard off for everyone).
    pub fn load_managed(pinned: Option<&Path>) -> anyhow::Result<Config> {
        Self::load_pinned(pinned).map_err(|e| match e.downcast::<ConfigError>() {
            Ok(typed) => typed.into(),
            Err(other) => ConfigError::invalid(&other).into(),
        })
    }

    fn load_pinned(pinned: Option<&Path>) -> anyhow::Result<Config> {
        let Some(path) = pinned else {
            bail!(
                "a managed hook entry must pin its configuration (--config {SYSTEM_CONFIG}); reinstall it with `rewind install --scope managed`"
            );
        };
        crate::lockfile::only_root_can_change(path).map_err(|why| {
            anyhow::anyhow!(
                "the managed hook's configuration {} can be changed by others than root ({why}), so it cannot be trusted",
                path.display()
            )
        })?;
        let mut config = Self::load(path)?;
        config.managed = true;
        for catalog in config.hook.catalogs.iter().chain(&config.shell.catalogs) {
            if catalog.exists() {
                crate::lockfile::only_root_can_change(catalog).map_err(|why| {
                    anyhow::anyhow!(
                        "catalog {} named by the managed hook's configuration {} can be changed by others than root ({why}), so it cannot be trusted",
                        catalog.display(),
                        path.display()
                    )
                })?;
            }
        }
        Ok(config)
    }

    /// The configuration when no file exists: no ZVM, the default hook settings.
    pub fn defaults() -> Config {
        Config {
            origin: None,
            managed: false,
            zvm: None,
            hook: HookConfig::default(),
            shell: ShellConfig::default(),
            vm_aliases: BTreeMap::new(),
            broker: BrokerConfig::default(),
            audit: AuditConfig::default(),
            warnings: Vec::new(),
        }
    }

    /// Loads one file; every error names it.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = read_text_file(path).map_err(|source| ConfigError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses configuration text that came from `path`.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Config> {
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Invalid(describe_toml_error(text, path, &e)))?;
        Ok(Self::from_raw(raw, Some(path)).map_err(|e| ConfigError::invalid(&e))?)
    }

    fn from_raw(raw: RawConfig, origin: Option<&Path>) -> anyhow::Result<Config> {
        let base = origin
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let name = origin.map_or_else(|| "defaults".to_owned(), |p| p.display().to_string());
        let mut warnings = Vec::new();

        let zvm = raw
            .zvm
            .map(|z| validate_zvm(z, &base, &name, &mut warnings))
            .transpose()?;

        let hook = raw
            .hook
            .map(|h| validate_hook(h, &base, &name))
            .transpose()?
            .unwrap_or_default();

        let shell = raw
            .shell
            .map_or_else(ShellConfig::default, |s| ShellConfig {
                resolve_ssh_config: s.resolve_ssh_config.unwrap_or(true),
                // "" means the inventory Ansible itself would read.
                ansible_inventory: s
                    .ansible_inventory
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(|p| resolve_path(&p, &base)),
                catalogs: s
                    .catalogs
                    .unwrap_or_default()
                    .iter()
                    .map(|p| resolve_path(p, &base))
                    .collect(),
                inventory_max_age: s
                    .inventory_max_age_hours
                    .map_or(DEFAULT_INVENTORY_MAX_AGE, |h| {
                        std::time::Duration::from_secs(h.saturating_mul(3600))
                    }),
            });

        let broker = raw
            .broker
            .map(|b| validate_broker(b, &base, &name))
            .transpose()?
            .unwrap_or_default();
        let store_input = raw
            .audit
            .as_ref()
            .and_then(|a| a.store_input.as_deref())
            .map(StoreInput::parse)
            .transpose()
            .map_err(|e| anyhow::anyhow!("{name}: [audit] store_input {e}"))?
            .unwrap_or_default();
        let audit = AuditConfig {
            store_input,
            syslog: raw
                .audit
                .and_then(|a| a.syslog)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    SyslogTarget::parse(&s)
                        .map_err(|e| anyhow::anyhow!("{name}: [audit] syslog {e}"))
                })
                .transpose()?,
        };

        Ok(Config {
            origin: origin.map(Path::to_path_buf),
            managed: false,
            zvm,
            hook,
            shell,
            vm_aliases: raw.vm_aliases.unwrap_or_default(),
            broker,
            audit,
            warnings,
        })
    }

    /// The ZVM settings, or an error saying where they should be.
    pub fn require_zvm(&self) -> anyhow::Result<&ZvmConfig> {
        let missing = |text: String| anyhow::Error::from(ConfigError::Invalid(text));
        self.zvm.as_ref().ok_or_else(|| match &self.origin {
            Some(path) if self.broker.socket.is_some() => missing(format!(
                "{} names a broker ([broker] socket) and no [zvm]: this command does not go through the broker (the hook, mcp, guard, find, checkpoints, recover, flr and log do); run it where the ZVM's configuration is",
                path.display()
            )),
            Some(path) => missing(format!("{} has no [zvm] section", path.display())),
            None => missing(String::from(
                "no configuration found (--config, $REWIND_CONFIG, ./.rewind.toml, ~/.config/rewind/config.toml, /etc/rewind/config.toml); `rewind sim` prints one for the simulator",
            )),
        })
    }
}

fn validate_broker(raw: RawBroker, base: &Path, name: &str) -> anyhow::Result<BrokerConfig> {
    let socket = raw
        .socket
        .filter(|p| !p.as_os_str().is_empty())
        .map(|p| resolve_path(&p, base));
    let user = raw.user.unwrap_or_else(|| DEFAULT_BROKER_USER.to_owned());
    if user.is_empty() {
        bail!(
            "{name}: [broker] user must name the broker's account (default {DEFAULT_BROKER_USER:?})"
        );
    }
    let lists = [
        ("guard_users", &raw.guard_users),
        ("guard_groups", &raw.guard_groups),
        ("operator_users", &raw.operator_users),
        ("operator_groups", &raw.operator_groups),
    ];
    for (key, list) in lists {
        if list.iter().flatten().any(String::is_empty) {
            bail!("{name}: [broker] {key} has an empty name");
        }
    }
    Ok(BrokerConfig {
        socket,
        user,
        guard_users: raw.guard_users.unwrap_or_default(),
        guard_groups: raw.guard_groups.unwrap_or_default(),
        operator_users: raw.operator_users.unwrap_or_default(),
        operator_groups: raw.operator_groups.unwrap_or_default(),
    })
}

fn validate_hook(hook: RawHook, base: &Path, name: &str) -> anyhow::Result<HookConfig> {
    let budget = match hook.budget_secs {
        None => DEFAULT_BUDGET,
        Some(secs) if secs.is_finite() && secs > 0.0 && secs <= MAX_BUDGET_SECS => {
            Duration::from_secs_f64(secs)
        }
        Some(_) => {
            bail!("{name}: [hook] budget_secs must be more than 0 and at most {MAX_BUDGET_SECS}")
        }
    };
    let max_vms = match hook.max_vms {
        None => DEFAULT_MAX_VMS,
        Some(n) if (1..=1000).contains(&n) => n,
        Some(_) => bail!("{name}: [hook] max_vms must be between 1 and 1000"),
    };
    let defaults = HookConfig::default();
    Ok(HookConfig {
        max_vms,
        budget,
        on_checkpoint: hook.on_checkpoint.unwrap_or(defaults.on_checkpoint),
        on_zvm_error: hook.on_zvm_error.unwrap_or(defaults.on_zvm_error),
        catalogs: match hook.catalogs {
            Some(files) => files.iter().map(|p| resolve_path(p, base)).collect(),
            None => defaults.catalogs,
        },
        builtin_catalogs: hook.builtin_catalogs.unwrap_or(defaults.builtin_catalogs),
        audit_log: hook
            .audit_log
            .map_or(defaults.audit_log, |path| Some(resolve_path(&path, base))),
    })
}

fn validate_zvm(
    z: RawZvm,
    base: &Path,
    name: &str,
    warnings: &mut Vec<String>,
) -> anyhow::Result<ZvmConfig> {
    let url = z.url.trim_end_matches('/').to_owned();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        bail!(
            "{name}: [zvm] url must start with https:// (e.g. https://zvm.example:443; http:// is accepted with a warning)"
        );
    }
    if url.contains('@') {
        bail!("{name}: [zvm] url must not carry credentials; use username and password_env");
    }
    match url::Url::parse(&url) {
        Ok(parsed) if parsed.host_str().is_some() => {}
        Ok(_) => bail!("{name}: [zvm] url {url:?} names no host"),
        Err(e) => bail!("{name}: [zvm] url {url:?} is not a URL: {e}"),
    }
    if url.starts_with("http://") {
        warnings.push(format!(
            "{name}: [zvm] url is plain http: the password crosses the network unencrypted"
        ));
    }
    let password = match (
        z.password_env,
        z.password_command,
        z.password_file,
        z.password,
    ) {
        (Some(var), None, None, None) => SecretSource::Env {
            var,
            setting: format!("[zvm] password_env in {name}"),
        },
        (None, Some(cmd), None, None) => SecretSource::Command(cmd),
        (None, None, Some(path), None) => SecretSource::File {
            path: resolve_path(&path, base),
            setting: format!("[zvm] password_file in {name}"),
        },
        (None, None, None, Some(literal)) => {
            warnings.push(format!(
                "{name}: [zvm] password is written in the file; prefer password_env, password_file or password_command"
            ));
            SecretSource::Literal(SecretString::from(literal))
        }
        (None, None, None, None) if z.client_secret_env.is_some() => SecretSource::Env {
            var: String::from("REWIND_ZVM_PASSWORD"),
            setting: format!("the default password_env, as {name} sets none"),
        },
        (None, None, None, None) => {
            bail!(
                "{name}: [zvm] needs password_env (or password_file or password_command) for the ZVM password"
            )
        }
        _ => bail!(
            "{name}: [zvm] set only one of password_env, password_command, password_file, password"
        ),
    };
    if z.client_secret_env.is_some() && z.client_id.is_none() {
        bail!(
            "{name}: [zvm] client_secret_env needs client_id: the client-credentials grant logs in as the confidential client you created in the ZVM's Keycloak (realm zerto), not as zerto-client"
        );
    }
    let insecure_tls = z.insecure_tls.unwrap_or(false);
    if insecure_tls {
        warnings.push(format!(
            "{name}: [zvm] insecure_tls = true: the ZVM's certificate is NOT verified; set ca_cert instead"
        ));
    }
    let tls_fingerprint = match z.tls_fingerprint {
        Some(text) => Some(
            Fingerprint::parse(&text)
                .map_err(|e| anyhow::anyhow!("{name}: [zvm] tls_fingerprint: {e}"))?,
        ),
        None => None,
    };
    if tls_fingerprint.is_some() && z.ca_cert.is_some() {
        bail!(
            "{name}: [zvm] set only one of ca_cert and tls_fingerprint: each says alone which certificate to trust"
        );
    }
    Ok(ZvmConfig {
        url,
        auth: z.auth.unwrap_or(AuthMode::Keycloak),
        username: z.username.unwrap_or_default(),
        password,
        client_id: z.client_id.unwrap_or_else(|| String::from("zerto-client")),
        client_secret: z.client_secret_env.map(|var| SecretSource::Env {
            var,
            setting: format!("[zvm] client_secret_env in {name}"),
        }),
        session_method: z.session_method.unwrap_or(SessionMethod::Vcenter),
        ca_cert: z.ca_cert.map(|p| resolve_path(&p, base)),
        tls_fingerprint,
        insecure_tls,
    })
}

/// Describes a TOML error by file, line, column and key, never by the value: the value may
/// be a password written in the wrong type (`password = 8675309123`), and serde's own
/// messages quote it (``invalid type: integer `8675309123` ``). The parser's syntax messages
/// are fixed texts that name tokens, not input, so they are kept.
pub(crate) fn describe_toml_error(text: &str, path: &Path, error: &toml::de::Error) -> String {
    let position = error.span().map(|span| span.start.min(text.len()));
    let place = position.map_or_else(String::new, |at| {
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
            .chars()
            .count()
            + 1;
        format!(" line {line} column {column}:")
    });
    let file = path.display();
    // What the parser could read names the key, even around a syntax error.
    let (document, syntax) = toml::de::DeTable::parse_recoverable(text);
    let found = position.and_then(|at| locate(document.get_ref(), at));
    let key = found
        .as_ref()
        .map_or_else(String::new, |(key, _)| format!(" `{key}`"));
    if !syntax.is_empty() {
        let key = if key.is_empty() {
            key
        } else {
            format!("{key}:")
        };
        return format!("{file}:{place}{key} {}", error.message().trim_end());
    }
    let kind = found.as_ref().and_then(|(_, kind)| *kind);
    let message = error.message();
    // The part after ", expected" describes what the program wants, not what the file says.
    let expected = message
        .split_once(", expected ")
        .map(|(_, wanted)| format!(", expected {}", plain_type(wanted.trim_end())));
    let expected = expected.as_deref().unwrap_or_default();
    let what = if message.starts_with("invalid type") {
        let found = kind.map_or_else(String::new, |kind| format!(" (found {})", article(kind)));
        format!("has the wrong type{found}{expected}")
    } else if message.starts_with("unknown variant") {
        format!("is not one of the accepted values{expected}")
    } else if let Some(field) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field)
    {
        // A key at the top of the file is a section (`[hooks]` for `[hook]`).
        let mean = crate::suggest::unknown_field(message);
        if key.is_empty() || key.trim().trim_matches('`') == field {
            let mean = mean.map_or_else(String::new, |m| format!("; did you mean `[{m}]`?"));
            return format!("{file}:{place} unknown section `[{field}]`{expected}{mean}");
        }
        let mean = mean.map_or_else(String::new, |m| format!("; did you mean `{m}`?"));
        format!("has an unknown key `{field}`{expected}{mean}")
    } else if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field)
    {
        format!("is missing the key `{field}`")
    } else {
        let found = kind.map_or_else(String::new, |kind| format!(" (found {})", article(kind)));
        format!("is not a valid value{found}{expected}")
    };
    if key.is_empty() {
        format!("{file}:{place} the document {what}")
    } else {
        format!("{file}:{place}{key} {what}")
    }
}

/// serde names Rust's number types (`expected f64`); a person reading a config wants the
/// TOML words.
fn plain_type(wanted: &str) -> &str {
    match wanted {
        "f32" | "f64" => "a number",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        other => other,
    }
}

/// The dotted key whose key or value holds byte `at`, the deepest one, with the TOML type of
/// its value.
fn locate(table: &toml::de::DeTable<'_>, at: usize) -> Option<(String, Option<&'static str>)> {
    for (key, value) in table {
        let inside = |span: std::ops::Range<usize>| span.contains(&at) || span.start == at;
        let name = key.get_ref().to_string();
        if let Some((inner, kind)) = locate_value(value.get_ref(), at) {
            return Some((format!("{name}.{inner}"), kind));
        }
        if inside(key.span()) {
            return Some((name, None));
        }
        if inside(value.span()) {
            return Some((name, Some(value.get_ref().type_str())));
        }
    }
    None
}

fn locate_value(
    value: &toml::de::DeValue<'_>,
    at: usize,
) -> Option<(String, Option<&'static str>)> {
    match value {
        toml::de::DeValue::Table(table) => locate(table, at),
        toml::de::DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            locate_value(item.get_ref(), at)
                .map(|(inner, kind)| (format!("{i}.{inner}"), kind))
                .or_else(|| {
                    item.span()
                        .contains(&at)
                        .then(|| (i.to_string(), Some(item.get_ref().type_str())))
                })
        }),
        _ => None,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" | "array" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

/// The catalog `rewind catalog add` writes when `[hook] catalogs` names none:
/// `~/.config/rewind/catalog.toml`.
pub fn default_user_catalog() -> Option<PathBuf> {
    home_dir().map(|h| h.join(".config/rewind/catalog.toml"))
}

impl HookConfig {
    /// The audit trail's path, or why there is none.
    pub fn audit_path(&self) -> anyhow::Result<&Path> {
        match &self.audit_log {
            Some(path) => Ok(path),
            None => Err(state_dir()
                .err()
                .unwrap_or_else(|| anyhow::anyhow!("no audit trail is configured"))),
        }
    }

    /// Where `rewind catalog add` writes: the first configured catalog, or the default one.
    pub fn user_catalog(&self) -> Option<PathBuf> {
        self.catalogs.first().cloned().or_else(default_user_catalog)
    }
}

/// Expands `~/` and makes a relative path relative to the config file's folder.
fn resolve_path(path: &Path, base: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~")
        && let Some(home) = home_dir()
    {
        return home.join(rest);
    }
    if path.is_relative() {
        base.join(path)
    } else {
        path.to_path_buf()
    }
}

/// The user's home directory: `$HOME`; on Windows `%USERPROFILE%`.
pub fn home_dir() -> Option<PathBuf> {
    crate::platform::home_dir()
}

/// The system configuration: last in the search order, and the one a managed hook entry pins.
pub const SYSTEM_CONFIG: &str = "/etc/rewind/config.toml";

/// Largest configuration or catalog file read; a larger one is an error, not a slow parse.
pub(crate) const TEXT_FILE_MAX: u64 = 1024 * 1024;

/// Reads a configuration or catalog file that must be a regular file of at most
/// [`TEXT_FILE_MAX`] bytes of UTF-8. A FIFO, a device or a directory is refused without
/// blocking (it is opened non-blocking and checked before any read): the hook reads these
/// files before its watchdog exists, and a read that never returns would be no answer at all.
pub(crate) fn read_text_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    crate::platform::nonblocking_open(&mut options);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > TEXT_FILE_MAX {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(TEXT_FILE_MAX + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > TEXT_FILE_MAX {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn too_large() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("larger than {} KiB", TEXT_FILE_MAX / 1024),
    )
}

/// Where shared, short-lived state lives (token cache, lock files):
/// `$XDG_CACHE_HOME/rewind` or `~/.cache/rewind`, created with mode 0700 when missing and
/// refused when another user owns it or group or others can write it. Never a shared
/// temporary directory: with neither variable set there is none, and the error says so.
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    let dir = user_dir(UserDir::Cache, "token cache and locks")?;
    crate::lockfile::create_private_dir(&dir)
        .with_context(|| format!("cannot use {} for the token cache and locks", dir.display()))?;
    Ok(dir)
}

/// Where [`cache_dir`] is, without creating or checking it (to recognise the token cache in
/// a command).
pub(crate) fn cache_dir_path() -> anyhow::Result<PathBuf> {
    user_dir(UserDir::Cache, "token cache and locks")
}

/// Where the audit trail lives: `$XDG_STATE_HOME/rewind` or `~/.local/state/rewind`. As
/// [`cache_dir`], never a shared temporary directory.
pub fn state_dir() -> anyhow::Result<PathBuf> {
    user_dir(UserDir::State, "audit trail")
}

/// `$<XDG variable>/rewind`, else this OS's place for it under the home directory (Linux:
/// `~/.cache/rewind`, `~/.local/state/rewind`; see `platform::user_dir`). A relative XDG
/// variable is ignored, as the XDG base directory specification says.
fn user_dir(kind: UserDir, what: &str) -> anyhow::Result<PathBuf> {
    match crate::platform::user_dir(kind) {
        Some(dir) => Ok(dir),
        None => bail!(
            "no directory for rewind's {what}: neither ${} nor {} is set, and rewind never falls back to a shared temporary directory",
            crate::platform::user_dir_variable(kind),
            crate::platform::HOME_VARIABLE
        ),
    }
}

/// The SHA-256 of a certificate's DER bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of `der`.
    pub fn of(der: &[u8]) -> Fingerprint {
        Fingerprint(<sha2::Sha256 as sha2::Digest>::digest(der).into())
    }

    /// Reads `sha256:` followed by 64 hex digits, with or without colons, in either case
    /// (so `openssl x509 -noout -fingerprint -sha256` output pastes after `sha256:`). The
    /// error says what is wrong without quoting the text: it came from a config file, where
    /// a secret pasted under the wrong key must not be printed back.
    pub fn parse(text: &str) -> Result<Fingerprint, String> {
        const HOW: &str =
            "it must be sha256: followed by the 64 hex digits `rewind trust <url>` prints";
        let text = text.trim();
        // OpenSSL's own line: `sha256 Fingerprint=AB:CD:…`.
        let split = match text.split_once(" Fingerprint=") {
            Some(parts) => Some(parts),
            None => text.split_once(':'),
        };
        let Some((algorithm, hex)) = split else {
            return Err(format!("this is not a fingerprint: {HOW}"));
        };
        if !algorithm.eq_ignore_ascii_case("sha256") {
            return Err(format!(
                "only SHA-256 fingerprints are supported, and this one does not start with sha256: ({HOW})"
            ));
        }
        let digits: Vec<u8> = hex.bytes().filter(|b| *b != b':').collect();
        if digits.len() != 64 {
            return Err(format!(
                "a sha256 fingerprint has 64 hex digits, this one has {} ({HOW})",
                digits.len()
            ));
        }
        if let Some(n) = digits.iter().position(|b| !b.is_ascii_hexdigit()) {
            return Err(format!(
                "hex digit {} of 64 is not one of 0-9 and A-F ({HOW})",
                n + 1
            ));
        }
        let mut bytes = [0_u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
            let pair = std::str::from_utf8(pair).unwrap_or("00");
            *byte = u8::from_str_radix(pair, 16).unwrap_or_default();
        }
        Ok(Fingerprint(bytes))
    }
}

impl std::fmt::Display for Fingerprint {
    /// `sha256:AB:CD:…`, the spelling OpenSSL prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("sha256:")?;
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{b:02X}")?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret as _;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, Path::new("/etc/rewind/config.toml"))
    }

    #[test]
    fn a_client_secret_needs_its_own_client_and_session_method_defaults_to_vcenter() {
        let err = Config::parse(
            "[zvm]\nurl = \"https://zvm.example\"\nclient_secret_env = \"S\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("c.toml: [zvm] client_secret_env needs client_id"),
            "{err}"
        );
        let zvm = Config::parse(
            "[zvm]\nurl = \"https://zvm.example\"\nclient_secret_env = \"S\"\nclient_id = \"api-script\"\n",
            Path::new("c.toml"),
        )
        .expect("valid")
        .zvm
        .expect("zvm");
        assert_eq!(zvm.client_id, "api-script");
        assert_eq!(zvm.session_method, SessionMethod::Vcenter);
        let windows = Config::parse(
            "[zvm]\nurl = \"https://zvm.example\"\nauth = \"session\"\npassword_env = \"P\"\nsession_method = \"windows\"\n",
            Path::new("c.toml"),
        )
        .expect("valid")
        .zvm
        .expect("zvm");
        assert_eq!(windows.session_method.number(), 0);
    }

    #[test]
    fn reads_the_documented_example() {
        let config = parse(
            r#"
            [zvm]
            url = "https://zvm.example:443/"
            username = "svc-rewind"
            password_env = "REWIND_ZVM_PASSWORD"
            ca_cert = "zvm.pem"

            [hook]
            budget_secs = 150
            on_checkpoint = "allow"
            on_zvm_error = "ask"
            catalogs = ["extra.toml"]

            [vm_aliases]
            "web01.corp.example" = "jp-ubuntu"
            "#,
        )
        .expect("valid");
        let zvm = config.zvm.expect("zvm");
        assert_eq!(zvm.url, "https://zvm.example:443");
        assert_eq!(zvm.ca_cert, Some(PathBuf::from("/etc/rewind/zvm.pem")));
        assert_eq!(zvm.client_id, "zerto-client");
        assert_eq!(config.hook.on_checkpoint, OnCheckpoint::Allow);
        assert_eq!(config.hook.on_zvm_error, OnZvmError::Ask);
        assert_eq!(
            config.hook.catalogs,
            [PathBuf::from("/etc/rewind/extra.toml")]
        );
        assert_eq!(config.vm_aliases["web01.corp.example"], "jp-ubuntu");
        assert!(config.warnings.is_empty());
    }

    #[test]
    fn broker_and_audit_sections_are_read_and_checked() {
        let config = parse(
            r#"
            [broker]
            socket = "/run/rewind/broker.sock"
            guard_groups = ["agents"]
            operator_users = ["alice"]

            [audit]
            syslog = "tcp://logs.example:601"
            "#,
        )
        .expect("valid");
        assert_eq!(
            config.broker.socket,
            Some(PathBuf::from("/run/rewind/broker.sock"))
        );
        assert_eq!(config.broker.user, DEFAULT_BROKER_USER);
        assert_eq!(config.broker.guard_groups, ["agents"]);
        assert_eq!(
            config.audit.syslog,
            Some(SyslogTarget::Tcp(String::from("logs.example:601")))
        );
        assert_eq!(config.audit.store_input, StoreInput::Digest, "the default");
        let redacted = parse("[audit]\nstore_input = \"redacted\"").expect("valid");
        assert_eq!(redacted.audit.store_input, StoreInput::Redacted);
        assert_eq!(
            SyslogTarget::parse("logs.example:601"),
            Ok(SyslogTarget::Tcp(String::from("logs.example:601"))),
            "no scheme: TCP"
        );
        for (text, says) in [
            ("[audit]\nsyslog = \"logs.example\"", "[audit] syslog"),
            ("[audit]\nsyslog = \"udp://logs.example\"", "no host:port"),
            ("[audit]\nsyslog = \"unix:dev/log\"", "absolute"),
            (
                "[audit]\nstore_input = \"all\"",
                "[audit] store_input \"all\" is not",
            ),
            ("[broker]\nsockets = \"/x\"", "sockets"),
            (
                "[broker]\noperator_users = [\"\"]",
                "operator_users has an empty name",
            ),
        ] {
            let err = format!("{:#}", parse(text).expect_err(text));
            assert!(
                err.contains(says) && err.contains("config.toml"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn unknown_key_names_file_and_key() {
        let err = parse("[zvm]\nurl = \"https://z\"\npassword_env = \"P\"\npasword = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/etc/rewind/config.toml"), "{err}");
        assert!(err.contains("pasword"), "{err}");
    }

    #[test]
    fn a_parse_error_never_quotes_the_line_that_may_hold_a_password() {
        for text in [
            "[zvm]\nurl = \"https://z\"\npassword = hunter2\n",
            "[zvm]\nurl = \"https://z\"\npasword = \"hunter2\"\n",
        ] {
            let err = format!("{:#}", parse(text).expect_err(text));
            assert!(!err.contains("hunter2"), "{err}");
            assert!(
                err.contains("/etc/rewind/config.toml: line 3 column"),
                "{err}"
            );
        }
    }

    /// Every TOML type, on secret keys and others, in every section: a rejected value never
    /// appears in the message, which names file, line, column and key instead.
    #[test]
    fn no_error_quotes_a_value_of_any_type() {
        let values = [
            ("8675309123", "8675309123"),
            ("-8675309123", "8675309123"),
            ("0x8675309123", "8675309123"),
            ("8675309.125", "8675309"),
            ("8.675309e12", "8.675309"),
            ("true", "true"),
            ("false", "false"),
            ("\"hunter2\"", "hunter2"),
            ("'hunter2'", "hunter2"),
            ("\"\"\"hunter2\"\"\"", "hunter2"),
            ("1979-05-27T07:32:00Z", "1979"),
            ("1979-05-27", "1979"),
            ("07:32:00", "07:32"),
            ("[\"hunter2\", 8675309123]", "hunter2"),
            ("[8675309123]", "8675309123"),
            ("{ a = \"hunter2\" }", "hunter2"),
            ("{ a = 8675309123 }", "8675309123"),
            ("hunter2", "hunter2"),
            ("nan", "nan"),
        ];
        let places = [
            ("zvm", "password"),
            ("zvm", "url"),
            ("zvm", "username"),
            ("zvm", "password_env"),
            ("zvm", "password_command"),
            ("zvm", "password_file"),
            ("zvm", "client_id"),
            ("zvm", "client_secret_env"),
            ("zvm", "session_method"),
            ("zvm", "auth"),
            ("zvm", "insecure_tls"),
            ("zvm", "ca_cert"),
            ("zvm", "tls_fingerprint"),
            ("hook", "budget_secs"),
            ("hook", "on_checkpoint"),
            ("hook", "on_zvm_error"),
            ("hook", "catalogs"),
            ("hook", "builtin_catalogs"),
            ("hook", "audit_log"),
            ("vm_aliases", "web01"),
        ];
        let mut rejected = 0;
        for (section, key) in places {
            for (value, needle) in values {
                let url = if key == "url" {
                    String::new()
                } else {
                    String::from("url = \"https://zvm.example\"\n")
                };
                let zvm = if section == "zvm" {
                    format!("[zvm]\n{url}{key} = {value}\n")
                } else {
                    format!("[{section}]\n{key} = {value}\n")
                };
                let Err(err) = parse(&zvm) else { continue };
                rejected += 1;
                let err = format!("{err:#}");
                assert!(!err.contains(needle), "{section}.{key} = {value}: {err}");
                assert!(err.contains("/etc/rewind/config.toml"), "{err}");
                if !err.contains("must") && !err.contains("needs") {
                    assert!(
                        err.contains("line 2 column") || err.contains("line 3 column"),
                        "{err}"
                    );
                    assert!(err.contains(key) || value.starts_with('{'), "{err}");
                }
            }
        }
        // The wrong types are the bulk: every key rejects most of them.
        assert!(rejected > 200, "{rejected}");
    }

    #[test]
    fn an_unknown_section_is_called_a_section_and_an_unknown_key_a_key() {
        let err = format!(
            "{:#}",
            parse("[hooks]\nbudget_secs = 5\n").expect_err("section")
        );
        assert!(
            err.starts_with("/etc/rewind/config.toml: line 1 column 2: unknown section `[hooks]`, expected one of `zvm`, `hook`"),
            "{err}"
        );
        let err = format!("{:#}", parse("[hook]\nbudgt = 5\n").expect_err("key"));
        assert!(
            err.contains("`hook.budgt` has an unknown key `budgt`, expected one of `budget_secs`"),
            "{err}"
        );
        assert!(err.ends_with("; did you mean `budget_secs`?"), "{err}");
        assert!(
            format!("{:#}", parse("[hooks]\n").expect_err("section"))
                .ends_with("; did you mean `[hook]`?")
        );
        let far = format!("{:#}", parse("[hook]\nxyzzy = 5\n").expect_err("key"));
        assert!(!far.contains("did you mean"), "{far}");
    }

    #[test]
    fn a_wrong_type_says_which_type_was_found_and_which_was_wanted() {
        let err = format!(
            "{:#}",
            parse("[zvm]\nurl = \"https://z\"\npassword = 8675309123\n").expect_err("integer")
        );
        assert_eq!(
            err,
            "/etc/rewind/config.toml: line 3 column 12: `zvm.password` has the wrong type (found an integer), expected a string"
        );
        // Numbers are named in TOML's words, not Rust's (`expected f64`).
        let err = format!(
            "{:#}",
            parse("[hook]\nbudget_secs = \"150\"\n").expect_err("a string for a number")
        );
        assert_eq!(
            err,
            "/etc/rewind/config.toml: line 2 column 15: `hook.budget_secs` has the wrong type (found a string), expected a number"
        );
        let err = format!(
            "{:#}",
            parse("[hook]\nmax_vms = 2.5\n").expect_err("a float for a count")
        );
        assert!(
            err.ends_with("`hook.max_vms` has the wrong type (found a float), expected a whole number (0 or more)"),
            "{err}"
        );
        let err = format!(
            "{:#}",
            parse("[hook]\non_checkpoint = \"sometimes\"\n").expect_err("variant")
        );
        assert_eq!(
            err,
            "/etc/rewind/config.toml: line 2 column 17: `hook.on_checkpoint` is not one of the accepted values, expected `context` or `allow`"
        );
    }

    #[test]
    fn a_url_without_a_scheme_says_what_one_looks_like() {
        let err = format!(
            "{:#}",
            parse("[zvm]\nurl = \"zvm.example:443\"\npassword_env = \"P\"\n")
                .expect_err("no scheme")
        );
        assert!(
            err.contains("must start with https://") && err.contains("https://zvm.example:443"),
            "{err}"
        );
    }

    #[test]
    fn a_url_that_is_not_one_is_refused_naming_the_key_and_the_url() {
        for url in [
            "https://:443",
            "https://zvm example:443",
            "https://zvm:99999",
            "https://[::1",
        ] {
            let err = format!(
                "{:#}",
                parse(&format!("[zvm]\nurl = \"{url}\"\npassword_env = \"P\"\n"))
                    .expect_err("not a URL")
            );
            assert!(
                err.contains("[zvm] url") && err.contains(&format!("{url:?}")),
                "{url}: {err}"
            );
        }
    }

    #[test]
    fn literal_password_is_warned_about_and_never_debug_printed() {
        let config = parse("[zvm]\nurl = \"https://z\"\npassword = \"hunter2\"\n").expect("valid");
        assert!(config.warnings[0].contains("password is written in the file"));
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn insecure_tls_is_warned_about() {
        let config =
            parse("[zvm]\nurl = \"https://z\"\npassword_env = \"P\"\ninsecure_tls = true\n")
                .expect("valid");
        assert!(config.warnings[0].contains("NOT verified"));
    }

    #[test]
    fn missing_password_env_names_the_variable() {
        let err = SecretSource::Env {
            var: "REWIND_TEST_SURELY_UNSET".into(),
            setting: "[zvm] password_env in /etc/rewind.toml".into(),
        }
        .resolve(&Deadline::after(Duration::from_secs(5)))
        .unwrap_err()
        .to_string();
        assert!(err.contains("REWIND_TEST_SURELY_UNSET"), "{err}");
        // The setting and the file that name it, to know what to fix.
        assert!(
            err.contains("[zvm] password_env in /etc/rewind.toml"),
            "{err}"
        );
        // The password itself under password_env is not printed back.
        let err = SecretSource::Env {
            var: "hunter2!".into(),
            setting: "[zvm] password_env in /etc/rewind.toml".into(),
        }
        .resolve(&Deadline::after(Duration::from_secs(5)))
        .unwrap_err()
        .to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(err.contains("takes the name of the variable"), "{err}");
        assert!(
            err.contains("[zvm] password_env in /etc/rewind.toml"),
            "{err}"
        );
    }

    #[test]
    fn a_resolved_secret_never_formats_its_value() {
        let source = SecretSource::Literal(SecretString::from("hunter2"));
        let secret = source
            .resolve(&Deadline::after(Duration::from_secs(5)))
            .expect("resolves");
        let shown = format!(
            "{source:?} {source:#?} {secret:?} {secret:#?} {:?}",
            Some(&secret)
        );
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(secret.expose_secret(), "hunter2");
    }

    #[test]
    fn password_command_first_line() {
        let secret = SecretSource::Command("printf 's3cret\\nignored\\n'".into())
            .resolve(&Deadline::after(Duration::from_secs(5)))
            .expect("runs");
        assert_eq!(secret.expose_secret(), "s3cret");
    }

    #[test]
    fn a_password_command_past_the_deadline_is_killed_with_its_children() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pids = dir.path().join("pids");
        // The shell starts a child that would outlive it, then waits.
        let command = format!(
            "sleep 60 & echo $! > {p}; echo $$ >> {p}; wait",
            p = pids.display()
        );
        let err = SecretSource::Command(command)
            .resolve(&Deadline::after(Duration::from_millis(300)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not finish in time"), "{err}");
        let text = std::fs::read_to_string(&pids).expect("pids written");
        for pid in text.split_whitespace() {
            // Reaped by us (the shell) or by init (its child) once killed: gone or a zombie.
            let running = || {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
                !matches!(state, None | Some('Z' | 'X'))
            };
            let waited = std::time::Instant::now();
            while running() && waited.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(!running(), "process {pid} still runs");
        }
    }

    #[test]
    fn password_file_is_its_first_line_and_must_be_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("zvm-password");
        std::fs::write(&file, "s3cret\nignored\n").expect("write");
        crate::platform::set_mode(&file, 0o600).expect("chmod");
        let config = Config::parse(
            "[zvm]\nurl = \"https://z\"\npassword_file = \"zvm-password\"\n",
            &dir.path().join("config.toml"),
        )
        .expect("valid");
        let source = &config.zvm.expect("zvm").password;
        let deadline = Deadline::after(Duration::from_secs(5));
        assert_eq!(
            source.resolve(&deadline).expect("read").expose_secret(),
            "s3cret"
        );
        crate::platform::set_mode(&file, 0o644).expect("chmod");
        if !crate::platform::MODE_BITS {
            return;
        }
        let err = source.resolve(&deadline).unwrap_err().to_string();
        assert!(
            err.contains("chmod 600") && !err.contains("s3cret"),
            "{err}"
        );
        let both =
            parse("[zvm]\nurl = \"https://z\"\npassword_env = \"P\"\npassword_file = \"p\"\n")
                .unwrap_err()
                .to_string();
        assert!(both.contains("only one of"), "{both}");
    }

    #[test]
    fn budget_must_be_positive() {
        let err = parse("[hook]\nbudget_secs = 0\n").unwrap_err().to_string();
        assert!(err.contains("budget_secs"), "{err}");
    }
}
