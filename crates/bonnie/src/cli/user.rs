//! bonnie++'s `-u USER[:GROUP]` and `-g GROUP`: the user and group the I/O
//! is done as.
//!
//! As bonnie++ 2.00a does (bon_setugid): a user is a name or a uid; its
//! group is its passwd entry's (for a uid without one, the group
//! `nogroup`) unless GROUP names one; the switch is setgid, then setuid.
//! iomatrix also sets the supplementary groups to the user's own
//! (initgroups; just the group for a bare uid), where bonnie++ keeps
//! root's, so that the I/O is done with the user's rights and no more.
//!
//! When: [`resolve`] checks everything it can before the run (unknown
//! names, a switch only root may make) and [`Switch::apply`] switches once
//! the results database is open and before the working folder is made, so
//! that every file of the run is made by the user. The database stays open
//! through the handle opened as the invoking user (it may live where the
//! user cannot write, e.g. under root's home); nothing else is done with
//! the invoking user's rights after the switch.
//!
//! Differences from bonnie++, on purpose: as root without `-u`, bonnie++
//! refuses to run; iomatrix runs as root (it has no reason to refuse, and
//! its runs as root are what they were). A switch that changes nothing
//! (`-u root` as root, your own user) is not made at all.

use iomatrix_core::UsageError;
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A switch of user and group to make before the run's first file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// The user's name when it has a passwd entry (for initgroups and messages).
    name: Option<String>,
    /// The `-d` folder, checked after the switch.
    folder: PathBuf,
    /// `-q`: no "doing the I/O as" line.
    quiet: bool,
}

/// Resolves `-u`/`-g` against this process's user. None: nothing to switch
/// (neither given, or they name the current user and group). Refused with
/// bonnie++'s reasons: an unknown user or group, or a switch by a user who
/// is not root (bonnie++: "Can't set gid to G."), and what bonnie++ has no
/// equivalent of: a switch under mpirun or on a server target.
pub fn resolve(
    user: Option<&str>,
    group: Option<&str>,
    folder: &Path,
    on_server: bool,
    under_mpi: bool,
    quiet: bool,
) -> Result<Option<Switch>, UsageError> {
    if user.is_none() && group.is_none() {
        return Ok(None);
    }
    // SAFETY: these calls take no arguments and cannot fail.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let (uid, mut gid, name) = match user {
        None => (euid, egid, None),
        Some(u) => match u.parse::<u32>() {
            Ok(uid) => match passwd_by_uid(uid) {
                Some((name, gid)) => (uid, gid, Some(name)),
                None => {
                    let gid = group_by_name("nogroup").ok_or_else(|| {
                        UsageError::new(format!(
                            "bonnie: -u {u}: uid {u} has no passwd entry and there is no group 'nogroup' to give it; \
                             name its group too: -u {u}:GID"
                        ))
                    })?;
                    (uid, gid, None)
                }
            },
            Err(_) => match passwd_by_name(u) {
                Some((uid, gid)) => (uid, gid, Some(u.to_string())),
                None => {
                    return Err(UsageError::new(format!(
                        "bonnie: -u {u}: no such user (bonnie++ says \"Can't find user {u}\"); give a user name or a \
                         uid"
                    )))
                }
            },
        },
    };
    if let Some(g) = group {
        gid = match g.parse::<u32>() {
            Ok(gid) => gid,
            Err(_) => group_by_name(g).ok_or_else(|| {
                UsageError::new(format!(
                    "bonnie: -g {g}: no such group (bonnie++ says \"Can't find group {g}\"); give a group name or a gid"
                ))
            })?,
        };
    }
    if uid == euid && gid == egid {
        return Ok(None); // the current user and group: nothing to do
    }
    let asked = describe(uid, gid, name.as_deref());
    if euid != 0 {
        return Err(UsageError::new(format!(
            "bonnie: cannot do the I/O as {asked}: only root can switch to another user or group, and this is uid \
             {euid}, gid {egid} (bonnie++ fails the same way: \"Can't set gid to {gid}.\"); leave out -u/-g to do the \
             I/O as yourself, or start iomatrix as root"
        )));
    }
    if under_mpi {
        return Err(UsageError::new(format!(
            "bonnie: -u/-g under mpirun: the other ranks would not switch to {asked}; start mpirun as that user instead"
        )));
    }
    if on_server {
        return Err(UsageError::new(format!(
            "bonnie: -u/-g on a server target: iomatrix's own NFS/SMB client presents its own identity to the server, \
             whatever this process's user; switching to {asked} would change nothing there. Leave out -u/-g"
        )));
    }
    Ok(Some(Switch { uid, gid, name, folder: folder.to_path_buf(), quiet }))
}

impl Switch {
    /// Switches groups, group and user (in that order: after setuid the
    /// groups cannot change), then checks that the user can make files in
    /// the folder. Past this point the process is the user for good.
    pub fn apply(&self) -> anyhow::Result<()> {
        let who = describe(self.uid, self.gid, self.name.as_deref());
        let cname = self.name.as_deref().and_then(|n| CString::new(n).ok());
        // SAFETY: plain system calls on values we own; initgroups reads a valid C string.
        let groups = unsafe {
            match &cname {
                Some(n) => libc::initgroups(n.as_ptr(), self.gid as libc::gid_t),
                None => libc::setgroups(1, &self.gid),
            }
        };
        if groups != 0 {
            anyhow::bail!("cannot set the supplementary groups of {who}: {}", std::io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::setgid(self.gid) } != 0 {
            anyhow::bail!("cannot switch to gid {}: {}", self.gid, std::io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::setuid(self.uid) } != 0 {
            anyhow::bail!("cannot switch to uid {}: {}", self.uid, std::io::Error::last_os_error());
        }
        // SAFETY: as above.
        let (ruid, euid, rgid) = unsafe { (libc::getuid(), libc::geteuid(), libc::getgid()) };
        if (ruid, euid, rgid) != (self.uid, self.uid, self.gid) {
            anyhow::bail!("switching to {who} left uid {ruid} (effective {euid}), gid {rgid}");
        }
        self.check_folder(&who)?;
        if !self.quiet {
            eprintln!("iomatrix: doing the I/O as {who} (the results database was opened before the switch)");
        }
        Ok(())
    }

    /// The user must be able to make (and remove) files in the folder, as
    /// bonnie++ needs; said before the run starts rather than as a failed
    /// create.
    fn check_folder(&self, who: &str) -> Result<(), UsageError> {
        let path = CString::new(self.folder.as_os_str().as_bytes())
            .map_err(|_| UsageError::new(format!("bonnie: -d {}: a NUL in the path", self.folder.display())))?;
        // SAFETY: a valid C string; access(2) only reads it. After setuid the real ids are the user's.
        if unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
            return Ok(());
        }
        let why = std::io::Error::last_os_error();
        let owner = match std::fs::metadata(&self.folder) {
            Ok(m) => format!(" (owned by uid {}, gid {}, mode {:o})", m.uid(), m.gid(), m.mode() & 0o7777),
            Err(_) => String::new(),
        };
        Err(UsageError::new(format!(
            "bonnie: -u: {who} cannot make files in {}{owner}: {why}; give a folder the user may write in (e.g. one \
             it owns: chown {}:{} FOLDER)",
            self.folder.display(),
            self.uid,
            self.gid
        )))
    }
}

fn describe(uid: u32, gid: u32, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("user {n} (uid {uid}, gid {gid})"),
        None => format!("uid {uid}, gid {gid}"),
    }
}

/// Room for one passwd or group entry's strings.
const ENTRY_BUF: usize = 16 * 1024;

fn passwd_by_name(name: &str) -> Option<(u32, u32)> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; ENTRY_BUF];
    // SAFETY: an all-zero passwd is a valid value of this plain C struct.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to memory we own, of the sizes given.
    let rc = unsafe { libc::getpwnam_r(cname.as_ptr(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) };
    (rc == 0 && !found.is_null()).then_some((pw.pw_uid, pw.pw_gid))
}

fn passwd_by_uid(uid: u32) -> Option<(String, u32)> {
    let mut buf = vec![0 as libc::c_char; ENTRY_BUF];
    // SAFETY: as in passwd_by_name.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: as in passwd_by_name.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || pw.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r filled pw_name with a NUL-terminated string inside buf.
    let name = unsafe { CStr::from_ptr(pw.pw_name) }.to_string_lossy().into_owned();
    Some((name, pw.pw_gid))
}

fn group_by_name(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; ENTRY_BUF];
    // SAFETY: an all-zero group is a valid value of this plain C struct.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is to memory we own, of the sizes given.
    let rc = unsafe { libc::getgrnam_r(cname.as_ptr(), &mut gr, buf.as_mut_ptr(), buf.len(), &mut found) };
    (rc == 0 && !found.is_null()).then_some(gr.gr_gid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_switch_for_no_flags_or_the_current_user() {
        let here = Path::new("/tmp");
        assert_eq!(resolve(None, None, here, false, false, false).unwrap(), None);
        // SAFETY: no arguments.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let me = uid.to_string();
        assert_eq!(resolve(Some(&me), Some(&gid.to_string()), here, false, false, false).unwrap(), None);
        if uid == 0 {
            assert_eq!(resolve(Some("root"), None, here, false, false, false).unwrap(), None);
            assert_eq!(resolve(Some("0"), None, here, false, false, false).unwrap(), None);
        }
    }

    #[test]
    fn unknown_names_and_impossible_switches_are_refused() {
        let here = Path::new("/tmp");
        let e = resolve(Some("no-such-user-here"), None, here, false, false, false).unwrap_err();
        assert!(e.to_string().contains("no such user"), "{e}");
        let e = resolve(None, Some("no-such-group-here"), here, false, false, false).unwrap_err();
        assert!(e.to_string().contains("no such group"), "{e}");
        // SAFETY: no arguments.
        let uid = unsafe { libc::geteuid() };
        let other = if uid == 0 { "65534" } else { "0" };
        let e = resolve(Some(other), None, here, true, false, false).unwrap_err().to_string();
        if uid == 0 {
            assert!(e.contains("server target"), "{e}");
            let e = resolve(Some(other), None, here, false, true, false).unwrap_err().to_string();
            assert!(e.contains("mpirun"), "{e}");
            let s = resolve(Some(other), None, here, false, false, false).unwrap().unwrap();
            assert_eq!(s.uid, 65534);
        } else {
            assert!(e.contains("only root can switch"), "{e}");
        }
    }
}
