//! The results database round-trips runs; `runs` and `show` read them back.
use crate::helpers::*;

#[test]
fn a_run_round_trips_through_the_database() {
    let sb = Sandbox::new();
    let out = sb.iozone_ok(&[
        "--files",
        "64k,256k",
        "--records",
        "4k,64k",
        "--tests",
        "write,read",
        "--label",
        "fs=tmp",
        "--label",
        "try=1",
    ]);
    let printed = text(&out).0;
    let runs = sb.runs_json();
    assert_eq!(runs["schema"], "iomatrix.runs/1");
    let list = runs["runs"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    let summary = &list[0];
    assert_eq!(summary["status"], "complete");
    assert_eq!(summary["suite"], "iozone");
    assert_eq!(summary["cells"], 8);
    assert_eq!(summary["total_cells"], 8);
    assert!(summary["command_line"].as_str().unwrap().contains("--label fs=tmp"));
    assert_eq!(summary["labels"], serde_json::json!([["fs", "tmp"], ["try", "1"]]));

    let id = summary["id"].as_i64().unwrap();
    let run = sb.show_json(id);
    assert_eq!(run["schema"], "iomatrix.run/1");
    let env = &run["run"]["environment"];
    for key in ["host", "kernel", "cpu_model", "cpu_count", "ram_bytes"] {
        assert!(!env[key].is_null(), "environment lacks {key}");
    }
    assert!(env["target"]["fs_type"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(env["target"]["mount_options"].as_str().is_some());
    assert_eq!(run["run"]["conditions"]["direct"], false);
    assert_eq!(cells(&run).len(), 8);

    // `show` prints what `run` printed before its summary.
    let shown = text(&sb.run(&["show", &id.to_string()])).0;
    assert_eq!(shown.trim_end_matches('\n'), before_summary(&printed));
    assert!(printed[shown.len()..].starts_with("\nsummary of run #1 (iozone, complete):"), "{printed}");
    let listed = text(&sb.run(&["runs"])).0;
    assert!(listed.contains("complete") && listed.contains("fs=tmp try=1"), "{listed}");
    // A second run adds to the database; the first is untouched.
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), 2);
    assert_eq!(sb.show_json(id), run);
}

#[test]
fn showing_a_missing_run_is_a_usage_error() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["show", "42"]), "no run #42");
}
