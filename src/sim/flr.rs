//! File Level Restore: mount a VM's journal at a checkpoint, browse its volumes, download a
//! file as it was at that checkpoint, unmount.
//!
//! A session goes `MountInProgress` → `MountCompletedSuccessfully` after the scenario's
//! `mount_secs` (or `MountFailed`, or stays in progress, under the `mount-fails` and
//! `mount-hangs` faults); `DELETE` makes it `UnmountInProgress` for `unmount_secs`, then it is
//! gone. Mounts and unmounts run as `FlrJournalMount` / `FlrJournalUnmount` tasks. A download
//! answers with a URL on the simulator (`/_sim/flr-download/<token>`) that serves the bytes.
//! Only journal FLR (`jflr`) is simulated, and only for VPGs recovered at this site.

use serde_json::{Value, json};

use super::faults::{Fault, UrlForm};
use super::guest::Entry;
use super::http::{Request, Response};
use super::ids;
use super::routes::{Route, field};
use super::state::{COMPLETED, FAILED, TaskKind, World};
use super::wire::link;
use crate::time::format_utc;

/// How a mount ends, decided when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mount {
    Succeeds,
    Fails,
    Hangs,
}

/// One FLR session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) vm: usize,
    vpg: usize,
    checkpoint_id: String,
    /// The checkpoint's position among guest-file writes.
    checkpoint_seq: u64,
    initial_path: String,
    requested: f64,
    mount: Mount,
    mount_task: usize,
    unmount: Option<(f64, usize)>,
    downloads: Vec<Download>,
}

#[derive(Debug, Clone)]
struct Download {
    token: String,
    file_name: String,
    bytes: Vec<u8>,
}

/// Every FLR session of the simulator.
#[derive(Debug, Default)]
pub(crate) struct Flr {
    sessions: Vec<Session>,
    next: u64,
}

impl Flr {
    /// The sessions that exist at `now` (unmounted ones are gone).
    pub(crate) fn visible<'a>(
        &'a self,
        world: &'a World,
        now: f64,
    ) -> impl Iterator<Item = &'a Session> {
        self.sessions
            .iter()
            .filter(move |s| status(world, s, now).is_some())
    }

    fn find(&self, world: &World, id: &str, now: f64) -> Option<usize> {
        self.sessions
            .iter()
            .position(|s| s.id.eq_ignore_ascii_case(id) && status(world, s, now).is_some())
    }

    /// The bytes behind a download token, with the file name, while its session exists.
    pub(crate) fn download(
        &self,
        world: &World,
        token: &str,
        now: f64,
    ) -> Option<(String, Vec<u8>)> {
        self.visible(world, now)
            .flat_map(|s| &s.downloads)
            .find(|d| d.token == token)
            .map(|d| (d.file_name.clone(), d.bytes.clone()))
    }
}

/// A session's `FlrSessionStatus` at `now`; `None` once it has been unmounted.
pub(crate) fn status(world: &World, session: &Session, now: f64) -> Option<&'static str> {
    if let Some((requested, _)) = session.unmount {
        return (now < requested + world.scenario.unmount_secs).then_some("UnmountInProgress");
    }
    let mounted = now >= session.requested + world.scenario.mount_secs;
    Some(match session.mount {
        Mount::Succeeds if mounted => "MountCompletedSuccessfully",
        Mount::Fails if mounted => "MountFailed",
        _ => "MountInProgress",
    })
}

/// Answers the `/v1/flrs` routes.
pub(crate) fn handle(
    world: &mut World,
    base: &str,
    route: Route,
    id: &str,
    request: &Request,
    now: f64,
) -> Response {
    if route != Route::Flrs && route != Route::FlrMount && !ids::is_site_scoped(id) {
        return Response::message(
            400,
            &format!("The FLR session identifier '{id}' is not valid."),
        );
    }
    match route {
        Route::Flrs => {
            let vm = request.query("vmidentifier");
            let rows: Vec<Value> = world
                .flr
                .visible(world, now)
                .filter(|s| {
                    vm.is_none_or(|vm| world.scenario.vms[s.vm].id.eq_ignore_ascii_case(vm))
                })
                .map(|s| session_json(world, base, s, now))
                .collect();
            Response::json(200, &Value::Array(rows))
        }
        Route::FlrMount => mount(world, request, now),
        _ => {
            let Some(index) = world.flr.find(world, id, now) else {
                return Response::message(404, &format!("FLR session '{id}' was not found."));
            };
            match route {
                Route::Flr => Response::json(
                    200,
                    &json!([session_json(world, base, &world.flr.sessions[index], now)]),
                ),
                Route::FlrUnmount => unmount(world, index, now),
                Route::FlrBrowse => browse(world, index, request, now),
                _ => download(world, base, index, request, now),
            }
        }
    }
}

fn session_json(world: &World, base: &str, session: &Session, now: f64) -> Value {
    let running = [
        Some(session.mount_task),
        session.unmount.map(|(_, task)| task),
    ]
    .into_iter()
    .flatten()
    .filter(|&task| world.tasks[task].ended(now).is_none())
    .count();
    json!({
        "FlrSessionIdentifier": session.id,
        "FlrSessionStatus": status(world, session, now),
        "FlrSessionType": "jflr",
        "VmIdentifier": world.scenario.vms[session.vm].id,
        "VmVolumeIdentifier": null,
        "VpgIdentifier": world.scenario.vpgs[session.vpg].id,
        "CheckpointIdentifier": session.checkpoint_id,
        "MountTime": format_utc(world.clock.time_at(session.requested)),
        "SelectedPath": session.initial_path,
        "NumberOfRelatedRunningTasks": running,
        "RepositoryIdentifier": null,
        "RetentionSetIdentifier": null,
        "SiteIdentifier": world.scenario.site_id,
        "Link": link(base, &format!("/v1/flrs/{}", session.id), &session.id, "FlrSessionInformationApi"),
    })
}

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn mount(world: &mut World, request: &Request, now: f64) -> Response {
    let body = match request.json() {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let Some(jflr) = field(&body, "jflr").filter(|v| v.is_object()) else {
        return Response::message(
            400,
            "jflr is required: only journal File Level Restore is simulated (bflr is not).",
        );
    };
    let (Some(vpg_id), Some(vm_id), Some(checkpoint_id)) = (
        text(field(jflr, "vpgIdentifier")),
        text(field(jflr, "vmIdentifier")),
        text(field(jflr, "checkpointIdentifier")),
    ) else {
        return Response::message(
            400,
            "jflr needs vpgIdentifier, vmIdentifier and checkpointIdentifier.",
        );
    };
    let Some(vpg) = world.vpg_by_id(&vpg_id) else {
        return Response::message(400, &format!("VPG '{vpg_id}' was not found."));
    };
    let Some(vm) = world
        .vm_by_id(&vm_id)
        .filter(|&vm| world.scenario.vpgs[vpg].vms.contains(&vm))
    else {
        return Response::message(
            400,
            &format!("VM '{vm_id}' is not protected by VPG '{vpg_id}'."),
        );
    };
    let spec = &world.scenario.vpgs[vpg];
    if spec.recovery_site != world.scenario.site_name {
        return Response::message(
            400,
            &format!(
                "File Level Restore for VPG '{}' runs at its recovery site '{}', not at '{}'.",
                spec.name, spec.recovery_site, world.scenario.site_name
            ),
        );
    }
    let Some(checkpoint) = world.listed_checkpoint(vpg, &checkpoint_id, now) else {
        return Response::message(
            400,
            &format!("Checkpoint '{checkpoint_id}' was not found in VPG '{vpg_id}'."),
        );
    };
    let checkpoint_seq = checkpoint.seq;
    let (vm_name, vm_id) = (
        world.scenario.vms[vm].name.clone(),
        world.scenario.vms[vm].id.clone(),
    );
    let is_vm = |r: &str| r.eq_ignore_ascii_case(&vm_name) || r.eq_ignore_ascii_case(&vm_id);
    let outcome = if world.faults.mount_hangs(is_vm) {
        Mount::Hangs
    } else if world.faults.mount_fails(is_vm) {
        Mount::Fails
    } else {
        Mount::Succeeds
    };
    let ends = (outcome != Mount::Hangs).then_some(now + world.scenario.mount_secs);
    let result = if outcome == Mount::Fails {
        (
            FAILED,
            "Failed to mount the journal of the VM (simulated).".to_owned(),
        )
    } else {
        (COMPLETED, String::new())
    };
    let task = world.start_task(TaskKind::FlrJournalMount, now, ends, result);
    world.tasks[task].vpg = Some(vpg);
    world.flr.next += 1;
    let id = format!(
        "{}.{}",
        ids::guid("flr", &world.flr.next.to_string()),
        world.scenario.site_id
    );
    world.tasks[task].flr_session = Some(id.clone());
    world.flr.sessions.push(Session {
        id: id.clone(),
        vm,
        vpg,
        checkpoint_id: checkpoint_id.trim().to_owned(),
        checkpoint_seq,
        initial_path: text(field(jflr, "initialDownloadPath")).unwrap_or_default(),
        requested: now,
        mount: outcome,
        mount_task: task,
        unmount: None,
        downloads: Vec::new(),
    });
    Response::json(200, &json!(id))
}

fn unmount(world: &mut World, index: usize, now: f64) -> Response {
    if world.flr.sessions[index].unmount.is_some() {
        return Response::message(400, "The FLR session is already being unmounted.");
    }
    let ends = now + world.scenario.unmount_secs;
    let task = world.start_task(
        TaskKind::FlrJournalUnmount,
        now,
        Some(ends),
        (COMPLETED, String::new()),
    );
    let session = &mut world.flr.sessions[index];
    session.unmount = Some((now, task));
    world.tasks[task].vpg = Some(session.vpg);
    world.tasks[task].flr_session = Some(session.id.clone());
    Response::json(200, &json!(world.tasks[task].id))
}

/// The session if it is mounted, else the refusal.
fn mounted(world: &World, index: usize, now: f64) -> Result<&Session, Response> {
    let session = &world.flr.sessions[index];
    match status(world, session, now) {
        Some("MountCompletedSuccessfully") => Ok(session),
        other => Err(Response::message(
            400,
            &format!(
                "The FLR session is not mounted (status {}).",
                other.unwrap_or("gone")
            ),
        )),
    }
}

fn flr_path(path: &str) -> Result<&str, Response> {
    if path.contains('\\') {
        Err(Response::message(
            400,
            &format!("Invalid path '{path}': separate components with '/'."),
        ))
    } else {
        Ok(path)
    }
}

fn browse(world: &World, index: usize, request: &Request, now: f64) -> Response {
    let session = match mounted(world, index, now) {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let body = match request.json() {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let path = match flr_path(&text(field(&body, "path")).unwrap_or_default()) {
        Ok(path) => path.trim_matches('/').to_owned(),
        Err(refusal) => return refusal,
    };
    let names_paging = ["pageNumber", "pageSize"]
        .iter()
        .any(|key| field(&body, key).is_some());
    if names_paging
        && world
            .faults
            .appliance(|f| matches!(f, Fault::BrowseRefusesPaging).then_some(()))
            .is_some()
    {
        return Response::message(
            400,
            "The request is invalid: BrowseDataApi has no member pageNumber or pageSize.",
        );
    }
    let page_size = world.faults.appliance(|f| match f {
        Fault::BrowsePages { size } => Some(*size),
        _ => None,
    });
    let page_number = field(&body, "pageNumber")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let files = &world.files[session.vm];
    match files.browse(session.checkpoint_seq, &path) {
        Ok(Some(entries)) => {
            let main = if path.is_empty() {
                item(&Entry::Folder(String::new()), "Disk")
            } else if path.contains('/') {
                item(&Entry::Folder(path.clone()), "Folder")
            } else {
                item(&Entry::Volume(path.clone()), "Partition")
            };
            let mut items: Vec<Value> = entries.iter().map(|e| item(e, "")).collect();
            if let Some(size) = page_size {
                let skip = usize::try_from(page_number - 1)
                    .unwrap_or(usize::MAX)
                    .saturating_mul(size);
                items = items.into_iter().skip(skip).take(size).collect();
            }
            Response::json(200, &json!({ "MainPathItem": main, "PathItems": items }))
        }
        Ok(None) => Response::message(400, &format!("'{path}' is a file, not a folder.")),
        Err(err) => Response::message(400, &format!("Cannot browse: {err}.")),
    }
}

/// A browse item; `kind` overrides the type for the main item.
fn item(entry: &Entry, kind: &str) -> Value {
    let (path, own_kind, browsable, size, written) = match entry {
        Entry::Volume(path) => (path.as_str(), "Partition", true, Value::Null, None),
        Entry::Folder(path) => (path.as_str(), "Folder", true, Value::Null, None),
        Entry::File {
            path,
            size,
            written,
        } => (path.as_str(), "File", false, json!(size), Some(*written)),
    };
    let downloadable = matches!(entry, Entry::File { .. });
    let time = written.map(format_utc);
    json!({
        "Path": path,
        "Type": if kind.is_empty() { own_kind } else { kind },
        "IsBrowsable": browsable,
        "DownloadInformation": {
            "IsDownloadable": downloadable,
            "AdditionalInformation": if downloadable { None } else { Some("The simulator downloads single files.") },
        },
        "SizeInBytes": size,
        "CreationTime": time,
        "LastAccessTime": time,
        "LastWriteTime": time,
    })
}

fn download(world: &mut World, base: &str, index: usize, request: &Request, now: f64) -> Response {
    let (vm, seq) = match mounted(world, index, now) {
        Ok(session) => (session.vm, session.checkpoint_seq),
        Err(refusal) => return refusal,
    };
    let spec = &world.scenario.vms[vm];
    let (name, id) = (spec.name.clone(), spec.id.clone());
    if world
        .faults
        .download_fails(|r: &str| r.eq_ignore_ascii_case(&name) || r.eq_ignore_ascii_case(&id))
    {
        return Response::message(500, "Failed to prepare the download (simulated).");
    }
    let body = match request.json() {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let paths: Vec<String> = field(&body, "pathList")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(|p| text(Some(p))).collect())
        .unwrap_or_default();
    let [path] = paths.as_slice() else {
        return Response::message(
            400,
            "pathList must name exactly one file (the simulator does not build archives).",
        );
    };
    let path = match flr_path(path) {
        Ok(path) => path.trim_matches('/'),
        Err(refusal) => return refusal,
    };
    let bytes = match world.files[vm].read(seq, path) {
        Ok(bytes) => bytes,
        Err(err) => return Response::message(400, &format!("Cannot download: {err}.")),
    };
    world.flr.next += 1;
    let token = ids::guid("download", &world.flr.next.to_string()).replace('-', "");
    let mut file_name = path.rsplit('/').next().unwrap_or(path).to_owned();
    let zipped = world
        .faults
        .appliance(|f| matches!(f, Fault::DownloadZip).then_some(()))
        .is_some();
    let bytes = if zipped {
        let archive = super::zip::archive(&file_name, &bytes);
        file_name.push_str(".zip");
        archive
    } else {
        bytes
    };
    world.flr.sessions[index].downloads.push(Download {
        token: token.clone(),
        file_name,
        bytes,
    });
    let path = format!("_sim/flr-download/{token}");
    let url = match world.faults.appliance(|f| match f {
        Fault::DownloadUrl { form } => Some(*form),
        _ => None,
    }) {
        None => format!("{base}/{path}"),
        Some(UrlForm::Relative) => path,
        Some(UrlForm::RootRelative) => format!("/{path}"),
        Some(UrlForm::OtherHost) => format!("{}/{path}", base.replace("127.0.0.1", "localhost")),
    };
    Response::json(200, &json!(url))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::sim::clock::Clock;
    use crate::sim::scenario::Scenario;

    fn world() -> World {
        let start = crate::time::parse_utc("2026-01-05T10:00:00Z").expect("valid");
        World::new(
            Scenario::lab().with_start(start),
            Clock::new(Instant::now(), start, 1.0, false),
        )
    }

    fn post(path: &str, body: &Value) -> Request {
        Request {
            method: "POST".into(),
            path: path.into(),
            query: Vec::new(),
            headers: Vec::new(),
            body: body.to_string().into_bytes(),
        }
    }

    fn call(world: &mut World, route: Route, id: &str, body: &Value, now: f64) -> Response {
        handle(
            world,
            "https://sim",
            route,
            id,
            &post("/v1/flrs", body),
            now,
        )
    }

    fn json_of(response: &Response) -> Value {
        serde_json::from_slice(&response.body).expect("JSON")
    }

    #[test]
    fn a_session_mounts_serves_the_checkpoint_and_unmounts() {
        let mut w = world();
        let vpg = w.vpg_by_name("jp-ubuntu-vpg").expect("lab VPG");
        let checkpoint = w
            .listed_checkpoints(vpg, 0.0)
            .last()
            .expect("history")
            .id
            .to_string();
        w.write_guest_file("jp-ubuntu", "/etc/app.conf", b"broken\n", 1.0)
            .expect("write");
        let mount = json!({"jflr": {
            "vpgIdentifier": w.scenario.vpgs[vpg].id, "vmIdentifier": w.scenario.vms[0].id,
            "checkpointIdentifier": checkpoint, "initialDownloadPath": "Volume1-Ext4/etc"}, "bflr": null});
        let id = json_of(&call(&mut w, Route::FlrMount, "", &mount, 2.0))
            .as_str()
            .expect("session id")
            .to_owned();
        let status_at =
            |w: &World, now: f64| json_of(&handle_get(w, &id, now))[0]["FlrSessionStatus"].clone();
        assert_eq!(status_at(&w, 21.9), "MountInProgress");
        let early = call(&mut w, Route::FlrBrowse, &id, &json!({"path": ""}), 10.0);
        assert_eq!(early.status, 400, "not mounted yet");
        assert_eq!(status_at(&w, 22.0), "MountCompletedSuccessfully");
        let listing = json_of(&call(
            &mut w,
            Route::FlrBrowse,
            &id,
            &json!({"path": "Volume1-Ext4/etc"}),
            23.0,
        ));
        let names: Vec<&str> = listing["PathItems"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|i| i["Path"].as_str())
            .collect();
        assert_eq!(
            names,
            ["Volume1-Ext4/etc/app.conf", "Volume1-Ext4/etc/hostname"]
        );
        let download = json!({"pathList": ["Volume1-Ext4/etc/app.conf"]});
        let url = json_of(&call(&mut w, Route::FlrDownload, &id, &download, 23.0))
            .as_str()
            .expect("url")
            .to_owned();
        let token = url.rsplit('/').next().expect("token");
        let (name, bytes) = w.flr.download(&w, token, 23.0).expect("download");
        assert_eq!(name, "app.conf");
        assert!(
            String::from_utf8(bytes)
                .expect("text")
                .contains("mode = safe"),
            "as at the checkpoint"
        );
        let task = json_of(&call(&mut w, Route::FlrUnmount, &id, &Value::Null, 30.0));
        let task = w.task_by_id(task.as_str().expect("task id")).expect("task");
        assert_eq!(w.tasks[task].kind, TaskKind::FlrJournalUnmount);
        assert_eq!(status_at(&w, 34.9), "UnmountInProgress");
        assert_eq!(handle_get(&w, &id, 35.0).status, 404, "gone once unmounted");
        assert!(
            w.flr.download(&w, token, 35.0).is_none(),
            "downloads end with the session"
        );
    }

    fn handle_get(world: &World, id: &str, now: f64) -> Response {
        match world.flr.find(world, id, now) {
            Some(index) => Response::json(
                200,
                &json!([session_json(
                    world,
                    "https://sim",
                    &world.flr.sessions[index],
                    now
                )]),
            ),
            None => Response::message(404, "gone"),
        }
    }

    #[test]
    fn mount_requests_are_checked() {
        let mut w = world();
        let vpg = &w.scenario.vpgs[w.vpg_by_name("db01-azure").expect("lab VPG")];
        let (vpg_id, jp) = (vpg.id.clone(), w.scenario.vms[0].id.clone());
        let cases = [
            (json!({"bflr": {}}), "jflr is required"),
            (
                json!({"jflr": {"vpgIdentifier": vpg_id}}),
                "needs vpgIdentifier",
            ),
            (
                json!({"jflr": {"vpgIdentifier": vpg_id, "vmIdentifier": jp, "checkpointIdentifier": "1"}}),
                "not protected by VPG",
            ),
        ];
        for (body, expected) in cases {
            let answer = call(&mut w, Route::FlrMount, "", &body, 1.0);
            let message = json_of(&answer)["Message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert!(
                answer.status == 400 && message.contains(expected),
                "{body}: {message}"
            );
        }
    }
}
