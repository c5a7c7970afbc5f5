//! On file systems the tests mount themselves (root only; skipped otherwise):
//! tmpfs and loop-mounted ext4 run every test and are named in the
//! environment; a full disk mid-run fails cleanly and keeps what finished;
//! ramfs refuses O_DIRECT; a read-only target is refused.
use crate::helpers::*;

#[test]
fn tmpfs_runs_every_test_on_every_backend() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let target = fs.point.to_str().unwrap();
    for backend in ["psync", "sync", "mmap", "stdio"] {
        let sb = Sandbox::new();
        let out = sb.run(&["run", "iozone", "--target", target, "--files", "64k,4m", "--records", "4k,64k", "--backend", backend,
            "--tests", "write,rewrite,read,reread,random-read,random-write,backward-read,record-rewrite,stride-read,fwrite,frewrite,fread,freread,mixed"]);
        assert_success(&out);
        let run = sb.last_run();
        assert_eq!(run["run"]["environment"]["target"]["fs_type"], "tmpfs");
        assert!(run["run"]["environment"]["target"]["block_device"].is_null());
        let cells = cells(&run);
        assert_eq!(cells.len(), 2 * 2 * 14);
        for c in &cells {
            assert!(c["kib_per_sec"].as_f64().unwrap() > 0.0, "{c}");
            assert_eq!(c["bytes"], c["file_size"]);
        }
        assert!(leftovers(&fs.point).is_empty());
    }
}

#[test]
fn tmpfs_runs_access_specs_and_bonnie() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "size=96m") else { return };
    let target = fs.point.to_str().unwrap();
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target,
        "--bs",
        "4k,64k",
        "--read",
        "100,0",
        "--qd",
        "1,16",
        "--bytes",
        "4m",
        "--file-size",
        "16m",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["environment"]["target"]["fs_type"], "tmpfs");
    for c in cells(&run) {
        assert_eq!(c["bytes"], 4u64 << 20);
        assert!(c["metrics"]["iops"].as_f64().unwrap() > 0.0);
    }
    let out = sb.run(&["run", "bonnie", "--target", target, "--size", "16m", "--ram", "8m", "--files", "1"]);
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(cells(&run).len(), 12);
    assert!(cells(&run).iter().all(|c| c["metrics"]["per_sec"].as_f64().unwrap() > 0.0));
    assert!(leftovers(&fs.point).is_empty());
}

#[test]
fn ext4_run_records_file_system_and_device() {
    let Some(fs) = Mount::ext4(256) else { return };
    let sb = Sandbox::new();
    let target = fs.point.to_str().unwrap();
    let out = sb.run(&["run", "iozone", "--target", target, "--files", "1m,4m", "--records", "4k,64k", "--direct"]);
    assert_success(&out);
    let run = sb.last_run();
    let env = &run["run"]["environment"]["target"];
    assert_eq!(env["fs_type"], "ext4");
    let dev = env["block_device"]["name"].as_str().unwrap_or_default();
    assert!(dev.starts_with("loop"), "block device {dev}");
    assert!(env["block_device"]["backing_file"].as_str().is_some_and(|f| f.ends_with("fs.img")));
    assert!(cells(&run).iter().all(|c| c["kib_per_sec"].as_f64().unwrap() > 0.0));
    assert!(text(&out).0.contains("block device: loop"));
    assert!(leftovers(&fs.point).is_empty());
}

#[test]
fn a_full_disk_mid_run_fails_cleanly_and_keeps_finished_cells() {
    let Some(fs) = Mount::ext4(24) else { return };
    let sb = Sandbox::new();
    let target = fs.point.to_str().unwrap();
    // 64m cannot fit in a 24 MiB file system; the free-space check is off on purpose.
    let out = sb.run(&[
        "run",
        "iozone",
        "--target",
        target,
        "--files",
        "1m,64m",
        "--records",
        "64k",
        "--tests",
        "write,read",
        "--no-space-check",
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("write file 64m record 64k failed"), "{stderr}");
    assert!(!stderr.contains("panicked"));
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "failed");
    let kept: Vec<_> = cells(&run).iter().map(|c| c["file_size"].as_u64().unwrap()).collect();
    assert_eq!(kept, [1 << 20, 1 << 20], "the two 1m cells are kept");
    assert!(leftovers(&fs.point).is_empty(), "working files cleaned after ENOSPC");
    // With the check on, the same plan is refused up front with the numbers.
    let out = sb.run(&["run", "iozone", "--target", target, "--files", "1m,64m", "--records", "64k"]);
    assert_usage_error(&out, "free, but this plan needs");
}

#[test]
fn ramfs_refuses_o_direct_with_a_clear_error() {
    let Some(fs) = Mount::virtual_fs("ramfs", "") else { return };
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "iozone",
        "--target",
        fs.point.to_str().unwrap(),
        "--files",
        "64k",
        "--direct",
        "--no-space-check",
    ]);
    assert_usage_error(&out, "refuses O_DIRECT");
    assert!(leftovers(&fs.point).is_empty());
}

#[test]
fn a_read_only_target_is_refused() {
    let Some(fs) = Mount::virtual_fs("tmpfs", "ro,size=4m") else { return };
    let sb = Sandbox::new();
    let out = sb.run(&["run", "iozone", "--target", fs.point.to_str().unwrap(), "--files", "64k", "--no-space-check"]);
    assert_usage_error(&out, "cannot create a working folder");
}
