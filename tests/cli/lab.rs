//! The lab itself (`lab/up`, `lab/down`): real Samba, nfs-ganesha, smbnetfs and sshfs in a network
//! namespace behind a veth shaped to 100 Mbit/s; each answers, the link is capped, and `lab/down` leaves
//! nothing behind. Root only, and skipped with a message when a package is missing.

use crate::helpers::{have, is_root, skip};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lab").join(name)
}

/// `timeout SECS CMD ARGS...` with `env` added, output captured.
fn bounded(secs: u32, cmd: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new("timeout")
        .args(["-k", "10", &secs.to_string(), cmd])
        .args(args)
        .envs(env.iter().copied())
        .env(crate::helpers::BUSY_VAR, "off")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd}: {e}"))
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `lab/down` on drop unless the test already did: a failing test cleans up too.
struct LabGuard {
    state: PathBuf,
    down: bool,
}

impl LabGuard {
    fn down(&mut self) -> Output {
        self.down = true;
        bounded(120, script("down").to_str().unwrap(), &["--state", self.state.to_str().unwrap()], &[])
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        if !self.down {
            let _ = self.down();
        }
    }
}

/// Deterministic, incompressible bytes.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0; len];
    iomatrix_random::Generator::seeded(seed).fill(&mut out);
    out
}

fn start_time(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ").and_then(|(_, rest)| rest.split_whitespace().nth(19)).map(str::to_string)
}

fn mounted_under(dir: &Path) -> Vec<String> {
    let prefix = dir.to_str().unwrap();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| m.starts_with(prefix))
        .map(str::to_string)
        .collect()
}

/// iperf3 from here to the server in the lab's namespace (`reverse`: server to here), in bits/s.
fn iperf3(netns: &str, server: &str, reverse: bool) -> f64 {
    // nsenter execs iperf3, so timeout's child is the server itself and takes the SIGTERM it forwards.
    let ns = format!("--net=/run/netns/{netns}");
    let mut srv = Command::new("timeout")
        .args(["60", "nsenter", &ns, "iperf3", "-s", "-1", "-B", server])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start iperf3 -s");
    let mut args = vec!["-c", server, "-t", "3", "-J"];
    if reverse {
        args.push("-R");
    }
    let begun = Instant::now();
    let json = loop {
        let out = bounded(60, "iperf3", &args, &[]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        // Until the server listens, the client is refused (iperf3 -J may still exit 0): retry a few seconds.
        let refused = !out.status.success() || json["error"].as_str().is_some_and(|e| e.contains("connect"));
        if !refused || begun.elapsed() > Duration::from_secs(10) {
            ok(&out, "iperf3");
            break json;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    // SAFETY: kill(2) on our own child's PID.
    unsafe { libc::kill(srv.id() as i32, libc::SIGTERM) };
    let _ = srv.wait();
    json["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no end.sum_received.bits_per_second in iperf3's output: {json}"))
}

#[test]
fn lab_up_and_down_refuse_bad_arguments() {
    let out = bounded(30, script("up").to_str().unwrap(), &["--link", "10mbit"], &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--link must be"), "{out:?}");
    let out = Command::new("timeout")
        .args(["30", script("down").to_str().unwrap()])
        .env_remove("IOMATRIX_LAB_STATE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "lab/down without a state folder: {out:?}");
}

#[test]
fn lab_serves_smb_nfs_and_mounts_over_a_100mbit_link_and_down_leaves_nothing() {
    if !is_root() {
        return skip("the lab needs root (namespaces, veth, mounts)");
    }
    let tools = "smbd smbclient smbpasswd smbnetfs ganesha.nfsd rpcbind nfs-cp nfs-ls sshfs /usr/sbin/sshd ssh-keygen \
                 iperf3 ip tc nsenter unshare fusermount3 timeout";
    let missing: Vec<&str> = tools.split_whitespace().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        return skip(format!("the lab needs {missing:?} (Debian packages, see lab/README.md)"));
    }

    // The state folder is ours, so the guard can take the lab down even if `lab/up` is killed; smbd serves
    // the share as smbtest, who must get through the folders above it.
    let holder = tempfile::tempdir().unwrap();
    std::fs::set_permissions(holder.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let state = holder.path().join("lab");
    let mut guard = LabGuard { state: state.clone(), down: false };

    let began = Instant::now();
    let out =
        bounded(180, script("up").to_str().unwrap(), &["--link", "100mbit", "--state", state.to_str().unwrap()], &[]);
    ok(&out, "lab/up --link 100mbit");
    eprintln!("lab/up took {:.1} s", began.elapsed().as_secs_f64());
    let vars: HashMap<String, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("export ").split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches(|c| c == '\'' || c == '"').to_string()))
        .collect();
    let var = |k: &str| vars.get(k).cloned().unwrap_or_else(|| panic!("lab/up printed no {k}: {vars:?}"));
    assert_eq!(PathBuf::from(var("IOMATRIX_LAB_STATE")), state);
    assert_eq!(var("IOMATRIX_LAB_LINK"), "100mbit");
    let (server, netns, veth) = (var("IOMATRIX_LAB_SERVER"), var("IOMATRIX_LAB_NETNS"), var("IOMATRIX_LAB_VETH"));
    let password_file = var("IOMATRIX_LAB_SMB_PASSWORD_FILE");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&password_file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the password file is private");

    // What lab/up recorded, read before lab/down removes it.
    let record = std::fs::read_to_string(state.join("state")).unwrap();
    let pids: Vec<(String, String, String)> = record
        .lines()
        .filter_map(|l| l.strip_prefix("pid\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect();
    for name in ["smbd", "rpcbind", "ganesha", "smbnetfs", "sshd", "sshfs"] {
        let (pid, start, _) = pids.iter().find(|p| p.2 == name).unwrap_or_else(|| panic!("no {name} in {record}"));
        assert_eq!(start_time(pid).as_ref(), Some(start), "{name} ({pid}) runs");
    }
    assert_eq!(var("IOMATRIX_LAB_SMBD_PID"), pids.iter().find(|p| p.2 == "smbd").unwrap().0);
    assert_eq!(var("IOMATRIX_LAB_GANESHA_PID"), pids.iter().find(|p| p.2 == "ganesha").unwrap().0);

    let work = tempfile::tempdir().unwrap();
    let local = work.path().join("local.bin");
    let data = pattern(3 << 20, 7);
    std::fs::write(&local, &data).unwrap();
    let back = |name: &str| work.path().join(name);

    // SMB through smbclient, with the password from the file (PASSWD_FILE, not the command line).
    let smb = var("IOMATRIX_LAB_SMB");
    let (_, host_port) = smb.split_once('@').unwrap();
    let (host_port, share) = host_port.split_once('/').unwrap();
    let (host, port) = host_port.split_once(':').unwrap();
    assert_eq!(host, server);
    let service = format!("//{host}/{share}");
    let smb_back = back("smb.bin");
    let commands = format!("put {} lab-smb.bin; get lab-smb.bin {}", local.display(), smb_back.display());
    let out = bounded(
        60,
        "smbclient",
        &[&service, "-p", port, "-m", "SMB3", "-c", &commands],
        &[("USER", "smbtest"), ("PASSWD_FILE", &password_file)],
    );
    ok(&out, "smbclient put/get");
    assert!(std::fs::read(&smb_back).unwrap() == data, "smbclient read back what it wrote");
    assert!(std::fs::read(state.join("share/lab-smb.bin")).unwrap() == data, "the file is in the share folder");
    let wrong = work.path().join("wrong-password");
    std::fs::write(&wrong, "not-the-password\n").unwrap();
    let out = bounded(
        60,
        "smbclient",
        &[&service, "-p", port, "-c", "ls"],
        &[("USER", "smbtest"), ("PASSWD_FILE", wrong.to_str().unwrap())],
    );
    assert!(!out.status.success(), "a wrong password is refused: {out:?}");

    // NFSv3 through libnfs' nfs-cp, both ways.
    let nfs = var("IOMATRIX_LAB_NFS");
    assert_eq!(nfs, format!("nfs://{server}/export"));
    let remote = format!("{nfs}/lab-nfs.bin");
    let nfs_back = back("nfs.bin");
    ok(&bounded(60, "nfs-cp", &[local.to_str().unwrap(), &remote], &[]), "nfs-cp to the server");
    ok(&bounded(60, "nfs-cp", &[&remote, nfs_back.to_str().unwrap()], &[]), "nfs-cp from the server");
    assert!(std::fs::read(&nfs_back).unwrap() == data, "nfs-cp read back what it wrote");
    assert!(std::fs::read(state.join("export/lab-nfs.bin")).unwrap() == data, "the file is in the export folder");

    // The FUSE mounts, written and read through commands (a stuck FUSE call must not hang the test).
    for (key, served) in [("IOMATRIX_LAB_SMB_MOUNT", "share"), ("IOMATRIX_LAB_SSHFS_MOUNT", "export")] {
        let mount = PathBuf::from(var(key));
        assert!(mount.starts_with(&state), "{key} is inside the state folder");
        let file = mount.join("lab-mount.bin");
        ok(&bounded(60, "cp", &[local.to_str().unwrap(), file.to_str().unwrap()], &[]), &format!("write to {key}"));
        let out = bounded(60, "cat", &[file.to_str().unwrap()], &[]);
        ok(&out, &format!("read from {key}"));
        assert!(out.stdout == data, "{key} read back what it wrote");
        assert!(std::fs::read(state.join(served).join("lab-mount.bin")).unwrap() == data, "{key} serves {served}/");
    }

    // The link: shaped on both ends to 100 Mbit/s.
    for reverse in [false, true] {
        let bps = iperf3(&netns, &server, reverse);
        let way = if reverse { "server to here" } else { "here to server" };
        eprintln!("iperf3 over the 100mbit link, {way}: {:.1} Mbit/s", bps / 1e6);
        assert!(bps < 110e6, "{way}: {bps} bit/s is above the 100 Mbit/s link");
        assert!(bps > 20e6, "{way}: {bps} bit/s: the link should carry most of its 100 Mbit/s");
    }

    // Down, twice; then nothing it made is left.
    let out = guard.down();
    ok(&out, "lab/down");
    ok(&bounded(120, script("down").to_str().unwrap(), &["--state", state.to_str().unwrap()], &[]), "lab/down again");
    assert!(!state.exists(), "lab/down removes the state folder");
    let namespaces = bounded(30, "ip", &["netns", "list"], &[]);
    assert!(!String::from_utf8_lossy(&namespaces.stdout).contains(&netns), "namespace {netns} is left");
    assert!(!bounded(30, "ip", &["link", "show", "dev", &veth], &[]).status.success(), "veth {veth} is left");
    assert_eq!(mounted_under(&state), Vec::<String>::new(), "mounts left under the state folder");
    for (pid, start, name) in &pids {
        assert_ne!(start_time(pid).as_ref(), Some(start), "{name} ({pid}) is still running");
    }
}
