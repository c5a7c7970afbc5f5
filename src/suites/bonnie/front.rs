//! `iomatrix bonnie <bonnie++'s flags>`: bonnie++'s command line, run by
//! iomatrix through the same harness as `run bonnie`. Under mpirun each rank
//! is one client, each in its own folder.

use super::suite::Bonnie;
use crate::harness::clients::{ClientArgs, ClientPlan};
use crate::harness::data::DataArgs;
use crate::harness::repeat::Repeat;
use crate::harness::{Prepared, Ranks, RunOptions, Target};
use iomatrix_bonnie::front;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &[String], db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let mut inv = front::parse(args)?;
    if inv.help {
        crate::out::print(front::HELP)?;
        return Ok(ExitCode::SUCCESS);
    }
    inv.plan.content = DataArgs { verify: inv.verify, compressible: inv.compressible }.content();
    let target = Target::parse_folder(&inv.dir.to_string_lossy())?;
    super::args::check(&inv.plan, &target)?;
    let flags = ClientArgs { clients: inv.concurrency, ..ClientArgs::default() };
    let run = RunOptions {
        target,
        device: None,
        labels: inv.machine.map(|m| vec![("machine".to_string(), m)]).unwrap_or_default(),
        keep: false,
        space_check: true,
        json: false,
        clients: ClientPlan::from_args(&flags, ranks.mpi_size())?,
        // bonnie++'s -x: every test's samples.
        repeat: Repeat { count: inv.plan.repeats, tolerance_pct: None, max: inv.plan.repeats },
    };
    crate::harness::run(Prepared { suite: Bonnie::default(), plan: inv.plan, run }, db, ranks)
}
