//! The working folder: the only place iomatrix writes on a target. Made
//! fresh under the target, marked so leftovers can be recognised, removed
//! at the end (also after a failure or Ctrl-C) unless the user keeps it.

use iomatrix_core::UsageError;
use std::path::{Path, PathBuf};

/// Name of the marker file inside every working folder.
pub const MARKER: &str = ".iomatrix-workdir";

pub struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    pub fn create(target: &Path, keep: bool) -> anyhow::Result<WorkDir> {
        let stamp =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        let path = target.join(format!("iomatrix-{}-{stamp}", std::process::id()));
        // create_dir, not create_dir_all: never adopt a folder that already exists.
        std::fs::create_dir(&path).map_err(|e| {
            UsageError::new(format!(
                "cannot create a working folder in {}: {e}; choose a target you can write to",
                target.display()
            ))
        })?;
        let dir = WorkDir { path, keep };
        std::fs::write(
            dir.path.join(MARKER),
            format!("made by iomatrix {} (pid {})\n", env!("CARGO_PKG_VERSION"), std::process::id()),
        )
        .map_err(|e| {
            UsageError::new(format!("cannot write in {}: {e}; choose a target you can write to", target.display()))
        })?;
        Ok(dir)
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
        if self.path.join(MARKER).is_file() {
            if let Err(e) = std::fs::remove_dir_all(&self.path) {
                eprintln!("iomatrix: warning: could not remove the working folder {}: {e}", self.path.display());
            }
        }
    }
}
