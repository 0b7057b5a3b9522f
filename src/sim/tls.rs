//! The simulator's TLS identity: a self-signed certificate for `localhost` and `127.0.0.1`,
//! like the one a ZVM appliance ships with.
//!
//! The certificate (`zvm-sim.pem`, what clients trust as `ca_cert`) and its key
//! (`zvm-sim-key.pem`, owner-only) are kept in the certificate directory and reused while they
//! are valid, so a client keeps trusting a restarted simulator.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// File name of the certificate clients trust.
pub(crate) const CERT_FILE: &str = "zvm-sim.pem";
const KEY_FILE: &str = "zvm-sim-key.pem";

/// The certificate's location and the server configuration built from it.
pub(crate) struct Identity {
    pub(crate) cert_path: PathBuf,
    pub(crate) config: Arc<ServerConfig>,
}

/// Loads the identity from `dir`, creating the directory and a new certificate when needed.
pub(crate) fn load_or_create(dir: &Path) -> anyhow::Result<Identity> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create certificate directory {}", dir.display()))?;
    let cert_path = dir.join(CERT_FILE);
    let key_path = dir.join(KEY_FILE);
    if let Ok(config) = load(&cert_path, &key_path) {
        return Ok(Identity { cert_path, config });
    }
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .context("cannot generate the simulator's certificate")?;
    write_atomically(
        &key_path,
        certified.signing_key.serialize_pem().as_bytes(),
        true,
    )?;
    write_atomically(&cert_path, certified.cert.pem().as_bytes(), false)?;
    let config = load(&cert_path, &key_path)?;
    Ok(Identity { cert_path, config })
}

fn load(cert_path: &Path, key_path: &Path) -> anyhow::Result<Arc<ServerConfig>> {
    let cert = CertificateDer::from_pem_file(cert_path)
        .with_context(|| format!("cannot read {}", cert_path.display()))?;
    let key = PrivateKeyDer::from_pem_file(key_path)
        .with_context(|| format!("cannot read {}", key_path.display()))?;
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
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
    #[cfg(unix)]
    if !private {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(fs::Permissions::from_mode(0o644));
    }
    #[cfg(not(unix))]
    let _ = private;
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
        let first = load_or_create(&nested).expect("created");
        let pem = fs::read_to_string(&first.cert_path).expect("written");
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        let second = load_or_create(&nested).expect("reused");
        assert_eq!(
            fs::read_to_string(&second.cert_path).expect("still there"),
            pem
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(nested.join(KEY_FILE))
                .expect("key")
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "the key is private");
        }
    }

    #[test]
    fn a_broken_pair_is_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::write(dir.path().join(CERT_FILE), "not a certificate").expect("write");
        let identity = load_or_create(dir.path()).expect("regenerated");
        assert!(
            fs::read_to_string(identity.cert_path)
                .expect("read")
                .contains("BEGIN CERTIFICATE")
        );
    }
}
