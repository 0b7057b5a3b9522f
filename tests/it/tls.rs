//! TLS over real HTTPS on 127.0.0.1 with the certificate shapes ZVMs present: a CA-signed leaf,
//! a self-signed `CA:TRUE` certificate, one whose names miss the address used, and one made
//! by `openssl req -x509` (a committed fixture: RSA 2048, `CA:TRUE`, SAN for 127.0.0.1).
//! Each is trusted through `ca_cert` and through `tls_fingerprint`; a wrong pin is refused
//! naming both fingerprints.

use std::path::{Path, PathBuf};

use rewind::sim::SimCertificate;
use sha2::{Digest as _, Sha256};

use crate::support::{Run, Setup, TestEnv};

/// What `openssl x509 -noout -fingerprint -sha256 -in tests/fixtures/tls/openssl-appliance.pem`
/// prints for the fixture.
const OPENSSL_FINGERPRINT_LINE: &str = "sha256 Fingerprint=76:E9:39:37:BE:D2:F1:C2:1C:1A:48:DB:81:06:25:4A:26:E0:F6:48:67:D4:80:38:EA:D4:51:A1:4F:74:BB:1C";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

fn openssl_appliance() -> SimCertificate {
    SimCertificate::Files {
        cert: fixture("openssl-appliance.pem"),
        key: fixture("openssl-appliance-key.pem"),
    }
}

fn env_presenting(certificate: SimCertificate) -> TestEnv {
    TestEnv::with(Setup {
        certificate,
        ..Setup::default()
    })
}

/// Writes a config whose `[zvm]` trusts the simulator through `tls_line` only.
fn configure(env: &TestEnv, tls_line: &str) {
    let zvm = env.sim.zvm_config_for(&env.sim.url(), false);
    let text = format!(
        "{zvm}{tls_line}\n[hook]\nbudget_secs = 30\naudit_log = {:?}\n",
        env.path("state/audit.jsonl").display().to_string()
    );
    std::fs::write(&env.config, text).expect("write config");
}

/// `sha256:` and the upper-case hex with colons of the first certificate in a PEM file.
fn fingerprint_of_pem(path: &Path) -> String {
    let pem = std::fs::read_to_string(path).expect("pem");
    let body: String = pem
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN CERTIFICATE"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    let der = base64_decode(&body);
    let hex: Vec<String> = Sha256::digest(&der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    format!("sha256:{}", hex.join(":"))
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64")
}

/// The certificate the simulator presents (its first one).
fn presented_pem(env: &TestEnv) -> PathBuf {
    let trusted = env.sim.ca_cert_path();
    let name = trusted.file_stem().expect("stem").to_string_lossy();
    let server = trusted.with_file_name(format!("{name}-server.pem"));
    if server.is_file() { server } else { trusted }
}

#[track_caller]
fn assert_trusted(env: &TestEnv, how: &str) {
    let run = env.run(&["find", "jp-ubuntu"], b"");
    assert_eq!(run.code, 0, "{how}: {run:#?}");
}

#[track_caller]
fn assert_refused(env: &TestEnv, how: &str) -> Run {
    let run = env.run(&["find", "jp-ubuntu"], b"");
    assert_ne!(run.code, 0, "{how}: {run:#?}");
    assert!(run.stderr.contains("TLS"), "{how}: {run:#?}");
    run
}

#[test]
fn every_certificate_shape_is_trusted_through_ca_cert_and_through_its_fingerprint() {
    for (shape, what) in [
        (SimCertificate::CaSignedLeaf, "a CA-signed leaf"),
        (
            SimCertificate::SelfSignedCa,
            "a self-signed CA:TRUE certificate",
        ),
        (SimCertificate::OtherName, "a certificate for another name"),
        (openssl_appliance(), "an openssl req -x509 certificate"),
    ] {
        let env = env_presenting(shape);
        let ca = env.sim.ca_cert_path();
        configure(&env, &format!("ca_cert = {:?}", ca.display().to_string()));
        assert_trusted(&env, &format!("{what} through ca_cert"));

        let pin = fingerprint_of_pem(&presented_pem(&env));
        configure(&env, &format!("tls_fingerprint = {pin:?}"));
        assert_trusted(&env, &format!("{what} through tls_fingerprint {pin}"));

        // Lower case without colons is the same pin.
        let plain = format!("sha256:{}", pin[7..].replace(':', "").to_lowercase());
        configure(&env, &format!("tls_fingerprint = {plain:?}"));
        assert_trusted(&env, &format!("{what} through tls_fingerprint {plain}"));
    }
}

#[test]
fn openssl_fingerprint_output_pastes_as_is() {
    let env = env_presenting(openssl_appliance());
    let pasted = OPENSSL_FINGERPRINT_LINE.replace("sha256 Fingerprint=", "sha256:");
    configure(&env, &format!("tls_fingerprint = {pasted:?}"));
    assert_trusted(&env, "openssl's fingerprint after sha256:");
    assert_eq!(
        pasted,
        fingerprint_of_pem(&fixture("openssl-appliance.pem")),
        "the fixture is the certificate openssl fingerprinted"
    );
}

#[test]
fn a_wrong_pin_is_refused_naming_the_expected_and_the_presented_fingerprint() {
    let env = env_presenting(SimCertificate::SelfSignedCa);
    let presented = fingerprint_of_pem(&presented_pem(&env));
    let expected = fingerprint_of_pem(&fixture("openssl-appliance.pem"));
    assert_ne!(presented, expected);

    configure(&env, &format!("tls_fingerprint = {expected:?}"));
    let run = assert_refused(&env, "a fingerprint of another certificate");
    assert!(
        run.stderr.contains(&presented) && run.stderr.contains(&expected),
        "both fingerprints: {run:#?}"
    );
    assert!(run.stderr.contains("tls_fingerprint"), "{run:#?}");

    // The same through ca_cert: a self-signed certificate there is an exact pin.
    let other = fixture("openssl-appliance.pem");
    configure(
        &env,
        &format!("ca_cert = {:?}", other.display().to_string()),
    );
    let run = assert_refused(&env, "ca_cert holding another self-signed certificate");
    assert!(
        run.stderr.contains(&presented) && run.stderr.contains(&expected),
        "both fingerprints: {run:#?}"
    );
}

#[test]
fn without_trust_settings_a_self_signed_appliance_is_refused() {
    for shape in [SimCertificate::SelfSignedCa, openssl_appliance()] {
        let env = env_presenting(shape);
        configure(&env, "");
        let run = assert_refused(&env, "no ca_cert, no tls_fingerprint");
        assert!(run.stderr.contains("rewind trust"), "{run:#?}");
        // The web roots meet the appliance's CA:TRUE certificate as the server's own.
        assert!(
            run.stderr.contains("presents a CA certificate (CA:TRUE")
                && !run.stderr.contains("OtherError"),
            "the refusal in words: {run:#?}"
        );
    }
}

/// A `ca_cert` bundle (more than one certificate: CA verification, no pin) holding the
/// appliance's own `CA:TRUE` certificate: the refusal says so in words, not as the TLS
/// library's `Other(OtherError(CaUsedAsEndEntity))`, and points at a pin, not at `ca_cert`.
#[test]
fn a_ca_certificate_presented_as_the_servers_own_is_refused_in_words() {
    let env = env_presenting(openssl_appliance());
    let bundle = env.path("bundle.pem");
    let pems = [fixture("openssl-appliance.pem"), env.sim.ca_cert_path()]
        .map(|p| std::fs::read_to_string(p).expect("pem"));
    std::fs::write(&bundle, pems.concat()).expect("bundle");
    configure(
        &env,
        &format!("ca_cert = {:?}", bundle.display().to_string()),
    );
    let run = assert_refused(&env, "a bundle holding the appliance's CA:TRUE certificate");
    assert!(
        run.stderr.contains("presents a CA certificate (CA:TRUE")
            && run.stderr.contains("[CaUsedAsEndEntity]")
            && !run.stderr.contains("OtherError"),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains("rewind trust") && !run.stderr.contains("ca_cert at the CA"),
        "pinning is the way out here: {run:#?}"
    );
}

#[test]
fn a_ca_keeps_its_name_checks_a_pin_replaces_them() {
    let env = env_presenting(SimCertificate::CaSignedOtherName);
    let ca = env.sim.ca_cert_path();
    configure(&env, &format!("ca_cert = {:?}", ca.display().to_string()));
    let run = assert_refused(&env, "a CA-signed leaf for another name");
    assert!(
        run.stderr
            .contains("names (subjectAltName) do not include the host")
            && run.stderr.contains("[NotValidForName]"),
        "{run:#?}"
    );

    let pin = fingerprint_of_pem(&presented_pem(&env));
    configure(&env, &format!("tls_fingerprint = {pin:?}"));
    assert_trusted(&env, "the same leaf pinned");
}

#[test]
fn trust_shows_the_certificate_and_pins_it_after_yes() {
    let env = env_presenting(openssl_appliance());
    configure(&env, "# the appliance's own certificate");
    assert_refused(&env, "before trust");
    let before = std::fs::read_to_string(&env.config).expect("config");

    // No terminal and no --yes: shown, the line printed, nothing written.
    let shown = env.run(&["trust"], b"");
    shown.success();
    for expected in [
        "CN=zvm-appliance",
        "DNS:zvm-appliance.local, IP:127.0.0.1",
        "self-signed, CA:TRUE",
        "2126-11-07",
        &OPENSSL_FINGERPRINT_LINE.replace("sha256 Fingerprint=", "sha256:"),
        "tls_fingerprint = \"sha256:76:E9:",
    ] {
        assert!(shown.stdout.contains(expected), "{expected}: {shown:#?}");
    }
    assert_eq!(
        std::fs::read_to_string(&env.config).expect("config"),
        before
    );

    let pinned = env.run(&["trust", "--yes"], b"");
    pinned.success();
    assert!(
        pinned.stdout.contains("wrote [zvm] tls_fingerprint"),
        "{pinned:#?}"
    );
    let after = std::fs::read_to_string(&env.config).expect("config");
    assert!(
        after.contains("# the appliance's own certificate"),
        "{after}"
    );
    let backup = pinned
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("kept the previous config as "))
        .unwrap_or_else(|| panic!("the backup is named: {pinned:#?}"));
    assert_eq!(
        std::fs::read_to_string(backup).expect("the backup"),
        before,
        "the config as it was before the pin is kept"
    );
    assert_trusted(&env, "after rewind trust --yes");
}

/// `rewind doctor` against every certificate shape, trusted each way: it claims the TLS
/// stage only after its own handshake, the login only after its own fresh login, and with a
/// wrong password it stops at the login; untrusted or wrongly pinned, it stops at TLS.
#[test]
fn doctor_claims_each_stage_only_once_shown_for_every_certificate_shape() {
    let shapes = [
        (SimCertificate::CaSignedLeaf, "a CA-signed leaf"),
        (
            SimCertificate::SelfSignedCa,
            "a self-signed CA:TRUE certificate",
        ),
        (SimCertificate::OtherName, "a certificate for another name"),
        (openssl_appliance(), "an openssl req -x509 certificate"),
    ];
    for (shape, what) in shapes {
        let env = env_presenting(shape);
        let ca = format!(
            "ca_cert = {:?}",
            env.sim.ca_cert_path().display().to_string()
        );
        let presented = fingerprint_of_pem(&presented_pem(&env));
        let pin = format!("tls_fingerprint = {presented:?}");
        for trust in [&ca, &pin] {
            configure(&env, trust);
            let run = env.run(&["doctor"], b"");
            for claim in [
                "ok    zvm reachable",
                "ok    tls",
                "ok    authentication",
                "ok    zvm api",
            ] {
                assert!(
                    run.stdout.contains(claim),
                    "{what}, {trust}: {claim}: {run:#?}"
                );
            }

            std::fs::write(env.path("password"), "not-the-password").expect("password");
            let run = env.run(&["doctor"], b"");
            run.failure();
            assert!(
                run.stdout.contains("ok    tls"),
                "{what}, {trust}: {run:#?}"
            );
            assert!(
                run.stdout.contains("FAIL  authentication"),
                "{what}, {trust}: {run:#?}"
            );
            assert!(!run.stdout.contains("zvm api"), "{what}, {trust}: {run:#?}");
            assert!(!run.stdout.contains("not-the-password"), "{run:#?}");
            std::fs::write(env.path("password"), env.sim.password()).expect("password");
        }

        configure(&env, "# no ca_cert, no tls_fingerprint");
        let run = env.run(&["doctor"], b"");
        run.failure();
        assert!(
            run.stdout.contains("FAIL  tls: "),
            "{what}, untrusted: {run:#?}"
        );
        for claim in ["ok    tls", "authentication", "zvm api"] {
            assert!(
                !run.stdout.contains(claim),
                "{what}, untrusted: {claim}: {run:#?}"
            );
        }

        let other = fingerprint_of_pem(&fixture("openssl-appliance.pem"));
        if other != presented {
            configure(&env, &format!("tls_fingerprint = {other:?}"));
            let run = env.run(&["doctor"], b"");
            run.failure();
            assert!(
                run.stdout.contains("FAIL  tls: ")
                    && run.stdout.contains(&presented)
                    && run.stdout.contains(&other),
                "{what}, wrong pin: {run:#?}"
            );
            assert!(
                !run.stdout.contains("authentication"),
                "{what}, wrong pin: {run:#?}"
            );
        }
    }
}

/// `rewind trust` against a ZVM whose certificate is already pinned says so and writes
/// nothing; against one whose certificate differs from the pin it warns with both
/// fingerprints before anything is written; and the line it prints for a configuration
/// that trusts through `ca_cert` says that the pin replaces it (both at once is refused).
#[test]
fn trust_compares_with_the_pin_and_says_what_the_line_replaces() {
    let env = env_presenting(SimCertificate::SelfSignedCa);
    let presented = fingerprint_of_pem(&presented_pem(&env));
    let other = fingerprint_of_pem(&fixture("openssl-appliance.pem"));

    configure(&env, &format!("tls_fingerprint = {presented:?}"));
    let before = std::fs::read_to_string(&env.config).expect("config");
    let same = env.run(&["trust", "--yes"], b"");
    same.success();
    assert!(
        same.stdout.contains("already pins") && same.stdout.contains("nothing to change"),
        "{same:#?}"
    );
    assert!(!same.stdout.contains("wrote"), "{same:#?}");
    assert_eq!(
        std::fs::read_to_string(&env.config).expect("config"),
        before
    );

    configure(&env, &format!("tls_fingerprint = {other:?}"));
    let changed = env.run(&["trust"], b"");
    changed.success();
    assert!(
        changed.stderr.contains("NOT the certificate")
            && changed.stderr.contains(&other)
            && changed.stderr.contains(&presented),
        "both fingerprints: {changed:#?}"
    );
    assert!(
        changed.stdout.contains("in place of its tls_fingerprint"),
        "{changed:#?}"
    );

    let ca = env.sim.ca_cert_path();
    configure(&env, &format!("ca_cert = {:?}", ca.display().to_string()));
    let shown = env.run(&["trust"], b"");
    shown.success();
    assert!(
        shown.stdout.contains("in place of its ca_cert"),
        "{shown:#?}"
    );
    assert!(!shown.stderr.contains("NOT the certificate"), "{shown:#?}");
    // That ca_cert is the presented certificate itself: trusted already, and said so.
    assert!(
        shown.stdout.contains(&format!(
            "[zvm] ca_cert {} is this very certificate, so it is trusted as it is",
            ca.display()
        )),
        "{shown:#?}"
    );

    // A CA that signed the presented leaf is not the certificate itself: no such claim.
    let signed = TestEnv::start();
    let ca = signed.sim.ca_cert_path();
    configure(
        &signed,
        &format!("ca_cert = {:?}", ca.display().to_string()),
    );
    let shown = signed.run(&["trust"], b"");
    shown.success();
    assert!(
        !shown.stdout.contains("this very certificate"),
        "{shown:#?}"
    );
}

/// For a URL that is not the configured ZVM nothing is written, and the note names the
/// configured one and its file.
#[test]
fn trust_for_another_url_names_the_configured_zvm() {
    let env = env_presenting(SimCertificate::SelfSignedCa);
    configure(&env, "# nothing trusted yet");
    let before = std::fs::read_to_string(&env.config).expect("config");
    let other_url = env.sim.url().replace("127.0.0.1", "localhost");
    let run = env.run(&["trust", "--yes", &other_url], b"");
    run.success();
    assert!(
        run.stderr.contains("is not the configured ZVM")
            && run.stderr.contains(&env.sim.url())
            && run.stderr.contains(&env.config.display().to_string()),
        "{run:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(&env.config).expect("config"),
        before
    );
}

/// Starts `rewind sim --port 0 --time-scale 100` with `args` and returns it with its banner
/// (everything up to the "Press Ctrl-C" line).
fn start_sim(env: &TestEnv, args: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut sim = env
        .command(&[&["sim", "--port", "0", "--time-scale", "100"], args].concat())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("rewind sim starts");
    let mut banner = String::new();
    let mut lines = std::io::BufReader::new(sim.stdout.take().expect("stdout")).lines();
    for line in lines.by_ref() {
        let line = line.expect("banner");
        let done = line.starts_with("Press Ctrl-C");
        banner.push_str(&line);
        banner.push('\n');
        if done {
            break;
        }
    }
    (sim, banner)
}

/// Without `--cert-dir`, `rewind sim` keeps its generated key in rewind's private cache
/// directory, not in a shared temporary one where another user could plant a key it would
/// then serve (and the banner's `ca_cert` line would trust).
#[cfg(unix)]
#[test]
fn the_simulators_own_certificate_is_kept_in_a_private_directory() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::start();
    let (mut sim, banner) = start_sim(&env, &[]);
    let _ = sim.kill();
    let _ = sim.wait();
    let ca_cert = banner
        .lines()
        .find_map(|l| l.strip_prefix("ca_cert = "))
        .map_or_else(
            || panic!("a ca_cert line:\n{banner}"),
            |p| PathBuf::from(p.trim_matches('"')),
        );
    let dir = ca_cert.parent().expect("a directory");
    assert!(
        dir.starts_with(env.dir.path()),
        "under the test's own home, not a shared directory: {}",
        dir.display()
    );
    for private in [dir, dir.parent().expect("the cache directory")] {
        let mode = std::fs::metadata(private)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{} is private", private.display());
    }
}

/// `rewind sim --cert FILE --key FILE` presents a certificate the operator made the usual
/// way (`openssl req -x509 …`, the committed fixture), as an appliance does: the banner's
/// `ca_cert` line trusts it exactly, and `rewind trust` shows the fingerprint openssl prints.
#[test]
fn the_simulator_presents_a_certificate_made_with_openssl() {
    let env = TestEnv::start();
    let (mut sim, banner) = start_sim(
        &env,
        &[
            "--cert",
            fixture("openssl-appliance.pem").to_str().expect("UTF-8"),
            "--key",
            fixture("openssl-appliance-key.pem")
                .to_str()
                .expect("UTF-8"),
        ],
    );
    let mut zvm = banner
        .lines()
        .skip_while(|l| *l != "[zvm]")
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    zvm.push('\n');
    let url = zvm
        .lines()
        .find_map(|l| l.strip_prefix("url = "))
        .map(|u| u.trim_matches('"').to_owned());
    std::fs::write(
        &env.config,
        format!(
            "{zvm}[hook]\nbudget_secs = 30\naudit_log = {:?}\n",
            env.path("state/audit.jsonl").display().to_string()
        ),
    )
    .expect("write config");

    let expected = OPENSSL_FINGERPRINT_LINE
        .strip_prefix("sha256 Fingerprint=")
        .expect("openssl's spelling");
    let found = env.run(&["find", "jp-ubuntu"], b"");
    let trust = env.run(&["trust"], b"");
    let _ = sim.kill();
    let _ = sim.wait();

    let url = url.unwrap_or_else(|| panic!("no url in the banner:\n{banner}"));
    assert!(
        zvm.contains(&format!(
            "ca_cert = {:?}",
            fixture("openssl-appliance.pem").display().to_string()
        )),
        "the banner's ca_cert is not the certificate given:\n{banner}"
    );
    found.success();
    assert!(found.stdout.contains("jp-ubuntu"), "{found:#?}");
    trust.success();
    assert!(trust.stdout.contains(&url), "{trust:#?}");
    assert!(trust.stdout.contains("CN=zvm-appliance"), "{trust:#?}");
    assert!(
        trust.stdout.contains(&format!("sha256:{expected}")),
        "{trust:#?}"
    );
}
