//! Issue 34: `--exclude CELL` leaves a cell out of the means and says so, as seed 000's author
//! left the backward-read outlier at 512K/64K "out of the averaging".
use crate::helpers::*;
use crate::stored::*;

fn golden() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::copy(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/results.sqlite"), sb.db())
        .unwrap();
    sb
}

#[test]
fn compare_exclude_leaves_a_cell_out_of_the_views_overall_and_region_and_names_it() {
    let sb = golden();
    // IOzone runs 1 and 6: read, write and random-read over files 64k,256k and records 4k,64k.
    let base = ["compare", "1", "6", "--files", "..64k", "--records", "4k.."];
    let with_json = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        a.push("--json");
        json_of(&sb.run(&a))
    };
    let read = |doc: &serde_json::Value| {
        doc["comparison"]["matrices"].as_array().unwrap().iter().find(|m| m["test"] == "read").unwrap().clone()
    };
    let all = read(&with_json(&[]));
    let left = read(&with_json(&["--exclude", "read 64k/4k"]));
    let ratio = |m: &serde_json::Value, i: usize, j: usize| m["ratios"][i][j].as_f64().unwrap();
    assert_eq!(left["ratios"], all["ratios"], "the ratio stands in the matrix");
    assert_eq!(left["overall"]["cells"], 3);
    let rest = (ratio(&all, 0, 1) + ratio(&all, 1, 0) + ratio(&all, 1, 1)) / 3.0;
    assert!(close(left["overall"]["mean_change_pct"].as_f64().unwrap(), (rest - 1.0) * 100.0), "{left}");
    // The region (files up to 64k) held 64k/4k and 64k/64k: now 64k/64k alone.
    assert_eq!(all["region"]["cells"], 2);
    assert_eq!(left["region"]["cells"], 1);
    assert!(close(left["region"]["mean_change_pct"].as_f64().unwrap(), (ratio(&all, 0, 1) - 1.0) * 100.0));
    // The record-size view's 4k column and the file-size view's 64k row are the other cell alone.
    assert!(close(left["by_record"][0][1].as_f64().unwrap(), ratio(&all, 1, 0)), "{left}");
    assert!(close(left["by_file"][0][1].as_f64().unwrap(), ratio(&all, 0, 1)), "{left}");
    assert_eq!(left["excluded"], serde_json::json!(["read 64k/4k"]));
    let mut args = base.to_vec();
    args.extend(["--exclude", "read 64k/4k"]);
    let (stdout, _) = text(&sb.run(&args));
    assert!(stdout.contains("left out of every mean here (--exclude; their ratios stand above): read 64k/4k"));
    assert!(stdout.contains("overall: mean change") && stdout.contains("over 3 cells"), "{stdout}");
    let mut args = base.to_vec();
    args.extend(["--exclude", "read 1g/4k"]);
    assert_usage_error(&sb.run(&args), "--exclude read 1g/4k: no cell of the compared matrices");
    // Bonnie's figures are rows, not a matrix: nothing has means a cell could be left out of.
    assert_usage_error(&sb.run(&["compare", "3", "8", "--exclude", "write 2m/8k"]), "has no matrix");
}

#[test]
fn sweep_exclude_leaves_a_row_out_of_the_summaries_and_names_it() {
    let sb = golden();
    let all = json_of(&sb.run(&["sweep", "--by", "sys", "1", "6", "--json"]));
    let left = json_of(&sb.run(&["sweep", "--by", "sys", "1", "6", "--exclude", "read 64k/4k", "--json"]));
    let (all, left) = (&all["sweep"], &left["sweep"]);
    assert_eq!(left["rows"].as_array().unwrap().len(), all["rows"].as_array().unwrap().len(), "still shown");
    let reads = |s: &serde_json::Value| {
        s["directions"].as_array().unwrap().iter().find(|d| d["direction"] == "read").unwrap()["rows"].as_u64().unwrap()
    };
    assert_eq!(reads(left), reads(all) - 1);
    let kept: Vec<f64> = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["cell"] != "read 64k/4k")
        .map(|r| r["first_to_last_pct"].as_f64().unwrap())
        .collect();
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    assert!(close(left["average_first_to_last_pct"].as_f64().unwrap(), mean), "{left}");
    assert_eq!(left["excluded"], serde_json::json!(["read 64k/4k"]));
    // The read/write ratio of 64k/4k has no read left to pair.
    let blocks = |s: &serde_json::Value| s["read_write_by_block"].as_array().unwrap().len();
    assert_eq!(blocks(left), blocks(all) - 1);
    let (stdout, _) = text(&sb.run(&["sweep", "--by", "sys", "1", "6", "--exclude", "read 64k/4k"]));
    assert!(stdout.contains("Left out of every summary below at the user's word (--exclude"), "{stdout}");
    assert_usage_error(
        &sb.run(&["sweep", "--by", "sys", "1", "6", "--exclude", "read 9m/4k"]),
        "--exclude read 9m/4k: no row of this sweep",
    );
}
