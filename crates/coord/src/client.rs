//! One client's side of a run: the `--before` hook, then every cell in order
//! (a barrier before each, also after a failure, so nobody waits for a
//! client that left), then the `--after` hook.

use crate::{ClientFailure, Coordinator, GaveUp, Hooks, OnClientError, StartTimes};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A suite's work for one client.
pub trait ClientWork {
    /// What the client measured in one cell, sent to the leader and merged into the cell.
    type Figures;
    /// Runs cell `index`: untimed preparation, then [`Start::together`],
    /// then the timed work, whose clock starts at the instant `together`
    /// returns (the common start). Returning before `together` is allowed
    /// (a failed preparation); the barrier is then attended for the client.
    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<Self::Figures, ClientFailure>;

    /// At the leader, after a cell was handed on: the cells its handling left out of the run so
    /// far (a curve's points past its bound). Under MPI they go with the leader's word to the
    /// other ranks, which share no memory with it. None by default.
    fn cells_left_out(&self) -> Vec<usize> {
        Vec::new()
    }

    /// At an MPI rank other than the leader: the leader left `cells` out ([`Self::cells_left_out`]);
    /// the client leaves them out too, as the leader's own clients do.
    fn leave_out(&mut self, cells: &[usize]) {
        let _ = cells;
    }
}

/// The start of one cell for one client.
pub struct Start<'a> {
    coord: &'a dyn Coordinator,
    stop: &'a AtomicBool,
    times: Option<StartTimes>,
    broken: Option<String>,
}

impl<'a> Start<'a> {
    fn new(coord: &'a dyn Coordinator, stop: &'a AtomicBool) -> Self {
        Start { coord, stop, times: None, broken: None }
    }

    /// This client's rank (0-based).
    pub fn rank(&self) -> usize {
        self.coord.rank()
    }

    /// Waits until every client is ready; returns the instant they were let
    /// go, or a failure when the run is stopping or the group broke.
    pub fn together(&mut self) -> Result<Instant, ClientFailure> {
        if self.times.is_some() || self.broken.is_some() {
            return Err(ClientFailure::error(self.rank(), "a cell waited for the others twice (a bug)".into()));
        }
        match self.coord.barrier() {
            Ok(times) => {
                self.times = Some(times);
                // The common start, not this thread's wake-up: a client that waited for a CPU
                // starts late on the same clock, so a cell's wall time spans every client's work
                // (with each client's own start, it spanned only the longest client's, and
                // four clients on two CPUs showed 370% CPU).
                let origin = self.coord.released().unwrap_or_else(Instant::now);
                if self.stop.load(Ordering::SeqCst) {
                    Err(ClientFailure::stopped(self.rank()))
                } else {
                    Ok(origin)
                }
            }
            // A signal stops the client; it is not the client's failure.
            Err(GaveUp::Signalled(why)) => {
                self.broken = Some(why);
                Err(ClientFailure::stopped(self.rank()))
            }
            Err(GaveUp::Broken(why)) => {
                self.broken = Some(why.clone());
                Err(ClientFailure::error(self.rank(), why))
            }
        }
    }
}

/// What a client reports for one cell.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClientCell<R> {
    /// The client's rank (0-based).
    pub rank: usize,
    /// When it reached the cell's barrier and when it was let go.
    pub start: StartTimes,
    /// Its figures, or why it has none.
    pub outcome: Result<R, ClientFailure>,
}

/// What every client of a run shares.
pub struct Setup<'a> {
    /// How many cells each client runs, in order.
    pub cells: usize,
    /// The run's working folder: each client gets `client-N` in it. None for
    /// a raw device (hooks then run in the current folder).
    pub workdir: Option<&'a Path>,
    /// The `--before`, `--between-cells` and `--after` commands.
    pub hooks: &'a Hooks,
    /// What the run does when a client fails a cell.
    pub on_error: OnClientError,
    /// Raised to stop every client after its current request: by a client
    /// that failed under `--on-client-error abort`, by the leader, or by a
    /// signal. It must be the run's own flag, never the flag a signal
    /// handler alone raises: waits for other MPI ranks give up at once on a
    /// signal, but a failed client must still hear the leader's word.
    pub stop: &'a AtomicBool,
}

impl Setup<'_> {
    pub(crate) fn dir(&self, rank: usize) -> std::io::Result<PathBuf> {
        match self.workdir {
            Some(w) => {
                let dir = crate::client_dir(w, rank);
                std::fs::create_dir_all(&dir)?;
                Ok(dir)
            }
            None => std::env::current_dir(),
        }
    }
}

/// What one client gets of the [`Setup`]: its own folder instead of the run's.
pub(crate) struct Drive<'a> {
    pub cells: usize,
    pub dir: &'a Path,
    pub hooks: &'a Hooks,
    pub on_error: OnClientError,
    pub stop: &'a AtomicBool,
}

/// Whether the leader handles cell `index` (stores it) before any client starts the next: at the
/// end of each run of `together` cells, and at the last cell. Inside such a run the clients go on
/// to the next cell's barrier at once and the leader holds the cells until the run's last.
pub fn handled_before_next(index: usize, together: usize, cells: usize) -> bool {
    together <= 1 || (index + 1) % together == 0 || index + 1 >= cells
}

/// Takes a client's report of one cell (its index, its figures and the client, which hears the
/// leader's word through it) and says whether the client goes on.
pub(crate) type Report<'r, W> = dyn FnMut(usize, ClientCell<<W as ClientWork>::Figures>, &mut W) -> bool + 'r;

/// Runs one client's cells, handing each outcome to `report`; stops early
/// only when `report` says the leader is gone or the group broke.
pub(crate) fn drive<W: ClientWork>(coord: &dyn Coordinator, how: &Drive<'_>, work: &mut W, report: &mut Report<'_, W>) {
    let rank = coord.rank();
    let hook_failure = how.hooks.before(rank, coord.size(), how.dir).err();
    for index in 0..how.cells {
        let mut start = Start::new(coord, how.stop);
        let between = match (&hook_failure, index) {
            (None, 1..) if !how.stop.load(Ordering::SeqCst) => {
                how.hooks.between_cells(rank, coord.size(), how.dir, index).err()
            }
            _ => None,
        };
        let outcome = match hook_failure.as_ref().or(between.as_ref()) {
            Some(why) => Err(ClientFailure::error(rank, why.to_string())),
            None if how.stop.load(Ordering::SeqCst) => Err(ClientFailure::stopped(rank)),
            None => work.cell(index, &mut start),
        };
        if start.times.is_none() && start.broken.is_none() {
            let _ = start.together();
        }
        if let Err(f) = &outcome {
            if !f.stopped && how.on_error == OnClientError::Abort {
                how.stop.store(true, Ordering::SeqCst);
            }
        }
        let broken = start.broken.is_some();
        let cell = ClientCell { rank, start: start.times.unwrap_or_default(), outcome };
        if !report(index, cell, work) || broken {
            return;
        }
    }
    if hook_failure.is_none() {
        if let Err(why) = how.hooks.after(rank, coord.size(), how.dir) {
            eprintln!("iomatrix: client {rank}: {why}");
        }
    }
}
