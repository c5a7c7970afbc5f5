//! What a report shows, whatever its format: [`Report`], groups of stored
//! runs ([`ReportGroup`]) with their summaries, caching flags and
//! comparisons; and the helpers the formats share (matrix grids, IOzone's
//! test order). The formats: [`crate::html`], [`crate::markdown`],
//! [`crate::csv`], [`crate::json`], and the workbook in [`crate::xlsx`].

use iomatrix_analysis::{CacheFlags, CellKey, Comparison, Group, Judgement, ManyComparison};
use iomatrix_core::{human, ByteSize};
use iomatrix_store::StoredRun;
use serde::Serialize;
use std::collections::BTreeSet;

/// One group of runs (a RUNS argument) with its summary and caching flags.
pub struct ReportGroup {
    /// The group's name: the RUNS argument that selected it.
    pub name: String,
    /// The stored runs of the group, in the order selected.
    pub runs: Vec<StoredRun>,
    /// Each cell of the group's runs summarised: its median and spread.
    pub summary: Group,
    /// The cells that beat `--limit`; None without `--limit`.
    pub flags: Option<CacheFlags>,
    /// Per run whose MPI ranks ran on two hosts or more: its clients by host.
    pub hosts: Vec<HostFigures>,
}

/// One run's clients grouped by the host they ran on (`environment.client_hosts`),
/// as `show` gives them: per cell and host the clients' own rates summed, the
/// slowest and the fastest; and the hosts far below the median host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFigures {
    /// The run's id in the database.
    pub run: i64,
    /// The clients' rate unit (KB/s, MiB/s...).
    pub unit: String,
    /// "name (address)", in rank order.
    pub hosts: Vec<String>,
    /// Per cell, one row per host, in the hosts' order.
    pub rows: Vec<HostRow>,
    /// The hosts whose sums sit far below the median host's; empty when none does.
    pub stragglers: Vec<Straggler>,
}

/// One host in one cell; the figures are None where none of its clients reported one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostRow {
    /// The cell, as its suite describes it.
    pub cell: String,
    /// The host, "name (address)".
    pub host: String,
    /// How many of the run's clients ran on this host.
    pub clients: usize,
    /// The sum of those clients' own rates, in [`HostFigures::unit`].
    pub sum: Option<f64>,
    /// The slowest of those clients' rates.
    pub slowest: Option<f64>,
    /// The fastest of those clients' rates.
    pub fastest: Option<f64>,
}

/// A host whose sums sit far below the median host's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Straggler {
    /// The host, "name (address)".
    pub host: String,
    /// The geometric mean, over the cells, of its sum over the median host's.
    pub ratio: f64,
    /// How many cells the geometric mean is over.
    pub cells: usize,
}

impl Straggler {
    /// The straggler in one sentence, as the reports print it.
    pub fn sentence(&self) -> String {
        format!(
            "straggler host: {} at {:.3}x the median host (geometric mean over {} cell(s))",
            self.host, self.ratio, self.cells
        )
    }
}

/// What a report shows: the groups, and every other group of the baseline's suite against the
/// baseline (the first unless `--baseline` names another).
pub struct Report {
    /// The command that made it, and when (UTC).
    pub made_by: String,
    /// When the report was made, in UTC.
    pub made_at: String,
    /// The groups, one per RUNS argument, in the order given.
    pub groups: Vec<ReportGroup>,
    /// The group the comparisons judge the others against: its place in `groups`.
    pub baseline: usize,
    /// Each other group of the baseline's suite against the baseline, in the groups' order.
    pub comparisons: Vec<Comparison>,
    /// With three sides or more of the baseline's suite: every side against the baseline in one
    /// table (the sides are those groups, in their order; `comparisons` are its pairs).
    pub sides: Option<ManyComparison>,
}

/// Every side against the baseline as one table, for the HTML and Markdown reports: the
/// header (the metric, the baseline, then per other side its median, its % change against the
/// baseline and the verdict) and a row per compared figure ("-" where a side has none).
pub(crate) fn sides_table(m: &ManyComparison) -> (Vec<String>, Vec<Vec<String>>) {
    let base = &m.sides[m.baseline];
    // A side given by run ids is also named by its labels, as `sweep --rows` names its systems.
    let named = |s: &iomatrix_analysis::Side| {
        let labels: Vec<&str> =
            s.labels.iter().map(String::as_str).filter(|l| !s.name.split(',').any(|part| part == *l)).collect();
        if labels.is_empty() {
            format!("{} = {}", s.letter, s.name)
        } else {
            format!("{} = {} ({})", s.letter, s.name, labels.join(" "))
        }
    };
    let mut header = vec!["metric".to_string(), format!("{} (baseline)", named(base))];
    for side in m.sides.iter().filter(|s| s.letter != base.letter) {
        header.extend([named(side), format!("vs {}", base.letter), "verdict".into()]);
    }
    let rows = m
        .rows
        .iter()
        .map(|row| {
            let mark = |partial: bool| if partial { PARTIAL_MARK } else { "" };
            let base_cell = row.cells[m.baseline].as_ref();
            let mut line = vec![
                format!("{} ({})", row.metric, row.unit),
                base_cell.map_or_else(|| "-".into(), |c| format!("{}{}", human::significant(c.value), mark(c.partial))),
            ];
            for (_, cell) in row.cells.iter().enumerate().filter(|(i, _)| *i != m.baseline) {
                match cell {
                    Some(c) => line.extend([
                        format!("{}{}", human::significant(c.value), mark(c.partial)),
                        c.change_pct.map_or_else(|| "-".into(), human::signed_percent),
                        c.verdict.as_ref().map_or("-", |v| v.verdict).to_string(),
                    ]),
                    None => line.extend(["-".to_string(), "-".to_string(), "-".to_string()]),
                }
            }
            line
        })
        .collect();
    (header, rows)
}

/// The comparison that judged `group` against the baseline, where one was made (the group is of
/// the baseline's suite and is not the baseline).
pub fn comparison_of<'a>(report: &'a Report, group: &str) -> Option<&'a Comparison> {
    report.comparisons.iter().find(|c| c.b == group)
}

/// Whether the `k`th group is the baseline the report's comparisons judge the others against
/// (by its place: the same runs may be given twice, once as the baseline).
pub fn is_baseline(report: &Report, k: usize) -> bool {
    !report.comparisons.is_empty() && report.baseline == k
}

/// The verdict `c` gave the figure of cell `key`: a matrix cell's, or a scalar row's (the same
/// judgement `compare` prints). None where the comparison has no such figure.
pub fn verdict_of<'a>(c: &'a Comparison, key: &CellKey) -> Option<&'a Judgement> {
    let in_matrix = c.matrices.iter().zip(&c.matrix_verdicts).find_map(|(m, verdicts)| {
        if m.test != key.test || !key.variant.is_empty() {
            return None;
        }
        let i = m.file_sizes.iter().position(|f| Some(*f) == key.file_size)?;
        let j = m.record_sizes.iter().position(|r| Some(*r) == key.record_size)?;
        verdicts.get(i)?.get(j)?.as_ref()
    });
    in_matrix.or_else(|| {
        let name = key.describe();
        c.scalars.iter().find(|s| s.metric == name).map(|s| &s.verdict)
    })
}

/// A figure's verdict in the words `compare` prints it: "slower (p=0.008)", "within noise
/// (p=0.400)", "no verdict (1 vs 2 samples)"; a %CPU row's "less CPU" or "more CPU".
pub fn verdict_words(metric: &str, j: &Judgement) -> String {
    crate::text::compare::verdict_words(metric, &j.describe())
}

/// A ratio map's mean change and how many of its cells' ratios lie below and above 1: by the
/// medians alone, no verdict (the next line, [`matrix_verdicts`], gives those).
pub fn mean_change(t: &iomatrix_analysis::Tally) -> String {
    format!(
        "Mean change {:+.1}% over {} cells; B/A below 1 in {}, above 1 in {} (medians alone).",
        t.mean_change_pct, t.cells, t.a_wins, t.b_wins
    )
}

/// A ratio map's cells' verdicts counted, as one sentence.
pub fn matrix_verdicts(verdicts: &[Vec<Option<Judgement>>]) -> String {
    let all: Vec<&Judgement> = verdicts.iter().flatten().flatten().collect();
    let count = |v: &str| all.iter().filter(|j| j.verdict == v).count();
    format!(
        "Beyond noise (Mann-Whitney, 5%): B faster in {}, slower in {}; within noise (~) {}; no verdict (too few \
         samples) {}.",
        count("faster"),
        count("slower"),
        count("within noise"),
        count("no verdict")
    )
}

/// One compared figure of one comparison, with its verdict: a row of the workbook's verdicts sheet.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictRow {
    /// The comparison, "B against A".
    pub comparison: String,
    /// The figure: a cell as its key describes it, or a phase's operation and figure.
    pub figure: String,
    /// The figure's unit.
    pub unit: String,
    /// A's median; None where the report does not hold it.
    pub a: Option<f64>,
    /// B's median.
    pub b: Option<f64>,
    /// B against A, in %, as the comparison gives it (a ratio map's cell: its ratio less one).
    pub change_pct: Option<f64>,
    /// The verdict's word as `judge` gives it: "faster", "slower", "within noise", "no verdict".
    pub verdict: &'static str,
    /// The verdict as `compare` prints it, with its p-value or its sample counts.
    pub words: String,
    /// The rank test's two-sided p-value; None where no verdict was possible.
    pub p_value: Option<f64>,
}

/// Every compared figure of every comparison with its verdict: the ratio maps' cells, the scalar
/// figures and the per-operation figures, in that order.
pub fn verdict_rows(report: &Report) -> Vec<VerdictRow> {
    let median = |group: &str, key: &CellKey| {
        report.groups.iter().find(|g| g.name == group).and_then(|g| g.summary.cells.get(key)).map(|s| s.median)
    };
    let mut rows = Vec::new();
    for c in &report.comparisons {
        let comparison = format!("{} against {}", c.b, c.a);
        let row = |figure: String,
                   unit: &str,
                   (a, b, change_pct): (Option<f64>, Option<f64>, Option<f64>),
                   j: &Judgement| VerdictRow {
            comparison: comparison.clone(),
            words: verdict_words(&figure, j),
            figure,
            unit: unit.to_string(),
            a,
            b,
            change_pct,
            verdict: j.verdict,
            p_value: j.p_value,
        };
        for (m, verdicts) in c.matrices.iter().zip(&c.matrix_verdicts) {
            for (i, f) in m.file_sizes.iter().enumerate() {
                for (j, r) in m.record_sizes.iter().enumerate() {
                    let Some(judgement) = verdicts.get(i).and_then(|row| row.get(j)).and_then(Option::as_ref) else {
                        continue;
                    };
                    let key = CellKey {
                        test: m.test.clone(),
                        file_size: Some(*f),
                        record_size: Some(*r),
                        variant: String::new(),
                    };
                    let change =
                        m.ratios.get(i).and_then(|row| row.get(j)).copied().flatten().map(|r| (r - 1.0) * 100.0);
                    let figures = (median(&c.a, &key), median(&c.b, &key), change);
                    rows.push(row(key.describe(), m.unit, figures, judgement));
                }
            }
        }
        for s in &c.scalars {
            rows.push(row(s.metric.clone(), s.unit, (Some(s.a), Some(s.b), Some(s.change_pct)), &s.verdict));
        }
        for t in &c.operations {
            for o in &t.rows {
                let figure = format!("{} {} {}", t.phase, o.operation, o.figure);
                rows.push(row(figure, o.unit, (Some(o.a), Some(o.b), Some(o.change_pct)), &o.verdict));
            }
        }
    }
    rows
}

pub(crate) fn size(bytes: u64) -> String {
    ByteSize(bytes).to_string()
}

/// IOzone's tests in its order, then any others by name.
pub(crate) fn test_order(tests: impl Iterator<Item = String>) -> Vec<String> {
    const IOZONE: [&str; 13] = [
        "write",
        "rewrite",
        "read",
        "reread",
        "random-read",
        "random-write",
        "backward-read",
        "record-rewrite",
        "stride-read",
        "fwrite",
        "refwrite",
        "fread",
        "refread",
    ];
    let set: BTreeSet<String> = tests.collect();
    let mut out: Vec<String> = IOZONE.iter().filter(|t| set.contains(**t)).map(|t| t.to_string()).collect();
    out.extend(set.into_iter().filter(|t| !IOZONE.contains(&t.as_str())));
    out
}

/// A matrix test's cells in one group: (file sizes, record sizes, medians, cached marks,
/// medians that took in samples of partial cells).
pub(crate) type Grid = (Vec<u64>, Vec<u64>, Vec<Vec<Option<f64>>>, Vec<Vec<bool>>, Vec<Vec<bool>>);

pub(crate) fn grid(group: &ReportGroup, test: &str) -> Grid {
    let keys: Vec<&CellKey> = group
        .summary
        .cells
        .keys()
        .filter(|k| k.test == test && k.variant.is_empty() && k.file_size.is_some() && k.record_size.is_some())
        .collect();
    let files: Vec<u64> = keys.iter().filter_map(|k| k.file_size).collect::<BTreeSet<_>>().into_iter().collect();
    let records: Vec<u64> = keys.iter().filter_map(|k| k.record_size).collect::<BTreeSet<_>>().into_iter().collect();
    let mut values = vec![vec![None; records.len()]; files.len()];
    let mut marked = vec![vec![false; records.len()]; files.len()];
    let mut partial = vec![vec![false; records.len()]; files.len()];
    for k in keys {
        let (Ok(i), Ok(j)) =
            (files.binary_search(&k.file_size.unwrap_or(0)), records.binary_search(&k.record_size.unwrap_or(0)))
        else {
            continue;
        };
        values[i][j] = group.summary.cells.get(k).map(|s| s.median);
        marked[i][j] = group.flags.as_ref().is_some_and(|f| f.is_flagged(k));
        partial[i][j] = group.summary.cells.get(k).is_some_and(|s| s.partial_samples > 0);
    }
    (files, records, values, marked, partial)
}

/// The mark of a median that took in samples of partial cells (`--include-partial`).
pub const PARTIAL_MARK: &str = "\u{2020}";

/// The mark of a partial cell's figure in plain-ASCII text (a run's tables, IOzone's `-R` text
/// and its workbook), as compare's terminal output marks a median that took one in.
pub const PARTIAL_MARK_ASCII: &str = "*";

/// The mark of a disturbed cell's figure in plain-ASCII text: it did not run for its time
/// (stopped, clocks that disagree, far past its duration).
pub const DISTURBED_MARK_ASCII: &str = "~";

/// What a table shows in place of a failed cell's figure: it has none.
pub const FAILED_MARK: &str = "failed";

/// The line under a table that holds [`marked`] figures.
pub const MARKS_LEGEND: &str = "* partial: some clients or connections failed the cell, the figure is of those that \
                                finished; ~ disturbed: the cell did not run for its time (see its cause), not a figure; \
                                failed: none finished, no figure";

/// A cell's figure as every plain-text table shows it: `text()` for a complete cell, with
/// [`PARTIAL_MARK_ASCII`] after it for a partial one, [`FAILED_MARK`] (and no figure) for a
/// failed one.
pub fn marked(state: iomatrix_store::CellStateKind, text: impl FnOnce() -> String) -> String {
    match state {
        iomatrix_store::CellStateKind::Complete => text(),
        iomatrix_store::CellStateKind::Partial => text() + PARTIAL_MARK_ASCII,
        iomatrix_store::CellStateKind::Failed => FAILED_MARK.to_string(),
        iomatrix_store::CellStateKind::Disturbed => text() + DISTURBED_MARK_ASCII,
    }
}

/// What in a group is not whole, as sentences: each stored cell left out of its medians
/// (partial or failed: some or all of its clients or connections failed), and each median that
/// took in samples of partial cells (`--include-partial`, marked with [`PARTIAL_MARK`]).
pub fn not_complete(group: &ReportGroup) -> Vec<String> {
    let mut out: Vec<String> =
        group.summary.left_out.iter().map(|l| format!("left out of the medians: {}", l.describe())).collect();
    for (k, s) in group.summary.cells.iter().filter(|(_, s)| s.partial_samples > s.disturbed_samples) {
        out.push(format!(
            "{}{PARTIAL_MARK}: the median takes in {} sample(s) of partial cells (--include-partial)",
            k.describe(),
            s.partial_samples - s.disturbed_samples
        ));
    }
    for (k, s) in group.summary.cells.iter().filter(|(_, s)| s.disturbed_samples > 0) {
        out.push(format!(
            "{}{PARTIAL_MARK}: the median takes in {} sample(s) of disturbed cells, which did not run for their \
             time (--include-disturbed)",
            k.describe(),
            s.disturbed_samples
        ));
    }
    out
}

pub(crate) fn is_matrix_suite(group: &ReportGroup) -> bool {
    group.summary.shape.matrix
}

pub(crate) fn matrix_tests(group: &ReportGroup) -> Vec<String> {
    test_order(
        group.summary.cells.keys().filter(|k| k.file_size.is_some() && k.record_size.is_some()).map(|k| k.test.clone()),
    )
}

/// Reports made by hand for the formats' tests: two IOzone groups (the
/// second with two runs, a limit flagging some cells, a comparison) and an
/// access group with latency summaries.
#[cfg(test)]
pub(crate) mod sample {
    use super::{HostFigures, HostRow, Report, ReportGroup, Straggler};
    use iomatrix_analysis::{compare, flag_cached, Group, Limit, Region, SuiteShape};
    use iomatrix_store::{CellRow, RunStatus, RunSummary, StoredRun};
    use serde_json::json;

    pub fn cell(
        test: &str,
        file: Option<u64>,
        record: Option<u64>,
        kib_per_sec: f64,
        metrics: serde_json::Value,
    ) -> CellRow {
        CellRow {
            file_size: file,
            record_size: record,
            kib_per_sec,
            cpu_percent: Some(0.0),
            metrics,
            client_figures: json!(null),
            state: Default::default(),
            ..CellRow::blank(test, "psync")
        }
    }

    pub fn run(id: i64, suite: &str, labels: &[(&str, &str)], cells: Vec<CellRow>) -> StoredRun {
        StoredRun::new(
            RunSummary {
                id,
                suite: suite.into(),
                status: RunStatus::Complete,
                started_at: "2026-11-23T00:00:00Z".into(),
                ended_at: None,
                host: "lab<1>".into(),
                command_line: String::new(),
                labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                cells: cells.len(),
                total_cells: cells.len(),
                disturbed_cells: 0,
                error: None,
                iomatrix_version: "0".into(),
                pid: 0,
                pid_start: None,
            },
            json!({}),
            json!({"kernel": "6.1", "cpu_count": 2, "cpu_model": "Xeon & co", "ram_bytes": 8u64 << 30,
                "target": {"fs_type": "ext4", "mount_source": "/dev/vda", "mount_options": "rw,relatime"}}),
            json!({"backend": "psync", "direct": false, "cache": "page cache in use", "clients": 1,
                "files_vs_ram": "all files fit in RAM"}),
            cells,
        )
    }

    /// IOzone cells: write and read over files 64k, 1m and records 4k, 64k,
    /// every figure `scale` times a base.
    pub fn iozone(id: i64, scale: f64) -> StoredRun {
        let mut cells = Vec::new();
        for (t, test) in ["write", "read"].iter().enumerate() {
            for (i, file) in [64u64 << 10, 1 << 20].iter().enumerate() {
                for (j, record) in [4u64 << 10, 64 << 10].iter().enumerate() {
                    let base = 10_000.0 * (1 + t + 2 * i + 4 * j) as f64;
                    cells.push(cell(test, Some(*file), Some(*record), base * scale, json!({})));
                }
            }
        }
        run(id, "iozone", &[("server", "a")], cells)
    }

    fn latency(p50: f64) -> serde_json::Value {
        json!({"count": 100, "p50_ns": p50, "p90_ns": p50 * 2.0, "p99_ns": p50 * 5.0, "p99_9_ns": p50 * 9.0,
            "p99_99_ns": p50 * 20.0})
    }

    /// Run 1's clients on two hosts, the second far behind.
    pub fn hosts() -> HostFigures {
        let row = |host: &str, clients, sum: Option<f64>| HostRow {
            cell: "write 64k 4k".into(),
            host: host.into(),
            clients,
            sum,
            slowest: sum.map(|s| s / 2.0),
            fastest: sum.map(|s| s / 2.0),
        };
        HostFigures {
            run: 1,
            unit: "KB/s".into(),
            hosts: vec!["h1 (10.0.0.1)".into(), "h<2> (10.0.0.2)".into()],
            rows: vec![row("h1 (10.0.0.1)", 2, Some(8000.0)), row("h<2> (10.0.0.2)", 2, Some(2000.0))],
            stragglers: vec![Straggler { host: "h<2> (10.0.0.2)".into(), ratio: 0.4, cells: 1 }],
        }
    }

    /// Two access groups of five runs each, one cell each; B's figures are A's times `b_scale`
    /// (A: 1000 to 1040 KB/s), B compared with A.
    pub fn judged(b_scale: f64) -> Report {
        let side = |first: i64, scale: f64| -> Vec<StoredRun> {
            (0..5)
                .map(|k| {
                    let value = (1000.0 + 10.0 * k as f64) * scale;
                    let cells = vec![cell("access", Some(1 << 20), Some(4096), value, json!({"queue_depth": 1}))];
                    run(first + k, "access", &[], cells)
                })
                .collect()
        };
        let group = |name: &str, runs: Vec<StoredRun>| {
            let summary = Group::of(name, &runs, SuiteShape::PLAIN);
            ReportGroup { name: name.into(), runs, summary, flags: None, hosts: Vec::new() }
        };
        let groups = vec![group("a", side(1, 1.0)), group("b", side(6, b_scale))];
        let comparisons = vec![compare(&groups[0].summary, &groups[1].summary, Region::default())];
        Report {
            made_by: "iomatrix report a b".into(),
            made_at: "2026-12-06T00:00:00Z".into(),
            groups,
            baseline: 0,
            comparisons,
            sides: None,
        }
    }

    pub fn report() -> Report {
        let a = vec![iozone(1, 1.0)];
        let b = vec![iozone(2, 2.0), iozone(3, 4.0)];
        let access_cells = (1..=10)
            .map(|qd| {
                cell(
                    "access",
                    Some(1 << 20),
                    Some(4096),
                    1000.0 * f64::from(qd),
                    json!({"queue_depth": qd, "read_percent": 100, "random_percent": 100, "read": latency(1000.0 * f64::from(qd))}),
                )
            })
            .collect();
        let access = vec![run(4, "access", &[], access_cells)];
        // 100 Mbit/s is 12207 KB/s: some cells above, some below.
        let limit = Limit::parse_rate("100Mbit").unwrap();
        let group = |name: &str, runs: Vec<StoredRun>, limit: Option<&Limit>, shape: SuiteShape| {
            let summary = Group::of(name, &runs, shape);
            let flags = limit.map(|l| flag_cached(&summary, l));
            ReportGroup { name: name.into(), runs, summary, flags, hosts: Vec::new() }
        };
        let matrix = SuiteShape { matrix: true, whole_cell_latency: None, ..SuiteShape::PLAIN };
        let mut groups = vec![
            group("1", a, Some(&limit), matrix),
            group("2,3", b, Some(&limit), matrix),
            group("access & <co>", access, None, SuiteShape::PLAIN),
        ];
        groups[0].hosts = vec![hosts()];
        let comparisons = vec![compare(&groups[0].summary, &groups[1].summary, Region::default())];
        Report {
            made_by: "iomatrix report 1 2,3 4 -o r.html".into(),
            made_at: "2026-11-23T00:00:00Z".into(),
            groups,
            baseline: 0,
            comparisons,
            sides: None,
        }
    }
}
