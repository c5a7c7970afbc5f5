//! `iomatrix runs`: the stored runs, one line each.

use iomatrix_store::Store;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let runs = Store::open(db)?.list_runs()?;
    if json {
        crate::out::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&iomatrix_report::text::runs::runs_json(&runs))?
        ))?;
    } else {
        crate::out::print(&iomatrix_report::text::runs::runs_text(&runs))?;
    }
    Ok(ExitCode::SUCCESS)
}
