//! `compare --fail-if-slower` on real runs: a 20% slowdown made with access's `--rate` cap trips
//! the gate, `--metric KB/s` holds the figures of that unit, the detectable change is printed, and
//! 5 repeats a side over many figures cannot reach Holm's corrected level, so the gate says it
//! did not check (exit 6) and names the repeats it needs. Short cells: seconds in all.
use crate::helpers::*;

/// `run access` of short cells of `duration`, stored in the sandbox's database; must succeed.
fn access(sb: &Sandbox, duration: &str, extra: &[&str]) {
    let target = sb.target();
    let base = ["run", "access", "--target", target.to_str().unwrap(), "--file-size", "1m", "--duration", duration];
    assert_success(&sb.run(&[&base[..], extra].concat()));
}

#[test]
fn a_20_percent_slowdown_made_with_a_rate_cap_trips_the_gate_and_says_what_it_could_detect() {
    let sb = Sandbox::new();
    // 10 repeats a side of one cell, 500 requests a second against 400: 20% slower.
    access(&sb, "200ms", &["--rate", "500", "--repeat", "10"]); // 1
    access(&sb, "200ms", &["--rate", "400", "--repeat", "10"]); // 2
    let out = sb.run(&["compare", "1", "2", "--fail-if-slower", "5%"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(5), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 figure(s) slower than A by more than 5% beyond noise"), "{stdout}");
    assert!(
        stdout.contains(
            "tested: 2 figure(s), headline rates (KB/s, ops/s); one-sided Mann-Whitney, exact; Holm, 5% family-wise"
        ),
        "{stdout}"
    );
    // Printed, and below the slowdown it found (a rate cap's samples spread little; a loaded
    // machine widens them, so the window is wide). 0% where the cap held every sample to the
    // same figure (10 of 10 at 1999.08 KB/s in a CI run): no spread, so any change shows.
    let detectable = detectable_pct(&stdout);
    println!("detectable change: {detectable}%");
    assert!((0.0..20.0).contains(&detectable), "detectable change {detectable}%\n{stdout}");

    // --metric KB/s: the unit the table prints, any case; the latencies stay out.
    for unit in ["KB/s", "kb/s"] {
        let out = sb.run(&["compare", "1", "2", "--fail-if-slower", "5%", "--metric", unit]);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(5), "{stdout}\n{stderr}");
        assert!(stdout.contains("--fail-if-slower 5% (unit KB/s): 1 figure(s) slower than A"), "{stdout}");
        assert!(stdout.contains("tested: 1 figure(s), unit KB/s;"), "{stdout}");
    }
    // The JSON says the same: family, test, correction, each figure's detectable change.
    let out = sb.run(&["compare", "1", "2", "--fail-if-slower", "5%", "--json"]);
    assert_eq!(out.status.code(), Some(5));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &doc["fail_if_slower"];
    assert_eq!((gate["outcome"].as_str(), gate["figures"].as_u64()), (Some("slower"), Some(2)), "{gate}");
    assert_eq!(gate["test"], "one-sided Mann-Whitney, exact");
    assert_eq!(gate["correction"], "Holm, 5% family-wise");
    assert!(gate["checks"].as_array().unwrap().iter().all(|c| c["detectable_change_pct"].is_number()), "{gate}");
    // Three sides: each held to the baseline by the same gate; the slowed side trips it.
    access(&sb, "200ms", &["--rate", "500", "--repeat", "10"]); // 3: the baseline's setup again
    let out = sb.run(&["compare", "1", "3", "2", "--fail-if-slower", "5%", "--json"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out).1);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pairs = doc["pairs"].as_array().unwrap();
    let outcomes: Vec<&str> = pairs.iter().map(|p| p["fail_if_slower"]["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes.last(), Some(&"slower"), "{outcomes:?}");
    assert!(pairs.iter().all(|p| p["fail_if_slower"]["correction"] == "Holm, 5% family-wise"), "{doc}");
    // A percentile there is not, or a unit no figure has, is refused naming what there is.
    for (metric, named) in [("p99.9", "a percentile (p50, p99)"), ("MB/s", "a unit (KB/s, ms, ops/s)")] {
        assert_usage_error(&sb.run(&["compare", "1", "2", "--fail-if-slower", "5%", "--metric", metric]), named);
    }
    // IOPS: the access cell's KB/s as requests of its block size, the same verdict in its unit.
    let out = sb.run(&["compare", "1", "2", "--fail-if-slower", "5%", "--metric", "IOPS"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(5), "{stdout}\n{stderr}");
    assert!(stdout.contains("--fail-if-slower 5% (unit IOPS): 1 figure(s) slower than A"), "{stdout}");
}

#[test]
fn five_repeats_a_side_over_many_figures_are_not_checked_and_name_the_repeats_needed() {
    let sb = Sandbox::new();
    // 8 cells: 16 headline figures (each cell's KB/s and its operation's rate). One-sided, 5
    // samples a side cannot go below 1/C(10,5) = 0.00397, above Holm's first level 0.05/16.
    let sweep = ["--qd", "1,2", "--bs", "4k,8k", "--read", "100,0"];
    access(&sb, "100ms", &[&["--rate", "500", "--repeat", "5"][..], &sweep[..]].concat());
    let out = sb.run(&["compare", "1", "1", "--fail-if-slower", "5%"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert!(stdout.contains("NOT CHECKED: 0 figure(s) checked"), "{stdout}");
    assert!(
        stdout.contains(
            "too few samples: 5 vs 5: the one-sided test's smallest p, 0.00397, is above Holm's first level 0.00313"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("tested: 16 figure(s)"), "{stdout}");
    // Every figure names the repeats a side it needs: at least 6 (1/C(12,6) is the first below
    // 0.05/16); a cell a loaded machine disturbed may need more, or more than any practical number.
    let needs: Vec<Option<usize>> = stdout
        .lines()
        .filter(|l| l.starts_with("  not checked: "))
        .map(|l| l.split("needs ").nth(1).expect(l).split_whitespace().find_map(|w| w.parse().ok()))
        .collect();
    assert_eq!(needs.len(), 16, "{stdout}");
    assert!(needs.iter().all(|n| n.is_none_or(|n| n >= 6)), "{needs:?}\n{stdout}");
    assert!(
        stderr.contains("give both sides --repeat ") || stderr.contains("no practical number of repeats"),
        "{stderr}"
    );
}

/// The detectable change the gate printed, in %.
fn detectable_pct(stdout: &str) -> f64 {
    let line = stdout.lines().find(|l| l.starts_with("  detectable change: ")).expect("a detectable change line");
    let value = line.trim_start_matches("  detectable change: ").split('%').next().unwrap();
    value.parse().unwrap_or_else(|_| panic!("{line}"))
}
