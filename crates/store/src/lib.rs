//! The results database: every run, its environment and every cell, in one
//! SQLite file (bundled, no system library).
//!
//! - [`Store`]: opens (creating and migrating) a database in WAL mode;
//!   [`Store::begin_run`], [`Store::add_cell`] (one transaction per cell, so
//!   a killed run keeps every finished cell) and [`Store::finish_run`];
//!   [`Store::store_finished_run`] writes a whole finished run (an import) in
//!   one transaction.
//! - [`NewRun`], [`CellRow`]: what is written; [`RunSummary`], [`StoredRun`]:
//!   what is read back. Suite-specific figures travel as JSON beside the
//!   columns every suite shares.
//! - [`RunFilter`], [`Page`]: which runs to list and one page of them, newest first
//!   ([`Store::list_runs_page`], done in SQL).
//! - [`RunStatus`]: `running` until the run ends; a run whose process died
//!   is found on the next open and marked `incomplete`; `partial` when every
//!   cell ran but some clients or connections failed some.
//! - [`CellState`]: whether every client (or connection) of a cell finished
//!   it: complete, partial (k of n) or failed, stored with the cell.
//!
//! - [`StudyRecord`], [`StudyStep`]: a study file's runs, linked
//!   (`iomatrix study`), and each step's outcome; [`StoredStudyScore`]: the score
//!   a study drew over its steps, stored when it finished.
//!
//! - Sharing: many processes may write one database at once (WAL, a busy
//!   timeout, migrations under one write lock). A damaged file is named as
//!   such ([`StoreError::Damaged`]) and nothing more is written into it;
//!   [`Store::open_for_writing`] checks it before a run writes anything.
//!   [`check`] and [`backup`] (SQLite's online backup) are `iomatrix db`'s;
//!   [`Store::merge_from`] copies another database's runs in, once each
//!   (every run carries a stable identity, `uid`).
//! - Edges: a read-only database (a read-only mount) is opened for reading
//!   and refused for writing ([`StoreError::ReadOnly`]); a database removed
//!   or replaced while it is written stops every later commit
//!   ([`StoreError::Replaced`]); a figure that cannot be read back is named
//!   ([`Unreadable`]), never read as null; run ids are never given twice.
//!
//! - [`gate`]: every figure passes one gate on its way in (finite, not
//!   negative, inside the physical bounds it states); a refused cell is
//!   [`StoreError::Refused`] and nothing of it is written.
//!
//! The schema is versioned with `PRAGMA user_version`; see `schema.rs`.

#![warn(missing_docs)]

mod cell_figures;
mod curve_point;
mod figures;
mod filter;
pub mod gate;
mod load;
use load::Reading;
mod history;
mod live_state;
mod maintain;
mod open;
pub mod reader;
mod schema;
mod study;
mod time;

pub use cell_figures::{CellFigures, ExtentFigures, FailedClient, OpMean, OpSummary, IOPS, MAX_LATENCY_NS, PER_SEC};
pub use curve_point::{CurveBound, CurvePoint};
pub use figures::Unreadable;
pub use filter::{parse_label, parse_since, parse_until, Page, RunFilter, RunPage, RunState, MAX_PER_PAGE, RUN_STATES};
pub use history::SetupRun;
pub use live_state::{live_folder, now_ms as unix_now_ms, LiveState, LIVE_STATE_MAX_BYTES, LIVE_STATE_STALE_AFTER};
pub use maintain::{
    backup, check, quick_check, schema_version_of, BackupReport, CheckReport, MergeMode, MergeReport, MergedRun,
    RefusedRun,
};
pub use schema::known_version as known_schema_version;

pub use study::{
    new_nonce, ClaimRefused, StepStatus, StoredStudyScore, StudyClaim, StudyRecord, StudyRun, StudyStatus, StudyStep,
    STUDY_CLAIM_VAR,
};
pub use time::format_utc;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Why the results database could not be opened, read or written; each message names the
/// database's path and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("results database {path}: {what}: {source}")]
    /// SQLite failed an operation.
    Sqlite {
        /// The database's path, as given.
        path: PathBuf,
        /// What iomatrix was doing ("cannot record the run").
        what: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// Any other failure, with the database's path: a file that is not a database, a schema newer
    /// than this iomatrix knows.
    #[error("results database {path}: {0}", path = .1.display())]
    Other(String, PathBuf),
    /// SQLite found the file damaged (or not a database at all). Once seen, the store writes
    /// nothing more into the file.
    #[error(
        "results database {path} is damaged: {detail} ({what}); iomatrix stops here and writes nothing more \
         into it. Check it with `iomatrix db check --db {path}`, and restore it from a copy (made with \
         `iomatrix db backup`, which is safe also while runs write)",
        path = .path.display()
    )]
    Damaged {
        /// The database's path, as given.
        path: PathBuf,
        /// What iomatrix was doing ("cannot record the run").
        what: &'static str,
        /// What SQLite said.
        detail: String,
    },
    /// The database may not be written (a read-only mount, a file this user may not write) and
    /// the command must write; or it cannot be read where it is. `source` says why and what to
    /// do; it is a usage error (exit 2): another `--db` fixes it.
    #[error("results database {path} is read-only", path = .path.display())]
    ReadOnly {
        /// The database's path, as given.
        path: PathBuf,
        /// Why it cannot be written (or read) there, and what to do.
        source: iomatrix_core::UsageError,
    },
    /// The path no longer names the file opened: removed, or replaced by another file, while
    /// iomatrix wrote into it. Nothing more is committed.
    #[error(
        "results database {path} was removed or replaced while iomatrix wrote into it: {detail} ({what}); \
         iomatrix stores nothing more. What it stored went into the file it opened, wherever that is now (its \
         -wal file folded into it, so the file now at the path is not mixed with it). Leave the database in place \
         while runs write into it, and run again",
        path = .path.display()
    )]
    Replaced {
        /// The database's path, as given.
        path: PathBuf,
        /// What iomatrix was doing ("cannot record the run").
        what: &'static str,
        /// How the file was found moved.
        detail: String,
    },
    /// A run's stored figures cannot be read back (JSON that does not parse).
    #[error(
        "results database {path}: run #{run}'s stored figures cannot be read: {first}{more}; `iomatrix show {run} \
         --db {path}` names each, `iomatrix db check --db {path}` checks every run. Restore the database from a copy \
         (made with `iomatrix db backup`)",
        path = .path.display(),
        more = if *.more > 0 { format!(" (and {} more)", .more) } else { String::new() }
    )]
    Unreadable {
        /// The database's path, as given.
        path: PathBuf,
        /// The run whose figures do not read.
        run: i64,
        /// The first figure that does not read, and why.
        first: String,
        /// How many more do not read.
        more: usize,
    },
    /// The gate refused a figure ([`gate`]): nothing of the cell (or run) was written.
    #[error("results database {path}: {refused}", path = .path.display())]
    Refused {
        /// The database's path, as given.
        path: PathBuf,
        /// The figure refused, and why.
        refused: gate::Refused,
    },
}

impl StoreError {
    fn read_only(path: &Path, why: impl Into<String>) -> StoreError {
        StoreError::ReadOnly { path: path.to_path_buf(), source: iomatrix_core::UsageError::new(why) }
    }
}

/// Whether SQLite said the file is damaged or is not a database.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase))
}

/// A cell as read from its row: the cell, its metrics JSON and its clients JSON (each unparsed or
/// why it does not parse).
type Result<T> = std::result::Result<T, StoreError>;

/// A run's status, stored as its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Under way (or its process died and no open has noticed yet).
    Running,
    /// Every cell ran and every client finished.
    Complete,
    /// The process ended without finishing the run (killed, crashed).
    Incomplete,
    /// Stopped on request (Ctrl-C, SIGTERM); finished cells are kept.
    Interrupted,
    /// A client or the store failed; finished cells are kept.
    Failed,
    /// Every cell ran, but clients or connections failed in some: those cells are stored
    /// with their [`CellState`] (partial or failed), never as whole figures.
    Partial,
}

impl RunStatus {
    /// The status's stored name ("running", "complete", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Incomplete => "incomplete",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
            Self::Partial => "partial",
        }
    }
    fn parse(s: &str) -> RunStatus {
        match s {
            "running" => Self::Running,
            "complete" => Self::Complete,
            "interrupted" => Self::Interrupted,
            "failed" => Self::Failed,
            "partial" => Self::Partial,
            _ => Self::Incomplete,
        }
    }
}

/// A run as it starts.
#[derive(Debug, Clone, Serialize)]
pub struct NewRun {
    /// The suite's name (`iomatrix run NAME`).
    pub suite: String,
    /// The command line as given, for `show` and `rerun`.
    pub command_line: String,
    /// `--label KEY=VALUE` pairs, in the order given.
    pub labels: Vec<(String, String)>,
    /// The suite's plan, as the suite serialises it.
    pub plan: serde_json::Value,
    /// The machine and target ([`iomatrix_environment::Environment`]), and the client hosts and
    /// server where there are some.
    pub environment: serde_json::Value,
    /// What a reader must know to trust a figure: backend, direct or cached,
    /// clients, file size against RAM.
    pub conditions: serde_json::Value,
    /// How many cells the plan has; a run that stores fewer did not finish.
    pub total_cells: usize,
}

/// One measured cell. The columns are shared by all suites; `metrics` holds
/// the suite's own figures, `clients` each client's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRow {
    /// The cell's place in its run, in the order the cells were stored; unique within the run.
    pub seq: usize,
    /// The test's name as its suite stores it ("write", "seeks").
    pub test: String,
    /// The file size in bytes; None for a cell without one.
    pub file_size: Option<u64>,
    /// The record (request) size in bytes; None for a cell without one.
    pub record_size: Option<u64>,
    /// The backend's name ("psync", "io_uring", or the protocol client's).
    pub backend: String,
    /// Whether the cell's I/O bypassed the page cache (O_DIRECT).
    pub direct: bool,
    /// How many clients ran the cell.
    pub clients: usize,
    /// Bytes moved, over every client.
    pub bytes: u64,
    /// Operations done, over every client.
    pub ops: u64,
    /// The cell's wall time, in nanoseconds.
    pub wall_ns: u64,
    /// CPU time in user mode, in nanoseconds.
    pub user_ns: u64,
    /// CPU time in the kernel, in nanoseconds.
    pub sys_ns: u64,
    /// The cell's rate in KB/s (KiB per second); 0 where it moved no bytes at a rate.
    pub kib_per_sec: f64,
    /// CPU seconds over wall seconds, in % of one core (`iomatrix_stats::cpu_percent`); None
    /// where the source has no CPU figure (an import: `metrics.not_in_source` lists "cpu").
    pub cpu_percent: Option<f64>,
    /// The suite's own figures, as JSON; [`CellRow::figures`] reads what shared code needs of them.
    pub metrics: serde_json::Value,
    /// Each client's own figures, as a JSON list.
    pub client_figures: serde_json::Value,
    /// Whether every client (or connection) finished the cell. Analysis leaves a cell that is
    /// not complete out of medians and verdicts unless asked to take partial ones in.
    pub state: CellState,
    /// Binary figures by name (e.g. `latency.read`: an HDR histogram, V2 deflate).
    /// Not part of the JSON output: `metrics` carries their summaries.
    #[serde(skip)]
    pub blobs: Vec<(String, Vec<u8>)>,
}

impl CellRow {
    /// A row of `test` on `backend` with nothing in it yet: every figure zero, no metrics, one
    /// client that finished. What builds a row sets what it has over it (`..CellRow::blank(..)`),
    /// so a new column gets its empty value here, once.
    pub fn blank(test: &str, backend: &str) -> CellRow {
        CellRow {
            seq: 0,
            test: test.into(),
            file_size: None,
            record_size: None,
            backend: backend.into(),
            direct: false,
            clients: 1,
            bytes: 0,
            ops: 0,
            wall_ns: 0,
            user_ns: 0,
            sys_ns: 0,
            kib_per_sec: 0.0,
            cpu_percent: None,
            metrics: serde_json::Value::Null,
            client_figures: serde_json::Value::Array(Vec::new()),
            state: CellState::complete(1),
            blobs: Vec::new(),
        }
    }
}

// Below the store, in core: the matrices the reports and importers share carry it too.
pub use iomatrix_core::CellStateKind;

/// A cell's state with its counts: `ok` of `of` parts finished it; `parts` names them
/// ("clients", "connections").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellState {
    /// Complete, partial, failed or disturbed.
    pub kind: CellStateKind,
    /// How many parts finished the cell (at most `of`).
    pub ok: u64,
    /// How many parts ran it.
    pub of: u64,
    /// What the parts are: "clients" or "connections".
    pub parts: String,
    /// Why a disturbed cell is not a figure ("the process was stopped for 20 s"); None for the
    /// other states. Stored in the cell's `metrics` as `disturbed.cause` ([`DISTURBED_KEY`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The key of a cell's `metrics` that holds a disturbed cell's cause: `{"cause": "..."}`.
pub const DISTURBED_KEY: &str = "disturbed";

/// How many earlier measured runs of a suite [`Store::previous_comparable_run`] looks through: a
/// bound on the cost a run's summary adds (each run of a long `iomatrix fio` job file asks).
pub const COMPARABLE_LOOKBACK: i64 = 200;

/// The key of a cell's `metrics` that holds what else the machine did while it ran
/// ([`iomatrix_environment::MachineLoad`]).
pub const MACHINE_KEY: &str = "machine";

impl CellState {
    /// `ok` of `of` parts finished: complete when all did, failed when none did.
    pub fn counted(ok: u64, of: u64, parts: &str) -> CellState {
        let kind = if ok >= of {
            CellStateKind::Complete
        } else if ok == 0 {
            CellStateKind::Failed
        } else {
            CellStateKind::Partial
        };
        CellState { kind, ok: ok.min(of), of, parts: parts.to_string(), cause: None }
    }

    /// This state, disturbed for `cause`: the cell finished but did not run for its time. A
    /// failed cell stays failed (it has no figure to doubt); the counts stay, so a disturbed
    /// cell whose parts did not all finish is also partial ([`CellState::is_partial`]).
    #[must_use]
    pub fn disturbed(self, cause: String) -> CellState {
        match self.kind {
            CellStateKind::Failed => self,
            _ => CellState { kind: CellStateKind::Disturbed, cause: Some(cause), ..self },
        }
    }

    /// Whether some but not all of the cell's parts finished it (a partial cell, or a disturbed
    /// one whose parts did not all finish).
    pub fn is_partial(&self) -> bool {
        self.kind != CellStateKind::Failed && self.ok > 0 && self.ok < self.of
    }

    /// Every one of `n` clients finished the cell.
    pub fn complete(n: u64) -> CellState {
        CellState::counted(n, n, "clients")
    }

    /// Whether every part finished the cell (and nothing disturbed it).
    pub fn is_complete(&self) -> bool {
        self.kind == CellStateKind::Complete
    }

    /// What a heading says of a cell that is not plain complete: "NOT COMPLETE: partial: 3 of 4
    /// connections", "disturbed: the process was stopped for 20 s"; None for a complete one.
    pub fn heading_mark(&self) -> Option<String> {
        match self.kind {
            CellStateKind::Complete => None,
            CellStateKind::Disturbed => Some(self.describe()),
            _ => Some(format!("NOT COMPLETE: {}", self.describe())),
        }
    }

    /// "complete", "partial: 3 of 4 connections", "failed: 0 of 2 clients".
    pub fn describe(&self) -> String {
        match self.kind {
            CellStateKind::Complete => "complete".to_string(),
            CellStateKind::Disturbed => {
                let cause = self.cause.as_deref().unwrap_or("cause not recorded");
                if self.ok < self.of {
                    format!("disturbed: {cause}; {} of {} {}", self.ok, self.of, self.parts)
                } else {
                    format!("disturbed: {cause}")
                }
            }
            kind => format!("{}: {} of {} {}", kind.as_str(), self.ok, self.of, self.parts),
        }
    }
}

impl Default for CellState {
    /// One client, which finished.
    fn default() -> CellState {
        CellState::complete(1)
    }
}

/// A stored run's row: what `runs` lists of it, without its plan, environment or cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's id in this database (`iomatrix show ID`).
    pub id: i64,
    /// The suite's name.
    pub suite: String,
    /// Where the run stands or how it ended.
    pub status: RunStatus,
    /// When it started, in UTC (`2026-11-22T04:11:03Z`).
    pub started_at: String,
    /// When it ended, in UTC; None while running or when its process died.
    pub ended_at: Option<String>,
    /// The host that ran it.
    pub host: String,
    /// The command line as given.
    pub command_line: String,
    /// `--label KEY=VALUE` pairs, in the order given.
    pub labels: Vec<(String, String)>,
    /// How many cells are stored.
    pub cells: usize,
    /// How many cells the plan has.
    pub total_cells: usize,
    /// Of `cells`, those stored disturbed (they did not run for their time); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub disturbed_cells: usize,
    /// Why the run failed or stopped; None for one that did not.
    pub error: Option<String>,
    /// The iomatrix version that stored it.
    pub iomatrix_version: String,
    /// The process that ran it (on `host`), and its start time (see [`ProcessId`]).
    #[serde(skip)]
    pub pid: i64,
    /// The process's start time in clock ticks since boot; None where it could not be read.
    #[serde(skip)]
    pub pid_start: Option<i64>,
}

impl RunSummary {
    /// Whether the process that stored this run is still alive on this host (a run it has
    /// finished in the database may still be removing its working folder).
    pub fn process_alive(&self) -> bool {
        self.host == ProcessId::this_host() && ProcessId::is_alive(self.pid, self.pid_start)
    }
}

/// A stored run whole: its row, plan, environment, conditions and cells, as `show` reads it.
///
/// Its plan, environment and conditions are JSON as stored, and private: shared code reads them
/// through the [`reader`]'s types ([`StoredRun::conditions_facts`], [`StoredRun::suite_facts`],
/// ...); a suite's own crate reads its own through [`StoredRun::records`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// Its row ([`RunSummary`]).
    #[serde(flatten)]
    pub summary: RunSummary,
    /// The suite's plan, as stored.
    pub(crate) plan: serde_json::Value,
    /// The machine, target, client hosts and server, as stored; [`StoredRun::environment_facts`] reads it typed.
    pub(crate) environment: serde_json::Value,
    /// The conditions, as stored; [`StoredRun::conditions_facts`] reads it typed.
    pub(crate) conditions: serde_json::Value,
    /// Its cells, in stored order.
    pub cell_results: Vec<CellRow>,
    /// What the run could not measure, counted ([`Store::record_lost`]); absent when nothing was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lost: Option<serde_json::Value>,
    /// The run's identity in every database it is merged into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Where a merged run came from: `file` (the database merged), `host`, `run_id` (its id there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) origin: Option<serde_json::Value>,
}

/// A run's records as JSON: its plan, environment and conditions, as a run stores them.
#[derive(Debug, Clone, Copy)]
pub struct Records<'a> {
    /// The suite's plan.
    pub plan: &'a serde_json::Value,
    /// The machine, target, client hosts and server.
    pub environment: &'a serde_json::Value,
    /// The conditions: the harness's and the suite's own.
    pub conditions: &'a serde_json::Value,
}

impl StoredRun {
    /// A run not read from a database (a view of a stored one, a test): its row, its records and
    /// its cells; nothing lost, no uid, made here.
    pub fn new(
        summary: RunSummary,
        plan: serde_json::Value,
        environment: serde_json::Value,
        conditions: serde_json::Value,
        cell_results: Vec<CellRow>,
    ) -> StoredRun {
        StoredRun { summary, plan, environment, conditions, cell_results, lost: None, uid: None, origin: None }
    }

    /// The run's records as stored, for the suite's own crate (its tables, its front end) and the
    /// JSON export: shared code reads them through the [`reader`]'s types instead
    /// (`tests/cli/stored_run_typed.rs` checks it).
    pub fn records(&self) -> Records<'_> {
        Records { plan: &self.plan, environment: &self.environment, conditions: &self.conditions }
    }

    /// The same run with other cells (a per-host or per-connection view of it).
    #[must_use]
    pub fn with_cells(&self, cell_results: Vec<CellRow>) -> StoredRun {
        StoredRun { cell_results, ..self.clone() }
    }

    /// Adds `fields` to the run's plan (an imported run's native fields its importer works out
    /// from a plan stored before the import gave them); a plan that is not an object is kept.
    pub fn extend_plan(&mut self, fields: serde_json::Map<String, serde_json::Value>) {
        if let Some(plan) = self.plan.as_object_mut() {
            plan.extend(fields);
        }
    }

    /// The same run as `clients` clients ran it (a view of one host's clients).
    #[must_use]
    pub fn with_clients(mut self, clients: usize) -> StoredRun {
        if let Some(conditions) = self.conditions.as_object_mut() {
            conditions.insert("clients".into(), clients.into());
        }
        self
    }
}

/// The results database, open: one SQLite connection (WAL mode) to the file, and what was found of
/// its state (damaged, read-only, moved).
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// What SQLite said at the first sign of damage: from then on the connection is query-only.
    damage: OnceLock<String>,
    /// Why the database is only read, when it is (a read-only mount, a file this user may not write).
    read_only: Option<String>,
    /// Set by the commit hook when the path no longer names the file opened (removed or
    /// replaced): from then on nothing is committed.
    moved: Arc<OnceLock<String>>,
    /// Done once the file is found moved: its `-wal` file folded into it ([`Store::settle_moved`]).
    settled: std::sync::Once,
}

impl Store {
    /// Opens or creates the database (its folder must exist: a folder is never made here), brings
    /// the schema up to date, and marks runs whose process is gone as incomplete. A database that
    /// may not be written is opened for reading only ([`Store::read_only`]).
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, false)
    }

    /// As [`Store::open`], for a command that will write runs: a database that may not be written
    /// is refused ([`StoreError::ReadOnly`]), and the whole file is checked first (`PRAGMA
    /// quick_check`, a read of every page: 0.3 s for 500 MB in the page cache on a 2-core VM),
    /// so a damaged file is refused before anything is written into it.
    pub fn open_for_writing(path: &Path) -> Result<Store> {
        Store::open_with(path, true)
    }

    /// From now on, this process opens every database for reading only, whatever it may write:
    /// SQLite itself then refuses any write (`SQLITE_OPEN_READ_ONLY`, `query_only`), no schema is
    /// brought up to date and no run is marked. `iomatrix serve` says so before it reads anything.
    pub fn read_only_from_now() {
        READ_ONLY_PROCESS.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn open_with(path: &Path, for_writing: bool) -> Result<Store> {
        if path.exists() && !path.is_file() {
            return Err(StoreError::Other(
                "not a regular file (a folder, a device, a FIFO): not a database".into(),
                path.to_path_buf(),
            ));
        }
        let folder = open::folder_of(path);
        if !folder.is_dir() {
            return Err(StoreError::Other(
                format!("its folder {} does not exist (a database's folder is never made here)", folder.display()),
                path.to_path_buf(),
            ));
        }
        let access = if READ_ONLY_PROCESS.load(std::sync::atomic::Ordering::SeqCst) {
            open::Access::ReadOnly("this process only reads it (iomatrix serve)".into())
        } else {
            open::access_of(path)
        };
        match access {
            open::Access::ReadOnly(why) if for_writing => Err(StoreError::read_only(
                path,
                format!("{why}: iomatrix reads it but stores nothing in it; give a writable database with --db PATH"),
            )),
            open::Access::ReadOnly(why) => Store::open_reading(path, why),
            open::Access::ReadWrite => Store::open_read_write(path, for_writing),
        }
    }

    fn open_read_write(path: &Path, check_first: bool) -> Result<Store> {
        let conn = Connection::open(path).map_err(|source| StoreError::Sqlite {
            path: path.to_path_buf(),
            what: "cannot open",
            source,
        })?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            damage: OnceLock::new(),
            read_only: None,
            moved: Arc::new(OnceLock::new()),
            settled: std::sync::Once::new(),
        };
        store.configure()?;
        let opened = open::FileIdentity::of(path)
            .map_err(|e| StoreError::Other(format!("cannot look at it once opened: {e}"), path.to_path_buf()))?;
        open::watch_identity(&mut store.conn, path, opened, store.moved.clone())
            .map_err(|source| StoreError::Sqlite { path: path.to_path_buf(), what: "cannot watch the file", source })?;
        if check_first {
            store.quick_check()?;
        }
        schema::migrate(&store.conn).map_err(|e| match e {
            schema::MigrateError::Sqlite(source) => store.err("cannot bring the schema up to date")(source),
            schema::MigrateError::TooNew { found, known } => StoreError::Other(
                format!("schema version {found} is newer than this iomatrix knows ({known}): use a newer iomatrix"),
                path.to_path_buf(),
            ),
        })?;
        store.index_runs_by_start()?;
        store.mark_abandoned_runs()?;
        store.mark_abandoned_studies()?;
        Ok(store)
    }

    /// Opens an existing database for reading only (SQLITE_OPEN_READ_ONLY), whether or not it
    /// could be written: for readers beside a running run (`watch`, the viewer) that must never
    /// write it. Nothing is made, migrated or marked: a run whose process died still reads as
    /// running here until a writer opens the database.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::Other(
                "no such file: this command only reads a database; give an existing one with --db PATH".into(),
                path.to_path_buf(),
            ));
        }
        if !path.is_file() {
            return Err(StoreError::Other(
                "not a regular file (a folder, a device, a FIFO): not a database".into(),
                path.to_path_buf(),
            ));
        }
        Store::open_reading(path, "opened for reading only".into())
    }

    /// Indexes the runs by start time, where no index does yet: a page of runs newest first
    /// (`runs --page`, the viewer's runs page) then reads its own rows, where it otherwise reads
    /// every run's (a run's records are kilobytes) to sort 10,000 start times. Made on the first
    /// writable open, not as a migration: an index changes nothing stored, and a database of
    /// this schema version opened only for reading (the viewer, `watch`) must stay readable;
    /// without it a page is slower, never different.
    fn index_runs_by_start(&self) -> Result<()> {
        let indexed: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'runs_by_start')",
                [],
                |r| r.get(0),
            )
            .map_err(self.err("cannot read the schema"))?;
        if !indexed {
            self.conn
                .execute_batch("CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at_ms, id)")
                .map_err(self.err("cannot index the runs by start time"))?;
        }
        Ok(())
    }

    /// A database iomatrix may not write, opened for reading: nothing is made, migrated or
    /// marked. Its schema must be this iomatrix's: an older one cannot be brought up to date
    /// where it is.
    fn open_reading(path: &Path, why: String) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::read_only(
                path,
                format!("{why}, and there is no database there to read: give an existing one with --db PATH"),
            ));
        }
        let conn = match open::open_read_only(path) {
            Ok(conn) => conn,
            Err(open::ReadOnlyOpen::Unreadable(more)) => {
                return Err(StoreError::read_only(path, format!("{why}; {more}")))
            }
            Err(open::ReadOnlyOpen::Sqlite(source)) => {
                return Err(StoreError::Sqlite { path: path.to_path_buf(), what: "cannot open for reading", source })
            }
        };
        let store = Store {
            conn,
            path: path.to_path_buf(),
            damage: OnceLock::new(),
            read_only: Some(why.clone()),
            moved: Arc::new(OnceLock::new()),
            settled: std::sync::Once::new(),
        };
        store.conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(store.err("cannot set a busy timeout"))?;
        store.conn.execute_batch("PRAGMA query_only = ON").map_err(store.err("cannot configure"))?;
        store.stable_plans()?;
        let found: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(store.err("cannot read the schema version"))?;
        let known = schema::known_version();
        if found > known {
            return Err(StoreError::Other(
                format!("schema version {found} is newer than this iomatrix knows ({known}): use a newer iomatrix"),
                path.to_path_buf(),
            ));
        }
        if found == 0 && !store.has_runs_table()? {
            // An empty file (a database truncated, or a new one never written) or another
            // program's: nothing of iomatrix's to read, and nothing to bring up to date.
            return Err(StoreError::Other(
                "holds no iomatrix results (it is empty, or has no runs table): the wrong file for --db, or a \
                 database emptied; restore it from a copy (made with `iomatrix db backup`)"
                    .into(),
                path.to_path_buf(),
            ));
        }
        if found < known {
            return Err(StoreError::read_only(
                path,
                if READ_ONLY_PROCESS.load(std::sync::atomic::Ordering::SeqCst) {
                    format!(
                        "{why}, and it holds schema version {found}, older than this iomatrix's {known}: bring it up \
                         to date once with a command that may write it (`iomatrix --db {} runs`), then serve it",
                        path.display()
                    )
                } else {
                    format!(
                        "{why}, and it holds schema version {found}, older than this iomatrix's {known}: it cannot \
                         be brought up to date where it is. Copy it (`iomatrix --db {} db backup COPY`) and read the \
                         copy",
                        path.display()
                    )
                },
            ));
        }
        Ok(store)
    }

    /// Whether the database has iomatrix's `runs` table.
    fn has_runs_table(&self) -> Result<bool> {
        self.conn
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n > 0)
            .map_err(self.err("cannot read the schema"))
    }

    /// The database's path, as opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why this database is only read (a read-only mount, a file this user may not write); None
    /// when it is written as well.
    pub fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    /// Maps a SQLite error to the store's; damage (now or seen before) becomes
    /// [`StoreError::Damaged`] and makes the connection query-only.
    fn err(&self, what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| {
            if let Some(detail) = self.moved.get() {
                self.settled.call_once(|| self.settle_moved());
                return StoreError::Replaced { path: self.path.clone(), what, detail: detail.clone() };
            }
            if let Some(first) = self.damage.get() {
                return StoreError::Damaged { path: self.path.clone(), what, detail: first.clone() };
            }
            if !is_damage(&source) {
                return StoreError::Sqlite { path: self.path.clone(), what, source };
            }
            let detail = if source.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) {
                "SQLite says it is not a database (the wrong file for --db, or its first page damaged)".to_string()
            } else {
                match source {
                    rusqlite::Error::SqliteFailure(_, Some(msg)) => msg,
                    other => other.to_string(),
                }
            };
            self.damaged(what, detail)
        }
    }

    /// The file opened is no longer at its path, but its `-wal` file still is, by name: whatever
    /// file is put at the path next would read this file's pages out of it, mixed into its own.
    /// So every page in it is written home into the file opened (wherever it is now: a file moved
    /// away keeps every cell stored), the `-wal` file is emptied, and nothing more is written.
    fn settle_moved(&self) {
        let _ = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        let _ = self.conn.execute_batch("PRAGMA query_only = ON");
    }

    /// Records the first damage seen, makes the connection query-only, and names it.
    fn damaged(&self, what: &'static str, detail: String) -> StoreError {
        // A connection flag: it reads nothing from the file, so it works however damaged it is.
        let _ = self.conn.execute_batch("PRAGMA query_only = ON");
        let detail = self.damage.get_or_init(|| detail).clone();
        StoreError::Damaged { path: self.path.clone(), what, detail }
    }

    /// Whether SQLite has reported damage on this connection.
    pub fn is_damaged(&self) -> bool {
        self.damage.get().is_some()
    }

    fn quick_check(&self) -> Result<()> {
        let problems = maintain::run_check(&self.conn, "quick_check").map_err(self.err("checked before writing"))?;
        if let Some(first) = problems.first() {
            let more =
                if problems.len() > 1 { format!(" (and {} more problems)", problems.len() - 1) } else { String::new() };
            return Err(self.damaged("checked before writing", format!("{first}{more}")));
        }
        Ok(())
    }

    /// One query plan per statement, whatever is bound to it. Without it SQLite prepared a
    /// cached statement again at each run a compare read (a run's labels and histograms: a
    /// tenth of a compare of 1,400 runs against 1,400), to plan for the run id bound; every
    /// statement here finds a run's rows by its key, which no bound value plans better.
    fn stable_plans(&self) -> Result<()> {
        self.conn
            .set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map(drop)
            .map_err(self.err("cannot configure"))
    }

    fn configure(&self) -> Result<()> {
        const BUSY: std::time::Duration = std::time::Duration::from_secs(10);
        self.conn.busy_timeout(BUSY).map_err(self.err("cannot set a busy timeout"))?;
        self.stable_plans()?;
        // WAL: readers never block the writer; FULL: a committed cell survives power loss too.
        // Switching a new file to WAL can answer "database is locked" at once, without the busy
        // timeout, while another process does the same: wait for it here, as long as that timeout.
        let deadline = std::time::Instant::now() + BUSY;
        loop {
            match self.conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
                Ok(_) => break,
                Err(e)
                    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(self.err("cannot configure")(e)),
            }
        }
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(self.err("cannot configure"))
    }

    /// Records a run as it starts (status `running`) and returns its id; a refused run
    /// ([`StoreError::Refused`]) stores nothing.
    pub fn begin_run(&self, run: &NewRun) -> Result<i64> {
        self.begin_run_claimed(run, None)
    }

    /// As [`Store::begin_run`]; with a claim, the run joins the study's step it names in the same
    /// transaction (refused, and nothing stored, when the claim does not hold).
    pub fn begin_run_claimed(&self, run: &NewRun, claim: Option<&StudyClaim>) -> Result<i64> {
        let me = ProcessId::current();
        gate::check_run(run, &me.host).map_err(|refused| self.refused(refused))?;
        let tx = self.conn.unchecked_transaction().map_err(self.err("cannot begin a run"))?;
        tx.execute(
            &format!(
                "INSERT INTO runs (id, suite, status, started_at_ms, command_line, iomatrix_version, plan_json,
                                   environment_json, conditions_json, total_cells, host, pid, pid_start, uid)
                 VALUES ({}, ?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, lower(hex(randomblob(16))))",
                schema::NEXT_RUN_ID
            ),
            params![
                run.suite,
                time::now_ms(),
                run.command_line,
                env!("CARGO_PKG_VERSION"),
                run.plan.to_string(),
                run.environment.to_string(),
                run.conditions.to_string(),
                run.total_cells as i64,
                me.host,
                me.pid,
                me.start_ticks,
            ],
        )
        .map_err(self.err("cannot record the run"))?;
        let id = tx.last_insert_rowid();
        for (key, value) in &run.labels {
            tx.execute(
                "INSERT OR REPLACE INTO labels (run_id, key, value) VALUES (?1, ?2, ?3)",
                params![id, key, value],
            )
            .map_err(self.err("cannot record a label"))?;
        }
        if let Some(claim) = claim {
            self.join_study(&tx, id, claim)?;
        }
        tx.commit().map_err(self.err("cannot commit the new run"))?;
        Ok(id)
    }

    /// Writes one cell (and its blobs) in its own transaction, once the gate let it pass
    /// against the bounds of the run's environment ([`gate::check_cell`]).
    pub fn add_cell(&self, run_id: i64, c: &CellRow) -> Result<()> {
        let environment: Option<String> = self
            .conn
            .query_row("SELECT environment_json FROM runs WHERE id = ?1", [run_id], |r| r.get(0))
            .optional()
            .map_err(self.err("cannot read the run's environment"))?;
        let limits = environment
            .and_then(|text| serde_json::from_str(&text).ok())
            .map_or(gate::Limits::UNKNOWN, |env: serde_json::Value| gate::Limits::of_environment(&env));
        gate::check_cell(c, &limits).map_err(|refused| self.refused(refused))?;
        let tx = self.conn.unchecked_transaction().map_err(self.err("cannot begin storing a cell"))?;
        self.insert_cell(&tx, run_id, c)?;
        tx.commit().map_err(self.err("cannot commit a cell"))
    }

    fn refused(&self, refused: gate::Refused) -> StoreError {
        StoreError::Refused { path: self.path.clone(), refused }
    }

    /// One cell and its blobs, inside the caller's transaction.
    fn insert_cell(&self, tx: &rusqlite::Transaction<'_>, run_id: i64, c: &CellRow) -> Result<()> {
        tx.execute(
            "INSERT INTO cells (run_id, seq, test, file_size, record_size, backend, direct, clients, bytes, ops,
                                    wall_ns, user_ns, sys_ns, kib_per_sec, cpu_percent, metrics_json, clients_json,
                                    state, parts_ok, parts_of, parts)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
                         ?21)",
            params![
                run_id,
                c.seq as i64,
                c.test,
                c.file_size.map(|v| v as i64),
                c.record_size.map(|v| v as i64),
                c.backend,
                c.direct,
                c.clients as i64,
                c.bytes as i64,
                c.ops as i64,
                c.wall_ns as i64,
                c.user_ns as i64,
                c.sys_ns as i64,
                c.kib_per_sec,
                // The column holds a number (schema 1); an unknown figure is said by the cell's
                // `metrics.not_in_source` ("cpu") or its failed state, which reading turns back
                // into None.
                c.cpu_percent.unwrap_or(0.0),
                metrics_with_cause(c).to_string(),
                c.client_figures.to_string(),
                c.state.kind.as_str(),
                c.state.ok as i64,
                c.state.of as i64,
                c.state.parts,
            ],
        )
        .map_err(self.err("cannot store a cell"))?;
        for (name, data) in &c.blobs {
            tx.execute(
                "INSERT INTO cell_blobs (run_id, seq, name, data) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, c.seq as i64, name, data],
            )
            .map_err(self.err("cannot store a cell's histogram"))?;
        }
        Ok(())
    }

    /// Stores a run that ended elsewhere (results imported from another
    /// tool) in one transaction: the run, its labels and every cell, or
    /// nothing. It is `complete` at once; `host` is where the figures were
    /// measured as far as the source says ("unknown" if it does not).
    pub fn store_finished_run(&self, run: &NewRun, host: &str, cells: &[CellRow]) -> Result<i64> {
        gate::check_run(run, host).map_err(|refused| self.refused(refused))?;
        let limits = gate::Limits::of_environment(&run.environment);
        for c in cells {
            gate::check_cell(c, &limits).map_err(|refused| self.refused(refused))?;
        }
        let me = ProcessId::current();
        let now = time::now_ms();
        let tx = self.conn.unchecked_transaction().map_err(self.err("cannot begin storing a run"))?;
        tx.execute(
            &format!(
                "INSERT INTO runs (id, suite, status, started_at_ms, ended_at_ms, command_line, iomatrix_version,
                                   plan_json, environment_json, conditions_json, total_cells, host, pid, pid_start, uid)
                 VALUES ({}, ?1, 'complete', ?2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, lower(hex(randomblob(16))))",
                schema::NEXT_RUN_ID
            ),
            params![
                run.suite,
                now,
                run.command_line,
                env!("CARGO_PKG_VERSION"),
                run.plan.to_string(),
                run.environment.to_string(),
                run.conditions.to_string(),
                run.total_cells as i64,
                host,
                me.pid,
                me.start_ticks,
            ],
        )
        .map_err(self.err("cannot record the run"))?;
        let id = tx.last_insert_rowid();
        for (key, value) in &run.labels {
            tx.execute(
                "INSERT OR REPLACE INTO labels (run_id, key, value) VALUES (?1, ?2, ?3)",
                params![id, key, value],
            )
            .map_err(self.err("cannot record a label"))?;
        }
        for c in cells {
            self.insert_cell(&tx, id, c)?;
        }
        tx.commit().map_err(self.err("cannot commit the run"))?;
        Ok(id)
    }

    /// Raises a running run's planned cells by `more` (cells measured again).
    pub fn add_planned_cells(&self, run_id: i64, more: usize) -> Result<()> {
        self.conn
            .execute("UPDATE runs SET total_cells = total_cells + ?2 WHERE id = ?1", params![run_id, more as i64])
            .map_err(self.err("cannot update the planned cells"))?;
        Ok(())
    }

    /// Ends a run with its status and, for one that failed or stopped, why.
    pub fn finish_run(&self, run_id: i64, status: RunStatus, error: Option<&str>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET status = ?2, ended_at_ms = ?3, error = ?4 WHERE id = ?1",
                params![run_id, status.as_str(), time::now_ms(), error],
            )
            .map_err(self.err("cannot finish the run"))?;
        Ok(())
    }

    /// Stores the run as failed with `error` unless its end is stored already: for a process that
    /// must leave before it could store the end in its own words (an error on the way, a signal
    /// from a launcher that kills soon after). True when it was still running.
    pub fn fail_if_running(&self, run_id: i64, error: &str) -> Result<bool> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = 'failed', ended_at_ms = ?2, error = ?3 WHERE id = ?1 AND status = 'running'",
                params![run_id, time::now_ms(), error],
            )
            .map_err(self.err("cannot finish the run"))?;
        Ok(changed > 0)
    }

    /// Replaces a run's `environment.client_hosts` (its MPI ranks' hosts) with `hosts`: each rank
    /// describes its host once the run's folder is made, after the run began.
    pub fn set_client_hosts(&self, run_id: i64, hosts: &serde_json::Value) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET environment_json = json_set(environment_json, '$.client_hosts', json(?2)) \
                 WHERE id = ?1 AND json_valid(environment_json)",
                params![run_id, hosts.to_string()],
            )
            .map_err(self.err("cannot record the ranks' hosts"))?;
        Ok(())
    }

    /// Records what the run could not measure: failed clients by cell, cells
    /// planned but not stored (see the `lost` object in docs/json.md).
    pub fn record_lost(&self, run_id: i64, lost: &serde_json::Value) -> Result<()> {
        self.conn
            .execute("UPDATE runs SET lost_json = ?2 WHERE id = ?1", params![run_id, lost.to_string()])
            .map_err(self.err("cannot record the run's losses"))?;
        Ok(())
    }

    /// The latest run before `run` of the same suite and the same setup (plan, the number of
    /// repeats aside) that measured something: the comparison a run's summary offers. Looks at
    /// most [`COMPARABLE_LOOKBACK`] earlier measured runs of the suite back; None past them.
    pub fn previous_comparable_run(&self, run: &StoredRun) -> Result<Option<i64>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.plan_json FROM runs r WHERE r.id < ?1 AND r.suite = ?2 \
                 AND EXISTS (SELECT 1 FROM cells c WHERE c.run_id = r.id) ORDER BY r.id DESC LIMIT ?3",
            )
            .map_err(self.err("cannot find the previous run"))?;
        let rows = stmt
            .query_map(params![run.summary.id, run.summary.suite, COMPARABLE_LOOKBACK], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(self.err("cannot find the previous run"))?;
        let setup = run.setup_facts();
        for row in rows {
            let (id, plan) = row.map_err(self.err("cannot find the previous run"))?;
            // An unreadable plan is no setup to match: that run is skipped, never offered.
            let Ok(plan) = serde_json::from_str::<serde_json::Value>(&plan) else { continue };
            if reader::setup_facts_of(&plan) == setup {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// Every stored run's row, by id.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        let mut stmt =
            self.conn.prepare(&format!("{SUMMARY_LIST_SELECT} ORDER BY r.id")).map_err(self.err("cannot list runs"))?;
        let mut out = stmt
            .query_map([], summary_from_row)
            .map_err(self.err("cannot list runs"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read a run"))?;
        self.fill_labels(&mut out)?;
        Ok(out)
    }

    /// Run `id`'s summary (with its labels), if it is stored.
    pub fn load_run_summary(&self, id: i64) -> Result<Option<RunSummary>> {
        let found = self
            .conn
            .query_row(&format!("{SUMMARY_SELECT} WHERE r.id = ?1"), [id], summary_from_row)
            .optional()
            .map_err(self.err("cannot read a run"))?;
        let Some(mut summary) = found else { return Ok(None) };
        summary.labels = self.labels(summary.id)?;
        Ok(Some(summary))
    }

    /// The newest run whose environment record says `key` = `value` (a text), e.g. the run a
    /// `--hosts` launch started (`launch_id`), found after its processes have ended.
    pub fn find_run_by_environment(&self, key: &str, value: &str) -> Result<Option<RunSummary>> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "{SUMMARY_SELECT} WHERE json_valid(r.environment_json) AND json_extract(r.environment_json, ?1) = ?2 \
                 ORDER BY r.id DESC LIMIT 1"
            ))
            .map_err(self.err("cannot look a run up"))?;
        let found = stmt
            .query_row(params![format!("$.{key}"), value], summary_from_row)
            .optional()
            .map_err(self.err("cannot look a run up"))?;
        let Some(mut summary) = found else { return Ok(None) };
        summary.labels = self.labels(summary.id)?;
        Ok(Some(summary))
    }

    /// A stored run, every figure of it read (its latency histograms decoded). A run with a figure
    /// that cannot be read back is an error naming it ([`StoreError::Unreadable`]): no figure is
    /// read as null, so compare, sweep, report and merge's gate never work on a run with a
    /// histogram that does not decode.
    pub fn load_run(&self, id: i64) -> Result<Option<StoredRun>> {
        self.load_run_reading(id, Reading::Whole)
    }

    /// A stored run as [`Store::load_run`] reads it, less what a summary of many runs never
    /// reads: each cell's figures over time (`series`: [`CellRow::series`] reads none) and its
    /// clients' own figures (`client_figures` is null). For compare, sweep and history, which
    /// hold a side's runs at once: a compare of 1,400 runs a side held 127 MB of cells, and an
    /// hour's cell keeps 3,600 intervals.
    pub fn load_run_summarised(&self, id: i64) -> Result<Option<StoredRun>> {
        self.load_run_reading(id, Reading::Summarised)
    }

    fn load_run_reading(&self, id: i64, reading: Reading) -> Result<Option<StoredRun>> {
        self.read_run(id, reading)?.map(|read| self.strictly(id, read)).transpose()
    }

    /// A stored run as far as it can be read, and each figure that cannot (a JSON column that
    /// does not parse, a histogram that does not decode), named: its value in the run is null
    /// (a histogram: left out). For `show`, which prints what there is and names the rest.
    pub fn load_run_as_stored(&self, id: i64) -> Result<Option<(StoredRun, Vec<Unreadable>)>> {
        self.read_run(id, Reading::Whole)
    }

    fn labels(&self, run_id: i64) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM labels WHERE run_id = ?1 ORDER BY key")
            .map_err(self.err("cannot read labels"))?;
        let rows = stmt
            .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err("cannot read labels"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read labels"))?;
        Ok(rows)
    }

    /// Runs still `running` whose process on this host is gone were killed
    /// or crashed: they are `incomplete`, with the cells they finished.
    fn mark_abandoned_runs(&self) -> Result<()> {
        let me = ProcessId::current();
        let mut stmt = self
            .conn
            .prepare("SELECT id, pid, pid_start FROM runs WHERE status = 'running' AND host = ?1")
            .map_err(self.err("cannot check for abandoned runs"))?;
        let candidates = stmt
            .query_map([&me.host], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<i64>>(2)?)))
            .map_err(self.err("cannot check for abandoned runs"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot check for abandoned runs"))?;
        for (id, pid, start) in candidates {
            if !ProcessId::is_alive(pid, start) {
                self.conn
                    .execute(
                        "UPDATE runs SET status = 'incomplete',
                                error = COALESCE(error, 'the process ended before the run finished (killed or crashed)')
                         WHERE id = ?1 AND status = 'running'",
                        [id],
                    )
                    .map_err(self.err("cannot mark an abandoned run"))?;
                // The live state its process could not remove (killed): readers would wait 10 s to
                // take it for a dead run's.
                let _ = LiveState::remove(&self.path, id);
            }
        }
        Ok(())
    }
}

/// The cell's state from its columns 16-19 (`state`, `parts_ok`, `parts_of`, `parts`); a cell
/// whose counts were never recorded (complete before schema 6) counts its `clients` column.
fn state_from_row(r: &rusqlite::Row<'_>, clients_column: usize) -> rusqlite::Result<CellState> {
    let clients = r.get::<_, i64>(clients_column)?.max(0) as u64;
    let kind = CellStateKind::parse(&r.get::<_, String>(16)?);
    let ok = r.get::<_, Option<i64>>(17)?.map_or(clients, |v| v.max(0) as u64);
    let of = r.get::<_, Option<i64>>(18)?.map_or(clients, |v| v.max(0) as u64);
    let parts = r.get::<_, Option<String>>(19)?.unwrap_or_else(|| "clients".into());
    Ok(CellState { kind, ok, of, parts, cause: None })
}

/// The cell's `metrics` as stored: a disturbed cell's cause under [`DISTURBED_KEY`], in the
/// per-cell JSON rather than a column of its own, so `db merge` and every copy carry it.
fn metrics_with_cause(c: &CellRow) -> std::borrow::Cow<'_, serde_json::Value> {
    let Some(cause) = c.state.cause.as_ref().filter(|_| c.state.kind == CellStateKind::Disturbed) else {
        return std::borrow::Cow::Borrowed(&c.metrics);
    };
    let mut metrics = match &c.metrics {
        serde_json::Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    metrics.insert(DISTURBED_KEY.into(), serde_json::json!({ "cause": cause }));
    std::borrow::Cow::Owned(serde_json::Value::Object(metrics))
}

/// Set by [`Store::read_only_from_now`].
static READ_ONLY_PROCESS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

const SUMMARY_SELECT: &str = "SELECT r.id, r.suite, r.status, r.started_at_ms, r.ended_at_ms, r.host, r.command_line,
        (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.id), r.total_cells, r.error, r.iomatrix_version, r.pid,
        r.plan_json, r.environment_json, r.conditions_json, r.pid_start,
        (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.id AND c.state = 'disturbed')
     FROM runs r";

/// [`SUMMARY_SELECT`] without the plan, environment and conditions (NULL in their places): what a
/// list of runs reads, so that it does not load every run's records.
const SUMMARY_LIST_SELECT: &str =
    "SELECT r.id, r.suite, r.status, r.started_at_ms, r.ended_at_ms, r.host, r.command_line,
        (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.id), r.total_cells, r.error, r.iomatrix_version, r.pid,
        NULL, NULL, NULL, r.pid_start,
        (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.id AND c.state = 'disturbed')
     FROM runs r";

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: r.get(0)?,
        suite: r.get(1)?,
        status: RunStatus::parse(&r.get::<_, String>(2)?),
        started_at: format_utc(r.get(3)?),
        ended_at: r.get::<_, Option<i64>>(4)?.map(format_utc),
        host: r.get(5)?,
        command_line: r.get(6)?,
        labels: Vec::new(),
        cells: r.get::<_, i64>(7)? as usize,
        total_cells: r.get::<_, i64>(8)? as usize,
        disturbed_cells: r.get::<_, i64>(16)?.max(0) as usize,
        error: r.get(9)?,
        iomatrix_version: r.get(10)?,
        pid: r.get(11)?,
        pid_start: r.get(15)?,
    })
}

/// Identifies a process across pid reuse: host, pid, and its start time in
/// clock ticks since boot (/proc/PID/stat field 22). The run rows and the
/// working folders' markers use it to tell a live run from a dead one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessId {
    /// The host's name.
    pub host: String,
    /// The process id on that host.
    pub pid: i64,
    /// Its start time in clock ticks since boot; None where it could not be read.
    pub start_ticks: Option<i64>,
}

impl ProcessId {
    /// This process.
    pub fn current() -> ProcessId {
        let pid = i64::from(std::process::id());
        ProcessId { host: hostname(), pid, start_ticks: start_ticks(pid) }
    }

    /// This host's name, as run rows and markers record it.
    pub fn this_host() -> String {
        hostname()
    }

    /// Whether `pid` on this host is still the process that started at
    /// `recorded_start` (unknown start: any process with that pid counts).
    pub fn is_alive(pid: i64, recorded_start: Option<i64>) -> bool {
        match (start_ticks(pid), recorded_start) {
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

fn start_ticks(pid: i64) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
