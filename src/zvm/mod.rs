//! The ZVM client: every Zerto REST call `rewind` makes lives here, each under the caller's
//! deadline. Submodules: `http` builds the agent and sends, `auth` logs in and shares the
//! token, `wire` is what Zerto sends (private: each answer becomes a [`model`] type at this
//! boundary, once), `error` what can go wrong, [`resolve`] turns VM references from a tool
//! call into VMs and their VPGs.

mod auth;
mod error;
mod http;
pub mod model;
pub mod resolve;
mod shape;
pub mod tls;
mod wire;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use serde::de::DeserializeOwned;
use ureq::Body;
use ureq::http::Response;

pub use self::error::{NotFound, ZvmError};
use self::http::{Call, CallBody, Http, Method, error_message, parse_json, read_text};
pub use self::model::{
    Checkpoint, CommitPolicy, DecisionBody, FlrSession, FlrStatus, PathEntry, RestoreRequest,
    ShutdownPolicy, Task, TaskState, Vm, Vpg, VpgRef,
};
use crate::config::ZvmConfig;
use crate::deadline::Deadline;

/// A client for one ZVM.
pub struct Client {
    http: Http,
    auth: auth::Auth,
    /// No request before this: the ZVM answered 429 or 503 with `Retry-After`.
    not_before: std::sync::Mutex<Option<Instant>>,
    /// The shapes of the answers seen, when asked to keep them ([`Client::keep_shapes`]).
    shapes: Option<std::sync::Mutex<shape::Shapes>>,
    /// Where every full listing of the VMs refreshes the protected-VM net
    /// ([`crate::inventory`]): the cache directory.
    inventory_dir: std::path::PathBuf,
}

impl Client {
    /// Builds a client; nothing is sent until the first call. `cache_dir` holds the shared
    /// token cache.
    pub fn new(config: &ZvmConfig, cache_dir: &Path) -> Result<Client, ZvmError> {
        Ok(Client {
            http: Http::new(config)?,
            auth: auth::Auth::new(config, cache_dir),
            not_before: std::sync::Mutex::new(None),
            shapes: None,
            inventory_dir: cache_dir.to_owned(),
        })
    }

    /// From now on, keeps the shape of every JSON answer (field names and JSON types, no
    /// values), by call, for [`Client::shapes`].
    pub fn keep_shapes(&mut self) {
        self.shapes = Some(std::sync::Mutex::new(shape::Shapes::default()));
    }

    /// The shapes kept so far, as JSON: `{"GET /v1/vms": [{"VmName": "string", …}], …}`.
    pub fn shapes(&self) -> serde_json::Value {
        self.shapes.as_ref().map_or(serde_json::Value::Null, |s| {
            s.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .to_json()
        })
    }

    fn keep_shape(&self, method: &str, path: &str, answer: &str) {
        if let Some(shapes) = &self.shapes
            && let Ok(value) = serde_json::from_str::<serde_json::Value>(answer)
        {
            shapes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .add(method, path, &value);
        }
    }

    /// Logs in (or reuses the cached token) without calling the API.
    pub fn authenticate(&self, deadline: &Deadline) -> Result<(), ZvmError> {
        self.auth.token(&self.http, deadline).map(|_| ())
    }

    /// Logs in now with the configured credential, neither reading nor writing the token
    /// cache: proof that the credential works, not that a token once did.
    pub fn fresh_login(&self, deadline: &Deadline) -> Result<(), ZvmError> {
        self.auth.fresh_login(&self.http, deadline)
    }

    /// `GET /v1/vms`, optionally filtered by `vmIdentifier`: the protected VMs, each with
    /// every VPG that protects it (Zerto lists one row per VM per VPG). A full listing also
    /// refreshes the protected-VM net, so the hook's read-only path never asks the ZVM.
    pub fn vms(
        &self,
        vm_identifier: Option<&str>,
        deadline: &Deadline,
    ) -> Result<Vec<Vm>, ZvmError> {
        let query = vm_identifier
            .map(|id| vec![("vmIdentifier", id.to_owned())])
            .unwrap_or_default();
        let vms = self.get("/v1/vms", query, deadline, wire::vms)?;
        if vm_identifier.is_none() {
            crate::inventory::Inventory::listed(&vms).store(&self.inventory_dir);
        }
        Ok(vms)
    }

    /// `GET /v1/vpgs`.
    pub fn vpgs(&self, deadline: &Deadline) -> Result<Vec<Vpg>, ZvmError> {
        self.get("/v1/vpgs", Vec::new(), deadline, wire::vpgs)
    }

    /// `GET /v1/vpgs/{id}`.
    pub fn vpg(&self, vpg_id: &str, deadline: &Deadline) -> Result<Vpg, ZvmError> {
        self.get(
            &format!("/v1/vpgs/{}", segment(vpg_id)),
            Vec::new(),
            deadline,
            wire::vpg,
        )
    }

    /// `GET /v1/vpgs/{id}/checkpoints`, from `since` when given.
    pub fn checkpoints(
        &self,
        vpg_id: &str,
        since: Option<SystemTime>,
        deadline: &Deadline,
    ) -> Result<Vec<Checkpoint>, ZvmError> {
        let query = since
            .map(|t| vec![("startDate", query_time(t))])
            .unwrap_or_default();
        self.get(
            &format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)),
            query,
            deadline,
            wire::checkpoints,
        )
    }

    /// `GET /v1/vpgs/{id}/checkpoints?startDate=&endDate=`: the checkpoints of a window of
    /// time (either end open when `None`).
    pub fn checkpoints_between(
        &self,
        vpg_id: &str,
        start: Option<SystemTime>,
        end: Option<SystemTime>,
        deadline: &Deadline,
    ) -> Result<Vec<Checkpoint>, ZvmError> {
        let mut query = Vec::new();
        if let Some(t) = start {
            query.push(("startDate", query_time(t)));
        }
        if let Some(t) = end {
            query.push(("endDate", query_time(t)));
        }
        self.get(
            &format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)),
            query,
            deadline,
            wire::checkpoints,
        )
    }

    /// `GET /v1/vpgs/{id}/checkpoints/stats`: the oldest checkpoint still in the journal.
    pub fn earliest_checkpoint(
        &self,
        vpg_id: &str,
        deadline: &Deadline,
    ) -> Result<Option<Checkpoint>, ZvmError> {
        self.get(
            &format!("/v1/vpgs/{}/checkpoints/stats", segment(vpg_id)),
            Vec::new(),
            deadline,
            wire::earliest,
        )
    }

    /// `GET /v1/vpgs/{id}/checkpoints/stats`: the newest checkpoint, if any.
    pub fn latest_checkpoint(
        &self,
        vpg_id: &str,
        deadline: &Deadline,
    ) -> Result<Option<Checkpoint>, ZvmError> {
        self.get(
            &format!("/v1/vpgs/{}/checkpoints/stats", segment(vpg_id)),
            Vec::new(),
            deadline,
            wire::latest,
        )
    }

    /// `POST /v1/vpgs/{id}/checkpoints`: asks for a tagged checkpoint and returns the TASK id.
    /// The answer only means "queued"; the task says whether it happened.
    pub fn insert_tagged_checkpoint(
        &self,
        vpg_id: &str,
        tag: &str,
        deadline: &Deadline,
    ) -> Result<String, ZvmError> {
        let body = serde_json::json!({ "checkpointName": tag });
        self.post(
            &format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)),
            &body,
            deadline,
            Ok,
        )
    }

    /// `GET /v1/tasks/{id}`.
    pub fn task(&self, task_id: &str, deadline: &Deadline) -> Result<Task, ZvmError> {
        self.get(
            &format!("/v1/tasks/{}", segment(task_id)),
            Vec::new(),
            deadline,
            wire::task,
        )
    }

    /// `GET /v1/tasks`: every task the ZVM keeps.
    pub fn tasks(&self, deadline: &Deadline) -> Result<Vec<Task>, ZvmError> {
        self.get("/v1/tasks", Vec::new(), deadline, wire::tasks)
    }

    /// `GET /v1/tasks/types`: the task types the ZVM knows.
    pub fn task_types(&self, deadline: &Deadline) -> Result<Vec<String>, ZvmError> {
        self.get("/v1/tasks/types", Vec::new(), deadline, Ok)
    }

    /// `POST /v1/vms/{id}/Restore`: starts a journal VM restore; returns the task id.
    pub fn restore_vm(
        &self,
        vm_id: &str,
        request: &RestoreRequest,
        deadline: &Deadline,
    ) -> Result<String, ZvmError> {
        self.post(
            &format!("/v1/vms/{}/Restore", segment(vm_id)),
            &wire::restore_body(request),
            deadline,
            Ok,
        )
    }

    /// `POST /v1/vms/{id}/RestoreCommit` with the body in `form`: keeps what the restore
    /// put back. Returns the task id, when the ZVM answers one.
    pub fn restore_commit(
        &self,
        vm_id: &str,
        vpg_id: &str,
        form: DecisionBody,
        deadline: &Deadline,
    ) -> Result<Option<String>, ZvmError> {
        self.restore_decision("RestoreCommit", vm_id, vpg_id, form, deadline)
    }

    /// `POST /v1/vms/{id}/RestoreRollback` with the body in `form`: puts back what the VM
    /// held before the restore. Returns the task id, when the ZVM answers one.
    pub fn restore_rollback(
        &self,
        vm_id: &str,
        vpg_id: &str,
        form: DecisionBody,
        deadline: &Deadline,
    ) -> Result<Option<String>, ZvmError> {
        self.restore_decision("RestoreRollback", vm_id, vpg_id, form, deadline)
    }

    fn restore_decision(
        &self,
        verb: &str,
        vm_id: &str,
        vpg_id: &str,
        form: DecisionBody,
        deadline: &Deadline,
    ) -> Result<Option<String>, ZvmError> {
        let path = format!("/v1/vms/{}/{verb}", segment(vm_id));
        let body = wire::decision_body(form, vpg_id);
        let call_body = body.as_ref().map_or(CallBody::None, CallBody::Json);
        let mut response =
            self.authorized(Method::Post, &path, Vec::new(), &call_body, deadline)?;
        let url = self.http.url(&path);
        let text = read_text("POST", &url, &mut response)?;
        self.keep_shape("POST", &path, &text);
        wire::optional_string(&text).map_err(|detail| ZvmError::Decode {
            method: "POST",
            url,
            detail,
        })
    }

    /// `POST /v1/vpgs/{id}/FailoverTest` of some of its VMs from one checkpoint; returns the
    /// task id.
    pub fn failover_test(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
        vm_ids: &[&str],
        deadline: &Deadline,
    ) -> Result<String, ZvmError> {
        self.post(
            &format!("/v1/vpgs/{}/FailoverTest", segment(vpg_id)),
            &wire::failover_test_body(checkpoint_id, vm_ids),
            deadline,
            Ok,
        )
    }

    /// `POST /v1/vpgs/{id}/FailoverTestStop` with the test's result; returns the task id.
    pub fn failover_test_stop(
        &self,
        vpg_id: &str,
        success: bool,
        summary: &str,
        deadline: &Deadline,
    ) -> Result<String, ZvmError> {
        self.post(
            &format!("/v1/vpgs/{}/FailoverTestStop", segment(vpg_id)),
            &wire::failover_test_stop_body(success, summary),
            deadline,
            Ok,
        )
    }

    /// `POST /v1/flrs`: mounts a journal checkpoint for File Level Restore; returns the
    /// session id.
    pub fn flr_mount(
        &self,
        vpg_id: &str,
        vm_id: &str,
        checkpoint_id: &str,
        deadline: &Deadline,
    ) -> Result<String, ZvmError> {
        let body = serde_json::json!({
            "jflr": {
                "vpgIdentifier": vpg_id,
                "vmIdentifier": vm_id,
                "checkpointIdentifier": checkpoint_id,
                "initialDownloadPath": "",
            },
            "bflr": null,
        });
        self.post("/v1/flrs", &body, deadline, Ok)
    }

    /// `GET /v1/flrs[?vmIdentifier=]`.
    pub fn flr_sessions(
        &self,
        vm_id: Option<&str>,
        deadline: &Deadline,
    ) -> Result<Vec<FlrSession>, ZvmError> {
        let query = vm_id
            .map(|id| vec![("vmIdentifier", id.to_owned())])
            .unwrap_or_default();
        self.get("/v1/flrs", query, deadline, wire::flr_sessions)
    }

    /// `GET /v1/flrs/{id}`: an array of one on 10.x, a single object in older docs.
    pub fn flr_session(
        &self,
        session_id: &str,
        deadline: &Deadline,
    ) -> Result<Option<FlrSession>, ZvmError> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            Many(Vec<wire::FlrSessionRow>),
            One(Box<wire::FlrSessionRow>),
        }
        let path = format!("/v1/flrs/{}", segment(session_id));
        let one = |answer: OneOrMany| match answer {
            OneOrMany::Many(mut list) => list.pop().map(wire::flr_session).transpose(),
            OneOrMany::One(one) => wire::flr_session(*one).map(Some),
        };
        match self.get(&path, Vec::new(), deadline, one) {
            Err(e) if matches!(e.status(), Some(400 | 404)) => Ok(None),
            other => other,
        }
    }

    /// `POST /v1/flrs/{id}/browse`: the entries under a volume path (`""` lists volumes).
    ///
    /// 10.x answers a page at a time (`pageNumber`, `pageSize`, no total): pages are asked
    /// for until one comes back short, empty, or with nothing new. The first page asked is 0
    /// (a 1-based appliance answers it as page 1, and the repeat brings nothing new); an
    /// appliance that refuses the paging fields (HTTP 400) is asked once without them.
    pub fn flr_browse(
        &self,
        session_id: &str,
        path: &str,
        deadline: &Deadline,
    ) -> Result<Vec<PathEntry>, ZvmError> {
        const PAGE: usize = 500;
        const MAX_PAGES: u64 = 10_000;
        let url = format!("/v1/flrs/{}/browse", segment(session_id));
        let mut entries: Vec<PathEntry> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut full_page: Option<usize> = None;
        let mut stale = 0;
        for page in 0..MAX_PAGES {
            let body = serde_json::json!({ "path": path, "pageNumber": page, "pageSize": PAGE });
            let items = match self.post(&url, &body, deadline, wire::entries) {
                Ok(items) => items,
                Err(e) if page == 0 && e.status() == Some(400) => {
                    // An older appliance: no paging fields, one answer.
                    let body = serde_json::json!({ "path": path });
                    return self.post(&url, &body, deadline, wire::entries);
                }
                Err(e) => return Err(e),
            };
            let size = items.len();
            let before = entries.len();
            for item in items {
                if seen.insert(item.path.clone()) {
                    entries.push(item);
                }
            }
            let page_size = *full_page.get_or_insert(size);
            if entries.len() == before {
                stale += 1;
            } else {
                stale = 0;
            }
            // Two pages in a row with nothing new: the appliance ignores the page asked for.
            if size == 0 || size < page_size || stale >= 2 {
                break;
            }
        }
        Ok(entries)
    }

    /// `POST /v1/flrs/{id}/download`: returns the URL serving the file.
    pub fn flr_download_url(
        &self,
        session_id: &str,
        path: &str,
        deadline: &Deadline,
    ) -> Result<String, ZvmError> {
        let body = serde_json::json!({ "pathList": [path] });
        self.post(
            &format!("/v1/flrs/{}/download", segment(session_id)),
            &body,
            deadline,
            Ok,
        )
    }

    /// Streams a download URL the ZVM gave into `out`, with the same TLS trust and credentials,
    /// without holding the file in memory; returns the number of bytes written. A body that
    /// breaks off is a [`ZvmError`] naming the URL; a failure of `out` is
    /// [`DownloadError::Write`].
    pub fn download_to(
        &self,
        url: &str,
        out: &mut impl std::io::Write,
        deadline: &Deadline,
    ) -> Result<u64, DownloadError> {
        let path = self
            .http
            .download_path(url)
            .ok_or_else(|| ZvmError::Decode {
                method: "POST",
                url: self.http.url("/v1/flrs/…/download"),
                detail: format!("download URL {url:?} is not an http(s) URL or path"),
            })?;
        if let Some(shapes) = &self.shapes {
            shapes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .note_url_form(url, &self.http.url(""));
        }
        let response =
            self.authorized(Method::Get, &path, Vec::new(), &CallBody::None, deadline)?;
        http::copy_body("GET", &self.http.url(&path), response, out)
    }

    /// `DELETE /v1/flrs/{id}`: unmounts; returns the unmount task id.
    pub fn flr_unmount(&self, session_id: &str, deadline: &Deadline) -> Result<String, ZvmError> {
        self.send(
            Method::Delete,
            &format!("/v1/flrs/{}", segment(session_id)),
            Vec::new(),
            &CallBody::None,
            deadline,
            Ok,
        )
    }

    fn post<W: DeserializeOwned, T>(
        &self,
        path: &str,
        body: &serde_json::Value,
        deadline: &Deadline,
        convert: impl FnOnce(W) -> Result<T, String>,
    ) -> Result<T, ZvmError> {
        self.send(
            Method::Post,
            path,
            Vec::new(),
            &CallBody::Json(body),
            deadline,
            convert,
        )
    }

    fn get<W: DeserializeOwned, T>(
        &self,
        path: &str,
        query: Vec<(&str, String)>,
        deadline: &Deadline,
        convert: impl FnOnce(W) -> Result<T, String>,
    ) -> Result<T, ZvmError> {
        self.send(Method::Get, path, query, &CallBody::None, deadline, convert)
    }

    /// Sends an authenticated call, checks the status, parses the JSON answer as the wire
    /// type `W` and turns it into `T` with `convert`; an answer that does not parse or
    /// convert is [`ZvmError::Decode`] naming the call and what was wrong.
    fn send<W: DeserializeOwned, T>(
        &self,
        method: Method,
        path: &str,
        query: Vec<(&str, String)>,
        body: &CallBody<'_>,
        deadline: &Deadline,
        convert: impl FnOnce(W) -> Result<T, String>,
    ) -> Result<T, ZvmError> {
        let mut response = self.authorized(method, path, query, body, deadline)?;
        let method = method.as_str();
        let url = self.http.url(path);
        let text = read_text(method, &url, &mut response)?;
        self.keep_shape(method, path, &text);
        let answer: W = parse_json(method, &url, &text)?;
        convert(answer).map_err(|detail| ZvmError::Decode {
            method,
            url,
            detail,
        })
    }

    /// Sends with the shared token; a 401 renews it exactly once and retries. Non-2xx
    /// answers become [`ZvmError::Status`] with Zerto's message.
    fn authorized(
        &self,
        method: Method,
        path: &str,
        query: Vec<(&str, String)>,
        body: &CallBody<'_>,
        deadline: &Deadline,
    ) -> Result<Response<Body>, ZvmError> {
        let call = Call {
            method,
            path: path.to_owned(),
            query,
            body: body.clone(),
        };
        let mut token = self.auth.token(&self.http, deadline)?;
        let mut renewed = false;
        loop {
            self.wait_until_allowed(method.as_str(), path, deadline)?;
            let mut response = self
                .http
                .send(&call, &token.header(self.auth.mode), deadline)?;
            let status = response.status().as_u16();
            if status == 401 && !renewed {
                token = self.auth.renew(&token, &self.http, deadline)?;
                renewed = true;
                continue;
            }
            if matches!(status, 429 | 503)
                && let Some(wait) = retry_after(&response)
            {
                // A loaded ZVM said when to come back: never sooner, and only within the
                // deadline (the wait is shared by every later call of this client).
                let until = Instant::now() + wait;
                let mut not_before = self
                    .not_before
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                *not_before = Some(not_before.map_or(until, |t| t.max(until)));
                drop(not_before);
                if wait < deadline.remaining() {
                    continue;
                }
            }
            if response.status().is_success() {
                return Ok(response);
            }
            let url = self.http.url(path);
            let text = read_text(method.as_str(), &url, &mut response).unwrap_or_default();
            return Err(ZvmError::Status {
                method: method.as_str(),
                url,
                status,
                message: error_message(&text),
            });
        }
    }
}

impl Client {
    /// Sleeps until the ZVM's `Retry-After` has passed; a wait beyond the deadline is a
    /// timeout without asking.
    fn wait_until_allowed(
        &self,
        method: &'static str,
        path: &str,
        deadline: &Deadline,
    ) -> Result<(), ZvmError> {
        let not_before = *self
            .not_before
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(wait) = not_before.and_then(|t| t.checked_duration_since(Instant::now())) else {
            return Ok(());
        };
        if wait >= deadline.remaining() {
            return Err(ZvmError::TimedOut {
                method,
                url: self.http.url(path),
            });
        }
        std::thread::sleep(wait);
        Ok(())
    }
}

/// The wait a 429 or 503 asks for: `Retry-After` in seconds, or as an HTTP date; at least a
/// second (a ZVM saying 0 must not be asked again in a tight loop) and at most an hour.
fn retry_after(response: &Response<Body>) -> Option<Duration> {
    let value = response.headers().get("retry-after")?.to_str().ok()?.trim();
    let wait = match value.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => httpdate(value)?
            .duration_since(SystemTime::now())
            .unwrap_or_default(),
    };
    Some(wait.clamp(Duration::from_secs(1), Duration::from_secs(3600)))
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn httpdate(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339(&{
        let parts: Vec<&str> = text.split_whitespace().collect();
        let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
            return None;
        };
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let month = months.iter().position(|m| m == month)? + 1;
        format!("{year}-{month:02}-{day:0>2}T{time}Z")
    })
    .ok()
}

/// Keeps an id from escaping its path segment.
fn segment(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            '/' | '?' | '#' | '%' | ' ' => '_',
            c => c,
        })
        .collect()
}

/// Why [`Client::download_to`] stopped.
#[derive(Debug)]
pub enum DownloadError {
    /// The ZVM refused the download, or its body broke off (the error names the URL).
    Zvm(ZvmError),
    /// The destination refused the bytes (disk full, I/O error).
    Write(std::io::Error),
}

impl From<ZvmError> for DownloadError {
    fn from(e: ZvmError) -> Self {
        Self::Zvm(e)
    }
}

impl std::fmt::Display for DownloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Zvm(e) => e.fmt(f),
            Self::Write(e) => write!(f, "cannot write the download: {e}"),
        }
    }
}

impl std::error::Error for DownloadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Zvm(e) => Some(e),
            Self::Write(e) => Some(e),
        }
    }
}

/// Formats a time for a Zerto query parameter.
fn query_time(t: SystemTime) -> String {
    crate::time::format_utc_millis(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let answer = |value: &str| {
            let response = ureq::http::Response::builder()
                .status(429)
                .header("Retry-After", value)
                .body(Body::builder().data(""))
                .expect("response");
            retry_after(&response)
        };
        assert_eq!(answer("7"), Some(Duration::from_secs(7)));
        assert_eq!(answer("99999"), Some(Duration::from_secs(3600)), "capped");
        assert_eq!(
            answer("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::from_secs(1)),
            "a date passed waits the least"
        );
        assert_eq!(answer("0"), Some(Duration::from_secs(1)));
        assert_eq!(answer("soon"), None);
        assert_eq!(
            httpdate("Sun, 06 Nov 1994 08:49:37 GMT"),
            crate::time::parse_utc("1994-11-06T08:49:37Z").ok()
        );
    }
}
