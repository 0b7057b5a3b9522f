//! Logging in to the ZVM, and the token cache every `rewind` process of a user shares.
//!
//! The hook runs one process per tool call and agents make calls in parallel; two processes
//! fetching a Keycloak token at once raced into a 401 on a live ZVM. So the token lives in a
//! file (mode 0600) keyed by URL, user, client and a salted hash of the credential (so a
//! changed or wrong password is never masked by a token the old one obtained), is reused
//! until shortly before it expires, and is fetched or refreshed only under a file lock, by one
//! process at a time.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::error::ZvmError;
use super::http::{AuthHeader, Call, CallBody, Http, Method, error_message, read_text};
use crate::config::{AuthMode, SecretSource, SessionMethod, ZvmConfig};
use crate::deadline::Deadline;
use crate::lockfile;
use secrecy::{ExposeSecret as _, SecretString};

const TOKEN_PATH: &str = "/auth/realms/zerto/protocol/openid-connect/token";
const SESSION_PATH: &str = "/v1/session/add";
/// A Windows ZVM session dies after 30 idle minutes; reuse it for less than that.
const SESSION_LIFETIME: Duration = Duration::from_secs(25 * 60);

/// A credential ready to put on a request.
#[derive(Clone)]
pub(crate) struct Token {
    value: SecretString,
    expires_at: u64,
}

impl Token {
    /// Whether `other` is this very credential (the one the ZVM just refused, say).
    fn is_same(&self, other: &Token) -> bool {
        self.expires_at == other.expires_at
            && self.value.expose_secret() == other.value.expose_secret()
    }

    pub(crate) fn header(&self, mode: AuthMode) -> AuthHeader<'_> {
        match mode {
            AuthMode::Keycloak => AuthHeader::Bearer(self.value.expose_secret()),
            AuthMode::Session => AuthHeader::Session(self.value.expose_secret()),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    token: String,
    /// When to stop reusing the token (Unix seconds), a margin before it really expires.
    expires_at: u64,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    refresh_expires_at: Option<u64>,
}

/// Obtains and caches credentials for one (URL, user, client, credential).
pub(crate) struct Auth {
    pub(crate) mode: AuthMode,
    username: String,
    password: SecretSource,
    client_id: String,
    client_secret: Option<SecretSource>,
    session_method: SessionMethod,
    /// The cache key's parts that are not secret: URL, mode, user, client.
    identity: Vec<u8>,
    cache_dir: PathBuf,
    /// The password or client secret, resolved once per process.
    credential: OnceLock<Result<SecretString, String>>,
    /// The cache file, known once the credential is.
    cache: OnceLock<PathBuf>,
    current: Mutex<Option<Token>>,
}

impl Auth {
    pub(crate) fn new(config: &ZvmConfig, cache_dir: &Path) -> Auth {
        let mut identity = Vec::new();
        for part in [
            config.url.as_str(),
            match config.auth {
                AuthMode::Keycloak => "keycloak",
                AuthMode::Session => "session",
            },
            config.username.as_str(),
            config.client_id.as_str(),
        ] {
            identity.extend_from_slice(part.as_bytes());
            identity.push(0);
        }
        Auth {
            mode: config.auth,
            username: config.username.clone(),
            password: config.password.clone(),
            client_id: config.client_id.clone(),
            client_secret: config.client_secret.clone(),
            session_method: config.session_method,
            identity,
            cache_dir: cache_dir.join("tokens"),
            credential: OnceLock::new(),
            cache: OnceLock::new(),
            current: Mutex::new(None),
        }
    }

    /// The password (or, with a client secret, that secret), resolved once.
    fn credential(&self, deadline: &Deadline) -> Result<&SecretString, ZvmError> {
        self.credential
            .get_or_init(|| {
                self.client_secret
                    .as_ref()
                    .unwrap_or(&self.password)
                    .resolve(deadline)
                    .map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(|e| ZvmError::Setup(e.clone()))
    }

    /// The cache file for this identity and credential: named by a hash of both, salted
    /// with a random value kept beside the tokens, so the name reveals nothing about the
    /// password.
    fn cache_path(&self, deadline: &Deadline) -> Result<&Path, ZvmError> {
        if let Some(path) = self.cache.get() {
            return Ok(path);
        }
        let credential = self.credential(deadline)?;
        let salt = salt(&self.cache_dir);
        let mut hash = Sha256::new();
        hash.update(salt);
        hash.update(&self.identity);
        hash.update(credential.expose_secret().as_bytes());
        let key = crate::hex(&hash.finalize()[..16]);
        Ok(self
            .cache
            .get_or_init(|| self.cache_dir.join(format!("{key}.json"))))
    }

    /// A valid credential: this process's, the shared cache's, or a fresh login.
    pub(crate) fn token(&self, http: &Http, deadline: &Deadline) -> Result<Token, ZvmError> {
        if let Some(token) = self.remembered() {
            return Ok(token);
        }
        if let Some(token) = self.read_cache(deadline)?.and_then(|c| valid_token(&c)) {
            return Ok(self.remember(token));
        }
        self.login_locked(http, deadline, None)
    }

    /// A login that neither reads nor writes the cache (for `doctor`: proof that the
    /// configured credential works now).
    pub(crate) fn fresh_login(&self, http: &Http, deadline: &Deadline) -> Result<(), ZvmError> {
        self.login(http, deadline, None).map(|_| ())
    }

    /// The ZVM answered 401 to `rejected`: get a different credential (another process may
    /// already have one), exactly once per call.
    pub(crate) fn renew(
        &self,
        rejected: &Token,
        http: &Http,
        deadline: &Deadline,
    ) -> Result<Token, ZvmError> {
        *self.lock_current() = None;
        self.login_locked(http, deadline, Some(rejected))
    }

    fn login_locked(
        &self,
        http: &Http,
        deadline: &Deadline,
        rejected: Option<&Token>,
    ) -> Result<Token, ZvmError> {
        let cache = self.cache_path(deadline)?.to_path_buf();
        let lock_path = cache.with_extension("lock");
        let _guard = lockfile::lock(&lock_path, deadline).map_err(|e| match e {
            lockfile::LockError::TimedOut { .. } => ZvmError::TimedOut {
                method: "POST",
                url: format!(
                    "{} (another rewind process was logging in)",
                    http.url(match self.mode {
                        AuthMode::Keycloak => TOKEN_PATH,
                        AuthMode::Session => SESSION_PATH,
                    })
                ),
            },
            other @ lockfile::LockError::Io { .. } => {
                ZvmError::Setup(format!("token cache: {other}"))
            }
        })?;
        let cached = self.read_cache(deadline)?;
        if let Some(token) = cached.as_ref().and_then(valid_token)
            && !rejected.is_some_and(|rejected| rejected.is_same(&token))
        {
            return Ok(self.remember(token));
        }
        let fresh = self.login(http, deadline, cached.as_ref())?;
        let (token, file) = fresh;
        if let Ok(json) = serde_json::to_vec(&file) {
            // A cache that cannot be written costs a login per process, nothing more.
            let _ = lockfile::create_private_dir(&self.cache_dir)
                .and_then(|()| lockfile::write_private_atomic(&cache, &json));
        }
        Ok(self.remember(token))
    }

    fn login(
        &self,
        http: &Http,
        deadline: &Deadline,
        cached: Option<&CacheFile>,
    ) -> Result<(Token, CacheFile), ZvmError> {
        match self.mode {
            AuthMode::Keycloak => {
                if let Some(refresh) = cached.and_then(valid_refresh)
                    && let Ok(fresh) = self.keycloak(
                        http,
                        deadline,
                        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
                    )
                {
                    return Ok(fresh);
                }
                if self.client_secret.is_some() {
                    let secret = self.credential(deadline)?;
                    return self.keycloak(
                        http,
                        deadline,
                        &[
                            ("grant_type", "client_credentials"),
                            ("client_secret", secret.expose_secret()),
                        ],
                    );
                }
                let password = self.credential(deadline)?;
                self.keycloak(
                    http,
                    deadline,
                    &[
                        ("grant_type", "password"),
                        ("username", &self.username),
                        ("password", password.expose_secret()),
                    ],
                )
            }
            AuthMode::Session => self.session(http, deadline),
        }
    }

    fn keycloak(
        &self,
        http: &Http,
        deadline: &Deadline,
        grant: &[(&str, &str)],
    ) -> Result<(Token, CacheFile), ZvmError> {
        #[derive(Deserialize)]
        struct TokenResponse {
            access_token: String,
            expires_in: Option<u64>,
            refresh_token: Option<String>,
            refresh_expires_in: Option<u64>,
        }
        let mut form = vec![("client_id", self.client_id.as_str())];
        form.extend_from_slice(grant);
        let call = Call {
            method: Method::Post,
            path: TOKEN_PATH.to_owned(),
            query: Vec::new(),
            body: CallBody::Form(form),
        };
        let url = http.url(TOKEN_PATH);
        let mut response = http.send(&call, &AuthHeader::None, deadline)?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let body = read_text("POST", &url, &mut response).unwrap_or_default();
            return Err(ZvmError::Auth {
                url,
                status,
                detail: error_message(&body),
            });
        }
        // Parsed here rather than with read_json: a decode error must never quote this body,
        // which carries the tokens.
        let text = read_text("POST", &url, &mut response)?;
        let answer: TokenResponse = serde_json::from_str(&text).map_err(|e| ZvmError::Decode {
            method: "POST",
            url: url.clone(),
            detail: format!(
                "the token answer is not Keycloak's JSON (line {}, column {})",
                e.line(),
                e.column()
            ),
        })?;
        let now = unix_now();
        let lifetime = answer.expires_in.unwrap_or(300);
        // Stop reusing a token a little before it expires: 30 s, or a quarter of a short life.
        let margin = (lifetime / 4).min(30);
        let file = CacheFile {
            token: answer.access_token,
            expires_at: now + lifetime - margin,
            refresh_token: answer.refresh_token,
            refresh_expires_at: answer.refresh_expires_in.map(|s| now + s),
        };
        Ok((token_of(&file), file))
    }

    fn session(&self, http: &Http, deadline: &Deadline) -> Result<(Token, CacheFile), ZvmError> {
        let password = self.credential(deadline)?;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            self.username,
            password.expose_secret()
        ));
        // Zerto's docs and its PowerShell wrapper send the method; without it a Windows ZVM
        // checks the credentials against its host's Windows accounts only.
        let method = serde_json::json!({ "AuthenticationMethod": self.session_method.number() });
        let call = Call {
            method: Method::Post,
            path: SESSION_PATH.to_owned(),
            query: Vec::new(),
            body: CallBody::Json(&method),
        };
        let url = http.url(SESSION_PATH);
        let mut response = http.send(&call, &AuthHeader::Basic(basic), deadline)?;
        let status = response.status().as_u16();
        let header = response
            .headers()
            .get("x-zerto-session")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match header {
            Some(session) if response.status().is_success() => {
                let file = CacheFile {
                    token: session,
                    expires_at: unix_now() + SESSION_LIFETIME.as_secs(),
                    refresh_token: None,
                    refresh_expires_at: None,
                };
                Ok((token_of(&file), file))
            }
            _ => {
                let body = read_text("POST", &url, &mut response).unwrap_or_default();
                Err(ZvmError::Auth {
                    url,
                    status,
                    detail: if response_ok(status) {
                        String::from("no x-zerto-session header in the answer")
                    } else if status == 401 {
                        let other = match self.session_method {
                            SessionMethod::Vcenter => SessionMethod::Windows,
                            SessionMethod::Windows => SessionMethod::Vcenter,
                        };
                        format!(
                            "{} (logged in with AuthenticationMethod {} = {}; if this is a {} account, set [zvm] session_method = \"{}\")",
                            error_message(&body),
                            self.session_method.number(),
                            method_words(self.session_method),
                            method_words(other),
                            other.word()
                        )
                    } else {
                        error_message(&body)
                    },
                })
            }
        }
    }

    fn read_cache(&self, deadline: &Deadline) -> Result<Option<CacheFile>, ZvmError> {
        let path = self.cache_path(deadline)?;
        Ok(std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    fn remembered(&self) -> Option<Token> {
        self.lock_current()
            .as_ref()
            .filter(|t| fresh_enough(t.expires_at))
            .cloned()
    }

    fn remember(&self, token: Token) -> Token {
        *self.lock_current() = Some(token.clone());
        token
    }

    fn lock_current(&self) -> std::sync::MutexGuard<'_, Option<Token>> {
        self.current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn method_words(method: SessionMethod) -> &'static str {
    match method {
        SessionMethod::Vcenter => "a vCenter account",
        SessionMethod::Windows => "a Windows account of the ZVM host",
    }
}

fn response_ok(status: u16) -> bool {
    (200..300).contains(&status)
}

/// The random salt of the cache names in `dir`, created on first use (owner-only). When it
/// cannot be kept, a fresh one each time costs only the sharing of tokens.
fn salt(dir: &Path) -> [u8; 32] {
    let path = dir.join("salt");
    if let Ok(bytes) = std::fs::read(&path)
        && let Ok(salt) = <[u8; 32]>::try_from(bytes.as_slice())
    {
        return salt;
    }
    let mut salt = [0_u8; 32];
    if getrandom::getrandom(&mut salt).is_err() {
        // No randomness: a fixed salt still keys by credential.
        return salt;
    }
    // Written whole under a temporary name, then linked into place only if no salt is there
    // yet: a process reading at the same moment sees no salt or all of it, never a partial
    // one that would key its cache differently (and cost the shared login).
    let kept = lockfile::create_private_dir(dir).and_then(|()| {
        let mut tmp = tempfile::Builder::new().prefix(".salt-").tempfile_in(dir)?;
        std::io::Write::write_all(&mut tmp, &salt)?;
        tmp.persist_noclobber(&path).map_err(|e| e.error)?;
        Ok(())
    });
    match kept {
        Ok(()) => salt,
        // Another process made it first (or it cannot be written): use what is there.
        Err(_) => std::fs::read(&path)
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
            .unwrap_or(salt),
    }
}

fn token_of(file: &CacheFile) -> Token {
    Token {
        value: SecretString::from(file.token.clone()),
        expires_at: file.expires_at,
    }
}

fn valid_token(file: &CacheFile) -> Option<Token> {
    fresh_enough(file.expires_at).then(|| token_of(file))
}

fn valid_refresh(file: &CacheFile) -> Option<&str> {
    let token = file.refresh_token.as_deref()?;
    fresh_enough(file.refresh_expires_at?).then_some(token)
}

/// True until the (already margin-shortened) expiry time.
fn fresh_enough(expires_at: u64) -> bool {
    expires_at > unix_now()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
