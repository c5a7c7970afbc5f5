//! compare leads somewhere (issue 32): where the sides' cells differ in one swept parameter only it
//! names the sweep that compares them, and that command runs; imported fio and bonnie++ runs line
//! up with native runs of the same work, plan field by plan field; what one side does not know is
//! counted in one line, and `--all` lists it.

use crate::helpers::*;
use crate::stored::json_of;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A tmpfs for the runs' files, or the sandbox's own folder where it may not mount one.
fn place(sb: &Sandbox) -> (Option<Mount>, String) {
    match Mount::try_virtual_fs("tmpfs", "size=256m") {
        Ok(m) => {
            let at = m.point.to_str().unwrap().to_string();
            (Some(m), at)
        }
        Err(_) => (None, sb.target().to_str().unwrap().to_string()),
    }
}

/// `run access` on `target` with `args`; the stored run's id.
fn access(sb: &Sandbox, target: &str, args: &[&str]) -> i64 {
    let mut all = vec!["run", "access", "--target", target, "--file-size", "8m", "--backend", "io_uring"];
    all.extend_from_slice(args);
    assert_success(&sb.run(&all));
    sb.last_run()["run"]["id"].as_i64().unwrap()
}

fn compare_json(sb: &Sandbox, a: i64, b: i64) -> Value {
    json_of(&sb.run(&["compare", &a.to_string(), &b.to_string(), "--json"]))["comparison"].clone()
}

fn compare_text(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.run(&[&["compare"], args].concat());
    assert_success(&out);
    text(&out).0
}

/// Runs the command a hint printed (its `iomatrix` is this build) in the sandbox; its output.
fn run_hint(sb: &Sandbox, command: &str) -> std::process::Output {
    let words = shell_words::split(command).expect("the hint is a shell command line");
    assert_eq!(words[0], "iomatrix", "{command}");
    sb.cmd().args(&words[1..]).output().expect("run the hint's command")
}

#[test]
fn compare_of_qd1_against_qd32_names_the_sweep_by_qd_and_that_sweep_runs() {
    let sb = Sandbox::new();
    let (_mount, target) = place(&sb);
    let common = ["--bs", "4k", "--read", "100", "--random", "100", "--duration", "200ms"];
    let qd1 = access(&sb, &target, &[&common[..], &["--qd", "1"]].concat());
    let qd32 = access(&sb, &target, &[&common[..], &["--qd", "32"]].concat());

    let c = compare_json(&sb, qd1, qd32);
    let hint = &c["sweep_hint"];
    assert_eq!(hint["by"], "qd", "{c}");
    assert_eq!(
        (hint["a_levels"].clone(), hint["b_levels"].clone()),
        (serde_json::json!(["1"]), serde_json::json!(["32"]))
    );
    assert_eq!(hint["also_differ"], serde_json::json!([]), "nothing but the depth differs: {c}");
    let command = hint["command"].as_str().unwrap();
    assert!(command.starts_with(&format!("iomatrix sweep {qd1} {qd32} --by qd")), "{command}");

    let stdout = compare_text(&sb, &[&qd1.to_string(), &qd32.to_string()]);
    assert!(stdout.contains("the sides' cells differ in queue depth only (A: 1; B: 32)"), "{stdout}");
    assert!(stdout.contains(&format!("\n  {command}\n")), "the text prints the same command: {stdout}");

    let sweep = run_hint(&sb, command);
    assert_success(&sweep);
    let (swept, _) = text(&sweep);
    assert!(swept.starts_with("sweep by qd") && swept.contains("access 8m/4k read=100% random=100%"), "{swept}");

    // A second parameter: block size 4k against 64k at one depth is a sweep by record.
    let bs64 =
        access(&sb, &target, &["--bs", "64k", "--read", "100", "--random", "100", "--duration", "200ms", "--qd", "1"]);
    let c = compare_json(&sb, qd1, bs64);
    assert_eq!(c["sweep_hint"]["by"], "record", "{c}");
    assert_eq!(c["sweep_hint"]["b_levels"], serde_json::json!(["64k"]));
    let sweep = run_hint(&sb, c["sweep_hint"]["command"].as_str().unwrap());
    assert_success(&sweep);
    assert!(text(&sweep).0.starts_with("sweep by record"));

    // A third: reads against writes at one depth and block size is a sweep by read share.
    let writes =
        access(&sb, &target, &["--bs", "4k", "--read", "0", "--random", "100", "--duration", "200ms", "--qd", "1"]);
    let c = compare_json(&sb, qd1, writes);
    assert_eq!(c["sweep_hint"]["by"], "read", "{c}");
    assert_eq!(
        (c["sweep_hint"]["a_levels"].clone(), c["sweep_hint"]["b_levels"].clone()),
        (serde_json::json!(["100%"]), serde_json::json!(["0%"]))
    );
    let sweep = run_hint(&sb, c["sweep_hint"]["command"].as_str().unwrap());
    assert_success(&sweep);
    let (swept, _) = text(&sweep);
    assert!(swept.starts_with("sweep by read") && swept.contains("access 8m/4k qd=1 random=100%"), "{swept}");
}

#[test]
fn a_sweep_hint_only_where_one_parameter_differs_also_with_several_levels_a_side() {
    let sb = Sandbox::new();
    let (_mount, target) = place(&sb);
    let mix = ["--bs", "4k,64k", "--read", "100", "--random", "100", "--duration", "100ms"];
    let shallow = access(&sb, &target, &[&mix[..], &["--qd", "1,2"]].concat());
    let deep = access(&sb, &target, &[&mix[..], &["--qd", "16,32"]].concat());
    let c = compare_json(&sb, shallow, deep);
    let hint = &c["sweep_hint"];
    assert_eq!(hint["by"], "qd", "{c}");
    assert_eq!(hint["a_levels"], serde_json::json!(["1", "2"]));
    assert_eq!(hint["b_levels"], serde_json::json!(["16", "32"]));
    let sweep = run_hint(&sb, hint["command"].as_str().unwrap());
    assert_success(&sweep);
    let (swept, _) = text(&sweep);
    for level in ["1", "2", "16", "32"] {
        assert!(swept.lines().nth(1).unwrap().split_whitespace().any(|w| w == level), "level {level}: {swept}");
    }

    // No cell in common and three parameters apart (block size, depth, read share): no hint,
    // in the JSON or the text.
    let other =
        access(&sb, &target, &["--bs", "16k", "--read", "0", "--random", "100", "--qd", "8", "--duration", "100ms"]);
    let c = compare_json(&sb, shallow, other);
    assert!(c["sweep_hint"].is_null(), "{c}");
    assert_eq!(c["only_in_b"].as_array().unwrap().len(), 1);
    let stdout = compare_text(&sb, &[&shallow.to_string(), &other.to_string()]);
    assert!(!stdout.contains("iomatrix sweep") && !stdout.contains("differ in"), "{stdout}");
}

/// fio's JSON of `args` on a file in `dir`.
fn fio(dir: &Path, args: &[&str]) -> std::path::PathBuf {
    let output = dir.join("fio.json");
    let out = Command::new("fio")
        .arg("--name=same")
        .arg(format!("--filename={}", dir.join("fio.dat").display()))
        .args(args)
        .arg("--output-format=json")
        .arg(format!("--output={}", output.display()))
        .output()
        .expect("run fio");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    output
}

fn imported_id(out: &std::process::Output) -> i64 {
    assert_success(out);
    let (stdout, _) = text(out);
    let line = stdout.lines().find_map(|l| l.strip_prefix("imported run #")).expect("an imported run");
    line.split(':').next().unwrap().parse().unwrap()
}

/// The native plan fields a fio job states: an import that left one out would list it as
/// unknown on the fio side.
const FIELDS_FIO_STATES: [&str; 10] = [
    "block_sizes",
    "queue_depths",
    "read_percents",
    "random_percents",
    "file_size",
    "clients",
    "direct",
    "backend",
    "limit.duration_ms",
    "rate_iops",
];

#[test]
fn an_imported_fio_run_compares_cell_for_cell_and_field_by_field_with_the_native_run_of_its_work() {
    if !have("fio") {
        return skip("fio is not installed (Debian: apt-get install fio)");
    }
    let sb = Sandbox::new();
    let (_mount, target) = place(&sb);
    let work = Path::new(&target).join("fio");
    std::fs::create_dir(&work).unwrap();
    let json = fio(
        &work,
        &["--rw=randread", "--bs=4k", "--iodepth=4", "--size=8m", "--ioengine=io_uring", "--runtime=1", "--time_based"],
    );
    let imported = imported_id(&sb.run(&["import", json.to_str().unwrap()]));
    // The same work, but for how long it ran: the one real plan difference.
    let native =
        access(&sb, &target, &["--bs", "4k", "--qd", "4", "--read", "100", "--random", "100", "--duration", "500ms"]);

    let c = compare_json(&sb, imported, native);
    assert_eq!(c["only_in_a"], serde_json::json!([]), "{c}");
    assert_eq!(c["only_in_b"], serde_json::json!([]), "{c}");
    // The cells' figures; each may be followed by its %CPU row where both sides measured it.
    let compared: Vec<&str> = c["scalars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"].as_str().unwrap())
        .filter(|m| !m.ends_with(" %CPU"))
        .collect();
    assert_eq!(compared, ["access 8m/4k qd=4 read=100% random=100%"], "{c}");
    assert_eq!(
        c["plan_differences"],
        serde_json::json!([{"name": "limit.duration_ms", "a": "1000", "b": "500"}]),
        "only the real difference: {c}"
    );
    let unknown: Vec<&str> = c["unknown"].as_array().unwrap().iter().map(|u| u.as_str().unwrap()).collect();
    for field in FIELDS_FIO_STATES {
        assert!(!unknown.iter().any(|u| u.split(' ').next() == Some(field)), "{field} is known to both: {unknown:?}");
    }
    // fio's own options stay, known to the fio side only.
    assert!(unknown.contains(&"jobs[0].options.bs (unknown in B)"), "{unknown:?}");

    // The text counts what one side does not know in one line; --all lists each.
    let (a, b) = (imported.to_string(), native.to_string());
    let stdout = compare_text(&sb, &[&a, &b]);
    let line = stdout.lines().find(|l| l.starts_with("not known on one side")).expect(&stdout);
    assert!(line.ends_with("; --all lists them") && line.contains("plan fields unknown in"), "{line}");
    assert!(!stdout.contains("jobs[0].options.bs"), "{stdout}");
    assert!(
        stdout.contains("plan parameters that differ (A vs B):\n  limit.duration_ms: 1000 vs 500\nenvironment"),
        "{stdout}"
    );
    let all = compare_text(&sb, &[&a, &b, "--all"]);
    let listed = all.lines().find(|l| l.starts_with("not known on one side")).expect(&all);
    for u in &unknown {
        assert!(listed.contains(u), "--all lists {u}: {listed}");
    }
}

#[test]
fn a_bonnie_csv_without_its_chunk_compares_with_a_native_bonnie_run_without_bonnie_chunk() {
    if !have("bonnie++") {
        return skip("bonnie++ is not installed (Debian: apt-get install bonnie++)");
    }
    // On the sandbox's disk, not tmpfs: bonnie++ prints +++++ for a test done in under half a
    // second, as every test of a file tmpfs holds is; 1g is written at disk speed.
    let sb = Sandbox::new();
    let target = sb.target().to_str().unwrap().to_string();
    let work = sb.dir.path().join("bonnie++");
    std::fs::create_dir(&work).unwrap();
    // -f: no per-char tests (a native --fast run has none); -n 0: no file tests.
    let mut cmd = Command::new("bonnie++");
    cmd.args(["-d", work.to_str().unwrap(), "-s", "1024", "-r", "512", "-n", "0", "-f", "-q"]);
    if is_root() {
        cmd.args(["-u", "root"]);
    }
    let out = cmd.output().expect("run bonnie++");
    assert!(out.status.success(), "bonnie++ failed: {}", String::from_utf8_lossy(&out.stderr));
    let csv = sb.dir.path().join("bonnie.csv");
    std::fs::write(&csv, &out.stdout).unwrap();
    let line = String::from_utf8_lossy(&out.stdout).lines().find(|l| l.starts_with("1.98,")).unwrap().to_string();
    assert_eq!(line.split(',').nth(6), Some(""), "bonnie++ 2.00 leaves the chunk empty: {line}");

    let import = sb.run(&["import", csv.to_str().unwrap()]);
    let imported = imported_id(&import);
    let (said, _) = text(&import);
    assert!(
        said.contains("note: chunk size 8k: bonnie++'s default"),
        "the import says where the chunk came from: {said}"
    );
    let plan = &sb.show_json(imported)["run"]["plan"];
    assert_eq!(plan["chunk"], 8192);
    assert_eq!(plan["chunk_from"], "bonnie++'s default 8k (the CSV leaves it empty)");

    std::fs::remove_dir_all(&work).unwrap();
    assert_success(
        &sb.run(&["run", "bonnie", "--target", &target, "--size", "1g", "--ram", "512m", "--files", "0", "--fast"]),
    );
    let native = sb.last_run()["run"]["id"].as_i64().unwrap();
    let c = compare_json(&sb, imported, native);
    // Every figure bonnie++ measured (not +++++) meets its native twin.
    assert_eq!(c["only_in_a"], serde_json::json!([]), "{c}");
    // The cells' figures; each may be followed by its %CPU row where both sides measured it.
    let compared: Vec<&str> = c["scalars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"].as_str().unwrap())
        .filter(|m| !m.ends_with(" %CPU"))
        .collect();
    let measured = cells(&sb.show_json(imported)).len();
    assert!(measured > 0 && compared.len() == measured, "{compared:?} of {measured} imported cells");
    assert!(compared.iter().all(|m| m.ends_with(" 1g/8k")), "{compared:?}");
    let differing: Vec<&str> =
        c["plan_differences"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    for same in ["chunk", "size", "file_max", "file_min", "files", "skip_per_char"] {
        assert!(!differing.contains(&same), "{same} is the same on both sides: {differing:?}");
    }
}
