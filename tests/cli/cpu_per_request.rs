//! CPU per request of io_uring cells (issue 36): `show` prints each cell's user and system CPU
//! time per request, from the run's own CPU figure, as fio prints usr_cpu and sys_cpu.
use crate::helpers::*;
use serde_json::Value;

/// The figure in column `name` of the table row of the cell whose queue depth is `qd`, in
/// nanoseconds ("12.7 us", "830 ns"); the table's values end where their header ends.
fn column_ns(show: &str, name: &str, qd: u64) -> f64 {
    let header = show.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("no column {name} in\n{show}"));
    let end = header.find(name).unwrap() + name.len();
    let qd_end = header.find(" qd").unwrap() + 3;
    let row = show
        .lines()
        .find(|l| l.len() >= end && l[..qd_end].split_whitespace().last() == Some(&qd.to_string()))
        .unwrap_or_else(|| panic!("no row of qd {qd} in\n{show}"));
    let words: Vec<&str> = row[..end].split_whitespace().collect();
    let (number, unit) = (words[words.len() - 2], words[words.len() - 1]);
    let number: f64 = number.parse().unwrap_or_else(|_| panic!("{name} of qd {qd}: '{number} {unit}' in\n{show}"));
    number
        * match unit {
            "ns" => 1.0,
            "us" => 1e3,
            "ms" => 1e6,
            other => panic!("{name} of qd {qd}: unit {other} in\n{show}"),
        }
}

/// The cell's user or system CPU time over its requests, from the stored run, in nanoseconds.
fn stored_ns(cell: &Value, key: &str) -> f64 {
    cell[key].as_u64().unwrap() as f64 / cell["ops"].as_u64().unwrap() as f64
}

#[test]
fn show_prints_cpu_per_request_of_io_uring_cells_from_the_runs_own_cpu_time() {
    let Some(fs) = Mount::ext4(96) else { return };
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        fs.point.to_str().unwrap(),
        "--backend",
        "io_uring",
        "--direct",
        "--bs",
        "4k",
        "--qd",
        "1,8",
        "--read",
        "100",
        "--random",
        "100",
        "--file-size",
        "16m",
        "--duration",
        "700ms",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    let id = run["run"]["id"].as_i64().unwrap();
    let show = sb.run(&["show", &id.to_string()]);
    assert_success(&show);
    let (text, _) = text(&show);
    assert!(text.contains("usr/IO, sys/IO: CPU time per request"), "the legend says what the columns are:\n{text}");
    for cell in cells(&run) {
        let qd = cell["metrics"]["queue_depth"].as_u64().unwrap();
        let ops = cell["ops"].as_u64().unwrap();
        assert!(ops > 100, "qd {qd}: {ops} requests in 700 ms");
        let (user, sys) = (stored_ns(&cell, "user_ns"), stored_ns(&cell, "sys_ns"));
        // The client thread entered the kernel for every request or group: it spent system time.
        assert!(sys > 0.0 && user + sys > 0.0, "qd {qd}: user {user} ns, system {sys} ns per request");
        // The CPU time is the one the run's %CPU is made of: (user + sys) / wall = %CPU / 100.
        let wall = cell["wall_ns"].as_u64().unwrap() as f64;
        let percent = cell["cpu_percent"].as_f64().unwrap();
        let from_percent = percent / 100.0 * wall / ops as f64;
        assert!(
            ((user + sys) - from_percent).abs() <= 0.01 * from_percent + 1.0,
            "qd {qd}: {user} + {sys} vs {from_percent}"
        );
        // What show prints is that figure, rounded to its last digit (0.1 us above 1 us).
        for (name, stored) in [("usr/IO", user), ("sys/IO", sys)] {
            let shown = column_ns(&text, name, qd);
            let step = if stored < 1e3 { 1.0 } else { 100.0 };
            assert!(
                (shown - stored).abs() <= step / 2.0 + 1e-6,
                "qd {qd} {name}: shown {shown} ns, stored {stored} ns\n{text}"
            );
        }
    }
}

#[test]
fn psync_runs_keep_their_table_without_cpu_per_request() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--backend",
        "psync",
        "--bytes",
        "1m",
        "--file-size",
        "4m",
    ]);
    assert_success(&out);
    let id = sb.last_run()["run"]["id"].as_i64().unwrap();
    let show = sb.run(&["show", &id.to_string()]);
    assert_success(&show);
    let (text, _) = text(&show);
    assert!(text.contains("CPU%") && !text.contains("usr/IO"), "{text}");
}
