//! N sides against one baseline: the pairwise [`compare`] of the baseline with each other side,
//! laid out by row key with the sides as columns (seed 002's 16 setups in one table).
//!
//! Every row comes from a pairwise comparison (a matrix cell or a scalar row, whatever kinds
//! the pairwise analysis grows), so the layout never needs to know what a row measures.

use crate::cells::{CellKey, Group};
use crate::compare::{compare, Comparison, Region};
use crate::curve::CurveRow;
use crate::noise::Judgement;
use serde::Serialize;
use std::collections::HashMap;

/// One side as the command line gave it, with its letter in the tables (A, B, ... Z, AA, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Its letter in the tables: A, B, ... Z, AA, ...
    pub letter: String,
    /// The side as the command line gave it ("#12", "server=netware").
    pub name: String,
    /// The ids of its runs.
    pub runs: Vec<i64>,
    /// The labels that tell this side from the others (`storage=xfs`): those every run of the
    /// side has, less those every side has alike. `sweep --rows storage` names its systems so.
    pub labels: Vec<String>,
}

/// Each side's distinguishing labels ([`Side::labels`]), from each side's runs' labels.
pub fn distinguishing_labels(sides: &[Vec<&[(String, String)]>]) -> Vec<Vec<String>> {
    let shared: Vec<Vec<&(String, String)>> = sides
        .iter()
        .map(|runs| match runs.split_first() {
            Some((first, rest)) => first.iter().filter(|l| rest.iter().all(|r| r.contains(l))).collect(),
            None => Vec::new(),
        })
        .collect();
    shared
        .iter()
        .map(|mine| {
            mine.iter()
                .filter(|l| !shared.iter().all(|other| other.contains(l)))
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        })
        .collect()
}

/// One side's figure in a row: its median, and against the baseline its % change and verdict
/// (None on the baseline's own cell).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideCell {
    /// The side's median.
    pub value: f64,
    /// The median's change against the baseline's, in %; None on the baseline's own cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_pct: Option<f64>,
    /// Faster, slower or within noise against the baseline; None on the baseline's own cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Judgement>,
    /// The median took in samples of partial cells (`--include-partial`).
    pub partial: bool,
}

/// One compared figure across every side: `cells[i]` is side i's (None where the side has no
/// such figure, or the baseline has none to hold it against).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ManyRow {
    /// The figure's name: a cell, a metric or an operation's figure.
    pub metric: String,
    /// The figure's unit.
    pub unit: &'static str,
    /// One entry per side, in the sides' order.
    pub cells: Vec<Option<SideCell>>,
}

/// Every side against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct ManyComparison {
    /// The suite every side ran.
    pub suite: String,
    /// Index into `sides` of the baseline.
    pub baseline: usize,
    /// Every side, in the order given.
    pub sides: Vec<Side>,
    /// One table: every figure any pair compared, in the order the pairs give them.
    pub rows: Vec<ManyRow>,
    /// The baseline against each other side, in the sides' order: `pairs[k]` is the baseline
    /// (its A) against `others[k]` (its B).
    pub pairs: Vec<Comparison>,
    /// Index into `sides` of each pair's B.
    pub others: Vec<usize>,
}

/// "A", "B", ... "Z", "AA", "AB": the letter of the side at `index` (from 0).
pub fn side_letter(index: usize) -> String {
    let mut n = index + 1;
    let mut letters = Vec::new();
    while n > 0 {
        n -= 1;
        letters.push(b'A' + (n % 26) as u8);
        n /= 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

/// Every side of `groups` against `groups[baseline]`, each pair through [`compare`].
pub fn compare_many(groups: &[Group], baseline: usize, region: Region) -> ManyComparison {
    let sides: Vec<Side> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| Side {
            letter: side_letter(i),
            name: g.name.clone(),
            runs: g.run_ids.clone(),
            labels: Vec::new(),
        })
        .collect();
    let others: Vec<usize> = (0..groups.len()).filter(|i| *i != baseline).collect();
    let base = &groups[baseline];
    let pairs: Vec<Comparison> = others.iter().map(|i| compare(base, &groups[*i], region)).collect();
    let mut rows: Vec<ManyRow> = Vec::new();
    let mut at: HashMap<(String, &'static str), usize> = HashMap::new();
    let mut put = |metric: String, unit: &'static str, base_cell: SideCell, side: usize, cell: SideCell| {
        let i = *at.entry((metric.clone(), unit)).or_insert_with(|| {
            rows.push(ManyRow { metric, unit, cells: vec![None; groups.len()] });
            rows.len() - 1
        });
        rows[i].cells[baseline].get_or_insert(base_cell);
        rows[i].cells[side] = Some(cell);
    };
    for (pair, side) in pairs.iter().zip(&others) {
        let other = &groups[*side];
        for (m, verdicts) in pair.matrices.iter().zip(&pair.matrix_verdicts) {
            for (i, file) in m.file_sizes.iter().enumerate() {
                for (j, record) in m.record_sizes.iter().enumerate() {
                    let Some(ratio) = m.ratios[i][j] else { continue };
                    let key = CellKey {
                        test: m.test.clone(),
                        file_size: Some(*file),
                        record_size: Some(*record),
                        variant: String::new(),
                    };
                    let (Some(sa), Some(sb)) = (base.cells.get(&key), other.cells.get(&key)) else { continue };
                    let base_cell =
                        SideCell { value: sa.median, change_pct: None, verdict: None, partial: sa.partial_samples > 0 };
                    let cell = SideCell {
                        value: sb.median,
                        change_pct: Some((ratio - 1.0) * 100.0),
                        verdict: verdicts[i][j].clone(),
                        partial: sb.partial_samples > 0,
                    };
                    put(key.describe(), m.unit, base_cell, *side, cell);
                }
            }
        }
        for s in &pair.scalars {
            // The pair marks a row partial when either side took partial samples in; the
            // baseline's own mark is not kept apart there, so both cells carry the pair's.
            let base_cell = SideCell { value: s.a, change_pct: None, verdict: None, partial: s.partial };
            let cell = SideCell {
                value: s.b,
                change_pct: Some(s.change_pct),
                verdict: Some(s.verdict.clone()),
                partial: s.partial,
            };
            put(s.metric.clone(), s.unit, base_cell, *side, cell);
        }
        for (metric, unit, base_cell, cell) in pair.curves.iter().flat_map(curve_cells) {
            put(metric, unit, base_cell, *side, cell);
        }
    }
    ManyComparison { suite: base.suite.clone(), baseline, sides, rows, pairs, others }
}

/// A curve's own figures as rows (the maximum within the bound, the overall response time):
/// the baseline's cell and the other side's, where both sides have the figure.
fn curve_cells(row: &CurveRow) -> Vec<(String, &'static str, SideCell, SideCell)> {
    let within = match &row.bound_a {
        Some(bound) => format!("{}: max within {bound}", row.curve),
        None => format!("{}: max within the bound", row.curve),
    };
    let figures = [
        (within, "IOPS", &row.max_within_bound),
        (format!("{}: overall response time", row.curve), "ns", &row.overall_response_time),
    ];
    figures
        .into_iter()
        .filter_map(|(metric, unit, f)| {
            let (a, b) = (f.a?, f.b?);
            let base_cell = SideCell { value: a, change_pct: None, verdict: None, partial: false };
            let cell = SideCell { value: b, change_pct: f.change_pct, verdict: f.verdict.clone(), partial: false };
            Some((metric, unit, base_cell, cell))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::CellStats;
    use crate::shape::SuiteShape;

    fn group(name: &str, id: i64, cells: &[(&str, Vec<f64>)]) -> Group {
        let mut g = Group::of(name, &[], SuiteShape::PLAIN);
        g.suite = "bonnie".into();
        g.run_ids = vec![id];
        for (test, values) in cells {
            let key = CellKey { test: test.to_string(), file_size: None, record_size: None, variant: String::new() };
            g.cells.insert(key, CellStats::of(values.clone(), "KB/s"));
        }
        g
    }

    #[test]
    fn a_side_is_told_by_the_labels_all_its_runs_share_and_not_every_side_has() {
        let l = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        let (x1, x2) = (l(&[("cluster", "x"), ("level", "1")]), l(&[("cluster", "x"), ("level", "2")]));
        let y = l(&[("cluster", "y"), ("level", "1")]);
        let z = l(&[("cluster", "z"), ("level", "1"), ("site", "lab")]);
        let named = distinguishing_labels(&[vec![&x1[..], &x2[..]], vec![&y[..]], vec![&z[..]]]);
        assert_eq!(named, [vec!["cluster=x"], vec!["cluster=y", "level=1"], vec!["cluster=z", "level=1", "site=lab"]]);
        let same = distinguishing_labels(&[vec![&y[..]], vec![&y[..]]]);
        assert_eq!(same, [Vec::<String>::new(), Vec::new()]);
    }

    #[test]
    fn letters_run_past_z() {
        let letters: Vec<String> = [0, 1, 25, 26, 27, 51, 52].iter().map(|i| side_letter(*i)).collect();
        assert_eq!(letters, ["A", "B", "Z", "AA", "AB", "AZ", "BA"]);
    }

    #[test]
    fn every_side_is_a_column_against_the_baseline_with_its_change_and_verdict() {
        let four = |v: f64| vec![v, v * 1.01, v * 0.99, v * 1.005];
        let groups = [
            group("fast", 1, &[("write", four(200.0)), ("read", four(400.0))]),
            group("base", 2, &[("write", four(100.0)), ("read", four(400.0))]),
            group("half", 3, &[("write", four(50.0))]),
        ];
        let m = compare_many(&groups, 1, Region::default());
        assert_eq!(m.others, [0, 2]);
        assert_eq!(m.pairs.len(), 2);
        assert_eq!((m.pairs[0].a.as_str(), m.pairs[0].b.as_str()), ("base", "fast"));
        let row = |name: &str| m.rows.iter().find(|r| r.metric == name).unwrap();
        let write = row("write");
        let base = write.cells[1].as_ref().unwrap();
        assert_eq!((base.change_pct, base.verdict.is_none()), (None, true));
        let fast = write.cells[0].as_ref().unwrap();
        assert!((fast.change_pct.unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(fast.verdict.as_ref().unwrap().verdict, "faster");
        let half = write.cells[2].as_ref().unwrap();
        assert!((half.change_pct.unwrap() + 50.0).abs() < 1e-9);
        assert_eq!(half.verdict.as_ref().unwrap().verdict, "slower");
        // The third side has no read: its cell is empty, the others' are there.
        let read = row("read");
        assert!(read.cells[2].is_none());
        assert_eq!(read.cells[0].as_ref().unwrap().verdict.as_ref().unwrap().verdict, "within noise");
        assert_eq!(m.sides.iter().map(|s| s.letter.as_str()).collect::<Vec<_>>(), ["A", "B", "C"]);
    }
}
