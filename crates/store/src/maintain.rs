//! Looking after the file itself (`iomatrix db`): [`check`] (SQLite's
//! integrity check, every stored figure read back, counts, schema version),
//! [`backup`] (SQLite's online backup: a consistent copy while runs write)
//! and [`Store::merge_from`] (another database's runs copied in, once each,
//! with their origin). Each reads a database it may not write (a read-only
//! mount) as well.

use super::figures::{self, Unreadable};
use super::open::{self, Access};
use super::{gate, is_damage, schema, time, NewRun, Result, Store, StoreError};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};

/// `PRAGMA integrity_check` or `quick_check`: the problems found (none: sound).
pub(crate) fn run_check(conn: &Connection, pragma: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA {pragma}"))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows.into_iter().filter(|r| r != "ok").collect())
}

/// An existing file, opened as it is: nothing created, nothing migrated, nothing written. Read
/// and write where it may be written (so that closing removes the `-wal` and `-shm` files opening
/// may make); read-only where not (the reason returned).
fn open_existing(path: &Path) -> Result<(Connection, Option<String>)> {
    if !path.is_file() {
        return Err(StoreError::Other("no such file".into(), path.to_path_buf()));
    }
    let (conn, read_only) = match open::access_of(path) {
        Access::ReadWrite => (
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(|source| StoreError::Sqlite { path: path.to_path_buf(), what: "cannot open", source })?,
            None,
        ),
        Access::ReadOnly(why) => match open::open_read_only(path) {
            Ok(conn) => (conn, Some(why)),
            Err(open::ReadOnlyOpen::Unreadable(more)) => {
                return Err(StoreError::read_only(path, format!("{why}; {more}")))
            }
            Err(open::ReadOnlyOpen::Sqlite(source)) => {
                return Err(StoreError::Sqlite { path: path.to_path_buf(), what: "cannot open for reading", source })
            }
        },
    };
    conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|source| StoreError::Sqlite {
        path: path.to_path_buf(),
        what: "cannot set a busy timeout",
        source,
    })?;
    Ok((conn, read_only))
}

/// `PRAGMA quick_check` of the database at `path` (every page read: 0.3 s for 500 MB in the page
/// cache): the problems found, none when it is sound. Reads only; a file SQLite cannot read at all
/// is one problem.
pub fn quick_check(path: &Path) -> Result<Vec<String>> {
    let (conn, _) = open_existing(path)?;
    Ok(run_check(&conn, "quick_check").unwrap_or_else(|e| vec![sqlite_text(e)]))
}

/// What SQLite said, without rusqlite's wrapping.
fn sqlite_text(e: rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg,
        other => other.to_string(),
    }
}

/// What `iomatrix db check` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    /// The database checked.
    pub path: PathBuf,
    /// SQLite's integrity check, line by line; empty when the file is sound.
    pub problems: Vec<String>,
    /// Why iomatrix may only read the file (a read-only mount, a file this user may not write);
    /// None when it may write it.
    pub read_only: Option<String>,
    /// Stored figures that cannot be read back (the first 100, `UNREADABLE_LISTED`); only looked for
    /// in a file SQLite finds sound.
    pub unreadable: Vec<Unreadable>,
    /// How many stored figures cannot be read back, listed or not.
    pub unreadable_count: u64,
    /// `PRAGMA user_version`, when it could be read.
    pub schema_version: Option<i64>,
    /// The version this iomatrix writes.
    pub known_version: i64,
    /// How many runs it holds; None where they could not be counted.
    pub runs: Option<i64>,
    /// How many cells it holds; None where they could not be counted.
    pub cells: Option<i64>,
    /// The file's size in bytes (0 where it could not be read).
    pub bytes: u64,
}

/// How many unreadable figures a [`CheckReport`] lists (it counts them all).
pub const UNREADABLE_LISTED: usize = 100;

impl CheckReport {
    /// The file is sound and every stored figure reads.
    pub fn sound(&self) -> bool {
        self.problems.is_empty() && self.unreadable_count == 0
    }
}

/// SQLite's full integrity check of the file at `path` (every page, every index against its
/// table), every stored figure read back (JSON parsed, histograms decoded), the schema version,
/// and the runs and cells it holds. Reads only.
pub fn check(path: &Path) -> Result<CheckReport> {
    let (conn, read_only) = open_existing(path)?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let text = sqlite_text;
    let mut problems = run_check(&conn, "integrity_check").unwrap_or_else(|e| vec![text(e)]);
    let schema_version = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).ok();
    let mut count = |table: &str| match conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)) {
        Ok(n) => Some(n),
        Err(e) => {
            if problems.is_empty() && schema_version.is_some_and(|v| v > 0) {
                problems.push(format!("cannot count {table}: {}", text(e)));
            }
            None
        }
    };
    let runs = count("runs");
    let cells = count("cells");
    let (mut unreadable, mut unreadable_count) = (Vec::new(), 0);
    if let (true, Some(version @ 1..)) = (problems.is_empty(), schema_version) {
        let mut found = |u: Unreadable| {
            unreadable_count += 1;
            if unreadable.len() < UNREADABLE_LISTED {
                unreadable.push(u);
            }
        };
        if let Err(e) = unreadable_figures(&conn, version, &mut found) {
            problems.push(format!("cannot read the stored figures: {}", text(e)));
        }
    }
    Ok(CheckReport {
        path: path.to_path_buf(),
        problems,
        read_only,
        unreadable,
        unreadable_count,
        schema_version,
        known_version: schema::known_version(),
        runs,
        cells,
        bytes,
    })
}

/// Reads back every figure stored in a database of schema `version` (each run's JSON columns,
/// each cell's, each latency histogram) and hands each that cannot be read to `found`. One row
/// at a time: memory stays flat however large the file.
fn unreadable_figures(conn: &Connection, version: i64, found: &mut dyn FnMut(Unreadable)) -> rusqlite::Result<()> {
    let mut run_columns = vec!["plan_json", "environment_json", "conditions_json"];
    if version >= 3 {
        run_columns.push("lost_json");
    }
    if version >= 5 {
        run_columns.push("origin_json");
    }
    let mut stmt = conn.prepare(&format!("SELECT id, {} FROM runs ORDER BY id", run_columns.join(", ")))?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let run: i64 = r.get(0)?;
        for (i, column) in run_columns.iter().enumerate() {
            if let Err(problem) = figures::json(r.get_ref(i + 1)?) {
                found(Unreadable { problem: problem.to_string(), ..Unreadable::at(run, None, column) });
            }
        }
    }
    let mut stmt =
        conn.prepare("SELECT run_id, seq, test, metrics_json, clients_json FROM cells ORDER BY run_id, seq")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (run, seq, test): (i64, i64, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        for (i, column) in [(3, "metrics_json"), (4, "clients_json")] {
            if let Err(problem) = figures::json(r.get_ref(i)?) {
                found(Unreadable {
                    problem: problem.to_string(),
                    ..Unreadable::at(run, Some((seq as usize, &test)), column)
                });
            }
        }
    }
    if version >= 2 {
        let mut stmt = conn.prepare(&format!(
            "SELECT b.run_id, b.seq, c.test, b.name, {} FROM cell_blobs b
             LEFT JOIN cells c ON c.run_id = b.run_id AND c.seq = b.seq ORDER BY b.run_id, b.seq, b.name",
            figures::blob_columns("b.")
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (run, seq, test, name): (i64, i64, Option<String>, String) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            if let Err(problem) = figures::blob(&name, r.get_ref(4)?, r.get(5)?) {
                let mut place = Unreadable::at(run, None, &format!("cell_blobs {name}"));
                place.cell = Some(seq as usize);
                place.test = test;
                found(Unreadable { problem: problem.to_string(), ..place });
            }
        }
    }
    Ok(())
}

/// What `iomatrix db backup` wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BackupReport {
    /// The database copied.
    pub from: PathBuf,
    /// The copy written.
    pub to: PathBuf,
    /// SQLite pages copied.
    pub pages: i64,
    /// The copy's size in bytes (0 where it could not be read).
    pub bytes: u64,
    /// `PRAGMA quick_check` of the copy; empty when it is sound.
    pub problems: Vec<String>,
}

/// A consistent copy of `from` at `to` (which must not exist) through SQLite's online backup:
/// one step over every page inside one read transaction, which in WAL mode blocks no writer, so
/// it is safe while runs write (a copy made page by page in small steps would restart at every
/// write). The copy is written beside `to` and renamed when complete: a failed backup leaves no
/// file that looks like one.
pub fn backup(from: &Path, to: &Path) -> Result<BackupReport> {
    let (src, _) = open_existing(from)?;
    let partial = to.with_file_name(format!(
        ".{}.partial-{}",
        to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ));
    let err = |what: &'static str| move |source| StoreError::Sqlite { path: to.to_path_buf(), what, source };
    let result = (|| {
        let mut dst = Connection::open(&partial).map_err(err("cannot create the copy"))?;
        let pages = {
            let b = rusqlite::backup::Backup::new(&src, &mut dst).map_err(err("cannot start the backup"))?;
            // Busy or locked only while another connection holds an exclusive lock: retry, bounded.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            loop {
                match b.step(-1).map_err(|source| StoreError::Sqlite {
                    path: from.to_path_buf(),
                    what: "cannot copy",
                    source,
                })? {
                    rusqlite::backup::StepResult::Done => break,
                    _ if std::time::Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    _ => {
                        return Err(StoreError::Other(
                            "the database stayed locked for 60 s: try again".into(),
                            from.to_path_buf(),
                        ))
                    }
                }
            }
            i64::from(b.progress().pagecount)
        };
        let problems = run_check(&dst, "quick_check").map_err(err("cannot check the copy"))?;
        drop(dst);
        Ok((pages, problems))
    })();
    let (pages, problems) = match result {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    // Linking refuses to replace a file that appeared meanwhile; rename would not, so it is only
    // the fallback where the file system has no hard links.
    let placed = std::fs::hard_link(&partial, to)
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Err(e),
            _ if to.exists() => Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists)),
            _ => std::fs::rename(&partial, to),
        })
        .and_then(|()| if partial.exists() { std::fs::remove_file(&partial) } else { Ok(()) });
    placed.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        StoreError::Other(format!("cannot put the copy in place: {e}"), to.to_path_buf())
    })?;
    let bytes = std::fs::metadata(to).map(|m| m.len()).unwrap_or(0);
    Ok(BackupReport { from: from.to_path_buf(), to: to.to_path_buf(), pages, bytes, problems })
}

/// The schema version of the database at `path`, read without changing it; 0 for a file
/// SQLite reads but iomatrix never wrote.
pub fn schema_version_of(path: &Path) -> Result<i64> {
    let (conn, _) = open_existing(path)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|source| {
        StoreError::Sqlite { path: path.to_path_buf(), what: "cannot read the schema version", source }
    })?;
    let has_runs: bool = conn
        .query_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'", [], |_| Ok(()))
        .optional()
        .map_err(|source| StoreError::Sqlite { path: path.to_path_buf(), what: "cannot read the schema", source })?
        .is_some();
    Ok(if has_runs { version } else { 0 })
}

/// One run copied by [`Store::merge_from`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MergedRun {
    /// Its id in the database merged.
    pub there: i64,
    /// Its id in this one.
    pub here: i64,
}

/// A run of the database merged that the gate refused ([`crate::gate`]): none of it is copied.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RefusedRun {
    /// Its id in the database merged.
    pub there: i64,
    /// Which figure broke which bound (the cell, the figure, its value, the bound), or why its
    /// figures could not be checked (they cannot be read back).
    pub why: String,
}

impl std::fmt::Display for RefusedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run #{} there: {}", self.there, self.why)
    }
}

/// Whether [`Store::merge_from`] copies the runs the gate lets pass, or only finds those it
/// refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMode {
    /// Copy every run the gate lets pass, each in its own transaction.
    Copy,
    /// Copy nothing: each run is copied and checked inside a transaction that is then rolled back.
    CheckOnly,
}

/// What [`Store::merge_from`] did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MergeReport {
    /// The database merged from.
    pub source: PathBuf,
    /// Its schema version (`PRAGMA user_version`).
    pub source_version: i64,
    /// Each run copied.
    pub merged: Vec<MergedRun>,
    /// Each run the gate refused, not copied.
    pub refused: Vec<RefusedRun>,
    /// Runs this database already holds (merged before, or the same run).
    pub already_here: usize,
    /// Runs still running there (or removed there while the merge ran): not copied; merge again
    /// once they end.
    pub still_running: usize,
}

impl Store {
    /// Copies every finished run of the database at `source` (schema version 1 up to this
    /// one's; the caller refuses newer ones) into this one, with its labels, cells, histograms,
    /// environment and losses, each run in its own transaction. A run whose identity (`uid`) is here already
    /// is skipped, so merging twice is merging once. Each copied run keeps where it came from
    /// (`origin`: the file, the host it ran on, its id there), unless it had an origin already.
    ///
    /// Every run passes the one gate every figure entering the database passes ([`crate::gate`]),
    /// as this database reads it once copied (older schemas' cells with the states their
    /// migration gives them): a run with a figure outside its bounds, or with figures that cannot
    /// be read back, is rolled back whole and listed in [`MergeReport::refused`]. With
    /// [`MergeMode::CheckOnly`] nothing is kept: the report says what a merge would copy and refuse.
    pub fn merge_from(&self, source: &Path, mode: MergeMode) -> Result<MergeReport> {
        let version = schema_version_of(source)?;
        let known = schema::known_version();
        if version > known {
            return Err(StoreError::Other(
                format!(
                    "schema version {version} is newer than this iomatrix knows ({known}): merge with a newer iomatrix"
                ),
                source.to_path_buf(),
            ));
        }
        let file = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
        self.conn
            .execute("ATTACH DATABASE ?1 AS src", [attach_uri(&file)?])
            .map_err(self.err("cannot open the database to merge"))?;
        let result = self.merge_attached(&file, version, mode).map_err(|e| self.in_which(e, source));
        let detached =
            self.conn.execute_batch("DETACH DATABASE src").map_err(self.err("cannot close the merged database"));
        let report = result?;
        detached?;
        Ok(report)
    }

    /// Damage met while merging, put where it is: SQLite's error does not say which of the two
    /// files it read, so the source is checked (`PRAGMA src.quick_check`), and the damage is the
    /// source's when it has any: the error names the source, not this database.
    fn in_which(&self, e: StoreError, source: &Path) -> StoreError {
        let StoreError::Damaged { what, detail, .. } = &e else {
            return e;
        };
        let source_problems = match run_check(&self.conn, "src.quick_check") {
            Ok(problems) => problems,
            Err(e) if is_damage(&e) => vec![sqlite_text(e)],
            Err(_) => Vec::new(),
        };
        if source_problems.is_empty() {
            return e;
        }
        // This connection stays query-only (it took the first sign for its own): the merge ends here.
        StoreError::Damaged {
            path: source.to_path_buf(),
            what,
            detail: source_problems.into_iter().next().unwrap_or_else(|| detail.clone()),
        }
    }

    fn merge_attached(&self, file: &Path, version: i64, mode: MergeMode) -> Result<MergeReport> {
        let uid = if version >= 5 { "r.uid" } else { schema::LEGACY_UID };
        let origin = if version >= 5 { "r.origin_json" } else { "NULL" };
        let lost = if version >= 3 { "r.lost_json" } else { "NULL" };
        let mut report = MergeReport { source: file.to_path_buf(), source_version: version, ..Default::default() };
        let runs: Vec<(i64, String, String)> = {
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT r.id, {uid}, r.status FROM src.runs r ORDER BY r.id"))
                .map_err(self.err("cannot read the runs to merge"))?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(self.err("cannot read the runs to merge"))?
                .collect::<rusqlite::Result<_>>()
                .map_err(self.err("cannot read the runs to merge"))?;
            rows
        };
        let file_text = file.display().to_string();
        let now = time::now_ms();
        // One transaction per run: each is copied whole or not at all, and runs writing into this
        // database meanwhile wait for one run's copy at most, never for the whole merge.
        for (old_id, run_uid, status) in runs {
            if status == "running" {
                report.still_running += 1;
                continue;
            }
            let tx = rusqlite::Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)
                .map_err(self.err("cannot begin copying a run"))?;
            let here: Option<i64> = tx
                .query_row("SELECT id FROM main.runs WHERE uid = ?1", [&run_uid], |r| r.get(0))
                .optional()
                .map_err(self.err("cannot look for the run here"))?;
            if here.is_some() {
                report.already_here += 1;
                continue;
            }
            let copied = tx
                .execute(
                    &format!(
                    "INSERT INTO main.runs (id, suite, status, started_at_ms, ended_at_ms, command_line,
                        iomatrix_version, plan_json, environment_json, conditions_json, total_cells, error, host, pid,
                        pid_start, lost_json, uid, origin_json)
                     SELECT {next_id}, r.suite, r.status, r.started_at_ms, r.ended_at_ms, r.command_line, r.iomatrix_version,
                        r.plan_json, r.environment_json, r.conditions_json, r.total_cells, r.error, r.host, r.pid,
                        r.pid_start, {lost}, ?2,
                        COALESCE({origin}, json_object('file', ?3, 'host', r.host, 'run_id', r.id, 'merged_at_ms', ?4))
                     FROM src.runs r WHERE r.id = ?1 AND r.status != 'running'",
                    next_id = schema::NEXT_RUN_ID
                ),
                    params![old_id, run_uid, file_text, now],
                )
                .map_err(self.err("cannot copy a run"))?;
            if copied == 0 {
                // Started again or removed there since the list was read: left for a later merge.
                report.still_running += 1;
                continue;
            }
            let new_id = tx.last_insert_rowid();
            self.copy_contents(&tx, (old_id, new_id), version)?;
            // The gate, on the run as this database holds it now; a refused run is rolled back whole.
            if let Some(why) = self.refusal_of(new_id)? {
                report.refused.push(RefusedRun { there: old_id, why });
                continue;
            }
            if mode == MergeMode::CheckOnly {
                // Rolled back when dropped: reported as it would be merged.
                report.merged.push(MergedRun { there: old_id, here: new_id });
                continue;
            }
            tx.commit().map_err(self.err("cannot commit a copied run"))?;
            report.merged.push(MergedRun { there: old_id, here: new_id });
        }
        Ok(report)
    }

    /// Copies run `old_id`'s labels, cells (with their states, made as migration 6 makes them for
    /// a source older than version 6) and histograms from the attached source into run `new_id`.
    fn copy_contents(&self, tx: &rusqlite::Connection, (old_id, new_id): (i64, i64), version: i64) -> Result<()> {
        tx.execute(
            "INSERT INTO main.labels (run_id, key, value) SELECT ?2, key, value FROM src.labels WHERE run_id = ?1",
            params![old_id, new_id],
        )
        .map_err(self.err("cannot copy a run's labels"))?;
        // Cell states since version 6; an older database's cells get them as migration 6 gives them.
        let states = if version >= 6 { ", state, parts_ok, parts_of, parts" } else { "" };
        tx.execute(
            &format!(
                "INSERT INTO main.cells (run_id, seq, test, file_size, record_size, backend, direct, clients, bytes,
                    ops, wall_ns, user_ns, sys_ns, kib_per_sec, cpu_percent, metrics_json, clients_json{states})
             SELECT ?2, seq, test, file_size, record_size, backend, direct, clients, bytes, ops, wall_ns, user_ns,
                    sys_ns, kib_per_sec, cpu_percent, metrics_json, clients_json{states}
             FROM src.cells WHERE run_id = ?1"
            ),
            params![old_id, new_id],
        )
        .map_err(self.err("cannot copy a run's cells"))?;
        if version < 6 {
            for statement in schema::CELL_STATE_BACKFILL_OF_RUN.split(';').filter(|s| !s.trim().is_empty()) {
                tx.execute(statement, [new_id]).map_err(self.err("cannot give the copied cells their states"))?;
            }
        }
        if version >= 2 {
            tx.execute(
                "INSERT INTO main.cell_blobs (run_id, seq, name, data)
                 SELECT ?2, seq, name, data FROM src.cell_blobs WHERE run_id = ?1",
                params![old_id, new_id],
            )
            .map_err(self.err("cannot copy a run's histograms"))?;
        }
        Ok(())
    }

    /// Why the gate refuses run `id` as stored here (inside the caller's transaction), if it does:
    /// its own text ([`gate::check_run`]) and every cell against its environment's bounds
    /// ([`gate::check_cell`]), or figures that cannot be read back to be checked.
    fn refusal_of(&self, id: i64) -> Result<Option<String>> {
        let run = match self.load_run(id) {
            Ok(Some(run)) => run,
            Ok(None) => return Ok(Some("it vanished while it was copied".into())),
            Err(StoreError::Unreadable { first, more, .. }) => {
                let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
                return Ok(Some(format!("its stored figures cannot be read, so not checked: {first}{more}")));
            }
            Err(e) => return Err(e),
        };
        let new = NewRun {
            suite: run.summary.suite.clone(),
            command_line: run.summary.command_line.clone(),
            labels: run.summary.labels.clone(),
            plan: run.plan.clone(),
            environment: run.environment.clone(),
            conditions: run.conditions.clone(),
            total_cells: run.summary.total_cells,
        };
        if let Err(refused) = gate::check_run(&new, &run.summary.host) {
            return Ok(Some(refused.to_string()));
        }
        let limits = gate::Limits::of_environment(&run.environment);
        Ok(run.cell_results.iter().find_map(|c| gate::check_cell(c, &limits).err()).map(|r| r.to_string()))
    }
}

/// `file:` URI opening `path` as it is (never created). The merge only reads it, yet opens it
/// read-write where it may (`mode=rw`): a read-only connection would leave the `-wal` and `-shm`
/// files it needs beside it, where the last read-write connection to close removes them. Where
/// it may not be written (a read-only mount), it is read as [`open::open_read_only`] reads.
fn attach_uri(path: &Path) -> Result<String> {
    match open::access_of(path) {
        Access::ReadWrite => Ok(open::uri(path, "mode=rw")),
        Access::ReadOnly(why) => open::read_only_query(path)
            .map(|query| open::uri(path, query))
            .map_err(|more| StoreError::read_only(path, format!("{why}; {more}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database as iomatrix wrote it before runs had a `uid` (schema version 4), with `n` runs.
    fn version_4(path: &Path, n: i64) {
        let conn = Connection::open(path).unwrap();
        for sql in &schema::MIGRATIONS[..4] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 4").unwrap();
        for id in 1..=n {
            conn.execute(
                "INSERT INTO runs (id, suite, status, started_at_ms, command_line, iomatrix_version, plan_json,
                                   environment_json, conditions_json, total_cells, host, pid)
                 VALUES (?1, 'iozone', 'complete', 1000 + ?1, 'iomatrix run iozone', '0.1.0', '{}', '{}', '{}', 1,
                         'old-host', 4242)",
                [id],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO cells VALUES (?1, 0, 'write', 65536, 4096, 'psync', 0, 1, 65536, 16, 1000, 1, 1, 64.0,
                                           1.0, '{}', '[]')",
                [id],
            )
            .unwrap();
        }
    }

    /// An older database merged as it is and a copy of it migrated name every run alike, so
    /// merging both copies each run once.
    #[test]
    fn an_older_database_and_its_migrated_copy_merge_once() {
        let dir = tempfile::tempdir().unwrap();
        let (old, copy, here) = (dir.path().join("old.db"), dir.path().join("copy.db"), dir.path().join("here.db"));
        version_4(&old, 2);
        std::fs::copy(&old, &copy).unwrap();
        drop(Store::open(&copy).unwrap());
        assert_eq!(schema_version_of(&copy).unwrap(), schema::known_version());
        assert_eq!(schema_version_of(&old).unwrap(), 4);

        let store = Store::open(&here).unwrap();
        let first = store.merge_from(&old, crate::MergeMode::Copy).unwrap();
        assert_eq!((first.merged.len(), first.source_version), (2, 4));
        let second = store.merge_from(&copy, crate::MergeMode::Copy).unwrap();
        assert_eq!((second.merged.len(), second.already_here), (0, 2));
        assert_eq!(schema_version_of(&old).unwrap(), 4, "the merge wrote into the database it read");
        let run = store.load_run(first.merged[0].here).unwrap().unwrap();
        assert_eq!(run.uid.as_deref(), Some("legacy-old-host-4242-1001-1"));
        assert_eq!(run.cell_results.len(), 1);
    }

    /// Brought up to date, an older database starts its run ids above its highest, and a removed
    /// newest run's id is not given again.
    #[test]
    fn an_older_database_migrated_never_gives_a_removed_runs_id_again() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.db");
        version_4(&old, 3);
        let store = Store::open(&old).unwrap();
        store.delete_run(3).unwrap();
        let next = store.begin_run(&crate::NewRun {
            suite: "iozone".into(),
            command_line: "iomatrix run iozone".into(),
            labels: vec![],
            plan: serde_json::json!({}),
            environment: serde_json::json!({}),
            conditions: serde_json::json!({}),
            total_cells: 1,
        });
        assert_eq!(next.unwrap(), 4);
    }
}
