//! Steady state (issue 52): `--steady-state` ends a cell once its per-interval figures meet fio
//! 3.33's rule (or SNIA PTS's), else the cell runs its limit and says "not attained"; the verdict
//! is stored with the cell, shown by `show`, and `iomatrix fio` prints fio's `steadystate :` line
//! and JSON object. Against real fio on a device of known physics: a loop device throttled to
//! 2,000 reads a second (blkio), where both agree on `attained`.
use crate::helpers::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// The job both tools run on the throttled device: 4 KiB random reads, O_DIRECT, io_uring at
/// depth 8, judged by iops:5% over a 3 s window. At depth 8 the throttle always holds requests
/// to dispatch when its next 100 ms slice opens: at depth 1 a client that the loaded machine
/// leaves off its CPU for part of a slice loses that slice's requests (a debug build beside the
/// whole test suite on 2 CPUs measured 1,069 in a second), and the rule would judge the machine.
const RULE: &str = "iops:5%";
const WINDOW_S: u64 = 3;

/// fio 3.33's verdict on the device: `attained` and its window's IOPS.
fn fio_verdict(td: &ThrottledDevice, runtime_s: u64) -> (bool, Vec<u64>) {
    let mut cmd = td.command("fio");
    cmd.args(["--name=steady", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring", "--iodepth=8"])
        .arg(format!("--filename={}", td.path()))
        .args(["--size=64m", "--time_based", &format!("--runtime={runtime_s}"), "--output-format=json"])
        .arg(format!("--steadystate={RULE}"))
        .arg(format!("--ss_dur={WINDOW_S}"));
    let out = bounded_child(cmd, Duration::from_secs(runtime_s + 30));
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("fio's JSON");
    let ss = &doc["jobs"][0]["steadystate"];
    let iops = ss["data"]["iops"].as_array().expect("fio's window").iter().map(|v| v.as_u64().unwrap()).collect();
    (ss["attained"].as_i64() == Some(1), iops)
}

/// iomatrix's verdict on the same job: `attained`, its window's IOPS, the cell's wall time and
/// when it was attained (seconds from the cell's start; 0 where it was not).
fn iomatrix_verdict(sb: &Sandbox, td: &ThrottledDevice, runtime_s: u64) -> (bool, Vec<u64>, f64, f64) {
    let mut cmd = td.command(env!("CARGO_BIN_EXE_iomatrix"));
    cmd.env("IOMATRIX_DB", sb.db()).current_dir(sb.dir.path());
    cmd.args(["run", "access", "--device", td.path(), "--destroy-data-on", td.path(), "--file-size", "64m"])
        .args(["--bs", "4k", "--read", "100", "--random", "100", "--qd", "8", "--backend", "io_uring", "--direct"])
        .args(["--duration", &format!("{runtime_s}s"), "--steady-state", RULE])
        .args(["--steady-window", &format!("{WINDOW_S}s")]);
    let out = bounded_child(cmd, Duration::from_secs(runtime_s + 30));
    assert_success(&out);
    let run = sb.last_run();
    let cell = &cells(&run)[0];
    let steady = &cell["metrics"]["steady"];
    let iops = steady["window"].as_array().expect("a stored window").iter().map(|s| s["iops"].as_u64().unwrap());
    let at = steady["attained_at_ns"].as_f64().unwrap_or(0.0) / 1e9;
    (steady["attained"] == true, iops.collect(), cell["wall_ns"].as_f64().unwrap() / 1e9, at)
}

fn throttled() -> Option<ThrottledDevice> {
    if !have("fio") {
        skip("steady state beside fio needs fio (Debian's fio 3.33)");
        return None;
    }
    let td = ThrottledDevice::new(64, 0x5a)?;
    td.set(ThrottleLimit::ReadIops, 2000);
    Some(td)
}

/// On the device throttled to a steady 2,000 reads a second both tools attain iops:5% over 3 s,
/// in every one of 5 runs (the issue's; the unsteady run below is a sixth), and iomatrix ends its
/// cell when it is attained (at the end of its 3rd whole second or a little later), short of the
/// 10 s asked.
#[test]
fn a_steady_device_is_attained_by_iomatrix_and_fio_alike_in_each_run() {
    let Some(td) = throttled() else { return };
    let sb = Sandbox::new();
    let begun = Instant::now();
    for run in 1..=5 {
        let (fio_attained, fio_window) = fio_verdict(&td, 10);
        let (attained, window, wall_s, at_s) = iomatrix_verdict(&sb, &td, 10);
        println!(
            "run {run}: fio attained={fio_attained} window {fio_window:?}; iomatrix attained={attained} at {at_s} s, \
             window {window:?}, cell {wall_s:.2} s"
        );
        assert_eq!(attained, fio_attained, "run {run}: iomatrix and fio disagree");
        assert!(attained, "run {run}: a device throttled to 2,000 IOPS is steady within 5%");
        assert_eq!(window.len(), WINDOW_S as usize);
        for iops in &window {
            assert!(
                (1_800..=2_200).contains(iops),
                "run {run}: a second of the throttle is 2,000 +- a slice: {window:?}"
            );
        }
        // The cell ended when the rule was met (its requests in flight then completed, each
        // within a 100 ms slice), short of the 10 s asked.
        assert!((3.0..10.0).contains(&at_s), "run {run}: attained at {at_s} s");
        assert!(wall_s >= at_s && wall_s < at_s + 0.5, "run {run}: attained at {at_s} s, cell {wall_s:.2} s");
    }
    println!("5 runs of each in {:.1} s", begun.elapsed().as_secs_f64());
}

/// The throttle switched between 2,000 and 1,000 reads a second every 2 s while both run: every
/// 3 s window holds both rates (25% or more off its mean), so neither tool attains iops:5%, and
/// iomatrix's cell runs its whole 5 s and stores "not attained" with the last window it judged.
#[test]
fn a_device_switching_its_rate_is_attained_by_neither() {
    let Some(td) = throttled() else { return };
    let sb = Sandbox::new();
    let switching = std::sync::atomic::AtomicBool::new(true);
    let (fio, iomatrix) = std::thread::scope(|scope| {
        scope.spawn(|| {
            // At most the two runs' time and their bounds, whatever happens to them.
            for k in 0..40 {
                if !switching.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                td.set(ThrottleLimit::ReadIops, if k % 2 == 0 { 1000 } else { 2000 });
                std::thread::sleep(Duration::from_secs(2));
            }
        });
        // The switching thread ends when the runs do, also when one fails (a scope waits for it).
        struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(false, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let _stop = Stop(&switching);
        (fio_verdict(&td, 5), iomatrix_verdict(&sb, &td, 5))
    });
    println!("fio attained={} window {:?}; iomatrix attained={} window {:?}", fio.0, fio.1, iomatrix.0, iomatrix.1);
    assert!(!fio.0, "fio: a rate switching between 2,000 and 1,000 is not steady within 5%");
    assert_eq!(iomatrix.0, fio.0, "iomatrix and fio disagree");
    assert!(iomatrix.2 >= 4.9, "a cell not attained runs its whole duration: {:.2} s", iomatrix.2);
    let (low, high) = (iomatrix.1.iter().min().unwrap(), iomatrix.1.iter().max().unwrap());
    assert!(high - low >= 300, "the window judged holds both rates: {:?}", iomatrix.1);
    let out = sb.run(&["show", "1"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("steady state, 4k qd=8 read=100% random=100%: not attained (iops:5% over 3 s"), "{stdout}");
}

/// On a folder at a paced 200 requests a second, iops:20% over 2 s is met at the end of the 2nd
/// second (later where the loaded machine stalled the client): the cell ends there, its stored
/// window is its stored series' two intervals before it, and `show` says so in one line.
#[test]
fn a_paced_cell_ends_when_attained_and_stores_the_window_it_judged() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "4m",
        "--rate",
        "200",
        "--duration",
        "6s",
        "--steady-state",
        "iops:20%",
        "--steady-window",
        "2s",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    let cell = &cells(&run)[0];
    let steady = &cell["metrics"]["steady"];
    let wall_s = cell["wall_ns"].as_f64().unwrap() / 1e9;
    println!("steady {steady}; cell {wall_s:.2} s");
    assert_eq!(steady["attained"], true, "{steady}");
    // At 2 s, or a second or two later where the loaded machine stalled the paced client.
    let at = (steady["attained_at_ns"].as_u64().unwrap() / 1_000_000_000) as usize;
    assert!((2..6).contains(&at), "{steady}");
    assert!(
        wall_s >= at as f64 && wall_s < at as f64 + 0.5,
        "ended when attained at {at} s, not at 6 s: {wall_s:.2} s"
    );
    let window: Vec<u64> = steady["window"].as_array().unwrap().iter().map(|s| s["iops"].as_u64().unwrap()).collect();
    let series: Vec<u64> = cell["metrics"]["series"]["intervals"].as_array().unwrap()[at - 2..at]
        .iter()
        .map(|i| i["reads"].as_u64().unwrap() + i["writes"].as_u64().unwrap())
        .collect();
    assert_eq!(window, series, "the window judged is the stored series' intervals");
    let criterion =
        serde_json::json!({"rule": "fio", "figure": "iops", "measure": "deviation", "limit": 20.0, "percent": true});
    assert_eq!(steady["rule"]["criterion"], criterion, "stored typed");
    // The sandbox's one run.
    let shown = text(&sb.run(&["show", "1"])).0;
    let line = format!("steady state, 4k qd=1 read=100% random=100%: attained after {at} s (iops:20% over 2 s");
    assert!(shown.contains(&line), "{shown}");
    assert!(shown.contains("iops:20% over 2 s (fio 3.33's steadystate=iops:20%"), "the run's condition: {shown}");
}

/// `iomatrix fio` with fio's steadystate options prints fio's `steadystate  :` line and its
/// JSON object with fio's keys; where fio is here, the same job's real output holds the same keys
/// and the same line's shape.
#[test]
fn iomatrix_fio_prints_fios_steadystate_line_and_json() {
    let sb = Sandbox::new();
    let target = sb.target();
    let dir = format!("--directory={}", target.display());
    let job = ["--name=ss", "--rw=read", "--bs=4k", "--size=4m", "--rate_iops=400", "--time_based", "--runtime=4"];
    let ss = ["--steadystate=iops:30%", "--ss_dur=2"];
    let normal = sb.cmd().arg("fio").args(job).args(ss).arg(&dir).output().unwrap();
    assert_success(&normal);
    let (stdout, _) = text(&normal);
    let line = stdout.lines().find(|l| l.starts_with("  steadystate  : ")).unwrap_or_else(|| panic!("{stdout}"));
    println!("iomatrix fio: {line}");
    assert_eq!(shape(line), "  steadystate  : attained=yes, bw=NKiB/s (NkB/s), iops=N, iops mean dev=N%", "{line}");
    let json = sb.cmd().arg("fio").args(job).args(ss).arg(&dir).arg("--output-format=json").output().unwrap();
    assert_success(&json);
    let doc: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let ours = &doc["jobs"][0]["steadystate"];
    println!("iomatrix fio: {ours}");
    assert_eq!(ours["ss"], "iops:30.000000%");
    assert_eq!((ours["duration"].as_u64(), ours["attained"].as_i64()), (Some(2), Some(1)));
    assert_eq!(ours["data"]["iops"].as_array().unwrap().len(), 2);
    let mean = ours["data"]["iops_mean"].as_u64().unwrap();
    assert!((380..=420).contains(&mean), "paced at 400 a second: {mean}");
    let bw: u64 = ours["data"]["bw"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(ours["data"]["bw_mean"].as_u64(), Some(bw / 2), "fio's mean: whole bytes a second over ss_dur");
    if !have("fio") {
        skip("fio's own steadystate output beside iomatrix fio's needs fio");
        return;
    }
    let file = format!("--filename={}", target.join("fio.dat").display());
    let real = Command::new("fio").args(job).args(ss).arg(&file).arg("--output-format=json").output().unwrap();
    assert!(real.status.success(), "{}", String::from_utf8_lossy(&real.stderr));
    let theirs: Value = serde_json::from_slice(&real.stdout).expect("fio's JSON");
    let theirs = &theirs["jobs"][0]["steadystate"];
    println!("fio: {theirs}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(ours), keys(theirs), "the steadystate object's keys");
    assert_eq!(keys(&ours["data"]), keys(&theirs["data"]), "its data's keys");
    assert_eq!(ours["ss"], theirs["ss"]);
    let real_normal = Command::new("fio").args(job).args(ss).arg(&file).output().unwrap();
    let real_line = String::from_utf8_lossy(&real_normal.stdout)
        .lines()
        .find(|l| l.starts_with("  steadystate  : "))
        .map(str::to_string)
        .expect("fio's steadystate line");
    println!("fio:          {real_line}");
    assert_eq!(shape(line), shape(&real_line), "the line's words and units");
}

/// A line with each number (digits, a point, a sign) as `N`: its words and units.
fn shape(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if c.is_ascii_digit() || c == '.' || c == '-' {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Each bad steady-state input is refused before anything runs (exit 2), naming the fix.
#[test]
fn bad_steady_state_input_is_refused_at_plan_time() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let refused = |flags: &[&str], needle: &str| {
        let mut args = vec!["run", "access", "--target", t, "--duration", "10s"];
        args.extend_from_slice(flags);
        let out = sb.run(&args);
        assert_usage_error(&out, needle);
    };
    refused(&["--steady-state", "iops:5%", "--steady-window", "1s"], "fewer than 2 intervals");
    refused(&["--steady-state", "iops:5%", "--steady-window", "20s"], "longer than the cell's duration");
    refused(
        &["--steady-state", "iops:5%", "--steady-window", "8s", "--steady-ramp", "3s"],
        "longer than the cell's duration",
    );
    refused(&["--steady-state", "iops:5%", "--steady-window", "2500ms"], "multiple of it");
    refused(&["--steady-state", "lat:5%", "--steady-window", "3s"], "not a steady-state criterion");
    refused(&["--steady-state", "iops:0%", "--steady-window", "3s"], "must be above 0");
    refused(&["--steady-state", "iops:-5%", "--steady-window", "3s"], "must be above 0");
    refused(&["--steady-state", "bw:-1", "--steady-window", "3s"], "bw:-1");
    refused(&["--steady-state", "iops:5%"], "needs --steady-window");
    refused(&["--steady-window", "3s"], "without --steady-state");
    refused(&["--steady-state", "snia", "--steady-window", "6s"], "5 rounds");
    let fio = sb.cmd().args(["fio", "--name=x", "--size=1m", "--ss=iops:0%", "--ss_dur=3"]).output().unwrap();
    assert_usage_error(&fio, "above 0");
    let fio = sb.cmd().args(["fio", "--name=x", "--size=1m", "--ss=iops:5%", "--ss_dur=1500ms"]).output().unwrap();
    assert_usage_error(&fio, "whole seconds");
    assert!(!sb.db().exists() || stored_cells(&sb) == 0, "nothing ran");
}

/// Under mpirun each rank judges its own figures (ranks share no counts while a cell runs), as
/// fio judges each job apart without group_reporting: two ranks paced at 200 requests a second
/// each attain iops:20% over 2 s, each stops its own client, and the cell stores both verdicts.
/// The test paces the ranks so the rule's verdict is the pacing's, not this loaded machine's.
#[test]
fn under_mpirun_each_rank_judges_and_stops_its_own_client() {
    let Some(bin) = crate::mpi::mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let run = [bin.to_str().unwrap(), "run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m"];
    let rule = ["--rate", "200", "--duration", "6s", "--steady-state", "iops:20%", "--steady-window", "2s"];
    let (out, took) = crate::mpi::mpirun(&sb, 2, &[&run[..], &rule[..]].concat(), Duration::from_secs(120));
    assert_success(&out);
    let stored = sb.last_run();
    let cell = &cells(&stored)[0];
    let ranks = cell["metrics"]["steady_by_rank"].as_array().cloned().unwrap_or_default();
    let wall_s = cell["wall_ns"].as_f64().unwrap() / 1e9;
    println!("mpirun {took:?}, cell {wall_s:.2} s; verdicts {ranks:?}");
    assert_eq!(ranks.len(), 2, "a verdict per rank: {}", cell["metrics"]);
    assert!(cell["metrics"]["steady"].is_null(), "no verdict of the ranks together is made up");
    let mut latest = 0;
    for v in &ranks {
        assert_eq!(v["attained"], true, "{v}");
        let at = v["attained_at_ns"].as_u64().unwrap() / 1_000_000_000;
        assert!((2..6).contains(&at), "attained at 2 s, or a little later on a loaded machine: {v}");
        latest = latest.max(at);
    }
    assert!(wall_s < latest as f64 + 0.5, "the cell ended when its last rank attained ({latest} s), not at 6 s");
    let shown = text(&sb.run(&["show", "1"])).0;
    for rank in 0..2 {
        let line = format!("steady state, 4k qd=1 read=100% random=100%, rank {rank}: attained after ");
        assert!(shown.contains(&line), "{shown}");
    }
    assert!(shown.contains("under mpirun each rank's own, judged apart"), "the run's condition: {shown}");
}
