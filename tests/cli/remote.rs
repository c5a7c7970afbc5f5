//! The IOzone suite on real servers (nfs-ganesha and Samba in a network
//! namespace, started by `lab/up`) through iomatrix's own NFSv3 and SMB
//! clients: no mount, no client cache. Skipped with a message where the lab
//! cannot run (not root, packages missing).

use crate::helpers::*;
use crate::lab_fixture::{left_behind, Lab, Shared};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn iozone_runs_through_the_built_in_nfs_client_and_faults_are_named() {
    let Some(lab) = Lab::up(&["nfs"]) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let args = ["run", "iozone", "--target", &nfs, "--files", "1m,4m", "--records", "64k,1m"];
    let out = sb.run(&[&args[..], &["--tests", "write,read,random-read", "--clients", "2", "--fsync"]].concat());
    assert_success(&out);
    let run = sb.last_run();
    let c = &run["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], "NFS");
    assert_eq!(c["remote"]["version"], "3");
    assert!(c["remote"]["write_max_bytes"].as_u64().unwrap() >= 4096, "{c}");
    assert!(c["cache"].as_str().unwrap().starts_with("no client cache"), "{c}");
    assert!(run["run"]["environment"]["target"]["path"].as_str().unwrap().starts_with("nfs://"));
    let stored = cells(&run);
    assert_eq!(stored.len(), 4 * 3);
    for cell in &stored {
        // Every client moved its whole file, reading back what it wrote.
        assert_eq!(cell["bytes"].as_u64().unwrap(), 2 * cell["file_size"].as_u64().unwrap(), "{cell}");
        assert!(cell["kib_per_sec"].as_f64().unwrap() > 0.0);
    }
    assert!(left_behind(&state).is_empty(), "the working folder stays on the server: {:?}", left_behind(&state));
    // A stdio test or --direct make no sense through the protocol client.
    assert_usage_error(&sb.run(&[&args[..], &["--tests", "fwrite"]].concat()), "--tests fwrite");
    assert_usage_error(&sb.run(&[&args[..], &["--direct"]].concat()), "--direct");
    // An export the server does not have.
    let wrong = nfs.rsplit_once('/').map(|(host, _)| format!("{host}/no-such-export")).unwrap();
    assert_usage_error(&sb.run(&["run", "iozone", "--target", &wrong, "--files", "64k"]), "mounting /no-such-export");
    // The server stopped in the middle of a cell: the client fails within the timeout, finished cells are kept.
    let pid: i32 = lab.var("IOMATRIX_LAB_GANESHA_PID").parse().unwrap();
    let mut child = sb
        .cmd()
        .args(["run", "iozone", "--target", &nfs, "--files", "8m,1g", "--records", "4k", "--tests", "write"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begun = Instant::now();
    // The 8m cell is stored and the 1g file has grown past 8m on the server: stop the server during the second.
    let export = PathBuf::from(lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR"));
    wait_for_second_cell(&sb, &mut child, &export, 8 << 20);
    // SAFETY: kill(2) on the server process the lab started; no memory involved.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(begun.elapsed() < Duration::from_secs(90), "bounded by the 30 s call timeout");
    assert!(
        stderr.contains("write file 1g record 4k failed") && stderr.contains(&nfs[..nfs.rfind('/').unwrap()]),
        "{stderr}"
    );
    let failed = sb.last_run();
    assert_eq!(failed["run"]["status"], "failed");
    assert_eq!(cells(&failed).len(), 1, "the finished 8m cell is kept");
    // What was lost is counted with the run: the 1g cell, its one client.
    let lost = &failed["run"]["lost"];
    assert_eq!((lost["cells_planned"].as_u64(), lost["cells_not_stored"].as_u64()), (Some(2), Some(1)), "{lost}");
    assert_eq!(lost["client_cells_failed"], 1, "{lost}");
    assert!(lost["failed"][0]["cell"].as_str().unwrap().contains("1g"), "{lost}");
    assert_eq!(lost["failed"][0]["errors"][0]["client"], 0, "{lost}");
    // The server down from the start: named, nothing stored.
    let runs = sb.runs_json()["runs"].as_array().unwrap().len();
    let out = sb.run(&["run", "iozone", "--target", &nfs, "--files", "64k"]);
    assert_usage_error(&out, "mounting /export failed");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs);
}

#[test]
fn iozone_runs_through_the_built_in_smb_client_and_bad_credentials_are_named() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let smb = lab.var("IOMATRIX_LAB_SMB").to_string();
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE").to_string();
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let run = |extra: &[&str], password_env: Option<(&str, &str)>| {
        let mut cmd = sb.cmd();
        cmd.args(["run", "iozone", "--target"]).args(extra);
        if let Some((k, v)) = password_env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    // The password from a file named in the environment, never on the command line.
    let args = [smb.as_str(), "--files", "1m", "--records", "64k,1m", "--tests", "write,read", "--clients", "2"];
    let out = run(&args, Some(("IOMATRIX_SMB_PASSWORD_FILE", password_file.as_str())));
    assert_success(&out);
    let stored = sb.last_run();
    let c = &stored["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], "SMB");
    assert!(c["remote"]["version"].as_str().unwrap().starts_with("Smb"), "{c}");
    assert!(!stored["run"]["command_line"].as_str().unwrap().contains("testpass"));
    for cell in cells(&stored) {
        assert_eq!(cell["bytes"].as_u64().unwrap(), 2 * (1 << 20), "{cell}");
    }
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));
    // A wrong password and a share the server does not have: named, exit 2, nothing stored.
    let runs = sb.runs_json()["runs"].as_array().unwrap().len();
    let out = run(&[smb.as_str(), "--files", "64k"], Some(("IOMATRIX_SMB_PASSWORD", "wrong")));
    assert_usage_error(&out, "connecting to share");
    let no_share = format!("{}/no-such-share", smb.rsplit_once('/').unwrap().0);
    let out = run(&[no_share.as_str(), "--files", "64k"], Some(("IOMATRIX_SMB_PASSWORD_FILE", password_file.as_str())));
    assert_usage_error(&out, "no-such-share");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs);
}

#[test]
fn every_suite_names_a_bad_url_and_a_server_that_is_not_there() {
    let sb = Sandbox::new();
    // Nothing listens on port 1 of loopback: refused at once, named, exit 2, nothing stored.
    let suites: [&[&str]; 5] = [
        &["run", "iozone", "--files", "64k"],
        &["run", "access", "--bs", "4k", "--file-size", "1m"],
        &["run", "bonnie", "--size", "1m"],
        &["run", "fileserver"],
        &["run", "backup"],
    ];
    for suite in suites {
        let with = |target: &'static str| [suite, &["--target", target]].concat();
        assert_usage_error(&sb.run(&with("nfs://host")), "names no export");
        assert_usage_error(&sb.run(&with("smb://h:99999/s")), "not a port number");
        assert_usage_error(&sb.run(&with("nfs://127.0.0.1:1/export")), "nfs://127.0.0.1:1/export");
        let out = sb.cmd().args(with("smb://u@127.0.0.1:1/share")).env("IOMATRIX_SMB_PASSWORD", "x").output().unwrap();
        assert_usage_error(&out, "smb://u@127.0.0.1:1/share");
    }
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty());
}

#[test]
fn a_100_mbit_link_caps_what_the_built_in_nfs_client_reads_and_writes() {
    let Some(lab) = Lab::shared(Shared::Link100Mbit) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let sb = Sandbox::new();
    assert_success(&sb.run(&[
        "run",
        "iozone",
        "--target",
        &nfs,
        "--files",
        "16m",
        "--records",
        "1m",
        "--tests",
        "write,read",
    ]));
    // 100 Mbit/s is 12207 KiB/s; with TCP and RPC headers the payload gets a little less, and no client cache
    // can lift it: above 12,300 KB/s the shaping was not applied or a cache answered. The floor only says the
    // link carried the data: a debug build on a loaded 2-core CI machine wrote 7,293 KB/s (stop 54).
    for cell in cells(&sb.last_run()) {
        let kib = cell["kib_per_sec"].as_f64().unwrap();
        eprintln!("{}: {kib:.0} KB/s over a 100 Mbit/s link (window 2,000-12,300)", cell["test"]);
        assert!(kib < 12_300.0, "{}: {kib:.0} KB/s is more than a 100 Mbit/s link carries", cell["test"]);
        assert!(kib > 2_000.0, "{}: {kib:.0} KB/s: the link or the client stalled", cell["test"]);
    }
}

#[test]
fn a_cut_link_ends_the_cell_within_the_timeout_and_keeps_the_finished_ones() {
    let Some(lab) = Lab::up(&["--link", "100mbit", "nfs"]) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let veth = lab.var("IOMATRIX_LAB_VETH").to_string();
    let sb = Sandbox::new();
    let mut child = sb
        .cmd()
        .args(["run", "iozone", "--target", &nfs, "--files", "4m,256m", "--records", "1m", "--tests", "write"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begun = Instant::now();
    // 4m takes under a second at 100 Mbit/s, 256m about 22 s: cut the link once the second cell writes.
    let export = PathBuf::from(lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR"));
    wait_for_second_cell(&sb, &mut child, &export, 4 << 20);
    assert!(Command::new("ip").args(["link", "set", &veth, "down"]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(begun.elapsed() < Duration::from_secs(90), "bounded by the 30 s call timeout");
    assert!(
        stderr.contains("no answer within 30 s") && stderr.contains("write file 256m record 1m failed"),
        "{stderr}"
    );
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    assert_eq!(cells(&run).len(), 1, "the 4m cell is kept");
}
