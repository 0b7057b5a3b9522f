//! Identifiers shaped like Zerto's, derived deterministically so that a fresh simulator with the
//! same scenario hands out the same ids: GUIDs for sites, VPGs, tasks and FLR sessions
//! (`<guid>.<siteGuid>` for the last two), `<vcenterGuid>.vm-<n>` for VMs, numeric strings for
//! checkpoints.

use sha2::{Digest as _, Sha256};

/// A GUID-shaped id derived from a namespace and a key (same inputs, same id).
pub(crate) fn guid(namespace: &str, key: &str) -> String {
    let digest = Sha256::digest(format!("rewind-sim/{namespace}/{key}").as_bytes());
    let mut b = [0_u8; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b
        .iter()
        .flat_map(|byte| [byte >> 4, byte & 0xf])
        .map(|nibble| char::from_digit(u32::from(nibble), 16).unwrap_or('0'))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Whether `text` is a GUID (`8-4-4-4-12` hex digits, any case).
pub(crate) fn is_guid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// Whether `text` is shaped like a vmIdentifier: `<guid>.vm-<digits>`.
pub(crate) fn is_vm_identifier(text: &str) -> bool {
    text.split_once('.').is_some_and(|(server, moref)| {
        is_guid(server)
            && moref.len() > 3
            && moref[..3].eq_ignore_ascii_case("vm-")
            && moref[3..].bytes().all(|c| c.is_ascii_digit())
    })
}

/// Whether `text` is shaped like a task or FLR session id: `<guid>.<siteGuid>`.
pub(crate) fn is_site_scoped(text: &str) -> bool {
    text.split_once('.')
        .is_some_and(|(own, site)| is_guid(own) && is_guid(site))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_are_stable_and_well_formed() {
        let a = guid("vpg", "web-a");
        assert_eq!(a, guid("vpg", "web-a"));
        assert_ne!(a, guid("vpg", "web-b"));
        assert!(is_guid(&a), "{a}");
        assert!(is_guid(&a.to_uppercase()));
    }

    #[test]
    fn recognises_zerto_id_shapes() {
        let vm = format!("{}.vm-38", guid("vcenter", "x"));
        assert!(is_vm_identifier(&vm));
        assert!(!is_vm_identifier("jp-ubuntu"));
        assert!(!is_vm_identifier("10.0.0.11"));
        assert!(!is_vm_identifier(&format!("{}.vm-", guid("vcenter", "x"))));
        assert!(is_site_scoped(&format!(
            "{}.{}",
            guid("task", "1"),
            guid("site", "s")
        )));
        assert!(!is_site_scoped(&guid("task", "1")));
    }
}
