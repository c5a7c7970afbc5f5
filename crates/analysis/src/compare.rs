//! B against A, cell by cell (seed 000's ratio matrices, seed 003's
//! "% change" tables).

use crate::cells::{CellKey, Group};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A part of the matrix ("the sweet spot"): inclusive bounds, open where None.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Region {
    pub files: (Option<u64>, Option<u64>),
    pub records: (Option<u64>, Option<u64>),
}

impl Region {
    pub fn is_everything(&self) -> bool {
        *self == Region::default()
    }

    pub fn contains(&self, file: u64, record: u64) -> bool {
        let within =
            |v: u64, (lo, hi): (Option<u64>, Option<u64>)| lo.is_none_or(|l| v >= l) && hi.is_none_or(|h| v <= h);
        within(file, self.files) && within(record, self.records)
    }
}

/// Mean change and wins over a set of cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tally {
    pub cells: usize,
    /// Mean of the ratios B/A, minus one, in %.
    pub mean_change_pct: f64,
    pub a_wins: usize,
    pub b_wins: usize,
    pub ties: usize,
}

impl Tally {
    fn of(ratios: &[f64]) -> Tally {
        if ratios.is_empty() {
            return Tally::default();
        }
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        Tally {
            cells: ratios.len(),
            mean_change_pct: (mean - 1.0) * 100.0,
            a_wins: ratios.iter().filter(|r| **r < 1.0).count(),
            b_wins: ratios.iter().filter(|r| **r > 1.0).count(),
            ties: ratios.iter().filter(|r| **r == 1.0).count(),
        }
    }
}

/// One matrix test: the ratio matrix B/A (medians over each side's runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixComparison {
    pub test: String,
    pub unit: &'static str,
    /// Rows: file sizes; columns: record sizes (bytes), as in IOzone's tables.
    pub file_sizes: Vec<u64>,
    pub record_sizes: Vec<u64>,
    /// `ratios[file][record]`: B/A, None where either side lacks the cell.
    pub ratios: Vec<Vec<Option<f64>>>,
    /// The record-size view: the mean ratio of each column.
    pub by_record: Vec<(u64, f64)>,
    /// The file-size view: the mean ratio of each row.
    pub by_file: Vec<(u64, f64)>,
    pub overall: Tally,
    /// The same over the region asked for, if any.
    pub region: Option<Tally>,
}

/// One figure of a scalar suite: A, B and the change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalarRow {
    pub metric: String,
    pub unit: &'static str,
    pub a: f64,
    pub b: f64,
    pub change_pct: f64,
}

/// Latency percentiles of one operation side by side (medians over runs), ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyRow {
    pub cell: String,
    pub operation: String,
    /// (percentile name, A, B)
    pub percentiles: Vec<(String, f64, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub a_runs: Vec<i64>,
    pub b_runs: Vec<i64>,
    pub suite: String,
    /// Differences in the conditions that produced the figures, to state above the tables.
    pub condition_differences: Vec<String>,
    pub matrices: Vec<MatrixComparison>,
    pub scalars: Vec<ScalarRow>,
    pub latency: Vec<LatencyRow>,
    /// Cells only one side has: listed, never silently dropped.
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub region: Region,
}

/// The conditions compared between the sides (see each run's `conditions`).
const CONDITIONS: [&str; 8] =
    ["suite", "backend", "direct", "cache", "clients", "files_vs_ram", "fs_type", "partition_alignment_bytes"];

const PERCENTILES: [(&str, &str); 5] =
    [("p50", "p50_ns"), ("p90", "p90_ns"), ("p99", "p99_ns"), ("p99.9", "p99_9_ns"), ("max", "max_ns")];

/// B against A. Cells with a file and a record size and no access-spec
/// variant form matrices (one per test); all others are scalar rows.
pub fn compare(a: &Group, b: &Group, region: Region) -> Comparison {
    let keys_a: BTreeSet<&CellKey> = a.cells.keys().collect();
    let keys_b: BTreeSet<&CellKey> = b.cells.keys().collect();
    let only_in_a = keys_a.difference(&keys_b).map(|k| k.describe()).collect();
    let only_in_b = keys_b.difference(&keys_a).map(|k| k.describe()).collect();
    let both: Vec<&CellKey> = keys_a.intersection(&keys_b).copied().collect();

    let mut by_test: BTreeMap<&str, Vec<&CellKey>> = BTreeMap::new();
    let mut scalars = Vec::new();
    for key in &both {
        let is_matrix = key.file_size.is_some() && key.record_size.is_some() && key.variant.is_empty();
        if is_matrix && a.suite == "iozone" {
            by_test.entry(key.test.as_str()).or_default().push(key);
        } else {
            let (sa, sb) = (&a.cells[*key], &b.cells[*key]);
            scalars.push(ScalarRow {
                metric: key.describe(),
                unit: sa.unit,
                a: sa.median,
                b: sb.median,
                change_pct: change_pct(sa.median, sb.median),
            });
        }
    }
    scalars.extend(extent_rows(a, b));
    let matrices = by_test.into_iter().map(|(test, keys)| matrix(test, &keys, a, b, region)).collect();
    Comparison {
        a: a.name.clone(),
        b: b.name.clone(),
        a_runs: a.run_ids.clone(),
        b_runs: b.run_ids.clone(),
        suite: a.suite.clone(),
        condition_differences: condition_differences(a, b),
        matrices,
        scalars,
        latency: latency_rows(a, b),
        only_in_a,
        only_in_b,
        region,
    }
}

/// (b - a) / a in %, 0 when a is 0.
pub fn change_pct(a: f64, b: f64) -> f64 {
    if a == 0.0 {
        0.0
    } else {
        (b - a) / a * 100.0
    }
}

fn matrix(test: &str, keys: &[&CellKey], a: &Group, b: &Group, region: Region) -> MatrixComparison {
    let file_sizes: Vec<u64> = keys.iter().filter_map(|k| k.file_size).collect::<BTreeSet<_>>().into_iter().collect();
    let record_sizes: Vec<u64> =
        keys.iter().filter_map(|k| k.record_size).collect::<BTreeSet<_>>().into_iter().collect();
    let mut ratios = vec![vec![None; record_sizes.len()]; file_sizes.len()];
    let mut all = Vec::new();
    let mut in_region = Vec::new();
    let mut unit = "KB/s";
    for key in keys {
        let (Some(f), Some(r)) = (key.file_size, key.record_size) else { continue };
        let (sa, sb) = (&a.cells[*key], &b.cells[*key]);
        unit = sa.unit;
        if sa.median <= 0.0 {
            continue;
        }
        let ratio = sb.median / sa.median;
        let (i, j) = (file_sizes.binary_search(&f).unwrap_or(0), record_sizes.binary_search(&r).unwrap_or(0));
        ratios[i][j] = Some(ratio);
        all.push(ratio);
        if region.contains(f, r) {
            in_region.push(ratio);
        }
    }
    let mean = |v: Vec<f64>| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    let by_record = record_sizes
        .iter()
        .enumerate()
        .filter_map(|(j, r)| mean(ratios.iter().filter_map(|row| row[j]).collect()).map(|m| (*r, m)))
        .collect();
    let by_file = file_sizes
        .iter()
        .enumerate()
        .filter_map(|(i, f)| mean(ratios[i].iter().flatten().copied().collect()).map(|m| (*f, m)))
        .collect();
    MatrixComparison {
        test: test.to_string(),
        unit,
        file_sizes,
        record_sizes,
        ratios,
        by_record,
        by_file,
        overall: Tally::of(&all),
        region: (!region.is_everything()).then(|| Tally::of(&in_region)),
    }
}

fn condition_differences(a: &Group, b: &Group) -> Vec<String> {
    let mut out = Vec::new();
    let values = |g: &Group, key: &str| -> BTreeSet<String> {
        g.conditions.iter().map(|c| if key == "suite" { g.suite.clone() } else { shown(&c[key]) }).collect()
    };
    for key in CONDITIONS {
        let (va, vb) = (values(a, key), values(b, key));
        let join = |v: &BTreeSet<String>| v.iter().cloned().collect::<Vec<_>>().join(" / ");
        if va.len() > 1 {
            out.push(format!("{key} differs within A ({}): {}", a.name, join(&va)));
        }
        if vb.len() > 1 {
            out.push(format!("{key} differs within B ({}): {}", b.name, join(&vb)));
        }
        if va != vb {
            out.push(format!("{key}: A ({}) {}, B ({}) {}", a.name, join(&va), b.name, join(&vb)));
        }
    }
    out
}

fn shown(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "unknown".into(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Per cell both sides mapped with FIEMAP: extents per file and fragmented files (medians over
/// the runs), as rows beside the rates they explain.
fn extent_rows(a: &Group, b: &Group) -> Vec<ScalarRow> {
    let mut rows = Vec::new();
    for (key, xa) in &a.extents {
        let Some(xb) = b.extents.get(key) else { continue };
        let med = |s: &[serde_json::Value], f: &dyn Fn(&serde_json::Value) -> Option<f64>| {
            crate::median(&s.iter().filter_map(f).collect::<Vec<_>>())
        };
        let per_file = |v: &serde_json::Value| Some(v["total_extents"].as_f64()? / v["files"].as_f64()?);
        let fragmented = |v: &serde_json::Value| v["fragmented_files"].as_f64();
        for (what, unit, f) in [
            ("extents per file", "extents", &per_file as &dyn Fn(&serde_json::Value) -> Option<f64>),
            ("fragmented files", "files", &fragmented),
        ] {
            let (va, vb) = (med(xa, f), med(xb, f));
            rows.push(ScalarRow {
                metric: format!("{} {what}", key.describe()),
                unit,
                a: va,
                b: vb,
                // From none to some is no percentage (NaN: shown as "-", null in JSON).
                change_pct: if va == 0.0 && vb != 0.0 { f64::NAN } else { change_pct(va, vb) },
            });
        }
    }
    rows
}

fn latency_rows(a: &Group, b: &Group) -> Vec<LatencyRow> {
    let mut rows = Vec::new();
    for ((key, op), summaries_a) in &a.latency {
        let Some(summaries_b) = b.latency.get(&(key.clone(), op.clone())) else { continue };
        let med = |s: &[serde_json::Value], field: &str| {
            crate::median(&s.iter().filter_map(|v| v[field].as_f64()).collect::<Vec<_>>())
        };
        let percentiles = PERCENTILES
            .iter()
            .map(|(name, field)| (name.to_string(), med(summaries_a, field), med(summaries_b, field)))
            .collect();
        rows.push(LatencyRow { cell: key.describe(), operation: op.clone(), percentiles });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::CellStats;

    fn group(name: &str, cells: &[((u64, u64), Vec<f64>)]) -> Group {
        Group {
            name: name.into(),
            run_ids: vec![1],
            suite: "iozone".into(),
            cells: cells
                .iter()
                .map(|((f, r), v)| {
                    let key = CellKey {
                        test: "read".into(),
                        file_size: Some(*f),
                        record_size: Some(*r),
                        variant: String::new(),
                    };
                    (key, CellStats::of(v.clone(), "KB/s"))
                })
                .collect(),
            conditions: vec![serde_json::json!({"backend": "psync", "direct": false, "clients": 1})],
            latency: BTreeMap::new(),
            extents: BTreeMap::new(),
        }
    }

    #[test]
    fn ratios_views_and_wins_are_computed_by_hand() {
        let a = group(
            "A",
            &[((64, 4), vec![100.0]), ((64, 8), vec![200.0]), ((128, 4), vec![100.0]), ((128, 8), vec![50.0])],
        );
        let b = group(
            "B",
            &[((64, 4), vec![150.0]), ((64, 8), vec![100.0]), ((128, 4), vec![100.0]), ((256, 4), vec![1.0])],
        );
        let c = compare(&a, &b, Region { files: (None, Some(64)), records: (None, None) });
        assert_eq!(c.only_in_a, ["read 128/8"]);
        assert_eq!(c.only_in_b, ["read 256/4"]);
        let m = &c.matrices[0];
        assert_eq!(m.file_sizes, [64, 128]);
        assert_eq!(m.record_sizes, [4, 8]);
        assert_eq!(m.ratios, [[Some(1.5), Some(0.5)], [Some(1.0), None]]);
        // Record 4: (1.5 + 1.0) / 2; record 8: 0.5. File 64: (1.5 + 0.5) / 2; file 128: 1.0.
        assert_eq!(m.by_record, [(4, 1.25), (8, 0.5)]);
        assert_eq!(m.by_file, [(64, 1.0), (128, 1.0)]);
        assert_eq!((m.overall.cells, m.overall.a_wins, m.overall.b_wins, m.overall.ties), (3, 1, 1, 1));
        assert!(m.overall.mean_change_pct.abs() < 1e-12, "(1.5 + 0.5 + 1.0) / 3 = 1");
        let region = m.region.unwrap();
        assert_eq!(region.cells, 2);
        assert!(region.mean_change_pct.abs() < 1e-12);
        assert!(c.condition_differences.is_empty());
    }

    #[test]
    fn medians_of_repeats_are_compared_and_differences_stated() {
        let a = group("A", &[((64, 4), vec![100.0, 300.0, 200.0])]);
        let mut b = group("B", &[((64, 4), vec![250.0, 50.0])]);
        b.conditions = vec![serde_json::json!({"backend": "psync", "direct": true, "clients": 1})];
        let c = compare(&a, &b, Region::default());
        assert_eq!(c.matrices[0].ratios, [[Some(150.0 / 200.0)]]);
        assert!(c.matrices[0].region.is_none());
        assert_eq!(c.condition_differences, ["direct: A (A) false, B (B) true"]);
    }

    #[test]
    fn extents_per_file_and_fragmented_files_are_compared_where_both_sides_mapped_them() {
        let key = CellKey { test: "backup".into(), file_size: None, record_size: None, variant: String::new() };
        let side = |name: &str, per_run: &[(u64, u64, u64)]| {
            let mut g = group(name, &[]);
            g.suite = "backup".into();
            g.extents.insert(
                key.clone(),
                per_run
                    .iter()
                    .map(|(files, total, fragmented)| {
                        serde_json::json!({"files": files, "total_extents": total, "fragmented_files": fragmented})
                    })
                    .collect(),
            );
            g
        };
        // delalloc: one extent per file; nodelalloc: 571 over 97 files, then 600 (median of 2 runs).
        let a = side("delalloc", &[(97, 97, 0)]);
        let b = side("nodelalloc", &[(97, 571, 96), (100, 600, 98)]);
        let c = compare(&a, &b, Region::default());
        let rows: Vec<(&str, f64, f64)> = c.scalars.iter().map(|r| (r.metric.as_str(), r.a, r.b)).collect();
        let per_file = (571.0 / 97.0 + 6.0) / 2.0;
        assert_eq!(rows, [("backup extents per file", 1.0, per_file), ("backup fragmented files", 0.0, 97.0)]);
        assert!(c.scalars[1].change_pct.is_nan(), "from 0 to 97 files is no percentage");
        assert!((c.scalars[0].change_pct - (per_file - 1.0) * 100.0).abs() < 1e-9);
        let lone = compare(&a, &group("none", &[]), Region::default());
        assert!(lone.scalars.is_empty(), "no row without both sides' extents");
    }

    #[test]
    fn regions_hold_their_bounds() {
        let r = Region { files: (None, Some(2 << 20)), records: (Some(4096), Some(32 << 10)) };
        assert!(r.contains(2 << 20, 32 << 10));
        assert!(!r.contains(4 << 20, 4096));
        assert!(!r.contains(1 << 20, 2048));
        assert!(Region::default().contains(u64::MAX, 0));
    }
}
