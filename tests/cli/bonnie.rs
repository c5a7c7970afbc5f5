//! Bonnie through both front ends: bonnie++'s flags and `run bonnie`.
use crate::helpers::*;
use serde_json::Value;

fn by_test<'a>(cells: &'a [Value], test: &str) -> Vec<&'a Value> {
    cells.iter().filter(|c| c["test"] == test).collect()
}

#[test]
fn bonnie_flags_run_every_test_and_print_bonnies_report() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out =
        sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "32", "-r", "16", "-n", "1", "-x", "2", "-m", "vmfs"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("------Sequential Output------"), "{stdout}");
    assert!(stdout.contains("vmfs") || stdout.contains("Machine"), "{stdout}");
    assert!(stdout.contains("per-char: bonnie++"), "bonnie++'s per-char tests under its flags: {stdout}");
    // As bonnie++ -x 2: its CSV heading and one line per run after the tables.
    let lines: Vec<&str> = before_summary(&stdout).lines().collect();
    assert!(lines[lines.len() - 3].starts_with("format_version,bonnie_version,name,"), "{stdout}");
    for line in &lines[lines.len() - 2..] {
        assert!(line.starts_with("1.98,iomatrix-") && line.contains(",vmfs,1,"), "{line}");
        assert_eq!(line.split(',').count(), 50, "{line}");
    }
    let run = sb.last_run();
    assert_eq!(run["run"]["suite"], "bonnie");
    let cells = cells(&run);
    assert_eq!(cells.len(), 12 * 2, "12 tests, twice");
    for c in &cells {
        assert!(c["metrics"]["per_sec"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["wall_ns"].as_u64().unwrap() > 0);
    }
    // bonnie++ 2.00a's per-char tests: one system call per byte over the first 3 MiB; the
    // block tests move the file.
    for test in ["putc", "getc"] {
        for c in by_test(&cells, test) {
            assert_eq!(c["ops"], 3u64 << 20, "{test}: one call per byte");
            assert_eq!(c["bytes"], 3u64 << 20, "{test}");
        }
    }
    assert!(run["run"]["conditions"]["per_char"].as_str().unwrap().starts_with("bonnie++: one write(2)/read(2)"));
    for test in ["write", "read", "rewrite"] {
        for c in by_test(&cells, test) {
            assert_eq!(c["bytes"], 32u64 << 20, "{test}");
        }
    }
    for c in by_test(&cells, "seeks") {
        assert_eq!(c["ops"], 8192);
        assert_eq!(c["metrics"]["writes"], 8192 / 10 + 1, "one seek in ten writes back (tickets 0, 10, ...)");
    }
    for c in by_test(&cells, "seq-create").into_iter().chain(by_test(&cells, "random-delete")) {
        assert_eq!(c["ops"], 1024);
    }
    assert_eq!(run["run"]["labels"], serde_json::json!([["machine", "vmfs"]]));
    assert!(sb.leftovers().is_empty());
    // `show` prints the same report again from the store.
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    assert!(text(&sb.run(&["show", &id])).0.contains("------Sequential Output------"));
}

#[test]
fn a_file_below_twice_the_ram_is_refused_with_the_reason() {
    let sb = Sandbox::new();
    let target = sb.target();
    // Seed 002's line as given: 1 GiB on a machine with more than 512 MiB of RAM.
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "1024"]);
    assert_usage_error(&out, "less than twice the RAM");
    let out = sb.run(&["run", "bonnie", "--target", target.to_str().unwrap(), "--size", "1g"]);
    assert_usage_error(&out, "page cache would serve the reads");
    assert_usage_error(&sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "64", "-Q"]), "'-Q'");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn run_bonnie_fast_on_loop_mounted_ext4_and_xfs() {
    for fstype in ["ext4", "xfs"] {
        let Some(fs) = Mount::image(fstype, 300) else { continue };
        let sb = Sandbox::new();
        let out = sb.run(&[
            "run",
            "bonnie",
            "--target",
            fs.point.to_str().unwrap(),
            "--size",
            "64m",
            "--ram",
            "32m",
            "--files",
            "1",
            "--fast",
            "--direct",
            "--json",
        ]);
        assert_success(&out);
        let run: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(run["run"]["environment"]["target"]["fs_type"], fstype);
        let cells = cells(&run);
        let tests: Vec<&str> = cells.iter().map(|c| c["test"].as_str().unwrap()).collect();
        assert!(!tests.contains(&"putc") && !tests.contains(&"getc"), "--fast skips per-char: {tests:?}");
        assert_eq!(cells.len(), 10);
        assert!(cells.iter().all(|c| c["metrics"]["per_sec"].as_f64().unwrap() > 0.0));
        assert!(by_test(&cells, "write")[0]["direct"].as_bool().unwrap());
        assert!(!by_test(&cells, "seq-create")[0]["direct"].as_bool().unwrap());
        assert!(leftovers(&fs.point).is_empty());
    }
}

#[test]
fn run_bonnie_from_three_clients_starts_every_test_together() {
    // tmpfs where we may mount it, else the system's temporary folder.
    let tmpfs = Mount::try_virtual_fs("tmpfs", "size=128m").ok();
    let sb = Sandbox::new();
    let target = tmpfs.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let t = target.to_str().unwrap();
    let args =
        ["run", "bonnie", "--target", t, "--size", "4m", "--ram", "2m", "--files", "1", "--clients", "3", "--keep"];
    assert_success(&sb.run(&args));
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], 3);
    let cells = cells(&run);
    assert_eq!(cells.len(), 12);
    for c in &cells {
        crate::clients::assert_barrier_held(c, 3);
        let figures = c["client_figures"].as_array().unwrap();
        assert_eq!(figures.len(), 3);
        let sum = |key: &str| figures.iter().map(|f| f[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(c["ops"].as_u64(), Some(sum("ops")), "{}", c["test"]);
        assert_eq!(c["bytes"].as_u64(), Some(sum("bytes")), "{}", c["test"]);
        let rates: f64 = figures.iter().map(|f| f["per_sec"].as_f64().unwrap()).sum();
        let m = &c["metrics"];
        assert!((m["per_sec"].as_f64().unwrap() - rates).abs() <= 1e-9 * rates && rates > 0.0, "{m}");
        assert_eq!(m["per_sec_sum_of_clients"], m["per_sec"]);
        // Overall: all work over the common start to the last client's end, never above the sum.
        let last_end = figures.iter().map(|f| f["end_ns"].as_u64().unwrap()).max().unwrap();
        assert_eq!(c["wall_ns"].as_u64(), Some(last_end));
        assert!(m["per_sec_overall"].as_f64().unwrap() <= rates * 1.000001, "{m}");
    }
    for c in by_test(&cells, "write") {
        assert_eq!(c["bytes"].as_u64(), Some(3 * (4 << 20)), "three files of 4 MiB");
    }
    // Each client worked in its own folder (kept, and emptied by its last tests).
    let workdir = leftovers(&target).pop().expect("kept working folder");
    for rank in 0..3 {
        assert!(workdir.join(format!("client-{rank}")).is_dir());
    }
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let (stdout, _) = text(&sb.run(&["show", &id]));
    assert!(stdout.contains("sum of the clients' own rates") && stdout.contains("slowest client"), "{stdout}");
    std::fs::remove_dir_all(workdir).unwrap();
}

#[test]
fn a_failing_bonnie_client_is_counted_and_the_others_go_on() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let hook = "if [ \"$IOMATRIX_RANK\" = 1 ]; then mkdir bonnie.dat; fi";
    let args =
        ["run", "bonnie", "--target", t, "--size", "2m", "--ram", "1m", "--files", "0", "--fast", "--clients", "2"];
    let out = sb.run(&[&args[..], &["--before", hook, "--on-client-error", "continue"]].concat());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    assert!(text(&out).1.contains("Is a directory"), "{}", text(&out).1);
    let run = sb.last_run();
    let cells = cells(&run);
    assert_eq!(cells.len(), 4, "block write, rewrite, block read, seeks");
    for c in &cells {
        assert_eq!(c["client_figures"].as_array().unwrap().len(), 1);
        assert_eq!(c["metrics"]["failed_clients"][0]["rank"], 1);
    }
    // Abort (the default) ends the run at the first failure.
    let out = sb.run(&[&args[..], &["--before", hook]].concat());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
    assert!(sb.leftovers().is_empty());
}

/// The `bonnie++` line in everyone's scripts, as root: `-u root` changes nothing, `-q` leaves
/// standard output to bonnie++'s CSV line alone, which bon_csv2html and `iomatrix import` read.
#[test]
fn bonnie_as_root_with_u_root_q_prints_the_csv_line_alone() {
    if !is_root() {
        return skip("-u root is bonnie++'s line for root: the test runs as root");
    }
    if !have("bon_csv2html") {
        return skip("bon_csv2html (Debian's bonnie++ package) is not installed");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "512", "-r", "256", "-u", "root", "-q"]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    // Exactly one line: bonnie++'s 50 fields.
    assert_eq!(stdout.lines().count(), 1, "stdout:\n{stdout}");
    assert!(stdout.ends_with('\n'));
    let fields: Vec<&str> = stdout.trim_end().split(',').collect();
    assert_eq!(fields.len(), 50, "{stdout}");
    // bonnie++ 2.00a's seek test: 8192 seeks by 5 seeker threads (fields 7 and 8).
    assert_eq!((fields[0], fields[5], fields[6], fields[7], fields[8]), ("1.98", "512M", "", "8192", "5"), "{stdout}");
    assert!(fields[1].starts_with("iomatrix-") && !fields[1].contains("per-char"), "{stdout}");
    assert_eq!((fields[3], fields[21]), ("1", "16"), "one copy, bonnie++'s default -n 16");
    // The tables, and nothing per cell, on standard error.
    assert!(stderr.contains("per-char: bonnie++") && stderr.contains("-Per Chr-"), "{stderr}");
    assert!(!stderr.contains("[1/12]"), "no progress lines under -q: {stderr}");
    assert!(sb.leftovers().is_empty());

    // bonnie++'s own HTML converter reads it (it says "Can't process" for a line it cannot).
    let csv = sb.dir.path().join("out.csv");
    std::fs::write(&csv, &out.stdout).unwrap();
    let html = std::process::Command::new("bon_csv2html").stdin(std::fs::File::open(&csv).unwrap()).output().unwrap();
    let (page, complaints) = text(&html);
    assert!(html.status.success() && complaints.is_empty(), "{complaints}");
    let row = format!("<font size=+1>{}</td><td class=\"size\" bgcolor=\"#FFFFFF\">512M</td>", fields[2]);
    assert!(page.contains(&row), "{page}");

    // iomatrix's importer reads it back: the figures bonnie++'s line can hold, as measured.
    let native = sb.last_run();
    let imported = sb.run(&["import", csv.to_str().unwrap(), "--json"]);
    assert_success(&imported);
    let doc: Value = serde_json::from_slice(&imported.stdout).unwrap();
    let id = doc["runs"][0]["id"].as_i64().unwrap();
    assert_eq!(doc["runs"][0]["suite"], "bonnie");
    let back = sb.show_json(id);
    assert_eq!(back["run"]["plan"]["per_char"], "bonnie++");
    assert_eq!(back["run"]["plan"]["chunk"], 8192);
    let back_cells = cells(&back);
    let unmeasured = &back["run"]["conditions"]["imported"]["unmeasured"];
    for c in cells(&native) {
        let test = c["test"].as_str().unwrap();
        let (per_sec, cpu) = (c["metrics"]["per_sec"].as_f64().unwrap(), c["cpu_percent"].as_f64().unwrap());
        if c["wall_ns"].as_u64().unwrap() < 500_000_000 {
            assert!(unmeasured.as_array().unwrap().iter().any(|u| u["test"] == test), "{test}: +++++ in the line");
            continue;
        }
        let b = by_test(&back_cells, test);
        assert_eq!(b.len(), 1, "{test} imported once");
        let figure = b[0]["metrics"]["per_sec"].as_f64().unwrap();
        if test == "seeks" {
            let places = if per_sec >= 1000.0 { 1.0 } else { 10.0 };
            assert_eq!(figure, (per_sec * places).round() / places, "{test}");
        } else {
            assert_eq!(figure, per_sec.trunc(), "{test}: bonnie++ truncates to whole numbers");
        }
        assert_eq!(b[0]["cpu_percent"].as_f64().unwrap(), cpu.trunc(), "{test} %CPU");
        // The slowest operation, as bonnie++ writes it: whole us below 0.1 s, whole ms below 100 s.
        let slowest = c["metrics"]["max_latency_ns"].as_u64().unwrap();
        assert!(slowest > 0, "{test}: its slowest operation is timed");
        let unit = if slowest >= 100_000_000 { 1_000_000 } else { 1_000 };
        assert_eq!(b[0]["metrics"]["max_latency_ns"].as_u64().unwrap(), slowest / unit * unit, "{test} latency");
        assert_eq!(b[0]["file_size"], 512u64 << 20);
    }
    assert!(by_test(&back_cells, "putc").len() == 1, "the per-char tests take seconds: measured");
}

/// As root, `-u 65534` does the I/O as nobody in a folder nobody owns, with the results
/// database where nobody may not write (opened before the switch); a folder nobody cannot
/// write in is refused before any file is made, and a user who is not root cannot switch.
#[test]
fn bonnie_u_switches_user_before_the_first_file() {
    use std::os::unix::fs::{chown, PermissionsExt};
    use std::os::unix::process::CommandExt;
    if !is_root() {
        return skip("switching users with -u needs root");
    }
    let sb = Sandbox::new();
    // nobody may pass through the sandbox (not list or write it: the database stays root's).
    std::fs::set_permissions(sb.dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let target = sb.target();
    chown(&target, Some(65534), Some(65534)).unwrap();
    let t = target.to_str().unwrap();
    // -f1: 1 MiB per-char, not bonnie++'s 3 (4 million system calls fewer): each test still runs as nobody.
    let out = sb.run(&["bonnie", "-d", t, "-s", "4", "-r", "0", "-n", "1", "-f1", "-u", "65534"]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    assert!(stderr.contains("doing the I/O as user nobody (uid 65534, gid 65534)"), "{stderr}");
    assert!(before_summary(&stdout).lines().last().unwrap().starts_with("1.98,iomatrix-"), "{stdout}");
    let run = sb.last_run();
    assert_eq!(run["run"]["status"], "complete");
    assert_eq!(run["run"]["conditions"]["io_user"], "uid 65534, gid 65534 (-u/-g: switched before the first file)");
    assert_eq!(cells(&run).len(), 12);
    assert!(sb.leftovers().is_empty(), "nobody removed its working folder");

    // Root may write anywhere; nobody may not: a refusal here shows the check ran as nobody.
    let root_owned = sb.dir.path().join("root-owned");
    std::fs::create_dir(&root_owned).unwrap();
    std::fs::set_permissions(&root_owned, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = sb.run(&["bonnie", "-d", root_owned.to_str().unwrap(), "-s", "4", "-r", "0", "-n", "1", "-u", "nobody"]);
    assert_usage_error(&out, "cannot make files in");
    assert_eq!(std::fs::read_dir(&root_owned).unwrap().count(), 0, "nothing made");
    assert_eq!(sb.runs_json()["runs"].as_array().unwrap().len(), 1, "no run stored");

    // Not root: -u root is refused, as bonnie++ refuses it ("Can't set gid to 0.").
    let out = sb
        .cmd()
        .args(["bonnie", "-d", t, "-s", "4", "-r", "0", "-n", "1", "-u", "root"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert_usage_error(&out, "only root can switch to another user");
    assert_usage_error(&sb.run(&["bonnie", "-d", t, "-s", "4", "-r", "0", "-u", "no-such-user"]), "no such user");
}

/// `run bonnie` keeps Bonnie's per-char tests unless asked; both front ends take --per-char.
#[test]
fn per_char_style_is_a_flag_on_both_front_ends() {
    let sb = Sandbox::new();
    let t = sb.target();
    let t = t.to_str().unwrap();
    let base = ["run", "bonnie", "--target", t, "--size", "1m", "--ram", "0", "--files", "0"];
    let out = sb.run(&base);
    assert_success(&out);
    assert!(text(&out).0.contains("per-char: bonnie "), "{}", text(&out).0);
    let run = sb.last_run();
    assert_eq!(run["run"]["plan"]["per_char"], "bonnie");
    assert!(run["run"]["conditions"]["per_char"].as_str().unwrap().starts_with("bonnie: putc/getc"));
    let out = sb.run(&[&base[..], &["--per-char", "bonnie++", "--per-char-size", "512k"]].concat());
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["plan"]["per_char"], "bonnie++");
    assert_eq!(by_test(&cells(&run), "putc")[0]["ops"], 512 * 1024);
    let out = sb.run(&["bonnie", "-d", t, "-s", "1", "-r", "0", "-n", "0", "--per-char", "bonnie", "-q"]);
    assert_success(&out);
    let line = text(&out).0;
    assert!(
        line.starts_with("1.98,iomatrix-") && line.split(',').nth(1).unwrap().ends_with("+per-char-bonnie"),
        "{line}"
    );
    assert_eq!(sb.last_run()["run"]["plan"]["per_char"], "bonnie");
    assert_usage_error(&sb.run(&[&base[..], &["--per-char", "fast"]].concat()), "--per-char");
}

#[test]
fn seed_002_flags_as_typed_with_m_in_the_machine_column_and_iomatrix_flags_beside() {
    let sb = Sandbox::new();
    let t = sb.target();
    let other_db = sb.dir.path().join("other.sqlite");
    // Seed 002: `Bonnie -d [path] -s 1024 -v 3`, scaled down; -m NAME and iomatrix's --label/--db.
    let args = ["bonnie", "-d", t.to_str().unwrap(), "-s", "1", "-r", "0", "-n", "0", "-v", "3", "-m", "NSS-RDM"];
    let mut all = args.to_vec();
    all.extend(["--label", "disk=rdm", "--db", other_db.to_str().unwrap()]);
    let out = sb.run(&all);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    assert!(stderr.contains("-v 3 ignored"), "{stderr}");
    let row = stdout.lines().find(|l| l.starts_with("NSS-RDM")).unwrap_or_else(|| panic!("Machine column: {stdout}"));
    assert!(row.contains("1M"), "{row}");
    assert!(stdout.lines().any(|l| l.starts_with("1.98,iomatrix-") && l.contains(",NSS-RDM,")), "{stdout}");
    // Stored in the database --db named, not the sandbox's, with both labels; show keeps the name.
    assert!(!sb.db().exists(), "nothing goes to IOMATRIX_DB when --db is typed");
    let show = sb.cmd().env("IOMATRIX_DB", &other_db).args(["show", "1"]).output().unwrap();
    assert_success(&show);
    assert!(text(&show).0.lines().any(|l| l.starts_with("NSS-RDM")), "{}", text(&show).0);
    let json = sb.cmd().env("IOMATRIX_DB", &other_db).args(["show", "1", "--json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["run"]["labels"], serde_json::json!([["disk", "rdm"], ["machine", "NSS-RDM"]]));
    // --json: one JSON document, no CSV line after it.
    let mut all = args.to_vec();
    all.push("--json");
    let out = sb.run(&all);
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON alone");
    assert_eq!(doc["run"]["suite"], "bonnie");
    assert_usage_error(&sb.run(&["bonnie", "-d", t.to_str().unwrap(), "-s", "1", "--label", "nokey"]), "KEY=VALUE");
}

#[test]
fn bonnie_d_missing_names_dash_d_not_target() {
    let sb = Sandbox::new();
    let missing = sb.target().join("missing");
    let out = sb.run(&["bonnie", "-d", missing.to_str().unwrap(), "-s", "32", "-n", "0"]);
    assert_usage_error(&out, "-d ");
    let (_, stderr) = text(&out);
    assert!(!stderr.contains("--target"), "the user typed -d, not --target: {stderr}");
    assert!(stderr.contains("give -d an existing folder"), "{stderr}");
    // A file where the folder should be: the same flag named.
    let file = sb.target().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let out = sb.run(&["bonnie", "-d", file.to_str().unwrap(), "-s", "32", "-n", "0"]);
    assert_usage_error(&out, "is not a folder; give -d");
}
