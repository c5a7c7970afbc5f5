//! Whether a suite's timed interval holds fsync and close (IOzone's `-e`/`-c`, bonnie's `-b`),
//! as its conditions store them (`fsync_timed`, `close_timed`): read back once for every suite
//! that records them.

use iomatrix_core::figures::or_default;
use iomatrix_store::reader::{ConditionLine, Fact, LineAfter};
use iomatrix_store::Records;
use serde::Deserialize;

/// The two conditions, typed; each None where not stored (an import whose file did not say).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FsyncClose {
    #[serde(deserialize_with = "or_default")]
    fsync_timed: Option<bool>,
    #[serde(deserialize_with = "or_default")]
    close_timed: Option<bool>,
}

/// The two as stored, for `compare` to name when they differ (`SuiteFacts::compared`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FsyncCloseFacts {
    fsync_timed: Fact,
    close_timed: Fact,
}

/// `fsync_timed` and `close_timed` as `compare` names them, each absent where not stored.
pub fn fsync_close_compared(record: &Records<'_>) -> Vec<(String, Fact)> {
    let facts = FsyncCloseFacts::deserialize(record.conditions).unwrap_or_default();
    vec![("fsync_timed".into(), facts.fsync_timed), ("close_timed".into(), facts.close_timed)]
}

/// The "timing" line ("fsync included, close excluded"); None where the run does not say
/// whether fsync was timed.
pub fn fsync_close_line(record: &Records<'_>) -> Option<ConditionLine> {
    let timed = FsyncClose::deserialize(record.conditions).unwrap_or_default();
    let word = |timed: bool| if timed { "included" } else { "excluded" };
    let fsync = timed.fsync_timed?;
    let shown = format!("fsync {}, close {}", word(fsync), word(timed.close_timed.unwrap_or(false)));
    Some(ConditionLine::new(LineAfter::Timing, "timing", shown))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(conditions: &serde_json::Value) -> Option<String> {
        fsync_close_line(&Records { plan: &json!({}), environment: &json!({}), conditions })
            .map(|l| format!("{}: {}", l.name, l.shown))
    }

    #[test]
    fn fsync_and_close_read_as_stored_and_an_unsaid_fsync_shows_no_line() {
        let both = line(&json!({"fsync_timed": true, "close_timed": true}));
        assert_eq!(both.as_deref(), Some("timing: fsync included, close included"));
        let close_unsaid = line(&json!({"fsync_timed": false}));
        assert_eq!(close_unsaid.as_deref(), Some("timing: fsync excluded, close excluded"));
        assert_eq!(line(&json!({"fsync_timed": null, "close_timed": true})), None);
        assert_eq!(line(&json!("not an object")), None);
        let compared = fsync_close_compared(&Records {
            plan: &json!({}),
            environment: &serde_json::json!({}),
            conditions: &json!({"fsync_timed": 1}),
        });
        let shown: Vec<_> = compared.iter().map(|(name, fact)| (name.as_str(), fact.shown())).collect();
        assert_eq!(shown, [("fsync_timed", "1".to_string()), ("close_timed", "unknown".to_string())]);
    }
}
