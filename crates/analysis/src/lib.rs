//! iomatrix-analysis: what the seed authors did in spreadsheets, over stored
//! runs. No I/O: the caller loads the runs.
//!
//! - [`CellKey`] and [`Figure`]: what makes two cells "the same cell" (test,
//!   file size, record size, and for access specs queue depth and mix) and
//!   which figure of a cell is compared (KB/s, or the suite's own rate).
//! - [`Group`]: one side of a comparison, one run or several repeats, each
//!   cell summarised by its median and spread ([`CellStats`]); cells that
//!   are not whole are left out ([`LeftOut`]) unless [`Partial::Included`].
//!   Its suite's [`SuiteShape`], which the caller gives, says whether its
//!   cells form matrices and how its latencies are summarised.
//! - [`compare`]: B against A ([`Comparison`]): per matrix test the ratio
//!   matrix B/A with its record-size and file-size views, the mean change,
//!   the cells each side wins, the same over a [`Region`]; for scalar suites
//!   a metric table; latency percentiles side by side; the cells only one
//!   side has, and the conditions that differ; where the cells differ in one
//!   swept parameter only, the sweep that compares them ([`SweepHint`]).
//! - [`judge`]: whether a change is beyond noise (a Mann-Whitney rank test
//!   of the samples, [`Judgement`]); [`regressions`]: figures slower than a
//!   threshold beyond noise, for `--fail-if-slower`.
//! - [`outlier`]: samples flagged as outliers among their repeats (the modified Z-score) or as
//!   descheduled cells (a CPU % far below their repeats'), never dropped ([`Flagged`]).
//! - [`sweep`]: values per level of a swept setting and the % change
//!   between levels ([`Sweep`]).
//! - [`derive()`]: a named figure worked from a sweep's rows by a stated
//!   formula ([`Derivation`]), always marked derived ([`Derived`]).
//! - [`Limit`] and [`flag_cached`]: cells faster than a physical limit,
//!   and the boundary in words ([`CacheFlags`]).
//! - [`CacheVerdict`]: whether a run's figures measure the storage or the page cache, decided
//!   once from O_DIRECT, the files' size and the RAM.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod beside;
mod bound;
mod cache;
mod cells;
mod compare;
mod compare_many;
mod curve;
mod derive;
mod exclude;
mod gate;
mod headline;
mod hint;
mod history;
mod limit;
mod noise;
pub mod outlier;
mod row;
mod shape;
mod sweep;

pub use cache::CacheVerdict;
pub use cells::{median, size_range, Admit, CellKey, CellStats, Disturbed, Figure, Group, LeftOut, Partial};
pub use compare::{
    compare, gate_candidates, regressions, BoundEffect, Comparison, Difference, LatencyRow, MatrixComparison,
    NoiseSummary, NotKnown, OperationRow, OperationTable, Region, ScalarRow, Tally,
};
pub use compare_many::{compare_many, distinguishing_labels, side_letter, ManyComparison, ManyRow, Side, SideCell};
pub use curve::{curve_key, curves_of, CurveFigure, CurveRow, PointFigures, RunCurve};
pub use derive::{derive, derive_compare, Derivation, Derived, DerivedRow, Factor, Operation, Rows};
pub use exclude::exclude_from_means;
pub use gate::{
    hold, hold_family, holm, human_pct, repeats_words, Candidate, Check, Family, Gate, Regression, FAMILY_ALPHA,
};
pub use headline::{headline_tables, published_sides, HeadlineRow, HeadlineTable, PublishedSide};
pub use hint::{sweep_hint, SweepHint, SweptParameter, SWEPT_PARAMETERS};
pub use history::{history, History, HistoryPoint, HistoryRun, PointStats, NOTE_LABEL};
pub use limit::{flag_cached, CacheFlags, Limit};
pub use noise::{detectable_change, judge, worse_p, Judgement, ALPHA};
pub use outlier::{Flag, Flagged};
pub use shape::{SuiteShape, SweptFields};
/// A flag's value analysis cannot use (`--limit`, `--derive`): the message names the flag, the
/// value and the fix. Always the user's to fix (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadFlag(pub String);

impl From<BadFlag> for iomatrix_core::UsageError {
    fn from(e: BadFlag) -> Self {
        iomatrix_core::UsageError(e.0)
    }
}

pub use sweep::{
    mean_of_rows, sweep, sweep_excluding, BlockRatio, Direction, DirectionSummary, Sweep, SweepLevel, SweepRow,
};
