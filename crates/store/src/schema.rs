//! Schema versions. Each entry of [`MIGRATIONS`] takes the database from
//! version i to i+1; `PRAGMA user_version` records where it stands. Never edit
//! a released migration: add one.

use rusqlite::Connection;

pub const MIGRATIONS: &[&str] = &[
    // 1: runs, labels, cells.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        suite TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at_ms INTEGER NOT NULL,
        ended_at_ms INTEGER,
        command_line TEXT NOT NULL,
        iomatrix_version TEXT NOT NULL,
        plan_json TEXT NOT NULL,
        environment_json TEXT NOT NULL,
        conditions_json TEXT NOT NULL,
        total_cells INTEGER NOT NULL,
        error TEXT,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_start INTEGER
    );
    CREATE TABLE labels (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE cells (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        test TEXT NOT NULL,
        file_size INTEGER,
        record_size INTEGER,
        backend TEXT NOT NULL,
        direct INTEGER NOT NULL,
        clients INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        ops INTEGER NOT NULL,
        wall_ns INTEGER NOT NULL,
        user_ns INTEGER NOT NULL,
        sys_ns INTEGER NOT NULL,
        kib_per_sec REAL NOT NULL,
        cpu_percent REAL NOT NULL,
        metrics_json TEXT NOT NULL,
        clients_json TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE INDEX labels_by_key ON labels (key, value);",
    // 2: binary figures of a cell (HDR latency histograms), written with the cell.
    "CREATE TABLE cell_blobs (
        run_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        name TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (run_id, seq, name),
        FOREIGN KEY (run_id, seq) REFERENCES cells(run_id, seq) ON DELETE CASCADE
    );",
    // 3: what a run could not measure (failed clients, cells not stored), counted.
    "ALTER TABLE runs ADD COLUMN lost_json TEXT;",
    // 4: studies (a study file's runs, linked), and each step of a study with its outcome.
    "CREATE TABLE studies (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        scale TEXT NOT NULL,
        file_path TEXT NOT NULL,
        file_text TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at_ms INTEGER NOT NULL,
        ended_at_ms INTEGER,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_start INTEGER
    );
    CREATE TABLE study_steps (
        study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        config TEXT NOT NULL,
        step TEXT NOT NULL,
        suite TEXT NOT NULL,
        key TEXT NOT NULL,
        status TEXT NOT NULL,
        run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        detail TEXT,
        seconds REAL,
        PRIMARY KEY (study_id, seq)
    );
    CREATE INDEX studies_by_name ON studies (name, scale);",
    // 5: a run's stable identity across databases (`db merge` never copies a run twice), and where a
    // merged run came from. New runs get 128 random bits; older runs one made of what already
    // identifies them, so two copies of one older database give each run the same identity.
    "ALTER TABLE runs ADD COLUMN uid TEXT;
    ALTER TABLE runs ADD COLUMN origin_json TEXT;
    UPDATE runs SET uid = printf('legacy-%s-%d-%d-%d', host, pid, started_at_ms, id) WHERE uid IS NULL;
    CREATE UNIQUE INDEX runs_by_uid ON runs (uid);",
    // 7 (the 6th entry until the cell states' migration, 6, is merged before it; neither depends on
    // the other): run ids are never given twice. SQLite gives a new row the highest id + 1, so the id of the
    // newest run, once removed (a study step cut short and run again), would be given again and
    // name another run. The highest id ever given is kept here, raised by every insert, and a new
    // run takes the next one ([`NEXT_RUN_ID`]).
    "CREATE TABLE run_id_high_water (id INTEGER NOT NULL);
    INSERT INTO run_id_high_water (id) SELECT COALESCE(MAX(id), 0) FROM runs;
    CREATE TRIGGER runs_raise_id_high_water AFTER INSERT ON runs
    BEGIN
        UPDATE run_id_high_water SET id = NEW.id WHERE id < NEW.id;
    END;",
];

/// The id a new run takes: one above every id ever given (`run_id_high_water`), even when the
/// run that had it was removed. An SQL expression, for `INSERT INTO runs (id, ...)`.
pub(crate) const NEXT_RUN_ID: &str = "(SELECT MAX(n) + 1 FROM (SELECT id AS n FROM main.run_id_high_water
     UNION ALL SELECT COALESCE(MAX(id), 0) FROM main.runs))";

/// The identity a run of a database older than version 5 gets (from its `runs` row as `r`): the
/// backfill of migration 5, so `db merge` of an older database agrees with the database migrated.
pub const LEGACY_UID: &str = "printf('legacy-%s-%d-%d-%d', r.host, r.pid, r.started_at_ms, r.id)";

pub enum MigrateError {
    Sqlite(rusqlite::Error),
    TooNew { found: i64, known: i64 },
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}

/// Brings the schema up to date. Several processes may open a new database at once: the
/// migrations run under one write lock (`BEGIN IMMEDIATE`, waiting out the busy timeout) and the
/// version is read again inside it, so exactly one process migrates and the others find it done.
pub fn migrate(conn: &Connection) -> Result<(), MigrateError> {
    let known = MIGRATIONS.len() as i64;
    let version =
        |conn: &Connection| -> rusqlite::Result<i64> { conn.query_row("PRAGMA user_version", [], |r| r.get(0)) };
    let found = version(conn)?;
    if found > known {
        return Err(MigrateError::TooNew { found, known });
    }
    if found == known {
        return Ok(());
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    let found = version(&tx)?;
    if found > known {
        return Err(MigrateError::TooNew { found, known });
    }
    for sql in MIGRATIONS.iter().skip(found as usize) {
        tx.execute_batch(sql)?;
    }
    tx.execute_batch(&format!("PRAGMA user_version = {known}"))?;
    tx.commit()?;
    Ok(())
}

/// The schema version this iomatrix writes.
pub fn known_version() -> i64 {
    MIGRATIONS.len() as i64
}
