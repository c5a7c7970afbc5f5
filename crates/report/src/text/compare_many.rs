//! `iomatrix compare A B C ...`'s text: one table with the sides as columns (each cell the
//! median, its % change against the baseline and the verdict), then per pair against the
//! baseline what differs, its ratio matrices and per-operation tables.

use super::compare::{
    caching_of, flagged, gate_against, matrices, noise, not_complete_heading, only_in, operations, partial_mark,
    partial_taken_in, sweep_hint, verdict_words, what_differs, Letters,
};
use crate::table::{Column, Table};
use iomatrix_analysis::{CacheFlags, Comparison, Gate, ManyComparison, Side};
use iomatrix_core::human;
use std::fmt::Write;

/// The whole N-sided comparison. `flags[i]` is side i's `--limit` findings.
pub fn comparison(m: &ManyComparison, flags: Option<&[CacheFlags]>, all: bool) -> String {
    let mut out = String::new();
    let base = &m.sides[m.baseline];
    let _ = writeln!(
        out,
        "compare ({} suite), {} sides against the baseline {}; figures are medians over each side's runs",
        m.suite,
        m.sides.len(),
        base.letter
    );
    for (i, side) in m.sides.iter().enumerate() {
        let role = if i == m.baseline { ", the baseline" } else { "" };
        // Named as sweep --rows names its systems, where the side was not given by those labels.
        let labels: Vec<&str> =
            side.labels.iter().map(String::as_str).filter(|l| !side.name.split(',').any(|part| part == *l)).collect();
        let labels = if labels.is_empty() { String::new() } else { format!(": {}", labels.join(" ")) };
        let _ = writeln!(out, "  {} = {} (runs {}){role}{labels}", side.letter, side.name, runs(&side.runs));
    }
    for (pair, other) in m.pairs.iter().zip(&m.others) {
        let letters = (base.letter.as_str(), m.sides[*other].letter.as_str());
        let _ = writeln!(out, "\n{} against {}:", letters.1, letters.0);
        out.push_str(&indented(&what_differs(pair, letters, all)));
    }
    out.push_str(&not_complete(m));
    if let Some(text) = m.pairs.iter().map(partial_taken_in).find(|t| !t.is_empty()) {
        out.push_str(&text);
    }
    out.push_str(&table(m));
    for (pair, other) in m.pairs.iter().zip(&m.others) {
        let letters = (base.letter.as_str(), m.sides[*other].letter.as_str());
        out.push_str(&pair_section(pair, letters, &m.sides));
    }
    if let Some(flags) = flags {
        let sides: Vec<(&str, &CacheFlags)> = m.sides.iter().map(|s| s.letter.as_str()).zip(flags).collect();
        out.push_str(&caching_of(&sides));
    }
    out
}

/// `--fail-if-slower` over every side against the baseline: each side's findings in turn.
pub fn gates(threshold: f64, metric: Option<&str>, m: &ManyComparison, gates: &[Gate]) -> String {
    let base = &m.sides[m.baseline].letter;
    let mut out = String::new();
    for (gate, other) in gates.iter().zip(&m.others) {
        let text = gate_against(threshold, metric, gate, base);
        let _ = write!(out, "\n{} against {}:{text}", m.sides[*other].letter, base);
    }
    out
}

/// Each side's cells left out of its medians (not whole): the baseline's once.
fn not_complete(m: &ManyComparison) -> String {
    let base = &m.sides[m.baseline].letter;
    let mut lines = String::new();
    for l in m.pairs.first().map_or(&[][..], |p| &p.left_out_a[..]) {
        let _ = writeln!(lines, "  {base}: {}", l.describe());
    }
    for (pair, other) in m.pairs.iter().zip(&m.others) {
        for l in &pair.left_out_b {
            let _ = writeln!(lines, "  {}: {}", m.sides[*other].letter, l.describe());
        }
    }
    match (lines.is_empty(), m.pairs.first()) {
        (false, Some(first)) => format!("{}{lines}", not_complete_heading(first.partial)),
        _ => String::new(),
    }
}

fn runs(ids: &[i64]) -> String {
    ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(",")
}

fn indented(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// The one table: a row per compared figure, the baseline's median, then per other side its
/// median, % change against the baseline and verdict.
fn table(m: &ManyComparison) -> String {
    if m.rows.is_empty() {
        return String::new();
    }
    let base = &m.sides[m.baseline].letter;
    let name_width = m.rows.iter().map(|r| r.metric.len() + r.unit.len() + 5).max().unwrap_or(6).clamp(6, 60);
    let mut columns = vec![Column::left("metric", name_width), Column::right(base.as_str(), 12)];
    let others = m.sides.len() - 1;
    for (k, side) in m.sides.iter().filter(|s| s.letter != *base).enumerate() {
        columns.push(Column::right(side.letter.as_str(), 12).gap(" | "));
        columns.push(Column::right(format!("vs {base}"), 9));
        // The last column unpadded: no line ends in blanks.
        columns.push(if k + 1 == others { Column::free("verdict") } else { Column::left("verdict", 12) });
    }
    let mut t = Table::new(columns);
    for row in &m.rows {
        let base_cell = row.cells[m.baseline].as_ref();
        let mut line = vec![
            format!("{} ({}){}", row.metric, row.unit, partial_mark(base_cell.is_some_and(|c| c.partial))),
            base_cell.map_or_else(|| "-".to_string(), |c| human::significant(c.value)),
        ];
        for (_, cell) in row.cells.iter().enumerate().filter(|(i, _)| *i != m.baseline) {
            match cell {
                Some(c) => line.extend([
                    format!("{}{}", human::significant(c.value), partial_mark(c.partial)),
                    c.change_pct.map_or_else(|| "-".to_string(), human::signed_percent),
                    c.verdict.as_ref().map_or_else(|| "-".to_string(), |v| verdict_words(&row.metric, v.verdict)),
                ]),
                None => line.extend(["-".to_string(), "-".to_string(), "-".to_string()]),
            }
        }
        t.row(line);
    }
    format!(
        "\nEach side against {base}: its median, the % change from {base}'s, and the verdict of the rank test of the \
         samples (Mann-Whitney, two-sided, {}% level; \"-\": no such figure)\n{}",
        iomatrix_analysis::ALPHA * 100.0,
        t.render()
    )
}

/// One pair against the baseline: its ratio matrices, per-operation tables, verdict counts,
/// cells only one of them has and the sweep that would compare those.
fn pair_section(c: &Comparison, letters: Letters, sides: &[Side]) -> String {
    let mut body = String::new();
    body.push_str(&matrices(c, letters));
    body.push_str(&operations(c, letters));
    body.push_str(&flagged(c, letters));
    body.push_str(&noise(c, letters));
    body.push_str(&only_in(c, letters));
    if let Some(h) = &c.sweep_hint {
        body.push_str(&sweep_hint(h, c.only_in_a.len() + c.only_in_b.len(), letters));
    }
    if body.is_empty() {
        return body;
    }
    let name = |letter: &str| sides.iter().find(|s| s.letter == letter).map_or("", |s| s.name.as_str()).to_string();
    format!(
        "\n== {} ({}) against the baseline {} ({})\n{}",
        letters.1,
        name(letters.1),
        letters.0,
        name(letters.0),
        body.trim_start_matches('\n')
    )
}
