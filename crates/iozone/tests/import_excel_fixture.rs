//! The `-R` parser (this crate's) and writer (iomatrix-report's) against
//! real IOzone 3.471 output on tmpfs, kept in the report crate's tests/data/
//! (its README.md says where they come from; the binary's tests read them
//! too): an auto run (`iozone -a -n 64k -g 1m -i 0 -i 1 -i 2 -e -c -R -f
//! iozone.tmp`) and a run of two record sizes (`iozone -R -s 64m -r 4k -r 1m
//! -e -c -i 0 -i 1 -i 2 -f iozone.tmp`).
#![forbid(unsafe_code)]

use iomatrix_import::{parse, Options};
use iomatrix_iozone::import::excel::parse_excel_report;
use iomatrix_iozone::import::IMPORTERS;
use iomatrix_report::{excel_report, Matrix, IOZONE_RECORD_SIZES_KIB};

const FIXTURE: &str = include_str!("../../report/tests/data/iozone-3.471-auto-64k-1m-tmpfs.txt");
const TWO_RECORDS: &str = include_str!("../../report/tests/data/iozone-3.471-s64m-r4k-r1m-tmpfs.txt");
const MARKER: &str = "Excel output is below:\n";

/// The fixture's text after the "Excel output is below:" line, which begins
/// with the first blank line, as `excel_report` output does.
fn excel_section() -> &'static str {
    let start = FIXTURE.find(MARKER).expect("fixture has the Excel marker") + MARKER.len();
    &FIXTURE[start..]
}

fn by_title<'a>(ms: &'a [Matrix], title: &str) -> &'a Matrix {
    ms.iter().find(|m| m.title == title).unwrap_or_else(|| panic!("no block {title}"))
}

#[test]
fn parses_six_blocks_in_order() {
    let ms = parse_excel_report(FIXTURE).expect("fixture parses");
    let titles: Vec<&str> = ms.iter().map(|m| m.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Writer report",
            "Re-writer report",
            "Reader report",
            "Re-Reader report",
            "Random read report",
            "Random write report",
        ]
    );
    for m in &ms {
        assert_eq!(m.unit, "KB/s");
        assert_eq!(m.file_sizes(), [64, 128, 256, 512, 1024]);
        assert_eq!(m.record_sizes(), [4, 8, 16, 32, 64, 128, 256, 512, 1024]);
        // Auto mode: record sizes 4 KiB up to the file size.
        assert_eq!(m.cells.len(), 5 + 6 + 7 + 8 + 9);
        for c in &m.cells {
            assert!(c.record_kib <= c.file_kib, "{}: {c:?}", m.title);
        }
    }
}

#[test]
fn exact_values() {
    let ms = parse_excel_report(FIXTURE).expect("fixture parses");
    assert_eq!(by_title(&ms, "Writer report").get(64, 4), Some(524487.0));
    assert_eq!(by_title(&ms, "Writer report").get(64, 64), Some(1879725.0));
    assert_eq!(by_title(&ms, "Writer report").get(64, 128), None);
    assert_eq!(by_title(&ms, "Random write report").get(1024, 1024), Some(10329265.0));
    assert_eq!(by_title(&ms, "Reader report").get(128, 128), Some(20804356.0));
    assert_eq!(by_title(&ms, "Re-Reader report").get(512, 8), Some(5624545.0));
    assert_eq!(by_title(&ms, "Random read report").get(256, 128), Some(3197509.0));
}

#[test]
fn values_agree_with_iozones_classic_table() {
    // The main table above the Excel section lists the same numbers as
    // "kB reclen write rewrite read reread random-read random-write".
    let ms = parse_excel_report(FIXTURE).expect("fixture parses");
    let mut rows = 0;
    for line in FIXTURE.lines() {
        let nums: Vec<u64> = line.split_whitespace().map_while(|t| t.parse().ok()).collect();
        if nums.len() != 8 || line.contains('"') {
            continue;
        }
        for (m, &v) in ms.iter().zip(&nums[2..]) {
            assert_eq!(m.get(nums[0], nums[1]), Some(v as f64), "{} {line}", m.title);
        }
        rows += 1;
    }
    assert_eq!(rows, 35);
}

#[test]
fn round_trip_reproduces_excel_section_byte_for_byte() {
    let section = excel_section();
    // The fixture ends with exactly one '\n' after the last row's trailing
    // space (no extra blank line), which is also how excel_report ends, so
    // the comparison needs no trimming. Check that so a re-saved fixture
    // with extra newlines fails here, not with a confusing diff below.
    assert!(section.ends_with(" \n") && !section.ends_with("\n\n"));
    assert!(section.starts_with("\n\"Writer report\"\n"));

    let ms = parse_excel_report(FIXTURE).expect("fixture parses");
    let written = excel_report(&ms, &IOZONE_RECORD_SIZES_KIB);
    assert_eq!(written, section);

    // The section alone parses to the same matrices.
    assert_eq!(parse_excel_report(section).expect("section parses"), ms);
}

#[test]
fn crlf_input_parses_the_same() {
    let crlf = FIXTURE.replace('\n', "\r\n");
    assert_eq!(parse_excel_report(&crlf).expect("crlf parses"), parse_excel_report(FIXTURE).expect("fixture parses"));
}

#[test]
fn the_header_places_the_values() {
    let text = "\n\"Writer report\"\n        \"16\"  \"32\"  \"64\"\n\"64\"   100  200  300 \n\"32\"   1  2 \n";
    let ms = parse_excel_report(text).expect("parses");
    assert_eq!(ms[0].get(64, 16), Some(100.0));
    assert_eq!(ms[0].get(64, 64), Some(300.0));
    assert_eq!(ms[0].get(32, 32), Some(2.0));
    assert_eq!(ms[0].get(64, 4), None);
}

#[test]
fn two_record_sizes_land_under_their_own_header() {
    // The Excel section alone, without IOzone's main table: the header says 4 and 1024.
    let section = &TWO_RECORDS[TWO_RECORDS.find(MARKER).expect("marker")..];
    let ms = parse_excel_report(section).expect("parses");
    assert_eq!(ms.len(), 6);
    assert_eq!(by_title(&ms, "Writer report").get(65536, 4), Some(1029178.0));
    assert_eq!(by_title(&ms, "Writer report").get(65536, 1024), Some(1775710.0));
    assert_eq!(by_title(&ms, "Random write report").get(65536, 1024), Some(5639353.0));
    assert_eq!(by_title(&ms, "Reader report").get(65536, 8), None);
    // Written back, it is the fixture's section again.
    assert_eq!(excel_report(&ms, &[]), section[MARKER.len()..]);

    // Imported whole (main table and report) or as the section alone (no
    // banner, so O_DIRECT is unknown): the same cells.
    let whole = &parse(TWO_RECORDS, IMPORTERS[0], &Options::default()).expect("imports")[0];
    let alone = &parse(section, IMPORTERS[0], &Options::default()).expect("imports")[0];
    let key = |c: &iomatrix_import::ImportedCell| (c.test.clone(), c.file_size, c.record_size, c.kib_per_sec);
    assert_eq!(whole.cells.iter().map(key).collect::<Vec<_>>(), alone.cells.iter().map(key).collect::<Vec<_>>());
    let cells: Vec<(&str, Option<u64>, Option<u64>, f64)> =
        whole.cells.iter().map(|c| (c.test.as_str(), c.file_size, c.record_size, c.kib_per_sec)).collect();
    assert_eq!(cells.len(), 12);
    assert_eq!(cells[0], ("write", Some(64 << 20), Some(4 << 10), 1029178.0));
    assert_eq!(cells[1], ("write", Some(64 << 20), Some(1 << 20), 1775710.0));
    assert!(whole.notes[0].contains("main table"), "{:?}", whole.notes);
    assert!(alone.notes[0].contains("header"), "{:?}", alone.notes);
}

#[test]
fn ignores_text_without_report_blocks() {
    assert_eq!(parse_excel_report("").expect("empty"), vec![]);
    let head = &FIXTURE[..FIXTURE.find(MARKER).expect("marker")];
    assert_eq!(parse_excel_report(head).expect("head"), vec![]);
}

fn err(text: &str) -> String {
    match parse_excel_report(text) {
        Ok(ms) => panic!("expected an error, got {ms:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn non_number_value_names_the_line() {
    // Only the Excel section's row, not the main table's copy of the number.
    let good_row = "\"128\"   1561553  2098744  2027414  2784517  2920861  2660335 ";
    assert!(FIXTURE.contains(good_row));
    let bad = FIXTURE.replacen(good_row, &good_row.replace("2920861", "29x0861"), 1);
    let line_no = bad.lines().position(|l| l.contains("29x0861") && l.starts_with('"')).expect("bad line") + 1;
    let e = parse_excel_report(&bad).expect_err("must fail");
    assert_eq!(e.line, line_no);
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("line {line_no}: ")), "{msg}");
    assert!(msg.contains("29x0861") && msg.contains("not a number"), "{msg}");
    assert!(msg.contains("Writer report") && msg.contains("file size 128"), "{msg}");
}

#[test]
fn other_malformed_inputs_name_the_line() {
    let h = "        \"4\"  \"8\"";
    assert_eq!(
        err("\n\"Writer report\"\n"),
        "line 3: end of input where the record-size header of \"Writer report\" was expected"
    );
    assert!(err("\"Writer report\"\n        \"4\"  x\n").starts_with("line 2: "));
    assert!(err("\"Writer report\"\n\n").starts_with("line 2: "));
    assert!(err("\"Writer report\"\n  \"8\"  \"4\"\n").contains("not ascending"));
    let too_many = format!("\"Writer report\"\n{h}\n\"64\"   1  2  3 \n");
    let msg = err(&too_many);
    assert!(msg.starts_with("line 3: ") && msg.contains("more values"), "{msg}");
    let bad_file = format!("\"Writer report\"\n{h}\n\"6x\"   1 \n");
    assert!(err(&bad_file).starts_with("line 3: "));
    let dup = format!("\"Writer report\"\n{h}\n\"64\"   1 \n\"64\"   2 \n");
    assert!(err(&dup).starts_with("line 4: "));
    let nan = format!("\"Writer report\"\n{h}\n\"64\"   NaN \n");
    assert!(err(&nan).contains("not a number"));
}

#[test]
fn block_ends_at_next_title_or_plain_text() {
    let h = "        \"4\"  \"8\"";
    let text =
        format!("\"Writer report\"\n{h}\n\"64\"   1  2 \n\"Reader report\"\n{h}\n\"64\"   3 \niozone test complete.\n");
    let ms = parse_excel_report(&text).expect("parses");
    assert_eq!(ms.len(), 2);
    assert_eq!(ms[0].get(64, 8), Some(2.0));
    assert_eq!(ms[1].get(64, 4), Some(3.0));
    assert_eq!(ms[1].cells.len(), 1);
}
