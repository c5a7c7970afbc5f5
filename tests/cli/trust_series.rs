//! Figures over time (issue 52): every timed access cell stores its per-interval series, merged
//! over its clients; `show --series` prints it, `--json` carries it, the HTML report charts it,
//! and an old database still shows ("no series stored").

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;

/// `run access` of `duration` at `interval` with two clients; the stored run's JSON.
fn timed_run(sb: &Sandbox, duration: &str, interval: &str) -> Value {
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "4m",
        "--bs",
        "4k",
        "--read",
        "70",
        "--duration",
        duration,
        "--interval",
        interval,
        "--clients",
        "2",
    ]);
    assert_success(&out);
    sb.last_run()
}

/// The one cell's stored series.
fn series_of(run: &Value) -> Value {
    let cell = cells(run).into_iter().next().expect("a cell");
    cell["metrics"]["series"].clone()
}

fn interval_sum(series: &Value, field: &str) -> u64 {
    series["intervals"].as_array().unwrap().iter().map(|i| i[field].as_u64().unwrap()).sum()
}

#[test]
fn trust_series_a_timed_cell_stores_about_a_second_per_interval_and_every_operation() {
    let sb = Sandbox::new();
    let run = timed_run(&sb, "3s", "1s");
    let cell = cells(&run).into_iter().next().unwrap();
    let series = series_of(&run);
    let intervals = series["intervals"].as_array().expect("a stored series").clone();
    let lengths: Vec<u64> = intervals.iter().map(|i| i["length_ns"].as_u64().unwrap()).collect();
    println!("3 s at 1 s: {} intervals, lengths {lengths:?}, wall {} ns", intervals.len(), cell["wall_ns"]);
    // Three whole seconds and the few microseconds past the third: 3 or 4 intervals (a loaded
    // machine's late end can add one).
    assert!((3..=5).contains(&intervals.len()), "{lengths:?}");
    assert_eq!(series["interval_ns"], 1_000_000_000u64);
    assert_eq!(series["merges"], 0);
    assert_eq!(series["clients"], 2);
    // Every operation of the cell is in exactly one interval; reads and writes apart.
    let ops = interval_sum(&series, "reads") + interval_sum(&series, "writes");
    assert_eq!(ops, cell["ops"].as_u64().unwrap(), "the intervals' operations add up to the cell's");
    assert!(interval_sum(&series, "reads") > 0 && interval_sum(&series, "writes") > 0, "{series}");
    let bytes = interval_sum(&series, "read_bytes") + interval_sum(&series, "write_bytes");
    assert_eq!(bytes, cell["bytes"].as_u64().unwrap());
    // The last interval has its own length, the others the interval's; together the loop's time.
    let (last, whole) = lengths.split_last().unwrap();
    assert!(whole.iter().all(|&l| l == 1_000_000_000), "{lengths:?}");
    assert!(*last <= 1_000_000_000, "{lengths:?}");
    let total: u64 = lengths.iter().sum();
    let wall = cell["wall_ns"].as_u64().unwrap();
    assert!(total.abs_diff(wall) < wall / 10, "intervals {total} ns against the cell's {wall} ns");
    for i in &intervals {
        if i["reads"].as_u64().unwrap() + i["writes"].as_u64().unwrap() > 0 {
            assert!(i["p99_ns"].as_u64().unwrap() > 0 && i["mean_ns"].as_f64().unwrap() > 0.0, "{i}");
        }
    }
    show_series_prints_a_table_per_cell(&sb, &run, intervals.len());
    report_charts_the_series(&sb, &run);
}

fn show_series_prints_a_table_per_cell(sb: &Sandbox, run: &Value, intervals: usize) {
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let out = sb.run(&["show", &id, "--series"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    println!("{stdout}");
    assert!(stdout.contains("interval 1.00 s,") && stdout.contains("2 client(s)"), "{stdout}");
    for header in ["start s", "length s", "ops/s", "MiB/s", "reads", "writes", "mean ms", "p99 ms"] {
        assert!(stdout.contains(header), "{header}: {stdout}");
    }
    let rows = stdout.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).count();
    assert_eq!(rows, intervals, "a row per interval: {stdout}");
    assert!(stdout.lines().any(|l| l.trim_start().starts_with("0.000 ") && l.contains(" 1.000 ")), "{stdout}");
}

fn report_charts_the_series(sb: &Sandbox, run: &Value) {
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let page = sb.dir.path().join("series.html");
    assert_success(&sb.run(&["report", &id, "-o", page.to_str().unwrap()]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("class=\"chart series\"").count(), 1, "one chart over time for the one cell");
    assert!(html.contains("ops/s over time"), "the chart's title");
}

#[test]
fn trust_series_half_second_intervals_and_a_bad_interval_is_refused() {
    let sb = Sandbox::new();
    let run = timed_run(&sb, "2s", "500ms");
    let series = series_of(&run);
    let n = series["intervals"].as_array().unwrap().len();
    println!("2 s at 500 ms: {n} intervals");
    assert!((4..=6).contains(&n), "{series}");
    assert_eq!(series["interval_ns"], 500_000_000u64);
    let target = sb.target();
    for bad in ["1ms", "2h", "soon"] {
        let out = sb.run(&["run", "access", "--target", target.to_str().unwrap(), "--interval", bad]);
        assert_usage_error(&out, &format!("--interval {bad}"));
    }
}

#[test]
fn trust_series_an_old_database_still_shows_and_says_no_series_was_stored() {
    let sb = Sandbox::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/db-main-7a976992.sqlite");
    std::fs::copy(&fixture, sb.db()).unwrap();
    let runs = sb.runs_json();
    let id_of = |suite: &str| {
        runs["runs"].as_array().unwrap().iter().find(|r| r["suite"] == suite).expect(suite)["id"].to_string()
    };
    let out = sb.run(&["show", &id_of("access"), "--series"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("no series stored"), "{stdout}");
    let out = sb.run(&["show", &id_of("bonnie"), "--series"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("no series: the bonnie suite does not record one yet"), "{stdout}");
}
