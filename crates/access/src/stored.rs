//! What an access run alone records in its conditions, read back by type: where the clients'
//! threads ran (`--pin`), the one file they shared (`--shared-file`), the warm-up (`--ramp`),
//! skewed offsets (`--distribution`), an open loop or curve (`--arrivals`, `--curve`), the
//! latency target's search (`--latency-target`) and the steady-state rule (`--steady-state`), each
//! absent in runs stored before it was said or when it was not asked for.

use iomatrix_core::figures::or_default;
use iomatrix_store::reader::{ConditionLine, LineAfter, SuiteFacts};
use iomatrix_store::Records;
use serde::Deserialize;

/// The access suite's own conditions, as stored (each in words).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AccessConditions {
    #[serde(deserialize_with = "or_default")]
    pin: Option<String>,
    #[serde(deserialize_with = "or_default")]
    shared_file: Option<String>,
    #[serde(deserialize_with = "or_default")]
    ramp: Option<String>,
    #[serde(deserialize_with = "or_default")]
    distribution: Option<String>,
    #[serde(deserialize_with = "or_default")]
    open_loop: Option<String>,
    latency_target: Option<String>,
    steady_state: Option<String>,
}

/// The lines these conditions add to a run's header.
pub fn facts(record: &Records<'_>) -> SuiteFacts {
    let own = AccessConditions::deserialize(record.conditions).unwrap_or_default();
    let lines = [
        (LineAfter::Clients, "placement", own.pin),
        (LineAfter::Clients, "shared file", own.shared_file),
        (LineAfter::Backend, "ramp", own.ramp),
        (LineAfter::Backend, "distribution", own.distribution),
        (LineAfter::Backend, "load", own.open_loop),
        (LineAfter::Backend, "latency target", own.latency_target),
        (LineAfter::Backend, "steady state", own.steady_state),
    ];
    let condition_lines =
        lines.into_iter().filter_map(|(after, name, shown)| Some(ConditionLine::new(after, name, shown?))).collect();
    SuiteFacts { condition_lines, ..SuiteFacts::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_condition_said_is_a_line_in_its_place_and_one_of_another_type_is_none() {
        let conditions = json!({"pin": "shallow", "shared_file": "one file", "ramp": 3, "distribution": "zipf:1.2"});
        let facts = facts(&Records { plan: &json!({}), environment: &serde_json::json!({}), conditions: &conditions });
        let shown: Vec<_> =
            facts.condition_lines.iter().map(|l| (l.after, l.name.as_str(), l.shown.as_str())).collect();
        assert_eq!(
            shown,
            [
                (LineAfter::Clients, "placement", "shallow"),
                (LineAfter::Clients, "shared file", "one file"),
                (LineAfter::Backend, "distribution", "zipf:1.2")
            ]
        );
        assert_eq!(facts.size_mix, None);
        let none = super::facts(&Records {
            plan: &json!(null),
            environment: &serde_json::json!({}),
            conditions: &json!(null),
        });
        assert_eq!(none, SuiteFacts::default());
    }
}
