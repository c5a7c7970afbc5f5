//! Whether a cell's figure is whole: the results database stores it, and every table, matrix
//! and report marks a figure that is not.

use serde::{Deserialize, Serialize};

/// How much of a cell was measured: every part (client, or connection where a client runs
/// several) finished it, some did, or none did. A part that failed took its figures with it, so a
/// partial cell's figure measures less work than its plan, and a failed cell's none of it. A
/// disturbed cell finished, but did not run for its time (the process was stopped, its clocks
/// disagree, or a timed cell ran well past its duration): its figures are kept and shown, marked,
/// and left out of medians and verdicts unless asked for (`--include-disturbed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStateKind {
    /// Every part finished the cell: its figures measure the whole plan.
    Complete,
    /// Some parts failed: the figures measure only the work of those that finished.
    Partial,
    /// No part finished: the cell has no figures.
    Failed,
    /// It finished but did not run for its time (stopped, clocks disagree, ran well past its
    /// duration): shown marked, left out of medians and verdicts by default.
    Disturbed,
}

impl CellStateKind {
    /// The word stored in a cell's `state` column and shown in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Partial => "partial",
            Self::Failed => "failed",
            Self::Disturbed => "disturbed",
        }
    }

    /// The state a stored cell's `state` column names.
    pub fn parse(s: &str) -> CellStateKind {
        match s {
            "complete" => Self::Complete,
            "partial" => Self::Partial,
            "disturbed" => Self::Disturbed,
            // Anything else was written by a newer iomatrix: not taken for a whole figure.
            _ => Self::Failed,
        }
    }
}
