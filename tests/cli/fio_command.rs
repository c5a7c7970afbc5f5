//! `iomatrix fio`: fio's command line and job files on iomatrix's engine. Its JSON is read by
//! iomatrix's own fio importer and by a reader written the way fio-plot reads fio's JSON; the
//! same job run by real fio and by `iomatrix fio` on tmpfs gives figures within noise; every
//! option it does not run is refused by name (exit 2) before anything runs; hostile job files
//! and outputs are refused.

use crate::helpers::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A tmpfs for the jobs' files (root), else the sandbox's own target folder.
fn scratch(sb: &Sandbox) -> (Option<Mount>, PathBuf) {
    match Mount::try_virtual_fs("tmpfs", "size=512m") {
        Ok(m) => {
            let p = m.point.clone();
            (Some(m), p)
        }
        Err(_) => (None, sb.target()),
    }
}

fn fio_ok(sb: &Sandbox, args: &[&str]) -> (String, String) {
    let mut all = vec!["fio"];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    text(&out)
}

fn stored_runs(sb: &Sandbox) -> Vec<Value> {
    sb.runs_json()["runs"].as_array().cloned().unwrap_or_default()
}

/// fio-plot's reading of fio's JSON (fio_plot/fiolib/jsonparsing.py, get_json_mapping and
/// build_json_mapping): the root "jobs" (or "client_stats"), "global options" merged into each
/// job's "job options", from which iodepth, numjobs, bs and rw; the direction that `rw` maps
/// to (read for read and randread, write for write and randwrite, the first of the filter for
/// mixed jobs) gives bw, iops, iops_stddev, lat_ns.mean and lat_ns.stddev; then latency_ms,
/// latency_us, latency_ns, usr_cpu and sys_cpu. A key it indexes that is missing fails here as
/// a KeyError fails fio-plot.
#[derive(Debug)]
struct FioPlotRow {
    iodepth: String,
    numjobs: String,
    bs: String,
    rw: String,
    bw: f64,
    iops: f64,
    lat_mean: f64,
    cpu_usr: f64,
}

fn fio_plot_rows(doc: &Value, filter_first: &str) -> Vec<FioPlotRow> {
    let key = |v: &Value, k: &str| -> Value {
        v.get(k).unwrap_or_else(|| panic!("fio-plot indexes '{k}': missing in {v}")).clone()
    };
    let root = if doc.get("client_stats").is_some() { "client_stats" } else { "jobs" };
    let _version = key(doc, "fio version");
    let global = doc.get("global options").cloned().unwrap_or_else(|| serde_json::json!({}));
    let mut rows = Vec::new();
    for job in key(doc, root).as_array().expect("jobs is a list") {
        if key(job, "jobname") == "All clients" {
            continue;
        }
        let mut options = key(job, "job options").as_object().expect("job options").clone();
        options.extend(global.as_object().expect("global options").clone());
        let options = Value::Object(options);
        let rw = key(&options, "rw").as_str().unwrap().to_string();
        let mode = match rw.as_str() {
            "read" | "randread" => "read",
            "write" | "randwrite" => "write",
            "randrw" | "rw" | "readwrite" => filter_first,
            other => panic!("fio-plot maps no mode for rw={other}"),
        };
        let side = key(job, mode);
        let lat = key(&side, "lat_ns");
        let _ = (key(&side, "iops_stddev"), key(&lat, "stddev"));
        let _ = (key(job, "latency_ms"), key(job, "latency_us"), key(job, "latency_ns"), key(job, "sys_cpu"));
        let s = |v: Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
        rows.push(FioPlotRow {
            iodepth: s(key(&options, "iodepth")),
            numjobs: s(key(&options, "numjobs")),
            bs: s(key(&options, "bs")),
            rw,
            bw: key(&side, "bw").as_f64().expect("bw is a number"),
            iops: key(&side, "iops").as_f64().expect("iops is a number"),
            lat_mean: key(&lat, "mean").as_f64().expect("lat_ns.mean is a number"),
            cpu_usr: key(job, "usr_cpu").as_f64().expect("usr_cpu is a number"),
        });
    }
    rows
}

#[test]
fn fio_command_line_job_is_stored_and_its_json_is_read_by_the_importer_and_a_fio_plot_reader() {
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let dir_opt = format!("--directory={}", dir.display());
    let (stdout, stderr) = fio_ok(
        &sb,
        &[
            "--output-format=json",
            "--name=qd4",
            &dir_opt,
            "--rw=randread",
            "--bs=4k",
            "--size=8m",
            "--runtime=3",
            "--time_based",
            "--ioengine=libaio",
            "--iodepth=4",
            "--numjobs=1",
        ],
    );
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: stdout is fio's JSON only:\n{stdout}"));
    assert!(stderr.contains("ioengine=libaio runs on iomatrix's io_uring backend"), "{stderr}");
    assert!(stderr.contains("stored as run #1"), "{stderr}");
    let job = &doc["jobs"][0];
    assert_eq!(job["jobname"], "qd4");
    assert_eq!(job["iomatrix"]["backend"], "io_uring");
    let read = &job["read"];
    let ios = read["total_ios"].as_u64().unwrap();
    assert!(ios > 100, "{read}");
    assert_eq!(read["clat_ns"]["N"].as_u64(), Some(ios));
    assert!(read["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() >= read["clat_ns"]["min"].as_u64().unwrap());
    assert_eq!(job["write"]["total_ios"], 0);
    // Queued on io_uring: every request's submission latency apart (issue 52).
    assert_eq!(read["slat_ns"]["N"].as_u64(), Some(ios), "{read}");
    // fio's latency buckets share out every request once.
    let shares: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| job[*k].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>())
        .sum();
    assert!((shares - 100.0).abs() < 0.01, "the latency buckets hold {shares}% of the requests");

    // The stored run holds the figures the JSON prints.
    let run = sb.show_json(1)["run"].clone();
    assert_eq!(run["suite"], "access");
    assert!(run["labels"].to_string().contains("fio-job"), "{}", run["labels"]);
    let cell = &run["cell_results"][0];
    assert_eq!(cell["ops"].as_u64(), Some(ios));
    let stored_iops = cell["metrics"]["iops"].as_f64().unwrap();
    let printed_iops = read["iops"].as_f64().unwrap();
    assert!((stored_iops - printed_iops).abs() / stored_iops < 0.01, "stored {stored_iops}, printed {printed_iops}");

    // fio-plot's reading.
    let rows = fio_plot_rows(&doc, "read");
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        (row.iodepth.as_str(), row.numjobs.as_str(), row.bs.as_str(), row.rw.as_str()),
        ("4", "1", "4k", "randread")
    );
    assert!(row.iops == printed_iops && row.bw > 0.0 && row.lat_mean > 0.0 && row.cpu_usr >= 0.0, "{row:?}");

    // iomatrix's own importer.
    let file = sb.dir.path().join("out.json");
    std::fs::write(&file, &stdout).unwrap();
    let out = sb.run(&["import", file.to_str().unwrap()]);
    assert_success(&out);
    let imported = sb.show_json(2)["run"].clone();
    let icell = &imported["cell_results"][0];
    assert_eq!(icell["ops"].as_u64(), Some(ios), "{icell}");
    assert_eq!(icell["metrics"]["queue_depth"].as_u64(), Some(4), "{}", icell["metrics"]);
    assert_eq!(icell["record_size"].as_u64(), Some(4096));
    let iiops = icell["metrics"]["iops"].as_f64().unwrap();
    assert!((iiops - stored_iops).abs() / stored_iops < 0.01, "imported {iiops}, native {stored_iops}");
}

#[test]
fn fio_job_file_with_global_and_two_stonewalled_jobs_runs_both_in_turn() {
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let jobfile = sb.dir.path().join("two.fio");
    std::fs::write(
        &jobfile,
        format!(
            "; two jobs, one after the other\n[global]\ndirectory={}\nsize=8m\nbs=8k\nruntime=1\ntime_based\n\
             group_reporting\n\n[reads]\nrw=randread\n\n[mixed]\nstonewall\nrw=randrw\nrwmixread=70\nnumjobs=2\n",
            dir.display()
        ),
    )
    .unwrap();
    let (stdout, stderr) = fio_ok(&sb, &[jobfile.to_str().unwrap()]);
    assert!(stdout.starts_with("reads: (g=0): rw=randread, bs=(R) 8192B-8192B"), "{stdout}");
    assert!(stdout.contains("mixed: (g=1): rw=randrw"), "{stdout}");
    assert!(stdout.contains("Starting 3 processes"), "{stdout}");
    assert!(stdout.contains("reads: (groupid=0, jobs=1): err= 0"), "{stdout}");
    assert!(stdout.contains("mixed: (groupid=1, jobs=2): err= 0"), "{stdout}");
    let iops_lines = stdout.lines().filter(|l| l.starts_with("  read: IOPS=")).count();
    assert_eq!(iops_lines, 2, "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("  write: IOPS=")).count(), 1, "{stdout}");
    assert!(stdout.contains("Run status group 0 (all jobs):") && stdout.contains("Run status group 1 (all jobs):"));
    assert!(stdout.contains("    clat percentiles (") && stdout.contains("99.99th=["), "{stdout}");
    assert!(stderr.contains("fio job mixed stored as run #2"), "{stderr}");
    let runs = stored_runs(&sb);
    assert_eq!(runs.len(), 2);
    let mixed = sb.show_json(2)["run"].clone();
    assert_eq!(mixed["plan"]["read_percents"], serde_json::json!([70]));
    assert_eq!(mixed["plan"]["clients"], 2);
    assert_eq!(mixed["plan"]["block_sizes"][0], 8192);
    assert!(sb.leftovers().is_empty());
}

/// fio's ramp_time and random_distribution run as the access plan's warm-up and distribution.
#[test]
fn fio_ramp_time_and_random_distribution_are_run_and_stored_in_the_plan() {
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let directory = format!("--directory={}", dir.display());
    fio_ok(
        &sb,
        &[
            "--name=skewed",
            &directory,
            "--size=8m",
            "--bs=4k",
            "--rw=randread",
            "--runtime=1",
            "--time_based",
            "--ramp_time=500ms",
            "--random_distribution=zipf:1.2",
        ],
    );
    let plan = sb.show_json(1)["run"]["plan"].clone();
    assert_eq!(plan["ramp_ms"], 500, "{plan}");
    assert_eq!(plan["distribution"], "zipf:1.2", "{plan}");
    assert!(sb.leftovers().is_empty());
}

/// Each case: the words after `iomatrix fio`, and what the one error line must name.
#[test]
fn every_option_iomatrix_fio_does_not_run_is_refused_by_name_and_nothing_runs() {
    let sb = Sandbox::new();
    let dir = format!("--directory={}", sb.target().display());
    let base = ["--name=j", dir.as_str(), "--size=1m", "--runtime=1", "--time_based"];
    let cases: &[(&[&str], &str)] = &[
        (&["--verify=md5"], "fio option verify (the command line) is not run by iomatrix fio"),
        (&["--rw=trim"], "no trims (discards)"),
        (&["--rw=randread:8"], "holes between sequential requests (:N) are not supported"),
        (&["--bsrange=4k-64k"], "a range of block sizes is not run"),
        (&["--bssplit=4k/50:64k/40"], "the shares add up to 90%, not 100"),
        (&["--bs=4k,64k"], "different block sizes"),
        (&["--ioengine=mmap"], "'mmap' is not run by iomatrix's engine"),
        (&["--iodepth=8"], "iodepth=8 without ioengine"),
        (&["--iodepth=8", "--ioengine=psync"], "a synchronous engine keeps one request in flight"),
        (&["--random_distribution=zipf:1"], "theta must be above 0 and not 1"),
        (&["--filename=a:b"], "names several files"),
        (&["--size=50%"], "a size as a share"),
        (&["--output-format=json+"], "json+"),
        (&["-x"], "fio option -x"),
        (&["--ioengine=io_uring", "--iodepth=10000000"], "above what io_uring accepts"),
        (&["--bs=2m"], "larger than the file"),
        (&["--numjobs=10000000"], "--clients"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["fio"];
        args.extend_from_slice(&base);
        args.extend_from_slice(extra);
        assert_usage_error(&sb.run(&args), needle);
    }
    // runtime without time_based; time_based without runtime; no size.
    let t = sb.target();
    let d = format!("--directory={}", t.display());
    assert_usage_error(&sb.run(&["fio", "--name=j", &d, "--size=1m", "--runtime=1"]), "runtime without time_based");
    assert_usage_error(&sb.run(&["fio", "--name=j", &d, "--size=1m", "--time_based"]), "time_based without runtime");
    assert_usage_error(&sb.run(&["fio", "--name=j", &d, "--rw=read"]), "size is not given");
    assert_usage_error(&sb.run(&["fio"]), "no job given");
    assert_usage_error(&sb.run(&["fio", "--rw=read"]), "no job: fio's command line starts each job with --name");
    assert!(stored_runs(&sb).is_empty(), "a refused job runs nothing");
}

#[test]
fn fio_jobs_at_once_refuse_what_they_do_not_run_yet_with_the_fix() {
    let sb = Sandbox::new();
    let jobfile = sb.dir.path().join("together.fio");
    std::fs::write(
        &jobfile,
        format!("[global]\ndirectory={}\nsize=1m\n[a]\n[b]\nrw=write\nss=iops:5%\nss_dur=2\n", sb.target().display()),
    )
    .unwrap();
    assert_usage_error(
        &sb.run(&["fio", jobfile.to_str().unwrap()]),
        "job b: steadystate in a group of jobs run at once (no stonewall between them) is not built yet; add stonewall",
    );
    // A group is checked against the machine's limits as one run: 40 jobs of 2,000 clients each
    // (some 144 GiB of histograms and buffers), each job alone within them.
    let jobs: String = (0..40).map(|i| format!("[j{i}]\nnumjobs=2000\n")).collect();
    std::fs::write(&jobfile, format!("[global]\ndirectory={}\nsize=1m\n{jobs}", sb.target().display())).unwrap();
    assert_usage_error(&sb.run(&["fio", jobfile.to_str().unwrap()]), "40 jobs run at once, 80000 client(s) in all");
    // A refused option in the last job costs no run of the first.
    std::fs::write(
        &jobfile,
        format!("[global]\ndirectory={}\nsize=1m\n[a]\n[b]\nstonewall\nfsync=1\n", sb.target().display()),
    )
    .unwrap();
    assert_usage_error(&sb.run(&["fio", jobfile.to_str().unwrap()]), "fio option fsync (line 7 of");
    assert!(stored_runs(&sb).is_empty());
}

#[test]
fn fio_job_files_that_are_devices_or_huge_sparse_files_are_refused_unread() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["fio", "/dev/zero"]), "/dev/zero");
    let sparse = sb.dir.path().join("huge.fio");
    let f = std::fs::File::create(&sparse).unwrap();
    f.set_len(10 << 30).unwrap();
    let started = std::time::Instant::now();
    assert_usage_error(&sb.run(&["fio", sparse.to_str().unwrap()]), "huge.fio");
    assert!(started.elapsed().as_secs() < 10, "refused unread, not read through");
    assert_usage_error(&sb.run(&["fio", "/no/such/job.fio"]), "/no/such/job.fio");
    assert!(stored_runs(&sb).is_empty());
}

#[test]
fn fio_filename_naming_the_results_database_or_a_device_is_refused() {
    let sb = Sandbox::new();
    // The database exists once a run is listed.
    assert_success(&sb.run(&["runs"]));
    let db = format!("--filename={}", sb.db().display());
    let out = sb.run(&["fio", "--name=j", &db, "--size=1m", "--rw=write"]);
    assert_usage_error(&out, "is the results database");
    let before = std::fs::metadata(sb.db()).map(|m| m.len()).ok();
    assert!(before.is_some_and(|len| len > 0), "the database is untouched");
    assert_usage_error(&sb.run(&["fio", "--name=j", "--filename=/dev/null", "--size=1m"]), "is a device");
    assert!(stored_runs(&sb).is_empty());
}

#[test]
fn fio_size_past_the_free_space_is_refused_before_anything_is_written() {
    let sb = Sandbox::new();
    let Ok(mount) = Mount::try_virtual_fs("tmpfs", "size=16m") else {
        skip("a 16 MiB tmpfs needs root to mount");
        return;
    };
    let dir = format!("--directory={}", mount.point.display());
    let out = sb.run(&["fio", "--name=big", &dir, "--size=1g", "--rw=write"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("free"), "{stderr}");
    assert!(leftovers(&mount.point).is_empty());
}

#[test]
fn fio_help_lists_what_it_runs_and_what_it_refuses() {
    let sb = Sandbox::new();
    let (stdout, _) = fio_ok(&sb, &["--help"]);
    for word in
        ["rwmixread", "libaio runs as io_uring", "stonewall", "refused by its name", "--output-format=normal|json"]
    {
        assert!(stdout.contains(word), "{word}: {stdout}");
    }
    let top = sb.run(&["--help"]);
    assert!(text(&top).0.contains("fio"), "the top-level help lists iomatrix fio");
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Real fio and `iomatrix fio` on the same job file on tmpfs give IOPS within noise. The bound
/// is generous: this runs iomatrix's debug build beside fio's release build on a 2-core machine
/// shared with other builds, so the ratio of medians of 3 paired runs must lie within 0.4..2.5
/// (the same job run twice by one tool already differs by 2x here when a build starts beside it).
/// Both JSON outputs import as access runs with the same cell.
#[test]
fn real_fio_and_iomatrix_fio_on_one_job_file_agree_within_noise() {
    if !have("fio") {
        skip("fio is not installed");
        return;
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let jobfile = sb.dir.path().join("same.fio");
    std::fs::write(
        &jobfile,
        format!(
            "[global]\ndirectory={}\nsize=32m\nbs=4k\nioengine=psync\niodepth=1\nnumjobs=1\nruntime=2\ntime_based\n\
             [randread]\nrw=randread\n",
            dir.display()
        ),
    )
    .unwrap();
    let iops = |doc: &Value| doc["jobs"][0]["read"]["iops"].as_f64().unwrap();
    let (mut fio_iops, mut ours) = (Vec::new(), Vec::new());
    let mut last = (Value::Null, Value::Null);
    for _ in 0..3 {
        let out = Command::new("fio").arg("--output-format=json").arg(&jobfile).output().expect("fio runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let real: Value = serde_json::from_slice(&out.stdout).expect("fio's JSON");
        fio_iops.push(iops(&real));
        let (stdout, _) = fio_ok(&sb, &["--output-format=json", jobfile.to_str().unwrap()]);
        let mine: Value = serde_json::from_str(&stdout).unwrap();
        ours.push(iops(&mine));
        last = (real, mine);
    }
    // fio leaves its file behind (randread.0.0): remove it by name.
    let _ = std::fs::remove_file(dir.join("randread.0.0"));
    let ratio = median(&mut ours) / median(&mut fio_iops);
    assert!((0.4..2.5).contains(&ratio), "iomatrix/fio IOPS {ratio:.2}: ours {ours:?}, fio {fio_iops:?}");
    for (name, doc) in [("fio.json", &last.0), ("iomatrix.json", &last.1)] {
        let path = sb.dir.path().join(name);
        std::fs::write(&path, serde_json::to_string(doc).unwrap()).unwrap();
        assert_success(&sb.run(&["import", path.to_str().unwrap()]));
        let rows = fio_plot_rows(doc, "read");
        assert_eq!((rows[0].bs.as_str(), rows[0].rw.as_str()), ("4k", "randread"), "{name}");
    }
    let runs = stored_runs(&sb);
    let imported: Vec<&Value> = runs.iter().rev().take(2).collect();
    let cell_of = |run: &Value| {
        let id = run["id"].as_i64().unwrap();
        let c = sb.show_json(id)["run"]["cell_results"][0].clone();
        (c["record_size"].clone(), c["metrics"]["queue_depth"].clone(), c["metrics"]["read_percent"].clone())
    };
    assert_eq!(cell_of(imported[0]), cell_of(imported[1]), "both imports give the same cell");
}

/// `rerun --target` of an `iomatrix fio` run moves its --directory to the new target.
#[test]
fn rerun_of_an_iomatrix_fio_run_moves_its_directory_to_the_new_target() {
    let sb = Sandbox::new();
    let other = sb.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let dir = format!("--directory={}", sb.target().display());
    fio_ok(&sb, &["--name=j", &dir, "--size=1m", "--bs=64k", "--rw=write"]);
    let out = sb.run(&["rerun", "1", "--target", other.to_str().unwrap()]);
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["id"], 2);
    assert_eq!(run["run"]["suite"], "access");
    let line = run["run"]["command_line"].as_str().unwrap();
    assert!(line.contains(&format!("--directory {}", other.display())), "{line}");
    assert!(sb.leftovers().is_empty() && leftovers(&other).is_empty(), "working folders removed");
}

/// SIGTERM in the second of two jobs: exit 143, the first job's run complete and printed as
/// fio prints it, the second stored as interrupted (never printed as a finished job), no
/// working folder left.
#[test]
fn iomatrix_fio_stopped_in_its_second_job_keeps_the_first_and_says_the_second_was_cut() {
    let sb = Sandbox::new();
    let jobfile = sb.dir.path().join("two.fio");
    std::fs::write(
        &jobfile,
        format!(
            "[global]\ndirectory={}\nsize=4m\nbs=64k\ntime_based\n[first]\nruntime=1\n[second]\nstonewall\nruntime=60\n",
            sb.target().display()
        ),
    )
    .unwrap();
    let child = sb.cmd().args(["fio", jobfile.to_str().unwrap()]).stdout(std::process::Stdio::piped()).spawn();
    let mut child = Running(child.expect("iomatrix fio starts"));
    wait_for_cells(&sb, &mut child, 1);
    std::thread::sleep(std::time::Duration::from_millis(700));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(143));
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert!(stdout.contains("first: (groupid=0, jobs=1): err= 0"), "{stdout}");
    assert!(!stdout.contains("second: (groupid=1, jobs=1): err= 0"), "the cut job is not shown as finished: {stdout}");
    let runs = stored_runs(&sb);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(runs[1]["status"], "interrupted");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}
