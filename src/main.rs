//! iomatrix: a benchmark system for file systems and file servers.
//! `main` only maps the outcome to an exit code; see `app::run`.

mod app;
mod cli;
mod commands;
mod db_path;
mod exit;
mod harness;
mod out;
mod render;
mod suites;

use std::process::ExitCode;

fn main() -> ExitCode {
    // `run ... --hosts`: this process only starts mpirun, before MPI is touched.
    if let Some(launched) = harness::launch::by_hosts() {
        return launched.unwrap_or_else(|err| fail(&err));
    }
    let ranks = match harness::Ranks::init() {
        Ok(ranks) => ranks,
        Err(err) => return fail(&err),
    };
    match app::run(&ranks) {
        Ok(code) => code,
        Err(err) => {
            let code = fail(&err);
            // A failed MPI run ends every rank, so none waits on for a partner that is gone.
            ranks.end(exit::code_for(&err) == exit::FAILED);
            code
        }
    }
}

fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("iomatrix: error: {err:#}");
    ExitCode::from(exit::code_for(err))
}
