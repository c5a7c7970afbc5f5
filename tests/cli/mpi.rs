//! MPI ranks as clients, with Open MPI's `mpirun` on this host (skipped with
//! a message where mpirun or the MPI headers are missing). The MPI build is
//! made once, by `cargo build --features mpi --bin iomatrix-mpi` into the test build's own target
//! folder and profile: it reuses every artifact that the feature leaves alone (all but the crates
//! above iomatrix-coord), where a release build of its own cost CI about 15 CPU-minutes. A run of
//! the whole binary starts it at its first sandbox, in the background ([`start_build_early`]).

use crate::clients::{assert_barrier_held, small_iozone};
use crate::helpers::*;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, Once, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The MPI build's program name: its file name, and what its processes (the ranks) show in
/// /proc/PID/comm. Tests that look for ranks on a host look for this name.
pub(crate) const MPI_PROGRAM: &str = "iomatrix-mpi";

/// How the MPI build went: the program, a skip's reason (no MPI here), or the build's failure.
#[derive(Clone)]
enum Built {
    Program(PathBuf),
    Skip(&'static str),
    Failed(String),
}

/// The MPI build, made once per binary: by the first test that asks, or early ([`start_build_early`]).
static BUILT: OnceLock<Built> = OnceLock::new();

/// The build while it runs: its process group (0 when none runs) and whether a test waits for it.
/// An early build starts at the lowest CPU priority and is raised to the normal one as soon as a
/// test waits; a build still running when the binary exits is killed. Held while the build's
/// process is reaped, so its group is never addressed after it is gone.
static BUILDING: Mutex<Building> = Mutex::new(Building { group: 0, waited_for: false });

struct Building {
    group: i32,
    waited_for: bool,
}

impl Building {
    /// Normal CPU priority for the build's whole group (cargo and its compilers), now and for the
    /// compilers it starts later (they inherit cargo's).
    fn hurry(&mut self) {
        self.waited_for = true;
        if self.group != 0 {
            // SAFETY: setpriority(2) on the build's own process group, which is not reaped yet.
            unsafe { libc::setpriority(libc::PRIO_PGRP, self.group as libc::id_t, 0) };
        }
    }
}

/// The MPI build of iomatrix, or None: a skip of the calling test, with the
/// reason (each test that asks, not only the first). A failed build fails each test that asks.
pub fn mpi_binary() -> Option<PathBuf> {
    // An early build may still run at the lowest priority: a test waits for it now.
    BUILDING.lock().unwrap_or_else(PoisonError::into_inner).hurry();
    match BUILT.get_or_init(|| build(0)).clone() {
        Built::Program(program) => Some(program),
        Built::Skip(why) => {
            skip(why);
            None
        }
        Built::Failed(why) => panic!("{why}"),
    }
}

/// Starts the MPI build in the background, at the lowest CPU priority (nice 19), when this binary
/// runs all its tests (no name filter) as root (who may raise the priority again, as CI runs it):
/// called by the first sandbox, so the build uses the CPU
/// that the tests before the first MPI test leave idle (they wait on links, servers and disks),
/// where it used to start at that test and hold one or both test threads for minutes. The tests
/// it runs beside get the CPU first; the first MPI test raises it back to normal priority and
/// waits. Nothing else changes: the same `cargo build`, once, and each MPI test uses its program.
pub fn start_build_early() {
    static STARTED: Once = Once::new();
    if !is_root() || !runs_every_test() {
        return;
    }
    STARTED.call_once(|| {
        iomatrix_testkit::at_end(stop_unfinished_build);
        std::thread::spawn(|| BUILT.get_or_init(|| build(19)));
    });
}

/// True when this test binary runs all its tests: no name filter among its arguments, no --list or
/// --ignored (libtest's options that take a value are skipped with it).
fn runs_every_test() -> bool {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test-threads" | "--logfile" | "--skip" | "--color" | "--format" | "-Z" | "--shuffle-seed" => {
                args.next();
            }
            "--list" | "--ignored" | "--exact" => return false,
            option if option.starts_with('-') => {}
            _filter => return false,
        }
    }
    true
}

/// `cargo build --features mpi --bin iomatrix-mpi` into the test build's own target folder and
/// profile, at CPU priority `nice`, in a process group of its own.
fn build(nice: i32) -> Built {
    if !have("mpirun") || !have("mpicc") {
        return Built::Skip("MPI tests need mpirun and mpicc (apt-get install openmpi-bin libopenmpi-dev)");
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // target/PROFILE/iomatrix: the test build's folder, whichever profile and target folder it used.
    let profile_dir = PathBuf::from(env!("CARGO_BIN_EXE_iomatrix")).parent().expect("a folder").to_path_buf();
    let target = profile_dir.parent().expect("the target folder");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--features", "mpi", "--bin", MPI_PROGRAM, "--target-dir"]).arg(target);
    if profile_dir.ends_with("release") {
        cmd.arg("--release");
    }
    // RUSTC_BOOTSTRAP as the test build had it, not as this run has it: cargo hashes it into every
    // crate, and tests/slowest.sh sets it only so that libtest takes --report-time.
    match option_env!("RUSTC_BOOTSTRAP") {
        Some(value) => cmd.env("RUSTC_BOOTSTRAP", value),
        None => cmd.env_remove("RUSTC_BOOTSTRAP"),
    };
    cmd.current_dir(&root).stdin(Stdio::null()).process_group(0);
    // SAFETY: setpriority(2) in the child before exec: one system call, async-signal-safe.
    unsafe { cmd.pre_exec(move || niced(nice)) };
    let status = {
        let mut building = BUILDING.lock().unwrap_or_else(PoisonError::into_inner);
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => return Built::Failed(format!("cannot start cargo for the MPI build: {e}")),
        };
        building.group = child.id() as i32;
        if building.waited_for {
            building.hurry();
        }
        drop(building);
        wait_then_reap(child)
    };
    match status {
        Ok(s) if s.success() => Built::Program(profile_dir.join(MPI_PROGRAM)),
        Ok(s) => Built::Failed(format!("the MPI build failed ({s}; needs libopenmpi-dev, clang, libclang-dev)")),
        Err(e) => Built::Failed(format!("waiting for the MPI build: {e}")),
    }
}

fn niced(nice: i32) -> std::io::Result<()> {
    // SAFETY: setpriority(2) on this process; no memory involved.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Waits for the build to end without reaping it (waitid's WNOWAIT), then, holding [`BUILDING`],
/// marks it ended and reaps it: nothing addresses its group once its pid may be reused.
fn wait_then_reap(mut child: std::process::Child) -> std::io::Result<std::process::ExitStatus> {
    // SAFETY: a zeroed siginfo_t is a valid value for waitid to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let ended = loop {
        // SAFETY: waitid(2) on our own child, with a valid siginfo_t; it does not reap (WNOWAIT).
        if unsafe { libc::waitid(libc::P_PID, child.id(), &mut info, libc::WEXITED | libc::WNOWAIT) } == 0 {
            break Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            break Err(error);
        }
    };
    let mut building = BUILDING.lock().unwrap_or_else(PoisonError::into_inner);
    building.group = 0;
    ended?;
    child.wait()
}

/// At the binary's exit: a build nobody waited for (every MPI test failed or was skipped before
/// asking) is killed with its compilers, not left running.
fn stop_unfinished_build() {
    let group = BUILDING.lock().unwrap_or_else(PoisonError::into_inner).group;
    if group != 0 {
        // SAFETY: kill(2) on the build's process group, which is not reaped yet.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// `mpirun -np N --oversubscribe ARGS`, killed with its ranks after `limit`.
pub(crate) fn mpirun(sb: &Sandbox, np: usize, args: &[&str], limit: Duration) -> (Output, Duration) {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "-np", &np.to_string()])
        .args(args)
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let begun = Instant::now();
    let child = cmd.spawn().expect("start mpirun");
    let pgid = child.id() as i32;
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("wait for mpirun"));
    while !waiter.is_finished() {
        if begun.elapsed() > limit {
            // SAFETY: kill(2) on the process group we created; no memory involved.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            panic!("mpirun ran past {limit:?}: killed it and its ranks");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (waiter.join().unwrap(), begun.elapsed())
}

#[test]
fn four_ranks_are_four_clients_in_their_own_folders() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        bin.to_str().unwrap(),
        "run",
        "iozone",
        "--target",
        target.to_str().unwrap(),
        "--files",
        "1m",
        "--records",
        "64k",
        "--tests",
        "write,read",
        "--keep",
        "--before",
        "echo $IOMATRIX_RANK > rank.txt",
    ];
    let (out, _) = mpirun(&sb, 4, &args, Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 4);
    assert_eq!(run["run"]["status"], "complete");
    let cells = cells(&run);
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_barrier_held(c, 4);
        let ranks: Vec<u64> =
            c["client_figures"].as_array().unwrap().iter().map(|f| f["rank"].as_u64().unwrap()).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
        assert_eq!(c["bytes"].as_u64().unwrap(), 4 << 20);
    }
    let workdir = sb.leftovers().pop().expect("kept working folder");
    for rank in 0..4 {
        let seen = std::fs::read_to_string(workdir.join(format!("client-{rank}/rank.txt"))).unwrap();
        assert_eq!(seen.trim(), rank.to_string());
    }
}

#[test]
fn a_failing_rank_is_recorded_and_the_others_go_on() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let extra =
        ["--before", "if [ \"$IOMATRIX_RANK\" = 2 ]; then mkdir iozone.tmp; fi", "--on-client-error", "continue"];
    let args = [&[bin.to_str().unwrap()][..], &small_iozone(target.to_str().unwrap(), &extra)].concat();
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    for c in cells(&sb.last_run()) {
        assert_eq!(c["client_figures"].as_array().unwrap().len(), 2);
        assert_eq!(c["metrics"]["failed_clients"][0]["rank"], 2);
        assert!(c["metrics"]["failed_clients"][0]["message"].as_str().unwrap().contains("Is a directory"));
    }
}

#[test]
fn killing_a_rank_mid_cell_ends_the_run_in_bounded_time_and_keeps_finished_cells() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let pids = sb.dir.path().join("pids");
    std::fs::create_dir(&pids).unwrap();
    let hook = format!("echo $PPID > {}/$IOMATRIX_RANK", pids.display());
    // Six cells of two seconds each.
    let args = [
        bin.to_str().unwrap(),
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k,8k,16k,32k,64k,128k",
        "--duration",
        "2s",
        "--file-size",
        "8m",
        "--before",
        &hook,
    ];
    let killer = {
        let (pids, db) = (pids.clone(), sb.db());
        std::thread::spawn(move || {
            // Once two cells are stored, kill rank 2 in the middle of the third.
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if stored_cells_in(&db) >= 2 {
                    std::thread::sleep(Duration::from_millis(700));
                    let pid: i32 = std::fs::read_to_string(pids.join("2")).unwrap().trim().parse().unwrap();
                    // SAFETY: kill(2) on the rank's pid, which its own hook wrote.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            false
        })
    };
    let (out, took) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert!(killer.join().unwrap(), "two cells were never stored: {}", text(&out).1);
    let (_, stderr) = text(&out);
    assert!(!out.status.success(), "{stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(stderr.contains("rank 2") && stderr.contains("signal 9"), "mpirun names the dead rank: {stderr}");
    let run = sb.last_run();
    assert_ne!(run["run"]["status"], "complete");
    let kept = cells(&run).len();
    assert!((2..6).contains(&kept), "the finished cells are kept: {kept}");
}

#[test]
fn a_build_without_mpi_under_mpirun_says_to_rebuild() {
    if !have("mpirun") {
        return skip("needs mpirun (apt-get install openmpi-bin)");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    let (out, _) = mpirun(
        &sb,
        2,
        &[env!("CARGO_BIN_EXE_iomatrix"), "run", "iozone", "--target", target.to_str().unwrap()],
        Duration::from_secs(60),
    );
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("built without MPI") && stderr.contains("--features mpi"), "{stderr}");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn ranks_of_different_versions_are_refused() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let bin = bin.to_str().unwrap();
    let t = target.to_str().unwrap();
    let args = [bin, "run", "iozone", "--target", t, ":", "-np", "1", "env", "IOMATRIX_PRETEND_VERSION=0.0.1", bin];
    let args = [&args[..], &["run", "iozone", "--target", t]].concat();
    let (out, _) = mpirun(&sb, 1, &args, Duration::from_secs(60));
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("different versions") && stderr.contains("rank 1 runs 0.0.1"), "{stderr}");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn clients_flag_under_mpirun_is_a_usage_error() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [bin.to_str().unwrap(), "run", "iozone", "--target", target.to_str().unwrap(), "--clients", "2"];
    let (out, _) = mpirun(&sb, 2, &args, Duration::from_secs(60));
    let (_, stderr) = text(&out);
    assert!(stderr.contains("each MPI rank is one client"), "{stderr}");
    assert!(!out.status.success());
}

#[test]
fn three_ranks_walk_three_trees_in_one_backup_cell() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let mut sizes = Vec::new();
    for rank in 0..3u64 {
        let tree = target.join(format!("client-{rank}"));
        std::fs::create_dir_all(&tree).unwrap();
        for i in 0..=rank {
            std::fs::write(tree.join(format!("f{i}")), vec![7u8; 50_000 * (rank as usize + 1)]).unwrap();
        }
        sizes.push(((rank + 1), 50_000 * (rank + 1) * (rank + 1)));
    }
    let args = [bin.to_str().unwrap(), "run", "backup", "--target", target.to_str().unwrap(), "--warm"];
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    let cells = cells(&run);
    assert_eq!(cells.len(), 1);
    let c = &cells[0];
    assert_barrier_held(c, 3);
    let figures = c["client_figures"].as_array().unwrap();
    for (rank, (f, (files, bytes))) in figures.iter().zip(&sizes).enumerate() {
        assert_eq!(f["rank"], rank);
        assert_eq!((f["files"].as_u64(), f["bytes"].as_u64()), (Some(*files), Some(*bytes)), "rank {rank}");
    }
    assert_eq!(c["bytes"].as_u64().unwrap(), sizes.iter().map(|s| s.1).sum::<u64>());
}

#[test]
fn bonnie_flags_under_mpirun_run_one_client_per_rank() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    // -f1: 1 MiB per-char a rank, not bonnie++'s 3: all 12 tests still run on both ranks.
    let args =
        [bin.to_str().unwrap(), "bonnie", "-d", target.to_str().unwrap(), "-s", "4", "-r", "2", "-n", "1", "-f1"];
    let (out, _) = mpirun(&sb, 2, &args, Duration::from_secs(120));
    assert_success(&out);
    assert!(text(&out).0.contains("------Sequential Output------"), "{}", text(&out).0);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 2);
    let cells = cells(&run);
    assert_eq!(cells.len(), 12);
    for c in &cells {
        assert_barrier_held(c, 2);
        let figures = c["client_figures"].as_array().unwrap();
        let ranks: Vec<u64> = figures.iter().map(|f| f["rank"].as_u64().unwrap()).collect();
        assert_eq!(ranks, [0, 1], "{}", c["test"]);
        assert_eq!(c["ops"].as_u64(), Some(figures.iter().map(|f| f["ops"].as_u64().unwrap()).sum()));
    }
    assert!(sb.leftovers().is_empty());
}

/// --tolerance under mpirun: rank 0 hands every rank each pass of noisy
/// cells, so every sample is measured by every rank, on the access specs
/// (which rank 0 decides from the stored figures) and on Bonnie (whose
/// whole set runs again).
#[test]
fn noisy_cells_are_measured_again_by_every_rank() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let noisy = ["--repeat", "2", "--tolerance", "0.000001%", "--max-repeats", "3"];
    let access = [bin.to_str().unwrap(), "run", "access", "--target", t, "--bs", "4k,64k", "--file-size", "1m"];
    let bonnie = [bin.to_str().unwrap(), "run", "bonnie", "--target", t, "--size", "1m", "--allow-cache", "--fast"];
    for (suite, base, settings) in [("access", &access[..], 2), ("bonnie", &bonnie[..], 4)] {
        let more: &[&str] = if suite == "access" { &["--bytes", "1m"] } else { &["--files", "0"] };
        let (out, _) = mpirun(&sb, 2, &[base, more, &noisy[..]].concat(), Duration::from_secs(180));
        assert_success(&out);
        assert!(text(&out).1.contains("measuring them again"), "{suite}: {}", text(&out).1);
        let run = sb.last_run();
        assert_eq!(run["run"]["status"], "complete", "{suite}");
        let cells = cells(&run);
        assert_eq!(cells.len(), settings * 3, "{suite}: every cell has --max-repeats samples");
        assert_eq!(run["run"]["total_cells"].as_u64(), Some(cells.len() as u64));
        for c in &cells {
            assert_barrier_held(c, 2);
            let ranks: Vec<u64> =
                c["client_figures"].as_array().unwrap().iter().map(|f| f["rank"].as_u64().unwrap()).collect();
            assert_eq!(ranks, [0, 1], "{suite}: every pass ran on both ranks");
        }
    }
    assert!(sb.leftovers().is_empty());
}

/// A network namespace reached over a veth pair from this one, with no
/// service in it: a host that refuses every connection. Removed on drop.
struct UnreachableHost {
    netns: String,
    veth: String,
    address: String,
}

impl UnreachableHost {
    fn new() -> Option<UnreachableHost> {
        let id = std::process::id() % 200 + 20;
        let host = UnreachableHost {
            netns: format!("iomx-mpi-{id}"),
            veth: format!("iomxm{id}"),
            address: format!("10.213.{id}.2"),
        };
        let ns = host.netns.clone();
        let peer = format!("{}p", host.veth);
        let steps: [Vec<String>; 6] = [
            vec!["netns".into(), "add".into(), ns.clone()],
            vec![
                "link".into(),
                "add".into(),
                host.veth.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                peer.clone(),
            ],
            vec!["link".into(), "set".into(), peer.clone(), "netns".into(), ns.clone()],
            vec!["addr".into(), "add".into(), format!("10.213.{id}.1/24"), "dev".into(), host.veth.clone()],
            vec!["link".into(), "set".into(), host.veth.clone(), "up".into()],
            vec![
                "-n".into(),
                ns.clone(),
                "addr".into(),
                "add".into(),
                format!("{}/24", host.address),
                "dev".into(),
                peer.clone(),
            ],
        ];
        for step in
            steps.iter().chain([vec!["-n".into(), ns.clone(), "link".into(), "set".into(), peer, "up".into()]].iter())
        {
            let ok = Command::new("ip").args(step).status().is_ok_and(|s| s.success());
            if !ok {
                skip(format!("cannot make a network namespace (needs root; ip {})", step.join(" ")));
                return None; // drop removes what was made
            }
        }
        Some(host)
    }
}

impl Drop for UnreachableHost {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and with it ours.
        let _ = Command::new("ip").args(["netns", "delete", &self.netns]).status();
        let _ = Command::new("ip").args(["link", "delete", &self.veth]).stderr(Stdio::null()).status();
    }
}

#[test]
fn a_hostfile_with_an_unreachable_host_fails_with_mpis_own_error() {
    let Some(bin) = mpi_binary() else { return };
    if !have("ssh") {
        return skip("Open MPI starts remote ranks with ssh (apt-get install openssh-client)");
    }
    let Some(host) = UnreachableHost::new() else { return };
    let sb = Sandbox::new();
    let hostfile = sb.dir.path().join("hosts");
    std::fs::write(&hostfile, format!("{} slots=2\n", host.address)).unwrap();
    let target = sb.target();
    let args = [
        "--hostfile",
        hostfile.to_str().unwrap(),
        "--mca",
        "plm_rsh_args",
        "-o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no",
        bin.to_str().unwrap(),
    ];
    let run = [&args[..], &small_iozone(target.to_str().unwrap(), &[])].concat();
    let (out, took) = mpirun(&sb, 2, &run, Duration::from_secs(90));
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains(&host.address), "mpirun should name the host it could not reach: {stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty(), "no run stored");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn three_ranks_each_run_their_connections_in_every_fileserver_phase() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let args = [
        bin.to_str().unwrap(),
        "run",
        "fileserver",
        "--target",
        t,
        "--connections",
        "2",
        "--files-per-connection",
        "3",
        "--sizes",
        "8k,16k",
    ];
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    let phases = cells(&run);
    assert_eq!(phases.len(), 2);
    for c in &phases {
        assert_barrier_held(c, 3);
        let clients = c["metrics"]["clients"].as_array().unwrap();
        assert_eq!(clients.iter().map(|f| f["rank"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(c["metrics"]["done"]["files"], 3 * 2 * 3);
        assert_eq!(c["bytes"].as_u64(), Some(clients.iter().map(|f| f["bytes"].as_u64().unwrap()).sum()));
        // Every rank's histograms crossed MPI and were merged exactly.
        for (op, summary) in c["metrics"]["ops"].as_object().unwrap() {
            let sum: u64 = clients.iter().map(|f| f["ops"][op].as_u64().unwrap()).sum();
            assert_eq!(summary["count"].as_u64(), Some(sum), "{op}");
            assert!(clients.iter().all(|f| f["ops"][op].as_u64() == Some(sum / 3)), "{op}: {clients:?}");
        }
        let sum: f64 = clients.iter().map(|f| f["total_kib_per_sec"].as_f64().unwrap()).sum();
        assert!((c["metrics"]["kib_per_sec_sum_of_clients"].as_f64().unwrap() - sum).abs() <= 1e-9 * sum);
    }
    // Rank 2's folder made unusable before it starts: it fails every phase, the others' are kept.
    let spoil = ["--before", "if [ \"$IOMATRIX_RANK\" = 2 ]; then cd .. && rmdir client-2 && : > client-2; fi"];
    let (out, _) =
        mpirun(&sb, 3, &[&args[..], &spoil, &["--on-client-error", "continue"]].concat(), Duration::from_secs(120));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    for c in &cells(&sb.last_run()) {
        assert_barrier_held(c, 3);
        let ranks: Vec<u64> =
            c["metrics"]["clients"].as_array().unwrap().iter().map(|f| f["rank"].as_u64().unwrap()).collect();
        assert_eq!(ranks, [0, 1]);
        assert_eq!(c["metrics"]["failed_clients"][0]["rank"], 2);
        assert!(c["metrics"]["failed_clients"][0]["message"].as_str().unwrap().contains("client-2: not a folder"));
    }
    assert!(sb.leftovers().is_empty());
}

#[test]
fn rank_0s_live_line_sums_every_rank_and_names_the_slowest() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        bin.to_str().unwrap(),
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "64k",
        "--file-size",
        "4m",
        "--duration",
        "8s",
    ];
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_success(&out);
    let (_, stderr) = text(&out);
    // Without a terminal the live line goes out every five seconds.
    let live = stderr.lines().find(|l| l.contains("live:")).unwrap_or_else(|| panic!("no live line: {stderr}"));
    assert!(live.contains("summed over 3 of 3 ranks") && live.contains("slowest rank"), "{live}");
    // Every rank is heard with what it did, not a zero.
    assert!(!live.contains(": 0 IOPS"), "{live}");
}

#[test]
fn the_live_line_hears_every_rank_in_every_cell_not_only_the_first() {
    // Before: only rank 0's client told its process a cell had begun, so the other ranks went on
    // sending the first cell's index and, from the second cell on, the line summed 1 of 3 ranks.
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        bin.to_str().unwrap(),
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "64k,128k",
        "--file-size",
        "4m",
        "--duration",
        "7s",
    ];
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_success(&out);
    let (_, stderr) = text(&out);
    // Without a terminal the live line goes out every five seconds: at least one in each cell.
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("live:")).collect();
    assert!(lines.iter().any(|l| l.contains("128k")), "no live line in the second cell: {stderr}");
    for line in &lines {
        assert!(line.contains("summed over 3 of 3 ranks"), "{line}\n{stderr}");
    }
}

#[test]
fn three_ranks_each_run_their_connections_in_every_personality_phase() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let args = [
        bin.to_str().unwrap(),
        "run",
        "personality",
        "netware-2008",
        "--target",
        t,
        "--connections",
        "2",
        "--files",
        "3",
    ];
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    let phases = cells(&run);
    assert_eq!(phases.len(), 2);
    for c in &phases {
        assert_barrier_held(c, 3);
        let clients = c["metrics"]["clients"].as_array().unwrap();
        assert_eq!(clients.iter().map(|f| f["rank"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2]);
        // 3 ranks x 2 connections x (4k + 8k + 16k).
        assert_eq!(c["bytes"], 3 * 2 * 28 * 1024);
        assert_eq!(c["bytes"].as_u64(), Some(clients.iter().map(|f| f["bytes"].as_u64().unwrap()).sum()));
        assert_eq!(c["clients"], 6, "every rank's connections");
        // Every rank's histograms crossed MPI and were merged exactly.
        let ops: u64 = c["metrics"]["ops"].as_object().unwrap().values().map(|s| s["count"].as_u64().unwrap()).sum();
        assert_eq!(c["ops"].as_u64(), Some(ops));
        assert_eq!(c["ops"].as_u64(), Some(clients.iter().map(|f| f["ops"].as_u64().unwrap()).sum()));
        assert!(
            (c["metrics"]["fairness"]["jain"].as_f64().unwrap() - 1.0).abs() < 1e-9,
            "equal work: {}",
            c["metrics"]
        );
    }
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// `--dbench-loadfile` under mpirun: each rank reads the load file at the
/// same path and checks its operation count against rank 0's, replays it
/// from its connections in its own folder, and the ranks' figures merge.
#[test]
fn three_ranks_replay_a_dbench_load_file_each_in_their_own_folders() {
    let Some(bin) = mpi_binary() else { return };
    let client_txt = std::path::Path::new("/usr/share/dbench/client.txt");
    if !client_txt.is_file() {
        skip("/usr/share/dbench/client.txt is missing (Debian's dbench package)".to_string());
        return;
    }
    let sb = Sandbox::new();
    let head: String =
        std::fs::read_to_string(client_txt).unwrap().lines().take(3000).flat_map(|l| [l, "\n"]).collect();
    let file = sb.dir.path().join("client-3000.txt");
    std::fs::write(&file, &head).unwrap();
    // tmpfs where this may mount one; the temporary folder otherwise (the same replay either way).
    let mnt = Mount::try_virtual_fs("tmpfs", "size=512m").ok();
    let target = mnt.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let args = [
        bin.to_str().unwrap(),
        "run",
        "personality",
        "--dbench-loadfile",
        file.to_str().unwrap(),
        "--as-fast-as-possible",
        "--connections",
        "2",
        "--target",
        target.to_str().unwrap(),
    ];
    let (out, _) = mpirun(&sb, 3, &args, Duration::from_secs(180));
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    let replay = cells(&run);
    assert_eq!(replay.len(), 1, "one replay cell");
    let c = &replay[0];
    let m = &c["metrics"];
    assert_barrier_held(c, 3);
    assert_eq!(m["dbench"]["mismatches"], 0, "{m}");
    let clients = m["clients"].as_array().unwrap();
    assert_eq!(clients.iter().map(|f| f["rank"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(c["clients"], 6, "every rank's connections");
    // Every operation line, once per connection of every rank, merged exactly.
    let lines: u64 = head.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')).count() as u64;
    let ops = m["ops"].as_object().unwrap();
    let counted: u64 = ops.values().map(|s| s["count"].as_u64().unwrap()).sum();
    assert_eq!(c["ops"].as_u64(), Some(counted));
    assert_eq!(counted, 3 * 2 * lines, "{}", serde_json::to_string(ops).unwrap());
    assert_eq!(c["ops"].as_u64(), Some(clients.iter().map(|f| f["ops"].as_u64().unwrap()).sum()));
    let creates = head.lines().filter(|l| l.starts_with("NTCreateX")).count() as u64;
    assert_eq!(ops["NTCreateX"]["count"].as_u64(), Some(3 * 2 * creates));
    assert!(crate::helpers::leftovers(&target).is_empty(), "{:?}", crate::helpers::leftovers(&target));
}
