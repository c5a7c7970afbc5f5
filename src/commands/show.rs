//! `iomatrix show RUN`: one stored run, as it was printed when it ran.

use iomatrix_core::UsageError;
use iomatrix_store::Store;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, id: i64, json: bool) -> anyhow::Result<ExitCode> {
    let store = Store::open(db)?;
    let run = store.load_run(id)?.ok_or_else(|| {
        UsageError::new(format!("no run #{id} in {}; `iomatrix runs` lists the stored runs", db.display()))
    })?;
    if json {
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&crate::render::run_json(&run))?))?;
    } else {
        crate::out::print(&crate::render::run_text(&run, &crate::suites::tables(&run)))?;
    }
    Ok(ExitCode::SUCCESS)
}
