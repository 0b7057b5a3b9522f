//! The built-in ZVM simulator: a faithful imitation of the Zerto ZVM 10.x REST API over HTTPS,
//! for tests, the demo and anyone without a ZVM.
//!
//! It serves Keycloak tokens (or 9.x sessions), VMs, VPGs, journals that gain a checkpoint
//! every journal gap, tagged-checkpoint inserts that run as tasks and show up in the list after
//! the protected site's latency, the live ZVM's quirks (a second insert while one is running
//! fails; a hostname given as a vmIdentifier is HTTP 400), File Level Restore, and injected
//! faults. Time runs `time_scale` times faster than real time, or stands still for snapshots.
//!
//! - [`Scenario`]: what the lab contains (`scenario.rs` documents the TOML format).
//! - [`Sim`]: a running simulator; [`serve`] is `rewind sim`.
//! - [`Fault`]: what can be made to go wrong.
//! - `admin.rs`: the `/_sim/` endpoints for scripts.

mod admin;
mod auth;
mod clock;
mod faults;
mod flr;
mod guest;
mod home;
mod http;
mod ids;
mod restore;
mod routes;
mod scenario;
mod server;
mod state;
mod tls;
mod wire;
mod zip;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::Context as _;
use serde::Serialize;

pub use faults::{FailState, Fault, UrlForm};
pub use scenario::Scenario;
pub use tls::SimCertificate;
#[cfg(test)]
pub(crate) use zip::archive as zip_of;

use crate::cli::{SimArgs, SimCertificateArg};
use clock::Clock;
use routes::SimApp;
use scenario::AuthMode;
use server::Server;
use state::{World, state_name};

/// How to run a simulator.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// The lab to serve.
    pub scenario: Scenario,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Sim seconds per real second (100 runs every cadence 100x faster).
    pub time_scale: f64,
    /// Where the certificate is kept (created when missing).
    pub cert_dir: PathBuf,
    /// The certificate the simulator presents.
    pub certificate: SimCertificate,
    /// Report every time as the scenario's start (deterministic snapshots); schedules still run.
    pub frozen_clock: bool,
    /// Report times at the real clock's pace (the start plus real elapsed time) while the
    /// schedule runs at `time_scale`, so that tags stamped by a client's real clock and the
    /// checkpoints listed agree. Journal history still passes at the scale.
    pub wall_clock: bool,
}

impl SimOptions {
    /// Options for `scenario` on a free port, real time, certificate in `cert_dir`.
    pub fn new(scenario: Scenario, cert_dir: PathBuf) -> SimOptions {
        SimOptions {
            scenario,
            port: 0,
            time_scale: 1.0,
            cert_dir,
            certificate: SimCertificate::default(),
            frozen_clock: false,
            wall_clock: false,
        }
    }
}

/// Request counters (requests to `/_sim/` are not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Every request to the ZVM API, including token requests and refused ones.
    pub requests: u64,
    /// Keycloak token requests and 9.x session logins.
    pub token_requests: u64,
    /// HTTP 401 answers served.
    pub unauthorized: u64,
    /// Requests per route, e.g. `"GET /v1/vpgs/{id}/checkpoints"`.
    pub by_route: BTreeMap<String, u64>,
    /// Requests that came before the `Retry-After` of a `retry-after` answer had passed.
    pub early_retries: u64,
}

/// One tagged-checkpoint insert as the simulator saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertRecord {
    pub vpg_name: String,
    pub vpg_id: String,
    pub tag: String,
    pub task_id: String,
    /// When the request arrived.
    pub received_at: Instant,
    /// When the tag became visible in the checkpoint list (`None`: not yet, or never).
    pub listed_at: Option<Instant>,
    /// `InProgress`, `Failed`, `Stopped` or `Completed`.
    pub task_state: String,
    /// The checkpoint once it has been written (it may be listed later).
    pub checkpoint_id: Option<String>,
}

/// One row of a VPG's checkpoint list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointRow {
    pub id: String,
    /// ISO-8601 UTC, as `TimeStamp` on the wire.
    pub time: String,
    pub tag: Option<String>,
}

/// One File Level Restore session as the simulator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlrSessionView {
    /// `FlrSessionIdentifier`.
    pub id: String,
    /// The VM's name.
    pub vm: String,
    /// `FlrSessionStatus`, e.g. `MountInProgress`, `MountCompletedSuccessfully`.
    pub status: String,
}

/// A running simulator. Dropping it stops the server and releases hung connections.
pub struct Sim {
    app: Arc<SimApp>,
    cert_path: PathBuf,
    username: String,
    password: String,
    server: Server,
}

impl Sim {
    /// Starts serving on 127.0.0.1 (only).
    pub fn start(opts: SimOptions) -> anyhow::Result<Sim> {
        if !(opts.time_scale.is_finite() && opts.time_scale > 0.0) {
            anyhow::bail!(
                "the time scale must be a positive number, not {}",
                opts.time_scale
            );
        }
        let identity = tls::load_or_create(&opts.cert_dir, &opts.certificate)?;
        let listener = TcpListener::bind(("127.0.0.1", opts.port)).with_context(|| {
            format!(
                "cannot listen on 127.0.0.1:{} (is another simulator running? `--port 0` picks a free port)",
                opts.port
            )
        })?;
        let port = listener.local_addr().context("listener address")?.port();
        let start = opts.scenario.start.unwrap_or_else(SystemTime::now);
        let mut clock = Clock::new(Instant::now(), start, opts.time_scale, opts.frozen_clock);
        if opts.wall_clock && !opts.frozen_clock {
            clock = clock.reporting(clock::Reported::Wall);
        }
        let (username, password) = (
            opts.scenario.username.clone(),
            opts.scenario.password.clone(),
        );
        let app = Arc::new(SimApp::new(
            World::new(opts.scenario, clock),
            format!("https://127.0.0.1:{port}"),
        ));
        let server = Server::start(
            listener,
            identity.config,
            Arc::clone(&app) as Arc<dyn server::App>,
        )?;
        Ok(Sim {
            app,
            cert_path: identity.cert_path,
            username,
            password,
            server,
        })
    }

    /// The port it took.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.server.port())
    }

    /// The PEM certificate clients must trust (config `ca_cert`).
    pub fn ca_cert_path(&self) -> PathBuf {
        self.cert_path.clone()
    }

    /// The scenario's user name.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// The scenario's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The `[zvm]` section of a rewind configuration for this simulator: URL, login, the
    /// password from `$REWIND_ZVM_PASSWORD`, and its certificate as `ca_cert`.
    pub fn zvm_config(&self) -> String {
        self.zvm_config_for(&self.url(), true)
    }

    /// The same section pointing at `url` instead, with or without the certificate as
    /// `ca_cert` (the demo and the tests show an unreachable and an untrusted ZVM with it).
    pub fn zvm_config_for(&self, url: &str, trust_ca: bool) -> String {
        self.zvm_section(url, trust_ca, "password_env = \"REWIND_ZVM_PASSWORD\"\n")
    }

    /// The `[zvm]` section with `password_line` saying where the password comes from.
    fn zvm_section(&self, url: &str, trust_ca: bool, password_line: &str) -> String {
        let (world, _) = self.app.world();
        let quote = |text: &str| toml::Value::String(text.to_owned()).to_string();
        let (auth, client) = match world.scenario.auth {
            AuthMode::Keycloak => (
                "keycloak",
                format!("client_id = {}\n", quote(&world.scenario.client_id)),
            ),
            AuthMode::Session => ("session", String::new()),
        };
        let ca = if trust_ca {
            let cert =
                std::path::absolute(&self.cert_path).unwrap_or_else(|_| self.cert_path.clone());
            format!("ca_cert = {}\n", quote(&cert.display().to_string()))
        } else {
            String::new()
        };
        format!(
            "[zvm]\nurl = {}\nauth = \"{auth}\"\nusername = {}\n{password_line}{client}{ca}",
            quote(url),
            quote(&self.username),
        )
    }

    /// Request counters so far.
    pub fn stats(&self) -> Stats {
        self.app.world().0.stats.clone()
    }

    /// Every tagged-checkpoint insert so far, oldest first.
    pub fn inserts(&self) -> Vec<InsertRecord> {
        let (world, now) = self.app.world();
        world
            .insert_views(now)
            .into_iter()
            .map(|ins| InsertRecord {
                vpg_name: ins.vpg_name,
                vpg_id: ins.vpg_id,
                tag: ins.tag,
                task_id: ins.task_id,
                received_at: ins.received_at,
                listed_at: ins.listed.map(|at| world.clock.instant_at(at)),
                task_state: state_name(ins.state).to_owned(),
                checkpoint_id: ins.checkpoint_id,
            })
            .collect()
    }

    /// What `GET /v1/vpgs/{id}/checkpoints` would list now for the VPG with this name
    /// (empty for an unknown VPG).
    pub fn checkpoints(&self, vpg_name: &str) -> Vec<CheckpointRow> {
        let (world, now) = self.app.world();
        let Some(vpg) = world.vpg_by_name(vpg_name) else {
            return Vec::new();
        };
        world
            .listed_checkpoints(vpg, now)
            .into_iter()
            .map(|cp| CheckpointRow {
                id: cp.id.to_string(),
                time: crate::time::format_utc_millis(cp.time),
                tag: cp.tag.clone(),
            })
            .collect()
    }

    /// Puts a fault in force (a fault naming an unknown VPG or VM never matches).
    pub fn add_fault(&self, fault: Fault) {
        self.app.world().0.faults.add(fault);
    }

    /// Removes every fault.
    pub fn clear_faults(&self) {
        self.app.world().0.faults.clear();
    }

    /// Records a new content of a guest file (`/etc/app.conf`, `C:\\Users\\x.txt`) of a VM
    /// (name, or id when the name is shared) at the current sim time: checkpoints written
    /// from now on see it, earlier ones keep the old content.
    pub fn write_guest_file(&self, vm: &str, path: &str, bytes: &[u8]) -> anyhow::Result<()> {
        let (mut world, now) = self.app.world();
        world
            .write_guest_file(vm, path, bytes, now)
            .map_err(|err| anyhow::anyhow!("cannot write {path} on {vm}: {err}"))
    }

    /// The current content of a guest file, if the VM (name or id) and file exist.
    pub fn guest_file(&self, vm: &str, path: &str) -> Option<Vec<u8>> {
        let (world, _) = self.app.world();
        let [index] = world.scenario.vm_matches(vm)[..] else {
            return None;
        };
        world.files[index].current(path).map(<[u8]>::to_vec)
    }

    /// The File Level Restore sessions that exist now.
    pub fn flr_sessions(&self) -> Vec<FlrSessionView> {
        let (world, now) = self.app.world();
        world
            .flr
            .visible(&world, now)
            .map(|session| FlrSessionView {
                id: session.id.clone(),
                vm: world.scenario.vms[session.vm].name.clone(),
                status: flr::status(&world, session, now)
                    .unwrap_or_default()
                    .to_owned(),
            })
            .collect()
    }

    /// A change on a VM (name, or id when the name is shared): its content marker moves on;
    /// returns the new marker, or `None` for an unknown VM.
    pub fn change_vm(&self, vm: &str) -> Option<u64> {
        let (mut world, now) = self.app.world();
        let [index] = world.scenario.vm_matches(vm)[..] else {
            return None;
        };
        Some(world.bump_marker(index, now))
    }

    /// A VM's content marker now: 0 at the start, one more for each change; a restore ready
    /// for commit (or committed) shows its checkpoint's marker.
    pub fn vm_marker(&self, vm: &str) -> Option<u64> {
        let (world, _) = self.app.world();
        let [index] = world.scenario.vm_matches(vm)[..] else {
            return None;
        };
        Some(world.marker(index))
    }

    /// The journal VM restores still running (restoring, or ready for commit) and the
    /// failover tests still up.
    pub fn whole_vm_operations(&self) -> (usize, usize) {
        let (world, now) = self.app.world();
        (
            world.restores.iter().filter(|r| r.running(now)).count(),
            world
                .failover_tests
                .iter()
                .filter(|t| t.running(now))
                .count(),
        )
    }

    /// Invalidates every issued access token and session: the next API call answers 401.
    pub fn expire_tokens(&self) {
        self.app.world().0.auth.expire_all();
    }
}

/// `rewind sim`: serves a scenario until Ctrl-C or SIGTERM (or starts one in the
/// background, or stops that one). `config` is the global `--config`.
pub fn serve(config: Option<&std::path::Path>, args: &SimArgs) -> anyhow::Result<()> {
    if let Some(crate::cli::SimAction::Stop) = args.action {
        return home::stop();
    }
    if args.background {
        return home::background();
    }
    let sim = start_for(args)?;
    let target = home::config_target(config, args.write_config.as_deref(), args.no_config);
    let note = match &target {
        Some(target) => home::write_config(&sim, target)?,
        None => String::from("rewind sim: no configuration written (--no-config)"),
    };
    let recorded = home::record(&sim, &note)?;
    let (stop_tx, stop_rx) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = stop_tx.send(());
    })
    .context("cannot install the Ctrl-C handler")?;
    let summary = inventory(&sim.app.world().0.scenario);
    print_banner(&banner(&sim, args.time_scale, &summary));
    crate::console::say(&note);
    let _ = stop_rx.recv();
    crate::console::err("rewind sim: stopping");
    if recorded {
        home::forget();
    }
    drop(sim);
    Ok(())
}

/// The simulator `rewind sim` serves, started.
fn start_for(args: &SimArgs) -> anyhow::Result<Sim> {
    let scenario = match &args.scenario {
        Some(path) => Scenario::from_file(path)?,
        None => Scenario::lab(),
    };
    // Not a shared temporary directory: a key planted there by another user would be
    // served, and trusted through the `ca_cert` line the banner prints.
    let cert_dir = if let Some(dir) = &args.cert_dir {
        dir.clone()
    } else {
        let dir = crate::config::cache_dir()?.join(format!("sim-{}", args.port));
        crate::lockfile::create_private_dir(&dir)
            .with_context(|| format!("cannot use {} for the certificate", dir.display()))?;
        dir
    };
    let sim = Sim::start(SimOptions {
        scenario,
        port: args.port,
        time_scale: args.time_scale,
        cert_dir,
        certificate: match (&args.cert, &args.key) {
            // Absolute, so that the `ca_cert` line the banner prints holds wherever the
            // configuration is written.
            (Some(cert), Some(key)) => SimCertificate::Files {
                cert: std::path::absolute(cert)
                    .with_context(|| format!("--cert {}", cert.display()))?,
                key: key.clone(),
            },
            _ => match args.certificate {
                SimCertificateArg::CaSigned => SimCertificate::CaSignedLeaf,
                SimCertificateArg::SelfSignedCa => SimCertificate::SelfSignedCa,
                SimCertificateArg::OtherName => SimCertificate::OtherName,
            },
        },
        frozen_clock: false,
        wall_clock: false,
    })?;
    for behaviour in &args.appliance {
        sim.add_fault(appliance_fault(*behaviour));
    }
    Ok(sim)
}

/// The fault that makes the simulator answer as `rewind sim --appliance` asks.
fn appliance_fault(behaviour: crate::cli::ApplianceArg) -> Fault {
    use crate::cli::ApplianceArg as A;
    match behaviour {
        A::SessionWindows => Fault::SessionMethod { method: 0 },
        A::BrowsePages => Fault::BrowsePages { size: 2 },
        A::BrowseRefusesPaging => Fault::BrowseRefusesPaging,
        A::DownloadUrlRelative => Fault::DownloadUrl {
            form: UrlForm::Relative,
        },
        A::DownloadUrlOtherHost => Fault::DownloadUrl {
            form: UrlForm::OtherHost,
        },
        A::DownloadZip => Fault::DownloadZip,
        A::NullNameRows => Fault::NullNameRows,
        A::TaskGone401 => Fault::TaskGone401,
        A::RetryAfter => Fault::RetryAfter {
            status: 429,
            secs: 2,
            every: 4,
        },
        A::NamesCut => Fault::NamesCut { max: 40 },
        A::RestoreWaitsForCommit => Fault::RestoreWaitsForCommit,
        A::RestoreFails => Fault::RestoreFails {
            reason: String::from("Failed to restore the VM: the datastore is not accessible."),
        },
        A::Restore500 => Fault::Restore500,
        A::RestoreDecisionNoBody => Fault::RestoreDecisionNoBody,
        A::RetagOnTestStop => Fault::RetagOnTestStop,
    }
}

fn print_banner(text: &str) {
    crate::console::say(text);
}

fn inventory(scenario: &Scenario) -> String {
    let mut lines = Vec::new();
    for vm in &scenario.vms {
        let vpgs: Vec<String> = scenario
            .vpgs
            .iter()
            .filter(|vpg| vpg.vms.iter().any(|&i| scenario.vms[i].id == vm.id))
            .map(|vpg| format!("{} ({:?})", vpg.name, vpg.profile).to_lowercase())
            .collect();
        lines.push(format!(
            "  {:<12} {:<15} {}",
            vm.name,
            vm.ips.join(","),
            vpgs.join(", ")
        ));
    }
    lines.join("\n")
}

fn banner(sim: &Sim, time_scale: f64, inventory: &str) -> String {
    let url = sim.url();
    // A password shlex cannot quote (a NUL) cannot be exported either.
    let password = shlex::try_quote(sim.password()).unwrap_or_default();
    format!(
        "rewind sim: ZVM simulator listening on {url} (time scale {time_scale}x)\n\
         Trust (ca_cert): {}\n\
         Credentials:    {} / {}\n\
         Simulator API:  {url}/_sim/stats, /_sim/inserts, /_sim/faults, /_sim/expire-tokens, /_sim/vm-change, /_sim/whole-vm\n\
         \n\
         VMs:\n{inventory}\n\
         \n\
         Configuration for rewind (e.g. ~/.config/rewind/config.toml):\n\
         \n\
         {}\n\
         The password, in the environment of rewind and of the agent host:\n\
         \n\
         \x20 export REWIND_ZVM_PASSWORD={password}\n\
         \n\
         Press Ctrl-C to stop.",
        sim.ca_cert_path().display(),
        sim.username(),
        sim.password(),
        sim.zvm_config(),
    )
}

#[cfg(test)]
mod tests;
