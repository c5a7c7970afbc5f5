//! A stored metadata run read back: every phase of every iteration, as the cells stored them.

use crate::result::PhaseResult;
use iomatrix_store::reader::{ConditionLine, Fact, LineAfter, SuiteFacts};
use iomatrix_store::StoredRun;

/// Every phase of every iteration of a stored run, in run order (cells without a phase record,
/// e.g. a cell no client finished, are left out).
pub fn phase_results(run: &StoredRun) -> Vec<PhaseResult> {
    run.cell_results.iter().filter_map(|cell| serde_json::from_value(cell.metrics.get("phase")?.clone()).ok()).collect()
}

/// The suite's own conditions, as its runs store them (each absent in a run that does not say).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct StoredConditions {
    rates: Fact,
    tree: Fact,
    layout: Fact,
    /// Open loop or a curve (`--rate`, `--curve`); absent in a closed-loop run.
    load: Fact,
}

/// What a metadata run alone records: its rates' rules, its tree and its layout as condition
/// lines, and the tree and layout as conditions compare names when they differ.
pub fn facts(record: &iomatrix_store::Records<'_>) -> SuiteFacts {
    let c: StoredConditions = serde::Deserialize::deserialize(record.conditions).unwrap_or_default();
    let condition_lines = [("rates", &c.rates), ("tree", &c.tree), ("layout", &c.layout), ("load", &c.load)]
        .into_iter()
        .filter_map(|(name, fact)| match fact {
            Fact::Text(shown) => Some(ConditionLine::new(LineAfter::Timing, name, shown.clone())),
            _ => None,
        })
        .collect();
    SuiteFacts {
        condition_lines,
        compared: vec![("layout".into(), c.layout), ("tree".into(), c.tree), ("load".into(), c.load)],
        ..Default::default()
    }
}
