//! `--verify` and `--compressible`: a hook damages the client's file between
//! the write and the read cell, behind iomatrix's back, and the read cell
//! reports each kind of damage exactly where it was planted.

use crate::helpers::{assert_usage_error, cells, Sandbox};
use crate::lab_fixture::{left_behind, Lab, Shared};
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
        let saved_pct = gzip_saved_pct(&written);
        assert!((saved_pct - pct as f64).abs() <= 4.0, "--compressible {pct}: gzip saves {saved_pct:.1}%");
        // Unique per block: no two blocks alike, so nothing to deduplicate.
        let blocks: std::collections::HashSet<&[u8]> = written.chunks(BLOCK as usize).collect();
        assert_eq!(blocks.len(), written.len() / BLOCK as usize, "--compressible {pct}: repeated blocks");
    }
}

/// How much gzip saves on `data`, in percent.
fn gzip_saved_pct(data: &[u8]) -> f64 {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    let compressed = gz.finish().unwrap().len() as f64;
    100.0 * (1.0 - compressed / data.len() as f64)
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

/// `run bonnie` of one 1 MiB file (256 blocks) in 8k chunks, no file tests;
/// its cells are putc 0, write 1, rewrite 2, getc 3, read 4, seeks 5.
fn bonnie_run(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    let target = sb.target();
    let mut args =
        vec!["run", "bonnie", "--target", target.to_str().unwrap(), "--size", "1m", "--ram", "0", "--files", "0"];
    args.extend_from_slice(&["--seeks", "100"]);
    args.extend_from_slice(extra);
    sb.run(&args)
}

fn bonnie_tally(run: &Value, test: &str) -> Value {
    let cell = cells(run).into_iter().find(|c| c["test"] == test).unwrap_or_else(|| panic!("a {test} cell"));
    cell["metrics"]["verify"].clone()
}

fn mismatches_by_kind(tally: &Value) -> [u64; 4] {
    ["wrong_data", "wrong_offset", "stale", "torn"].map(|kind| tally[kind].as_u64().unwrap())
}

#[test]
fn bonnie_checks_rewrite_and_read_and_sees_each_damaged_block() {
    let sb = Sandbox::new();
    let out = bonnie_run(&sb, &["--verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let clean = sb.last_run();
    assert_eq!(clean["run"]["conditions"]["verify"], true);
    assert!(clean["run"]["conditions"]["verify_scope"].as_str().unwrap().contains("getc and the seek test"));
    for test in ["rewrite", "read"] {
        let tally = bonnie_tally(&clean, test);
        assert_eq!(tally["checked_blocks"], 256, "{test}: {tally}");
        assert_eq!(mismatches_by_kind(&tally), [0; 4], "{test}: {tally}");
    }
    // putc and block write stamp (their cost is verify_ns) but check nothing; getc and seeks carry no tally.
    for test in ["putc", "write"] {
        let tally = bonnie_tally(&clean, test);
        assert_eq!(tally["checked_blocks"], 0, "{test}: {tally}");
        assert!(tally["verify_ns"].as_u64().unwrap() > 0, "{test}: {tally}");
    }
    assert!(bonnie_tally(&clean, "getc").is_null() && bonnie_tally(&clean, "seeks").is_null());

    // Before rewrite: keep the file as block write left it, then damage block 5.
    // Before read: put block 9 back as block write left it (a lost rewrite).
    let hook = "case $IOMATRIX_CELL in \
                2) cp bonnie.dat ../generation-1 && printf 'not what was written' | \
                   dd of=bonnie.dat bs=4096 seek=5 conv=notrunc status=none;; \
                4) dd if=../generation-1 of=bonnie.dat bs=4096 skip=9 seek=9 count=1 conv=notrunc status=none;; \
                esac";
    let out = bonnie_run(&sb, &["--verify", "--between-cells", hook]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let damaged = sb.last_run();
    assert!(stderr.contains("2 block(s) read back were not what was written"), "{stderr}");
    let rewrite = bonnie_tally(&damaged, "rewrite");
    assert_eq!(mismatches_by_kind(&rewrite), [1, 0, 0, 0], "{rewrite}");
    assert_eq!(rewrite["examples"][0]["offset"], 5 * BLOCK, "{rewrite}");
    // Rewrite wrote block 5 anew, so read finds it whole; block 9 is a generation too old.
    let read = bonnie_tally(&damaged, "read");
    assert_eq!(mismatches_by_kind(&read), [0, 0, 1, 0], "{read}");
    assert_eq!(read["examples"][0]["offset"], 9 * BLOCK, "{read}");
    assert!(read["examples"][0]["found"].as_str().unwrap().ends_with("generation 1"), "{read}");

    let shown = sb.run(&["show", &damaged["run"]["id"].to_string()]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("Sequential Output"), "the bonnie++ table is gone:\n{text}");
    assert!(text.contains("rewrite 1m 8k: wrong data at offset 20480 of file 0"), "{text}");
    assert!(text.contains("read 1m 8k: stale at offset 36864 of file 0"), "{text}");
}

#[test]
fn bonnie_compressible_data_compresses_by_about_that_much() {
    let sb = Sandbox::new();
    // The seek test removes the data file (as bonnie++ does), so the hook copies what each writing test left.
    let copies = sb.dir.path().join("copies");
    std::fs::create_dir(&copies).unwrap();
    let hook = format!("cp bonnie.dat {}/after-$IOMATRIX_CELL", copies.display());
    let out = bonnie_run(&sb, &["--compressible", "50", "--between-cells", &hook]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["compressible_pct"], 50);
    assert_eq!(run["run"]["conditions"]["verify"], false);
    // After putc (cell 0), block write (1) and rewrite (2).
    for (cell, test) in [(1, "putc"), (2, "write"), (3, "rewrite")] {
        let written = std::fs::read(copies.join(format!("after-{cell}"))).unwrap();
        assert_eq!(written.len(), 1 << 20, "{test}");
        let saved_pct = gzip_saved_pct(&written);
        assert!((saved_pct - 50.0).abs() <= 4.0, "{test} with --compressible 50: gzip saves {saved_pct:.1}%");
        let blocks: std::collections::HashSet<&[u8]> = written.chunks(BLOCK as usize).collect();
        assert_eq!(blocks.len(), 256, "{test}: repeated blocks");
    }
}

#[test]
fn bonnie_refuses_chunks_it_cannot_stamp() {
    let sb = Sandbox::new();
    assert_usage_error(&bonnie_run(&sb, &["--chunk", "2k", "--verify"]), "not a multiple of the 4k verify block");
    assert_usage_error(&bonnie_run(&sb, &["--compressible", "101"]), "--compressible 101");
}

#[test]
fn the_iozone_front_end_verifies_too() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let out =
        sb.run(&["iozone", "-s", "1m", "-r", "64k", "-i", "0", "-i", "1", "--verify", "-f", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["verify"], true);
    for test in ["read", "reread"] {
        let tally = read_cell_tally_of(&run, test);
        assert_eq!(tally["checked_blocks"], 256, "{test}: {tally}");
        assert_eq!(mismatches_by_kind(&tally), [0; 4], "{test}: {tally}");
    }
    let out = sb.run(&["iozone", "-s", "1m", "-r", "2k", "--verify", "-f", file.to_str().unwrap()]);
    assert_usage_error(&out, "4k verify block");
}

fn read_cell_tally_of(run: &Value, test: &str) -> Value {
    let cell = cells(run).into_iter().find(|c| c["test"] == test).unwrap_or_else(|| panic!("a {test} cell"));
    cell["metrics"]["verify"].clone()
}

#[test]
fn bonnie_verifies_through_the_built_in_nfs_and_smb_clients() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let state = lab.var("IOMATRIX_LAB_STATE").to_string();
    let sb = Sandbox::new();
    // --fast: write 0, rewrite 1, read 2, seeks 3. Before read, block 3 of client 0's file is damaged on the
    // server's disk, behind the server's back.
    let hook = format!(
        "[ $IOMATRIX_CELL = 2 ] && printf 'not what was written' | dd of=$(find {state} -path '*client-0/bonnie.dat') \
         bs=4096 seek=3 conv=notrunc status=none; true"
    );
    for (url, chunk, clients) in [(lab.var("IOMATRIX_LAB_NFS"), "64k", "2"), (lab.var("IOMATRIX_LAB_SMB"), "1m", "1")] {
        let mut cmd = sb.cmd();
        cmd.args(["run", "bonnie", "--target", url, "--size", "2m", "--chunk", chunk, "--files", "0", "--fast"]);
        cmd.args(["--seeks", "10", "--clients", clients, "--verify", "--between-cells", &hook]);
        cmd.env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"));
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{url}: {}", String::from_utf8_lossy(&out.stderr));
        let run = sb.last_run();
        let blocks = 512 * clients.parse::<u64>().unwrap();
        let rewrite = bonnie_tally(&run, "rewrite");
        assert_eq!((rewrite["checked_blocks"].as_u64(), rewrite["wrong_data"].as_u64()), (Some(blocks), Some(0)));
        let read = bonnie_tally(&run, "read");
        assert_eq!(read["checked_blocks"].as_u64(), Some(blocks), "{url}: {read}");
        assert_eq!(mismatches_by_kind(&read), [1, 0, 0, 0], "{url}: {read}");
        assert_eq!(
            (read["examples"][0]["file"].as_u64(), read["examples"][0]["offset"].as_u64()),
            (Some(0), Some(3 * BLOCK))
        );
        assert!(left_behind(Path::new(&state)).is_empty(), "{url}: {:?}", left_behind(Path::new(&state)));
    }
}

#[test]
fn the_bonnie_front_end_verifies_too() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "1:8k", "-n", "0", "-r", "0", "-f", "--verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["verify"], true);
    for test in ["rewrite", "read"] {
        let tally = bonnie_tally(&run, test);
        assert_eq!(tally["checked_blocks"], 256, "{test}: {tally}");
        assert_eq!(mismatches_by_kind(&tally), [0; 4], "{test}: {tally}");
    }
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "1:2k", "-n", "0", "-r", "0", "--verify"]);
    assert_usage_error(&out, "not a multiple of the 4k verify block");
}
