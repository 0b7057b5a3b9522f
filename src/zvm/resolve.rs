//! From the VM reference a tool call carries to exactly one VM Zerto protects, with every VPG
//! that protects it. A reference may be a VM name, a vmIdentifier, a guest IP, `user@host`,
//! `host:port`, an FQDN whose first label is the VM name, or an alias from the config.

use std::collections::BTreeMap;

use super::model::Vm;
use super::{Client, ZvmError};
use crate::deadline::Deadline;

/// What a reference turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Found(Vm),
    /// Zerto protects no VM by that reference: there is nothing to rewind to. `near` are
    /// the VMs the reference may have meant: those whose name contains it, or whose guest
    /// IP starts with it.
    Unknown {
        reference: String,
        near: Vec<Vm>,
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
    let vms = if looks_like_vm_identifier(&host) {
        match client.vms(Some(&host), deadline) {
            // A ZVM that rejects the identifier does not know the VM: unknown, not a failure.
            Err(e) if matches!(e.status(), Some(400 | 404)) => Vec::new(),
            other => other?,
        }
    } else {
        client.vms(None, deadline)?
    };
    Ok(match_vms(reference, &host, &vms))
}

/// Resolves several references with one `GET /v1/vms` for all of them (a vmIdentifier is
/// looked up on its own, as [`resolve`] does). The answers come in the order given.
fn resolve_all(
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
            match_vms(reference, host, &all)
        };
        answers.push(answer);
    }
    Ok(answers)
}

/// Why the references of one call do not come to VMs Zerto protects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// Zerto knows no VM by these references (of `of` given): nothing to rewind to there.
    Unknown { references: Vec<String>, of: usize },
    /// A reference matches two or more VMs (the first such reference); never guess.
    Ambiguous {
        reference: String,
        candidates: Vec<Vm>,
    },
}

/// Resolves every reference of one call (one `GET /v1/vms` for all but vmIdentifiers) and
/// takes the answers together: the VMs, each once in the order first named; or, when they
/// are not all exactly one VM, why not (an ambiguous reference decides before unknown ones).
/// The outer error is a ZVM that could not be asked.
pub fn resolve_targets(
    client: &Client,
    references: &[&str],
    aliases: &BTreeMap<String, String>,
    deadline: &Deadline,
) -> Result<Result<Vec<Vm>, Unresolved>, ZvmError> {
    let resolutions = resolve_all(client, references, aliases, deadline)?;
    Ok(combine(references, resolutions))
}

/// [`resolve_targets`] past the ZVM: the answers for `references`, in their order.
fn combine(references: &[&str], resolutions: Vec<Resolution>) -> Result<Vec<Vm>, Unresolved> {
    let mut vms: Vec<Vm> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for (reference, resolution) in references.iter().zip(resolutions) {
        match resolution {
            Resolution::Found(vm) => {
                if !vms.iter().any(|v| v.id == vm.id) {
                    vms.push(vm);
                }
            }
            Resolution::Unknown { .. } => unknown.push((*reference).to_owned()),
            Resolution::Ambiguous {
                reference,
                candidates,
            } => {
                return Err(Unresolved::Ambiguous {
                    reference,
                    candidates,
                });
            }
        }
    }
    if unknown.is_empty() {
        Ok(vms)
    } else {
        Err(Unresolved::Unknown {
            references: unknown,
            of: references.len(),
        })
    }
}

/// Picks the VMs among `vms` that `host` names: exact id, name or IP first; the first
/// label of an FQDN only when nothing matched exactly.
fn match_vms(reference: &str, host: &str, vms: &[Vm]) -> Resolution {
    let exact: Vec<&Vm> = vms
        .iter()
        .filter(|vm| {
            vm.id.eq_ignore_ascii_case(host)
                || vm.name.eq_ignore_ascii_case(host)
                || vm
                    .ips
                    .iter()
                    .any(|ip| ip == host || crate::inventory::same_address(ip, host))
        })
        .collect();
    let matched = if exact.is_empty() {
        match first_label(host) {
            Some(label) => vms
                .iter()
                .filter(|vm| vm.name.eq_ignore_ascii_case(label))
                .collect(),
            None => exact,
        }
    } else {
        exact
    };
    let mut matched: Vec<Vm> = matched.into_iter().cloned().collect();
    let reference = reference.to_owned();
    match matched.len() {
        0 => Resolution::Unknown {
            reference,
            near: near(host, vms),
        },
        1 => Resolution::Found(matched.remove(0)),
        _ => Resolution::Ambiguous {
            reference,
            candidates: matched,
        },
    }
}

/// The VMs a reference that matched none may have meant: a name containing it (or its
/// first label), or a guest IP starting with it. Nothing for a reference under two
/// characters, which would match almost everything.
fn near(host: &str, vms: &[Vm]) -> Vec<Vm> {
    let host = host.to_ascii_lowercase();
    if host.chars().count() < 2 {
        return Vec::new();
    }
    let label = first_label(&host).unwrap_or(&host);
    let near: Vec<Vm> = vms
        .iter()
        .filter(|vm| {
            let name = vm.name.to_ascii_lowercase();
            name.contains(&host)
                || name.contains(label)
                || vm.ips.iter().any(|ip| ip.starts_with(&host))
        })
        .cloned()
        .collect();
    if !near.is_empty() {
        return near;
    }
    // A typo (`jp-ubnutu`): the VMs of the nearest name.
    match crate::suggest::nearest(label, vms.iter().map(|vm| vm.name.as_str())) {
        Some(name) => vms.iter().filter(|vm| vm.name == name).cloned().collect(),
        None => Vec::new(),
    }
}

fn apply_alias(name: &str, aliases: &BTreeMap<String, String>) -> String {
    aliases
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name.trim()))
        .map_or_else(|| name.trim().to_owned(), |(_, target)| target.clone())
}

/// The host inside `user@host`, `host:port`, `[v6]:port`, `ssh://user@host:22/path`.
fn host_part(reference: &str) -> String {
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
fn looks_like_vm_identifier(s: &str) -> bool {
    let Some((guid, moref)) = s.split_once('.') else {
        return false;
    };
    guid.len() == 36 && guid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') && !moref.is_empty()
}

/// The first label of an FQDN (`web01` of `web01.corp.example`); `None` for IPs and bare names.
fn first_label(host: &str) -> Option<&str> {
    if crate::inventory::address(host).is_some() {
        return None;
    }
    host.split_once('.').map(|(label, _)| label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zvm::model::VpgRef;

    fn vm(id: &str, name: &str, vpgs: &[&str], ip: &str) -> Vm {
        Vm {
            id: id.into(),
            name: name.into(),
            vpgs: vpgs
                .iter()
                .map(|v| VpgRef {
                    id: (*v).into(),
                    name: format!("vpg-{v}"),
                })
                .collect(),
            ips: vec![ip.into()],
        }
    }

    fn vms() -> Vec<Vm> {
        vec![
            vm("a.vm-1", "jp-ubuntu", &["v1"], "10.0.0.11"),
            vm("b.vm-2", "db01", &["v1", "v2"], "10.0.0.31"),
            vm("c.vm-3", "web", &["v1"], "10.0.0.41"),
            vm("d.vm-4", "web", &["v2"], "10.0.0.42"),
        ]
    }

    fn found(reference: &str) -> Resolution {
        match_vms(reference, &host_part(reference), &vms())
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
            // The guest IP in the other spellings the resolver reads.
            "167772171",
            "0xa00000b",
            "10.11",
            "012.0.0.013",
            "[::ffff:10.0.0.11]",
            "::ffff:a00:b",
            "root@0xa00000b:22",
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

    fn targets(references: &[&str]) -> Result<Vec<Vm>, Unresolved> {
        let answers = references.iter().map(|r| found(r)).collect();
        combine(references, answers)
    }

    #[test]
    fn several_references_to_one_vm_give_it_once_in_the_order_named() {
        let vms = targets(&["db01", "jp-ubuntu", "10.0.0.31", "root@db01"]).expect("all known");
        let names: Vec<_> = vms.iter().map(|vm| vm.name.as_str()).collect();
        assert_eq!(names, ["db01", "jp-ubuntu"]);
    }

    #[test]
    fn an_ambiguous_reference_decides_before_unknown_ones() {
        assert_eq!(
            targets(&["mail01", "db01", "web", "10.9.9.9"]),
            Err(Unresolved::Ambiguous {
                reference: "web".into(),
                candidates: vms().into_iter().filter(|vm| vm.name == "web").collect(),
            })
        );
        assert_eq!(
            targets(&["mail01", "db01", "10.9.9.9"]),
            Err(Unresolved::Unknown {
                references: vec!["mail01".into(), "10.9.9.9".into()],
                of: 3,
            })
        );
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
    fn an_unknown_reference_offers_the_vms_it_may_have_meant() {
        let near = |reference: &str| match found(reference) {
            Resolution::Unknown { near, .. } => {
                near.into_iter().map(|vm| vm.id).collect::<Vec<_>>()
            }
            other => panic!("{reference}: {other:?}"),
        };
        assert_eq!(near("ubuntu"), ["a.vm-1"]);
        assert_eq!(near("WE"), ["c.vm-3", "d.vm-4"]);
        assert_eq!(near("10.0.0.4"), ["c.vm-3", "d.vm-4"]);
        assert_eq!(near("root@db.corp.example"), ["b.vm-2"]);
        assert!(near("mail01").is_empty());
        assert!(near("b").is_empty(), "one character suggests nothing");
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
