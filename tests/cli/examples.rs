//! The four source write-ups as studies (examples/seed-00N.toml), run as a user runs them, at
//! `--scale small`: each study's setup makes what it needs (the lab's servers, loop-mounted images)
//! and its teardown removes it.

use crate::helpers::*;
use serde_json::Value;
use std::path::PathBuf;

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples").join(name).display().to_string()
}

/// `study run EXAMPLE --scale small` in the sandbox (its report lands there); must succeed.
fn run_small(sb: &Sandbox, name: &str) -> (String, String) {
    let out = sb.run(&["study", "run", &example(name), "--scale", "small"]);
    assert_success(&out);
    text(&out)
}

fn steps(sb: &Sandbox, study: &str) -> Vec<Value> {
    let out = sb.run(&["study", "show", study, "--json"]);
    assert_success(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["study"]["status"], "complete", "{v}");
    v["steps"].as_array().unwrap().clone()
}

/// No loop device still holds one of the study's images, and its folder is gone.
fn nothing_left(folder: &str) {
    let loops = std::process::Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(!loops.contains(folder), "loop devices left: {loops}");
    assert!(!std::path::Path::new(folder).exists(), "{folder} left behind");
}

#[test]
fn seed_000_runs_three_ways_over_the_100_mbit_link_and_flags_the_mounted_share_cache() {
    if !is_root() || !have("smbd") || !have("ganesha.nfsd") || !have("smbnetfs") {
        return skip("examples/seed-000.toml needs root and the lab's packages (lab/README.md)");
    }
    let sb = Sandbox::new();
    let (stdout, stderr) = run_small(&sb, "seed-000.toml");
    for title in ["smb-mounted against smb-builtin, step 'matrix'", "nfs-builtin against smb-builtin, step 'matrix'"] {
        let at = stdout.find(title).unwrap_or_else(|| panic!("{title} missing:\n{stdout}\n{stderr}"));
        let table = &stdout[at..];
        assert!(table.contains("read: B/A of KB/s"), "{table}");
        assert!(table.contains("record-size view"), "{table}");
        assert!(table.contains("limit (100Mbit = 12207 KB/s)"), "{table}");
    }
    // smbnetfs caches what it wrote: its small-file rereads beat the wire, and compare says where.
    assert!(stdout.contains("B: reread: cache dominates at files <="), "{stdout}");
    let report = std::fs::read_to_string(sb.dir.path().join("seed-000-report.html")).unwrap();
    assert!(report.contains("<svg") && report.contains("smb-mounted"), "the report shows the three runs");
    assert_eq!(steps(&sb, "seed-000").len(), 3);
    assert!(stderr.contains("study teardown"), "{stderr}");
}

#[test]
fn seed_001_sweeps_block_size_and_outstanding_io_with_rates_of_change_then_runs_many_clients() {
    let sb = Sandbox::new();
    let (stdout, _) = run_small(&sb, "seed-001.toml");
    for by in ["qd", "record"] {
        let at = stdout.find(&format!("== sweep of step 'specs' by {by}")).unwrap_or_else(|| panic!("{stdout}"));
        assert!(stdout[at..].contains("Rate of change"), "{stdout}");
    }
    assert!(stdout.contains("16->64"), "{stdout}");
    // Issue 34: the seed's streaming reads and writes, measured here: both directions' Rate of
    // Change and the read/write ratio per block size, from native runs.
    let by_qd = &stdout[stdout.find("== sweep of step 'specs' by qd").unwrap()..];
    let by_qd = &by_qd[..by_qd.find("== sweep of step 'specs' by record").unwrap_or(by_qd.len())];
    for row in ["access 16m/4k read=100% random=0%", "access 16m/4k read=0% random=0%"] {
        assert!(by_qd.lines().filter(|l| l.starts_with(row)).count() >= 2, "{row}: values and rate of change\n{by_qd}");
    }
    assert!(by_qd.contains("reads (") && by_qd.contains("writes ("), "averages of both directions:\n{by_qd}");
    assert!(by_qd.contains("Totals by direction") && (by_qd.contains("writes +") || by_qd.contains("writes -")));
    for block in ["4k", "64k"] {
        assert!(
            by_qd.contains(&format!("  {block} file 16m random=0%: mean ")),
            "the read/write ratio at {block}:\n{by_qd}"
        );
    }
    let steps = steps(&sb, "seed-001");
    let clients = sb.show_json(steps[1]["run_id"].as_i64().unwrap());
    assert_eq!(clients["run"]["conditions"]["clients"], 4, "small scale: 4 clients");
    assert!(sb.dir.path().join("seed-001-report.html").exists());
}

#[test]
fn seed_002_compares_bonnie_on_an_aligned_and_an_unaligned_partition_with_alignment_in_the_conditions() {
    if !is_root() || !have("sfdisk") || !have("mkfs.ext4") {
        return skip("examples/seed-002.toml needs root (loop devices), sfdisk (fdisk) and mkfs.ext4");
    }
    let sb = Sandbox::new();
    let (stdout, _) = run_small(&sb, "seed-002.toml");
    assert!(stdout.contains("== unaligned against aligned, step 'bonnie'"), "{stdout}");
    assert!(
        stdout.contains("partition_alignment_bytes: A (study-id=1,config=aligned,step=bonnie) 1048576, B"),
        "{stdout}"
    );
    assert!(stdout.contains("rewrite 16m/8k (KB/s)"), "{stdout}");
    for (step, alignment) in steps(&sb, "seed-002").iter().zip([1048576, 512]) {
        let run = sb.show_json(step["run_id"].as_i64().unwrap());
        assert_eq!(run["run"]["conditions"]["partition_alignment_bytes"], alignment, "{step}");
    }
    nothing_left("/var/tmp/iomatrix-seed-002");
}

#[test]
fn seed_003_runs_the_load_and_the_backup_walk_with_delalloc_on_and_off_interleaved() {
    if !is_root() || !have("mkfs.ext4") {
        return skip("examples/seed-003.toml needs root (loop-mounted ext4) and mkfs.ext4");
    }
    let sb = Sandbox::new();
    let (stdout, _) = run_small(&sb, "seed-003.toml");
    let order: Vec<(String, String)> = steps(&sb, "seed-003")
        .iter()
        .map(|s| (s["config"].as_str().unwrap().to_string(), s["step"].as_str().unwrap().to_string()))
        .collect();
    // The seed's baseline (without delayed allocation) first, and on side A of each comparison.
    let want = [("nodelalloc", "load"), ("delalloc", "load"), ("nodelalloc", "backup"), ("delalloc", "backup")];
    assert_eq!(order, want.map(|(c, s)| (c.to_string(), s.to_string())), "interleaved per step");
    // % change per operation of the load, and the extents behind the backup walk's rate.
    let load = &stdout[stdout.find("== delalloc against nodelalloc, step 'load'").expect("load compared")..];
    // The load's cells are named by their size mix (16k..256k at --scale small), and each has its
    // per-operation table (seed 003's shape).
    for row in [
        "write 16k..256k (3 sizes)/4k (KB/s)",
        "read 16k..256k (3 sizes)/4k (KB/s)",
        "write 16k..256k (3 sizes)/4k: per operation",
        "create mean (ms)",
        // Seed 003's own rows, in its order: response times, completion, throughput per connection.
        "write 16k..256k (3 sizes)/4k: seed 003's rows",
        "open mean response time (ms)",
        "time taken for test completion (s)",
        "throughput per connection (KB/s)",
    ] {
        assert!(load.contains(row), "{row}:\n{load}");
    }
    let backup = &stdout[stdout.find("== delalloc against nodelalloc, step 'backup'").expect("backup compared")..];
    let line = backup.lines().find(|l| l.starts_with("backup extents per file")).expect("extents compared");
    let figures: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!(figures[0] > 2.0, "nodelalloc (A): files written 8 at a time in 4k appends fragment: {line}");
    assert_eq!(figures[1], 1.0, "delalloc (B): one extent per file: {line}");
    // The backup table of seed 003: files, extents, extents per file, MiB/min, elapsed.
    for row in [
        "total files (files)",
        "total extents (extents)",
        "extents per file (extents)",
        "backup throughput (MiB/min)",
        "time taken for test completion (s)",
    ] {
        assert!(backup.contains(row), "{row}:\n{backup}");
    }
    assert!(sb.dir.path().join("seed-003-report.html").exists());
    nothing_left("/var/tmp/iomatrix-seed-003");
}
