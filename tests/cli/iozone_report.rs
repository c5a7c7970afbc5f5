//! `iomatrix iozone -R` and `-b` laid out as IOzone 3.471 lays them out for
//! every kind of command line the front end takes, and round trips: the `-R`
//! text of a run, imported, gives back the run's stored cells (test, file
//! size, record size, and KB/s to the rounding of the printed figures).
//!
//! IOzone's header (crates/report/src/iozone_excel.rs): the `-r` sizes when
//! `-r` is given, else the powers of two from `-y` to `-q` (4 to 16384);
//! with `-t` the report is IOzone's throughput report instead.
use crate::helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;

/// IOzone's record sizes from 4 to 16384 KiB.
const ALL: [u64; 13] = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/// (test, file bytes, record bytes) → (KB/s, clients) of a stored run.
type Stored = BTreeMap<(String, u64, u64), (f64, u64)>;

fn stored(run: &Value) -> Stored {
    cells(run)
        .iter()
        .map(|c| {
            let key = (
                c["test"].as_str().unwrap().to_string(),
                c["file_size"].as_u64().unwrap(),
                c["record_size"].as_u64().unwrap(),
            );
            (key, (c["kib_per_sec"].as_f64().unwrap(), c["clients"].as_u64().unwrap()))
        })
        .collect()
}

/// What one `iomatrix iozone -R -b ... FLAGS` run left: its standard output,
/// its stored cells, the cells imported from that output, the workbook.
struct RoundTrip {
    stdout: String,
    native: Stored,
    imported: Stored,
    workbook: BTreeMap<(u32, u32), String>,
}

/// Runs `iomatrix iozone -R -b out.xlsx FLAGS -f <target>/iozone.tmp`,
/// imports its standard output into the same database (`--label
/// from=stdout`) and checks the round trip: the same cells, each KB/s within
/// `tolerance` (the rounding of the printed figures).
fn round_trip(flags: &[&str], tolerance: f64) -> RoundTrip {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let xlsx = sb.dir.path().join("out.xlsx");
    let mut args = vec!["iozone", "-R", "-b", xlsx.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-f", file.to_str().unwrap()]);
    let out = sb.run(&args);
    assert_success(&out);
    let (stdout, _) = text(&out);
    let (native, imported) = import_stdout(&sb, &stdout, tolerance);
    RoundTrip { stdout, native, imported, workbook: sheet_cells(&xlsx) }
}

/// Imports `stdout` of the sandbox's run #1 into its database (`--label
/// from=stdout`, run #2) and checks that run #2 holds the cells of run #1:
/// the same tests, file and record sizes, clients, and each KB/s within
/// `tolerance`. Returns both runs' cells.
pub fn import_stdout(sb: &Sandbox, stdout: &str, tolerance: f64) -> (Stored, Stored) {
    let saved = sb.dir.path().join("stdout.txt");
    std::fs::write(&saved, stdout).unwrap();
    let import = sb.run(&["import", saved.to_str().unwrap(), "--label", "from=stdout"]);
    assert_success(&import);
    let native = stored(&sb.show_json(1));
    let imported = stored(&sb.show_json(2));
    assert!(!native.is_empty());
    assert_eq!(imported.keys().collect::<Vec<_>>(), native.keys().collect::<Vec<_>>(), "{stdout}");
    for (key, (ours, clients)) in &native {
        let (theirs, their_clients) = imported[key];
        assert!((ours - theirs).abs() <= tolerance + 1e-9, "{key:?}: stored {ours}, imported {theirs}");
        assert_eq!(their_clients, *clients, "{key:?}");
    }
    (native, imported)
}

/// A matrix run's round trip: values printed as integers.
fn matrix_round_trip(flags: &[&str]) -> RoundTrip {
    round_trip(flags, 0.5)
}

/// The cells of the workbook's first sheet: (row, column) from 0 → text.
fn sheet_cells(path: &std::path::Path) -> BTreeMap<(u32, u32), String> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).expect("the workbook")).expect("a zip");
    let mut read = |name: &str| {
        let mut text = String::new();
        zip.by_name(name).expect(name).read_to_string(&mut text).unwrap();
        text
    };
    let shared: Vec<String> = read("xl/sharedStrings.xml")
        .split("<si><t>")
        .skip(1)
        .map(|s| s.split("</t>").next().unwrap().to_string())
        .collect();
    let mut cells = BTreeMap::new();
    for c in read("xl/worksheets/sheet1.xml").split("<c r=\"").skip(1) {
        let reference = &c[..c.find('"').unwrap()];
        let letters: String = reference.chars().take_while(char::is_ascii_uppercase).collect();
        let col = letters.bytes().fold(0u32, |acc, b| acc * 26 + u32::from(b - b'A' + 1)) - 1;
        let row = reference[letters.len()..].parse::<u32>().unwrap() - 1;
        let Some(v) = c.split("<v>").nth(1).and_then(|v| v.split("</v>").next()) else { continue };
        let shared_string = c[..c.find('>').unwrap()].contains("t=\"s\"");
        cells.insert((row, col), if shared_string { shared[v.parse::<usize>().unwrap()].clone() } else { v.into() });
    }
    cells
}

/// The header (record sizes) of every `"... report"` block of `-R` text.
fn headers(stdout: &str) -> Vec<Vec<u64>> {
    let lines: Vec<&str> = stdout.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[0].starts_with('"') && w[0].ends_with(" report\""))
        .map(|w| w[1].split_whitespace().map(|t| t.trim_matches('"').parse().unwrap()).collect())
        .collect()
}

/// The -R rows of the first block: (file KiB, number of values).
fn first_block_rows(stdout: &str) -> Vec<(u64, usize)> {
    let section = stdout.split("Excel output is below:\n").nth(1).expect("the -R section");
    section
        .lines()
        .skip(3)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let mut words = l.split_whitespace();
            (words.next().unwrap().trim_matches('"').parse().unwrap(), words.count())
        })
        .collect()
}

/// Checks the workbook's matrix blocks: each title, the header `header`, a
/// row per file size with each stored figure under its record size.
fn check_matrix_workbook(rt: &RoundTrip, header: &[u64]) {
    let cells = &rt.workbook;
    let titles: Vec<u32> = (0..=cells.keys().map(|k| k.0).max().unwrap())
        .filter(|r| cells.get(&(*r, 0)).is_some_and(|t| t.ends_with(" report")))
        .collect();
    let tests: std::collections::BTreeSet<&str> = rt.native.keys().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(titles.len(), tests.len());
    for top in titles {
        let row_header: Vec<u64> = (1..).map_while(|c| cells.get(&(top + 1, c))).map(|v| v.parse().unwrap()).collect();
        assert_eq!(row_header, header);
        let title = &cells[&(top, 0)];
        let test = rt
            .native
            .keys()
            .map(|(t, _, _)| t.as_str())
            .find(|t| {
                let name = t.parse::<iomatrix_iozone::IozoneTest>();
                name.is_ok_and(|n| n.report_title() == title)
            })
            .expect("a stored test of that title");
        let mut found = 0;
        for r in top + 2.. {
            let Some(file) = cells.get(&(r, 0)) else { break };
            let file: u64 = file.parse().unwrap();
            for (j, record) in header.iter().enumerate() {
                let key = (test.to_string(), file * 1024, record * 1024);
                match (cells.get(&(r, j as u32 + 1)), rt.native.get(&key)) {
                    (Some(v), Some((kib, _))) => {
                        let v: f64 = v.parse().unwrap();
                        assert!((v - kib).abs() <= 1e-6 * kib.abs().max(1.0), "{title} {file}/{record}: {v} vs {kib}");
                        found += 1;
                    }
                    (None, None) => {}
                    other => panic!("{title} {file}/{record}: workbook and store disagree: {other:?}"),
                }
            }
        }
        assert_eq!(found, rt.native.keys().filter(|(t, _, _)| t == test).count(), "{title}");
    }
}

#[test]
fn auto_mode_prints_iozones_whole_record_list() {
    // -a with the default -n 64k, cut at 256k.
    let rt = matrix_round_trip(&["-a", "-g", "256k", "-i", "0"]);
    assert!(headers(&rt.stdout).iter().all(|h| h == &ALL), "{}", rt.stdout);
    assert_eq!(first_block_rows(&rt.stdout), [(64, 5), (128, 6), (256, 7)]);
    assert_eq!(rt.imported.len(), 2 * (5 + 6 + 7));
    check_matrix_workbook(&rt, &ALL);
}

#[test]
fn auto_mode_bounds_y_and_q_make_the_header() {
    let rt = matrix_round_trip(&["-a", "-n", "64k", "-g", "256k", "-y", "16k", "-q", "64k", "-i", "0", "-+n"]);
    assert!(headers(&rt.stdout).iter().all(|h| h == &[16, 32, 64]), "{}", rt.stdout);
    assert_eq!(first_block_rows(&rt.stdout), [(64, 3), (128, 3), (256, 3)]);
    check_matrix_workbook(&rt, &[16, 32, 64]);
}

#[test]
fn auto_mode_large_files_skip_small_records_unless_z() {
    // A 64m file in auto mode: records below 64k are skipped (IOzone's rule),
    // and its row starts under the header's first column, as IOzone prints it.
    let rt = matrix_round_trip(&["-a", "-n", "64m", "-g", "64m", "-y", "16k", "-q", "128k", "-i", "0", "-+n"]);
    assert!(headers(&rt.stdout).iter().all(|h| h == &[16, 32, 64, 128]), "{}", rt.stdout);
    assert_eq!(first_block_rows(&rt.stdout), [(65536, 2)]);
    let records: Vec<u64> = rt.imported.keys().map(|(_, _, r)| r >> 10).collect();
    assert_eq!(records, [64, 128]);
    // The workbook puts each figure under its own record size.
    check_matrix_workbook(&rt, &[16, 32, 64, 128]);
    // -z keeps them all.
    let rt = matrix_round_trip(&["-a", "-z", "-n", "64m", "-g", "64m", "-y", "16k", "-q", "128k", "-i", "0", "-+n"]);
    assert_eq!(first_block_rows(&rt.stdout), [(65536, 4)]);
    check_matrix_workbook(&rt, &[16, 32, 64, 128]);
}

#[test]
fn repeated_r_prints_only_those_record_sizes() {
    // The second fixture's command line, smaller: IOzone prints "4"  "256" only.
    let rt = matrix_round_trip(&["-s", "1m", "-r", "4k", "-r", "256k", "-e", "-c", "-i", "0", "-i", "1", "-i", "2"]);
    assert!(headers(&rt.stdout).iter().all(|h| h == &[4, 256]), "{}", rt.stdout);
    assert_eq!(headers(&rt.stdout).len(), 6);
    assert_eq!(first_block_rows(&rt.stdout), [(1024, 2)]);
    assert_eq!(rt.imported.keys().filter(|(_, _, r)| *r == 256 << 10).count(), 6, "256k cells stay 256k");
    check_matrix_workbook(&rt, &[4, 256]);
    // With a file smaller than one of them, that file's row holds the other.
    let rt = matrix_round_trip(&["-s", "64k", "-s", "1m", "-r", "4k", "-r", "256k", "-i", "0"]);
    assert_eq!(first_block_rows(&rt.stdout), [(64, 1), (1024, 2)]);
    check_matrix_workbook(&rt, &[4, 256]);
}

#[test]
fn one_r_prints_that_record_size() {
    let rt = matrix_round_trip(&["-s", "256k", "-r", "64k", "-i", "0"]);
    assert!(headers(&rt.stdout).iter().all(|h| h == &[64]), "{}", rt.stdout);
    check_matrix_workbook(&rt, &[64]);
}

#[test]
fn repeated_s_without_r_keeps_iozones_whole_list() {
    // Without -a and -r IOzone's header is its whole list; 4k ran, under "4".
    let rt = matrix_round_trip(&["-s", "64k", "-s", "256k", "-i", "0"]);
    assert!(headers(&rt.stdout).iter().all(|h| h == &ALL), "{}", rt.stdout);
    assert_eq!(first_block_rows(&rt.stdout), [(64, 1), (256, 1)]);
    assert!(rt.imported.keys().all(|(_, _, r)| *r == 4 << 10));
    check_matrix_workbook(&rt, &ALL);
}

#[test]
fn i_subsets_print_their_blocks_in_iozones_order() {
    let rt = matrix_round_trip(&["-s", "256k", "-r", "16k", "-i", "0", "-i", "2"]);
    let titles: Vec<&str> = rt.stdout.lines().filter(|l| l.ends_with(" report\"")).collect();
    assert_eq!(
        titles,
        ["\"Writer report\"", "\"Re-writer report\"", "\"Random read report\"", "\"Random write report\""]
    );
    check_matrix_workbook(&rt, &[16]);
    let rt = matrix_round_trip(&["-s", "256k", "-r", "16k", "-i", "0", "-i", "1", "-i", "5"]);
    let titles: Vec<&str> = rt.stdout.lines().filter(|l| l.ends_with(" report\"")).collect();
    assert_eq!(
        titles,
        [
            "\"Writer report\"",
            "\"Re-writer report\"",
            "\"Reader report\"",
            "\"Re-Reader report\"",
            "\"Stride read report\""
        ]
    );
    // Every test IOzone has (-i 0 .. 8).
    let every: Vec<&str> = (0..=8).flat_map(|i| ["-i", ["0", "1", "2", "3", "4", "5", "6", "7", "8"][i]]).collect();
    let mut flags = vec!["-s", "128k", "-r", "16k"];
    flags.extend(every);
    let rt = matrix_round_trip(&flags);
    assert_eq!(headers(&rt.stdout).len(), 14);
    check_matrix_workbook(&rt, &[16]);
}

#[test]
fn t_prints_iozones_throughput_report() {
    let rt = round_trip(&["-t", "2", "-s", "256k", "-r", "16k", "-i", "0", "-i", "1"], 0.005);
    let s = before_summary(&rt.stdout);
    assert!(!s.contains("Excel output is below:"), "IOzone's -t prints no matrix blocks:\n{s}");
    let report = s.split("\tThroughput test with 2 processes\n").nth(1).expect("the preamble");
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "\tEach process writes a 256 kByte file in 16 kByte records");
    assert_eq!(lines[4], "\"Throughput report Y-axis is type of test X-axis is number of processes\"");
    assert_eq!(lines[5..8], ["\"Record size = 16 kBytes \"", "\"Output is in kBytes/sec\"", ""]);
    let names: Vec<&str> = lines[8..].iter().step_by(2).map(|l| &l[1..16]).collect();
    assert_eq!(names, ["  Initial write", "        Rewrite", "           Read", "        Re-read"]);
    assert!(rt.imported.values().all(|(_, clients)| *clients == 2));
    // The workbook: the same lines, a figure per test.
    let a = |r: u32| rt.workbook.get(&(r, 0)).map_or("", String::as_str);
    assert_eq!(a(0), "Throughput test with 2 processes");
    assert_eq!(a(3), "Record size = 16 kBytes");
    assert_eq!((a(5), a(8)), ("Initial write", "Re-read"));
    let write = rt.native[&("write".to_string(), 256 << 10, 16 << 10)].0;
    assert!((rt.workbook[&(5, 1)].parse::<f64>().unwrap() - write).abs() < 1e-6 * write);
}

#[test]
fn t_with_every_test_and_two_file_sizes() {
    // IOzone's throughput mode has no record rewrite, frewrite or freread, and
    // one file size: iomatrix names those three as IOzone's -R titles do, and
    // prints a report per file/record pair.
    let rt = round_trip(&["-t", "2", "-s", "64k", "-s", "128k", "-r", "16k"], 0.005);
    assert_eq!(rt.stdout.matches("\"Throughput report Y-axis").count(), 2);
    assert!(rt.stdout.contains("\tEach process writes a 128 kByte file in 16 kByte records\n"));
    for name in ["\" Record rewrite \"", "\"      Re-fwrite \"", "\"       Re-fread \"", "\"   Reverse Read \""] {
        assert_eq!(rt.stdout.matches(name).count(), 2, "{name}");
    }
    assert_eq!(rt.imported.len(), 2 * 13);
}
