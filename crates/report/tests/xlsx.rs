//! The xlsx exporter produces a real, non-trivial ZIP archive.

use iomatrix_report::{parse_excel_report, xlsx_workbook, Matrix, MatrixCell};

const FIXTURE: &str = include_str!("data/iozone-3.471-auto-64k-1m-tmpfs.txt");

fn conditions() -> Vec<(String, String)> {
    [
        ("backend", "tmpfs"),
        ("direct", "false"),
        ("clients", "1"),
        ("file size vs RAM", "0.01"),
        ("target", "/tmp/iozone.tmp"),
        ("host", "testhost"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Whether `needle` occurs in `hay` (std only).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn workbook_from_fixture_is_a_zip_and_saves_to_a_file() {
    let ms = parse_excel_report(FIXTURE).expect("fixture parses");
    let bytes = xlsx_workbook(&ms, &conditions()).expect("workbook builds");
    assert!(bytes.starts_with(b"PK\x03\x04"), "ZIP local file header");
    assert!(bytes.len() > 5_000, "only {} bytes", bytes.len());
    // ZIP central directory lists member names uncompressed.
    assert!(contains(&bytes, b"xl/worksheets/sheet1.xml"));
    assert!(contains(&bytes, b"xl/worksheets/sheet2.xml"));
    assert!(contains(&bytes, b"xl/charts/chart6.xml"), "one chart per matrix");
    assert!(!contains(&bytes, b"xl/charts/chart7.xml"));

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("iozone.xlsx");
    std::fs::write(&path, &bytes).expect("write");
    let meta = std::fs::metadata(&path).expect("metadata");
    assert_eq!(meta.len(), bytes.len() as u64);
    assert!(meta.len() > 0);
}

#[test]
fn workbook_handles_empty_and_odd_input() {
    // No blocks, no conditions.
    let bytes = xlsx_workbook(&[], &[]).expect("empty workbook");
    assert!(bytes.starts_with(b"PK"));
    // A block without cells and one with a non-finite value.
    let blocks = [
        Matrix::new("Writer report", "KB/s"),
        Matrix {
            title: "Reader report".into(),
            unit: "KB/s".into(),
            cells: vec![
                MatrixCell { file_kib: 64, record_kib: 4, value: f64::NAN },
                MatrixCell { file_kib: 64, record_kib: 8, value: 1.5 },
            ],
        },
    ];
    let bytes = xlsx_workbook(&blocks, &conditions()).expect("workbook builds");
    assert!(bytes.starts_with(b"PK"));
}
