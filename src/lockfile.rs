//! Cross-process exclusive locks on files, acquired under a deadline. The hook runs one
//! process per tool call, so this is how parallel calls take turns (per VPG, per token).

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
                if !deadline.sleep(pause) {
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

/// Creates a directory (and parents) readable only by the user.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens (creating if needed) a file readable and writable only by the user.
pub fn open_private(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
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

    #[cfg(unix)]
    #[test]
    fn private_files_are_mode_0600() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("token.json");
        write_private_atomic(&path, b"{}").expect("write");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
