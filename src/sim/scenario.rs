//! Scenarios: the lab a simulator serves, read from TOML and validated once.
//!
//! ```toml
//! start = "2026-03-02T09:00:00Z"   # sim time at startup (ISO-8601 UTC); default: now
//! auth = "keycloak"                # or "session" (Windows ZVM 9.x: /v1/session/add)
//! username = "admin"
//! password = "zerto-sim"
//! client_id = "zerto-client"       # also accepted for the password grant
//! client_secret = "s3cret"         # enables the client_credentials grant for client_id
//! token_lifetime_secs = 300        # Keycloak expires_in, REAL seconds (not scaled)
//! site_name = "lab-site"           # the local site (GET /v1/localsite)
//! mount_secs = 20                  # FLR mount duration, sim seconds
//! unmount_secs = 5                 # FLR unmount duration, sim seconds
//!
//! [[vm]]
//! name = "jp-ubuntu"               # names may repeat; ids may not
//! id = "<guid>.vm-<n>"             # optional; derived from the site and position otherwise
//! ips = ["10.0.0.11"]
//! guest_os = "linux"               # or "windows"
//! [vm.files]                       # guest files at the start (FLR), path = text
//! "/etc/app.conf" = "mode = safe\n"
//!
//! [[vpg]]
//! name = "jp-ubuntu-vpg"
//! id = "<guid>"                    # optional; derived from the name otherwise
//! profile = "vsphere"              # protected-site type: "vsphere" | "azure" | "aws"
//! vms = ["jp-ubuntu"]              # VM names, or ids when a name is shared
//! # Optional, each overriding the profile (sim seconds):
//! # journal_gap_secs, tag_latency_secs, stamp_offset_secs, task_secs
//! status = "MeetingSLA"            # VPG status name
//! sub_status = "None"              # VPG sub-status name (e.g. "ReplicationPausedUserInitiated")
//! history_checkpoints = 5          # periodic checkpoints already in the journal at the start
//! journal_history_mins = 60        # older checkpoints drop out of the journal
//! recovery_site = "lab-site"       # default: the local site
//!
//! [[fault]]                        # faults in force from the start, see `Fault`
//! kind = "tag-never-listed"
//! vpg = "jp-ubuntu-vpg"
//! ```
//!
//! Profiles follow what was measured on a live ZVM, set by the PROTECTED site: a vSphere site
//! writes a checkpoint every 5 s and lists a tag after ~4 s; Azure every 60 s / ~34 s; AWS
//! every 630 s / ~128 s; on cloud sites the tag is stamped ~30 s after the request.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;
use std::time::SystemTime;

use anyhow::Context as _;
use serde::Deserialize;

use super::faults::Fault;
use super::ids;

/// A validated scenario: the VMs, VPGs, credentials, clock start and faults a simulator serves.
#[derive(Clone)]
pub struct Scenario {
    pub(crate) start: Option<SystemTime>,
    pub(crate) auth: AuthMode,
    pub(crate) username: String,
    pub(crate) password: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) token_lifetime_secs: u64,
    pub(crate) site_name: String,
    pub(crate) site_id: String,
    pub(crate) mount_secs: f64,
    pub(crate) unmount_secs: f64,
    pub(crate) vms: Vec<VmSpec>,
    pub(crate) vpgs: Vec<VpgSpec>,
    pub(crate) faults: Vec<Fault>,
}

/// How clients authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AuthMode {
    /// ZVM 10.x: Keycloak OpenID Connect tokens, `Authorization: Bearer`.
    Keycloak,
    /// Windows ZVM 9.x: `POST /v1/session/add` with Basic auth, `x-zerto-session` header.
    Session,
}

/// The guest operating system, which decides the FLR volume labels and path rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GuestOs {
    Linux,
    Windows,
}

/// The type of a VPG's protected site, which sets its checkpoint cadence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Profile {
    Vsphere,
    Azure,
    Aws,
}

/// Checkpoint cadence of one VPG, in sim seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Timing {
    /// Time between periodic (untagged) checkpoints.
    pub(crate) journal_gap: f64,
    /// Time from an insert request until its tag is listed.
    pub(crate) tag_latency: f64,
    /// Time from an insert request until the time stamped on its checkpoint.
    pub(crate) stamp_offset: f64,
    /// How long the insert task runs.
    pub(crate) task: f64,
}

impl Profile {
    /// The measured cadence of a protected-site type.
    pub(crate) fn timing(self) -> Timing {
        match self {
            Profile::Vsphere => Timing {
                journal_gap: 5.0,
                tag_latency: 4.0,
                stamp_offset: 0.0,
                task: 1.0,
            },
            Profile::Azure => Timing {
                journal_gap: 60.0,
                tag_latency: 34.0,
                stamp_offset: 30.0,
                task: 3.0,
            },
            Profile::Aws => Timing {
                journal_gap: 630.0,
                tag_latency: 128.0,
                stamp_offset: 30.0,
                task: 3.0,
            },
        }
    }

    /// The entity type Zerto reports for the site (0 vCenter, 3 AWS; 5 is assumed for Azure).
    pub(crate) fn entity_type(self) -> u8 {
        match self {
            Profile::Vsphere => 0,
            Profile::Aws => 3,
            Profile::Azure => 5,
        }
    }
}

/// One VM.
#[derive(Debug, Clone)]
pub(crate) struct VmSpec {
    pub(crate) name: String,
    pub(crate) id: String,
    pub(crate) ips: Vec<String>,
    pub(crate) guest_os: GuestOs,
    /// Guest path → content at the start.
    pub(crate) files: BTreeMap<String, String>,
}

/// One VPG.
#[derive(Debug, Clone)]
pub(crate) struct VpgSpec {
    pub(crate) name: String,
    pub(crate) id: String,
    pub(crate) profile: Profile,
    pub(crate) timing: Timing,
    /// Status enum value and its name.
    pub(crate) status: (u8, String),
    /// SubStatus enum value and its name.
    pub(crate) sub_status: (u8, String),
    /// Indexes into `Scenario::vms`.
    pub(crate) vms: Vec<usize>,
    pub(crate) history_checkpoints: u32,
    pub(crate) journal_history_mins: u32,
    pub(crate) protected_site: String,
    pub(crate) recovery_site: String,
}

/// VPG status names in enum order (live 10.9 uses values the docs do not list; these are the
/// documented ones).
pub(crate) const VPG_STATUSES: [&str; 9] = [
    "Initializing",
    "MeetingSLA",
    "NotMeetingSLA",
    "HistoryNotMeetingSLA",
    "RpoNotMeetingSLA",
    "FailingOver",
    "Moving",
    "Deleting",
    "Recovered",
];

/// VPG sub-status names in enum order (0–32, as documented; later values are unnamed).
pub(crate) const VPG_SUB_STATUSES: [&str; 33] = [
    "None",
    "InitialSync",
    "Creating",
    "VolumeInitialSync",
    "Sync",
    "RecoveryPossible",
    "DeltaSync",
    "NeedsConfiguration",
    "Error",
    "EmptyProtectionGroup",
    "DisconnectedFromPeerNoRecoveryPoints",
    "FullSync",
    "VolumeDeltaSync",
    "VolumeFullSync",
    "FailingOverCommitting",
    "FailingOverBeforeCommit",
    "FailingOverRollingBack",
    "Promoting",
    "MovingCommitting",
    "MovingBeforeCommit",
    "MovingRollingBack",
    "Deleting",
    "PendingRemove",
    "BitmapSync",
    "DisconnectedFromPeer",
    "ReplicationPausedUserInitiated",
    "ReplicationPausedSystemInitiated",
    "RecoveryStorageProfileError",
    "Backup",
    "RollingBack",
    "RecoveryStorageError",
    "JournalStorageError",
    "VmNotProtectedError",
];

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("auth", &self.auth)
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field(
                "vms",
                &self.vms.iter().map(|vm| &vm.name).collect::<Vec<_>>(),
            )
            .field(
                "vpgs",
                &self.vpgs.iter().map(|vpg| &vpg.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Scenario {
    /// Reads and validates a scenario file; errors name the file and the offending key.
    pub fn from_file(path: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read scenario {}", path.display()))?;
        Scenario::from_toml(&text, &path.display().to_string())
    }

    /// Parses and validates scenario TOML; `origin` names the source in error messages.
    pub fn from_toml(text: &str, origin: &str) -> anyhow::Result<Scenario> {
        let raw: RawScenario =
            toml::from_str(text).map_err(|err| anyhow::anyhow!("{origin}: {err}"))?;
        raw.validate()
            .map_err(|err| anyhow::anyhow!("{origin}: {err}"))
    }

    /// The shipped lab (`scenarios/lab.toml`).
    pub fn lab() -> Scenario {
        match Scenario::from_toml(LAB, "scenarios/lab.toml") {
            Ok(scenario) => scenario,
            Err(err) => unreachable!("the shipped lab scenario is checked by a test: {err:#}"),
        }
    }

    /// The text of the shipped lab, for tests that derive variants from it.
    #[cfg(test)]
    pub(crate) fn lab_text() -> &'static str {
        LAB
    }

    /// The same scenario starting at a fixed time (for deterministic snapshots).
    #[must_use]
    pub fn with_start(mut self, start: SystemTime) -> Scenario {
        self.start = Some(start);
        self
    }

    /// The user name clients log in with.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// The password clients log in with.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// Index of the VM a reference (name or id, any case) denotes when exactly one matches.
    pub(crate) fn vm_matches(&self, reference: &str) -> Vec<usize> {
        (0..self.vms.len())
            .filter(|&i| {
                let vm = &self.vms[i];
                vm.name.eq_ignore_ascii_case(reference) || vm.id.eq_ignore_ascii_case(reference)
            })
            .collect()
    }

    /// Whether a reference (name or id, any case) denotes a VPG.
    pub(crate) fn vpg_known(&self, reference: &str) -> bool {
        self.vpgs.iter().any(|vpg| {
            vpg.name.eq_ignore_ascii_case(reference) || vpg.id.eq_ignore_ascii_case(reference)
        })
    }
}

const LAB: &str = include_str!("../../scenarios/lab.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    start: Option<String>,
    #[serde(default = "default_auth")]
    auth: AuthMode,
    username: String,
    password: String,
    #[serde(default = "default_client_id")]
    client_id: String,
    client_secret: Option<String>,
    #[serde(default = "default_token_lifetime")]
    token_lifetime_secs: u64,
    #[serde(default = "default_site_name")]
    site_name: String,
    #[serde(default = "default_mount_secs")]
    mount_secs: f64,
    #[serde(default = "default_unmount_secs")]
    unmount_secs: f64,
    #[serde(default)]
    vm: Vec<RawVm>,
    #[serde(default)]
    vpg: Vec<RawVpg>,
    #[serde(default)]
    fault: Vec<Fault>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVm {
    name: String,
    id: Option<String>,
    #[serde(default)]
    ips: Vec<String>,
    guest_os: GuestOs,
    #[serde(default)]
    files: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVpg {
    name: String,
    id: Option<String>,
    profile: Profile,
    journal_gap_secs: Option<f64>,
    tag_latency_secs: Option<f64>,
    stamp_offset_secs: Option<f64>,
    task_secs: Option<f64>,
    #[serde(default = "default_status")]
    status: String,
    #[serde(default = "default_sub_status")]
    sub_status: String,
    vms: Vec<String>,
    #[serde(default = "default_history")]
    history_checkpoints: u32,
    #[serde(default = "default_journal_history")]
    journal_history_mins: u32,
    recovery_site: Option<String>,
}

fn default_auth() -> AuthMode {
    AuthMode::Keycloak
}
fn default_client_id() -> String {
    "zerto-client".to_owned()
}
fn default_token_lifetime() -> u64 {
    300
}
fn default_site_name() -> String {
    "sim-site".to_owned()
}
fn default_mount_secs() -> f64 {
    20.0
}
fn default_unmount_secs() -> f64 {
    5.0
}
fn default_status() -> String {
    "MeetingSLA".to_owned()
}
fn default_sub_status() -> String {
    "None".to_owned()
}
fn default_history() -> u32 {
    5
}
fn default_journal_history() -> u32 {
    60
}

impl RawScenario {
    fn validate(self) -> Result<Scenario, String> {
        let start = match &self.start {
            Some(text) => {
                Some(crate::time::parse_utc(text).map_err(|err| format!("key `start`: {err}"))?)
            }
            None => None,
        };
        for (key, value) in [
            ("username", &self.username),
            ("password", &self.password),
            ("client_id", &self.client_id),
        ] {
            if value.is_empty() {
                return Err(format!("key `{key}` must not be empty"));
            }
        }
        if self.token_lifetime_secs == 0 {
            return Err("key `token_lifetime_secs` must be at least 1".to_owned());
        }
        check_secs("mount_secs", self.mount_secs)?;
        check_secs("unmount_secs", self.unmount_secs)?;
        let site_id = ids::guid("site", &self.site_name);
        let vms = validate_vms(self.vm, &self.site_name)?;
        let vpgs = validate_vpgs(self.vpg, &vms, &self.site_name)?;
        let scenario = Scenario {
            start,
            auth: self.auth,
            username: self.username,
            password: self.password,
            client_id: self.client_id,
            client_secret: self.client_secret,
            token_lifetime_secs: self.token_lifetime_secs,
            site_name: self.site_name,
            site_id,
            mount_secs: self.mount_secs,
            unmount_secs: self.unmount_secs,
            vms,
            vpgs,
            faults: Vec::new(),
        };
        for (i, fault) in self.fault.iter().enumerate() {
            fault
                .check(
                    |vpg| scenario.vpg_known(vpg),
                    |vm| !scenario.vm_matches(vm).is_empty(),
                )
                .map_err(|err| format!("fault[{i}]: {err}"))?;
        }
        Ok(Scenario {
            faults: self.fault,
            ..scenario
        })
    }
}

fn check_secs(key: &str, value: f64) -> Result<(), String> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(format!(
            "key `{key}` must be a number of seconds >= 0, not {value}"
        ))
    }
}

fn validate_vms(raw: Vec<RawVm>, site_name: &str) -> Result<Vec<VmSpec>, String> {
    let vcenter = ids::guid("vcenter", site_name);
    let mut seen = HashSet::new();
    let mut vms = Vec::with_capacity(raw.len());
    for (i, vm) in raw.into_iter().enumerate() {
        let at = format!("vm[{i}] ({:?})", vm.name);
        if vm.name.trim().is_empty() {
            return Err(format!("vm[{i}]: key `name` must not be empty"));
        }
        let id = match vm.id {
            Some(id) if ids::is_vm_identifier(&id) => id,
            Some(id) => {
                return Err(format!(
                    "{at}: key `id`: {id:?} is not shaped like <guid>.vm-<n>"
                ));
            }
            None => format!("{vcenter}.vm-{}", 101 + i),
        };
        if !seen.insert(id.to_lowercase()) {
            return Err(format!("{at}: key `id`: {id:?} is used by another VM"));
        }
        for ip in &vm.ips {
            if ip.parse::<std::net::IpAddr>().is_err() {
                return Err(format!("{at}: key `ips`: {ip:?} is not an IP address"));
            }
        }
        for path in vm.files.keys() {
            super::guest::check_guest_path(vm.guest_os, path)
                .map_err(|err| format!("{at}: key `files`: {err}"))?;
        }
        vms.push(VmSpec {
            name: vm.name,
            id,
            ips: vm.ips,
            guest_os: vm.guest_os,
            files: vm.files,
        });
    }
    Ok(vms)
}

fn validate_vpgs(
    raw: Vec<RawVpg>,
    vms: &[VmSpec],
    site_name: &str,
) -> Result<Vec<VpgSpec>, String> {
    let mut names = HashSet::new();
    let mut vpg_ids = HashSet::new();
    let mut vpgs = Vec::with_capacity(raw.len());
    for (i, vpg) in raw.into_iter().enumerate() {
        let at = format!("vpg[{i}] ({:?})", vpg.name);
        if vpg.name.trim().is_empty() {
            return Err(format!("vpg[{i}]: key `name` must not be empty"));
        }
        if !names.insert(vpg.name.to_lowercase()) {
            return Err(format!("{at}: key `name`: another VPG has this name"));
        }
        let id = match vpg.id.clone() {
            Some(id) if ids::is_guid(&id) => id,
            Some(id) => return Err(format!("{at}: key `id`: {id:?} is not a GUID")),
            None => ids::guid("vpg", &vpg.name),
        };
        if !vpg_ids.insert(id.to_lowercase()) {
            return Err(format!("{at}: key `id`: {id:?} is used by another VPG"));
        }
        let timing = vpg_timing(&vpg).map_err(|err| format!("{at}: {err}"))?;
        let status = VPG_STATUSES
            .iter()
            .position(|name| name.eq_ignore_ascii_case(&vpg.status))
            .ok_or_else(|| {
                format!(
                    "{at}: key `status`: {:?} is not one of {}",
                    vpg.status,
                    VPG_STATUSES.join(", ")
                )
            })?;
        let sub_status = VPG_SUB_STATUSES
            .iter()
            .position(|name| name.eq_ignore_ascii_case(&vpg.sub_status))
            .ok_or_else(|| {
                format!(
                    "{at}: key `sub_status`: {:?} is not one of {}",
                    vpg.sub_status,
                    VPG_SUB_STATUSES.join(", ")
                )
            })?;
        let members =
            vpg_members(&vpg.vms, vms).map_err(|err| format!("{at}: key `vms`: {err}"))?;
        let history_secs = f64::from(vpg.journal_history_mins) * 60.0;
        if f64::from(vpg.history_checkpoints) * timing.journal_gap > history_secs {
            return Err(format!(
                "{at}: key `history_checkpoints`: {} checkpoints every {} s do not fit in `journal_history_mins` = {}",
                vpg.history_checkpoints, timing.journal_gap, vpg.journal_history_mins
            ));
        }
        let protected_site = match vpg.profile {
            Profile::Vsphere => site_name.to_owned(),
            Profile::Azure => "azure-zca".to_owned(),
            Profile::Aws => "aws-zca".to_owned(),
        };
        vpgs.push(VpgSpec {
            name: vpg.name,
            id,
            profile: vpg.profile,
            timing,
            status: (
                u8::try_from(status).unwrap_or_default(),
                VPG_STATUSES[status].to_owned(),
            ),
            sub_status: (
                u8::try_from(sub_status).unwrap_or_default(),
                VPG_SUB_STATUSES[sub_status].to_owned(),
            ),
            vms: members,
            history_checkpoints: vpg.history_checkpoints,
            journal_history_mins: vpg.journal_history_mins,
            protected_site,
            recovery_site: vpg.recovery_site.unwrap_or_else(|| site_name.to_owned()),
        });
    }
    Ok(vpgs)
}

/// The VPG's cadence: its profile's, with the overrides it gives, checked.
fn vpg_timing(vpg: &RawVpg) -> Result<Timing, String> {
    let defaults = vpg.profile.timing();
    let timing = Timing {
        journal_gap: vpg.journal_gap_secs.unwrap_or(defaults.journal_gap),
        tag_latency: vpg.tag_latency_secs.unwrap_or(defaults.tag_latency),
        stamp_offset: vpg.stamp_offset_secs.unwrap_or(defaults.stamp_offset),
        task: vpg.task_secs.unwrap_or(defaults.task),
    };
    for (key, value) in [
        ("journal_gap_secs", timing.journal_gap),
        ("tag_latency_secs", timing.tag_latency),
        ("stamp_offset_secs", timing.stamp_offset),
        ("task_secs", timing.task),
    ] {
        check_secs(key, value)?;
    }
    if timing.journal_gap < 0.1 {
        return Err("key `journal_gap_secs` must be at least 0.1".to_owned());
    }
    if timing.tag_latency < timing.stamp_offset {
        return Err(format!(
            "key `tag_latency_secs` ({}) must not be less than `stamp_offset_secs` ({}): a tag cannot be listed before it is stamped",
            timing.tag_latency, timing.stamp_offset
        ));
    }
    Ok(timing)
}

/// The VMs a VPG names (by name, or by id when a name is shared), as indexes.
fn vpg_members(references: &[String], vms: &[VmSpec]) -> Result<Vec<usize>, String> {
    if references.is_empty() {
        return Err("a VPG protects at least one VM".to_owned());
    }
    let mut members = Vec::new();
    for reference in references {
        let matches: Vec<usize> = (0..vms.len())
            .filter(|&v| {
                vms[v].name.eq_ignore_ascii_case(reference)
                    || vms[v].id.eq_ignore_ascii_case(reference)
            })
            .collect();
        let index = match matches.as_slice() {
            [one] => *one,
            [] => return Err(format!("VM {reference:?} is not defined in any [[vm]]")),
            _ => {
                return Err(format!(
                    "{reference:?} names {} VMs; use the VM's id",
                    matches.len()
                ));
            }
        };
        if members.contains(&index) {
            return Err(format!("VM {reference:?} is listed twice"));
        }
        members.push(index);
    }
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
        username = "u"
        password = "p"
        [[vm]]
        name = "a"
        guest_os = "linux"
        [[vpg]]
        name = "va"
        profile = "vsphere"
        vms = ["a"]
    "#;

    fn error(text: &str) -> String {
        format!("{:#}", Scenario::from_toml(text, "test.toml").unwrap_err())
    }

    #[test]
    fn the_shipped_lab_is_valid_and_has_the_promised_vms() {
        let lab = Scenario::lab();
        assert_eq!((lab.username(), lab.password()), ("admin", "zerto-sim"));
        let jp = lab.vm_matches("jp-ubuntu");
        assert_eq!(jp.len(), 1);
        assert_eq!(lab.vms[jp[0]].ips, ["10.0.0.11"]);
        assert_eq!(lab.vm_matches("web").len(), 2, "two VMs share the name web");
        let db = lab.vm_matches("db01")[0];
        let db_vpgs: Vec<Profile> = lab
            .vpgs
            .iter()
            .filter(|v| v.vms.contains(&db))
            .map(|v| v.profile)
            .collect();
        assert_eq!(db_vpgs, [Profile::Vsphere, Profile::Azure]);
        let win = lab.vm_matches("win2019-1")[0];
        assert_eq!(lab.vms[win].guest_os, GuestOs::Windows);
        assert!(
            lab.vpgs
                .iter()
                .any(|v| v.vms.contains(&win) && v.profile == Profile::Aws)
        );
    }

    #[test]
    fn profiles_fill_in_timings_and_fields_override_them() {
        let s = Scenario::from_toml(
            &MINIMAL.replace("profile = \"vsphere\"", "profile = \"aws\"\ntask_secs = 7"),
            "t",
        )
        .expect("valid");
        let t = s.vpgs[0].timing;
        assert_eq!(
            (t.journal_gap, t.tag_latency, t.stamp_offset, t.task),
            (630.0, 128.0, 30.0, 7.0)
        );
        assert_eq!(s.vpgs[0].status, (1, "MeetingSLA".to_owned()));
        assert_eq!(s.vpgs[0].id, ids::guid("vpg", "va"));
    }

    #[test]
    fn unknown_keys_are_named_with_the_file() {
        let err = error(&format!("{MINIMAL}\nfavourite_colour = \"blue\""));
        assert!(err.starts_with("test.toml: "), "{err}");
        assert!(err.contains("favourite_colour"), "{err}");
        let err = error(&MINIMAL.replace("guest_os = \"linux\"", "guest_os = \"linux\"\nram = 4"));
        assert!(err.contains("ram"), "{err}");
    }

    #[test]
    fn undefined_vm_references_are_named() {
        let err = error(&MINIMAL.replace("vms = [\"a\"]", "vms = [\"ghost\"]"));
        assert_eq!(
            err,
            "test.toml: vpg[0] (\"va\"): key `vms`: VM \"ghost\" is not defined in any [[vm]]"
        );
    }

    #[test]
    fn ambiguous_names_must_be_referenced_by_id() {
        let text = MINIMAL.replace(
            "[[vpg]]",
            "[[vm]]\nname = \"a\"\nguest_os = \"linux\"\n[[vpg]]",
        );
        let err = error(&text);
        assert!(
            err.contains("key `vms`: \"a\" names 2 VMs; use the VM's id"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_name_their_key() {
        assert!(error(&format!("start = \"soon\"\n{MINIMAL}")).contains("key `start`"));
        assert!(
            error(&MINIMAL.replace(
                "guest_os = \"linux\"",
                "guest_os = \"linux\"\nips = [\"ten\"]"
            ))
            .contains("key `ips`")
        );
        assert!(
            error(&MINIMAL.replace(
                "profile = \"vsphere\"",
                "profile = \"vsphere\"\nstatus = \"Happy\""
            ))
            .contains("key `status`")
        );
        assert!(
            error(&MINIMAL.replace(
                "profile = \"vsphere\"",
                "profile = \"vsphere\"\ntag_latency_secs = -1"
            ))
            .contains("tag_latency_secs")
        );
        assert!(
            error(&MINIMAL.replace("profile = \"vsphere\"", "profile = \"mainframe\""))
                .contains("mainframe")
        );
        assert!(
            error(&MINIMAL.replace("name = \"a\"", "name = \"a\"\nid = \"a.vm-1\""))
                .contains("key `id`")
        );
        let err = error(&format!(
            "{MINIMAL}\n[[fault]]\nkind = \"insert-busy\"\nvpg = \"nope\"\ntimes = 1"
        ));
        assert!(err.contains("fault[0]: no VPG named \"nope\""), "{err}");
    }

    #[test]
    fn debug_output_hides_the_password() {
        let text = format!("{:?}", Scenario::lab());
        assert!(!text.contains("zerto-sim"), "{text}");
    }
}
