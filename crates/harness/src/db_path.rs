//! Where the results database lives unless `--db` / IOMATRIX_DB says. The
//! default folder is made on first use; a folder in a path the user gave is
//! never made (a typo would otherwise scatter databases around).

use iomatrix_core::UsageError;
use std::path::{Path, PathBuf};

pub fn resolve(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = given {
        check_given(path)?;
        return Ok(path.to_path_buf());
    }
    let Some(dir) = default_folder() else {
        return Err(UsageError::new(
            "no place for the results database: neither XDG_DATA_HOME nor HOME is set; give --db PATH",
        )
        .into());
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        UsageError::new(format!(
            "cannot make the results database's default folder {}: {e}; give --db PATH (or IOMATRIX_DB)",
            dir.display()
        ))
    })?;
    Ok(dir.join("results.sqlite"))
}

/// The default database's folder, from XDG_DATA_HOME or HOME; not made here.
fn default_folder() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".local/share")))
        .map(|d| d.join("iomatrix"))
}

/// Whether a command typed after a run needs `--db` to find `db`: not where a command without
/// it finds it anyway (the default database, or the one IOMATRIX_DB names).
pub fn needs_flag_to_find(db: &Path) -> bool {
    let default = default_folder().map(|d| d.join("results.sqlite"));
    let from_env = std::env::var_os("IOMATRIX_DB").filter(|v| !v.is_empty()).map(PathBuf::from);
    let found = match from_env {
        Some(env) => env == db,
        None => default.as_deref() == Some(db),
    };
    !found
}

/// A database path the user named: its folder exists and it is not itself a folder.
fn check_given(path: &Path) -> Result<(), UsageError> {
    if path.as_os_str().is_empty() {
        return Err(UsageError::new("--db (or IOMATRIX_DB) is empty: give the results database's file"));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(UsageError::new(format!(
                "--db {} (or IOMATRIX_DB) is a folder: give the results database's file, e.g. {}",
                path.display(),
                path.join("results.sqlite").display()
            )))
        }
        // SQLite would read a device or a FIFO as a database and make its side files beside it
        // (/dev/zero-journal).
        Ok(m) if !m.is_file() => {
            return Err(UsageError::new(format!(
                "--db {} (or IOMATRIX_DB) is not a regular file (a device, a FIFO or a socket): give the results \
                 database's file",
                path.display()
            )))
        }
        _ => {}
    }
    let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    match std::fs::metadata(folder) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(UsageError::new(format!(
            "--db {} (or IOMATRIX_DB): {} is not a folder",
            path.display(),
            folder.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(UsageError::new(format!(
            "--db {} (or IOMATRIX_DB): its folder {} does not exist; iomatrix makes no folder for a database you \
             name: make it first (mkdir -p {}) or name a file in an existing folder",
            path.display(),
            folder.display(),
            folder.display()
        ))),
        Err(e) => Err(UsageError::new(format!(
            "--db {} (or IOMATRIX_DB): cannot look at its folder {}: {e}",
            path.display(),
            folder.display()
        ))),
    }
}
