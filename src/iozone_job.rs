//! Runs one IOzone plan for both front ends (`run iozone`, `iozone`).

use crate::clients::ClientPlan;
use crate::job::{Job, JobSpec, JobTarget, Output};
use crate::ranks::{Ranks, Shared};
use crate::remote::RemoteTarget;
use crate::repeat::Repeat;
use anyhow::Context;
use iomatrix_coord::Setup;
use iomatrix_core::{BackendKind, ByteSize, UsageError};
use iomatrix_iozone::{CellResult, CellSink, CellSpec, Ending, IozonePlan, IozoneTest, Place};
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
    let remote = crate::remote::url_of(&job.target).map(RemoteTarget::parse).transpose()?;
    if let Some(target) = &remote {
        check_remote_plan(plan, target)?;
    }
    let cells = plan.cells();
    let largest = plan.pairs().iter().map(|(f, _)| *f).max().unwrap_or_default();
    let mut conditions = json!({
        "cache": if plan.direct { "bypassed (O_DIRECT; fwrite/fread tests buffered)" } else { "page cache in use" },
        "fsync_timed": plan.fsync,
        "close_timed": plan.close,
    });
    if let (Some(all), Some(data)) =
        (conditions.as_object_mut(), crate::data_content::conditions(&plan.content).as_object())
    {
        all.extend(data.clone());
    }
    if remote.is_some() {
        conditions["cache"] = json!(
            "no client cache: iomatrix's own protocol client sends every request to the server (whose own cache may \
             serve it)"
        );
        conditions["backend"] = json!("iomatrix protocol client");
    }
    let mut run = Job::start(
        JobSpec {
            suite: "iozone",
            target: match &remote {
                Some(target) => JobTarget::Remote(target.clone()),
                None => JobTarget::Folder(job.target.clone()),
            },
            labels: job.labels.clone(),
            keep: job.keep,
            space_check: job.space_check,
            peak_bytes: plan.peak_bytes(),
            peak_detail: format!("{} client(s) x largest file {largest}", plan.clients),
            backend: plan.backend,
            direct: plan.direct,
            clients: plan.clients,
            plan: serde_json::to_value(plan)?,
            conditions,
            total_cells: cells.len(),
            keep_cell_lines: false,
            uncached_hint: "use --direct, or files larger than RAM,",
        },
        db,
    )?;
    // Local: a working folder here. Remote: one on the server, each client connecting on its own.
    let (workdir, remote_folder) = match (&remote, &mut run.remote) {
        (Some(_), Some(dir)) => (None, Some(dir.name.clone())),
        _ => {
            let workdir =
                run.workdir.as_ref().map(|w| w.path().to_path_buf()).context("this suite needs a folder target")?;
            (Some(workdir), None)
        }
    };
    let stop = run.stop;
    let shared_remote = remote.clone().zip(remote_folder.clone());
    let shared = Shared::Iozone {
        plan: plan.clone(),
        workdir: workdir.clone().unwrap_or_default(),
        clients: job.clients.clone(),
        remote: shared_remote,
    };
    ranks.share(&shared, &job.clients)?;
    let setup = Setup {
        cells: cells.len(),
        workdir: workdir.as_deref(),
        hooks: &job.clients.hooks,
        on_error: job.clients.on_error,
        stop,
    };
    let connect = crate::remote::connector(remote.as_ref());
    let place = match &remote_folder {
        Some(folder) => Place::Remote { connect: &connect, folder: folder.clone() },
        None => Place::Local,
    };
    let mut sink = StoreSink { job: &mut run, seq: 0, samples: BTreeMap::new() };
    let mut outcome = iomatrix_iozone::execute_at(plan, &ranks.group(plan.clients), &setup, &place, &mut sink)
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
        outcome = iomatrix_iozone::execute_at(&again, &ranks.group(plan.clients), &setup, &place, &mut sink)
            .map(|o| o.unwrap_or((0, Ending::Completed)));
        if sink.seq == done_before {
            break;
        }
    }
    let done = sink.seq;
    let outcome = outcome.map(|(_, ending)| (done, ending));
    run.finish(outcome, |i| pass_cells.get(i).map(describe).unwrap_or_default(), &job.output)
}

/// What a protocol client cannot do: stdio's buffering, O_DIRECT (there is
/// no client cache to bypass), the other local backends.
fn check_remote_plan(plan: &IozonePlan, target: &RemoteTarget) -> Result<(), UsageError> {
    let _ = target;
    if let Some(t) = plan.tests.iter().find(|t| t.is_stdio()) {
        return Err(UsageError::new(format!(
            "--tests {t}: the fwrite/fread tests measure C stdio's buffering of a local file; on a server through \
             iomatrix's own client run the other tests (write, rewrite, read, reread, random-read, random-write, \
             backward-read, record-rewrite, stride-read)"
        )));
    }
    if plan.direct {
        return Err(UsageError::new(
            "--direct: iomatrix's own protocol client keeps no cache, so every request already goes to the server; \
             leave --direct out",
        ));
    }
    if plan.backend != BackendKind::Psync {
        return Err(UsageError::new(format!(
            "--backend {}: on a server through iomatrix's own client the requests go through that client; leave \
             --backend out",
            plan.backend.name()
        )));
    }
    Ok(())
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
        let mut row = CellRow {
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
        if let (Some(m), Some(tally)) = (row.metrics.as_object_mut(), &cell.verify) {
            m.insert("verify".into(), json!(tally));
        }
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
        if let Some(found) = cell.verify.as_ref().filter(|t| t.mismatches() > 0) {
            line += &format!(", {} DATA MISMATCH(ES)", found.mismatches());
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
