//! Every run ends with a summary in the last lines of its standard output: cells run and failed,
//! the best and worst figure with their cells, whether the figures measure the storage or the
//! page cache (with the flags to paste where they do not), where the run is stored and the
//! commands that go on from it. And the progress lines' ETA, which comes from the plan's work.

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;

/// The summary: stdout from its heading on. Fails unless it is there and nothing follows it
/// but its own lines.
fn summary_of(stdout: &str) -> String {
    let start = stdout.rfind("\nsummary of run #").unwrap_or_else(|| panic!("no summary at the end:\n{stdout}"));
    let summary = stdout[start + 1..].to_string();
    let last = summary.lines().last().unwrap_or_default();
    assert!(last.trim_start().starts_with("iomatrix report "), "the summary is not the last lines:\n{summary}");
    summary
}

/// The value of a summary's item (`cache`, `stored`, ...), or None.
fn item<'a>(summary: &'a str, name: &str) -> Option<&'a str> {
    summary.lines().find_map(|l| l.trim_start().strip_prefix(&format!("{name}:")).map(str::trim))
}

/// Twice this machine's RAM as the summary writes it for a size flag: whole GiB, rounded up.
fn twice_ram() -> String {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("MemTotal in /proc/meminfo");
    format!("{}g", (2 * kib * 1024).div_ceil(1 << 30))
}

fn access(sb: &Sandbox, target: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "access", "--target", target.to_str().unwrap(), "--file-size", "8m", "--bytes", "2m"];
    args.extend_from_slice(extra);
    sb.run(&args)
}

#[test]
fn a_cached_run_on_a_disk_says_it_measured_the_page_cache_and_gives_the_flags_to_paste() {
    let Some(mount) = Mount::ext4(64) else { return };
    let sb = Sandbox::new();
    let out = access(&sb, &mount.point, &[]);
    assert_success(&out);
    let summary = summary_of(&text(&out).0);
    let cache = item(&summary, "cache").expect("a cache line");
    assert!(cache.contains("these figures measure the page cache, not the storage"), "{cache}");
    let flags = format!("run again with --direct, or --file-size {}", twice_ram());
    assert!(cache.ends_with(&flags), "the flags to paste, with twice this machine's RAM: {cache}");
    // The flag pasted as given runs, and then the summary says storage.
    let out = access(&sb, &mount.point, &["--direct"]);
    assert_success(&out);
    let summary = summary_of(&text(&out).0);
    assert_eq!(
        item(&summary, "cache"),
        Some("O_DIRECT bypassed the page cache: these figures measure the storage."),
        "{summary}"
    );
}

#[test]
fn a_direct_random_read_at_depth_32_says_it_measured_the_storage() {
    let Some(mount) = Mount::ext4(64) else { return };
    let sb = Sandbox::new();
    let out = access(&sb, &mount.point, &["--direct", "--qd", "32", "--read", "100", "--random", "100"]);
    assert_success(&out);
    let summary = summary_of(&text(&out).0);
    assert!(item(&summary, "cache").unwrap().contains("measure the storage"), "{summary}");
    assert!(!summary.contains("page cache, not the storage"), "{summary}");
    assert!(item(&summary, "best").unwrap().contains("qd=32"), "{summary}");
}

#[test]
fn a_run_on_tmpfs_says_it_measured_memory_even_with_direct_io() {
    let Some(mount) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = Sandbox::new();
    for extra in [&[][..], &["--direct"][..]] {
        let out = access(&sb, &mount.point, extra);
        let (stdout, stderr) = text(&out);
        // A kernel whose tmpfs refuses O_DIRECT says so (exit 2): nothing to summarise then.
        if out.status.code() == Some(2) && stderr.contains("refuses O_DIRECT") {
            continue;
        }
        assert_success(&out);
        let cache = item(&summary_of(&stdout), "cache").unwrap().to_string();
        assert!(
            cache.starts_with("the target is tmpfs, a file system in RAM: these figures measure memory"),
            "{cache}"
        );
    }
}

#[test]
fn the_summary_names_the_best_and_worst_cells_and_the_run_as_stored() {
    let sb = Sandbox::new();
    let out = sb.iozone_ok(&["--files", "1m,4m", "--records", "64k", "--tests", "write,read"]);
    let summary = summary_of(&text(&out).0);
    let runs = sb.runs_json();
    let id = runs["runs"].as_array().unwrap().last().unwrap()["id"].as_i64().unwrap();
    assert!(summary.starts_with(&format!("summary of run #{id} (iozone, complete):")), "{summary}");
    let stored = item(&summary, "stored").unwrap();
    assert_eq!(stored, format!("run #{id} in {}", sb.db().display()), "the run id and database of runs --json");
    assert_eq!(item(&summary, "cells"), Some("4 run of 4 planned, 0 failed"), "{summary}");
    // Best and worst are the stored cells with the highest and the lowest KB/s.
    let run = sb.show_json(id);
    let cells = cells(&run);
    let kib = |c: &Value| c["kib_per_sec"].as_f64().unwrap();
    let best = cells.iter().max_by(|a, b| kib(a).total_cmp(&kib(b))).unwrap();
    let worst = cells.iter().min_by(|a, b| kib(a).total_cmp(&kib(b))).unwrap();
    for (name, cell) in [("best", best), ("worst", worst)] {
        let line = item(&summary, name).unwrap();
        assert!(line.starts_with(&format!("{:.0} KB/s", kib(cell))), "{name}: {line} (cell {cell})");
        assert!(line.ends_with(&format!("(cell {})", cell["seq"])), "{name}: {line}");
    }
    // The next commands paste as they are. A run of another plan is offered no comparison with
    // it; a later run of the same plan is offered the first, past the run of the other plan.
    let show: Vec<&str> = item(&summary, "next").unwrap().split_whitespace().skip(1).collect();
    assert_eq!(show, ["show", &id.to_string()]);
    assert_success(&sb.run(&show));
    let compare_words = |summary: &str| -> Vec<String> {
        let compare = summary.lines().find(|l| l.contains("iomatrix compare")).unwrap();
        compare.split_whitespace().skip(1).take(3).map(str::to_string).collect()
    };
    let out = sb.iozone_ok(&["--files", "1m", "--records", "64k", "--tests", "write"]);
    let other_plan = compare_words(&summary_of(&text(&out).0));
    assert_eq!(other_plan, ["compare", "RUN", &(id + 1).to_string()], "another plan is not comparable");
    let out = sb.iozone_ok(&["--files", "1m,4m", "--records", "64k", "--tests", "write,read"]);
    let words = compare_words(&summary_of(&text(&out).0));
    assert_eq!(words, ["compare", &id.to_string(), &(id + 2).to_string()], "the same plan's earlier run");
    assert_success(&sb.run(&words.iter().map(String::as_str).collect::<Vec<_>>()));
    let report = summary.lines().last().unwrap().split_whitespace().skip(1).collect::<Vec<_>>();
    assert_success(&sb.run(&report));
    assert!(sb.dir.path().join("report.html").exists(), "the report command wrote report.html");
}

#[test]
fn a_failed_run_ends_with_a_summary_that_says_what_failed() {
    let Some(mount) = Mount::ext4(48) else { return };
    let sb = Sandbox::new();
    // 4m fits; 64m does not (a 48 MiB image has about 37 MiB free).
    let target = mount.point.to_str().unwrap();
    let out = sb.run(&[
        "run",
        "iozone",
        "--target",
        target,
        "--files",
        "4m,64m",
        "--records",
        "1m",
        "--tests",
        "write",
        "--no-space-check",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success() && !stderr.contains("panicked"), "{stderr}");
    let summary = summary_of(&stdout);
    assert!(summary.starts_with("summary of run #1 (iozone, failed):"), "{summary}");
    assert_eq!(item(&summary, "cells"), Some("1 run of 2 planned, 0 failed, 1 not run"), "{summary}");
    assert!(item(&summary, "failed").unwrap().contains("No space left on device"), "{summary}");
    assert!(item(&summary, "best").unwrap().contains("write 4m/1m (cell 0)"), "{summary}");
}

/// A small run of each suite and front end: (what, arguments).
fn every_run(sb: &Sandbox, tree: &Path) -> Vec<(&'static str, Vec<String>)> {
    let t = sb.target().to_str().unwrap().to_string();
    let owned = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let t = t.as_str();
    vec![
        ("iozone", owned(&["run", "iozone", "--target", t, "--files", "256k", "--records", "64k"])),
        ("access", owned(&["run", "access", "--target", t, "--file-size", "1m", "--bytes", "64k"])),
        ("bonnie", owned(&["run", "bonnie", "--target", t, "--size", "1m", "--files", "1", "--allow-cache"])),
        (
            "fileserver",
            owned(&["run", "fileserver", "--target", t, "--connections", "2", "--files-per-connection", "2"]),
        ),
        ("backup", owned(&["run", "backup", "--target", tree.to_str().unwrap()])),
        (
            "personality",
            owned(&["run", "personality", "varmail", "--scale", "small", "--duration", "1s", "--target", t]),
        ),
        (
            "iozone front end",
            owned(&["iozone", "-s", "256k", "-r", "64k", "-i", "0", "-i", "1", "-f", &format!("{t}/f")]),
        ),
        (
            "iozone front end -R",
            owned(&["iozone", "-s", "256k", "-r", "64k", "-i", "0", "-R", "-f", &format!("{t}/f")]),
        ),
        // -f1: 1 MiB per-char, not bonnie++'s 3: the summary is what is checked.
        ("bonnie front end", owned(&["bonnie", "-d", t, "-s", "8", "-r", "4", "-n", "1", "-f1"])),
    ]
}

#[test]
fn every_suite_and_front_end_ends_with_the_summary_on_standard_output() {
    let sb = Sandbox::new();
    let tree = sb.dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("a"), vec![7u8; 256 << 10]).unwrap();
    for (what, args) in every_run(&sb, &tree) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = sb.run(&args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{what}: {stderr}");
        let summary = summary_of(&stdout);
        for name in ["cells", "best", "cache", "stored", "next"] {
            assert!(item(&summary, name).is_some(), "{what}: no {name} line:\n{summary}");
        }
        assert!(!stderr.contains("summary of run"), "{what}: the summary once, on standard output");
    }
}

#[test]
fn with_json_or_bonnie_q_standard_output_stays_the_suites_own_and_the_summary_goes_to_standard_error() {
    let sb = Sandbox::new();
    let t = sb.target();
    let out = access(&sb, &t, &["--json"]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    let doc: Value = serde_json::from_str(&stdout).expect("standard output is one JSON document");
    assert!(doc.is_object());
    assert!(summary_of(&stderr).contains("cache:"), "{stderr}");
    // bonnie++'s -q: its CSV line alone on standard output.
    // -f1: 1 MiB per-char, not bonnie++'s 3: where the CSV line and the summary go is what is checked.
    let out = sb.run(&["bonnie", "-d", t.to_str().unwrap(), "-s", "8", "-r", "4", "-n", "1", "-f1", "-q"]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("1.98,"), "{stdout}");
    assert!(summary_of(&stderr).contains("cache:"), "{stderr}");
}

#[test]
fn cpu_figures_are_explained_where_they_are_shown() {
    let sb = Sandbox::new();
    let out = sb.iozone_ok(&["--files", "256k", "--records", "64k", "--tests", "write"]);
    let stdout = text(&out).0;
    let cpu = stdout.find("Writer CPU").expect("a CPU table");
    let meaning = stdout
        .find("CPU %: CPU time (user + system) of the client threads that issued the cell's I/O, over the cell's wall time")
        .expect("the CPU % explained");
    assert!(meaning > cpu, "said under the CPU table:\n{stdout}");
    assert!(stdout.contains("100% = one core busy for the whole cell"), "{stdout}");
    let show = text(&sb.run(&["show", "1"])).0;
    assert!(show.contains("100% = one core busy for the whole cell"), "show explains it too:\n{show}");
}

/// The plain progress lines' ETA (standard error not a terminal): "[3/8] ... (2s elapsed, ETA 4s)".
fn etas(stderr: &str) -> Vec<Option<u64>> {
    stderr
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| {
            let eta = l.rsplit_once("ETA ").expect("an ETA on each progress line").1.trim_end_matches(')');
            parse_short(eta)
        })
        .collect()
}

/// `45s`, `3m 05s`, `2h 10m` in seconds; None for an ETA not known yet.
fn parse_short(eta: &str) -> Option<u64> {
    let mut total = 0;
    for part in eta.split_whitespace() {
        let (n, unit) = part.split_at(part.find(|c: char| !c.is_ascii_digit())?);
        let n: u64 = n.parse().ok()?;
        total += n * match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            _ => return None,
        };
    }
    Some(total)
}

#[test]
fn the_eta_of_a_mixed_plan_goes_by_its_work_and_never_grows() {
    let sb = Sandbox::new();
    // Phases that end after a number of iterations (work unknown until one has run) and timed
    // phases of 2 s, alternating: the ETA counts the timed phases' seconds, not cells.
    let file = sb.dir.path().join("mixed.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"mixed\"\nconnections = 2\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 8\n\
         prealloc = 1.0\nsize = { dist = \"fixed\", size = \"8k\" }\n\
         [[phase]]\nname = \"warm\"\niterations = 20\n[[phase.flow]]\nname = \"r\"\npick = \"random\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n\
         [[phase]]\nname = \"timed\"\nduration = \"2s\"\n[[phase.flow]]\nname = \"r\"\npick = \"random\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    let target = sb.target();
    let out =
        sb.run(&["run", "personality", file.to_str().unwrap(), "--target", target.to_str().unwrap(), "--repeat", "3"]);
    assert_success(&out);
    let (_, stderr) = text(&out);
    let etas = etas(&stderr);
    assert_eq!(etas.len(), 6, "{stderr}");
    // After the first phase: 3 timed phases of 2 s and 2 short ones are left: at least 6 s, where
    // a count of cells would say 5 x the first phase's few milliseconds.
    let first = etas[0].expect("known once each kind of work has been seen");
    assert!(first >= 6, "ETA {first}s after the first cell:\n{stderr}");
    // Never up by more than a second (a timed phase's setup beyond its 2 s), and 0 at the end.
    let known: Vec<u64> = etas.iter().map(|e| e.expect("known")).collect();
    for pair in known.windows(2) {
        assert!(pair[1] <= pair[0] + 1, "ETA grew: {known:?}\n{stderr}");
    }
    assert_eq!(known.last(), Some(&0), "{stderr}");
}

#[test]
fn an_interrupted_run_ends_with_its_summary_of_the_cells_it_kept() {
    use std::io::Read;
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "1m",
        "--qd",
        "1,2,4,8",
        "--duration",
        "2s",
    ];
    let mut child = Running(
        sb.cmd().args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::null()).spawn().unwrap(),
    );
    wait_for_cells(&sb, &mut child, 1);
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(130), "{status:?}");
    let mut stdout = String::new();
    child.0.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let summary = summary_of(&stdout);
    assert!(summary.starts_with("summary of run #1 (access, interrupted):"), "{summary}");
    let cells = item(&summary, "cells").unwrap();
    assert!(cells.ends_with("not run") && cells.contains("of 4 planned, 0 failed"), "{summary}");
    assert!(item(&summary, "failed").unwrap().contains("interrupted"), "{summary}");
}
