//! Many clients on one host (threads): each in its own folder, all starting
//! every cell together, the aggregates adding up, hooks run per client, and
//! a failing client reported without stopping the others under `continue`.

use crate::helpers::*;
use serde_json::Value;

/// Every client left the start barrier after the last one arrived.
pub fn assert_barrier_held(cell: &Value, clients: usize) {
    let starts = cell["metrics"]["start_barrier"].as_array().expect("start_barrier stored");
    assert_eq!(starts.len(), clients, "{cell}");
    let last_arrival = starts.iter().map(|s| s["arrived_unix_ns"].as_u64().unwrap()).max().unwrap();
    let first_release = starts.iter().map(|s| s["left_unix_ns"].as_u64().unwrap()).min().unwrap();
    assert!(last_arrival > 0 && first_release >= last_arrival, "a client started before all arrived: {starts:?}");
}

#[test]
fn iozone_clients_start_together_and_the_aggregates_add_up() {
    let Some(tmpfs) = Mount::virtual_fs("tmpfs", "size=256m") else { return };
    let sb = Sandbox::new();
    let target = tmpfs.point.to_str().unwrap();
    let args = ["run", "iozone", "--target", target, "--files", "4m", "--records", "64k", "--tests", "write,read"];
    assert_success(&sb.run(&[&args[..], &["--clients", "4"]].concat()));
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_barrier_held(c, 4);
        let figures = c["client_figures"].as_array().unwrap();
        assert_eq!(figures.len(), 4);
        let rate = |f: &Value| {
            let m = &f["measured"];
            let ns = m["end_ns"].as_u64().unwrap() - m["start_ns"].as_u64().unwrap();
            f["moved"]["bytes"].as_f64().unwrap() / 1024.0 / (ns as f64 / 1e9)
        };
        let sum: f64 = figures.iter().map(rate).sum();
        let stored = c["kib_per_sec"].as_f64().unwrap();
        assert!((stored - sum).abs() <= 1e-6 * sum, "aggregate {stored} is not the sum of the clients' {sum}");
        let bytes = c["bytes"].as_u64().unwrap();
        assert_eq!(bytes, 4 * 4 * 1024 * 1024, "every client moved its whole file");
        let overall = c["metrics"]["kib_per_sec_overall"].as_f64().unwrap();
        let wall = c["wall_ns"].as_u64().unwrap() as f64 / 1e9;
        assert!((overall - bytes as f64 / 1024.0 / wall).abs() <= 1e-6 * overall, "{c}");
        // Stonewalled: cut at the first finish, so never more bytes than all of them.
        let stonewalled = c["metrics"]["kib_per_sec_stonewalled"].as_f64().unwrap();
        // The stonewalled rate runs from the first client's start to the first finish (both on the
        // cell's clock): taking the finish alone as the time overstated it by the start's offset.
        let start = figures.iter().map(|f| f["measured"]["start_ns"].as_u64().unwrap()).min().unwrap();
        let first = (c["metrics"]["first_finish_ns"].as_u64().unwrap() - start) as f64 / 1e9;
        assert!(stonewalled > 0.0 && first > 0.0 && first <= wall, "{c}");
        assert!(stonewalled * first <= bytes as f64 / 1024.0 * 1.000001, "{c}");
    }
    assert!(leftovers(&tmpfs.point).is_empty());
}

#[test]
fn hooks_run_in_each_clients_folder_with_its_rank() {
    let sb = Sandbox::new();
    sb.iozone_ok(&[
        "--files",
        "64k",
        "--records",
        "64k",
        "--tests",
        "write",
        "--clients",
        "3",
        "--keep",
        "--before",
        "echo \"$IOMATRIX_RANK/$IOMATRIX_CLIENTS\" > before.txt",
        "--after",
        "pwd > after.txt",
    ]);
    let workdir = sb.leftovers().pop().expect("kept working folder");
    for rank in 0..3 {
        let dir = workdir.join(format!("client-{rank}"));
        assert_eq!(std::fs::read_to_string(dir.join("before.txt")).unwrap().trim(), format!("{rank}/3"));
        let after = std::fs::read_to_string(dir.join("after.txt")).unwrap();
        assert_eq!(std::path::Path::new(after.trim()).canonicalize().unwrap(), dir.canonicalize().unwrap());
    }
}

/// `run iozone` of 256k files and 64k records, write then read, plus `extra`.
pub fn small_iozone<'a>(target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let base = ["run", "iozone", "--target", target, "--files", "256k", "--records", "64k", "--tests", "write,read"];
    [&base[..], extra].concat()
}

/// Client 1 finds a folder where its data file should be: every open fails (EISDIR).
const BREAK_CLIENT_1: &str = "if [ \"$IOMATRIX_RANK\" = 1 ]; then mkdir iozone.tmp; fi";

#[test]
fn a_failing_client_is_recorded_and_the_others_go_on_under_continue() {
    let sb = Sandbox::new();
    let target = sb.target();
    let extra = ["--clients", "3", "--before", BREAK_CLIENT_1, "--on-client-error", "continue"];
    let out = sb.run(&small_iozone(target.to_str().unwrap(), &extra));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "every cell ran, some clients failed: {stderr}");
    assert!(stderr.contains("client 1") && stderr.contains("iozone.tmp"), "{stderr}");
    let run = sb.last_run();
    // Every cell ran, none whole: the run is partial, never complete.
    assert_eq!(run["run"]["status"], "partial");
    let cells = cells(&run);
    assert_eq!(cells.len(), 2);
    for c in &cells {
        let ranks: Vec<u64> =
            c["client_figures"].as_array().unwrap().iter().map(|f| f["rank"].as_u64().unwrap()).collect();
        assert_eq!(ranks, [0, 2], "the others' figures are kept");
        let failed = c["metrics"]["failed_clients"].as_array().unwrap();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0]["rank"], 1);
        assert!(failed[0]["message"].as_str().unwrap().contains("Is a directory"), "{failed:?}");
        assert_eq!(c["metrics"]["lost_bytes"], 256 * 1024);
        assert_eq!(c["bytes"].as_u64().unwrap(), 2 * 256 * 1024);
    }
}

#[test]
fn a_failing_client_ends_the_run_under_abort() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&small_iozone(target.to_str().unwrap(), &["--clients", "3", "--before", BREAK_CLIENT_1]));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("client 1:") && stderr.contains("Is a directory"), "{stderr}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    assert!(cells(&run).is_empty(), "the failed cell is not kept as a result");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn access_clients_start_together_and_a_failed_client_is_counted() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k,16k",
        "--bytes",
        "256k",
        "--file-size",
        "1m",
        "--clients",
        "3",
        "--before",
        "if [ \"$IOMATRIX_RANK\" = 2 ]; then mkdir access.dat; fi",
        "--on-client-error",
        "continue",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    let run = sb.last_run();
    for c in cells(&run) {
        assert_barrier_held(&c, 3);
        assert_eq!(c["client_figures"].as_array().unwrap().len(), 2);
        assert_eq!(c["metrics"]["failed_clients"][0]["rank"], 2);
        assert_eq!(c["bytes"].as_u64().unwrap(), 2 * 256 * 1024);
    }
}

#[test]
fn bad_client_flags_are_usage_errors() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "iozone", "--target", t, "--files", "64k"];
        args.extend_from_slice(extra);
        sb.run(&args)
    };
    assert_usage_error(&run(&["--on-client-error", "retry"]), "--on-client-error");
    assert_usage_error(&run(&["--before", " "]), "--before is empty");
    assert_usage_error(&run(&["--client-timeout", "0s"]), "--client-timeout");
    assert_usage_error(&run(&["--clients", "0"]), "--clients 0");
}
