//! The operating-system calls the broker needs, in one place: who is at the other end of a
//! Unix socket (`SO_PEERCRED`), users and groups by name, and the owner and mode of a file.
//! Unix only today; a Windows port (named pipes, ACLs) replaces this module, not its callers.

use std::os::unix::net::UnixStream;
use std::path::Path;

/// The process at the other end of a local socket, as the kernel says (not as it claims).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Peer {
    pub uid: u32,
    pub gid: u32,
    pub pid: i32,
}

/// The credentials of the process at the other end of `stream`.
pub(crate) fn peer(stream: &UnixStream) -> std::io::Result<Peer> {
    let credentials =
        nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
            .map_err(std::io::Error::from)?;
    Ok(Peer {
        uid: credentials.uid(),
        gid: credentials.gid(),
        pid: credentials.pid(),
    })
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// A user id from a name or a number.
pub(crate) fn uid_named(name: &str) -> Option<u32> {
    if let Ok(uid) = name.parse::<u32>() {
        return Some(uid);
    }
    nix::unistd::User::from_name(name)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
}

/// A group id from a name or a number.
pub(crate) fn gid_named(name: &str) -> Option<u32> {
    if let Ok(gid) = name.parse::<u32>() {
        return Some(gid);
    }
    nix::unistd::Group::from_name(name)
        .ok()
        .flatten()
        .map(|g| g.gid.as_raw())
}

/// The user's name, for messages.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// Every group `uid` belongs to: `gid` (the peer's current group) and the user's
/// supplementary groups from the group database.
pub(crate) fn groups_of(uid: u32, gid: u32) -> Vec<u32> {
    let mut groups = vec![gid];
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten();
    if let Some(user) = user
        && let Ok(name) = std::ffi::CString::new(user.name)
        && let Ok(list) = nix::unistd::getgrouplist(&name, user.gid)
    {
        groups.extend(list.into_iter().map(nix::unistd::Gid::as_raw));
    }
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// The owner and permission bits of `path` itself (a symbolic link is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ownership {
    pub uid: u32,
    pub mode: u32,
    pub is_socket: bool,
}

/// [`Ownership`] of `path`.
pub(crate) fn ownership(path: &Path) -> std::io::Result<Ownership> {
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    let meta = std::fs::symlink_metadata(path)?;
    Ok(Ownership {
        uid: meta.uid(),
        mode: meta.mode() & 0o7777,
        is_socket: meta.file_type().is_socket(),
    })
}

/// Sets the permission bits of `path`.
pub(crate) fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// This machine's name, as syslog messages carry it (`-` when unknown).
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| String::from("-"))
}
