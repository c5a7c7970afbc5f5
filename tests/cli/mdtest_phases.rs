//! IO500's separate mdtest invocations on one folder (issue 51): `-C` leaves its items in -d in
//! mdtest's layout, `-T`, `-E` and `-r` work on what it left (reading `-x`'s count back), and
//! `-r` removes mdtest's names only. The attacks: a stat of nothing (ENOENT counted, never a
//! rate), a user's own files beside and inside mdtest's tree, `-x` at a device or a 10 GiB
//! sparse file, and SIGTERM of a `-C` run (what it made stays, as docs/metadata.md says).

use crate::helpers::*;
use iomatrix_metadata::import::summary::parse_outputs;
use iomatrix_metadata::Phase;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// `iomatrix mdtest ARGS -d DIR`, bounded in time.
fn mdtest(sb: &Sandbox, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = sb.cmd();
    cmd.arg("mdtest").args(args).args(["-d", dir.to_str().unwrap()]);
    bounded_child(cmd, Duration::from_secs(300))
}

/// The entries below `dir` whose names mdtest gives (files `file.mdtest.*`, folders
/// `dir.mdtest.*`, `mdtest_tree.*`, `test-dir.*`), by path.
fn mdtest_named(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().map(Result::unwrap) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let named =
                ["file.mdtest.", "dir.mdtest.", "mdtest_tree.", "test-dir."].iter().any(|p| name.starts_with(p));
            if named {
                found.push(entry.path());
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    found
}

/// The files named `file.mdtest.*` below `dir`, with their sizes.
fn mdtest_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    mdtest_named(dir)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("file.mdtest."))
        .map(|p| {
            let len = std::fs::metadata(&p).unwrap().len();
            (p, len)
        })
        .collect()
}

/// The last stored run's cell of `phase`.
fn stored_cell(sb: &Sandbox, phase: Phase) -> Value {
    let run = sb.last_run();
    cells(&run).into_iter().find(|c| c["test"] == phase.name()).unwrap_or_else(|| panic!("no {phase:?} in {run}"))
}

/// tmpfs for the run's folder (the issue's IO500 sequence runs there), else the sandbox's folder.
fn tmpfs_or_target(sb: &Sandbox) -> (Option<Mount>, PathBuf) {
    match Mount::try_virtual_fs("tmpfs", "size=256m") {
        Ok(m) => {
            let point = m.point.clone();
            (Some(m), point)
        }
        Err(why) => {
            println!("tmpfs: {why}; in the sandbox's folder instead");
            (None, sb.target())
        }
    }
}

#[test]
fn trust_reuse_io500s_easy_sequence_runs_as_separate_invocations() {
    let sb = Sandbox::new();
    let (_mount, d) = tmpfs_or_target(&sb);
    let x = sb.dir.path().join("mdtest-easy.stonewall");
    let x = x.to_str().unwrap();
    let line = ["-n", "200", "-u", "-L", "-F", "-x", x];
    let write = mdtest(&sb, &d, &[&line[..], &["-C", "-W", "5"]].concat());
    assert_success(&write);
    // -C leaves its files where mdtest does: 200 of them, in test-dir.0-0/mdtest_tree.0.0.
    let files = mdtest_files(&d);
    assert_eq!(files.len(), 200, "{files:?}");
    assert!(files.iter().all(|(p, _)| p.starts_with(d.join("test-dir.0-0/mdtest_tree.0.0"))), "{files:?}");
    assert_eq!(std::fs::read_to_string(x).unwrap(), "200", "-x: every task went on to all 200");
    assert!(leftovers(&d).is_empty(), "no iomatrix working folder stays: {:?}", leftovers(&d));

    let stat = mdtest(&sb, &d, &[&line[..], &["-T"]].concat());
    assert_success(&stat);
    let (stdout, _) = text(&stat);
    let out = parse_outputs(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}")).remove(0);
    let row = out.rate.as_ref().unwrap().row(Phase::FileStat).unwrap();
    assert!(row.ran() && row.mean() > 0.0, "{stdout}");
    let cell = stored_cell(&sb, Phase::FileStat);
    assert_eq!(cell["metrics"]["phase"]["items"].as_u64(), Some(200), "{cell}");
    assert!(cell["metrics"]["per_sec"].as_f64().unwrap() > 0.0, "{cell}");
    assert!(cell["metrics"]["errors"].as_object().unwrap().is_empty(), "{cell}");
    assert_eq!(mdtest_files(&d).len(), 200, "a stat run removes nothing");
    // -x's count, read back: a write the stonewall cut at 150 leaves a stat of 150 files.
    std::fs::write(x, "150").unwrap();
    assert_success(&mdtest(&sb, &d, &[&line[..], &["-T"]].concat()));
    assert_eq!(stored_cell(&sb, Phase::FileStat)["metrics"]["phase"]["items"].as_u64(), Some(150));
    std::fs::write(x, "200").unwrap();

    let remove = mdtest(&sb, &d, &[&line[..], &["-r"]].concat());
    assert_success(&remove);
    assert_eq!(stored_cell(&sb, Phase::FileRemove)["metrics"]["phase"]["items"].as_u64(), Some(200));
    assert!(mdtest_named(&d).is_empty(), "-r leaves nothing mdtest-named: {:?}", mdtest_named(&d));
    assert!(leftovers(&d).is_empty());
}

#[test]
fn trust_reuse_io500s_hard_sequence_reads_what_the_write_left() {
    let sb = Sandbox::new();
    let (_mount, d) = tmpfs_or_target(&sb);
    let x = sb.dir.path().join("mdtest-hard.stonewall");
    let x = x.to_str().unwrap();
    let line = ["-n", "200", "-t", "-w", "3901", "-e", "3901", "-N", "1", "-F", "-x", x];
    assert_success(&mdtest(&sb, &d, &[&line[..], &["-C", "-W", "5"]].concat()));
    let files = mdtest_files(&d);
    assert_eq!(files.len(), 200, "one shared folder, 200 files");
    assert!(files.iter().all(|(p, len)| *len == 3901 && p.starts_with(d.join("test-dir.0-0/mdtest_tree.0"))));
    assert_success(&mdtest(&sb, &d, &[&line[..], &["-T"]].concat()));
    assert_eq!(stored_cell(&sb, Phase::FileStat)["metrics"]["phase"]["items"].as_u64(), Some(200));
    assert_success(&mdtest(&sb, &d, &[&line[..], &["-E"]].concat()));
    let read = stored_cell(&sb, Phase::FileRead);
    assert_eq!(read["metrics"]["phase"]["items"].as_u64(), Some(200), "{read}");
    assert_eq!(read["bytes"].as_u64(), Some(200 * 3901), "-e 3901 of each file the write left");
    assert_success(&mdtest(&sb, &d, &[&line[..], &["-r"]].concat()));
    assert!(mdtest_named(&d).is_empty(), "{:?}", mdtest_named(&d));
}

#[test]
fn trust_reuse_a_stat_of_nothing_counts_enoent_never_a_rate() {
    let sb = Sandbox::new();
    let d = sb.target();
    let out = mdtest(&sb, &d, &["-n", "50", "-F", "-T"]);
    let (stdout, stderr) = text(&out);
    // As every run of the suite whose cells failed: not complete, exit 3, not a usage error.
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    let cell = stored_cell(&sb, Phase::FileStat);
    assert_eq!(cell["metrics"]["errors"]["ENOENT"].as_u64(), Some(50), "{cell}");
    assert_eq!(cell["metrics"]["phase"]["items"].as_u64(), Some(0), "{cell}");
    assert_eq!(cell["metrics"]["per_sec"].as_f64(), Some(0.0), "no rate of items not done: {cell}");
    assert_eq!(cell["state"]["kind"], "failed", "{cell}");
    assert!(std::fs::read_dir(&d).unwrap().next().is_none(), "a stat run made nothing");
}

#[test]
fn trust_reuse_remove_spares_a_users_own_files() {
    let sb = Sandbox::new();
    let d = sb.target();
    let line = ["-n", "20", "-F"];
    assert_success(&mdtest(&sb, &d, &[&line[..], &["-C"]].concat()));
    let beside = d.join("mine.txt");
    let inside = d.join("test-dir.0-0/mdtest_tree.0/notes.txt");
    let lookalike = d.join("test-dir.0-0/mdtest_tree.0/file.mdtest.0.99");
    for f in [&beside, &inside, &lookalike] {
        std::fs::write(f, "the user's").unwrap();
    }
    let out = mdtest(&sb, &d, &[&line[..], &["-r"]].concat());
    let (stdout, stderr) = text(&out);
    assert!(mdtest_files(&d).iter().all(|(p, _)| *p == lookalike), "the 20 items gone: {:?}", mdtest_files(&d));
    for f in [&beside, &inside, &lookalike] {
        assert_eq!(std::fs::read_to_string(f).unwrap(), "the user's", "{} survives", f.display());
    }
    // The tree's folder holds the user's files: its removal fails (counted), never forced.
    let tree = stored_cell(&sb, Phase::TreeRemove);
    assert_eq!(tree["metrics"]["errors"]["ENOTEMPTY"].as_u64(), Some(1), "{tree}\n{stdout}\n{stderr}");
    assert_eq!(stored_cell(&sb, Phase::FileRemove)["metrics"]["phase"]["items"].as_u64(), Some(20));
}

#[test]
fn trust_reuse_run_metadata_in_place_leaves_and_finds_items() {
    let sb = Sandbox::new();
    let d = sb.target();
    let run = |phases: &str| {
        let mut cmd = sb.cmd();
        cmd.args(["run", "metadata", "--target", d.to_str().unwrap(), "--in-place", "--files-only"]);
        cmd.args(["--items", "30", "--per-client-folder", "--phases", phases]);
        bounded_child(cmd, Duration::from_secs(300))
    };
    assert_success(&run("tree-create,file-create"));
    assert_eq!(mdtest_files(&d).len(), 30);
    assert_success(&run("file-stat,file-read"));
    assert_eq!(stored_cell(&sb, Phase::FileStat)["metrics"]["phase"]["items"].as_u64(), Some(30));
    assert_success(&run("file-remove,tree-remove"));
    assert!(mdtest_named(&d).is_empty(), "{:?}", mdtest_named(&d));
    // Without --in-place, a phase without its maker is refused, naming --in-place.
    let mut cmd = sb.cmd();
    cmd.args(["run", "metadata", "--target", d.to_str().unwrap(), "--files-only", "--phases", "file-stat"]);
    assert_usage_error(&bounded_child(cmd, Duration::from_secs(60)), "--in-place");
}

#[test]
fn trust_reuse_x_at_a_device_or_a_huge_file_is_refused_at_once() {
    let sb = Sandbox::new();
    let d = sb.target();
    let sparse = sb.dir.path().join("sparse");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let words = sb.dir.path().join("words");
    std::fs::write(&words, "many").unwrap();
    for (x, says) in [
        ("/dev/zero", "a device (character)"),
        (sparse.to_str().unwrap(), "more than the bound of a stonewall status file"),
        (words.to_str().unwrap(), "not the one whole number"),
    ] {
        let began = Instant::now();
        let out = mdtest(&sb, &d, &["-n", "10", "-F", "-T", "-x", x]);
        println!("-x {x}: {:?}", began.elapsed());
        assert_usage_error(&out, says);
        assert!(began.elapsed() < Duration::from_secs(60), "-x {x} took {:?}", began.elapsed());
    }
    assert!(std::fs::read_dir(&d).unwrap().next().is_none(), "nothing made");
    // A count beyond -n cannot be the earlier run's.
    std::fs::write(&words, "11").unwrap();
    assert_usage_error(&mdtest(&sb, &d, &["-n", "10", "-F", "-T", "-x", words.to_str().unwrap()]), "1 to the 10");
    // Absent: mdtest's warning, and -n's count.
    let absent = sb.dir.path().join("absent");
    let out = mdtest(&sb, &d, &["-n", "10", "-F", "-T", "-x", absent.to_str().unwrap()]);
    assert!(text(&out).1.contains("no such file"), "{}", text(&out).1);
    assert_eq!(stored_cell(&sb, Phase::FileStat)["metrics"]["errors"]["ENOENT"].as_u64(), Some(10));
}

#[test]
fn trust_reuse_sigterm_of_a_create_run_leaves_what_it_made_and_says_so() {
    let sb = Sandbox::new();
    let d = sb.target();
    // IO500's write: a count the stonewall is meant to cut (not checked against free inodes).
    // Its standard error to a file: a pipe nobody reads would stop it once full.
    let said = sb.dir.path().join("stderr");
    let mut child = Running(
        sb.cmd()
            .args(["mdtest", "-n", "5000000", "-F", "-C", "-W", "600", "-d", d.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&said).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let folder = d.join("test-dir.0-0/mdtest_tree.0");
    while std::fs::read_dir(&folder).map_or(0, |r| r.count()) < 100 {
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before making 100 files");
        assert!(Instant::now() < deadline, "no 100 files within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    let status = wait_for_exit(&mut child);
    let stderr = std::fs::read_to_string(&said).unwrap();
    // Stopped in its last cell: stored as not complete (partial), exit non-zero, as
    // trust_metadata_sigterm_leaves_no_tree_and_nothing_complete finds of a run in a working folder.
    println!("exit: {status:?}");
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("what this run made in place stays in"), "{stderr}");
    let left = mdtest_files(&d).len();
    println!("left after SIGTERM: {left} files");
    assert!(left >= 100, "what it made stays: {left}");
    assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
    assert_ne!(sb.last_run()["run"]["status"], "complete");
}

#[test]
fn trust_reuse_two_mpi_ranks_run_io500s_steps_on_each_others_files() {
    let Some(bin) = crate::mpi::mpi_binary() else { return };
    let sb = Sandbox::new();
    let d = sb.target();
    let x = sb.dir.path().join("sw");
    let line = [bin.to_str().unwrap(), "mdtest", "-n", "50", "-u", "-L", "-F", "-N", "1", "-w", "10", "-e", "10"];
    let place = ["-d", d.to_str().unwrap(), "-x", x.to_str().unwrap()];
    let step = |phase: &[&str]| {
        let args = [&line[..], &place[..], phase].concat();
        let (out, took) = crate::mpi::mpirun(&sb, 2, &args, Duration::from_secs(180));
        println!("{phase:?}: {took:?}");
        assert_success(&out);
    };
    step(&["-C", "-W", "5"]);
    assert_eq!(mdtest_files(&d).len(), 100, "each rank's 50, in its own tree");
    assert_eq!(std::fs::read_to_string(&x).unwrap(), "50");
    // -N 1: each rank stats and reads the other's files, found where the other left them.
    step(&["-T"]);
    let stat = stored_cell(&sb, Phase::FileStat);
    assert_eq!(stat["metrics"]["phase"]["items"].as_u64(), Some(100), "{stat}");
    assert!(stat["metrics"]["errors"].as_object().unwrap().is_empty(), "{stat}");
    step(&["-E"]);
    assert_eq!(stored_cell(&sb, Phase::FileRead)["bytes"].as_u64(), Some(100 * 10));
    step(&["-r"]);
    assert!(mdtest_named(&d).is_empty(), "{:?}", mdtest_named(&d));
    assert!(leftovers(&d).is_empty());
}
