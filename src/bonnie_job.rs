//! Runs one Bonnie plan for both front ends (`run bonnie`, `bonnie`), from
//! one client or many (threads, or MPI ranks), each in its own folder.

use crate::clients::ClientPlan;
use crate::job::{Job, JobSpec, JobTarget, Output};
use crate::ranks::{Ranks, Shared};
use anyhow::Context;
use iomatrix_bonnie::{planned_tests, BonnieCell, BonniePlan};
use iomatrix_coord::Setup;
use iomatrix_core::BackendKind;
use iomatrix_iozone::Ending;
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
    pub clients: ClientPlan,
}

pub fn run(job: BonnieJob, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
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
            peak_bytes: plan.peak_bytes() * job.clients.count as u64,
            peak_detail: format!(
                "{} client(s) x a {} test file plus the file tests' files",
                job.clients.count, plan.size
            ),
            backend: BackendKind::Sync,
            direct: plan.direct,
            clients: job.clients.count,
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
    ranks.share(
        &Shared::Bonnie { plan: plan.clone(), workdir: workdir.clone(), clients: job.clients.clone() },
        &job.clients,
    )?;
    let setup = Setup {
        cells: tests.len(),
        workdir: Some(&workdir),
        hooks: &job.clients.hooks,
        on_error: job.clients.on_error,
        stop: run.stop,
    };
    let mut seq = 0;
    let outcome = iomatrix_bonnie::execute(plan, &ranks.group(job.clients.count), &setup, |cell| {
        let stored = run.store_cell(&row(plan, seq, cell), &line(cell));
        seq += 1;
        stored.map_err(|e| format!("storing the {} result of repeat {}: {e}", cell.test, cell.repeat))
    })
    .map(|o| o.unwrap_or((0, Ending::Completed)));
    run.finish(
        outcome,
        |i| tests.get(i).map(|(r, t)| format!("{} (repeat {r})", t.heading())).unwrap_or_default(),
        &Output { json: job.json, ..Output::default() },
    )
}

/// The line kept for a finished test.
fn line(cell: &BonnieCell) -> String {
    let r = &cell.total;
    let mut line =
        format!("{} (repeat {}): {:.0} {}, CPU {:.0}%", r.test.heading(), r.repeat, r.per_sec, r.unit, r.cpu_percent);
    if let Some(slowest) = cell.slowest() {
        line += &format!(
            " summed over {} clients, overall {:.0} (slowest: client {} at {:.0})",
            cell.clients.len(),
            cell.per_sec_overall,
            slowest.rank,
            slowest.result.per_sec
        );
    }
    if !cell.failures.is_empty() {
        line += &format!(", {} client(s) failed", cell.failures.len());
    }
    line
}

/// The cell: the merged figures in `metrics` (bonnie++'s layout reads
/// them) with the many-client figures beside them, each client's own in
/// `client_figures`. `kib_per_sec` is the sum of the clients' rates.
fn row(plan: &BonniePlan, seq: usize, cell: &BonnieCell) -> CellRow {
    let r = &cell.total;
    let mut metrics = serde_json::to_value(r).unwrap_or_default();
    if let Some(m) = metrics.as_object_mut() {
        m.insert("per_sec_sum_of_clients".into(), json!(r.per_sec));
        m.insert("per_sec_overall".into(), json!(cell.per_sec_overall));
    }
    crate::clients::add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
    let client_figures: Vec<serde_json::Value> =
        cell.clients.iter().map(|c| crate::clients::figures_with_rank(c.rank, &c.result)).collect();
    CellRow {
        seq,
        test: r.test.name().to_string(),
        file_size: Some(plan.size.bytes()),
        record_size: Some(plan.chunk.bytes()),
        backend: BackendKind::Sync.name().into(),
        direct: plan.direct && !r.test.is_per_char() && !r.test.is_file_test(),
        clients: cell.clients.len(),
        bytes: r.bytes,
        ops: r.ops,
        wall_ns: r.wall_ns,
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: if r.unit == "KB/s" { r.per_sec } else { 0.0 },
        cpu_percent: r.cpu_percent,
        metrics,
        client_figures: json!(client_figures),
        blobs: Vec::new(),
    }
}
