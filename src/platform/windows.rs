//! Windows: what rewind can do there with the standard library alone, and a clear refusal
//! where it cannot yet.
//!
//! - No Unix socket whose peer the kernel names: the broker and the `rewind-hook` → `rewind`
//!   guard helper do not run on Windows (`install` writes `rewind hook`, which takes checkpoints
//!   in its own process). [`LocalStream`] and [`LocalListener`] cannot be made, and say so.
//! - No mode bits: a file rewind creates gets the ACL it inherits from its directory, which
//!   under the user's profile (`%LOCALAPPDATA%`, `%USERPROFILE%`) is the user's, SYSTEM's and
//!   the Administrators'. The ACL stands in for owner and mode in two checks: a private
//!   directory (no one else may change it) and a file only root can change (only SYSTEM, the
//!   Administrators or TrustedInstaller), read through the `win-acl` crate, which holds the
//!   `unsafe` Windows calls this crate forbids. A file is not made private (its ACL is not
//!   rewritten).
//! - No process groups: a `password_command` past its deadline is killed, not what it started.

use std::fs::{DirBuilder, File, Metadata, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use win_acl::Principal;

use super::{Ownership, Peer, UserDir};
use crate::deadline::Deadline;

/// Why the broker and the guard helper are missing here.
const NO_LOCAL_SOCKETS: &str = "not supported on Windows: the broker and the rewind-hook guard helper need a Unix socket whose peer the kernel names (Linux and macOS only for now)";

fn unsupported() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Unsupported, NO_LOCAL_SOCKETS)
}

/// No value of this type exists.
#[derive(Debug, Clone, Copy)]
enum Never {}

/// A connected local stream: none can be made on Windows.
#[derive(Debug)]
pub(crate) struct LocalStream(Never);

impl LocalStream {
    /// Refused: see [`NO_LOCAL_SOCKETS`].
    pub(crate) fn connect(_: &Path) -> std::io::Result<LocalStream> {
        Err(unsupported())
    }

    pub(crate) fn set_read_timeout(&self, _: Option<Duration>) -> std::io::Result<()> {
        match self.0 {}
    }

    pub(crate) fn set_write_timeout(&self, _: Option<Duration>) -> std::io::Result<()> {
        match self.0 {}
    }

    pub(crate) fn try_clone(&self) -> std::io::Result<LocalStream> {
        match self.0 {}
    }

    pub(crate) fn shutdown(&self, _: std::net::Shutdown) -> std::io::Result<()> {
        match self.0 {}
    }
}

impl std::io::Read for &LocalStream {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        match self.0 {}
    }
}

impl std::io::Write for &LocalStream {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        match self.0 {}
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0 {}
    }
}

/// A listening local socket: none can be made on Windows.
#[derive(Debug)]
pub(crate) struct LocalListener(Never);

impl LocalListener {
    /// Refused: see [`NO_LOCAL_SOCKETS`].
    pub(crate) fn bind(_: &Path) -> std::io::Result<LocalListener> {
        Err(unsupported())
    }

    pub(crate) fn incoming(&self) -> std::iter::Empty<std::io::Result<LocalStream>> {
        match self.0 {}
    }
}

/// The peer of a local stream (none exists here).
pub(crate) fn peer(stream: &LocalStream) -> std::io::Result<Peer> {
    match stream.0 {}
}

/// Nothing systemd could pass.
pub(crate) struct Passed;

/// Nothing passed.
pub(crate) fn passed_sockets() -> Passed {
    Passed
}

impl Passed {
    /// Always none.
    #[expect(
        clippy::unused_self,
        reason = "the Unix twin counts what systemd passed"
    )]
    pub(crate) fn len(&self) -> usize {
        0
    }
}

/// Refused: socket activation is systemd's.
pub(crate) fn adopt_passed_listener(
    _: &mut Passed,
) -> Result<(LocalListener, Option<PathBuf>), String> {
    Err(String::from(NO_LOCAL_SOCKETS))
}

/// Refused: see [`NO_LOCAL_SOCKETS`].
pub(crate) fn helper_pair() -> std::io::Result<(LocalStream, Stdio, Stdio)> {
    Err(unsupported())
}

/// Refused: see [`NO_LOCAL_SOCKETS`].
pub(crate) fn helper_stream() -> std::io::Result<LocalStream> {
    Err(unsupported())
}

/// Windows has no user ids; the broker, the only reader of one, does not run here.
pub(crate) fn effective_uid() -> u32 {
    0
}

/// Whether this process runs as an administrator: not asked here (a managed install under
/// `C:\Program Files` fails with the system's own "access denied" when it is not).
pub(crate) fn is_root() -> bool {
    false
}

/// No user ids on Windows.
pub(crate) fn uid_named(_: &str) -> Option<u32> {
    None
}

/// No group ids on Windows.
pub(crate) fn gid_named(_: &str) -> Option<u32> {
    None
}

/// No user ids on Windows: the user this process runs as, for messages.
pub(crate) fn user_name(_: u32) -> Option<String> {
    current_user_name()
}

/// `%USERNAME%`.
pub(crate) fn current_user_name() -> Option<String> {
    std::env::var("USERNAME").ok().filter(|n| !n.is_empty())
}

/// No group database on Windows.
pub(crate) fn groups_of(_: u32, gid: u32) -> Vec<u32> {
    vec![gid]
}

/// `%COMPUTERNAME%` (`-` when unknown).
pub(crate) fn hostname() -> String {
    std::env::var("COMPUTERNAME")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| String::from("-"))
}

/// The variable that names the home directory, for messages.
pub(crate) const HOME_VARIABLE: &str = "%USERPROFILE%";

/// `%USERPROFILE%`, else `$HOME` (set by some shells).
pub(crate) fn home_dir() -> Option<PathBuf> {
    ["USERPROFILE", "HOME"]
        .into_iter()
        .filter_map(std::env::var_os)
        .find(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `%LOCALAPPDATA%\rewind\cache` and `%LOCALAPPDATA%\rewind\state` (Windows' place for a
/// user's files that do not roam: etcetera's `Windows` strategy, which asks the shell for the
/// folder when the variable is not set), only with a home directory.
pub(super) fn default_user_dir(kind: UserDir) -> Option<PathBuf> {
    use etcetera::BaseStrategy as _;
    home_dir()?;
    let local = etcetera::base_strategy::Windows::new().ok()?.cache_dir();
    let leaf = match kind {
        UserDir::Cache => "cache",
        UserDir::State => "state",
    };
    Some(local.join("rewind").join(leaf))
}

/// No owner id or mode bits on Windows: the owner reads as this user, the mode as private.
pub(crate) fn ownership(path: &Path) -> std::io::Result<Ownership> {
    std::fs::symlink_metadata(path)?;
    Ok(Ownership {
        uid: effective_uid(),
        mode: 0o600,
        is_socket: false,
    })
}

/// No mode bits on Windows.
pub(crate) fn mode(_: &Path) -> Option<u32> {
    None
}

/// No mode bits on Windows: the file keeps the ACL it inherited.
#[expect(clippy::unnecessary_wraps, reason = "the Unix twin can fail")]
pub(crate) fn set_mode(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

/// No mode bits on Windows.
pub(crate) fn mode_permissions(_: u32) -> Option<std::fs::Permissions> {
    None
}

/// No mode bits on Windows: the directory inherits its parent's ACL.
pub(crate) fn make_private_dir_builder(_: &mut DirBuilder) {}

/// No mode bits on Windows.
pub(crate) fn create_with_mode(_: &mut OpenOptions, _: u32) {}

/// Opening a symbolic link opens its target on Windows too; a file rewind writes is created
/// anew beside its target and renamed over it, which replaces a link rather than following it.
pub(crate) fn open_without_following(_: &mut OpenOptions) {}

/// Nothing to add: opening a named pipe or a device by its path does not wait on Windows.
pub(crate) fn nonblocking_open(_: &mut OpenOptions) {}

/// No mode bits to correct on Windows.
#[expect(clippy::unnecessary_wraps, reason = "the Unix twin can fail")]
pub(crate) fn fix_private_file(_: &File, _: &Metadata) -> std::io::Result<()> {
    Ok(())
}

/// Refuses a directory that belongs to another user, or whose ACL lets anyone but its owner,
/// this user, SYSTEM and the Administrators change it; `Err` says why (after the directory's
/// name).
pub(crate) fn check_private_dir(dir: &Path, _: &Metadata) -> Result<(), String> {
    let access =
        win_acl::access(dir).map_err(|e| format!("has an ACL that cannot be read: {e}"))?;
    if let Principal::Other(sid) = &access.owner {
        return Err(format!(
            "belongs to {sid}, not to this user; rewind keeps its files only in the user's own directories"
        ));
    }
    let others = access.allowed.iter().filter(|g| g.changes());
    match others.map(|g| &g.who).find_map(|who| match who {
        Principal::Other(sid) => Some(sid),
        _ => None,
    }) {
        Some(sid) => Err(format!(
            "can be changed by {sid} (its ACL allows it); run: icacls \"{}\" /remove *{sid}",
            dir.display()
        )),
        None => Ok(()),
    }
}

/// Whether only the machine's administration (SYSTEM, the Administrators, TrustedInstaller)
/// can change `path`: they own it and every directory above it, and no ACL lets anyone else
/// change the file, or replace or rename what a directory above it holds (creating new
/// entries there, as every user may in `C:\`, does not). `Err` names the first one that
/// fails, and why.
pub(crate) fn only_root_can_change(path: &Path) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, at) in real.ancestors().enumerate() {
        let access = win_acl::access(at)
            .map_err(|e| format!("{}: its ACL cannot be read: {e}", at.display()))?;
        if access.owner != Principal::Administration {
            return Err(format!(
                "{} belongs to {}, not to SYSTEM or the Administrators",
                at.display(),
                who(&access.owner)
            ));
        }
        let reaches = if i == 0 {
            win_acl::Grant::changes
        } else {
            win_acl::Grant::changes_entries
        };
        if let Some(grant) = access
            .allowed
            .iter()
            .find(|g| g.who != Principal::Administration && reaches(g))
        {
            return Err(format!(
                "{} can be changed by {} (its ACL allows it)",
                at.display(),
                who(&grant.who)
            ));
        }
    }
    Ok(())
}

/// Whom an ACL names, for messages.
fn who(principal: &Principal) -> &str {
    match principal {
        Principal::Administration => "SYSTEM or the Administrators",
        Principal::CurrentUser => "this user",
        Principal::Other(sid) => sid,
    }
}

/// `cmd /C <command>`: the operator's command line, read by Windows' own shell.
pub(crate) fn shell_command(command: &str) -> Command {
    let mut shell = Command::new("cmd");
    shell.arg("/C").arg(command);
    shell
}

/// No process groups on Windows: [`kill_group`] reaches the process alone.
pub(crate) fn own_process_group(_: &mut Command) {}

/// Whether a child ended from the console's Ctrl-C (`STATUS_CONTROL_C_EXIT`).
pub(crate) fn ended_by_interrupt(status: std::process::ExitStatus) -> bool {
    status
        .code()
        .and_then(|code| u32::try_from(code).ok().or(Some(code.cast_unsigned())))
        == Some(0xC000_013A)
}

/// Kills `child` (not what it started: that would need a job object), then reaps it.
pub(crate) fn kill_group(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Whether a process `pid` exists: `tasklist` names it.
pub(crate) fn process_exists(pid: u32) -> bool {
    Command::new("tasklist")
        .args(["/FI", &format!("PID eq {pid}"), "/NH"])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(&pid.to_string()))
}

/// Ends process `pid` with `taskkill` (`hard`: `/F`, forced).
pub(crate) fn stop_process(pid: u32, hard: bool) -> std::io::Result<()> {
    let mut command = Command::new("taskkill");
    command.args(["/PID", &pid.to_string()]);
    if hard {
        command.arg("/F");
    }
    let status = command.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "taskkill ended with {status}"
        )))
    }
}

/// Windows cannot run a program in this process's place: it runs as a child with this
/// process's stdin and stdout, and its failure is this process's.
pub(crate) fn replace_process(command: &mut Command) -> std::io::Result<()> {
    let status = command.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("ended with {status}")))
    }
}

/// Refused: see [`NO_LOCAL_SOCKETS`].
#[cfg(test)]
pub(crate) fn datagram_collector(
    _: &Path,
) -> std::io::Result<impl FnMut(&mut [u8]) -> std::io::Result<usize>> {
    Err::<fn(&mut [u8]) -> std::io::Result<usize>, _>(unsupported())
}

/// A command-line word that is not Unicode text (a lone surrogate).
#[cfg(test)]
pub(crate) fn not_text() -> std::ffi::OsString {
    use std::os::windows::ffi::OsStringExt as _;
    std::ffi::OsString::from_wide(&[0xD800, u16::from(b'c')])
}

/// A symbolic link at `link` to the file `target` (tests plant them; Windows allows it to an
/// administrator or in developer mode).
#[cfg(test)]
pub(crate) fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

/// The string value `value` of the machine's policy key `key` under `HKEY_LOCAL_MACHINE`
/// (`REG_SZ` or `REG_EXPAND_SZ`): `None` when the key or the value does not exist, the error
/// when it cannot be read (another type, no access).
pub(crate) fn machine_policy(key: &str, value: &str) -> Option<Result<String, String>> {
    /// `HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)`: no such key or value.
    const NOT_FOUND: i32 = 0x8007_0002_u32.cast_signed();
    let text = windows_registry::LOCAL_MACHINE
        .open(key)
        .and_then(|key| key.get_string(value));
    match text {
        Ok(text) => Some(Ok(text)),
        Err(e) if e.code().0 == NOT_FOUND => None,
        Err(e) => Some(Err(e.message())),
    }
}

/// No `/dev/log` on Windows: syslog goes to a collector over the network.
pub(crate) fn send_datagram(_: &Path, _: &[u8], _: Duration) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "a local syslog socket is not supported on Windows; name a collector as host:port",
    ))
}

/// Not known ahead on Windows: a reader that is gone is seen when the answer is written.
pub(crate) fn stdout_unwritable() -> Option<&'static str> {
    None
}

/// Reads stdin to its end, or to `max` bytes and one chunk past them, until `deadline`.
/// Windows cannot wait on a pipe with a timeout from the standard library, so a thread reads
/// and this one waits for it; past the deadline the thread is left to end with the process.
pub(crate) fn read_stdin(deadline: &Deadline, max: usize) -> std::io::Result<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1))
            .read_to_end(&mut bytes)
            .map(|_| bytes);
        let _ = tx.send(read);
    });
    match rx.recv_timeout(deadline.remaining()) {
        Ok(read) => read,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "still open when the budget ran out",
        )),
    }
}
