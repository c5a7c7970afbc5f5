//! `iomatrix bonnie <bonnie++'s flags>`: Bonnie's command line, run by iomatrix.

use crate::bonnie_job::{self, BonnieJob};
use iomatrix_bonnie::front;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &[String], db: &Path) -> anyhow::Result<ExitCode> {
    let inv = front::parse(args)?;
    if inv.help {
        crate::app::print_out(front::HELP)?;
        return Ok(ExitCode::SUCCESS);
    }
    let labels = inv.machine.map(|m| vec![("machine".to_string(), m)]).unwrap_or_default();
    let job = BonnieJob { plan: inv.plan, target: inv.dir, labels, keep: false, space_check: true, json: false };
    bonnie_job::run(job, db)
}
