//! `run fileserver`: every operation asked for is done and timed, on tmpfs
//! and loop-mounted ext4, xfs and btrfs; failing connections (ENOSPC,
//! EMFILE) are counted and the run goes on; 1000 connections work.
use crate::helpers::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const OPS: [&str; 6] = ["create", "open", "write", "read", "fsync", "close"];

/// Runs `cmd` to its end, killing it (and failing the test) after `secs` seconds.
fn bounded(mut cmd: Command, secs: u64) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start iomatrix");
    // Drain both pipes meanwhile, so a chatty child never blocks on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).ok();
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).ok();
        v
    });
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("iomatrix took more than {secs} s: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out_reader.join().unwrap(), stderr: err_reader.join().unwrap() }
}

fn fileserver_out(sb: &Sandbox, target: &Path, args: &[&str], secs: u64) -> Output {
    let mut cmd = sb.cmd();
    cmd.args(["run", "fileserver", "--target", target.to_str().unwrap()]).args(args);
    bounded(cmd, secs)
}

/// Runs the load (it must succeed) and returns the stored run.
fn fileserver(sb: &Sandbox, target: &Path, args: &[&str]) -> Value {
    let out = fileserver_out(sb, target, args, 120);
    assert_success(&out);
    sb.last_run()
}

/// What a run of `connections` x `sizes` (cycled over `files` files) must do, per phase.
struct Want {
    connections: u64,
    files: u64,
    sizes: Vec<u64>,
    record: u64,
    fsync_every: Option<u64>,
}

impl Want {
    fn new(connections: u64, files: u64, sizes: &[u64], record: u64) -> Want {
        Want { connections, files, sizes: sizes.to_vec(), record, fsync_every: None }
    }
    fn size(&self, i: u64) -> u64 {
        self.sizes[(i % self.sizes.len() as u64) as usize]
    }
    fn records(&self) -> u64 {
        self.connections * (0..self.files).map(|i| self.size(i).div_ceil(self.record)).sum::<u64>()
    }
    fn fsyncs(&self) -> u64 {
        let Some(n) = self.fsync_every else { return 0 };
        self.connections * (0..self.files).map(|i| self.size(i).div_ceil(self.record).div_ceil(n)).sum::<u64>()
    }
    fn bytes(&self) -> u64 {
        self.connections * (0..self.files).map(|i| self.size(i)).sum::<u64>()
    }
    fn all_files(&self) -> u64 {
        self.connections * self.files
    }
}

fn count(cell: &Value, op: &str) -> u64 {
    cell["metrics"]["ops"][op]["count"].as_u64().unwrap_or(0)
}

/// Counts, bytes and percentiles of a run in which no connection failed.
fn check_exact(run: &Value, want: &Want) {
    assert_eq!(run["run"]["suite"], "fileserver");
    assert_eq!(run["run"]["status"], "complete", "{}", run["run"]["error"]);
    let cells = cells(run);
    assert_eq!(cells.len(), 2, "a write and a read cell");
    let (write, read) = (&cells[0], &cells[1]);
    assert_eq!(write["test"], "write");
    assert_eq!(read["test"], "read");
    let files = want.all_files();
    assert_eq!(count(write, "create"), files, "creates");
    assert_eq!(count(write, "open"), files, "opens");
    assert_eq!(count(write, "close"), files, "closes");
    assert_eq!(count(write, "write"), want.records(), "writes = sum of ceil(size / record)");
    assert_eq!(count(write, "fsync"), want.fsyncs(), "fsyncs");
    assert_eq!(count(write, "read"), 0);
    assert_eq!(count(read, "open"), files);
    assert_eq!(count(read, "close"), files);
    assert_eq!(count(read, "read"), want.records(), "reads = sum of ceil(size / record)");
    assert_eq!(count(read, "create") + count(read, "write") + count(read, "fsync"), 0);
    for c in [write, read] {
        let m = &c["metrics"];
        assert_eq!(c["bytes"], want.bytes(), "bytes exact: {}", c["test"]);
        assert_eq!(m["planned"], m["done"], "done = planned");
        assert_eq!(m["done"]["files"], files);
        assert_eq!(m["lost_samples"], 0);
        assert_eq!(m["connections_ok"], want.connections);
        assert_eq!(m["connections_failed"], 0);
        assert_eq!(m["errors"], serde_json::json!({}));
        let ops: u64 = OPS.iter().map(|op| count(c, op)).sum();
        assert_eq!(c["ops"], ops);
        assert!(m["completion_ns"].as_u64().unwrap() > 0);
        assert!(m["avg_connection_kib_per_sec"].as_f64().unwrap() > 0.0);
        assert!(m["total_kib_per_sec"].as_f64().unwrap() > 0.0);
        for op in OPS {
            let s = &m["ops"][op];
            if s.is_null() || s["count"] == 0 {
                continue;
            }
            let keys = ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "max_ns"];
            let v: Vec<u64> = keys.iter().map(|k| s[k].as_u64().unwrap()).collect();
            assert!(v.windows(2).all(|w| w[0] <= w[1]), "{op} percentiles out of order: {v:?}");
            let mean = s["mean_ns"].as_f64().unwrap();
            assert!(mean >= v[0] as f64 * 0.99 && mean <= v[5] as f64 * 1.01, "{op} mean {mean} outside {v:?}");
        }
        let clients = c["client_figures"].as_array().unwrap();
        assert_eq!(clients.len() as u64, want.connections);
        let per_connection = want.bytes() / want.connections;
        assert!(clients.iter().all(|f| f["bytes"] == per_connection && f["error"].is_null()), "{c}");
    }
}

fn sizes_arg(sizes: &[u64]) -> String {
    sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",")
}

/// The same checks on one target: plain, with fsync and interleaving, and as a mix.
fn exact_on(target: &Path, what: &str) {
    let sb = Sandbox::new();
    let sizes = [4096, 10_000, 65_536, 1];
    let mut want = Want::new(6, 9, &sizes, 4096);
    let sizes = sizes_arg(&sizes);
    let base = ["--connections", "6", "--files-per-connection", "9", "--sizes", &sizes, "--record", "4k"];
    let run = fileserver(&sb, target, &base);
    check_exact(&run, &want);
    // Interleaved writes with fsync do the same operations (plus the fsyncs).
    want.fsync_every = Some(3);
    let mut args = base.to_vec();
    args.extend(["--interleave", "4", "--fsync-every", "3"]);
    let run = fileserver(&sb, target, &args);
    check_exact(&run, &want);
    assert!(count(&cells(&run)[0], "fsync") > 0, "{what}");
    assert!(leftovers(target).is_empty(), "{what}: the working folder is removed");
}

#[test]
fn counts_are_exact_in_the_temp_folder() {
    let sb = Sandbox::new();
    exact_on(&sb.target(), "temp folder");
}

#[test]
fn counts_are_exact_on_tmpfs_ext4_xfs_and_btrfs() {
    if let Some(m) = Mount::virtual_fs("tmpfs", "size=64m") {
        exact_on(&m.point, "tmpfs");
    }
    for (fs, mib) in [("ext4", 128), ("xfs", 320), ("btrfs", 256)] {
        if let Some(m) = Mount::image(fs, mib) {
            exact_on(&m.point, fs);
        }
    }
}

#[test]
fn a_mixed_phase_visits_every_file_once() {
    let sb = Sandbox::new();
    let run = fileserver(
        &sb,
        &sb.target(),
        &["--connections", "4", "--files-per-connection", "30", "--sizes", "8k,12k", "--mix", "60", "--seed", "9"],
    );
    let cells = cells(&run);
    assert_eq!(cells[1]["test"], "mix");
    let m = &cells[1]["metrics"];
    assert_eq!(m["read_percent"], 60);
    assert_eq!(m["planned"], m["done"]);
    assert_eq!(count(&cells[1], "open"), 120);
    assert_eq!(count(&cells[1], "close"), 120);
    assert_eq!(count(&cells[1], "create"), 0);
    // Each visit reads or rewrites a whole file: 8k = 2 records, 12k = 3.
    let (reads, writes) = (count(&cells[1], "read"), count(&cells[1], "write"));
    assert!(reads > 0 && writes > 0, "{reads} reads, {writes} writes");
    assert_eq!(reads + writes, 4 * 15 * (2 + 3));
    assert_eq!(cells[1]["bytes"], 4 * 15 * (8192 + 12288));
    // The same seed, the same visits.
    let again = fileserver(
        &sb,
        &sb.target(),
        &["--connections", "4", "--files-per-connection", "30", "--sizes", "8k,12k", "--mix", "60", "--seed", "9"],
    );
    assert_eq!(count(&crate::helpers::cells(&again)[1], "read"), reads);
}

#[test]
fn a_full_file_system_fails_some_connections_and_the_run_goes_on_under_continue() {
    let Some(m) = Mount::virtual_fs("tmpfs", "size=8m") else { return };
    let sb = Sandbox::new();
    // 12 connections x 1 MiB on 8 MiB: some finish, the rest meet ENOSPC.
    let out = fileserver_out(
        &sb,
        &m.point,
        &[
            "--connections",
            "12",
            "--files-per-connection",
            "8",
            "--sizes",
            "128k",
            "--no-space-check",
            "--on-client-error",
            "continue",
        ],
        60,
    );
    let run = sb.last_run();
    let cells = cells(&run);
    // Partial when some connection finished a phase; failed when the scheduler let none finish
    // before the disk was full. Never complete; exit 3 either way (its connections failed).
    let some_finished = cells.iter().any(|c| c["state"]["ok"].as_u64().unwrap_or(0) > 0);
    let (status, code) = if some_finished { ("partial", 3) } else { ("failed", 3) };
    assert_eq!(out.status.code(), Some(code), "some connections failed: {}", text(&out).1);
    assert_eq!(run["run"]["status"], status);
    assert_eq!(cells.len(), 2, "the read phase ran after the failures");
    let w = &cells[0]["metrics"];
    let failed = w["connections_failed"].as_u64().unwrap();
    assert!(failed >= 1, "{w}");
    assert_eq!(w["connections_ok"].as_u64().unwrap() + failed, 12);
    assert_eq!(w["errors"]["ENOSPC"], failed, "{}", w["errors"]);
    assert!(w["lost_samples"].as_u64().unwrap() > 0);
    // done + lost = planned, operation by operation.
    for op in OPS {
        let (p, d, l) = (&w["planned"]["ops"][op], &w["done"]["ops"][op], &w["lost"]["ops"][op]);
        assert_eq!(p.as_u64().unwrap(), d.as_u64().unwrap() + l.as_u64().unwrap(), "{op}");
    }
    let errors: Vec<&Value> =
        cells[0]["client_figures"].as_array().unwrap().iter().filter(|c| !c["error"].is_null()).collect();
    assert_eq!(errors.len() as u64, failed);
    assert!(errors.iter().all(|c| c["error"]["kind"] == "ENOSPC" && c["error"]["message"].is_string()));
    // The failed connections sit out the read phase; the others read all they wrote.
    let r = &cells[1]["metrics"];
    assert_eq!(r["connections_skipped"], failed);
    assert_eq!(r["connections_ok"].as_u64().unwrap(), 12 - failed);
    assert_eq!(count(&cells[1], "open"), (12 - failed) * 8);
    assert_eq!(r["lost"]["files"], failed * 8);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("Errors (connections failed, by kind)") && stdout.contains("ENOSPC"), "{stdout}");
    assert!(stdout.contains("Lost samples"), "{stdout}");
}

#[test]
fn too_few_file_descriptors_fail_connections_with_emfile_and_the_run_goes_on_under_continue() {
    if !have("prlimit") {
        return skip("prlimit (util-linux) is missing");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    let mut cmd = Command::new("prlimit");
    cmd.arg("--nofile=24:24")
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(["run", "fileserver", "--target", target.to_str().unwrap()])
        .args(["--connections", "50", "--files-per-connection", "16", "--sizes", "64k", "--interleave", "8"])
        .args(["--on-client-error", "continue"])
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null());
    let out = bounded(cmd, 60);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("may fail with EMFILE"), "{stderr}");
    assert!(stderr.contains("connection(s) failed"), "{stderr}");
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 2);
    let w = &cells[0]["metrics"];
    let failed = w["connections_failed"].as_u64().unwrap();
    assert!(failed >= 1, "{w}");
    assert_eq!(w["errors"]["EMFILE"], failed, "{}", w["errors"]);
    assert_eq!(w["connections_ok"].as_u64().unwrap() + failed, 50);
    assert!(w["lost_samples"].as_u64().unwrap() > 0);
    assert!(sb.leftovers().is_empty());
}

#[test]
fn a_thousand_connections_run_in_seconds() {
    let sb = Sandbox::new();
    let start = Instant::now();
    let out = fileserver_out(
        &sb,
        &sb.target(),
        &["--connections", "1000", "--files-per-connection", "2", "--sizes", "4k"],
        60,
    );
    assert_success(&out);
    let elapsed = start.elapsed();
    check_exact(&sb.last_run(), &Want::new(1000, 2, &[4096], 4096));
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
}

#[test]
fn sizes_drawn_from_a_profile_repeat_with_the_seed() {
    let sb = Sandbox::new();
    let profile = sb.dir.path().join("home.profile");
    std::fs::write(
        &profile,
        r#"{"schema": "iomatrix.profile/1", "source": "/home", "created_at": "",
            "classes": [{"min_bytes": 2048, "max_bytes": 4095, "files": 30, "bytes": 90000},
                        {"min_bytes": 65536, "max_bytes": 131071, "files": 10, "bytes": 700000}]}"#,
    )
    .unwrap();
    let args = ["--connections", "3", "--files-per-connection", "20", "--profile", profile.to_str().unwrap()];
    let a = fileserver(&sb, &sb.target(), &args);
    let b = fileserver(&sb, &sb.target(), &args);
    let (ca, cb) = (cells(&a), cells(&b));
    assert_eq!(ca[0]["bytes"], cb[0]["bytes"], "same seed, same sizes");
    assert_eq!(ca[0]["metrics"]["planned"], ca[0]["metrics"]["done"]);
    assert_eq!(ca[1]["bytes"], ca[0]["bytes"], "every byte written is read");
    let bytes = ca[0]["bytes"].as_u64().unwrap();
    assert!((60 * 2048..=60 * 131071).contains(&bytes), "{bytes}");
    assert_eq!(a["run"]["plan"]["sizes"]["profile"]["profile_files"], 40);
    let mut other = args.to_vec();
    other.extend(["--seed", "77"]);
    let c = fileserver(&sb, &sb.target(), &other);
    assert_ne!(cells(&c)[0]["bytes"], ca[0]["bytes"], "another seed, other sizes");
}

#[test]
fn dropping_the_cache_is_recorded_or_refused() {
    let sb = Sandbox::new();
    let args = ["--connections", "2", "--files-per-connection", "3", "--sizes", "4k", "--drop-caches"];
    if !is_root() {
        assert_usage_error(&fileserver_out(&sb, &sb.target(), &args, 30), "--drop-caches needs root");
        return;
    }
    if std::fs::OpenOptions::new().write(true).open("/proc/sys/vm/drop_caches").is_err() {
        return skip("/proc/sys/vm/drop_caches is not writable here");
    }
    let run = fileserver(&sb, &sb.target(), &args);
    let cells = cells(&run);
    assert_eq!(cells[0]["metrics"]["caches_dropped"], false);
    assert_eq!(cells[1]["metrics"]["caches_dropped"], true);
    assert_eq!(run["run"]["conditions"]["drop_caches"], true);
    assert!(run["run"]["conditions"]["cache"].as_str().unwrap().contains("dropped"));
    let plain = fileserver(&sb, &sb.target(), &args[..6]);
    assert!(plain["run"]["conditions"]["cache"].as_str().unwrap().contains("may be served by the page cache"));
    // Many clients: each drops before the read phase's barrier, which still holds.
    let run = fileserver(&sb, &sb.target(), &[&args[..], &["--clients", "2"]].concat());
    let read = &crate::helpers::cells(&run)[1];
    assert_eq!(read["metrics"]["caches_dropped"], true);
    assert_eq!(read["metrics"]["clients"].as_array().unwrap().len(), 2);
    crate::clients::assert_barrier_held(read, 2);
}

#[test]
fn show_prints_seed_003s_table() {
    let sb = Sandbox::new();
    let run =
        fileserver(&sb, &sb.target(), &["--connections", "3", "--files-per-connection", "4", "--fsync-every", "2"]);
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    for row in [
        "Write test: 3 connections x 4 files",
        "Avg Create response time (ms)",
        "Avg Open response time (ms)",
        "Avg Write response time (ms)",
        "Avg Fsync response time (ms)",
        "Avg Close response time (ms)",
        "Avg Write throughput per connection (KB/sec)",
        "Time taken for test completion (s)",
        "Read test: 3 connections x 4 files",
        "Avg Read response time (ms)",
        "Avg Read throughput per connection (KB/sec)",
        "Lost samples",
    ] {
        assert!(stdout.contains(row), "missing '{row}':\n{stdout}");
    }
    // Default sizes: seed 003's ten, cycled.
    assert_eq!(cells(&run)[0]["bytes"], 3 * (4 + 8 + 16 + 32) * 1024);
}

#[test]
fn bad_input_names_the_problem() {
    let sb = Sandbox::new();
    let t = sb.target();
    let bad = |args: &[&str], needle: &str| assert_usage_error(&fileserver_out(&sb, &t, args, 30), needle);
    bad(&["--connections", "0"], "--connections 0");
    bad(&["--files-per-connection", "0"], "--files-per-connection 0");
    bad(&["--sizes", "4k,0,8k"], "a size of 0");
    bad(&["--sizes", "4k,-8k"], "negative");
    bad(&["--sizes", "4q"], "not a size");
    bad(&["--record", "0"], "--record 0");
    bad(&["--fsync-every", "0"], "--fsync-every 0");
    bad(&["--interleave", "0"], "--interleave 0");
    bad(&["--interleave", "-2"], "--interleave -2");
    bad(&["--mix", "101"], "101% is over 100");
    bad(&["--mix", "50", "--write-then-read"], "--write-then-read");
    let empty = sb.dir.path().join("empty.profile");
    std::fs::write(&empty, "").unwrap();
    bad(&["--profile", empty.to_str().unwrap()], "empty");
    let junk = sb.dir.path().join("junk.profile");
    std::fs::write(&junk, "{\"schema\": \"iomatrix.profile/1\", \"classes\": 3}").unwrap();
    bad(&["--profile", junk.to_str().unwrap()], "--profile");
    bad(&["--profile", "/no/such.profile"], "cannot read");
    bad(&["--sizes", "4k", "--profile", empty.to_str().unwrap()], "--profile");
    bad(&["--connections", "4", "--files-per-connection", "100000", "--sizes", "1g"], "free, but this plan needs");
    // Nothing was written to the target by any of these.
    assert_eq!(std::fs::read_dir(&t).unwrap().count(), 0);
}

#[test]
fn ctrl_c_stops_promptly_and_keeps_the_finished_phase() {
    let sb = Sandbox::new();
    let target = sb.target();
    // Two phases of a second or more each: every record of 512 bytes is fsynced.
    let mut child = sb
        .cmd()
        .args(["run", "fileserver", "--target", target.to_str().unwrap(), "--connections", "4"])
        .args(["--files-per-connection", "400", "--sizes", "8k", "--record", "512", "--fsync-every", "1"])
        .args(["--mix", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stored = || {
        rusqlite::Connection::open_with_flags(sb.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM cells", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored() < 1 {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            let _ = child.kill();
            panic!("the write phase was not stored while the run went on");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if signalled.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("iomatrix did not stop within 10 s of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    // Promptly: within the 10 s above on a loaded machine (the second phase, unfinished, is not stored below).
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "interrupted");
    let cells = cells(&run);
    assert_eq!(cells.len(), 1, "the finished write phase is kept, the mix phase dropped");
    assert_eq!(cells[0]["test"], "write");
    assert_eq!(cells[0]["metrics"]["planned"], cells[0]["metrics"]["done"]);
    assert!(sb.leftovers().is_empty());
}

/// Extents of every file iomatrix left in `dir`, synced first (FIEMAP_FLAG_SYNC).
fn total_extents(sb: &Sandbox, dir: &Path) -> (u64, u64) {
    let out = sb.run(&["extents", dir.to_str().unwrap(), "--json", "--sync"]);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("extents --json is JSON");
    let s = &doc["walk"]["extents"];
    (s["files"].as_u64().unwrap(), s["total_extents"].as_u64().unwrap())
}

#[test]
fn interleaved_fsynced_appends_leave_more_extents_than_files_written_at_once() {
    for fstype in ["ext4", "xfs", "btrfs"] {
        let Some(fs) = Mount::image(fstype, 300) else { continue };
        let sb = Sandbox::new();
        let base =
            ["--connections", "4", "--files-per-connection", "8", "--sizes", "256k", "--record", "16k", "--keep"];
        let mut extents = Vec::new();
        for extra in [&[][..], &["--interleave", "8", "--fsync-every", "1"][..]] {
            let mut args = base.to_vec();
            args.extend_from_slice(extra);
            fileserver(&sb, &fs.point, &args);
            let kept = leftovers(&fs.point);
            assert_eq!(kept.len(), 1, "{fstype}: {kept:?}");
            let (files, total) = total_extents(&sb, &kept[0]);
            // 4 connections x 8 files, and the working folder's marker (the same in both runs).
            assert_eq!(files, 33, "{fstype}");
            extents.push(total);
            std::fs::remove_dir_all(&kept[0]).unwrap();
        }
        let (at_once, interleaved) = (extents[0], extents[1]);
        assert!(
            interleaved > at_once,
            "{fstype}: interleaved fsynced appends left {interleaved} extents, files written at once {at_once}"
        );
        eprintln!("{fstype}: 32 files of 256k: {at_once} extents written at once, {interleaved} interleaved + fsync");
    }
}

#[test]
fn three_clients_run_their_connections_together_in_every_phase() {
    // tmpfs where we may mount it, else the system's temporary folder.
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=64m").ok();
    let sb = Sandbox::new();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let t = target.to_str().unwrap();
    let base = [
        "run",
        "fileserver",
        "--target",
        t,
        "--connections",
        "4",
        "--files-per-connection",
        "5",
        "--sizes",
        "4k,12k",
        "--record",
        "4k",
    ];
    assert_success(&sb.run(&[&base[..], &["--clients", "3", "--keep"]].concat()));
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    assert_eq!(run["run"]["conditions"]["connections"], 4);
    for c in cells(&run) {
        crate::clients::assert_barrier_held(&c, 3);
        let m = &c["metrics"];
        let clients = m["clients"].as_array().unwrap();
        assert_eq!(clients.len(), 3);
        assert_eq!(c["clients"], 12, "every client's connections");
        assert_eq!(m["done"]["files"], 3 * 4 * 5);
        let sum = |key: &str| clients.iter().map(|f| f[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(c["bytes"].as_u64(), Some(sum("bytes")));
        assert_eq!(m["completion_ns"].as_u64(), clients.iter().map(|f| f["completion_ns"].as_u64().unwrap()).max());
        let rates: f64 = clients.iter().map(|f| f["total_kib_per_sec"].as_f64().unwrap()).sum();
        assert!((m["kib_per_sec_sum_of_clients"].as_f64().unwrap() - rates).abs() <= 1e-9 * rates);
        // The merged histograms hold every client's operations, type by type.
        for (op, summary) in m["ops"].as_object().unwrap() {
            let each: Vec<u64> = clients.iter().map(|f| f["ops"][op].as_u64().unwrap()).collect();
            assert!(each.iter().all(|&n| n == each[0]), "{op}: the clients did the same work: {each:?}");
            assert_eq!(summary["count"].as_u64(), Some(each.iter().sum()), "{op}: merged exactly");
        }
        let ops: u64 = m["ops"].as_object().unwrap().values().map(|s| s["count"].as_u64().unwrap()).sum();
        assert_eq!(ops, c["ops"].as_u64().unwrap());
        // Three clients' worth of operations, and the stored histograms are the merged ones.
        let want = Want::new(3 * 4, 5, &[4096, 12288], 4096);
        let (files, records) = (want.all_files(), want.records());
        let expected: &[(&str, u64)] = match c["test"].as_str().unwrap() {
            "write" => &[("create", files), ("open", files), ("write", records), ("close", files)],
            _ => &[("open", files), ("read", records), ("close", files)],
        };
        assert_eq!(m["ops"].as_object().unwrap().len(), expected.len(), "{}", m["ops"]);
        let conn = rusqlite::Connection::open(sb.db()).unwrap();
        for &(op, n) in expected {
            assert_eq!(count(&c, op), n, "{op}");
            let blob: Vec<u8> = conn
                .query_row(
                    "SELECT data FROM cell_blobs WHERE run_id = ?1 AND seq = ?2 AND name = ?3",
                    rusqlite::params![run["run"]["id"].as_i64(), c["seq"].as_i64(), format!("latency.{op}")],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(iomatrix_stats::Latency::from_bytes(&blob).unwrap().count(), n, "stored latency.{op}");
        }
    }
    let workdir = leftovers(&target).pop().expect("kept working folder");
    for r in 0..3 {
        assert!(workdir.join(format!("client-{r}/conn-0003")).is_dir(), "client {r}'s connections");
    }
    std::fs::remove_dir_all(&workdir).unwrap();
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    assert!(stdout.contains("from 3 clients"), "{stdout}");
    assert!(stdout.contains("Clients (KB/s)") && stdout.contains("write phase"), "the clients table: {stdout}");
    // Client 1's folder is made unusable (a file in its place) before it starts: it fails
    // every phase as a whole, and the others' phases are kept.
    let hook = "if [ \"$IOMATRIX_RANK\" = 1 ]; then cd .. && rmdir client-1 && : > client-1; fi";
    let out = sb.run(&[&base[..], &["--clients", "3", "--before", hook, "--on-client-error", "continue"]].concat());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "partial");
    let cells = cells(&run);
    assert_eq!(cells.len(), 2);
    for c in &cells {
        crate::clients::assert_barrier_held(c, 3);
        let m = &c["metrics"];
        let clients = m["clients"].as_array().unwrap();
        assert_eq!(clients.iter().map(|f| f["rank"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(m["failed_clients"].as_array().unwrap().len(), 1);
        assert_eq!(m["failed_clients"][0]["rank"], 1);
        let message = m["failed_clients"][0]["message"].as_str().unwrap();
        assert!(message.contains("client-1: not a folder"), "{message}");
        assert_eq!(m["connections_failed"], 0, "the failed client's connections never started");
        assert_eq!(m["done"]["files"], 2 * 4 * 5);
        assert_eq!(c["bytes"].as_u64(), Some(clients.iter().map(|f| f["bytes"].as_u64().unwrap()).sum()));
    }
    assert!(leftovers(&target).is_empty());
}

#[test]
fn repeat_runs_the_phases_again_on_fresh_files() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let args =
        ["run", "fileserver", "--target", t, "--connections", "3", "--files-per-connection", "4", "--sizes", "8k,16k"];
    assert_success(&sb.run(&[&args[..], &["--repeat", "2"]].concat()));
    let run = sb.last_run();
    let stored = cells(&run);
    let phases: Vec<&str> = stored.iter().map(|c| c["test"].as_str().unwrap()).collect();
    assert_eq!(phases, ["write", "read", "write", "read"]);
    let repeats: Vec<u64> = stored.iter().map(|c| c["metrics"]["repeat"].as_u64().unwrap()).collect();
    assert_eq!(repeats, [1, 1, 2, 2]);
    for c in &stored {
        assert_eq!(c["metrics"]["done"]["files"], 12, "every repeat does all its files: {}", c["test"]);
        assert_eq!(c["metrics"]["connections_failed"], 0, "{c}");
    }
    assert_eq!(stored[0]["bytes"], stored[2]["bytes"]);
    let (stdout, _) = text(&sb.run(&["show", &run["run"]["id"].as_i64().unwrap().to_string()]));
    assert!(stdout.contains("Noise: 2 to 2 samples per repeated cell"), "{stdout}");
    assert!(sb.leftovers().is_empty());
}

/// The product code of one source file (its test module left out).
fn product_code(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split("#[cfg(test)]").next().unwrap_or_default().to_string()
}

#[test]
fn fileservers_tables_read_no_figure_by_a_string_key() {
    let source = product_code("crates/fileserver/src/render.rs");
    assert!(source.contains("pub fn report("), "the tables were read");
    // `m["phase"]`, `s["count"]`, `plan["interleave"]`: an index by a string key (not an array literal).
    let indexed = |code: &str| {
        code.match_indices("[\"").any(|(at, _)| {
            code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ']' | ')'))
        })
    };
    let reads: Vec<String> = source
        .lines()
        .enumerate()
        .map(|(n, line)| (n + 1, line.split("//").next().unwrap_or_default()))
        .filter(|(_, code)| {
            indexed(code)
                || [".as_u64()", ".as_f64()", ".as_str()", ".as_array()", ".is_object()"]
                    .iter()
                    .any(|r| code.contains(r))
        })
        .map(|(n, code)| format!("{n}: {}", code.trim()))
        .collect();
    assert!(
        reads.is_empty(),
        "render.rs reads a phase's figures through FileserverCellFigures, not by key:\n{}",
        reads.join("\n")
    );
    assert!(
        indexed(r#"let phase = m["phase"].as_str();"#) && !indexed(r#"row(["Connections".into()])"#),
        "the check finds a read"
    );
}

#[test]
fn fileservers_figures_are_named_only_where_they_are_declared() {
    let declared = product_code("crates/fileserver/src/figures.rs");
    let figures = [
        "\"total_kib_per_sec\"",
        "\"avg_connection_kib_per_sec\"",
        "\"lost_samples\"",
        "\"kib_per_sec_sum_of_clients\"",
        "\"completion_ns\"",
    ];
    assert!(figures.iter().all(|f| declared.contains(f)), "figures.rs names its metrics");
    for file in
        ["crates/fileserver/src/render.rs", "crates/fileserver/src/runner.rs", "crates/fileserver/src/cli/suite.rs"]
    {
        let code = product_code(file);
        let named: Vec<&&str> = figures.iter().filter(|f| code.contains(**f)).collect();
        assert!(named.is_empty(), "{file} names {named:?}: the suite writes and its tables read FileserverCellFigures");
    }
}

#[test]
fn a_fileserver_phase_stored_with_figures_missing_or_mistyped_still_shows() {
    let sb = Sandbox::new();
    let run = fileserver(
        &sb,
        &sb.target(),
        &["--connections", "2", "--files-per-connection", "3", "--mix", "50", "--verify"],
    );
    let id = run["run"]["id"].as_i64().unwrap();
    // What a phase stores, key for key, as main's writer stored it before the figures were typed.
    let mut keys: Vec<String> = cells(&run)[0]["metrics"].as_object().unwrap().keys().cloned().collect();
    keys.sort();
    let mut want = vec![
        "avg_connection_kib_per_sec",
        "caches_dropped",
        "clients",
        "completion_ns",
        "connections_failed",
        "connections_ok",
        "connections_skipped",
        "done",
        "errors",
        "failed_clients",
        "kib_per_sec_sum_of_clients",
        "lost",
        "lost_samples",
        // What else the machine did during the phase: the harness's record of every cell (issue 50).
        "machine",
        "ops",
        "phase",
        "planned",
        "repeat",
        // The phase's operations over time (issue 52).
        "series",
        "setup",
        "start_barrier",
        "total_kib_per_sec",
        "verify",
    ];
    want.sort_unstable();
    assert_eq!(keys, want, "the write phase's stored figures");
    assert_eq!(cells(&run)[1]["metrics"]["read_percent"], 50, "the mixed phase stores its share of reads");
    let db = rusqlite::Connection::open(sb.db()).unwrap();
    let changed = db
        .execute(
            "UPDATE cells SET metrics_json = json_set(json_remove(metrics_json, '$.lost', '$.errors', '$.clients', \
             '$.phase'), '$.ops.open', json('null'), '$.caches_dropped', 'yes', '$.connections_ok', 'six', \
             '$.ops.write.p99_ns', 'slow') WHERE run_id = ?1",
            [id],
        )
        .unwrap();
    assert_eq!(changed, 2);
    drop(db);
    let out = sb.run(&["show", &id.to_string()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("Write test: 2 connections x 3 files"), "the phase's name comes from its row: {stdout}");
    assert!(stdout.contains("Mixed test (50% of visits read"), "{stdout}");
    assert!(!stdout.contains("Avg Open response time"), "a null operation is left out: {stdout}");
    assert!(stdout.contains("Avg Write response time"), "{stdout}");
    assert!(stdout.contains("Connections                                    0 ok, 0 failed"), "{stdout}");
    assert!(stdout.contains("Errors (connections failed, by kind)           none"), "{stdout}");
    assert!(stdout.contains("Lost samples (operations not done)             0\n"), "{stdout}");
    assert!(!stdout.contains("page cache dropped"), "{stdout}");
}
