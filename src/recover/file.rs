//! Writing the restored file: through a fresh temporary file beside the destination, hashed
//! as it is written, put in place only when complete, never over a file without `--force`.

use std::path::Path;

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};

/// Writes through a fresh temporary file beside the destination (created exclusively, mode
/// 0600, so a planted link at its name is never followed) that `fill` writes (it is told the
/// file's path for messages), then syncs it and puts it in place: over an existing file only
/// with `force`, else never replacing a file that appeared meanwhile. On any failure the
/// temporary file is removed and the destination is untouched.
pub(super) fn write_atomically<T>(
    destination: &Path,
    force: bool,
    fill: impl FnOnce(&mut std::fs::File, &Path) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let dir = destination
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = destination
        .file_name()
        .with_context(|| format!("{} names no file", destination.display()))?
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.rewind-"))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let tmp_path = tmp.path().to_path_buf();
    let value = fill(tmp.as_file_mut(), &tmp_path)?;
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("cannot write {}", tmp_path.display()))?;
    let placed = if force {
        tmp.persist(destination)
    } else {
        tmp.persist_noclobber(destination)
    };
    placed
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", destination.display()))?;
    Ok(value)
}

/// A writer that hashes what passes through it.
pub(super) struct Hashing<'a, W> {
    inner: &'a mut W,
    hasher: Sha256,
}

impl<'a, W> Hashing<'a, W> {
    pub(super) fn new(inner: &'a mut W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
        }
    }

    /// The SHA-256 of everything written, in hex.
    pub(super) fn sha256(self) -> String {
        crate::hex(&self.hasher.finalize())
    }
}

impl<W: std::io::Write> std::io::Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use anyhow::bail;

    use super::*;

    fn write(dest: &Path, bytes: &[u8], force: bool) -> anyhow::Result<()> {
        write_atomically(dest, force, |file, _| Ok(file.write_all(bytes)?))
    }

    #[test]
    fn writing_never_replaces_without_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dest = dir.path().join("app.conf");
        write(&dest, b"one", false).expect("first");
        assert!(write(&dest, b"two", false).is_err());
        assert_eq!(std::fs::read(&dest).expect("read"), b"one");
        write(&dest, b"three", true).expect("forced");
        assert_eq!(std::fs::read(&dest).expect("read"), b"three");
        let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary file left behind");
    }

    #[test]
    fn a_failed_write_leaves_neither_temporary_file_nor_destination() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dest = dir.path().join("app.conf");
        let err = write_atomically(&dest, false, |file, _| -> anyhow::Result<()> {
            file.write_all(b"half")?;
            bail!("the download broke off")
        })
        .unwrap_err();
        assert!(err.to_string().contains("broke off"), "{err:#}");
        assert!(!dest.exists(), "no partial destination");
        let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 0, "the temporary file is removed");
    }

    #[test]
    fn a_planted_symlink_at_the_destination_is_never_written_through() {
        if !crate::platform::MODE_BITS {
            return; // planting a link needs an administrator on Windows
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").expect("victim");
        let dest = dir.path().join("app.conf");
        crate::platform::symlink(&victim, &dest).expect("plant");
        assert!(
            write(&dest, b"restored", false).is_err(),
            "a link is a file there"
        );
        assert_eq!(std::fs::read(&victim).expect("victim"), b"precious");
        // With --force the link itself is replaced, never its target.
        write(&dest, b"restored", true).expect("forced");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"precious");
        assert_eq!(std::fs::read(&dest).expect("dest"), b"restored");
        assert!(!std::fs::symlink_metadata(&dest).expect("dest").is_symlink());
    }
}
