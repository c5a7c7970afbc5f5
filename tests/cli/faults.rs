//! The target fails under a running iomatrix: the disk fills, the file
//! system is remounted read-only, the target disappears. Each time: a clear
//! error naming the target and the problem, the finished cells kept, the
//! working folder removed where the file system still allows it. Root only
//! (loop-mounted ext4 images); skipped with a message otherwise.
use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A run in the background on `target`, its stderr kept in a file for the checks.
fn start(sb: &Sandbox, target: &Path, suite_args: &[&str]) -> (Running, PathBuf) {
    let log = sb.dir.path().join("stderr.txt");
    let mut args = vec!["run"];
    args.extend_from_slice(suite_args);
    args.extend(["--target", target.to_str().unwrap(), "--no-space-check"]);
    let child =
        sb.cmd().args(&args).stdout(Stdio::null()).stderr(std::fs::File::create(&log).unwrap()).spawn().unwrap();
    (Running(child), log)
}

/// What every failure must look like: exit 3 (its clients failed), one error line naming the
/// target and `problem`, no panic, the run stored as failed with its
/// finished cells.
fn assert_failed_clearly(sb: &Sandbox, status: std::process::ExitStatus, log: &Path, target: &Path, problem: &str) {
    let stderr = std::fs::read_to_string(log).unwrap();
    eprintln!("{stderr}");
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("iomatrix: error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(problem), "the error should name {problem:?}: {stderr}");
    assert!(errors[0].contains(target.to_str().unwrap()), "the error should name the target: {stderr}");
    let run = &sb.runs_json()["runs"][0];
    assert_eq!(run["status"], "failed", "{run}");
    assert!(run["cells"].as_u64().unwrap() >= 2, "finished cells kept: {run}");
}

#[test]
fn a_disk_that_fills_mid_run_keeps_the_finished_cells_and_removes_the_working_folder() {
    let Some(mount) = Mount::ext4(48) else { return };
    let sb = Sandbox::new();
    // 4m fits; 64m does not (a 48 MiB image has about 37 MiB free).
    let (mut child, log) = start(&sb, &mount.point, &["iozone", "--files", "4m,64m", "--records", "1m"]);
    let status = wait_for_exit(&mut child);
    assert_failed_clearly(&sb, status, &log, &mount.point, "No space left on device");
    assert!(leftovers(&mount.point).is_empty(), "working folder left: {:?}", leftovers(&mount.point));
}

/// Remounts `point` read-only as soon as no file is open for writing on it.
fn remount_read_only(point: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = Command::new("mount").args(["-o", "remount,ro"]).arg(point).output().unwrap();
        if out.status.success() {
            return;
        }
        assert!(Instant::now() < deadline, "cannot remount read-only: {}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A run of many small cells with fsync: seconds long, each file closed between cells.
/// Half a second between cells (untimed): the test acts between two cells however fast the machine
/// runs them (on a busy one, the whole run could end before the test saw its second cell).
const LONG_RUN: &[&str] = &[
    "iozone",
    "--files",
    "1m,2m,4m,8m,16m",
    "--records",
    "4k",
    "--tests",
    "write,read",
    "--fsync",
    "--between-cells",
    "sleep 0.5",
];

/// Remounts the target read-only after two stored cells of `plan`; the run
/// fails naming EROFS, keeps its cells, and says how to clean up later.
fn remounted_read_only_mid_run(plan: &[&str]) {
    let Some(mount) = Mount::ext4(96) else { return };
    let sb = Sandbox::new();
    let (mut child, log) = start(&sb, &mount.point, plan);
    wait_for_cells(&sb, &mut child, 2);
    remount_read_only(&mount.point);
    let status = wait_for_exit(&mut child);
    assert_failed_clearly(&sb, status, &log, &mount.point, "Read-only file system");
    // The folder cannot go; the message says so and how to remove it later.
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(leftovers(&mount.point).len(), 1, "{stderr}");
    assert!(stderr.contains("could not remove the working folder"), "{stderr}");
    assert!(stderr.contains(&format!("iomatrix clean {}", mount.point.display())), "{stderr}");
    // Writable again, `clean` removes it.
    let out = Command::new("mount").args(["-o", "remount,rw"]).arg(&mount.point).output().unwrap();
    assert!(out.status.success());
    assert_success(&sb.run(&["clean", mount.point.to_str().unwrap()]));
    assert!(leftovers(&mount.point).is_empty());
}

#[test]
fn a_file_system_remounted_read_only_mid_run_keeps_the_cells_and_says_how_to_clean_up() {
    remounted_read_only_mid_run(LONG_RUN);
}

#[test]
fn bonnie_on_a_file_system_remounted_read_only_mid_run_keeps_its_cells() {
    remounted_read_only_mid_run(&["bonnie", "--size", "32m", "--allow-cache", "--files", "64", "--sync"]);
}

#[test]
fn a_target_unmounted_mid_run_ends_with_a_clear_error_and_the_cells_kept() {
    let Some(mount) = Mount::ext4(96) else { return };
    let sb = Sandbox::new();
    let (mut child, log) = start(&sb, &mount.point, LONG_RUN);
    wait_for_cells(&sb, &mut child, 2);
    // Lazily: the open files stay usable, every new path under the target is gone.
    let out = Command::new("umount").arg("-l").arg(&mount.point).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status = wait_for_exit(&mut child);
    assert_failed_clearly(&sb, status, &log, &mount.point, "No such file or directory");
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(stderr.contains("working folder") && stderr.contains("is gone"), "{stderr}");
}

#[test]
fn every_writing_suite_refuses_a_plan_that_does_not_fit_with_the_numbers() {
    let Some(mount) = Mount::ext4(48) else { return };
    let sb = Sandbox::new();
    let t = mount.point.to_str().unwrap();
    let plans: [&[&str]; 4] = [
        &["iozone", "--files", "64m", "--records", "1m"],
        &["access", "--file-size", "64m", "--bs", "64k", "--bytes", "64k"],
        &["bonnie", "--size", "64m", "--allow-cache"],
        &["fileserver", "--connections", "4", "--files-per-connection", "8", "--sizes", "4m"],
    ];
    for plan in plans {
        let mut args = vec!["run"];
        args.extend_from_slice(plan);
        args.extend(["--target", t]);
        let out = sb.run(&args);
        assert_usage_error(&out, "free, but this plan needs");
        // The numbers: free, needed, what the plan writes and the margin.
        let (_, stderr) = text(&out);
        let line = stderr.lines().find(|l| l.starts_with("iomatrix: error:")).unwrap();
        assert!(line.contains(&format!("target {t} has ")), "{line}");
        assert!(line.contains("64.0 MiB written") || line.contains("128.0 MiB written"), "{line}");
        assert!(line.contains("plus a margin of"), "{line}");
        assert!(leftovers(&mount.point).is_empty(), "{plan:?} wrote before refusing");
    }
    assert!(sb.runs_json()["runs"].as_array().unwrap().is_empty(), "refused plans are no runs");
}

#[test]
fn fileserver_and_bonnie_on_a_disk_that_fills_name_it_and_remove_their_folders() {
    let Some(mount) = Mount::ext4(48) else { return };
    let sb = Sandbox::new();
    // The file-server load: the first connection that hits ENOSPC ends the run (the default
    // --on-client-error abort), naming the file and ENOSPC; the phase it cut short is not kept.
    let plan = ["fileserver", "--connections", "4", "--files-per-connection", "8", "--sizes", "4m"];
    let (mut child, log) = start(&sb, &mount.point, &plan);
    let status = wait_for_exit(&mut child);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("iomatrix: error:")).unwrap_or_default();
    assert!(error.contains("No space left on device") && error.contains("connection"), "{stderr}");
    assert_eq!(sb.last_run()["run"]["status"], "failed");
    let run = sb.last_run();
    let text = serde_json::to_string(&run).unwrap();
    assert!(text.contains("No space left on device") && text.contains(mount.point.to_str().unwrap()), "{text}");
    assert!(leftovers(&mount.point).is_empty(), "working folder left: {:?}", leftovers(&mount.point));

    // Bonnie writes its whole data file in the first test: it fails there, naming the file and ENOSPC.
    let (mut child, log) = start(&sb, &mount.point, &["bonnie", "--size", "64m", "--allow-cache"]);
    let status = wait_for_exit(&mut child);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(3), "{stderr}");
    let error = stderr.lines().find(|l| l.starts_with("iomatrix: error:")).unwrap_or_default();
    assert!(error.contains("No space left on device") && error.contains(mount.point.to_str().unwrap()), "{stderr}");
    assert_eq!(sb.runs_json()["runs"][1]["status"], "failed");
    assert!(leftovers(&mount.point).is_empty(), "working folder left: {:?}", leftovers(&mount.point));
}
