//! Curves attacked (issue 52): the client itself stopped (SIGSTOP) in the middle of an open-loop
//! point, and a SIGTERM between a curve's points. The stop shows in the point's latencies (each
//! request counts from its intended start, also when the client, not the storage, stalled) and
//! in its state (disturbed, left out of compare); a SIGTERM keeps the points finished and runs
//! no more of them.
use crate::helpers::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A curve of two 3 s points (the maximum, then 50% of it, open loop) on the sandbox's target.
fn curve(sb: &Sandbox) -> Running {
    let target = sb.target();
    let args = ["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m", "--duration", "3s"];
    let spawned = sb.cmd().args(args).args(["--curve", "50"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    Running(spawned.expect("start iomatrix"))
}

/// The cells stored so far (0 before the database exists).
fn cells_stored(sb: &Sandbox) -> i64 {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let Ok(conn) = rusqlite::Connection::open_with_flags(sb.db(), flags) else { return 0 };
    conn.query_row("SELECT COUNT(*) FROM cells", [], |r| r.get(0)).unwrap_or(0)
}

/// Waits until the curve's maximum is stored (its open-loop point starts then), within 60 s.
fn wait_for_the_maximum(sb: &Sandbox, child: &mut Running) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while cells_stored(sb) < 1 {
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before its maximum was stored");
        assert!(Instant::now() < deadline, "no cell stored within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Running, signal: i32) {
    // SAFETY: kill(2) of our own child, not yet reaped (Running waits for it on drop).
    assert_eq!(unsafe { libc::kill(child.0.id() as i32, signal) }, 0, "kill({signal})");
}

fn output(child: &mut Running) -> (std::process::ExitStatus, String) {
    let status = wait_for_exit(child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}

#[test]
fn a_client_stopped_in_an_open_loop_point_counts_the_stop_and_the_point_is_disturbed() {
    let sb = Sandbox::new();
    let mut child = curve(&sb);
    wait_for_the_maximum(&sb, &mut child);
    std::thread::sleep(Duration::from_secs(1));
    signal(&child, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGCONT);
    let (status, stderr) = output(&mut child);
    assert_eq!(status.code(), Some(0), "a complete run with a disturbed cell exits 0: {stderr}");
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 2, "the maximum and its point");
    let point: &Value = &cells[1];
    let max_ns = point["metrics"]["curve"]["latency"]["max_ns"].as_f64().unwrap();
    let open = &point["metrics"]["open_loop"];
    println!("stopped point: max {:.3} s, {open}, state {}", max_ns / 1e9, point["state"]);
    // The arrivals of the 1.5 s the client slept count from their intended start: the first
    // waited all of it. 1.3 s allows for where in a request the stop fell.
    assert!(max_ns >= 1.3e9, "the stop is in the point's latency: max {max_ns:.0} ns");
    assert!(open["late"].as_u64().unwrap() > 0, "the requests due while stopped were issued late: {open}");
    assert_eq!(point["state"]["kind"], "disturbed", "the point did not run for its time: {}", point["state"]);
    let cause = point["state"]["cause"].as_str().unwrap_or_default();
    assert!(cause.contains("the process was stopped for"), "{cause}");
}

#[test]
fn a_sigterm_between_a_curves_points_keeps_the_maximum_and_runs_no_more() {
    let sb = Sandbox::new();
    let mut child = curve(&sb);
    wait_for_the_maximum(&sb, &mut child);
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, libc::SIGTERM);
    let (status, stderr) = output(&mut child);
    assert_eq!(status.code(), Some(143), "a SIGTERM ends the run as Ctrl-C does, exit 143: {stderr}");
    let run = sb.last_run();
    let cells = cells(&run);
    println!("after SIGTERM: {} cell(s), status {}", cells.len(), run["run"]["status"]);
    assert_eq!(cells.len(), 1, "the maximum kept, the point cut short not stored as a figure");
    assert_eq!(cells[0]["metrics"]["load"], "max");
    assert_eq!(run["run"]["status"], "interrupted", "{}", run["run"]);
    assert!(sb.leftovers().is_empty(), "the working folder is gone: {:?}", sb.leftovers());
}
