//! Writing the restored file: through a fresh temporary file beside the destination, hashed
//! as it is written, put in place only when complete, never over a file without `--force`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use sha2::{Digest as _, Sha256};

/// A temporary file next to the destination, created fresh (never through a planted link)
/// and removed when dropped unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    file: std::fs::File,
    renamed: bool,
}

impl TempFile {
    /// How many names are tried before giving up (each is taken only if nothing is there).
    const ATTEMPTS: u32 = 32;

    fn create(dir: &Path, name: &str) -> anyhow::Result<TempFile> {
        for attempt in 0..Self::ATTEMPTS {
            let path = dir.join(temp_name(name, attempt));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(TempFile {
                        path,
                        file,
                        renamed: false,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()));
                }
            }
        }
        bail!(
            "cannot create a temporary file in {}: {} names were all taken",
            dir.display(),
            Self::ATTEMPTS
        )
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The name of the temporary file for `name`, per attempt.
fn temp_name(name: &str, attempt: u32) -> String {
    format!(".{name}.rewind-{}-{attempt}", std::process::id())
}

/// Writes through a fresh temporary file that `fill` writes (it is told the file's path for
/// messages), then syncs it and puts it in place with a rename (`force`) or a hard link that
/// never replaces a file that appeared meanwhile. On any failure the temporary file is
/// removed and the destination is untouched.
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
    let mut tmp = TempFile::create(dir, &name)?;
    let value = fill(&mut tmp.file, &tmp.path)?;
    tmp.file
        .sync_all()
        .with_context(|| format!("cannot write {}", tmp.path.display()))?;
    if force {
        std::fs::rename(&tmp.path, destination)
            .with_context(|| format!("cannot write {}", destination.display()))?;
        tmp.renamed = true;
    } else {
        std::fs::hard_link(&tmp.path, destination)
            .with_context(|| format!("cannot write {}", destination.display()))?;
    }
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

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_at_the_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").expect("victim");
        let planted = dir.path().join(temp_name("app.conf", 0));
        std::os::unix::fs::symlink(&victim, &planted).expect("plant");
        let dest = dir.path().join("app.conf");
        write(&dest, b"restored", false).expect("written under another name");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"precious");
        assert_eq!(std::fs::read(&dest).expect("dest"), b"restored");
        assert!(
            std::fs::symlink_metadata(&planted).is_ok(),
            "somebody else's file is left alone"
        );
    }
}
