//! The file-server load from many clients at once (threads, or MPI ranks).
//!
//! Each client runs the whole plan, its own `--connections`, in its own
//! folder `WORKDIR/client-r`. Each phase is one cell: every client gets its
//! connections ready (untimed), waits at the barrier, and lets them go at
//! the common start. The cell merges the clients' phases into one
//! [`PhaseResult`] (histograms added exactly, counts added, completion time
//! the slowest client's) and keeps each client's own ([`FileserverCell`]).
//!
//! A client's connections run inside [`execute`], which drives its phases
//! itself; a client thread talks to it over channels: `execute` says when
//! its connections are ready for a phase and waits for the word to go, and
//! hands back each finished phase. `execute` starts at the client's first
//! phase, after its `--before` hook; a client whose folder is unusable (or
//! whose hook failed) fails as a whole, a [`ClientFailure`] in every phase.
//!
//! `--drop-caches` under many clients: every client drops the page cache
//! on its own host before it reports ready, untimed, and so before the
//! barrier; nobody is let go until all have arrived, so the last drop on a
//! host (by the last client there to finish the previous phase) follows
//! every write on that host and precedes every read. Each MPI host drops
//! its own cache, which rank 0 alone could not do; local clients drop one
//! after another, the repeats costing only untimed time.

use crate::plan::{FileserverPlan, Phase, Planned};
use crate::runner::{execute, Live, PhaseResult};
use iomatrix_backend::Place;
use iomatrix_coord::{
    lead, ClientFailure, ClientWork, Ending, Gathered, Group, OnClientError, Setup, Start, StartTimes,
};
use iomatrix_stats::{kib_per_sec, ClientSeries};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::thread::Scope;
use std::time::{Duration, Instant};

/// One client's phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientPhase {
    /// The client's rank (0-based).
    pub rank: usize,
    /// The phase over this client's connections.
    pub result: PhaseResult,
}

/// One phase over all clients.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileserverCell {
    /// The clients that finished the phase, by rank.
    pub clients: Vec<ClientPhase>,
    /// The clients that failed (`--on-client-error continue`): their figures are lost.
    pub failures: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    pub starts: Vec<StartTimes>,
    /// The phase as one: every connection of every client (renumbered
    /// client by client), histograms merged exactly, counts added; the
    /// completion time is the slowest client's, from the common start, and
    /// `total_kib_per_sec` all bytes over it ("parent sees"). With one
    /// client, exactly its phase.
    pub merged: PhaseResult,
    /// The sum of the clients' own totals (IOzone's "children see").
    pub kib_per_sec_sum: f64,
}

impl FileserverCell {
    /// Phase `index` of `plan` over the clients that finished it; where none did (every client
    /// failed it, `--on-client-error continue`), the phase with nothing done and every client's
    /// plan lost, so it is stored failed in its place rather than missing.
    pub fn merge(plan: &FileserverPlan, index: usize, gathered: Gathered<ClientPhase>) -> FileserverCell {
        let Gathered { figures: clients, failures, starts } = gathered;
        let merged = combine(&clients).unwrap_or_else(|| {
            let phase = plan.phases().get(index).copied().unwrap_or(Phase::Write);
            let one = plan.planned_total(phase);
            let all = (0..failures.len().max(1)).fold(Planned::default(), |sum, _| sum.plus(&one));
            PhaseResult::not_done(index, phase, all)
        });
        let kib_per_sec_sum = clients.iter().map(|c| c.result.total_kib_per_sec).sum();
        FileserverCell { clients, failures, starts, merged, kib_per_sec_sum }
    }

    /// The client with the lowest total, if more than one finished.
    pub fn slowest(&self) -> Option<&ClientPhase> {
        iomatrix_harness::clients::slowest(&self.clients, |c| c.result.total_kib_per_sec)
    }
}

/// The clients' phases as one phase.
fn combine(clients: &[ClientPhase]) -> Option<PhaseResult> {
    let (first, rest) = clients.split_first()?;
    if rest.is_empty() {
        return Some(first.result.clone());
    }
    let mut m = first.result.clone();
    let per_client = m.connections.len();
    for c in rest {
        let r = &c.result;
        for (mine, theirs) in m.latency.iter_mut().zip(&r.latency) {
            mine.merge(theirs);
        }
        let offset = c.rank * per_client;
        m.connections.extend(r.connections.iter().cloned().map(|mut f| {
            f.rank += offset;
            f
        }));
        m.planned = m.planned.plus(&r.planned);
        m.done = m.done.plus(&r.done);
        m.lost = m.lost.plus(&r.lost);
        m.wall_ns = m.wall_ns.max(r.wall_ns);
        m.user_ns += r.user_ns;
        m.sys_ns += r.sys_ns;
        m.connections_ok += r.connections_ok;
        m.connections_failed += r.connections_failed;
        m.connections_skipped += r.connections_skipped;
        for (kind, n) in &r.errors {
            *m.errors.entry(kind.clone()).or_default() += n;
        }
        m.caches_dropped |= r.caches_dropped;
    }
    m.series = ClientSeries::merge(&clients.iter().map(|c| &c.result.series).collect::<Vec<_>>());
    let ok: Vec<f64> = m.connections.iter().filter(|c| c.ok()).map(|c| c.kib_per_sec()).collect();
    m.avg_connection_kib_per_sec = if ok.is_empty() { 0.0 } else { ok.iter().sum::<f64>() / ok.len() as f64 };
    m.total_kib_per_sec = kib_per_sec(m.done.bytes, Duration::from_nanos(m.wall_ns));
    Some(m)
}

/// Runs the plan on every client of `group`, client r in
/// `setup.workdir/client-r` with `lives[r]` (rank 0's own under MPI) for
/// a live display; with a remote `place` (a session maker and the run's folder on
/// the server), in `folder/client-r` on the server instead, made there by
/// the client. At the leader, `on_cell` gets each merged phase, and the
/// result says how many it accepted and how the run ended; elsewhere None.
pub fn execute_clients<E: std::fmt::Display>(
    plan: &FileserverPlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    lives: &[Live],
    mut on_cell: impl FnMut(&FileserverCell) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    let (stop, on_error) = (setup.stop, setup.on_error);
    std::thread::scope(|scope| {
        lead(
            group,
            setup,
            |rank, dir| Client {
                rank,
                scope,
                plan,
                dir: dir.to_path_buf(),
                place: place.of_client(rank),
                stop,
                on_error,
                live: iomatrix_harness::clients::own(lives, rank),
                talk: None,
                ended: None,
            },
            |index, gathered| on_cell(&FileserverCell::merge(plan, index, gathered)),
        )
    })
}

/// What a client's `execute` thread says.
enum Said {
    /// Its connections are ready for this phase.
    Ready(usize),
    Phase(Box<PhaseResult>),
    /// `execute` returned: how, or why it could not run.
    Ended(Result<Ending, NotRun>),
}

/// Why a client's `execute` ended before its phases did (or, for its phases' sink, why a phase
/// could not be handed on).
#[derive(Debug, thiserror::Error)]
enum NotRun {
    #[error("{0}")]
    Failed(std::io::Error),
    #[error("no thread could be started for it: {0}")]
    NoThread(std::io::Error),
    #[error("its connections ended without a word")]
    Silent,
    #[error("the client left")]
    ClientLeft,
}

/// The line to a client's running `execute`.
struct Talk {
    /// The word to go at the clients' common start (Some) or to end (None) for the phase announced.
    go: mpsc::Sender<Option<Instant>>,
    said: mpsc::Receiver<Said>,
}

struct Client<'scope, 'env> {
    rank: usize,
    scope: &'scope Scope<'scope, 'env>,
    plan: &'env FileserverPlan,
    dir: PathBuf,
    /// The client's own place: on a server, its folder there (`dir` is then unused).
    place: Place<'env>,
    stop: &'env AtomicBool,
    on_error: OnClientError,
    live: Option<&'env Live>,
    /// The client's `execute`, started at its first phase: after the
    /// `--before` hook, which may prepare (or spoil) the client's folder
    /// before any connection touches it.
    talk: Option<Talk>,
    /// How `execute` ended, once it has: every later phase fails alike.
    ended: Option<Result<Ending, NotRun>>,
}

impl Client<'_, '_> {
    /// Starts the client's `execute` in a thread of the scope; it waits for
    /// the client's word before each phase.
    fn start(&mut self) {
        let (go, heard) = mpsc::channel::<Option<Instant>>();
        let (say, said) = mpsc::channel::<Said>();
        let (plan, dir, stop, live, on_error) = (self.plan, self.dir.clone(), self.stop, self.live, self.on_error);
        let place = self.place.clone();
        let spawned =
            std::thread::Builder::new().name(format!("client-{}", self.rank)).spawn_scoped(self.scope, move || {
                let quiet = Live::new();
                let live = live.unwrap_or(&quiet);
                let phases = say.clone();
                let ended = execute(
                    plan,
                    &place,
                    &dir,
                    (stop, on_error),
                    live,
                    &mut |k| if say.send(Said::Ready(k)).is_ok() { heard.recv().ok().flatten() } else { None },
                    |result| phases.send(Said::Phase(Box::new(result.clone()))).map_err(|_| NotRun::ClientLeft),
                );
                let _ = say.send(Said::Ended(ended.map(|(_, ending)| ending).map_err(NotRun::Failed)));
            });
        match spawned {
            Ok(_) => self.talk = Some(Talk { go, said }),
            Err(e) => self.ended = Some(Err(NotRun::NoThread(e))),
        }
    }

    /// The next word of the client's `execute` (started on first use); a
    /// failure once it has ended.
    fn hear(&mut self, index: usize) -> Result<Said, ClientFailure> {
        if self.talk.is_none() && self.ended.is_none() {
            self.start();
        }
        match self.talk.as_ref().map(|t| t.said.recv()) {
            Some(Ok(Said::Ended(how))) => self.ended = Some(how),
            Some(Ok(said)) => return Ok(said),
            Some(Err(_)) => self.ended = Some(Err(NotRun::Silent)),
            None => {}
        }
        self.talk = None;
        Err(self.ended_early(index))
    }

    fn go(&self, go: Option<Instant>) {
        if let Some(talk) = &self.talk {
            let _ = talk.go.send(go);
        }
    }

    /// Why phase `index` did not run: how `execute` ended.
    fn ended_early(&self, index: usize) -> ClientFailure {
        match &self.ended {
            Some(Ok(Ending::Interrupted)) => ClientFailure::stopped(self.rank),
            Some(Ok(Ending::SinkFailed(why))) => ClientFailure::error(self.rank, why.clone()),
            // Under abort: a connection failed, and stopped the others.
            Some(Ok(Ending::ClientFailed { failures, .. })) => ClientFailure::error(
                self.rank,
                failures.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "),
            ),
            Some(Ok(other)) => ClientFailure::error(self.rank, format!("phase {index} did not run ({other:?})")),
            Some(Err(why)) => ClientFailure::error(self.rank, format!("the file-server load could not run: {why}")),
            None => ClientFailure::error(self.rank, format!("phase {index} did not run")),
        }
    }

    fn out_of_step(&self, index: usize) -> ClientFailure {
        ClientFailure::error(self.rank, format!("phase {index} out of step (a bug)"))
    }
}

impl ClientWork for Client<'_, '_> {
    type Figures = ClientPhase;

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<ClientPhase, ClientFailure> {
        // Untimed: the connections are made (first phase), the page cache
        // dropped where the plan says, and they wait at their gate.
        match self.hear(index)? {
            Said::Ready(k) if k == index => {}
            _ => return Err(self.out_of_step(index)),
        }
        match start.together() {
            Ok(origin) => self.go(Some(origin)),
            Err(failure) => {
                self.go(None);
                return Err(failure);
            }
        }
        match self.hear(index)? {
            Said::Phase(result) => Ok(ClientPhase { rank: self.rank, result: *result }),
            _ => Err(self.out_of_step(index)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FileSizes, Op, Then};
    use iomatrix_coord::Hooks;
    use iomatrix_core::ByteSize;

    fn plan() -> FileserverPlan {
        FileserverPlan {
            connections: 3,
            files_per_connection: 4,
            sizes: FileSizes::List(vec![ByteSize(8192), ByteSize(20000)]),
            record: ByteSize(4096),
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

    fn run(clients: usize, hooks: &Hooks, on_error: OnClientError) -> (tempfile::TempDir, Vec<FileserverCell>, Ending) {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let setup = Setup { cells: 2, workdir: Some(dir.path()), hooks, on_error, stop: &stop };
        let lives: Vec<Live> = (0..clients).map(|_| Live::new()).collect();
        let mut cells = Vec::new();
        let (done, ending) = execute_clients(&plan(), &Group::Local(clients), &setup, &Place::Local, &lives, |cell| {
            cells.push(cell.clone());
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(done, cells.len());
        (dir, cells, ending)
    }

    #[test]
    fn three_clients_run_every_phase_together_and_the_figures_add_up() {
        let (dir, cells, ending) = run(3, &Hooks::default(), OnClientError::Abort);
        assert_eq!(ending, Ending::Completed);
        assert_eq!(cells.len(), 2, "write and read");
        for cell in &cells {
            assert_eq!(cell.clients.len(), 3);
            let last_arrival = cell.starts.iter().map(|s| s.arrived_unix_ns).max().unwrap();
            assert!(cell.starts.iter().all(|s| s.left_unix_ns >= last_arrival));
            let m = &cell.merged;
            assert_eq!(m.connections.len(), 9);
            let ranks: Vec<usize> = m.connections.iter().map(|c| c.rank).collect();
            assert_eq!(ranks, (0..9).collect::<Vec<_>>());
            assert_eq!(m.done.files, 3 * 3 * 4);
            assert_eq!(m.done.bytes, cell.clients.iter().map(|c| c.result.done.bytes).sum::<u64>());
            for op in Op::ALL {
                let sum: u64 = cell.clients.iter().map(|c| c.result.latency(op).count()).sum();
                assert_eq!(m.latency(op).count(), sum, "{op:?}: merged exactly");
            }
            assert_eq!(m.wall_ns, cell.clients.iter().map(|c| c.result.wall_ns).max().unwrap());
            let sum: f64 = cell.clients.iter().map(|c| c.result.total_kib_per_sec).sum();
            assert!((cell.kib_per_sec_sum - sum).abs() <= 1e-9 * sum);
            assert!(cell.slowest().is_some());
        }
        for r in 0..3 {
            assert!(dir.path().join(format!("client-{r}/conn-0000")).is_dir());
        }
    }

    #[test]
    fn one_client_is_its_own_phase() {
        let (_dir, cells, _) = run(1, &Hooks::default(), OnClientError::Abort);
        for cell in &cells {
            assert_eq!(cell.merged.done.bytes, cell.clients[0].result.done.bytes);
            assert_eq!(cell.merged.connections.len(), 3);
            assert!(cell.slowest().is_none());
        }
    }

    #[test]
    fn a_failing_client_is_recorded_and_continue_keeps_the_others() {
        // Client 2's hook fails: the client fails every phase, the others run.
        let hooks = Hooks { before: Some("if [ \"$IOMATRIX_RANK\" = 2 ]; then exit 3; fi".into()), ..Hooks::default() };
        let (_dir, cells, ending) = run(3, &hooks, OnClientError::Continue);
        assert_eq!(cells.len(), 2);
        for cell in &cells {
            assert_eq!(cell.clients.len(), 2);
            assert_eq!(cell.failures[0].rank, 2);
        }
        assert!(matches!(ending, Ending::ClientsLost(ref lost) if lost.len() == 2), "{ending:?}");
        let (_dir, cells, ending) = run(3, &hooks, OnClientError::Abort);
        assert!(cells.is_empty());
        assert!(matches!(ending, Ending::ClientFailed { cell: 0, .. }), "{ending:?}");
    }

    #[test]
    fn a_phase_every_client_failed_is_handed_on_with_nothing_done_and_everything_lost() {
        let hooks = Hooks { before: Some("exit 3".into()), ..Hooks::default() };
        let (_dir, cells, ending) = run(2, &hooks, OnClientError::Continue);
        assert_eq!(cells.len(), 2, "write and read, each in its place");
        for (k, cell) in cells.iter().enumerate() {
            assert!(cell.clients.is_empty());
            assert_eq!(cell.failures.len(), 2);
            let m = &cell.merged;
            assert_eq!((m.index, m.phase), (k, plan().phases()[k]));
            assert_eq!((m.connections_ok, m.done), (0, Planned::default()));
            let one = plan().planned_total(m.phase);
            assert_eq!(m.lost, one.plus(&one), "both clients' connections' work lost");
            assert_eq!(m.total_kib_per_sec, 0.0);
        }
        assert!(matches!(ending, Ending::ClientsLost(ref lost) if lost.len() == 4), "{ending:?}");
    }

    #[test]
    fn the_hook_comes_first_and_a_client_without_a_folder_fails_as_a_whole() {
        // Every hook finds its folder untouched; client 1's puts a file in its place.
        let hooks = Hooks {
            before: Some(
                "[ -z \"$(ls -A)\" ] || exit 9; if [ \"$IOMATRIX_RANK\" = 1 ]; then cd .. && rmdir client-1 && : > \
                 client-1; fi"
                    .into(),
            ),
            after: None,
            between_cells: None,
        };
        let (_dir, cells, ending) = run(3, &hooks, OnClientError::Continue);
        assert_eq!(cells.len(), 2);
        for cell in &cells {
            assert_eq!(cell.clients.iter().map(|c| c.rank).collect::<Vec<_>>(), [0, 2]);
            assert_eq!(cell.merged.connections_failed, 0);
            assert_eq!(cell.failures.len(), 1);
            assert_eq!(cell.failures[0].rank, 1);
            assert!(cell.failures[0].message.contains("client-1: not a folder"), "{:?}", cell.failures);
        }
        assert!(matches!(ending, Ending::ClientsLost(ref lost) if lost.len() == 2), "{ending:?}");
    }
}
