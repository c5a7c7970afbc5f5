//! Runs a file-server plan: one thread per connection (small stacks), all
//! released together by the leader at the start of each phase, every
//! operation timed on its own.
//!
//! Memory stays bounded with many connections: a connection keeps only
//! counters and a small buffer of latency samples, which it adds to the
//! phase's shared histograms (one per operation type) whenever it fills.
//! A connection that fails (EMFILE, ENOSPC, EIO, ...) stops where it is,
//! keeps its error, and sits out the rest of the run; under
//! `--on-client-error continue` the others go on, under `abort` (the
//! default) they stop at once and the run ends on that failure.

use crate::files::{make_remote_folder, ConnectionFiles, LocalFiles, OpenFor, RemoteFiles};
use crate::plan::{FileserverPlan, MixVisits, Op, Phase, Planned};
use crate::sys::drop_caches;
use iomatrix_backend::error_kind;
use iomatrix_backend::Place;
use iomatrix_coord::{ClientFailure, Ending, OnClientError};
use iomatrix_core::figures::or_default;
use iomatrix_stats::{kib_per_sec, ClientSeries, Latency, Measured, SeriesRecorder, Span};
use iomatrix_verify::Content;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Stack of each connection's thread: the connection's loop needs little,
/// and 1000 connections must not cost 1000 default (2 MiB) stacks.
pub const STACK_SIZE: usize = 128 * 1024;
/// Stack of a connection's thread with a protocol client: its session's
/// runtime polls the client's futures on this stack, which need more room
/// than a system call (address space only: untouched pages cost no memory).
pub const REMOTE_STACK_SIZE: usize = 2 * 1024 * 1024;
/// Latency samples a connection holds before adding them to the shared histograms.
pub const SAMPLE_BUFFER: usize = 256;
const NS_BITS: u32 = 58;
const NS_MASK: u64 = (1 << NS_BITS) - 1;

/// Why a connection stopped short. Stored with its connection's figures: what a stored one
/// lacks reads as empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ConnectionError {
    /// What it is counted under: the errno name (`ENOSPC`, `EMFILE`, `EIO`), or
    /// `size mismatch` (a file read back is not the size written), `thread` (no thread could be started).
    #[serde(deserialize_with = "or_default")]
    pub kind: String,
    /// The operation that failed; none for the connection's setup.
    #[serde(deserialize_with = "or_default")]
    pub op: Option<Op>,
    /// One line: what failed, where, and the system's word for it.
    #[serde(deserialize_with = "or_default")]
    pub message: String,
}

/// One connection's figures for one phase.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ConnectionFigures {
    /// The connection's number over every client.
    pub rank: usize,
    /// What the plan asked of this connection in this phase.
    pub planned: Planned,
    /// What it did: files finished, bytes moved, operations that succeeded.
    pub done: Planned,
    /// When it began work (after the common release; later when its thread
    /// was scheduled late), its last operation, and its CPU; none for a
    /// connection that did not run this phase.
    pub measured: Option<Measured>,
    /// The phase's common release on the run's clock (set when the phase is merged).
    pub released_ns: u64,
    /// Why it failed in this phase, if it did.
    pub error: Option<ConnectionError>,
    /// It failed in an earlier phase and did nothing in this one.
    pub skipped: bool,
    /// It stopped because the run was told to stop.
    pub stopped: bool,
    /// Its untimed setup before the first phase (connecting its own session
    /// to the server, making its folder); 0 in later phases.
    #[serde(default)]
    pub setup_ns: u64,
    /// Blocks checked and mismatches found (`--verify`), and the time
    /// stamping and checking took (between the timed operations, inside the phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<iomatrix_verify::Tally>,
    /// Its operations over time from its own start: merged into its phase's
    /// ([`PhaseResult::series`]), never stored by connection.
    #[serde(skip)]
    pub series: ClientSeries,
}

impl ConnectionFigures {
    fn idle(rank: usize, planned: Planned) -> ConnectionFigures {
        ConnectionFigures {
            rank,
            planned,
            done: Planned::default(),
            measured: None,
            released_ns: 0,
            error: None,
            skipped: false,
            stopped: false,
            setup_ns: 0,
            verify: None,
            series: ClientSeries::default(),
        }
    }

    /// The connection's phase time as a client sees it: the common release
    /// (all connections start together) to its last operation. Time spent
    /// waiting for a CPU counts, as a client waits for a busy server.
    pub fn ns(&self) -> u64 {
        self.measured.map_or(0, |m| {
            let from = if self.released_ns > 0 { self.released_ns.min(m.start_ns) } else { m.start_ns };
            m.end_ns.saturating_sub(from)
        })
    }

    /// How long after the common release the connection began (its thread waiting for a CPU).
    pub fn start_delay_ns(&self) -> u64 {
        self.measured.map_or(0, |m| m.start_ns.saturating_sub(self.released_ns))
    }

    /// KB/s as seed 003 reports it: this connection's bytes over its phase time.
    pub fn kib_per_sec(&self) -> f64 {
        kib_per_sec(self.done.bytes, Duration::from_nanos(self.ns()))
    }

    /// Finished the phase: neither failed (now or before) nor stopped.
    pub fn ok(&self) -> bool {
        self.error.is_none() && !self.skipped && !self.stopped
    }

    /// Planned but not done because the connection failed (now or earlier).
    pub fn lost(&self) -> Planned {
        if self.error.is_none() && !self.skipped {
            return Planned::default();
        }
        Planned {
            files: self.planned.files.saturating_sub(self.done.files),
            bytes: self.planned.bytes.saturating_sub(self.done.bytes),
            ops: self.planned.ops.minus(&self.done.ops),
        }
    }
}

/// A phase merged over all connections.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PhaseResult {
    /// Position in the run (0 = write).
    pub index: usize,
    /// Which phase.
    pub phase: Phase,
    /// One histogram per operation type, indexed by [`Op::index`]: every
    /// connection's samples, merged exactly.
    pub latency: Vec<Latency>,
    /// Ordered by rank.
    pub connections: Vec<ConnectionFigures>,
    /// What the plan asked of all connections.
    pub planned: Planned,
    /// What they did.
    pub done: Planned,
    /// Operations, files and bytes planned for connections that failed but not done.
    pub lost: Planned,
    /// Completion time: the common release to the last connection's last operation.
    pub wall_ns: u64,
    /// All connections' CPU time in user mode (ns).
    pub user_ns: u64,
    /// All connections' CPU time in the kernel (ns).
    pub sys_ns: u64,
    /// Mean over the connections that finished of their KB/s, each its bytes
    /// over the release to its last operation (seed 003's figure).
    pub avg_connection_kib_per_sec: f64,
    /// All bytes over the completion time.
    pub total_kib_per_sec: f64,
    /// Connections that finished the phase.
    pub connections_ok: usize,
    /// Failed in this phase.
    pub connections_failed: usize,
    /// Failed in an earlier phase, so did nothing here.
    pub connections_skipped: usize,
    /// Connections that failed in this phase, by error kind.
    pub errors: BTreeMap<String, u64>,
    /// The page cache was dropped (sync + drop_caches) right before this phase.
    pub caches_dropped: bool,
    /// Its operations over time, every connection's merged interval by interval (each from its
    /// own start); with its histograms, so that clients merge exactly.
    #[serde(default)]
    pub series: ClientSeries,
}

impl PhaseResult {
    /// The merged histogram of one operation type.
    pub fn latency(&self, op: Op) -> &Latency {
        &self.latency[op.index()]
    }

    /// The connections' CPU over the completion time, in % of one core.
    pub fn cpu_percent(&self) -> f64 {
        iomatrix_stats::cpu_percent(self.user_ns + self.sys_ns, self.wall_ns)
    }

    /// Phase `index` of a run where no client finished it: nothing done, all of `planned` lost,
    /// no connection's figures (they were lost with their clients).
    pub fn not_done(index: usize, phase: Phase, planned: Planned) -> PhaseResult {
        PhaseResult {
            index,
            phase,
            latency: Op::ALL.iter().map(|_| Latency::new()).collect(),
            connections: Vec::new(),
            planned,
            done: Planned::default(),
            lost: planned,
            wall_ns: 0,
            user_ns: 0,
            sys_ns: 0,
            avg_connection_kib_per_sec: 0.0,
            total_kib_per_sec: 0.0,
            connections_ok: 0,
            connections_failed: 0,
            connections_skipped: 0,
            errors: BTreeMap::new(),
            caches_dropped: false,
            series: ClientSeries::default(),
        }
    }

    fn merge(
        index: usize,
        phase: Phase,
        mut connections: Vec<ConnectionFigures>,
        latency: Vec<Latency>,
        start_ns: u64,
        caches_dropped: bool,
    ) -> PhaseResult {
        connections.sort_by_key(|c| c.rank);
        for c in &mut connections {
            c.released_ns = start_ns;
        }
        let sum = |f: &dyn Fn(&ConnectionFigures) -> Planned| {
            connections.iter().map(f).fold(Planned::default(), |a, b| a.plus(&b))
        };
        let planned = sum(&|c| c.planned);
        let done = sum(&|c| c.done);
        let lost = sum(&|c| c.lost());
        let end_ns = connections.iter().filter_map(|c| c.measured.map(|m| m.end_ns)).max();
        let wall_ns = end_ns.map_or(0, |e| e.saturating_sub(start_ns));
        let ok: Vec<&ConnectionFigures> = connections.iter().filter(|c| c.ok()).collect();
        let avg_connection_kib_per_sec =
            if ok.is_empty() { 0.0 } else { ok.iter().map(|c| c.kib_per_sec()).sum::<f64>() / ok.len() as f64 };
        let mut errors = BTreeMap::new();
        for e in connections.iter().filter(|c| !c.skipped).filter_map(|c| c.error.as_ref()) {
            *errors.entry(e.kind.clone()).or_insert(0) += 1;
        }
        let ran: Vec<&ClientSeries> = connections.iter().filter(|c| c.measured.is_some()).map(|c| &c.series).collect();
        let series = ClientSeries::merge(&ran);
        PhaseResult {
            index,
            phase,
            latency,
            planned,
            done,
            lost,
            wall_ns,
            user_ns: connections.iter().filter_map(|c| c.measured).map(|m| m.cpu.user_ns).sum(),
            sys_ns: connections.iter().filter_map(|c| c.measured).map(|m| m.cpu.sys_ns).sum(),
            avg_connection_kib_per_sec,
            total_kib_per_sec: kib_per_sec(done.bytes, Duration::from_nanos(wall_ns)),
            connections_ok: ok.len(),
            connections_failed: connections.iter().filter(|c| c.error.is_some() && !c.skipped).count(),
            connections_skipped: connections.iter().filter(|c| c.skipped).count(),
            errors,
            caches_dropped,
            series,
            connections,
        }
    }
}

/// Counters the connections keep current, for a live display.
#[derive(Default)]
pub struct Live {
    phase: AtomicUsize,
    files_total: AtomicU64,
    files_done: AtomicU64,
    bytes: AtomicU64,
    failed: AtomicUsize,
    started: AtomicBool,
}

/// What [`Live::snapshot`] sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSnapshot {
    /// Index into the plan's phases; meaningful once `started`.
    pub phase: usize,
    /// Whether the phase has started.
    pub started: bool,
    /// Files finished in this phase so far.
    pub files_done: u64,
    /// Files the phase does.
    pub files_total: u64,
    /// Bytes moved in this phase so far.
    pub bytes: u64,
    /// Connections failed so far in the run.
    pub failed: usize,
}

impl Live {
    /// A live display at the start: nothing done.
    pub fn new() -> Live {
        Live::default()
    }

    /// What the connections have done so far.
    pub fn snapshot(&self) -> LiveSnapshot {
        LiveSnapshot {
            phase: self.phase.load(Ordering::Relaxed),
            started: self.started.load(Ordering::Relaxed),
            files_done: self.files_done.load(Ordering::Relaxed),
            files_total: self.files_total.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }

    fn start_phase(&self, phase: usize, files_total: u64) {
        self.files_done.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
        self.files_total.store(files_total, Ordering::Relaxed);
        self.phase.store(phase, Ordering::Relaxed);
        self.started.store(true, Ordering::Relaxed);
    }
}

/// Runs `plan` with connection N's files in `conn-N/` of `place`: a local
/// folder that exists and is empty (else an error), or a folder on a server
/// that `execute` makes (an error if it cannot); the caller removes it.
/// On a server each connection connects its own session before the first
/// phase, untimed.
/// `before_phase(k)` is called when every connection is ready for phase k
/// (and the page cache is dropped, with `drop_caches`), right before they
/// are let go (many clients wait there for each other); it answers the
/// instant the phase's clock starts at (the clients' common start), or None,
/// which ends the run as interrupted. `on_phase` gets each phase as soon as all connections
/// are through it, before the next begins; an error from it ends the run. `stop` is checked before every operation: a
/// raised stop drops the phase under way and keeps the finished ones.
/// Under `on_error` abort the first connection that fails raises `stop`:
/// its phase is not handed on and the run ends as `ClientFailed` with its
/// error; under continue it sits out the rest, and the run completes with
/// its error in the results. Returns how many phases `on_phase` accepted
/// and how the run ended.
pub fn execute<E: std::fmt::Display>(
    plan: &FileserverPlan,
    place: &Place<'_>,
    local_dir: &Path,
    (stop, on_error): (&AtomicBool, OnClientError),
    live: &Live,
    before_phase: &mut dyn FnMut(usize) -> Option<Instant>,
    on_phase: impl FnMut(&PhaseResult) -> Result<(), E>,
) -> io::Result<(usize, Ending)> {
    plan.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let conn_dir = |rank: usize| format!("conn-{rank:04}");
    // A folder that is not one fails the whole run (a client, under many), not each connection.
    match place {
        Place::Local => {
            let workdir = local_dir;
            match std::fs::metadata(workdir) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{}: not a folder", workdir.display()),
                    ))
                }
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", workdir.display()))),
            }
            let files = |rank| Ok(LocalFiles::new(workdir.join(conn_dir(rank))));
            run_connections(plan, &files, STACK_SIZE, (stop, on_error), live, before_phase, on_phase)
        }
        Place::Remote { connect, folder } => {
            let connect = *connect;
            make_remote_folder(connect, folder)?;
            let files = |rank| Ok(RemoteFiles::new(connect()?, format!("{folder}/{}", conn_dir(rank))));
            run_connections(plan, &files, REMOTE_STACK_SIZE, (stop, on_error), live, before_phase, on_phase)
        }
    }
}

/// [`execute`] with connection N's files from `files(N)`, called in the
/// connection's own thread before the first phase.
fn run_connections<F: ConnectionFiles, E: std::fmt::Display>(
    plan: &FileserverPlan,
    files: &(dyn Fn(usize) -> io::Result<F> + Sync),
    stack_size: usize,
    (stop, on_error): (&AtomicBool, OnClientError),
    live: &Live,
    before_phase: &mut dyn FnMut(usize) -> Option<Instant>,
    mut on_phase: impl FnMut(&PhaseResult) -> Result<(), E>,
) -> io::Result<(usize, Ending)> {
    let phases = plan.phases();
    let shared = Shared {
        plan,
        gate: Gate::default(),
        hists: phases.iter().map(|_| Mutex::new(Op::ALL.iter().map(|_| Latency::new()).collect())).collect(),
        data: incompressible(plan.record.bytes() as usize, plan.seed),
        stop,
        abort: on_error == OnClientError::Abort,
        live,
        epoch: Instant::now(),
    };
    let (tx, rx) = mpsc::channel::<(usize, ConnectionFigures)>();
    let (accepted, ending) = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(plan.connections);
        let mut unborn: Vec<(usize, String)> = Vec::new();
        for rank in 0..plan.connections {
            let tx = tx.clone();
            let shared = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("conn-{rank}"))
                .stack_size(stack_size)
                .spawn_scoped(scope, move || Connection::run(rank, shared, files, &tx));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => unborn.push((rank, format!("{} ({e})", error_kind(&e)))),
            }
        }
        drop(tx);
        let led = lead(&shared, &phases, &rx, (handles.len(), &unborn), before_phase, &mut on_phase);
        for handle in handles {
            // A panicking connection was counted as failed above; its panic ends here.
            let _ = handle.join();
        }
        led
    });
    Ok((accepted, ending))
}

/// The leader's part of [`run_connections`]: at the gate before each of `phases`, and once after
/// the last, it waits for the `parties` (the connections whose thread started; `unborn` those
/// whose thread did not) and hands on the phase before; then it drops the caches and opens the
/// gate for the next. Returns how many phases `on_phase` accepted, and how the run ended.
fn lead<E: std::fmt::Display>(
    shared: &Shared,
    phases: &[Phase],
    rx: &mpsc::Receiver<(usize, ConnectionFigures)>,
    (parties, unborn): (usize, &[(usize, String)]),
    before_phase: &mut dyn FnMut(usize) -> Option<Instant>,
    on_phase: &mut impl FnMut(&PhaseResult) -> Result<(), E>,
) -> (usize, Ending) {
    let (plan, stop, live) = (shared.plan, shared.stop, shared.live);
    let mut accepted = 0;
    let (mut start_ns, mut dropped) = (0u64, false);
    let mut gone = vec![false; plan.connections];
    for k in 0..=phases.len() {
        shared.gate.wait_all(parties);
        if k > 0 {
            let phase = phases[k - 1];
            let figures = phase_figures(plan, rx, (k, phase), unborn, &mut gone);
            // Under abort the first failed connection stopped the others (they read as
            // stopped): the phase is not kept, and the run ends on that failure.
            if let Some(message) = shared.abort.then(|| first_failure(&figures)).flatten() {
                stop.store(true, Ordering::SeqCst);
                shared.gate.open(k, false);
                return (
                    accepted,
                    Ending::ClientFailed { cell: k - 1, failures: vec![ClientFailure::error(0, message)] },
                );
            }
            if figures.iter().any(|f| f.stopped) {
                shared.gate.open(k, false);
                return (accepted, Ending::Interrupted);
            }
            let latency = std::mem::take(&mut *lock(&shared.hists[k - 1]));
            let result = PhaseResult::merge(k - 1, phase, figures, latency, start_ns, dropped);
            if let Err(e) = on_phase(&result) {
                stop.store(true, Ordering::SeqCst);
                shared.gate.open(k, false);
                return (accepted, Ending::SinkFailed(e.to_string()));
            }
            accepted += 1;
        }
        if k == phases.len() {
            shared.gate.open(k, false);
            break;
        }
        if stop.load(Ordering::SeqCst) {
            shared.gate.open(k, false);
            return (accepted, Ending::Interrupted);
        }
        dropped = false;
        // Untimed, before `before_phase`: under many clients each drops
        // before it waits at the barrier, so every drop on a host is done
        // before any client there is let go (see `clients`).
        if k > 0 && plan.drop_caches && phases[k].reads() {
            if let Err(e) = drop_caches() {
                shared.gate.open(k, false);
                return (
                    accepted,
                    Ending::SinkFailed(format!(
                        "cannot drop the page cache before the {} phase ({}): {e}",
                        phases[k].name(),
                        crate::sys::DROP_CACHES
                    )),
                );
            }
            dropped = true;
        }
        live.start_phase(k, plan.planned_total(phases[k]).files);
        let Some(start) = before_phase(k) else {
            shared.gate.open(k, false);
            return (accepted, Ending::Interrupted);
        };
        start_ns = start.saturating_duration_since(shared.epoch).as_nanos() as u64;
        shared.gate.open(k, true);
    }
    (accepted, Ending::Completed)
}

/// Every connection's figures of phase `k` (1-based; `phase`): those the connections sent, an idle
/// one with the error for a connection whose thread never started (then skipped), and one for a
/// connection that ended without reporting (a panic: failed once, then skipped; `gone`).
fn phase_figures(
    plan: &FileserverPlan,
    rx: &mpsc::Receiver<(usize, ConnectionFigures)>,
    (k, phase): (usize, Phase),
    unborn: &[(usize, String)],
    gone: &mut [bool],
) -> Vec<ConnectionFigures> {
    let mut figures: Vec<ConnectionFigures> = rx.try_iter().filter(|(p, _)| *p == k - 1).map(|(_, f)| f).collect();
    let mut missing: Vec<bool> = vec![true; plan.connections];
    for f in &figures {
        missing[f.rank] = false;
    }
    for (rank, why) in unborn {
        missing[*rank] = false;
        let mut f = ConnectionFigures::idle(*rank, plan.planned(*rank, phase));
        if k == 1 {
            f.error = Some(ConnectionError {
                kind: "thread".into(),
                op: None,
                message: format!("connection {rank}: no thread could be started: {why}"),
            });
        } else {
            f.skipped = true;
        }
        figures.push(f);
    }
    for rank in (0..plan.connections).filter(|&r| missing[r]) {
        // Its thread ended without reporting (a panic): failed once, then out.
        let mut f = ConnectionFigures::idle(rank, plan.planned(rank, phase));
        if gone[rank] {
            f.skipped = true;
        } else {
            gone[rank] = true;
            f.error = Some(ConnectionError {
                kind: "panic".into(),
                op: None,
                message: format!("connection {rank}: its thread ended unexpectedly"),
            });
        }
        figures.push(f);
    }
    figures
}

/// The error of the first connection that failed in a phase (not one skipped), with how many more
/// failed.
fn first_failure(figures: &[ConnectionFigures]) -> Option<String> {
    let failed = figures.iter().find(|f| f.error.is_some() && !f.skipped)?;
    let failed_in_all = figures.iter().filter(|f| f.error.is_some() && !f.skipped).count();
    Some(match (&failed.error, failed_in_all) {
        (Some(e), 1) => e.message.clone(),
        (Some(e), n) => format!("{} (and {} more connection(s) failed)", e.message, n - 1),
        (None, _) => String::new(),
    })
}

struct Shared<'a> {
    plan: &'a FileserverPlan,
    gate: Gate,
    /// Per phase, one histogram per operation type.
    hists: Vec<Mutex<Vec<Latency>>>,
    /// The record every write sends.
    data: Vec<u8>,
    stop: &'a AtomicBool,
    /// `--on-client-error abort`: a connection that fails stops every other (the run's stop).
    abort: bool,
    live: &'a Live,
    epoch: Instant,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The leader's gate: connections arrive before each phase and wait; the
/// leader waits until all have arrived, does what goes between phases, and
/// opens the gate for all at once (or tells them to leave).
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    all_arrived: Condvar,
    opened: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Connections that left for good (a panic) before the leader stopped waiting for them.
    left: usize,
    arrived: usize,
    /// Phases opened so far (or closed for good, with `go` false).
    opened: usize,
    go: bool,
}

impl Gate {
    /// Arrives for phase `k`; true when the phase is to be run, false when the run is over.
    fn arrive(&self, k: usize) -> bool {
        let mut s = lock(&self.state);
        s.arrived += 1;
        self.all_arrived.notify_one();
        while s.opened <= k {
            s = self.opened.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.go
    }

    fn leave(&self) {
        lock(&self.state).left += 1;
        self.all_arrived.notify_one();
    }

    fn wait_all(&self, parties: usize) {
        let mut s = lock(&self.state);
        while s.arrived + s.left < parties {
            s = self.all_arrived.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self, k: usize, go: bool) {
        let mut s = lock(&self.state);
        s.arrived = 0;
        s.opened = k + 1;
        s.go = go;
        self.opened.notify_all();
    }
}

/// Leaves the gate for good if the connection's thread unwinds, so the leader never waits for it.
struct Party<'a> {
    gate: &'a Gate,
    done: bool,
}

impl Drop for Party<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.gate.leave();
        }
    }
}

/// Why a phase of one connection ended early.
enum Halt {
    Stopped,
    Failed(ConnectionError),
}

struct Connection<'a, F: ConnectionFiles> {
    rank: usize,
    files: F,
    shared: &'a Shared<'a>,
    plan: &'a FileserverPlan,
    /// Read buffer, one record; made on the first read.
    buf: Vec<u8>,
    samples: Vec<u64>,
    phase: usize,
    done: Planned,
    /// Stamps what is written and checks what is read, when the plan asks for stamped data.
    content: Option<Content>,
    /// The record being written, stamped (with stamped data only).
    stamped: Vec<u8>,
    /// The phase's operations over time, from `origin`, the connection's start of it; a create,
    /// write or fsync counts as a write, an open, read or close as a read.
    series: SeriesRecorder,
    origin: Instant,
}

/// A file being written: where it is, how big it becomes, how far it is.
struct Growing<F: ConnectionFiles> {
    /// The file's number in the connection's folder.
    index: u64,
    name: F::Name,
    size: u64,
    records: u64,
    written: u64,
    file: Option<F::File>,
}

impl<'a, F: ConnectionFiles> Connection<'a, F> {
    /// The connection's thread: its files from `files` and its folder made
    /// (untimed setup), then every phase the leader lets it run.
    fn run(
        rank: usize,
        shared: &'a Shared<'a>,
        files: &(dyn Fn(usize) -> io::Result<F> + Sync),
        tx: &mpsc::Sender<(usize, ConnectionFigures)>,
    ) {
        let gate = &shared.gate;
        let mut party = Party { gate, done: false };
        let setup = Instant::now();
        // A folder that is there already is an earlier pass's (`--tolerance` runs the phases again).
        let mut reused = false;
        let made = files(rank).map_err(|e| (e, "connecting")).and_then(|mut f| match f.make_folder() {
            Ok(()) => Ok(f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                reused = true;
                Ok(f)
            }
            Err(e) => Err((e, "making its folder")),
        });
        let setup_ns = setup.elapsed().as_nanos() as u64;
        let (mut conn, mut setup_error) = match made {
            Ok(files) => (Some(Connection::new(rank, shared, files)), None),
            Err((e, what)) => (
                None,
                Some(ConnectionError {
                    kind: error_kind(&e),
                    op: None,
                    message: format!("connection {rank}: {what}: {e}"),
                }),
            ),
        };
        let plan = shared.plan;
        let phases = plan.phases();
        for (k, &phase) in phases.iter().enumerate() {
            if let Some(conn) = conn.as_mut().filter(|_| (k > 0 || reused) && phase == Phase::Write) {
                // A repeat writes fresh files (creates are exclusive): the last repeat's go first, untimed.
                for i in 0..plan.files_per_connection {
                    let name = conn.files.name(i);
                    let _ = conn.files.remove(&name);
                }
            }
            if !gate.arrive(k) {
                party.done = true;
                return;
            }
            let planned = plan.planned(rank, phase);
            let mut figures = match (setup_error.take(), conn.as_mut()) {
                (Some(e), _) => ConnectionFigures { error: Some(e), ..ConnectionFigures::idle(rank, planned) },
                (None, Some(conn)) => conn.phase(k, phase, planned),
                (None, None) => ConnectionFigures { skipped: true, ..ConnectionFigures::idle(rank, planned) },
            };
            if k == 0 {
                figures.setup_ns = setup_ns;
            }
            if figures.error.is_some() && !figures.skipped {
                // Out for the rest of the run: its session (and open files) end now, not at the run's end.
                conn = None;
                shared.live.failed.fetch_add(1, Ordering::Relaxed);
                if shared.abort {
                    shared.stop.store(true, Ordering::SeqCst);
                }
            }
            if tx.send((k, figures)).is_err() {
                break;
            }
        }
        gate.arrive(phases.len());
        party.done = true;
    }

    fn new(rank: usize, shared: &'a Shared<'a>, files: F) -> Connection<'a, F> {
        Connection {
            rank,
            files,
            shared,
            plan: shared.plan,
            buf: Vec::new(),
            samples: Vec::with_capacity(SAMPLE_BUFFER),
            phase: 0,
            done: Planned::default(),
            content: shared.plan.content.stamped().then(|| Content::new(shared.plan.content, 0)),
            stamped: Vec::new(),
            series: SeriesRecorder::new(shared.plan.series_interval_ns),
            origin: Instant::now(),
        }
    }

    fn phase(&mut self, k: usize, phase: Phase, planned: Planned) -> ConnectionFigures {
        self.phase = k;
        self.done = Planned::default();
        if let Some(c) = self.content.as_mut() {
            // Every write phase writes whole files afresh; a read finds one of this run's generations.
            c.generation = k as u64 + 1;
        }
        self.series = SeriesRecorder::new(self.plan.series_interval_ns);
        let span = Span::start(self.shared.epoch);
        self.origin = Instant::now();
        let outcome = match phase {
            Phase::Write => match self.plan.interleave {
                Some(n) if n > 1 => self.write_interleaved(n),
                _ => self.write_files(),
            },
            Phase::Read => self.read_files(),
            Phase::Mix { read_percent } => self.mix(read_percent),
        };
        let ended = self.origin.elapsed().as_nanos() as u64;
        let measured = span.finish();
        self.flush();
        let series = std::mem::replace(&mut self.series, SeriesRecorder::new(1));
        let mut figures = ConnectionFigures::idle(self.rank, planned);
        figures.series = series.finish(ended);
        figures.done = self.done;
        figures.measured = Some(measured);
        figures.verify = self.content.as_mut().map(Content::take_tally);
        match outcome {
            Ok(()) => {}
            Err(Halt::Stopped) => figures.stopped = true,
            Err(Halt::Failed(e)) => figures.error = Some(e),
        }
        figures
    }

    /// The write phase, file after file: create, open, write each record
    /// (fsync where due), close.
    fn write_files(&mut self) -> Result<(), Halt> {
        for i in 0..self.plan.files_per_connection {
            let mut file = self.create_and_open(i)?;
            while file.written < file.records {
                self.append(&mut file)?;
            }
            self.finish(file)?;
        }
        Ok(())
    }

    /// The write phase with `n` files growing at once: each group of `n`
    /// files created and opened, then one record appended to each in turn
    /// until all are full (each closed when full), then the next group.
    fn write_interleaved(&mut self, n: u64) -> Result<(), Halt> {
        let files = self.plan.files_per_connection;
        let mut first = 0;
        while first < files {
            let last = (first + n).min(files);
            let mut group = iomatrix_core::alloc::try_with_capacity(
                (last - first) as usize,
                "the files written at once (--interleave)",
            )
            .map_err(|e| {
                Halt::Failed(ConnectionError {
                    kind: "memory".into(),
                    op: None,
                    message: format!("connection {}: {e}", self.rank),
                })
            })?;
            for i in first..last {
                group.push(self.create_and_open(i)?);
            }
            let mut open = group.len();
            while open > 0 {
                for file in group.iter_mut().filter(|f| f.file.is_some()) {
                    if file.written < file.records {
                        self.append(file)?;
                    }
                    if file.written == file.records {
                        let handle = file.file.take();
                        self.close_file(handle, &file.name)?;
                        open -= 1;
                    }
                }
            }
            first = last;
        }
        Ok(())
    }

    fn create_and_open(&mut self, index: u64) -> Result<Growing<F>, Halt> {
        let name = self.files.name(index);
        let size = self.plan.file_size(self.rank, index);
        self.timed(Op::Create, &name, |files| files.create_new(&name))?;
        let file = self.timed(Op::Open, &name, |files| files.open(&name, OpenFor::Write))?;
        Ok(Growing { index, records: self.plan.records(size), name, size, written: 0, file: Some(file) })
    }

    /// Writes the file's next record, and fsyncs where `--fsync-every` says.
    fn append(&mut self, file: &mut Growing<F>) -> Result<(), Halt> {
        let record = self.plan.record.bytes();
        let offset = file.written * record;
        let len = record.min(file.size - offset) as usize;
        let Some(handle) = file.file.as_mut() else { return Ok(()) };
        let shared = self.shared;
        let mut stamped = std::mem::take(&mut self.stamped);
        let data = match self.content.as_mut() {
            Some(content) => {
                // Whole 4k blocks stamped; a file's last partial block keeps the shared random bytes.
                stamped.clear();
                stamped.extend_from_slice(&shared.data[..len]);
                content.file = file_id(self.rank, file.index);
                content.stamp(&mut stamped, offset);
                &stamped[..]
            }
            None => &shared.data[..len],
        };
        let written = self.timed_bytes(Op::Write, &file.name, len as u64, |files| files.write(handle, data, offset));
        self.stamped = stamped;
        written?;
        self.done.bytes += len as u64;
        shared.live.bytes.fetch_add(len as u64, Ordering::Relaxed);
        file.written += 1;
        if let Some(n) = self.plan.fsync_every {
            if file.written % n == 0 || file.written == file.records {
                self.timed(Op::Fsync, &file.name, |files| files.fsync(handle))?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, mut file: Growing<F>) -> Result<(), Halt> {
        let handle = file.file.take();
        self.close_file(handle, &file.name)
    }

    /// Closes a file (timed) and counts it as finished.
    fn close_file(&mut self, handle: Option<F::File>, name: &F::Name) -> Result<(), Halt> {
        if let Some(handle) = handle {
            self.timed(Op::Close, name, |files| files.close(handle))?;
        }
        self.done.files += 1;
        self.shared.live.files_done.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn read_files(&mut self) -> Result<(), Halt> {
        for i in 0..self.plan.files_per_connection {
            self.read_file(i)?;
        }
        Ok(())
    }

    /// Visits each file once in a seeded random order, reading it whole or rewriting it.
    fn mix(&mut self, read_percent: u8) -> Result<(), Halt> {
        for (i, reads) in MixVisits::new(self.plan, self.rank, read_percent) {
            if reads {
                self.read_file(i)?;
            } else {
                self.rewrite_file(i)?;
            }
        }
        Ok(())
    }

    /// Open for reading, read record after record to the size written,
    /// close; the file must hold exactly what the write phase wrote.
    fn read_file(&mut self, index: u64) -> Result<(), Halt> {
        let name = self.files.name(index);
        let size = self.plan.file_size(self.rank, index);
        let record = self.plan.record.bytes();
        if self.buf.len() != record as usize {
            self.buf = vec![0; record as usize];
        }
        let mut handle = self.timed(Op::Open, &name, |files| files.open(&name, OpenFor::Read))?;
        let mut total = 0u64;
        let shared = self.shared;
        while total < size {
            if shared.stop.load(Ordering::Relaxed) {
                return Err(Halt::Stopped);
            }
            let want = record.min(size - total) as usize;
            let start = Instant::now();
            let n = self.files.read(&mut handle, &mut self.buf[..want], total);
            let end = Instant::now();
            let n = n.map_err(|e| self.failure(Op::Read, &name, e))?;
            if n == 0 {
                break; // the file ends early: not a record, not counted
            }
            self.record(Op::Read, start, end, n as u64);
            if let Some(content) = self.content.as_mut() {
                content.file = file_id(self.rank, index);
                content.check(&self.buf[..n], total);
            }
            total += n as u64;
            self.done.bytes += n as u64;
            shared.live.bytes.fetch_add(n as u64, Ordering::Relaxed);
        }
        let ends =
            total == size && self.files.ends_at(&mut handle, size).map_err(|e| self.failure(Op::Read, &name, e))?;
        if !ends {
            return Err(Halt::Failed(ConnectionError {
                kind: "size mismatch".into(),
                op: Some(Op::Read),
                message: if total < size {
                    format!("connection {}: {name} holds {total} bytes, but {size} were written", self.rank)
                } else {
                    format!("connection {}: {name} holds more than the {size} bytes written", self.rank)
                },
            }));
        }
        self.close_file(Some(handle), &name)
    }

    /// Open emptied (O_TRUNC), write every record (fsync where due), close.
    fn rewrite_file(&mut self, index: u64) -> Result<(), Halt> {
        let name = self.files.name(index);
        let size = self.plan.file_size(self.rank, index);
        let handle = self.timed(Op::Open, &name, |files| files.open(&name, OpenFor::Rewrite))?;
        let mut file = Growing { index, records: self.plan.records(size), name, size, written: 0, file: Some(handle) };
        while file.written < file.records {
            self.append(&mut file)?;
        }
        self.finish(file)
    }

    /// Runs one operation on the connection's files, timing it; a success
    /// is counted and sampled, a failure ends the connection's phase.
    fn timed<T>(&mut self, op: Op, name: &F::Name, f: impl FnOnce(&mut F) -> io::Result<T>) -> Result<T, Halt> {
        self.timed_bytes(op, name, 0, f)
    }

    /// [`Self::timed`] of an operation that moves `bytes`.
    #[inline]
    fn timed_bytes<T>(
        &mut self,
        op: Op,
        name: &F::Name,
        bytes: u64,
        f: impl FnOnce(&mut F) -> io::Result<T>,
    ) -> Result<T, Halt> {
        if self.shared.stop.load(Ordering::Relaxed) {
            return Err(Halt::Stopped);
        }
        let start = Instant::now();
        let result = f(&mut self.files);
        let end = Instant::now();
        match result {
            Ok(v) => {
                self.record(op, start, end, bytes);
                Ok(v)
            }
            Err(e) => Err(self.failure(op, name, e)),
        }
    }

    fn failure(&self, op: Op, name: &F::Name, e: io::Error) -> Halt {
        Halt::Failed(ConnectionError {
            kind: error_kind(&e),
            op: Some(op),
            message: format!("connection {}: {op} {name}: {e}", self.rank),
        })
    }

    /// A success of `op` that ran from `start` to `end` and moved `bytes`: counted, sampled,
    /// and in the series at its end.
    #[inline]
    fn record(&mut self, op: Op, start: Instant, end: Instant, bytes: u64) {
        let ns = end.saturating_duration_since(start).as_nanos() as u64;
        let at = end.saturating_duration_since(self.origin).as_nanos() as u64;
        self.series.record(at, ns, bytes, matches!(op, Op::Create | Op::Write | Op::Fsync));
        self.done.ops.add(op, 1);
        self.samples.push(((op.index() as u64) << NS_BITS) | ns.min(NS_MASK));
        if self.samples.len() >= SAMPLE_BUFFER {
            self.flush();
        }
    }

    /// Adds the buffered samples to the phase's shared histograms.
    fn flush(&mut self) {
        if self.samples.is_empty() {
            return;
        }
        let mut hists = lock(&self.shared.hists[self.phase]);
        for s in self.samples.drain(..) {
            hists[(s >> NS_BITS) as usize].record(s & NS_MASK);
        }
    }
}

/// The file id a stamped block carries: the connection and the file's number.
fn file_id(rank: usize, index: u64) -> u64 {
    ((rank as u64) << 32) | index
}

/// Bytes no compressor or deduplicator can shrink, from a seed.
fn incompressible(len: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0; len];
    iomatrix_random::Generator::seeded(seed).fill(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FileSizes, Then};
    use iomatrix_core::{ByteSize, KIB};

    fn plan(connections: usize, files: u64) -> FileserverPlan {
        FileserverPlan {
            connections,
            files_per_connection: files,
            sizes: FileSizes::List(vec![ByteSize(4 * KIB), ByteSize(9 * KIB), ByteSize(100)]),
            record: ByteSize(4 * KIB),
            then: Then::Read,
            fsync_every: None,
            interleave: None,
            drop_caches: false,
            seed: 3,
            repeats: 1,
            content: Default::default(),
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        }
    }

    fn run(plan: &FileserverPlan) -> (Vec<PhaseResult>, Ending) {
        let dir = tempfile::tempdir().unwrap();
        let (n, ending, results) = run_in(plan, dir.path(), OnClientError::Continue);
        assert_eq!(n, results.len());
        (results, ending)
    }

    /// `plan` run in `dir` (locally, never stopped): the phases kept, how it ended, and every
    /// phase handed on.
    fn run_in(plan: &FileserverPlan, dir: &Path, on_error: OnClientError) -> (usize, Ending, Vec<PhaseResult>) {
        let stop = AtomicBool::new(false);
        let mut results = Vec::new();
        let (n, ending) =
            execute(plan, &Place::Local, dir, (&stop, on_error), &Live::new(), &mut |_| Some(Instant::now()), |r| {
                results.push(r.clone());
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap();
        (n, ending, results)
    }

    fn check_exact(plan: &FileserverPlan, results: &[PhaseResult]) {
        assert_eq!(results.len(), 2);
        for (r, phase) in results.iter().zip(plan.phases()) {
            assert_eq!(r.phase, phase);
            let want = plan.planned_total(phase);
            assert_eq!(r.planned, want);
            assert_eq!(r.done, want, "{phase:?}");
            assert_eq!(r.lost, Planned::default());
            for op in Op::ALL {
                assert_eq!(r.latency(op).count(), want.ops.get(op), "{phase:?} {op}");
            }
            assert_eq!(r.connections_ok, plan.connections);
            assert!(r.errors.is_empty());
            assert!(r.wall_ns > 0 && r.total_kib_per_sec > 0.0 && r.avg_connection_kib_per_sec > 0.0);
            assert_eq!(r.connections.len(), plan.connections);
            assert!(r.connections.windows(2).all(|w| w[0].rank < w[1].rank));
            // Each connection's time runs from the common release: within the completion time.
            assert!(r.connections.iter().all(|c| c.ns() > 0 && c.ns() <= r.wall_ns));
        }
    }

    #[test]
    fn every_operation_is_done_and_timed_as_planned() {
        let p = plan(4, 7);
        let (results, ending) = run(&p);
        assert_eq!(ending, Ending::Completed);
        check_exact(&p, &results);
        // 7 files: 4k, 9k, 100, 4k, 9k, 100, 4k -> 1 + 3 + 1 + 1 + 3 + 1 + 1 records.
        assert_eq!(results[0].done.ops.write, 4 * 11);
        assert_eq!(results[1].done.ops.read, 4 * 11);
        assert_eq!(results[0].done.ops.create, 28);
    }

    #[test]
    fn interleaved_fsynced_and_mixed_runs_count_exactly() {
        let mut p = plan(3, 10);
        p.interleave = Some(4);
        p.fsync_every = Some(2);
        let (results, _) = run(&p);
        check_exact(&p, &results);
        assert!(results[0].done.ops.fsync > 0);
        p.interleave = None;
        p.then = Then::Mix { read_percent: 50 };
        let (results, ending) = run(&p);
        assert_eq!(ending, Ending::Completed);
        check_exact(&p, &results);
        assert!(results[1].done.ops.read > 0 && results[1].done.ops.write > 0);
    }

    #[test]
    fn a_second_pass_in_the_same_folder_writes_fresh_files() {
        // `--tolerance` runs the phases again in the clients' folders of the first pass.
        let dir = tempfile::tempdir().unwrap();
        let p = plan(3, 4);
        for pass in 0..2 {
            let (n, ending, results) = run_in(&p, dir.path(), OnClientError::Continue);
            assert_eq!((n, ending), (2, Ending::Completed), "pass {pass}");
            assert!(results.iter().all(|r| r.connections_failed == 0 && r.errors.is_empty()), "pass {pass}");
            check_exact(&p, &results);
        }
    }

    #[test]
    fn a_failing_connection_is_counted_and_the_others_go_on() {
        let dir = tempfile::tempdir().unwrap();
        // Connection 1's folder is a file: its first create fails with ENOTDIR.
        std::fs::write(dir.path().join("conn-0001"), b"in the way").unwrap();
        let p = plan(3, 4);
        let (n, ending, results) = run_in(&p, dir.path(), OnClientError::Continue);
        assert_eq!((n, ending), (2, Ending::Completed));
        let (w, r) = (&results[0], &results[1]);
        assert_eq!(w.connections_ok, 2);
        assert_eq!(w.connections_failed, 1);
        assert_eq!(w.errors.get("ENOTDIR"), Some(&1), "{:?}", w.errors);
        assert_eq!(w.lost, p.planned(1, Phase::Write));
        assert_eq!(w.done.plus(&w.lost), w.planned);
        assert_eq!(r.connections_skipped, 1);
        assert_eq!(r.connections_failed, 0);
        assert!(r.errors.is_empty());
        assert_eq!(r.lost, p.planned(1, Phase::Read));
        assert_eq!(r.done.ops.open, 2 * 4);
    }

    #[test]
    fn under_abort_the_first_failed_connection_ends_the_run_and_its_phase_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("conn-0001"), b"in the way").unwrap();
        let p = plan(3, 4);
        let stop = AtomicBool::new(false);
        let mut results = Vec::new();
        let (n, ending) = execute(
            &p,
            &Place::Local,
            dir.path(),
            (&stop, OnClientError::Abort),
            &Live::new(),
            &mut |_| Some(Instant::now()),
            |r| {
                results.push(r.clone());
                Ok::<(), std::convert::Infallible>(())
            },
        )
        .unwrap();
        assert_eq!(n, 0, "the write phase, where connection 1 failed, is not kept");
        assert!(results.is_empty());
        match ending {
            Ending::ClientFailed { cell: 0, failures } => {
                assert!(failures[0].message.contains("connection 1"), "{failures:?}");
                assert!(failures[0].message.contains("Not a directory"), "{failures:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(stop.load(Ordering::SeqCst), "every other client is told to stop");
    }

    #[test]
    fn a_folder_that_is_not_one_is_refused_before_any_connection_starts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("client-0");
        std::fs::write(&file, b"").unwrap();
        let stop = AtomicBool::new(false);
        let mut asked = false;
        let e = execute(
            &plan(2, 3),
            &Place::Local,
            &file,
            (&stop, OnClientError::Continue),
            &Live::new(),
            &mut |_| {
                asked = true;
                Some(Instant::now())
            },
            |_| Ok::<(), std::convert::Infallible>(()),
        )
        .unwrap_err();
        assert!(e.to_string().contains("client-0: not a folder"), "{e}");
        assert!(!asked);
        let e = execute(
            &plan(2, 3),
            &Place::Local,
            &dir.path().join("gone"),
            (&stop, OnClientError::Continue),
            &Live::new(),
            &mut |_| Some(Instant::now()),
            |_| Ok::<(), std::convert::Infallible>(()),
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }

    #[test]
    fn a_stop_keeps_finished_phases_and_a_refused_phase_ends_the_run() {
        let p = plan(2, 3);
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let (n, ending) = execute(
            &p,
            &Place::Local,
            dir.path(),
            (&stop, OnClientError::Continue),
            &Live::new(),
            &mut |_| Some(Instant::now()),
            |_| {
                stop.store(true, Ordering::SeqCst);
                Ok::<(), std::convert::Infallible>(())
            },
        )
        .unwrap();
        assert_eq!((n, ending), (1, Ending::Interrupted));
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let (n, ending) = execute(
            &p,
            &Place::Local,
            dir.path(),
            (&stop, OnClientError::Continue),
            &Live::new(),
            &mut |_| Some(Instant::now()),
            |_| Err("disk full"),
        )
        .unwrap();
        assert_eq!((n, ending), (0, Ending::SinkFailed("disk full".into())));
    }

    #[test]
    fn live_counters_follow_the_phase() {
        let p = plan(2, 3);
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let live = Live::new();
        let mut seen = Vec::new();
        execute(
            &p,
            &Place::Local,
            dir.path(),
            (&stop, OnClientError::Continue),
            &live,
            &mut |_| Some(Instant::now()),
            |r| {
                seen.push((r.index, live.snapshot()));
                Ok::<(), std::convert::Infallible>(())
            },
        )
        .unwrap();
        for (index, s) in seen {
            assert!(s.started);
            assert_eq!(s.phase, index);
            assert_eq!(s.files_done, 6);
            assert_eq!(s.files_total, 6);
            assert_eq!(s.bytes, p.total_bytes());
        }
    }
}
