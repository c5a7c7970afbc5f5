//! Every host described (issue 34): each MPI rank's host (CPU, RAM, kernel, its folder's file
//! system, the interface toward the server with its speed, MTU, driver and tbf rate), the lab's
//! server from the facts `lab/up` publishes, `--describe server=FILE` where the server cannot be
//! looked into, compare naming a host's changed link, and the cache verdict weighing the
//! server's RAM.

use crate::helpers::*;
use crate::lab_fixture::{Lab, Shared};
use crate::multihost::{bounded, hosts, lab_command, lab_with_hosts};
use serde_json::Value;
use std::time::Duration;

/// `mpirun` on the lab's hosts with the lab's state folder passed on (rank 0 reads the lab's
/// server facts there), running `args`.
fn mpirun_with_lab_state(lab: &Lab, sb: &Sandbox, bin: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = lab_command(lab, sb, "mpirun");
    cmd.env("IOMATRIX_LAB_STATE", lab.var("IOMATRIX_LAB_STATE"));
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", "3"])
        .args(["-x", "IOMATRIX_DB", "-x", "IOMATRIX_LAB_STATE"])
        .arg(bin)
        .args(args);
    bounded(cmd, Duration::from_secs(180)).0
}

fn host_environments(run: &Value) -> Vec<Value> {
    run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no client_hosts: {}", run["run"]["environment"]))
        .iter()
        .map(|h| h["environment"].clone())
        .collect()
}

/// The "done when": `show --json` of a 3-host lab run holds each host's environment, the
/// lab's server is described from its published facts, and a compare of two runs whose host 3
/// differs only in its link rate (10 Mbit/s, then unshaped) names that difference.
#[test]
fn a_3_host_lab_run_stores_each_hosts_environment_and_compare_names_a_changed_link_rate() {
    let Some((lab, bin)) = lab_with_hosts(3, "none,none,10mbit", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let server = lab.var("IOMATRIX_LAB_SERVER").to_string();
    let args = ["run", "iozone", "--target", &nfs, "--files", "64k", "--records", "64k", "--tests", "write"];
    let out = mpirun_with_lab_state(&lab, &sb, &bin, &args);
    assert_success(&out);
    let first = sb.last_run();
    let lab_hosts = hosts(&lab);
    let envs = host_environments(&first);
    assert_eq!(envs.len(), 3, "one entry per rank");
    let machine_ram = first["run"]["environment"]["ram_bytes"].as_u64().unwrap();
    let getconf = std::process::Command::new("getconf").arg("_NPROCESSORS_ONLN").output().expect("getconf");
    let online_cpus: u64 = String::from_utf8_lossy(&getconf.stdout).trim().parse().expect("a CPU count");
    for (i, (env, (name, _, _, veth))) in envs.iter().zip(&lab_hosts).enumerate() {
        let what = format!("rank {i} on {name}: {env}");
        assert!(env["kernel"].as_str().is_some_and(|k| !k.is_empty()), "{what}");
        assert_eq!(env["cpu_count"].as_u64(), Some(online_cpus), "the host's CPUs, not the rank's binding: {what}");
        assert_eq!(env["ram_bytes"].as_u64(), Some(machine_ram), "the lab's hosts share this machine's RAM: {what}");
        assert_eq!(env["folder"]["fs_type"], "nfs (iomatrix client)", "{what}");
        assert_eq!(env["folder"]["mount_source"], server.as_str(), "{what}");
        let nic = &env["nic"];
        assert_eq!(nic["name"], veth.as_str(), "the host's own veth carries the route to the server: {what}");
        assert_eq!(nic["toward"], server.as_str(), "{what}");
        assert_eq!(nic["driver"], "veth", "{what}");
        assert!(nic["mtu"].as_u64().is_some_and(|m| m >= 576), "{what}");
        let shaped = if i == 2 { "10Mbit" } else { "not shaped" };
        assert_eq!(nic["link_rate"], shaped, "--host-link none,none,10mbit: {what}");
        // Both directions: the host's own end shapes what it sends, the lab's bridge end (which
        // the rank cannot see) what it receives; the lab says the latter.
        assert_eq!(nic["receive_rate"], shaped, "--host-link shapes what the host receives too: {what}");
    }
    // The lab's server, from the facts lab/up published in its state folder.
    let described = &first["run"]["environment"]["server"];
    assert!(described["described_by"].as_str().unwrap().starts_with("lab ("), "{described}");
    assert_eq!(described["facts"]["address"], server.as_str());
    let kib = described["facts"]["ram_bytes"].as_str().and_then(|r| r.strip_suffix('k')?.parse::<u64>().ok());
    assert_eq!(kib.map(|k| k * 1024), Some(machine_ram), "MemTotal as the server's namespace reads it: {described}");
    assert!(described["facts"]["nfs_export_fs"].as_str().is_some_and(|f| !f.is_empty()), "{described}");
    assert!(described["facts"]["nfs_export_options"].as_str().unwrap().contains("Squash = No_Root_Squash"));
    let id = first["run"]["id"].to_string();
    let (shown, _) = text(&sb.run(&["show", &id]));
    assert!(shown.contains("hosts: 3 rank(s)"), "{shown}");
    let third = &lab_hosts[2];
    assert!(shown.contains(&format!("NIC {} toward {server} (veth,", third.3)), "{shown}");
    assert!(shown.contains(", link 10Mbit out, 10Mbit in"), "{shown}");
    assert!(shown.contains("server: described by lab ("), "{shown}");

    // Host 3 unshaped (both ends of its veth, as lab/up shaped them), and the same run again.
    let (_, _, netns, veth) = third;
    let untouched = std::process::Command::new("ip")
        .args(["netns", "exec", netns, "tc", "qdisc", "del", "dev", veth, "root"])
        .status()
        .expect("tc");
    assert!(untouched.success());
    let out = mpirun_with_lab_state(&lab, &sb, &bin, &args);
    assert_success(&out);
    let second = sb.last_run();
    assert_eq!(host_environments(&second)[2]["nic"]["link_rate"], "not shaped");
    let out = sb.run(&["compare", &id, &second["run"]["id"].to_string()]);
    assert_success(&out);
    let (compared, _) = text(&out);
    let line = compared
        .lines()
        .find(|l| l.contains("client_hosts[2].environment.nic.link_rate"))
        .unwrap_or_else(|| panic!("compare names host 3's link rate: {compared}"));
    assert!(line.contains("10Mbit") && line.contains("not shaped"), "{line}");
    assert!(
        !compared.contains("client_hosts[0].environment.nic.link_rate")
            && !compared.contains("client_hosts[1].environment.nic.link_rate"),
        "hosts 1 and 2 did not change: {compared}"
    );
}

fn describe(sb: &Sandbox, name: &str, text: &str) -> String {
    let path = sb.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `--describe server=FILE`: stored as the run's server and shown; malformed lines refused by
/// number (exit 2) and every hostile file refused before anything is made.
#[test]
fn a_server_described_by_file_is_stored_and_shown_and_bad_files_are_refused() {
    let sb = Sandbox::new();
    let good = describe(
        &sb,
        "server.txt",
        "# seed 003's server, from its lscpu\ncpu_model = Intel Xeon E5-2620\ncpu_count=12\nram_bytes=64g\n\
         export_options=rw,sync,no_subtree_check\n",
    );
    let flag = format!("server={good}");
    sb.iozone_ok(&["--files", "64k", "--records", "64k", "--tests", "write", "--describe", &flag]);
    let run = sb.last_run();
    let server = &run["run"]["environment"]["server"];
    assert_eq!(server["described_by"], format!("--describe server={good}"));
    assert_eq!(server["facts"]["cpu_model"], "Intel Xeon E5-2620");
    assert_eq!(server["facts"]["ram_bytes"], "64g");
    assert_eq!(server["facts"]["export_options"], "rw,sync,no_subtree_check");
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(shown.contains("server: described by --describe server="), "{shown}");
    assert!(shown.contains("cpu_model=Intel Xeon E5-2620"), "{shown}");
    let runs_before = sb.runs_json()["runs"].as_array().unwrap().len();

    let refused = |flag: &str, needle: &str| {
        let out = sb.run(&["run", "iozone", "--target", sb.target().to_str().unwrap(), "--describe", flag]);
        assert_usage_error(&out, needle);
    };
    let bad = describe(&sb, "bad.txt", "cpu_count=2\n\nthe server is a big one\n");
    refused(&format!("server={bad}"), "line 3: `the server is a big one` is not KEY=VALUE");
    let twice = describe(&sb, "twice.txt", "ram_bytes=1g\nram_bytes=2g\n");
    refused(&format!("server={twice}"), "line 2: ram_bytes is given again (first on line 1)");
    let no_size = describe(&sb, "nosize.txt", "ram_bytes=plenty\n");
    refused(&format!("server={no_size}"), "line 1: ram_bytes=plenty is no size");
    refused(&format!("host={good}"), "write --describe server=FILE");
    refused("server=", "name the file");
    refused(&format!("server={}", sb.dir.path().join("missing.txt").display()), "missing.txt");
    refused("server=/dev/zero", "/dev/zero");
    let sparse = sb.dir.path().join("sparse.txt");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    refused(&format!("server={}", sparse.display()), "bound of a server description");
    refused(&format!("server={}", sb.db().display()), "server description");
    let out =
        sb.run(&["run", "iozone", "--target", sb.target().to_str().unwrap(), "--describe", &flag, "--describe", &flag]);
    assert_usage_error(&out, "given twice");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs_before, "a refusal stores no run");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// The cache verdict of a run through the protocol client weighs the server's RAM where it is
/// known (the lab's facts, or --describe), and says it is unknown where it is not.
#[test]
fn the_cache_verdict_weighs_the_servers_ram_when_it_is_known() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let args = ["run", "iozone", "--target", &nfs, "--files", "64k", "--records", "64k", "--tests", "write"];
    let verdict = |extra: &[&str], lab_state: bool| {
        let mut cmd = sb.cmd();
        if lab_state {
            cmd.env("IOMATRIX_LAB_STATE", lab.var("IOMATRIX_LAB_STATE"));
        } else {
            cmd.env_remove("IOMATRIX_LAB_STATE");
        }
        let out = cmd.args(args).args(extra).output().expect("run iomatrix");
        assert_success(&out);
        let run = sb.last_run();
        (text(&out).0, run["run"]["conditions"]["files_vs_ram"].as_str().unwrap().to_string())
    };
    // Nothing known of the server: the verdict cannot weigh its cache.
    let (said, condition) = verdict(&[], false);
    assert!(condition.starts_with("unknown: the server's RAM"), "{condition}");
    assert!(said.contains("whose own cache may serve what it is asked"), "{said}");
    // The lab's facts: a 64 KiB file fits in the server's RAM (this machine's).
    let (said, condition) = verdict(&[], true);
    assert_eq!(condition, "all files fit in the server's RAM");
    assert!(said.contains("every file fits in the server's RAM"), "{said}");
    // A server described with 16 KiB of RAM: the 64 KiB file is more than twice it.
    let small = describe(&sb, "tiny.txt", "ram_bytes=16k\n");
    let (said, condition) = verdict(&["--describe", &format!("server={small}")], true);
    assert_eq!(condition, "files exceed the server's RAM");
    assert!(said.contains("the files are at least twice the server's RAM (16 KiB)"), "{said}");
}
