//! Parses the command line and dispatches to one subcommand.

use crate::cli::{Cli, Command, Suite};
use crate::cmd;
use crate::ranks::Ranks;
use clap::Parser;
use iomatrix_core::UsageError;
use std::process::ExitCode;

/// Exit codes: 0 done, 1 the run failed, 2 a usage error (bad input), 3 every
/// cell ran but some clients failed some (`--on-client-error continue`), 4 every cell ran but
/// `--verify` found data mismatches (`data_content::EXIT_DATA_MISMATCHES`), 130 interrupted by
/// Ctrl-C (SIGINT), 143 by SIGTERM (`signals::exit_code`).
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
        Command::Run { suite: Suite::Bonnie(args) } => cmd::run_bonnie::run(args, &db()?, ranks),
        Command::Run { suite: Suite::Backup(args) } => cmd::run_backup::run(args, &db()?, ranks),
        Command::Run { suite: Suite::Fileserver(args) } => cmd::run_fileserver::run(args, &db()?, ranks),
        Command::Extents(args) => cmd::extents::run(args),
        Command::Scan(args) => cmd::scan::run(args),
        Command::Bonnie { args } => cmd::bonnie::run(&args, &db()?, ranks),
        Command::Iozone { args } => cmd::iozone::run(&args, &db()?, ranks),
        Command::Compare(args) => cmd::compare::run(args, &db()?),
        Command::Sweep(args) => cmd::sweep::run(args, &db()?),
        Command::Report(args) => cmd::report::run(args, &db()?),
        Command::Import(args) => cmd::import::run(args, &db()?),
        Command::Clean(args) => cmd::clean::run(args),
        Command::Runs { json } => cmd::runs::run(&db()?, json),
        Command::Show { run, json } => cmd::show::run(&db()?, run, json),
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
