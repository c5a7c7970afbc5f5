//! The steps every suite's run shares, in order: check the target, record
//! the environment, check free space, warn about the page cache, open the
//! store, the suite's last step before files (bonnie's `-u`), make the
//! working folder, probe O_DIRECT, catch Ctrl-C, begin the run; and at
//! the end: record how it ended, remove the working folder, print the run
//! from the store, choose the exit code. A raw device target
//! has no working folder and no free-space check: the device, claimed
//! beforehand, is the working set. A tree target (the backup walk) is only
//! read: no working folder, no free-space check, no RAM warning.

use super::progress::Progress;
use super::publish::LivePublisher;
use super::raw_device::RawDevice;
use super::server_workdir::RemoteWorkDir;
use super::session::Session;
use super::signals;
use super::suite::{RunOptions, RunSpec};
use super::target::{Server, Target};
use super::workdir::WorkDir;
use anyhow::Context;
use iomatrix_coord::Ending;
use iomatrix_core::human::bytes as human;
use iomatrix_core::{UsageError, MIB};
use iomatrix_environment::Environment;
use iomatrix_store::{CellRow, NewRun, RunStatus, Store, StoreError, StoredRun};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the harness tells the shared steps about a run.
pub struct JobSpec<'a> {
    pub suite: &'static str,
    pub spec: &'a RunSpec,
    pub plan: Value,
    pub total_cells: usize,
    /// Each cell's work, for the ETA.
    pub work: Vec<super::progress::CellWork>,
    /// Called once the store is open, right before the working folder is made.
    pub before_files: &'a dyn Fn() -> anyhow::Result<()>,
    /// Under MPI: each rank's host, stored in the environment as `client_hosts`.
    pub client_hosts: Option<&'a [super::ranks::RankHost]>,
}

/// A run under way.
pub struct Job {
    pub store: Store,
    pub run_id: i64,
    /// The working folder here (a folder target).
    pub workdir: Option<WorkDir>,
    /// Held for the run: the device stays claimed until the job is dropped.
    pub device: Option<RawDevice>,
    /// The working folder on a server (a server target).
    pub remote: Option<RemoteWorkDir>,
    /// What the session to the server negotiated (server targets).
    pub server_described: Option<Value>,
    /// A tree on a server, only read: the clients work in its own folder.
    server_tree: bool,
    pub stop: &'static AtomicBool,
    pub progress: Progress,
    /// Whether the figures measure the storage or the page cache, for the run's summary.
    pub cache: iomatrix_analysis::CacheVerdict,
    /// The target's block device here (`/proc/diskstats`' name), whose other I/O a cell's
    /// machine record counts; None for a server or a device-less file system.
    pub block_device: Option<String>,
    total_cells: usize,
    /// The run's live state beside the database, for `watch` and the viewer; removed when the
    /// job is dropped (after [`Job::finish`], or on an error on the way).
    pub live_state: Arc<LivePublisher>,
    /// Stores the run failed if the job ends without [`Job::finish`] (an error on the way).
    unfinished: Unfinished,
}

/// A run begun and not yet ended in the database. Dropped armed (an error, or a panic, between
/// the run's start and its end), it stores the run `failed`, so no run is left `running` by a
/// process that has gone on; a stored end is never overwritten.
struct Unfinished {
    db: PathBuf,
    /// The database's device and inode when the run began: a file removed or replaced since is
    /// not this run's, and is never opened (nor made) here.
    identity: Option<(u64, u64)>,
    run_id: i64,
    armed: bool,
}

impl Unfinished {
    fn new(db: &Path, run_id: i64) -> Unfinished {
        Unfinished { db: db.to_path_buf(), identity: identity_of(db), run_id, armed: true }
    }
}

fn identity_of(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.armed || self.identity.is_none() || identity_of(&self.db) != self.identity {
            return;
        }
        let why = "iomatrix stopped before it stored how the run ended (an error on the way: see its output)";
        if let Err(e) = Store::open(&self.db).and_then(|store| store.fail_if_running(self.run_id, why)) {
            eprintln!("iomatrix: could not store run #{} as failed: {e}", self.run_id);
        }
    }
}

/// The study step this run was started as ([`iomatrix_store::STUDY_CLAIM_VAR`], set by `study run`),
/// checked against the database before anything is made: a claim that does not hold is refused.
fn study_claim(store: &Store) -> anyhow::Result<Option<iomatrix_store::StudyClaim>> {
    let var = iomatrix_store::STUDY_CLAIM_VAR;
    let Some(value) = std::env::var_os(var) else { return Ok(None) };
    let refused = |why: String| {
        iomatrix_core::UsageError::new(format!(
            "{var}: {why}; only `iomatrix study run` sets it, for the runs it starts: unset it to run by hand"
        ))
    };
    let claim = value
        .to_str()
        .and_then(iomatrix_store::StudyClaim::parse)
        .ok_or_else(|| refused("not a study's claim (STUDY:STEP:NONCE)".into()))?;
    store.check_study_claim(&claim)?.map_err(|why| refused(why.to_string()))?;
    Ok(Some(claim))
}

impl Job {
    pub fn start(job: JobSpec<'_>, run: &mut RunOptions, db: &Path, session: &mut Session) -> anyhow::Result<Job> {
        let spec = job.spec;
        let device = run.device.take();
        let mut conditions = spec.conditions.clone();
        let Reached { env, site, described } = match &run.target {
            Target::Folder(folder) => reach_folder(folder, spec, run.space_check, session)?,
            Target::Device(path) => reach_device(path, device.as_ref())?,
            Target::Tree(root) => reach_tree(root)?,
            Target::Server(server) => reach_server(server, spec, run)?,
            Target::ServerTree(server) => reach_server_tree(server)?,
        };
        if let Some(described) = &described {
            add_remote_conditions(described, &mut conditions);
        }
        // The user's own description first: it is what they saw of the server.
        let server = run.server_description.clone().or_else(|| super::server_facts::of_lab(&run.target));
        let server_ram = server.as_ref().and_then(|s| s.ram_bytes()).unwrap_or(0);
        let on_server = matches!(site, Site::Server(_) | Site::ServerTree);
        let cache = cache_verdict(spec, &env, on_server, server_ram);
        if let Site::Folder(_) | Site::Device = &site {
            warn_if_cached(spec, cache, &env);
        }
        let store = session.take_store(db)?;
        let claim = study_claim(&store)?;
        // Before the first file: a signal from here on (SIGHUP: a killed study's step) stops the run
        // with its folder removed, never leaving one behind. The run's own flag: a failed client
        // raises it too, and is never taken for a signal.
        let stop = signals::run_flag()?;
        (job.before_files)()?;
        let (mut workdir, mut remote, server_tree) = match site {
            Site::Folder(folder) => (Some(make_workdir(&folder, spec, run.keep, &env)?), None, false),
            Site::Server(dir) => (None, Some(*dir), false),
            Site::ServerTree => (None, None, true),
            Site::Device | Site::Tree => (None, None, false),
        };
        let mut all = common_conditions(job.suite, spec, run.clients.count, &env);
        all["busy_threshold"] = run.machine.thresholds.describe().into();
        if on_server && server_ram > 0 {
            all["files_vs_ram"] =
                iomatrix_analysis::CacheVerdict::files_vs_server_ram(spec.peak_bytes, server_ram).into();
        }
        if let (Some(all), Some(extra)) = (all.as_object_mut(), conditions.as_object()) {
            all.extend(extra.clone());
        }
        let run_id = store.begin_run_claimed(
            &NewRun {
                suite: job.suite.into(),
                command_line: command_line(),
                labels: super::args::with_env_labels(&run.labels)?,
                plan: job.plan,
                environment: with_server(with_client_hosts(serde_json::to_value(&env)?, job.client_hosts)?, server)?,
                conditions: all,
                total_cells: job.total_cells,
            },
            claim.as_ref(),
        )?;
        let unfinished = Unfinished::new(store.path(), run_id);
        // The marker names the run, so `clean` can say which run a leftover belonged to.
        let marked = match (&mut workdir, &mut remote) {
            (Some(w), _) => w.record_run(run_id),
            (None, Some(r)) => r.record_run(run_id),
            (None, None) => Ok(()),
        };
        if let Err(e) = marked {
            eprintln!("iomatrix: warning: cannot name run #{run_id} in the working folder's marker: {e}");
        }
        let place = match (&workdir, &remote, &device) {
            (Some(w), _, _) => w.path().display().to_string(),
            (None, Some(r), _) => r.target(),
            (None, None, Some(d)) => format!("{} (raw device)", d.path().display()),
            (None, None, None) => format!("{} (read only)", env.target.path),
        };
        eprintln!(
            "iomatrix: run #{run_id}: {} cells in {place}, results in {}",
            job.total_cells,
            store.path().display()
        );
        let progress = Progress::new(job.work);
        let live_state = Arc::new(LivePublisher::start(store.path(), run_id, job.total_cells, progress.estimator()));
        Ok(Job {
            store,
            run_id,
            workdir,
            device,
            remote,
            server_described: described,
            server_tree,
            stop,
            cache,
            progress: if spec.keep_cell_lines { progress.keep_lines() } else { progress },
            block_device: if on_server { None } else { env.target.block_device.as_ref().map(|d| d.name.clone()) },
            total_cells: job.total_cells,
            live_state,
            unfinished,
        })
    }

    /// The run's working folder here, where each client gets `client-N`.
    /// The working folder the run's end removes, as a warning names it, with the target
    /// `iomatrix clean` takes; None when there is none (a device, a tree) or it is kept.
    pub fn folder_to_remove(&self) -> Option<(String, String)> {
        if let Some(w) = self.workdir.as_ref().filter(|w| !w.kept()) {
            let target = w.path().parent().unwrap_or(Path::new("."));
            return Some((w.path().display().to_string(), target.display().to_string()));
        }
        self.remote.as_ref().filter(|r| !r.kept()).map(|r| (r.target(), r.server()))
    }

    pub fn workdir_path(&self) -> Option<PathBuf> {
        self.workdir.as_ref().map(|w| w.path().to_path_buf())
    }

    /// The folder on the server the clients work in: the run's working
    /// folder there, or a tree's own folder (""). None for a local target.
    pub fn server_folder(&self) -> Option<String> {
        match (&self.remote, self.server_tree) {
            (Some(dir), _) => Some(dir.name.clone()),
            (None, true) => Some(String::new()),
            (None, false) => None,
        }
    }

    /// Stores one finished cell and moves the progress display on.
    pub fn store_cell(&mut self, row: &CellRow, progress_line: &str) -> Result<(), StoreError> {
        self.store.add_cell(self.run_id, row)?;
        self.progress.cell_done(progress_line);
        self.live_state.cell_done();
        Ok(())
    }

    /// `n` planned cells that the suite's own rule left out (a curve its bound ended): the run
    /// counts them neither as planned nor as lost.
    pub fn leave_out(&mut self, n: usize) {
        self.total_cells = self.total_cells.saturating_sub(n);
    }

    /// Plans `more` cells beyond those the run started with (noisy cells
    /// measured again): in the database and on the progress display.
    pub fn add_cells(&mut self, more: Vec<super::progress::CellWork>) -> anyhow::Result<()> {
        self.store.add_planned_cells(self.run_id, more.len())?;
        self.total_cells += more.len();
        self.live_state.add_pass(more.len());
        self.progress.add(more);
        Ok(())
    }

    /// Records how the run ended, removes the working folder, prints the
    /// run from the store with `print` and chooses the exit code. `describe`
    /// names a cell by its index. The status and the exit code follow from
    /// how the clients ended and the states of the stored cells
    /// ([`super::outcome`]).
    pub fn finish(
        self,
        outcome: std::io::Result<(usize, Ending)>,
        describe: impl Fn(usize) -> String,
        session: &mut Session,
        print: impl FnOnce(&StoredRun, &Store) -> anyhow::Result<()>,
    ) -> anyhow::Result<ExitCode> {
        self.progress.finish();
        let Job { store, run_id, workdir, device, remote, total_cells, mut unfinished, .. } = self;
        let (done, ending) = match outcome {
            Ok(v) => v,
            Err(e) => {
                let place = workdir.as_ref().map(|w| w.path()).or(device.as_ref().map(|d| d.path()));
                let msg = format!("cannot prepare the clients in {}: {e}", place.unwrap_or(Path::new("?")).display());
                store.finish_run(run_id, RunStatus::Failed, Some(&msg))?;
                unfinished.armed = false;
                anyhow::bail!(msg);
            }
        };
        let failure = ending_failure(&ending, &describe);
        let cells = store.load_run(run_id)?.map(|r| r.cell_results).unwrap_or_default();
        let status = super::outcome::status(&ending, &cells);
        let (partial, failed) = super::outcome::not_complete(&cells);
        let failure = match (failure, partial + failed) {
            (None, 0) => None,
            (None, _) => Some(cells_not_complete(&cells)),
            (Some(f), _) => Some(f),
        };
        store.finish_run(run_id, status, failure.as_deref())?;
        unfinished.armed = false;
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
        print(&stored, &store)?;
        warn_disturbed(run_id, &stored.cell_results);
        session.keep_store(store);
        match (status, super::outcome::exit_code(status, &stored.cell_results)) {
            (RunStatus::Partial, Some(code)) => {
                eprintln!(
                    "iomatrix: run #{run_id} is partial: every cell ran, but {}{}",
                    failure.unwrap_or_default(),
                    match partial + failed {
                        0 => String::new(),
                        n => format!(
                            " ({n} cell(s) stored as not complete: compare, sweep and report leave them out unless \
                             --include-partial)"
                        ),
                    }
                );
                Ok(ExitCode::from(code))
            }
            (RunStatus::Complete, Some(crate::exit::DATA_MISMATCHES)) => {
                eprintln!(
                    "iomatrix: run #{run_id} completed, but {} block(s) read back were not what was written (see \
                     verify in each cell)",
                    super::data::mismatches(&stored.cell_results)
                );
                Ok(ExitCode::from(crate::exit::DATA_MISMATCHES))
            }
            (_, Some(code)) => Ok(ExitCode::from(code)),
            (RunStatus::Interrupted, None) => {
                eprintln!("iomatrix: interrupted: {done} of {total_cells} cells kept in run #{run_id}");
                Ok(ExitCode::from(signals::exit_code()))
            }
            _ => {
                let msg = format!(
                    "run #{run_id} failed after {done} of {total_cells} cells (kept): {}",
                    failure.unwrap_or_default()
                );
                // Clients failed (the target's or the clients' fault, not iomatrix's): exit 3.
                let clients_failed = matches!(ending, Ending::ClientFailed { .. } | Ending::ClientsLost(_))
                    || (!matches!(ending, Ending::SinkFailed(_)) && partial + failed > 0);
                Err(if clients_failed {
                    anyhow::Error::new(crate::exit::ClientsFailed(msg))
                } else {
                    anyhow::anyhow!(msg)
                })
            }
        }
    }
}

/// Why the run did not end well, in the words of its ending; None when every cell completed.
fn ending_failure(ending: &Ending, describe: &dyn Fn(usize) -> String) -> Option<String> {
    match ending {
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
    }
}

/// A run with disturbed cells says so on standard error, with each one's cause; its exit code
/// stays what its status gives (docs/measuring.md, "Disturbed cells").
fn warn_disturbed(run_id: i64, cells: &[CellRow]) {
    let disturbed = super::outcome::disturbed(cells);
    if disturbed.is_empty() {
        return;
    }
    // The first few by name: a busy machine can disturb a thousand cells, each said by `show`.
    const NAMED: usize = 5;
    let mut named: Vec<String> =
        disturbed.iter().take(NAMED).map(|c| format!("cell {} ({}): {}", c.seq, c.test, c.state.describe())).collect();
    if disturbed.len() > NAMED {
        named.push(format!("and {} more (iomatrix show {run_id})", disturbed.len() - NAMED));
    }
    eprintln!(
        "iomatrix: warning: run #{run_id} has {} disturbed cell(s), which did not run for their time: {}. Their \
         figures are stored and shown, marked; compare, sweep and report leave them out unless --include-disturbed",
        disturbed.len(),
        iomatrix_core::text::printable(&named.join("; "))
    );
}

/// The run's error when every cell ran but some were not whole: which, and why.
fn cells_not_complete(cells: &[CellRow]) -> String {
    let named: Vec<String> = cells
        .iter()
        .filter(|c| !super::outcome::every_part_finished(c))
        .map(|c| {
            let errors = Some(c.figures().errors)
                .filter(|e| !e.is_empty())
                .map(|e| {
                    format!(" ({})", e.iter().map(|(kind, n)| format!("{kind} {n}")).collect::<Vec<_>>().join(", "))
                })
                .unwrap_or_default();
            format!("cell {} ({}): {}{errors}", c.seq, c.test, c.state.describe())
        })
        .collect();
    format!("{} cell(s) not complete: {}", named.len(), named.join("; "))
}

/// A target checked and its environment recorded, before anything is written.
struct Reached {
    env: Environment,
    site: Site,
    /// What the session to a server negotiated (protocol, version, transfer sizes).
    described: Option<Value>,
}

/// Where the clients will work.
enum Site {
    /// A local folder: the run's working folder is made in it.
    Folder(PathBuf),
    /// The claimed raw device, in place.
    Device,
    /// A local tree, only read.
    Tree,
    /// The run's working folder on a server, made there.
    Server(Box<RemoteWorkDir>),
    /// A tree on a server, only read: the clients work in its own folder.
    ServerTree,
}

/// A local folder: it exists, leftovers of crashed runs in it are named, and the plan fits.
/// For a later run of the same command on the same folder, its environment is the one read
/// for the first ([`Session`]) with its space read now, and the leftovers are not named again.
fn reach_folder(folder: &Path, spec: &RunSpec, space_check: bool, session: &mut Session) -> anyhow::Result<Reached> {
    let folder = check_target(folder)?;
    let cannot_read = || format!("cannot read the environment of {}", folder.display());
    let env = match session.folder(&folder) {
        Some(env) => env.with_context(cannot_read)?,
        None => {
            let env = iomatrix_environment::capture(&folder).with_context(cannot_read)?;
            let found = super::workdir::survey(&folder).unwrap_or_default();
            if let Some(note) = super::workdir::leftover_note(&found, &folder.display().to_string()) {
                eprintln!("{note}");
            }
            session.keep_folder(&folder, &env);
            env
        }
    };
    if space_check {
        check_free(spec, env.target.free_bytes, &env.target.path)?;
    }
    Ok(Reached { env, site: Site::Folder(folder), described: None })
}

/// A raw device, claimed beforehand: it is the working set, so no free-space check.
fn reach_device(path: &Path, device: Option<&RawDevice>) -> anyhow::Result<Reached> {
    let device = device.with_context(|| format!("{} was not claimed (a bug)", path.display()))?;
    let env = iomatrix_environment::capture_device(device.path(), device.size())
        .with_context(|| format!("cannot read the environment of {}", device.path().display()))?;
    Ok(Reached { env, site: Site::Device, described: None })
}

/// A local tree that is only read: no working folder, no free-space check.
fn reach_tree(root: &Path) -> anyhow::Result<Reached> {
    let root = check_target(root)?;
    let env = iomatrix_environment::capture(&root)
        .with_context(|| format!("cannot read the environment of {}", root.display()))?;
    Ok(Reached { env, site: Site::Tree, described: None })
}

/// A folder on a server: what the server says this client may still write
/// is checked (a server that cannot tell is not), leftovers are named, and
/// the run's working folder is made there.
fn reach_server(server: &Server, spec: &RunSpec, run: &RunOptions) -> anyhow::Result<Reached> {
    let mut fs = server.connect().map_err(|e| UsageError::new(format!("--target: {e}")))?;
    if run.space_check {
        let free = fs.free_bytes().map_err(|e| UsageError::new(format!("--target: {e}")))?;
        if let Some(free) = free {
            check_free(spec, free, &server.url())?;
        }
    }
    let found = super::server_workdir::survey(fs.as_mut()).unwrap_or_default();
    if let Some(note) = super::workdir::leftover_note(&found, &server.url()) {
        eprintln!("{note}");
    }
    let dir = RemoteWorkDir::create(fs, run.keep)?;
    let described = dir.describe();
    let env = remote_environment(&dir.target(), &described);
    Ok(Reached { env, site: Site::Server(Box::new(dir)), described: Some(described) })
}

/// A tree on a server that is only read.
fn reach_server_tree(server: &Server) -> anyhow::Result<Reached> {
    let fs = server
        .connect()
        .map_err(|e| UsageError::new(format!("--target: {e}; give an existing folder on the server")))?;
    let described = fs.describe();
    let env = remote_environment(&fs.target(), &described);
    Ok(Reached { env, site: Site::ServerTree, described: Some(described) })
}

/// Whether the run's figures will measure the storage or the page cache: the one verdict the
/// warning, the stored condition and the summary follow.
fn cache_verdict(
    spec: &RunSpec,
    env: &Environment,
    on_server: bool,
    server_ram: u64,
) -> iomatrix_analysis::CacheVerdict {
    if on_server && server_ram > 0 {
        return iomatrix_analysis::CacheVerdict::on_server(spec.peak_bytes, server_ram);
    }
    let verdict = iomatrix_analysis::CacheVerdict::on(
        spec.direct,
        spec.peak_bytes,
        env.machine.ram_bytes,
        on_server,
        &env.target.fs_type,
    );
    match verdict {
        iomatrix_analysis::CacheVerdict::Cached { .. } | iomatrix_analysis::CacheVerdict::Partly { .. }
            if spec.cache_dropped =>
        {
            iomatrix_analysis::CacheVerdict::Dropped
        }
        v => v,
    }
}

/// All files fit in RAM and the page cache is in use, or the target lives in RAM: the figures
/// measure memory. Said before the first cell; the summary says it again at the end.
fn warn_if_cached(spec: &RunSpec, cache: iomatrix_analysis::CacheVerdict, env: &Environment) {
    let ram = env.machine.ram_bytes;
    if let iomatrix_analysis::CacheVerdict::InMemory { fs_type } = cache {
        eprintln!(
            "iomatrix: warning: the target is {fs_type}, a file system in RAM: its figures measure memory, not \
             storage, whatever the flags; give a --target on a disk's file system to measure storage"
        );
    }
    // Before any cache is dropped: the suite's own drop (a cold walk) comes with its own note.
    if let iomatrix_analysis::CacheVerdict::Cached { .. } =
        iomatrix_analysis::CacheVerdict::of(spec.direct, spec.peak_bytes, ram, false)
    {
        eprintln!(
            "iomatrix: warning: all files ({} at most) fit in this machine's RAM ({}): cached results measure the \
             page cache, not the storage; {} to measure the storage",
            human(spec.peak_bytes),
            human(ram),
            spec.uncached_hint
        );
    }
}

/// The run's marked working folder in `folder`, where O_DIRECT is probed when the plan asks for it.
fn make_workdir(folder: &Path, spec: &RunSpec, keep: bool, env: &Environment) -> anyhow::Result<WorkDir> {
    let workdir = WorkDir::create(folder, keep)?;
    if spec.direct {
        iomatrix_backend::probe_direct(workdir.path()).map_err(|e| {
            UsageError::new(format!(
                "the file system at {} ({}) refuses O_DIRECT: {e}; run without --direct",
                folder.display(),
                env.target.fs_type
            ))
        })?;
    }
    Ok(workdir)
}

/// What every suite's run through a protocol client shares, unless the
/// suite says more, and what the client negotiated (`remote`: protocol,
/// version or dialect, transfer sizes).
fn add_remote_conditions(described: &Value, conditions: &mut Value) {
    if !conditions.is_object() {
        *conditions = json!({});
    }
    if let Some(c) = conditions.as_object_mut() {
        c.insert("remote".into(), described.clone());
        c.entry("cache").or_insert(json!(
            "no client cache: iomatrix's own protocol client sends every request to the server (whose own cache \
             may serve it)"
        ));
        c.entry("backend").or_insert(json!("iomatrix protocol client"));
    }
}

/// A server's environment record: what a client can know of it.
fn remote_environment(target: &str, described: &Value) -> Environment {
    iomatrix_environment::capture_remote(
        target,
        &format!(
            "{}{} (iomatrix client)",
            described["protocol"].as_str().unwrap_or("?").to_lowercase(),
            described["version"].as_str().unwrap_or("")
        ),
        described["server"].as_str().unwrap_or("?"),
    )
}

/// What a run could not measure, counted: the clients that failed each
/// cell (their figures lost), and the cells planned but not stored. None
/// when every planned cell was stored whole.
fn lost_samples(ending: &Ending, stored: usize, planned: usize, describe: &dyn Fn(usize) -> String) -> Option<Value> {
    let failed: Vec<(usize, &iomatrix_coord::ClientFailure)> = match ending {
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

/// Refuses a plan whose peak, with a margin, does not fit in `free` bytes of
/// `target`, with the numbers, before writing a byte. The margin (5% of the
/// plan, plus 4 MiB for metadata and the file system's own reserve) keeps a
/// run from filling a production volume to the brim.
fn check_free(spec: &RunSpec, free: u64, target: &str) -> Result<(), UsageError> {
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
fn common_conditions(suite: &str, spec: &RunSpec, clients: usize, env: &Environment) -> Value {
    let ram = env.machine.ram_bytes;
    let files_vs_ram = iomatrix_analysis::CacheVerdict::files_vs_ram(
        spec.peak_bytes,
        ram,
        env.target.fs_type.ends_with("(iomatrix client)"),
    );
    json!({
        "suite": suite,
        "backend": spec.backend.name(),
        "direct": spec.direct,
        "cache": if spec.direct { "bypassed (O_DIRECT)" } else { "page cache in use" },
        "clients": clients,
        // Clients share a raw device's working set; files are one per client.
        "largest_file_bytes": if env.target.fs_type == iomatrix_environment::RAW_DEVICE {
            spec.peak_bytes
        } else {
            spec.peak_bytes / clients.max(1) as u64
        },
        "ram_bytes": ram,
        "files_vs_ram": files_vs_ram,
        "target": env.target.path,
        "fs_type": env.target.fs_type,
        "mount_source": env.target.mount_source,
        // Where the file system's partition starts, as a power of two (seed 002: 512 B against 1 MiB).
        "partition_alignment_bytes": env.target.block_device.as_ref().and_then(|b| b.alignment_bytes),
        // What the seeds drew from: another generator draws other offsets, sizes and data.
        "generator": iomatrix_random::GENERATOR,
    })
}

/// The environment record with each MPI rank's host added (a run of threads has them all here),
/// and the launch that started it (`--hosts`: [`iomatrix_coord::LAUNCH_ID`]), by which the
/// launcher finds the run once mpirun has ended.
fn with_client_hosts(mut env: Value, hosts: Option<&[super::ranks::RankHost]>) -> anyhow::Result<Value> {
    if let (Some(obj), Some(hosts)) = (env.as_object_mut(), hosts) {
        obj.insert("client_hosts".into(), serde_json::to_value(hosts)?);
    }
    if let (Some(obj), Some(launch)) = (env.as_object_mut(), iomatrix_coord::launch_id()) {
        obj.insert("launch_id".into(), launch.into());
    }
    Ok(env)
}

/// The environment record with the server's description (`server`: the lab's facts or
/// `--describe server=FILE`), where there is one.
fn with_server(mut env: Value, server: Option<iomatrix_environment::ServerDescription>) -> anyhow::Result<Value> {
    if let (Some(obj), Some(server)) = (env.as_object_mut(), server) {
        obj.insert("server".into(), serde_json::to_value(server)?);
    }
    Ok(env)
}

/// The command line as a shell would take it back (`iomatrix rerun` splits it again).
fn command_line() -> String {
    super::args::command_text(std::env::args())
}
