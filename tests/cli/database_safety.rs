//! One results database shared safely: many processes on a new database at
//! once, `import` bounded, a damaged file named and left alone, `db check`,
//! `db backup` while a run writes, and `db merge` (twice is once).

use crate::helpers::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The smallest real run: one cell of 64 KiB.
const TINY: &[&str] = &["--files", "64k", "--records", "4k", "--tests", "write"];

fn tiny_run(sb: &Sandbox) -> Command {
    let mut c = sb.cmd();
    c.args(["run", "iozone", "--target", sb.target().to_str().unwrap()]).args(TINY);
    c
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap_or_else(|e| e.to_string())
}

/// 8 processes x 3 runs each, started together on a database that does not exist yet, 20 times:
/// every run is stored and the file is sound. (Before the migrations took one lock, one process
/// of three failed with "duplicate column name: lost_json".)
#[test]
fn eight_processes_on_a_new_database_store_every_run() {
    const PROCESSES: usize = 8;
    const RUNS: usize = 3;
    let started = Instant::now();
    for round in 0..20 {
        let sb = Sandbox::new();
        let barrier = std::sync::Barrier::new(PROCESSES);
        let failures: Vec<String> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..PROCESSES)
                .map(|_| {
                    let (sb, barrier) = (&sb, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        let mut failed = Vec::new();
                        for _ in 0..RUNS {
                            let out = tiny_run(sb).output().expect("run iomatrix");
                            if !out.status.success() {
                                failed.push(format!("{:?}: {}", out.status, text(&out).1));
                            }
                        }
                        failed
                    })
                })
                .collect();
            workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
        });
        assert!(failures.is_empty(), "round {round}: {failures:#?}");
        let runs = sb.runs_json();
        let runs = runs["runs"].as_array().unwrap();
        assert_eq!(runs.len(), PROCESSES * RUNS, "round {round}");
        assert!(runs.iter().all(|r| r["status"] == "complete" && r["cells"] == 1), "round {round}: {runs:#?}");
        assert_eq!(integrity(&sb.db()), "ok", "round {round}");
        assert!(started.elapsed() < Duration::from_secs(300), "20 rounds took over 5 minutes");
    }
}

/// Runs `cmd` with `stdin` under GNU time, waits at most `limit`, and returns its exit code,
/// stderr, time taken and its own peak resident memory in KiB. Not wait4's rusage of our own child:
/// the kernel keeps a process's high-water mark across exec, so a child of this test process (large
/// while other tests run beside it) would report the test's pages, not iomatrix's. GNU time is a
/// small process whose child starts afresh.
fn measured(cmd: Command, stdin: Stdio, limit: Duration) -> (Option<i32>, String, Duration, i64) {
    let peak = tempfile::NamedTempFile::new().expect("a file for GNU time's figure");
    let mut timed = Command::new("/usr/bin/time");
    timed.args(["-q", "-f", "%M", "-o"]).arg(peak.path()).arg(cmd.get_program()).args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => timed.env(key, value),
            None => timed.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        timed.current_dir(dir);
    }
    let start = Instant::now();
    let mut child = match timed.stdin(stdin).stdout(Stdio::null()).stderr(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(e) => panic!("cannot start /usr/bin/time (Debian: apt-get install time): {e}"),
    };
    let mut stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for iomatrix") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("iomatrix did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    let figure = std::fs::read_to_string(peak.path()).unwrap_or_default();
    let kib = figure.trim().parse::<i64>().unwrap_or_else(|_| panic!("GNU time wrote {figure:?}, not a KiB figure"));
    (status.code(), reader.join().unwrap(), took, kib)
}

#[test]
fn import_refuses_dev_zero_at_once_in_little_memory() {
    let sb = Sandbox::new();
    let mut cmd = sb.cmd();
    cmd.args(["import", "/dev/zero"]);
    let (code, stderr, took, rss_kib) = measured(cmd, Stdio::null(), Duration::from_secs(10));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("/dev/zero is a device") && stderr.contains("`-`"), "{stderr}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(rss_kib < 64 * 1024, "{rss_kib} KiB resident");
    assert!(!sb.db().exists(), "nothing to store, no database made");
}

#[test]
fn import_refuses_a_huge_sparse_file_by_its_size() {
    let sb = Sandbox::new();
    let huge = sb.dir.path().join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(10 << 30).unwrap();
    let mut cmd = sb.cmd();
    cmd.arg("import").arg(&huge);
    let (code, stderr, took, rss_kib) = measured(cmd, Stdio::null(), Duration::from_secs(10));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("10737418240 bytes, more than the import bound of 256m"), "{stderr}");
    assert!(stderr.contains("--max-input-size"), "{stderr}");
    assert!(took < Duration::from_secs(1) && rss_kib < 64 * 1024, "{took:?}, {rss_kib} KiB");
    assert!(!sb.db().exists());
}

/// `yes | iomatrix import -`: read up to the bound, then refused.
fn endless_pipe(sb: &Sandbox, extra: &[&str], limit: Duration) -> (Option<i32>, String, Duration, i64) {
    let mut yes = Command::new("yes").stdout(Stdio::piped()).spawn().expect("yes");
    let mut cmd = sb.cmd();
    cmd.args(["import", "-"]).args(extra);
    let result = measured(cmd, Stdio::from(yes.stdout.take().unwrap()), limit);
    let _ = yes.kill();
    let _ = yes.wait();
    result
}

#[test]
fn import_bounds_a_pipe_that_never_ends() {
    let sb = Sandbox::new();
    let (code, stderr, took, rss_kib) = endless_pipe(&sb, &["--max-input-size", "1m"], Duration::from_secs(10));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("standard input (-): more than the import bound of 1m"), "{stderr}");
    assert!(took < Duration::from_secs(2) && rss_kib < 64 * 1024, "{took:?}, {rss_kib} KiB");
    // The default bound: refused at 256 MiB, not at the end of memory.
    let (code, stderr, _, rss_kib) = endless_pipe(&sb, &[], Duration::from_secs(60));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("more than the import bound of 256m"), "{stderr}");
    assert!(rss_kib < 700 * 1024, "{rss_kib} KiB resident for a 256 MiB bound");
    assert!(!sb.db().exists());
}

#[test]
fn import_refuses_a_folder_and_a_fifo_plainly() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["import", sb.target().to_str().unwrap()]), "is a folder");
    let fifo = sb.dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut cmd = sb.cmd();
    cmd.arg("import").arg(&fifo);
    // Opening a FIFO with no writer would block: refused before opening, at once.
    let (code, stderr, took, _) = measured(cmd, Stdio::null(), Duration::from_secs(10));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("is a FIFO") && took < Duration::from_secs(2), "{stderr}");
    assert_usage_error(&sb.run(&["import", "-", "--max-input-size", "lots"]), "--max-input-size lots");
    // Binary data under the bound: refused as such (before a lossy copy of it), nothing stored.
    let binary = sb.dir.path().join("image.bin");
    std::fs::write(&binary, [b"{\"fio version\": \"fio-3.33\"".as_slice(), &[0u8; 4096]].concat()).unwrap();
    assert_usage_error(&sb.run(&["import", binary.to_str().unwrap()]), "binary data (a NUL byte at offset 26)");
    assert!(!sb.db().exists());
}

/// Overwrites the b-tree page header of the `runs` table's root page (not the file's header):
/// every read of the runs meets it.
fn damage_runs_table(db: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let (page, size) = {
        let conn = rusqlite::Connection::open(db).unwrap();
        let page: i64 =
            conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = 'runs'", [], |r| r.get(0)).unwrap();
        let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
        (page as u64, size as u64)
    };
    assert!(page > 1, "the runs table starts after the schema page");
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
    f.write_all(&[0x55; 16]).unwrap();
}

fn assert_damage_named(out: &std::process::Output, db: &Path) {
    let (_, stderr) = text(out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(&format!("results database {} is damaged", db.display())), "{stderr}");
    assert!(stderr.contains("iomatrix db check") && stderr.contains("restore it from a copy"), "{stderr}");
}

#[test]
fn a_damaged_database_is_named_by_runs_show_and_run_and_left_unchanged() {
    let sb = Sandbox::new();
    sb.iozone_ok(TINY);
    sb.iozone_ok(TINY);
    let out = sb.run(&["db", "check"]);
    assert_success(&out);
    let checked = text(&out).0;
    assert!(checked.contains("integrity: ok") && checked.contains("runs: 2\ncells: 2"), "{checked}");

    damage_runs_table(&sb.db());
    let integrity = integrity(&sb.db());
    assert!(integrity.contains("malformed") || integrity != "ok", "{integrity}");
    let before = std::fs::read(sb.db()).unwrap();

    assert_damage_named(&sb.run(&["runs"]), &sb.db());
    assert_damage_named(&sb.run(&["show", "1"]), &sb.db());
    assert_damage_named(&tiny_run(&sb).output().unwrap(), &sb.db());
    assert_eq!(std::fs::read(sb.db()).unwrap(), before, "the damaged file was written");
    assert!(leftovers(&sb.target()).is_empty(), "the refused run left a working folder");

    let out = sb.run(&["db", "check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("integrity: DAMAGED"), "{stdout}");
    assert!(stderr.contains("restore it from a copy"), "{stderr}");
    assert_eq!(std::fs::read(sb.db()).unwrap(), before, "db check wrote");
}

/// `--db` naming a file that is no database at all: said so, and the file left as it was.
#[test]
fn a_file_that_is_no_database_is_named_and_left_alone() {
    let sb = Sandbox::new();
    let notes = sb.dir.path().join("notes.txt");
    let text_before = "these are my notes, not a database\n".repeat(200);
    std::fs::write(&notes, &text_before).unwrap();
    let with_db = |args: &[&str]| sb.cmd().args(args).env("IOMATRIX_DB", &notes).output().unwrap();
    for args in [&["runs"][..], &["show", "1"], &["run", "iozone", "--target", sb.target().to_str().unwrap()]] {
        let out = with_db(args);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("SQLite says it is not a database (the wrong file for --db"), "{stderr}");
    }
    let out = with_db(&["db", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out).1);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), text_before);
}

#[test]
fn a_backup_and_a_merge_while_a_run_writes_leave_everything_sound() {
    let sb = Sandbox::new();
    sb.iozone_ok(TINY);
    let other = Sandbox::new();
    other.iozone_ok(TINY);
    other.iozone_ok(TINY);
    // A run of many small cells, writing while the copies are made.
    let target = sb.target();
    let mut writer = Running(
        sb.cmd()
            .args(["run", "iozone", "--target", target.to_str().unwrap()])
            .args(["--files", "64k..4m", "--records", "4k..64k", "--repeat", "3"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for_cells(&sb, &mut writer, 3);
    for i in 0..3 {
        let copy = sb.dir.path().join(format!("copy{i}.sqlite"));
        let out = sb.run(&["db", "backup", copy.to_str().unwrap()]);
        assert_success(&out);
        assert!(text(&out).0.contains("checked: ok"), "{}", text(&out).0);
        assert_eq!(integrity(&copy), "ok");
        let out = sb.run(&["db", "check", "--db", copy.to_str().unwrap()]);
        assert_success(&out);
    }
    let out = sb.run(&["db", "merge", other.db().to_str().unwrap()]);
    assert_success(&out);
    assert!(text(&out).0.contains("2 run(s) merged"), "{}", text(&out).0);
    assert!(writer.0.try_wait().unwrap().is_none(), "the writer ended before the merge: make it longer");
    assert!(wait_for_exit(&mut writer).success());
    let runs = sb.runs_json();
    let runs = runs["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r["status"] == "complete" && r["cells"] == r["total_cells"]), "{runs:#?}");
    assert_eq!(integrity(&sb.db()), "ok");
    let copy0 = sb.dir.path().join("copy0.sqlite");
    assert_usage_error(&sb.run(&["db", "backup", copy0.to_str().unwrap()]), "never overwrites");
}

#[test]
fn merging_twice_is_merging_once_and_compare_works_across() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    a.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write,read", "--label", "machine=a"]);
    b.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write,read", "--label", "machine=b"]);
    // Another plan (write only): not a repeat of the first, so labelled apart (a label selector pools
    // only repeats of one setup).
    b.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write", "--label", "machine=b-write"]);
    let other = b.db();
    let original = b.show_json(1);
    let other_bytes = std::fs::read(&other).unwrap();

    let out = a.run(&["db", "merge", other.to_str().unwrap()]);
    assert_success(&out);
    assert!(text(&out).0.contains("2 run(s) merged, 0 already here"), "{}", text(&out).0);
    let once = a.runs_json();
    let out = a.run(&["db", "merge", other.to_str().unwrap()]);
    assert_success(&out);
    assert!(text(&out).0.contains("0 run(s) merged, 2 already here"), "{}", text(&out).0);
    assert_eq!(a.runs_json(), once, "merging twice changed the database");
    assert_eq!(std::fs::read(&other).unwrap(), other_bytes, "the merge wrote into the other database");
    for leftover in ["-wal", "-shm"] {
        let side = format!("{}{leftover}", other.display());
        assert!(!Path::new(&side).exists(), "the merge left {side}");
    }
    assert_eq!(once["runs"].as_array().unwrap().len(), 3);

    let merged = a.show_json(2);
    assert_eq!(merged["run"]["cell_results"], original["run"]["cell_results"]);
    assert_eq!(merged["run"]["environment"], original["run"]["environment"]);
    assert_eq!(merged["run"]["labels"], original["run"]["labels"]);
    assert_eq!(merged["run"]["uid"], original["run"]["uid"]);
    let origin = &merged["run"]["origin"];
    assert_eq!(origin["run_id"], 1);
    assert_eq!(origin["file"], std::fs::canonicalize(&other).unwrap().display().to_string());
    assert!(origin["host"].is_string());
    let shown = text(&a.run(&["show", "2"])).0;
    assert!(shown.contains(&format!("merged from: {} (run #1 there)", origin["file"].as_str().unwrap())), "{shown}");
    // sweep and report read merged runs as any run.
    assert_success(&a.run(&["sweep", "1", "2", "--by", "machine", "--json"]));
    let report = a.dir.path().join("r.md");
    assert_success(&a.run(&["report", "1", "2", "-o", report.to_str().unwrap()]));
    assert!(std::fs::metadata(&report).unwrap().len() > 0);

    // compare across machines: a's own run against the merged one, by id and by label.
    let out = a.run(&["compare", "1", "2"]);
    assert_success(&out);
    let out = a.run(&["compare", "machine=a", "machine=b", "--json"]);
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "iomatrix.compare/2");

    // A newer database, itself, or no database at all: refused, nothing merged.
    let newer = b.dir.path().join("newer.sqlite");
    std::fs::copy(&other, &newer).unwrap();
    rusqlite::Connection::open(&newer).unwrap().execute_batch("PRAGMA user_version = 99").unwrap();
    assert_usage_error(&a.run(&["db", "merge", newer.to_str().unwrap()]), "schema version 99 is newer");
    assert_usage_error(&a.run(&["db", "merge", a.db().to_str().unwrap()]), "is this database");
    assert_usage_error(&a.run(&["db", "merge", "/nonexistent.sqlite"]), "no such file");
    assert_eq!(a.runs_json(), once);
}
