//! `run metadata` from many clients: 2 MPI ranks, ranks on the lab's hosts started by `--hosts`
//! and by Slurm's `srun`, and mdtest's -N (`--neighbour 1`), where each client stats, reads and removes the items of
//! the clients 1, 2 and 3 ranks on: which client touched which item is read from the system
//! calls themselves (strace -f: the thread that made a client's items is that client).

use crate::helpers::*;
use crate::mpi::{mpi_binary, mpirun};
use crate::multihost::{hosts, lab_command, lab_with_hosts};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Every cell of the last run complete, with `clients` clients (ranks 0..clients) and
/// `items` items each in the item phases.
fn check_clients(sb: &Sandbox, clients: u64, items: u64, what: &str) -> Value {
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "complete", "{what}: {}", run["run"]["status"]);
    for cell in cells(&run) {
        let name = cell["test"].as_str().unwrap().to_string();
        let p = &cell["metrics"]["phase"];
        assert!(p["failures"].as_object().unwrap().is_empty(), "{what} {name}: {p}");
        let ranks: Vec<u64> = p["clients"].as_array().unwrap().iter().map(|c| c["client"].as_u64().unwrap()).collect();
        assert_eq!(ranks, (0..clients).collect::<Vec<_>>(), "{what} {name}: {p}");
        if name.starts_with("file-") || (name.starts_with("dir-") && name != "dir-readdir") {
            for c in p["clients"].as_array().unwrap() {
                assert_eq!(c["items"].as_u64(), Some(items), "{what} {name}: {p}");
            }
        }
    }
    run
}

#[test]
fn trust_metadata_two_mpi_ranks_run_every_phase() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    for layout in [&[][..], &["--per-client-folder"][..]] {
        let mut args = vec![bin.to_str().unwrap(), "run", "metadata", "--target", target.to_str().unwrap()];
        // 42 items over 3 folders: 14 in each (mdtest rounds -n down to a multiple of the folders).
        args.extend(["--items", "42", "--depth", "1", "--branch", "2"]);
        args.extend(layout);
        let (out, took) = mpirun(&sb, 2, &args, Duration::from_secs(180));
        println!("2 ranks {layout:?}: {took:?}");
        assert_success(&out);
        let run = check_clients(&sb, 2, 42, &format!("2 ranks {layout:?}"));
        assert_eq!(run["run"]["conditions"]["clients"], 2);
        assert_eq!(cells(&run).len(), 11);
    }
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

#[test]
fn trust_metadata_hosts_flag_runs_a_rank_on_each_lab_host_against_nfs() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let list: Vec<String> = hosts(&lab).into_iter().map(|h| h.1).collect();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let mut cmd = lab_command(&lab, &sb, bin.to_str().unwrap());
    cmd.args(["run", "metadata", "--target", &nfs, "--items", "20", "--hosts", &list.join(",")]);
    let (out, took) = crate::multihost::bounded(cmd, Duration::from_secs(180));
    println!("--hosts over NFS: {took:?}");
    assert_success(&out);
    let run = check_clients(&sb, 2, 20, "--hosts");
    let on: BTreeSet<String> = run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["address"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(on, list.into_iter().collect(), "a rank on each lab host");
}

/// What one thread did to files named `file.mdtest.OWNER.N`, by the kind of system call.
#[derive(Default, Debug)]
struct Touched {
    created: BTreeSet<usize>,
    stated: BTreeSet<usize>,
    read: BTreeSet<usize>,
    removed: BTreeSet<usize>,
}

/// strace -f's lines ("TID syscall(args...") read into what each thread did to which client's files.
fn touched_by_thread(trace: &str) -> BTreeMap<u32, Touched> {
    let mut by = BTreeMap::<u32, Touched>::new();
    for line in trace.lines() {
        let Some((tid, call)) = line.split_once(' ') else { continue };
        let (Ok(tid), Some(at)) = (tid.parse::<u32>(), call.find("file.mdtest.")) else { continue };
        let owner: String = call[at + "file.mdtest.".len()..].chars().take_while(char::is_ascii_digit).collect();
        let Ok(owner) = owner.parse::<usize>() else { continue };
        let t = by.entry(tid).or_default();
        let set = match call.split('(').next().unwrap_or("").trim() {
            "openat" | "open" if call.contains("O_CREAT") => &mut t.created,
            "openat" | "open" => &mut t.read,
            "statx" | "newfstatat" | "stat" | "lstat" => &mut t.stated,
            "unlink" | "unlinkat" => &mut t.removed,
            _ => continue,
        };
        set.insert(owner);
    }
    by
}

#[test]
fn trust_metadata_neighbour_stride_stats_reads_and_removes_the_neighbours_items() {
    if !have("strace") {
        return skip("strace is missing (apt-get install -y strace)");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    let trace = sb.dir.path().join("trace");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e", "trace=openat,open,statx,newfstatat,stat,lstat,unlink,unlinkat", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(["run", "metadata", "--target", target.to_str().unwrap()])
        .args(["--items", "5", "--files-only", "--clients", "4", "--neighbour", "1", "--per-client-folder"])
        .args(["--read-bytes", "1", "--write-bytes", "1"])
        .env("IOMATRIX_DB", sb.db())
        .env(BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null());
    let out = bounded_child(cmd, Duration::from_secs(120));
    assert_success(&out);
    check_clients(&sb, 4, 5, "--neighbour 1");
    let by = touched_by_thread(&std::fs::read_to_string(&trace).unwrap());
    let makers: Vec<(&u32, &Touched)> = by.iter().filter(|(_, t)| !t.created.is_empty()).collect();
    assert_eq!(makers.len(), 4, "a thread per client made its files: {by:?}");
    let mut seen = BTreeSet::new();
    for (tid, t) in makers {
        // The thread that made client c's files is client c: it made no one else's.
        assert_eq!(t.created.len(), 1, "thread {tid}: {t:?}");
        let c = *t.created.first().unwrap();
        seen.insert(c);
        // mdtest's -N 1 over 4 clients: stat client c+1's items, read c+2's, remove c+3's.
        let at = |steps: usize| BTreeSet::from([(c + steps) % 4]);
        println!("client {c} (thread {tid}): {t:?}");
        assert_eq!(t.stated, at(1), "client {c} stats its neighbour's items: {t:?}");
        assert_eq!(t.read, at(2), "client {c} reads the items two on: {t:?}");
        assert_eq!(t.removed, at(3), "client {c} removes the items three on: {t:?}");
    }
    assert_eq!(seen, BTreeSet::from([0, 1, 2, 3]));
}

#[test]
fn trust_metadata_srun_runs_a_rank_on_each_host_of_the_labs_slurm_cluster() {
    let Some((lab, bin)) = crate::slurm::slurm_lab() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        "--mpi=pmix",
        "-N",
        "3",
        "-n",
        "3",
        bin.to_str().unwrap(),
        "run",
        "metadata",
        "--target",
        target.to_str().unwrap(),
    ];
    let out = crate::slurm::slurm(&lab, &sb, "srun", &[&args[..], &["--items", "30"]].concat());
    assert_success(&out);
    let run = check_clients(&sb, 3, 30, "srun");
    let on: BTreeSet<String> = run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap().to_string())
        .collect();
    let names: BTreeSet<String> = hosts(&lab).into_iter().map(|h| h.0).collect();
    assert_eq!(on, names, "a rank on each of the cluster's hosts");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}
