//! `rewind doctor`: each piece the hook depends on, one pass or fail line each.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;

use super::say;
use crate::catalog::{Catalog, ToolClass};
use crate::cli::{DoctorArgs, Scope};
use crate::commands::install;
use crate::config::Config;
use crate::deadline::Deadline;
use crate::host::Host;
use crate::host::settings::{self, Events, Installed, Layout, OnFailure, Unit};
use crate::zvm::Client;
use crate::zvm::tls::{self, ProbeError, Trust};

/// Time allowed for the ZVM checks.
const ZVM_BUDGET: Duration = Duration::from_secs(30);
/// Time allowed to connect and finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Checks {
    passed: usize,
    warned: usize,
    failed: usize,
    /// Steps still to take that are no failure (the hook not installed yet).
    next: usize,
    /// Collect for one JSON document instead of printing lines.
    json: bool,
    items: Vec<serde_json::Value>,
}

impl Checks {
    fn record(&mut self, status: &str, what: &str, detail: &str) {
        if self.json {
            self.items
                .push(serde_json::json!({"status": status, "check": what, "detail": detail}));
        } else {
            let label = match status {
                "ok" => "ok   ",
                "warn" => "warn ",
                "next" => "next ",
                _ => "FAIL ",
            };
            say(format!("{label} {what}: {detail}"));
        }
    }

    fn pass(&mut self, what: &str, detail: impl AsRef<str>) {
        self.passed += 1;
        self.record("ok", what, detail.as_ref());
    }

    fn warn(&mut self, what: &str, detail: impl AsRef<str>) {
        self.warned += 1;
        self.record("warn", what, detail.as_ref());
    }

    /// A step the user has not taken yet, in the order a newcomer takes them: no failure.
    fn next(&mut self, what: &str, detail: impl AsRef<str>) {
        self.next += 1;
        self.record("next", what, detail.as_ref());
    }

    fn fail(&mut self, what: &str, detail: impl AsRef<str>) {
        self.failed += 1;
        self.record("fail", what, detail.as_ref());
    }

    /// The summary line, or the whole JSON document.
    fn finish(&self) -> anyhow::Result<()> {
        if self.json {
            super::print_json(&serde_json::json!({
                "checks": self.items,
                "passed": self.passed,
                "warnings": self.warned,
                "failed": self.failed,
                "next": self.next,
            }))?;
        } else {
            let next = match self.next {
                0 => String::new(),
                1 => String::from(", 1 next step"),
                n => format!(", {n} next steps"),
            };
            say(format!(
                "{} passed, {} warnings, {} failed{next}",
                self.passed, self.warned, self.failed
            ));
        }
        if self.failed > 0 {
            bail!("{} check(s) failed", self.failed);
        }
        Ok(())
    }
}

/// Runs every check; fails when any check failed.
pub fn doctor(config_path: Option<&Path>, args: &DoctorArgs) -> anyhow::Result<()> {
    let mut checks = Checks {
        json: args.json,
        ..Checks::default()
    };
    let config = match Config::discover(config_path) {
        Ok(config) => {
            match &config.origin {
                Some(path) => checks.pass("config", path.display().to_string()),
                // Not a pass: with no file there is no ZVM to reach, and the checks below fail.
                None => checks.warn(
                    "config",
                    "no configuration file found, so defaults apply and no ZVM is configured",
                ),
            }
            for warning in &config.warnings {
                checks.warn("config", warning);
            }
            config
        }
        Err(e) => {
            checks.fail("config", format!("{e:#}"));
            return checks.finish();
        }
    };

    match Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs) {
        Ok(catalog) => {
            checks.pass(
                "catalogs",
                format!(
                    "{} entries ({} user file(s))",
                    catalog.entries().len(),
                    config.hook.catalogs.len()
                ),
            );
            for (pass, what, detail) in super::catalog::doctor_findings(&catalog) {
                if pass {
                    checks.pass(&what, detail);
                } else {
                    checks.warn(&what, detail);
                }
            }
        }
        Err(e) => checks.fail("catalogs", format!("{e:#}")),
    }

    if broker_checks(&config, &mut checks) {
        zvm_checks(&config, &mut checks);
    }
    net_check(&config, &mut checks);
    audit_checks(&config, &mut checks);
    hook_checks(args, &mut checks);

    checks.finish()
}

/// The protected-VM net the hook reads on its read-only path: there, and refreshed within
/// `[shell] inventory_max_age_hours` (the ZVM checks above refresh it when they list VMs).
fn net_check(config: &Config, checks: &mut Checks) {
    const WHAT: &str = "protected-vm net";
    const REFRESH: &str = "run `rewind vms` (any listing of the ZVM's VMs refreshes it)";
    if let Some(socket) = &config.broker.socket {
        let known = crate::broker::client::published_net(&config.broker);
        let path = crate::broker::client::published_net_path(socket);
        if known.is_empty() {
            checks.warn(
                WHAT,
                format!(
                    "the broker has published no net at {} that the hook can believe (owned by root or the broker's account, writable by nobody else): a listing through the broker ({REFRESH}) publishes it",
                    path.display()
                ),
            );
        } else {
            checks.pass(
                WHAT,
                format!(
                    "{} references (VM names, guest IPs), published by the broker at {}",
                    known.len(),
                    path.display()
                ),
            );
        }
        return;
    }
    let Ok(dir) = crate::config::cache_dir_path() else {
        return checks.warn(WHAT, format!("no cache directory: {REFRESH}"));
    };
    let known = crate::inventory::Inventory::load(&dir);
    match crate::inventory::Inventory::age(&dir) {
        None => checks.warn(
            WHAT,
            format!("no inventory of protected VMs yet, so a program no grammar reads is never asked about for naming one: {REFRESH}"),
        ),
        Some(age) if age > config.shell.inventory_max_age => checks.warn(
            WHAT,
            format!(
                "{} references, written {} h ago (older than [shell] inventory_max_age_hours = {}): {REFRESH}",
                known.len(),
                age.as_secs() / 3600,
                config.shell.inventory_max_age.as_secs() / 3600
            ),
        ),
        Some(_) => checks.pass(
            WHAT,
            format!("{} references (VM names, guest IPs)", known.len()),
        ),
    }
}

/// The broker, when the configuration names one: its socket, who serves it, and the ZVM
/// checks as the broker answers them (`status`), for nothing here may read its credentials;
/// false is returned then. Else the plain fact of single-user mode, and true.
fn broker_checks(config: &Config, checks: &mut Checks) -> bool {
    let Some(socket) = &config.broker.socket else {
        checks.warn(
            "single-user mode",
            "the ZVM credentials (the password's variable or command), the token cache and the audit trail belong to this user, so an agent running as this user can read them, call the ZVM itself, delete what protects the VMs and rewrite the trail; run `rewind broker` under an account of its own and set [broker] socket (docs/broker.md)",
        );
        return true;
    };
    socket_checks(socket, &config.broker.user, checks);
    match crate::broker::client::reach(&config.broker) {
        Ok(server) => {
            checks.pass(
                "broker",
                format!(
                    "{} is served by user id {} (pid {})",
                    socket.display(),
                    server.uid,
                    server.pid
                ),
            );
            let me = crate::platform::effective_uid();
            if me == 0 || me == server.uid {
                checks.warn(
                    "credentials",
                    format!(
                        "this user (uid {me}) is root or the broker's account, which can read the broker's ZVM credentials, token and trail; the agents must run as other users"
                    ),
                );
            } else {
                checks.pass(
                    "credentials",
                    format!(
                        "out of this user's reach (uid {me}): the ZVM's address, password and token and the audit trail are the broker's (uid {}); this configuration reads no ZVM credentials",
                        server.uid
                    ),
                );
            }
            broker_status(config, checks);
        }
        Err(e) => checks.fail("broker", e.to_string()),
    }
    if config.zvm.is_some() {
        checks.warn(
            "broker",
            "this configuration names a broker but also has a [zvm] section; the broker's settings are used, and these credentials are within the reach of whoever can read this file",
        );
    }
    false
}

/// The broker's socket as the hook will find it: there, a socket, owned by root or the
/// broker's account, in a directory nobody else can change.
fn socket_checks(socket: &Path, user: &str, checks: &mut Checks) {
    let what = "broker socket";
    let mut owners = vec![0];
    owners.extend(crate::platform::uid_named(user));
    let name = |uid: u32| {
        crate::platform::user_name(uid)
            .map_or_else(|| format!("uid {uid}"), |n| format!("{n} (uid {uid})"))
    };
    let owned = match crate::platform::ownership(socket) {
        Ok(owned) => owned,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return checks.fail(
                what,
                format!(
                    "no socket at {}; start the broker (with systemd: systemctl enable --now rewind-broker.socket)",
                    socket.display()
                ),
            );
        }
        Err(e) => return checks.fail(what, format!("cannot look at {}: {e}", socket.display())),
    };
    if !owned.is_socket {
        return checks.fail(what, format!("{} is not a socket", socket.display()));
    }
    if !owners.contains(&owned.uid) {
        return checks.fail(
            what,
            format!(
                "{} belongs to {}, not to root or the broker's account {user:?} ([broker] user); the hook refuses it",
                socket.display(),
                name(owned.uid)
            ),
        );
    }
    let dir = socket.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir
        && let Ok(dir_owned) = crate::platform::ownership(dir)
        && (!owners.contains(&dir_owned.uid) || dir_owned.mode & 0o022 != 0)
    {
        return checks.fail(
            what,
            format!(
                "its directory {} can be changed by others than root and the broker's account (owner {}, mode {:o}); the hook refuses it",
                dir.display(),
                name(dir_owned.uid),
                dir_owned.mode & 0o7777
            ),
        );
    }
    checks.pass(
        what,
        format!(
            "{}: a socket of {}, mode {:o}, in a directory only root and the broker's account can change",
            socket.display(),
            name(owned.uid),
            owned.mode & 0o777
        ),
    );
}

/// The ZVM checks as the broker makes them with its own configuration and token.
fn broker_status(config: &Config, checks: &mut Checks) {
    let deadline = Deadline::after(ZVM_BUDGET);
    let answer = crate::broker::client::call(
        &config.broker,
        crate::broker::protocol::Op::Status,
        &deadline,
        &mut |_| {},
    );
    let status = match answer.map(serde_json::from_value::<crate::broker::protocol::Status>) {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            return checks.fail(
                "broker status",
                format!("an answer that is not a status: {e}"),
            );
        }
        Err(e) => return checks.fail("broker status", e.to_string()),
    };
    for check in status.checks {
        let what = format!("broker {}", check.check);
        match check.status.as_str() {
            "ok" => checks.pass(&what, check.detail),
            "warn" => checks.warn(&what, check.detail),
            _ => checks.fail(&what, check.detail),
        }
    }
}

/// The syslog collector's losses, when `[audit] syslog` is set.
fn audit_checks(config: &Config, checks: &mut Checks) {
    let Some(target) = &config.audit.syslog else {
        return;
    };
    let Ok(trail) = config.hook.audit_path() else {
        return;
    };
    match crate::audit::syslog::lost(trail) {
        (0, _) => checks.pass("syslog", format!("records go to {target} too; none lost")),
        (count, last) => checks.warn(
            "syslog",
            format!(
                "{count} audit record{} did not reach the syslog collector {target} (counted in {}); the last: {}",
                if count == 1 { "" } else { "s" },
                trail
                    .with_file_name(crate::audit::syslog::LOST_FILE)
                    .display(),
                last.unwrap_or_default()
            ),
        ),
    }
}

/// The ZVM in order: reachable, TLS, login, API. Each stage is claimed only once it was
/// shown, with a fresh handshake and a fresh login (the token cache is not used), and a
/// failed stage ends the ZVM checks.
fn zvm_checks(config: &Config, checks: &mut Checks) {
    let zvm = match config.require_zvm() {
        Ok(zvm) => zvm,
        Err(e) => return checks.fail("zvm", format!("{e:#}")),
    };
    checks.pass("zvm url", &zvm.url);
    let trust = match Trust::from_config(zvm) {
        Ok(trust) => trust,
        Err(e) => return checks.fail("tls", e.to_string()),
    };
    if zvm.url.starts_with("https://") {
        match tls::handshake(&zvm.url, &trust, HANDSHAKE_TIMEOUT) {
            Ok(_) => {
                checks.pass("zvm reachable", "TCP connection made");
                if matches!(trust, Trust::Anything) {
                    checks.warn("tls", trust.describe());
                } else {
                    checks.pass("tls", trust.describe());
                }
            }
            Err(ProbeError::Tls(detail)) => {
                checks.pass("zvm reachable", "TCP connection made");
                return checks.fail(
                    "tls",
                    format!(
                        "{detail}; run `rewind trust {}` to see the certificate and pin it",
                        zvm.url
                    ),
                );
            }
            Err(ProbeError::Unreachable(detail)) => {
                return checks.fail(
                    "zvm reachable",
                    format!("{detail}; check [zvm] url, the port, and that this machine may reach the ZVM"),
                );
            }
            Err(ProbeError::Url(detail)) => return checks.fail("zvm url", detail),
        }
    } else {
        checks.warn("tls", "plain http: nothing is encrypted or verified");
    }
    let cache = match crate::config::cache_dir() {
        Ok(dir) => dir,
        Err(e) => return checks.fail("cache directory", format!("{e:#}")),
    };
    let client = match Client::new(zvm, &cache) {
        Ok(client) => client,
        Err(e) => return checks.fail("zvm client", e.to_string()),
    };
    let deadline = Deadline::after(ZVM_BUDGET);
    if let Err(e) = client.fresh_login(&deadline) {
        return checks.fail("authentication", e.to_string());
    }
    checks.pass(
        "authentication",
        format!("logged in as {:?} (a fresh login)", zvm.username),
    );
    match client.vms(None, &deadline) {
        Ok(vms) => checks.pass("zvm api", format!("{} protected VMs", vms.len())),
        Err(e) => return checks.fail("zvm api", e.to_string()),
    }
    match client.vpgs(&deadline) {
        Ok(vpgs) => {
            for vpg in vpgs {
                let status = vpg.health.clone().unwrap_or_else(|| {
                    vpg.status
                        .map_or_else(|| String::from("unknown"), |s| format!("status {s}"))
                });
                let healthy =
                    matches!(vpg.status, Some(1)) || status.eq_ignore_ascii_case("MeetingSLA");
                let what = format!("vpg {}", &vpg.name);
                if healthy {
                    checks.pass(&what, status);
                } else {
                    checks.warn(&what, format!("{status}: checkpoints may fail or lag"));
                }
            }
        }
        Err(e) => checks.fail("vpgs", e.to_string()),
    }
    let tested = super::selftest::marker(&zvm.url)
        .ok()
        .and_then(|path| std::fs::read_to_string(path).ok());
    match tested {
        Some(at) => checks.pass("selftest", format!("held against this ZVM at {}", at.trim())),
        None => checks.warn(
            "selftest",
            "never run against this ZVM: run `rewind selftest --vm <a test VM> --path <a small guest file>` once to prove the whole loop (tag, list, mount, browse, download, unmount)",
        ),
    }
}

/// The hook entries really installed, host by host (`--host`, or every host with a rewind
/// entry): no kill switch, exactly one rewind entry per event across the host's files, a
/// binary that exists, the right `--host`, a matcher that covers the shell tools and every
/// catalogued mutating tool, a timeout above the budget of the config the entry itself
/// reads, and the host's fail-closed setting (or, where it has none, a plain warning).
fn hook_checks(args: &DoctorArgs, checks: &mut Checks) {
    let hosts: Vec<Host> = match (args.host, &args.settings) {
        (Some(host), _) => vec![host],
        (None, Some(_)) => vec![Host::ClaudeCode],
        (None, None) => Host::ALL.to_vec(),
    };
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let mut any = false;
    for host in hosts {
        let layout = host.settings();
        let layer: Vec<PathBuf> = if args.settings.is_some() {
            Vec::new()
        } else {
            layout.managed.layer_files(&root)
        };
        let files: Vec<PathBuf> = if let Some(path) = &args.settings {
            vec![path.clone()]
        } else {
            let mut files = layer.clone();
            for scope in [Scope::User, Scope::Project, Scope::Local] {
                if let Ok(f) = layout.files(scope) {
                    for path in std::iter::once(f.write).chain(f.also) {
                        if !files.contains(&path) {
                            files.push(path);
                        }
                    }
                }
            }
            files
        };
        let mut found = Vec::new();
        let mut problems = Vec::new();
        let mut switches = Vec::new();
        let mut documents = Vec::new();
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            match settings::parse(&text, &path) {
                Ok(value) => {
                    let entries = layout.inspect(&path, &value);
                    if layer.contains(&path) {
                        documents.push((path.clone(), value));
                    } else if let Some(off) = (layout.kill_switch)(&value) {
                        switches.push((path.clone(), off));
                    }
                    found.extend(entries);
                }
                // A broken file that mentions rewind is one of ours the host cannot read.
                Err(e) if text.contains("rewind") => {
                    problems.push((String::from("hook"), format!("{e:#}")));
                }
                Err(_) => {}
            }
        }
        let (merged, layer_off) = merged_layer(layout, &documents, &root);
        let in_files = found.iter().any(|h| layer.contains(&h.file));
        let mut layer = layer;
        if host == Host::ClaudeCode && args.settings.is_none() {
            let delivered = crate::host::claude_code::mdm::delivered(&root);
            found.extend(mdm_checks(layout, delivered, in_files, &mut layer, checks));
        }
        if found.is_empty()
            && args.host.is_none()
            && problems.is_empty()
            && switches.is_empty()
            && layer_off.is_none()
        {
            continue;
        }
        any = true;
        for (what, problem) in problems {
            checks.fail(&what, problem);
        }
        let managed: Vec<&Installed> = found.iter().filter(|h| layer.contains(&h.file)).collect();
        let locked = is_locked(&layout.managed, &merged);
        let managed_file = managed
            .first()
            .map_or_else(|| layout.managed.under(&root), |h| h.file.clone());
        layer_checks(layout, &managed_file, &managed, locked, &root, checks);
        if let Some((file, off)) = layer_off {
            checks.fail(
                &format!("hook in {}", file.display()),
                format!("{off}: an administrator file, read with the one holding rewind's entries"),
            );
        }
        if !locked {
            overridden_lock(layout, &documents, &managed_file, checks);
        }
        switch_checks(
            layout,
            switches,
            !managed.is_empty(),
            locked,
            &managed_file,
            checks,
        );
        host_checks(layout, &found, &root, checks);
    }
    if !any {
        nothing_installed(args, checks);
    }
}

/// No rewind entry in any file looked at: the next step of a newcomer (install), or a
/// failure of the one settings file asked about.
fn nothing_installed(args: &DoctorArgs, checks: &mut Checks) {
    let host = args.host.unwrap_or(Host::ClaudeCode);
    match &args.settings {
        // The file asked about has no entry: that file is not what it should be.
        Some(path) => checks.fail(
            "hook",
            format!(
                "no rewind hook in {}; run `rewind install --host <host>`",
                path.display()
            ),
        ),
        // Nothing installed anywhere: the step after this one, not a failure.
        None => checks.next(
            "hook",
            format!(
                "not installed yet: `rewind install --host {}` (or --host {})",
                host.name(),
                Host::ALL
                    .iter()
                    .filter(|h| **h != host)
                    .map(|h| h.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

/// Whether an administrator file sets every lock key of its host to `true`.
fn is_locked(managed: &settings::Managed, value: &serde_json::Value) -> bool {
    !managed.lock.is_empty()
        && managed.lock.iter().all(|key| {
            key.split('.')
                .try_fold(value, |at, part| at.get(part))
                .is_some_and(|v| v == &serde_json::Value::Bool(true))
        })
}

/// The administrator layer's files merged as the host merges them, and the kill switch the
/// merge leaves on, named by the last file that sets it.
fn merged_layer(
    layout: &Layout,
    documents: &[(PathBuf, serde_json::Value)],
    root: &Path,
) -> (serde_json::Value, Option<(PathBuf, String)>) {
    let mut merged = serde_json::Value::Object(serde_json::Map::new());
    for (_, value) in documents {
        settings::merge_layer(&mut merged, value);
    }
    let off = (layout.kill_switch)(&merged).map(|off| {
        let file = documents
            .iter()
            .rev()
            .find(|(_, v)| (layout.kill_switch)(v).is_some())
            .map_or_else(|| layout.managed.under(root), |(p, _)| p.clone());
        (file, off)
    });
    (merged, off)
}

/// Claude Code's MDM-delivered settings (macOS managed preferences, the Windows policy key):
/// whether they deliver rewind's hook, and whether, holding settings of their own, they keep
/// Claude Code from applying `managed-settings.json` and its drop-ins, where rewind's entries
/// are (`in_files`). Returns the rewind entries they deliver, their source added to `layer`.
fn mdm_checks(
    layout: &Layout,
    delivered: Option<crate::host::claude_code::mdm::Delivered>,
    in_files: bool,
    layer: &mut Vec<PathBuf>,
    checks: &mut Checks,
) -> Vec<Installed> {
    use crate::host::claude_code::mdm;
    let Some(delivered) = delivered else {
        return Vec::new();
    };
    let what = format!("mdm {}", layout.title);
    let source = PathBuf::from(&delivered.source);
    let settings = match delivered.settings {
        Ok(settings) => settings,
        Err(why) => {
            checks.fail(
                &what,
                format!(
                    "{}: {why}; Claude Code applies none of it, and no lower managed source either",
                    delivered.source
                ),
            );
            return Vec::new();
        }
    };
    let found = layout.inspect(&source, &settings);
    if let Some(off) = (layout.kill_switch)(&settings) {
        checks.fail(&what, format!("{}: {off}", delivered.source));
    }
    let empty = settings.as_object().is_none_or(serde_json::Map::is_empty);
    if !found.is_empty() {
        checks.pass(
            &what,
            format!("rewind's hook is delivered by MDM: {}", delivered.source),
        );
        layer.push(source);
    } else if in_files && !empty && !mdm::merges_lower_sources(&settings) {
        checks.fail(
            &what,
            format!(
                "{} delivers Claude Code's managed settings without rewind's hook and takes precedence over managed-settings.json and its drop-ins, so Claude Code does not apply rewind's entries there: deliver them by MDM too (`rewind install --host claude-code --scope managed --print-mdm`), or set \"managedSourcesBehavior\": \"merge\" in it",
                delivered.source
            ),
        );
    } else if empty || mdm::merges_lower_sources(&settings) {
        checks.pass(
            &what,
            format!(
                "{}: no rewind entry; Claude Code also applies managed-settings.json and its drop-ins",
                delivered.source
            ),
        );
    } else {
        checks.pass(&what, format!("{}: no rewind entry", delivered.source));
    }
    found
}

/// Kill switches in files outside the administrator layer: a warning where the managed entry
/// (`managed`: there is one) outlives them, a fail where they switch it off too.
fn switch_checks(
    layout: &Layout,
    switches: Vec<(PathBuf, String)>,
    managed: bool,
    locked: bool,
    managed_file: &Path,
    checks: &mut Checks,
) {
    for (path, off) in switches {
        let what = format!("hook in {}", path.display());
        if managed
            && (layout.managed.outlives_kill_switch
                || (locked
                    && (layout.managed.beyond_lock.is_empty()
                        || !off.contains(layout.managed.beyond_lock))))
        {
            checks.warn(
                &what,
                format!(
                    "{off} for this file's entries; the managed entry in {} still runs",
                    managed_file.display()
                ),
            );
        } else if managed {
            checks.fail(
                &what,
                format!(
                    "{off}, the managed entry in {} too; `rewind install --host {} --scope managed --lock` keeps it running",
                    managed_file.display(),
                    layout.host.name()
                ),
            );
        } else {
            checks.fail(&what, off);
        }
    }
}

/// A file of the administrator layer read after the one holding rewind's entries that sets a
/// lock key rewind's file sets to `true` to something else: the organisation's choice, maybe,
/// but the lock is off, so say which file did it.
fn overridden_lock(
    layout: &Layout,
    documents: &[(PathBuf, serde_json::Value)],
    ours: &Path,
    checks: &mut Checks,
) {
    let Some(at) = documents.iter().position(|(p, _)| p == ours) else {
        return;
    };
    let get = |value: &serde_json::Value, key: &str| {
        key.split('.')
            .try_fold(value, |at, part| at.get(part))
            .cloned()
    };
    for key in layout.managed.lock {
        if get(&documents[at].1, key) != Some(serde_json::Value::Bool(true)) {
            continue;
        }
        if let Some((later, value)) = documents[at + 1..]
            .iter()
            .rev()
            .find_map(|(p, v)| get(v, key).map(|value| (p, value)))
            .filter(|(_, value)| *value != serde_json::Value::Bool(true))
        {
            checks.warn(
                &format!("layer {}", layout.title),
                format!(
                    "{} is read after {} and sets {key} to {value}: rewind's lock is overridden, so it no longer switches off {}",
                    later.display(),
                    ours.display(),
                    layout.managed.lock_also
                ),
            );
        }
    }
}

/// Which layer carries the host's hook, and whether the administrator layer is sound: the
/// entry reads only its pinned configuration, which only root can change, nor its catalogs
/// or the binary; and what can still switch it off.
fn layer_checks(
    layout: &Layout,
    file: &Path,
    managed: &[&Installed],
    locked: bool,
    root: &Path,
    checks: &mut Checks,
) {
    let what = format!("layer {}", layout.title);
    if managed.is_empty() {
        checks.warn(
            &what,
            format!(
                "user or project settings only: the agent's user can change them; `rewind install --host {} --scope managed` writes {}, which only root can",
                layout.host.name(),
                layout.managed.target().display()
            ),
        );
        return;
    }
    checks.pass(
        &what,
        format!(
            "managed: {}{}",
            file.display(),
            if locked {
                format!(" (locked: {})", layout.managed.lock.join(", "))
            } else {
                String::new()
            }
        ),
    );
    if !locked && !layout.managed.lock.is_empty() {
        checks.warn(
            &what,
            format!(
                "not locked: {}; `rewind install --host {} --scope managed --lock` sets {}",
                layout.managed.still_off,
                layout.host.name(),
                layout.managed.lock.join(" and ")
            ),
        );
    }
    for handler in managed {
        let entry = format!("hook in {}", handler.file.display());
        if !handler.args.iter().any(|a| a == "--managed") {
            checks.warn(
                &entry,
                "no --managed: the hook also reads $REWIND_CONFIG and the user's files; reinstall with `rewind install --scope managed`",
            );
        }
        let mut writable = Vec::new();
        if let Some(pinned) = handler.pinned_config() {
            let here = super::managed::under(root, &pinned);
            if let Err(why) = crate::lockfile::only_root_can_change(&here) {
                writable.push(format!("the configuration: {why}"));
            } else if let Ok(config) = Config::load(&here) {
                for catalog in config.hook.catalogs.iter().chain(&config.shell.catalogs) {
                    if let Err(why) = crate::lockfile::only_root_can_change(catalog) {
                        writable.push(format!("catalog {}: {why}", catalog.display()));
                    }
                }
            }
        } else {
            writable.push(String::from("it pins no configuration (--config)"));
        }
        if let Err(why) = crate::lockfile::only_root_can_change(Path::new(&handler.program)) {
            writable.push(format!("the binary: {why}"));
        }
        if writable.is_empty() {
            checks.pass(
                &entry,
                format!(
                    "{}: only root can change the binary, the pinned configuration and its catalogs",
                    handler.event
                ),
            );
        } else {
            checks.fail(
                &entry,
                format!(
                    "{}: others than root can change what it runs ({}); whoever can, can switch the guard off",
                    handler.event,
                    writable.join("; ")
                ),
            );
        }
    }
}

/// One host's entries, event by event.
fn host_checks(layout: &Layout, found: &[Installed], root: &Path, checks: &mut Checks) {
    let title = layout.title;
    let host = layout.host.name();
    for events in layout.events {
        let before: Vec<&Installed> = found.iter().filter(|h| h.event == events.before).collect();
        let after = found.iter().filter(|h| h.event == events.after).count();
        if before.is_empty() && events.files_only {
            checks.warn(
                &format!("hook {title} {}", events.before),
                format!("no rewind entry: writes by {title}'s file tools to rewind's own files and hook settings are not asked about; run `rewind install --host {host}`"),
            );
            continue;
        }
        if before.is_empty() {
            checks.fail(
                &format!("hook {title} {}", events.before),
                format!("no rewind entry: these calls reach no checkpoint; run `rewind install --host {host}`"),
            );
        }
        for (event, count) in [(events.before, before.len()), (events.after, after)] {
            if count > 1 {
                let places: Vec<String> = found
                    .iter()
                    .filter(|h| h.event == event)
                    .map(|h| format!("{} ({})", h.file.display(), h.program))
                    .collect();
                checks.fail(
                    &format!("hook {title} {event}"),
                    format!(
                        "{count} rewind entries run for each call: {}; keep one (`rewind uninstall --host {host} --scope …` removes a scope's)",
                        places.join(", ")
                    ),
                );
            }
        }
        if !before.is_empty() && after == 0 {
            checks.warn(
                &format!("hook {title}"),
                format!("no {} entry: the audit trail will not show which calls ran; run `rewind install --host {host}`", events.after),
            );
        }
        for handler in before {
            check_handler(layout, events, handler, root, checks);
        }
    }
    if let OnFailure::Open(what) = layout.on_failure {
        checks.warn(&format!("hook {title}"), what);
    }
}

/// One before-the-call entry, judged with the config it pins (or the one the hook would
/// find).
fn check_handler(
    layout: &Layout,
    events: &Events,
    handler: &Installed,
    root: &Path,
    checks: &mut Checks,
) {
    let what = format!("hook in {}", handler.file.display());
    let program = &handler.program;
    let exists = if program.contains(std::path::MAIN_SEPARATOR) || program.contains('/') {
        Path::new(program).is_file()
    } else {
        install::find_on_path(program).is_some()
    };
    if !exists {
        let consequence = match layout.on_failure {
            OnFailure::Blocks { .. } if handler.fail_closed => "every matched call is blocked",
            _ => "every matched call runs unguarded",
        };
        return checks.fail(
            &what,
            format!(
                "{program} does not exist: {consequence}; run `rewind install --host {}` again",
                layout.host.name()
            ),
        );
    }
    let mut problems = Vec::new();
    match handler.host_arg() {
        Some(host) if host == layout.host.name() => {}
        Some(other) => problems.push(format!(
            "it runs `hook --host {other}` from {}'s file: every call would be read in another host's dialect",
            layout.title
        )),
        None => checks.warn(
            &what,
            format!(
                "no --host: the hook recognises the host from each payload; `rewind install --host {}` names it",
                layout.host.name()
            ),
        ),
    }
    let config = match handler.pinned_config() {
        Some(pinned) => Config::load(&super::managed::under(root, &pinned)),
        None => Config::discover_for_hook(None),
    };
    let config = match config {
        Ok(config) => config,
        Err(e) => {
            return checks.fail(
                &what,
                format!("the config this entry reads does not load: {e:#}"),
            );
        }
    };
    let origin = config.origin.as_ref().map_or_else(
        || String::from("no config file (defaults)"),
        |p| p.display().to_string(),
    );
    let budget = config.hook.budget.as_secs_f64();
    let shown_timeout = timeout_problem(layout, handler, budget, &origin, &mut problems);
    let failure = match layout.on_failure {
        OnFailure::Blocks { key, value } => {
            if !handler.fail_closed {
                problems.push(format!(
                    "{key} is not {value}: a crash or timeout would let the call through"
                ));
            }
            format!(", {key} {value}")
        }
        OnFailure::Open(_) => String::new(),
    };
    coverage_problem(layout, events, handler, &config, &origin, &mut problems);
    if !problems.is_empty() {
        return checks.fail(&what, problems.join("; "));
    }
    if layout.args_key.is_some() && !handler.exec_form {
        checks.warn(&what, format!("shell form: a profile script printing to stdout would corrupt decisions; reinstall with `rewind install --host {}`", layout.host.name()));
    } else {
        checks.pass(
            &what,
            format!(
                "{} {program}, config {origin}: timeout {shown_timeout} > budget {budget} s{failure}, matcher covers the shell tools and the catalogued tools",
                events.before
            ),
        );
    }
}

/// The entry's timeout as shown (in the host's unit), with a problem when it is not above
/// the budget or cannot be known.
fn timeout_problem(
    layout: &Layout,
    handler: &Installed,
    budget: f64,
    origin: &str,
    problems: &mut Vec<String>,
) -> String {
    let unit = layout.unit;
    let timeout = match (handler.timeout, layout.default_timeout_secs) {
        (Some(t), _) => Some((format!("{t} {}", unit.symbol()), unit.to_secs(t))),
        (None, Some(default)) => Some((format!("the default {default} s"), default)),
        (None, None) => None,
    };
    let Some((shown, secs)) = timeout else {
        problems.push(format!(
            "no timeout, and {}'s default is not documented: set one above the budget {budget} s",
            layout.title
        ));
        return String::new();
    };
    if secs <= budget {
        let seconds = if unit == Unit::Seconds {
            String::new()
        } else {
            format!(" ({secs} s)")
        };
        problems.push(format!("timeout {shown}{seconds} is not above the budget {budget} s of {origin}: the host would cancel the hook and run the call unguarded"));
    }
    shown
}

/// A problem when the entry's matcher lets a shell tool or a catalogued mutating tool past.
fn coverage_problem(
    layout: &Layout,
    events: &Events,
    handler: &Installed,
    config: &Config,
    origin: &str,
    problems: &mut Vec<String>,
) {
    let mut missed: Vec<String> = events
        .must_reach
        .iter()
        .filter(|tool| !handler.matcher.matches(tool))
        .map(|tool| (*tool).to_owned())
        .collect();
    if events.mcp {
        match Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs) {
            Ok(catalog) => missed.extend(
                catalog
                    .entries()
                    .iter()
                    .filter(|e| e.class == ToolClass::Mutating)
                    .map(|e| (layout.mcp_name)(&sample(&e.server), &sample(&e.tool)))
                    .filter(|tool| !handler.matcher.matches(tool)),
            ),
            Err(e) => problems.push(format!("the catalogs of {origin} do not load: {e:#}")),
        }
    }
    if !missed.is_empty() {
        problems.push(format!(
            "matcher {:?} does not cover {} such as {}",
            handler.matcher_text.as_deref().unwrap_or("*"),
            if events.mcp {
                "the shell tools and catalogued mutating tools"
            } else {
                "shell commands that reach a VM"
            },
            missed
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// A concrete name a catalog glob matches (`write_*` → `write_x`, `*` → `x`).
fn sample(glob: &str) -> String {
    glob.replace(['*', '?'], "x")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::host::claude_code::mdm::Delivered;
    use crate::host::settings::Invocation;

    fn checks() -> Checks {
        Checks {
            passed: 0,
            warned: 0,
            failed: 0,
            next: 0,
            json: true,
            items: Vec::new(),
        }
    }

    fn delivered(settings: Result<serde_json::Value, String>) -> Delivered {
        Delivered {
            source: String::from("/Library/Managed Preferences/com.anthropic.claudecode.plist"),
            settings,
        }
    }

    #[test]
    fn mdm_settings_deliver_the_hook_or_shadow_the_files_that_hold_it() {
        let layout = Host::ClaudeCode.settings();
        let mut ours = json!({});
        let run = Invocation::managed(
            Path::new("/usr/local/bin/rewind-hook"),
            Path::new("/etc/rewind/config.toml"),
            Host::ClaudeCode,
        );
        layout.merge(&mut ours, &run, 180).expect("merge");

        // Delivered by MDM: counted in the administrator layer.
        let (mut layer, mut c) = (Vec::new(), checks());
        let found = mdm_checks(layout, Some(delivered(Ok(ours))), false, &mut layer, &mut c);
        assert_eq!(found.len(), 2);
        assert_eq!(layer.len(), 1);
        assert_eq!((c.passed, c.failed), (1, 0), "{:#?}", c.items);

        // Settings of the organisation's own, without rewind's, over files holding it: shadowed.
        let policy = json!({"permissions": {"disableBypassPermissionsMode": "disable"}});
        let mut c = checks();
        assert!(
            mdm_checks(
                layout,
                Some(delivered(Ok(policy.clone()))),
                true,
                &mut Vec::new(),
                &mut c
            )
            .is_empty()
        );
        assert_eq!(c.failed, 1, "{:#?}", c.items);
        assert!(
            c.items[0]["detail"]
                .as_str()
                .expect("detail")
                .contains("--print-mdm")
        );

        // Unless they merge the lower sources in.
        let mut merging = policy;
        merging["managedSourcesBehavior"] = json!("merge");
        let mut c = checks();
        mdm_checks(
            layout,
            Some(delivered(Ok(merging))),
            true,
            &mut Vec::new(),
            &mut c,
        );
        assert_eq!((c.passed, c.failed), (1, 0), "{:#?}", c.items);

        // A kill switch there, or a document Claude Code cannot read, fails.
        let mut c = checks();
        mdm_checks(
            layout,
            Some(delivered(Ok(json!({"disableAllHooks": true})))),
            false,
            &mut Vec::new(),
            &mut c,
        );
        assert_eq!(c.failed, 1, "{:#?}", c.items);
        let mut c = checks();
        mdm_checks(
            layout,
            Some(delivered(Err(String::from("it holds a date value")))),
            true,
            &mut Vec::new(),
            &mut c,
        );
        assert_eq!(c.failed, 1, "{:#?}", c.items);

        // No MDM settings: nothing said.
        let mut c = checks();
        assert!(mdm_checks(layout, None, true, &mut Vec::new(), &mut c).is_empty());
        assert!(c.items.is_empty());
    }
}
