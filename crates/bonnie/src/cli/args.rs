//! `iomatrix run bonnie`: Bonnie's tests with iomatrix's own flags, as a
//! validated plan.

use crate::{BonniePlan, PerChar};
use clap::Args;
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_harness::data::DataArgs;
use iomatrix_harness::repeat::{Repeat, RepeatArgs};
use iomatrix_harness::{CommonRunArgs, RunOptions, Target};

/// Bonnie's tests: per-char and block I/O, rewrite, random seeks, file create/stat/delete
///
/// --target may be a server: nfs://host[:port]/export[/path] or
/// smb://[user@]host[:port]/share[/path] run every test through iomatrix's own NFSv3/SMB2/3
/// client (no mount, no client cache): each client and each seeker has its own session;
/// putc/getc buffer one negotiated request (at most 1 MiB); --sync is NFS COMMIT / SMB FLUSH;
/// the file tests use the protocol's exclusive create, stat and folder listing. There the
/// twice-the-RAM rule applies only to a RAM stated with --ram (the server's); --direct is
/// refused (no client cache to bypass). The same goes for `iomatrix bonnie -d URL`.
// The doc comment is clap's help text: `[user@]host[:port]` there is a URL's shape, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args, Debug)]
#[command(next_help_heading = "Bonnie")]
pub struct RunBonnieArgs {
    /// Test file size; at least twice the RAM unless --ram or --allow-cache
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: String,

    /// Chunk of the block tests [default: 8k]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub chunk: Option<String>,

    /// File tests with N x 1024 files (0 skips them)
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub files: u64,

    /// File tests with exactly N files instead of --files' N x 1024 (small tests on slow servers)
    #[arg(long, value_name = "N", conflicts_with = "files")]
    pub file_count: Option<u64>,

    /// Run the whole set N times
    #[arg(long, value_name = "N")]
    pub repeats: Option<u32>,

    /// The RAM to assume for the twice-the-RAM rule, e.g. 512m
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub ram: Option<String>,

    /// Run even if the file is smaller than twice the RAM (the page cache may then serve the reads)
    #[arg(long)]
    pub allow_cache: bool,

    /// Skip the per-char (putc/getc) tests
    #[arg(long)]
    pub fast: bool,

    /// Per-char tests: bonnie (the original Bonnie's putc/getc through a stdio-like buffer, over the
    /// whole file) or bonnie++ (bonnie++ 2.00a's: one write(2)/read(2) system call per byte over the
    /// first 3 MiB, fsync before close) [default: bonnie; `iomatrix bonnie` defaults to bonnie++]
    #[arg(long, value_name = "STYLE", value_parser = ["bonnie", "bonnie++"])]
    pub per_char: Option<String>,

    /// Bytes the per-char tests write and read, at most the file [default: the whole file with
    /// --per-char bonnie, 3m with bonnie++]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub per_char_size: Option<String>,

    /// O_DIRECT for the block write, rewrite, block read and seek tests
    #[arg(long)]
    pub direct: bool,

    /// fsync before each close and after each seek write-back and file create/delete (bonnie++'s -b)
    #[arg(long)]
    pub sync: bool,

    /// fsync the data file before every close, inside the timing, as bonnie++ 2.00a always does
    /// (putc, write, rewrite, getc, read, each seeker); `iomatrix bonnie` does it
    #[arg(long)]
    pub fsync_close: bool,

    /// Seeks in the seek test, over all seeker threads [default: 8192, as bonnie++]
    #[arg(long, value_name = "N")]
    pub seeks: Option<u64>,

    /// Seeker threads in the seek test, each with its own descriptor (on a server, its own
    /// session) [default: 3, as Bonnie and bonnie++ 1.03; `iomatrix bonnie` uses bonnie++ 2.00a's 5]
    #[arg(long, value_name = "N")]
    pub seekers: Option<usize>,

    /// `--verify` and `--compressible`: what the written data holds.
    #[command(flatten)]
    pub data: DataArgs,

    /// The figures over time each test stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The target, working folder and output flags every writing suite takes.
    #[command(flatten)]
    pub common: CommonRunArgs,
}

impl RunBonnieArgs {
    /// The validated plan and the run's options; `mpi_ranks` is the number of ranks under mpirun.
    pub fn validate(&self, mpi_ranks: Option<usize>) -> anyhow::Result<(BonniePlan, RunOptions)> {
        let mut run = self.common.options(mpi_ranks)?;
        let size = |flag: &str, text: &str| {
            text.parse::<ByteSize>().map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")))
        };
        let mut plan = BonniePlan::new(size("size", &self.size)?);
        if let Some(chunk) = &self.chunk {
            plan.chunk = size("chunk", chunk)?;
        }
        plan.files = self.file_count.unwrap_or(self.files.saturating_mul(crate::FILES_UNIT));
        plan.repeats = match (&self.repeats, run.repeat.count) {
            (Some(r), 1) => *r,
            (None, n) => n,
            (Some(r), n) => {
                return Err(
                    UsageError::new(format!("--repeat {n} and --repeats {r}: give one (they mean the same)")).into()
                )
            }
        };
        if plan.repeats != run.repeat.count {
            // --repeats is bonnie++'s -x: the samples --tolerance and --max-repeats count from.
            let flags = RepeatArgs { repeat: plan.repeats, ..self.common.run.repeat.clone() };
            run.repeat = Repeat::from_args(&flags)?;
        }
        plan.ram = self.ram.as_deref().map(|r| size("ram", r)).transpose()?;
        plan.allow_cache = self.allow_cache;
        plan.skip_per_char = self.fast;
        plan.per_char_size = self.per_char_size.as_deref().map(|s| size("per-char-size", s)).transpose()?;
        plan.set_per_char(self.per_char.as_deref().map(str::parse::<PerChar>).transpose()?.unwrap_or_default());
        plan.direct = self.direct;
        plan.sync = self.sync;
        plan.fsync_close = self.fsync_close;
        plan.seeks = self.seeks.unwrap_or(plan.seeks);
        plan.seekers = self.seekers.unwrap_or(plan.seekers);
        plan.content = self.data.content();
        plan.series_interval_ns = self.series.interval_ns()?;
        check(&plan, &run.target)?;
        Ok((plan, run))
    }
}

/// The plan against the target, for both front ends. Over a protocol client
/// this machine's page cache is not in the way: only a RAM stated with
/// -r/--ram (the server's) is held against the file size; and there is no
/// client cache for O_DIRECT to bypass.
pub fn check(plan: &BonniePlan, target: &Target) -> Result<(), UsageError> {
    let on_server = target.server().is_some();
    plan.validate(if on_server { 0 } else { iomatrix_environment::machine_ram_bytes() })?;
    if on_server && plan.direct {
        return Err(UsageError::new(
            "--direct (-D): iomatrix's own protocol client keeps no cache, so every request already goes to the \
             server; leave --direct (-D) out",
        ));
    }
    Ok(())
}
