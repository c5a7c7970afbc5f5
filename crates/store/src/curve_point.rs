//! What shared code reads of a throughput-latency curve's point (issue 52): the curve's figures
//! stored with the point, as `iomatrix_harness::curve::CurveFigures` writes them under the
//! cell's `curve`. Read, not written, here: the harness (a floor above the store) owns the type
//! and its test checks that what it writes reads back through [`CurvePoint`].

use iomatrix_core::figures::or_default;
use iomatrix_stats::LatencySummary;
use serde::Deserialize;

/// A point's curve figures, as the curve stood after the point: the last point stored of a
/// curve holds the curve's own. What is absent (a run stored before a field) reads as None.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CurvePoint {
    /// This point's latency, reads and writes together (open loop: from each request's
    /// intended start).
    #[serde(deserialize_with = "or_default")]
    pub latency: Option<LatencySummary>,
    /// The curve's maximum, measured first (closed loop), all clients' requests a second.
    #[serde(deserialize_with = "or_default")]
    pub max_iops: Option<f64>,
    /// `--stop-curve`, where given.
    #[serde(deserialize_with = "or_default")]
    pub bound: Option<CurveBound>,
    /// Whether this point is past the bound.
    #[serde(deserialize_with = "or_default")]
    pub past_bound: bool,
    /// The highest achieved rate of a point so far that meets the bound; None without a bound,
    /// or where no point met it.
    #[serde(deserialize_with = "or_default")]
    pub max_within_bound_iops: Option<f64>,
    /// The highest achieved rate of any point so far.
    #[serde(deserialize_with = "or_default")]
    pub peak_iops: Option<f64>,
    /// SPEC SFS 2014's overall response time over the open-loop points so far, in ns; None with
    /// fewer than two of them.
    #[serde(deserialize_with = "or_default")]
    pub overall_response_time_ns: Option<f64>,
    /// How the curve ended, in words, where its bound ended it.
    #[serde(deserialize_with = "or_default")]
    pub ended: Option<String>,
}

/// A curve's latency bound as stored: the figure judged (`mean`, `p50`, `p99`, `p99.9`) and
/// its highest value that meets the bound.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct CurveBound {
    /// The figure judged, as the harness's `Statistic` names it.
    #[serde(deserialize_with = "or_default")]
    pub statistic: String,
    /// Its highest value that meets the bound, in ns.
    #[serde(deserialize_with = "or_default")]
    pub ns: u64,
}

impl std::fmt::Display for CurveBound {
    /// `p99 <= 1.00 ms`, as the harness's bound prints itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <= {}", self.statistic, iomatrix_core::human::nanos(self.ns as f64))
    }
}
