//! The common client flags (`--clients`, `--before`, `--after`,
//! `--on-client-error`, `--client-timeout`) as a validated [`ClientPlan`],
//! and what the suites' many-client code shares: a client's own threads
//! let go together at the common start ([`start_together`]), the slowest
//! client of a cell ([`slowest`]), and a cell's client figures as stored.

use clap::Args;
use iomatrix_coord::{ClientFailure, Hooks, OnClientError, Start};
use iomatrix_core::{parse_duration, UsageError};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The client flags every suite takes: how many clients, their hooks, what
/// a failed one does to the run.
// The fields' doc comments are the flags' help text, where `HOST[:N]` is a host's optional slots, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Clients")]
pub struct ClientArgs {
    /// Clients on this host (threads), each in its own folder `client-N` of the working folder,
    /// all starting every cell together; the threads and memory they need are checked against this
    /// machine's limits before the run starts. Under mpirun each rank is one client: leave this at 1
    #[arg(long, visible_alias = "numjobs", default_value_t = 1, value_name = "N")]
    pub clients: usize,

    /// Shell command each client runs before its first cell (e.g. to log in to the server),
    /// in its folder, with IOMATRIX_RANK, IOMATRIX_CLIENTS and IOMATRIX_CLIENT_DIR set;
    /// a failure fails that client
    #[arg(long, value_name = "CMD")]
    pub before: Option<String>,

    /// Shell command each client runs after its last cell (same environment as --before)
    #[arg(long, value_name = "CMD")]
    pub after: Option<String>,

    /// Shell command each client runs between two cells, untimed, before the next cell
    /// prepares (same environment as --before, plus IOMATRIX_CELL: the next cell's number
    /// from 0); a failure fails that client's next cell
    #[arg(long, value_name = "CMD")]
    pub between_cells: Option<String>,

    /// When a client fails a cell: abort (stop every client, end the run) or continue
    /// (record the failure and its lost samples, keep the others' figures, go on)
    #[arg(long, default_value = "abort", value_name = "WHAT")]
    pub on_client_error: String,

    /// Under mpirun: the longest rank 0 waits for another rank (the others wait twice as long for
    /// rank 0, so it stores the run first); a hung or dead rank ends the run with a message after
    /// this, naming it and keeping the finished cells; at most 720h (30 days)
    #[arg(long, default_value = "10m", value_name = "TIME", allow_hyphen_values = true)]
    pub client_timeout: String,

    /// Run on these hosts: starts `mpirun --hostfile FILE` (a line per host: HOST [slots=N]) or
    /// `mpirun --host a,b,c` (HOST[:N]) with this iomatrix as the ranks, one client per slot, and
    /// prints the command (a build with `--features mpi`); ignored by the ranks themselves
    #[arg(long, value_name = "FILE|HOST,...")]
    pub hosts: Option<String>,
}

impl Default for ClientArgs {
    fn default() -> ClientArgs {
        ClientArgs {
            clients: 1,
            before: None,
            after: None,
            between_cells: None,
            on_client_error: "abort".into(),
            client_timeout: "10m".into(),
            hosts: None,
        }
    }
}

/// The bound on any wait for another MPI rank, until the command line sets it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClientPlan {
    /// Clients in all: threads here, or MPI ranks.
    pub count: usize,
    pub hooks: Hooks,
    pub on_error: OnClientError,
    pub timeout: Duration,
}

impl ClientPlan {
    /// One client, no hooks, abort on failure: front ends without the flags.
    pub fn single() -> ClientPlan {
        ClientPlan { count: 1, hooks: Hooks::default(), on_error: OnClientError::Abort, timeout: DEFAULT_TIMEOUT }
    }

    /// `mpi_ranks` is the number of ranks when running under mpirun.
    pub fn from_args(common: &ClientArgs, mpi_ranks: Option<usize>) -> Result<ClientPlan, UsageError> {
        if common.clients == 0 {
            return Err(UsageError::new("--clients 0: a run needs at least one client; give --clients 1 or more"));
        }
        let count = match mpi_ranks {
            Some(_) if common.clients > 1 => {
                return Err(UsageError::new(format!(
                    "--clients {} under mpirun: each MPI rank is one client; leave --clients out and choose the \
                     number of clients with mpirun -np",
                    common.clients
                )))
            }
            Some(ranks) => ranks,
            None => common.clients,
        };
        let on_error = common
            .on_client_error
            .parse::<OnClientError>()
            .map_err(|e| UsageError::new(format!("--on-client-error: {e}")))?;
        let timeout = parse_duration(&common.client_timeout)
            .map_err(|e| UsageError::new(format!("--client-timeout {}: {e}", common.client_timeout)))?;
        let hook = |flag: &str, cmd: &Option<String>| match cmd {
            Some(c) if c.trim().is_empty() => Err(UsageError::new(format!("{flag} is empty: give a shell command"))),
            other => Ok(other.clone()),
        };
        let hooks = Hooks {
            before: hook("--before", &common.before)?,
            after: hook("--after", &common.after)?,
            between_cells: hook("--between-cells", &common.between_cells)?,
        };
        Ok(ClientPlan { count, hooks, on_error, timeout })
    }
}

/// One client's figures as a cell stores them in `client_figures`: its own
/// fields, and its rank.
pub fn figures_with_rank<T: serde::Serialize>(rank: usize, figures: &T) -> serde_json::Value {
    let mut v = serde_json::to_value(figures).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.insert("rank".into(), serde_json::json!(rank));
    }
    v
}

/// The many-client fields of a cell's `metrics`: the failed clients and
/// every client's arrival at and release from the start barrier.
pub fn add_client_metrics(
    metrics: &mut serde_json::Value,
    failures: &[iomatrix_coord::ClientFailure],
    starts: &[iomatrix_coord::StartTimes],
) {
    if let Some(m) = metrics.as_object_mut() {
        m.insert("failed_clients".into(), serde_json::json!(failures));
        m.insert("start_barrier".into(), serde_json::json!(starts));
    }
}

/// The client with the lowest `rate` of those that finished a cell, if more than one did (with
/// one, there is no slowest to name).
pub fn slowest<T>(clients: &[T], rate: impl Fn(&T) -> f64) -> Option<&T> {
    if clients.len() < 2 {
        return None;
    }
    clients.iter().min_by(|a, b| rate(a).total_cmp(&rate(b)))
}

/// Client `rank`'s own of a per-client list (its live display, say), or the first: under MPI a
/// rank's process holds one, its own, and None only for an empty list.
pub fn own<T>(per_client: &[T], rank: usize) -> Option<&T> {
    per_client.get(rank).or(per_client.first())
}

/// A suite whose clients work in folders refuses a run with neither a working folder
/// (`setup.workdir`, None for a raw device) nor a server's folder: "`what` needs a folder target".
pub fn needs_folder(
    what: &str,
    place: &iomatrix_backend::Place<'_>,
    setup: &iomatrix_coord::Setup<'_>,
) -> std::io::Result<()> {
    if place.remote_folder().is_none() && setup.workdir.is_none() {
        return Err(std::io::Error::other(format!("{what} needs a folder target")));
    }
    Ok(())
}

/// A cell's progress line's note of its clients where their rates add up: " summed over N clients,
/// overall OVERALL (slowest: client R at SLOWEST)", each figure as the suite writes it.
pub fn summed_note(clients: usize, overall: &str, slowest_rank: usize, slowest: &str) -> String {
    format!(" summed over {clients} clients, overall {overall} (slowest: client {slowest_rank} at {slowest})")
}

/// A cell's progress line's note of its clients: " (N clients; slowest: client R at RATE)", the
/// rate as the suite writes it.
pub fn slowest_note(clients: usize, slowest_rank: usize, rate: &str) -> String {
    format!(" ({clients} clients; slowest: client {slowest_rank} at {rate})")
}

/// A cell's progress line's note of its failed clients (`--on-client-error continue`):
/// ", N client(s) failed", or nothing when none failed.
pub fn failed_note(failed: usize) -> String {
    if failed == 0 {
        String::new()
    } else {
        format!(", {failed} client(s) failed")
    }
}

/// The gate a client's threads wait at: how many are ready, and the word (`Some(Some(at))`: go,
/// from the common start `at`; `Some(None)`: the start was called off).
#[derive(Default)]
pub struct Gate {
    state: Mutex<(usize, Option<Option<Instant>>)>,
    cv: Condvar,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, (usize, Option<Option<Instant>>)> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn count_ready(&self) {
        self.lock().0 += 1;
        self.cv.notify_all();
    }

    fn wait_for_word(&self) -> Option<Instant> {
        let mut s = self.lock();
        loop {
            if let Some(word) = s.1 {
                return word;
            }
            s = self.cv.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn wait_all(&self, n: usize) {
        let mut s = self.lock();
        while s.0 < n {
            s = self.cv.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn open(&self, word: Option<Instant>) {
        self.lock().1 = Some(word);
        self.cv.notify_all();
    }
}

/// One thread's place at the [`Gate`]: it says it is ready once ([`Party::ready`]); a thread that
/// ends or panics before it did counts as ready as it goes, so the client never waits for it.
pub struct Party<'g> {
    gate: &'g Gate,
    counted: std::cell::Cell<bool>,
}

impl Party<'_> {
    /// Says the thread is ready (counted once, however often it asks) and waits for the word:
    /// the common start, or None when the start was called off.
    pub fn ready(&self) -> Option<Instant> {
        if !self.counted.replace(true) {
            self.gate.count_ready();
        }
        self.gate.wait_for_word()
    }
}

impl Drop for Party<'_> {
    fn drop(&mut self) {
        if !self.counted.get() {
            self.gate.count_ready();
        }
    }
}

/// How a client's threads are made: each one's name (from its party) and stack size.
pub struct Threads<N> {
    /// The thread's name, e.g. `conn-3`.
    pub name: N,
    /// Its stack: a protocol client's futures want more than the default.
    pub stack_size: usize,
}

/// A client's own threads for one cell (its connections), let go together: one scoped thread per
/// item of `parties`, each running `work` with its [`Party`]. Each gets ready (untimed) and waits;
/// once all are, the client meets the other clients at `start`, `on_start` runs, and all are let
/// go from the common start; if the barrier fails they are called off, joined, and its failure is
/// the answer. Returns each thread's result in the order of `parties`, `Err` for a thread that
/// could not be started; a thread that panicked fails the client.
pub fn start_together<P: Send, T: Send, N: Fn(&P) -> String>(
    parties: impl IntoIterator<Item = P>,
    threads: &Threads<N>,
    start: &mut Start<'_>,
    on_start: impl FnOnce(Instant),
    work: impl Fn(P, &Party<'_>) -> T + Sync,
) -> Result<Vec<Result<T, std::io::Error>>, ClientFailure> {
    let gate = Gate::default();
    let rank = start.rank();
    std::thread::scope(|scope| {
        let (gate, work) = (&gate, &work);
        let spawned: Vec<(String, std::io::Result<_>)> = parties
            .into_iter()
            .map(|party| {
                let name = (threads.name)(&party);
                let builder = std::thread::Builder::new().name(name.clone()).stack_size(threads.stack_size);
                (name, builder.spawn_scoped(scope, move || work(party, &Party { gate, counted: false.into() })))
            })
            .collect();
        gate.wait_all(spawned.iter().filter(|(_, s)| s.is_ok()).count());
        let together = start.together();
        if let Ok(origin) = together {
            on_start(origin);
        }
        gate.open(together.as_ref().ok().copied());
        let joined = join(spawned, rank);
        together?;
        joined
    })
}

/// The threads' results in their order, every thread joined; a panic fails the client (`rank`).
fn join<T>(
    spawned: Vec<(String, std::io::Result<std::thread::ScopedJoinHandle<'_, T>>)>,
    rank: usize,
) -> Result<Vec<Result<T, std::io::Error>>, ClientFailure> {
    let mut out = Vec::with_capacity(spawned.len());
    let mut panicked = None;
    for (name, handle) in spawned {
        match handle.map(std::thread::ScopedJoinHandle::join) {
            Ok(Ok(result)) => out.push(Ok(result)),
            Ok(Err(_)) => panicked = panicked.or(Some(name)),
            Err(e) => out.push(Err(e)),
        }
    }
    match panicked {
        Some(name) => Err(ClientFailure::error(rank, format!("thread {name} panicked (a bug)"))),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_coord::{lead, ClientWork, Gathered, Group, Setup};
    use std::sync::atomic::AtomicBool;

    /// A client whose one cell runs `start_together` over three threads, thread `t-i` doing
    /// `each(i, party)`; by thread, what it was told: "start" (the origin `on_start` saw), "off"
    /// (no word), "other" (another instant), "not started".
    struct Three<E> {
        each: E,
    }

    impl<E: Fn(usize, &Party<'_>) -> Option<Instant> + Sync> ClientWork for Three<E> {
        type Figures = Vec<String>;

        fn cell(&mut self, _: usize, start: &mut Start<'_>) -> Result<Vec<String>, ClientFailure> {
            let mut seen = None;
            let threads = Threads { name: |i: &usize| format!("t-{i}"), stack_size: 64 * 1024 };
            let out = start_together(0..3, &threads, start, |at| seen = Some(at), |i, party| (self.each)(i, party))?;
            let told = |word: Result<Option<Instant>, _>| match word {
                Ok(Some(at)) if Some(at) == seen => "start",
                Ok(Some(_)) => "other",
                Ok(None) => "off",
                Err(_) => "not started",
            };
            Ok(out.into_iter().map(|w| told(w).to_string()).collect())
        }
    }

    /// One cell of one client running `each` on three threads, bounded in time (a gate that never
    /// opens fails the test instead of hanging it).
    fn one_cell(each: impl Fn(usize, &Party<'_>) -> Option<Instant> + Sync + Send + 'static) -> Gathered<Vec<String>> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let stop = AtomicBool::new(false);
            let hooks = Hooks::default();
            let setup =
                Setup { cells: 1, workdir: None, hooks: &hooks, on_error: OnClientError::Continue, stop: &stop };
            let mut cells = Vec::new();
            let led = lead(
                &Group::Local(1),
                &setup,
                |_, _| Three { each: &each },
                |_, gathered| {
                    cells.push(gathered);
                    Ok::<(), std::convert::Infallible>(())
                },
            );
            assert!(led.is_ok(), "{:?}", led.err());
            let _ = tx.send(cells.pop().expect("the cell"));
        });
        rx.recv_timeout(Duration::from_secs(60)).expect("the cell ends within 60 s (a gate left closed hangs it)")
    }

    #[test]
    fn every_thread_is_let_go_from_the_common_start_in_its_order() {
        let gathered = one_cell(|_, party| party.ready());
        assert_eq!(gathered.figures[0], ["start"; 3], "each thread got the word: the common start");
    }

    #[test]
    fn a_thread_that_ends_before_it_is_ready_does_not_hold_the_others() {
        let gathered = one_cell(|i, party| if i == 1 { None } else { party.ready() });
        assert_eq!(gathered.figures[0], ["start", "off", "start"]);
    }

    #[test]
    fn a_thread_that_panics_before_it_is_ready_fails_its_client_without_a_hang() {
        let gathered = one_cell(|i, party| if i == 2 { panic!("planted") } else { party.ready() });
        assert!(gathered.figures.is_empty(), "the client failed the cell");
        assert_eq!(gathered.failures.len(), 1);
        assert!(gathered.failures[0].message.contains("thread t-2 panicked (a bug)"), "{:?}", gathered.failures);
    }

    #[test]
    fn the_slowest_client_is_named_only_among_two_or_more() {
        assert_eq!(slowest(&[3.0], |r| *r), None);
        assert_eq!(slowest(&[3.0, 1.5, 2.0], |r| *r), Some(&1.5));
    }

    #[test]
    fn a_client_takes_its_own_or_the_first() {
        assert_eq!(own(&["a", "b"], 1), Some(&"b"));
        assert_eq!(own(&["a"], 3), Some(&"a"), "an MPI rank's one");
        assert_eq!(own::<&str>(&[], 0), None);
    }

    #[test]
    fn a_run_without_a_folder_is_refused_by_name() {
        let (stop, hooks, dir) = (AtomicBool::new(false), Hooks::default(), std::env::temp_dir());
        let mut setup = Setup { cells: 1, workdir: None, hooks: &hooks, on_error: OnClientError::Abort, stop: &stop };
        let place = iomatrix_backend::Place::Local;
        let refused = needs_folder("the X suite", &place, &setup).expect_err("no folder");
        assert_eq!(refused.to_string(), "the X suite needs a folder target");
        setup.workdir = Some(&dir);
        assert!(needs_folder("the X suite", &place, &setup).is_ok());
    }

    #[test]
    fn the_clients_notes_read_as_the_suites_wrote_them() {
        assert_eq!(
            summed_note(3, "12.5 MiB/min", 1, "3.0 MiB/min"),
            " summed over 3 clients, overall 12.5 MiB/min (slowest: client 1 at 3.0 MiB/min)"
        );
        assert_eq!(slowest_note(2, 0, "512 KB/s"), " (2 clients; slowest: client 0 at 512 KB/s)");
    }

    #[test]
    fn the_failed_clients_note_is_empty_without_failures() {
        assert_eq!(failed_note(0), "");
        assert_eq!(failed_note(2), ", 2 client(s) failed");
    }
}
