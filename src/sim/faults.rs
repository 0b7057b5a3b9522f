//! Fault injection: what can go wrong on the network, in a checkpoint insert or in an FLR mount.
//!
//! A [`Fault`] comes from a scenario's `[[fault]]` table, from `POST /_sim/faults` (the same
//! shape as JSON) or from [`Sim::add_fault`](super::Sim::add_fault). Network faults name a
//! `route`: `"METHOD /path"` where `*` matches any run of characters (`"GET /v1/vpgs/*"`),
//! compared case-insensitively, or just `"*"` for every request. The simulator's own `/_sim`
//! endpoints are never faulted.

use serde::{Deserialize, Serialize};

/// One injected fault. `kind` selects the variant (kebab-case), e.g.
/// `{"kind": "status", "route": "GET /v1/vms", "status": 503, "times": 2}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fault {
    /// Delay the answer by `millis` real milliseconds.
    Latency { route: String, millis: u64 },
    /// Answer with this HTTP status and a `{"Message": ...}` body, `times` times (always when absent).
    Status {
        route: String,
        status: u16,
        times: Option<u32>,
    },
    /// Read the request and never answer, until the simulator stops.
    Hang { route: String },
    /// Close the connection without answering.
    Drop { route: String },
    /// Carry the request out, then close the connection without answering (the client
    /// cannot tell whether anything happened).
    DropAnswer { route: String },
    /// Answer HTTP 200 with this body instead: what another ZVM version, or a broken one,
    /// might send (older date formats, a field that is not what `rewind` needs).
    Body { route: String, body: String },
    /// Every tagged-checkpoint insert on this VPG (name or id) ends in this state with this reason.
    InsertFails {
        vpg: String,
        state: FailState,
        reason: String,
    },
    /// The next `times` inserts on this VPG fail the way a concurrent insert from elsewhere does.
    InsertBusy { vpg: String, times: u32 },
    /// Inserts on this VPG complete, but their tag never shows up in the checkpoint list.
    TagNeverListed { vpg: String },
    /// FLR mounts of this VM (name or id) end in `MountFailed`.
    MountFails { vm: String },
    /// FLR mounts of this VM stay `MountInProgress` forever.
    MountHangs { vm: String },
    /// FLR downloads from this VM answer HTTP 500.
    DownloadFails { vm: String },
    // What real appliances do differently (each a behaviour a ZVM was seen or documented to
    // have; the client must end in a confirmed checkpoint, a restored file or a refusal):
    /// 9.x `POST /v1/session/add` logs in only with this `AuthenticationMethod` (0 the ZVM
    /// host's Windows account, 1 a vCenter account); without it the lab's account is vCenter.
    SessionMethod { method: u8 },
    /// FLR browse answers pages of at most `size` items (`pageNumber` from 1; absent: page 1).
    BrowsePages { size: usize },
    /// FLR browse refuses (400) a body naming `pageNumber` or `pageSize`, as an older
    /// appliance does.
    BrowseRefusesPaging,
    /// The FLR download URL comes back in this form.
    DownloadUrl { form: UrlForm },
    /// FLR downloads are zip archives holding the file.
    DownloadZip,
    /// `GET /v1/vms` also lists a VM being deleted, with `VmName` and `VpgName` null.
    NullNameRows,
    /// `GET /v1/tasks/{id}` answers 401 once the task has ended.
    TaskGone401,
    /// Every `every`-th API request is answered `status` (429 or 503) with `Retry-After: secs`
    /// (real seconds); a request inside that window is refused again and counted as early.
    RetryAfter { status: u16, secs: u64, every: u32 },
    /// Tags are listed cut to `max` characters.
    NamesCut { max: usize },
    /// A journal VM restore's start task sits in WaitingForUserInput (2) while the VM is ready
    /// for commit, instead of completing.
    RestoreWaitsForCommit,
    /// Journal VM restores fail (task state 4) with this reason; the VM is untouched.
    RestoreFails { reason: String },
    /// `POST /v1/vms/{id}/Restore` answers HTTP 500 with Zerto's message, as in the lab of
    /// the SDK's author.
    Restore500,
    /// `RestoreCommit` and `RestoreRollback` refuse any body (400): only the body-less form
    /// of Zerto's SDK is accepted.
    RestoreDecisionNoBody,
    /// Stopping a failover test re-tags the tested checkpoint `Tested at <start time>`.
    RetagOnTestStop,
}

/// The form of an FLR download URL (`download-url` fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UrlForm {
    /// `v1/downloads/…`: relative, no leading slash.
    Relative,
    /// `/v1/downloads/…`.
    RootRelative,
    /// Absolute on another name of the ZVM (`localhost` for `127.0.0.1`).
    OtherHost,
}

/// The terminal state an `insert-fails` fault forces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailState {
    /// Task state 4.
    Failed,
    /// Task state 5.
    Stopped,
}

/// What a network fault does to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NetAction {
    Status(u16),
    Hang,
    Drop,
    DropAnswer,
    Body(String),
}

/// How an insert ends because of a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InsertFault {
    Fail { state: FailState, reason: String },
    Busy,
}

impl Fault {
    /// Checks the fault's fields; `vpg_known`/`vm_known` say whether a reference exists.
    pub(crate) fn check(
        &self,
        vpg_known: impl Fn(&str) -> bool,
        vm_known: impl Fn(&str) -> bool,
    ) -> Result<(), String> {
        match self {
            Fault::Latency { route, .. }
            | Fault::Hang { route }
            | Fault::Drop { route }
            | Fault::DropAnswer { route }
            | Fault::Body { route, .. } => check_route(route),
            Fault::Status { route, status, .. } => {
                check_route(route)?;
                if (100..=599).contains(status) {
                    Ok(())
                } else {
                    Err(format!("status {status} is not an HTTP status code"))
                }
            }
            Fault::InsertFails { vpg, .. }
            | Fault::InsertBusy { vpg, .. }
            | Fault::TagNeverListed { vpg } => {
                if vpg_known(vpg) {
                    Ok(())
                } else {
                    Err(format!("no VPG named {vpg:?}"))
                }
            }
            Fault::MountFails { vm } | Fault::MountHangs { vm } | Fault::DownloadFails { vm } => {
                if vm_known(vm) {
                    Ok(())
                } else {
                    Err(format!("no VM named {vm:?}"))
                }
            }
            Fault::SessionMethod { method } if *method > 1 => Err(format!(
                "method {method} is not 0 (Windows account) or 1 (vCenter account)"
            )),
            Fault::BrowsePages { size: 0 } => Err(String::from("size must be at least 1")),
            Fault::NamesCut { max: 0 } => Err(String::from("max must be at least 1")),
            Fault::RetryAfter { status, every, .. } => {
                if ![429, 503].contains(status) {
                    Err(format!("status {status} is not 429 or 503"))
                } else if *every < 2 {
                    Err(String::from(
                        "every must be at least 2 (every request refused is a dead ZVM)",
                    ))
                } else {
                    Ok(())
                }
            }
            Fault::SessionMethod { .. }
            | Fault::BrowsePages { .. }
            | Fault::BrowseRefusesPaging
            | Fault::DownloadUrl { .. }
            | Fault::DownloadZip
            | Fault::NullNameRows
            | Fault::TaskGone401
            | Fault::NamesCut { .. }
            | Fault::RestoreWaitsForCommit
            | Fault::RestoreFails { .. }
            | Fault::Restore500
            | Fault::RestoreDecisionNoBody
            | Fault::RetagOnTestStop => Ok(()),
        }
    }
}

fn check_route(route: &str) -> Result<(), String> {
    if route.trim() == "*" {
        return Ok(());
    }
    match route.trim().split_once(' ') {
        Some((method, path)) if !method.is_empty() && path.trim_start().starts_with(['/', '*']) => {
            Ok(())
        }
        _ => Err(format!(
            "route {route:?} is not \"METHOD /path\" (with * globs) or \"*\""
        )),
    }
}

/// Whether a fault's `route` matches a request.
pub(crate) fn route_matches(route: &str, method: &str, path: &str) -> bool {
    let route = route.trim();
    if route == "*" {
        return true;
    }
    let Some((want_method, want_path)) = route.split_once(' ') else {
        return false;
    };
    glob(want_method, method) && glob(want_path.trim(), path)
}

/// Case-insensitive glob where `*` matches any run of characters, including `/`.
fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.to_lowercase().chars().collect();
    let text: Vec<char> = text.to_lowercase().chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '*' {
            backtrack = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star, matched)) = backtrack {
            p = star + 1;
            t = matched + 1;
            backtrack = Some((star, matched + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// The faults in force, with the countdowns of those limited to a number of uses.
#[derive(Debug, Default)]
pub(crate) struct FaultSet {
    active: Vec<Active>,
}

#[derive(Debug)]
struct Active {
    fault: Fault,
    remaining: Option<u32>,
}

impl FaultSet {
    pub(crate) fn add(&mut self, fault: Fault) {
        let remaining = match &fault {
            Fault::Status { times, .. } => *times,
            Fault::InsertBusy { times, .. } => Some(*times),
            _ => None,
        };
        if remaining != Some(0) {
            self.active.push(Active { fault, remaining });
        }
    }

    pub(crate) fn clear(&mut self) {
        self.active.clear();
    }

    pub(crate) fn list(&self) -> Vec<Fault> {
        self.active.iter().map(|a| a.fault.clone()).collect()
    }

    /// The network faults for one request: total added latency, then the first action (if any)
    /// in the order the faults were added. Uses up one of a limited fault's times.
    pub(crate) fn network(&mut self, method: &str, path: &str) -> (u64, Option<NetAction>) {
        let mut latency = 0_u64;
        let mut action = None;
        for active in &mut self.active {
            match &active.fault {
                Fault::Latency { route, millis } if route_matches(route, method, path) => {
                    latency = latency.saturating_add(*millis);
                }
                Fault::Status { route, status, .. }
                    if action.is_none() && route_matches(route, method, path) =>
                {
                    action = Some(NetAction::Status(*status));
                    active.remaining = active.remaining.map(|n| n.saturating_sub(1));
                }
                Fault::Hang { route } if action.is_none() && route_matches(route, method, path) => {
                    action = Some(NetAction::Hang);
                }
                Fault::Drop { route } if action.is_none() && route_matches(route, method, path) => {
                    action = Some(NetAction::Drop);
                }
                Fault::DropAnswer { route }
                    if action.is_none() && route_matches(route, method, path) =>
                {
                    action = Some(NetAction::DropAnswer);
                }
                Fault::Body { route, body }
                    if action.is_none() && route_matches(route, method, path) =>
                {
                    action = Some(NetAction::Body(body.clone()));
                }
                _ => {}
            }
        }
        self.prune();
        (latency, action)
    }

    /// How the next insert on a VPG is forced to end, if at all (`is_vpg` matches name or id).
    /// A pending `insert-busy` is used up first.
    pub(crate) fn insert(&mut self, is_vpg: impl Fn(&str) -> bool) -> Option<InsertFault> {
        let busy = self
            .active
            .iter_mut()
            .find(|a| matches!(&a.fault, Fault::InsertBusy { vpg, .. } if is_vpg(vpg)));
        if let Some(active) = busy {
            active.remaining = active.remaining.map(|n| n.saturating_sub(1));
            self.prune();
            return Some(InsertFault::Busy);
        }
        self.active.iter().find_map(|a| match &a.fault {
            Fault::InsertFails { vpg, state, reason } if is_vpg(vpg) => Some(InsertFault::Fail {
                state: *state,
                reason: reason.clone(),
            }),
            _ => None,
        })
    }

    /// Whether inserts on a VPG are never listed.
    pub(crate) fn tag_never_listed(&self, is_vpg: impl Fn(&str) -> bool) -> bool {
        self.active
            .iter()
            .any(|a| matches!(&a.fault, Fault::TagNeverListed { vpg } if is_vpg(vpg)))
    }

    /// Whether a VM's mounts fail.
    pub(crate) fn mount_fails(&self, is_vm: impl Fn(&str) -> bool) -> bool {
        self.active
            .iter()
            .any(|a| matches!(&a.fault, Fault::MountFails { vm } if is_vm(vm)))
    }

    /// Whether a VM's mounts never finish.
    pub(crate) fn mount_hangs(&self, is_vm: impl Fn(&str) -> bool) -> bool {
        self.active
            .iter()
            .any(|a| matches!(&a.fault, Fault::MountHangs { vm } if is_vm(vm)))
    }

    /// Whether a VM's downloads fail.
    pub(crate) fn download_fails(&self, is_vm: impl Fn(&str) -> bool) -> bool {
        self.active
            .iter()
            .any(|a| matches!(&a.fault, Fault::DownloadFails { vm } if is_vm(vm)))
    }

    /// The first appliance behaviour `pick` finds among the faults in force.
    pub(crate) fn appliance<T>(&self, pick: impl Fn(&Fault) -> Option<T>) -> Option<T> {
        self.active.iter().find_map(|a| pick(&a.fault))
    }

    fn prune(&mut self) {
        self.active.retain(|a| a.remaining != Some(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_case_insensitively_with_globs() {
        assert!(route_matches("*", "DELETE", "/anything"));
        assert!(route_matches("GET /v1/vms", "GET", "/V1/VMs"));
        assert!(!route_matches("GET /v1/vms", "GET", "/v1/vms/x"));
        assert!(route_matches(
            "get /v1/vpgs/*/checkpoints",
            "GET",
            "/v1/vpgs/abc-1/Checkpoints"
        ));
        assert!(!route_matches(
            "GET /v1/vpgs/*/checkpoints",
            "POST",
            "/v1/vpgs/abc/checkpoints"
        ));
        assert!(route_matches("* /v1/*", "POST", "/v1/vpgs/abc/checkpoints"));
        assert!(route_matches(
            "POST /auth/*",
            "POST",
            "/auth/realms/zerto/protocol/openid-connect/token"
        ));
        assert!(!route_matches("GET /v1/t*s", "GET", "/v1/tasks/x"));
    }

    #[test]
    fn route_syntax_is_checked() {
        let none = |_: &str| false;
        let bad = Fault::Hang {
            route: "/v1/vms".into(),
        };
        assert!(bad.check(none, none).unwrap_err().contains("\"/v1/vms\""));
        assert!(
            Fault::Drop {
                route: "GET /v1/vms".into()
            }
            .check(none, none)
            .is_ok()
        );
        let status = Fault::Status {
            route: "*".into(),
            status: 42,
            times: None,
        };
        assert!(status.check(none, none).is_err());
        let vpg = Fault::TagNeverListed { vpg: "nope".into() };
        assert_eq!(vpg.check(none, none).unwrap_err(), "no VPG named \"nope\"");
    }

    #[test]
    fn limited_faults_are_used_up() {
        let mut set = FaultSet::default();
        set.add(Fault::Status {
            route: "GET /v1/vms".into(),
            status: 503,
            times: Some(2),
        });
        set.add(Fault::Latency {
            route: "*".into(),
            millis: 5,
        });
        assert_eq!(
            set.network("GET", "/v1/vms"),
            (5, Some(NetAction::Status(503)))
        );
        assert_eq!(
            set.network("GET", "/v1/vms"),
            (5, Some(NetAction::Status(503)))
        );
        assert_eq!(set.network("GET", "/v1/vms"), (5, None));
        assert_eq!(set.list().len(), 1);
    }

    #[test]
    fn insert_busy_counts_down_before_insert_fails() {
        let mut set = FaultSet::default();
        set.add(Fault::InsertFails {
            vpg: "a".into(),
            state: FailState::Stopped,
            reason: "r".into(),
        });
        set.add(Fault::InsertBusy {
            vpg: "A".into(),
            times: 1,
        });
        let is_a = |name: &str| name.eq_ignore_ascii_case("a");
        assert_eq!(set.insert(is_a), Some(InsertFault::Busy));
        assert_eq!(
            set.insert(is_a),
            Some(InsertFault::Fail {
                state: FailState::Stopped,
                reason: "r".into()
            })
        );
        assert_eq!(set.insert(|name: &str| name == "b"), None);
    }

    #[test]
    fn faults_read_from_json_and_refuse_unknown_keys() {
        let fault: Fault =
            serde_json::from_str(r#"{"kind":"insert-busy","vpg":"web-a","times":2}"#)
                .expect("valid");
        assert_eq!(
            fault,
            Fault::InsertBusy {
                vpg: "web-a".into(),
                times: 2
            }
        );
        let fault: Fault =
            serde_json::from_str(r#"{"kind":"status","route":"*","status":500}"#).expect("valid");
        assert_eq!(
            fault,
            Fault::Status {
                route: "*".into(),
                status: 500,
                times: None
            }
        );
        let err =
            serde_json::from_str::<Fault>(r#"{"kind":"hang","route":"*","millis":1}"#).unwrap_err();
        assert!(err.to_string().contains("millis"), "{err}");
    }
}
