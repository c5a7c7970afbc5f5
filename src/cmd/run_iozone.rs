//! `iomatrix run iozone`: the IOzone matrix with iomatrix's own flags.

use crate::cli::RunIozoneArgs;
use crate::clients::ClientPlan;
use crate::iozone_job::{self, IozoneJob};
use crate::job::Output;
use crate::ranks::Ranks;
use crate::repeat::Repeat;
use iomatrix_core::{parse_size_list, BackendKind, UsageError};
use iomatrix_iozone::{IozonePlan, IozoneTest, AUTO_MAX_FILE, AUTO_MAX_RECORD, AUTO_MIN_FILE, AUTO_MIN_RECORD};
use std::path::Path;
use std::process::ExitCode;

/// Without --files or --auto: a quick matrix that finishes in seconds.
const DEFAULT_FILES: &str = "64k..16m";

pub fn run(args: RunIozoneArgs, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let clients = ClientPlan::from_args(&args.common.client, ranks.mpi_size())?;
    let repeat = Repeat::from_args(&args.common.repeat)?;
    repeat.refuse_tolerance_under_mpi(ranks)?;
    let mut plan = plan(&args, clients.count)?;
    plan.repeats = repeat.count;
    let remote = args.common.target.as_deref().and_then(crate::remote::url_of).is_some();
    if remote && args.tests.is_none() {
        // The stdio tests measure a local file's C buffering: not run through a protocol client.
        plan.tests.retain(|t| !t.is_stdio());
    }
    let job = IozoneJob {
        plan,
        target: args.common.target.clone().unwrap_or_else(std::env::temp_dir),
        labels: labels(&args.common.labels)?,
        keep: args.common.keep,
        space_check: !args.common.no_space_check,
        output: Output { json: args.common.json, excel_report: false, xlsx: args.xlsx.clone() },
        clients,
        repeat,
    };
    iozone_job::run(job, db, ranks)
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
    plan.validate()?;
    Ok(plan)
}

pub fn labels(raw: &[String]) -> Result<Vec<(String, String)>, UsageError> {
    raw.iter()
        .map(|l| match l.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
            _ => Err(UsageError::new(format!("--label '{l}': write KEY=VALUE, e.g. --label server=netware"))),
        })
        .collect()
}
