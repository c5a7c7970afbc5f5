//! One database shared: first use by many at once, damage, backup, merge.

use iomatrix_store::{CellRow, NewRun, Store, StoreError};
use serde_json::json;
use std::path::Path;

fn new_run(label: &str) -> NewRun {
    NewRun {
        suite: "iozone".into(),
        command_line: "iomatrix run iozone".into(),
        labels: vec![("who".into(), label.into())],
        plan: json!({}),
        environment: json!({"host": "h"}),
        conditions: json!({}),
        total_cells: 1,
    }
}

fn cell(seq: usize) -> CellRow {
    CellRow {
        seq,
        test: "write".into(),
        file_size: Some(65536),
        record_size: Some(4096),
        backend: "psync".into(),
        direct: false,
        clients: 1,
        bytes: 65536,
        ops: 16,
        wall_ns: 1_000_000,
        user_ns: 10,
        sys_ns: 20,
        kib_per_sec: 64000.5,
        cpu_percent: Some(3.25),
        metrics: json!({}),
        client_figures: json!([]),
        state: Default::default(),
        // A real histogram: `check` decodes every one.
        blobs: vec![("latency.write".into(), iomatrix_stats::Latency::new().to_bytes())],
    }
}

fn integrity(path: &Path) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

/// Every connection opens a database that does not exist yet at the same moment: each one's run
/// is stored (the migrations ran once, under one lock).
#[test]
fn many_first_opens_at_once_all_store_their_run() {
    const THREADS: usize = 8;
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let barrier = std::sync::Barrier::new(THREADS);
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (db, barrier) = (&db, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let store = Store::open(db).unwrap_or_else(|e| panic!("round {round} thread {t}: {e}"));
                    let id = store.begin_run(&new_run(&t.to_string())).unwrap();
                    store.add_cell(id, &cell(0)).unwrap();
                    store.finish_run(id, iomatrix_store::RunStatus::Complete, None).unwrap();
                });
            }
        });
        let store = Store::open(&db).unwrap();
        assert_eq!(store.list_runs().unwrap().len(), THREADS, "round {round}");
        drop(store);
        assert_eq!(integrity(&db), "ok");
    }
}

fn db_with_runs(path: &Path, n: usize) -> Vec<i64> {
    let store = Store::open(path).unwrap();
    (0..n)
        .map(|i| {
            let id = store.begin_run(&new_run(&format!("run{i}"))).unwrap();
            store.add_cell(id, &cell(0)).unwrap();
            store.record_lost(id, &json!({"cells_not_stored": 0})).unwrap();
            store.finish_run(id, iomatrix_store::RunStatus::Complete, None).unwrap();
            id
        })
        .collect()
}

#[test]
fn merging_twice_is_merging_once_and_keeps_the_origin() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    db_with_runs(&here, 1);
    db_with_runs(&there, 2);
    let store = Store::open(&here).unwrap();
    let first = store.merge_from(&there, iomatrix_store::MergeMode::Copy).unwrap();
    assert_eq!(first.merged.len(), 2);
    assert_eq!(first.already_here, 0);
    let again = store.merge_from(&there, iomatrix_store::MergeMode::Copy).unwrap();
    assert!(again.merged.is_empty());
    assert_eq!(again.already_here, 2);
    assert_eq!(store.list_runs().unwrap().len(), 3);

    let iomatrix_store::MergedRun { there: old_id, here: new_id } = first.merged[1];
    let copied = store.load_run(new_id).unwrap().unwrap();
    let original = Store::open(&there).unwrap().load_run(old_id).unwrap().unwrap();
    assert_eq!(copied.cell_results, original.cell_results);
    assert_eq!(copied.summary.labels, original.summary.labels);
    assert_eq!(copied.lost_facts(), original.lost_facts());
    assert_eq!(copied.records().environment, original.records().environment);
    assert_eq!(copied.uid, original.uid);
    let origin = copied.origin_facts().expect("a merged run has an origin");
    assert_eq!(origin.run_id, Some(old_id));
    assert_eq!(origin.file, Some(std::fs::canonicalize(&there).unwrap().display().to_string()));
    let blobs: i64 = rusqlite::Connection::open(&here)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM cell_blobs WHERE run_id = ?1", [new_id], |r| r.get(0))
        .unwrap();
    assert_eq!(blobs, 1);

    // A database merged on from a third: the runs keep their first origin, and stay single.
    let third = dir.path().join("third.db");
    let store3 = Store::open(&third).unwrap();
    assert_eq!(store3.merge_from(&here, iomatrix_store::MergeMode::Copy).unwrap().merged.len(), 3);
    assert_eq!(store3.merge_from(&there, iomatrix_store::MergeMode::Copy).unwrap().already_here, 2);
    let run = store3.load_run(store3.list_runs().unwrap()[2].id).unwrap().unwrap();
    assert_eq!(run.origin_facts().unwrap().file, Some(std::fs::canonicalize(&there).unwrap().display().to_string()));
}

#[test]
fn a_newer_schema_is_not_merged() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    db_with_runs(&there, 1);
    rusqlite::Connection::open(&there).unwrap().execute_batch("PRAGMA user_version = 999").unwrap();
    let store = Store::open(&here).unwrap();
    let err = store.merge_from(&there, iomatrix_store::MergeMode::Copy).unwrap_err().to_string();
    assert!(err.contains("schema version 999 is newer"), "{err}");
    assert!(store.list_runs().unwrap().is_empty());
}

/// The page a table's rows start at, read before the damage.
fn root_page(path: &Path, table: &str) -> (u64, u64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let page: i64 =
        conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0)).unwrap();
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    (page as u64, size as u64)
}

/// Overwrites the b-tree header of `table`'s root page (not the file's header) with garbage.
fn damage(path: &Path, table: &str) {
    use std::io::{Seek, SeekFrom, Write};
    let (page, size) = root_page(path, table);
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
    f.write_all(&[0x55; 12]).unwrap();
}

#[test]
fn a_damaged_database_is_named_and_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    db_with_runs(&db, 2);
    damage(&db, "cells");
    assert_ne!(integrity(&db), "ok");
    let before = std::fs::read(&db).unwrap();

    // Checked before writing: refused at open.
    match Store::open_for_writing(&db) {
        Err(StoreError::Damaged { path, .. }) => assert_eq!(path, db),
        Err(e) => panic!("not named as damage: {e}"),
        Ok(_) => panic!("a damaged database opened for writing"),
    }
    // Opened unchecked, the first query that meets the damage says so; later writes are refused.
    let store = Store::open(&db).unwrap();
    let err = store.load_run(1).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("iomatrix db check"), "{err}");
    assert!(store.is_damaged());
    let err = store.finish_run(1, iomatrix_store::RunStatus::Failed, Some("x")).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("malformed") && err.to_string().contains("cannot finish the run"), "{err}");
    drop(store);
    assert_eq!(std::fs::read(&db).unwrap(), before, "the damaged file was written");

    let report = iomatrix_store::check(&db).unwrap();
    assert!(!report.sound());
    assert_eq!(report.schema_version, Some(report.known_version));
}

#[test]
fn a_backup_while_a_run_writes_is_sound() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("b.db");
    db_with_runs(&db, 1);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let store = Store::open(&db).unwrap();
            let id = store.begin_run(&new_run("writer")).unwrap();
            for seq in 0..2000 {
                store.add_cell(id, &cell(seq)).unwrap();
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
            }
        });
        for i in 0..5 {
            let copy = dir.path().join(format!("copy{i}.db"));
            let report = iomatrix_store::backup(&db, &copy).unwrap();
            assert!(report.problems.is_empty(), "{:?}", report.problems);
            assert_eq!(integrity(&copy), "ok");
            let check = iomatrix_store::check(&copy).unwrap();
            assert!(check.sound() && check.runs.unwrap() >= 1, "{check:?}");
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let err = iomatrix_store::backup(&db, &dir.path().join("copy0.db")).unwrap_err().to_string();
    assert!(err.contains("cannot put the copy in place"), "{err}");
}
