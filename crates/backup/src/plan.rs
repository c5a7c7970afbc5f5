//! What a backup walk does, resolved.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Largest read size: one buffer of it is allocated.
pub const MAX_READ_SIZE: u64 = 1 << 30;

/// A backup walk: read every regular file of a tree once, as a backup program would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupPlan {
    /// The tree's root (a folder), as given after canonicalisation.
    pub root: PathBuf,
    /// Bytes asked for by each read call.
    pub read_size: u64,
    /// Sync, then drop every file's cached pages, before the walk starts.
    pub cold: bool,
    /// The interval of the walk's figures over time (`--interval`), in ns.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
}

impl BackupPlan {
    /// A cold walk with 1 MiB reads.
    pub fn new(root: PathBuf) -> BackupPlan {
        BackupPlan {
            root,
            read_size: 1 << 20,
            cold: true,
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        }
    }

    /// Refuses a read size of 0 or above [`MAX_READ_SIZE`].
    pub fn validate(&self) -> Result<(), crate::BackupError> {
        if self.read_size == 0 {
            return Err(crate::BackupError("the read size must be at least 1 byte".into()));
        }
        if self.read_size > MAX_READ_SIZE {
            return Err(crate::BackupError(format!("the read size {} is above the largest, 1 GiB", self.read_size)));
        }
        Ok(())
    }

    /// "cold: ..." or "warm: ...", for the results.
    pub fn cache_condition(&self) -> &'static str {
        if self.cold {
            "cold: syncfs, then every file's cached pages dropped (POSIX_FADV_DONTNEED), before the walk starts"
        } else {
            "warm: files read as the page cache finds them"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_sizes_are_checked() {
        let mut p = BackupPlan::new("/x".into());
        assert!(p.validate().is_ok());
        p.read_size = 0;
        assert!(p.validate().unwrap_err().0.contains("at least 1 byte"));
        p.read_size = MAX_READ_SIZE + 1;
        assert!(p.validate().is_err());
        p.read_size = 1;
        assert!(p.validate().is_ok());
    }

    #[test]
    fn the_plan_round_trips_through_json() {
        let p = BackupPlan { read_size: 65536, cold: false, ..BackupPlan::new("/srv/share".into()) };
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["root"], "/srv/share");
        assert_eq!(serde_json::from_value::<BackupPlan>(v).unwrap(), p);
        assert!(p.cache_condition().starts_with("warm"));
    }
}
