//! What a Bonnie cell stores, declared once: bonnie++'s figures of the test ([`BonnieResult`],
//! which the bonnie++ and Bonnie importers build too) and the many-client figures beside them.

use crate::BonnieResult;
use iomatrix_core::figures::{or_default, CachedAtStart, Direction, Figures, Metric, MetricId};
use iomatrix_verify::Tally;
use serde::{Deserialize, Serialize};

/// The test's rate in its unit (KB/s, seeks/s, files/s): bonnie++'s figure, the sum of the
/// clients' own rates.
pub const PER_SEC_SUM_OF_CLIENTS: Metric =
    Metric::new("per_sec_sum_of_clients", "per second", Direction::HigherIsBetter, 0);
/// All the work over the time from the common start to the last client's end.
pub const PER_SEC_OVERALL: Metric = Metric::new("per_sec_overall", "per second", Direction::HigherIsBetter, 0);
const METRICS: &[Metric] = &[PER_SEC_SUM_OF_CLIENTS, PER_SEC_OVERALL];
/// What the suite measures beside each cell's figure, compared and swept as rows of their own
/// (`SuiteShape::beside`): the %CPU of the clients, stored in the row's `cpu_percent` and read
/// through the stored row's figures.
pub const BESIDE: &[Metric] = &[iomatrix_core::figures::CPU_PERCENT];

/// One Bonnie cell's figures, as stored in its row's `metrics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BonnieCellFigures {
    /// The cell's figures as one result (the clients' total).
    #[serde(flatten)]
    pub result: BonnieResult,
    /// The clients' own rates added up (IOzone's "children see"); the result's `per_sec`
    /// with one client. 0 when the stored row lacks it.
    #[serde(default)]
    pub per_sec_sum_of_clients: f64,
    /// All bytes (or seeks, or files) over the cell's wall time ("parent sees"). 0 when the
    /// stored row lacks it.
    #[serde(default)]
    pub per_sec_overall: f64,
    /// All clients' verification tallies, when the plan stamps its data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Tally>,
    /// On a server: the putc or getc test's buffer, one negotiated request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_char_buffer_bytes: Option<usize>,
    /// The clients' data files in the page cache as the test began, summed; None where nobody
    /// could look (the file tests, a server's files) and in runs stored before it was recorded.
    #[serde(default, deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// The test's operations over time, merged over the clients; None in runs stored before it
    /// was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<iomatrix_stats::Series>,
}

impl Figures for BonnieCellFigures {
    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        match id {
            _ if id == PER_SEC_SUM_OF_CLIENTS.id => Some(self.per_sec_sum_of_clients),
            _ if id == PER_SEC_OVERALL.id => Some(self.per_sec_overall),
            _ => None,
        }
    }

    fn unit(&self) -> &'static str {
        match self.result.unit.as_str() {
            "KB/s" => "KB/s",
            "seeks/s" => "seeks/s",
            "files/s" => "files/s",
            _ => "per second",
        }
    }

    /// "write #1 (KB/s)".
    fn cell_name(&self) -> String {
        format!("{} #{} ({})", self.result.test.name(), self.result.repeat, self.result.unit)
    }
}
