//! What an IOzone cell stores beside its row's columns, declared once: the runner builds it when
//! it merges a cell ([`crate::CellResult`]), the suite writes it into the row, its tables read it.

use iomatrix_coord::{ClientFailure, StartTimes};
use iomatrix_core::figures::{or_default, CachedAtStart, Direction, Figures, Metric, MetricId};
use iomatrix_verify::Tally;
use serde::{Deserialize, Serialize};

/// IOzone's "children see": the sum of the clients' own rates (the row's `kib_per_sec`).
pub const KIB_PER_SEC: Metric = Metric::new("kib_per_sec", "KB/s", Direction::HigherIsBetter, 0);
/// IOzone's "parent sees": all bytes over the time from the common start to the last finish.
pub const KIB_PER_SEC_OVERALL: Metric = Metric::new("kib_per_sec_overall", "KB/s", Direction::HigherIsBetter, 0);
/// The bytes every client had completed when the first finished, over that time.
pub const KIB_PER_SEC_STONEWALLED: Metric =
    Metric::new("kib_per_sec_stonewalled", "KB/s", Direction::HigherIsBetter, 0);
const METRICS: &[Metric] = &[KIB_PER_SEC, KIB_PER_SEC_OVERALL, KIB_PER_SEC_STONEWALLED];
/// What the suite measures beside each cell's figure, compared and swept as rows of their own
/// (`SuiteShape::beside`): the %CPU of the clients, stored in the row's `cpu_percent` and read
/// through the stored row's figures.
pub const BESIDE: &[Metric] = &[iomatrix_core::figures::CPU_PERCENT];

/// One IOzone cell's own figures, as stored in its row's `metrics`. A field a stored cell lacks
/// or holds in another type (an imported `-R` report has none of them) reads as absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IozoneCellFigures {
    /// All clients' bytes over the cell's wall time, in KiB/s (IOzone's "parent sees").
    #[serde(deserialize_with = "or_default")]
    pub kib_per_sec_overall: f64,
    /// None where the source has no stonewalled figure.
    #[serde(deserialize_with = "or_default")]
    pub kib_per_sec_stonewalled: Option<f64>,
    /// When the first client finished (ns from the common start): where the stonewalled figure cuts.
    #[serde(deserialize_with = "or_default")]
    pub first_finish_ns: u64,
    /// The clients that failed the cell (`--on-client-error continue`); their figures are lost.
    #[serde(deserialize_with = "or_default")]
    pub failed_clients: Vec<ClientFailure>,
    /// The bytes the failed clients' files would have moved.
    #[serde(deserialize_with = "or_default")]
    pub lost_bytes: u64,
    /// Every client's arrival at and release from the start barrier, by rank.
    #[serde(deserialize_with = "or_default")]
    pub start_barrier: Vec<StartTimes>,
    /// Which repeat of its pair this cell is, from 1.
    #[serde(deserialize_with = "or_default")]
    pub repeat: u32,
    /// All clients' verification tallies, when the plan stamps its data.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub verify: Option<Tally>,
    /// The clients' files in the page cache just before the cell's start barrier, summed; None
    /// where nobody could look (a server's files) and in runs stored before it was recorded.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// The records over time, merged over the clients; None in runs stored before it was
    /// recorded.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub series: Option<iomatrix_stats::Series>,
}

/// A cell's figures with its row's headline rate, read through [`Figures`].
pub struct IozoneFigures<'a> {
    /// The row's headline rate: the clients' own rates summed, in KiB/s.
    pub kib_per_sec: f64,
    /// The test's name as stored.
    pub test: &'a str,
    /// The file size (bytes).
    pub file_size: u64,
    /// The record size (bytes).
    pub record_size: u64,
    /// The cell's own stored figures.
    pub own: IozoneCellFigures,
}

impl Figures for IozoneFigures<'_> {
    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        match id {
            _ if id == KIB_PER_SEC.id => Some(self.kib_per_sec),
            _ if id == KIB_PER_SEC_OVERALL.id => Some(self.own.kib_per_sec_overall),
            _ if id == KIB_PER_SEC_STONEWALLED.id => self.own.kib_per_sec_stonewalled,
            _ => None,
        }
    }

    fn unit(&self) -> &'static str {
        KIB_PER_SEC.unit
    }

    /// "write 64m 4k".
    fn cell_name(&self) -> String {
        let size = |b: u64| iomatrix_core::ByteSize(b).to_string();
        format!("{} {} {}", self.test, size(self.file_size), size(self.record_size))
    }
}
