//! `iomatrix study run|show|list`: a whole comparison from one study file
//! (crate `iomatrix-study`), run as one resumable job. Each step is an
//! `iomatrix run SUITE` of its own ([`process`]), its flags checked up front
//! by that command's own parser ([`RunParser`]); the study's record links
//! its runs (store: `StudyRecord`), and its conclusions are `compare`,
//! `sweep` and `report` over them ([`conclude`]), and IO500's score where the file asks ([`io500`]).

mod conclude;
mod io500;
mod process;
mod run;
mod show;

use crate::suites::RunCommand;
use clap::{Args, CommandFactory, Parser, Subcommand};
use iomatrix_study::SuiteFlags;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct StudyArgs {
    #[command(subcommand)]
    command: StudyCommand,
}

#[derive(Subcommand, Debug)]
enum StudyCommand {
    /// Run a study file (docs/studies.md): every step of every configuration, then its
    /// comparisons, sweeps and report. Run it again after a stop: finished steps are kept. Steps
    /// run on this host unless their configuration or step names hosts (mpirun) or slurm
    /// (srun), and have no time limit of their own
    Run(run::RunArgs),
    /// Print a stored study: its steps, their runs, its conclusions
    Show {
        /// The study's id or name (its latest record; `iomatrix study list` lists them)
        study: String,
        /// Machine-readable output (schema "iomatrix.study/1", docs/json.md)
        #[arg(long)]
        json: bool,
    },
    /// List the stored studies
    List {
        /// Machine-readable output (schema "iomatrix.studies/1", docs/json.md)
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: StudyArgs, db: &Path) -> anyhow::Result<ExitCode> {
    match args.command {
        StudyCommand::Run(a) => run::run(a, db),
        StudyCommand::Show { study, json } => show::show(db, &study, json),
        StudyCommand::List { json } => show::list(db, json),
    }
}

/// `run SUITE ARGS`, parsed by the very types `iomatrix run` parses with.
#[derive(Parser)]
#[command(name = "run", no_binary_name = false)]
struct RunLine {
    #[command(subcommand)]
    suite: RunCommand,
}

/// The suites' command lines, as the study checks its steps against them.
pub struct RunParser;

impl SuiteFlags for RunParser {
    fn suites(&self) -> Vec<String> {
        RunLine::command().get_subcommands().map(|s| s.get_name().to_string()).filter(|n| n != "help").collect()
    }

    fn flags(&self, suite: &str) -> Vec<String> {
        let cmd = RunLine::command();
        let Some(sub) = cmd.get_subcommands().find(|s| s.get_name() == suite) else { return Vec::new() };
        sub.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect()
    }

    fn check(&self, suite: &str, args: &[String]) -> Result<(), iomatrix_study::StudyError> {
        let argv = ["run", suite].into_iter().map(String::from).chain(args.iter().cloned());
        RunLine::try_parse_from(argv).map(|_| ()).map_err(|e| {
            // clap's first paragraph, without its "error: " and usage lines.
            let text = e.render().to_string();
            let first = text.split("\n\n").next().unwrap_or(&text).trim();
            iomatrix_study::StudyError::Flags(first.strip_prefix("error: ").unwrap_or(first).replace('\n', " "))
        })
    }
}

/// The study file's folder, absolute (`${STUDY_DIR}`).
fn folder_of(file: &Path) -> PathBuf {
    let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suites_and_their_flags_are_those_of_iomatrix_run() {
        let p = RunParser;
        let suites = p.suites();
        for s in ["iozone", "access", "bonnie", "backup", "fileserver"] {
            assert!(suites.contains(&s.to_string()), "{suites:?}");
        }
        let flags = p.flags("iozone");
        assert!(flags.contains(&"files".to_string()) && flags.contains(&"target".to_string()), "{flags:?}");
        assert!(p.check("iozone", &["--files".into(), "64k".into()]).is_ok());
        let e = p.check("iozone", &["--nope".into()]).unwrap_err().to_string();
        assert!(e.starts_with("unexpected argument '--nope' found"), "{e}");
        let e = p.check("access", &["--clients".into(), "many".into()]).unwrap_err().to_string();
        assert!(e.contains("'many'") && e.contains("--clients"), "{e}");
    }
}
