//! From a guest path (`/etc/app.conf`, `C:\\Users\\x.txt`) to the volume path File Level Restore
//! browses (`Volume1-Ext4/etc/app.conf`), found by browsing the mounted checkpoint.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

use anyhow::{Context as _, bail};

use super::check_interrupt;
use crate::deadline::Deadline;
use crate::zvm::{Client, PathEntry, ZvmError};

/// Maps a guest path to the volume path FLR browses: `/etc/app.conf` →
/// `Volume1-Ext4/etc/app.conf`. FLR names volumes by label, not by drive letter, so the path
/// is looked for on every candidate volume (NTFS/ReFS ones for `C:\…`, the others for `/…`)
/// and exactly one must hold it; `volume` (`--volume`) names the one to use instead.
pub(super) fn locate(
    client: &Client,
    session: &str,
    guest_path: &str,
    volume: Option<&str>,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<String> {
    let (drive, parts) = split_guest_path(guest_path)?;
    let windows = drive.is_some();
    let volumes = client.flr_browse(session, "", deadline)?;
    let candidates = candidates(&volumes, windows, volume)?;
    let mut found = Vec::new();
    let mut unreadable = Vec::new();
    let mut nearest = None;
    for label in candidates {
        check_interrupt(interrupted)?;
        match find_on_volume(
            client,
            session,
            label,
            &parts,
            windows,
            deadline,
            interrupted,
        ) {
            Ok(Ok(path)) => found.push((label.to_owned(), path)),
            Ok(Err(near)) => {
                if nearest.is_none() {
                    nearest = near.map(|near: Vec<String>| guest_form(drive, &near));
                }
            }
            // A volume FLR cannot browse (a recovery or encrypted one) must not hide the others.
            Err(e)
                if e.downcast_ref::<ZvmError>()
                    .and_then(ZvmError::status)
                    .is_some() =>
            {
                unreadable.push(format!("{label}: {e}"));
            }
            Err(e) => return Err(e),
        }
    }
    choose(guest_path, &volumes, found, &unreadable, nearest.as_deref())
}

/// Components of a guest path written as the guest writes it: `/etc/app.conf`,
/// `C:\Users\x.txt`.
fn guest_form(drive: Option<char>, parts: &[String]) -> String {
    match drive {
        Some(drive) => format!("{drive}:\\{}", parts.join("\\")),
        None => format!("/{}", parts.join("/")),
    }
}

/// The volume labels of a browse root.
fn labels(volumes: &[PathEntry]) -> Vec<&str> {
    volumes
        .iter()
        .map(|v| v.path.trim_matches('/'))
        .filter(|l| !l.is_empty())
        .collect()
}

/// Whether a volume label looks like a Windows file system.
fn is_windows_volume(label: &str) -> bool {
    let label = label.to_ascii_lowercase();
    label.contains("ntfs") || label.contains("refs")
}

/// The volumes to look for a path on: the one `--volume` names (checked against the browse
/// root), else every NTFS/ReFS-looking volume for a Windows path and every other for a Linux
/// one (all of them when none looks right).
fn candidates<'a>(
    volumes: &'a [PathEntry],
    windows: bool,
    chosen: Option<&str>,
) -> anyhow::Result<Vec<&'a str>> {
    let all = labels(volumes);
    if let Some(chosen) = chosen {
        let wanted = chosen.trim_matches('/');
        return all
            .iter()
            .find(|l| l.eq_ignore_ascii_case(wanted))
            .map(|l| vec![*l])
            .with_context(|| {
                format!(
                    "the mounted checkpoint has no volume {:?}; its volumes are: {}; nothing was written",
                    chosen,
                    all.join(", ")
                )
            });
    }
    let fitting: Vec<&str> = all
        .iter()
        .copied()
        .filter(|l| is_windows_volume(l) == windows)
        .collect();
    Ok(if fitting.is_empty() { all } else { fitting })
}

/// The one volume path to download, from the volumes that hold the guest path.
fn choose(
    guest_path: &str,
    volumes: &[PathEntry],
    mut found: Vec<(String, String)>,
    unreadable: &[String],
    nearest: Option<&str>,
) -> anyhow::Result<String> {
    match found.len() {
        1 => Ok(found.remove(0).1),
        0 => {
            let mut text = format!(
                "{guest_path} is not in the mounted checkpoint (volumes: {})",
                labels(volumes).join(", ")
            );
            if !unreadable.is_empty() {
                let _ = write!(text, "; could not browse {}", unreadable.join("; "));
            }
            text.push_str("; nothing was written");
            if let Some(nearest) = nearest {
                let _ = write!(text, "; did you mean {nearest}?");
            }
            Err(crate::zvm::NotFound::Path(text).into())
        }
        _ => bail!(
            "{guest_path} is on several volumes of the checkpoint ({}); FLR names volumes by label, \
             not by drive letter or mount point, so choose one with --volume <label>; nothing was \
             written",
            found
                .iter()
                .map(|(label, _)| label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Walks `parts` down from a volume: the volume path, or, when the volume does not hold it,
/// the nearest path it does hold (the components found, then the name nearest to the first
/// one missing), if a name there is near it.
fn find_on_volume(
    client: &Client,
    session: &str,
    label: &str,
    parts: &[&str],
    windows: bool,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<Result<String, Option<Vec<String>>>> {
    let mut current = label.to_owned();
    for (i, part) in parts.iter().enumerate() {
        check_interrupt(interrupted)?;
        let items = client.flr_browse(session, &current, deadline)?;
        let last = i + 1 == parts.len();
        let name_of = |item: &PathEntry| {
            item.path
                .rsplit('/')
                .next()
                .unwrap_or(&item.path)
                .to_owned()
        };
        let found = items.iter().find(|item| {
            let name = name_of(item);
            let same = if windows {
                name.eq_ignore_ascii_case(part)
            } else {
                name == *part
            };
            same && (last || item.browsable)
        });
        match found {
            Some(item) if item.path.contains('/') => current.clone_from(&item.path),
            Some(item) => current = format!("{current}/{}", item.path),
            None => {
                let names: Vec<String> = items
                    .iter()
                    .filter(|item| last || item.browsable)
                    .map(name_of)
                    .collect();
                let near =
                    crate::suggest::nearest(part, names.iter().map(String::as_str)).map(|name| {
                        let mut near: Vec<String> =
                            parts[..i].iter().map(|p| (*p).to_owned()).collect();
                        near.push(name.to_owned());
                        near
                    });
                return Ok(Err(near));
            }
        }
    }
    Ok(Ok(current))
}
/// Splits a guest path into its drive letter (Windows) and components:
/// `C:\Users\x.txt` gives `C` and `Users`, `x.txt`; `/etc/app.conf` gives no drive.
fn split_guest_path(path: &str) -> anyhow::Result<(Option<char>, Vec<&str>)> {
    let mut chars = path.chars();
    let drive = match (chars.next(), chars.next()) {
        (Some(letter), Some(':')) if letter.is_ascii_alphabetic() => Some(letter),
        _ => None,
    };
    if drive.is_some_and(|d| d.to_ascii_uppercase() < 'C') {
        bail!("drive {} is not a fixed disk FLR can read", &path[..2]);
    }
    let rest = if drive.is_some() { &path[2..] } else { path };
    if drive.is_none() && !rest.starts_with('/') {
        bail!("guest path {path:?} must be absolute (/etc/x or C:\\Users\\x)");
    }
    let parts: Vec<&str> = rest.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() || parts.contains(&"..") {
        bail!("guest path {path:?} does not name a file");
    }
    Ok((drive, parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_paths_split_for_linux_and_windows() {
        assert_eq!(
            split_guest_path("/etc/app.conf").expect("linux"),
            (None, vec!["etc", "app.conf"])
        );
        assert_eq!(
            split_guest_path("C:\\Users\\admin\\notes.txt").expect("windows"),
            (Some('C'), vec!["Users", "admin", "notes.txt"])
        );
        assert_eq!(
            split_guest_path("d:/data/x").expect("slashes"),
            (Some('d'), vec!["data", "x"])
        );
        assert!(split_guest_path("etc/app.conf").is_err());
        assert!(split_guest_path("/etc/../shadow").is_err());
        assert!(split_guest_path("/").is_err());
    }

    fn volume(path: &str) -> PathEntry {
        PathEntry {
            path: path.to_owned(),
            browsable: true,
            size: None,
        }
    }

    #[test]
    fn every_windows_looking_volume_is_a_candidate_not_just_the_first() {
        let root = [
            volume("System Reserved-NTFS"),
            volume("Volume2-NTFS"),
            volume("Volume3-ReFS"),
            volume("Volume4-Ext4"),
        ];
        assert_eq!(
            candidates(&root, true, None).expect("windows"),
            ["System Reserved-NTFS", "Volume2-NTFS", "Volume3-ReFS"]
        );
        assert_eq!(
            candidates(&root, false, None).expect("linux"),
            ["Volume4-Ext4"]
        );
        assert_eq!(
            candidates(&root, true, Some("volume2-ntfs")).expect("chosen"),
            ["Volume2-NTFS"]
        );
        let err = candidates(&root, true, Some("D")).unwrap_err().to_string();
        assert!(
            err.contains("no volume \"D\"") && err.contains("System Reserved-NTFS, Volume2-NTFS"),
            "{err}"
        );
        let linux_only = [volume("Volume1-Ext4")];
        assert_eq!(
            candidates(&linux_only, true, None).expect("fallback"),
            ["Volume1-Ext4"],
            "all volumes when none looks like Windows"
        );
    }

    #[test]
    fn exactly_one_volume_must_hold_the_path() {
        let root = [volume("System Reserved-NTFS"), volume("Volume2-NTFS")];
        let path = r"C:\Users\x.txt";
        let on = |label: &str| (label.to_owned(), format!("{label}/Users/x.txt"));
        assert_eq!(
            choose(path, &root, vec![on("Volume2-NTFS")], &[], None).expect("one"),
            "Volume2-NTFS/Users/x.txt"
        );
        let err = choose(
            path,
            &root,
            vec![on("System Reserved-NTFS"), on("Volume2-NTFS")],
            &[],
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("several volumes")
                && err.contains("(System Reserved-NTFS, Volume2-NTFS)")
                && err.contains("--volume"),
            "{err}"
        );
        let err = choose(
            path,
            &root,
            Vec::new(),
            &["Volume2-NTFS: HTTP 400".into()],
            Some("C:\\Users\\y.txt"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("is not in the mounted checkpoint")
                && err.contains("could not browse")
                && err.ends_with("; did you mean C:\\Users\\y.txt?"),
            "{err}"
        );
    }
}
