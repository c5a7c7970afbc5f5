//! The job files in examples/, run as a user would, on a small size.

use crate::helpers::*;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn seed_000_runs_three_ways_over_the_100_mbit_link_and_flags_the_mounted_share_cache() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if !is_root() || !have("smbd") || !have("ganesha.nfsd") || !have("smbnetfs") {
        return skip("examples/seed-000-smb-vs-nfs.sh needs root and the lab's packages (lab/README.md)");
    }
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("timeout")
        .arg("600")
        .arg(root.join("examples/seed-000-smb-vs-nfs.sh"))
        .arg("--small")
        .arg(out.path())
        .env("IOMATRIX", env!("CARGO_BIN_EXE_iomatrix"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stdout}\n{stderr}");
    let mounted = std::fs::read_to_string(out.path().join("smb-mounted-vs-builtin.txt")).unwrap();
    let protocols = std::fs::read_to_string(out.path().join("nfs-vs-smb.txt")).unwrap();
    for table in [&mounted, &protocols] {
        assert!(table.contains("read: B/A of KB/s"), "{table}");
        assert!(table.contains("record-size view"), "{table}");
        assert!(table.contains("limit (100Mbit = 12207 KB/s)"), "{table}");
    }
    // smbnetfs caches what it wrote: its small-file rereads beat the wire, and compare says where.
    assert!(mounted.contains("B: reread: cache dominates at files <="), "{mounted}");
    let report = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(report.contains("<svg") && report.contains("smb-mounted"), "the report shows the three runs");
}
