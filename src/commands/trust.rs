//! `rewind trust [URL]`: shows the certificate a ZVM presents and, once the operator agrees,
//! pins it in the configuration as `[zvm] tls_fingerprint` (the rest of the file, its
//! comments and its mode are kept).

use std::io::IsTerminal as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};

use super::say;
use crate::cli::TrustArgs;
use crate::config::Config;
use crate::zvm::tls::{self, CertInfo};

/// Time allowed to connect and finish the handshake.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// `rewind trust [URL] [--yes]`.
pub fn trust(config_path: Option<&Path>, args: &TrustArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path);
    let configured_url = config
        .as_ref()
        .ok()
        .and_then(|c| c.zvm.as_ref())
        .map(|z| z.url.clone());
    let url = match (&args.url, &configured_url) {
        (Some(url), _) => url.trim_end_matches('/').to_owned(),
        (None, Some(url)) => url.clone(),
        (None, None) => {
            bail!("name the ZVM: rewind trust https://zvm.example (no [zvm] url is configured)")
        }
    };
    let chain = tls::presented(&url, PROBE_TIMEOUT)?;
    let Some(leaf) = chain.first() else {
        bail!("{url} presented no certificate");
    };
    let info = tls::describe(leaf, SystemTime::now()).map_err(|e| anyhow::anyhow!("{url}: {e}"))?;
    say(format!("{url} presents:"));
    for line in describe_lines(&info, chain.len()) {
        say(format!("  {line}"));
    }
    let line = format!("tls_fingerprint = \"{}\"", info.fingerprint);

    let zvm = match (&config, &configured_url) {
        (Ok(config), Some(configured)) if same_origin(configured, &url) => {
            config.origin.clone().zip(config.zvm.as_ref())
        }
        _ => None,
    };
    let Some((file, zvm)) = zvm else {
        say("");
        say("To trust exactly this certificate, put this line in the [zvm] section of the config:");
        say(format!("  {line}"));
        match (&config, &configured_url) {
            (Err(e), _) => crate::console::err(format!(
                "note: the configuration did not load, so it was not changed: {e:#}"
            )),
            (Ok(config), Some(configured)) => crate::console::err(format!(
                "note: {url} is not the configured ZVM ({configured}{}), so nothing was written",
                config
                    .origin
                    .as_ref()
                    .map(|f| format!(" in {}", f.display()))
                    .unwrap_or_default()
            )),
            (Ok(_), None) => {}
        }
        return Ok(());
    };
    let presented = tls::Fingerprint::of(leaf);
    match zvm.tls_fingerprint {
        Some(pinned) if pinned == presented => {
            say("");
            say(format!(
                "This is the certificate [zvm] tls_fingerprint already pins in {}: nothing to change.",
                file.display()
            ));
            return Ok(());
        }
        Some(pinned) => crate::console::err(format!(
            "warning: this is NOT the certificate [zvm] tls_fingerprint pins in {}: it pins {pinned}, the ZVM presents {presented}. The ZVM's certificate was replaced, or something between you and the ZVM presents its own: compare the fingerprint on the ZVM itself before pinning it.",
            file.display()
        )),
        None => say_if_ca_cert_is_it(zvm, &presented),
    }
    if !(args.yes || confirm(&format!("Pin this certificate in {}?", file.display()))?) {
        // The pin cannot stand beside the settings it replaces (`Config::parse` refuses both).
        let mut replaces = Vec::new();
        if zvm.ca_cert.is_some() {
            replaces.push("ca_cert");
        }
        if zvm.insecure_tls {
            replaces.push("insecure_tls");
        }
        if zvm.tls_fingerprint.is_some() {
            replaces.push("tls_fingerprint");
        }
        let instead = if replaces.is_empty() {
            String::new()
        } else {
            format!(" in place of its {}", replaces.join(" and "))
        };
        say("");
        say(format!(
            "Nothing was written. To trust exactly this certificate, put this line in [zvm] of {}{instead} (or run `rewind trust --yes`):",
            file.display()
        ));
        say(format!("  {line}"));
        return Ok(());
    }
    let Pinned { removed, backup } = pin_in_file(&file, &info.fingerprint)?;
    say(format!("wrote [zvm] {line} to {}", file.display()));
    say(format!("kept the previous config as {}", backup.display()));
    for key in removed {
        say(format!(
            "removed [zvm] {key}: the pin alone says which certificate to trust"
        ));
    }
    Ok(())
}

/// A `ca_cert` naming one self-signed certificate is an exact pin already: says so when
/// that is the presented certificate, or the offer to pin it reads as if the ZVM were not
/// trusted yet.
fn say_if_ca_cert_is_it(zvm: &crate::config::ZvmConfig, presented: &tls::Fingerprint) {
    if let Ok(tls::Trust::Pin {
        fingerprint,
        source,
        or_root: Some(_),
    }) = tls::Trust::from_config(zvm)
        && fingerprint == *presented
    {
        say("");
        say(format!(
            "{source} is this very certificate, so it is trusted as it is; a tls_fingerprint pins the same certificate by its hash instead of a file."
        ));
    }
}

/// The certificate as lines for a person.
fn describe_lines(info: &CertInfo, chain_len: usize) -> Vec<String> {
    let names = if info.names.is_empty() {
        String::from("(none: no subjectAltName)")
    } else {
        info.names.join(", ")
    };
    let validity = if info.current {
        ""
    } else {
        "  (NOT valid now)"
    };
    let mut kind = Vec::new();
    if info.self_signed {
        kind.push("self-signed");
    }
    if info.ca {
        kind.push("CA:TRUE");
    }
    let mut lines = vec![
        format!("subject:     {}", info.subject),
        format!("names:       {names}"),
        format!("issuer:      {}", info.issuer),
        format!(
            "valid:       {} to {}{validity}",
            info.not_before, info.not_after
        ),
    ];
    if !kind.is_empty() {
        lines.push(format!("kind:        {}", kind.join(", ")));
    }
    if chain_len > 1 {
        lines.push(format!(
            "chain:       {} more certificate(s) sent with it",
            chain_len - 1
        ));
    }
    lines.push(format!("fingerprint: {}", info.fingerprint));
    lines
}

/// Whether two URLs name the same scheme, host and port.
fn same_origin(a: &str, b: &str) -> bool {
    let origin = |url: &str| {
        let url = url.trim_end_matches('/').to_ascii_lowercase();
        let Some((scheme, rest)) = url.split_once("://") else {
            return url.clone();
        };
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.rsplit_once(':').is_some() && !authority.ends_with(']') {
            format!("{scheme}://{authority}")
        } else {
            format!("{scheme}://{authority}:443")
        }
    };
    origin(a) == origin(b)
}

fn confirm(question: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    crate::console::prompt(&format!("{question} [y/N] "));
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES"))
}

/// Sets `[zvm] tls_fingerprint` in the file, dropping `ca_cert` and `insecure_tls`, which
/// would contradict or override the pin; keeps everything else, and the file as it was in a
/// backup beside it.
pub fn pin_in_file(path: &Path, fingerprint: &str) -> anyhow::Result<Pinned> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML; not touching it", path.display()))?;
    let zvm = doc
        .get_mut("zvm")
        .and_then(toml_edit::Item::as_table_like_mut)
        .with_context(|| format!("{} has no [zvm] table", path.display()))?;
    let mut removed = Vec::new();
    for key in ["ca_cert", "insecure_tls"] {
        if zvm.remove(key).is_some() {
            removed.push(key);
        }
    }
    zvm.insert("tls_fingerprint", toml_edit::value(fingerprint));
    let new_text = doc.to_string();
    // The result must still be a valid configuration before it replaces the file.
    Config::parse(&new_text, path)?;
    let backup = super::keep_backup(path, &text)?;
    super::replace_keeping_mode(path, new_text.as_bytes())?;
    Ok(Pinned { removed, backup })
}

/// What pinning changed besides the pin.
pub struct Pinned {
    /// The settings the pin replaced.
    pub removed: Vec<&'static str>,
    /// The file as it was before, kept beside it.
    pub backup: std::path::PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_keeps_comments_other_keys_and_the_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let original = "# my ZVM\n[zvm]\nurl = \"https://zvm.example\" # the appliance\npassword_env = \"P\"\nca_cert = \"old.pem\"\n\n[hook]\nbudget_secs = 90\n";
        std::fs::write(&path, original).expect("write");
        crate::platform::set_mode(&path, 0o640).expect("chmod");
        let fp = "sha256:76:E9:39:37:BE:D2:F1:C2:1C:1A:48:DB:81:06:25:4A:26:E0:F6:48:67:D4:80:38:EA:D4:51:A1:4F:74:BB:1C";
        let Pinned { removed, backup } = pin_in_file(&path, fp).expect("pinned");
        assert_eq!(removed, vec!["ca_cert"]);
        assert_eq!(
            std::fs::read_to_string(&backup).expect("the backup"),
            original,
            "the file as it was is kept"
        );
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(
            text.contains("# my ZVM") && text.contains("# the appliance"),
            "{text}"
        );
        assert!(text.contains("budget_secs = 90"), "{text}");
        assert!(!text.contains("ca_cert"), "{text}");
        let config = Config::parse(&text, &path).expect("valid");
        let zvm = config.zvm.expect("zvm");
        assert_eq!(
            zvm.tls_fingerprint.map(|f| f.to_string()).as_deref(),
            Some(fp)
        );
        if let Some(mode) = crate::platform::mode(&path) {
            assert_eq!(mode & 0o777, 0o640);
        }
    }

    #[test]
    fn origins_compare_with_the_default_port() {
        assert!(same_origin(
            "https://ZVM.example",
            "https://zvm.example:443/"
        ));
        assert!(!same_origin(
            "https://zvm.example:8443",
            "https://zvm.example"
        ));
        assert!(!same_origin("https://a.example", "https://b.example"));
    }
}
