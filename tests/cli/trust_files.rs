//! Issue 30's findings on files (1, 2, 3 and the study parts of 11), each as
//! the user met it: nothing the user has is ever lost.
//!
//! - Every file written at a user's word (`report -o`, `run iozone --xlsx`,
//!   IOzone's `-b`, `db backup`, study logs) never replaces the results
//!   database or its -wal/-shm by any path (its name, a symlink, a hard link,
//!   a bind mount, a dotted path), never a file of another kind without
//!   `--force`, replaces a previous report of its kind, and on a full disk
//!   fails plainly with the old file intact.
//! - A working folder's removal (end of run, `clean`) never enters a mount
//!   point, a bind mount of the same file system included.
//! - A live run in another PID namespace is never taken for dead.
//! - A study's names cannot reach outside its log folder, and a study
//!   stopped in its setup ends the setup's whole process group.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A sandbox holding one small stored run.
fn with_a_run(db_name: &str) -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    let db = sb.dir.path().join(db_name);
    let out = run_with(
        &sb,
        &db,
        &[
            "run",
            "iozone",
            "--target",
            sb.target().to_str().unwrap(),
            "--files",
            "64k",
            "--records",
            "4k",
            "--tests",
            "write",
        ],
    );
    assert_success(&out);
    (sb, db)
}

/// `iomatrix ARGS` with `db` as the results database, in the sandbox.
fn run_with(sb: &Sandbox, db: &Path, args: &[&str]) -> Output {
    sb.cmd().env("IOMATRIX_DB", db).args(args).output().expect("run iomatrix")
}

/// The runs stored in `db`.
fn stored_runs(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap()
}

/// A bind mount made by a test, unmounted on drop (also when the test fails).
pub(crate) struct Bind(PathBuf);

impl Bind {
    /// Root only: `mount --bind from onto`; None (a skip) where that cannot be done.
    pub(crate) fn new(from: &Path, onto: &Path) -> Option<Bind> {
        if !is_root() {
            skip("a bind mount needs root");
            return None;
        }
        let status = Command::new("mount").arg("--bind").arg(from).arg(onto).status().expect("mount");
        if !status.success() {
            skip(format!("mount --bind {} {} failed", from.display(), onto.display()));
            return None;
        }
        Some(Bind(onto.to_path_buf()))
    }
}

impl Drop for Bind {
    fn drop(&mut self) {
        if !Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// Unmounts every mount under `dir` (deepest first): a run's hook may have made some.
struct UnmountUnder(PathBuf);

impl Drop for UnmountUnder {
    fn drop(&mut self) {
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut points: Vec<String> = info
            .lines()
            .filter_map(|l| l.split(' ').nth(4).map(String::from))
            .filter(|p| Path::new(p).starts_with(&self.0))
            .collect();
        points.sort_by_key(|p| std::cmp::Reverse(p.len()));
        for p in points {
            if !Command::new("umount").arg(&p).status().is_ok_and(|s| s.success()) {
                let _ = Command::new("umount").arg("-l").arg(&p).status();
            }
        }
    }
}

/// The database and its -wal and -shm as they are now (missing ones as empty).
fn database_files(db: &Path) -> Vec<Vec<u8>> {
    ["", "-wal", "-shm"].iter().map(|s| std::fs::read(format!("{}{s}", db.display())).unwrap_or_default()).collect()
}

/// Asserts that `write` (the writer under test, given a path and --force) refuses every path
/// to the results database `db`, --force or not, and leaves it as it was. `ext` is the name
/// ending the writer needs (a report's format). Keeps a connection open so that the -wal and
/// -shm exist, as while a run writes.
fn refuses_every_path_to_the_database(
    sb: &Sandbox,
    db: &Path,
    ext: &str,
    names_any_file: bool,
    write: &dyn Fn(&Path, bool) -> Output,
) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).unwrap();
    conn.execute_batch("BEGIN; CREATE TEMP TABLE t(x); COMMIT;").unwrap();
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    assert!(wal.exists() && shm.exists(), "the -wal and -shm exist while a connection is open");
    let dir = sb.dir.path();
    let mut paths: Vec<PathBuf> = Vec::new();
    if db.extension().and_then(|e| e.to_str()) == Some(ext) || names_any_file {
        paths.push(db.to_path_buf());
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        paths.push(dir.join("sub/..").join(db.file_name().unwrap()));
    }
    if names_any_file {
        paths.extend([wal.clone(), shm.clone()]);
    }
    for (name, to) in [("to-db", db), ("to-wal", &wal), ("to-shm", &shm)] {
        let link = dir.join(format!("{name}.{ext}"));
        std::os::unix::fs::symlink(to, &link).unwrap();
        paths.push(link);
    }
    let hard = dir.join(format!("hard.{ext}"));
    std::fs::hard_link(db, &hard).unwrap();
    paths.push(hard);
    let hard_wal = dir.join(format!("hard-wal.{ext}"));
    std::fs::hard_link(&wal, &hard_wal).unwrap();
    paths.push(hard_wal);
    let bound = dir.join(format!("bound.{ext}"));
    std::fs::write(&bound, b"").unwrap();
    let bind = Bind::new(db, &bound);
    if bind.is_some() {
        paths.push(bound.clone());
    }
    let before = database_files(db);
    for path in &paths {
        for force in [false, true] {
            let out = write(path, force);
            assert_usage_error(&out, "iomatrix never writes over it");
            assert_eq!(database_files(db), before, "{} (force {force}) changed the database", path.display());
        }
    }
    drop(bind);
    drop(conn);
    // Still the database, readable.
    assert!(stored_runs(db) >= 1);
}

#[test]
fn report_never_replaces_the_results_database() {
    // The finding: `report N -o r3.json` with the database named r3.json replaced it.
    let (sb, db) = with_a_run("r3.json");
    refuses_every_path_to_the_database(&sb, &db, "json", false, &|path, force| {
        let mut args = vec!["report", "1", "-o", path.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        run_with(&sb, &db, &args)
    });
    assert_eq!(stored_runs(&db), 1);
}

#[test]
fn iozone_xlsx_never_replaces_the_results_database_and_is_judged_before_the_run() {
    // The finding: a second `run iozone ... --xlsx results.sqlite` made the database a workbook.
    let (sb, db) = with_a_run("results.sqlite");
    let target = sb.target();
    refuses_every_path_to_the_database(&sb, &db, "xlsx", true, &|path, force| {
        let mut args = vec!["run", "iozone", "--target", target.to_str().unwrap(), "--files", "64k", "--records", "4k"];
        args.extend(["--tests", "write", "--xlsx", path.to_str().unwrap()]);
        if force {
            args.push("--force");
        }
        run_with(&sb, &db, &args)
    });
    // Refused before the run: no run was added, no working folder made.
    assert_eq!(stored_runs(&db), 1);
    assert!(sb.leftovers().is_empty());
}

#[test]
fn iozone_b_never_replaces_the_results_database() {
    let (sb, db) = with_a_run("results.sqlite");
    let file = sb.target().join("iozone.tmp");
    refuses_every_path_to_the_database(&sb, &db, "xls", true, &|path, force| {
        let mut args = vec!["iozone", "-i", "0", "-s", "64k", "-r", "4k", "-f", file.to_str().unwrap()];
        args.extend(["-b", path.to_str().unwrap()]);
        if force {
            args.push("--force");
        }
        run_with(&sb, &db, &args)
    });
    assert_eq!(stored_runs(&db), 1);
}

#[test]
fn scan_save_profile_never_replaces_the_results_database() {
    let (sb, db) = with_a_run("results.sqlite");
    let tree = sb.dir.path().to_path_buf();
    refuses_every_path_to_the_database(&sb, &db, "json", true, &|path, force| {
        let mut args = vec!["scan", tree.to_str().unwrap(), "--save-profile", path.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        run_with(&sb, &db, &args)
    });
}

#[test]
fn db_backup_never_writes_the_database_or_its_logs() {
    let (sb, db) = with_a_run("results.sqlite");
    refuses_every_path_to_the_database(&sb, &db, "sqlite", true, &|path, force| {
        let mut args = vec!["db", "backup", path.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        run_with(&sb, &db, &args)
    });
    // A -wal name that does not exist yet is refused too: the copy would be taken for the
    // database's write-ahead log the next time it is opened. (The last connection to close
    // removes the -wal: one is opened and closed.)
    let conn = rusqlite::Connection::open(&db).unwrap();
    let _: i64 = conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap();
    drop(conn);
    assert!(!Path::new(&format!("{}-wal", db.display())).exists());
    let out = run_with(&sb, &db, &["db", "backup", &format!("{}-wal", db.display())]);
    assert_usage_error(&out, "the results database's write-ahead log");
    assert!(!Path::new(&format!("{}-wal", db.display())).exists());
}

/// A writer under test: given a path and --force, the command's output.
type Writer<'a> = Box<dyn Fn(&Path, bool) -> Output + 'a>;
/// Something put where a log goes.
type Plant<'a> = Box<dyn Fn() + 'a>;

/// A file of the user's, not a report: its bytes.
const NOTES: &[u8] = b"my notes about the server\n";

#[test]
fn each_writer_replaces_another_kind_of_file_only_with_force() {
    // The finding: `iozone ... -b notes.txt` replaced a plain text file.
    let (sb, db) = with_a_run("results.sqlite");
    let dir = sb.dir.path();
    let target = sb.target();
    let file = target.join("iozone.tmp");
    let writers: Vec<(&str, Writer)> = vec![
        ("notes.html", Box::new(|p: &Path, f: bool| forced(&sb, &db, &["report", "1", "-o", p.to_str().unwrap()], f))),
        ("notes.md", Box::new(|p: &Path, f: bool| forced(&sb, &db, &["report", "1", "-o", p.to_str().unwrap()], f))),
        ("notes.csv", Box::new(|p: &Path, f: bool| forced(&sb, &db, &["report", "1", "-o", p.to_str().unwrap()], f))),
        ("notes.json", Box::new(|p: &Path, f: bool| forced(&sb, &db, &["report", "1", "-o", p.to_str().unwrap()], f))),
        ("notes.xlsx", Box::new(|p: &Path, f: bool| forced(&sb, &db, &["report", "1", "-o", p.to_str().unwrap()], f))),
        (
            "notes.txt",
            Box::new(|p: &Path, f: bool| {
                let args = ["run", "iozone", "--target", target.to_str().unwrap(), "--files", "64k", "--records", "4k"];
                let mut args = args.to_vec();
                args.extend(["--tests", "write", "--xlsx", p.to_str().unwrap()]);
                forced(&sb, &db, &args, f)
            }),
        ),
        (
            "notes-b.txt",
            Box::new(|p: &Path, f: bool| {
                let args = ["iozone", "-i", "0", "-s", "64k", "-r", "4k", "-f", file.to_str().unwrap(), "-b"];
                let mut args = args.to_vec();
                args.push(p.to_str().unwrap());
                forced(&sb, &db, &args, f)
            }),
        ),
        ("backup.txt", Box::new(|p: &Path, f: bool| forced(&sb, &db, &["db", "backup", p.to_str().unwrap()], f))),
        (
            "profile.txt",
            Box::new(|p: &Path, f: bool| {
                forced(&sb, &db, &["scan", dir.to_str().unwrap(), "--save-profile", p.to_str().unwrap()], f)
            }),
        ),
    ];
    for (name, write) in &writers {
        let path = dir.join(name);
        std::fs::write(&path, NOTES).unwrap();
        let out = write(&path, false);
        assert_usage_error(&out, "add --force to replace it");
        assert_eq!(std::fs::read(&path).unwrap(), NOTES, "{name} was touched without --force");
        let out = write(&path, true);
        assert_success(&out);
        assert_ne!(std::fs::read(&path).unwrap(), NOTES, "{name} was not replaced with --force");
        // What replaced it is of its kind now: written again without --force (a database copy
        // is never "a previous report": db backup replaces nothing without --force).
        let again = write(&path, false);
        if name.starts_with("backup") {
            assert_usage_error(&again, "never overwrites a file without --force");
        } else {
            assert_success(&again);
        }
    }
    // No temporary file was left beside any of them.
    let strays: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.contains(".iomatrix-") || n.contains(".partial-"))
        .collect();
    assert!(strays.is_empty(), "{strays:?}");
}

fn forced(sb: &Sandbox, db: &Path, args: &[&str], force: bool) -> Output {
    let mut args = args.to_vec();
    if force {
        args.push("--force");
    }
    run_with(sb, db, &args)
}

#[test]
fn a_full_disk_fails_plainly_and_leaves_the_old_file_intact() {
    let Some(tmpfs) = Mount::virtual_fs("tmpfs", "size=1m") else { return };
    let (sb, db) = with_a_run("results.sqlite");
    let at = |name: &str| tmpfs.point.join(name);
    let target = sb.target();
    let xlsx_args = |p: &Path| -> Vec<String> {
        ["run", "iozone", "--target", target.to_str().unwrap(), "--files", "64k", "--records", "4k", "--tests", "write"]
            .iter()
            .map(|s| s.to_string())
            .chain(["--xlsx".to_string(), p.display().to_string()])
            .collect()
    };
    // Each writer's file, made while there is room.
    let report = at("r.html");
    assert_success(&run_with(&sb, &db, &["report", "1", "-o", report.to_str().unwrap()]));
    let book = at("w.xlsx");
    let args = xlsx_args(&book);
    assert_success(&run_with(&sb, &db, &args.iter().map(String::as_str).collect::<Vec<_>>()));
    let copy = at("b.sqlite");
    assert_success(&run_with(&sb, &db, &["db", "backup", copy.to_str().unwrap()]));
    let front = at("b.xlsx");
    let iozone_file = target.join("iozone.tmp");
    let b_args = [
        "iozone",
        "-i",
        "0",
        "-s",
        "64k",
        "-r",
        "4k",
        "-f",
        iozone_file.to_str().unwrap(),
        "-b",
        front.to_str().unwrap(),
    ];
    assert_success(&run_with(&sb, &db, &b_args));
    let files = [&report, &book, &copy, &front];
    let before: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    // The rest of the file system filled.
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(at("filler")).unwrap();
        let chunk = vec![1u8; 4096];
        while filler.write_all(&chunk).is_ok() {}
    }
    let runs_before = stored_runs(&db);
    let outs = [
        run_with(&sb, &db, &["report", "1", "-o", report.to_str().unwrap()]),
        run_with(&sb, &db, &args.iter().map(String::as_str).collect::<Vec<_>>()),
        run_with(&sb, &db, &["db", "backup", "--force", copy.to_str().unwrap()]),
        run_with(&sb, &db, &b_args),
    ];
    for (out, path) in outs.iter().zip(files) {
        let (_, stderr) = text(out);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", path.display());
        assert!(!stderr.contains("panicked"), "{stderr}");
        // The kernel's words, or SQLite's for the database copy.
        assert!(stderr.contains("No space left on device") || stderr.contains("disk is full"), "{stderr}");
        assert!(stderr.contains(&format!("{} is left as it was", path.display())), "{stderr}");
    }
    let after: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(before == after, "an old file changed on the full disk");
    // The runs themselves were measured and stored; only their workbooks could not be written.
    assert_eq!(stored_runs(&db), runs_before + 2);
    let mut names: Vec<String> = std::fs::read_dir(&tmpfs.point)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["b.sqlite", "b.xlsx", "filler", "r.html", "w.xlsx"], "temporary files left behind");
}

#[test]
fn study_logs_never_write_into_the_database_nor_over_a_foreign_file() {
    let sb = Sandbox::new();
    let db = sb.db();
    let study = sb.dir.path().join("s.toml");
    std::fs::write(
        &study,
        format!(
            "version = 1\nname = \"s\"\nsetup = \"echo setup-$((40 + 2))\"\n[[config]]\nname = \"a\"\ntarget = \"{}\"\n\
             [[step]]\nsuite = \"iozone\"\nargs = {{ files = \"64k\", records = \"4k\", tests = \"write\" }}\n",
            sb.target().display()
        ),
    )
    .unwrap();
    // The database exists (with a run) before the study's first log is written.
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    let logs = sb.dir.path().join("studies/s-1");
    std::fs::create_dir_all(&logs).unwrap();
    let log = logs.join("setup.log");
    // The study writes its record into the database (its file's text too); the setup's output
    // ("setup-42", not in the file) written into it would show.
    let untouched = || {
        let bytes = std::fs::read(&db).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        !text.contains("iomatrix study log") && !text.contains("setup-42") && stored_runs(&db) == 1
    };
    let plant: Vec<(&str, Plant)> = vec![
        ("a symlink to the database", Box::new(|| std::os::unix::fs::symlink(&db, &log).unwrap())),
        ("a hard link to the database", Box::new(|| std::fs::hard_link(&db, &log).unwrap())),
    ];
    for (what, make) in &plant {
        make();
        let out = sb.run(&["study", "run", study.to_str().unwrap()]);
        assert_usage_error(&out, "iomatrix never writes over it");
        assert!(untouched(), "{what}: a log was written into the database");
        std::fs::remove_file(&log).unwrap();
    }
    std::fs::write(&log, b"").unwrap();
    if let Some(bind) = Bind::new(&db, &log) {
        let out = sb.run(&["study", "run", study.to_str().unwrap()]);
        assert_usage_error(&out, "iomatrix never writes over it");
        drop(bind);
        assert!(untouched(), "a bind mount: a log was written into the database");
    }
    // A file of the user's where a log goes: refused, then replaced with --force.
    std::fs::write(&log, NOTES).unwrap();
    let out = sb.run(&["study", "run", study.to_str().unwrap()]);
    assert_usage_error(&out, "is not an iomatrix study log");
    assert_eq!(std::fs::read(&log).unwrap(), NOTES);
    let out = sb.run(&["study", "run", "--force", study.to_str().unwrap()]);
    assert_success(&out);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("# iomatrix study log") && text.contains("setup-42"), "{text}");
    // A study log already there (as a resumed study finds its own) is appended to, never rewritten.
    let second = sb.dir.path().join("studies/s-2/setup.log");
    std::fs::create_dir_all(second.parent().unwrap()).unwrap();
    std::fs::write(&second, "# iomatrix study log: earlier\nkept line\n").unwrap();
    let restarted = sb.run(&["study", "run", "--restart", study.to_str().unwrap()]);
    assert_success(&restarted);
    let text = std::fs::read_to_string(&second).unwrap();
    assert!(text.starts_with("# iomatrix study log: earlier\nkept line\n") && text.contains("setup-42"), "{text}");
}

#[test]
fn end_of_run_cleanup_never_empties_a_bind_mount_inside_the_working_folder() {
    if !is_root() {
        return skip("a bind mount needs root");
    }
    let sb = Sandbox::new();
    let _unmount = UnmountUnder(sb.dir.path().to_path_buf());
    // A folder of the user's on the same file system as the target.
    let precious = sb.dir.path().join("precious");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(precious.join("keep-me"), "data").unwrap();
    let hook = format!("mkdir m && mount --bind {} m", precious.display());
    let out = sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write", "--after", &hook]);
    let (_, stderr) = text(&out);
    assert_eq!(std::fs::read_to_string(precious.join("keep-me")).unwrap(), "data", "the bind mount was emptied");
    assert!(stderr.contains("could not remove the working folder"), "{stderr}");
    assert!(stderr.contains("client-0/m: a mount point (another file system, or a bind mount"), "{stderr}");
    // Once unmounted, clean removes the rest.
    let folder = sb.leftovers().pop().expect("the working folder, left with the mount");
    assert!(Command::new("umount").arg(folder.join("client-0/m")).status().unwrap().success());
    let out = sb.run(&["clean", sb.target().to_str().unwrap()]);
    assert_success(&out);
    assert!(sb.leftovers().is_empty());
    assert_eq!(std::fs::read_to_string(precious.join("keep-me")).unwrap(), "data");
}

/// A marker as a crashed run left it: a real run's (kept), its pid above Linux's largest.
fn plant_crashed_run(sb: &Sandbox, name: &str) -> PathBuf {
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write", "--keep"]);
    let kept = sb.leftovers().pop().unwrap();
    let mut marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(kept.join(".iomatrix-workdir")).unwrap()).unwrap();
    marker["pid"] = 4_194_304.into();
    marker["keep"] = false.into();
    let folder = sb.target().join(name);
    std::fs::create_dir_all(folder.join("client-0")).unwrap();
    std::fs::write(folder.join("client-0/iozone.tmp"), vec![7u8; 4096]).unwrap();
    std::fs::write(folder.join(".iomatrix-workdir"), marker.to_string()).unwrap();
    std::fs::remove_dir_all(kept).unwrap();
    folder
}

#[test]
fn clean_never_empties_a_bind_mount_of_the_same_file_system() {
    let sb = Sandbox::new();
    let folder = plant_crashed_run(&sb, "iomatrix-1-1");
    let precious = sb.dir.path().join("precious");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(precious.join("keep-me"), "data").unwrap();
    let point = folder.join("client-0/m");
    std::fs::create_dir(&point).unwrap();
    // Same file system: st_dev alike, only the mount id tells it.
    let Some(bind) = Bind::new(&precious, &point) else { return };
    let out = sb.run(&["clean", sb.target().to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("client-0/m: a mount point (another file system, or a bind mount"), "{stderr}");
    assert!(stdout.contains("1 could not be removed"), "{stdout}");
    assert_eq!(std::fs::read_to_string(precious.join("keep-me")).unwrap(), "data", "clean emptied the bind mount");
    // The marker stays with what is left, so the folder is still known; once unmounted it goes.
    assert!(folder.join(".iomatrix-workdir").exists());
    drop(bind);
    assert_success(&sb.run(&["clean", sb.target().to_str().unwrap()]));
    assert!(!folder.exists());
    assert_eq!(std::fs::read_to_string(precious.join("keep-me")).unwrap(), "data");
}

/// `iomatrix run access` for `duration` in a PID namespace of its own (it is pid 1 there).
fn run_in_pid_namespace(sb: &Sandbox, duration: &str) -> Running {
    let child = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(["run", "access", "--target", sb.target().to_str().unwrap(), "--duration", duration])
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare");
    Running(child)
}

/// Waits (at most 60 s) for the run's marker to name its run, `run_id`; the folder.
fn wait_for_marker(sb: &Sandbox, child: &mut Running, run_id: i64) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(folder) = sb.leftovers().pop() {
            let marker = std::fs::read_to_string(folder.join(".iomatrix-workdir")).unwrap_or_default();
            if marker.contains(&format!("\"run_id\": {run_id},")) {
                return folder;
            }
        }
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before its marker named it");
        assert!(Instant::now() < deadline, "no marker within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn clean_leaves_a_live_run_in_another_pid_namespace() {
    if !is_root() || !have("unshare") {
        return skip("a PID namespace needs root and unshare");
    }
    let sb = Sandbox::new();
    let mut child = run_in_pid_namespace(&sb, "6s");
    let folder = wait_for_marker(&sb, &mut child, 1);
    let marker = std::fs::read_to_string(folder.join(".iomatrix-workdir")).unwrap();
    assert!(marker.contains("\"pid\": 1,"), "the run is pid 1 of its namespace: {marker}");
    let out = sb.run(&["clean", sb.target().to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("in use by a running iomatrix (pid 1 of another PID namespace on"), "{stdout}");
    // --force never removes a folder whose lock is held.
    let out = sb.run(&["clean", "--force", sb.target().to_str().unwrap()]);
    assert_success(&out);
    assert!(folder.join(".iomatrix-workdir").exists(), "clean removed a live run's folder");
    let status = wait_for_exit(&mut child);
    assert!(status.success(), "the run in the namespace failed");
    assert!(sb.leftovers().is_empty(), "the run removed its own folder at its end");

    // Killed outright in its namespace: its lock is released, and clean knows it for a leftover.
    let mut child = run_in_pid_namespace(&sb, "30s");
    let folder = wait_for_marker(&sb, &mut child, 2);
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = sb.run(&["clean", "--dry-run", sb.target().to_str().unwrap()]);
        if text(&out).0.contains("would remove") {
            break;
        }
        assert!(Instant::now() < deadline, "the killed run's folder is still taken for a live one");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_success(&sb.run(&["clean", sb.target().to_str().unwrap()]));
    assert!(!folder.exists());
}

#[test]
fn study_names_cannot_reach_outside_the_log_folder() {
    let sb = Sandbox::new();
    for (line, name) in [("config", "../../escaped"), ("step", "a/b"), ("config", "tab\\there")] {
        let text = format!(
            "version = 1\nname = \"s\"\n[[config]]\nname = \"{}\"\ntarget = \"{}\"\n[[step]]\nname = \"{}\"\n\
             suite = \"iozone\"\nargs = {{ files = \"64k\", records = \"4k\", tests = \"write\" }}\n",
            if line == "config" { name } else { "a" },
            sb.target().display(),
            if line == "step" { name } else { "w" },
        );
        let study = sb.dir.path().join("s.toml");
        std::fs::write(&study, text).unwrap();
        let out = sb.run(&["study", "run", study.to_str().unwrap()]);
        let kind = if line == "config" { "configuration" } else { "step" };
        assert_usage_error(&out, &format!("{kind} name"));
        assert_usage_error(&out, "give 1 to 64 of the letters a-z and A-Z, the digits 0-9, '.', '_' and '-'");
    }
    // Nothing ran, nothing was written outside (or inside) the sandbox.
    assert!(!sb.db().exists());
    assert!(!sb.dir.path().join("studies").exists());
    assert!(!sb.dir.path().parent().unwrap().join("escaped.log").exists());
}

/// A pid whose process (a `sleep`) is killed on drop if it still runs.
struct Sleeper(i32);

impl Sleeper {
    fn alive(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0)).unwrap_or_default();
        !stat.is_empty() && !stat.contains(") Z ")
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.0)).unwrap_or_default();
        if self.alive() && cmdline.starts_with(b"sleep") {
            // SAFETY: kill(2) of the test's own sleep, checked by its command line just above.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
            }
        }
    }
}

#[test]
fn killing_a_study_in_its_setup_ends_the_setups_process_group() {
    let sb = Sandbox::new();
    let pid_file = sb.dir.path().join("background.pid");
    let study = sb.dir.path().join("s.toml");
    // A background job (which a non-interactive shell starts with SIGINT ignored), and a foreground one.
    std::fs::write(
        &study,
        format!(
            "version = 1\nname = \"s\"\nsetup = \"sleep 300 & echo $! > {}; sleep 300\"\n[[config]]\nname = \"a\"\n\
             target = \"{}\"\n[[step]]\nsuite = \"iozone\"\nargs = {{ files = \"64k\", records = \"4k\" }}\n",
            pid_file.display(),
            sb.target().display()
        ),
    )
    .unwrap();
    let mut child =
        Running(sb.cmd().args(["study", "run", study.to_str().unwrap()]).stderr(Stdio::piped()).spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    let background = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
            break Sleeper(pid);
        }
        assert!(child.0.try_wait().unwrap().is_none(), "the study ended before its setup began");
        assert!(Instant::now() < deadline, "the setup did not start within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(background.alive());
    // Ctrl-C, as a terminal sends it to the study.
    // SAFETY: kill(2) of the study this test started.
    unsafe {
        libc::kill(child.0.id() as i32, libc::SIGINT);
    }
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(130));
    let deadline = Instant::now() + Duration::from_secs(10);
    while background.alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!background.alive(), "the setup's background job {} outlived the study", background.0);
    // Stopped, not failed: its step is still to run.
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("0 of 1 steps done, interrupted"), "{stderr}");
}
