//! A setting swept over levels (seed 001's "Rate of Change" tables), with
//! the summaries seed 001 printed beside them: the Total column (first level
//! to last, which is what the seed's Total is: the sum of its step changes
//! would give 128% for 2K reads where it prints 148%), averages and totals
//! per direction (reads, writes), and read/write ratios per block size over
//! every level.

use crate::cells::{median, size, CellKey};
use iomatrix_core::IoMix;
use serde::Serialize;
use std::collections::BTreeMap;

/// One level of the sweep: its name ("4", "cache=2", "64k") and the
/// samples of each cell at that level (the swept setting taken out of the key).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepLevel {
    /// The level's name ("4", "cache=2", "64k").
    pub level: String,
    /// Each cell's samples at this level, keyed without the swept setting.
    pub cells: BTreeMap<CellKey, Vec<f64>>,
}

/// Which way a cell moves data: reads and writes are summed and averaged
/// apart (seed 001: "reads increased over 500%, while writes increased only
/// 150%"); mixed workloads and metadata tests are neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Reads only.
    Read,
    /// Writes only.
    Write,
    /// Mixed workloads, metadata tests and the rest.
    Other,
}

impl Direction {
    /// By the access spec's mix where it has one (100% or 0% reads), else by
    /// the test's name (IOzone's and Bonnie's tests).
    pub fn of(key: &CellKey) -> Direction {
        if key.variant.contains(&IoMix::read_part(100)) {
            return Direction::Read;
        }
        if key.variant.contains(&IoMix::read_part(0)) {
            return Direction::Write;
        }
        if key.variant.contains(IoMix::READ_KEY) {
            return Direction::Other;
        }
        match key.test.as_str() {
            "read" | "reread" | "random-read" | "backward-read" | "stride-read" | "fread" | "freread" | "getc" => {
                Direction::Read
            }
            "write" | "rewrite" | "random-write" | "record-rewrite" | "fwrite" | "frewrite" | "putc" => {
                Direction::Write
            }
            _ => Direction::Other,
        }
    }

    /// The direction's name as the summaries print it: "reads", "writes", "other".
    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "reads",
            Direction::Write => "writes",
            Direction::Other => "other",
        }
    }
}

/// One cell across the levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    /// The cell as the tables name it, without the swept setting.
    pub cell: String,
    /// The cell's record (block) size, for one table per block size.
    pub record_size: Option<u64>,
    /// Whether the cell reads, writes or neither.
    pub direction: Direction,
    /// The figure's unit: the sweep's, unless the caller set the row's own
    /// (Bonnie's seeks/s and files/s beside its KB/s).
    pub unit: String,
    /// The median at each level (None where the level lacks the cell).
    pub values: Vec<Option<f64>>,
    /// % change from each level to the next.
    pub steps_pct: Vec<Option<f64>>,
    /// % change from the first level to the last that has the cell: seed
    /// 001's Total column.
    pub first_to_last_pct: Option<f64>,
    /// The mean of the values over the levels that have the cell: the Total of seed 001's
    /// Average row (2K reads: 6.85, 7.38, 8.31, 8.05, 16.97, Total 9.51).
    pub mean_over_levels: Option<f64>,
    /// Left out of the summaries at the user's word (`--exclude`): still shown, never averaged.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub excluded: bool,
}

/// The rows of one direction together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionSummary {
    /// The direction summarised.
    pub direction: Direction,
    /// How many rows it is over.
    pub rows: usize,
    /// The mean over the direction's rows of each step's % change, and of their Totals.
    pub average_steps_pct: Vec<Option<f64>>,
    /// The mean over the direction's rows of their Totals (first to last, %).
    pub average_total_pct: Option<f64>,
    /// The rows' Totals summed (seed 001's "reads increased over 500%": the
    /// first-to-last changes of the block sizes added up).
    pub total_pct: Option<f64>,
}

/// Read over write for one block size, every level's samples together
/// (seed 001's "the 2K blocks Read/Write ratio is 5.63:1").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockRatio {
    /// The block (record) size and what else keys the pair: "2k", "64k 16m", "4k qd=8 random=0%".
    pub what: String,
    /// The block (record) size in bytes; None for cells without one.
    pub record_size: Option<u64>,
    /// How many read samples were pooled.
    pub reads: usize,
    /// How many write samples were pooled.
    pub writes: usize,
    /// The mean of all read samples over the mean of all write samples (the seed's figure).
    pub mean_ratio: f64,
    /// The median of all read samples over the median of all write samples.
    pub median_ratio: f64,
}

/// A sweep ([`sweep`]): each cell's medians over the levels, their changes, and seed 001's
/// summaries of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// What is swept: sweep's `--by` name.
    pub by: String,
    /// The figures' unit, unless a row gives its own.
    pub unit: String,
    /// The levels' names, in order.
    pub levels: Vec<String>,
    /// One row per cell.
    pub rows: Vec<SweepRow>,
    /// The mean over rows of each step's % change, and of first-to-last.
    pub average_steps_pct: Vec<Option<f64>>,
    /// The mean over rows of first-to-last (%).
    pub average_first_to_last_pct: Option<f64>,
    /// (level, record size, read / write) where a level has both.
    pub read_write: Vec<(String, String, f64)>,
    /// Averages and totals per direction (reads, writes; other rows, if any, last).
    pub directions: Vec<DirectionSummary>,
    /// Read over write per block size over all levels.
    pub read_write_by_block: Vec<BlockRatio>,
    /// The cells left out of every summary at the user's word (`--exclude`), as the rows name them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<String>,
}

/// Builds the sweep table from levels in the order given.
pub fn sweep(by: &str, unit: &str, levels: Vec<SweepLevel>) -> Sweep {
    sweep_excluding(by, unit, levels, &[])
}

/// [`sweep`], with the cells named in `excluded` (as the rows name them: "read 1m/4k") shown but
/// left out of the averages, the totals by direction and the read/write ratios: seed 000's
/// outlier "excluded from the averaging". The caller checks that each name is a row.
pub fn sweep_excluding(by: &str, unit: &str, levels: Vec<SweepLevel>, excluded: &[String]) -> Sweep {
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
            let mean_over_levels = (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64);
            let cell = key.describe();
            SweepRow {
                excluded: excluded.contains(&cell),
                cell,
                record_size: key.record_size,
                direction: Direction::of(key),
                unit: unit.to_string(),
                values,
                steps_pct,
                first_to_last_pct,
                mean_over_levels,
            }
        })
        .collect();
    let all_rows = rows;
    let rows: Vec<SweepRow> = all_rows.iter().filter(|r| !r.excluded).cloned().collect();
    // The read/write ratios are worked from the levels' cells: the excluded ones taken out.
    let levels: Vec<SweepLevel> = levels
        .into_iter()
        .map(|l| SweepLevel {
            cells: l.cells.into_iter().filter(|(k, _)| !excluded.contains(&k.describe())).collect(),
            ..l
        })
        .collect();
    let mean = |v: Vec<f64>| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    let steps = levels.len().saturating_sub(1);
    let average_steps_pct = (0..steps).map(|i| mean(rows.iter().filter_map(|r| r.steps_pct[i]).collect())).collect();
    let average_first_to_last_pct = mean(rows.iter().filter_map(|r| r.first_to_last_pct).collect());
    let read_write = read_write_ratios(&levels);
    let directions = [Direction::Read, Direction::Write, Direction::Other]
        .into_iter()
        .filter_map(|d| {
            let rows: Vec<&SweepRow> = rows.iter().filter(|r| r.direction == d).collect();
            if rows.is_empty() {
                return None;
            }
            let totals: Vec<f64> = rows.iter().filter_map(|r| r.first_to_last_pct).collect();
            Some(DirectionSummary {
                direction: d,
                rows: rows.len(),
                average_steps_pct: (0..steps)
                    .map(|i| mean(rows.iter().filter_map(|r| r.steps_pct[i]).collect()))
                    .collect(),
                average_total_pct: mean(totals.clone()),
                total_pct: if totals.is_empty() { None } else { Some(totals.iter().sum()) },
            })
        })
        .collect();
    let read_write_by_block = block_ratios(&levels);
    Sweep {
        by: by.to_string(),
        unit: unit.to_string(),
        levels: levels.iter().map(|l| l.level.clone()).collect(),
        rows: all_rows,
        average_steps_pct,
        average_first_to_last_pct,
        read_write,
        directions,
        read_write_by_block,
        excluded: excluded.to_vec(),
    }
}

/// Each level's cells merged by `base` (several systems' rows into one):
/// the merged cell's one sample is the mean of the merged cells' medians,
/// seed 001's "Average" row over its clusters, whose steps and Total the
/// seed then takes.
pub fn mean_of_rows(levels: &[SweepLevel], base: impl Fn(&CellKey) -> CellKey) -> Vec<SweepLevel> {
    levels
        .iter()
        .map(|level| {
            let mut merged: BTreeMap<CellKey, Vec<f64>> = BTreeMap::new();
            for (key, samples) in &level.cells {
                merged.entry(base(key)).or_default().push(median(samples));
            }
            let cells = merged.into_iter().map(|(k, v)| (k, vec![v.iter().sum::<f64>() / v.len() as f64])).collect();
            SweepLevel { level: level.level.clone(), cells }
        })
        .collect()
}

/// The write cell a read cell pairs with: IOzone's and Bonnie's `read` with
/// `write`, an access spec of 100% reads with the same spec at 0%.
fn write_pair(key: &CellKey) -> Option<CellKey> {
    if key.test == "read" {
        Some(CellKey { test: "write".into(), ..key.clone() })
    } else if key.variant.contains(&IoMix::read_part(100)) {
        Some(CellKey { variant: key.variant.replace(&IoMix::read_part(100), &IoMix::read_part(0)), ..key.clone() })
    } else {
        None
    }
}

/// Read over write per block size, every level's samples pooled: the mean
/// of all reads over the mean of all writes, and the same with medians.
fn block_ratios(levels: &[SweepLevel]) -> Vec<BlockRatio> {
    let mut pooled: BTreeMap<CellKey, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for level in levels {
        for (key, reads) in &level.cells {
            let Some(write_key) = write_pair(key) else { continue };
            let Some(writes) = level.cells.get(&write_key) else { continue };
            let entry = pooled.entry(key.clone()).or_default();
            entry.0.extend(reads.iter().copied().filter(|v| v.is_finite()));
            entry.1.extend(writes.iter().copied().filter(|v| v.is_finite()));
        }
    }
    // Block size first, so that 2k..256k read down in order.
    let mut out: Vec<BlockRatio> = pooled
        .into_iter()
        .filter_map(|(key, (reads, writes))| {
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            if reads.is_empty() || writes.is_empty() || mean(&writes) <= 0.0 || median(&writes) <= 0.0 {
                return None;
            }
            let mut what = key.record_size.map(size).unwrap_or_else(|| "-".into());
            if let Some(f) = key.file_size {
                what += &format!(" file {}", size(f));
            }
            let rest = key.variant.replace(&IoMix::read_part(100), "").split_whitespace().collect::<Vec<_>>().join(" ");
            if !rest.is_empty() {
                what += &format!(" {rest}");
            }
            Some(BlockRatio {
                what,
                record_size: key.record_size,
                reads: reads.len(),
                writes: writes.len(),
                mean_ratio: mean(&reads) / mean(&writes),
                median_ratio: median(&reads) / median(&writes),
            })
        })
        .collect();
    out.sort_by(|a, b| a.record_size.cmp(&b.record_size).then_with(|| a.what.cmp(&b.what)));
    out
}

/// Read over write per record size at each level: IOzone's `read` and
/// `write` tests, or access specs of 100% and 0% reads, alike otherwise.
fn read_write_ratios(levels: &[SweepLevel]) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for level in levels {
        for (key, reads) in &level.cells {
            let Some(write_key) = write_pair(key) else { continue };
            if let Some(writes) = level.cells.get(&write_key) {
                let (r, w) = (median(reads), median(writes));
                if w > 0.0 {
                    let record = key.record_size.map(size).unwrap_or_else(|| "-".into());
                    let what = if key.variant.is_empty() {
                        record
                    } else {
                        format!("{record} {}", key.variant.replace(&format!("{} ", IoMix::read_part(100)), ""))
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
    fn an_access_cell_is_read_or_written_by_its_mix_name() {
        let access = |read_percent| CellKey {
            test: "access".into(),
            variant: IoMix { read_percent, random_percent: 100, queue_depth: 4, load: None }.name(),
            ..key("access", 4096)
        };
        assert_eq!(Direction::of(&access(100)), Direction::Read);
        assert_eq!(Direction::of(&access(0)), Direction::Write);
        assert_eq!(Direction::of(&access(70)), Direction::Other);
        assert_eq!(write_pair(&access(100)), Some(access(0)));
        assert_eq!(write_pair(&access(70)), None);
        let level = SweepLevel {
            level: "1".into(),
            cells: BTreeMap::from([(access(100), vec![300.0]), (access(0), vec![100.0])]),
        };
        assert_eq!(read_write_ratios(std::slice::from_ref(&level)), [("1".into(), "4k qd=4 random=100%".into(), 3.0)]);
        assert_eq!(block_ratios(&[level])[0].what, "4k file 1m qd=4 random=100%");
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
        assert_eq!(s.rows[0].mean_over_levels, Some(20.0), "the mean over the levels that have it");
    }

    /// Seed 001, Rate of Change, 2K reads: the Average row 6.85, 7.38, 8.31, 8.05, 16.97 has
    /// Total 9.51 (the mean over the levels).
    #[test]
    fn the_average_rows_total_is_the_mean_over_levels() {
        let levels = [("16", 6.85), ("32", 7.38), ("64", 8.31), ("128", 8.05), ("255", 16.97)]
            .map(|(l, v)| SweepLevel { level: l.into(), cells: BTreeMap::from([(key("read", 2048), vec![v])]) });
        let s = sweep("qd", "MB/s", levels.to_vec());
        assert_eq!(format!("{:.2}", s.rows[0].mean_over_levels.unwrap()), "9.51");
    }

    /// Seed 000 left one cell "out of the averaging": an excluded row is shown and out of every
    /// summary.
    #[test]
    fn an_excluded_cell_is_shown_but_not_averaged() {
        let level = |name: &str, read: f64, write: f64| SweepLevel {
            level: name.into(),
            cells: BTreeMap::from([(key("read", 4096), vec![read]), (key("write", 4096), vec![write])]),
        };
        let levels = vec![level("1", 100.0, 50.0), level("2", 150.0, 500.0)];
        let all = sweep("cache", "KB/s", levels.clone());
        let s = sweep_excluding("cache", "KB/s", levels, &["write 1m/4k".to_string()]);
        assert_eq!(s.rows.len(), 2, "still shown");
        assert!(s.rows.iter().any(|r| r.excluded && r.cell == "write 1m/4k"));
        assert_eq!(all.average_first_to_last_pct, Some(f64::midpoint(50.0, 900.0)));
        assert_eq!(s.average_first_to_last_pct, Some(50.0), "the reads alone");
        assert!(s.directions.iter().all(|d| d.direction != Direction::Write));
        assert!(s.read_write_by_block.is_empty() && s.read_write.is_empty(), "no write to pair with");
        assert_eq!(s.excluded, ["write 1m/4k"]);
    }
}
