//! Issue 53's runs page, in the terminal first: `iomatrix runs` with filters (suite, labels,
//! target, host, file system, state, dates, free text) and pages, newest first; each bad flag a
//! usage error (exit 2) before anything is read.

use crate::helpers::*;
use serde_json::Value;

/// Real runs, tiny, in one sandbox: four iozone runs and a bonnie run, labelled; the third on a
/// tmpfs mount where one can be made. Started a day apart from 2026-12-01T12:00:00Z (the start is
/// the one column set afterwards, so the dates are known), and run 5 marked failed with an error.
struct Runs {
    sb: Sandbox,
    /// The third run's target where one could be mounted, kept mounted until the test ends.
    tmpfs: Option<Mount>,
}

fn five_runs() -> Runs {
    let sb = Sandbox::new();
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=16m").ok();
    let sandbox_target = sb.target();
    let third_target = tmpfs.as_ref().map_or(sandbox_target.clone(), |m| m.point.clone());
    let iozone = |target: &std::path::Path, labels: &[&str], tests: &str| {
        let mut args = vec!["run", "iozone", "--target", target.to_str().unwrap()];
        args.extend(["--files", "64k", "--records", "4k", "--tests", tests]);
        for label in labels {
            args.extend(["--label", label]);
        }
        assert_success(&sb.run(&args));
    };
    iozone(&sandbox_target, &["server=a", "build=1"], "write");
    iozone(&sandbox_target, &["server=b", "build=1"], "write");
    iozone(&third_target, &["server=a", "build=2"], "write");
    iozone(&sandbox_target, &["server=b", "build=2"], "write,read");
    let t = sandbox_target.to_str().unwrap();
    let bonnie = ["run", "bonnie", "--target", t, "--size", "1m", "--ram", "0", "--files", "0", "--fast"];
    assert_success(&sb.run(&[&bonnie[..], &["--label", "server=a"]].concat()));
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.execute("UPDATE runs SET started_at_ms = 1796126400000 + (id - 1) * 86400000", []).unwrap();
    // A failed run made for real costs a fault; the store's own tests read every state.
    conn.execute("UPDATE runs SET status = 'failed', error = 'Disk Quota Exceeded' WHERE id = 5", []).unwrap();
    Runs { sb, tmpfs }
}

/// The run ids `runs ARGS --json` lists, in its order, and the page's document.
fn listed(sb: &Sandbox, args: &[&str]) -> (Vec<i64>, Value) {
    let out = sb.run(&[&["runs", "--json"][..], args].concat());
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("runs --json is JSON");
    let ids = doc["runs"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    (ids, doc)
}

fn ids(sb: &Sandbox, args: &[&str]) -> Vec<i64> {
    listed(sb, args).0
}

#[test]
fn each_filter_lists_its_runs_newest_first() {
    let runs = five_runs();
    let sb = &runs.sb;
    assert_eq!(ids(sb, &[]), [1, 2, 3, 4, 5], "no flag: every run, oldest first, as always");
    assert_eq!(ids(sb, &["--page", "1"]), [5, 4, 3, 2, 1]);
    assert_eq!(ids(sb, &["--suite", "iozone"]), [4, 3, 2, 1]);
    assert_eq!(ids(sb, &["--suite", "bonnie"]), [5]);
    assert_eq!(ids(sb, &["--label", "server=a"]), [5, 3, 1]);
    assert_eq!(ids(sb, &["--label", "server=b", "--label", "build=2"]), [4]);
    // The stored target is the canonical path of the sandbox's target (or of the tmpfs mount).
    let here = std::fs::canonicalize(sb.target()).unwrap().to_str().unwrap().to_string();
    let on_sandbox: &[i64] = if runs.tmpfs.is_some() { &[5, 4, 2, 1] } else { &[5, 4, 3, 2, 1] };
    assert_eq!(ids(sb, &["--target", &here]), on_sandbox, "--target {here}");
    let host = sb.show_json(1)["run"]["host"].as_str().unwrap().to_string();
    assert_eq!(ids(sb, &["--host", &host]), [5, 4, 3, 2, 1]);
    assert_eq!(ids(sb, &["--host", "no-such-host"]), Vec::<i64>::new());
    assert_eq!(ids(sb, &["--state", "failed"]), [5]);
    assert_eq!(ids(sb, &["--state", "complete"]), [4, 3, 2, 1]);
    assert_eq!(ids(sb, &["--state", "disturbed"]), Vec::<i64>::new());
    assert_eq!(ids(sb, &["--since", "2026-12-03"]), [5, 4, 3]);
    assert_eq!(ids(sb, &["--until", "2026-12-02"]), [2, 1]);
    assert_eq!(ids(sb, &["--since", "2026-12-02T12:00:00Z", "--until", "2026-12-03T13:00:00+01:00"]), [3, 2]);
    assert_eq!(ids(sb, &["--search", "disk quota"]), [5]);
    assert_eq!(ids(sb, &["--search", "WRITE,READ"]), [4]);
    assert_eq!(ids(sb, &["--search", "BUILD=2"]), [4, 3]);
}

#[test]
fn the_file_system_filter_reads_the_type_each_run_recorded() {
    let runs = five_runs();
    let sb = &runs.sb;
    let fs_of = |id: i64| sb.show_json(id)["run"]["environment"]["target"]["fs_type"].as_str().unwrap().to_string();
    let fs: Vec<String> = (1..=5).map(fs_of).collect();
    // The third run's target is a tmpfs mount where one could be made; the others' the sandbox's.
    for kind in fs.iter().collect::<std::collections::BTreeSet<_>>() {
        let expected: Vec<i64> = (1..=5).rev().filter(|&id| &fs[id as usize - 1] == kind).collect();
        assert_eq!(ids(sb, &["--fs", kind]), expected, "--fs {kind} (types: {fs:?})");
    }
    if runs.tmpfs.is_some() {
        assert!(ids(sb, &["--fs", "tmpfs"]).contains(&3), "types: {fs:?}");
    }
    assert_eq!(ids(sb, &["--fs", "no-such-fs"]), Vec::<i64>::new());
}

#[test]
fn pages_say_where_they_stand_and_hold_their_runs() {
    let runs = five_runs();
    let sb = &runs.sb;
    let (page, doc) = listed(sb, &["--page", "2", "--per-page", "2"]);
    assert_eq!(page, [3, 2]);
    assert_eq!((doc["total"].as_u64(), doc["page"].as_u64(), doc["pages"].as_u64()), (Some(5), Some(2), Some(3)));
    assert_eq!(doc["runs"][0]["labels"], serde_json::json!([["build", "2"], ["server", "a"]]));
    assert_eq!(ids(sb, &["--page", "3", "--per-page", "2"]), [1]);
    let out = sb.run(&["runs", "--page", "2", "--per-page", "2"]);
    assert_success(&out);
    let text = text(&out).0;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "runs 3-4 of 5 (page 2 of 3)", "{text}");
    assert!(lines[1].contains("run") && lines[1].contains("labels"), "{text}");
    assert!(lines[2].trim_start().starts_with("3 ") && lines[3].trim_start().starts_with("2 "), "{text}");
    assert!(lines[2].contains("build=2 server=a"), "{text}");
    assert_eq!(lines.len(), 4, "{text}");
    let past = text_of(sb, &["runs", "--page", "9", "--per-page", "2"]);
    assert_eq!(past, "no runs on page 9: 5 runs matched, 3 pages of 2; give --page 3 or less\n");
    assert_eq!(text_of(sb, &["runs", "--suite", "fileserver"]), "no stored run matches\n");
    // The same question asked with a filter that every run passes gives the same page.
    assert_eq!(text_of(sb, &["runs", "--page", "1"]), text_of(sb, &["runs", "--search", "iomatrix"]));
}

fn text_of(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.run(args);
    assert_success(&out);
    text(&out).0
}

#[test]
fn bad_filters_are_refused_before_anything_is_read() {
    let sb = Sandbox::new();
    let refused = [
        (&["--label", "server"][..], "KEY=VALUE"),
        (&["--state", "done"], "complete, partial, failed, disturbed"),
        (&["--since", "2026-12-32"], "2026-12-01T08:30:00Z"),
        (&["--until", "last week"], "--until"),
        (&["--since", "2026-12-05", "--until", "2026-12-01"], "give the earlier instant to --since"),
        (&["--page", "0"], "--page 1"),
        (&["--per-page", "1001"], "1 to 1000"),
        (&["--per-page", "0"], "1 to 1000"),
    ];
    for (args, needle) in refused {
        let out = sb.run(&[&["runs"][..], args].concat());
        assert_usage_error(&out, needle);
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!sb.db().exists(), "a refused query opened (and made) the database");
}
