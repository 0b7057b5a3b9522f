//! Who a Windows file's security descriptor lets read or change it, read through the few
//! Windows calls that need `unsafe` code (`GetNamedSecurityInfoW`, `GetAclInformation`,
//! `GetAce`, `IsWellKnownSid`, `EqualSid`, the process token's user), so the rest of rewind
//! keeps `forbid(unsafe_code)`. `access` exists on Windows only; what an access mask allows
//! ([`Grant`]) is read the same everywhere.

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::access;

/// One account or group an access control entry names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// SYSTEM, the Administrators group or TrustedInstaller: the machine's own administration,
    /// Windows' equivalent of root.
    Administration,
    /// The user this process runs as.
    CurrentUser,
    /// Anyone else, as the SID's text (`S-1-5-32-545`, `S-1-1-0` for Everyone).
    Other(String),
}

/// What the owner and the discretionary ACL of one file or directory allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The owner, who may always rewrite the ACL.
    pub owner: Principal,
    /// Each access-allowed entry that applies to the object itself (not inherit-only), in
    /// the ACL's order; a missing (NULL) DACL reads as Everyone allowed everything.
    pub allowed: Vec<Grant>,
}

/// One access-allowed entry: who, and its access mask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Whom the entry names.
    pub who: Principal,
    /// The rights it allows (`FILE_READ_DATA`, `DELETE`, `GENERIC_ALL`, …).
    pub mask: u32,
}

/// Rights that read a file's content or list a directory.
const READ: u32 = 0x0000_0001 /* FILE_READ_DATA / FILE_LIST_DIRECTORY */
    | 0x8000_0000 /* GENERIC_READ */
    | 0x1000_0000 /* GENERIC_ALL */;
/// Rights that change a file's content, or change, replace or rename the object itself:
/// writing or appending data (adding entries to a directory), deleting it or its children,
/// rewriting its ACL or taking it over.
const CHANGE: u32 = 0x0000_0002 /* FILE_WRITE_DATA / FILE_ADD_FILE */
    | 0x0000_0004 /* FILE_APPEND_DATA / FILE_ADD_SUBDIRECTORY */
    | 0x0000_0040 /* FILE_DELETE_CHILD */
    | 0x0001_0000 /* DELETE */
    | 0x0004_0000 /* WRITE_DAC */
    | 0x0008_0000 /* WRITE_OWNER */
    | 0x4000_0000 /* GENERIC_WRITE */
    | 0x1000_0000 /* GENERIC_ALL */;
/// The rights of [`CHANGE`] that reach what a directory already holds: deleting (so
/// replacing) an entry or the directory itself, and rewriting its ACL or owner. Adding a new
/// file or subdirectory (`GENERIC_WRITE` on a directory means no more) does not, as with a
/// Unix directory's sticky bit.
const CHANGE_ENTRIES: u32 = CHANGE & !(0x0000_0002 | 0x0000_0004 | 0x4000_0000);

impl Grant {
    /// Whether it lets `who` read the file's content (list the directory).
    pub fn reads(&self) -> bool {
        self.mask & READ != 0
    }

    /// Whether it lets `who` change the file, or replace, rename or re-permit it.
    pub fn changes(&self) -> bool {
        self.mask & CHANGE != 0
    }

    /// For a directory above a file: whether it lets `who` replace or rename what the
    /// directory already holds (creating new entries alone does not).
    pub fn changes_entries(&self) -> bool {
        self.mask & CHANGE_ENTRIES != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(mask: u32) -> Grant {
        Grant {
            who: Principal::Other(String::from("S-1-5-32-545")),
            mask,
        }
    }

    #[test]
    fn read_and_execute_neither_changes_a_file_nor_a_directorys_entries() {
        // FILE_GENERIC_READ | FILE_GENERIC_EXECUTE, as Users hold on C:\Program Files
        let users = grant(0x0012_00A9);
        assert!(users.reads());
        assert!(!users.changes());
        assert!(!users.changes_entries());
    }

    #[test]
    fn modify_and_full_control_change_everything() {
        for mask in [
            0x0013_01BF, /* modify */
            0x001F_01FF, /* full */
            0x1000_0000,
        ] {
            let g = grant(mask);
            assert!(g.reads() && g.changes() && g.changes_entries(), "{mask:#x}");
        }
        assert!(grant(0x0004_0000).changes_entries(), "WRITE_DAC");
        assert!(grant(0x0008_0000).changes_entries(), "WRITE_OWNER");
    }

    #[test]
    fn adding_entries_to_a_directory_does_not_replace_those_it_holds() {
        // Authenticated Users on C:\ itself: create folders / append data
        let add = grant(0x0000_0004);
        assert!(add.changes());
        assert!(!add.changes_entries());
        assert!(!grant(0x0000_0002).changes_entries());
        assert!(!grant(0x4000_0000).changes_entries(), "GENERIC_WRITE");
        assert!(grant(0x0000_0040).changes_entries(), "FILE_DELETE_CHILD");
    }
}
