//! Issue 48's finding 4: a cell that did not run for its time is not a figure. A run stopped
//! (SIGSTOP) during its cell, and a run whose clocks are faked (faketime's LD_PRELOAD), store
//! the cell `disturbed` with its cause; `show` (text and JSON), `runs` and the run's summary say
//! so; compare leaves it out of its medians unless `--include-disturbed`.

use crate::helpers::*;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `run access` of one short cell on the sandbox's target, `--duration` as given.
fn access_args(sb: &Sandbox, duration: &str) -> Vec<String> {
    let target = sb.target().to_str().unwrap().to_string();
    ["run", "access", "--target", &target, "--file-size", "8m", "--bs", "4k", "--read", "100", "--duration", duration]
        .map(String::from)
        .to_vec()
}

/// The stored runs' count in the sandbox's database (0 before it exists).
fn stored_runs(sb: &Sandbox) -> i64 {
    let Ok(conn) = rusqlite::Connection::open_with_flags(sb.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap_or(0)
}

/// The one cell of run `id`, as `show --json` gives it.
fn only_cell(sb: &Sandbox, id: i64) -> Value {
    let cells = cells(&sb.show_json(id));
    assert_eq!(cells.len(), 1, "{cells:?}");
    cells[0].clone()
}

/// The seconds a cause names as the stop's length ("stopped for 5.1 s" -> 5.1), the first one.
fn stopped_for(cause: &str) -> Option<f64> {
    let rest = &cause[cause.find("stopped for ")? + "stopped for ".len()..];
    rest.split_whitespace().next()?.parse().ok()
}

/// Sends `signal` to the child.
fn signal(child: &Running, signal: i32) {
    // SAFETY: kill(2) of our own child, not yet reaped (Running waits for it on drop).
    let rc = unsafe { libc::kill(child.0.id() as i32, signal) };
    assert_eq!(rc, 0, "kill({signal})");
}

#[test]
fn a_cell_stopped_by_sigstop_is_stored_disturbed_with_the_stop_and_left_out_of_compare() {
    let sb = Sandbox::new();
    let started = Instant::now();
    let mut child = Running(
        sb.cmd()
            .args(access_args(&sb, "4s"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start iomatrix"),
    );
    // The run is stored before its 8 MiB file is laid out; a second later its cell is under way.
    let deadline = Instant::now() + Duration::from_secs(30);
    while stored_runs(&sb) < 1 {
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before it was stored");
        assert!(Instant::now() < deadline, "no run stored within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1200));
    let stop = Duration::from_secs(5);
    signal(&child, libc::SIGSTOP);
    std::thread::sleep(stop);
    signal(&child, libc::SIGCONT);
    let status = wait_for_exit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    println!("stopped run: {status:?} after {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", started.elapsed());
    assert_eq!(status.code(), Some(0), "a complete run with a disturbed cell exits 0, with a warning");
    assert!(stderr.contains("warning: run #1 has 1 disturbed cell(s)"), "{stderr}");
    assert!(stdout.contains("1 disturbed") && stdout.contains("disturbed: cell 0"), "the summary says so:\n{stdout}");

    let cell = only_cell(&sb, 1);
    assert_eq!(cell["state"]["kind"], "disturbed", "{cell}");
    let cause = cell["state"]["cause"].as_str().expect("a disturbed cell's cause");
    assert_eq!(cell["metrics"]["disturbed"]["cause"], cause, "the cause is stored in the cell's metrics");
    assert!(cause.contains("the process was stopped for"), "{cause}");
    let length = stopped_for(cause).expect("the stop's length");
    // The SIGSTOP-to-SIGCONT span is 5 s; the heartbeat knows it to a tenth, a loaded machine adds some.
    assert!((4.0..=8.0).contains(&length), "stopped for {length} s: {cause}");
    assert!(cell["kib_per_sec"].as_f64().unwrap() > 0.0, "its figures are kept: {cell}");

    let show = sb.run(&["show", "1"]);
    assert_success(&show);
    let (text, _) = crate::helpers::text(&show);
    assert!(text.contains("DISTURBED: 1 cell(s)") && text.contains("stopped for"), "{text}");
    assert!(text.contains('~'), "the figure is marked:\n{text}");
    let runs = sb.run(&["runs"]);
    assert!(crate::helpers::text(&runs).0.contains("(1 disturbed)"), "{:?}", crate::helpers::text(&runs));
    assert_eq!(sb.runs_json()["runs"][0]["disturbed_cells"], 1);

    // A second, undisturbed run of the same cell to compare with.
    let second = sb.run(&access_args(&sb, "1s").iter().map(String::as_str).collect::<Vec<_>>());
    assert_success(&second);
    assert_eq!(only_cell(&sb, 2)["state"]["kind"], "complete");

    let left_out = sb.run(&["compare", "1", "2", "--json"]);
    assert_success(&left_out);
    let doc: Value = serde_json::from_slice(&left_out.stdout).unwrap();
    let json = doc.to_string();
    assert!(json.contains("\"kind\":\"disturbed\""), "the left-out cell is listed with its state: {json}");
    let text = crate::helpers::text(&sb.run(&["compare", "1", "2"])).0;
    println!("compare:\n{text}");
    assert!(text.contains("left out") || text.contains("NOT COMPLETE"), "{text}");
    assert!(text.contains("disturbed: the process was stopped for"), "{text}");

    let taken_in = sb.run(&["compare", "1", "2", "--include-disturbed"]);
    assert_success(&taken_in);
    let text = crate::helpers::text(&taken_in).0;
    println!("compare --include-disturbed:\n{text}");
    assert!(!text.contains("disturbed: the process was stopped for"), "taken in, not left out:\n{text}");
    assert!(text.contains("--include-disturbed"), "the mark is explained:\n{text}");

    // Every report format lists the cell with its cause; CSV says whether it entered the medians.
    for format in ["md", "html", "json", "csv"] {
        let path = sb.dir.path().join(format!("r.{format}"));
        assert_success(&sb.run(&["report", "1", "2", "-o", path.to_str().unwrap()]));
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            written.contains("disturbed") && written.contains("the process was stopped for"),
            "{format}: {written}"
        );
    }
    let csv_line = |extra: &[&str]| {
        let path = sb.dir.path().join("in.csv");
        let args = [&["report", "1", "2", "--force", "-o", path.to_str().unwrap()][..], extra].concat();
        assert_success(&sb.run(&args));
        let csv = std::fs::read_to_string(&path).unwrap();
        csv.lines().find(|l| l.contains("disturbed: the process was stopped")).expect("the cell's row").to_string()
    };
    assert!(csv_line(&[]).contains(",false,"), "left out: {}", csv_line(&[]));
    let taken = csv_line(&["--include-disturbed"]);
    assert!(taken.contains(",true,"), "taken in: {taken}");
    println!("the test took {:?}", started.elapsed());
}

#[test]
fn a_run_under_faketime_is_stored_disturbed_naming_the_clocks() {
    if !have("faketime") {
        skip("faketime is not installed (Debian package faketime)");
        return;
    }
    let sb = Sandbox::new();
    let started = Instant::now();
    // Time runs ten times fast: a 3 s cell ends after 0.3 s, and its rate reads a tenth of the truth.
    let out = Command::new("faketime")
        .args(["-f", "+0 x10", env!("CARGO_BIN_EXE_iomatrix")])
        .args(access_args(&sb, "3s"))
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run faketime");
    let (stdout, stderr) = crate::helpers::text(&out);
    println!("under faketime: {:?} after {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status, started.elapsed());
    assert_eq!(out.status.code(), Some(0), "a complete run with a disturbed cell exits 0");
    let cell = only_cell(&sb, 1);
    assert_eq!(cell["state"]["kind"], "disturbed", "{cell}");
    let cause = cell["state"]["cause"].as_str().unwrap();
    assert!(cause.contains("CLOCK_MONOTONIC through the C library counted"), "{cause}");
    assert!(cause.contains("raw clock_gettime system call"), "{cause}");
    assert!(stderr.contains("disturbed cell(s)") && stderr.contains("clocks disagree"), "{stderr}");
}
