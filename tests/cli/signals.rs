//! A killed run keeps its finished cells; Ctrl-C stops cleanly.
use crate::helpers::*;
use std::process::Stdio;
use std::time::Duration;

/// A run that takes several seconds: small direct (or fsync'd) I/O on the real disk.
fn start_slow_run(sb: &Sandbox) -> Running {
    let target = sb.target();
    let mut args =
        vec!["run", "iozone", "--target", target.to_str().unwrap(), "--files", "16m", "--records", "4k,8k", "--fsync"];
    if iomatrix_direct_ok(&target) {
        args.push("--direct");
    }
    let child = sb.cmd().args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    Running(child)
}

fn iomatrix_direct_ok(dir: &std::path::Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join("direct-probe");
    let ok = std::fs::OpenOptions::new().write(true).create(true).custom_flags(libc::O_DIRECT).open(&probe).is_ok();
    let _ = std::fs::remove_file(probe);
    ok
}

#[test]
fn sigkill_mid_run_leaves_a_readable_database_with_the_finished_cells() {
    let sb = Sandbox::new();
    // An earlier run that must survive.
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    let mut child = start_slow_run(&sb);
    wait_for_cells(&sb, &mut child, 1 + 2);
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGKILL) };
    let status = wait_for_exit(&mut child);
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));

    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let runs = sb.runs_json();
    let runs = runs["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(runs[0]["cells"], 1);
    assert_eq!(runs[1]["status"], "incomplete", "{}", runs[1]);
    let kept = runs[1]["cells"].as_u64().unwrap();
    assert!((2..26).contains(&kept), "{kept} cells kept");
    let run = sb.show_json(runs[1]["id"].as_i64().unwrap());
    assert!(cells(&run).iter().all(|c| c["kib_per_sec"].as_f64().unwrap() > 0.0));
}

#[test]
fn ctrl_c_keeps_finished_cells_and_removes_the_working_folder() {
    let sb = Sandbox::new();
    let mut child = start_slow_run(&sb);
    wait_for_cells(&sb, &mut child, 1);
    assert_eq!(sb.leftovers().len(), 1, "a working folder exists while running");
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(130));
    assert!(sb.leftovers().is_empty(), "working folder left behind: {:?}", sb.leftovers());
    let runs = sb.runs_json();
    let run = &runs["runs"][0];
    assert_eq!(run["status"], "interrupted");
    assert!(run["cells"].as_u64().unwrap() >= 1);
    // Nothing but the database and the (now empty) target in the sandbox.
    assert_eq!(std::fs::read_dir(sb.target()).unwrap().count(), 0);
}

#[test]
fn sigterm_stops_like_ctrl_c_with_exit_143_and_a_second_signal_quits_at_once() {
    let sb = Sandbox::new();
    let mut child = start_slow_run(&sb);
    wait_for_cells(&sb, &mut child, 1);
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    assert_eq!(wait_for_exit(&mut child).code(), Some(143));
    assert!(sb.leftovers().is_empty(), "working folder left behind: {:?}", sb.leftovers());
    assert_eq!(sb.runs_json()["runs"][0]["status"], "interrupted");

    // Two signals in a row: out at once, with the first signal's code; the database stays readable and the
    // run is found incomplete or interrupted, never half-written.
    let mut child = start_slow_run(&sb);
    wait_for_cells(&sb, &mut child, 2);
    // SAFETY: as above.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: as above.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    assert_eq!(wait_for_exit(&mut child).code(), Some(130));
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let status = sb.runs_json()["runs"][0]["status"].as_str().unwrap().to_string();
    assert!(["incomplete", "interrupted"].contains(&status.as_str()), "{status}");
}

/// An access cell is timed for --duration: one cut short by Ctrl-C is not
/// stored (its figure would be of a shorter cell than asked for), and the
/// run ends interrupted even when the cut cell is its last.
#[test]
fn ctrl_c_mid_access_cell_stores_no_cut_short_cell() {
    let sb = Sandbox::new();
    let target = sb.target();
    let args =
        ["run", "access", "--target", target.to_str().unwrap(), "--bs", "4k", "--file-size", "1m", "--duration", "30s"];
    let mut child = Running(sb.cmd().args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap());
    // The run has begun once its row is stored; its one cell then runs for 30 s.
    let began = std::time::Instant::now();
    while runs_stored(&sb) == 0 {
        assert!(began.elapsed() < Duration::from_secs(30), "the run never began");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(130), "{status:?}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "interrupted", "{}", run["run"]);
    assert!(cells(&run).is_empty(), "a cell cut short at 2 s of 30 s was stored: {:?}", cells(&run));
}

fn runs_stored(sb: &Sandbox) -> i64 {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let Ok(conn) = rusqlite::Connection::open_with_flags(sb.db(), flags) else { return 0 };
    conn.query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap_or(0)
}
