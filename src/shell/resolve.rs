//! From targets as named in a command to exact VM references: an `~/.ssh/config` alias
//! through the configuration's `HostName` (read, never run), an Ansible group or glob through the inventory (a direct
//! read of INI and YAML inventories, `ansible-inventory --list` for anything else), a deploy
//! tool's configuration through the servers it lists. What
//! cannot be expanded is an error saying why: the hook asks.
//!
//! OpenSSH reads the configuration of the passwd entry's home, not `$HOME`; `-F
//! "$HOME/.ssh/config"` is passed when that file exists so the user's `$HOME` decides (and a
//! test's temporary home works).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt as _;

use super::ssh_config;
use super::types::{Target, TargetKind};

/// Longest one `ssh -G` or `ansible-inventory` may take, within the caller's deadline.
const PROCESS_LIMIT: Duration = Duration::from_secs(5);

/// How targets resolve.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Run `ssh -G` for ssh destinations.
    pub(crate) resolve_ssh_config: bool,
    /// The inventory for Ansible patterns without `-i`; `None`: the one Ansible would use.
    pub(crate) ansible_inventory: Option<PathBuf>,
    /// `$HOME`, for `~/.ssh/config` and `~` in paths.
    pub(crate) home: Option<PathBuf>,
    /// The directory the command runs in, for relative paths (`-i inventory.ini`, `-F cfg`).
    pub(crate) cwd: Option<PathBuf>,
}

impl Options {
    /// A path as the command names it, from the command's own directory.
    fn path(&self, path: &str) -> PathBuf {
        let path = expand_home(path, self.home.as_deref());
        match &self.cwd {
            Some(cwd) if path.is_relative() => cwd.join(path),
            _ => path,
        }
    }
}

/// Resolves targets into VM references, in order, without duplicates.
pub(crate) fn resolve(
    targets: &[Target],
    options: &Options,
    until: Instant,
) -> Result<Vec<String>, String> {
    let mut references: Vec<String> = Vec::new();
    let mut push = |name: String| {
        if !references.contains(&name) {
            references.push(name);
        }
    };
    for target in targets {
        match &target.kind {
            TargetKind::Host | TargetKind::Vm => push(target.name.clone()),
            TargetKind::Ssh { config, user } => {
                let name = if options.resolve_ssh_config && !is_address(&target.name) {
                    match ssh_hostname(&target.name, user.as_deref(), config.as_deref(), options) {
                        Ok(name) => name.unwrap_or_else(|| target.name.clone()),
                        Err(why) => return Err(why),
                    }
                } else {
                    target.name.clone()
                };
                push(name);
            }
            TargetKind::Ansible { inventory } => {
                for name in ansible(&target.name, inventory.as_deref(), options, until)? {
                    push(name);
                }
            }
            TargetKind::Deploy { roles } => {
                let path = options.path(&target.name);
                for name in super::deploy_config::servers(&path, roles.as_deref())? {
                    push(name);
                }
            }
        }
    }
    Ok(references)
}

fn is_address(name: &str) -> bool {
    name.parse::<std::net::IpAddr>().is_ok()
}

fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The `HostName` the ssh configuration gives `alias` (for `user`, when the command names
/// one), when it differs from the alias: read by [`ssh_config`], never by running `ssh -G`,
/// which would run the agent's `Match exec` inside the hook.
fn ssh_hostname(
    alias: &str,
    user: Option<&str>,
    config: Option<&str>,
    options: &Options,
) -> Result<Option<String>, String> {
    let local_user = crate::platform::current_user_name();
    let settings = ssh_config::lookup(
        &ssh_config::Files {
            explicit: config.map(|c| options.path(c)),
            home: options.home.as_deref(),
            system: Path::new("/etc/ssh/ssh_config"),
        },
        &ssh_config::Query {
            host: alias,
            user,
            local_user: local_user.as_deref(),
        },
    )
    .map_err(|why| format!("`{alias}`: {why}"))?;
    let hostname = settings.hostname.unwrap_or_else(|| alias.to_owned());
    // A ProxyCommand from the configuration that connects elsewhere ends the connection
    // there.
    if let Some(proxy) = settings.proxy_command {
        let unexpanded = proxy.replace(&hostname, "%h");
        match super::programs::proxy_end(&unexpanded) {
            Some(Ok(end)) => return Ok(Some(end.replace("%h", &hostname))),
            Some(Err(why)) => return Err(format!("`{alias}`: {why}")),
            None => {}
        }
    }
    if hostname.eq_ignore_ascii_case(alias) {
        Ok(None)
    } else {
        Ok(Some(hostname))
    }
}

/// Why a helper process gave no answer.
enum Ran {
    /// It was still running when its time ran out.
    Late,
    /// It could not start, or it failed.
    Failed,
}

/// Runs a short helper process and returns its stdout, or why there is none.
fn run(mut command: Command, until: Instant) -> Result<String, Ran> {
    let limit = until
        .saturating_duration_since(Instant::now())
        .min(PROCESS_LIMIT);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|_| Ran::Failed)?;
    let mut stdout = child.stdout.take().ok_or(Ran::Failed)?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.by_ref().take(4 << 20).read_to_string(&mut text);
        text
    });
    match child.wait_timeout(limit) {
        Ok(Some(status)) => {
            let text = reader.join().map_err(|_| Ran::Failed)?;
            if status.success() {
                Ok(text)
            } else {
                Err(Ran::Failed)
            }
        }
        late_or_failed => {
            let _ = child.kill();
            let _ = child.wait();
            Err(if late_or_failed.is_ok() {
                Ran::Late
            } else {
                Ran::Failed
            })
        }
    }
}

/// An inventory: groups (with hosts and children) and each host's `ansible_host`.
#[derive(Debug, Default)]
struct Inventory {
    groups: BTreeMap<String, Group>,
    hosts: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Default)]
struct Group {
    hosts: BTreeSet<String>,
    children: BTreeSet<String>,
}

fn ansible(
    pattern: &str,
    inventory: Option<&str>,
    options: &Options,
    until: Instant,
) -> Result<Vec<String>, String> {
    let path = inventory
        .map(|i| options.path(i))
        .or_else(|| options.ansible_inventory.clone())
        .or_else(|| default_inventory(options.home.as_deref()));
    let is_plain = !pattern.contains(['*', '?', '[']) && pattern != "all";
    let Some(path) = path else {
        return if is_plain {
            Ok(vec![pattern.to_owned()])
        } else {
            Err(format!(
                "the host pattern `{pattern}` needs an inventory to expand, and none is configured ([shell] ansible_inventory)"
            ))
        };
    };
    let inventory = load_inventory(&path, until)
        .map_err(|e| format!("the host pattern `{pattern}` could not be expanded: {e}"))?;
    let names = inventory.expand(pattern);
    if names.is_empty() {
        return if is_plain {
            Ok(vec![pattern.to_owned()])
        } else {
            Err(format!(
                "the host pattern `{pattern}` matches no host in {}",
                path.display()
            ))
        };
    }
    Ok(names
        .into_iter()
        .map(|h| inventory.hosts.get(&h).cloned().flatten().unwrap_or(h))
        .collect())
}

/// The inventory Ansible would read: `$ANSIBLE_INVENTORY`, `inventory =` in `./ansible.cfg`
/// or `~/.ansible.cfg`, then `/etc/ansible/hosts`.
fn default_inventory(home: Option<&Path>) -> Option<PathBuf> {
    if let Some(env) = std::env::var_os("ANSIBLE_INVENTORY").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(env));
    }
    let configs = [
        std::env::var_os("ANSIBLE_CONFIG").map(PathBuf::from),
        Some(PathBuf::from("ansible.cfg")),
        home.map(|h| h.join(".ansible.cfg")),
        Some(PathBuf::from("/etc/ansible/ansible.cfg")),
    ];
    for config in configs.into_iter().flatten() {
        // Bounded and never blocking: an ansible.cfg that is a FIFO must not hold the hook.
        let Ok(text) = crate::config::read_text_file(&config) else {
            continue;
        };
        for line in text.lines() {
            if let Some((key, value)) = line.split_once('=')
                && matches!(key.trim(), "inventory" | "hostfile")
            {
                let first = value.split(',').next().unwrap_or("").trim();
                let path = expand_home(first, home);
                return Some(if path.is_relative() {
                    config.parent().unwrap_or(Path::new(".")).join(path)
                } else {
                    path
                });
            }
        }
    }
    Some(PathBuf::from("/etc/ansible/hosts")).filter(|p| p.is_file())
}

fn load_inventory(path: &Path, until: Instant) -> Result<Inventory, String> {
    if !path.exists() {
        return Err(format!("the inventory {} does not exist", path.display()));
    }
    if !path.is_file() && !path.is_dir() {
        return Err(format!(
            "the inventory {} is not a file or a directory",
            path.display()
        ));
    }
    if path.is_file() {
        let text = crate::config::read_text_file(path)
            .map_err(|e| format!("the inventory {}: {e}", path.display()))?;
        let yaml = path.extension().is_some_and(|e| e == "yml" || e == "yaml")
            || text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("---"))
                .is_some_and(|l| l.ends_with(':') && !l.starts_with('['));
        let is_script = text.starts_with("#!");
        if !is_script {
            return if yaml {
                parse_yaml(&text).map_err(|e| format!("the inventory {} {e}", path.display()))
            } else {
                Ok(parse_ini(&text))
            };
        }
    }
    let mut command = Command::new("ansible-inventory");
    command.arg("-i").arg(path).arg("--list");
    let output = run(command, until).map_err(|_| {
        format!(
            "{} is not an INI or YAML file and `ansible-inventory --list` gave no answer",
            path.display()
        )
    })?;
    parse_json(&output).ok_or_else(|| {
        format!(
            "`ansible-inventory --list` for {} gave unreadable JSON",
            path.display()
        )
    })
}

fn parse_ini(text: &str) -> Inventory {
    let mut inventory = Inventory::default();
    let mut section = (String::from("ungrouped"), "hosts");
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = match name.split_once(':') {
                Some((group, "children")) => (group.to_owned(), "children"),
                Some((group, _)) => (group.to_owned(), "vars"),
                None => (name.to_owned(), "hosts"),
            };
            inventory.groups.entry(section.0.clone()).or_default();
            continue;
        }
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        match section.1 {
            "hosts" => {
                let address = words
                    .find_map(|w| w.strip_prefix("ansible_host="))
                    .map(|a| a.trim_matches(['"', '\'']).to_owned());
                inventory.add_host(&section.0, first, address);
            }
            "children" => {
                inventory
                    .groups
                    .entry(section.0.clone())
                    .or_default()
                    .children
                    .insert(first.to_owned());
            }
            _ => {}
        }
    }
    inventory
}

/// The YAML inventory layout: top-level groups, each with `hosts` (a host and its
/// variables, `ansible_host` among them) and `children` (groups defined in place or
/// elsewhere). Text that is not YAML is an error naming where it stops being YAML, never
/// quoting it (an inventory may hold passwords).
fn parse_yaml(text: &str) -> Result<Inventory, String> {
    let value: yaml_serde::Value = yaml_serde::from_str(text).map_err(|e| match e.location() {
        Some(at) => format!("is not YAML (line {}, column {})", at.line(), at.column()),
        None => String::from("is not YAML"),
    })?;
    let mut inventory = Inventory::default();
    if let Some(groups) = value.as_mapping() {
        for (name, group) in groups {
            if let Some(name) = scalar(name) {
                read_yaml_group(&mut inventory, &name, group);
            }
        }
    }
    Ok(inventory)
}

/// One group of a YAML inventory: its hosts, and its children read the same way.
fn read_yaml_group(inventory: &mut Inventory, name: &str, group: &yaml_serde::Value) {
    inventory.groups.entry(name.to_owned()).or_default();
    let hosts = group.get("hosts").and_then(yaml_serde::Value::as_mapping);
    for (host, vars) in hosts.into_iter().flatten() {
        if let Some(host) = scalar(host) {
            let address = vars.get("ansible_host").and_then(scalar);
            inventory.add_host(name, &host, address);
        }
    }
    let children = group
        .get("children")
        .and_then(yaml_serde::Value::as_mapping);
    for (child, definition) in children.into_iter().flatten() {
        if let Some(child) = scalar(child) {
            inventory
                .groups
                .entry(name.to_owned())
                .or_default()
                .children
                .insert(child.clone());
            read_yaml_group(inventory, &child, definition);
        }
    }
}

/// A YAML scalar as text (a host may be written as a number); anything else is not a name.
fn scalar(value: &yaml_serde::Value) -> Option<String> {
    match value {
        yaml_serde::Value::String(text) => Some(text.clone()),
        yaml_serde::Value::Number(number) => Some(number.to_string()),
        yaml_serde::Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn parse_json(text: &str) -> Option<Inventory> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let mut inventory = Inventory::default();
    for (name, group) in value.as_object()? {
        if name == "_meta" {
            continue;
        }
        for host in group
            .get("hosts")
            .and_then(|h| h.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(host) = host.as_str() {
                let address = value
                    .pointer(&format!("/_meta/hostvars/{host}/ansible_host"))
                    .and_then(|a| a.as_str())
                    .map(str::to_owned);
                inventory.add_host(name, host, address);
            }
        }
        for child in group
            .get("children")
            .and_then(|h| h.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(child) = child.as_str() {
                inventory
                    .groups
                    .entry(name.clone())
                    .or_default()
                    .children
                    .insert(child.to_owned());
            }
        }
    }
    Some(inventory)
}

impl Inventory {
    fn add_host(&mut self, group: &str, host: &str, address: Option<String>) {
        self.groups
            .entry(group.to_owned())
            .or_default()
            .hosts
            .insert(host.to_owned());
        let entry = self.hosts.entry(host.to_owned()).or_default();
        if address.is_some() {
            *entry = address;
        }
    }

    /// The hosts a pattern names: `all`, a group (with its children), a host, or a glob.
    fn expand(&self, pattern: &str) -> BTreeSet<String> {
        if pattern == "all" || pattern == "*" {
            return self.hosts.keys().cloned().collect();
        }
        if self.groups.contains_key(pattern) {
            let mut hosts = BTreeSet::new();
            self.group_hosts(pattern, &mut hosts, &mut BTreeSet::new());
            return hosts;
        }
        if self.hosts.contains_key(pattern) {
            return BTreeSet::from([pattern.to_owned()]);
        }
        let mut hosts = BTreeSet::new();
        if pattern.contains(['*', '?']) {
            for host in self.hosts.keys() {
                if crate::glob::glob_match(pattern, host) {
                    hosts.insert(host.clone());
                }
            }
            for group in self.groups.keys() {
                if crate::glob::glob_match(pattern, group) {
                    self.group_hosts(group, &mut hosts, &mut BTreeSet::new());
                }
            }
        }
        hosts
    }

    fn group_hosts(&self, name: &str, hosts: &mut BTreeSet<String>, seen: &mut BTreeSet<String>) {
        if !seen.insert(name.to_owned()) {
            return;
        }
        if let Some(group) = self.groups.get(name) {
            hosts.extend(group.hosts.iter().cloned());
            for child in &group.children {
                self.group_hosts(child, hosts, seen);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    #[cfg(unix)]
    #[test]
    fn a_helper_answers_or_is_stopped_at_its_deadline() {
        let soon = || Instant::now() + Duration::from_millis(300);
        assert_eq!(
            run(sh("echo listed"), soon()).ok().as_deref(),
            Some("listed\n")
        );
        assert!(matches!(
            run(sh("echo partial; exit 3"), soon()),
            Err(Ran::Failed)
        ));
        let started = Instant::now();
        assert!(matches!(run(sh("exec sleep 30"), soon()), Err(Ran::Late)));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn ini_inventories_expand_groups_children_and_ansible_host() {
        let inventory = parse_ini(
            "web00\n[web]\nweb01 ansible_host=10.0.0.11\nweb02\n[db]\ndb01\n[prod:children]\nweb\ndb\n[web:vars]\nx=1\n",
        );
        assert_eq!(
            inventory.expand("prod").into_iter().collect::<Vec<_>>(),
            ["db01", "web01", "web02"]
        );
        assert_eq!(inventory.expand("web0*").len(), 3);
        assert_eq!(inventory.hosts["web01"].as_deref(), Some("10.0.0.11"));
        assert_eq!(inventory.expand("all").len(), 4);
    }

    #[test]
    fn yaml_inventories_expand_the_same_way() {
        let inventory = parse_yaml(
            "all:\n  hosts:\n    web00:\n  children:\n    web:\n      hosts:\n        web01:\n          ansible_host: 10.0.0.11\n        web02:\n    db:\n      hosts:\n        db01: {}\n",
        )
        .expect("YAML");
        assert_eq!(
            inventory.expand("web").into_iter().collect::<Vec<_>>(),
            ["web01", "web02"]
        );
        assert_eq!(inventory.hosts["web01"].as_deref(), Some("10.0.0.11"));
        assert_eq!(inventory.expand("all").len(), 4, "{inventory:?}");
    }

    #[test]
    fn yaml_inventories_are_read_as_yaml_not_by_indentation() {
        // Flow style, quoting, comments, vars and a group defined at the top and named as
        // a child elsewhere.
        let inventory = parse_yaml(concat!(
            "# prod\n",
            "---\n",
            "all:\n",
            "  children:\n",
            "    prod: {children: {web: null}}\n",
            "web:\n",
            "  vars: {ansible_user: deploy}\n",
            "  hosts:\n",
            "    \"web01\": {ansible_host: '10.0.0.11'}  # the first\n",
            "    web02:\n",
            "      ansible_host: >-\n",
            "        10.0.0.12\n",
        ))
        .expect("YAML");
        assert_eq!(
            inventory.expand("prod").into_iter().collect::<Vec<_>>(),
            ["web01", "web02"]
        );
        assert_eq!(inventory.hosts["web01"].as_deref(), Some("10.0.0.11"));
        assert_eq!(inventory.hosts["web02"].as_deref(), Some("10.0.0.12"));
        assert!(
            !inventory.hosts.contains_key("ansible_user"),
            "{inventory:?}"
        );

        let err = parse_yaml("all:\n  hosts:\n    web01: {ansible_password: S3CR3T\n")
            .expect_err("not YAML");
        assert!(err.starts_with("is not YAML (line "), "{err}");
        assert!(!err.contains("S3CR3T"), "{err}");
    }
}
