//! The flags `run` subcommands share ([`RunArgs`] for all of them,
//! [`CommonRunArgs`] for the suites that write), turned into the validated
//! [`RunOptions`] the harness runs with.

use super::clients::{ClientArgs, ClientPlan};
use super::repeat::{Repeat, RepeatArgs};
use super::suite::RunOptions;
use super::target::Target;
use clap::Args;
use iomatrix_core::UsageError;

/// Flags of every suite that writes in a working folder of its own: where,
/// whether to keep it and check free space first, and [`RunArgs`].
#[derive(Args, Debug)]
pub struct CommonRunArgs {
    /// Folder to test in; iomatrix works in a fresh subfolder and removes it at the end
    /// [default: the system's temporary folder]. A server: nfs://host[:port]/export[/path]
    /// or smb://[user@]host[:port]/share[/path], reached by iomatrix's own protocol client
    #[arg(long, value_name = "DIR|URL", value_parser = Target::parse_folder)]
    pub target: Option<Target>,

    /// Keep the working folder at the end (IOzone's -w). Access specs keep their files;
    /// the IOzone and Bonnie suites remove each data file when done with it, as IOzone and
    /// bonnie++ do, so their folder keeps what the last cell left. `iomatrix clean TARGET --kept`
    /// removes kept folders later
    #[arg(long)]
    pub keep: bool,

    /// Skip the free-space check (for file systems whose statfs misreports free space)
    #[arg(long)]
    pub no_space_check: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

impl CommonRunArgs {
    /// The run's options; the target defaults to the system's temporary folder.
    pub fn options(&self, mpi_ranks: Option<usize>) -> Result<RunOptions, UsageError> {
        let target = self.target.clone().unwrap_or_else(Target::default_folder);
        let mut options = self.run.options(target, mpi_ranks)?;
        options.keep = self.keep;
        options.space_check = !self.no_space_check;
        Ok(options)
    }
}

/// Flags every `run` takes, whatever its target: labels, JSON output, the
/// clients and the repeats.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Label the run, e.g. --label server=netware (repeatable)
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Print the stored run as JSON (schema "iomatrix.run/1") instead of tables
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub client: ClientArgs,

    #[command(flatten)]
    pub repeat: RepeatArgs,
}

impl RunArgs {
    /// The run's options at `target`: nothing kept, no free-space check
    /// (what a suite that writes sets, [`CommonRunArgs`] sets).
    pub fn options(&self, target: Target, mpi_ranks: Option<usize>) -> Result<RunOptions, UsageError> {
        Ok(RunOptions {
            target,
            device: None,
            labels: labels(&self.labels)?,
            keep: false,
            space_check: false,
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

/// The run's labels and those of `IOMATRIX_LABELS` (KEY=VALUE,KEY=VALUE; set by `iomatrix rerun`,
/// and by scripts that drive the IOzone or bonnie++ front end, which have no --label): a key
/// given on the command line wins.
pub fn with_env_labels(given: &[(String, String)]) -> Result<Vec<(String, String)>, UsageError> {
    let mut all = given.to_vec();
    let Ok(raw) = std::env::var("IOMATRIX_LABELS") else { return Ok(all) };
    let pairs: Vec<String> = raw.split(',').filter(|p| !p.trim().is_empty()).map(str::to_string).collect();
    for (k, v) in labels(&pairs).map_err(|e| UsageError::new(format!("IOMATRIX_LABELS: {e}")))? {
        if !all.iter().any(|(have, _)| *have == k) {
            all.push((k, v));
        }
    }
    Ok(all)
}

/// A command line as a shell takes it back (`iomatrix rerun` splits it with shell rules): words
/// of plain characters as they are (`--label fs=tmp`), others in single quotes.
pub fn command_text<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    words
        .into_iter()
        .map(|w| {
            let w = w.as_ref();
            if !w.is_empty() && w.chars().all(plain) {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_text_quotes_only_what_a_shell_would_change_and_splits_back() {
        let words = ["iomatrix", "run", "iozone", "--label", "fs=tmp", "--target", "/mnt/my disk", "it's", ""];
        let text = command_text(words);
        assert_eq!(text, r"iomatrix run iozone --label fs=tmp --target '/mnt/my disk' 'it'\''s' ''");
        assert_eq!(shell_words::split(&text).unwrap(), words);
    }
}
