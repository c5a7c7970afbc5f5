//! Studies across hosts: a configuration (or a step) that names `hosts` runs each step as one
//! multi-host run under mpirun (`iomatrix run --hosts`), one that names `slurm` under
//! `srun --mpi=pmix`, on the lab's client hosts; each step is found again by its launch id and is
//! resumable as any step. examples/seed-001.toml runs its IOzone clients across `--hosts`.

use crate::helpers::*;
use crate::lab_fixture::Lab;
use crate::multihost::{bounded, hosts, lab_command, lab_with_hosts};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// `BIN --db DB study run FILE ARGS` with the lab's Open MPI (and Slurm) settings.
fn study(lab: &Lab, sb: &Sandbox, bin: &Path, file: &Path, args: &[&str]) -> Output {
    let mut cmd = lab_command(lab, sb, bin.to_str().unwrap());
    if let Some((_, conf)) = lab.vars().find(|(k, _)| *k == "SLURM_CONF") {
        cmd.env("SLURM_CONF", conf);
    }
    cmd.arg("--db").arg(sb.db()).args(["study", "run"]).arg(file).args(args);
    bounded(cmd, Duration::from_secs(300)).0
}

fn write_study(sb: &Sandbox, text: &str) -> PathBuf {
    let file = sb.dir.path().join("across.toml");
    std::fs::write(&file, text).unwrap();
    file
}

/// Every stored run's ranks by host name, in rank order.
fn hosts_of(run: &Value) -> Vec<String> {
    run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no environment.client_hosts: {}", run["run"]["environment"]))
        .iter()
        .map(|h| h["host"].as_str().unwrap().to_string())
        .collect()
}

fn runs(sb: &Sandbox) -> Vec<Value> {
    sb.runs_json()["runs"].as_array().cloned().unwrap_or_default()
}

fn lab_host_names(lab: &Lab) -> Vec<String> {
    hosts(lab).into_iter().map(|(name, ..)| name).collect()
}

#[test]
fn a_configuration_with_hosts_runs_each_step_across_them_and_resumes_without_running_it_again() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["smb"]) else { return };
    let sb = Sandbox::new();
    let file = write_study(
        &sb,
        &format!(
            "version = 1\nname = \"across\"\n[[config]]\nname = \"lab\"\ntarget = \"{}\"\nhosts = \"{}\"\n\
             [[step]]\nsuite = \"iozone\"\nargs = {{ files = \"64k\", records = \"64k\", tests = \"write,read\", clients = 4 }}\n",
            sb.target().display(),
            lab.var("IOMATRIX_LAB_HOSTFILE")
        ),
    );
    let out = study(&lab, &sb, &bin, &file, &[]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("each MPI rank is one client: its --clients 4 is left out"), "{stderr}");
    let stored = runs(&sb);
    assert_eq!(stored.len(), 1, "one run for the one step: {stored:?}");
    let run = sb.show_json(stored[0]["id"].as_i64().unwrap());
    assert_eq!(hosts_of(&run), lab_host_names(&lab), "one rank on each lab host");
    assert!(run["run"]["command_line"].as_str().unwrap().contains("--hosts"), "{}", run["run"]["command_line"]);
    let (shown, _) = text(&sb.run(&["study", "show", "across"]));
    let id = format!("#{}", stored[0]["id"]);
    assert!(
        shown.lines().any(|l| l.contains(" done ") && l.split_whitespace().any(|w| w == id)),
        "the step holds its run: {shown}"
    );
    // Again: the step is done, nothing runs.
    let again = study(&lab, &sb, &bin, &file, &[]);
    assert!(again.status.success(), "{}", text(&again).1);
    assert_eq!(runs(&sb).len(), 1, "a finished step is not run again");
}

#[test]
fn a_configuration_with_slurm_runs_each_step_under_srun_on_its_nodes() {
    if !["srun", "slurmd", "slurmctld", "munged"].iter().all(|t| have(t)) {
        skip("a study under Slurm needs the lab's Slurm (apt-get install slurmd slurmctld slurm-client munge)");
        return;
    }
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["--slurm", "smb"]) else { return };
    let sb = Sandbox::new();
    let file = write_study(
        &sb,
        &format!(
            "version = 1\nname = \"across\"\n[[config]]\nname = \"cluster\"\ntarget = \"{}\"\n\
             slurm = {{ nodes = 2, tasks_per_node = 2 }}\n\
             [[step]]\nsuite = \"access\"\nargs = {{ bs = \"4k\", file-size = \"8m\", duration = \"1s\" }}\n",
            sb.target().display()
        ),
    );
    let out = study(&lab, &sb, &bin, &file, &[]);
    assert!(out.status.success(), "{}", text(&out).1);
    let stored = runs(&sb);
    assert_eq!(stored.len(), 1, "{stored:?}");
    let run = sb.show_json(stored[0]["id"].as_i64().unwrap());
    let mut on = hosts_of(&run);
    on.sort();
    let names = lab_host_names(&lab);
    assert_eq!(on, [names[0].clone(), names[0].clone(), names[1].clone(), names[1].clone()]);
}

#[test]
fn seed_001_runs_its_iozone_clients_across_the_hosts_given() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["smb"]) else { return };
    let sb = Sandbox::new();
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/seed-001.toml");
    let out = study(&lab, &sb, &bin, &example, &["--scale", "small", "--hosts", lab.var("IOMATRIX_LAB_HOSTFILE")]);
    assert!(out.status.success(), "{}", text(&out).1);
    let by_step = |step: &str| {
        runs(&sb)
            .into_iter()
            .find(|r| r["labels"].as_array().unwrap().iter().any(|l| l[0] == "step" && l[1] == step))
            .unwrap_or_else(|| panic!("no run of step {step}"))
    };
    let clients = sb.show_json(by_step("clients")["id"].as_i64().unwrap());
    assert_eq!(hosts_of(&clients), lab_host_names(&lab), "the IOzone clients, one on each host");
    // The access specs stay on this host: one client, no MPI.
    let specs = sb.show_json(by_step("specs")["id"].as_i64().unwrap());
    assert!(specs["run"]["environment"]["client_hosts"].is_null(), "{}", specs["run"]["environment"]["client_hosts"]);
}
