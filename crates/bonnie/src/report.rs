//! bonnie++'s plain-text report: the data-test table, then the file-test
//! table, one line per repeat.
//!
//! The layout is bonnie++'s own (`DoReport`, txt mode): the same headers,
//! column widths, K/sec and files/sec as whole numbers, seeks/sec with one
//! decimal, %CP truncated to a whole number, and `+++++`/`+++` where a test
//! took less than half a second (too short to time well). A test that did
//! not run (per-char tests under `-f`, a stopped run) leaves its columns blank.
//!
//! Under the title, where bonnie++'s second header line is blank, the
//! table says which per-char test ran (`per-char: bonnie++` or
//! `per-char: bonnie`, see [`crate::PerChar`]).
//!
//! The Size column is bonnie++'s: `1G`, `300M`, with `:chunk` when the chunk
//! is not 8 KiB. The files column counts files in units of 1024 as
//! bonnie++'s `-n` does; a count that is not a multiple of 1024 is printed
//! whole with an `f` after it (`100f`). File size bounds are in bytes.

use crate::plan::DEFAULT_CHUNK;
use crate::{BonniePlan, BonnieResult, BonnieTest};
use iomatrix_core::{GIB, KIB, MIB};
use std::fmt::Write;

/// bonnie++'s MinTime: figures from shorter tests print as `+++++`.
pub const MIN_TIME_NS: u64 = 500_000_000;

const DATA_GROUPS: &str = "------Sequential Output------ --Sequential Input- --Random-";
const DATA_COLUMNS: &str = "-Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--";
const DATA_UNITS: &str = "K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP";
const FILE_GROUPS: &str = "------Sequential Create------ --------Random Create--------";
const FILE_COLUMNS: &str = "-Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--";
const FILE_UNITS: &str = " /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP";
const TITLE: &str = "iomatrix bonnie";

/// Bonnie-style report with this machine's host name in the Machine column
/// (bonnie++'s default for `-m`).
pub fn report(plan: &BonniePlan, results: &[BonnieResult]) -> String {
    report_for(&host_name(), plan, results)
}

/// Bonnie-style report with `machine` in the Machine column (`-m NAME`).
pub fn report_for(machine: &str, plan: &BonniePlan, results: &[BonnieResult]) -> String {
    report_marked(machine, plan, results, &|_, _| None)
}

/// A test's figure that is not whole, as the table marks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotWhole {
    /// Some clients failed the test: its figure is of those that finished, `*` between it and
    /// its %CP (where bonnie++ has a space, so the columns stay in place).
    Partial,
    /// Every client failed it: `failed` in place of the figure and its %CP.
    Failed,
    /// The test did not run for its time (the process was stopped, its clocks disagree): `~`
    /// between its figure and its %CP.
    Disturbed,
}

/// [`report_for`], each test's figure marked as `not_whole(repeat, test)` says.
pub fn report_marked(
    machine: &str,
    plan: &BonniePlan,
    results: &[BonnieResult],
    not_whole: &dyn Fn(u32, BonnieTest) -> Option<NotWhole>,
) -> String {
    let mut out = String::new();
    let find = |repeat: u32, test: BonnieTest| results.iter().find(|r| r.repeat == repeat && r.test == test);
    let repeats = plan.repeats.max(1);
    if plan.size.bytes() > 0 {
        let _ = writeln!(out, "{TITLE:<20}{DATA_GROUPS}");
        // Which per-char test ran, under the title where bonnie++ has its version.
        let per_char = if plan.tests().iter().any(|t| t.is_per_char()) {
            format!("per-char: {}", plan.per_char.name())
        } else {
            String::new()
        };
        let _ = writeln!(out, "{per_char:20}{DATA_COLUMNS}");
        let chunked = plan.chunk != DEFAULT_CHUNK;
        let _ = writeln!(out, "{}{DATA_UNITS}", if chunked { "Machine   Size:chnk " } else { "Machine        Size " });
        let mut size = size_text(plan.size.bytes());
        if chunked {
            size.push(':');
            size.push_str(&chunk_text(plan.chunk.bytes()));
        }
        for repeat in 1..=repeats {
            let suffix = if repeats > 1 { format!(" #{repeat}") } else { String::new() };
            let room = 18usize.saturating_sub(size.len());
            let name: String = machine.chars().take(room.saturating_sub(suffix.chars().count())).collect();
            let label: String = format!("{name}{suffix}").chars().take(room).collect();
            let _ = write!(out, "{label:<room$} {size}");
            for test in BonnieTest::DATA {
                let figure = find(repeat, test).map(|r| (r, not_whole(repeat, test)));
                if test == BonnieTest::RandomSeeks {
                    push_figure(&mut out, figure, |v| format!(" {v:5.1}"));
                } else {
                    push_figure(&mut out, figure, |v| format!(" {:5}", v as u64));
                }
            }
            out.push('\n');
        }
    }
    if plan.files > 0 {
        if plan.size.bytes() > 0 {
            let _ = writeln!(out, "{:20}{FILE_GROUPS}", "");
            let _ = writeln!(out, "{:20}{FILE_COLUMNS}", "");
        } else {
            let _ = writeln!(out, "{TITLE:<20}{FILE_GROUPS}");
            let name: String = machine.chars().take(19).collect();
            let _ = writeln!(out, "{name:<19} {FILE_COLUMNS}");
        }
        let (max, min) = (plan.file_max.bytes(), plan.file_min.bytes());
        let lead = if min > 0 {
            "files:max:min       "
        } else if max > 0 {
            "files:max           "
        } else {
            "              files "
        };
        let _ = writeln!(out, "{lead}{FILE_UNITS}");
        let mut files =
            if plan.files % 1024 == 0 { (plan.files / 1024).to_string() } else { format!("{}f", plan.files) };
        if max > 0 {
            let _ = write!(files, ":{max}:{min}");
        }
        for repeat in 1..=repeats {
            if repeats > 1 {
                let tag = format!("#{repeat}");
                let room = 19usize.saturating_sub(tag.len());
                let _ = write!(out, "{tag}{files:>room$}");
            } else {
                let _ = write!(out, "{files:>19}");
            }
            for test in BonnieTest::FILES {
                let figure = find(repeat, test).map(|r| (r, not_whole(repeat, test)));
                push_figure(&mut out, figure, |v| format!(" {:5}", v as u64));
            }
            out.push('\n');
        }
    }
    out
}

/// One figure and its %CP, bonnie++'s way, in its 10 columns; marked where it is not whole.
fn push_figure(out: &mut String, result: Option<(&BonnieResult, Option<NotWhole>)>, format: impl Fn(f64) -> String) {
    let gap = |mark: Option<NotWhole>| match mark {
        Some(NotWhole::Partial) => '*',
        Some(NotWhole::Disturbed) => '~',
        _ => ' ',
    };
    match result {
        None => out.push_str("          "),
        Some((_, Some(NotWhole::Failed))) => out.push_str(" failed   "),
        Some((r, _)) if r.wall_ns == 0 => out.push_str("          "),
        Some((r, mark)) if r.wall_ns < MIN_TIME_NS => {
            let _ = write!(out, " +++++{}+++", gap(mark));
        }
        Some((r, mark)) => {
            out.push_str(&format(r.per_sec));
            let _ = write!(out, "{}{:3}", gap(mark), r.cpu_percent.max(0.0) as u64);
        }
    }
}

/// bonnie++'s size (its table and its CSV line): `1G` for whole GiB, else
/// `300M`; iomatrix adds `K` and bytes for sizes bonnie++ cannot express.
pub(crate) fn size_text(bytes: u64) -> String {
    if bytes % GIB == 0 {
        format!("{}G", bytes / GIB)
    } else if bytes % MIB == 0 {
        format!("{}M", bytes / MIB)
    } else if bytes % KIB == 0 {
        format!("{}K", bytes / KIB)
    } else {
        format!("{bytes}B")
    }
}

/// bonnie++'s chunk: `4k` from 1 KiB up, bytes below.
fn chunk_text(bytes: u64) -> String {
    if bytes >= KIB {
        format!("{}k", bytes / KIB)
    } else {
        bytes.to_string()
    }
}

fn host_name() -> String {
    let uname = rustix::system::uname();
    uname.nodename().to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::ByteSize;

    use crate::test::sample_result as result;

    #[test]
    fn classic_layout_with_both_tables() {
        let mut plan = BonniePlan::new(ByteSize(4 * GIB));
        plan.files = 16 * 1024;
        let figures = [93865.4, 312837.0, 194487.0, 102808.0, 415501.0, 1141.54];
        let mut results: Vec<BonnieResult> = BonnieTest::DATA
            .iter()
            .zip(figures)
            .map(|(&t, f)| result(t, 1, f, 10.0, if t.is_per_char() { 99.6 } else { 21.2 }))
            .collect();
        results.push(result(BonnieTest::SeqCreate, 1, 24500.0, 0.7, 96.0));
        results.push(result(BonnieTest::SeqStat, 1, 900000.0, 0.01, 99.0));
        let text = report_for("vim3", &plan, &results);
        let lines: Vec<&str> = text.lines().collect();
        let expected = [
            "iomatrix bonnie     ------Sequential Output------ --Sequential Input- --Random-",
            "per-char: bonnie    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--",
            "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP",
            "vim3             4G 93865  99 312837  21 194487  21 102808  99 415501  21 1141.5  21",
            "                    ------Sequential Create------ --------Random Create--------",
            "                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--",
            "              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP",
            "                 16 24500  96 +++++ +++                                        ",
        ];
        assert_eq!(lines, expected);
    }

    #[test]
    fn figures_that_are_not_whole_are_marked_in_their_columns() {
        let plan = BonniePlan::new(ByteSize(4 * GIB));
        let results = [
            result(BonnieTest::BlockWrite, 1, 312837.0, 10.0, 21.2),
            result(BonnieTest::Rewrite, 1, 194487.0, 10.0, 21.2),
            result(BonnieTest::BlockRead, 1, 0.0, 0.0, 0.0),
            result(BonnieTest::RandomSeeks, 1, 1141.54, 0.1, 21.2),
        ];
        let not_whole = |_: u32, test: BonnieTest| match test {
            BonnieTest::Rewrite | BonnieTest::RandomSeeks => Some(NotWhole::Partial),
            BonnieTest::BlockRead => Some(NotWhole::Failed),
            _ => None,
        };
        let text = report_marked("vim3", &plan, &results, &not_whole);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[3], "vim3             4G           312837  21 194487* 21           failed    +++++*+++",
            "{text}"
        );
        assert_eq!(lines[3].len(), lines[2].len() + 2, "the columns stay where bonnie++ has them");
    }

    #[test]
    fn chunk_repeats_sizes_and_fast_mode() {
        let mut plan = BonniePlan::new(ByteSize(300 * MIB));
        plan.chunk = ByteSize(4 * KIB);
        plan.repeats = 2;
        plan.skip_per_char = true;
        plan.files = 1024;
        plan.file_max = ByteSize(64 * KIB);
        plan.file_min = ByteSize(KIB);
        let results = vec![
            result(BonnieTest::BlockWrite, 1, 1000.0, 1.0, 5.0),
            result(BonnieTest::BlockWrite, 2, 2000.0, 1.0, 5.0),
            result(BonnieTest::SeqCreate, 2, 3000.0, 1.0, 50.0),
        ];
        let text = report_for("a-very-long-machine-name", &plan, &results);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "Machine   Size:chnk K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP");
        assert_eq!(lines[3], format!("a-very-l #1 300M:4k            1000   5{}", " ".repeat(40)));
        assert!(lines[4].starts_with("a-very-l #2 300M:4k            2000   5"));
        assert_eq!(lines[7], "files:max:min        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP");
        assert_eq!(lines[8], format!("#1     1:65536:1024{}", " ".repeat(60)));
        assert!(lines[9].starts_with("#2     1:65536:1024  3000  50"));
        // Every data line lines up with the header.
        assert_eq!(lines[3].len(), lines[2].len());
        assert_eq!(lines[9].len(), lines[7].len());
    }

    #[test]
    fn file_tests_only_name_the_machine_above_the_columns() {
        let mut plan = BonniePlan::new(ByteSize(0));
        plan.files = 100;
        let text = report_for("host", &plan, &[]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "iomatrix bonnie     ------Sequential Create------ --------Random Create--------");
        assert_eq!(lines[1], "host                -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--");
        assert!(lines[3].starts_with("               100f"));
        assert_eq!(size_text(GIB + MIB), "1025M");
        assert_eq!(size_text(1536), "1536B");
        assert_eq!(chunk_text(512), "512");
        // Without -m, the Machine column holds the host name, as in bonnie++.
        let host: String = host_name().chars().take(19).collect();
        assert!(report(&plan, &[]).lines().nth(1).is_some_and(|l| l.starts_with(&host)));
    }
}
