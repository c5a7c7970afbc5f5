//! `iomatrix runs`: the stored runs, one line each; with a filter or `--page`, one page of the
//! runs it matches, newest first. [`runs_output`] is what the command prints, for the viewer's
//! runs page too.

use clap::Args;
use iomatrix_core::UsageError;
use iomatrix_report::text::runs::{runs_json, runs_page_json, runs_page_text, runs_text};
use iomatrix_store::{parse_label, parse_since, parse_until, Page, RunFilter, RunState, Store};
use std::path::Path;
use std::process::ExitCode;

/// How many runs a page holds when `--per-page` is not given.
pub const DEFAULT_PER_PAGE: u64 = 50;

/// Which runs to list and how (`iomatrix runs` flags, or the viewer's query): raw text, checked
/// by [`RunsQuery::filter`] before anything is read.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct RunsQuery {
    /// Only runs of this suite (iozone, access, bonnie, ...)
    #[arg(long, value_name = "SUITE")]
    pub suite: Option<String>,
    /// Only runs carrying this label; repeat it: every one must match
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    /// Only runs whose stored target (path or URL) contains this text
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only runs made on this host (its name exactly)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only runs on this file system type, as the run recorded it (ext4, xfs, tmpfs, nfs4, ...)
    #[arg(long, value_name = "TYPE")]
    pub fs: Option<String>,
    /// Only runs in this state: complete, partial, failed, disturbed (some cells stored
    /// disturbed, whatever the status), incomplete, interrupted, running
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// Only runs started at or after: a UTC date (2026-12-01) or an RFC 3339 instant
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only runs started at or before: a UTC date (to its end) or an RFC 3339 instant
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only runs whose command line, labels, suite, host or error contain this text (any case)
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// Page N of the runs, newest first (any filter or --per-page lists page 1 unless given;
    /// with none of them, every run is listed, oldest first)
    #[arg(long, value_name = "N")]
    pub page: Option<u64>,
    /// Runs on a page, 1 to 1000 [default: 50]
    #[arg(long, value_name = "N")]
    pub per_page: Option<u64>,
    /// Machine-readable output (schema: docs/json.md, "iomatrix.runs/1")
    #[arg(long)]
    pub json: bool,
}

impl RunsQuery {
    /// The query's filter and page, checked: None when neither a filter nor `--page` is given
    /// (every run, oldest first, as `runs` always printed them). A usage error names the flag
    /// and the fix.
    pub fn filter(&self) -> Result<Option<(RunFilter, Page)>, UsageError> {
        let filter = RunFilter {
            suite: self.suite.clone(),
            labels: self.label.iter().map(|l| parse_label(l)).collect::<Result<_, _>>()?,
            target: self.target.clone(),
            host: self.host.clone(),
            fs_type: self.fs.clone(),
            state: self.state.as_deref().map(RunState::parse).transpose()?,
            since_ms: self.since.as_deref().map(parse_since).transpose()?,
            until_ms: self.until.as_deref().map(parse_until).transpose()?,
            search: self.search.clone(),
        };
        if let (Some(since), Some(until)) = (filter.since_ms, filter.until_ms) {
            if since > until {
                return Err(UsageError::new(format!(
                    "--since {} is after --until {}: give the earlier instant to --since",
                    self.since.as_deref().unwrap_or_default(),
                    self.until.as_deref().unwrap_or_default()
                )));
            }
        }
        let page = Page::new(self.page.unwrap_or(1), self.per_page.unwrap_or(DEFAULT_PER_PAGE))?;
        if filter.is_empty() && self.page.is_none() && self.per_page.is_none() {
            return Ok(None);
        }
        Ok(Some((filter, page)))
    }
}

/// What `iomatrix runs` prints for `query` (text, or the JSON document with `json`), byte for byte.
pub fn runs_output(store: &Store, query: &RunsQuery) -> anyhow::Result<String> {
    let paged = query.filter()?;
    Ok(match (paged, query.json) {
        (None, false) => runs_text(&store.list_runs()?),
        (None, true) => format!("{}\n", serde_json::to_string_pretty(&runs_json(&store.list_runs()?))?),
        (Some((filter, page)), false) => runs_page_text(&store.list_runs_page(&filter, page)?),
        (Some((filter, page)), true) => {
            format!("{}\n", serde_json::to_string_pretty(&runs_page_json(&store.list_runs_page(&filter, page)?))?)
        }
    })
}

pub fn run(db: &Path, query: &RunsQuery) -> anyhow::Result<ExitCode> {
    // Checked before the database is opened: a usage error exits 2 before anything runs.
    query.filter()?;
    let text = runs_output(&Store::open(db)?, query)?;
    crate::out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
