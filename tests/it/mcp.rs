//! `rewind mcp`: the real binary over stdio, spoken to in plain JSON-RPC lines as an MCP client
//! does, against the simulator over HTTPS.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rewind::sim::Fault;
use serde_json::{Value, json};

use crate::support::{TestEnv, eventually};

const BEFORE: &[u8] = b"listen = 0.0.0.0:8080\nmode = safe\n";
const BROKEN: &[u8] = b"listen = \nmode = ??? \n";
/// Longest a test waits for one answer (a guard on the simulator takes seconds).
const ANSWER_WAIT: Duration = Duration::from_secs(120);

/// A running `rewind mcp` and the lines it wrote.
pub(crate) struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Notifications received so far.
    notifications: Vec<Value>,
    /// Answers that came while another one was awaited.
    early: Vec<Value>,
    next_id: i64,
}

impl Mcp {
    /// Starts `rewind mcp [extra...]` and initializes it as client `mcp-test`.
    fn start(env: &TestEnv, extra: &[&str]) -> Mcp {
        let mut args = vec!["mcp"];
        args.extend_from_slice(extra);
        Self::start_command(env.command(&args))
    }

    /// Starts `command` (a `rewind mcp`) and initializes it as client `mcp-test`.
    pub(crate) fn start_command(mut command: std::process::Command) -> Mcp {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("rewind mcp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
            notifications: Vec::new(),
            early: Vec::new(),
            next_id: 1,
        };
        let init = mcp.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "mcp-test", "version": "1.0"}
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "rewind", "{init:#}");
        mcp.notify("notifications/initialized", json!({}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = serde_json::to_vec(message).expect("json");
        line.push(b'\n');
        stdin.write_all(&line).expect("write to rewind mcp");
        stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        message["params"] = params;
        self.send(&message);
    }

    /// Sends a request and returns its id, without waiting.
    fn start_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        message["params"] = params;
        self.send(&message);
        id
    }

    /// The next message from the server, or `None` after `wait`.
    fn next_message(&mut self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("rewind mcp wrote a line that is not JSON ({e}): {line}")
            })),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("rewind mcp closed stdout"),
        }
    }

    /// Waits for the answer to request `id`, keeping notifications.
    #[track_caller]
    fn answer(&mut self, id: i64) -> Value {
        if let Some(i) = self.early.iter().position(|m| m["id"] == json!(id)) {
            return self.early.remove(i);
        }
        let until = Instant::now() + ANSWER_WAIT;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let Some(message) = self.next_message(left) else {
                panic!("no answer to request {id}");
            };
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_none() {
                self.notifications.push(message);
            } else if message.get("method").is_none() {
                self.early.push(message);
            }
        }
    }

    #[track_caller]
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.answer(id)
    }

    /// `tools/call` and its result (`isError` and all).
    #[track_caller]
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let mut params = json!({"name": tool});
        params["arguments"] = arguments;
        let answer = self.request("tools/call", params);
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {tool} answered no result: {answer:#}"))
    }

    /// A successful call's structured content.
    #[track_caller]
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], false, "{tool} failed: {result:#}");
        result["structuredContent"].clone()
    }

    /// A failed call's text.
    #[track_caller]
    fn error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{tool} should fail: {result:#}");
        text(&result)
    }

    /// Keeps the server's notifications until one's progress message passes `wanted`; no
    /// answer may come meanwhile.
    #[track_caller]
    fn progress_until(&mut self, what: &str, wanted: impl Fn(&str) -> bool) {
        let until = Instant::now() + ANSWER_WAIT;
        while !self
            .notifications
            .iter()
            .any(|n| n["params"]["message"].as_str().is_some_and(&wanted))
        {
            assert!(
                Instant::now() < until,
                "no {what}: {:#?}",
                self.notifications
            );
            if let Some(message) = self.next_message(Duration::from_millis(200)) {
                assert!(message.get("id").is_none(), "answered early: {message:#}");
                self.notifications.push(message);
            }
        }
    }

    /// Closes stdin and waits for the server to exit.
    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < until, "rewind mcp did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn tools_list_names_schemas_and_annotations() {
    let env = TestEnv::start();
    let mut mcp = Mcp::start(&env, &[]);
    let tools = mcp.request("tools/list", json!({}));
    insta::assert_json_snapshot!("mcp_tools_list", tools["result"]["tools"]);
    assert_eq!(mcp.close(), 0, "a closed stdin ends the server cleanly");
}

#[test]
fn find_vm_shows_its_vpgs_health_and_cadence() {
    let env = TestEnv::start();
    let mut mcp = Mcp::start(&env, &[]);
    let found = mcp.ok("find_vm", json!({"vm": "jp-ubuntu"}));
    assert_eq!(found["vm"]["name"], "jp-ubuntu", "{found:#}");
    let vpg = &found["vpgs"][0];
    assert_eq!(vpg["name"], "jp-ubuntu-vpg", "{found:#}");
    assert!(vpg["health"].is_string(), "{found:#}");
    assert!(vpg["cadence_secs"].as_u64().is_some(), "{found:#}");
    let unknown = mcp.error("find_vm", json!({"vm": "no-such-vm"}));
    assert!(
        unknown.contains("\"no-such-vm\" is unknown to Zerto"),
        "the CLI's reason: {unknown}"
    );
}

/// One story: checkpoint, list, plan, the refusals, the restore, the audit trail.
#[test]
fn checkpoint_then_list_then_plan_then_restore_the_file() {
    let env = TestEnv::start();
    let path = "/etc/app.conf";
    env.sim
        .write_guest_file("jp-ubuntu", path, BEFORE)
        .expect("seed");
    let mut mcp = Mcp::start(&env, &[]);

    let (change, tag) = checkpoint_reporting_progress(&mut mcp);
    env.sim
        .write_guest_file("jp-ubuntu", path, BROKEN)
        .expect("break");

    let listed = mcp.ok(
        "list_checkpoints",
        json!({"vm": "jp-ubuntu", "change": change}),
    );
    let rows = listed["vpgs"][0]["checkpoints"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{listed:#}");
    assert_eq!(rows[0]["tag"], tag.as_str());

    let plan_id = plan_mounting_nothing(&env, &mut mcp, path, &change, &tag);
    let out = env.path("restored");
    std::fs::create_dir_all(&out).expect("out dir");
    let out = out.to_str().expect("utf-8");
    refusals_mount_nothing(&env, &mut mcp, &plan_id, out);
    restore_reporting_progress(&env, &mut mcp, &plan_id, &change, out);

    let again = mcp.error(
        "recover_file",
        json!({"plan_id": plan_id, "confirm": true, "confirm_id": change, "out": out}),
    );
    assert!(again.contains("no plan"), "a plan runs once: {again}");
    assert_eq!(mcp.close(), 0);
    audit_trail_has_every_call(&env, &change);
}

/// `checkpoint_vm` with a progress token: a confirmed checkpoint tagged for a change of this
/// client, its guard's phases reported under that token. The change id and the tag.
#[track_caller]
fn checkpoint_reporting_progress(mcp: &mut Mcp) -> (String, String) {
    let id = mcp.start_request(
        "tools/call",
        json!({
            "name": "checkpoint_vm",
            "arguments": {"vm": "jp-ubuntu", "reason": "edit app.conf"},
            "_meta": {"progressToken": "guard-1"}
        }),
    );
    let guarded = mcp.answer(id)["result"].clone();
    assert_eq!(guarded["isError"], false, "{guarded:#}");
    let guarded = &guarded["structuredContent"];
    assert_eq!(guarded["decision"], "confirmed", "{guarded:#}");
    let change = guarded["change"].as_str().expect("change id").to_owned();
    assert!(
        change.starts_with("mcp-") && change.ends_with("-2"),
        "{change}"
    );
    let tag = guarded["vpgs"][0]["tag"].as_str().expect("tag").to_owned();
    assert!(
        tag.starts_with(&format!(
            "ai:{change} | mcp/mcp-test | edit app.conf | vm=jp-ubuntu | "
        )),
        "{tag}"
    );
    assert!(
        mcp.notifications.iter().any(|n| {
            n["method"] == "notifications/progress"
                && n["params"]["progressToken"] == "guard-1"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("waiting for Zerto to list the tagged checkpoint"))
        }),
        "guard phases are reported: {:#?}",
        mcp.notifications
    );
    (change, tag)
}

/// `recover_plan` for `path` at the change's checkpoint, which mounts nothing. The plan id.
#[track_caller]
fn plan_mounting_nothing(
    env: &TestEnv,
    mcp: &mut Mcp,
    path: &str,
    change: &str,
    tag: &str,
) -> String {
    let plan = mcp.ok(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": path, "change": change}),
    );
    let plan_id = plan["plan_id"].as_str().expect("plan id").to_owned();
    assert_eq!(plan["checkpoint"]["tag"], tag, "{plan:#}");
    assert_eq!(plan["file_name"], "app.conf");
    let checkpoint_id = plan["checkpoint"]["id"].as_str().expect("id").to_owned();
    assert_eq!(plan["confirm_ids"], json!([checkpoint_id, change]));
    assert!(env.sim.flr_sessions().is_empty(), "a plan mounts nothing");
    plan_id
}

/// `recover_file` without a confirmation, or with none of the plan's ids, is refused and
/// mounts nothing.
#[track_caller]
fn refusals_mount_nothing(env: &TestEnv, mcp: &mut Mcp, plan_id: &str, out: &str) {
    let refused = mcp.error("recover_file", json!({"plan_id": plan_id, "out": out}));
    assert!(refused.contains("needs `confirm: true`"), "{refused}");
    let refused = mcp.error(
        "recover_file",
        json!({"plan_id": plan_id, "confirm": true, "out": out}),
    );
    assert!(refused.contains("`confirm_id` must be one of"), "{refused}");
    let refused = mcp.error(
        "recover_file",
        json!({"plan_id": plan_id, "confirm": true, "confirm_id": "999999", "out": out}),
    );
    assert!(refused.contains("`confirm_id` must be one of"), "{refused}");
    assert!(
        !env.sim.stats().by_route.contains_key("POST /v1/flrs"),
        "nothing was mounted before a valid confirmation"
    );
}

/// `recover_file` confirmed by the change id writes the file as it was, reports the mount
/// under the caller's progress token, and leaves no FLR session behind.
#[track_caller]
fn restore_reporting_progress(
    env: &TestEnv,
    mcp: &mut Mcp,
    plan_id: &str,
    change: &str,
    out: &str,
) {
    let id = mcp.start_request(
        "tools/call",
        json!({
            "name": "recover_file",
            "arguments": {"plan_id": plan_id, "confirm": true, "confirm_id": change, "out": out},
            "_meta": {"progressToken": 77}
        }),
    );
    let restored = mcp.answer(id)["result"].clone();
    assert_eq!(restored["isError"], false, "{restored:#}");
    let restored = &restored["structuredContent"];
    let written = env.path("restored/app.conf");
    assert_eq!(std::fs::read(&written).expect("written"), BEFORE);
    assert_eq!(restored["size"], BEFORE.len());
    assert_eq!(
        restored["sha256"],
        rewind::hex(&<sha2::Sha256 as sha2::Digest>::digest(BEFORE))
    );
    assert!(restored["unmount_task"].is_string(), "{restored:#}");
    assert!(
        mcp.notifications
            .iter()
            .any(|n| n["params"]["progressToken"] == 77
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("mounted"))),
        "the mount is reported: {:#?}",
        mcp.notifications
    );
    eventually("the FLR session to be gone", || {
        env.sim.flr_sessions().is_empty()
    });
}

/// Every call of the story is in the audit trail under the client's name, with what it
/// decided.
#[track_caller]
fn audit_trail_has_every_call(env: &TestEnv, change: &str) {
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audit trail");
    let records: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let tools: Vec<&str> = records.iter().filter_map(|r| r["tool"].as_str()).collect();
    assert_eq!(
        tools,
        [
            "checkpoint_vm",
            "list_checkpoints",
            "recover_plan",
            "recover_file",
            "recover_file",
            "recover_file",
            "recover_file",
            "recover_file"
        ]
    );
    assert!(records.iter().all(|r| r["host"] == "mcp/mcp-test"));
    assert_eq!(records[0]["decision"], "context");
    assert_eq!(records[0]["change"], change);
    assert_eq!(records[3]["decision"], "refused");
    assert_eq!(records[6]["decision"], "recovered");
}

#[test]
fn checkpoint_of_an_unknown_vm_asks_a_person_and_takes_none() {
    let env = TestEnv::start();
    let mut mcp = Mcp::start(&env, &[]);
    let result = mcp.call(
        "checkpoint_vm",
        json!({"vms": ["jp-ubuntu", "no-such-vm"], "reason": "patch both"}),
    );
    assert_eq!(result["isError"], true, "{result:#}");
    let out = &result["structuredContent"];
    assert_eq!(out["decision"], "ask", "{out:#}");
    let reason = out["reason"].as_str().expect("reason");
    assert!(
        reason.contains("reaches 2 VMs, and Zerto knows none by \"no-such-vm\"")
            && reason.contains("no checkpoint was taken on any of them"),
        "the hook's reason: {reason}"
    );
    assert!(env.sim.inserts().is_empty(), "no VM is checkpointed alone");
}

#[test]
fn checkpoint_of_two_vms_tags_every_vpg_once() {
    let env = TestEnv::start();
    let mut mcp = Mcp::start(&env, &[]);
    let out = mcp.ok(
        "checkpoint_vm",
        json!({"vms": ["jp-ubuntu", "db01"], "reason": "patch both"}),
    );
    assert_eq!(out["decision"], "confirmed", "{out:#}");
    let vpgs: Vec<&str> = out["vpgs"]
        .as_array()
        .expect("vpgs")
        .iter()
        .filter_map(|v| v["vpg"].as_str())
        .collect();
    let mut inserted: Vec<String> = env.sim.inserts().into_iter().map(|i| i.vpg_name).collect();
    inserted.sort();
    let mut expected: Vec<String> = vpgs.iter().map(|v| (*v).to_owned()).collect();
    expected.sort();
    assert_eq!(inserted, expected, "one insert per VPG");
    assert!(
        vpgs.contains(&"jp-ubuntu-vpg") && vpgs.len() >= 3,
        "{out:#}"
    );
    assert!(
        out["vpgs"]
            .as_array()
            .expect("vpgs")
            .iter()
            .all(|v| v["checkpoint"]["id"].is_string())
    );
}

/// `checkpoint_vm` on a VPG behind its RPO whose journal keeps 4 h (the hook's
/// `vpg-rpo-not-met` scene, on a frozen clock): the result says, in the words of the hook's
/// context, until about when each checkpoint can be restored and what the VPG's status means,
/// in the text the model reads and in each VPG's structured fields.
#[test]
fn checkpoint_vm_says_until_when_its_point_is_restorable_and_a_degraded_status() {
    let env = crate::hook::scene_env(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hook/vpg-rpo-not-met.json"),
    );
    let mut mcp = Mcp::start(&env, &[]);
    let result = mcp.call(
        "checkpoint_vm",
        json!({"vm": "app01", "reason": "restart the app"}),
    );
    let vpg = &result["structuredContent"]["vpgs"][0];
    assert_eq!(
        vpg["restorable"], "restorable until about 2026-03-02 13:00 UTC (journal history 4 h)",
        "{result:#}"
    );
    assert!(
        text(&result).contains(
            "restorable until about 2026-03-02 13:00 UTC (journal history 4 h). VPG status RpoNotMeetingSLA"
        ),
        "the hook's context, word for word: {result:#}"
    );
    insta::with_settings!({
        filters => vec![
            (r"mcp-[0-9a-f]{8}-\d+", "mcp-[id]"),
            (r"\| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "| [tag time]"),
        ],
    }, {
        insta::assert_json_snapshot!("checkpoint_vm_restorable", result);
    });
}

#[test]
fn bad_arguments_are_tool_errors_that_name_the_field() {
    let env = TestEnv::start();
    let mut mcp = Mcp::start(&env, &[]);
    let missing = mcp.error("find_vm", json!({}));
    assert!(missing.contains("missing field `vm`"), "{missing}");
    let unknown = mcp.error("find_vm", json!({"vm": "jp-ubuntu", "host": "x"}));
    assert!(unknown.contains("unknown field `host`"), "{unknown}");
    let both = mcp.error(
        "checkpoint_vm",
        json!({"vm": "jp-ubuntu", "vms": ["db01"], "reason": "x"}),
    );
    assert!(both.contains("`vm` or `vms`, not both"), "{both}");
    let no_point = mcp.error("recover_plan", json!({"vm": "jp-ubuntu", "path": "/etc/x"}));
    assert!(
        no_point.contains("say which point to restore from"),
        "{no_point}"
    );
    let limit = mcp.error("list_checkpoints", json!({"vm": "jp-ubuntu", "limit": 0}));
    assert!(limit.contains("limit must be between 1 and 500"), "{limit}");
    let wrong_type = mcp.error(
        "list_checkpoints",
        json!({"vm": "jp-ubuntu", "limit": "ten"}),
    );
    assert!(
        wrong_type.contains("`limit`") && wrong_type.contains("invalid type"),
        "{wrong_type}"
    );
    let nested = mcp.error("checkpoint_vm", json!({"vms": ["db01", 7], "reason": "x"}));
    assert!(nested.contains("`vms[1]`"), "{nested}");
    let unknown_plan = mcp.error(
        "recover_file",
        json!({"plan_id": "plan-0", "confirm": true, "confirm_id": "1"}),
    );
    assert!(
        unknown_plan.contains("no plan \"plan-0\""),
        "{unknown_plan}"
    );
    let no_tool = mcp.request("tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert!(
        no_tool["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no tool \"rm_rf\"")),
        "{no_tool:#}"
    );
    assert!(
        env.sim.stats().by_route.is_empty()
            || !env.sim.stats().by_route.contains_key("POST /v1/flrs"),
        "nothing mounted"
    );
}

#[test]
fn a_stale_plan_is_refused() {
    let env = TestEnv::start();
    let mut mcp = Mcp::start(&env, &["--plan-ttl", "1ms"]);
    let plan = mcp.ok(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": "/etc/hostname", "before": "2100-01-01T00:00:00Z"}),
    );
    let id = plan["confirm_ids"][0].clone();
    std::thread::sleep(Duration::from_millis(20));
    let stale = mcp.error(
        "recover_file",
        json!({"plan_id": plan["plan_id"], "confirm": true, "confirm_id": id}),
    );
    assert!(stale.contains("expired"), "{stale}");
    assert!(!env.sim.stats().by_route.contains_key("POST /v1/flrs"));
}

#[test]
fn a_cancelled_restore_ends_its_flr_session() {
    let env = TestEnv::start();
    env.sim.add_fault(Fault::MountHangs {
        vm: String::from("jp-ubuntu"),
    });
    let mut mcp = Mcp::start(&env, &[]);
    let plan = mcp.ok(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": "/etc/hostname", "before": "2100-01-01T00:00:00Z"}),
    );
    let out = env.path("out");
    std::fs::create_dir_all(&out).expect("out");
    let id = mcp.start_request(
        "tools/call",
        json!({
            "name": "recover_file",
            "arguments": {
                "plan_id": plan["plan_id"], "confirm": true,
                "confirm_id": plan["confirm_ids"][0], "out": out
            },
            "_meta": {"progressToken": "restore"}
        }),
    );
    // Wait until the mount is under way, as the client sees it.
    mcp.progress_until("mount progress", |m| m.starts_with("mounting"));
    let sessions = mcp.ok("flr_sessions", json!({"vm": "jp-ubuntu"}));
    assert_eq!(
        sessions["sessions"].as_array().map(Vec::len),
        Some(1),
        "the mount shows while it runs: {sessions:#}"
    );
    mcp.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the person changed their mind"}),
    );
    eventually("the cancelled restore's FLR session to be ended", || {
        env.sim.flr_sessions().is_empty()
    });
    assert!(!env.path("out/hostname").exists(), "nothing written");
    assert_eq!(mcp.close(), 0);
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audit");
    let last: Value = serde_json::from_str(audit.lines().last().expect("line")).expect("json");
    assert_eq!(last["tool"], "recover_file");
    assert!(
        last["reason"]
            .as_str()
            .is_some_and(|r| r.contains("interrupted")),
        "{last:#}"
    );
}

#[test]
fn flr_end_unmounts_a_session_another_call_left() {
    let env = TestEnv::start();
    env.sim.add_fault(Fault::MountHangs {
        vm: String::from("jp-ubuntu"),
    });
    let mut mcp = Mcp::start(&env, &[]);
    let plan = mcp.ok(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": "/etc/hostname", "before": "2100-01-01T00:00:00Z"}),
    );
    let out = env.path("out");
    std::fs::create_dir_all(&out).expect("out");
    let restore = mcp.start_request(
        "tools/call",
        json!({
            "name": "recover_file",
            "arguments": {
                "plan_id": plan["plan_id"], "confirm": true,
                "confirm_id": plan["confirm_ids"][0], "out": out
            }
        }),
    );
    eventually("the mount to start", || !env.sim.flr_sessions().is_empty());
    let listed = mcp.ok("flr_sessions", json!({}));
    let session = listed["sessions"][0]["id"].as_str().expect("id").to_owned();
    let ended = mcp.ok("flr_end", json!({"session": session}));
    assert_eq!(ended["session"], session.as_str());
    let answer = mcp.answer(restore);
    assert_eq!(answer["result"]["isError"], true, "{answer:#}");
    assert!(
        text(&answer["result"]).contains("disappeared while mounting"),
        "{answer:#}"
    );
    eventually("no session left", || env.sim.flr_sessions().is_empty());
    let gone = mcp.error("flr_end", json!({"session": session}));
    assert!(
        gone.contains("404") || gone.contains("not found") || gone.contains("no session"),
        "{gone}"
    );
}

#[test]
fn a_client_that_leaves_during_a_restore_leaves_no_flr_session() {
    let env = TestEnv::start();
    env.sim.add_fault(Fault::MountHangs {
        vm: String::from("jp-ubuntu"),
    });
    let mut mcp = Mcp::start(&env, &[]);
    let plan = mcp.ok(
        "recover_plan",
        json!({"vm": "jp-ubuntu", "path": "/etc/hostname", "before": "2100-01-01T00:00:00Z"}),
    );
    let out = env.path("out");
    std::fs::create_dir_all(&out).expect("out");
    mcp.start_request(
        "tools/call",
        json!({
            "name": "recover_file",
            "arguments": {
                "plan_id": plan["plan_id"], "confirm": true,
                "confirm_id": plan["confirm_ids"][0], "out": out
            }
        }),
    );
    eventually("the mount to start", || !env.sim.flr_sessions().is_empty());
    assert_eq!(mcp.close(), 0, "the server ends when its client leaves");
    assert!(
        env.sim.flr_sessions().is_empty(),
        "the server unmounted before it exited"
    );
}

#[test]
fn rewind_mcp_without_its_server_binary_says_where_it_looked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let alone = dir.path().join("rewind");
    std::fs::copy(env!("CARGO_BIN_EXE_rewind"), &alone).expect("copy rewind");
    let output = std::process::Command::new(&alone)
        .arg("mcp")
        .env_clear()
        .env("PATH", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("rewind runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty(), "stdout is the protocol's");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("runs the rewind-mcp binary")
            && stderr.contains(&dir.path().join("rewind-mcp").display().to_string()),
        "{stderr}"
    );
}

/// Starts `checkpoint_vm` on jp-ubuntu, whose tag Zerto never lists, under a budget far
/// longer than any test waits, and returns once the client has been told the guard is
/// waiting for the listing.
fn checkpoint_waiting_for_a_listing(env: &TestEnv, mcp: &mut Mcp) -> i64 {
    let id = mcp.start_request(
        "tools/call",
        json!({
            "name": "checkpoint_vm",
            "arguments": {"vm": "jp-ubuntu", "reason": "edit app.conf"},
            "_meta": {"progressToken": "guard"}
        }),
    );
    mcp.progress_until("listing progress", |m| {
        m.contains("waiting until Zerto lists the checkpoint")
    });
    assert_eq!(env.sim.inserts().len(), 1, "the insert was sent");
    id
}

fn never_listed() -> TestEnv {
    TestEnv::with(crate::support::Setup {
        faults: vec![Fault::TagNeverListed {
            vpg: String::from("jp-ubuntu-vpg"),
        }],
        hook: String::from("budget_secs = 3000"),
        ..crate::support::Setup::default()
    })
}

/// The audit trail's records.
fn audit_records(env: &TestEnv) -> Vec<Value> {
    std::fs::read_to_string(env.path("state/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

/// A cancelled `checkpoint_vm` stops waiting for the listing at once instead of at its
/// deadline; the checkpoint already inserted is not undone, and the audit trail records
/// `cancelled` naming its task. Each phase reached the client as a progress notification.
#[test]
fn a_cancelled_checkpoint_stops_waiting_and_says_the_insert_stays() {
    let env = never_listed();
    let mut mcp = Mcp::start(&env, &[]);
    let id = checkpoint_waiting_for_a_listing(&env, &mut mcp);
    let phases: Vec<&str> = mcp
        .notifications
        .iter()
        .filter_map(|n| n["params"]["message"].as_str())
        .filter(|m| m.starts_with("VPG jp-ubuntu-vpg: "))
        .collect();
    assert!(
        phases[0].contains("inserting a tagged checkpoint")
            && phases[1].contains("waiting for Zerto task")
            && phases[2].contains("expected at about"),
        "{phases:#?}"
    );
    mcp.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "the person changed their mind"}),
    );
    eventually("the cancelled guard's audit record", || {
        audit_records(&env)
            .iter()
            .any(|r| r["tool"] == "checkpoint_vm")
    });
    let records = audit_records(&env);
    let record = records
        .iter()
        .find(|r| r["tool"] == "checkpoint_vm")
        .expect("record");
    assert_eq!(record["decision"], "cancelled", "{record:#}");
    let task = &env.sim.inserts()[0].task_id;
    let reason = record["reason"].as_str().expect("reason");
    assert!(
        reason.contains(task.as_str()) && reason.contains("stays in Zerto"),
        "{reason}"
    );
    assert_eq!(env.sim.inserts().len(), 1, "nothing more was inserted");
    // The server goes on serving.
    let found = mcp.ok("find_vm", json!({"vm": "jp-ubuntu"}));
    assert_eq!(found["vm"]["name"], "jp-ubuntu", "{found:#}");
    assert_eq!(mcp.close(), 0);
}

/// A client that leaves while `checkpoint_vm` waits does not keep the server running until
/// the guard's deadline: it stops waiting, records `cancelled`, and exits.
#[test]
fn a_client_that_leaves_during_a_checkpoint_does_not_hold_the_server() {
    let env = never_listed();
    let mut mcp = Mcp::start(&env, &[]);
    checkpoint_waiting_for_a_listing(&env, &mut mcp);
    assert_eq!(mcp.close(), 0, "the server ends when its client leaves");
    let records = audit_records(&env);
    let record = records.last().expect("a record");
    assert_eq!(record["tool"], "checkpoint_vm", "{record:#}");
    assert_eq!(record["decision"], "cancelled", "{record:#}");
}

/// `restore_vm` for an operator's session (the ZVM's credentials here): a call without
/// `confirm` plans and starts nothing; a wrong typed id is refused; the checkpoint id typed
/// back restores the VM and commits, recorded in the trail.
#[test]
fn restore_vm_plans_first_and_restores_only_with_the_typed_id() {
    let env = TestEnv::start();
    let run = env.hook(&crate::support::hook_input(
        "mcp__ssh__exec",
        &json!({"host": "jp-ubuntu", "command": "sudo apt-get -y dist-upgrade"}),
        "toolu_mrv",
    ));
    assert!(run.reason().contains("tagged checkpoint"), "{run:#?}");
    let broken = env.sim.change_vm("jp-ubuntu").expect("the VM");
    let mut mcp = Mcp::start(&env, &[]);

    let planned = mcp.ok(
        "restore_vm",
        json!({"vm": "jp-ubuntu", "change": "toolu_mrv"}),
    );
    assert_eq!(planned["outcome"], "planned", "{planned:#}");
    let checkpoint = planned["document"]["checkpoint"]["id"]
        .as_str()
        .expect("the planned checkpoint")
        .to_owned();
    assert_eq!(
        planned["confirm_ids"],
        json!([checkpoint, "toolu_mrv"]),
        "{planned:#}"
    );
    assert_eq!(env.sim.whole_vm_operations(), (0, 0), "nothing started");
    assert_eq!(env.sim.vm_marker("jp-ubuntu"), Some(broken));

    let wrong = mcp.error(
        "restore_vm",
        json!({"vm": "jp-ubuntu", "checkpoint": checkpoint, "confirm": true, "confirm_id": "42"}),
    );
    assert!(
        wrong.contains("is not the checkpoint the call names"),
        "{wrong}"
    );

    let done = mcp.ok(
        "restore_vm",
        json!({"vm": "jp-ubuntu", "change": "toolu_mrv", "confirm": true, "confirm_id": checkpoint}),
    );
    assert_eq!(done["outcome"], "committed", "{done:#}");
    assert_eq!(
        env.sim.vm_marker("jp-ubuntu"),
        Some(0),
        "back before the change"
    );
    let trail = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("trail");
    assert!(
        trail.lines().any(|l| l.contains("\"vm-restored\"")),
        "{trail}"
    );
}
