//! `iomatrix mdtest`: mdtest 4.x's command line ([`options`]) turned into a metadata plan
//! ([`plan`]), run as `run metadata` runs, and printed in mdtest's layout ([`output`]), with
//! the files mdtest writes beside it ([`files`]).

pub mod files;
pub mod options;
pub mod output;
pub mod plan;

use crate::plan::MetadataPlan;
use crate::result::PhaseResult;

/// What `iomatrix mdtest` prints after its run, known before it: kept by the suite until the
/// run is stored, then printed from the stored phases ([`FrontOutput::report`]).
#[derive(Debug, Clone)]
pub struct FrontOutput {
    /// The program and its words, as `Command line used:` prints them.
    pub command_line: String,
    /// The plan the words asked for.
    pub plan: MetadataPlan,
    /// `-d`, as given.
    pub path: String,
    /// mdtest's `FS` line's text, where the folder's file system could be read.
    pub fs: Option<String>,
    /// When the run began (Unix ms).
    pub started_ms: i64,
    /// -P: the time table too.
    pub print_time: bool,
}

impl FrontOutput {
    /// mdtest's whole output for the run's phases: header, stonewall line, tables, the end.
    pub fn report(&self, results: &[PhaseResult], tasks: usize, nodes: usize, finished_ms: i64) -> String {
        let header = output::Header {
            started_at: output::timestamp(self.started_ms),
            version: output::version_words(env!("CARGO_PKG_VERSION")),
            tasks,
            nodes,
            command_line: self.command_line.clone(),
            path: &self.path,
            fs: self.fs.clone(),
            plan: &self.plan,
        };
        output::header(&header)
            + &output::summary(&self.plan, results, self.print_time)
            + &output::finished(&output::timestamp(finished_ms))
    }
}

/// The hosts the clients ran on (mdtest's nodes): 1 where the run names none.
pub fn nodes(run: &iomatrix_store::StoredRun) -> usize {
    let hosts = run.environment_facts().client_hosts.unwrap_or_default();
    let names: std::collections::BTreeSet<String> = hosts.iter().map(|h| format!("{:?}", h.host)).collect();
    names.len().max(1)
}
