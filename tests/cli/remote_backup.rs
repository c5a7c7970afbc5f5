//! The backup walk of trees on real servers (nfs-ganesha and Samba in a
//! network namespace, started by `lab/up`) through iomatrix's own NFSv3 and
//! SMB clients: the trees are seeded in the server-side folders, walked read
//! only, and what the walk read is compared with what was seeded. Skipped
//! with a message where the lab cannot run (not root, packages missing).

use crate::helpers::*;
use crate::lab_fixture::{Lab, Shared};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// What the walk says of a tree on a server, as stored and printed.
const NO_EXTENT_MAP: &str = "no FIEMAP over nfs:// or smb:// (the protocol has no extent map)";

/// Seeds `files` (path below `root`, size) with a symlink `link` leading
/// out of the tree; returns the files' bytes.
fn seed(root: &Path, files: &[(&str, usize)]) -> u64 {
    for (name, size) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let data: Vec<u8> = (0..*size).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, data).unwrap();
    }
    std::os::unix::fs::symlink("/etc/hostname", root.join("link")).unwrap();
    files.iter().map(|(_, s)| *s as u64).sum()
}

/// Empty, one byte, a page, an odd size, two read sizes and a bit: five size classes in three folders.
const TREE: [(&str, usize); 5] =
    [("empty", 0), ("one", 1), ("a/page", 4096), ("a/b/odd", 70_007), ("a/b/more", 2 * 65536 + 5)];

fn backup(sb: &Sandbox, target: &str, password_file: &str, extra: &[&str]) -> Output {
    sb.cmd()
        .args(["run", "backup", "--target", target, "--read-size", "64k"])
        .args(extra)
        .env("IOMATRIX_SMB_PASSWORD_FILE", password_file)
        .output()
        .unwrap()
}

/// Every seeded file read once, to its last byte, in its size class; the
/// run's record names the protocol and says there is no FIEMAP.
fn check_walk(sb: &Sandbox, out: &Output, protocol: &str, bytes: u64, symlinks: u64) {
    assert_success(out);
    let (stdout, _) = text(out);
    assert!(stdout.contains(NO_EXTENT_MAP), "{stdout}");
    let run = sb.last_run();
    let c = &run["run"]["conditions"];
    assert_eq!(c["remote"]["protocol"], protocol, "{c}");
    assert!(c["remote"]["read_max_bytes"].as_u64().unwrap() >= 4096, "{c}");
    assert!(c["cache"].as_str().unwrap().starts_with("no client cache"), "{c}");
    assert_eq!(c["extents"], NO_EXTENT_MAP);
    let cell = &cells(&run)[0];
    assert_eq!(cell["backend"], protocol.to_lowercase());
    let m = &cell["metrics"];
    assert_eq!((m["files"].as_u64(), m["bytes"].as_u64()), (Some(5), Some(bytes)), "{m}");
    assert_eq!(cell["bytes"].as_u64(), Some(bytes));
    assert_eq!(m["errors"]["total"], 0, "{m}");
    assert_eq!(m["directories"], 2);
    assert_eq!(m["skipped"]["symlinks"], symlinks, "{m}");
    // Reads of 64k: none for the empty file, one each for 1 byte and a page, two and three for the others.
    assert_eq!(m["reads"], 1 + 1 + 2 + 3);
    let classes: Vec<(u64, u64)> = m["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["class"].as_u64().unwrap(), k["files"].as_u64().unwrap()))
        .collect();
    assert_eq!(classes, [(0, 1), (1, 1), (13, 1), (17, 1), (18, 1)]);
    assert_eq!(m["extents"]["files"], 0);
    assert_eq!(m["extents"]["files_without_fiemap"], 5);
    assert_eq!(m["extents"]["no_fiemap_errno"], NO_EXTENT_MAP);
    assert!(m["mib_per_min"].as_f64().unwrap() > 0.0);
}

#[test]
fn backup_walks_trees_on_nfs_and_smb_through_the_built_in_clients() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let (nfs, smb) = (lab.var("IOMATRIX_LAB_NFS").to_string(), lab.var("IOMATRIX_LAB_SMB").to_string());
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE").to_string();
    // Seeded before the first NFS access (ganesha caches what it serves).
    let mut seeded = 0;
    let mut per_client = Vec::new();
    for dir in [lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR"), lab.var("IOMATRIX_LAB_SMB_SHARE_DIR")] {
        let dir = Path::new(dir);
        seeded = seed(&dir.join("tree"), &TREE);
        per_client = (0..2).map(|r| seed(&dir.join(format!("two/client-{r}")), &[("f", 1000 * (r + 1))])).collect();
    }
    let sb = Sandbox::new();
    // NFS lists the symlink: counted, never followed. Samba hides a link leading out of the share.
    for (target, protocol, symlinks) in [(&nfs, "NFS", 1), (&smb, "SMB", 0)] {
        let out = backup(&sb, &format!("{target}/tree"), &password_file, &[]);
        check_walk(&sb, &out, protocol, seeded, symlinks);
        // Two clients, each in its own session, walking client-0 and client-1.
        let out = backup(&sb, &format!("{target}/two"), &password_file, &["--clients", "2"]);
        assert_success(&out);
        let cell = &cells(&sb.last_run())[0];
        assert_eq!(cell["clients"], 2);
        assert_eq!(cell["bytes"].as_u64(), Some(per_client.iter().sum::<u64>()), "{cell}");
        for (r, figures) in cell["client_figures"].as_array().unwrap().iter().enumerate() {
            assert_eq!(figures["bytes"].as_u64(), Some(per_client[r]), "{figures}");
            assert!(figures["root"].as_str().unwrap().ends_with(&format!("/two/client-{r}")), "{figures}");
        }
        // A folder the server does not have, and a client tree missing: named, exit 2, nothing stored.
        let runs = sb.runs_json()["runs"].as_array().unwrap().len();
        assert_usage_error(&backup(&sb, &format!("{target}/no-such-tree"), &password_file, &[]), "no-such-tree");
        let out = backup(&sb, &format!("{target}/two"), &password_file, &["--clients", "3"]);
        assert_usage_error(&out, "two/client-2");
        // No cache to warm over the protocol client: refused, not ignored.
        assert_usage_error(&backup(&sb, &format!("{target}/tree"), &password_file, &["--warm"]), "--warm");
        assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), runs);
    }
}

#[test]
fn a_server_killed_mid_walk_ends_the_run_within_the_timeout_keeping_what_was_read() {
    let Some(lab) = Lab::up(&["--link", "100mbit", "nfs"]) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    // Eight files of 8 MiB: about six seconds over the 100 Mbit/s link.
    let files: Vec<(String, usize)> = (0..8).map(|i| (format!("f{i}"), 8 << 20)).collect();
    let names: Vec<(&str, usize)> = files.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    seed(&Path::new(lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR")).join("big"), &names);
    let sb = Sandbox::new();
    let child = sb
        .cmd()
        .args(["run", "backup", "--target", &format!("{nfs}/big")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begun = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    let pid: i32 = lab.var("IOMATRIX_LAB_GANESHA_PID").parse().unwrap();
    // SAFETY: kill(2) on the server process the lab started; no memory involved.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(begun.elapsed() < Duration::from_secs(70), "bounded by the 30 s call timeout: {:?}", begun.elapsed());
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let server = &nfs[..nfs.rfind('/').unwrap()];
    assert!(stderr.contains("stopped answering") && stderr.contains(server), "{stderr}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    let stored = cells(&run);
    assert_eq!(stored.len(), 1, "the walk so far is kept");
    let m: &Value = &stored[0]["metrics"];
    let read = m["files"].as_u64().unwrap();
    assert!((1..8).contains(&read), "some files, not all, were read before the kill: {m}");
    assert_eq!(m["bytes"].as_u64(), Some(read * (8 << 20)), "whole files only: {m}");
    assert!(m["errors"]["total"].as_u64().unwrap() >= 1, "the call that failed is counted: {m}");
    assert!(m["server_lost"].as_str().unwrap().contains(server), "{m}");
}
