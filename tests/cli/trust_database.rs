//! The results database's edges (issue 30, finding 10, and run ids from 11): a read-only
//! database read by every reader and refused by every writer, a folder in a named `--db` never
//! made, a database removed, replaced or moved away while a run writes, stored figures that
//! cannot be read back, a damaged database merged from, `rerun` into the database it was given,
//! and run ids never given twice.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The smallest real run: one cell of 64 KiB.
const TINY: &[&str] = &["--files", "64k", "--records", "4k", "--tests", "write"];

/// `iomatrix` with the database `db` (through IOMATRIX_DB, as a user's shell would set it).
fn with_db(sb: &Sandbox, db: &Path, args: &[&str]) -> Output {
    sb.cmd().env("IOMATRIX_DB", db).args(args).output().expect("run iomatrix")
}

fn tiny_run_into(sb: &Sandbox, db: &Path, extra: &[&str]) -> Output {
    let target = sb.target();
    let mut args = vec!["run", "iozone", "--target", target.to_str().unwrap()];
    args.extend_from_slice(TINY);
    args.extend_from_slice(extra);
    with_db(sb, db, &args)
}

fn run_ids(sb: &Sandbox, db: &Path) -> Vec<i64> {
    let out = with_db(sb, db, &["runs", "--json"]);
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["runs"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap_or_else(|e| e.to_string())
}

fn sql(db: &Path, statement: &str) {
    rusqlite::Connection::open(db).unwrap().execute_batch(statement).unwrap();
}

/// The files in `dir`, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A read-only bind mount of a folder, unmounted on drop (also when the test fails). Root only.
struct ReadOnlyBind {
    point: PathBuf,
    _holder: tempfile::TempDir,
}

impl ReadOnlyBind {
    fn of(dir: &Path) -> Option<ReadOnlyBind> {
        if !is_root() {
            skip("a read-only bind mount needs root");
            return None;
        }
        let holder = tempfile::tempdir().unwrap();
        let point = holder.path().join("ro");
        std::fs::create_dir(&point).unwrap();
        if !matches!(Command::new("mount").arg("--bind").arg(dir).arg(&point).output(), Ok(o) if o.status.success()) {
            skip("cannot bind-mount a folder");
            return None;
        }
        // Held from here: dropped, it unmounts, also when the remount fails.
        let bind = ReadOnlyBind { point, _holder: holder };
        let remounted = Command::new("mount").args(["-o", "remount,bind,ro"]).arg(&bind.point).output();
        if !matches!(remounted, Ok(o) if o.status.success()) {
            skip("cannot remount a bind mount read-only");
            return None;
        }
        Some(bind)
    }
}

impl Drop for ReadOnlyBind {
    fn drop(&mut self) {
        let umount = |lazy: bool| {
            let mut c = Command::new("umount");
            if lazy {
                c.arg("-l");
            }
            c.arg(&self.point).output().is_ok_and(|o| o.status.success())
        };
        if !umount(false) {
            umount(true);
        }
    }
}

/// Two small runs (labelled disk=a and disk=b) in `dir/results.sqlite`.
fn two_runs(sb: &Sandbox, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let db = dir.join("results.sqlite");
    for disk in ["a", "b"] {
        assert_success(&tiny_run_into(sb, &db, &["--label", &format!("disk={disk}")]));
    }
    assert_eq!(names_in(dir), ["results.sqlite"], "the runs left side files");
    db
}

#[test]
fn a_read_only_database_is_read_by_every_reader_and_refused_by_every_writer() {
    let sb = Sandbox::new();
    let db = two_runs(&sb, &sb.dir.path().join("store"));
    let Some(ro) = ReadOnlyBind::of(&sb.dir.path().join("store")) else { return };
    let ro_db = ro.point.join("results.sqlite");
    let before = std::fs::read(&db).unwrap();

    let runs = with_db(&sb, &ro_db, &["runs"]);
    assert_success(&runs);
    assert!(text(&runs).0.contains("disk=a") && text(&runs).0.contains("disk=b"), "{}", text(&runs).0);
    assert_success(&with_db(&sb, &ro_db, &["show", "1"]));
    assert_success(&with_db(&sb, &ro_db, &["show", "2", "--json"]));
    assert_success(&with_db(&sb, &ro_db, &["compare", "1", "2"]));
    assert_success(&with_db(&sb, &ro_db, &["sweep", "1", "2", "--by", "disk"]));
    let report = sb.dir.path().join("r.md");
    assert_success(&with_db(&sb, &ro_db, &["report", "1", "2", "-o", report.to_str().unwrap()]));
    assert!(std::fs::metadata(&report).unwrap().len() > 0);

    let check = with_db(&sb, &ro_db, &["db", "check"]);
    let (stdout, stderr) = text(&check);
    assert_success(&check);
    assert!(stdout.contains("access: read-only (the file is on a read-only file system)"), "{stdout}");
    assert!(stdout.contains("integrity: ok") && !stdout.contains("DAMAGED"), "{stdout}{stderr}");
    let check = with_db(&sb, &ro_db, &["db", "check", "--json"]);
    assert_success(&check);
    let doc: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(doc["sound"], true);
    assert!(doc["check"]["read_only"].as_str().is_some_and(|w| w.contains("read-only file system")), "{doc}");

    // Every command that writes names the file and why, exit 2, and leaves nothing behind.
    let named = format!("results database {} is read-only: the file is on a read-only file system", ro_db.display());
    assert_usage_error(&tiny_run_into(&sb, &ro_db, &[]), &named);
    assert!(sb.leftovers().is_empty(), "the refused run left a working folder: {:?}", sb.leftovers());
    let other = sb.dir.path().join("other.sqlite");
    assert_success(&tiny_run_into(&sb, &other, &[]));
    assert_usage_error(&with_db(&sb, &ro_db, &["db", "merge", other.to_str().unwrap()]), &named);
    let copy = sb.dir.path().join("copy.sqlite");
    assert_success(&with_db(&sb, &ro_db, &["db", "backup", copy.to_str().unwrap()]));
    assert_eq!(run_ids(&sb, &copy), [1, 2]);

    drop(ro);
    assert_eq!(std::fs::read(&db).unwrap(), before, "the read-only database changed");
    assert_eq!(names_in(&sb.dir.path().join("store")), ["results.sqlite"]);
}

/// `setpriv` as user nobody: a database another user owns, which this one may read, not write.
fn as_nobody(sb: &Sandbox, db: &Path, args: &[&str]) -> Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(args)
        .env("IOMATRIX_DB", db)
        .env(crate::helpers::BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run setpriv")
}

#[test]
fn a_database_this_user_may_not_write_is_read_and_refused_for_writing() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() || !have("setpriv") {
        skip("reading another user's database needs root and setpriv");
        return;
    }
    let sb = Sandbox::new();
    let store = sb.dir.path().join("store");
    let db = two_runs(&sb, &store);
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(sb.dir.path(), 0o755);
    mode(&store, 0o755);
    mode(&db, 0o444);
    mode(&sb.target(), 0o777);
    let probe = as_nobody(&sb, &db, &["--version"]);
    if !probe.status.success() {
        skip(format!("user nobody cannot run the test binary: {}", text(&probe).1));
        return;
    }
    let before = std::fs::read(&db).unwrap();
    assert_success(&as_nobody(&sb, &db, &["runs"]));
    assert_success(&as_nobody(&sb, &db, &["show", "1"]));
    let check = as_nobody(&sb, &db, &["db", "check"]);
    assert_success(&check);
    assert!(text(&check).0.contains("access: read-only (this user may not write the file)"), "{}", text(&check).0);
    let target = sb.target();
    let mut args = vec!["run", "iozone", "--target", target.to_str().unwrap()];
    args.extend_from_slice(TINY);
    assert_usage_error(&as_nobody(&sb, &db, &args), "this user may not write the file");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(names_in(&store), ["results.sqlite"]);
}

#[test]
fn a_missing_folder_in_a_named_database_is_an_error_and_never_made() {
    let sb = Sandbox::new();
    let db = sb.dir.path().join("nodir/sub/x.sqlite");
    let folder = format!("its folder {} does not exist", sb.dir.path().join("nodir/sub").display());
    assert_usage_error(&sb.run(&["--db", db.to_str().unwrap(), "runs"]), &folder);
    assert_usage_error(&with_db(&sb, &db, &["runs"]), &folder);
    assert_usage_error(&tiny_run_into(&sb, &db, &[]), &folder);
    assert_usage_error(&sb.run(&["iozone", "--db", db.to_str().unwrap(), "-s", "64k", "-i", "0"]), &folder);
    assert!(!sb.dir.path().join("nodir").exists(), "a folder of --db was made");
    assert!(sb.leftovers().is_empty());
    assert_usage_error(&with_db(&sb, sb.dir.path(), &["runs"]), "is a folder");

    // The default place is still made on first use.
    let data = sb.dir.path().join("data");
    let out = sb.cmd().env_remove("IOMATRIX_DB").env("XDG_DATA_HOME", &data).arg("runs").output().unwrap();
    assert_success(&out);
    assert!(data.join("iomatrix/results.sqlite").is_file(), "{:?}", text(&out));
}

#[test]
fn a_device_a_fifo_or_a_huge_sparse_file_as_the_database_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let timed = |db: &Path, args: &[&str]| {
        let started = Instant::now();
        let out = with_db(&sb, db, args);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{args:?} on {} took {:?}",
            db.display(),
            started.elapsed()
        );
        out
    };
    // SQLite would take /dev/zero for an empty database and make /dev/zero-journal beside it.
    let beside_zero = ["/dev/zero-journal", "/dev/zero-wal", "/dev/zero-shm"].map(PathBuf::from);
    let there_before: Vec<bool> = beside_zero.iter().map(|p| p.exists()).collect();
    let out = timed(Path::new("/dev/zero"), &["runs"]);
    for (side, before) in beside_zero.iter().zip(there_before) {
        if side.exists() && !before {
            let _ = std::fs::remove_file(side);
            panic!("{} was made beside /dev/zero", side.display());
        }
    }
    assert_usage_error(&out, "--db /dev/zero (or IOMATRIX_DB) is not a regular file");
    let fifo = sb.dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    assert_usage_error(&timed(&fifo, &["runs"]), "is not a regular file");
    assert_usage_error(
        &timed(&fifo, &["run", "iozone", "--target", sb.target().to_str().unwrap()]),
        "is not a regular file",
    );

    // A 10 GiB sparse file of zeros: named as no database at once, never written.
    let sparse = sb.dir.path().join("sparse.sqlite");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    for args in [&["runs"][..], &["db", "check"]] {
        let out = timed(&sparse, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out).1);
        assert!(
            text(&out).1.contains(&format!("results database {} is damaged", sparse.display())),
            "{}",
            text(&out).1
        );
    }
    assert_eq!(std::fs::metadata(&sparse).unwrap().len(), 10 << 30);
    assert_eq!(names_in(sb.dir.path()), ["fifo", "sparse.sqlite", "target"]);
}

/// A run of many small cells (iozone, 64k..16m by 4k..64k, write and read, 10 times over: 900
/// cells), its stderr in a file (a pipe could fill and stop it).
fn long_run(sb: &Sandbox) -> (Running, PathBuf) {
    let stderr = sb.dir.path().join("run.stderr");
    let target = sb.target();
    let child = sb
        .cmd()
        .args(["run", "iozone", "--target", target.to_str().unwrap()])
        .args(["--files", "64k..16m", "--records", "4k..64k", "--tests", "write,read", "--repeat", "10"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    (Running(child), stderr)
}

/// Waits for the run to end (bounded) and returns its exit code and stderr.
fn ended(child: &mut Running, stderr: &Path) -> (Option<i32>, String) {
    let status = wait_for_exit(child);
    (status.code(), std::fs::read_to_string(stderr).unwrap())
}

fn side_files(db: &Path) -> [PathBuf; 2] {
    [PathBuf::from(format!("{}-wal", db.display())), PathBuf::from(format!("{}-shm", db.display()))]
}

#[test]
fn a_database_removed_during_a_run_fails_the_run_with_exit_1() {
    let sb = Sandbox::new();
    let (mut child, stderr) = long_run(&sb);
    wait_for_cells(&sb, &mut child, 5);
    std::fs::remove_file(sb.db()).unwrap();
    for side in side_files(&sb.db()) {
        let _ = std::fs::remove_file(side);
    }
    let (code, said) = ended(&mut child, &stderr);
    assert_eq!(code, Some(1), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    assert!(
        said.contains(&format!("results database {} was removed or replaced while iomatrix wrote", sb.db().display()))
            && said.contains("nothing is at the path any more"),
        "{said}"
    );
    assert!(sb.leftovers().is_empty(), "working folder left: {:?}", sb.leftovers());
}

#[test]
fn a_database_replaced_during_a_run_fails_the_run_and_the_new_file_is_not_written() {
    let sb = Sandbox::new();
    let other = Sandbox::new();
    other.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write,read", "--label", "from=other"]);
    let replacement = sb.dir.path().join("replacement.sqlite");
    std::fs::copy(other.db(), &replacement).unwrap();
    let theirs = other.runs_json();

    let (mut child, stderr) = long_run(&sb);
    wait_for_cells(&sb, &mut child, 5);
    std::fs::rename(&replacement, sb.db()).unwrap();
    let (code, said) = ended(&mut child, &stderr);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("was removed or replaced") && said.contains("the path now names another file"), "{said}");
    // The file now at the path is the other database as it was: none of the run's pages mixed in.
    assert_eq!(sb.runs_json(), theirs);
    assert_eq!(integrity(&sb.db()), "ok");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn a_database_moved_away_during_a_run_keeps_every_cell_stored_before() {
    let sb = Sandbox::new();
    let kept = sb.dir.path().join("kept.sqlite");
    let (mut child, stderr) = long_run(&sb);
    wait_for_cells(&sb, &mut child, 5);
    std::fs::rename(sb.db(), &kept).unwrap();
    let (code, said) = ended(&mut child, &stderr);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("nothing is at the path any more"), "{said}");
    // Every cell committed before the move is in the moved file (its -wal folded into it).
    assert!(stored_cells_in(&kept) >= 5, "{} cells in the moved file", stored_cells_in(&kept));
    assert_eq!(integrity(&kept), "ok");
    assert!(!sb.db().exists());
}

#[test]
fn stored_figures_that_cannot_be_read_back_are_named_by_show_and_db_check() {
    let sb = Sandbox::new();
    let target = sb.target();
    // access stores latency histograms beside its figures.
    for _ in 0..2 {
        let target = target.to_str().unwrap();
        assert_success(&sb.run(&[
            "run",
            "access",
            "--target",
            target,
            "--file-size",
            "1m",
            "--bs",
            "4k",
            "--duration",
            "200ms",
        ]));
    }
    assert_success(&sb.run(&["db", "check"]));
    sql(&sb.db(), "UPDATE cells SET metrics_json = '{\"iops\": 12' WHERE run_id = 1 AND seq = 0");
    sql(&sb.db(), "UPDATE cell_blobs SET data = x'1c849303deadbeef' WHERE run_id = 2 AND name = 'latency.read'");

    let out = sb.run(&["show", "1"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("run #1 cell 0 (access), metrics_json: does not parse as JSON"), "{stderr}");
    assert!(stdout.contains("run #1"), "what can be read is still shown: {stdout}");
    let out = sb.run(&["show", "1", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["unreadable"][0]["column"], "metrics_json", "{doc}");
    assert_eq!(doc["unreadable"][0]["cell"], 0, "{doc}");
    let out = sb.run(&["show", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).1.contains("run #2 cell 0 (access), cell_blobs latency.read: does not decode"),
        "{}",
        text(&out).1
    );

    let out = sb.run(&["db", "check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("integrity: ok") && stdout.contains("figures: UNREADABLE (2 stored figure(s)"), "{stdout}");
    assert!(stdout.contains("run #1 cell 0 (access), metrics_json") && stdout.contains("latency.read"), "{stdout}");
    let out = sb.run(&["db", "check", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["sound"].as_bool(), doc["check"]["unreadable_count"].as_u64()), (Some(false), Some(2)), "{doc}");

    // Nothing computes with a figure that is not there.
    let out = sb.run(&["compare", "1", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out).1);
    assert!(text(&out).1.contains("run #1's stored figures cannot be read"), "{}", text(&out).1);
}

/// Overwrites the b-tree page header of `table`'s root page: every read of the table meets it.
fn damage(db: &Path, table: &str) {
    use std::io::{Seek, SeekFrom, Write};
    let (page, size) = {
        let conn = rusqlite::Connection::open(db).unwrap();
        let page: i64 =
            conn.query_row("SELECT rootpage FROM sqlite_master WHERE name = ?1", [table], |r| r.get(0)).unwrap();
        (page as u64, conn.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0)).unwrap() as u64)
    };
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
    f.write_all(&[0x55; 16]).unwrap();
}

#[test]
fn merging_a_damaged_database_names_it_and_leaves_this_one_sound() {
    let (here, there) = (Sandbox::new(), Sandbox::new());
    here.iozone_ok(TINY);
    there.iozone_ok(TINY);
    there.iozone_ok(TINY);
    damage(&there.db(), "runs");
    let before = here.runs_json();

    let out = here.run(&["db", "merge", there.db().to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("{} (the database to merge from) is damaged", there.db().display())), "{stderr}");
    assert!(!stderr.contains(&format!("results database {} is damaged", here.db().display())), "{stderr}");
    assert_eq!(here.runs_json(), before);
    assert_success(&here.run(&["db", "check"]));
}

#[test]
fn rerun_stores_into_the_database_it_was_given() {
    let sb = Sandbox::new();
    let (y1, y2) = (sb.dir.path().join("y1.sqlite"), sb.dir.path().join("y2.sqlite"));
    let target = sb.target();
    // --db among the run's own flags, as clap takes it; and the IOzone front end's own --db.
    let mut args = vec!["run", "iozone", "--db", y1.to_str().unwrap(), "--target", target.to_str().unwrap()];
    args.extend_from_slice(TINY);
    assert_success(&sb.cmd().env_remove("IOMATRIX_DB").args(&args).output().unwrap());
    std::fs::copy(&y1, &y2).unwrap();
    let out = sb.cmd().env_remove("IOMATRIX_DB").args(["--db", y2.to_str().unwrap(), "rerun", "1"]).output().unwrap();
    assert_success(&out);
    assert_eq!(run_ids(&sb, &y1), [1], "the rerun wrote into the database of its stored command line");
    assert_eq!(run_ids(&sb, &y2), [1, 2]);

    let (y3, y4) = (sb.dir.path().join("y3.sqlite"), sb.dir.path().join("y4.sqlite"));
    let file = target.join("iozone.tmp");
    let front =
        ["iozone", "--db", y3.to_str().unwrap(), "-s", "64k", "-r", "4k", "-i", "0", "-f", file.to_str().unwrap()];
    assert_success(&sb.cmd().env_remove("IOMATRIX_DB").args(front).output().unwrap());
    std::fs::copy(&y3, &y4).unwrap();
    assert_success(&with_db(&sb, &y4, &["rerun", "1"]));
    assert_eq!(run_ids(&sb, &y3), [1]);
    assert_eq!(run_ids(&sb, &y4), [1, 2]);
}

/// The pid of the run `running` in `db` (a study's step), waited for (bounded).
fn running_pid(db: &Path, child: &mut Running) -> (i64, i32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found =
            rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).and_then(|c| {
                c.query_row("SELECT id, pid FROM runs WHERE status = 'running'", [], |r| Ok((r.get(0)?, r.get(1)?)))
            });
        if let Ok(found) = found {
            return found;
        }
        assert!(child.0.try_wait().unwrap().is_none(), "the study ended before its step's run began");
        assert!(Instant::now() < deadline, "no running step within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_removed_runs_id_is_never_given_again() {
    let sb = Sandbox::new();
    let study = sb.dir.path().join("ids.toml");
    std::fs::write(
        &study,
        format!(
            "version = 1\nname = \"ids\"\n\n[[config]]\nname = \"a\"\ntarget = \"{}\"\n\n[[step]]\nname = \"long\"\n\
             suite = \"access\"\nargs = {{ file-size = \"1m\", bs = \"4k\", duration = \"4s\" }}\n",
            sb.target().display()
        ),
    )
    .unwrap();
    // The step's run is stopped by SIGTERM: the study removes it, to run the step again on resume.
    let mut child = Running(
        sb.cmd()
            .args(["study", "run", study.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let (removed, pid) = running_pid(&sb.db(), &mut child);
    // SAFETY: kill(2) of the step's run, a process this test's child started and still waits for.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    wait_for_exit(&mut child);
    assert!(run_ids(&sb, &sb.db()).is_empty(), "the stopped step's run was kept");

    assert_success(&sb.run(&["study", "run", study.to_str().unwrap()]));
    let ids = run_ids(&sb, &sb.db());
    assert_eq!(ids.len(), 1);
    assert!(ids[0] > removed, "run #{removed} was removed and its id given to another run: {ids:?}");
    sb.iozone_ok(TINY);
    let after = run_ids(&sb, &sb.db());
    assert!(after[1] > ids[0] && !after.contains(&removed), "{after:?}");
}

#[test]
fn db_merge_passes_every_run_through_the_gate_and_merges_nothing_it_refuses() {
    let (here, there) = (Sandbox::new(), Sandbox::new());
    here.iozone_ok(TINY);
    for _ in 0..5 {
        there.iozone_ok(TINY);
    }
    let good = Sandbox::new();
    good.iozone_ok(TINY);
    // Figures no run of iomatrix could store, written behind its back: each a bound of the gate.
    sql(
        &there.db(),
        "UPDATE cells SET kib_per_sec = 1e23 WHERE run_id = 2;
         UPDATE cells SET cpu_percent = 9999.9 WHERE run_id = 3;
         UPDATE labels SET value = 'x' || char(10) || '    7  fake row' WHERE run_id = 4;
         INSERT INTO labels (run_id, key, value) VALUES (4, 'k', 'x' || char(10) || '    7  fake row');
         UPDATE cells SET metrics_json = '{broken' WHERE run_id = 5;",
    );
    let before = here.runs_json();
    let (good_db, bad_db) = (good.db(), there.db());
    let out = here.run(&["db", "merge", good_db.to_str().unwrap(), bad_db.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_usage_error(&out, "4 run(s) to merge hold figures the store's gate refuses");
    let bad = bad_db.display().to_string();
    for needle in [
        format!(
            "{bad}: run #2 there: cell 0 (write, file 65536 bytes, record 4096 bytes): kib_per_sec = 1e23 is refused"
        ),
        "at most 1125899906842624 KiB/s (1 EiB/s)".to_string(),
        format!("{bad}: run #3 there: cell 0 (write, file 65536 bytes, record 4096 bytes): cpu_percent = 9999.9"),
        "CPUs".to_string(),
        format!("{bad}: run #4 there: label 'k': value"),
        "no control character (it holds a newline".to_string(),
        format!("{bad}: run #5 there: its stored figures cannot be read, so not checked"),
        "nothing was merged".to_string(),
        "--skip-refused".to_string(),
    ] {
        assert!(stderr.contains(&needle), "the refusal should say '{needle}':\n{stderr}");
    }
    assert!(!stderr.contains('\u{1b}') && !stderr.contains("\n    7  fake row"), "the text is escaped: {stderr}");
    assert_eq!(here.runs_json(), before, "nothing of either database was merged");

    // --skip-refused: the runs the gate lets pass are merged, each refused one named.
    let out = here.run(&["db", "merge", "--skip-refused", good_db.to_str().unwrap(), bad_db.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_success(&out);
    assert!(stdout.contains(&format!("{bad}: 1 run(s) merged")), "{stdout}");
    assert!(stderr.contains("4 run(s) refused and left out (--skip-refused)"), "{stderr}");
    assert!(stderr.contains(&format!("{bad}: run #2 there: cell 0")), "{stderr}");
    let runs = here.runs_json();
    assert_eq!(runs["runs"].as_array().unwrap().len(), 3, "here's run, the good one, and run #1 there: {runs}");
    // Every run here reads back whole, and none carries a refused figure.
    let check = here.run(&["db", "check"]);
    assert_success(&check);
    for id in run_ids(&here, &here.db()) {
        let run = here.show_json(id);
        assert!(cells(&run).iter().all(|c| c["kib_per_sec"].as_f64().unwrap() < 1e15), "{run}");
    }
    let doc: serde_json::Value = serde_json::from_slice(
        &here.run(&["db", "merge", "--skip-refused", "--json", bad_db.to_str().unwrap()]).stdout,
    )
    .unwrap();
    assert_eq!(doc["merged"][0]["already_here"], 1, "{doc}");
    assert_eq!(doc["merged"][0]["refused"].as_array().unwrap().len(), 4, "{doc}");
    assert_eq!(doc["merged"][0]["refused"][0]["there"], 2, "{doc}");
}
