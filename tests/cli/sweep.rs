//! `sweep`'s units, splits, per-direction summaries and each row's own unit, over real runs.
use crate::helpers::*;
use crate::stored::*;
use std::collections::BTreeMap;

#[test]
fn sweep_units_splits_totals_per_direction_and_each_rows_own_unit() {
    let sb = Sandbox::new();
    let ids: Vec<i64> = ["1", "2"].iter().map(|l| iozone_run(&sb, &[&format!("cache={l}")], "64k")).collect();
    let (f1, f2) = (figures(&sb, ids[0]), figures(&sb, ids[1]));
    // MB/s is KB/s over 1024; the Total column is first to last.
    let doc = json_of(&sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--unit", "mbs", "--json"]));
    let s = &doc["sweep"];
    assert_eq!(s["unit"], "MB/s");
    for row in s["rows"].as_array().unwrap() {
        let name = row["cell"].as_str().unwrap();
        let key =
            f1.keys().find(|k| name == format!("{} 64k/{}", k.0, if k.2 == 4096 { "4k" } else { "64k" })).unwrap();
        assert!(close(row["values"][0].as_f64().unwrap(), f1[key] / 1024.0), "{name}");
        assert!(close(row["first_to_last_pct"].as_f64().unwrap(), (f2[key] - f1[key]) / f1[key] * 100.0));
        assert_eq!(row["direction"], if key.0 == "read" { "read" } else { "write" });
    }
    let reads = s["directions"].as_array().unwrap().iter().find(|d| d["direction"] == "read").unwrap();
    let read_totals: f64 = s["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["direction"] == "read")
        .map(|r| r["first_to_last_pct"].as_f64().unwrap())
        .sum();
    assert!(close(reads["total_pct"].as_f64().unwrap(), read_totals));
    // Two record sizes: one ratio each over both levels, two samples a side.
    let blocks = s["read_write_by_block"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["reads"], 2);
    // Text: one table per block size, the Total column, the summaries once.
    let (stdout, _) = text(&sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--split", "bs"]));
    assert!(stdout.contains("== block size 4k") && stdout.contains("== block size 64k"), "{stdout}");
    assert_eq!(stdout.matches("Totals by direction").count(), 1, "{stdout}");
    assert!(stdout.contains(" Total\n"), "{stdout}");
    let (stdout, _) = text(&sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--split", "direction"]));
    assert!(stdout.contains("== reads") && stdout.contains("== writes"), "{stdout}");
    let out = sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--unit", "furlongs"]);
    assert_eq!(out.status.code(), Some(2));
    // A Bonnie sweep labels each row with its own unit: KB/s, seeks/s, files/s.
    let t = sb.target();
    for level in ["1", "2"] {
        let label = format!("disk={level}");
        let out = sb.run(&["bonnie", "-d", t.to_str().unwrap(), "-s", "1", "-r", "0", "-n", "1", "--label", &label]);
        assert_success(&out);
    }
    let doc = json_of(&sb.run(&["sweep", "disk=1", "disk=2", "--by", "disk", "--json"]));
    let unit_of = |test: &str| -> String {
        let rows = doc["sweep"]["rows"].as_array().unwrap();
        let row = rows.iter().find(|r| r["cell"].as_str().unwrap().split(' ').next() == Some(test)).unwrap();
        row["unit"].as_str().unwrap().to_string()
    };
    assert_eq!(unit_of("write"), "KB/s");
    assert_eq!(unit_of("seeks"), "seeks/s");
    assert_eq!(unit_of("seq-create"), "files/s");
    assert_eq!(doc["sweep"]["unit"], "unit per row");
    let (stdout, _) = text(&sb.run(&["sweep", "disk=1", "disk=2", "--by", "disk"]));
    let seeks = stdout.lines().find(|l| l.starts_with("seeks")).unwrap();
    assert!(seeks.contains("seeks/s"), "{stdout}");
}

#[test]
fn a_derived_figure_is_worked_from_a_ratio_of_other_runs_and_marked_derived() {
    let sb = Sandbox::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/import/tests/data/iometer-2006.07.27-results.csv");
    for level in ["4", "5"] {
        assert_success(&sb.run(&["import", fixture.to_str().unwrap(), "--label", &format!("cache={level}")]));
    }
    let base = ["sweep", "cache=4", "cache=5", "--by", "cache", "--unit", "mbs"];
    let mut args = base.to_vec();
    args.extend(["--derive", "disk_read = write * ratio(cache=5, 2k)", "--json"]);
    let doc = json_of(&sb.run(&args));
    let d = &doc["derived"][0];
    assert_eq!(d["derived"], true);
    assert_eq!(d["name"], "disk_read");
    // The fixture's 2K spec: 4.56 MBps read, 0.95 write, so the factor is 4.8 and the 2K write row
    // (the only write row) derives 0.95 * 4.8 at both levels.
    assert!(close(d["factor"].as_f64().unwrap(), 4.56 / 0.95));
    let rows = d["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{d}");
    for v in rows[0]["values"].as_array().unwrap() {
        assert!(close(v.as_f64().unwrap(), 4.56), "{d}");
    }
    // Measured rows are untouched and nothing derived is stored.
    assert_eq!(doc["sweep"]["rows"].as_array().unwrap().len(), 3);
    assert_eq!(sb.runs_json()["runs"].as_array().map(Vec::len), Some(2));
    let mut args = base.to_vec();
    args.extend(["--derive", "x = write * 2"]);
    let (stdout, _) = text(&sb.run(&args));
    assert!(stdout.contains("Derived, not measured (nothing stored): x = write * 2"), "{stdout}");
    let mut args = base.to_vec();
    args.extend(["--derive", "x = write * ratio(cache=5, 32k)"]);
    assert_usage_error(&sb.run(&args), "no read and write cells at block size 32k");
    let mut args = base.to_vec();
    args.extend(["--derive", "x = seeks * 2"]);
    assert_usage_error(&sb.run(&args), "--derive 'x = seeks * 2': no row of this sweep is taken by it");
    let mut args = base.to_vec();
    args.extend(["--derive", "x = write + 2"]);
    assert_usage_error(&sb.run(&args), "NAME = ROWS * FACTOR");
}

#[test]
fn several_systems_as_rows_and_the_sweep_over_their_average() {
    let sb = Sandbox::new();
    let mut figs = BTreeMap::new();
    for cache in ["1", "2"] {
        for cluster in ["a", "b"] {
            let id = iozone_run(&sb, &[&format!("cache={cache}"), &format!("cluster={cluster}")], "64k");
            figs.insert((cache, cluster), figures(&sb, id));
        }
    }
    let doc = json_of(&sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--rows", "cluster", "--json"]));
    assert_eq!(doc["rows_by"], "cluster");
    let systems = doc["systems"].as_array().unwrap();
    assert_eq!(systems.len(), 8, "4 cells for each of 2 clusters");
    assert!(systems.iter().any(|r| r["cell"].as_str().unwrap().ends_with("cluster=b")));
    let rows = doc["sweep"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "the average rows");
    for row in rows {
        let name = row["cell"].as_str().unwrap();
        let key = figs[&("1", "a")]
            .keys()
            .find(|k| name == format!("{} 64k/{}", k.0, if k.2 == 4096 { "4k" } else { "64k" }))
            .unwrap()
            .clone();
        for (i, cache) in ["1", "2"].iter().enumerate() {
            let mean = f64::midpoint(figs[&(*cache, "a")][&key], figs[&(*cache, "b")][&key]);
            assert!(close(row["values"][i].as_f64().unwrap(), mean), "{name} at {cache}");
        }
    }
    let (stdout, _) = text(&sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--rows", "cluster"]));
    assert!(stdout.starts_with("each cluster apart") && stdout.contains("the average over each cluster"), "{stdout}");
    assert_usage_error(
        &sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--rows", "site"]),
        "has no label site",
    );
}

/// A file-server load's cells are named by their size mix in a sweep too, never by the largest size,
/// which is what each cell stores as its file size.
#[test]
fn a_size_mix_names_the_sweeps_rows() {
    let sb = Sandbox::new();
    for interleave in ["1", "2"] {
        fileserver_mix_run(&sb, interleave, &format!("interleave={interleave}"));
    }
    let (stdout, _) = text(&sb.run(&["sweep", "interleave=1", "interleave=2", "--by", "interleave"]));
    assert!(stdout.contains("write 4k..1m (3 sizes)/4k"), "{stdout}");
    assert!(stdout.contains("read 4k..1m (3 sizes)/4k"), "{stdout}");
    assert!(!stdout.contains("1m/4k"), "never named by one of its sizes: {stdout}");
}
