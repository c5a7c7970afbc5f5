//! `--verify` and `--compressible`: a hook damages the client's file between
//! the write and the read cell, behind iomatrix's back, and the read cell
//! reports each kind of damage exactly where it was planted.

use crate::helpers::{assert_usage_error, cells, Sandbox};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

const BLOCK: u64 = 4096;

/// `run iozone --verify` of one 1 MiB file (256 blocks) at 64k records:
/// write, then read, with `hook` run between the two.
fn verified_run(sb: &Sandbox, hook: &str, extra: &[&str]) -> (std::process::Output, Value) {
    let target = sb.target();
    let mut args = vec![
        "run",
        "iozone",
        "--target",
        target.to_str().unwrap(),
        "--files",
        "1m",
        "--records",
        "64k",
        "--tests",
        "write,read",
        "--between-cells",
        hook,
    ];
    args.extend_from_slice(extra);
    let out = sb.run(&args);
    (out, sb.last_run())
}

fn read_cell_tally(run: &Value) -> Value {
    let cells = cells(run);
    let read = cells.iter().find(|c| c["test"] == "read").expect("a read cell");
    read["metrics"]["verify"].clone()
}

#[test]
fn each_kind_of_damage_is_counted_where_it_was_planted() {
    let sb = Sandbox::new();
    let earlier = sb.dir.path().join("earlier-run.tmp");
    // An earlier run's file, kept by its hook: the source of stale and torn blocks.
    let keep = format!("cp iozone.tmp {}", earlier.display());
    let (out, clean) = verified_run(&sb, &keep, &["--verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let tally = read_cell_tally(&clean);
    assert_eq!(tally["checked_blocks"], 256, "{tally}");
    for kind in ["wrong_data", "wrong_offset", "stale", "torn"] {
        assert_eq!(tally[kind], 0, "a clean run found {kind}: {tally}");
    }
    assert_eq!(clean["run"]["conditions"]["verify"], true);
    assert_eq!(std::fs::metadata(&earlier).unwrap().len(), 1 << 20);

    // Block 3: 16 bytes overwritten. Block 20: block 10 copied over it.
    // Block 30: the earlier run's block 30. Block 40: its second half from the earlier run.
    let dd = |from: &Path, bs: u64, skip: u64, seek: u64| {
        format!(
            "dd if={} of=iozone.tmp bs={bs} skip={skip} seek={seek} count=1 conv=notrunc status=none",
            from.display()
        )
    };
    let pattern = sb.dir.path().join("pattern");
    std::fs::File::create(&pattern).unwrap().write_all(b"not what was written").unwrap();
    let here = Path::new("iozone.tmp");
    let damage = [
        dd(&pattern, 16, 0, (3 * BLOCK + 1000) / 16 + 1),
        dd(here, BLOCK, 10, 20),
        dd(&earlier, BLOCK, 30, 30),
        dd(&earlier, BLOCK / 2, 81, 81),
    ]
    .join(" && ");
    let (out, damaged) = verified_run(&sb, &damage, &["--verify"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("4 block(s) read back were not what was written"), "{stderr}");
    let tally = read_cell_tally(&damaged);
    assert_eq!(tally["checked_blocks"], 256, "{tally}");
    for kind in ["wrong_data", "wrong_offset", "stale", "torn"] {
        assert_eq!(tally[kind], 1, "{kind}: {tally}");
    }
    let planted: Vec<(String, u64)> = tally["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap().to_string(), e["offset"].as_u64().unwrap()))
        .collect();
    let expected = [("wrong_data", 3), ("wrong_offset", 20), ("stale", 30), ("torn", 40)]
        .map(|(kind, block)| (kind.to_string(), block * BLOCK));
    assert_eq!(planted, expected, "{tally}");
    // The write cell wrote; only the read cell checks.
    let write = cells(&damaged).into_iter().find(|c| c["test"] == "write").unwrap();
    assert_eq!(write["metrics"]["verify"]["checked_blocks"], 0);

    let shown = sb.run(&["show", &damaged["run"]["id"].to_string()]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("torn at offset 163840 of file 0"), "{text}");
    assert!(text.contains("verify: every block read is checked"), "{text}");
}

#[test]
fn compressible_data_compresses_by_about_that_much() {
    let sb = Sandbox::new();
    for pct in [0u64, 50, 90] {
        let copy = sb.dir.path().join(format!("written-{pct}"));
        let hook = format!("cp iozone.tmp {}", copy.display());
        let (out, run) = verified_run(&sb, &hook, &["--compressible", &pct.to_string()]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(run["run"]["conditions"]["compressible_pct"], pct);
        let written = std::fs::read(&copy).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&written).unwrap();
        let compressed = gz.finish().unwrap().len() as f64;
        let saved_pct = 100.0 * (1.0 - compressed / written.len() as f64);
        assert!((saved_pct - pct as f64).abs() <= 4.0, "--compressible {pct}: gzip saves {saved_pct:.1}%");
        // Unique per block: no two blocks alike, so nothing to deduplicate.
        let blocks: std::collections::HashSet<&[u8]> = written.chunks(BLOCK as usize).collect();
        assert_eq!(blocks.len(), written.len() / BLOCK as usize, "--compressible {pct}: repeated blocks");
    }
}

#[test]
fn verify_refuses_what_it_cannot_stamp() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let base = ["run", "iozone", "--target", t, "--files", "64k"];
    let with = |extra: &[&str]| sb.run(&[&base[..], extra].concat());
    assert_usage_error(&with(&["--records", "2k", "--verify"]), "4k verify block");
    assert_usage_error(&with(&["--records", "4k", "--compressible", "101"]), "from 0 (incompressible) to 100");
    assert_usage_error(&with(&["--records", "4k", "--between-cells", " "]), "--between-cells is empty");
}

#[test]
fn access_specs_check_their_reads_and_see_a_damaged_block() {
    let sb = Sandbox::new();
    let target = sb.target();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "access", "--target", target.to_str().unwrap(), "--file-size", "1m", "--verify"];
        args.extend_from_slice(extra);
        let out = sb.run(&args);
        (out, sb.last_run())
    };
    // A random mix at queue depth 8: every read that did not overlap a write in flight is checked, none fails.
    let (out, mixed) = run(&["--bs", "4k,64k", "--read", "50", "--random", "100", "--qd", "8", "--bytes", "4m"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for cell in cells(&mixed) {
        let tally = &cell["metrics"]["verify"];
        let read_blocks = cell["metrics"]["read_bytes"].as_u64().unwrap() / BLOCK;
        let (checked, unchecked) =
            (tally["checked_blocks"].as_u64().unwrap(), tally["unchecked_blocks"].as_u64().unwrap());
        assert_eq!(checked + unchecked, read_blocks, "{tally}");
        assert!(checked > read_blocks / 2, "{tally}");
        assert_eq!(tally["wrong_data"].as_u64().unwrap() + tally["stale"].as_u64().unwrap(), 0, "{tally}");
    }
    // Write the whole file, damage block 3 behind iomatrix's back, read the whole file.
    let hook =
        "[ $IOMATRIX_CELL = 1 ] && printf 'not what was written' | dd of=access.dat bs=4096 seek=3 conv=notrunc \
                status=none; true";
    let (out, damaged) = run(&[
        "--bs",
        "64k",
        "--read",
        "0,100",
        "--random",
        "0",
        "--qd",
        "1",
        "--bytes",
        "1m",
        "--between-cells",
        hook,
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let read = cells(&damaged).into_iter().find(|c| c["metrics"]["read_percent"] == 100).unwrap();
    let tally = &read["metrics"]["verify"];
    assert_eq!((tally["checked_blocks"].as_u64(), tally["wrong_data"].as_u64()), (Some(256), Some(1)), "{tally}");
    assert_eq!(tally["examples"][0]["offset"], 3 * BLOCK);
}

#[test]
fn fileserver_reads_are_checked_and_see_a_damaged_block() {
    let sb = Sandbox::new();
    let target = sb.target();
    // The third file in name order (at least 8k in this layout): its block 1 damaged between write and read.
    let hook = "f=$(find . -type f | sort | sed -n 3p); printf 'not what was written' | dd of=$f bs=4096 seek=1 \
                conv=notrunc status=none";
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "fileserver",
            "--target",
            target.to_str().unwrap(),
            "--connections",
            "2",
            "--files-per-connection",
            "3",
            "--sizes",
            "4k,10k,64k",
            "--record",
            "8k",
            "--verify",
        ];
        args.extend_from_slice(extra);
        let out = sb.run(&args);
        (out, sb.last_run())
    };
    // Whole 4k blocks only: 1 + 2 + 16 per connection (10k's last 2k is no whole block).
    let (out, clean) = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let read = cells(&clean).into_iter().find(|c| c["test"] == "read").unwrap();
    assert_eq!(read["metrics"]["verify"]["checked_blocks"], 2 * 19, "{}", read["metrics"]["verify"]);
    assert_eq!(read["metrics"]["verify"]["wrong_data"], 0);
    let (out, damaged) = run(&["--between-cells", hook]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let read = cells(&damaged).into_iter().find(|c| c["test"] == "read").unwrap();
    let tally = &read["metrics"]["verify"];
    assert_eq!((tally["wrong_data"].as_u64(), tally["checked_blocks"].as_u64()), (Some(1), Some(38)), "{tally}");
    assert_eq!(tally["examples"][0]["offset"], BLOCK, "{tally}");
}
