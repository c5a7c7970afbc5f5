//! The leader's side: each cell's reports from all clients, put together in
//! cell order and handed on at once; the decision to go on or end the run.

use crate::client::{drive, ClientCell, Drive};
use crate::{local_group, ClientFailure, ClientWork, Ending, Hooks, OnClientError, StartTimes};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Who the clients of a run are.
pub enum Group<'a> {
    /// `n` threads of this process.
    Local(usize),
    /// This process is one MPI rank among many; rank 0 leads.
    #[cfg(feature = "mpi")]
    Mpi(&'a crate::mpi::MpiGroup),
    #[doc(hidden)]
    _Lifetime(std::marker::PhantomData<&'a ()>),
}

impl Group<'_> {
    pub fn size(&self) -> usize {
        match self {
            Group::Local(n) => *n,
            #[cfg(feature = "mpi")]
            Group::Mpi(g) => g.size(),
            Group::_Lifetime(_) => 0,
        }
    }
}

/// One cell from all clients.
#[derive(Debug, Clone)]
pub struct Gathered<R> {
    /// The figures of the clients that finished the cell, by rank.
    pub figures: Vec<R>,
    /// The clients that failed it (only with `--on-client-error continue`).
    pub failures: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    pub starts: Vec<StartTimes>,
}

/// What every client of a run shares.
pub struct Setup<'a> {
    pub cells: usize,
    /// The run's working folder: each client gets `client-N` in it. None for
    /// a raw device (hooks then run in the current folder).
    pub workdir: Option<&'a Path>,
    pub hooks: &'a Hooks,
    pub on_error: OnClientError,
    /// Raised to stop every client after its current request.
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

/// Runs `make(rank, dir)`'s work on every client of `group`. At the leader,
/// `on_cell` gets each cell's [`Gathered`] figures when all clients have
/// reported it, and the result is how many cells were accepted and how the
/// run ended; at the other MPI ranks the result is `None` (they never touch
/// the database).
pub fn lead<W, R>(
    group: &Group<'_>,
    setup: &Setup<'_>,
    make: impl Fn(usize, &Path) -> W + Sync,
    mut on_cell: impl FnMut(usize, Gathered<R>) -> Result<(), String>,
) -> std::io::Result<Option<(usize, Ending)>>
where
    W: ClientWork<Figures = R>,
    R: Send + serde::Serialize + serde::de::DeserializeOwned,
{
    match group {
        Group::Local(n) => lead_local(*n, setup, make, &mut on_cell).map(Some),
        #[cfg(feature = "mpi")]
        Group::Mpi(g) => g.lead(setup, make, &mut on_cell),
        Group::_Lifetime(_) => Ok(None),
    }
}

fn lead_local<W, R>(
    clients: usize,
    setup: &Setup<'_>,
    make: impl Fn(usize, &Path) -> W + Sync,
    on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), String>,
) -> std::io::Result<(usize, Ending)>
where
    W: ClientWork<Figures = R>,
    R: Send,
{
    let dirs = (0..clients).map(|rank| setup.dir(rank)).collect::<std::io::Result<Vec<_>>>()?;
    // Each report waits for the leader's word that its cell was handled (stored), as under MPI: the
    // leader's database writes never overlap the next cell's timed work.
    let (tx, rx) = mpsc::channel::<(usize, ClientCell<R>, mpsc::Sender<()>)>();
    let mut collector = Collector::new(clients, setup.cells, setup.on_error, setup.stop);
    std::thread::scope(|scope| {
        for coord in local_group(clients) {
            let tx = tx.clone();
            let (make, dir) = (&make, &dirs[crate::Coordinator::rank(&coord)]);
            let how = Drive { cells: setup.cells, dir, hooks: setup.hooks, on_error: setup.on_error, stop: setup.stop };
            scope.spawn(move || {
                let mut work = make(crate::Coordinator::rank(&coord), dir);
                drive(&coord, &how, &mut work, &mut |index, cell| {
                    let (handled, wait) = mpsc::channel();
                    tx.send((index, cell, handled)).is_ok() && wait.recv().is_ok()
                });
            });
        }
        drop(tx);
        let mut waiting: Vec<(usize, mpsc::Sender<()>)> = Vec::with_capacity(clients);
        for (index, cell, handled) in rx {
            collector.add(index, cell, on_cell);
            waiting.push((index, handled));
            // Cells before `next` are handled: their clients go on.
            waiting.retain(|(index, handled)| {
                let done = *index < collector.next;
                if done {
                    let _ = handled.send(());
                }
                !done
            });
        }
    });
    Ok(collector.finish())
}

/// Puts reports together cell by cell and decides how the run goes on.
pub(crate) struct Collector<'a, R> {
    clients: usize,
    cells: usize,
    on_error: OnClientError,
    stop: &'a AtomicBool,
    pending: BTreeMap<usize, Vec<ClientCell<R>>>,
    next: usize,
    done: usize,
    ending: Ending,
    lost: Vec<(usize, ClientFailure)>,
}

impl<'a, R> Collector<'a, R> {
    pub(crate) fn new(clients: usize, cells: usize, on_error: OnClientError, stop: &'a AtomicBool) -> Self {
        Collector {
            clients,
            cells,
            on_error,
            stop,
            pending: BTreeMap::new(),
            next: 0,
            done: 0,
            ending: Ending::Completed,
            lost: Vec::new(),
        }
    }

    /// True while the run goes on (no failure under `abort`, no interruption).
    pub(crate) fn going(&self) -> bool {
        self.ending == Ending::Completed
    }

    /// The run broke outside any cell's reports (an MPI rank gone): end it so.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn broken(&mut self, cell: usize, failures: Vec<ClientFailure>) {
        self.stop.store(true, Ordering::SeqCst);
        if self.going() {
            self.ending = Ending::ClientFailed { cell, failures };
        }
    }

    pub(crate) fn add(
        &mut self,
        index: usize,
        cell: ClientCell<R>,
        on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), String>,
    ) {
        self.pending.entry(index).or_default().push(cell);
        while self.pending.get(&self.next).is_some_and(|v| v.len() == self.clients) {
            let mut reports = self.pending.remove(&self.next).unwrap_or_default();
            let index = self.next;
            self.next += 1;
            if !self.going() {
                continue; // the run is ending; later cells only drain
            }
            reports.sort_by_key(|r| r.rank);
            let starts = reports.iter().map(|r| r.start).collect();
            let mut figures = Vec::with_capacity(self.clients);
            let (mut errors, mut stopped) = (Vec::new(), false);
            for report in reports {
                match report.outcome {
                    Ok(f) => figures.push(f),
                    Err(f) if f.stopped => stopped = true,
                    Err(f) => errors.push(f),
                }
            }
            if !errors.is_empty() && (self.on_error == OnClientError::Abort || stopped) {
                self.stop.store(true, Ordering::SeqCst);
                self.ending = Ending::ClientFailed { cell: index, failures: errors };
            } else if stopped {
                self.ending = Ending::Interrupted;
            } else if figures.is_empty() {
                self.lost.extend(errors.into_iter().map(|f| (index, f)));
            } else {
                self.lost.extend(errors.iter().cloned().map(|f| (index, f)));
                match on_cell(index, Gathered { figures, failures: errors, starts }) {
                    Ok(()) => self.done += 1,
                    Err(e) => {
                        self.stop.store(true, Ordering::SeqCst);
                        self.ending = Ending::SinkFailed(e);
                    }
                }
            }
        }
    }

    pub(crate) fn finish(self) -> (usize, Ending) {
        let ending = match self.ending {
            Ending::Completed if self.next < self.cells => Ending::Interrupted,
            Ending::Completed if !self.lost.is_empty() => Ending::ClientsLost(self.lost),
            other => other,
        };
        (self.done, ending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Start;

    /// Client 1 fails cell 2; every other cell gives (cell, rank).
    struct Flaky {
        rank: usize,
    }

    impl ClientWork for Flaky {
        type Figures = (usize, usize);
        fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<(usize, usize), ClientFailure> {
            if index == 2 && self.rank == 1 {
                return Err(ClientFailure::error(1, "disk full".into()));
            }
            start.together()?;
            Ok((index, self.rank))
        }
    }

    fn run(on_error: OnClientError) -> (Vec<(usize, usize, usize)>, usize, Ending) {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let hooks = Hooks::default();
        let setup = Setup { cells: 5, workdir: Some(dir.path()), hooks: &hooks, on_error, stop: &stop };
        let mut seen = Vec::new();
        let (done, ending) = lead(
            &Group::Local(3),
            &setup,
            |rank, dir| {
                assert_eq!(dir.file_name().unwrap(), format!("client-{rank}").as_str());
                Flaky { rank }
            },
            |cell, g: Gathered<(usize, usize)>| {
                assert!(g.figures.iter().all(|(c, _)| *c == cell));
                assert_eq!(g.starts.len(), 3);
                let last_arrival = g.starts.iter().map(|s| s.arrived_unix_ns).max().unwrap();
                assert!(g.starts.iter().all(|s| s.left_unix_ns >= last_arrival));
                seen.push((cell, g.figures.len(), g.failures.len()));
                Ok(())
            },
        )
        .unwrap()
        .unwrap();
        (seen, done, ending)
    }

    #[test]
    fn abort_ends_the_run_at_the_failed_cell() {
        let (seen, done, ending) = run(OnClientError::Abort);
        assert_eq!(seen, [(0, 3, 0), (1, 3, 0)]);
        assert_eq!(done, 2);
        match ending {
            Ending::ClientFailed { cell: 2, failures } => assert_eq!(failures[0].message, "disk full"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn continue_keeps_the_others_and_records_the_loss() {
        let (seen, done, ending) = run(OnClientError::Continue);
        assert_eq!(seen, [(0, 3, 0), (1, 3, 0), (2, 2, 1), (3, 3, 0), (4, 3, 0)]);
        assert_eq!(done, 5);
        assert_eq!(ending, Ending::ClientsLost(vec![(2, ClientFailure::error(1, "disk full".into()))]));
    }
}
