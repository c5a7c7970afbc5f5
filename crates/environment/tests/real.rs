//! Tests against the real machine: /proc, statvfs, and (as root) real loop
//! devices carrying ext4, with and without a partition table.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use iomatrix_environment::{capture, space, Environment};
use iomatrix_testkit::skip;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("iomatrix-env-{tag}-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn capture_ok(path: &Path) -> Environment {
    capture(path).unwrap_or_else(|e| panic!("capture({}) failed: {e}", path.display()))
}

#[test]
fn capture_tempdir_reports_machine_and_target() {
    let tmp = TempDir::new("plain");
    let env = capture_ok(tmp.path());
    let t = &env.target;
    let canonical = std::fs::canonicalize(tmp.path()).unwrap();

    assert!(!t.fs_type.is_empty() && t.fs_type != "unknown", "{t:?}");
    assert!(env.machine.cpu_count >= 1);
    assert!(env.machine.ram_bytes > 0);
    assert!(t.total_bytes >= t.free_bytes, "{t:?}");
    assert!(t.total_bytes > 0, "{t:?}");
    assert_eq!(t.path, canonical.to_string_lossy());
    assert!(canonical.starts_with(&t.mount_point), "{t:?}");
    assert!(!t.mount_options.is_empty());
    assert!(!env.machine.host.is_empty() && !env.machine.kernel.is_empty());
    assert_eq!(env.machine.arch, std::env::consts::ARCH);

    // A stored result must read back identical.
    let json = serde_json::to_string(&env).unwrap();
    let back: Environment = serde_json::from_str(&json).unwrap();
    assert_eq!(back, env);
    eprintln!("{}", serde_json::to_string_pretty(&env).unwrap());
}

#[test]
fn capture_missing_path_is_an_error() {
    let tmp = TempDir::new("missing");
    let err = capture(&tmp.path().join("does-not-exist")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn capture_of_root_dir_uses_root_mount() {
    let env = capture_ok(Path::new("/"));
    assert_eq!(env.target.path, "/");
    assert_eq!(env.target.mount_point, "/");
}

#[test]
fn space_agrees_with_capture() {
    let tmp = TempDir::new("space");
    let s = space(tmp.path()).unwrap();
    let env = capture_ok(tmp.path());
    assert_eq!(s.total_bytes, env.target.total_bytes);
    assert!(s.free_bytes <= s.total_bytes);
    assert!(space(&tmp.path().join("nope")).is_err());
}

#[test]
fn tmpfs_has_no_block_device() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return skip("no /dev/shm");
    }
    let env = capture_ok(shm);
    if env.target.fs_type != "tmpfs" {
        return skip(format!("/dev/shm is {}, not tmpfs", env.target.fs_type));
    }
    assert_eq!(env.target.mount_point, "/dev/shm");
    assert_eq!(env.target.block_device, None);
}

// ---------------------------------------------------------------------------
// Root-only: real loop devices.

/// Undoes exactly what a test made, even when an assertion fails: unmounts
/// its mounts, then detaches its loop devices, newest first.
#[derive(Default)]
struct Cleanup {
    mounts: Vec<PathBuf>,
    loops: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for m in self.mounts.iter().rev() {
            let m = m.to_string_lossy();
            if run("umount", &[&m]).is_err() {
                // Busy (should not happen): detach lazily so it still goes.
                if let Err(e) = run("umount", &["-l", &m]) {
                    eprintln!("cleanup: umount {m} failed: {e}");
                }
            }
        }
        for l in self.loops.iter().rev() {
            if let Err(e) = run("losetup", &["-d", l]) {
                eprintln!("cleanup: losetup -d {l} failed: {e}");
            }
        }
    }
}

/// Run a command, returning its trimmed stdout or a description of failure.
fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    run_with_input(cmd, args, None)
}

fn run_with_input(cmd: &str, args: &[&str], input: Option<&str>) -> Result<String, String> {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if let Some(text) = input {
        child.stdin.take().unwrap().write_all(text.as_bytes()).map_err(|e| format!("{cmd} stdin: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!("{cmd} {args:?}: {}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn have_tool(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain(["/sbin", "/usr/sbin"].map(PathBuf::from)).any(|d| d.join(name).is_file())
}

/// True when this test may run; otherwise a skip, with the reason.
fn root_with(tools: &[&str]) -> bool {
    if !rustix::process::geteuid().is_root() {
        skip("needs root (loop devices, mount)");
        return false;
    }
    if !Path::new("/dev/loop-control").exists() {
        skip("no /dev/loop-control");
        return false;
    }
    if let Some(t) = tools.iter().find(|t| !have_tool(t)) {
        skip(format!("{t} not installed"));
        return false;
    }
    true
}

const IMAGE_BYTES: u64 = 64 << 20;
const PART_SECTORS: u64 = 120_000;

fn make_image(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(IMAGE_BYTES).unwrap();
    path
}

/// Write a DOS label with one Linux partition at `start` (sectors). Uses
/// sfdisk when installed; otherwise writes the same MBR bytes directly.
fn write_partition_table(image: &Path, start: u64) {
    if have_tool("sfdisk") {
        let script = format!("label: dos\nstart={start}, size={PART_SECTORS}, type=83\n");
        run_with_input("sfdisk", &["-q", image.to_str().unwrap()], Some(&script)).expect("sfdisk");
        return;
    }
    eprintln!("note: sfdisk not installed, writing the MBR directly");
    let mut mbr = [0u8; 512];
    mbr[440..444].copy_from_slice(&0x1e0a_7a11u32.to_le_bytes()); // disk id
    let entry = &mut mbr[446..462];
    entry[0] = 0x00; // not bootable
    entry[1..4].copy_from_slice(&[0xfe, 0xff, 0xff]); // CHS: use LBA
    entry[4] = 0x83; // Linux
    entry[5..8].copy_from_slice(&[0xfe, 0xff, 0xff]);
    entry[8..12].copy_from_slice(&u32::try_from(start).unwrap().to_le_bytes());
    entry[12..16].copy_from_slice(&u32::try_from(PART_SECTORS).unwrap().to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let mut f = std::fs::OpenOptions::new().write(true).open(image).unwrap();
    f.write_all(&mbr).unwrap();
    f.sync_all().unwrap();
}

/// `losetup --find --show`; the device is registered for cleanup at once.
fn attach(cleanup: &mut Cleanup, image: &Path, partscan: bool) -> String {
    let mut args = vec!["--find", "--show"];
    if partscan {
        args.push("--partscan");
    }
    args.push(image.to_str().unwrap());
    let dev = run("losetup", &args).expect("losetup");
    cleanup.loops.push(dev.clone());
    dev
}

fn appears_within(path: &Path, secs: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !path.exists() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// Wait for the first partition of `dev` to show up. A kernel built without
/// the DOS partition parser (CONFIG_MSDOS_PARTITION unset) finds nothing on
/// --partscan; then `partx -a` reads the table in user space and adds the
/// partition through BLKPG. Either way it goes away with `losetup -d`.
fn first_partition(dev: &str) -> String {
    let part = format!("{dev}p1");
    if !appears_within(Path::new(&part), 2) {
        assert!(have_tool("partx"), "{part} did not appear and partx is not installed");
        eprintln!("note: kernel did not scan {dev}; adding partitions with partx");
        run("partx", &["-a", dev]).expect("partx -a");
        assert!(appears_within(Path::new(&part), 10), "{part} never appeared");
    }
    part
}

fn mkfs_and_mount(cleanup: &mut Cleanup, dev: &str, mnt: &Path) {
    run("mkfs.ext4", &["-q", "-F", dev]).expect("mkfs.ext4");
    std::fs::create_dir_all(mnt).unwrap();
    run("mount", &["-t", "ext4", dev, mnt.to_str().unwrap()]).expect("mount");
    cleanup.mounts.push(mnt.to_path_buf());
}

fn kernel_name(dev: &str) -> String {
    dev.strip_prefix("/dev/").unwrap_or(dev).to_string()
}

/// Partition at `start` on a fresh loop device, ext4, mounted; capture a
/// directory inside it and check what is reported.
fn check_partition(start: u64, alignment: u64) {
    let tmp = TempDir::new("part");
    let mut cleanup = Cleanup::default();

    let image = make_image(tmp.path(), &format!("start{start}.img"));
    write_partition_table(&image, start);
    let dev = attach(&mut cleanup, &image, true);
    let disk = kernel_name(&dev);
    let part_dev = first_partition(&dev);
    let mnt = tmp.path().join("mnt");
    mkfs_and_mount(&mut cleanup, &part_dev, &mnt);
    let data = mnt.join("data");
    std::fs::create_dir(&data).unwrap();

    let env = capture_ok(&data);
    let t = &env.target;
    eprintln!("{}", serde_json::to_string_pretty(t).unwrap());
    assert_eq!(t.fs_type, "ext4");
    assert_eq!(t.mount_point, mnt.canonicalize().unwrap().to_string_lossy());
    assert_eq!(t.mount_source, part_dev);
    assert!(t.total_bytes > 0 && t.total_bytes >= t.free_bytes);
    assert!(t.total_bytes <= PART_SECTORS * 512);
    let bd = t.block_device.as_ref().expect("block device");
    assert_eq!(bd.name, format!("{disk}p1"));
    assert!(bd.is_partition);
    assert_eq!(bd.parent.as_deref(), Some(disk.as_str()));
    assert_eq!(bd.start_sector, Some(start));
    assert_eq!(bd.alignment_bytes, Some(alignment));
    assert_eq!(bd.logical_block_size, Some(512));
    assert!(bd.physical_block_size.is_some());
    assert!(bd.rotational.is_some());
    let canonical_image = image.canonicalize().unwrap();
    assert_eq!(bd.backing_file.as_deref(), Some(canonical_image.to_str().unwrap()));
    // `cleanup` then `tmp` drop here, in that order: unmount, detach, delete.
}

#[test]
fn root_loop_partition_at_2048_is_mib_aligned() {
    if root_with(&["losetup", "mkfs.ext4", "mount", "umount"]) {
        check_partition(2048, 1 << 20);
    }
}

#[test]
fn root_loop_partition_at_63_is_512_aligned() {
    if root_with(&["losetup", "mkfs.ext4", "mount", "umount"]) {
        check_partition(63, 512);
    }
}

#[test]
fn root_plain_loop_ext4_is_whole_disk() {
    if !root_with(&["losetup", "mkfs.ext4", "mount", "umount"]) {
        return;
    }
    let tmp = TempDir::new("whole");
    let mut cleanup = Cleanup::default();

    let image = make_image(tmp.path(), "whole.img");
    let dev = attach(&mut cleanup, &image, false);
    // A space in the mount point exercises mountinfo's \040 escape.
    let mnt = tmp.path().join("plain mnt");
    mkfs_and_mount(&mut cleanup, &dev, &mnt);

    let env = capture_ok(&mnt);
    let t = &env.target;
    eprintln!("{}", serde_json::to_string_pretty(t).unwrap());
    assert_eq!(t.fs_type, "ext4");
    assert_eq!(t.mount_point, mnt.canonicalize().unwrap().to_string_lossy());
    assert_eq!(t.path, t.mount_point);
    assert_eq!(t.mount_source, dev);
    let bd = t.block_device.as_ref().expect("block device");
    assert_eq!(bd.name, kernel_name(&dev));
    assert!(!bd.is_partition);
    assert_eq!(bd.parent, None);
    assert_eq!(bd.start_sector, None);
    assert_eq!(bd.alignment_bytes, None);
    assert_eq!(bd.logical_block_size, Some(512));
    let canonical_image = image.canonicalize().unwrap();
    assert_eq!(bd.backing_file.as_deref(), Some(canonical_image.to_str().unwrap()));
}
