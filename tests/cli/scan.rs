//! `iomatrix scan`: its counts against `find` on a generated tree, the saved
//! profile, bad input, unreadable folders (run as an unprivileged user) and mount
//! points (tmpfs mounted inside the tree); the last two need root.
use crate::helpers::*;
use serde_json::Value;
use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file of `size` bytes: written for small sizes, sparse (set_len) above 8 KiB,
/// so a few thousand files of up to 100 MiB cost little space.
fn make_file(path: &Path, size: u64) {
    if size <= 8192 {
        std::fs::write(path, vec![b'x'; size as usize]).unwrap();
    } else {
        std::fs::File::create(path).unwrap().set_len(size).unwrap();
    }
}

/// ~3,000 files in ~60 folders, sizes over classes 0..=27 (0 bytes, 1 byte,
/// around every threshold), hard links, symlinks to a folder inside and to
/// places outside, a fifo.
fn generate_tree(root: &Path) {
    let mut rng = iomatrix_random::Generator::seeded(7);
    let mut dirs = vec![root.to_path_buf()];
    for i in 0..60 {
        let parent = dirs[(rng.next_u64() % dirs.len() as u64) as usize].clone();
        let d = parent.join(format!("d{i}"));
        std::fs::create_dir(&d).unwrap();
        dirs.push(d);
    }
    for i in 0..3000u64 {
        let dir = &dirs[(rng.next_u64() % dirs.len() as u64) as usize];
        // Mostly small files, as real trees hold.
        let k = match rng.next_u64() % 100 {
            0..=4 => 0,
            5..=69 => 1 + rng.next_u64() % 14,
            70..=94 => 15 + rng.next_u64() % 6,
            _ => 21 + rng.next_u64() % 6,
        };
        let size = if k == 0 { 0 } else { (1u64 << (k - 1)) + rng.next_u64() % (1u64 << (k - 1)) };
        make_file(&dir.join(format!("f{i}")), size);
    }
    // Exactly at and one past each threshold, and a 100 MiB file.
    for (i, size) in [65536u64, 65537, 1 << 20, (1 << 20) + 1, 32 << 20, (32 << 20) + 1, 100 << 20].iter().enumerate() {
        make_file(&root.join(format!("edge{i}")), *size);
    }
    // Hard links: 20 second names of edge0..edge5, 3 more names of edge6 in d0.
    for i in 0..20 {
        std::fs::hard_link(root.join(format!("edge{}", i % 6)), root.join(format!("link{i}"))).unwrap();
    }
    for i in 0..3 {
        std::fs::hard_link(root.join("edge6"), root.join(format!("d0/third{i}"))).unwrap();
    }
    std::os::unix::fs::symlink("/etc", root.join("to-etc")).unwrap();
    std::os::unix::fs::symlink("/usr/bin/env", root.join("to-env")).unwrap();
    std::os::unix::fs::symlink(root.join("d0"), root.join("to-d0")).unwrap();
    std::os::unix::fs::symlink("d0", root.join("d1-rel")).unwrap();
    std::os::unix::fs::symlink("/no/such/target", root.join("dangling")).unwrap();
    let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
}

/// What `find` says about the tree, hard links counted once by (dev, inode).
struct FindView {
    sizes: Vec<u64>,
    allocated: u64,
    names: u64,
    dirs: u64,
    symlinks: u64,
    other: u64,
}

fn find_lines(root: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("find").arg(root).arg("-xdev").args(args).output().expect("find");
    assert!(out.status.success(), "find: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

fn find_view(root: &Path) -> FindView {
    let files = find_lines(root, &["-type", "f", "-printf", "%D:%i %s %b\\n"]);
    let mut seen = HashSet::new();
    let (mut sizes, mut allocated) = (Vec::new(), 0);
    for line in &files {
        let mut parts = line.split(' ');
        let id = parts.next().unwrap().to_string();
        let size: u64 = parts.next().unwrap().parse().unwrap();
        let blocks: u64 = parts.next().unwrap().parse().unwrap();
        if seen.insert(id) {
            sizes.push(size);
            allocated += blocks * 512;
        }
    }
    sizes.sort_unstable();
    FindView {
        sizes,
        allocated,
        names: files.len() as u64,
        dirs: find_lines(root, &["-type", "d"]).len() as u64,
        symlinks: find_lines(root, &["-type", "l"]).len() as u64,
        other: find_lines(root, &["!", "-type", "f", "!", "-type", "d", "!", "-type", "l"]).len() as u64,
    }
}

fn scan_json(sb: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["scan", "--json"];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    let v: Value = serde_json::from_slice(&out.stdout).expect("scan --json is JSON");
    assert_eq!(v["schema"], "iomatrix.scan/1");
    v
}

fn class_of(size: u64) -> usize {
    (64 - size.leading_zeros()) as usize
}

#[test]
fn counts_match_find() {
    let sb = Sandbox::new();
    let root = sb.target();
    generate_tree(&root);
    let want = find_view(&root);
    let v = scan_json(&sb, &[root.to_str().unwrap(), "--top", "5"]);
    let n = want.sizes.len() as u64;
    assert!(n > 2900, "the tree holds {n} files");
    assert_eq!(v["files"], n);
    assert_eq!(v["bytes"], want.sizes.iter().sum::<u64>());
    assert_eq!(v["allocated_bytes"], want.allocated);
    assert_eq!(v["hardlink_duplicates"], want.names - n);
    assert_eq!(want.names - n, 23, "20 second names and 3 third names");
    assert_eq!(v["dirs"], want.dirs);
    assert_eq!(v["symlinks"], want.symlinks);
    assert_eq!(v["other"], want.other);
    assert_eq!((v["unreadable"].as_u64(), v["mounts_skipped"].as_u64()), (Some(0), Some(0)));

    // Per class, from find's sizes.
    let classes = v["classes"].as_array().unwrap();
    let top = class_of(*want.sizes.last().unwrap());
    assert_eq!(classes.len(), top + 1);
    for (k, c) in classes.iter().enumerate() {
        let in_class: Vec<u64> = want.sizes.iter().copied().filter(|&s| class_of(s) == k).collect();
        assert_eq!(c["class"], k);
        assert_eq!(c["files"], in_class.len() as u64, "class {k}");
        assert_eq!(c["bytes"], in_class.iter().sum::<u64>(), "class {k}");
        let (lo, hi) = if k == 0 { (0, 0) } else { (1u64 << (k - 1), (1u64 << (k - 1)) * 2 - 1) };
        assert_eq!((c["min_bytes"].as_u64(), c["max_bytes"].as_u64()), (Some(lo), Some(hi)));
    }

    // Shares at 64k, 1m, 32m, exactly (the tree has files at and one past each).
    let shares = v["shares"].as_array().unwrap();
    for (sh, at) in shares.iter().zip([64u64 << 10, 1 << 20, 32 << 20]) {
        let below: Vec<u64> = want.sizes.iter().copied().filter(|&s| s <= at).collect();
        assert_eq!(sh["at_bytes"], at);
        assert_eq!(sh["files"], below.len() as u64, "at {at}");
        assert_eq!(sh["bytes"], below.iter().sum::<u64>(), "at {at}");
        let share = sh["share_of_files"].as_f64().unwrap();
        assert!((share - below.len() as f64 / n as f64).abs() < 1e-12);
    }

    // Percentiles by nearest rank.
    let p = &v["percentiles"];
    let rank = |per_mille: u64| want.sizes[((n * per_mille).div_ceil(1000) - 1) as usize];
    assert_eq!(p["p50_bytes"], rank(500));
    assert_eq!(p["p90_bytes"], rank(900));
    assert_eq!(p["p99_bytes"], rank(990));
    assert_eq!(p["p99_9_bytes"], rank(999));
    assert_eq!(p["min_bytes"], 0);
    assert_eq!(p["max_bytes"], 100u64 << 20);

    // The largest files, largest first, with their paths.
    let largest = v["largest"].as_array().unwrap();
    assert_eq!(largest.len(), 5);
    let want_top: Vec<u64> = want.sizes.iter().rev().take(5).copied().collect();
    let got_top: Vec<u64> = largest.iter().map(|f| f["bytes"].as_u64().unwrap()).collect();
    assert_eq!(got_top, want_top);
    let biggest = PathBuf::from(largest[0]["path"].as_str().unwrap());
    assert_eq!(std::fs::metadata(&biggest).unwrap().len(), 100 << 20);

    // Nothing outside the tree was counted (/etc, /usr/bin/env are symlinks' targets).
    assert!(largest.iter().all(|f| f["path"].as_str().unwrap().starts_with(root.to_str().unwrap())));
}

#[test]
fn human_report_and_saved_profile() {
    let sb = Sandbox::new();
    let root = sb.target();
    generate_tree(&root);
    let profile = sb.dir.path().join("tree.profile.json");
    let out = sb.run(&["scan", root.to_str().unwrap(), "--at", "4k,1m", "--save-profile", profile.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    for needle in ["from", "below", "% files", "cum %", "at or below", "p99.9", "half of all bytes", "largest files:"] {
        assert!(stdout.contains(needle), "'{needle}' missing:\n{stdout}");
    }
    assert!(stdout.contains("23 hard-link duplicates"), "{stdout}");
    assert!(stdout.contains(&format!("profile saved to {}", profile.display())), "{stdout}");

    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    assert_eq!(saved["schema"], "iomatrix.profile/1");
    assert_eq!(saved["source"], root.to_str().unwrap());
    assert!(saved["created_at"].as_str().unwrap().ends_with('Z'));
    let want = find_view(&root);
    assert_eq!(saved["files"], want.sizes.len() as u64);
    let class_files: u64 = saved["classes"].as_array().unwrap().iter().map(|c| c["files"].as_u64().unwrap()).sum();
    assert_eq!(class_files, want.sizes.len() as u64);
    let scanned = scan_json(&sb, &[root.to_str().unwrap()]);
    assert_eq!(scanned["profile"], Value::Null);
    for (c, s) in saved["classes"].as_array().unwrap().iter().zip(scanned["classes"].as_array().unwrap()) {
        assert_eq!((&c["files"], &c["bytes"], &c["min_bytes"]), (&s["files"], &s["bytes"], &s["min_bytes"]));
    }
}

#[test]
fn bad_input_exits_2() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["scan", "/no/such/tree"]), "scan root /no/such/tree does not exist");
    let root = sb.target();
    let t = root.to_str().unwrap();
    assert_usage_error(&sb.run(&["scan", t, "--at", "64q"]), "'64q' is not a size");
    assert_usage_error(&sb.run(&["scan", t, "--top", "-1"]), "-1");
    assert_usage_error(&sb.run(&["scan", t, "--save-profile", "/no/such/dir/p.json"]), "/no/such/dir does not exist");
    assert_usage_error(&sb.run(&["scan", t, "--save-profile", t]), "is a folder");
    // An empty tree scans (0 files), but gives no profile.
    let out = sb.run(&["scan", t]);
    assert_success(&out);
    assert!(text(&out).0.contains("no regular files"));
    let p = sb.dir.path().join("p.json");
    assert_usage_error(&sb.run(&["scan", t, "--save-profile", p.to_str().unwrap()]), "a profile needs at least one");
    assert!(!p.exists());

    // Any --top is fine: all files are listed.
    std::fs::write(root.join("tiny"), b"1").unwrap();
    let v = scan_json(&sb, &[t, "--top", &u64::MAX.to_string()]);
    assert_eq!(v["largest"].as_array().unwrap().len(), 1);
    std::fs::remove_file(root.join("tiny")).unwrap();

    // A file as root is scanned alone.
    std::fs::write(root.join("one"), vec![0u8; 5000]).unwrap();
    let v = scan_json(&sb, &[root.join("one").to_str().unwrap()]);
    assert_eq!((v["files"].as_u64(), v["bytes"].as_u64(), v["dirs"].as_u64()), (Some(1), Some(5000), Some(0)));
}

/// Runs `iomatrix scan --json` as user nobody (uid/gid 65534).
fn scan_as_nobody(sb: &Sandbox, root: &Path) -> Value {
    use std::os::unix::process::CommandExt;
    let out = sb.cmd().args(["scan", "--json", root.to_str().unwrap()]).uid(65534).gid(65534).output().unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn unreadable_folders_are_counted_and_skipped() {
    if !is_root() {
        return skip("needs root to run the scan as another user");
    }
    // Root reads every folder: run the scan as nobody, in a tree nobody may enter
    // except one locked folder.
    let sb = Sandbox::new();
    std::fs::set_permissions(sb.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = sb.target();
    std::fs::create_dir_all(root.join("open/deeper")).unwrap();
    std::fs::write(root.join("open/a"), b"12345").unwrap();
    std::fs::write(root.join("open/deeper/b"), b"1").unwrap();
    // A file nobody may not read is still counted: scan reads metadata only.
    std::fs::write(root.join("open/secret"), b"abc").unwrap();
    std::fs::set_permissions(root.join("open/secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::create_dir_all(root.join("locked/inner")).unwrap();
    std::fs::write(root.join("locked/hidden"), b"hidden").unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let v = scan_as_nobody(&sb, &root);
    assert_eq!(v["files"], 3, "{v:#}");
    assert_eq!(v["bytes"], 9);
    assert_eq!(v["unreadable"], 1);
    assert_eq!(v["dirs"], 4, "root, open, deeper, locked (entered, its listing refused)");
    let problem = &v["problems"][0];
    assert!(problem["path"].as_str().unwrap().ends_with("locked"), "{problem}");
    assert!(problem["error"].as_str().unwrap().contains("ermission denied"), "{problem}");
    // The human report says so too.
    use std::os::unix::process::CommandExt;
    let out = sb.cmd().args(["scan", root.to_str().unwrap()]).uid(65534).gid(65534).output().unwrap();
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("1 unreadable") && stdout.contains("locked: Permission denied"), "{stdout}");
    // An unreadable root is bad input.
    let out = sb.cmd().args(["scan", root.join("locked").to_str().unwrap()]).uid(65534).gid(65534).output().unwrap();
    assert_usage_error(&out, "cannot read scan root");
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// tmpfs mounted at a folder inside the tree, unmounted on drop.
struct InnerMount(PathBuf);
impl Drop for InnerMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn other_file_systems_are_left_unless_asked() {
    if !is_root() {
        return skip("mounting tmpfs inside the tree needs root");
    }
    let sb = Sandbox::new();
    let root = sb.target();
    std::fs::write(root.join("here"), b"0123456789").unwrap();
    let point = root.join("mnt");
    std::fs::create_dir(&point).unwrap();
    let ok = Command::new("mount").args(["-t", "tmpfs", "tmpfs"]).arg(&point).status().is_ok_and(|s| s.success());
    if !ok {
        return skip("cannot mount tmpfs");
    }
    let _guard = InnerMount(point.clone());
    std::fs::create_dir(point.join("sub")).unwrap();
    std::fs::write(point.join("sub/there"), vec![1u8; 3000]).unwrap();
    std::fs::write(point.join("there2"), b"x").unwrap();
    let v = scan_json(&sb, &[root.to_str().unwrap()]);
    assert_eq!((v["files"].as_u64(), v["bytes"].as_u64()), (Some(1), Some(10)));
    assert_eq!((v["mounts_skipped"].as_u64(), v["dirs"].as_u64()), (Some(1), Some(1)));
    let v = scan_json(&sb, &[root.to_str().unwrap(), "--cross-mounts"]);
    assert_eq!((v["files"].as_u64(), v["bytes"].as_u64()), (Some(3), Some(3011)));
    assert_eq!(
        (v["mounts_skipped"].as_u64(), v["dirs"].as_u64(), v["cross_mounts"].as_bool()),
        (Some(0), Some(3), Some(true))
    );
}
