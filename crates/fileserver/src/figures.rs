//! What a file-server phase stores, declared once: the suite writes [`FileserverCellFigures`]
//! into its row's `metrics` and a [`ConnectionRecord`] per connection into `client_figures`,
//! and its tables ([`crate::render`]) read them back. Every field reads leniently
//! ([`or_default`]): a stored run of any age reads, what it lacks as 0 or absent, as the
//! string-keyed reads before these types did.

use crate::{ConnectionError, Op, Planned};
use iomatrix_coord::{ClientFailure, StartTimes};
use iomatrix_core::figures::{or_default, Direction, Figures, Metric, MetricId, READ_PERCENT};
use iomatrix_stats::LatencySummary;
use iomatrix_verify::Tally;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// All bytes over the phase's completion time, in KB/s.
pub const TOTAL_KIB_PER_SEC: Metric = Metric::new("total_kib_per_sec", "KB/s", Direction::HigherIsBetter, 2);
/// The mean of the finished connections' own KB/s (seed 003's figure).
pub const AVG_CONNECTION_KIB_PER_SEC: Metric =
    Metric::new("avg_connection_kib_per_sec", "KB/s", Direction::HigherIsBetter, 2);
/// The clients' own KB/s summed.
pub const KIB_PER_SEC_SUM_OF_CLIENTS: Metric =
    Metric::new("kib_per_sec_sum_of_clients", "KB/s", Direction::HigherIsBetter, 2);
/// The phase's completion time: the common release to the last connection's last operation.
pub const COMPLETION_NS: Metric = Metric::new("completion_ns", "ns", Direction::LowerIsBetter, 0);
/// Operations planned for connections that failed and not done.
pub const LOST_SAMPLES: Metric = Metric::new("lost_samples", "operations", Direction::LowerIsBetter, 0);
/// Connections that failed in the phase.
pub const CONNECTIONS_FAILED: Metric = Metric::new("connections_failed", "connections", Direction::LowerIsBetter, 0);
const METRICS: &[Metric] = &[
    TOTAL_KIB_PER_SEC,
    AVG_CONNECTION_KIB_PER_SEC,
    KIB_PER_SEC_SUM_OF_CLIENTS,
    COMPLETION_NS,
    LOST_SAMPLES,
    CONNECTIONS_FAILED,
    READ_PERCENT,
];
/// What the suite measures beside each cell's figure, compared and swept as rows of their own
/// (`SuiteShape::beside`): the %CPU of the clients, stored in the row's `cpu_percent` and read
/// through the stored row's figures.
pub const BESIDE: &[Metric] = &[iomatrix_core::figures::CPU_PERCENT];

/// One phase's figures over every client, as stored in its row's `metrics`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileserverCellFigures {
    /// "write", "read" or "mix" ([`crate::Phase::name`]).
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Of a mixed phase only: the visits that read, in %; the rest rewrite.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<u64>,
    /// Each operation type the phase does, timed: the merged histogram's summary.
    #[serde(deserialize_with = "lenient_ops")]
    pub ops: BTreeMap<Op, OpTimes>,
    /// What the plan asked of all connections in this phase.
    #[serde(deserialize_with = "or_default")]
    pub planned: Planned,
    /// What they did: files finished, bytes moved, operations that succeeded.
    #[serde(deserialize_with = "or_default")]
    pub done: Planned,
    /// What the connections that failed did not do.
    #[serde(deserialize_with = "or_default")]
    pub lost: Planned,
    /// Operations lost with the failed connections (`lost`'s operations).
    #[serde(deserialize_with = "or_default")]
    pub lost_samples: u64,
    /// The mean of the finished connections' own KB/s (seed 003's figure).
    #[serde(deserialize_with = "or_default")]
    pub avg_connection_kib_per_sec: f64,
    /// All bytes over the completion time, in KB/s.
    #[serde(deserialize_with = "or_default")]
    pub total_kib_per_sec: f64,
    /// The common release to the last connection's last operation (ns).
    #[serde(deserialize_with = "or_default")]
    pub completion_ns: u64,
    /// Connections that finished the phase.
    #[serde(deserialize_with = "or_default")]
    pub connections_ok: u64,
    /// Connections that failed in the phase.
    #[serde(deserialize_with = "or_default")]
    pub connections_failed: u64,
    /// Connections out since an earlier phase failed them.
    #[serde(deserialize_with = "or_default")]
    pub connections_skipped: u64,
    /// Failed connections by kind (errno name, `size mismatch`, `thread`).
    #[serde(deserialize_with = "lenient_counts")]
    pub errors: BTreeMap<String, u64>,
    /// The page cache was dropped (sync + drop_caches) right before the phase.
    #[serde(deserialize_with = "or_default")]
    pub caches_dropped: bool,
    /// Which repeat of the write phase and the one after it, from 1.
    #[serde(deserialize_with = "or_default")]
    pub repeat: u64,
    /// The clients' own KB/s summed.
    #[serde(deserialize_with = "or_default")]
    pub kib_per_sec_sum_of_clients: f64,
    /// The clients that finished the phase, each its own figures.
    #[serde(deserialize_with = "lenient_entries")]
    pub clients: Vec<ClientPhaseFigures>,
    /// Clients that failed the phase (`--on-client-error continue`); their figures are lost.
    #[serde(deserialize_with = "or_default")]
    pub failed_clients: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    #[serde(deserialize_with = "or_default")]
    pub start_barrier: Vec<StartTimes>,
    /// The untimed setup before the first phase (sessions connected, folders made); only
    /// where some connection had one.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupFigures>,
    /// Of a run with stamped content only: what its connections checked, stored as null
    /// where none checked anything (a write phase).
    #[serde(deserialize_with = "stamped_tally", skip_serializing_if = "Option::is_none")]
    pub verify: Option<Option<Tally>>,
    /// The phase's operations over time, every connection's merged interval by interval; None in
    /// runs stored before it was recorded.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub series: Option<iomatrix_stats::Series>,
}

/// One operation type's latency as stored: [`LatencySummary`]'s fields, each read leniently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpTimes {
    /// How many operations were timed.
    #[serde(deserialize_with = "or_default")]
    pub count: u64,
    /// Their mean latency (ns).
    #[serde(deserialize_with = "or_default")]
    pub mean_ns: f64,
    /// The shortest (ns).
    #[serde(deserialize_with = "or_default")]
    pub min_ns: u64,
    /// The median (ns).
    #[serde(deserialize_with = "or_default")]
    pub p50_ns: u64,
    /// The 90th percentile (ns).
    #[serde(deserialize_with = "or_default")]
    pub p90_ns: u64,
    /// The 99th percentile (ns).
    #[serde(deserialize_with = "or_default")]
    pub p99_ns: u64,
    /// The 99.9th percentile (ns).
    #[serde(deserialize_with = "or_default")]
    pub p99_9_ns: u64,
    /// The 99.99th percentile (ns).
    #[serde(deserialize_with = "or_default")]
    pub p99_99_ns: u64,
    /// The longest (ns).
    #[serde(deserialize_with = "or_default")]
    pub max_ns: u64,
}

impl From<LatencySummary> for OpTimes {
    fn from(s: LatencySummary) -> OpTimes {
        OpTimes {
            count: s.count,
            mean_ns: s.mean_ns,
            min_ns: s.min_ns,
            p50_ns: s.p50_ns,
            p90_ns: s.p90_ns,
            p99_ns: s.p99_ns,
            p99_9_ns: s.p99_9_ns,
            p99_99_ns: s.p99_99_ns,
            max_ns: s.max_ns,
        }
    }
}

/// One client's own figures for a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientPhaseFigures {
    /// The client's rank (0-based).
    #[serde(deserialize_with = "or_default")]
    pub rank: usize,
    /// Files its connections finished.
    #[serde(deserialize_with = "or_default")]
    pub files: u64,
    /// Bytes they moved.
    #[serde(deserialize_with = "or_default")]
    pub bytes: u64,
    /// Operations per type: over the clients they add up to the merged histograms' counts.
    #[serde(deserialize_with = "lenient_counts")]
    pub ops: BTreeMap<Op, u64>,
    /// The common release to its last connection's last operation (ns).
    #[serde(deserialize_with = "or_default")]
    pub completion_ns: u64,
    /// Its bytes over its completion time, in KB/s.
    #[serde(deserialize_with = "or_default")]
    pub total_kib_per_sec: f64,
    /// Its connections that failed in the phase.
    #[serde(deserialize_with = "or_default")]
    pub connections_failed: usize,
}

/// The untimed setup of the connections that had one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetupFigures {
    /// Connections that had a setup.
    #[serde(deserialize_with = "or_default")]
    pub connections: u64,
    /// Their mean setup time (ns).
    #[serde(deserialize_with = "or_default")]
    pub mean_ns: u64,
    /// The longest setup (ns).
    #[serde(deserialize_with = "or_default")]
    pub max_ns: u64,
}

/// One connection's figures for a phase, an entry of its row's `client_figures`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionRecord {
    /// The connection's number over every client (renumbered client by client).
    #[serde(deserialize_with = "or_default")]
    pub rank: usize,
    /// Files it finished.
    #[serde(deserialize_with = "or_default")]
    pub files: u64,
    /// Bytes it moved.
    #[serde(deserialize_with = "or_default")]
    pub bytes: u64,
    /// From the common start to its last operation.
    #[serde(deserialize_with = "or_default")]
    pub ns: u64,
    /// How long after the common release it began (its thread waiting for a CPU), ns.
    #[serde(deserialize_with = "or_default")]
    pub start_delay_ns: u64,
    /// To one decimal.
    #[serde(deserialize_with = "or_default")]
    pub kib_per_sec: f64,
    /// Why it failed, if it did.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub error: Option<ConnectionError>,
    /// It failed in an earlier phase and did nothing in this one.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// Its untimed session setup; 0 where it had none (a local folder).
    #[serde(deserialize_with = "or_default", skip_serializing_if = "is_zero")]
    pub setup_ns: u64,
}

impl ConnectionRecord {
    /// A row's `client_figures` as its connections; an entry that is not one reads as zeros.
    pub fn read_all(client_figures: &Value) -> Vec<ConnectionRecord> {
        lenient_entries(client_figures).unwrap_or_default()
    }
}

impl FileserverCellFigures {
    /// A stored phase's figures; what the row lacks reads as 0 or absent.
    pub fn read(metrics: &Value) -> FileserverCellFigures {
        FileserverCellFigures::deserialize(metrics).unwrap_or_default()
    }

    /// The stored value of the row's `metrics`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

impl Figures for FileserverCellFigures {
    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        let v = match id {
            _ if id == TOTAL_KIB_PER_SEC.id => self.total_kib_per_sec,
            _ if id == AVG_CONNECTION_KIB_PER_SEC.id => self.avg_connection_kib_per_sec,
            _ if id == KIB_PER_SEC_SUM_OF_CLIENTS.id => self.kib_per_sec_sum_of_clients,
            _ if id == COMPLETION_NS.id => self.completion_ns as f64,
            _ if id == LOST_SAMPLES.id => self.lost_samples as f64,
            _ if id == CONNECTIONS_FAILED.id => self.connections_failed as f64,
            _ if id == READ_PERCENT.id => self.read_percent? as f64,
            _ => return None,
        };
        Some(v)
    }

    fn unit(&self) -> &'static str {
        TOTAL_KIB_PER_SEC.unit
    }

    /// The phase ("write", "read"), a mixed one with its share of reads ("mix read=70%").
    fn cell_name(&self) -> String {
        let phase = self.phase.as_deref().unwrap_or("?");
        match self.read_percent {
            Some(p) => format!("{phase} read={p}%"),
            None => phase.to_string(),
        }
    }
}

/// Present (null or a tally) only where the content was stamped.
fn stamped_tally<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Tally>>, D::Error> {
    Ok(Some(or_default(d)?))
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The operation types a phase timed; an entry that is null or names no [`Op`] is left out,
/// one that is not a summary reads as zeros (its row still shown, as before the types).
fn lenient_ops<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Op, OpTimes>, D::Error> {
    let stored: BTreeMap<String, Value> = or_default(d)?;
    Ok(stored
        .into_iter()
        .filter(|(_, times)| !times.is_null())
        .filter_map(|(op, times)| {
            Some((Op::deserialize(Value::String(op)).ok()?, OpTimes::deserialize(times).unwrap_or_default()))
        })
        .collect())
}

/// Counts by name; a count that is not a whole number reads as 0, a name that is not a key
/// of the map's type is left out.
fn lenient_counts<'de, D, K>(d: D) -> Result<BTreeMap<K, u64>, D::Error>
where
    D: Deserializer<'de>,
    K: DeserializeOwned + Ord,
{
    let stored: BTreeMap<String, Value> = or_default(d)?;
    Ok(stored
        .into_iter()
        .filter_map(|(name, n)| Some((K::deserialize(Value::String(name)).ok()?, n.as_u64().unwrap_or(0))))
        .collect())
}

/// A list whose entries each read leniently: one that does not read at all counts as the default.
fn lenient_entries<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let stored: Vec<Value> = or_default(d)?;
    Ok(stored.into_iter().map(|entry| T::deserialize(entry).unwrap_or_default()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_phase_of_any_shape_reads_what_it_has_and_zeros_for_the_rest() {
        let stored = json!({
            "phase": "mix",
            "read_percent": 70,
            "ops": { "open": { "count": 3, "mean_ns": 1500.5, "p99_ns": 9000 }, "write": null, "stat": {} },
            "lost": { "files": 2, "bytes": "lots", "ops": { "write": 4 } },
            "errors": { "ENOSPC": 2, "EIO": "x" },
            "caches_dropped": "yes",
            "clients": [ { "rank": 1 }, 7 ],
            "setup": { "mean_ns": 10, "max_ns": 20 },
        });
        let f = FileserverCellFigures::read(&stored);
        assert_eq!(f.phase.as_deref(), Some("mix"));
        assert_eq!(f.read_percent, Some(70));
        assert_eq!(f.ops.len(), 1, "{:?}", f.ops);
        assert_eq!(f.ops[&Op::Open], OpTimes { count: 3, mean_ns: 1500.5, p99_ns: 9000, ..OpTimes::default() });
        assert_eq!((f.lost.files, f.lost.bytes, f.lost.ops.write, f.lost.ops.read), (2, 0, 4, 0));
        assert_eq!(f.errors, BTreeMap::from([("EIO".to_string(), 0), ("ENOSPC".to_string(), 2)]));
        assert!(!f.caches_dropped);
        assert_eq!(f.clients.len(), 2);
        assert_eq!(f.clients[0].rank, 1);
        assert_eq!(f.setup, Some(SetupFigures { connections: 0, mean_ns: 10, max_ns: 20 }));
        assert_eq!(f.cell_name(), "mix read=70%");
        assert_eq!(f.verify, None);
        assert_eq!(FileserverCellFigures::read(&json!({ "verify": null })).verify, Some(None));
        assert_eq!(f.value(READ_PERCENT.id), Some(70.0));
        assert_eq!(FileserverCellFigures::read(&json!("not a cell")), FileserverCellFigures::default());
    }

    #[test]
    fn what_the_suite_writes_reads_back_the_same() {
        let figures = FileserverCellFigures {
            phase: Some("write".into()),
            ops: BTreeMap::from([(Op::Create, OpTimes { count: 5, max_ns: 7, ..OpTimes::default() })]),
            errors: BTreeMap::from([("EMFILE".to_string(), 1)]),
            total_kib_per_sec: 12.5,
            verify: Some(None),
            clients: vec![ClientPhaseFigures { rank: 0, ops: BTreeMap::from([(Op::Write, 9)]), ..Default::default() }],
            ..FileserverCellFigures::default()
        };
        let stored = figures.to_json();
        assert_eq!(stored["ops"]["create"]["count"], 5);
        assert!(stored.get("read_percent").is_none() && stored.get("setup").is_none());
        assert_eq!(stored.get("verify"), Some(&Value::Null), "a stamped phase nothing checked stores null");
        assert_eq!(FileserverCellFigures::read(&stored), figures);
        assert_eq!(figures.cell_name(), "write");
        let connection = ConnectionRecord {
            rank: 3,
            error: Some(ConnectionError { kind: "EIO".into(), op: Some(Op::Read), message: "read failed".into() }),
            ..ConnectionRecord::default()
        };
        let stored = json!([connection, "garbage"]);
        assert!(stored[0].get("skipped").is_none() && stored[0].get("setup_ns").is_none());
        assert_eq!(ConnectionRecord::read_all(&stored), vec![connection, ConnectionRecord::default()]);
    }
}
