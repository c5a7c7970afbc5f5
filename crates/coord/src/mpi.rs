//! MPI ranks as clients (the `mpi` feature, rsmpi over Open MPI or MPICH).
//!
//! Each process is one client; rank 0 also leads: after every cell it takes
//! the other ranks' reports, hands the cell on (only rank 0 writes the
//! database), and tells every rank whether the run goes on. A rank whose
//! cell failed reports the failure with its cause like any figure, and
//! waits for rank 0's word as the others do: rank 0 stores the run before
//! anyone stops. Every wait is bounded by [`MpiGroup::timeout`] and gives
//! up early when this process gets a signal, so a dead or hung rank ends
//! the run with a message instead of hanging it.
//!
//! When a rank dies, Open MPI's `mpirun` (4.1, measured) sends every other
//! rank SIGCONT at once, SIGTERM one second later and SIGKILL one second
//! after that (`odls_base_sigkill_timeout`); when a host's link is cut, it
//! does the same once its daemon's connection is found lost. The SIGTERM
//! looks like a user's Ctrl-C, so on a signal every rank tells rank 0
//! ([`Farewell`]): a rank that says nothing is the one that is gone, and it
//! is named; when every rank speaks, the run was interrupted.
//!
//! MPI is called from the thread that initialised it, except by the live
//! relay ([`MpiGroup::relay_live`]) and the farewells, which run only where
//! MPI provides `MPI_THREAD_MULTIPLE`, each on a communicator of its own.

use crate::client::{drive, handled_before_next, ClientCell, Drive, Setup};
use crate::collect::{Collector, Gathered};
use crate::{ClientFailure, ClientWork, Coordinator, Ending, GaveUp, StartTimes};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::raw::AsRaw;
use mpi::request::StaticScope;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Source};
use mpi::Rank;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const TAG_REPORT: i32 = 1;
const TAG_DECISION: i32 = 2;
const TAG_SHARE: i32 = 3;
const TAG_GATHER: i32 = 4;
const TAG_LIVE: i32 = 5;
const TAG_FAREWELL: i32 = 6;

/// How long rank 0 listens for the other ranks' word after a signal: well
/// inside the second between mpirun's SIGTERM and its SIGKILL, and far
/// above the milliseconds a message takes on a LAN.
pub const FAREWELL_WAIT: Duration = Duration::from_millis(400);

/// A communicator used by a thread of its own.
struct SharedComm(SimpleCommunicator);

// SAFETY: MPI handles may be used from any thread when MPI runs with
// MPI_THREAD_MULTIPLE; these communicators are made only then, and each is
// used by one thread at a time (the live relay's by the relay thread; the
// farewells' under their mutex), and by no other code.
unsafe impl Send for SharedComm {}
// SAFETY: as above: shared references reach one thread at a time.
unsafe impl Sync for SharedComm {}

/// Errors on `comm` return to the caller instead of ending the process:
/// rsmpi ignores return codes, and every wait here is bounded, so a call
/// that fails towards a dead rank leaves a request that never completes,
/// which the wait gives up on.
fn errors_return(comm: &SimpleCommunicator) {
    // SAFETY: MPI_Comm_set_errhandler on a valid communicator with MPI's predefined handler.
    unsafe {
        mpi::ffi::MPI_Comm_set_errhandler(comm.as_raw(), mpi::ffi::RSMPI_ERRORS_RETURN);
    }
}

/// This process's place in an MPI job of several ranks: its communicators, the bound on every
/// wait, and whether the group broke.
pub struct MpiGroup {
    /// Declared before the universe: freed before MPI is finalised.
    live: Option<SharedComm>,
    /// Freed in `drop`, before MPI is finalised.
    farewell: Option<Farewell>,
    // Finalises MPI when dropped.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    timeout: std::cell::Cell<Duration>,
    /// Each rank's host, by rank, as rank 0 names it in a failure ("iomx-3 (10.0.0.3)").
    hosts: std::cell::RefCell<Vec<String>>,
    /// Raised by a signal only: waits give up at once.
    interrupt: &'static AtomicBool,
    /// A wait gave up on another rank (hung, dead or cut off): nothing more can
    /// be said to the group, and only MPI_Abort ends it for sure.
    broken: std::cell::Cell<bool>,
    /// This rank's place among the ranks on its host.
    on_this_host: usize,
}

impl Drop for MpiGroup {
    fn drop(&mut self) {
        if let Some(farewell) = &self.farewell {
            farewell.shut(self.interrupt.load(Ordering::SeqCst));
        }
    }
}

/// MPI can be initialised once per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("MPI was already initialised")]
pub struct AlreadyInitialised;

impl MpiGroup {
    /// Initialises MPI. `None` when this process is the only rank (started
    /// without mpirun, or with `-np 1`): it then runs as an ordinary process.
    /// `interrupt` must be raised by signals only.
    pub fn init(timeout: Duration, interrupt: &'static AtomicBool) -> Result<Option<MpiGroup>, AlreadyInitialised> {
        let (universe, threading) =
            mpi::initialize_with_threading(mpi::Threading::Multiple).ok_or(AlreadyInitialised)?;
        let world = universe.world();
        if world.size() == 1 {
            return Ok(None);
        }
        errors_return(&world);
        // Every rank duplicates (collective calls); each uses them only if its MPI allows threads.
        let live = SharedComm(world.duplicate());
        let farewell = SharedComm(world.duplicate());
        // The ranks that share this rank's host (its shared-memory group): this rank's place among
        // them is its place among the host's CPUs (`--pin shallow` or `spread`), whatever the launcher's mapping.
        let on_this_host = world.split_shared(world.rank()).rank() as usize;
        let multiple = threading == mpi::Threading::Multiple;
        let farewell = multiple.then(|| Farewell::new(farewell, world.rank() as usize, world.size() as usize));
        Ok(Some(MpiGroup {
            live: multiple.then_some(live),
            farewell,
            _universe: universe,
            world,
            timeout: std::cell::Cell::new(timeout),
            hosts: Default::default(),
            interrupt,
            broken: std::cell::Cell::new(false),
            on_this_host,
        }))
    }

    /// This process's rank in the job (0-based).
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// How many ranks the job has.
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// This rank's place among the ranks on its host (0 for the first).
    pub fn rank_on_this_host(&self) -> usize {
        self.on_this_host
    }

    /// Whether this is rank 0, which leads and alone writes the database.
    pub fn is_leader(&self) -> bool {
        self.world.rank() == 0
    }

    /// How long any wait for another rank may last.
    pub fn timeout(&self) -> Duration {
        self.timeout.get()
    }

    /// Rank 0 knows the bound from the command line; the others learn it with the plan.
    pub fn set_timeout(&self, timeout: Duration) {
        self.timeout.set(timeout);
    }

    /// Rank 0: where each rank runs, by rank, so a lost rank's message names its host.
    pub fn set_hosts(&self, hosts: Vec<String>) {
        *self.hosts.borrow_mut() = hosts;
    }

    /// " on HOST" for a rank whose host is known.
    fn on_host(&self, rank: usize) -> String {
        self.hosts.borrow().get(rank).map(|h| format!(" on {h}")).unwrap_or_default()
    }

    /// True when a wait gave up on another rank: the group cannot be ended
    /// in order, only aborted.
    pub fn is_broken(&self) -> bool {
        self.broken.get()
    }

    /// What the ranks say on a signal, where this MPI allows it (MPI_THREAD_MULTIPLE).
    pub fn farewell(&self) -> Option<Farewell> {
        self.farewell.clone()
    }

    /// True when ranks can send rank 0 live figures during a cell.
    pub fn relays_live(&self) -> bool {
        self.live.is_some()
    }

    /// Runs `body` while a side thread relays live figures: at the other
    /// ranks, `sample()` goes to rank 0 every `every`; at rank 0, what
    /// arrives is handed to `heard(rank, bytes)`. Without MPI_THREAD_MULTIPLE
    /// it only runs `body`. The relay never waits on another rank: a sample
    /// is a few bytes (sent eagerly), and rank 0 polls.
    pub fn relay_live<T>(
        &self,
        every: Duration,
        sample: &(dyn Fn() -> Vec<u8> + Sync),
        heard: &(dyn Fn(usize, Vec<u8>) + Sync),
        body: impl FnOnce() -> T,
    ) -> T {
        let Some(live) = &self.live else { return body() };
        let done = AtomicBool::new(false);
        let (leader, interrupt) = (self.is_leader(), self.interrupt);
        std::thread::scope(|scope| {
            let done = &done;
            let relay = std::thread::Builder::new().name("live-relay".into()).spawn_scoped(scope, move || {
                let comm = &live.0;
                while !done.load(Ordering::Relaxed) {
                    if leader {
                        while let Some(m) = comm.any_process().immediate_matched_probe_with_tag(TAG_LIVE) {
                            let (bytes, status) = m.matched_receive_vec();
                            heard(status.source_rank() as usize, bytes);
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    } else {
                        // Short naps, so the end of `body` is not held up by a whole interval.
                        let slept = Instant::now();
                        while slept.elapsed() < every && !done.load(Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        if !done.load(Ordering::Relaxed) && !interrupt.load(Ordering::Relaxed) {
                            comm.process_at_rank(0).send_with_tag(&sample()[..], TAG_LIVE);
                        }
                    }
                }
            });
            if let Err(e) = relay {
                // Only the live figures are lost: the run itself goes on.
                eprintln!(
                    "iomatrix: warning: no thread for the MPI ranks' live figures ({e}): the run goes on without them"
                );
            }
            let result = body();
            done.store(true, Ordering::Relaxed);
            result
        })
    }

    /// Ends every rank of the job at once (after rank 0 has saved what it could).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// Rank 0 gives `bytes` to every rank; every rank returns them. Every
    /// send is bounded like a wait: a send to a rank that is gone could
    /// otherwise wait for ever.
    pub fn share(&self, bytes: Option<Vec<u8>>) -> Result<Vec<u8>, GaveUp> {
        if self.is_leader() {
            let bytes = bytes.unwrap_or_default();
            for rank in 1..self.world.size() {
                self.send(rank, bytes.clone(), TAG_SHARE, "a rank to take rank 0's plan")?;
            }
            Ok(bytes)
        } else {
            self.receive_from(0, TAG_SHARE, "rank 0's plan")
        }
    }

    /// Every rank gives `bytes`; rank 0 gets them all by rank, the others `None`.
    pub fn gather(&self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, GaveUp> {
        if !self.is_leader() {
            self.send(0, bytes, TAG_GATHER, "rank 0 to take this rank's word")?;
            return Ok(None);
        }
        let mut all = vec![Vec::new(); self.size()];
        all[0] = bytes;
        for _ in 1..self.size() {
            let (rank, bytes) = self.receive_any(TAG_GATHER, "every rank's version")?;
            all[rank] = bytes;
        }
        Ok(Some(all))
    }

    /// Sends `bytes` to rank `to`, waiting for the send to finish no longer
    /// than any other wait: a blocking send to a rank that is gone can wait
    /// for ever (a message above MPI's eager limit waits for its receiver).
    fn send(&self, to: Rank, bytes: Vec<u8>, tag: i32, what: &str) -> Result<(), GaveUp> {
        // Once a rank may be gone (a wait gave up, or a signal came) rank 0 sends nothing more: a
        // send to a rank that is gone can hang inside MPI. The others still report to rank 0, which
        // is there to store the run.
        if self.is_leader() && self.broken.get() {
            return Err(GaveUp::Broken(format!("did not wait for {what}: a rank is already lost")));
        }
        if self.is_leader() && self.interrupt.load(Ordering::SeqCst) {
            return Err(GaveUp::Signalled(format!("did not wait for {what}: stopped by a signal")));
        }
        let pointer = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: the box behind `pointer` is freed only below, once MPI is done with it, or never.
        let buffer: &'static [u8] = unsafe { &*pointer };
        let mut request = Some(self.world.process_at_rank(to).immediate_send_with_tag(StaticScope, buffer, tag));
        let sent = self.wait(what, || match request.take()?.test() {
            Ok(_) => Some(()),
            Err(pending) => {
                request = Some(pending);
                None
            }
        });
        match request {
            // SAFETY: the send completed (test said so), so MPI no longer reads the buffer, and
            // `buffer` is not used again: `pointer` is the box's one owner.
            None => drop(unsafe { Box::from_raw(pointer) }),
            // A send given up on may still read the buffer: it stays leaked, and the request
            // is forgotten (rsmpi aborts on dropping an unfinished one). Only on a failing run.
            Some(pending) => std::mem::forget(pending),
        }
        sent
    }

    /// A word from rank `from`. The other ranks wait twice the bound for
    /// rank 0's word: rank 0 may itself wait the bound twice (at the barrier,
    /// then for the reports) before it stores the run, and a rank that gave
    /// up first would end the job (MPI_Abort) before rank 0 had stored it.
    fn receive_from(&self, from: Rank, tag: i32, what: &str) -> Result<Vec<u8>, GaveUp> {
        let process = self.world.process_at_rank(from);
        let patience = if self.is_leader() { self.timeout.get() } else { self.timeout.get() * 2 };
        self.wait_for(what, patience, || {
            process.immediate_matched_probe_with_tag(tag).map(|m| m.matched_receive_vec().0)
        })
    }

    fn receive_any(&self, tag: i32, what: &str) -> Result<(usize, Vec<u8>), GaveUp> {
        let any = self.world.any_process();
        self.wait(what, || {
            any.immediate_matched_probe_with_tag(tag).map(|m| {
                let (bytes, status) = m.matched_receive_vec();
                (status.source_rank() as usize, bytes)
            })
        })
    }

    /// Polls `ready` until it gives a value, the timeout passes or a signal
    /// arrives. Spins (yielding) for the first 10 ms so a barrier lets the
    /// ranks go close together, then sleeps 100 µs between polls so a waiting
    /// rank leaves the CPU to the ones still working.
    fn wait<T>(&self, what: &str, ready: impl FnMut() -> Option<T>) -> Result<T, GaveUp> {
        self.wait_for(what, self.timeout.get(), ready)
    }

    /// As [`MpiGroup::wait`], bounded by `patience`.
    fn wait_for<T>(&self, what: &str, patience: Duration, mut ready: impl FnMut() -> Option<T>) -> Result<T, GaveUp> {
        let begun = Instant::now();
        loop {
            if let Some(v) = ready() {
                return Ok(v);
            }
            let waited = begun.elapsed();
            if self.interrupt.load(Ordering::SeqCst) {
                return Err(GaveUp::Signalled(format!(
                    "stopped by a signal after waiting {:.1} s for {what}",
                    waited.as_secs_f64()
                )));
            }
            if waited > patience {
                self.broken.set(true);
                return Err(GaveUp::Broken(format!(
                    "waited {} s for {what}, the limit (--client-timeout): a rank is hung or gone",
                    patience.as_secs()
                )));
            }
            if waited < Duration::from_millis(10) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    /// A client's failure as rank 0 stores it: the rank and its host named
    /// before the cause, so a failure read alone says where it happened.
    fn placed(&self, mut failure: ClientFailure) -> ClientFailure {
        if !failure.stopped {
            failure.message = format!("rank {}{}: {}", failure.rank, self.on_host(failure.rank), failure.message);
        }
        failure
    }

    fn placed_cell<R>(&self, mut cell: ClientCell<R>) -> ClientCell<R> {
        cell.outcome = cell.outcome.map_err(|f| self.placed(f));
        cell
    }

    /// Rank 0, when a wait for `missing` ranks was given up: why each is
    /// missing. Under a signal, the ranks that said nothing are the ones
    /// gone; when every rank spoke (or this MPI cannot tell), None: the run
    /// was interrupted, nobody failed.
    fn missing(&self, missing: &[usize], gave_up: &GaveUp) -> Option<Vec<ClientFailure>> {
        let silent = match gave_up {
            GaveUp::Signalled(_) => self.farewell.as_ref().and_then(|f| f.silent(FAREWELL_WAIT * 2)),
            GaveUp::Broken(_) => None,
        };
        let failure =
            |rank: usize, why: String| ClientFailure::error(rank, format!("rank {rank}{}: {why}", self.on_host(rank)));
        match (gave_up, silent) {
            (GaveUp::Signalled(_), Some(silent)) if silent.is_empty() => None,
            (GaveUp::Signalled(_), Some(silent)) => Some(
                silent
                    .into_iter()
                    .map(|r| {
                        failure(
                            r,
                            "gone: it said nothing to rank 0 when the job was ended (mpirun signals every rank \
                             when one dies or a host is lost): it had died, or its host was cut off; mpirun's own \
                             message names the cause"
                                .into(),
                        )
                    })
                    .collect(),
            ),
            // No word from the others (no MPI_THREAD_MULTIPLE): the signal is all that is known.
            (GaveUp::Signalled(_), None) => None,
            (GaveUp::Broken(why), _) => Some(missing.iter().map(|&r| failure(r, why.clone())).collect()),
        }
    }

    pub(crate) fn lead<W, R, E: std::fmt::Display>(
        &self,
        setup: &Setup<'_>,
        together: usize,
        make: impl Fn(usize, &Path) -> W,
        on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), E>,
    ) -> std::io::Result<Option<(usize, Ending)>>
    where
        W: ClientWork<Figures = R>,
        R: serde::Serialize + serde::de::DeserializeOwned,
    {
        let rank = self.rank();
        let dir = setup.dir(rank)?;
        let mut work = make(rank, &dir);
        let coord = MpiCoordinator { group: self };
        let how =
            Drive { cells: setup.cells, dir: &dir, hooks: setup.hooks, on_error: setup.on_error, stop: setup.stop };
        // Inside a run of cells back to back no rank waits for rank 0's word: rank 0 stores the
        // run's cells, and says whether to go on, at its last.
        let word_after = |index: usize| handled_before_next(index, together, setup.cells);
        if !self.is_leader() {
            drive(&coord, &how, &mut work, &mut |index, cell, work| {
                self.report(cell, setup.stop, word_after(index), work)
            });
            return Ok(None);
        }
        let mut collector = Collector::new(self.size(), setup.cells, setup.on_error, setup.stop).together(together);
        drive(&coord, &how, &mut work, &mut |index, cell, work| {
            collector.add(index, self.placed_cell(cell), on_cell);
            let mut missing: Vec<usize> = (1..self.size()).collect();
            while !missing.is_empty() {
                match self.receive_any(TAG_REPORT, "the other ranks' figures") {
                    Ok((from, bytes)) => {
                        missing.retain(|r| *r != from);
                        let cell = serde_json::from_slice::<ClientCell<R>>(&bytes).unwrap_or_else(|e| ClientCell {
                            rank: from,
                            start: StartTimes::default(),
                            outcome: Err(ClientFailure::error(from, format!("unreadable report: {e}"))),
                        });
                        collector.add(index, self.placed_cell(cell), on_cell);
                    }
                    Err(gave_up) => {
                        match self.missing(&missing, &gave_up) {
                            Some(failures) => collector.broken(index, failures),
                            None => collector.interrupted(),
                        }
                        return false;
                    }
                }
            }
            if !word_after(index) {
                return true;
            }
            let go = u8::from(collector.going() && !setup.stop.load(Ordering::SeqCst));
            let word = Word { go, left_out: work.cells_left_out() }.to_bytes();
            for r in 1..self.world.size() {
                if let Err(gave_up) = self.send(r, word.clone(), TAG_DECISION, "a rank to take rank 0's word") {
                    let failures = self.missing(&[r as usize], &gave_up);
                    match failures {
                        Some(failures) => collector.broken(index, failures),
                        None => collector.interrupted(),
                    }
                    return false;
                }
            }
            true
        });
        collector.hand_on(on_cell);
        Ok(Some(collector.finish()))
    }

    /// A non-leader's report of one cell, and rank 0's word on going on where `word` (the last
    /// cell of a run of cells back to back, or every cell).
    fn report<W: ClientWork>(&self, cell: ClientCell<W::Figures>, stop: &AtomicBool, word: bool, work: &mut W) -> bool
    where
        W::Figures: serde::Serialize,
    {
        let bytes = serde_json::to_vec(&cell).unwrap_or_default();
        let sent = self.send(0, bytes, TAG_REPORT, "rank 0 to take this rank's figures");
        let answer = match sent {
            Ok(()) if !word => return true,
            sent => sent.and_then(|()| self.receive_from(0, TAG_DECISION, "rank 0's word to go on")),
        };
        match answer {
            Ok(bytes) => {
                let word = Word::from_bytes(&bytes);
                work.leave_out(&word.left_out);
                if word.go != 1 {
                    stop.store(true, Ordering::SeqCst);
                }
                true
            }
            Err(gave_up) => {
                // A signal is the launcher ending the job (or the user): rank 0 says what happened.
                if let GaveUp::Broken(why) = &gave_up {
                    eprintln!("iomatrix: rank {}: {why}", self.rank());
                }
                stop.store(true, Ordering::SeqCst);
                false
            }
        }
    }
}

/// Rank 0's word to the other ranks after a cell it handled: go on (1) or stop (0), and the
/// cells its handling left out so far (a curve's points past its bound), each a u32 after the
/// first byte. A rank of a build before the cells were sent reads the first byte alone, as before.
struct Word {
    go: u8,
    left_out: Vec<usize>,
}

impl Word {
    fn to_bytes(&self) -> Vec<u8> {
        let cells = self.left_out.iter().filter_map(|c| u32::try_from(*c).ok());
        std::iter::once(self.go).chain(cells.flat_map(u32::to_le_bytes)).collect()
    }

    /// A word as sent; a short or empty one is "stop" with no cell left out.
    fn from_bytes(bytes: &[u8]) -> Word {
        let go = bytes.first().copied().unwrap_or(0);
        let cells = bytes.get(1..).unwrap_or_default().chunks_exact(4);
        let left_out = cells.map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize).collect();
        Word { go, left_out }
    }
}

struct MpiCoordinator<'a> {
    group: &'a MpiGroup,
}

impl Coordinator for MpiCoordinator<'_> {
    fn rank(&self) -> usize {
        self.group.rank()
    }
    fn size(&self) -> usize {
        self.group.size()
    }
    fn barrier(&self) -> Result<StartTimes, GaveUp> {
        use mpi::collective::CommunicatorCollectives;
        let arrived_unix_ns = crate::unix_ns();
        let mut request = Some(self.group.world.immediate_barrier());
        let waited = self.group.wait("every rank at the start of a cell", || match request.take()?.test() {
            Ok(_) => Some(()),
            Err(pending) => {
                request = Some(pending);
                None
            }
        });
        // A barrier given up on holds no buffers; forgetting it avoids rsmpi's abort on drop.
        std::mem::forget(request);
        waited.map(|()| StartTimes { arrived_unix_ns, left_unix_ns: crate::unix_ns() })
    }
}

/// What the ranks say when a signal reaches them, on a communicator of
/// their own: each rank but 0 tells rank 0 at once ("stopped by a signal"),
/// and rank 0 listens. mpirun signals every rank that is still there when
/// one dies or a host is lost, so a rank that says nothing is the one that
/// is gone; a user's Ctrl-C on mpirun reaches them all, and all speak.
/// Only ever towards rank 0: a send to a rank that is gone can hang inside
/// Open MPI (measured: an `MPI_Isend` to a killed rank never returned).
/// Each side runs on a thread of its own, so only where MPI provides
/// MPI_THREAD_MULTIPLE.
#[derive(Clone)]
pub struct Farewell(Arc<FarewellState>);

struct FarewellState {
    rank: usize,
    size: usize,
    /// None once MPI is being finalised: nothing may use it then.
    comm: Mutex<Option<SharedComm>>,
    /// Rank 0: the ranks that said nothing after the signal, once known.
    silent: Mutex<Option<Vec<usize>>>,
    known: Condvar,
    /// A rank but 0: its word went out (or was given up on).
    said: AtomicBool,
}

impl Farewell {
    fn new(comm: SharedComm, rank: usize, size: usize) -> Farewell {
        errors_return(&comm.0);
        Farewell(Arc::new(FarewellState {
            rank,
            size,
            comm: Mutex::new(Some(comm)),
            silent: Mutex::new(None),
            known: Condvar::new(),
            said: AtomicBool::new(false),
        }))
    }

    /// On this process's first signal, on a thread of its own: a rank but 0
    /// tells rank 0; rank 0 listens for up to [`FAREWELL_WAIT`] and records
    /// who said nothing.
    pub fn on_signal(&self) {
        let state = &self.0;
        let comm = lock(&state.comm);
        if state.rank != 0 {
            if let Some(comm) = comm.as_ref() {
                send_briefly(&comm.0, 0, vec![1], TAG_FAREWELL, FAREWELL_WAIT);
            }
            state.said.store(true, Ordering::SeqCst);
            return;
        }
        let Some(comm) = comm.as_ref() else { return };
        let mut spoke = vec![false; state.size];
        spoke[0] = true;
        let begun = Instant::now();
        while spoke.iter().any(|s| !s) && begun.elapsed() < FAREWELL_WAIT {
            while let Some(m) = comm.0.any_process().immediate_matched_probe_with_tag(TAG_FAREWELL) {
                let (_, status) = m.matched_receive_vec::<u8>();
                if let Some(s) = spoke.get_mut(status.source_rank() as usize) {
                    *s = true;
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        *lock(&state.silent) = Some((0..state.size).filter(|r| !spoke[*r]).collect());
        state.known.notify_all();
    }

    /// Rank 0: the ranks that said nothing after the signal, waiting up to
    /// `within` for rank 0's listening to end; None when it is not known by then.
    pub fn silent(&self, within: Duration) -> Option<Vec<usize>> {
        let silent = lock(&self.0.silent);
        let (silent, _) =
            self.0.known.wait_timeout_while(silent, within, |s| s.is_none()).unwrap_or_else(|e| e.into_inner());
        silent.clone()
    }

    /// Before MPI is finalised: a rank that got a signal lets its word go out
    /// first, then the communicator is freed. A word stuck in MPI (rank 0
    /// gone) keeps it: the launcher is ending this process anyway.
    fn shut(&self, signalled: bool) {
        let begun = Instant::now();
        while signalled && self.0.rank != 0 && !self.0.said.load(Ordering::SeqCst) && begun.elapsed() < FAREWELL_WAIT {
            std::thread::sleep(Duration::from_millis(5));
        }
        // Rank 0's listening holds the communicator for at most FAREWELL_WAIT; a word stuck in MPI
        // may hold it for ever.
        let begun = Instant::now();
        while begun.elapsed() < FAREWELL_WAIT * 2 {
            let held = match self.0.comm.try_lock() {
                Ok(comm) => Some(comm),
                Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => None,
            };
            if let Some(mut comm) = held {
                comm.take();
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Sends `bytes` without waiting more than `patience` for the send to
/// finish; one given up on is forgotten, its buffer leaked (a few bytes,
/// only when a rank is gone).
fn send_briefly(comm: &SimpleCommunicator, to: Rank, bytes: Vec<u8>, tag: i32, patience: Duration) {
    let pointer = Box::into_raw(bytes.into_boxed_slice());
    // SAFETY: the box behind `pointer` is freed only below, once MPI is done with it, or never.
    let buffer: &'static [u8] = unsafe { &*pointer };
    let mut request = comm.process_at_rank(to).immediate_send_with_tag(StaticScope, buffer, tag);
    let begun = Instant::now();
    loop {
        match request.test() {
            Ok(_) => {
                // SAFETY: the send completed, so MPI no longer reads the buffer, and `buffer` is
                // not used again: `pointer` is the box's one owner.
                drop(unsafe { Box::from_raw(pointer) });
                return;
            }
            Err(pending) if begun.elapsed() < patience => {
                request = pending;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(pending) => {
                std::mem::forget(pending);
                return;
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
