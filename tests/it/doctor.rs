//! `rewind doctor` never claims what it did not show: each test sets up one way a real setup
//! goes wrong and checks that doctor fails it instead of saying ok.

use crate::support::{Setup, TestEnv, closed_port_url};

#[test]
fn a_wrong_password_fails_even_with_a_valid_cached_token() {
    let env = TestEnv::start();
    env.run(&["find", "jp-ubuntu"], b"").success();
    env.write_config(&Setup {
        password: Some("wrong-password".into()),
        ..Setup::default()
    });
    let run = env.run(&["doctor"], b"");
    run.failure();
    assert!(run.stdout.contains("FAIL  authentication"), "{run:#?}");
    assert!(!run.stdout.contains("ok    authentication"), "{run:#?}");
    assert!(!run.stdout.contains("wrong-password") && !run.stderr.contains("wrong-password"));
}

#[test]
fn a_right_password_logs_in_afresh_every_time() {
    let env = TestEnv::start();
    env.run(&["find", "jp-ubuntu"], b"").success();
    let before = env.sim.stats().token_requests;
    let run = env.run(&["doctor"], b"");
    assert!(run.stdout.contains("ok    authentication"), "{run:#?}");
    assert!(
        env.sim.stats().token_requests > before,
        "doctor logged in itself instead of trusting the cache"
    );
}

#[test]
fn without_ca_cert_tls_fails_and_nothing_after_it_is_claimed() {
    let env = TestEnv::with(Setup {
        trust_ca: false,
        ..Setup::default()
    });
    let run = env.run(&["doctor"], b"");
    run.failure();
    assert!(run.stdout.contains("ok    zvm reachable"), "{run:#?}");
    assert!(run.stdout.contains("FAIL  tls: "), "{run:#?}");
    assert!(run.stdout.contains("rewind trust"), "{run:#?}");
    for claim in ["ok    tls", "authentication", "zvm api", "vpg "] {
        assert!(!run.stdout.contains(claim), "{claim}: {run:#?}");
    }
}

#[test]
fn an_unreachable_zvm_claims_neither_tls_nor_login() {
    let env = TestEnv::with(Setup {
        url: Some(closed_port_url()),
        ..Setup::default()
    });
    let run = env.run(&["doctor"], b"");
    run.failure();
    assert!(run.stdout.contains("FAIL  zvm reachable"), "{run:#?}");
    for claim in ["tls", "authentication", "zvm api"] {
        assert!(
            !run.stdout.contains(&format!("ok    {claim}")),
            "{claim}: {run:#?}"
        );
    }
}
