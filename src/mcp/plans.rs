//! Restore plans that `recover_plan` made and `recover_file` may run: each once, while fresh,
//! and only with one of the ids the plan named typed back.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::recover::Plan;

/// A plan waiting for its confirmation.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub plan: Plan,
    /// `--volume` of the restore.
    pub volume: Option<String>,
    /// The file name written into the output directory.
    pub file_name: String,
    /// The ids a person may type to confirm: the checkpoint id, and the change id of its tag.
    pub confirm_ids: Vec<String>,
    made: Instant,
}

/// Why a plan cannot run.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    Unknown(String),
    Expired { id: String, after: Duration },
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unknown(id) => write!(
                f,
                "no plan {id:?}: it was never made, already ran, or this server restarted; make a new one with recover_plan"
            ),
            Self::Expired { id, after } => write!(
                f,
                "plan {id:?} expired: a plan is valid for {} s after recover_plan made it; make a new one",
                after.as_secs()
            ),
        }
    }
}

/// The plans of one server.
#[derive(Debug)]
pub(super) struct Plans {
    ttl: Duration,
    pending: Mutex<HashMap<String, Pending>>,
}

impl Plans {
    /// Plans valid for `ttl` after they are made.
    pub(super) fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// How long a plan stays valid.
    pub(super) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Keeps a plan and returns its one-time id.
    pub(super) fn add(
        &self,
        plan: Plan,
        volume: Option<String>,
        file_name: String,
        confirm_ids: Vec<String>,
    ) -> String {
        let id = format!("plan-{}", uuid::Uuid::new_v4().simple());
        let pending = Pending {
            plan,
            volume,
            file_name,
            confirm_ids,
            made: Instant::now(),
        };
        let mut map = self.lock();
        map.retain(|_, p| p.made.elapsed() <= self.ttl);
        map.insert(id.clone(), pending);
        id
    }

    /// The plan `id`, if it exists and is fresh; it stays until [`Plans::take`].
    pub(super) fn get(&self, id: &str) -> Result<Pending, Refused> {
        let mut map = self.lock();
        let Some(pending) = map.get(id) else {
            return Err(Refused::Unknown(id.to_owned()));
        };
        if pending.made.elapsed() > self.ttl {
            map.remove(id);
            return Err(Refused::Expired {
                id: id.to_owned(),
                after: self.ttl,
            });
        }
        Ok(pending.clone())
    }

    /// Removes the plan `id` so that it can run only once; false when another call took it.
    pub(super) fn take(&self, id: &str) -> bool {
        self.lock().remove(id).is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        // A panic while holding the lock leaves a consistent map: every change is one call.
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
