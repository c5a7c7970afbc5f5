//! Issue 48's findings on raw devices (1 and 2), each as the attacker met it: a device is written
//! only when this command names it, only when it is the device the run wrote (by its identity,
//! not its name), and never when its blocks are the results database's or a mounted file
//! system's, through whatever alias. Every victim image is byte-identical afterwards.

use crate::helpers::*;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A loop device attached by a test, detached on drop (also when the test fails).
struct Loop(String);

impl Loop {
    /// `losetup [-P] -f --show IMAGE`: a free loop device (with its partitions, `-P`).
    fn attach(image: &Path, partitions: bool) -> Loop {
        let mut cmd = Command::new("losetup");
        if partitions {
            cmd.arg("-P");
        }
        let out = cmd.args(["-f", "--show"]).arg(image).output().expect("losetup");
        assert!(out.status.success(), "losetup {}: {}", image.display(), String::from_utf8_lossy(&out.stderr));
        let attached = Loop(String::from_utf8_lossy(&out.stdout).trim().to_string());
        // Some kernels scan the table only when asked again.
        if partitions && !Path::new(&attached.partition(1)).exists() {
            let out = Command::new("partx").args(["-a", &attached.0]).output().expect("partx");
            assert!(out.status.success(), "partx -a {}: {}", attached.0, String::from_utf8_lossy(&out.stderr));
        }
        attached
    }

    /// `losetup NAME IMAGE`: the name a detached device had, given to another image.
    fn attach_as(name: &str, image: &Path) -> Loop {
        let out = Command::new("losetup").arg(name).arg(image).output().expect("losetup");
        assert!(
            out.status.success(),
            "losetup {name} {} (another test may have taken the name): {}",
            image.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(name.to_string())
    }

    fn partition(&self, n: u32) -> String {
        format!("{}p{n}", self.0)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).output();
    }
}

/// A read-only mount of a device (a mounted file system that writes nothing to its image, so the
/// image's bytes can be compared), unmounted on drop.
struct ReadOnlyMount(tempfile::TempDir);

impl ReadOnlyMount {
    fn new(device: &str) -> ReadOnlyMount {
        let point = tempfile::tempdir().unwrap();
        let out = Command::new("mount").args(["-o", "ro", device]).arg(point.path()).output().expect("mount");
        assert!(out.status.success(), "mount {device}: {}", String::from_utf8_lossy(&out.stderr));
        ReadOnlyMount(point)
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let point = self.0.path().to_str().unwrap().to_string();
        if !Command::new("umount").arg(&point).status().is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").args(["-l", &point]).status();
        }
    }
}

/// Root, losetup and mkfs.ext4, and a tmpfs of 100 MiB for the images (on another file system
/// than the sandbox's database); None (a skip) otherwise.
fn image_space() -> Option<Mount> {
    if !is_root() || !have("losetup") || !have("mkfs.ext4") || !Path::new("/dev/loop-control").exists() {
        skip("raw-device attacks need root, losetup, mkfs.ext4 and loop devices");
        return None;
    }
    Mount::virtual_fs("tmpfs", "size=100m")
}

/// A 32 MiB image of zeros at `path`.
fn image(path: &Path) -> PathBuf {
    std::fs::File::create(path).unwrap().set_len(32 << 20).unwrap();
    path.to_path_buf()
}

/// An ext4 file system on `target` whose every block is written now (no lazy initialisation later
/// from a mount), so a mount changes nothing of its bytes.
fn mkfs(target: &str) {
    let out = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", target])
        .output()
        .expect("mkfs.ext4");
    assert!(out.status.success(), "mkfs.ext4 {target}: {}", String::from_utf8_lossy(&out.stderr));
}

fn digest(path: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).unwrap().hash(&mut h);
    h.finish()
}

fn with_db(sb: &Sandbox, db: &Path, args: &[&str]) -> Output {
    sb.cmd().env("IOMATRIX_DB", db).args(args).output().expect("run iomatrix")
}

/// `run access` writing the whole of `device` (32 MiB) once, sequentially.
fn write_all_of(sb: &Sandbox, db: &Path, device: &str) -> Output {
    with_db(
        sb,
        db,
        &[
            "run",
            "access",
            "--device",
            device,
            "--destroy-data-on",
            device,
            "--bs",
            "64k",
            "--read",
            "0",
            "--random",
            "0",
            "--bytes",
            "32m",
            "--direct",
        ],
    )
}

#[test]
fn a_rerun_never_writes_a_device_that_took_the_name_of_the_one_it_wrote() {
    let Some(space) = image_space() else { return };
    let sb = Sandbox::new();
    let (a_db, b_db) = (sb.dir.path().join("A.sqlite"), sb.dir.path().join("B.sqlite"));
    let (a, b) = (image(&space.point.join("a.img")), image(&space.point.join("b.img")));
    let b_loop = Loop::attach(&b, false);
    let name = b_loop.0.clone();
    assert_success(&write_all_of(&sb, &b_db, &name));
    let stored = sb.cmd().env("IOMATRIX_DB", &b_db).args(["show", "1", "--json"]).output().unwrap();
    let stored: serde_json::Value = serde_json::from_slice(&stored.stdout).unwrap();
    let identity = &stored["run"]["environment"]["target"]["device_identity"];
    use std::os::unix::fs::MetadataExt;
    assert_eq!(identity["loop_backing"]["inode"].as_u64(), Some(std::fs::metadata(&b).unwrap().ino()), "{identity}");
    assert_eq!(identity["size_bytes"].as_u64(), Some(32 << 20), "{identity}");

    // The name goes to a.img, which now holds a file system; run #1 comes over by a merge.
    drop(b_loop);
    mkfs(a.to_str().unwrap());
    let a_loop = Loop::attach_as(&name, &a);
    let before = digest(&a);
    assert_success(&with_db(&sb, &a_db, &["db", "merge", b_db.to_str().unwrap()]));
    for db in [&a_db, &b_db] {
        let out = with_db(&sb, db, &["rerun", "1"]);
        assert_usage_error(&out, &format!("iomatrix rerun 1 --destroy-data-on {name}"));
        let out = with_db(&sb, db, &["rerun", "1", "--destroy-data-on", &name]);
        assert_usage_error(&out, "is not the device run #1 wrote");
        let (_, stderr) = text(&out);
        assert!(stderr.contains("b.img") && stderr.contains("a.img"), "both identities named: {stderr}");
    }
    assert_eq!(digest(&a), before, "a.img is byte-identical");
    let fsck = Command::new("e2fsck").args(["-n", "-f"]).arg(&a).output().unwrap();
    assert!(fsck.status.success(), "a.img's file system is whole: {}", String::from_utf8_lossy(&fsck.stdout));

    // The device the run wrote, under the same name again: the rerun runs, confirmed again.
    drop(a_loop);
    let _b_again = Loop::attach_as(&name, &b);
    assert_success(&with_db(&sb, &b_db, &["rerun", "1", "--destroy-data-on", &name]));
}

#[test]
fn a_loop_device_over_the_results_database_is_never_written() {
    let Some(_space) = image_space() else { return };
    let sb = Sandbox::new();
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    let db = sb.db();
    let before = digest(&db);
    let over_db = Loop::attach(&db, false);
    let d = over_db.0.as_str();
    let out = sb.run(&["run", "access", "--device", d, "--destroy-data-on", d, "--read", "0", "--bytes", "64k"]);
    assert_usage_error(&out, "the results database itself");
    // Any file beside it: the database's journal and WAL live on that file system too.
    let beside = image(&sb.dir.path().join("beside.img"));
    let over_beside = Loop::attach(&beside, false);
    let d = over_beside.0.as_str();
    let out = sb.run(&["run", "access", "--device", d, "--destroy-data-on", d, "--read", "0", "--bytes", "64k"]);
    assert_usage_error(&out, "on the same file system as the results database");
    drop((over_db, over_beside));
    assert_eq!(digest(&db), before, "the database is byte-identical");
    let check = sb.run(&["db", "check"]);
    assert_success(&check);
    let (stdout, _) = text(&check);
    assert!(stdout.contains("integrity: ok") && !stdout.contains("DAMAGED"), "{stdout}");
}

#[test]
fn a_second_loop_device_over_a_mounted_image_is_never_written() {
    let Some(space) = image_space() else { return };
    let sb = Sandbox::new();
    let fs = image(&space.point.join("fs.img"));
    mkfs(fs.to_str().unwrap());
    let mounted_loop = Loop::attach(&fs, false);
    let mount = ReadOnlyMount::new(&mounted_loop.0);
    let before = digest(&fs);
    let alias = Loop::attach(&fs, false);
    let out = write_all_of(&sb, &sb.db(), &alias.0);
    assert_usage_error(&out, "is in use");
    let (_, stderr) = text(&out);
    assert!(stderr.contains(&mounted_loop.0) && stderr.contains("fs.img"), "names the mount and the image: {stderr}");
    assert_eq!(digest(&fs), before, "the mounted image is byte-identical");
    drop((alias, mount, mounted_loop));
}

#[test]
fn a_partitions_disk_or_alias_is_never_written_while_it_is_mounted() {
    let Some(space) = image_space() else { return };
    if !have("sfdisk") || !have("partx") {
        skip("partitioned images need sfdisk (fdisk) and partx (util-linux)");
        return;
    }
    let sb = Sandbox::new();
    let disk = image(&space.point.join("disk.img"));
    // Two partitions side by side: 1 MiB to 16 MiB, and 16 MiB to the end.
    let mut sfdisk = Command::new("sfdisk")
        .args(["-q", disk.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    sfdisk.stdin.take().unwrap().write_all(b"label: dos\nstart=2048, size=30720\nstart=32768\n").unwrap();
    assert!(sfdisk.wait().unwrap().success());
    let whole = Loop::attach(&disk, true);
    let first = whole.partition(1);
    assert!(Path::new(&first).exists(), "losetup -P made {first}");
    mkfs(&first);
    let mount = ReadOnlyMount::new(&first);
    let before = digest(&disk);
    let alias = Loop::attach(&disk, true);
    // The kernel's exclusive claim lets the whole disk of a mounted partition through.
    for device in [whole.0.clone(), alias.0.clone(), alias.partition(1)] {
        let out = write_all_of(&sb, &sb.db(), &device);
        assert_usage_error(&out, "is in use");
        let (_, stderr) = text(&out);
        assert!(stderr.contains(&first), "{device}: names the mounted partition: {stderr}");
    }
    assert_eq!(digest(&disk), before, "the disk image is byte-identical");
    // The partition beside the mounted one shares none of its blocks: it may be written.
    let head = std::fs::read(&disk).unwrap()[..16 << 20].to_vec();
    let second = alias.partition(2);
    let out =
        sb.run(&["run", "access", "--device", &second, "--destroy-data-on", &second, "--read", "0", "--bytes", "1m"]);
    assert_success(&out);
    let after = std::fs::read(&disk).unwrap();
    assert_ne!(digest(&disk), before, "the second partition was written");
    assert!(after[..16 << 20] == head[..], "the table and the mounted partition are byte-identical");
    drop((alias, mount, whole));
}

#[test]
fn a_raw_device_run_stored_without_an_identity_is_not_run_again() {
    let Some(dev) = LoopDevice::new(32, 0xab) else { return };
    let sb = Sandbox::new();
    let d = dev.path();
    assert_success(&write_all_of(&sb, &sb.db(), d));
    // As a run stored before runs kept their device's identity.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let removed = conn
        .execute("UPDATE runs SET environment_json = json_remove(environment_json, '$.target.device_identity')", [])
        .unwrap();
    assert_eq!(removed, 1);
    drop(conn);
    let before = digest(&dev.image);
    let out = sb.run(&["rerun", "1", "--destroy-data-on", d]);
    assert_usage_error(&out, "stored no identity of its device");
    let (_, stderr) = text(&out);
    assert!(stderr.contains(&format!("type its command again: iomatrix run access --device {d}")), "{stderr}");
    assert_eq!(digest(&dev.image), before, "the device is byte-identical");
}

/// A swap area switched on by a test, switched off on drop.
struct Swap(String);

impl Drop for Swap {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(&self.0).output();
    }
}

#[test]
fn a_second_loop_device_over_an_active_swap_area_is_never_written() {
    let Some(space) = image_space() else { return };
    if !have("mkswap") || !have("swapon") {
        skip("a swap area needs mkswap and swapon (util-linux)");
        return;
    }
    let sb = Sandbox::new();
    let area = image(&space.point.join("swap.img"));
    let swap_loop = Loop::attach(&area, false);
    assert!(Command::new("mkswap").arg(&swap_loop.0).output().unwrap().status.success());
    let out = Command::new("swapon").arg(&swap_loop.0).output().unwrap();
    if !out.status.success() {
        skip(format!("swapon {}: {}", swap_loop.0, String::from_utf8_lossy(&out.stderr)));
        return;
    }
    let swap = Swap(swap_loop.0.clone());
    // The header page (the kernel never rewrites it while the area is in use; pages swapped out
    // meanwhile may change the rest).
    let header = std::fs::read(&area).unwrap()[..4096].to_vec();
    let alias = Loop::attach(&area, false);
    let out = write_all_of(&sb, &sb.db(), &alias.0);
    assert_usage_error(&out, "in use as swap");
    let (_, stderr) = text(&out);
    assert!(stderr.contains(&swap_loop.0), "names the swap area: {stderr}");
    assert!(std::fs::read(&area).unwrap()[..4096] == header[..], "the swap header is byte-identical");
    drop((alias, swap, swap_loop));
}
