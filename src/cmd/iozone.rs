//! `iomatrix iozone <IOzone's flags>`: IOzone's command line, run by iomatrix.

use crate::iozone_job::{self, IozoneJob};
use crate::job::Output;
use iomatrix_iozone::front;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &[String], db: &Path) -> anyhow::Result<ExitCode> {
    let inv = front::parse(args)?;
    if inv.help {
        crate::app::print_out(front::HELP)?;
        return Ok(ExitCode::SUCCESS);
    }
    let job = IozoneJob {
        plan: inv.plan,
        target: inv.target,
        labels: Vec::new(),
        keep: inv.keep_files,
        space_check: true,
        output: Output { json: false, excel_report: inv.excel_report, xlsx: inv.spreadsheet },
    };
    iozone_job::run(job, db)
}
