//! Access specs on real servers (nfs-ganesha and Samba in a network
//! namespace, started by `lab/up`) through iomatrix's own NFSv3 and SMB
//! clients: requests in flight as the protocol allows, cells stored as local
//! ones are. Skipped with a message where the lab cannot run (not root).

use crate::helpers::*;
use crate::lab_fixture::{left_behind, Lab};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Runs `cmd` (three cells of 3 s), calls `kill` a second into its second
/// cell, and checks that the run fails within the call timeout; its stderr.
fn kill_in_second_cell(mut cmd: std::process::Command, kill: impl FnOnce()) -> String {
    let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let begun = Instant::now();
    let mut kill = Some(kill);
    let mut stderr = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("[1/3]") {
            // The first cell is stored; the second runs for 3 s from now.
            std::thread::sleep(Duration::from_secs(1));
            kill.take().expect("one first cell")();
        }
        stderr += &line;
        stderr.push('\n');
    }
    assert!(kill.is_none(), "the first cell never finished: {stderr}");
    assert_eq!(child.wait().unwrap().code(), Some(3), "{stderr}");
    assert!(begun.elapsed() < Duration::from_secs(90), "bounded by the 30 s call timeout");
    stderr
}

/// A read cell and a write cell at each of queue depths 1 and 4: every
/// request whole (bytes = ops x block size), moving only its direction, and
/// each cell saying how its requests were issued.
fn check_cells(run: &Value, protocol: &str, clients: usize, block: u64, issued: &[(u64, &str)]) {
    let c = &run["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], protocol, "{c}");
    assert_eq!(c["backend"], "iomatrix protocol client");
    assert!(c["cache"].as_str().unwrap().starts_with("no client cache"), "{c}");
    let stated: Vec<&str> = c["requests"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    for (qd, how) in issued {
        assert!(
            stated.iter().any(|s| s.starts_with(&format!("queue depth {qd}: ")) && s.contains(how)),
            "queue depth {qd} should be stated as '{how}': {stated:?}"
        );
    }
    let stored = cells(run);
    assert_eq!(stored.len(), 4, "read and write at queue depths 1 and 4");
    for cell in &stored {
        let m = &cell["metrics"];
        let ops = cell["ops"].as_u64().unwrap();
        assert!(ops > 0, "{cell}");
        assert_eq!(cell["bytes"].as_u64().unwrap(), ops * block, "{cell}");
        assert_eq!(cell["clients"].as_u64().unwrap() as usize, clients, "{cell}");
        let (read, written) = (m["read_bytes"].as_u64().unwrap(), m["write_bytes"].as_u64().unwrap());
        match m["read_percent"].as_u64().unwrap() {
            100 => assert_eq!((read > 0, written), (true, 0), "{cell}"),
            _ => assert_eq!((read, written > 0), (0, true), "{cell}"),
        }
        let qd = m["queue_depth"].as_u64().unwrap();
        let (_, how) = issued.iter().find(|(d, _)| *d == qd).unwrap();
        let said = m["requests"].as_array().unwrap();
        assert!(said.len() == 1 && said[0].as_str().unwrap().contains(how), "qd {qd}: {said:?}");
        let per_second: u64 = m["per_second"].as_array().unwrap().iter().map(|s| s["ops"].as_u64().unwrap()).sum();
        assert_eq!(per_second, ops, "the per-second series accounts for every request");
    }
}

#[test]
fn access_specs_run_through_the_built_in_nfs_client_and_a_killed_server_is_named() {
    let Some(lab) = Lab::up(&["nfs"]) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let args = ["run", "access", "--target", &nfs, "--file-size", "4m", "--bs", "4k", "--clients", "2"];
    let out = sb.run(&[&args[..], &["--read", "100,0", "--qd", "1,4", "--duration", "1s"]].concat());
    assert_success(&out);
    check_cells(
        &sb.last_run(),
        "NFS",
        2,
        4096,
        &[(1, "one request at a time on one NFS connection"), (4, "4 NFS connections, one request in flight on each")],
    );
    assert!(left_behind(&state).is_empty(), "the working folder stays on the server: {:?}", left_behind(&state));
    // What makes no sense through a protocol client is refused before anything runs.
    let runs = sb.runs_json()["runs"].as_array().unwrap().len();
    assert_usage_error(&sb.run(&[&args[..], &["--direct"]].concat()), "--direct: iomatrix's own protocol client");
    assert_usage_error(&sb.run(&[&args[..], &["--backend", "io_uring"]].concat()), "--backend io_uring");
    assert_usage_error(&sb.run(&[&args[..], &["--backend", "psync"]].concat()), "leave --backend out");
    assert_usage_error(&sb.run(&[&args[..], &["--qd", "65"]].concat()), "at most 64 requests");
    assert_usage_error(&sb.run(&[&args[..], &["--device", "/dev/null"]].concat()), "--device");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs, "nothing stored for refused runs");
    // The server killed in the middle of the second cell: it ends within the call timeout, naming the
    // server; the first cell is kept.
    let pid: i32 = lab.var("IOMATRIX_LAB_GANESHA_PID").parse().unwrap();
    let mut cmd = sb.cmd();
    cmd.args(&args[..]).args(["--read", "100", "--qd", "1,2,4", "--duration", "3s"]);
    let stderr = kill_in_second_cell(cmd, || {
        // SAFETY: kill(2) on the server process the lab started; no memory involved.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let server = &nfs[..nfs.rfind('/').unwrap()];
    assert!(stderr.contains("qd=2 read=100% random=100% failed") && stderr.contains(server), "{stderr}");
    let failed = sb.last_run();
    assert_eq!(failed["run"]["status"], "failed");
    assert_eq!(cells(&failed).len(), 1, "the finished qd 1 cell is kept");
}

#[test]
fn access_specs_keep_many_requests_in_flight_on_one_smb_session() {
    let Some(lab) = Lab::up(&["smb"]) else { return };
    let smb = lab.var("IOMATRIX_LAB_SMB").to_string();
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let run = |extra: &[&str]| {
        sb.cmd()
            .args(["run", "access", "--target", &smb, "--file-size", "4m", "--bs", "64k"])
            .args(extra)
            .env("IOMATRIX_SMB_PASSWORD_FILE", &password_file)
            .output()
            .unwrap()
    };
    // SMB reads through the built-in client are slow (see conditions.remote.known_limits): no speed is asserted.
    let out = run(&["--read", "100,0", "--qd", "1,4", "--duration", "1s", "--clients", "2"]);
    assert_success(&out);
    let stored = sb.last_run();
    check_cells(
        &stored,
        "SMB",
        2,
        64 << 10,
        &[
            (1, "one request at a time on one SMB session"),
            (4, "up to 4 requests in flight at once on one SMB session"),
        ],
    );
    assert!(!stored["run"]["command_line"].as_str().unwrap().contains("testpass"));
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));
    let runs = sb.runs_json()["runs"].as_array().unwrap().len();
    assert_usage_error(&run(&["--direct"]), "leave --direct out");
    assert_usage_error(&run(&["--backend", "io_uring", "--qd", "4"]), "--backend io_uring");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs);
    // smbd stopped in the middle of a cell with 4 writes in flight: the processes serving the
    // connections (children of the lab's smbd named smbd) are killed.
    let smbd: i32 = lab.var("IOMATRIX_LAB_SMBD_PID").parse().unwrap();
    let mut cmd = sb.cmd();
    cmd.args(["run", "access", "--target", &smb, "--file-size", "4m", "--bs", "64k", "--read", "0"])
        .args(["--qd", "1,4,8", "--duration", "3s"])
        .env("IOMATRIX_SMB_PASSWORD_FILE", &password_file);
    let stderr = kill_in_second_cell(cmd, || {
        let children = std::fs::read_to_string(format!("/proc/{smbd}/task/{smbd}/children")).unwrap();
        for pid in children.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            if std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "smbd") {
                // SAFETY: kill(2) on a server process the lab started; no memory involved.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    });
    let server = &smb[..smb.rfind('/').unwrap()];
    assert!(stderr.contains("64k qd=4 read=0% random=100% failed") && stderr.contains(server), "{stderr}");
    let failed = sb.last_run();
    assert_eq!(failed["run"]["status"], "failed");
    assert_eq!(cells(&failed).len(), 1, "the finished qd 1 cell is kept");
}
