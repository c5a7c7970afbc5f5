//! What a file-server run alone records, read back by type: its plan's file sizes, whose mix
//! names its cells ("4k..1m (3 sizes)", or "sizes from a profile").

use iomatrix_store::reader::{Fact, SuiteFacts};
use iomatrix_store::Records;
use serde::de::IgnoredAny;
use serde::Deserialize;

/// The plan's sizes as stored ([`crate::FileSizes`]: a list, or a profile).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StoredSizes {
    List(Vec<IgnoredOrSize>),
    Profile(IgnoredAny),
}

/// A size of the list; anything else in it is passed over, as runs of any age read.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum IgnoredOrSize {
    Size(u64),
    Other(IgnoredAny),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StoredPlan {
    #[serde(deserialize_with = "iomatrix_core::figures::or_default")]
    sizes: Option<StoredSizes>,
}

/// The conditions `compare` names when they differ: whether each phase began with a dropped
/// page cache, and the connections per client.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ComparedConditions {
    drop_caches: Fact,
    connections: Fact,
}

/// The run's size mix (a list of more than one size named by its range, or a profile) and the
/// conditions compare names.
pub fn facts(record: &Records<'_>) -> SuiteFacts {
    let c = ComparedConditions::deserialize(record.conditions).unwrap_or_default();
    let compared = vec![("drop_caches".into(), c.drop_caches), ("connections".into(), c.connections)];
    let size_mix = match StoredPlan::deserialize(record.plan).unwrap_or_default().sizes {
        Some(StoredSizes::Profile(_)) => Some("sizes from a profile".to_string()),
        Some(StoredSizes::List(list)) => {
            let sizes: Vec<u64> = list
                .into_iter()
                .filter_map(|s| match s {
                    IgnoredOrSize::Size(size) => Some(size),
                    IgnoredOrSize::Other(_) => None,
                })
                .collect();
            iomatrix_analysis::size_range(&sizes)
        }
        None => None,
    };
    SuiteFacts { size_mix, compared, ..SuiteFacts::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mix(plan: serde_json::Value) -> Option<String> {
        facts(&Records { plan: &plan, environment: &serde_json::json!({}), conditions: &json!({}) }).size_mix
    }

    #[test]
    fn a_size_mix_is_named_by_its_range_or_its_profile_never_by_one_size() {
        assert_eq!(
            mix(json!({"sizes": {"list": [65536, 4096, 1048576, "x", 4096]}})).as_deref(),
            Some("4k..1m (3 sizes)")
        );
        assert_eq!(mix(json!({"sizes": {"list": [4096]}})), None);
        assert_eq!(mix(json!({"sizes": {"profile": {"path": "x.profile"}}})).as_deref(), Some("sizes from a profile"));
        assert_eq!(mix(json!({"files": [4096]})), None);
        assert_eq!(mix(json!("odd")), None);
        let compared = facts(&Records {
            plan: &json!({}),
            environment: &serde_json::json!({}),
            conditions: &json!({"connections": 590}),
        })
        .compared;
        assert_eq!(compared, [("drop_caches".into(), Fact::Absent), ("connections".into(), Fact::Other("590".into()))]);
    }
}
