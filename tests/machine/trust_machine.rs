//! Issue 50's first finding: the machine's state is part of every cell. A cell run beside a CPU
//! hog (a busy loop on every CPU, started and killed here) is stored disturbed with the other
//! processes' share in its cause; the same cell on a quiet machine is not; `compare` of the two
//! names the machine state. `--settle` gives up beside a hog and says so, `--busy-threshold off`
//! keeps the hog's cell complete, a bad threshold is a usage error, and the README's first
//! command beside a hog says in its summary that a busy machine disturbed its cells.
//!
//! Every other test turns the rule off (`helpers::BUSY_VAR`); these turn it back on by removing
//! the variable, so the binary's default rule applies.

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The tests here that load the machine run one at a time: one's hog would make another's quiet
/// cell busy.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A busy loop on every CPU: `yes` writing to /dev/null, one process per CPU, killed by PID
/// (and reaped) when dropped, also when the test fails.
struct Hog(Vec<Child>);

impl Hog {
    fn start() -> Hog {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let hogs = (0..cpus)
            .map(|_| Command::new("yes").stdout(Stdio::null()).stdin(Stdio::null()).spawn().expect("start yes"))
            .collect();
        // Let the hogs take their CPUs before a cell is measured.
        std::thread::sleep(Duration::from_millis(500));
        Hog(hogs)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `iomatrix ARGS` with the binary's own busy rule (the variable every other test sets removed).
fn judged(sb: &Sandbox, args: &[&str]) -> Output {
    sb.cmd().env_remove(BUSY_VAR).args(args).output().expect("run iomatrix")
}

/// `run access` of one 2 s cell in `target`, with `extra`.
fn access_cell(sb: &Sandbox, target: &Path, extra: &[&str]) -> Output {
    let base = ["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m", "--bs", "4k"];
    // A capped rate: the run's own use of the CPU stays small, so the quiet cell is told from a
    // busy one by what others do, not by how little the run left free.
    let args = [&base[..], &["--read", "100", "--duration", "2s", "--rate", "2000"], extra].concat();
    judged(sb, &args)
}

/// The id of the sandbox's latest run.
fn last_id(sb: &Sandbox) -> i64 {
    let runs = sb.runs_json();
    runs["runs"].as_array().and_then(|r| r.last()).and_then(|r| r["id"].as_i64()).expect("a stored run")
}

/// The only cell of the sandbox's latest run.
fn last_cell(sb: &Sandbox) -> Value {
    let cells = cells(&sb.show_json(last_id(sb)));
    assert_eq!(cells.len(), 1, "{cells:?}");
    cells[0].clone()
}

/// Tries at a quiet cell, each after up to 20 s of `--settle`: at most about two minutes.
const ATTEMPTS: usize = 5;

#[test]
fn a_cell_beside_a_cpu_hog_is_disturbed_the_quiet_one_is_not_and_compare_names_the_machine() {
    let _alone = one_at_a_time();
    let sb = Sandbox::new();
    // A file system of its own: the other tests' and builds' writes to the machine's disk are
    // other I/O on the target's device too, and would make the quiet cell busy.
    let Some(fs) = Mount::ext4(64) else { return };
    let hog = Hog::start();
    let out = access_cell(&sb, &fs.point, &[]);
    let (stdout, stderr) = text(&out);
    println!("beside the hog:\n{stdout}\n{stderr}");
    assert_success(&out);
    drop(hog);
    let cell = last_cell(&sb);
    let machine = &cell["metrics"]["machine"];
    println!("its machine record: {machine}");
    assert_eq!(cell["state"]["kind"], "disturbed", "{cell}");
    let cause = cell["state"]["cause"].as_str().expect("a cause");
    assert!(cause.starts_with("machine busy: other processes ") && cause.contains("of a CPU while"), "{cause}");
    let other = machine["other_cpu"].as_f64().expect("others' CPU was measured");
    assert!(other > 0.5, "a hog on every CPU used more than half a CPU: {machine}");
    // A 2 s cell has its seconds: the hog in each whole one.
    let seconds: Vec<f64> =
        machine["other_cpu_per_second"].as_array().expect("a series").iter().filter_map(Value::as_f64).collect();
    assert!(seconds.iter().any(|s| *s > 0.5), "the hog's seconds: {machine}");
    assert!(stdout.contains("1 disturbed") && stdout.contains("machine busy"), "the summary says so:\n{stdout}");
    let show = text(&sb.run(&["show", "1"])).0;
    assert!(show.contains("machine load") && show.contains("busy in 1 of 1 cell(s)"), "show names it:\n{show}");

    // Quiet again: other tests may load CI's machine, so the quiet cell is tried a few times,
    // each after --settle waited for a quiet second.
    let mut seen = Vec::new();
    let quiet = (0..ATTEMPTS).find_map(|attempt| {
        let out = access_cell(&sb, &fs.point, &["--settle", "20s"]);
        assert_success(&out);
        let cell = last_cell(&sb);
        seen.push(format!("attempt {attempt}: {} {}", cell["state"], cell["metrics"]["machine"]));
        (cell["state"]["kind"] == "complete").then(|| last_id(&sb))
    });
    println!("without the hog: {seen:#?}");
    let quiet = quiet.unwrap_or_else(|| panic!("no quiet cell in {ATTEMPTS} tries: {seen:#?}"));
    let machine = &last_cell(&sb)["metrics"]["machine"];
    assert!(machine["settle"]["waited_ns"].as_u64().is_some(), "the settle is stored: {machine}");

    let compare = sb.run(&["compare", "1", &quiet.to_string(), "--include-disturbed"]);
    let (stdout, stderr) = text(&compare);
    println!("compare:\n{stdout}\n{stderr}");
    let line =
        stdout.lines().find(|l| l.contains("machine load:")).unwrap_or_else(|| panic!("no machine line:\n{stdout}"));
    assert!(line.contains("busy in 1 of 1 cell(s)") && line.contains("quiet"), "{line}");
    let left_out = text(&sb.run(&["compare", "1", &quiet.to_string(), "--json"])).0.replace([' ', '\n'], "");
    assert!(left_out.contains("\"kind\":\"disturbed\""), "without --include-disturbed it is left out: {left_out}");
}

#[test]
fn settle_gives_up_beside_a_hog_and_busy_threshold_off_keeps_the_cell_complete() {
    let _alone = one_at_a_time();
    let sb = Sandbox::new();
    // A file system of its own: the other tests' and builds' writes to the machine's disk are
    // other I/O on the target's device too, and would make the quiet cell busy.
    let Some(fs) = Mount::ext4(64) else { return };
    let _hog = Hog::start();
    let started = Instant::now();
    let out = access_cell(&sb, &fs.point, &["--settle", "2s"]);
    let (_, stderr) = text(&out);
    println!("--settle 2s beside the hog, {:?}:\n{stderr}", started.elapsed());
    assert_success(&out);
    assert!(stderr.contains("--settle 2.0 s: gave up after"), "{stderr}");
    let settle = &last_cell(&sb)["metrics"]["machine"]["settle"];
    assert_eq!(settle["gave_up"], true, "{settle}");
    let waited = settle["waited_ns"].as_u64().unwrap();
    assert!((1_900_000_000..=4_000_000_000).contains(&waited), "waited {waited} ns for a 2 s limit");

    let off = access_cell(&sb, &fs.point, &["--busy-threshold", "off"]);
    assert_success(&off);
    let cell = last_cell(&sb);
    assert_eq!(cell["state"]["kind"], "complete", "{cell}");
    assert!(cell["metrics"]["machine"]["other_cpu"].as_f64().is_some(), "still recorded: {cell}");
    let show = text(&sb.run(&["show", &last_id(&sb).to_string()])).0;
    assert!(show.contains("not judged (--busy-threshold off)"), "show says the rule was off:\n{show}");
}

#[test]
fn a_bad_busy_threshold_is_a_usage_error_naming_the_fix() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = access_cell(&sb, &target, &["--busy-threshold", "cpu=lots"]);
    assert_usage_error(&out, "--busy-threshold cpu=lots");
    assert!(text(&out).1.contains("write e.g. cpu=100%,steal=10%,io=10%"), "{}", text(&out).1);
    let out = access_cell(&sb, &target, &["--busy-threshold", "disk=5%"]);
    assert_usage_error(&out, "the names are cpu, steal and io");
    let from_env = sb
        .cmd()
        .env(BUSY_VAR, "sometimes")
        .args(["run", "access", "--target", target.to_str().unwrap(), "--duration", "1s"])
        .output()
        .unwrap();
    assert_usage_error(&from_env, "IOMATRIX_BUSY_THRESHOLD sometimes");
    assert_usage_error(&access_cell(&sb, &target, &["--settle", "soon"]), "--settle soon");
    assert_eq!(stored_cells(&sb), 0, "nothing was run");
}

#[test]
fn the_readmes_first_run_beside_a_hog_says_in_its_summary_that_a_busy_machine_disturbed_it() {
    let _alone = one_at_a_time();
    let sb = Sandbox::new();
    let _hog = Hog::start();
    let target = sb.target();
    // The README's `iomatrix run iozone`, on its embedded defaults but for smaller files (its
    // 1053 cells would take minutes beside a hog): still hundreds of cells of milliseconds each.
    let started = Instant::now();
    let out = judged(&sb, &["run", "iozone", "--target", target.to_str().unwrap(), "--files", "1m..4m"]);
    let (stdout, stderr) = text(&out);
    println!("{:?}: {stdout}\n{stderr}", started.elapsed());
    assert_success(&out);
    let summary = &stdout[stdout.rfind("summary of run").expect("a summary")..];
    assert!(summary.contains("by a busy machine") || summary.contains("machine busy"), "{summary}");
    assert!(summary.lines().count() < 20, "the summary stays short: {summary}");
    let warning =
        stderr.lines().find(|l| l.contains("disturbed cell(s)")).expect("a warning names the disturbed cells");
    assert!(warning.len() < 4000, "the warning names a few and counts the rest: {warning}");
}

#[test]
fn unreadable_proc_files_leave_the_machine_unknown_never_zero_and_the_run_goes_on() {
    if !is_root() || !have("unshare") {
        return skip("hiding /proc files needs root and unshare");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    // In a mount namespace of its own: /proc/stat reads empty, /proc/pressure is an empty folder.
    // (The I/O rule is off: the machine's disk is shared with other tests and builds.)
    let run = format!(
        "mount --bind /dev/null /proc/stat && mount -t tmpfs none /proc/pressure && exec {} run access --target {} \
         --file-size 4m --bs 4k --read 100 --duration 1s --busy-threshold io=off",
        env!("CARGO_BIN_EXE_iomatrix"),
        target.display()
    );
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &run])
        .env("IOMATRIX_DB", sb.db())
        .env_remove(BUSY_VAR)
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run unshare");
    let (stdout, stderr) = text(&out);
    println!("{stdout}\n{stderr}");
    assert_success(&out);
    let cell = last_cell(&sb);
    let machine = &cell["metrics"]["machine"];
    assert_eq!(cell["state"]["kind"], "complete", "nothing known, nothing judged: {cell}");
    for unknown in ["cpus", "other_cpu", "idle_cpu", "steal_cpu", "pressure_cpu", "pressure_io", "pressure_memory"] {
        assert!(machine[unknown].is_null(), "{unknown} is unknown, not 0: {machine}");
    }
    assert!(machine["load_avg_start"].as_f64().is_some(), "what could be read still is: {machine}");
    let show = text(&sb.run(&["show", "1"])).0;
    assert!(show.contains("other processes' CPU unknown"), "{show}");
}
