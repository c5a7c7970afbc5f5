//! `iomatrix run fileserver`: seed 003's file-server load with iomatrix's
//! flags, as a validated plan.

use crate::{FileSizes, FileserverPlan, Then};
use clap::Args;
use iomatrix_core::human::bytes as human;
use iomatrix_core::{parse_size_list, ByteSize, UsageError};
use iomatrix_harness::data::DataArgs;
use iomatrix_harness::{CommonRunArgs, RunOptions};
use std::path::PathBuf;

/// Seed 003's file sizes.
pub const DEFAULT_SIZES: &str = "4k,8k,16k,32k,64k,128k,256k,512k,1m,2m";

/// File-server load (seed 003): many connections at once, each writing then reading its own
/// files, every operation (create, open, write, read, fsync, close) timed on its own. On an
/// nfs:// or smb:// target each connection is a session of iomatrix's own protocol client
/// (its own TCP connection, no client cache); --drop-caches is refused there
#[derive(Args, Debug)]
#[command(next_help_heading = "File-server load")]
pub struct RunFileserverArgs {
    /// Connections (threads), each in its own folder with its own files, started together; on
    /// an nfs:// or smb:// target each also has its own session (TCP connection) to the server,
    /// connected before the write phase (untimed). Their threads and memory are checked against
    /// this machine's limits before the run starts
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub connections: usize,

    /// Files each connection writes and then reads
    #[arg(long, default_value_t = 100, value_name = "M")]
    pub files_per_connection: u64,

    /// File sizes, cycled through: file i of a connection gets the (i mod count)-th size
    /// [default: 4k,8k,16k,32k,64k,128k,256k,512k,1m,2m]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true, conflicts_with = "profile")]
    pub sizes: Option<String>,

    /// Draw file sizes from a size profile (`iomatrix scan PATH --save-profile FILE`) instead of --sizes
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,

    /// Files are written and read in requests of this size
    #[arg(long, default_value = "4k", value_name = "SIZE", allow_hyphen_values = true)]
    pub record: String,

    /// After the write phase, read every file back (the default)
    #[arg(long, conflicts_with = "mix")]
    pub write_then_read: bool,

    /// After the write phase, visit each file once in random order and read it whole
    /// (READ_PCT% of the visits) or rewrite it
    #[arg(long, value_name = "READ_PCT", allow_hyphen_values = true)]
    pub mix: Option<String>,

    /// fsync after every N records of a file and after its last record (timed as "fsync")
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fsync_every: Option<String>,

    /// Each connection writes N files at once, one record to each in turn (many files growing
    /// at once in small appends: the case delayed allocation exists for)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub interleave: Option<String>,

    /// Root only: sync and drop the page cache between the write and the read phase, so reads
    /// come from the storage. Refused on nfs:// and smb:// targets: the protocol client keeps no
    /// cache, and the server's cannot be dropped from here
    #[arg(long)]
    pub drop_caches: bool,

    /// Seed of the file-size draws (--profile) and the mixed phase's order
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub seed: u64,

    /// `--verify` and `--compressible`: what the written data holds.
    #[command(flatten)]
    pub data: DataArgs,

    /// The figures over time each phase stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The target, working folder and output flags every writing suite takes.
    #[command(flatten)]
    pub common: CommonRunArgs,
}

impl RunFileserverArgs {
    /// The validated plan and the run's options; `mpi_ranks` is the number of ranks under mpirun.
    pub fn validate(&self, mpi_ranks: Option<usize>) -> anyhow::Result<(FileserverPlan, RunOptions)> {
        let run = self.common.options(mpi_ranks)?;
        let mut plan = plan(self)?;
        plan.repeats = run.repeat.count;
        if run.target.server().is_some() && plan.drop_caches {
            return Err(UsageError::new(
                "--drop-caches: iomatrix's own protocol client keeps no cache (every request goes to the server), \
                 and the server's cache cannot be dropped from here; leave --drop-caches out (or drop it on the \
                 server between runs)",
            )
            .into());
        }
        check_memory(&plan)?;
        if plan.drop_caches {
            check_drop_caches()?;
        }
        Ok((plan, run))
    }
}

/// The raw arguments as a validated plan.
fn plan(args: &RunFileserverArgs) -> Result<FileserverPlan, UsageError> {
    let sizes = match (&args.profile, &args.sizes) {
        (Some(path), _) => FileSizes::load_profile(path)?,
        (None, text) => FileSizes::List(size_list(text.as_deref().unwrap_or(DEFAULT_SIZES))?),
    };
    let record = args
        .record
        .parse::<ByteSize>()
        .map_err(|e| UsageError::new(format!("--record {}: {e}; e.g. --record 4k", args.record)))?;
    let then = match &args.mix {
        None => Then::Read,
        Some(text) => Then::Mix { read_percent: percent(text)? },
    };
    let plan = FileserverPlan {
        connections: args.connections,
        files_per_connection: args.files_per_connection,
        sizes,
        record,
        then,
        fsync_every: args.fsync_every.as_deref().map(|t| count("fsync-every", t)).transpose()?,
        interleave: args.interleave.as_deref().map(|t| count("interleave", t)).transpose()?,
        drop_caches: args.drop_caches,
        seed: args.seed,
        repeats: 1,
        content: args.data.content(),
        series_interval_ns: args.series.interval_ns()?,
    };
    plan.validate()?;
    Ok(plan)
}

/// `4k,8k,1m` in the order given (file i gets the (i mod n)-th), ranges
/// `4k..2m` expanding to their powers of two; every size above zero.
fn size_list(text: &str) -> Result<Vec<ByteSize>, UsageError> {
    let bad = |e: String| UsageError::new(format!("--sizes {text}: {e}"));
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.contains("..") {
            out.extend(parse_size_list(part, 1).map_err(|e| bad(e.to_string()))?);
        } else {
            out.push(part.parse::<ByteSize>().map_err(|e| bad(e.to_string()))?);
        }
    }
    if out.is_empty() {
        return Err(bad("no sizes: give at least one, e.g. 4k,8k,1m".into()));
    }
    if out.iter().any(|s| s.bytes() == 0) {
        return Err(bad("a size of 0: every file needs at least one byte; give sizes such as 4k,8k,1m".into()));
    }
    Ok(out)
}

fn percent(text: &str) -> Result<u8, UsageError> {
    let n: u64 = text.trim().parse().map_err(|_| {
        UsageError::new(format!("--mix {text}: not a whole number; give the percent of visits that read, 0..100"))
    })?;
    u8::try_from(n).ok().filter(|&p| p <= 100).ok_or_else(|| {
        UsageError::new(format!("--mix {n}: {n}% is over 100; give the percent of visits that read, 0..100"))
    })
}

fn count(flag: &str, text: &str) -> Result<u64, UsageError> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| UsageError::new(format!("--{flag} {text}: not a whole number; give a count such as 1, 4 or 16")))
}

/// Each connection holds a record to read into: refuse plans whose buffers alone would crowd the RAM.
fn check_memory(plan: &FileserverPlan) -> Result<(), UsageError> {
    let ram = iomatrix_environment::machine_ram_bytes();
    let buffers = plan.record.bytes().saturating_mul(plan.connections as u64);
    if ram > 0 && buffers > ram / 2 {
        return Err(UsageError::new(format!(
            "{} connections x --record {} need {} of buffers, over half this machine's RAM ({}); choose a smaller \
             --record or fewer --connections",
            plan.connections,
            plan.record,
            human(buffers),
            human(ram)
        )));
    }
    Ok(())
}

fn check_drop_caches() -> Result<(), UsageError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(UsageError::new(
            "--drop-caches needs root (it writes /proc/sys/vm/drop_caches); run as root, or leave it out and read \
             the read phase as possibly served by the page cache",
        ));
    }
    crate::can_drop_caches().map_err(|e| {
        UsageError::new(format!(
            "--drop-caches: cannot write {} ({e}); on this system the page cache cannot be dropped, leave it out",
            crate::DROP_CACHES
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_lists_keep_their_order_and_refuse_zero() {
        let v = size_list("1m, 4k,4k,8k..32k").unwrap();
        assert_eq!(v.iter().map(|s| s.bytes()).collect::<Vec<_>>(), [1 << 20, 4096, 4096, 8192, 16384, 32768]);
        assert!(size_list("4k,0").unwrap_err().to_string().contains("a size of 0"));
        assert!(size_list("4k,-8k").unwrap_err().to_string().contains("negative"));
        assert!(size_list("4q").unwrap_err().to_string().contains("not a size"));
        assert!(size_list(",").unwrap_err().to_string().contains("no sizes"));
        assert_eq!(size_list(DEFAULT_SIZES).unwrap().len(), 10);
        assert!(percent("101").unwrap_err().to_string().contains("over 100"));
        assert!(percent("x").unwrap_err().to_string().contains("not a whole number"));
        assert_eq!(percent("70").unwrap(), 70);
        assert!(count("interleave", "-1").unwrap_err().to_string().contains("--interleave -1"));
    }
}
