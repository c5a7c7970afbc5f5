//! Runs a personality: every client has `connections` connections, each a
//! thread with its own folder (and, on a server, its own session), its own
//! files of every fileset, made untimed before the first phase. Each phase
//! is one cell: the connections get ready (untimed), wait at the client's
//! gate while the client waits at the barrier with the others, and are let
//! go together.
//!
//! In a phase a connection loops: it picks a flow in proportion to the
//! weights, picks a file for it, and issues the flow's operations, each
//! timed on its own (a whole-file read or write is one timed request per
//! record). Closed loop: the next operation follows the last one's
//! completion, and `think` pauses after each iteration. Open loop: each
//! operation has an intended start, the previous one's plus an exponential
//! gap of mean 1/rate (Poisson arrivals); it is issued at that instant, or
//! at once when the connection is behind, and its latency runs from the
//! intended start, so a server that falls behind shows its queue instead of
//! hiding it (coordinated omission). An operation that is late is still
//! issued and counted (`late`); arrivals due before a timed phase ends that
//! were never issued are counted as the cell's `backlog`.
//!
//! With `--curve` each phase runs at every load of its curve (a cell each: the maximum closed
//! loop, then open-loop points at shares of each client's own maximum); with `--latency-target`
//! its maximum and the windows of its search run first (module [`crate::target`]). The leader
//! judges each such cell as it is merged and steers the clients of its process ([`Steering`]).
//!
//! A connection whose operation fails stops there: the failure is counted
//! under the operation (errors by kind) and the connection (its error), it
//! sits out the rest of the run, and in a phase of a fixed number of
//! iterations the operations it did not do are counted as lost.

use crate::claims::ClaimTable;
use crate::figures::{CellFigures, ConnectionOps, OpFigures};
use crate::files::{Files, LocalFiles, RemoteFiles};
use crate::schema::{Amount, Flow, FlowOrder, OpKind, Personality, Phase, PhaseEnd, Pick, Step};
use crate::sizes::{Rng, Sizes};
use crate::target::{RateTarget, Search, LEVELS, SEARCH_WINDOWS};
use iomatrix_backend::error_kind;
use iomatrix_backend::Place;
use iomatrix_coord::{lead, ClientFailure, ClientWork, Ending, Group, Setup, Start};
use iomatrix_core::CurveLoad;
use iomatrix_harness::clients::{start_together, Party, Threads};
use iomatrix_harness::curve::{Curve, Judge};
use iomatrix_random::{draw_at, Generator};
use iomatrix_stats::{ClientSeries, CpuReading, SeriesRecorder};
use iomatrix_verify::{Content, ContentSpec, Tally, UNIT};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Stack of a connection's thread: a system call's loop needs little.
pub const STACK_SIZE: usize = 256 * 1024;
/// With a protocol client, whose futures are polled on this stack.
pub const REMOTE_STACK_SIZE: usize = 2 * 1024 * 1024;
/// Latency samples a connection holds before adding them to the shared histograms.
const SAMPLE_BUFFER: usize = 256;
/// An open-loop operation started later than intended by more than this is `late`.
const LATE_NS: u64 = 1_000_000;

/// What every client runs: the personality (overrides applied) and how many times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// The checked personality, with `--scale` and the flags' overrides applied.
    pub personality: Personality,
    /// Where it came from: a built-in's name or a file's path.
    pub source: String,
    /// The whole set of phases runs this many times, each time on fresh files.
    pub repeats: u32,
    /// A dbench load file replayed instead of flows (`--dbench-loadfile`):
    /// the personality is then one phase, `replay`, without flows or
    /// filesets, and the binary runs it through its dbench module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<LoadFileReplay>,
    /// Stamped blocks (`--verify`, `--compressible`) instead of one shared buffer.
    #[serde(default)]
    pub content: ContentSpec,
    /// 0 for the run's first pass; a pass that measures noisy cells again
    /// (`--tolerance`) has its own number, so its files are fresh ones.
    #[serde(default)]
    pub pass: u64,
    /// The interval of each phase's figures over time (`--interval`), in ns.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
    /// `--curve`: every phase measured as a throughput-latency curve, its maximum (closed loop)
    /// then its open-loop points, each a cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<Curve>,
    /// `--latency-target`: every phase's highest rate within the target searched first (module
    /// [`crate::target`]), then the phase measured at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<RateTarget>,
}

/// What a cell of a phase with a latency target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetStage {
    /// The maximum, closed loop for one window (not stored).
    Max,
    /// A window of the search, open loop at its level's rate (not stored).
    Window,
    /// The phase at the rate found, for its duration: the cell stored.
    Measured,
}

/// What every client replays with `--dbench-loadfile`: each client reads
/// the file from `path` itself (an MPI rank on another host needs it at the
/// same path) and checks it holds `ops` operations, as rank 0's did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadFileReplay {
    /// The load file's path, as rank 0 read it.
    pub path: String,
    /// Operations in it (REPEAT unrolled).
    pub ops: u64,
    /// Operations with a timestamp.
    pub timed_ops: u64,
    /// Ignore the timestamps (`--as-fast-as-possible`).
    pub as_fast_as_possible: bool,
    /// Loop the file for this long, as dbench's `-t`; None: once through.
    pub duration_ns: Option<u64>,
    /// The most its files of one connection hold at once (an upper bound), for the free-space check.
    #[serde(default)]
    pub peak_bytes_per_connection: u64,
    /// Its LockX and UnlockX lines (mismatches over NFSv3, which has no locks).
    #[serde(default)]
    pub lock_ops: u64,
}

impl RunPlan {
    /// `personality` from `source`, once through, no replay, one shared buffer, the first pass.
    pub fn new(personality: Personality, source: impl Into<String>) -> RunPlan {
        RunPlan {
            personality,
            source: source.into(),
            repeats: 1,
            replay: None,
            content: ContentSpec::default(),
            pass: 0,
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
            curve: None,
            latency_target: None,
        }
    }

    /// The cells of each phase: 1, a curve's maximum and its points, or a latency target's
    /// maximum, search windows and measured cell.
    fn loads(&self) -> usize {
        match (&self.curve, &self.latency_target) {
            (Some(c), _) => 1 + c.points.len(),
            (None, Some(_)) => 2 + SEARCH_WINDOWS,
            (None, None) => 1,
        }
    }

    /// What cell `index` is in its phase's latency target search; None without a target.
    pub fn target_stage(&self, index: usize) -> Option<TargetStage> {
        self.latency_target?;
        Some(match index % self.loads() {
            0 => TargetStage::Max,
            i if i <= SEARCH_WINDOWS => TargetStage::Window,
            _ => TargetStage::Measured,
        })
    }

    /// The folder (in each connection's) of repeat `repeat`'s files.
    pub fn repeat_dir(&self, repeat: u32) -> String {
        match self.pass {
            0 => format!("r{repeat}"),
            pass => format!("r{repeat}-{pass:x}"),
        }
    }

    /// Cell `index`'s phase and repeat (a curve's points of a phase follow each other).
    pub fn cell(&self, index: usize) -> (&Phase, u32) {
        let n = self.personality.phases.len();
        let phase = index / self.loads();
        (&self.personality.phases[phase % n], (phase / n) as u32)
    }

    /// Cell `index`'s load as a point of its phase's curve; None without `--curve`.
    pub fn load(&self, index: usize) -> Option<CurveLoad> {
        let curve = self.curve.as_ref()?;
        match index % self.loads() {
            0 => Some(CurveLoad::Max),
            point => curve.points.get(point - 1).copied(),
        }
    }

    /// The cells after `index` in its phase's curve (none without `--curve`).
    pub fn rest_of_curve(&self, index: usize) -> std::ops::Range<usize> {
        let loads = self.loads();
        index + 1..(index / loads + 1) * loads
    }

    /// Cell `index`'s name: its phase's, and a curve's point's load after it (`run load=50%`),
    /// so that compare pairs the points of two curves.
    pub fn cell_name(&self, index: usize) -> String {
        let phase = &self.cell(index).0.name;
        match (self.load(index), self.target_stage(index)) {
            (Some(load), _) => format!("{phase} {}{load}", CurveLoad::KEY),
            (None, Some(TargetStage::Max)) => format!("{phase} (its maximum, for the latency target's search)"),
            (None, Some(TargetStage::Window)) => format!("{phase} (a window of the latency target's search)"),
            (None, _) => phase.clone(),
        }
    }

    /// How many cells the run has: its phases times its repeats (times a curve's loads).
    pub fn cells(&self) -> usize {
        self.personality.phases.len() * self.repeats.max(1) as usize * self.loads()
    }

    /// Cell `index`'s phase as a client runs it: a curve's maximum closed loop (the flows' rates
    /// dropped, their think time kept), a point open loop at `per_connection` operations a second
    /// in every flow (think time dropped, as `--rate`); without a curve, as planned.
    pub fn phase_at(&self, index: usize, per_connection: Option<f64>) -> Phase {
        let mut phase = self.cell(index).0.clone();
        let closed = match (self.load(index), self.target_stage(index)) {
            (None, None) => return phase,
            (Some(CurveLoad::Max), _) | (_, Some(TargetStage::Max)) => true,
            _ => false,
        };
        for flow in &mut phase.flows {
            if closed {
                flow.rate = None;
            } else {
                flow.rate = per_connection;
                flow.think_ns = 0;
            }
        }
        // A search's maximum and windows run one window each.
        if let (Some(TargetStage::Max | TargetStage::Window), Some(t)) = (self.target_stage(index), self.latency_target)
        {
            phase.end = PhaseEnd::Duration { ns: t.window_ns };
        }
        phase
    }

    /// The memory the plan's flows hold at their peak, as this engine
    /// allocates it (a load-file replay's is the dbench module's, not this):
    /// - each connection: the record it reads into and the record it writes
    ///   from (or its memsize), a `Slot` per file of every fileset (of a shared one too: its
    ///   claimed records), its latency samples and series recorder, and while its files are made
    ///   the name of every folder of its own filesets ([`FOLDER_BYTES`]);
    /// - each client: a shared fileset's claim table (a state byte and a
    ///   locked `Slot` per file) and folder names, and a latency histogram
    ///   per operation kind, twice (its own, and the copy handed to the leader).
    pub fn footprint(&self) -> Footprint {
        let p = &self.personality;
        let folders = |f: &crate::schema::Fileset| if f.depth == 0 { 0 } else { f.files.div_ceil(f.width) };
        let all_files: u64 = p.filesets.iter().map(|f| f.files).fold(0, u64::saturating_add);
        let own_folders: u64 = p.filesets.iter().filter(|f| !f.shared).map(folders).fold(0, u64::saturating_add);
        let per_connection = p
            .buffer_bytes()
            .saturating_add(all_files.saturating_mul(SLOT_BYTES))
            .saturating_add(own_folders.saturating_mul(FOLDER_BYTES))
            .saturating_add((SAMPLE_BUFFER * std::mem::size_of::<(u8, u64, bool)>()) as u64)
            // Its series recorder's fixed part (its intervals grow with the phase's time).
            .saturating_add(iomatrix_stats::SeriesRecorder::footprint(0));
        let claim = SLOT_BYTES + std::mem::size_of::<Mutex<Slot>>() as u64 + 1;
        let shared: u64 = p
            .filesets
            .iter()
            .filter(|f| f.shared)
            .map(|f| f.files.saturating_mul(claim).saturating_add(folders(f).saturating_mul(FOLDER_BYTES)))
            .fold(0, u64::saturating_add);
        let histograms = 2 * OpKind::ALL.len() as u64 * iomatrix_stats::Latency::footprint();
        Footprint { per_connection, per_client: shared.saturating_add(histograms), per_file: SLOT_BYTES }
    }
}

/// What a personality's plan holds in memory, in bytes ([`RunPlan::footprint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// What each connection holds: its buffers, a record per file, folder names, latency samples.
    pub per_connection: u64,
    /// What each client holds besides: shared filesets' claim tables and two histograms per
    /// operation kind.
    pub per_client: u64,
    /// What one more file of a fileset adds to each connection.
    pub per_file: u64,
}

/// A file's record (`Slot`), as a connection keeps it.
pub const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;
/// A folder's name while a fileset's files are made: its path (some 40
/// bytes in a `String`) and its place in a hash set, counted generously.
pub const FOLDER_BYTES: u64 = 128;

/// Counters the connections keep current, for a live display.
#[derive(Default)]
pub struct Live {
    /// The phase running, an index into the plan's cells.
    pub phase: AtomicUsize,
    /// Whether the phase has started.
    pub started: AtomicBool,
    /// Operations completed in it so far.
    pub ops: AtomicU64,
    /// Bytes moved in it so far.
    pub bytes: AtomicU64,
    /// Connections failed so far in the run.
    pub failed: AtomicUsize,
}

impl Live {
    /// Counters at zero.
    pub fn new() -> Live {
        Live::default()
    }
}

/// One client's cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientCell {
    /// The client's rank (0-based).
    pub rank: usize,
    /// Its cell, merged over its connections.
    pub figures: CellFigures,
    /// It left the cell out: a point of a curve whose bound ended it (`--stop-curve`).
    #[serde(default)]
    pub skipped: bool,
}

/// What the leader tells the clients of its process between cells (`--stop-curve` and
/// `--latency-target` are refused under MPI, whose ranks share no memory).
#[derive(Default)]
pub struct Steering {
    /// Cells the clients leave out: the rest of a curve its bound ended, the rest of a search's
    /// windows once it ended, and the search's cells that ran (folded into the measured cell).
    /// The run counts them as planned and not run, never as lost.
    left_out: Mutex<BTreeSet<usize>>,
    /// A latency target's search: the level its next window (then the measured phase) runs at.
    level: AtomicU32,
}

impl Steering {
    /// How many cells the leader left out.
    pub fn cells_left_out(&self) -> usize {
        self.left_out.lock().map_or(0, |l| l.len())
    }

    fn leave_out(&self, cells: impl IntoIterator<Item = usize>) {
        self.left_out.lock().unwrap_or_else(|e| e.into_inner()).extend(cells);
    }

    fn is_left_out(&self, index: usize) -> bool {
        self.left_out.lock().is_ok_and(|l| l.contains(&index))
    }
}

/// Runs `plan` on every client of `group`, client r in `setup.workdir/client-r`
/// (on a server, `folder/client-r` there). At the leader `on_cell` gets each
/// cell merged over the clients (clients in rank order) with each client's
/// own; elsewhere None. The clients follow `steering` between cells.
pub fn execute_clients<E: std::fmt::Display>(
    plan: &RunPlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    (lives, steering): (&[Live], &Steering),
    mut on_cell: impl FnMut(&CellFigures, &[ClientCell], &iomatrix_coord::Gathered<ClientCell>) -> Result<(), E>,
) -> io::Result<Option<(usize, Ending)>> {
    let stop = setup.stop;
    let abort = setup.on_error == iomatrix_coord::OnClientError::Abort;
    let mut judge = Judge::default();
    let mut search = None;
    let clients = group.size();
    lead(
        group,
        setup,
        |rank, dir| Client {
            rank,
            plan,
            dir: dir.to_path_buf(),
            place: place.of_client(rank),
            stop,
            abort,
            live: iomatrix_harness::clients::own(lives, rank),
            local: Vec::new(),
            remote: Vec::new(),
            tables: Tables::default(),
            curve: CurveClient { steering, clients, max_per_sec: None },
        },
        |index, gathered| {
            // Where every client failed the phase it is handed on empty, to be stored failed.
            let mut merged = CellFigures::merged(gathered.figures.iter().map(|c| &c.figures))
                .unwrap_or_else(|| CellFigures::none(&plan.cell(index).0.name));
            let skipped = !gathered.figures.is_empty() && gathered.figures.iter().all(|c| c.skipped);
            if !skipped {
                judge_point(plan, index, &mut judge, &mut merged, steering);
                judge_window(plan, index, &mut search, &mut merged, steering);
            }
            on_cell(&merged, &gathered.figures, &gathered)
        },
    )
}

/// At the leader, a point of a curve just merged: the curve's figures so far go with it, and
/// where its bound ends the curve here, the rest of the curve is left out.
fn judge_point(plan: &RunPlan, index: usize, judge: &mut Judge, merged: &mut CellFigures, steering: &Steering) {
    let (Some(load), Some(curve)) = (plan.load(index), &plan.curve) else { return };
    if load == CurveLoad::Max {
        *judge = Judge::new(curve.stop);
    }
    let (figures, ends) = judge.see(load, merged.ops_per_sec(), &merged.latency());
    if ends {
        steering.leave_out(plan.rest_of_curve(index));
    }
    merged.curve = Some(figures);
}

/// At the leader, a cell of a latency target's search just merged: the maximum starts the
/// search, a window is judged and sets the next level (or ends the search, its remaining windows
/// left out), and the measured cell gets what the search found.
fn judge_window(
    plan: &RunPlan,
    index: usize,
    search: &mut Option<Search>,
    merged: &mut CellFigures,
    steering: &Steering,
) {
    let (Some(stage), Some(target)) = (plan.target_stage(index), plan.latency_target) else { return };
    match stage {
        TargetStage::Max => *search = Some(Search::new(target, merged.ops_per_sec())),
        TargetStage::Window => {
            let Some(s) = search.as_mut() else { return };
            let latency = merged.latency();
            let ops = latency.count();
            let within = latency.counts_at_most_ns(&[target.target_ns]).first().copied().unwrap_or(0);
            let at = latency.quantile_ns(f64::from(target.percentile_hundredths) / 10_000.0);
            let rates = (merged.ops_per_sec(), merged.offered_per_sec.unwrap_or(0.0));
            s.judge(ops, ops.saturating_sub(within), at, rates);
            if s.ended() {
                // The windows after this one, up to the measured cell (the phase's last).
                let measured = plan.rest_of_curve(index).end - 1;
                steering.leave_out(index + 1..measured);
            }
        }
        TargetStage::Measured => {
            merged.latency_target = search.as_ref().map(Search::outcome);
            return;
        }
    }
    steering.level.store(search.as_ref().map_or(1, |s| s.level), Ordering::SeqCst);
    // The search's own cells are folded into the measured cell: not stored, not lost.
    steering.leave_out([index]);
}

/// A client's part in its phases' curves.
struct CurveClient<'a> {
    /// What the leader says between cells.
    steering: &'a Steering,
    /// Clients in the run: an absolute rate is split evenly over them.
    clients: usize,
    /// This client's own operations a second at its phase's maximum, once measured: its share of
    /// each point at a percentage of the maximum.
    max_per_sec: Option<f64>,
}

impl CurveClient<'_> {
    fn is_left_out(&self, index: usize) -> bool {
        self.steering.is_left_out(index)
    }

    /// The operations a second each of `connections` connections offers at cell `index`: None at
    /// a curve's maximum and without a curve.
    fn per_connection(&self, plan: &RunPlan, index: usize, connections: usize) -> Result<Option<f64>, String> {
        // A share of the maximum: a curve's percentage, or a search's level (of 20).
        let share = match (plan.load(index), plan.target_stage(index)) {
            (Some(CurveLoad::Max), _) | (_, Some(TargetStage::Max)) | (None, None) => return Ok(None),
            (Some(CurveLoad::Rate(all)), _) => {
                return self.spread(plan, index, all as f64 / self.clients.max(1) as f64, connections)
            }
            (Some(CurveLoad::Percent(p)), _) => f64::from(p) / 100.0,
            (None, Some(_)) => f64::from(self.steering.level.load(Ordering::SeqCst).max(1)) / f64::from(LEVELS),
        };
        let per_client = match self.max_per_sec {
            Some(max) if max > 0.0 => max * share,
            _ => {
                return Err(format!(
                    "the {} phase's maximum did no operation here, so {:.0}% of it offers nothing",
                    plan.cell(index).0.name,
                    share * 100.0
                ))
            }
        };
        self.spread(plan, index, per_client, connections)
    }

    /// `per_client` operations a second spread over `connections`, checked.
    fn spread(&self, plan: &RunPlan, index: usize, per_client: f64, connections: usize) -> Result<Option<f64>, String> {
        let rate = per_client / connections.max(1) as f64;
        match crate::schema::rate_problem(rate) {
            None => Ok(Some(rate)),
            Some(problem) => {
                Err(format!("{} offers {rate} operations a second per connection: {problem}", plan.cell_name(index)))
            }
        }
    }
}

struct Client<'a> {
    rank: usize,
    plan: &'a RunPlan,
    dir: PathBuf,
    place: Place<'a>,
    stop: &'a AtomicBool,
    /// `--on-client-error abort`: the first connection that fails stops every other.
    abort: bool,
    live: Option<&'a Live>,
    local: Vec<Conn<LocalFiles>>,
    remote: Vec<Conn<RemoteFiles>>,
    tables: Tables,
    curve: CurveClient<'a>,
}

/// A client's shared filesets (their claim tables, None for a fileset of
/// each connection's own) and the repeat their files are of.
#[derive(Default)]
struct Tables {
    repeat: Option<u32>,
    sets: Vec<Option<ClaimTable<Slot>>>,
}

impl ClientWork for Client<'_> {
    type Figures = ClientCell;

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<ClientCell, ClientFailure> {
        let n = self.plan.personality.connections;
        if self.curve.is_left_out(index) {
            let figures = CellFigures::none(&self.plan.cell(index).0.name);
            return Ok(ClientCell { rank: self.rank, figures, skipped: true });
        }
        let per_connection =
            self.curve.per_connection(self.plan, index, n).map_err(|e| ClientFailure::error(self.rank, e))?;
        let phase = self.plan.phase_at(index, per_connection);
        let mut figures = self.run_phase(index, &phase, start)?;
        figures.offered_per_sec = per_connection.map(|r| r * n as f64);
        if self.plan.load(index) == Some(CurveLoad::Max) || self.plan.target_stage(index) == Some(TargetStage::Max) {
            self.curve.max_per_sec = Some(figures.ops_per_sec());
        }
        Ok(ClientCell { rank: self.rank, figures, skipped: false })
    }
}

impl Client<'_> {
    /// Runs cell `index` as `phase` on the client's connections.
    fn run_phase(&mut self, index: usize, phase: &Phase, start: &mut Start<'_>) -> Result<CellFigures, ClientFailure> {
        let quiet = Live::new();
        let live = self.live.unwrap_or(&quiet);
        let n = self.plan.personality.connections;
        let figures = match &self.place {
            Place::Local => {
                if !self.dir.is_dir() {
                    return Err(ClientFailure::error(self.rank, format!("{}: not a folder", self.dir.display())));
                }
                if self.local.is_empty() {
                    self.local = (0..n).map(|r| Conn::new(r, self.rank * n + r)).collect();
                }
                let dir = &self.dir;
                let make = || Ok(LocalFiles::new(dir.clone()));
                run_cell(
                    self.plan,
                    (index, phase),
                    &mut self.local,
                    &mut self.tables,
                    &make,
                    STACK_SIZE,
                    (self.stop, self.abort),
                    live,
                    start,
                    self.rank,
                )?
            }
            Place::Remote { connect, folder } => {
                let connect = *connect;
                if self.remote.is_empty() {
                    let mut fs = connect().map_err(|e| ClientFailure::error(self.rank, format!("connecting: {e}")))?;
                    match fs.mkdir(folder) {
                        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                            return Err(ClientFailure::error(self.rank, format!("making {folder}: {e}")))
                        }
                        _ => {}
                    }
                    self.remote = (0..n).map(|r| Conn::new(r, self.rank * n + r)).collect();
                }
                let folder = folder.clone();
                let make = move || Ok(RemoteFiles::new(connect()?, folder.clone()));
                run_cell(
                    self.plan,
                    (index, phase),
                    &mut self.remote,
                    &mut self.tables,
                    &make,
                    REMOTE_STACK_SIZE,
                    (self.stop, self.abort),
                    live,
                    start,
                    self.rank,
                )?
            }
        };
        Ok(figures)
    }
}

fn conn_dir(rank: usize) -> String {
    format!("conn-{rank:04}")
}

/// The folder, in the client's, of its shared filesets.
const SHARED_DIR: &str = "shared";

/// The owner (in size draws and stamps) of a client's shared files: apart
/// from every connection's number.
fn shared_owner(client: usize) -> usize {
    1 << 31 | client
}

/// Where a step of a flow works: file `i` of fileset `set`, whose sizes connection `owner` draws,
/// and its state (`slot`) as the step began.
#[derive(Clone, Copy)]
struct At {
    set: usize,
    i: u64,
    owner: usize,
    slot: Slot,
}

/// A file of a fileset, as the connection knows it.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    exists: bool,
    /// Renames so far: part of its name.
    gen: u32,
    /// Creations so far: its size is drawn anew each time.
    born: u32,
    /// Bytes in it now.
    size: u64,
    /// The size a whole-file write gives it.
    drawn: u64,
    /// Stamped data: the generation of the last write, and of the last write of the whole file.
    wgen: u64,
    wbase: u64,
}

struct SetState {
    sizes: Sizes,
    /// Each connection's own files; of a shared fileset, the records of the
    /// files this connection has claimed (a copy, written back at release).
    slots: Vec<Slot>,
    /// Whose files these are, in size draws and stamps: the connection's
    /// number, or the client's shared owner.
    owner: usize,
    /// `pick = "rotation"` over the connection's own files: where the search for the next absent
    /// [0] and present [1] file begins (a shared fileset's rotation is its claim table's).
    rotors: [u64; 2],
}

/// One connection, across the cells of the run.
struct Conn<F> {
    /// Within its client.
    rank: usize,
    /// Its folder, in the client's.
    home: String,
    /// Over the run (for its sizes and choices).
    global: usize,
    files: Option<F>,
    /// Why it stopped, once it has: "KIND: message".
    failed: Option<(String, String)>,
    /// The repeat whose files exist.
    repeat: Option<u32>,
    sets: Vec<SetState>,
}

impl<F: Files> Conn<F> {
    fn new(rank: usize, global: usize) -> Conn<F> {
        Conn { rank, global, home: conn_dir(rank), files: None, failed: None, repeat: None, sets: Vec::new() }
    }
}

/// Shared by one client's connections in one cell: the per-operation figures.
struct Shared {
    ops: Mutex<Vec<OpFigures>>,
}

impl Shared {
    fn new() -> Shared {
        Shared { ops: Mutex::new(OpKind::ALL.iter().map(|k| OpFigures::new(k.name())).collect()) }
    }
}

/// What a connection did in one cell.
#[derive(Default)]
struct ConnResult {
    ops: ConnectionOps,
    lost_ops: u64,
    backlog: u64,
    idle: u64,
    /// Newly failed in this cell: (kind).
    failed_kind: Option<String>,
    stopped: bool,
    cpu: iomatrix_stats::CpuTimes,
    /// From the common start to this connection's last CPU reading.
    cpu_span_ns: u64,
    verify: Option<Tally>,
    /// Its operations over time, from the common start.
    series: ClientSeries,
}

#[allow(clippy::too_many_arguments)]
fn run_cell<F: Files>(
    plan: &RunPlan,
    (index, phase): (usize, &Phase),
    conns: &mut [Conn<F>],
    tables: &mut Tables,
    make: &(dyn Fn() -> io::Result<F> + Sync),
    stack: usize,
    (stop, abort): (&AtomicBool, bool),
    live: &Live,
    start: &mut Start<'_>,
    client: usize,
) -> Result<CellFigures, ClientFailure> {
    let repeat = plan.cell(index).1;
    if tables.repeat != Some(repeat) && plan.personality.filesets.iter().any(|f| f.shared) {
        // Untimed, once per client and repeat: the shared files, through a session of their own.
        tables.sets = prepare_shared(plan, repeat, make, client).map_err(|e| {
            ClientFailure::error(client, format!("making the shared filesets' files in {SHARED_DIR}/: {e}"))
        })?;
        tables.repeat = Some(repeat);
    }
    let tables: &[Option<ClaimTable<Slot>>] = &tables.sets;
    let shared = Shared::new();
    live.ops.store(0, Ordering::Relaxed);
    live.bytes.store(0, Ordering::Relaxed);
    live.phase.store(index, Ordering::Relaxed);
    let ranks: Vec<usize> = conns.iter().map(|c| c.rank).collect();
    let threads = Threads { name: |conn: &&mut Conn<F>| format!("conn-{}", conn.rank), stack_size: stack };
    let outcomes = start_together(
        conns.iter_mut(),
        &threads,
        start,
        |_| live.started.store(true, Ordering::Relaxed),
        |conn, party| connection(plan, phase, repeat, conn, make, tables, client, party, &shared, (stop, abort), live),
    )?;
    // A connection whose thread could not start counts as failed.
    let results: Vec<ConnResult> = outcomes
        .into_iter()
        .zip(ranks)
        .map(|(outcome, rank)| {
            outcome.unwrap_or_else(|why| ConnResult {
                ops: ConnectionOps { rank, failed: Some(format!("thread: {why}")), ..ConnectionOps::default() },
                failed_kind: Some("thread".into()),
                ..ConnResult::default()
            })
        })
        .collect();
    // Under abort a connection that failed stopped the others (they read as stopped): the cell is
    // not kept, and the run ends on that failure.
    if let Some(failed) = abort.then(|| first_failure(&results)).flatten() {
        return Err(ClientFailure::error(client, failed));
    }
    if results.iter().any(|r| r.stopped) || stop.load(Ordering::SeqCst) {
        return Err(ClientFailure::stopped(client));
    }
    Ok(merged(phase, shared, results))
}

/// The first failure of the connections that failed in a cell, with how many more did.
fn first_failure(results: &[ConnResult]) -> Option<String> {
    let failed: Vec<&str> =
        results.iter().filter(|r| r.failed_kind.is_some()).filter_map(|r| r.ops.failed.as_deref()).collect();
    let first = failed.first()?;
    let more = match failed.len() {
        1 => String::new(),
        n => format!(" (and {} more connection(s) failed)", n - 1),
    };
    Some(format!("{first}{more}"))
}

/// A cell's figures: the operations the connections counted in `shared`, and each connection's
/// `results` summed and listed by rank.
fn merged(phase: &Phase, shared: Shared, results: Vec<ConnResult>) -> CellFigures {
    let mut figures = CellFigures { phase: phase.name.clone(), ..CellFigures::default() };
    figures.ops = shared.ops.into_inner().unwrap_or_else(|e| e.into_inner());
    figures.ops.retain(|o| o.count > 0 || o.errors() > 0 || o.conflicts > 0);
    let mut results = results;
    results.sort_by_key(|r| r.ops.rank);
    figures.series = ClientSeries::merge(&results.iter().map(|r| &r.series).collect::<Vec<_>>());
    for r in results {
        figures.wall_ns = figures.wall_ns.max(r.ops.ns);
        figures.cpu_span_ns = figures.cpu_span_ns.max(r.cpu_span_ns);
        figures.user_ns += r.cpu.user_ns;
        figures.sys_ns += r.cpu.sys_ns;
        figures.lost_ops += r.lost_ops;
        figures.backlog += r.backlog;
        figures.idle_iterations += r.idle;
        if let Some(t) = &r.verify {
            figures.verify.get_or_insert_with(Tally::default).add(t);
        }
        if let Some(kind) = r.failed_kind {
            *figures.connections_failed.entry(kind).or_default() += 1;
        }
        figures.connections.push(r.ops);
    }
    figures
}

/// When a phase of a fixed duration that began at `origin` ends.
fn deadline_of(phase: &Phase, origin: Instant) -> Option<Instant> {
    match phase.end {
        PhaseEnd::Duration { ns } => Some(origin + Duration::from_nanos(ns)),
        _ => None,
    }
}

/// Why a connection's phase ended early.
enum Halt {
    Stopped,
    /// Kind, message.
    Failed(String, String),
    /// Open loop: the next arrival falls after the phase's end.
    Ended,
    /// A `lock` refused (another holds the range): counted; the iteration ends, the connection goes on.
    Conflict,
}

/// Whether `op` changes what is stored: a write in the figures over time (the others, a read).
fn changes_data(op: OpKind) -> bool {
    matches!(op, OpKind::Create | OpKind::Write | OpKind::Append | OpKind::Fsync | OpKind::Rename | OpKind::Delete)
}

/// Sleeps until `until`, in slices, back early when `stop` is raised; false then.
fn pause_until(until: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

#[allow(clippy::too_many_arguments)]
fn connection<F: Files>(
    plan: &RunPlan,
    phase: &Phase,
    repeat: u32,
    conn: &mut Conn<F>,
    make: &(dyn Fn() -> io::Result<F> + Sync),
    tables: &[Option<ClaimTable<Slot>>],
    client: usize,
    party: &Party<'_>,
    shared: &Shared,
    (stop, abort): (&AtomicBool, bool),
    live: &Live,
) -> ConnResult {
    let p = &plan.personality;
    let mut result = ConnResult {
        ops: ConnectionOps { rank: conn.rank, ..ConnectionOps::default() },
        failed_kind: set_up(plan, repeat, conn, make, client, (stop, abort)),
        ..ConnResult::default()
    };
    // The buffers are made (and their pages touched) before the start: a memsize of 10m for each
    // of 100 connections takes a good part of a second to fill.
    // Under memsize, one buffer that requests read into and write from (filebench's tf_mem).
    let buf = if p.memsize.is_some() { Vec::new() } else { vec![0; p.record as usize] };
    let data = pattern(p.memsize.unwrap_or(p.record) as usize, p.seed ^ conn.global as u64);
    let series = SeriesRecorder::new(plan.series_interval_ns);
    let Some(origin) = party.ready() else {
        result.stopped = true;
        return result;
    };
    let iterations = p.iterations_of(phase, conn.rank);
    if let Some((_, why)) = &conn.failed {
        result.ops.failed = Some(why.clone());
        if let Some(n) = iterations {
            result.lost_ops = lost_ops(p, phase, conn, 0, n);
        }
        live.failed.fetch_add(usize::from(result.failed_kind.is_some()), Ordering::Relaxed);
        return result;
    }
    let cpu0 = CpuReading::now();
    let files = conn.files.as_mut().expect("prepared connections have files");
    let mut run = Run {
        p,
        rank: conn.global,
        dir: format!("{}/{}", conn.home, plan.repeat_dir(repeat)),
        shared_dir: format!("{SHARED_DIR}/{}", plan.repeat_dir(repeat)),
        files,
        sets: &mut conn.sets,
        tables,
        shared,
        stop,
        live,
        deadline: deadline_of(phase, origin),
        next_arrival: origin,
        rng: Rng::new(draw_at(p.seed ^ 0x5eed_f10e, conn.global as u64, u64::from(repeat) << 32 | 1 << 48)),
        samples: Vec::with_capacity(SAMPLE_BUFFER),
        counts: [(0u64, 0u64, 0u64); 13],
        flowops: [0; 13],
        errors: Vec::new(),
        conflicts: 0,
        buf,
        data,
        last_end: origin,
        content: plan.content.stamped().then(|| Content::new(plan.content, 0)),
        spec: plan.content,
        unclaimed: false,
        series,
        origin,
    };
    let iterated = run.iterations(phase, iterations, &mut result.idle);
    if iterated.ended.is_ok() {
        result.backlog = run.backlog(phase);
    }
    run.flush();
    result.verify = run.content.as_mut().map(Content::take_tally);
    (result.ops.ops, result.ops.bytes, result.ops.errors) = run.totals();
    result.ops.ns = run.last_end.saturating_duration_since(origin).as_nanos() as u64;
    result.series = run.series.finish(result.ops.ns);
    result.cpu = CpuReading::now().since(cpu0);
    result.cpu_span_ns = Instant::now().saturating_duration_since(origin).as_nanos() as u64;
    match iterated.ended {
        Ok(()) => {}
        Err(Halt::Stopped) => result.stopped = true,
        Err(Halt::Ended | Halt::Conflict) => {}
        Err(Halt::Failed(kind, message)) => {
            result.ops.failed = Some(message.clone());
            result.failed_kind = Some(kind.clone());
            live.failed.fetch_add(1, Ordering::Relaxed);
            if let Some(n) = iterations {
                let partial = result.ops.ops.saturating_sub(iterated.before_last);
                result.lost_ops = lost_ops(p, phase, conn, iterated.done, n).saturating_sub(partial);
            }
            conn.failed = Some((kind, message));
            if abort {
                stop.store(true, Ordering::SeqCst);
            }
        }
    }
    result
}

/// Untimed, before the gate: the session, the folders, the files made before the first
/// phase, once per repeat. A failure is the connection's for the rest of the run; it gives
/// the kind of error, newly failed (and stops the run with `abort`).
fn set_up<F: Files>(
    plan: &RunPlan,
    repeat: u32,
    conn: &mut Conn<F>,
    make: &(dyn Fn() -> io::Result<F> + Sync),
    client: usize,
    (stop, abort): (&AtomicBool, bool),
) -> Option<String> {
    // A thread that panics here leaves its place at the gate as it unwinds (a `Party` does).
    let mut failed_kind = None;
    if conn.failed.is_none() && conn.repeat != Some(repeat) {
        if let Err(e) = prepare(&plan.personality, plan.content, repeat, &plan.repeat_dir(repeat), conn, make, client) {
            let kind = error_kind(&e);
            conn.failed = Some((kind.clone(), format!("connection {}: setting up: {e}", conn.global)));
            failed_kind = Some(kind);
            if abort {
                stop.store(true, Ordering::SeqCst);
            }
        }
    }
    failed_kind
}

/// How a connection's iterations of a phase ended.
struct Iterated {
    ended: Result<(), Halt>,
    /// Iterations done.
    done: u64,
    /// Operations done before the last iteration began: a failed iteration's done part is not lost.
    before_last: u64,
}

/// The operations iterations `from..to` of a phase would have issued (whole
/// transfers counted by the sizes the files are drawn with): what a failed
/// connection lost.
fn lost_ops<F>(p: &Personality, phase: &Phase, conn: &Conn<F>, from: u64, to: u64) -> u64 {
    let total_weight: u64 = phase.flows.iter().map(|f| u64::from(f.weight)).sum();
    let mut lost = 0;
    for flow in &phase.flows {
        let sizes = conn.sets.get(flow.fileset).map(|s| &s.sizes);
        for k in from..to {
            let owner = conn.sets.get(flow.fileset).map_or(conn.global, |s| s.owner);
            let size = sizes.map_or(p.record, |s| s.draw(owner, k % p.filesets[flow.fileset].files, 1));
            let per: u64 = flow
                .ops
                .iter()
                .map(|s| match s.amount {
                    Amount::Whole => size.div_ceil(p.record).max(1),
                    Amount::Bytes(n) | Amount::UpTo(n)
                        if matches!(s.op, OpKind::Read | OpKind::Write | OpKind::Append) =>
                    {
                        n.div_ceil(p.record).max(1)
                    }
                    _ => 1,
                })
                .sum();
            lost += per * u64::from(flow.weight);
        }
    }
    lost / total_weight.max(1)
}

/// Connects the connection (first time), makes its folders for `repeat`
/// and the files of its own made before the first phase.
fn prepare<F: Files>(
    p: &Personality,
    spec: ContentSpec,
    repeat: u32,
    dir: &str,
    conn: &mut Conn<F>,
    make: &(dyn Fn() -> io::Result<F> + Sync),
    client: usize,
) -> io::Result<()> {
    if conn.files.is_none() {
        let mut f = make()?;
        f.mkdir(&conn.home)?;
        conn.files = Some(f);
    }
    let files = conn.files.as_mut().expect("just made");
    let dir = format!("{}/{dir}", conn.home);
    files.mkdir(&dir)?;
    conn.sets.clear();
    for (si, set) in p.filesets.iter().enumerate() {
        let sizes = Sizes::new(&set.size, p.seed.wrapping_add(si as u64 * 0x9e37))?;
        if set.shared {
            let slots = fileset_table(set)?;
            conn.sets.push(SetState { sizes, slots, owner: shared_owner(client), rotors: [0; 2] });
            continue;
        }
        let slots = make_files(p, spec, files, &format!("{dir}/{}", set.name), si, &sizes, conn.global)?;
        conn.sets.push(SetState { sizes, slots, owner: conn.global, rotors: [0; 2] });
    }
    conn.repeat = Some(repeat);
    Ok(())
}

/// Makes a client's shared filesets' folders and the files made before the
/// first phase (untimed), in `shared/` of its folder: their claim tables.
fn prepare_shared<F: Files>(
    plan: &RunPlan,
    repeat: u32,
    make: &(dyn Fn() -> io::Result<F> + Sync),
    client: usize,
) -> io::Result<Vec<Option<ClaimTable<Slot>>>> {
    let p = &plan.personality;
    let mut files = make()?;
    let dir = format!("{SHARED_DIR}/{}", plan.repeat_dir(repeat));
    files.mkdir(SHARED_DIR)?;
    files.mkdir(&dir)?;
    let mut tables = Vec::new();
    for (si, set) in p.filesets.iter().enumerate() {
        if !set.shared {
            tables.push(None);
            continue;
        }
        let sizes = Sizes::new(&set.size, p.seed.wrapping_add(si as u64 * 0x9e37))?;
        let base = format!("{dir}/{}", set.name);
        let slots = make_files(p, plan.content, &mut files, &base, si, &sizes, shared_owner(client))?;
        tables.push(Some(ClaimTable::new(slots.into_iter().map(|s| (s.exists, s)))));
    }
    Ok(tables)
}

/// Makes fileset `si`'s folders under `base` and its files made before the
/// first phase: the records of all its files. `owner`: whose files (sizes, stamps).
fn make_files<F: Files>(
    p: &Personality,
    spec: ContentSpec,
    files: &mut F,
    base: &str,
    si: usize,
    sizes: &Sizes,
    owner: usize,
) -> io::Result<Vec<Slot>> {
    let set = &p.filesets[si];
    let mut data = pattern(p.record as usize, p.seed ^ owner as u64);
    let mut content = spec.stamped().then(|| Content::new(spec, 0));
    files.mkdir(base)?;
    let leaves = if set.depth == 0 { 1 } else { set.files.div_ceil(set.width) };
    let mut made = std::collections::HashSet::new();
    for leaf in 0..leaves {
        let mut path = base.to_string();
        for part in tree_parts(set.depth, set.width, leaf) {
            path = format!("{path}/d{part}");
            if made.insert(path.clone()) {
                files.mkdir(&path)?;
            }
        }
    }
    let mut slots = fileset_table(set)?;
    let pre = (set.prealloc * set.files as f64).round() as u64;
    for (i, slot) in slots.iter_mut().enumerate().take(pre as usize) {
        slot.born = 1;
        slot.drawn = whole_units(sizes.draw(owner, i as u64, 1), spec);
        (slot.wgen, slot.wbase) = (1, 1);
        let path = slot_path(base, set.depth, set.width, i as u64, 0);
        let mut file = files.create(&path)?;
        let mut at = 0;
        while at < slot.drawn {
            let n = (slot.drawn - at).min(data.len() as u64) as usize;
            if let Some(c) = content.as_mut() {
                (c.file, c.generation) = (file_id(owner, si, i as u64), 1);
                c.stamp(&mut data[..n], at);
            }
            files.write(&mut file, &data[..n], at)?;
            at += n as u64;
        }
        files.close(file)?;
        slot.exists = true;
        slot.size = slot.drawn;
    }
    Ok(slots)
}

/// A record per file of `set`: a count the user chose, so memory the
/// machine lacks is an error of the connection, never an abort.
fn fileset_table(set: &crate::schema::Fileset) -> io::Result<Vec<Slot>> {
    let files = usize::try_from(set.files).unwrap_or(usize::MAX);
    Ok(iomatrix_core::alloc::try_filled(
        files,
        Slot::default(),
        &format!("fileset `{}`'s table of {} files", set.name, set.files),
    )?)
}

/// With stamped data every size is whole verify blocks (rounded up), so
/// every write lands on block boundaries.
fn whole_units(bytes: u64, spec: ContentSpec) -> u64 {
    if spec.stamped() {
        bytes.div_ceil(UNIT as u64).max(1) * UNIT as u64
    } else {
        bytes
    }
}

/// The stamp's file number of file `slot` of fileset `set` of connection `global`.
fn file_id(global: usize, set: usize, slot: u64) -> u64 {
    (global as u64) << 32 | (set as u64) << 24 | slot
}

/// The folders of leaf folder `leaf`, top first.
fn tree_parts(depth: u32, width: u64, leaf: u64) -> Vec<u64> {
    (0..depth)
        .rev()
        .map(|k| {
            let x = leaf / width.saturating_pow(k);
            if k == depth - 1 {
                x
            } else {
                x % width
            }
        })
        .collect()
}

fn folder_of(base: &str, depth: u32, width: u64, index: u64) -> String {
    let mut path = base.to_string();
    if depth > 0 {
        for part in tree_parts(depth, width, index / width) {
            path = format!("{path}/d{part}");
        }
    }
    path
}

fn slot_path(base: &str, depth: u32, width: u64, index: u64, gen: u32) -> String {
    let folder = folder_of(base, depth, width, index);
    if gen == 0 {
        format!("{folder}/f{index:06}")
    } else {
        format!("{folder}/f{index:06}.{gen}")
    }
}

/// A lock refused because another holds the range: EAGAIN or EACCES
/// (fcntl(2) gives either), or the protocol clients' WouldBlock.
fn is_conflict(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) || e.kind() == io::ErrorKind::WouldBlock
}

/// Incompressible bytes to write.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0; len];
    Generator::seeded(seed).fill(&mut out);
    out
}

/// One connection's phase under way.
struct Run<'a, F: Files> {
    p: &'a Personality,
    rank: usize,
    /// The folder of this repeat's files of the connection's own.
    dir: String,
    /// The folder of this repeat's shared files.
    shared_dir: String,
    files: &'a mut F,
    sets: &'a mut Vec<SetState>,
    /// Per fileset: its claim table when shared.
    tables: &'a [Option<ClaimTable<Slot>>],
    shared: &'a Shared,
    stop: &'a AtomicBool,
    live: &'a Live,
    deadline: Option<Instant>,
    /// Open loop: the next operation's intended start.
    next_arrival: Instant,
    rng: Rng,
    /// (op, latency ns, late).
    samples: Vec<(u8, u64, bool)>,
    /// Per op: (count, bytes, late).
    counts: [(u64, u64, u64); 13],
    /// Per op: executions of it as a step of a flow, as filebench counts its flowops (a whole-file
    /// read is one, however many requests it took).
    flowops: [u64; 13],
    /// (op, kind).
    errors: Vec<(u8, String)>,
    /// Locks refused: another held the range.
    conflicts: u64,
    buf: Vec<u8>,
    data: Vec<u8>,
    /// The end of the last operation.
    last_end: Instant,
    /// Stamped data (`--verify`, `--compressible`): the writer and checker.
    content: Option<Content>,
    spec: ContentSpec,
    /// Steps run on a shared file kept open (`keep_open`), outside any claim: other connections
    /// write it at the same time, so an append takes its place at the end from the file's record in
    /// the claim table (filebench's threads appending to webserver's one log).
    unclaimed: bool,
    /// Its operations over time from the common start (`origin`): each at its end, with the
    /// latency its histogram gets; a write when it changes what is stored ([`changes_data`]).
    series: SeriesRecorder,
    origin: Instant,
}

impl<'a, F: Files> Run<'a, F> {
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The phase's iterations until its count, its deadline, or a halt: each a flow drawn by
    /// weight, then the flow's think time (closed loop). Iterations where no file fit count as `idle`.
    fn iterations(&mut self, phase: &Phase, iterations: Option<u64>, idle: &mut u64) -> Iterated {
        let mut cursors = vec![0u64; phase.flows.len()];
        // Per flow kept open (`keep_open`): its file and the file's index, once opened.
        let mut held: Vec<Option<(u64, F::File)>> = phase.flows.iter().map(|_| None).collect();
        let total_weight: u64 = phase.flows.iter().map(|f| u64::from(f.weight)).sum();
        let mut done = 0u64;
        let mut before_last = 0;
        let ended: Result<(), Halt> = loop {
            if let Some(n) = iterations {
                if done >= n {
                    break Ok(());
                }
            }
            if self.past_deadline() {
                break Ok(());
            }
            let mut w = match phase.order {
                FlowOrder::Random => self.rng.below(total_weight),
                FlowOrder::InTurn => done % total_weight,
            };
            let fi = phase.flows.iter().position(|f| {
                if w < u64::from(f.weight) {
                    true
                } else {
                    w -= u64::from(f.weight);
                    false
                }
            });
            let fi = fi.unwrap_or(0);
            let flow = &phase.flows[fi];
            before_last = self.totals().0;
            match self.iteration(flow, &mut cursors[fi], &mut held[fi]) {
                Ok(true) => {}
                Ok(false) => *idle += 1,
                Err(Halt::Ended) => break Ok(()),
                Err(h) => break Err(h),
            }
            done += 1;
            if flow.rate.is_none() && flow.think_ns > 0 {
                let mut pause = Duration::from_nanos(flow.think_ns);
                if let Some(d) = self.deadline {
                    pause = pause.min(d.saturating_duration_since(Instant::now()));
                }
                if !pause_until(Instant::now() + pause, self.stop) {
                    break Err(Halt::Stopped);
                }
            }
        };
        // Files kept open are closed at the phase's end, untimed and uncounted.
        for (_, file) in held.into_iter().flatten() {
            self.drop_file(Some(file));
        }
        Iterated { ended, done, before_last }
    }

    /// Open loop: the arrivals due before the phase's end that were never issued.
    fn backlog(&mut self, phase: &Phase) -> u64 {
        let mut backlog = 0;
        if let Some(deadline) = self.deadline {
            if phase.flows[0].rate.is_some() {
                let rate = phase.flows.iter().filter_map(|f| f.rate).sum::<f64>() / phase.flows.len() as f64;
                let mut due = self.next_arrival;
                while due < deadline && backlog < 100_000_000 {
                    backlog += 1;
                    due += Duration::from_secs_f64(self.rng.exp() / rate);
                }
            }
        }
        backlog
    }

    /// Runs one iteration of `flow`; false when no file fit (none to open, or none left to create).
    /// `held`: the flow's file kept open (`keep_open`) since its first iteration.
    fn iteration(&mut self, flow: &Flow, cursor: &mut u64, held: &mut Option<(u64, F::File)>) -> Result<bool, Halt> {
        let set_index = flow.fileset;
        if let Some((i, file)) = held.take() {
            // The steps after the open, on the file it opened, outside any claim (of a shared fileset,
            // other connections hold it open too).
            let mut open = Some(file);
            self.unclaimed = self.table(set_index).is_some();
            let steps = self.steps(flow, 1, i, &mut open);
            self.unclaimed = false;
            match (steps, open) {
                (Ok(()), Some(file)) => *held = Some((i, file)),
                (steps, file) => {
                    // Ended there: the next iteration opens the file again.
                    self.drop_file(file);
                    match steps {
                        Err(Halt::Conflict) | Ok(()) => {}
                        Err(h) => return Err(h),
                    }
                }
            }
            return Ok(true);
        }
        let wants_absent = flow.ops[0].op == OpKind::Create;
        let mut picked = self.pick(set_index, wants_absent, flow.pick, cursor);
        if flow.keep_open {
            // A shared file to keep open is busy only while another connection opens it: wait for
            // it, as filebench's pick waits for an idle file, rather than lose the iteration (also
            // when it was released between the failed claim and the look).
            while picked.is_none() && self.table(set_index).is_some_and(|t| t.may_be_claimed(!wants_absent)) {
                if self.stop.load(Ordering::Relaxed) {
                    return Err(Halt::Stopped);
                }
                if self.past_deadline() {
                    return Ok(true);
                }
                std::thread::yield_now();
                picked = self.pick(set_index, wants_absent, flow.pick, cursor);
            }
        }
        let Some(i) = picked else {
            return Ok(false);
        };
        let mut open: Option<F::File> = None;
        if flow.keep_open && self.table(set_index).is_some() {
            return self.open_shared_to_keep(flow, i, &mut open, held);
        }
        let steps = match self.steps(flow, 0, i, &mut open) {
            Err(Halt::Conflict) => Ok(()),
            r => r,
        };
        if flow.keep_open && steps.is_ok() {
            if let Some(file) = open.take() {
                *held = Some((i, file));
            }
        }
        // A file left open by an iteration cut short is closed, untimed and uncounted.
        self.drop_file(open.take());
        if let Some(table) = self.table(set_index) {
            let slot = self.sets[set_index].slots[i as usize];
            table.release(i as usize, slot, slot.exists);
        }
        steps.map(|()| true)
    }

    /// The first iteration of a flow that keeps a shared file open: the file is held busy only
    /// while it is opened, as filebench's fileset pick holds it, and every connection may then hold
    /// it open at once; the rest of the iteration runs as the later ones do, outside the claim.
    fn open_shared_to_keep(
        &mut self,
        flow: &Flow,
        i: u64,
        open: &mut Option<F::File>,
        held: &mut Option<(u64, F::File)>,
    ) -> Result<bool, Halt> {
        let set_index = flow.fileset;
        let opened = self.steps_until(flow, 0, 1, i, open);
        let table = self.table(set_index).expect("a shared fileset");
        // The open changed nothing in the record, and holders' appends may have since: the table's
        // record stays as they left it.
        table.release_unchanged(i as usize, true);
        match opened {
            Ok(()) => {}
            Err(Halt::Conflict) => {
                self.drop_file(open.take());
                return Ok(true);
            }
            Err(h) => {
                self.drop_file(open.take());
                return Err(h);
            }
        }
        match open.take() {
            Some(file) => {
                *held = Some((i, file));
                self.iteration(flow, &mut 0, held)
            }
            // The deadline came before the open.
            None => Ok(true),
        }
    }

    /// The flow's operations from its `from`th on file `i`; `open` holds the file while it is open.
    fn steps(&mut self, flow: &Flow, from: usize, i: u64, open: &mut Option<F::File>) -> Result<(), Halt> {
        self.steps_until(flow, from, flow.ops.len(), i, open)
    }

    /// The flow's operations `from..to` on file `i`.
    fn steps_until(
        &mut self,
        flow: &Flow,
        from: usize,
        to: usize,
        i: u64,
        open: &mut Option<F::File>,
    ) -> Result<(), Halt> {
        let set_index = flow.fileset;
        let set = &self.p.filesets[set_index];
        let base = format!("{}/{}", if set.shared { &self.shared_dir } else { &self.dir }, set.name);
        let owner = self.sets[set_index].owner;
        let (depth, width) = (set.depth, set.width);
        let rate = flow.rate;
        let at = |slot| At { set: set_index, i, owner, slot };
        for step in &flow.ops[from..to] {
            if self.stop.load(Ordering::Relaxed) {
                return Err(Halt::Stopped);
            }
            if self.past_deadline() {
                return Ok(());
            }
            let slot = self.sets[set_index].slots[i as usize];
            let path = slot_path(&base, depth, width, i, slot.gen);
            match step.op {
                OpKind::Create => self.create(step.close, rate, &path, at(slot), open)?,
                OpKind::Open => *open = Some(self.timed(OpKind::Open, rate, &path, |f| f.open(&path))?),
                OpKind::Close => {
                    if let Some(file) = open.take() {
                        self.timed(OpKind::Close, rate, &path, |f| f.close(file))?;
                    }
                }
                OpKind::Fsync => {
                    let file = open.as_mut().expect("checked: open");
                    self.timed(OpKind::Fsync, rate, &path, |f| f.fsync(file))?;
                }
                OpKind::Read => {
                    let (from, len) = match step.amount {
                        Amount::Bytes(n) => {
                            let n = n.min(slot.size);
                            (self.aligned_offset(slot.size.saturating_sub(n)), n)
                        }
                        _ => (0, slot.size),
                    };
                    if let Some(c) = self.content.as_mut() {
                        (c.file, c.generation, c.oldest) = (file_id(owner, set_index, i), slot.wgen, slot.wbase);
                    }
                    let file = open.as_mut().expect("checked: open");
                    self.transfer(OpKind::Read, rate, &path, file, from, len)?;
                }
                OpKind::Write | OpKind::Append => self.write(step, rate, &path, at(slot), open)?,
                OpKind::Stat => {
                    self.timed(OpKind::Stat, rate, &path, |f| f.stat(&path))?;
                }
                OpKind::List => {
                    let folder = folder_of(&base, depth, width, i);
                    self.timed(OpKind::List, rate, &folder, |f| f.list(&folder))?;
                }
                OpKind::Rename => {
                    let to = slot_path(&base, depth, width, i, slot.gen + 1);
                    self.timed(OpKind::Rename, rate, &path, |f| f.rename(&path, &to))?;
                    self.sets[set_index].slots[i as usize].gen += 1;
                }
                OpKind::Delete => {
                    self.timed(OpKind::Delete, rate, &path, |f| f.remove(&path))?;
                    let s = &mut self.sets[set_index].slots[i as usize];
                    (s.exists, s.size) = (false, 0);
                }
                OpKind::Lock | OpKind::Unlock => {
                    let len = match step.amount {
                        Amount::Bytes(n) if n > 0 => n,
                        _ => self.p.record,
                    };
                    let file = open.as_mut().expect("checked: open");
                    let op = step.op;
                    self.timed(op, rate, &path, |f| {
                        if op == OpKind::Lock {
                            f.lock(file, len)
                        } else {
                            f.unlock(file, len)
                        }
                    })?;
                }
            }
            self.flowops[step.op as usize] += 1;
        }
        Ok(())
    }

    /// A create step on the file `at`; `open` holds it unless the step closes it. Inlined always,
    /// as written in [`Run::steps_until`]: a step is on every request's path.
    #[allow(clippy::inline_always, reason = "a step of the per-request loop: it must not add a call per request")]
    #[inline(always)]
    fn create(
        &mut self,
        close: bool,
        rate: Option<f64>,
        path: &str,
        at: At,
        open: &mut Option<F::File>,
    ) -> Result<(), Halt> {
        let file = self.timed(OpKind::Create, rate, path, |f| {
            let file = f.create(path)?;
            if close {
                f.close(file)?;
                Ok(None)
            } else {
                Ok(Some(file))
            }
        })?;
        *open = file;
        let drawn = whole_units(self.sets[at.set].sizes.draw(at.owner, at.i, at.slot.born + 1), self.spec);
        let s = &mut self.sets[at.set].slots[at.i as usize];
        s.born += 1;
        (s.exists, s.size, s.drawn) = (true, 0, drawn);
        // Whatever an earlier file of this name held is stale now.
        s.wbase = s.wgen + 1;
        Ok(())
    }

    /// A write or append step on the file `at`, open in `open`. Inlined always, as written in
    /// [`Run::steps_until`]: a step is on every request's path.
    #[allow(clippy::inline_always, reason = "a step of the per-request loop: it must not add a call per request")]
    #[inline(always)]
    fn write(
        &mut self,
        step: &Step,
        rate: Option<f64>,
        path: &str,
        at: At,
        open: &mut Option<F::File>,
    ) -> Result<(), Halt> {
        let (from, len) = match (step.op, step.amount) {
            (OpKind::Append, Amount::Bytes(n)) => (at.slot.size, whole_units(n, self.spec)),
            // filebench's appendfilerand: a size drawn uniformly from 1..=n bytes.
            (OpKind::Append, Amount::UpTo(n)) => (at.slot.size, whole_units(1 + self.rng.below(n), self.spec)),
            (_, Amount::Bytes(n)) => {
                let n = whole_units(n, self.spec);
                (self.aligned_offset(at.slot.size.saturating_sub(n)), n)
            }
            _ => (0, at.slot.drawn),
        };
        let (from, generation) = match (step.op, self.table(at.set)) {
            (OpKind::Append, Some(table)) if self.unclaimed => table.update_held(at.i as usize, |r| {
                let from = r.size;
                r.size += len;
                r.wgen += 1;
                (from, r.wgen)
            }),
            _ => (from, at.slot.wgen + 1),
        };
        if let Some(c) = self.content.as_mut() {
            (c.file, c.generation) = (file_id(at.owner, at.set, at.i), generation);
        }
        let file = open.as_mut().expect("checked: open");
        self.transfer(step.op, rate, path, file, from, len)?;
        let s = &mut self.sets[at.set].slots[at.i as usize];
        s.wgen = generation;
        if from == 0 && len >= s.size {
            // The whole file is this write's now: older blocks would be stale.
            s.wbase = generation;
        }
        s.size = s.size.max(from + len);
        Ok(())
    }

    /// A record-aligned offset in 0..=max.
    fn aligned_offset(&mut self, max: u64) -> u64 {
        let records = max / self.p.record;
        self.rng.below(records + 1) * self.p.record
    }

    /// Where in the connection's buffer the next request goes: under memsize a random place, as
    /// filebench draws its I/O buffer's offset in 0..=memsize - iosize for every I/O; otherwise
    /// the buffer's start.
    fn buffer_place(&mut self) -> usize {
        match self.p.memsize {
            Some(memsize) => self.rng.below(memsize.saturating_sub(self.p.record) + 1) as usize,
            None => 0,
        }
    }

    /// Reads or writes `len` bytes from `from`, one timed request per record.
    fn transfer(
        &mut self,
        op: OpKind,
        rate: Option<f64>,
        path: &str,
        file: &mut F::File,
        from: u64,
        len: u64,
    ) -> Result<(), Halt> {
        let record = self.p.record;
        let mut at = 0;
        while at < len {
            if self.stop.load(Ordering::Relaxed) {
                return Err(Halt::Stopped);
            }
            let n = (len - at).min(record) as usize;
            let offset = from + at;
            let place = self.buffer_place();
            if op == OpKind::Read {
                let (mut buf, shared) = match self.p.memsize {
                    Some(_) => (std::mem::take(&mut self.data), true),
                    None => (std::mem::take(&mut self.buf), false),
                };
                let got =
                    self.timed_bytes(op, rate, path, n as u64, |f| f.read(file, &mut buf[place..place + n], offset));
                if let (Some(c), Ok(got)) = (self.content.as_mut(), &got) {
                    c.check(&buf[place..place + *got], offset);
                }
                if shared {
                    self.data = buf;
                } else {
                    self.buf = buf;
                }
                if got? < n {
                    let message = format!(
                        "connection {}: {path} ends before byte {} of the {len} read",
                        self.rank,
                        offset + n as u64
                    );
                    self.errors.push((op as u8, "size mismatch".into()));
                    return Err(Halt::Failed("size mismatch".into(), message));
                }
            } else {
                let mut data = std::mem::take(&mut self.data);
                if let Some(c) = self.content.as_mut() {
                    c.stamp(&mut data[place..place + n], offset);
                }
                let r = self.timed_bytes(op, rate, path, n as u64, |f| f.write(file, &data[place..place + n], offset));
                self.data = data;
                r?;
            }
            self.counts[op as usize].1 += n as u64;
            self.live.bytes.fetch_add(n as u64, Ordering::Relaxed);
            at += n as u64;
        }
        Ok(())
    }

    /// Times one operation (open loop: from its intended start) and counts it or its failure.
    fn timed<T>(
        &mut self,
        op: OpKind,
        rate: Option<f64>,
        path: &str,
        call: impl FnOnce(&mut F) -> io::Result<T>,
    ) -> Result<T, Halt> {
        self.timed_bytes(op, rate, path, 0, call)
    }

    /// [`Self::timed`] of an operation that moves `bytes` (a read's or write's request).
    #[inline]
    fn timed_bytes<T>(
        &mut self,
        op: OpKind,
        rate: Option<f64>,
        path: &str,
        bytes: u64,
        call: impl FnOnce(&mut F) -> io::Result<T>,
    ) -> Result<T, Halt> {
        let intended = self.arrival(rate)?;
        let start = Instant::now();
        let r = call(self.files);
        let end = Instant::now();
        self.last_end = end;
        match r {
            Ok(v) => {
                let from = intended.unwrap_or(start);
                let late = intended.is_some_and(|i| start.saturating_duration_since(i).as_nanos() as u64 > LATE_NS);
                let ns = end.saturating_duration_since(from).as_nanos() as u64;
                let at = end.saturating_duration_since(self.origin).as_nanos() as u64;
                self.series.record(at, ns, bytes, changes_data(op));
                self.record(op, ns, late);
                Ok(v)
            }
            Err(e) if op == OpKind::Lock && is_conflict(&e) => {
                self.conflicts += 1;
                Err(Halt::Conflict)
            }
            Err(e) => {
                let kind = error_kind(&e);
                self.errors.push((op as u8, kind.clone()));
                Err(Halt::Failed(kind, format!("connection {}: {op} {path}: {e}", self.rank)))
            }
        }
    }

    /// The next operation's intended start (open loop), after waiting for it.
    fn arrival(&mut self, rate: Option<f64>) -> Result<Option<Instant>, Halt> {
        let Some(rate) = rate else { return Ok(None) };
        let intended = self.next_arrival;
        if self.deadline.is_some_and(|d| intended >= d) {
            return Err(Halt::Ended);
        }
        self.next_arrival += Duration::from_secs_f64(self.rng.exp() / rate);
        if !pause_until(intended, self.stop) {
            return Err(Halt::Stopped);
        }
        Ok(Some(intended))
    }

    fn record(&mut self, op: OpKind, ns: u64, late: bool) {
        let c = &mut self.counts[op as usize];
        c.0 += 1;
        c.2 += u64::from(late);
        self.samples.push((op as u8, ns, late));
        self.live.ops.fetch_add(1, Ordering::Relaxed);
        if self.samples.len() >= SAMPLE_BUFFER {
            self.flush_samples();
        }
    }

    fn flush_samples(&mut self) {
        let mut ops = self.shared.ops.lock().unwrap_or_else(|e| e.into_inner());
        for &(op, ns, _) in &self.samples {
            ops[op as usize].latency.record(ns);
        }
        self.samples.clear();
    }

    /// Adds this connection's counts and samples to the client's figures.
    fn flush(&mut self) {
        self.flush_samples();
        let mut ops = self.shared.ops.lock().unwrap_or_else(|e| e.into_inner());
        for (k, &(count, bytes, late)) in self.counts.iter().enumerate() {
            ops[k].flowops += self.flowops[k];
            ops[k].count += count;
            ops[k].bytes += bytes;
            ops[k].late += late;
        }
        for (op, kind) in &self.errors {
            *ops[*op as usize].errors_by_kind.entry(kind.clone()).or_default() += 1;
        }
        ops[OpKind::Lock as usize].conflicts += self.conflicts;
    }

    fn totals(&self) -> (u64, u64, u64) {
        let ops = self.counts.iter().map(|c| c.0).sum();
        let bytes = self.counts.iter().map(|c| c.1).sum();
        (ops, bytes, self.errors.len() as u64)
    }

    /// Closes a file left open when a phase ends mid-iteration (untimed, not counted).
    fn drop_file(&mut self, file: Option<F::File>) {
        if let Some(f) = file {
            let _ = self.files.close(f);
        }
    }

    /// Fileset `set`'s claim table, when shared.
    fn table(&self, set: usize) -> Option<&'a ClaimTable<Slot>> {
        let tables: &'a [Option<ClaimTable<Slot>>] = self.tables;
        tables.get(set).and_then(Option::as_ref)
    }

    /// Claims a file of a shared fileset that is present (or absent), for
    /// one iteration: its index and record. None when every such file is
    /// taken by another connection or there is none.
    fn claim(&mut self, table: &ClaimTable<Slot>, present: bool, pick: Pick, cursor: &mut u64) -> Option<(u64, Slot)> {
        let n = table.len() as u64;
        let take = |i: u64| {
            if table.looks(i as usize, present) {
                table.claim(i as usize, present).map(|r| (i, r))
            } else {
                None
            }
        };
        match pick {
            // The claim table keeps the rotation (it is the fileset's, over every connection).
            Pick::Next | Pick::Rotation => {
                let found = (0..n).map(|k| (*cursor + k) % n).find_map(take)?;
                *cursor = found.0 + 1;
                Some(found)
            }
            Pick::Random => {
                for _ in 0..32 {
                    if let Some(found) = take(self.rng.below(n)) {
                        return Some(found);
                    }
                }
                let from = self.rng.below(n);
                (0..n).map(|k| (from + k) % n).find_map(take)
            }
        }
    }

    /// A file for an iteration: one that does not exist (a create) or one that does.
    fn pick(&mut self, set: usize, absent: bool, pick: Pick, cursor: &mut u64) -> Option<u64> {
        if let Some(table) = self.table(set) {
            let (i, record) = match pick {
                Pick::Rotation => table.claim_in_rotation(!absent).map(|(i, r)| (i as u64, r))?,
                _ => self.claim(table, !absent, pick, cursor)?,
            };
            self.sets[set].slots[i as usize] = record;
            return Some(i);
        }
        let state = &mut self.sets[set];
        let slots = &state.slots;
        let n = slots.len() as u64;
        let fits = |i: u64| slots[i as usize].exists != absent;
        match pick {
            Pick::Rotation => {
                let rotor = &mut state.rotors[usize::from(!absent)];
                let found = (0..n).map(|k| (*rotor + k) % n).find(|&i| fits(i))?;
                *rotor = found + 1;
                Some(found)
            }
            Pick::Next => {
                let found = (0..n).map(|k| (*cursor + k) % n).find(|&i| fits(i))?;
                *cursor = found + 1;
                Some(found)
            }
            Pick::Random => {
                for _ in 0..32 {
                    let i = self.rng.below(n);
                    if fits(i) {
                        return Some(i);
                    }
                }
                let from = self.rng.below(n);
                (0..n).map(|k| (from + k) % n).find(|&i| fits(i))
            }
        }
    }
}

/// Where a personality's connections of client 0 keep their files locally (for tests).
pub fn client_dir(workdir: &Path, rank: usize) -> PathBuf {
    workdir.join(format!("client-{rank}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_coord::{Hooks, OnClientError};
    use std::os::fd::OwnedFd;

    fn run(plan: &RunPlan, clients: usize) -> (tempfile::TempDir, Vec<(CellFigures, Vec<ClientCell>)>, Ending) {
        let dir = tempfile::tempdir().unwrap();
        let (cells, ending) = run_in(plan, clients, dir.path());
        (dir, cells, ending)
    }

    fn run_in(plan: &RunPlan, clients: usize, dir: &Path) -> (Vec<(CellFigures, Vec<ClientCell>)>, Ending) {
        let stop = AtomicBool::new(false);
        let hooks = Hooks::default();
        let setup = Setup {
            cells: plan.cells(),
            workdir: Some(dir),
            hooks: &hooks,
            on_error: OnClientError::Abort,
            stop: &stop,
        };
        let lives: Vec<Live> = (0..clients).map(|_| Live::new()).collect();
        let mut cells = Vec::new();
        let steering = Steering::default();
        let both = (&lives[..], &steering);
        let (done, ending) = execute_clients(plan, &Group::Local(clients), &setup, &Place::Local, both, |m, c, _| {
            cells.push((m.clone(), c.to_vec()));
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(done, cells.len());
        (cells, ending)
    }

    fn builtin(name: &str) -> RunPlan {
        let mut p = crate::builtin::get(name).unwrap().unwrap();
        let s = p.scales["small"].clone();
        p.apply(&s);
        RunPlan::new(p, name)
    }

    #[test]
    fn netware_small_writes_then_reads_every_file_exactly() {
        let mut plan = builtin("netware-2008");
        plan.personality.connections = 3;
        plan.personality.filesets[0].files = 12;
        let (dir, cells, ending) = run(&plan, 2);
        assert_eq!(ending, Ending::Completed);
        assert_eq!(cells.len(), 2);
        // 12 files cycling 4k..2m: 4k+8k+...+2m (4092k) + 4k + 8k.
        let per_conn: u64 = (4092 + 12) * 1024;
        let records: u64 = per_conn / 4096;
        for (m, clients) in &cells {
            assert_eq!(m.connections.len(), 6);
            assert_eq!(clients.len(), 2);
            assert_eq!(m.bytes(), 6 * per_conn);
            let count = |name: &str| m.ops.iter().find(|o| o.name == name).map_or(0, |o| o.count);
            assert_eq!(count("open"), 6 * 12);
            assert_eq!(count("close"), 6 * 12);
            if m.phase == "write" {
                assert_eq!((count("create"), count("write")), (72, 6 * records));
            } else {
                assert_eq!((count("create"), count("read")), (0, 6 * records));
            }
            for o in &m.ops {
                assert_eq!(o.latency.count(), o.count, "{}", o.name);
            }
            let f = m.fairness().unwrap();
            assert!((f.jain - 1.0).abs() < 1e-9, "{f:?}");
            assert_eq!((m.lost_ops, m.backlog, m.failed()), (0, 0, 0));
        }
        let f = dir.path().join("client-1/conn-0002/r0/volume/f000011");
        assert_eq!(std::fs::metadata(f).unwrap().len(), 8192);
    }

    #[test]
    fn every_builtin_runs_locally_at_small_scale() {
        for name in crate::builtin::names() {
            let mut plan = builtin(name);
            for p in &mut plan.personality.phases {
                if let PhaseEnd::Duration { ns } = &mut p.end {
                    *ns = 300_000_000;
                }
            }
            plan.personality.connections = 2;
            let (_dir, cells, ending) = run(&plan, 1);
            assert_eq!(ending, Ending::Completed, "{name}");
            for (m, _) in &cells {
                assert!(m.ops_done() > 0, "{name}: {m:?}");
                assert_eq!(m.failed(), 0, "{name}: {:?}", m.connections);
                assert!(m.ops.iter().all(|o| o.errors() == 0), "{name}");
            }
        }
    }

    /// A shared spool: 6 connections create, append+fsync, read (verified),
    /// rename and delete in one flat folder of the client's.
    const SHARED: &str = "version = 1\nname = \"s\"\nconnections = 6\nrecord = \"4k\"\n[[fileset]]\nname = \"spool\"\nfiles = 24\nshared = true\nprealloc = 0.5\nsize = { dist = \"uniform\", min = \"4k\", max = \"16k\" }\n[[phase]]\nname = \"run\"\nduration = \"600ms\"\n[[phase.flow]]\nname = \"del\"\nops = [{ op = \"delete\" }]\n[[phase.flow]]\nname = \"new\"\nops = [{ op = \"create\" }, { op = \"append\", size = \"4k\" }, { op = \"fsync\" }, { op = \"close\" }]\n[[phase.flow]]\nname = \"read\"\nops = [{ op = \"open\" }, { op = \"read\" }, { op = \"append\", size = \"4k\" }, { op = \"lock\" }, { op = \"unlock\" }, { op = \"close\" }]\n[[phase.flow]]\nname = \"mv\"\nops = [{ op = \"rename\" }, { op = \"stat\" }]\n";

    #[test]
    fn a_shared_fileset_is_one_folder_per_client_claimed_file_by_file() {
        let p = crate::schema::parse(SHARED, Path::new(".")).unwrap();
        let content = ContentSpec { run: 7, verify: true, compressible: 0, unique_blocks: false };
        let plan = RunPlan { content, ..RunPlan::new(p, "t") };
        let (dir, cells, ending) = run(&plan, 2);
        assert_eq!(ending, Ending::Completed);
        let (m, clients) = &cells[0];
        assert!(m.ops.iter().all(|o| o.errors() == 0), "{:?}", m.ops);
        assert_eq!(m.failed(), 0, "{:?}", m.connections);
        let t = m.verify.as_ref().unwrap();
        assert!(t.checked_blocks > 0);
        assert_eq!((t.wrong_data, t.wrong_offset, t.stale, t.torn), (0, 0, 0, 0), "{t:?}");
        for c in clients {
            let count = |name: &str| c.figures.ops.iter().find(|o| o.name == name).map_or(0, |o| o.count);
            assert!(count("create") > 0 && count("delete") > 0 && count("rename") > 0, "{:?}", c.figures.ops);
            let spool = dir.path().join(format!("client-{}/shared/r0/spool", c.rank));
            let left = std::fs::read_dir(&spool).unwrap().count() as u64;
            assert_eq!(left, 12 + count("create") - count("delete"), "client {}", c.rank);
            assert!(left <= 24);
            for k in 0..6 {
                let own = dir.path().join(format!("client-{}/conn-{k:04}/r0", c.rank));
                assert_eq!(std::fs::read_dir(&own).unwrap().count(), 0, "the connection's own folder holds nothing");
            }
        }
    }

    /// A lock held from outside the run on one of two shared files: the
    /// connections' locks of it are refused, counted as conflicts (not
    /// errors), and they go on with the other file.
    #[test]
    fn a_lock_held_elsewhere_is_a_conflict_counted_and_the_connection_goes_on() {
        let text = "version = 1\nname = \"l\"\nconnections = 2\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 2\nshared = true\nsize = { dist = \"fixed\", size = \"8k\" }\n[[phase]]\nname = \"run\"\nduration = \"600ms\"\n[[phase.flow]]\nname = \"l\"\nops = [{ op = \"open\" }, { op = \"lock\", size = \"8k\" }, { op = \"read\" }, { op = \"unlock\", size = \"8k\" }, { op = \"close\" }]\n";
        let p = crate::schema::parse(text, Path::new(".")).unwrap();
        let plan = RunPlan::new(p, "t");
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("client-0/shared/r0/f/f000000");
        let done = AtomicBool::new(false);
        let held = AtomicBool::new(false);
        let (cells, ending) = std::thread::scope(|s| {
            s.spawn(|| {
                // Made before the phase; locked (an OFD lock of our own) as soon as no connection holds it.
                let until = Instant::now() + Duration::from_secs(20);
                let mut file = None;
                while !done.load(Ordering::SeqCst) && Instant::now() < until {
                    if file.is_none() {
                        file = std::fs::OpenOptions::new().read(true).write(true).open(&first).ok().map(OwnedFd::from);
                    }
                    if let Some(fd) = &file {
                        if !held.load(Ordering::SeqCst)
                            && crate::files::ofd_lock(fd, libc::F_WRLCK as libc::c_short, 8192).is_ok()
                        {
                            held.store(true, Ordering::SeqCst);
                        }
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            });
            let r = run_in(&plan, 1, dir.path());
            done.store(true, Ordering::SeqCst);
            r
        });
        assert_eq!(ending, Ending::Completed);
        assert!(held.load(Ordering::SeqCst), "the outside lock was taken");
        let m = &cells[0].0;
        let lock = m.ops.iter().find(|o| o.name == "lock").unwrap();
        assert!(lock.conflicts > 0, "{lock:?}");
        assert!(lock.count > 0, "the other file is still locked and read");
        assert_eq!((m.failed(), m.ops.iter().map(|o| o.errors()).sum::<u64>()), (0, 0), "{:?}", m.connections);
        let unlock = m.ops.iter().find(|o| o.name == "unlock").unwrap();
        // Every lock taken is released (but where the phase ended between the two); a refused one needs none.
        assert!(unlock.count <= lock.count && unlock.count + 2 >= lock.count, "{lock:?} {unlock:?}");
    }

    #[test]
    fn open_loop_counts_from_the_intended_start_and_never_drops_arrivals() {
        let text = "version = 1\nname = \"o\"\nconnections = 2\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 8\nsize = { dist = \"fixed\", size = \"4k\" }\n[[phase]]\nname = \"run\"\nduration = \"500ms\"\n[[phase.flow]]\nname = \"s\"\nrate = 200.0\nops = [{ op = \"stat\" }]\n";
        let p = crate::schema::parse(text, Path::new(".")).unwrap();
        let plan = RunPlan::new(p, "t");
        let (_dir, cells, _) = run(&plan, 1);
        let m = &cells[0].0;
        let stats = m.ops.iter().find(|o| o.name == "stat").unwrap();
        // 2 connections x 200/s x 0.5 s: about 200 arrivals (Poisson), all issued or counted as backlog.
        let arrivals = stats.count + m.backlog;
        assert!((120..=300).contains(&arrivals), "{arrivals}");
        assert!(m.backlog <= 4, "a local stat keeps up: {}", m.backlog);
    }
}
