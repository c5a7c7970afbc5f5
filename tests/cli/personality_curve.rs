//! Throughput-latency curves of a personality (`run personality --curve`, `--stop-curve`; issue 52).
//!
//! The physics checked, and why not a throttled device's: a personality has no direct I/O, and
//! the blkio (v1) throttle does not hold buffered I/O (reads come from the page cache, writes
//! leave through writeback, neither in the throttled process's cgroup). So the "device" here is
//! a local folder's `stat`, whose capacity is the CPU's: the maximum is whatever this machine
//! gives one connection, measured first, and the open-loop points are checked against that
//! maximum and their own arrivals. Poisson arrivals at rate r over T seconds number r*T give or
//! take sqrt(r*T), so an achieved rate is held to its offered rate within 1% plus four of those
//! spreads; points stay at or below 30% because this CPU is shared (by the other tests and
//! engineers), and a point at 90% (or 50%: it once fell behind while the suite's other tests ran
//! beside it) of a maximum measured a second earlier is not sure to be below the capacity a second
//! later. A point far past any capacity (1,000,000 operations a second)
//! is the saturated one: its queue grows for the whole cell, so its mean is a good part of the
//! cell, far above any point the connection keeps up with.
use crate::helpers::*;
use serde_json::Value;

/// One connection, closed loop, stat after stat on 8 small files.
const STATS: &str = "version = 1\nname = \"stats\"\nconnections = 1\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\n\
                     files = 8\nsize = { dist = \"fixed\", size = \"4k\" }\n[[phase]]\nname = \"run\"\n\
                     duration = \"1s\"\n[[phase.flow]]\nname = \"s\"\nops = [{ op = \"stat\" }]\n";

fn personality_file(sb: &Sandbox) -> String {
    let file = sb.dir.path().join("stats.toml");
    std::fs::write(&file, STATS).unwrap();
    file.display().to_string()
}

/// `run personality` of [`STATS`] on the sandbox's folder with `args`.
fn curve_run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let target = sb.target().display().to_string();
    let file = personality_file(sb);
    sb.run(&[&["run", "personality", &file, "--target", &target][..], args].concat())
}

/// A stored point: (its name, load, offered rate, achieved rate, mean latency in ns, its curve's figures).
fn point(cell: &Value) -> (String, String, Option<f64>, f64, f64, Value) {
    let m = &cell["metrics"];
    let curve = m["curve"].clone();
    (
        cell["test"].as_str().unwrap().to_string(),
        m["load"].as_str().map_or_else(|| m["load"].to_string(), str::to_string),
        m["offered_per_sec"].as_f64(),
        m["per_sec"].as_f64().unwrap(),
        curve["latency"]["mean_ns"].as_f64().unwrap(),
        curve,
    )
}

#[test]
fn a_personality_curve_measures_its_maximum_then_meets_each_offered_rate() {
    let sb = Sandbox::new();
    let out = curve_run(&sb, &["--curve=10,20,30", "--duration", "2s"]);
    assert_success(&out);
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 4, "the maximum and three points");
    let (name, load, offered, max, _, _) = point(&cells[0]);
    assert_eq!((name.as_str(), load.as_str(), offered), ("run load=max", "max", None));
    assert_eq!(cells[0]["metrics"]["loop"], "closed");
    eprintln!("maximum: {max:.0} stats a second");
    assert!(max > 500.0, "a local stat runs more than 500 a second even on a loaded machine: {max:.0}");
    for (cell, share) in cells[1..].iter().zip([0.1, 0.2, 0.3]) {
        let (name, _, offered, achieved, mean, _) = point(cell);
        let offered = offered.expect("an open-loop point stores its offered rate");
        let backlog = cell["metrics"]["backlog"].as_f64().unwrap();
        eprintln!("{name}: offered {offered:.1}, achieved {achieved:.1}, mean {mean:.0} ns, backlog {backlog}");
        assert_eq!(name, format!("run load={}%", (share * 100.0) as u32));
        assert_eq!(cell["metrics"]["loop"], "open");
        assert!((offered - share * max).abs() <= share * max * 1e-6, "{share} of {max:.1} offered as {offered:.1}");
        // The target is this machine's CPU (a local stat), so a point offered a share of a maximum
        // measured in a quieter second can fall behind while other tests run: what it did not
        // issue is its backlog. So every arrival is accounted for (completed in the cell's 2 s, or
        // in the backlog, or in flight at its end: a connection's one request), within Poisson's
        // spread, and the point keeps most of its rate.
        let spread = 4.0 / (offered * 2.0).sqrt();
        let arrivals = offered * 2.0;
        let accounted = achieved * 2.0 + backlog;
        assert!(
            (accounted / arrivals - 1.0).abs() <= 0.01 + spread + 8.0 / arrivals,
            "{accounted:.0} requests completed or in backlog for {arrivals:.0} arrivals (within 1% + {:.1}%): {}",
            spread * 100.0,
            cell["metrics"]
        );
        assert!(achieved >= offered * 0.5, "achieved {achieved:.1} of {offered:.1} offered: {}", cell["metrics"]);
    }
    let last = &cells[3]["metrics"]["curve"];
    let stored_max = last["max_iops"].as_f64().unwrap();
    assert!((stored_max - max).abs() <= max * 1e-9, "every point stores the curve's maximum: {last}");
    assert!(last["overall_response_time_ns"].as_f64().unwrap() > 0.0, "{last}");
    let shown = text(&sb.run(&["show", &run["run"]["id"].to_string()])).0;
    for said in ["curve of the run phase: maximum", "run load=30%", "overall response time (SPEC SFS 2014):"] {
        assert!(shown.contains(said), "show prints {said:?}:\n{shown}");
    }
}

#[test]
fn a_stop_curve_ends_the_curve_at_its_saturated_point() {
    let sb = Sandbox::new();
    // Two connections, so the last point (1,000,000 a second each) is within what a client takes.
    let args = ["--curve=500/s,1000000/s,2000000/s", "--stop-curve", "mean:100ms", "--connections", "2"];
    let out = curve_run(&sb, &[&args[..], &["--duration", "1s"]].concat());
    assert_success(&out);
    let said = text(&out).0;
    assert!(said.contains("(personality, complete)"), "a point the bound left out is not lost:\n{said}");
    let cells = cells(&sb.last_run());
    let names: Vec<String> = cells.iter().map(|c| point(c).0).collect();
    assert_eq!(names, ["run load=max", "run load=500/s", "run load=1000000/s"], "the last point is not run");
    let (_, _, _, _, light, _) = point(&cells[1]);
    let (_, _, offered, achieved, saturated, curve) = point(&cells[2]);
    eprintln!("500/s: mean {light:.0} ns; 1,000,000/s: achieved {achieved:.0}, mean {saturated:.0} ns: {curve}");
    assert_eq!(offered, Some(1_000_000.0));
    assert!(achieved < 1_000_000.0 * 0.5, "no connection keeps up with 500,000 stats a second: {achieved:.0}");
    assert!(light < saturated, "the light point's mean {light:.0} ns is below the saturated {saturated:.0}");
    assert!(saturated > 100e6, "the saturated point's queue grew all cell: mean {saturated:.0} ns");
    assert_eq!(curve["past_bound"], true);
    assert_eq!(curve["max_within_bound_iops"].as_f64(), point(&cells[1]).5["max_within_bound_iops"].as_f64());
    let ended = curve["ended"].as_str().unwrap();
    assert!(ended.starts_with("the curve ended at 1000000/s: its mean"), "{ended}");
}

#[test]
fn a_bound_no_point_meets_is_stored_as_such_and_exits_0() {
    let sb = Sandbox::new();
    let out = curve_run(&sb, &["--curve=10,50", "--stop-curve", "p50:1us", "--duration", "1s"]);
    // Open loop, an operation's latency holds its wake-up at its arrival (tens of us): 1 us is
    // below any point's median.
    assert_success(&out);
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 2, "the maximum and the lightest point, which ends the curve");
    let curve = &cells[1]["metrics"]["curve"];
    let ended = curve["ended"].as_str().unwrap();
    assert!(ended.starts_with("no load point meets p50 <= 1.0 us; the lightest point's p50 is"), "{ended}");
    assert!(curve.get("max_within_bound_iops").is_none(), "no maximum made up: {curve}");
    let shown = text(&sb.run(&["show", &run["run"]["id"].to_string()])).0;
    assert!(shown.contains("no load point within p50 <= 1.0 us"), "{shown}");
    // A second curve: compare pairs the two curves' points by their load.
    assert_success(&curve_run(&sb, &["--curve=10,50", "--stop-curve", "p50:1us", "--duration", "1s"]));
    let compared = sb.run(&["compare", "1", "2", "--include-disturbed"]);
    let said = text(&compared).0;
    assert!(compared.status.success(), "{said}\n{}", text(&compared).1);
    for point in ["run load=max", "run load=10%"] {
        assert!(said.contains(point), "compare pairs {point}:\n{said}");
    }
}

#[test]
fn bad_curves_are_refused_before_anything_runs() {
    let sb = Sandbox::new();
    assert_usage_error(&curve_run(&sb, &["--curve=0,50"]), "outside 1-100%");
    assert_usage_error(&curve_run(&sb, &["--curve", "--rate", "100"]), "--curve with --rate 100");
    assert_usage_error(&curve_run(&sb, &["--curve", "--closed-loop"]), "--curve with --closed-loop");
    assert_usage_error(&curve_run(&sb, &["--curve", "--repeat", "2"]), "--curve with --repeat");
    assert_usage_error(&curve_run(&sb, &["--curve=5/s", "--duration", "1s"]), "fewer than the 10 a cell needs");
    assert_usage_error(&curve_run(&sb, &["--curve", "--stop-curve", "p42:1ms"]), "give mean, p50, p99 or p99.9");
    let target = sb.target().display().to_string();
    let once = sb.run(&["run", "personality", "netware-2008", "--scale", "small", "--target", &target, "--curve"]);
    assert_usage_error(&once, "the write phase of netware-2008 runs once over its files");
    let out = curve_run(&sb, &["--stop-curve", "5ms"]);
    assert_eq!(out.status.code(), Some(2), "--stop-curve needs --curve: {out:?}");
    assert_eq!(stored_cells(&sb), 0, "nothing ran");
}

/// A run of [`STATS`] with a latency target: its one stored cell's search.
fn searched(sb: &Sandbox, args: &[&str]) -> (Value, Value) {
    let out = curve_run(sb, &[&["--latency-window", "500ms", "--duration", "1s"][..], args].concat());
    assert_success(&out);
    let cells = cells(&sb.last_run());
    assert_eq!(cells.len(), 1, "only the phase at the rate found is stored, not the search's windows");
    let found = cells[0]["metrics"]["latency_target"].clone();
    eprintln!("{found}");
    (cells[0].clone(), found)
}

#[test]
fn a_latency_target_finds_the_highest_rate_whose_windows_meet_it() {
    let sb = Sandbox::new();
    // p90 within 50 ms: at 5% of the maximum a connection waits for a CPU now and then (beside the
    // suite's other tests, 7% of operations at 5% waited over 10 ms), seldom 50 ms for one in ten.
    let (cell, found) = searched(&sb, &["--latency-target", "50ms", "--latency-percentile", "90"]);
    let windows = found["windows"].as_array().unwrap();
    // Every window is judged by fio's rule on its own stored counts.
    for w in windows {
        let (ops, over) = (w["ops"].as_u64().unwrap(), w["over_target"].as_u64().unwrap());
        assert_eq!(w["met"], ops > 0 && (ops - over) * 100 >= 90 * ops, "{w}");
    }
    let level = found["level"].as_u64().unwrap_or_else(|| panic!("a local stat meets p90 <= 50 ms at 5%: {found}"));
    assert_eq!(found["settled"], true, "fio's climb over 20 levels settles within its windows: {found}");
    let last = windows.iter().rev().find(|w| w["level"] == level).unwrap();
    assert!(last["met"] == true && last["at_percentile_ns"].as_f64().unwrap() <= 50e6, "{last}");
    if level < 20 {
        let above = windows.iter().any(|w| w["level"] == level + 1 && w["met"] == false);
        assert!(above, "fio's climb settles below a level that failed: {found}");
    } else {
        eprintln!("every level met the target: the machine kept p90 within 50 ms at its maximum");
    }
    let (max, rate) = (found["max_per_sec"].as_f64().unwrap(), found["rate_per_sec"].as_f64().unwrap());
    assert!((rate - max * level as f64 / 20.0).abs() <= rate * 1e-9, "level {level} of 20 of {max}: {rate}");
    let offered = cell["metrics"]["offered_per_sec"].as_f64().unwrap();
    assert!((offered - rate).abs() <= rate * 1e-6, "the phase is measured at the rate found: {offered} of {rate}");
    let shown = text(&sb.run(&["show", "1"])).0;
    assert!(shown.contains("latency target: p90 of each operation's latency"), "{shown}");
    assert!(shown.contains(&format!("ops/s: level {level} of 20")), "{shown}");
}

#[test]
fn a_latency_target_no_rate_meets_is_stored_and_said_and_exits_0() {
    let sb = Sandbox::new();
    // 1 us is below any open-loop operation's latency here (its wake-up at its arrival alone).
    let (cell, found) = searched(&sb, &["--latency-target", "1us", "--latency-percentile", "50"]);
    assert_eq!(found["level"], Value::Null, "no rate made up: {found}");
    assert_eq!(found["windows"].as_array().unwrap().len(), 1, "level 1 failed: the search is over");
    let offered = cell["metrics"]["offered_per_sec"].as_f64().unwrap();
    let max = found["max_per_sec"].as_f64().unwrap();
    assert!((offered - max / 20.0).abs() <= offered * 1e-6, "measured at level 1 (5%): {offered} of {max}");
    let shown = text(&sb.run(&["show", "1"])).0;
    assert!(shown.contains("no rate meets p50 <= 1.0 us; level 1's"), "{shown}");
}

#[test]
fn bad_latency_targets_are_refused_before_anything_runs() {
    let sb = Sandbox::new();
    assert_usage_error(&curve_run(&sb, &["--latency-target", "5"]), "give a unit");
    assert_usage_error(&curve_run(&sb, &["--latency-target", "5ms", "--curve"]), "--latency-target with --curve");
    assert_usage_error(&curve_run(&sb, &["--latency-target", "5ms", "--rate", "10"]), "--latency-target with --rate");
    assert_usage_error(&curve_run(&sb, &["--latency-target", "5ms", "--latency-window", "1ms"]), "give 10ms to 1h");
    assert_usage_error(&curve_run(&sb, &["--latency-target", "5ms", "--latency-percentile", "0"]), "above 0");
    assert_usage_error(&curve_run(&sb, &["--latency-target", "0ms"]), "a duration must be positive");
    assert_eq!(stored_cells(&sb), 0, "nothing ran");
}
