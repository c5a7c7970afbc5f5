//! `iomatrix mdtest`'s output in mdtest 4.x's layout: its header lines, the stonewall line when
//! it fired, the `SUMMARY rate (in ops/sec): (of N iterations)` table (and with -P the time
//! table), `-- finished at`. Rows and columns as mdtest prints them (a phase's name in 18
//! characters after three spaces and four more spaces, a tree's in 22 and one, four `%14.3f`),
//! so a script that reads mdtest's output reads this; the parser of mdtest's output
//! ([`crate::import::summary`]) reads it back in the tests.
//!
//! What differs, said: the launch line names iomatrix (`mdtest-4.1.0+iomatrix-VERSION`: a script
//! matching `mdtest-\S+ was launched with N total task(s)` still matches); the times are UTC;
//! mdtest's `Nodemap` and `WARNING` lines are not printed.

use super::plan::{item_words, items_per_client};
use crate::plan::{ItemKinds, MetadataPlan, Phase};
use crate::result::PhaseResult;
use std::fmt::Write;

/// The mdtest release whose command line and layout `iomatrix mdtest` follows.
pub const MDTEST_RELEASE: &str = "4.1.0";

/// The version the launch line prints: mdtest's release, then iomatrix's own.
pub fn version_words(iomatrix_version: &str) -> String {
    format!("{MDTEST_RELEASE}+iomatrix-{iomatrix_version}")
}

/// What the header says of the run.
#[derive(Debug, Clone)]
pub struct Header<'a> {
    /// `MM/DD/YYYY HH:MM:SS` (UTC).
    pub started_at: String,
    /// [`version_words`].
    pub version: String,
    /// Clients (mdtest's tasks).
    pub tasks: usize,
    /// Hosts they ran on.
    pub nodes: usize,
    /// The command line, as mdtest prints its own: the program, then each word quoted.
    pub command_line: String,
    /// The folder (`-d`).
    pub path: &'a str,
    /// mdtest's `FS` line's text after `: `, where the folder's file system could be read.
    pub fs: Option<String>,
    /// The plan.
    pub plan: &'a MetadataPlan,
}

/// `MM/DD/YYYY HH:MM:SS` of a Unix time in milliseconds, UTC.
pub fn timestamp(unix_ms: i64) -> String {
    // "YYYY-MM-DDTHH:MM:SSZ"
    let iso = iomatrix_core::format_utc(unix_ms);
    let (date, time) = iso.trim_end_matches('Z').split_once('T').unwrap_or((&iso, ""));
    let mut ymd = date.splitn(3, '-');
    let (y, m, d) = (ymd.next().unwrap_or(""), ymd.next().unwrap_or(""), ymd.next().unwrap_or(""));
    format!("{m}/{d}/{y} {time}")
}

/// mdtest's `Command line used:` text: the program, then each word in single quotes.
pub fn command_line(program: &str, words: &[String]) -> String {
    words.iter().fold(program.to_string(), |mut s, w| {
        let _ = write!(s, " '{w}'");
        s
    })
}

/// mdtest's `FS` line after `: `, from a file system's sizes.
pub fn fs_words(blocks_bytes: u64, free_bytes: u64, inodes: u64, free_inodes: u64) -> String {
    let used = |total: u64, free: u64| if total == 0 { 0.0 } else { (1.0 - free as f64 / total as f64) * 100.0 };
    let (size, unit) = if blocks_bytes as f64 / f64::from(1u32 << 30) > 1024.0 {
        (blocks_bytes as f64 / (1u64 << 40) as f64, "TiB")
    } else {
        (blocks_bytes as f64 / f64::from(1u32 << 30), "GiB")
    };
    format!(
        "{size:.1} {unit}   Used FS: {:2.1}%   Inodes: {:.1} Mi   Used Inodes: {:2.1}%",
        used(blocks_bytes, free_bytes),
        inodes as f64 / f64::from(1u32 << 20),
        used(inodes, free_inodes)
    )
}

/// The header, up to the items line.
pub fn header(h: &Header<'_>) -> String {
    let mut s = format!("-- started at {} --\n\n", h.started_at);
    let _ = writeln!(s, "mdtest-{} was launched with {} total task(s) on {} node(s)", h.version, h.tasks, h.nodes);
    let _ = writeln!(s, "Command line used: {}", h.command_line);
    let _ = writeln!(s, "{:<20}: {}", "Path", h.path);
    if let Some(fs) = &h.fs {
        let _ = writeln!(s, "{:<20}: {fs}", "FS");
    }
    let all = items_per_client(h.plan).saturating_mul(h.tasks as u64);
    let _ = writeln!(s, "{} tasks, {all} {}", h.tasks, item_words(h.plan.kinds));
    s
}

/// mdtest's stonewall line (and the blank line it prints after it), from the create phase: the
/// fewest, the most and the mean of the items each client had made when it fired.
pub fn stonewall_line(results: &[PhaseResult]) -> String {
    results
        .iter()
        .filter_map(|r| r.stonewall.as_ref())
        .map(|s| {
            format!(
                "Continue stonewall hit min: {} max: {} avg: {:.1} \n\n",
                s.count_min, s.count_reached, s.count_mean
            )
        })
        .collect()
}

/// The rows mdtest prints for the item kinds, in its order: its directory rows unless -F, its
/// file rows unless -D, then both trees always.
pub(crate) fn printed_rows(kinds: ItemKinds) -> Vec<Phase> {
    const ROWS: [Phase; 10] = [
        Phase::DirCreate,
        Phase::DirStat,
        Phase::DirRename,
        Phase::DirRemove,
        Phase::FileCreate,
        Phase::FileStat,
        Phase::FileRead,
        Phase::FileRemove,
        Phase::TreeCreate,
        Phase::TreeRemove,
    ];
    ROWS.into_iter()
        .filter(|p| match p {
            Phase::DirCreate | Phase::DirStat | Phase::DirRename | Phase::DirRemove => kinds != ItemKinds::Files,
            Phase::FileCreate | Phase::FileStat | Phase::FileRead | Phase::FileRemove => kinds != ItemKinds::Dirs,
            _ => true,
        })
        .collect()
}

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// Operations a second.
    Rate,
    /// Seconds a phase took (mdtest's -P; it heads the table "(in ms/op)", kept for scripts).
    Time,
}

/// A phase's figure in one iteration, as mdtest's table takes it: the slowest client's rate
/// times the clients (a tree: every folder over the slowest time, what rank 0 measures), or
/// the phase's time (the slowest client's, barrier included). 0 for a phase not run.
fn figure(r: Option<&PhaseResult>, phase: Phase, table: Table) -> f64 {
    let Some(r) = r else { return 0.0 };
    let tree = matches!(phase, Phase::TreeCreate | Phase::TreeRemove);
    match table {
        Table::Rate if tree => r.rate_all_over_slowest,
        Table::Rate => r.rate_slowest_times_clients,
        Table::Time if r.rate_all_over_slowest > 0.0 => r.items as f64 / r.rate_all_over_slowest,
        Table::Time => 0.0,
    }
}

/// Max, Min, Mean and mdtest's Std Dev (over the iterations, n - 1; 0 for one iteration).
pub fn summarise(values: &[f64]) -> [f64; 4] {
    let n = values.len();
    if n == 0 {
        return [0.0; 4];
    }
    let max = values.iter().copied().fold(0.0, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = values.iter().sum::<f64>() / n as f64;
    let sd = if n == 1 {
        0.0
    } else {
        (values.iter().map(|v| (mean - v) * (mean - v)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    [max, min, mean, sd]
}

/// One table: its heading, its column heads, a row per phase mdtest prints.
pub fn table(plan: &MetadataPlan, results: &[PhaseResult], table: Table) -> String {
    let iterations = plan.iterations;
    let mut s = match table {
        Table::Rate => format!("\nSUMMARY rate (in ops/sec): (of {iterations} iterations)\n"),
        Table::Time => format!("\nSUMMARY time (in ms/op): (of {iterations} iterations)\n"),
    };
    s.push_str("   Operation                     Max            Min           Mean        Std Dev\n");
    s.push_str("   ---------                     ---            ---           ----        -------\n");
    for phase in printed_rows(plan.kinds) {
        let values: Vec<f64> = (0..iterations)
            .map(|i| figure(results.iter().find(|r| r.phase == phase && r.iteration == i), phase, table))
            .collect();
        let name = phase.mdtest_row().unwrap_or_default();
        s.push_str(&row(name, phase, summarise(&values)));
    }
    s
}

/// A row as mdtest prints it.
pub fn row(name: &str, phase: Phase, figures: [f64; 4]) -> String {
    let [max, min, mean, sd] = figures;
    match phase {
        Phase::TreeCreate | Phase::TreeRemove => format!("   {name:<22} {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}\n"),
        _ => format!("   {name:<18}     {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}\n"),
    }
}

/// Everything after the header: the stonewall line, the rate table, with -P the time table.
pub fn summary(plan: &MetadataPlan, results: &[PhaseResult], with_time: bool) -> String {
    let mut s = stonewall_line(results);
    s.push_str(&table(plan, results, Table::Rate));
    if with_time {
        s.push_str(&table(plan, results, Table::Time));
    }
    s
}

/// The last line, and the blank line mdtest prints after it.
pub fn finished(at: &str) -> String {
    format!("-- finished at {at} --\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::{options, plan};
    use crate::import::summary::{parse_outputs, TableKind};
    use crate::result::{ClientPhase, StonewallFired};
    use std::collections::BTreeMap;

    fn plan_of(line: &str) -> MetadataPlan {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        plan::plan(&options::parse(&args).unwrap()).unwrap()
    }

    fn result(phase: Phase, iteration: u32, rate: f64, items: u64) -> PhaseResult {
        PhaseResult {
            phase,
            iteration,
            items,
            rate_all_over_slowest: rate * 1.01,
            rate_slowest_times_clients: rate,
            clients: vec![ClientPhase { client: 0, items, seconds: items as f64 / rate }],
            latency: None,
            failures: BTreeMap::new(),
            stonewall: None,
            found: None,
            load: None,
            open: None,
            curve: None,
            latency_target: None,
        }
    }

    fn fixture(name: &str) -> String {
        let path = format!("{}/../../tests/fixtures/mdtest/{name}.txt", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

    fn printed(plan: &MetadataPlan, results: &[PhaseResult], with_time: bool) -> String {
        let h = Header {
            started_at: timestamp(1_796_590_628_000),
            version: version_words("0.1.0"),
            tasks: 1,
            nodes: 1,
            command_line: command_line("iomatrix mdtest", &["-n".into(), "1000".into()]),
            path: "/tmp/x",
            fs: Some(fs_words(25 << 30, 25 << 30, 3 << 20, 3 << 20)),
            plan,
        };
        header(&h) + &summary(plan, results, with_time) + &finished("12/06/2026 20:57:09")
    }

    #[test]
    fn our_table_reads_back_with_mdtests_columns() {
        let plan = plan_of("-n 1000 -i 2 -P");
        let results: Vec<PhaseResult> = (0..2)
            .flat_map(|i| plan.phases.iter().map(move |p| result(*p, i, 1000.0 * f64::from(i + 1), 1000)))
            .collect();
        let text = printed(&plan, &results, true);
        let ours = parse_outputs(&text).unwrap().remove(0);
        let theirs = parse_outputs(&fixture("master-P")).unwrap().remove(0);
        assert_eq!(ours.version.as_deref(), Some("4.1.0+iomatrix-0.1.0"));
        assert_eq!((ours.tasks, ours.items), (Some(1), Some(1000)));
        let (rate, time) = (ours.rate.unwrap(), ours.time.unwrap());
        assert_eq!((rate.kind, rate.iterations, time.kind), (TableKind::Rate, 2, TableKind::Time));
        let their_rate = theirs.rate.unwrap();
        let names =
            |t: &crate::import::summary::SummaryTable| t.rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&rate), names(&their_rate), "the same rows in the same order");
        for (a, b) in rate.rows.iter().zip(&their_rate.rows) {
            assert_eq!(a.figure_ends, b.figure_ends, "{}: columns at mdtest's bytes", a.name);
        }
        let create = rate.row(Phase::FileCreate).unwrap();
        assert_eq!(create.figures[..3], [2000.0, 1000.0, 1500.0]);
        assert!((create.std_dev() - 707.107).abs() < 1e-9, "mdtest's sample std dev: {}", create.std_dev());
        assert_eq!(time.row(Phase::FileCreate).unwrap().max(), 0.990, "1000 items at 1010/s");
        assert!(
            text.starts_with("-- started at 12/06/2026 20:57:08 --\n\nmdtest-4.1.0+iomatrix-0.1.0 was launched"),
            "{text}"
        );
        assert!(
            text.contains("\nFS                  : 25.0 GiB   Used FS: 0.0%   Inodes: 3.0 Mi   Used Inodes: 0.0%\n"),
            "{text}"
        );
    }

    #[test]
    fn files_only_rows_and_the_stonewall_line_are_mdtests() {
        let plan = plan_of("-n 100 -F -W 1");
        let mut create = result(Phase::FileCreate, 0, 500.0, 200);
        create.clients = vec![
            ClientPhase { client: 0, items: 90, seconds: 1.0 },
            ClientPhase { client: 1, items: 100, seconds: 1.0 },
        ];
        create.stonewall = Some(StonewallFired {
            seconds: 1.0,
            count_reached: 100,
            rate_at_stonewall: 190.0,
            count_min: 90,
            count_mean: 95.0,
        });
        let text = printed(&plan, &[create], false);
        assert!(
            text.contains("1 tasks, 100 files\nContinue stonewall hit min: 90 max: 100 avg: 95.0 \n\n\nSUMMARY"),
            "{text}"
        );
        let ours = parse_outputs(&text).unwrap().remove(0);
        let rows: Vec<String> = ours.rate.unwrap().rows.iter().map(|r| r.name.clone()).collect();
        let theirs: Vec<String> = parse_outputs(&fixture("master-W1-n100000"))
            .unwrap()
            .remove(0)
            .rate
            .unwrap()
            .rows
            .iter()
            .map(|r| r.name.clone())
            .collect();
        assert_eq!(rows, theirs);
        assert_eq!(ours.stonewall.map(|s| (s.min, s.max)), Some((90, 100)));
    }
}
