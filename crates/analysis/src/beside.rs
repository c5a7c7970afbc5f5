//! What a suite measures beside each cell's figure ([`crate::SuiteShape::beside`]: the clients'
//! %CPU, seed 002's column beside every MB/s) as compare rows of their own: each after the row
//! of its cell, with A, B, % change and a verdict in the metric's own direction (less CPU for
//! the same work is better).

use crate::cells::{CellKey, Group};
use crate::noise::judge;
use crate::row::{change_pct, ScalarRow};
use iomatrix_core::figures::Direction;

/// The row of one cell's figure measured beside its rate: "write 2m/8k %CPU".
fn row(key: &CellKey, a: &Group, b: &Group) -> Vec<ScalarRow> {
    let (Some(ma), Some(mb)) = (a.beside.get(key), b.beside.get(key)) else { return Vec::new() };
    let mut rows = Vec::new();
    for m in a.shape.beside {
        let (Some(sa), Some(sb)) = (ma.get(&m.id), mb.get(&m.id)) else { continue };
        rows.push(ScalarRow {
            metric: format!("{} {}", key.describe(), m.unit),
            unit: "%",
            a: sa.median,
            b: sb.median,
            change_pct: change_pct(sa.median, sb.median),
            verdict: judge(&sa.values, &sb.values, m.direction == Direction::HigherIsBetter),
            partial: sa.partial_samples + sb.partial_samples > 0,
        });
    }
    rows
}

/// `scalars` with each cell's figures measured beside it after its row; those of cells laid
/// out in matrices (IOzone's) follow the rows, in the cells' order.
pub fn interleave(scalars: Vec<ScalarRow>, a: &Group, b: &Group) -> Vec<ScalarRow> {
    let keys: Vec<&CellKey> = a.beside.keys().filter(|k| b.beside.contains_key(*k)).collect();
    let mut placed = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(scalars.len() + keys.len());
    for s in scalars {
        let key = keys.iter().find(|k| k.describe() == s.metric).copied();
        out.push(s);
        if let Some(key) = key {
            out.extend(row(key, a, b));
            placed.insert(key);
        }
    }
    for key in keys.into_iter().filter(|k| !placed.contains(k)) {
        out.extend(row(key, a, b));
    }
    out
}
