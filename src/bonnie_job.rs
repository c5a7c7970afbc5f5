//! Runs one Bonnie plan for both front ends (`run bonnie`, `bonnie`).

use crate::job::{Job, JobSpec, JobTarget, Output};
use anyhow::Context;
use iomatrix_bonnie::{planned_tests, BonniePlan, BonnieResult};
use iomatrix_core::BackendKind;
use iomatrix_iozone::{ClientFailure, Ending};
use iomatrix_store::CellRow;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub struct BonnieJob {
    pub plan: BonniePlan,
    pub target: PathBuf,
    pub labels: Vec<(String, String)>,
    pub keep: bool,
    pub space_check: bool,
    pub json: bool,
}

pub fn run(job: BonnieJob, db: &Path) -> anyhow::Result<ExitCode> {
    let plan = &job.plan;
    plan.validate(iomatrix_environment::machine_ram_bytes())?;
    let tests = planned_tests(plan);
    let mut run = Job::start(
        JobSpec {
            suite: "bonnie",
            target: JobTarget::Folder(job.target.clone()),
            labels: job.labels.clone(),
            keep: job.keep,
            space_check: job.space_check,
            peak_bytes: plan.peak_bytes(),
            peak_detail: format!("a {} test file plus the file tests' files", plan.size),
            backend: BackendKind::Sync,
            direct: plan.direct,
            clients: 1,
            plan: serde_json::to_value(plan)?,
            conditions: json!({
                "cache": if plan.direct {
                    "bypassed (O_DIRECT) for block write, rewrite, block read and seeks; per-char and file tests buffered"
                } else {
                    "page cache in use"
                },
                "fsync_timed": plan.sync,
                "close_timed": true,
            }),
            total_cells: tests.len(),
            keep_cell_lines: true,
            uncached_hint: "use --direct, or a file of at least twice the RAM,",
        },
        db,
    )?;
    let workdir = run.workdir.as_ref().map(|w| w.path().to_path_buf()).context("this suite needs a folder target")?;
    let stop = run.stop;
    let mut seq = 0;
    let outcome = iomatrix_bonnie::execute(plan, &workdir, stop, &mut |result| {
        let line = format!(
            "{} (repeat {}): {:.0} {}, CPU {:.0}%",
            result.test.heading(),
            result.repeat,
            result.per_sec,
            result.unit,
            result.cpu_percent
        );
        let stored = run.store_cell(&row(plan, seq, result), &line);
        seq += 1;
        stored
    });
    // Bonnie runs one client in this thread; map its outcome to the run's ending.
    let ending = match outcome {
        Ok(o) if o.stopped => Ok((o.done, Ending::Interrupted)),
        Ok(o) => Ok((o.done, Ending::Completed)),
        Err(e) => Ok((seq, Ending::ClientFailed { cell: seq, failures: vec![ClientFailure::error(0, e.0)] })),
    };
    run.finish(
        ending,
        |i| tests.get(i).map(|(r, t)| format!("{} (repeat {r})", t.heading())).unwrap_or_default(),
        &Output { json: job.json, ..Output::default() },
    )
}

fn row(plan: &BonniePlan, seq: usize, r: &BonnieResult) -> CellRow {
    CellRow {
        seq,
        test: r.test.name().to_string(),
        file_size: Some(plan.size.bytes()),
        record_size: Some(plan.chunk.bytes()),
        backend: BackendKind::Sync.name().into(),
        direct: plan.direct && !r.test.is_per_char() && !r.test.is_file_test(),
        clients: 1,
        bytes: r.bytes,
        ops: r.ops,
        wall_ns: r.wall_ns,
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: if r.unit == "KB/s" { r.per_sec } else { 0.0 },
        cpu_percent: r.cpu_percent,
        metrics: serde_json::to_value(r).unwrap_or_default(),
        client_figures: json!([]),
        blobs: Vec::new(),
    }
}
