//! A running run's live state, read from beside it (issue 53): the file the run publishes beside
//! the database (`<db>.live/RUN.json`), `iomatrix watch RUN` following a real timed access run to
//! its end, the file gone however the run ends, and hostile files in its place read as no live
//! state. What watching costs the run is measured by bench/live-watched.sh, not timed here.
use crate::helpers::*;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The first run's live state file in the sandbox's database's live folder.
fn live_file(sb: &Sandbox) -> PathBuf {
    PathBuf::from(format!("{}.live/1.json", sb.db().display()))
}

/// Its JSON, when the file is there and whole.
fn live_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// A timed access run of one 8 MiB file on `target`, one cell per block size, each `seconds` long.
fn start_access(sb: &Sandbox, target: &Path, sizes: &str, seconds: &str) -> Running {
    let target = target.to_str().unwrap();
    let args = ["run", "access", "--target", target, "--bs", sizes, "--qd", "1", "--duration", seconds];
    let child =
        sb.cmd().args(args).args(["--file-size", "8m"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    Running(child)
}

/// tmpfs where this user may mount it, else the sandbox's own folder (the file system is not
/// what these tests are about).
fn ram_target(sb: &Sandbox) -> (Option<Mount>, PathBuf) {
    match Mount::try_virtual_fs("tmpfs", "size=64m") {
        Ok(mount) => {
            let point = mount.point.clone();
            (Some(mount), point)
        }
        Err(_) => (None, sb.target()),
    }
}

/// Waits (at most 60 s) until the run's live state says `what`.
fn wait_for_live(path: &Path, child: &mut Running, what: &str, until: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(state) = live_json(path).filter(&until) {
            return state;
        }
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before its live state showed {what}");
        assert!(Instant::now() < deadline, "no live state with {what} within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn has_line(state: &Value) -> bool {
    state["line"].as_str().is_some_and(|l| l.contains("IOPS"))
}

fn signal(child: &Running, signal: i32) {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    unsafe { libc::kill(child.0.id() as i32, signal) };
}

/// `watch ARGS` run to its end (at most 30 s).
fn watch(sb: &Sandbox, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = sb.cmd();
    cmd.arg("watch").args(args);
    let out = bounded_child(cmd, Duration::from_secs(30));
    (out.status.code(), text(&out).0)
}

#[test]
fn a_timed_run_publishes_its_live_state_and_watch_follows_it_to_the_end() {
    let sb = Sandbox::new();
    let (_mount, target) = ram_target(&sb);
    let path = live_file(&sb);
    let mut run = start_access(&sb, &target, "4k,8k,16k", "3s");
    wait_for_live(&path, &mut run, "the run's start", |_| true);
    let watcher = sb.cmd().args(["watch", "1"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut watcher = Running(watcher);
    // The run's own state, read as a watcher would while it runs.
    let (mut done_seen, mut lines, mut pids) = (Vec::new(), 0, Vec::new());
    while run.0.try_wait().unwrap().is_none() {
        if let Some(state) = live_json(&path) {
            let done = state["cells_done"].as_u64().unwrap();
            if done_seen.last() != Some(&done) {
                done_seen.push(done);
            }
            lines += usize::from(has_line(&state));
            pids.push(state["pid"].as_u64().unwrap());
            assert_eq!(state["cells_total"], 3, "{state}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(wait_for_exit(&mut run).success());
    println!("cells done as the live state grew: {done_seen:?}; {lines} reads with a live line");
    assert!(done_seen.windows(2).all(|w| w[0] < w[1]), "cells done only grow: {done_seen:?}");
    assert!(done_seen.len() >= 3, "the live state followed the cells: {done_seen:?}");
    assert!(lines > 0, "no live line with IOPS in the live state");
    assert!(pids.iter().all(|p| *p == u64::from(run.0.id())), "the run's own pid");
    assert!(!path.exists(), "the live state outlived the run");
    assert!(!path.parent().unwrap().exists(), "the live folder outlived the run's state");
    let status = wait_for_exit(&mut watcher);
    let mut out = String::new();
    watcher.0.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(out.starts_with("run #1: running, "), "{out}");
    assert!(out.contains("\nlive: ") && out.contains(" IOPS"), "a live line: {out}");
    assert!(out.contains("\ncell 2: access 8m/16k qd=1 read=100% random=100%: "), "the last cell as it came: {out}");
    let end = out.find("run #1: complete, 3 of 3 cells stored").unwrap_or_else(|| panic!("no final status: {out}"));
    let tables = &out[end..];
    for bs in ["4k", "8k", "16k"] {
        assert!(tables.lines().any(|l| l.trim_start().starts_with(&format!("{bs}  100%"))), "{bs} row: {tables}");
    }
}

#[test]
fn sigterm_removes_the_live_state_and_watch_says_the_run_was_interrupted() {
    let sb = Sandbox::new();
    let (_mount, target) = ram_target(&sb);
    let path = live_file(&sb);
    let mut run = start_access(&sb, &target, "4k,8k", "30s");
    wait_for_live(&path, &mut run, "a live line", has_line);
    signal(&run, libc::SIGTERM);
    assert_eq!(wait_for_exit(&mut run).code(), Some(143));
    assert!(!path.exists(), "SIGTERM left the live state behind");
    let (code, out) = watch(&sb, &["1"]);
    assert_eq!(code, Some(1), "an interrupted run: {out}");
    assert!(out.starts_with("run #1: interrupted, "), "{out}");
    assert_eq!(out.lines().nth(1), Some(""), "no live line once the run has ended: {out}");
    let (code, once) = watch(&sb, &["1", "--once"]);
    assert_eq!((code, once), (Some(0), out), "--once prints the same and exits 0");
}

#[test]
fn a_killed_runs_leftover_live_state_is_a_dead_runs_and_watch_writes_nothing() {
    let sb = Sandbox::new();
    let (_mount, target) = ram_target(&sb);
    let path = live_file(&sb);
    let mut run = start_access(&sb, &target, "4k", "30s");
    wait_for_live(&path, &mut run, "a live line", has_line);
    signal(&run, libc::SIGKILL);
    wait_for_exit(&mut run);
    assert!(path.exists(), "a killed process removes nothing");
    let (code, out) = watch(&sb, &["1", "--json"]);
    let doc: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(
        (code, &doc["status"], &doc["ended"], &doc["live"]),
        (Some(1), &"incomplete".into(), &true.into(), &Value::Null)
    );
    // Read only: the row still says running until a writer opens the database.
    let conn = rusqlite::Connection::open_with_flags(sb.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let stored: String = conn.query_row("SELECT status FROM runs WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, "running");
    drop(conn);
    // The next writer marks the run incomplete and removes the state its process left.
    assert_success(&sb.run(&["runs"]));
    assert!(!path.exists(), "the dead run's live state outlived its marking");
}

/// What a hostile live folder may hold in place of a run's state; each must read as none.
fn plant_hostile(path: &Path, kind: &str) {
    let _ = std::fs::remove_file(path);
    match kind {
        "garbage" => std::fs::write(path, b"\x00\xff{\"run_id\": 1, garbage").unwrap(),
        "64 MiB" => std::fs::File::create(path).unwrap().set_len(64 << 20).unwrap(),
        "symlink to /dev/zero" => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        "FIFO" => {
            let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo(3) with a NUL-terminated path this test owns.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        }
        _ => unreachable!(),
    }
}

#[test]
fn a_hostile_live_file_is_no_live_state() {
    let sb = Sandbox::new();
    let (_mount, target) = ram_target(&sb);
    let path = live_file(&sb);
    let mut run = start_access(&sb, &target, "4k", "30s");
    wait_for_live(&path, &mut run, "a live line", has_line);
    // Stopped, the run writes nothing more, and is alive: its own state reads as live.
    signal(&run, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(300));
    let good = std::fs::read(&path).unwrap();
    let state: Value = serde_json::from_slice(&good).unwrap();
    let live_of = |what: &str| {
        let (code, out) = watch(&sb, &["1", "--once", "--json"]);
        let doc: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{what}: {e}: {out}"));
        assert_eq!((code, &doc["status"]), (Some(0), &"running".into()), "{what}: {doc}");
        doc["live"].clone()
    };
    assert_eq!(live_of("the run's own state"), state);
    for kind in ["garbage", "64 MiB", "symlink to /dev/zero", "FIFO"] {
        plant_hostile(&path, kind);
        assert_eq!(live_of(kind), Value::Null, "{kind}");
    }
    let copy = path.with_extension("copy");
    std::fs::write(&copy, &good).unwrap();
    plant_hostile(&path, "garbage");
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&copy, &path).unwrap();
    assert_eq!(live_of("a symlink to a good state"), Value::Null);
    std::fs::remove_file(&copy).unwrap();
    signal(&run, libc::SIGCONT);
    signal(&run, libc::SIGTERM);
    assert_eq!(wait_for_exit(&mut run).code(), Some(143));
    assert!(!path.exists(), "the run removes what is at its state's path when it ends");
}

#[test]
fn a_live_state_that_cannot_be_written_is_said_once_and_the_run_goes_on() {
    let sb = Sandbox::new();
    let (_mount, target) = ram_target(&sb);
    // A file where the live folder would be: the folder cannot be made.
    let folder = PathBuf::from(format!("{}.live", sb.db().display()));
    std::fs::write(&folder, b"not a folder").unwrap();
    let target = target.to_str().unwrap();
    let args = ["run", "access", "--target", target, "--bs", "4k,8k", "--duration", "1s", "--file-size", "8m"];
    let out = sb.run(&args);
    assert_success(&out);
    let stderr = text(&out).1;
    let said = stderr.matches("cannot publish run #1's live state").count();
    assert_eq!(said, 1, "said once: {stderr}");
    assert!(!stderr.contains("cannot remove run #1's live state"), "and only once: {stderr}");
    assert_eq!(std::fs::read(&folder).unwrap(), b"not a folder", "the file in its way is left alone");
    assert_eq!(sb.runs_json()["runs"][0]["status"], "complete");
}

#[test]
fn watch_of_a_missing_database_or_run_is_a_usage_error_and_makes_nothing() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["watch", "1"]), "no results database at");
    assert!(!sb.db().exists(), "a reader made the database");
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    assert_usage_error(&sb.run(&["watch", "2", "--once"]), "no run #2");
}
