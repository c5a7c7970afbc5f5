//! What a backup walk's cell stores, declared once: the merged walk ([`BackupResult`]) and the
//! many-client figures beside it.

use crate::BackupResult;
use iomatrix_core::figures::{Direction, Figures, Metric, MetricId};
use serde::{Deserialize, Serialize};

/// The sum of the clients' own MiB/min, each over its open + read + close time.
pub const MIB_PER_MIN_SUM_OF_CLIENTS: Metric =
    Metric::new("mib_per_min_sum_of_clients", "MiB/min", Direction::HigherIsBetter, 1);
/// All bytes over the time from the common start to the last client's end.
pub const MIB_PER_MIN_OVERALL: Metric = Metric::new("mib_per_min_overall", "MiB/min", Direction::HigherIsBetter, 1);
const METRICS: &[Metric] = &[MIB_PER_MIN_SUM_OF_CLIENTS, MIB_PER_MIN_OVERALL];

/// One backup walk's figures, as stored in its row's `metrics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackupCellFigures {
    /// The walk's figures (the clients' total).
    #[serde(flatten)]
    pub walk: BackupResult,
    /// The clients' own MiB/min summed. 0 when the stored row lacks it.
    #[serde(default)]
    pub mib_per_min_sum_of_clients: f64,
    /// All bytes over the common wall time, in MiB/min. 0 when the stored row lacks it.
    #[serde(default)]
    pub mib_per_min_overall: f64,
    /// From the common start to the last client's end.
    #[serde(default)]
    pub overall_ns: u64,
    /// The files read over time, merged over the clients; None in runs stored before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<iomatrix_stats::Series>,
}

impl Figures for BackupCellFigures {
    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        match id {
            _ if id == MIB_PER_MIN_SUM_OF_CLIENTS.id => Some(self.mib_per_min_sum_of_clients),
            _ if id == MIB_PER_MIN_OVERALL.id => Some(self.mib_per_min_overall),
            _ => None,
        }
    }

    fn unit(&self) -> &'static str {
        MIB_PER_MIN_OVERALL.unit
    }

    fn cell_name(&self) -> String {
        "backup walk".into()
    }
}
