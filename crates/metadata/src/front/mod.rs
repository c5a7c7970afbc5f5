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

/// `iomatrix mdtest`'s end: mdtest's output from the stored run's phases on standard output,
/// then `--saveRankPerformanceDetails`' CSV and `-x`'s count where asked. A run that did not
/// complete prints none of them, as mdtest prints no table when it fails (iomatrix's own tables,
/// on standard error, say what happened).
pub fn print_stored(
    out: &FrontOutput,
    run: &iomatrix_store::StoredRun,
    rank_details: Option<&iomatrix_guard::Checked>,
    stonewall_file: Option<&iomatrix_guard::Checked>,
) -> anyhow::Result<()> {
    if run.summary.status != iomatrix_store::RunStatus::Complete {
        return Ok(());
    }
    let results = crate::stored::phase_results(run);
    let tasks = run.cell_results.first().map_or(1, |c| c.clients.max(1));
    let finished = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    iomatrix_harness::out::print(&out.report(&results, tasks, nodes(run), finished))?;
    let per_task = results
        .iter()
        .find_map(|r| r.stonewall.as_ref().map(|s| s.count_reached))
        .unwrap_or_else(|| plan::items_per_client(&out.plan));
    if let Some(file) = rank_details {
        file.write(files::rank_details_csv(&results, per_task, tasks, out.plan.iterations).as_bytes())?;
    }
    let status = files::stonewall_status(&results, out.plan.stonewall.is_some(), per_task);
    if let (Some(file), Some(count)) = (stonewall_file, status) {
        file.write(count.as_bytes())?;
    }
    Ok(())
}

/// The hosts the clients ran on (mdtest's nodes): 1 where the run names none.
fn nodes(run: &iomatrix_store::StoredRun) -> usize {
    let hosts = run.environment_facts().client_hosts.unwrap_or_default();
    let names: std::collections::BTreeSet<String> = hosts.iter().map(|h| format!("{:?}", h.host)).collect();
    names.len().max(1)
}
