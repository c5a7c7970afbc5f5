//! Launched by Slurm, as HPC sites launch storage benchmarks: `lab/up --hosts N --slurm` makes a
//! real Slurm cluster of the lab's client hosts (munged, slurmctld, a slurmd in each host's
//! namespaces), and `srun --mpi=pmix` or `sbatch` starts the MPI build of iomatrix on them. Root,
//! Open MPI, Slurm and munge are needed; missing, each test is a skip.

use crate::helpers::*;
use crate::lab_fixture::Lab;
use crate::multihost::{bounded, hosts, lab_command, lab_with_hosts};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

/// A lab of three hosts with Slurm, and the MPI build; None is a skip.
pub(crate) fn slurm_lab() -> Option<(Lab, PathBuf)> {
    let missing: Vec<&str> =
        ["munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo"].into_iter().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        skip(format!("Slurm in the lab needs {missing:?} (apt-get install slurmd slurmctld slurm-client munge)"));
        return None;
    }
    lab_with_hosts(3, "none", &["--slurm", "smb"])
}

/// A Slurm command (srun, sbatch) against the lab's cluster, bounded in time.
pub(crate) fn slurm(lab: &Lab, sb: &Sandbox, program: &str, args: &[&str]) -> Output {
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

/// A suite's flags for a small run (after `run SUITE --target DIR`).
fn small(suite: &str) -> &'static [&'static str] {
    match suite {
        "access" => &["--bs", "4k", "--read", "100,0", "--file-size", "8m", "--duration", "1s"],
        "fileserver" => &["--connections", "2", "--files-per-connection", "4", "--sizes", "8k,64k"],
        _ => unreachable!("{suite}"),
    }
}

/// One rank on each of the lab's three hosts, and every rank's figures in every cell.
fn assert_a_rank_on_each_host(run: &Value, lab: &Lab, what: &str) {
    assert_eq!(run["run"]["status"], "complete", "{what}");
    let mut on = ranks_on_hosts(run);
    on.sort();
    let mut names: Vec<String> = hosts(lab).into_iter().map(|(name, ..)| name).collect();
    names.sort();
    assert_eq!(on, names, "{what}");
    assert!(!cells(run).is_empty(), "{what}");
    for cell in cells(run) {
        let figures =
            if run["run"]["suite"] == "fileserver" { &cell["metrics"]["clients"] } else { &cell["client_figures"] };
        let ranks: Vec<u64> = figures.as_array().unwrap().iter().map(|f| f["rank"].as_u64().unwrap()).collect();
        assert_eq!(ranks, [0, 1, 2], "{what}: every rank's figures in {}", cell["test"]);
    }
}

/// The whole path: `lab/up --hosts 3 --slurm`; an access spec and a file-server load, each
/// through `srun --mpi=pmix -N 3 -n 3` and through the example batch script; one stored run each
/// with the three hosts' figures; then `lab/down`, after which no Slurm or munge daemon of the lab,
/// no host namespace and no state folder is left.
#[test]
fn a_3_host_slurm_cluster_runs_access_and_fileserver_by_srun_and_sbatch_and_goes_leaving_nothing() {
    let Some((lab, bin)) = slurm_lab() else { return };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/slurm-run.sbatch");
    for suite in ["access", "fileserver"] {
        // srun
        let sb = Sandbox::new();
        let target = sb.target();
        let run_args = [&["run", suite, "--target", target.to_str().unwrap()][..], small(suite)].concat();
        let args = [&["--mpi=pmix", "-N", "3", "-n", "3", bin.to_str().unwrap()][..], &run_args].concat();
        let out = slurm(&lab, &sb, "srun", &args);
        assert_success(&out);
        let run = the_one_run(&sb);
        assert_a_rank_on_each_host(&run, &lab, &format!("srun {suite}"));
        let (stdout, _) = text(&out);
        assert!(stdout.contains("Hosts ("), "per-host figures printed: {stdout}");
        assert!(sb.leftovers().is_empty());
        // sbatch
        let sb = Sandbox::new();
        let target = sb.target();
        let (db, dir) = (sb.db(), sb.dir.path().to_str().unwrap().to_string());
        let head = ["--wait", "--nodes=3", "--ntasks-per-node=1", "-D", &dir, script.to_str().unwrap()];
        let tail = [bin.to_str().unwrap(), suite, target.to_str().unwrap(), db.to_str().unwrap()];
        let args = [&head[..], &tail[..], small(suite)].concat();
        let out = slurm(&lab, &sb, "sbatch", &args);
        let job_output: String = std::fs::read_dir(sb.dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("iomatrix-") && e.path().is_file())
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        assert!(out.status.success(), "sbatch --wait {suite}: {}\n{job_output}", text(&out).1);
        let run = the_one_run(&sb);
        assert_eq!(run["run"]["labels"], serde_json::json!([["launcher", "sbatch"]]), "the script's label");
        assert_a_rank_on_each_host(&run, &lab, &format!("sbatch {suite}"));
        assert!(job_output.contains("Hosts ("), "the job's output holds the per-host table: {job_output}");
    }
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let netns: Vec<String> = hosts(&lab).into_iter().map(|h| h.2).collect();
    drop(lab);
    let daemons: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(state.to_str().unwrap()))
        .collect();
    assert!(daemons.is_empty(), "processes of the lab left: {daemons:?}");
    let listed =
        String::from_utf8_lossy(&Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).to_string();
    for ns in netns {
        assert!(!listed.split_whitespace().any(|w| w == ns), "namespace {ns} left: {listed}");
    }
    assert!(!state.exists(), "the lab's state folder left: {}", state.display());
}

#[test]
fn srun_without_a_pmi_plugin_is_refused_and_stores_nothing() {
    let Some((lab, bin)) = slurm_lab() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    // The lab's Slurm has MpiDefault=none: without --mpi each task's MPI world is itself alone.
    let run_args = [&["run", "access", "--target", target.to_str().unwrap()][..], small("access")].concat();
    let args = [&["-N", "2", "-n", "2", bin.to_str().unwrap()][..], &run_args].concat();
    let out = slurm(&lab, &sb, "srun", &args);
    assert!(!out.status.success());
    let (_, stderr) = text(&out);
    assert!(stderr.contains("srun started 2 tasks without a PMI plugin"), "{stderr}");
    assert!(stderr.contains("srun --mpi=pmix"), "{stderr}");
    assert!(stderr.contains("Exited with exit code 2"), "every task a usage error: {stderr}");
    assert_eq!(stored_cells(&sb), 0);
}
