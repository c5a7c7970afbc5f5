//! `iomatrix import` on real output: fio and bonnie++ run here (Debian's
//! packages; skipped with a message where missing), IOzone's report from a
//! real IOzone 3.471 run (../shared/fixtures). Every stored figure is
//! checked against the number in the source file.

use crate::helpers::*;
use crate::stored::{close, json_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The ids in `imported run #N:` lines, in order.
fn imported_ids(out: &std::process::Output) -> Vec<i64> {
    assert_success(out);
    let (stdout, _) = text(out);
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("imported run #"))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect()
}

/// Runs fio with `args` plus a JSON output file in `dir`; returns that file.
fn fio(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let output = dir.join(format!("{name}.json"));
    let data = dir.join(format!("{name}.dat"));
    let out = Command::new("fio")
        .arg(format!("--name={name}"))
        .arg(format!("--filename={}", data.display()))
        .args(args)
        .arg("--output-format=json")
        .arg(format!("--output={}", output.display()))
        .output()
        .expect("run fio");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    output
}

#[test]
fn fio_jobs_become_access_cells_with_fios_own_figures() {
    if !have("fio") {
        return skip("fio is not installed (Debian: apt-get install fio)");
    }
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let common = ["--size=8m", "--runtime=1", "--time_based", "--ioengine=psync"];
    let randread = fio(dir, "randread", &[&common[..], &["--bs=4k", "--rw=randread", "--iodepth=4"]].concat());
    let mixed =
        fio(dir, "mixed", &[&common[..], &["--bs=8k", "--rw=randrw", "--rwmixread=70", "--iodepth=1"]].concat());
    let out = sb.run(&["import", randread.to_str().unwrap(), mixed.to_str().unwrap(), "--label", "server=old"]);
    let ids = imported_ids(&out);
    assert_eq!(ids.len(), 2, "{}", text(&out).0);

    for (id, file, bs, read_pct, random_pct) in [(ids[0], &randread, 4096, 100, 100), (ids[1], &mixed, 8192, 70, 100)] {
        let source: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let job = &source["jobs"][0];
        let run = sb.show_json(id);
        let r = &run["run"];
        assert_eq!(r["suite"], "access");
        assert_eq!(r["status"], "complete");
        assert_eq!(r["host"], "unknown", "fio's JSON names no host");
        assert_eq!(r["labels"], serde_json::json!([["imported", "fio"], ["server", "old"]]));
        assert!(r["command_line"].as_str().unwrap().contains(" import "));
        let imported = &r["conditions"]["imported"];
        assert_eq!(imported["tool"], "fio");
        assert_eq!(imported["version"], source["fio version"]);
        assert_eq!(imported["source"], std::fs::canonicalize(file).unwrap().to_str().unwrap());
        assert!(imported["measured_at"].as_str().unwrap().ends_with('Z'));
        assert_eq!(r["conditions"]["backend"], "psync");
        assert_eq!(r["conditions"]["direct"], false, "no direct option: fio's default, buffered");
        assert!(r["conditions"]["ram_bytes"].is_null() && r["conditions"]["files_vs_ram"].is_null());
        assert!(r["conditions"]["fs_type"].is_null());
        let cells = cells(&run);
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        let m = &c["metrics"];
        assert_eq!(c["test"], "access");
        assert_eq!(c["record_size"], bs);
        assert_eq!(c["file_size"], 8 << 20);
        assert_eq!(m["read_percent"], read_pct);
        assert_eq!(m["random_percent"], random_pct);
        // psync runs one request at a time whatever --iodepth says (fio caps it at 1).
        assert_eq!(m["queue_depth"], 1);
        let (rd, wr) = (&job["read"], &job["write"]);
        let f = |v: &Value| v.as_f64().unwrap();
        assert!(close(f(&m["iops"]), f(&rd["iops"]) + f(&wr["iops"])), "{m}");
        assert!(close(f(&m["read_iops"]), f(&rd["iops"])));
        assert!(close(c["kib_per_sec"].as_f64().unwrap(), (f(&rd["bw_bytes"]) + f(&wr["bw_bytes"])) / 1024.0));
        // fio's bw is whole KiB/s.
        assert!((c["kib_per_sec"].as_f64().unwrap() - (f(&rd["bw"]) + f(&wr["bw"]))).abs() <= 2.0);
        assert!(close(f(&m["mib_per_sec"]), c["kib_per_sec"].as_f64().unwrap() / 1024.0));
        assert_eq!(c["bytes"].as_u64().unwrap(), rd["io_bytes"].as_u64().unwrap() + wr["io_bytes"].as_u64().unwrap());
        assert_eq!(m["read"]["count"], rd["clat_ns"]["N"]);
        assert_eq!(m["read"]["p99_ns"], rd["clat_ns"]["percentile"]["99.000000"]);
        assert_eq!(m["read"]["p99_9_ns"], rd["clat_ns"]["percentile"]["99.900000"]);
        assert_eq!(m["read"]["max_ns"], rd["clat_ns"]["max"]);
        assert!(close(f(&m["read"]["mean_ns"]), f(&rd["clat_ns"]["mean"])));
        if read_pct < 100 {
            assert_eq!(m["write"]["count"], wr["clat_ns"]["N"]);
            assert!(m["write"]["count"].as_u64().unwrap() > 0);
            assert_eq!(m["write"]["p50_ns"], wr["clat_ns"]["percentile"]["50.000000"]);
        }
        assert!(close(c["cpu_percent"].as_f64().unwrap(), f(&job["usr_cpu"]) + f(&job["sys_cpu"])));
    }
    // `show` prints it as an access run, saying where it came from and what is unknown.
    let (shown, _) = text(&sb.run(&["show", &ids[1].to_string()]));
    assert!(shown.contains("imported: fio"), "{shown}");
    assert!(shown.contains("not in the source:") && shown.contains("RAM"), "{shown}");
    assert!(shown.contains("   8k   70%  100%"), "{shown}");
}

#[test]
fn an_imported_fio_job_compares_with_a_native_access_run() {
    if !have("fio") {
        return skip("fio is not installed (Debian: apt-get install fio)");
    }
    let sb = Sandbox::new();
    let file = fio(
        sb.dir.path(),
        "rr",
        &["--size=8m", "--bs=4k", "--rw=randread", "--ioengine=psync", "--runtime=1", "--time_based"],
    );
    let ids = imported_ids(&sb.run(&["import", file.to_str().unwrap()]));
    let target = sb.target();
    let native = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k",
        "--read",
        "100",
        "--random",
        "100",
        "--file-size",
        "8m",
        "--duration",
        "1s",
        "--backend",
        "psync",
    ]);
    assert_success(&native);
    let native_id = sb.last_run()["run"]["id"].as_i64().unwrap();
    let cmp = json_of(&sb.run(&["compare", &ids[0].to_string(), &native_id.to_string(), "--json"]));
    let c = &cmp["comparison"];
    assert_eq!(c["only_in_a"], serde_json::json!([]), "{c}");
    assert_eq!(c["only_in_b"], serde_json::json!([]), "{c}");
    // One cell's figure (and its %CPU row where both sides measured one).
    let figures = c["scalars"].as_array().unwrap().iter().filter(|s| !s["metric"].as_str().unwrap().ends_with(" %CPU"));
    assert_eq!(figures.count(), 1, "{c}");
    // What the fio file did not say is stated, not assumed equal.
    let differences = c["condition_differences"].to_string();
    assert!(differences.contains("files_vs_ram") && differences.contains("unknown"), "{differences}");
}

/// Runs bonnie++ on a small file in `dir`; returns its CSV output (stdout of -q).
fn bonnie(dir: &Path) -> String {
    let work = dir.join("bonnie-work");
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = Command::new("bonnie++");
    cmd.args(["-d", work.to_str().unwrap(), "-s", "16", "-r", "8", "-n", "1", "-q"]);
    if is_root() {
        cmd.args(["-u", "root"]);
    }
    let out = cmd.output().expect("run bonnie++");
    assert!(out.status.success(), "bonnie++ failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// bonnie++ 1.98 CSV columns (0-based) of each test's figure, by iomatrix's test name.
const BONNIE_COLUMNS: [(&str, usize, &str); 12] = [
    ("putc", 9, "KB/s"),
    ("write", 11, "KB/s"),
    ("rewrite", 13, "KB/s"),
    ("getc", 15, "KB/s"),
    ("read", 17, "KB/s"),
    ("seeks", 19, "seeks/s"),
    ("seq-create", 26, "files/s"),
    ("seq-stat", 28, "files/s"),
    ("seq-delete", 30, "files/s"),
    ("random-create", 32, "files/s"),
    ("random-stat", 34, "files/s"),
    ("random-delete", 36, "files/s"),
];

#[test]
fn bonnie_csv_becomes_a_bonnie_run_with_too_fast_tests_left_unmeasured() {
    if !have("bonnie++") {
        return skip("bonnie++ is not installed (Debian: apt-get install bonnie++)");
    }
    let sb = Sandbox::new();
    let csv = bonnie(sb.dir.path());
    let file = sb.dir.path().join("bonnie.csv");
    std::fs::write(&file, &csv).unwrap();
    let line = csv.lines().find(|l| l.starts_with("1.98,")).expect("a bonnie++ 1.98 CSV line");
    let fields: Vec<&str> = line.split(',').collect();

    let out = sb.run(&["import", file.to_str().unwrap(), "--bonnie-chunk", "8k"]);
    let ids = imported_ids(&out);
    assert_eq!(ids.len(), 1);
    let (summary, _) = text(&out);
    let run = sb.show_json(ids[0]);
    let r = &run["run"];
    assert_eq!(r["suite"], "bonnie");
    assert_eq!(r["host"], fields[2], "bonnie++'s machine name");
    assert_eq!(r["environment"]["host"], fields[2]);
    assert_eq!(r["labels"], serde_json::json!([["imported", "bonnie++"]]));
    assert_eq!(r["conditions"]["imported"]["version"], fields[1]);
    assert!(r["conditions"]["direct"].is_null() && r["conditions"]["backend"].is_null());
    let unmeasured: Vec<String> = r["conditions"]["imported"]["unmeasured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["test"].as_str().unwrap().to_string())
        .collect();
    let cells = cells(&run);
    let mut too_fast = 0;
    for (test, col, unit) in BONNIE_COLUMNS {
        let cell = cells.iter().find(|c| c["test"] == test);
        match fields[col] {
            "+++++" => {
                too_fast += 1;
                assert!(cell.is_none(), "{test}: +++++ must not become a figure: {cell:?}");
                assert!(unmeasured.contains(&test.to_string()), "{test} not listed as unmeasured: {unmeasured:?}");
                assert!(summary.contains(test), "{summary}");
            }
            "" => assert!(cell.is_none() && !unmeasured.contains(&test.to_string())),
            figure => {
                let c = cell.unwrap_or_else(|| panic!("{test}: no cell for {figure}"));
                let figure: f64 = figure.parse().unwrap();
                assert_eq!(c["metrics"]["per_sec"].as_f64(), Some(figure));
                assert_eq!(c["metrics"]["unit"], unit);
                assert_eq!(c["cpu_percent"].as_f64(), Some(fields[col + 1].parse().unwrap()));
                let kib = if unit == "KB/s" { figure } else { 0.0 };
                assert_eq!(c["kib_per_sec"].as_f64(), Some(kib));
                assert_eq!(c["file_size"], 16 << 20);
                assert_eq!(c["record_size"], 8192, "--bonnie-chunk");
                assert!(!unmeasured.contains(&test.to_string()));
                // The latency column (e.g. 10890us) as nanoseconds.
                let lat_col = 38 + BONNIE_COLUMNS.iter().position(|(t, _, _)| *t == test).unwrap();
                if let Some(lat) = fields.get(lat_col).and_then(|l| l.strip_suffix("us")) {
                    assert_eq!(c["metrics"]["max_latency_ns"].as_u64(), Some(lat.parse::<u64>().unwrap() * 1000));
                }
            }
        }
    }
    if too_fast > 0 {
        assert!(summary.contains("+++++"), "{summary}");
    }
    // `show` prints bonnie++'s own table, +++++ where bonnie++ printed it.
    let (shown, _) = text(&sb.run(&["show", &ids[0].to_string()]));
    assert!(shown.contains("-Per Chr- --Block-- -Rewrite-"), "{shown}");
    assert_eq!(shown.matches("+++++").count(), too_fast, "{shown}");
}

/// The real IOzone 3.471 output (`iozone -a -n 64k -g 1m -i 0 -i 1 -i 2 -e -c -R`), kept with the
/// report crate's tests (crates/report/tests/data/README.md says where it comes from).
fn iozone_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/report/tests/data/iozone-3.471-auto-64k-1m-tmpfs.txt")
}

#[test]
fn a_real_iozone_report_becomes_an_iozone_run() {
    let sb = Sandbox::new();
    let fixture = iozone_fixture();
    let ids = imported_ids(&sb.run(&["import", fixture.to_str().unwrap(), "--label", "fs=tmpfs"]));
    let run = sb.show_json(ids[0]);
    let r = &run["run"];
    assert_eq!(r["suite"], "iozone");
    assert_eq!(r["status"], "complete");
    assert_eq!(r["labels"], serde_json::json!([["fs", "tmpfs"], ["imported", "iozone"]]));
    let imported = &r["conditions"]["imported"];
    assert_eq!(imported["version"], "3.471");
    assert_eq!(imported["measured_at"], "Sun Nov 22 04:11:03 2026 (the machine's local time)");
    assert_eq!(r["plan"]["command_line"], "iozone -a -n 64k -g 1m -i 0 -i 1 -i 2 -e -c -R -f iozone.tmp");
    assert_eq!(r["conditions"]["fsync_timed"], true, "-e: \"Include fsync in write timing\"");
    assert_eq!(r["conditions"]["close_timed"], true, "-c");
    assert_eq!(r["conditions"]["direct"], false, "no \"O_DIRECT feature enabled\" line");
    assert!(r["conditions"]["backend"].is_null() && r["conditions"]["ram_bytes"].is_null());
    let cells = cells(&run);
    // Six tests (-i 0 -i 1 -i 2), files 64k..1m, records 4k up to the file: 35 pairs each.
    assert_eq!(cells.len(), 6 * 35);
    let kib = |test: &str, file_kib: u64, rec_kib: u64| -> f64 {
        let c = cells
            .iter()
            .find(|c| c["test"] == test && c["file_size"] == file_kib * 1024 && c["record_size"] == rec_kib * 1024)
            .unwrap_or_else(|| panic!("no {test} {file_kib}k/{rec_kib}k"));
        c["kib_per_sec"].as_f64().unwrap()
    };
    // Read off the file by hand.
    assert_eq!(kib("write", 64, 4), 524487.0);
    assert_eq!(kib("write", 1024, 1024), 2064088.0);
    assert_eq!(kib("rewrite", 1024, 1024), 6599461.0);
    assert_eq!(kib("read", 256, 128), 12812277.0);
    assert_eq!(kib("reread", 128, 32), 18012359.0);
    assert_eq!(kib("random-read", 256, 128), 3197509.0);
    assert_eq!(kib("random-write", 512, 64), 11374040.0);
    assert!(cells.iter().all(|c| c["record_size"].as_u64() <= c["file_size"].as_u64()));
    // `show` prints IOzone's matrices and, as the report has none, no CPU tables.
    let (shown, _) = text(&sb.run(&["show", &ids[0].to_string()]));
    assert!(shown.contains("Random write report (KB/s)"), "{shown}");
    assert!(shown.contains("  524487  1638743"), "{shown}");
    assert!(!shown.contains("CPU (%)"), "{shown}");
    assert!(shown.contains("imported: iozone 3.471"), "{shown}");
}

#[test]
fn several_files_in_one_command_with_a_json_summary() {
    let sb = Sandbox::new();
    let csv = sb.dir.path().join("old.csv");
    std::fs::write(
        &csv,
        "format_version,bonnie_version,name,concurrency,seed,file_size,chunk_size\n\
         1.97,1.97,box,1,99,1G,,,,90000,20,40000,10,,,120000,15,350.5,3,16,,,,,1500,90,+++++,+++,2000,80,1400,88,30000,99,1800,85\n",
    )
    .unwrap();
    let doc = json_of(&sb.run(&["import", iozone_fixture().to_str().unwrap(), csv.to_str().unwrap(), "--json"]));
    assert_eq!(doc["schema"], "iomatrix.import/1");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0]["suite"].as_str(), runs[0]["cells"].as_u64()), (Some("iozone"), Some(210)));
    assert_eq!((runs[1]["suite"].as_str(), runs[1]["cells"].as_u64()), (Some("bonnie"), Some(9)));
    assert_eq!(runs[1]["unmeasured"][0]["test"], "seq-stat");
    assert_eq!(runs[1]["host"], "box");
    let stored = sb.runs_json();
    assert_eq!(stored["runs"].as_array().unwrap().len(), 2);
    let seeks =
        cells(&sb.show_json(runs[1]["id"].as_i64().unwrap())).into_iter().find(|c| c["test"] == "seeks").unwrap();
    assert_eq!(seeks["metrics"]["per_sec"], 350.5);
    assert_eq!(seeks["kib_per_sec"], 0.0);
    // --format overrides recognition.
    let ids = imported_ids(&sb.run(&["import", "--format", "bonnie", csv.to_str().unwrap()]));
    assert_eq!(ids, [3]);
}

#[test]
fn bad_input_stores_nothing_and_exits_2() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let write = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let empty = write("empty.json", "");
    assert_usage_error(&sb.run(&["import", &empty]), "empty.json: the file is empty");

    let truncated =
        write("cut.json", "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n    {\n      \"jobname\" : \"t\",\n");
    let out = sb.run(&["import", &truncated]);
    assert_usage_error(&out, "cut.json: fio's JSON output");
    assert!(text(&out).1.contains("line 6") && text(&out).1.contains("truncated"), "{}", text(&out).1);

    let unknown = write("notes.txt", "hello, world\nnothing to see\n");
    let out = sb.run(&["import", &unknown]);
    assert_usage_error(&out, "not a format iomatrix can import");
    let (_, stderr) = text(&out);
    assert!(stderr.contains("fio") && stderr.contains("IOzone") && stderr.contains("bonnie++"), "{stderr}");
    assert!(stderr.contains("--format fio|iozone|bonnie"), "{stderr}");

    let csv = write(
        "bad.csv",
        "1.98,2.00a,vm,1,1,16M,,8192,5,3167,86,+++++,+++,+++++,+++,4312,x,+++++,+++,+++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++\n",
    );
    assert_usage_error(
        &sb.run(&["import", &csv]),
        "bad.csv: bonnie++'s CSV line (format 1.96, 1.97 or 1.98): line 1, column 17 (getc_cpu)",
    );

    // A good file before a bad one: nothing is stored.
    let out = sb.run(&["import", iozone_fixture().to_str().unwrap(), &truncated]);
    assert_usage_error(&out, "cut.json");
    assert_usage_error(&sb.run(&["import", "--format", "fio", iozone_fixture().to_str().unwrap()]), "no JSON object");
    assert_usage_error(&sb.run(&["import", "--format", "csv", &csv]), "--format csv");
    assert_usage_error(&sb.run(&["import", &csv, "--label", "imported=x"]), "sets this label itself");
    assert_usage_error(&sb.run(&["import", &dir.join("missing.json").to_string_lossy()]), "missing.json: cannot read");
    assert_eq!(sb.runs_json()["runs"], serde_json::json!([]), "nothing stored");
}

#[test]
fn the_original_bonnies_table_imports_a_run_per_row_and_shows_as_bonnies_table() {
    let sb = Sandbox::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/import/tests/data/bonnie-1.x-two-runs.txt");
    let out = sb.run(&["import", fixture.to_str().unwrap(), "--label", "disk=rdm"]);
    let ids = imported_ids(&out);
    assert_eq!(ids.len(), 2, "{}", text(&out).0);
    let run = sb.show_json(ids[0]);
    assert_eq!(run["run"]["suite"], "bonnie");
    let labels = run["run"]["labels"].to_string();
    assert!(labels.contains("[\"imported\",\"bonnie\"]") && labels.contains("[\"disk\",\"rdm\"]"), "{labels}");
    let cells = cells(&run);
    let figure =
        |test: &str| cells.iter().find(|c| c["test"] == test).map(|c| c["metrics"]["per_sec"].as_f64().unwrap());
    // The fixture's row: nss-rdm 1024 31853 97.2 61435 18.3 27145 9.4 29810 93.1 78236 10.2 412.3 3.1
    assert_eq!(figure("putc"), Some(31853.0));
    assert_eq!(figure("read"), Some(78236.0));
    assert_eq!(figure("seeks"), Some(412.3));
    let (shown, _) = text(&sb.run(&["show", &ids[0].to_string()]));
    assert!(shown.contains("------Sequential Output------"), "{shown}");
    let row = shown.lines().find(|l| l.starts_with("nss-rdm")).unwrap_or_else(|| panic!("{shown}"));
    assert!(row.contains("1G") && row.contains("31853") && row.contains("61435"), "{row}");
    // A row cut short is refused with its line, and nothing is stored.
    let bad = sb.dir.path().join("bad.txt");
    let cut = std::fs::read_to_string(&fixture).unwrap().replace(" 412.3  3.1", "");
    std::fs::write(&bad, cut).unwrap();
    assert_usage_error(&sb.run(&["import", bad.to_str().unwrap()]), "line 11: a row of Bonnie's table");
    assert_eq!(sb.runs_json()["runs"].as_array().map(Vec::len), Some(2));
}

#[test]
fn an_iometer_results_file_imports_an_access_cell_per_spec_and_shows() {
    let sb = Sandbox::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/import/tests/data/iometer-2006.07.27-results.csv");
    let ids = imported_ids(&sb.run(&["import", fixture.to_str().unwrap(), "--label", "cache=5"]));
    assert_eq!(ids.len(), 1);
    let run = sb.show_json(ids[0]);
    assert_eq!(run["run"]["suite"], "access");
    let cells = cells(&run);
    assert_eq!(cells.len(), 3, "one per access spec");
    // The fixture's ALL rows: 2K reads at 4.56 MBps, 2K writes at 0.95, 64K reads at 75.72; 16 outstanding.
    for (c, (mbps, read, bs)) in cells.iter().zip([(4.56, 100, 2048), (0.95, 0, 2048), (75.72, 100, 65536)]) {
        assert!(close(c["kib_per_sec"].as_f64().unwrap(), mbps * 1024.0), "{c}");
        assert_eq!(c["metrics"]["read_percent"], read);
        assert_eq!(c["record_size"], bs);
        assert_eq!(c["metrics"]["queue_depth"], 16);
    }
    let (shown, _) = text(&sb.run(&["show", &ids[0].to_string()]));
    assert!(shown.contains("iometer 2006.07.27 output"), "{shown}");
    assert!(shown.contains("4.6") && shown.contains("75.7"), "{shown}");
    // In MB/s as the seed's tables, the 2K read/write ratio is the file's 4.56 / 0.95.
    let imported = sb.run(&["import", fixture.to_str().unwrap(), "--label", "cache=4"]);
    assert_success(&imported);
    let out = sb.run(&["sweep", "cache=4", "cache=5", "--by", "cache", "--unit", "mbs", "--json"]);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &doc["sweep"]["read_write_by_block"][0];
    assert!(close(b["mean_ratio"].as_f64().unwrap(), 4.56 / 0.95), "{b}");
}

/// A fixture of real fio 3.33 JSON output (tests/fixtures/README.md says how each was made).
fn fio_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn fios_latency_target_and_steady_state_import_as_iomatrixs_own() {
    let sb = Sandbox::new();
    let target = fio_fixture("fio-3.33-latency-target-tmpfs.json");
    let steady = fio_fixture("fio-3.33-steadystate-tmpfs.json");
    let ids = imported_ids(&sb.run(&["import", target.to_str().unwrap(), steady.to_str().unwrap()]));
    assert_eq!(ids.len(), 2);
    let source = |file: &Path| -> Value { serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap() };

    // The latency target: fio's depth, target (ns), window (us) and percentile, as a native search stores them.
    let job = &source(&target)["jobs"][0];
    let run = sb.show_json(ids[0]);
    let found = &cells(&run)[0]["metrics"]["latency_target"][0];
    assert_eq!(found["depth"], job["latency_depth"], "{found}");
    assert_eq!(found["measured_depth"], job["latency_depth"]);
    assert_eq!(found["target"]["target_ns"], job["latency_target"]);
    assert_eq!(found["target"]["window_ns"].as_u64(), job["latency_window"].as_u64().map(|us| us * 1000));
    assert_eq!(found["target"]["percentile_hundredths"], 9900);
    let (shown, _) = text(&sb.run(&["show", &ids[0].to_string()]));
    let depth = job["latency_depth"].as_u64().unwrap();
    let line = shown.lines().find(|l| l.starts_with("latency target, ")).unwrap_or_else(|| panic!("{shown}"));
    println!("{line}");
    assert!(line.contains("p99 of each request's total latency") && line.contains("<= 100.0 us"), "{line}");
    assert!(line.contains(&format!(": depth {depth} (the depths judged are not recorded")), "{line}");

    // The steady state: the job that attained it and the one that did not, each with fio's window.
    let doc = source(&steady);
    let run = sb.show_json(ids[1]);
    let stored = cells(&run);
    assert_eq!(stored.len(), 2);
    for (c, job) in stored.iter().zip(doc["jobs"].as_array().unwrap()) {
        let (v, ss) = (&c["metrics"]["steady"], &job["steadystate"]);
        assert_eq!(v["attained"].as_bool(), Some(ss["attained"] == 1), "{v}");
        assert_eq!(v["window_samples"], ss["duration"]);
        let iops: Vec<&Value> = v["window"].as_array().unwrap().iter().map(|s| &s["iops"]).collect();
        assert_eq!(iops, ss["data"]["iops"].as_array().unwrap().iter().collect::<Vec<_>>());
        assert_eq!(v["mean"].as_f64(), ss["data"]["iops_mean"].as_f64());
        assert_eq!(v["slope"].as_f64().map(f64::abs), ss["slope"].as_f64().map(f64::abs));
        let criterion: f64 = ss["criterion"].as_str().unwrap().trim_end_matches('%').parse().unwrap();
        assert!((v["criterion"].as_f64().unwrap() - criterion.abs()).abs() < 1e-9, "{v}");
    }
    let (shown, _) = text(&sb.run(&["show", &ids[1].to_string()]));
    let lines: Vec<&str> = shown.lines().filter(|l| l.starts_with("steady state, ")).collect();
    println!("{}", lines.join("\n"));
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(lines[0].contains(": attained after 1.9 s (iops:20% over 2 s"), "{}", lines[0]);
    assert!(lines[0].contains("window 2001, 2001 IOPS"), "{}", lines[0]);
    assert!(lines[1].contains(": not attained (iops_slope:0.001% over 2 s"), "{}", lines[1]);
    assert!(lines[1].contains("slope per sample 2.09%"), "{}", lines[1]);
}
