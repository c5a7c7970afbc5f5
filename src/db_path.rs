//! Where the results database lives unless `--db` / IOMATRIX_DB says.

use std::path::{Path, PathBuf};

pub fn resolve(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path.to_path_buf());
    }
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".local/share")));
    match data_home {
        Some(dir) => Ok(dir.join("iomatrix").join("results.sqlite")),
        None => Err(iomatrix_core::UsageError::new(
            "no place for the results database: neither XDG_DATA_HOME nor HOME is set; give --db PATH",
        )
        .into()),
    }
}
