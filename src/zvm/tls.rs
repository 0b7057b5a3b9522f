//! How the ZVM's certificate is trusted, and the TLS layer the HTTP agent connects through.
//!
//! Appliances ship self-signed certificates, often `CA:TRUE` (what `openssl req -x509` makes)
//! and often without the name or address the operator types. webpki refuses a CA certificate
//! as the server's own even when it is the trust anchor, so [`Trust`] decides:
//!
//! - no `ca_cert`: the public web roots, with name checks;
//! - `ca_cert` holding one self-signed certificate: an exact pin on that certificate, or
//!   (when it is a real CA) normal verification against it as the root;
//! - `ca_cert` holding anything else: those certificates as roots, with name checks;
//! - `tls_fingerprint`: an exact pin on the SHA-256 of the certificate's DER bytes;
//! - `insecure_tls`: any certificate.
//!
//! A pin replaces the chain and name checks, never the handshake signature: the server must
//! still prove it holds the pinned certificate's key. ureq 3 takes no rustls `ClientConfig`,
//! so `TlsConnector` wraps the TCP transport itself, with one `ClientConfig` built here.

use std::fmt;
use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
    StreamOwned,
};

use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport,
    TransportAdapter,
};

use super::error::ZvmError;
use crate::config::ZvmConfig;

// A certificate's fingerprint is a configuration value (`tls_fingerprint`) first.
pub use crate::config::Fingerprint;

/// How the ZVM's certificate is judged.
#[derive(Debug, Clone)]
pub enum Trust {
    /// The public web roots, with name checks.
    WebRoots,
    /// The certificates of `[zvm] ca_cert` as roots, with name checks.
    Roots(Vec<CertificateDer<'static>>),
    /// Exactly one certificate; `source` says which setting pins it. `or_root`: a
    /// certificate that may also act as a root (with name checks) when the presented one is
    /// not the pinned one (a `ca_cert` that is a real root CA is self-signed too).
    Pin {
        fingerprint: Fingerprint,
        source: String,
        or_root: Option<CertificateDer<'static>>,
    },
    /// Anything (`insecure_tls = true`).
    Anything,
}

impl Trust {
    /// The trust `config` asks for; reading `ca_cert` may fail, naming the file.
    pub fn from_config(config: &ZvmConfig) -> Result<Trust, ZvmError> {
        if config.insecure_tls {
            return Ok(Trust::Anything);
        }
        if let Some(fingerprint) = config.tls_fingerprint {
            return Ok(Trust::Pin {
                fingerprint,
                source: String::from("[zvm] tls_fingerprint"),
                or_root: None,
            });
        }
        let Some(path) = &config.ca_cert else {
            return Ok(Trust::WebRoots);
        };
        let certs = read_pem_certs(path)?;
        if let [only] = certs.as_slice()
            && is_self_signed(only)
        {
            return Ok(Trust::Pin {
                fingerprint: Fingerprint::of(only),
                source: format!("[zvm] ca_cert {}", path.display()),
                or_root: Some(only.clone()),
            });
        }
        Ok(Trust::Roots(certs))
    }

    /// What this trust is, in a few words (for `doctor`).
    pub fn describe(&self) -> String {
        match self {
            Trust::WebRoots => String::from("verified against the public web roots"),
            Trust::Roots(certs) => format!(
                "verified against the {} certificate(s) of [zvm] ca_cert",
                certs.len()
            ),
            Trust::Pin {
                fingerprint,
                source,
                or_root: None,
            } => format!("the certificate pinned by {source} ({fingerprint})"),
            Trust::Pin {
                fingerprint,
                source,
                or_root: Some(_),
            } => format!(
                "the certificate of {source} ({fingerprint}), or one it signed for this name"
            ),
            Trust::Anything => String::from("NOT verified (insecure_tls = true)"),
        }
    }
}

/// Reads every certificate of a PEM file; an error names the file.
fn read_pem_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, ZvmError> {
    let bytes = std::fs::read(path).map_err(|e| {
        ZvmError::Setup(format!("cannot read [zvm] ca_cert {}: {e}", path.display()))
    })?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            ZvmError::Setup(format!(
                "[zvm] ca_cert {} is not valid PEM: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(ZvmError::Setup(format!(
            "[zvm] ca_cert {} holds no certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// Whether a certificate names itself as its issuer.
fn is_self_signed(der: &[u8]) -> bool {
    x509_parser::parse_x509_certificate(der)
        .is_ok_and(|(_, cert)| cert.subject().as_raw() == cert.issuer().as_raw())
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The rustls client configuration for `trust`.
pub(crate) fn client_config(trust: &Trust) -> Result<Arc<ClientConfig>, ZvmError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| ZvmError::Setup(format!("TLS setup: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match trust {
        Trust::WebRoots => roots_verifier(
            RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            },
            &provider,
        )?,
        Trust::Roots(certs) => roots_verifier(root_store(certs)?, &provider)?,
        Trust::Pin {
            fingerprint,
            source,
            or_root,
        } => {
            let fallback = match or_root {
                Some(root) => Some(roots_verifier(
                    root_store(std::slice::from_ref(root))?,
                    &provider,
                )?),
                None => None,
            };
            Arc::new(PinVerifier {
                expected: Some((*fingerprint, source.clone())),
                fallback,
                provider,
            })
        }
        Trust::Anything => Arc::new(PinVerifier {
            expected: None,
            fallback: None,
            provider,
        }),
    };
    Ok(Arc::new(
        builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth(),
    ))
}

fn root_store(certs: &[CertificateDer<'static>]) -> Result<RootCertStore, ZvmError> {
    let mut store = RootCertStore::empty();
    for cert in certs {
        store.add(cert.clone()).map_err(|e| {
            ZvmError::Setup(format!("[zvm] ca_cert holds an unusable certificate: {e}"))
        })?;
    }
    Ok(store)
}

fn roots_verifier(
    store: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, ZvmError> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(store), Arc::clone(provider))
        .build()
        .map(|v| v as Arc<dyn ServerCertVerifier>)
        .map_err(|e| ZvmError::Setup(format!("TLS setup: {e}")))
}

/// Accepts exactly the pinned certificate, or what the fallback verifies; with no pin, any.
/// Handshake signatures are always verified with the provider's algorithms.
#[derive(Debug)]
struct PinVerifier {
    expected: Option<(Fingerprint, String)>,
    /// Normal verification to try when the presented certificate is not the pinned one.
    fallback: Option<Arc<dyn ServerCertVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let presented = Fingerprint::of(end_entity);
        let Some((expected, source)) = &self.expected else {
            return Ok(ServerCertVerified::assertion());
        };
        if *expected == presented {
            return Ok(ServerCertVerified::assertion());
        }
        let Some(fallback) = &self.fallback else {
            return Err(rustls::Error::General(format!(
                "the certificate presented has fingerprint {presented}, but {source} pins {expected}"
            )));
        };
        fallback
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(|e| {
                rustls::Error::General(format!(
                    "the certificate presented has fingerprint {presented}; it is not the certificate of {source} ({expected}) and does not verify against it as a CA: {}",
                    rustls_detail(&e)
                ))
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The host of a URL as rustls wants it (an IP literal without its brackets).
fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_owned()).map_err(|e| format!("{host:?} is not a host name: {e}"))
}

/// The ureq connector that wraps a TCP transport in TLS configured by [`Trust`].
#[derive(Debug)]
pub(crate) struct TlsConnector {
    config: Arc<ClientConfig>,
}

impl TlsConnector {
    pub(crate) fn new(trust: &Trust) -> Result<TlsConnector, ZvmError> {
        Ok(TlsConnector {
            config: client_config(trust)?,
        })
    }
}

impl<In: Transport> Connector<In> for TlsConnector {
    type Out = Either<In, TlsTransport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let host = details.uri.host().unwrap_or_default();
        let name = server_name(host).map_err(|_| ureq::Error::Tls("invalid host name"))?;
        let mut conn = ClientConnection::new(Arc::clone(&self.config), name)?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        conn.complete_io(&mut sock)?;
        Ok(Some(Either::B(TlsTransport {
            buffers: LazyBuffers::new(
                details.config.input_buffer_size(),
                details.config.output_buffer_size(),
            ),
            stream: StreamOwned { conn, sock },
        })))
    }
}

/// A TLS stream over ureq's transport.
pub(crate) struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsTransport").finish_non_exhaustive()
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let amount = self.stream.read(input)?;
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

/// Why a handshake probe failed: the stage it got to.
#[derive(Debug)]
pub enum ProbeError {
    /// The URL cannot be used.
    Url(String),
    /// No TCP connection.
    Unreachable(String),
    /// Connected, but the TLS handshake failed (an untrusted certificate, above all).
    Tls(String),
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Url(detail) | ProbeError::Unreachable(detail) | ProbeError::Tls(detail) => {
                f.write_str(detail)
            }
        }
    }
}

impl std::error::Error for ProbeError {}

/// Connects to `url` and completes a TLS handshake under `trust` (fresh: nothing is reused),
/// then returns the certificates the server presented, its own first.
pub fn handshake(
    url: &str,
    trust: &Trust,
    timeout: Duration,
) -> Result<Vec<CertificateDer<'static>>, ProbeError> {
    let (host, port) = host_port(url).ok_or_else(|| {
        ProbeError::Url(format!(
            "{url} is not an https:// URL with a host (and optional port)"
        ))
    })?;
    let name = server_name(&host).map_err(ProbeError::Url)?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<_> = (bare, port)
        .to_socket_addrs()
        .map_err(|e| ProbeError::Unreachable(format!("cannot resolve {host}: {e}")))?
        .collect();
    let mut last = None;
    let mut tcp = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                tcp = Some(stream);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(mut tcp) = tcp else {
        let detail = last.map_or_else(|| String::from("no address"), |e| e.to_string());
        return Err(ProbeError::Unreachable(format!(
            "cannot connect to {host}:{port}: {detail}"
        )));
    };
    let _ = tcp.set_read_timeout(Some(timeout));
    let _ = tcp.set_write_timeout(Some(timeout));
    let config = client_config(trust).map_err(|e| ProbeError::Tls(e.to_string()))?;
    let mut conn =
        ClientConnection::new(config, name).map_err(|e| ProbeError::Tls(e.to_string()))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).map_err(|e| {
            let detail = e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                .map_or_else(|| e.to_string(), rustls_detail);
            ProbeError::Tls(format!("TLS handshake with {host}:{port} failed: {detail}"))
        })?;
    }
    let chain = conn
        .peer_certificates()
        .map(|certs| certs.iter().map(|c| c.clone().into_owned()).collect())
        .unwrap_or_default();
    conn.send_close_notify();
    let _ = conn.complete_io(&mut tcp);
    Ok(chain)
}

/// A rustls error as a sentence an operator can act on: our own verifier's text without
/// rustls's prefix, and the certificate refusals an appliance most often meets in words, the
/// library's name for each in brackets for a search.
pub(crate) fn rustls_detail(error: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    let rustls::Error::InvalidCertificate(refusal) = error else {
        return match error {
            rustls::Error::General(text) => text.clone(),
            other => other.to_string(),
        };
    };
    let (words, name) = match refusal {
        C::UnknownIssuer => (
            "it is not signed by a CA this machine trusts",
            "UnknownIssuer",
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => (
            "its names (subjectAltName) do not include the host in the URL",
            "NotValidForName",
        ),
        C::Expired | C::ExpiredContext { .. } => ("it has expired", "Expired"),
        C::NotValidYet | C::NotValidYetContext { .. } => (
            "it is not valid yet (check this machine's clock)",
            "NotValidYet",
        ),
        C::Other(other)
            if matches!(
                other.0.downcast_ref::<webpki::Error>(),
                Some(webpki::Error::CaUsedAsEndEntity)
            ) =>
        {
            (
                "the server presents a CA certificate (CA:TRUE, as `openssl req -x509` makes) as its own, which CA verification never accepts; pin that very certificate instead",
                "CaUsedAsEndEntity",
            )
        }
        _ => return error.to_string(),
    };
    format!("{words} [{name}]")
}

/// Whether the refusal is a chain to no trusted CA, the one case `ca_cert` naming that CA
/// fixes (a pin mismatch or a CA certificate used as the server's own are not).
pub(crate) fn is_unknown_issuer(error: &rustls::Error) -> bool {
    matches!(
        error,
        rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)
    )
}

/// Connects to `url` and returns the chain its server presents, whatever it is; the handshake
/// signature is still checked, so the server holds the key of the certificate shown.
pub fn presented(url: &str, timeout: Duration) -> Result<Vec<CertificateDer<'static>>, ProbeError> {
    handshake(url, &Trust::Anything, timeout)
}

/// `https://host[:port][/…]` into host (an IPv6 address in brackets) and port (443 by
/// default).
fn host_port(url: &str) -> Option<(String, u16)> {
    let url = url::Url::parse(url).ok()?;
    if url.scheme() != "https" {
        return None;
    }
    Some((url.host_str()?.to_owned(), url.port_or_known_default()?))
}

/// What a certificate says about itself, for an operator deciding whether to trust it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CertInfo {
    pub subject: String,
    pub issuer: String,
    /// DNS names and IP addresses from subjectAltName.
    pub names: Vec<String>,
    pub not_before: String,
    pub not_after: String,
    /// Whether it is valid now.
    pub current: bool,
    pub self_signed: bool,
    pub ca: bool,
    pub fingerprint: String,
}

/// Reads `der`; a certificate that does not parse still has a fingerprint.
pub fn describe(der: &[u8], now: SystemTime) -> Result<CertInfo, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| format!("the certificate does not parse: {e}"))?;
    let mut names = Vec::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    names.push(format!("DNS:{dns}"));
                }
                x509_parser::extensions::GeneralName::IPAddress(ip) => {
                    let text = match ip.len() {
                        4 => <[u8; 4]>::try_from(*ip)
                            .map(|b| std::net::IpAddr::from(b).to_string())
                            .unwrap_or_default(),
                        16 => <[u8; 16]>::try_from(*ip)
                            .map(|b| std::net::IpAddr::from(b).to_string())
                            .unwrap_or_default(),
                        _ => crate::hex(ip),
                    };
                    names.push(format!("IP:{text}"));
                }
                _ => {}
            }
        }
    }
    let time = |t: x509_parser::time::ASN1Time| {
        let secs = t.timestamp();
        u64::try_from(secs).map_or_else(
            |_| format!("{secs} (before 1970)"),
            |s| {
                humantime::format_rfc3339_seconds(SystemTime::UNIX_EPOCH + Duration::from_secs(s))
                    .to_string()
            },
        )
    };
    let now_secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let validity = cert.validity();
    Ok(CertInfo {
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        names,
        not_before: time(validity.not_before),
        not_after: time(validity.not_after),
        current: validity.not_before.timestamp() <= now_secs
            && now_secs <= validity.not_after.timestamp(),
        self_signed: cert.subject().as_raw() == cert.issuer().as_raw(),
        ca: cert.is_ca(),
        fingerprint: Fingerprint::of(der).to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_parse_in_every_spelling_openssl_and_people_use() {
        let colons = "sha256:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";
        let expected = Fingerprint::parse(colons).expect("colons");
        for spelling in [
            colons.to_lowercase(),
            colons.replace(':', "").replacen("sha256", "sha256:", 1),
            format!("SHA256:{}", colons[7..].replace(':', "").to_lowercase()),
            format!("  {colons} "),
            format!("sha256 Fingerprint={}", &colons[7..]),
        ] {
            assert_eq!(
                Fingerprint::parse(&spelling).expect(&spelling),
                expected,
                "{spelling}"
            );
        }
        assert_eq!(expected.to_string(), colons);
    }

    #[test]
    fn a_bad_fingerprint_says_what_is_wrong() {
        for (text, says) in [
            ("hunter2", "not a fingerprint"),
            ("AB:CD", "only SHA-256"),
            ("sha1:AB:CD", "only SHA-256"),
            ("sha256:ABCD", "has 4"),
            (
                "sha256:0z00000000000000000000000000000000000000000000000000000000000000",
                "hex digit 2 of 64",
            ),
        ] {
            let err = Fingerprint::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
            // The value is never quoted back, not even in part.
            for part in text.split(':').filter(|p| *p != "sha256") {
                assert!(!err.contains(part), "{text}: {err}");
            }
        }
    }

    #[test]
    fn urls_give_host_and_port() {
        let owned = |host: &str, port| Some((host.to_owned(), port));
        assert_eq!(host_port("https://zvm:8443/x"), owned("zvm", 8443));
        assert_eq!(host_port("https://zvm"), owned("zvm", 443));
        assert_eq!(host_port("HTTPS://zvm:443"), owned("zvm", 443));
        assert_eq!(host_port("https://[::1]:9"), owned("[::1]", 9));
        assert_eq!(host_port("https://[::1]"), owned("[::1]", 443));
        assert_eq!(host_port("https://user@zvm:9/"), owned("zvm", 9));
        assert_eq!(host_port("http://zvm"), None);
        assert_eq!(host_port("https://"), None);
        assert_eq!(host_port("https://zvm:99999"), None);
    }

    #[test]
    fn ca_cert_without_certificate_names_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("empty.pem");
        std::fs::write(&path, "nothing here").expect("write");
        let err = read_pem_certs(&path).unwrap_err().to_string();
        assert!(
            err.contains("empty.pem") && err.contains("no certificate"),
            "{err}"
        );
    }

    /// A TLS server on 127.0.0.1 that presents `cert` but signs the handshake with `key`;
    /// serves two connections. Returns its URL.
    fn server_presenting(cert: &rcgen::Certificate, key: &rcgen::KeyPair) -> String {
        use rustls::pki_types::PrivateKeyDer;
        let provider = provider();
        let signing = provider
            .key_provider
            .load_private_key(PrivateKeyDer::try_from(key.serialize_der()).expect("key der"))
            .expect("signing key");
        let certified = rustls::sign::CertifiedKey::new(vec![cert.der().clone()], signing);
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let config = Arc::new(config);
        std::thread::spawn(move || {
            for mut tcp in listener.incoming().take(2).filter_map(Result::ok) {
                let mut conn = rustls::ServerConnection::new(Arc::clone(&config)).expect("server");
                while conn.is_handshaking() {
                    if conn.complete_io(&mut tcp).is_err() {
                        break;
                    }
                }
            }
        });
        format!("https://127.0.0.1:{port}")
    }

    #[test]
    fn a_pin_still_needs_the_pinned_certificates_key() {
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec![String::from("127.0.0.1")])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        let pin = Trust::Pin {
            fingerprint: Fingerprint::of(cert.der()),
            source: String::from("[zvm] tls_fingerprint"),
            or_root: None,
        };
        let timeout = Duration::from_secs(10);

        let honest = server_presenting(&cert, &key);
        let chain = handshake(&honest, &pin, timeout).expect("the pinned certificate with its key");
        assert_eq!(chain[0].as_ref(), cert.der().as_ref());

        // The same certificate, but the server does not hold its key.
        let impostor = server_presenting(&cert, &rcgen::KeyPair::generate().expect("other key"));
        let err = handshake(&impostor, &pin, timeout).expect_err("a signature by another key");
        assert!(matches!(err, ProbeError::Tls(_)), "{err:?}");
        let err = handshake(&impostor, &Trust::Anything, timeout).expect_err("even unpinned");
        assert!(matches!(err, ProbeError::Tls(_)), "{err:?}");
    }
}
