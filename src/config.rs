//! Configuration: where it is found, what it may contain, and the validated form the rest of
//! the program reads. Unknown keys are errors naming the file and key; secrets stay in
//! [`Secret`] and are resolved only when a request needs them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::Deserialize;

use crate::secret::Secret;
use crate::zvm::tls::Fingerprint;

/// The hook's default budget: under the host timeout of 180 s that `rewind install` writes.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(150);

/// Everything `rewind` reads from its configuration file.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file this came from; `None` when no file was found and defaults apply.
    pub origin: Option<PathBuf>,
    pub zvm: Option<ZvmConfig>,
    pub hook: HookConfig,
    /// Other names for VMs (`"web01.corp.example" = "jp-ubuntu"`), matched case-insensitively.
    pub vm_aliases: BTreeMap<String, String>,
    /// Problems worth saying on every run (a literal password, TLS verification off).
    pub warnings: Vec<String>,
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

/// Where a secret comes from. Only [`SecretSource::resolve`] produces the value.
#[derive(Clone)]
pub enum SecretSource {
    Env(String),
    Command(String),
    Literal(Secret),
}

impl std::fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Env(name) => write!(f, "Env({name})"),
            Self::Command(_) => f.write_str("Command(***)"),
            Self::Literal(_) => f.write_str("Literal(***)"),
        }
    }
}

impl SecretSource {
    /// Reads the secret: from the environment variable, or the first line the command prints.
    pub fn resolve(&self) -> anyhow::Result<Secret> {
        match self {
            Self::Env(name) => match std::env::var(name) {
                Ok(value) if !value.is_empty() => Ok(Secret::new(value)),
                _ => bail!("environment variable {name} (named in [zvm] of the config) is not set"),
            },
            Self::Command(command) => {
                let output = Command::new("sh")
                    .arg("-c")
                    .arg(command)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .context("could not run password_command")?;
                if !output.status.success() {
                    bail!("password_command failed with {}", output.status);
                }
                let text = String::from_utf8(output.stdout)
                    .context("password_command printed something that is not UTF-8")?;
                let line = text.lines().next().unwrap_or_default().to_owned();
                if line.is_empty() {
                    bail!("password_command printed nothing");
                }
                Ok(Secret::new(line))
            }
            Self::Literal(secret) => Ok(secret.clone()),
        }
    }
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
    pub audit_log: PathBuf,
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
            audit_log: state_dir().join("audit.jsonl"),
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
    vm_aliases: Option<BTreeMap<String, String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawZvm {
    url: String,
    auth: Option<AuthMode>,
    username: Option<String>,
    password_env: Option<String>,
    password_command: Option<String>,
    password: Option<String>,
    client_id: Option<String>,
    client_secret_env: Option<String>,
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
}

impl Config {
    /// Finds and loads the configuration: `explicit` (from `--config`), then `$REWIND_CONFIG`,
    /// `./.rewind.toml`, `~/.config/rewind/config.toml`. No file at all means defaults.
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
        Ok(Self::defaults())
    }

    /// The configuration when no file exists: no ZVM, the default hook settings.
    pub fn defaults() -> Config {
        Config {
            origin: None,
            zvm: None,
            hook: HookConfig::default(),
            vm_aliases: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Loads one file; every error names it.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        Self::parse(&text, path)
    }

    /// Parses configuration text that came from `path`.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Config> {
        // The message names the line and key but never quotes the line: it may hold a secret.
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let place = e.span().map_or_else(String::new, |span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" line {line} column {column}:")
            });
            anyhow::anyhow!("{}:{place} {}", path.display(), e.message().trim_end())
        })?;
        Self::from_raw(raw, Some(path))
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

        Ok(Config {
            origin: origin.map(Path::to_path_buf),
            zvm,
            hook,
            vm_aliases: raw.vm_aliases.unwrap_or_default(),
            warnings,
        })
    }

    /// The ZVM settings, or an error saying where they should be.
    pub fn require_zvm(&self) -> anyhow::Result<&ZvmConfig> {
        self.zvm.as_ref().ok_or_else(|| match &self.origin {
            Some(path) => anyhow::anyhow!("{} has no [zvm] section", path.display()),
            None => anyhow::anyhow!(
                "no configuration found (--config, $REWIND_CONFIG, ./.rewind.toml, ~/.config/rewind/config.toml); `rewind sim` prints one for the simulator"
            ),
        })
    }
}

fn validate_hook(hook: RawHook, base: &Path, name: &str) -> anyhow::Result<HookConfig> {
    let budget = match hook.budget_secs {
        None => DEFAULT_BUDGET,
        Some(secs) if secs.is_finite() && secs > 0.0 && secs <= 3600.0 => {
            Duration::from_secs_f64(secs)
        }
        Some(secs) => bail!("{name}: [hook] budget_secs = {secs} must be between 0 and 3600"),
    };
    let defaults = HookConfig::default();
    Ok(HookConfig {
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
            .map_or(defaults.audit_log, |path| resolve_path(&path, base)),
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
        bail!("{name}: [zvm] url {url:?} must start with https://");
    }
    if url.contains('@') {
        bail!("{name}: [zvm] url must not carry credentials; use username and password_env");
    }
    if url.starts_with("http://") {
        warnings.push(format!(
            "{name}: [zvm] url is plain http: the password crosses the network unencrypted"
        ));
    }
    let password = match (z.password_env, z.password_command, z.password) {
        (Some(var), None, None) => SecretSource::Env(var),
        (None, Some(cmd), None) => SecretSource::Command(cmd),
        (None, None, Some(literal)) => {
            warnings.push(format!(
                "{name}: [zvm] password is written in the file; prefer password_env or password_command"
            ));
            SecretSource::Literal(Secret::new(literal))
        }
        (None, None, None) if z.client_secret_env.is_some() => {
            SecretSource::Env(String::from("REWIND_ZVM_PASSWORD"))
        }
        (None, None, None) => {
            bail!("{name}: [zvm] needs password_env (or password_command) for the ZVM password")
        }
        _ => bail!("{name}: [zvm] set only one of password_env, password_command, password"),
    };
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
        client_secret: z.client_secret_env.map(SecretSource::Env),
        ca_cert: z.ca_cert.map(|p| resolve_path(&p, base)),
        tls_fingerprint,
        insecure_tls,
    })
}

/// The catalog `rewind catalog add` writes when `[hook] catalogs` names none:
/// `~/.config/rewind/catalog.toml`.
pub fn default_user_catalog() -> Option<PathBuf> {
    home_dir().map(|h| h.join(".config/rewind/catalog.toml"))
}

impl HookConfig {
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

/// The user's home directory, from `$HOME`.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Where shared, short-lived state lives (token cache, lock files):
/// `$XDG_CACHE_HOME/rewind` or `~/.cache/rewind`.
pub fn cache_dir() -> PathBuf {
    xdg_dir("XDG_CACHE_HOME", ".cache")
}

/// Where the audit trail lives: `$XDG_STATE_HOME/rewind` or `~/.local/state/rewind`.
pub fn state_dir() -> PathBuf {
    xdg_dir("XDG_STATE_HOME", ".local/state")
}

fn xdg_dir(var: &str, fallback: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("rewind");
    }
    home_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join(fallback)
        .join("rewind")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, Path::new("/etc/rewind/config.toml"))
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
        let err = SecretSource::Env("REWIND_TEST_SURELY_UNSET".into())
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(err.contains("REWIND_TEST_SURELY_UNSET"), "{err}");
    }

    #[test]
    fn password_command_first_line() {
        let secret = SecretSource::Command("printf 's3cret\\nignored\\n'".into())
            .resolve()
            .expect("runs");
        assert_eq!(secret.expose(), "s3cret");
    }

    #[test]
    fn budget_must_be_positive() {
        let err = parse("[hook]\nbudget_secs = 0\n").unwrap_err().to_string();
        assert!(err.contains("budget_secs"), "{err}");
    }
}
