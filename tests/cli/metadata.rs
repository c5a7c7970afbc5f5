//! `iomatrix run metadata`: mdtest's phases on real folders, from one client and three, with
//! both of mdtest's rates checked against the clients' own figures, the tree and the items'
//! names checked on disk, the stonewall's count, failures by errno on a full tmpfs, a stopped
//! run, and show, compare and sweep over real runs.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn metadata(sb: &Sandbox, target: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "metadata", "--target", target.to_str().unwrap()];
    all.extend_from_slice(args);
    sb.run(&all)
}

/// The phases `run metadata` runs when none is chosen, in its order (the crate's own list): every
/// phase but find, which runs only when asked (IO500's).
pub(crate) fn phases_run_by_default() -> Vec<&'static str> {
    use iomatrix_metadata::Phase;
    Phase::ALL.into_iter().filter(|p| *p != Phase::Find).map(Phase::name).collect()
}

/// The stored phase records of the last run, by cell name.
fn phases(sb: &Sandbox) -> Vec<(String, Value, Value)> {
    cells(&sb.last_run())
        .into_iter()
        .map(|c| (c["test"].as_str().unwrap().to_string(), c["metrics"]["phase"].clone(), c["state"].clone()))
        .collect()
}

/// mdtest's two rules, recomputed from the clients' own items and seconds.
fn check_rates(name: &str, p: &Value) {
    let clients = p["clients"].as_array().unwrap();
    let slowest = clients.iter().map(|c| c["seconds"].as_f64().unwrap()).fold(0.0, f64::max);
    let items: u64 = clients.iter().map(|c| c["items"].as_u64().unwrap()).sum();
    assert_eq!(p["items"].as_u64(), Some(items), "{name}: {p}");
    let io500 = p["rate_all_over_slowest"].as_f64().unwrap();
    assert!((io500 - items as f64 / slowest).abs() <= 1e-6 * io500, "{name}: {io500} vs {items}/{slowest}");
    if !name.starts_with("tree-") {
        let fewest = clients.iter().map(|c| c["items"].as_u64().unwrap()).min().unwrap();
        let summary = p["rate_slowest_times_clients"].as_f64().unwrap();
        let expected = fewest as f64 / slowest * clients.len() as f64;
        assert!((summary - expected).abs() <= 1e-6 * expected, "{name}: {summary} vs {expected}");
    }
    let l = &p["latency"];
    let (p50, p99, p999, max) = (
        l["p50"].as_f64().unwrap(),
        l["p99"].as_f64().unwrap(),
        l["p999"].as_f64().unwrap(),
        l["max"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99 && p99 <= p999 && p999 <= max, "{name}: {l}");
}

#[test]
fn trust_metadata_every_phase_with_one_and_three_clients() {
    let sb = Sandbox::new();
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=64m").ok();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    for clients in ["1", "3"] {
        let out = metadata(&sb, &target, &["--items", "60", "--depth", "1", "--branch", "2", "--clients", clients]);
        assert_success(&out);
        let (stdout, _) = text(&out);
        assert!(stdout.contains("Metadata phases") && stdout.contains("ops/s (SUMMARY)"), "{stdout}");
        let n: u64 = clients.parse().unwrap();
        let stored = phases(&sb);
        let names: Vec<&str> = stored.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, phases_run_by_default());
        for (name, p, state) in &stored {
            assert_eq!(state["kind"], "complete", "{name}: {state}");
            assert!(p["failures"].as_object().unwrap().is_empty(), "{name}: {p}");
            let expected = match name.as_str() {
                // One shared tree of 3 folders, made and removed by client 0.
                "tree-create" | "tree-remove" => 3,
                // Each client lists the 3 folders.
                "dir-readdir" => 3 * n,
                _ => 60 * n,
            };
            assert_eq!(p["items"].as_u64(), Some(expected), "{name}: {p}");
            check_rates(name, p);
        }
        assert!(sb.leftovers().is_empty() || tmpfs.is_some());
    }
    if let Some(m) = &tmpfs {
        assert!(leftovers(&m.point).is_empty());
    }
}

/// Every path below `dir`, relative to it.
fn tree_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

fn kept_test_dir(sb: &Sandbox) -> PathBuf {
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let dir = kept[0].join("test-dir.0-0");
    assert!(dir.is_dir(), "{}", dir.display());
    dir
}

#[test]
fn trust_metadata_names_and_tree_shapes_on_disk_are_mdtests() {
    let create = "tree-create,dir-create,file-create";
    // Shared (mdtest's default): one tree, every client's items side by side.
    let sb = Sandbox::new();
    assert_success(&metadata(&sb, &sb.target(), &["--items", "2", "--clients", "2", "--phases", create, "--keep"]));
    let names = tree_below(&kept_test_dir(&sb));
    assert_eq!(
        names,
        [
            "mdtest_tree.0",
            "mdtest_tree.0/dir.mdtest.0.0",
            "mdtest_tree.0/dir.mdtest.0.1",
            "mdtest_tree.0/dir.mdtest.1.0",
            "mdtest_tree.0/dir.mdtest.1.1",
            "mdtest_tree.0/file.mdtest.0.0",
            "mdtest_tree.0/file.mdtest.0.1",
            "mdtest_tree.0/file.mdtest.1.0",
            "mdtest_tree.0/file.mdtest.1.1",
        ]
    );
    // A tree per client (mdtest -u).
    let sb = Sandbox::new();
    let args = ["--items", "1", "--clients", "2", "--files-only", "--per-client-folder", "--keep"];
    assert_success(&metadata(&sb, &sb.target(), &[&args[..], &["--phases", "tree-create,file-create"]].concat()));
    let names = tree_below(&kept_test_dir(&sb));
    assert_eq!(
        names,
        ["mdtest_tree.0.0", "mdtest_tree.0.0/file.mdtest.0.0", "mdtest_tree.1.0", "mdtest_tree.1.0/file.mdtest.1.0"]
    );
    // -z 2 -b 2 -I 3 -L: 7 folders, files in the 4 leaves only, numbered from folder 3's.
    let sb = Sandbox::new();
    let shape = ["--depth", "2", "--branch", "2", "--items-per-folder", "3", "--leaves-only", "--files-only"];
    assert_success(&metadata(
        &sb,
        &sb.target(),
        &[&shape[..], &["--phases", "tree-create,file-create", "--keep"]].concat(),
    ));
    let names = tree_below(&kept_test_dir(&sb));
    let folders = names.iter().filter(|n| !n.contains("file.")).count();
    let files: Vec<&String> = names.iter().filter(|n| n.contains("file.")).collect();
    assert_eq!((folders, files.len()), (7, 12), "{names:?}");
    assert!(names.contains(&"mdtest_tree.0/mdtest_tree.1/mdtest_tree.3/file.mdtest.0.9".to_string()), "{names:?}");
    assert!(names.contains(&"mdtest_tree.0/mdtest_tree.2/mdtest_tree.6/file.mdtest.0.20".to_string()), "{names:?}");
    let p = &phases(&sb)[0].1;
    assert_eq!(p["items"], 7, "tree-create counts the tree's folders: {p}");
}

#[test]
fn trust_metadata_stonewall_sends_every_client_on_to_the_largest_count() {
    let sb = Sandbox::new();
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=512m,nr_inodes=2000000").ok();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let args = [
        "--items",
        "3000000",
        "--files-only",
        "--clients",
        "2",
        "--stonewall",
        "200ms",
        "--phases",
        "file-create,file-stat,file-remove",
        "--per-client-folder",
    ];
    let started = Instant::now();
    let out = metadata(&sb, &target, &args);
    assert_success(&out);
    println!("the stonewalled run took {:?}", started.elapsed());
    check_stonewall(&sb);
    let refused = metadata(&sb, &target, &["--stonewall", "1s", "--branch", "2", "--depth", "1"]);
    assert_usage_error(&refused, "branching factor");
}

/// The stonewall fired in file-create; every client went on to the largest count, and the
/// later phases worked on it.
fn check_stonewall(sb: &Sandbox) {
    let stored = phases(sb);
    let create = &stored[0].1;
    let wall = &create["stonewall"];
    let reached = wall["count_reached"].as_u64().expect("the stonewall fired");
    println!("stonewall: {wall}");
    assert!(reached > 0 && reached < 3_000_000, "{wall}");
    let seconds = wall["seconds"].as_f64().unwrap();
    assert!((0.2..30.0).contains(&seconds), "{wall}");
    // Every client went on to the largest count; the later phases work on it.
    for (name, p, state) in &stored {
        assert_eq!(state["kind"], "complete", "{name}: {state}");
        assert_eq!(p["clients"].as_array().unwrap().len(), 2, "{name}: {p}");
        for c in p["clients"].as_array().unwrap() {
            assert_eq!(c["items"].as_u64(), Some(reached), "{name}: {p}");
        }
    }
}

/// The stonewall's count shared between two MPI ranks, as mdtest's MPI_Allreduce shares it.
#[test]
fn trust_metadata_stonewall_over_two_mpi_ranks() {
    let Some(bin) = crate::mpi::mpi_binary() else { return };
    let sb = Sandbox::new();
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=512m,nr_inodes=2000000").ok();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let args = [
        bin.to_str().unwrap(),
        "run",
        "metadata",
        "--target",
        target.to_str().unwrap(),
        "--items",
        "3000000",
        "--files-only",
        "--stonewall",
        "200ms",
        "--phases",
        "file-create,file-stat,file-remove",
        "--per-client-folder",
    ];
    let (out, took) = crate::mpi::mpirun(&sb, 2, &args, Duration::from_secs(300));
    println!("two ranks took {took:?}");
    assert_success(&out);
    check_stonewall(&sb);
}

#[test]
fn trust_metadata_failures_by_errno_on_a_full_tmpfs_are_a_cell_state() {
    let Some(tiny) = Mount::virtual_fs("tmpfs", "size=1m,nr_inodes=200") else { return };
    let sb = Sandbox::new();
    let out = metadata(&sb, &tiny.point, &["--items", "500", "--files-only", "--no-space-check"]);
    let (stdout, stderr) = text(&out);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let stored = phases(&sb);
    let (_, create, state) = stored.iter().find(|(n, _, _)| n == "file-create").expect("file-create stored");
    let enospc = create["failures"]["ENOSPC"].as_u64().unwrap_or(0);
    assert!(enospc > 0, "{create}\n{stdout}\n{stderr}");
    assert_eq!(state["kind"], "partial", "{state}");
    assert_eq!(state["of"], 500);
    assert_eq!(create["items"].as_u64().unwrap() + enospc, 500, "{create}");
    // A failed item is never a rate: the rate counts the items done.
    check_rates("file-create", create);
    assert!(stdout.contains("ENOSPC"), "{stdout}");
    assert_ne!(out.status.code(), Some(0), "a run with partial cells is not complete");
    assert!(leftovers(&tiny.point).is_empty());
}

#[test]
fn trust_metadata_sigterm_leaves_no_tree_and_nothing_complete() {
    let sb = Sandbox::new();
    let mut child = Running(
        sb.cmd()
            .args(["run", "metadata", "--target", sb.target().to_str().unwrap()])
            .args(["--items", "2000000", "--files-only", "--depth", "1", "--branch", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // file-create is under way with its 4 million files (an iteration's phases run back to back:
    // tree-create is stored with them, so the first file is the sign).
    let deadline = Instant::now() + Duration::from_secs(60);
    let first_file =
        || sb.leftovers().iter().any(|work| work.join("test-dir.0-0/mdtest_tree.0/file.mdtest.0.0").exists());
    while !first_file() {
        assert!(child.0.try_wait().unwrap().is_none(), "the run ended before its first file was made");
        assert!(Instant::now() < deadline, "no file made within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    let status = wait_for_exit(&mut child);
    assert!(!status.success(), "{status:?}");
    let run = sb.last_run();
    assert_ne!(run["run"]["status"], "complete", "{}", run["run"]["status"]);
    // The phase finished before the signal is stored, though its iteration was not over.
    let cells = cells(&run);
    assert!(
        cells.iter().any(|c| c["test"] == "tree-create" && c["state"]["kind"] == "complete"),
        "tree-create finished before the signal and must be stored: {cells:?}"
    );
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

#[test]
fn trust_metadata_show_compare_and_sweep_of_real_runs() {
    let sb = Sandbox::new();
    for items in ["100", "200"] {
        for _ in 0..2 {
            let label = format!("items={items}");
            let out = metadata(&sb, &sb.target(), &["--items", items, "--files-only", "--label", &label]);
            assert_success(&out);
        }
    }
    let show = sb.run(&["show", "1"]);
    assert_success(&show);
    let (stdout, _) = text(&show);
    assert!(stdout.contains("file-create") && stdout.contains("ops/s (IO500)"), "{stdout}");
    assert!(
        stdout.contains("layout: one tree shared by every client") && stdout.contains("rates: IO500's"),
        "{stdout}"
    );
    let compare = sb.run(&["compare", "1,2", "3,4"]);
    assert_success(&compare);
    let (stdout, _) = text(&compare);
    assert!(stdout.contains("file-stat") && stdout.contains("ops/s"), "{stdout}");
    let sweep = sb.run(&["sweep", "1,2", "3,4", "--by", "items"]);
    assert_success(&sweep);
    let (stdout, _) = text(&sweep);
    assert!(stdout.contains("file-remove") && stdout.contains("200"), "{stdout}");
    for clients in ["1", "2"] {
        let label = format!("clients={clients}");
        let args = ["--items", "100", "--files-only", "--clients", clients, "--label", &label];
        assert_success(&metadata(&sb, &sb.target(), &args));
    }
    let sweep = sb.run(&["sweep", "5", "6", "--by", "clients"]);
    assert_success(&sweep);
    let (stdout, _) = text(&sweep);
    assert!(stdout.contains("file-create") && stdout.contains("clients"), "{stdout}");
    assert_usage_error(&metadata(&sb, &sb.target(), &["--phases", "file-copy"]), "no phase 'file-copy'");
}

/// Every phase over a lab server through iomatrix's own protocol client, 2 clients each with
/// its own session; nothing left on the server.
fn every_phase_on_a_server(target: &str, password_file: Option<&str>, state: &Path, protocol: &str) {
    let sb = Sandbox::new();
    let mut cmd = sb.cmd();
    cmd.args(["run", "metadata", "--target", target, "--items-per-folder", "2", "--depth", "1", "--branch", "2"])
        .args(["--clients", "2", "--write-bytes", "100", "--read-bytes", "100"]);
    if let Some(file) = password_file {
        cmd.env("IOMATRIX_SMB_PASSWORD_FILE", file);
    }
    let out = cmd.output().unwrap();
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["remote"]["protocol"], protocol);
    let stored = phases(&sb);
    assert_eq!(stored.len(), 11, "{stored:?}");
    for (name, p, state) in &stored {
        assert_eq!(state["kind"], "complete", "{name}: {state} {p}");
        let expected = match name.as_str() {
            "tree-create" | "tree-remove" => 3,
            "dir-readdir" => 6,
            // 2 items in each of 3 folders, for each of 2 clients.
            _ => 12,
        };
        assert_eq!(p["items"].as_u64(), Some(expected), "{name}: {p}");
        check_rates(name, p);
    }
    assert!(crate::lab_fixture::left_behind(state).is_empty());
}

#[test]
fn trust_metadata_every_phase_over_the_labs_nfs_and_smb_servers() {
    let Some(lab) = crate::lab_fixture::Lab::shared(crate::lab_fixture::Shared::Unshaped) else { return };
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    every_phase_on_a_server(lab.var("IOMATRIX_LAB_NFS"), None, &state, "NFS");
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE");
    every_phase_on_a_server(lab.var("IOMATRIX_LAB_SMB"), Some(password_file), &state, "SMB");
}

#[test]
fn trust_metadata_iterations_neighbours_random_stat_and_sync_run_every_phase_whole() {
    let sb = Sandbox::new();
    let args = [
        "--items",
        "20",
        "--clients",
        "2",
        "--files-only",
        "--iterations",
        "2",
        "--neighbour",
        "1",
        "--random-stat=3",
        "--write-bytes",
        "10",
        "--read-bytes",
        "10",
        "--fsync",
        "--sync-after-phase",
    ];
    assert_success(&metadata(&sb, &sb.target(), &args));
    let stored = phases(&sb);
    let names: Vec<&str> = stored.iter().map(|(n, _, _)| n.as_str()).collect();
    let once = ["tree-create", "file-create", "file-stat", "file-read", "file-remove", "tree-remove"];
    // Each iteration is a sample of its phase's cell: the same name, its iteration in the record.
    assert_eq!(names, [&once[..], &once[..]].concat());
    for (i, (name, p, state)) in stored.iter().enumerate() {
        // Each client stats, reads and removes its neighbour's files: all there, none failed.
        assert_eq!(state["kind"], "complete", "{name}: {state} {p}");
        assert_eq!(p["iteration"].as_u64(), Some((i / 6) as u64), "{name}");
        if name.starts_with("file-") {
            assert_eq!(p["items"], 40, "{name}: {p}");
        }
        check_rates(name, p);
    }
    assert!(sb.leftovers().is_empty());
}
