//! Issue 49's guard: what every command prints is byte-identical before and after the
//! restructuring. Expected outputs live in tests/golden/main-7a976992/:
//!
//! - expected/NAME: tests/fixtures/db-main-7a976992.sqlite is a database written by main at
//!   7a976992, before the change (tests/fixtures/make-db.sh made it; tests/fixtures/README.md
//!   lists its runs). Every command of commands (runs, show of every run, compare of 2 and N
//!   sides, label groups, sweep, report in every format, db check, study list/show) reads a copy
//!   of it and prints these bytes (the check of golden.rs).
//! - help/NAME: the help of every command and subcommand (`--help` and `-h`), byte for byte.
//! - imports/NAME: what `import` prints for every importer's input.
//! - fronts/NAME and runs/NAME: what IOzone's, bonnie++'s and fio's command lines, each suite's
//!   `run`, rerun, study run, scan and extents print on a tmpfs, every measured figure masked
//!   (see [`mask_measured`]: numbers, scaled units, signs, time stamps, uids, the best cell):
//!   the words, headers, units, order and exit codes stay guarded byte for byte.
//!
//! Written anew with `IOMATRIX_GOLDEN=write cargo test --test cli golden`, reviewed in `git diff`.

use crate::golden::{after_made_at, check_commands, first_difference, golden, writing};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn set() -> PathBuf {
    golden().join("main-7a976992")
}

#[test]
fn every_output_of_main_7a976992s_database_is_what_it_was() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/db-main-7a976992.sqlite");
    check_commands(&fixture, &set(), 150);
}

/// `iomatrix ARGS` with no database named and no terminal width: its exit code and output.
fn help_text(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_iomatrix"))
        .args(args)
        .env_remove("IOMATRIX_DB")
        // clap wraps the help at $COLUMNS when it is set; without it at its fixed width.
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .expect("run iomatrix");
    format!(
        "$ iomatrix {}\n# exit {:?}\n{}\n# stderr\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The subcommands a help text lists under "Commands:" (help itself left out).
fn subcommands(help: &str) -> Vec<String> {
    let Some(commands) = help.split("\nCommands:\n").nth(1) else { return Vec::new() };
    commands
        .lines()
        .take_while(|l| l.starts_with("  "))
        // A name starts at the third column; deeper lines continue the text before them.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path's `--help` and `-h`, found by walking "Commands:" from the top: file
/// name (the path joined by '-', "top" for iomatrix itself) to its text.
fn every_help() -> BTreeMap<String, String> {
    let mut helps = BTreeMap::new();
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = paths.pop() {
        let name = if path.is_empty() { "top".to_string() } else { path.join("-") };
        for flag in ["--help", "-h"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let text = help_text(&args);
            if flag == "--help" {
                for sub in subcommands(&text) {
                    paths.push([path.clone(), vec![sub]].concat());
                }
            }
            helps.insert(format!("{name}{flag}"), text);
        }
        assert!(helps.len() < 400, "the walk of Commands: does not end: {:?}", helps.keys());
    }
    helps
}

#[test]
fn every_help_text_is_what_it_was_golden() {
    let dir = set().join("help");
    let helps = every_help();
    // The walk must have found the suites and the commands with subcommands of their own.
    for name in ["top--help", "run-iozone--help", "run-personality-h", "db-check--help", "study-show--help"] {
        assert!(helps.contains_key(name), "no help {name} among {:?}", helps.keys());
    }
    if writing() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &helps {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let stored: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let gone: Vec<&String> = stored.iter().filter(|s| !helps.contains_key(*s)).collect();
    let new: Vec<&String> = helps.keys().filter(|h| !stored.contains(h)).collect();
    assert!(gone.is_empty() && new.is_empty(), "help texts no longer there: {gone:?}; new: {new:?}");
    let differing: Vec<String> = helps
        .iter()
        .filter_map(|(name, got)| first_difference(name, &std::fs::read_to_string(dir.join(name)).unwrap(), got))
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} help texts differ:\n{}",
        differing.len(),
        helps.len(),
        differing.join("\n")
    );
}

/// Every importer's input (the repository's real outputs of fio, Iometer, bonnie++, Bonnie and
/// IOzone's -R, and a published table) and how it is imported: name, file, arguments.
const IMPORTS: [(&str, &str, &str); 7] = [
    ("fio", "crates/import/tests/data/fio-3.33-randrw-libaio.json", "--label sys=fio"),
    ("iometer", "crates/import/tests/data/iometer-2006.07.27-results.csv", "--label sys=iometer"),
    ("bonnie++", "crates/import/tests/data/bonnie-2.00a-x2.csv", "--label sys=bonniepp --bonnie-chunk 16k"),
    ("bonnie-text", "crates/import/tests/data/bonnie-1.x-two-runs.txt", "--label sys=bonnie1"),
    ("iozone", "tests/fixtures/iozone-3.471-s64m-r4k-r1m-tmpfs.txt", "--format iozone --label sys=iozone-r"),
    ("published", "published.csv", "--format published"),
    ("fio-json", "crates/import/tests/data/fio-3.33-randrw-libaio.json", "--json"),
];

/// A published table typed in (made up for this test): two sides of a file-server test.
const PUBLISHED: &str = "label:dba,suite,test,file_size,record_size,operation,metric,unit,value\n\
    without,fileserver,write,4k 8k,4k,open,response time,ms,36.69\n\
    with,fileserver,write,4k 8k,4k,open,response time,ms,8.86\n\
    without,backup,backup,1m,,,throughput,MB/min,272.45\n";

#[test]
fn every_importers_output_is_what_it_was_golden() {
    let sb = crate::helpers::Sandbox::new();
    let made_at = std::fs::read_to_string(set().join("made-at")).unwrap();
    let dir = set().join("imports");
    if writing() {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut differing = Vec::new();
    for (name, file, args) in IMPORTS {
        // A copy in the sandbox: the output names the file, and TMP is the same everywhere.
        let input = sb.dir.path().join(Path::new(file).file_name().unwrap());
        if file == "published.csv" {
            std::fs::write(&input, PUBLISHED).unwrap();
        } else {
            std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(file), &input).unwrap();
        }
        let mut all = vec!["import", input.to_str().unwrap()];
        all.extend(args.split(' '));
        let out = sb.run(&all);
        let got = format!(
            "$ iomatrix import {file} {args}\n# exit {:?}\n{}\n# stderr\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The time an import is stored at is now, not the input's.
        let got = after_made_at(&got.replace(sb.dir.path().to_str().unwrap(), "TMP"), made_at.trim());
        if writing() {
            std::fs::write(dir.join(name), &got).unwrap();
            continue;
        }
        differing.extend(first_difference(name, &std::fs::read_to_string(dir.join(name)).unwrap(), &got));
    }
    assert!(
        differing.is_empty(),
        "{} of {} imports' outputs differ:\n{}",
        differing.len(),
        IMPORTS.len(),
        differing.join("\n")
    );
}

/// The front ends' commands (IOzone's, bonnie++'s and fio's command lines) run on a tmpfs:
/// name, arguments (MNT is the tmpfs, JOBS the fio job file).
const FRONTS: [(&str, &str); 11] = [
    ("iozone", "iozone -s 256k -r 4k -r 64k -i 0 -i 1 -i 2 -f MNT/iozone.tmp"),
    ("iozone-R", "iozone -R -s 256k -r 4k -r 64k -i 0 -i 1 -e -c -f MNT/iozone.tmp"),
    ("iozone-auto", "iozone -a -n 64k -g 128k -i 0 -i 1 -+n -f MNT/iozone.tmp"),
    ("iozone-t2", "iozone -t 2 -s 256k -r 16k -i 0 -i 1 -+n -f MNT/iozone.tmp --label sys=t2"),
    ("iozone-json", "iozone -s 128k -r 64k -i 0 -f MNT/iozone.tmp --json"),
    ("iozone-verify", "iozone -s 256k -r 4k -i 0 -i 1 -f MNT/iozone.tmp --verify"),
    ("bonnie", "bonnie -d MNT -s 4 -r 2 -n 1 -f -m golden"),
    ("bonnie-x2-q", "bonnie -d MNT -s 4 -r 2 -n 0 -f -x 2 -q -m golden"),
    ("fio", "fio --name=seqwrite --directory=MNT --size=1m --bs=64k --rw=write"),
    ("fio-jobfile", "fio JOBS"),
    ("fio-json", "fio --output-format=json --name=randread --directory=MNT --size=1m --bs=4k --rw=randread"),
];

/// fio's job file of FRONTS: two jobs, the second stonewalled with two processes.
const JOB_FILE: &str = "; two jobs, one after the other\n[global]\ndirectory=MNT\nsize=2m\nbs=8k\nruntime=200ms\n\
     time_based\ngroup_reporting\n\n[reads]\nrw=randread\nioengine=io_uring\niodepth=4\n\n[mixed]\nstonewall\n\
     rw=randrw\nrwmixread=70\nnumjobs=2\n";

#[test]
fn every_front_ends_output_but_its_figures_is_what_it_was_golden() {
    // The same file system on every machine (the tables name it): a tmpfs of our own.
    let Some(mount) = crate::helpers::Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = crate::helpers::Sandbox::new();
    let mnt = mount.point.to_str().unwrap();
    let jobs = sb.dir.path().join("two.fio");
    std::fs::write(&jobs, JOB_FILE.replace("MNT", mnt)).unwrap();
    check_masked(&sb, mnt, "fronts", &FRONTS, &[("JOBS", jobs.to_str().unwrap())]);
}

/// Each suite's own command line (`run SUITE`), many clients, repeats, `rerun`, a study, and the
/// commands that read a tree (`scan`, `extents`), on a tmpfs: name, arguments (MNT the tmpfs,
/// TREE a tree of two files in it, LOADFILE dbench's, STUDY a study file).
const SUITE_RUNS: [(&str, &str); 15] = [
    (
        "run-iozone",
        "run iozone --target MNT --files 64k,256k --records 4k,64k --tests write,read,random-read --label sys=s1",
    ),
    ("run-iozone-clients", "run iozone --target MNT --files 256k --records 64k --tests write,read --clients 2"),
    (
        "run-access",
        "run access --target MNT --bs 4k,64k --read 100,0 --random 100 --qd 1,4 --file-size 1m --duration 100ms",
    ),
    (
        "run-access-repeat",
        "run access --target MNT --bs 4k --read 100 --random 100 --qd 1 --file-size 1m --duration 50ms --repeat 3",
    ),
    ("run-bonnie", "run bonnie --target MNT --size 2m --ram 1m --files 1 --fast"),
    ("run-fileserver", "run fileserver --target MNT --connections 2 --files-per-connection 5 --sizes 4k,16k"),
    ("run-personality", "run personality varmail --target MNT --scale small --connections 2 --duration 200ms"),
    ("run-backup", "run backup --target TREE --warm"),
    ("run-dbench", "run personality --dbench-loadfile LOADFILE --target MNT --connections 2 --as-fast-as-possible"),
    ("rerun", "rerun 1"),
    ("study-run", "study run STUDY"),
    ("study-show", "study show two"),
    ("study-list", "study list"),
    ("scan", "scan TREE"),
    ("extents", "extents TREE"),
];

/// A study of two configurations (folders a and b of the tmpfs), one IOzone step, a comparison
/// and a report.
const STUDY: &str = "version = 1\nname = \"two\"\n\n[[config]]\nname = \"a\"\ntarget = \"MNT/a\"\n\
    labels = { disk = \"first\" }\n\n[[config]]\nname = \"b\"\ntarget = \"MNT/b\"\n\n[[step]]\nname = \"m0\"\n\
    suite = \"iozone\"\nargs = { files = \"256k\", records = [\"64k\", \"128k\"], tests = \"write,read\" }\n\n\
    [[compare]]\na = \"a\"\nb = \"b\"\nstep = \"m0\"\n\n[report]\nfile = \"MNT/two.html\"\n";

#[test]
fn every_suites_run_output_but_its_figures_is_what_it_was_golden() {
    let Some(mount) = crate::helpers::Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let Ok(client) = std::fs::read_to_string("/usr/share/dbench/client.txt") else {
        return crate::helpers::skip("dbench's load file /usr/share/dbench/client.txt (Debian's dbench) is missing");
    };
    let sb = crate::helpers::Sandbox::new();
    let mnt = mount.point.to_str().unwrap();
    let loadfile = sb.dir.path().join("client.txt");
    std::fs::write(&loadfile, client.lines().take(400).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let tree = mount.point.join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    std::fs::write(tree.join("a/one"), vec![7u8; 300_000]).unwrap();
    std::fs::write(tree.join("a/b/two"), vec![9u8; 70_000]).unwrap();
    let study = sb.dir.path().join("two.toml");
    std::fs::write(&study, STUDY.replace("MNT", mnt)).unwrap();
    for config in ["a", "b"] {
        std::fs::create_dir(mount.point.join(config)).unwrap();
    }
    let places = [
        ("TREE", tree.to_str().unwrap()),
        ("LOADFILE", loadfile.to_str().unwrap()),
        ("STUDY", study.to_str().unwrap()),
    ];
    check_masked(&sb, mnt, "runs", &SUITE_RUNS, &places);
}

/// Runs `commands` (name, arguments with MNT and `places` filled in) in `sb` and compares
/// each output, measured figures masked ([`mask_measured`]), with `set`/`dir`/NAME.
fn check_masked(
    sb: &crate::helpers::Sandbox,
    mnt: &str,
    dir: &str,
    commands: &[(&str, &str)],
    places: &[(&str, &str)],
) {
    let dir = set().join(dir);
    if writing() {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut differing = Vec::new();
    for (name, line) in commands {
        let filled = places.iter().fold(line.replace("MNT", mnt), |l, (place, by)| l.replace(place, by));
        let out = sb.run(&filled.split(' ').collect::<Vec<_>>());
        let raw = format!(
            "$ iomatrix {line}\n# exit {:?}\n{}\n# stderr\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let raw = raw.replace(env!("CARGO_BIN_EXE_iomatrix"), "iomatrix");
        let got = mask_measured(&raw.replace(mnt, "MNT").replace(sb.dir.path().to_str().unwrap(), "TMP"));
        if writing() {
            std::fs::write(dir.join(name), &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(dir.join(name)).unwrap();
        differing.extend(first_difference(name, &want, &got));
    }
    assert!(
        differing.is_empty(),
        "{} of {} outputs differ:\n{}",
        differing.len(),
        commands.len(),
        differing.join("\n")
    );
}

/// A front end's output with what a run measures masked, so that its layout's words, headers,
/// units and order stay guarded byte for byte while its figures may change:
/// - every time stamp (2026-12-06T08:26:54Z) is TIME;
/// - every number is `#` with its sign (digits inside a word, as ext4 or xoshiro256, and JSON
///   keys stay), and bonnie++'s
///   `+++++`/`+++` (a test too fast to time) too;
/// - a unit scaled to the figure's size (10.2k, 640MiB/s, 749.2 MiB/s, 1msec, fio's `(usec)`)
///   loses its scale: `#`, `#B/s`, `# B/s`, `#s`, `(?sec)`;
/// - runs of spaces are one space (columns are as wide as their figures);
/// - a progress line's ETA ("4s" or "not known yet") is `?`; the summary's best and worst
///   cell (which one is measured) is CELL;
/// - fio's latency distribution (`lat (usec)   : 20=50.00%, ...`, its buckets and lines as many
///   as the latencies span) is one `#=#%` a line, and one line a unit; its percentile rows
///   (`| #th=[#], ...`, as many to a row as the values' width lets fio fit) are one `| #th=[#]`;
/// - the rows of a "Noisiest cells" table are in name order, not the measured spread's;
/// - a run's uid (random) is UID; the machine (`machine:` line) and this host's name are
///   MACHINE and HOST; what else ran on the machine (the `machine load:` line, a cell's
///   `"machine": {...}` record, whose figures are known or null as the cell's length and this
///   machine's /proc allow) is LOAD.
///
/// The command line (`$ iomatrix ...`, `command: ...`) is the test's input, and the exit code
/// (`# exit ...`) must stay: both kept whole.
fn mask_measured(text: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    // The indentation of a cell's machine record under way, whose lines are LOAD.
    let mut in_load: Option<usize> = None;
    for line in flags_dropped(text).lines() {
        // The command line is the test's own input, and the exit code is not measured.
        if line.starts_with("$ iomatrix ") || line.starts_with("command: ") || line.starts_with("# exit ") {
            out.push(line.to_string());
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = in_load {
            if indent == at && line.trim_start().starts_with('}') {
                in_load = None;
            }
            continue;
        }
        if line.trim_start().starts_with("\"machine\": {") {
            in_load = Some(indent);
            out.push(format!("{}\"machine\": LOAD", &line[..indent]));
            continue;
        }
        // The kernel's release is this machine's, not the front end's output.
        if line.trim_start().starts_with("\"kernel\": ") {
            out.push(format!("{}\"kernel\": KERNEL", &line[..indent]));
            continue;
        }
        // Whether a job ran past one sampling interval (fio's bw and iops lines) or not is measured.
        let sampled = ["bw (", "iops        :", "bw and iops: no sample"];
        if sampled.iter().any(|s| line.trim_start().starts_with(s)) {
            if out.last().map(String::as_str) != Some("   SAMPLE LINES") {
                out.push("   SAMPLE LINES".to_string());
            }
            continue;
        }
        let line = if line.starts_with("machine: ") { "machine: MACHINE".to_string() } else { line.to_string() };
        let line = if line.starts_with("machine load: ") { "machine load: LOAD".to_string() } else { line };
        let line = replace_word(&line, host.trim(), "HOST");
        let line = unpadded(&collapse_spaces(&mask_numbers(&uids_masked(&times_masked(&line)))));
        let line = unknown_eta(&cell_chosen(&one_latency_bucket(&line)));
        let line = if line.trim_start().starts_with("| #th=[#]") { " | #th=[#]".to_string() } else { line };
        let latency_lines = |l: &str| l.trim_start().starts_with("lat (?sec) :") || l == " | #th=[#]";
        if latency_lines(&line) && out.last().is_some_and(|last| *last == line) {
            continue;
        }
        out.push(line);
    }
    sort_noisiest(&mut out);
    out.join("\n") + "\n"
}

/// `text` without what says a sample is flagged (issue 50: an outlier among its repeats, a
/// descheduled cell): whether any is, and which, is measured. The list of flagged samples and the
/// blank line before it, the summary's "(FLAGGED: ...)" and "not flagged" lines, and the marks
/// beside a figure's name go.
fn flags_dropped(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut in_list = false;
    for line in text.lines() {
        if line.starts_with("FLAGGED samples") {
            in_list = true;
            if out.last().is_some_and(|l| l.is_empty()) {
                out.pop();
            }
            continue;
        }
        if in_list && line.starts_with("  ") {
            continue;
        }
        in_list = false;
        if line.contains(" not flagged: ") {
            continue;
        }
        let mut line = match (line.find(" (FLAGGED: "), line.find("; show lists it)")) {
            (Some(from), Some(to)) => format!("{}{}", &line[..from], &line[to + "; show lists it)".len()..]),
            _ => line.to_string(),
        };
        for mark in [" !?", " !", " ?"] {
            line = line.replace(&format!("){mark} "), ") ");
        }
        out.push(line);
    }
    out.join("\n")
}

/// The rows of a "Noisiest cells" table in name order: their order is the measured spread's.
fn sort_noisiest(lines: &mut [String]) {
    let mut at = 0;
    while let Some(head) = lines[at..].iter().position(|l| l == "cell samples median min max spread") {
        let first = at + head + 1;
        let rows = lines[first..].iter().take_while(|l| !l.is_empty()).count();
        lines[first..first + rows].sort();
        at = first + rows;
    }
}

/// `line` with every run's uid (32 lowercase hex digits, random per run) UID.
fn uids_masked(line: &str) -> String {
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    let mut out = String::new();
    let mut word = String::new();
    for c in line.chars().chain(std::iter::once('\n')) {
        if hex(c) {
            word.push(c);
            continue;
        }
        out.push_str(if word.len() == 32 { "UID" } else { &word });
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// `line` with every UTC time stamp (2026-12-06T08:26:54Z) TIME.
fn times_masked(line: &str) -> String {
    let shape = |b: &[u8]| {
        b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
    };
    let bytes = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < line.len() {
        if bytes.len() - i >= 20 && shape(&bytes[i..i + 20]) {
            out.push_str("TIME");
            i += 20;
        } else {
            let c = line[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `line` with `word` replaced where it stands alone (not inside a longer name).
fn replace_word(line: &str, word: &str, by: &str) -> String {
    if word.is_empty() {
        return line.to_string();
    }
    let part_of_name = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(word) {
        let before = if at > 0 { rest[..at].chars().last() } else { out.chars().last() };
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        out.push_str(if part_of_name(before) || part_of_name(after) { word } else { by });
        rest = &rest[at + word.len()..];
    }
    out + rest
}

/// Units whose scale follows the figure: byte and count prefixes, and times.
const SCALED: [&str; 19] =
    ["k", "K", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "kB", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "B"];
const TIMES: [&str; 9] = ["ns", "us", "µs", "ms", "s", "nsec", "usec", "msec", "sec"];

/// Every number `#`, its scaled unit unscaled (see [`mask_measured`]).
fn mask_numbers(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let in_word = i > 0 && (chars[i - 1].is_ascii_alphabetic() || chars[i - 1] == '_');
        if c.is_ascii_digit() && in_word {
            // A name's digits (ext4, xoshiro256, p99, a time stamp's T08): kept.
            while i < chars.len() && chars[i].is_ascii_digit() {
                out.push(chars[i]);
                i += 1;
            }
        } else if c.is_ascii_digit() && is_json_key(&chars, i) {
            // A JSON key ("1.000000": a percentile, "250": a latency bucket) is a name.
            while chars[i] != '"' {
                out.push(chars[i]);
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || ((chars[i] == '.' || chars[i] == ',') && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push('#');
            i += unscaled_unit(&chars[i..], &mut out);
        } else if is_sign(&chars, i) {
            // A change's sign (+3.3%, -40.2%) is measured too.
            i += 1;
        } else if c == '+' && chars[i..].iter().take_while(|c| **c == '+').count() >= 3 {
            i += chars[i..].iter().take_while(|c| **c == '+').count();
            out.push('#');
        } else {
            out.push(c);
            i += 1;
        }
    }
    for unit in ["(nsec)", "(usec)", "(msec)"] {
        out = out.replace(unit, "(?sec)");
    }
    out
}

/// Whether the char at `at` is the sign of a number: + or - before a digit, at a word's start.
fn is_sign(chars: &[char], at: usize) -> bool {
    let starts_word = at == 0 || matches!(chars[at - 1], ' ' | '(' | '[');
    matches!(chars[at], '+' | '-') && starts_word && chars.get(at + 1).is_some_and(char::is_ascii_digit)
}

/// Whether the number at `at` is a whole JSON key: `"1.000000":`.
fn is_json_key(chars: &[char], at: usize) -> bool {
    let end = chars[at..].iter().position(|c| !(c.is_ascii_digit() || *c == '.')).map(|e| at + e);
    at > 0 && chars[at - 1] == '"' && end.is_some_and(|e| chars[e] == '"' && chars.get(e + 1) == Some(&':'))
}

/// After a masked number: a scaled unit (next to it; after one space a binary prefix, as
/// 749.2 MiB/s, or a time) written unscaled into `out`; how many chars it took. A fixed unit
/// after a space (IOzone's KB/s) stays as it is.
fn unscaled_unit(rest: &[char], out: &mut String) -> usize {
    let spaced = rest.first() == Some(&' ');
    let start = usize::from(spaced);
    let word: String = rest[start..].iter().take_while(|c| c.is_alphabetic()).collect();
    let bytes = SCALED.contains(&word.as_str()) && (!spaced || word.ends_with("iB"));
    let time = TIMES.contains(&word.as_str());
    if !bytes && !time {
        return 0;
    }
    out.push_str(if spaced { " " } else { "" });
    out.push_str(if time {
        "s"
    } else if word.ends_with('B') {
        "B"
    } else {
        ""
    });
    start + word.chars().count()
}

/// `line` without the padding fio puts inside a figure's field (`stdev= 1.23`, `[ 12]`: its `%5.02f`
/// and `%5llu` pad a small figure and not a large one), so a figure's size is not in the output.
fn unpadded(line: &str) -> String {
    let line = line.replace("[ #", "[#");
    let chars: Vec<char> = line.chars().collect();
    let padding = |i: usize| {
        chars[i] == ' ' && i >= 2 && chars[i - 1] == '=' && chars[i - 2] != ' ' && chars.get(i + 1) == Some(&'#')
    };
    (0..chars.len()).filter(|i| !padding(*i)).map(|i| chars[i]).collect()
}

fn collapse_spaces(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if !(c == ' ' && out.ends_with(' ')) {
            out.push(c);
        }
    }
    out
}

/// fio's `#=#%, #=#%, ...`: one bucket.
fn one_latency_bucket(line: &str) -> String {
    let mut line = line.to_string();
    while line.contains("#=#%, #=#%") {
        line = line.replace("#=#%, #=#%", "#=#%");
    }
    line
}

/// A progress line's "elapsed, ETA #s)" or "ETA not known yet)": "ETA ?)".
fn unknown_eta(line: &str) -> String {
    match line.find(" elapsed, ETA ") {
        Some(at) => {
            let from = at + " elapsed, ETA ".len();
            let to = line[from..].find(')').map_or(line.len(), |e| from + e);
            format!("{}?{}", &line[..from], &line[to..])
        }
        None => line.to_string(),
    }
}

/// The summary's "best: ... in write 256k/4k (cell 0)": the cell is CELL.
fn cell_chosen(line: &str) -> String {
    let trimmed = line.trim_start();
    if !(trimmed.starts_with("best:") || trimmed.starts_with("worst:")) {
        return line.to_string();
    }
    match (line.find(" in "), line.rfind(" (cell ")) {
        (Some(from), Some(to)) if from < to => format!("{} in CELL{}", &line[..from], &line[to..]),
        _ => line.to_string(),
    }
}
