//! Launched by Slurm, as HPC sites launch storage benchmarks: `lab/up --hosts N --slurm` makes a
//! real Slurm cluster of the lab's client hosts (munged, slurmctld, a slurmd in each host's
//! namespaces), and `srun --mpi=pmix` or `sbatch` starts the MPI build of iomatrix on them. Root,
//! Open MPI, Slurm and munge are needed; missing, each test is a skip.

use crate::helpers::*;
use crate::lab_fixture::Lab;
use crate::multihost::{bounded, hosts, lab_command, lab_with_hosts};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A lab of two hosts with Slurm, and the MPI build; None is a skip.
fn slurm_lab() -> Option<(Lab, PathBuf)> {
    let missing: Vec<&str> =
        ["munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo"].into_iter().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        skip(format!("Slurm in the lab needs {missing:?} (apt-get install slurmd slurmctld slurm-client munge)"));
        return None;
    }
    lab_with_hosts(2, "none", &["--slurm", "smb"])
}

/// A Slurm command (srun, sbatch) against the lab's cluster, bounded in time.
fn slurm(lab: &Lab, sb: &Sandbox, program: &str, args: &[&str]) -> Output {
    let mut cmd: Command = lab_command(lab, sb, program);
    cmd.env("SLURM_CONF", lab.var("SLURM_CONF")).args(args);
    bounded(cmd, Duration::from_secs(180)).0
}

/// The run's ranks and their host names, in rank order.
fn ranks_on_hosts(run: &Value) -> Vec<String> {
    run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no environment.client_hosts: {}", run["run"]["environment"]))
        .iter()
        .map(|h| h["host"].as_str().unwrap().to_string())
        .collect()
}

fn the_one_run(sb: &Sandbox) -> Value {
    let runs = sb.runs_json();
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(1), "one stored run: {runs}");
    sb.last_run()
}

fn small_access(target: &Path) -> Vec<&str> {
    vec![
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k",
        "--read",
        "100,0",
        "--file-size",
        "8m",
        "--duration",
        "1s",
    ]
}

/// Both lab hosts, each holding two of the four ranks.
fn assert_two_ranks_on_each_host(run: &Value, lab: &Lab) {
    let mut on = ranks_on_hosts(run);
    assert_eq!(on.len(), 4, "four ranks: {on:?}");
    on.sort();
    let names: Vec<String> = hosts(lab).into_iter().map(|(name, ..)| name).collect();
    assert_eq!(on, [names[0].clone(), names[0].clone(), names[1].clone(), names[1].clone()]);
    for cell in cells(run) {
        assert_eq!(cell["clients"], 4, "every rank's figures in every cell: {cell}");
    }
}

#[test]
fn srun_with_pmix_on_two_hosts_gives_one_stored_run_with_every_rank() {
    let Some((lab, bin)) = slurm_lab() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [&["--mpi=pmix", "-N", "2", "-n", "4", bin.to_str().unwrap()][..], &small_access(&target)].concat();
    let out = slurm(&lab, &sb, "srun", &args);
    assert_success(&out);
    let run = the_one_run(&sb);
    assert_eq!(run["run"]["status"], "complete");
    assert_two_ranks_on_each_host(&run, &lab);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("Hosts (MiB/s)"), "per-host figures printed: {stdout}");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn the_example_batch_script_runs_as_one_stored_run() {
    let Some((lab, bin)) = slurm_lab() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/slurm-access.sbatch");
    let (db, dir) = (sb.db(), sb.dir.path().to_str().unwrap().to_string());
    let args = [
        "--wait",
        "-D",
        &dir,
        script.to_str().unwrap(),
        bin.to_str().unwrap(),
        target.to_str().unwrap(),
        db.to_str().unwrap(),
        "--bs",
        "4k",
        "--read",
        "100,0",
        "--file-size",
        "8m",
        "--duration",
        "1s",
    ];
    let out = slurm(&lab, &sb, "sbatch", &args);
    let job_output: String = std::fs::read_dir(sb.dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("iomatrix-access-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(out.status.success(), "sbatch --wait: {}\n{job_output}", text(&out).1);
    let run = the_one_run(&sb);
    assert_eq!(run["run"]["labels"], serde_json::json!([["launcher", "sbatch"]]), "the script's label");
    assert_two_ranks_on_each_host(&run, &lab);
    assert!(job_output.contains("Hosts (MiB/s)"), "the job's output holds the per-host table: {job_output}");
}

#[test]
fn srun_without_a_pmi_plugin_is_refused_and_stores_nothing() {
    let Some((lab, bin)) = slurm_lab() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    // The lab's Slurm has MpiDefault=none: without --mpi each task's MPI world is itself alone.
    let args = [&["-N", "2", "-n", "2", bin.to_str().unwrap()][..], &small_access(&target)].concat();
    let out = slurm(&lab, &sb, "srun", &args);
    assert!(!out.status.success());
    let (_, stderr) = text(&out);
    assert!(stderr.contains("srun started 2 tasks without a PMI plugin"), "{stderr}");
    assert!(stderr.contains("srun --mpi=pmix"), "{stderr}");
    assert!(stderr.contains("Exited with exit code 2"), "every task a usage error: {stderr}");
    assert_eq!(stored_cells(&sb), 0);
}
