//! Issue 33 for the classic suites: IOzone and Bonnie write their files and then measure them,
//! as their originals do, and say so (the run condition `prepare`) and how much of each cell's
//! files the page cache held when it began (`cached_at_start`, by mincore), on a real ext4 image.

use crate::helpers::*;
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The cells of `test`, in the order they ran.
fn of_test<'a>(cells: &'a [Value], test: &str) -> Vec<&'a Value> {
    cells.iter().filter(|c| c["test"] == test).collect()
}

/// A cell's stored `cached_at_start`: (cached bytes, file bytes); panics where it is absent.
fn cached(cell: &Value) -> (u64, u64) {
    let held = &cell["metrics"]["cached_at_start"];
    let bytes = |key: &str| held[key].as_u64().unwrap_or_else(|| panic!("no cached_at_start.{key} in {cell}"));
    (bytes("cached_bytes"), bytes("file_bytes"))
}

fn iozone(sb: &Sandbox, target: &std::path::Path, extra: &[&str]) -> Value {
    let t = target.to_str().unwrap();
    let mut args = vec!["run", "iozone", "--target", t, "--files", "8m", "--records", "64k", "--json"];
    args.extend_from_slice(extra);
    let out = sb.run(&args);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("--json is JSON")
}

fn prepare_condition(run: &Value) -> String {
    run["run"]["conditions"]["prepare"].as_str().unwrap_or_else(|| panic!("no prepare condition")).to_string()
}

#[test]
fn iozone_read_after_its_write_on_ext4_states_the_file_cached_and_the_write_starting_empty() {
    let Some(fs) = Mount::ext4(256) else { return };
    let sb = Sandbox::new();
    let run = iozone(&sb, &fs.point, &["--tests", "write,rewrite,read,reread,random-read", "--clients", "2"]);
    assert!(prepare_condition(&run).contains("written by the tests themselves"), "{}", run["run"]["conditions"]);
    let cells = cells(&run);
    assert_eq!(cells.len(), 5);
    // The write test's open creates each client's file anew: it starts from an empty file.
    assert_eq!(cached(of_test(&cells, "write")[0]), (0, 0));
    // Every later test meets both clients' 8 MiB files as the write left them: cached, on ext4 with RAM to spare.
    for test in ["rewrite", "read", "reread", "random-read"] {
        let (held, size) = cached(of_test(&cells, test)[0]);
        assert_eq!(size, 2 * 8 * MIB, "{test}: both clients' files, summed");
        assert!(held as f64 >= 0.9 * size as f64, "{test}: {held} of {size} cached after the write");
        // Each client's own look is stored too, and the cell's is their sum.
        let clients = of_test(&cells, test)[0]["client_figures"].as_array().unwrap().clone();
        let own: Vec<(u64, u64)> = clients.iter().map(|c| cached(&serde_json::json!({"metrics": c}))).collect();
        assert_eq!(own.len(), 2);
        assert_eq!(own.iter().map(|o| o.1).sum::<u64>(), size, "{test}");
        assert_eq!(own.iter().map(|o| o.0).sum::<u64>(), held, "{test}");
    }
    // show says it, a line per test, under the matrices; the conditions carry the prepare line.
    let id = run["run"]["id"].as_i64().unwrap();
    let (shown, _) = text(&sb.run(&["show", &id.to_string()]));
    assert!(shown.contains("\nprepared: written by the tests themselves"), "{shown}");
    let section = shown.split("Cached at start").nth(1).unwrap_or_else(|| panic!("no cached-at-start lines:\n{shown}"));
    let line = |test: &str| {
        section.lines().find(|l| l.split_whitespace().next() == Some(test)).unwrap_or_else(|| panic!("{section}"))
    };
    assert!(line("write").ends_with("empty: the test created its file"), "{section}");
    assert!(line("read").ends_with("% of the file"), "{section}");
}

#[test]
fn iozone_direct_cells_state_what_o_direct_left_in_the_cache() {
    let Some(fs) = Mount::ext4(256) else { return };
    let sb = Sandbox::new();
    // O_DIRECT writes the file past the cache (and evicts what they overwrite): the read finds little cached.
    let run = iozone(&sb, &fs.point, &["--tests", "write,read", "--direct"]);
    assert!(prepare_condition(&run).contains("O_DIRECT"), "{}", run["run"]["conditions"]);
    let cells = cells(&run);
    let (held, size) = cached(of_test(&cells, "read")[0]);
    assert_eq!(size, 8 * MIB);
    assert!((held as f64) < 0.1 * size as f64, "after O_DIRECT writes: {held} of {size} cached");
    // Without the write test the file is laid out buffered and fsynced: cached, whatever the reads
    // then do. The figure says what was there, not what --direct would suggest.
    let run = iozone(&sb, &fs.point, &["--tests", "read", "--direct"]);
    let (held, size) = cached(of_test(&crate::helpers::cells(&run), "read")[0]);
    assert_eq!(size, 8 * MIB);
    assert!(held as f64 >= 0.9 * size as f64, "after a buffered lay-out: {held} of {size} cached");
}

#[test]
fn bonnie_data_tests_on_ext4_state_the_file_cached_after_the_write() {
    let Some(fs) = Mount::ext4(256) else { return };
    let sb = Sandbox::new();
    let t = fs.point.to_str().unwrap();
    let base = ["run", "bonnie", "--target", t, "--size", "16m", "--ram", "8m", "--files", "1", "--json"];
    let out = sb.run(&base);
    assert_success(&out);
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(prepare_condition(&run).contains("as bonnie++ does"), "{}", run["run"]["conditions"]);
    let cells = cells(&run);
    for test in ["putc", "write"] {
        assert_eq!(cached(of_test(&cells, test)[0]), (0, 0), "{test} creates its file anew");
    }
    for test in ["rewrite", "getc", "read", "seeks"] {
        let cell = of_test(&cells, test)[0];
        let (held, size) = cached(cell);
        assert_eq!(size, 16 * MIB, "{test}");
        assert!(held as f64 >= 0.9 * size as f64, "{test}: {held} of {size} cached after the writes");
        // One client: its own figure is the cell's.
        assert_eq!(cell["client_figures"][0]["cached_at_start"], cell["metrics"]["cached_at_start"], "{test}");
    }
    // The file tests make their own small files: no one file to state.
    let file_tests: Vec<&Value> = cells
        .iter()
        .filter(|c| ["seq-", "random-"].iter().any(|p| c["test"].as_str().unwrap().starts_with(p)))
        .collect();
    assert_eq!(file_tests.len(), 6);
    for c in file_tests {
        assert!(c["metrics"]["cached_at_start"].is_null(), "{c}");
    }
    let id = run["run"]["id"].as_i64().unwrap();
    let (shown, _) = text(&sb.run(&["show", &id.to_string()]));
    assert!(shown.contains("\nprepared: written by the tests themselves, as bonnie++ does"), "{shown}");
    assert!(shown.contains("Cached at start"), "{shown}");
    let read = shown.lines().find(|l| l.starts_with("read ")).unwrap_or_else(|| panic!("{shown}"));
    assert!(read.ends_with(&format!("of {}", iomatrix_core::human::bytes_prose(16 * MIB))), "{read}");

    // --direct (bonnie++'s -D), per-char tests left out: the O_DIRECT writes leave the file uncached.
    let mut direct = base.to_vec();
    direct.extend(["--fast", "--direct"]);
    let out = sb.run(&direct);
    assert_success(&out);
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(prepare_condition(&run).contains("O_DIRECT"), "{}", run["run"]["conditions"]);
    let cells = crate::helpers::cells(&run);
    for test in ["rewrite", "read", "seeks"] {
        let (held, size) = cached(of_test(&cells, test)[0]);
        assert_eq!(size, 16 * MIB, "{test}");
        assert!((held as f64) < 0.1 * size as f64, "{test}: {held} of {size} cached after O_DIRECT writes");
    }
    assert!(leftovers(&fs.point).is_empty());
}

#[test]
fn on_a_server_no_cell_claims_a_cache_state_and_the_conditions_say_why() {
    let Some(lab) = crate::lab_fixture::Lab::shared(crate::lab_fixture::Shared::Unshaped) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let sb = Sandbox::new();
    let runs: [&[&str]; 2] = [
        &["run", "iozone", "--target", &nfs, "--files", "1m", "--records", "64k", "--tests", "write,read"],
        &["run", "bonnie", "--target", &nfs, "--size", "2m", "--chunk", "64k", "--file-count", "16", "--seeks", "50"],
    ];
    for args in runs {
        assert_success(&sb.run(args));
        let run = sb.last_run();
        assert!(prepare_condition(&run).ends_with("not recorded (a server's cache: not visible from the client)"));
        let stored = crate::helpers::cells(&run);
        assert!(!stored.is_empty());
        for cell in &stored {
            assert!(cell["metrics"].get("cached_at_start").is_none(), "{cell}");
        }
        let id = run["run"]["id"].as_i64().unwrap();
        let (shown, _) = text(&sb.run(&["show", &id.to_string()]));
        assert!(!shown.contains("Cached at start"), "{shown}");
    }
}

#[test]
fn iozone_f_naming_a_device_or_folder_is_refused_and_naming_the_database_leaves_it_whole() {
    let sb = Sandbox::new();
    let before_dev = leftovers(std::path::Path::new("/dev"));
    for (file, kind) in [("/dev/zero", "a character device"), ("/dev/null", "a character device")] {
        let out = sb.run(&["iozone", "-s", "64k", "-i", "0", "-i", "1", "-f", file]);
        assert_usage_error(&out, &format!("-f {file}: {kind}, not a file"));
    }
    let folder = sb.target();
    assert_usage_error(
        &sb.run(&["iozone", "-s", "64k", "-i", "0", "-f", folder.to_str().unwrap()]),
        "a folder, not a file",
    );
    assert_eq!(leftovers(std::path::Path::new("/dev")), before_dev, "nothing was made in /dev");
    assert!(!sb.db().exists(), "a refused run opened the results database");

    // -f naming the results database: the test file is made under that name in a working folder,
    // so the database keeps its runs, and the cells state the test file's cache, not the database's.
    let file = sb.target().join("iozone.tmp");
    assert_success(&sb.run(&["iozone", "-s", "64k", "-i", "0", "-f", file.to_str().unwrap()]));
    let first = sb.show_json(1);
    let db = sb.db();
    let out = sb.run(&["iozone", "-s", "64k", "-r", "4k", "-i", "0", "-i", "1", "-f", db.to_str().unwrap()]);
    assert_success(&out);
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), 2);
    assert_eq!(sb.show_json(1), first, "the first run reads back as it was stored");
    let second = sb.show_json(2);
    let read = crate::helpers::cells(&second).into_iter().find(|c| c["test"] == "read").unwrap();
    assert_eq!(cached(&read).1, 64 * 1024, "the test file's size, not the database's");
    assert!(leftovers(sb.dir.path()).is_empty());
}
