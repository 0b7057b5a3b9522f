//! The Windows calls, each `unsafe` block with the reason it is sound.

use std::ffi::c_void;
use std::os::windows::ffi::OsStrExt as _;
use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, GetNamedSecurityInfoW, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, ACL_SIZE_INFORMATION, AclSizeInformation,
    DACL_SECURITY_INFORMATION, EqualSid, GetAce, GetAclInformation, GetTokenInformation,
    INHERIT_ONLY_ACE, IsWellKnownSid, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    TOKEN_QUERY, TOKEN_USER, TokenUser, WinBuiltinAdministratorsSid, WinLocalSystemSid,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use crate::{Access, Grant, Principal};

/// `ACCESS_ALLOWED_ACE_TYPE`.
const ACCESS_ALLOWED: u8 = 0;
/// TrustedInstaller's service SID, owner of Windows' own files.
const TRUSTED_INSTALLER: &str = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464";

/// The owner of `path` and the access-allowed entries of its DACL that apply to it (deny
/// entries only take rights away, so leaving them out can only report more access).
///
/// # Errors
/// The system's error when `path` does not exist or its security descriptor, or this
/// process's user, cannot be read.
pub fn access(path: &Path) -> std::io::Result<Access> {
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut owner: PSID = std::ptr::null_mut();
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `wide` is a NUL-terminated UTF-16 path that outlives the call; the out pointers
    // point at locals; on success `descriptor` is a LocalAlloc'd block that `owner` and
    // `dacl` point into, freed below once they are no longer read.
    let status = unsafe {
        GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &raw mut owner,
            std::ptr::null_mut(),
            &raw mut dacl,
            std::ptr::null_mut(),
            &raw mut descriptor,
        )
    };
    if status != 0 {
        return Err(std::io::Error::from_raw_os_error(status.cast_signed()));
    }
    let _free = Freed(descriptor);
    let me = TokenUserSid::of_this_process()?;
    // A volume that keeps no security (FAT) names no owner and no DACL: anyone may do anything.
    let owner = if owner.is_null() {
        Principal::Other(String::from("no owner (S-1-1-0, Everyone)"))
    } else {
        principal(owner, &me)?
    };
    let allowed = if dacl.is_null() {
        vec![Grant {
            who: Principal::Other(String::from("S-1-1-0")),
            mask: u32::MAX,
        }]
    } else {
        // SAFETY: `dacl` is non-null and points into `descriptor`, alive until `_free` drops.
        unsafe { grants(dacl, &me) }?
    };
    Ok(Access { owner, allowed })
}

/// The access-allowed entries of `dacl` that apply to the object itself.
///
/// # Safety
/// `dacl` points at a valid ACL that stays alive during the call.
unsafe fn grants(dacl: *const ACL, me: &TokenUserSid) -> std::io::Result<Vec<Grant>> {
    let mut size = ACL_SIZE_INFORMATION::default();
    // SAFETY: `dacl` is valid (the caller's promise); `size` is a local of the size passed.
    let ok = unsafe {
        GetAclInformation(
            dacl,
            (&raw mut size).cast::<c_void>(),
            u32::try_from(size_of::<ACL_SIZE_INFORMATION>()).unwrap_or(u32::MAX),
            AclSizeInformation,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut allowed = Vec::new();
    for index in 0..size.AceCount {
        let mut ace: *mut c_void = std::ptr::null_mut();
        // SAFETY: `index` is below the ACL's entry count; `ace` receives a pointer into it.
        if unsafe { GetAce(dacl, index, &raw mut ace) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: every entry starts with an ACE_HEADER; GetAce returned a valid entry.
        let header = unsafe { ace.cast::<ACE_HEADER>().read_unaligned() };
        if header.AceType != ACCESS_ALLOWED || u32::from(header.AceFlags) & INHERIT_ONLY_ACE != 0 {
            continue;
        }
        let entry = ace.cast::<ACCESS_ALLOWED_ACE>();
        // SAFETY: an access-allowed entry is an ACCESS_ALLOWED_ACE: a mask, then its SID
        // starting at `SidStart`, all inside the entry.
        let (mask, sid) = unsafe {
            (
                (&raw const (*entry).Mask).read_unaligned(),
                (&raw mut (*entry).SidStart).cast::<c_void>(),
            )
        };
        allowed.push(Grant {
            who: principal(sid, me)?,
            mask,
        });
    }
    Ok(allowed)
}

/// Who `sid` is: the machine's administration, this process's user or another.
fn principal(sid: PSID, me: &TokenUserSid) -> std::io::Result<Principal> {
    // SAFETY: `sid` points at a valid SID inside a live security descriptor or ACL.
    let administration = unsafe {
        IsWellKnownSid(sid, WinLocalSystemSid) != 0
            || IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
    };
    if administration {
        return Ok(Principal::Administration);
    }
    // SAFETY: both point at valid SIDs: `sid` as above, `me.sid()` into the token's buffer.
    if unsafe { EqualSid(sid, me.sid()) } != 0 {
        return Ok(Principal::CurrentUser);
    }
    let text = sid_text(sid)?;
    Ok(if text == TRUSTED_INSTALLER {
        Principal::Administration
    } else {
        Principal::Other(text)
    })
}

/// `sid` as text (`S-1-5-…`).
fn sid_text(sid: PSID) -> std::io::Result<String> {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is valid (see `principal`); `text` receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &raw mut text) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let _free = Freed(text.cast::<c_void>());
    let mut len = 0;
    // SAFETY: `text` is NUL-terminated: read up to the NUL, then as one slice of that length.
    let units = unsafe {
        while *text.add(len) != 0 {
            len += 1;
        }
        std::slice::from_raw_parts(text, len)
    };
    Ok(String::from_utf16_lossy(units))
}

/// The user SID of this process's token, in a buffer of its own.
struct TokenUserSid(Vec<u64>);

impl TokenUserSid {
    fn of_this_process() -> std::io::Result<Self> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: GetCurrentProcess's pseudo handle needs no closing; `token` is a local.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &raw mut token) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        // A TOKEN_USER and the SID after it: a SID is at most 68 bytes.
        let mut buffer = vec![0_u64; 16];
        let mut needed = 0_u32;
        // SAFETY: `token` was opened for querying; `buffer` holds the length passed, aligned
        // for TOKEN_USER; `needed` is a local.
        let ok = unsafe {
            GetTokenInformation(
                token,
                TokenUser,
                buffer.as_mut_ptr().cast::<c_void>(),
                u32::try_from(buffer.len() * 8).unwrap_or(0),
                &raw mut needed,
            )
        };
        let error = std::io::Error::last_os_error();
        // SAFETY: `token` is the handle opened above, closed once.
        unsafe { CloseHandle(token) };
        if ok == 0 {
            return Err(error);
        }
        Ok(TokenUserSid(buffer))
    }

    fn sid(&self) -> PSID {
        // SAFETY: the buffer holds the TOKEN_USER GetTokenInformation wrote, aligned for it.
        unsafe { self.0.as_ptr().cast::<TOKEN_USER>().read().User.Sid }
    }
}

/// A block Windows allocated with LocalAlloc, freed when dropped.
struct Freed(*mut c_void);

impl Drop for Freed {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a Windows call that allocates with LocalAlloc and is
        // freed here once.
        unsafe { LocalFree(self.0) };
    }
}
