//! Bonnie runs as bonnie++ prints them, rebuilt from the stored cells; with
//! many clients, bonnie++'s figures are the sums of the clients' own rates,
//! and the clients table follows.

use iomatrix_bonnie::{BonniePlan, BonnieResult};
use iomatrix_store::StoredRun;

pub fn report(run: &StoredRun) -> String {
    if let Some(imported) = super::imported::bonnie_report(run) {
        return imported;
    }
    let Ok(plan) = serde_json::from_value::<BonniePlan>(run.plan.clone()) else {
        return "\n(the stored plan is not a Bonnie plan this iomatrix can read)\n".into();
    };
    let results: Vec<BonnieResult> =
        run.cell_results.iter().filter_map(|c| serde_json::from_value(c.metrics.clone()).ok()).collect();
    let mut out = format!("\n{}", iomatrix_bonnie::report_for(&run.summary.host, &plan, &results));
    if run.cell_results.iter().any(|c| c.clients > 1) {
        out.push_str("(with many clients each figure above is the sum of the clients' own rates)\n");
    }
    out + &super::clients::table(run, &CLIENT_COLUMNS)
}

const CLIENT_COLUMNS: super::clients::ClientColumns = super::clients::ClientColumns {
    unit: "each test's unit: KB/s, seeks/s or files/s",
    describe: |c| {
        let m = &c.metrics;
        format!("{} #{} ({})", c.test, m["repeat"], m["unit"].as_str().unwrap_or("?"))
    },
    aggregates: |c| {
        let m = &c.metrics;
        (m["per_sec_sum_of_clients"].as_f64().unwrap_or(0.0), m["per_sec_overall"].as_f64().unwrap_or(0.0), None)
    },
    client_rate: |f| f["per_sec"].as_f64(),
};
