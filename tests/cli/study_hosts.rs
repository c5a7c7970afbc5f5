//! Studies across hosts: a configuration (or a step) that names `hosts` runs each step as one
//! multi-host run under mpirun (`iomatrix run --hosts`), one that names `slurm` under
//! `srun --mpi=pmix`, on the lab's client hosts; each step is found again by its launch id and is
//! resumable as any step. examples/seed-001.toml runs its IOzone clients across `--hosts`.

use crate::helpers::*;
use crate::lab_fixture::Lab;
use crate::multihost::{bounded, hosts, lab_command, lab_with_hosts, ranks_in};
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

/// A study across hosts, SIGKILLed while a step's ranks are measuring, then run again: the cut
/// step's ranks end on every host (the study's death reaches mpirun and its daemons), and the study
/// completes with the same steps as the same study run without a kill, each done with one complete
/// run across the hosts; the cut run stays on record, marked, as no step's run.
#[test]
fn a_study_across_hosts_killed_mid_step_resumes_to_the_same_steps_as_an_uncut_one() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["smb"]) else { return };
    let sb = Sandbox::new();
    let study_text = |name: &str| {
        format!(
            "version = 1\nname = \"{name}\"\n[[config]]\nname = \"lab\"\ntarget = \"{}\"\nhosts = \"{}\"\n\
             [[step]]\nname = \"small\"\nsuite = \"access\"\nargs = {{ bs = \"4k,16k,64k\", file-size = \"4m\", duration = \"2s\" }}\n\
             [[step]]\nname = \"large\"\nsuite = \"access\"\nargs = {{ bs = \"256k\", file-size = \"4m\", duration = \"2s\" }}\n",
            sb.target().display(),
            lab.var("IOMATRIX_LAB_HOSTFILE")
        )
    };
    let write_named = |name: &str| {
        let file = sb.dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, study_text(name)).unwrap();
        file
    };
    let (cut_file, whole_file) = (write_named("cut"), write_named("whole"));

    // Killed once the first step has stored a cell (its ranks are in its second cell).
    let mut cmd = lab_command(&lab, &sb, bin.to_str().unwrap());
    cmd.arg("--db").arg(sb.db()).args(["study", "run"]).arg(&cut_file);
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("start the study");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while stored_cells_in(&sb.db()) < 1 {
        assert!(child.try_wait().unwrap().is_none(), "the study ended before its first cell was stored");
        assert!(std::time::Instant::now() < deadline, "no cell stored within 120 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    let netns: Vec<String> = hosts(&lab).into_iter().map(|h| h.2).collect();
    assert!(netns.iter().all(|ns| !ranks_in(ns).is_empty()), "a rank measures on every host");
    // SAFETY: kill(2) on our own child's pid, which it keeps until we wait for it.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let gone_by = std::time::Instant::now() + Duration::from_secs(30);
    while netns.iter().any(|ns| !ranks_in(ns).is_empty()) {
        let left: Vec<_> = netns.iter().map(|ns| ranks_in(ns)).collect();
        assert!(std::time::Instant::now() < gone_by, "ranks still running 30 s after the study's kill: {left:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let cut_runs = runs(&sb);
    assert_eq!(cut_runs.len(), 1, "{cut_runs:?}");
    assert_ne!(cut_runs[0]["status"], "complete", "{:?}", cut_runs[0]);

    let again = study(&lab, &sb, &bin, &cut_file, &[]);
    assert!(again.status.success(), "{}", text(&again).1);
    let whole = study(&lab, &sb, &bin, &whole_file, &[]);
    assert!(whole.status.success(), "{}", text(&whole).1);

    let steps_of = |name: &str| {
        let (out, _) = text(&sb.run(&["study", "show", name, "--json"]));
        let shown: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        shown["steps"].as_array().unwrap().clone()
    };
    let (cut_steps, whole_steps) = (steps_of("cut"), steps_of("whole"));
    let outline = |steps: &[Value]| -> Vec<(String, String, String)> {
        steps.iter().map(|s| (s["config"].to_string(), s["step"].to_string(), s["status"].to_string())).collect()
    };
    assert_eq!(outline(&cut_steps), outline(&whole_steps));
    assert!(cut_steps.iter().all(|s| s["status"] == "done"), "{cut_steps:?}");
    for s in cut_steps.iter().chain(&whole_steps) {
        let run = sb.show_json(s["run_id"].as_i64().unwrap());
        assert_eq!(run["run"]["status"], "complete");
        assert_eq!(hosts_of(&run), lab_host_names(&lab), "{s}");
        let cells = run["run"]["cell_results"].as_array().unwrap().len();
        assert_eq!(cells, if s["step"] == "small" { 3 } else { 1 }, "{s}");
    }
    // The cut run is no step's run.
    let cut_id = cut_runs[0]["id"].as_i64().unwrap();
    assert!(cut_steps.iter().all(|s| s["run_id"].as_i64() != Some(cut_id)));
}

/// A study whose configuration runs across hosts, one of them behind a 10 Mbit/s link: the study's
/// report holds each host's figures for every cell of the step and names the slow host as the
/// straggler, as `iomatrix report` of the run alone does.
#[test]
fn a_studys_report_shows_each_hosts_figures_and_names_the_straggler() {
    let Some((lab, bin)) = lab_with_hosts(3, "none,none,10mbit", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let file = write_study(
        &sb,
        &format!(
            "version = 1\nname = \"across\"\n[[config]]\nname = \"lab\"\ntarget = \"{}\"\nhosts = \"{}\"\n\
             [[step]]\nsuite = \"iozone\"\nargs = {{ files = \"1m\", records = \"64k\", tests = \"write,read\" }}\n\
             [report]\nfile = \"study.md\"\n",
            lab.var("IOMATRIX_LAB_NFS"),
            lab.var("IOMATRIX_LAB_HOSTFILE")
        ),
    );
    let out = study(&lab, &sb, &bin, &file, &[]);
    assert!(out.status.success(), "{}", text(&out).1);
    let page = std::fs::read_to_string(sb.dir.path().join("study.md")).expect("the study wrote its report");
    let run = runs(&sb)[0]["id"].clone();
    assert!(page.contains(&format!("### Hosts of run #{run}")), "{page}");
    let (slow_name, slow_addr, _, _) = hosts(&lab).pop().unwrap();
    for (name, addr, _, _) in hosts(&lab) {
        for cell in ["write 1m 64k", "read 1m 64k"] {
            let row = format!("| {cell} | {name} ({addr}) | 1 |");
            assert!(page.lines().any(|l| l.starts_with(&row)), "no row {row}: {page}");
        }
    }
    let stragglers: Vec<&str> = page.lines().filter(|l| l.starts_with("straggler host:")).collect();
    assert_eq!(stragglers.len(), 1, "{page}");
    assert!(stragglers[0].contains(&format!("{slow_name} ({slow_addr})")), "{}", stragglers[0]);
    // The same sentence as the run's own report.
    let alone = sb.dir.path().join("alone.md");
    assert_success(&sb.run(&["report", &run.to_string(), "-o", alone.to_str().unwrap()]));
    let alone = std::fs::read_to_string(alone).unwrap();
    assert!(alone.lines().any(|l| l == stragglers[0]), "{alone}");
}
