//! `iomatrix fio <fio's options> [JOBFILE...]`: fio's command line and job files, run by the
//! access suite's plan and runner through the same harness as `run access`, and stored as
//! access runs (labelled `fio-job=NAME`), so `show`, `compare` and `report` read them. Standard
//! output is fio's: its normal output or, with `--output-format=json`, its JSON layout, both
//! written from the stored runs. iomatrix's own lines (where each job is stored) go to
//! standard error.
//!
//! [`options`] is fio's option table, [`jobfile`] its command line and job files, `plan` a
//! job as the access plan, `output` and `json` the two layouts, `measured` what they read
//! of a stored run.

mod disk;
pub mod jobfile;
mod json;
mod measured;
pub mod options;
mod output;
mod plan;

use super::suite::{Access, Kept};
use anyhow::Context;
use iomatrix_core::{OwnFlags, UsageError};
use iomatrix_harness::args::{flag_value, replace_flag, unless_help, OwnRun};
use iomatrix_harness::{limits, Cost, Prepared, Ranks, Suite};
use jobfile::Format;
use measured::JobFigures;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `iomatrix fio`: fio's own command line and job files.
pub const FRONT_END: iomatrix_harness::FrontEnd = iomatrix_harness::FrontEnd {
    name: "fio",
    about: "Run fio's command line and job files on iomatrix's engine, stored as access runs (`iomatrix fio \
            --help` lists the options)",
    flags: "FIO OPTIONS AND JOB FILES",
    flags_help: "fio's options and job files, e.g. --name=t --rw=randread --bs=4k --size=256m --runtime=10 \
                 --time_based, or job.fio",
    run,
    rerun,
};

const HELP: &str = "\
iomatrix fio: fio's command line and job files, run by iomatrix's engine (the access suite) and
stored as access runs (iomatrix show, compare, report read them).

Usage: iomatrix fio [--output-format=normal|json] --name=JOB [--OPTION=VALUE ...] [--name=JOB2 ...]
       iomatrix fio [--output-format=normal|json] JOBFILE...

Options, as fio means them (sizes: k = 1024; times: seconds unless us, ms, s, m, h, d):
  name, rw|readwrite (read, write, randread, randwrite, rw|readwrite, randrw), rwmixread,
  rwmixwrite, bs|blocksize, bsrange (one size only), bssplit (sizes by share, READS,WRITES apart;
  shares that do not add up to 100 are refused), size, filename, directory,
  iodepth, ioengine (psync, sync, io_uring; libaio runs as io_uring and the output says so),
  numjobs (one client each; reported as one group), runtime with time_based (without
  time_based a job moves size bytes), direct|buffered, group_reporting, stonewall.
  steadystate|ss (iops, iops_slope, bw, bw_slope: LIMIT% or absolute) with ss_dur (whole
  seconds) and ss_ramp end a job once it is steady, judged as fio 3.33 judges it (as
  --steady-state; numjobs are judged together, as fio's group_reporting does).
  ramp_time (an untimed warm-up, as --ramp) and random_distribution (zipf:THETA, pareto:H,
  normal:SIGMA or random, as --distribution) run as fio means them, and so do rate_iops and
  rate (one rate for reads and writes together, per process, paced as fio's linear
  rate_process; rate in bytes a multiple of bs, as --rate requests a second) and invalidate
  (1, the default: the file dropped from the page cache before the job, as --prepare dropped;
  0: kept cached, as --prepare cached). latency_target (microseconds unless a unit says)
  with latency_window (needed: fio's default 0 is refused), latency_percentile and
  latency_run search the deepest queue up to iodepth as fio does, then run the job at the
  depth found (fio ends one window after it settles), and print fio's latency line and JSON
  fields; a target not even depth 1 meets is said, not given a depth. Each job's threads are
  placed by the kernel, as fio's are without cpus_allowed (iomatrix run access keeps each on
  one CPU unless --pin off).
  Any other option is refused by its name (exit 2): nothing is ignored.

Job files: [global] sections, then a section per job; options inherit from the [global]
sections above. Jobs without stonewall between them run at once, as fio runs them (each its
own clients, one stored run with a cell per job); stonewall starts a group that waits for the
one before. Not yet in a group run at once (refused: add stonewall): latency_target,
steadystate, and jobs in different folders.

filename=F: iomatrix lays out its own file in a working folder beside F (removed at the end);
F itself is never opened. directory=D runs in D; without either, in the current folder.

iomatrix's own flags: --db PATH (the results database), --label KEY=VALUE.
Output: fio's normal output, or its JSON layout (--output-format=json); which JSON fields are
filled and which are left out: docs/fio.md.
";

/// `iomatrix fio ARGS`: runs each job as one access run and prints fio's output for it; an option
/// iomatrix cannot run as fio would is a usage error.
pub fn run(args: &[String], global_db: Option<&Path>, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let Some(inv) = unless_help(jobfile::parse(args)?, |inv| inv.help, HELP)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let own = OwnFlags { db: inv.db.clone(), ..OwnFlags::default() };
    let db = OwnRun::of(&own, global_db)?.db;
    check_groups(&inv.jobs)?;
    if ranks.mpi_size().is_some() && inv.jobs.len() > 1 {
        return Err(UsageError::new(
            "under mpirun iomatrix fio runs one job (the ranks are its clients); give one job per mpirun",
        )
        .into());
    }
    // Every job is planned and its counts checked against this machine's limits before the first
    // runs and before a line is printed: a refused option or count in the last job costs no run.
    // The plans are not kept: each is made again as its job starts, so none is held meanwhile.
    let held = held_by_jobs(&inv.jobs);
    // Read once for every job: reading them costs more than planning a small job.
    let system = iomatrix_environment::SystemLimits::read();
    let mut previous: Option<&options::FioJob> = None;
    for job in &inv.jobs {
        // A job whose options are the previous job's (its name aside) plans as that one did.
        if previous.is_some_and(|p| same_options(p, job)) {
            continue;
        }
        let planned = plan::plan(job, &db, &inv.labels, ranks.mpi_size())?;
        check_limits(&planned, ranks, held, inv.jobs.len(), &system)?;
        previous = Some(job);
    }
    check_groups_limits(&inv, &db, ranks, held, &system)?;
    let mut out = Output::start(inv.format, &inv.jobs)?;
    // The output is ended (the group lines, the JSON document's closing) also when a job fails
    // with an error: what the finished jobs measured is printed whole.
    let ran = run_jobs(&inv, &db, ranks, &mut out);
    let ended = out.finish();
    let exit = ran?;
    ended?;
    Ok(exit)
}

/// Runs the groups one after another (a job with stonewall starts a group, as fio's), the jobs of
/// a group at once, each group's output written as it ends.
fn run_jobs(inv: &jobfile::Invocation, db: &Path, ranks: &Ranks, out: &mut Output) -> anyhow::Result<ExitCode> {
    let mut exit = ExitCode::SUCCESS;
    // The database, the folder's environment and the machine's limits: opened and read for the
    // first group, used again by every later one (see the harness's Session).
    let mut session = iomatrix_harness::Session::default();
    for (group, jobs) in groups(&inv.jobs).into_iter().enumerate() {
        let mut planned = Vec::new();
        for job in jobs {
            let one = plan::plan(job, db, &inv.labels, ranks.mpi_size())?;
            say_what_differs(job, &one.flags);
            planned.push(one);
        }
        let (plan, run) = together(planned)?;
        let kept = Kept::default();
        let prepared = Prepared { suite: Access { fio: Some(kept.clone()) }, plan, run };
        exit = iomatrix_harness::run_in(prepared, db, ranks, &mut session)?;
        let Some(stored) = kept.last() else { break };
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        eprintln!(
            "iomatrix: fio job {} stored as run #{} ({}): iomatrix show {1}; iomatrix compare {1} OTHER",
            names.join(", "),
            stored.summary.id,
            stored.summary.status.as_str()
        );
        // The group's output is written now and its figures (two histograms of some 260 KiB a
        // job) dropped before the next group starts.
        let figures: Vec<JobFigures> =
            jobs.iter().enumerate().filter_map(|(cell, job)| JobFigures::of(job, group, &stored, cell)).collect();
        out.group(group, &figures)?;
        if exit != ExitCode::SUCCESS {
            break;
        }
    }
    Ok(exit)
}

/// The jobs in fio's groups: a job with stonewall starts a new group, which waits for the one
/// before; the jobs of a group run at once.
fn groups(jobs: &[options::FioJob]) -> Vec<&[options::FioJob]> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=jobs.len() {
        if i == jobs.len() || jobs[i].stonewall {
            groups.push(&jobs[start..i]);
            start = i;
        }
    }
    groups
}

/// A group's jobs as one run: one job as planned; several as a plan of jobs at once (each job
/// its own clients and its own cell, started at one barrier), run with the first job's options
/// and every job's clients.
fn together(planned: Vec<plan::JobRun>) -> anyhow::Result<(crate::AccessPlan, iomatrix_harness::RunOptions)> {
    let mut jobs = planned.into_iter();
    let first = jobs.next().ok_or_else(|| anyhow::anyhow!("a group of no job"))?;
    let rest: Vec<plan::JobRun> = jobs.collect();
    if rest.is_empty() {
        return Ok((first.plan, first.run));
    }
    let (mut plan, mut run) = (first.plan.clone(), first.run);
    plan.together = std::iter::once((first.job, first.plan))
        .chain(rest.into_iter().map(|j| (j.job, j.plan)))
        .map(|(job, plan)| crate::TogetherJob { name: job.name, plan })
        .collect();
    plan.clients = plan.together.iter().map(|j| j.plan.clients).sum();
    run.clients.count = plan.clients;
    let names: Vec<&str> = plan.together.iter().map(|j| j.name.as_str()).collect();
    for label in run.labels.iter_mut().filter(|(k, _)| k == "fio-job") {
        label.1 = names.join("+");
    }
    Ok((plan, run))
}

/// Whether two jobs were given the same options, their names aside: every field of a job is
/// read from its options, so they plan alike.
fn same_options(a: &options::FioJob, b: &options::FioJob) -> bool {
    let options = |j: &options::FioJob| j.given.iter().filter(|(k, _)| k != "name").cloned().collect::<Vec<_>>();
    a.given.len() == b.given.len() && options(a) == options(b)
}

/// Each group of jobs run at once checked as one run (every job's clients together) against this
/// machine's limits, before anything runs.
fn check_groups_limits(
    inv: &jobfile::Invocation,
    db: &Path,
    ranks: &Ranks,
    held: Cost,
    system: &iomatrix_environment::SystemLimits,
) -> anyhow::Result<()> {
    for group in groups(&inv.jobs).into_iter().filter(|g| g.len() > 1) {
        let planned: Vec<plan::JobRun> =
            group.iter().map(|j| plan::plan(j, db, &inv.labels, ranks.mpi_size())).collect::<Result<_, _>>()?;
        let (plan, run) = together(planned)?;
        let mut job = group[0].clone();
        job.name = format!("{} and the {} job(s) run at once with it", job.name, group.len() - 1);
        check_limits(&plan::JobRun { job, plan, run, flags: Vec::new() }, ranks, held, inv.jobs.len(), system)?;
    }
    Ok(())
}

/// The memory the jobs' options take while the command runs (they are read before the first
/// job starts and kept until the last ends).
fn held_by_jobs(jobs: &[options::FioJob]) -> Cost {
    Cost::memory(jobs.iter().map(options::FioJob::footprint).sum())
}

/// The job's threads and memory, with the options of all `jobs` jobs (`held`), through the plan-time
/// check `run` makes ([`limits::check`], which `run` reaches by [`limits::check_now`]), against the
/// limits read once for every job (`system`); its refusal said in fio's words.
fn check_limits(
    planned: &plan::JobRun,
    ranks: &Ranks,
    held: Cost,
    jobs: usize,
    system: &iomatrix_environment::SystemLimits,
) -> anyhow::Result<()> {
    let clients_here = if ranks.mpi_size().is_some() { 1 } else { planned.run.clients.count };
    // The job count is a knob of the job file's own check (jobfile.rs), where it is what grows.
    let demand = Access { fio: None }
        .demand(&planned.plan, &planned.run.target, clients_here)
        .and(held, &format!("the options of the {jobs} job(s), kept until the last ends"));
    limits::check(&demand, system)
        .map_err(|e| UsageError::new(format!("fio job {}: {} {}", planned.job.name, e.0, plan::FLAG_NAMES)).into())
}

/// Standard output, written as the jobs end: fio's normal layout or its JSON document, each
/// job's part written when the job ends so that nothing of a finished job is held.
enum Output {
    /// fio prints every group's "Run status group" lines after the last job's block: they
    /// wait in an unnamed temporary file (removed when closed), not in memory.
    Normal {
        groups: std::fs::File,
        disks: disk::DiskStats,
    },
    Json(json::Stream, disk::DiskStats),
}

impl Output {
    /// Prints what comes before the first job's figures.
    fn start(format: Format, jobs: &[options::FioJob]) -> anyhow::Result<Output> {
        match format {
            Format::Normal => {
                let groups = tempfile::tempfile().context(
                    "iomatrix fio keeps the \"Run status group\" lines in an unnamed temporary file until the last \
                     job ends, and could not make one (TMPDIR names its folder)",
                )?;
                for (group, jobs) in self::groups(jobs).into_iter().enumerate() {
                    for job in jobs {
                        iomatrix_harness::out::print(&output::job_line(group, job))?;
                    }
                }
                iomatrix_harness::out::print(&output::starting(jobs))?;
                Ok(Output::Normal { groups, disks: disk::DiskStats::default() })
            }
            Format::Json => {
                let (stream, opening) = json::Stream::opening()?;
                iomatrix_harness::out::print(&opening)?;
                Ok(Output::Json(stream, disk::DiskStats::default()))
            }
        }
    }

    /// Prints group `group`'s jobs, and keeps its "Run status group" lines for the end.
    fn group(&mut self, group: usize, jobs: &[JobFigures]) -> anyhow::Result<()> {
        match self {
            Output::Normal { groups, disks } => {
                for figures in jobs {
                    iomatrix_harness::out::print(&output::job_text(figures))?;
                }
                // Jobs at once share one span of the device's activity: added once.
                jobs.first().into_iter().for_each(|f| disks.add(f));
                let status = output::group_status(group, jobs);
                groups.write_all(status.as_bytes()).context("writing the group lines aside")?;
            }
            Output::Json(stream, disks) => {
                for figures in jobs {
                    iomatrix_harness::out::print(&stream.job(figures)?)?;
                }
                jobs.first().into_iter().for_each(|f| disks.add(f));
            }
        }
        Ok(())
    }

    /// Prints what comes after the last job's figures.
    fn finish(self) -> anyhow::Result<()> {
        match self {
            Output::Normal { mut groups, disks } => {
                groups.seek(SeekFrom::Start(0)).context("reading the group lines back")?;
                let mut lines = BufReader::new(groups);
                let mut chunk = String::new();
                while lines.read_line(&mut chunk).context("reading the group lines back")? > 0 {
                    if chunk.len() >= 64 << 10 {
                        iomatrix_harness::out::print(&chunk)?;
                        chunk.clear();
                    }
                }
                iomatrix_harness::out::print(&chunk)?;
                iomatrix_harness::out::print(&disks.text())
            }
            Output::Json(stream, disks) => iomatrix_harness::out::print(&stream.closing(disks.json())?),
        }
    }
}

/// What a group of jobs run at once does not take yet, refused before anything runs: a latency
/// target's search or a steady state (each judged over one job's clients while the others run
/// on), and jobs in different folders (a run has one working folder).
fn check_groups(jobs: &[options::FioJob]) -> Result<(), UsageError> {
    for group in groups(jobs).into_iter().filter(|g| g.len() > 1) {
        let folder =
            |j: &options::FioJob| j.directory.clone().or_else(|| j.filename.as_ref().map(|f| f.with_file_name("")));
        for job in group {
            let why = if job.latency_target.is_some_and(|t| !t.is_zero()) {
                "latency_target"
            } else if job.steady().is_some() {
                "steadystate"
            } else if folder(job) != folder(&group[0]) {
                "a folder (directory, filename) other than the first job's of its group"
            } else {
                continue;
            };
            return Err(UsageError::new(format!(
                "job {}: {why} in a group of jobs run at once (no stonewall between them) is not built yet; add \
                 stonewall to job {0} (or to [global]) to run it after the others",
                job.name
            )));
        }
    }
    Ok(())
}

/// What the run does otherwise than fio would, said on standard error before it starts.
fn say_what_differs(job: &options::FioJob, flags: &[String]) {
    eprintln!(
        "iomatrix: fio job {}: run as iomatrix run access {}",
        job.name,
        iomatrix_harness::args::command_text(flags)
    );
    if let Some(engine) = job.ioengine.filter(|e| e.fio_name() != e.backend()) {
        eprintln!(
            "iomatrix: fio job {}: ioengine={} runs on iomatrix's {} backend (the figures are {2}'s)",
            job.name,
            engine.fio_name(),
            engine.backend()
        );
    }
    if let Some(file) = &job.filename {
        eprintln!(
            "iomatrix: fio job {}: filename={}: iomatrix lays out its own file in a working folder beside it; that \
             file itself is not opened",
            job.name,
            file.display()
        );
    }
    if job.numjobs > 1 && !job.group_reporting {
        eprintln!(
            "iomatrix: fio job {}: numjobs={} is reported as one group (as group_reporting does); each client's \
             figures: iomatrix show",
            job.name, job.numjobs
        );
    }
    if job.steadystate.is_some() && job.steady().is_none() {
        eprintln!(
            "iomatrix: fio job {}: steadystate without ss_dur judges nothing (fio's ss_dur defaults to 0), here as in \
             fio; give ss_dur=SECONDS",
            job.name
        );
    }
    if job.steady().is_some() && job.numjobs > 1 {
        eprintln!(
            "iomatrix: fio job {}: the steady state of numjobs={} is judged over the jobs together (as fio does with \
             group_reporting), and they stop together",
            job.name, job.numjobs
        );
    }
}

/// `rerun` of a run of this front end ([`iomatrix_harness::FrontEnd::rerun`]): the folder is
/// `--directory`; a job file's own folder options stay as the file says.
pub fn rerun(args: &mut Vec<String>, target: Option<&str>, stored_target: Option<PathBuf>) -> Option<PathBuf> {
    match (target, flag_value(args, "--directory")) {
        (Some(t), Some(_)) => {
            replace_flag(args, "--directory", t);
            None
        }
        (None, Some(_)) => None,
        (Some(t), None) => Some(PathBuf::from(t)),
        (None, None) => stored_target,
    }
}
