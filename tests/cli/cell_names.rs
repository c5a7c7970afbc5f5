//! An access cell has one name (core's `IoMix::name`: `qd=2 read=100% random=100%`): its live
//! line, show's clients and verification tables, compare and `--metric` spell its mix alike,
//! so a name read off one of them finds the cell in the others.
use crate::helpers::*;

/// The cell's name within its run, as the plan, the live line and the clients table give it.
const IN_RUN: &str = "4k qd=2 read=100% random=100%";
/// The same cell across runs, as compare and sweep give it: test and sizes before the mix.
const ACROSS_RUNS: &str = "access 1m/4k qd=2 read=100% random=100%";

#[test]
fn an_access_cell_has_one_name_in_its_live_line_tables_and_compare() {
    let sb = Sandbox::new();
    let target = sb.target();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = sb.run(&[
            "run",
            "access",
            "--target",
            target.to_str().unwrap(),
            "--file-size",
            "1m",
            "--bs",
            "4k",
            "--read",
            "100",
            "--random",
            "100",
            "--qd",
            "2",
            "--clients",
            "2",
            "--bytes",
            "256k",
            "--verify",
        ]);
        assert_success(&out);
        let (stdout, stderr) = text(&out);
        assert!(stderr.contains(&format!("] {IN_RUN}: ")), "the live line names the cell {IN_RUN}:\n{stderr}");
        let clients_row = stdout.lines().find(|l| l.starts_with(IN_RUN));
        assert!(clients_row.is_some_and(|row| row[IN_RUN.len()..].trim_start().starts_with('2')), "{stdout}");
        let verify_row = stdout.lines().find(|l| l.starts_with("access 1m 4k "));
        assert!(verify_row.is_some_and(|row| row.contains(IN_RUN)), "the verification table:\n{stdout}");
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap().to_string());
    }

    let out = sb.run(&["compare", &ids[0], &ids[1]]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains(&format!("{ACROSS_RUNS} (KB/s)")), "{stdout}");
    assert!(stdout.contains(&format!("{ACROSS_RUNS}: per operation")), "{stdout}");

    // The name the run's own tables print picks the cell out for the gate: one sample a side is
    // too few for a verdict (exit 6, the cell listed as not checked), never "no figure has that
    // name" (exit 2).
    let out = sb.run(&["compare", &ids[0], &ids[1], "--fail-if-slower", "5", "--metric", IN_RUN]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(format!("{stdout}{stderr}").contains(&format!("{ACROSS_RUNS} (too few samples")), "{stdout}\n{stderr}");
}
