//! Counts and sizes the machine cannot serve (issue 30, finding 8, and the
//! personality of weight 0 of finding 11): refused at plan time with exit 2,
//! naming the limit and the largest count that fits, before the run is
//! stored and before its working folder is made; a thread refused at run
//! time ends the run failed, its folder removed, without a panic or a hang.
//!
//! Limits are set on the child only: RLIMIT_AS and RLIMIT_NPROC through
//! setrlimit between fork and exec, and a cgroup of its own for pids.max.
//! Every run is bounded in time and killed (its process group) past it.
use crate::helpers::*;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `cmd` in a process group of its own, output to files; kills the
/// group and fails the test past `limit`.
fn bounded(mut cmd: Command, limit: Duration) -> Output {
    let files = tempfile::tempdir().expect("a folder for the output");
    let (out_path, err_path) = (files.path().join("stdout"), files.path().join("stderr"));
    cmd.stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .process_group(0);
    let begun = Instant::now();
    let mut child = cmd.spawn().expect("start iomatrix");
    let pgid = child.id() as i32;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for iomatrix") {
            break status;
        }
        if begun.elapsed() > limit {
            // SAFETY: kill(2) on the process group this test made; no memory involved.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            panic!(
                "iomatrix ran past {limit:?} (killed): {cmd:?}\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: std::fs::read(&out_path).unwrap(), stderr: std::fs::read(&err_path).unwrap() }
}

/// `iomatrix ARGS` in the sandbox, with a soft and hard `resource` limit of `value` on the child only.
fn with_rlimit(sb: &Sandbox, args: &[&str], resource: libc::__rlimit_resource_t, value: u64) -> Command {
    let mut cmd = sb.cmd();
    cmd.args(args);
    // SAFETY: setrlimit(2) is async-signal-safe and touches only the child between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
            if libc::setrlimit(resource, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// Exit 2, one error line naming every `needles`, and nothing of a run left: no run stored, no working folder.
fn refused_before_anything(sb: &Sandbox, out: &Output, needles: &[&str]) {
    let (_, stderr) = text(out);
    assert_usage_error(out, needles[0]);
    for needle in needles {
        assert!(stderr.contains(needle), "the refusal should name '{needle}':\n{stderr}");
    }
    assert!(sb.leftovers().is_empty(), "a working folder was made: {:?}", sb.leftovers());
    if sb.db().exists() {
        let runs = sb.runs_json();
        assert_eq!(runs["runs"].as_array().map(Vec::len), Some(0), "a run was stored: {runs}");
    }
}

fn sysctl(name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/sys/{name}")).unwrap().trim().parse().unwrap()
}

#[test]
fn clients_beyond_the_threads_this_machine_allows_are_refused_before_the_run() {
    // The finding: --clients 20000 panicked "failed to spawn thread" at 16,359 threads (vm.max_map_count:
    // 4 maps a thread), then hung. A count past every thread limit of this machine, whatever they are.
    // /proc/loadavg's 4th field: running/all threads of the machine.
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap();
    let threads_now: u64 =
        loadavg.split_whitespace().nth(3).and_then(|f| f.split_once('/')).unwrap().1.parse().unwrap();
    let fits = [
        sysctl("vm/max_map_count") / 4,
        sysctl("kernel/threads-max").saturating_sub(threads_now),
        sysctl("kernel/pid_max").saturating_sub(threads_now),
    ];
    let clients = (fits.iter().min().unwrap() + 64).to_string();
    let sb = Sandbox::new();
    let target = sb.target();
    let args = ["run", "iozone", "--target", target.to_str().unwrap(), "--clients", &clients, "--files", "64k"];
    let mut cmd = sb.cmd();
    cmd.args(args).args(["--records", "64k", "--tests", "write"]);
    let begun = Instant::now();
    let out = bounded(cmd, Duration::from_secs(60));
    refused_before_anything(&sb, &out, &["at most --clients", "threads"]);
    let (_, stderr) = text(&out);
    assert!(
        ["vm.max_map_count", "kernel.threads-max", "kernel.pid_max", "RLIMIT_NPROC", "pids.max"]
            .iter()
            .any(|limit| stderr.contains(limit)),
        "the refusal names no thread limit:\n{stderr}"
    );
    assert!(begun.elapsed() < Duration::from_secs(10), "the refusal took {:?}", begun.elapsed());
}

/// A cgroup of its own (pids controller, v1 or v2) with `pids.max`, removed on drop.
struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    fn new(max: u64) -> Result<PidsCgroup, String> {
        if !is_root() {
            return Err("a cgroup of its own needs root".into());
        }
        let name = format!("iomatrix-test-{}-{}", std::process::id(), max);
        let v1 = Path::new("/sys/fs/cgroup/pids");
        let v2 = Path::new("/sys/fs/cgroup");
        let dir = if v1.join("cgroup.procs").exists() {
            v1.join(&name)
        } else if std::fs::read_to_string(v2.join("cgroup.controllers")).is_ok_and(|c| c.contains("pids")) {
            // cgroup v2: the root may enable pids for its children (it has no "no internal process" rule).
            std::fs::write(v2.join("cgroup.subtree_control"), "+pids").map_err(|e| format!("enabling pids: {e}"))?;
            v2.join(&name)
        } else {
            return Err("no cgroup pids controller mounted at /sys/fs/cgroup".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("making {}: {e}", dir.display()))?;
        let made = PidsCgroup { dir };
        std::fs::write(made.dir.join("pids.max"), max.to_string()).map_err(|e| format!("pids.max: {e}"))?;
        Ok(made)
    }

    /// Puts the child into the cgroup between fork and exec.
    fn hold(&self, cmd: &mut Command) {
        let procs = std::ffi::CString::new(self.dir.join("cgroup.procs").to_str().unwrap()).unwrap();
        // SAFETY: open(2), write(2) and close(2) are async-signal-safe; the path was made before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
                if written != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn clients_beyond_the_cgroups_pids_max_are_refused_naming_it_and_the_largest_count() {
    let cgroup = match PidsCgroup::new(300) {
        Ok(c) => c,
        Err(why) => return skip(why),
    };
    let sb = Sandbox::new();
    let target = sb.target();
    let mut cmd = sb.cmd();
    cmd.args(["run", "iozone", "--target", target.to_str().unwrap(), "--clients", "1000"]).args([
        "--files",
        "64k",
        "--records",
        "64k",
        "--tests",
        "write",
    ]);
    cgroup.hold(&mut cmd);
    let out = bounded(cmd, Duration::from_secs(60));
    refused_before_anything(&sb, &out, &["the cgroup's pids.max", "300 tasks", "at most --clients"]);
    let (_, stderr) = text(&out);
    // 300 less the process itself and the 3 harness threads: the largest count that fits is below 297.
    let most: u64 = stderr.split("at most --clients ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((250..297).contains(&most), "{most} clients named as fitting:\n{stderr}");
}

#[test]
fn fileserver_connections_beyond_the_address_space_are_refused_naming_the_largest_that_fits() {
    // The finding: --connections 24000 panicked in every thread, exit 134. Here the child's address
    // space is 2 GiB, so 24000 connections (128 KiB stacks and their maps) cannot fit, on any machine.
    let sb = Sandbox::new();
    let target = sb.target();
    let args = ["run", "fileserver", "--target", target.to_str().unwrap(), "--connections", "24000"];
    let mut cmd = with_rlimit(&sb, &args, libc::RLIMIT_AS, 2 << 30);
    cmd.args(["--files-per-connection", "1", "--sizes", "4k"]);
    let out = bounded(cmd, Duration::from_secs(60));
    refused_before_anything(&sb, &out, &["at most --connections", "24000 connection thread(s)"]);
}

#[test]
fn a_record_larger_than_memory_is_refused_before_the_run_without_a_folder_left() {
    // The finding: --files 1t --records 1t --no-space-check aborted allocating the record, exit 134,
    // its working folder left behind. 8 GiB of address space for the child: 1 TiB never fits.
    let sb = Sandbox::new();
    let target = sb.target();
    let args = ["run", "iozone", "--target", target.to_str().unwrap(), "--files", "1t", "--records", "1t"];
    let mut cmd = with_rlimit(&sb, &args, libc::RLIMIT_AS, 8 << 30);
    cmd.args(["--no-space-check", "--tests", "write"]);
    let out = bounded(cmd, Duration::from_secs(60));
    refused_before_anything(&sb, &out, &["1.0 TiB", "at most --records"]);
}

#[test]
fn a_personality_of_a_billion_files_is_refused_naming_their_memory_and_the_files_that_fit() {
    // The finding: files = 1000000000 of 1 byte passed the checks, then aborted allocating 48 GB.
    let sb = Sandbox::new();
    let file = sb.dir.path().join("billion.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"billion\"\nconnections = 1\n[[fileset]]\nname = \"f\"\nfiles = 1000000000\n\
         prealloc = 0.0\nsize = { dist = \"fixed\", size = \"1\" }\n[[phase]]\nname = \"run\"\niterations = 10\n\
         [[phase.flow]]\nname = \"make\"\nops = [{ op = \"create\", close = true }]\n",
    )
    .unwrap();
    let target = sb.target();
    let args = ["run", "personality", file.to_str().unwrap(), "--target", target.to_str().unwrap()];
    let mut cmd = with_rlimit(&sb, &args, libc::RLIMIT_AS, 8 << 30);
    cmd.arg("--no-space-check");
    let out = bounded(cmd, Duration::from_secs(60));
    refused_before_anything(&sb, &out, &["at most --files", "1000000000 file(s)"]);
}

#[test]
fn a_dbench_timestamp_of_1e308_is_refused_naming_the_file_and_line() {
    let sb = Sandbox::new();
    let load = sb.dir.path().join("absurd.txt");
    std::fs::write(&load, "0.0 Mkdir \"\\clients\" NT_STATUS_OK\n1e308 Rmdir \"\\clients\" NT_STATUS_OK\n").unwrap();
    let target = sb.target();
    let mut cmd = sb.cmd();
    cmd.args(["run", "personality", "--dbench-loadfile", load.to_str().unwrap(), "--target", target.to_str().unwrap()]);
    let out = bounded(cmd, Duration::from_secs(30));
    refused_before_anything(&sb, &out, &["absurd.txt line 2", "1e308", "30 days"]);
}

#[test]
fn durations_beyond_thirty_days_are_refused_by_every_flag_that_takes_one() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let huge = "18446744073709551615s";
    let cases: [&[&str]; 4] = [
        &["run", "access", "--target", t, "--duration", huge, "--file-size", "1m"],
        &["run", "personality", "varmail", "--target", t, "--duration", huge],
        &["run", "iozone", "--target", t, "--files", "64k", "--records", "64k", "--client-timeout", huge],
        &["run", "access", "--target", t, "--duration", "721h", "--file-size", "1m"],
    ];
    for args in cases {
        let mut cmd = sb.cmd();
        cmd.args(args);
        let out = bounded(cmd, Duration::from_secs(30));
        refused_before_anything(&sb, &out, &["at most 30 days"]);
    }
}

#[test]
fn a_personality_whose_flows_all_weigh_nothing_is_refused_naming_them() {
    // The finding: a personality whose only flow had weight = 0 ran 673,962 operations.
    let sb = Sandbox::new();
    let file = sb.dir.path().join("weightless.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"weightless\"\nconnections = 1\n[[fileset]]\nname = \"f\"\nfiles = 4\n\
         size = { dist = \"fixed\", size = \"4k\" }\n[[phase]]\nname = \"run\"\nduration = \"1s\"\n\
         [[phase.flow]]\nname = \"idle\"\nweight = 0\nops = [{ op = \"stat\" }]\n\
         [[phase.flow]]\nname = \"also-idle\"\nweight = 0\nops = [{ op = \"stat\" }]\n",
    )
    .unwrap();
    let target = sb.target();
    let mut cmd = sb.cmd();
    cmd.args(["run", "personality", file.to_str().unwrap(), "--target", target.to_str().unwrap()]);
    let out = bounded(cmd, Duration::from_secs(30));
    refused_before_anything(
        &sb,
        &out,
        &["weightless.toml", "line 13", "every flow has weight = 0 (`idle`, `also-idle`)"],
    );
}

#[test]
fn a_client_thread_refused_at_run_time_ends_the_run_failed_with_its_folder_removed() {
    // Limits that change under a run: bonnie's -u switches to `nobody` after the plan-time check (made
    // as root, whom RLIMIT_NPROC does not bind); nobody may have 4 threads, so the clients' threads are
    // refused. Before: "failed to spawn thread" panicked and the clients already started waited at the
    // first barrier for ever.
    if !is_root() {
        return skip("switching to nobody (bonnie -u) needs root");
    }
    let sb = Sandbox::new();
    // nobody must reach the target through the sandbox.
    std::fs::set_permissions(sb.dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(sb.target(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let target = sb.target();
    let args =
        ["bonnie", "-d", target.to_str().unwrap(), "-s", "4m", "-r", "0", "-n", "0", "-f", "-c", "8", "-u", "nobody"];
    let cmd = with_rlimit(&sb, &args, libc::RLIMIT_NPROC, 4);
    let begun = Instant::now();
    let out = bounded(cmd, Duration::from_secs(60));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "the run fails (exit 1), it does not abort:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("no thread could be started for client"), "{stderr}");
    assert!(begun.elapsed() < Duration::from_secs(20), "ending took {:?}", begun.elapsed());
    assert!(sb.leftovers().is_empty(), "the working folder stayed: {:?}", sb.leftovers());
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed", "{run}");
    let error = run["run"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("no thread could be started for client") && error.contains("of 8"), "{run}");
}

#[test]
fn repeats_past_any_use_are_refused_not_allocated() {
    // Every sample is a stored cell and a name in the plan: --repeat 4000000000 overflowed (a panic), and
    // bonnie's -x 4000000000 began to build four billion runs.
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["run", "iozone", "--target", t, "--files", "64k", "--records", "64k", "--repeat", "4000000000"], "--repeat"),
        (
            &[
                "run",
                "iozone",
                "--target",
                t,
                "--files",
                "64k",
                "--records",
                "64k",
                "--tolerance",
                "20%",
                "--max-repeats",
                "4000000000",
            ],
            "--max-repeats",
        ),
        (&["bonnie", "-d", t, "-s", "4m", "-r", "0", "-n", "0", "-f", "-x", "4000000000"], "-x 4000000000"),
    ];
    for (args, flag) in cases {
        let out = bounded(with_rlimit(&sb, args, libc::RLIMIT_AS, 8 << 30), Duration::from_secs(30));
        refused_before_anything(&sb, &out, &[flag, "at most 1000"]);
    }
}
