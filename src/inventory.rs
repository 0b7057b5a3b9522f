//! The protected-VM net: the references Zerto knows (VM names, their FQDN-style names, guest
//! IPs) and the configured `[vm_aliases]`, kept in a small private file in the cache so that
//! the shell analysis can tell, without a round trip to the ZVM, that an argument of a
//! program it does not know names a machine rewind protects (then it asks).
//!
//! The file is refreshed whenever rewind lists the ZVM's VMs anyway (a guard, `find`, `vms`,
//! `doctor`); the read-only path only reads it. A missing or unreadable file is an empty
//! inventory: the net then catches nothing more, and every other rule still holds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file name inside the cache directory.
const FILE: &str = "protected-vms";
/// The file's first line: what it is and the form of the rest.
const HEADER: &str = "# rewind protected VMs v1: one reference a line, lower case, sorted";

/// References to the machines rewind protects, compared without regard to case.
///
/// The stored file is kept as read, one sorted reference a line, and searched in place: the
/// hook reads it on every shell command, and a few thousand references parsed into a set
/// would cost the call more than the rest of its analysis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    /// The stored references: sorted lines, as the file holds them after its header.
    stored: String,
    /// References added here (`[vm_aliases]`, a listing about to be stored).
    added: BTreeSet<String>,
}

impl Inventory {
    /// An inventory of exactly these references (tests, `[vm_aliases]`).
    pub fn of<I, S>(references: I) -> Inventory
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut inventory = Inventory::default();
        for reference in references {
            inventory.add(reference.as_ref());
        }
        inventory
    }

    /// Adds one reference (empty text is ignored). An address is kept in its usual form.
    pub fn add(&mut self, reference: &str) {
        let reference = reference.trim().trim_end_matches('.').to_ascii_lowercase();
        if !reference.is_empty() && !reference.contains('\n') {
            self.added
                .insert(address(&reference).map_or(reference, |ip| ip.to_string()));
        }
    }

    /// Every reference held that is a name, not an address (for "did you mean").
    pub(crate) fn names(&self) -> Vec<&str> {
        self.stored
            .lines()
            .chain(self.added.iter().map(String::as_str))
            .filter(|r| address(r).is_none())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.stored.is_empty() && self.added.is_empty()
    }

    /// How many references it holds (one counted twice if both stored and added).
    pub fn len(&self) -> usize {
        self.stored.lines().count() + self.added.len()
    }

    /// Whether `reference`, as [`Inventory::add`] keeps it, is held.
    fn holds(&self, reference: &str) -> bool {
        self.added.contains(reference) || sorted_lines_hold(&self.stored, reference)
    }

    /// Whether `host` (a name, an FQDN, an address; `[…]` around an IPv6 address allowed)
    /// is a protected machine. `web01.corp.example` matches a VM named `web01`.
    pub fn contains(&self, host: &str) -> bool {
        if self.is_empty() {
            return false;
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        if host.is_empty() {
            return false;
        }
        if self.holds(&host) {
            return true;
        }
        // `167772198`, `0xa000026`, `10.38`, `::ffff:10.0.0.38`: one address, many spellings.
        if let Some(ip) = address(&host) {
            return self.holds(&ip.to_string());
        }
        // The first label of a fully qualified name (`web01.corp.example`, never a file name
        // such as `web01.log` nor an IPv4 address).
        let is_address = host.chars().all(|c| c.is_ascii_digit() || c == '.');
        match host.split_once('.') {
            Some((first, domain)) if !is_address && domain.contains('.') => self.holds(first),
            _ => false,
        }
    }

    /// The inventory stored in `dir`, or an empty one when there is none or it cannot be read
    /// (a file of another form is none: the next listing writes it anew).
    pub fn load(dir: &Path) -> Inventory {
        Inventory::parse(&crate::config::read_text_file(&path_in(dir)).unwrap_or_default())
    }

    /// The inventory stored in rewind's cache directory (empty when there is none). Reading
    /// creates nothing: a cache directory that is not there holds no inventory.
    pub fn load_cached() -> Inventory {
        crate::config::cache_dir_path()
            .ok()
            .filter(|dir| dir.is_dir())
            .and_then(|_| crate::config::cache_dir().ok())
            .map(|dir| Inventory::load(&dir))
            .unwrap_or_default()
    }

    /// The references of VMs just listed: each VM's name (and, for a name written as a
    /// fully qualified one, its first label) and every guest IP Zerto knows for it.
    pub fn listed(vms: &[crate::zvm::Vm]) -> Inventory {
        let mut inventory = Inventory::default();
        for vm in vms {
            inventory.add(&vm.name);
            if let Some((first, domain)) = vm.name.split_once('.')
                && domain.contains('.')
                && vm.name.parse::<std::net::IpAddr>().is_err()
            {
                inventory.add(first);
            }
            for ip in &vm.ips {
                inventory.add(ip);
            }
        }
        inventory
    }

    /// How long ago the stored inventory in `dir` was written; `None` when there is none.
    pub fn age(dir: &Path) -> Option<std::time::Duration> {
        let written = std::fs::metadata(path_in(dir)).ok()?.modified().ok()?;
        Some(written.elapsed().unwrap_or_default())
    }

    /// Writes this inventory into `dir`, mode 0600, atomically, its references sorted one a
    /// line. Best effort: an inventory that cannot be written is left as it was.
    pub fn store(&self, dir: &Path) {
        let text = self.text();
        // Every guard lists the VMs: an unchanged net is not written (and synced) again.
        let path = path_in(dir);
        if std::fs::read(&path).is_ok_and(|stored| stored == text.as_bytes()) {
            return;
        }
        let _ = crate::lockfile::write_private_atomic(&path, text.as_bytes());
    }

    /// Publishes this inventory at `path` for every local user to read (mode 0644), as the
    /// broker does beside its socket: the hooks it serves read the net there, where their
    /// agent cannot write. Unchanged, it is not written again.
    pub(crate) fn publish(&self, path: &Path) -> std::io::Result<()> {
        let text = self.text();
        if std::fs::read(path).is_ok_and(|stored| stored == text.as_bytes()) {
            return Ok(());
        }
        crate::lockfile::write_public_atomic(path, text.as_bytes())
    }

    /// The inventory in the file `path` (empty when there is none or it cannot be read).
    pub(crate) fn load_file(path: &Path) -> Inventory {
        Inventory::parse(&crate::config::read_text_file(path).unwrap_or_default())
    }

    /// An inventory from a stored file's text (empty when it is of another form).
    fn parse(text: &str) -> Inventory {
        let stored = text
            .strip_prefix(HEADER)
            .and_then(|rest| rest.strip_prefix('\n'))
            .map(str::to_owned)
            .unwrap_or_default();
        Inventory {
            stored,
            added: BTreeSet::new(),
        }
    }

    /// The stored form: the header, then every reference sorted, one a line.
    fn text(&self) -> String {
        let mut all: BTreeSet<&str> = self.stored.lines().collect();
        all.extend(self.added.iter().map(String::as_str));
        let mut text = String::from(HEADER);
        for reference in all {
            text.push('\n');
            text.push_str(reference);
        }
        text
    }
}

/// Whether `text`, lines sorted by their bytes, holds the line `needle`: a binary search over
/// the text itself, each probe reading back to its line's start.
fn sorted_lines_hold(text: &str, needle: &str) -> bool {
    let bytes = text.as_bytes();
    // [lo, hi): lo at a line's start, hi at the end or at the start of a line.
    let (mut lo, mut hi) = (0, bytes.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = bytes[lo..mid]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(lo, |at| lo + at + 1);
        let end = bytes[start..hi]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(hi, |at| start + at);
        match bytes[start..end].cmp(needle.as_bytes()) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => lo = (end + 1).min(hi),
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    false
}

/// The address `text` spells as the system's resolver reads it: IPv4 in every form
/// `inet_aton` takes (one to four parts, each decimal, octal with a leading 0 or hex with
/// 0x), or IPv6, bracketed or not (an IPv4-mapped one as its IPv4 address). `None`: not an
/// address.
pub(crate) fn address(text: &str) -> Option<std::net::IpAddr> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let text = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    if let Ok(v6) = text.parse::<Ipv6Addr>() {
        return Some(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4));
    }
    let parts: Vec<u64> = text
        .split('.')
        .map(|part| {
            let (digits, radix) =
                if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
                    (hex, 16)
                } else if part.len() > 1 && part.starts_with('0') {
                    (&part[1..], 8)
                } else {
                    (part, 10)
                };
            if digits.is_empty() && radix != 8 {
                return None;
            }
            u64::from_str_radix(digits, radix).ok()
        })
        .collect::<Option<_>>()?;
    // The last part fills the bytes the earlier ones leave.
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|&p| p > 255) {
        return None;
    }
    let room = 8 * (4 - leading.len());
    if *last >= 1u64 << room {
        return None;
    }
    let mut value: u64 = 0;
    for (i, &p) in leading.iter().enumerate() {
        value |= p << (24 - 8 * i);
    }
    value |= last;
    Some(IpAddr::V4(Ipv4Addr::from(u32::try_from(value).ok()?)))
}

/// Whether `host` is this machine's loopback: `localhost`, or an address in 127.0.0.0/8 or
/// `::1` in any spelling the resolver reads (`2130706433`, `127.1`, `[::ffff:127.0.0.1]`).
pub(crate) fn is_loopback(host: &str) -> bool {
    host.trim_end_matches('.').eq_ignore_ascii_case("localhost")
        || address(host).is_some_and(|ip| ip.is_loopback())
}

/// Whether two references spell the same address (`10.0.0.31` and `0xa00001f`).
pub(crate) fn same_address(a: &str, b: &str) -> bool {
    matches!((address(a), address(b)), (Some(x), Some(y)) if x == y)
}

fn path_in(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_names_fqdns_and_addresses_without_regard_to_case() {
        let inventory = Inventory::of(["Web01", "10.0.0.5", "fe80::1"]);
        assert!(inventory.contains("web01"));
        assert!(inventory.contains("WEB01.corp.example"));
        assert!(inventory.contains("10.0.0.5"));
        assert!(inventory.contains("[fe80::1]"));
        assert!(!inventory.contains("web02"));
        assert!(!inventory.contains("10.0.0.55"));
        assert!(!inventory.contains("10.0.0"));
        assert!(!inventory.contains(""));
    }

    #[test]
    fn an_address_matches_in_every_spelling_the_resolver_reads() {
        let inventory = Inventory::of(["jp-ubuntu", "10.0.0.38", "fe80::1"]);
        for spelling in [
            "10.0.0.38",
            "167772198",
            "0xa000026",
            "0XA000026",
            "012.0.0.046",
            "10.38",
            "10.0.38",
            "0xa.0.0.0x26",
            "::ffff:10.0.0.38",
            "[::ffff:a00:26]",
            "FE80:0:0:0:0:0:0:1",
        ] {
            assert!(inventory.contains(spelling), "{spelling}");
        }
        for other in [
            "10.0.0.39",
            "10.0.0.380",
            "0x1a000026",
            "10.0.0.38.1",
            "1e3",
            "08.0.0.1",
            "web01",
        ] {
            assert!(!inventory.contains(other), "{other}");
        }
    }

    #[test]
    fn loopback_and_the_same_address_in_any_spelling() {
        for host in [
            "localhost",
            "LOCALHOST.",
            "127.0.0.1",
            "2130706433",
            "127.1",
            "0x7f.1",
            "[::1]",
            "::ffff:127.0.0.1",
            "0177.0.0.1",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["10.0.0.1", "127", "db01", "::2", ""] {
            assert!(!is_loopback(host), "{host}");
        }
        assert!(same_address("10.0.0.31", "167772191"));
        assert!(same_address("[::ffff:a00:1f]", "012.0.0.037"));
        assert!(!same_address("10.0.0.31", "10.0.0.32"));
        assert!(!same_address("db01", "db01"));
    }

    /// The search in place finds every stored reference and nothing else, whatever the
    /// number of lines and wherever the probes fall.
    #[test]
    fn a_stored_inventory_is_searched_in_place() {
        let dir = tempfile::tempdir().expect("temp dir");
        for size in [0, 1, 2, 3, 7, 64, 501, 2000] {
            let names: Vec<String> = (0..size).map(|i| format!("vm-{}", i * 7)).collect();
            Inventory::of(&names).store(dir.path());
            let loaded = Inventory::load(dir.path());
            assert_eq!(loaded.len(), size);
            for i in 0..size * 7 + 3 {
                let name = format!("vm-{i}");
                assert_eq!(
                    loaded.contains(&name),
                    i % 7 == 0 && i < size * 7,
                    "{name} of {size}"
                );
            }
            assert!(!loaded.contains("vm-") && !loaded.contains("a") && !loaded.contains("zz"));
        }
    }

    #[test]
    fn stored_privately_and_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let inventory = Inventory::of(["web01", "10.0.0.5"]);
        inventory.store(dir.path());
        let loaded = Inventory::load(dir.path());
        assert_eq!(loaded.len(), 2);
        assert!(loaded.contains("WEB01") && loaded.contains("0xa.0.0.5"));
        assert!(!loaded.contains("web02"));
        assert!(path_in(dir.path()).is_file(), "stored");
        if let Some(mode) = crate::platform::mode(&path_in(dir.path())) {
            assert_eq!(mode & 0o777, 0o600);
        }
        // A missing file, or one of another form, is an empty inventory, never an error.
        std::fs::write(path_in(dir.path()), b"{\"references\":[\"web01\"]}").expect("write");
        assert!(Inventory::load(dir.path()).is_empty());
    }
}
