//! iomatrix: a benchmark system for file systems and file servers.
//! `main` only maps the outcome to an exit code; see `app::run`.

mod app;
mod bonnie_job;
mod cli;
mod cmd;
mod db_path;
mod iozone_job;
mod job;
mod progress;
mod raw_device;
mod render;
mod signals;
mod workdir;

use std::process::ExitCode;

fn main() -> ExitCode {
    match app::run() {
        Ok(code) => code,
        Err(err) => {
            let code = app::exit_code_for(&err);
            eprintln!("iomatrix: error: {err:#}");
            ExitCode::from(code)
        }
    }
}
