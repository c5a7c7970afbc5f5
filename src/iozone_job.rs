//! Runs one IOzone plan for both front ends (`run iozone`, `iozone`).

use crate::clients::ClientPlan;
use crate::job::{Job, JobSpec, JobTarget, Output};
use crate::ranks::{Ranks, Shared};
use crate::repeat::Repeat;
use anyhow::Context;
use iomatrix_coord::Setup;
use iomatrix_core::ByteSize;
use iomatrix_iozone::{CellResult, CellSink, CellSpec, Ending, IozonePlan, IozoneTest};
use iomatrix_store::CellRow;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub struct IozoneJob {
    pub plan: IozonePlan,
    pub target: PathBuf,
    pub labels: Vec<(String, String)>,
    pub keep: bool,
    pub space_check: bool,
    pub output: Output,
    pub clients: ClientPlan,
    /// `plan.repeats` is its count; its tolerance re-measures noisy cells after the plan.
    pub repeat: Repeat,
}

pub fn run(job: IozoneJob, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let plan = &job.plan;
    plan.validate()?;
    let cells = plan.cells();
    let largest = plan.pairs().iter().map(|(f, _)| *f).max().unwrap_or_default();
    let mut run = Job::start(
        JobSpec {
            suite: "iozone",
            target: JobTarget::Folder(job.target.clone()),
            labels: job.labels.clone(),
            keep: job.keep,
            space_check: job.space_check,
            peak_bytes: plan.peak_bytes(),
            peak_detail: format!("{} client(s) x largest file {largest}", plan.clients),
            backend: plan.backend,
            direct: plan.direct,
            clients: plan.clients,
            plan: serde_json::to_value(plan)?,
            conditions: json!({
                "cache": if plan.direct { "bypassed (O_DIRECT; fwrite/fread tests buffered)" } else { "page cache in use" },
                "fsync_timed": plan.fsync,
                "close_timed": plan.close,
            }),
            total_cells: cells.len(),
            keep_cell_lines: false,
            uncached_hint: "use --direct, or files larger than RAM,",
        },
        db,
    )?;
    let workdir = run.workdir.as_ref().map(|w| w.path().to_path_buf()).context("this suite needs a folder target")?;
    let stop = run.stop;
    let shared = Shared::Iozone { plan: plan.clone(), workdir: workdir.clone(), clients: job.clients.clone() };
    ranks.share(&shared, &job.clients)?;
    let setup = Setup {
        cells: cells.len(),
        workdir: Some(&workdir),
        hooks: &job.clients.hooks,
        on_error: job.clients.on_error,
        stop,
    };
    let mut sink = StoreSink { job: &mut run, seq: 0, samples: BTreeMap::new() };
    let mut outcome = iomatrix_iozone::execute(plan, &ranks.group(plan.clients), &setup, &mut sink)
        .map(|o| o.unwrap_or((0, Ending::Completed)));
    // Seed 001's rule: noisy cells are measured again, a pair at a time, up to --max-repeats samples.
    let mut pass_cells = cells;
    while let (Ok((_, Ending::Completed)), Some(tolerance)) = (&outcome, job.repeat.tolerance_pct) {
        let noisy = noisy_pairs(&sink.samples, &job.repeat);
        if noisy.is_empty() {
            break;
        }
        let again = IozonePlan { only_pairs: Some(noisy), repeats: 1, ..plan.clone() };
        pass_cells = again.cells();
        eprintln!(
            "iomatrix: {} file/record pair(s) have a sample further than {tolerance}% from the median: measuring them again",
            again.pairs().len()
        );
        sink.job.add_cells(pass_cells.len())?;
        let setup = Setup { cells: pass_cells.len(), ..setup };
        let done_before = sink.seq;
        outcome = iomatrix_iozone::execute(&again, &ranks.group(plan.clients), &setup, &mut sink)
            .map(|o| o.unwrap_or((0, Ending::Completed)));
        if sink.seq == done_before {
            break;
        }
    }
    let done = sink.seq;
    let outcome = outcome.map(|(_, ending)| (done, ending));
    run.finish(outcome, |i| pass_cells.get(i).map(describe).unwrap_or_default(), &job.output)
}

/// The pairs with a test whose samples are too spread and may have more.
fn noisy_pairs(
    samples: &BTreeMap<(ByteSize, ByteSize, IozoneTest), Vec<f64>>,
    repeat: &Repeat,
) -> Vec<(ByteSize, ByteSize)> {
    let mut pairs: Vec<(ByteSize, ByteSize)> =
        samples.iter().filter(|(_, s)| repeat.noisy(s)).map(|((f, r, _), _)| (*f, *r)).collect();
    pairs.dedup();
    pairs
}

/// Stores each cell as it comes, numbering cells across passes, and keeps
/// every cell's samples for the noise rule.
struct StoreSink<'a> {
    job: &'a mut Job,
    seq: usize,
    samples: BTreeMap<(ByteSize, ByteSize, IozoneTest), Vec<f64>>,
}

impl CellSink for StoreSink<'_> {
    fn cell_done(&mut self, cell: &CellResult) -> Result<(), String> {
        let spec = &cell.spec;
        let row = CellRow {
            seq: self.seq,
            test: spec.test.name().to_string(),
            file_size: Some(spec.file_size.bytes()),
            record_size: Some(spec.record_size.bytes()),
            backend: spec.backend.name().to_string(),
            direct: spec.direct,
            clients: cell.clients.len(),
            bytes: cell.bytes,
            ops: cell.ops,
            wall_ns: cell.wall_ns,
            user_ns: cell.user_ns,
            sys_ns: cell.sys_ns,
            kib_per_sec: cell.kib_per_sec,
            cpu_percent: cell.cpu_percent,
            metrics: json!({
                "kib_per_sec_overall": cell.kib_per_sec_overall,
                "kib_per_sec_stonewalled": cell.kib_per_sec_stonewalled,
                "first_finish_ns": cell.first_finish_ns,
                "failed_clients": cell.failures,
                "lost_bytes": cell.failures.len() as u64 * spec.file_size.bytes(),
                "start_barrier": cell.starts,
                "repeat": spec.repeat,
            }),
            client_figures: serde_json::to_value(&cell.clients).unwrap_or_default(),
            blobs: Vec::new(),
        };
        let mut line = format!("{}: {:.0} KB/s, CPU {:.0}%", describe(spec), cell.kib_per_sec, cell.cpu_percent);
        if let Some(slowest) = cell.slowest() {
            line += &format!(
                " ({} clients; slowest: client {} at {:.0} KB/s)",
                cell.clients.len(),
                slowest.rank,
                slowest.kib_per_sec()
            );
        }
        if !cell.failures.is_empty() {
            line += &format!(", {} client(s) failed", cell.failures.len());
        }
        let samples = self.samples.entry((spec.file_size, spec.record_size, spec.test)).or_default();
        if spec.repeat > 1 || !samples.is_empty() {
            line += &format!(" (sample {})", samples.len() + 1);
        }
        self.job.store_cell(&row, &line)?;
        self.seq += 1;
        samples.push(cell.kib_per_sec);
        Ok(())
    }
}

fn describe(cell: &CellSpec) -> String {
    format!("{} file {} record {}", cell.test, cell.file_size, cell.record_size)
}
