//! Throughput-latency curves and open loop (`run access --curve`, `--arrivals`; issue 52), against
//! the physics of a loop device that a blkio throttle holds to 2,000 reads a second (O_DIRECT:
//! the throttle does not hold buffered I/O). Measured here with fio 3.33: 1,998-2,000 IOPS at
//! depths 1 to 8, so the curve's maximum is known; below it the device has no queue, so an open
//! loop meets its offered rate and its latency is the device's service time.
use crate::helpers::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const LIMIT: f64 = 2000.0;

/// `iomatrix run access` on the throttled device's raw blocks, inside its cgroup, with `args`.
fn on_device(sb: &Sandbox, dev: &ThrottledDevice, args: &[&str]) -> std::process::Command {
    let mut cmd = dev.command(env!("CARGO_BIN_EXE_iomatrix"));
    cmd.env("IOMATRIX_DB", sb.db()).current_dir(sb.dir.path()).stdin(Stdio::null());
    let path = dev.path();
    cmd.args(["run", "access", "--device", path, "--destroy-data-on", path, "--direct", "--bs", "4k"]);
    cmd.args(["--read", "100", "--random", "100", "--file-size", "64m"]);
    cmd.args(args);
    cmd
}

fn metrics(cell: &Value) -> &Value {
    &cell["metrics"]
}

/// A stored cell's offered rate (open loop), its achieved rate, and its curve's latency figures.
fn point(cell: &Value) -> (Option<f64>, f64, &Value) {
    let m = metrics(cell);
    (m["open_loop"]["offered_per_sec"].as_f64(), m["iops"].as_f64().unwrap(), &m["curve"]["latency"])
}

#[test]
fn a_curve_on_a_2000_iops_device_finds_its_maximum_and_meets_each_offered_rate() {
    let Some(dev) = ThrottledDevice::new(64, 0x5a) else { return };
    dev.set(ThrottleLimit::ReadIops, LIMIT as u64);
    let sb = Sandbox::new();
    // A warm-up at each point's own load: the throttle's first slice lets a burst through, which
    // a cell that began with it would count (the maximum measured 2,050 without one). 4 s cells:
    // the throttle allows up to a slice's worth (200 requests) ahead of its rate, which over 3 s
    // measured up to 2,059. And a pause between cells, so each begins on a slice of its own.
    // A queue of 32: the saturated point's mean is 32/2,000 s = 16 ms (Little's law), and an
    // open-loop point below it has slots to spare, so its mean is the throttle's slices' waits
    // alone (2-5 ms here). At a queue of 8 (4 ms saturated) a loaded machine's 50% point measured
    // 5.1 ms: its full queue made arrivals late, and they count from their intended start.
    let args = ["--qd", "32", "--duration", "4s", "--ramp", "500ms", "--between-cells", "sleep 0.3"];
    let args = [&args[..], &["--curve", "10,50,90", "--arrivals", "uniform"]].concat();
    // The throttle's own rate falls when the loop device's worker waits for a CPU (fio measured
    // down to 1,875 beside other builds): a point then falls behind the device, not iomatrix. A
    // curve that fails the physics is measured again once, and the second must hold it.
    let mut tries = 0;
    let (run, cells) = loop {
        tries += 1;
        let out = on_device(&sb, &dev, &[&args[..], &["--stop-curve", "p99:500ms"]].concat()).output().unwrap();
        assert_success(&out);
        let run = sb.last_run();
        let cells = cells(&run);
        match points_obey_the_device(&cells) {
            Ok(()) => break (run, cells),
            Err(why) if tries == 1 => eprintln!("measured again once: {why}"),
            Err(why) => panic!("{why}"),
        }
    };
    let max = point(&cells[0]).1;
    let max_mean = point(&cells[0]).2["mean_ns"].as_f64().unwrap();
    // Not asserted: that the mean rises with the load. The throttle holds some requests for up
    // to a slice (100 ms) even below its limit, and how many is not monotonic in the load: the
    // 10% point's mean measured 0.36 to 2.2 ms over four runs, the 50% point's 0.37 to 1.2 ms,
    // the 90% point's 1.3 to 1.5 ms (docs/curves.md).
    let last = &metrics(&cells[3])["curve"];
    let within = last["max_within_bound_iops"].as_f64().unwrap();
    assert!((within - max).abs() < 1e-6, "every point meets p99 <= 500 ms, the maximum among them: {last}");
    let ort = last["overall_response_time_ns"].as_f64().unwrap();
    assert!(ort > 0.0 && ort < max_mean, "the overall response time {ort} is over the open points' means");
    let shown = text(&sb.run(&["show", &run["run"]["id"].to_string()])).0;
    let said =
        ["curve 4k qd=32 read=100% random=100%", "maximum within the bound:", "overall response time (SPEC SFS 2014):"];
    for said in said {
        assert!(shown.contains(said), "show prints {said:?}:\n{shown}");
    }
}

/// The curve's physics on the 2,000 IOPS device: its maximum 2,000 within 3%, each open-loop
/// point at its offered rate within 1%, its mean under the saturated one, next to no backlog.
fn points_obey_the_device(cells: &[Value]) -> Result<(), String> {
    if cells.len() != 4 {
        return Err(format!("the maximum and three points, not {} cells", cells.len()));
    }
    let (offered, max, max_latency) = point(&cells[0]);
    let max_mean = max_latency["mean_ns"].as_f64().unwrap();
    eprintln!("maximum: {max:.1} IOPS, mean {max_mean:.0} ns");
    let check = |ok: bool, why: String| if ok { Ok(()) } else { Err(why) };
    check(offered.is_none(), "the maximum is closed loop".into())?;
    check((max - LIMIT).abs() <= LIMIT * 0.03, format!("the curve's maximum {max:.1} is not 2,000 within 3%"))?;
    for (cell, share) in cells[1..].iter().zip([0.1, 0.5, 0.9]) {
        let (offered, achieved, latency) = point(cell);
        let offered = offered.ok_or("an open-loop point stores its offered rate")?;
        let open = &metrics(cell)["open_loop"];
        let mean = latency["mean_ns"].as_f64().unwrap();
        eprintln!("offered {offered:.1}, achieved {achieved:.1}, mean {mean:.0} ns, {open}");
        check(
            (offered - share * max).abs() <= share * max * 0.01,
            format!("{share} of {max:.1} offered as {offered:.1}"),
        )?;
        check((achieved - offered).abs() <= offered * 0.01, format!("offered {offered:.1}, achieved {achieved:.1}"))?;
        check(
            mean < max_mean,
            format!("below the maximum the mean {mean:.0} ns is below the saturated {max_mean:.0}"),
        )?;
        // Zero, but for a stall of the throttle (up to a slice) at the cell's very end that fills
        // every slot: measured 0 in most runs, 5 of 5,500 once at 90%.
        let backlog = open["backlog"].as_f64().unwrap();
        check(backlog <= offered * 4.0 * 0.01, format!("below the maximum next to nothing is left unissued: {open}"))?;
    }
    Ok(())
}

/// The device's reads completed so far (/sys/block/NAME/stat's first field).
fn reads_done(device: &str) -> u64 {
    let name = Path::new(device).file_name().unwrap().to_string_lossy().into_owned();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

/// Runs `args` on the device and, once `reads` reads are done (the timed cell is under way),
/// stalls it: 1 request a second for 1 s, then 2,000 again. Returns the run's one cell.
fn stalled(sb: &Sandbox, dev: &ThrottledDevice, args: &[&str], reads: u64) -> Value {
    dev.set(ThrottleLimit::ReadIops, LIMIT as u64);
    let before = reads_done(dev.path());
    // Its output to a file: a pipe nobody reads would stop the run once full.
    let said = sb.dir.path().join("stalled.out");
    let file = std::fs::File::create(&said).unwrap();
    let mut child = Running(on_device(sb, dev, args).stdout(file.try_clone().unwrap()).stderr(file).spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    while reads_done(dev.path()) < before + reads {
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before its cell read");
        assert!(Instant::now() < deadline, "no {reads} reads within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    dev.set(ThrottleLimit::ReadIops, 1);
    std::thread::sleep(Duration::from_secs(1));
    dev.set(ThrottleLimit::ReadIops, LIMIT as u64);
    let status = wait_for_exit(&mut child);
    let output = std::fs::read_to_string(&said).unwrap_or_default();
    assert!(status.success(), "the stalled run failed: {status:?}\n{output}");
    let run = sb.last_run();
    cells(&run).into_iter().next().expect("the run's cell")
}

#[test]
fn an_open_loop_counts_a_stall_from_each_requests_intended_start_and_a_closed_loop_does_not() {
    let Some(dev) = ThrottledDevice::new(64, 0x5a) else { return };
    let sb = Sandbox::new();
    // 200 a second, a tenth of the limit: after the stall the backlog drains at 2,000 a second,
    // so the request meant to start as the stall began waits the whole stall (about 1 s, less
    // the gap to its arrival: under 5 ms), and the ones after it a little less.
    let open = stalled(&sb, &dev, &["--qd", "8", "--duration", "4s", "--rate", "200", "--arrivals", "uniform"], 100);
    let read = &metrics(&open)["read"];
    let (p999, max) = (read["p99_9_ns"].as_f64().unwrap(), read["max_ns"].as_f64().unwrap());
    eprintln!("open loop: p99.9 {p999:.0} ns, max {max:.0} ns, {}", metrics(&open)["open_loop"]);
    assert!(max >= 0.95e9, "the stall of 1 s is in the open loop's max: {max:.0} ns");
    assert!(p999 >= 0.9e9, "and in its p99.9: {p999:.0} ns");
    assert!(metrics(&open)["open_loop"]["late"].as_u64().unwrap() > 0, "the stalled arrivals were issued late");
    // Closed loop, one request at a time: the one request in flight waits the stall, and the
    // thousands around it do not see it, so the stall is one sample among them.
    let closed = stalled(&sb, &dev, &["--qd", "1", "--duration", "4s"], 1000);
    let read = &metrics(&closed)["read"];
    let (p999, max) = (read["p99_9_ns"].as_f64().unwrap(), read["max_ns"].as_f64().unwrap());
    eprintln!("closed loop: p99.9 {p999:.0} ns, max {max:.0} ns");
    assert!(max >= 0.9e9, "the closed loop's one stalled request: {max:.0} ns");
    assert!(p999 < 0.5e9, "a closed loop hides the stall from its p99.9: {p999:.0} ns");
    assert!(metrics(&closed)["open_loop"].is_null());
}

#[test]
fn a_bound_below_the_idle_latency_ends_the_curve_with_a_stored_verdict() {
    let sb = Sandbox::new();
    let target = sb.target();
    let args = ["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m", "--duration", "1s"];
    let out = sb.run(&[&args[..], &["--curve", "10,50", "--stop-curve", "p99:1us"]].concat());
    assert_success(&out);
    let (stdout, _) = text(&out);
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 2, "the maximum and the lightest point; 50% left out");
    let curve = &metrics(&cells[1])["curve"];
    let ended = curve["ended"].as_str().unwrap();
    assert!(ended.starts_with("no load point meets p99 <= 1.0 us; the lightest point's p99 is "), "{ended}");
    assert!(curve["max_within_bound_iops"].is_null(), "no maximum is made up: {curve}");
    assert!(stdout.contains(ended), "the run says it: {stdout}");
    assert_eq!(run["run"]["status"], "complete", "a curve its bound ended is a complete run");
    assert!(run["run"]["lost"].is_null(), "the points left out are not lost: {}", run["run"]["lost"]);
}

#[test]
fn rates_and_curves_that_cannot_be_met_are_refused_before_anything_runs() {
    let sb = Sandbox::new();
    let target = sb.target();
    let base = ["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m"];
    let refused = |args: &[&str], needle: &str| {
        let out = sb.run(&[&base[..], args].concat());
        assert_usage_error(&out, needle);
    };
    refused(&["--curve", "500/s", "--duration", "10ms"], "fewer than the 10");
    refused(&["--rate", "2000000", "--arrivals", "uniform"], "less than 1 us apart");
    refused(&["--arrivals", "poisson"], "needs a rate");
    refused(&["--curve", "--bytes", "1m"], "not --bytes");
    refused(&["--curve", "10,150"], "outside 1-100%");
    refused(&["--curve", "--repeat", "2"], "--curve with --repeat");
    refused(&["--stop-curve", "p99:1ms"], "--curve");
    assert!(sb.leftovers().is_empty(), "nothing ran");
}

/// Under mpirun rank 0 judges each point and its word after the point tells the other ranks which
/// points its bound left out: every rank leaves out the same ones. A rank that had not heard would
/// run the 50% point alone and rank 0 would store it (a cell is left out only when every client
/// left it out), so the stored points tell whether the word went through.
#[test]
fn a_stop_curve_under_mpirun_ends_the_curve_on_every_rank() {
    let Some(bin) = crate::mpi::mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let run = [bin.to_str().unwrap(), "run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m"];
    let curve = ["--duration", "1s", "--curve", "10,50,90", "--stop-curve", "p99:1us"];
    let (out, took) = crate::mpi::mpirun(&sb, 2, &[&run[..], &curve[..]].concat(), Duration::from_secs(120));
    assert_success(&out);
    let stored = sb.last_run();
    let cells = cells(&stored);
    let loads: Vec<&str> = cells.iter().map(|c| c["name"].as_str().unwrap_or("")).collect();
    assert_eq!(cells.len(), 2, "the maximum and the lightest point, on both ranks; stored: {loads:?}");
    let ended = metrics(&cells[1])["curve"]["ended"].as_str().unwrap_or_default();
    assert!(ended.starts_with("no load point meets p99 <= 1.0 us"), "{ended}");
    for cell in &cells {
        let ranks = cell["client_figures"].as_array().map_or(0, Vec::len);
        assert_eq!((cell["clients"].as_u64(), ranks), (Some(2), 2), "each point stored is both ranks': {cell}");
    }
    assert_eq!(stored["run"]["status"], "complete", "{}", stored["run"]);
    // Two 1 s points and mpirun's start; the two points left out would add 2 s more.
    println!("mpirun of a curve ended after its lightest point took {took:?}");
}

/// A bandwidth curve over NFS (the built-in client) on the lab's link shaped to 100 Mbit/s
/// (12,207 KiB/s): 64 KiB reads, so the link, not a device, is the limit. The maximum is what
/// the link carries; below it the link has room, so each open-loop point meets its offered rate
/// and waits on no queue: its mean is a request's time on the wire (about 5 ms for 64 KiB),
/// under the saturated point's, where 4 requests share the link (about 4 x 5 ms, Little's law).
#[test]
fn a_bandwidth_curve_over_nfs_on_a_100_mbit_link_finds_the_link_and_meets_each_offered_rate() {
    let Some(lab) = crate::lab_fixture::Lab::shared(crate::lab_fixture::Shared::Link100Mbit) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let sb = Sandbox::new();
    let run = ["run", "access", "--target", &nfs, "--file-size", "16m", "--bs", "64k", "--read", "100"];
    // 80%, not 90%: at 90% of the maximum, CI's loaded machine (client and server on its 2 CPUs
    // beside the rest of the suite) queued requests twice in a row (161.4 of 163.7 offered, a mean
    // of 24 ms above the saturated 22 ms), where the same point alone met its rate.
    let curve = ["--random", "100", "--qd", "4", "--duration", "3s", "--curve", "10,50,80", "--arrivals", "uniform"];
    assert_success(&sb.run(&[&run[..], &curve[..]].concat()));
    let stored = sb.last_run();
    let cells = cells(&stored);
    assert_eq!(cells.len(), 4, "the maximum and three points");
    let kib = |cell: &Value| cell["kib_per_sec"].as_f64().unwrap();
    let (_, max, max_latency) = point(&cells[0]);
    let max_mean = max_latency["mean_ns"].as_f64().unwrap();
    eprintln!("maximum: {max:.1} IOPS, {:.0} KiB/s (the link: 12,207), mean {max_mean:.0} ns", kib(&cells[0]));
    // The link's rate is the most the wire carries (TCP and RPC headers take a little); the floor
    // only says the link carried the data: a loaded CI machine's debug build read 7,293 KB/s
    // through the same link (remote.rs).
    assert!(kib(&cells[0]) < 12_300.0, "{:.0} KiB/s is more than a 100 Mbit/s link carries", kib(&cells[0]));
    assert!(kib(&cells[0]) > 2_000.0, "{:.0} KiB/s: the link or the client stalled", kib(&cells[0]));
    // Little's law at the saturated point: 4 requests in flight at `max` a second wait 4/max s.
    let little = 4.0 / max * 1e9;
    assert!((max_mean - little).abs() <= little * 0.05, "mean {max_mean:.0} ns, Little's law {little:.0} ns");
    for (cell, share) in cells[1..].iter().zip([0.1, 0.5, 0.8]) {
        let (offered, achieved, latency) = point(cell);
        let offered = offered.expect("an open-loop point stores its offered rate");
        let mean = latency["mean_ns"].as_f64().unwrap();
        let open = &metrics(cell)["open_loop"];
        eprintln!("{share}: offered {offered:.1}, achieved {achieved:.1}, {:.0} KiB/s, mean {mean:.0} ns", kib(cell));
        // A 3 s point holds 55 (10%) to 436 (80%) requests: one request more or less at the
        // cell's edge is 2% of the lightest point, so the window is 1% or two requests. The 80%
        // point runs at 80% of a maximum measured once, on a machine whose speed drifts by a few
        // percent (CI, at 90%: achieved 161.4 of 163.7 offered, 5 requests waiting unissued), so
        // it has 3%, and its backlog may hold 2% of its requests: a generator that could not
        // keep its rate falls short by far more, as the saturated maximum does.
        let heavy = share > 0.5;
        let slack = if heavy { offered * 0.03 } else { (offered * 0.01).max(2.0 / 3.0) };
        assert!(
            (achieved - offered).abs() <= slack,
            "offered {offered:.1}, achieved {achieved:.1}, window {slack:.2} at {share}: {open}"
        );
        assert!(mean < max_mean, "below the maximum the mean {mean:.0} ns is below the saturated {max_mean:.0}");
        let waiting = if heavy { offered * 3.0 * 0.02 } else { 1.0 };
        assert!(
            open["backlog"].as_f64().unwrap() <= waiting,
            "below the link's rate at most {waiting:.1} requests wait unissued at {share}: {open}"
        );
    }
    poisson_means_rise_with_the_load(&sb, &[&run[..], &curve[..6]].concat());
}

/// The same curve with Poisson arrivals: requests now meet one another on the link, so a point's
/// mean rises with its load, as a queue with one server of fixed service time S (M/D/1) says:
/// S + rho S / (2 (1 - rho)), 1.06 S at 10%, 1.5 S at 50%, 5.5 S at 90%. Uniform arrivals at
/// these rates never queue, which is why their means do not rise (the test above).
fn poisson_means_rise_with_the_load(sb: &Sandbox, args: &[&str]) {
    assert_success(&sb.run(&[args, &["--curve", "10,50,90", "--arrivals", "poisson"]].concat()));
    let stored = sb.last_run();
    let means: Vec<f64> = cells(&stored)[1..].iter().map(|c| point(c).2["mean_ns"].as_f64().unwrap() / 1e6).collect();
    let s = means[0] / 1.06;
    let md1: Vec<f64> = [0.1, 0.5, 0.9].iter().map(|rho| s + rho * s / (2.0 * (1.0 - rho))).collect();
    eprintln!("poisson: means {means:.2?} ms; M/D/1 with S = {s:.2} ms: {md1:.2?} ms");
    assert!(means[2] > means[0] && means[2] > means[1], "the 90% point's mean is the highest: {means:.2?} ms");
}

/// A study asks for a curve as a step's flags: `curve = "10,50"` with its bound, or `curve =
/// true` for vdbench's points; each step's run holds the maximum and its points, with the curve's
/// figures on the last point.
#[test]
fn a_study_asks_for_a_curve_with_its_steps_flags() {
    let sb = Sandbox::new();
    let target = sb.target();
    let study = sb.dir.path().join("curve.toml");
    let toml = format!(
        "version = 1\nname = \"curves\"\ndescription = \"curves as steps\"\n\n[[config]]\nname = \"here\"\ntarget = \
         \"{}\"\n\n[[step]]\nname = \"listed\"\nsuite = \"access\"\nargs = {{ file-size = \"4m\", duration = \
         \"300ms\", curve = \"10,50\", stop-curve = \"p99:10s\" }}\n\n[[step]]\nname = \"vdbench\"\nsuite = \
         \"access\"\nargs = {{ file-size = \"4m\", duration = \"300ms\", curve = true }}\n",
        target.display()
    );
    std::fs::write(&study, toml).unwrap();
    assert_success(&sb.run(&["study", "run", study.to_str().unwrap()]));
    let ids: Vec<i64> = {
        let conn = rusqlite::Connection::open(sb.db()).unwrap();
        let mut q = conn.prepare("SELECT id FROM runs ORDER BY id").unwrap();
        q.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(ids.len(), 2, "a run a step");
    for (id, loads) in ids.iter().zip([&["max", "10%", "50%"][..], &["max", "10%", "50%", "70%", "80%", "90%", "100%"]])
    {
        let run: Value = serde_json::from_str(&text(&sb.run(&["show", &id.to_string(), "--json"])).0).unwrap();
        let cells = cells(&run);
        let load = |l: &Value| l.as_str().map_or_else(|| format!("{}%", l["percent"]), str::to_string);
        let stored: Vec<String> = cells.iter().map(|c| load(&metrics(c)["load"])).collect();
        assert_eq!(stored, loads, "run {id}'s points");
        let last = &metrics(cells.last().unwrap())["curve"];
        assert!(last["peak_iops"].as_f64().unwrap() > 0.0, "the curve's figures are stored: {last}");
        assert!(last["overall_response_time_ns"].as_f64().is_some(), "{last}");
    }
}
