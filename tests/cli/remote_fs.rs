//! The protocol clients' folder calls (exclusive create, stat, listing)
//! against the lab's real nfs-ganesha and Samba, below the suites.

use crate::lab_fixture::{Lab, Shared};
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
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
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
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
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

/// Writes `bytes` as a new file `path` (replacing any).
fn put(fs: &mut dyn RemoteFs, path: &str, bytes: &[u8]) {
    let h = fs.create(path).unwrap();
    fs.write_at(h, bytes, 0).unwrap();
    fs.close(h).unwrap();
}

/// rename(2)'s meaning on both servers: the target replaced, a missing
/// source `NotFound`, folders renamed too.
fn renames(fs: &mut dyn RemoteFs) {
    let top = format!("iomatrix-rename-{}", std::process::id());
    fs.mkdir(&top).unwrap();
    put(fs, &format!("{top}/a"), &[1u8; 300]);
    put(fs, &format!("{top}/b"), &[2u8; 7]);
    // SET_FILE_INFORMATION's times, on an open file.
    let h = fs.open(&format!("{top}/a")).unwrap();
    fs.touch(h).unwrap();
    fs.close(h).unwrap();
    fs.rename(&format!("{top}/a"), &format!("{top}/b")).unwrap();
    assert_eq!(fs.stat(&format!("{top}/b")).unwrap().size, 300, "b replaced by a");
    let gone = fs.stat(&format!("{top}/a")).expect_err("a was renamed away");
    assert_eq!(gone.kind(), std::io::ErrorKind::NotFound, "{gone}");
    let missing = fs.rename(&format!("{top}/a"), &format!("{top}/c")).expect_err("a is not there");
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");
    // Into a sub-folder, and a folder itself.
    fs.mkdir(&format!("{top}/sub")).unwrap();
    fs.rename(&format!("{top}/b"), &format!("{top}/sub/b2")).unwrap();
    fs.rename(&format!("{top}/sub"), &format!("{top}/sub2")).unwrap();
    assert_eq!(fs.stat(&format!("{top}/sub2/b2")).unwrap().size, 300);
    fs.remove(&format!("{top}/sub2/b2")).unwrap();
    fs.rmdir(&format!("{top}/sub2")).unwrap();
    fs.rmdir(&top).unwrap();
}

#[test]
fn rename_replaces_the_target_a_missing_source_is_not_found_and_touch_sets_times_on_both_servers() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let timeout = Duration::from_secs(30);
    let nfs = iomatrix_nfs::NfsUrl::parse(lab.var("IOMATRIX_LAB_NFS")).unwrap();
    renames(&mut iomatrix_nfs::NfsFs::connect(&nfs, timeout).unwrap());
    renames(&mut smb_session(&lab, timeout));
    assert!(crate::lab_fixture::left_behind(std::path::Path::new(lab.var("IOMATRIX_LAB_STATE"))).is_empty());
}

fn smb_session(lab: &Lab, timeout: Duration) -> iomatrix_smb::SmbFs {
    let password = std::fs::read_to_string(lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE")).unwrap();
    let smb =
        iomatrix_smb::SmbUrl::parse(lab.var("IOMATRIX_LAB_SMB"), || Ok(Some(password.trim().to_string()))).unwrap();
    iomatrix_smb::SmbFs::connect(&smb, timeout).unwrap()
}

#[test]
fn smb_byte_range_locks_conflict_between_sessions_without_waiting_and_nfs_says_it_has_none() {
    use std::io::ErrorKind::{Unsupported, WouldBlock};
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let timeout = Duration::from_secs(30);
    let (mut one, mut two) = (smb_session(&lab, timeout), smb_session(&lab, timeout));
    let file = format!("iomatrix-lock-{}.bin", std::process::id());
    put(&mut one, &file, &[0u8; 4096]);
    let (h1, h2) = (one.open(&file).unwrap(), two.open(&file).unwrap());
    one.lock(h1, 0, 100, true).unwrap();
    let started = std::time::Instant::now();
    let held = two.lock(h2, 50, 10, true).expect_err("the range is held by the other session");
    assert_eq!(held.kind(), WouldBlock, "{held}");
    assert!(started.elapsed() < Duration::from_secs(5), "failed at once, not after a wait: {:?}", started.elapsed());
    // A shared lock conflicts with an exclusive one too; a range outside is free.
    assert_eq!(two.lock(h2, 0, 1, false).expect_err("held").kind(), WouldBlock);
    two.lock(h2, 100, 100, true).unwrap();
    two.unlock(h2, 100, 100).unwrap();
    one.unlock(h1, 0, 100).unwrap();
    two.lock(h2, 50, 10, true).expect("released by the unlock");
    two.unlock(h2, 50, 10).unwrap();
    // Two shared locks agree.
    one.lock(h1, 0, 10, false).unwrap();
    two.lock(h2, 0, 10, false).unwrap();
    one.unlock(h1, 0, 10).unwrap();
    two.unlock(h2, 0, 10).unwrap();
    // Unlocking a range that is not locked is the server's error, named.
    let none = one.unlock(h1, 1000, 1).expect_err("nothing locked there");
    assert!(none.to_string().contains("UNLOCK 1 bytes at 1000"), "{none}");
    one.close(h1).unwrap();
    two.close(h2).unwrap();
    one.remove(&file).unwrap();

    let nfs = iomatrix_nfs::NfsUrl::parse(lab.var("IOMATRIX_LAB_NFS")).unwrap();
    let mut nfs = iomatrix_nfs::NfsFs::connect(&nfs, timeout).unwrap();
    put(&mut nfs, &file, &[0u8; 10]);
    let h = nfs.open(&file).unwrap();
    for e in [nfs.lock(h, 0, 10, true).unwrap_err(), nfs.unlock(h, 0, 10).unwrap_err()] {
        assert_eq!(e.kind(), Unsupported, "{e}");
        assert!(e.to_string().contains("NLM"), "says why: {e}");
    }
    nfs.close(h).unwrap();
    nfs.remove(&file).unwrap();
}
