//! Every test of the suite, on every backend, moves what it was asked to and
//! gives a positive figure.
use crate::helpers::*;

const ALL_TESTS: &str = "write,rewrite,read,reread,random-read,random-write,backward-read,record-rewrite,stride-read,fwrite,frewrite,fread,freread,mixed";

fn check_every_cell(run: &serde_json::Value, clients: u64) {
    let cells = cells(run);
    assert_eq!(cells.len(), 2 * 2 * 14, "2 files x 2 records x 14 tests");
    for c in &cells {
        let file = c["file_size"].as_u64().unwrap();
        let record = c["record_size"].as_u64().unwrap();
        assert!(c["kib_per_sec"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["wall_ns"].as_u64().unwrap() > 0, "{c}");
        assert!(c["cpu_percent"].as_f64().unwrap() >= 0.0, "{c}");
        assert_eq!(c["bytes"].as_u64().unwrap(), file * clients, "bytes moved = file size per client: {c}");
        assert_eq!(c["ops"].as_u64().unwrap(), file / record * clients, "{c}");
        assert_eq!(c["clients"].as_u64().unwrap(), clients);
        assert_eq!(c["client_figures"].as_array().unwrap().len() as u64, clients);
    }
}

#[test]
fn every_test_on_every_backend_gives_a_positive_figure() {
    for backend in ["psync", "sync", "mmap", "stdio"] {
        let sb = Sandbox::new();
        sb.iozone_ok(&["--files", "64k,1m", "--records", "4k,64k", "--tests", ALL_TESTS, "--backend", backend]);
        let run = sb.last_run();
        check_every_cell(&run, 1);
        assert_eq!(run["run"]["conditions"]["backend"], backend);
        let stdio_cells = cells(&run).into_iter().filter(|c| c["backend"] == "stdio").count();
        assert!(stdio_cells >= 2 * 2 * 4, "fwrite/frewrite/fread/freread are stdio");
        assert!(sb.leftovers().is_empty(), "working folder removed: {:?}", sb.leftovers());
    }
}

#[test]
fn clients_each_get_a_file_and_the_aggregate_is_their_sum() {
    let sb = Sandbox::new();
    sb.iozone_ok(&["--files", "64k,1m", "--records", "4k,64k", "--tests", ALL_TESTS, "--clients", "3", "--keep"]);
    let run = sb.last_run();
    check_every_cell(&run, 3);
    for c in cells(&run) {
        let per_client: f64 = c["client_figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let bytes = f["moved"]["bytes"].as_f64().unwrap();
                let wall =
                    (f["measured"]["end_ns"].as_u64().unwrap() - f["measured"]["start_ns"].as_u64().unwrap()) as f64;
                bytes / 1024.0 / (wall / 1e9)
            })
            .sum();
        let reported = c["kib_per_sec"].as_f64().unwrap();
        assert!((per_client - reported).abs() <= reported * 1e-9 + 1e-6, "{per_client} vs {reported}");
    }
    // --keep leaves the working folder: one folder per client, each with its own files.
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1);
    for rank in 0..3 {
        assert!(kept[0].join(format!("client-{rank}")).is_dir());
    }
}

#[test]
fn direct_io_runs_where_the_file_system_allows_it() {
    let sb = Sandbox::new();
    let probe = sb.target().join("probe");
    let direct_ok = std::fs::OpenOptions::new().write(true).create(true).custom_flags_direct().open(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    if !direct_ok {
        return skip(format!("{} refuses O_DIRECT", sb.target().display()));
    }
    sb.iozone_ok(&[
        "--files",
        "1m",
        "--records",
        "4k,64k",
        "--tests",
        "write,read,random-read,fread",
        "--direct",
        "--fsync",
    ]);
    let run = sb.last_run();
    for c in cells(&run) {
        let is_stdio = c["test"].as_str().unwrap().starts_with('f');
        assert_eq!(c["direct"].as_bool().unwrap(), !is_stdio, "fread stays buffered and says so: {c}");
        assert!(c["kib_per_sec"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(run["run"]["conditions"]["direct"], true);
}

trait DirectFlag {
    fn custom_flags_direct(&mut self) -> &mut Self;
}
impl DirectFlag for std::fs::OpenOptions {
    fn custom_flags_direct(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_DIRECT)
    }
}

#[test]
fn tables_show_conditions_and_every_test() {
    let sb = Sandbox::new();
    let out = sb.iozone_ok(&["--files", "64k,128k", "--records", "4k..64k", "--label", "server=netware"]);
    let (stdout, stderr) = text(&out);
    for needle in
        ["backend: psync", "cache: page cache in use", "clients: 1", "file size vs RAM", "labels: server=netware"]
    {
        assert!(stdout.contains(needle), "missing '{needle}' in:\n{stdout}");
    }
    for title in ["Writer report (KB/s)", "Re-writer report", "Stride read report", "Re-Fread report", "Writer CPU (%)"]
    {
        assert!(stdout.contains(title), "missing '{title}'");
    }
    assert!(!stdout.contains("Mixed workload"), "mixed is not a default test");
    assert!(stderr.contains("fit in this machine's RAM"), "cache warning expected:\n{stderr}");
    // Not a terminal: plain progress lines.
    assert!(stderr.contains("[1/130]"), "{stderr}");
}
