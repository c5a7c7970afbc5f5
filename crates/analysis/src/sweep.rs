//! A setting swept over levels (seed 001's "Rate of Change" tables).

use crate::cells::{median, size, CellKey};
use serde::Serialize;
use std::collections::BTreeMap;

/// One level of the sweep: its name ("4", "cache=2", "64k") and the
/// samples of each cell at that level (the swept setting taken out of the key).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepLevel {
    pub level: String,
    pub cells: BTreeMap<CellKey, Vec<f64>>,
}

/// One cell across the levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    pub cell: String,
    /// The median at each level (None where the level lacks the cell).
    pub values: Vec<Option<f64>>,
    /// % change from each level to the next.
    pub steps_pct: Vec<Option<f64>>,
    /// % change from the first level to the last that has the cell.
    pub first_to_last_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub by: String,
    pub unit: String,
    pub levels: Vec<String>,
    pub rows: Vec<SweepRow>,
    /// The mean over rows of each step's % change, and of first-to-last.
    pub average_steps_pct: Vec<Option<f64>>,
    pub average_first_to_last_pct: Option<f64>,
    /// (level, record size, read / write) where a level has both.
    pub read_write: Vec<(String, String, f64)>,
}

/// Builds the sweep table from levels in the order given.
pub fn sweep(by: &str, unit: &str, levels: Vec<SweepLevel>) -> Sweep {
    let mut keys: Vec<&CellKey> = levels.iter().flat_map(|l| l.cells.keys()).collect();
    keys.sort();
    keys.dedup();
    let rows: Vec<SweepRow> = keys
        .iter()
        .map(|key| {
            let values: Vec<Option<f64>> = levels.iter().map(|l| l.cells.get(*key).map(|v| median(v))).collect();
            let steps_pct = values
                .windows(2)
                .map(|w| match (w[0], w[1]) {
                    (Some(a), Some(b)) if a > 0.0 => Some((b - a) / a * 100.0),
                    _ => None,
                })
                .collect();
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            let first_to_last_pct = match (present.first(), present.last()) {
                (Some(a), Some(b)) if present.len() > 1 && *a > 0.0 => Some((b - a) / a * 100.0),
                _ => None,
            };
            SweepRow { cell: key.describe(), values, steps_pct, first_to_last_pct }
        })
        .collect();
    let mean = |v: Vec<f64>| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    let steps = levels.len().saturating_sub(1);
    let average_steps_pct = (0..steps).map(|i| mean(rows.iter().filter_map(|r| r.steps_pct[i]).collect())).collect();
    let average_first_to_last_pct = mean(rows.iter().filter_map(|r| r.first_to_last_pct).collect());
    let read_write = read_write_ratios(&levels);
    Sweep {
        by: by.to_string(),
        unit: unit.to_string(),
        levels: levels.iter().map(|l| l.level.clone()).collect(),
        rows,
        average_steps_pct,
        average_first_to_last_pct,
        read_write,
    }
}

/// Read over write per record size at each level: IOzone's `read` and
/// `write` tests, or access specs of 100% and 0% reads, alike otherwise.
fn read_write_ratios(levels: &[SweepLevel]) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for level in levels {
        for (key, reads) in &level.cells {
            let write_key = if key.test == "read" {
                CellKey { test: "write".into(), ..key.clone() }
            } else if key.variant.contains("read=100%") {
                CellKey { variant: key.variant.replace("read=100%", "read=0%"), ..key.clone() }
            } else {
                continue;
            };
            if let Some(writes) = level.cells.get(&write_key) {
                let (r, w) = (median(reads), median(writes));
                if w > 0.0 {
                    let record = key.record_size.map(size).unwrap_or_else(|| "-".into());
                    let what = if key.variant.is_empty() {
                        record
                    } else {
                        format!("{record} {}", key.variant.replace("read=100% ", ""))
                    };
                    out.push((level.level.clone(), what, r / w));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(test: &str, r: u64) -> CellKey {
        CellKey { test: test.into(), file_size: Some(1 << 20), record_size: Some(r), variant: String::new() }
    }

    #[test]
    fn steps_first_to_last_and_averages() {
        let level = |name: &str, read: f64, write: f64| SweepLevel {
            level: name.into(),
            cells: BTreeMap::from([(key("read", 4096), vec![read]), (key("write", 4096), vec![write])]),
        };
        let s =
            sweep("cache", "KB/s", vec![level("1", 100.0, 50.0), level("2", 150.0, 50.0), level("3", 120.0, 100.0)]);
        assert_eq!(s.levels, ["1", "2", "3"]);
        let read = s.rows.iter().find(|r| r.cell.starts_with("read")).unwrap();
        assert_eq!(read.values, [Some(100.0), Some(150.0), Some(120.0)]);
        assert_eq!(read.steps_pct, [Some(50.0), Some(-20.0)]);
        assert_eq!(read.first_to_last_pct, Some(20.0));
        let write = s.rows.iter().find(|r| r.cell.starts_with("write")).unwrap();
        assert_eq!(write.steps_pct, [Some(0.0), Some(100.0)]);
        assert_eq!(s.average_steps_pct, [Some(25.0), Some(40.0)]);
        assert_eq!(s.average_first_to_last_pct, Some(60.0));
        assert_eq!(
            s.read_write,
            [("1".into(), "4k".into(), 2.0), ("2".into(), "4k".into(), 3.0), ("3".into(), "4k".into(), 1.2)]
        );
    }

    #[test]
    fn a_level_without_a_cell_leaves_a_gap() {
        let s = sweep(
            "qd",
            "KB/s",
            vec![
                SweepLevel { level: "1".into(), cells: BTreeMap::from([(key("read", 4096), vec![10.0])]) },
                SweepLevel { level: "2".into(), cells: BTreeMap::new() },
                SweepLevel { level: "4".into(), cells: BTreeMap::from([(key("read", 4096), vec![30.0])]) },
            ],
        );
        assert_eq!(s.rows[0].values, [Some(10.0), None, Some(30.0)]);
        assert_eq!(s.rows[0].steps_pct, [None, None]);
        assert_eq!(s.rows[0].first_to_last_pct, Some(200.0));
    }
}
