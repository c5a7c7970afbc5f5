//! The flags `run` subcommands share ([`RunArgs`] for all of them,
//! [`CommonRunArgs`] for the suites that write), turned into the validated
//! [`RunOptions`] the harness runs with.

use super::clients::{ClientArgs, ClientPlan};
use super::data::DataArgs;
use super::machine::{MachineArgs, MachinePlan};
use super::repeat::{Repeat, RepeatArgs};
use super::suite::RunOptions;
use super::target::Target;
use clap::Args;
pub use iomatrix_core::text::command_text;
use iomatrix_core::{OwnFlags, UsageError};
use iomatrix_verify::ContentSpec;
use std::path::{Path, PathBuf};

/// Flags of every suite that writes in a working folder of its own: where,
/// whether to keep it and check free space first, and [`RunArgs`].
// The fields' doc comments are the flags' help text, where `[:port]` is a URL's optional part, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args, Debug)]
#[command(next_help_heading = "Target")]
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
#[command(next_help_heading = "Output")]
pub struct RunArgs {
    /// Label the run, e.g. --label server=netware (repeatable, each key once; printable text only)
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Print the stored run as JSON (schema "iomatrix.run/1") instead of tables
    #[arg(long)]
    pub json: bool,

    /// Describe the file server behind the target where iomatrix cannot look into it: a file of
    /// key=value lines (ram_bytes=64g, cpu_model=..., export_options=..., `#` comments), stored
    /// with the run; its ram_bytes lets the cache verdict weigh the server's RAM. The lab's
    /// server is described without it (lab/up publishes its facts)
    #[arg(long = "describe", value_name = "server=FILE")]
    pub describe: Vec<String>,

    #[command(flatten)]
    pub client: ClientArgs,

    #[command(flatten)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    pub machine: MachineArgs,
}

impl RunArgs {
    /// The run's options at `target`: nothing kept, no free-space check
    /// (what a suite that writes sets, [`CommonRunArgs`] sets).
    pub fn options(&self, target: Target, mpi_ranks: Option<usize>) -> Result<RunOptions, UsageError> {
        Ok(RunOptions {
            target,
            device: None,
            // IOMATRIX_LABELS checked here too, before anything is made.
            labels: with_env_labels(&labels(&self.labels)?)?,
            keep: false,
            space_check: false,
            json: self.json,
            clients: ClientPlan::from_args(&self.client, mpi_ranks)?,
            repeat: Repeat::from_args(&self.repeat)?,
            server_description: super::server_facts::from_flags(&self.describe)?,
            machine: MachinePlan::from_args(&self.machine)?,
        })
    }
}

/// What iomatrix's own flags on a tool's command line (`iomatrix iozone`, `iomatrix bonnie`,
/// read by [`OwnFlags`]) give its run.
pub struct OwnRun {
    /// The results database: `--db`, else the global `--db`, else the default.
    pub db: PathBuf,
    pub labels: Vec<(String, String)>,
    pub json: bool,
    /// `--verify` and `--compressible`, with a fresh run stamp.
    pub content: ContentSpec,
    /// The busy rule from `$IOMATRIX_BUSY_THRESHOLD` (a tool's command line has no flag for it).
    pub machine: MachinePlan,
}

impl OwnRun {
    pub fn of(own: &OwnFlags, global_db: Option<&Path>) -> anyhow::Result<OwnRun> {
        Ok(OwnRun {
            db: crate::db_path::resolve(own.db.as_deref().or(global_db))?,
            labels: labels(&own.labels)?,
            json: own.json,
            content: DataArgs { verify: own.verify, compressible: own.compressible }.content(),
            machine: MachinePlan::from_env()?,
        })
    }

    /// The options of a tool's command line's run at `target`: its labels and `--json`, the free
    /// space checked (a tool's command line has no flag to skip it), no server described (nor a
    /// flag for it).
    pub fn options(&self, target: Target, keep: bool, clients: ClientPlan, repeat: Repeat) -> RunOptions {
        RunOptions {
            target,
            device: None,
            labels: self.labels.clone(),
            keep,
            space_check: true,
            json: self.json,
            clients,
            repeat,
            server_description: None,
            machine: self.machine.clone(),
        }
    }
}

/// A tool's command line as its front end parsed it: `Some` to run, or `None` when it asked for
/// the help (`wants_help`), which is then printed on standard output.
pub fn unless_help<T>(parsed: T, wants_help: impl Fn(&T) -> bool, help: &str) -> anyhow::Result<Option<T>> {
    if wants_help(&parsed) {
        crate::out::print(help)?;
        return Ok(None);
    }
    Ok(Some(parsed))
}

/// `--label KEY=VALUE` pairs: each key once, no control character in a key or a value (a stored
/// newline would print as a fake row of `runs`, an escape sequence would recolour the terminal).
pub fn labels(raw: &[String]) -> Result<Vec<(String, String)>, UsageError> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(raw.len());
    for l in raw {
        let shown = iomatrix_core::text::printable(l);
        let (key, value) = match l.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => (k.trim(), v.trim()),
            _ => {
                return Err(UsageError::new(format!("--label '{shown}': write KEY=VALUE, e.g. --label server=netware")))
            }
        };
        if let Some((at, c)) = iomatrix_core::text::first_control(l) {
            return Err(UsageError::new(format!(
                "--label '{shown}': {} at character {at}: a label holds printable text only (keys and values)",
                iomatrix_core::text::describe_control(c)
            )));
        }
        if let Some((at, c)) = first_bidi_control(l) {
            return Err(UsageError::new(format!(
                "--label '{}': U+{:04X} (a bidirectional control) at character {at}: it makes text show in another \
                 order than it is stored; a label holds printable text only (keys and values)",
                l.replace(|c: char| first_bidi_control(&c.to_string()).is_some(), "?"),
                c as u32
            )));
        }
        if iomatrix_study::STUDY_LABELS.contains(&key) && std::env::var_os(iomatrix_store::STUDY_CLAIM_VAR).is_none() {
            return Err(UsageError::new(format!(
                "--label {key}=...: '{key}' is a label a study puts on the runs it starts ({}); a run of your own \
                 cannot carry it (a study tells its runs by their ids, not by labels): name it differently, e.g. \
                 --label my-{key}=...",
                iomatrix_study::STUDY_LABELS.join(", ")
            )));
        }
        for (what, text, max) in [
            ("key", key, iomatrix_store::gate::MAX_LABEL_KEY_CHARS),
            ("value", value, iomatrix_store::gate::MAX_LABEL_VALUE_CHARS),
        ] {
            let n = text.chars().count();
            if n > max {
                return Err(UsageError::new(format!(
                    "--label: a {what} of {n} characters; a label's {what} holds at most {max}"
                )));
            }
        }
        if let Some((_, first)) = out.iter().find(|(k, _)| k == key) {
            return Err(UsageError::new(format!(
                "--label {key}={}: the key '{key}' is given twice (first {key}={}): a run has one value per \
                 label; give it once",
                iomatrix_core::text::printable(value),
                iomatrix_core::text::printable(first)
            )));
        }
        out.push((key.to_string(), value.to_string()));
    }
    Ok(out)
}

/// The first bidirectional control character of `text` (U+202A-202E embeddings and overrides,
/// U+2066-2069 isolates: "Trojan Source"), with its character position (from 1).
fn first_bidi_control(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'))
        .map(|(i, c)| (i + 1, c))
}

/// The run's labels and those of `IOMATRIX_LABELS` (KEY=VALUE,KEY=VALUE; set by `iomatrix rerun`,
/// and by scripts that drive the IOzone or bonnie++ front end, which have no --label), checked as
/// `--label` is (a key twice in `IOMATRIX_LABELS` is refused): the variable gives defaults, so a
/// key given on the command line wins.
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

/// The value after `flag` (or in `flag=VALUE`).
pub fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let eq = format!("{flag}=");
    args.iter().enumerate().find_map(|(i, a)| {
        if a == flag {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix(&eq).map(str::to_string)
        }
    })
}

/// Sets `flag`'s value to `value`, replacing every occurrence, or adds it.
pub fn replace_flag(args: &mut Vec<String>, flag: &str, value: &str) {
    remove_flag(args, flag);
    args.extend([flag.to_string(), value.to_string()]);
}

/// Removes every `FLAG VALUE` and `FLAG=VALUE` from `args`.
pub fn remove_flag(args: &mut Vec<String>, flag: &str) {
    let eq = format!("{flag}=");
    let mut i = 0;
    while i < args.len() {
        if args[i] == flag {
            args.drain(i..(i + 2).min(args.len()));
        } else if args[i].starts_with(&eq) {
            args.remove(i);
        } else {
            i += 1;
        }
    }
}

/// `rerun` of a front end whose tool's `-d DIR` names the folder it works in, the
/// [`MoveFlags`](crate::suite::MoveFlags) such front ends share, one rule for all: a target given replaces `-d` (so the
/// run never writes where it wrote before unless asked); without one, flags that name their folder
/// keep it (None: nothing to run in), and flags that name none run in the folder the run ran in
/// (`stored_target`), which the tool's default `-d` is relative to.
pub fn rerun_in_folder_flag(
    args: &mut Vec<String>,
    target: Option<&str>,
    stored_target: Option<PathBuf>,
) -> Option<PathBuf> {
    match (target, flag_value(args, "-d")) {
        (Some(t), _) => {
            replace_flag(args, "-d", t);
            None
        }
        (None, Some(_)) => None,
        (None, None) => stored_target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_moves_dash_d_to_the_target_or_runs_where_the_run_ran() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ran = Some(PathBuf::from("/ran/here"));
        let mut named = argv(&["-n", "10", "-d", "/old"]);
        assert_eq!(rerun_in_folder_flag(&mut named, Some("/new"), ran.clone()), None);
        assert_eq!(named, argv(&["-n", "10", "-d", "/new"]), "the target replaces -d");
        let mut kept = argv(&["-d=/old"]);
        assert_eq!(rerun_in_folder_flag(&mut kept, None, ran.clone()), None, "its own folder, kept");
        assert_eq!(kept, argv(&["-d=/old"]));
        let mut none = argv(&["-n", "10"]);
        assert_eq!(rerun_in_folder_flag(&mut none, None, ran.clone()), ran, "the folder it ran in");
        assert_eq!(none, argv(&["-n", "10"]));
    }

    #[test]
    fn labels_once_each_and_printable() {
        let given = |l: &[&str]| labels(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            given(&["fs=ext4", " host = a b "]).unwrap(),
            [("fs".into(), "ext4".into()), ("host".into(), "a b".into())]
        );
        let e = given(&["a=1", "a=2"]).unwrap_err().to_string();
        assert!(e.contains("the key 'a' is given twice (first a=1)"), "{e}");
        let e = given(&["x=1\n    7  2026-01-01  iozone"]).unwrap_err().to_string();
        assert!(e.contains("a newline (\\n) at character 4") && !e.contains('\n'), "{e}");
        let e = given(&["\u{1b}[31mred=1"]).unwrap_err().to_string();
        assert!(e.contains("ESC") && !e.contains('\u{1b}'), "{e}");
        assert!(given(&["k=\t"]).is_err());
        assert!(given(&[&format!("k={}", "v".repeat(5000))]).unwrap_err().to_string().contains("at most 4096"));
        for bidi in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
            let e = given(&[&format!("k=ab{bidi}c")]).unwrap_err().to_string();
            assert!(e.contains(&format!("U+{:04X}", bidi as u32)) && e.contains("character 5"), "{e}");
            assert!(!e.contains(bidi), "{e}");
        }
        assert!(given(&["k=\u{2065}\u{202F}"]).is_ok());
    }

    #[test]
    fn study_labels_are_reserved() {
        // The tests of this binary never run with a study's claim in their environment.
        assert!(std::env::var_os(iomatrix_store::STUDY_CLAIM_VAR).is_none());
        for key in iomatrix_study::STUDY_LABELS {
            let e = labels(&[format!("{key}=x")]).unwrap_err().to_string();
            assert!(e.contains(&format!("'{key}' is a label a study puts")), "{e}");
        }
        assert!(labels(&["my-study=x".to_string()]).is_ok());
    }

    #[test]
    fn command_text_quotes_only_what_a_shell_would_change_and_splits_back() {
        let words = ["iomatrix", "run", "iozone", "--label", "fs=tmp", "--target", "/mnt/my disk", "it's", ""];
        let text = command_text(words);
        assert_eq!(text, r"iomatrix run iozone --label fs=tmp --target '/mnt/my disk' 'it'\''s' ''");
        assert_eq!(shell_words::split(&text).unwrap(), words);
    }
}
