//! The one seam between the harness and a suite.
//!
//! A [`Suite`] says what is particular to it: its command line and plan,
//! its cells, how its clients execute them at a [`Place`], the row each
//! cell stores, its progress line and live figures, its conditions, how a
//! stored run of it reads (its tables, its clients table, the [`SuiteShape`]
//! that compare, sweep and the reports take its cells in), and where it has
//! one its legacy front end ([`FrontEnd`]). The rest of iomatrix knows a
//! suite only through these items, which the suite table hands on: shared
//! code never names a suite. Everything else (the target and working
//! folder, the environment record, clients as threads or MPI ranks, the
//! barrier per cell, repeats and `--tolerance`, `--on-client-error`,
//! progress, signals, storing each cell, the exit code) is done once, for
//! every suite, by [`crate::run`].

use super::clients::ClientPlan;
use super::limits::Demand;
use super::live::LiveSample;
use super::ranks::Ranks;
use super::raw_device::RawDevice;
use super::repeat::Repeat;
use super::target::Target;
use iomatrix_analysis::SuiteShape;
use iomatrix_backend::Place;
use iomatrix_coord::{ClientFailure, Ending, Group, Setup};
use iomatrix_core::BackendKind;
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::reader::SuiteFacts;
use iomatrix_store::Records;
use iomatrix_store::{CellRow, CellState, StoreError, StoredRun};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A family of workloads: IOzone's matrix, access specs, Bonnie's tests,
/// the file-server load, the backup walk.
pub trait Suite: Sized {
    /// `iomatrix run NAME`, and the suite of its runs in the database.
    const NAME: &'static str;
    /// How analysis and the reports take its stored cells: as matrices (IOzone's file size by
    /// record size) or scalar rows, and how their latencies are summarised.
    const SHAPE: SuiteShape = SuiteShape::PLAIN;
    /// The columns of its clients table (in `show`, `compare RUNS@HOST`, the report's hosts).
    const CLIENT_COLUMNS: &'static ClientColumns;
    /// The command line of `run NAME`.
    type Args: clap::Args;
    /// The validated plan: stored with the run, sent to every MPI rank.
    type Plan: Serialize + DeserializeOwned + Clone + Send + Sync;
    /// One finished cell, merged over every client.
    type Cell;
    /// This process's live figures while its clients run.
    type Live: LiveView;
    /// What tells cells apart for the noise rule: samples of one key are
    /// compared with each other, and noisy keys are measured again.
    type Key: Ord + Clone;

    /// Raw arguments to a validated run: nothing is written before this
    /// returns. `mpi_ranks` is the number of ranks under mpirun. The files
    /// the suite writes at the user's word (IOzone's `--xlsx`) are judged
    /// here by the guarded writer (`iomatrix-guard`) against the results
    /// database `db`: a refusal ends the run before its first cell, not
    /// after its last.
    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, db: &Path) -> anyhow::Result<Prepared<Self>>;

    /// How the harness sets the run up: free space, conditions, the cache
    /// warning. `clients`: the run's clients in all (threads, or MPI ranks).
    fn spec(&self, plan: &Self::Plan, target: &Target, clients: usize) -> RunSpec;

    /// What `plan` starts and holds in this process at its peak: threads
    /// (with their stacks) and memory that grow with the user's counts and
    /// sizes, each counted as the suite's code really starts and allocates
    /// it. Checked against the machine's limits before anything is stored
    /// or made ([`super::limits::check`]). `clients_here`: this process's
    /// clients (threads, or 1 under MPI).
    fn demand(&self, plan: &Self::Plan, target: &Target, clients_here: usize) -> Demand;

    /// The cells `plan` runs, named, in order: index i is the i-th cell
    /// [`Suite::execute`] hands on.
    fn cells(plan: &Self::Plan) -> Vec<String>;

    /// The work each of `plan`'s cells does, in the order of [`Suite::cells`]: what the ETA
    /// goes by. A suite whose plan does not say leaves each cell's work unknown (then a cell is
    /// expected to take as long as the run's cells took on average).
    fn work(plan: &Self::Plan) -> Vec<super::progress::CellWork> {
        vec![super::progress::CellWork::Unknown; Self::cells(plan).len()]
    }

    /// Live figures with room for `slots` clients, published under their
    /// rank: every thread of this process, or under MPI room up to this
    /// rank's own (rank 0 shows only its own client; the others' samples
    /// reach its board).
    fn live(plan: &Self::Plan, slots: usize) -> Self::Live;

    /// Done in every process (rank 0 and the others) before its clients
    /// start, e.g. raising the open-file limit. `clients_here`: this
    /// process's clients; `on_server`: the target is a server.
    fn before_clients(_plan: &Self::Plan, _clients_here: usize, _on_server: bool) -> anyhow::Result<()> {
        Ok(())
    }

    /// How many cells run back to back, as [`Self::execute`] hands them to
    /// `iomatrix_coord::lead_together` (an mdtest iteration's phases): the leader
    /// stores them after the last, and judges the machine's load and the process's
    /// stops over the whole run of them. 1: each cell is stored before the next.
    fn cells_back_to_back(_plan: &Self::Plan) -> usize {
        1
    }

    /// Runs `plan` on every client of `group`, files at `place`: every
    /// client executes each cell after the barrier (`iomatrix_coord::lead`).
    /// At the leader `on_cell` gets each cell merged over the clients; an
    /// error from it ends the run. Returns, at the leader, how many cells
    /// were accepted and how the run ended; `None` at the other MPI ranks.
    fn execute(
        plan: &Self::Plan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        live: &Self::Live,
        on_cell: &mut dyn FnMut(&Self::Cell) -> Result<(), StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>>;

    /// At rank 0 once the run has begun: what the session to a server
    /// negotiated (protocol, transfer sizes), for suites whose cells record it.
    fn began(&mut self, _server: Option<&Value>) {}

    /// The row `cell` stores. Its `seq` is set by the harness.
    fn row(&self, plan: &Self::Plan, cell: &Self::Cell) -> CellRow;

    /// The progress line of a finished cell.
    fn done_line(&self, cell: &Self::Cell) -> String;

    /// The cell's key for the noise rule.
    fn key(&self, cell: &Self::Cell) -> Self::Key;

    /// The plan that measures the `noisy` keys once more. Suites whose cells
    /// depend on each other (Bonnie's tests share one file, the file-server
    /// load reads what it wrote) run their whole set again.
    fn again(plan: &Self::Plan, noisy: &[Self::Key]) -> Self::Plan;

    /// What a finished cell says about the run beyond its figures and its state.
    fn verdict(&self, _cell: &Self::Cell) -> Verdict {
        Verdict::Fine
    }

    /// The cell's state counted in the parts a client runs several of (the file-server load's
    /// and a personality's connections), out of `clients` clients in all; None: counted in
    /// clients, from the failed clients the row records (`failed_clients`).
    fn parts(&self, _plan: &Self::Plan, _cell: &Self::Cell, _clients: usize) -> Option<CellState> {
        None
    }

    /// The cell's planned duration where it is timed, and its completions second by second
    /// where the suite keeps them: what [`super::disturbance`] holds its wall time against.
    fn pace(&self, _plan: &Self::Plan, _cell: &Self::Cell) -> super::disturbance::Pace {
        super::disturbance::Pace::default()
    }

    /// A stored run of this suite as tables (the same at the end of `run`
    /// and in `show`, today or next year).
    fn tables(run: &StoredRun) -> String;

    /// What a stored run of this suite alone records (its own conditions' lines, its plan's
    /// size mix), read by the suite's own types from the run's plan and conditions; shared code
    /// gets it as [`StoredRun::suite_facts`]. Nothing by default.
    fn stored_facts(_record: &Records<'_>) -> SuiteFacts {
        SuiteFacts::default()
    }

    /// A stored run of this suite as its clients table reads it ([`Suite::CLIENT_COLUMNS`]):
    /// the run itself, unless the suite keeps its per-client figures elsewhere (the file-server
    /// load's per connection).
    fn clients_of(run: &StoredRun) -> Cow<'_, StoredRun> {
        Cow::Borrowed(run)
    }

    /// Output after the tables, at the end of a run (IOzone's `-R` and `-b`).
    fn after_tables(&self, _run: &StoredRun) -> anyhow::Result<()> {
        Ok(())
    }

    /// Cells of the plan that the suite's own rule left out as the run went (the rest of a
    /// throughput-latency curve that its latency bound ended), read from the run's live state
    /// once the cells are over: planned, never run, and not lost. None by default.
    fn cells_left_out(_live: &Self::Live) -> usize {
        0
    }

    /// At rank 0, once the results database is open and before the working
    /// folder is made: the last moment before the run makes its first file
    /// (bonnie++'s `-u` switches user here). An error ends the run before
    /// it is stored.
    fn before_files(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A suite's legacy front end: `iomatrix NAME` followed by the tool's own command line, run
/// through the same harness as `iomatrix run NAME`. The suite's folder declares it in its `front`
/// module (`FRONT_END`), and the suite's line in the suite table says it has one (`+ front`).
#[derive(Clone, Copy)]
pub struct FrontEnd {
    /// The subcommand, `iozone`.
    pub name: &'static str,
    /// Its line in `iomatrix --help`.
    pub about: &'static str,
    /// What `iomatrix help NAME` calls the tool's flags ("IOZONE FLAGS"), and says of them.
    pub flags: &'static str,
    pub flags_help: &'static str,
    /// Runs the tool's flags; `global_db` is the `--db` given before them (one typed among the
    /// tool's flags wins).
    pub run: fn(args: &[String], global_db: Option<&Path>, ranks: &Ranks) -> anyhow::Result<ExitCode>,
    /// `rerun` of a run the front end made: `args`, the stored command line from the front end's
    /// name on (`--db` taken out), moved to `target` where one is given. Returns the folder to
    /// run it in: none when the flags name their own, else `target` or the folder it ran in
    /// (`stored_target`), a front end's default target.
    pub rerun: MoveFlags,
}

/// How `rerun` moves a front end's stored flags to another target ([`FrontEnd::rerun`]).
pub type MoveFlags =
    fn(args: &mut Vec<String>, target: Option<&str>, stored_target: Option<PathBuf>) -> Option<PathBuf>;

/// A run ready to start: the suite (what rank 0 alone keeps), the plan (what
/// every client runs) and the options every suite shares.
pub struct Prepared<S: Suite> {
    pub suite: S,
    pub plan: S::Plan,
    pub run: RunOptions,
}

/// What every suite's run is told besides its plan.
pub struct RunOptions {
    pub target: Target,
    /// The claimed device of a [`Target::Device`], held until the run ends.
    pub device: Option<RawDevice>,
    pub labels: Vec<(String, String)>,
    /// Keep the working folder at the end.
    pub keep: bool,
    pub space_check: bool,
    /// Print the stored run as JSON instead of tables.
    pub json: bool,
    pub clients: ClientPlan,
    pub repeat: Repeat,
    /// `--describe server=FILE`: the server as the user describes it, stored with the run.
    pub server_description: Option<iomatrix_environment::ServerDescription>,
    /// `--busy-threshold` and `--settle`: when the machine's load disturbs a cell.
    pub machine: super::machine::MachinePlan,
}

/// How the harness sets a run up, as the suite describes it.
pub struct RunSpec {
    /// Bytes the run keeps on the target at its peak, and how that comes
    /// about (for the free-space message), e.g. "2 client(s) x largest file 64m".
    pub peak_bytes: u64,
    pub peak_detail: String,
    pub backend: BackendKind,
    pub direct: bool,
    /// The suite's own conditions, merged over the common ones.
    pub conditions: Value,
    /// Few long cells: keep a line per finished cell on the terminal.
    pub keep_cell_lines: bool,
    /// Standard output is the suite's own (bonnie++'s `-q`: its CSV line alone, from
    /// [`Suite::after_tables`]): no progress lines, and the tables go to standard error.
    pub quiet: bool,
    /// How this suite gets past the page cache, for the warning when all files fit in RAM.
    pub uncached_hint: &'static str,
    /// The flags that take this suite's run past the page cache, as the user pastes them, for the
    /// run's summary; given twice this machine's RAM as a size (`34g`).
    pub uncached_flags: fn(twice_ram: &str) -> String,
    /// The suite drops the page cache before it reads (a cold walk, `--drop-caches`).
    pub cache_dropped: bool,
}

/// What a finished cell says about the run beyond its figures and its state (a cell where
/// clients or connections failed is stored partial or failed, and the run is then never
/// complete: see `harness::outcome`).
pub enum Verdict {
    Fine,
    /// The cell was cut short by a stop: the run ends as interrupted.
    Interrupted,
    /// Clients lost their server mid-cell: the cell is kept (partial), the run fails.
    Failed(Vec<ClientFailure>),
}

/// A suite's live figures, shown while a cell runs (on the progress bar,
/// or every few seconds without a terminal) and, under MPI, sent by every
/// rank to rank 0.
pub trait LiveView: Sync {
    /// This process's figures of the last moment.
    fn sample(&self) -> LiveSample;
    /// The live line; `cell(i)` names cell i of the pass under way. None
    /// while there is nothing to show.
    fn line(&self, cell: &dyn Fn(usize) -> String) -> Option<String>;
    /// A sample as rank 0's sum over the ranks shows it ("3.1 MiB/s").
    fn show(&self, sample: &LiveSample) -> String;
    /// False for [`NoLive`]: no live line is kept up at all.
    fn shows_anything(&self) -> bool {
        true
    }
}

/// For suites without live figures (each cell is short, or only its end counts).
pub struct NoLive;

impl LiveView for NoLive {
    fn sample(&self) -> LiveSample {
        LiveSample::default()
    }
    fn line(&self, _cell: &dyn Fn(usize) -> String) -> Option<String> {
        None
    }
    fn show(&self, _sample: &LiveSample) -> String {
        String::new()
    }
    fn shows_anything(&self) -> bool {
        false
    }
}

/// A finished cell the results database did not keep, with the cell named (a suite whose
/// crate does not name its cells says which one): the run ends, and its failure says this.
#[derive(Debug, thiserror::Error)]
#[error("{cell}: {refused}")]
pub struct NotStored {
    /// "storing the backup walk", "storing the Write(c) result of repeat 2".
    pub cell: String,
    pub refused: Box<StoreError>,
}
