//! Bonnie through both front ends: bonnie++'s flags and `run bonnie`.
use crate::helpers::*;
use serde_json::Value;

fn by_test<'a>(cells: &'a [Value], test: &str) -> Vec<&'a Value> {
    cells.iter().filter(|c| c["test"] == test).collect()
}

#[test]
fn bonnie_flags_run_every_test_and_print_bonnies_report() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out =
        sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "32", "-r", "16", "-n", "1", "-x", "2", "-m", "vmfs"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("------Sequential Output------"), "{stdout}");
    assert!(stdout.contains("vmfs") || stdout.contains("Machine"), "{stdout}");
    let run = sb.last_run();
    assert_eq!(run["run"]["suite"], "bonnie");
    let cells = cells(&run);
    assert_eq!(cells.len(), 12 * 2, "12 tests, twice");
    for c in &cells {
        assert!(c["metrics"]["per_sec"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["wall_ns"].as_u64().unwrap() > 0);
    }
    // One call per byte in the per-char tests; the block tests move the file.
    for test in ["putc", "getc"] {
        for c in by_test(&cells, test) {
            assert_eq!(c["ops"], 32u64 << 20, "{test}: one call per byte");
        }
    }
    for test in ["write", "read", "rewrite"] {
        for c in by_test(&cells, test) {
            assert_eq!(c["bytes"], 32u64 << 20, "{test}");
        }
    }
    for c in by_test(&cells, "seeks") {
        assert_eq!(c["ops"], 8192);
        assert_eq!(c["metrics"]["writes"], 8192 / 10 + 1, "one seek in ten writes back (tickets 0, 10, ...)");
    }
    for c in by_test(&cells, "seq-create").into_iter().chain(by_test(&cells, "random-delete")) {
        assert_eq!(c["ops"], 1024);
    }
    assert_eq!(run["run"]["labels"], serde_json::json!([["machine", "vmfs"]]));
    assert!(sb.leftovers().is_empty());
    // `show` prints the same report again from the store.
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    assert!(text(&sb.run(&["show", &id])).0.contains("------Sequential Output------"));
}

#[test]
fn a_file_below_twice_the_ram_is_refused_with_the_reason() {
    let sb = Sandbox::new();
    let target = sb.target();
    // Seed 002's line as given: 1 GiB on a machine with more than 512 MiB of RAM.
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "1024"]);
    assert_usage_error(&out, "less than twice the RAM");
    let out = sb.run(&["run", "bonnie", "--target", target.to_str().unwrap(), "--size", "1g"]);
    assert_usage_error(&out, "page cache would serve the reads");
    assert_usage_error(&sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "64", "-Q"]), "'-Q'");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn run_bonnie_fast_on_loop_mounted_ext4_and_xfs() {
    for fstype in ["ext4", "xfs"] {
        let Some(fs) = Mount::image(fstype, 300) else { continue };
        let sb = Sandbox::new();
        let out = sb.run(&[
            "run",
            "bonnie",
            "--target",
            fs.point.to_str().unwrap(),
            "--size",
            "64m",
            "--ram",
            "32m",
            "--files",
            "1",
            "--fast",
            "--direct",
            "--json",
        ]);
        assert_success(&out);
        let run: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(run["run"]["environment"]["target"]["fs_type"], fstype);
        let cells = cells(&run);
        let tests: Vec<&str> = cells.iter().map(|c| c["test"].as_str().unwrap()).collect();
        assert!(!tests.contains(&"putc") && !tests.contains(&"getc"), "--fast skips per-char: {tests:?}");
        assert_eq!(cells.len(), 10);
        assert!(cells.iter().all(|c| c["metrics"]["per_sec"].as_f64().unwrap() > 0.0));
        assert!(by_test(&cells, "write")[0]["direct"].as_bool().unwrap());
        assert!(!by_test(&cells, "seq-create")[0]["direct"].as_bool().unwrap());
        assert!(leftovers(&fs.point).is_empty());
    }
}
