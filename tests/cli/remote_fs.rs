//! The protocol clients' folder calls (exclusive create, stat, listing)
//! against the lab's real nfs-ganesha and Samba, below the suites.

use crate::lab_fixture::Lab;
use iomatrix_backend::{RemoteEntry, RemoteFs, RemoteKind};
use std::time::Duration;

fn exercise(fs: &mut dyn RemoteFs) {
    let top = format!("iomatrix-fs-{}", std::process::id());
    fs.mkdir(&top).unwrap();
    fs.mkdir(&format!("{top}/sub")).unwrap();
    let file = format!("{top}/a.bin");
    let handle = fs.create_new(&file).unwrap();
    fs.write_at(handle, &[7u8; 5000], 0).unwrap();
    fs.flush(handle).unwrap();
    fs.close(handle).unwrap();
    let again = fs.create_new(&file).map(|h| fs.close(h)).expect_err("the file exists");
    assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists, "{again}");
    assert_eq!(fs.stat(&file).unwrap(), RemoteEntry { name: "a.bin".into(), kind: RemoteKind::File, size: 5000 });
    assert_eq!(fs.stat(&format!("{top}/sub")).unwrap().kind, RemoteKind::Folder);
    assert!(fs.stat(&format!("{top}/missing")).is_err());
    let mut listed = fs.read_dir(&top).unwrap();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        listed,
        vec![
            RemoteEntry { name: "a.bin".into(), kind: RemoteKind::File, size: 5000 },
            RemoteEntry { name: "sub".into(), kind: RemoteKind::Folder, size: 0 },
        ]
    );
    fs.remove(&file).unwrap();
    fs.rmdir(&format!("{top}/sub")).unwrap();
    assert!(fs.read_dir(&top).unwrap().is_empty());
    fs.rmdir(&top).unwrap();
}

#[test]
fn exclusive_create_stat_and_listing_work_on_both_servers() {
    let Some(lab) = Lab::up(&["smb", "nfs"]) else { return };
    let timeout = Duration::from_secs(30);
    let nfs = iomatrix_nfs::NfsUrl::parse(lab.var("IOMATRIX_LAB_NFS")).unwrap();
    exercise(&mut iomatrix_nfs::NfsFs::connect(&nfs, timeout).unwrap());
    let password = std::fs::read_to_string(lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE")).unwrap();
    let smb =
        iomatrix_smb::SmbUrl::parse(lab.var("IOMATRIX_LAB_SMB"), || Ok(Some(password.trim().to_string()))).unwrap();
    exercise(&mut iomatrix_smb::SmbFs::connect(&smb, timeout).unwrap());
}

#[test]
fn a_plan_larger_than_the_servers_free_space_is_refused_with_the_numbers() {
    use crate::helpers::*;
    let Some(lab) = Lab::up(&["smb", "nfs"]) else { return };
    let sb = Sandbox::new();
    // No lab disk holds 100 TiB: refused before anything is written, by what the server says it has free.
    let plan = ["--files", "100t", "--records", "1m", "--tests", "write"];
    let nfs = lab.var("IOMATRIX_LAB_NFS");
    let out = sb.run(&[&["run", "iozone", "--target", nfs], &plan[..]].concat());
    assert_usage_error(&out, "free, but this plan needs");
    let said = text(&out).1;
    assert!(said.contains(lab.var("IOMATRIX_LAB_SERVER")) && said.contains("100.0 TiB written"), "{said}");
    let smb = lab.var("IOMATRIX_LAB_SMB");
    let out = sb
        .cmd()
        .args([&["run", "iozone", "--target", smb], &plan[..]].concat())
        .env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"))
        .output()
        .unwrap();
    assert_usage_error(&out, "free, but this plan needs");
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty(), "nothing stored");
    // Nothing was made on the server either.
    assert!(crate::lab_fixture::left_behind(std::path::Path::new(lab.var("IOMATRIX_LAB_STATE"))).is_empty());
}
