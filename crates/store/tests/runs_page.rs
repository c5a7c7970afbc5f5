//! `Store::list_runs_page`: each filter in SQL, paging, newest first, labels of a page.

use iomatrix_store::{
    parse_since, parse_until, CellRow, CellState, NewRun, Page, RunFilter, RunState, RunStatus, Store,
};
use serde_json::json;

fn new_run(suite: &str, labels: &[(&str, &str)], target: &str, fs: &str) -> NewRun {
    NewRun {
        suite: suite.into(),
        command_line: format!("iomatrix run {suite} {target} --Note-Here"),
        labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        plan: json!({}),
        environment: json!({"host": "h", "target": {"path": target, "fs_type": fs}}),
        conditions: json!({}),
        total_cells: 1,
    }
}

fn cell(state: CellState) -> CellRow {
    CellRow {
        seq: 0,
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
        client_figures: json!([{"rank": 0}]),
        state,
        blobs: vec![],
    }
}

/// Five runs, started a day apart from 2026-12-01 (run 1) to 2026-12-05 (run 5).
fn five_runs(dir: &std::path::Path) -> Store {
    let path = dir.join("r.sqlite");
    let store = Store::open(&path).unwrap();
    let runs = [
        new_run("iozone", &[("server", "a"), ("build", "1")], "/mnt/ext/one", "ext4"),
        new_run("access", &[("server", "b"), ("build", "1")], "/mnt/xfs/two", "xfs"),
        new_run("iozone", &[("server", "a"), ("build", "2")], "/mnt/ext/three", "ext4"),
        new_run("bonnie", &[("server", "b")], "/dev/shm/four", "tmpfs"),
        new_run("iozone", &[("server", "a"), ("build", "3")], "/mnt/ext/five", "ext4"),
    ];
    for (i, run) in runs.iter().enumerate() {
        let id = store.begin_run(run).unwrap();
        let state = if i == 2 { CellState::complete(1).disturbed("stopped".into()) } else { CellState::complete(1) };
        store.add_cell(id, &cell(state)).unwrap();
        let (status, error) =
            if i == 3 { (RunStatus::Failed, Some("Disk Full on target")) } else { (RunStatus::Complete, None) };
        store.finish_run(id, status, error).unwrap();
    }
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    // 2026-12-01T12:00:00Z + a day per run.
    conn.execute("UPDATE runs SET started_at_ms = 1796126400000 + (id - 1) * 86400000", []).unwrap();
    conn.execute("UPDATE runs SET host = 'other' WHERE id = 4", []).unwrap();
    drop(conn);
    Store::open(&path).unwrap()
}

fn ids(store: &Store, filter: &RunFilter) -> Vec<i64> {
    store.list_runs_page(filter, Page::new(1, 100).unwrap()).unwrap().runs.iter().map(|r| r.id).collect()
}

#[test]
fn each_filter_selects_its_runs_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = five_runs(dir.path());
    let all = RunFilter::default();
    assert_eq!(ids(&store, &all), [5, 4, 3, 2, 1]);
    let f = |edit: fn(&mut RunFilter)| {
        let mut filter = RunFilter::default();
        edit(&mut filter);
        ids(&store, &filter)
    };
    assert_eq!(f(|f| f.suite = Some("iozone".into())), [5, 3, 1]);
    assert_eq!(f(|f| f.labels = vec![("server".into(), "a".into())]), [5, 3, 1]);
    assert_eq!(f(|f| f.labels = vec![("server".into(), "a".into()), ("build".into(), "1".into())]), [1]);
    assert_eq!(f(|f| f.target = Some("/mnt/ext".into())), [5, 3, 1]);
    assert_eq!(f(|f| f.host = Some("other".into())), [4]);
    assert_eq!(f(|f| f.fs_type = Some("xfs".into())), [2]);
    assert_eq!(f(|f| f.state = Some(RunState::Status(RunStatus::Failed))), [4]);
    assert_eq!(f(|f| f.state = Some(RunState::Disturbed)), [3]);
    assert_eq!(f(|f| f.state = Some(RunState::Status(RunStatus::Complete))), [5, 3, 2, 1]);
    assert_eq!(f(|f| f.since_ms = Some(parse_since("2026-12-04").unwrap())), [5, 4]);
    assert_eq!(f(|f| f.until_ms = Some(parse_until("2026-12-02").unwrap())), [2, 1]);
    // Free text: any case, in the error, a label, the command line, the suite.
    assert_eq!(f(|f| f.search = Some("disk full".into())), [4]);
    assert_eq!(f(|f| f.search = Some("BUILD=2".into())), [3]);
    assert_eq!(f(|f| f.search = Some("note-here".into())), [5, 4, 3, 2, 1]);
    assert_eq!(f(|f| f.search = Some("Bonn".into())), [4]);
}

#[test]
fn a_filter_that_matches_nothing_is_an_empty_first_page() {
    let dir = tempfile::tempdir().unwrap();
    let store = five_runs(dir.path());
    let filter = RunFilter { suite: Some("iozone".into()), fs_type: Some("xfs".into()), ..RunFilter::default() };
    let page = store.list_runs_page(&filter, Page::new(1, 10).unwrap()).unwrap();
    assert_eq!((page.total, page.runs.len(), page.pages(), page.first(), page.last()), (0, 0, 1, 0, 0));
    // Text with SQL's own characters is text.
    let filter = RunFilter { search: Some("' OR 1=1 --".into()), ..RunFilter::default() };
    assert_eq!(ids(&store, &filter), Vec::<i64>::new());
}

#[test]
fn pages_split_the_matched_runs_and_carry_their_labels() {
    let dir = tempfile::tempdir().unwrap();
    let store = five_runs(dir.path());
    let all = RunFilter::default();
    let second = store.list_runs_page(&all, Page::new(2, 2).unwrap()).unwrap();
    assert_eq!(second.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [3, 2]);
    assert_eq!((second.total, second.pages(), second.first(), second.last()), (5, 3, 3, 4));
    assert_eq!(second.runs[0].labels, [("build".to_string(), "2".to_string()), ("server".into(), "a".into())]);
    assert_eq!(second.runs[0].disturbed_cells, 1);
    assert_eq!(second.runs[1].labels, [("build".to_string(), "1".to_string()), ("server".into(), "b".into())]);
    let last = store.list_runs_page(&all, Page::new(3, 2).unwrap()).unwrap();
    assert_eq!(last.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [1]);
    assert_eq!((last.first(), last.last()), (5, 5));
    let past = store.list_runs_page(&all, Page::new(9, 2).unwrap()).unwrap();
    assert!(past.runs.is_empty());
    assert_eq!(past.total, 5);
    // The page's labels are those list_runs reads run by run.
    let listed = store.list_runs().unwrap();
    assert_eq!(listed.iter().find(|r| r.id == 3).unwrap().labels, second.runs[0].labels);
    assert_eq!(listed.iter().find(|r| r.id == 4).unwrap().labels, [("server".to_string(), "b".to_string())]);
}

#[test]
fn a_page_newest_first_reads_the_index_on_start_time_not_every_run() {
    let dir = tempfile::tempdir().unwrap();
    drop(five_runs(dir.path()));
    let conn = rusqlite::Connection::open(dir.path().join("r.sqlite")).unwrap();
    let plan: Vec<String> = conn
        .prepare("EXPLAIN QUERY PLAN SELECT r.id FROM runs r WHERE 1 ORDER BY r.started_at_ms DESC, r.id DESC LIMIT 50")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(plan.iter().any(|step| step.contains("runs_by_start")), "{plan:?}");
    assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "sorted apart: {plan:?}");
}
