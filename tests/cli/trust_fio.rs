//! Issue 48, finding 6: `iomatrix fio` streams. A finished job's output is written and its
//! figures dropped before the next job starts, so a job file of 10,000 jobs runs in bounded
//! memory and prints every job; job counts go through the plan-time limit check `run` makes
//! (one function, naming the binding limit) before a line is printed.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Instant;

/// A tmpfs for the jobs' files (root), else the sandbox's own target folder.
fn scratch(sb: &Sandbox) -> (Option<Mount>, PathBuf) {
    match Mount::try_virtual_fs("tmpfs", "size=256m") {
        Ok(m) => {
            let p = m.point.clone();
            (Some(m), p)
        }
        Err(_) => (None, sb.target()),
    }
}

/// A job file of `jobs` jobs of one 4 KiB random-read file each, run in `folder`.
fn many_jobs_file(sb: &Sandbox, jobs: usize, folder: &Path) -> PathBuf {
    let mut text = format!("[global]\nsize=4k\nbs=4k\nrw=randread\nstonewall\ndirectory={}\n", folder.display());
    for i in 0..jobs {
        text += &format!("[job{i}]\n");
    }
    let path = sb.dir.path().join("many.fio");
    std::fs::write(&path, text).unwrap();
    path
}

/// `iomatrix ARGS` under GNU time, with the sandbox's database: its output, and the peak RSS in KiB
/// that time measured.
fn run_timed(sb: &Sandbox, args: &[&str]) -> (Output, u64) {
    run_timed_with_db(sb, &sb.db(), args)
}

/// [`run_timed`] with the results database at `db`.
fn run_timed_with_db(sb: &Sandbox, db: &Path, args: &[&str]) -> (Output, u64) {
    let rss_file = sb.dir.path().join("rss");
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", rss_file.to_str().unwrap(), env!("CARGO_BIN_EXE_iomatrix")])
        .args(args)
        .env("IOMATRIX_DB", db)
        .env(crate::helpers::BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run /usr/bin/time");
    let rss = std::fs::read_to_string(&rss_file).unwrap_or_default();
    let kib =
        rss.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("GNU time wrote {rss:?}"));
    (out, kib)
}

/// The limit a plan-time refusal names: the words between "but " and " leaves room".
fn named_limit(stderr: &str) -> String {
    let start =
        stderr.find(", but ").map(|i| i + ", but ".len()).unwrap_or_else(|| panic!("no limit named:\n{stderr}"));
    let end = stderr[start..].find(" leaves room").unwrap_or_else(|| panic!("no limit named:\n{stderr}"));
    stderr[start..start + end].to_string()
}

/// 10,000 jobs of `size=4k`: peak RSS under 100 MB (GNU time's %M), every job's block and
/// group line printed. Before issue 48 every finished job's figures stayed in memory (about
/// 540 KB each: two latency histograms) and nothing was printed until the last job ended.
/// Each job is a stored run; what does not change between jobs (the database opened and checked,
/// the folder's environment, the machine's limits) is done once per command, so a job's cost does
/// not grow with the database: some 14 ms of CPU in a debug build (27 ms before, growing). On the
/// loaded 2-core VM the 10,000 jobs take minutes of wall time, not the seconds CI would like.
#[test]
fn ten_thousand_small_jobs_run_in_bounded_memory_and_print_every_job() {
    const JOBS: usize = 10_000;
    if !Path::new("/usr/bin/time").exists() {
        return skip("GNU time (/usr/bin/time) is not installed");
    }
    let sb = Sandbox::new();
    let (mount, folder) = scratch(&sb);
    let file = many_jobs_file(&sb, JOBS, &folder);
    // The database on the jobs' tmpfs too (some 60 MB for 10,000 runs): each job is a stored run
    // whose commits fsync, and on the disk those fsyncs were a quarter of each job's wall time
    // (300 jobs: 19.5 s, 14.9 s on tmpfs). Where the database is changes neither the memory bound
    // nor the lines checked.
    let db = mount.as_ref().map_or_else(|| sb.db(), |m| m.point.join("results.sqlite"));
    let started = Instant::now();
    let (out, rss_kib) = run_timed_with_db(&sb, &db, &["fio", file.to_str().unwrap()]);
    let took = started.elapsed();
    assert_success(&out);
    let (stdout, _) = text(&out);
    let blocks = stdout.lines().filter(|l| l.contains(": (groupid=")).count();
    let groups = stdout.lines().filter(|l| l.starts_with("Run status group ")).count();
    let reads = stdout.lines().filter(|l| l.starts_with("   READ: bw=")).count();
    println!("{JOBS} jobs of 4 KiB: peak RSS {rss_kib} KiB, {:.1} s", took.as_secs_f64());
    assert_eq!((blocks, groups, reads), (JOBS, JOBS, JOBS), "every job's block and group lines");
    assert!(stdout.contains(&format!("job{}: (groupid={0}, jobs=1): err= 0", JOBS - 1)), "the last job's block");
    assert!(rss_kib < 100 * 1000, "peak RSS {rss_kib} KiB, 100 MB at most");
}

/// `--numjobs=100000000` is refused by the plan-time check with exit 2, naming the limit,
/// before "Starting ... processes" or any other line reaches standard output, and nothing runs.
#[test]
fn numjobs_past_the_machines_limits_is_refused_before_anything_is_printed() {
    let sb = Sandbox::new();
    let target = sb.target();
    let directory = format!("--directory={}", target.display());
    let out = sb.run(&["fio", "--name=t", "--size=4k", "--numjobs=100000000", &directory]);
    let (stdout, stderr) = text(&out);
    println!("{stderr}");
    assert_usage_error(&out, "leaves room for");
    assert!(stdout.is_empty(), "nothing on standard output before the refusal:\n{stdout}");
    assert!(stderr.contains("fio job t:") && stderr.contains("numjobs"), "named in fio's words:\n{stderr}");
    assert!(!stderr.contains("Starting"), "{stderr}");
    assert!(sb.leftovers().is_empty(), "no working folder made: {:?}", sb.leftovers());
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().is_none_or(Vec::is_empty), "no run stored");
}

/// `run access --clients 20000` and `fio --numjobs=20000` (the same plan) are refused naming
/// the same limit, the binding one, and so are 100,000,000: before issue 48 the first limit
/// passed was named, threads-max for one and vm.max_map_count for the other.
#[test]
fn run_and_fio_name_the_same_binding_limit() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let mut named = Vec::new();
    for count in ["20000", "100000000"] {
        let run = sb.run(&[
            "run",
            "access",
            "--target",
            t,
            "--clients",
            count,
            "--file-size",
            "4k",
            "--bs",
            "4k",
            "--read",
            "100",
            "--random",
            "100",
            "--qd",
            "1",
            "--bytes",
            "4k",
        ]);
        assert_usage_error(&run, "leaves room for");
        let fio = sb.run(&[
            "fio",
            "--name=t",
            "--size=4k",
            "--bs=4k",
            "--rw=randread",
            &format!("--numjobs={count}"),
            &format!("--directory={t}"),
        ]);
        assert_usage_error(&fio, "leaves room for");
        let (run_limit, fio_limit) = (named_limit(&text(&run).1), named_limit(&text(&fio).1));
        println!("{count}: run names {run_limit}, fio names {fio_limit}");
        assert_eq!(run_limit, fio_limit, "{count} clients:\nrun: {}\nfio: {}", text(&run).1, text(&fio).1);
        named.push(run_limit);
    }
    assert_eq!(named[0], named[1], "the same limit at 20,000 and 100,000,000");
}

/// A job file that is short but holds many [global] options and many sections (each job
/// inherits every option above it: 60,000 x 60,000 copies) is refused by the same memory check
/// with exit 2, without making the copies.
#[test]
fn a_job_file_whose_jobs_would_copy_its_options_past_memory_is_refused() {
    if !Path::new("/usr/bin/time").exists() {
        return skip("GNU time (/usr/bin/time) is not installed");
    }
    let sb = Sandbox::new();
    let mut text_of_file = String::from("[global]\n");
    text_of_file += &"bs=4k\n".repeat(60_000);
    text_of_file += &"[j]\n".repeat(60_000);
    assert!(text_of_file.len() < 1 << 20, "within the job file's 1 MiB bound");
    let file = sb.dir.path().join("copies.fio");
    std::fs::write(&file, text_of_file).unwrap();
    let (out, rss_kib) = run_timed(&sb, &["fio", file.to_str().unwrap()]);
    println!("refused at a peak RSS of {rss_kib} KiB:\n{}", text(&out).1);
    assert_usage_error(&out, "at most jobs");
    assert!(text(&out).0.is_empty(), "nothing printed");
    assert!(rss_kib < 100 * 1000, "peak RSS {rss_kib} KiB: the copies were not made");
}
