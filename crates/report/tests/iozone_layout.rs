//! iomatrix's `-R` writer and `-b` workbook against real IOzone 3.471
//! output (tests/data/README.md): matrices holding the numbers of IOzone's
//! main table (`kB reclen write rewrite ...`, not its Excel section, so the
//! writer is checked against data read independently of the `-R` text) are
//! written back, and the text must equal the fixture's Excel section byte
//! for byte; the workbook of the same matrices is read back cell by cell.
#![forbid(unsafe_code)]

use iomatrix_report::{excel_report, xlsx_workbook, Matrix, MatrixCell, IOZONE_RECORD_SIZES_KIB};
use std::collections::BTreeMap;
use std::io::Read;

const AUTO: &str = include_str!("data/iozone-3.471-auto-64k-1m-tmpfs.txt");
const TWO_RECORDS: &str = include_str!("data/iozone-3.471-s64m-r4k-r1m-tmpfs.txt");
const MARKER: &str = "Excel output is below:\n";

/// The report titles of the main table's columns after `kB reclen` (-i 0 -i 1 -i 2).
const TITLES: [&str; 6] = [
    "Writer report",
    "Re-writer report",
    "Reader report",
    "Re-Reader report",
    "Random read report",
    "Random write report",
];

/// One matrix per column of IOzone's main table.
fn main_table_matrices(output: &str) -> Vec<Matrix> {
    let mut ms: Vec<Matrix> = TITLES.iter().map(|t| Matrix::new(*t, "KB/s")).collect();
    let mut inside = false;
    for line in output.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.starts_with(&["kB", "reclen"]) {
            inside = true;
            continue;
        }
        let numbers: Vec<u64> = words.iter().map_while(|w| w.parse().ok()).collect();
        if !inside || numbers.len() != 2 + TITLES.len() {
            inside &= !numbers.is_empty();
            continue;
        }
        for (m, v) in ms.iter_mut().zip(&numbers[2..]) {
            m.cells.push(MatrixCell::new(numbers[0], numbers[1], *v as f64));
        }
    }
    ms
}

/// Everything after the line `Excel output is below:`.
fn excel_section(output: &str) -> &str {
    let start = output.find(MARKER).expect("the fixture has IOzone's Excel marker") + MARKER.len();
    &output[start..]
}

#[test]
fn the_auto_fixture_is_written_back_byte_for_byte() {
    let ms = main_table_matrices(AUTO);
    assert_eq!(ms[0].cells.len(), 5 + 6 + 7 + 8 + 9, "35 file/record pairs in the main table");
    // -a with IOzone's default -y 4k and -q 16m: the header is 4 .. 16384,
    // though no record above 1024 ran.
    assert_eq!(excel_report(&ms, &IOZONE_RECORD_SIZES_KIB), excel_section(AUTO));
}

#[test]
fn the_two_record_fixture_is_written_back_byte_for_byte() {
    let ms = main_table_matrices(TWO_RECORDS);
    assert_eq!(ms[0].cells.len(), 2);
    let section = excel_section(TWO_RECORDS);
    assert!(section.contains("        \"4\"  \"1024\"\n\"65536\"   1029178  1775710 \n"), "{section}");
    // -r 4k -r 1m: the header is those two, whether given or taken from what ran.
    assert_eq!(excel_report(&ms, &[4, 1024]), section);
    assert_eq!(excel_report(&ms, &[]), section);
}

/// The cells of worksheet `n` (1-based) of an .xlsx: (row, column) from 0 →
/// the number or the (shared) string it holds, as text.
fn sheet_cells(xlsx: &[u8], n: usize) -> BTreeMap<(u32, u32), String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(xlsx)).expect("an .xlsx is a zip");
    let mut read = |name: &str| {
        let mut text = String::new();
        zip.by_name(name).map(|mut f| f.read_to_string(&mut text).expect("utf-8")).ok();
        text
    };
    let shared: Vec<String> = read("xl/sharedStrings.xml")
        .split("<si><t>")
        .skip(1)
        .map(|s| s.split("</t>").next().unwrap_or_default().to_string())
        .collect();
    let sheet = read(&format!("xl/worksheets/sheet{n}.xml"));
    let mut cells = BTreeMap::new();
    for c in sheet.split("<c r=\"").skip(1) {
        let reference = &c[..c.find('"').expect("quoted reference")];
        let letters: String = reference.chars().take_while(char::is_ascii_uppercase).collect();
        let col = letters.bytes().fold(0u32, |acc, b| acc * 26 + u32::from(b - b'A' + 1)) - 1;
        let row: u32 = reference[letters.len()..].parse::<u32>().expect("row number") - 1;
        let Some(v) = c.split("<v>").nth(1).and_then(|v| v.split("</v>").next()) else { continue };
        let head = &c[..c.find('>').unwrap_or(0)];
        let value =
            if head.contains("t=\"s\"") { shared[v.parse::<usize>().expect("index")].clone() } else { v.into() };
        cells.insert((row, col), value);
    }
    cells
}

/// A row of a workbook block: the file size, and per header column its value or "".
type Row = (String, Vec<String>);

/// Reads one block of the "iozone" sheet at `top`: title, header, and
/// rows until a blank row.
fn block(cells: &BTreeMap<(u32, u32), String>, top: u32) -> (String, Vec<String>, Vec<Row>) {
    let title = cells[&(top, 0)].clone();
    let header: Vec<String> = (1..).map_while(|c| cells.get(&(top + 1, c)).cloned()).collect();
    let rows = (top + 2..)
        .map_while(|r| {
            let file = cells.get(&(r, 0))?.clone();
            let values = (1..=header.len() as u32).map(|c| cells.get(&(r, c)).cloned().unwrap_or_default()).collect();
            Some((file, values))
        })
        .collect();
    (title, header, rows)
}

#[test]
fn the_workbook_has_the_reports_header_and_a_row_per_file_size() {
    // -r 4k -r 1m: header "4", "1024"; one row, each value under its record size.
    let ms = main_table_matrices(TWO_RECORDS);
    let bytes = xlsx_workbook(&ms, &[4, 1024], &[], &[]).expect("workbook");
    let cells = sheet_cells(&bytes, 1);
    let (title, header, rows) = block(&cells, 0);
    assert_eq!((title.as_str(), header), ("Writer report", vec!["4".to_string(), "1024".into()]));
    assert_eq!(rows, [("65536".to_string(), vec!["1029178".to_string(), "1775710".into()])]);
    // Six blocks, each title, header, one row and a blank row apart.
    for (k, t) in TITLES.iter().enumerate() {
        assert_eq!(block(&cells, 4 * k as u32).0, *t);
    }

    // Auto mode: IOzone's 13 record sizes, rows of 5 to 9 values from the left.
    let ms = main_table_matrices(AUTO);
    let bytes = xlsx_workbook(&ms, &IOZONE_RECORD_SIZES_KIB, &[], &[]).expect("workbook");
    let cells = sheet_cells(&bytes, 1);
    let (title, header, rows) = block(&cells, 0);
    assert_eq!(title, "Writer report");
    assert_eq!(header, IOZONE_RECORD_SIZES_KIB.map(|r| r.to_string()));
    let files: Vec<&str> = rows.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(files, ["64", "128", "256", "512", "1024"]);
    assert_eq!(rows[0].1[..6], ["524487", "1638743", "2006158", "1933893", "1879725", ""]);
    assert_eq!(rows[4].1.iter().filter(|v| !v.is_empty()).count(), 9);
    assert_eq!(rows[4].1[8], "2064088");
}

#[test]
fn the_throughput_workbook_has_a_line_per_test() {
    use iomatrix_report::{throughput_workbook, ThroughputReport, THROUGHPUT_TITLE};
    let report = ThroughputReport {
        file_kib: 256,
        record_kib: 16,
        clients: 2,
        rows: vec![
            ("Initial write".into(), 246059.19, iomatrix_store::CellStateKind::Complete),
            ("Rewrite".into(), 86058.34, iomatrix_store::CellStateKind::Complete),
        ],
    };
    let cells = sheet_cells(&throughput_workbook(&[report], &[], &[]).expect("workbook"), 1);
    let column = |c: u32| -> Vec<&str> { (0..7).map(|r| cells.get(&(r, c)).map_or("", String::as_str)).collect() };
    assert_eq!(
        column(0),
        [
            "Throughput test with 2 processes",
            "Each process writes a 256 kByte file in 16 kByte records",
            THROUGHPUT_TITLE,
            "Record size = 16 kBytes",
            "Output is in kBytes/sec",
            "Initial write",
            "Rewrite",
        ]
    );
    assert_eq!(column(1)[5..], ["246059.19", "86058.34"]);
}

#[test]
fn the_workbook_marks_cells_that_are_not_whole_and_lists_them() {
    use iomatrix_store::CellStateKind;
    let mut m = Matrix::new("Writer report", "KB/s");
    m.cells.push(MatrixCell::new(64, 4, 1000.0));
    m.cells.push(MatrixCell { state: CellStateKind::Partial, ..MatrixCell::new(64, 8, 2000.0) });
    m.cells.push(MatrixCell { state: CellStateKind::Failed, ..MatrixCell::new(64, 16, 0.0) });
    let lines = ["cell 1 write 64k/8k: partial: 1 of 2 clients".to_string()];
    let bytes = xlsx_workbook(&[m], &[4, 8, 16], &[], &lines).expect("workbook");
    let cells = sheet_cells(&bytes, 1);
    // The partial value stays a number (its mark is its number format); the failed one is text.
    assert_eq!(cells.get(&(2, 2)).map(String::as_str), Some("2000"));
    assert_eq!(cells.get(&(2, 3)).map(String::as_str), Some("failed"));
    assert_eq!(cells.get(&(4, 0)).map(String::as_str), Some(iomatrix_report::document::MARKS_LEGEND));
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])).expect("zip");
    let mut styles = String::new();
    zip.by_name("xl/styles.xml").expect("styles").read_to_string(&mut styles).expect("utf-8");
    assert!(styles.contains("formatCode=\"General&quot;*&quot;\""), "{styles}");
    let not_complete = sheet_cells(&bytes, 2);
    assert_eq!(not_complete.get(&(1, 0)).map(String::as_str), Some(lines[0].as_str()));
    // A whole run's workbook has no such sheet: its second sheet is the conditions.
    let whole = Matrix { cells: vec![MatrixCell::new(64, 4, 1.0)], ..Matrix::new("Writer report", "KB/s") };
    let bytes = xlsx_workbook(&[whole], &[4], &[("backend".into(), "psync".into())], &[]).expect("workbook");
    assert_eq!(sheet_cells(&bytes, 2).get(&(0, 0)).map(String::as_str), Some("condition"));
}
