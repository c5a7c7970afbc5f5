//! A stored metadata run read back: every phase of every iteration, as the cells stored them.

use crate::result::PhaseResult;
use iomatrix_store::StoredRun;

/// Every phase of every iteration of a stored run, in run order (cells without a phase record,
/// e.g. a cell no client finished, are left out).
pub fn phase_results(run: &StoredRun) -> Vec<PhaseResult> {
    run.cell_results.iter().filter_map(|cell| serde_json::from_value(cell.metrics.get("phase")?.clone()).ok()).collect()
}
