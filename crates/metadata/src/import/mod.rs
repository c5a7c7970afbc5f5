//! The metadata suite's importer: mdtest's standard output ([`summary`] reads it), each output
//! a run of this suite, each phase that ran a cell shaped as the suite's own (its
//! [`PhaseResult`] under `"phase"`), with what mdtest's output does not give left out and said.

pub mod summary;

use crate::front::{options, plan as front_plan};
use crate::plan::{MetadataPlan, Phase};
use crate::result::PhaseResult;
use iomatrix_import::{
    imported_row, line_source, unknown_conditions, Format, ImportError, ImportedCell, ImportedRun, Importer, Options,
    PublishedSuite,
};
use iomatrix_store::CellRow;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use summary::{MdtestOutput, SummaryRow};

/// The suite whose runs the importer makes.
const SUITE: &str = <crate::cli::Metadata as iomatrix_harness::Suite>::NAME;

/// mdtest's standard output (4.x: `SUMMARY rate`, with -P `SUMMARY time`).
pub const MDTEST: Format = Format {
    name: "mdtest",
    aliases: &[],
    tool: "mdtest",
    suite: SUITE,
    describe: "mdtest's output (4.x: its header lines and SUMMARY tables)",
    json_name: "mdtest",
    place: 6,
    takes_chunk: false,
    listed: "mdtest (mdtest's output)",
    becomes: "mdtest's SUMMARY rows -> metadata cells (a phase each)",
};

/// Reads mdtest's output.
struct MdtestText;

impl Importer for MdtestText {
    fn format(&self) -> Format {
        MDTEST
    }

    fn recognises(&self, text: &str) -> bool {
        summary::looks_like_mdtest(text)
    }

    fn read(&self, text: &str, _options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        let outputs = summary::parse_outputs(text).map_err(|e| ImportError::at_line(e.line, e.message))?;
        let runs: Vec<ImportedRun> = outputs.iter().filter(|o| o.rate.is_some()).map(run).collect();
        if runs.is_empty() {
            return Err(ImportError::new(
                "no mdtest output with a SUMMARY rate table found ('-- started at', 'mdtest-VERSION was launched \
                 with ...', then 'SUMMARY rate (in ops/sec): (of N iterations)' and its rows)",
            ));
        }
        Ok(runs)
    }
}

/// The metadata suite's importers, as the command table registers them.
pub const IMPORTERS: &[&dyn Importer] = &[&MdtestText];

/// What a published table may give of a metadata run's cells: nothing of its own yet.
pub const PUBLISHED: PublishedSuite = PublishedSuite { name: SUITE, metrics: &[], walk: false };

/// The plan mdtest's printed command line asks for, where iomatrix reads it.
fn plan_of(out: &MdtestOutput) -> Option<MetadataPlan> {
    let words = quoted_words(out.command_line.as_deref()?)?;
    front_plan::plan(&options::parse(&words).ok()?).ok()
}

/// mdtest prints its command line as the program, then each word in single quotes.
fn quoted_words(line: &str) -> Option<Vec<String>> {
    let (_, rest) = line.split_once(" '")?;
    let rest = rest.strip_suffix('\'')?;
    Some(rest.split("' '").map(str::to_string).collect())
}

/// The items a phase touched, over every task: the items line's count (the stonewall's count
/// reached, every task's, for a create it stopped); for a tree, its folders as the command
/// line gives them.
fn items_of(out: &MdtestOutput, plan: Option<&MetadataPlan>, phase: Phase) -> Option<u64> {
    let tasks = out.tasks?;
    match phase {
        Phase::TreeCreate | Phase::TreeRemove => plan.map(|p| front_plan::tree_folders(&p.tree)),
        Phase::FileCreate if out.stonewall.is_some() => out.stonewall.map(|s| s.max * tasks),
        _ => out.items,
    }
}

fn run(out: &MdtestOutput) -> ImportedRun {
    let plan = plan_of(out);
    let rate = out.rate.as_ref().expect("runs are made of outputs with a rate table");
    let mut notes =
        vec!["each cell's rate is mdtest's SUMMARY rule (the slowest task's rate times the tasks; a tree's: rank 0's)"
            .to_string()];
    if rate.iterations > 1 {
        notes.push(format!(
            "mdtest prints Max, Min, Mean and Std Dev over its {} iterations, not each: one cell per phase holds \
             the Mean, metrics.mdtest all four",
            rate.iterations
        ));
    }
    if out.stonewall.is_some() {
        notes.push("the stonewall fired in file creation: the counts when it fired are in metrics.mdtest".into());
    }
    let cells = rate.rows.iter().filter(|r| r.ran()).filter_map(|r| cell(out, plan.as_ref(), r)).collect();
    let mut conditions = unknown_conditions(SUITE);
    conditions.insert("clients".into(), out.tasks.map_or(Value::Null, Value::from));
    conditions.insert("target".into(), out.path.as_deref().map_or(Value::Null, Value::from));
    ImportedRun {
        labels: Vec::new(),
        format: MDTEST,
        tool_version: out.version.clone(),
        host: None,
        measured_at: out.started_at.clone(),
        plan: json!({
            "tool": "mdtest",
            "command_line": out.command_line,
            "tasks": out.tasks,
            "nodes": out.nodes,
            "items": out.items,
            "item_kinds": out.item_kinds,
            "iterations": rate.iterations,
            "path": out.path,
            "fs": out.fs,
            "metadata_plan": plan,
            "lines": [out.first_line],
        }),
        environment: json!({}),
        conditions,
        unknown: unknown(out),
        notes,
        cells,
        unmeasured: Vec::new(),
        skipped: rate.rows.iter().filter(|r| !r.ran()).map(|r| format!("{}: not run (0.000)", r.name)).collect(),
        bad_lines: Vec::new(),
    }
}

/// What mdtest's output does not give.
fn unknown(out: &MdtestOutput) -> Vec<String> {
    let mut unknown =
        vec!["each task's own rate and time, per-operation latency and failures by errno (mdtest prints none)".into()];
    if out.time.is_none() {
        unknown.push(
            "the rate of every task's items over the slowest task's time (IO500's rule: mdtest prints the time \
             only with -P); stored as the SUMMARY rate"
                .into(),
        );
    }
    unknown.push("backend; file system type and mount; the hosts".into());
    unknown
}

/// A phase's cell: its [`PhaseResult`] (the Mean as both rates where the time is not printed;
/// no client, latency or failure) and mdtest's four figures beside it.
fn cell(out: &MdtestOutput, plan: Option<&MetadataPlan>, row: &SummaryRow) -> Option<ImportedCell> {
    let phase = row.phase?;
    let items = items_of(out, plan, phase).unwrap_or(0);
    let time = out.time.as_ref().and_then(|t| t.row(phase)).map(SummaryRow::mean).filter(|t| *t > 0.0);
    let all_over_slowest = match time {
        Some(t) if items > 0 => items as f64 / t,
        _ => row.mean(),
    };
    let result = PhaseResult {
        phase,
        iteration: 0,
        items,
        rate_all_over_slowest: all_over_slowest,
        rate_slowest_times_clients: row.mean(),
        clients: Vec::new(),
        latency: None,
        failures: BTreeMap::new(),
        stonewall: None,
        found: None,
        load: None,
        open: None,
        curve: None,
        latency_target: None,
    };
    let mut not_in_source = vec!["clients", "latency", "failures", "cpu", "wall_ns"];
    if time.is_none() || items == 0 {
        not_in_source.push("rate_all_over_slowest");
    }
    let metrics = json!({
        // The cell's figure, as run metadata's cells store it: what compare, sweep and report judge.
        "per_sec": result.rate_all_over_slowest,
        "unit": "ops/s",
        "phase": result,
        "mdtest": {
            "row": row.name,
            "max": row.max(), "min": row.min(), "mean": row.mean(), "std_dev": row.std_dev(),
            "iterations": out.rate.as_ref().map(|t| t.iterations),
            "time": out.time.as_ref().and_then(|t| t.row(phase)).map(|t| t.figures),
            "stonewall": out.stonewall.filter(|_| phase == Phase::FileCreate)
                .map(|s| json!({"min": s.min, "max": s.max, "avg": s.avg})),
        },
        "not_in_source": not_in_source,
    });
    Some(ImportedCell {
        line: Some(row.line),
        source: line_source(row.line),
        row: CellRow {
            test: phase.name().to_string(),
            clients: out.tasks.and_then(|t| usize::try_from(t).ok()).unwrap_or(1),
            ops: items,
            cpu_percent: None,
            metrics,
            ..imported_row()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/../../tests/fixtures/mdtest/{name}.txt", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    }

    fn phase_of(cell: &ImportedCell) -> PhaseResult {
        serde_json::from_value(cell.metrics["phase"].clone()).unwrap()
    }

    #[test]
    fn every_fixture_is_recognised_and_its_phases_become_cells() {
        let runs = MdtestText.read(&fixture("master-n1000-u"), &Options::default()).unwrap();
        let r = &runs[0];
        assert_eq!((r.tool_version.as_deref(), r.conditions["clients"].as_u64()), (Some("4.1.0+dev"), Some(1)));
        let names: Vec<&str> = r.cells.iter().map(|c| c.test.as_str()).collect();
        let summary_rows: Vec<&str> =
            crate::front::output::printed_rows(crate::plan::ItemKinds::Both).into_iter().map(Phase::name).collect();
        assert_eq!(names, summary_rows, "every row of mdtest's SUMMARY table, in its order");
        let create = phase_of(&r.cells[4]);
        assert_eq!(
            (create.phase, create.items, create.rate_slowest_times_clients),
            (Phase::FileCreate, 1000, 45081.623)
        );
        assert!(create.clients.is_empty() && create.latency.is_none());
        assert_eq!(phase_of(&r.cells[8]).items, 1, "a tree of depth 0 is its root");
        assert_eq!(r.cells[4].line, Some(18));
    }

    #[test]
    fn stonewall_time_table_and_phases_not_run() {
        let r = &MdtestText.read(&fixture("master-np2-io500-easy-write"), &Options::default()).unwrap()[0];
        let names: Vec<&str> = r.cells.iter().map(|c| c.test.as_str()).collect();
        assert_eq!(names, ["file-create", "tree-create"], "rows of 0.000 are phases not run");
        assert_eq!(r.skipped.len(), 4);
        let create = phase_of(&r.cells[0]);
        assert_eq!(create.items, 2 * 46029, "every task went on to the largest count");
        assert!((create.rate_all_over_slowest - 92058.0 / 1.132).abs() < 1e-6, "{}", create.rate_all_over_slowest);
        assert_eq!(r.cells[0].metrics["mdtest"]["stonewall"]["min"], 40364);
        let three = MdtestText.read(&fixture("master-i3"), &Options::default()).unwrap();
        assert!(three[0].notes.iter().any(|n| n.contains("over its 3 iterations")));
        assert_eq!(three[0].cells[1].metrics["mdtest"]["std_dev"], 90177.776);
        let pasted = fixture("master-n1000") + &fixture("v400-P");
        assert!(MdtestText.recognises(&pasted));
        assert_eq!(MdtestText.read(&pasted, &Options::default()).unwrap().len(), 2);
        let e = MdtestText
            .read("-- started at x --\nmdtest-4 was launched with 1 total task(s) on 1 node(s)\n", &Options::default());
        assert!(e.unwrap_err().to_string().contains("no mdtest output with a SUMMARY rate table"));
    }
}
