use iomatrix_store::{CellRow, NewRun, RunStatus, Store};
use serde_json::json;

fn new_run(total: usize) -> NewRun {
    NewRun {
        suite: "iozone".into(),
        command_line: "iomatrix run iozone --files 64k".into(),
        labels: vec![("server".into(), "netware".into()), ("cache".into(), "on".into())],
        plan: json!({"file_sizes": [65536]}),
        environment: json!({"host": "h", "target": {"fs_type": "tmpfs"}}),
        conditions: json!({"backend": "psync", "direct": false}),
        total_cells: total,
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
        metrics: json!({"kib_per_sec_overall": 64000.5}),
        client_figures: json!([{"rank": 0}]),
        state: Default::default(),
        blobs: vec![("latency.read".into(), one_latency(seq as u64 + 1))],
    }
}

/// A histogram of one latency of `ns`, as a run stores it: each cell's its own.
fn one_latency(ns: u64) -> Vec<u8> {
    let mut latency = iomatrix_stats::Latency::new();
    latency.record(ns);
    latency.to_bytes()
}

#[test]
fn a_run_round_trips_with_labels_and_cells() {
    let dir = tempfile::tempdir().unwrap();
    // The store makes no folder (the binary makes only its default one).
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let path = dir.path().join("sub/results.sqlite");
    let store = Store::open(&path).unwrap();
    let id = store.begin_run(&new_run(2)).unwrap();
    store.add_cell(id, &cell(0)).unwrap();
    store.add_cell(id, &cell(1)).unwrap();
    store.finish_run(id, RunStatus::Complete, None).unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Complete);
    assert_eq!(runs[0].cells, 2);
    assert_eq!(runs[0].labels, [("cache".to_string(), "on".to_string()), ("server".into(), "netware".into())]);
    let run = store.load_run(id).unwrap().unwrap();
    assert_eq!(run.cell_results, [cell(0), cell(1)]);
    assert_eq!(run.records().conditions["backend"], "psync");
    assert_eq!(run.records().environment["target"]["fs_type"], "tmpfs");
    assert!(run.summary.ended_at.is_some());
    assert!(store.load_run(id + 1).unwrap().is_none());
}

#[test]
fn a_run_whose_process_is_gone_becomes_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let store = Store::open(&path).unwrap();
    let id = store.begin_run(&new_run(3)).unwrap();
    store.add_cell(id, &cell(0)).unwrap();
    // Our own process is alive: still running.
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list_runs().unwrap()[0].status, RunStatus::Running);
    // Pretend the run belonged to a process that no longer exists.
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE runs SET pid = 999999999 WHERE id = ?1", [id]).unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let run = &store.list_runs().unwrap()[0];
    assert_eq!(run.status, RunStatus::Incomplete);
    assert_eq!(run.cells, 1);
    assert!(run.error.as_deref().unwrap().contains("killed or crashed"));
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.sqlite");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(conn);
    let err = Store::open(&path).err().unwrap().to_string();
    assert!(err.contains("schema version 99 is newer"), "{err}");
}

#[test]
fn a_finished_run_is_stored_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("imp.sqlite")).unwrap();
    let id = store.store_finished_run(&new_run(2), "lab-7", &[cell(0), cell(1)]).unwrap();
    let run = store.load_run(id).unwrap().unwrap();
    assert_eq!(run.summary.status, RunStatus::Complete);
    assert_eq!(run.summary.host, "lab-7");
    assert_eq!(run.summary.labels.len(), 2);
    assert_eq!(run.cell_results, [cell(0), cell(1)]);
    assert!(run.summary.ended_at.is_some());
    // A cell that cannot be stored (a second cell 0) leaves no run, label or cell behind.
    let err = store.store_finished_run(&new_run(2), "lab-7", &[cell(0), cell(0)]).unwrap_err();
    assert!(err.to_string().contains("cannot store a cell"), "{err}");
    assert_eq!(store.list_runs().unwrap().len(), 1);
}

#[test]
fn a_cell_state_and_its_counts_round_trip() {
    use iomatrix_store::{CellState, CellStateKind};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let id = store.begin_run(&new_run(3)).unwrap();
    let states = [CellState::counted(3, 4, "connections"), CellState::counted(0, 2, "clients"), CellState::complete(2)];
    for (seq, state) in states.iter().enumerate() {
        // A failed cell carries no figure (the gate refuses one that does), nor a CPU figure.
        let figure = if state.kind == CellStateKind::Failed { 0.0 } else { cell(seq).kib_per_sec };
        store.add_cell(id, &CellRow { state: state.clone(), kib_per_sec: figure, ..cell(seq) }).unwrap();
    }
    let run = store.load_run(id).unwrap().unwrap();
    let kinds: Vec<CellStateKind> = run.cell_results.iter().map(|c| c.state.kind).collect();
    assert_eq!(kinds, [CellStateKind::Partial, CellStateKind::Failed, CellStateKind::Complete]);
    let read: Vec<CellState> = run.cell_results.iter().map(|c| c.state.clone()).collect();
    assert_eq!(read, states);
    assert_eq!(read[0].describe(), "partial: 3 of 4 connections");
    assert_eq!(read[1].describe(), "failed: 0 of 2 clients");
    assert_eq!(run.cell_results[1].cpu_percent, None, "a failed cell reads back with no CPU figure");
    let json = serde_json::to_value(&run.cell_results[0]).unwrap();
    assert_eq!(json["state"], json!({"kind": "partial", "ok": 3, "of": 4, "parts": "connections"}));
}

#[test]
fn a_disturbed_cell_keeps_its_figure_and_its_cause_through_the_store_and_the_runs_count_it() {
    use iomatrix_store::{CellState, CellStateKind};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.sqlite")).unwrap();
    let id = store.begin_run(&new_run(2)).unwrap();
    let stopped = CellState::complete(1).disturbed("the process was stopped for 20 s".into());
    store.add_cell(id, &CellRow { state: stopped.clone(), ..cell(0) }).unwrap();
    store.add_cell(id, &cell(1)).unwrap();
    let run = store.load_run(id).unwrap().unwrap();
    assert_eq!(run.cell_results[0].state, stopped, "kind and cause read back");
    assert_eq!(run.cell_results[0].kib_per_sec, cell(0).kib_per_sec, "its figure is kept");
    assert_eq!(run.cell_results[0].metrics["disturbed"]["cause"], "the process was stopped for 20 s");
    assert_eq!(run.cell_results[1].state.kind, CellStateKind::Complete);
    let json = serde_json::to_value(&run.cell_results[0]).unwrap();
    assert_eq!(
        json["state"],
        json!({"kind": "disturbed", "ok": 1, "of": 1, "parts": "clients", "cause": "the process was stopped for 20 s"})
    );
    assert_eq!(store.list_runs().unwrap()[0].disturbed_cells, 1);
    // A database written by an iomatrix with a state this one does not know reads it as failed.
    assert_eq!(CellStateKind::parse("disturbed"), CellStateKind::Disturbed);
    assert_eq!(CellStateKind::parse("stalled"), CellStateKind::Failed);
}

#[test]
fn a_provisional_failure_never_overwrites_a_stored_end() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("results.sqlite")).unwrap();
    let running = store.begin_run(&new_run(1)).unwrap();
    assert!(store.fail_if_running(running, "ended by SIGTERM").unwrap(), "a running run is failed");
    let ended = store.begin_run(&new_run(1)).unwrap();
    store.finish_run(ended, RunStatus::Interrupted, Some("interrupted by SIGINT")).unwrap();
    assert!(!store.fail_if_running(ended, "ended by SIGTERM").unwrap(), "a stored end stands");
    let runs = store.list_runs().unwrap();
    assert_eq!((runs[0].status, runs[0].error.as_deref()), (RunStatus::Failed, Some("ended by SIGTERM")));
    assert_eq!((runs[1].status, runs[1].error.as_deref()), (RunStatus::Interrupted, Some("interrupted by SIGINT")));
}

#[test]
fn a_run_is_found_by_a_word_of_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("results.sqlite")).unwrap();
    let launched = |id: &str| NewRun { environment: json!({"host": "h", "launch_id": id}), ..new_run(1) };
    let first = store.begin_run(&launched("1f-2a")).unwrap();
    store.begin_run(&new_run(1)).unwrap();
    let other = store.begin_run(&launched("3c-4d")).unwrap();
    assert_eq!(store.find_run_by_environment("launch_id", "1f-2a").unwrap().map(|r| r.id), Some(first));
    assert_eq!(store.find_run_by_environment("launch_id", "3c-4d").unwrap().map(|r| r.id), Some(other));
    assert!(store.find_run_by_environment("launch_id", "5e").unwrap().is_none());
}
