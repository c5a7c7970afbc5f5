//! The database's edges: run ids never given twice, a file moved or replaced while written,
//! figures that cannot be read back, a damaged database merged from, a missing folder.

use iomatrix_store::{CellRow, NewRun, RunStatus, Store, StoreError};
use serde_json::json;
use std::path::Path;

fn new_run() -> NewRun {
    NewRun {
        suite: "iozone".into(),
        command_line: "iomatrix run iozone".into(),
        labels: vec![],
        plan: json!({}),
        environment: json!({}),
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
        metrics: json!({"repeat": 1}),
        client_figures: json!([]),
        state: Default::default(),
        blobs: vec![("latency.write".into(), iomatrix_stats::Latency::new().to_bytes())],
    }
}

fn sql(db: &Path, statement: &str) {
    rusqlite::Connection::open(db).unwrap().execute_batch(statement).unwrap();
}

#[test]
fn a_removed_runs_id_is_never_given_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ids.db");
    let store = Store::open(&db).unwrap();
    let first = store.begin_run(&new_run()).unwrap();
    let second = store.begin_run(&new_run()).unwrap();
    store.delete_run(second).unwrap();
    let third = store.begin_run(&new_run()).unwrap();
    assert!(third > second, "run #{second} was removed and its id given again");
    store.delete_run(third).unwrap();
    let imported = store.store_finished_run(&new_run(), "h", &[cell(0)]).unwrap();
    assert!(imported > third, "an imported run took the removed run #{third}'s id");

    // A merged run too, and in a database opened again.
    drop(store);
    let other = dir.path().join("other.db");
    let there = Store::open(&other).unwrap();
    let id = there.begin_run(&new_run()).unwrap();
    there.finish_run(id, RunStatus::Complete, None).unwrap();
    drop(there);
    let store = Store::open(&db).unwrap();
    store.delete_run(imported).unwrap();
    let merged = store.merge_from(&other, iomatrix_store::MergeMode::Copy).unwrap();
    assert!(merged.merged[0].here > imported, "{:?}", merged.merged);
    let ids: Vec<i64> = store.list_runs().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![first, merged.merged[0].here]);
}

#[test]
fn a_database_moved_away_while_written_refuses_the_next_commit_and_keeps_what_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("moved.db");
    let kept = dir.path().join("kept.db");
    let store = Store::open_for_writing(&db).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    store.add_cell(id, &cell(0)).unwrap();
    std::fs::rename(&db, &kept).unwrap();
    let err = store.add_cell(id, &cell(1)).unwrap_err();
    assert!(matches!(err, StoreError::Replaced { .. }), "{err}");
    assert!(err.to_string().contains("nothing is at the path any more"), "{err}");
    let err = store.finish_run(id, RunStatus::Complete, None).unwrap_err();
    assert!(matches!(err, StoreError::Replaced { .. }), "{err}");
    drop(store);
    // The file moved away holds the run and its first cell (its -wal folded into it), nothing more.
    let moved = Store::open(&kept).unwrap();
    let run = moved.load_run(id).unwrap().expect("the run in the moved file");
    assert_eq!(run.cell_results.len(), 1);
    assert!(iomatrix_store::check(&kept).unwrap().sound());
}

#[test]
fn a_database_replaced_while_written_is_not_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("replaced.db");
    let other = dir.path().join("other.db");
    let there = Store::open(&other).unwrap();
    let theirs = there.store_finished_run(&new_run(), "elsewhere", &[cell(0), cell(1)]).unwrap();
    drop(there);
    let store = Store::open_for_writing(&db).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    store.add_cell(id, &cell(0)).unwrap();
    std::fs::rename(&other, &db).unwrap();
    let err = store.add_cell(id, &cell(1)).unwrap_err();
    assert!(err.to_string().contains("the path now names another file"), "{err}");
    drop(store);
    // The file now at the path is the other database, whole, with none of this run's pages.
    let now = Store::open(&db).unwrap();
    let runs = now.list_runs().unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0].id, runs[0].host.as_str(), runs[0].cells), (theirs, "elsewhere", 2));
    assert!(iomatrix_store::check(&db).unwrap().sound());
}

#[test]
fn figures_that_cannot_be_read_back_are_named_never_null() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("figures.db");
    let store = Store::open(&db).unwrap();
    let id = store.store_finished_run(&new_run(), "h", &[cell(0), cell(1)]).unwrap();
    drop(store);
    assert!(iomatrix_store::check(&db).unwrap().sound());
    sql(&db, "UPDATE cells SET metrics_json = '{\"kib_per' WHERE seq = 1");
    sql(&db, "UPDATE cells SET clients_json = x'00ff' WHERE seq = 0");
    sql(&db, "UPDATE cell_blobs SET data = x'1c84930300' WHERE seq = 0");
    sql(&db, "UPDATE runs SET conditions_json = 'not json'");

    let store = Store::open(&db).unwrap();
    let err = store.load_run(id).unwrap_err();
    assert!(matches!(err, StoreError::Unreadable { .. }), "{err}");
    assert!(err.to_string().contains("conditions_json") && err.to_string().contains("(and 3 more)"), "{err}");
    let (run, unreadable) = store.load_run_as_stored(id).unwrap().unwrap();
    let named: Vec<(Option<usize>, &str)> = unreadable.iter().map(|u| (u.cell, u.column.as_str())).collect();
    assert_eq!(
        named,
        vec![
            (None, "conditions_json"),
            (Some(0), "clients_json"),
            (Some(1), "metrics_json"),
            (Some(0), "cell_blobs latency.write")
        ]
    );
    assert!(run.cell_results[1].metrics.is_null() && run.cell_results[0].blobs.is_empty());
    assert_eq!(run.cell_results[1].blobs.len(), 1, "a sound histogram is kept");

    let report = iomatrix_store::check(&db).unwrap();
    assert!(report.problems.is_empty(), "{report:?}");
    assert!(!report.sound());
    assert_eq!(report.unreadable_count, 4);
    assert!(report.unreadable.iter().any(|u| u.cell == Some(1) && u.column == "metrics_json"), "{report:?}");
}

#[test]
fn a_damaged_database_merged_from_is_named_not_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    let store = Store::open(&there).unwrap();
    for _ in 0..3 {
        store.store_finished_run(&new_run(), "h", &[cell(0)]).unwrap();
    }
    drop(store);
    // The cells table's root page overwritten: the runs read, the first copy of cells fails.
    let (page, size) = {
        let conn = rusqlite::Connection::open(&there).unwrap();
        let page: i64 =
            conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = 'cells'", [], |r| r.get(0)).unwrap();
        (page as u64, conn.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0)).unwrap() as u64)
    };
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&there).unwrap();
        f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
        f.write_all(&[0x55; 12]).unwrap();
    }
    assert!(!iomatrix_store::quick_check(&there).unwrap().is_empty());

    let store = Store::open_for_writing(&here).unwrap();
    match store.merge_from(&there, iomatrix_store::MergeMode::Copy) {
        Err(StoreError::Damaged { path, .. }) => assert_eq!(path, there),
        Err(e) => panic!("not named as the source's damage: {e}"),
        Ok(r) => panic!("a damaged database merged: {r:?}"),
    }
    drop(store);
    assert!(iomatrix_store::check(&here).unwrap().sound());
    assert!(Store::open(&here).unwrap().list_runs().unwrap().is_empty());
}

#[test]
fn a_missing_folder_is_never_made() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("no/such/folder/x.db");
    for open in [Store::open, Store::open_for_writing] {
        let err = open(&db).err().expect("opened in a folder that does not exist");
        assert!(err.to_string().contains("does not exist"), "{err}");
    }
    assert!(!dir.path().join("no").exists());
}

#[test]
fn a_merged_run_passes_the_gate_whole_or_is_refused_whole() {
    use iomatrix_store::MergeMode;
    let dir = tempfile::tempdir().unwrap();
    let (there, here) = (dir.path().join("there.db"), dir.path().join("here.db"));
    {
        let store = Store::open(&there).unwrap();
        for _ in 0..3 {
            store.store_finished_run(&new_run(), "h", &[cell(0), cell(1)]).unwrap();
        }
    }
    // Run 2's second cell: a throughput past every machine's, written behind the store's back.
    sql(&there, "UPDATE cells SET kib_per_sec = 1e23 WHERE run_id = 2 AND seq = 1");
    let store = Store::open(&here).unwrap();
    let checked = store.merge_from(&there, MergeMode::CheckOnly).unwrap();
    assert_eq!(checked.merged.iter().map(|m| m.there).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(checked.refused.len(), 1);
    assert_eq!(checked.refused[0].there, 2);
    assert!(checked.refused[0].why.contains("cell 1 (write, file 65536 bytes, record 4096 bytes): kib_per_sec = 1e23"));
    assert!(store.list_runs().unwrap().is_empty(), "a check copies nothing");
    let merged = store.merge_from(&there, MergeMode::Copy).unwrap();
    assert_eq!(merged.merged.len(), 2);
    assert_eq!(merged.refused, checked.refused);
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 2, "the refused run left nothing behind, not even its first cell");
    for run in runs {
        assert_eq!(store.load_run(run.id).unwrap().unwrap().cell_results.len(), 2);
    }
}

#[test]
fn a_summarised_run_leaves_out_series_and_client_figures_and_still_names_what_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("summarised.db");
    let store = Store::open(&db).unwrap();
    let mut with_series = cell(0);
    // The top object's `series` goes; one inside another member is that member's own and stays.
    with_series.metrics = json!({"repeat": 1, "series": {"intervals": [1, 2, 3]}, "ops": {"series": {"count": 2}}});
    with_series.client_figures = json!([{"rank": 0}]);
    let id = store.store_finished_run(&new_run(), "h", &[with_series, cell(1), cell(2)]).unwrap();

    let whole = store.load_run(id).unwrap().unwrap();
    let summarised = store.load_run_summarised(id).unwrap().unwrap();
    assert_eq!(whole.cell_results[0].metrics["series"], json!({"intervals": [1, 2, 3]}));
    assert_eq!(whole.cell_results[0].client_figures, json!([{"rank": 0}]));
    assert_eq!(summarised.cell_results[0].metrics, json!({"repeat": 1, "ops": {"series": {"count": 2}}}));
    assert!(summarised.cell_results.iter().all(|c| c.client_figures.is_null()));
    for (w, s) in whole.cell_results.iter().zip(&summarised.cell_results) {
        assert_eq!((w.seq, &w.test, w.kib_per_sec, &w.blobs), (s.seq, &s.test, s.kib_per_sec, &s.blobs));
    }
    assert_eq!(summarised.cell_results[1].metrics, whole.cell_results[1].metrics, "no series: read as it is");
    drop(store);

    // Damage inside the series left out, or after the object, is still damage.
    sql(&db, "UPDATE cells SET metrics_json = '{\"repeat\": 1, \"series\": [1, 2' WHERE seq = 1");
    sql(&db, "UPDATE cells SET metrics_json = '{\"repeat\": 1} {}' WHERE seq = 2");
    let store = Store::open(&db).unwrap();
    let err = store.load_run_summarised(id).unwrap_err().to_string();
    assert!(err.contains("cell 1 (write), metrics_json") && err.contains("(and 1 more)"), "{err}");
}
