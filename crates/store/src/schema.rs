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
];

pub enum MigrateError {
    Sqlite(rusqlite::Error),
    TooNew { found: i64, known: i64 },
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}

pub fn migrate(conn: &Connection) -> Result<(), MigrateError> {
    let known = MIGRATIONS.len() as i64;
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > known {
        return Err(MigrateError::TooNew { found, known });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}
