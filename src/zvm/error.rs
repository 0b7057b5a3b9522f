//! Typed failures of ZVM calls. Each names the method and URL (never a credential), and
//! carries the status and Zerto's own `Message` when there was one.

use std::fmt;

/// A ZVM call that did not give a usable answer.
#[derive(Debug)]
pub enum ZvmError {
    /// The configuration cannot produce a working client (bad CA file, missing password).
    Setup(String),
    /// No connection: refused, reset, name not found.
    Unreachable {
        method: &'static str,
        url: String,
        detail: String,
    },
    /// The TLS handshake failed, most often an untrusted certificate. `unknown_issuer`: the
    /// chain leads to no trusted CA, which `ca_cert` naming that CA would fix.
    Tls {
        url: String,
        detail: String,
        unknown_issuer: bool,
    },
    /// The ZVM did not answer before the deadline.
    TimedOut { method: &'static str, url: String },
    /// The login was refused (wrong user, password or client).
    Auth {
        url: String,
        status: u16,
        detail: String,
    },
    /// Any other non-2xx answer.
    Status {
        method: &'static str,
        url: String,
        status: u16,
        message: String,
    },
    /// A 2xx answer whose body was not what Zerto sends.
    Decode {
        method: &'static str,
        url: String,
        detail: String,
    },
}

impl ZvmError {
    /// The ZVM could not be reached, trusted or logged in to: the cases `[hook]
    /// on_zvm_error` may soften. A ZVM that answered and refused, an answer that made no
    /// sense, or a broken local setup are not among them.
    pub fn is_connection_problem(&self) -> bool {
        matches!(
            self,
            Self::Unreachable { .. } | Self::Tls { .. } | Self::TimedOut { .. } | Self::Auth { .. }
        )
    }

    /// Worth asking again: the connection failed, one request timed out, or the ZVM answered
    /// 5xx or 429.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable { .. } | Self::TimedOut { .. } => true,
            Self::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// The failure as an agent may read it: what failed and what to do, with no URL, host,
    /// port, route or credential (the operator's own commands print [`Display`]'s details).
    ///
    /// [`Display`]: std::fmt::Display
    pub fn for_agent(&self) -> String {
        let what = match self {
            // A local setting (an environment variable, a CA file), never the ZVM's address.
            Self::Setup(detail) => detail.clone(),
            Self::Unreachable { .. } => String::from("the ZVM could not be reached"),
            Self::Tls { .. } => String::from("the ZVM's TLS certificate is not trusted"),
            Self::TimedOut { .. } => String::from("the ZVM did not answer in time"),
            Self::Auth { status, .. } => format!("the ZVM refused rewind's login (HTTP {status})"),
            Self::Status {
                status, message, ..
            } => {
                let message: String = message
                    .split_whitespace()
                    .filter(|word| !word.contains("://") && !word.starts_with('/'))
                    .collect::<Vec<_>>()
                    .join(" ");
                if message.is_empty() {
                    format!("the ZVM answered HTTP {status}")
                } else {
                    format!("the ZVM answered HTTP {status}: {message}")
                }
            }
            Self::Decode { detail, .. } => {
                format!("the ZVM answered something that is not what Zerto sends ({detail})")
            }
        };
        format!("{what}; `rewind doctor`, run by whoever administers rewind, says why")
    }

    /// HTTP status of the answer, when the ZVM answered at all.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } | Self::Auth { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl fmt::Display for ZvmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Setup(detail) => f.write_str(detail),
            Self::Unreachable {
                method,
                url,
                detail,
            } => write!(
                f,
                "ZVM unreachable: {method} {url}: {detail}; check [zvm] url (host and port) and that this machine can reach the ZVM"
            ),
            Self::Tls {
                url,
                detail,
                unknown_issuer,
            } => {
                write!(
                    f,
                    "TLS certificate of {url} is not trusted ({detail}); run `rewind trust {}` to see the certificate it presents and pin it",
                    origin(url)
                )?;
                if *unknown_issuer {
                    f.write_str(", or point [zvm] ca_cert at the CA that signed it")?;
                }
                Ok(())
            }
            Self::TimedOut { method, url } => {
                write!(f, "ZVM did not answer in time: {method} {url}")
            }
            Self::Auth {
                url,
                status,
                detail,
            } => write!(
                f,
                "ZVM authentication refused: POST {url}: HTTP {status}: {detail}; check [zvm] username and client_id, and the password that password_env, password_file or password_command gives"
            ),
            Self::Status {
                method,
                url,
                status,
                message,
            } => {
                write!(f, "{method} {url}: HTTP {status}")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            Self::Decode {
                method,
                url,
                detail,
            } => write!(f, "{method} {url}: unexpected answer: {detail}"),
        }
    }
}

impl std::error::Error for ZvmError {}

/// `scheme://host:port` of a URL, without its path.
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// Something the operator named that Zerto does not have; the text says what and, where it
/// can, what was meant. The operator commands exit 7 on it (`exit::NOT_FOUND`).
#[derive(Debug, thiserror::Error)]
pub enum NotFound {
    /// No protected VM has that name, identifier or IP.
    #[error("{0}")]
    Vm(String),
    /// No checkpoint of the VM for the change, id or time asked for.
    #[error("{0}")]
    Checkpoint(String),
    /// The checkpoint holds no file at that guest path.
    #[error("{0}")]
    Path(String),
}
