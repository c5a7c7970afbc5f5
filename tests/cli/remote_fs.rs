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
