//! Results that beat the physical limit: seed 000's "results higher than
//! the 100 Mb ethernet max have to be caching", as a rule.

use crate::cells::{size, CellKey, Group};
use crate::BadFlag;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The fastest the path can really go, in KB/s (KiB per second, IOzone's
/// unit): one figure for every cell, or per cell from an uncached run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Limit {
    /// One rate for every cell (`--limit 100Mbit`).
    Rate {
        /// The rate in KB/s.
        kib_per_sec: f64,
        /// The rate as typed.
        text: String,
    },
    /// Each cell's own limit: the median of the same cell in another group.
    PerCell {
        /// The other group's name (`--limit RUNS`).
        name: String,
        /// Each cell's median there, in KB/s.
        kib_per_sec: BTreeMap<CellKey, f64>,
    },
}

impl Limit {
    /// "100Mbit", "1Gbit", "10gbit/s", "110MB/s" (10^6 bytes), "105MiB/s", "120000KB/s" (KiB, as IOzone).
    pub fn parse_rate(text: &str) -> Result<Limit, BadFlag> {
        let t = text.trim().to_ascii_lowercase().replace(' ', "");
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let n: f64 = number.parse().ok().filter(|n: &f64| *n > 0.0 && n.is_finite()).ok_or_else(|| {
            BadFlag(format!("--limit {text}: no rate; write e.g. 100Mbit, 1Gbit, 110MB/s or a run id"))
        })?;
        let bytes_per_sec = match unit.trim_end_matches("/s").trim_end_matches("ps") {
            "kbit" => n * 1e3 / 8.0,
            "mbit" => n * 1e6 / 8.0,
            "gbit" => n * 1e9 / 8.0,
            "kb" => n * 1024.0,
            "mb" => n * 1e6,
            "gb" => n * 1e9,
            "kib" => n * 1024.0,
            "mib" => n * 1048576.0,
            "gib" => n * 1073741824.0,
            _ => {
                return Err(BadFlag(format!(
                    "--limit {text}: unknown unit '{unit}'; use Mbit, Gbit, MB/s (10^6 bytes), MiB/s, KB/s (KiB, as \
                     IOzone), or a run id"
                )))
            }
        };
        Ok(Limit::Rate { kib_per_sec: bytes_per_sec / 1024.0, text: text.to_string() })
    }

    /// The limits of every cell of `uncached`, its medians.
    pub fn from_group(uncached: &Group) -> Limit {
        Limit::PerCell {
            name: uncached.name.clone(),
            kib_per_sec: uncached
                .cells
                .iter()
                .filter(|(_, s)| s.unit == "KB/s")
                .map(|(k, s)| (k.clone(), s.median))
                .collect(),
        }
    }

    fn of(&self, key: &CellKey) -> Option<f64> {
        match self {
            Limit::Rate { kib_per_sec, .. } => Some(*kib_per_sec),
            Limit::PerCell { kib_per_sec, .. } => kib_per_sec.get(key).copied(),
        }
    }

    /// The limit in words: "100Mbit = 12207 KB/s", "each cell's figure in #3".
    pub fn describe(&self) -> String {
        match self {
            Limit::Rate { kib_per_sec, text } => format!("{text} = {kib_per_sec:.0} KB/s"),
            Limit::PerCell { name, .. } => format!("each cell's figure in {name}"),
        }
    }
}

/// The cells above the limit and, per test, the boundary in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheFlags {
    /// The limit in words ([`Limit::describe`]).
    pub limit: String,
    /// (cell, its median KB/s, the limit it beat)
    pub flagged: Vec<(CellKey, f64, f64)>,
    /// One sentence per test with cells above the limit.
    pub boundaries: Vec<String>,
    /// Cells with no limit to hold them to (PerCell limits without the cell).
    pub unchecked: usize,
}

impl CacheFlags {
    /// Whether the cell's median beat its limit.
    pub fn is_flagged(&self, key: &CellKey) -> bool {
        self.flagged.iter().any(|(k, _, _)| k == key)
    }
}

/// Flags each KB/s cell of `group` whose median is above its limit.
pub fn flag_cached(group: &Group, limit: &Limit) -> CacheFlags {
    let mut flagged = Vec::new();
    let mut unchecked = 0;
    let mut by_test: BTreeMap<&str, Vec<(&CellKey, bool)>> = BTreeMap::new();
    for (key, stats) in &group.cells {
        if stats.unit != "KB/s" {
            continue;
        }
        let Some(max) = limit.of(key) else {
            unchecked += 1;
            continue;
        };
        let above = stats.median > max;
        if above {
            flagged.push((key.clone(), stats.median, max));
        }
        by_test.entry(key.test.as_str()).or_default().push((key, above));
    }
    let boundaries = by_test.iter().filter_map(|(test, cells)| boundary(test, cells)).collect();
    CacheFlags { limit: limit.describe(), flagged, boundaries, unchecked }
}

/// "read: cache dominates at files <= 32m and records <= 256k (12 of 30
/// cells above the limit); no effect from files >= 64m".
fn boundary(test: &str, cells: &[(&CellKey, bool)]) -> Option<String> {
    let above: Vec<&CellKey> = cells.iter().filter(|(_, a)| *a).map(|(k, _)| *k).collect();
    if above.is_empty() {
        return None;
    }
    let mut s = format!("{test}: cache dominates at");
    let largest_file = above.iter().filter_map(|k| k.file_size).max();
    let largest_record = above.iter().filter_map(|k| k.record_size).max();
    let mut parts = Vec::new();
    if let Some(f) = largest_file {
        parts.push(format!("files <= {}", size(f)));
    }
    if let Some(r) = largest_record {
        parts.push(format!("records <= {}", size(r)));
    }
    if parts.is_empty() {
        parts.push("every size".into());
    }
    s += &format!(" {} ({} of {} cells above the limit)", parts.join(" and "), above.len(), cells.len());
    // The smallest file size from which no larger file has a flagged cell.
    let files: BTreeSet<u64> = cells.iter().filter_map(|(k, _)| k.file_size).collect();
    if let Some(f) = largest_file {
        match files.iter().find(|size| **size > f) {
            Some(clean) => s += &format!("; no effect from files >= {}", size(*clean)),
            None => s += "; even the largest files are above it",
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::CellStats;

    fn key(f: u64, r: u64) -> CellKey {
        CellKey { test: "read".into(), file_size: Some(f << 20), record_size: Some(r << 10), variant: String::new() }
    }

    #[test]
    fn rates_parse_in_their_units() {
        let kib = |t: &str| match Limit::parse_rate(t).unwrap() {
            Limit::Rate { kib_per_sec, .. } => kib_per_sec,
            other @ Limit::PerCell { .. } => panic!("{other:?}"),
        };
        assert_eq!(kib("100Mbit"), 100e6 / 8.0 / 1024.0);
        assert_eq!(kib("1Gbit/s"), 1e9 / 8.0 / 1024.0);
        assert_eq!(kib("110MB/s"), 110e6 / 1024.0);
        assert_eq!(kib("100MiB/s"), 100.0 * 1024.0);
        assert_eq!(kib("12000KB/s"), 12000.0);
        assert!(Limit::parse_rate("fast").unwrap_err().0.contains("write e.g."));
        assert!(Limit::parse_rate("100furlongs").unwrap_err().0.contains("unknown unit"));
    }

    #[test]
    fn exactly_the_cells_above_the_limit_are_flagged_and_the_boundary_is_stated() {
        // 100 Mbit/s = 12207.03 KB/s. Files 1..64 MiB x records 4..1024 KiB: cached below 64 MiB, and only up to 256k.
        let mut cells = BTreeMap::new();
        let mut expected = Vec::new();
        for f in [1u64, 8, 32, 64, 128] {
            for r in [4u64, 64, 256, 1024] {
                let cached = f <= 32 && r <= 256;
                let v = if cached { 50_000.0 + f as f64 } else { 11_000.0 };
                cells.insert(key(f, r), CellStats::of(vec![v], "KB/s"));
                if cached {
                    expected.push(key(f, r));
                }
            }
        }
        // Exactly at the limit is not above it.
        cells.insert(key(256, 4), CellStats::of(vec![100e6 / 8.0 / 1024.0], "KB/s"));
        let group = Group {
            name: "#1".into(),
            run_ids: vec![1],
            suite: "iozone".into(),
            shape: crate::SuiteShape { matrix: true, whole_cell_latency: None, ..crate::SuiteShape::PLAIN },
            cells,
            partial: Default::default(),
            disturbed: Default::default(),
            left_out: Vec::new(),
            conditions: vec![],
            published: vec![],
            plans: vec![],
            environments: vec![],
            latency: BTreeMap::new(),
            extents: BTreeMap::new(),
            beside: BTreeMap::new(),
            figures: Vec::new(),
            flagged: Vec::new(),
            ops_per_sec: BTreeMap::new(),
            bound: Vec::new(),
            curves: BTreeMap::new(),
        };
        let flags = flag_cached(&group, &Limit::parse_rate("100Mbit").unwrap());
        let got: Vec<CellKey> = flags.flagged.iter().map(|(k, _, _)| k.clone()).collect();
        assert_eq!(got, expected);
        assert_eq!(
            flags.boundaries,
            ["read: cache dominates at files <= 32m and records <= 256k (9 of 21 cells above the limit); no effect \
              from files >= 64m"]
        );
        // Per-cell limits from an uncached group: only cells it has are checked.
        let mut uncached = group.clone();
        uncached.cells.retain(|k, _| k.file_size == Some(1 << 20));
        for s in uncached.cells.values_mut() {
            *s = CellStats::of(vec![40_000.0], "KB/s");
        }
        let flags = flag_cached(&group, &Limit::from_group(&uncached));
        assert_eq!(flags.flagged.len(), 3, "1m x 4k, 64k, 256k beat 40000");
        assert_eq!(flags.unchecked, 21 - 4);
    }
}
