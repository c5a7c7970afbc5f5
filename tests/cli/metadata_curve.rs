//! Open loop and throughput-latency curves of the metadata suite (`run metadata --rate`,
//! `--curve`, `--stop-curve`; issue 52), run for real on tmpfs (the temporary folder where this
//! user may not mount): an open loop meets its offered rate, a load past the maximum shows its
//! queue in the latency counted from each item's intended start, a curve's points are cells with
//! their loads and the curve's figures, a bound no point meets is said and stored, and what
//! cannot be measured is refused before anything runs; `--latency-target` climbs its levels as
//! fio climbs its depths and measures the level found, or says that none meets the target.
use crate::helpers::*;
use serde_json::Value;
use std::path::PathBuf;

/// A tmpfs of its own where this user may mount one, else the sandbox's folder.
fn target(sb: &Sandbox) -> (Option<Mount>, PathBuf) {
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=256m,nr_inodes=400000").ok();
    let path = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    (tmpfs, path)
}

/// `run metadata --target TARGET --files-only ARGS`, which must succeed.
fn metadata_ok(sb: &Sandbox, target: &std::path::Path, args: &[&str]) -> (String, Value) {
    let mut all = vec!["run", "metadata", "--target", target.to_str().unwrap(), "--files-only"];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    (text(&out).0, sb.last_run())
}

/// The stored phases of `run`, by cell name.
fn phases(run: &Value) -> Vec<(String, Value)> {
    cells(run).into_iter().map(|c| (c["test"].as_str().unwrap().to_string(), c["metrics"]["phase"].clone())).collect()
}

fn rate(phase: &Value) -> f64 {
    phase["rate_all_over_slowest"].as_f64().unwrap()
}

fn secs(phase: &Value, figure: &str) -> f64 {
    phase["latency"][figure].as_f64().unwrap()
}

#[test]
fn trust_metadata_open_loop_meets_its_offered_rate() {
    let sb = Sandbox::new();
    let (_tmpfs, target) = target(&sb);
    // 8,000 items a second of two clients together (4,000 each), well below what tmpfs does here
    // (27,000 creates, 48,000 removes and 240,000 stats a second, two clients, a loaded
    // machine): each phase takes 1 s, its 8,000 arrivals evenly spaced.
    let args = ["--phases", "file-create,file-stat,file-remove", "--items", "4000", "--clients", "2"];
    let (stdout, run) = metadata_ok(&sb, &target, &[&args[..], &["--rate", "8000"]].concat());
    let load = run["run"]["conditions"]["load"].as_str().unwrap_or_default().to_string();
    assert!(load.starts_with("open loop:") && load.contains("8000 items a second"), "{load}");
    assert!(stdout.contains("load: open loop:") && stdout.contains("\nOpen loop (arrivals uniform;"), "{stdout}");
    let phases = phases(&run);
    assert_eq!(phases.len(), 3);
    for (name, p) in &phases {
        let open = &p["open"];
        eprintln!("{name}: {:.1} items/s offered 8000, late {}, backlog {}", rate(p), open["late"], open["backlog"]);
        assert_eq!((open["offered_per_sec"].as_f64(), open["arrival"].as_str()), (Some(8000.0), Some("uniform")));
        assert_eq!(p["items"], 8000, "{name}: every item issued");
        // A phase ends with its last item, so a client kept off the CPU near the end (two test
        // threads on this 2-CPU machine) stretches the 1 s phase: 5% is a 50 ms stall.
        assert!((rate(p) / 8000.0 - 1.0).abs() <= 0.05, "{name}: {:.1} items/s, offered 8000", rate(p));
        // mdtest's two rates are computed as ever: the same here, both clients doing 4,000.
        let summary = p["rate_slowest_times_clients"].as_f64().unwrap();
        assert!((summary - rate(p)).abs() <= 1e-6 * rate(p), "{name}: {summary} vs {}", rate(p));
    }
}

#[test]
fn trust_metadata_open_loop_past_the_maximum_counts_its_queue_from_each_intended_start() {
    let sb = Sandbox::new();
    let (_tmpfs, target) = target(&sb);
    let args = ["--phases", "file-create", "--items", "3000"];
    let (_, closed) = metadata_ok(&sb, &target, &args);
    let closed = &phases(&closed)[0].1;
    let max = rate(closed);
    // 1,000,000 a second, the most a client is offered: ten times tmpfs's creates here (30,000 to
    // 100,000 a second, by how busy the machine is), so nine items in ten wait, and the wait grows
    // to nine tenths of the phase's time by its end. A closed loop hides that (each item waits
    // for the one before it and counts from its own issue); counted from each item's intended
    // start, the p99 is the queue's. (Four times a maximum measured while other tests ran was
    // once too little: the file system did more than that when they were done.)
    let offered = 1_000_000u64;
    let (_, open) = metadata_ok(&sb, &target, &[&args[..], &["--rate", &offered.to_string()]].concat());
    let open = &phases(&open)[0].1;
    let (late, backlog) = (open["open"]["late"].as_u64().unwrap(), open["open"]["backlog"].as_u64().unwrap());
    eprintln!(
        "closed loop: {max:.0} items/s, p99 {:.1} us; open loop at {offered}/s: {:.0} items/s, p99 {:.1} us, late \
         {late}, backlog {backlog}",
        secs(closed, "p99") * 1e6,
        rate(open),
        secs(open, "p99") * 1e6
    );
    assert!(late >= 1500, "most items are issued more than 1 ms late: {late} of 3000");
    assert!(backlog >= 1500, "most items are still unissued once the last has arrived: {backlog} of 3000");
    assert!(rate(open) < offered as f64 * 0.6, "past the maximum the rate is not the offered one: {}", rate(open));
    // The phase ran for 3,000 items at the maximum: its last item waited most of that time.
    let phase_secs = 3000.0 / rate(open);
    assert!(secs(open, "p99") > 0.5 * phase_secs, "p99 {} s over a phase of {phase_secs} s", secs(open, "p99"));
    assert!(secs(open, "p99") > 10.0 * secs(closed, "p99"), "{} vs {}", secs(open, "p99"), secs(closed, "p99"));
}

#[test]
fn trust_metadata_curve_points_are_cells_named_with_their_loads_and_the_curves_figures() {
    let sb = Sandbox::new();
    let (_tmpfs, target) = target(&sb);
    let args = ["--phases", "file-create,file-stat", "--items", "1000", "--clients", "2", "--curve", "20,60"];
    let (stdout, run) = metadata_ok(&sb, &target, &args);
    let phases = phases(&run);
    let names: Vec<&str> = phases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "file-create load=max",
            "file-stat load=max",
            "file-create load=20%",
            "file-stat load=20%",
            "file-create load=60%",
            "file-stat load=60%"
        ]
    );
    for phase in ["file-create", "file-stat"] {
        let points: Vec<&Value> = phases.iter().filter(|(n, _)| n.starts_with(phase)).map(|(_, p)| p).collect();
        let max = points[0];
        assert!(max["open"].is_null(), "{phase}: the maximum is closed loop");
        // Each client offers its share of its own rate at the maximum: together, 20% of theirs.
        let own: f64 = max["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["items"].as_f64().unwrap() / c["seconds"].as_f64().unwrap())
            .sum();
        let offered = points[1]["open"]["offered_per_sec"].as_f64().unwrap();
        assert!((offered - 0.2 * own).abs() <= 1e-6 * own, "{phase}: offered {offered}, clients' own {own}");
        let last = &points[2]["curve"];
        eprintln!("{phase}: maximum {:.0}/s, 20% offered {offered:.0}/s, figures {last}", rate(max));
        assert_eq!(last["max_iops"].as_f64(), Some(rate(max)), "{phase}");
        let peak = points.iter().map(|p| rate(p)).fold(0.0, f64::max);
        assert_eq!(last["peak_iops"].as_f64(), Some(peak), "{phase}");
        assert!(last["overall_response_time_ns"].as_f64().is_some_and(|ns| ns > 0.0), "{phase}: {last}");
        assert!(last["latency"]["p99_ns"].as_u64().is_some_and(|ns| ns > 0), "{phase}: {last}");
        assert!(stdout.contains(&format!("\ncurve {phase}: maximum ")), "{stdout}");
    }
}

#[test]
fn trust_metadata_a_stop_curve_no_point_meets_is_said_and_stored() {
    let sb = Sandbox::new();
    let (_tmpfs, target) = target(&sb);
    // No create on any file system takes under 1 us (tmpfs: ~5 us here).
    let args = ["--phases", "file-create", "--items", "500", "--curve", "10,50", "--stop-curve", "p50:1us"];
    let (stdout, run) = metadata_ok(&sb, &target, &args);
    let phases = phases(&run);
    let names: Vec<&str> = phases.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["file-create load=max", "file-create load=10%"], "the curve ends at its first point");
    let ended = phases[1].1["curve"]["ended"].as_str().unwrap_or_default().to_string();
    assert!(ended.starts_with("no load point meets p50 <= 1.0 us; the lightest point's p50 is"), "{ended}");
    assert!(phases[1].1["curve"]["max_within_bound_iops"].is_null(), "no maximum made up");
    assert!(stdout.contains(&ended) && stdout.contains("no load point within p50 <= 1.0 us"), "{stdout}");
    assert_eq!(run["run"]["status"], "complete", "{}", run["run"]);
}

#[test]
fn metadata_open_loop_refuses_what_it_cannot_measure_before_anything_runs() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let out = sb.run(&[&["run", "metadata", "--target", t, "--files-only"][..], args].concat());
        assert_usage_error(&out, needle);
    };
    refused(&["--rate", "100", "--items", "5"], "fewer than 10 a client");
    refused(&["--rate", "3000000", "--items", "100"], "at most 1000000 per client");
    refused(&["--curve", "--phases", "tree-create,file-create"], "tree-create stays closed loop");
    refused(&["--curve", "10,50", "--stop-curve", "p42:1ms"], "give mean, p50, p99 or p99.9");
    refused(&["--curve", "--iterations", "3"], "--curve with --iterations");
    refused(&["--rate", "100", "--stonewall", "1s"], "leave --stonewall out");
    refused(&["--latency-target", "1000"], "give a unit, e.g. 1000us");
    refused(&["--latency-target", "1ms", "--latency-percentile", "0"], "above 0 and at most 100");
    refused(&["--latency-target", "1ms", "--phases", "file-create,tree-remove"], "tree-remove stays closed loop");
    assert!(leftovers(&target).is_empty(), "nothing was made");
}

/// The stored rounds of a latency-target run's one phase: (level, met) of each search round, and
/// the last round's record.
fn target_rounds(run: &Value) -> (Vec<(u32, bool)>, Value) {
    let phases = phases(run);
    let records: Vec<Value> = phases[1..].iter().map(|(_, p)| p["latency_target"].clone()).collect();
    let (last, search) = records.split_last().unwrap();
    let judged = search.iter().map(|r| (r["level"].as_u64().unwrap() as u32, r["met"].as_bool().unwrap())).collect();
    (judged, last.clone())
}

#[test]
fn trust_metadata_latency_target_climbs_as_fio_and_measures_the_level_found() {
    use iomatrix_harness::level_search::{LevelSearch, Next};
    let sb = Sandbox::new();
    let (_tmpfs, target) = target(&sb);
    // A median within 50 ms: met at most levels of a tmpfs, failed where the load is past what
    // the loaded machine gives the client.
    let args = ["--phases", "file-create", "--items", "1000", "--latency-target", "50ms", "--latency-percentile", "50"];
    let (stdout, run) = metadata_ok(&sb, &target, &args);
    let (judged, last) = target_rounds(&run);
    eprintln!("levels judged: {judged:?}; measured: {last}");
    // The levels are fio's climb over 20 levels, replayed from the stored verdicts.
    let mut search = LevelSearch::new(20);
    let mut level = LevelSearch::FIRST;
    let mut ended = None;
    for (i, (judged_level, met)) in judged.iter().enumerate() {
        assert_eq!(*judged_level, level, "round {}: {judged:?}", i + 1);
        match if *met { search.met(level) } else { search.failed(level) } {
            Next::Level(next) => level = next,
            end => {
                ended = Some(end);
                assert_eq!(i + 1, judged.len(), "the search ended at round {}: {judged:?}", i + 1);
            }
        }
    }
    let found = &last["found"];
    match ended {
        Some(Next::Settled(l)) => {
            let l = Some(u64::from(l));
            assert_eq!((found["level"].as_u64(), last["level"].as_u64()), (l, l));
        }
        Some(Next::Unmet) => assert!(found["level"].is_null(), "{last}"),
        _ => assert!(judged.len() >= 14, "stopped unsettled only after its rounds: {judged:?}"),
    }
    let measured = phases(&run).pop().unwrap().1;
    let measured = &measured;
    assert_eq!(found["rate"].as_f64(), Some(rate(measured)), "the rate found is the last round's own");
    assert!(stdout.contains("latency target, file-create: p50 of each item's latency"), "{stdout}");
}

#[test]
fn trust_metadata_a_latency_target_no_level_meets_is_said_and_stored() {
    let sb = Sandbox::new();
    let (_tmpfs, target) = target(&sb);
    // Every create within 1 us: none on any file system.
    let args = ["--phases", "file-create", "--items", "200", "--latency-target", "1us"];
    let (stdout, run) = metadata_ok(&sb, &target, &args);
    let (judged, last) = target_rounds(&run);
    assert_eq!(judged, [(1, false)], "level 1 failed: the search is over");
    assert!(last["found"]["level"].is_null(), "no level made up: {last}");
    let said = last["found"]["said"].as_str().unwrap_or_default();
    assert!(said.starts_with("no level meets it, not even 1/20 of the maximum"), "{said}");
    assert!(stdout.contains(said), "{stdout}");
    assert_eq!(run["run"]["status"], "complete", "{}", run["run"]);
}
