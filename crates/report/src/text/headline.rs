//! Seed 003's headline rows in `compare`'s text: per phase of connections and per backup walk,
//! A, B, the % change and its verdict, in the seed's order; and which side is a published table.

use crate::table::{Column, Table};
use iomatrix_analysis::Comparison;
use iomatrix_core::human;
use std::fmt::Write;

/// "B is a published table (runs #2): ...", a line per published side; empty when none is.
pub fn published(c: &Comparison) -> String {
    let mut out = String::new();
    for p in &c.published {
        let runs: Vec<String> = p.runs.iter().map(|id| format!("#{id}")).collect();
        let _ = writeln!(
            out,
            "{} is a published table (runs {}): figures as printed, with no environment and no samples behind them \
             (no verdict from one value a side)",
            p.side,
            runs.join(",")
        );
    }
    out
}

/// Each cell's headline table; a figure a side does not know is `unknown`, its change `-`.
pub fn tables(c: &Comparison) -> String {
    let mut out = String::new();
    for t in &c.headline {
        let _ = writeln!(out, "\n{}: seed 003's rows, A and B (medians over the samples) and % change", t.cell);
        let mut table = Table::new(vec![
            Column::left("figure", 44),
            Column::right("A", 12),
            Column::right("B", 12),
            Column::right("change", 9),
            Column::free("verdict").gap("  "),
        ]);
        let value = |v: Option<f64>| v.map_or_else(|| "unknown".to_string(), human::significant);
        for r in &t.rows {
            table.row([
                format!("{} ({})", r.figure, r.unit),
                value(r.a),
                value(r.b),
                r.change_pct.map_or_else(|| "-".to_string(), human::signed_percent),
                r.verdict.as_ref().map(|v| v.describe()).unwrap_or_default(),
            ]);
        }
        out.push_str(&table.render());
    }
    out
}
