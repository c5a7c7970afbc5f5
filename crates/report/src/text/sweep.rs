//! `iomatrix sweep`'s text: the levels' values and rates of change (seed 001's "Rate of Change"
//! tables with their Total column), the averages and totals per direction, the read/write ratios,
//! the cells left out, and the derived figures, apart and marked.

use crate::table::{Column, Table};
use iomatrix_analysis::{Derived, Direction, Partial, Sweep, SweepRow};
use iomatrix_core::{human, ByteSize};
use std::collections::BTreeSet;
use std::fmt::Write;

/// How the rows are split into tables (`--split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// One table per block (record) size.
    BlockSize,
    /// One table per direction (reads, writes, other).
    Direction,
}

/// What a sweep prints: the sweep, how its rows are split, each system apart (`--rows`), what was
/// not whole, and the derived figures.
pub struct SweepText<'a> {
    /// The sweep to print: its levels and rows.
    pub sweep: &'a Sweep,
    /// How the rows are split into tables (`--split`); None prints one table.
    pub split: Option<Split>,
    /// With `--rows LABEL`: the label and the sweep of each system's rows apart.
    pub systems: Option<(&'a str, &'a Sweep)>,
    /// Whether partial cells were taken in.
    pub partial: Partial,
    /// The cells left out of the levels, named.
    pub left_out: &'a [String],
    /// The rows whose medians took in samples of partial cells.
    pub partial_rows: &'a BTreeSet<String>,
    /// The figures derived from the swept ones (`--derive`), printed after the tables.
    pub derived: &'a [Derived],
    /// What the suite measures beside each figure (its %CPU), swept over the same levels: a
    /// table each, after the figures', outside the summaries.
    pub beside: &'a [Sweep],
}

impl SweepText<'_> {
    /// The whole text `sweep` prints.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some((label, systems)) = self.systems {
            let _ = writeln!(out, "each {label} apart (medians where a level has several samples)");
            out.push_str(&rows_tables(systems, &systems.rows.iter().collect::<Vec<_>>(), false));
            let _ = writeln!(
                out,
                "\nthe average over each {label} (the mean of their figures at each level; mean: over the levels, \
                 the Total of seed 001's Average row):"
            );
        }
        out.push_str(&split_tables(self.sweep, self.split, self.systems.is_some()));
        for b in self.beside {
            out.push_str(&beside(b));
        }
        out.push_str(&summaries(self.sweep));
        out.push_str(&self.not_whole());
        out.push_str(&derived(self.sweep, self.derived));
        out
    }

    /// The cells left out of the levels (not whole) and the rows that took in partial ones.
    fn not_whole(&self) -> String {
        let mut out = String::new();
        if !self.left_out.is_empty() {
            let _ = writeln!(
                out,
                "\nNOT COMPLETE: clients or connections failed in these cells, or they were disturbed (did not run for \
                 their time: --include-disturbed takes them in); left out of the levels' medians{}:",
                if self.partial == Partial::LeftOut {
                    " (--include-partial takes partial ones in, marked)"
                } else {
                    ""
                }
            );
            for l in self.left_out {
                let _ = writeln!(out, "  {l}");
            }
        }
        if !self.partial_rows.is_empty() {
            let _ = writeln!(
                out,
                "\nPARTIAL CELLS TAKEN IN (--include-partial): these rows' medians include samples of cells where \
                 some clients or connections failed: {}",
                self.partial_rows.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
        out
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), human::signed_percent)
}

/// A figure as the tables print it: by the one rule of `human::significant` (two decimals at
/// least, as seed 001's MB/s: 130.92, never 131), or `--precision`'s decimals.
fn value(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), human::significant)
}

/// The first column of a sweep's tables: the rows' names, at least 14 wide.
fn name_column(header: &str) -> Column {
    Column::fit_left(header).min(14)
}

/// The steps between neighbouring levels and the Total, as columns.
fn step_columns(s: &Sweep) -> impl Iterator<Item = Column> + '_ {
    s.levels.windows(2).map(|w| Column::right(format!("{}->{}", w[0], w[1]), 12)).chain([Column::right("Total", 12)])
}

/// The sweep's tables: one per block size or direction when asked, else one.
fn split_tables(s: &Sweep, split: Option<Split>, with_mean: bool) -> String {
    let mut out = format!("sweep by {} ({}; medians where a level has several samples)\n", s.by, s.unit);
    let mut groups: Vec<(String, Vec<&SweepRow>)> = Vec::new();
    for r in &s.rows {
        let name = match split {
            None => String::new(),
            Some(Split::BlockSize) => {
                r.record_size.map(|b| format!("block size {}", ByteSize(b))).unwrap_or("no block size".into())
            }
            Some(Split::Direction) => r.direction.name().to_string(),
        };
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, rows)) => rows.push(r),
            None => groups.push((name, vec![r])),
        }
    }
    match split {
        Some(Split::BlockSize) => groups.sort_by_key(|(_, rows)| rows[0].record_size),
        Some(Split::Direction) => groups.sort_by_key(|(_, rows)| rows[0].direction),
        None => {}
    }
    for (name, rows) in &groups {
        if !name.is_empty() {
            let _ = writeln!(out, "\n== {name}");
        }
        out.push_str(&rows_tables(s, rows, with_mean));
    }
    out
}

/// A figure measured beside the rates (the clients' %CPU) at each level: its own table, lower is
/// better, outside the summaries, which are the rates'.
fn beside(s: &Sweep) -> String {
    let mut table = Table::new(
        std::iter::once(name_column("cell")).chain(s.levels.iter().map(|l| Column::right(l.as_str(), 12))).collect(),
    );
    for r in &s.rows {
        table.row(std::iter::once(r.cell.clone()).chain(r.values.iter().map(|v| value(*v))));
    }
    format!(
        "\n{} per level (of the clients, % of a core, beside each figure above; lower is better for the same work; \
         not in the summaries)\n{}",
        s.unit,
        table.render()
    )
}

/// The values per level of some rows (with `with_mean`, and the mean over the levels: the Total
/// of seed 001's Average row), then their rate of change.
fn rows_tables(s: &Sweep, rows: &[&SweepRow], with_mean: bool) -> String {
    let per_row_unit = rows.iter().any(|r| r.unit != s.unit);
    let mut values = Table::new(
        std::iter::once(name_column("cell"))
            .chain(per_row_unit.then(|| Column::right("unit", 10)))
            .chain(s.levels.iter().map(|l| Column::right(l.as_str(), 12)))
            .chain(with_mean.then(|| Column::right("mean", 12)))
            .collect(),
    );
    for r in rows {
        values.row(
            std::iter::once(r.cell.clone())
                .chain(per_row_unit.then(|| r.unit.clone()))
                .chain(r.values.iter().map(|v| value(*v)))
                .chain(with_mean.then(|| value(r.mean_over_levels))),
        );
    }
    let mut changes = Table::new(std::iter::once(name_column("cell")).chain(step_columns(s)).collect());
    for r in rows {
        changes.row(
            std::iter::once(r.cell.clone())
                .chain(r.steps_pct.iter().map(|p| pct(*p)))
                .chain([pct(r.first_to_last_pct)]),
        );
    }
    format!(
        "{}\nRate of change (Total: first level to last, as seed 001's Total column)\n{}",
        values.render(),
        changes.render()
    )
}

/// Averages per direction, the directions' totals, and the read/write ratios.
fn summaries(s: &Sweep) -> String {
    let mut out = String::new();
    if !s.excluded.is_empty() {
        let _ = writeln!(
            out,
            "\nLeft out of every summary below at the user's word (--exclude; their rows stand above): {}",
            s.excluded.join(", ")
        );
    }
    out.push_str("\nAverages (mean of the rows' % changes)\n");
    // As wide as the rows' names above, so the averages line up under their tables.
    let width = s.rows.iter().map(|r| r.cell.chars().count()).max().unwrap_or(4).max(14);
    let mut averages = Table::new(std::iter::once(Column::left("rows", width)).chain(step_columns(s)).collect());
    for d in &s.directions {
        averages.row(
            std::iter::once(format!("{} ({})", d.direction.name(), d.rows))
                .chain(d.average_steps_pct.iter().map(|p| pct(*p)))
                .chain([pct(d.average_total_pct)]),
        );
    }
    if s.directions.len() > 1 {
        averages.row(
            std::iter::once(format!("all ({})", s.rows.iter().filter(|r| !r.excluded).count()))
                .chain(s.average_steps_pct.iter().map(|p| pct(*p)))
                .chain([pct(s.average_first_to_last_pct)]),
        );
    }
    out.push_str(&averages.render());
    let summed: Vec<String> = s
        .directions
        .iter()
        .filter(|d| d.direction != Direction::Other)
        .map(|d| format!("{} {}", d.direction.name(), pct(d.total_pct)))
        .collect();
    if !summed.is_empty() {
        let _ = writeln!(
            out,
            "\nTotals by direction (each row's Total summed, as seed 001's \"reads increased over 500%\"): {}",
            summed.join(", ")
        );
    }
    if !s.read_write.is_empty() {
        out.push_str("\nRead/write ratio per level (medians)\n");
        for (level, what, ratio) in &s.read_write {
            let _ = writeln!(out, "  {} = {level}, {what}: {}", s.by, human::fixed(*ratio, 2));
        }
    }
    if !s.read_write_by_block.is_empty() {
        out.push_str(
            "\nRead/write ratio per block size over all levels (mean: the mean of every read sample over the mean of \
             every write sample, as seed 001's 5.63:1; median: the same with medians)\n",
        );
        for b in &s.read_write_by_block {
            let _ = writeln!(
                out,
                "  {}: mean {}:1, median {}:1 ({} reads, {} writes)",
                b.what,
                human::fixed(b.mean_ratio, 2),
                human::fixed(b.median_ratio, 2),
                b.reads,
                b.writes
            );
        }
    }
    out
}

/// The derived figures, apart from the measured ones and marked as such.
fn derived(s: &Sweep, derived: &[Derived]) -> String {
    let mut out = String::new();
    for d in derived {
        out.push_str(&super::derived::heading(d));
        let mut table = Table::new(
            std::iter::once(name_column("derived"))
                .chain(s.levels.iter().map(|l| Column::right(l.as_str(), 12)))
                .collect(),
        );
        for r in &d.rows {
            table.row(std::iter::once(r.cell.clone()).chain(r.values.iter().map(|v| value(*v))));
        }
        out.push_str(&table.render());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_analysis::{sweep, CellKey, DerivedRow, SweepLevel};
    use std::collections::BTreeMap;

    fn level(name: &str, cells: &[(&str, u64, f64)]) -> SweepLevel {
        let mut map = BTreeMap::new();
        for (op, record, v) in cells {
            let key =
                CellKey { test: op.to_string(), file_size: None, record_size: Some(*record), variant: String::new() };
            map.insert(key, vec![*v]);
        }
        SweepLevel { level: name.into(), cells: map }
    }

    /// A row with its own unit gets the unit column; names wider than 14 widen the first column
    /// of every table alike; small figures keep two places, large ones none.
    #[test]
    fn the_tables_take_a_unit_column_and_the_widest_name() {
        let mut s = sweep(
            "sys",
            "KB/s",
            vec![
                level("s1", &[("read", 4096, 1000.0), ("seeks per second", 65536, 50.0)]),
                level("s2", &[("read", 4096, 2000.0), ("seeks per second", 65536, 55.5)]),
            ],
        );
        let seeks = s.rows.iter_mut().find(|r| r.cell.starts_with("seeks")).expect("the seeks row");
        seeks.unit = "seeks/s".into();
        let rows: Vec<&SweepRow> = s.rows.iter().collect();
        let width = rows.iter().map(|r| r.cell.len()).max().unwrap().max(14);
        let mut expected = format!("{:<width$} {:>10} {:>12} {:>12}\n", "cell", "unit", "s1", "s2");
        for r in &rows {
            let v: Vec<String> = r.values.iter().map(|v| value(*v)).collect();
            expected += &format!("{:<width$} {:>10} {:>12} {:>12}\n", r.cell, r.unit, v[0], v[1]);
        }
        expected += "\nRate of change (Total: first level to last, as seed 001's Total column)\n";
        expected += &format!("{:<width$} {:>12} {:>12}\n", "cell", "s1->s2", "Total");
        for r in &rows {
            expected += &format!("{:<width$} {:>12} {:>12}\n", r.cell, pct(r.steps_pct[0]), pct(r.first_to_last_pct));
        }
        assert!(width > 14, "a name wider than the first column's least width");
        assert_eq!(rows_tables(&s, &rows, false), expected);
        assert!(
            expected.contains(" 50.00 ") && expected.contains(" 55.50\n") && expected.contains(" 2000.00\n"),
            "{expected}"
        );
    }

    #[test]
    fn derived_figures_are_apart_and_marked_with_their_factor() {
        let s = sweep("sys", "KB/s", vec![level("s1", &[("read", 4096, 1.0)]), level("s2", &[("read", 4096, 2.0)])]);
        let d = Derived {
            name: "disk".into(),
            formula: "disk = read * 2".into(),
            factor: 2.0,
            derived: true,
            rows: vec![DerivedRow { cell: "disk (from read 4k)".into(), values: vec![Some(2.0), None] }],
        };
        let expected = format!(
            "\nDerived, not measured (nothing stored): disk = read * 2 (the factor is 2.0000)\n\
             {:<19} {:>12} {:>12}\n{:<19} {:>12} {:>12}\n",
            "derived", "s1", "s2", "disk (from read 4k)", "2.00", "-"
        );
        assert_eq!(derived(&s, &[d]), expected);
    }

    /// A name of other letters than ASCII (a label's value) is as wide as its characters, so
    /// the columns after it line up.
    #[test]
    fn a_name_in_other_letters_lines_up_by_its_characters() {
        let s = sweep(
            "site",
            "KB/s",
            vec![
                level("a", &[("read zürich-west-é", 4096, 1.0), ("write plain-ascii-x", 4096, 1.0)]),
                level("b", &[("read zürich-west-é", 4096, 2.0), ("write plain-ascii-x", 4096, 2.0)]),
            ],
        );
        let rows: Vec<&SweepRow> = s.rows.iter().collect();
        let text = rows_tables(&s, &rows, false);
        let widths: BTreeSet<usize> = text.lines().take(3).map(|l| l.chars().count()).collect();
        assert_eq!(widths.len(), 1, "every line of the values table is as wide:\n{text}");
        // The widest name reads 19 characters; the other is stored in 20 bytes: the column is as
        // wide as the names read, not as they are stored.
        assert!(text.starts_with(&format!("{:<19} {:>12} {:>12}\n", "cell", "a", "b")), "{text}");
    }
}
