//! MPI ranks as clients (the `mpi` feature, rsmpi over Open MPI or MPICH).
//!
//! Each process is one client; rank 0 also leads: after every cell it takes
//! the other ranks' reports, hands the cell on (only rank 0 writes the
//! database), and tells every rank whether the run goes on. Every wait is
//! bounded by [`MpiGroup::timeout`] and gives up early when this process is
//! told to stop (mpirun sends SIGTERM to all ranks when one dies), so a dead
//! or hung rank ends the run with a message instead of hanging it. MPI is
//! called from the thread that initialised it only, except by the live
//! relay ([`MpiGroup::relay_live`]), which runs only where MPI provides
//! `MPI_THREAD_MULTIPLE` and uses a communicator of its own.

use crate::client::{drive, ClientCell, Drive, Setup};
use crate::collect::{Collector, Gathered};
use crate::{ClientFailure, ClientWork, Coordinator, Ending, StartTimes};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Source};
use mpi::Rank;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const TAG_REPORT: i32 = 1;
const TAG_DECISION: i32 = 2;
const TAG_SHARE: i32 = 3;
const TAG_GATHER: i32 = 4;
const TAG_LIVE: i32 = 5;

/// The live relay's own communicator.
struct LiveComm(SimpleCommunicator);

// SAFETY: MPI handles may be used from any thread when MPI runs with
// MPI_THREAD_MULTIPLE; `relay_live` uses this communicator only then, from
// one relay thread at a time, and no other code touches it.
unsafe impl Send for LiveComm {}
// SAFETY: as above: shared references reach only the one relay thread.
unsafe impl Sync for LiveComm {}

pub struct MpiGroup {
    /// Declared before the universe: freed before MPI is finalised.
    live: Option<LiveComm>,
    // Finalises MPI when dropped.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    timeout: std::cell::Cell<Duration>,
    /// Each rank's host, by rank, as rank 0 names it in a failure ("iomx-3 (10.0.0.3)").
    hosts: std::cell::RefCell<Vec<String>>,
    /// Raised by a signal: waits give up at once.
    interrupt: &'static AtomicBool,
}

impl MpiGroup {
    /// Initialises MPI. `None` when this process is the only rank (started
    /// without mpirun, or with `-np 1`): it then runs as an ordinary process.
    pub fn init(timeout: Duration, interrupt: &'static AtomicBool) -> Result<Option<MpiGroup>, String> {
        let (universe, threading) =
            mpi::initialize_with_threading(mpi::Threading::Multiple).ok_or("MPI was already initialised")?;
        let world = universe.world();
        if world.size() == 1 {
            if let Some(size) = std::env::var("OMPI_COMM_WORLD_SIZE").ok().filter(|s| s != "1") {
                return Err(format!(
                    "mpirun started {size} processes but MPI sees one: this binary was built against another MPI \
                     (Open MPI vs MPICH); rebuild it with the MPI whose mpirun you use"
                ));
            }
            return Ok(None);
        }
        // Every rank duplicates (a collective call); each relays only if its MPI allows threads.
        let duplicate = LiveComm(world.duplicate());
        let live = (threading == mpi::Threading::Multiple).then_some(duplicate);
        Ok(Some(MpiGroup {
            live,
            _universe: universe,
            world,
            timeout: std::cell::Cell::new(timeout),
            hosts: Default::default(),
            interrupt,
        }))
    }

    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

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
        let leader = self.is_leader();
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
                        if !done.load(Ordering::Relaxed) {
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

    /// Rank 0 gives `bytes` to every rank; every rank returns them.
    pub fn share(&self, bytes: Option<Vec<u8>>) -> Result<Vec<u8>, String> {
        if self.is_leader() {
            let bytes = bytes.unwrap_or_default();
            for rank in 1..self.world.size() {
                self.world.process_at_rank(rank).send_with_tag(&bytes[..], TAG_SHARE);
            }
            Ok(bytes)
        } else {
            self.receive_from(0, TAG_SHARE, "rank 0's plan")
        }
    }

    /// Every rank gives `bytes`; rank 0 gets them all by rank, the others `None`.
    pub fn gather(&self, bytes: Vec<u8>) -> Result<Option<Vec<Vec<u8>>>, String> {
        if !self.is_leader() {
            self.world.process_at_rank(0).send_with_tag(&bytes[..], TAG_GATHER);
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

    fn receive_from(&self, from: Rank, tag: i32, what: &str) -> Result<Vec<u8>, String> {
        let process = self.world.process_at_rank(from);
        self.wait(what, || process.immediate_matched_probe_with_tag(tag).map(|m| m.matched_receive_vec().0))
    }

    fn receive_any(&self, tag: i32, what: &str) -> Result<(usize, Vec<u8>), String> {
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
    fn wait<T>(&self, what: &str, mut ready: impl FnMut() -> Option<T>) -> Result<T, String> {
        let begun = Instant::now();
        loop {
            if let Some(v) = ready() {
                return Ok(v);
            }
            let waited = begun.elapsed();
            if self.interrupt.load(Ordering::SeqCst) {
                return Err(format!(
                    "stopped by a signal after waiting {:.1} s for {what} (mpirun stops every rank when one dies)",
                    waited.as_secs_f64()
                ));
            }
            if waited > self.timeout.get() {
                return Err(format!(
                    "waited {} s for {what}, the limit (--client-timeout): a rank is hung or gone",
                    self.timeout.get().as_secs()
                ));
            }
            if waited < Duration::from_millis(10) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    pub(crate) fn lead<W, R>(
        &self,
        setup: &Setup<'_>,
        make: impl Fn(usize, &Path) -> W,
        on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), String>,
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
        if !self.is_leader() {
            drive(&coord, &how, &mut work, &mut |_, cell| self.report(cell, setup.stop));
            return Ok(None);
        }
        let mut collector = Collector::new(self.size(), setup.cells, setup.on_error, setup.stop);
        drive(&coord, &how, &mut work, &mut |index, cell| {
            collector.add(index, cell, on_cell);
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
                        collector.add(index, cell, on_cell);
                    }
                    Err(why) => {
                        let failures = missing
                            .iter()
                            .map(|r| ClientFailure::error(*r, format!("rank {r}{}: {why}", self.on_host(*r))))
                            .collect();
                        collector.broken(index, failures);
                        return false;
                    }
                }
            }
            let go = [u8::from(collector.going() && !setup.stop.load(Ordering::SeqCst))];
            for r in 1..self.world.size() {
                self.world.process_at_rank(r).send_with_tag(&go[..], TAG_DECISION);
            }
            true
        });
        Ok(Some(collector.finish()))
    }

    /// A non-leader's report of one cell, and rank 0's word on going on.
    fn report<R: serde::Serialize>(&self, cell: ClientCell<R>, stop: &AtomicBool) -> bool {
        let bytes = serde_json::to_vec(&cell).unwrap_or_default();
        self.world.process_at_rank(0).send_with_tag(&bytes[..], TAG_REPORT);
        match self.receive_from(0, TAG_DECISION, "rank 0's word to go on") {
            Ok(go) => {
                if go.first() != Some(&1) {
                    stop.store(true, Ordering::SeqCst);
                }
                true
            }
            Err(why) => {
                eprintln!("iomatrix: rank {}: {why}", self.rank());
                stop.store(true, Ordering::SeqCst);
                false
            }
        }
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
    fn barrier(&self) -> Result<StartTimes, String> {
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
