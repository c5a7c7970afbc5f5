//! SIGKILL at random moments of a run, 50 times: the database stays sound,
//! earlier runs stay exactly as they were, the killed run is found
//! `incomplete` (or absent, if killed before it began), and `iomatrix clean`
//! removes the working folders the kills left.
use crate::helpers::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

const KILLS: usize = 50;
/// The whole test must end well within CI's patience, even on a loaded machine.
const TIME_LIMIT: Duration = Duration::from_secs(150);

/// 18 cells with fsync, a few tenths of a second: kills land in startup,
/// inside cells, between them and after the end.
const RUN: &[&str] = &[
    "--files",
    "64k,256k,1m",
    "--records",
    "4k,64k",
    "--tests",
    "write,rewrite,read",
    "--fsync",
    "--label",
    "crash=1",
];

fn run_args(sb: &Sandbox) -> Vec<String> {
    let mut args: Vec<String> = vec!["run".into(), "iozone".into(), "--target".into()];
    args.push(sb.target().to_str().unwrap().into());
    args.extend(RUN.iter().map(|a| a.to_string()));
    args
}

/// Every stored row that must not change once written, as text: runs (their
/// end state) and cells (every figure).
fn rows(sb: &Sandbox) -> Vec<(i64, String)> {
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let mut out = Vec::new();
    let mut runs = conn
        .prepare("SELECT id, status, COALESCE(ended_at_ms, 0), COALESCE(error, ''), total_cells FROM runs ORDER BY id")
        .unwrap();
    let found = runs
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                format!(
                    "run {} {} {} {}",
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?
                ),
            ))
        })
        .unwrap();
    out.extend(found.map(Result::unwrap));
    let mut cells = conn
        .prepare(
            "SELECT run_id, seq, test, file_size, record_size, bytes, ops, wall_ns, kib_per_sec, metrics_json, \
             clients_json FROM cells ORDER BY run_id, seq",
        )
        .unwrap();
    let found = cells
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                format!(
                    "cell {} {} {:?} {:?} {} {} {} {} {} {}",
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, i64>(7)?,
                    r.get::<_, f64>(8)?,
                    r.get::<_, String>(9)?,
                    r.get::<_, String>(10)?
                ),
            ))
        })
        .unwrap();
    out.extend(found.map(Result::unwrap));
    out
}

fn integrity(sb: &Sandbox) -> String {
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

#[test]
fn fifty_sigkills_at_random_moments_lose_nothing_finished_and_clean_removes_the_leftovers() {
    let began = Instant::now();
    let seed = std::env::var("IOMATRIX_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x1a2b_3c4d_5e6f_7081);
    eprintln!("kill moments from seed {seed} (IOMATRIX_CRASH_SEED replays it)");
    let mut moments = Moments::new(seed);
    let sb = Sandbox::new();

    // Earlier, whole runs: what must survive every kill unchanged. The
    // median of their lengths (process start to exit) spreads the kills.
    let mut lives: Vec<Duration> = (0..3)
        .map(|_| {
            let whole = Instant::now();
            let out = sb.cmd().args(run_args(&sb)).output().unwrap();
            assert_success(&out);
            whole.elapsed()
        })
        .collect();
    lives.sort();
    let mut life = lives[1];
    eprintln!("a whole run lasts {life:?}");

    let (mut absent, mut incomplete, mut finished) = (0, 0, 0);
    for kill in 0..KILLS {
        assert!(began.elapsed() < TIME_LIMIT, "{kill} kills took {:?}", began.elapsed());
        let before = rows(&sb);
        let runs_before = sb.runs_json()["runs"].as_array().unwrap().len();
        // Up to 10% past a whole run's length: some kills come after the end.
        let delay = life.mul_f64(1.1 * moments.next_fraction());
        let mut child =
            Running(sb.cmd().args(run_args(&sb)).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap());
        std::thread::sleep(delay);
        // SAFETY: kill(2) on our own child's pid, which it keeps until we wait for it.
        unsafe { libc::kill(child.0.id() as i32, libc::SIGKILL) };
        let status = wait_for_exit(&mut child);
        let killed = std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGKILL);
        assert!(killed || status.success(), "kill {kill} after {delay:?}: iomatrix ended with {status:?}");

        assert_eq!(integrity(&sb), "ok", "kill {kill} after {delay:?}");
        // The next iomatrix to open the database marks the dead run.
        let runs = sb.runs_json();
        let runs = runs["runs"].as_array().unwrap();
        let after = rows(&sb);
        let known: std::collections::HashSet<i64> = before.iter().map(|(id, _)| *id).collect();
        let earlier: Vec<_> = after.iter().filter(|(id, _)| known.contains(id)).cloned().collect();
        assert_eq!(earlier, before, "kill {kill} after {delay:?} changed earlier runs");
        // A run's length moves with the machine's load: kills that keep coming after the end (or
        // before the start) shorten (or lengthen) the span they are drawn from, so that most land inside.
        match runs.len() - runs_before {
            0 => {
                absent += 1;
                life = life.mul_f64(1.15);
            }
            1 => {
                let run = runs.last().unwrap();
                let (cells, total) = (run["cells"].as_u64().unwrap(), run["total_cells"].as_u64().unwrap());
                match run["status"].as_str().unwrap() {
                    "incomplete" => {
                        assert!(killed, "kill {kill}: a run that ended by itself is not incomplete: {run}");
                        assert!(cells <= total, "{run}");
                        incomplete += 1;
                    }
                    "complete" => {
                        assert_eq!(cells, total, "kill {kill}: {run}");
                        finished += 1;
                        life = life.mul_f64(0.85);
                    }
                    other => panic!("kill {kill} after {delay:?}: a killed run is {other}: {run}"),
                }
            }
            more => panic!("kill {kill}: {more} new runs from one process"),
        }
    }
    eprintln!(
        "{KILLS} kills in {:?}: {incomplete} runs incomplete, {absent} killed before they began, {finished} had \
         finished",
        began.elapsed()
    );
    assert!(incomplete >= KILLS / 3, "many kills must land inside a run: only {incomplete} of {KILLS} did");

    // The kills left working folders; the next run names them, clean removes them.
    let left = sb.leftovers();
    assert!(!left.is_empty(), "{incomplete} killed runs left no working folder");
    let out = sb.cmd().args(run_args(&sb)).output().unwrap();
    assert_success(&out);
    let (_, stderr) = text(&out);
    assert!(stderr.contains("leftover working folders from crashed runs: iomatrix clean"), "{stderr}");
    let out = sb.run(&["clean", sb.target().to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    // What is left is only what a kill between making the folder and marking
    // it left: reported, never removed, holding no data.
    for folder in sb.leftovers() {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        assert!(stdout.contains(&format!("left {name}: no .iomatrix-workdir marker")), "{stdout}");
        let inside: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(inside.iter().all(|n| n == ".iomatrix-workdir.new"), "{name} holds {inside:?}");
    }
    let removed = left.len() - sb.leftovers().len();
    assert!(stdout.contains(&format!("{removed} leftover working folder(s) removed")), "{stdout}");
    assert!(removed > 0, "{stdout}");
}
