//! The xlsx exporter produces a real, non-trivial ZIP archive.
#![forbid(unsafe_code)]

use iomatrix_report::{xlsx_workbook, Matrix, MatrixCell};

/// Six matrices shaped like IOzone's auto mode from 64 KiB to 1 MiB (`iozone
/// -a -n 64k -g 1m -i 0 -i 1 -i 2`): record sizes 4 KiB up to each file size.
fn auto_mode_matrices() -> Vec<Matrix> {
    let titles = [
        "Writer report",
        "Re-writer report",
        "Reader report",
        "Re-Reader report",
        "Random read report",
        "Random write report",
    ];
    titles
        .iter()
        .zip(1u64..)
        .map(|(title, t)| Matrix {
            title: title.to_string(),
            unit: "KB/s".into(),
            cells: [64u64, 128, 256, 512, 1024]
                .into_iter()
                .flat_map(|file_kib| {
                    (2..=file_kib.ilog2()).map(move |b| {
                        let record_kib = 1u64 << b;
                        MatrixCell::new(file_kib, record_kib, (t * 1_000_000 + file_kib * 1000 + record_kib) as f64)
                    })
                })
                .collect(),
        })
        .collect()
}

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
fn workbook_of_an_auto_mode_run_is_a_zip_and_saves_to_a_file() {
    let ms = auto_mode_matrices();
    assert_eq!(ms.iter().map(|m| m.cells.len()).sum::<usize>(), 6 * (5 + 6 + 7 + 8 + 9));
    let bytes = xlsx_workbook(&ms, &[], &conditions(), &[]).expect("workbook builds");
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
    let bytes = xlsx_workbook(&[], &[], &[], &[]).expect("empty workbook");
    assert!(bytes.starts_with(b"PK"));
    // A block without cells and one with a non-finite value.
    let blocks = [
        Matrix::new("Writer report", "KB/s"),
        Matrix {
            title: "Reader report".into(),
            unit: "KB/s".into(),
            cells: vec![MatrixCell::new(64, 4, f64::NAN), MatrixCell::new(64, 8, 1.5)],
        },
    ];
    let bytes = xlsx_workbook(&blocks, &[], &conditions(), &[]).expect("workbook builds");
    assert!(bytes.starts_with(b"PK"));
}
