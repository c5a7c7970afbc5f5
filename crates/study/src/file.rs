//! The study file's schema (TOML, `version = 1`) and its parsing: unknown
//! keys are refused with their line and the nearest valid name.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// The one schema version this build reads.
pub const VERSION: u32 = 1;

/// A study file as written. See docs/studies.md for every key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// The study file format's version: 1.
    pub version: Spanned<u32>,
    /// The study's name: stored with its runs, and STUDY_NAME for its commands.
    pub name: Spanned<String>,
    /// What the study is for, in the user's words.
    #[serde(default)]
    pub description: Option<String>,
    /// Configurations interleaved per step (the default) or one after another.
    #[serde(default)]
    pub order: Order,
    /// Each step's `--repeat`, unless the step sets its own.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Each step's `--tolerance` (percent), unless the step sets its own.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Run once before the first step that is still to run, and after the last.
    #[serde(default)]
    pub setup: Option<String>,
    /// Run once after the last step, as `setup`'s counterpart.
    #[serde(default)]
    pub teardown: Option<String>,
    /// The longest any setup or teardown command may take: 30s, 5m [default: 5m].
    #[serde(default)]
    pub timeout: Option<Spanned<String>>,
    /// The configurations compared (`[[config]]`), each running every step.
    #[serde(rename = "config")]
    pub configs: Vec<Config>,
    /// The steps (`[[step]]`): one suite run each, per configuration.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
    /// The comparisons to draw once the runs are in (`[[compare]]`).
    #[serde(default, rename = "compare")]
    pub compares: Vec<Compare>,
    /// The sweeps to draw once the runs are in (`[[sweep]]`).
    #[serde(default, rename = "sweep")]
    pub sweeps: Vec<SweepSpec>,
    /// One report of every run of the study (any format `iomatrix report` writes, by extension).
    #[serde(default)]
    pub report: Option<Report>,
    /// A score drawn over the steps, per configuration: `"io500"`, IO500's score over the steps
    /// named after IO500's phases ([`crate::io500`]).
    #[serde(default)]
    pub score: Option<Spanned<String>>,
}

/// In which order the configurations' runs go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Per step, every configuration in turn: drift on a shared machine hits all alike.
    #[default]
    Interleaved,
    /// Every step of one configuration, then the next.
    Sequential,
}

/// One configuration (`[[config]]`): a target and its flags, labels and commands.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Its name, unique within the study: 1 to 64 letters, digits, '.', '_' and '-'.
    pub name: Spanned<String>,
    /// Stored with each of its runs, beside the study's own labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Anything `--target` takes; `${VAR}` is expanded when the step runs.
    #[serde(default)]
    pub target: Option<String>,
    /// Flags every step of this configuration gets (a step's own win).
    #[serde(default)]
    pub args: Params,
    /// Environment of its runs, setup and teardown; `${VAR}` is expanded.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Run before this configuration's first step that is still to run.
    #[serde(default)]
    pub setup: Option<String>,
    /// Run after this configuration's last step.
    #[serde(default)]
    pub teardown: Option<String>,
    /// Its steps run across these hosts under mpirun (`iomatrix run --hosts`): a hostfile or
    /// `a,b,c`; `${VAR}` is expanded when a step runs, and empty means this host.
    #[serde(default)]
    pub hosts: Option<Spanned<String>>,
    /// Its steps run on Slurm's nodes under `srun --mpi=pmix`.
    #[serde(default)]
    pub slurm: Option<Spanned<Slurm>>,
}

/// `slurm = { nodes = N, tasks_per_node = M }`: every step one run of N x M MPI ranks (clients),
/// launched with `srun --mpi=pmix -N N --ntasks-per-node M`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slurm {
    /// How many nodes (`srun -N`).
    pub nodes: u32,
    /// How many MPI ranks on each node (`srun --ntasks-per-node`).
    pub tasks_per_node: u32,
}

/// A suite's flags by their long names without `--`: `file-size = "64m"`,
/// `direct = true`, `records = ["4k", "64k"]` (`--records 4k,64k`).
pub type Params = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// One step (`[[step]]`): a suite and its flags, run once per configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Unique within the study [default: the suite's name].
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// The suite, by the name `iomatrix run` takes.
    pub suite: Spanned<String>,
    /// The suite's flags for this step (they win over the configuration's).
    #[serde(default)]
    pub args: Params,
    /// Flags that replace `args`' under `--scale small`.
    #[serde(default)]
    pub small: Params,
    /// This step runs across these hosts, whatever its configuration says (see [`Config::hosts`]).
    #[serde(default)]
    pub hosts: Option<Spanned<String>>,
    /// This step runs on Slurm's nodes, whatever its configuration says.
    #[serde(default)]
    pub slurm: Option<Spanned<Slurm>>,
}

/// A comparison of two configurations' runs (`[[compare]]`), as `iomatrix compare` draws it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    /// The baseline configuration.
    pub a: Spanned<String>,
    /// Compared against `a`: ratios are b/a.
    pub b: Spanned<String>,
    /// Only this step [default: every step both configurations ran].
    #[serde(default)]
    pub step: Option<Spanned<String>>,
    /// `compare --limit`: a rate (`100Mbit`) or a run whose figures are each cell's limit.
    #[serde(default)]
    pub limit: Option<String>,
    /// `compare --files`: a region of file sizes also summarised, e.g. `..2m`.
    #[serde(default)]
    pub files: Option<String>,
    /// `compare --records`: a region of record sizes also summarised, e.g. `..32k`.
    #[serde(default)]
    pub records: Option<String>,
}

/// A sweep over one step's runs (`[[sweep]]`), as `iomatrix sweep` draws it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// record, file, qd, or a label key (e.g. one the configurations set).
    pub by: String,
    /// The step whose runs are swept.
    pub step: Spanned<String>,
    /// The configurations swept over [default: all].
    #[serde(default)]
    pub configs: Vec<Spanned<String>>,
}

/// The study's report (`[report]`), as `iomatrix report` writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Relative to the folder `study run` runs in.
    pub file: String,
    /// `report --limit`: a rate or a run whose figures are each cell's limit.
    #[serde(default)]
    pub limit: Option<String>,
}

pub use iomatrix_core::{nearest, FileError};

/// Parses a study file's text.
pub fn parse(text: &str) -> Result<StudyFile, FileError> {
    let file: StudyFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    if *file.version.get_ref() != VERSION {
        return Err(FileError::at(
            text,
            file.version.span(),
            format!("version = {}: this iomatrix reads study files of version {VERSION}", file.version.get_ref()),
        ));
    }
    Ok(file)
}

/// toml's error, as one line with its line number, and the nearest valid key where one is unknown.
fn toml_error(text: &str, e: &toml::de::Error) -> FileError {
    FileError::parsed(text, e.span(), e.message())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "version = 1\nname = \"s\"\n[[config]]\nname = \"a\"\n[[step]]\nsuite = \"iozone\"\n";

    #[test]
    fn a_minimal_file_parses_with_the_defaults() {
        let f = parse(MINIMAL).unwrap();
        assert_eq!(f.order, Order::Interleaved);
        assert_eq!(f.configs.len(), 1);
        assert!(f.steps[0].args.is_empty());
    }

    #[test]
    fn an_unknown_key_names_its_line_and_the_nearest_valid_key() {
        let text = MINIMAL.replace("name = \"s\"\n", "name = \"s\"\nordr = \"sequential\"\n");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("unknown key `ordr`; did you mean `order`?"), "{e}");
        let text = MINIMAL.replace("suite = \"iozone\"", "suite = \"iozone\"\nsmal = {}");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("did you mean `small`?"), "{e}");
    }

    #[test]
    fn another_version_is_refused() {
        let e = parse(&MINIMAL.replace("version = 1", "version = 2")).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("version 1"), "{e}");
    }
}
