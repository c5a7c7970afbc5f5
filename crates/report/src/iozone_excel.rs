//! IOzone 3.471's `-R` report: the writers. Their parsers live beside the
//! IOzone importer (the iozone crate's `import::excel`).
//!
//! **The matrix report** ([`excel_report`]). After the line `Excel output is
//! below:` IOzone prints one block per test:
//!
//! ```text
//!
//! "Writer report"
//!         "4"  "8"  "16"  "32"  "64"  "128"  "256"  "512"  "1024"  "2048"  "4096"  "8192"  "16384"
//! "64"   524487  1638743  2006158  1933893  1879725
//! "128"   1561553  2098744  2027414  2784517  2920861  2660335
//! ```
//!
//! (each row ends with a space). The header lists IOzone's record-size list
//! for the run's flags, the same in every block: the `-r` sizes when `-r` is
//! given (once or more: `-r 4k -r 1m` prints `"4"  "1024"`), else the powers
//! of two from `-y` to `-q` (4 to 16384 by default), in auto mode and out of
//! it alike. A row is one file size; it lists the values of the record sizes
//! that ran for that file, ascending, from the header's first column on. They
//! line up with the header except in auto mode's rows of files above 32 MiB
//! without `-z`: IOzone skips records below 64 KiB there, and the row still
//! starts under the first column.
//!
//! **The throughput report** ([`throughput_report`]). With `-t N` IOzone
//! runs one file size and one record size with N processes and prints, for
//! `-R`, no matrix blocks but one line per test with the "children see"
//! figure (the sum of the processes' own rates), two decimals:
//!
//! ```text
//! "Throughput report Y-axis is type of test X-axis is number of processes"
//! "Record size = 4 kBytes "
//! "Output is in kBytes/sec"
//!
//! "  Initial write "  246059.19
//!
//! "        Rewrite "   86058.34
//! ```

use crate::document::{marked, MARKS_LEGEND};
use iomatrix_core::Matrix;
use iomatrix_store::CellStateKind;

/// IOzone's record sizes (KiB) from 4 to 16384: the list of its auto mode,
/// and the header of a `-R` report when neither `-r` nor `-y`/`-q` is given.
pub const IOZONE_RECORD_SIZES_KIB: [u64; 13] = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/// The header of a matrix report: `records_kib` (IOzone's record-size list
/// for the run's flags) and every record size any of `matrices` holds,
/// ascending, without duplicates.
pub fn report_header(matrices: &[Matrix], records_kib: &[u64]) -> Vec<u64> {
    let mut header: Vec<u64> = records_kib.to_vec();
    header.extend(matrices.iter().flat_map(Matrix::record_sizes));
    header.sort_unstable();
    header.dedup();
    header
}

/// The text IOzone prints after `Excel output is below:`, for `matrices` in
/// the order given.
///
/// Each block is a blank line, the title in double quotes, the header and one
/// row per file size, with IOzone 3.471's spacing (including the trailing
/// space of each row). The header is [`report_header`]: give IOzone's
/// record-size list for the run's flags as `records_kib`, or `&[]` for the
/// record sizes that ran. A row lists the values of its file size in
/// ascending record size from the first column on, as IOzone does; values are
/// rounded to integers. A partial cell's value carries `*` and a failed cell is `failed`
/// ([`marked`]), with the legend after the last block: a spreadsheet shows them as text, and
/// IOzone's importer refuses them, naming the line, rather than take them for whole figures.
pub fn excel_report(matrices: &[Matrix], records_kib: &[u64]) -> String {
    let header = report_header(matrices, records_kib);
    let mut out = String::new();
    for m in matrices {
        out.push_str("\n\"");
        out.push_str(&m.title);
        out.push_str("\"\n      ");
        for r in &header {
            out.push_str(&format!("  \"{r}\""));
        }
        out.push('\n');
        for f in m.file_sizes() {
            out.push_str(&format!("\"{f}\"  "));
            for r in m.record_sizes() {
                if let Some(c) = m.cell(f, r) {
                    out.push_str(&format!(" {} ", marked(c.state, || format!("{:.0}", c.value))));
                }
            }
            out.push('\n');
        }
    }
    if matrices.iter().any(Matrix::any_not_complete) {
        out.push_str(&format!("\n{MARKS_LEGEND}\n"));
    }
    out
}

/// One throughput report of IOzone's `-t` mode: one file size and record
/// size, run by `clients` processes at once.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputReport {
    /// File size of each client, KiB.
    pub file_kib: u64,
    /// Record size, KiB.
    pub record_kib: u64,
    /// How many clients ran each test at once.
    pub clients: usize,
    /// (IOzone's name of the test in this report, e.g. "Initial write",
    /// KB/s of all clients: the sum of their own rates, whether every client finished it), in
    /// IOzone's order.
    pub rows: Vec<(String, f64, CellStateKind)>,
}

/// The lines IOzone prints before its throughput tests, which say the
/// clients and the file: `\tThroughput test with 2 processes` and
/// `\tEach process writes a 1024 kByte file in 4 kByte records`.
pub fn throughput_preamble(r: &ThroughputReport) -> String {
    let processes = if r.clients == 1 { "process" } else { "processes" };
    format!(
        "\tThroughput test with {} {processes}\n\tEach process writes a {} kByte file in {} kByte records\n",
        r.clients, r.file_kib, r.record_kib
    )
}

/// The title line of a throughput report, without its quotes.
pub const THROUGHPUT_TITLE: &str = "Throughput report Y-axis is type of test X-axis is number of processes";

/// IOzone's `-R` text for `-t` runs: for each report, a blank line, the
/// [`throughput_preamble`] (IOzone prints it once, above its per-test
/// figures; here it tells each report's file size and clients), three blank
/// lines and the report as IOzone 3.471 prints it: the title, the record
/// size, the unit, a blank line, then per test its name right-aligned in 15
/// characters within quotes and its KB/s with two decimals, each line
/// followed by a blank line.
pub fn throughput_report(reports: &[ThroughputReport]) -> String {
    let mut out = String::new();
    for r in reports {
        out.push('\n');
        out.push_str(&throughput_preamble(r));
        out.push_str(&format!(
            "\n\n\n\"{THROUGHPUT_TITLE}\"\n\"Record size = {} kBytes \"\n\"Output is in kBytes/sec\"\n\n",
            r.record_kib
        ));
        for (name, v, state) in &r.rows {
            out.push_str(&format!("\"{name:>15} \" {:>10} \n\n", marked(*state, || format!("{v:.2}"))));
        }
    }
    if reports.iter().flat_map(|r| &r.rows).any(|(_, _, state)| *state != CellStateKind::Complete) {
        out.push_str(&format!("{MARKS_LEGEND}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::MatrixCell;

    fn cell(file_kib: u64, record_kib: u64, value: f64) -> MatrixCell {
        MatrixCell::new(file_kib, record_kib, value)
    }

    #[test]
    fn writes_iozone_row_and_header_whitespace() {
        let m = Matrix {
            title: "Writer report".into(),
            unit: "KB/s".into(),
            cells: vec![cell(64, 8, 1638743.4), cell(64, 4, 524486.6)],
        };
        let expected = "\n\"Writer report\"\n        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\"  \"256\"  \"512\"  \"1024\"  \"2048\"  \"4096\"  \"8192\"  \"16384\"\n\"64\"   524487  1638743 \n";
        assert_eq!(excel_report(&[m], &IOZONE_RECORD_SIZES_KIB), expected);
    }

    #[test]
    fn the_header_is_the_given_list_and_every_size_that_ran() {
        let m = Matrix {
            title: "Reader report".into(),
            unit: "KB/s".into(),
            cells: vec![cell(65536, 4, 1.0), cell(65536, 1024, 2.0)],
        };
        // -r 4k -r 1m: only those.
        let text = excel_report(std::slice::from_ref(&m), &[]);
        assert_eq!(text, "\n\"Reader report\"\n        \"4\"  \"1024\"\n\"65536\"   1  2 \n");
        assert_eq!(excel_report(std::slice::from_ref(&m), &[4, 1024]), text);
        // A size outside the given list still gets its column.
        let header = report_header(&[m], &[8, 16]);
        assert_eq!(header, [4, 8, 16, 1024]);
    }

    #[test]
    fn throughput_report_has_iozones_spacing() {
        let r = ThroughputReport {
            file_kib: 1024,
            record_kib: 4,
            clients: 2,
            rows: vec![
                ("Initial write".into(), 246059.19, CellStateKind::Complete),
                ("Read".into(), 2089045.094, CellStateKind::Complete),
            ],
        };
        let text = throughput_report(&[r]);
        assert_eq!(
            text,
            "\n\tThroughput test with 2 processes\n\tEach process writes a 1024 kByte file in 4 kByte records\n\n\n\n\
             \"Throughput report Y-axis is type of test X-axis is number of processes\"\n\
             \"Record size = 4 kBytes \"\n\"Output is in kBytes/sec\"\n\n\
             \"  Initial write \"  246059.19 \n\n\"           Read \" 2089045.09 \n\n"
        );
        let one = ThroughputReport { file_kib: 64, record_kib: 64, clients: 1, rows: Vec::new() };
        assert!(throughput_preamble(&one).starts_with("\tThroughput test with 1 process\n"));
    }

    #[test]
    fn cells_that_are_not_whole_are_marked_in_their_place() {
        let m = Matrix {
            title: "Writer report".into(),
            unit: "KB/s".into(),
            cells: vec![
                cell(64, 4, 524486.6),
                MatrixCell { state: CellStateKind::Partial, ..cell(64, 8, 1638743.4) },
                MatrixCell { state: CellStateKind::Failed, ..cell(64, 16, 0.0) },
            ],
        };
        let text = excel_report(&[m], &[4, 8, 16]);
        assert!(text.contains("\"64\"   524487  1638743*  failed \n"), "{text}");
        assert!(text.ends_with(&format!("\n{MARKS_LEGEND}\n")), "{text}");
        let r = ThroughputReport {
            file_kib: 1024,
            record_kib: 4,
            clients: 2,
            rows: vec![
                ("Initial write".into(), 246059.19, CellStateKind::Partial),
                ("Read".into(), 0.0, CellStateKind::Failed),
            ],
        };
        let text = throughput_report(&[r]);
        assert!(text.contains("\"  Initial write \" 246059.19* \n"), "{text}");
        assert!(text.contains("\"           Read \"     failed \n"), "{text}");
        assert!(text.ends_with(&format!("{MARKS_LEGEND}\n")), "{text}");
    }
}
