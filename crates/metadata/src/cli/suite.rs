//! The metadata suite through the harness: one cell per phase per iteration, every client
//! working on its items after the cell's barrier, the phase merged by mdtest's rules.

use super::args::MetadataArgs;
use crate::layout::Counts;
use crate::merge::{merge, named, MetadataCell};
use crate::plan::{Layout, MetadataPlan, Phase};
use crate::runner::{LiveItems, StonewallBoard, Top, Worker, WorkerSetup};
use iomatrix_backend::Place;
use iomatrix_coord::{lead_together, Ending, Group, Setup};
use iomatrix_core::{human, BackendKind, UsageError};
use iomatrix_harness::clients::add_client_metrics;
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::live::LiveSample;
use iomatrix_harness::repeat::{Repeat, RepeatArgs};
use iomatrix_harness::{Cost, Demand, LiveView, NotStored, Prepared, RunSpec, Suite, Target};
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::{CellRow, CellState, StoredRun};
use serde_json::json;

/// What rank 0 keeps of a metadata run besides its plan.
pub struct Metadata {
    /// What the stored cells name as their backend: the protocol client, or system calls.
    backend: &'static str,
    /// Run from mdtest's command line (`iomatrix mdtest`): its output and files.
    front: Option<Front>,
}

/// What `iomatrix mdtest` adds to a run: mdtest's output, `-x`'s and
/// `--saveRankPerformanceDetails`' files (judged fit to write before the run).
struct Front {
    output: crate::front::FrontOutput,
    rank_details: Option<iomatrix_guard::Checked>,
    stonewall_file: Option<iomatrix_guard::Checked>,
}

impl Metadata {
    /// The suite as `iomatrix mdtest` runs it: mdtest's layout on standard output, its files.
    pub fn with_front_end(
        target: &Target,
        output: crate::front::FrontOutput,
        rank_details: Option<iomatrix_guard::Checked>,
        stonewall_file: Option<iomatrix_guard::Checked>,
    ) -> Metadata {
        let backend = target.server().map_or(BackendKind::Sync.name(), |s| s.protocol());
        Metadata { backend, front: Some(Front { output, rank_details, stonewall_file }) }
    }
}

/// The clients table: each client's own rate (its items over its own time).
pub const CLIENT_COLUMNS: ClientColumns = ClientColumns {
    unit: "ops/s",
    describe: |c| c.test.clone(),
    aggregates: |c| {
        let phase: Option<crate::PhaseResult> =
            c.metrics.get("phase").and_then(|p| serde_json::from_value(p.clone()).ok());
        phase.map_or((0.0, 0.0, None), |p| {
            let sum = p.clients.iter().filter(|c| c.seconds > 0.0).map(|c| c.items as f64 / c.seconds).sum();
            (sum, p.rate_all_over_slowest, None)
        })
    },
    client_rate: |f| {
        let (items, seconds) = (f["items"].as_f64()?, f["seconds"].as_f64()?);
        (seconds > 0.0).then(|| items / seconds)
    },
    kib_per_unit: 0.0,
};

fn counts(plan: &MetadataPlan) -> Counts {
    // The plan was checked: its counts exist.
    Counts::of(&plan.tree, plan.items).unwrap_or(Counts {
        folders: 1,
        holding: 1,
        first_holding: 0,
        per_folder: 0,
        per_client: 0,
    })
}

impl Suite for Metadata {
    const NAME: &'static str = "metadata";
    const CLIENT_COLUMNS: &'static ClientColumns = &CLIENT_COLUMNS;
    type Args = MetadataArgs;
    type Plan = MetadataPlan;
    type Cell = MetadataCell;
    type Live = MetadataLive;
    /// Samples are compared per cell (phase and iteration).
    type Key = String;

    fn prepare(args: MetadataArgs, mpi_ranks: Option<usize>, _db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let plan = args.plan()?;
        let mut run = args.common.options(mpi_ranks)?;
        if plan.iterations != run.repeat.count {
            // --iterations is mdtest's -i: the samples --tolerance and --max-repeats count from.
            let flags = RepeatArgs { repeat: plan.iterations, ..args.common.run.repeat.clone() };
            run.repeat = Repeat::from_args(&flags)?;
        }
        if plan.in_place && run.target.server().is_some() {
            return Err(UsageError::new(
                "--in-place on an nfs:// or smb:// target is not taken yet: give a local (or mounted) folder, or \
                 leave --in-place out",
            )
            .into());
        }
        if plan.in_place && run.repeat.tolerance_pct.is_some() {
            return Err(UsageError::new(
                "--in-place with --tolerance: a cell measured again would create again what the run left, or stat \
                 what it removed; leave --tolerance out (every iteration is a sample), or --in-place",
            )
            .into());
        }
        if mpi_ranks.is_some() {
            plan.check_rates(run.clients.count)?;
            if plan.latency_target.is_some() {
                return Err(UsageError::new(
                    "--latency-target under MPI: the ranks would have to hear the leader's next level between \
                     rounds, which is not built yet; run it with local clients (--clients N)",
                )
                .into());
            }
            if plan.curve.as_ref().is_some_and(|c| c.curve.stop.is_some()) {
                return Err(UsageError::new(
                    "--stop-curve under MPI: the ranks would have to hear the leader end the curve between its \
                     points, which is not built yet; run the curve without --stop-curve (every point runs, each \
                     stored with its figures)",
                )
                .into());
            }
        }
        if plan.sync_after_phase && run.target.server().is_some() {
            return Err(UsageError::new(
                "--sync-after-phase on an nfs:// or smb:// target: iomatrix's own protocol client keeps no cache, \
                 every write is sent before the phase ends; leave --sync-after-phase out",
            )
            .into());
        }
        // Inodes, space, open files and memory, before anything is made (a folder that is not
        // one is left to the harness, which names it); --no-space-check skips it, as the space check.
        if let (Target::Folder(dir), true) = (&run.target, run.space_check) {
            if dir.is_dir() {
                crate::limits::check_fits(&plan, dir, run.clients.count).map_err(UsageError::new)?;
            }
        }
        let backend = run.target.server().map_or(BackendKind::Sync.name(), |s| s.protocol());
        Ok(Prepared { suite: Metadata { backend, front: None }, plan, run })
    }

    fn spec(&self, plan: &MetadataPlan, _target: &Target, clients: usize) -> RunSpec {
        let c = counts(plan);
        let mut conditions = json!({
            "timing": "each phase from each client's own start past the barrier to its last item (and the \
                       sync with --sync-after-phase); every operation timed on its own for the latency",
            "rates": "IO500's: every client's items over the slowest client's time; SUMMARY's (mdtest's table): \
                      the fewest items of a client over that time, times the clients; tree rows: the tree's \
                      folders over the time",
            "tree": format!("{} folder(s) per tree, {} holding items, {} item(s) per client in each",
                c.folders, c.holding, c.per_folder),
            "layout": match plan.layout { Layout::Shared => "one tree shared by every client (mdtest's default)",
                Layout::PerClient => "a tree per client (mdtest -u)" },
        });
        if let Some(load) = load_condition(plan, clients) {
            conditions["load"] = json!(load);
        }
        // In place on what an earlier run left, nothing is written: no space is asked for.
        let writes = plan.kinds != crate::ItemKinds::Dirs && plan.makes_items();
        let files = if writes { c.per_client * clients as u64 } else { 0 };
        RunSpec {
            peak_bytes: files * plan.write_bytes,
            peak_detail: format!("{clients} client(s) x {} files of {} bytes", c.per_client, plan.write_bytes),
            backend: BackendKind::Sync,
            direct: false,
            conditions,
            keep_cell_lines: true,
            // Under mdtest's command line, standard output is mdtest's layout alone.
            quiet: self.front.is_some(),
            uncached_hint: "metadata phases time the file system's metadata path, cached or not,",
            // Under mdtest's command line, mdtest's name for it.
            uncached_flags: if self.front.is_some() { |_| "-Y".into() } else { |_| "--sync-after-phase".into() },
            cache_dropped: false,
        }
    }

    /// Each client is one thread with its write and read buffers, a latency histogram and a
    /// series recorder (two of each while merging); with --random-stat, the order of its items
    /// (8 bytes each).
    fn demand(&self, plan: &MetadataPlan, _target: &Target, clients_here: usize) -> Demand {
        let per_item = if plan.random_stat_seed.is_some() { 8 } else { 0 };
        let items = counts(plan).per_client;
        // A series recorder's fixed part; its intervals grow with the phase's time (~1 KiB per
        // interval that counted, at most 3,600 before they are merged), which no plan knows.
        let series = iomatrix_stats::SeriesRecorder::footprint(0) * 2;
        let client = Cost::threads(1, default_stack()).plus(Cost::memory(
            plan.write_bytes + plan.read_bytes + iomatrix_stats::Latency::footprint() * 2 + per_item * items + series,
        ));
        Demand::of_clients(clients_here, client, format!("{clients_here} client thread(s)"))
            .knob("--items", items, Cost::memory(per_item * clients_here as u64))
            .knob_bytes("--write-bytes", plan.write_bytes, Cost::memory(clients_here as u64))
    }

    fn cells(plan: &MetadataPlan) -> Vec<String> {
        (0..plan.rounds()).flat_map(|i| plan.phases.iter().map(move |p| named(*p, i, plan.load_of(i)))).collect()
    }

    fn live(plan: &MetadataPlan, slots: usize) -> MetadataLive {
        MetadataLive {
            items: LiveItems::with_levels(slots, plan.phases.len()),
            shape: (plan.rounds(), plan.phases.len()),
        }
    }

    /// An iteration's phases, back to back between barriers as mdtest runs them: no cell is
    /// stored between two phases (a client waiting for the store made the next phase's first
    /// operations several times slower: docs/metadata.md, "Phases back to back").
    fn cells_back_to_back(plan: &MetadataPlan) -> usize {
        plan.phases.len().max(1)
    }

    fn execute(
        plan: &MetadataPlan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        live: &MetadataLive,
        on_cell: &mut dyn FnMut(&MetadataCell) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        iomatrix_harness::clients::needs_folder("the metadata suite", place, setup)?;
        let top = match (place.remote_folder(), setup.workdir) {
            (Some(folder), _) => Top(folder.to_string()),
            (None, Some(dir)) => Top(dir.display().to_string()),
            (None, None) => return Err(std::io::Error::other("the metadata suite needs a folder target")),
        };
        // In place: the target folder itself, where the working folder was made (it stays empty).
        let top = if plan.in_place { Top(parent_folder(&top.0)) } else { top };
        let clients = group.size();
        let local_threads = match group {
            Group::Local(n) => *n,
            _ => 1,
        };
        let threads = StonewallBoard::new(local_threads);
        #[cfg(feature = "mpi")]
        let ranks = match group {
            Group::Mpi(g) => Some(crate::runner::RankMeeting(g)),
            _ => None,
        };
        #[cfg(feature = "mpi")]
        let board: &dyn crate::runner::CountMeeting = match &ranks {
            Some(ranks) => ranks,
            None => &threads,
        };
        #[cfg(not(feature = "mpi"))]
        let board: &dyn crate::runner::CountMeeting = &threads;
        let counts = counts(plan);
        let s = WorkerSetup { plan, counts, top, place, board, stop: setup.stop, live: &live.items, clients };
        let phases = plan.phases.len().max(1);
        let in_place_top = s.top.0.clone();
        let mut curves = crate::curve::Curves::new(plan);
        let mut searches = crate::target::Searches::new(plan);
        let ended = lead_together(
            group,
            setup,
            Self::cells_back_to_back(plan),
            |rank, _dir| Worker::new(rank, &s),
            |index, gathered| {
                let (phase, round) = (plan.phases[index % phases], (index / phases) as u32);
                let load = live.items.load(plan, index % phases, round);
                let mut cell = merge((phase, round, load), gathered, clients, counts.per_client);
                if cell.left_out {
                    return Ok(());
                }
                curves.see(&mut cell, &live.items.last_round);
                searches.see(index % phases, &mut cell, &live.items.levels, &live.items.last_round);
                on_cell(&cell).map_err(|e| NotStored { cell: format!("storing {}", cell.name), refused: Box::new(e) })
            },
        );
        let leader = match group {
            #[cfg(feature = "mpi")]
            Group::Mpi(g) => g.rank() == 0,
            _ => true,
        };
        let stopped = setup.stop.load(std::sync::atomic::Ordering::Relaxed);
        if plan.in_place && plan.makes_items() && stopped && leader {
            say_what_stays(&in_place_top, plan.kinds);
        }
        ended
    }

    fn row(&self, plan: &MetadataPlan, cell: &MetadataCell) -> CellRow {
        let r = &cell.result;
        let bytes_each = match r.phase {
            Phase::FileCreate => plan.write_bytes,
            Phase::FileRead => plan.read_bytes,
            _ => 0,
        };
        let slowest = r.clients.iter().map(|c| c.seconds).fold(0.0, f64::max);
        let mut metrics = json!({
            "phase": r,
            "per_sec": r.rate_all_over_slowest,
            "unit": "ops/s",
            "planned_items": cell.planned,
            "errors": r.failures,
        });
        if let Some(series) = &cell.series {
            metrics["series"] = json!(series);
        }
        add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
        CellRow {
            seq: 0,
            // The phase alone: every iteration is a sample of one cell, as mdtest's -i gives its
            // Max, Min, Mean and Std Dev over iterations, so compare judges a phase over them; a
            // curve's point is a cell of its own, named with its load.
            test: crate::merge::test_name(r),
            file_size: None,
            record_size: None,
            backend: self.backend.into(),
            direct: false,
            clients: cell.clients,
            bytes: r.items * bytes_each,
            ops: r.items,
            wall_ns: (slowest * 1e9) as u64,
            user_ns: 0,
            sys_ns: 0,
            kib_per_sec: 0.0,
            cpu_percent: None,
            metrics,
            client_figures: json!(r
                .clients
                .iter()
                .map(|c| iomatrix_harness::clients::figures_with_rank(c.client, c))
                .collect::<Vec<_>>()),
            state: CellState::default(),
            blobs: Vec::new(),
        }
    }

    fn done_line(&self, cell: &MetadataCell) -> String {
        let r = &cell.result;
        let mut line = format!(
            "{}: {} items, {} ops/s (IO500 rule), {} ops/s (SUMMARY rule)",
            cell.name,
            r.items,
            human::significant(r.rate_all_over_slowest),
            human::significant(r.rate_slowest_times_clients)
        );
        if !r.failures.is_empty() {
            let failed: Vec<String> = r.failures.iter().map(|(k, n)| format!("{k} x{n}")).collect();
            line += &format!(", failed: {}", failed.join(", "));
        }
        if let Some(w) = &r.stonewall {
            let at = human::nanos(w.seconds * 1e9);
            line += &format!(", stonewall at {at}: every client on to {} items", w.count_reached);
        }
        if let Some(o) = &r.open {
            line += &format!(
                ", open loop at {}/s offered ({} late, {} in backlog)",
                human::significant(o.offered_per_sec),
                o.late,
                o.backlog
            );
        }
        if let Some(ended) = r.curve.as_ref().and_then(|c| c.ended.as_ref()) {
            line += &format!("; {ended}");
        }
        line
    }

    /// Counted in items: a failed operation's item is not done (never a rate).
    fn parts(&self, _plan: &MetadataPlan, cell: &MetadataCell, _clients: usize) -> Option<CellState> {
        Some(CellState::counted(cell.result.items, cell.planned, "items"))
    }

    fn key(&self, cell: &MetadataCell) -> String {
        cell.name.clone()
    }

    /// Each phase works on what the phases before it left: every phase runs again.
    fn again(plan: &MetadataPlan, _noisy: &[String]) -> MetadataPlan {
        plan.clone()
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::report(run)
    }

    /// Under mdtest's command line: mdtest's output from the stored phases, and its files.
    fn after_tables(&self, run: &StoredRun) -> anyhow::Result<()> {
        let Some(front) = &self.front else { return Ok(()) };
        super::front::print_stored(&front.output, run, front.rank_details.as_ref(), front.stonewall_file.as_ref())
    }

    fn stored_facts(record: &iomatrix_store::Records<'_>) -> iomatrix_store::reader::SuiteFacts {
        crate::stored::facts(record)
    }

    fn cells_left_out(live: &MetadataLive) -> usize {
        let last = live.items.last_round.load(std::sync::atomic::Ordering::SeqCst);
        let (rounds, phases) = live.shape;
        if last >= rounds {
            return 0;
        }
        (rounds - 1 - last) as usize * phases
    }
}

/// The run's load in words, where it is not mdtest's closed loop: `--rate` or `--curve`.
fn load_condition(plan: &MetadataPlan, clients: usize) -> Option<String> {
    let paced = "the item phases (dir-create, -stat, -rename, -remove; file-create, -stat, -read, -remove)";
    let timed = "each item's latency from its intended start (no coordinated omission); items issued more than 1 \
                 ms after it counted late, those unissued 1 ms after the last arrival the backlog; the tree's \
                 phases, dir-readdir and find closed loop";
    if let Some(open) = plan.open {
        return Some(format!(
            "open loop: {paced} offered {} items a second of all clients together ({} each), arrivals {}; {timed}",
            open.per_sec,
            human::significant(open.per_sec as f64 / clients.max(1) as f64),
            open.arrival.describe()
        ));
    }
    if let Some(target) = plan.latency_target {
        return Some(format!(
            "latency target: per phase, the highest rate whose items meet {} (fio's latency_target climb over 20 \
             levels, level k offering k/20 of the phase's maximum, measured first closed loop); each level a round \
             of the phases over fresh names, open loop, arrivals {}; {timed}; the last round measured at the levels \
             found",
            target.describe(),
            target.arrival.describe()
        ));
    }
    let curve = plan.curve.as_ref()?;
    let points: Vec<String> = curve.curve.points.iter().map(|p| p.to_string()).collect();
    let bound = curve.curve.stop.map_or("no bound".to_string(), |b| format!("ended once every phase is past {b}"));
    Some(format!(
        "throughput-latency curve of each phase: a round of the phases closed loop (the maximum, latency from \
         issue), then a round open loop at each of {} (a percentage is of each client's own rate at the phase's \
         maximum; a rate is split evenly over the clients), each round over fresh names; arrivals {}; {timed}; {bound}",
        points.join(", "),
        curve.arrival.describe()
    ))
}

/// The folder holding `path` ("" for a name at the top of a server's folder).
fn parent_folder(path: &str) -> String {
    path.rsplit_once('/').map_or(String::new(), |(parent, _)| if parent.is_empty() { "/" } else { parent }.to_string())
}

/// A run in place that makes items and was stopped leaves what it made (docs/metadata.md):
/// said, with how to remove it.
fn say_what_stays(top: &str, kinds: crate::ItemKinds) {
    let shown = if top.is_empty() { "the target folder" } else { top };
    let phases = match kinds {
        crate::ItemKinds::Files => "file-remove,tree-remove",
        crate::ItemKinds::Dirs => "dir-remove,tree-remove",
        crate::ItemKinds::Both => "dir-remove,file-remove,tree-remove",
    };
    eprintln!(
        "iomatrix: stopped: what this run made in place stays in {shown} (test-dir.*-0, in mdtest's layout); \
         remove it with the same command and --phases {phases} (iomatrix mdtest: -r instead of -C), which \
         removes mdtest's names only"
    );
}

/// Items done so far by this process's clients in the phase under way, and the rounds a
/// curve's bound left out.
pub struct MetadataLive {
    items: LiveItems,
    /// The plan's rounds and phases a round.
    shape: (u32, usize),
}

impl LiveView for MetadataLive {
    fn sample(&self) -> LiveSample {
        let items = self.items.total() as f64;
        let started = *self.items.started.lock().unwrap_or_else(|e| e.into_inner());
        let secs = started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        LiveSample { cell: 0, bytes_per_sec: 0.0, ops_per_sec: if secs > 0.0 { items / secs } else { 0.0 } }
    }

    fn line(&self, _cell: &dyn Fn(usize) -> String) -> Option<String> {
        let s = self.sample();
        Some(format!("{} items, {:.0} ops/s", self.items.total(), s.ops_per_sec))
    }

    fn show(&self, s: &LiveSample) -> String {
        format!("{:.0} ops/s", s.ops_per_sec)
    }
}
