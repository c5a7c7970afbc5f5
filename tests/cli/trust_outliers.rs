//! Issue 50's outliers and one effect counted once. A repeat starved of CPU (its process held to
//! a few % of a CPU by a cgroup quota, as a descheduled thread is) is flagged, never reported as
//! a plain result: `show`, the run's summary (its "worst") and `compare` mark it and name the
//! sample. A personality's closed loop slowed as a whole is one effect in compare's verdict
//! counts, not one "slower" per operation, and its compare leads with operations per second.
//!
//! The cgroup: the `cpu` controller of cgroup v1 (`cpu.cfs_quota_us`) or v2 (`cpu.max`), a group
//! of the test's own, removed on drop (also when the test fails); root only.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

/// The scheduler's period the quotas are given in, µs.
const PERIOD_US: u64 = 100_000;

/// A cgroup whose CPU quota the test sets, removed on drop.
struct CpuCap {
    dir: PathBuf,
    /// The cgroup v2 `cpu.max` file; v1's `cpu.cfs_quota_us` where false.
    v2: bool,
}

impl CpuCap {
    /// A fresh group under the `cpu` controller, or None (and a skip) where none can be made.
    fn new(name: &str) -> Option<CpuCap> {
        if !is_root() {
            skip("a cgroup CPU quota needs root");
            return None;
        }
        let leaf = format!("iomatrix-{name}-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let v2 = Path::new("/sys/fs/cgroup");
        let made = if v1.join("cpu.cfs_period_us").exists() {
            std::fs::create_dir(v1.join(&leaf)).ok().map(|()| CpuCap { dir: v1.join(&leaf), v2: false })
        } else if std::fs::read_to_string(v2.join("cgroup.controllers")).is_ok_and(|c| c.contains("cpu")) {
            let _ = std::fs::write(v2.join("cgroup.subtree_control"), "+cpu");
            std::fs::create_dir(v2.join(&leaf)).ok().map(|()| CpuCap { dir: v2.join(&leaf), v2: true })
        } else {
            None
        };
        if made.is_none() {
            skip("no cgroup cpu controller to make a group in (/sys/fs/cgroup/cpu or cgroup v2 with cpu)");
        }
        made
    }

    /// Moves the process `pid` (every thread of it) into the group.
    fn hold(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).expect("move the run into the cgroup");
    }

    /// Holds the group to `percent` of one CPU; None lifts the quota.
    fn cap(&self, percent: Option<u64>) {
        let quota = percent.map(|p| p * PERIOD_US / 100);
        let (file, value) = if self.v2 {
            ("cpu.max", format!("{} {PERIOD_US}", quota.map_or("max".to_string(), |q| q.to_string())))
        } else {
            ("cpu.cfs_quota_us", quota.map_or("-1".to_string(), |q| q.to_string()))
        };
        std::fs::write(self.dir.join(file), value).expect("set the cgroup's CPU quota");
    }
}

impl Drop for CpuCap {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| self.cap(None));
        // Anything still in it (a run the test could not end) goes back to the parent first.
        let parent = self.dir.parent().unwrap().join("cgroup.procs");
        for pid in std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default().lines() {
            let _ = std::fs::write(&parent, pid);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// `run access` of one short cell on `target`, repeated, paced at 20,000 requests a second: a
/// tmpfs serves that with a few % of a CPU, so every repeat given its CPU measures the pace
/// (steady however busy the machine is, where an unpaced cell's repeats spread with the load),
/// and one held to 2% of a CPU falls far below it.
fn access(target: &Path, repeats: &str) -> Vec<String> {
    let target = target.to_str().unwrap().to_string();
    let args = ["run", "access", "--target", &target, "--file-size", "8m", "--bs", "4k", "--read", "100"];
    let paced = ["--rate", "20000", "--duration", "1s", "--repeat", repeats];
    args.iter().chain(&paced).map(|s| s.to_string()).collect()
}

/// The run's output, once it ended.
fn finished(mut child: Running) -> (std::process::ExitStatus, String, String) {
    let status = wait_for_exit(&mut child);
    let mut stdout = String::new();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    (status, stdout, stderr)
}

#[test]
fn a_repeat_starved_of_cpu_is_flagged_in_show_the_summary_and_compare() {
    let Some(cap) = CpuCap::new("outlier") else { return };
    let Some(tmpfs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = Sandbox::new();
    let started = Instant::now();
    let child = sb.cmd().args(access(&tmpfs.point, "7")).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = Running(child.expect("start iomatrix"));
    cap.hold(child.0.id());
    // The fourth repeat (cell 3) runs at 2% of a CPU; the others as the machine lets them.
    wait_for_cells(&sb, &mut child, 3);
    cap.cap(Some(2));
    wait_for_cells(&sb, &mut child, 4);
    cap.cap(None);
    let (status, stdout, stderr) = finished(child);
    println!("run: {status:?} after {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", started.elapsed());
    assert_eq!(status.code(), Some(0));
    let shown = sb.run(&["show", "1"]);
    assert_success(&shown);
    let (shown, _) = text(&shown);
    println!("show 1:\n{shown}");
    assert!(shown.contains("FLAGGED samples"), "show lists the flagged samples:\n{shown}");
    let flagged: Vec<&str> = shown.lines().filter(|l| l.contains("cell 3 of run #1,")).collect();
    assert!(!flagged.is_empty(), "show names the starved repeat:\n{shown}");
    assert!(
        flagged.iter().any(|l| l.contains("outlier (modified Z-score") || l.contains("descheduled (at")),
        "{flagged:?}"
    );
    // The summary never names the starved repeat its worst without saying so.
    let worst = stdout.lines().find(|l| l.trim_start().starts_with("worst:")).expect("a worst line");
    assert!(worst.contains("(cell 3)") && worst.contains("FLAGGED: "), "{worst}");
    assert!(stdout.contains("worst not flagged: "), "and the worst of the others follows:\n{stdout}");
    // An untouched run beside it: compare marks A's figure and names the sample.
    assert_success(&sb.run(&access(&tmpfs.point, "7").iter().map(String::as_str).collect::<Vec<_>>()));
    let compared = sb.run(&["compare", "1", "2"]);
    assert_success(&compared);
    let (compared, _) = text(&compared);
    println!("compare 1 2:\n{compared}");
    let row = compared.lines().find(|l| l.starts_with("access ") && l.contains("(KB/s)")).expect("the KB/s row");
    assert!(row.contains(" !") || row.contains(" ?"), "A's figure is marked: {row}");
    assert!(compared.contains("FLAGGED samples"), "{compared}");
    assert!(compared.lines().any(|l| l.starts_with("  A: ") && l.contains("cell 3 of run #1,")), "{compared}");
    assert!(!compared.lines().any(|l| l.starts_with("  B: ") && l.contains("outlier")), "{compared}");
}

/// `run personality varmail` at small scale for 1 s a repeat, 4 repeats (4 against 4 samples can
/// reach the rank test's level); at `percent` of a CPU where given.
fn varmail(sb: &Sandbox, cap: &CpuCap, percent: Option<u64>) {
    let target = sb.target().to_str().unwrap().to_string();
    let args = ["run", "personality", "varmail", "--scale", "small", "--duration", "1s", "--repeat", "4"];
    let child = sb.cmd().args(args).args(["--target", &target]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let child = Running(child.expect("start iomatrix"));
    cap.hold(child.0.id());
    cap.cap(percent);
    let (status, stdout, stderr) = finished(child);
    println!("varmail at {percent:?}% of a CPU: {status:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_closed_loop_slowed_as_a_whole_is_one_effect_and_its_compare_leads_with_ops_per_second() {
    let Some(cap) = CpuCap::new("loop") else { return };
    let sb = Sandbox::new();
    varmail(&sb, &cap, None);
    varmail(&sb, &cap, Some(10));
    cap.cap(None);
    let out = sb.run(&["compare", "1", "2"]);
    assert_success(&out);
    let (said, _) = text(&out);
    println!("compare 1 2:\n{said}");
    // The first figure is the phase's operations per second, then its KB/s.
    let header = said.lines().position(|l| l.starts_with("metric ")).expect("the scalar table");
    let rows: Vec<&str> = said.lines().skip(header + 1).take(2).collect();
    assert!(rows[0].starts_with("run (ops/s)") && rows[1].starts_with("run (KB/s)"), "{rows:?}");
    // Seven operations' rates and the loop's ops/s: one effect, slower.
    let effect = said.lines().find(|l| l.starts_with("  one effect: ")).expect("the effect's line");
    assert!(effect.contains("7 rates of one flow loop (run) and its ops/s: -"), "{effect}");
    assert!(effect.contains(": slower (p="), "at a tenth of a CPU the loop is slower: {effect}");
    let noise = said.lines().find(|l| l.starts_with("Noise (")).expect("the noise line");
    assert!(noise.contains("effects (") && noise.contains("counted once"), "{noise}");
    // Counted once: the effect's 8 figures are 1 of the effects counted.
    // The last occurrence: " of " also stands in the test's name at the line's start.
    let number_after = |word: &str| -> usize {
        let rest = &noise[noise.rfind(word).unwrap() + word.len()..];
        rest.split(|c: char| !c.is_ascii_digit()).find(|s| !s.is_empty()).unwrap().parse().unwrap()
    };
    let (effects, figures) = (number_after(" of "), number_after("effects ("));
    assert_eq!(figures - effects, 7, "8 figures counted as 1: {noise}");
}
