//! Cross-process exclusive locks on files, acquired under a deadline, and the private files
//! and directories they (and the token cache and audit trail) live in. The hook runs one
//! process per tool call, so this is how parallel calls take turns (per VPG, per token).
//!
//! Private means: directories created with mode 0700, and refused when another user owns
//! them or group or others may write them (whoever can write there can replace our files);
//! files created with mode 0600 and never opened through a symbolic link (`O_NOFOLLOW`), so
//! a link planted at a lock, token or audit path cannot redirect the write.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::deadline::Deadline;

/// Holds the lock until dropped (closing the file releases it).
#[derive(Debug)]
pub struct LockGuard {
    _file: File,
}

/// Why a lock could not be taken.
#[derive(Debug)]
pub enum LockError {
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    TimedOut {
        path: PathBuf,
    },
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, error } => write!(f, "cannot lock {}: {error}", path.display()),
            Self::TimedOut { path } => write!(
                f,
                "another rewind process held {} until the deadline",
                path.display()
            ),
        }
    }
}

impl std::error::Error for LockError {}

/// Takes an exclusive lock on `path` (created with mode 0600 if missing), waiting at most
/// until `deadline`.
pub fn lock(path: &Path, deadline: &Deadline) -> Result<LockGuard, LockError> {
    lock_unless(path, deadline, &|| false)
}

/// [`lock`], giving up (as [`LockError::TimedOut`]) as soon as `stop` says so.
pub fn lock_unless(
    path: &Path,
    deadline: &Deadline,
    stop: &dyn Fn() -> bool,
) -> Result<LockGuard, LockError> {
    let io = |error| LockError::Io {
        path: path.to_path_buf(),
        error,
    };
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(io)?;
    }
    let file = open_private(path).map_err(io)?;
    let mut pause = Duration::from_millis(10);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(LockGuard { _file: file }),
            Err(TryLockError::WouldBlock) => {
                if stop() || !deadline.sleep(pause) {
                    return Err(LockError::TimedOut {
                        path: path.to_path_buf(),
                    });
                }
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Err(TryLockError::Error(error)) => return Err(io(error)),
        }
    }
}

/// Creates a directory (and missing parents) with mode 0700, or checks an existing one: it
/// must be a directory owned by this user that neither group nor others can write. The
/// check comes first: the directory nearly always exists (the hook appends to the audit trail
/// in it on every call), and one look at it is all that case costs.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    match check_private_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        checked => return checked,
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    crate::platform::make_private_dir_builder(&mut builder);
    builder.create(dir)?;
    check_private_dir(dir)
}

/// Whether this process runs as root (on Windows: never said, see `platform`).
pub fn is_root() -> bool {
    crate::platform::is_root()
}

/// Whether only root can change `path`: it and every directory above it belong to root and
/// group and others cannot write them. A directory with the sticky bit (`/tmp`) counts as
/// closed to others, since only an entry's owner can replace it there. `Err` names the first
/// one that fails, and why. On Windows: SYSTEM, the Administrators or TrustedInstaller own
/// each, and no ACL lets anyone else change them.
pub fn only_root_can_change(path: &Path) -> Result<(), String> {
    crate::platform::only_root_can_change(path)
}

/// Refuses a directory another user owns or that group or others can write.
fn check_private_dir(dir: &Path) -> std::io::Result<()> {
    let meta = std::fs::metadata(dir)?;
    let refuse = |why: String| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} {why}", dir.display()),
        ))
    };
    if !meta.is_dir() {
        return refuse(String::from("is not a directory"));
    }
    crate::platform::check_private_dir(dir, &meta).or_else(refuse)
}

/// Options for a private file: mode 0600 when created, and never through a symbolic link.
fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    crate::platform::create_with_mode(&mut options, 0o600);
    crate::platform::open_without_following(&mut options);
    options
}

/// Opens (creating if needed) a file readable and writable only by the user.
pub fn open_private(path: &Path) -> std::io::Result<File> {
    private_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Opens (creating if needed) a private file for appending, and for reading: every write goes
/// to the end, positioned atomically by the kernel. A file that is group- or world-readable
/// from an older version is made private.
pub fn open_append_private(path: &Path) -> std::io::Result<File> {
    let file = private_options()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    crate::platform::fix_private_file(&file, &meta)?;
    Ok(file)
}

/// Writes `bytes` to `path` atomically: a temporary file beside it (created exclusively with
/// mode 0600, so no planted link is followed), synced and renamed over `path`.
pub fn write_private_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".rewind-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// [`write_private_atomic`], the file then readable by everyone (mode 0644) before it takes
/// `path`'s place.
pub(crate) fn write_public_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".rewind-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    crate::platform::set_mode(tmp.path(), 0o644)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_waits_until_the_deadline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("locks/vpg.lock");
        let held = lock(&path, &Deadline::after(Duration::from_secs(1))).expect("first");
        let err = lock(&path, &Deadline::after(Duration::from_millis(50))).unwrap_err();
        assert!(matches!(err, LockError::TimedOut { .. }), "{err}");
        drop(held);
        lock(&path, &Deadline::after(Duration::from_millis(50))).expect("free again");
    }

    #[test]
    fn private_files_are_mode_0600() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("token.json");
        write_private_atomic(&path, b"{}").expect("write");
        if let Some(mode) = crate::platform::mode(&path) {
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
