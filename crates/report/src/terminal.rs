//! Plain-ASCII tables for a terminal: no colour, no trailing spaces, column
//! widths computed from the content.

use crate::document::{marked, MARKS_LEGEND};
use crate::table::{Column, Table};
use iomatrix_core::{human, Matrix};

/// Appends `line` to `out` without trailing spaces, followed by a newline.
fn push_line(out: &mut String, line: &str) {
    out.push_str(line.trim_end());
    out.push('\n');
}

/// One matrix as a table: file sizes down, record sizes across.
///
/// ```text
/// Writer report (KB/s)
///          reclen kB
/// file kB        4        8
///      64   524487  1638743
///     128  1561553  2098744
/// ```
///
/// The first line is `"{title} ({unit})"`. Values are printed with
/// `decimals` digits after the point, right-aligned; a missing cell is left
/// blank; a partial cell's value carries `*` and a failed cell shows `failed`, with the legend
/// under the table ([`marked`]). Every column is as wide as its widest entry, and columns are
/// separated by two spaces. Each line ends with `'\n'`.
pub fn matrix_table(m: &Matrix, decimals: usize) -> String {
    const FILE_LABEL: &str = "file kB";
    const RECORD_LABEL: &str = "reclen kB";
    let files = m.file_sizes();
    let records = m.record_sizes();

    let mut table = Table::new(
        std::iter::once(Column::fit_right(FILE_LABEL))
            .chain(records.iter().map(|r| Column::fit_right(r.to_string()).gap("  ")))
            .collect(),
    )
    .trimmed();
    for &f in &files {
        table.row(std::iter::once(f.to_string()).chain(records.iter().map(|&r| match m.cell(f, r) {
            Some(c) => marked(c.state, || human::fixed(c.value, decimals)),
            None => String::new(),
        })));
    }
    let body = table.render();
    let file_w = body.lines().next().map_or(0, |header| header.find(FILE_LABEL).unwrap_or(0) + FILE_LABEL.len());

    let mut out = String::new();
    push_line(&mut out, &format!("{} ({})", m.title, m.unit));
    if !records.is_empty() {
        push_line(&mut out, &format!("{}{RECORD_LABEL}", " ".repeat(file_w + 2)));
    }
    out.push_str(&body);
    if m.any_not_complete() {
        push_line(&mut out, MARKS_LEGEND);
    }
    out
}

/// The first line of IOzone's classic table's header: the upper words of its two-word
/// columns, as IOzone 3.471 prints it (trailing spaces included).
const CLASSIC_HEADER_TOP: &str = "                                                              random    random     bkwd    record    stride                                    ";
/// The second line: every column, including those of tests that did not run.
const CLASSIC_HEADER: &str = "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread";

/// IOzone's classic table's test columns in order: the title of the test's matrix (IOzone's
/// report title), the width of a figure and the width of the blank IOzone leaves where the test
/// did not run (the blanks of the last seven columns come to 64 characters, one fewer than
/// their figures: IOzone 3.471's rows are 142 characters wide when those tests did not run).
const CLASSIC_COLUMNS: [(&str, usize, usize); 13] = [
    ("Writer report", 9, 9),
    ("Re-writer report", 9, 9),
    ("Reader report", 9, 9),
    ("Re-Reader report", 9, 9),
    ("Random read report", 9, 9),
    ("Random write report", 9, 9),
    ("Backward read report", 9, 9),
    ("Record rewrite report", 10, 10),
    ("Stride read report", 10, 9),
    ("Fwrite report", 9, 9),
    ("Re-Fwrite report", 9, 9),
    ("Fread report", 9, 9),
    ("Re-Fread report", 9, 9),
];

/// IOzone's classic table, which IOzone prints by default (and people paste into mail): its
/// two header lines, then a line per file and record size with the KB/s of each test under
/// IOzone's column for it, blank where the test did not run, as IOzone 3.471 lays it out
/// (`kB` right-aligned in 16 characters, `reclen` in 8, the tests in 9 or 10, trailing spaces
/// kept). `matrices` are the tests' KB/s matrices under IOzone's report titles ("Writer
/// report"...); one with another title (the mixed workload's) has no column. Figures are
/// rounded to whole KB/s as IOzone prints them; a cell not complete carries its mark
/// ([`marked`]), with the legend under the table.
pub fn iozone_classic_table(matrices: &[Matrix]) -> String {
    let column = |title: &str| matrices.iter().find(|m| m.title == title);
    let mut pairs: Vec<(u64, u64)> = CLASSIC_COLUMNS
        .iter()
        .filter_map(|(title, _, _)| column(title))
        .flat_map(|m| m.cells.iter().map(|c| (c.file_kib, c.record_kib)))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = format!("{CLASSIC_HEADER_TOP}\n{CLASSIC_HEADER}\n");
    let mut any_marked = false;
    for (file_kib, record_kib) in pairs {
        out.push_str(&format!("{file_kib:>16}{record_kib:>8}"));
        for (title, figure_width, blank_width) in CLASSIC_COLUMNS {
            match column(title).and_then(|m| m.cell(file_kib, record_kib)) {
                Some(c) => {
                    any_marked |= c.state != iomatrix_store::CellStateKind::Complete;
                    let text = marked(c.state, || format!("{:.0}", c.value));
                    out.push_str(&format!("{text:>figure_width$}"));
                }
                None => out.push_str(&" ".repeat(blank_width)),
            }
        }
        out.push('\n');
    }
    if any_marked {
        out.push_str(MARKS_LEGEND);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::MatrixCell;

    fn matrix(title: &str, cells: &[(u64, u64, f64)]) -> Matrix {
        Matrix {
            title: title.into(),
            unit: "KB/s".into(),
            cells: cells
                .iter()
                .map(|&(file_kib, record_kib, value)| MatrixCell::new(file_kib, record_kib, value))
                .collect(),
        }
    }

    fn assert_no_trailing_spaces(s: &str) {
        for (i, line) in s.lines().enumerate() {
            assert_eq!(line, line.trim_end(), "trailing space on line {}", i + 1);
            assert!(line.is_ascii());
        }
    }

    #[test]
    fn matrix_table_exact_layout() {
        let m = matrix(
            "Writer report",
            &[(64, 4, 524487.0), (64, 8, 1638743.0), (128, 4, 1561553.0), (128, 8, 2098744.0), (128, 128, 2660335.0)],
        );
        let expected = "\
Writer report (KB/s)
         reclen kB
file kB        4        8      128
     64   524487  1638743
    128  1561553  2098744  2660335
";
        assert_eq!(matrix_table(&m, 0), expected);
    }

    #[test]
    fn matrix_table_widens_for_big_values_and_decimals() {
        let m = matrix("Reader report", &[(1024, 4, 123456789.25), (1048576, 4, 1.5)]);
        let t = matrix_table(&m, 2);
        assert_no_trailing_spaces(&t);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[2], "file kB             4");
        assert_eq!(lines[3], "   1024  123456789.25");
        assert_eq!(lines[4], "1048576          1.50");
    }

    #[test]
    fn a_cell_that_is_not_whole_is_marked_in_the_table() {
        use iomatrix_store::CellStateKind;
        let mut m = matrix("Writer report", &[(64, 4, 524487.0), (64, 8, 1638743.0), (128, 4, 0.0)]);
        m.cells[1].state = CellStateKind::Partial;
        m.cells[2].state = CellStateKind::Failed;
        let t = matrix_table(&m, 0);
        assert_no_trailing_spaces(&t);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[3], "     64  524487  1638743*");
        assert_eq!(lines[4], "    128  failed");
        assert_eq!(lines[5], MARKS_LEGEND);
        // A whole matrix carries no legend.
        assert!(!matrix_table(&matrix("Writer report", &[(64, 4, 1.0)]), 0).contains("partial"));
    }

    #[test]
    fn matrix_table_empty_matrix() {
        let m = matrix("Writer report", &[]);
        assert_eq!(matrix_table(&m, 0), "Writer report (KB/s)\nfile kB\n");
    }

    #[test]
    fn classic_table_has_iozones_columns_blanks_and_marks() {
        let w = matrix("Writer report", &[(64, 4, 524487.0)]);
        let rr = matrix("Random read report", &[(64, 4, 5283570.4)]);
        let mut fr = matrix("Re-Fread report", &[(64, 4, 12.0)]);
        fr.cells[0].state = iomatrix_store::CellStateKind::Partial;
        let mixed = matrix("Mixed workload report", &[(128, 4, 1.0)]);
        let t = iozone_classic_table(&[w, rr, fr, mixed]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "two header lines, one row (the mixed workload has no column), the legend:\n{t}");
        assert_eq!(lines[1].len(), 143);
        let row = lines[2];
        assert_eq!(&row[..33], "              64       4   524487");
        assert_eq!(&row[33..51], " ".repeat(18), "rewrite and read did not run");
        assert_eq!(&row[51..69], format!("{:9}{:>9}", "", 5283570));
        assert!(row.ends_with("      12*"), "{row:?}");
        assert_eq!(row.len(), 142, "IOzone's width of a row");
        assert_eq!(lines[3], MARKS_LEGEND);
    }
}
