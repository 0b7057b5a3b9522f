//! Linux: the peer of a Unix socket from `SO_PEERCRED`, a user's groups from `getgrouplist`,
//! the machine's name from the kernel.

use std::path::PathBuf;

use super::{LocalStream, Peer, UserDir};

/// The credentials of the process at the other end of `stream`, as the kernel recorded them
/// when it connected.
pub(crate) fn peer(stream: &LocalStream) -> std::io::Result<Peer> {
    let credentials =
        nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
            .map_err(std::io::Error::from)?;
    Ok(Peer {
        uid: credentials.uid(),
        gid: credentials.gid(),
        pid: credentials.pid(),
    })
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

/// This machine's name, as syslog messages carry it (`-` when unknown).
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| String::from("-"))
}

/// `~/.cache/rewind` and `~/.local/state/rewind`: the XDG base directories (etcetera's `Xdg`
/// strategy), only under a `$HOME` that is set: rewind never guesses a home.
pub(super) fn default_user_dir(kind: UserDir) -> Option<PathBuf> {
    use etcetera::BaseStrategy as _;
    super::unix::home_dir()?;
    let xdg = etcetera::base_strategy::Xdg::new().ok()?;
    let dir = match kind {
        UserDir::Cache => xdg.cache_dir(),
        UserDir::State => xdg.state_dir()?,
    };
    Some(dir.join("rewind"))
}
