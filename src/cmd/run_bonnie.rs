//! `iomatrix run bonnie`: Bonnie's tests with iomatrix's own flags, from
//! one client or many.

use crate::bonnie_job::{self, BonnieJob};
use crate::cli::RunBonnieArgs;
use crate::clients::ClientPlan;
use crate::ranks::Ranks;
use iomatrix_bonnie::BonniePlan;
use iomatrix_core::{ByteSize, UsageError};
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: RunBonnieArgs, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let clients = ClientPlan::from_args(&args.common.client, ranks.mpi_size())?;
    let size =
        |flag: &str, text: &str| text.parse::<ByteSize>().map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")));
    let mut plan = BonniePlan::new(size("size", &args.size)?);
    if let Some(chunk) = &args.chunk {
        plan.chunk = size("chunk", chunk)?;
    }
    plan.files = args.file_count.unwrap_or(args.files.saturating_mul(iomatrix_bonnie::FILES_UNIT));
    let repeat = crate::repeat::Repeat::from_args(&args.common.repeat)?;
    if repeat.tolerance_pct.is_some() {
        return Err(UsageError::new(
            "--tolerance: `run bonnie` does not measure noisy tests again yet; use --repeats N (every sample stored)",
        )
        .into());
    }
    plan.repeats = match (&args.repeats, repeat.count) {
        (Some(r), 1) => *r,
        (None, n) => n,
        (Some(r), n) => {
            return Err(UsageError::new(format!("--repeat {n} and --repeats {r}: give one (they mean the same)")).into())
        }
    };
    plan.ram = args.ram.as_deref().map(|r| size("ram", r)).transpose()?;
    plan.allow_cache = args.allow_cache;
    plan.skip_per_char = args.fast;
    plan.direct = args.direct;
    plan.sync = args.sync;
    plan.seeks = args.seeks.unwrap_or(plan.seeks);
    plan.seekers = args.seekers.unwrap_or(plan.seekers);
    plan.content = args.data.content();
    let job = BonnieJob {
        plan,
        target: args.common.target.clone().unwrap_or_else(std::env::temp_dir),
        labels: crate::cmd::run_iozone::labels(&args.common.labels)?,
        keep: args.common.keep,
        space_check: !args.common.no_space_check,
        json: args.common.json,
        clients,
    };
    bonnie_job::run(job, db, ranks)
}
