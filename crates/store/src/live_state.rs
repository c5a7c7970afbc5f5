//! A running run's live state, published beside the database for other processes (`iomatrix
//! watch`, the viewer's live page): `<db file>.live/<run id>.json`, one small JSON file the
//! running process replaces (a temporary file renamed over it) at most once a second and at each
//! cell's end, and removes when the run ends.
//!
//! The database holds what a run has measured; this file holds only what it is doing now (the
//! running cell, the live line the terminal shows): nothing in it is a figure any report uses.
//! [`LiveState::read`] trusts nothing in the folder: a file that is too big, not JSON, not a
//! regular file (a symlink, a FIFO), another run's, or left by a process that is gone is no live
//! state; it never writes and never panics.

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A live state file larger than this is not one (a file of a few hundred bytes is written).
pub const LIVE_STATE_MAX_BYTES: u64 = 64 * 1024;

/// A live state older than this, whose process is gone (or on another host), is a dead run's.
pub const LIVE_STATE_STALE_AFTER: Duration = Duration::from_secs(10);

/// What a running run is doing now, as its process last wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveState {
    /// The run's id in the database.
    pub run_id: i64,
    /// The process running it, on `host`.
    pub pid: u32,
    /// The host that process runs on.
    pub host: String,
    /// When it was written: milliseconds since the Unix epoch.
    pub written_ms: u64,
    /// Cells stored so far.
    pub cells_done: usize,
    /// The plan's cells in all (more when noisy cells are measured again).
    pub cells_total: usize,
    /// The running cell's index among the run's cells, when one runs.
    pub cell_index: Option<usize>,
    /// The running cell's name, when the suite names it on its live line.
    pub cell_name: Option<String>,
    /// The live line as the terminal shows it (empty where the suite shows no live figures).
    pub line: String,
    /// Bytes/s of the last sample of this process's clients (under MPI: rank 0's; the line sums
    /// the ranks).
    pub bytes_per_sec: f64,
    /// Operations/s of the same sample.
    pub ops_per_sec: f64,
    /// Seconds left, once the run has shown a rate for every kind of cell it has left.
    pub eta_seconds: Option<f64>,
}

/// The folder of live states beside the database `db`: `<db file>.live`.
pub fn live_folder(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".live");
    PathBuf::from(name)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl LiveState {
    /// The file run `run_id`'s state is written to.
    pub fn path(db: &Path, run_id: i64) -> PathBuf {
        live_folder(db).join(format!("{run_id}.json"))
    }

    /// Writes the state atomically: a temporary file beside it, renamed over it, so a reader sees
    /// the last whole state or the one before, never half of one. Makes the folder if need be.
    pub fn write(&self, db: &Path) -> std::io::Result<()> {
        match self.write_once(db) {
            // Another run that ended removed the folder, empty, between our making it and writing.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.write_once(db),
            done => done,
        }
    }

    fn write_once(&self, db: &Path) -> std::io::Result<()> {
        let folder = live_folder(db);
        std::fs::create_dir_all(&folder)?;
        let text = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let temp = folder.join(format!(".{}.{}.tmp", self.run_id, self.pid));
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, Self::path(db, self.run_id)).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }

    /// Removes run `run_id`'s state (nothing to remove is no error), and the folder with it when
    /// no other run's is there: a database's folder keeps no side folder once its runs ended.
    pub fn remove(db: &Path, run_id: i64) -> std::io::Result<()> {
        match std::fs::remove_file(Self::path(db, run_id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => {
                // Another run's state (or a writer's temporary file) there keeps it: rmdir refuses.
                let _ = std::fs::remove_dir(live_folder(db));
                Ok(())
            }
        }
    }

    /// Run `run_id`'s live state, if its process has published one that can be trusted; None
    /// otherwise (no file, a file over [`LIVE_STATE_MAX_BYTES`], not a regular file, not JSON of
    /// a live state, another run's, or older than [`LIVE_STATE_STALE_AFTER`] with its process gone).
    pub fn read(db: &Path, run_id: i64) -> Option<LiveState> {
        let text = read_bounded(&Self::path(db, run_id))?;
        let state: LiveState = serde_json::from_slice(&text).ok()?;
        (state.run_id == run_id && !state.is_stale(now_ms())).then_some(state)
    }

    /// Older than [`LIVE_STATE_STALE_AFTER`] at `now_ms`, and its process not alive here (a
    /// process on another host sharing the database's folder cannot be asked: age alone decides).
    fn is_stale(&self, now_ms: u64) -> bool {
        let age = Duration::from_millis(now_ms.saturating_sub(self.written_ms));
        age > LIVE_STATE_STALE_AFTER && !(self.host == crate::ProcessId::this_host() && pid_alive(self.pid))
    }
}

/// The bytes of a regular file no larger than [`LIVE_STATE_MAX_BYTES`], opened without following
/// a symlink and without blocking (a FIFO put there in a race); None for anything else.
fn read_bounded(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > LIVE_STATE_MAX_BYTES {
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.file_type().is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(LIVE_STATE_MAX_BYTES + 1).read_to_end(&mut text).ok()?;
    (text.len() as u64 <= LIVE_STATE_MAX_BYTES).then_some(text)
}

/// Whether process `pid` exists on this host (one this user may not signal exists too).
fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks that the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(run_id: i64, written_ms: u64, pid: u32) -> LiveState {
        LiveState {
            run_id,
            pid,
            host: crate::ProcessId::this_host(),
            written_ms,
            cells_done: 2,
            cells_total: 5,
            cell_index: Some(2),
            cell_name: Some("access 8m/4k".into()),
            line: "1,234 IOPS".into(),
            bytes_per_sec: 5e6,
            ops_per_sec: 1234.0,
            eta_seconds: Some(3.5),
        }
    }

    #[test]
    fn a_written_state_reads_back_and_is_gone_once_removed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        let written = state(7, now_ms(), std::process::id());
        written.write(&db).unwrap();
        assert_eq!(LiveState::read(&db, 7), Some(written));
        assert_eq!(LiveState::read(&db, 8), None, "another run's id");
        LiveState::remove(&db, 7).unwrap();
        assert_eq!(LiveState::read(&db, 7), None);
        LiveState::remove(&db, 7).unwrap();
        // No temporary file is left behind, nor the folder.
        assert!(!live_folder(&db).exists());
    }

    #[test]
    fn an_old_state_is_live_only_while_its_process_is() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        let old = now_ms() - 60_000;
        state(1, old, std::process::id()).write(&db).unwrap();
        assert!(LiveState::read(&db, 1).is_some(), "this process is alive: a slow cell, not a dead run");
        // A pid past the kernel's limit (pid_max is at most 2^22) is no process.
        state(1, old, 1 << 23).write(&db).unwrap();
        assert_eq!(LiveState::read(&db, 1), None);
        state(1, now_ms(), 1 << 23).write(&db).unwrap();
        assert!(LiveState::read(&db, 1).is_some(), "written within 10 s: live, whatever the pid");
    }

    #[test]
    fn what_is_not_a_small_regular_file_of_a_live_state_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        std::fs::create_dir(live_folder(&db)).unwrap();
        let path = LiveState::path(&db, 3);
        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(LiveState::read(&db, 3), None);
        let mut big = serde_json::to_vec(&state(3, now_ms(), std::process::id())).unwrap();
        big.resize(LIVE_STATE_MAX_BYTES as usize + 1, b' ');
        std::fs::write(&path, &big).unwrap();
        assert_eq!(LiveState::read(&db, 3), None, "over 64 KiB");
        std::fs::remove_file(&path).unwrap();
        let real = dir.path().join("real.json");
        state(3, now_ms(), std::process::id()).write(&dir.path().join("other")).unwrap();
        std::fs::copy(LiveState::path(&dir.path().join("other"), 3), &real).unwrap();
        std::os::unix::fs::symlink(&real, &path).unwrap();
        assert_eq!(LiveState::read(&db, 3), None, "a symlink, even to a good state");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert_eq!(LiveState::read(&db, 3), None, "a folder");
    }
}
