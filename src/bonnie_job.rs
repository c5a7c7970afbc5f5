//! Runs one Bonnie plan for both front ends (`run bonnie`, `bonnie`), from
//! one client or many (threads, or MPI ranks), each in its own folder: on
//! this machine, or on a server (`nfs://`, `smb://` targets) through
//! iomatrix's own protocol client, each client with its own session.

use crate::clients::ClientPlan;
use crate::job::{Job, JobSpec, JobTarget, Output};
use crate::ranks::{Ranks, Shared};
use crate::remote::RemoteTarget;
use anyhow::Context;
use iomatrix_bonnie::{planned_tests, BonnieCell, BonniePlan, BonnieTest, Place};
use iomatrix_coord::Setup;
use iomatrix_core::{BackendKind, UsageError};
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
    let remote = crate::remote::url_of(&job.target).map(RemoteTarget::parse).transpose()?;
    // Over a protocol client this machine's page cache is not in the way: only a RAM
    // stated with -r/--ram (the server's) is held against the file size.
    plan.validate(if remote.is_some() { 0 } else { iomatrix_environment::machine_ram_bytes() })?;
    if remote.is_some() {
        check_remote_plan(plan)?;
    }
    let tests = planned_tests(plan);
    let mut conditions = json!({
        "cache": if plan.direct {
            "bypassed (O_DIRECT) for block write, rewrite, block read and seeks; per-char and file tests buffered"
        } else {
            "page cache in use"
        },
        "fsync_timed": plan.sync,
        "close_timed": true,
    });
    if plan.content.stamped() {
        if let (Some(all), Some(data)) =
            (conditions.as_object_mut(), crate::data_content::conditions(&plan.content).as_object())
        {
            all.extend(data.clone());
        }
        conditions["verify_scope"] = json!(verify_scope(plan));
    }
    if remote.is_some() {
        conditions["cache"] = json!(format!(
            "no client cache: iomatrix's own protocol client sends every request to the server, whose own cache may \
             serve it; {}",
            remote_ram_rule(plan)
        ));
        conditions["backend"] = json!("iomatrix protocol client");
        conditions["per_char_buffer"] = json!(
            "putc and getc buffer one request: the negotiated write and read sizes (NFS wtpref/rtpref, SMB \
             MaxWriteSize/MaxReadSize), at most 1 MiB; per_char_buffer_bytes in those cells"
        );
        if plan.sync {
            conditions["sync"] = json!(
                "-b: NFS COMMIT / SMB FLUSH of the data file before each close, after each seek write-back and of \
                 each created file; folder operations are synchronous on the server (no folder fsync)"
            );
        }
    }
    let mut run = Job::start(
        JobSpec {
            suite: "bonnie",
            target: match &remote {
                Some(target) => JobTarget::Remote(target.clone()),
                None => JobTarget::Folder(job.target.clone()),
            },
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
            conditions,
            total_cells: tests.len(),
            keep_cell_lines: true,
            uncached_hint: "use --direct, or a file of at least twice the RAM,",
        },
        db,
    )?;
    // Local: a working folder here. Remote: one on the server, each client connecting on its own.
    let (workdir, remote_folder) = match (&remote, &run.remote) {
        (Some(_), Some(dir)) => (None, Some(dir.name.clone())),
        _ => {
            let workdir =
                run.workdir.as_ref().map(|w| w.path().to_path_buf()).context("this suite needs a folder target")?;
            (Some(workdir), None)
        }
    };
    let per_char_buffers = run.remote.as_ref().map(|dir| iomatrix_bonnie::per_char_buffers(&dir.describe()));
    ranks.share(
        &Shared::Bonnie {
            plan: plan.clone(),
            workdir: workdir.clone().unwrap_or_default(),
            clients: job.clients.clone(),
            remote: remote.clone().zip(remote_folder.clone()),
        },
        &job.clients,
    )?;
    let setup = Setup {
        cells: tests.len(),
        workdir: workdir.as_deref(),
        hooks: &job.clients.hooks,
        on_error: job.clients.on_error,
        stop: run.stop,
    };
    let connect = crate::remote::connector(remote.as_ref());
    let place = match &remote_folder {
        Some(folder) => Place::Remote { connect: &connect, folder: folder.clone() },
        None => Place::Local,
    };
    let mut seq = 0;
    let outcome = iomatrix_bonnie::execute_at(plan, &ranks.group(job.clients.count), &setup, &place, |cell| {
        let mut row = row(plan, seq, cell);
        if let (Some((putc, getc)), Some(m)) = (per_char_buffers, row.metrics.as_object_mut()) {
            match cell.test {
                BonnieTest::PutcWrite => m.insert("per_char_buffer_bytes".into(), json!(putc)),
                BonnieTest::GetcRead => m.insert("per_char_buffer_bytes".into(), json!(getc)),
                _ => None,
            };
        }
        let stored = run.store_cell(&row, &line(cell));
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

/// Which of Bonnie's tests write and check stamped blocks, and what differs from bonnie++ then.
fn verify_scope(plan: &BonniePlan) -> String {
    let checks = if plan.content.verify {
        "rewrite checks each block it reads (generation 1) and block read checks every block (generation 2, so a \
         block still at 1 is a lost rewrite, counted stale)"
    } else {
        "nothing is checked (no --verify)"
    };
    format!(
        "putc and block write write stamped blocks of generation 1; rewrite writes each chunk back stamped as \
         generation 2 instead of bonnie++'s one-byte change; {checks}; getc and the seek test are not checked (the \
         seekers write back what they read with one byte changed, as bonnie++)"
    )
}

/// What a protocol client cannot do: O_DIRECT (there is no client cache to bypass).
fn check_remote_plan(plan: &BonniePlan) -> Result<(), UsageError> {
    if plan.direct {
        return Err(UsageError::new(
            "--direct (-D): iomatrix's own protocol client keeps no cache, so every request already goes to the \
             server; leave --direct (-D) out",
        ));
    }
    Ok(())
}

/// bonnie++'s twice-the-RAM rule on a server, as stated with the run.
fn remote_ram_rule(plan: &BonniePlan) -> String {
    match plan.ram {
        Some(ram) if ram.bytes() > 0 && !plan.allow_cache => format!(
            "the twice-the-RAM rule held the file size against the server's RAM as stated with -r/--ram ({ram})"
        ),
        _ => "the twice-the-RAM rule is not applied: this machine's RAM does not matter and the server's is unknown \
              to the client (state it with -r/--ram to apply the rule)"
            .to_string(),
    }
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
    if let Some(found) = cell.verify.as_ref().filter(|t| t.mismatches() > 0) {
        line += &format!(", {} DATA MISMATCH(ES)", found.mismatches());
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
    if let (Some(m), Some(tally)) = (metrics.as_object_mut(), &cell.verify) {
        m.insert("verify".into(), json!(tally));
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
