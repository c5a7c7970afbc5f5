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

/// Where a suite stores a curve point's load and figures inside its cell's own object (the
/// metadata suite's `phase`), read typed.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Nested {
    #[serde(deserialize_with = "or_default")]
    load: Option<iomatrix_core::CurveLoad>,
    #[serde(deserialize_with = "or_default")]
    curve: Option<CurvePoint>,
}

impl crate::CellFigures {
    /// The cell as a point of a curve: its load and the curve's figures stored with it, at the
    /// top of its figures (access) or in its phase (metadata); None for a cell of no curve.
    pub fn curve_point(&self) -> Option<(iomatrix_core::CurveLoad, CurvePoint)> {
        if let (Some(load), Some(curve)) = (self.load, self.curve.clone()) {
            return Some((load, curve));
        }
        let nested = Nested::deserialize(self.phase.as_ref()?).ok()?;
        Some((nested.load?, nested.curve?))
    }
}

#[cfg(test)]
mod tests {
    use crate::CellFigures;

    #[test]
    fn a_point_is_read_where_its_suite_stores_it() {
        let curve = serde_json::json!({"max_iops": 2000.0, "peak_iops": 2000.0, "past_bound": false});
        let access = CellFigures::of(&serde_json::json!({"load": {"percent": 50}, "curve": curve}));
        let metadata = CellFigures::of(&serde_json::json!({"phase": {"load": "max", "curve": curve}}));
        let (load, point) = access.curve_point().unwrap();
        assert_eq!((load, point.max_iops), (iomatrix_core::CurveLoad::Percent(50), Some(2000.0)));
        assert_eq!(metadata.curve_point().unwrap().0, iomatrix_core::CurveLoad::Max);
        assert!(CellFigures::of(&serde_json::json!({"phase": "write"})).curve_point().is_none());
    }
}
