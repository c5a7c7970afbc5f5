//! Numbers for people come from one formatter: a byte count just under a
//! unit reads as the unit above ("1.0 MiB", "1 GiB"), never "1024.0 KiB" or
//! "1024 MiB", in a run's tables and in a front end's messages alike.
use crate::helpers::*;

/// A byte short of 1 MiB, read by a backup walk: its read line says 1.0 MiB.
#[test]
fn a_walk_of_a_byte_under_a_mebibyte_reads_one_mebibyte() {
    let sb = Sandbox::new();
    let tree = sb.target().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("almost-a-mebibyte"), vec![0x5a; (1 << 20) - 1]).unwrap();
    let out = sb.run(&["run", "backup", "--target", tree.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("read: 1 files, 1.0 MiB (1048575 bytes)"), "{stdout}");
    assert!(!stdout.contains("1024.0 KiB"), "{stdout}");
}

/// bonnie's messages: 1 GiB less one 8 KiB chunk is "1 GiB", not "1024 MiB".
#[test]
fn a_bonnie_size_a_chunk_under_a_gibibyte_reads_one_gibibyte() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "1048568k", "-r", "1024"]);
    assert_usage_error(&out, "file size 1 GiB is less than twice the RAM (1 GiB as stated with -r)");
    assert!(!text(&out).1.contains("1024 MiB"), "{}", text(&out).1);
}
