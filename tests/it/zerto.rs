//! The Zerto side end to end: `rewind guard`, `find` and `checkpoints` as processes against
//! the simulator over HTTPS.

use std::time::Duration;

use rewind::sim::{FailState, Fault};

use crate::support::{Run, Setup, TestEnv, closed_port_url, hook_input};

/// Runs `count` `rewind guard` processes on `vm` at once, changes `<prefix>-<n>`; all must
/// succeed.
fn parallel_guards(env: &TestEnv, vm: &str, prefix: &str, count: usize) -> Vec<Run> {
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..count)
            .map(|n| {
                let change = format!("{prefix}-{n}");
                s.spawn(move || env.run(&["guard", "--vm", vm, "--change", &change], b""))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    for run in &runs {
        run.success();
    }
    runs
}

#[test]
fn guard_tags_a_vsphere_vpg_and_ten_runs_share_one_token() {
    let env = TestEnv::start();
    let first = env.run(&["guard", "--vm", "jp-ubuntu", "--change", "c-1"], b"");
    first.success();
    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 1);
    let id = inserts[0].checkpoint_id.clone().expect("checkpoint id");
    assert!(
        first.stdout.contains(&format!("checkpoint {id} at")),
        "{first:#?}"
    );
    assert!(
        inserts[0].tag.starts_with("ai:c-1 | "),
        "{}",
        inserts[0].tag
    );
    assert!(
        env.sim
            .checkpoints("jp-ubuntu-vpg")
            .iter()
            .any(|c| c.id == id && c.tag.as_deref() == Some(inserts[0].tag.as_str())),
        "the simulator lists the tagged checkpoint"
    );
    for n in 2..=10 {
        env.run(
            &["guard", "--vm", "jp-ubuntu", "--change", &format!("c-{n}")],
            b"",
        )
        .success();
    }
    assert_eq!(env.sim.inserts().len(), 10);
    assert_eq!(
        env.sim.stats().token_requests,
        1,
        "the token cache works across processes"
    );
}

#[test]
fn guard_on_a_vm_in_two_vpgs_tags_both_in_parallel() {
    // Time x10: the vSphere tag lists 0.4 s after its insert, room for the Azure insert to
    // arrive on a busy machine.
    let env = TestEnv::with(Setup {
        time_scale: 10.0,
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "db01"], b"");
    run.success();
    let inserts = env.sim.inserts();
    let vpgs: Vec<&str> = inserts.iter().map(|i| i.vpg_name.as_str()).collect();
    assert_eq!(inserts.len(), 2, "{vpgs:?}");
    assert!(vpgs.contains(&"db01-local") && vpgs.contains(&"db01-azure"));
    for insert in &inserts {
        let id = insert.checkpoint_id.as_deref().expect("listed");
        assert!(
            run.stdout
                .contains(&format!("VPG {}: checkpoint {id}", insert.vpg_name)),
            "{run:#?}"
        );
    }
    // Parallel, not one after the other: both inserts reached Zerto before either tag was
    // listed, so the wall time is the slower VPG's, not the sum.
    let first_listed = inserts
        .iter()
        .filter_map(|i| i.listed_at)
        .min()
        .expect("listed");
    assert!(
        inserts.iter().all(|i| i.received_at < first_listed),
        "{inserts:#?}"
    );
}

#[test]
fn a_failed_insert_is_refused_with_vpg_task_state_and_reason() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::InsertFails {
            vpg: "jp-ubuntu-vpg".into(),
            state: FailState::Failed,
            reason: "Journal storage is full".into(),
        }],
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.failure();
    let task = &env.sim.inserts()[0].task_id;
    for needle in [
        "jp-ubuntu-vpg",
        task.as_str(),
        "Failed",
        "Journal storage is full",
    ] {
        assert!(run.stderr.contains(needle), "missing {needle:?}:\n{run:#?}");
    }
}

#[test]
fn a_tag_that_never_lists_is_refused_before_the_deadline_pointing_at_the_task() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::TagNeverListed {
            vpg: "jp-ubuntu-vpg".into(),
        }],
        hook: String::from("budget_secs = 3"),
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.failure();
    let task = &env.sim.inserts()[0].task_id;
    assert!(
        run.stderr.contains(&format!("check Zerto task {task}")),
        "{run:#?}"
    );
    assert!(
        run.elapsed < Duration::from_secs(4),
        "budget 3 s, took {:?}",
        run.elapsed
    );
}

#[test]
fn eight_parallel_guards_on_one_vpg_all_succeed_without_a_401() {
    let env = TestEnv::start();
    let runs = parallel_guards(&env, "jp-ubuntu", "p", 8);
    let stats = env.sim.stats();
    assert_eq!(stats.unauthorized, 0, "{stats:#?}");
    assert_eq!(
        stats.token_requests, 1,
        "one login shared by eight processes"
    );
    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 8);
    assert!(
        inserts.iter().all(|i| i.task_state == "Completed"),
        "{inserts:#?}"
    );
    for (n, run) in runs.iter().enumerate() {
        let insert = inserts
            .iter()
            .find(|i| i.tag.starts_with(&format!("ai:p-{n} | ")))
            .expect("each process inserted its own tag");
        let listed = insert.listed_at.expect("listed");
        assert!(
            listed <= run.ended,
            "process {n} returned before its tag was listed"
        );
    }
}

#[test]
fn unknown_ambiguous_ip_and_identifier_references() {
    let env = TestEnv::start();
    let unknown = env.run(&["find", "mail01.corp.example"], b"");
    unknown.failure();
    assert!(unknown.stderr.contains("unknown to Zerto"), "{unknown:#?}");

    let ambiguous = env.run(&["find", "web"], b"");
    ambiguous.failure();
    for id in ["vm-201", "vm-202"] {
        assert!(
            ambiguous.stderr.contains(id),
            "candidates listed: {ambiguous:#?}"
        );
    }
    assert!(
        ambiguous.stderr.matches(", VPG ").count() >= 2,
        "each candidate with its VPGs: {ambiguous:#?}"
    );
    // The two share a name: their IPs tell a person which is which.
    for ip in ["10.0.0.41", "10.0.0.42"] {
        assert!(ambiguous.stderr.contains(ip), "{ip}: {ambiguous:#?}");
    }

    for reference in [
        "10.0.0.11",
        "d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-101",
        "root@jp-ubuntu:22",
    ] {
        let found = env.run(&["find", reference], b"");
        found.success();
        assert!(
            found.stdout.starts_with("jp-ubuntu (") && found.stdout.contains("jp-ubuntu-vpg"),
            "{found:#?}"
        );
    }
}

#[test]
fn tls_is_verified_unless_the_simulators_certificate_is_trusted() {
    let env = TestEnv::with(Setup {
        trust_ca: false,
        ..Setup::default()
    });
    let refused = env.run(&["find", "jp-ubuntu"], b"");
    refused.failure();
    assert!(
        refused
            .stderr
            .contains("TLS certificate of https://127.0.0.1:"),
        "{refused:#?}"
    );
    assert!(refused.stderr.contains("ca_cert"), "{refused:#?}");
    env.write_config(&Setup::default());
    env.run(&["find", "jp-ubuntu"], b"").success();
}

#[test]
fn zvm_down_5xx_and_hang_are_refused_within_the_deadline() {
    let hook = String::from("budget_secs = 5");
    let down = TestEnv::with(Setup {
        url: Some(closed_port_url()),
        hook: hook.clone(),
        ..Setup::default()
    });
    let run = down.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.failure();
    assert!(
        run.stderr.contains("ZVM unreachable") && run.stderr.contains("check [zvm] url"),
        "says what to check: {run:#?}"
    );

    let broken = TestEnv::with(Setup {
        faults: vec![Fault::Status {
            route: "GET /v1/vms".into(),
            status: 503,
            times: None,
        }],
        hook: hook.clone(),
        ..Setup::default()
    });
    let run = broken.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.failure();
    assert!(run.stderr.contains("HTTP 503"), "{run:#?}");

    let hung = TestEnv::with(Setup {
        faults: vec![Fault::Hang {
            route: "GET /v1/vms".into(),
        }],
        hook,
        ..Setup::default()
    });
    let run = hung.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.failure();
    assert!(run.stderr.contains("did not answer in time"), "{run:#?}");
    assert!(
        run.elapsed < Duration::from_secs(6),
        "a 5 s deadline took {:?}",
        run.elapsed
    );
}

#[test]
fn a_wrong_password_is_an_authentication_error_that_never_shows_the_password() {
    let env = TestEnv::with(Setup {
        password: Some("s3cr3t-wrong-pw".into()),
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.failure();
    assert!(run.stderr.contains("authentication refused"), "{run:#?}");
    assert!(
        run.stderr.contains("check [zvm] username"),
        "says what to check: {run:#?}"
    );
    assert!(!run.stderr.contains("s3cr3t-wrong-pw") && !run.stdout.contains("s3cr3t-wrong-pw"));
}

#[test]
fn a_cached_token_never_hides_a_wrong_or_changed_password() {
    let env = TestEnv::start();
    env.run(&["find", "jp-ubuntu"], b"").success();
    let logins = env.sim.stats().token_requests;
    env.run(&["find", "jp-ubuntu"], b"").success();
    assert_eq!(
        env.sim.stats().token_requests,
        logins,
        "the token is shared"
    );

    env.write_config(&Setup {
        password: Some("not-the-password".into()),
        ..Setup::default()
    });
    let wrong = env.run(&["find", "jp-ubuntu"], b"");
    wrong.failure();
    assert!(
        wrong.stderr.contains("authentication refused"),
        "{wrong:#?}"
    );
    let hook = env.hook(&hook_input(
        "mcp__ssh__exec",
        &serde_json::json!({"host": "jp-ubuntu", "command": "touch /tmp/x"}),
        "toolu_wrong_pw",
    ));
    assert_eq!(hook.decision(), "deny", "{hook:#?}");

    // Back to the right password: the token it obtained is still good.
    let refused = env.sim.stats().token_requests;
    assert!(refused > logins, "the wrong password was tried for real");
    env.write_config(&Setup::default());
    env.run(&["find", "jp-ubuntu"], b"").success();
    assert_eq!(
        env.sim.stats().token_requests,
        refused,
        "the right one's token reused"
    );
}

#[test]
fn checkpoints_filter_by_change() {
    let env = TestEnv::start();
    env.run(&["guard", "--vm", "jp-ubuntu", "--change", "toolu_x1"], b"")
        .success();
    let listed = env.run(&["checkpoints", "jp-ubuntu", "--change", "toolu_x1"], b"");
    listed.success();
    assert!(listed.stdout.contains("change=toolu_x1"), "{listed:#?}");
    let none = env.run(&["checkpoints", "jp-ubuntu", "--change", "toolu_nope"], b"");
    none.failure();
    assert!(
        none.stderr
            .contains("no checkpoint of VM jp-ubuntu is tagged change=toolu_nope"),
        "{none:#?}"
    );
}

#[test]
fn a_token_the_zvm_expired_is_renewed_once_and_the_call_goes_on() {
    let env = TestEnv::start();
    env.run(&["find", "jp-ubuntu"], b"").success();
    env.sim.expire_tokens();
    env.run(&["guard", "--vm", "jp-ubuntu"], b"").success();
    let stats = env.sim.stats();
    assert_eq!(
        stats.unauthorized, 1,
        "exactly one 401, then the renewed token: {stats:#?}"
    );
    assert_eq!(stats.token_requests, 2, "{stats:#?}");
}

#[test]
fn a_windows_zvm_session_login_works_and_is_shared() {
    let scenario = rewind::sim::Scenario::from_toml(
        r#"
        auth = "session"
        username = "zadmin"
        password = "9x-pass"
        [[vm]]
        name = "app01"
        ips = ["10.1.0.5"]
        guest_os = "windows"
        [[vpg]]
        name = "app01-vpg"
        profile = "vsphere"
        vms = ["app01"]
        "#,
        "session.toml",
    )
    .expect("scenario");
    let env = TestEnv::with(Setup {
        scenario: Some(scenario),
        ..Setup::default()
    });
    let config = std::fs::read_to_string(&env.config).expect("config");
    assert!(config.contains("auth = \"session\""), "{config}");
    env.run(&["guard", "--vm", "10.1.0.5"], b"").success();
    env.run(&["guard", "--vm", "app01"], b"").success();
    assert_eq!(
        env.sim.stats().token_requests,
        1,
        "one session for both processes"
    );
    assert_eq!(env.sim.inserts().len(), 2);
}

#[test]
fn a_keycloak_service_client_logs_in_with_client_credentials() {
    let scenario = rewind::sim::Scenario::from_toml(
        r#"
        username = "admin"
        password = "unused"
        client_id = "api-script"
        client_secret = "cl1ent-s3cret"
        [[vm]]
        name = "app02"
        guest_os = "linux"
        [[vpg]]
        name = "app02-vpg"
        profile = "vsphere"
        vms = ["app02"]
        "#,
        "service-client.toml",
    )
    .expect("scenario");
    let env = TestEnv::with(Setup {
        scenario: Some(scenario),
        ..Setup::default()
    });
    let config = std::fs::read_to_string(&env.config).expect("config");
    let config = config.replace(
        "password_env = \"REWIND_ZVM_PASSWORD\"",
        "client_secret_env = \"REWIND_CLIENT_SECRET\"",
    );
    std::fs::write(&env.config, config).expect("config");
    let mut cmd = env.command(&["guard", "--vm", "app02"]);
    cmd.env_remove("REWIND_ZVM_PASSWORD")
        .env("REWIND_CLIENT_SECRET", "cl1ent-s3cret");
    let run = crate::support::run(cmd, b"");
    run.success();
    assert_eq!(env.sim.stats().token_requests, 1);

    let mut wrong = env.command(&["find", "app02"]);
    wrong
        .env("XDG_CACHE_HOME", env.path("other-cache"))
        .env("REWIND_CLIENT_SECRET", "not-it");
    let refused = crate::support::run(wrong, b"");
    refused.failure();
    assert!(
        refused.stderr.contains("authentication refused"),
        "{refused:#?}"
    );
    assert!(!refused.stderr.contains("not-it"));
}

#[test]
fn a_passing_5xx_while_polling_is_retried_not_refused() {
    let env = TestEnv::with(Setup {
        faults: vec![
            Fault::Status {
                route: "GET /v1/tasks/*".into(),
                status: 503,
                times: Some(2),
            },
            Fault::Status {
                route: "GET /v1/vpgs/*/checkpoints".into(),
                status: 502,
                times: Some(1),
            },
        ],
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.success();
    assert_eq!(
        env.sim.inserts().len(),
        1,
        "the insert itself is never repeated"
    );
}

#[test]
fn a_slow_cloud_vpg_does_not_hold_the_next_call_while_its_tag_lists() {
    // Time x20: the AWS tag lists 6.4 s after its insert, far longer than process start-up.
    let env = TestEnv::with(Setup {
        time_scale: 20.0,
        ..Setup::default()
    });
    parallel_guards(&env, "win2019-1", "aws", 2);
    let mut inserts = env.sim.inserts();
    inserts.sort_by_key(|i| i.received_at);
    assert_eq!(inserts.len(), 2);
    assert!(
        inserts.iter().all(|i| i.task_state == "Completed"),
        "{inserts:#?}"
    );
    // The second insert went in once the first task ended, long before the first tag listed.
    let first_listed = inserts[0].listed_at.expect("listed");
    assert!(inserts[1].received_at < first_listed, "{inserts:#?}");
}

#[test]
fn an_insert_failed_by_a_concurrent_insert_elsewhere_is_waited_out_and_retried() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::InsertBusy {
            vpg: "jp-ubuntu-vpg".into(),
            times: 1,
        }],
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "jp-ubuntu"], b"");
    run.success();
    let states: Vec<String> = env
        .sim
        .inserts()
        .into_iter()
        .map(|i| i.task_state)
        .collect();
    assert_eq!(states, ["Failed", "Completed"], "{run:#?}");
}

/// Without a terminal, `rewind guard` says each VPG's phase on stderr once, as it changes,
/// with the time spent and, while waiting for the listing, the time the VPG's cadence
/// predicts; stdout keeps only the result.
#[test]
fn guard_progress_is_one_plain_line_per_phase_change_on_stderr() {
    let env = TestEnv::with(Setup {
        time_scale: 10.0,
        ..Setup::default()
    });
    let run = env.run(&["guard", "--vm", "db01", "--change", "toolu_p1"], b"");
    run.success();
    assert!(
        !run.stdout.contains("waiting"),
        "stdout is the result: {run:#?}"
    );
    assert!(
        !run.stderr.contains('\x1b'),
        "no terminal codes in a pipe: {run:#?}"
    );
    // The two VPGs run in parallel, so their lines interleave in any order; each VPG's own
    // lines come in the order of its phases.
    let progress: Vec<&str> = ["db01-local", "db01-azure"]
        .iter()
        .flat_map(|vpg| {
            let prefix = format!("VPG {vpg}: ");
            run.stderr
                .lines()
                .filter(move |l| l.starts_with(&prefix))
                .collect::<Vec<_>>()
        })
        .collect();
    insta::with_settings!({
        filters => vec![
            (r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\.[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", "[task]"),
            (r"\((\d+ min )?\d+ s", "([elapsed]"),
            (r"expected at about [^,]+,", "expected at about [time],"),
            (r"checkpoint \d+ is listed", "checkpoint [id] is listed"),
        ],
    }, {
        insta::assert_snapshot!(progress.join("\n"));
    });
}

/// What another ZVM version sends: 7.x writes times as `/Date(milliseconds)/`, and a
/// checkpoint id may be a number. They are read as the same instants and ids.
#[test]
fn checkpoints_in_the_date_format_of_older_zvms_are_read() {
    let env = TestEnv::start();
    env.sim.add_fault(Fault::Body {
        route: String::from("GET /v1/vpgs/*/checkpoints"),
        body: String::from(
            r#"[{"CheckpointIdentifier":786,"TimeStamp":"/Date(1520423877045)/","Tag":"ai:cli/op | fix | vm=jp-ubuntu | change=toolu_old | 2018-03-07T11:57:27Z"},
                {"CheckpointIdentifier":"787","TimeStamp":"/Date(1520423882045+0100)/","Tag":null}]"#,
        ),
    });
    let listed = env.run(&["checkpoints", "jp-ubuntu", "--json"], b"");
    listed.success();
    let listed: serde_json::Value = serde_json::from_str(&listed.stdout).expect("JSON");
    assert_eq!(
        listed["vpgs"][0]["checkpoints"],
        serde_json::json!([
            {"id": "786", "time": "2018-03-07T11:57:57.045Z", "restorable_until": "2018-03-07T12:57:57Z", "tag": "ai:cli/op | fix | vm=jp-ubuntu | change=toolu_old | 2018-03-07T11:57:27Z"},
            {"id": "787", "time": "2018-03-07T11:58:02.045Z", "restorable_until": "2018-03-07T12:58:02Z", "tag": null},
        ])
    );
}

/// A checkpoint list Zerto sends with a time that is no time cannot be trusted to order
/// checkpoints or to confirm one: the command fails naming the call, the checkpoint and the
/// field, and the hook denies naming the checkpoint and the field (not the call's route)
/// rather than guessing.
#[test]
fn an_unusable_checkpoint_time_is_an_error_naming_the_field_and_the_hook_denies() {
    let env = TestEnv::start();
    env.sim.add_fault(Fault::Body {
        route: String::from("GET /v1/vpgs/*/checkpoints"),
        body: String::from(r#"[{"CheckpointIdentifier":"41","TimeStamp":"yesterday","Tag":null}]"#),
    });
    let what = "/checkpoints: unexpected answer: checkpoint 41: TimeStamp \"yesterday\" is not an ISO-8601 UTC time";
    let listed = env.run(&["checkpoints", "jp-ubuntu"], b"");
    listed.failure();
    assert!(
        listed.stderr.contains("GET https://127.0.0.1:") && listed.stderr.contains(what),
        "{listed:#?}"
    );
    let hook = env.hook(&hook_input(
        "mcp__ssh__exec",
        &serde_json::json!({"host": "jp-ubuntu", "command": "touch /tmp/x"}),
        "toolu_bad_time",
    ));
    assert_eq!(hook.decision(), "deny", "{hook:#?}");
    // The agent is told the field, not the ZVM's route.
    assert!(
        hook.reason()
            .contains(what.trim_start_matches("/checkpoints: unexpected answer: "))
            && !hook.reason().contains("/checkpoints")
            && !hook.reason().contains("127.0.0.1"),
        "{hook:#?}"
    );
}

/// `guard --budget` replaces the configured budget (here 50 minutes) for one run: a tag that
/// never lists is refused once the 1 s given on the command line is spent, naming its task.
/// Nonsense budgets are usage errors (exit 2), refused before anything is inserted.
#[test]
fn guard_budget_on_the_command_line_replaces_the_configured_one() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::TagNeverListed {
            vpg: "jp-ubuntu-vpg".into(),
        }],
        hook: String::from("budget_secs = 3000"),
        ..Setup::default()
    });
    for bad in ["0", "-1", "NaN", "3601"] {
        let flag = format!("--budget={bad}");
        let run = env.run(&["guard", "--vm", "jp-ubuntu", &flag], b"");
        assert_eq!(run.code, 2, "{bad}: {run:#?}");
        assert!(run.stderr.contains("--budget"), "{bad}: {run:#?}");
    }
    assert!(env.sim.inserts().is_empty(), "nothing inserted");
    let mut child = env
        .command(&["guard", "--vm", "jp-ubuntu", "--budget", "1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rewind starts");
    // Not a timing assertion: only a guard that ignored --budget would still run after
    // minutes (it would wait the configured 50).
    let until = std::time::Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > until {
            let _ = child.kill();
            panic!("guard --budget 1 was still waiting after two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let task = &env.sim.inserts()[0].task_id;
    assert!(
        stderr.contains(&format!("check Zerto task {task}")),
        "{stderr}"
    );
}

/// Ctrl-C while `rewind guard` waits for the listing stops the wait: the run fails saying the
/// inserted checkpoint stays in Zerto, and the audit trail records it as `cancelled`.
#[test]
fn ctrl_c_stops_a_guard_waiting_for_the_listing_and_is_recorded() {
    use std::io::BufRead as _;
    let env = TestEnv::with(Setup {
        faults: vec![Fault::TagNeverListed {
            vpg: "jp-ubuntu-vpg".into(),
        }],
        hook: String::from("budget_secs = 3000"),
        ..Setup::default()
    });
    let mut child = env
        .command(&["guard", "--vm", "jp-ubuntu", "--change", "toolu_int"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rewind starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut said = String::new();
    while !said.contains("waiting until Zerto lists the checkpoint") {
        let mut line = String::new();
        let read = stderr.read_line(&mut line).expect("stderr");
        assert!(read > 0, "rewind guard ended early: {said}");
        said.push_str(&line);
    }
    let killed = std::process::Command::new("sh")
        .args(["-c", r#"kill -INT "$1""#, "sh", &child.id().to_string()])
        .status()
        .expect("sh");
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).expect("stderr");
    let status = child.wait().expect("ends");
    assert_eq!(status.code(), Some(1), "{said}{rest}");
    let task = &env.sim.inserts()[0].task_id;
    assert!(
        rest.contains(&format!(
            "Zerto task {task} is not undone and stays in Zerto"
        )),
        "{rest}"
    );
    assert!(
        rest.contains("cancelled by Ctrl-C on VM jp-ubuntu") && !rest.contains("refused"),
        "said cancelled, not refused: {rest}"
    );
    let log = env.run(&["log", "--decision", "cancelled", "--json"], b"");
    let record: serde_json::Value = serde_json::from_str(log.stdout.trim()).expect("one line");
    assert_eq!(record["tool"], "rewind guard");
    assert_eq!(record["change"], "toolu_int");
}

/// A mistyped VM, configuration key or catalog field names the nearest valid one, with the
/// command that lists the valid VMs; a name near nothing gets the command alone.
#[test]
fn a_typo_is_answered_with_the_nearest_valid_word() {
    let env = TestEnv::start();
    env.run(&["vms"], b"").success();
    let guard = env.run(&["guard", "--vm", "jp-ubunt"], b"");
    guard.failure();
    assert!(
        guard
            .stderr
            .contains("did you mean jp-ubuntu? `rewind vms` lists them"),
        "{guard:#?}"
    );
    let far = env.run(&["guard", "--vm", "mail-gateway"], b"");
    far.failure();
    assert!(
        !far.stderr.contains("did you mean") && far.stderr.contains("`rewind vms` lists"),
        "{far:#?}"
    );
    let find = env.run(&["find", "jp-ubnutu"], b"");
    find.failure();
    assert!(
        find.stderr.contains("it may mean one of these") && find.stderr.contains("jp-ubuntu ("),
        "{find:#?}"
    );

    let catalog = env.path("mine.toml");
    std::fs::write(
        &catalog,
        "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\nvm_args = [\"host\"]\n",
    )
    .expect("catalog");
    let text = std::fs::read_to_string(&env.config).expect("config");
    std::fs::write(
        &env.config,
        text.replace(
            "[hook]\n",
            &format!("[hook]\ncatalogs = [{:?}]\n", catalog.display().to_string()),
        ),
    )
    .expect("config");
    let lint = env.run(&["catalog", "lint"], b"");
    lint.failure();
    assert!(
        format!("{}{}", lint.stdout, lint.stderr).contains("did you mean `vm_arg`?"),
        "{lint:#?}"
    );
    std::fs::write(&env.config, text.replace("[hook]\n", "[hook]\nbudgt = 5\n")).expect("config");
    let vms = env.run(&["vms"], b"");
    vms.failure();
    assert!(
        vms.stderr.contains("did you mean `budget_secs`?"),
        "{vms:#?}"
    );
}
