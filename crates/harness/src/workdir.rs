//! The working folder: the only place iomatrix writes on a target. Made
//! fresh under the target, marked so leftovers can be recognised, removed
//! at the end (also after a failure or Ctrl-C) unless the user keeps it.
//!
//! The marker (`.iomatrix-workdir`, JSON) names the process that made the
//! folder (host, pid, start time, boot, PID namespace), and the run holds a
//! lock (flock) on it for its whole life: a later run or `iomatrix clean`
//! tells a crashed run's leftover from a folder a live run still works in,
//! also when that run is in another PID namespace (where its pid means
//! another process here). A folder is a leftover only when its maker is
//! proven gone ([`Marker::maker`]). A folder without a valid marker is never
//! removed, whatever its name.
//!
//! Removal goes through the one remover (`iomatrix_guard::remove_tree`):
//! relative to directory handles, never across a mount point (a bind mount
//! inside the folder is left, with what is above it, and named).

use iomatrix_core::UsageError;
use iomatrix_guard::LockState;
use iomatrix_store::ProcessId;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Name of the marker file inside every working folder.
pub const MARKER: &str = ".iomatrix-workdir";
/// Every working folder's name starts so (`iomatrix-PID-MS`).
pub const PREFIX: &str = "iomatrix-";

/// What the marker says of the folder's maker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Marker {
    /// Always "iomatrix.workdir/1": a file that merely has the name is not a marker.
    pub schema: String,
    pub iomatrix_version: String,
    pub host: String,
    pub pid: i64,
    /// Clock ticks since boot when the process started (None: unknown).
    pub pid_start: Option<i64>,
    /// The run in the results database, once it began.
    pub run_id: Option<i64>,
    pub created_at: String,
    /// Made with --keep: the user wants it, so it is no crash's leftover.
    #[serde(default)]
    pub keep: bool,
    /// The maker's boot (the kernel's boot_id): a process of another boot has ended. None in
    /// markers of iomatrix before it was recorded.
    #[serde(default)]
    pub boot_id: Option<String>,
    /// The maker's PID namespace (the inode of its /proc/self/ns/pid): its pid names that
    /// process only within the same namespace. None in markers of iomatrix before it was recorded.
    #[serde(default)]
    pub pid_namespace: Option<u64>,
    /// The maker holds a lock (flock) on this marker for its whole life: a free lock means it
    /// ended. False where the file system gives no locks (or in older markers).
    #[serde(default)]
    pub locked: bool,
}

const MARKER_SCHEMA: &str = "iomatrix.workdir/1";

/// Why a working folder's marker is not one iomatrix can read: said after "its marker is".
#[derive(Debug, thiserror::Error)]
pub enum NotAMarker {
    #[error("an old-style marker without a pid")]
    OldWithoutPid,
    #[error("not an iomatrix marker ({0})")]
    Unreadable(serde_json::Error),
    #[error("a marker of unknown schema {0:?}")]
    UnknownSchema(String),
}

impl Marker {
    /// A marker for a folder this process makes now.
    pub fn for_this_process(keep: bool) -> Marker {
        let me = ProcessId::current();
        Marker {
            schema: MARKER_SCHEMA.into(),
            iomatrix_version: env!("CARGO_PKG_VERSION").into(),
            host: me.host,
            pid: me.pid,
            pid_start: me.start_ticks,
            run_id: None,
            created_at: iomatrix_core::format_utc(now_ms()),
            keep,
            boot_id: iomatrix_guard::boot_id(),
            pid_namespace: iomatrix_guard::pid_namespace(),
            locked: false,
        }
    }

    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The marker's text, or why it is not one. Markers of iomatrix before
    /// this format ("made by iomatrix V (pid N)") count too: they name no host
    /// or start time, so any process with that pid keeps them.
    pub fn parse(text: &str) -> Result<Marker, NotAMarker> {
        if let Some(rest) = text.strip_prefix("made by iomatrix ") {
            let pid = rest
                .split("(pid ")
                .nth(1)
                .and_then(|p| p.trim_end().strip_suffix(')'))
                .and_then(|p| p.parse().ok())
                .ok_or(NotAMarker::OldWithoutPid)?;
            return Ok(Marker {
                schema: MARKER_SCHEMA.into(),
                iomatrix_version: rest.split(' ').next().unwrap_or("?").into(),
                host: ProcessId::this_host(),
                pid,
                pid_start: None,
                run_id: None,
                created_at: "?".into(),
                keep: false,
                boot_id: None,
                pid_namespace: None,
                locked: false,
            });
        }
        let marker: Marker = serde_json::from_str(text).map_err(NotAMarker::Unreadable)?;
        if marker.schema != MARKER_SCHEMA {
            return Err(NotAMarker::UnknownSchema(marker.schema));
        }
        Ok(marker)
    }

    /// Whether the process that made the folder may still work in it, from its marker and
    /// `lock`, the state of the lock on it (as [`iomatrix_guard::live::probe`] finds it).
    ///
    /// Running: the lock is held (whatever the host or namespace), or the pid is alive in this
    /// boot and PID namespace. Gone, only when proven: the marker is of an earlier boot, or its
    /// maker held the lock and it is free, or (no lock) the pid is dead in this boot and PID
    /// namespace. Anything else cannot be told from here: made on another host (whose locks may
    /// not reach here), or with no lock in another (or an unrecorded) PID namespace.
    pub fn maker(&self, lock: &LockState) -> Maker {
        if *lock == LockState::Held {
            return Maker::Running;
        }
        if self.host != ProcessId::this_host() {
            return Maker::OtherHost;
        }
        let earlier_boot =
            matches!((&self.boot_id, iomatrix_guard::boot_id()), (Some(then), Some(now)) if *then != now);
        if !earlier_boot {
            let same_namespace = self.pid_namespace.is_some() && self.pid_namespace == iomatrix_guard::pid_namespace();
            let alive = same_namespace.then(|| ProcessId::is_alive(self.pid, self.pid_start));
            let lock_released = self.locked && *lock == LockState::Free;
            match (alive, lock_released) {
                (Some(true), _) => return Maker::Running,
                (_, true) | (Some(false), false) => {}
                (None, false) => return Maker::Unproven,
            }
        }
        if self.keep {
            Maker::Kept
        } else {
            Maker::Gone
        }
    }

    /// Why [`Marker::maker`] could not tell whether the maker still runs.
    pub fn unproven_why(&self) -> &'static str {
        if self.pid_namespace.is_none() {
            "made by an iomatrix that recorded neither its PID namespace nor a lock"
        } else {
            "made in another PID namespace (where pid numbers name other processes) without a lock on its marker"
        }
    }

    /// "pid 123 on host, run #4, made 2026-…" for listings.
    pub fn describe(&self) -> String {
        let run = self.run_id.map(|id| format!(", run #{id}")).unwrap_or_default();
        let here = self.host == ProcessId::this_host();
        let elsewhere = here && self.pid_namespace.is_some() && self.pid_namespace != iomatrix_guard::pid_namespace();
        format!(
            "pid {}{} on {}{run}, made {} by iomatrix {}",
            self.pid,
            if elsewhere { " of another PID namespace" } else { "" },
            self.host,
            self.created_at,
            self.iomatrix_version
        )
    }
}

/// The state of a marked folder's maker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maker {
    /// Still running on this host: the folder is in use.
    Running,
    /// Gone (crashed or killed): the folder is a leftover.
    Gone,
    /// Gone, but the folder was made with --keep: the user wants it.
    Kept,
    /// Made on another host (a shared file system): whether it runs cannot be told from here.
    OtherHost,
    /// Made here, but neither its lock nor its pid can prove whether it still runs
    /// ([`Marker::unproven_why`]).
    Unproven,
}

/// One `iomatrix-*` entry directly under a target, as a survey finds it.
#[derive(Debug)]
pub enum Found {
    /// A folder with a valid marker.
    Marked { name: String, marker: Marker, maker: Maker },
    /// Named like a working folder but not provably one: never removed.
    Unmarked { name: String, why: String },
}

impl Found {
    /// Judges one entry from what could be read of it: whether it is a
    /// folder (not a symlink), its marker's text, and the lock on its marker.
    pub fn judge(name: &str, is_folder: bool, marker_text: std::io::Result<String>, lock: &LockState) -> Found {
        let unmarked = |why: String| Found::Unmarked { name: name.to_string(), why };
        if !is_folder {
            return unmarked("not a folder (a symlink or a file); not followed".into());
        }
        match marker_text {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => unmarked(format!("no {MARKER} marker")),
            Err(e) => unmarked(format!("its marker cannot be read: {e}")),
            Ok(text) => match Marker::parse(&text) {
                Ok(marker) => Found::Marked { name: name.to_string(), maker: marker.maker(lock), marker },
                Err(why) => unmarked(format!("its {MARKER} is {why}")),
            },
        }
    }

    pub fn is_leftover(&self) -> bool {
        matches!(self, Found::Marked { maker: Maker::Gone, .. })
    }
}

/// The `iomatrix-*` entries directly under a local folder, in name order.
/// Nothing is followed: a symlink named like a working folder is reported
/// as such, and a marker must be a regular file.
pub fn survey(target: &Path) -> std::io::Result<Vec<Found>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(target)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(PREFIX) {
            continue;
        }
        let is_folder = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        let lock = iomatrix_guard::live::probe(&entry.path().join(MARKER));
        found.push(Found::judge(&name, is_folder, read_marker(&entry.path()), &lock));
    }
    found.sort_by(|a, b| found_name(a).cmp(found_name(b)));
    Ok(found)
}

fn found_name(found: &Found) -> &str {
    match found {
        Found::Marked { name, .. } | Found::Unmarked { name, .. } => name,
    }
}

/// The largest file read as a marker, here or on a server: a marker is a few hundred bytes.
pub const MARKER_MAX_BYTES: u64 = 64 * 1024;

fn read_marker(folder: &Path) -> std::io::Result<String> {
    let path = folder.join(MARKER);
    let meta = std::fs::symlink_metadata(&path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    // A marker is a few hundred bytes; a large file of that name is not one.
    if meta.len() > MARKER_MAX_BYTES {
        return Err(std::io::Error::other("it is too large to be a marker"));
    }
    std::fs::read_to_string(path)
}

/// The line a run prints when crashed runs left working folders in its target.
pub fn leftover_note(found: &[Found], target: &str) -> Option<String> {
    let n = found.iter().filter(|f| f.is_leftover()).count();
    (n > 0).then(|| format!("iomatrix: {n} leftover working folders from crashed runs: iomatrix clean {target}"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A fresh working folder's name, `iomatrix-PID-MS`.
pub fn fresh_name() -> String {
    format!("{PREFIX}{}-{}", std::process::id(), now_ms())
}

pub struct WorkDir {
    path: PathBuf,
    keep: bool,
    marker: Marker,
    /// The marker, open and locked for the run's whole life (where the file system gives locks).
    lock: Option<File>,
    /// Whether a lock was tried (none is tried again where the first could not be placed).
    lock_tried: bool,
}

impl WorkDir {
    pub fn create(target: &Path, keep: bool) -> anyhow::Result<WorkDir> {
        let path = target.join(fresh_name());
        // create_dir, not create_dir_all: never adopt a folder that already exists.
        std::fs::create_dir(&path).map_err(|e| {
            UsageError::new(format!(
                "cannot create a working folder in {}: {e}; choose a target you can write to",
                target.display()
            ))
        })?;
        let mut dir = WorkDir { path, keep, marker: Marker::for_this_process(keep), lock: None, lock_tried: false };
        dir.write_marker().map_err(|e| {
            UsageError::new(format!("cannot write in {}: {e}; choose a target you can write to", target.display()))
        })?;
        Ok(dir)
    }

    /// Names the run in the marker, once the database gave it an id.
    pub fn record_run(&mut self, run_id: i64) -> std::io::Result<()> {
        self.marker.run_id = Some(run_id);
        self.write_marker()
    }

    fn write_marker(&mut self) -> std::io::Result<()> {
        // A lock is tried the first time, and again while one is held; where none could be
        // had, the marker is written without.
        let lockable = !self.lock_tried || self.lock.is_some();
        self.lock_tried = true;
        // Some file systems (SMB through FUSE) refuse to rename a file that is open: there the
        // marker goes in place closed, without a lock (its pid, boot and namespace decide).
        if lockable && self.place_marker(true).is_ok() {
            return Ok(());
        }
        self.lock = None;
        self.place_marker(false)
    }

    /// Writes the marker aside and renames it over the old one: a kill at any moment leaves
    /// the old marker or the new one, never an empty or half-written one. With `lock`, the
    /// new one is locked before it is put in place, and the old one's lock held until then:
    /// the marker in place is always locked. The lock is held through a read-only descriptor
    /// where the file system allows (a file open for writing would keep the target from being
    /// remounted read-only), else through the writable one (NFS, whose locks need it).
    fn place_marker(&mut self, lock: bool) -> std::io::Result<()> {
        let aside = self.path.join(format!("{MARKER}.new"));
        match std::fs::remove_file(&aside) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
        let mut file = File::options().read(true).write(true).create_new(true).custom_flags(nofollow).open(&aside)?;
        let mut held = None;
        if lock {
            let reader = File::options().read(true).custom_flags(nofollow).open(&aside)?;
            if iomatrix_guard::live::lock_exclusive(&reader).unwrap_or(false) {
                held = Some(reader);
            } else if iomatrix_guard::live::lock_exclusive(&file).unwrap_or(false) {
                held = Some(file.try_clone()?);
            }
        }
        self.marker.locked = held.is_some();
        let written = file.write_all(self.marker.to_text().as_bytes());
        drop(file);
        let placed = written.and_then(|()| std::fs::rename(&aside, self.path.join(MARKER)));
        if let Err(e) = placed {
            drop(held);
            let _ = std::fs::remove_file(&aside);
            return Err(e);
        }
        if held.is_some() {
            self.lock = held;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kept(&self) -> bool {
        self.keep
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        // Only a folder that still carries our marker is ours to remove.
        if !self.path.exists() {
            eprintln!(
                "iomatrix: warning: the working folder {} is gone (the target was removed or unmounted during the \
                 run); nothing to remove",
                self.path.display()
            );
        } else if !self.path.join(MARKER).is_file() {
            eprintln!(
                "iomatrix: warning: the working folder {} lost its {MARKER} marker during the run; left as it is, \
                 remove it by hand",
                self.path.display()
            );
        } else {
            let target = self.path.parent().unwrap_or(Path::new("."));
            let name = self.path.file_name().unwrap_or_default();
            // The marker goes last: a folder only partly removed is still known as a working folder.
            match iomatrix_guard::remove_tree(target, name, Some(std::ffi::OsStr::new(MARKER))) {
                Ok(removal) if removal.complete() => {}
                Ok(removal) => eprintln!(
                    "iomatrix: warning: could not remove the working folder {} (left in place, with its marker): {}; \
                     once that is dealt with (a mount point unmounted, the target writable again), `iomatrix clean \
                     {}` removes the rest",
                    self.path.display(),
                    removal.describe_left(),
                    target.display()
                ),
                Err(e) => eprintln!(
                    "iomatrix: warning: could not remove the working folder {}: {e}; once the target is writable \
                     again, `iomatrix clean {}` removes it",
                    self.path.display(),
                    target.display()
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back_and_an_old_style_one_is_understood() {
        let marker = Marker::for_this_process(false);
        let back = Marker::parse(&marker.to_text()).unwrap();
        assert_eq!((back.pid, back.pid_start, back.host.clone()), (marker.pid, marker.pid_start, marker.host));
        assert_eq!(back.maker(&LockState::Free), Maker::Running, "this very process made it");
        assert_eq!((back.boot_id.clone(), back.pid_namespace), (marker.boot_id, marker.pid_namespace));
        let old = Marker::parse("made by iomatrix 0.1.0 (pid 4194304)\n").unwrap();
        assert_eq!(old.pid, 4194304);
        assert!(Marker::parse("{\"schema\":\"other\"}").is_err());
        assert!(Marker::parse("hello").is_err());
    }

    #[test]
    fn a_maker_is_gone_only_when_proven() {
        let mut m = Marker::for_this_process(false);
        m.pid = 4194304; // above Linux's largest pid: no process has it
        m.locked = true;
        assert_eq!(m.maker(&LockState::Held), Maker::Running, "a held lock is proof of life anywhere");
        assert_eq!(m.maker(&LockState::Free), Maker::Gone);
        // The pid of another PID namespace says nothing here; the lock decides.
        m.pid = i64::from(std::process::id());
        m.pid_start = None;
        m.pid_namespace = Some(1);
        assert_eq!(m.maker(&LockState::Free), Maker::Gone, "released lock");
        assert_eq!(m.maker(&LockState::Held), Maker::Running);
        m.locked = false;
        assert_eq!(m.maker(&LockState::Free), Maker::Unproven, "no lock, a pid of another namespace");
        // An earlier boot: whatever the pid, its maker has ended.
        m.boot_id = Some("an-earlier-boot".into());
        assert_eq!(m.maker(&LockState::Free), Maker::Gone);
        m.keep = true;
        assert_eq!(m.maker(&LockState::Free), Maker::Kept);
        // An old marker (no namespace, no boot, no lock): not provable.
        let old = Marker::parse("made by iomatrix 0.1.0 (pid 4194304)\n").unwrap();
        assert_eq!(old.maker(&LockState::Free), Maker::Unproven);
        let mut elsewhere = Marker::for_this_process(false);
        elsewhere.host = "another-host".into();
        assert_eq!(elsewhere.maker(&LockState::Free), Maker::OtherHost);
        assert_eq!(elsewhere.maker(&LockState::Held), Maker::Running);
    }
}
