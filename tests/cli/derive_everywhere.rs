//! Issue 34: `--derive` per system with `sweep --rows` (not only the average row), and on
//! `compare` (seed 003's backup window: the week's data over the backup's throughput, 12 h to 2 h).
use crate::helpers::*;
use crate::stored::*;

#[test]
fn sweep_rows_derive_one_row_per_system_and_one_for_their_average() {
    let sb = Sandbox::new();
    for cache in ["1", "2"] {
        for cluster in ["a", "b"] {
            iozone_run(&sb, &[&format!("cache={cache}"), &format!("cluster={cluster}")], "64k");
        }
    }
    let args = ["sweep", "cache=1", "cache=2", "--by", "cache", "--rows", "cluster", "--derive", "disk = write * 2"];
    let mut json = args.to_vec();
    json.push("--json");
    let doc = json_of(&sb.run(&json));
    let derived = doc["derived"][0]["rows"].as_array().unwrap();
    let systems = doc["systems"].as_array().unwrap();
    // Each system's write rows (2 record sizes x 2 clusters), then the 2 average rows.
    assert_eq!(derived.len(), 6, "{derived:?}");
    for r in derived {
        let cell = r["cell"].as_str().unwrap();
        let from = cell.trim_start_matches("disk (from ").split(" (the mean").next().unwrap().trim_end_matches(')');
        let measured = if cell.contains("(the mean over each cluster)") {
            doc["sweep"]["rows"].as_array().unwrap().iter().find(|s| s["cell"] == from).unwrap()
        } else {
            systems.iter().find(|s| s["cell"] == from).unwrap_or_else(|| panic!("{from} among {systems:?}"))
        };
        for (d, m) in r["values"].as_array().unwrap().iter().zip(measured["values"].as_array().unwrap()) {
            assert!(close(d.as_f64().unwrap(), m.as_f64().unwrap() * 2.0), "{cell}");
        }
    }
    for cluster in ["a", "b"] {
        assert!(derived.iter().any(|r| r["cell"].as_str().unwrap().ends_with(&format!("cluster={cluster})"))));
    }
    let (stdout, _) = text(&sb.run(&args));
    assert!(stdout.contains("Derived, not measured (nothing stored): disk = write * 2"), "{stdout}");
    assert!(stdout.contains("cluster=a)") && stdout.contains("(the mean over each cluster)"), "{stdout}");
}

#[test]
fn compare_derives_seed_003s_backup_window_from_each_sides_throughput() {
    // Two real backup walks of one small tree: the window is 200 GB (in KB) over the rate, in
    // hours: 209715200 / 3600 = 58254.2 KB*h/s.
    let sb = Sandbox::new();
    let tree = sb.target();
    for i in 0..20 {
        std::fs::write(tree.join(format!("f{i}")), vec![i as u8; 64 * 1024]).unwrap();
    }
    for side in ["nodelalloc", "delalloc"] {
        let label = format!("alloc={side}");
        assert_success(&sb.run(&["run", "backup", "--target", tree.to_str().unwrap(), "--warm", "--label", &label]));
    }
    let formula = "window_hours = 58254.2 / backup";
    let doc = json_of(&sb.run(&["compare", "alloc=nodelalloc", "alloc=delalloc", "--derive", formula, "--json"]));
    let measured = doc["comparison"]["scalars"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "backup" && r["unit"] == "KB/s")
        .unwrap_or_else(|| panic!("{doc}"))
        .clone();
    let d = &doc["derived"][0];
    assert_eq!(d["derived"], true);
    assert_eq!(d["formula"], formula);
    let row = d["rows"].as_array().unwrap().iter().find(|r| r["cell"] == "window_hours (from backup (KB/s))").unwrap();
    for (i, side) in ["a", "b"].iter().enumerate() {
        let want = 58254.2 / measured[side].as_f64().unwrap();
        assert!(close(row["values"][i].as_f64().unwrap(), want), "{row}");
    }
    let (stdout, _) = text(&sb.run(&["compare", "alloc=nodelalloc", "alloc=delalloc", "--derive", formula]));
    assert!(stdout.contains(&format!("Derived, not measured (nothing stored): {formula}")), "{stdout}");
    // A formula that takes no row is refused, naming the rows there are; nothing is stored.
    let out = sb.run(&["compare", "alloc=nodelalloc", "alloc=delalloc", "--derive", "x = 2 / seeks"]);
    assert_usage_error(&out, "no compared row is named so");
    assert_eq!(sb.runs_json()["runs"].as_array().map(Vec::len), Some(2));
}
