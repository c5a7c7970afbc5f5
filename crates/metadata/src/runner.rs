//! One client's side of a metadata run: each cell is one phase of one iteration, timed from the
//! client's own start once past the barrier to the client's last item (and the sync with
//! `--sync-after-phase`), every operation's latency recorded, every failure counted by errno.

use crate::fs::{ItemPath, LocalFs, MetaFs, RemoteMetaFs};
use crate::layout::{Counts, ItemNames, Kind, TreeNames};
use crate::pace::Pace;
use crate::plan::{Layout, MetadataPlan, Phase};
use crate::result::OpenLoad;
use iomatrix_backend::{error_kind, Place};
use iomatrix_coord::{ClientFailure, ClientWork, Start};
use iomatrix_core::CurveLoad;
use iomatrix_stats::{ClientSeries, HeldLatency, SeriesRecorder};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// What one client measured in one phase: sent to the leader (under MPI as JSON) and merged.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientFigures {
    /// The client's rank.
    pub rank: usize,
    /// Items it completed.
    pub items: u64,
    /// Items it was to do.
    pub planned: u64,
    /// From its own start past the barrier to its last item (and its sync).
    pub seconds: f64,
    /// Failed operations by errno name.
    pub failures: BTreeMap<String, u64>,
    /// Its operations' latencies: an HDR histogram, as `iomatrix_stats::Latency::to_plain_bytes`.
    pub latency: Vec<u8>,
    /// With a stonewall, in file creation: items done when it fired (or all, when it did not)
    /// and the time then.
    pub stonewall: Option<(u64, f64)>,
    /// The count every client went on to after the stonewall (the largest any reached).
    pub count_reached: Option<u64>,
    /// The tree's folders (for the tree rows' rule).
    pub folders: u64,
    /// The find phase's matches (client 0's walk); None otherwise.
    #[serde(default)]
    pub found: Option<u64>,
    /// Its items over time, from its own start: every item done, at its end, with its latency.
    #[serde(default)]
    pub series: ClientSeries,
    /// Open loop: what this client was offered, and its late items and backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenLoad>,
    /// The phase is a point of a curve that its bound ended before it (`--stop-curve`): the
    /// client left it out, and so is it from the run.
    #[serde(default)]
    pub skipped: bool,
}

/// Where the run's iterations live: a local folder or a folder on a server.
#[derive(Debug, Clone)]
pub struct Top(pub String);

impl Top {
    /// `test-dir.{iteration}-0` in the run's folder, as mdtest names it.
    pub fn iteration(&self, iteration: u32) -> String {
        if self.0.is_empty() {
            format!("test-dir.{iteration}-0")
        } else {
            format!("{}/test-dir.{iteration}-0", self.0)
        }
    }
}

/// Where the clients meet when the stonewall fires: each gives the count it reached and all
/// go on with the largest (mdtest's MPI_Allreduce with MPI_MAX).
pub trait CountMeeting: Sync {
    /// The largest of every client's `mine`; `mine` alone when the run is stopping.
    fn max_of(&self, mine: u64, stop: &AtomicBool) -> u64;
}

/// The stonewall's meeting point for the client threads of this process.
pub struct StonewallBoard {
    clients: usize,
    round: Mutex<Round>,
    said: Condvar,
}

#[derive(Default)]
struct Round {
    generation: u64,
    arrived: usize,
    max: u64,
    last: u64,
}

impl StonewallBoard {
    /// A board for `clients` threads.
    pub fn new(clients: usize) -> StonewallBoard {
        StonewallBoard { clients, round: Mutex::new(Round::default()), said: Condvar::new() }
    }
}

impl CountMeeting for StonewallBoard {
    fn max_of(&self, mine: u64, stop: &AtomicBool) -> u64 {
        let mut round = self.round.lock().unwrap_or_else(|e| e.into_inner());
        let generation = round.generation;
        round.max = round.max.max(mine);
        round.arrived += 1;
        if round.arrived == self.clients {
            round.last = round.max;
            round.max = 0;
            round.arrived = 0;
            round.generation += 1;
            self.said.notify_all();
            return round.last;
        }
        while round.generation == generation {
            if stop.load(Ordering::SeqCst) {
                return mine;
            }
            round = self.said.wait_timeout(round, Duration::from_millis(50)).unwrap_or_else(|e| e.into_inner()).0;
        }
        round.last
    }
}

/// One client's count, on a cache line of its own: clients counting side by side would
/// otherwise bounce one line between their CPUs at every item.
#[repr(align(128))]
#[derive(Default)]
pub struct Slot(pub AtomicU64);

/// The stonewall's meeting point for MPI ranks (one client each): rank 0 gathers every rank's
/// count and gives every rank the largest.
#[cfg(feature = "mpi")]
pub struct RankMeeting<'a>(pub &'a iomatrix_coord::mpi::MpiGroup);

// SAFETY: under MPI every client's work runs on the one thread that initialised MPI (the
// coordinator's `lead` drives it there), so the group is never used from two threads at once.
#[cfg(feature = "mpi")]
unsafe impl Sync for RankMeeting<'_> {}

#[cfg(feature = "mpi")]
impl CountMeeting for RankMeeting<'_> {
    /// A rank that cannot reach the others (a lost rank, a signal) goes on with its own count:
    /// the run is ending then.
    fn max_of(&self, mine: u64, _stop: &AtomicBool) -> u64 {
        let read = |b: &[u8]| b.get(..8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        match self.0.gather(mine.to_le_bytes().to_vec()) {
            Ok(Some(all)) => {
                let max = all.iter().filter_map(|b| read(b)).max().unwrap_or(mine).max(mine);
                let _ = self.0.share(Some(max.to_le_bytes().to_vec()));
                max
            }
            Ok(None) => self.0.share(None).ok().and_then(|b| read(&b)).unwrap_or(mine),
            Err(_) => mine,
        }
    }
}

/// Items done so far by each client of this process, for the live line.
pub struct LiveItems {
    /// By slot (the client's rank here, or 0 under MPI).
    pub slots: Vec<Slot>,
    /// When the phase under way started here.
    pub started: Mutex<Option<Instant>>,
    /// The last round the clients run (`--stop-curve` lowers it when every phase's curve is past
    /// its bound); the rounds after it are left out. Shared memory: refused under MPI.
    pub last_round: AtomicU32,
    /// Under `--latency-target`: the level each phase (by its place in the plan) runs next,
    /// set by the leader's search between rounds. Shared memory: refused under MPI.
    pub levels: Vec<AtomicU32>,
}

impl LiveItems {
    /// Room for `n` clients.
    pub fn new(n: usize) -> LiveItems {
        LiveItems {
            slots: (0..n.max(1)).map(|_| Slot::default()).collect(),
            started: Mutex::new(None),
            last_round: AtomicU32::new(u32::MAX),
            levels: Vec::new(),
        }
    }

    /// Room for `n` clients and a level for each of `phases` (`--latency-target`).
    pub fn with_levels(n: usize, phases: usize) -> LiveItems {
        LiveItems { levels: crate::target::Searches::first_levels(phases), ..LiveItems::new(n) }
    }

    /// The load phase `index` (its place in the plan) of `round` offers: a curve's point, or
    /// under `--latency-target` the maximum first and then the level the search set; None in
    /// closed loop.
    pub fn load(&self, plan: &MetadataPlan, index: usize, round: u32) -> Option<CurveLoad> {
        match (&plan.latency_target, round) {
            (None, _) => plan.load_of(round),
            (Some(_), 0) => Some(CurveLoad::Max),
            (Some(_), _) => {
                let level = self.levels.get(index).map_or(1, |l| l.load(Ordering::SeqCst));
                Some(CurveLoad::Percent(level * 100 / crate::target::LEVELS))
            }
        }
    }

    /// Items done in the phase under way, over this process's clients.
    pub fn total(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

/// One client's work over the run.
pub struct Worker<'a> {
    rank: usize,
    clients: usize,
    plan: &'a MetadataPlan,
    counts: Counts,
    top: Top,
    place: &'a Place<'a>,
    fs: Option<Box<dyn MetaFs>>,
    board: &'a dyn CountMeeting,
    stop: &'a AtomicBool,
    live: &'a LiveItems,
    /// Files each client has in the iteration under way (less than planned after a stonewall).
    files: u64,
    path: ItemPath,
    other: ItemPath,
    data: Vec<u8>,
    buf: Vec<u8>,
    /// The iteration's folder's modification time as it was made: find's `-newer` (IO500's
    /// timestamp file, on the file system's own clock); local folders only.
    made_at: Option<std::time::SystemTime>,
    /// The phases' latencies, made once: making a histogram (33,000 counters, 264 KiB written and
    /// faulted in) took ~0.2 ms, all of a one-folder tree phase's time; clearing one before a
    /// phase of one rmdir doubled that rmdir's time (`HeldLatency`). Lent to each phase's tally.
    spare: Option<HeldLatency>,
    /// The next phase's series recorder, made before its barrier.
    spare_series: Option<SeriesRecorder>,
    /// The phase's own start past the barrier: what its series counts from.
    origin: Instant,
    /// The next phase's arrivals (open loop), made before its barrier.
    spare_pace: Option<Pace>,
    /// Under `--curve`: this client's own rate at each phase's maximum, which its points offer
    /// shares of.
    curve_max: BTreeMap<Phase, f64>,
}

/// What a phase works through, made before its barrier: its timed part builds no name and
/// allocates nothing (a one-folder tree phase is a single rmdir of ~5 us).
#[derive(Default)]
struct Prepared {
    /// The folders a tree phase makes or removes (in that order), or readdir reads.
    folders: Vec<String>,
    /// The items' names (whose items: this client's or its neighbour's).
    names: Option<ItemNames>,
    /// The items' numbers in the order they are worked through.
    order: Vec<u64>,
}

impl Prepared {
    /// The operations the phase plans, roughly: its folders, or the items of a client.
    fn planned(&self, items_per_client: u64) -> u64 {
        if self.folders.is_empty() {
            items_per_client
        } else {
            self.folders.len() as u64
        }
    }
}

/// What a phase's loop counts.
struct Tally {
    items: u64,
    planned: u64,
    failures: BTreeMap<String, u64>,
    latency: HeldLatency,
    /// The items done, over time from `origin`: each with `bytes` (a file's written or read
    /// bytes), a write when the phase changes the tree (`writes`).
    series: SeriesRecorder,
    origin: Instant,
    bytes: u64,
    writes: bool,
    /// Open loop: each item waits for its arrival and is timed from it.
    pace: Option<Pace>,
}

impl Tally {
    /// Times `op`, counts it done or failed by its errno; an item done goes into the series at
    /// its end (the clock read that ends its latency: no read more).
    #[inline]
    fn op(&mut self, op: impl FnOnce() -> std::io::Result<()>) {
        // Open loop: from the item's intended start, however late it is issued.
        let began = match self.pace.as_mut() {
            Some(pace) => pace.wait(self.origin),
            None => Instant::now(),
        };
        let outcome = op();
        let ended = Instant::now();
        let ns = ended.saturating_duration_since(began).as_nanos() as u64;
        self.latency.record(ns);
        match outcome {
            Ok(()) => {
                self.items += 1;
                let at = ended.saturating_duration_since(self.origin).as_nanos() as u64;
                self.series.record(at, ns, self.bytes, self.writes);
            }
            Err(e) => *self.failures.entry(error_kind(&e)).or_default() += 1,
        }
    }
}

/// Everything a worker needs from the run.
pub struct WorkerSetup<'a> {
    /// The plan.
    pub plan: &'a MetadataPlan,
    /// Its counts.
    pub counts: Counts,
    /// The run's folder.
    pub top: Top,
    /// Local, or a server.
    pub place: &'a Place<'a>,
    /// The stonewall's meeting point.
    pub board: &'a dyn CountMeeting,
    /// The run's stop flag.
    pub stop: &'a AtomicBool,
    /// Live counts.
    pub live: &'a LiveItems,
    /// Clients in the run.
    pub clients: usize,
}

impl<'a> Worker<'a> {
    /// Client `rank`'s worker.
    pub fn new(rank: usize, s: &WorkerSetup<'a>) -> Worker<'a> {
        Worker {
            rank,
            clients: s.clients,
            plan: s.plan,
            counts: s.counts,
            top: s.top.clone(),
            place: s.place,
            fs: None,
            board: s.board,
            stop: s.stop,
            live: s.live,
            files: s.counts.per_client,
            path: ItemPath::with_capacity(256),
            other: ItemPath::with_capacity(256),
            data: vec![b'#'; s.plan.write_bytes as usize],
            buf: vec![0; s.plan.read_bytes as usize],
            made_at: None,
            spare: None,
            spare_series: None,
            origin: Instant::now(),
            spare_pace: None,
            curve_max: BTreeMap::new(),
        }
    }

    /// A phase's tally, on the histogram and recorder made before its barrier (fresh ones if
    /// none are left); its series counts from the phase's start (`origin`).
    fn tally(&mut self, planned: u64) -> Tally {
        let interval = self.plan.series_interval_ns;
        let latency = self.spare.take().unwrap_or_default();
        let series = self.spare_series.take().unwrap_or_else(|| SeriesRecorder::new(interval));
        Tally {
            items: 0,
            planned,
            failures: BTreeMap::new(),
            latency,
            series,
            origin: self.origin,
            bytes: 0,
            writes: true,
            pace: self.spare_pace.take(),
        }
    }

    /// The phase's histogram as bytes, once its clock has stopped (not deflated: the leader
    /// merges and deflates; deflating here wrote ~300 KB just before the next phase's barrier);
    /// the holder back for the next phase.
    fn lend_back(&mut self, mut latency: HeldLatency) -> Vec<u8> {
        let bytes = latency.finish().to_plain_bytes();
        self.spare = Some(latency);
        bytes
    }

    fn branch(&self) -> u64 {
        u64::from(self.plan.tree.branch.max(1))
    }

    /// The client `steps` strides on (mdtest -N: stat 1, read 2, remove 3).
    fn owner(&self, steps: usize) -> usize {
        (self.rank + steps * self.plan.neighbour.stride) % self.clients.max(1)
    }

    fn session(&mut self) -> Result<&mut Box<dyn MetaFs>, ClientFailure> {
        if self.fs.is_none() {
            let fs: Box<dyn MetaFs> = match self.place.connect() {
                None => Box::new(LocalFs),
                Some(Ok(remote)) => Box::new(RemoteMetaFs::new(remote)),
                Some(Err(e)) => return Err(ClientFailure::error(self.rank, format!("connecting to the server: {e}"))),
            };
            self.fs = Some(fs);
        }
        Ok(self.fs.as_mut().expect("set just above"))
    }

    /// Untimed, before an iteration's first phase: its `test-dir` and, when no tree-create
    /// phase times it, its tree.
    fn begin_iteration(&mut self, iteration: u32) -> Result<(), ClientFailure> {
        self.files = self.counts.per_client;
        let dir = self.top.iteration(iteration);
        let rank = self.rank;
        if self.plan.in_place && !self.plan.makes_items() {
            // On what an earlier run left: nothing is made; a missing item is its phase's failure.
            if self.plan.phases.contains(&Phase::Find) && self.place.remote_folder().is_none() {
                self.made_at = std::fs::metadata(&dir).and_then(|m| m.modified()).ok();
            }
            return Ok(());
        }
        let fs = self.session()?;
        let mut path = ItemPath::with_capacity(dir.len());
        path.set(|t| {
            t.clear();
            t.push_str(&dir);
        });
        match fs.mkdir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(ClientFailure::error(rank, format!("making {dir}: {e}"))),
        }
        if self.plan.phases.contains(&Phase::Find) && self.place.remote_folder().is_none() {
            self.made_at = std::fs::metadata(&dir).and_then(|m| m.modified()).ok();
        }
        if !self.plan.phases.contains(&Phase::TreeCreate) {
            let folders = self.prepare(Phase::TreeCreate, iteration);
            let mut tally = self.tree(&folders, true);
            if self.plan.in_place {
                // In place, the tree an earlier run left is the tree to work in.
                tally.failures.remove("EEXIST");
            }
            if let Some((errno, _)) = tally.failures.iter().next() {
                return Err(ClientFailure::error(rank, format!("making the tree in {dir}: {errno}")));
            }
        }
        Ok(())
    }

    fn tree_is_mine(&self) -> bool {
        self.plan.layout == Layout::PerClient || self.rank == 0
    }

    /// What `phase` of `iteration` works through, untimed before its barrier.
    fn prepare(&self, phase: Phase, iteration: u32) -> Prepared {
        let random = self.plan.random_stat_seed.is_some();
        let items = |kind, steps, count, shuffled| Prepared {
            names: Some(self.names(iteration, kind, self.owner(steps))),
            order: self.order(count, shuffled),
            ..Prepared::default()
        };
        match phase {
            Phase::TreeCreate | Phase::TreeRemove if self.tree_is_mine() => {
                let names = TreeNames::of(self.plan.layout, self.rank);
                let mut folders = names.folders(&self.top.iteration(iteration), &self.counts, self.branch());
                if phase == Phase::TreeRemove {
                    // Children first.
                    folders.reverse();
                }
                Prepared { folders, ..Prepared::default() }
            }
            Phase::DirReaddir => {
                let (names, top) = (TreeNames::of(self.plan.layout, self.rank), self.top.iteration(iteration));
                let holding = self.counts.first_holding..self.counts.folders;
                Prepared {
                    folders: holding.map(|f| names.folder(&top, f, self.branch())).collect(),
                    ..Prepared::default()
                }
            }
            Phase::FileCreate => {
                Prepared { names: Some(self.names(iteration, Kind::File, self.rank)), ..Prepared::default() }
            }
            Phase::DirRename => {
                Prepared { names: Some(self.names(iteration, Kind::Dir, self.owner(1))), ..Prepared::default() }
            }
            Phase::DirCreate => items(Kind::Dir, 0, self.counts.per_client, false),
            Phase::DirStat => items(Kind::Dir, 1, self.counts.per_client, random),
            Phase::DirRemove => items(Kind::Dir, 3, self.counts.per_client, false),
            Phase::FileStat => items(Kind::File, 1, self.files, random),
            Phase::FileRead => items(Kind::File, 2, self.files, random),
            Phase::FileRemove => items(Kind::File, 3, self.files, false),
            Phase::TreeCreate | Phase::TreeRemove | Phase::Find => Prepared::default(),
        }
    }

    /// mkdir (or rmdir, children first) of every folder of this client's tree, as prepared;
    /// nothing for a client other than 0 in a shared tree (mdtest's rank 0 makes it).
    fn tree(&mut self, prepared: &Prepared, create: bool) -> Tally {
        let folders = &prepared.folders;
        let mut tally = self.tally(folders.len() as u64);
        let fs = self.fs.as_mut().expect("a session before the tree");
        for folder in folders {
            self.path.set(|t| {
                t.clear();
                t.push_str(folder);
            });
            let path = &self.path;
            if create {
                tally.op(|| fs.mkdir(path));
            } else {
                tally.op(|| fs.rmdir(path));
            }
        }
        tally
    }

    fn names(&self, iteration: u32, kind: Kind, owner: usize) -> ItemNames {
        let names = TreeNames::of(self.plan.layout, owner);
        ItemNames::new(&self.top.iteration(iteration), &names, &self.counts, self.branch(), kind, owner)
    }

    /// The items' order: 0..n, or shuffled with the seed plus the rank (mdtest -R).
    fn order(&self, n: u64, random: bool) -> Vec<u64> {
        let mut order: Vec<u64> = (0..n).collect();
        if let (true, Some(seed)) = (random, self.plan.random_stat_seed) {
            iomatrix_random::Generator::seeded(seed.wrapping_add(self.rank as u64)).shuffle(&mut order);
        }
        order
    }
}

impl ClientWork for Worker<'_> {
    type Figures = ClientFigures;

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<ClientFigures, ClientFailure> {
        let phases = self.plan.phases.len().max(1);
        let iteration = (index / phases) as u32;
        let phase = self.plan.phases[index % phases];
        let stonewalled = phase == Phase::FileCreate && self.plan.stonewall.is_some();
        if iteration > self.live.last_round.load(Ordering::SeqCst) {
            return Ok(self.left_out());
        }
        let ready = self.session().map(|_| ()).and_then(|()| match index % phases {
            0 => self.begin_iteration(iteration),
            _ => Ok(()),
        });
        if let Err(failure) = ready {
            if stonewalled {
                // The others meet at the board: this client's count is none.
                let _ = start.together();
                self.board.max_of(0, self.stop);
            }
            return Err(failure);
        }
        let slot = self.rank.min(self.live.slots.len() - 1);
        self.live.slots[slot].0.store(0, Ordering::Relaxed);
        let prepared = self.prepare(phase, iteration);
        let planned = prepared.planned(self.counts.per_client);
        let load = self.live.load(self.plan, index % phases, iteration);
        self.spare_pace = self.pace_for(phase, load, planned, iteration)?;
        self.spare.get_or_insert_with(HeldLatency::new).ready_for(planned);
        self.spare_series = Some(SeriesRecorder::new(self.plan.series_interval_ns));
        start.together()?;
        // The client's own start, once it is past the barrier and running, as each mdtest rank
        // takes its own timestamp after MPI_Barrier returns: a thread's wake-up after the
        // barrier (0.1-0.2 ms here) is no part of a phase (a tree of 21 folders takes ~0.1 ms).
        let origin = Instant::now();
        self.origin = origin;
        *self.live.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(origin);
        let (mut tally, stonewall, found) = self.timed(phase, iteration, prepared, origin)?;
        let count_reached = stonewall.map(|_| self.files);
        if self.plan.sync_after_phase {
            let dir = self.top.iteration(iteration);
            self.path.set(|t| {
                t.clear();
                t.push_str(&dir);
            });
            let (fs, path) = (self.fs.as_mut().expect("a session"), &self.path);
            // Timed with the phase, as mdtest -Y; counted as no item.
            if let Err(e) = fs.sync(path) {
                *tally.failures.entry(error_kind(&e)).or_default() += 1;
            }
        }
        let took = origin.elapsed();
        let seconds = took.as_secs_f64();
        if phase == Phase::TreeRemove && self.plan.in_place {
            self.remove_iteration_folder(iteration);
        }
        if self.live.load(self.plan, index % phases, iteration) == Some(CurveLoad::Max)
            && phase.paced()
            && seconds > 0.0
        {
            self.curve_max.insert(phase, tally.items as f64 / seconds);
        }
        Ok(ClientFigures {
            rank: self.rank,
            items: tally.items,
            planned: tally.planned,
            seconds,
            failures: tally.failures,
            latency: self.lend_back(tally.latency),
            stonewall,
            count_reached,
            folders: self.counts.folders,
            found,
            series: tally.series.finish(took.as_nanos() as u64),
            open: tally.pace.as_ref().map(Pace::load),
            skipped: false,
        })
    }
}

/// Seeds a client's arrivals apart from its other draws (the order of `--random-stat`).
const ARRIVALS_STREAM: u64 = 0xA441_7A15;

impl Worker<'_> {
    /// The phase's timed part: its tally, the stonewall's (items, seconds) where one fired, and
    /// find's matches.
    #[allow(clippy::type_complexity)]
    fn timed(
        &mut self,
        phase: Phase,
        iteration: u32,
        prepared: Prepared,
        origin: Instant,
    ) -> Result<(Tally, Option<(u64, f64)>, Option<u64>), ClientFailure> {
        Ok(match phase {
            Phase::TreeCreate => (self.tree(&prepared, true), None, None),
            Phase::TreeRemove => (self.tree(&prepared, false), None, None),
            Phase::FileCreate => {
                let (tally, wall) = self.file_create(&prepared, origin);
                (tally, wall, None)
            }
            Phase::Find => {
                let (tally, matched) = self.find(iteration)?;
                (tally, None, matched)
            }
            Phase::DirRename => (self.rename(&prepared), None, None),
            Phase::DirReaddir => (self.readdir(&prepared), None, None),
            other => (self.items_phase(other, prepared), None, None),
        })
    }

    /// The arrivals of `phase` in round `round`, for its `items`: open loop under `--rate` or at
    /// a curve's point after its maximum; None in closed loop (no rate, a curve's maximum, a
    /// phase that is not paced). A point at a percentage offers that share of the rate this
    /// client achieved at the phase's maximum; a rate (`--rate`, a point's N/s) is split evenly
    /// over the clients.
    fn pace_for(
        &self,
        phase: Phase,
        load: Option<CurveLoad>,
        items: u64,
        round: u32,
    ) -> Result<Option<Pace>, ClientFailure> {
        if !phase.paced() {
            return Ok(None);
        }
        let clients = self.clients.max(1) as f64;
        let arrival = match (&self.plan.curve, &self.plan.latency_target) {
            (Some(curve), _) => curve.arrival,
            (None, Some(target)) => target.arrival,
            (None, None) => Default::default(),
        };
        let (per_sec, arrival) = match (self.plan.open, load) {
            (Some(open), _) => (open.per_sec as f64 / clients, open.arrival),
            (None, Some(CurveLoad::Rate(total))) => (total as f64 / clients, arrival),
            (None, Some(CurveLoad::Percent(p))) => match self.curve_max.get(&phase) {
                Some(max) if *max > 0.0 => (max * f64::from(p) / 100.0, arrival),
                _ => {
                    let why = format!(
                        "client {} completed no item of {} at its curve's maximum, so it has no share of it to \
                         offer at {p}%; see the maximum's cell",
                        self.rank,
                        phase.name()
                    );
                    return Err(ClientFailure::error(self.rank, why));
                }
            },
            _ => return Ok(None),
        };
        if per_sec > iomatrix_harness::curve::MAX_RATE_PER_CLIENT as f64 {
            let why = format!(
                "{}: {per_sec:.0} items a second per client puts arrivals less than 1 us apart, finer than a client \
                 issues them; give a lower rate or more clients",
                phase.name()
            );
            return Err(ClientFailure::error(self.rank, why));
        }
        let seed = ARRIVALS_STREAM ^ ((self.rank as u64) << 32) ^ (u64::from(round) << 8) ^ phase as u64;
        Ok(Some(Pace::new(arrival, per_sec, seed, items)))
    }

    /// The figures of a phase this client left out (the rest of a curve its bound ended): none,
    /// and said so.
    fn left_out(&self) -> ClientFigures {
        ClientFigures {
            rank: self.rank,
            items: 0,
            planned: 0,
            seconds: 0.0,
            failures: BTreeMap::new(),
            latency: iomatrix_stats::Latency::new().to_plain_bytes(),
            stonewall: None,
            count_reached: None,
            folders: self.counts.folders,
            found: None,
            series: ClientSeries::default(),
            open: None,
            skipped: true,
        }
    }
}

impl Worker<'_> {
    /// create of every file (or up to the stonewall, then on to the largest count any client
    /// reached); the stonewall's (items, seconds) when one is set.
    fn file_create(&mut self, prepared: &Prepared, origin: Instant) -> (Tally, Option<(u64, f64)>) {
        let names = prepared.names.as_ref().expect("file-create is prepared with its names");
        let planned = self.counts.per_client;
        let mut tally = self.tally(planned);
        tally.bytes = self.plan.write_bytes;
        let wall = self.plan.stonewall;
        let mut done = 0;
        while done < planned {
            self.create_one(names, done, &mut tally);
            done += 1;
            if wall.is_some_and(|w| origin.elapsed() > w) || self.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        let Some(_) = wall else {
            return (tally, None);
        };
        let at_wall = (done, origin.elapsed().as_secs_f64());
        let reached = self.board.max_of(done, self.stop);
        if self.stop.load(Ordering::Relaxed) {
            // Stopped (a signal, a failed client), not walled: the cell keeps the count planned,
            // so it is stored as not complete, never as a stonewall that fired.
            return (tally, None);
        }
        while done < reached && !self.stop.load(Ordering::Relaxed) {
            self.create_one(names, done, &mut tally);
            done += 1;
        }
        tally.planned = reached;
        self.files = reached;
        (tally, Some(at_wall))
    }

    /// IO500's find, by client 0 alone as one walker (the others examine nothing): the
    /// iteration's folder walked, each entry examined an item, the files of `*01*`, the files'
    /// size and newer than the folder's making matched. A server's folder is refused: the walk
    /// reads local folders.
    fn find(&mut self, iteration: u32) -> Result<(Tally, Option<u64>), ClientFailure> {
        if self.rank != 0 {
            return Ok((self.tally(0), None));
        }
        if self.place.remote_folder().is_some() {
            return Err(ClientFailure::error(self.rank, "find walks local folders only, not a server's".into()));
        }
        let rule = crate::find::FindRule {
            name: Some("*01*".to_string()),
            size: Some(self.plan.write_bytes),
            newer_than: self.made_at,
        };
        let (root, stop) = (self.top.iteration(iteration), self.stop);
        let mut tally = self.tally(0);
        tally.writes = false;
        // Each folder's entries, examined together, are one batch of the series.
        let (series, origin) = (&mut tally.series, tally.origin);
        let mut each_folder = |entries: u64, began: Instant| {
            let end = Instant::now();
            let (at, took) = (end.saturating_duration_since(origin), end.saturating_duration_since(began));
            series.record_many(at.as_nanos() as u64, entries, took.as_nanos() as u64, 0, false);
        };
        let stopping = || stop.load(Ordering::Relaxed);
        let (walked, _) = crate::find::find_watched(std::path::Path::new(&root), &rule, &stopping, &mut each_folder)
            .map_err(|e| ClientFailure::error(self.rank, format!("find in {root}: {e}")))?;
        tally.planned = walked.examined;
        tally.items = walked.examined;
        for (kind, n) in walked.errors.by_kind {
            *tally.failures.entry(kind).or_default() += n;
        }
        Ok((tally, Some(walked.found)))
    }

    #[inline]
    fn create_one(&mut self, names: &ItemNames, i: u64, tally: &mut Tally) {
        self.path.set(|t| names.write(i, t));
        let (fs, path, data, fsync) = (self.fs.as_mut().expect("a session"), &self.path, &self.data, self.plan.fsync);
        tally.op(|| fs.create(path, data, fsync));
        self.live.slots[self.rank.min(self.live.slots.len() - 1)].0.fetch_add(1, Ordering::Relaxed);
    }

    /// The phases over items, as prepared: dir-create, and stat, read, remove of what exists.
    fn items_phase(&mut self, phase: Phase, prepared: Prepared) -> Tally {
        let Some(names) = prepared.names else {
            return self.tally(0);
        };
        let order = prepared.order;
        let mut tally = self.tally(order.len() as u64);
        tally.writes = matches!(phase, Phase::DirCreate | Phase::DirRemove | Phase::FileRemove);
        if phase == Phase::FileRead {
            tally.bytes = self.plan.read_bytes;
        }
        let slot = self.rank.min(self.live.slots.len() - 1);
        for i in order {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            self.path.set(|t| names.write(i, t));
            let (fs, path, buf) = (self.fs.as_mut().expect("a session"), &self.path, &mut self.buf);
            match phase {
                Phase::DirCreate => tally.op(|| fs.mkdir(path)),
                Phase::DirStat | Phase::FileStat => tally.op(|| fs.stat(path)),
                Phase::DirRemove => tally.op(|| fs.rmdir(path)),
                Phase::FileRead => tally.op(|| fs.read(path, buf)),
                _ => tally.op(|| fs.unlink(path)),
            }
            self.live.slots[slot].0.fetch_add(1, Ordering::Relaxed);
        }
        tally
    }

    /// mdtest's directory rename: the first item to `NAME-XX`, each next one to the name the
    /// one before had, and `NAME-XX` to the last free name: every name but one stays in use.
    fn rename(&mut self, prepared: &Prepared) -> Tally {
        let count = self.counts.per_client;
        let Some(names) = prepared.names.as_ref().filter(|_| count > 1) else {
            return self.tally(0);
        };
        let mut tally = self.tally(count);
        let mut first = String::new();
        names.write(0, &mut first);
        first.push_str("-XX");
        let mut last = first.clone();
        // Two buffers swapped each step: no allocation per rename.
        let mut current = String::with_capacity(first.len() + 16);
        for i in 0..count {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            if i == count - 1 {
                current.clear();
                current.push_str(&first);
            } else {
                names.write(i, &mut current);
            }
            self.path.set(|t| {
                t.clear();
                t.push_str(&current);
            });
            self.other.set(|t| {
                t.clear();
                t.push_str(&last);
            });
            let (fs, from, to) = (self.fs.as_mut().expect("a session"), &self.path, &self.other);
            tally.op(|| fs.rename(from, to));
            std::mem::swap(&mut last, &mut current);
        }
        tally
    }

    /// In place, after the tree's removal and untimed (as mdtest removes its `test-dir` after
    /// the tree-removal's time): rmdir of the iteration's folder, which succeeds only once it
    /// is empty. Every client that removed a tree tries; the last to finish finds every tree
    /// gone. A folder that still holds something (another client's tree, a user's file) stays.
    fn remove_iteration_folder(&mut self, iteration: u32) {
        if !self.tree_is_mine() {
            return;
        }
        let dir = self.top.iteration(iteration);
        self.path.set(|t| {
            t.clear();
            t.push_str(&dir);
        });
        if let Some(fs) = self.fs.as_mut() {
            let _ = fs.rmdir(&self.path);
        }
    }

    /// iomatrix's own: readdir of every folder of this client's tree that holds items.
    fn readdir(&mut self, prepared: &Prepared) -> Tally {
        let folders = &prepared.folders;
        let mut tally = self.tally(folders.len() as u64);
        tally.writes = false;
        for folder in folders {
            self.path.set(|t| {
                t.clear();
                t.push_str(folder);
            });
            let (fs, path) = (self.fs.as_mut().expect("a session"), &self.path);
            tally.op(|| fs.readdir(path).map(|_| ()));
        }
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_gives_every_client_the_largest_count_round_after_round() {
        let (board, stop) = (&StonewallBoard::new(3), &AtomicBool::new(false));
        for round in 0..3u64 {
            let got: Vec<u64> = std::thread::scope(|s| {
                let handles: Vec<_> =
                    (0..3u64).map(|c| s.spawn(move || board.max_of(c * 10 + round, stop))).collect::<Vec<_>>();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(got, vec![20 + round; 3]);
        }
        // A stopping run does not wait for a client that will not come.
        stop.store(true, Ordering::SeqCst);
        assert_eq!(board.max_of(7, stop), 7);
    }
}
