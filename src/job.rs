//! The steps every suite's run shares, in order: check the target, record
//! the environment, check free space, warn about the page cache, open the
//! store, make the working folder, probe O_DIRECT, catch Ctrl-C, begin the
//! run; and at the end: record how it ended, remove the working folder,
//! print the run from the store, choose the exit code. A raw device target
//! (access specs only) has no working folder and no free-space check: the
//! device, claimed beforehand, is the working set. A tree target (the backup
//! walk) is only read: no working folder, no free-space check, no RAM warning.

use crate::app::EXIT_CLIENTS_LOST;
use crate::progress::Progress;
use crate::raw_device::RawDevice;
use crate::workdir::WorkDir;
use crate::{render, signals};
use anyhow::Context;
use iomatrix_core::{BackendKind, UsageError, MIB};
use iomatrix_environment::Environment;
use iomatrix_iozone::Ending;
use iomatrix_store::{CellRow, NewRun, RunStatus, Store, StoredRun};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// Where a run writes.
pub enum JobTarget {
    /// A folder: the run works in a fresh working folder inside it.
    Folder(PathBuf),
    /// A claimed raw block device.
    Device(RawDevice),
    /// A tree that is only read (the backup walk): its environment is captured,
    /// but no working folder is made, no free space checked, no O_DIRECT probed.
    Tree(PathBuf),
    /// A folder on a server through iomatrix's own protocol client: the
    /// working folder is made there; free space is not checked.
    Remote(crate::remote::RemoteTarget),
    /// A tree on a server that is only read (the backup walk), through a
    /// session already connected: what it negotiated is recorded, nothing is
    /// made there.
    RemoteTree(Box<dyn iomatrix_backend::RemoteFs>),
}

/// What a suite tells the shared steps about its run.
pub struct JobSpec {
    pub suite: &'static str,
    pub target: JobTarget,
    pub labels: Vec<(String, String)>,
    pub keep: bool,
    pub space_check: bool,
    /// Bytes the run keeps on the target at its peak, and how that comes about
    /// (for the free-space message), e.g. "2 client(s) x largest file 64m".
    pub peak_bytes: u64,
    pub peak_detail: String,
    pub backend: BackendKind,
    pub direct: bool,
    pub clients: usize,
    pub plan: Value,
    /// Suite-specific conditions, merged into the common ones.
    pub conditions: Value,
    pub total_cells: usize,
    /// Few long cells: keep a line per finished cell on the terminal.
    pub keep_cell_lines: bool,
    /// How this suite gets past the page cache, for the warning when all files fit in RAM.
    pub uncached_hint: &'static str,
}

/// How a finished run is printed.
#[derive(Default)]
pub struct Output {
    pub json: bool,
    /// IOzone's `-R` report after the tables.
    pub excel_report: bool,
    pub xlsx: Option<PathBuf>,
}

/// A run under way.
pub struct Job {
    pub store: Store,
    pub run_id: i64,
    /// None for a raw device target.
    pub workdir: Option<WorkDir>,
    /// Held for the run: the device stays claimed until the job is dropped.
    pub device: Option<RawDevice>,
    /// The working folder on a server, for a remote target.
    pub remote: Option<crate::remote::RemoteWorkDir>,
    pub stop: &'static AtomicBool,
    pub progress: Progress,
    total_cells: usize,
}

impl Job {
    pub fn start(mut spec: JobSpec, db: &Path) -> anyhow::Result<Job> {
        let mut tree: Option<PathBuf> = None;
        let mut remote: Option<crate::remote::RemoteWorkDir> = None;
        let (env, folder, device) = match std::mem::replace(&mut spec.target, JobTarget::Folder(PathBuf::new())) {
            JobTarget::Folder(folder) => {
                let folder = check_target(&folder)?;
                let env = iomatrix_environment::capture(&folder)
                    .with_context(|| format!("cannot read the environment of {}", folder.display()))?;
                let found = crate::workdir::survey(&folder).unwrap_or_default();
                if let Some(note) = crate::workdir::leftover_note(&found, &folder.display().to_string()) {
                    eprintln!("{note}");
                }
                if spec.space_check {
                    check_space(&spec, &env)?;
                }
                (env, Some(folder), None)
            }
            JobTarget::Device(device) => {
                let env = iomatrix_environment::capture_device(device.path(), device.size())
                    .with_context(|| format!("cannot read the environment of {}", device.path().display()))?;
                (env, None, Some(device))
            }
            JobTarget::Tree(root) => {
                let root = check_target(&root)?;
                let env = iomatrix_environment::capture(&root)
                    .with_context(|| format!("cannot read the environment of {}", root.display()))?;
                tree = Some(root);
                (env, None, None)
            }
            JobTarget::Remote(target) => {
                let mut fs = target.connect().map_err(|e| UsageError::new(format!("--target: {e}")))?;
                if spec.space_check {
                    // What the server says this client may still write; a server that cannot tell is not checked.
                    let free = fs.free_bytes().map_err(|e| UsageError::new(format!("--target: {e}")))?;
                    if let Some(free) = free {
                        check_free(&spec, free, &target.url())?;
                    }
                }
                let found = crate::remote::survey(fs.as_mut()).unwrap_or_default();
                if let Some(note) = crate::workdir::leftover_note(&found, &target.url()) {
                    eprintln!("{note}");
                }
                let dir = crate::remote::RemoteWorkDir::create(fs, spec.keep)?;
                let env = remote_environment(&dir.target(), dir.describe(), &mut spec.conditions);
                remote = Some(dir);
                (env, None, None)
            }
            JobTarget::RemoteTree(fs) => {
                let env = remote_environment(&fs.target(), fs.describe(), &mut spec.conditions);
                tree = Some(PathBuf::from(fs.target()));
                (env, None, None)
            }
        };
        if !spec.direct
            && tree.is_none()
            && remote.is_none()
            && env.machine.ram_bytes > 0
            && spec.peak_bytes < env.machine.ram_bytes
        {
            eprintln!(
                "iomatrix: warning: all files ({} at most) fit in this machine's RAM ({}): cached results measure the \
                 page cache, not the storage; {} to measure the storage",
                human(spec.peak_bytes),
                human(env.machine.ram_bytes),
                spec.uncached_hint
            );
        }
        let store = Store::open(db)?;
        let workdir = match &folder {
            Some(folder) => {
                let workdir = WorkDir::create(folder, spec.keep)?;
                if spec.direct {
                    iomatrix_backend::probe_direct(workdir.path()).map_err(|e| {
                        UsageError::new(format!(
                            "the file system at {} ({}) refuses O_DIRECT: {e}; run without --direct",
                            folder.display(),
                            env.target.fs_type
                        ))
                    })?;
                }
                Some(workdir)
            }
            None => None,
        };
        let stop = signals::install()?;
        let mut conditions = common_conditions(&spec, &env);
        if let (Some(all), Some(extra)) = (conditions.as_object_mut(), spec.conditions.as_object()) {
            all.extend(extra.clone());
        }
        let run_id = store.begin_run(&NewRun {
            suite: spec.suite.into(),
            command_line: command_line(),
            labels: spec.labels,
            plan: spec.plan,
            environment: serde_json::to_value(&env)?,
            conditions,
            total_cells: spec.total_cells,
        })?;
        // The marker names the run, so `clean` can say which run a leftover belonged to.
        let mut workdir = workdir;
        let marked = match (&mut workdir, &mut remote) {
            (Some(w), _) => w.record_run(run_id),
            (None, Some(r)) => r.record_run(run_id),
            (None, None) => Ok(()),
        };
        if let Err(e) = marked {
            eprintln!("iomatrix: warning: cannot name run #{run_id} in the working folder's marker: {e}");
        }
        let place = match (&workdir, &device) {
            (Some(w), _) => w.path().display().to_string(),
            (None, Some(d)) => format!("{} (raw device)", d.path().display()),
            (None, None) => match (&remote, &tree) {
                (Some(r), _) => r.target(),
                (None, tree) => tree.as_ref().map(|t| format!("{} (read only)", t.display())).unwrap_or_default(),
            },
        };
        eprintln!(
            "iomatrix: run #{run_id}: {} cells in {place}, results in {}",
            spec.total_cells,
            store.path().display()
        );
        Ok(Job {
            store,
            run_id,
            workdir,
            device,
            remote,
            stop,
            progress: if spec.keep_cell_lines {
                Progress::new(spec.total_cells).keep_lines()
            } else {
                Progress::new(spec.total_cells)
            },
            total_cells: spec.total_cells,
        })
    }

    /// Stores one finished cell and moves the progress display on.
    pub fn store_cell(&mut self, row: &CellRow, progress_line: &str) -> Result<(), String> {
        self.store.add_cell(self.run_id, row).map_err(|e| e.to_string())?;
        self.progress.cell_done(progress_line);
        Ok(())
    }

    /// Plans `more` cells beyond those the run started with (noisy cells
    /// measured again): in the database and on the progress display.
    pub fn add_cells(&mut self, more: usize) -> anyhow::Result<()> {
        self.store.add_planned_cells(self.run_id, more)?;
        self.total_cells += more;
        self.progress.add(more);
        Ok(())
    }

    /// Records how the run ended, removes the working folder and prints the
    /// run as `show` would. `describe` names a cell by its index.
    pub fn finish(
        self,
        outcome: std::io::Result<(usize, Ending)>,
        describe: impl Fn(usize) -> String,
        output: &Output,
    ) -> anyhow::Result<ExitCode> {
        self.progress.finish();
        let Job { store, run_id, workdir, device, remote, total_cells, .. } = self;
        let (done, ending) = match outcome {
            Ok(v) => v,
            Err(e) => {
                let place = workdir.as_ref().map(|w| w.path()).or(device.as_ref().map(|d| d.path()));
                let msg = format!("cannot prepare the clients in {}: {e}", place.unwrap_or(Path::new("?")).display());
                store.finish_run(run_id, RunStatus::Failed, Some(&msg))?;
                anyhow::bail!(msg);
            }
        };
        let failure = match &ending {
            Ending::Completed => None,
            Ending::Interrupted => Some("interrupted".to_string()),
            Ending::ClientFailed { cell, failures } => Some(format!(
                "{} failed: {}",
                describe(*cell),
                failures.iter().map(|f| format!("client {}: {}", f.rank, f.message)).collect::<Vec<_>>().join("; ")
            )),
            Ending::ClientsLost(lost) => Some(format!(
                "{} client failure(s), their figures lost (--on-client-error continue): {}",
                lost.len(),
                lost.iter()
                    .map(|(cell, f)| format!("{}: client {}: {}", describe(*cell), f.rank, f.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            Ending::SinkFailed(e) => Some(e.clone()),
        };
        let status = match ending {
            Ending::Completed | Ending::ClientsLost(_) => RunStatus::Complete,
            Ending::Interrupted => RunStatus::Interrupted,
            _ => RunStatus::Failed,
        };
        store.finish_run(run_id, status, failure.as_deref())?;
        if let Some(lost) = lost_samples(&ending, done, total_cells, &describe) {
            store.record_lost(run_id, &lost)?;
        }
        if let Some(w) = workdir.as_ref().filter(|w| w.kept()) {
            eprintln!("iomatrix: kept the working folder {}", w.path().display());
        }
        if let Some(r) = remote.as_ref().filter(|r| r.kept()) {
            eprintln!("iomatrix: kept the working folder {}", r.target());
        }
        drop(workdir);
        drop(device);
        drop(remote);
        let stored = store.load_run(run_id)?.context("the run just written is missing from the database")?;
        print_run(&stored, output)?;
        match status {
            RunStatus::Complete if failure.is_some() => {
                eprintln!("iomatrix: run #{run_id} completed, but {}", failure.unwrap_or_default());
                Ok(ExitCode::from(EXIT_CLIENTS_LOST))
            }
            RunStatus::Complete => match crate::data_content::mismatches(&stored.cell_results) {
                0 => Ok(ExitCode::SUCCESS),
                found => {
                    eprintln!(
                        "iomatrix: run #{run_id} completed, but {found} block(s) read back were not what was written \
                         (see verify in each cell)"
                    );
                    Ok(ExitCode::from(crate::data_content::EXIT_DATA_MISMATCHES))
                }
            },
            RunStatus::Interrupted => {
                eprintln!("iomatrix: interrupted: {done} of {total_cells} cells kept in run #{run_id}");
                Ok(ExitCode::from(signals::exit_code()))
            }
            _ => Err(anyhow::anyhow!(
                "run #{run_id} failed after {done} of {total_cells} cells (kept): {}",
                failure.unwrap_or_default()
            )),
        }
    }
}

/// A server's environment record, and what its client negotiated in the
/// run's conditions (`remote`: protocol, version or dialect, transfer sizes).
fn remote_environment(target: &str, described: Value, conditions: &mut Value) -> Environment {
    let env = iomatrix_environment::capture_remote(
        target,
        &format!(
            "{}{} (iomatrix client)",
            described["protocol"].as_str().unwrap_or("?").to_lowercase(),
            described["version"].as_str().unwrap_or("")
        ),
        described["server"].as_str().unwrap_or("?"),
    );
    if let Some(c) = conditions.as_object_mut() {
        c.insert("remote".into(), described);
    }
    env
}

fn print_run(stored: &StoredRun, output: &Output) -> anyhow::Result<()> {
    if output.json {
        crate::app::print_out(&format!("{}\n", serde_json::to_string_pretty(&render::run_json(stored))?))?;
    } else {
        crate::app::print_out(&render::run_text(stored))?;
    }
    if output.excel_report {
        crate::app::print_out("\nExcel output is below:\n")?;
        crate::app::print_out(&iomatrix_report::excel_report(&render::iozone::throughput_matrices(stored)))?;
    }
    if let Some(path) = &output.xlsx {
        let bytes = iomatrix_report::xlsx_workbook(
            &render::iozone::throughput_matrices(stored),
            &render::condition_pairs(stored),
        )
        .context("cannot build the workbook")?;
        std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("iomatrix: wrote {}", path.display());
    }
    Ok(())
}

/// What a run could not measure, counted: the clients that failed each
/// cell (their figures lost), and the cells planned but not stored. None
/// when every planned cell was stored whole.
fn lost_samples(ending: &Ending, stored: usize, planned: usize, describe: &dyn Fn(usize) -> String) -> Option<Value> {
    let failed: Vec<(usize, &iomatrix_iozone::ClientFailure)> = match ending {
        Ending::ClientFailed { cell, failures } => failures.iter().map(|f| (*cell, f)).collect(),
        Ending::ClientsLost(lost) => lost.iter().map(|(cell, f)| (*cell, f)).collect(),
        _ => Vec::new(),
    };
    if failed.is_empty() && stored >= planned {
        return None;
    }
    let mut cells: Vec<usize> = failed.iter().map(|(cell, _)| *cell).collect();
    cells.dedup();
    let by_cell: Vec<Value> = cells
        .iter()
        .map(|&cell| {
            let errors: Vec<Value> = failed
                .iter()
                .filter(|(c, _)| *c == cell)
                .map(|(_, f)| json!({"client": f.rank, "message": f.message}))
                .collect();
            json!({"cell": describe(cell), "clients_failed": errors.len(), "errors": errors})
        })
        .collect();
    Some(json!({
        "cells_planned": planned,
        "cells_stored": stored,
        "cells_not_stored": planned.saturating_sub(stored),
        "client_cells_failed": failed.len(),
        "failed": by_cell,
    }))
}

fn check_target(target: &Path) -> Result<PathBuf, UsageError> {
    if let Some(url) = crate::remote::url_of(target) {
        // Every suite sends server targets to JobTarget::Remote or RemoteTree; a path is never a URL here.
        return Err(UsageError::new(format!(
            "--target {url}: a server target where this command needs a local folder; mount the share and give its \
             folder"
        )));
    }
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
/// The margin (5% of the plan, plus 4 MiB for metadata and the file system's
/// own reserve) keeps a run from filling a production volume to the brim.
fn check_space(spec: &JobSpec, env: &Environment) -> Result<(), UsageError> {
    check_free(spec, env.target.free_bytes, &env.target.path)
}

/// Refuses a plan whose peak, with a margin, does not fit in `free` bytes of `target`.
fn check_free(spec: &JobSpec, free: u64, target: &str) -> Result<(), UsageError> {
    let margin = spec.peak_bytes / 20 + 4 * MIB;
    let need = spec.peak_bytes.saturating_add(margin);
    if need > free {
        return Err(UsageError::new(format!(
            "target {} has {} free, but this plan needs {}: {} written ({}) plus a margin of {} (5% + 4 MiB); \
             choose smaller sizes, fewer clients or another target (or --no-space-check)",
            target,
            human(free),
            human(need),
            human(spec.peak_bytes),
            spec.peak_detail,
            human(margin)
        )));
    }
    Ok(())
}

/// What a reader must know to trust a figure, stored with the run and printed above every table.
fn common_conditions(spec: &JobSpec, env: &Environment) -> Value {
    let ram = env.machine.ram_bytes;
    let files_vs_ram = if env.target.fs_type.ends_with("(iomatrix client)") {
        "unknown: the server's RAM (its cache) is what counts, and a client cannot see it"
    } else if ram == 0 {
        "unknown"
    } else if spec.peak_bytes < ram {
        "all files fit in RAM"
    } else {
        "files exceed RAM"
    };
    json!({
        "suite": spec.suite,
        "backend": spec.backend.name(),
        "direct": spec.direct,
        "cache": if spec.direct { "bypassed (O_DIRECT)" } else { "page cache in use" },
        "clients": spec.clients,
        // Clients share a raw device's working set; files are one per client.
        "largest_file_bytes": if env.target.fs_type == iomatrix_environment::RAW_DEVICE {
            spec.peak_bytes
        } else {
            spec.peak_bytes / spec.clients.max(1) as u64
        },
        "ram_bytes": ram,
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
