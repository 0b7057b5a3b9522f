//! Real appliances answer differently from the simulator's defaults: each behaviour a ZVM was
//! seen or documented to have, switched on in the simulator, and the whole loop through the
//! real binary against it: the hook's tagged checkpoint is confirmed, `recover` brings the
//! file back byte-identical, and no FLR session is left.

use rewind::sim::{Fault, Scenario, UrlForm};
use serde_json::json;

use crate::support::{Run, Setup, TestEnv, eventually, hook_input};

const BEFORE: &[u8] = b"listen = 0.0.0.0:8080\nmode = safe\n";
const BROKEN: &[u8] = b"listen = \nmode = ??? \n";
/// A Claude Code `tool_use_id` is this long: 30 characters.
const CHANGE: &str = "toolu_01A09q90qw90lq917835lq9x";

fn with_faults(faults: Vec<Fault>) -> TestEnv {
    TestEnv::with(Setup {
        faults,
        ..Setup::default()
    })
}

/// The lab as a Windows ZVM 9.x (session login).
fn session_lab() -> Scenario {
    let lab = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/lab.toml"))
        .expect("lab scenario");
    Scenario::from_toml(
        &lab.replace("auth = \"keycloak\"", "auth = \"session\""),
        "lab.toml",
    )
    .expect("scenario")
}

/// The hook guards a change on jp-ubuntu (its checkpoint confirmed), the agent breaks
/// /etc/app.conf, `recover --change` brings it back byte-identical with the file's hash, and
/// nothing stays mounted.
#[track_caller]
fn guard_and_recover(env: &TestEnv) -> Run {
    env.sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", BEFORE)
        .expect("seed");
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "edit"}),
        CHANGE,
    ));
    assert!(
        run.reason().contains("tagged checkpoint"),
        "guarded: {run:#?}"
    );
    assert_eq!(run.decision(), "none", "{run:#?}");
    env.sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", BROKEN)
        .expect("break");
    let out = env.path("out");
    let recovered = env.run(
        &[
            "recover",
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/app.conf",
            "--change",
            CHANGE,
            "--yes",
            "--out",
            out.to_str().expect("utf-8"),
        ],
        b"",
    );
    recovered.success();
    assert!(
        recovered.stdout.contains("restorable:  until about "),
        "the plan says until when the point lasts: {recovered:#?}"
    );
    assert_eq!(
        std::fs::read(out.join("app.conf")).expect("written"),
        BEFORE,
        "{recovered:#?}"
    );
    let sha = rewind::hex(&<sha2::Sha256 as sha2::Digest>::digest(BEFORE));
    assert!(
        recovered.stdout.contains(&sha)
            && recovered
                .stdout
                .contains(&format!("({} bytes", BEFORE.len())),
        "the file's own size and hash: {recovered:#?}"
    );
    eventually("every FLR session to be gone", || {
        env.sim.flr_sessions().is_empty()
    });
    recovered
}

#[test]
fn a_windows_zvm_session_login_sends_the_vcenter_method_by_default() {
    let env = TestEnv::with(Setup {
        scenario: Some(session_lab()),
        ..Setup::default()
    });
    guard_and_recover(&env);
}

#[test]
fn a_windows_account_login_is_refused_with_the_method_named_then_works_when_configured() {
    let env = TestEnv::with(Setup {
        scenario: Some(session_lab()),
        faults: vec![Fault::SessionMethod { method: 0 }],
        ..Setup::default()
    });
    let refused = env.run(&["find", "jp-ubuntu"], b"");
    refused.failure();
    assert!(
        refused.stderr.contains("AuthenticationMethod 1")
            && refused.stderr.contains("session_method = \"windows\""),
        "the refusal says which method was tried and how to switch: {refused:#?}"
    );
    let config = std::fs::read_to_string(&env.config).expect("config");
    std::fs::write(
        &env.config,
        config.replace(
            "auth = \"session\"\n",
            "auth = \"session\"\nsession_method = \"windows\"\n",
        ),
    )
    .expect("config");
    guard_and_recover(&env);
}

#[test]
fn a_browse_answered_in_small_pages_is_read_to_the_end() {
    let env = with_faults(vec![Fault::BrowsePages { size: 1 }]);
    // /etc/app.conf comes after these in the listing's order only if all pages are read.
    for name in ["/etc/aa.conf", "/etc/ab.conf", "/etc/ac.conf"] {
        env.sim
            .write_guest_file("jp-ubuntu", name, b"x\n")
            .expect("seed");
    }
    guard_and_recover(&env);
    let browses = env.sim.stats().by_route["POST /v1/flrs/{id}/browse"];
    assert!(browses > 3, "one directory took several pages: {browses}");
}

#[test]
fn an_appliance_that_refuses_paging_fields_is_browsed_without_them() {
    let env = with_faults(vec![Fault::BrowseRefusesPaging]);
    guard_and_recover(&env);
}

#[test]
fn download_urls_in_every_form_are_fetched_from_the_configured_zvm() {
    for form in [UrlForm::Relative, UrlForm::RootRelative, UrlForm::OtherHost] {
        let env = with_faults(vec![Fault::DownloadUrl { form }]);
        guard_and_recover(&env);
    }
}

#[test]
fn a_download_packed_in_a_zip_restores_the_file_and_hashes_it() {
    let env = with_faults(vec![Fault::DownloadZip]);
    // The hash printed (checked inside) is the file's, not the archive's.
    guard_and_recover(&env);
}

#[test]
fn a_vm_row_with_null_names_does_not_fail_the_lookup() {
    let env = with_faults(vec![Fault::NullNameRows]);
    let found = env.run(&["find", "jp-ubuntu"], b"");
    found.success();
    assert!(found.stdout.contains("jp-ubuntu-vpg"), "{found:#?}");
    guard_and_recover(&env);
}

#[test]
fn a_finished_task_that_answers_401_is_confirmed_by_the_checkpoint_list() {
    let env = with_faults(vec![Fault::TaskGone401]);
    guard_and_recover(&env);
    assert!(env.sim.stats().unauthorized > 0, "the task did answer 401");
}

#[test]
fn a_finished_task_that_answers_401_and_never_lists_the_tag_is_still_a_deny() {
    let env = with_faults(vec![
        Fault::TaskGone401,
        Fault::TagNeverListed {
            vpg: String::from("jp-ubuntu-vpg"),
        },
    ]);
    env.write_config(&Setup {
        hook: String::from("budget_secs = 4"),
        ..Setup::default()
    });
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "edit"}),
        CHANGE,
    ));
    assert_eq!(run.decision(), "deny", "{run:#?}");
}

#[test]
fn retry_after_is_honoured_and_never_asked_sooner() {
    let env = with_faults(vec![Fault::RetryAfter {
        status: 429,
        secs: 1,
        every: 4,
    }]);
    guard_and_recover(&env);
    let stats = env.sim.stats();
    assert_eq!(stats.early_retries, 0, "{stats:#?}");
    let env = with_faults(vec![Fault::RetryAfter {
        status: 503,
        secs: 1,
        every: 5,
    }]);
    guard_and_recover(&env);
    assert_eq!(env.sim.stats().early_retries, 0);
}

#[test]
fn a_checkpoint_name_listed_cut_to_40_characters_still_confirms() {
    let env = with_faults(vec![Fault::NamesCut { max: 40 }]);
    guard_and_recover(&env);
    let sent = env.sim.inserts();
    assert!(
        sent.iter().all(|i| i.tag.chars().count() > 40),
        "the names were longer than Zerto listed them: {sent:#?}"
    );
}

/// First contact: `rewind selftest` runs every step once against the ZVM, says each with its
/// time, leaves nothing mounted, and its capture holds the answers' shapes but no value.
#[test]
fn selftest_runs_the_whole_loop_and_captures_shapes_without_values() {
    let env = with_faults(vec![Fault::NamesCut { max: 40 }]);
    let capture = env.path("shapes.json");
    let run = env.run(
        &[
            "selftest",
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/hostname",
            "--capture",
            capture.to_str().expect("utf-8"),
        ],
        b"",
    );
    run.success();
    for step in [
        "ok    login: Keycloak password grant, user admin, client zerto-client",
        "ok    VM lookup: VM jp-ubuntu",
        "ok    tagged checkpoint: change selftest-",
        "ok    checkpoint list:",
        "ok    whole-VM recovery: journal VM restore: offered (task type RestoreVm); failover test: offered (task type FailOverTest)",
        "ok    FLR mount: session",
        "ok    browse: /etc/hostname is",
        "ok    download: 10 bytes, sha256",
        "ok    unmount: session",
        "ok    unmount confirmed:",
        "selftest: all 11 steps held",
    ] {
        assert!(run.stdout.contains(step), "{step}: {run:#?}");
    }
    assert!(
        run.stdout
            .contains("Zerto lists its name as 40 characters of"),
        "a name listed cut short is reported: {run:#?}"
    );
    eventually("every FLR session to be gone", || {
        env.sim.flr_sessions().is_empty()
    });
    let shapes = std::fs::read_to_string(&capture).expect("capture");
    let parsed: serde_json::Value = serde_json::from_str(&shapes).expect("JSON");
    assert_eq!(
        parsed["answers"]["GET /v1/vms"][0]["VmName"], "string",
        "{shapes}"
    );
    assert!(
        parsed["answers"]["POST /v1/flrs/{id}/browse"].is_object(),
        "{shapes}"
    );
    for value in [
        "jp-ubuntu",
        "10.0.0.11",
        "d4a6a1d5",
        "127.0.0.1",
        "selftest-",
    ] {
        assert!(!shapes.contains(value), "{value} in the capture: {shapes}");
    }
}

/// `--failover-test` (the operator's opt-in) runs a failover test of the VM and stops it,
/// and the capture holds its answers' shapes; the VM is not touched.
#[test]
fn selftest_runs_a_failover_test_only_when_asked_and_captures_it() {
    let env = TestEnv::start();
    env.run(&["selftest", "--vm", "jp-ubuntu"], b"").success();
    assert!(
        !env.sim
            .stats()
            .by_route
            .contains_key("POST /v1/vpgs/{id}/FailoverTest"),
        "no failover test without --failover-test"
    );
    let capture = env.path("shapes.json");
    let run = env.run(
        &[
            "selftest",
            "--vm",
            "jp-ubuntu",
            "--failover-test",
            "--capture",
            capture.to_str().expect("utf-8"),
        ],
        b"",
    );
    run.success();
    assert!(
        run.stdout
            .contains("ok    failover test: VPG jp-ubuntu-vpg: test VM up in"),
        "{run:#?}"
    );
    assert_eq!(
        env.sim.whole_vm_operations(),
        (0, 0),
        "the test was stopped"
    );
    assert_eq!(
        env.sim.vm_marker("jp-ubuntu"),
        Some(0),
        "the VM was not touched"
    );
    let shapes: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&capture).expect("capture")).expect("JSON");
    for call in [
        "POST /v1/vpgs/{id}/FailoverTest",
        "POST /v1/vpgs/{id}/FailoverTestStop",
        "GET /v1/tasks/types",
    ] {
        assert!(!shapes["answers"][call].is_null(), "{call}: {shapes:#}");
    }
}

#[test]
fn selftest_fails_on_a_failed_mount_and_leaves_nothing_mounted() {
    let env = with_faults(vec![Fault::MountFails {
        vm: String::from("jp-ubuntu"),
    }]);
    let run = env.run(&["selftest", "--vm", "jp-ubuntu"], b"");
    run.failure();
    assert!(run.stdout.contains("FAIL  browse:"), "{run:#?}");
    assert!(run.stdout.contains("ok    unmount confirmed:"), "{run:#?}");
    assert!(run.stderr.contains("steps failed: browse"), "{run:#?}");
    assert!(env.sim.flr_sessions().is_empty());
}

#[test]
fn doctor_mentions_selftest_until_it_has_held_against_this_zvm() {
    let env = TestEnv::start();
    let before = env.run(&["doctor"], b"");
    assert!(
        before
            .stdout
            .contains("warn  selftest: never run against this ZVM: run `rewind selftest --vm"),
        "{before:#?}"
    );
    env.run(&["selftest", "--vm", "jp-ubuntu"], b"").success();
    let after = env.run(&["doctor"], b"");
    assert!(
        after
            .stdout
            .contains("ok    selftest: held against this ZVM at "),
        "{after:#?}"
    );
}

#[test]
fn vms_lists_every_protected_vm_and_the_unknown_vm_error_points_to_it() {
    let env = TestEnv::start();
    let listed = env.run(&["vms"], b"");
    listed.success();
    for vm in ["jp-ubuntu", "db01", "win2019-1"] {
        assert!(
            listed.stdout.lines().any(|l| l.starts_with(vm)),
            "{vm}: {listed:#?}"
        );
    }
    assert!(listed.stdout.contains("10.0.0.11"), "{listed:#?}");
    let json: serde_json::Value =
        serde_json::from_str(&env.run(&["vms", "--json"], b"").stdout).expect("JSON");
    assert!(
        json["vms"].as_array().is_some_and(|v| v.len() >= 3),
        "{json}"
    );
    let unknown = env.run(&["find", "nothing-like-it"], b"");
    unknown.failure();
    assert!(
        unknown.stderr.contains("`rewind vms` lists"),
        "{unknown:#?}"
    );
}

#[test]
fn plain_http_to_the_tls_zvm_says_to_use_https() {
    let env = TestEnv::start();
    let url = env.sim.url().replacen("https://", "http://", 1);
    let config = std::fs::read_to_string(&env.config).expect("config");
    std::fs::write(&env.config, config.replace(&env.sim.url(), &url)).expect("config");
    let run = env.run(&["find", "jp-ubuntu"], b"");
    run.failure();
    assert!(
        run.stderr
            .contains("the ZVM speaks TLS on this port; use https://"),
        "{run:#?}"
    );
}
