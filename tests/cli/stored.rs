//! Stored runs for the tests that read them back (compare, sweep, import): a small real IOzone
//! run, its figures, a command's JSON, and float equality to rounding.

use crate::helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// A small real IOzone run labelled `labels`; returns its id.
pub fn iozone_run(sb: &Sandbox, labels: &[&str], files: &str) -> i64 {
    let target = sb.target();
    let mut args = vec![
        "run",
        "iozone",
        "--target",
        target.to_str().unwrap(),
        "--files",
        files,
        "--records",
        "4k,64k",
        "--tests",
        "write,read",
    ];
    for l in labels {
        args.extend(["--label", l]);
    }
    assert_success(&sb.run(&args));
    sb.last_run()["run"]["id"].as_i64().unwrap()
}

/// (test, file, record) -> KB/s of a stored run.
pub fn figures(sb: &Sandbox, id: i64) -> BTreeMap<(String, u64, u64), f64> {
    let out = sb.run(&["show", &id.to_string(), "--json"]);
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    cells(&run)
        .iter()
        .map(|c| {
            let key = (
                c["test"].as_str().unwrap().to_string(),
                c["file_size"].as_u64().unwrap(),
                c["record_size"].as_u64().unwrap(),
            );
            (key, c["kib_per_sec"].as_f64().unwrap())
        })
        .collect()
}

pub fn json_of(out: &std::process::Output) -> Value {
    assert_success(out);
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A small real file-server load over a 4k..1m size mix at `interleave`, labelled `label`.
pub fn fileserver_mix_run(sb: &Sandbox, interleave: &str, label: &str) {
    let target = sb.target();
    assert_success(&sb.run(&[
        "run",
        "fileserver",
        "--target",
        target.to_str().unwrap(),
        "--connections",
        "2",
        "--files-per-connection",
        "6",
        "--sizes",
        "4k,64k,1m",
        "--interleave",
        interleave,
        "--label",
        label,
    ]));
}
