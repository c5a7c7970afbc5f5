//! `iomatrix iozone <IOzone's flags>`: IOzone's command line, run by iomatrix
//! through the same harness as `run iozone`.

use super::suite::{Iozone, Workbook};
use crate::front;
use iomatrix_core::UsageError;
use iomatrix_harness::args::{flag_value, replace_flag, unless_help, OwnRun};
use iomatrix_harness::clients::ClientPlan;
use iomatrix_harness::repeat::Repeat;
use iomatrix_harness::{Prepared, Ranks, Target};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `iomatrix iozone`: IOzone's own command line.
pub const FRONT_END: iomatrix_harness::FrontEnd = iomatrix_harness::FrontEnd {
    name: "iozone",
    about: "Run the IOzone suite with IOzone's own command line (`iomatrix iozone -h` lists the flags)",
    flags: "IOZONE FLAGS",
    flags_help: "IOzone's flags, e.g. -Rab out.xls -s 512m -r 64k -e -c -i 0 -i 2",
    run,
    rerun,
};

#[allow(missing_docs)] // documented by the copies change
pub fn run(args: &[String], global_db: Option<&Path>, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let Some(mut inv) = unless_help(front::parse(args)?, |inv| inv.help, front::HELP)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let own = OwnRun::of(&inv.own, global_db)?;
    if let Some(word) = &inv.network_test {
        eprintln!(
            "iomatrix: {word}: IOzone's network performance test (-+t, with -+m's cluster of clients) is not run; \
             iomatrix runs the tests against the target as given (many clients: -t N, or MPI ranks)"
        );
    }
    // IOzone's -t N gives threads; under mpirun the ranks are the clients.
    if let Some(ranks) = ranks.mpi_size() {
        inv.plan.clients = ranks;
    }
    inv.plan.content = own.content;
    let target = Target::parse_folder(&inv.target.to_string_lossy())?;
    refuse_a_file_that_is_not_one(&inv.target.join(&inv.plan.file_name))?;
    target.check_front_end_folder(
        &format!("iozone: -f {}", inv.target.join(&inv.plan.file_name).display()),
        "give -f a file name in an existing folder, e.g. -f /mnt/x/iozone.tmp",
    )?;
    super::args::check(&inv.plan, &target)?;
    let mut suite = Iozone {
        // IOzone prints its classic table in every run but its throughput mode (-t), whose
        // figures are per test, not per file and record size.
        classic_table: !inv.throughput,
        excel_report: inv.excel_report,
        xlsx: inv.spreadsheet.map(|path| Workbook::iozone(path, "-b", inv.force)),
        report_records_kib: inv.report_record_sizes.iter().map(|r| r.kib()).collect(),
        throughput: inv.throughput,
        front_end: true,
    };
    suite.check_outputs(&own.db)?;
    let clients = ClientPlan { count: inv.plan.clients, ..ClientPlan::single() };
    let run = own.options(target, inv.keep_files, clients, Repeat::once());
    iomatrix_harness::run(Prepared { suite, plan: inv.plan, run }, &own.db, ranks)
}

/// IOzone's -f names its test file; iomatrix makes the file under that name in a working folder
/// beside it. A device, FIFO, socket or folder there would have the run measure the folder it sits
/// in (`-f /dev/zero`: /dev, a file system in RAM) while the user meant that thing: refused.
fn refuse_a_file_that_is_not_one(file: &Path) -> Result<(), UsageError> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(file) else { return Ok(()) };
    let kind = meta.file_type();
    let what = match () {
        _ if kind.is_file() => return Ok(()),
        _ if kind.is_dir() => "a folder",
        _ if kind.is_char_device() => "a character device",
        _ if kind.is_block_device() => "a block device",
        _ if kind.is_fifo() => "a FIFO",
        _ if kind.is_socket() => "a socket",
        _ => "not a regular file",
    };
    Err(UsageError::new(format!(
        "iozone: -f {}: {what}, not a file: iomatrix makes its test file under -f's name in a working folder beside \
         it, so the run would measure {} instead; give -f a file path in a folder on the file system to test, e.g. \
         -f /mnt/x/iozone.tmp",
        file.display(),
        file.parent().map_or_else(|| ".".into(), |p| p.display().to_string())
    )))
}

/// `rerun` of a run of this front end ([`iomatrix_harness::FrontEnd::rerun`]): IOzone's -f names
/// the file, which moves to the new folder under its name; without -f the file is made in the
/// folder the front end runs in.
pub fn rerun(args: &mut Vec<String>, target: Option<&str>, stored_target: Option<PathBuf>) -> Option<PathBuf> {
    match (target, flag_value(args, "-f")) {
        (Some(t), Some(file)) => {
            let name =
                Path::new(&file).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or("iozone.tmp".into());
            replace_flag(args, "-f", &format!("{}/{name}", t.trim_end_matches('/')));
            None
        }
        (Some(t), None) => Some(PathBuf::from(t)),
        (None, Some(_)) => None,
        (None, None) => stored_target,
    }
}
