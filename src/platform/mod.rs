//! Every operating-system call rewind makes, in one place; nothing outside this module names
//! `std::os::unix`, `std::os::windows`, `nix` or a `cfg` of the target's OS.
//!
//! - `unix`: what Linux and macOS share (modes and owners, users and groups by name, process
//!   groups, Unix sockets, `poll`);
//! - `linux` and `macos`: who is at the other end of a Unix socket (`SO_PEERCRED`; `getpeereid`
//!   and `LOCAL_PEERPID`) and a user's groups (`getgrouplist`; the directory service through
//!   `id -G`, since macOS keeps membership there);
//! - `windows`: the same functions with Windows' means, or a clear refusal where rewind does not
//!   support Windows yet (the broker, which needs a local socket whose peer the kernel names).
//!
//! What each OS gets is written down in `docs/platforms.md`.

use std::path::PathBuf;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
use linux as this_os;
#[cfg(target_os = "macos")]
use macos as this_os;
#[cfg(unix)]
use unix as family;
#[cfg(windows)]
use windows as family;
#[cfg(windows)]
use windows as this_os;

pub(crate) use family::{
    HOME_VARIABLE, LocalListener, LocalStream, Passed, adopt_passed_listener, check_private_dir,
    create_with_mode, current_user_name, effective_uid, ended_by_interrupt, fix_private_file,
    gid_named, helper_pair, helper_stream, home_dir, is_root, kill_group, machine_policy,
    make_private_dir_builder, mode, mode_permissions, nonblocking_open, only_root_can_change,
    open_without_following, own_process_group, ownership, passed_sockets, process_exists,
    read_stdin, replace_process, send_datagram, set_mode, shell_command, stdout_unwritable,
    stop_process, uid_named, user_name,
};
#[cfg(test)]
pub(crate) use family::{datagram_collector, not_text, symlink};
pub(crate) use this_os::{groups_of, hostname, peer};

/// Whether files here have Unix owners and mode bits, which the private-file checks read (on
/// Windows they have ACLs, read only to check a private directory and a file only the
/// administrators can change).
#[cfg(test)]
pub(crate) const MODE_BITS: bool = cfg!(unix);

/// The process at the other end of a local socket, as the kernel says (not as it claims).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Peer {
    pub uid: u32,
    pub gid: u32,
    pub pid: i32,
}

/// The owner and permission bits of a path itself (a symbolic link is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ownership {
    pub uid: u32,
    pub mode: u32,
    pub is_socket: bool,
}

/// Whether the broker and the `rewind-hook` → `rewind` guard helper can run here: both speak
/// over a Unix socket whose peer the kernel names. Where they cannot (Windows), `install`
/// writes `rewind hook` itself, which takes checkpoints in its own process.
pub(crate) const LOCAL_SOCKETS: bool = cfg!(unix);

/// The name a binary has on disk here (`rewind` → `rewind.exe` on Windows).
pub(crate) fn executable(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// The system's configuration directory for a host's administrator files, in this OS's
/// convention, chosen from a host's per-OS paths.
pub(crate) fn per_os<'a>(linux: &'a str, macos: &'a str, windows: &'a str) -> &'a str {
    if cfg!(target_os = "macos") {
        macos
    } else if cfg!(windows) {
        windows
    } else {
        linux
    }
}

/// Where rewind keeps a kind of per-user file: `$<var>/rewind` when the XDG variable names an
/// absolute directory (on every OS, so a test or an operator can point it anywhere), else this
/// OS's convention under the home directory: Linux `~/.cache/rewind` and
/// `~/.local/state/rewind`; macOS `~/Library/Caches/rewind` and
/// `~/Library/Application Support/rewind`; Windows `%LOCALAPPDATA%\rewind\cache` and
/// `%LOCALAPPDATA%\rewind\state`.
pub(crate) fn user_dir(kind: UserDir) -> Option<PathBuf> {
    let var = match kind {
        UserDir::Cache => "XDG_CACHE_HOME",
        UserDir::State => "XDG_STATE_HOME",
    };
    if let Some(dir) = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
    {
        return Some(dir.join("rewind"));
    }
    this_os::default_user_dir(kind)
}

/// The kinds of per-user directory [`user_dir`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UserDir {
    /// The token cache and lock files.
    Cache,
    /// The audit trail and the sessions.
    State,
}

/// The XDG variable that overrides a [`UserDir`], for messages.
pub(crate) fn user_dir_variable(kind: UserDir) -> &'static str {
    match kind {
        UserDir::Cache => "XDG_CACHE_HOME",
        UserDir::State => "XDG_STATE_HOME",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_has_this_os_s_suffix() {
        assert_eq!(
            executable("rewind"),
            format!("rewind{}", std::env::consts::EXE_SUFFIX)
        );
    }

    #[test]
    fn an_absolute_xdg_directory_wins_and_a_relative_one_is_ignored() {
        // Read, not set: the environment is the process's; only the rule is checked.
        let from_env = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute());
        if let Some(dir) = from_env {
            assert_eq!(user_dir(UserDir::Cache), Some(dir.join("rewind")));
        }
    }
}
