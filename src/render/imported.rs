//! Runs imported from other tools (`iomatrix import`): where they came from
//! and what their file did not say, in place of the machine and target a
//! native run records; and bonnie++'s table rebuilt from the CSV's figures.

use iomatrix_bonnie::{BonniePlan, BonnieResult, BonnieTest, DEFAULT_CHUNK, MIN_TIME_NS};
use iomatrix_core::ByteSize;
use iomatrix_store::StoredRun;
use serde_json::Value;

/// The `imported` block of an imported run's conditions.
pub fn source(run: &StoredRun) -> Option<&serde_json::Map<String, Value>> {
    run.conditions.get("imported").and_then(Value::as_object)
}

/// Replaces the native lines an import cannot fill (machine, an unknown
/// target) with where the run came from and what its file did not say.
pub fn adjust_pairs(run: &StoredRun, pairs: &mut Vec<(String, String)>) {
    let Some(imp) = source(run) else { return };
    let c = &run.conditions;
    let text = |v: &Value| v.as_str().map(str::to_string);
    pairs.retain(|(key, _)| key != "machine" && key != "target");
    if let Some(target) = text(&c["target"]) {
        pairs.insert(0, ("target".into(), format!("{target} (file system unknown)")));
    }
    let mut from = imp.get("tool").and_then(text).unwrap_or_default();
    if let Some(v) = imp.get("version").and_then(text) {
        from += &format!(" {v}");
    }
    from += &format!(" output, {}", imp.get("source").and_then(text).unwrap_or_default());
    if let Some(at) = imp.get("measured_at").and_then(text) {
        from += &format!(", measured {at}");
    }
    pairs.insert(0, ("imported".into(), from));
    let list = |key: &str| -> Vec<String> {
        imp.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(text).collect()
    };
    let unknown = list("unknown");
    if !unknown.is_empty() {
        pairs.push(("not in the source".into(), unknown.join("; ")));
    }
    for note in list("notes") {
        pairs.push(("note".into(), note));
    }
    for skipped in list("skipped") {
        pairs.push(("skipped".into(), skipped));
    }
}

/// Whether the run's cells carry no CPU figure (IOzone's report has none).
pub fn without_cpu(run: &StoredRun) -> bool {
    source(run).is_some() && run.summary.suite == "iozone"
}

/// bonnie++'s table for a run imported from its CSV: measured figures as
/// bonnie++ printed them, `+++++ +++` where it printed that, blank where a
/// test did not run.
pub fn bonnie_report(run: &StoredRun) -> Option<String> {
    let imp = source(run)?;
    let p = &run.plan;
    let num = |key: &str| p[key].as_u64();
    let mut plan = BonniePlan::new(ByteSize(num("size").unwrap_or(0)));
    plan.chunk = num("chunk").map(ByteSize).unwrap_or(DEFAULT_CHUNK);
    plan.files = num("files").unwrap_or(0);
    plan.file_max = ByteSize(num("file_max").unwrap_or(0));
    plan.file_min = ByteSize(num("file_min").unwrap_or(0));
    plan.repeats = num("repeats").unwrap_or(1).max(1) as u32;
    // The table prints a measured figure only for a test that took at least
    // bonnie++'s minimum time, and +++++ below it: the CSV has no times, so
    // these are set for the display only (the stored cells keep 0).
    let mut results: Vec<BonnieResult> = run
        .cell_results
        .iter()
        .filter_map(|c| serde_json::from_value::<BonnieResult>(c.metrics.clone()).ok())
        .map(|mut r| {
            r.wall_ns = MIN_TIME_NS;
            r
        })
        .collect();
    for u in imp.get("unmeasured").and_then(Value::as_array).into_iter().flatten() {
        let (Some(test), Some(repeat)) = (u["test"].as_str(), u["repeat"].as_u64()) else { continue };
        let Ok(test) = test.parse::<BonnieTest>() else { continue };
        results.push(BonnieResult {
            test,
            repeat: repeat as u32,
            bytes: 0,
            ops: 0,
            writes: 0,
            wall_ns: 1,
            user_ns: 0,
            sys_ns: 0,
            per_sec: 0.0,
            unit: test.unit().to_string(),
            cpu_percent: 0.0,
            end_ns: 0,
        });
    }
    let machine = run.environment["host"].as_str().unwrap_or("unknown");
    let mut out = format!("\n{}", iomatrix_bonnie::report_for(machine, &plan, &results));
    if p["chunk"].is_null() && plan.size.bytes() > 0 {
        out.push_str("(chunk size not in the CSV: the Size column cannot show it)\n");
    }
    if run.cell_results.iter().any(|c| c.clients > 1) {
        out.push_str("(bonnie++ -c: each figure above is its sum over the concurrent copies)\n");
    }
    Some(out)
}
