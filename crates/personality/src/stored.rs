//! What a personality run alone records that `compare` names when it differs between sides:
//! closed or open loop, the offered rate per connection, and the connections per client.

use iomatrix_store::reader::{Fact, SuiteFacts};
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
    let compared = vec![
        ("loop".into(), c.pacing_loop),
        ("target_rate_per_connection".into(), c.target_rate_per_connection),
        ("connections".into(), c.connections),
    ];
    SuiteFacts { compared, ..SuiteFacts::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
