//! `--latency-target` (issue 52) where no throttled device is needed: a target no depth meets is a
//! stored, stated result (exit 0, no depth made up); windows past the cell or the clock and
//! percentiles out of range are refused before anything runs (exit 2); `iomatrix fio` prints fio's
//! `latency   :` line and JSON fields as real fio prints them for the same job. The search against
//! fio's on a device of known physics: tests/cli/throttle.rs.

use crate::helpers::*;
use serde_json::Value;
use std::process::Command;

/// `run access` on the sandbox's target: a small file, io_uring at depth 4, with `extra`.
fn access(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    let target = sb.target();
    let mut args = vec!["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m", "--qd", "4"];
    args.extend_from_slice(extra);
    sb.run(&args)
}

#[test]
fn a_target_no_depth_meets_is_stored_and_said_with_depth_1s_figure_and_no_depth() {
    let sb = Sandbox::new();
    // Every request takes more than 1 us from its issue to its completion (two clock reads and a
    // system call at least), and at p100 one such request fails depth 1.
    let out = access(&sb, &["--duration", "1s", "--latency-target", "1us", "--latency-window", "200ms"]);
    assert_success(&out);
    let run = sb.last_run();
    let stored = cells(&run);
    let cell = &stored[0]["metrics"];
    let searched = &cell["latency_target"][0];
    eprintln!("stored search: {searched}");
    assert_eq!(searched["depth"], Value::Null, "no depth is made up");
    assert_eq!(searched["measured_depth"], 1, "measured at depth 1 to show how far off it is");
    assert_eq!(searched["steps"][0]["depth"], 1);
    assert_eq!(searched["steps"][0]["met"], false);
    assert!(cell["iops"].as_f64().unwrap() > 0.0, "the cell was measured");
    let shown = sb.run(&["show", "1"]);
    assert_success(&shown);
    let (stdout, _) = text(&shown);
    eprintln!("{stdout}");
    assert!(stdout.contains("no depth meets p100 <= 1.0 us; depth 1's p100 is "), "{stdout}");
    assert!(
        stdout.contains("latency target: each client searched the deepest queue"),
        "the run's condition:\n{stdout}"
    );
}

/// fio's latency_run: the search never settles and goes on through the timed cell; every client
/// stores the depth at the cell's end. A 1 s target every request meets climbs to the cell's qd.
#[test]
fn latency_run_keeps_searching_through_the_cell_and_stores_each_clients_depth_at_its_end() {
    let sb = Sandbox::new();
    let out = access(
        &sb,
        &["--clients", "2", "--duration", "1s", "--latency-target", "1s", "--latency-window", "100ms", "--latency-run"],
    );
    assert_success(&out);
    let stored = cells(&sb.last_run());
    let searches = stored[0]["metrics"]["latency_target"].as_array().cloned().unwrap_or_default();
    eprintln!("stored searches: {searches:?}");
    assert_eq!(searches.len(), 2, "one search a client");
    for searched in &searches {
        assert_eq!((searched["depth"].as_u64(), searched["measured_depth"].as_u64()), (Some(4), Some(4)));
        assert_eq!(searched["settled"], false);
        assert_eq!(searched["target"]["keep_adjusting"], true);
        // Windows of 100 ms through a 1 s cell: the climb (1, 2, 4) and then the rest at 4.
        let steps = searched["steps"].as_array().unwrap();
        assert!(steps.len() >= 5, "{steps:?}");
        assert_eq!(steps[..3].iter().map(|s| s["depth"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 4]);
    }
}

#[test]
fn latency_windows_and_percentiles_out_of_range_are_refused_before_anything_runs() {
    let sb = Sandbox::new();
    let cases: [(&[&str], &str); 6] = [
        (&["--latency-target", "1000"], "give a unit, e.g. 1000us"),
        (
            &["--duration", "2s", "--latency-target", "1ms", "--latency-window", "5s"],
            "longer than each cell's --duration",
        ),
        (&["--latency-target", "1ms", "--latency-window", "0s"], "--latency-window 0s"),
        (&["--latency-target", "1ms", "--latency-percentile", "0"], "--latency-percentile 0"),
        (&["--latency-target", "1ms", "--latency-percentile", "101"], "at most 100"),
        (&["--latency-target", "1ms", "--latency-percentile", "99.999"], "at most two decimals"),
    ];
    for (args, needle) in cases {
        let out = access(&sb, args);
        assert_usage_error(&out, needle);
    }
    assert!(sb.leftovers().is_empty(), "nothing ran");
    let out = sb.run(&["fio", "--name=t", "--size=1m", "--latency_target=1ms"]);
    assert_usage_error(&out, "latency_window");
}

/// The `latency   :` line of fio's normal output.
fn latency_line(stdout: &str) -> Option<String> {
    stdout.lines().find(|l| l.trim_start().starts_with("latency   : target=")).map(|l| l.trim().to_string())
}

/// A target every depth meets (1 s) climbs to iodepth as fio's does: the same line and the same
/// JSON fields from real fio and from `iomatrix fio`.
#[test]
fn iomatrix_fio_prints_fios_latency_line_and_json_fields() {
    if !have("fio") {
        skip("fio is not installed");
        return;
    }
    let sb = Sandbox::new();
    let dir = format!("--directory={}", sb.target().display());
    let job = [
        "--name=target",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--ioengine=io_uring",
        "--iodepth=4",
        "--latency_target=1s",
        "--latency_window=200ms",
        "--latency_percentile=99",
        "--runtime=1",
        "--time_based",
        dir.as_str(),
    ];
    let real = Command::new("fio").args(job).output().expect("fio runs");
    assert!(real.status.success(), "fio: {}", String::from_utf8_lossy(&real.stderr));
    let real_json = Command::new("fio").args(job).arg("--output-format=json").output().expect("fio runs");
    let _ = std::fs::remove_file(sb.target().join("target.0.0"));
    let mut ours = vec!["fio"];
    ours.extend(job);
    let mine = sb.run(&ours);
    assert_success(&mine);
    ours.push("--output-format=json");
    let mine_json = sb.run(&ours);
    assert_success(&mine_json);
    let (fio_line, our_line) = (latency_line(&text(&real).0), latency_line(&text(&mine).0));
    eprintln!("fio:      {fio_line:?}\niomatrix: {our_line:?}");
    assert_eq!(fio_line.as_deref(), Some("latency   : target=1000000000, window=200000, percentile=99.00%, depth=4"));
    assert_eq!(our_line, fio_line);
    let fields = |doc: &Value| {
        let job = &doc["jobs"][0];
        ["latency_depth", "latency_target", "latency_percentile", "latency_window"].map(|k| job[k].clone())
    };
    let real_doc: Value = serde_json::from_slice(&real_json.stdout).expect("fio's JSON");
    let our_doc: Value = serde_json::from_slice(&mine_json.stdout).expect("iomatrix fio's JSON");
    eprintln!("fio's fields {:?}, ours {:?}", fields(&real_doc), fields(&our_doc));
    assert_eq!(fields(&our_doc), fields(&real_doc));
}
