//! compare and sweep over real stored runs, checked against figures
//! computed here from the stored cells.

use crate::helpers::*;
use crate::stored::*;
use std::collections::BTreeMap;

#[test]
fn compare_gives_the_ratios_views_and_wins_of_the_stored_cells() {
    let sb = Sandbox::new();
    let a = iozone_run(&sb, &["server=a"], "64k,256k");
    // B lacks the 256k file and has a 1m file: listed, not dropped.
    let b = iozone_run(&sb, &["server=b"], "64k,1m");
    let (fa, fb) = (figures(&sb, a), figures(&sb, b));
    let doc = json_of(&sb.run(&["compare", "server=a", &b.to_string(), "--json", "--records", "..4k"]));
    assert_eq!(doc["schema"], "iomatrix.compare/2");
    let c = &doc["comparison"];
    assert_eq!(c["a_runs"], serde_json::json!([a]));
    assert_eq!(c["b_runs"], serde_json::json!([b]));
    let matrices = c["matrices"].as_array().unwrap();
    assert_eq!(matrices.len(), 2, "read and write");
    for m in matrices {
        let test = m["test"].as_str().unwrap();
        assert_eq!(m["file_sizes"], serde_json::json!([65536]));
        assert_eq!(m["record_sizes"], serde_json::json!([4096, 65536]));
        let mut ratios = Vec::new();
        for (j, r) in [4096u64, 65536].iter().enumerate() {
            let key = (test.to_string(), 65536, *r);
            let by_hand = fb[&key] / fa[&key];
            assert!(
                close(m["ratios"][0][j].as_f64().unwrap(), by_hand),
                "{test} {r}: {} vs {by_hand}",
                m["ratios"][0][j]
            );
            // One file size: each column's mean is its one ratio.
            assert!(close(m["by_record"][j][1].as_f64().unwrap(), by_hand));
            ratios.push(by_hand);
        }
        let mean = f64::midpoint(ratios[0], ratios[1]);
        assert!(close(m["by_file"][0][1].as_f64().unwrap(), mean));
        assert!(close(m["overall"]["mean_change_pct"].as_f64().unwrap(), (mean - 1.0) * 100.0));
        let b_wins = ratios.iter().filter(|r| **r > 1.0).count();
        assert_eq!(m["overall"]["b_wins"].as_u64().unwrap() as usize, b_wins);
        assert_eq!(m["overall"]["a_wins"].as_u64().unwrap() as usize, ratios.iter().filter(|r| **r < 1.0).count());
        // The region: records up to 4k only.
        assert_eq!(m["region"]["cells"], 1);
        assert!(close(m["region"]["mean_change_pct"].as_f64().unwrap(), (ratios[0] - 1.0) * 100.0));
    }
    let only_a: Vec<&str> = c["only_in_a"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(only_a, ["read 256k/4k", "read 256k/64k", "write 256k/4k", "write 256k/64k"]);
    assert_eq!(c["only_in_b"].as_array().unwrap().len(), 4);
    assert_eq!(c["condition_differences"], serde_json::json!([]));
    // The text names the views and the cells left out.
    let (stdout, _) = text(&sb.run(&["compare", &a.to_string(), &b.to_string()]));
    assert!(stdout.contains("read: B/A of KB/s") && stdout.contains("record-size view"), "{stdout}");
    assert!(stdout.contains("only in A (4 cells, not compared)"), "{stdout}");
}

#[test]
fn compare_states_differing_conditions_and_flags_cells_above_a_limit() {
    let sb = Sandbox::new();
    let a = iozone_run(&sb, &[], "64k");
    let target = sb.target();
    let t = target.to_str().unwrap();
    assert_success(&sb.run(&[
        "run",
        "iozone",
        "--target",
        t,
        "--files",
        "64k",
        "--records",
        "4k,64k",
        "--tests",
        "write,read",
        "--clients",
        "2",
    ]));
    let b = sb.last_run()["run"]["id"].as_i64().unwrap();
    // A limit between the cells' figures: exactly those above it are flagged.
    let fa = figures(&sb, a);
    let mut values: Vec<f64> = fa.values().copied().collect();
    values.sort_by(f64::total_cmp);
    let limit_kib = f64::midpoint(values[1], values[2]);
    let doc = json_of(&sb.run(&[
        "compare",
        &a.to_string(),
        &b.to_string(),
        "--json",
        "--limit",
        &format!("{limit_kib}KB/s"),
    ]));
    let diffs = doc["comparison"]["condition_differences"].as_array().unwrap();
    assert!(diffs.iter().any(|d| d.as_str().unwrap().starts_with("clients: A")), "{diffs:?}");
    let flagged: Vec<String> = doc["cache_flags"]["a"]["flagged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {}", f[0]["test"].as_str().unwrap(), f[0]["record_size"]))
        .collect();
    let expected: Vec<String> =
        fa.iter().filter(|(_, v)| **v > limit_kib).map(|((test, _, r), _)| format!("{test} {r}")).collect();
    assert_eq!(flagged, expected);
    assert_eq!(expected.len(), 2);
    let (stdout, _) = text(&sb.run(&["compare", &a.to_string(), &b.to_string(), "--limit", "100Mbit"]));
    assert!(stdout.contains("NOTE: the sides were measured under different conditions"), "{stdout}");
    assert!(stdout.contains("cache dominates at files <= 64k"), "{stdout}");
    // Bad input.
    assert_usage_error(&sb.run(&["compare", &a.to_string(), "99"]), "no run #99");
    assert_usage_error(&sb.run(&["compare", &a.to_string(), "server=none"]), "matches no complete run");
    assert_usage_error(&sb.run(&["compare", &a.to_string(), &b.to_string(), "--limit", "fast"]), "--limit fast");
    assert_usage_error(&sb.run(&["compare", &a.to_string(), &b.to_string(), "--files", "2m..1m"]), "--files 2m..1m");
}

#[test]
fn sweep_by_a_label_gives_each_levels_change() {
    let sb = Sandbox::new();
    let ids: Vec<i64> = ["3", "1", "2"].iter().map(|l| iozone_run(&sb, &[&format!("cache={l}")], "64k")).collect();
    let doc = json_of(&sb.run(&["sweep", "cache=1", "cache=2", "cache=3", "--by", "cache", "--json"]));
    let s = &doc["sweep"];
    assert_eq!(s["levels"], serde_json::json!(["1", "2", "3"]));
    let (f1, f2, f3) = (figures(&sb, ids[1]), figures(&sb, ids[2]), figures(&sb, ids[0]));
    let rows = s["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let mut steps = Vec::new();
    for row in rows {
        let name = row["cell"].as_str().unwrap();
        let key =
            f1.keys().find(|k| name == format!("{} 64k/{}", k.0, if k.2 == 4096 { "4k" } else { "64k" })).unwrap();
        let v = [f1[key], f2[key], f3[key]];
        for (i, want) in v.iter().enumerate() {
            assert!(close(row["values"][i].as_f64().unwrap(), *want));
        }
        let step0 = (v[1] - v[0]) / v[0] * 100.0;
        assert!(close(row["steps_pct"][0].as_f64().unwrap(), step0));
        assert!(close(row["first_to_last_pct"].as_f64().unwrap(), (v[2] - v[0]) / v[0] * 100.0));
        steps.push(step0);
    }
    let average = steps.iter().sum::<f64>() / steps.len() as f64;
    assert!(close(s["average_steps_pct"][0].as_f64().unwrap(), average));
    // Read over write for each record size at each level.
    assert_eq!(s["read_write"].as_array().unwrap().len(), 6);
    // By record size within one run.
    let doc = json_of(&sb.run(&["sweep", &ids[0].to_string(), "--by", "record", "--json"]));
    assert_eq!(doc["sweep"]["levels"], serde_json::json!(["4k", "64k"]));
    assert_usage_error(&sb.run(&["sweep", &ids[0].to_string(), "--by", "server"]), "has no label server");
    assert_usage_error(&sb.run(&["sweep", "cache=1", "--by", "cache"]), "at least two");
}

#[test]
fn repeats_store_every_sample_and_noisy_cells_are_measured_again() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let base = ["run", "iozone", "--target", t, "--files", "64k,128k", "--records", "64k", "--tests", "write,read"];
    assert_success(&sb.run(&[&base[..], &["--repeat", "3"]].concat()));
    let run = sb.last_run();
    let stored = cells(&run);
    assert_eq!(stored.len(), 2 * 2 * 3, "two pairs, two tests, three samples each");
    let repeats: Vec<u64> = stored.iter().map(|c| c["metrics"]["repeat"].as_u64().unwrap()).collect();
    assert_eq!(&repeats[..6], [1, 1, 2, 2, 3, 3]);
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    assert!(stdout.contains("Noise: 3 to 3 samples per repeated cell"), "{stdout}");
    // A tolerance no two samples meet: every cell is measured again, up to --max-repeats.
    let out = sb.run(&[&base[..], &["--repeat", "2", "--tolerance", "0.000001%", "--max-repeats", "4"]].concat());
    assert_success(&out);
    assert!(text(&out).1.contains("measuring them again"), "{}", text(&out).1);
    let run = sb.last_run();
    let mut per_cell: BTreeMap<(String, u64), usize> = BTreeMap::new();
    for c in cells(&run) {
        *per_cell.entry((c["test"].as_str().unwrap().to_string(), c["file_size"].as_u64().unwrap())).or_default() += 1;
    }
    assert!(per_cell.values().all(|n| *n == 4), "{per_cell:?}");
    assert_eq!(run["run"]["total_cells"], 16, "the planned cells grew with the re-measures");
    assert_eq!(run["run"]["status"], "complete");
    // Bad flags.
    assert_usage_error(&sb.run(&[&base[..], &["--repeat", "0"]].concat()), "--repeat 0");
    assert_usage_error(&sb.run(&[&base[..], &["--tolerance", "much"]].concat()), "--tolerance much");
    // Access specs: every setting measured --repeat times, noisy ones again.
    let access = ["run", "access", "--target", t, "--bs", "4k,64k", "--file-size", "1m", "--bytes", "4m"];
    let out = sb.run(&[&access[..], &["--repeat", "2", "--tolerance", "0.000001%", "--max-repeats", "3"]].concat());
    assert_success(&out);
    let run = sb.last_run();
    let stored = cells(&run);
    assert_eq!(stored.len(), 6, "two settings, three samples each");
    assert_eq!(run["run"]["total_cells"], 6);
    let (stdout, _) = text(&sb.run(&["show", &run["run"]["id"].as_i64().unwrap().to_string()]));
    assert!(stdout.contains("Noise: 3 to 3 samples per repeated cell"), "{stdout}");
}

/// Two real file-server runs that differ in `--interleave` only, over a 4k,64k,1m mix.
#[test]
fn compare_lists_the_plan_parameters_that_differ_and_names_a_size_mix_by_its_range() {
    let sb = Sandbox::new();
    for interleave in ["1", "5"] {
        fileserver_mix_run(&sb, interleave, &format!("cfg={interleave}"));
    }
    let (stdout, _) = text(&sb.run(&["compare", "cfg=1", "cfg=5"]));
    let diffs = stdout.split("conditions:").next().unwrap();
    assert!(diffs.contains("plan parameters that differ (A vs B):\n  interleave: 1 vs 5\n"), "{stdout}");
    assert!(stdout.contains("environment facts: the same on both sides"), "{stdout}");
    assert!(stdout.contains("write 4k..1m (3 sizes)/4k"), "{stdout}");
    assert!(!stdout.contains("1m/4k"), "never named by one of its sizes: {stdout}");
    // Seed 003's tables: per phase, each operation's mean, p50, p99 and rate, A, B and % change.
    let doc = json_of(&sb.run(&["compare", "cfg=1", "cfg=5", "--json"]));
    assert_eq!(doc["schema"], "iomatrix.compare/2");
    let c = &doc["comparison"];
    assert_eq!(c["plan_differences"], serde_json::json!([{"name": "interleave", "a": "1", "b": "5"}]));
    let tables = c["operations"].as_array().unwrap();
    let phases: Vec<&str> = tables.iter().map(|t| t["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["read 4k..1m (3 sizes)/4k", "write 4k..1m (3 sizes)/4k"]);
    let write = &tables[1]["rows"];
    for op in ["create", "open", "write", "close"] {
        for figure in ["mean", "p50", "p99", "rate"] {
            let row = write.as_array().unwrap().iter().find(|r| r["operation"] == op && r["figure"] == figure);
            let row = row.unwrap_or_else(|| panic!("no {op} {figure} in {write}"));
            let (a, b) = (row["a"].as_f64().unwrap(), row["b"].as_f64().unwrap());
            assert!(a > 0.0 && b > 0.0, "{row}");
            assert!(close(row["change_pct"].as_f64().unwrap(), (b - a) / a * 100.0), "{row}");
            // One sample a side: no verdict, and how many repeats would give one.
            assert_eq!(row["verdict"]["verdict"], "no verdict");
            assert_eq!(row["verdict"]["repeats_needed"], 4);
        }
    }
    assert!(stdout.contains("create mean (ms)") && stdout.contains("write rate (ops/s)"), "{stdout}");
    assert!(stdout.contains("--repeat 4 (or 4 runs a side) on both sides gives one"), "{stdout}");
}

/// Two real Bonnie runs: one table of the tests as operations.
#[test]
fn compare_gives_bonnies_tests_as_an_operation_table() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    for side in ["a", "b"] {
        let label = format!("side={side}");
        assert_success(
            &sb.run(&["run", "bonnie", "--target", t, "--size", "1m", "--ram", "0", "--files", "0", "--label", &label]),
        );
    }
    let doc = json_of(&sb.run(&["compare", "side=a", "side=b", "--json"]));
    let tables = doc["comparison"]["operations"].as_array().unwrap();
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert!(tables[0]["phase"].as_str().unwrap().starts_with("bonnie 1m/"), "{}", tables[0]["phase"]);
    let rows = tables[0]["rows"].as_array().unwrap();
    for test in ["write", "read", "rewrite"] {
        let figures: Vec<&str> =
            rows.iter().filter(|r| r["operation"] == test).map(|r| r["figure"].as_str().unwrap()).collect();
        assert!(figures.contains(&"mean") && figures.contains(&"rate"), "{test}: {figures:?}");
        for r in rows.iter().filter(|r| r["operation"] == test) {
            let (a, b) = (r["a"].as_f64().unwrap(), r["b"].as_f64().unwrap());
            assert!(close(r["change_pct"].as_f64().unwrap(), (b - a) / a * 100.0), "{r}");
        }
    }
    let (stdout, _) = text(&sb.run(&["compare", "side=a", "side=b"]));
    assert!(stdout.contains("read mean (ms)") && stdout.contains("% change"), "{stdout}");
}

/// A fio JSON document of one random-read job reading `kib_per_sec` for one second.
fn fio_json(kib_per_sec: f64) -> String {
    let bytes = (kib_per_sec * 1024.0) as u64;
    let ios = bytes / 4096;
    let side = |bytes: u64, n: u64| {
        serde_json::json!({
            "io_bytes": bytes, "bw_bytes": bytes, "iops": n as f64, "runtime": 1000, "total_ios": n,
            "clat_ns": { "min": 1000, "max": 90000, "mean": 2500.0, "N": n,
                         "percentile": {"50.000000": 2048, "99.000000": 8192} },
        })
    };
    serde_json::json!({
        "fio version": "fio-3.33", "timestamp": 1795387682,
        "global options": { "directory": "/mnt/x" },
        "jobs": [{ "jobname": "j", "error": 0,
                   "job options": {"rw": "randread", "bs": "4k", "size": "8m", "ioengine": "psync"},
                   "read": side(bytes, ios), "write": side(0, 0), "trim": side(0, 0),
                   "job_runtime": 1000, "usr_cpu": 6.0, "sys_cpu": 34.5 }],
    })
    .to_string()
}

/// Imports one crafted fio result per rate, labelled `side`.
fn import_side(sb: &Sandbox, side: &str, rates: &[f64]) {
    let dir = sb.dir.path().join(side);
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<String> = rates
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let f = dir.join(format!("{i}.json"));
            std::fs::write(&f, fio_json(*r)).unwrap();
            f.to_string_lossy().into_owned()
        })
        .collect();
    let label = format!("side={side}");
    let mut args = vec!["import"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--label", &label]);
    assert_success(&sb.run(&args));
}

/// Five samples a side: a baseline, the same setup again (the same spread), and a planted 20% slowdown.
#[test]
fn fail_if_slower_exits_5_on_a_planted_slowdown_and_0_on_the_same_setup() {
    let sb = Sandbox::new();
    let base = [100_000.0, 103_000.0, 98_000.0, 101_500.0, 99_000.0];
    let again = [99_500.0, 102_000.0, 97_500.0, 100_500.0, 101_000.0];
    let slow: Vec<f64> = base.iter().map(|v| v * 0.8).collect();
    import_side(&sb, "base", &base);
    import_side(&sb, "again", &again);
    import_side(&sb, "slow", &slow);
    let out = sb.run(&["compare", "side=base", "side=slow", "--fail-if-slower", "5%"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out).0);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("figure(s) slower than A by more than 5% beyond noise"), "{stdout}");
    assert!(stdout.contains("  access 8m/4k qd=1 read=100% random=100%: "), "{stdout}");
    assert!(stdout.contains("B faster in 0, slower in "), "{stdout}");
    let out = sb.run(&["compare", "side=base", "side=again", "--fail-if-slower", "5%"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).0);
    assert!(text(&out).0.contains("nothing slower than A by more than 5% beyond noise"), "{}", text(&out).0);
    // The same setup is within noise, cell and operations alike.
    let doc = json_of(&sb.run(&["compare", "side=base", "side=again", "--json", "--fail-if-slower", "5"]));
    let c = &doc["comparison"];
    assert_eq!(c["scalars"][0]["verdict"]["verdict"], "within noise", "{}", c["scalars"][0]);
    assert_eq!(c["noise"]["slower"], 0);
    assert_eq!(doc["fail_if_slower"]["slower"], serde_json::json!([]));
    // A 20% slowdown is not one of more than 25%; --metric picks the figures held to the threshold.
    let out = sb.run(&["compare", "side=base", "side=slow", "--fail-if-slower", "25%"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).0);
    let out = sb.run(&["compare", "side=base", "side=slow", "--fail-if-slower", "5%", "--metric", "read p99"]);
    assert_eq!(out.status.code(), Some(0), "latency percentiles did not move: {}", text(&out).0);
    let out = sb.run(&["compare", "side=base", "side=slow", "--fail-if-slower", "5%", "--metric", "read rate"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out).0);
    // One run a side: nothing can be judged, and the check says so with its own code, never a pass.
    let out = sb.run(&["compare", "1", "11", "--fail-if-slower", "5%"]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out).0);
    assert!(text(&out).1.contains("--fail-if-slower 5%: not checked"), "{}", text(&out).1);
    // Bad input.
    assert_usage_error(
        &sb.run(&["compare", "side=base", "side=slow", "--fail-if-slower", "lots"]),
        "--fail-if-slower lots",
    );
    assert_usage_error(
        &sb.run(&["compare", "side=base", "side=slow", "--fail-if-slower", "5%", "--metric", "nothing-like-it"]),
        "--metric nothing-like-it",
    );
}

/// Two real runs on tmpfs mounts that differ in one mount option (root only; skipped elsewhere).
#[test]
fn compare_lists_a_changed_mount_option() {
    let Some(relatime) = Mount::virtual_fs("tmpfs", "size=32m") else { return };
    let Some(noatime) = Mount::virtual_fs("tmpfs", "size=32m,noatime") else { return };
    let sb = Sandbox::new();
    for (mount, label) in [(&relatime, "atime=relatime"), (&noatime, "atime=noatime")] {
        assert_success(&sb.run(&[
            "run",
            "iozone",
            "--target",
            mount.point.to_str().unwrap(),
            "--files",
            "64k",
            "--records",
            "4k",
            "--tests",
            "write,read",
            "--label",
            label,
        ]));
    }
    let doc = json_of(&sb.run(&["compare", "atime=relatime", "atime=noatime", "--json"]));
    let diffs = doc["comparison"]["environment_differences"].as_array().unwrap();
    let options = diffs.iter().find(|d| d["name"] == "target.mount_options").unwrap_or_else(|| panic!("{diffs:?}"));
    assert!(!options["a"].as_str().unwrap().contains("noatime"), "{options}");
    assert!(options["b"].as_str().unwrap().contains("noatime"), "{options}");
    let (stdout, _) = text(&sb.run(&["compare", "atime=relatime", "atime=noatime"]));
    let above = stdout.split("\nread: B/A").next().unwrap();
    assert!(
        above.contains("environment facts that differ (A vs B):\n") && above.contains("  target.mount_options: "),
        "{stdout}"
    );
}

/// `--limit 1` read as "run #1" misled a new user: a bare number is refused with both ways to
/// say it, and `run:N` or `#N` names a run, a rate carries its unit.
#[test]
fn limit_with_a_bare_number_is_refused_as_ambiguous() {
    let sb = Sandbox::new();
    let a = iozone_run(&sb, &[], "64k").to_string();
    let b = iozone_run(&sb, &[], "64k").to_string();
    for args in [["compare", &a, &b, "--limit", "1"], ["report", &a, &b, "--limit", "1"]] {
        let mut args = args.to_vec();
        let page = sb.dir.path().join("r.html");
        if args[0] == "report" {
            args.extend(["-o", page.to_str().unwrap()]);
        }
        let out = sb.run(&args);
        assert_usage_error(&out, "--limit 1: a run or a rate? give --limit #1");
        assert!(text(&out).1.contains("100Mbit"), "{}", text(&out).1);
        assert!(!page.exists());
    }
    for run in ["run:1", "#1"] {
        let doc = json_of(&sb.run(&["compare", &a, &b, "--json", "--limit", run]));
        assert!(doc["cache_flags"]["a"]["limit"].as_str().is_some_and(|l| l.contains("run #1")), "{run}: {doc}");
    }
    assert_usage_error(&sb.run(&["compare", &a, &b, "--limit", "run:99"]), "no run #99");
}
