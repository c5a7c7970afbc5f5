//! `iomatrix mdtest <mdtest's options>`: mdtest 4.x's command line ([`crate::front::options`]),
//! run by the same harness as `run metadata` (threads, or one client per MPI rank under
//! mpirun), stored like any run, and printed in mdtest's layout on standard output (iomatrix's
//! own tables go to standard error, so a script reading mdtest's output reads only that).

use super::suite::Metadata;
use crate::front::files::{RankDetailsKind, StonewallStatusKind};
use crate::front::{options, output, plan, FrontOutput};
use crate::plan::{ItemKinds, MetadataPlan, Phase};
use iomatrix_guard::{Checked, Kind, Output};
use iomatrix_harness::args::{rerun_in_folder_flag, OwnRun};
use iomatrix_harness::clients::{ClientArgs, ClientPlan};
use iomatrix_harness::repeat::Repeat;
use iomatrix_harness::{Prepared, Ranks, Target};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `iomatrix mdtest`: mdtest's own command line.
pub const FRONT_END: iomatrix_harness::FrontEnd = iomatrix_harness::FrontEnd {
    name: "mdtest",
    about: "Run the metadata suite with mdtest's own command line, printed in mdtest's layout (`iomatrix mdtest -h` lists the options)",
    flags: "MDTEST OPTIONS",
    flags_help: "mdtest 4.x's options, e.g. -n 1000 -u -d /mnt/x (-a POSIX only; see docs/metadata.md)",
    run,
    rerun: rerun_in_folder_flag,
};

/// mdtest's default folder when -d is not given.
const DEFAULT_DIR: &str = "./out";

/// Runs mdtest's options through the harness.
pub fn run(args: &[String], global_db: Option<&Path>, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        iomatrix_harness::out::print(options::HELP)?;
        return Ok(ExitCode::SUCCESS);
    }
    let parsed = options::parse(args)?;
    let plan = read_back_count(plan::plan(&parsed)?, &parsed)?;
    let own = OwnRun::of(&parsed.own, global_db)?;
    let dir = parsed.dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
    let path = dir.to_string_lossy().into_owned();
    let target = Target::parse_folder(&path)?;
    target.check_front_end_folder(
        &format!("mdtest: -d {path}"),
        "give -d an existing folder to test in (iomatrix makes its working folder there)",
    )?;
    refuse_what_the_suite_does_not_take(&plan, &target)?;
    let rank_details =
        checked(parsed.rank_details_csv.as_deref(), "--saveRankPerformanceDetails", &RankDetailsKind, &own.db)?;
    // -x is written by a run that creates files, read by one that does not (read_back_count).
    let writes_x = plan.phases.contains(&Phase::FileCreate);
    let x = parsed.stonewall_file.as_deref().filter(|_| writes_x);
    let stonewall_file = checked(x, "-x", &StonewallStatusKind, &own.db)?;
    let front = FrontOutput {
        command_line: output::command_line(&program(), args),
        fs: fs_words(&target),
        plan: plan.clone(),
        path,
        started_ms: now_ms(),
        print_time: parsed.print_time,
    };
    let clients = ClientPlan::from_args(&ClientArgs::default(), ranks.mpi_size())?;
    // Inodes, space, open files and memory, before anything is made, as `run metadata` checks them.
    if let Target::Folder(dir) = &target {
        crate::limits::check_fits(&plan, dir, clients.count).map_err(iomatrix_core::UsageError::new)?;
    }
    // Each of mdtest's -i iterations is a sample of each phase.
    let repeat = Repeat { count: plan.iterations, tolerance_pct: None, max: plan.iterations };
    let suite = Metadata::with_front_end(&target, front, rank_details, stonewall_file);
    let run = own.options(target, false, clients, repeat);
    iomatrix_harness::run(Prepared { suite, plan, run }, &own.db, ranks)
}

/// A run without -C given `-x F`: the count an earlier -C -W run wrote there, read back as
/// mdtest reads it (its phases then work on that many files per task); a missing file is
/// mdtest's warning and -n's count. A run of directories only reads none (mdtest's -x counts files).
fn read_back_count(plan: MetadataPlan, parsed: &options::MdtestArgs) -> anyhow::Result<MetadataPlan> {
    let Some(path) = parsed.stonewall_file.as_deref() else { return Ok(plan) };
    if plan.phases.contains(&Phase::FileCreate) || plan.kinds == ItemKinds::Dirs {
        return Ok(plan);
    }
    let shown = path.display().to_string();
    match crate::front::files::read_stonewall_status(path)? {
        Some(count) => Ok(plan::with_stonewall_count(plan, count, &shown)?),
        None => {
            eprintln!(
                "iomatrix mdtest: warning: -x {shown}: no such file (mdtest: \"Could not read stonewall status \
                 file\"); the phases work on -n's {} files per task",
                plan::items_per_client(&plan)
            );
            Ok(plan)
        }
    }
}

/// What `run metadata` refuses of such a plan, in mdtest's words (its -Y).
fn refuse_what_the_suite_does_not_take(
    plan: &crate::MetadataPlan,
    target: &Target,
) -> Result<(), iomatrix_core::UsageError> {
    if plan.in_place && target.server().is_some() {
        return Err(iomatrix_core::UsageError::new(
            "-C, -T, -E, -r or -U apart (a run that leaves its items, or works on what an earlier run left) on an \
             nfs:// or smb:// folder is not taken yet: give -d a local (or mounted) folder, or run every phase \
             at once (-C -T -E -r)",
        ));
    }
    if plan.sync_after_phase && target.server().is_some() {
        return Err(iomatrix_core::UsageError::new(
            "-Y on an nfs:// or smb:// folder: iomatrix's own protocol client keeps no cache, every write is sent \
             before the phase ends; leave -Y out",
        ));
    }
    Ok(())
}

/// A file mdtest writes, judged before anything runs (exit 2 on a path that cannot be written).
fn checked(path: Option<&Path>, flag: &str, kind: &dyn Kind, db: &Path) -> anyhow::Result<Option<Checked>> {
    let Some(path) = path else { return Ok(None) };
    Ok(Some(Output { path, flag, kind, force: false, database: Some(db) }.check()?))
}

/// The program as `Command line used:` names it.
fn program() -> String {
    let exe = std::env::args().next().unwrap_or_else(|| "iomatrix".into());
    format!("{exe} mdtest")
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// mdtest's `FS` line for a local folder (none on a server: mdtest prints none when its
/// backend's statfs fails).
fn fs_words(target: &Target) -> Option<String> {
    let Target::Folder(dir) = target else { return None };
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(output::fs_words(
        s.f_blocks.saturating_mul(s.f_frsize),
        s.f_bfree.saturating_mul(s.f_frsize),
        s.f_files,
        s.f_ffree,
    ))
}

/// `iomatrix mdtest`'s end: mdtest's output from the stored run's phases on standard output,
/// then `--saveRankPerformanceDetails`' CSV and `-x`'s count where asked. A run that did not
/// complete prints none of them, as mdtest prints no table when it fails (iomatrix's own tables,
/// on standard error, say what happened).
pub(super) fn print_stored(
    out: &FrontOutput,
    run: &iomatrix_store::StoredRun,
    rank_details: Option<&iomatrix_guard::Checked>,
    stonewall_file: Option<&iomatrix_guard::Checked>,
) -> anyhow::Result<()> {
    if run.summary.status != iomatrix_store::RunStatus::Complete {
        return Ok(());
    }
    let results = crate::stored::phase_results(run);
    let tasks = run.cell_results.first().map_or(1, |c| c.clients.max(1));
    iomatrix_harness::out::print(&out.report(&results, tasks, crate::front::nodes(run), now_ms()))?;
    let per_task = results
        .iter()
        .find_map(|r| r.stonewall.as_ref().map(|s| s.count_reached))
        .unwrap_or_else(|| plan::items_per_client(&out.plan));
    if let Some(file) = rank_details {
        file.write(crate::front::files::rank_details_csv(&results, per_task, tasks, out.plan.iterations).as_bytes())?;
    }
    let status = crate::front::files::stonewall_status(&results, out.plan.stonewall.is_some(), per_task);
    if let (Some(file), Some(count)) = (stonewall_file, status) {
        file.write(count.as_bytes())?;
    }
    Ok(())
}
