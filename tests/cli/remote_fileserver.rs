//! The file-server load (seed 003) on real servers (nfs-ganesha and Samba
//! in a network namespace, started by `lab/up`) through iomatrix's own NFSv3
//! and SMB clients: each connection a session of its own, every operation
//! counted, nothing left on the server; a server killed mid-phase is
//! reported as failed connections and lost samples, within the call
//! timeout. Skipped with a message where the lab cannot run (not root).

use crate::helpers::*;
use crate::lab_fixture::{left_behind, Lab, Shared};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const OPS: [&str; 6] = ["create", "open", "write", "read", "fsync", "close"];

fn op(v: &Value, op: &str) -> u64 {
    v[op].as_u64().unwrap_or(0)
}

/// Every operation planned was done, and timed once: per phase and per type.
fn check_every_operation_done(run: &Value, phases: usize) -> Vec<Value> {
    let stored = cells(run);
    assert_eq!(stored.len(), phases, "{run}");
    for cell in &stored {
        let m = &cell["metrics"];
        assert_eq!(m["planned"], m["done"], "{}: {m}", cell["test"]);
        assert_eq!(m["lost_samples"], 0);
        assert_eq!(m["connections_failed"], 0);
        assert!(m["errors"].as_object().unwrap().is_empty(), "{}", m["errors"]);
        for o in OPS {
            assert_eq!(
                op(&m["ops"][o], "count"),
                op(&m["done"]["ops"], o),
                "{}: {o} timed as often as done",
                cell["test"]
            );
        }
    }
    stored
}

fn run_with_password(sb: &Sandbox, args: &[&str], password_file: &str) -> Output {
    sb.cmd().args(args).env("IOMATRIX_SMB_PASSWORD_FILE", password_file).output().unwrap()
}

#[test]
fn the_load_runs_through_the_built_in_nfs_client_every_operation_counted() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let base = ["run", "fileserver", "--target", &nfs, "--connections", "4", "--files-per-connection", "5"];
    let out = sb.run(&[&base[..], &["--sizes", "4k,8k,16k,32k,64k", "--record", "4k", "--fsync-every", "4"]].concat());
    assert_success(&out);
    let run = sb.last_run();
    let c = &run["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], "NFS", "{c}");
    assert_eq!(c["remote"]["version"], "3");
    assert!(c["cache"].as_str().unwrap().starts_with("no client cache"), "{c}");
    assert_eq!(c["backend"], "iomatrix protocol client");
    let stored = check_every_operation_done(&run, 2);
    let (w, r) = (&stored[0]["metrics"], &stored[1]["metrics"]);
    // 4 connections x (1 + 2 + 4 + 8 + 16) records of 4k; one fsync per 4 records and after each file's last.
    assert_eq!(op(&w["done"]["ops"], "create"), 20);
    assert_eq!(op(&w["done"]["ops"], "write"), 4 * 31);
    assert_eq!(op(&w["done"]["ops"], "fsync"), 4 * (1 + 1 + 1 + 2 + 4));
    assert_eq!(op(&r["done"]["ops"], "read"), 4 * 31);
    assert_eq!(op(&r["done"]["ops"], "open"), 20);
    // Bytes written equal bytes read back (the reads fail on a short file).
    assert_eq!(stored[0]["bytes"], 4 * 124 * 1024);
    assert_eq!(stored[0]["bytes"], stored[1]["bytes"]);
    assert_eq!(stored[0]["backend"], "nfs");
    // Each connection connected its own session before the write phase, untimed, and it is recorded.
    let conns = stored[0]["client_figures"].as_array().unwrap();
    assert_eq!(conns.len(), 4);
    assert!(conns.iter().all(|c| c["setup_ns"].as_u64().unwrap_or(0) > 0), "{conns:?}");
    assert_eq!(w["setup"]["connections"], 4);
    assert!(text(&out).0.contains("Sessions connected, untimed"), "{}", text(&out).0);
    assert!(left_behind(&state).is_empty(), "the working folder stays on the server: {:?}", left_behind(&state));

    // Two clients, each with its connections, a mixed phase and files growing two at a time.
    let out =
        sb.run(&[&base[..], &["--sizes", "4k,12k", "--mix", "50", "--interleave", "2", "--clients", "2"]].concat());
    assert_success(&out);
    let run = sb.last_run();
    let stored = check_every_operation_done(&run, 2);
    assert_eq!(stored[1]["test"], "mix");
    for cell in &stored {
        assert_eq!(cell["metrics"]["clients"].as_array().unwrap().len(), 2);
        assert_eq!(cell["metrics"]["connections_ok"], 8);
    }
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));

    // No client cache to drop, and the server's cannot be dropped from here.
    assert_usage_error(&sb.run(&[&base[..], &["--drop-caches"]].concat()), "--drop-caches: iomatrix's own protocol");
}

#[test]
fn the_load_runs_through_the_built_in_smb_client_and_bad_credentials_are_named() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let smb = lab.var("IOMATRIX_LAB_SMB").to_string();
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    // Tiny: SMB requests through the smb crate wait ~45 ms each here (see README).
    let args = ["run", "fileserver", "--target", &smb, "--connections", "3", "--files-per-connection", "3"];
    let args = [&args[..], &["--sizes", "4k,8k,16k", "--fsync-every", "2"]].concat();
    let out = run_with_password(&sb, &args, &password_file);
    assert_success(&out);
    let run = sb.last_run();
    let c = &run["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], "SMB", "{c}");
    assert!(c["remote"]["version"].as_str().unwrap().starts_with("Smb"), "{c}");
    assert!(c["cache"].as_str().unwrap().starts_with("no client cache"), "{c}");
    let stored = check_every_operation_done(&run, 2);
    assert_eq!(op(&stored[0]["metrics"]["done"]["ops"], "write"), 3 * (1 + 2 + 4));
    assert_eq!(op(&stored[0]["metrics"]["done"]["ops"], "fsync"), 3 * (1 + 1 + 2));
    assert_eq!(op(&stored[1]["metrics"]["done"]["ops"], "read"), 3 * (1 + 2 + 4));
    assert_eq!(stored[0]["bytes"], 3 * 28 * 1024);
    assert_eq!(stored[0]["bytes"], stored[1]["bytes"]);
    assert_eq!(stored[0]["backend"], "smb");
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));
    // A wrong password: named, exit 2, nothing stored.
    let runs = sb.runs_json()["runs"].as_array().unwrap().len();
    let out = sb.cmd().args(&args).env("IOMATRIX_SMB_PASSWORD", "wrong").output().unwrap();
    assert_usage_error(&out, "connecting to share");
    assert_usage_error(
        &run_with_password(&sb, &[&args[..], &["--drop-caches"]].concat(), &password_file),
        "--drop-caches",
    );
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs);
}

/// Starts a load of 3 connections that lasts several seconds, kills the
/// server's whole process group mid-write-phase, and checks what was kept.
fn server_killed_mid_phase(sb: &Sandbox, mut cmd: Command, server_pid: i32, server: &str) {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let begun = Instant::now();
    // Connecting and the first files take about a second; the write phase lasts several more.
    std::thread::sleep(Duration::from_millis(3500));
    // SAFETY: kill(2) on the process group the lab's server leads (its children serve the
    // connections); no memory involved.
    assert_eq!(unsafe { libc::kill(-server_pid, libc::SIGKILL) }, 0);
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(begun.elapsed() < Duration::from_secs(90), "bounded by the 30 s call timeout");
    // Under --on-client-error continue every phase ran (the read phase with no connection left),
    // each stored with every connection failed: nothing was measured whole, the run failed (exit 3: its connections failed).
    // (Under abort the first failed connection ends it.)
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("3 connection(s) failed"), "{stderr}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    for c in cells(&run) {
        assert_eq!(c["state"], serde_json::json!({"kind": "failed", "ok": 0, "of": 3, "parts": "connections"}));
    }
    let stored = cells(&run);
    assert_eq!(stored.len(), 2);
    let w = &stored[0]["metrics"];
    assert_eq!(w["connections_failed"], 3, "{w}");
    assert_eq!(w["errors"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum::<u64>(), 3);
    assert!(w["lost_samples"].as_u64().unwrap() > 0);
    // What finished before the kill is kept: done + lost = planned, operation by operation.
    assert!(w["done"]["files"].as_u64().unwrap() >= 1, "{w}");
    for o in OPS {
        assert_eq!(op(&w["planned"]["ops"], o), op(&w["done"]["ops"], o) + op(&w["lost"]["ops"], o), "{o}");
        assert_eq!(op(&w["ops"][o], "count"), op(&w["done"]["ops"], o), "{o}: timed as often as done");
    }
    // Each failure names the server and the operation.
    for c in stored[0]["client_figures"].as_array().unwrap() {
        let message = c["error"]["message"].as_str().unwrap();
        assert!(message.contains(server), "{message}");
    }
    let r = &stored[1]["metrics"];
    assert_eq!(r["connections_skipped"], 3);
    assert_eq!(r["lost"], r["planned"]);
    assert!(stdout.contains("Lost samples") && stdout.contains("3 failed"), "{stdout}");
}

#[test]
fn stopping_smbd_mid_run_is_reported_as_lost_samples() {
    let Some(lab) = Lab::up(&["--link", "100mbit", "smb"]) else { return };
    let smb = lab.var("IOMATRIX_LAB_SMB").to_string();
    let pid: i32 = lab.var("IOMATRIX_LAB_SMBD_PID").parse().unwrap();
    let sb = Sandbox::new();
    let mut cmd = sb.cmd();
    // 3 x 40 files of 1m over 100 Mbit/s: about 10 s of writing, far more than the time before the kill.
    cmd.args(["run", "fileserver", "--target", &smb, "--connections", "3", "--files-per-connection", "40"])
        .args(["--sizes", "1m", "--record", "64k", "--on-client-error", "continue"])
        .env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"));
    server_killed_mid_phase(&sb, cmd, pid, lab.var("IOMATRIX_LAB_SERVER"));
}

#[test]
fn stopping_the_nfs_server_mid_run_is_reported_as_lost_samples() {
    let Some(lab) = Lab::up(&["nfs"]) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let pid: i32 = lab.var("IOMATRIX_LAB_GANESHA_PID").parse().unwrap();
    let sb = Sandbox::new();
    let mut cmd = sb.cmd();
    // 3 x 200 files of 1m in 4k records: tens of seconds of writing, far more than the 3.5 s before the kill.
    cmd.args(["run", "fileserver", "--target", &nfs, "--connections", "3", "--files-per-connection", "200"]).args([
        "--sizes",
        "1m",
        "--record",
        "4k",
        "--on-client-error",
        "continue",
    ]);
    server_killed_mid_phase(&sb, cmd, pid, lab.var("IOMATRIX_LAB_SERVER"));
}
