//! What Linux and macOS share: modes and owners, users and groups by name, process groups,
//! Unix sockets, `poll`.

use std::fs::{DirBuilder, File, Metadata, OpenOptions};
use std::io::Read;
use std::os::fd::AsFd as _;
use std::os::unix::fs::{
    DirBuilderExt as _, FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _,
    PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::Ownership;
use crate::deadline::Deadline;

/// A connected local stream: the broker's socket, or the pair `rewind-hook` shares with the
/// `rewind` beside it.
pub(crate) type LocalStream = std::os::unix::net::UnixStream;
/// The broker's listening socket.
pub(crate) type LocalListener = std::os::unix::net::UnixListener;

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Whether this process runs as root.
pub(crate) fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
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

/// The name of the user this process runs as.
pub(crate) fn current_user_name() -> Option<String> {
    user_name(effective_uid())
}

/// The variable that names the home directory, for messages.
pub(crate) const HOME_VARIABLE: &str = "$HOME";

/// The user's home directory, from `$HOME`.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// [`Ownership`] of `path`.
pub(crate) fn ownership(path: &Path) -> std::io::Result<Ownership> {
    let meta = std::fs::symlink_metadata(path)?;
    Ok(Ownership {
        uid: meta.uid(),
        mode: meta.mode() & 0o7777,
        is_socket: meta.file_type().is_socket(),
    })
}

/// The permission bits of `path` (`None` where the OS has none).
pub(crate) fn mode(path: &Path) -> Option<u32> {
    std::fs::metadata(path).ok().map(|m| m.mode() & 0o7777)
}

/// Sets the permission bits of `path`.
pub(crate) fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Permissions with the bits `mode` (`None` where the OS has no mode bits).
#[expect(
    clippy::unnecessary_wraps,
    reason = "None on Windows, which has no mode bits"
)]
pub(crate) fn mode_permissions(mode: u32) -> Option<std::fs::Permissions> {
    Some(std::fs::Permissions::from_mode(mode))
}

/// A directory builder that creates with `mode`.
pub(crate) fn make_private_dir_builder(builder: &mut DirBuilder) {
    builder.mode(0o700);
}

/// Files `options` creates get the bits `mode`.
pub(crate) fn create_with_mode(options: &mut OpenOptions, mode: u32) {
    options.mode(mode);
}

/// `options` never opens through a symbolic link.
pub(crate) fn open_without_following(options: &mut OpenOptions) {
    options.custom_flags(nix::libc::O_NOFOLLOW);
}

/// `options` opens without blocking (a FIFO or a device is then looked at, not waited on).
#[inline]
pub(crate) fn nonblocking_open(options: &mut OpenOptions) {
    options.custom_flags(nix::libc::O_NONBLOCK);
}

/// A file opened for the owner alone that group or others can read (left by an older
/// version) is made private.
pub(crate) fn fix_private_file(file: &File, meta: &Metadata) -> std::io::Result<()> {
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Refuses a directory another user owns or that group or others can write; `Err` says why
/// (after the directory's name).
#[inline]
pub(crate) fn check_private_dir(dir: &Path, meta: &Metadata) -> Result<(), String> {
    let me = effective_uid();
    if meta.uid() != me {
        return Err(format!(
            "belongs to user id {}, not to this user ({me}); rewind keeps its files only in the user's own directories",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "can be written by group or others (mode {:o}); run: chmod go-w {}",
            meta.mode() & 0o7777,
            dir.display()
        ));
    }
    Ok(())
}

/// Whether only root can change `path`: it and every directory above it belong to root and
/// group and others cannot write them. A directory with the sticky bit (`/tmp`) counts as
/// closed to others, since only an entry's owner can replace it there. `Err` names the first
/// one that fails, and why.
pub(crate) fn only_root_can_change(path: &Path) -> Result<(), String> {
    let real = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, at) in real.ancestors().enumerate() {
        let meta = std::fs::metadata(at).map_err(|e| format!("{}: {e}", at.display()))?;
        if meta.uid() != 0 {
            return Err(format!(
                "{} belongs to user id {}, not root",
                at.display(),
                meta.uid()
            ));
        }
        let sticky_dir = i > 0 && meta.mode() & 0o1000 != 0;
        if meta.mode() & 0o022 != 0 && !sticky_dir {
            return Err(format!(
                "{} can be written by group or others (mode {:o})",
                at.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// `sh -c <command>`: the operator's command line, read by the system's shell.
pub(crate) fn shell_command(command: &str) -> Command {
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(command);
    shell
}

/// `command` starts in a process group of its own, so [`kill_group`] reaches whatever it
/// starts too.
pub(crate) fn own_process_group(command: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    command.process_group(0);
}

/// Whether a child ended from the terminal's interrupt (SIGINT).
pub(crate) fn ended_by_interrupt(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal() == Some(nix::sys::signal::Signal::SIGINT as i32)
}

/// Kills the process group `child` leads (it was started with [`own_process_group`]), then
/// reaps the child.
pub(crate) fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Whether a process `pid` exists (and this user may signal it).
pub(crate) fn process_exists(pid: u32) -> bool {
    i32::try_from(pid)
        .is_ok_and(|raw| nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None).is_ok())
}

/// Asks process `pid` to stop (SIGTERM), or ends it (`hard`: SIGKILL).
pub(crate) fn stop_process(pid: u32, hard: bool) -> std::io::Result<()> {
    let raw = i32::try_from(pid).map_err(|_| std::io::Error::other("no such process id"))?;
    let signal = if hard {
        nix::sys::signal::Signal::SIGKILL
    } else {
        nix::sys::signal::Signal::SIGTERM
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), signal).map_err(std::io::Error::from)
}

/// Runs `command` in this process's place (stdin and stdout become its own); returns only when
/// it could not be started.
pub(crate) fn replace_process(command: &mut Command) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt as _;
    Err(command.exec())
}

/// A collector bound at `path` and its receive (tests of syslog's local socket).
#[cfg(test)]
pub(crate) fn datagram_collector(
    path: &Path,
) -> std::io::Result<impl FnMut(&mut [u8]) -> std::io::Result<usize>> {
    let socket = std::os::unix::net::UnixDatagram::bind(path)?;
    Ok(move |buffer: &mut [u8]| socket.recv(buffer))
}

/// A command-line word that is not Unicode text (bytes that are not UTF-8).
#[cfg(test)]
pub(crate) fn not_text() -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt as _;
    std::ffi::OsString::from_vec(vec![0xff, b'c'])
}

/// A symbolic link at `link` to `target` (tests plant them).
#[cfg(test)]
pub(crate) fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Sends one datagram to the Unix socket `path` (syslog's `/dev/log`), waiting at most `wait`.
pub(crate) fn send_datagram(path: &Path, message: &[u8], wait: Duration) -> std::io::Result<()> {
    let socket = std::os::unix::net::UnixDatagram::unbound()?;
    socket.set_write_timeout(Some(wait))?;
    socket.send_to(message, path).map(|_| ())
}

/// Why nothing written to stdout could reach anyone, or `None` when it may:
/// - closed (the host gave the hook no stdout);
/// - `/dev/null`, where the host cannot read an answer;
/// - `/dev/full`, where every write fails;
/// - a pipe or socket whose reader is gone, where every write fails (`EPIPE`).
#[inline]
#[expect(
    clippy::disallowed_methods,
    reason = "inspects the single stdout, writes nothing"
)]
pub(crate) fn stdout_unwritable() -> Option<&'static str> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return Some("stdout is closed");
    };
    let out = File::from(fd);
    let device = |path: &str| std::fs::metadata(path).ok().map(|m| m.rdev());
    if let Ok(out) = out.metadata() {
        if out.file_type().is_char_device() {
            if device("/dev/null") == Some(out.rdev()) {
                return Some("stdout leads nowhere");
            }
            if device("/dev/full") == Some(out.rdev()) {
                return Some("stdout is /dev/full, where every write fails");
            }
        }
        if !(out.file_type().is_fifo() || out.file_type().is_socket()) {
            return None;
        }
    }
    // A pipe whose read end is closed polls as an error for writing; a socket whose peer is
    // gone as an error or a hang-up. Neither waits: the timeout is zero.
    let mut fds = [PollFd::new(out.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
            .then_some("stdout's reader is gone"),
        Err(_) => None,
    }
}

/// Reads stdin as [`read_within`] does.
#[inline]
pub(crate) fn read_stdin(deadline: &Deadline, max: usize) -> std::io::Result<Vec<u8>> {
    read_within(&mut std::io::stdin().lock(), deadline, max)
}

/// Reads `input` to its end, or to `max` bytes and one chunk past them, waiting for each
/// chunk only until `deadline`. No thread: `poll` waits, and the hook starts on every tool
/// call, where a thread costs its start, its stack and an allocator arena each time.
#[inline]
pub(crate) fn read_within(
    input: &mut (impl Read + std::os::fd::AsFd),
    deadline: &Deadline,
    max: usize,
) -> std::io::Result<Vec<u8>> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    // As large as stdin's own buffer (8 KiB), so every read goes straight to the descriptor
    // and nothing waits in a buffer that `poll` cannot see; no larger, since each page of it
    // is touched (zeroed) on every call.
    let mut chunk = [0; 8 * 1024];
    let mut input_bytes = Vec::new();
    loop {
        let wait = u16::try_from(deadline.remaining().as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(wait)) {
            Ok(0) if deadline.expired() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "still open when the budget ran out",
                ));
            }
            // A wait shorter than the deadline (at most 65 s at a time), or a signal.
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        let read = match input.read(&mut chunk) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if read == 0 {
            return Ok(input_bytes);
        }
        input_bytes.extend_from_slice(&chunk[..read]);
        if input_bytes.len() > max {
            return Ok(input_bytes);
        }
    }
}

/// The listening socket systemd passed (socket activation), checked to be a listening Unix
/// stream socket; `Ok(None)` when none was passed. Reading `LISTEN_FDS` also removes it from
/// the environment, so that no command the broker runs believes the socket is its own; call it
/// first.
pub(crate) struct Passed(listenfd::ListenFd);

/// Takes what systemd passed, before anything else reads the environment.
pub(crate) fn passed_sockets() -> Passed {
    Passed(listenfd::ListenFd::from_env())
}

impl Passed {
    /// How many sockets were passed.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// The one listening Unix stream socket systemd passed, and the path it is bound to (`None`:
/// an unnamed or abstract socket).
pub(crate) fn adopt_passed_listener(
    passed: &mut Passed,
) -> Result<(LocalListener, Option<PathBuf>), String> {
    let listener = passed
        .0
        .take_unix_listener(0)
        .map_err(|_| {
            String::from(
                "is not a Unix stream socket; rewind-broker.socket must say ListenStream=<path>",
            )
        })?
        .ok_or_else(|| String::from("is gone"))?;
    let listening = nix::sys::socket::getsockopt(&listener, nix::sys::socket::sockopt::AcceptConn)
        .map_err(|e| e.to_string())?;
    if !listening {
        return Err(String::from(
            "is not listening; rewind-broker.socket must keep Accept=no",
        ));
    }
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let path = address.as_pathname().map(Path::to_path_buf);
    Ok((listener, path))
}

/// A connected pair for the `rewind-hook` → `rewind hook-guard` exchange: ours, and the
/// child's stdin and stdout (both the other end).
pub(crate) fn helper_pair() -> std::io::Result<(LocalStream, Stdio, Stdio)> {
    let (ours, theirs) = LocalStream::pair()?;
    let theirs = std::os::fd::OwnedFd::from(theirs);
    let input = theirs.try_clone()?;
    Ok((ours, Stdio::from(input), Stdio::from(theirs)))
}

/// `rewind hook-guard`'s side of [`helper_pair`]: its stdin, which is the socket.
pub(crate) fn helper_stream() -> std::io::Result<LocalStream> {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
    Ok(LocalStream::from(stdin))
}

/// No registry on Linux or macOS: no machine policy value exists.
pub(crate) fn machine_policy(_: &str, _: &str) -> Option<Result<String, String>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// The hook's largest payload, as far as these tests care.
    const MAX: usize = 1024 * 1024;

    /// Stdin is read to its end when the host closes it, and refused with a time-out when it
    /// stays open past the deadline, whatever was written before.
    #[test]
    fn stdin_is_read_to_its_end_or_refused_at_the_deadline() {
        use std::io::Write as _;
        let (mut reader, mut writer) = std::io::pipe().expect("pipe");
        writer.write_all(b"{}").expect("written");
        drop(writer);
        let deadline = Deadline::after(Duration::from_secs(10));
        assert_eq!(
            read_within(&mut reader, &deadline, MAX).expect("read"),
            b"{}"
        );

        let (mut reader, mut writer) = std::io::pipe().expect("pipe");
        writer.write_all(b"{\"tool_name\":").expect("written");
        let short = Deadline::after(Duration::from_millis(50));
        let started = Instant::now();
        let err = read_within(&mut reader, &short, MAX).expect_err("still open");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        drop(writer);
    }

    /// More than the largest payload is read no further than one byte past it: the caller
    /// refuses it whole rather than reading on.
    #[test]
    fn stdin_past_the_largest_payload_stops_one_chunk_later() {
        let mut big = std::io::Cursor::new(vec![b' '; MAX * 3]);
        let mut file = tempfile::tempfile().expect("tempfile");
        std::io::copy(&mut big, &mut file).expect("written");
        std::io::Seek::rewind(&mut file).expect("rewound");
        let read =
            read_within(&mut file, &Deadline::after(Duration::from_secs(10)), MAX).expect("read");
        assert!(read.len() > MAX && read.len() <= MAX + 8 * 1024);
    }

    #[test]
    fn a_private_file_is_fixed_to_the_owner_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, b"").expect("write");
        set_mode(&path, 0o644).expect("chmod");
        let file = File::open(&path).expect("open");
        fix_private_file(&file, &file.metadata().expect("meta")).expect("fix");
        assert_eq!(mode(&path), Some(0o600));
    }
}
