//! File Level Restore sessions (not simulated yet: the routes answer 404).

use super::http::{Request, Response};
use super::routes::Route;
use super::state::World;

/// Answers the `/v1/flrs` routes.
pub(crate) fn handle(
    _world: &mut World,
    _base: &str,
    _route: Route,
    _id: &str,
    request: &Request,
    _now: f64,
) -> Response {
    Response::message(
        404,
        &format!(
            "No HTTP resource was found that matches the request URI '{}'.",
            request.path
        ),
    )
}
