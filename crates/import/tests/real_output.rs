//! The importers on real output kept beside the tests: fio 3.33's JSON (a
//! mixed random job on libaio), bonnie++ 2.00a's CSV with `-x 2`, IOzone
//! 3.471's full output with its -R report. Also: no input, however cut, makes
//! a parser panic.
#![forbid(unsafe_code)]

use iomatrix_import::{parse, sniff, Format, Options};

const FIO: &str = include_str!("data/fio-3.33-randrw-libaio.json");
const BONNIE: &str = include_str!("data/bonnie-2.00a-x2.csv");
const IOZONE: &str = include_str!("../../report/tests/data/iozone-3.471-auto-64k-1m-tmpfs.txt");
/// Written from Bonnie 1.x's and Iometer's output formats (no output of theirs was at hand).
const BONNIE_TEXT: &str = include_str!("data/bonnie-1.x-two-runs.txt");
const IOMETER: &str = include_str!("data/iometer-2006.07.27-results.csv");
const IOZONE_TWO_RECORDS: &str = include_str!("../../report/tests/data/iozone-3.471-s64m-r4k-r1m-tmpfs.txt");
/// The end of a `-t` run's output with `-R`, laid out as IOzone 3.471 prints it.
const IOZONE_THROUGHPUT: &str = "\tThroughput test with 2 processes\n\
    \tEach process writes a 1024 kByte file in 4 kByte records\n\n\
    \tChildren see throughput for  2 initial writers \t=  246059.19 kB/sec\n\n\n\n\
    \"Throughput report Y-axis is type of test X-axis is number of processes\"\n\
    \"Record size = 4 kBytes \"\n\"Output is in kBytes/sec\"\n\n\
    \"  Initial write \"  246059.19 \n\n\"        Rewrite \"   86058.34 \n\n\n\niozone test complete.\n";

#[test]
fn real_files_are_recognised_and_read() {
    assert_eq!(sniff(FIO), Some(Format::Fio));
    assert_eq!(sniff(BONNIE), Some(Format::Bonnie));
    assert_eq!(sniff(IOZONE), Some(Format::Iozone));
    assert_eq!(sniff(BONNIE_TEXT), Some(Format::BonnieText));
    assert_eq!(sniff(IOMETER), Some(Format::Iometer));

    let fio = &parse(FIO, Format::Fio, &Options::default()).unwrap()[0];
    let c = &fio.cells[0];
    assert_eq!((c.record_size, c.file_size), (Some(8192), Some(8 << 20)));
    assert_eq!((c.metrics["read_percent"].as_u64(), c.metrics["queue_depth"].as_u64()), (Some(70), Some(8)));
    assert_eq!(c.metrics["iops"].as_f64(), Some(35608.391608 + 15224.775225));
    assert_eq!(c.kib_per_sec, (291703944.0 + 124721358.0) / 1024.0);
    assert_eq!(c.metrics["write"]["p99_99_ns"], 5865472);
    assert_eq!(c.backend, "libaio");

    let bonnie = parse(BONNIE, Format::Bonnie, &Options::default()).unwrap();
    assert_eq!(bonnie.len(), 1, "-x 2: one run with two repeats");
    assert_eq!(bonnie[0].plan["repeats"], 2);
    let putc: Vec<f64> = bonnie[0].cells.iter().filter(|c| c.test == "putc").map(|c| c.kib_per_sec).collect();
    assert_eq!(putc, [3598.0, 3596.0]);
    assert_eq!(bonnie[0].unmeasured.len(), 20);

    let iozone = &parse(IOZONE, Format::Iozone, &Options::default()).unwrap()[0];
    assert_eq!(iozone.cells.len(), 210);
    assert_eq!(iozone.tool_version.as_deref(), Some("3.471"));
    let throughput = &parse(IOZONE_THROUGHPUT, Format::Iozone, &Options::default()).unwrap()[0];
    assert_eq!(throughput.cells.len(), 2);
    assert_eq!(throughput.cells[1].kib_per_sec, 86058.34);
}

#[test]
fn no_prefix_of_a_real_file_makes_a_parser_panic() {
    for (text, format) in [
        (FIO, Format::Fio),
        (BONNIE, Format::Bonnie),
        (IOZONE, Format::Iozone),
        (IOZONE_TWO_RECORDS, Format::Iozone),
        (IOZONE_THROUGHPUT, Format::Iozone),
        (BONNIE_TEXT, Format::BonnieText),
        (IOMETER, Format::Iometer),
    ] {
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                let part = &text[..cut];
                let _ = sniff(part);
                for f in Format::ALL {
                    let _ = parse(part, f, &Options::default());
                }
                // The same with a line mangled: digits turned into letters.
                let mangled = part.replacen('1', "x", 1);
                let _ = parse(&mangled, format, &Options::default());
                let _ = parse(&mangled, format, &Options { skip_bad_lines: true, ..Options::default() });
            }
            cut += 1 + cut / 50;
        }
    }
}
