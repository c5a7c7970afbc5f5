//! Runs a suite's work on every client of a run: [`Group`] says who the
//! clients are (threads of this process, or MPI ranks), [`lead`] starts
//! them and hands the leader each cell's [`Gathered`] figures.

use crate::client::{drive, handled_before_next, ClientCell, ClientWork, Drive, Setup};
use crate::collect::{Collector, Gathered};
use crate::{local_group, Ending};
use std::path::Path;
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
    /// How many clients the group has (threads here, or MPI ranks).
    pub fn size(&self) -> usize {
        match self {
            Group::Local(n) => *n,
            #[cfg(feature = "mpi")]
            Group::Mpi(g) => g.size(),
            Group::_Lifetime(_) => 0,
        }
    }

    /// Where client `rank` stands among the clients on its host, which is what decides its CPU
    /// under `--pin shallow` or `spread`: threads of this process are all on this host (their rank); an MPI rank
    /// counts among the ranks on its own host, since a launcher may map ranks round robin over the
    /// hosts (ranks 0 and 2 on one host, which the global rank would put on one CPU).
    pub fn place_on_host(&self, rank: usize) -> usize {
        match self {
            Group::Local(_) => rank,
            #[cfg(feature = "mpi")]
            Group::Mpi(g) => g.rank_on_this_host(),
            Group::_Lifetime(_) => rank,
        }
    }
}

/// Runs `make(rank, dir)`'s work on every client of `group`. At the leader,
/// `on_cell` gets each cell's [`Gathered`] figures when all clients have
/// reported it, and the result is how many cells were accepted and how the
/// run ended; at the other MPI ranks the result is `None` (they never touch
/// the database).
pub fn lead<W, R, E: std::fmt::Display>(
    group: &Group<'_>,
    setup: &Setup<'_>,
    make: impl Fn(usize, &Path) -> W + Sync,
    on_cell: impl FnMut(usize, Gathered<R>) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>>
where
    W: ClientWork<Figures = R>,
    R: Send + serde::Serialize + serde::de::DeserializeOwned,
{
    lead_together(group, setup, 1, make, on_cell)
}

/// [`lead`], with the cells run `together` at a time back to back, as mdtest runs an iteration's
/// phases: inside each run of `together` cells (cells 0 to together-1, then the next run) the
/// clients meet at each cell's barrier and go on at once, and the leader hands the run's cells to
/// `on_cell` (stores them) only after its last, while the clients wait. So no database write, and
/// no wait for one, comes between two phases: a client waiting for the leader's word sleeps, and
/// a wait of 20 ms made the next phase's first rmdir on tmpfs 5 times slower (measured: 4 us
/// back to back, 17-28 us after the wait). A run stopped inside a run of cells still hands on
/// every cell gathered before it stopped.
pub fn lead_together<W, R, E: std::fmt::Display>(
    group: &Group<'_>,
    setup: &Setup<'_>,
    together: usize,
    make: impl Fn(usize, &Path) -> W + Sync,
    mut on_cell: impl FnMut(usize, Gathered<R>) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>>
where
    W: ClientWork<Figures = R>,
    R: Send + serde::Serialize + serde::de::DeserializeOwned,
{
    let together = together.max(1);
    match group {
        Group::Local(n) => lead_local(*n, setup, together, make, &mut on_cell).map(Some),
        #[cfg(feature = "mpi")]
        Group::Mpi(g) => g.lead(setup, together, make, &mut on_cell),
        Group::_Lifetime(_) => Ok(None),
    }
}

/// A client that cannot work (its setup failed): it fails every cell with
/// `why`, and still meets the others at each cell's start and reports, so
/// the leader stores the cause instead of waiting for a client that left.
pub fn fail_every_cell(group: &Group<'_>, setup: &Setup<'_>, why: &str) -> std::io::Result<()> {
    struct Unready<'a>(&'a str);
    impl ClientWork for Unready<'_> {
        type Figures = ();
        fn cell(&mut self, _: usize, start: &mut crate::Start<'_>) -> Result<(), crate::ClientFailure> {
            Err(crate::ClientFailure::error(start.rank(), self.0.to_string()))
        }
    }
    lead(group, setup, |_, _| Unready(why), |_, _: Gathered<()>| Ok::<(), std::convert::Infallible>(())).map(|_| ())
}

fn lead_local<W, R, E: std::fmt::Display>(
    clients: usize,
    setup: &Setup<'_>,
    together: usize,
    make: impl Fn(usize, &Path) -> W + Sync,
    on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), E>,
) -> std::io::Result<(usize, Ending)>
where
    W: ClientWork<Figures = R>,
    R: Send,
{
    let dirs = (0..clients).map(|rank| setup.dir(rank)).collect::<std::io::Result<Vec<_>>>()?;
    // Each report waits for the leader's word that its cell was handled (stored), as under MPI: the
    // leader's database writes never overlap the next cell's timed work.
    let (tx, rx) = mpsc::channel::<(usize, ClientCell<R>, mpsc::Sender<()>)>();
    let mut collector = Collector::new(clients, setup.cells, setup.on_error, setup.stop).together(together);
    let gate = StartGate::default();
    std::thread::scope(|scope| {
        for coord in local_group(clients) {
            let tx = tx.clone();
            let rank = crate::Coordinator::rank(&coord);
            let (make, dir, gate) = (&make, &dirs[rank], &gate);
            let how = Drive { cells: setup.cells, dir, hooks: setup.hooks, on_error: setup.on_error, stop: setup.stop };
            let spawned = std::thread::Builder::new().name(format!("client-{rank}")).spawn_scoped(scope, move || {
                // Nobody starts before every client has its thread: a client that could not
                // have one would leave the others waiting at the first barrier for ever.
                if !gate.wait() {
                    return;
                }
                own_file_table();
                let mut work = make(rank, dir);
                // Inside a run of cells back to back a client keeps its reports and goes on to the
                // next barrier at once: a report sent then would wake the leader's thread, which
                // may take this client's CPU in the middle of the next phase.
                let mut kept = Vec::new();
                // Threads share the leader's memory: cells it leaves out need no word.
                drive(&coord, &how, &mut work, &mut |index, cell, _| {
                    kept.push((index, cell));
                    if !handled_before_next(index, together, setup.cells) {
                        return true;
                    }
                    let (handled, wait) = mpsc::channel();
                    let sent = send_kept(&tx, &mut kept, handled);
                    sent && wait.recv().is_ok()
                });
                // A client that left inside a run (a broken group) still hands in what it kept.
                send_kept(&tx, &mut kept, mpsc::channel().0);
            });
            if let Err(e) = spawned {
                // The clients started so far return at the gate; the scope joins them.
                gate.open(false);
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("no thread could be started for client {rank} of {clients} (the {rank} started were stopped): {e}"),
                ));
            }
        }
        gate.open(true);
        drop(tx);
        let mut waiting: Vec<(usize, mpsc::Sender<()>)> = Vec::with_capacity(clients);
        for (index, cell, handled) in rx {
            collector.add(index, cell, on_cell);
            waiting.push((index, handled));
            // Cells before `next` are handled: their clients go on.
            waiting.retain(|(index, handled)| {
                let done = *index < collector.next();
                if done {
                    let _ = handled.send(());
                }
                !done
            });
        }
        // Cells gathered before the clients left (a broken group) are stored too.
        collector.hand_on(on_cell);
        Ok(())
    })?;
    Ok(collector.finish())
}

/// Sends a client's kept reports to the leader in order, the last with `handled`, the leader's way
/// to say it was stored; false when the leader is gone.
fn send_kept<R>(
    tx: &mpsc::Sender<(usize, ClientCell<R>, mpsc::Sender<()>)>,
    kept: &mut Vec<(usize, ClientCell<R>)>,
    handled: mpsc::Sender<()>,
) -> bool {
    let last = kept.len().saturating_sub(1);
    let mut handled = Some(handled);
    kept.drain(..).enumerate().all(|(i, (index, cell))| {
        let word = if i == last { handled.take() } else { None };
        tx.send((index, cell, word.unwrap_or_else(|| mpsc::channel().0))).is_ok()
    })
}

/// Holds the client threads until all have started (true) or one could not (false).
#[derive(Default)]
pub(crate) struct StartGate {
    word: std::sync::Mutex<Option<bool>>,
    said: std::sync::Condvar,
}

impl StartGate {
    /// Waits for the word: true to go on, false to return at once.
    pub(crate) fn wait(&self) -> bool {
        let mut word = self.word.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *word {
                return go;
            }
            word = self.said.wait(word).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(crate) fn open(&self, go: bool) {
        *self.word.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
        self.said.notify_all();
    }
}

/// Gives the calling client thread a file table of its own, as a client
/// that is a process of its own (an MPI rank, fio's default) has. With one
/// table shared by the harness's threads, every read(2), write(2), pread(2)
/// on a regular file takes and drops a reference on the file (and, with a
/// file position, its lock): 60-140 ns per call measured here, 6-10% of a
/// cached 4 KiB pread, which a single-threaded process does not pay. The
/// client opens, uses and closes its own files on its thread, so nothing
/// else needs to see them. Where unshare is refused (a seccomp filter), the
/// client runs on the shared table.
fn own_file_table() {
    // SAFETY: unshare(CLONE_FILES) only gives this thread a private copy of its file table;
    // descriptors open before stay valid in both copies, and later ones are this thread's.
    let _ = unsafe { libc::unshare(libc::CLONE_FILES) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClientFailure, Hooks, OnClientError, Start};
    use std::sync::atomic::AtomicBool;

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
                Ok::<(), std::convert::Infallible>(())
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

    /// Each cell's events in order: a client past the cell's barrier, the leader handed it.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Event {
        Started(usize),
        Handed(usize),
    }

    struct Logged<'a> {
        log: &'a std::sync::Mutex<Vec<Event>>,
    }

    impl ClientWork for Logged<'_> {
        type Figures = ();
        fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<(), ClientFailure> {
            start.together()?;
            self.log.lock().unwrap().push(Event::Started(index));
            Ok(())
        }
    }

    fn order(together: usize, on_error: OnClientError, fail_at: Option<usize>) -> (Vec<Event>, usize, Ending) {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let hooks = Hooks::default();
        let setup = Setup { cells: 5, workdir: Some(dir.path()), hooks: &hooks, on_error, stop: &stop };
        let log = std::sync::Mutex::new(Vec::new());
        let (done, ending) = lead_together(
            &Group::Local(2),
            &setup,
            together,
            |_, _| Logged { log: &log },
            |cell, _: Gathered<()>| {
                log.lock().unwrap().push(Event::Handed(cell));
                match fail_at {
                    Some(bad) if bad == cell => Err("the database is full"),
                    _ => Ok(()),
                }
            },
        )
        .unwrap()
        .unwrap();
        let events = log.into_inner().unwrap();
        // Two clients log each start: one entry a cell is enough to read the order.
        let mut once = events.clone();
        once.dedup();
        (once, done, ending)
    }

    #[test]
    fn cells_back_to_back_are_handed_on_after_their_run_never_between() {
        use Event::*;
        let (events, done, ending) = order(2, OnClientError::Abort, None);
        // Runs of two: 0-1, 2-3, then 4 alone; no cell of a run is handed on before the run's last
        // cell has started, and every run is handed on before the next run starts.
        assert_eq!(
            events,
            [
                Started(0),
                Started(1),
                Handed(0),
                Handed(1),
                Started(2),
                Started(3),
                Handed(2),
                Handed(3),
                Started(4),
                Handed(4)
            ],
            "each run of cells back to back must be stored after its last cell, and before the next run"
        );
        assert_eq!((done, ending), (5, Ending::Completed));
    }

    #[test]
    fn one_cell_at_a_time_hands_each_on_before_the_next_starts() {
        use Event::*;
        let (events, _, _) = order(1, OnClientError::Abort, None);
        assert_eq!(
            events,
            [
                Started(0),
                Handed(0),
                Started(1),
                Handed(1),
                Started(2),
                Handed(2),
                Started(3),
                Handed(3),
                Started(4),
                Handed(4)
            ]
        );
    }

    #[test]
    fn a_store_failing_inside_a_run_ends_the_run_after_it() {
        use Event::*;
        let (events, done, ending) = order(2, OnClientError::Abort, Some(0));
        // Cell 0 could not be stored: nothing after it is handed on, and no run starts after it.
        assert_eq!(events[..3], [Started(0), Started(1), Handed(0)]);
        assert!(!events[3..].iter().any(|e| matches!(e, Handed(_))), "{events:?}");
        assert!(!events.contains(&Started(3)), "{events:?}");
        assert_eq!(done, 0);
        assert!(matches!(ending, Ending::SinkFailed(ref why) if why == "the database is full"), "{ending:?}");
    }
}
