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
//!
//! Requests to `/_sim/` are not counted in the statistics and never faulted.

use serde_json::{Value, json};

use super::faults::Fault;
use super::http::{Request, Response};
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
        _ => Response::message(404, &format!("no simulator endpoint {method} {path}")),
    }
}
