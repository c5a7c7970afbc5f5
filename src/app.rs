//! Parses the command line and dispatches to one subcommand.

use crate::cli::{Cli, Command, Suite};
use crate::cmd;
use crate::ranks::Ranks;
use clap::Parser;
use iomatrix_core::UsageError;
use std::process::ExitCode;

/// Exit codes: 0 done, 1 the run failed, 2 a usage error (bad input), 3 every
/// cell ran but some clients failed some (`--on-client-error continue`), 130 interrupted.
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_CLIENTS_LOST: u8 = 3;
pub const EXIT_INTERRUPTED: u8 = 130;

/// Rank 0 (or a lone process) parses the command line; other MPI ranks follow it.
pub fn run(ranks: &Ranks) -> anyhow::Result<ExitCode> {
    if ranks.is_follower() {
        return ranks.follow();
    }
    let result = dispatch(ranks);
    ranks.release();
    result
}

fn dispatch(ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    // Commands that never open the results database need no path for it.
    let db = || crate::db_path::resolve(cli.db.as_deref());
    match cli.command {
        Command::Run { suite: Suite::Iozone(args) } => cmd::run_iozone::run(args, &db()?, ranks),
        Command::Run { suite: Suite::Access(args) } => cmd::run_access::run(args, &db()?, ranks),
        Command::Run { suite: Suite::Bonnie(args) } => {
            refuse_many(&args.common.client, ranks, "bonnie")?;
            cmd::run_bonnie::run(args, &db()?)
        }
        Command::Run { suite: Suite::Backup(args) } => cmd::run_backup::run(args, &db()?, ranks),
        Command::Run { suite: Suite::Fileserver(args) } => cmd::run_fileserver::run(args, &db()?, ranks),
        Command::Extents(args) => cmd::extents::run(args),
        Command::Scan(args) => cmd::scan::run(args),
        Command::Bonnie { args } => {
            refuse_mpirun(ranks, "bonnie")?;
            cmd::bonnie::run(&args, &db()?)
        }
        Command::Iozone { args } => cmd::iozone::run(&args, &db()?, ranks),
        Command::Runs { json } => cmd::runs::run(&db()?, json),
        Command::Show { run, json } => cmd::show::run(&db()?, run, json),
    }
}

/// Bonnie does not run from many clients yet: its client flags are refused, not ignored.
fn refuse_many(common: &crate::cli::ClientArgs, ranks: &Ranks, suite: &str) -> Result<(), UsageError> {
    crate::clients::refuse_many(common, ranks.mpi_size(), suite, "run it from one client, without these")
}

/// A suite that runs from one client only would otherwise run alone at rank 0, silently.
fn refuse_mpirun(ranks: &Ranks, what: &str) -> Result<(), UsageError> {
    match ranks.mpi_size() {
        Some(n) => Err(UsageError::new(format!(
            "running under mpirun ({n} ranks): `{what}` does not run from many clients yet; run it without mpirun"
        ))),
        None => Ok(()),
    }
}

/// A usage error anywhere in the chain means the user can fix the input: exit 2.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.downcast_ref::<UsageError>().is_some()) {
        EXIT_USAGE
    } else {
        EXIT_FAILED
    }
}

/// Writes to stdout; a reader that went away (`| head`) is not an error.
pub fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
