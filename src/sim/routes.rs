//! The ZVM endpoints: which request goes where, authentication, and the answers.
//!
//! Paths, query keys and JSON body keys match case-insensitively, as on a real ZVM; string
//! results (task ids) are JSON strings; errors are `{"Message": "..."}`.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::faults::Fault;
use super::http::{Request, Response};
use super::ids;
use super::scenario::AuthMode;
use super::server::{Action, App};
use super::state::World;
use super::wire;

/// The ZVM endpoints the simulator serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Token,
    Logout,
    WellKnown,
    SessionAdd,
    SessionEnd,
    LocalSite,
    Vms,
    Vm,
    Vpgs,
    Vpg,
    Checkpoints,
    InsertCheckpoint,
    CheckpointStats,
    Tasks,
    TaskTypes,
    Task,
    Flrs,
    FlrMount,
    Flr,
    FlrUnmount,
    FlrBrowse,
    FlrDownload,
    Restore,
    RestoreCommit,
    RestoreRollback,
    FailoverTest,
    FailoverTestStop,
}

const ROUTES: &[(&str, &str, Route)] = &[
    (
        "POST",
        "/auth/realms/zerto/protocol/openid-connect/token",
        Route::Token,
    ),
    (
        "POST",
        "/auth/realms/zerto/protocol/openid-connect/logout",
        Route::Logout,
    ),
    (
        "GET",
        "/auth/realms/zerto/.well-known/openid-configuration",
        Route::WellKnown,
    ),
    ("POST", "/v1/session/add", Route::SessionAdd),
    ("DELETE", "/v1/session", Route::SessionEnd),
    ("GET", "/v1/localsite", Route::LocalSite),
    ("GET", "/v1/vms", Route::Vms),
    ("GET", "/v1/vms/{id}", Route::Vm),
    ("GET", "/v1/vpgs", Route::Vpgs),
    ("GET", "/v1/vpgs/{id}", Route::Vpg),
    ("GET", "/v1/vpgs/{id}/checkpoints", Route::Checkpoints),
    ("POST", "/v1/vpgs/{id}/checkpoints", Route::InsertCheckpoint),
    (
        "GET",
        "/v1/vpgs/{id}/checkpoints/stats",
        Route::CheckpointStats,
    ),
    ("GET", "/v1/tasks", Route::Tasks),
    ("GET", "/v1/tasks/types", Route::TaskTypes),
    ("GET", "/v1/tasks/{id}", Route::Task),
    ("GET", "/v1/flrs", Route::Flrs),
    ("POST", "/v1/flrs", Route::FlrMount),
    ("GET", "/v1/flrs/{id}", Route::Flr),
    ("DELETE", "/v1/flrs/{id}", Route::FlrUnmount),
    ("POST", "/v1/flrs/{id}/browse", Route::FlrBrowse),
    ("POST", "/v1/flrs/{id}/download", Route::FlrDownload),
    ("POST", "/v1/vms/{id}/Restore", Route::Restore),
    ("POST", "/v1/vms/{id}/RestoreCommit", Route::RestoreCommit),
    (
        "POST",
        "/v1/vms/{id}/RestoreRollback",
        Route::RestoreRollback,
    ),
    ("POST", "/v1/vpgs/{id}/FailoverTest", Route::FailoverTest),
    (
        "POST",
        "/v1/vpgs/{id}/FailoverTestStop",
        Route::FailoverTestStop,
    ),
];

/// A matched route: what it is, its name for statistics (`GET /v1/vpgs/{id}`), and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Matched {
    pub(crate) route: Route,
    pub(crate) name: String,
    pub(crate) id: Option<String>,
}

/// Finds the route for a request; `Err(404)` for an unknown path, `Err(405)` for a known path
/// with another method.
pub(crate) fn match_route(method: &str, path: &str) -> Result<Matched, u16> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let mut path_known = false;
    for (route_method, pattern, route) in ROUTES {
        let parts: Vec<&str> = pattern.split('/').collect();
        if parts.len() != segments.len() {
            continue;
        }
        let mut id = None;
        let fits = parts.iter().zip(&segments).all(|(part, segment)| {
            if *part == "{id}" {
                id = Some((*segment).to_owned());
                !segment.is_empty()
            } else {
                part.eq_ignore_ascii_case(segment)
            }
        });
        if !fits {
            continue;
        }
        path_known = true;
        if route_method.eq_ignore_ascii_case(method) {
            return Ok(Matched {
                route: *route,
                name: format!("{route_method} {pattern}"),
                id,
            });
        }
    }
    Err(if path_known { 405 } else { 404 })
}

/// Whether a path belongs to the simulator's own admin API.
pub(crate) fn is_admin(path: &str) -> bool {
    path.get(..6)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("/_sim/"))
}

/// The simulator as an HTTP application.
pub(crate) struct SimApp {
    world: Mutex<World>,
    /// `https://127.0.0.1:<port>`.
    pub(crate) base: String,
}

impl SimApp {
    pub(crate) fn new(world: World, base: String) -> SimApp {
        SimApp {
            world: Mutex::new(world),
            base,
        }
    }

    /// The world, brought up to date with the clock; also returns the sim seconds now.
    pub(crate) fn world(&self) -> (MutexGuard<'_, World>, f64) {
        let mut world = self.world.lock().unwrap_or_else(PoisonError::into_inner);
        let now = world.clock.elapsed(Instant::now());
        world.advance(now);
        (world, now)
    }
}

impl App for SimApp {
    fn plan(&self, request: &Request) -> (Duration, Action) {
        if is_admin(&request.path) {
            return (Duration::ZERO, Action::Handle);
        }
        let mut world = self.world.lock().unwrap_or_else(PoisonError::into_inner);
        let matched = match_route(&request.method, &request.path);
        let name = match &matched {
            Ok(m) => m.name.clone(),
            Err(_) => format!("{} (no route)", request.method.to_uppercase()),
        };
        let stats = &mut world.stats;
        stats.requests += 1;
        *stats.by_route.entry(name).or_default() += 1;
        if matches!(
            matched,
            Ok(Matched {
                route: Route::Token | Route::SessionAdd,
                ..
            })
        ) {
            stats.token_requests += 1;
        }
        if let Some(refusal) = retry_after(&mut world, &matched) {
            return (Duration::ZERO, Action::Answer(refusal));
        }
        let (latency, action) = world.faults.network(&request.method, &request.path);
        let action = match action {
            None => Action::Handle,
            Some(super::faults::NetAction::Status(code)) => {
                if code == 401 {
                    world.stats.unauthorized += 1;
                }
                Action::Answer(Response::message(
                    code,
                    &format!("Simulated failure (HTTP {code})"),
                ))
            }
            Some(super::faults::NetAction::Hang) => Action::Hang,
            Some(super::faults::NetAction::Drop) => Action::Drop,
            Some(super::faults::NetAction::DropAnswer) => Action::DropAnswer,
            Some(super::faults::NetAction::Body(body)) => {
                Action::Answer(Response::bytes("application/json", body.into_bytes()))
            }
        };
        (Duration::from_millis(latency), action)
    }

    fn handle(&self, request: &Request) -> Response {
        if is_admin(&request.path) {
            return super::admin::handle(self, request);
        }
        let (mut world, now) = self.world();
        let response = zvm(&mut world, &self.base, request, now, Instant::now());
        if response.status == 401 {
            world.stats.unauthorized += 1;
        }
        response
    }
}

const DENIED: &str = "Authorization has been denied for this request.";

fn zvm(world: &mut World, base: &str, request: &Request, now: f64, instant: Instant) -> Response {
    let matched = match match_route(&request.method, &request.path) {
        Ok(matched) => matched,
        Err(405) => {
            return Response::message(
                405,
                &format!(
                    "The requested resource does not support http method '{}'.",
                    request.method
                ),
            );
        }
        Err(_) => return not_found(&request.path),
    };
    let mode = world.scenario.auth;
    let id = matched.id.as_deref().unwrap_or_default();
    match matched.route {
        Route::Token | Route::Logout | Route::WellKnown if mode != AuthMode::Keycloak => {
            return not_found(&request.path);
        }
        Route::SessionAdd | Route::SessionEnd if mode != AuthMode::Session => {
            return not_found(&request.path);
        }
        Route::Token => return token(world, base, request, instant),
        Route::Logout => return Response::empty(204),
        Route::WellKnown => return well_known(base),
        Route::SessionAdd => {
            if let Err(refusal) = session_method(world, request) {
                return refusal;
            }
            let scenario = world.scenario.clone();
            return match world.auth.add_session(&scenario, request.basic(), instant) {
                Some(session) => Response::empty(200).with_header("x-zerto-session", &session),
                None => Response::message(401, DENIED),
            };
        }
        _ => {}
    }
    if !world.auth.authorized(
        mode,
        request.bearer(),
        request.header("x-zerto-session"),
        instant,
    ) {
        return Response::message(401, DENIED);
    }
    match matched.route {
        Route::SessionEnd => {
            if let Some(session) = request.header("x-zerto-session") {
                world.auth.end_session(session);
            }
            Response::empty(200)
        }
        Route::LocalSite => Response::json(200, &wire::local_site(world, base)),
        Route::Vms => vms(world, base, request),
        Route::Vm => vm(world, base, request, id),
        Route::Vpgs => vpgs(world, base, request, now),
        Route::Vpg => find_vpg(world, id).map_or_else(
            |e| e,
            |v| Response::json(200, &wire::vpg_row(world, base, v, now)),
        ),
        Route::Checkpoints => {
            find_vpg(world, id).map_or_else(|e| e, |v| checkpoints(world, request, v, now))
        }
        Route::CheckpointStats => {
            find_vpg(world, id).map_or_else(|e| e, |v| checkpoint_stats(world, v, now))
        }
        Route::InsertCheckpoint => match find_vpg(world, id) {
            Ok(vpg) => insert(world, request, vpg, now, instant),
            Err(refusal) => refusal,
        },
        Route::Restore => super::restore::restore(world, request, id, now),
        Route::RestoreCommit => super::restore::decide(world, request, id, true, now),
        Route::RestoreRollback => super::restore::decide(world, request, id, false, now),
        Route::FailoverTest => match find_vpg(world, id) {
            Ok(vpg) => super::restore::test_start(world, request, vpg, now),
            Err(refusal) => refusal,
        },
        Route::FailoverTestStop => match find_vpg(world, id) {
            Ok(vpg) => super::restore::test_stop(world, vpg, now),
            Err(refusal) => refusal,
        },
        Route::Tasks => tasks(world, base, request, now),
        Route::TaskTypes => task_types(),
        Route::Task => task(world, base, id, now),
        Route::Flrs
        | Route::FlrMount
        | Route::Flr
        | Route::FlrUnmount
        | Route::FlrBrowse
        | Route::FlrDownload => super::flr::handle(world, base, matched.route, id, request, now),
        Route::Token | Route::Logout | Route::WellKnown | Route::SessionAdd => {
            not_found(&request.path)
        }
    }
}

/// A ZVM shedding load (`retry-after` fault): every `every`-th API request, and any request
/// before the wait it asked for has passed, is refused with `Retry-After`. Logins are spared.
fn retry_after(world: &mut World, matched: &Result<Matched, u16>) -> Option<Response> {
    let (status, secs, every) = world.faults.appliance(|f| match f {
        Fault::RetryAfter {
            status,
            secs,
            every,
        } => Some((*status, *secs, *every)),
        _ => None,
    })?;
    if matches!(
        matched,
        Ok(Matched {
            route: Route::Token | Route::SessionAdd,
            ..
        })
    ) {
        return None;
    }
    let now = Instant::now();
    let refuse = if world.retry_after_until.is_some_and(|until| now < until) {
        world.stats.early_retries += 1;
        true
    } else {
        world.stats.requests.is_multiple_of(u64::from(every.max(2)))
    };
    if !refuse {
        return None;
    }
    world.retry_after_until = Some(now + Duration::from_secs(secs));
    Some(
        Response::message(status, "The server is busy; retry later.")
            .with_header("Retry-After", &secs.to_string()),
    )
}

/// 9.x login: the account of the lab is a vCenter account (method 1) unless a
/// `session-method` fault says it is the ZVM host's Windows account (0). A body without
/// `AuthenticationMethod` is method 0, as Zerto documents the default.
fn session_method(world: &World, request: &Request) -> Result<(), Response> {
    let wanted = world
        .faults
        .appliance(|f| match f {
            Fault::SessionMethod { method } => Some(*method),
            _ => None,
        })
        .unwrap_or(1);
    let sent = if request.body.iter().all(u8::is_ascii_whitespace) {
        Some(0)
    } else {
        let body = request.json()?;
        match field(&body, "AuthenticationMethod") {
            None | Some(Value::Null) => Some(0),
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(_) => None,
        }
    };
    match sent {
        Some(m) if m == u64::from(wanted) => Ok(()),
        Some(m @ (0 | 1)) => Err(Response::message(
            401,
            &format!(
                "Authentication failed: the account does not log in with AuthenticationMethod {m}."
            ),
        )),
        _ => Err(Response::message(
            400,
            "AuthenticationMethod must be 0 or 1.",
        )),
    }
}

fn not_found(path: &str) -> Response {
    Response::message(
        404,
        &format!("No HTTP resource was found that matches the request URI '{path}'."),
    )
}

/// A JSON object's member, its key compared case-insensitively.
pub(crate) fn field<'a>(body: &'a Value, key: &str) -> Option<&'a Value> {
    body.as_object()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
}

fn token(world: &mut World, base: &str, request: &Request, instant: Instant) -> Response {
    let form = request.form();
    let lookup = |key: &str| {
        form.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.clone())
    };
    let scenario = world.scenario.clone();
    let issuer = format!("{base}/auth/realms/zerto");
    let (status, body) = world
        .auth
        .token(&scenario, lookup, request.basic(), &issuer, instant);
    Response::json(status, &body)
}

fn well_known(base: &str) -> Response {
    let issuer = format!("{base}/auth/realms/zerto");
    Response::json(
        200,
        &json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/protocol/openid-connect/auth"),
            "token_endpoint": format!("{issuer}/protocol/openid-connect/token"),
            "end_session_endpoint": format!("{issuer}/protocol/openid-connect/logout"),
            "grant_types_supported": ["password", "client_credentials", "refresh_token"],
        }),
    )
}

fn vms(world: &World, base: &str, request: &Request) -> Response {
    let matches = |key: &str, value: &str| {
        request
            .query(key)
            .is_none_or(|want| want.eq_ignore_ascii_case(value))
    };
    let mut rows = Vec::new();
    for vm in 0..world.scenario.vms.len() {
        let spec = &world.scenario.vms[vm];
        if !matches("vmidentifier", &spec.id) || !matches("vmname", &spec.name) {
            continue;
        }
        for vpg in world.vpgs_of(vm) {
            let group = &world.scenario.vpgs[vpg];
            if matches("vpgname", &group.name) && matches("vpgidentifier", &group.id) {
                rows.push(wire::vm_row(world, base, vm, vpg));
            }
        }
    }
    let null_rows = world
        .faults
        .appliance(|f| matches!(f, Fault::NullNameRows).then_some(()))
        .is_some();
    if null_rows && request.query("vmidentifier").is_none() && request.query("vmname").is_none() {
        // A VM being deleted: still listed, its names already gone.
        if let Some(mut row) = rows.first().cloned() {
            row["VmIdentifier"] = json!(format!("{}.vm-99999", world.scenario.site_id));
            row["VmName"] = Value::Null;
            row["VpgName"] = Value::Null;
            row["VmNetworkInformation"] = Value::Null;
            rows.insert(0, row);
        }
    }
    Response::json(200, &Value::Array(rows))
}

fn vm(world: &World, base: &str, request: &Request, id: &str) -> Response {
    if !ids::is_vm_identifier(id) {
        return Response::message(400, &format!("The VM identifier '{id}' is not valid."));
    }
    let Some(vm) = world.vm_by_id(id) else {
        return Response::message(404, &format!("VM '{id}' is not protected by any VPG."));
    };
    let vpgs = world.vpgs_of(vm);
    let vpg = match (request.query("vpgidentifier"), vpgs.as_slice()) {
        (Some(wanted), _) => vpgs
            .iter()
            .copied()
            .find(|&v| world.scenario.vpgs[v].id.eq_ignore_ascii_case(wanted)),
        (None, [one]) => Some(*one),
        (None, []) => None,
        (None, _) => {
            return Response::message(
                400,
                &format!("VM '{id}' is protected by more than one VPG; specify vpgIdentifier."),
            );
        }
    };
    match vpg {
        Some(vpg) => Response::json(200, &wire::vm_row(world, base, vm, vpg)),
        None => Response::message(
            404,
            &format!("VM '{id}' is not protected by the given VPG."),
        ),
    }
}

fn find_vpg(world: &World, id: &str) -> Result<usize, Response> {
    if !ids::is_guid(id) {
        return Err(Response::message(
            400,
            &format!("The VPG identifier '{id}' is not valid."),
        ));
    }
    world
        .vpg_by_id(id)
        .ok_or_else(|| Response::message(404, &format!("VPG '{id}' was not found.")))
}

fn vpgs(world: &World, base: &str, request: &Request, now: f64) -> Response {
    let name = request.query("name").or_else(|| request.query("vpgname"));
    let rows: Vec<Value> = (0..world.scenario.vpgs.len())
        .filter(|&v| name.is_none_or(|name| world.scenario.vpgs[v].name.eq_ignore_ascii_case(name)))
        .map(|v| wire::vpg_row(world, base, v, now))
        .collect();
    Response::json(200, &Value::Array(rows))
}

fn checkpoints(world: &World, request: &Request, vpg: usize, now: f64) -> Response {
    let mut bounds = [None, None];
    for (slot, key) in bounds.iter_mut().zip(["startdate", "enddate"]) {
        if let Some(text) = request.query(key).filter(|t| !t.trim().is_empty()) {
            match crate::time::parse_utc(text) {
                Ok(time) => *slot = Some(time),
                Err(_) => {
                    return Response::message(
                        400,
                        &format!("The value '{text}' is not valid for {key}."),
                    );
                }
            }
        }
    }
    let rows: Vec<Value> = world
        .listed_checkpoints(vpg, now)
        .into_iter()
        .filter(|cp| {
            bounds[0].is_none_or(|start| cp.time >= start)
                && bounds[1].is_none_or(|end| cp.time <= end)
        })
        .map(|cp| cut_tag(world, wire::checkpoint_row(cp)))
        .collect();
    Response::json(200, &Value::Array(rows))
}

/// A checkpoint row with its tag cut as a `names-cut` fault says.
fn cut_tag(world: &World, mut row: Value) -> Value {
    let max = world.faults.appliance(|f| match f {
        Fault::NamesCut { max } => Some(*max),
        _ => None,
    });
    if let (Some(max), Some(tag)) = (max, row["Tag"].as_str()) {
        row["Tag"] = json!(tag.chars().take(max).collect::<String>());
    }
    row
}

fn checkpoint_stats(world: &World, vpg: usize, now: f64) -> Response {
    let rows = world.listed_checkpoints(vpg, now);
    Response::json(
        200,
        &json!({
            "Earliest": rows.first().map(|cp| cut_tag(world, wire::checkpoint_row(cp))),
            "Latest": rows.last().map(|cp| cut_tag(world, wire::checkpoint_row(cp))),
        }),
    )
}

fn insert(
    world: &mut World,
    request: &Request,
    vpg: usize,
    now: f64,
    instant: Instant,
) -> Response {
    let body = match request.json() {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let Some(tag) = field(&body, "checkpointName")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
    else {
        return Response::message(400, "checkpointName is required.");
    };
    let task = world.insert_tagged(vpg, tag, now, instant);
    Response::json(200, &json!(world.tasks[task].id))
}

/// `GET /v1/tasks/types`.
fn task_types() -> Response {
    let kinds: Vec<&str> = super::state::TaskKind::ALL
        .iter()
        .map(|k| k.wire())
        .collect();
    Response::json(200, &Value::from(kinds))
}

fn tasks(world: &World, base: &str, request: &Request, now: f64) -> Response {
    let kind = request.query("type");
    let rows: Vec<Value> = world
        .tasks
        .iter()
        .filter(|t| kind.is_none_or(|k| t.kind.wire().eq_ignore_ascii_case(k)))
        .map(|t| wire::task(world, base, t, now))
        .collect();
    Response::json(200, &Value::Array(rows))
}

fn task(world: &World, base: &str, id: &str, now: f64) -> Response {
    if !ids::is_site_scoped(id) {
        return Response::message(400, &format!("The task identifier '{id}' is not valid."));
    }
    match world.task_by_id(id) {
        Some(task)
            if world.tasks[task].ended(now).is_some()
                && world
                    .faults
                    .appliance(|f| matches!(f, Fault::TaskGone401).then_some(()))
                    .is_some() =>
        {
            Response::message(401, DENIED)
        }
        Some(task) => Response::json(200, &wire::task(world, base, &world.tasks[task], now)),
        None => Response::message(404, &format!("Task '{id}' was not found.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_case_insensitively_and_name_ids() {
        let m = match_route("GET", "/V1/VPGs/abc/Checkpoints/").expect("route");
        assert_eq!(
            (m.route, m.name.as_str(), m.id.as_deref()),
            (
                Route::Checkpoints,
                "GET /v1/vpgs/{id}/checkpoints",
                Some("abc")
            )
        );
        assert_eq!(
            match_route("post", "/v1/vpgs/abc/checkpoints")
                .expect("route")
                .route,
            Route::InsertCheckpoint
        );
        assert_eq!(
            match_route("GET", "/v1/vpgs/abc/checkpoints/stats")
                .expect("route")
                .route,
            Route::CheckpointStats
        );
        assert_eq!(match_route("GET", "/v1/vms").expect("route").id, None);
        assert_eq!(match_route("PUT", "/v1/vms"), Err(405));
        assert_eq!(match_route("GET", "/v1/nothing"), Err(404));
        assert_eq!(
            match_route("GET", "/v1/vpgs//checkpoints"),
            Err(404),
            "an empty id is no id"
        );
    }

    #[test]
    fn admin_paths_are_recognised() {
        assert!(is_admin("/_sim/stats"));
        assert!(is_admin("/_SIM/faults"));
        assert!(!is_admin("/v1/_sim/"));
        assert!(!is_admin("/_si"));
    }

    #[test]
    fn body_keys_match_in_any_case() {
        let body = json!({"CheckpointName": "x"});
        assert_eq!(field(&body, "checkpointname"), Some(&json!("x")));
        assert_eq!(field(&json!([1]), "x"), None);
    }
}
