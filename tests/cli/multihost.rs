//! MPI ranks on separate hosts: `lab/up --hosts N` makes N client hosts
//! (network namespaces with host names and sshds of their own on a bridge
//! beside the lab's servers), and Open MPI starts one rank on each over ssh,
//! talking TCP over the veths. Root, mpirun and the lab's packages are
//! needed; missing, each test is a skip.

use crate::helpers::*;
use crate::lab_fixture::Lab;
use crate::mpi::mpi_binary;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A lab with `hosts` client hosts (`--host-link` as given), and the MPI build; None is a skip.
pub(crate) fn lab_with_hosts(hosts: usize, host_link: &str, parts: &[&str]) -> Option<(Lab, PathBuf)> {
    if !is_root() {
        skip("ranks on lab hosts need root (namespaces, veth)");
        return None;
    }
    let missing: Vec<&str> =
        ["ssh", "ssh-keygen", "/usr/sbin/sshd", "ip", "tc", "nsenter"].into_iter().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        skip(format!("ranks on lab hosts need {missing:?} (apt-get install openssh-server openssh-client iproute2)"));
        return None;
    }
    let bin = mpi_binary()?;
    let n = hosts.to_string();
    let args = [&["--hosts", n.as_str(), "--host-link", host_link][..], parts].concat();
    let lab = Lab::up(&args)?;
    Some((lab, bin))
}

/// The lab's hosts, in hostfile order: (name, address, namespace, veth).
pub(crate) fn hosts(lab: &Lab) -> Vec<(String, String, String, String)> {
    let words = |k: &str| lab.var(k).split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (names, addrs, nets, veths) = (
        words("IOMATRIX_LAB_HOST_NAMES"),
        words("IOMATRIX_LAB_HOSTS"),
        words("IOMATRIX_LAB_HOST_NETNS"),
        words("IOMATRIX_LAB_HOST_VETHS"),
    );
    (0..names.len()).map(|i| (names[i].clone(), addrs[i].clone(), nets[i].clone(), veths[i].clone())).collect()
}

/// A command with the lab's Open MPI settings (ssh through the lab's sshds, TCP over the host veths),
/// this sandbox's database, the SMB password file, and root allowed; in a process group of its own.
pub(crate) fn lab_command(lab: &Lab, sb: &Sandbox, program: &str) -> Command {
    let mut cmd = Command::new(program);
    for (k, v) in lab.vars().filter(|(k, _)| k.starts_with("OMPI_MCA_")) {
        cmd.env(k, v);
    }
    if let Some((_, file)) = lab.vars().find(|(k, _)| *k == "IOMATRIX_LAB_SMB_PASSWORD_FILE") {
        cmd.env("IOMATRIX_SMB_PASSWORD_FILE", file);
    }
    cmd.env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// Runs `cmd`, killing its whole process group after `limit`; returns its output and how long it ran.
///
/// The output goes to files, not pipes: mpirun puts the ssh that starts a remote daemon in a process
/// group of its own, and one that outlives mpirun (its host cut off) would hold a pipe open, so
/// reading to the pipe's end would wait for it, past any limit.
pub(crate) fn bounded(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let files = tempfile::tempdir().expect("a folder for the output");
    let (out_path, err_path) = (files.path().join("stdout"), files.path().join("stderr"));
    cmd.stdout(std::fs::File::create(&out_path).unwrap()).stderr(std::fs::File::create(&err_path).unwrap());
    let begun = Instant::now();
    let mut child = cmd.spawn().expect("start the command");
    let pgid = child.id() as i32;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for it") {
            break status;
        }
        if begun.elapsed() > limit {
            // SAFETY: kill(2) on the process group we created; no memory involved.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            panic!("ran past {limit:?}: killed it\n{}", std::fs::read_to_string(&err_path).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = begun.elapsed();
    let output =
        Output { status, stdout: std::fs::read(&out_path).unwrap(), stderr: std::fs::read(&err_path).unwrap() };
    (output, took)
}

/// `mpirun --hostfile LAB_HOSTFILE -np N -x IOMATRIX_DB -x IOMATRIX_LAB_STATE BIN ARGS`.
pub(crate) fn mpirun_on_hosts(
    lab: &Lab,
    sb: &Sandbox,
    np: usize,
    bin: &Path,
    args: &[&str],
    limit: Duration,
) -> Output {
    let mut cmd = lab_command(lab, sb, "mpirun");
    // IOMATRIX_LAB_STATE: each rank records the lab server's facts and what its host receives at.
    cmd.env("IOMATRIX_LAB_STATE", lab.var("IOMATRIX_LAB_STATE"));
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", &np.to_string(), "-x", "IOMATRIX_DB"])
        .args(["-x", "IOMATRIX_LAB_STATE"]);
    if lab.vars().any(|(k, _)| k == "IOMATRIX_LAB_SMB_PASSWORD_FILE") {
        cmd.args(["-x", "IOMATRIX_SMB_PASSWORD_FILE"]);
    }
    cmd.arg(bin).args(args);
    bounded(cmd, limit).0
}

/// A file as a process in the namespace reads it (/sys/class/net and /proc/net are the reader's
/// namespace's).
fn cat_in_netns(netns: &str, file: &str) -> String {
    let out = Command::new("ip").args(["netns", "exec", netns, "cat", file]).output().expect("ip netns exec cat");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Bytes the host's end of its veth has sent and received.
fn veth_bytes(netns: &str, veth: &str) -> u64 {
    let read = |what: &str| {
        let file = format!("/sys/class/net/{veth}/statistics/{what}_bytes");
        cat_in_netns(netns, &file).trim().parse::<u64>().unwrap_or(0)
    };
    read("tx") + read("rx")
}

/// The stored run's ranks and their hosts: (rank, host, address).
fn client_hosts(run: &Value) -> Vec<(u64, String, String)> {
    run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no environment.client_hosts: {}", run["run"]["environment"]))
        .iter()
        .map(|h| {
            (h["rank"].as_u64().unwrap(), h["host"].as_str().unwrap().into(), h["address"].as_str().unwrap().into())
        })
        .collect()
}

fn assert_on_the_lab_hosts(run: &Value, lab: &Lab, what: &str) {
    let expected: Vec<(u64, String, String)> =
        hosts(lab).into_iter().enumerate().map(|(rank, (name, addr, _, _))| (rank as u64, name, addr)).collect();
    assert_eq!(client_hosts(run), expected, "{what}: one rank on each lab host, in hostfile order");
}

/// The "done when": iozone and fileserver, each rank on its own lab host, against the folder the
/// hosts share, the lab's NFS server and its SMB server; every run stored with three distinct hosts, and
/// the ranks' traffic on the host veths.
#[test]
fn three_lab_hosts_run_iozone_and_fileserver_on_a_shared_folder_nfs_and_smb() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &[]) else { return };
    let sb = Sandbox::new();
    let shared = sb.target();
    let targets =
        [shared.to_str().unwrap().to_string(), lab.var("IOMATRIX_LAB_NFS").into(), lab.var("IOMATRIX_LAB_SMB").into()];
    let before: Vec<u64> = hosts(&lab).iter().map(|(_, _, ns, v)| veth_bytes(ns, v)).collect();
    let mut runs = 0;
    for target in &targets {
        let iozone =
            ["run", "iozone", "--target", target, "--files", "256k", "--records", "64k", "--tests", "write,read"];
        let fileserver = [
            "run",
            "fileserver",
            "--target",
            target,
            "--connections",
            "2",
            "--files-per-connection",
            "2",
            "--sizes",
            "8k,16k",
        ];
        for (suite, args) in [("iozone", &iozone[..]), ("fileserver", &fileserver[..])] {
            let out = mpirun_on_hosts(&lab, &sb, 3, &bin, args, Duration::from_secs(180));
            assert_success(&out);
            runs += 1;
            let run = sb.last_run();
            let what = format!("{suite} on {target}");
            assert_eq!(run["run"]["status"], "complete", "{what}");
            assert_eq!(run["run"]["conditions"]["clients"], 3, "{what}");
            assert_on_the_lab_hosts(&run, &lab, &what);
            let distinct: std::collections::BTreeSet<String> = client_hosts(&run).into_iter().map(|h| h.1).collect();
            assert_eq!(distinct.len(), 3, "{what}: three distinct hosts");
            for c in cells(&run) {
                crate::clients::assert_barrier_held(&c, 3);
                let figures = if suite == "fileserver" { &c["metrics"]["clients"] } else { &c["client_figures"] };
                let ranks: Vec<u64> = figures.as_array().unwrap().iter().map(|f| f["rank"].as_u64().unwrap()).collect();
                assert_eq!(ranks, [0, 1, 2], "{what}: {}", c["test"]);
            }
            let shown = sb.run(&["show", &run["run"]["id"].to_string()]);
            assert_success(&shown);
            let (text, _) = crate::helpers::text(&shown);
            for (name, addr, _, _) in hosts(&lab) {
                assert!(text.contains(&format!("{name} ({addr})")), "{what}: show groups by host: {text}");
            }
        }
    }
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs);
    for ((name, _, ns, v), was) in hosts(&lab).iter().zip(before) {
        let moved = veth_bytes(ns, v) - was;
        // Every rank's figures and barriers cross its veth (and the NFS/SMB data, and the shared folder's none).
        assert!(moved > 100_000, "{name}: only {moved} bytes crossed its veth");
    }
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// `run ... --hosts HOSTFILE` and `--hosts a,b,c` start mpirun themselves and say the command.
#[test]
fn hosts_flag_starts_mpirun_on_the_lab_hosts_and_says_the_command() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let addrs: Vec<String> = hosts(&lab).into_iter().map(|h| h.1).collect();
    let list = addrs.join(",");
    for (hosts_arg, mpirun_words) in [
        (lab.var("IOMATRIX_LAB_HOSTFILE"), format!("--hostfile {}", lab.var("IOMATRIX_LAB_HOSTFILE"))),
        (&list, format!("--host {list}")),
    ] {
        let mut cmd = lab_command(&lab, &sb, bin.to_str().unwrap());
        cmd.args(["run", "iozone", "--target", target.to_str().unwrap(), "--files", "256k", "--records", "64k"])
            .args(["--tests", "write,read", "--hosts", hosts_arg]);
        let (out, _) = bounded(cmd, Duration::from_secs(120));
        assert_success(&out);
        let (_, stderr) = text(&out);
        let said = stderr
            .lines()
            .find(|l| l.starts_with("iomatrix: starting 3 ranks: mpirun "))
            .unwrap_or_else(|| panic!("{stderr}"));
        // The run's IOMATRIX_ variables in name order: the tests' busy rule (off) before the database.
        let passed = format!("{mpirun_words} -np 3 -x {BUSY_VAR} -x IOMATRIX_DB");
        assert!(said.contains(&passed), "{said}");
        assert!(said.contains(&format!("{} run iozone", bin.display())), "{said}");
        let run = sb.last_run();
        assert_on_the_lab_hosts(&run, &lab, hosts_arg);
        assert!(run["run"]["command_line"].as_str().unwrap().contains("--hosts"), "rerun starts the same hosts");
    }
    report_and_compare_by_host(&sb, &lab);
    assert!(sb.leftovers().is_empty());
}

/// The last run's report names every host with its figures per cell; compare takes two hosts of it.
fn report_and_compare_by_host(sb: &Sandbox, lab: &Lab) {
    let id = sb.last_run()["run"]["id"].to_string();
    let labels: Vec<String> = hosts(lab).into_iter().map(|(name, addr, _, _)| format!("{name} ({addr})")).collect();
    for ext in ["md", "html"] {
        let file = sb.dir.path().join(format!("r.{ext}"));
        assert_success(&sb.run(&["report", &id, "-o", file.to_str().unwrap()]));
        let page = std::fs::read_to_string(&file).unwrap();
        assert!(page.contains(&format!("Hosts of run #{id}")), "{ext}: {page}");
        for label in &labels {
            for test in ["write 256k 64k", "read 256k 64k"] {
                let row = if ext == "md" {
                    format!("| {test} | {label} | 1 | ")
                } else {
                    format!("<tr><td class=\"l\">{test}</td><td class=\"l\">{label}</td><td>1</td><td>")
                };
                assert!(page.contains(&row), "{ext}: no row {row}: {page}");
            }
        }
    }
    let json = sb.dir.path().join("r.json");
    assert_success(&sb.run(&["report", &id, "-o", json.to_str().unwrap()]));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let hosts_doc = &doc["groups"][0]["hosts"][0];
    assert_eq!(hosts_doc["hosts"], serde_json::json!(labels));
    for row in hosts_doc["rows"].as_array().unwrap() {
        assert!(row["sum"].as_f64().unwrap() > 0.0, "{row}");
    }
    // By host name on one side and address on the other: the sides are each host's clients alone.
    let all = hosts(lab);
    let (a, b) = (format!("{id}@{}", all[0].0), format!("{id}@{}", all[1].1));
    let out = sb.run(&["compare", &a, &b, "--json"]);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &doc["comparison"];
    assert_eq!((c["a"].as_str(), c["b"].as_str()), (Some(a.as_str()), Some(b.as_str())));
    let ratios: Vec<f64> = c["matrices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["ratios"].as_array().unwrap().iter().flat_map(|r| r.as_array().unwrap().clone()))
        .map(|r| r.as_f64().unwrap())
        .collect();
    assert_eq!(ratios.len(), 2, "write and read, one cell each: {c}");
    assert!(ratios.iter().all(|r| *r > 0.0 && r.is_finite()), "{c}");
    assert_usage_error(&sb.run(&["compare", &format!("{id}@nosuch"), &a]), &all[2].0);
}

/// Without MPI, `--hosts` is refused before anything starts (no root or lab needed). Only in a build
/// without `mpi`: `cargo test --features mpi` has MPI, and its --hosts starts mpirun.
#[cfg(not(feature = "mpi"))]
#[test]
fn hosts_flag_in_a_build_without_mpi_is_refused_naming_the_feature() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&["run", "iozone", "--target", target.to_str().unwrap(), "--hosts", "a,b,c"]);
    assert_usage_error(&out, "--features mpi");
    assert!(!sb.db().exists(), "nothing stored");
}

/// A host's link cut mid-cell: the run ends within --client-timeout (rank 0 gives up waiting, or mpirun,
/// told by the lab to probe its daemons' connections, finds the host lost first), keeps the finished cells
/// and names the host it lost.
#[test]
fn a_hosts_link_cut_mid_cell_ends_the_run_within_the_timeout_naming_the_host() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let (lost_name, lost_addr, lost_ns, lost_veth) = hosts(&lab).pop().unwrap();
    let args = [
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k,8k,16k,32k,64k,128k",
        "--duration",
        "2s",
        "--file-size",
        "4m",
        "--client-timeout",
        "8s",
    ];
    let cutter = {
        let db = sb.db();
        let (ns, veth) = (lost_ns.clone(), lost_veth.clone());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(90);
            while Instant::now() < deadline {
                if stored_cells_in(&db) >= 2 {
                    std::thread::sleep(Duration::from_millis(700));
                    let cut = Command::new("ip").args(["-n", &ns, "link", "set", &veth, "down"]).status();
                    return (cut.is_ok_and(|s| s.success()), Instant::now());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            (false, Instant::now())
        })
    };
    let mut cmd = lab_command(&lab, &sb, "mpirun");
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", "3", "-x", "IOMATRIX_DB"]).arg(&bin).args(args);
    let (out, _) = bounded(cmd, Duration::from_secs(150));
    let (cut, cut_at) = cutter.join().unwrap();
    let ended_after_cut = cut_at.elapsed();
    let (stdout, stderr) = text(&out);
    assert!(cut, "two cells were never stored: {stderr}");
    assert!(!out.status.success(), "{stdout}{stderr}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed", "{stderr}");
    let kept = cells(&run).len();
    assert!((2..6).contains(&kept), "the finished cells are kept: {kept}");
    let error = run["run"]["error"].as_str().unwrap_or_default().to_string();
    let named = format!("rank 2 on {lost_name} ({lost_addr})");
    assert!(error.contains(&named) || stderr.contains(&named), "names the lost host: {error}\n{stderr}");
    eprintln!("the run ended {:.1} s after the cut (--client-timeout 8s)", ended_after_cut.as_secs_f64());
    // The cell under way (up to 2 s) + the timeout + MPI's abort; not TCP's own timeouts (minutes).
    assert!(ended_after_cut < Duration::from_secs(25), "ended {ended_after_cut:?} after the cut");
}

/// An unreachable host in the hostfile is mpirun's own error, passed through; nothing is stored.
#[test]
fn an_unreachable_host_in_the_hostfile_is_mpiruns_error_and_nothing_is_stored() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    // An address on the hosts' bridge where no host answers.
    let first = hosts(&lab)[0].1.clone();
    let ghost = format!("{}.99", first.rsplit_once('.').unwrap().0);
    let hostfile = sb.dir.path().join("hosts");
    let lines: Vec<String> = hosts(&lab).into_iter().map(|h| h.1).chain([ghost.clone()]).collect();
    std::fs::write(&hostfile, lines.join("\n") + "\n").unwrap();
    let mut cmd = lab_command(&lab, &sb, bin.to_str().unwrap());
    cmd.args(["run", "iozone", "--target", target.to_str().unwrap(), "--files", "256k", "--records", "64k"])
        .args(["--hosts", hostfile.to_str().unwrap()]);
    let (out, took) = bounded(cmd, Duration::from_secs(90));
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains(&ghost), "mpirun names the host it could not reach: {stderr}");
    assert!(stderr.contains("ORTE was unable to reliably start"), "mpirun's own words: {stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty(), "nothing stored");
    assert!(sb.leftovers().is_empty());
}

/// One host behind a 10 Mbit/s link: its ranks finish last, the stonewalled and last-done aggregates
/// differ, and `show` names it as the straggler host with its ratio to the median host.
#[test]
fn a_host_slowed_to_10mbit_is_named_the_straggler() {
    let Some((lab, bin)) = lab_with_hosts(3, "none,none,10mbit", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let args = ["run", "iozone", "--target", &nfs, "--files", "2m", "--records", "64k", "--tests", "write,read"];
    let out = mpirun_on_hosts(&lab, &sb, 3, &bin, &args, Duration::from_secs(180));
    assert_success(&out);
    let run = sb.last_run();
    assert_on_the_lab_hosts(&run, &lab, "10mbit");
    let (slow_name, slow_addr, _, _) = hosts(&lab).pop().unwrap();
    for c in cells(&run) {
        let m = &c["metrics"];
        let (overall, stonewalled) =
            (m["kib_per_sec_overall"].as_f64().unwrap(), m["kib_per_sec_stonewalled"].as_f64().unwrap());
        assert!(stonewalled > 2.0 * overall, "{}: stonewalled {stonewalled} vs overall {overall}", c["test"]);
        let slow = c["client_figures"][2]["moved"]["bytes"].as_f64().unwrap();
        assert!(slow > 0.0);
    }
    let shown = sb.run(&["show", &run["run"]["id"].to_string()]);
    assert_success(&shown);
    let (text, _) = text(&shown);
    let line =
        text.lines().find(|l| l.starts_with("straggler host:")).unwrap_or_else(|| panic!("no straggler named: {text}"));
    assert!(line.contains(&format!("{slow_name} ({slow_addr})")), "{line}");
    let ratio: f64 = line.split(" at ").nth(1).and_then(|r| r.split('x').next()).unwrap().parse().unwrap();
    // 10 Mbit/s against unshaped veths: far below half the median host.
    assert!(ratio < 0.5, "{line}");
    assert_eq!(text.lines().filter(|l| l.starts_with("straggler host:")).count(), 1, "{text}");
    eprintln!("{line}");
    // The report names the same straggler with the same ratio, from the same figures.
    let report = sb.dir.path().join("r.md");
    assert_success(&sb.run(&["report", &run["run"]["id"].to_string(), "-o", report.to_str().unwrap()]));
    let page = std::fs::read_to_string(&report).unwrap();
    assert_eq!(page.lines().filter(|l| l.starts_with("straggler host:")).collect::<Vec<_>>(), [line], "{page}");
}

/// A client's payload rate in bytes per second in a cell: what it moved over its own time.
fn client_rate(cell: &Value, rank: usize) -> f64 {
    let c = &cell["client_figures"][rank];
    let bytes = c["moved"]["bytes"].as_f64().unwrap();
    let ns = c["measured"]["end_ns"].as_f64().unwrap() - c["measured"]["start_ns"].as_f64().unwrap();
    bytes / (ns / 1e9)
}

/// 100 Mbit/s as NFS payload: Ethernet, IP, TCP and RPC headers take about 6-8% of the frames
/// (the lab's iperf3 reaches 95 Mbit/s, lab/README.md), which leaves about 11.5 MB/s.
const PAYLOAD_AT_100MBIT: f64 = 11.5e6;

/// TCP's segments retransmitted and retransmission timeouts so far in a namespace: what tells a
/// lossy link from a host that was not scheduled.
fn tcp_losses(netns: &str) -> (u64, u64) {
    // Each protocol is a line of names followed by a line of values.
    let field = |text: &str, proto: &str, name: &str| -> u64 {
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(proto)).collect();
        lines
            .chunks(2)
            .find_map(|pair| {
                let (names, values) = (pair[0].split_whitespace(), pair.get(1)?.split_whitespace());
                names.zip(values).find(|(n, _)| *n == name).and_then(|(_, v)| v.parse().ok())
            })
            .unwrap_or(0)
    };
    let (snmp, netstat) = (cat_in_netns(netns, "/proc/net/snmp"), cat_in_netns(netns, "/proc/net/netstat"));
    (field(&snmp, "Tcp:", "RetransSegs"), field(&netstat, "TcpExt:", "TCPTimeouts"))
}

/// `--host-link 100mbit` on one host and none on the others: that host writes and reads at 100 Mbit/s
/// (0.60 to 1.10 of 11.5 MB/s of payload, why below) in both directions, its record says so for
/// both, and it is the straggler. iomatrix's own NFS client: no client cache, so the reads cross the link as the writes do.
#[test]
fn a_host_at_100mbit_moves_its_links_rate_both_ways_and_is_the_straggler() {
    let Some((lab, bin)) = lab_with_hosts(3, "100mbit,none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    // 64 MiB each way (about 5.7 s at the link's rate): a moment the host is not scheduled is a
    // small part of its time.
    let args = ["run", "iozone", "--target", &nfs, "--files", "64m", "--records", "1m", "--tests", "write,read"];
    let (slow_name, slow_addr, slow_netns, _) = hosts(&lab)[0].clone();
    // The host retransmits what it writes, the server what the host reads (its other peers'
    // links are not shaped and lose nothing).
    let server_netns = lab.var("IOMATRIX_LAB_NETNS").to_string();
    let before = [tcp_losses(&slow_netns), tcp_losses(&server_netns)];
    let out = mpirun_on_hosts(&lab, &sb, 3, &bin, &args, Duration::from_secs(180));
    assert_success(&out);
    let after = [tcp_losses(&slow_netns), tcp_losses(&server_netns)];
    for (who, (b, a)) in ["the 100 Mbit host", "the server"].iter().zip(before.iter().zip(&after)) {
        eprintln!("{who}'s TCP: {} segments retransmitted, {} retransmission timeouts", a.0 - b.0, a.1 - b.1);
    }
    let run = sb.last_run();
    let nic = |rank: usize| run["run"]["environment"]["client_hosts"][rank]["environment"]["nic"].clone();
    assert_eq!((nic(0)["link_rate"].as_str(), nic(0)["receive_rate"].as_str()), (Some("100Mbit"), Some("100Mbit")));
    for rank in [1, 2] {
        assert_eq!(nic(rank)["receive_rate"], "not shaped", "{}", nic(rank));
    }
    let tests: Vec<String> = cells(&run).iter().map(|c| c["test"].as_str().unwrap().to_string()).collect();
    assert_eq!(tests, ["write", "read"]);
    for c in cells(&run) {
        let slow = client_rate(&c, 0);
        eprintln!(
            "{}: the 100 Mbit host at {:.2} MB/s, the others at {:.1} and {:.1} MB/s",
            c["test"],
            slow / 1e6,
            client_rate(&c, 1) / 1e6,
            client_rate(&c, 2) / 1e6
        );
        // Not above the link's payload rate (+10%): the link is shaped this way. Not far below it:
        // the link, not something else, holds the host back. The client has one record in flight
        // (IOzone's sequential test), so while it waits for a CPU the link idles: on a quiet machine
        // reads and writes both land at 11.7-11.9 MB/s, but a CI run with the whole suite beside it
        // once read at 10.09 MB/s (0.88) with the unshaped hosts slowed to ~280 MB/s, and another CI
        // run's 24-host test reached a third of what a quiet machine does. The floor, 0.60, leaves
        // that load room; that the link is what sets this host apart is the check after it.
        let share = slow / PAYLOAD_AT_100MBIT;
        assert!(
            (0.60..=1.10).contains(&share),
            "{}: {slow:.0} B/s, {share:.3} of the link's payload: above 1.10 the link is not shaped, \
             below 0.60 something other than the link held the host back",
            c["test"]
        );
        for rank in [1, 2] {
            assert!(client_rate(&c, rank) > 2.0 * slow, "{}: rank {rank} not faster than the slowed host", c["test"]);
        }
    }
    let (text, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    let stragglers: Vec<&str> = text.lines().filter(|l| l.starts_with("straggler host:")).collect();
    assert_eq!(stragglers.len(), 1, "{text}");
    assert!(stragglers[0].contains(&format!("{slow_name} ({slow_addr})")), "{}", stragglers[0]);
    assert!(
        text.contains(&format!("on {slow_name} ({slow_addr})")) && text.contains("link 100Mbit out, 100Mbit in"),
        "{text}"
    );
}

/// Seed 001's shape, scaled: 24 client hosts at 100 Mbit/s into a server on 1 Gbit/s. Together they
/// ask 2.4 Gbit/s of a 1 Gbit/s link, so the server's link is what they share: the run's overall rate
/// lies near 1 Gbit/s of payload (never above the line rate), each host well below its own 100 Mbit/s,
/// and the record holds every host's link and the server's.
#[test]
fn seed_001s_shape_24_hosts_at_100mbit_share_a_1gbit_server() {
    let Some((lab, bin)) = lab_with_hosts(24, "100mbit", &["--link", "1gbit", "nfs"]) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let args = ["run", "iozone", "--target", &nfs, "--files", "16m", "--records", "1m", "--tests", "write,read"];
    let out = mpirun_on_hosts(&lab, &sb, 24, &bin, &args, Duration::from_secs(300));
    assert_success(&out);
    let run = sb.last_run();
    let on: Vec<&str> = run["run"]["environment"]["client_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["environment"]["nic"]["receive_rate"].as_str().unwrap())
        .collect();
    assert_eq!(on, ["100Mbit"; 24]);
    assert_eq!(run["run"]["environment"]["server"]["facts"]["link_rate"], "1gbit");
    let line_rate = 1e9 / 8.0;
    for c in cells(&run) {
        let overall = c["metrics"]["kib_per_sec_overall"].as_f64().unwrap() * 1024.0;
        let fastest = (0..24).map(|r| client_rate(&c, r)).fold(0.0, f64::max);
        eprintln!(
            "{}: 24 hosts at {:.1} MB/s overall, the fastest host at {:.2} MB/s",
            c["test"],
            overall / 1e6,
            fastest / 1e6
        );
        assert!(overall <= line_rate, "{}: {overall} B/s beats the server's 1 Gbit/s link", c["test"]);
        // The hosts ran at once, not in turn: together they moved more than two hosts' links could
        // carry. The fraction of the server's line they reach depends on the CPUs, not the links:
        // 79-89% on a quiet machine, 54% and then 34% (42.5 MB/s) in CI runs on 2 busy cores where
        // 24 ranks and the NFS server share them. So the floor is physical, two 100 Mbit/s links
        // (23 MB/s); what the links alone decide is checked below, on the tbf counters.
        let floor = 2.0 * PAYLOAD_AT_100MBIT;
        assert!(
            overall >= floor,
            "{}: {overall:.0} B/s overall is below two hosts' links ({floor:.0} B/s): the hosts did not \
             run at once, or the machine's CPUs, not the links, set the pace",
            c["test"]
        );
        // No host gets its own 100 Mbit/s: the server's link, not the hosts', sets the pace.
        assert!(fastest < 0.8 * PAYLOAD_AT_100MBIT, "{}: a host at {fastest} B/s", c["test"]);
    }
    // What does not depend on the CPUs: every byte the hosts wrote passed the shaped device at the
    // switch's end of the server's link (before the switch, the hosts reached the server unshaped).
    let written = 24.0 * 16.0 * 1024.0 * 1024.0;
    let through_switch = shaped_bytes_sent(&lab, "switch", "dn");
    assert!(
        through_switch >= written,
        "the switch's shaped end sent {through_switch} bytes, the hosts wrote {written}"
    );
    let through_server = shaped_bytes_sent(&lab, "srv", "up");
    assert!(through_server >= written, "the server's shaped end sent {through_server} bytes, the hosts read {written}");
}

/// Bytes sent by the tbf qdisc on the lab's server-link end `iomx-X-{end}` in namespace `iomx-{ns}-X`
/// (`switch` and `dn`: what the hosts send the server; `srv` and `up`: what the server sends them).
fn shaped_bytes_sent(lab: &Lab, ns: &str, end: &str) -> f64 {
    let x = lab.var("IOMATRIX_LAB_NETNS").trim_start_matches("iomx-srv-").to_string();
    let (netns, dev) =
        (if ns == "srv" { format!("iomx-srv-{x}") } else { format!("iomx-{x}-{ns}") }, format!("iomx-{x}-{end}"));
    let out = Command::new("ip")
        .args(["netns", "exec", &netns, "tc", "-s", "qdisc", "show", "dev", &dev])
        .output()
        .expect("tc");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("qdisc tbf"), "no tbf on {dev} in {netns}: {text}");
    let sent = text
        .split_once(" Sent ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{text}"));
    sent.parse().unwrap_or_else(|_| panic!("{text}"))
}

/// The MPI build's processes in a lab host's network namespace (its ranks).
pub(crate) fn ranks_in(netns: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "pids", netns]).output().expect("ip netns pids");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == crate::mpi::MPI_PROGRAM)
        })
        .map(str::to_string)
        .collect()
}

/// SIGTERM, SIGHUP (a study's stop) or SIGINT to `iomatrix run --hosts`, the launcher alone: it
/// passes the stop on to mpirun, every rank stops as on Ctrl-C, the run is stored interrupted with
/// its finished cells, no rank is left on any host, and the launcher exits as a run on one host
/// would (128 + the signal). Before, the launcher died and mpirun measured on to the end.
#[test]
fn a_signal_to_the_hosts_launcher_stops_every_rank_and_the_run_is_stored_interrupted() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["nfs"]) else { return };
    let netns: Vec<String> = hosts(&lab).into_iter().map(|h| h.2).collect();
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129), (libc::SIGINT, 130)] {
        let sb = Sandbox::new();
        let target = sb.target();
        let mut cmd = lab_command(&lab, &sb, bin.to_str().unwrap());
        cmd.args(["run", "access", "--target", target.to_str().unwrap(), "--bs", "4k,8k,16k,32k"])
            .args(["--file-size", "4m", "--duration", "2s", "--hosts", lab.var("IOMATRIX_LAB_HOSTFILE")])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // As from a terminal: SIGHUP at its default, whatever this test runs under (nohup ignores
        // it, and a launcher under nohup rightly ignores a hangup while its parent lives).
        // SAFETY: signal(2) is async-signal-safe and changes only the new process's disposition.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(90);
        while stored_cells_in(&sb.db()) < 1 {
            assert!(child.try_wait().unwrap().is_none(), "signal {signal}: the run ended before its first cell");
            assert!(Instant::now() < deadline, "signal {signal}: no cell stored within 90 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        // Ranks run on every host now: so that their absence below means they ended.
        assert!(netns.iter().all(|ns| !ranks_in(ns).is_empty()), "signal {signal}: a rank measures on every host");
        // SAFETY: kill(2) on our own child's pid (the launcher alone, not its group), not yet reaped.
        unsafe { libc::kill(child.id() as i32, signal) };
        let waited = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(waited.elapsed() < Duration::from_secs(30), "signal {signal}: the launcher still runs after 30 s");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(code), "signal {signal}");
        let run = sb.last_run();
        assert_eq!(run["run"]["status"], "interrupted", "signal {signal}");
        let kept = cells(&run).len();
        assert!((1..4).contains(&kept), "signal {signal}: the finished cells are kept, not every cell ran: {kept}");
        let gone_by = Instant::now() + Duration::from_secs(20);
        while netns.iter().any(|ns| !ranks_in(ns).is_empty()) {
            assert!(
                Instant::now() < gone_by,
                "signal {signal}: ranks left: {:?}",
                netns.iter().map(|n| ranks_in(n)).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `lab/up`'s host flags refuse bad values before anything is made (no root needed).
#[test]
fn lab_up_refuses_bad_host_flags() {
    let up = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lab/up");
    for (args, needle) in [
        (&["--hosts", "three"][..], "--hosts must be a number"),
        (&["--hosts", "51"][..], "at most 50"),
        (&["--hosts", "2", "--host-link", "5mbit"][..], "--host-link takes"),
        (&["--host-link", "100mbit"][..], "add --hosts N"),
    ] {
        let out = Command::new("timeout").arg("30").arg(&up).args(args).output().unwrap();
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// A host's rank killed mid-cell: mpirun ends the job, naming the rank and its host; the finished
/// cells are kept.
#[test]
fn a_hosts_rank_killed_mid_cell_ends_the_run_naming_its_host() {
    let Some((lab, bin)) = lab_with_hosts(3, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let pids = sb.dir.path().join("pids");
    std::fs::create_dir(&pids).unwrap();
    let hook = format!("echo $PPID > {}/$IOMATRIX_RANK", pids.display());
    let args = [
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k,8k,16k,32k,64k,128k",
        "--duration",
        "2s",
        "--file-size",
        "4m",
        "--before",
        &hook,
    ];
    let killer = {
        let (pids, db) = (pids.clone(), sb.db());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(90);
            while Instant::now() < deadline {
                if stored_cells_in(&db) >= 2 {
                    std::thread::sleep(Duration::from_millis(700));
                    // The hosts are namespaces of this machine: the rank's PID is seen from here.
                    let pid: i32 = std::fs::read_to_string(pids.join("1")).unwrap().trim().parse().unwrap();
                    // SAFETY: kill(2) on the rank's PID, which its own hook wrote.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            false
        })
    };
    let mut cmd = lab_command(&lab, &sb, "mpirun");
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", "3", "-x", "IOMATRIX_DB"]).arg(&bin).args(args);
    let (out, took) = bounded(cmd, Duration::from_secs(150));
    let (stdout, stderr) = text(&out);
    assert!(killer.join().unwrap(), "two cells were never stored: {stderr}");
    assert!(!out.status.success(), "{stdout}{stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let (_, addr, _, _) = hosts(&lab)[1].clone();
    assert!(stderr.contains("rank 1") && stderr.contains(&addr) && stderr.contains("signal 9"), "{stderr}");
    let run = sb.last_run();
    assert_ne!(run["run"]["status"], "complete");
    let kept = cells(&run).len();
    assert!((2..6).contains(&kept), "the finished cells are kept: {kept}");
    assert!(pids.join("1").exists());
}

/// The smbd processes in the lab's server namespace: smbd forks one per client session.
fn smbd_in(netns: &str) -> usize {
    let out = Command::new("ip").args(["netns", "pids", netns]).output().expect("ip netns pids");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "smbd"))
        .count()
}

/// Seed 003's load (590 connections) as 4 lab hosts x 148 connections against the lab's Samba, at the
/// study's small sizes with fewer files per connection (4, not 12: the connections are the point, and
/// 592 sessions on 2 cores are the cost): every connection finishes, the server holds a session for
/// each at once, and each rank's peak memory (VmHWM) is printed for docs/clients-and-mpi.md.
#[test]
fn seed_003_load_as_4_hosts_x_148_connections_against_the_labs_samba() {
    let Some((lab, bin)) = lab_with_hosts(4, "none", &["smb"]) else { return };
    let sb = Sandbox::new();
    let hwm = sb.dir.path().join("hwm");
    std::fs::create_dir(&hwm).unwrap();
    // $PPID: the rank that runs the hook; its VmHWM after the last cell is its peak.
    let after = format!("grep VmHWM /proc/$PPID/status > {}/rank-$IOMATRIX_RANK", hwm.display());
    let target = lab.var("IOMATRIX_LAB_SMB").to_string();
    let args = [
        "run",
        "fileserver",
        "--target",
        &target,
        "--connections",
        "148",
        "--files-per-connection",
        "4",
        "--interleave",
        "4",
        "--record",
        "4k",
        "--sizes",
        "16k,64k,256k",
        "--after",
        &after,
    ];
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let counter = {
        let (stop, netns) = (stop.clone(), lab.var("IOMATRIX_LAB_NETNS").to_string());
        std::thread::spawn(move || {
            let (mut most, deadline) = (0, Instant::now() + Duration::from_secs(660));
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                most = most.max(smbd_in(&netns));
                std::thread::sleep(Duration::from_millis(200));
            }
            most
        })
    };
    let begun = Instant::now();
    let out = mpirun_on_hosts(&lab, &sb, 4, &bin, &args, Duration::from_secs(600));
    let took = begun.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let smbd = counter.join().unwrap();
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "complete");
    let distinct: std::collections::BTreeSet<String> = client_hosts(&run).into_iter().map(|h| h.1).collect();
    assert_eq!(distinct.len(), 4, "four distinct hosts");
    for c in cells(&run) {
        let m = &c["metrics"];
        assert_eq!((m["connections_ok"].as_u64(), m["connections_failed"].as_u64()), (Some(592), Some(0)), "{m}");
    }
    // One smbd per session, plus its parent: all 592 connections were open at once.
    assert!(smbd > 592, "at most {smbd} smbd processes in the server's namespace");
    let peaks: Vec<String> = (0..4)
        .map(|rank| std::fs::read_to_string(hwm.join(format!("rank-{rank}"))).unwrap().trim().to_string())
        .collect();
    let (stdout, _) = text(&out);
    let phases: Vec<&str> = stdout.lines().filter(|l| l.contains("phase")).collect();
    eprintln!(
        "seed 003 on 4 hosts x 148 connections: {took:.1?}; smbd processes at most {smbd}; VmHWM per rank {peaks:?}\n{}",
        phases.join("\n")
    );
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

/// `--pin spread` under MPI counts a rank among the ranks on its own host: mapped round robin over
/// 2 hosts, ranks 0 and 2 share a host and take its first and second CPU (by their global rank both
/// took the first: 0 mod 2 = 2 mod 2).
#[test]
fn spread_under_mpi_places_each_rank_by_its_place_on_its_host() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &[]) else { return };
    let allowed = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if allowed < 2 {
        skip("two ranks on one host on two CPUs need a machine with two CPUs");
        return;
    }
    let sb = Sandbox::new();
    let mut cmd = lab_command(&lab, &sb, "mpirun");
    cmd.args(["--hostfile", lab.var("IOMATRIX_LAB_HOSTFILE"), "-np", "4", "--oversubscribe", "--map-by", "node"])
        .args(["--bind-to", "none", "-x", "IOMATRIX_DB", "--tag-output"])
        .arg(&bin)
        .args(["run", "access", "--target", sb.target().to_str().unwrap(), "--bs", "4k", "--file-size", "1m"])
        .args(["--duration", "1s", "--pin", "spread"]);
    let (out, _) = bounded(cmd, Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    let hosts = client_hosts(&run);
    let host_of = |rank: usize| hosts.iter().find(|h| h.0 == rank as u64).expect("every rank's host").1.clone();
    assert_eq!(host_of(0), host_of(2), "--map-by node put ranks 0 and 2 on one host");
    assert_eq!(host_of(1), host_of(3));
    assert_ne!(host_of(0), host_of(1));
    for c in cells(&run) {
        let cpu = |rank: usize| c["client_figures"][rank]["cpu"].as_u64().expect("a stored CPU under --pin spread");
        assert_ne!(cpu(0), cpu(2), "ranks 0 and 2 share a host and were kept on one CPU");
        assert_ne!(cpu(1), cpu(3), "ranks 1 and 3 share a host and were kept on one CPU");
    }
}
