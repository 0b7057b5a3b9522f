//! macOS: the peer of a Unix socket from `getpeereid` and `LOCAL_PEERPID` (there is no
//! `SO_PEERCRED`), a user's groups from the directory service, the machine's name from
//! `gethostname`, and the per-user directories under `~/Library`.

use std::path::PathBuf;

use super::{LocalStream, Peer, UserDir};

/// The credentials of the process at the other end of `stream`, as the kernel recorded them
/// when it connected.
pub(crate) fn peer(stream: &LocalStream) -> std::io::Result<Peer> {
    let (uid, gid) = nix::unistd::getpeereid(stream).map_err(std::io::Error::from)?;
    let pid = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::LocalPeerPid)
        .map_err(std::io::Error::from)?;
    Ok(Peer {
        uid: uid.as_raw(),
        gid: gid.as_raw(),
        pid,
    })
}

/// Every group `uid` belongs to: `gid` (the peer's current group) and the user's other groups.
/// macOS keeps membership in its directory service (opendirectoryd), which `getgrouplist`
/// does not fully see (nix leaves it out on Apple for that reason): `/usr/bin/id -G` asks the
/// directory service. Only the broker asks, once per request from a user not yet allowed.
pub(crate) fn groups_of(uid: u32, gid: u32) -> Vec<u32> {
    let mut groups = vec![gid];
    if let Some(name) = super::unix::user_name(uid)
        && let Ok(out) = std::process::Command::new("/usr/bin/id")
            .arg("-G")
            .arg("--")
            .arg(&name)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
        && out.status.success()
    {
        groups.extend(
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .filter_map(|g| g.parse::<u32>().ok()),
        );
    }
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// This machine's name, as syslog messages carry it (`-` when unknown).
pub(crate) fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| String::from("-"))
}

/// `~/Library/Caches/rewind` and `~/Library/Application Support/rewind`, Apple's places for
/// caches and for files an application keeps.
/// (etcetera's `Apple` strategy), only under a `$HOME` that is set.
pub(super) fn default_user_dir(kind: UserDir) -> Option<PathBuf> {
    use etcetera::BaseStrategy as _;
    super::unix::home_dir()?;
    let apple = etcetera::base_strategy::Apple::new().ok()?;
    let dir = match kind {
        UserDir::Cache => apple.cache_dir(),
        UserDir::State => apple.data_dir(),
    };
    Some(dir.join("rewind"))
}
