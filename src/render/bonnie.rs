//! Bonnie runs as bonnie++ prints them, rebuilt from the stored cells.

use iomatrix_bonnie::{BonniePlan, BonnieResult};
use iomatrix_store::StoredRun;

pub fn report(run: &StoredRun) -> String {
    let Ok(plan) = serde_json::from_value::<BonniePlan>(run.plan.clone()) else {
        return "\n(the stored plan is not a Bonnie plan this iomatrix can read)\n".into();
    };
    let results: Vec<BonnieResult> =
        run.cell_results.iter().filter_map(|c| serde_json::from_value(c.metrics.clone()).ok()).collect();
    format!("\n{}", iomatrix_bonnie::report_for(&run.summary.host, &plan, &results))
}
