//! `iomatrix run backup`: the backup walk of a tree, stored as one cell.

use crate::cli::RunBackupArgs;
use crate::job::{Job, JobSpec, JobTarget, Output};
use iomatrix_backup::{BackupPlan, BackupResult};
use iomatrix_core::{BackendKind, ByteSize, UsageError};
use iomatrix_iozone::{ClientFailure, Ending};
use iomatrix_store::CellRow;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The one cell's `test`.
pub const TEST: &str = "backup";

pub fn run(args: RunBackupArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let read_size = args
        .read_size
        .parse::<ByteSize>()
        .map_err(|e| UsageError::new(format!("--read-size {}: {e}", args.read_size)))?;
    let root = check_tree(&args.target, "--target")?;
    let plan = BackupPlan { root: root.clone(), read_size: read_size.bytes(), cold: !args.warm };
    plan.validate().map_err(|e| UsageError::new(format!("--read-size {}: {e}", args.read_size)))?;
    let labels = crate::cmd::run_iozone::labels(&args.labels)?;
    let mut job = Job::start(
        JobSpec {
            suite: TEST,
            target: JobTarget::Tree(root),
            labels,
            keep: false,
            space_check: false,
            peak_bytes: 0,
            peak_detail: String::new(),
            backend: BackendKind::Sync,
            direct: false,
            clients: 1,
            plan: serde_json::to_value(&plan)?,
            conditions: json!({
                "cache": plan.cache_condition(),
                // The tree's sizes are known only after the walk (see the cell's bytes).
                "files_vs_ram": null,
                "timing": "open + read + close of each file, summed; walk, stat, FIEMAP and eviction outside",
                "read_size": plan.read_size,
            }),
            total_cells: 1,
            keep_cell_lines: true,
            uncached_hint: "read cold (the default), or a tree larger than RAM,",
        },
        db,
    )?;
    let live_line = job.progress.live_line();
    let mut shown = Instant::now();
    let outcome = iomatrix_backup::execute(&plan, job.stop, &mut |live| {
        if let Some(bar) = &live_line {
            if shown.elapsed() >= Duration::from_millis(200) {
                shown = Instant::now();
                bar.set_message(format!(
                    "{} files, {}, {} errors",
                    live.files,
                    crate::job::human(live.bytes),
                    live.errors
                ));
            }
        }
    });
    let ending = match outcome {
        Ok(result) => {
            let line = format!(
                "backup walk: {} files, {}, {:.1} MiB/min{}",
                result.files,
                crate::job::human(result.bytes),
                result.mib_per_min,
                if result.interrupted { " (interrupted)" } else { "" }
            );
            match job.store_cell(&row(&plan, &result), &line) {
                Err(e) => Ok((0, Ending::SinkFailed(format!("storing the backup walk: {e}")))),
                Ok(()) if result.interrupted => Ok((1, Ending::Interrupted)),
                Ok(()) => Ok((1, Ending::Completed)),
            }
        }
        Err(e) => Ok((0, Ending::ClientFailed { cell: 0, failures: vec![ClientFailure::error(0, e.0)] })),
    };
    job.finish(ending, |_| "the backup walk".to_string(), &Output { json: args.json, ..Output::default() })
}

fn row(plan: &BackupPlan, r: &BackupResult) -> CellRow {
    CellRow {
        seq: 0,
        test: TEST.into(),
        file_size: None,
        record_size: Some(plan.read_size),
        backend: BackendKind::Sync.name().into(),
        direct: false,
        clients: 1,
        bytes: r.bytes,
        ops: r.files,
        wall_ns: r.read_ns,
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: iomatrix_stats::kib_per_sec(r.bytes, Duration::from_nanos(r.read_ns)),
        cpu_percent: r.cpu_percent,
        metrics: serde_json::to_value(r).unwrap_or_default(),
        client_figures: json!([]),
        blobs: Vec::new(),
    }
}

/// An existing folder, canonical; anything else is the user's mistake (exit 2).
pub fn check_tree(dir: &Path, what: &str) -> Result<std::path::PathBuf, UsageError> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| UsageError::new(format!("{what} {}: {e}; give an existing folder to walk", dir.display())))?;
    if !meta.is_dir() {
        return Err(UsageError::new(format!(
            "{what} {} is not a folder; give the root of the tree to walk",
            dir.display()
        )));
    }
    dir.canonicalize().map_err(|e| UsageError::new(format!("{what} {}: {e}", dir.display())))
}
