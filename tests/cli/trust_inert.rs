//! Issue 48's findings 7, 8 and the smaller ones of 9, each as an attacker met them: a cache
//! verdict counts what it claims, and text that leaves iomatrix (a CSV report, an error on the
//! terminal, an imported figure) is inert and exact.
//!
//! - A cold backup walk over a file another process keeps mapped names what stayed cached after
//!   its drop and never says its figures measure the storage (finding 7).
//! - Labels and group names that a spreadsheet would run as formulas are written inert in a CSV
//!   report (finding 8).
//! - `--exclude` with an escape sequence shows it escaped; a published table's record larger than
//!   its file and counts past 2^53 are refused with their line (finding 9).

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A file of this test process mapped shared and every page touched, so the page cache must keep
/// its pages whatever another process (the iomatrix under test) advises; unmapped on drop, also
/// when the test fails.
struct Mapped {
    at: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn touch(path: &Path) -> Mapped {
        let file = std::fs::File::open(path).unwrap();
        let len = file.metadata().unwrap().len() as usize;
        // SAFETY: a fresh shared read-only mapping of `len` bytes of a file held open here; the
        // mapping outlives the descriptor (the kernel keeps the file), and is only read below.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        assert_ne!(at, libc::MAP_FAILED, "mmap {}: {}", path.display(), std::io::Error::last_os_error());
        // SAFETY: every offset read lies inside the mapping; reading faults the page in and maps it.
        let sum: u64 = (0..len).step_by(4096).map(|off| u64::from(unsafe { *(at as *const u8).add(off) })).sum();
        assert_eq!(sum, (len / 4096) as u64 * 0x5a, "every page read back");
        Mapped { at, len }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `touch`, not used after this.
        unsafe { libc::munmap(self.at, self.len) };
    }
}

/// A tree holding one 64 MiB file, written and synced (the sandbox lives on a disk's file system:
/// a tmpfs would keep every page whatever the advice).
fn tree_with_a_big_file(sb: &Sandbox) -> std::path::PathBuf {
    let tree = sb.target().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let big = tree.join("big");
    std::fs::write(&big, vec![0x5a_u8; 64 << 20]).unwrap();
    std::fs::File::open(&big).unwrap().sync_all().unwrap();
    big
}

/// `run backup` of `tree`: its output, and the stored cell's count of what stayed cached.
fn walk_cold(sb: &Sandbox, tree: &Path) -> (String, Value) {
    let out = sb.run(&["run", "backup", "--target", tree.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    let cell = &sb.last_run()["run"]["cell_results"][0];
    (format!("{stdout}{stderr}"), cell["metrics"]["cached_at_start"].clone())
}

/// Finding 7: with its file mapped by another process, a cold walk read 136,663 MiB/min (65,411
/// to 81,100 without) and said "the page cache was dropped before the reads". Now the walk counts
/// what stayed cached after its drop, stores it with the cell, and says how much and why.
#[test]
fn a_cold_walk_names_what_stayed_cached_and_does_not_claim_the_storage() {
    let sb = Sandbox::new();
    let big = tree_with_a_big_file(&sb);
    let tree = big.parent().unwrap();
    let fs = Command::new("stat").args(["-f", "-c", "%T"]).arg(tree).output().expect("stat");
    if String::from_utf8_lossy(&fs.stdout).trim() == "tmpfs" {
        skip("the sandbox is on tmpfs, where no cache can be dropped");
        return;
    }
    // Without the mapping: the drop leaves nothing, and the summary may say the storage answered.
    let (said, counted) = walk_cold(&sb, tree);
    println!("unmapped: {counted}\n{said}");
    assert_eq!(counted["file_bytes"], 64 << 20, "{counted}");
    assert!(counted["cached_bytes"].as_u64().unwrap() < 1 << 20, "{counted}");
    assert!(said.contains("the read figures measure the storage"), "{said}");
    assert!(said.contains("after the drop: 0% of 64 MiB still cached"), "{said}");

    let mapped = Mapped::touch(&big);
    let (said, counted) = walk_cold(&sb, tree);
    drop(mapped);
    println!("mapped: {counted}\n{said}");
    assert_eq!(counted["cached_bytes"], 64 << 20, "every mapped page stays cached: {counted}");
    assert!(
        said.contains("after the drop: 100% of 64 MiB stayed cached (counted with mincore"),
        "show's note:\n{said}"
    );
    assert!(said.contains("but 100% of 64 MiB stayed cached (pages another process maps"), "summary:\n{said}");
    assert!(!said.contains("measure the storage") && !said.contains("measures the storage"), "{said}");
    // show of the stored run says it again, from the database alone.
    let id = sb.last_run()["run"]["id"].as_i64().unwrap().to_string();
    let shown = text(&sb.run(&["show", &id])).0;
    assert!(shown.contains("after the drop: 100% of 64 MiB stayed cached"), "{shown}");
}

/// The first data line of a CSV report whose text holds `needle`, split as a spreadsheet splits it.
fn csv_fields(csv: &str, needle: &str) -> Vec<String> {
    let line = csv.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line with {needle}:\n{csv}"));
    let (mut out, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Finding 8: `--label '@SUM(1+1)*cmd|x!A0=1'` and `'+cmd|x!A0=1'` were written as they are, and a
/// spreadsheet runs a field that starts with `=`, `+`, `-` or `@`. Now such a field is quoted with
/// a single quote in front (OWASP's rule), in the labels and in the group name made of them.
#[test]
fn labels_a_spreadsheet_would_run_are_written_inert_in_csv() {
    let sb = Sandbox::new();
    let target = sb.target();
    for label in ["@SUM(1+1)*cmd|x!A0=1", "+cmd|x!A0=1"] {
        let out = sb.run(&[
            "run",
            "iozone",
            "--target",
            target.to_str().unwrap(),
            "--files",
            "64k",
            "--records",
            "4k",
            "--tests",
            "write",
            "--label",
            label,
        ]);
        assert_success(&out);
    }
    let csv_path = sb.dir.path().join("x.csv");
    // Each run's group is named by the label that selects it.
    let out = sb.run(&["report", "@SUM(1+1)*cmd|x!A0=1", "+cmd|x!A0=1", "-o", csv_path.to_str().unwrap()]);
    assert_success(&out);
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    println!("{csv}");
    for (key, raw) in [("@SUM(1+1)*cmd|x!A0", "@SUM"), ("+cmd|x!A0", "+cmd")] {
        let f = csv_fields(&csv, raw);
        assert_eq!(f.len(), 14, "the columns, the verdict last: {f:?}");
        assert_eq!(f[12], format!("'{key}=1"), "the labels field: {f:?}");
        assert_eq!(f[1], format!("'{key}=1"), "the group name, made of the label: {f:?}");
        assert!(f[7].parse::<f64>().is_ok(), "the figure stays a number: {f:?}");
        assert!(!csv.contains(&format!(",{raw}")), "no field starts with {raw}:\n{csv}");
    }
}

/// Finding 9: `--exclude $'\e[31m'` echoed the raw escape to the terminal. compare and sweep
/// now refuse it (exit 2) with the escape written out.
#[test]
fn exclude_with_an_escape_sequence_is_shown_escaped() {
    let sb = Sandbox::new();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/results.sqlite"), sb.db()).unwrap();
    for args in [&["compare", "1", "6"][..], &["sweep", "--by", "sys", "1", "6"][..]] {
        let out = sb.run(&[args, &["--exclude", "\u{1b}[31mred"]].concat());
        assert_usage_error(&out, "--exclude \\e[31mred: no ");
        let (stdout, stderr) = text(&out);
        assert!(!stderr.contains('\u{1b}') && !stdout.contains('\u{1b}'), "a raw ESC reached the terminal: {stderr:?}");
    }
}

/// Finding 9: a published table gave a record of 1t on a file of 1m, and a count of 2^53 + 1 (a
/// double reads it as 2^53): both were stored. Now each is refused with its line, exit 2, and
/// nothing is stored.
#[test]
fn a_published_record_past_its_file_or_a_count_past_2_pow_53_is_refused() {
    let sb = Sandbox::new();
    let header = "label:dba,suite,test,file_size,record_size,operation,metric,unit,value\n";
    let cases = [
        ("a,iozone,write,1m,1t,,throughput,KB/s,1\n", "line 2: record size 1t is larger than the file size 1m"),
        (
            "a,backup,backup,,,,files,files,9007199254740993\n",
            "line 2: value '9007199254740993 files' is past any files",
        ),
        ("a,backup,backup,,,,extents,extents,9007199254740993\n", "line 2: value '9007199254740993 extents' is past"),
    ];
    for (line, needle) in cases {
        let path = sb.dir.path().join("bad.csv");
        std::fs::write(&path, format!("{header}{line}")).unwrap();
        assert_usage_error(&sb.run(&["import", "--format", "published", path.to_str().unwrap()]), needle);
    }
    assert!(!sb.db().exists(), "a refused table opened the results database");
    // The largest exact count and a record of the whole file still import.
    let path = sb.dir.path().join("good.csv");
    std::fs::write(
        &path,
        format!("{header}a,backup,backup,,,,files,files,9007199254740991\na,iozone,write,1m,1m,,throughput,KB/s,1\n"),
    )
    .unwrap();
    assert_success(&sb.run(&["import", "--format", "published", path.to_str().unwrap()]));
}
