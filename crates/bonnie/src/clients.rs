//! Bonnie's tests from many clients at once (threads, or MPI ranks).
//!
//! Each client runs the whole plan in its own folder `WORKDIR/client-r`
//! (its own data file, its own file tests' folder). Every planned
//! (repeat, test) is one cell: each client opens its file (untimed), waits
//! at the barrier, and all start the test together. The cell merges the
//! clients' figures as IOzone does ([`BonnieCell`]): the sum of the clients'
//! own rates, and all work over the time from the common start to the last
//! client's end.

use crate::runner::ClientTests;
use crate::{planned_tests, BonnieError, BonniePlan, BonnieResult, BonnieTest};
use iomatrix_backend::Place;
use iomatrix_coord::{lead, ClientFailure, ClientWork, Ending, Gathered, Group, Setup, Start, StartTimes};
use iomatrix_core::figures::CachedAtStart;
use iomatrix_stats::{ClientSeries, Series};
use iomatrix_verify::Tally;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// One client's figures for one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientBonnie {
    /// The client's rank (0-based), the order of the clients table.
    pub rank: usize,
    /// `end_ns` counts from the common start.
    pub result: BonnieResult,
    /// Blocks stamped and checked (`--verify`, `--compressible`): putc,
    /// block write, rewrite and block read only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Tally>,
    /// The client's data file in the page cache as the test's clock started; None for the file
    /// tests and on a server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// Its operations over time from its own start of the test; merged into the cell's
    /// ([`BonnieCell::series`]), not stored by client.
    #[serde(default)]
    pub series: ClientSeries,
}

/// One planned (repeat, test) over all clients.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BonnieCell {
    /// The test this cell ran.
    pub test: BonnieTest,
    /// Which run of the set (`-x`), counting from 1.
    pub repeat: u32,
    /// The clients that finished, by rank.
    pub clients: Vec<ClientBonnie>,
    /// The clients that failed (`--on-client-error continue`): their figures are lost.
    pub failures: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    pub starts: Vec<StartTimes>,
    /// The cell as one result. With one client, exactly its figures. With
    /// more: bytes, operations, writes and CPU added up, `per_sec` the sum
    /// of the clients' own rates (IOzone's "children see"), `wall_ns` from
    /// the common start to the last client's end.
    pub total: BonnieResult,
    /// All bytes (or seeks, or files) over `total.wall_ns` ("parent sees").
    pub per_sec_overall: f64,
    /// The clients' verification tallies added up, when the test carries stamped blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Tally>,
    /// The clients' data files in the page cache as the test began, summed over the clients that
    /// looked; None where none could (the file tests, a server's files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// The operations over time, merged over the clients; None where none recorded any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
}

impl BonnieCell {
    /// One cell from every client's figures: the total as described on [`BonnieCell::total`],
    /// `per_sec_overall` over the common wall time, verification and cache tallies added up.
    pub fn merge(test: BonnieTest, repeat: u32, gathered: Gathered<ClientBonnie>) -> BonnieCell {
        let Gathered { figures: clients, failures, starts } = gathered;
        let total = match clients.as_slice() {
            [one] => one.result.clone(),
            _ => {
                let sum = |f: fn(&BonnieResult) -> u64| clients.iter().map(|c| f(&c.result)).sum::<u64>();
                let wall_ns = clients.iter().map(|c| c.result.end_ns).max().unwrap_or(0);
                let (user_ns, sys_ns) = (sum(|r| r.user_ns), sum(|r| r.sys_ns));
                BonnieResult {
                    test,
                    repeat,
                    bytes: sum(|r| r.bytes),
                    ops: sum(|r| r.ops),
                    writes: sum(|r| r.writes),
                    wall_ns,
                    user_ns,
                    sys_ns,
                    per_sec: clients.iter().map(|c| c.result.per_sec).sum(),
                    unit: test.unit().to_string(),
                    cpu_percent: iomatrix_stats::cpu_percent(user_ns + sys_ns, wall_ns),
                    end_ns: wall_ns,
                    max_latency_ns: clients.iter().map(|c| c.result.max_latency_ns).max().unwrap_or(0),
                    series: Default::default(),
                }
            }
        };
        let overall_ns = clients.iter().map(|c| c.result.end_ns).max().unwrap_or(0);
        let per_sec_overall = overall_rate(test, &total, overall_ns);
        let verify = Tally::sum(clients.iter().filter_map(|c| c.verify.as_ref()));
        let cached_at_start = CachedAtStart::sum(clients.iter().filter_map(|c| c.cached_at_start));
        let series = clients
            .iter()
            .any(|c| !c.series.intervals.is_empty())
            .then(|| Series::merge(&clients.iter().map(|c| &c.series).collect::<Vec<_>>()));
        BonnieCell { test, repeat, clients, failures, starts, total, per_sec_overall, verify, cached_at_start, series }
    }

    /// The client with the lowest own rate, if more than one finished.
    pub fn slowest(&self) -> Option<&ClientBonnie> {
        iomatrix_harness::clients::slowest(&self.clients, |c| c.result.per_sec)
    }
}

/// The cell's work over `ns`, in the test's unit: KiB/s of bytes for the
/// data tests, seeks or files per second for the others.
fn overall_rate(test: BonnieTest, total: &BonnieResult, ns: u64) -> f64 {
    if ns == 0 {
        return 0.0;
    }
    match test {
        t if t == BonnieTest::RandomSeeks || t.is_file_test() => total.ops as f64 / (ns as f64 / 1e9),
        _ => iomatrix_stats::kib_per_sec(total.bytes, Duration::from_nanos(ns)),
    }
}

/// Runs the plan on every client of `group`, each in `setup.workdir`'s
/// `client-r` (the caller makes the working folder and removes it). At the
/// leader, `on_cell` gets each merged cell as soon as all clients reported
/// it, and the result says how many it accepted and how the run ended;
/// elsewhere it is None. A test cut short by `setup.stop` is dropped.
pub fn execute<E: std::fmt::Display>(
    plan: &BonniePlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    on_cell: impl FnMut(&BonnieCell) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    execute_at(plan, group, setup, &Place::Local, on_cell)
}

/// [`execute`] with the clients' folders at `place`: on a server, each
/// client connects its own session (at its first test, untimed) and works
/// in `folder/client-r` there.
pub fn execute_at<E: std::fmt::Display>(
    plan: &BonniePlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    mut on_cell: impl FnMut(&BonnieCell) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    let planned = planned_tests(plan);
    let stop = setup.stop;
    lead(
        group,
        setup,
        |rank, dir| Client { rank, tests: ClientTests::new(plan, dir, stop, place, rank) },
        |index, gathered| {
            let (repeat, test) = planned.get(index).copied().unwrap_or((0, BonnieTest::PutcWrite));
            on_cell(&BonnieCell::merge(test, repeat, gathered))
        },
    )
}

struct Client<'a> {
    rank: usize,
    tests: ClientTests<'a>,
}

impl ClientWork for Client<'_> {
    type Figures = ClientBonnie;

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<ClientBonnie, ClientFailure> {
        let rank = self.rank;
        // The barrier's own failure (stopping, a lost rank) is the client's answer, not an I/O error.
        let mut barrier_failure = None;
        let mut ready = || {
            start.together().map_err(|f| {
                barrier_failure = Some(f);
                BonnieError("waiting for the other clients".into())
            })
        };
        let outcome = self.tests.run(index, &mut ready);
        if let Some(failure) = barrier_failure {
            return Err(failure);
        }
        match outcome {
            Ok(Some(mut result)) => Ok(ClientBonnie {
                rank,
                series: std::mem::take(&mut result.series),
                result,
                verify: self.tests.take_verify(),
                cached_at_start: self.tests.take_cached_at_start(),
            }),
            Ok(None) => Err(ClientFailure::stopped(rank)),
            Err(e) => Err(ClientFailure::error(rank, e.0)),
        }
    }
}

/// Where the clients' folders go: the same layout as the other suites.
pub fn client_folder(workdir: &Path, rank: usize) -> std::path::PathBuf {
    iomatrix_coord::client_dir(workdir, rank)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_coord::{Hooks, OnClientError};
    use iomatrix_core::{ByteSize, MIB};
    use std::sync::atomic::AtomicBool;

    fn small_plan() -> BonniePlan {
        let mut plan = BonniePlan::new(ByteSize(2 * MIB));
        plan.chunk = ByteSize(64 * 1024);
        plan.files = 64;
        plan.seeks = 200;
        plan.skip_per_char = true;
        plan
    }

    fn run(clients: usize, on_error: OnClientError) -> (tempfile::TempDir, Vec<BonnieCell>, Ending) {
        let dir = tempfile::tempdir().unwrap();
        let plan = small_plan();
        let stop = AtomicBool::new(false);
        let hooks = Hooks::default();
        let setup = Setup {
            cells: planned_tests(&plan).len(),
            workdir: Some(dir.path()),
            hooks: &hooks,
            on_error,
            stop: &stop,
        };
        let mut cells = Vec::new();
        let (done, ending) = execute(&plan, &Group::Local(clients), &setup, |cell| {
            cells.push(cell.clone());
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(done, cells.len());
        (dir, cells, ending)
    }

    #[test]
    fn three_clients_start_every_test_together_and_the_figures_add_up() {
        let plan = small_plan();
        let (dir, cells, ending) = run(3, OnClientError::Abort);
        assert_eq!(ending, Ending::Completed);
        let planned = planned_tests(&plan);
        assert_eq!(cells.len(), planned.len());
        for (cell, (repeat, test)) in cells.iter().zip(&planned) {
            assert_eq!((cell.test, cell.repeat), (*test, *repeat));
            assert_eq!(cell.clients.len(), 3);
            let last_arrival = cell.starts.iter().map(|s| s.arrived_unix_ns).max().unwrap();
            assert!(cell.starts.iter().all(|s| s.left_unix_ns >= last_arrival), "{test}: {:?}", cell.starts);
            let t = &cell.total;
            assert_eq!(t.bytes, cell.clients.iter().map(|c| c.result.bytes).sum::<u64>());
            assert_eq!(t.ops, cell.clients.iter().map(|c| c.result.ops).sum::<u64>());
            let sum: f64 = cell.clients.iter().map(|c| c.result.per_sec).sum();
            assert!((t.per_sec - sum).abs() <= 1e-9 * sum && sum > 0.0, "{test}");
            assert_eq!(t.wall_ns, cell.clients.iter().map(|c| c.result.end_ns).max().unwrap());
            assert!(
                cell.clients.iter().all(|c| c.result.end_ns >= c.result.wall_ns),
                "{test}: end before its own span"
            );
            assert!(cell.per_sec_overall > 0.0 && cell.per_sec_overall <= t.per_sec * 1.000001, "{test}");
            // Each data test looked at every client's file as its clock started; the file tests have none.
            let held = cell.cached_at_start.map(|c| c.file_bytes);
            match test {
                t if t.is_file_test() => assert_eq!(held, None, "{test}"),
                BonnieTest::PutcWrite | BonnieTest::BlockWrite => assert_eq!(held, Some(0), "{test}: created anew"),
                _ => assert_eq!(held, Some(3 * plan.size.bytes()), "{test}: the three clients' files"),
            }
        }
        // Each client had its own folder; the data file and the files' folder are gone after their last test.
        for rank in 0..3 {
            let folder = client_folder(dir.path(), rank);
            assert!(folder.is_dir());
            assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0, "{}", folder.display());
        }
    }

    #[test]
    fn one_client_is_its_own_total() {
        let (_dir, cells, _) = run(1, OnClientError::Abort);
        for cell in &cells {
            assert_eq!(cell.total, cell.clients[0].result);
            assert!(cell.slowest().is_none());
        }
    }

    #[test]
    fn a_failing_client_is_recorded_and_continue_keeps_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let plan = small_plan();
        let planned = planned_tests(&plan).len();
        let stop = AtomicBool::new(false);
        // Client 1 makes its data file's name a folder: its data tests fail with EISDIR.
        let hooks = Hooks {
            before: Some("if [ \"$IOMATRIX_RANK\" = 1 ]; then mkdir bonnie.dat; fi".into()),
            ..Hooks::default()
        };
        for on_error in [OnClientError::Continue, OnClientError::Abort] {
            let workdir = dir.path().join(format!("{on_error:?}"));
            std::fs::create_dir(&workdir).unwrap();
            let setup = Setup { cells: planned, workdir: Some(&workdir), hooks: &hooks, on_error, stop: &stop };
            let mut cells = Vec::new();
            let (done, ending) = execute(&plan, &Group::Local(2), &setup, |cell| {
                cells.push(cell.clone());
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap()
            .unwrap();
            assert_eq!(done, cells.len());
            if on_error == OnClientError::Abort {
                assert!(cells.is_empty());
                assert!(matches!(ending, Ending::ClientFailed { cell: 0, .. }), "{ending:?}");
                stop.store(false, std::sync::atomic::Ordering::SeqCst);
                continue;
            }
            assert_eq!(cells.len(), planned, "the other client ran every test");
            let data_tests = cells.iter().filter(|c| !c.test.is_file_test());
            for cell in data_tests {
                assert_eq!(cell.clients.len(), 1, "{}", cell.test);
                assert_eq!(cell.clients[0].rank, 0);
                assert_eq!(cell.failures[0].rank, 1);
                assert!(cell.failures[0].message.contains("Is a directory"), "{:?}", cell.failures);
            }
            assert!(cells.iter().filter(|c| c.test.is_file_test()).all(|c| c.clients.len() == 2));
            assert!(matches!(ending, Ending::ClientsLost(ref lost) if !lost.is_empty()), "{ending:?}");
        }
    }
}
