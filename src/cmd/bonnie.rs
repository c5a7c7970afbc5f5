//! `iomatrix bonnie <bonnie++'s flags>`: Bonnie's command line, run by iomatrix.

use crate::bonnie_job::{self, BonnieJob};
use crate::cli::ClientArgs;
use crate::clients::ClientPlan;
use crate::ranks::Ranks;
use iomatrix_bonnie::front;
use std::path::Path;
use std::process::ExitCode;

/// Under mpirun each rank is one client, each in its own folder.
pub fn run(args: &[String], db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let mut inv = front::parse(args)?;
    if inv.help {
        crate::app::print_out(front::HELP)?;
        return Ok(ExitCode::SUCCESS);
    }
    inv.plan.content = crate::cli::DataArgs { verify: inv.verify, compressible: inv.compressible }.content();
    let labels = inv.machine.map(|m| vec![("machine".to_string(), m)]).unwrap_or_default();
    let flags = ClientArgs { clients: inv.concurrency, ..ClientArgs::default() };
    let clients = ClientPlan::from_args(&flags, ranks.mpi_size())?;
    let job =
        BonnieJob { plan: inv.plan, target: inv.dir, labels, keep: false, space_check: true, json: false, clients };
    bonnie_job::run(job, db, ranks)
}
