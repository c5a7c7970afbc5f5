//! `run access --prepare`: the page cache's state at a cell's start is chosen and stated. Each
//! choice is checked on a real loop-mounted ext4 against what util-linux's fincore says of the
//! kept file, the stored figure against mincore's own count, and the lay-out's write size
//! against what strace saw the process write.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bytes of `file` in the page cache, by fincore (util-linux), which iomatrix does not use.
fn fincore_bytes(file: &Path) -> u64 {
    let out = Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(file)
        .output()
        .expect("fincore runs");
    assert!(out.status.success(), "fincore: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("fincore prints a byte count")
}

/// What fincore may find missing of `cached` bytes that were in the page cache when the cell
/// ended: a machine that pages out cold memory by itself (DAMON's pageout scheme, kdamond, on
/// the CI VM) takes a few pages between the cell and fincore's look (seen: 28 KiB of 32 MiB).
/// A thirty-second of the whole is far above that and far below what a wrong choice leaves
/// (nothing, or the one page a dropped cell wrote).
fn paged_out_allowance(cached: u64) -> u64 {
    cached / 32
}

/// The one client's file a kept run left under `dir`.
fn kept_file(dir: &Path) -> PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "access.dat") {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "one kept access.dat under {}: {found:?}", dir.display());
    found.pop().unwrap()
}

fn cached_at_start(cell: &Value) -> (u64, u64) {
    let held = &cell["metrics"]["cached_at_start"];
    (held["cached_bytes"].as_u64().expect("cached_bytes stored"), held["file_bytes"].as_u64().expect("file_bytes"))
}

fn run_ok(sb: &Sandbox, args: &[&str]) -> Value {
    let out = sb.run(args);
    assert_success(&out);
    sb.last_run()
}

const FILE: u64 = 32 << 20;

#[test]
fn each_prepare_choice_leaves_the_page_cache_as_it_says_on_ext4() {
    if !have("fincore") {
        skip("fincore (util-linux) is needed to check the page cache from outside");
        return;
    }
    for prepare in ["dropped", "cached", "block"] {
        let Some(fs) = Mount::ext4(200) else { return };
        let sb = Sandbox::new();
        let target = fs.point.to_str().unwrap();
        // One 4 KiB write at offset 0 (sequential, one request): the cell adds one page at most.
        let run = run_ok(
            &sb,
            &[
                "run",
                "access",
                "--target",
                target,
                "--prepare",
                prepare,
                "--bs",
                "4k",
                "--read",
                "0",
                "--random",
                "0",
                "--qd",
                "1",
                "--backend",
                "psync",
                "--bytes",
                "4k",
                "--file-size",
                "32m",
                "--keep",
            ],
        );
        let said = run["run"]["conditions"]["prepare"].as_str().unwrap().to_string();
        assert!(said.starts_with(&format!("{prepare}:")), "{prepare}: condition says '{said}'");
        assert_eq!(run["run"]["plan"]["prepare"], prepare);
        let cells = cells(&run);
        let (cached, file) = cached_at_start(&cells[0]);
        assert_eq!(file, FILE, "{prepare}: the stored figure covers the whole file");
        let on_disk = fincore_bytes(&kept_file(&fs.point));
        match prepare {
            "dropped" => {
                assert_eq!(cached, 0, "dropped: nothing of the file cached at the cell's start");
                // After the cell: the one page it wrote (a folio of up to 64 KiB), nothing of the lay-out.
                assert!(on_disk <= 64 << 10, "dropped: fincore sees {on_disk} bytes after one 4k write");
            }
            _ => {
                assert_eq!(cached, FILE, "{prepare}: the whole file cached at the cell's start");
                // Exact at the cell's start (the stored figure, above); fincore looks later.
                assert!(
                    on_disk <= FILE && on_disk >= FILE - paged_out_allowance(FILE),
                    "{prepare}: fincore sees {on_disk} of the file's {FILE} bytes cached"
                );
            }
        }
        // The text says it too: the prepared line and the column.
        let shown = text(&sb.run(&["show", &run["run"]["id"].to_string()])).0;
        assert!(shown.contains(&format!("prepared: {prepare}:")), "{shown}");
        let column = if prepare == "dropped" { "0%" } else { "100%" };
        let row = shown.lines().find(|l| l.trim_start().starts_with("4k ")).expect("the cell's row");
        assert!(row.trim_end().ends_with(column), "{prepare}: {row}");
    }
}

/// Dropped is dropped before every cell, not once after the lay-out: the second of two cells
/// starts empty although the first read 8 MiB into the cache, which fincore sees afterwards.
#[test]
fn dropped_is_dropped_before_every_cell() {
    if !have("fincore") {
        skip("fincore (util-linux) is needed to check the page cache from outside");
        return;
    }
    let Some(fs) = Mount::ext4(200) else { return };
    let sb = Sandbox::new();
    let run = run_ok(
        &sb,
        &[
            "run",
            "access",
            "--target",
            fs.point.to_str().unwrap(),
            "--bs",
            "1m",
            "--read",
            "100",
            "--random",
            "0",
            "--bytes",
            "8m",
            "--file-size",
            "32m",
            "--repeat",
            "2",
            "--keep",
        ],
    );
    assert_eq!(run["run"]["plan"]["prepare"], "dropped", "dropped is the default");
    let cells = cells(&run);
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_eq!(cached_at_start(c), (0, FILE), "every cell starts dropped");
    }
    let after = fincore_bytes(&kept_file(&fs.point));
    let read = 8u64 << 20;
    assert!(
        after >= read - paged_out_allowance(read),
        "the last cell's 8 MiB of reads stayed cached: fincore sees {after}"
    );
}

/// `--prepare block` lays the file out in the cell's own block size (and again for a cell whose
/// size differs); the others in 1 MiB writes. Counted from strace's record of the writes.
#[test]
fn block_lays_out_in_the_cells_block_size() {
    if !have("strace") {
        skip("strace is needed to see the lay-out's writes");
        return;
    }
    let sb = Sandbox::new();
    let writes_of = |prepare: &str| -> Vec<u64> {
        let log = sb.target().join(format!("strace-{prepare}.log"));
        let out = Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=write", "-e", "signal=none", "-o"])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_iomatrix"))
            .args(["run", "access", "--db"])
            .arg(sb.db())
            .env(crate::helpers::BUSY_VAR, "off")
            .args(["--target"])
            .arg(sb.target())
            .args(["--prepare", prepare, "--bs", "16k,64k", "--read", "100", "--bytes", "64k", "--file-size", "1m"])
            .output()
            .unwrap();
        assert_success(&out);
        let log = std::fs::read_to_string(&log).unwrap();
        // Lines such as `123 write(7, "..."..., 16384) = 16384`.
        let mut sizes: Vec<u64> = log
            .lines()
            .filter_map(|l| l.rsplit_once(") = ").map(|(call, done)| (call, done.trim())))
            .filter_map(|(call, done)| {
                let asked = call.rsplit_once(", ")?.1.parse::<u64>().ok()?;
                (done.parse::<u64>().ok()? == asked && asked >= 16 << 10).then_some(asked)
            })
            .collect();
        sizes.sort_unstable();
        sizes
    };
    let block = writes_of("block");
    assert_eq!(block.iter().filter(|&&n| n == 16 << 10).count(), 64, "1 MiB in 16k writes: {block:?}");
    assert_eq!(block.iter().filter(|&&n| n == 64 << 10).count(), 16, "laid out again in 64k writes: {block:?}");
    let cached = writes_of("cached");
    assert_eq!(cached.iter().filter(|&&n| n == 1 << 20).count(), 1, "one 1 MiB write: {cached:?}");
    assert!(cached.iter().all(|&n| n != 16 << 10), "no 16k lay-out writes with cached: {cached:?}");
}

#[test]
fn prepare_is_refused_where_it_cannot_be_done() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["run", "access", "--prepare", "warm"]), "give dropped, cached or block");
    assert_usage_error(
        &sb.run(&["run", "access", "--target", "nfs://127.0.0.1:1/export", "--prepare", "dropped"]),
        "--prepare dropped: the file lives on the server",
    );
    let Some(dev) = LoopDevice::new(8, 0xab) else { return };
    let d = dev.path();
    assert_usage_error(
        &sb.run(&["run", "access", "--device", d, "--destroy-data-on", d, "--prepare", "block", "--file-size", "4m"]),
        "--prepare block: a --device is not laid out",
    );
    assert!(std::fs::read(&dev.image).unwrap().iter().all(|&b| b == 0xab), "the refused run wrote nothing");
}

/// fio's invalidate runs as --prepare: 1 (its default) dropped, 0 cached.
#[test]
fn fio_invalidate_is_prepare() {
    let sb = Sandbox::new();
    let dir = sb.target();
    let d = format!("--directory={}", dir.display());
    for (given, prepared) in
        [(None, "dropped"), (Some("--invalidate=0"), "cached"), (Some("--invalidate=1"), "dropped")]
    {
        let mut args = vec!["fio", "--name=j", &d, "--rw=randwrite", "--size=1m"];
        args.extend(given);
        assert_success(&sb.run(&args));
        assert_eq!(sb.last_run()["run"]["plan"]["prepare"], prepared, "{given:?}");
    }
}
