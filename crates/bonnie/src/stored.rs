//! What a bonnie run alone records in its conditions, read back by type: whether fsync and
//! close were timed, how the per-char test did its I/O, and the user its I/O ran as (`-u`).

use iomatrix_core::figures::or_default;
use iomatrix_store::reader::{ConditionLine, LineAfter, SuiteFacts};
use iomatrix_store::Records;
use serde::Deserialize;

/// Bonnie's own conditions, as stored (each in words); absent where not said.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BonnieConditions {
    #[serde(deserialize_with = "or_default")]
    per_char: Option<String>,
    #[serde(deserialize_with = "or_default")]
    io_user: Option<String>,
}

/// The lines these conditions add to a run's header.
pub fn facts(record: &Records<'_>) -> SuiteFacts {
    let own = BonnieConditions::deserialize(record.conditions).unwrap_or_default();
    let mut condition_lines: Vec<ConditionLine> =
        iomatrix_harness::timed::fsync_close_line(record).into_iter().collect();
    for (name, shown) in [("per-char", own.per_char), ("I/O as", own.io_user)] {
        condition_lines.extend(shown.map(|shown| ConditionLine::new(LineAfter::BlockDevice, name, shown)));
    }
    let compared = iomatrix_harness::timed::fsync_close_compared(record);
    SuiteFacts { condition_lines, compared, ..SuiteFacts::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timing_per_char_and_user_are_lines_in_their_places() {
        let conditions =
            json!({"fsync_timed": false, "close_timed": true, "per_char": "putc(3)", "io_user": "uid 0, gid 0"});
        let facts = facts(&Records { plan: &json!({}), environment: &serde_json::json!({}), conditions: &conditions });
        let shown: Vec<_> =
            facts.condition_lines.iter().map(|l| (l.after, l.name.as_str(), l.shown.as_str())).collect();
        assert_eq!(
            shown,
            [
                (LineAfter::Timing, "timing", "fsync excluded, close included"),
                (LineAfter::BlockDevice, "per-char", "putc(3)"),
                (LineAfter::BlockDevice, "I/O as", "uid 0, gid 0"),
            ]
        );
    }
}
