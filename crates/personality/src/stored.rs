//! What a personality run alone records that `compare` names when it differs between sides:
//! closed or open loop, the offered rate per connection, and the connections per client; and
//! the figures its plan binds together (a closed loop's per-operation rates).

use iomatrix_store::reader::{BoundRates, Fact, SuiteFacts};
use iomatrix_store::Records;
use serde::Deserialize;

/// The personality's own compared conditions, as stored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ComparedConditions {
    #[serde(rename = "loop")]
    pacing_loop: Fact,
    target_rate_per_connection: Fact,
    connections: Fact,
}

/// The conditions compare names, each absent where the run does not say.
pub fn facts(record: &Records<'_>) -> SuiteFacts {
    let c = ComparedConditions::deserialize(record.conditions).unwrap_or_default();
    let closed = c.pacing_loop.text() == Some("closed");
    let compared = vec![
        ("loop".into(), c.pacing_loop),
        ("target_rate_per_connection".into(), c.target_rate_per_connection),
        ("connections".into(), c.connections),
    ];
    let bound_rates = if closed { bound_rates(record.plan) } else { Vec::new() };
    SuiteFacts { compared, bound_rates, ..SuiteFacts::default() }
}

/// The stored plan's phases, as far as the bound rates need them.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredPlan {
    personality: Option<StoredPersonality>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredPersonality {
    phases: Vec<StoredPhase>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredPhase {
    name: String,
    flows: Vec<StoredFlow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredFlow {
    rate: Option<f64>,
    ops: Vec<StoredOp>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredOp {
    op: String,
}

/// In a closed loop each connection starts its next flow when its last one ends (in turn, or
/// drawn by weight), so every operation's count is the loop's iterations times a constant (each
/// flow's share times how often the flow holds the operation), and its rate the loop's rate times
/// that constant: the per-operation rates of a phase move as one. A flow with its own rate (an
/// open loop) is paced by its own arrivals: no phase with one is bound. A phase of one operation
/// binds nothing.
fn bound_rates(plan: &serde_json::Value) -> Vec<BoundRates> {
    let plan = StoredPlan::deserialize(plan).unwrap_or_default();
    let phases = plan.personality.map(|p| p.phases).unwrap_or_default();
    let mut out = Vec::new();
    for phase in phases.into_iter().filter(|p| p.flows.iter().all(|f| f.rate.is_none())) {
        let mut operations: Vec<String> = Vec::new();
        for op in phase.flows.iter().flat_map(|f| &f.ops) {
            if !op.op.is_empty() && !operations.contains(&op.op) {
                operations.push(op.op.clone());
            }
        }
        if operations.len() > 1 {
            out.push(BoundRates { test: phase.name, operations, what: "flow loop" });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_closed_loops_operations_are_bound_and_an_open_loops_are_not() {
        let plan = json!({"personality": {"phases": [
            {"name": "run", "flows": [
                {"rate": null, "ops": [{"op": "delete"}]},
                {"rate": null, "ops": [{"op": "create"}, {"op": "append"}, {"op": "fsync"}, {"op": "close"}]},
                {"rate": null, "ops": [{"op": "open"}, {"op": "read"}, {"op": "close"}]}
            ]},
            {"name": "stat", "flows": [{"rate": null, "ops": [{"op": "stat"}]}]}
        ]}});
        let closed = json!({"loop": "closed"});
        let facts_of = |conditions: &serde_json::Value| {
            facts(&Records { plan: &plan, environment: &json!({}), conditions }).bound_rates
        };
        let bound = facts_of(&closed);
        assert_eq!(bound.len(), 1, "a phase of one operation binds nothing: {bound:?}");
        assert_eq!(bound[0].test, "run");
        assert_eq!(bound[0].operations, ["delete", "create", "append", "fsync", "close", "open", "read"]);
        assert!(facts_of(&json!({"loop": "open"})).is_empty(), "--rate: each operation's arrivals are its own");
        assert!(facts_of(&json!({})).is_empty(), "a run that does not say its loop binds nothing");
    }

    #[test]
    fn loop_rate_and_connections_read_as_stored() {
        let conditions = json!({"loop": "open", "target_rate_per_connection": null, "connections": 4});
        let compared =
            facts(&Records { plan: &json!({}), environment: &serde_json::json!({}), conditions: &conditions }).compared;
        let shown: Vec<_> = compared.iter().map(|(name, fact)| (name.as_str(), fact.shown())).collect();
        assert_eq!(
            shown,
            [("loop", "open".into()), ("target_rate_per_connection", "unknown".into()), ("connections", "4".into())]
        );
    }
}
