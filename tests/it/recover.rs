//! `rewind recover` and `rewind flr` against the simulator's File Level Restore: the bytes
//! from before a guarded change come back, and no session is ever left mounted.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rewind::sim::Fault;
use serde_json::json;

use crate::support::{Run, Setup, TestEnv, eventually, hook_input};

const BEFORE: &[u8] = b"listen = 0.0.0.0:8080\nmode = safe\n";
const BROKEN: &[u8] = b"listen = \nmode = ??? \n";

/// A guarded change on `vm` (as the hook does it), then the agent breaks `path`.
fn guarded_then_broken(env: &TestEnv, vm: &str, path: &str, change: &str) {
    env.sim.write_guest_file(vm, path, BEFORE).expect("seed");
    let run = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": vm, "command": "edit"}),
        change,
    ));
    assert!(
        run.reason().contains("tagged checkpoint"),
        "guarded: {run:#?}"
    );
    env.sim.write_guest_file(vm, path, BROKEN).expect("break");
}

fn recover(env: &TestEnv, args: &[&str]) -> Run {
    let out = env.path("out");
    let mut all = vec!["recover", "--out", out.to_str().expect("utf-8")];
    all.extend_from_slice(args);
    env.run(&all, b"")
}

/// `rewind recover --vm <vm> --path <path> --change <change> [extra...]`.
pub(crate) fn recover_change(
    env: &TestEnv,
    vm: &str,
    path: &str,
    change: &str,
    extra: &[&str],
) -> Run {
    let mut args = vec!["--vm", vm, "--path", path, "--change", change];
    args.extend_from_slice(extra);
    recover(env, &args)
}

#[track_caller]
fn assert_nothing_mounted(env: &TestEnv) {
    eventually("every FLR session to be gone", || {
        env.sim.flr_sessions().is_empty()
    });
    let list = env.run(&["flr", "list"], b"");
    list.success();
    assert!(
        list.stdout.contains("no File Level Restore sessions"),
        "{list:#?}"
    );
}

#[test]
fn recover_by_change_brings_back_the_pre_change_linux_file() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r1");
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r1", &["--yes"]);
    run.success();
    assert_eq!(
        std::fs::read(env.path("out/app.conf")).expect("written"),
        BEFORE
    );
    let sha = rewind::hex(&<sha2::Sha256 as sha2::Digest>::digest(BEFORE));
    assert!(
        run.stdout.contains(&sha) && run.stdout.contains(&format!("({} bytes", BEFORE.len())),
        "{run:#?}"
    );
    assert!(
        run.stdout.contains("unmounted:"),
        "the unmount is reported: {run:#?}"
    );
    assert_nothing_mounted(&env);
}

/// A second checkpoint asked for under the same change id after the damage (the agent's hook
/// run again with the call's id) is never the one restored: the first tagged for the change
/// is, and recover says so.
#[test]
fn recover_by_change_restores_from_the_first_checkpoint_of_the_change() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_twice");
    let again = env.hook(&hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "edit"}),
        "toolu_twice",
    ));
    assert!(again.reason().contains("tagged checkpoint"), "{again:#?}");
    assert_eq!(env.sim.inserts().len(), 2, "two checkpoints under one id");
    let run = recover_change(
        &env,
        "jp-ubuntu",
        "/etc/app.conf",
        "toolu_twice",
        &["--yes"],
    );
    run.success();
    assert_eq!(
        std::fs::read(env.path("out/app.conf")).expect("written"),
        BEFORE
    );
    assert!(
        run.stdout
            .contains("the first checkpoint tagged change=toolu_twice"),
        "{run:#?}"
    );
    assert_nothing_mounted(&env);
}

#[test]
fn recover_by_change_brings_back_the_pre_change_windows_file() {
    let env = TestEnv::start();
    let path = r"C:\Users\admin\notes.txt";
    env.sim
        .write_guest_file("win2019-1", path, BEFORE)
        .expect("seed");
    let run = env.hook(&hook_input(
        "mcp__winrm__run_command",
        &json!({"computer_name": "win2019-1", "command": "x"}),
        "toolu_w1",
    ));
    assert!(run.reason().contains("tagged checkpoint"), "{run:#?}");
    env.sim
        .write_guest_file("win2019-1", path, BROKEN)
        .expect("break");
    recover_change(&env, "win2019-1", path, "toolu_w1", &["--yes"]).success();
    assert_eq!(
        std::fs::read(env.path("out/notes.txt")).expect("written"),
        BEFORE
    );
    assert_nothing_mounted(&env);
}

#[test]
fn without_a_terminal_or_yes_nothing_is_mounted_or_written() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r2");
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r2", &[]);
    run.failure();
    assert!(run.stderr.contains("pass --yes"), "{run:#?}");
    assert!(
        !env.sim.stats().by_route.contains_key("POST /v1/flrs"),
        "nothing mounted"
    );
    assert!(!env.path("out/app.conf").exists(), "nothing written");
}

#[test]
fn an_existing_file_is_not_overwritten_without_force() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r3");
    std::fs::create_dir_all(env.path("out")).expect("mkdir");
    std::fs::write(env.path("out/app.conf"), b"mine").expect("existing");
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r3", &["--yes"]);
    run.failure();
    assert!(run.stderr.contains("--force"), "{run:#?}");
    assert_eq!(
        std::fs::read(env.path("out/app.conf")).expect("kept"),
        b"mine"
    );
    recover_change(
        &env,
        "jp-ubuntu",
        "/etc/app.conf",
        "toolu_r3",
        &["--yes", "--force"],
    )
    .success();
    assert_eq!(
        std::fs::read(env.path("out/app.conf")).expect("replaced"),
        BEFORE
    );
}

#[test]
fn an_unknown_change_lists_the_tagged_checkpoints_that_exist() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r4");
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_nope", &["--yes"]);
    assert_eq!(run.code, 7, "not found: {run:#?}");
    assert!(
        run.stderr
            .contains("no checkpoint of VM jp-ubuntu is tagged change=toolu_nope"),
        "{run:#?}"
    );
    assert!(
        run.stderr.contains("ai:toolu_r4 | "),
        "the existing tags are listed: {run:#?}"
    );
}

#[test]
fn a_path_missing_from_the_checkpoint_writes_nothing_and_unmounts() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r5");
    let run = recover_change(
        &env,
        "jp-ubuntu",
        "/etc/missing.conf",
        "toolu_r5",
        &["--yes"],
    );
    assert_eq!(run.code, 7, "not found: {run:#?}");
    assert!(
        run.stderr
            .contains("/etc/missing.conf is not in the mounted checkpoint"),
        "{run:#?}"
    );
    assert!(!env.path("out/missing.conf").exists());
    assert!(!run.stderr.contains("did you mean"), "{run:#?}");
    assert_nothing_mounted(&env);
    // A typo names the nearest path the checkpoint holds.
    let typo = recover_change(&env, "jp-ubuntu", "/etc/app.cnf", "toolu_r5", &["--yes"]);
    typo.failure();
    assert!(
        typo.stderr
            .contains("/etc/app.cnf is not in the mounted checkpoint")
            && typo.stderr.contains("did you mean /etc/app.conf?"),
        "{typo:#?}"
    );
    let dir = recover_change(&env, "jp-ubuntu", "/ect/hostname", "toolu_r5", &["--yes"]);
    assert!(dir.stderr.contains("did you mean /etc?"), "{dir:#?}");
    assert_nothing_mounted(&env);
}

/// A checkpoint-stats answer whose `Earliest` is under another name is not read as an empty
/// journal ("no such change"): recover fails naming the field and the call, and mounts nothing.
#[test]
fn a_stats_answer_without_its_earliest_field_is_an_error_naming_it_and_the_call() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r5s");
    env.sim.add_fault(Fault::Body {
        route: String::from("GET /v1/vpgs/*/checkpoints/stats"),
        body: String::from(
            r#"{"EarliestCheckpoint": {"CheckpointIdentifier": 1001, "TimeStamp": "2026-03-02T09:00:00Z"}}"#,
        ),
    });
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r5s", &["--yes"]);
    run.failure();
    assert!(
        run.stderr.contains("GET https://127.0.0.1:")
            && run
                .stderr
                .contains("/checkpoints/stats: unexpected answer: no Earliest field"),
        "{run:#?}"
    );
    assert!(!env.path("out/app.conf").exists());
    assert_nothing_mounted(&env);
}

#[test]
fn mount_failed_and_download_failed_still_unmount() {
    for fault in [
        Fault::MountFails {
            vm: "jp-ubuntu".into(),
        },
        Fault::DownloadFails {
            vm: "jp-ubuntu".into(),
        },
    ] {
        let env = TestEnv::with(Setup {
            faults: vec![fault.clone()],
            ..Setup::default()
        });
        guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r6");
        let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r6", &["--yes"]);
        run.failure();
        assert!(run.stdout.contains("unmounted:"), "{fault:?}: {run:#?}");
        if matches!(fault, Fault::MountFails { .. }) {
            assert!(
                !run.stdout.lines().any(|l| l.starts_with("mounted:")),
                "a failed mount is never said to be mounted: {run:#?}"
            );
            assert!(run.stderr.contains("MountFailed"), "{run:#?}");
        }
        assert!(
            !env.path("out/app.conf").exists(),
            "{fault:?}: nothing written"
        );
        assert_nothing_mounted(&env);
    }
}

#[test]
fn ctrl_c_during_the_mount_wait_unmounts() {
    let env = TestEnv::with(Setup {
        faults: vec![Fault::MountHangs {
            vm: "jp-ubuntu".into(),
        }],
        ..Setup::default()
    });
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r7");
    let out = env.path("out");
    let mut child = env
        .command(&[
            "recover",
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/app.conf",
            "--change",
            "toolu_r7",
            "--yes",
            "--out",
            out.to_str().expect("utf-8"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    eventually("the mount to start", || {
        env.sim
            .flr_sessions()
            .iter()
            .any(|s| s.status == "MountInProgress")
    });
    std::thread::sleep(Duration::from_millis(300));
    // The shell's own kill: no procps needed.
    let killed = std::process::Command::new("sh")
        .args(["-c", r#"kill -INT "$1""#, "sh", &child.id().to_string()])
        .status()
        .expect("sh");
    assert!(killed.success());
    let until = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            panic!("rewind recover did not end within 30 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("ends");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("interrupted (Ctrl-C): nothing was written, and FLR session ")
            && stderr.contains(" was unmounted"),
        "{stderr}"
    );
    assert!(stdout.contains("unmounted:"), "{stdout}");
    assert_nothing_mounted(&env);
}

/// `win2019-1` with `Users\admin\notes.txt` on both C: (`Volume1-NTFS`) and D:
/// (`Volume2-NTFS`), guarded by `change`.
fn notes_on_two_volumes(env: &TestEnv, change: &str) {
    env.sim
        .write_guest_file("win2019-1", r"C:\Users\admin\notes.txt", BEFORE)
        .expect("seed C:");
    env.sim
        .write_guest_file("win2019-1", r"D:\Users\admin\notes.txt", b"on D:\n")
        .expect("seed D:");
    let run = env.hook(&hook_input(
        "mcp__winrm__run_command",
        &json!({"computer_name": "win2019-1", "command": "x"}),
        change,
    ));
    assert!(run.reason().contains("tagged checkpoint"), "{run:#?}");
}

#[test]
fn a_path_on_several_volumes_is_refused_until_one_is_chosen() {
    let env = TestEnv::start();
    notes_on_two_volumes(&env, "toolu_v1");
    let path = r"C:\Users\admin\notes.txt";
    let run = recover_change(&env, "win2019-1", path, "toolu_v1", &["--yes"]);
    run.failure();
    assert!(
        run.stderr.contains("is on several volumes")
            && run.stderr.contains("(Volume1-NTFS, Volume2-NTFS)")
            && run.stderr.contains("--volume"),
        "{run:#?}"
    );
    assert!(!env.path("out/notes.txt").exists(), "nothing written");
    assert_nothing_mounted(&env);

    let extra = ["--yes", "--volume", "Volume2-NTFS"];
    recover_change(&env, "win2019-1", path, "toolu_v1", &extra).success();
    assert_eq!(
        std::fs::read(env.path("out/notes.txt")).expect("written"),
        b"on D:\n"
    );
    assert_nothing_mounted(&env);
}

#[test]
fn an_unknown_volume_lists_the_volumes_of_the_checkpoint() {
    let env = TestEnv::start();
    notes_on_two_volumes(&env, "toolu_v2");
    let extra = ["--yes", "--volume", "Volume9-NTFS"];
    let run = recover_change(
        &env,
        "win2019-1",
        r"C:\Users\admin\notes.txt",
        "toolu_v2",
        &extra,
    );
    run.failure();
    assert!(
        run.stderr.contains("no volume \"Volume9-NTFS\"")
            && run.stderr.contains("Volume1-NTFS, Volume2-NTFS"),
        "{run:#?}"
    );
    assert!(!env.path("out/notes.txt").exists(), "nothing written");
    assert_nothing_mounted(&env);
}

#[test]
fn a_session_that_disappears_while_mounting_ends_the_wait() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r8");
    env.sim.add_fault(Fault::Status {
        route: "GET /v1/flrs/*".into(),
        status: 404,
        times: Some(1),
    });
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r8", &["--yes"]);
    run.failure();
    assert!(
        run.stderr.contains("disappeared while mounting"),
        "{run:#?}"
    );
    assert!(!env.path("out/app.conf").exists(), "nothing written");
    assert_nothing_mounted(&env);
}

/// A session ended elsewhere while recover waits for its mount (another operator's
/// `rewind flr end`) leaves nothing mounted: recover says it disappeared, and does not warn
/// that it could not unmount what is already gone.
#[test]
fn a_session_ended_elsewhere_while_mounting_is_not_reported_as_left_mounted() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r8e");
    env.sim.add_fault(Fault::MountHangs {
        vm: String::from("jp-ubuntu"),
    });
    let out = env.path("out");
    let recovering = env
        .command(&[
            "recover",
            "--out",
            out.to_str().expect("utf-8"),
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/app.conf",
            "--change",
            "toolu_r8e",
            "--yes",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("recover starts");
    eventually("the mount to start", || !env.sim.flr_sessions().is_empty());
    let session = env.sim.flr_sessions()[0].id.clone();
    env.run(&["flr", "end", &session], b"").success();
    let done = recovering.wait_with_output().expect("recover ends");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("disappeared while mounting"), "{stderr}");
    assert!(
        !stderr.contains("could not unmount") && !stderr.contains("warning"),
        "nothing was left mounted to warn about: {stderr}"
    );
    assert!(!env.path("out/app.conf").exists(), "nothing written");
    assert_nothing_mounted(&env);
}

#[test]
fn a_refused_unmount_is_asked_for_again() {
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r9");
    env.sim.add_fault(Fault::Status {
        route: "DELETE /v1/flrs/*".into(),
        status: 503,
        times: Some(2),
    });
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r9", &["--yes"]);
    run.success();
    assert!(run.stderr.contains("asking again"), "{run:#?}");
    assert!(run.stdout.contains("unmounted:"), "{run:#?}");
    assert!(!run.stderr.contains("rewind flr end"), "{run:#?}");
    assert_nothing_mounted(&env);
}

#[test]
fn a_mount_request_without_an_answer_looks_for_the_session_it_may_have_made() {
    // Dropped before the ZVM acted: there is nothing to end.
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r10");
    env.sim.add_fault(Fault::Drop {
        route: "POST /v1/flrs".into(),
    });
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r10", &["--yes"]);
    run.failure();
    assert!(
        run.stderr.contains("could not mount")
            && run.stderr.contains("the mount request got no answer")
            && run.stderr.contains("was left behind"),
        "{run:#?}"
    );
    assert_nothing_mounted(&env);

    // Dropped after the ZVM mounted: the session it made is found and ended.
    let env = TestEnv::start();
    guarded_then_broken(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r11");
    env.sim.add_fault(Fault::DropAnswer {
        route: "POST /v1/flrs".into(),
    });
    let run = recover_change(&env, "jp-ubuntu", "/etc/app.conf", "toolu_r11", &["--yes"]);
    run.failure();
    assert!(
        run.stderr.contains("but the ZVM created session"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("unmounted:"), "{run:#?}");
    assert_nothing_mounted(&env);
}

#[test]
fn flr_end_of_an_unknown_session_says_so_at_once() {
    let env = crate::support::TestEnv::start();
    let run = env.run(&["flr", "end", "no-such-session"], b"");
    run.failure();
    assert!(
        run.stderr
            .contains("no File Level Restore session no-such-session")
            || run.stderr.contains("404"),
        "{run:#?}"
    );
    assert_eq!(
        unmount_requests(&env),
        1,
        "a permanent refusal is not asked again"
    );
}

/// How many unmounts (`DELETE /v1/flrs/{id}`) the simulator received.
fn unmount_requests(env: &TestEnv) -> u64 {
    env.sim
        .stats()
        .by_route
        .iter()
        .filter(|(route, _)| route.starts_with("DELETE"))
        .map(|(_, n)| *n)
        .sum()
}

/// A ZVM that answers HTTP 400 for an id it cannot parse (not 404): `flr end` asks once,
/// says the session does not exist, and does not spend its budget asking again.
#[test]
fn flr_end_of_a_bad_id_answered_with_400_is_not_asked_again() {
    let env = TestEnv::with(Setup {
        faults: ["DELETE /v1/flrs/*", "GET /v1/flrs/*"]
            .into_iter()
            .map(|route| Fault::Status {
                route: route.into(),
                status: 400,
                times: None,
            })
            .collect(),
        ..Setup::default()
    });
    let run = env.run(&["flr", "end", "not-a-session-id"], b"");
    run.failure();
    assert!(
        run.stderr
            .contains("no File Level Restore session not-a-session-id")
            && run.stderr.contains("HTTP 400")
            && run.stderr.contains("rewind flr list"),
        "{run:#?}"
    );
    assert!(!run.stderr.contains("asking again"), "{run:#?}");
    assert_eq!(
        unmount_requests(&env),
        1,
        "a permanent 400 is not asked again"
    );
}

#[test]
fn recover_says_mounted_only_after_the_mount_and_each_status_once() {
    let env = crate::support::TestEnv::start();
    env.run(
        &["guard", "--vm", "jp-ubuntu", "--change", "toolu_mnt"],
        b"",
    )
    .success();
    let out = env.path("out");
    std::fs::create_dir_all(&out).expect("out");
    let run = env.run(
        &[
            "recover",
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/app.conf",
            "--change",
            "toolu_mnt",
            "--out",
            out.to_str().expect("utf-8"),
            "--yes",
        ],
        b"",
    );
    run.success();
    let mounted = run.stdout.find("mounted:").expect("mounted");
    let requested = run.stdout.find("(mount requested)").expect("requested");
    assert!(mounted > requested, "{run:#?}");
    // Each status once, when it changes: no line repeating a status with a newer time.
    let statuses: Vec<&str> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("mounting: "))
        .map(|l| l.split(" (").next().unwrap_or(l))
        .collect();
    assert!(
        !statuses.is_empty(),
        "the mount's status is shown: {run:#?}"
    );
    let unique: std::collections::BTreeSet<&str> = statuses.iter().copied().collect();
    assert_eq!(statuses.len(), unique.len(), "each status once: {run:#?}");
}

#[test]
fn a_tagged_checkpoint_the_audit_trail_knows_but_zerto_no_longer_lists_aged_out() {
    let env = crate::support::TestEnv::start();
    let audit = env.path("state/audit.jsonl");
    std::fs::create_dir_all(audit.parent().expect("dir")).expect("dir");
    std::fs::write(
        &audit,
        r#"{"time":"2026-03-02T09:00:00.000Z","host":"claude-code","change":"toolu_gone","tool":"mcp__ssh__exec","class":"mutating","vms":["jp-ubuntu"],"checkpoints":[{"vpg":"jp-ubuntu-vpg","id":"999","time":"2026-03-02T09:00:00Z"}],"decision":"context","duration_ms":5}
"#,
    )
    .expect("audit");
    let out = env.path("out");
    std::fs::create_dir_all(&out).expect("out");
    let run = env.run(
        &[
            "recover",
            "--vm",
            "jp-ubuntu",
            "--path",
            "/etc/app.conf",
            "--change",
            "toolu_gone",
            "--out",
            out.to_str().expect("utf-8"),
            "--yes",
        ],
        b"",
    );
    run.failure();
    assert!(
        run.stderr.contains("aged out of the journal") && run.stderr.contains("999"),
        "{run:#?}"
    );
}

/// A session a crash left mounted is listed with its VM's name beside the vmIdentifier
/// Zerto gives: `flr list` is read by a person deciding which session to end.
#[test]
fn flr_list_names_each_session_vm() {
    let env = TestEnv::start();
    let found = env.run(&["checkpoints", "jp-ubuntu", "--limit", "1", "--json"], b"");
    found.success();
    let found: serde_json::Value = serde_json::from_str(&found.stdout).expect("JSON");
    let vm_id = found["vm"]["id"].as_str().expect("vm id").to_owned();
    let vpg_id = found["vpgs"][0]["id"].as_str().expect("vpg id").to_owned();
    let checkpoint = found["vpgs"][0]["checkpoints"][0]["id"]
        .as_str()
        .expect("checkpoint id")
        .to_owned();

    // Mount as a crashed `rewind recover` would have, and leave it.
    let text = std::fs::read_to_string(&env.config)
        .expect("config")
        .replace(
            "password_env = \"REWIND_ZVM_PASSWORD\"",
            &format!("password = {:?}", env.sim.password()),
        );
    let literal = env.path("literal.toml");
    std::fs::write(&literal, text).expect("write");
    let config = rewind::config::Config::load(&literal).expect("config");
    let zvm = config.require_zvm().expect("[zvm]");
    let client = rewind::zvm::Client::new(zvm, &env.path("client-cache")).expect("client");
    let deadline = rewind::deadline::Deadline::after(std::time::Duration::from_secs(30));
    let session = client
        .flr_mount(&vpg_id, &vm_id, &checkpoint, &deadline)
        .expect("mount");

    let list = env.run(&["flr", "list"], b"");
    list.success();
    assert!(
        list.stdout.contains(&session) && list.stdout.contains(&format!("vm jp-ubuntu ({vm_id})")),
        "{list:#?}"
    );
    let json = env.run(&["flr", "list", "--json"], b"");
    json.success();
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(json["sessions"][0]["id"], session.as_str(), "{json:#}");
    assert_eq!(json["sessions"][0]["vm"], vm_id.as_str(), "{json:#}");
    assert_eq!(json["sessions"][0]["vm_name"], "jp-ubuntu", "{json:#}");
}
