//! `run metadata`'s plan-time limits end to end: a plan past the target's free inodes or space,
//! the open-file limit or memory is refused with exit 2 before anything is made or stored,
//! naming the limit and the largest count that fits (and that count then runs); a device, a
//! huge sparse file or the results database's folder as the target.

use crate::helpers::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn metadata(sb: &Sandbox, target: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "metadata", "--target", target.to_str().unwrap()];
    all.extend_from_slice(args);
    sb.run(&all)
}

/// No run was stored but the `stored` ones before, and nothing is left on `target`.
fn nothing_made(sb: &Sandbox, target: &Path, stored: usize) {
    if sb.db().exists() {
        let runs = sb.runs_json();
        assert_eq!(runs["runs"].as_array().unwrap().len(), stored, "{runs}");
    }
    let entries: Vec<_> = std::fs::read_dir(target).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
    assert!(entries.is_empty(), "{entries:?}");
}

/// The whole number after `before` in `text` (the largest count a refusal names).
fn count_after(text: &str, before: &str) -> u64 {
    let at = text.find(before).unwrap_or_else(|| panic!("no '{before}' in: {text}")) + before.len();
    text[at..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
}

#[test]
fn trust_metadata_limits_more_items_than_free_inodes_are_refused_naming_the_count_that_fits() {
    let Some(tiny) = Mount::virtual_fs("tmpfs", "size=16m,nr_inodes=100") else { return };
    let sb = Sandbox::new();
    let out = metadata(&sb, &tiny.point, &["--items", "200", "--files-only"]);
    assert_usage_error(&out, "free inodes (df -i)");
    let (_, stderr) = text(&out);
    assert!(stderr.contains(tiny.point.to_str().unwrap()), "names the target: {stderr}");
    let most = count_after(&stderr, "at most ");
    assert!(stderr.contains("items per client (--items, mdtest -n)"), "{stderr}");
    println!("refused 200 items on 100 inodes; the largest that fits: {most}");
    assert!((50..100).contains(&most), "{stderr}");
    nothing_made(&sb, &tiny.point, 0);
    // What it names fits: the run completes on the same file system.
    assert_success(&metadata(&sb, &tiny.point, &["--items", &most.to_string(), "--files-only"]));
    assert!(leftovers(&tiny.point).is_empty());
    // Per folder and per client tree: the folders count too, every client's.
    let shape = ["--depth", "1", "--branch", "4", "--items-per-folder", "30", "--per-client-folder", "--clients", "2"];
    let out = metadata(&sb, &tiny.point, &[&shape[..], &["--files-only"]].concat());
    assert_usage_error(&out, "items per folder (--items-per-folder, mdtest -I)");
    // A tree that cannot fit at all names the tree, not an item count.
    let out = metadata(&sb, &tiny.point, &["--depth", "8", "--branch", "4", "--items-per-folder", "1"]);
    assert_usage_error(&out, "the tree alone does not fit: give a smaller depth or branching");
    nothing_made(&sb, &tiny.point, 1);
}

#[test]
fn trust_metadata_limits_bytes_past_free_space_are_refused_naming_the_count_that_fits() {
    let Some(small) = Mount::virtual_fs("tmpfs", "size=4m") else { return };
    let sb = Sandbox::new();
    let out = metadata(&sb, &small.point, &["--items", "2000", "--files-only", "--write-bytes", "4k"]);
    assert_usage_error(&out, "bytes free (df)");
    let (_, stderr) = text(&out);
    let most = count_after(&stderr, "at most ");
    println!("refused 2000 files of 4 KiB on a 4 MiB tmpfs; the largest that fits: {most}");
    assert!((500..=1024).contains(&most), "{stderr}");
    nothing_made(&sb, &small.point, 0);
    // Empty files take no space: the same count of them runs.
    assert_success(&metadata(&sb, &small.point, &["--items", "2000", "--files-only"]));
}

#[test]
fn trust_metadata_limits_clients_past_the_open_file_limit_are_refused_under_prlimit() {
    if !have("prlimit") {
        return skip("prlimit (util-linux) is missing");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    let mut cmd = Command::new("prlimit");
    cmd.arg("--nofile=80:80")
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(["run", "metadata", "--target", target.to_str().unwrap()])
        .args(["--items", "10", "--clients", "16"])
        .env("IOMATRIX_DB", sb.db())
        .env(BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(Stdio::null());
    let out = bounded_child(cmd, Duration::from_secs(60));
    // 16 clients x 2 + 64 kept back = 96 open files, past 80: (80 - 64) / 2 = 8 clients fit.
    assert_usage_error(&out, "open-file limit (RLIMIT_NOFILE, hard) is 80");
    assert_usage_error(&out, "at most 8 clients fit");
    nothing_made(&sb, &target, 0);
}

#[test]
fn trust_metadata_limits_an_items_order_past_memory_is_refused() {
    // tmpfs with nr_inodes=0 counts no inodes, and empty files take no space: memory binds.
    let Some(unlimited) = Mount::virtual_fs("tmpfs", "size=4m,nr_inodes=0") else { return };
    let sb = Sandbox::new();
    let out = metadata(&sb, &unlimited.point, &["--items", "100000000000000", "--files-only"]);
    assert_usage_error(&out, "each client keeps the order of its items");
    let (_, stderr) = text(&out);
    assert!(stderr.contains("MemAvailable"), "{stderr}");
    let most = count_after(&stderr, "at most ");
    println!("the largest count whose order fits in memory: {most}");
    assert!(most > 1_000_000, "{stderr}");
    nothing_made(&sb, &unlimited.point, 0);
}

#[test]
fn trust_metadata_limits_a_device_or_a_sparse_file_as_target_is_refused() {
    let sb = Sandbox::new();
    let out = metadata(&sb, Path::new("/dev/zero"), &["--items", "10"]);
    assert_usage_error(&out, "is not a folder");
    let sparse = sb.dir.path().join("sparse.img");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let out = metadata(&sb, &sparse, &["--items", "10"]);
    assert_usage_error(&out, "is not a folder");
    assert_eq!(std::fs::metadata(&sparse).unwrap().len(), 10 << 30, "the file is left as it was");
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty());
}

#[test]
fn trust_metadata_limits_the_results_databases_folder_as_target_leaves_the_database_whole() {
    let sb = Sandbox::new();
    // The database lives in the sandbox's folder: the run works in a working folder of its own there.
    let folder = sb.dir.path().to_path_buf();
    assert_success(&metadata(&sb, &folder, &["--items", "50"]));
    assert_success(&metadata(&sb, &folder, &["--items", "50", "--files-only"]));
    let check = sb.run(&["db", "check"]);
    assert_success(&check);
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), 2);
    assert!(leftovers(&folder).is_empty(), "{:?}", leftovers(&folder));
}
