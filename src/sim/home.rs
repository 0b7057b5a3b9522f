//! What `rewind sim` leaves for the other commands of the same user, so that one terminal
//! is enough: the configuration it owns (its first line says so; rewritten on each start, so
//! that another port keeps it right; a file without that line is the user's and never
//! changed), the lab's password in a private file beside it, and the record of a running
//! simulator (`sim.json` in rewind's state directory) that `--background` waits for and
//! `rewind sim stop` ends.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::Sim;

/// The first line of a configuration `rewind sim` wrote: while it is there, the file is the
/// simulator's to rewrite.
pub(super) const MARK: &str = "# Written by `rewind sim` for its simulator";

/// How long `--background` waits for the simulator to serve.
const START_WAIT: Duration = Duration::from_secs(60);
/// How long `rewind sim stop` waits for it to end before killing it.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// A running simulator, as `sim.json` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Record {
    pub(super) pid: u32,
    pub(super) port: u16,
    pub(super) url: String,
    /// What the simulator did with the configuration, in one line.
    pub(super) config: String,
}

/// The file to write: `--write-config`, else `--config`, else `$REWIND_CONFIG`, else the user
/// configuration (`None` with `--no-config`, or when there is no home).
pub(super) fn config_target(
    global: Option<&Path>,
    write_config: Option<&Path>,
    no_config: bool,
) -> Option<PathBuf> {
    if no_config {
        return None;
    }
    if let Some(path) = write_config.or(global) {
        return Some(path.to_path_buf());
    }
    if let Some(path) = std::env::var_os("REWIND_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    crate::config::home_dir().map(|home| home.join(".config/rewind/config.toml"))
}

/// Writes the configuration for `sim` at `target` unless it is the user's own, and returns
/// the one line that says what happened.
pub(super) fn write_config(sim: &Sim, target: &Path) -> anyhow::Result<String> {
    let target = std::path::absolute(target)
        .with_context(|| format!("cannot use {} for the configuration", target.display()))?;
    match std::fs::read_to_string(&target) {
        Ok(text) if !text.starts_with(MARK) => {
            return Ok(format!(
                "rewind sim: {} is your own configuration and stays as it is (the [zvm] section for this simulator is below)",
                target.display()
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", target.display())),
    }
    let dir = target.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stem = target.file_stem().map_or_else(
        || String::from("config"),
        |s| s.to_string_lossy().into_owned(),
    );
    let password_file = dir.join(format!("{stem}.sim-password"));
    crate::lockfile::write_private_atomic(
        &password_file,
        format!("{}\n", sim.password()).as_bytes(),
    )
    .with_context(|| format!("cannot write {}", password_file.display()))?;
    let text = format!(
        "{MARK} at {url}; it rewrites this file on each start while this line stays.\n\
         # Delete this line to keep the file as your own.\n\
         {section}",
        url = sim.url(),
        section = sim.zvm_section(&sim.url(), true, &password_line(&password_file)),
    );
    crate::commands::replace_keeping_mode(&target, text.as_bytes())?;
    Ok(format!(
        "rewind sim: wrote {} for this simulator (password in {}, readable only by you)",
        target.display(),
        password_file.display()
    ))
}

fn password_line(path: &Path) -> String {
    format!(
        "password_file = {}\n",
        toml::Value::String(path.display().to_string())
    )
}

fn record_path() -> anyhow::Result<PathBuf> {
    Ok(crate::config::state_dir()?.join("sim.json"))
}

/// The log of a simulator in the background.
fn log_path() -> anyhow::Result<PathBuf> {
    Ok(crate::config::state_dir()?.join("sim.log"))
}

/// The recorded simulator, when it still runs.
fn running() -> anyhow::Result<Option<Record>> {
    let path = record_path()?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let Ok(record) = serde_json::from_str::<Record>(&text) else {
        return Ok(None);
    };
    Ok(alive(record.pid).then_some(record))
}

/// Whether `pid` is a running `rewind sim` (a pid reused by another program is not).
fn alive(pid: u32) -> bool {
    if !crate::platform::process_exists(pid) {
        return false;
    }
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => {
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.iter().any(|a| *a == b"sim")
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .unwrap_or_default()
                    .rsplit(") ")
                    .next()
                    .is_some_and(|s| s.starts_with('Z'))
        }
        // No /proc: the signal's answer is all there is.
        Err(_) => !Path::new("/proc/self").exists(),
    }
}

/// Records this simulator as the running one, unless another still runs; returns whether it
/// did (and so must remove the record when it stops).
pub(super) fn record(sim: &Sim, config: &str) -> anyhow::Result<bool> {
    if running()?.is_some() {
        return Ok(false);
    }
    let path = record_path()?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    crate::lockfile::create_private_dir(dir)
        .with_context(|| format!("cannot use {}", dir.display()))?;
    let record = Record {
        pid: std::process::id(),
        port: sim.port(),
        url: sim.url(),
        config: config.to_owned(),
    };
    crate::lockfile::write_private_atomic(&path, &serde_json::to_vec(&record)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

/// Removes this process's record.
pub(super) fn forget() {
    if let Ok(path) = record_path()
        && let Ok(text) = std::fs::read_to_string(&path)
        && serde_json::from_str::<Record>(&text).is_ok_and(|r| r.pid == std::process::id())
    {
        let _ = std::fs::remove_file(path);
    }
}

/// `rewind sim --background`: the same command line without the flag, in its own process
/// group (a Ctrl-C at this terminal does not reach it), output to `sim.log`; returns once it
/// has recorded itself as serving.
pub(super) fn background() -> anyhow::Result<()> {
    if let Some(running) = running()? {
        anyhow::bail!(
            "a simulator already runs in the background on {} (pid {}): `rewind sim stop` ends it",
            running.url,
            running.pid
        );
    }
    let log = log_path()?;
    let dir = log.parent().unwrap_or(Path::new("/"));
    crate::lockfile::create_private_dir(dir)
        .with_context(|| format!("cannot use {}", dir.display()))?;
    let out =
        std::fs::File::create(&log).with_context(|| format!("cannot write {}", log.display()))?;
    let exe = std::env::current_exe().context("cannot find the rewind binary")?;
    let args = std::env::args_os()
        .skip(1)
        .filter(|a| a != "--background" && a != "--detach");
    let mut command = std::process::Command::new(exe);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    crate::platform::own_process_group(&mut command);
    let mut child = command.spawn().context("cannot start the simulator")?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            anyhow::bail!(
                "the simulator stopped at once ({status}): {}",
                text.trim_end().lines().last().unwrap_or("no output")
            );
        }
        if let Some(record) = running()?
            && record.pid == child.id()
        {
            crate::console::say(&record.config);
            crate::console::say(format!(
                "rewind sim: serving {} in the background (pid {}, log {}); `rewind sim stop` ends it",
                record.url,
                record.pid,
                log.display()
            ));
            return Ok(());
        }
        if started.elapsed() > START_WAIT {
            let _ = child.kill();
            anyhow::bail!(
                "the simulator did not start serving in {} s (see {})",
                START_WAIT.as_secs(),
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// `rewind sim stop`.
pub(super) fn stop() -> anyhow::Result<()> {
    let Some(record) = running()? else {
        if let Ok(path) = record_path() {
            let _ = std::fs::remove_file(path);
        }
        crate::console::say("rewind sim: no simulator is running in the background");
        return Ok(());
    };
    crate::platform::stop_process(record.pid, false)
        .with_context(|| format!("cannot stop the simulator (pid {})", record.pid))?;
    let asked = Instant::now();
    while alive(record.pid) {
        if asked.elapsed() > STOP_WAIT {
            let _ = crate::platform::stop_process(record.pid, true);
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    if let Ok(path) = record_path() {
        let _ = std::fs::remove_file(path);
    }
    crate::console::say(format!(
        "rewind sim: stopped the simulator on {} (pid {})",
        record.url, record.pid
    ));
    Ok(())
}
