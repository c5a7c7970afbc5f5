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

#[test]
fn run_bonnie_from_three_clients_starts_every_test_together() {
    // tmpfs where we may mount it, else the system's temporary folder.
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=128m").ok();
    let sb = Sandbox::new();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let t = target.to_str().unwrap();
    let args =
        ["run", "bonnie", "--target", t, "--size", "4m", "--ram", "2m", "--files", "1", "--clients", "3", "--keep"];
    assert_success(&sb.run(&args));
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    let cells = cells(&run);
    assert_eq!(cells.len(), 12);
    for c in &cells {
        crate::clients::assert_barrier_held(c, 3);
        let figures = c["client_figures"].as_array().unwrap();
        assert_eq!(figures.len(), 3);
        let sum = |key: &str| figures.iter().map(|f| f[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(c["ops"].as_u64(), Some(sum("ops")), "{}", c["test"]);
        assert_eq!(c["bytes"].as_u64(), Some(sum("bytes")), "{}", c["test"]);
        let rates: f64 = figures.iter().map(|f| f["per_sec"].as_f64().unwrap()).sum();
        let m = &c["metrics"];
        assert!((m["per_sec"].as_f64().unwrap() - rates).abs() <= 1e-9 * rates && rates > 0.0, "{m}");
        assert_eq!(m["per_sec_sum_of_clients"], m["per_sec"]);
        // Overall: all work over the common start to the last client's end, never above the sum.
        let last_end = figures.iter().map(|f| f["end_ns"].as_u64().unwrap()).max().unwrap();
        assert_eq!(c["wall_ns"].as_u64(), Some(last_end));
        assert!(m["per_sec_overall"].as_f64().unwrap() <= rates * 1.000001, "{m}");
    }
    for c in by_test(&cells, "write") {
        assert_eq!(c["bytes"].as_u64(), Some(3 * (4 << 20)), "three files of 4 MiB");
    }
    // Each client worked in its own folder (kept, and emptied by its last tests).
    let workdir = leftovers(&target).pop().expect("kept working folder");
    for rank in 0..3 {
        assert!(workdir.join(format!("client-{rank}")).is_dir());
    }
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    assert!(stdout.contains("sum of the clients' own rates") && stdout.contains("slowest client"), "{stdout}");
    std::fs::remove_dir_all(workdir).unwrap();
}

#[test]
fn a_failing_bonnie_client_is_counted_and_the_others_go_on() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let hook = "if [ \"$IOMATRIX_RANK\" = 1 ]; then mkdir bonnie.dat; fi";
    let args =
        ["run", "bonnie", "--target", t, "--size", "2m", "--ram", "1m", "--files", "0", "--fast", "--clients", "2"];
    let out = sb.run(&[&args[..], &["--before", hook, "--on-client-error", "continue"]].concat());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    assert!(text(&out).1.contains("Is a directory"), "{}", text(&out).1);
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 4, "block write, rewrite, block read, seeks");
    for c in &cells {
        assert_eq!(c["client_figures"].as_array().unwrap().len(), 1);
        assert_eq!(c["metrics"]["failed_clients"][0]["rank"], 1);
    }
    // Abort (the default) ends the run at the first failure.
    let out = sb.run(&[&args[..], &["--before", hook]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out).1);
    assert!(sb.leftovers().is_empty());
}
