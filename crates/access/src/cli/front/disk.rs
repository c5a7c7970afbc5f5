//! fio's "Disk stats" section, normal and JSON: what the target's block device did while the
//! jobs ran, from the counters each cell stores in its machine load (`/proc/diskstats` before
//! and after the cell: every process's requests on the device, as fio's are). Summed over the
//! jobs, which iomatrix runs one after another; `util` is the device's busy time over the jobs'
//! wall time. A target without a device here prints no section, as fio prints none.

use super::measured::JobFigures;
use iomatrix_environment::DiskCounters;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Each device's activity over the jobs so far, and the jobs' wall time on it.
#[derive(Default)]
pub struct DiskStats {
    devices: BTreeMap<String, (DiskCounters, u64)>,
}

impl DiskStats {
    /// Adds a finished job's device activity.
    pub fn add(&mut self, figures: &JobFigures) {
        let Some((name, done)) = &figures.disk else { return };
        let (sum, wall_ns) = self.devices.entry(name.clone()).or_default();
        *sum = sum.plus(done);
        *wall_ns += figures.wall_ns;
    }

    /// fio's section (after the group lines), or nothing without a device.
    pub fn text(&self) -> String {
        if self.devices.is_empty() {
            return String::new();
        }
        let mut out = String::from("\nDisk stats (read/write):\n");
        for (name, (c, wall_ns)) in &self.devices {
            let _ = writeln!(
                out,
                "  {name}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                c.read_ios,
                c.write_ios,
                c.read_merges,
                c.write_merges,
                c.read_ticks_ms,
                c.write_ticks_ms,
                c.in_queue_ms,
                util(c, *wall_ns)
            );
        }
        out
    }

    /// fio's `disk_util` list; None without a device (fio then writes no such key).
    pub fn json(&self) -> Option<Value> {
        if self.devices.is_empty() {
            return None;
        }
        let each = self.devices.iter().map(|(name, (c, wall_ns))| {
            json!({
                "name": name,
                "read_ios": c.read_ios,
                "write_ios": c.write_ios,
                "read_merges": c.read_merges,
                "write_merges": c.write_merges,
                "read_ticks": c.read_ticks_ms,
                "write_ticks": c.write_ticks_ms,
                "in_queue": c.in_queue_ms,
                "util": util(c, *wall_ns),
            })
        });
        Some(Value::Array(each.collect()))
    }
}

/// The device's busy share of the wall time, in percent, at most 100 (its busy time is counted
/// in whole jiffies, so a short job can read a little over its wall time).
fn util(c: &DiskCounters, wall_ns: u64) -> f64 {
    if wall_ns == 0 {
        return 0.0;
    }
    (c.io_ticks_ms as f64 * 1e6 * 100.0 / wall_ns as f64).min(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn util_is_the_busy_time_over_the_wall_time_and_never_past_all_of_it() {
        let c = DiskCounters { io_ticks_ms: 500, ..DiskCounters::default() };
        assert!((util(&c, 2_000_000_000) - 25.0).abs() < 1e-9);
        assert_eq!(util(&c, 400_000_000), 100.0);
        assert_eq!(util(&c, 0), 0.0);
        assert_eq!(DiskStats::default().text(), "");
        assert!(DiskStats::default().json().is_none());
    }
}
