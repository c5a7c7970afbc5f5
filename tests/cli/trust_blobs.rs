//! Issue 48's findings on stored histogram blobs (5) and on `db merge` of the database itself
//! (9, the first of the smaller ones), each as an attacker met it:
//!
//! - A blob is decoded only when its header is what iomatrix writes (a V2 cookie, a payload
//!   within the largest iomatrix can write, the latency recorder's own bounds and digits):
//!   40 bytes claiming a 4 GiB payload are named by `show`, `show --json` and `db check` (exit 1)
//!   and never allocated for.
//! - `db merge` refuses a source run whose blobs do not decode; compare and report refuse such a
//!   run (exit 1), naming it.
//! - `db merge` of this database by a hard link, a symlink or a bind mount is refused (exit 2).

use crate::helpers::*;
use std::path::Path;
use std::process::Command;

/// The V2 cookie, a payload of 0xFFFFFFF0 bytes, normalizing offset 0, 3 digits, 1 ns to an hour,
/// ratio 1.0: 40 bytes that asked hdrhistogram for a 4.2 GB buffer.
const HUGE_PAYLOAD: &str = "1c849313fffffff0000000000000000300000000000000010000034630b8a0003ff0000000000000";

/// The same header with 5 significant digits and a highest value of u64::MAX (some 50 MB of
/// counters at hdrhistogram's first step), claiming no payload.
const OTHER_SHAPE: &str = "1c8493130000000000000000000000050000000000000001ffffffffffffffff3ff0000000000000";

fn sql(db: &Path, statement: &str) {
    rusqlite::Connection::open(db).unwrap().execute_batch(statement).unwrap();
}

/// The database's bytes, for "left as it was".
fn bytes_of(db: &Path) -> Vec<u8> {
    std::fs::read(db).unwrap()
}

fn runs_in(db: &Path) -> i64 {
    rusqlite::Connection::open(db).unwrap().query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap()
}

/// One small access run into `db` (which stores its latency histograms as blobs).
fn access_run(sb: &Sandbox, db: &Path) {
    let target = sb.target();
    let out = sb
        .cmd()
        .env("IOMATRIX_DB", db)
        .args(["run", "access", "--target", target.to_str().unwrap()])
        .args(["--file-size", "1m", "--bs", "4k", "--duration", "200ms"])
        .output()
        .unwrap();
    assert_success(&out);
}

/// A sandbox with `runs` access runs in its database.
fn with_runs(runs: usize) -> Sandbox {
    let sb = Sandbox::new();
    for _ in 0..runs {
        access_run(&sb, &sb.db());
    }
    assert_success(&sb.run(&["db", "check"]));
    sb
}

fn plant(db: &Path, run: i64, blob_hex: &str) {
    sql(db, &format!("UPDATE cell_blobs SET data = x'{blob_hex}' WHERE run_id = {run} AND name = 'latency.read'"));
}

#[test]
fn the_constants_are_forty_byte_headers() {
    assert_eq!(HUGE_PAYLOAD.len(), 80);
    assert_eq!(OTHER_SHAPE.len(), 80);
}

#[test]
fn a_blob_claiming_a_huge_payload_is_named_by_show_and_db_check_without_allocating_it() {
    let sb = with_runs(1);
    plant(&sb.db(), 1, HUGE_PAYLOAD);
    let place = "run #1 cell 0 (access), cell_blobs latency.read: does not decode (latency histogram too large: \
                 it claims 4294967280 bytes of counts, 304128 at most";

    let out = sb.run(&["show", "1"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains(place), "{stderr}");
    assert!(stdout.contains("run #1"), "what can be read is still shown: {stdout}");

    let out = sb.run(&["show", "1", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out).1);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let named = &doc["unreadable"][0];
    assert_eq!((named["run_id"].as_i64(), named["cell"].as_i64()), (Some(1), Some(0)), "{doc}");
    assert_eq!(named["column"], "cell_blobs latency.read", "{doc}");
    assert!(named["problem"].as_str().unwrap().contains("too large"), "{doc}");

    let out = sb.run(&["db", "check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("figures: UNREADABLE (1 stored figure(s)"), "{stdout}");
    assert!(
        stdout.contains("run #1 cell 0 (access), cell_blobs latency.read") && stdout.contains("too large"),
        "{stdout}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // The whole process, as GNU time measures its peak resident set.
    if !Path::new("/usr/bin/time").exists() {
        return skip("GNU time (/usr/bin/time) is missing");
    }
    for args in [&["show", "1"][..], &["show", "1", "--json"], &["db", "check"]] {
        let out = Command::new("/usr/bin/time")
            .args(["-f", "peak-rss-kib %M"])
            .arg(env!("CARGO_BIN_EXE_iomatrix"))
            .args(args)
            .env("IOMATRIX_DB", sb.db())
            .env(crate::helpers::BUSY_VAR, "off")
            .current_dir(sb.dir.path())
            .output()
            .unwrap();
        let stderr = text(&out).1;
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let kib: u64 = stderr
            .lines()
            .find_map(|l| l.strip_prefix("peak-rss-kib "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no figure from GNU time: {stderr}"));
        println!("iomatrix {} on a 4 GiB-claiming blob: peak RSS {kib} KiB", args.join(" "));
        assert!(kib < 100 * 1024, "{args:?}: {kib} KiB");
    }
}

#[test]
fn a_blob_of_other_bounds_or_digits_is_refused() {
    let sb = with_runs(1);
    plant(&sb.db(), 1, OTHER_SHAPE);
    let out = sb.run(&["show", "1"]);
    let stderr = text(&out).1;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "run #1 cell 0 (access), cell_blobs latency.read: does not decode (latency histogram of another shape: \
             it tracks 1 to 18446744073709551615 ns at 5 significant digits; iomatrix records 1 to 3600000000000 ns at 3"
        ),
        "{stderr}"
    );
    let out = sb.run(&["db", "check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).0.contains("another shape"), "{}", text(&out).0);

    // Longer than any histogram iomatrix writes: named by its length, never loaded.
    sql(&sb.db(), "UPDATE cell_blobs SET data = zeroblob(50000000) WHERE run_id = 1 AND name = 'latency.read'");
    for args in [&["show", "1"][..], &["db", "check"]] {
        let out = sb.run(args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
        assert!(
            format!("{stdout}{stderr}").contains("too large: it is 50000000 bytes, 304281 at most"),
            "{args:?}: {stdout}{stderr}"
        );
    }
}

#[test]
fn compare_and_report_refuse_a_run_whose_histogram_does_not_decode() {
    let sb = with_runs(2);
    plant(&sb.db(), 2, "1c849314deadbeef");
    let report = sb.dir.path().join("r.md");
    let report = report.to_str().unwrap();
    for args in [&["compare", "1", "2"][..], &["report", "1", "2", "-o", report], &["report", "2", "-o", report]] {
        let out = sb.run(args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("run #2's stored figures cannot be read"), "{args:?}: {stderr}");
        assert!(stderr.contains("run #2 cell 0 (access), cell_blobs latency.read: does not decode"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!Path::new(report).exists(), "no report written of a run that cannot be read");
    assert_success(&sb.run(&["compare", "1", "1"]));
}

#[test]
fn db_merge_refuses_a_source_run_whose_histogram_does_not_decode() {
    let sb = with_runs(1);
    let source = sb.dir.path().join("lab2.sqlite");
    access_run(&sb, &source);
    access_run(&sb, &source);
    plant(&source, 2, HUGE_PAYLOAD);
    let before = bytes_of(&sb.db());

    let out = sb.run(&["db", "merge", source.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_ne!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert_eq!(out.status.code(), Some(2), "a refusal, as the gate's others: {stderr}");
    assert!(
        stderr.contains(&format!("{}: run #2 there: its stored figures cannot be read", source.display()))
            && stderr.contains("cell 0 (access), cell_blobs latency.read: does not decode"),
        "the file, the run and the cell named: {stderr}"
    );
    assert!(stderr.contains("nothing was merged"), "{stderr}");
    assert_eq!(runs_in(&sb.db()), 1, "nothing merged");
    assert!(bytes_of(&sb.db()) == before, "the database is left byte for byte as it was");

    // --skip-refused merges the sound run and names the one it left out.
    let out = sb.run(&["db", "merge", "--skip-refused", source.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains("1 run(s) refused and left out") && stderr.contains("run #2 there"), "{stderr}");
    assert_eq!(runs_in(&sb.db()), 2);
    assert_success(&sb.run(&["db", "check"]));
}

#[test]
fn db_merge_of_this_database_by_another_name_is_refused_by_inode() {
    let sb = with_runs(1);
    let db = sb.db();
    let dir = sb.dir.path();
    let hard = dir.join("hard-link.sqlite");
    std::fs::hard_link(&db, &hard).unwrap();
    let soft = dir.join("symlink.sqlite");
    std::os::unix::fs::symlink(&db, &soft).unwrap();
    let bound = dir.join("bound.sqlite");
    std::fs::write(&bound, b"").unwrap();
    let bind = crate::trust_files::Bind::new(&db, &bound);
    let mut aliases = vec![hard, soft];
    if bind.is_some() {
        aliases.push(bound.clone());
    }
    let before = bytes_of(&db);
    for alias in &aliases {
        let out = sb.run(&["db", "merge", alias.to_str().unwrap()]);
        assert_usage_error(&out, "that is this database");
        assert!(text(&out).1.contains(&alias.display().to_string()), "{}", text(&out).1);
        assert!(!text(&out).1.contains("locked"), "{}", text(&out).1);
        assert_eq!(bytes_of(&db), before, "{}: the database is left as it was", alias.display());
    }
    drop(bind);
    assert_eq!(runs_in(&db), 1);
    assert_success(&sb.run(&["db", "check"]));
}
