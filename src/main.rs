//! iomatrix: a benchmark system for file systems and file servers.
//! `main` only maps the outcome to an exit code; see `app::run`.

mod app;
mod bonnie_job;
mod cli;
mod clients;
mod cmd;
mod data_content;
mod db_path;
#[cfg(feature = "mpi")]
mod follow;
mod iozone_job;
mod job;
mod progress;
mod ranks;
mod raw_device;
mod remote;
mod render;
mod repeat;
mod select;
mod signals;
mod workdir;

use std::process::ExitCode;

fn main() -> ExitCode {
    let ranks = match ranks::Ranks::init() {
        Ok(ranks) => ranks,
        Err(err) => return fail(&err),
    };
    match app::run(&ranks) {
        Ok(code) => code,
        Err(err) => {
            let code = fail(&err);
            // A failed MPI run ends every rank, so none waits on for a partner that is gone.
            ranks.end(app::exit_code_for(&err) == app::EXIT_FAILED);
            code
        }
    }
}

fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("iomatrix: error: {err:#}");
    ExitCode::from(app::exit_code_for(err))
}
