//! `run metadata` over the lab's servers (nfs-ganesha NFSv3 and Samba in a network namespace,
//! started by `lab/up`) through iomatrix's own NFS and SMB clients: every phase runs, each
//! client in its own session, and the server's folder holds nothing of the run afterwards.
//! Skipped with a message where the lab cannot run (not root, packages missing).

use crate::helpers::*;
use crate::lab_fixture::{Lab, Shared};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

fn metadata(sb: &Sandbox, target: &str, password_file: &str, extra: &[&str]) -> Output {
    sb.cmd()
        .args(["run", "metadata", "--target", target])
        .args(extra)
        .env("IOMATRIX_SMB_PASSWORD_FILE", password_file)
        .output()
        .unwrap()
}

/// What a run's tree phases count: the folders the tree phases make and remove, and the
/// folders every client lists in dir-readdir, all clients together.
struct Folders {
    tree: u64,
    listed: u64,
}

/// Every phase stored complete, with the items of every client, no failure, and the protocol
/// client as the cell's backend.
fn check_every_phase(sb: &Sandbox, out: &Output, protocol: &str, clients: u64, items: u64, folders: Folders) {
    assert_success(out);
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "complete", "{}", run["run"]["status"]);
    let stored: Vec<Value> = cells(&run);
    let names: Vec<&str> = stored.iter().map(|c| c["test"].as_str().unwrap()).collect();
    assert_eq!(names, crate::metadata::phases_run_by_default(), "{protocol}");
    for cell in &stored {
        let name = cell["test"].as_str().unwrap();
        assert_eq!(cell["backend"], protocol, "{name}: {}", cell["backend"]);
        assert_eq!(cell["state"]["kind"], "complete", "{name}: {}", cell["state"]);
        let p = &cell["metrics"]["phase"];
        assert!(p["failures"].as_object().unwrap().is_empty(), "{protocol} {name}: {p}");
        let expected = match name {
            "tree-create" | "tree-remove" => folders.tree,
            "dir-readdir" => folders.listed,
            _ => items * clients,
        };
        assert_eq!(p["items"].as_u64(), Some(expected), "{protocol} {name}: {p}");
        assert_eq!(p["clients"].as_array().unwrap().len() as u64, clients, "{protocol} {name}: {p}");
        assert!(p["rate_all_over_slowest"].as_f64().unwrap() > 0.0, "{protocol} {name}: {p}");
        println!("{protocol} {name}: {:.0} ops/s", p["rate_all_over_slowest"].as_f64().unwrap());
    }
}

/// Nothing of the run is left in the server's folder (the working folder removed over the protocol).
fn nothing_left(dir: &str) {
    let left: Vec<_> = std::fs::read_dir(Path::new(dir))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("iomatrix-"))
        .collect();
    assert!(left.is_empty(), "{dir}: {left:?}");
}

#[test]
fn metadata_runs_every_phase_on_nfs_and_smb_through_the_built_in_clients() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let password_file = lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE").to_string();
    let sb = Sandbox::new();
    for (target, dir, protocol) in [
        (lab.var("IOMATRIX_LAB_NFS"), lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR"), "nfs"),
        (lab.var("IOMATRIX_LAB_SMB"), lab.var("IOMATRIX_LAB_SMB_SHARE_DIR"), "smb"),
    ] {
        // One client, a tree of 3 folders with 10 items in each; then 2 clients, each a session
        // of its own, in one shared folder (mdtest's default) and with a tree each (-u).
        let shape = ["--depth", "1", "--branch", "2", "--items", "30", "--write-bytes", "100", "--read-bytes", "100"];
        let out = metadata(&sb, target, &password_file, &shape);
        check_every_phase(&sb, &out, protocol, 1, 30, Folders { tree: 3, listed: 3 });
        nothing_left(dir);
        let out = metadata(&sb, target, &password_file, &["--items", "20", "--clients", "2"]);
        check_every_phase(&sb, &out, protocol, 2, 20, Folders { tree: 1, listed: 2 });
        let out = metadata(&sb, target, &password_file, &["--items", "20", "--clients", "2", "--per-client-folder"]);
        // A tree per client: each makes, lists and removes its own root.
        check_every_phase(&sb, &out, protocol, 2, 20, Folders { tree: 2, listed: 2 });
        nothing_left(dir);
    }
}
