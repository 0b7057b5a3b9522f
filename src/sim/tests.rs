//! End-to-end tests: a real simulator on a free port, driven over HTTPS with ureq, the way the
//! ZVM client will drive it. No timed assertions: time runs fast and waits are bounded polls.

use std::thread;
use std::time::Duration;

use serde_json::{Value, json};
use ureq::tls::{PemItem, RootCerts, TlsConfig};

use super::*;

const START: &str = "2026-03-02T09:00:00Z";

struct Lab {
    sim: Sim,
    agent: ureq::Agent,
    _dir: tempfile::TempDir,
}

fn start(scenario: Scenario, time_scale: f64, frozen_clock: bool) -> Lab {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = SimOptions {
        time_scale,
        frozen_clock,
        ..SimOptions::new(scenario, dir.path().join("certs"))
    };
    let sim = Sim::start(opts).expect("simulator starts");
    let agent = agent_for(&sim, Duration::from_secs(30));
    Lab {
        sim,
        agent,
        _dir: dir,
    }
}

fn lab(time_scale: f64) -> Lab {
    start(Scenario::lab(), time_scale, false)
}

fn agent_for(sim: &Sim, timeout: Duration) -> ureq::Agent {
    let pem = std::fs::read(sim.ca_cert_path()).expect("certificate written");
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(cert)) => Some(cert),
            _ => None,
        })
        .collect();
    assert_eq!(
        certs.len(),
        1,
        "one certificate in {}",
        sim.ca_cert_path().display()
    );
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::new_with_certs(&certs))
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(timeout))
        .build()
        .new_agent()
}

/// Status, headers we care about, and the body as JSON (`Null` when empty).
struct Answer {
    status: u16,
    session: Option<String>,
    body: Value,
}

fn answer(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let mut response = result.expect("the simulator answers");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("x-zerto-session")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.body_mut().read_to_string().expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).expect("JSON body")
    };
    Answer {
        status,
        session,
        body,
    }
}

impl Lab {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sim.url())
    }

    fn token(&self) -> String {
        let form = [
            ("grant_type", "password"),
            ("client_id", "zerto-client"),
            ("username", self.sim.username()),
            ("password", self.sim.password()),
        ];
        let a = answer(
            self.agent
                .post(self.url("/auth/realms/zerto/protocol/openid-connect/token"))
                .send_form(form),
        );
        assert_eq!(a.status, 200, "{}", a.body);
        a.body["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    fn get(&self, token: &str, path: &str) -> Answer {
        answer(
            self.agent
                .get(self.url(path))
                .header("Authorization", format!("Bearer {token}"))
                .call(),
        )
    }

    fn post(&self, token: &str, path: &str, body: &Value) -> Answer {
        answer(
            self.agent
                .post(self.url(path))
                .header("Authorization", format!("Bearer {token}"))
                .send_json(body),
        )
    }

    fn vpg_id(&self, token: &str, name: &str) -> String {
        let a = self.get(token, &format!("/v1/vpgs?name={name}"));
        a.body[0]["VpgIdentifier"]
            .as_str()
            .expect("VPG found")
            .to_owned()
    }

    fn insert(&self, token: &str, vpg: &str, tag: &str) -> String {
        let a = self.post(
            token,
            &format!("/v1/vpgs/{vpg}/checkpoints"),
            &json!({ "checkpointName": tag }),
        );
        assert_eq!(a.status, 200, "{}", a.body);
        a.body
            .as_str()
            .expect("a task id as a JSON string")
            .to_owned()
    }

    fn task_until_done(&self, token: &str, task: &str) -> Value {
        poll("the task to end", || {
            let a = self.get(token, &format!("/v1/tasks/{task}"));
            (a.body["Status"]["State"] != 1).then_some(a.body)
        })
    }
}

/// Polls up to ~20 s (bounded), failing with `what` when it never happens.
fn poll<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    for _ in 0..2000 {
        if let Some(value) = probe() {
            return value;
        }
        thread::sleep(Duration::from_millis(10));
    }
    panic!("gave up waiting for {what}");
}

#[test]
fn pinned_certificate_is_trusted_and_default_roots_refuse_it() {
    let lab = lab(1.0);
    let a = answer(
        lab.agent
            .get(lab.url("/auth/realms/zerto/.well-known/openid-configuration"))
            .call(),
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.body["issuer"], json!(lab.url("/auth/realms/zerto")));
    let default_roots = ureq::Agent::config_builder()
        .proxy(None)
        .build()
        .new_agent();
    let err = default_roots
        .get(lab.url("/v1/localsite"))
        .call()
        .expect_err("self-signed is not trusted by default");
    assert!(
        matches!(
            err,
            ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Io(_)
        ),
        "{err:?}"
    );
}

#[test]
fn a_tagged_checkpoint_is_inserted_completed_and_listed() {
    let lab = lab(100.0);
    let token = lab.token();
    let vms = lab.get(&token, "/v1/vms?vmname=JP-UBUNTU");
    assert_eq!(vms.status, 200);
    let rows = vms.body.as_array().expect("array");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0]["VmNetworkInformation"]["NetworkAdapters"][0]["IpAddresses"],
        json!(["10.0.0.11"])
    );
    let vpg = rows[0]["VpgIdentifier"]
        .as_str()
        .expect("VpgIdentifier")
        .to_owned();
    let task = lab.insert(
        &token,
        &vpg,
        "ai:test | exec | vm=jp-ubuntu | change=toolu_1",
    );
    let done = lab.task_until_done(&token, &task);
    assert_eq!(
        done["Status"],
        json!({"State": 6, "Progress": 100}),
        "{done}"
    );
    assert_eq!(done["Type"], "InsertTaggedCP");
    assert_eq!(done["CompleteReason"], "");
    assert_eq!(done["RelatedEntities"]["Vpgs"][0]["identifier"], json!(vpg));
    let listed = poll("the tag to be listed", || {
        let a = lab.get(&token, &format!("/v1/vpgs/{vpg}/checkpoints"));
        a.body
            .as_array()
            .expect("array")
            .iter()
            .find(|row| row["Tag"] == "ai:test | exec | vm=jp-ubuntu | change=toolu_1")
            .cloned()
    });
    assert!(
        listed["CheckpointIdentifier"]
            .as_str()
            .is_some_and(|id| id.parse::<u64>().is_ok()),
        "{listed}"
    );
    let record = &lab.sim.inserts()[0];
    assert_eq!(
        (record.vpg_name.as_str(), record.task_state.as_str()),
        ("jp-ubuntu-vpg", "Completed")
    );
    assert_eq!(
        record.checkpoint_id.as_ref(),
        listed["CheckpointIdentifier"]
            .as_str()
            .map(str::to_owned)
            .as_ref()
    );
    assert!(record.listed_at.is_some_and(|at| at >= record.received_at));
    let rows = lab.sim.checkpoints("jp-ubuntu-vpg");
    assert!(
        rows.iter()
            .any(|row| row.tag.as_deref() == Some(record.tag.as_str()))
    );
    let stats = lab.sim.stats();
    assert_eq!(stats.token_requests, 1);
    assert_eq!(
        stats.by_route.get("POST /v1/vpgs/{id}/checkpoints"),
        Some(&1)
    );
    assert!(
        stats
            .by_route
            .get("GET /v1/tasks/{id}")
            .is_some_and(|&n| n >= 1)
    );
}

#[test]
fn a_second_insert_while_the_first_runs_fails() {
    let text = format!(
        "start = \"{START}\"\nusername = \"u\"\npassword = \"p\"\n\
         [[vm]]\nname = \"a\"\nguest_os = \"linux\"\n\
         [[vpg]]\nname = \"slow\"\nprofile = \"vsphere\"\nvms = [\"a\"]\ntask_secs = 3600\n"
    );
    let lab = start(
        Scenario::from_toml(&text, "test").expect("valid"),
        1.0,
        false,
    );
    let token = lab.token();
    let vpg = lab.vpg_id(&token, "slow");
    let first = lab.insert(&token, &vpg, "one");
    let second = lab.insert(&token, &vpg, "two");
    let failed = lab.task_until_done(&token, &second);
    assert_eq!(failed["Status"]["State"], 4, "{failed}");
    let reason = failed["CompleteReason"].as_str().expect("reason");
    assert!(
        reason.contains("another checkpoint operation is in progress"),
        "{reason}"
    );
    assert_eq!(
        lab.get(&token, &format!("/v1/tasks/{first}")).body["Status"]["State"],
        1,
        "the first still runs"
    );
    let states: Vec<String> = lab
        .sim
        .inserts()
        .into_iter()
        .map(|i| i.task_state)
        .collect();
    assert_eq!(states, ["InProgress", "Failed"]);
}

#[test]
fn vm_lookups_answer_like_a_live_zvm() {
    let lab = lab(1.0);
    let token = lab.token();
    let hostname = lab.get(&token, "/v1/vms/jp-ubuntu");
    assert_eq!(hostname.status, 400, "a hostname is not a vmIdentifier");
    assert!(
        hostname.body["Message"]
            .as_str()
            .is_some_and(|m| m.contains("jp-ubuntu")),
        "{}",
        hostname.body
    );
    let unknown = lab.get(
        &token,
        "/v1/vms/d4a6a1d5-3c1e-4b8a-9f2d-7c3e616f0908.vm-999",
    );
    assert_eq!(unknown.status, 404);
    let webs = lab.get(&token, "/v1/vms?vmName=web").body;
    let ids: Vec<&Value> = webs
        .as_array()
        .expect("array")
        .iter()
        .map(|row| &row["VmIdentifier"])
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "two different VMs share the name");
    let db = lab.get(&token, "/v1/vms?VMNAME=db01").body;
    let db_rows = db.as_array().expect("array");
    assert_eq!(db_rows.len(), 2, "one row per VPG");
    let db_id = db_rows[0]["VmIdentifier"].as_str().expect("id");
    assert_eq!(
        lab.get(&token, &format!("/v1/vms/{db_id}")).status,
        400,
        "two VPGs and no vpgIdentifier"
    );
    let azure = db_rows[1]["VpgIdentifier"].as_str().expect("id");
    let one = lab.get(&token, &format!("/v1/vms/{db_id}?vpgidentifier={azure}"));
    assert_eq!(
        (one.status, &one.body["VpgName"]),
        (200, &json!("db01-azure"))
    );
    let by_ip_filter = lab.get(&token, "/v1/vms?vpgName=WIN2019-AWS").body;
    assert_eq!(by_ip_filter[0]["VmName"], "win2019-1");
}

#[test]
fn injected_status_and_dropped_connections() {
    let lab = lab(1.0);
    let token = lab.token();
    lab.sim.add_fault(Fault::Status {
        route: "GET /v1/vpgs".into(),
        status: 503,
        times: Some(1),
    });
    let failed = lab.get(&token, "/v1/vpgs");
    assert_eq!(
        (failed.status, failed.body["Message"].is_string()),
        (503, true)
    );
    assert_eq!(lab.get(&token, "/v1/vpgs").status, 200, "only once");
    lab.sim.add_fault(Fault::Drop {
        route: "GET /v1/localsite".into(),
    });
    let dropped = lab
        .agent
        .get(lab.url("/v1/localsite"))
        .header("Authorization", format!("Bearer {token}"))
        .call();
    assert!(dropped.is_err(), "no answer on a dropped connection");
    lab.sim.add_fault(Fault::Latency {
        route: "*".into(),
        millis: 5,
    });
    lab.sim.clear_faults();
    assert_eq!(lab.get(&token, "/v1/localsite").status, 200);
}

#[test]
fn a_hung_request_is_released_when_the_simulator_stops() {
    let lab = lab(1.0);
    let token = lab.token();
    lab.sim.add_fault(Fault::Hang {
        route: "GET /v1/vpgs".into(),
    });
    let url = lab.url("/v1/vpgs");
    let agent = agent_for(&lab.sim, Duration::from_secs(600));
    let client = thread::spawn(move || {
        agent
            .get(url)
            .header("Authorization", format!("Bearer {token}"))
            .call()
    });
    poll("the hung request to arrive", || {
        lab.sim.stats().by_route.get("GET /v1/vpgs").copied()
    });
    drop(lab);
    let result = client.join().expect("client thread");
    let err = result.expect_err("a hung request gets no answer");
    assert!(
        !matches!(err, ureq::Error::Timeout(_)),
        "released by the stop, not by a timeout: {err:?}"
    );
}

#[test]
fn expired_tokens_are_refused_and_counted() {
    let lab = lab(1.0);
    let token = lab.token();
    assert_eq!(lab.get(&token, "/v1/localsite").status, 200);
    lab.sim.expire_tokens();
    let refused = lab.get(&token, "/v1/localsite");
    assert_eq!(refused.status, 401);
    assert!(refused.body["Message"].is_string());
    assert_eq!(lab.get("not-a-token", "/v1/vpgs").status, 401);
    assert_eq!(lab.sim.stats().unauthorized, 2);
    let fresh = lab.token();
    assert_eq!(lab.get(&fresh, "/v1/localsite").status, 200);
}

#[test]
fn session_auth_imitates_a_windows_zvm() {
    let text = Scenario::lab_text().replace("auth = \"keycloak\"", "auth = \"session\"");
    let lab = start(
        Scenario::from_toml(&text, "test").expect("valid"),
        1.0,
        false,
    );
    let basic = format!(
        "Basic {}",
        super::http::base64_encode(b"admin:zerto-sim", false)
    );
    let windows = answer(
        lab.agent
            .post(lab.url("/v1/session/add"))
            .header("Authorization", &basic)
            .send_empty(),
    );
    assert_eq!(
        windows.status, 401,
        "no method is the Windows account, and the lab's account is vCenter's"
    );
    let login = answer(
        lab.agent
            .post(lab.url("/v1/session/add"))
            .header("Authorization", &basic)
            .send_json(serde_json::json!({"AuthenticationMethod": "1"})),
    );
    assert_eq!((login.status, &login.body), (200, &Value::Null));
    let session = login.session.expect("x-zerto-session header");
    let with = answer(
        lab.agent
            .get(lab.url("/v1/vpgs"))
            .header("x-zerto-session", &session)
            .call(),
    );
    assert_eq!(with.status, 200);
    assert_eq!(
        answer(lab.agent.get(lab.url("/v1/vpgs")).call()).status,
        401
    );
    let keycloak = answer(
        lab.agent
            .post(lab.url("/auth/realms/zerto/protocol/openid-connect/token"))
            .send_form([("grant_type", "password")]),
    );
    assert_eq!(keycloak.status, 404, "no Keycloak on a 9.x ZVM");
    let logout = answer(
        lab.agent
            .delete(lab.url("/v1/session"))
            .header("x-zerto-session", &session)
            .call(),
    );
    assert_eq!(logout.status, 200);
    assert_eq!(
        answer(
            lab.agent
                .get(lab.url("/v1/vpgs"))
                .header("x-zerto-session", &session)
                .call()
        )
        .status,
        401
    );
}

#[test]
fn the_admin_api_drives_faults_tokens_and_reports() {
    let lab = lab(100.0);
    let token = lab.token();
    let fault = json!({"kind": "insert-fails", "vpg": "jp-ubuntu-vpg", "state": "stopped", "reason": "journal full"});
    let added = answer(lab.agent.post(lab.url("/_sim/faults")).send_json(&fault));
    assert_eq!(added.status, 200, "{}", added.body);
    let bad = answer(
        lab.agent
            .post(lab.url("/_sim/faults"))
            .send_json(json!({"kind": "hang"})),
    );
    assert_eq!(bad.status, 400);
    let unknown = answer(
        lab.agent
            .post(lab.url("/_sim/faults"))
            .send_json(json!({"kind": "tag-never-listed", "vpg": "nope"})),
    );
    assert_eq!(unknown.status, 400);
    let vpg = lab.vpg_id(&token, "jp-ubuntu-vpg");
    let task = lab.insert(&token, &vpg, "doomed");
    let stopped = lab.task_until_done(&token, &task);
    assert_eq!(
        (
            stopped["Status"]["State"].clone(),
            stopped["CompleteReason"].clone()
        ),
        (json!(5), json!("journal full"))
    );
    let inserts = answer(lab.agent.get(lab.url("/_sim/inserts")).call()).body;
    assert_eq!(
        (inserts[0]["tag"].clone(), inserts[0]["task_state"].clone()),
        (json!("doomed"), json!("Stopped"))
    );
    let cleared = answer(lab.agent.delete(lab.url("/_sim/faults")).call());
    assert_eq!(cleared.body, json!({"cleared": 1}));
    assert_eq!(
        answer(lab.agent.post(lab.url("/_sim/expire-tokens")).send_empty()).status,
        200
    );
    assert_eq!(lab.get(&token, "/v1/vpgs").status, 401);
    let stats = answer(lab.agent.get(lab.url("/_sim/stats")).call()).body;
    assert_eq!(stats["unauthorized"], 1);
    assert!(
        stats["by_route"].get("GET /_sim/stats").is_none(),
        "admin calls are not counted: {stats}"
    );
}

#[test]
fn a_frozen_clock_gives_the_same_answers_every_run() {
    let scenario = || Scenario::lab().with_start(crate::time::parse_utc(START).expect("valid"));
    let run = || {
        let lab = start(scenario(), 1000.0, true);
        let token = lab.token();
        let vpg = lab.vpg_id(&token, "win2019-aws");
        let task = lab.insert(&token, &vpg, "frozen");
        let done = lab.task_until_done(&token, &task);
        let tagged = poll("the AWS tag to be listed", || {
            let rows = lab.get(&token, &format!("/v1/vpgs/{vpg}/checkpoints")).body;
            rows.as_array()
                .expect("array")
                .iter()
                .any(|row| row["Tag"] == "frozen")
                .then_some(rows)
        });
        let vm = lab.get(&token, "/v1/vms?vmName=win2019-1").body;
        let vpg_row = lab.get(&token, &format!("/v1/vpgs/{vpg}")).body;
        let port = lab.sim.url();
        let redact = |v: Value| {
            serde_json::from_str::<Value>(&v.to_string().replace(&port, "https://127.0.0.1:[port]"))
                .expect("json")
        };
        json!({ "task": redact(done), "checkpoints": tagged, "vm": redact(vm), "vpg": redact(vpg_row) })
    };
    let first = run();
    assert_eq!(first, run(), "same scenario, same ids and times");
    insta::with_settings!({ sort_maps => true }, {
        insta::assert_json_snapshot!("frozen_lab_wire_shapes", first);
    });
}

/// The VM row of a VM in one VPG: (vmIdentifier, vpgIdentifier).
fn vm_and_vpg(lab: &Lab, token: &str, vm: &str) -> (String, String) {
    let rows = lab.get(token, &format!("/v1/vms?vmName={vm}")).body;
    let id = |key: &str| rows[0][key].as_str().expect("identifier").to_owned();
    (id("VmIdentifier"), id("VpgIdentifier"))
}

fn mount(lab: &Lab, token: &str, vm: &str, vpg: &str, checkpoint: &str) -> String {
    let body = json!({"jflr": {"vpgIdentifier": vpg, "vmIdentifier": vm, "checkpointIdentifier": checkpoint,
        "initialDownloadPath": ""}, "bflr": null});
    let a = lab.post(token, "/v1/flrs", &body);
    assert_eq!(a.status, 200, "{}", a.body);
    a.body
        .as_str()
        .expect("a session id as a JSON string")
        .to_owned()
}

fn flr_status(lab: &Lab, token: &str, session: &str) -> Value {
    let a = lab.get(token, &format!("/v1/flrs/{session}"));
    assert_eq!(a.status, 200, "{}", a.body);
    a.body[0]["FlrSessionStatus"].clone()
}

fn mounted(lab: &Lab, token: &str, session: &str) {
    poll("the mount", || {
        (flr_status(lab, token, session) == "MountCompletedSuccessfully").then_some(())
    });
}

fn download(lab: &Lab, token: &str, session: &str, path: &str) -> Vec<u8> {
    let a = lab.post(
        token,
        &format!("/v1/flrs/{session}/download"),
        &json!({ "pathList": [path] }),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let url = a.body.as_str().expect("a download URL as a JSON string");
    assert!(url.starts_with(&lab.sim.url()), "{url}");
    let mut response = lab.agent.get(url).call().expect("download answers");
    assert_eq!(response.status(), 200);
    response.body_mut().read_to_vec().expect("bytes")
}

fn latest_checkpoint(lab: &Lab, token: &str, vpg: &str) -> String {
    let stats = lab
        .get(token, &format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .body;
    stats["Latest"]["CheckpointIdentifier"]
        .as_str()
        .expect("a checkpoint")
        .to_owned()
}

#[test]
fn file_level_restore_brings_back_the_file_as_it_was_at_the_tag() {
    let lab = lab(100.0);
    let token = lab.token();
    let (vm, vpg) = vm_and_vpg(&lab, &token, "jp-ubuntu");
    let original = lab
        .sim
        .guest_file("jp-ubuntu", "/etc/app.conf")
        .expect("seeded by the lab");
    let task = lab.insert(&token, &vpg, "before the change");
    assert_eq!(lab.task_until_done(&token, &task)["Status"]["State"], 6);
    let tagged = poll("the tag", || {
        let rows = lab.get(&token, &format!("/v1/vpgs/{vpg}/checkpoints")).body;
        rows.as_array()?
            .iter()
            .find(|r| r["Tag"] == "before the change")
            .map(|r| r["CheckpointIdentifier"].clone())
    });
    lab.sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", b"mode = broken\n")
        .expect("the agent breaks it");
    let via_admin = json!({"vm": "jp-ubuntu", "path": "/etc/motd", "content_base64": "aGVsbG8K"});
    assert_eq!(
        answer(
            lab.agent
                .post(lab.url("/_sim/guest-files"))
                .send_json(&via_admin)
        )
        .status,
        200
    );
    let session = mount(&lab, &token, &vm, &vpg, tagged.as_str().expect("id"));
    assert_eq!(lab.sim.flr_sessions()[0].vm, "jp-ubuntu");
    mounted(&lab, &token, &session);
    let root = lab
        .post(
            &token,
            &format!("/v1/flrs/{session}/browse"),
            &json!({"path": ""}),
        )
        .body;
    assert_eq!(root["PathItems"][0]["Path"], "Volume1-Ext4");
    assert_eq!(root["PathItems"][0]["Type"], "Partition");
    let etc = lab
        .post(
            &token,
            &format!("/v1/flrs/{session}/browse"),
            &json!({"Path": "Volume1-Ext4/etc"}),
        )
        .body;
    let items = etc["PathItems"].as_array().expect("items");
    let conf = items
        .iter()
        .find(|i| i["Path"] == "Volume1-Ext4/etc/app.conf")
        .expect("app.conf listed");
    assert_eq!(
        (conf["Type"].clone(), conf["SizeInBytes"].clone()),
        (json!("File"), json!(original.len()))
    );
    assert!(
        items.iter().all(|i| i["Path"] != "Volume1-Ext4/etc/motd"),
        "written after the checkpoint"
    );
    assert_eq!(
        download(&lab, &token, &session, "Volume1-Ext4/etc/app.conf"),
        original,
        "byte-identical"
    );
    assert_eq!(
        lab.sim.guest_file("jp-ubuntu", "/etc/app.conf").as_deref(),
        Some(&b"mode = broken\n"[..])
    );
    let unmount = lab
        .agent
        .delete(lab.url(&format!("/v1/flrs/{session}")))
        .header("Authorization", format!("Bearer {token}"))
        .call();
    let unmount_task = answer(unmount).body.as_str().expect("a task id").to_owned();
    assert_eq!(
        lab.task_until_done(&token, &unmount_task)["Type"],
        "FlrJournalUnmount"
    );
    poll("the session to disappear", || {
        lab.sim.flr_sessions().is_empty().then_some(())
    });
    assert_eq!(lab.get(&token, "/v1/flrs").body, json!([]));
}

#[test]
fn windows_drive_c_is_the_first_ntfs_volume() {
    let lab = lab(100.0);
    let token = lab.token();
    let (vm, vpg) = vm_and_vpg(&lab, &token, "win2019-1");
    let session = mount(
        &lab,
        &token,
        &vm,
        &vpg,
        &latest_checkpoint(&lab, &token, &vpg),
    );
    mounted(&lab, &token, &session);
    let root = lab
        .post(
            &token,
            &format!("/v1/flrs/{session}/browse"),
            &json!({"path": ""}),
        )
        .body;
    assert_eq!(root["PathItems"][0]["Path"], "Volume1-NTFS");
    let bytes = download(&lab, &token, &session, "Volume1-NTFS/Users/admin/notes.txt");
    assert_eq!(bytes, b"Quarterly report due Friday.\r\n");
    let backslashes = lab.post(
        &token,
        &format!("/v1/flrs/{session}/download"),
        &json!({"pathList": [r"Volume1-NTFS\Users"]}),
    );
    assert_eq!(backslashes.status, 400);
    let listed = lab.get(&token, &format!("/v1/flrs?vmIdentifier={vm}")).body;
    assert_eq!(listed[0]["FlrSessionIdentifier"], json!(session));
}

#[test]
fn flr_faults_fail_hang_and_refuse_downloads() {
    let lab = lab(100.0);
    let token = lab.token();
    let (jp, jp_vpg) = vm_and_vpg(&lab, &token, "jp-ubuntu");
    let (win, win_vpg) = vm_and_vpg(&lab, &token, "win2019-1");
    lab.sim.add_fault(Fault::MountFails {
        vm: "jp-ubuntu".into(),
    });
    let failing = mount(
        &lab,
        &token,
        &jp,
        &jp_vpg,
        &latest_checkpoint(&lab, &token, &jp_vpg),
    );
    poll("the mount to fail", || {
        (flr_status(&lab, &token, &failing) == "MountFailed").then_some(())
    });
    lab.sim.clear_faults();
    lab.sim.add_fault(Fault::MountHangs {
        vm: "win2019-1".into(),
    });
    let hanging = mount(
        &lab,
        &token,
        &win,
        &win_vpg,
        &latest_checkpoint(&lab, &token, &win_vpg),
    );
    let normal = mount(
        &lab,
        &token,
        &jp,
        &jp_vpg,
        &latest_checkpoint(&lab, &token, &jp_vpg),
    );
    mounted(&lab, &token, &normal);
    assert_eq!(
        flr_status(&lab, &token, &hanging),
        "MountInProgress",
        "a mount started earlier still has not finished"
    );
    lab.sim.add_fault(Fault::DownloadFails {
        vm: "jp-ubuntu".into(),
    });
    let refused = lab.post(
        &token,
        &format!("/v1/flrs/{normal}/download"),
        &json!({"pathList": ["Volume1-Ext4/etc/hostname"]}),
    );
    assert_eq!(refused.status, 500);
    assert!(refused.body["Message"].is_string());
}

#[test]
fn with_a_frozen_clock_later_writes_still_follow_earlier_checkpoints() {
    let scenario = Scenario::lab().with_start(crate::time::parse_utc(START).expect("valid"));
    let lab = start(scenario, 1000.0, true);
    let token = lab.token();
    let (vm, vpg) = vm_and_vpg(&lab, &token, "jp-ubuntu");
    let tag_and_wait = |tag: &str| {
        let task = lab.insert(&token, &vpg, tag);
        assert_eq!(lab.task_until_done(&token, &task)["Status"]["State"], 6);
        poll("the tag", || {
            let rows = lab.get(&token, &format!("/v1/vpgs/{vpg}/checkpoints")).body;
            rows.as_array()?
                .iter()
                .find(|r| r["Tag"] == tag)
                .map(|r| r["CheckpointIdentifier"].as_str().map(str::to_owned))?
        })
    };
    let before = tag_and_wait("before");
    lab.sim
        .write_guest_file("jp-ubuntu", "/etc/hostname", b"renamed\n")
        .expect("write");
    let after = tag_and_wait("after");
    let times: Vec<String> = lab
        .sim
        .checkpoints("jp-ubuntu-vpg")
        .into_iter()
        .filter(|c| c.tag.is_some())
        .map(|c| c.time)
        .collect();
    assert_eq!(
        times,
        ["2026-03-02T09:00:00.000Z", "2026-03-02T09:00:00.000Z"],
        "the clock stands still"
    );
    let old = mount(&lab, &token, &vm, &vpg, &before);
    let new = mount(&lab, &token, &vm, &vpg, &after);
    mounted(&lab, &token, &old);
    mounted(&lab, &token, &new);
    assert_eq!(
        download(&lab, &token, &old, "Volume1-Ext4/etc/hostname"),
        b"jp-ubuntu\n"
    );
    assert_eq!(
        download(&lab, &token, &new, "Volume1-Ext4/etc/hostname"),
        b"renamed\n"
    );
}

#[test]
fn the_banners_config_block_pastes_as_a_valid_config() {
    let lab = lab(1.0);
    let text = super::banner(&lab.sim, 1.0, "");
    let block = text
        .split_once("config.toml):\n\n")
        .and_then(|(_, rest)| rest.split_once("\nThe password"))
        .map(|(block, _)| block)
        .expect("a config block");
    assert!(!block.contains("export"), "{block}");
    crate::config::Config::parse(block, std::path::Path::new("pasted.toml")).expect("valid");
    let export = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("export "))
        .expect("an export line");
    assert_eq!(
        shlex::split(export),
        Some(vec![format!("REWIND_ZVM_PASSWORD={}", lab.sim.password())]),
        "{text}"
    );
}

#[test]
fn whole_vm_recovery_over_https_moves_the_marker_and_shows_the_test() {
    let lab = lab(100.0);
    let token = lab.token();
    let vpg = lab.vpg_id(&token, "jp-ubuntu-vpg");
    let rows = lab.get(&token, &format!("/v1/vpgs/{vpg}/checkpoints")).body;
    let checkpoint = rows[rows.as_array().expect("rows").len() - 1]["CheckpointIdentifier"].clone();
    let changed = answer(
        lab.agent
            .post(lab.url("/_sim/vm-change"))
            .send_json(json!({"vm": "jp-ubuntu"})),
    );
    assert_eq!(changed.body["marker"], 1, "{}", changed.body);
    let vm = lab.get(&token, "/v1/vms?vmName=jp-ubuntu").body[0]["VmIdentifier"].clone();
    let vm = vm.as_str().expect("vm id");
    let started = lab.post(
        &token,
        &format!("/v1/vms/{vm}/Restore"),
        &json!({"vpgIdentifier": vpg, "checkpointIdentifier": checkpoint, "commitPolicy": 2}),
    );
    assert_eq!(started.status, 200, "{}", started.body);
    let task = started.body.as_str().expect("task id").to_owned();
    assert_eq!(lab.task_until_done(&token, &task)["Status"]["State"], 6);
    let view = answer(lab.agent.get(lab.url("/_sim/whole-vm")).call()).body;
    assert_eq!(view["restores"][0]["state"], "ReadyForCommit", "{view}");
    assert_eq!(view["markers"]["jp-ubuntu"], 0, "{view}");
    let commit = answer(
        lab.agent
            .post(lab.url(&format!("/v1/vms/{vm}/RestoreCommit")))
            .header("Authorization", format!("Bearer {token}"))
            .send_empty(),
    );
    assert_eq!(
        commit.status, 200,
        "no body is one of the accepted forms: {}",
        commit.body
    );
    let test = lab.post(&token, &format!("/v1/vpgs/{vpg}/FailoverTest"), &json!({}));
    assert_eq!(test.status, 200, "{}", test.body);
    let running = lab.get(&token, &format!("/v1/vpgs/{vpg}")).body;
    assert!(
        running["ActiveProcessesApi"]["RunningFailOverTestApi"]["Stage"].is_string(),
        "{running}"
    );
    let types = lab.get(&token, "/v1/tasks/types").body;
    assert!(
        types
            .as_array()
            .is_some_and(|t| t.contains(&json!("FailOverTest"))),
        "{types}"
    );
}
