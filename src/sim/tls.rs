//! The simulator's TLS identity, in the shapes real ZVMs present: a leaf signed by a CA (the
//! default), one self-signed `CA:TRUE` certificate (what `openssl req -x509` makes), a
//! self-signed certificate for another name than the address used, or any PEM pair.
//!
//! Generated files live in the certificate directory, named after the shape: `zvm-sim.pem`
//! (what clients trust as `ca_cert`: the CA, or the self-signed certificate itself),
//! `zvm-sim-server.pem` (what the server presents) and `zvm-sim-key.pem` (owner-only), with
//! `-self-signed-ca`, `-other-name` or `-ca-signed-other-name` after `zvm-sim` for the other shapes. They are reused
//! while they load, so a client keeps trusting a restarted simulator.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The certificate the simulator presents.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SimCertificate {
    /// A leaf for `localhost` and `127.0.0.1` signed by a generated CA; clients trust the CA.
    #[default]
    CaSignedLeaf,
    /// A leaf for `zvm.example` only, signed by a generated CA: a CA that is trusted, but a
    /// name that does not match the address clients use.
    CaSignedOtherName,
    /// One self-signed `basicConstraints CA:TRUE` certificate for `localhost` and
    /// `127.0.0.1`, the shape `openssl req -x509` gives an appliance.
    SelfSignedCa,
    /// A self-signed certificate for `zvm.example` only: not the address clients connect to.
    OtherName,
    /// A certificate chain and its key from PEM files; clients trust the first certificate.
    Files { cert: PathBuf, key: PathBuf },
}

/// The certificate's location and the server configuration built from it.
pub(crate) struct Identity {
    /// What clients trust (`ca_cert`).
    pub(crate) cert_path: PathBuf,
    pub(crate) config: Arc<ServerConfig>,
}

/// Loads the identity of `shape` from `dir`, creating the directory and new certificates
/// when needed.
pub(crate) fn load_or_create(dir: &Path, shape: &SimCertificate) -> anyhow::Result<Identity> {
    let prefix = match shape {
        SimCertificate::Files { cert, key } => {
            return Ok(Identity {
                cert_path: cert.clone(),
                config: load(cert, key)?,
            });
        }
        SimCertificate::CaSignedLeaf => "zvm-sim",
        SimCertificate::CaSignedOtherName => "zvm-sim-ca-signed-other-name",
        SimCertificate::SelfSignedCa => "zvm-sim-self-signed-ca",
        SimCertificate::OtherName => "zvm-sim-other-name",
    };
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create certificate directory {}", dir.display()))?;
    let trust_path = dir.join(format!("{prefix}.pem"));
    let server_path = dir.join(format!("{prefix}-server.pem"));
    let key_path = dir.join(format!("{prefix}-key.pem"));
    if trust_path.is_file()
        && let Ok(config) = load(&server_path, &key_path)
    {
        return Ok(Identity {
            cert_path: trust_path,
            config,
        });
    }
    let (trust, server, key) =
        generate(shape).context("cannot generate the simulator's certificate")?;
    write_atomically(&key_path, key.as_bytes(), true)?;
    write_atomically(&server_path, server.as_bytes(), false)?;
    write_atomically(&trust_path, trust.as_bytes(), false)?;
    let config = load(&server_path, &key_path)?;
    Ok(Identity {
        cert_path: trust_path,
        config,
    })
}

/// PEM texts: what clients trust, what the server presents, the server's key.
fn generate(shape: &SimCertificate) -> Result<(String, String, String), rcgen::Error> {
    let local = vec![String::from("localhost"), String::from("127.0.0.1")];
    let key = KeyPair::generate()?;
    match shape {
        SimCertificate::CaSignedLeaf | SimCertificate::CaSignedOtherName => {
            let ca_key = KeyPair::generate()?;
            let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
            ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            ca_params
                .distinguished_name
                .push(DnType::CommonName, "rewind simulator CA");
            let ca = ca_params.self_signed(&ca_key)?;
            let issuer = Issuer::new(ca_params, ca_key);
            let names = if *shape == SimCertificate::CaSignedOtherName {
                vec![String::from("zvm.example")]
            } else {
                local
            };
            let mut params = CertificateParams::new(names)?;
            params
                .distinguished_name
                .push(DnType::CommonName, "zvm simulator");
            let leaf = params.signed_by(&key, &issuer)?;
            Ok((ca.pem(), leaf.pem(), key.serialize_pem()))
        }
        SimCertificate::SelfSignedCa | SimCertificate::OtherName => {
            let names = if *shape == SimCertificate::OtherName {
                vec![String::from("zvm.example")]
            } else {
                local
            };
            let mut params = CertificateParams::new(names)?;
            if *shape == SimCertificate::SelfSignedCa {
                params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            }
            params
                .distinguished_name
                .push(DnType::CommonName, "zvm appliance");
            let cert = params.self_signed(&key)?;
            Ok((cert.pem(), cert.pem(), key.serialize_pem()))
        }
        SimCertificate::Files { .. } => Err(rcgen::Error::CouldNotParseCertificate),
    }
}

fn load(cert_path: &Path, key_path: &Path) -> anyhow::Result<Arc<ServerConfig>> {
    let chain = CertificateDer::pem_file_iter(cert_path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .with_context(|| format!("cannot read {}", cert_path.display()))?;
    if chain.is_empty() {
        anyhow::bail!("{} holds no certificate", cert_path.display());
    }
    let key = PrivateKeyDer::from_pem_file(key_path)
        .with_context(|| format!("cannot read {}", key_path.display()))?;
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .with_context(|| {
                format!(
                    "{} does not match {}",
                    cert_path.display(),
                    key_path.display()
                )
            })?;
    Ok(Arc::new(config))
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed over it when
/// complete; `private` keeps it to the owner (mode 0600), else it is world-readable (0644).
fn write_atomically(path: &Path, bytes: &[u8], private: bool) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    if !private && let Some(readable) = crate::platform::mode_permissions(0o644) {
        builder.permissions(readable);
    }
    let mut file = builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write {}", file.path().display()))?;
    file.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_then_reuses_the_certificate() {
        let dir = tempfile::tempdir().expect("temp dir");
        let nested = dir.path().join("certs");
        let first = load_or_create(&nested, &SimCertificate::default()).expect("created");
        let pem = fs::read_to_string(&first.cert_path).expect("written");
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        let second = load_or_create(&nested, &SimCertificate::default()).expect("reused");
        assert_eq!(
            fs::read_to_string(&second.cert_path).expect("still there"),
            pem
        );
        if let Some(mode) = crate::platform::mode(&nested.join("zvm-sim-key.pem")) {
            assert_eq!(mode & 0o077, 0, "the key is private");
        }
    }

    #[test]
    fn a_broken_pair_is_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::write(dir.path().join("zvm-sim-server.pem"), "not a certificate").expect("write");
        let identity = load_or_create(dir.path(), &SimCertificate::default()).expect("regenerated");
        assert!(
            fs::read_to_string(identity.cert_path)
                .expect("read")
                .contains("BEGIN CERTIFICATE")
        );
    }
}
