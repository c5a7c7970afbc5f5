//! The working folder: the only place iomatrix writes on a target. Made
//! fresh under the target, marked so leftovers can be recognised, removed
//! at the end (also after a failure or Ctrl-C) unless the user keeps it.
//!
//! The marker (`.iomatrix-workdir`, JSON) names the process that made the
//! folder (host, pid, start time): a later run or `iomatrix clean` tells a
//! crashed run's leftover from a folder a live run still works in. A folder
//! without a valid marker is never removed, whatever its name.

use iomatrix_core::UsageError;
use iomatrix_store::ProcessId;
use serde::{Deserialize, Serialize};
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
}

const MARKER_SCHEMA: &str = "iomatrix.workdir/1";

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
        }
    }

    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The marker's text, or why it is not one. Markers of iomatrix before
    /// this format ("made by iomatrix V (pid N)") count too: they name no host
    /// or start time, so any process with that pid keeps them.
    pub fn parse(text: &str) -> Result<Marker, String> {
        if let Some(rest) = text.strip_prefix("made by iomatrix ") {
            let pid = rest
                .split("(pid ")
                .nth(1)
                .and_then(|p| p.trim_end().strip_suffix(')'))
                .and_then(|p| p.parse().ok())
                .ok_or("an old-style marker without a pid")?;
            return Ok(Marker {
                schema: MARKER_SCHEMA.into(),
                iomatrix_version: rest.split(' ').next().unwrap_or("?").into(),
                host: ProcessId::this_host(),
                pid,
                pid_start: None,
                run_id: None,
                created_at: "?".into(),
                keep: false,
            });
        }
        let marker: Marker = serde_json::from_str(text).map_err(|e| format!("not an iomatrix marker ({e})"))?;
        if marker.schema != MARKER_SCHEMA {
            return Err(format!("a marker of unknown schema {:?}", marker.schema));
        }
        Ok(marker)
    }

    /// Whether the process that made the folder may still work in it.
    pub fn maker(&self) -> Maker {
        if self.host != ProcessId::this_host() {
            Maker::OtherHost
        } else if ProcessId::is_alive(self.pid, self.pid_start) {
            Maker::Running
        } else if self.keep {
            Maker::Kept
        } else {
            Maker::Gone
        }
    }

    /// "pid 123 on host, run #4, made 2026-…" for listings.
    pub fn describe(&self) -> String {
        let run = self.run_id.map(|id| format!(", run #{id}")).unwrap_or_default();
        format!(
            "pid {} on {}{run}, made {} by iomatrix {}",
            self.pid, self.host, self.created_at, self.iomatrix_version
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
    /// folder (not a symlink), and its marker's text.
    pub fn judge(name: &str, is_folder: bool, marker_text: std::io::Result<String>) -> Found {
        let unmarked = |why: String| Found::Unmarked { name: name.to_string(), why };
        if !is_folder {
            return unmarked("not a folder (a symlink or a file); not followed".into());
        }
        match marker_text {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => unmarked(format!("no {MARKER} marker")),
            Err(e) => unmarked(format!("its marker cannot be read: {e}")),
            Ok(text) => match Marker::parse(&text) {
                Ok(marker) => Found::Marked { name: name.to_string(), maker: marker.maker(), marker },
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
        found.push(Found::judge(&name, is_folder, read_marker(&entry.path())));
    }
    found.sort_by(|a, b| found_name(a).cmp(found_name(b)));
    Ok(found)
}

fn found_name(found: &Found) -> &str {
    match found {
        Found::Marked { name, .. } | Found::Unmarked { name, .. } => name,
    }
}

fn read_marker(folder: &Path) -> std::io::Result<String> {
    let path = folder.join(MARKER);
    let meta = std::fs::symlink_metadata(&path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    // A marker is a few hundred bytes; a large file of that name is not one.
    if meta.len() > 64 * 1024 {
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
        let dir = WorkDir { path, keep, marker: Marker::for_this_process(keep) };
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

    fn write_marker(&self) -> std::io::Result<()> {
        // Written aside and renamed over: a kill at any moment leaves the old
        // marker or the new one, never an empty or half-written one.
        let aside = self.path.join(format!("{MARKER}.new"));
        std::fs::write(&aside, self.marker.to_text())?;
        std::fs::rename(aside, self.path.join(MARKER))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kept(&self) -> bool {
        self.keep
    }
}

/// Removes a marked folder with its marker last, so a process killed on the
/// way leaves a folder `clean` still knows as a working folder.
fn remove_marked(path: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        if entry.file_name() == MARKER {
            continue;
        }
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    std::fs::remove_file(path.join(MARKER))?;
    std::fs::remove_dir(path)
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
            if let Err(e) = remove_marked(&self.path) {
                eprintln!(
                    "iomatrix: warning: could not remove the working folder {}: {e}; once the target is writable \
                     again, `iomatrix clean {}` removes it",
                    self.path.display(),
                    self.path.parent().unwrap_or(Path::new(".")).display()
                );
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
        assert_eq!(back.maker(), Maker::Running, "this very process made it");
        let old = Marker::parse("made by iomatrix 0.1.0 (pid 4194304)\n").unwrap();
        assert_eq!(old.pid, 4194304);
        assert!(Marker::parse("{\"schema\":\"other\"}").is_err());
        assert!(Marker::parse("hello").is_err());
    }
}
