//! From the VM reference a tool call carries to exactly one VM Zerto protects, with every VPG
//! that protects it. A reference may be a VM name, a vmIdentifier, a guest IP, `user@host`,
//! `host:port`, an FQDN whose first label is the VM name, or an alias from the config.

use std::collections::BTreeMap;

use super::wire::VmRow;
use super::{Client, ZvmError};
use crate::deadline::Deadline;

/// A VM as Zerto protects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vm {
    pub id: String,
    pub name: String,
    /// The guest's IP addresses as Zerto reports them (what tells two same-named VMs apart).
    pub ips: Vec<String>,
    /// Every VPG protecting the VM, in the order the ZVM listed them.
    pub vpgs: Vec<VpgRef>,
}

/// A VPG by id and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VpgRef {
    pub id: String,
    pub name: String,
}

/// What a reference turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Found(Vm),
    /// Zerto protects no VM by that reference: there is nothing to rewind to.
    Unknown {
        reference: String,
    },
    /// Two or more VMs match; never guess.
    Ambiguous {
        reference: String,
        candidates: Vec<Vm>,
    },
}

/// Resolves `reference` against the ZVM's protected VMs (one `GET /v1/vms`).
pub fn resolve(
    client: &Client,
    reference: &str,
    aliases: &BTreeMap<String, String>,
    deadline: &Deadline,
) -> Result<Resolution, ZvmError> {
    let host = host_part(&apply_alias(reference, aliases));
    let host = apply_alias(&host, aliases);
    let rows = if looks_like_vm_identifier(&host) {
        match client.vms(Some(&host), deadline) {
            // A ZVM that rejects the identifier does not know the VM: unknown, not a failure.
            Err(e) if matches!(e.status(), Some(400 | 404)) => Vec::new(),
            other => other?,
        }
    } else {
        client.vms(None, deadline)?
    };
    Ok(match_rows(reference, &host, &rows))
}

/// Resolves several references with one `GET /v1/vms` for all of them (a vmIdentifier is
/// looked up on its own, as [`resolve`] does). The answers come in the order given.
pub fn resolve_all(
    client: &Client,
    references: &[&str],
    aliases: &BTreeMap<String, String>,
    deadline: &Deadline,
) -> Result<Vec<Resolution>, ZvmError> {
    if let [one] = references {
        return Ok(vec![resolve(client, one, aliases, deadline)?]);
    }
    let hosts: Vec<String> = references
        .iter()
        .map(|r| apply_alias(&host_part(&apply_alias(r, aliases)), aliases))
        .collect();
    let all = if hosts.iter().any(|h| !looks_like_vm_identifier(h)) {
        client.vms(None, deadline)?
    } else {
        Vec::new()
    };
    let mut answers = Vec::with_capacity(references.len());
    for (reference, host) in references.iter().zip(&hosts) {
        let answer = if looks_like_vm_identifier(host) {
            resolve(client, reference, aliases, deadline)?
        } else {
            match_rows(reference, host, &all)
        };
        answers.push(answer);
    }
    Ok(answers)
}

/// Picks the VMs among `rows` that `host` names: exact id, name or IP first; the first
/// label of an FQDN only when nothing matched exactly.
pub fn match_rows(reference: &str, host: &str, rows: &[VmRow]) -> Resolution {
    let exact: Vec<&VmRow> = rows
        .iter()
        .filter(|r| {
            r.vm_identifier.eq_ignore_ascii_case(host)
                || r.vm_name.eq_ignore_ascii_case(host)
                || r.ips().any(|ip| ip == host)
        })
        .collect();
    let matched = if exact.is_empty() {
        match first_label(host) {
            Some(label) => rows
                .iter()
                .filter(|r| r.vm_name.eq_ignore_ascii_case(label))
                .collect(),
            None => exact,
        }
    } else {
        exact
    };

    let mut vms: Vec<Vm> = Vec::new();
    for row in matched {
        let vpg = VpgRef {
            id: row.vpg_identifier.clone(),
            name: row.vpg_name.clone(),
        };
        if !vms.iter().any(|vm| vm.id == row.vm_identifier) {
            vms.push(Vm {
                id: row.vm_identifier.clone(),
                name: row.vm_name.clone(),
                ips: Vec::new(),
                vpgs: Vec::new(),
            });
        }
        let Some(vm) = vms.iter_mut().find(|vm| vm.id == row.vm_identifier) else {
            continue;
        };
        if !vm.vpgs.contains(&vpg) {
            vm.vpgs.push(vpg);
        }
        for ip in row.ips() {
            if !vm.ips.iter().any(|known| known == ip) {
                vm.ips.push(ip.to_owned());
            }
        }
    }
    let reference = reference.to_owned();
    match vms.len() {
        0 => Resolution::Unknown { reference },
        1 => Resolution::Found(vms.remove(0)),
        _ => Resolution::Ambiguous {
            reference,
            candidates: vms,
        },
    }
}

fn apply_alias(name: &str, aliases: &BTreeMap<String, String>) -> String {
    aliases
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name.trim()))
        .map_or_else(|| name.trim().to_owned(), |(_, target)| target.clone())
}

/// The host inside `user@host`, `host:port`, `[v6]:port`, `ssh://user@host:22/path`.
pub fn host_part(reference: &str) -> String {
    let mut s = reference.trim();
    if let Some((_, rest)) = s.split_once("://") {
        s = rest;
    }
    if let Some((host, _)) = s.split_once('/') {
        s = host;
    }
    if let Some((_, host)) = s.rsplit_once('@') {
        s = host;
    }
    if let Some(inner) = s.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner).to_owned();
    }
    if s.matches(':').count() == 1
        && let Some((host, port)) = s.split_once(':')
        && port.chars().all(|c| c.is_ascii_digit())
    {
        s = host;
    }
    s.to_owned()
}

/// `<guid>.vm-<n>` (vSphere) or anything else shaped `<guid>.<moref>`.
pub fn looks_like_vm_identifier(s: &str) -> bool {
    let Some((guid, moref)) = s.split_once('.') else {
        return false;
    };
    guid.len() == 36 && guid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') && !moref.is_empty()
}

/// The first label of an FQDN (`web01` of `web01.corp.example`); `None` for IPs and bare names.
fn first_label(host: &str) -> Option<&str> {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    host.split_once('.').map(|(label, _)| label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, name: &str, vpg: &str, ip: &str) -> VmRow {
        serde_json::from_value(serde_json::json!({
            "VmIdentifier": id, "VmName": name, "VpgIdentifier": vpg, "VpgName": format!("vpg-{vpg}"),
            "VmNetworkInformation": {"NetworkAdapters": [{"IpAddresses": [ip]}]}
        }))
        .expect("row")
    }

    fn rows() -> Vec<VmRow> {
        vec![
            row("a.vm-1", "jp-ubuntu", "v1", "10.0.0.11"),
            row("b.vm-2", "db01", "v1", "10.0.0.31"),
            row("b.vm-2", "db01", "v2", "10.0.0.31"),
            row("c.vm-3", "web", "v1", "10.0.0.41"),
            row("d.vm-4", "web", "v2", "10.0.0.42"),
        ]
    }

    fn found(reference: &str) -> Resolution {
        match_rows(reference, &host_part(reference), &rows())
    }

    #[test]
    fn every_reference_form_reaches_the_vm() {
        for reference in [
            "jp-ubuntu",
            "JP-Ubuntu",
            "a.vm-1",
            "10.0.0.11",
            "root@jp-ubuntu",
            "jp-ubuntu:22",
            "admin@10.0.0.11:2222",
            "jp-ubuntu.corp.example",
            "ssh://root@jp-ubuntu.corp.example:22/",
        ] {
            let Resolution::Found(vm) = found(reference) else {
                panic!("{reference} did not resolve");
            };
            assert_eq!(vm.name, "jp-ubuntu", "{reference}");
        }
    }

    #[test]
    fn a_vm_in_two_vpgs_has_both() {
        let Resolution::Found(vm) = found("db01") else {
            panic!("db01");
        };
        let names: Vec<_> = vm.vpgs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["vpg-v1", "vpg-v2"]);
    }

    #[test]
    fn two_vms_of_one_name_are_ambiguous() {
        let Resolution::Ambiguous { candidates, .. } = found("web") else {
            panic!("web");
        };
        let ids: Vec<_> = candidates.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c.vm-3", "d.vm-4"]);
    }

    #[test]
    fn unknown_names_and_ips_are_unknown() {
        for reference in ["mail01", "10.9.9.9", "nope.corp.example"] {
            assert!(
                matches!(found(reference), Resolution::Unknown { .. }),
                "{reference}"
            );
        }
    }

    #[test]
    fn aliases_apply_before_and_after_stripping_user() {
        let aliases = BTreeMap::from([("web01.corp.example".to_owned(), "jp-ubuntu".to_owned())]);
        assert_eq!(apply_alias("WEB01.corp.example", &aliases), "jp-ubuntu");
        assert_eq!(
            apply_alias(&host_part("root@web01.corp.example"), &aliases),
            "jp-ubuntu"
        );
    }

    #[test]
    fn vm_identifier_shape() {
        assert!(looks_like_vm_identifier(
            "d4a6a1d5-1234-4abc-9def-7c3e616f0908.vm-38"
        ));
        assert!(!looks_like_vm_identifier("jp-ubuntu.corp.example"));
        assert!(!looks_like_vm_identifier("10.0.0.11"));
    }
}
