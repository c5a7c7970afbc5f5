//! bonnie++'s CSV line (format 1.98, what bonnie++ 1.98 to 2.00a write),
//! field for field and formatted as bonnie++ 2.00a formats it, so that
//! `bon_csv2html`, `bon_csv2txt`, iomatrix's own importer and scripts that
//! read bonnie++'s line by position read iomatrix's.
//!
//! The 50 fields (counted from 0): 0 format `1.98`; 1 the writer's version
//! ([`csv_version`]: `iomatrix-0.1.0`, with `+per-char-bonnie` when the
//! per-char columns are Bonnie's buffered test);
//! 2 the machine name; 3 concurrency (clients); 4 seed; 5 file size (`512M`,
//! `1G`); 6 chunk (bonnie++ 2.00a always leaves it empty; iomatrix too at
//! the default 8k, and writes the bytes otherwise, so the line says what
//! ran); 7 seeks; 8 seekers; 9-20 putc, write, rewrite, getc, read (K/sec)
//! and seeks (/sec), each followed by its %CPU; 21 files in units of 1024;
//! 22 largest and 23 smallest file size (empty for empty files); 24 folders
//! and 25 file chunk (empty: one folder, the default chunk); 26-37 the six
//! file tests (/sec) each with its %CPU; 38-49 the twelve tests' latencies.
//!
//! Figures as bonnie++ prints them: K/sec and files/sec truncated to whole
//! numbers, seeks/sec with one decimal below 1000 and none from 1000 up,
//! %CPU truncated; `+++++` and `+++` for a test that took less than
//! bonnie++'s MinTime (0.5 s); empty fields for a test that did not run
//! (`-f`, `-s 0`, `-n 0`). The latencies are each test's slowest single
//! operation (see [`BonnieResult::max_latency_ns`]), as bonnie++ prints
//! them: whole `us` below 0.1 s, whole `ms` below 100 s, else whole `s`;
//! empty where there is none (a test that did not run, a run stored before
//! iomatrix timed operations).

use crate::plan::DEFAULT_CHUNK;
use crate::report::{size_text, MIN_TIME_NS};
use crate::{BonniePlan, BonnieResult, BonnieTest, FILES_UNIT};

/// bonnie++'s CSV format version (its CSV_VERSION), the line's first field.
pub const CSV_FORMAT: &str = "1.98";

/// How iomatrix's version field begins (`iomatrix-0.1.0`): the line was
/// measured by iomatrix, not by bonnie++, and says so where bonnie++ names
/// its own version (`2.00a`); no reader of the line interprets that field.
pub const CSV_WRITER_PREFIX: &str = "iomatrix-";

/// Added to the version field when the per-char columns hold Bonnie's
/// buffered putc/getc (`--per-char bonnie`), not bonnie++'s test.
pub const CSV_BONNIE_PER_CHAR: &str = "+per-char-bonnie";

/// The version field iomatrix writes for `plan`.
pub fn csv_version(plan: &BonniePlan) -> String {
    let mut v = format!("{CSV_WRITER_PREFIX}{}", env!("CARGO_PKG_VERSION"));
    if plan.per_char == crate::PerChar::Bonnie && plan.tests().iter().any(|t| t.is_per_char()) {
        v.push_str(CSV_BONNIE_PER_CHAR);
    }
    v
}

/// The heading line bonnie++ 2.00a prints before its CSV lines when it runs
/// the tests more than once (`-x N`, N > 1), as it prints it: 48 names for
/// 50 fields (it names no column for the seeks and seekers after the chunk).
pub const CSV_HEADER: &str = "format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,putc,\
putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu,getc,getc_cpu,get_block,get_block_cpu,seeks,seeks_cpu,\
num_files,max_size,min_size,num_dirs,file_chunk_size,seq_create,seq_create_cpu,seq_stat,seq_stat_cpu,seq_del,\
seq_del_cpu,ran_create,ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu,putc_latency,put_block_latency,\
rewrite_latency,getc_latency,get_block_latency,seeks_latency,seq_create_latency,seq_stat_latency,seq_del_latency,\
ran_create_latency,ran_stat_latency,ran_del_latency";

/// Who wrote a CSV line: the fields bonnie++ fills from its own state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvSource<'a> {
    /// Field 1: the writing program's version.
    pub version: &'a str,
    /// Field 2: the machine name (`-m`, else the host name).
    pub name: &'a str,
    /// Field 3: copies run at once (`-c`): the run's clients.
    pub concurrency: usize,
}

/// bonnie++'s CSV output for a run: one line per repeat of the set, each
/// ending in a newline, after [`CSV_HEADER`] when there is more than one.
/// `results` are the run's merged figures (all clients), any order.
pub fn csv_lines(source: &CsvSource<'_>, plan: &BonniePlan, results: &[BonnieResult]) -> String {
    let repeats = plan.repeats.max(1);
    let mut out = String::new();
    if repeats > 1 {
        out.push_str(CSV_HEADER);
        out.push('\n');
    }
    for repeat in 1..=repeats {
        out.push_str(&csv_line(source, plan, repeat, results));
        out.push('\n');
    }
    out
}

/// One repeat's line, without its newline.
pub fn csv_line(source: &CsvSource<'_>, plan: &BonniePlan, repeat: u32, results: &[BonnieResult]) -> String {
    let find = |test: BonnieTest| results.iter().find(|r| r.repeat == repeat && r.test == test);
    let mut f: Vec<String> = vec![
        CSV_FORMAT.into(),
        source.version.into(),
        source.name.into(),
        source.concurrency.to_string(),
        plan.seed.to_string(),
    ];
    if plan.size.bytes() > 0 {
        f.push(size_text(plan.size.bytes()));
        f.push(if plan.chunk == DEFAULT_CHUNK { String::new() } else { plan.chunk.bytes().to_string() });
        f.push(plan.seeks.to_string());
        f.push(plan.seekers.to_string());
        for test in BonnieTest::DATA {
            let (figure, cpu) = figure(find(test));
            f.push(figure);
            f.push(cpu);
        }
    } else {
        f.extend(std::iter::repeat_n(String::new(), 16));
    }
    if plan.files > 0 {
        f.push(files_field(plan.files));
        let (max, min) = (plan.file_max.bytes(), plan.file_min.bytes());
        f.push(if max > 0 { max.to_string() } else { String::new() });
        f.push(if max > 0 && min > 0 { min.to_string() } else { String::new() });
        f.push(String::new()); // folders: one
        f.push(String::new()); // file chunk: the default
        for test in BonnieTest::FILES {
            let (figure, cpu) = figure(find(test));
            f.push(figure);
            f.push(cpu);
        }
    } else {
        f.extend(std::iter::repeat_n(String::new(), 17));
    }
    for test in BonnieTest::ALL {
        f.push(latency_field(find(test).map_or(0, |r| r.max_latency_ns)));
    }
    f.join(",")
}

/// A figure and its %CPU as bonnie++ prints them in its CSV line.
fn figure(result: Option<&BonnieResult>) -> (String, String) {
    match result {
        None => (String::new(), String::new()),
        Some(r) if r.wall_ns == 0 => (String::new(), String::new()),
        Some(r) if r.wall_ns < MIN_TIME_NS => ("+++++".into(), "+++".into()),
        Some(r) => {
            let value = r.per_sec.max(0.0);
            let figure = if r.test == BonnieTest::RandomSeeks {
                if value >= 1000.0 {
                    format!("{value:.0}")
                } else {
                    format!("{value:.1}")
                }
            } else {
                (value.trunc() as u64).to_string()
            };
            (figure, (r.cpu_percent.max(0.0).trunc() as u64).to_string())
        }
    }
}

/// bonnie++'s latency: `9552us`, `175ms`, `120s`, truncated; empty for none.
fn latency_field(ns: u64) -> String {
    let secs = ns as f64 / 1e9;
    if ns == 0 {
        String::new()
    } else if secs > 99.999999 {
        format!("{}s", secs as u64)
    } else if secs > 0.099999 {
        format!("{}ms", (secs * 1e3) as u64)
    } else {
        format!("{}us", (secs * 1e6) as u64)
    }
}

/// bonnie++'s `-n` count in units of 1024; a count it cannot express
/// (iomatrix's `--file-count`) as the plain count with `f` after it.
fn files_field(files: u64) -> String {
    if files % FILES_UNIT == 0 {
        (files / FILES_UNIT).to_string()
    } else {
        format!("{files}f")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::{ByteSize, GIB, MIB};

    use crate::test::sample_result as result;

    const SOURCE: CsvSource<'static> = CsvSource { version: "2.00a", name: "vm", concurrency: 1 };

    #[test]
    fn the_line_bonnie_plus_plus_printed() {
        // bonnie++ 2.00a here: `-d DIR -s 16 -r 8 -n 1 -u root -q`, latencies aside (iomatrix
        // leaves them empty). putc and getc measured, every other test under 0.5 s.
        let real = "1.98,2.00a,vm,1,1795588273,16M,,8192,5,1053,77,+++++,+++,+++++,+++,1327,60,+++++,+++,\
                    +++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,41388us,3080us,\
                    3050us,175ms,1920us,37759us,5048us,2487us,369us,1188us,33us,1213us";
        let latencies_ns =
            [41_388_900, 3_080_000, 3_050_000, 175_900_000, 1_920_000, 37_759_000, 5_048_000, 2_487_000, 369_000];
        let mut plan = BonniePlan::new(ByteSize(16 * MIB));
        plan.files = 1024;
        plan.seed = 1_795_588_273;
        plan.seekers = 5;
        let mut results: Vec<BonnieResult> = BonnieTest::ALL.iter().map(|&t| result(t, 1, 5e6, 0.01, 90.0)).collect();
        results[0] = result(BonnieTest::PutcWrite, 1, 1053.9, 2.9, 77.99);
        results[3] = result(BonnieTest::GetcRead, 1, 1327.2, 2.3, 60.5);
        for (r, ns) in results.iter_mut().zip(latencies_ns.iter().chain(&[1_188_000, 33_000, 1_213_999])) {
            r.max_latency_ns = *ns;
        }
        let line = csv_line(&SOURCE, &plan, 1, &results);
        assert_eq!(line, real);
        assert_eq!(line.split(',').count(), 50);
        assert_eq!(csv_lines(&SOURCE, &plan, &results), format!("{line}\n"));
    }

    #[test]
    fn seeks_skipped_tests_file_bounds_chunk_and_repeats() {
        let mut plan = BonniePlan::new(ByteSize(2 * GIB));
        plan.chunk = ByteSize(4096);
        plan.skip_per_char = true;
        plan.files = 2048;
        plan.file_max = ByteSize(65536);
        plan.file_min = ByteSize(1024);
        plan.repeats = 2;
        plan.seed = 7;
        let results = vec![
            result(BonnieTest::BlockWrite, 1, 312837.9, 10.0, 21.7),
            result(BonnieTest::RandomSeeks, 1, 1141.54, 1.0, 250.2),
            result(BonnieTest::RandomSeeks, 2, 999.96, 1.0, 3.0),
            result(BonnieTest::SeqCreate, 2, 24500.8, 1.0, 96.0),
        ];
        let source = CsvSource { version: "iomatrix-0.1.0", name: "box", concurrency: 3 };
        let text = csv_lines(&source, &plan, &results);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(CSV_HEADER.split(',').count(), 48, "bonnie++'s own heading, short of the seek columns");
        let one: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(one.len(), 50);
        assert_eq!(&one[..9], ["1.98", "iomatrix-0.1.0", "box", "3", "7", "2G", "4096", "8192", "3"]);
        assert_eq!(&one[9..21], ["", "", "312837", "21", "", "", "", "", "", "", "1142", "250"]);
        assert_eq!(&one[21..26], ["2", "65536", "1024", "", ""]);
        assert!(one[26..].iter().all(|f| f.is_empty()));
        let two: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(&two[19..21], ["1000.0", "3"]);
        assert_eq!(&two[26..28], ["24500", "96"]);
        // -n N:MAX without MIN, and sizes bonnie++ cannot express.
        plan.file_min = ByteSize(0);
        let line = csv_line(&source, &plan, 1, &[]);
        assert_eq!(line.split(',').skip(21).take(5).collect::<Vec<_>>(), ["2", "65536", "", "", ""]);
        assert_eq!(size_text(1536 * MIB), "1536M");
        assert_eq!(size_text(1536), "1536B");
        assert_eq!(files_field(100), "100f");
        assert_eq!(latency_field(0), "");
        assert_eq!(latency_field(99_999), "99us");
        assert_eq!(latency_field(100_000_000), "100ms");
        assert_eq!(latency_field(250_000_000_000), "250s");
    }

    #[test]
    fn no_data_or_no_file_tests_leave_their_fields_empty() {
        let mut plan = BonniePlan::new(ByteSize(0));
        plan.files = 1024;
        plan.seed = 1;
        let line = csv_line(&SOURCE, &plan, 1, &[result(BonnieTest::SeqCreate, 1, 900.0, 1.0, 50.0)]);
        assert_eq!(line, format!("1.98,2.00a,vm,1,1{},1,,,,,900,50{}", ",".repeat(16), ",".repeat(22)));
        let mut plan = BonniePlan::new(ByteSize(MIB));
        plan.files = 0;
        let fields = csv_line(&SOURCE, &plan, 1, &[]).split(',').map(String::from).collect::<Vec<_>>();
        assert_eq!(fields.len(), 50);
        assert_eq!(fields[5], "1M");
        assert!(fields[21..].iter().all(|f| f.is_empty()));
    }
}
