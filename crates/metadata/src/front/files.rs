//! The files mdtest writes beside its output, written as mdtest writes them: `-x`'s stonewall
//! status file (the count every task went on to) and `--saveRankPerformanceDetails`' CSV (a
//! line for the phases over every task, then a line per task and iteration). Each goes through
//! iomatrix's one writer of output files ([`iomatrix_guard::Output`]): judged before the run,
//! written at its end, never over the results database or a file of another kind.

use crate::plan::Phase;
use crate::result::PhaseResult;
use std::fmt::Write;
use std::fs::File;

/// mdtest's phases in its CSV's column order (its test numbers 0 to 10; 2 is its directory
/// read, which iomatrix's front end never runs: its columns stay empty).
const CSV_ORDER: [(Option<Phase>, &str); 11] = [
    (Some(Phase::DirCreate), "Directory creation"),
    (Some(Phase::DirStat), "Directory stat"),
    (None, "Directory read"),
    (Some(Phase::DirRename), "Directory rename"),
    (Some(Phase::DirRemove), "Directory removal"),
    (Some(Phase::FileCreate), "File creation"),
    (Some(Phase::FileStat), "File stat"),
    (Some(Phase::FileRead), "File read"),
    (Some(Phase::FileRemove), "File removal"),
    (Some(Phase::TreeCreate), "Tree creation"),
    (Some(Phase::TreeRemove), "Tree removal"),
];

/// The first 9 columns pairs are phases of the items; mdtest's per-task lines stop before the trees.
const ITEM_PHASES: usize = 9;

/// C's `%.10e`: ten decimals and an exponent of at least two digits with its sign (`4.0692867482e+04`).
pub fn c_exp(x: f64) -> String {
    let s = format!("{x:.10e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

/// The CSV's header line.
fn csv_header() -> String {
    CSV_ORDER.iter().fold("rank,items".to_string(), |mut s, (_, name)| {
        let _ = write!(s, ",rate-{name},time-{name}");
        s
    }) + "\n"
}

/// `--saveRankPerformanceDetails`: mdtest's header, its `all` line (each task's items, then
/// every phase's rate over every task and its time: the slowest task's, barrier included) and a
/// line per iteration and task (its own rate and time, the item phases only).
pub fn rank_details_csv(results: &[PhaseResult], items_per_task: u64, tasks: usize, iterations: u32) -> String {
    let mut s = csv_header();
    let _ = write!(s, "all,{items_per_task}");
    let last = iterations.saturating_sub(1);
    for (phase, _) in CSV_ORDER {
        match phase.and_then(|p| results.iter().find(|r| r.phase == p && r.iteration == last)) {
            Some(r) if r.items > 0 && r.rate_all_over_slowest > 0.0 => {
                let time = r.items as f64 / r.rate_all_over_slowest;
                let _ = write!(s, ",{},{}", c_exp(r.rate_all_over_slowest), c_exp(time));
            }
            _ => s.push_str(",,"),
        }
    }
    s.push('\n');
    for iteration in 0..iterations {
        for task in 0..tasks {
            let _ = write!(s, "{task},");
            for (phase, _) in &CSV_ORDER[..ITEM_PHASES] {
                let own = phase
                    .and_then(|p| results.iter().find(|r| r.phase == p && r.iteration == iteration))
                    .and_then(|r| r.clients.iter().find(|c| c.client == task));
                match own {
                    Some(c) if c.items > 0 && c.seconds > 0.0 => {
                        let _ = write!(s, ",{},{}", c_exp(c.items as f64 / c.seconds), c_exp(c.seconds));
                    }
                    _ => s.push_str(",,"),
                }
            }
            s.push('\n');
        }
    }
    s
}

/// `-x`: what mdtest writes there with -W: the count every task went on to when the stonewall
/// fired in file creation, else the items each task made (`per_task`); the number alone. None
/// without a stonewall or a file creation (mdtest writes it only then).
pub fn stonewall_status(results: &[PhaseResult], stonewall: bool, per_task: u64) -> Option<String> {
    let create = results.iter().rev().find(|r| r.phase == Phase::FileCreate);
    match (stonewall, create) {
        (true, Some(r)) => Some(r.stonewall.as_ref().map_or(per_task, |s| s.count_reached).to_string()),
        _ => None,
    }
}

/// `-x` read back by a run without -C: the count an earlier -C -W run's tasks went on to.
/// None when the file does not exist (mdtest then warns and works on -n's count); refused
/// (exit 2) when it is not a regular file within 4 KiB (`/dev/zero`, a FIFO, a 10 GiB sparse
/// file: refused unread, by the one reader of input files) or holds anything but one whole number.
pub fn read_stonewall_status(path: &std::path::Path) -> Result<Option<u64>, iomatrix_core::UsageError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let text = iomatrix_guard::read_text(path, &iomatrix_guard::Input::STONEWALL_STATUS)?;
    let word = text.trim();
    word.parse::<u64>().map(Some).map_err(|_| {
        let shown: String = word.chars().take(40).collect();
        iomatrix_core::UsageError::new(format!(
            "-x {}: holds {shown:?}, not the one whole number an mdtest -C -W run writes there: give the file that \
             run wrote, or remove it to use -n's count",
            path.display()
        ))
    })
}

/// An mdtest rank-details CSV (by its header), which a new run may replace.
pub struct RankDetailsKind;

impl iomatrix_guard::Kind for RankDetailsKind {
    fn describe(&self) -> String {
        "an mdtest rank-details CSV".into()
    }
    fn recognises(&self, existing: &mut File) -> bool {
        iomatrix_guard::output::head(existing, 64).starts_with(b"rank,items,rate-Directory creation")
    }
}

/// mdtest's stonewall status file: one number.
pub struct StonewallStatusKind;

impl iomatrix_guard::Kind for StonewallStatusKind {
    fn describe(&self) -> String {
        "an mdtest stonewall status file (one number)".into()
    }
    fn recognises(&self, existing: &mut File) -> bool {
        let head = iomatrix_guard::output::head(existing, 32);
        !head.is_empty() && head.len() < 32 && head.iter().all(|b| b.is_ascii_digit() || b.is_ascii_whitespace())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{ClientPhase, StonewallFired};
    use std::collections::BTreeMap;

    #[test]
    fn the_csv_is_mdtests_layout() {
        assert_eq!(c_exp(40692.867482), "4.0692867482e+04");
        assert_eq!(c_exp(3.2901763916e-05), "3.2901763916e-05");
        let create = PhaseResult {
            phase: Phase::FileCreate,
            iteration: 0,
            items: 200,
            rate_all_over_slowest: 100.0,
            rate_slowest_times_clients: 100.0,
            clients: vec![
                ClientPhase { client: 0, items: 100, seconds: 2.0 },
                ClientPhase { client: 1, items: 100, seconds: 1.0 },
            ],
            latency: None,
            failures: BTreeMap::new(),
            stonewall: Some(StonewallFired {
                seconds: 1.0,
                count_reached: 100,
                rate_at_stonewall: 150.0,
                count_min: 80,
                count_mean: 90.0,
            }),
            found: None,
            load: None,
            open: None,
            curve: None,
            latency_target: None,
        };
        let csv = rank_details_csv(std::slice::from_ref(&create), 100, 2, 1);
        let lines: Vec<&str> = csv.lines().collect();
        let fixture_header = "rank,items,rate-Directory creation,time-Directory creation,rate-Directory stat,time-Directory stat,rate-Directory read,time-Directory read,rate-Directory rename,time-Directory rename,rate-Directory removal,time-Directory removal,rate-File creation,time-File creation,rate-File stat,time-File stat,rate-File read,time-File read,rate-File removal,time-File removal,rate-Tree creation,time-Tree creation,rate-Tree removal,time-Tree removal";
        assert_eq!(lines[0], fixture_header, "the header mdtest wrote for IO500's mdtest-easy-write");
        assert_eq!(lines[1], "all,100,,,,,,,,,,,1.0000000000e+02,2.0000000000e+00,,,,,,,,,,");
        assert_eq!(lines[2], "0,,,,,,,,,,,,5.0000000000e+01,2.0000000000e+00,,,,,,");
        assert_eq!(lines[3], "1,,,,,,,,,,,,1.0000000000e+02,1.0000000000e+00,,,,,,");
        assert_eq!(stonewall_status(std::slice::from_ref(&create), true, 7), Some("100".into()));
        assert_eq!(stonewall_status(std::slice::from_ref(&create), false, 7), None, "no -W, no count");
        let unfired = PhaseResult { stonewall: None, ..create };
        assert_eq!(stonewall_status(&[unfired], true, 7), Some("7".into()), "every item made: mdtest writes them");
    }

    #[test]
    fn the_status_file_is_read_back_as_mdtest_wrote_it() {
        let dir = std::env::temp_dir().join(format!("iomatrix-x-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("stonewall");
        assert_eq!(read_stonewall_status(&file).unwrap(), None, "absent: -n's count, as mdtest");
        std::fs::write(&file, "4711").unwrap();
        assert_eq!(read_stonewall_status(&file).unwrap(), Some(4711), "mdtest's own: the number alone");
        std::fs::write(&file, "12\n").unwrap();
        assert_eq!(read_stonewall_status(&file).unwrap(), Some(12));
        std::fs::write(&file, "twelve").unwrap();
        assert!(read_stonewall_status(&file).unwrap_err().to_string().contains("not the one whole number"));
        let zero = read_stonewall_status(std::path::Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(zero.contains("a device (character)"), "{zero}");
        std::fs::File::create(&file).unwrap().set_len(10 << 30).unwrap();
        let sparse = read_stonewall_status(&file).unwrap_err().to_string();
        assert!(sparse.contains("more than the bound of a stonewall status file"), "{sparse}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
