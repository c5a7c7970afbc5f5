//! The Bonnie suite on real servers (nfs-ganesha and Samba in the lab's
//! network namespace) through iomatrix's own NFSv3 and SMB clients: every
//! test's figures stored, bytes and counts as planned, nothing left on the
//! server, options that mean nothing there refused, a server stopped
//! mid-run named within the call timeout. Skipped with a message where the
//! lab cannot run (not root, packages missing).

use crate::helpers::*;
use crate::lab_fixture::{left_behind, Lab, Shared};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// The stored cell of `test`.
fn cell<'a>(stored: &'a [Value], test: &str) -> &'a Value {
    stored.iter().find(|c| c["test"] == test).unwrap_or_else(|| panic!("no {test} cell in {stored:?}"))
}

/// Every test stored with a figure; the data tests moved `size` bytes per
/// client (written, rewritten, read back per char and per block), the
/// seek test did `seeks` per client, the file tests `files` per client.
fn assert_every_test_complete(stored: &[Value], clients: u64, size: u64, seeks: u64, files: u64) {
    let tests: Vec<&str> = stored.iter().map(|c| c["test"].as_str().unwrap()).collect();
    assert_eq!(
        tests,
        [
            "putc",
            "write",
            "rewrite",
            "getc",
            "read",
            "seeks",
            "seq-create",
            "seq-stat",
            "seq-delete",
            "random-create",
            "random-stat",
            "random-delete"
        ]
    );
    for c in stored {
        assert_eq!(c["clients"].as_u64().unwrap(), clients, "{c}");
        assert!(c["metrics"]["per_sec"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["metrics"]["failed_clients"].as_array().is_none_or(|f| f.is_empty()), "{c}");
    }
    let written = cell(stored, "write")["bytes"].as_u64().unwrap();
    assert_eq!(written, clients * size);
    for test in ["putc", "rewrite", "getc", "read"] {
        assert_eq!(cell(stored, test)["bytes"].as_u64().unwrap(), written, "{test}: bytes read back = bytes written");
    }
    // Each client reads a chunk per seek and writes one in ten back (tickets 0, 10, 20, ...).
    let s = cell(stored, "seeks");
    assert_eq!(s["ops"].as_u64().unwrap(), clients * seeks);
    assert_eq!(s["metrics"]["writes"].as_u64().unwrap(), clients * seeks.div_ceil(10));
    for test in ["seq-create", "seq-stat", "seq-delete", "random-create", "random-stat", "random-delete"] {
        assert_eq!(cell(stored, test)["ops"].as_u64().unwrap(), clients * files, "{test}");
    }
    for test in ["putc", "getc"] {
        let buffer = cell(stored, test)["metrics"]["per_char_buffer_bytes"].as_u64().unwrap();
        assert!((512..=MIB).contains(&buffer), "{test}: per-char buffer {buffer}");
    }
}

/// The conditions a run through the built-in client must state.
fn assert_remote_conditions(run: &Value, protocol: &str) {
    let c = &run["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], protocol, "{c}");
    assert_eq!(c["backend"], "iomatrix protocol client");
    let cache = c["cache"].as_str().unwrap();
    assert!(cache.starts_with("no client cache") && cache.contains("twice-the-RAM rule is not applied"), "{cache}");
    assert!(c["per_char_buffer"].as_str().unwrap().contains("negotiated"), "{c}");
    let target = run["run"]["environment"]["target"]["path"].as_str().unwrap();
    assert!(target.starts_with(&format!("{}://", protocol.to_lowercase())), "{target}");
}

#[test]
fn bonnie_runs_every_test_through_the_built_in_nfs_client() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let args = ["run", "bonnie", "--target", &nfs, "--size", "4m", "--chunk", "64k", "--file-count", "64"];
    let out = sb.run(&[&args[..], &["--seeks", "200", "--clients", "2"]].concat());
    assert_success(&out);
    let run = sb.last_run();
    assert_remote_conditions(&run, "NFS");
    assert_every_test_complete(&cells(&run), 2, 4 * MIB, 200, 64);
    assert!(left_behind(&state).is_empty(), "the working folder stays on the server: {:?}", left_behind(&state));

    // bonnie++'s own command line with -d naming the server.
    let out = sb.run(&["bonnie", "-d", &nfs, "-s", "2:64k", "-n", "0", "-f"]);
    assert_success(&out);
    let run = sb.last_run();
    assert_remote_conditions(&run, "NFS");
    let tests: Vec<Value> = cells(&run).iter().map(|c| c["test"].clone()).collect();
    assert_eq!(tests, ["write", "rewrite", "read", "seeks"]);
    assert!(cells(&run).iter().take(3).all(|c| c["bytes"] == 2 * MIB), "{:?}", cells(&run));
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));

    // No client cache to bypass; the RAM rule holds only against a RAM stated for the server.
    let runs = sb.runs_json()["runs"].as_array().unwrap().len();
    assert_usage_error(&sb.run(&[&args[..], &["--direct"]].concat()), "--direct (-D): iomatrix's own protocol client");
    assert_usage_error(&sb.run(&["bonnie", "-d", &nfs, "-s", "2:64k", "-n", "0", "-D"]), "leave --direct (-D) out");
    assert_usage_error(&sb.run(&[&args[..], &["--ram", "1g"]].concat()), "as stated with -r");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs, "refused runs store nothing");
}

/// smbd and the processes it forked for its connections, children first.
fn stop_smbd(pid: i32) {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    for child in children.split_whitespace().filter_map(|c| c.parse::<i32>().ok()) {
        stop_smbd(child);
    }
    // SAFETY: kill(2) on a server process the lab started; no memory involved.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

#[test]
fn bonnie_runs_through_the_built_in_smb_client_and_a_stopped_smbd_keeps_the_finished_tests() {
    let Some(lab) = Lab::up(&["smb"]) else { return };
    let smb = lab.var("IOMATRIX_LAB_SMB").to_string();
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    // Tiny: reads through the smb crate wait ~45 ms per request.
    let bonnie = |extra: &[&str]| {
        let mut cmd = sb.cmd();
        cmd.args(["run", "bonnie", "--target", &smb, "--size", "2m", "--chunk", "1m"]).args(extra);
        cmd.env("IOMATRIX_SMB_PASSWORD_FILE", &password_file);
        cmd
    };
    let out: Output = bonnie(&["--file-count", "8", "--seeks", "20"]).output().unwrap();
    assert_success(&out);
    let run = sb.last_run();
    assert_remote_conditions(&run, "SMB");
    assert!(run["run"]["conditions"]["remote"]["version"].as_str().unwrap().starts_with("Smb"));
    assert_every_test_complete(&cells(&run), 1, 2 * MIB, 20, 8);
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));

    // smbd stopped during the seek test (three seekers, each its own session): the run fails within
    // the call timeout naming the server, and the tests finished before it are kept.
    let mut child = bonnie(&["--fast", "--files", "0", "--seeks", "3000"]).stderr(Stdio::piped()).spawn().unwrap();
    let begun = Instant::now();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap_or(0) > 0 {
        seen += &line;
        // Write, rewrite and read are done; the seekers connect and seek for a minute or more.
        if line.contains("[3/4]") {
            std::thread::sleep(Duration::from_secs(2));
            stop_smbd(lab.var("IOMATRIX_LAB_SMBD_PID").parse().unwrap());
            break;
        }
        line.clear();
    }
    stderr.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "{seen}");
    assert!(begun.elapsed() < Duration::from_secs(90), "bounded by the 30 s call timeout");
    let server = &smb[..smb.rfind('/').unwrap()];
    assert!(seen.contains("Random Seeks (repeat 1) failed") && seen.contains(server), "{seen}");
    assert!(seen.contains("seek test read of") || seen.contains("seek test write of"), "the first failure: {seen}");
    let failed = sb.last_run();
    assert_eq!(failed["run"]["status"], "failed");
    let kept: Vec<Value> = cells(&failed).iter().map(|c| c["test"].clone()).collect();
    assert_eq!(kept, ["write", "rewrite", "read"], "the finished tests are kept");
}
