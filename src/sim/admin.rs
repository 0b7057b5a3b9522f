//! The simulator's own API under `/_sim/` (no authentication; the server only listens on
//! loopback), for `rewind sim` users and scripts:
//!
//! | request | effect |
//! |---|---|
//! | `GET /_sim/stats` | request counters: `requests`, `token_requests`, `unauthorized`, `by_route` |
//! | `GET /_sim/inserts` | every tagged-checkpoint insert with its task state and checkpoint |
//! | `GET /_sim/faults` | the faults in force |
//! | `POST /_sim/faults` | add a fault, e.g. `{"kind": "hang", "route": "GET /v1/vms"}` |
//! | `DELETE /_sim/faults` | remove every fault |
//! | `POST /_sim/expire-tokens` | invalidate every access token and session |
//! | `POST /_sim/guest-files` | write a guest file now: `{"vm", "path", "content"}` (text) or `"content_base64"` |
//! | `GET /_sim/flr-download/<token>` | the bytes behind an FLR download URL |
//! | `GET /_sim/whole-vm` | journal VM restores, failover tests and each VM's content marker |
//! | `POST /_sim/vm-change` | a change on a VM: `{"vm"}`; its content marker moves on |
//!
//! Requests to `/_sim/` are not counted in the statistics and never faulted.

use serde_json::{Value, json};

use super::faults::Fault;
use super::http::{Request, Response, base64_decode};
use super::routes::SimApp;
use super::state::state_name;

pub(crate) fn handle(app: &SimApp, request: &Request) -> Response {
    let path = request.path.trim_end_matches('/').to_ascii_lowercase();
    let method = request.method.to_ascii_uppercase();
    let (mut world, now) = app.world();
    match (method.as_str(), path.as_str()) {
        ("GET", "/_sim/stats") => Response::json(200, &json!(world.stats)),
        ("GET", "/_sim/inserts") => {
            let rows: Vec<Value> = world
                .insert_views(now)
                .into_iter()
                .map(|ins| {
                    json!({
                        "vpg_name": ins.vpg_name,
                        "vpg_id": ins.vpg_id,
                        "tag": ins.tag,
                        "task_id": ins.task_id,
                        "task_state": state_name(ins.state),
                        "checkpoint_id": ins.checkpoint_id,
                        "received": crate::time::format_utc_millis(world.clock.time_at(ins.received)),
                        "listed": ins.listed.map(|at| crate::time::format_utc_millis(world.clock.time_at(at))),
                    })
                })
                .collect();
            Response::json(200, &Value::Array(rows))
        }
        ("GET", "/_sim/faults") => Response::json(200, &json!(world.faults.list())),
        ("POST", "/_sim/faults") => {
            let fault: Fault = match serde_json::from_slice(&request.body) {
                Ok(fault) => fault,
                Err(err) => return Response::message(400, &format!("not a fault: {err}")),
            };
            let scenario = &world.scenario;
            if let Err(err) = fault.check(
                |vpg| scenario.vpg_known(vpg),
                |vm| !scenario.vm_matches(vm).is_empty(),
            ) {
                return Response::message(400, &err);
            }
            world.faults.add(fault.clone());
            Response::json(200, &json!({ "added": fault }))
        }
        ("DELETE", "/_sim/faults") => {
            let cleared = world.faults.list().len();
            world.faults.clear();
            Response::json(200, &json!({ "cleared": cleared }))
        }
        ("POST", "/_sim/expire-tokens") => {
            world.auth.expire_all();
            Response::json(200, &json!({ "expired": true }))
        }
        ("POST", "/_sim/guest-files") => {
            let body = match request.json() {
                Ok(body) => body,
                Err(refusal) => return refusal,
            };
            let text = |key: &str| body.get(key).and_then(Value::as_str);
            let (Some(vm), Some(guest_path)) = (text("vm"), text("path")) else {
                return Response::message(400, "a guest file needs \"vm\" and \"path\"");
            };
            let bytes = match (text("content"), text("content_base64")) {
                (Some(content), None) => content.as_bytes().to_vec(),
                (None, Some(encoded)) => match base64_decode(encoded) {
                    Some(bytes) => bytes,
                    None => return Response::message(400, "content_base64 is not base64"),
                },
                _ => {
                    return Response::message(
                        400,
                        "give exactly one of \"content\" and \"content_base64\"",
                    );
                }
            };
            match world.write_guest_file(vm, guest_path, &bytes, now) {
                Ok(()) => Response::json(
                    200,
                    &json!({ "vm": vm, "path": guest_path, "size": bytes.len() }),
                ),
                Err(err) => Response::message(400, &err),
            }
        }
        ("GET", "/_sim/whole-vm") => Response::json(200, &super::restore::view(&world, now)),
        ("POST", "/_sim/vm-change") => vm_change(&mut world, request, now),
        ("GET", _) if path.starts_with("/_sim/flr-download/") => {
            let token = &request.path.trim_end_matches('/')["/_sim/flr-download/".len()..];
            match world.flr.download(&world, token, now) {
                Some((file_name, bytes)) => Response::bytes("application/octet-stream", bytes)
                    .with_header("Content-Disposition", &content_disposition(&file_name)),
                None => Response::message(404, "no such download (its FLR session has ended?)"),
            }
        }
        _ => Response::message(404, &format!("no simulator endpoint {method} {path}")),
    }
}

/// `POST /_sim/vm-change`: a change on a VM moves its content marker on.
fn vm_change(world: &mut super::state::World, request: &Request, now: f64) -> Response {
    let body = match request.json() {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let vm = body.get("vm").and_then(Value::as_str).unwrap_or_default();
    match world.scenario.vm_matches(vm)[..] {
        [index] => {
            let marker = world.bump_marker(index, now);
            Response::json(200, &json!({ "vm": vm, "marker": marker }))
        }
        _ => Response::message(400, &format!("no single VM named {vm:?}")),
    }
}

/// `attachment` with the file name as a header may carry it (RFC 6266): an ASCII stand-in
/// in `filename`, the exact name percent-encoded in `filename*`. A guest file's name may hold
/// any character but `/`, and a raw control or non-ASCII byte makes the header invalid.
fn content_disposition(file_name: &str) -> String {
    let plain: String = file_name
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '_',
        })
        .collect();
    let exact =
        percent_encoding::utf8_percent_encode(file_name, percent_encoding::NON_ALPHANUMERIC);
    format!("attachment; filename=\"{plain}\"; filename*=UTF-8''{exact}")
}
