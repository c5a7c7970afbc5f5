//! filebench's flowops as filebench means them, checked on real files (tmpfs): appendfilerand's
//! sizes drawn from 1..=iosize, a whole-file read counted as one flow step with its requests beside
//! it, filebench's rotation of file picks, and the built-ins' thread counts and iosizes as
//! filebench's workloads/fileserver.f, varmail.f and webserver.f give them.
use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `run personality FILE_OR_NAME --target DIR --keep ARGS...`; must succeed: the stored run.
fn run_kept(sb: &Sandbox, target: &Path, args: &[&str]) -> Value {
    let out = sb.run(&[&["run", "personality", "--target", target.to_str().unwrap(), "--keep"][..], args].concat());
    assert_success(&out);
    sb.last_run()
}

/// Every file under `dir` whose name starts with `f0` (a personality's file names), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap().to_str().unwrap().starts_with("f0") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

#[test]
fn appendfilerand_appends_sizes_spread_uniformly_over_1_to_iosize() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("append.toml");
    // One connection appends once to each of 1000 files of 1k: each file's growth is one append's size.
    std::fs::write(
        &file,
        "version = 1\nname = \"append\"\nconnections = 1\nrecord = \"1m\"\n[[fileset]]\nname = \"f\"\nfiles = 1000\n\
         width = 100\ndepth = 1\nsize = { dist = \"fixed\", size = \"1k\" }\n\
         [[phase]]\nname = \"append\"\n[[phase.flow]]\nname = \"a\"\npick = \"next\"\n\
         ops = [{ op = \"open\" }, { op = \"append\", size = \"16k\", random = true }, { op = \"close\" }]\n",
    )
    .unwrap();
    let run = run_kept(&sb, &fs.point, &[file.to_str().unwrap()]);
    let cell = &cells(&run)[0];
    let growth: Vec<u64> = files_under(&fs.point).iter().map(|p| size(p) - 1024).collect();
    assert_eq!(growth.len(), 1000, "every file kept");
    assert!(growth.iter().all(|&g| (1..=16384).contains(&g)), "each append 1..=16k: {growth:?}");
    // Quarters of 1..16k each hold about a quarter of the appends (uniform), not all at 16k.
    let mut quarters = [0u64; 4];
    for &g in &growth {
        quarters[((g - 1) / 4096) as usize] += 1;
    }
    assert!(quarters.iter().all(|&q| (180..=320).contains(&q)), "{quarters:?}");
    assert!(*growth.iter().min().unwrap() < 256 && *growth.iter().max().unwrap() > 16128, "both ends reached");
    let mean = growth.iter().sum::<u64>() as f64 / 1000.0;
    assert!((mean - 8192.5).abs() < 8192.0 * 0.05, "mean {mean}, iosize/2 is 8192");
    // The stored bytes are what the files grew by, one flow step and one request per append.
    let append = &cell["metrics"]["ops"]["append"];
    assert_eq!(append["bytes"].as_u64(), Some(growth.iter().sum::<u64>()), "{append}");
    assert_eq!((append["count"].as_u64(), append["flowops"].as_u64()), (Some(1000), Some(1000)), "{append}");
}

#[test]
fn the_builtins_append_as_appendfilerand_a_mean_near_half_of_16k() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=1g") else { return };
    // webserver appends up to 250 MB a second to its log on tmpfs here.
    let sb = Sandbox::new();
    for name in ["varmail", "fileserver", "webserver"] {
        let run = run_kept(&sb, &fs.point, &[name, "--scale", "small", "--duration", "1s"]);
        let append = &cells(&run)[0]["metrics"]["ops"]["append"];
        let (n, bytes) = (append["count"].as_u64().unwrap(), append["bytes"].as_u64().unwrap());
        assert!(n >= 50, "{name}: {append}");
        let mean = bytes as f64 / n as f64;
        // Uniform over 1..=16k: mean 8k; fixed 16k appends (before) had a mean of 16384.
        assert!((mean - 8192.0).abs() < 8192.0 * 0.25, "{name}: mean append {mean} over {n}");
        assert_eq!(append["flowops"].as_u64(), Some(n), "{name}: an append is one request and one flow step");
    }
}

#[test]
fn a_whole_file_read_is_one_flow_step_with_its_requests_beside_it() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("whole.toml");
    // 2 connections read each of their 30 files (1k..40k) once, whole, in 4k requests.
    std::fs::write(
        &file,
        "version = 1\nname = \"whole\"\nconnections = 2\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 30\n\
         size = { dist = \"uniform\", min = \"1k\", max = \"40k\" }\n\
         [[phase]]\nname = \"read\"\n[[phase.flow]]\nname = \"r\"\npick = \"next\"\n\
         ops = [{ op = \"open\" }, { op = \"read\", size = \"whole\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    let run = run_kept(&sb, &fs.point, &[file.to_str().unwrap()]);
    let cell = &cells(&run)[0];
    let m = &cell["metrics"];
    let files = files_under(&fs.point);
    assert_eq!(files.len(), 60);
    let chunks: u64 = files.iter().map(|p| size(p).div_ceil(4096)).sum();
    assert!(chunks > 120, "most files take several requests: {chunks}");
    let read = &m["ops"]["read"];
    assert_eq!(read["flowops"].as_u64(), Some(60), "one flow step per file read: {read}");
    assert_eq!(read["count"].as_u64(), Some(chunks), "the requests: ceil(size/4k) summed: {read}");
    assert_eq!(read["bytes"].as_u64(), Some(files.iter().map(|p| size(p)).sum::<u64>()));
    // filebench's IO Summary: open, readwholefile and close once per file.
    assert_eq!(m["flowops"].as_u64(), Some(180), "{m}");
    assert_eq!(cell["ops"].as_u64(), Some(120 + chunks), "iomatrix's requests beside them");
    let secs = cell["wall_ns"].as_f64().unwrap() / 1e9;
    assert!((m["flowops_per_sec"].as_f64().unwrap() - 180.0 / secs).abs() < 1e-6 * 180.0 / secs, "{m}");
    // A step's mean is its requests' time over the steps: chunks/60 requests' worth.
    let (step, request) = (read["flowop_mean_ns"].as_f64().unwrap(), read["mean_ns"].as_f64().unwrap());
    assert!((step - request * chunks as f64 / 60.0).abs() <= 1e-6 * step, "{read}");
    let shown = text(&sb.run(&["show", &run["run"]["id"].to_string()])).0;
    assert!(shown.contains("Flow steps per second (filebench's ops/s)"), "{shown}");
    let line =
        shown.lines().find(|l| l.starts_with("read: flow steps (requests), mean ms per step")).unwrap_or_default();
    assert!(line.contains(&format!(" 60 ({chunks}), ")), "{shown}");
}

#[test]
fn files_are_picked_in_filebench_rotation_shared_by_the_connections() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=32m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("rotation.toml");
    // 4 connections of one client, 10 appends of 1 byte each, over 60 shared files of 1k: the
    // rotation takes files 0..39 once each, whatever the connections' interleaving.
    std::fs::write(
        &file,
        "version = 1\nname = \"rotation\"\nconnections = 4\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 60\n\
         shared = true\nsize = { dist = \"fixed\", size = \"1k\" }\n\
         [[phase]]\nname = \"touch\"\niterations = 10\n[[phase.flow]]\nname = \"t\"\npick = \"rotation\"\n\
         ops = [{ op = \"open\" }, { op = \"append\", size = \"1\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    run_kept(&sb, &fs.point, &[file.to_str().unwrap()]);
    let grown: Vec<u64> = files_under(&fs.point).iter().map(|p| size(p) - 1024).collect();
    assert_eq!(grown.len(), 60);
    assert_eq!(grown[..40], [1; 40], "the first 40 files once each: {grown:?}");
    assert_eq!(grown[40..], [0; 20], "the rest untouched: {grown:?}");
}

#[test]
fn the_builtins_run_filebench_s_thread_counts_and_iosize() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=1g") else { return };
    let sb = Sandbox::new();
    // workloads/*.f: nthreads and iosize; files cut down for a quick run (--files), said by --files.
    for (name, threads, files) in [("fileserver", 50, "500"), ("varmail", 16, "200"), ("webserver", 100, "200")] {
        let run = run_kept(&sb, &fs.point, &[name, "--files", files, "--duration", "1s"]);
        let cell = &cells(&run)[0];
        assert_eq!(cell["clients"].as_u64(), Some(threads), "{name}: its connections (filebench's threads)");
        assert_eq!(cell["client_figures"].as_array().unwrap().len() as u64, threads, "{name}");
        assert_eq!(cell["record_size"].as_u64(), Some(1 << 20), "{name}: iosize=1m");
        assert_eq!(cell["metrics"]["connections_failed"], 0, "{name}");
        let shown = text(&sb.run(&["personalities", "show", name])).0;
        assert!(shown.contains(&format!("{name}: {threads} connections per client, 1m records")), "{shown}");
        assert!(shown.contains(&format!("nthreads={threads}")), "{name} names filebench's value: {shown}");
        assert!(
            shown.contains("1m records, a 10m buffer per connection (memsize") && shown.contains("memsize=10m"),
            "{name}: filebench's memsize=10m: {shown}"
        );
        assert!(shown.contains("Where iomatrix differs from filebench"), "{shown}");
    }
}

#[test]
fn filebench_s_words_misused_or_misspelt_are_refused_with_their_line() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("p.toml");
    let good =
        "version = 1\nname = \"p\"\n[[fileset]]\nname = \"f\"\nfiles = 4\nsize = { dist = \"fixed\", size = \"4k\" }\n\
                [[phase]]\nname = \"run\"\norder = \"in-turn\"\n[[phase.flow]]\nname = \"a\"\npick = \"rotation\"\n\
                ops = [{ op = \"open\" }, { op = \"append\", size = \"16k\", random = true }, { op = \"close\" }]\n";
    let target = sb.target();
    let (t, f) = (target.to_str().unwrap(), file.to_str().unwrap());
    std::fs::write(&file, good).unwrap();
    assert_success(&sb.run(&["run", "personality", f, "--target", t]));
    let cases = [
        (
            good.replace("\"in-turn\"", "\"inturn\""),
            "line 9: phase `run`: unknown order `inturn`; did you mean `in-turn`?",
        ),
        (
            good.replace("\"rotation\"", "\"rotaton\""),
            "line 12: flow `a`: unknown pick `rotaton`; did you mean `rotation`?",
        ),
        (
            good.replace(
                "{ op = \"open\" }, { op = \"append\", size = \"16k\", random = true }",
                "{ op = \"open\" }, { op = \"read\", size = \"16k\", random = true }",
            ),
            "line 13: flow `a`: read: random = true is for append only",
        ),
        (good.replace("size = \"16k\", random", "size = \"0\", random"), "line 13: size = \"0\": a size of 0"),
        (
            good.replace("name = \"p\"\n", "name = \"p\"\nrecord = \"1m\"\nmemsize = \"64k\"\n"),
            "line 4: memsize = \"64k\" is smaller than a record (1048576 bytes)",
        ),
        (good.replace("name = \"p\"\n", "name = \"p\"\nmemsize = \"2g\"\n"), "memsize = \"2g\": give at most 1g"),
        (
            good.replace("pick = \"rotation\"\n", "pick = \"rotation\"\nkeep_open = true\n"),
            "line 13: flow `a`: keep_open = true: its file stays open: it cannot close",
        ),
    ];
    for (text, needle) in cases {
        std::fs::write(&file, text).unwrap();
        assert_usage_error(&sb.run(&["run", "personality", f, "--target", t]), needle);
    }
}

#[test]
fn random_appends_past_the_free_space_fail_their_connection_plainly_and_leave_nothing() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=8m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("big.toml");
    // Appends of up to 64m each into 8m: the file system fills within a few.
    std::fs::write(
        &file,
        "version = 1\nname = \"big\"\nconnections = 2\nrecord = \"1m\"\n[[fileset]]\nname = \"f\"\nfiles = 4\nshared = true\n\
         size = { dist = \"fixed\", size = \"4k\" }\n[[phase]]\nname = \"grow\"\niterations = 8\norder = \"in-turn\"\n\
         [[phase.flow]]\nname = \"a\"\npick = \"rotation\"\n\
         ops = [{ op = \"open\" }, { op = \"append\", size = \"64m\", random = true }, { op = \"close\" }]\n",
    )
    .unwrap();
    let out = sb.run(&["run", "personality", file.to_str().unwrap(), "--target", fs.point.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "its connections failed: {stdout}{stderr}");
    assert!(stderr.contains("append") && stderr.contains("No space left on device"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed", "recorded as failed");
    assert_eq!(std::fs::read_dir(&fs.point).unwrap().count(), 0, "the working folder removed");
}

#[test]
fn a_flow_kept_open_opens_its_file_once_as_filebench_s_log_descriptor() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=32m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("log.toml");
    // 2 connections, 9 iterations each in turn: 2 page reads, then 1k appended to the log, 3 times.
    std::fs::write(
        &file,
        "version = 1\nname = \"log\"\nconnections = 2\nrecord = \"4k\"\n\
         [[fileset]]\nname = \"pages\"\nfiles = 10\nsize = { dist = \"fixed\", size = \"8k\" }\n\
         [[fileset]]\nname = \"log\"\nfiles = 1\nsize = { dist = \"fixed\", size = \"4k\" }\n\
         [[phase]]\nname = \"run\"\niterations = 9\norder = \"in-turn\"\n\
         [[phase.flow]]\nname = \"page\"\nweight = 2\nfileset = \"pages\"\npick = \"rotation\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n\
         [[phase.flow]]\nname = \"log\"\nfileset = \"log\"\nkeep_open = true\n\
         ops = [{ op = \"open\" }, { op = \"append\", size = \"1k\" }]\n",
    )
    .unwrap();
    let run = run_kept(&sb, &fs.point, &[file.to_str().unwrap()]);
    let m = &cells(&run)[0]["metrics"];
    let count = |op: &str| m["ops"][op]["count"].as_u64().unwrap();
    assert_eq!((count("open"), count("close"), count("append")), (2 * 7, 2 * 6, 2 * 3), "{m}");
    assert_eq!(m["flowops"].as_u64(), Some(2 * (6 * 3 + 1 + 3)), "{m}");
    // Each connection's log: 4k made first and three 1k appends through one descriptor.
    let logs = logs_under(&fs.point);
    assert_eq!(logs.iter().map(|p| size(p)).collect::<Vec<_>>(), [7168, 7168], "{logs:?}");
    // The built-in webserver's log is kept open the same way: one open per connection beyond the pages'.
    // (Its log grows by about 8k every 31 steps: up to 250 MB a second on tmpfs here, hence 1g.)
    let Some(web) = Mount::virtual_fs("tmpfs", "size=1g") else { return };
    let args = ["webserver", "--scale", "small", "--connections", "2", "--files", "40", "--duration", "1s"];
    let run = run_kept(&sb, &web.point, &args);
    let m = &cells(&run)[0]["metrics"];
    let (open, close) = (m["ops"]["open"]["count"].as_u64().unwrap(), m["ops"]["close"]["count"].as_u64().unwrap());
    assert!((2..=4).contains(&(open - close)), "a log open per connection (and a page cut at the end): {m}");
    assert!(m["ops"]["append"]["count"].as_u64().unwrap() * 10 + 20 >= close, "{m}");
}

#[test]
fn a_shared_log_kept_open_by_every_connection_grows_by_every_append_as_webservers_one_log() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("log.toml");
    // 8 connections append 1k 200 times each to one log made 4k, all holding it open at once.
    std::fs::write(
        &file,
        "version = 1\nname = \"log\"\nconnections = 8\nrecord = \"4k\"\n\
         [[fileset]]\nname = \"log\"\nfiles = 1\nshared = true\nsize = { dist = \"fixed\", size = \"4k\" }\n\
         [[phase]]\nname = \"run\"\niterations = 200\norder = \"in-turn\"\n\
         [[phase.flow]]\nname = \"log\"\nfileset = \"log\"\nkeep_open = true\n\
         ops = [{ op = \"open\" }, { op = \"append\", size = \"1k\" }]\n",
    )
    .unwrap();
    let run = run_kept(&sb, &fs.point, &[file.to_str().unwrap()]);
    let m = &cells(&run)[0]["metrics"];
    let count = |op: &str| m["ops"][op]["count"].as_u64().unwrap();
    assert_eq!((count("open"), count("append")), (8, 8 * 200), "one open per connection: {m}");
    assert_eq!(m["idle_iterations"].as_u64().unwrap_or(0), 0, "no connection waited for the log: {m}");
    let logs = logs_under(&fs.point);
    assert_eq!(logs.len(), 1, "one log for every connection: {logs:?}");
    // Every append has bytes of its own: none landed on another's.
    assert_eq!(size(&logs[0]), 4096 + 8 * 200 * 1024, "{logs:?}");
    // The built-in webserver's log is one file too.
    let Some(web) = Mount::virtual_fs("tmpfs", "size=1g") else { return };
    let args = ["webserver", "--scale", "small", "--connections", "4", "--files", "40", "--duration", "1s"];
    let run = run_kept(&sb, &web.point, &args);
    let m = &cells(&run)[0]["metrics"];
    let logs = logs_under(&web.point);
    assert_eq!(logs.len(), 1, "webserver: one log: {logs:?}");
    assert!(m["ops"]["append"]["count"].as_u64().unwrap() >= 4, "every connection appended: {m}");
}

/// The personality's files under `dir` in folders named `log` (a `log` fileset's), sorted.
fn logs_under(dir: &Path) -> Vec<PathBuf> {
    files_under(dir).into_iter().filter(|p| p.parent().is_some_and(|d| d.ends_with("log"))).collect()
}

/// filebench's thread memsize: every request of a connection reads into or writes from a random
/// place in its buffer (its system calls' buffer addresses, read with strace, spread over the
/// buffer); without memsize each connection's reads land at one address.
#[test]
fn under_memsize_each_request_reads_into_and_writes_from_a_random_place_of_the_buffer() {
    if !have("strace") {
        skip("strace shows the buffers of the personality's reads and writes (apt-get install strace)");
        return;
    }
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=256m") else { return };
    let sb = Sandbox::new();
    let file = sb.dir.path().join("mem.toml");
    let personality = |memsize: &str| {
        format!(
            "version = 1\nname = \"mem\"\nconnections = 1\nrecord = \"64k\"\n{memsize}\
             [[fileset]]\nname = \"f\"\nfiles = 20\nsize = {{ dist = \"fixed\", size = \"64k\" }}\n\
             [[phase]]\nname = \"run\"\niterations = 400\norder = \"in-turn\"\n\
             [[phase.flow]]\nname = \"r\"\npick = \"next\"\n\
             ops = [{{ op = \"open\" }}, {{ op = \"read\" }}, {{ op = \"write\", size = \"64k\" }}, {{ op = \"close\" }}]\n"
        )
    };
    // (distinct addresses, their span) of the preads and of the pwrites of the run's files.
    let buffers = |memsize: &str| {
        std::fs::write(&file, personality(memsize)).unwrap();
        let trace = sb.dir.path().join("trace");
        let out = Command::new("strace")
            .args(["-f", "-y", "-e", "trace=pread64,pwrite64", "-e", "raw=pread64,pwrite64", "-o"])
            .arg(&trace)
            .arg(env!("CARGO_BIN_EXE_iomatrix"))
            .args(["run", "personality", file.to_str().unwrap(), "--target", fs.point.to_str().unwrap()])
            .env("IOMATRIX_DB", sb.db())
            .env(crate::helpers::BUSY_VAR, "off")
            .output()
            .expect("run strace");
        assert_success(&out);
        let text = std::fs::read_to_string(&trace).unwrap();
        let addresses = |call: &str| {
            // raw: pread64(0x5, 0x7f..., 0x10000, 0x0) = 0x10000; the requests of a record (64k),
            // which the results database's pages (4k) are not.
            let found: std::collections::BTreeSet<u64> = text
                .lines()
                .filter_map(|l| {
                    let args: Vec<&str> = l.split_once(&format!("{call}("))?.1.split(", ").collect();
                    (args.get(2) == Some(&"0x10000")).then_some(())?;
                    u64::from_str_radix(args.get(1)?.trim_start_matches("0x"), 16).ok()
                })
                .collect();
            let span = found.last().copied().unwrap_or(0) - found.first().copied().unwrap_or(0);
            (found.len(), span)
        };
        (addresses("pread64"), addresses("pwrite64"))
    };
    let (reads, writes) = buffers("memsize = \"4m\"\n");
    for (what, (distinct, span)) in [("reads", reads), ("writes", writes)] {
        // 400 requests at a random place of 4m - 64k (61,441 places): nearly all distinct, spread
        // over most of the buffer.
        assert!(distinct >= 350, "{what} under memsize: {distinct} distinct buffer addresses");
        assert!(span > 3 << 20, "{what} under memsize: addresses span {span} bytes of 4m");
    }
    let (reads, writes) = buffers("");
    assert_eq!(reads.0, 1, "without memsize, one buffer to read into");
    // The flow's buffer, and the one the fileset's files were made from before the phase.
    assert!(writes.0 <= 2, "without memsize, one buffer to write from: {} addresses", writes.0);
}
