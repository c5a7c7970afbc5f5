//! `run access` understands fio's option names: the ones that mean the same are accepted (and
//! give the same plan as iomatrix's own flags), the others are answered with the iomatrix flag to
//! use, exit 2. None meets a bare "unexpected argument". And `--ramp`, fio's ramp_time.
use crate::helpers::*;
use serde_json::Value;

fn plan_of(sb: &Sandbox, args: &[&str]) -> Value {
    let target = sb.target();
    let mut all = vec!["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m", "--bytes", "256k"];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    sb.last_run()["run"]["plan"].clone()
}

#[test]
fn fios_names_that_mean_the_same_give_the_same_plan() {
    let sb = Sandbox::new();
    // Each pair: fio's spelling, iomatrix's; the stored plans must be equal.
    let pairs: [(&[&str], &[&str]); 9] = [
        (&["--iodepth", "4"], &["--qd", "4"]),
        (&["--iodepth=4"], &["--qd", "4"]),
        (&["--blocksize", "8k"], &["--bs", "8k"]),
        (&["--rw", "randread"], &["--read", "100", "--random", "100"]),
        (&["--readwrite", "write"], &["--read", "0", "--random", "0"]),
        (&["--rw", "randrw", "--rwmixread", "70"], &["--read", "70", "--random", "100"]),
        (&["--rw=rw", "--rwmixwrite=30"], &["--read", "70", "--random", "0"]),
        (&["--ioengine", "sync"], &["--backend", "sync"]),
        (&["--rate_iops", "5000"], &["--rate", "5000"]),
    ];
    for (fio, ours) in pairs {
        let (a, b) = (plan_of(&sb, fio), plan_of(&sb, ours));
        assert_eq!(a, b, "{fio:?} against {ours:?}");
    }
    let runtime = plan_of(&sb, &[]);
    assert_eq!(runtime["limit"], serde_json::json!({"bytes": 262144}));
    // --runtime (fio's, seconds) is --duration; --size is --file-size; --numjobs is --clients.
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "2m",
        "--runtime",
        "1",
        "--numjobs",
        "2",
        "--ramp_time",
        "1ms",
        "--direct=1",
        "--random_distribution",
        "pareto:0.9",
    ]);
    assert_success(&out);
    let plan = &sb.last_run()["run"]["plan"];
    assert_eq!(plan["file_size"], 2 << 20, "{plan}");
    assert_eq!(plan["limit"], serde_json::json!({"duration_ms": 1000}), "{plan}");
    assert_eq!(plan["clients"], 2, "{plan}");
    assert_eq!(plan["ramp_ms"], 1, "{plan}");
    assert_eq!(plan["direct"], true, "{plan}");
    assert_eq!(plan["distribution"], "pareto:0.9", "{plan}");
    let plain = plan_of(&sb, &["--direct=0"]);
    assert_eq!(plain["direct"], false);
    // fio's command line also takes the value as the next word; the bare flag still ends before the next one.
    assert_eq!(plan_of(&sb, &["--direct", "1", "--bs", "4k"])["direct"], true);
    assert_eq!(plan_of(&sb, &["--direct", "--bs", "4k"])["direct"], true);
    assert_eq!(plan_of(&sb, &["--bs", "4k", "--direct"])["direct"], true);
}

#[test]
fn fios_other_names_are_answered_with_the_flag_to_use() {
    let sb = Sandbox::new();
    let target = sb.target();
    let cases: [(&[&str], &str); 23] = [
        (&["--time_based"], "--duration"),
        (&["--time_based=1"], "--duration"),
        (&["--name", "job1"], "--label name="),
        (&["--filename", "/dev/sdb"], "--device"),
        (&["--directory", "/mnt"], "--target DIR"),
        (&["--group_reporting"], "all its clients together"),
        (&["--output-format=json"], "--json"),
        (&["--bsrange", "4k-64k"], "--bs 4k,16k,64k"),
        (&["--bssplit", "4k/50:64k/40"], "--bssplit '4k/50:64k/40': the shares add up to 90%, not 100"),
        (&["--norandommap"], "without a random map"),
        (&["--loops", "3"], "--repeat N"),
        (&["--io_size", "1g"], "--bytes SIZE"),
        (&["--ioengine", "libaio"], "--backend io_uring"),
        (&["--rw", "trim"], "no trims"),
        (&["--rw", "randomread"], "not one of fio's names"),
        (&["--rwmixread", "70"], "--rw"),
        (&["--fsync=1"], "--fsync-every"),
        (&["--invalidate=1"], "--prepare dropped"),
        (&["--thinktime", "100"], "--rate IOPS"),
        (&["--zero_buffers"], "--compressible 100"),
        (&["--refill_buffers"], "--compressible 0"),
        (&["--number_ios=1000"], "--bytes SIZE"),
        (&["--rw", "randread", "--rwmixread", "70"], "does not mix"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["run", "access", "--target", target.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = sb.run(&all);
        let stderr = text(&out).1;
        assert!(!stderr.contains("unexpected argument"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?} should be answered with '{needle}': {stderr}");
    }
    // --rw with iomatrix's own mix flags is one mix too many.
    let out = sb.run(&["run", "access", "--target", target.to_str().unwrap(), "--rw", "randread", "--read", "50"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--read"), "{}", text(&out).1);
    // --blocksize is --bs now, not a suggestion of --file-size.
    let help = text(&sb.run(&["run", "access", "--help"])).0;
    for alias in ["--iodepth", "--blocksize", "--readwrite", "--runtime", "--numjobs", "--ioengine", "--ramp_time"] {
        assert!(help.contains(alias), "run access --help names fio's {alias}");
    }
    assert!(sb.leftovers().is_empty());
}

#[test]
fn a_ramp_is_untimed_stored_and_said() {
    let sb = Sandbox::new();
    let target = sb.target();
    // The warm-up (1.5 s) is longer than the timed part (1 s): allowed, and not in the figures.
    let started = std::time::Instant::now();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "4m",
        "--qd",
        "1",
        "--rate",
        "200",
        "--duration",
        "1s",
        "--ramp",
        "1500ms",
    ]);
    assert_success(&out);
    assert!(started.elapsed().as_millis() >= 2500, "the warm-up ran: {:?}", started.elapsed());
    let run = sb.last_run();
    assert_eq!(run["run"]["plan"]["ramp_ms"], 1500);
    assert!(
        run["run"]["conditions"]["ramp"].as_str().unwrap_or_default().contains("1500ms"),
        "{}",
        run["run"]["conditions"]
    );
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(shown.contains("\nramp: each cell first warms up for 1500ms"), "{shown}");
    let cell = &cells(&run)[0];
    // At 200 requests/s the timed second holds about 200 requests, not the 500 that 2.5 s would.
    let ops = cell["ops"].as_u64().unwrap();
    assert!((150..=215).contains(&ops), "{ops} requests counted: {cell}");
    let wall = cell["wall_ns"].as_u64().unwrap();
    assert!((1_000_000_000..1_400_000_000).contains(&wall), "the cell's time leaves the warm-up out: {wall} ns");

    // With --bytes the warm-up is still a time, and the byte count is the timed part's.
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "4m",
        "--bytes",
        "1m",
        "--ramp",
        "200ms",
    ]);
    assert_success(&out);
    let cell = &cells(&sb.last_run())[0];
    assert_eq!(cell["bytes"].as_u64(), Some(1 << 20), "{cell}");
    // A run without a ramp stores a ramp of 0, so compare sets it against a warm-up.
    let plan = plan_of(&sb, &[]);
    assert_eq!(plan["ramp_ms"], 0, "{plan}");
    let plan = plan_of(&sb, &["--ramp", "0"]);
    assert_eq!(plan["ramp_ms"], 0, "{plan}");
}

#[test]
fn bad_ramps_are_refused() {
    let sb = Sandbox::new();
    let target = sb.target();
    for (ramp, needle) in
        [("721h", "at most 30 days"), ("-1s", "negative"), ("soon", "not a duration"), ("500us", "1ms or more")]
    {
        let out = sb.run(&["run", "access", "--target", target.to_str().unwrap(), &format!("--ramp={ramp}")]);
        assert_usage_error(&out, needle);
        assert!(text(&out).1.contains("--ramp"), "{}", text(&out).1);
    }
}

/// The warm-up and a skewed distribution on a server (the lab's nfs-ganesha), with two clients:
/// the same runner path as local files, so the same figures leave the warm-up out.
#[test]
fn a_ramp_and_a_distribution_run_on_a_server_with_many_clients() {
    let Some(lab) = crate::lab_fixture::Lab::shared(crate::lab_fixture::Shared::Unshaped) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        &nfs,
        "--file-size",
        "4m",
        "--bs",
        "4k",
        "--numjobs",
        "2",
        "--iodepth",
        "2",
        "--rate",
        "100",
        "--runtime",
        "1",
        "--ramp_time",
        "1s",
        "--random_distribution",
        "zipf:1.2",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["plan"]["ramp_ms"], 1000);
    assert_eq!(run["run"]["plan"]["distribution"], "zipf:1.2");
    let cell = &cells(&run)[0];
    assert_eq!(cell["clients"].as_u64(), Some(2), "{cell}");
    // Two clients at 100 requests/s for the timed second: about 200, not the 400 of two seconds.
    let ops = cell["ops"].as_u64().unwrap();
    assert!((150..=215).contains(&ops), "{ops} requests counted: {cell}");
}

/// SIGTERM in the middle of a long warm-up: the run stops at once (the warm-up watches the same stop
/// flag as the cell), stores no cell of the warm-up's figures and leaves nothing behind.
#[test]
fn a_signal_during_the_warm_up_stops_the_run_without_a_cell() {
    let sb = Sandbox::new();
    let target = sb.target();
    let child = sb
        .cmd()
        .args(["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m"])
        .args(["--ramp", "60s", "--duration", "1s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Running(child);
    // The run is stored when it starts; the warm-up begins after the 4m lay-out.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stored_runs(&sb) == 0 {
        assert!(std::time::Instant::now() < deadline, "the run never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    let sent = std::time::Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    assert_eq!(wait_for_exit(&mut child).code(), Some(143));
    assert!(sent.elapsed() < std::time::Duration::from_secs(5), "stopped within the warm-up: {:?}", sent.elapsed());
    assert_eq!(stored_cells(&sb), 0, "no cell from a warm-up");
    assert_eq!(sb.runs_json()["runs"][0]["status"], "interrupted");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// Runs stored so far (0 while the database does not exist yet or is busy).
fn stored_runs(sb: &Sandbox) -> i64 {
    let Ok(conn) = rusqlite::Connection::open_with_flags(sb.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY) else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap_or(0)
}

/// Under mpirun every rank reads the warm-up and the distribution from rank 0's plan: two ranks at
/// 100 requests/s count about 200 requests in the timed second, none of the warm-up's.
#[test]
fn mpi_ranks_warm_up_and_skew_as_rank_0_planned() {
    let Some(bin) = crate::mpi::mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        bin.to_str().unwrap(),
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "4m",
        "--rate",
        "100",
        "--duration",
        "1s",
        "--ramp",
        "1s",
        "--distribution",
        "zipf:1.2",
    ];
    let (out, took) = crate::mpi::mpirun(&sb, 2, &args, std::time::Duration::from_secs(120));
    assert_success(&out);
    assert!(took >= std::time::Duration::from_secs(2), "every rank warmed up first: {took:?}");
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 2);
    assert_eq!(run["run"]["plan"]["distribution"], "zipf:1.2");
    let cell = &cells(&run)[0];
    let ops = cell["ops"].as_u64().unwrap();
    assert!((150..=215).contains(&ops), "{ops} requests counted: {cell}");
}
