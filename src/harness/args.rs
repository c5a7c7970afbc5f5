//! The flags every `run` subcommand shares ([`CommonRunArgs`]), turned into
//! the validated [`RunOptions`] the harness runs with.

use super::clients::{ClientArgs, ClientPlan};
use super::repeat::{Repeat, RepeatArgs};
use super::suite::RunOptions;
use super::target::Target;
use clap::Args;
use iomatrix_core::UsageError;

/// Flags every `run` subcommand takes.
#[derive(Args, Debug)]
pub struct CommonRunArgs {
    /// Folder to test in; iomatrix works in a fresh subfolder and removes it at the end
    /// [default: the system's temporary folder]. A server: nfs://host[:port]/export[/path]
    /// or smb://[user@]host[:port]/share[/path], reached by iomatrix's own protocol client
    #[arg(long, value_name = "DIR|URL", value_parser = Target::parse_folder)]
    pub target: Option<Target>,

    /// Label the run, e.g. --label server=netware (repeatable)
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Keep the working folder at the end (IOzone's -w). Access specs keep their files;
    /// the IOzone and Bonnie suites remove each data file when done with it, as IOzone and
    /// bonnie++ do, so their folder keeps what the last cell left. `iomatrix clean TARGET --kept`
    /// removes kept folders later
    #[arg(long)]
    pub keep: bool,

    /// Skip the free-space check (for file systems whose statfs misreports free space)
    #[arg(long)]
    pub no_space_check: bool,

    /// Print the stored run as JSON (schema "iomatrix.run/1") instead of tables
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub client: ClientArgs,

    #[command(flatten)]
    pub repeat: RepeatArgs,
}

impl CommonRunArgs {
    /// The run's options; the target defaults to the system's temporary folder.
    pub fn options(&self, mpi_ranks: Option<usize>) -> Result<RunOptions, UsageError> {
        Ok(RunOptions {
            target: self.target.clone().unwrap_or_else(Target::default_folder),
            device: None,
            labels: labels(&self.labels)?,
            keep: self.keep,
            space_check: !self.no_space_check,
            json: self.json,
            clients: ClientPlan::from_args(&self.client, mpi_ranks)?,
            repeat: Repeat::from_args(&self.repeat)?,
        })
    }
}

/// `--label KEY=VALUE` pairs.
pub fn labels(raw: &[String]) -> Result<Vec<(String, String)>, UsageError> {
    raw.iter()
        .map(|l| match l.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
            _ => Err(UsageError::new(format!("--label '{l}': write KEY=VALUE, e.g. --label server=netware"))),
        })
        .collect()
}
