//! `iomatrix show RUN`: one stored run, as it was printed when it ran. A figure
//! stored in it that cannot be read back is named (cell and column) after
//! what can be shown, and the exit code is 1.

use iomatrix_core::UsageError;
use iomatrix_store::{Store, StoredRun, Unreadable};
use std::path::Path;
use std::process::ExitCode;

/// What `show RUN` prints of a run read as far as it can be (`unreadable`: what could not be):
/// its header and its suite's tables (`watch` prints the same of a run under way).
pub fn show_text(run: &StoredRun, unreadable: &[Unreadable]) -> String {
    // A cell whose figures cannot be read is left out of the tables: a table would show it as 0.
    let mut shown = run.clone();
    shown.cell_results.retain(|c| !unreadable.iter().any(|u| u.cell == Some(c.seq) && u.column == "metrics_json"));
    // A published table has no measured run behind it: its figures as typed, not the suite's tables.
    let tables =
        iomatrix_report::text::imported::published_table(&shown).unwrap_or_else(|| crate::suites::tables(&shown));
    iomatrix_report::text::run::run_text(&shown, &tables)
}

pub fn run(db: &Path, id: i64, json: bool, series: bool) -> anyhow::Result<ExitCode> {
    let store = Store::open(db)?;
    let (run, unreadable) = store.load_run_as_stored(id)?.ok_or_else(|| {
        UsageError::new(format!("no run #{id} in {}; `iomatrix runs` lists the stored runs", db.display()))
    })?;
    if json {
        let mut doc = iomatrix_report::text::run::run_json(&run);
        if !unreadable.is_empty() {
            doc["unreadable"] = serde_json::to_value(&unreadable)?;
        }
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else if series {
        crate::out::print(&iomatrix_report::text::series::series_text(&run))?;
    } else {
        crate::out::print(&show_text(&run, &unreadable))?;
    }
    if unreadable.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let mut said = format!(
        "iomatrix: error: run #{id} in {} holds {} stored figure(s) that cannot be read back (null in --json; a cell \
         whose metrics cannot be read is left out of the tables):\n",
        db.display(),
        unreadable.len()
    );
    for u in &unreadable {
        said += &format!("  {u}\n");
    }
    said += "  compare, sweep and report refuse this run; `iomatrix db check` checks every run. Restore the database \
              from a copy (made with `iomatrix db backup`)";
    eprintln!("{said}");
    Ok(ExitCode::from(crate::exit::FAILED))
}
