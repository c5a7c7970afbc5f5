//! The backup walk and `extents`: extent counts equal filefrag's on
//! loop-mounted ext4, xfs and btrfs; tmpfs says plainly it has no FIEMAP;
//! `run backup` reads exactly the bytes that are there, never writes to the
//! tree, and counts a real read error (a btrfs checksum failure) and goes on.
use crate::helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHUNK: usize = 64 * 1024;

/// Data nobody's allocator or compressor treats specially.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0; len];
    iomatrix_random::Generator::seeded(seed).fill(&mut out);
    out
}

fn write_synced(path: &Path, bytes: &[u8]) {
    let mut f = File::create(path).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

/// Two files grown by turns, 64 KiB at a time, each write fsync'd: the
/// allocator interleaves them, so both end up in many extents.
fn interleaved(dir: &Path, a: &str, b: &str, rounds: usize) {
    let mut fa = File::create(dir.join(a)).unwrap();
    let mut fb = File::create(dir.join(b)).unwrap();
    for i in 0..rounds {
        fa.write_all(&data(CHUNK, 2 * i as u64)).unwrap();
        fa.sync_all().unwrap();
        fb.write_all(&data(CHUNK, 2 * i as u64 + 1)).unwrap();
        fb.sync_all().unwrap();
    }
}

/// A tree of every kind of file whose extents are worth counting, all synced
/// (no delayed allocation left to change between two looks). Returns the
/// regular files' sizes by path.
fn make_tree(dir: &Path) -> BTreeMap<PathBuf, u64> {
    std::fs::create_dir_all(dir.join("deep/er")).unwrap();
    interleaved(dir, "fragA", "fragB", 32);
    write_synced(&dir.join("empty"), b"");
    write_synced(&dir.join("tiny"), b"hello\n");
    write_synced(&dir.join("deep/one-mib"), &data(1 << 20, 7));
    write_synced(&dir.join("deep/er/odd"), &data(300_001, 8));
    // Holes: 8 KiB at 0, 1 MiB and 5 MiB of a 6 MiB file.
    let sparse = dir.join("sparse");
    let f = File::create(&sparse).unwrap();
    for off in [0u64, 1 << 20, 5 << 20] {
        std::os::unix::fs::FileExt::write_all_at(&f, &data(8192, off), off).unwrap();
    }
    f.set_len(6 << 20).unwrap();
    f.sync_all().unwrap();
    // Preallocated and never written (unwritten extents), and preallocated then partly written.
    let out = Command::new("fallocate").args(["-l", "4M"]).arg(dir.join("prealloc")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new("fallocate").args(["-l", "4M"]).arg(dir.join("prealloc-part")).output().unwrap();
    assert!(out.status.success());
    let f = std::fs::OpenOptions::new().write(true).open(dir.join("prealloc-part")).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &data(CHUNK, 9), 1 << 20).unwrap();
    f.sync_all().unwrap();
    let mut sizes = BTreeMap::new();
    for e in walk(dir) {
        let meta = std::fs::symlink_metadata(&e).unwrap();
        if meta.is_file() {
            sizes.insert(e, meta.len());
        }
    }
    sizes
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if std::fs::symlink_metadata(&p).unwrap().is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

/// `filefrag FILE`'s count ("FILE: N extents found"), or None where it cannot map.
fn filefrag(path: &Path) -> Option<u64> {
    let out = Command::new("filefrag").arg(path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let tail = text.trim().rsplit(": ").next()?;
    tail.split(' ').next()?.parse().ok().filter(|_| out.status.success())
}

fn extents_json(sb: &Sandbox, dir: &Path) -> Value {
    let out = sb.run(&["extents", dir.to_str().unwrap(), "--json", "--per-file"]);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("extents --json is JSON")
}

#[test]
fn extent_counts_equal_filefrags_on_ext4_xfs_and_btrfs() {
    if !have("filefrag") {
        return skip("filefrag (e2fsprogs) is not installed");
    }
    for fstype in ["ext4", "xfs", "btrfs"] {
        let Some(fs) = Mount::image(fstype, 300) else { continue };
        let sizes = make_tree(&fs.point);
        let sb = Sandbox::new();
        let doc = extents_json(&sb, &fs.point);
        assert_eq!(doc["schema"], "iomatrix.extents/1");
        assert_eq!(doc["fs_type"], fstype);
        assert_eq!(doc["fiemap"], true, "{fstype}");
        let files = doc["files"].as_array().unwrap();
        assert_eq!(files.len(), sizes.len(), "{fstype}: every regular file once");
        let mut total = 0;
        for f in files {
            let path = PathBuf::from(f["path"].as_str().unwrap());
            let ours = f["extents"].as_u64().unwrap_or_else(|| panic!("{fstype}: {f}"));
            let theirs = filefrag(&path).unwrap_or_else(|| panic!("filefrag cannot map {}", path.display()));
            assert_eq!(ours, theirs, "{fstype}: {} ({f})", path.display());
            total += theirs;
        }
        let summary = &doc["walk"]["extents"];
        assert_eq!(summary["total_extents"], total, "{fstype}");
        assert_eq!(summary["files"], sizes.len() as u64);
        // The interleaved pair really is fragmented (ext4 and xfs merge some runs; btrfs keeps all 32).
        for name in ["fragA", "fragB"] {
            let n = filefrag(&fs.point.join(name)).unwrap();
            assert!(n > 1, "{fstype}: {name} has {n} extents");
        }
        let by_name = |name: &str| {
            files.iter().find(|f| f["path"].as_str().unwrap().ends_with(name)).unwrap()["extents"].as_u64().unwrap()
        };
        assert_eq!(by_name("/empty"), 0);
        assert!(by_name("/prealloc") >= 1, "unwritten extents count");
        assert!(summary["unwritten_extents"].as_u64().unwrap() >= 1, "{fstype}: {summary}");
        assert_eq!(summary["max"], files.iter().map(|f| f["extents"].as_u64().unwrap()).max().unwrap());
        let hist: u64 = summary["histogram"].as_array().unwrap().iter().map(|b| b["files"].as_u64().unwrap()).sum();
        assert_eq!(hist, sizes.len() as u64);
        // The text form says the same.
        let out = sb.run(&["extents", fs.point.to_str().unwrap()]);
        assert_success(&out);
        let (stdout, _) = text(&out);
        assert!(stdout.contains(&format!("extents: {total},")), "{stdout}");
        assert!(stdout.contains("counted as filefrag counts them"), "{stdout}");
    }
}

#[test]
fn extents_on_tmpfs_say_plainly_there_is_no_fiemap() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=32m") else { return };
    write_synced(&fs.point.join("a"), &data(100_000, 1));
    write_synced(&fs.point.join("b"), &data(10, 2));
    let sb = Sandbox::new();
    let out = sb.run(&["extents", fs.point.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("no FIEMAP: tmpfs does not map file extents (EOPNOTSUPP)"), "{stdout}");
    assert!(stdout.contains("no extent counts for its 2 files"), "{stdout}");
    let doc = extents_json(&sb, &fs.point);
    assert_eq!(doc["fiemap"], false);
    assert_eq!(doc["walk"]["extents"]["files"], 0);
    assert_eq!(doc["walk"]["extents"]["files_without_fiemap"], 2);
    assert_eq!(doc["walk"]["extents"]["no_fiemap_errno"], "EOPNOTSUPP");
    for f in doc["files"].as_array().unwrap() {
        assert_eq!(f["no_fiemap"], true, "{f}");
    }
}

/// Access times of every regular file, to show the walk read them without
/// changing them (folders' access times may change: reading a folder, as
/// any backup agent must, updates it).
fn atimes(dir: &Path) -> Vec<(PathBuf, i64, i64)> {
    walk(dir)
        .into_iter()
        .filter_map(|p| {
            let m = std::fs::symlink_metadata(&p).unwrap();
            m.is_file().then(|| (p, m.atime(), m.atime_nsec()))
        })
        .collect()
}

fn folders(dir: &Path) -> u64 {
    walk(dir).iter().filter(|p| std::fs::symlink_metadata(p).unwrap().is_dir()).count() as u64
}

fn backup_ok(sb: &Sandbox, dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["run", "backup", "--target", dir.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = sb.run(&args);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("run backup --json is JSON")
}

#[test]
fn run_backup_reads_exactly_the_bytes_there_on_tmpfs_and_ext4() {
    for fstype in ["tmpfs", "ext4"] {
        let fs = if fstype == "tmpfs" { Mount::virtual_fs("tmpfs", "size=64m") } else { Mount::image("ext4", 200) };
        let Some(fs) = fs else { continue };
        let sizes = make_tree(&fs.point);
        // Entries that are not regular files are counted, never opened or followed.
        std::os::unix::fs::symlink("/etc", fs.point.join("to-etc")).unwrap();
        assert!(Command::new("mkfifo").arg(fs.point.join("fifo")).status().unwrap().success());
        // A second name of a file is not read again.
        std::fs::hard_link(fs.point.join("tiny"), fs.point.join("deep/tiny-again")).unwrap();
        let before = (walk(&fs.point), atimes(&fs.point));
        let (files, bytes) = (sizes.len() as u64, sizes.values().sum::<u64>());
        let sb = Sandbox::new();
        for (extra, cold) in [(vec!["--read-size", "64k"], true), (vec!["--warm", "--read-size", "1000"], false)] {
            let run = backup_ok(&sb, &fs.point, &extra);
            assert_eq!(run["run"]["suite"], "backup");
            assert_eq!(run["run"]["status"], "complete");
            assert_eq!(run["run"]["environment"]["target"]["fs_type"], fstype);
            let cache = run["run"]["conditions"]["cache"].as_str().unwrap();
            assert!(cache.starts_with(if cold { "cold" } else { "warm" }), "{cache}");
            let cells = cells(&run);
            assert_eq!(cells.len(), 1);
            let c = &cells[0];
            let m = &c["metrics"];
            assert_eq!(c["test"], "backup");
            assert_eq!((c["bytes"].as_u64(), c["ops"].as_u64()), (Some(bytes), Some(files)), "{fstype}");
            assert_eq!((m["files"].as_u64(), m["bytes"].as_u64()), (Some(files), Some(bytes)));
            assert_eq!(m["errors"]["total"], 0, "{m}");
            assert_eq!((m["skipped"]["symlinks"].as_u64(), m["skipped"]["fifos"].as_u64()), (Some(1), Some(1)));
            assert_eq!(m["hard_links"], 1);
            assert_eq!(m["directories"], folders(&fs.point), "deep, deep/er (and lost+found on ext4)");
            assert_eq!(m["cold"], cold);
            assert!(m["mib_per_min"].as_f64().unwrap() > 0.0);
            assert!((m["mib_per_min"].as_f64().unwrap() - 60.0 * m["mib_per_sec"].as_f64().unwrap()).abs() < 1e-6);
            let classes = m["classes"].as_array().unwrap();
            assert_eq!(classes.iter().map(|k| k["bytes"].as_u64().unwrap()).sum::<u64>(), bytes);
            assert_eq!(classes.iter().map(|k| k["files"].as_u64().unwrap()).sum::<u64>(), files);
            assert_eq!(classes[0]["class"], 0, "the empty file is class 0");
            let ext = &m["extents"];
            if fstype == "tmpfs" {
                assert_eq!((ext["files"].as_u64(), ext["files_without_fiemap"].as_u64()), (Some(0), Some(files)));
            } else {
                assert_eq!(ext["files"].as_u64(), Some(files));
                assert!(ext["fragmented_files"].as_u64().unwrap() >= 2, "{ext}");
            }
            // The text report, from the store.
            let id = run["run"]["id"].as_i64().unwrap().to_string();
            let (stdout, _) = text(&sb.run(&["show", &id]));
            assert!(stdout.contains(&format!("read: {files} files")), "{stdout}");
            assert!(stdout.contains("MiB/min"), "{stdout}");
            assert!(stdout.contains("Time by file size"), "{stdout}");
            if fstype == "tmpfs" {
                assert!(stdout.contains("no FIEMAP: tmpfs does not map file extents"), "{stdout}");
                if cold {
                    assert!(stdout.contains("the page cache is the storage"), "{stdout}");
                }
            }
        }
        // Read only: nothing added or removed, and no access time changed (O_NOATIME).
        assert_eq!((walk(&fs.point), atimes(&fs.point)), before, "{fstype}: the walk changed the tree");
    }
}

/// A btrfs image whose one file has a corrupted data block: reading it fails
/// with EIO (checksum mismatch). Unmounted on drop.
struct CorruptBtrfs {
    point: PathBuf,
    _holder: tempfile::TempDir,
}

impl CorruptBtrfs {
    const MAGIC: &'static [u8] = b"IOMATRIX-CORRUPT-THIS-BLOCK";

    fn new() -> Option<CorruptBtrfs> {
        if !is_root() || !have("mkfs.btrfs") || !Path::new("/dev/loop-control").exists() {
            skip("a corrupted btrfs needs root, mkfs.btrfs and loop devices");
            return None;
        }
        let holder = tempfile::tempdir().unwrap();
        let image = holder.path().join("fs.img");
        let point = holder.path().join("mnt");
        std::fs::create_dir(&point).unwrap();
        File::create(&image).unwrap().set_len(256 << 20).unwrap();
        let ok = |c: &mut Command| c.output().map(|o| o.status.success()).unwrap_or(false);
        if !ok(Command::new("mkfs.btrfs").args(["-q", "-f"]).arg(&image)) {
            skip("mkfs.btrfs failed");
            return None;
        }
        let mount = || ok(Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&point));
        if !mount() {
            skip("cannot loop-mount btrfs");
            return None;
        }
        // 16 blocks, each starting with MAGIC, so each can be found in the image.
        let mut bad = Vec::new();
        for i in 0..16u64 {
            let mut block = data(4096, 100 + i);
            block[..Self::MAGIC.len()].copy_from_slice(Self::MAGIC);
            bad.extend_from_slice(&block);
        }
        write_synced(&point.join("bad"), &bad);
        write_synced(&point.join("good"), &data(200_000, 3));
        std::fs::create_dir(point.join("d")).unwrap();
        write_synced(&point.join("d/good2"), &data(5000, 4));
        let fs = CorruptBtrfs { point: point.clone(), _holder: holder };
        assert!(ok(Command::new("umount").arg(&fs.point)), "unmount the fresh btrfs to corrupt it");
        let mut img = std::fs::read(&image).unwrap();
        let mut hits = 0;
        for block in img.chunks_mut(4096) {
            if block.starts_with(Self::MAGIC) {
                block[..Self::MAGIC.len()].fill(0);
                hits += 1;
            }
        }
        assert!(hits >= 16, "the file's blocks were not found in the image ({hits})");
        std::fs::write(&image, img).unwrap();
        assert!(mount(), "remount after corrupting");
        Some(fs)
    }
}

impl Drop for CorruptBtrfs {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(&self.point).status().is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.point).status();
        }
    }
}

#[test]
fn a_file_that_cannot_be_read_is_counted_and_the_walk_goes_on() {
    let Some(fs) = CorruptBtrfs::new() else { return };
    let sb = Sandbox::new();
    let run = backup_ok(&sb, &fs.point, &[]);
    assert_eq!(run["run"]["status"], "complete");
    let m = &cells(&run)[0]["metrics"];
    assert_eq!(m["files"], 2, "the two good files: {m}");
    assert_eq!(m["bytes"], 205_000);
    assert_eq!(m["errors"]["total"], 1);
    assert_eq!(m["errors"]["by_kind"]["read: Input/output error"], 1, "{m}");
    assert!(m["errors"]["examples"][0]["path"].as_str().unwrap().ends_with("/bad"));
    // FIEMAP reads no data: all three files are mapped.
    assert_eq!(m["extents"]["files"], 3);
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    assert!(stdout.contains("errors: 1 (read: Input/output error x1)"), "{stdout}");
}

#[test]
fn bad_backup_and_extents_input_is_refused() {
    let sb = Sandbox::new();
    let missing = sb.dir.path().join("missing");
    let file = sb.dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let target = sb.target();
    let t = target.to_str().unwrap();
    assert_usage_error(&sb.run(&["run", "backup", "--target", missing.to_str().unwrap()]), "give an existing folder");
    assert_usage_error(&sb.run(&["run", "backup", "--target", file.to_str().unwrap()]), "is not a folder");
    assert_usage_error(&sb.run(&["run", "backup", "--target", t, "--read-size", "0"]), "--read-size 0");
    assert_usage_error(&sb.run(&["run", "backup", "--target", t, "--read-size", "lots"]), "--read-size lots");
    assert_usage_error(&sb.run(&["run", "backup", "--target", t, "--label", "nokey"]), "--label");
    assert_usage_error(&sb.run(&["extents", missing.to_str().unwrap()]), "give an existing folder");
    assert_usage_error(&sb.run(&["extents", file.to_str().unwrap()]), "is not a folder");
    assert_eq!(sb.run(&["run", "backup"]).status.code(), Some(2), "--target is required");
    // Nothing was stored for refused input.
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty());
}

#[test]
fn run_backup_in_the_temporary_folder_leaves_it_unchanged() {
    let sb = Sandbox::new();
    let tree = sb.target();
    let sizes = make_tree_plain(&tree);
    let before = walk(&tree);
    let run = backup_ok(&sb, &tree, &["--label", "what=temp"]);
    let c = &cells(&run)[0];
    assert_eq!(c["bytes"].as_u64(), Some(sizes));
    assert_eq!(run["run"]["labels"], serde_json::json!([["what", "temp"]]));
    assert_eq!(walk(&tree), before);
    assert!(sb.leftovers().is_empty());
}

/// A few files anywhere (no fallocate, no fsync needed): the total size.
fn make_tree_plain(dir: &Path) -> u64 {
    std::fs::create_dir_all(dir.join("x/y")).unwrap();
    let mut total = 0;
    for (name, len) in [("a", 0usize), ("x/b", 1), ("x/y/c", 70_000), ("x/y/d", 1 << 20)] {
        std::fs::write(dir.join(name), data(len, len as u64)).unwrap();
        total += len as u64;
    }
    total
}

#[test]
fn ctrl_c_stops_a_walk_promptly_and_keeps_what_it_read() {
    let sb = Sandbox::new();
    let tree = sb.target();
    std::fs::write(tree.join("small"), b"12345").unwrap();
    // One byte per read call: tens of seconds of reading if nothing stops it.
    std::fs::write(tree.join("big"), data(48 << 20, 1)).unwrap();
    let mut child = sb
        .cmd()
        .args(["run", "backup", "--warm", "--read-size", "1", "--target", tree.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let run_begun = || {
        rusqlite::Connection::open_with_flags(sb.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0)
            > 0
    };
    while !run_begun() {
        assert!(started.elapsed().as_secs() < 20, "the run never began");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let signalled = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if signalled.elapsed().as_secs() >= 5 {
            let _ = child.kill();
            panic!("still running 5 s after Ctrl-C");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "interrupted");
    let m = &cells(&run)[0]["metrics"];
    assert_eq!(m["interrupted"], true);
    assert!(m["bytes"].as_u64().unwrap() < 48 << 20, "the big file was not finished: {m}");
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    assert!(text(&sb.run(&["show", &id])).0.contains("interrupted: the figures cover the"));
}

/// As another user (root only, through setpriv): a file that user may not
/// open is a real error, counted by kind while the walk goes on; files not
/// ours cannot be opened with O_NOATIME, and the report says so.
#[test]
fn files_another_user_cannot_open_are_counted_and_the_walk_goes_on() {
    if !is_root() || !have("setpriv") {
        return skip("needs root and setpriv");
    }
    use std::os::unix::fs::PermissionsExt;
    let holder = tempfile::tempdir().unwrap();
    let base = holder.path();
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tree = base.join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("open"), data(100_000, 1)).unwrap();
    std::fs::write(tree.join("sub/open2"), b"hi\n").unwrap();
    std::fs::write(tree.join("secret"), b"no").unwrap();
    std::fs::set_permissions(tree.join("secret"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let home = base.join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_iomatrix")])
        .args(["run", "backup", "--json", "--target", tree.to_str().unwrap()])
        .env("IOMATRIX_DB", home.join("results.sqlite"))
        .env(crate::helpers::BUSY_VAR, "off")
        .env("HOME", &home)
        .output()
        .unwrap();
    if !out.status.success() && text(&out).1.contains("Permission denied") && !text(&out).1.contains("iomatrix:") {
        return skip(format!("the test binary is not reachable by another user: {}", text(&out).1));
    }
    assert_success(&out);
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &cells(&run)[0]["metrics"];
    assert_eq!((m["files"].as_u64(), m["bytes"].as_u64()), (Some(2), Some(100_003)));
    assert_eq!(m["errors"]["by_kind"]["open: Permission denied"], 1, "{m}");
    assert!(m["errors"]["examples"][0]["path"].as_str().unwrap().ends_with("/secret"));
    assert_eq!(m["noatime_refused"], 2);
}

/// TARGET/client-0..n, each a small tree of its own sizes, and a file at the
/// top that no client walks: (files, bytes) of each client's tree.
fn make_client_trees(target: &Path, n: usize) -> Vec<(u64, u64)> {
    std::fs::write(target.join("not-a-client-tree"), data(12_345, 99)).unwrap();
    (0..n)
        .map(|r| {
            let tree = target.join(format!("client-{r}"));
            std::fs::create_dir_all(tree.join("sub")).unwrap();
            let sizes = [0usize, 10 + r, 70_000 * (r + 1), (1 << 20) + r];
            for (i, len) in sizes.iter().enumerate() {
                let name = if i % 2 == 0 { format!("f{i}") } else { format!("sub/f{i}") };
                std::fs::write(tree.join(name), data(*len, (10 * r + i) as u64)).unwrap();
            }
            (sizes.len() as u64, sizes.iter().map(|s| *s as u64).sum())
        })
        .collect()
}

#[test]
fn run_backup_from_three_clients_each_walks_its_own_tree() {
    // tmpfs where we may mount it, else the system's temporary folder.
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=64m").ok();
    let sb = Sandbox::new();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let trees = make_client_trees(&target, 3);
    let before = (walk(&target), atimes(&target));
    for extra in [vec!["--clients", "3"], vec!["--clients", "3", "--warm", "--read-size", "4k"]] {
        let run = backup_ok(&sb, &target, &extra);
        assert_eq!(run["run"]["status"], "complete");
        assert_eq!(run["run"]["conditions"]["clients"], 3);
        let cells = cells(&run);
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        let m = &c["metrics"];
        assert_eq!(c["clients"], 3);
        crate::clients::assert_barrier_held(c, 3);
        let starts = m["start_barrier"].as_array().unwrap();
        for s in starts {
            for t in starts {
                assert!(s["left_unix_ns"].as_u64() >= t["arrived_unix_ns"].as_u64(), "{starts:?}");
            }
        }
        assert_eq!(m["failed_clients"].as_array().unwrap().len(), 0);
        let figures = c["client_figures"].as_array().unwrap();
        assert_eq!(figures.len(), 3);
        for (r, (f, (files, bytes))) in figures.iter().zip(&trees).enumerate() {
            assert_eq!(f["rank"], r);
            assert!(f["root"].as_str().unwrap().ends_with(&format!("/client-{r}")), "{f}");
            assert_eq!((f["files"].as_u64(), f["bytes"].as_u64()), (Some(*files), Some(*bytes)), "client {r}");
            assert_eq!(f["errors"]["total"], 0);
            assert_eq!(f["directories"], 1);
            let ext = &f["extents"];
            assert_eq!(ext["files"].as_u64().unwrap() + ext["files_without_fiemap"].as_u64().unwrap(), *files);
        }
        // Only the clients' trees: the file at the top is nobody's.
        let (files, bytes): (u64, u64) = (trees.iter().map(|t| t.0).sum(), trees.iter().map(|t| t.1).sum());
        assert_eq!((c["ops"].as_u64(), c["bytes"].as_u64()), (Some(files), Some(bytes)));
        assert_eq!((m["files"].as_u64(), m["bytes"].as_u64()), (Some(files), Some(bytes)));
        let classes = m["classes"].as_array().unwrap();
        assert_eq!(classes.iter().map(|k| k["bytes"].as_u64().unwrap()).sum::<u64>(), bytes);
        // The aggregate is the sum of the clients' own rates.
        let f64_of = |v: &Value| v.as_f64().unwrap();
        let sum: f64 = figures.iter().map(|f| f64_of(&f["mib_per_min"])).sum();
        assert!(sum > 0.0);
        for aggregate in [f64_of(&m["mib_per_min"]), f64_of(&m["mib_per_min_sum_of_clients"])] {
            assert!((aggregate - sum).abs() <= 1e-9 * sum, "aggregate {aggregate} != sum of the clients' {sum}");
        }
        let kib: f64 =
            figures.iter().map(|f| f64_of(&f["bytes"]) / 1024.0 / (f["read_ns"].as_u64().unwrap() as f64 / 1e9)).sum();
        assert!((f64_of(&c["kib_per_sec"]) - kib).abs() <= 1e-6 * kib, "{c}");
        // Overall: all bytes from the common start to the last client's end.
        let overall_ns = m["overall_ns"].as_u64().unwrap();
        assert_eq!(overall_ns, figures.iter().map(|f| f["wall_ns"].as_u64().unwrap()).max().unwrap());
        let overall = bytes as f64 / 1048576.0 * 60.0 / (overall_ns as f64 / 1e9);
        assert!((f64_of(&m["mib_per_min_overall"]) - overall).abs() <= 1e-9 * overall, "{m}");
        // The text report names each client and the aggregates.
        let id = run["run"]["id"].as_i64().unwrap().to_string();
        let (stdout, _) = text(&sb.run(&["show", &id]));
        assert!(stdout.contains(&format!("read: {files} files")), "{stdout}");
        assert!(stdout.contains("the sum of the 3 clients' own rates"), "{stdout}");
        assert!(stdout.contains("Each client's walk"), "{stdout}");
        assert!(stdout.contains("/client-2"), "{stdout}");
    }
    assert_eq!((walk(&target), atimes(&target)), before, "the walk changed the trees");
    assert!(leftovers(&target).is_empty());
}

#[test]
fn many_clients_need_a_tree_each() {
    let sb = Sandbox::new();
    let target = sb.target();
    make_client_trees(&target, 2);
    let t = target.to_str().unwrap();
    let out = sb.run(&["run", "backup", "--target", t, "--clients", "3"]);
    assert_usage_error(&out, &format!("{}/client-2", target.canonicalize().unwrap().display()));
    assert!(text(&out).1.contains("TARGET/client-r"), "{}", text(&out).1);
    // A file where a tree should be is no tree.
    std::fs::write(target.join("client-2"), b"x").unwrap();
    assert_usage_error(&sb.run(&["run", "backup", "--target", t, "--clients", "3"]), "client-2");
    assert_usage_error(&sb.run(&["run", "backup", "--target", t, "--clients", "0"]), "--clients 0");
    assert_usage_error(
        &sb.run(&["run", "backup", "--target", t, "--clients", "2", "--on-client-error", "maybe"]),
        "--on-client-error",
    );
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty(), "nothing stored");
    // Two clients have their trees.
    let run = backup_ok(&sb, &target, &["--clients", "2", "--warm"]);
    assert_eq!(cells(&run)[0]["client_figures"].as_array().unwrap().len(), 2);
}

#[test]
fn repeat_walks_the_tree_again_and_keeps_every_walk() {
    let sb = Sandbox::new();
    let target = sb.target();
    make_client_trees(&target, 1);
    let run = backup_ok(&sb, &target.join("client-0"), &["--warm", "--repeat", "3"]);
    let cells = cells(&run);
    assert_eq!(cells.len(), 3);
    assert_eq!(run["run"]["total_cells"], 3);
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(c["seq"], i);
        assert_eq!((c["ops"].as_u64(), c["bytes"].as_u64()), (cells[0]["ops"].as_u64(), cells[0]["bytes"].as_u64()));
    }
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    assert!(stdout.contains("3 walks of the tree") && stdout.contains("Noise: 3 to 3 samples"), "{stdout}");
}
