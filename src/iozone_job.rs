//! Runs one IOzone plan end to end, for both front ends: checks the target,
//! records the environment, makes the working folder, stores every cell as
//! it finishes, and prints the run as `show` would.

use crate::app::EXIT_INTERRUPTED;
use crate::progress::Progress;
use crate::workdir::WorkDir;
use crate::{render, signals};
use anyhow::Context;
use iomatrix_core::{UsageError, MIB};
use iomatrix_environment::Environment;
use iomatrix_iozone::{CellResult, CellSink, CellSpec, Ending, IozonePlan};
use iomatrix_store::{CellRow, NewRun, RunStatus, Store};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub struct IozoneJob {
    pub plan: IozonePlan,
    pub target: PathBuf,
    pub labels: Vec<(String, String)>,
    pub keep: bool,
    pub space_check: bool,
    pub output: Output,
}

#[derive(Default)]
pub struct Output {
    pub json: bool,
    /// IOzone's `-R` report after the tables.
    pub excel_report: bool,
    pub xlsx: Option<PathBuf>,
}

pub fn run(job: IozoneJob, db: &Path) -> anyhow::Result<ExitCode> {
    job.plan.validate()?;
    let target = check_target(&job.target)?;
    let env = iomatrix_environment::capture(&target)
        .with_context(|| format!("cannot read the environment of {}", target.display()))?;
    if job.space_check {
        check_space(&job.plan, &env)?;
    }
    warn_if_cached(&job.plan, &env);
    let store = Store::open(db)?;
    let workdir = WorkDir::create(&target, job.keep)?;
    if job.plan.direct {
        iomatrix_backend::probe_direct(workdir.path()).map_err(|e| {
            UsageError::new(format!(
                "the file system at {} ({}) refuses O_DIRECT: {e}; run without --direct (-I)",
                target.display(),
                env.target.fs_type
            ))
        })?;
    }
    let stop = signals::install()?;
    let cells = job.plan.cells();
    let run_id = store.begin_run(&NewRun {
        suite: "iozone".into(),
        command_line: command_line(),
        labels: job.labels.clone(),
        plan: serde_json::to_value(&job.plan)?,
        environment: serde_json::to_value(&env)?,
        conditions: conditions(&job.plan, &env),
        total_cells: cells.len(),
    })?;
    eprintln!(
        "iomatrix: run #{run_id}: {} cells in {}, results in {}",
        cells.len(),
        workdir.path().display(),
        store.path().display()
    );
    let mut sink = StoreSink { store: &store, run_id, progress: Progress::new(cells.len()) };
    let outcome = iomatrix_iozone::execute(&job.plan, workdir.path(), stop, &mut sink);
    sink.progress.finish();
    let (done, ending) = match outcome {
        Ok(v) => v,
        Err(e) => {
            let msg = format!("cannot prepare client folders in {}: {e}", workdir.path().display());
            store.finish_run(run_id, RunStatus::Failed, Some(&msg))?;
            anyhow::bail!(msg);
        }
    };
    let failure = match &ending {
        Ending::Completed => None,
        Ending::Interrupted => Some("interrupted".to_string()),
        Ending::ClientFailed { cell, failures } => Some(format!(
            "{} failed: {}",
            describe(&cells[*cell]),
            failures.iter().map(|f| format!("client {}: {}", f.rank, f.message)).collect::<Vec<_>>().join("; ")
        )),
        Ending::SinkFailed(e) => Some(e.clone()),
    };
    let status = match ending {
        Ending::Completed => RunStatus::Complete,
        Ending::Interrupted => RunStatus::Interrupted,
        _ => RunStatus::Failed,
    };
    store.finish_run(run_id, status, failure.as_deref())?;
    if workdir.kept() {
        eprintln!("iomatrix: kept the working folder {}", workdir.path().display());
    }
    drop(workdir);

    let stored = store.load_run(run_id)?.context("the run just written is missing from the database")?;
    print_run(&stored, &job.output)?;
    match status {
        RunStatus::Complete => Ok(ExitCode::SUCCESS),
        RunStatus::Interrupted => {
            eprintln!("iomatrix: interrupted: {done} of {} cells kept in run #{run_id}", cells.len());
            Ok(ExitCode::from(EXIT_INTERRUPTED))
        }
        _ => Err(anyhow::anyhow!(
            "run #{run_id} failed after {done} of {} cells (kept): {}",
            cells.len(),
            failure.unwrap_or_default()
        )),
    }
}

fn print_run(stored: &iomatrix_store::StoredRun, output: &Output) -> anyhow::Result<()> {
    if output.json {
        crate::app::print_out(&format!("{}\n", serde_json::to_string_pretty(&render::run_json(stored))?))?;
    } else {
        crate::app::print_out(&render::run_text(stored))?;
    }
    if output.excel_report {
        crate::app::print_out("\nExcel output is below:\n")?;
        crate::app::print_out(&iomatrix_report::excel_report(&render::throughput_matrices(stored)))?;
    }
    if let Some(path) = &output.xlsx {
        let bytes =
            iomatrix_report::xlsx_workbook(&render::throughput_matrices(stored), &render::condition_pairs(stored))
                .context("cannot build the workbook")?;
        std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("iomatrix: wrote {}", path.display());
    }
    Ok(())
}

struct StoreSink<'a> {
    store: &'a Store,
    run_id: i64,
    progress: Progress,
}

impl CellSink for StoreSink<'_> {
    fn cell_done(&mut self, cell: &CellResult) -> Result<(), String> {
        let spec = &cell.spec;
        let row = CellRow {
            seq: spec.index,
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
            metrics: json!({ "kib_per_sec_overall": cell.kib_per_sec_overall }),
            client_figures: serde_json::to_value(&cell.clients).unwrap_or_default(),
            blobs: Vec::new(),
        };
        self.store.add_cell(self.run_id, &row).map_err(|e| e.to_string())?;
        self.progress.cell_done(&format!(
            "{}: {:.0} KB/s, CPU {:.0}%",
            describe(spec),
            cell.kib_per_sec,
            cell.cpu_percent
        ));
        Ok(())
    }
}

fn describe(cell: &CellSpec) -> String {
    format!("{} file {} record {}", cell.test, cell.file_size, cell.record_size)
}

fn check_target(target: &Path) -> Result<PathBuf, UsageError> {
    let meta = std::fs::metadata(target).map_err(|e| {
        UsageError::new(format!("target {}: {e}; give an existing folder with --target", target.display()))
    })?;
    if !meta.is_dir() {
        return Err(UsageError::new(format!(
            "target {} is not a folder; give the folder to test in (iomatrix makes its own files there)",
            target.display()
        )));
    }
    target.canonicalize().map_err(|e| UsageError::new(format!("target {}: {e}", target.display())))
}

/// Refuses a plan that cannot fit, with the numbers, before writing a byte.
fn check_space(plan: &IozonePlan, env: &Environment) -> Result<(), UsageError> {
    let need = plan.peak_bytes();
    let with_margin = need + need / 20 + 4 * MIB;
    let free = env.target.free_bytes;
    if with_margin > free {
        let largest = plan.pairs().iter().map(|(f, _)| *f).max().unwrap_or_default();
        return Err(UsageError::new(format!(
            "target {} has {} free, but this plan needs {} ({} client(s) x largest file {largest}, plus a 5% margin); \
             choose smaller --files, fewer clients or another target (or --no-space-check)",
            env.target.path,
            human(free),
            human(with_margin),
            plan.clients
        )));
    }
    Ok(())
}

fn warn_if_cached(plan: &IozonePlan, env: &Environment) {
    let largest = plan.peak_bytes();
    if !plan.direct && env.machine.ram_bytes > 0 && largest < env.machine.ram_bytes {
        eprintln!(
            "iomatrix: warning: all files ({} at most) fit in this machine's RAM ({}): cached results measure the page \
             cache, not the storage; use --direct, or files larger than RAM, to measure the storage",
            human(largest),
            human(env.machine.ram_bytes)
        );
    }
}

/// What a reader must know to trust a figure, stored with the run and printed above every table.
fn conditions(plan: &IozonePlan, env: &Environment) -> serde_json::Value {
    let largest = plan.pairs().iter().map(|(f, _)| f.bytes()).max().unwrap_or(0);
    let files_vs_ram = if env.machine.ram_bytes == 0 {
        "unknown"
    } else if plan.peak_bytes() < env.machine.ram_bytes {
        "all files fit in RAM"
    } else {
        "files exceed RAM"
    };
    json!({
        "suite": "iozone",
        "backend": plan.backend.name(),
        "direct": plan.direct,
        "cache": if plan.direct { "bypassed (O_DIRECT; fwrite/fread tests buffered)" } else { "page cache in use" },
        "clients": plan.clients,
        "fsync_timed": plan.fsync,
        "close_timed": plan.close,
        "largest_file_bytes": largest,
        "ram_bytes": env.machine.ram_bytes,
        "files_vs_ram": files_vs_ram,
        "target": env.target.path,
        "fs_type": env.target.fs_type,
        "mount_source": env.target.mount_source,
    })
}

fn command_line() -> String {
    std::env::args().map(|a| if a.contains(' ') { format!("'{a}'") } else { a }).collect::<Vec<_>>().join(" ")
}

pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[i])
    }
}
