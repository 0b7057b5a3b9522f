//! The one place that builds the HTTP agent and sends requests: TLS roots, timeouts under the
//! caller's deadline, no proxy from the environment, bodies read and statuses turned into
//! [`ZvmError`]s.

use std::io::{self, Read as _};
use std::time::Duration;

use serde::de::DeserializeOwned;
use ureq::http::{Response, Uri};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Connector as _, TcpConnector};
use ureq::{Agent, Body};

use super::DownloadError;
use super::error::ZvmError;
use super::tls::{TlsConnector, Trust, is_unknown_issuer, rustls_detail};
use crate::config::ZvmConfig;
use crate::deadline::Deadline;

/// Largest answer read from the ZVM (a big site lists many VMs and checkpoints).
const BODY_LIMIT: u64 = 64 * 1024 * 1024;
/// Longest any single connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP methods the ZVM's API is called with; each is sent as itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    /// The method's name on the wire and in messages.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

/// A request to the ZVM, before authentication is added.
pub(crate) struct Call<'a> {
    pub method: Method,
    pub path: String,
    pub query: Vec<(&'a str, String)>,
    pub body: CallBody<'a>,
}

/// What a request carries.
#[derive(Clone)]
pub(crate) enum CallBody<'a> {
    None,
    Json(&'a serde_json::Value),
    Form(Vec<(&'a str, &'a str)>),
}

/// An authentication header for one request.
pub(crate) enum AuthHeader<'a> {
    None,
    Bearer(&'a str),
    Session(&'a str),
    Basic(String),
}

/// The HTTP side of the ZVM client.
#[derive(Debug)]
pub(crate) struct Http {
    agent: Agent,
    base: String,
}

impl Http {
    /// Builds the agent: TLS as [`Trust`] says (web roots, `ca_cert` roots, a pin, or
    /// `insecure_tls` only when asked for), proxies from the environment ignored.
    pub(crate) fn new(config: &ZvmConfig) -> Result<Http, ZvmError> {
        let connector =
            ().chain(TcpConnector::default())
                .chain(TlsConnector::new(&Trust::from_config(config)?)?);
        let agent_config = Agent::config_builder()
            .proxy(None)
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .user_agent(concat!("rewind/", env!("CARGO_PKG_VERSION")))
            .accept("application/json")
            .build();
        let agent = Agent::with_parts(agent_config, connector, DefaultResolver::default());
        Ok(Http {
            agent,
            base: config.url.clone(),
        })
    }

    /// The path (with query) to fetch, from the configured base, for a URL the ZVM handed
    /// out: real answers are absolute on one of the ZVM's own names (its IP where it was
    /// configured by name, or the reverse), `/`-rooted, or relative without the slash. Only
    /// the path and query are taken, so the credentials only ever go to the configured ZVM.
    /// A path under the configured base's own path is taken relative to it.
    pub(crate) fn download_path(&self, url: &str) -> Option<String> {
        let url = url.trim();
        let given: Uri = if url.contains("://") {
            let uri: Uri = url.parse().ok()?;
            let scheme = uri.scheme_str()?;
            if !scheme.eq_ignore_ascii_case("https") && !scheme.eq_ignore_ascii_case("http") {
                return None;
            }
            uri
        } else if url.is_empty() || url.contains(':') && !url.starts_with('/') {
            // `file:…`, `javascript:…`: not a place on the ZVM.
            return None;
        } else if url.starts_with('/') {
            url.parse().ok()?
        } else {
            format!("/{url}").parse().ok()?
        };
        let path = given.path_and_query().map_or("/", |p| p.as_str());
        let base: Uri = self.base.parse().ok()?;
        Some(under_prefix(path, base.path()).unwrap_or(path).to_owned())
    }

    /// The full URL of a path (for messages; never carries credentials).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a call and returns the raw response; status is not judged here.
    pub(crate) fn send(
        &self,
        call: &Call<'_>,
        auth: &AuthHeader<'_>,
        deadline: &Deadline,
    ) -> Result<Response<Body>, ZvmError> {
        let url = self.url(&call.path);
        let remaining = deadline.remaining();
        if remaining.is_zero() {
            return Err(ZvmError::TimedOut {
                method: call.method.as_str(),
                url,
            });
        }
        let target = if call.query.is_empty() {
            url.clone()
        } else {
            let pairs: Vec<String> = call
                .query
                .iter()
                .map(|(k, v)| format!("{k}={}", encode(v)))
                .collect();
            format!("{url}?{}", pairs.join("&"))
        };
        let result = match (call.method, &call.body) {
            (Method::Get, CallBody::None) => {
                prepare(self.agent.get(&target), auth, remaining).call()
            }
            (Method::Delete, CallBody::None) => {
                prepare(self.agent.delete(&target), auth, remaining).call()
            }
            (Method::Get | Method::Delete, body) => {
                let builder = match call.method {
                    Method::Get => self.agent.get(&target),
                    _ => self.agent.delete(&target),
                };
                send_body(prepare(builder.force_send_body(), auth, remaining), body)
            }
            (Method::Post, body) => {
                send_body(prepare(self.agent.post(&target), auth, remaining), body)
            }
        };
        result.map_err(|e| transport_error(call.method.as_str(), url, &e))
    }
}

/// Sends a request that may carry a body: empty, JSON or a form.
fn send_body(
    builder: ureq::RequestBuilder<ureq::typestate::WithBody>,
    body: &CallBody<'_>,
) -> Result<Response<Body>, ureq::Error> {
    match body {
        CallBody::None => builder.send_empty(),
        CallBody::Json(value) => builder.send_json(value),
        CallBody::Form(pairs) => builder.send_form(pairs.iter().copied()),
    }
}

/// Adds the authentication header and this request's share of the deadline.
fn prepare<B>(
    builder: ureq::RequestBuilder<B>,
    auth: &AuthHeader<'_>,
    remaining: Duration,
) -> ureq::RequestBuilder<B> {
    let builder = match auth {
        AuthHeader::None => builder,
        AuthHeader::Bearer(token) => builder.header("Authorization", format!("Bearer {token}")),
        AuthHeader::Session(session) => builder.header("x-zerto-session", *session),
        AuthHeader::Basic(value) => builder.header("Authorization", format!("Basic {value}")),
    };
    builder
        .config()
        .timeout_global(Some(remaining))
        .timeout_connect(Some(CONNECT_TIMEOUT.min(remaining)))
        .build()
}

/// Parses an answer's text as JSON of type `T`, or a [`ZvmError::Decode`] naming the call.
pub(crate) fn parse_json<T: DeserializeOwned>(
    method: &'static str,
    url: &str,
    text: &str,
) -> Result<T, ZvmError> {
    serde_json::from_str(text).map_err(|e| ZvmError::Decode {
        method,
        url: url.to_owned(),
        detail: format!("{e} in {}", preview(text)),
    })
}

/// Reads a response body as text, bounded.
pub(crate) fn read_text(
    method: &'static str,
    url: &str,
    response: &mut Response<Body>,
) -> Result<String, ZvmError> {
    response
        .body_mut()
        .with_config()
        .limit(BODY_LIMIT)
        .read_to_string()
        .map_err(|e| transport_error(method, url.to_owned(), &e))
}

/// Size of the chunks a download is copied in.
const COPY_CHUNK: usize = 64 * 1024;

/// Streams a response body into `out` (a file may be larger than memory, so no limit);
/// returns the bytes written. A body that breaks off names the URL and how far it got.
pub(crate) fn copy_body(
    method: &'static str,
    url: &str,
    response: Response<Body>,
    out: &mut impl io::Write,
) -> Result<u64, DownloadError> {
    let mut reader = response.into_body().into_with_config().reader();
    let mut chunk = vec![0_u8; COPY_CHUNK];
    let mut total: u64 = 0;
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(DownloadError::Zvm(body_error(method, url, total, &e))),
        };
        out.write_all(&chunk[..n]).map_err(DownloadError::Write)?;
        total += n as u64;
    }
}

/// A failure while reading a body: the deadline, or a body that broke off.
fn body_error(method: &'static str, url: &str, read: u64, error: &io::Error) -> ZvmError {
    let inner = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>());
    if error.kind() == io::ErrorKind::TimedOut || matches!(inner, Some(ureq::Error::Timeout(_))) {
        return ZvmError::TimedOut {
            method,
            url: url.to_owned(),
        };
    }
    ZvmError::Decode {
        method,
        url: url.to_owned(),
        detail: format!("the body broke off after {read} bytes: {error}"),
    }
}

/// Zerto's `{"Message": "..."}` from an error body, or the start of the body itself.
pub(crate) fn error_message(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct ZertoError {
        #[serde(alias = "message")]
        #[serde(rename = "Message")]
        message: Option<String>,
        error: Option<String>,
        error_description: Option<String>,
    }
    match serde_json::from_str::<ZertoError>(body) {
        Ok(ZertoError {
            message: Some(m), ..
        }) => m.trim().to_owned(),
        Ok(ZertoError {
            error: Some(e),
            error_description,
            ..
        }) => match error_description {
            Some(d) => format!("{e}: {d}"),
            None => e,
        },
        _ => preview(body),
    }
}

fn preview(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    flat.trim().to_owned()
}

fn transport_error(method: &'static str, url: String, error: &ureq::Error) -> ZvmError {
    let refusal = match error {
        ureq::Error::Rustls(e) => Some(e),
        ureq::Error::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        _ => None,
    };
    if let Some(refusal) = refusal {
        return ZvmError::Tls {
            url,
            detail: rustls_detail(refusal),
            unknown_issuer: is_unknown_issuer(refusal),
        };
    }
    match error {
        ureq::Error::Tls(detail) => ZvmError::Tls {
            url,
            detail: (*detail).to_owned(),
            unknown_issuer: false,
        },
        ureq::Error::Timeout(_) => ZvmError::TimedOut { method, url },
        ureq::Error::BodyExceedsLimit(limit) => ZvmError::Decode {
            method,
            url,
            detail: format!("the answer is larger than {limit} bytes"),
        },
        // A TLS server's first bytes read as an HTTP answer make no sense to the parser; a ZVM
        // that resets plain HTTP is asked once for a TLS handshake on the same port.
        other
            if url.starts_with("http://")
                && (speaks_tls(&other.to_string()) || answers_tls(&url)) =>
        {
            ZvmError::Unreachable {
                method,
                detail: format!(
                    "{other}: the ZVM speaks TLS on this port; use https:// in [zvm] url ({})",
                    url.replacen("http://", "https://", 1)
                ),
                url,
            }
        }
        other => ZvmError::Unreachable {
            method,
            url,
            detail: other.to_string(),
        },
    }
}

/// Whether the server behind an `http://` URL completes a TLS handshake (trusting anything:
/// only whether it speaks TLS is asked), within a second.
fn answers_tls(url: &str) -> bool {
    let https = url.replacen("http://", "https://", 1);
    super::tls::presented(&https, Duration::from_secs(1)).is_ok()
}

/// Whether an HTTP parse error is what plain HTTP sent to a TLS port gives.
fn speaks_tls(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    ["http version", "bad status", "invalid status", "parse"]
        .iter()
        .any(|needle| error.contains(needle))
}

/// The rest of `path` (a path with its query) below `prefix`, when `prefix` is a whole
/// number of its segments: `/zvm` takes `/zvm/a` to `/a` and `/zvm?x` to `?x`, but not
/// `/zvmX/a`. An empty or `/` prefix takes nothing away.
fn under_prefix<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() {
        return None;
    }
    let rest = path.strip_prefix(prefix)?;
    rest.starts_with(['/', '?']).then_some(rest)
}

/// What a query value keeps unescaped: RFC 3986's unreserved characters.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, QUERY_VALUE).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zerto_and_keycloak_error_bodies() {
        assert_eq!(
            error_message(r#"{"Message":"Valid License is not provided "}"#),
            "Valid License is not provided"
        );
        assert_eq!(
            error_message(
                r#"{"error":"invalid_grant","error_description":"Invalid user credentials"}"#
            ),
            "invalid_grant: Invalid user credentials"
        );
        assert_eq!(error_message("<html>\n oops"), "<html>  oops");
    }

    #[test]
    fn download_urls_are_fetched_from_the_configured_zvm_whatever_their_form() {
        let config = crate::config::Config::parse(
            "[zvm]\nurl = \"https://ZVM.example:443\"\npassword_env = \"P\"\n",
            std::path::Path::new("c.toml"),
        )
        .expect("config");
        let http = Http::new(config.zvm.as_ref().expect("zvm")).expect("http");
        for (url, expected) in [
            ("https://zvm.example/files/a?t=1", Some("/files/a?t=1")),
            ("https://10.0.0.5:9669/files/a", Some("/files/a")),
            ("/files/a", Some("/files/a")),
            ("v1/downloads/x.zip", Some("/v1/downloads/x.zip")),
            ("https://evil.example/files/a", Some("/files/a")),
            ("https://[::1]/files/a", Some("/files/a")),
            ("file:/etc/passwd", None),
            ("ftp://zvm.example/a", None),
            ("", None),
        ] {
            assert_eq!(http.download_path(url).as_deref(), expected, "{url}");
            if let Some(path) = http.download_path(url) {
                assert!(
                    http.url(&path).starts_with("https://ZVM.example:443/"),
                    "only the configured ZVM is asked: {url}"
                );
            }
        }
    }

    #[test]
    fn a_base_path_is_taken_away_only_on_a_segment_boundary() {
        assert_eq!(
            under_prefix("/v1/downloads/x.zip", "/v1/downloads"),
            Some("/x.zip")
        );
        assert_eq!(
            under_prefix("/v1/downloads?f=1", "/v1/downloads/"),
            Some("?f=1")
        );
        assert_eq!(under_prefix("/v1/downloadsX/x.zip", "/v1/downloads"), None);
        assert_eq!(under_prefix("/v1/downloads", "/v1/downloads"), None);
        assert_eq!(under_prefix("/files/a", "/"), None);

        let config = crate::config::Config::parse(
            "[zvm]\nurl = \"https://zvm.example/zvm\"\npassword_env = \"P\"\n",
            std::path::Path::new("c.toml"),
        )
        .expect("config");
        let http = Http::new(config.zvm.as_ref().expect("zvm")).expect("http");
        for (url, expected) in [
            ("https://zvm.example/zvm/v1/downloads/x", "/v1/downloads/x"),
            ("/zvm/v1/downloads/x?t=2", "/v1/downloads/x?t=2"),
            (
                "https://zvm.example/zvmX/v1/downloads/x",
                "/zvmX/v1/downloads/x",
            ),
            ("zvmX/v1/downloads/x", "/zvmX/v1/downloads/x"),
            ("v1/downloads/x", "/v1/downloads/x"),
        ] {
            assert_eq!(http.download_path(url).as_deref(), Some(expected), "{url}");
        }
    }

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(encode("2026-11-29T10:00:00Z"), "2026-11-29T10%3A00%3A00Z");
        assert_eq!(encode("a b&c"), "a%20b%26c");
    }

    /// Gives `good` bytes, then fails the way a connection reset does.
    struct BreaksOff {
        good: usize,
    }

    impl io::Read for BreaksOff {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.good == 0 {
                return Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset"));
            }
            let n = self.good.min(buf.len());
            buf[..n].fill(b'x');
            self.good -= n;
            Ok(n)
        }
    }

    fn response(body: impl io::Read + Send + Sync + 'static) -> Response<Body> {
        Response::new(Body::builder().reader(body))
    }

    #[test]
    fn a_download_larger_than_the_answer_limit_streams_through() {
        let size = BODY_LIMIT + 1024 * 1024;
        let body = io::repeat(7).take(size);
        let mut out = io::sink();
        let written = copy_body("GET", "https://zvm/dl", response(body), &mut out).expect("copied");
        assert_eq!(written, size);
    }

    #[test]
    fn a_download_that_breaks_off_names_the_url_not_unreachable() {
        let mut out = Vec::new();
        let err = copy_body(
            "GET",
            "https://zvm/dl/1",
            response(BreaksOff { good: 10 }),
            &mut out,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("https://zvm/dl/1") && err.contains("after 10 bytes"),
            "{err}"
        );
        assert!(!err.contains("unreachable"), "{err}");
        assert_eq!(out.len(), 10);
    }

    #[test]
    fn a_destination_that_refuses_bytes_is_a_write_error() {
        struct Full;
        impl io::Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = copy_body(
            "GET",
            "https://zvm/dl",
            response(io::repeat(1).take(5)),
            &mut Full,
        )
        .unwrap_err();
        assert!(matches!(err, DownloadError::Write(_)), "{err:?}");
    }
}
