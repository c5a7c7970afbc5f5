//! Parses the command line and dispatches to one subcommand.

use crate::cli::{Cli, Command};
use crate::commands;
use crate::harness::Ranks;
use crate::suites;
use clap::Parser;
use std::process::ExitCode;

/// Rank 0 (or a lone process) parses the command line; other MPI ranks follow it.
pub fn run(ranks: &Ranks) -> anyhow::Result<ExitCode> {
    if ranks.is_follower() {
        return suites::follow(ranks);
    }
    let result = dispatch(ranks);
    ranks.release();
    result
}

fn dispatch(ranks: &Ranks) -> anyhow::Result<ExitCode> {
    dispatch_cli(Cli::parse(), ranks)
}

/// Runs the command `cli` names (`iomatrix serve` runs its pages' read-only commands so).
pub fn dispatch_cli(cli: Cli, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    // Commands that never open the results database need no path for it.
    let db = || crate::db_path::resolve(cli.db.as_deref());
    match cli.command {
        Command::Run { suite } => suite.run(&db()?, ranks),
        // Their own --db, typed among the tool's flags, wins over the global one.
        Command::Front(front) => front.run(cli.db.as_deref(), ranks),
        Command::Extents(args) => commands::extents::run(args),
        Command::Scan(args) => commands::scan::run(args, db().ok().as_deref()),
        Command::Personalities(args) => commands::personalities::run(args),
        Command::Compare(args) => commands::compare::run(args, &db()?, cli.db.is_some()),
        Command::Sweep(args) => commands::sweep::run(args, &db()?),
        Command::Report(args) => commands::report::run(args, &db()?),
        Command::Import(args) => commands::import::run(args, &db()?),
        Command::Clean(args) => commands::clean::run(args),
        Command::Db(args) => commands::db::run(args, &db()?),
        Command::Study(_) | Command::Rerun(_) if ranks.launched_many() => Err(iomatrix_core::UsageError::new(
            "study and rerun start iomatrix runs of their own on this host: run them without mpirun",
        )
        .into()),
        Command::Study(args) => commands::study::run(args, &db()?),
        Command::Rerun(args) => commands::rerun::run(args, &db()?),
        Command::Watch(args) => commands::watch::run(args, &db()?),
        Command::Runs { json } => commands::runs::run(&db()?, json),
        Command::Serve(args) => commands::serve::run(args, &db()?),
        Command::Show { run, json, series } => commands::show::run(&db()?, run, json, series),
    }
}
