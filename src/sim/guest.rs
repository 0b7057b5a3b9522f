//! Guest files with their history, as File Level Restore sees them.
//!
//! Every write records a new version stamped with a sequence number from the same counter that
//! stamps checkpoints, so "the file as it was at a checkpoint" is simply the newest version
//! written before that checkpoint, even when a frozen clock reports the same time for both.
//!
//! FLR paths name a volume first, then `/`-separated components: a Linux guest has one
//! `Volume1-Ext4` holding `/`; a Windows guest's drive `C:` is `Volume1-NTFS`, `D:` is
//! `Volume2-NTFS`, and so on. NTFS paths compare case-insensitively, ext4 paths exactly.

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::scenario::GuestOs;

/// One recorded content of a file.
#[derive(Debug, Clone)]
struct Version {
    seq: u64,
    written: SystemTime,
    bytes: Vec<u8>,
}

/// A file path inside the volumes, and its versions, oldest first.
#[derive(Debug, Clone)]
struct History {
    path: Vec<String>,
    versions: Vec<Version>,
}

/// What browsing a folder finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A volume at the root (e.g. `Volume1-Ext4`).
    Volume(String),
    /// A folder, with its full FLR path.
    Folder(String),
    /// A file, with its full FLR path, size and last write time.
    File {
        path: String,
        size: u64,
        written: SystemTime,
    },
}

/// The files of one VM over time.
#[derive(Debug, Clone)]
pub(crate) struct GuestFiles {
    os: GuestOs,
    files: BTreeMap<String, History>,
}

/// Checks that a guest path is absolute for its OS (`/etc/x`, `C:\Users\x`).
pub(crate) fn check_guest_path(os: GuestOs, path: &str) -> Result<(), String> {
    to_flr_path(os, path).map(|_| ())
}

/// Maps a guest path to its FLR components (`Volume1-Ext4`, `etc`, `app.conf`).
pub(crate) fn to_flr_path(os: GuestOs, path: &str) -> Result<Vec<String>, String> {
    let (volume, rest) = match os {
        GuestOs::Linux => {
            let rest = path
                .strip_prefix('/')
                .ok_or_else(|| format!("{path:?} is not an absolute Linux path"))?;
            (volume_label(os, 1), rest)
        }
        GuestOs::Windows => {
            let mut chars = path.chars();
            let (Some(letter), Some(':'), Some('\\' | '/')) =
                (chars.next(), chars.next(), chars.next())
            else {
                return Err(format!(
                    "{path:?} is not an absolute Windows path such as C:\\Users\\x.txt"
                ));
            };
            let letter = letter.to_ascii_uppercase();
            if !('C'..='Z').contains(&letter) {
                return Err(format!("{path:?}: drive {letter}: is not a data volume"));
            }
            (
                volume_label(os, u32::from(letter) - u32::from('C') + 1),
                &path[3..],
            )
        }
    };
    let mut components = vec![volume];
    for part in rest.split(['/', '\\']) {
        match part {
            "" => {}
            "." | ".." => return Err(format!("{path:?} must not contain . or ..")),
            _ => components.push(part.to_owned()),
        }
    }
    if components.len() < 2 {
        return Err(format!("{path:?} names a volume, not a file"));
    }
    Ok(components)
}

fn volume_label(os: GuestOs, n: u32) -> String {
    match os {
        GuestOs::Linux => format!("Volume{n}-Ext4"),
        GuestOs::Windows => format!("Volume{n}-NTFS"),
    }
}

impl GuestFiles {
    pub(crate) fn new(os: GuestOs) -> GuestFiles {
        GuestFiles {
            os,
            files: BTreeMap::new(),
        }
    }

    fn key(&self, components: &[String]) -> String {
        let joined = components.join("/");
        match self.os {
            GuestOs::Linux => joined,
            GuestOs::Windows => joined.to_lowercase(),
        }
    }

    /// Records a new content of a guest file (`/etc/x` or `C:\x`) at sequence number `seq`.
    pub(crate) fn write(
        &mut self,
        guest_path: &str,
        bytes: &[u8],
        seq: u64,
        written: SystemTime,
    ) -> Result<(), String> {
        let components = to_flr_path(self.os, guest_path)?;
        let key = self.key(&components);
        if self.files.keys().any(|other| is_under(other, &key)) {
            return Err(format!("{guest_path:?} is a folder"));
        }
        if self.files.keys().any(|other| is_under(&key, other)) {
            return Err(format!("a parent of {guest_path:?} is a file"));
        }
        let history = self.files.entry(key).or_insert_with(|| History {
            path: components,
            versions: Vec::new(),
        });
        history.versions.push(Version {
            seq,
            written,
            bytes: bytes.to_vec(),
        });
        Ok(())
    }

    /// The volumes of the guest: the first always, and every one a file lives on.
    fn volumes(&self) -> Vec<String> {
        let mut volumes = vec![volume_label(self.os, 1)];
        for history in self.files.values() {
            if !volumes.contains(&history.path[0]) {
                volumes.push(history.path[0].clone());
            }
        }
        volumes.sort();
        volumes
    }

    /// Files present before sequence number `seq`, with the version then current.
    fn at(&self, seq: u64) -> impl Iterator<Item = (&History, &Version)> {
        self.files.values().filter_map(move |h| {
            h.versions
                .iter()
                .rev()
                .find(|v| v.seq < seq)
                .map(|v| (h, v))
        })
    }

    fn split(&self, flr_path: &str) -> Vec<String> {
        let parts = flr_path
            .split(['/', '\\'])
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>();
        match self.os {
            GuestOs::Linux => parts,
            GuestOs::Windows => parts.iter().map(|p| p.to_lowercase()).collect(),
        }
    }

    fn fold(&self, part: &str) -> String {
        match self.os {
            GuestOs::Linux => part.to_owned(),
            GuestOs::Windows => part.to_lowercase(),
        }
    }

    /// Lists a folder (`""` for the volumes) as it was before sequence number `seq`.
    /// `Ok(None)` means the path is a file; `Err` that it does not exist.
    pub(crate) fn browse(&self, seq: u64, flr_path: &str) -> Result<Option<Vec<Entry>>, String> {
        let wanted = self.split(flr_path);
        if wanted.is_empty() {
            return Ok(Some(
                self.volumes().into_iter().map(Entry::Volume).collect(),
            ));
        }
        let volume_exists = self
            .volumes()
            .iter()
            .any(|v| self.fold(v) == self.fold(&wanted[0]));
        let mut children: BTreeMap<String, Entry> = BTreeMap::new();
        for (history, version) in self.at(seq) {
            let folded: Vec<String> = history.path.iter().map(|p| self.fold(p)).collect();
            if folded == wanted {
                return Ok(None);
            }
            if folded.len() > wanted.len() && folded[..wanted.len()] == wanted[..] {
                let name = &history.path[wanted.len()];
                let path = history.path[..=wanted.len()].join("/");
                let entry = if folded.len() == wanted.len() + 1 {
                    Entry::File {
                        path,
                        size: version.bytes.len() as u64,
                        written: version.written,
                    }
                } else {
                    Entry::Folder(path)
                };
                children.entry(self.fold(name)).or_insert(entry);
            }
        }
        if children.is_empty() && !(wanted.len() == 1 && volume_exists) {
            return Err(format!("{flr_path:?} does not exist at this checkpoint"));
        }
        Ok(Some(children.into_values().collect()))
    }

    /// The content of a file (FLR path) as it was before sequence number `seq`.
    pub(crate) fn read(&self, seq: u64, flr_path: &str) -> Result<Vec<u8>, String> {
        let wanted = self.split(flr_path);
        self.at(seq)
            .find(|(h, _)| h.path.iter().map(|p| self.fold(p)).collect::<Vec<_>>() == wanted)
            .map(|(_, v)| v.bytes.clone())
            .ok_or_else(|| match self.browse(seq, flr_path) {
                Ok(_) => format!("{flr_path:?} is not a file"),
                Err(err) => err,
            })
    }

    /// The current content of a guest file, if it exists.
    pub(crate) fn current(&self, guest_path: &str) -> Option<&[u8]> {
        let key = self.key(&to_flr_path(self.os, guest_path).ok()?);
        self.files
            .get(&key)?
            .versions
            .last()
            .map(|v| v.bytes.as_slice())
    }
}

fn is_under(path: &str, folder: &str) -> bool {
    path.len() > folder.len() && path.starts_with(folder) && path.as_bytes()[folder.len()] == b'/'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> SystemTime {
        SystemTime::UNIX_EPOCH
    }

    #[test]
    fn guest_paths_map_to_volumes() {
        assert_eq!(
            to_flr_path(GuestOs::Linux, "/etc/app.conf").expect("ok"),
            ["Volume1-Ext4", "etc", "app.conf"]
        );
        assert_eq!(
            to_flr_path(GuestOs::Windows, r"C:\Users\admin\notes.txt").expect("ok"),
            ["Volume1-NTFS", "Users", "admin", "notes.txt"]
        );
        assert_eq!(
            to_flr_path(GuestOs::Windows, "d:/data/x").expect("ok")[0],
            "Volume2-NTFS"
        );
        assert!(to_flr_path(GuestOs::Linux, "etc/app.conf").is_err());
        assert!(to_flr_path(GuestOs::Linux, "/etc/../shadow").is_err());
        assert!(to_flr_path(GuestOs::Windows, "/etc/app.conf").is_err());
        assert!(to_flr_path(GuestOs::Windows, r"C:\").is_err());
    }

    #[test]
    fn a_checkpoint_sees_the_newest_version_before_it() {
        let mut files = GuestFiles::new(GuestOs::Linux);
        files.write("/etc/app.conf", b"v1", 1, t()).expect("write");
        files.write("/etc/app.conf", b"v2", 5, t()).expect("write");
        assert_eq!(
            files.read(3, "Volume1-Ext4/etc/app.conf").expect("read"),
            b"v1"
        );
        assert_eq!(
            files.read(6, "/Volume1-Ext4/etc/app.conf").expect("read"),
            b"v2"
        );
        assert!(
            files
                .read(1, "Volume1-Ext4/etc/app.conf")
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(
            files
                .read(6, "Volume1-Ext4/etc")
                .unwrap_err()
                .contains("not a file")
        );
        assert_eq!(files.current("/etc/app.conf"), Some(&b"v2"[..]));
    }

    #[test]
    fn browsing_lists_volumes_folders_and_files() {
        let mut files = GuestFiles::new(GuestOs::Windows);
        files
            .write(r"C:\Users\admin\notes.txt", b"hello", 1, t())
            .expect("write");
        files
            .write(r"C:\Windows\win.ini", b"[x]", 1, t())
            .expect("write");
        assert_eq!(
            files.browse(2, "").expect("root"),
            Some(vec![Entry::Volume("Volume1-NTFS".into())])
        );
        assert_eq!(
            files.browse(2, "volume1-ntfs").expect("volume"),
            Some(vec![
                Entry::Folder("Volume1-NTFS/Users".into()),
                Entry::Folder("Volume1-NTFS/Windows".into())
            ])
        );
        assert_eq!(
            files.browse(2, "Volume1-NTFS/users/ADMIN").expect("folder"),
            Some(vec![Entry::File {
                path: "Volume1-NTFS/Users/admin/notes.txt".into(),
                size: 5,
                written: t()
            }])
        );
        assert_eq!(
            files
                .browse(2, "Volume1-NTFS/Users/admin/notes.txt")
                .expect("file"),
            None
        );
        assert!(files.browse(2, "Volume1-NTFS/nowhere").is_err());
        assert!(
            files
                .write(r"C:\Users", b"x", 3, t())
                .unwrap_err()
                .contains("is a folder")
        );
    }
}
