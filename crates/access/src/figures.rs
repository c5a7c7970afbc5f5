//! What an access cell stores, declared once: the suite writes it, its tables read it, and the
//! fio and Iometer importers name their cells with the same [`IoMix`].

use crate::runner::Second;
use crate::split::Moments;
use iomatrix_coord::{ClientFailure, StartTimes};
use iomatrix_core::figures::{
    or_default, CachedAtStart, Direction, Figures, IoMix, Metric, MetricId, QUEUE_DEPTH, RANDOM_PERCENT, READ_PERCENT,
};
use iomatrix_stats::LatencySummary;
use iomatrix_verify::Tally;
use serde::de::Deserializer;
use serde::{Deserialize, Serialize};

/// Requests per second of the cell, all clients over the common wall time.
pub const IOPS: Metric = Metric::new("iops", "IOPS", Direction::HigherIsBetter, 0);
/// MiB moved per second, all clients over the common wall time.
pub const MIB_PER_SEC: Metric = Metric::new("mib_per_sec", "MiB/s", Direction::HigherIsBetter, 1);
/// The clients' own MiB/s summed (IOzone's "children see").
pub const MIB_PER_SEC_SUM_OF_CLIENTS: Metric =
    Metric::new("mib_per_sec_sum_of_clients", "MiB/s", Direction::HigherIsBetter, 1);
/// The reads' 99th-percentile latency (ns).
pub const READ_P99_NS: Metric = Metric::new("read.p99_ns", "ns", Direction::LowerIsBetter, 0);
/// The writes' 99th-percentile latency (ns).
pub const WRITE_P99_NS: Metric = Metric::new("write.p99_ns", "ns", Direction::LowerIsBetter, 0);
/// Bytes per request: a parameter of the cell, stored with its figures.
pub const BLOCK_SIZE: Metric = Metric::new("block_size", "bytes", Direction::HigherIsBetter, 0);
const METRICS: &[Metric] = &[
    BLOCK_SIZE,
    READ_PERCENT,
    RANDOM_PERCENT,
    QUEUE_DEPTH,
    IOPS,
    MIB_PER_SEC,
    MIB_PER_SEC_SUM_OF_CLIENTS,
    READ_P99_NS,
    WRITE_P99_NS,
];
/// What the suite measures beside each cell's figure, compared and swept as rows of their own
/// (`SuiteShape::beside`): the %CPU of the clients, stored in the row's `cpu_percent` and read
/// through the stored row's figures.
pub const BESIDE: &[Metric] = &[iomatrix_core::figures::CPU_PERCENT];

/// One access cell's figures, as stored in its row's `metrics`. Stored runs from before the
/// block size had its own field read it from the row's record size ([`AccessCellFigures::read`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AccessCellFigures {
    /// Bytes per request; None in runs stored before it had its own field.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Read %, random % and queue depth.
    #[serde(flatten)]
    pub mix: IoMix,
    /// Which sample of its setting, from 1.
    #[serde(deserialize_with = "or_default")]
    pub repeat: u32,
    /// Requests per second, all clients over the common wall time.
    #[serde(deserialize_with = "or_default")]
    pub iops: f64,
    /// MiB per second, all clients over the common wall time.
    #[serde(deserialize_with = "or_default")]
    pub mib_per_sec: f64,
    /// The clients' own MiB/s summed.
    #[serde(deserialize_with = "or_default")]
    pub mib_per_sec_sum_of_clients: f64,
    /// Clients that failed the cell (`--on-client-error continue`); their figures are lost.
    #[serde(deserialize_with = "or_default")]
    pub failed_clients: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    #[serde(deserialize_with = "or_default")]
    pub start_barrier: Vec<StartTimes>,
    /// Bytes read.
    #[serde(deserialize_with = "or_default")]
    pub read_bytes: u64,
    /// Bytes written.
    #[serde(deserialize_with = "or_default")]
    pub write_bytes: u64,
    /// The reads' latency distribution, merged over the clients.
    #[serde(deserialize_with = "lenient_latency")]
    pub read: LatencySummary,
    /// The writes' latency distribution, merged over the clients.
    #[serde(deserialize_with = "lenient_latency")]
    pub write: LatencySummary,
    /// Requests and bytes of every second of the cell, summed over the clients.
    #[serde(deserialize_with = "or_default")]
    pub per_second: Vec<Second>,
    /// The figures over time, merged over the clients interval by interval; None in runs
    /// stored before it was recorded.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub series: Option<iomatrix_stats::Series>,
    /// How the clients issued their requests ("io_uring depth 8, ..."), each account once.
    #[serde(deserialize_with = "or_default")]
    pub requests: Vec<String>,
    /// All clients' verification tallies, when the plan stamps its data.
    #[serde(deserialize_with = "or_default")]
    pub verify: Option<Tally>,
    /// The clients' files in the page cache when the cell began; None where nobody could look
    /// (a server's files) and in runs stored before it was recorded.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// Queued requests' submission latency (fio's slat), reads' and writes', merged over the
    /// clients; None where the requests were not queued (their completion latency, fio's clat,
    /// is the cell's `clat.read` and `clat.write` histograms).
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub slat: Option<[Moments; 2]>,
    /// Open loop (`--arrivals`, a curve's points): the rate offered, all clients together, and
    /// the requests issued late and the arrivals never issued. Its latencies count from each
    /// request's intended start. None for a closed loop, and in runs stored before it.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<crate::OpenLoop>,
    /// A point of a curve (`--curve`): the curve's figures up to and with this point; the last
    /// stored point of a curve holds the curve's own.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub curve: Option<iomatrix_harness::curve::CurveFigures>,
    /// Under `--latency-target`: each client's search (the depth it found, what was asked, the
    /// depths judged), by rank; empty without a target and in runs stored before it.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Vec::is_empty")]
    pub latency_target: Vec<crate::TargetOutcome>,
    /// What `--steady-state` found (fio's steadystate, or SNIA PTS's rule): the rule, whether it
    /// was met and when (the cell then ended early), and the window it judged last; None without
    /// the rule and in runs stored before it.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub steady: Option<iomatrix_stats::steady::SteadyVerdict>,
    /// Under mpirun each rank judges its own figures (as fio's jobs without group_reporting):
    /// each rank's verdict, by rank; empty with threads and in runs stored before it.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Vec::is_empty")]
    pub steady_by_rank: Vec<iomatrix_stats::steady::SteadyVerdict>,
    /// The queue's depth as requests went in, and the requests per round of submissions and
    /// per reap (fio's IO depths, submit and complete), added over the clients; None in runs
    /// stored before they were counted.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub queue_depths: Option<crate::depths::QueueDepths>,
    /// Under `--bssplit` (fio's bssplit): the shares asked and the requests made of each size;
    /// None without it. `block_size` is then the largest size.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub block_split: Option<crate::bssplit::SplitDone>,
    /// The fio job the cell measured, where a run holds several (jobs run at once; an imported
    /// fio run's jobs); None otherwise.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub fio_job: Option<String>,
}

/// A side's latency as stored: the suite's summary, or an import's partial one (Iometer keeps
/// a mean and a maximum, in fractional nanoseconds); what is absent reads as 0.
fn lenient_latency<'de, D: Deserializer<'de>>(d: D) -> Result<LatencySummary, D::Error> {
    let stored = serde_json::Value::deserialize(d)?;
    if let Ok(whole) = serde_json::from_value(stored.clone()) {
        return Ok(whole);
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Partial {
        #[serde(deserialize_with = "or_default")]
        count: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        mean_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        min_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        p50_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        p90_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        p99_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        p99_9_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        p99_99_ns: Option<f64>,
        #[serde(deserialize_with = "or_default")]
        max_ns: Option<f64>,
    }
    let p: Partial = serde_json::from_value(stored).unwrap_or_default();
    let ns = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0).unwrap_or(0.0).round() as u64;
    Ok(LatencySummary {
        count: ns(p.count),
        mean_ns: p.mean_ns.unwrap_or(0.0),
        min_ns: ns(p.min_ns),
        p50_ns: ns(p.p50_ns),
        p90_ns: ns(p.p90_ns),
        p99_ns: ns(p.p99_ns),
        p99_9_ns: ns(p.p99_9_ns),
        p99_99_ns: ns(p.p99_99_ns),
        max_ns: ns(p.max_ns),
    })
}

impl AccessCellFigures {
    /// A stored cell's figures, its block size from `record_size` where the cell is older than
    /// the field; None where `metrics` is not an access cell's.
    pub fn read(metrics: &serde_json::Value, record_size: Option<u64>) -> Option<AccessCellFigures> {
        let mut figures = AccessCellFigures::deserialize(metrics).ok()?;
        figures.block_size = figures.block_size.or(record_size);
        Some(figures)
    }

    /// "4k qd=4 read=70% random=100%": the cell's name within its run (block size and
    /// [`IoMix::name`]), the end of its name across runs ("access 8m/4k qd=4 read=70% random=100%").
    pub fn name(block_size: u64, mix: &IoMix) -> String {
        format!("{} {}", iomatrix_core::ByteSize(block_size), mix.name())
    }
}

impl Figures for AccessCellFigures {
    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        let v = match id {
            _ if id == BLOCK_SIZE.id => self.block_size? as f64,
            _ if id == READ_PERCENT.id => self.mix.read_percent as f64,
            _ if id == RANDOM_PERCENT.id => self.mix.random_percent as f64,
            _ if id == QUEUE_DEPTH.id => self.mix.queue_depth as f64,
            _ if id == IOPS.id => self.iops,
            _ if id == MIB_PER_SEC.id => self.mib_per_sec,
            _ if id == MIB_PER_SEC_SUM_OF_CLIENTS.id => self.mib_per_sec_sum_of_clients,
            _ if id == READ_P99_NS.id => self.read.p99_ns as f64,
            _ if id == WRITE_P99_NS.id => self.write.p99_ns as f64,
            _ => return None,
        };
        Some(v)
    }

    fn unit(&self) -> &'static str {
        MIB_PER_SEC.unit
    }

    fn cell_name(&self) -> String {
        AccessCellFigures::name(self.block_size.unwrap_or(0), &self.mix)
    }
}
