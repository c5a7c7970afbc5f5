//! The one table layout every text table of iomatrix is written through: `show`'s tables, the
//! clients table, compare's and sweep's tables, the report's terminal matrices.
//!
//! A table is columns (a header, an alignment, a width and the gap before it) and rows of text
//! that the caller made with [`iomatrix_core::human`], the one number formatter. Widths follow
//! Rust's own padding: a column is at least its width wide and grows for a longer entry in that
//! row only ([`Width::AtLeast`]), or every row takes its widest entry ([`Width::Fit`]), so the
//! tables iomatrix printed before this layout existed print byte for byte the same.

use std::fmt::Write;

/// Where an entry sits in its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right: text starts at the column's left edge.
    Left,
    /// Padded on the left: figures line up on their last digit.
    Right,
}

/// How wide a column is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// At least this many characters; a longer entry widens its own row only (Rust's `{:>8}`).
    AtLeast(usize),
    /// As wide as the widest entry of the column (header included) and at least this wide.
    Fit(usize),
    /// Not padded: the entry as it is (a last column of free text).
    Free,
}

/// One column: its header, alignment, width and the text between it and the column before.
#[derive(Clone, Debug)]
pub struct Column {
    header: String,
    align: Align,
    width: Width,
    gap: &'static str,
}

impl Column {
    /// A left-aligned column at least `width` wide.
    pub fn left(header: impl Into<String>, width: usize) -> Self {
        Self { header: header.into(), align: Align::Left, width: Width::AtLeast(width), gap: " " }
    }

    /// A right-aligned column at least `width` wide.
    pub fn right(header: impl Into<String>, width: usize) -> Self {
        Self { header: header.into(), align: Align::Right, width: Width::AtLeast(width), gap: " " }
    }

    /// A right-aligned column as wide as its widest entry.
    pub fn fit_right(header: impl Into<String>) -> Self {
        Self { header: header.into(), align: Align::Right, width: Width::Fit(0), gap: " " }
    }

    /// A left-aligned column as wide as its widest entry.
    pub fn fit_left(header: impl Into<String>) -> Self {
        Self { header: header.into(), align: Align::Left, width: Width::Fit(0), gap: " " }
    }

    /// Free text, not padded (the last column).
    pub fn free(header: impl Into<String>) -> Self {
        Self { header: header.into(), align: Align::Left, width: Width::Free, gap: " " }
    }

    /// The text between this column and the one before it (one space unless given).
    #[must_use]
    pub fn gap(mut self, gap: &'static str) -> Self {
        self.gap = gap;
        self
    }

    /// A fitted column at least `min` wide.
    #[must_use]
    pub fn min(mut self, min: usize) -> Self {
        if let Width::Fit(_) = self.width {
            self.width = Width::Fit(min);
        }
        self
    }
}

/// A text table: columns, then rows of entries, written as lines by [`Table::render`].
#[derive(Clone, Debug)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
    indent: String,
    header: bool,
    trim: bool,
}

impl Table {
    /// A table with these columns, a header line, no indent, padding kept.
    pub fn new(columns: Vec<Column>) -> Self {
        Self { columns, rows: Vec::new(), indent: String::new(), header: true, trim: false }
    }

    /// Text before every line (a table nested under a heading).
    #[must_use]
    pub fn indent(mut self, indent: impl Into<String>) -> Self {
        self.indent = indent.into();
        self
    }

    /// Leave the header line out.
    #[must_use]
    pub fn without_header(mut self) -> Self {
        self.header = false;
        self
    }

    /// Drop the spaces that padding leaves at a line's end.
    #[must_use]
    pub fn trimmed(mut self) -> Self {
        self.trim = true;
        self
    }

    /// Adds a row; missing entries at its end are blank, extra ones are an error of the caller's
    /// (debug builds stop on it).
    pub fn row<I, S>(&mut self, entries: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = entries.into_iter().map(Into::into).collect();
        debug_assert!(row.len() <= self.columns.len(), "a row with more entries than the table has columns");
        row.resize(self.columns.len(), String::new());
        self.rows.push(row);
        self
    }

    /// Whether no row has been added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table's lines, each ending in a newline.
    pub fn render(&self) -> String {
        let fitted: Vec<Option<usize>> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| match c.width {
                Width::Fit(min) => Some(
                    self.rows
                        .iter()
                        .map(|r| r[i].chars().count())
                        .chain([c.header.chars().count(), min])
                        .max()
                        .unwrap_or(min),
                ),
                _ => None,
            })
            .collect();
        let mut out = String::new();
        let headers: Vec<&str> = self.columns.iter().map(|c| c.header.as_str()).collect();
        if self.header {
            self.line(&mut out, &headers, &fitted);
        }
        for row in &self.rows {
            let entries: Vec<&str> = row.iter().map(String::as_str).collect();
            self.line(&mut out, &entries, &fitted);
        }
        out
    }

    fn line(&self, out: &mut String, entries: &[&str], fitted: &[Option<usize>]) {
        let start = out.len();
        out.push_str(&self.indent);
        for (i, (column, entry)) in self.columns.iter().zip(entries).enumerate() {
            if i > 0 {
                out.push_str(column.gap);
            }
            let width = match column.width {
                Width::AtLeast(w) => w,
                Width::Fit(_) => fitted[i].unwrap_or(0),
                Width::Free => 0,
            };
            let _ = match column.align {
                Align::Left => write!(out, "{entry:<width$}"),
                Align::Right => write!(out, "{entry:>width$}"),
            };
        }
        if self.trim {
            let kept = out[start..].trim_end().len();
            out.truncate(start + kept);
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_widths_pad_as_rust_does_and_grow_for_a_long_entry_in_its_row_only() {
        let mut t = Table::new(vec![
            Column::left("metric", 10),
            Column::right("A", 6),
            Column::right("change", 8),
            Column::free("verdict").gap("  "),
        ]);
        t.row(["read", "1.0", "+3.0%", "faster"]);
        t.row(["a much longer name", "2.5", "-", "no verdict"]);
        let expected = format!(
            "{:<10} {:>6} {:>8}  verdict\n{:<10} {:>6} {:>8}  faster\n{:<10} {:>6} {:>8}  no verdict\n",
            "metric", "A", "change", "read", "1.0", "+3.0%", "a much longer name", "2.5", "-"
        );
        assert_eq!(t.render(), expected);
    }

    #[test]
    fn fitted_columns_take_their_widest_entry_and_trimmed_lines_end_without_spaces() {
        let mut t = Table::new(vec![Column::fit_right("file kB"), Column::fit_right("4").gap("  ")]).trimmed();
        t.row(["64", "524487"]);
        t.row(["1048576", ""]);
        assert_eq!(t.render(), "file kB       4\n     64  524487\n1048576\n");
    }

    #[test]
    fn indent_and_no_header_and_short_rows() {
        let mut t = Table::new(vec![Column::left("x", 3), Column::right("y", 3)]).indent("  ").without_header();
        t.row(["a"]);
        assert_eq!(t.render(), "  a      \n");
        assert!(!t.is_empty());
    }

    #[test]
    fn widths_count_characters_not_bytes() {
        let mut t = Table::new(vec![Column::left("µs", 4), Column::right("n", 2)]);
        t.row(["é", "1"]);
        assert_eq!(t.render(), "µs    n\né     1\n");
    }
}
