//! `run access`: access specs move what they were asked to, and their figures agree with each other.
use crate::helpers::*;
use serde_json::Value;
use std::process::Command;

fn access(sb: &Sandbox, target: &str, args: &[&str]) -> Value {
    let mut all = vec!["run", "access", "--target", target];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    sb.last_run()
}

fn check_sane(run: &Value, bytes_per_client: Option<u64>) {
    let cells = cells(run);
    assert!(!cells.is_empty());
    for c in &cells {
        let m = &c["metrics"];
        let bs = c["record_size"].as_u64().unwrap();
        let bytes = c["bytes"].as_u64().unwrap();
        let ops = c["ops"].as_u64().unwrap();
        let clients = c["clients"].as_u64().unwrap();
        if let Some(b) = bytes_per_client {
            assert_eq!(bytes, b * clients, "bytes moved = bytes asked: {c}");
        }
        assert_eq!(ops * bs, bytes, "{c}");
        assert_eq!(m["read_bytes"].as_u64().unwrap() + m["write_bytes"].as_u64().unwrap(), bytes);
        // IOPS x block size = MiB/s x 2^20, both over the same wall time.
        let iops = m["iops"].as_f64().unwrap();
        let mib = m["mib_per_sec"].as_f64().unwrap();
        assert!(iops > 0.0 && mib > 0.0, "{c}");
        assert!((iops * bs as f64 - mib * 1048576.0).abs() <= mib * 1048576.0 * 1e-9, "{c}");
        // Percentiles in order, counts matching the requests.
        let mut counted = 0;
        for side in ["read", "write"] {
            let s = &m[side];
            let count = s["count"].as_u64().unwrap();
            counted += count;
            if count == 0 {
                continue;
            }
            let keys = ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "max_ns"];
            let v: Vec<u64> = keys.iter().map(|k| s[k].as_u64().unwrap()).collect();
            assert!(v.windows(2).all(|w| w[0] <= w[1]), "{side} percentiles out of order: {v:?}");
            assert!(v[0] > 0);
        }
        assert_eq!(counted, ops);
        // The per-second series accounts for every request.
        let series_ops: u64 = m["per_second"].as_array().unwrap().iter().map(|s| s["ops"].as_u64().unwrap()).sum();
        assert_eq!(series_ops, ops);
    }
}

#[test]
fn a_sweep_moves_exactly_the_bytes_asked_with_consistent_figures() {
    let sb = Sandbox::new();
    let target = sb.target();
    let run = access(
        &sb,
        target.to_str().unwrap(),
        &[
            "--bs",
            "4k,64k",
            "--read",
            "100,70,0",
            "--qd",
            "1,8",
            "--bytes",
            "4m",
            "--file-size",
            "16m",
            "--backend",
            "io_uring",
        ],
    );
    assert_eq!(cells(&run).len(), 2 * 3 * 2);
    check_sane(&run, Some(4 << 20));
    for c in cells(&run) {
        let m = &c["metrics"];
        let read_share = m["read_bytes"].as_f64().unwrap() / c["bytes"].as_f64().unwrap();
        let want = m["read_percent"].as_f64().unwrap() / 100.0;
        // A seeded coin per request: within 4 standard deviations of the binomial.
        let n = c["ops"].as_f64().unwrap();
        let sigma = (want * (1.0 - want) / n).sqrt();
        assert!(
            (read_share - want).abs() <= 4.0 * sigma + 1e-9,
            "read share {read_share} for {want} over {n} requests"
        );
    }
    assert!(sb.leftovers().is_empty());
}

#[test]
fn keep_leaves_each_clients_file_in_the_working_folder() {
    let sb = Sandbox::new();
    let target = sb.target();
    let run = access(
        &sb,
        target.to_str().unwrap(),
        &["--bs", "4k", "--bytes", "64k", "--file-size", "1m", "--clients", "2", "--keep"],
    );
    check_sane(&run, Some(64 << 10));
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1, "one working folder: {kept:?}");
    for rank in 0..2 {
        let file = kept[0].join(format!("client-{rank}")).join("access.dat");
        let len = std::fs::metadata(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())).len();
        assert_eq!(len, 1 << 20, "{}", file.display());
    }
}

#[test]
fn io_uring_and_psync_agree_on_bytes_moved_and_clients_add_up() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let common =
        ["--bs", "16k", "--read", "50", "--random", "50", "--bytes", "2m", "--file-size", "8m", "--clients", "2"];
    let mut uring: Vec<&str> = common.to_vec();
    uring.extend(["--backend", "io_uring", "--qd", "1"]);
    let mut psync: Vec<&str> = common.to_vec();
    psync.extend(["--backend", "psync"]);
    let a = access(&sb, t, &uring);
    let b = access(&sb, t, &psync);
    check_sane(&a, Some(2 << 20));
    check_sane(&b, Some(2 << 20));
    assert_eq!(cells(&a)[0]["bytes"], cells(&b)[0]["bytes"]);
    assert_eq!(cells(&a)[0]["client_figures"].as_array().unwrap().len(), 2);
    // Histograms are stored with the cell, one per direction.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let blobs: i64 =
        conn.query_row("SELECT COUNT(*) FROM cell_blobs WHERE name LIKE 'latency.%'", [], |r| r.get(0)).unwrap();
    assert_eq!(blobs, 4);
}

#[test]
fn duration_limited_cells_run_for_their_time() {
    let sb = Sandbox::new();
    let target = sb.target();
    let run = access(&sb, target.to_str().unwrap(), &["--qd", "4", "--duration", "1200ms", "--file-size", "8m"]);
    check_sane(&run, None);
    let wall = cells(&run)[0]["wall_ns"].as_u64().unwrap();
    assert!((1_200_000_000..3_000_000_000).contains(&wall), "wall {wall} ns");
    assert_eq!(run["run"]["conditions"]["backend"], "io_uring");
}

#[test]
fn rate_limit_holds() {
    let sb = Sandbox::new();
    let target = sb.target();
    let run = access(&sb, target.to_str().unwrap(), &["--rate", "200", "--duration", "1s", "--file-size", "4m"]);
    let ops = cells(&run)[0]["ops"].as_u64().unwrap();
    assert!((150..=215).contains(&ops), "{ops} requests at 200/s for 1 s");
}

#[test]
fn direct_access_on_loop_mounted_ext4_and_xfs() {
    for fstype in ["ext4", "xfs"] {
        let Some(fs) = Mount::image(fstype, 300) else { continue };
        let sb = Sandbox::new();
        let run = access(
            &sb,
            fs.point.to_str().unwrap(),
            &["--bs", "4k,128k", "--qd", "1,16", "--read", "100,0", "--direct", "--bytes", "8m", "--file-size", "64m"],
        );
        assert_eq!(run["run"]["environment"]["target"]["fs_type"], fstype);
        assert_eq!(run["run"]["conditions"]["direct"], true);
        check_sane(&run, Some(8 << 20));
        assert!(leftovers(&fs.point).is_empty());
    }
}

/// `--poll-completions`: how completions were taken is stored with the run (and
/// says so when they were waited for), polled figures are as sane as waited-for
/// ones, and only io_uring polls.
#[test]
fn polled_completions_are_stored_with_the_run_and_only_io_uring_polls() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let polled = ["--backend", "io_uring", "--qd", "1,8", "--bytes", "4m", "--file-size", "8m"];
    let run = access(&sb, t, &[&polled[..], &["--poll-completions", "50us"]].concat());
    check_sane(&run, Some(4 << 20));
    let how = run["run"]["conditions"]["completions"].as_str().unwrap();
    assert!(how.starts_with("polled for up to 50 us before each wait"), "{how}");
    assert_eq!(run["run"]["plan"]["poll_completions_us"], 50);
    let waited = access(&sb, t, &polled);
    check_sane(&waited, Some(4 << 20));
    let how = waited["run"]["conditions"]["completions"].as_str().unwrap();
    assert!(how.starts_with("waited for"), "{how}");
    assert!(waited["run"]["plan"].get("poll_completions_us").is_none());

    let refused = |args: &[&str], needle: &str| {
        let all = [&["run", "access", "--target", t, "--file-size", "4m"][..], args].concat();
        assert_usage_error(&sb.run(&all), needle);
    };
    refused(&["--backend", "psync", "--poll-completions", "50us"], "needs --backend io_uring");
    refused(&["--backend", "io_uring", "--poll-completions", "20ms"], "give 1us to 10ms");
    refused(&["--backend", "io_uring", "--poll-completions", "0us"], "zero");
    refused(&["--backend", "io_uring", "--poll-completions", "fast"], "not a duration");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "only refusals after the two runs, which clean up");
}

/// `--submit-batch`: the group size is stored with the run and each cell says
/// how its requests went in (the default by depth: 1 at depth 8, 4 at 32);
/// only local io_uring groups its submissions.
#[test]
fn submission_groups_are_stored_with_the_run_and_only_io_uring_groups() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let grouped = ["--backend", "io_uring", "--qd", "8,32", "--bytes", "4m", "--file-size", "8m"];
    let requests = |run: &Value| -> Vec<String> {
        cells(run).iter().map(|c| c["metrics"]["requests"][0].as_str().unwrap().to_string()).collect()
    };
    let run = access(&sb, t, &grouped);
    check_sane(&run, Some(4 << 20));
    let said = requests(&run);
    assert!(said[0].ends_with("submitted in groups of up to 1"), "{said:?}");
    assert!(said[1].ends_with("submitted in groups of up to 4"), "{said:?}");
    let how = run["run"]["conditions"]["submissions"].as_str().unwrap();
    assert!(how.contains("groups of up to depth/8 (1 to 8)"), "{how}");
    assert!(run["run"]["plan"].get("submit_batch").is_none());

    let run = access(&sb, t, &[&grouped[..], &["--submit-batch", "2"]].concat());
    check_sane(&run, Some(4 << 20));
    let said = requests(&run);
    assert!(said.iter().all(|s| s.ends_with("submitted in groups of up to 2")), "{said:?}");
    assert!(run["run"]["conditions"]["submissions"].as_str().unwrap().contains("groups of up to 2"));
    assert_eq!(run["run"]["plan"]["submit_batch"], 2);
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(shown.contains("submissions: handed to the kernel in groups of up to 2"), "{shown}");
    assert!(shown.contains("completions: waited for"), "{shown}");

    let psync = access(&sb, t, &["--backend", "psync", "--qd", "1", "--bytes", "1m", "--file-size", "4m"]);
    assert!(psync["run"]["conditions"].get("submissions").is_none(), "psync has no groups");
    let (shown, _) = text(&sb.run(&["show", &psync["run"]["id"].to_string()]));
    assert!(!shown.contains("submissions:") && !shown.contains("completions:"), "{shown}");

    let refused = |args: &[&str], needle: &str| {
        let all = [&["run", "access", "--target", t, "--file-size", "4m"][..], args].concat();
        assert_usage_error(&sb.run(&all), needle);
    };
    refused(&["--backend", "psync", "--submit-batch", "4"], "needs --backend io_uring");
    refused(&["--backend", "io_uring", "--submit-batch", "0"], "give 1 or more");
    refused(&["--backend", "io_uring", "--submit-batch", "many"], "--submit-batch");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "only refusals after the runs, which clean up");
}

#[test]
fn bad_access_input_is_refused() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["run", "access", "--target", t, "--file-size", "4m"];
        all.extend_from_slice(args);
        sb.run(&all)
    };
    assert_usage_error(&run(&["--qd", "0"]), "--qd 0");
    assert_usage_error(&run(&["--qd", "40000"]), "above what io_uring accepts");
    assert_usage_error(&run(&["--read", "101"]), "101% is over 100");
    assert_usage_error(&run(&["--direct", "--bs", "1000"]), "multiple of 512");
    assert_usage_error(&run(&["--duration", "0s"]), "zero");
    assert_usage_error(&run(&["--backend", "psync", "--qd", "32"]), "needs a queued backend");
    assert_usage_error(&run(&["--bs", "8m"]), "larger than the file");
    assert_usage_error(&run(&["--qd", "x"]), "not a whole number");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn a_raw_device_is_used_only_when_named_twice_and_free() {
    let Some(dev) = LoopDevice::new(8, 0xab) else { return };
    let sb = Sandbox::new();
    let d = dev.path();
    let base = ["run", "access", "--device", d, "--bs", "64k", "--bytes", "256k", "--file-size", "4m"];
    let with = |extra: &[&str]| {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        sb.run(&all)
    };
    assert_usage_error(&with(&[]), "--destroy-data-on");
    assert_usage_error(&with(&["--destroy-data-on", "/dev/null"]), "--destroy-data-on");
    assert_usage_error(
        &sb.run(&["run", "access", "--device", d, "--destroy-data-on", d, "--bs", "64k", "--file-size", "9m"]),
        "larger than",
    );
    let image = dev.image.to_str().unwrap();
    assert_usage_error(
        &sb.run(&["run", "access", "--device", image, "--destroy-data-on", image]),
        "not a block device",
    );
    // The image was never touched by the refused runs.
    assert!(std::fs::read(&dev.image).unwrap().iter().all(|&b| b == 0xab));
    if have("mkfs.ext4") {
        assert!(Command::new("mkfs.ext4").args(["-q", "-F", d]).status().unwrap().success());
        let mounted = DeviceMount::new(d).expect("mount the fresh ext4");
        assert_usage_error(&with(&["--destroy-data-on", d]), "in use");
        drop(mounted);
    } else {
        skip("the mounted-device check needs mkfs.ext4 (e2fsprogs)");
    }
}

#[test]
fn a_raw_device_run_writes_exactly_its_working_set() {
    let Some(dev) = LoopDevice::new(8, 0xab) else { return };
    let sb = Sandbox::new();
    let d = dev.path();
    // One sequential pass of writes over the first 4 MiB, through O_DIRECT.
    let out = sb.run(&[
        "run",
        "access",
        "--device",
        d,
        "--destroy-data-on",
        d,
        "--file-size",
        "4m",
        "--bytes",
        "4m",
        "--bs",
        "64k",
        "--read",
        "0",
        "--random",
        "0",
        "--direct",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    check_sane(&run, Some(4 << 20));
    assert_eq!(run["run"]["environment"]["target"]["fs_type"], "raw block device", "{run}");
    let data = std::fs::read(&dev.image).unwrap();
    let (written, untouched) = data.split_at(4 << 20);
    // iomatrix's buffers hold pseudo-random bytes: every 4 KiB of the working set changed.
    assert!(written.chunks(4096).all(|page| page.iter().any(|&b| b != 0xab)), "the whole working set was written");
    assert!(untouched.iter().all(|&b| b == 0xab), "nothing beyond the working set was written");
    // Two clients share the whole device at depth 8, mixed and random.
    let out = sb.run(&[
        "run",
        "access",
        "--device",
        d,
        "--destroy-data-on",
        d,
        "--bytes",
        "1m",
        "--bs",
        "4k",
        "--read",
        "70",
        "--qd",
        "8",
        "--clients",
        "2",
        "--direct",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    check_sane(&run, Some(1 << 20));
    assert_eq!(cells(&run)[0]["file_size"].as_u64(), Some(8 << 20), "the default working set is the whole device");
}
