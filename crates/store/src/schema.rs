//! Schema versions. Each entry of [`MIGRATIONS`] takes the database from
//! version i to i+1; `PRAGMA user_version` records where it stands. Never edit
//! a released migration: add one.

use rusqlite::Connection;

/// Gives the cells matching `$which` (a condition on a `cells` row) that were stored before
/// schema 6 the state their figures recorded: failed clients (`failed_clients`, every suite),
/// failed or sat-out connections (the file-server load's counts, a personality's connections with
/// an error). A macro so that migration 6 holds it as text, whatever its number becomes.
macro_rules! cell_state_backfill {
    ($which:literal) => {
        concat!(
            "
    UPDATE cells SET parts = 'clients', parts_ok = clients,
        parts_of = clients + json_array_length(metrics_json, '$.failed_clients')
    WHERE ", $which, " AND json_valid(metrics_json) AND json_array_length(metrics_json, '$.failed_clients') > 0;
    UPDATE cells SET parts = 'connections', parts_ok = json_extract(metrics_json, '$.connections_ok'),
        parts_of = json_extract(metrics_json, '$.connections_ok') + json_extract(metrics_json, '$.connections_failed')
            + json_extract(metrics_json, '$.connections_skipped')
    WHERE ", $which, " AND json_valid(metrics_json) AND json_type(metrics_json, '$.connections_ok') = 'integer'
        AND json_extract(metrics_json, '$.connections_failed') + json_extract(metrics_json, '$.connections_skipped') > 0;
    UPDATE cells SET parts = 'connections',
        parts_ok = (SELECT COUNT(*) FROM json_each(cells.clients_json) WHERE json_extract(value, '$.error') IS NULL),
        parts_of = json_array_length(clients_json)
    WHERE ", $which, " AND json_valid(clients_json) AND json_valid(metrics_json)
        AND json_type(metrics_json, '$.personality') = 'text'
        AND (SELECT COUNT(*) FROM json_each(cells.clients_json) WHERE json_extract(value, '$.error') IS NOT NULL) > 0;
    UPDATE cells SET state = CASE WHEN parts_ok = 0 THEN 'failed' ELSE 'partial' END
    WHERE ", $which, " AND parts_of > parts_ok;"
        )
    };
}

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
    // 6: each cell's state (complete, partial, failed) and its counts: how many of its parts (clients,
    // or connections) finished it. Cells stored before get theirs from what their figures recorded.
    concat!(
        "ALTER TABLE cells ADD COLUMN state TEXT NOT NULL DEFAULT 'complete';
        ALTER TABLE cells ADD COLUMN parts_ok INTEGER;
        ALTER TABLE cells ADD COLUMN parts_of INTEGER;
        ALTER TABLE cells ADD COLUMN parts TEXT;",
        cell_state_backfill!("1")
    ),
    // 7: run ids are never given twice. SQLite gives a new row the highest id + 1, so the id of the
    // newest run, once removed (a study step cut short and run again), would be given again and
    // name another run. The highest id ever given is kept here, raised by every insert, and a new
    // run takes the next one ([`NEXT_RUN_ID`]).
    "CREATE TABLE run_id_high_water (id INTEGER NOT NULL);
    INSERT INTO run_id_high_water (id) SELECT COALESCE(MAX(id), 0) FROM runs;
    CREATE TRIGGER runs_raise_id_high_water AFTER INSERT ON runs
    BEGIN
        UPDATE run_id_high_water SET id = NEW.id WHERE id < NEW.id;
    END;",
    // 8: a study owns its runs by id, not by their labels (which a user or a merged database can
    // carry): each run a study's step started, with the step (seq) and its key, written by the run
    // itself when it begins, proven by the hash of a nonce only the study's process holds.
    "ALTER TABLE studies ADD COLUMN nonce_sha256 TEXT;
    CREATE TABLE study_runs (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        key TEXT NOT NULL
    );
    CREATE INDEX study_runs_by_step ON study_runs (study_id, seq);",
    // 9: the score a study draws over its steps (its file's `score`), stored when the study finishes
    // (and when it is resumed to the end): one row a configuration, in the file's order, as the
    // JSON the study wrote, so `study show` shows what was drawn then, not a figure computed again
    // from runs that may since be gone.
    "CREATE TABLE study_scores (
        study_id INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        seq INTEGER NOT NULL,
        config TEXT NOT NULL,
        score_json TEXT NOT NULL,
        stored_at_ms INTEGER NOT NULL,
        PRIMARY KEY (study_id, kind, seq)
    );",
];

/// The backfill of migration 6 for the cells of one run (`?1`: its id), for `db merge` from a
/// database older than version 6: statements separated by `;`.
pub const CELL_STATE_BACKFILL_OF_RUN: &str = cell_state_backfill!("run_id = ?1");

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CellStateKind, Store};

    /// A database as iomatrix wrote it before cells had states (schema version 5): an IOzone run
    /// whose second client failed a cell (`--on-client-error continue`), a file-server run whose
    /// write phase lost every connection to ENOSPC, a personality phase with one connection of two
    /// failed, and a cell that was whole.
    fn version_5(path: &std::path::Path) {
        let conn = Connection::open(path).unwrap();
        for sql in &MIGRATIONS[..5] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 5").unwrap();
        for (id, suite) in [(1, "iozone"), (2, "fileserver"), (3, "personality")] {
            conn.execute(
                "INSERT INTO runs (id, suite, status, started_at_ms, command_line, iomatrix_version, plan_json,
                                   environment_json, conditions_json, total_cells, host, pid, uid)
                 VALUES (?1, ?2, 'complete', 1000, 'iomatrix run', '0.1.0', '{}', '{}', '{}', 2, 'old', 1, ?1)",
                rusqlite::params![id, suite],
            )
            .unwrap();
        }
        let cell = |run: i64, seq: i64, clients: i64, metrics: &str, figures: &str| {
            conn.execute(
                "INSERT INTO cells VALUES (?1, ?2, 'write', 65536, 4096, 'psync', 0, ?3, 65536, 16, 1000, 1, 1, 64.0,
                                           1.0, ?4, ?5)",
                rusqlite::params![run, seq, clients, metrics, figures],
            )
            .unwrap();
        };
        cell(1, 0, 1, r#"{"failed_clients": [{"rank": 1, "message": "EISDIR", "stopped": false}]}"#, "[]");
        cell(1, 1, 2, r#"{"failed_clients": []}"#, "[]");
        cell(2, 0, 4, r#"{"connections_ok": 0, "connections_failed": 4, "connections_skipped": 0}"#, "[]");
        cell(2, 1, 4, r#"{"connections_ok": 0, "connections_failed": 0, "connections_skipped": 4}"#, "[]");
        cell(
            3,
            0,
            2,
            r#"{"personality": "p", "connections_failed": 1}"#,
            r#"[{"rank": 0}, {"rank": 1, "error": {"message": "ENOSPC"}}]"#,
        );
    }

    fn states(store: &Store, run: i64) -> Vec<(CellStateKind, u64, u64, String)> {
        let run = store.load_run(run).unwrap().unwrap();
        run.cell_results.iter().map(|c| (c.state.kind, c.state.ok, c.state.of, c.state.parts.clone())).collect()
    }

    #[test]
    fn cells_stored_before_states_get_the_state_their_figures_recorded_migrated_or_merged() {
        use CellStateKind::*;
        let dir = tempfile::tempdir().unwrap();
        let (old, migrated, here) = (dir.path().join("old.db"), dir.path().join("m.db"), dir.path().join("here.db"));
        version_5(&old);
        std::fs::copy(&old, &migrated).unwrap();
        let expect = |store: &Store, ids: [i64; 3]| {
            assert_eq!(
                states(store, ids[0]),
                [(Partial, 1, 2, "clients".to_string()), (Complete, 2, 2, "clients".to_string())]
            );
            assert_eq!(
                states(store, ids[1]),
                [(Failed, 0, 4, "connections".to_string()), (Failed, 0, 4, "connections".to_string())]
            );
            assert_eq!(states(store, ids[2]), [(Partial, 1, 2, "connections".to_string())]);
        };
        let store = Store::open(&migrated).unwrap();
        expect(&store, [1, 2, 3]);
        drop(store);
        let store = Store::open(&here).unwrap();
        let report = store.merge_from(&old, crate::MergeMode::Copy).unwrap();
        let ids: Vec<i64> = report.merged.iter().map(|m| m.here).collect();
        expect(&store, [ids[0], ids[1], ids[2]]);
    }

    /// A database as iomatrix wrote it before study scores were stored (schema version 8): a
    /// finished study opens, has no stored score, and takes one.
    #[test]
    fn a_study_stored_before_scores_opens_without_one_and_takes_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v8.db");
        let conn = Connection::open(&path).unwrap();
        for sql in &MIGRATIONS[..8] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "PRAGMA user_version = 8;
             INSERT INTO studies (id, name, scale, file_path, file_text, status, started_at_ms, host, pid)
             VALUES (4, 'io500', 'small', '/io500.toml', 'score = \"io500\"', 'complete', 1000, 'old', 1);",
        )
        .unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.load_study(4).unwrap().unwrap().name, "io500");
        assert!(store.study_scores(4, "io500").unwrap().is_empty(), "an older study has no stored score");
        store.store_study_scores(4, "io500", &[("c".into(), "{}".into())]).unwrap();
        assert_eq!(store.study_scores(4, "io500").unwrap().len(), 1);
        assert_eq!(crate::schema_version_of(&path).unwrap(), known_version());
    }
}
