//! The gate on a real database file: a refused cell or run leaves nothing behind, and the run's
//! recorded CPUs bound its cells' %CPU.

use iomatrix_store::{CellRow, NewRun, RunStatus, Store, StoreError};
use serde_json::json;

fn new_run(environment: serde_json::Value) -> NewRun {
    NewRun {
        suite: "iozone".into(),
        command_line: "iomatrix run iozone --files 64k".into(),
        labels: vec![("fs".into(), "ext4".into())],
        plan: json!({}),
        environment,
        conditions: json!({}),
        total_cells: 2,
    }
}

fn cell(seq: usize, cpu_percent: f64) -> CellRow {
    CellRow {
        seq,
        test: "read".into(),
        file_size: Some(4 << 20),
        record_size: Some(4096),
        backend: "psync".into(),
        direct: false,
        clients: 4,
        bytes: 16 << 20,
        ops: 4096,
        wall_ns: 1_000_000,
        user_ns: 0,
        sys_ns: 3_360_000,
        kib_per_sec: 16_000_000.0,
        cpu_percent: Some(cpu_percent),
        metrics: json!({"kib_per_sec_overall": 16_000_000.0}),
        client_figures: json!([]),
        state: Default::default(),
        blobs: Vec::new(),
    }
}

#[test]
fn a_cell_above_the_runs_cpus_is_refused_and_nothing_of_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let id = store.begin_run(&new_run(json!({"cpu_count": 2}))).unwrap();
    store.add_cell(id, &cell(0, 150.0)).unwrap();
    let e = store.add_cell(id, &cell(1, 336.0)).unwrap_err();
    let StoreError::Refused { refused, .. } = &e else { panic!("{e}") };
    assert_eq!((refused.figure.as_str(), refused.value.as_str()), ("cpu_percent", "336"));
    assert!(e.to_string().contains("cell 1 (read, file 4194304 bytes, record 4096 bytes)"), "{e}");
    assert!(e.to_string().contains("at most 200% (100 x the run's 2 CPUs)"), "{e}");
    store.finish_run(id, RunStatus::Failed, Some(&e.to_string())).unwrap();
    let run = store.load_run(id).unwrap().unwrap();
    assert_eq!(run.cell_results.len(), 1, "the refused cell is not stored");
    // A run that records no CPUs (a published figure) gets the bound that needs none.
    let id = store.begin_run(&new_run(json!({}))).unwrap();
    store.add_cell(id, &cell(0, 336.0)).unwrap();
}

#[test]
fn a_refused_import_or_run_start_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let bad = CellRow { kib_per_sec: -956380.0, ..cell(1, 10.0) };
    let e = store.store_finished_run(&new_run(json!({})), "old-box", &[cell(0, 10.0), bad]).unwrap_err();
    assert!(matches!(e, StoreError::Refused { .. }), "{e}");
    let e = store.store_finished_run(&new_run(json!({})), &"m".repeat(200_000), &[cell(0, 10.0)]).unwrap_err();
    assert!(e.to_string().contains("machine name"), "{e}");
    let labelled = NewRun { labels: vec![("x".into(), "1\n    9  fake row".into())], ..new_run(json!({})) };
    assert!(matches!(store.begin_run(&labelled).unwrap_err(), StoreError::Refused { .. }));
    assert!(store.list_runs().unwrap().is_empty(), "no run, no cell");
}

#[test]
fn an_unknown_cpu_figure_reads_back_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let unknown = CellRow { cpu_percent: None, metrics: json!({"not_in_source": ["cpu"]}), ..cell(0, 0.0) };
    let id = store.store_finished_run(&new_run(json!({})), "unknown", &[unknown.clone(), cell(1, 12.5)]).unwrap();
    let run = store.load_run(id).unwrap().unwrap();
    assert_eq!(run.cell_results[0], unknown);
    assert_eq!(run.cell_results[1].cpu_percent, Some(12.5));
    assert!(serde_json::to_value(&run.cell_results[0]).unwrap()["cpu_percent"].is_null());
}
