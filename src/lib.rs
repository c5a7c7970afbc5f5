//! iomatrix: a benchmark system for file systems and file servers.
//!
//! The program as a library, so that its two binaries are one line each: `iomatrix`
//! (src/main.rs) and `iomatrix-mpi` (src/bin/iomatrix-mpi.rs, built only with `--features mpi`).
//! [`main`] only maps the outcome to an exit code; see `app::run`. Nothing else is public: this
//! is not an API.

mod app;
mod cli;
mod commands;
mod launch;
mod suites;

// The harness is a library (crates/harness); `crate::harness`, `crate::exit`, `crate::out` and
// `crate::db_path` name it and its modules for the rest of the binary.
use iomatrix_harness as harness;
use iomatrix_harness::{db_path, exit, out};

use std::process::ExitCode;

/// The whole program: what each binary's `main` returns.
pub fn main() -> ExitCode {
    // Shared code reads what a suite alone records through the suite's own reader.
    iomatrix_store::reader::register_suites(suites::readers());
    // Decided from the command line before MPI is touched: only a run joins an MPI job.
    let ranks = match launch::start() {
        // `run ... --hosts`: this process only starts mpirun.
        launch::Start::Launched(launched) => return launched.unwrap_or_else(|err| fail(&err)),
        launch::Start::Run => harness::Ranks::init(),
        // Under mpirun, `show` and the like are done once, by the first task.
        launch::Start::Other { quiet: true } => return ExitCode::SUCCESS,
        launch::Start::Other { quiet: false } => Ok(harness::Ranks::alone()),
    };
    let ranks = match ranks {
        Ok(ranks) => ranks,
        Err(err) => return fail(&err),
    };
    match app::run(&ranks) {
        Ok(code) => code,
        Err(err) => {
            // A run that lost an MPI rank ends every rank, so none waits on for a partner that is gone.
            let code = fail(&err);
            ranks.end(exit::code_for(&err));
            code
        }
    }
}

fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("iomatrix: error: {err:#}");
    ExitCode::from(exit::code_for(err))
}
