//! A fio job as the access suite's run: its options said as `run access` flags and validated by
//! the same code (so a fio job meets every check `run access` makes: free space, the queue the
//! kernel accepts, O_DIRECT's alignment), with what fio means that iomatrix does otherwise
//! refused by name before anything runs.

use super::options::FioJob;
use crate::AccessPlan;
use clap::Parser;
use iomatrix_core::UsageError;
use iomatrix_harness::RunOptions;
use std::path::{Path, PathBuf};

/// `run access`'s command line, parsed from the flags a fio job is said in.
#[derive(Parser)]
#[command(no_binary_name = true)]
struct AccessFlags {
    #[command(flatten)]
    args: crate::cli::args::RunAccessArgs,
}

/// The access suite's flags its messages name, in fio's words.
pub const FLAG_NAMES: &str =
    "(in fio's words: --bs is bs, --qd iodepth, --file-size size, --clients numjobs, --duration \
                          runtime, --bytes size moved, --backend ioengine, --direct direct)";

/// A job ready to run: the access plan, the run's options, and what its output says of it.
pub struct JobRun {
    pub job: FioJob,
    pub plan: AccessPlan,
    pub run: RunOptions,
    /// The `run access` flags the job was said in (printed on standard error before it runs).
    pub flags: Vec<String>,
}

/// The job's plan and options; `db` is the results database (a job whose `filename` names it
/// is refused), `labels` iomatrix's own `--label`s.
pub fn plan(job: &FioJob, db: &Path, labels: &[String], mpi_ranks: Option<usize>) -> Result<JobRun, anyhow::Error> {
    if job.steady().is_some() && mpi_ranks.is_some_and(|n| n > 1) {
        return Err(UsageError::new(format!(
            "fio job {}: steadystate under mpirun: the ranks judge their own figures apart (as fio's jobs without \
             group_reporting), and fio's output has one steadystate line per job; run it without mpirun (numjobs), \
             or as `iomatrix run access --steady-state` under mpirun, whose show prints each rank's verdict",
            job.name
        ))
        .into());
    }
    let flags = flags_of(job, db, labels, mpi_ranks.is_some())?;
    let parsed = AccessFlags::try_parse_from(&flags).map_err(|e| {
        UsageError::new(format!(
            "job {}: its options as run access flags ({}) were refused: {e}",
            job.name,
            flags.join(" ")
        ))
    })?;
    let (plan, run) = parsed.args.validate(mpi_ranks, db).map_err(|e| {
        // The access suite's words name its own flags: say which fio job they came from.
        anyhow::Error::from(UsageError::new(format!("fio job {}: {e:#} {FLAG_NAMES}", job.name)))
    })?;
    Ok(JobRun { job: job.clone(), plan, run, flags })
}

/// The `run access` flags that say `job`.
fn flags_of(job: &FioJob, db: &Path, labels: &[String], under_mpi: bool) -> Result<Vec<String>, UsageError> {
    let named = |why: String| UsageError::new(format!("fio job {}: {why}", job.name));
    let size = job.size.ok_or_else(|| {
        named(
            "size is not given; give the file's size, e.g. size=1g (fio takes an existing file's size: iomatrix lays \
               out a file of its own)"
                .into(),
        )
    })?;
    let limit = match (job.time_based, job.runtime) {
        (true, Some(runtime)) if runtime.as_millis() == 0 => {
            return Err(named("runtime=0: give a positive runtime".into()))
        }
        (true, Some(runtime)) => vec!["--duration".to_string(), format!("{}ms", runtime.as_millis())],
        (true, None) => {
            return Err(named("time_based without runtime would run forever; give runtime=, e.g. runtime=30".into()))
        }
        (false, Some(_)) => {
            return Err(named(
                "runtime without time_based: fio stops at whichever ends first, the runtime or size bytes moved; \
                 iomatrix runs a job either for a time or for a byte count. Add time_based (run for the runtime), or \
                 leave runtime out (move size bytes)"
                    .into(),
            ))
        }
        (false, None) => vec!["--bytes".to_string(), size.to_string()],
    };
    let engine = match (job.ioengine, job.iodepth) {
        (Some(engine), depth) if depth > 1 && !engine.is_queued() => {
            return Err(named(format!(
                "iodepth={depth} with ioengine={}: a synchronous engine keeps one request in flight (fio runs it at \
                 depth 1 too); give ioengine=io_uring (or libaio) for a queue, or iodepth=1",
                engine.fio_name()
            )))
        }
        (None, depth) if depth > 1 => {
            return Err(named(format!(
                "iodepth={depth} without ioengine: fio's default engine, psync, keeps one request in flight; give \
                 ioengine=io_uring (or libaio) for a queue of {depth}, or iodepth=1"
            )))
        }
        (engine, _) => engine.map_or("psync", |e| e.backend()),
    };
    let target = target_of(job, db)?;
    let mut flags = vec![
        "--target".to_string(),
        target.to_string_lossy().into_owned(),
        // fio takes bssplit over bs.
        if job.bssplit.is_some() { "--bssplit" } else { "--bs" }.into(),
        job.bssplit.as_ref().map_or_else(|| job.bs.to_string(), crate::bssplit::BlockSplit::describe),
        "--read".into(),
        job.read_percent().to_string(),
        "--random".into(),
        if job.mix.random { "100" } else { "0" }.to_string(),
        "--qd".into(),
        job.iodepth.to_string(),
        "--file-size".into(),
        size.to_string(),
        "--backend".into(),
        engine.to_string(),
    ];
    flags.extend(limit);
    // fio's bw and iops samples are taken each 500 ms (its bwavgtime and iopsavgtime): so are
    // the job's figures over time, which the sample lines are made of. Under steadystate each
    // second instead: fio 3.33 judges steady state on one sample a second, and the rule here
    // judges the series' intervals.
    let interval = if job.steady().is_some() { "1s" } else { "500ms" };
    flags.extend(["--interval".to_string(), interval.to_string()]);
    flags.extend(warm_up_and_distribution_flags(job));
    flags.extend(latency_target_flags(job).map_err(named)?);
    if let Some((rule, seconds, ramp)) = job.steady() {
        flags.extend(["--steady-state".to_string(), rule, "--steady-window".to_string(), format!("{seconds}s")]);
        if !ramp.is_zero() {
            flags.extend(["--steady-ramp".to_string(), format!("{}us", ramp.as_micros())]);
        }
    }
    if let Some(iops) = job.paced_iops().map_err(named)? {
        flags.extend(["--rate".to_string(), iops.to_string()]);
    }
    if job.direct {
        flags.push("--direct".into());
    }
    flags.extend(["--prepare".to_string(), if job.invalidate { "dropped" } else { "cached" }.to_string()]);
    // fio leaves a job's threads to the kernel unless cpus_allowed says (which iomatrix fio does
    // not run): so does its job here.
    flags.extend(["--pin".to_string(), "off".to_string()]);
    if !under_mpi {
        flags.extend(["--clients".to_string(), job.numjobs.to_string()]);
    }
    let mut own_labels = vec![format!("fio-job={}", job.name)];
    own_labels.extend(labels.iter().cloned());
    for label in own_labels {
        flags.extend(["--label".to_string(), label]);
    }
    Ok(flags)
}

/// fio's ramp_time and random_distribution as the access plan's `--ramp` and `--distribution`
/// (nothing when they are fio's defaults, so the plan says what fio's job said).
fn warm_up_and_distribution_flags(job: &FioJob) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(ramp) = job.ramp_time.filter(|r| !r.is_zero()) {
        flags.extend(["--ramp".to_string(), format!("{}ms", ramp.as_millis())]);
    }
    if !job.distribution.is_uniform() {
        flags.extend(["--distribution".to_string(), job.distribution.to_string()]);
    }
    flags
}

/// fio's latency_target, latency_window, latency_percentile and latency_run as the access plan's
/// `--latency-*` flags. fio's default window (0) judges at every pass of its loop, often over no
/// request (fio then counts the window failed): iomatrix asks for a window instead. The other
/// three given without a target are refused, as fio would ignore them.
fn latency_target_flags(job: &FioJob) -> Result<Vec<String>, String> {
    // fio's latency_target=0 is no target.
    let Some(target) = job.latency_target.filter(|t| !t.is_zero()) else {
        if job.latency_window.is_some() || job.latency_percentile.is_some() || job.latency_run {
            return Err("latency_window, latency_percentile and latency_run go with latency_target, which is not \
                        given (fio ignores them without it, iomatrix fio ignores nothing): give latency_target, or \
                        leave them out"
                .into());
        }
        return Ok(Vec::new());
    };
    let window = job.latency_window.filter(|w| !w.is_zero()).ok_or_else(|| {
        "latency_target without latency_window (or with 0, fio's default): fio then judges the target at every pass \
         of its loop, often over no completed request, and its depth wanders; give a window each depth runs for, \
         e.g. latency_window=1s"
            .to_string()
    })?;
    let mut flags = vec![
        "--latency-target".to_string(),
        format!("{}us", target.as_micros()),
        "--latency-window".to_string(),
        format!("{}us", window.as_micros()),
    ];
    if let Some(p) = job.latency_percentile {
        flags.extend(["--latency-percentile".to_string(), p.to_string()]);
    }
    if job.latency_run {
        flags.push("--latency-run".into());
    }
    Ok(flags)
}

/// The folder the job runs in: `directory`, else `filename`'s folder (iomatrix lays out its own
/// file in a working folder there: the named file is never opened), else the current folder as
/// fio's default. A `filename` that is the results database or a device is refused.
fn target_of(job: &FioJob, db: &Path) -> Result<PathBuf, UsageError> {
    let named = |why: String| UsageError::new(format!("fio job {}: {why}", job.name));
    let Some(file) = &job.filename else {
        return Ok(job.directory.clone().unwrap_or_else(|| PathBuf::from(".")));
    };
    let full = match &job.directory {
        Some(dir) if file.is_relative() => dir.join(file),
        _ => file.clone(),
    };
    if same_file(&full, db) {
        return Err(named(format!(
            "filename={} is the results database; a benchmark's file would overwrite it. Give another filename, or \
             directory=",
            full.display()
        )));
    }
    if let Ok(meta) = std::fs::metadata(&full) {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_block_device() || kind.is_char_device() {
            return Err(named(format!(
                "filename={} is a device; iomatrix fio runs on files only. For a raw device (its data destroyed) use \
                 iomatrix run access --device {0} --destroy-data-on {0}",
                full.display()
            )));
        }
        if kind.is_dir() {
            return Err(named(format!("filename={} is a folder; give it as directory=", full.display())));
        }
    }
    let folder = match full.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(folder)
}

/// Whether `a` and `b` are one file (the same inode), or the same path where either is missing.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => {
            let full = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            full(a) == full(b)
        }
    }
}
