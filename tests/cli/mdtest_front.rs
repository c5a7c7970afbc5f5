//! `iomatrix mdtest`: mdtest's command line run as `run metadata` runs, printed in mdtest's
//! layout. Its SUMMARY table is read back by the parser that reads a real mdtest's output
//! (tests/fixtures/mdtest), and each column must sit at the byte a real mdtest puts it; every
//! option refused exits 2 naming it, before anything runs (nothing made in -d, nothing stored);
//! IO500's own mdtest lines run at a tiny scale.

use crate::helpers::*;
use crate::mpi::{mpi_binary, mpirun};
use iomatrix_metadata::import::summary::{parse_outputs, MdtestOutput, SummaryTable};
use iomatrix_metadata::Phase;
use std::path::PathBuf;
use std::time::Duration;

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mdtest").join(format!("{name}.txt"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `iomatrix mdtest ARGS -d TARGET`; must succeed; its standard output read as mdtest's.
fn mdtest_ok(sb: &Sandbox, args: &[&str]) -> (MdtestOutput, String) {
    let target = sb.target();
    let mut all = vec!["mdtest"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-d", target.to_str().unwrap()]);
    let out = sb.run(&all);
    assert_success(&out);
    let (stdout, _) = text(&out);
    let mut outputs = parse_outputs(&stdout).unwrap_or_else(|e| panic!("not mdtest's layout: {e}\n{stdout}"));
    assert_eq!(outputs.len(), 1, "{stdout}");
    (outputs.remove(0), stdout)
}

/// The rows' names and each figure's end byte, as a real mdtest printed them.
fn same_rows_and_columns(ours: &SummaryTable, theirs: &SummaryTable) {
    let names = |t: &SummaryTable| t.rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(ours), names(theirs), "the rows mdtest prints, in its order");
    for (a, b) in ours.rows.iter().zip(&theirs.rows) {
        assert_eq!(a.figure_ends, b.figure_ends, "{}: the columns at mdtest's bytes", a.name);
    }
}

#[test]
fn the_summary_table_reads_as_a_real_mdtests_with_its_columns() {
    let sb = Sandbox::new();
    let (ours, stdout) = mdtest_ok(&sb, &["-n", "200", "-u", "-i", "2", "-P"]);
    let theirs = parse_outputs(&fixture("master-P")).unwrap().remove(0);
    assert!(ours.version.as_deref().is_some_and(|v| v.starts_with("4.1.0+iomatrix-")), "{stdout}");
    assert_eq!((ours.tasks, ours.nodes, ours.items), (Some(1), Some(1), Some(200)), "{stdout}");
    assert_eq!(ours.item_kinds.as_deref(), Some("files/directories"));
    assert_eq!(ours.path.as_deref(), Some(sb.target().to_str().unwrap()));
    let (rate, time) = (ours.rate.unwrap(), ours.time.unwrap());
    assert!(rate.heading.starts_with("SUMMARY rate (in ops/sec): (of 2 iterations)"), "{stdout}");
    same_rows_and_columns(&rate, theirs.rate.as_ref().unwrap());
    same_rows_and_columns(&time, theirs.time.as_ref().unwrap());
    for row in &rate.rows {
        assert!(row.min() > 0.0 && row.min() <= row.mean() && row.mean() <= row.max(), "{}: {stdout}", row.name);
    }
    // The figures are the stored run's: the SUMMARY rule of each iteration's cell.
    let run = sb.last_run();
    let create: Vec<f64> = cells(&run)
        .iter()
        .filter(|c| c["test"] == "file-create" || c["test"] == "file-create #2")
        .map(|c| c["metrics"]["phase"]["rate_slowest_times_clients"].as_f64().unwrap())
        .collect();
    assert_eq!(create.len(), 2, "a cell per iteration");
    let row = rate.row(Phase::FileCreate).unwrap();
    let max = create.iter().copied().fold(0.0, f64::max);
    assert!((row.max() - max).abs() < 0.001, "printed {} stored {max}", row.max());
    assert!(sb.leftovers().is_empty(), "the working folder removed");
}

#[test]
fn files_only_and_tree_rows_match_mdtests() {
    let sb = Sandbox::new();
    let (ours, stdout) = mdtest_ok(&sb, &["-n", "100", "-F", "-C", "-T", "-r"]);
    let theirs = parse_outputs(&fixture("master-F-C-T-r")).unwrap().remove(0);
    same_rows_and_columns(ours.rate.as_ref().unwrap(), theirs.rate.as_ref().unwrap());
    assert!(!ours.rate.as_ref().unwrap().row(Phase::FileRead).unwrap().ran(), "-E not given: 0.000, {stdout}");
    let (tree, _) = mdtest_ok(&sb, &["-z", "2", "-b", "4", "-I", "3", "-L"]);
    assert_eq!(tree.items, Some(48), "3 items in each of 16 leaves, as mdtest counts them");
    let theirs = parse_outputs(&fixture("master-z2-b4-I10-L")).unwrap().remove(0);
    same_rows_and_columns(tree.rate.as_ref().unwrap(), theirs.rate.as_ref().unwrap());
}

#[test]
fn every_refused_option_exits_2_naming_it_before_anything_runs() {
    let sb = Sandbox::new();
    let target = sb.target();
    let d = target.to_str().unwrap();
    for (args, named) in [
        (vec!["-n", "10", "-a", "MPIIO"], "-a MPIIO"),
        (vec!["-n", "10", "-B"], "-B"),
        (vec!["-n", "10", "-c"], "-c"),
        (vec!["-n", "10", "-S"], "-S"),
        (vec!["-n", "10", "-k"], "-k"),
        (vec!["-n", "10", "-f", "1"], "-f"),
        (vec!["-n", "10", "-l", "2"], "-l"),
        (vec!["-n", "10", "-s", "1"], "-s"),
        (vec!["-n", "10", "-p", "5"], "-p"),
        (vec!["-n", "10", "-g"], "-g"),
        (vec!["-n", "10", "-v"], "-v"),
        (vec!["-n", "10", "-V", "2"], "-V"),
        (vec!["-n", "10", "-X"], "-X"),
        (vec!["-n", "10", "-Z"], "-Z"),
        (vec!["-n", "10", "--verify-read"], "--verify-read"),
        (vec!["-n", "10", "--verify-write"], "--verify-write"),
        (vec!["-n", "10", "--run-cmd-before-phase", "true"], "--run-cmd-before-phase"),
        (vec!["-n", "10", "--run-cmd-after-phase", "true"], "--run-cmd-after-phase"),
        (vec!["-n", "10", "--savePerOpDataCSV", "x"], "--savePerOpDataCSV"),
        (vec!["-n", "10", "--showRankStatistics"], "--showRankStatistics"),
        (vec!["-n", "10", "--print-all-procs"], "--print-all-procs"),
        (vec!["-n", "10", "--warningAsErrors"], "--warningAsErrors"),
        (vec!["-n", "10", "--posix.odirect"], "--posix.odirect"),
        (vec!["-n", "10", "--allocateBufferOnGPU", "1"], "--allocateBufferOnGPU"),
        (vec!["-n", "10", "--verify"], "--verify"),
        (vec!["-n", "10", "-q"], "-q"),
        (
            vec!["-n", "10", "-z", "2", "-b", "3", "-W", "5"],
            "-W (the stonewall) works only with a branching factor of 1",
        ),
        (vec!["-n", "10", "-T", "-d", "nfs://127.0.0.1/nowhere"], "nfs:// or smb:// folder is not taken yet"),
        (vec!["-n", "10", "-I", "5"], "-n with -I"),
        (vec!["-F"], "give -n N"),
        (vec!["-n", "10", "-d", "a@b"], "several folders"),
        (vec!["-n", "10", "-e", "100"], "-e 100 reads more than -w 0"),
        // Refused before any connection: no server needs to answer.
        (vec!["-n", "10", "-Y", "-d", "nfs://127.0.0.1/nowhere"], "-Y on an nfs:// or smb:// folder"),
    ] {
        let mut all = vec!["mdtest", "-d", d];
        all.extend_from_slice(&args);
        assert_usage_error(&sb.run(&all), named);
        let made: Vec<PathBuf> = std::fs::read_dir(&target).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(made.is_empty(), "{args:?} made {made:?}");
    }
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty(), "nothing stored");
}

/// IO500's two mdtest lines (src/phase_mdtest_easy.c and phase_mdtest_hard.c of IO500's
/// io500 repository, with their write phase's -C -W), at a tiny scale.
#[test]
fn io500s_mdtest_lines_run_and_print() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let (easy_sw, csv) = (dir.join("mdtest-easy.stonewall"), dir.join("easy.csv"));
    let easy = [
        "-n",
        "300",
        "-u",
        "-L",
        "-F",
        "-P",
        "-G",
        "270669",
        "-N",
        "1",
        "-x",
        easy_sw.to_str().unwrap(),
        "-C",
        "-W",
        "1",
        "-a",
        "POSIX",
        "--saveRankPerformanceDetails",
        csv.to_str().unwrap(),
    ];
    let (out, stdout) = mdtest_ok(&sb, &easy);
    let create = out.rate.as_ref().unwrap().row(Phase::FileCreate).unwrap();
    assert!(create.ran(), "{stdout}");
    assert!(out.time.is_some(), "-P: the time table");
    // -x: the count the stonewall reached where it fired (a loaded machine), else every item.
    let run = sb.last_run();
    let stored = cells(&run).into_iter().find(|c| c["test"] == "file-create").unwrap();
    let count = stored["metrics"]["phase"]["stonewall"]["count_reached"].as_u64().unwrap_or(300);
    assert_eq!(std::fs::read_to_string(&easy_sw).unwrap(), count.to_string(), "mdtest's -x count");
    let lines: Vec<String> = std::fs::read_to_string(&csv).unwrap().lines().map(str::to_string).collect();
    let mdtests = fixture_csv_header();
    assert_eq!(lines[0], mdtests, "mdtest's CSV header");
    assert!(lines[1].starts_with(&format!("all,{count},")), "{}", lines[1]);
    assert_eq!(lines.len(), 3, "all, then the one task");
    let hard_sw = dir.join("mdt_hard-stonewall");
    let hard = [
        "-n",
        "300",
        "-t",
        "-w",
        "3901",
        "-e",
        "3901",
        "-P",
        "-G",
        "270669",
        "-N",
        "1",
        "-F",
        "-x",
        hard_sw.to_str().unwrap(),
        "-C",
        "-T",
        "-E",
        "-r",
        "-W",
        "1",
        "-a",
        "POSIX",
    ];
    let (out, stdout) = mdtest_ok(&sb, &hard);
    for phase in [Phase::FileCreate, Phase::FileStat, Phase::FileRead, Phase::FileRemove] {
        assert!(out.rate.as_ref().unwrap().row(phase).unwrap().ran(), "{phase:?}: {stdout}");
    }
    let run = sb.last_run();
    let read = cells(&run).into_iter().find(|c| c["test"] == "file-read").unwrap();
    // Every file made (fewer than 300 where the stonewall fired on a loaded machine), 3901 bytes each.
    let files = read["metrics"]["phase"]["items"].as_u64().unwrap();
    assert!(files > 0 && files <= 300, "{read}");
    assert_eq!(read["bytes"].as_u64(), Some(files * 3901), "-e 3901 read from each file");
}

/// The header mdtest wrote for IO500's mdtest-easy-write (its first line, the fixture's README
/// says how it ran).
fn fixture_csv_header() -> String {
    let names = [
        "Directory creation",
        "Directory stat",
        "Directory read",
        "Directory rename",
        "Directory removal",
        "File creation",
        "File stat",
        "File read",
        "File removal",
        "Tree creation",
        "Tree removal",
    ];
    names.iter().fold("rank,items".to_string(), |s, n| format!("{s},rate-{n},time-{n}"))
}

#[test]
fn two_mpi_ranks_are_two_tasks() {
    let Some(bin) = mpi_binary() else { return };
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [bin.to_str().unwrap(), "mdtest", "-n", "100", "-u", "-d", target.to_str().unwrap()];
    let (out, took) = mpirun(&sb, 2, &args, Duration::from_secs(120));
    assert_success(&out);
    let (stdout, _) = text(&out);
    let ours = parse_outputs(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}")).remove(0);
    assert_eq!((ours.tasks, ours.items), (Some(2), Some(200)), "in {took:?}: {stdout}");
    let theirs = parse_outputs(&fixture("master-np2-n1000-u")).unwrap().remove(0);
    same_rows_and_columns(ours.rate.as_ref().unwrap(), theirs.rate.as_ref().unwrap());
    assert!(sb.leftovers().is_empty());
    // IO500's stonewalled write under mpirun: the ranks share the count the stonewall reached.
    let walled = [bin.to_str().unwrap(), "mdtest", "-n", "100", "-F", "-C", "-W", "1", "-d", target.to_str().unwrap()];
    let (out, took) = mpirun(&sb, 2, &walled, Duration::from_secs(120));
    assert_success(&out);
    let (stdout, _) = text(&out);
    let walled = parse_outputs(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}")).remove(0);
    assert_eq!(walled.tasks, Some(2), "in {took:?}: {stdout}");
    assert!(stdout.contains("   File creation "), "{stdout}");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn help_lists_what_is_taken_and_refused() {
    let sb = Sandbox::new();
    let out = sb.run(&["mdtest", "-h"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("-W S   stonewall") && stdout.contains("Refused, by name"), "{stdout}");
}
