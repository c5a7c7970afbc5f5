//! Faults across hosts told true (issue 30, finding 9). MPI ranks on the
//! lab's hosts (`lab/up --hosts 3`, as in `multihost`) meet a killed rank,
//! a cut link and a stopped server, each under `--on-client-error abort` and
//! `continue`: every run ends in bounded time, stored `failed` (or, under
//! `continue` with every cell run, kept with its failed clients and exit 3),
//! the lost rank or each failing rank named with its host and the cause in
//! the server's or the kernel's words, never "stopped by a signal" for what
//! no signal did, and nothing of the job left running on any host.
//!
//! Beside them, without the lab: a rank's failed cell on this host, exit 3
//! for failed clients whatever started the run, launches whose tasks would
//! each run alone (srun without PMI), and commands that are not runs, which
//! never initialise MPI.

use crate::clients::small_iozone;
use crate::helpers::*;
use crate::lab_fixture::Lab;
use crate::mpi::{mpi_binary, mpirun};
use crate::multihost::{bounded, hosts, lab_command, lab_with_hosts};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Rank 2 finds a folder where its data file should be: every open fails (EISDIR).
const BREAK_RANK_2: &str = "if [ \"$IOMATRIX_RANK\" = 2 ]; then mkdir iozone.tmp; fi";

/// Six access cells of two seconds each on `target`, plus `extra`.
fn six_cells<'a>(target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let base = ["run", "access", "--target", target, "--bs", "4k,8k,16k,32k,64k,128k", "--duration", "2s"];
    [&base[..], &["--file-size", "4m"], extra].concat()
}

/// `mpirun --hostfile LAB -np 3 BIN ARGS` on the lab's hosts, killed with its process group after `limit`.
fn on_three_hosts(lab: &Lab, sb: &Sandbox, bin: &Path, args: &[&str], limit: Duration) -> (Output, Duration) {
    let mut cmd = lab_command(lab, sb, "mpirun");
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", "3", "-x", "IOMATRIX_DB"]);
    if lab.vars().any(|(k, _)| k == "IOMATRIX_LAB_SMB_PASSWORD_FILE") {
        cmd.args(["-x", "IOMATRIX_SMB_PASSWORD_FILE"]);
    }
    cmd.arg(bin).args(args);
    bounded(cmd, limit)
}

/// Runs `fault` on a thread once `cells` cells are stored in `db` and 0.7 s more have passed (the
/// next cell under way); the thread gives up after 120 s and says whether the fault was done.
pub(crate) fn after_cells(
    db: PathBuf,
    cells: i64,
    fault: impl FnOnce() -> bool + Send + 'static,
) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if stored_cells_in(&db) >= cells {
                std::thread::sleep(Duration::from_millis(700));
                return fault();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    })
}

/// The MPI processes (ranks, Open MPI's daemons) in the lab hosts' namespaces: (host, pid, name).
fn mpi_processes(lab: &Lab) -> Vec<(String, u32, String)> {
    let mut found = Vec::new();
    for (name, _, netns, _) in hosts(lab) {
        let out = Command::new("ip").args(["netns", "pids", &netns]).output().expect("ip netns pids");
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse::<u32>().ok()) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string();
            if [crate::mpi::MPI_PROGRAM, "orted", "prted"].contains(&comm.as_str()) {
                found.push((name.clone(), pid, comm));
            }
        }
    }
    found
}

/// Nothing of the job is left on any host: waits up to `within` for the ranks and daemons to end
/// (Open MPI tears down in the background after mpirun returns), then kills what is left, by PID,
/// and fails naming it.
pub(crate) fn nothing_left_running(lab: &Lab, within: Duration) {
    let deadline = Instant::now() + within;
    let mut left = mpi_processes(lab);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        left = mpi_processes(lab);
    }
    for (_, pid, _) in &left {
        // SAFETY: kill(2) on a process found in the lab's host namespaces; no memory involved.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "left running {within:?} after the job ended: {left:?}");
}

/// The last stored run's status and error.
fn status_and_error(sb: &Sandbox) -> (String, String, Value) {
    let run = sb.last_run();
    let status = run["run"]["status"].as_str().unwrap_or_default().to_string();
    let error = run["run"]["error"].as_str().unwrap_or_default().to_string();
    (status, error, run)
}

/// "rank R on HOST (ADDR)" for a lab host by rank, as rank 0 names it.
fn rank_on_host(lab: &Lab, rank: usize) -> String {
    let (name, addr, _, _) = hosts(lab)[rank].clone();
    format!("rank {rank} on {name} ({addr})")
}

/// A rank killed mid-cell (SIGKILL): mpirun stops the others, and rank 0 stores the run `failed`
/// before mpirun's SIGKILL reaches it, naming the dead rank and its host; the rank that died is not
/// blamed on a signal, the others are not blamed at all. Under abort and under continue alike: a
/// lost rank ends an MPI run (the ranks cannot go on without it).
#[test]
fn a_killed_rank_is_stored_failed_by_rank_0_naming_it() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["nfs"]) else { return };
    for on_error in ["abort", "continue"] {
        let sb = Sandbox::new();
        let target = sb.target();
        let pids = sb.dir.path().join("pids");
        std::fs::create_dir(&pids).unwrap();
        let hook = format!("echo $PPID > {}/$IOMATRIX_RANK", pids.display());
        let args = six_cells(target.to_str().unwrap(), &["--before", &hook, "--on-client-error", on_error]);
        let killer = {
            let pid_file = pids.join("1");
            after_cells(sb.db(), 2, move || {
                // The hosts are namespaces of this machine: the rank's PID is seen from here.
                let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
                // SAFETY: kill(2) on the rank's PID, which its own hook wrote.
                unsafe { libc::kill(pid, libc::SIGKILL) == 0 }
            })
        };
        let (out, took) = on_three_hosts(&lab, &sb, &bin, &args, Duration::from_secs(120));
        let (_, stderr) = text(&out);
        assert!(killer.join().unwrap(), "{on_error}: two cells were never stored: {stderr}");
        assert!(!out.status.success(), "{on_error}: {stderr}");
        assert!(took < Duration::from_secs(60), "{on_error}: took {took:?}");
        let (status, error, run) = status_and_error(&sb);
        assert_eq!(status, "failed", "{on_error}: never left running: {error}\n{stderr}");
        assert!(error.contains(&rank_on_host(&lab, 1)), "{on_error}: names the dead rank and its host: {error}");
        assert!(error.contains("gone: it said nothing to rank 0"), "{on_error}: {error}");
        assert!(!error.contains("stopped by a signal"), "{on_error}: blamed on a signal: {error}");
        assert!(!error.contains("client 0:") && !error.contains("client 2:"), "{on_error}: blames the living: {error}");
        let kept = cells(&run).len();
        assert!((2..6).contains(&kept), "{on_error}: the finished cells are kept: {kept}");
        eprintln!("{on_error}: mpirun {:?} after {took:.1?}: {error}", out.status.code());
        nothing_left_running(&lab, Duration::from_secs(20));
    }
    ctrl_c_on_mpirun_is_stored_interrupted(&lab, &bin);
    rank_0_killed_outright_is_marked_incomplete_on_its_host(&lab, &bin);
    a_killed_rank_under_hosts_exits_3(&lab, &bin);
}

/// The same killed rank, launched by iomatrix itself (`--hosts`): mpirun's own code for a killed
/// process (137) is not iomatrix's word; the launcher finds the run it started stored failed, and
/// exits 3 (clients failed), as a run of threads whose client failed would.
fn a_killed_rank_under_hosts_exits_3(lab: &Lab, bin: &Path) {
    let sb = Sandbox::new();
    let target = sb.target();
    let pids = sb.dir.path().join("pids");
    std::fs::create_dir(&pids).unwrap();
    let hook = format!("echo $PPID > {}/$IOMATRIX_RANK", pids.display());
    let hostfile = lab.var("IOMATRIX_LAB_HOSTFILE").to_string();
    let args = six_cells(target.to_str().unwrap(), &["--before", &hook, "--hosts", &hostfile]);
    let killer = {
        let pid_file = pids.join("1");
        after_cells(sb.db(), 2, move || {
            let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
            // SAFETY: kill(2) on the rank's PID, which its own hook wrote.
            unsafe { libc::kill(pid, libc::SIGKILL) == 0 }
        })
    };
    let mut cmd = lab_command(lab, &sb, bin.to_str().unwrap());
    cmd.args(&args);
    let (out, took) = bounded(cmd, Duration::from_secs(120));
    let (_, stderr) = text(&out);
    assert!(killer.join().unwrap(), "--hosts: two cells were never stored: {stderr}");
    assert!(took < Duration::from_secs(60), "--hosts: took {took:?}");
    let (status, error, _) = status_and_error(&sb);
    assert_eq!(status, "failed", "--hosts: {error}\n{stderr}");
    assert_eq!(out.status.code(), Some(3), "--hosts: a killed rank is a failed client: {stderr}");
    assert!(stderr.contains("is stored failed"), "--hosts: says why: {stderr}");
    nothing_left_running(lab, Duration::from_secs(20));
}

/// Ctrl-C on mpirun (SIGINT: mpirun sends every rank SIGTERM): every rank is there to say so, and the
/// run is stored `interrupted` with its finished cells, not failed.
fn ctrl_c_on_mpirun_is_stored_interrupted(lab: &Lab, bin: &Path) {
    let sb = Sandbox::new();
    let target = sb.target();
    let mut cmd = lab_command(lab, &sb, "mpirun");
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", "3", "-x", "IOMATRIX_DB"])
        .arg(bin)
        .args(six_cells(target.to_str().unwrap(), &[]))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mpirun = Running(cmd.spawn().expect("start mpirun"));
    let pid = mpirun.0.id() as i32;
    let ctrl_c = after_cells(sb.db(), 2, move || {
        // SAFETY: kill(2) on the mpirun this test started.
        unsafe { libc::kill(pid, libc::SIGINT) == 0 }
    });
    let mut mpirun = mpirun;
    let deadline = Instant::now() + Duration::from_secs(90);
    while mpirun.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "mpirun did not end within 90 s of its start");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(ctrl_c.join().unwrap(), "two cells were never stored");
    let (status, error, run) = status_and_error(&sb);
    assert_eq!(status, "interrupted", "{error}");
    assert!(!error.contains("gone"), "nobody is blamed: {error}");
    assert!((2..6).contains(&cells(&run).len()), "the finished cells are kept");
    nothing_left_running(lab, Duration::from_secs(20));
}

/// Rank 0 itself killed outright (SIGKILL): nothing can store the end, and a process on another host
/// cannot be seen from here, so the run stays `running` where the database is opened elsewhere; an
/// iomatrix opening it on rank 0's host (the lab host's UTS namespace: its host name) finds the
/// process gone and marks the run `incomplete`, saying so.
fn rank_0_killed_outright_is_marked_incomplete_on_its_host(lab: &Lab, bin: &Path) {
    let sb = Sandbox::new();
    let target = sb.target();
    let pids = sb.dir.path().join("pids");
    std::fs::create_dir(&pids).unwrap();
    let hook = format!("echo $PPID > {}/$IOMATRIX_RANK", pids.display());
    let killer = {
        let pid_file = pids.join("0");
        after_cells(sb.db(), 2, move || {
            let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
            // SAFETY: kill(2) on rank 0's PID, which its own hook wrote.
            unsafe { libc::kill(pid, libc::SIGKILL) == 0 }
        })
    };
    let args = six_cells(target.to_str().unwrap(), &["--before", &hook]);
    let (out, took) = on_three_hosts(lab, &sb, bin, &args, Duration::from_secs(120));
    assert!(killer.join().unwrap(), "two cells were never stored: {}", text(&out).1);
    assert!(!out.status.success() && took < Duration::from_secs(60), "{:?} after {took:?}", out.status);
    nothing_left_running(lab, Duration::from_secs(20));
    let (status, _, _) = status_and_error(&sb);
    assert_eq!(status, "running", "opened on this host, rank 0's run cannot be judged");
    let state = lab.var("IOMATRIX_LAB_STATE");
    let on_host_1 = Command::new("nsenter")
        .arg(format!("--uts={state}/ns/uts-1"))
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(["runs", "--json"])
        .env("IOMATRIX_DB", sb.db())
        .output()
        .expect("nsenter");
    assert_success(&on_host_1);
    let (status, error, run) = status_and_error(&sb);
    assert_eq!(status, "incomplete", "{error}");
    assert!(error.contains("the process ended before the run finished"), "{error}");
    assert!((2..6).contains(&cells(&run).len()), "the finished cells are kept");
}

/// A host's link cut mid-cell (its veth down): mpirun finds its daemon lost (the lab probes every
/// 2 s) or rank 0 gives up after --client-timeout, whichever comes first; either way the run is stored
/// `failed` within bounded time naming the cut host's rank, never blamed on a signal; and the cut
/// host's rank and daemon end by themselves (the rank's own waits are bounded by the timeout too).
#[test]
fn a_cut_link_is_stored_failed_naming_the_cut_host() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["nfs"]) else { return };
    let (_, first_addr, _, _) = hosts(&lab)[0].clone();
    let bridge = format!("{}.1", first_addr.rsplit_once('.').unwrap().0);
    let (_, _, cut_ns, cut_veth) = hosts(&lab)[2].clone();
    for on_error in ["abort", "continue"] {
        let sb = Sandbox::new();
        let target = sb.target();
        let args = six_cells(target.to_str().unwrap(), &["--client-timeout", "8s", "--on-client-error", on_error]);
        let cutter = {
            let (ns, veth) = (cut_ns.clone(), cut_veth.clone());
            after_cells(sb.db(), 2, move || {
                Command::new("ip").args(["-n", &ns, "link", "set", &veth, "down"]).status().is_ok_and(|s| s.success())
            })
        };
        let (out, took) = on_three_hosts(&lab, &sb, &bin, &args, Duration::from_secs(150));
        let (_, stderr) = text(&out);
        let cut = cutter.join().unwrap();
        // The host comes back after its processes are checked, whatever the assertions say.
        let restore = || {
            let _ = Command::new("ip").args(["-n", &cut_ns, "link", "set", &cut_veth, "up"]).status();
            let _ = Command::new("ip")
                .args(["-n", &cut_ns, "route", "replace", "default", "via", &bridge])
                .stderr(Stdio::null())
                .status();
        };
        if !cut {
            restore();
            panic!("{on_error}: two cells were never stored: {stderr}");
        }
        let left = std::panic::catch_unwind(|| nothing_left_running(&lab, Duration::from_secs(40)));
        restore();
        assert!(!out.status.success(), "{on_error}: {stderr}");
        // Two cells and a part, the 8 s bound or the lab's ~10 s keepalive, and the teardown.
        assert!(took < Duration::from_secs(60), "{on_error}: took {took:?}");
        let (status, error, run) = status_and_error(&sb);
        assert_eq!(status, "failed", "{on_error}: {error}\n{stderr}");
        assert!(error.contains(&rank_on_host(&lab, 2)), "{on_error}: names the cut host's rank: {error}");
        assert!(!error.contains("stopped by a signal"), "{on_error}: blamed on a signal: {error}");
        assert!(!error.contains("client 0:") && !error.contains("client 1:"), "{on_error}: blames the living: {error}");
        assert!((2..6).contains(&cells(&run).len()), "{on_error}: the finished cells are kept");
        eprintln!("{on_error}: mpirun {:?} after {took:.1?}: {error}", out.status.code());
        left.unwrap_or_else(|e| std::panic::resume_unwind(e));
    }
}

/// The lab server's processes, by PID: the daemon `pid` and everything it forked (smbd forks one
/// process per session).
pub(crate) fn server_tree(pid: &str) -> Vec<i32> {
    crate::remote_smb_faults::process_tree(pid.parse().unwrap()).into_iter().map(|p| p as i32).collect()
}

pub(crate) fn signal_all(pids: &[i32], signal: i32) -> bool {
    // SAFETY: kill(2) on the lab server's own processes; no memory involved.
    pids.iter().all(|p| unsafe { libc::kill(*p, signal) } == 0)
}

/// Access cells against a lab server, one per block size in `bs`, two seconds each, layout untimed.
fn cells_on<'a>(target: &'a str, bs: &'a str, on_error: &'a str) -> Vec<&'a str> {
    let base = ["run", "access", "--target", target, "--bs", bs, "--duration", "2s"];
    [&base[..], &["--file-size", "8m", "--client-timeout", "120s", "--on-client-error", on_error]].concat()
}

/// What every stored failure of a lost server must say: each failing rank with its host, the
/// client's own words for what the server did, and no signal.
fn assert_each_cause_named(lab: &Lab, error: &str, words: &[&str], what: &str) {
    let named: Vec<usize> = (0..3).filter(|r| error.contains(&rank_on_host(lab, *r))).collect();
    assert!(!named.is_empty(), "{what}: no rank named with its host: {error}");
    assert!(words.iter().any(|w| error.contains(w)), "{what}: none of {words:?} in: {error}");
    assert!(!error.contains("signal"), "{what}: blamed on a signal: {error}");
}

/// smbd killed mid-run under the default abort: every rank's failed cell reaches rank 0 with the SMB
/// client's words, and rank 0 stores the run `failed` (exit 3: its clients failed) naming each rank's host and cause,
/// before anyone stops; nothing left running.
#[test]
fn a_killed_smb_server_under_abort_is_stored_failed_with_each_ranks_cause() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["smb"]) else { return };
    let sb = Sandbox::new();
    let smb = lab.var("IOMATRIX_LAB_SMB").to_string();
    let smbd = lab.var("IOMATRIX_LAB_SMBD_PID").to_string();
    let killer = after_cells(sb.db(), 1, move || signal_all(&server_tree(&smbd), libc::SIGKILL));
    let (out, took) =
        on_three_hosts(&lab, &sb, &bin, &cells_on(&smb, "64k,128k,256k,512k", "abort"), Duration::from_secs(240));
    let (_, stderr) = text(&out);
    assert!(killer.join().unwrap(), "the first cell was never stored: {stderr}");
    assert_eq!(out.status.code(), Some(3), "the run failed: {stderr}");
    let (status, error, _) = status_and_error(&sb);
    assert_eq!(status, "failed", "{error}\n{stderr}");
    assert_each_cause_named(&lab, &error, &["connection", "Connection", "stopped", "reset"], "smbd killed");
    eprintln!("smbd killed, abort: {took:.1?}: {error}");
    nothing_left_running(&lab, Duration::from_secs(20));
}

/// nfs-ganesha killed mid-run under continue: each later cell's failed clients are kept with the
/// kernel's words (a reset connection, a broken pipe, or no answer within the call timeout), every
/// cell is accounted for, and the exit code is 3; never left running; nothing left running.
#[test]
fn a_killed_nfs_server_under_continue_exits_3_with_each_ranks_cause() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let ganesha = lab.var("IOMATRIX_LAB_GANESHA_PID").to_string();
    let killer = after_cells(sb.db(), 1, move || signal_all(&server_tree(&ganesha), libc::SIGKILL));
    let (out, took) =
        on_three_hosts(&lab, &sb, &bin, &cells_on(&nfs, "64k,128k,256k,512k", "continue"), Duration::from_secs(300));
    let (_, stderr) = text(&out);
    assert!(killer.join().unwrap(), "the first cell was never stored: {stderr}");
    assert_eq!(out.status.code(), Some(3), "every cell ran, clients failed: {stderr}");
    let (status, error, _) = status_and_error(&sb);
    assert!(!["running", "interrupted"].contains(&status.as_str()), "{status}: {error}");
    assert_each_cause_named(&lab, &error, &["Connection reset", "Broken pipe", "no answer within"], "ganesha killed");
    eprintln!("ganesha killed, continue: {took:.1?}: {status}: {error}");
    nothing_left_running(&lab, Duration::from_secs(20));
}

/// A server stopped (SIGSTOP: it holds its connections and answers nothing) mid-run: each rank's
/// call gives up after the call timeout (30 s), names it, and the run is stored: under abort
/// `failed` (exit 3, ganesha stopped), under continue kept with its failed clients (exit 3, smbd
/// stopped). The server is let go (SIGCONT) after each run.
#[test]
fn a_stopped_server_is_stored_with_each_ranks_cause_under_abort_and_continue() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["smb", "nfs"]) else { return };
    for (on_error, target, pid_var, code) in [
        ("abort", "IOMATRIX_LAB_NFS", "IOMATRIX_LAB_GANESHA_PID", 3),
        ("continue", "IOMATRIX_LAB_SMB", "IOMATRIX_LAB_SMBD_PID", 3),
    ] {
        let sb = Sandbox::new();
        let target = lab.var(target).to_string();
        let stopped = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stopper = {
            let (pid, stopped) = (lab.var(pid_var).to_string(), stopped.clone());
            after_cells(sb.db(), 1, move || {
                let tree = server_tree(&pid);
                *stopped.lock().unwrap() = tree.clone();
                signal_all(&tree, libc::SIGSTOP)
            })
        };
        let args = cells_on(&target, "64k,128k", on_error);
        let (out, took) = on_three_hosts(&lab, &sb, &bin, &args, Duration::from_secs(300));
        let was_stopped = stopper.join().unwrap();
        signal_all(&stopped.lock().unwrap(), libc::SIGCONT);
        let (_, stderr) = text(&out);
        assert!(was_stopped, "{on_error}: the first cell was never stored: {stderr}");
        assert_eq!(out.status.code(), Some(code), "{on_error}: {stderr}");
        let (status, error, _) = status_and_error(&sb);
        if on_error == "abort" {
            assert_eq!(status, "failed", "{error}");
        } else {
            assert!(!["running", "interrupted"].contains(&status.as_str()), "{status}: {error}");
        }
        assert_each_cause_named(&lab, &error, &["no answer within", "timed out", "Timeout", "timeout"], on_error);
        eprintln!("{pid_var} stopped, {on_error}: {took:.1?}: {status}: {error}");
        nothing_left_running(&lab, Duration::from_secs(20));
    }
}

/// A rank whose cell fails under the default abort (here: its data file is a folder) is not taken
/// for a signal: its failure reaches rank 0 with the cause, rank 0 stores the run `failed` naming
/// the rank and its host, and every rank ends in order (exit 3: its client failed; no MPI_Abort).
#[test]
fn a_ranks_failed_cell_reaches_rank_0_with_its_cause_before_anyone_stops() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args =
        [&[bin.to_str().unwrap()][..], &small_iozone(target.to_str().unwrap(), &["--before", BREAK_RANK_2])].concat();
    let (out, took) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "the run failed: {stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(!stderr.contains("MPI_ABORT"), "ended in order: {stderr}");
    let (status, error, _) = status_and_error(&sb);
    assert_eq!(status, "failed", "{error}\n{stderr}");
    assert!(error.contains("client 2: rank 2 on ") && error.contains("Is a directory"), "{error}");
    assert!(!error.contains("signal"), "a failed cell is not a signal: {error}");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// A rank whose client hangs (here: its `--before` hook sleeps) is given up on after
/// `--client-timeout`: rank 0 stores the run `failed` naming that rank, before any rank gives up on
/// rank 0 and ends the job (the others wait twice the bound for rank 0's word); then the job is
/// ended, the hung rank's hook with it.
#[test]
fn a_hung_rank_is_given_up_on_after_the_timeout_and_named() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let sleeper = sb.dir.path().join("sleeper");
    let hang = format!("if [ \"$IOMATRIX_RANK\" = 2 ]; then echo $$ > {}; exec sleep 40; fi", sleeper.display());
    let extra = ["--before", hang.as_str(), "--client-timeout", "4s"];
    let args = [&[bin.to_str().unwrap()][..], &small_iozone(target.to_str().unwrap(), &extra)].concat();
    let (out, took) = mpirun(&sb, 3, &args, Duration::from_secs(60));
    let (_, stderr) = text(&out);
    assert!(!out.status.success(), "{stderr}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let (status, error, _) = status_and_error(&sb);
    assert_eq!(status, "failed", "{error}\n{stderr}");
    assert!(error.contains("client 2: rank 2 on ") && error.contains("--client-timeout"), "{error}");
    assert!(!error.contains("client 0:") && !error.contains("client 1:"), "blames the others: {error}");
    let pid: i32 = std::fs::read_to_string(&sleeper).unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let alive = Path::new(&format!("/proc/{pid}")).exists();
    // SAFETY: kill(2) on the hook's own PID, which it wrote; no memory involved.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(!alive, "the hung rank's hook (pid {pid}) outlived the job");
}

/// Failed clients under `--on-client-error continue` give exit 3 whatever started the run: threads
/// of one process, mpirun, and `--hosts` (which starts mpirun itself, here on this host).
#[test]
fn failed_clients_under_continue_exit_3_whatever_launched_them() {
    let continue_broken = ["--before", BREAK_RANK_2, "--on-client-error", "continue"];
    let sb = Sandbox::new();
    let target = sb.target();
    let alone = [&small_iozone(target.to_str().unwrap(), &continue_broken)[..], &["--clients", "3"]].concat();
    let out = sb.run(&alone);
    assert_eq!(out.status.code(), Some(3), "threads: {}", text(&out).1);
    let Some(bin) = mpi_binary() else { return };
    let args = [&[bin.to_str().unwrap()][..], &small_iozone(target.to_str().unwrap(), &continue_broken)].concat();
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(3), "mpirun: {}", text(&out).1);
    let hosts = [&small_iozone(target.to_str().unwrap(), &continue_broken)[..], &["--hosts", "localhost:3"]].concat();
    let mut cmd = Command::new(&bin);
    cmd.args(&hosts)
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null());
    let (out, _) = bounded(cmd, Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(3), "--hosts: {}", text(&out).1);
    for run in sb.runs_json()["runs"].as_array().unwrap() {
        let shown = sb.show_json(run["id"].as_i64().unwrap());
        for c in cells(&shown) {
            assert_eq!(c["metrics"]["failed_clients"][0]["rank"], 2, "{}", shown["run"]["command_line"]);
        }
    }
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), 3);
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// The variables a launcher sets, removed from a child so only the test's own count.
const LAUNCH_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "PMI_FD",
    "PMIX_RANK",
    "PMIX_NAMESPACE",
    "MPI_LOCALNRANKS",
    "SLURM_STEP_ID",
    "SLURM_STEPID",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_NTASKS",
    "SLURM_NPROCS",
    "SLURM_PROCID",
];

/// `bin run iozone` (small) with `vars` as the only launcher variables.
fn launched(sb: &Sandbox, bin: &Path, vars: &[(&str, &str)]) -> Output {
    let target = sb.target();
    let mut cmd = Command::new(bin);
    cmd.args(small_iozone(target.to_str().unwrap(), &[])).env("IOMATRIX_DB", sb.db()).current_dir(sb.dir.path());
    cmd.env(crate::helpers::BUSY_VAR, "off");
    for v in LAUNCH_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(vars.iter().copied()).stdin(Stdio::null());
    bounded(cmd, Duration::from_secs(60)).0
}

/// A task of srun (a job step of 2 tasks) or of a PMI launcher whose tasks would each run alone is
/// refused with exit 2 naming `srun --mpi=pmix` and the MPI build, before anything is stored: a
/// build without MPI under any such launcher, and an MPI build under srun without a PMI plugin or
/// under a launcher whose PMI this MPI does not speak (its world is this one process). A Slurm batch
/// script (no job step) is no launch: it runs as usual.
#[test]
fn a_launch_whose_tasks_would_each_run_alone_is_refused_naming_srun_pmix() {
    let srun = [("SLURM_STEP_ID", "0"), ("SLURM_STEP_NUM_TASKS", "2"), ("SLURM_NTASKS", "2"), ("SLURM_PROCID", "0")];
    let srun_old = [("SLURM_STEPID", "3"), ("SLURM_NPROCS", "4"), ("SLURM_PROCID", "1")];
    let pmi = [("PMI_SIZE", "2"), ("PMI_RANK", "0")];
    let batch = [("SLURM_NTASKS", "2"), ("SLURM_PROCID", "0")];
    let plain = PathBuf::from(env!("CARGO_BIN_EXE_iomatrix"));
    let mut bins = vec![(plain, false)];
    // The MPI build is optional here: its own cases are a skip where MPI is missing.
    if let Some(mpi) = mpi_binary() {
        bins.push((mpi, true));
    }
    for (bin, with_mpi) in bins {
        let which = if with_mpi { "MPI build" } else { "build without MPI" };
        for vars in [&srun[..], &srun_old[..], &pmi[..]] {
            let sb = Sandbox::new();
            let out = launched(&sb, &bin, vars);
            assert_usage_error(&out, "`srun --mpi=pmix`");
            let (_, stderr) = text(&out);
            assert!(stderr.contains("--features mpi"), "{which} {vars:?}: names the MPI build: {stderr}");
            if !with_mpi {
                assert!(stderr.contains("built without MPI"), "{which} {vars:?}: {stderr}");
            } else if vars == &srun[..] {
                assert!(stderr.contains("without a PMI plugin"), "{which} {vars:?}: {stderr}");
            } else if vars == &pmi[..] {
                assert!(stderr.contains("MPI sees this one alone"), "{which} {vars:?}: {stderr}");
            }
            assert!(!sb.db().exists(), "{which} {vars:?}: nothing stored");
        }
        let sb = Sandbox::new();
        let out = launched(&sb, &bin, &batch);
        assert_success(&out);
        assert_eq!(sb.last_run()["run"]["conditions"]["clients"], 1, "{which}: a batch script runs alone");
    }
}

/// Commands that are not runs never initialise MPI, in the MPI build too: with Open MPI told to use a
/// transport that does not exist (MPI_Init would fail) and an interface it cannot find (MPI_Init would
/// warn, as under the lab's settings), `runs`, `show`, `report`, `compare` and `db check` work and
/// say nothing of MPI. Under mpirun, such a command is done once, by the first task.
#[test]
fn show_runs_report_and_compare_never_initialise_mpi() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    for _ in 0..2 {
        sb.iozone_ok(&["--files", "256k", "--records", "64k", "--tests", "write"]);
    }
    let report = sb.dir.path().join("r.md");
    for args in [
        &["runs"][..],
        &["show", "1"],
        &["show", "1", "--json"],
        &["report", "1", "-o", report.to_str().unwrap()],
        &["compare", "1", "2"],
        &["db", "check"],
    ] {
        let mut cmd = Command::new(&bin);
        cmd.args(args)
            .env("IOMATRIX_DB", sb.db())
            .env(crate::helpers::BUSY_VAR, "off")
            .env("OMPI_MCA_pml", "no-such-transport")
            .env("OMPI_MCA_btl_tcp_if_include", "10.254.254.0/24")
            .current_dir(sb.dir.path())
            .stdin(Stdio::null());
        let (out, _) = bounded(cmd, Duration::from_secs(60));
        let (_, stderr) = text(&out);
        assert_success(&out);
        for word in ["MPI", "ORTE", "PMIX", "btl_tcp_if_include", "pml"] {
            assert!(!stderr.contains(word), "{args:?} initialised MPI: {stderr}");
        }
    }
    let (out, _) = mpirun(&sb, 2, &[bin.to_str().unwrap(), "runs"], Duration::from_secs(60));
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert_eq!(stdout.lines().filter(|l| l.contains("iozone")).count(), 2, "each run listed once: {stdout}");
}
