//! CPU per request of io_uring cells (issue 36): `show` prints each cell's user and system CPU
//! time per request, from the run's own CPU figure, as fio prints usr_cpu and sys_cpu.
use crate::helpers::*;
use serde_json::Value;

/// What the table row of the cell whose queue depth is `qd` shows in column `name`: "12.7 us",
/// "830 ns" or "-" (the table's values end where their header ends).
fn column(show: &str, name: &str, qd: u64) -> String {
    let header = show.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("no column {name} in\n{show}"));
    let end = header.find(name).unwrap() + name.len();
    let qd_end = header.find(" qd").unwrap() + 3;
    let row = show
        .lines()
        .find(|l| l.len() >= end && l[..qd_end].split_whitespace().last() == Some(&qd.to_string()))
        .unwrap_or_else(|| panic!("no row of qd {qd} in\n{show}"));
    let words: Vec<&str> = row[..end].split_whitespace().collect();
    match words[..] {
        [.., "-"] => "-".to_string(),
        [.., number, unit] => format!("{number} {unit}"),
        _ => panic!("{name} of qd {qd}: '{row}'"),
    }
}

/// The figure in column `name` of the row of queue depth `qd`, in nanoseconds.
fn column_ns(show: &str, name: &str, qd: u64) -> f64 {
    let shown = column(show, name, qd);
    let (number, unit) = shown.split_once(' ').unwrap_or_else(|| panic!("{name} of qd {qd}: '{shown}' in\n{show}"));
    let number: f64 = number.parse().unwrap_or_else(|_| panic!("{name} of qd {qd}: '{shown}' in\n{show}"));
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
    let mut args = vec!["run", "access", "--target", fs.point.to_str().unwrap()];
    args.extend("--backend io_uring --direct --bs 4k --qd 1,8 --read 100 --random 100".split(' '));
    args.extend(["--file-size", "16m", "--duration", "700ms"]);
    let out = sb.run(&args);
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

/// An imported fio job on io_uring shows fio's own usr_cpu and sys_cpu per request, as the bench
/// reads them (percent of its run time, times that run time, over its requests); a fio file
/// without them shows `-`, never 0.
#[test]
fn an_imported_fio_io_uring_job_shows_fios_cpu_per_request_and_none_where_fio_gave_none() {
    if !have("fio") {
        return skip("fio is not installed (Debian: apt-get install fio)");
    }
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let with_cpu = dir.join("fio.json");
    let out = std::process::Command::new("fio")
        .args(["--name=uring", "--ioengine=io_uring", "--iodepth=4", "--rw=randread", "--bs=4k", "--size=8m"])
        .args(["--runtime=1", "--time_based", "--thread", "--output-format=json"])
        .arg(format!("--filename={}", dir.join("fio.dat").display()))
        .arg(format!("--output={}", with_cpu.display()))
        .output()
        .expect("run fio");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut source: Value = serde_json::from_slice(&std::fs::read(&with_cpu).unwrap()).unwrap();
    let job = source["jobs"][0].clone();
    let requests = job["read"]["total_ios"].as_f64().unwrap();
    let runtime_ns = job["job_runtime"].as_f64().unwrap() * 1e6;
    let without_cpu = dir.join("fio-without-cpu.json");
    for key in ["usr_cpu", "sys_cpu"] {
        source["jobs"][0].as_object_mut().unwrap().remove(key);
    }
    std::fs::write(&without_cpu, serde_json::to_vec(&source).unwrap()).unwrap();

    for (file, has_cpu) in [(&with_cpu, true), (&without_cpu, false)] {
        let out = sb.run(&["import", file.to_str().unwrap()]);
        assert_success(&out);
        let id = sb.last_run()["run"]["id"].as_i64().unwrap();
        let show = sb.run(&["show", &id.to_string()]);
        assert_success(&show);
        let (text, _) = text(&show);
        if !has_cpu {
            assert_eq!((column(&text, "usr/IO", 4), column(&text, "sys/IO", 4)), ("-".into(), "-".into()), "{text}");
            continue;
        }
        for (name, key) in [("usr/IO", "usr_cpu"), ("sys/IO", "sys_cpu")] {
            let fios = job[key].as_f64().unwrap() / 100.0 * runtime_ns / requests;
            let shown = column_ns(&text, name, 4);
            let step = if fios < 1e3 { 1.0 } else { 100.0 };
            assert!((shown - fios).abs() <= step / 2.0 + 1.0, "{name}: shown {shown} ns, fio's {fios} ns\n{text}");
        }
    }
}
