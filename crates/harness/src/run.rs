//! The one function every suite's run goes through, and its MPI follower.
//!
//! A run is one or more passes of cells: the plan, then (with
//! `--tolerance`) plans of the noisy cells again, until every key's samples
//! lie within the tolerance of their median or `--max-repeats` is reached.
//! Each pass is handed to every MPI rank before it starts, so the ranks run
//! the same passes as rank 0.

use super::job::{Job, JobSpec};
use super::live::LiveBoard;
use super::progress::LiveLine;
use super::publish::LivePublisher;
use super::ranks::{Ranks, Shared, SharedJob};
use super::session::Session;
use super::suite::{LiveView, Prepared, Suite, Verdict};
use super::target::Server;
use iomatrix_backend::Place;
use iomatrix_coord::{ClientFailure, Ending, Group, Setup};
use iomatrix_store::{Store, StoredRun};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs a prepared suite at rank 0 (or alone): sets up the target, runs the
/// passes on every client, stores each cell as it comes, and prints the run.
pub fn run<S: Suite>(prepared: Prepared<S>, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    run_in(prepared, db, ranks, &mut Session::default())
}

/// [`run`], one of many runs of one command (`iomatrix fio`'s jobs): what `session` opened and
/// read for an earlier run of the command (the database, the target's environment, the
/// machine's limits) is used again rather than opened and read again.
pub fn run_in<S: Suite>(
    prepared: Prepared<S>,
    db: &Path,
    ranks: &Ranks,
    session: &mut Session,
) -> anyhow::Result<ExitCode> {
    let Prepared { mut suite, plan, run: mut options } = prepared;
    let clients_here = if ranks.mpi_size().is_some() { 1 } else { options.clients.count };
    // Before the run is stored or its folder made: threads, memory and address space it needs.
    let demand = suite.demand(&plan, &options.target, clients_here);
    super::limits::check(&demand, session.limits())?;
    S::before_clients(&plan, clients_here, options.target.server().is_some())?;
    let spec = suite.spec(&plan, &options.target, options.clients.count);
    let cells = S::cells(&plan);
    let before_files = || suite.before_files();
    let job = JobSpec {
        suite: S::NAME,
        spec: &spec,
        plan: serde_json::to_value(&plan)?,
        total_cells: cells.len(),
        work: S::work(&plan),
        before_files: &before_files,
        client_hosts: ranks.hosts(),
    };
    let mut job = Job::start(job, &mut options, db, session)?;
    // Under MPI, rank 0 stores the run's end even if mpirun ends the job first.
    ranks.watch_run(db, job.run_id, job.folder_to_remove());
    let quiet = spec.quiet;
    if quiet {
        job.progress.silence();
    }
    suite.began(job.server_described.as_ref());
    let workdir = job.workdir_path();
    let server = options.target.server().cloned();
    let server_folder = job.server_folder();
    let shared = SharedJob {
        suite: S::NAME.into(),
        workdir: workdir.clone(),
        server: server.clone().zip(server_folder.clone()),
        clients: options.clients.clone(),
    };
    share_job(ranks, &job, shared, server.as_ref())?;
    let connect = connector(server.as_ref());
    let place = place(&connect, server_folder);
    // Under MPI rank 0's one client is rank 0: one slot; the others' figures reach the board.
    let live = S::live(&plan, clients_here);
    let group = ranks.group(options.clients.count);
    // The cells of the pass under way, by index: for the live line and the run's failure message.
    let names = Mutex::new(cells);
    let name = |i: usize| names.lock().ok().and_then(|n| n.get(i).cloned()).unwrap_or_default();
    let mut stored = Stored { machine: judged_here(&options.machine, ranks), ..Stored::default() };
    // A cell that did not run for its time is stored disturbed: stops are noted from here on.
    if let Err(e) = super::disturbance::watch_stops() {
        eprintln!("iomatrix: warning: a stop of this process (SIGSTOP) will not be noticed: {e}");
    }
    let running = AtomicBool::new(true);
    let sampled = (stored.seconds.clone(), job.block_device.clone());
    let shown = Shown::of(&job, &live, ranks, stored.machine.thresholds);
    job.progress.begin_cells();
    let outcome = ranks.relay_live(&|| live.sample(), || {
        std::thread::scope(|scope| {
            let sampler = super::machine::spawn_sampler(scope, &sampled, &running);
            let redraw = spawn_redraw(scope, shown, &live, &running, &name);
            let passes = Passes {
                suite: &suite,
                plan: &plan,
                options: &options,
                ranks,
                group: &group,
                place: &place,
                live: &live,
                workdir: workdir.as_deref(),
                names: &names,
            };
            let outcome = passes.run(&mut job, &mut stored);
            cells_over(&running, &[sampler.as_ref(), redraw.as_ref().map(|r| r.thread())]);
            if let Err(e) = ranks.share_pass(&Shared::Done) {
                eprintln!("iomatrix: warning: cannot tell the MPI ranks that the run is over: {e}");
            }
            outcome.map(|o| o.map_or(Ending::Completed, |(_, ending)| ending))
        })
    });
    let outcome = outcome.map(|ending| (stored.cells, stored.verdict(ending)));
    job.leave_out(S::cells_left_out(&live));
    let (json, cache, uncached_flags) = (options.json, job.cache, spec.uncached_flags);
    // Under MPI, from here rank 0's signal thread leaves storing the run's end to this one.
    let _ending = ranks.run_ending();
    let finished = job.finish(outcome, name, session, |run: &StoredRun, store: &Store| {
        // The working folder is removed (or its warning said) before the run is printed.
        ranks.folder_dealt_with();
        print_run(&suite, run, &summary(run, store, cache, uncached_flags), json, quiet)
    });
    // On a failure before the print, the folder went when `finish` returned.
    ranks.folder_dealt_with();
    finished
}

/// The busy rule rank 0 judges its host by: under MPI the other ranks on its host are other
/// processes to it, so only steal is judged there (their CPU and I/O would read as competition).
fn judged_here(plan: &super::machine::MachinePlan, ranks: &Ranks) -> super::machine::MachinePlan {
    let mut plan = plan.clone();
    if ranks.mpi_size().is_some_and(|n| n > 1) {
        plan.thresholds.cpu_pct = None;
        plan.thresholds.io_pct = None;
    }
    plan
}

/// Hands the run to the MPI ranks; then each rank describes its host, now that the folder is
/// made and the server known: the descriptions are stored with the run (a warning where they
/// cannot be).
fn share_job(ranks: &Ranks, job: &Job, shared: SharedJob, server: Option<&Server>) -> anyhow::Result<()> {
    let (clients, workdir) = (shared.clients.clone(), shared.workdir.clone());
    ranks.share_job(&Shared::Job(Box::new(shared)), &clients)?;
    match ranks.describe_hosts(workdir.as_deref(), server) {
        Ok(Some(hosts)) => {
            if let Err(e) = job.store.set_client_hosts(job.run_id, &serde_json::to_value(&hosts)?) {
                eprintln!("iomatrix: warning: the ranks' hosts are not stored with the run: {e}");
            }
        }
        Ok(None) => {}
        Err(e) => eprintln!("iomatrix: warning: the ranks did not describe their hosts: {e}"),
    }
    Ok(())
}

/// What the passes of one run share: the suite and its plan, the run's options, where its
/// clients work and what they report to, and the names of the cells under way.
struct Passes<'a, S: Suite> {
    suite: &'a S,
    plan: &'a S::Plan,
    options: &'a super::RunOptions,
    ranks: &'a Ranks,
    group: &'a Group<'a>,
    place: &'a Place<'a>,
    live: &'a S::Live,
    workdir: Option<&'a Path>,
    names: &'a Mutex<Vec<String>>,
}

impl<S: Suite> Passes<'_, S> {
    /// Runs the plan, then (with `--tolerance`) the noisy cells again, a pass at a time, each
    /// handed to the MPI ranks first; the first pass's outcome that ends the run is returned.
    fn run(&self, job: &mut Job, stored: &mut Stored<S::Key>) -> std::io::Result<Option<(usize, Ending)>> {
        let mut pass = self.plan.clone();
        // Every pass after the first adds a sample to each noisy cell, so a cell reaches
        // --max-repeats within that many passes; the bound holds even if a pass adds none.
        let mut passes_left = self.options.repeat.max;
        loop {
            if let Err(e) = self.ranks.share_pass(&Shared::Pass(serde_json::to_value(&pass).unwrap_or_default())) {
                return Ok(Some((0, Ending::SinkFailed(format!("cannot hand the next pass to the MPI ranks: {e}")))));
            }
            let before = stored.sample_count();
            let outcome = self.execute(&pass, job, stored);
            // Seed 001's rule: cells with a sample too far from their median are measured again.
            let (Ok(Some((_, Ending::Completed)) | None), Some(tolerance)) =
                (&outcome, self.options.repeat.tolerance_pct)
            else {
                return outcome;
            };
            passes_left = passes_left.saturating_sub(1);
            let Some(noisy) = self.still_noisy(stored, before, passes_left, tolerance) else {
                return outcome;
            };
            pass = S::again(self.plan, &noisy);
            let again = S::cells(&pass);
            eprintln!(
                "iomatrix: {} cell(s) have a sample further than {tolerance}% from their median: measuring them \
                 again ({} cell(s) in this pass)",
                noisy.len(),
                again.len()
            );
            if let Err(e) = job.add_cells(S::work(&pass)) {
                return Ok(Some((0, Ending::SinkFailed(format!("cannot plan the cells measured again: {e}")))));
            }
            if let Ok(mut n) = self.names.lock() {
                *n = again;
            }
        }
    }

    /// One pass on every client, each finished cell stored as it comes.
    fn execute(
        &self,
        pass: &S::Plan,
        job: &mut Job,
        stored: &mut Stored<S::Key>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        let setup = Setup {
            cells: S::cells(pass).len(),
            workdir: self.workdir,
            hooks: &self.options.clients.hooks,
            on_error: self.options.clients.on_error,
            stop: job.stop,
        };
        stored.in_pass = 0;
        stored.pass_cells = setup.cells;
        stored.together = S::cells_back_to_back(pass);
        stored.before_cell(job.block_device.as_ref());
        let samples = (self.options.repeat.count, self.group.size());
        S::execute(pass, self.group, &setup, self.place, self.live, &mut |cell| {
            stored.keep(self.suite, pass, cell, job, samples)
        })
    }

    /// The keys of the cells to measure again; None where the run is done: no cell is noisy, or
    /// some still are but the last pass added no sample or `--max-repeats` is reached (said).
    fn still_noisy(
        &self,
        stored: &Stored<S::Key>,
        before: usize,
        passes_left: u32,
        tolerance: f64,
    ) -> Option<Vec<S::Key>> {
        let noisy: Vec<S::Key> =
            stored.samples.iter().filter(|(_, s)| self.options.repeat.noisy(s)).map(|(k, _)| k.clone()).collect();
        if noisy.is_empty() {
            return None;
        }
        if stored.sample_count() == before || passes_left == 0 {
            eprintln!(
                "iomatrix: warning: {} cell(s) are still further than {tolerance}% from their median, but \
                 measuring them again gave {}: not measuring them again (see each cell's figures)",
                noisy.len(),
                if passes_left == 0 { "no end to the noise within --max-repeats passes" } else { "no new figure" }
            );
            return None;
        }
        Some(noisy)
    }
}

/// Prints a stored run: its text (its suite's tables) and then what the suite adds after them
/// and the run's `summary`; with `--json` one JSON document alone on standard output. `quiet`:
/// standard output is the suite's own (a front end's -q), so the run's text goes to stderr.
fn print_run<S: Suite>(suite: &S, run: &StoredRun, summary: &str, json: bool, quiet: bool) -> anyhow::Result<()> {
    if json {
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&iomatrix_report::text::run::run_json(run))?))?;
        // One JSON document on standard output: no front end's report or CSV line after it,
        // and the summary on standard error.
        eprint!("{summary}");
        return Ok(());
    } else if quiet {
        eprint!("{}", iomatrix_report::text::run::run_text(run, &S::tables(run)));
    } else {
        crate::out::print(&iomatrix_report::text::run::run_text(run, &S::tables(run)))?;
    }
    suite.after_tables(run)?;
    // The run's last lines: on standard error where standard output is the suite's own (-q).
    if quiet {
        eprint!("{summary}");
        Ok(())
    } else {
        crate::out::print(summary)
    }
}

/// The lines the run ends with ([`iomatrix_report::text::summary`]), from the stored run, with
/// the cache verdict the run started with and the commands that go on from it.
fn summary(
    run: &StoredRun,
    store: &Store,
    cache: iomatrix_analysis::CacheVerdict,
    uncached_flags: fn(&str) -> String,
) -> String {
    let db = store.path();
    // Past a server's cache where its RAM is known; past this machine's otherwise.
    let ram = cache.server_ram_bytes().unwrap_or_else(|| run.environment_facts().ram_bytes.unwrap_or(0));
    let twice_ram = iomatrix_analysis::CacheVerdict::twice_ram_flag(ram).unwrap_or_else(|| "SIZE".into());
    // The latest earlier run of the same suite and plan that measured something: the comparison
    // to paste. A run of another plan is no comparison: none is offered then.
    let previous = store.previous_comparable_run(run).ok().flatten();
    let db_flag = if crate::db_path::needs_flag_to_find(db) {
        format!(" --db {}", super::args::command_text([db.display().to_string()]))
    } else {
        String::new()
    };
    iomatrix_report::text::summary::summary(
        run,
        &iomatrix_report::text::summary::SummaryContext {
            cache,
            uncached_flags: &uncached_flags(&twice_ram),
            db: &db.display().to_string(),
            db_flag: &db_flag,
            previous,
        },
    )
}

/// What the harness keeps of the stored cells across passes.
struct Stored<K> {
    /// Cells stored, over every pass: the next cell's `seq`.
    cells: usize,
    /// Cells stored in the pass under way.
    in_pass: usize,
    /// Every key's samples (the figure compare and reports use), for the noise rule.
    samples: BTreeMap<K, Vec<f64>>,
    /// Every key's cells stored, with or without a figure.
    measured: BTreeMap<K, usize>,
    /// Clients that lost their server in a cell that was kept: the run fails.
    failed: Option<(usize, Vec<ClientFailure>)>,
    interrupted: bool,
    /// The clocks when the cell under way began at the latest (the pass's start, or the last
    /// cell's end): what a cell's disturbance is judged over.
    since: super::disturbance::Clocks,
    /// Cells in the pass under way: after its last, no wait for the machine to settle.
    pass_cells: usize,
    /// `--busy-threshold` and `--settle`.
    machine: super::machine::MachinePlan,
    /// The machine's load since the cell under way began; None before the first cell.
    watch: Option<super::machine::CellWatch>,
    /// The readings taken each second meanwhile ([`super::machine::sample_seconds`]).
    seconds: super::machine::Seconds,
    /// Cells run back to back ([`Suite::cells_back_to_back`]); 1: each stored before the next.
    together: usize,
    /// The machine's load over the run of cells back to back being stored: each of its cells
    /// is judged over the whole run (they were stored together at its end).
    run_load: Option<iomatrix_environment::MachineLoad>,
}

impl<K> Default for Stored<K> {
    fn default() -> Self {
        Stored {
            cells: 0,
            in_pass: 0,
            samples: BTreeMap::new(),
            measured: BTreeMap::new(),
            failed: None,
            interrupted: false,
            since: super::disturbance::Clocks::now(),
            pass_cells: 0,
            machine: super::machine::MachinePlan::default(),
            watch: None,
            seconds: super::machine::Seconds::default(),
            together: 1,
            run_load: None,
        }
    }
}

impl<K: Ord + Clone> Stored<K> {
    /// A cell begins: with `--settle`, once the machine is quiet (or the wait's limit came); then
    /// the clocks and the machine's counters the cell is judged over are read.
    fn before_cell(&mut self, device: Option<&String>) {
        let seconds = &self.seconds;
        let watch = self.watch.get_or_insert_with(|| super::machine::CellWatch::new(device.cloned(), seconds.clone()));
        if let Some(limit) = self.machine.settle {
            watch.settle(&self.machine.thresholds, limit);
        }
        watch.begin();
        self.since = super::disturbance::Clocks::now();
    }

    /// Samples kept over every key: a pass that adds none cannot settle the noise.
    fn sample_count(&self) -> usize {
        self.samples.values().map(Vec::len).sum()
    }

    /// Stores one finished cell, with its state, and moves the progress display on. `repeats`
    /// and `clients`: the plan's samples per cell and the run's clients in all.
    fn keep<S: Suite<Key = K>>(
        &mut self,
        suite: &S,
        plan: &S::Plan,
        cell: &S::Cell,
        job: &mut Job,
        (repeats, clients): (u32, usize),
    ) -> Result<(), iomatrix_store::StoreError> {
        let mut row = suite.row(plan, cell);
        row.seq = self.cells;
        row.state = suite.parts(plan, cell, clients).unwrap_or_else(|| clients_state(&row, clients));
        let disturbance = self.disturbance(suite, plan, cell, row.wall_ns);
        let load = self.load_of_cell();
        let busy = load.as_ref().and_then(|l| self.machine.thresholds.judge(l));
        if let Some(load) = &load {
            row.set_machine(load);
        }
        let causes: Vec<String> = disturbance.into_iter().chain(busy).collect();
        if !causes.is_empty() {
            row.state = row.state.disturbed(causes.join("; "));
        }
        let key = suite.key(cell);
        let sample = self.measured.entry(key.clone()).or_default();
        *sample += 1;
        // The cell's sample number over every pass (a pass of noisy cells starts its plan's repeats at 1).
        row.set_repeat(*sample);
        // A cell that no client or connection finished is stored, in its place, with no figure.
        let failed = row.state.kind == iomatrix_store::CellStateKind::Failed;
        let mut line = if failed {
            strip_figures(&mut row);
            format!("{}: nothing measured ({})", iomatrix_analysis::CellKey::of(&row).describe(), failures_of(&row))
        } else {
            suite.done_line(cell)
        };
        if repeats > 1 || *sample > 1 {
            line += &format!(" (sample {sample})");
        }
        if !row.state.is_complete() {
            line += &format!(" [{}]", row.state.describe());
        }
        job.store_cell(&row, &line)?;
        let run_ends = iomatrix_coord::handled_before_next(self.in_pass, self.together, self.pass_cells);
        if self.in_pass + 1 < self.pass_cells && run_ends {
            self.before_cell(job.block_device.as_ref());
        }
        let samples = self.samples.entry(key).or_default();
        // A cell that is not whole is no sample of the noise rule: measuring it again says nothing.
        if let Some(figure) = iomatrix_analysis::Figure::of(&row).filter(|_| row.state.is_complete()) {
            samples.push(figure.value);
        }
        match suite.verdict(cell) {
            Verdict::Fine => {}
            Verdict::Interrupted => self.interrupted = true,
            Verdict::Failed(failures) => {
                self.failed.get_or_insert((self.in_pass, Vec::new())).1.extend(failures);
            }
        }
        self.cells += 1;
        self.in_pass += 1;
        Ok(())
    }

    /// The machine's load over the cell just finished; over the whole run of cells back to back
    /// for each of its cells (read once, at its first: the run's cells are stored at its end).
    fn load_of_cell(&mut self) -> Option<iomatrix_environment::MachineLoad> {
        let first_of_run = self.together <= 1 || self.in_pass % self.together == 0;
        if first_of_run || self.run_load.is_none() {
            self.run_load = self.watch.as_mut().map(super::machine::CellWatch::end);
        }
        self.run_load.clone()
    }

    /// Why the cell just finished did not run for its time, or None: judged from the clocks
    /// since [`Stored::since`], the stops that ended within its wall time, and its suite's pace.
    fn disturbance<S: Suite<Key = K>>(
        &self,
        suite: &S,
        plan: &S::Plan,
        cell: &S::Cell,
        wall_ns: u64,
    ) -> Option<String> {
        let now = super::disturbance::Clocks::now();
        // Cells back to back are stored at the run's end: a stop is looked for over the whole run.
        let own_start = if self.together > 1 { 0 } else { now.monotonic_raw.saturating_sub(wall_ns) };
        let began = own_start.max(self.since.monotonic_raw);
        let stops = super::disturbance::stops_between(began, now.monotonic_raw);
        super::disturbance::cause(&self.since, &now, wall_ns, &suite.pace(plan, cell), &stops)
    }

    /// How the run ended, with what its kept cells said.
    fn verdict(&mut self, ending: Ending) -> Ending {
        match ending {
            Ending::Completed if self.failed.is_some() => {
                let (cell, failures) = self.failed.take().unwrap_or_default();
                Ending::ClientFailed { cell, failures }
            }
            Ending::Completed if self.interrupted => Ending::Interrupted,
            other => other,
        }
    }
}

/// Clears what would read as a measurement from a failed cell's row: its throughput and its rate
/// (`metrics.per_sec`) become 0, its CPU% unknown. What its clients or connections did before
/// they failed (bytes, operations, errors) stays, as counts. (The store's gate does not refuse a
/// failed cell's figure: cells of databases older than the states, which migration 6 and
/// `db merge` mark failed, have one; every consumer reads a failed cell's state, not its figure.)
/// The run's cells are over: the threads that watch `running` stop, and the per-second reader
/// (`sampler`), parked between its readings, is woken to see it at once.
/// Ends the run's helper threads: each waits parked between its rounds, and is woken here, so a
/// run ends when its cells do, not a round later (10,000 fio jobs each waited up to 250 ms).
fn cells_over(running: &AtomicBool, threads: &[Option<&std::thread::Thread>]) {
    running.store(false, Ordering::Relaxed);
    threads.iter().flatten().for_each(|t| t.unpark());
}

fn strip_figures(row: &mut iomatrix_store::CellRow) {
    row.strip_rates();
}

/// What failed in a cell, as its row records it: "3 connection(s) failed (ENOSPC 3)", "2 client(s)
/// failed".
fn failures_of(row: &iomatrix_store::CellRow) -> String {
    let m = row.figures();
    let mut said = Vec::new();
    if let Some(n) = m.connections_failed.filter(|n| *n > 0) {
        let kinds: Vec<String> =
            m.errors.iter().filter_map(|(kind, n)| Some(format!("{kind} {}", n.as_u64()?))).collect();
        let kinds = if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) };
        said.push(format!("{n} connection(s) failed{kinds}"));
    }
    if let Some(n) = m.connections_skipped.filter(|n| *n > 0) {
        said.push(format!("{n} out since an earlier phase"));
    }
    match m.failed_clients.len() {
        0 => {}
        n => said.push(format!("{n} client(s) failed")),
    }
    if said.is_empty() {
        "no part finished".into()
    } else {
        said.join(", ")
    }
}

/// A cell's state counted in clients: the run's `clients` less those the row records as
/// failed (`failed_clients`, which every suite stores).
fn clients_state(row: &iomatrix_store::CellRow, clients: usize) -> iomatrix_store::CellState {
    let failed = row.figures().failed_clients.len();
    iomatrix_store::CellState::counted(clients.saturating_sub(failed) as u64, clients as u64, "clients")
}

/// What the live line's thread shows and where: the terminal's line (None: quiet, or a suite that
/// shows none), the run's published live state (kept up either way), every MPI rank's figures
/// (rank 0's board), and whether the machine is busy (the run's thresholds, its block device).
struct Shown {
    line: Option<LiveLine>,
    publisher: Arc<LivePublisher>,
    mpi: Option<(usize, LiveBoard)>,
    busy: (iomatrix_environment::BusyThresholds, Option<String>),
}

impl Shown {
    fn of(job: &Job, live: &impl LiveView, ranks: &Ranks, thresholds: iomatrix_environment::BusyThresholds) -> Shown {
        Shown {
            line: job.progress.live_line().filter(|_| live.shows_anything()),
            publisher: Arc::clone(&job.live_state),
            mpi: ranks.mpi_size().map(|n| (n, ranks.live_board())),
            busy: (thresholds, job.block_device.clone()),
        }
    }
}

/// The live line, redrawn every 250 ms from `live` until `running` is false, and published with
/// the run's live state once a second (its only cost: one small file written a second).
/// The live line's thread. A thread that cannot be made (a thread limit the run met) costs the
/// live line and the published state, never the run.
fn spawn_redraw<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    shown: Shown,
    live: &'env impl LiveView,
    running: &'env AtomicBool,
    name: &'env (dyn Fn(usize) -> String + Sync),
) -> Option<std::thread::ScopedJoinHandle<'scope, ()>> {
    std::thread::Builder::new()
        .name("live".into())
        .spawn_scoped(scope, move || redraw_live(shown, live, running, name))
        .inspect_err(|e| eprintln!("iomatrix: warning: no thread for the live line and live state ({e})"))
        .ok()
}

fn redraw_live(shown: Shown, live: &impl LiveView, running: &AtomicBool, name: &dyn Fn(usize) -> String) {
    let Shown { line, publisher, mpi, busy: (thresholds, device) } = shown;
    let (line, mpi) = (line.as_ref(), mpi.as_ref().map(|(n, board)| (*n, board)));
    let mut busy = super::machine::BusyNow::new(thresholds, device);
    while running.load(Ordering::Relaxed) {
        // Parked, not asleep: `cells_over` wakes it when the cells are over.
        std::thread::park_timeout(Duration::from_millis(250));
        let publish = publisher.due();
        if line.is_none() && !publish {
            continue;
        }
        let machine = busy.poll();
        let text = live.shows_anything().then(|| live_text(live, name, mpi)).flatten().map(|text| match machine {
            Some(_) => format!("{text} · machine busy"),
            None => text,
        });
        if let (Some(line), Some(text)) = (line, &text) {
            line.set_message(text.clone());
        }
        if publish {
            publisher.tick(text, live.sample(), name);
        }
    }
}

/// The live line: this process's clients, and under MPI every rank's sum.
fn live_text(live: &impl LiveView, name: &dyn Fn(usize) -> String, mpi: Option<(usize, &LiveBoard)>) -> Option<String> {
    let own = live.line(name)?;
    Some(match mpi {
        Some((ranks, board)) => {
            format!("rank 0's client: {own}; {}", board.summary(ranks, live.sample(), |s| live.show(s)))
        }
        None => own,
    })
}

/// Each client's way to connect its own session to the server; an error
/// where the target is local (suites connect only on a server).
fn connector(server: Option<&Server>) -> impl Fn() -> std::io::Result<Box<dyn iomatrix_backend::RemoteFs>> + Sync + '_ {
    move || match server {
        Some(server) => server.connect(),
        None => Err(std::io::Error::other("no server target")),
    }
}

/// Where the clients' files are: in `folder` on the server, or here.
fn place<'a>(connect: &'a iomatrix_backend::Connect<'a>, server_folder: Option<String>) -> Place<'a> {
    match server_folder {
        Some(folder) => Place::Remote { connect, folder },
        None => Place::Local,
    }
}

/// An MPI rank other than 0: runs every pass rank 0 hands it as its one
/// client, until the run is over. It writes no database and prints no tables.
pub fn follow<S: Suite>(job: SharedJob, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let SharedJob { workdir, server, clients, .. } = job;
    ranks.bound_waits(&clients);
    // Rank 0 waits for this word before the first pass (a failure shows there, as a lost rank).
    if let Err(e) = ranks.describe_hosts(workdir.as_deref(), server.as_ref().map(|(s, _)| s)) {
        eprintln!("iomatrix: warning: this rank's host was not described to rank 0: {e}");
    }
    // The run's own flag: this rank's failed cell raises it, and still waits for rank 0's word.
    let stop = super::signals::run_flag()?;
    let (server, folder) = server.unzip();
    let connect = connector(server.as_ref());
    let place = place(&connect, folder);
    let slots = ranks.mpi_size().unwrap_or(1);
    let (mut prepared, mut unready) = (false, None);
    loop {
        let plan = match ranks.receive() {
            Ok(Some(Shared::Pass(plan))) => plan,
            Ok(_) => break,
            // The launcher ending the job (or a user's Ctrl-C): rank 0 tells what happened.
            Err(e) => return ranks.stopped_by_signal().map(Ok).unwrap_or(Err(e)),
        };
        let plan: S::Plan = serde_json::from_value(plan)?;
        if !std::mem::replace(&mut prepared, true) {
            unready = S::before_clients(&plan, 1, server.is_some()).err().map(|e| format!("{e:#}"));
        }
        let setup = Setup {
            cells: S::cells(&plan).len(),
            workdir: workdir.as_deref(),
            hooks: &clients.hooks,
            on_error: clients.on_error,
            stop,
        };
        // This rank cannot run its client: each cell reports why, so rank 0 stores the cause.
        if let Some(why) = &unready {
            iomatrix_coord::fail_every_cell(&ranks.group(1), &setup, why)?;
            continue;
        }
        // Clients publish under their rank: room for every rank, only this one's used.
        let live = S::live(&plan, slots);
        ranks.relay_live(&|| live.sample(), || {
            S::execute(&plan, &ranks.group(1), &setup, &place, &live, &mut |_| Ok(()))
        })?;
    }
    Ok(ExitCode::SUCCESS)
}
