//! The backup walk from many clients at once (threads, or MPI ranks).
//!
//! With one client it walks the plan's root; with N > 1, client r walks its
//! own tree `ROOT/client-r` (the layout a kept many-client run leaves), as N
//! backup agents would, each on its own share. The walk is one cell: every
//! client prepares (a cold walk's syncfs and cache drop, untimed), waits at
//! the start barrier, and walks from the common start. The cell merges the
//! clients' figures ([`BackupCell`]): counts, size classes, extents and
//! errors added up, the sum of the clients' own rates, and all bytes over
//! the time from the common start to the last client's end.

use crate::remote::RemoteTree;
use crate::result::{BackupResult, Live, SizeClass, MAX_EXAMPLES};
use crate::walk::{prepare, walk, LocalTree, Prepared};
use crate::BackupPlan;
use iomatrix_backend::Place;
use iomatrix_coord::{lead, ClientFailure, ClientWork, Ending, Gathered, Group, Setup, Start, StartTimes};
use iomatrix_core::figures::CachedAtStart;
use iomatrix_extents::{ExtentSummary, ExtentTally, FileExtents};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const MIB: f64 = 1048576.0;

/// The tree client `rank` of `clients` walks: the root itself for one
/// client, else its folder `client-RANK`.
pub fn client_root(root: &Path, rank: usize, clients: usize) -> PathBuf {
    if clients > 1 {
        root.join(format!("client-{rank}"))
    } else {
        root.to_path_buf()
    }
}

/// The client trees missing below `root` (not there, or not a folder);
/// empty for one client, which walks `root` itself.
pub fn missing_client_trees(root: &Path, clients: usize) -> Vec<PathBuf> {
    if clients < 2 {
        return Vec::new();
    }
    (0..clients).map(|rank| client_root(root, rank, clients)).filter(|tree| !tree.is_dir()).collect()
}

/// One client's walk of the cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientWalk {
    /// The client's rank (0-based).
    pub rank: usize,
    /// The tree it walked.
    pub root: String,
    /// Its figures; `wall_ns` runs from the common start to its walk's end.
    pub result: BackupResult,
    /// (extents, files with that many) over the files FIEMAP mapped (those
    /// of `result.extents`): the clients' summaries merge exactly through these.
    pub extent_counts: Vec<(u64, u64)>,
    /// The files it read, over time from the common start; merged into the cell's
    /// ([`BackupCell::series`]).
    #[serde(default)]
    pub series: iomatrix_stats::ClientSeries,
}

/// The walk's one cell over all clients.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackupCell {
    /// The clients that finished, by rank.
    pub clients: Vec<ClientWalk>,
    /// The clients that failed (`--on-client-error continue`): their figures are lost.
    pub failures: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    pub starts: Vec<StartTimes>,
    /// All clients' walks as one: counts, classes, extents, errors and CPU
    /// added up; `read_ns` the clients' timed parts summed; `wall_ns` the
    /// time from the common start to the last client's end; `mib_per_min`,
    /// `mib_per_sec` and `files_per_sec` the sums of the clients' own rates
    /// (IOzone's "children see"). With one client: that client's figures.
    pub total: BackupResult,
    /// All bytes over `total.wall_ns` ("parent sees").
    pub mib_per_min_overall: f64,
    /// The files read over time, merged over the clients; None where none read any.
    #[serde(default)]
    pub series: Option<iomatrix_stats::Series>,
}

impl BackupCell {
    /// One cell from every client's walk: counts and the clients' own rates added up, and the
    /// overall rate over the common wall time.
    pub fn merge(gathered: Gathered<ClientWalk>) -> BackupCell {
        let Gathered { figures: clients, failures, starts } = gathered;
        let mut total = BackupResult { cold: clients.iter().any(|c| c.result.cold), ..BackupResult::default() };
        for c in &clients {
            add(&mut total, &c.result);
        }
        total.extents = merge_extents(&clients);
        total.derive();
        // The clients' own rates added up: with one client, exactly its own.
        total.mib_per_sec = clients.iter().map(|c| c.result.mib_per_sec).sum();
        total.mib_per_min = clients.iter().map(|c| c.result.mib_per_min).sum();
        total.files_per_sec = clients.iter().map(|c| c.result.files_per_sec).sum();
        let mib_per_min_overall =
            if total.wall_ns == 0 { 0.0 } else { total.bytes as f64 / MIB * 60e9 / total.wall_ns as f64 };
        let series = clients
            .iter()
            .any(|c| !c.series.intervals.is_empty())
            .then(|| iomatrix_stats::Series::merge(&clients.iter().map(|c| &c.series).collect::<Vec<_>>()));
        BackupCell { clients, failures, starts, total, mib_per_min_overall, series }
    }

    /// The client with the lowest own rate, if more than one finished.
    pub fn slowest(&self) -> Option<&ClientWalk> {
        iomatrix_harness::clients::slowest(&self.clients, |c| c.result.mib_per_min)
    }

    /// Whether any client's walk was cut short by a stop (Ctrl-C).
    pub fn interrupted(&self) -> bool {
        self.total.interrupted
    }
}

/// Adds one client's counts to the merged result (rates and extents are
/// done after, over all clients).
fn add(total: &mut BackupResult, r: &BackupResult) {
    total.files += r.files;
    total.bytes += r.bytes;
    total.reads += r.reads;
    total.read_ns += r.read_ns;
    total.wall_ns = total.wall_ns.max(r.wall_ns);
    // The clients prepared side by side: the longest wait stands for all.
    total.sync_ns = total.sync_ns.max(r.sync_ns);
    total.evict_ns = total.evict_ns.max(r.evict_ns);
    total.cached_at_start = CachedAtStart::sum(total.cached_at_start.into_iter().chain(r.cached_at_start));
    total.cache_uncounted += r.cache_uncounted;
    total.directories += r.directories;
    total.mount_points += r.mount_points;
    total.hard_links += r.hard_links;
    let (s, o) = (&mut total.skipped, &r.skipped);
    s.symlinks += o.symlinks;
    s.fifos += o.fifos;
    s.sockets += o.sockets;
    s.devices += o.devices;
    s.other += o.other;
    for c in &r.classes {
        let at = match total.classes.binary_search_by_key(&c.class, |t| t.class) {
            Ok(at) => at,
            Err(at) => {
                total.classes.insert(at, SizeClass { class: c.class, min: c.min, max: c.max, ..SizeClass::default() });
                at
            }
        };
        let t = &mut total.classes[at];
        t.files += c.files;
        t.bytes += c.bytes;
        t.read_ns += c.read_ns;
        t.extents += c.extents;
    }
    let e = &mut total.errors;
    e.total += r.errors.total;
    for (kind, n) in &r.errors.by_kind {
        *e.by_kind.entry(kind.clone()).or_default() += n;
    }
    let room = MAX_EXAMPLES.saturating_sub(e.examples.len());
    e.examples.extend(r.errors.examples.iter().take(room).cloned());
    total.failed_bytes += r.failed_bytes;
    total.evict_failures += r.evict_failures;
    total.noatime_refused += r.noatime_refused;
    total.user_ns += r.user_ns;
    total.sys_ns += r.sys_ns;
    total.interrupted |= r.interrupted;
    if total.server_lost.is_none() {
        total.server_lost.clone_from(&r.server_lost);
    }
}

/// The clients' extents as one tree's: the per-file distribution rebuilt
/// from their counts (so the 99th percentile and the histogram are exact),
/// the FIEMAP-level figures added up.
fn merge_extents(clients: &[ClientWalk]) -> ExtentSummary {
    let mut tally = ExtentTally::new();
    for c in clients {
        for &(extents, files) in &c.extent_counts {
            let file = FileExtents { extents, ..FileExtents::default() };
            for _ in 0..files {
                tally.add(&file);
            }
        }
    }
    let mut merged = tally.summary();
    for c in clients {
        let x = &c.result.extents;
        merged.fiemap_extents += x.fiemap_extents;
        merged.unwritten_extents += x.unwritten_extents;
        merged.inline_files += x.inline_files;
        merged.files_without_fiemap += x.files_without_fiemap;
        merged.files_failed += x.files_failed;
        if merged.no_fiemap_errno.is_empty() {
            merged.no_fiemap_errno.clone_from(&x.no_fiemap_errno);
        }
    }
    merged
}

/// What the clients publish after each file, for a live line: each
/// client's files, bytes, errors and timed nanoseconds so far.
pub struct LiveClients {
    clients: Vec<LiveSlot>,
}

#[derive(Default)]
struct LiveSlot {
    files: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    read_ns: AtomicU64,
}

impl LiveClients {
    /// Room for `clients` clients (ranks beyond it publish nothing: under
    /// MPI, rank 0 shows its own client only).
    pub fn new(clients: usize) -> LiveClients {
        LiveClients { clients: (0..clients).map(|_| LiveSlot::default()).collect() }
    }

    /// Client `rank`'s figures so far, for the live line.
    pub fn publish(&self, rank: usize, live: &Live) {
        if let Some(slot) = self.clients.get(rank) {
            slot.files.store(live.files, Ordering::Relaxed);
            slot.bytes.store(live.bytes, Ordering::Relaxed);
            slot.errors.store(live.errors, Ordering::Relaxed);
            slot.read_ns.store(live.read_ns, Ordering::Relaxed);
        }
    }

    /// Every client's figures so far, added up.
    pub fn total(&self) -> Live {
        let sum = |f: fn(&LiveSlot) -> &AtomicU64| self.clients.iter().map(|c| f(c).load(Ordering::Relaxed)).sum();
        Live {
            files: sum(|c| &c.files),
            bytes: sum(|c| &c.bytes),
            errors: sum(|c| &c.errors),
            read_ns: sum(|c| &c.read_ns),
        }
    }

    /// Each client's own rate so far, MiB per minute of its timed part.
    pub fn rates(&self) -> Vec<f64> {
        self.clients
            .iter()
            .map(|c| {
                let ns = c.read_ns.load(Ordering::Relaxed);
                if ns == 0 {
                    0.0
                } else {
                    c.bytes.load(Ordering::Relaxed) as f64 / MIB * 60e9 / ns as f64
                }
            })
            .collect()
    }

    /// The sum of the clients' own rates so far, MiB/min.
    pub fn mib_per_min_sum(&self) -> f64 {
        self.rates().iter().sum()
    }

    /// The client with the lowest own rate so far and that rate; None with
    /// a single client.
    pub fn slowest(&self) -> Option<(usize, f64)> {
        if self.clients.len() < 2 {
            return None;
        }
        self.rates().into_iter().enumerate().min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Runs the walk on every client of `group` (`setup.cells` walks, normally
/// one; `setup.workdir` None: nothing is made in a read-only tree), client
/// r in its tree ([`client_root`]) at `place`. At the leader, `on_cell` gets each
/// merged cell, and the result says how many it accepted and how the run
/// ended; elsewhere it is None. A walk cut short by `setup.stop` still
/// reports its figures (see [`BackupCell::interrupted`]).
pub fn execute_clients<E: std::fmt::Display>(
    plan: &BackupPlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    live: &LiveClients,
    mut on_cell: impl FnMut(&BackupCell) -> Result<(), E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    let clients = group.size();
    let stop = setup.stop;
    lead(
        group,
        setup,
        |rank, _dir| Client {
            rank,
            plan,
            root: client_root(&plan.root, rank, clients),
            below_target: match place.remote_folder() {
                Some(folder) if clients > 1 => iomatrix_backend::below(folder, &iomatrix_backend::client_folder(rank)),
                Some(folder) => folder.to_string(),
                None => String::new(),
            },
            place,
            stop,
            live,
        },
        |_, gathered| on_cell(&BackupCell::merge(gathered)),
    )
}

struct Client<'a> {
    rank: usize,
    plan: &'a BackupPlan,
    /// Its tree, as reports show it.
    root: PathBuf,
    /// Its tree below the target's folder, for a protocol client.
    below_target: String,
    place: &'a Place<'a>,
    stop: &'a AtomicBool,
    live: &'a LiveClients,
}

impl ClientWork for Client<'_> {
    type Figures = ClientWalk;

    fn cell(&mut self, _index: usize, start: &mut Start<'_>) -> Result<ClientWalk, ClientFailure> {
        let plan = BackupPlan { root: self.root.clone(), ..self.plan.clone() };
        let fail = |e: crate::BackupError| ClientFailure::error(self.rank, e.0);
        let (rank, live, stop) = (self.rank, self.live, self.stop);
        let walked = match self.place {
            Place::Local => {
                // Untimed: the cold walk's syncfs and cache drop.
                let prepared = prepare(&plan, stop).map_err(fail)?;
                let origin = start.together()?;
                walk(&mut LocalTree::new(&plan.root), &plan, &prepared, origin, stop, &mut |l| live.publish(rank, l))
            }
            Place::Remote { connect, .. } => {
                // Untimed: this client's own session, and its tree checked there.
                let fs = connect().map_err(|e| ClientFailure::error(rank, format!("connecting: {e}")))?;
                let mut tree = RemoteTree::open(fs, &self.below_target).map_err(fail)?;
                let origin = start.together()?;
                walk(&mut tree, &plan, &Prepared::default(), origin, stop, &mut |l| live.publish(rank, l))
            }
        }
        .map_err(fail)?;
        Ok(ClientWalk {
            rank,
            root: plan.root.display().to_string(),
            result: walked.result,
            extent_counts: walked.extent_counts.into_iter().collect(),
            series: walked.series,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_coord::{Hooks, OnClientError};
    use std::time::Duration;

    /// ROOT/client-0..n, client r with r + 1 files of 10_000 * (r + 1) bytes each.
    fn trees(n: usize) -> (tempfile::TempDir, Vec<(u64, u64)>) {
        let dir = tempfile::tempdir().unwrap();
        let mut sizes = Vec::new();
        for r in 0..n {
            let tree = dir.path().join(format!("client-{r}/sub"));
            std::fs::create_dir_all(&tree).unwrap();
            let len = 10_000 * (r as u64 + 1);
            for i in 0..=r {
                std::fs::write(tree.join(format!("f{i}")), vec![r as u8; len as usize]).unwrap();
            }
            sizes.push((r as u64 + 1, len * (r as u64 + 1)));
        }
        (dir, sizes)
    }

    fn run(root: &Path, clients: usize, cold: bool, on_error: OnClientError) -> (Vec<BackupCell>, Ending) {
        let plan = BackupPlan { read_size: 4096, cold, ..BackupPlan::new(root.to_path_buf()) };
        let stop = AtomicBool::new(false);
        let hooks = Hooks::default();
        let setup = Setup { cells: 1, workdir: None, hooks: &hooks, on_error, stop: &stop };
        let live = LiveClients::new(clients);
        let mut cells = Vec::new();
        let (done, ending) = execute_clients(&plan, &Group::Local(clients), &setup, &Place::Local, &live, |cell| {
            cells.push(cell.clone());
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(done, cells.len());
        (cells, ending)
    }

    #[test]
    fn each_client_walks_its_own_tree_and_the_figures_add_up() {
        let (dir, sizes) = trees(3);
        for cold in [false, true] {
            let (cells, ending) = run(dir.path(), 3, cold, OnClientError::Abort);
            assert_eq!(ending, Ending::Completed);
            let cell = &cells[0];
            assert_eq!(cell.clients.len(), 3);
            for (c, (files, bytes)) in cell.clients.iter().zip(&sizes) {
                assert_eq!((c.result.files, c.result.bytes), (*files, *bytes), "client {}", c.rank);
                assert!(c.root.ends_with(&format!("client-{}", c.rank)), "{}", c.root);
                assert_eq!(c.result.directories, 1);
            }
            let t = &cell.total;
            assert_eq!(t.files, sizes.iter().map(|s| s.0).sum::<u64>());
            assert_eq!(t.bytes, sizes.iter().map(|s| s.1).sum::<u64>());
            assert_eq!(t.directories, 3);
            assert_eq!(t.classes.iter().map(|c| c.bytes).sum::<u64>(), t.bytes);
            assert_eq!(t.extents.files + t.extents.files_without_fiemap, t.files);
            let sum: f64 = cell.clients.iter().map(|c| c.result.mib_per_min).sum();
            assert!((t.mib_per_min - sum).abs() <= 1e-9 * sum && sum > 0.0);
            assert!((t.mib_per_min - 60.0 * t.mib_per_sec).abs() <= 1e-6 * t.mib_per_min);
            assert_eq!(t.wall_ns, cell.clients.iter().map(|c| c.result.wall_ns).max().unwrap());
            assert!(cell.mib_per_min_overall > 0.0);
            assert_eq!(t.cold, cold);
            let last_arrival = cell.starts.iter().map(|s| s.arrived_unix_ns).max().unwrap();
            assert!(cell.starts.iter().all(|s| s.left_unix_ns >= last_arrival));
            let slowest = cell.slowest().unwrap();
            assert!(cell.clients.iter().all(|c| c.result.mib_per_min >= slowest.result.mib_per_min));
        }
    }

    #[test]
    fn one_client_walks_the_root_and_the_cell_is_its_walk() {
        let (dir, sizes) = trees(2);
        let (cells, _) = run(dir.path(), 1, false, OnClientError::Abort);
        let cell = &cells[0];
        assert_eq!(cell.clients.len(), 1);
        assert_eq!(cell.clients[0].root, dir.path().display().to_string());
        assert_eq!(cell.total, cell.clients[0].result, "merging one client changes nothing");
        assert_eq!(cell.total.bytes, sizes.iter().map(|s| s.1).sum::<u64>());
        assert!(cell.slowest().is_none());
    }

    #[test]
    fn a_missing_tree_fails_its_client_and_continue_keeps_the_others() {
        let (dir, _) = trees(2);
        assert_eq!(missing_client_trees(dir.path(), 3), [dir.path().join("client-2")]);
        assert!(missing_client_trees(dir.path(), 2).is_empty());
        assert!(missing_client_trees(&dir.path().join("nowhere"), 1).is_empty(), "one client walks the root");
        let (cells, ending) = run(dir.path(), 3, false, OnClientError::Continue);
        assert_eq!(cells[0].clients.len(), 2);
        assert_eq!(cells[0].failures.len(), 1);
        assert!(cells[0].failures[0].message.contains("client-2"), "{:?}", cells[0].failures);
        assert!(matches!(ending, Ending::ClientsLost(ref lost) if lost.len() == 1), "{ending:?}");
        let (cells, ending) = run(dir.path(), 3, true, OnClientError::Abort);
        assert!(cells.is_empty());
        assert!(matches!(ending, Ending::ClientFailed { cell: 0, .. }), "{ending:?}");
    }

    #[test]
    fn extents_merge_exactly_and_errors_keep_a_few_examples() {
        let walk = |rank: usize, counts: Vec<(u64, u64)>, errors: u64| {
            let mut result = BackupResult::default();
            for (extents, files) in &counts {
                for _ in 0..*files {
                    result.add_file(100, 1, 1000, Some(*extents));
                }
            }
            for i in 0..errors {
                result.errors.add_kind("open: Permission denied".into(), Path::new(&format!("/{rank}/{i}")));
            }
            result.extents.fiemap_extents = counts.iter().map(|(e, f)| e * f).sum();
            result.wall_ns = 1_000_000 * (rank as u64 + 1);
            result.derive();
            ClientWalk { rank, root: format!("/{rank}"), result, extent_counts: counts, series: Default::default() }
        };
        let clients = vec![walk(0, vec![(1, 98), (2, 1)], 15), walk(1, vec![(0, 1), (40, 1)], 15)];
        let cell = BackupCell::merge(Gathered { figures: clients, failures: Vec::new(), starts: Vec::new() });
        let x = &cell.total.extents;
        assert_eq!(
            (x.files, x.total_extents, x.max, x.fragmented_files, x.files_without_extents),
            (101, 140, 40, 2, 1)
        );
        assert_eq!(x.p99, 2, "the 100th of 101 files by extents");
        assert_eq!(x.fiemap_extents, 140);
        assert_eq!(x.histogram.iter().map(|b| b.files).sum::<u64>(), 101);
        assert_eq!(cell.total.errors.total, 30);
        assert_eq!(cell.total.errors.by_kind["open: Permission denied"], 30);
        assert_eq!(cell.total.errors.examples.len(), MAX_EXAMPLES);
        assert_eq!(cell.total.wall_ns, 2_000_000);
        // 101 files of 100 bytes over 2 ms from the common start.
        let overall = 10_100.0 / MIB * 60.0 / 0.002;
        assert!((cell.mib_per_min_overall - overall).abs() < 1e-9);
    }

    #[test]
    fn the_figures_travel_as_json() {
        let (dir, _) = trees(2);
        let (cells, _) = run(dir.path(), 2, false, OnClientError::Abort);
        let sent = &cells[0].clients[1];
        let got: ClientWalk = serde_json::from_slice(&serde_json::to_vec(sent).unwrap()).unwrap();
        // Counts exactly; rates to the last bit or so (serde_json's float parsing).
        assert_eq!((got.rank, &got.root, &got.extent_counts), (sent.rank, &sent.root, &sent.extent_counts));
        let (a, b) = (&got.result, &sent.result);
        assert_eq!(
            (a.files, a.bytes, a.read_ns, a.wall_ns, a.classes.len()),
            (b.files, b.bytes, b.read_ns, b.wall_ns, b.classes.len())
        );
        assert!((a.mib_per_min - b.mib_per_min).abs() <= 1e-12 * b.mib_per_min);
        let cell: BackupCell = serde_json::from_value(serde_json::to_value(&cells[0]).unwrap()).unwrap();
        assert_eq!((cell.total.files, cell.total.bytes), (cells[0].total.files, cells[0].total.bytes));
    }

    #[test]
    fn the_live_figures_name_the_slowest_client() {
        let live = LiveClients::new(3);
        assert_eq!(live.total(), Live::default());
        let second = Duration::from_secs(1).as_nanos() as u64;
        live.publish(0, &Live { files: 2, bytes: 2 << 20, errors: 0, read_ns: second });
        live.publish(1, &Live { files: 1, bytes: 1 << 20, errors: 1, read_ns: second });
        live.publish(2, &Live { files: 3, bytes: 3 << 20, errors: 0, read_ns: second });
        live.publish(7, &Live { files: 9, bytes: 9, errors: 9, read_ns: 9 });
        assert_eq!(live.total(), Live { files: 6, bytes: 6 << 20, errors: 1, read_ns: 3 * second });
        assert!((live.mib_per_min_sum() - 360.0).abs() < 1e-9);
        let (rank, rate) = live.slowest().unwrap();
        assert_eq!(rank, 1);
        assert!((rate - 60.0).abs() < 1e-9);
        assert!(LiveClients::new(1).slowest().is_none());
    }
}
