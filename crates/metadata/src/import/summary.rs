//! mdtest's standard output read into a typed table: its header lines and its `SUMMARY rate`
//! and `SUMMARY time` tables, read by the column positions mdtest prints them at.
//!
//! mdtest 4.x prints each row as three spaces, the operation's name left-aligned in 18
//! characters and four more spaces (a phase's row) or in 22 characters (a tree's row), a space,
//! then Max, Min, Mean and Std Dev as `%14.3f` separated by one space. Both kinds of row put
//! the first figure's 14 characters at byte 26; figure `k` ends at byte `26 + 15k + 14`. A row
//! whose figures sit elsewhere is not mdtest's layout and is refused by its line, so a printer
//! that reads back through [`parse_outputs`] is held to mdtest's columns, not only its numbers.
//! One file may hold several outputs one after another (IO500's phases, a shell loop): each
//! `-- started at` begins one.

use crate::plan::Phase;
use std::fmt;

/// Where a row's first figure starts (three spaces, the name in 22, a space).
pub const FIRST_FIGURE_AT: usize = 26;
/// A figure's width (`%14.3f`).
pub const FIGURE_WIDTH: usize = 14;
/// From one figure's start to the next's (the figure and one space).
pub const FIGURE_STEP: usize = FIGURE_WIDTH + 1;

/// A SUMMARY table's four columns, in mdtest's order.
pub const COLUMNS: [&str; 4] = ["Max", "Min", "Mean", "Std Dev"];

/// Which SUMMARY table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// `SUMMARY rate`: operations a second.
    Rate,
    /// `SUMMARY time` (-P): each phase's time. mdtest heads it "(in ms/op)" but prints the
    /// phase's seconds (100,000 creates at 81,345/s: 1.132).
    Time,
}

/// One row of a SUMMARY table.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The operation as mdtest names it ("File creation").
    pub name: String,
    /// The phase it is; None for a name mdtest 4.x does not print.
    pub phase: Option<Phase>,
    /// Max, Min, Mean, Std Dev over the iterations.
    pub figures: [f64; 4],
    /// The line (1-based).
    pub line: usize,
    /// The byte offset each figure ends at in its line (for a check of the columns).
    pub figure_ends: [usize; 4],
}

impl SummaryRow {
    /// Max over the iterations.
    pub fn max(&self) -> f64 {
        self.figures[0]
    }
    /// Min over the iterations.
    pub fn min(&self) -> f64 {
        self.figures[1]
    }
    /// Mean over the iterations.
    pub fn mean(&self) -> f64 {
        self.figures[2]
    }
    /// Std dev over the iterations (0 for one).
    pub fn std_dev(&self) -> f64 {
        self.figures[3]
    }
    /// Whether the phase ran: mdtest prints a phase it did not run as a row of 0.000.
    pub fn ran(&self) -> bool {
        self.figures.iter().any(|f| *f != 0.0)
    }
}

/// A SUMMARY table.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryTable {
    /// Rate or time.
    pub kind: TableKind,
    /// Its heading line as printed (`SUMMARY rate (in ops/sec): (of 1 iterations)`; 4.0.0 has no
    /// unit words).
    pub heading: String,
    /// `(of N iterations)`.
    pub iterations: u32,
    /// Its rows, in the order printed.
    pub rows: Vec<SummaryRow>,
}

impl SummaryTable {
    /// The row of `phase`, if printed.
    pub fn row(&self, phase: Phase) -> Option<&SummaryRow> {
        self.rows.iter().find(|r| r.phase == Some(phase))
    }
}

/// `Continue stonewall hit min: A max: B avg: C`: the items each task had created when the
/// stonewall fired (every task then went on to the max).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StonewallHit {
    /// The fewest items a task had created.
    pub min: u64,
    /// The most.
    pub max: u64,
    /// The mean over the tasks.
    pub avg: f64,
}

/// One mdtest output, as printed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MdtestOutput {
    /// The line `-- started at` is on (1-based).
    pub first_line: usize,
    /// `-- started at MM/DD/YYYY HH:MM:SS --`, the text between.
    pub started_at: Option<String>,
    /// `-- finished at ... --`.
    pub finished_at: Option<String>,
    /// `mdtest-VERSION was launched ...`: VERSION (`4.1.0+dev`).
    pub version: Option<String>,
    /// `... with N total task(s)`.
    pub tasks: Option<u64>,
    /// `... on M node(s)`.
    pub nodes: Option<u64>,
    /// `Command line used: ...`, as printed.
    pub command_line: Option<String>,
    /// `Path                : ...`.
    pub path: Option<String>,
    /// `FS                  : ...`, as printed.
    pub fs: Option<String>,
    /// `N tasks, M files/directories`: M, the items of every task together.
    pub items: Option<u64>,
    /// What the items are: `files/directories`, `files` or `directories`.
    pub item_kinds: Option<String>,
    /// The stonewall line, when it fired.
    pub stonewall: Option<StonewallHit>,
    /// `SUMMARY rate`.
    pub rate: Option<SummaryTable>,
    /// `SUMMARY time` (-P).
    pub time: Option<SummaryTable>,
}

/// A line that is not mdtest's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryError {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SummaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The phase of a row name mdtest 4.x prints (no row for `DirReaddir`: mdtest prints none).
pub fn phase_of(name: &str) -> Option<Phase> {
    Phase::ALL.into_iter().find(|p| p.mdtest_row() == Some(name))
}

/// Whether `text` holds an mdtest output: its launch line and a SUMMARY heading.
pub fn looks_like_mdtest(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("mdtest-") && l.contains(" was launched with "))
        && text.lines().any(|l| table_heading(l).is_some())
}

/// `SUMMARY rate (in ops/sec): (of N iterations)` / `SUMMARY rate: (of N iterations)` (4.0.0),
/// and the same for `time`: the kind and N.
fn table_heading(line: &str) -> Option<(TableKind, Option<u32>)> {
    let rest = line.strip_prefix("SUMMARY ")?;
    let kind = if rest.starts_with("rate") {
        TableKind::Rate
    } else if rest.starts_with("time") {
        TableKind::Time
    } else {
        return None;
    };
    let of = rest.split("(of ").nth(1).and_then(|s| s.strip_suffix(" iterations)"));
    Some((kind, of.and_then(|n| n.trim().parse().ok())))
}

/// Every mdtest output in `text`, in order.
pub fn parse_outputs(text: &str) -> Result<Vec<MdtestOutput>, SummaryError> {
    let mut outputs: Vec<MdtestOutput> = Vec::new();
    let mut table: Option<SummaryTable> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(at) = between(line, "-- started at ", " --") {
            finish_table(outputs.last_mut(), table.take());
            outputs.push(MdtestOutput { first_line: n, started_at: Some(at.to_string()), ..MdtestOutput::default() });
            continue;
        }
        let Some(out) = outputs.last_mut() else { continue };
        if let Some((kind, iterations)) = table_heading(line) {
            finish_table(Some(out), table.take());
            let iterations = iterations.ok_or_else(|| SummaryError {
                line: n,
                message: format!("'{line}': no '(of N iterations)' after the heading, as mdtest prints it"),
            })?;
            table = Some(SummaryTable { kind, heading: line.to_string(), iterations, rows: Vec::new() });
            continue;
        }
        if let Some(t) = table.as_mut() {
            if is_table_head(line) {
                continue;
            }
            if let Some(row) = table_row(n, line)? {
                t.rows.push(row);
                continue;
            }
            finish_table(Some(out), table.take());
        }
        header_line(out, n, line)?;
    }
    finish_table(outputs.last_mut(), table.take());
    Ok(outputs)
}

fn finish_table(out: Option<&mut MdtestOutput>, table: Option<SummaryTable>) {
    if let (Some(out), Some(t)) = (out, table) {
        match t.kind {
            TableKind::Rate => out.rate = Some(t),
            TableKind::Time => out.time = Some(t),
        }
    }
}

/// The column heads under a heading: `   Operation ... Max ...` and `   ---------  ...`.
fn is_table_head(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("Operation ") || t.starts_with("---------")
}

/// A row of a table: None for a line that is not one (the table ended).
fn table_row(n: usize, line: &str) -> Result<Option<SummaryRow>, SummaryError> {
    if !line.starts_with("   ") || line.len() < FIRST_FIGURE_AT || !line.is_char_boundary(FIRST_FIGURE_AT) {
        return Ok(None);
    }
    let name = line[..FIRST_FIGURE_AT].trim();
    let Some(phase) = phase_of(name) else {
        return Ok(None);
    };
    if line.contains("per Rank") {
        return Err(SummaryError { line: n, message: "--showRankStatistics' columns are not read".into() });
    }
    let mut figures = [0.0; 4];
    let mut figure_ends = [0; 4];
    for (k, column) in COLUMNS.iter().enumerate() {
        let start = FIRST_FIGURE_AT + k * FIGURE_STEP;
        let end = start + FIGURE_WIDTH;
        let field = line.get(start..end).ok_or_else(|| SummaryError {
            line: n,
            message: format!("'{name}': the row ends before its {column} column (bytes {start}..{end})"),
        })?;
        let separated = k == 0 || line.as_bytes()[start - 1] == b' ';
        figures[k] = field
            .trim_start()
            .parse::<f64>()
            .ok()
            .filter(|x| separated && x.is_finite() && *x >= 0.0 && !field.trim_start().contains(' '))
            .ok_or_else(|| SummaryError {
                line: n,
                message: format!(
                    "'{name}': its {column} column (bytes {start}..{end}) holds '{field}', not a figure printed as \
                     mdtest's %14.3f"
                ),
            })?;
        figure_ends[k] = end;
    }
    if line.len() != figure_ends[3] {
        return Err(SummaryError {
            line: n,
            message: format!(
                "'{name}': text after its Std Dev column (byte {}), which mdtest does not print",
                figure_ends[3]
            ),
        });
    }
    Ok(Some(SummaryRow { name: name.to_string(), phase: Some(phase), figures, line: n, figure_ends }))
}

/// The header lines mdtest prints before its tables (others are passed over).
fn header_line(out: &mut MdtestOutput, n: usize, line: &str) -> Result<(), SummaryError> {
    if let Some(at) = between(line, "-- finished at ", " --") {
        out.finished_at = Some(at.to_string());
    } else if let Some(rest) = line.strip_prefix("mdtest-") {
        launch_line(out, n, rest)?;
    } else if let Some(cmd) = line.strip_prefix("Command line used: ") {
        out.command_line = Some(cmd.to_string());
    } else if let Some(path) = labelled(line, "Path") {
        out.path = Some(path.to_string());
    } else if let Some(fs) = labelled(line, "FS") {
        out.fs = Some(fs.to_string());
    } else if let Some(rest) = line.strip_prefix("Continue stonewall hit min: ") {
        out.stonewall = Some(stonewall_line(n, rest)?);
    } else if let Some((tasks, items)) = line.split_once(" tasks, ") {
        if let (Ok(_), Some((count, kinds))) = (tasks.parse::<u64>(), items.split_once(' ')) {
            out.items = Some(count.parse().map_err(|_| SummaryError {
                line: n,
                message: format!("'{line}': '{count}' is not the count of items mdtest prints"),
            })?);
            out.item_kinds = Some(kinds.to_string());
        }
    }
    Ok(())
}

/// `VERSION was launched with N total task(s) on M node(s)`.
fn launch_line(out: &mut MdtestOutput, n: usize, rest: &str) -> Result<(), SummaryError> {
    let Some((version, launch)) = rest.split_once(" was launched with ") else { return Ok(()) };
    let bad = || SummaryError {
        line: n,
        message: format!("'mdtest-{rest}': not 'mdtest-VERSION was launched with N total task(s) on M node(s)'"),
    };
    let (tasks, nodes) = launch.split_once(" total task(s) on ").ok_or_else(bad)?;
    let nodes = nodes.strip_suffix(" node(s)").ok_or_else(bad)?;
    out.version = Some(version.to_string());
    out.tasks = Some(tasks.parse().map_err(|_| bad())?);
    out.nodes = Some(nodes.parse().map_err(|_| bad())?);
    Ok(())
}

/// `A max: B avg: C ` after `Continue stonewall hit min: `.
fn stonewall_line(n: usize, rest: &str) -> Result<StonewallHit, SummaryError> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let parsed = match words.as_slice() {
        [min, "max:", max, "avg:", avg] => min.parse().ok().zip(max.parse().ok()).zip(avg.parse().ok()),
        _ => None,
    };
    let ((min, max), avg) = parsed.ok_or_else(|| SummaryError {
        line: n,
        message: format!("'Continue stonewall hit min: {rest}': not 'min: A max: B avg: C' as mdtest prints it"),
    })?;
    Ok(StonewallHit { min, max, avg })
}

/// `NAME   ...: VALUE` (mdtest's `Path                : /x`).
fn labelled<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(name)?;
    let (pad, value) = rest.split_once(": ")?;
    pad.trim().is_empty().then_some(value)
}

fn between<'a>(line: &'a str, start: &str, end: &str) -> Option<&'a str> {
    line.strip_prefix(start)?.strip_suffix(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/../../tests/fixtures/mdtest/{name}.txt", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn one(name: &str) -> MdtestOutput {
        let mut outputs = parse_outputs(&fixture(name)).unwrap();
        assert_eq!(outputs.len(), 1, "{name}");
        outputs.remove(0)
    }

    #[test]
    fn the_header_and_rate_table_of_mdtest_4_1_are_read() {
        let out = one("master-n1000-u");
        assert_eq!(out.version.as_deref(), Some("4.1.0+dev"));
        assert_eq!((out.tasks, out.nodes, out.items), (Some(1), Some(1), Some(1000)));
        assert_eq!(out.item_kinds.as_deref(), Some("files/directories"));
        assert_eq!(out.path.as_deref(), Some("/tmp/mdtest-run/a"));
        assert!(out.command_line.as_deref().unwrap().ends_with("'-n' '1000' '-u' '-d' '/tmp/mdtest-run/a'"));
        assert_eq!(out.started_at.as_deref(), Some("12/06/2026 20:57:08"));
        assert_eq!(out.finished_at.as_deref(), Some("12/06/2026 20:57:09"));
        let rate = out.rate.unwrap();
        assert_eq!((rate.kind, rate.iterations), (TableKind::Rate, 1));
        let names: Vec<&str> = rate.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names.len(), 10, "no Directory read row: {names:?}");
        let create = rate.row(Phase::FileCreate).unwrap();
        assert_eq!(create.figures, [45081.623, 45081.623, 45081.623, 0.0]);
        assert_eq!(create.figure_ends, [40, 55, 70, 85]);
        assert_eq!(rate.row(Phase::TreeRemove).unwrap().figure_ends, [40, 55, 70, 85], "tree rows align too");
        assert!(out.time.is_none());
    }

    #[test]
    fn iterations_std_dev_time_table_and_mdtest_4_0_are_read() {
        let out = one("master-i3");
        let rate = out.rate.unwrap();
        assert_eq!(rate.iterations, 3);
        let stat = rate.row(Phase::DirStat).unwrap();
        assert_eq!(
            (stat.max(), stat.min(), stat.mean(), stat.std_dev()),
            (461267.349, 284997.214, 384151.071, 90177.776)
        );
        let old = one("v400-P");
        assert_eq!(old.version.as_deref(), Some("4.0.0"));
        assert_eq!(old.rate.as_ref().unwrap().heading, "SUMMARY rate: (of 2 iterations)");
        let time = old.time.unwrap();
        assert_eq!((time.kind, time.iterations, time.rows.len()), (TableKind::Time, 2, 10));
        assert_eq!(time.row(Phase::FileCreate).unwrap().figures, [0.017, 0.011, 0.014, 0.004]);
    }

    #[test]
    fn phases_not_run_stonewall_and_io500_lines_are_read() {
        let out = one("master-F-C-T-r");
        let rate = out.rate.unwrap();
        assert_eq!(rate.rows.len(), 6, "files and tree rows only");
        assert!(!rate.row(Phase::FileRead).unwrap().ran());
        assert_eq!(out.item_kinds.as_deref(), Some("files"));
        let sw = one("master-np2-io500-easy-write");
        assert_eq!(sw.stonewall, Some(StonewallHit { min: 40364, max: 46029, avg: 43196.5 }));
        assert_eq!((sw.tasks, sw.items), (Some(2), Some(100_000)));
        assert_eq!(sw.time.unwrap().row(Phase::FileCreate).unwrap().mean(), 1.132);
        for name in [
            "master-n1000",
            "master-z2-b4-I10-L",
            "master-P",
            "master-D-U",
            "master-np2-n1000-i2",
            "master-np2-io500-easy-stat",
            "master-np2-io500-easy-delete",
            "master-np2-io500-hard-write",
            "master-W1-n100000",
            "master-np2-n1000-u",
            "v400-n1000-u",
        ] {
            let out = one(name);
            assert!(out.rate.is_some_and(|t| !t.rows.is_empty()), "{name}");
            assert!(looks_like_mdtest(&fixture(name)), "{name}");
        }
    }

    #[test]
    fn outputs_pasted_together_are_each_read() {
        let text = fixture("master-n1000-u") + &fixture("master-P");
        let outs = parse_outputs(&text).unwrap();
        assert_eq!(outs.len(), 2);
        assert!(outs[0].time.is_none() && outs[1].time.is_some());
        assert_eq!(outs[1].first_line, 26);
    }

    #[test]
    fn a_figure_out_of_its_column_is_refused_by_line() {
        let text = fixture("master-n1000-u")
            .replace("   File stat                  290102.642", "   File stat                 290102.642 ");
        let e = parse_outputs(&text).unwrap_err();
        assert_eq!(e.line, 19, "{e}");
        assert!(e.message.contains("'File stat': its Max column (bytes 26..40)"), "{e}");
        let text = fixture("master-n1000-u").replace("45081.623          0.000", "45081.623          0.000 x");
        let e = parse_outputs(&text).unwrap_err().to_string();
        assert!(e.contains("text after its Std Dev column"), "{e}");
        assert!(!looks_like_mdtest("hello\n"));
    }
}
