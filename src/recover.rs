//! `rewind recover`: File Level Restore of one guest file from a checkpoint, and
//! `rewind flr list|end` for sessions a crash left mounted.
//!
//! The plan is shown first and nothing happens without an explicit yes. Once a checkpoint is
//! mounted, the session is unmounted on every way out: success, error, and Ctrl-C.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use sha2::{Digest as _, Sha256};

use crate::cli::{FlrCommand, RecoverArgs};
use crate::commands::{clean, client, say, warn_config, zerto::find_vm};
use crate::config::Config;
use crate::deadline::Deadline;
use crate::tag;
use crate::zvm::resolve::{Vm, VpgRef};
use crate::zvm::wire::{Checkpoint, FlrSession, PathItem};
use crate::zvm::{Client, DownloadError, ZvmError};

/// Longest a whole recover may take (mounting a large VM can take minutes).
const RECOVER_BUDGET: Duration = Duration::from_secs(60 * 60);
/// Longest the unmount is given, even after an error or Ctrl-C.
const UNMOUNT_BUDGET: Duration = Duration::from_secs(120);
/// How often the mount state is polled.
const MOUNT_POLL: Duration = Duration::from_millis(500);
/// How many times an unmount is asked for before giving up (within [`UNMOUNT_BUDGET`]).
const UNMOUNT_ATTEMPTS: u32 = 5;
/// The pause after the first failed unmount; it doubles after each further one.
const UNMOUNT_RETRY: Duration = Duration::from_secs(2);

/// The checkpoint and file a recover will restore.
struct Plan {
    vm: Vm,
    vpg: VpgRef,
    checkpoint: Checkpoint,
    guest_path: String,
    destination: PathBuf,
}

/// `rewind recover`.
pub fn recover(config_path: Option<&Path>, args: &RecoverArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(RECOVER_BUDGET);
    let plan = plan(&client, &config, args, &deadline)?;

    say(format!(
        "VM:          {} ({})",
        clean(&plan.vm.name),
        plan.vm.id
    ));
    say(format!(
        "VPG:         {} ({})",
        clean(&plan.vpg.name),
        plan.vpg.id
    ));
    say(format!(
        "checkpoint:  {} at {}{}",
        plan.checkpoint.checkpoint_identifier,
        plan.checkpoint.time_stamp,
        plan.checkpoint
            .tag
            .as_deref()
            .map(|t| format!(" ({})", clean(t)))
            .unwrap_or_default()
    ));
    say(format!("guest file:  {}", clean(&plan.guest_path)));
    if let Some(volume) = &args.volume {
        say(format!("volume:      {}", clean(volume)));
    }
    say(format!("destination: {}", plan.destination.display()));
    confirm(args.yes)?;

    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&interrupted);
    // A second handler cannot be installed in one process; without one, Ctrl-C would kill
    // the process before it unmounts, so say so rather than go on.
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst)).context(
        "cannot catch Ctrl-C, so an interrupted restore could leave the checkpoint mounted",
    )?;

    // The sessions of this VM before the mount, so that a mount request left unanswered can
    // be told apart from somebody else's restore of the same checkpoint.
    let known: Option<Vec<String>> = client
        .flr_sessions(Some(&plan.vm.id), &deadline)
        .ok()
        .map(|list| list.into_iter().map(|s| s.flr_session_identifier).collect());
    let session = match client.flr_mount(
        &plan.vpg.id,
        &plan.vm.id,
        &plan.checkpoint.checkpoint_identifier,
        &deadline,
    ) {
        Ok(session) => session,
        Err(e) => {
            if matches!(e, ZvmError::TimedOut { .. } | ZvmError::Unreachable { .. }) {
                end_unanswered_mount(&client, &plan, known.as_deref());
            }
            return Err(e).context("File Level Restore could not mount the checkpoint");
        }
    };
    say(format!("mounted:     session {session}"));
    let result = restore(&client, &plan, &session, args, &deadline, &interrupted);
    let unmounted = unmount(&client, &session);
    match (&result, &unmounted) {
        (_, Ok(task)) => say(format!("unmounted:   session {session} (task {task})")),
        (_, Err(e)) => eprintln!(
            "warning: could not unmount session {session}: {e:#}\nhint: run `rewind flr end {session}`"
        ),
    }
    let (size, sha) = result?;
    unmounted?;
    say(format!(
        "restored:    {} ({size} bytes, sha256 {sha})",
        plan.destination.display()
    ));
    Ok(())
}

/// Finds the VM, VPG, checkpoint and destination, refusing early what cannot work.
fn plan(
    client: &Client,
    config: &Config,
    args: &RecoverArgs,
    deadline: &Deadline,
) -> anyhow::Result<Plan> {
    if args.change.is_none() && args.checkpoint.is_none() && args.before.is_none() {
        bail!(
            "say which point to restore from: --change <tool_use_id>, --checkpoint <id> or --before <time>"
        );
    }
    let before = args
        .before
        .as_deref()
        .map(crate::time::parse_utc)
        .transpose()?;
    let vm = find_vm(client, config, &args.vm, deadline)?;
    let vpgs: Vec<&VpgRef> = match &args.vpg {
        Some(name) => {
            let vpg = vm
                .vpgs
                .iter()
                .find(|v| v.name.eq_ignore_ascii_case(name) || v.id == *name)
                .with_context(|| {
                    format!(
                        "VM {} is not in VPG {name:?}; it is in {}",
                        vm.name,
                        names(&vm.vpgs)
                    )
                })?;
            vec![vpg]
        }
        None => vm.vpgs.iter().collect(),
    };

    let mut tagged = Vec::new();
    let mut chosen = None;
    for vpg in &vpgs {
        let rows = client.checkpoints(&vpg.id, None, deadline)?;
        let found = if let Some(change) = &args.change {
            rows.iter().find(|c| {
                c.tag
                    .as_deref()
                    .is_some_and(|t| tag::is_for_change(t, change))
            })
        } else if let Some(id) = &args.checkpoint {
            rows.iter().find(|c| c.checkpoint_identifier == *id)
        } else {
            rows.iter()
                .filter(|c| {
                    crate::time::parse_utc(&c.time_stamp)
                        .is_ok_and(|t| before.is_some_and(|b| t < b))
                })
                .max_by_key(|c| crate::time::parse_utc(&c.time_stamp).ok())
        };
        if let Some(found) = found {
            if chosen.is_some()
                && args.vpg.is_none()
                && args.checkpoint.is_none()
                && args.change.is_none()
            {
                bail!(
                    "VM {} is in several VPGs ({}); choose one with --vpg",
                    vm.name,
                    names(&vm.vpgs)
                );
            }
            if chosen.is_none() {
                chosen = Some(((*vpg).clone(), found.clone()));
            }
        }
        tagged.extend(
            rows.iter()
                .filter(|c| c.tag.is_some())
                .map(|c| (vpg.name.clone(), c.clone())),
        );
    }
    let Some((vpg, checkpoint)) = chosen else {
        return Err(no_checkpoint(&vm, args, &tagged));
    };

    let name = guest_file_name(&args.path)
        .with_context(|| format!("guest path {:?} names no file", args.path))?;
    let destination = args.out.join(name);
    if destination.exists() && !args.force {
        bail!(
            "{} already exists; pass --force to overwrite it",
            destination.display()
        );
    }
    Ok(Plan {
        vm,
        vpg,
        checkpoint,
        guest_path: args.path.clone(),
        destination,
    })
}

fn names(vpgs: &[VpgRef]) -> String {
    vpgs.iter()
        .map(|v| v.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The error for a point that matches no checkpoint, listing the tagged ones that exist.
fn no_checkpoint(vm: &Vm, args: &RecoverArgs, tagged: &[(String, Checkpoint)]) -> anyhow::Error {
    let what = if let Some(change) = &args.change {
        format!("no checkpoint of VM {} is tagged change={change}", vm.name)
    } else if let Some(id) = &args.checkpoint {
        format!("VM {} has no checkpoint {id}", vm.name)
    } else {
        format!(
            "VM {} has no checkpoint before {}",
            vm.name,
            args.before.as_deref().unwrap_or_default()
        )
    };
    let mut text = what;
    if tagged.is_empty() {
        text.push_str("; it has no tagged checkpoints at all");
    } else {
        text.push_str("; tagged checkpoints that exist:");
        for (vpg, c) in tagged {
            let _ = write!(
                text,
                "\n  {vpg}  {:>8}  {}  {}",
                c.checkpoint_identifier,
                c.time_stamp,
                clean(c.tag.as_deref().unwrap_or_default())
            );
        }
    }
    anyhow::anyhow!(text)
}

/// The file name of a Linux or Windows guest path.
fn guest_file_name(path: &str) -> Option<&str> {
    path.rsplit(['/', '\\'])
        .next()
        .filter(|n| !n.is_empty() && *n != "." && *n != "..")
}

/// Asks for a yes, or refuses where nobody can answer.
fn confirm(yes: bool) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "nothing was mounted or written: no terminal to confirm on; pass --yes to restore without asking"
        );
    }
    eprint!("Restore this file? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
        Ok(())
    } else {
        bail!("not confirmed; nothing was mounted or written")
    }
}

/// With the session mounted: wait for the mount, find the file, stream it to the destination.
/// Returns the size and SHA-256 of what was written.
fn restore(
    client: &Client,
    plan: &Plan,
    session: &str,
    args: &RecoverArgs,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<(u64, String)> {
    wait_for_mount(client, session, deadline, interrupted)?;
    let volume_path = locate(
        client,
        session,
        &plan.guest_path,
        args.volume.as_deref(),
        deadline,
        interrupted,
    )?;
    eprintln!("downloading {volume_path}");
    let url = client.flr_download_url(session, &volume_path, deadline)?;
    check_interrupt(interrupted)?;
    write_atomically(&plan.destination, args.force, |file, tmp| {
        let mut out = Hashing {
            inner: file,
            hasher: Sha256::new(),
        };
        let size = client
            .download_to(&url, &mut out, deadline)
            .map_err(|e| match e {
                DownloadError::Zvm(e) => anyhow::Error::new(e),
                DownloadError::Write(e) => {
                    anyhow::Error::new(e).context(format!("cannot write {}", tmp.display()))
                }
            })?;
        check_interrupt(interrupted)?;
        Ok((size, crate::hex(&out.hasher.finalize())))
    })
}

/// A writer that hashes what passes through it.
struct Hashing<'a, W> {
    inner: &'a mut W,
    hasher: Sha256,
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

fn check_interrupt(interrupted: &AtomicBool) -> anyhow::Result<()> {
    if interrupted.load(Ordering::SeqCst) {
        bail!("interrupted");
    }
    Ok(())
}

fn wait_for_mount(
    client: &Client,
    session: &str,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        check_interrupt(interrupted)?;
        let Some(state) = client.flr_session(session, deadline)? else {
            bail!(
                "FLR session {session} disappeared while mounting: the ZVM no longer knows it \
                 (ended elsewhere, or it expired)"
            );
        };
        let status = state
            .flr_session_status
            .unwrap_or_else(|| String::from("unknown"));
        match status.as_str() {
            "MountCompletedSuccessfully" => {
                eprintln!("mounted in {:.1} s", started.elapsed().as_secs_f64());
                return Ok(());
            }
            "MountFailed" => {
                bail!("Zerto could not mount the checkpoint (session {session}: MountFailed)")
            }
            other => eprintln!(
                "mounting… {other} ({:.0} s)",
                started.elapsed().as_secs_f64()
            ),
        }
        if !deadline.sleep(MOUNT_POLL) {
            bail!("the checkpoint was still mounting when the time ran out");
        }
    }
}

/// Maps a guest path to the volume path FLR browses: `/etc/app.conf` →
/// `Volume1-Ext4/etc/app.conf`. FLR names volumes by label, not by drive letter, so the path
/// is looked for on every candidate volume (NTFS/ReFS ones for `C:\…`, the others for `/…`)
/// and exactly one must hold it; `volume` (`--volume`) names the one to use instead.
fn locate(
    client: &Client,
    session: &str,
    guest_path: &str,
    volume: Option<&str>,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<String> {
    let (drive, parts) = split_guest_path(guest_path)?;
    let windows = drive.is_some();
    let volumes = client.flr_browse(session, "", deadline)?.path_items;
    let candidates = candidates(&volumes, windows, volume)?;
    let mut found = Vec::new();
    let mut unreadable = Vec::new();
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
            Ok(Some(path)) => found.push((label.to_owned(), path)),
            Ok(None) => {}
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
    choose(guest_path, &volumes, found, &unreadable)
}

/// The volume labels of a browse root.
fn labels(volumes: &[PathItem]) -> Vec<&str> {
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
    volumes: &'a [PathItem],
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
                    clean(chosen),
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
    volumes: &[PathItem],
    mut found: Vec<(String, String)>,
    unreadable: &[String],
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
            Err(anyhow::anyhow!(text))
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

/// Walks `parts` down from a volume; `None` when the volume does not hold the path.
fn find_on_volume(
    client: &Client,
    session: &str,
    label: &str,
    parts: &[&str],
    windows: bool,
    deadline: &Deadline,
    interrupted: &AtomicBool,
) -> anyhow::Result<Option<String>> {
    let mut current = label.to_owned();
    for (i, part) in parts.iter().enumerate() {
        check_interrupt(interrupted)?;
        let items = client.flr_browse(session, &current, deadline)?.path_items;
        let last = i + 1 == parts.len();
        let found = items.iter().find(|item| {
            let name = item.path.rsplit('/').next().unwrap_or(&item.path);
            let same = if windows {
                name.eq_ignore_ascii_case(part)
            } else {
                name == *part
            };
            same && (last || item.is_browsable.unwrap_or(true))
        });
        match found {
            Some(item) if item.path.contains('/') => current.clone_from(&item.path),
            Some(item) => current = format!("{current}/{}", item.path),
            None => return Ok(None),
        }
    }
    Ok(Some(current))
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
fn write_atomically<T>(
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

/// Unmounts under its own budget (the main one may be spent) and returns the task id. A
/// refused unmount (a mount still in progress, a busy ZVM) is asked for again a few times;
/// a session the ZVM does not know is not.
fn unmount(client: &Client, session: &str) -> anyhow::Result<String> {
    let deadline = Deadline::after(UNMOUNT_BUDGET);
    let mut pause = UNMOUNT_RETRY;
    let mut attempt = 1;
    let task = loop {
        match client.flr_unmount(session, &deadline) {
            Ok(task) => break task,
            Err(e) if attempt < UNMOUNT_ATTEMPTS && e.status() != Some(404) => {
                eprintln!(
                    "unmount refused ({e}); asking again in {} s",
                    pause.as_secs()
                );
                if !deadline.sleep(pause) {
                    return Err(e.into());
                }
                pause *= 2;
                attempt += 1;
            }
            Err(e) => return Err(e.into()),
        }
    };
    // Wait (briefly) for the session to go away, so `flr list` is clean when we return.
    let until = Deadline::after(Duration::from_secs(30).min(deadline.remaining()));
    while client.flr_session(session, &until)?.is_some() {
        if !until.sleep(MOUNT_POLL) {
            break;
        }
    }
    Ok(task)
}

/// After a mount request that got no answer: the ZVM may have created the session anyway, so
/// unmount any session of this VM and checkpoint that was not there before (`known`).
fn end_unanswered_mount(client: &Client, plan: &Plan, known: Option<&[String]>) {
    let deadline = Deadline::after(UNMOUNT_BUDGET);
    let checkpoint = &plan.checkpoint.checkpoint_identifier;
    let hint = format!(
        "hint: run `rewind flr list --vm {}` and `rewind flr end <id>`",
        plan.vm.id
    );
    let Some(known) = known else {
        eprintln!(
            "warning: the mount request got no answer, and the sessions of VM {} could not be listed before it, so none is ended here\n{hint}",
            clean(&plan.vm.name)
        );
        return;
    };
    let sessions = match client.flr_sessions(Some(&plan.vm.id), &deadline) {
        Ok(sessions) => sessions,
        Err(e) => {
            eprintln!(
                "warning: the mount request got no answer, and looking for a session it may have created failed: {e}\n{hint}"
            );
            return;
        }
    };
    let orphans = unanswered_sessions(known, &sessions, &plan.vm.id, checkpoint);
    if orphans.is_empty() {
        eprintln!(
            "the mount request got no answer; no session of VM {} for checkpoint {checkpoint} was left behind",
            clean(&plan.vm.name)
        );
    }
    for id in orphans {
        eprintln!(
            "the mount request got no answer, but the ZVM created session {id}; unmounting it"
        );
        match unmount(client, &id) {
            Ok(task) => say(format!("unmounted:   session {id} (task {task})")),
            Err(e) => eprintln!(
                "warning: could not unmount session {id}: {e:#}\nhint: run `rewind flr end {id}`"
            ),
        }
    }
}

/// The sessions of `vm_id` at `checkpoint` that are not in `known`: the ones a mount request
/// that got no answer created.
fn unanswered_sessions(
    known: &[String],
    sessions: &[FlrSession],
    vm_id: &str,
    checkpoint: &str,
) -> Vec<String> {
    sessions
        .iter()
        .filter(|s| {
            s.vm_identifier
                .as_deref()
                .is_none_or(|vm| vm.eq_ignore_ascii_case(vm_id))
                && s.checkpoint_identifier.as_deref() == Some(checkpoint)
                && !known.contains(&s.flr_session_identifier)
        })
        .map(|s| s.flr_session_identifier.clone())
        .collect()
}

/// `rewind flr list|end`.
pub fn flr(config_path: Option<&Path>, command: &FlrCommand) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let client = client(&config)?;
    let deadline = Deadline::after(Duration::from_secs(60));
    match command {
        FlrCommand::List { vm } => {
            let vm_id = match vm {
                Some(reference) => Some(find_vm(&client, &config, reference, &deadline)?.id),
                None => None,
            };
            let sessions = client.flr_sessions(vm_id.as_deref(), &deadline)?;
            if sessions.is_empty() {
                say("no File Level Restore sessions");
            }
            for s in sessions {
                say(format!(
                    "{}  {}  vm {}  checkpoint {}  mounted {}",
                    s.flr_session_identifier,
                    s.flr_session_status.as_deref().unwrap_or("?"),
                    s.vm_identifier.as_deref().unwrap_or("?"),
                    s.checkpoint_identifier.as_deref().unwrap_or("?"),
                    s.mount_time.as_deref().unwrap_or("?")
                ));
            }
        }
        FlrCommand::End { id } => {
            let task = unmount(&client, id)?;
            say(format!("unmounted session {id} (task {task})"));
        }
    }
    Ok(())
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

    #[test]
    fn file_names_of_guest_paths() {
        assert_eq!(guest_file_name("/etc/app.conf"), Some("app.conf"));
        assert_eq!(guest_file_name("C:\\Users\\x\\y.txt"), Some("y.txt"));
        assert_eq!(guest_file_name("/etc/"), None);
    }

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

    fn volume(path: &str) -> PathItem {
        PathItem {
            path: path.to_owned(),
            kind: Some("Partition".to_owned()),
            is_browsable: Some(true),
            size_in_bytes: None,
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
            choose(path, &root, vec![on("Volume2-NTFS")], &[]).expect("one"),
            "Volume2-NTFS/Users/x.txt"
        );
        let err = choose(
            path,
            &root,
            vec![on("System Reserved-NTFS"), on("Volume2-NTFS")],
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("several volumes")
                && err.contains("(System Reserved-NTFS, Volume2-NTFS)")
                && err.contains("--volume"),
            "{err}"
        );
        let err = choose(path, &root, Vec::new(), &["Volume2-NTFS: HTTP 400".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is not in the mounted checkpoint") && err.contains("could not browse"),
            "{err}"
        );
    }

    fn session(id: &str, vm: &str, checkpoint: &str) -> FlrSession {
        FlrSession {
            flr_session_identifier: id.to_owned(),
            flr_session_status: Some("MountInProgress".to_owned()),
            vm_identifier: Some(vm.to_owned()),
            vpg_identifier: None,
            checkpoint_identifier: Some(checkpoint.to_owned()),
            mount_time: None,
        }
    }

    #[test]
    fn only_a_new_session_of_this_vm_and_checkpoint_is_ours_after_an_unanswered_mount() {
        let sessions = [
            session("theirs", "vm-1", "42"),
            session("other-checkpoint", "vm-1", "41"),
            session("other-vm", "vm-2", "42"),
            session("ours", "vm-1", "42"),
        ];
        assert_eq!(
            unanswered_sessions(&["theirs".to_owned()], &sessions, "vm-1", "42"),
            ["ours"]
        );
    }
}
