//! The audit trail: one JSON line per hook decision, per `rewind guard` and `rewind recover`
//! run, and per `rewind mcp` tool call, read back by `rewind log`. Tool arguments are
//! summarised and secrets redacted (`crate::redact`). What an entry says happened is one
//! [`Ending`], the same type `rewind log --decision` parses, so the filter accepts exactly
//! the words the trail holds.
//!
//! Each line is one `write(2)` to a file opened with `O_APPEND` (mode 0600, never through a
//! symbolic link, in a directory only the user can write): the kernel moves to the end and
//! writes in one step, so parallel hook processes never interleave (they take turns, under
//! a lock on the trail, only to chain each line to the one before).
//! POSIX promises that atomicity only for pipes and up to `PIPE_BUF` (4096 bytes on Linux);
//! on a local Linux file system (ext4, xfs, btrfs, tmpfs) a regular file's write holds the
//! inode lock for the whole buffer, so longer lines stay whole too, but that is the kernel's
//! behaviour, not a standard's. On NFS `O_APPEND` is emulated by the client and two machines
//! appending at once can overwrite each other's lines: keep the audit trail on a local disk.
//! A summary is bounded (values cut, lists and objects capped) so lines stay short.

use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::SyslogTarget;
use crate::lockfile;
use crate::redact;

/// Longest argument value kept in the summary.
const VALUE_MAX: usize = 120;
/// Most items of a list, or keys of an object, kept in the summary.
const ITEMS_MAX: usize = 20;

/// What an entry says happened: a hook's decision, or how a guard, a recover or an MCP tool
/// call ended. Written and read as the kebab-case word (`recover-failed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Read-only or no VM: no decision.
    #[default]
    None,
    /// A confirmed checkpoint, context for the model (also a `rewind guard` or `checkpoint_vm`
    /// whose checkpoint Zerto lists).
    Context,
    /// A confirmed checkpoint, allowed (`on_checkpoint = "allow"`).
    Allow,
    /// Refused (also a `rewind guard` or `checkpoint_vm` without a confirmed checkpoint).
    Deny,
    /// Left to a person.
    Ask,
    /// Blocked with exit 2 (unreadable input).
    Block,
    /// The call then ran (from the PostToolUse entry).
    Ran,
    /// A `rewind recover` (or `recover_file`) that wrote the file.
    Recovered,
    /// A `rewind recover` (or `recover_file`) that failed or was not confirmed.
    RecoverFailed,
    /// A guard the caller stopped waiting for (`rewind guard` interrupted with Ctrl-C,
    /// `checkpoint_vm` cancelled or its client gone); a checkpoint already inserted stays in
    /// Zerto.
    Cancelled,
    /// An MCP tool call (`rewind mcp`) that answered; a step of `rewind restore-vm` that
    /// Zerto accepted.
    Ok,
    /// A `rewind restore-vm` that Zerto committed: the VM is at the checkpoint.
    VmRestored,
    /// A `rewind restore-vm` rolled back: the VM is as it was before.
    RolledBack,
    /// An MCP tool call refused before it acted (`recover_file` unconfirmed, a stale plan).
    Refused,
    /// An MCP tool call that failed.
    Error,
}

impl Ending {
    /// The word in the audit trail.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Context => "context",
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Ask => "ask",
            Self::Block => "block",
            Self::Ran => "ran",
            Self::Recovered => "recovered",
            Self::RecoverFailed => "recover-failed",
            Self::Cancelled => "cancelled",
            Self::Ok => "ok",
            Self::VmRestored => "vm-restored",
            Self::RolledBack => "rolled-back",
            Self::Refused => "refused",
            Self::Error => "error",
        }
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub time: String,
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    pub tool: String,
    pub class: String,
    /// Every VM the call reaches (Zerto's names once resolved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vms: Vec<String>,
    /// How the call named those VMs where that was not Zerto's name (an IP address, an
    /// alias, a host name), so `rewind log --vm` finds a call by what was typed too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vpgs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<AuditCheckpoint>,
    pub decision: Ending,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub duration_ms: u64,
    /// The call's input, never as written: a client hands the writer its fingerprint
    /// ([`input_fingerprint`], `sha256:…`), and the one writer ([`append_with`]) keeps only a
    /// digest of it keyed with the trail's own key (`hmac-sha256:…`, see [`key_path`]), so an
    /// operator holding the input can prove it ([`prove`]) while nobody can guess it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The call's arguments, redacted ([`summarise`]), only where `[audit] store_input =
    /// "redacted"` says so; or what rewind's own commands add about their step.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
}

/// The `references` a call used that are not among Zerto's `names` for the VMs they found:
/// what [`Record::named`] keeps.
pub fn named_otherwise<R: AsRef<str>>(references: &[R], names: &[String]) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for reference in references.iter().map(AsRef::as_ref) {
        let known = names
            .iter()
            .chain(&kept)
            .any(|n| n.eq_ignore_ascii_case(reference));
        if !known {
            kept.push(reference.to_owned());
        }
    }
    kept
}

/// A checkpoint the guard confirmed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AuditCheckpoint {
    pub vpg: String,
    pub id: String,
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// A trail and the collector that gets a copy of each line it is given, both as a
/// configuration names them: every writer passes it in, so whoever appends to a trail
/// forwards exactly as its own configuration says, and nothing is remembered between calls.
#[derive(Debug, Clone, Copy)]
pub struct Trail<'a> {
    pub path: &'a Path,
    /// `[audit] syslog`.
    pub syslog: Option<&'a SyslogTarget>,
}

impl<'a> Trail<'a> {
    /// The trail `config` names (see [`crate::config::HookConfig::audit_path`]) and its
    /// collector.
    pub fn of(config: &'a crate::config::Config) -> anyhow::Result<Trail<'a>> {
        Ok(Trail {
            path: config.hook.audit_path()?,
            syslog: config.audit.syslog.as_ref(),
        })
    }
}

/// A trail copied to no collector.
impl<'a> From<&'a Path> for Trail<'a> {
    fn from(path: &'a Path) -> Self {
        Trail { path, syslog: None }
    }
}

impl<'a> From<&'a std::path::PathBuf> for Trail<'a> {
    fn from(path: &'a std::path::PathBuf) -> Self {
        Trail::from(path.as_path())
    }
}

/// Appends a record to the trail as one line in one write (see the module docs), chained to
/// the line before it.
pub fn append<'a>(trail: impl Into<Trail<'a>>, record: &Record) -> anyhow::Result<()> {
    append_with(trail, record, &serde_json::Map::new())
}

/// [`append`], waiting at most `wait` for the turn to write (the hook's, whose answer must not
/// wait on another writer past its budget).
pub fn append_within<'a>(
    trail: impl Into<Trail<'a>>,
    record: &Record,
    wait: Duration,
) -> anyhow::Result<()> {
    append_chained(
        trail.into(),
        record,
        &serde_json::Map::new(),
        wait.min(CHAIN_WAIT),
        false,
    )
    .map(drop)
}

/// The longest an append waits for its turn to chain its line to the last one.
const CHAIN_WAIT: Duration = Duration::from_secs(2);

/// The key under which each line carries the hash of the line before it.
pub const CHAIN_KEY: &str = "prev";

/// [`append`] with `extra` fields after the record's own (the broker's `peer` and `op`).
///
/// Each line ends with `"prev"`: the SHA-256 (hex) of the line before it, as written, without
/// its newline; the first line's is `""`. Reading the last line and appending happen under an
/// exclusive lock on the trail itself, so parallel writers chain in turn.
pub fn append_with<'a>(
    trail: impl Into<Trail<'a>>,
    record: &Record,
    extra: &serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    append_chained(trail.into(), record, extra, CHAIN_WAIT, false).map(drop)
}

/// [`append_with`], durably: the line and the trail's head are on disk (`fsync`) when it
/// returns, and a line the disk did not take whole is cut back off the trail. The broker
/// confirms nothing before its record is written this way. Returns the trail's new head.
pub fn append_durable<'a>(
    trail: impl Into<Trail<'a>>,
    record: &Record,
    extra: &serde_json::Map<String, Value>,
) -> anyhow::Result<Head> {
    append_chained(trail.into(), record, extra, CHAIN_WAIT, true)
}

/// The trail's head: how many lines it holds and the hash of the last one. Kept beside the
/// trail in [`head_path`], rewritten with each line and sent in each syslog copy, so that a
/// trail cut short, or whose last line was edited, no longer matches it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// The number of lines (records) in the trail; the last one's number.
    pub seq: u64,
    /// SHA-256 (hex) of the last line, as [`line_hash`].
    pub hash: String,
}

/// Where the head of the trail at `trail` is kept: `<trail>.head` beside it.
pub fn head_path(trail: &Path) -> std::path::PathBuf {
    let mut name = trail.file_name().unwrap_or_default().to_owned();
    name.push(".head");
    trail.with_file_name(name)
}

/// The head kept for `trail`; `None` when there is none (a trail written before heads were).
pub fn read_head(trail: &Path) -> anyhow::Result<Option<Head>> {
    let path = head_path(trail);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| anyhow::anyhow!("the trail's head {} is not one: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!(
            "cannot read the trail's head {}: {e}",
            path.display()
        )),
    }
}

/// Writes the head beside the trail: a temporary file renamed over it (synced first when
/// `durable`).
fn write_head(trail: &Path, head: &Head, durable: bool) -> std::io::Result<()> {
    let path = head_path(trail);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".rewind-head-")
        .tempfile_in(dir)?;
    tmp.write_all(&serde_json::to_vec(head).map_err(std::io::Error::other)?)?;
    if durable {
        tmp.as_file().sync_data()?;
    }
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(())
}

/// How the fingerprint of a call's input that a client hands the writer starts.
pub const FINGERPRINT_PREFIX: &str = "sha256:";
/// How the keyed digest of a call's input that the trail keeps starts.
pub const DIGEST_PREFIX: &str = "hmac-sha256:";

/// The fingerprint of a call's input: `sha256:` and the SHA-256 (hex) of its JSON written
/// compactly, its keys in the order they came. What the trail keeps is a keyed digest of
/// this ([`append_with`]), never this: an input with few possible values (a short password)
/// could be guessed back from a plain hash.
pub fn input_fingerprint(input: &Value) -> String {
    use sha2::Digest as _;
    let bytes = serde_json::to_vec(input).unwrap_or_default();
    format!(
        "{FINGERPRINT_PREFIX}{}",
        crate::hex(&sha2::Sha256::digest(bytes))
    )
}

/// Whether `text` is a fingerprint as [`input_fingerprint`] writes it.
pub fn is_fingerprint(text: &str) -> bool {
    text.strip_prefix(FINGERPRINT_PREFIX).is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Where the key of the trail at `trail`'s input digests is kept: `<trail>.key` beside it,
/// mode 0600, made of 32 random bytes the first time a record with an input is written.
pub fn key_path(trail: &Path) -> std::path::PathBuf {
    let mut name = trail.file_name().unwrap_or_default().to_owned();
    name.push(".key");
    trail.with_file_name(name)
}

/// The length of the trail's key, in bytes.
const KEY_LEN: usize = 32;

/// The key of the trail's input digests, made (0600, never through a link) when there is none
/// and `create`.
fn trail_key(trail: &Path, create: bool) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let path = key_path(trail);
    let read = |file: &mut std::fs::File| -> anyhow::Result<Vec<u8>> {
        let mut key = Vec::with_capacity(KEY_LEN);
        file.take(KEY_LEN as u64 + 1).read_to_end(&mut key)?;
        anyhow::ensure!(
            key.len() == KEY_LEN,
            "the trail's key {} is not one ({} bytes, not {KEY_LEN})",
            path.display(),
            key.len()
        );
        Ok(key)
    };
    let mut options = std::fs::OpenOptions::new();
    crate::platform::open_without_following(&mut options);
    match options.read(true).open(&path) {
        Ok(mut file) => return read(&mut file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {}
        Err(e) => anyhow::bail!("cannot read the trail's key {}: {e}", path.display()),
    }
    let mut key = vec![0; KEY_LEN];
    getrandom::getrandom(&mut key)
        .map_err(|e| anyhow::anyhow!("no random bytes for the trail's key: {e}"))?;
    let mut options = std::fs::OpenOptions::new();
    crate::platform::open_without_following(&mut options);
    crate::platform::create_with_mode(&mut options, 0o600);
    match options.write(true).create_new(true).open(&path) {
        Ok(mut file) => {
            file.write_all(&key)?;
            file.sync_all()?;
            Ok(key)
        }
        // Another writer made it first: its key is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => trail_key(trail, false),
        Err(e) => anyhow::bail!("cannot make the trail's key {}: {e}", path.display()),
    }
}

/// The keyed digest of a fingerprint: `hmac-sha256:` and HMAC-SHA256 (hex) under `key`.
fn keyed_digest(key: &[u8], fingerprint: &str) -> String {
    use hmac::Mac as _;
    let mut mac =
        hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(fingerprint.as_bytes());
    format!(
        "{DIGEST_PREFIX}{}",
        crate::hex(&mac.finalize().into_bytes())
    )
}

/// `record` as the trail keeps it: a fingerprint of its input becomes its keyed digest, and
/// an input that is not a fingerprint is refused (it could be the input itself).
fn sealed<'r>(trail: &Path, record: &'r Record) -> anyhow::Result<std::borrow::Cow<'r, Record>> {
    let Some(input) = &record.input else {
        return Ok(std::borrow::Cow::Borrowed(record));
    };
    anyhow::ensure!(
        is_fingerprint(input),
        "a record's input is kept only as the fingerprint `sha256:<64 hex digits>`"
    );
    let key = trail_key(trail, true)?;
    let mut sealed = record.clone();
    sealed.input = Some(keyed_digest(&key, input));
    Ok(std::borrow::Cow::Owned(sealed))
}

/// What [`prove`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Proof {
    /// The record's digest is this input's.
    Matches,
    /// The record keeps the digest of another input.
    Differs,
    /// The record keeps no digest of an input (written before digests were, or a record of
    /// rewind's own).
    NoDigest,
}

/// Whether record `number` (1-based: the trail's line) of the trail at `trail` was written
/// for a call whose input has any of `fingerprints`, checked with the trail's key.
pub fn prove(trail: &Path, number: u64, fingerprints: &[String]) -> anyhow::Result<Proof> {
    let text = std::fs::read_to_string(trail)
        .map_err(|e| anyhow::anyhow!("cannot read audit trail {}: {e}", trail.display()))?;
    let line = usize::try_from(number)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| text.lines().nth(n))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "audit trail {} holds {} records, not record {number}",
                trail.display(),
                text.lines().count()
            )
        })?;
    let record: Record = serde_json::from_str(line)
        .map_err(|e| anyhow::anyhow!("audit trail {} record {number}: {e}", trail.display()))?;
    let Some(digest) = record.input.filter(|d| d.starts_with(DIGEST_PREFIX)) else {
        return Ok(Proof::NoDigest);
    };
    let key = trail_key(trail, false)?;
    Ok(
        if fingerprints.iter().any(|f| keyed_digest(&key, f) == digest) {
            Proof::Matches
        } else {
            Proof::Differs
        },
    )
}

/// The number of the next line: one past the head's, or, for a trail without a head yet, one
/// past the lines it holds.
fn next_seq(path: &Path, file: &std::fs::File) -> anyhow::Result<u64> {
    if let Some(head) = read_head(path)? {
        return Ok(head.seq + 1);
    }
    let mut count = 0u64;
    let mut last = b'\n';
    let mut reader = std::io::BufReader::new(file);
    std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(0))?;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        #[expect(
            clippy::naive_bytecount,
            reason = "counted once, for a trail without a head; not worth a dependency"
        )]
        let lines = buffer.iter().filter(|b| **b == b'\n').count();
        count += lines as u64;
        last = buffer[buffer.len() - 1];
        let n = buffer.len();
        reader.consume(n);
    }
    Ok(count + u64::from(last != b'\n') + 1)
}

/// [`append_with`], waiting at most `wait` for the turn to write, synced when `durable`.
fn append_chained(
    trail: Trail<'_>,
    record: &Record,
    extra: &serde_json::Map<String, Value>,
    wait: Duration,
    durable: bool,
) -> anyhow::Result<Head> {
    let path = trail.path;
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        anyhow::anyhow!("audit trail {}: {what}: {e}", path.display())
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        lockfile::create_private_dir(dir).map_err(|e| failed("its directory", &e))?;
    }
    let mut file = lockfile::open_append_private(path).map_err(|e| failed("cannot open it", &e))?;
    take_turn(&file, path, wait)?;
    let size = file
        .metadata()
        .map_err(|e| failed("cannot read it", &e))?
        .len();
    let prev = last_line(&file)
        .map_err(|e| failed("cannot read it", &e))?
        .map(|line| line_hash(&line))
        .unwrap_or_default();
    let seq = next_seq(path, &file)?;
    let record = &*sealed(path, record)?;
    let mut line = serde_json::to_vec(&Line {
        record,
        extra,
        prev: &prev,
    })?;
    line.push(b'\n');
    // One call: a regular file takes the whole buffer or fails (a full disk, a quota); a
    // short count is cut back off, never completed by a second write another line could
    // split.
    let written = file.write(&line);
    let cut_back = |file: &std::fs::File| {
        let _ = file.set_len(size);
        let _ = file.sync_data();
    };
    match written {
        Ok(n) if n == line.len() => {}
        Ok(n) => {
            cut_back(&file);
            anyhow::bail!(
                "audit trail {}: only {n} of {} bytes written (the disk is full?); the partial line was cut back off",
                path.display(),
                line.len()
            );
        }
        Err(e) => {
            cut_back(&file);
            return Err(failed("cannot write it", &e));
        }
    }
    if durable && let Err(e) = file.sync_data() {
        cut_back(&file);
        return Err(failed("cannot sync it to disk", &e));
    }
    let head = Head {
        seq,
        hash: line_hash(&line[..line.len() - 1]),
    };
    if let Err(e) = write_head(path, &head, durable) {
        cut_back(&file);
        return Err(failed("cannot write its head", &e));
    }
    // The trail's turn ends here; the collector's copy follows, never holding a writer up.
    drop(file);
    if let Some(target) = trail.syslog {
        syslog::forward(path, target, &line[..line.len() - 1], record, &head);
    }
    Ok(head)
}

/// One trail line as written: the record's fields, the extra ones after them, the chain's
/// hash last. Written straight from the record, with no JSON tree built in between.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    record: &'a Record,
    /// Fields a caller adds (the broker's `op`, `peer` and `user`), never named like a
    /// record's field; one named like the chain's key is not written, since the chain's own
    /// comes last.
    #[serde(flatten, serialize_with = "without_chain_key")]
    extra: &'a serde_json::Map<String, Value>,
    prev: &'a str,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde hands a field to its serializer by reference"
)]
fn without_chain_key<S: serde::Serializer>(
    extra: &&serde_json::Map<String, Value>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(extra.iter().filter(|(key, _)| key.as_str() != CHAIN_KEY))
}

/// Waits (at most `wait`) for an exclusive lock on the trail itself, released when
/// `file` is closed: one writer at a time reads the last line and appends after it.
fn take_turn(file: &std::fs::File, path: &Path, wait: Duration) -> anyhow::Result<()> {
    let deadline = crate::deadline::Deadline::after(wait);
    let mut pause = std::time::Duration::from_millis(2);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                if !deadline.sleep(pause) {
                    anyhow::bail!(
                        "audit trail {}: another writer held it for {} ms",
                        path.display(),
                        wait.as_millis()
                    );
                }
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                anyhow::bail!("cannot lock audit trail {}: {e}", path.display())
            }
        }
    }
}

/// The hash a line's successor carries: SHA-256 of its bytes (no newline), in hex.
pub fn line_hash(line: &[u8]) -> String {
    use sha2::Digest as _;
    crate::hex(&sha2::Sha256::digest(line))
}

/// The last non-empty line of the trail open in `file` (without its newline), read from the
/// end through the descriptor it is appended on, its turn taken.
fn last_line(mut file: &std::fs::File) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let size = file.metadata()?.len();
    // One page first: a record is rarely longer, and every page of the window is touched on
    // every hook call (the window grows four times over until it holds a whole line).
    let mut window: u64 = 4 * 1024;
    loop {
        let start = size.saturating_sub(window);
        file.seek(SeekFrom::Start(start))?;
        let mut tail = Vec::with_capacity(usize::try_from(size - start).unwrap_or(0));
        file.take(size - start).read_to_end(&mut tail)?;
        let trimmed = tail.strip_suffix(b"\n").unwrap_or(&tail);
        match trimmed.iter().rposition(|b| *b == b'\n') {
            Some(at) => return Ok(Some(trimmed[at + 1..].to_vec())),
            None if start == 0 => {
                return Ok((!trimmed.is_empty()).then(|| trimmed.to_vec()));
            }
            None => window = window.saturating_mul(4),
        }
    }
}

/// Where `rewind log --verify` found the chain whole, or where it breaks.
#[derive(Debug, PartialEq, Eq)]
pub enum Chain {
    /// Every line carries the hash of the one before; `legacy` lines at the start were written
    /// before the trail was chained. `anchored`: the trail's head ([`Head`]) was found and the
    /// trail ends where it says, so no line was cut from the end either.
    Whole {
        lines: usize,
        legacy: usize,
        anchored: bool,
    },
    /// The first line (1-based) whose `prev` is not the hash of the line before it: that line
    /// or the one before was edited, a line between them deleted, or lines reordered.
    Broken { line: usize, why: String },
}

/// Checks the hash chain of the trail at `path`, and its end against the head kept beside it
/// ([`head_path`]) when there is one.
pub fn verify(path: &Path) -> anyhow::Result<Chain> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow::anyhow!("cannot read audit trail {}: {e}", path.display()))?;
    let head = read_head(path)?;
    let chain = verify_bytes(&bytes)?;
    Ok(match head {
        Some(head) => against_head(chain, &bytes, &head, &head_path(path)),
        None => chain,
    })
}

/// A whole chain checked against the trail's head: its last line must be the head's number
/// and hash.
fn against_head(chain: Chain, bytes: &[u8], head: &Head, kept: &Path) -> Chain {
    let Chain::Whole { lines, legacy, .. } = chain else {
        return chain;
    };
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let last = body.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    let count = lines as u64;
    let line = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if count < head.seq {
        return Chain::Broken {
            line: line(count + 1),
            why: format!(
                "the trail ends at record {count}, but its head ({}) says it holds {} records: record {} and any after it were cut off",
                kept.display(),
                head.seq,
                count + 1
            ),
        };
    }
    if count > head.seq {
        return Chain::Broken {
            line: line(head.seq + 1),
            why: format!(
                "the trail's head ({}) ends at record {}: records from {} on were not written by rewind",
                kept.display(),
                head.seq,
                head.seq + 1
            ),
        };
    }
    if count > 0 && line_hash(last) != head.hash {
        return Chain::Broken {
            line: lines,
            why: format!(
                "record {lines} is not the last record the trail's head ({}) anchors: it was edited or replaced",
                kept.display()
            ),
        };
    }
    Chain::Whole {
        lines,
        legacy,
        anchored: true,
    }
}

/// [`verify`] over the trail's bytes.
pub fn verify_bytes(bytes: &[u8]) -> anyhow::Result<Chain> {
    let mut previous: Option<&[u8]> = None;
    let mut legacy = 0;
    let mut chained = 0;
    let mut lines = 0;
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return Ok(Chain::Whole {
            lines: 0,
            legacy: 0,
            anchored: false,
        });
    }
    for (n, line) in body.split(|b| *b == b'\n').enumerate() {
        let number = n + 1;
        lines = number;
        let prev = serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|v| v.get(CHAIN_KEY).map(|p| p.as_str().map(str::to_owned)));
        match prev {
            None if chained == 0 => legacy += 1,
            None => {
                return Ok(Chain::Broken {
                    line: number,
                    why: String::from(
                        "it carries no hash of the line before it (not a JSON record written by rewind, or its \"prev\" was removed)",
                    ),
                });
            }
            Some(None) => {
                return Ok(Chain::Broken {
                    line: number,
                    why: String::from("its \"prev\" is not a string"),
                });
            }
            Some(Some(prev)) => {
                let expected = previous.map(line_hash).unwrap_or_default();
                if prev != expected {
                    let why = if previous.is_none() {
                        String::from(
                            "it is the first line but names a line before it: earlier lines were deleted",
                        )
                    } else {
                        format!(
                            "it does not carry the hash of line {} (that line was edited, a line after it deleted, or lines reordered)",
                            number - 1
                        )
                    };
                    return Ok(Chain::Broken { line: number, why });
                }
                chained += 1;
            }
        }
        previous = Some(line);
    }
    if chained == 0 {
        return Ok(Chain::Broken {
            line: 1,
            why: String::from("no line carries the hash chain"),
        });
    }
    Ok(Chain::Whole {
        lines,
        legacy,
        anchored: false,
    })
}

/// `[audit] syslog`: every line appended to a trail is also sent to the organisation's
/// collector as an RFC 5424 message: app-name `rewind`, the process id, the decision as
/// MSGID, the trail's head after the line as structured data (`[rewind@32473 seq="…"
/// hash="…"]`: the collector's copy anchors the trail's end), and the line itself (JSON, with
/// its `prev` hash) as the message. Every header field is checked or escaped: the time is
/// sent only when it is an RFC 3339 time, the host name keeps its printable characters, and
/// the structured data's values escape `"`, `\` and `]`.
/// The collector never holds or changes a decision: a send waits at most [`syslog::WAIT`],
/// and a copy that could not be sent is counted in `syslog-lost.log` beside the trail, which
/// `rewind doctor` reports. A UDP datagram to a collector that is down is lost without a
/// trace, and anyone on the host or its network can send a datagram that looks like a copy: a
/// collector over UDP is only configured by naming it `udp://`. A `host:port` with no scheme
/// is TCP with octet counting (RFC 6587).
pub mod syslog {
    use std::io::Write as _;
    use std::path::Path;
    use std::time::Duration;

    use super::{Ending, Head, Record};
    use crate::config::SyslogTarget;

    /// The longest a send (connect and write) may take.
    pub const WAIT: Duration = Duration::from_millis(250);
    /// Beside the trail: one line per copy that did not reach the collector.
    pub const LOST_FILE: &str = "syslog-lost.log";
    /// Facility 13, log audit (RFC 5424 table 1).
    const FACILITY: u8 = 13;

    /// Sends `line` (a line of `trail`, without its newline) to `target`; a failure is
    /// counted beside the trail, never returned.
    pub(super) fn forward(
        trail: &Path,
        target: &SyslogTarget,
        line: &[u8],
        record: &Record,
        head: &Head,
    ) {
        let message = format(
            &String::from_utf8_lossy(line),
            record,
            head,
            &crate::platform::hostname(),
            std::process::id(),
        );
        if let Err(e) = send(target, message.as_bytes()) {
            let lost = trail.with_file_name(LOST_FILE);
            let note = format!(
                "{} {target} {}: {e}\n",
                crate::time::format_utc_millis(std::time::SystemTime::now()),
                record.decision
            );
            if let Ok(mut file) = crate::lockfile::open_append_private(&lost) {
                let _ = file.write(note.as_bytes());
            }
        }
    }

    /// How many copies of `trail`'s lines did not reach the collector, and the last reason.
    pub fn lost(trail: &Path) -> (usize, Option<String>) {
        let text = std::fs::read_to_string(trail.with_file_name(LOST_FILE)).unwrap_or_default();
        (text.lines().count(), text.lines().last().map(str::to_owned))
    }

    /// The private structured data's id: rewind's name at the enterprise number RFC 5612
    /// sets aside for documentation and examples, as rewind has none of its own.
    pub const SD_ID: &str = "rewind@32473";

    /// A structured data parameter's value, escaped as RFC 5424 section 6.3.3 says.
    fn sd_value(value: &str) -> String {
        let mut escaped = String::with_capacity(value.len());
        for c in value.chars() {
            if matches!(c, '"' | '\\' | ']') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        escaped
    }

    /// The RFC 5424 message for one trail line, the trail's head after it as structured data.
    pub fn format(line: &str, record: &Record, head: &Head, hostname: &str, pid: u32) -> String {
        let severity: u8 = match record.decision {
            Ending::Deny
            | Ending::Ask
            | Ending::Block
            | Ending::RecoverFailed
            | Ending::Refused
            | Ending::Error => 4,
            _ => 6,
        };
        let priority = FACILITY * 8 + severity;
        // Only a time that parses, in RFC 3339's own characters: nothing else reaches the
        // header.
        let time = if !record.time.is_empty()
            && record
                .time
                .bytes()
                .all(|b| b.is_ascii_digit() || b"-:.TZ+".contains(&b))
            && crate::time::parse_utc(&record.time).is_ok()
        {
            record.time.as_str()
        } else {
            "-"
        };
        let host: String = hostname
            .chars()
            .filter(char::is_ascii_graphic)
            .take(255)
            .collect();
        let host = if host.is_empty() {
            String::from("-")
        } else {
            host
        };
        // The line is JSON, which escapes every control character: it holds no line break.
        format!(
            "<{priority}>1 {time} {host} rewind {pid} {} [{SD_ID} seq=\"{}\" hash=\"{}\"] {line}",
            record.decision,
            head.seq,
            sd_value(&head.hash)
        )
    }

    fn send(target: &SyslogTarget, message: &[u8]) -> std::io::Result<()> {
        use std::net::ToSocketAddrs as _;
        match target {
            SyslogTarget::Unix(path) => crate::platform::send_datagram(path, message, WAIT),
            SyslogTarget::Udp(address) => {
                let to = address
                    .to_socket_addrs()?
                    .next()
                    .ok_or_else(|| std::io::Error::other("no address"))?;
                let local = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
                let socket = std::net::UdpSocket::bind(local)?;
                socket.send_to(message, to).map(|_| ())
            }
            SyslogTarget::Tcp(address) => {
                let mut last = std::io::Error::other("no address");
                for to in address.to_socket_addrs()? {
                    match std::net::TcpStream::connect_timeout(&to, WAIT) {
                        Ok(mut stream) => {
                            stream.set_write_timeout(Some(WAIT))?;
                            // RFC 6587 octet counting: the length, a space, the message.
                            let mut framed = format!("{} ", message.len()).into_bytes();
                            framed.extend_from_slice(message);
                            return stream.write_all(&framed);
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::super::line_hash;
        use super::*;

        #[test]
        fn a_record_is_an_rfc5424_message_with_the_trail_line_as_its_text() {
            let record = Record {
                time: String::from("2026-03-02T09:00:00.000Z"),
                decision: Ending::Deny,
                ..Record::default()
            };
            let head = Head {
                seq: 7,
                hash: String::from("ab"),
            };
            assert_eq!(
                format(r#"{"a":1}"#, &record, &head, "web host", 42),
                r#"<108>1 2026-03-02T09:00:00.000Z webhost rewind 42 deny [rewind@32473 seq="7" hash="ab"] {"a":1}"#
            );
        }

        /// A time that is not one never reaches the header: a line break in it would start a
        /// second message the collector takes for rewind's.
        #[test]
        fn a_forged_time_is_left_out_of_the_header_and_values_are_escaped() {
            for forged in [
                "2026-03-02T09:00:00Z\n<110>1 2026-03-02T09:00:00Z h rewind 1 allow - {}",
                "now",
                "2026-03-02T09:00:00Z x",
            ] {
                let record = Record {
                    time: String::from(forged),
                    ..Record::default()
                };
                let message = format("{}", &record, &Head::default(), "h\nx", 1);
                assert!(
                    message.starts_with(
                        "<110>1 - hx rewind 1 none [rewind@32473 seq=\"0\" hash=\"\"] "
                    ),
                    "{message}"
                );
                assert!(!message.contains('\n'), "{message}");
            }
            assert_eq!(sd_value(r#"a"b\c]d"#), r#"a\"b\\c\]d"#);
        }

        #[test]
        fn each_line_reaches_a_unix_datagram_collector_as_written() {
            if !crate::platform::LOCAL_SOCKETS {
                return; // no /dev/log on Windows: a collector is named host:port there
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let socket = dir.path().join("log.sock");
            let mut receive = crate::platform::datagram_collector(&socket).expect("bind");
            let trail = dir.path().join("audit.jsonl");
            let target = SyslogTarget::Unix(socket.clone());
            let record = Record {
                time: String::from("2026-03-02T09:00:00.000Z"),
                tool: String::from("mcp__ssh__exec"),
                decision: Ending::Context,
                ..Record::default()
            };
            let forwarded = super::super::Trail {
                path: &trail,
                syslog: Some(&target),
            };
            super::super::append(forwarded, &record).expect("appended");
            let mut buffer = vec![0; 65536];
            let n = receive(&mut buffer).expect("a datagram");
            let message = String::from_utf8_lossy(&buffer[..n]).into_owned();
            let line = std::fs::read_to_string(&trail).expect("trail");
            let header = format!(
                "<110>1 2026-03-02T09:00:00.000Z {} rewind {} context [rewind@32473 seq=\"1\" hash=\"{}\"] ",
                crate::platform::hostname(),
                std::process::id(),
                line_hash(line.trim_end().as_bytes())
            );
            assert_eq!(message, format!("{header}{}", line.trim_end()));
            assert_eq!(lost(&trail).0, 0);
        }

        #[test]
        fn a_collector_that_is_down_is_counted_not_raised() {
            let dir = tempfile::tempdir().expect("tempdir");
            let trail = dir.path().join("audit.jsonl");
            let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            let port = closed.local_addr().expect("addr").port();
            drop(closed);
            let target = SyslogTarget::Tcp(format!("127.0.0.1:{port}"));
            let forwarded = super::super::Trail {
                path: &trail,
                syslog: Some(&target),
            };
            for _ in 0..2 {
                super::super::append(forwarded, &Record::default()).expect("the trail is written");
            }
            let (count, last) = lost(&trail);
            assert_eq!(count, 2);
            assert!(last.is_some_and(|l| l.contains(&format!("tcp://127.0.0.1:{port}"))));
        }
    }
}

/// Which records `rewind log` shows.
#[derive(Debug, Default)]
pub struct Filter<'a> {
    pub vm: Option<&'a str>,
    pub change: Option<&'a str>,
    pub decision: Option<Ending>,
    /// A session id, or the start of one.
    pub session: Option<&'a str>,
    /// Only records at or after this time.
    pub since: Option<std::time::SystemTime>,
}

impl Filter<'_> {
    /// Whether `r` passes.
    pub fn keeps(&self, r: &Record) -> bool {
        self.vm.is_none_or(|vm| {
            r.vms
                .iter()
                .chain(&r.named)
                .any(|v| v.eq_ignore_ascii_case(vm))
        }) && self.change.is_none_or(|c| r.change.as_deref() == Some(c))
            && self.decision.is_none_or(|d| r.decision == d)
            && self.session.is_none_or(|s| {
                r.session
                    .as_deref()
                    .is_some_and(|own| !s.is_empty() && own.starts_with(s))
            })
            && self
                .since
                .is_none_or(|since| crate::time::parse_utc(&r.time).is_ok_and(|at| at >= since))
    }
}

/// Reads the records that pass `filter`; a line that does not parse is reported with its
/// number, not skipped silently.
pub fn read(path: &Path, filter: &Filter<'_>) -> anyhow::Result<Vec<Record>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(anyhow::anyhow!(
                "cannot read audit log {}: {e}",
                path.display()
            ));
        }
    };
    let mut records = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(&line)
            .map_err(|e| anyhow::anyhow!("audit log {} line {}: {e}", path.display(), n + 1))?;
        if filter.keeps(&record) {
            records.push(record);
        }
    }
    Ok(records)
}

/// A summary of tool arguments safe to keep: secret-looking keys redacted, secrets written
/// into values redacted, long values cut.
pub fn summarise(args: &Value) -> Value {
    summarise_for(args, None)
}

/// The keys under which a call names the program its argument vector is for.
const PROGRAM_KEYS: &[&str] = &["command", "cmd", "program", "executable", "binary", "bin"];

/// [`summarise`], where an argument vector is for `program` (named beside it, if at all).
fn summarise_for(args: &Value, program: Option<&str>) -> Value {
    match args {
        Value::Object(map) => {
            let program = PROGRAM_KEYS
                .iter()
                .find_map(|key| map.get(*key).and_then(Value::as_str))
                .and_then(|command| command.split_whitespace().next());
            // An entry that names a secret beside its value: `{"name": "MYSQL_ROOT_PASSWORD",
            // "value": "x"}` (an `env` list), `{"key": "api_token", "value": "x"}`.
            let named_secret = ["name", "Name", "key", "Key"]
                .iter()
                .filter_map(|key| map.get(*key).and_then(Value::as_str))
                .any(redact::is_secret_key);
            Value::Object(
                map.iter()
                    .take(ITEMS_MAX)
                    .map(|(k, v)| {
                        let value = if redact::is_secret_key(k)
                            || (named_secret && matches!(k.as_str(), "value" | "Value"))
                        {
                            Value::String(String::from(redact::REDACTED))
                        } else {
                            summarise_for(v, program)
                        };
                        (cut(k), value)
                    })
                    .collect(),
            )
        }
        // A `[name, value]` pair naming a secret (`["Authorization", "Bearer x"]`): the value
        // goes, an authorization scheme before it stays.
        Value::Array(items)
            if items.len() == 2
                && items[1].is_string()
                && items[0].as_str().is_some_and(redact::is_secret_key) =>
        {
            let name = items[0].as_str().unwrap_or_default();
            let value = items[1].as_str().unwrap_or_default();
            let redacted = redact::redact_text(&format!("{name}: {value}"));
            let value = redacted
                .strip_prefix(&format!("{name}: "))
                .filter(|v| *v != value)
                .map_or_else(|| String::from(redact::REDACTED), str::to_owned);
            Value::Array(vec![Value::String(cut(name)), Value::String(cut(&value))])
        }
        // An argument vector: a secret flag's value is the next item.
        Value::Array(items) if items.iter().all(Value::is_string) => Value::Array(
            redact::redact_argv(
                program,
                &items
                    .iter()
                    .take(ITEMS_MAX)
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>(),
            )
            .into_iter()
            .map(|item| Value::String(cut(&item)))
            .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .take(ITEMS_MAX)
                .map(|item| summarise_for(item, program))
                .collect(),
        ),
        Value::String(s) => Value::String(cut(&redact::redact_text(s))),
        other => other.clone(),
    }
}

/// `text`, cut to [`VALUE_MAX`] characters with an ellipsis.
fn cut(text: &str) -> String {
    // A text of no more bytes than that has no more characters either: nothing to count.
    if text.len() <= VALUE_MAX {
        return text.to_owned();
    }
    // One pass, up to the first character past the limit, if there is one.
    match text.char_indices().nth(VALUE_MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The chain links to the whole last line however long it is: shorter than the first
    /// window read from the end, longer than it, or the only line.
    #[test]
    fn the_last_line_is_found_whole_at_any_length() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        let open = || crate::lockfile::open_append_private(&path).expect("opened");
        assert_eq!(last_line(&open()).expect("read"), None);
        for length in [1, 100, 4095, 4096, 4097, 20_000, 70_000, 300_000] {
            let last = "x".repeat(length);
            for before in ["", "first\n", "first\nsecond\n"] {
                std::fs::write(&path, format!("{before}{last}\n")).expect("written");
                assert_eq!(
                    last_line(&open()).expect("read"),
                    Some(last.clone().into_bytes()),
                    "{length} after {before:?}"
                );
            }
        }
    }

    /// `rewind log --decision` takes exactly the words the trail holds: each outcome is
    /// written, read back and parsed from the command line as the same word.
    #[test]
    fn every_outcome_is_one_word_in_the_trail_and_on_the_command_line() {
        use clap::ValueEnum as _;
        for outcome in Ending::value_variants() {
            let word = outcome.as_str();
            assert_eq!(serde_json::to_value(outcome).expect("json"), json!(word));
            assert_eq!(
                serde_json::from_value::<Ending>(json!(word)).expect("json"),
                *outcome
            );
            let value = outcome.to_possible_value().expect("listed");
            assert_eq!(value.get_name(), word);
            assert_eq!(Ending::from_str(word, false), Ok(*outcome));
        }
        assert!(Ending::from_str("foo", false).is_err());
    }

    #[test]
    fn secrets_are_redacted_and_long_values_cut() {
        let summary = summarise(&json!({
            "host": "jp-ubuntu",
            "Password": "hunter2",
            "nested": {"api_key": "abc", "command": "x".repeat(500)},
        }));
        let text = summary.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("\"abc\""),
            "{text}"
        );
        assert_eq!(summary["host"], "jp-ubuntu");
        assert!(
            summary["nested"]["command"]
                .as_str()
                .expect("str")
                .chars()
                .count()
                <= VALUE_MAX + 1
        );
    }

    #[test]
    fn a_value_is_cut_after_its_first_characters_whatever_their_width() {
        for unit in ["a", "é", "日", "🦀", "a\u{301}"] {
            for n in [0, 1, VALUE_MAX - 1, VALUE_MAX, VALUE_MAX + 1, 2 * VALUE_MAX] {
                let text = unit.repeat(n);
                let chars = text.chars().count();
                let expected = if chars > VALUE_MAX {
                    format!("{}…", text.chars().take(VALUE_MAX).collect::<String>())
                } else {
                    text.clone()
                };
                assert_eq!(cut(&text), expected, "{unit} x {n}");
            }
        }
    }

    /// What once reached `audit.jsonl` verbatim, as the hook summarises tool arguments.
    #[test]
    fn the_audit_summary_keeps_no_secret() {
        let mut cases = vec![
            json!({"pw": "hunter2"}),
            json!({"command": "mysql -phunter2"}),
            json!({"command": "curl -u admin:hunter2 https://web01/api"}),
            json!({"command": "sshpass -p hunter2 ssh web01 uptime"}),
            json!({"script": "X=1\nDB_PASSWORD=hunter2"}),
            json!({"command": "deploy --password\thunter2"}),
            json!({"url": "https://admin:hunter2@web01.example/"}),
            json!({"args": ["--token", "hunter2"]}),
            json!({"args": ["-p", "hunter2"]}),
            json!({"command": "sshpass", "args": ["-p", "hunter2", "ssh", "web01"]}),
            json!({"command": "docker", "args": ["login", "-p", "hunter2"]}),
            json!({"command": "echo hunter2 | sudo -S reboot"}),
            json!({"command": "net user admin hunter2 /add"}),
            json!({"ssh_key": "hunter2"}),
            json!({"tls_key": "hunter2"}),
            json!({"headers": ["Authorization: Bearer hunter2"]}),
            json!({"env": {"MYSQL_PWD": "hunter2"}}),
            json!({"options": [{"name": "x", "credentials": {"user": "a", "hunter2": 1}}]}),
            json!({"env": [{"name": "MYSQL_ROOT_PASSWORD", "value": "hunter2"}]}),
            json!({"env": [{"Name": "API_TOKEN", "Value": "hunter2"}]}),
            json!({"headers": [["Authorization", "Bearer hunter2"]]}),
            json!({"headers": [["X-Api-Key", "hunter2"]]}),
            json!({"pin": "hunter2"}),
            json!({"otp": "hunter2"}),
            json!({"key": "hunter2"}),
            json!({"identity_file_content": "hunter2"}),
            json!({"ssh_key": "not a PEM hunter2"}),
            json!({"host": "admin:hunter2@unknownvm"}),
            json!({"host": "ssh://admin:hunter2@web01:22/"}),
            json!({"command": "SSHPASS=hunter2 sshpass -e ssh web01"}),
            json!({"command": "ipmitool -H bmc -U admin -P hunter2 power reset"}),
            json!({"command": "mysqladmin -u root password hunter2"}),
            json!({"command": "openssl enc -aes256 -k hunter2 -in f"}),
            json!({"command": "vault login hunter2"}),
            json!({"command": "setx API_TOKEN hunter2"}),
            json!({"command": "$p = ConvertTo-SecureString \"hunter2\" -AsPlainText -Force"}),
            json!({"command": "htpasswd -b f user hunter2"}),
            json!({"command": "echo 'root:hunter2' | chpasswd"}),
            json!({"command": "docker login -u me -p hunter2 registry"}),
        ];
        for key in [
            "pw",
            "pwd",
            "passwd",
            "pass",
            "secret",
            "token",
            "apikey",
            "api_key",
            "auth",
            "credential",
            "credentials",
            "private_key",
        ] {
            for value in [
                json!("hunter2"),
                json!(8_675_309),
                json!(["hunter2"]),
                json!({"v": "hunter2"}),
            ] {
                cases.push(json!({ key: value }));
            }
        }
        for args in cases {
            let summary = summarise(&args).to_string();
            assert!(
                !summary.contains("hunter2") && !summary.contains("8675309"),
                "{args} -> {summary}"
            );
        }
        let ordinary =
            json!({"host": "passage01", "command": "ssh -p 2222 passage01 'cat /etc/passwd'"});
        assert_eq!(summarise(&ordinary), ordinary);
        // The VM a call reaches stays, whatever the flags around it.
        for ordinary in [
            json!({"env": [{"name": "LANG", "value": "C"}]}),
            json!({"headers": [["Accept", "application/json"]]}),
            json!({"command": "ssh -o StrictHostKeyChecking=no admin@web01 uptime"}),
            json!({"command": "ssh", "args": ["-p", "2222", "web01", "uptime"]}),
            json!({"args": ["ssh", "-p", "2222", "web01"]}),
            json!({"command": "mysql", "args": ["-p", "app", "-h", "db01"]}),
        ] {
            assert_eq!(summarise(&ordinary), ordinary);
        }
    }

    /// The trail keeps a keyed digest of the input, never the fingerprint the writer was
    /// handed: the key is made beside the trail (0600) on first use, the same input proves
    /// the record, another does not, and an input that is not a fingerprint is refused.
    #[test]
    fn the_input_is_kept_as_a_digest_keyed_beside_the_trail_that_proves_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        let input = json!({"command": "mysql -pS3cr3t -h db01 -e 'drop table t'"});
        let fingerprint = input_fingerprint(&input);
        assert!(is_fingerprint(&fingerprint), "{fingerprint}");
        let record = Record {
            tool: String::from("Bash"),
            input: Some(fingerprint.clone()),
            ..Record::default()
        };
        append(&path, &record).expect("appended");
        append(&path, &Record::default()).expect("a record without an input");
        let text = std::fs::read_to_string(&path).expect("trail");
        let digest_hex = &fingerprint[FINGERPRINT_PREFIX.len()..];
        assert!(
            !text.contains("S3cr3t") && !text.contains(digest_hex),
            "neither the input nor its plain hash: {text}"
        );
        let kept = read(&path, &Filter::default()).expect("read");
        let digest = kept[0].input.clone().expect("a digest");
        assert!(digest.starts_with(DIGEST_PREFIX), "{digest}");
        if let Some(mode) = crate::platform::mode(&key_path(&path)) {
            assert_eq!(mode & 0o777, 0o600);
        }
        let key = std::fs::metadata(key_path(&path)).expect("the key");
        assert_eq!(key.len(), KEY_LEN as u64);
        assert_eq!(
            prove(&path, 1, std::slice::from_ref(&fingerprint)).expect("proved"),
            Proof::Matches
        );
        let other = input_fingerprint(&json!({"command": "mysql -h db01"}));
        assert_eq!(prove(&path, 1, &[other]).expect("checked"), Proof::Differs);
        assert_eq!(
            prove(&path, 2, std::slice::from_ref(&fingerprint)).expect("checked"),
            Proof::NoDigest
        );
        assert!(prove(&path, 3, &[fingerprint]).is_err(), "no record 3");
        // Another trail, another key: the same input has another digest there.
        let elsewhere = dir.path().join("other.jsonl");
        append(&elsewhere, &record).expect("appended");
        let there = read(&elsewhere, &Filter::default()).expect("read")[0]
            .input
            .clone();
        assert_ne!(there, Some(digest));
        // Anything but a fingerprint (the input itself) is never written.
        let raw = Record {
            input: Some(String::from("mysql -pS3cr3t")),
            ..Record::default()
        };
        assert!(append(&path, &raw).is_err());
        assert!(
            !std::fs::read_to_string(&path)
                .expect("trail")
                .contains("S3cr3t")
        );
        assert_eq!(
            verify(&path).expect("verified"),
            Chain::Whole {
                lines: 2,
                legacy: 0,
                anchored: true
            }
        );
    }

    #[test]
    fn appended_records_read_back_filtered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state/audit.jsonl");
        for (vm, typed, decision) in [
            ("jp-ubuntu", "10.0.0.5", Ending::Context),
            ("db01", "db01", Ending::Deny),
            ("jp-ubuntu", "jp", Ending::Ask),
        ] {
            let vms = vec![String::from(vm)];
            let record = Record {
                named: named_otherwise(&[typed], &vms),
                vms,
                decision,
                tool: "mcp__ssh__exec".into(),
                ..Record::default()
            };
            append(&path, &record).expect("append");
        }
        let all = read(&path, &Filter::default()).expect("read");
        assert_eq!(all.len(), 3);
        if let Some(mode) = crate::platform::mode(&path) {
            assert_eq!(mode & 0o777, 0o600, "the audit trail is private");
        }
        let some = read(
            &path,
            &Filter {
                vm: Some("JP-UBUNTU"),
                decision: Some(Ending::Ask),
                ..Filter::default()
            },
        )
        .expect("read");
        assert_eq!(some.len(), 1);
        // The address the call typed finds the call made to the VM Zerto names otherwise.
        let by_address = read(
            &path,
            &Filter {
                vm: Some("10.0.0.5"),
                ..Filter::default()
            },
        )
        .expect("read");
        assert_eq!(by_address.len(), 1);
        assert_eq!(by_address[0].decision, Ending::Context);
        assert!(all[1].named.is_empty(), "db01 was named by its own name");
        std::fs::write(&path, "{not json\n").expect("write");
        let err = read(&path, &Filter::default())
            .expect_err("corrupt")
            .to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    fn long_record(writer: usize, n: usize) -> Record {
        Record {
            tool: format!("mcp__ssh__exec_{writer}_{n}"),
            reason: Some("x".repeat(6000)),
            decision: Ending::Context,
            ..Record::default()
        }
    }

    /// Parallel writers (each its own open file, as parallel hook processes are), lines
    /// longer than PIPE_BUF: every line comes back whole, and no lock file is made. Four
    /// writers writing back to back are contention enough; more, on a loaded machine, can keep
    /// one waiting past the [`CHAIN_WAIT`] any writer gives up after.
    #[test]
    fn parallel_appends_never_interleave() {
        const WRITERS: usize = 4;
        const LINES: usize = 40;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let path = &path;
                scope.spawn(move || {
                    for n in 0..LINES {
                        append(path, &long_record(writer, n)).expect("append");
                    }
                });
            }
        });
        let records = read(&path, &Filter::default()).expect("every line parses");
        assert_eq!(records.len(), WRITERS * LINES);
        let names: std::collections::BTreeSet<_> = records.iter().map(|r| &r.tool).collect();
        assert_eq!(names.len(), WRITERS * LINES, "no line lost or doubled");
        let files = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(files, 2, "the audit trail and its head alone, no lock file");
        assert_eq!(
            verify(&path).expect("readable"),
            Chain::Whole {
                lines: WRITERS * LINES,
                legacy: 0,
                anchored: true,
            },
            "parallel writers chain in turn"
        );
    }

    fn chained_trail(lines: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        for n in 0..lines {
            append(&path, &long_record(0, n)).expect("append");
        }
        (dir, path)
    }

    fn lines_of(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .expect("trail")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn broken_at(lines: &[String]) -> usize {
        let text = format!("{}\n", lines.join("\n"));
        match verify_bytes(text.as_bytes()).expect("readable") {
            Chain::Broken { line, .. } => line,
            whole @ Chain::Whole { .. } => panic!("the chain should break: {whole:?}"),
        }
    }

    fn broken_on_disk(path: &Path, lines: &[String]) -> (usize, String) {
        std::fs::write(path, format!("{}\n", lines.join("\n"))).expect("rewrite");
        match verify(path).expect("readable") {
            Chain::Broken { line, why } => (line, why),
            whole @ Chain::Whole { .. } => panic!("the chain should break: {whole:?}"),
        }
    }

    /// The head kept beside the trail shows what the chain alone cannot: the last lines cut
    /// off, or the last line edited; each is named by its record number.
    #[test]
    fn the_head_shows_a_cut_tail_and_an_edited_last_line() {
        let (_dir, path) = chained_trail(5);
        let head = read_head(&path).expect("readable").expect("a head");
        assert_eq!(head.seq, 5);
        let lines = lines_of(&path);
        assert_eq!(head.hash, line_hash(lines[4].as_bytes()));

        let (line, why) = broken_on_disk(&path, &lines[..3]);
        assert_eq!(line, 4, "{why}");
        assert!(why.contains("record 4"), "{why}");

        let mut edited = lines.clone();
        edited[4] = edited[4].replace("\"decision\":\"context\"", "\"decision\":\"allow\"");
        let (line, why) = broken_on_disk(&path, &edited);
        assert_eq!(line, 5, "{why}");

        let (line, _) = broken_on_disk(&path, &[]);
        assert_eq!(line, 1, "an emptied trail");

        std::fs::write(&path, format!("{}\n", lines.join("\n"))).expect("restored");
        assert!(matches!(
            verify(&path).expect("readable"),
            Chain::Whole { anchored: true, .. }
        ));
        append(&path, &long_record(0, 9)).expect("append");
        assert_eq!(read_head(&path).expect("readable").expect("head").seq, 6);
    }

    /// An edit, a deletion and a reordering each break the chain at the line that names it.
    #[test]
    fn verify_names_the_line_where_an_edit_a_deletion_or_a_reordering_breaks_the_chain() {
        let (_dir, path) = chained_trail(6);
        assert_eq!(
            verify(&path).expect("readable"),
            Chain::Whole {
                lines: 6,
                legacy: 0,
                anchored: true,
            }
        );
        let lines = lines_of(&path);

        let mut edited = lines.clone();
        edited[2] = edited[2].replace("\"decision\":\"context\"", "\"decision\":\"allow\"");
        assert_ne!(edited[2], lines[2], "the edit changed the line");
        assert_eq!(
            broken_at(&edited),
            4,
            "line 4 no longer carries line 3's hash"
        );

        let mut deleted = lines.clone();
        deleted.remove(3);
        assert_eq!(broken_at(&deleted), 4, "what was line 5 now follows line 3");

        let mut first_gone = lines.clone();
        first_gone.remove(0);
        assert_eq!(
            broken_at(&first_gone),
            1,
            "a first line that names a predecessor"
        );

        let mut reordered = lines.clone();
        reordered.swap(1, 2);
        assert_eq!(broken_at(&reordered), 2);

        let mut stripped = lines.clone();
        stripped[4] = stripped[4].replace("\"prev\"", "\"was\"");
        assert_eq!(broken_at(&stripped), 5, "a chained line without its hash");

        // Lines from before the chain existed are a prefix the chain starts after.
        let legacy = format!(
            "{}\n{}\n",
            serde_json::to_string(&long_record(9, 9)).expect("json"),
            lines[0]
        );
        assert!(matches!(
            verify_bytes(legacy.as_bytes()).expect("readable"),
            Chain::Broken { line: 2, .. }
        ));
    }

    #[test]
    fn a_trail_written_before_the_chain_is_a_prefix_and_the_chain_follows_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        let old = format!(
            "{}\n",
            serde_json::to_string(&long_record(9, 9)).expect("json")
        );
        std::fs::write(&path, old).expect("old trail");
        append(&path, &long_record(0, 1)).expect("append");
        assert_eq!(
            verify(&path).expect("readable"),
            Chain::Whole {
                lines: 2,
                legacy: 1,
                anchored: true,
            }
        );
    }

    #[test]
    fn a_planted_symlink_does_not_redirect_the_append() {
        if !crate::platform::MODE_BITS {
            return; // nothing on Windows refuses a link here: see platform::windows
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious\n").expect("victim");
        let state = dir.path().join("state");
        lockfile::create_private_dir(&state).expect("state");
        let path = state.join("audit.jsonl");
        crate::platform::symlink(&victim, &path).expect("plant");
        let err = append(&path, &long_record(0, 0)).expect_err("a link is refused");
        assert!(err.to_string().contains("audit.jsonl"), "{err}");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"precious\n");
    }

    #[test]
    fn a_directory_others_can_write_is_refused_and_an_old_public_file_made_private() {
        if !crate::platform::MODE_BITS {
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).expect("dir");
        for mode in [0o770, 0o707, 0o777, 0o1777] {
            crate::platform::set_mode(&shared, mode).expect("chmod");
            let err = append(&shared.join("audit.jsonl"), &Record::default()).expect_err("refused");
            assert!(err.to_string().contains("group or others"), "{err}");
            assert!(!shared.join("audit.jsonl").exists());
        }
        crate::platform::set_mode(&shared, 0o755).expect("chmod");
        let path = shared.join("audit.jsonl");
        std::fs::write(&path, b"").expect("old file");
        crate::platform::set_mode(&path, 0o644).expect("chmod");
        append(&path, &Record::default()).expect("append");
        assert_eq!(crate::platform::mode(&path), Some(0o600));
    }

    /// A name that says secret, written any way (separators, case, a prefix, a word after),
    /// at any place a value follows a name (an option, `NAME=value`, JSON, YAML, an `env`
    /// entry, a `[name, value]` pair, an argument vector): its value never reaches the text
    /// or the summary that leave the process.
    fn secret_name() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        // Words that make a name secret anywhere in it, and those that must end it.
        let anywhere = prop::sample::select(vec![
            "secret",
            "password",
            "pwd",
            "token",
            "otp",
            "credential",
            "credentials",
            "passwd",
        ]);
        let last = prop::sample::select(vec!["pass", "key", "pin", "apikey", "sshpass"]);
        let prefix = prop::sample::select(vec!["", "db", "mysql_root", "x", "api", "vault", "my"]);
        let suffix = prop::sample::select(vec!["", "value", "file", "b64"]);
        let sep = prop::sample::select(vec!["_", "-", ".", "camel"]);
        let upper = any::<bool>();
        (
            prefix,
            prop_oneof![
                anywhere.prop_map(|w| (w, true)),
                last.prop_map(|w| (w, false))
            ],
            suffix,
            sep,
            upper,
        )
            .prop_map(|(prefix, (word, any_place), suffix, sep, upper)| {
                let mut words: Vec<&str> = Vec::new();
                if !prefix.is_empty() {
                    words.push(prefix);
                }
                words.push(word);
                // Only a word that makes a name secret anywhere may have another after it.
                if any_place && !suffix.is_empty() {
                    words.push(suffix);
                }
                let name = if sep == "camel" {
                    words
                        .iter()
                        .enumerate()
                        .map(|(i, w)| {
                            if i == 0 {
                                (*w).to_owned()
                            } else {
                                let mut c = w.chars();
                                c.next()
                                    .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                                    .unwrap_or_default()
                            }
                        })
                        .collect::<String>()
                } else {
                    words.join(sep)
                };
                if upper && sep != "camel" {
                    name.to_uppercase()
                } else {
                    name
                }
            })
    }

    proptest::proptest! {
        #[test]
        fn a_value_after_any_secret_name_is_redacted_wherever_it_stands(
            name in secret_name(),
            value in "Zq[A-Za-z0-9]{8,14}",
            program in proptest::sample::select(vec!["deploy", "tool", "./run.sh", "app"]),
            place in 0usize..7,
        ) {
            let text = match place {
                0 => format!("{program} --{name} {value} --env prod"),
                1 => format!("{program} --{name}={value} web01"),
                2 => format!("{name}={value} {program} web01"),
                3 => format!("{program} -{name} {value}"),
                4 => format!("export {name}={value}; {program}"),
                5 => format!("{{\"{name}\": \"{value}\", \"host\": \"web01\"}}"),
                _ => format!("{name}: {value}\nhost: web01"),
            };
            let redacted = redact::redact_text(&text);
            proptest::prop_assert!(!redacted.contains(&value), "{} -> {}", text, redacted);
            for args in [
                json!({ name.clone(): value }),
                json!({"env": [{"name": name, "value": value}]}),
                json!({"args": [format!("--{name}"), value]}),
                json!({"headers": [[name, value]]}),
                json!({"command": text}),
            ] {
                let summary = summarise(&args).to_string();
                proptest::prop_assert!(!summary.contains(&value), "{} -> {}", args, summary);
            }
        }
    }
}
