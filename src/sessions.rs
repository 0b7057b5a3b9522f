//! Sessions opened by an earlier tool call, remembered so that a later call naming the session
//! can be put on the right VM.
//!
//! Some MCP servers bind the target once and refer to it afterwards: `ssh_connect {name,
//! host}` then `ssh_exec {sessionName}`, `ssh_session_start {server}` then `ssh_session_send
//! {session_id}`, `open-session {name}` then `run-command {session}`. The follow-up names no
//! host. When the hook sees the opening call (its catalog entry says `opens_session`), it
//! remembers "this session name, on this server, in this host session, is on this VM"; the
//! follow-up (its entry says `session_arg`) looks it up. Nothing remembered, or the same name
//! opened on two VMs, → the hook asks.
//!
//! The store is one small JSON file in the user's state directory, mode 0600, written
//! atomically under a lock: at most [`MAX_SESSIONS`] records, each forgotten after
//! [`TTL`]. A file that cannot be read is treated as empty, so a lost or damaged file
//! makes follow-ups ask rather than guess.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::catalog::same_server;
use crate::deadline::Deadline;
use crate::lockfile;

/// The most sessions remembered; the oldest are forgotten first.
pub(crate) const MAX_SESSIONS: usize = 256;
/// How long a remembered session counts.
pub(crate) const TTL: Duration = Duration::from_secs(12 * 3600);
/// The longest session name or VM reference remembered; longer ones are not (the follow-up
/// asks), since a truncated name could match another session.
const MAX_FIELD: usize = 256;
/// The largest store file read: every record at its longest, with room for the JSON.
const MAX_BYTES: u64 = (MAX_SESSIONS * (4 * MAX_FIELD + 64)) as u64;
/// Longest wait for another hook process holding the store.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// One remembered session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Remembered {
    /// The host's session id (Claude Code's `session_id`): sessions never cross agent sessions.
    host_session: String,
    server: String,
    /// The session's name or id as the follow-up names it.
    name: String,
    /// The VM reference the session was opened on.
    vm: String,
    /// When it was opened, in seconds since the Unix epoch.
    at: u64,
    /// The same name was opened again on another VM: which one the server kept is unknown
    /// (a reconnect may have failed), so follow-ups ask until the record expires.
    #[serde(default)]
    ambiguous: bool,
}

/// What is remembered of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Recalled {
    /// Nothing fresh: never opened in this host session, or forgotten.
    Nothing,
    /// Opened on this VM.
    Vm(String),
    /// Opened on no one known VM, or on two: follow-ups ask.
    Ambiguous,
}

impl Recalled {
    /// The VM, when it is known.
    pub(crate) fn vm(self) -> Option<String> {
        match self {
            Recalled::Vm(vm) => Some(vm),
            Recalled::Nothing | Recalled::Ambiguous => None,
        }
    }
}

/// The store file.
#[derive(Debug, Clone)]
pub(crate) struct Sessions {
    path: PathBuf,
}

impl Sessions {
    /// The store in `dir` (the user's state directory).
    pub(crate) fn in_dir(dir: &Path) -> Sessions {
        Sessions {
            path: dir.join("sessions.json"),
        }
    }

    /// Remembers that `name` on `server`, in host session `host_session`, is on `vm` (`None`:
    /// on no one known VM, which makes it ambiguous). The
    /// same name opened again on the same VM refreshes the record; on another VM it makes the
    /// session ambiguous (the server may have refused the second open and kept the first VM),
    /// and follow-ups ask until it expires.
    pub(crate) fn remember(
        &self,
        host_session: &str,
        server: &str,
        name: &str,
        vm: Option<&str>,
        now: SystemTime,
    ) -> anyhow::Result<()> {
        // No one VM (the opening call named several, or an unusable value): the session is
        // remembered as ambiguous, so follow-ups ask.
        let (vm, unknown) = match vm {
            Some(vm) => (vm, false),
            None => ("", true),
        };
        if [host_session, server, name]
            .iter()
            .any(|f| f.is_empty() || f.len() > MAX_FIELD)
            || vm.len() > MAX_FIELD
            || (vm.is_empty() && !unknown)
        {
            anyhow::bail!("session name or VM is empty or longer than {MAX_FIELD} bytes");
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        lockfile::create_private_dir(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let _lock = lockfile::lock(
            &self.path.with_extension("lock"),
            &Deadline::after(LOCK_WAIT),
        )?;
        let at = seconds(now);
        let (earlier, mut records): (Vec<Remembered>, Vec<Remembered>) = self
            .read()
            .into_iter()
            .filter(|r| fresh(r, at))
            .partition(|r| r.same_session(host_session, server, name));
        let ambiguous = unknown || earlier.iter().any(|r| r.ambiguous || r.vm != vm);
        records.push(Remembered {
            host_session: host_session.to_owned(),
            server: server.to_owned(),
            name: name.to_owned(),
            vm: vm.to_owned(),
            at,
            ambiguous,
        });
        let excess = records.len().saturating_sub(MAX_SESSIONS);
        records.drain(..excess);
        let bytes = serde_json::to_vec(&records)?;
        lockfile::write_private_atomic(&self.path, &bytes)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// What is remembered of a session (reading only: nothing is created or written).
    pub(crate) fn recalled(
        &self,
        host_session: &str,
        server: &str,
        name: &str,
        now: SystemTime,
    ) -> Recalled {
        let at = seconds(now);
        match self
            .read()
            .into_iter()
            .rev()
            .find(|r| fresh(r, at) && r.same_session(host_session, server, name))
        {
            None => Recalled::Nothing,
            Some(r) if r.ambiguous => Recalled::Ambiguous,
            Some(r) => Recalled::Vm(r.vm),
        }
    }

    /// Every record, or none when the file is missing, too large, not a plain file, or in a
    /// directory that is not the user's own (anyone who can write there could plant one).
    /// A directory that is not there is not created: nothing was remembered in it.
    fn read(&self) -> Vec<Remembered> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if !dir.is_dir() || lockfile::create_private_dir(dir).is_err() {
            return Vec::new();
        }
        let Ok(meta) = std::fs::symlink_metadata(&self.path) else {
            return Vec::new();
        };
        if !meta.is_file() || meta.len() > MAX_BYTES {
            return Vec::new();
        }
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }
}

impl Remembered {
    fn same_session(&self, host_session: &str, server: &str, name: &str) -> bool {
        self.host_session == host_session && same_server(&self.server, server) && self.name == name
    }
}

fn fresh(record: &Remembered, now: u64) -> bool {
    record.at <= now && now - record.at < TTL.as_secs()
}

fn seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_session_is_recalled_in_its_host_session_and_server_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Sessions::in_dir(dir.path());
        store
            .remember("cc-1", "ssh", "s1", Some("web01"), at(1000))
            .expect("remember");
        assert_eq!(
            store.recalled("cc-1", "ssh", "s1", at(1001)).vm(),
            Some("web01".into())
        );
        assert_eq!(store.recalled("cc-2", "ssh", "s1", at(1001)).vm(), None);
        assert_eq!(store.recalled("cc-1", "ssh-mcp", "s1", at(1001)).vm(), None);
        assert_eq!(store.recalled("cc-1", "ssh", "s2", at(1001)).vm(), None);
        assert_eq!(
            store.recalled("cc-1", "SSH", "s1", at(1001)).vm(),
            Some("web01".into()),
            "server names compare like catalog servers"
        );
    }

    #[test]
    fn reopening_a_session_elsewhere_makes_it_ambiguous_and_old_ones_expire() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Sessions::in_dir(dir.path());
        let remember = |vm: &str, secs: u64| {
            store
                .remember("cc", "ssh", "s1", Some(vm), at(secs))
                .expect("remember");
        };
        remember("web01", 1000);
        remember("web01", 1005);
        assert_eq!(
            store.recalled("cc", "ssh", "s1", at(1006)).vm(),
            Some("web01".into())
        );
        remember("db01", 1010);
        assert_eq!(
            store.recalled("cc", "ssh", "s1", at(1011)).vm(),
            None,
            "web01 or db01: ask"
        );
        remember("db01", 1020);
        assert_eq!(
            store.recalled("cc", "ssh", "s1", at(1021)).vm(),
            None,
            "still ambiguous"
        );
        let later = 1020 + TTL.as_secs();
        assert_eq!(store.recalled("cc", "ssh", "s1", at(later)).vm(), None);
        remember("db01", later);
        assert_eq!(
            store.recalled("cc", "ssh", "s1", at(later + 1)).vm(),
            Some("db01".into())
        );
        store
            .remember("cc", "ssh", "s1", None, at(later + 2))
            .expect("opened on no one VM");
        assert_eq!(store.recalled("cc", "ssh", "s1", at(later + 3)).vm(), None);
    }

    #[test]
    fn the_store_is_bounded_and_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Sessions::in_dir(dir.path());
        for i in 0..MAX_SESSIONS + 10 {
            store
                .remember("cc", "ssh", &format!("s{i}"), Some("web01"), at(1000))
                .expect("remember");
        }
        assert_eq!(store.read().len(), MAX_SESSIONS);
        assert_eq!(
            store.recalled("cc", "ssh", "s0", at(1001)).vm(),
            None,
            "oldest went first"
        );
        assert!(store.recalled("cc", "ssh", "s265", at(1001)).vm().is_some());
        if let Some(mode) = crate::platform::mode(&dir.path().join("sessions.json")) {
            assert_eq!(mode & 0o777, 0o600);
        }
        let long = "x".repeat(MAX_FIELD + 1);
        assert!(
            store
                .remember("cc", "ssh", &long, Some("web01"), at(1000))
                .is_err()
        );
    }

    #[test]
    fn a_store_in_a_directory_others_can_write_is_not_believed() {
        if !crate::platform::MODE_BITS {
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Sessions::in_dir(dir.path());
        store
            .remember("cc", "ssh", "s1", Some("web01"), at(1000))
            .expect("remember");
        crate::platform::set_mode(dir.path(), 0o777).expect("chmod");
        assert_eq!(store.recalled("cc", "ssh", "s1", at(1001)).vm(), None);
        crate::platform::set_mode(dir.path(), 0o700).expect("chmod");
        assert_eq!(
            store.recalled("cc", "ssh", "s1", at(1001)).vm(),
            Some("web01".into())
        );
    }

    #[test]
    fn a_damaged_file_forgets_rather_than_guesses() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("sessions.json"), b"{not json").expect("write");
        let store = Sessions::in_dir(dir.path());
        assert_eq!(store.recalled("cc", "ssh", "s1", at(1000)).vm(), None);
        store
            .remember("cc", "ssh", "s1", Some("web01"), at(1000))
            .expect("overwrites");
        assert_eq!(
            store.recalled("cc", "ssh", "s1", at(1001)).vm(),
            Some("web01".into())
        );
    }
}
