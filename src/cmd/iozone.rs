//! `iomatrix iozone <IOzone's flags>`: IOzone's command line, run by iomatrix.

use crate::clients::ClientPlan;
use crate::iozone_job::{self, IozoneJob};
use crate::job::Output;
use crate::ranks::Ranks;
use iomatrix_iozone::front;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &[String], db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let mut inv = front::parse(args)?;
    if inv.help {
        crate::app::print_out(front::HELP)?;
        return Ok(ExitCode::SUCCESS);
    }
    // IOzone's -t N gives threads; under mpirun the ranks are the clients.
    if let Some(ranks) = ranks.mpi_size() {
        inv.plan.clients = ranks;
    }
    inv.plan.content = crate::cli::DataArgs { verify: inv.verify, compressible: inv.compressible }.content();
    let clients = ClientPlan { count: inv.plan.clients, ..ClientPlan::single() };
    let job = IozoneJob {
        plan: inv.plan,
        target: inv.target,
        labels: Vec::new(),
        keep: inv.keep_files,
        space_check: true,
        output: Output { json: false, excel_report: inv.excel_report, xlsx: inv.spreadsheet },
        clients,
        repeat: crate::repeat::Repeat::once(),
    };
    iozone_job::run(job, db, ranks)
}
