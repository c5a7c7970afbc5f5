//! Runs access specs: per client, a loop that keeps `queue_depth` requests
//! in flight, timestamps each at submission and completion, and records the
//! latency in HDR histograms (reads and writes apart) and a per-second series.

use crate::bssplit::SizeCounts;
use crate::depths::QueueDepths;
use crate::plan::{AccessCell, AccessPlan, Interleave, Limit, Prepare, SharedFile, LAY_OUT_PIECE};
use crate::split::SubmitSplit;
use crate::steady::{SteadyFeed, SteadyWatch};
use crate::target::{DepthSearch, Queue, TargetOutcome, MAX_WINDOWS};
use iomatrix_backend::{
    open_queued, Completion, Connect, OneAtATime, OpenHow, Place, QueuedFile, RemoteFile, RemoteFs, Request,
    SessionPool, Submitted,
};
use iomatrix_coord::{lead, ClientFailure, ClientWork, Ending, Gathered, Group, Setup, Start, StartTimes};
use iomatrix_core::figures::CachedAtStart;
use iomatrix_core::CurveLoad;
use iomatrix_harness::curve::{CurveFigures, Judge};
use iomatrix_random::{Arrival, Arrivals, Generator, Places, LATE_NS};
use iomatrix_stats::{ClientSeries, Latency, Measured, SeriesRecorder, Span};
use iomatrix_verify::{Content, Tally};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Requests and bytes completed within one second of a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Second {
    /// Requests completed in that second.
    pub ops: u64,
    /// Bytes they moved.
    pub bytes: u64,
}

/// One client's figures for one cell; times count from the cell's common start.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AccessFigures {
    /// The client's rank (0-based).
    pub rank: usize,
    /// Its reads' latencies.
    pub reads: Latency,
    /// Its writes' latencies.
    pub writes: Latency,
    /// Bytes it read.
    pub read_bytes: u64,
    /// Bytes it wrote.
    pub write_bytes: u64,
    /// When its timed loop started and ended, and its CPU time.
    pub measured: Measured,
    /// Its requests and bytes, second by second.
    pub series: Vec<Second>,
    /// Its figures over time, interval by interval (`--interval`).
    #[serde(default)]
    pub intervals: ClientSeries,
    /// How this client's requests were issued (the queued file's own account,
    /// e.g. "io_uring depth 8, ..." or "up to 8 requests in flight at once on one SMB session").
    #[serde(default)]
    pub issued: String,
    /// Blocks checked and mismatches found (`--verify`), and the time
    /// stamping and checking took inside the timed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Tally>,
    /// How much of this client's file the page cache held when the cell began (after
    /// `--prepare`'s drop); None where the client could not look (a server's file) or shares
    /// a device that rank 0 looks at for everyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// The CPU this client's thread was kept on in this cell (`--pin shallow` at its depth, or
    /// `spread`); None where the kernel placed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// Its queued requests' submission and completion latencies apart (fio's slat and clat);
    /// None where every request was issued and completed by one call (psync, sync, mmap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Box<SubmitSplit>>,
    /// The queue's depth as requests went in, and the requests per round of submissions and
    /// per reap (fio's IO depths, submit and complete).
    #[serde(default)]
    pub depths: QueueDepths,
    /// Open loop: what this client was offered, and its late requests and backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenLoop>,
    /// The cell is a point of a curve that its bound ended before it (`--stop-curve`): the client
    /// left it out, and so is it from the run.
    #[serde(default)]
    pub skipped: bool,
    /// Under `--latency-target`: the depth this client's search found and how it went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<TargetOutcome>,
    /// Under `--steady-state` with MPI ranks, which judge apart: this rank's own verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<iomatrix_stats::steady::SteadyVerdict>,
    /// Under `--bssplit`: the requests it completed of each size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizeCounts>,
}

/// An open-loop cell's load: requests arriving at intended times at a rate (`--arrivals`), each
/// timed from its intended start.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct OpenLoop {
    /// How the arrivals were spaced.
    pub arrivals: Arrival,
    /// Requests a second offered (of a client, or of all clients once merged).
    pub offered_per_sec: f64,
    /// Requests issued more than 1 ms after their intended start (a full queue, a slow issue):
    /// still issued, and timed from their intended start.
    pub late: u64,
    /// Arrivals due before the cell's end that were never issued.
    pub backlog: u64,
}

impl OpenLoop {
    /// The clients' loads together: their rates, late requests and backlogs added.
    pub fn sum<'a>(each: impl Iterator<Item = &'a OpenLoop>) -> Option<OpenLoop> {
        each.copied().reduce(|a, b| OpenLoop {
            arrivals: a.arrivals,
            offered_per_sec: a.offered_per_sec + b.offered_per_sec,
            late: a.late + b.late,
            backlog: a.backlog + b.backlog,
        })
    }
}

impl AccessFigures {
    /// Requests it completed, reads and writes.
    pub fn ops(&self) -> u64 {
        self.reads.count() + self.writes.count()
    }
    /// Bytes it moved, read and written.
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }
}

/// A cell merged over its clients: histograms added exactly, series summed
/// second by second, rates over the common wall time.
#[derive(Debug, Clone)]
pub struct AccessResult {
    /// Which cell.
    pub cell: AccessCell,
    /// The clients that finished, by rank.
    pub clients: Vec<AccessFigures>,
    /// Clients that failed this cell (`--on-client-error continue`): their figures are lost.
    pub failures: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    pub starts: Vec<StartTimes>,
    /// All clients' read latencies, merged exactly.
    pub reads: Latency,
    /// All clients' write latencies, merged exactly.
    pub writes: Latency,
    /// Bytes read by all clients.
    pub read_bytes: u64,
    /// Bytes written by all clients.
    pub write_bytes: u64,
    /// From the common start to the last client's end (ns).
    pub wall_ns: u64,
    /// All clients' CPU time in user mode (ns).
    pub user_ns: u64,
    /// All clients' CPU time in the kernel (ns).
    pub sys_ns: u64,
    /// All requests over the wall time, per second.
    pub iops: f64,
    /// All bytes over the wall time, in MiB/s.
    pub mib_per_sec: f64,
    /// The clients' CPU over the wall time, in % of one core.
    pub cpu_percent: f64,
    /// Requests and bytes of every second, summed over the clients.
    pub series: Vec<Second>,
    /// The figures over time, merged over the clients interval by interval.
    pub intervals: iomatrix_stats::Series,
    /// All clients' verification tallies, when the plan stamps its data.
    pub verify: Option<Tally>,
    /// The clients' files in the page cache when the cell began, summed over those that looked.
    pub cached_at_start: Option<CachedAtStart>,
    /// The clients' submission and completion latencies apart, where their requests were queued.
    pub split: Option<SubmitSplit>,
    /// Open loop: the clients' offered rates, late requests and backlogs, added.
    pub open: Option<OpenLoop>,
    /// A point of a curve: the curve's figures so far (set at the leader as the point is stored).
    pub curve: Option<CurveFigures>,
    /// Under `--latency-target`: each client's search, by rank.
    pub latency_target: Vec<TargetOutcome>,
    /// What `--steady-state` found: whether the rule was met (the cell then ended early) and the
    /// window it judged; None without the rule, and under MPI (see `steady_by_rank`).
    pub steady: Option<iomatrix_stats::steady::SteadyVerdict>,
    /// Under MPI each rank judges its own figures, as fio's jobs without group_reporting: each
    /// rank's verdict, by rank; empty with threads (judged together: `steady`).
    pub steady_by_rank: Vec<iomatrix_stats::steady::SteadyVerdict>,
    /// The clients' queue depths and requests per submission and per reap, added.
    pub depths: QueueDepths,
    /// Under `--bssplit`: the requests of each size, added over the clients.
    pub sizes: Option<SizeCounts>,
}

impl AccessResult {
    fn merge(cell: AccessCell, gathered: Gathered<AccessFigures>) -> AccessResult {
        let Gathered { figures: clients, failures, starts } = gathered;
        let mut reads = Latency::new();
        let mut writes = Latency::new();
        let mut series: Vec<Second> = Vec::new();
        for c in &clients {
            reads.merge(&c.reads);
            writes.merge(&c.writes);
            if series.len() < c.series.len() {
                series.resize(c.series.len(), Second::default());
            }
            for (total, s) in series.iter_mut().zip(&c.series) {
                total.ops += s.ops;
                total.bytes += s.bytes;
            }
        }
        let start = clients.iter().map(|c| c.measured.start_ns).min().unwrap_or(0);
        let end = clients.iter().map(|c| c.measured.end_ns).max().unwrap_or(0);
        let wall_ns = end.saturating_sub(start);
        let secs = wall_ns as f64 / 1e9;
        let read_bytes: u64 = clients.iter().map(|c| c.read_bytes).sum();
        let write_bytes: u64 = clients.iter().map(|c| c.write_bytes).sum();
        let ops = reads.count() + writes.count();
        let user_ns: u64 = clients.iter().map(|c| c.measured.cpu.user_ns).sum();
        let sys_ns: u64 = clients.iter().map(|c| c.measured.cpu.sys_ns).sum();
        let rate = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let cached_at_start = CachedAtStart::sum(clients.iter().filter_map(|c| c.cached_at_start));
        let intervals = iomatrix_stats::Series::merge(&clients.iter().map(|c| &c.intervals).collect::<Vec<_>>());
        AccessResult {
            intervals,
            open: OpenLoop::sum(clients.iter().filter_map(|c| c.open.as_ref())),
            curve: None,
            split: SubmitSplit::merged(clients.iter().filter_map(|c| c.split.as_deref())),
            latency_target: clients.iter().filter_map(|c| c.latency_target.clone()).collect(),
            steady: None,
            steady_by_rank: clients.iter().filter_map(|c| c.steady.clone()).collect(),
            depths: QueueDepths::sum(clients.iter().map(|c| &c.depths)),
            sizes: clients.iter().filter_map(|c| c.sizes.as_ref()).fold(None, |sum: Option<SizeCounts>, c| {
                let mut sum = sum.unwrap_or_default();
                sum.merge(c);
                Some(sum)
            }),
            verify: Tally::sum(clients.iter().filter_map(|c| c.verify.as_ref())),
            cached_at_start,
            cell,
            iops: rate(ops as f64),
            mib_per_sec: rate((read_bytes + write_bytes) as f64 / (1024.0 * 1024.0)),
            cpu_percent: iomatrix_stats::cpu_percent(user_ns + sys_ns, wall_ns),
            clients,
            failures,
            starts,
            reads,
            writes,
            read_bytes,
            write_bytes,
            wall_ns,
            user_ns,
            sys_ns,
            series,
        }
    }

    /// Requests completed by all clients.
    pub fn ops(&self) -> u64 {
        self.reads.count() + self.writes.count()
    }

    /// IOzone's aggregate: the sum of the clients' own rates, in MiB/s.
    pub fn mib_per_sec_sum(&self) -> f64 {
        self.clients.iter().map(AccessFigures::mib_per_sec).sum()
    }

    /// The client with the fewest requests per second, if more than one finished.
    pub fn slowest(&self) -> Option<&AccessFigures> {
        iomatrix_harness::clients::slowest(&self.clients, AccessFigures::iops)
    }

    /// Every request's latency, reads and writes together.
    pub fn latency(&self) -> Latency {
        let mut all = self.reads.clone();
        all.merge(&self.writes);
        all
    }

    /// Whether every client left the cell out (a curve's point after its bound ended it).
    fn left_out(&self) -> bool {
        !self.clients.is_empty() && self.clients.iter().all(|c| c.skipped)
    }
}

impl AccessFigures {
    /// Its own rate: its requests over its own wall time, per second (0 for no time).
    pub fn iops(&self) -> f64 {
        let secs = self.measured.wall().as_secs_f64();
        if secs > 0.0 {
            self.ops() as f64 / secs
        } else {
            0.0
        }
    }

    /// Its own rate: its bytes over its own wall time, in MiB/s (0 for no time).
    pub fn mib_per_sec(&self) -> f64 {
        let secs = self.measured.wall().as_secs_f64();
        if secs > 0.0 {
            self.bytes() as f64 / (1024.0 * 1024.0) / secs
        } else {
            0.0
        }
    }
}

/// What the clients publish once a second for a live display: the last
/// second's requests and bytes per client and its p99 latency.
/// It also carries, from the leader to the clients of this process, the cells a curve's bound
/// ended before they ran (`--stop-curve`; other MPI ranks hear them with the leader's word).
pub struct Live {
    clients: Vec<LiveClient>,
    cell: AtomicUsize,
    left_out: Mutex<BTreeSet<usize>>,
}

#[derive(Default)]
struct LiveClient {
    ops: AtomicU64,
    bytes: AtomicU64,
    p99_ns: AtomicU64,
}

impl Live {
    /// A display for `clients` clients, all at zero.
    pub fn new(clients: usize) -> Live {
        Live {
            clients: (0..clients).map(|_| LiveClient::default()).collect(),
            cell: AtomicUsize::new(0),
            left_out: Mutex::new(BTreeSet::new()),
        }
    }

    /// The cells the leader left out: the rest of a curve its bound ended.
    pub fn cells_left_out(&self) -> usize {
        self.left_out.lock().map_or(0, |l| l.len())
    }

    fn leave_out(&self, cells: impl Iterator<Item = usize>) {
        if let Ok(mut l) = self.left_out.lock() {
            l.extend(cells);
        }
    }

    fn is_left_out(&self, cell: usize) -> bool {
        self.left_out.lock().is_ok_and(|l| l.contains(&cell))
    }
    /// (cell index, requests/s, bytes/s, worst client's p99 in ns) over the last second.
    pub fn snapshot(&self) -> (usize, u64, u64, u64) {
        let ops = self.clients.iter().map(|c| c.ops.load(Ordering::Relaxed)).sum();
        let bytes = self.clients.iter().map(|c| c.bytes.load(Ordering::Relaxed)).sum();
        let p99 = self.clients.iter().map(|c| c.p99_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
        (self.cell.load(Ordering::Relaxed), ops, bytes, p99)
    }
    /// The client with the fewest requests in the last second, and that
    /// count; None with a single client.
    pub fn slowest(&self) -> Option<(usize, u64)> {
        if self.clients.len() < 2 {
            return None;
        }
        self.clients.iter().map(|c| c.ops.load(Ordering::Relaxed)).enumerate().min_by_key(|(_, ops)| *ops)
    }
    fn publish(&self, rank: usize, ops: u64, bytes: u64, p99_ns: u64) {
        if let Some(c) = self.clients.get(rank) {
            c.ops.store(ops, Ordering::Relaxed);
            c.bytes.store(bytes, Ordering::Relaxed);
            c.p99_ns.store(p99_ns, Ordering::Relaxed);
        }
    }
    /// Client `rank` begins cell `index`: this process's cell is that one, and the client's last
    /// second is cleared. Every client calls it: under MPI each rank's process has a `Live` of its
    /// own, whose one client is not rank 0 (when only rank 0 set the cell, the other ranks went on
    /// sending cell 0's index, and rank 0's live line summed 1 of N ranks after the first cell).
    fn start_cell(&self, rank: usize, index: usize) {
        self.cell.store(index, Ordering::Relaxed);
        if let Some(c) = self.clients.get(rank) {
            c.ops.store(0, Ordering::Relaxed);
            c.bytes.store(0, Ordering::Relaxed);
            c.p99_ns.store(0, Ordering::Relaxed);
        }
    }
}

/// Runs `plan` on every client of `group`: each client's file is
/// `client-N/access.dat` in the working folder of `setup`, or every client
/// works on the plan's raw device (`setup.workdir` is then None), or on the
/// one shared file `access-shared.dat` in the working folder (`--shared-file`). Returns, at
/// the leader, how many cells `on_cell` accepted and how the run ended.
pub fn execute<E: std::fmt::Display>(
    plan: &AccessPlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    live: &Live,
    on_cell: impl FnMut(&AccessResult) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    execute_at(plan, group, setup, &Place::Local, live, on_cell)
}

/// [`execute`] with the clients' files at `place`.
pub fn execute_at<E: std::fmt::Display>(
    plan: &AccessPlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    live: &Live,
    mut on_cell: impl FnMut(&AccessResult) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    // Calibrated now, untimed, rather than inside the first cell.
    latency_clock();
    if plan.device.is_none() && setup.workdir.is_none() && matches!(place, Place::Local) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "access specs on files need a working folder",
        ));
    }
    let shared = shared_file_path(plan, setup, place)?;
    let cells = plan.cells();
    let on_host: Vec<usize> = (0..group.size()).map(|rank| group.place_on_host(rank)).collect();
    // Read here: an MPI group is not shared with the clients' threads.
    let clients = group.size();
    let mut judge = Judge::default();
    // MPI ranks share no counts while a cell runs: each judges its own client (one a rank).
    let steady = match group {
        Group::Local(_) => SteadyWatch::new(plan.steady, plan.series_interval_ns, clients),
        _ => SteadyWatch::apart(plan.steady, plan.series_interval_ns),
    };
    // Jobs at once: each job's clients run its one cell (index 0) of its own plan, all in one
    // cell of the coordinator's, started at one barrier.
    let jobs: Vec<(&AccessPlan, Vec<AccessCell>)> =
        plan.together.iter().map(|j| (&j.plan, j.plan.cells().into_iter().take(1).collect())).collect();
    let one_cell =
        Setup { cells: 1, workdir: setup.workdir, hooks: setup.hooks, on_error: setup.on_error, stop: setup.stop };
    let together = !jobs.is_empty();
    let led = lead(
        group,
        if together { &one_cell } else { setup },
        |rank, dir| {
            let (plan, cells, clients) = match plan.job_of_rank(rank) {
                Some((j, _)) => (jobs[j].0, &jobs[j].1[..], jobs[j].0.clients),
                None => (plan, &cells[..], clients),
            };
            let path = plan.device.clone().or_else(|| shared.clone()).unwrap_or_else(|| dir.join("access.dat"));
            let server = match place.of_client(rank) {
                Place::Local => None,
                Place::Remote { connect, folder } => {
                    Some(Server { connect, dir: folder, session: None, pool: Arc::new(Mutex::new(Vec::new())) })
                }
            };
            let content = plan.content.stamped().then(|| Content::new(plan.content, rank as u64));
            Client {
                rank,
                plan,
                cells,
                path,
                server,
                stop: setup.stop,
                live,
                laid_out: None,
                content,
                cpus: None,
                place_on_host: on_host.get(rank).copied().unwrap_or(rank),
                clients,
                curve_max: None,
                steady: &steady,
            }
        },
        |index, gathered| {
            if together {
                return each_job(plan, &cells, gathered, &mut on_cell);
            }
            let mut result = AccessResult::merge(cells[index], gathered);
            if result.left_out() {
                return Ok(());
            }
            judge_point(&mut judge, plan, &cells, &mut result, live);
            if result.steady_by_rank.is_empty() {
                result.steady = steady.verdict(cells[index].index);
            }
            on_cell(&result)
        },
    );
    // The harness counts the cells it stored: a cell per job.
    led.map(|done| done.map(|(n, ending)| (if together { n * jobs.len() } else { n }, ending)))
}

/// Jobs at once: the one cell gathered from every job's clients, merged and handed on as a cell
/// per job (its clients' figures, failures and barrier times only).
fn each_job<E: std::fmt::Display>(
    plan: &AccessPlan,
    cells: &[AccessCell],
    gathered: Gathered<AccessFigures>,
    on_cell: &mut impl FnMut(&AccessResult) -> Result<(), E>,
) -> Result<(), E> {
    let Gathered { figures, failures, starts } = gathered;
    let mut first = 0;
    for (j, job) in plan.together.iter().enumerate() {
        let ranks = first..first + job.plan.clients;
        first = ranks.end;
        let part = Gathered {
            figures: figures.iter().filter(|f| ranks.contains(&f.rank)).cloned().collect(),
            failures: failures.iter().filter(|f| ranks.contains(&f.rank)).cloned().collect(),
            starts: starts.get(ranks.clone()).map(<[StartTimes]>::to_vec).unwrap_or_default(),
        };
        let result = AccessResult::merge(cells[j], part);
        on_cell(&result)?;
    }
    Ok(())
}

/// At the leader, a point of a curve just merged: the curve's figures so far go with it, and
/// where its bound ends the curve here, the curve's remaining cells are left out.
fn judge_point(judge: &mut Judge, plan: &AccessPlan, cells: &[AccessCell], result: &mut AccessResult, live: &Live) {
    let (Some(load), Some(curve)) = (result.cell.load, &plan.curve) else { return };
    if load == CurveLoad::Max {
        *judge = Judge::new(curve.stop);
    }
    let (figures, ends) = judge.see(load, result.iops, &result.latency());
    if ends {
        let rest = cells[result.cell.index + 1..].iter().take_while(|c| c.load != Some(CurveLoad::Max));
        live.leave_out(rest.map(|c| c.index));
    }
    result.curve = Some(figures);
}

/// The one file every client shares under `--shared-file interleaved`: `access-shared.dat` in
/// the run's working folder; None for a file per client (or a device).
fn shared_file_path(plan: &AccessPlan, setup: &Setup<'_>, place: &Place<'_>) -> std::io::Result<Option<PathBuf>> {
    if plan.shared_file.is_per_client() {
        return Ok(None);
    }
    match (setup.workdir, place) {
        (Some(workdir), Place::Local) => Ok(Some(workdir.join(SharedFile::FILE_NAME))),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a shared file needs a local working folder (not a device, not a server yet)",
        )),
    }
}

struct Client<'a> {
    rank: usize,
    plan: &'a AccessPlan,
    cells: &'a [AccessCell],
    path: PathBuf,
    /// For a remote place: the client's own sessions to the server.
    server: Option<Server<'a>>,
    stop: &'a AtomicBool,
    live: &'a Live,
    /// The size of the writes the file was last laid out in (before the first cell, and again
    /// under `--prepare block` when a cell's block size differs); a failure fails every cell.
    laid_out: Option<Result<u64, ClientFailure>>,
    /// Stamps and checks the client's file, when the plan asks for stamped data.
    content: Option<Content>,
    /// Where the client's thread may run and where it is kept (`--pin`), from the first cell
    /// that keeps it.
    cpus: Option<Cpus>,
    /// Where the client stands among the clients on its host (its CPU where `--pin` keeps it).
    place_on_host: usize,
    /// Clients in the run: those sharing the file under `--shared-file interleaved`, and those
    /// an absolute rate of a curve is split over.
    clients: usize,
    /// This client's own rate at its curve's maximum (requests a second), once measured: its
    /// share of each point at a percentage of the maximum.
    curve_max: Option<f64>,
    /// `--steady-state`: where the client hands its intervals over, and learns the rule was met.
    steady: &'a SteadyWatch,
}

/// A client thread's CPUs under `--pin shallow|spread`.
struct Cpus {
    /// The CPUs it could run on before it was first kept (what a deep cell lets it go back to).
    allowed: Vec<usize>,
    /// The one it is kept on in cells that keep it.
    kept_on: usize,
    /// Whether it is kept on `kept_on` now.
    kept: bool,
}

/// One client's way to the server.
struct Server<'a> {
    connect: &'a Connect<'a>,
    /// `folder/client-N`, made at the first cell.
    dir: String,
    /// Connected at the first cell (untimed): laying out, and depth 1 where a
    /// session carries one request at a time.
    session: Option<Box<dyn RemoteFs>>,
    /// Further sessions for depth N where a session carries one request at a
    /// time (NFS): connected when a cell first needs them, kept for later cells.
    pool: Arc<Mutex<Vec<Box<dyn RemoteFs>>>>,
}

impl Server<'_> {
    fn file(&self) -> String {
        format!("{}/access.dat", self.dir)
    }

    /// The client's session, connected (and its folder made) on first use.
    fn session(&mut self) -> std::io::Result<&mut Box<dyn RemoteFs>> {
        if self.session.is_none() {
            let mut fs = (self.connect)().map_err(|e| std::io::Error::new(e.kind(), format!("connecting: {e}")))?;
            fs.mkdir(&self.dir)
                .map_err(|e| std::io::Error::new(e.kind(), format!("making {} on {}: {e}", self.dir, fs.target())))?;
            self.session = Some(fs);
        }
        Ok(self.session.as_mut().expect("connected above"))
    }

    /// Opens the client's file for `depth` requests in flight: on the one
    /// session where its protocol carries many (SMB), else one at a time on
    /// it (depth 1) or one at a time on each of `depth` sessions (NFS).
    fn open_queued(&mut self, depth: usize, buffer_len: usize) -> std::io::Result<Box<dyn QueuedFile + '_>> {
        let path = self.file();
        let pool = Arc::clone(&self.pool);
        let connect = self.connect;
        let fs = self.session()?;
        let protocol = fs.describe()["protocol"].as_str().unwrap_or("protocol").to_string();
        if fs.queues() {
            return fs.open_queued(&path, depth, buffer_len);
        }
        if depth == 1 {
            let said = format!("one request at a time on one {protocol} connection");
            return Ok(Box::new(OneAtATime::open(fs.as_mut(), &path, buffer_len, said)?));
        }
        let target = fs.target();
        let have = pool.lock().map(|p| p.len()).unwrap_or(0);
        for _ in have..depth {
            let extra = connect().map_err(|e| std::io::Error::new(e.kind(), format!("connecting to {target}: {e}")))?;
            pool.lock().map_err(|_| std::io::Error::other("a pool worker panicked"))?.push(extra);
        }
        let said = format!(
            "{depth} {protocol} connections, one request in flight on each (the {protocol} client carries one \
             request per connection), each driven by a thread of its own whose CPU time the cell's CPU% leaves out"
        );
        Ok(Box::new(SessionPool::open(&pool, depth, &path, buffer_len, said)?))
    }
}

impl ClientWork for Client<'_> {
    type Figures = AccessFigures;

    fn cells_left_out(&self) -> Vec<usize> {
        self.live.left_out.lock().map_or_else(|_| Vec::new(), |l| l.iter().copied().collect())
    }

    fn leave_out(&mut self, cells: &[usize]) {
        self.live.leave_out(cells.iter().copied());
    }

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<AccessFigures, ClientFailure> {
        // The file stays: the working folder goes at the end with it, or
        // stays with it under --keep.
        let cell = self.cells[index];
        if self.live.is_left_out(index) {
            return Ok(self.left_out());
        }
        let offered = self.offered(&cell)?;
        let kept_on = self.place_for(cell.queue_depth)?;
        // A shared file is laid out in the cell's own transfers: the interleave depends on them.
        let piece = match self.plan.shared_file {
            SharedFile::Interleaved => cell.block_size.bytes(),
            SharedFile::PerClient => self.plan.prepare.lay_out_piece(cell.block_size.bytes()),
        };
        let laid_out = match self.laid_out.take() {
            Some(Ok(done)) if done == piece => Ok(done),
            Some(Err(failed)) => Err(failed),
            Some(Ok(_)) | None => self.lay_out(piece).map(|()| piece),
        };
        self.laid_out = Some(laid_out.clone());
        laid_out?;
        let cached_at_start = self.set_cache_state()?;
        let mut figures = self.run_cell(&cell, start, offered)?;
        figures.cached_at_start = cached_at_start;
        figures.cpu = kept_on;
        if cell.load == Some(CurveLoad::Max) {
            self.curve_max = Some(figures.iops());
        }
        Ok(figures)
    }
}

/// What an open-loop cell offers one client: its arrivals' spacing and rate, and their seed.
#[derive(Debug, Clone, Copy)]
struct Offered {
    arrival: Arrival,
    per_sec: f64,
    seed: u64,
}

/// Seeds a client's arrivals apart from its offsets and mix.
const ARRIVALS_STREAM: u64 = 0xA441_7A15;

impl Client<'_> {
    /// The load `cell` offers this client in open loop; None in closed loop (no `--arrivals`, or
    /// a curve's maximum). A point at a percentage of the maximum offers that share of the rate
    /// the client achieved at it; an absolute rate is split evenly over the clients.
    fn offered(&self, cell: &AccessCell) -> Result<Option<Offered>, ClientFailure> {
        let per_sec = match (cell.load, self.plan.arrivals, self.plan.rate_iops) {
            (None, Some(_), Some(rate)) => rate as f64,
            (None | Some(CurveLoad::Max), _, _) => return Ok(None),
            (Some(CurveLoad::Rate(total)), _, _) => total as f64 / self.clients.max(1) as f64,
            (Some(CurveLoad::Percent(p)), _, _) => match self.curve_max {
                Some(max) if max > 0.0 => max * f64::from(p) / 100.0,
                _ => {
                    return Err(ClientFailure::error(
                        self.rank,
                        format!(
                            "client {} completed no request at its curve's maximum, so it has no share of it to \
                             offer at {p}%; see the maximum's cell",
                            self.rank
                        ),
                    ))
                }
            },
        };
        Ok(Some(Offered {
            arrival: self.plan.arrivals.unwrap_or_default(),
            per_sec,
            seed: self.plan.seed ^ ((self.rank as u64) << 32) ^ cell.index as u64 ^ ARRIVALS_STREAM,
        }))
    }

    /// The figures of a cell this client left out: none, and said so.
    fn left_out(&self) -> AccessFigures {
        let work = Work {
            rank: self.rank,
            plan: self.plan,
            stop: self.stop,
            live: self.live,
            offered: None,
            steady: self.steady,
        };
        let mut figures = work.figures(
            Completed::new(self.plan.series_interval_ns, None),
            Measured { start_ns: 0, end_ns: 0, cpu: Default::default() },
            String::new(),
            None,
        );
        figures.skipped = true;
        figures
    }
}

impl Client<'_> {
    /// Places this client's thread (the one that runs its cells) for a cell of `depth` requests
    /// in flight, as `--pin` asks, before the cell's file is laid out or prepared, so that its
    /// pages and the cell start from there: kept on its CPU (returned), or let go to the CPUs it
    /// could use before (None).
    fn place_for(&mut self, depth: u32) -> Result<Option<usize>, ClientFailure> {
        let keep = self.plan.pin.keeps(depth);
        let rank = self.rank;
        let pin = self.plan.pin.name();
        let fail = |doing: String, e: std::io::Error| {
            ClientFailure::error(rank, format!("{doing} (--pin {pin}): {e}; run with --pin off"))
        };
        if self.cpus.is_none() {
            if !keep {
                return Ok(None);
            }
            let allowed = iomatrix_backend::allowed_cpus()
                .map_err(|e| fail(format!("finding the CPUs client {rank} may use"), e))?;
            let kept_on = iomatrix_backend::spread_pick(&allowed, self.place_on_host).ok_or_else(|| {
                fail(format!("finding a CPU for client {rank}"), std::io::Error::other("it may run on no CPU"))
            })?;
            self.cpus = Some(Cpus { allowed, kept_on, kept: false });
        }
        let cpus = self.cpus.as_mut().expect("set above");
        if keep && !cpus.kept {
            iomatrix_backend::keep_on(cpus.kept_on)
                .map_err(|e| fail(format!("keeping client {rank} on CPU {}", cpus.kept_on), e))?;
        } else if !keep && cpus.kept {
            iomatrix_backend::allow_on(&cpus.allowed)
                .map_err(|e| fail(format!("letting client {rank} run on any of CPUs {:?}", cpus.allowed), e))?;
        }
        cpus.kept = keep;
        Ok(keep.then_some(cpus.kept_on))
    }

    /// The file's state in the page cache at the cell's start, as `--prepare` asks (untimed,
    /// before the start barrier): dropped, or left as it is; then how much of it is cached.
    /// Through a protocol client there is no cache here to drop or look at.
    fn set_cache_state(&self) -> Result<Option<CachedAtStart>, ClientFailure> {
        if self.server.is_some() {
            return Ok(None);
        }
        let fail = |what: &str, e: std::io::Error| {
            ClientFailure::error(self.rank, format!("{what} {}: {e}", self.path.display()))
        };
        if self.plan.prepare == Prepare::Dropped {
            let file = std::fs::File::open(&self.path).map_err(|e| fail("opening", e))?;
            iomatrix_backend::drop_cached(&file).map_err(|e| fail("dropping from the page cache", e))?;
        }
        // Clients share a device or a file: rank 0 looks for all of them.
        if (self.plan.device.is_some() || !self.plan.shared_file.is_per_client()) && self.rank != 0 {
            return Ok(None);
        }
        iomatrix_backend::residency_within(&self.path, self.file_length())
            .map(Some)
            .map_err(|e| fail("looking at the page cache's pages of", e))
    }

    /// Writes the whole working set, untimed, in writes of `piece` bytes, so reads read real
    /// data (a raw device's data is already there).
    fn lay_out(&mut self, piece: u64) -> Result<(), ClientFailure> {
        use std::io::Write;
        if self.server.is_some() {
            return self.lay_out_on_server();
        }
        if self.plan.device.is_some() {
            return Ok(());
        }
        if let Some(lane) = self.interleave(piece) {
            return self.lay_out_interleaved(&lane);
        }
        let fail =
            |e: std::io::Error| ClientFailure::error(self.rank, format!("laying out {}: {e}", self.path.display()));
        let mut file = std::fs::File::create(&self.path).map_err(fail)?;
        let size = self.plan.file_size.bytes();
        // A file smaller than a piece is written from a buffer of its own size: filling a
        // 1 MiB buffer for a 4 KiB file was most of a small job's time (iomatrix fio, issue 48).
        let mut chunk = iomatrix_backend::AlignedBuf::new(piece.min(size.max(1)) as usize);
        let mut at = 0;
        while at < size {
            if self.stop.load(Ordering::Relaxed) {
                return Err(ClientFailure::stopped(self.rank));
            }
            let n = (size - at).min(chunk.len() as u64) as usize;
            stamp_lay_out(self.content.as_mut(), &mut chunk.as_mut_slice()[..n], at);
            file.write_all(&chunk.as_slice()[..n]).map_err(fail)?;
            at += n as u64;
        }
        file.sync_all().map_err(fail)
    }

    /// This client's transfers of the shared file, for cells of `block` bytes (None: a file of its own).
    fn interleave(&self, block: u64) -> Option<Interleave> {
        let shared = self.plan.shared_file == SharedFile::Interleaved;
        shared.then(|| Interleave::new(self.clients, self.rank, block, self.plan.file_size.bytes()))
    }

    /// The length of the file this client opens: its own, or the shared file at the last lay-out's
    /// transfers (its share when none yet).
    fn file_length(&self) -> u64 {
        let block = match &self.laid_out {
            Some(Ok(piece)) => *piece,
            _ => self.plan.file_size.bytes(),
        };
        self.interleave(block).map_or(self.plan.file_size.bytes(), |lane| lane.file_length())
    }

    /// Writes this client's transfers of the shared file, untimed and zeroed (a cell's writes are
    /// told from the lay-out by their tags), beside the other clients writing theirs: the file is
    /// opened without truncating it, every client at once.
    fn lay_out_interleaved(&self, lane: &Interleave) -> Result<(), ClientFailure> {
        use std::os::unix::fs::FileExt;
        let fail =
            |e: std::io::Error| ClientFailure::error(self.rank, format!("laying out {}: {e}", self.path.display()));
        let file =
            std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(&self.path).map_err(fail)?;
        let zeros = vec![0u8; lane.block as usize];
        for k in 0..lane.transfers {
            if self.stop.load(Ordering::Relaxed) {
                return Err(ClientFailure::stopped(self.rank));
            }
            file.write_all_at(&zeros, lane.offset(k)).map_err(fail)?;
        }
        file.sync_all().map_err(fail)
    }

    /// The same on the server: the client's folder and file, written in
    /// pieces of 1 MiB and made durable (NFS COMMIT, SMB FLUSH).
    fn lay_out_on_server(&mut self) -> Result<(), ClientFailure> {
        let (rank, stop, size) = (self.rank, self.stop, self.plan.file_size.bytes());
        let mut content = self.content.as_mut();
        let Some(server) = self.server.as_mut() else { return Ok(()) };
        let path = server.file();
        let fail = |e: std::io::Error| ClientFailure::error(rank, format!("laying out {path}: {e}"));
        let fs = server.session().map_err(fail)?;
        let mut file = RemoteFile::create(fs.as_mut(), &path).map_err(fail)?;
        let mut chunk = iomatrix_backend::AlignedBuf::new(LAY_OUT_PIECE as usize);
        let mut at = 0;
        while at < size {
            if stop.load(Ordering::Relaxed) {
                return Err(ClientFailure::stopped(rank));
            }
            let n = (size - at).min(chunk.len() as u64) as usize;
            stamp_lay_out(content.as_deref_mut(), &mut chunk.as_mut_slice()[..n], at);
            iomatrix_backend::RecordIo::write_at(&mut file, &chunk.as_slice()[..n], at).map_err(fail)?;
            at += n as u64;
        }
        file.flush().map_err(fail)?;
        file.close().map_err(fail)
    }

    /// What messages call the client's file: its path, or the server's URL and the path there.
    fn place(&self) -> String {
        match &self.server {
            Some(server) => {
                let target = server.session.as_ref().map(|fs| fs.target()).unwrap_or_default();
                format!("{target}/{}", server.file())
            }
            None => self.path.display().to_string(),
        }
    }

    /// Opens the client's file for one cell: locally with the plan's backend, or on the server.
    fn open_for(&mut self, cell: &AccessCell) -> Result<(Box<dyn QueuedFile + '_>, String), ClientFailure> {
        let (depth, buffer_len) = (cell.queue_depth as usize, cell.block_size.bytes() as usize);
        let place = self.place();
        let rank = self.rank;
        let length = self.file_length();
        match self.server.as_mut() {
            Some(server) => server
                .open_queued(depth, buffer_len)
                .map(|f| (f, place.clone()))
                .map_err(|e| ClientFailure::error(rank, format!("opening {place} for queue depth {depth}: {e}"))),
            None => {
                let how = OpenHow::update(length, self.plan.direct);
                open_queued(self.plan.backend, &self.path, &how, depth, buffer_len)
                    .and_then(|mut f| {
                        if let Some(us) = self.plan.poll_completions_us {
                            f.poll_completions(Duration::from_micros(us))?;
                        }
                        if let Some(n) = self.plan.submit_batch {
                            f.submit_batch(n as usize)?;
                        }
                        Ok(f)
                    })
                    .map(|f| (f, place.clone()))
                    .map_err(|e| ClientFailure::error(rank, format!("opening {place} for {}: {e}", self.plan.backend)))
            }
        }
    }

    fn run_cell(
        &mut self,
        cell: &AccessCell,
        start: &mut Start<'_>,
        offered: Option<Offered>,
    ) -> Result<AccessFigures, ClientFailure> {
        let (rank, live, plan) = (self.rank, self.live, self.plan);
        let work = Work { rank, plan, stop: self.stop, live, offered, steady: self.steady };
        // Drawn before the barrier: a skewed distribution's table costs time no cell should hold.
        let mut requests = Requests::new(plan, cell, rank, self.interleave(cell.block_size.bytes()));
        // The open file borrows the client: its content is lent to the loop apart.
        let mut content = self.content.take();
        if let Some(c) = content.as_mut() {
            // The lay-out is generation 1.
            c.generation = cell.index as u64 + 2;
        }
        let prepared =
            if self.stop.load(Ordering::SeqCst) { Err(ClientFailure::stopped(rank)) } else { self.open_for(cell) };
        live.start_cell(rank, cell.index);
        let outcome = prepared.and_then(|(mut file, place)| {
            let origin = match start.together() {
                Ok(origin) => origin,
                Err(f) => {
                    let _ = file.close();
                    return Err(f);
                }
            };
            // The warm-up issues the cell's own requests, continuing into the timed part's stream;
            // its figures are dropped. Its requests in flight complete before the timed part starts.
            let ramped = match plan.ramp_ms {
                0 => Ok(()),
                ms => work
                    .drive(file.as_mut(), &place, cell, origin, content.as_mut(), &mut requests, Phase::Ramp(ms))
                    .map(drop),
            };
            // Under a latency target the search comes next (untimed, as the warm-up): its figures
            // are dropped but for the depth it found, which the timed part runs at.
            let searched = ramped.and_then(|()| match plan.latency_target {
                Some(t) if !t.keep_adjusting => work
                    .drive(file.as_mut(), &place, cell, origin, content.as_mut(), &mut requests, Phase::Search)
                    .map(|f| f.latency_target),
                _ => Ok(None),
            });
            let result = searched.and_then(|found| {
                let phase = found.as_ref().map_or(Phase::Timed, |f| Phase::TimedAt(f.measured_depth));
                let figures = work.drive(file.as_mut(), &place, cell, origin, content.as_mut(), &mut requests, phase);
                figures.map(|f| AccessFigures { latency_target: found.or(f.latency_target), ..f })
            });
            let closed = file.close().map_err(|e| work.failure(format!("closing {place}: {e}")));
            let figures = result?;
            closed?;
            // A stop ends the request loop early: a cell cut short is not a figure of the cell asked for.
            if work.stop.load(Ordering::SeqCst) {
                return Err(ClientFailure::stopped(rank));
            }
            Ok(figures)
        });
        self.content = content;
        outcome
    }
}

/// What a cell's request loop needs of its client, apart from the file.
struct Work<'a> {
    rank: usize,
    plan: &'a AccessPlan,
    stop: &'a AtomicBool,
    live: &'a Live,
    /// Open loop: the load the cell offers this client.
    offered: Option<Offered>,
    steady: &'a SteadyWatch,
}

impl Work<'_> {
    /// One cell's request loop: keep the queue full (as the pace allows; in open loop, each
    /// request issued at its arrival or as soon after as a slot is free), reap completions, time
    /// and check each, publish the live line once a second (not while warming up).
    #[allow(clippy::too_many_arguments)]
    fn drive(
        &self,
        file: &mut dyn QueuedFile,
        place: &str,
        cell: &AccessCell,
        origin: Instant,
        mut content: Option<&mut Content>,
        requests: &mut Requests,
        phase: Phase,
    ) -> Result<AccessFigures, ClientFailure> {
        let depth = cell.queue_depth as usize;
        let clock = latency_clock();
        let mut slots = Slots::new(depth, cell.block_size.bytes());
        let mut completions: Vec<Completion> = Vec::with_capacity(depth);
        let mut done = self.completed(cell, phase);
        // Made before the loop for a queued backend (its histograms are not made while timing);
        // a protocol client's queue makes it at its first completion. None for a synchronous file.
        let mut split: Option<Box<SubmitSplit>> = self.plan.backend.is_queued().then(Box::default);
        let mut pace = self.pace(phase, cell.queue_depth);
        let mut sizes = self.plan.block_split.as_ref().map(|s| SizeCounts::new(&s.sizes()));
        let span = Span::start(origin);
        let start = clock.raw();
        // Times in the loop are nanoseconds since `start`.
        let since_start = |raw: u64| clock.delta_as_nanos(start, raw);
        // Two clock reads per request: when it is issued and when its completion is seen. The
        // loop's own checks use the last completion's time (or, after waiting, a fresh one).
        let mut now_ns = 0u64;
        // Open loop: once past the deadline, the arrivals that came before it still go into the
        // slots free then (a client that woke late is no backlog); the rest are the backlog.
        let mut swept = pace.open.is_none();
        loop {
            let stopped = self.stop.load(Ordering::Relaxed);
            let issuing = self.issuing(&pace, now_ns, cell);
            if issuing || (!stopped && !std::mem::replace(&mut swept, true)) {
                self.issue(file, place, &mut slots, &mut pace, requests, content.as_deref_mut(), &since_start)?;
            }
            if file.in_flight() == 0 && completions.is_empty() {
                if !issuing {
                    break;
                }
                pace.wait_for_next(|| since_start(clock.raw()));
                now_ns = since_start(clock.raw());
                continue;
            }
            // Open loop with a free slot: wait for a completion only until the next arrival.
            let reaped = match pace.open_wait(issuing && !slots.free.is_empty(), || since_start(clock.raw())) {
                Some(wait) => file.reap_within(1, wait, &mut completions),
                None => file.reap(1, &mut completions),
            };
            reaped.map_err(|e| self.failure(format!("reaping from {place}: {e}")))?;
            slots.depths.reaped(completions.len());
            let now = clock.raw();
            now_ns = since_start(now);
            let second = (now_ns / SECOND_NS) as usize;
            for c in completions.drain(..) {
                let (write, bs) = (slots.writing[c.slot], slots.lengths[c.slot]);
                self.moved_all(c.result, write, bs, place)?;
                if let Some(content) = content.as_deref_mut() {
                    slots.check_completed(c.slot, bs, file.buffer(c.slot), content);
                }
                if let Some(s) = sizes.as_mut() {
                    s.count(write, bs);
                }
                // Open loop: from the request's intended start, however late it was issued.
                let latency_ns = match pace.open {
                    Some(_) => now_ns.saturating_sub(slots.intended_ns[c.slot]),
                    None => clock.delta_as_nanos(slots.issued_at[c.slot], now),
                };
                done.record(write, latency_ns, bs, second, now_ns);
                pace.completed(latency_ns, now_ns);
                if let Some((issued, submitted)) = slots.submission(c.slot, &since_start) {
                    split.get_or_insert_with(Default::default).record(write, issued, submitted, now_ns);
                }
                slots.free.push(c.slot);
            }
            if phase.is_timed() {
                done.publish_each_second(now_ns, self.live, self.rank);
            }
        }
        // The series ends where the loop did: the span's own readings after it are no requests' time.
        done.end(since_start(clock.raw()));
        let measured = span.finish();
        let issued = file.describe();
        let verify = content.map(Content::take_tally);
        let mut figures = self.figures(done, measured, issued, verify);
        figures.split = split;
        figures.depths = slots.depths;
        figures.open = pace.open_loop();
        figures.latency_target = pace.queue.outcome();
        figures.steady = self.steady.own_verdict(cell.index);
        figures.sizes = sizes;
        Ok(figures)
    }

    /// Issues requests into the free slots while the pace lets them go: each stamped or tagged
    /// where the plan says, timed from its issue (and, in open loop, from its arrival).
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &self,
        file: &mut dyn QueuedFile,
        place: &str,
        slots: &mut Slots,
        pace: &mut Pace,
        requests: &mut Requests,
        mut content: Option<&mut Content>,
        since_start: &impl Fn(u64) -> u64,
    ) -> Result<(), ClientFailure> {
        let clock = latency_clock();
        let mut issued = 0u32;
        while let Some(&slot) = slots.free.last() {
            if !pace.may_issue(|| since_start(clock.raw())) {
                break;
            }
            let (write, offset, bs) = requests.next();
            if let (true, Some(c)) = (write, content.as_deref_mut()) {
                c.stamp(file.buffer(slot), offset);
            } else if write && requests.interleave.is_some() {
                tag_transfer(file.buffer(slot), self.rank, offset);
            }
            slots.issued_at[slot] = clock.raw();
            (slots.writing[slot], slots.lengths[slot]) = (write, bs);
            let req = Request { slot, write, offset, len: bs as usize };
            let outcome = file.submit(req).map_err(|e| self.failure(format!("submitting to {place}: {e}")))?;
            match outcome {
                Submitted::Busy => break,
                Submitted::Done | Submitted::Queued => {
                    // A queued request's submission ends here: one clock read more.
                    slots.submitted_at[slot] = if outcome == Submitted::Queued { clock.raw() } else { 0 };
                    if content.is_some() {
                        slots.mark_in_flight(slot, offset, bs, write);
                    }
                    slots.free.pop();
                    issued += 1;
                    pace.issued(bs);
                    if pace.open.is_some() {
                        slots.intended_ns[slot] = pace.arrived(since_start(slots.issued_at[slot]));
                    }
                }
            }
        }
        // fio's io_u_mark_depth at a commit: every request of the round at the depth after it.
        slots.depths.submitted(issued, pace.in_flight);
        Ok(())
    }

    /// What `phase` of `cell` adds its completions to: the timed part's intervals also handed to the
    /// steady-state watch.
    fn completed(&self, cell: &AccessCell, phase: Phase) -> Completed<'_> {
        let feed = if phase.is_timed() { self.steady.feed(cell.index) } else { None };
        Completed::new(self.plan.series_interval_ns, feed)
    }

    /// Whether the loop still issues at `now_ns`: not stopped, within the pace's limit, and the
    /// cell's steady state not yet met (a cell that met it ends as one at its limit: the requests
    /// in flight complete).
    #[inline]
    fn issuing(&self, pace: &Pace, now_ns: u64, cell: &AccessCell) -> bool {
        !self.stop.load(Ordering::Relaxed) && pace.issuing(now_ns) && !self.steady.reached(cell.index)
    }

    /// A completion moved all `bs` bytes, or the client's failure: its error, or a short transfer.
    #[inline]
    fn moved_all(
        &self,
        result: std::io::Result<usize>,
        write: bool,
        bs: u64,
        place: &str,
    ) -> Result<(), ClientFailure> {
        let what = if write { "write" } else { "read" };
        let moved = result.map_err(|e| self.failure(format!("{what} of {bs} bytes in {place}: {e}")))?;
        if moved as u64 != bs {
            return Err(self.failure(format!("short {what}: {moved} of {bs} bytes in {place}")));
        }
        Ok(())
    }

    /// After the loop: the client's figures of the cell, from what completed (`done`) in the time
    /// `measured`, with how its requests were `issued` and what `--verify` found.
    fn figures(&self, done: Completed<'_>, measured: Measured, issued: String, verify: Option<Tally>) -> AccessFigures {
        let Completed { reads, writes, read_bytes, write_bytes, series, intervals, intervals_end_ns, .. } = done;
        AccessFigures {
            intervals: intervals.finish(intervals_end_ns),
            rank: self.rank,
            reads,
            writes,
            read_bytes,
            write_bytes,
            measured,
            series,
            issued,
            verify,
            cached_at_start: None,
            cpu: None,
            split: None,
            depths: QueueDepths::default(),
            open: None,
            skipped: false,
            latency_target: None,
            steady: None,
            sizes: None,
        }
    }

    /// Before the loop: the pace of `phase` (closed loop, at the plan's rate), or the arrivals
    /// the cell offers (open loop; the warm-up's are a stream of their own at the same rate).
    fn pace(&self, phase: Phase, deepest: u32) -> Pace {
        let closed_rate = if self.offered.is_some() { None } else { self.plan.rate_iops };
        let mut pace = self.queued_pace(phase, deepest, closed_rate);
        pace.open = self.offered.map(|o| {
            let seed = if phase.is_timed() { o.seed } else { !o.seed };
            OpenPace {
                arrivals: Arrivals::new(o.arrival, o.per_sec, seed),
                load: OpenLoop { arrivals: o.arrival, offered_per_sec: o.per_sec, late: 0, backlog: 0 },
            }
        });
        pace
    }

    /// The pace of `phase`: the cell's limit (or the ramp's, or the search's bound) at `rate`,
    /// its queue as deep as the cell's or as a latency target's search says (`deepest`, the
    /// cell's depth, the most it tries).
    fn queued_pace(&self, phase: Phase, deepest: u32, rate: Option<u64>) -> Pace {
        let Some(target) = self.plan.latency_target else {
            let limit = if let Phase::Ramp(ms) = phase { Limit::DurationMs(ms) } else { self.plan.limit };
            return Pace::new(limit, rate);
        };
        let search = || Queue::Searching(Box::new(DepthSearch::new(target, deepest)));
        match phase {
            // As fio's: the warm-up runs at the search's first depth, and is not judged.
            Phase::Ramp(ms) => Pace::new(Limit::DurationMs(ms), rate).within(Queue::Fixed(1)),
            Phase::Search => {
                let bound_ms = target.window_ns.saturating_mul(u64::from(MAX_WINDOWS)).div_ceil(1_000_000);
                Pace::new(Limit::DurationMs(bound_ms), rate).within(search())
            }
            Phase::TimedAt(depth) => Pace::new(self.plan.limit, rate).within(Queue::Fixed(depth)),
            // fio's latency_run: the search goes on through the timed part.
            Phase::Timed => Pace::new(self.plan.limit, rate).within(search()),
        }
    }

    fn failure(&self, message: String) -> ClientFailure {
        ClientFailure::error(self.rank, message)
    }
}

/// Which part of a cell a request loop runs: the untimed warm-up (`--ramp`, for so many
/// milliseconds whatever the cell's limit), a latency target's search for its depth (untimed),
/// or the timed part: at the cell's depth, or at the depth the search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Ramp(u64),
    Search,
    Timed,
    TimedAt(u32),
}

impl Phase {
    fn is_timed(self) -> bool {
        matches!(self, Phase::Timed | Phase::TimedAt(_))
    }
}

/// Where a cell's next request goes and whether it writes: the cell's mix of reads and
/// writes, random and sequential offsets, drawn from the client's own seeded generator.
struct Requests {
    rng: Generator,
    read_percent: u8,
    random_percent: u8,
    /// Coin flips only where the cell mixes: 100% or 0% needs no draw.
    reads_only: Option<bool>,
    random_only: Option<bool>,
    /// Random offsets: the aligned places a block fits at, drawn by the plan's distribution.
    places: Places,
    align: u64,
    bs: u64,
    /// Under `--bssplit`: each direction's running shares and sizes (reads, writes).
    split: Option<[Vec<(u64, u64)>; 2]>,
    file_size: u64,
    seq_next: u64,
    /// On a shared file: this client's transfers, and the next one's number.
    interleave: Option<Interleave>,
    transfer_next: u64,
}

impl Requests {
    fn new(plan: &AccessPlan, cell: &AccessCell, rank: usize, interleave: Option<Interleave>) -> Requests {
        let bs = cell.block_size.bytes();
        let align = plan.alignment_of(cell.block_size);
        let file_size = plan.file_size.bytes();
        let always = |pct: u8| match pct {
            0 => Some(false),
            100 => Some(true),
            _ => None,
        };
        Requests {
            rng: Generator::seeded(plan.seed ^ ((rank as u64) << 32) ^ cell.index as u64),
            read_percent: cell.read_percent,
            random_percent: cell.random_percent,
            reads_only: always(cell.read_percent),
            random_only: always(cell.random_percent),
            // The hot places stay where they are from cell to cell (as in fio, per file): seeded by
            // the client, not the cell.
            places: plan.distribution.over((file_size - bs) / align + 1, plan.seed ^ ((rank as u64) << 32)),
            align,
            bs,
            split: plan.block_split.as_ref().map(|s| [s.thresholds(false), s.thresholds(true)]),
            file_size,
            seq_next: 0,
            interleave,
            transfer_next: 0,
        }
    }

    /// The next request: (whether it writes, its offset, its length).
    #[inline]
    fn next(&mut self) -> (bool, u64, u64) {
        let write = match self.reads_only {
            Some(read) => !read,
            None => self.rng.below(100) >= u64::from(self.read_percent),
        };
        let len = match &self.split {
            // fio's draw: the first size whose running share is above a draw of 0..100.
            Some(split) => {
                let draw = self.rng.below(100);
                let sizes = &split[usize::from(write)];
                sizes.iter().find(|(upto, _)| draw < *upto).or(sizes.last()).map_or(self.bs, |(_, size)| *size)
            }
            None => self.bs,
        };
        let random = self.random_only.unwrap_or_else(|| self.rng.below(100) < u64::from(self.random_percent));
        let offset = if random {
            self.places.next(&mut self.rng) * self.align
        } else if let Some(lane) = &self.interleave {
            // After its last transfer a client starts again at its first, as a file of its own wraps.
            let offset = lane.offset(self.transfer_next);
            self.transfer_next = (self.transfer_next + 1) % lane.transfers.max(1);
            offset
        } else {
            // The next request fits whatever its length (`bs` is the largest).
            let offset = self.seq_next;
            self.seq_next = if offset + len + self.bs > self.file_size { 0 } else { offset + len };
            offset
        };
        (write, offset, len)
    }
}

/// The queue's slots: which are free, and each request's issue time and direction. With
/// stamped data also each slot's offset, whether it is in flight, and whether a read in it
/// overlapped a write in flight (so it is not checked).
struct Slots {
    free: Vec<usize>,
    /// When each slot's request was issued, in the latency clock's raw ticks.
    issued_at: Vec<u64>,
    /// When the call that queued it returned (raw ticks); 0 for a request issued and completed
    /// by one call.
    submitted_at: Vec<u64>,
    /// Open loop: when each slot's request was meant to start (ns since the loop's start).
    intended_ns: Vec<u64>,
    writing: Vec<bool>,
    /// Each slot's request's length (the cell's block size, or under `--bssplit` its draw's).
    lengths: Vec<u64>,
    offsets: Vec<u64>,
    busy: Vec<bool>,
    overlapped: Vec<bool>,
    /// What the loop counts of its queue for fio's IO depths, submit and complete lines.
    depths: QueueDepths,
}

impl Slots {
    /// A queued request's issue and the end of its submission, in `since_start`'s nanoseconds;
    /// None for one a synchronous file did at once.
    #[inline]
    fn submission(&self, slot: usize, since_start: &impl Fn(u64) -> u64) -> Option<(u64, u64)> {
        (self.submitted_at[slot] != 0)
            .then(|| (since_start(self.issued_at[slot]), since_start(self.submitted_at[slot])))
    }

    fn new(depth: usize, block_size: u64) -> Slots {
        Slots {
            free: (0..depth).rev().collect(),
            issued_at: vec![0; depth],
            submitted_at: vec![0; depth],
            intended_ns: vec![0; depth],
            writing: vec![false; depth],
            lengths: vec![block_size; depth],
            offsets: vec![0; depth],
            busy: vec![false; depth],
            overlapped: vec![false; depth],
            depths: QueueDepths::default(),
        }
    }

    /// Stamped data: `slot`'s request is in flight at `offset`.
    fn mark_in_flight(&mut self, slot: usize, offset: u64, bs: u64, write: bool) {
        mark_overlaps(slot, offset, bs, write, &self.offsets, &self.busy, &self.writing, &mut self.overlapped);
        (self.offsets[slot], self.busy[slot]) = (offset, true);
    }

    /// Stamped data: `slot`'s request completed with `buffer`; a read is checked unless it
    /// overlapped a write.
    fn check_completed(&mut self, slot: usize, bs: u64, buffer: &[u8], content: &mut Content) {
        self.busy[slot] = false;
        if !self.writing[slot] && std::mem::take(&mut self.overlapped[slot]) {
            content.tally.unchecked_blocks += bs / iomatrix_verify::UNIT as u64;
        } else if !self.writing[slot] {
            content.check(buffer, self.offsets[slot]);
        }
    }
}

/// When a cell issues: before its deadline, within its byte budget, at its rate.
struct Pace {
    /// The deadline by both clocks: the counter's says when to look, CLOCK_MONOTONIC's (the
    /// clock of the cell's wall time) has the last word, so a cell never ends short of it.
    deadline: Option<(u64, Instant)>,
    budget: Option<u64>,
    rate_iops: Option<u64>,
    issued_ops: u64,
    issued_bytes: u64,
    /// How many requests may be in flight, and how many are.
    queue: Queue,
    in_flight: u32,
    /// Open loop: the arrivals, and the load they make so far.
    open: Option<OpenPace>,
}

/// An open-loop cell's arrivals and what they made so far.
struct OpenPace {
    arrivals: Arrivals,
    load: OpenLoop,
}

impl Pace {
    fn new(limit: Limit, rate_iops: Option<u64>) -> Pace {
        let (deadline, budget) = match limit {
            Limit::DurationMs(ms) => {
                (Some((ms.saturating_mul(1_000_000), Instant::now() + Duration::from_millis(ms))), None)
            }
            Limit::Bytes(b) => (None, Some(b)),
        };
        Pace {
            deadline,
            budget,
            rate_iops,
            issued_ops: 0,
            issued_bytes: 0,
            open: None,
            queue: Queue::Full,
            in_flight: 0,
        }
    }

    /// The same pace with its queue held to `queue`.
    fn within(self, queue: Queue) -> Pace {
        Pace { queue, ..self }
    }

    /// Whether the cell still issues at `now_ns`: before the deadline, bytes left, a search not over.
    fn issuing(&self, now_ns: u64) -> bool {
        self.deadline.is_none_or(|(ns, at)| now_ns < ns || Instant::now() < at)
            && self.budget.is_none_or(|b| self.issued_bytes < b)
            && !self.queue.finished()
    }

    /// Whether one more request may go now: room in the queue, bytes left and, at a rate, its time come.
    #[inline]
    fn may_issue(&self, now_ns: impl FnOnce() -> u64) -> bool {
        // Open loop: an arrival at or past the deadline belongs to no cell.
        let arrives_in_time = |o: &OpenPace| self.deadline.is_none_or(|(dl, _)| o.arrivals.peek() < dl);
        self.queue.has_room(self.in_flight)
            && self.budget.is_none_or(|b| self.issued_bytes < b)
            && self.open.as_ref().is_none_or(arrives_in_time)
            && self.due().is_none_or(|d| now_ns() >= d)
    }

    #[inline]
    fn issued(&mut self, bs: u64) {
        self.issued_ops += 1;
        self.issued_bytes += bs;
        self.in_flight += 1;
    }

    /// A request completed in `latency_ns` (issue to completion) at `now_ns`.
    #[inline]
    fn completed(&mut self, latency_ns: u64, now_ns: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.queue.completed(latency_ns, now_ns, self.in_flight);
    }

    /// At a rate: when the next request is due, in nanoseconds since the start (open loop: its
    /// arrival).
    fn due(&self) -> Option<u64> {
        if let Some(open) = &self.open {
            return Some(open.arrivals.peek());
        }
        self.rate_iops.map(|r| (self.issued_ops as f64 / r as f64 * 1e9) as u64)
    }

    /// Open loop: the request just issued at `issued_ns` takes the next arrival, whose intended
    /// start is returned; issued more than [`LATE_NS`] after it, it is late.
    #[inline]
    fn arrived(&mut self, issued_ns: u64) -> u64 {
        let Some(open) = self.open.as_mut() else { return issued_ns };
        let intended = open.arrivals.take();
        if issued_ns.saturating_sub(intended) > LATE_NS {
            open.load.late += 1;
        }
        intended
    }

    /// Open loop, with a slot free to issue into (`free`): how long to wait for a completion
    /// before the next arrival (or the deadline) is due. None: wait for a completion, however long.
    fn open_wait(&self, free: bool, now_ns: impl FnOnce() -> u64) -> Option<Duration> {
        let open = self.open.as_ref().filter(|_| free)?;
        let until = self.deadline.map_or(open.arrivals.peek(), |(dl, _)| open.arrivals.peek().min(dl));
        Some(Duration::from_nanos(until.saturating_sub(now_ns())))
    }

    /// Open loop, after the loop: the load offered, with the arrivals due before the deadline
    /// that were never issued as its backlog.
    fn open_loop(&mut self) -> Option<OpenLoop> {
        let deadline = self.deadline.map(|(ns, _)| ns);
        let open = self.open.as_mut()?;
        // Bounded: a cell stopped at once at a high rate must not count for long.
        open.load.backlog = deadline.map_or(0, |dl| open.arrivals.count_before(dl, 100_000_000));
        Some(open.load)
    }

    /// Rate-limited with nothing in flight: waits for the next request's time (or the deadline).
    fn wait_for_next(&self, now_ns: impl FnOnce() -> u64) {
        if let Some(d) = self.due() {
            let until = self.deadline.map_or(d, |(dl, _)| d.min(dl));
            std::thread::sleep(Duration::from_nanos(until.saturating_sub(now_ns())));
        }
    }
}

/// What a cell's completions add up to: latencies by direction, bytes, the per-second series,
/// and the last second's for the live line; with `--steady-state`, the intervals handed over.
struct Completed<'s> {
    reads: Latency,
    writes: Latency,
    read_bytes: u64,
    write_bytes: u64,
    series: Vec<Second>,
    /// The figures over time (`--interval`), and when the loop ended (ns since its start).
    intervals: SeriesRecorder,
    intervals_end_ns: u64,
    interval: Latency,
    this_second: Second,
    next_tick: u64,
    steady: Option<SteadyFeed<'s>>,
}

impl<'s> Completed<'s> {
    fn new(series_interval_ns: u64, steady: Option<SteadyFeed<'s>>) -> Completed<'s> {
        Completed {
            steady,
            intervals: SeriesRecorder::new(series_interval_ns),
            intervals_end_ns: 0,
            reads: Latency::new(),
            writes: Latency::new(),
            read_bytes: 0,
            write_bytes: 0,
            series: Vec::new(),
            interval: Latency::new(),
            this_second: Second::default(),
            next_tick: SECOND_NS,
        }
    }

    #[inline]
    fn record(&mut self, write: bool, ns: u64, bs: u64, second: usize, now_ns: u64) {
        self.intervals.record(now_ns, ns, bs, write);
        if let Some(feed) = self.steady.as_mut() {
            feed.completed(now_ns, bs);
        }
        if write {
            self.writes.record(ns);
            self.write_bytes += bs;
        } else {
            self.reads.record(ns);
            self.read_bytes += bs;
        }
        self.interval.record(ns);
        if self.series.len() <= second {
            self.series.resize(second + 1, Second::default());
        }
        self.series[second].ops += 1;
        self.series[second].bytes += bs;
        self.this_second.ops += 1;
        self.this_second.bytes += bs;
    }

    /// The loop ended `end_ns` after its start: where the series ends, and the whole intervals
    /// not yet handed over to the steady-state watch handed over.
    fn end(&mut self, end_ns: u64) {
        self.intervals_end_ns = end_ns;
        if let Some(feed) = self.steady.as_mut() {
            feed.close_until(end_ns);
        }
    }

    /// Once a second: the last second's requests, bytes and p99 to the live line.
    fn publish_each_second(&mut self, now_ns: u64, live: &Live, rank: usize) {
        if now_ns >= self.next_tick {
            live.publish(rank, self.this_second.ops, self.this_second.bytes, self.interval.quantile_ns(0.99));
            self.interval.reset();
            self.this_second = Second::default();
            self.next_tick += SECOND_NS;
        }
    }
}

/// The tag a write to the shared file carries in its first 16 bytes (fewer in a smaller block):
/// its client's rank + 1 and its offset, little-endian, so the file read back shows which client
/// wrote each transfer and where it meant to (a zeroed lay-out reads as rank 0).
fn tag_transfer(buffer: &mut [u8], rank: usize, offset: u64) {
    let mut tag = [0u8; 16];
    tag[..8].copy_from_slice(&(rank as u64 + 1).to_le_bytes());
    tag[8..].copy_from_slice(&offset.to_le_bytes());
    let n = buffer.len().min(tag.len());
    buffer[..n].copy_from_slice(&tag[..n]);
}

/// Stamps a lay-out chunk at `at` as generation 1, when the plan stamps its data.
fn stamp_lay_out(content: Option<&mut Content>, chunk: &mut [u8], at: u64) {
    if let Some(c) = content {
        c.generation = 1;
        c.stamp(chunk, at);
        // Untimed: the lay-out's stamping is no cell's cost.
        c.tally.verify_ns = 0;
    }
}

/// A request just issued in `slot` meets the requests in flight: a read that
/// overlaps a write (either issued first) may see the old data, the new or a
/// mix, so it is left unchecked.
#[allow(clippy::too_many_arguments)]
fn mark_overlaps(
    slot: usize,
    offset: u64,
    len: u64,
    write: bool,
    offsets: &[u64],
    busy: &[bool],
    writing: &[bool],
    overlapped: &mut [bool],
) {
    overlapped[slot] = false;
    for other in (0..offsets.len()).filter(|&o| o != slot && busy[o]) {
        let meets = offsets[other] < offset + len && offset < offsets[other] + len;
        if meets && write != writing[other] {
            let read = if write { other } else { slot };
            overlapped[read] = true;
        }
    }
}

const SECOND_NS: u64 = 1_000_000_000;

/// The clock every request is timed with: the CPU's invariant time-stamp
/// counter calibrated against CLOCK_MONOTONIC (about 10 ns a read here,
/// against 27 for clock_gettime), or CLOCK_MONOTONIC itself where the CPU
/// has no invariant TSC. Calibrated once per process, on first use (before
/// any cell's timing starts: see [`execute_at`]).
pub fn latency_clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}

/// What [`latency_clock`] reads, for the run's conditions.
pub fn latency_clock_source() -> &'static str {
    if counter_in_use() {
        "the CPU's invariant time-stamp counter (TSC, or CNTVCT on aarch64), calibrated against CLOCK_MONOTONIC (quanta)"
    } else {
        "CLOCK_MONOTONIC"
    }
}

/// quanta reads the counter where the CPU says its TSC is invariant and has
/// RDTSCP: the same CPUID test as here.
#[cfg(target_arch = "x86_64")]
fn counter_in_use() -> bool {
    let cpuid = raw_cpuid::CpuId::new();
    let invariant = cpuid.get_advanced_power_mgmt_info().is_some_and(|p| p.has_invariant_tsc());
    let rdtscp = cpuid.get_extended_processor_and_feature_identifiers().is_some_and(|f| f.has_rdtscp());
    invariant && rdtscp
}

/// quanta reads the system counter (CNTVCT) on every aarch64 but iOS.
#[cfg(target_arch = "aarch64")]
fn counter_in_use() -> bool {
    true
}

/// Elsewhere quanta reads CLOCK_MONOTONIC.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn counter_in_use() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::Live;

    #[test]
    fn a_process_whose_only_client_is_not_rank_0_follows_the_cells() {
        // An MPI rank's process: slots for every rank, one client of its own (rank 2).
        let live = Live::new(3);
        live.start_cell(2, 1);
        live.publish(2, 10, 4096, 7);
        assert_eq!(live.snapshot(), (1, 10, 4096, 7));
        live.start_cell(2, 2);
        assert_eq!(live.snapshot(), (2, 0, 0, 0), "the new cell starts from nothing");
    }

    #[test]
    fn a_client_starting_a_cell_clears_only_its_own_second() {
        let live = Live::new(2);
        live.start_cell(0, 3);
        live.start_cell(1, 3);
        live.publish(0, 5, 50, 1);
        live.start_cell(1, 3);
        assert_eq!(live.snapshot(), (3, 5, 50, 1));
    }
}
