//! `iomatrix run iozone`: the IOzone matrix with iomatrix's own flags, as a validated plan.

use crate::{IozonePlan, IozoneTest, AUTO_MAX_FILE, AUTO_MAX_RECORD, AUTO_MIN_FILE, AUTO_MIN_RECORD};
use clap::Args;
use iomatrix_core::{parse_size_list, BackendKind, UsageError};
use iomatrix_harness::data::DataArgs;
use iomatrix_harness::{CommonRunArgs, RunOptions, Target};
use std::path::PathBuf;

/// Without --files or --auto: a quick matrix that finishes in seconds.
const DEFAULT_FILES: &str = "64k..16m";

/// `iomatrix run iozone`: IOzone's matrix with iomatrix's own flags.
#[derive(Args, Debug)]
#[command(about = "IOzone's matrix: file size x record size x tests", next_help_heading = "IOzone matrix")]
pub struct RunIozoneArgs {
    /// File sizes: a list and/or power-of-two ranges, e.g. 64k,1m,512m or 64k..512m
    /// [default: 64k..16m, or 64k..512m with --auto]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// Record sizes, as --files [default: 4k..16m; a pair runs only where record <= file]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true)]
    pub records: Option<String>,

    /// IOzone's auto mode: files 64k..512m, records 4k..16m, records below 64k skipped for files above 32m
    #[arg(long)]
    pub auto: bool,

    /// With --auto: keep records below 64k for files above 32m (IOzone's -z)
    #[arg(long, short = 'z')]
    pub all_records: bool,

    /// Tests, comma-separated: write, rewrite, read, reread, random-read, random-write,
    /// backward-read, record-rewrite, stride-read, fwrite, frewrite, fread, freread, mixed
    /// [default: all but mixed, as IOzone]
    #[arg(long, value_name = "TESTS")]
    pub tests: Option<String>,

    /// Include fsync in the write timing (IOzone's -e)
    #[arg(long)]
    pub fsync: bool,

    /// Include close in the timing (IOzone's -c)
    #[arg(long)]
    pub close: bool,

    /// Bypass the page cache with O_DIRECT (IOzone's -I); fwrite/fread tests stay buffered
    #[arg(long)]
    pub direct: bool,

    /// How I/O is issued: psync (pread/pwrite), sync (read/write + lseek), mmap, stdio
    #[arg(long, default_value = "psync", value_name = "BACKEND")]
    pub backend: String,

    /// Also write the tables as an .xlsx workbook (checked before the run: a previous iomatrix
    /// workbook there is replaced, another file only with --force, the results database never)
    #[arg(long, value_name = "FILE")]
    pub xlsx: Option<PathBuf>,

    /// Let --xlsx replace an existing file that is not an iomatrix workbook
    #[arg(long, requires = "xlsx")]
    pub force: bool,

    /// `--verify` and `--compressible`: what the written data holds.
    #[command(flatten)]
    pub data: DataArgs,

    /// The figures over time each cell stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The target, working folder and output flags every writing suite takes.
    #[command(flatten)]
    pub common: CommonRunArgs,
}

impl RunIozoneArgs {
    /// The validated plan and the run's options; `mpi_ranks` is the number of ranks under mpirun.
    pub fn validate(&self, mpi_ranks: Option<usize>) -> anyhow::Result<(IozonePlan, RunOptions)> {
        let run = self.common.options(mpi_ranks)?;
        let mut plan = plan(self, run.clients.count)?;
        plan.repeats = run.repeat.count;
        if run.target.server().is_some() && self.tests.is_none() {
            // The stdio tests measure a local file's C buffering: not run through a protocol client.
            plan.tests.retain(|t| !t.is_stdio());
        }
        check(&plan, &run.target)?;
        Ok((plan, run))
    }
}

fn plan(args: &RunIozoneArgs, clients: usize) -> Result<IozonePlan, UsageError> {
    let sizes =
        |flag: &str, text: &str| parse_size_list(text, 1).map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")));
    let mut plan = IozonePlan::auto(AUTO_MIN_FILE, AUTO_MAX_FILE, AUTO_MIN_RECORD, AUTO_MAX_RECORD);
    plan.skip_small_records_for_large_files = args.auto && !args.all_records;
    plan.file_sizes = match (&args.files, args.auto) {
        (Some(files), _) => sizes("files", files)?,
        (None, true) => plan.file_sizes,
        (None, false) => sizes("files", DEFAULT_FILES)?,
    };
    if let Some(records) = &args.records {
        plan.record_sizes = sizes("records", records)?;
    } else {
        // Keep only the default records that fit the largest file.
        let largest = plan.file_sizes.iter().max().copied().unwrap_or_default();
        plan.record_sizes.retain(|r| *r <= largest);
        if plan.record_sizes.is_empty() {
            plan.record_sizes = vec![largest];
        }
    }
    if let Some(tests) = &args.tests {
        plan.tests = tests
            .split(',')
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.parse::<IozoneTest>().map_err(|e| UsageError::new(format!("--tests: {e}"))))
            .collect::<Result<_, _>>()?;
    }
    plan.fsync = args.fsync;
    plan.close = args.close;
    plan.direct = args.direct;
    plan.backend = args.backend.parse::<BackendKind>().map_err(|e| UsageError::new(format!("--backend: {e}")))?;
    plan.clients = clients;
    plan.content = args.data.content();
    plan.series_interval_ns = args.series.interval_ns()?;
    plan.validate()?;
    Ok(plan)
}

/// The plan against the target: what a protocol client cannot do is refused
/// (stdio's buffering, O_DIRECT: there is no client cache to bypass, the
/// other local backends).
pub fn check(plan: &IozonePlan, target: &Target) -> Result<(), UsageError> {
    plan.validate()?;
    if target.server().is_none() {
        return Ok(());
    }
    if let Some(t) = plan.tests.iter().find(|t| t.is_stdio()) {
        return Err(UsageError::new(format!(
            "--tests {t}: the fwrite/fread tests measure C stdio's buffering of a local file; on a server \
             through iomatrix's own client run the other tests (write, rewrite, read, reread, random-read, \
             random-write, backward-read, record-rewrite, stride-read)"
        )));
    }
    if plan.direct {
        return Err(UsageError::new(
            "--direct: iomatrix's own protocol client keeps no cache, so every request already goes to the \
             server; leave --direct out",
        ));
    }
    if plan.backend != BackendKind::Psync {
        return Err(UsageError::new(format!(
            "--backend {}: on a server through iomatrix's own client the requests go through that client; \
             leave --backend out",
            plan.backend.name()
        )));
    }
    Ok(())
}
