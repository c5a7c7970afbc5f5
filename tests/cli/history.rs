//! Issue 53, "history": one figure over time for the runs of one setup on one target, from real
//! runs. The change beyond noise is a real one: the same plan on the same device (a loop device
//! in a blkio cgroup, [`ThrottledDevice`]) whose throttle is lowered from 1,000 to 400 reads a
//! second between two builds, as a server that got slower under the same benchmark. A different
//! `--rate` would change the plan (it is part of it: a different setup, another history); the
//! device's speed is not the plan, so the runs stay one setup and the history finds the change.

use crate::helpers::*;
use serde_json::Value;
use std::process::{Command, Stdio};

/// Reads a second the device completes, then after the "upgrade". Low rates: at 2,000 a second
/// the loop device's worker, waiting for a CPU on a loaded 2-core machine, fell behind (a group
/// at 74% of the limit while other tests ran).
const FAST: u64 = 1_000;
const SLOW: u64 = 400;

fn iomatrix_in(dev: &ThrottledDevice, sb: &Sandbox) -> Command {
    let mut cmd = dev.command(env!("CARGO_BIN_EXE_iomatrix"));
    cmd.env("IOMATRIX_DB", sb.db()).current_dir(sb.dir.path()).stdin(Stdio::null());
    cmd
}

/// One run of the setup: random 4k O_DIRECT reads at depth 1 on the device, each cell 1 s (ten
/// of the throttle's slices) after an untimed 300 ms warm-up that spends the budget the slice
/// kept; `repeats` cells; `extra` flags (labels, or another block size).
fn run_on(dev: &ThrottledDevice, sb: &Sandbox, repeats: u32, extra: &[&str]) -> i64 {
    let d = dev.path();
    let mut cmd = iomatrix_in(dev, sb);
    cmd.args(["run", "access", "--device", d, "--destroy-data-on", d, "--rw", "randread", "--direct"])
        .args(["--duration", "1s", "--ramp", "300ms", "--pin", "off", "--repeat", &repeats.to_string()])
        .args(extra);
    let out = bounded_child(cmd, std::time::Duration::from_secs(60));
    assert_success(&out);
    sb.last_run()["run"]["id"].as_i64().unwrap()
}

fn history_json(sb: &Sandbox, run: i64, extra: &[&str]) -> Value {
    let out = sb.run(&[&["history", &run.to_string(), "--json"], extra].concat());
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_slower_device_is_found_slower_between_builds_and_repeats_of_one_build_are_within_noise() {
    let Some(dev) = ThrottledDevice::new(64, 0x5a) else { return };
    dev.set(ThrottleLimit::ReadIops, FAST);
    let sb = Sandbox::new();
    let b1 = [run_on(&dev, &sb, 2, &["--label", "build=1"]), run_on(&dev, &sb, 2, &["--label", "build=1"])];
    // Another plan (8k blocks) between them: not this setup's history.
    let other = run_on(&dev, &sb, 1, &["--label", "build=1", "--bs", "8k"]);
    let b2 = [
        run_on(&dev, &sb, 2, &["--label", "build=2", "--label", "note=same disks, new build"]),
        run_on(&dev, &sb, 2, &["--label", "build=2"]),
    ];
    dev.set(ThrottleLimit::ReadIops, SLOW);
    let b3 = run_on(&dev, &sb, 4, &["--label", "build=3", "--label", "note=throttled to 400/s"]);

    let doc = history_json(&sb, b2[0], &["--figure", "IOPS"]);
    assert_eq!(doc["schema"], "iomatrix.history/1");
    assert_eq!(doc["target"], dev.path());
    let groups: Vec<Vec<i64>> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["runs"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect())
        .collect();
    assert_eq!(groups, [b1.to_vec(), b2.to_vec(), vec![b3]], "run #{other} (8k) is another setup");
    let point = |i: usize| &doc["points"][i];
    let seen: Vec<String> = (0..3)
        .map(|i| {
            format!(
                "group {}: median {} IOPS, band {}..{}, {} {:?}",
                i + 1,
                point(i)["stats"]["median"],
                point(i)["stats"]["low"],
                point(i)["stats"]["high"],
                point(i)["verdict"]["verdict"],
                point(i)["change_pct"].as_f64()
            )
        })
        .collect();
    eprintln!("{}", seen.join("\n"));
    for (i, said) in seen.iter().enumerate() {
        assert_eq!(point(i)["samples"].as_array().unwrap().len(), 4, "4 samples a group: {said}");
    }
    // The throttle's physics: never above its limit (a slice's worth over at most); the slow
    // group at it. A fast group may fall behind where the machine starved the loop worker: said.
    let median = |i: usize| point(i)["stats"]["median"].as_f64().unwrap();
    let ratio = |i: usize, limit: u64| median(i) / limit as f64;
    for (i, limit) in [(0, FAST), (1, FAST), (2, SLOW)] {
        assert!(ratio(i, limit) < 1.15, "group {} over its limit:\n{}", i + 1, seen.join("\n"));
    }
    assert!(ratio(2, SLOW) > 0.85, "the slow group under its limit:\n{}", seen.join("\n"));
    // From 1,000 to 400: 4 against 4 samples all below, the exact rank test's p = 2/70.
    assert_eq!(point(2)["verdict"]["verdict"], "slower", "{}", seen.join("\n"));
    let change = point(2)["change_pct"].as_f64().unwrap();
    assert!((-75.0..-40.0).contains(&change), "{change}");
    // The same device speed: within noise, unless the rank test's own false alarm (2.9% of
    // same-setup pairs at 4 against 4 samples) hit, which then moved the median by little. Held
    // where both groups ran at the device's speed; a starved one is a real change, not noise.
    let same = point(1)["verdict"]["verdict"].as_str().unwrap();
    let same_change = point(1)["change_pct"].as_f64().unwrap();
    if ratio(0, FAST) > 0.9 && ratio(1, FAST) > 0.9 {
        assert!(same == "within noise" || same_change.abs() < 10.0, "{}", seen.join("\n"));
    } else {
        eprintln!("a fast group fell behind the device's limit (the machine starved it): the repeats' verdict, {same}, not held");
    }
    assert_eq!(point(1)["runs"][0]["note"], "same disks, new build");
    assert_eq!(point(0)["labels"], serde_json::json!([["build", "1"]]));

    // The text: the same groups and verdicts, the note shown, the other figures listed.
    let out = sb.run(&["history", &b3.to_string(), "--figure", "IOPS"]);
    assert_success(&out);
    let (text, _) = text(&out);
    eprintln!("{text}");
    assert!(text.contains(&format!("#{} #{}", b2[0], b2[1])) && text.contains("build=3"), "{text}");
    assert!(text.contains("slower (p=0.029)"), "{text}");
    assert!(text.contains(&format!("#{b3} (")) && text.contains("throttled to 400/s"), "{text}");
    assert!(text.contains("other figures (--figure NAME):"), "{text}");
    // The default figure is the first headline rate, in KB/s: the same verdicts.
    let kb = history_json(&sb, b3, &[]);
    assert_eq!(kb["unit"], "KB/s");
    assert_eq!(kb["points"][2]["verdict"]["verdict"], "slower");
}

#[test]
fn a_figure_that_names_none_or_several_and_a_run_without_a_history_are_refused() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let quick = ["run", "access", "--target", t, "--file-size", "1m", "--duration", "100ms", "--label", "build=1"];
    assert_success(&sb.run(&quick));
    let out = sb.run(&["history", "1", "--figure", "zzz"]);
    assert_usage_error(&out, "--figure zzz: no compared figure has that unit or that in its name");
    assert!(text(&out).1.contains("the run's figures: access 1m/4k"), "{}", text(&out).1);
    // "read" is in every figure's name here (the cell's mix, its latencies): several, refused.
    assert_usage_error(&sb.run(&["history", "1", "--figure", "p"]), "a history draws one: give one of:");
    assert_usage_error(&sb.run(&["history", "9"]), "no run #9 in");
    let out = sb.run(&["history", "1"]);
    assert_success(&out);
    let (text, _) = text(&out);
    assert!(text.starts_with(&format!("history of run #1: access on {t}, 1 run(s)")), "{text}");
    assert!(text.contains("no verdict") || text.lines().filter(|l| l.contains("build=1")).count() == 1, "{text}");
}
