//! The IOzone suite over `smb://` (iomatrix's own SMB client) against the
//! lab's Samba behind a 100 Mbit/s link: the link caps what it reads and
//! writes, and faults in the middle of a cell (smbd killed, the link cut)
//! end the run within the call timeout with the finished cell kept.
//! Skipped with a message where the lab cannot run (not root, packages
//! missing).

use crate::helpers::*;
use crate::lab_fixture::{Lab, Shared};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `iomatrix run iozone` over the lab's share, with the password file in
/// the environment.
fn iozone_over_smb(sb: &Sandbox, lab: &Lab, extra: &[&str]) -> Command {
    let mut cmd = sb.cmd();
    cmd.args(["run", "iozone", "--target", lab.var("IOMATRIX_LAB_SMB")])
        .args(extra)
        .env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"));
    cmd
}

/// `pid` and every process below it (smbd forks one process per connection).
/// Kills the lab's smbd and the processes it forked (one per connection): never by name, which would
/// reach every smbd on the machine (a network namespace does not separate processes).
pub(crate) fn kill_process_tree(root: u32) {
    for pid in process_tree(root) {
        // SAFETY: kill(2) on a process of the lab's smbd tree; no memory involved.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
}

pub(crate) fn process_tree(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", found[i])).into_iter().flatten().flatten();
        for task in tasks {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            found.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
        i += 1;
    }
    found
}

/// Starts a two-cell write run (4m, then 256m: under a second, then about 22 s at 100 Mbit/s), waits
/// until the second cell is under way (the 4m cell stored, the 256m file past 4m in the share), does
/// `fault`, and returns the run's output and how long it took.
fn fault_during_the_second_cell(sb: &Sandbox, lab: &Lab, extra: &[&str], fault: impl FnOnce()) -> (Output, Duration) {
    let args = [&["--files", "4m,256m", "--records", "1m", "--tests", "write"], extra].concat();
    let mut child: Child = iozone_over_smb(sb, lab, &args).stderr(Stdio::piped()).spawn().unwrap();
    let begun = Instant::now();
    wait_for_second_cell(sb, &mut child, std::path::Path::new(lab.var("IOMATRIX_LAB_SMB_SHARE_DIR")), 4 << 20);
    fault();
    let out = child.wait_with_output().unwrap();
    (out, begun.elapsed())
}

/// The server part of the URL, as errors name it: `smb://user@host:port/share`.
fn server_of(lab: &Lab) -> String {
    lab.var("IOMATRIX_LAB_SMB").to_string()
}

#[test]
fn a_100_mbit_link_caps_the_built_in_smb_client_and_small_reads_no_longer_wait_for_delayed_acks() {
    let Some(lab) = Lab::shared(Shared::Link100Mbit) else { return };
    let sb = Sandbox::new();
    let out =
        iozone_over_smb(&sb, &lab, &["--files", "16m", "--records", "64k", "--tests", "write,read"]).output().unwrap();
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["remote"]["tcp_nodelay"], true, "{}", run["run"]["conditions"]);
    let rate = |test: &str| {
        let cell = cells(&run).into_iter().find(|c| c["test"] == test).expect("the cell is stored");
        cell["kib_per_sec"].as_f64().unwrap()
    };
    let (write, read) = (rate("write"), rate("read"));
    eprintln!("over the 100 Mbit/s link: write {write:.0}, read {read:.0} KB/s (window: read 2,500-12,300)");
    // 100 Mbit/s is 12207 KiB/s: no client cache lifts a figure above it.
    assert!(write < 12_300.0 && read < 12_300.0, "write {write:.0}, read {read:.0} KB/s over a 100 Mbit/s link");
    // Without TCP_NODELAY every 64 KiB READ waited ~40 ms for the server's delayed ACK: at most 1,600 KB/s (1,342
    // measured). The release build reads at the link's rate (~11,000); this debug build, signing every message
    // with unoptimised crypto on a shared 2-core machine, reached 3,661-8,800 under load - so the bound is set above the old
    // limit and well below the link.
    assert!(read > 2_500.0, "64 KiB reads at {read:.0} KB/s: each request waits for a delayed ACK again?");
}

#[test]
fn smbd_killed_in_the_middle_of_a_cell_fails_the_run_naming_the_server_and_keeps_the_finished_cell() {
    let Some(lab) = Lab::up(&["--link", "100mbit", "smb"]) else { return };
    let smbd: u32 = lab.var("IOMATRIX_LAB_SMBD_PID").parse().unwrap();
    let sb = Sandbox::new();
    let kill_smbd = || kill_process_tree(smbd);
    let (out, took) = fault_during_the_second_cell(&sb, &lab, &[], kill_smbd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(took < Duration::from_secs(40), "a closed connection fails at once, not after the 30 s timeout: {took:?}");
    assert!(stderr.contains("write file 256m record 1m failed") && stderr.contains(&server_of(&lab)), "{stderr}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    assert!(run["run"]["error"].as_str().unwrap().contains("write file 256m record 1m failed"), "{}", run["run"]);
    let kept = cells(&run);
    assert_eq!(kept.len(), 1, "the finished 4m cell is kept");
    assert_eq!(kept[0]["file_size"], 4 << 20);
}

#[test]
fn smbd_killed_with_on_client_error_continue_counts_the_lost_cell_and_exits_3() {
    let Some(lab) = Lab::up(&["--link", "100mbit", "smb"]) else { return };
    let smbd: u32 = lab.var("IOMATRIX_LAB_SMBD_PID").parse().unwrap();
    let sb = Sandbox::new();
    let kill_smbd = || kill_process_tree(smbd);
    let (out, took) = fault_during_the_second_cell(&sb, &lab, &["--on-client-error", "continue"], kill_smbd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Every cell ran (or was given up), some clients failed: exit 3, the run partial with its loss stated.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(took < Duration::from_secs(40), "{took:?}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "partial");
    let error = run["run"]["error"].as_str().unwrap();
    assert!(
        error.contains("1 client failure(s), their figures lost")
            && error.contains("write file 256m record 1m: client 0")
            && error.contains(&server_of(&lab)),
        "{error}"
    );
    assert_eq!((&run["run"]["cells"], &run["run"]["total_cells"]), (&2.into(), &2.into()), "{}", run["run"]);
    // The 4m cell is kept whole; the 256m cell, whose one client failed, is stored failed with no figure.
    let kept = cells(&run);
    assert_eq!(kept[1]["state"], serde_json::json!({"kind": "failed", "ok": 0, "of": 1, "parts": "clients"}));
    assert_eq!(kept[1]["kib_per_sec"], 0.0);
    // The loss counted with the run, and shown.
    let lost = &run["run"]["lost"];
    assert_eq!((lost["cells_not_stored"].as_u64(), lost["client_cells_failed"].as_u64()), (Some(0), Some(1)), "{lost}");
    assert_eq!(lost["failed"][0]["cell"], "write file 256m record 1m", "{lost}");
    let shown = sb.run(&["show", &run["run"]["id"].to_string()]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("lost: 0 of 2 cells not stored; 1 client figure(s) lost"), "{shown}");
    assert!(shown.contains("cell 1 write 256m/1m: failed: 0 of 1 clients"), "{shown}");
}

#[test]
fn a_cut_link_ends_the_smb_cell_within_the_timeout_and_cleanup_waits_one_timeout_more() {
    let Some(lab) = Lab::up(&["--link", "100mbit", "smb"]) else { return };
    let veth = lab.var("IOMATRIX_LAB_VETH").to_string();
    let sb = Sandbox::new();
    let cut = || assert!(Command::new("ip").args(["link", "set", &veth, "down"]).status().unwrap().success());
    let (out, took) = fault_during_the_second_cell(&sb, &lab, &[], cut);
    let _ = Command::new("ip").args(["link", "set", &veth, "up"]).status();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    // 4 s in, 30 s for the unanswered WRITE, at most 30 s more for removing the working folder (one call, after
    // which the session gives up): about 64 s. Each further call waiting out its own timeout would pass 90 s.
    assert!(took < Duration::from_secs(80), "bounded by the 30 s call timeout: {took:?}");
    assert!(
        stderr.contains("write file 256m record 1m failed")
            && stderr.contains("WRITE at byte")
            && stderr.contains("no answer within 30 s")
            && stderr.contains(&server_of(&lab)),
        "{stderr}"
    );
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    assert_eq!(cells(&run).len(), 1, "the 4m cell is kept");
}
