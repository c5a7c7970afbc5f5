//! The figures a personality run (or a dbench load-file replay) stores per
//! operation and per connection: [`OpFigures`], [`ConnectionOps`],
//! [`Fairness`], merged exactly over connections and clients.

use iomatrix_core::figures::{or_default, Direction, Figures, Metric, MetricId};
use iomatrix_stats::Latency;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// One kind of operation over a cell: how many were done, the bytes they
/// moved, what failed and how, and their latencies in an HDR histogram
/// (merged exactly). `name` is the operation's own word: a personality's
/// (`create`, `read`, `append`, `rename`, ...) or a replayed load file's
/// (`NTCreateX`, `ReadX`, `WriteX`, `Close`, `Unlink`, `Rename`,
/// `FIND_FIRST`, `QUERY_PATH_INFORMATION`, `LockX`, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpFigures {
    /// The operation's own word (see above).
    pub name: String,
    /// Operations that completed (with or without the expected status): requests, one per
    /// `record` bytes of a read or write.
    pub count: u64,
    /// Executions of the operation as a step of a flow, as filebench counts a flowop: a whole-file
    /// read or write is one however many requests (`count`) it took. 0 in a dbench replay and in
    /// cells stored before it was counted.
    #[serde(default)]
    pub flowops: u64,
    /// Bytes read or written by them.
    pub bytes: u64,
    /// Operations that failed, by error kind (`ENOENT`, `ETIMEDOUT`, ...).
    #[serde(default)]
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Operations whose status was not the one expected (a load file's
    /// NT_STATUS column); 0 for personalities, which expect success.
    #[serde(default)]
    pub mismatches: u64,
    /// Open loop: operations started later than intended by more than a
    /// millisecond (the server fell behind the arrivals). 0 in closed loop.
    #[serde(default)]
    pub late: u64,
    /// `lock` refused because another holds the range (EAGAIN/EACCES of
    /// F_OFD_SETLK; SMB's STATUS_LOCK_NOT_GRANTED): not an error, not a
    /// completed operation; the iteration ends there (its file closed)
    /// and the connection goes on. 0 for every other operation.
    #[serde(default)]
    pub conflicts: u64,
    /// Every completed operation's latency (open loop: from its intended start).
    pub latency: Latency,
}

impl OpFigures {
    /// No operation yet of the kind `name`.
    pub fn new(name: impl Into<String>) -> OpFigures {
        OpFigures {
            name: name.into(),
            count: 0,
            flowops: 0,
            bytes: 0,
            errors_by_kind: BTreeMap::new(),
            mismatches: 0,
            late: 0,
            conflicts: 0,
            latency: Latency::new(),
        }
    }

    /// Failed operations of every kind.
    pub fn errors(&self) -> u64 {
        self.errors_by_kind.values().sum()
    }

    /// Adds `other` (the same operation) exactly.
    pub fn merge(&mut self, other: &OpFigures) {
        debug_assert_eq!(self.name, other.name);
        self.count += other.count;
        self.flowops += other.flowops;
        self.bytes += other.bytes;
        for (k, n) in &other.errors_by_kind {
            *self.errors_by_kind.entry(k.clone()).or_default() += n;
        }
        self.mismatches += other.mismatches;
        self.late += other.late;
        self.conflicts += other.conflicts;
        self.latency.merge(&other.latency);
    }
}

/// Merges `from` into `into` by operation name, keeping `into`'s order and
/// appending operations it lacked.
pub fn merge_ops(into: &mut Vec<OpFigures>, from: &[OpFigures]) {
    for op in from {
        match into.iter_mut().find(|o| o.name == op.name) {
            Some(mine) => mine.merge(op),
            None => into.push(op.clone()),
        }
    }
}

/// One connection's share of a cell: for fairness and the per-connection table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionOps {
    /// Numbered over the whole run (client by client).
    pub rank: usize,
    /// Operations completed.
    pub ops: u64,
    /// Bytes read or written by them.
    pub bytes: u64,
    /// Operations that failed.
    pub errors: u64,
    /// From the common start to its last operation.
    pub ns: u64,
    /// The error that stopped it, if one did: it sat out the rest of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// How evenly the connections were served: the slowest and fastest
/// connection's share of all operations (1/N each when perfectly fair) and
/// Jain's index (sum x)^2 / (N sum x^2): 1 when fair, 1/N when one
/// connection did everything.
/// Stored in a cell's row; read back leniently (a field of another type reads as 0).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Fairness {
    /// Connections counted (those with operations in the list).
    #[serde(deserialize_with = "or_default")]
    pub connections: usize,
    /// The least served connection's share of all operations (0..1).
    #[serde(deserialize_with = "or_default")]
    pub min_share: f64,
    /// The most served connection's share of all operations (0..1).
    #[serde(deserialize_with = "or_default")]
    pub max_share: f64,
    /// Jain's index: 1 when fair, 1/N when one connection did everything.
    #[serde(deserialize_with = "or_default")]
    pub jain: f64,
}

impl Fairness {
    /// Over the connections' operation counts; None without connections or operations.
    pub fn of(ops: &[u64]) -> Option<Fairness> {
        let total: u64 = ops.iter().sum();
        if ops.is_empty() || total == 0 {
            return None;
        }
        let t = total as f64;
        let squares: f64 = ops.iter().map(|&x| (x as f64) * (x as f64)).sum();
        Some(Fairness {
            connections: ops.len(),
            min_share: *ops.iter().min().unwrap_or(&0) as f64 / t,
            max_share: *ops.iter().max().unwrap_or(&0) as f64 / t,
            jain: t * t / (ops.len() as f64 * squares),
        })
    }
}

/// How many [`CellFigures::examples`] a cell keeps.
pub const EXAMPLES: usize = 20;

/// One cell (a phase of a personality, or a whole load-file replay) merged
/// over every connection of every client: what `Suite::row` stores.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CellFigures {
    /// The phase's name (`run`, `write`, `read`, ...; a replay's `replay`).
    pub phase: String,
    /// Per operation, in the order first seen.
    pub ops: Vec<OpFigures>,
    /// Per connection, by rank over the run.
    pub connections: Vec<ConnectionOps>,
    /// The common start to the last connection's last operation.
    pub wall_ns: u64,
    /// CPU time in user mode of every connection (ns).
    pub user_ns: u64,
    /// CPU time in the kernel of every connection (ns).
    pub sys_ns: u64,
    /// The common start to the last connection's last CPU reading, which follows its last
    /// operation (closing its files): the time the CPU figures were taken over, so %CPU is
    /// CPU over this (never over less, which would let it pass the cores).
    #[serde(default)]
    pub cpu_span_ns: u64,
    /// Operations planned for connections that failed and not done (a phase
    /// of a fixed number of iterations); a timed phase counts none here.
    pub lost_ops: u64,
    /// Open loop: arrivals due before the phase ended that were never issued
    /// (the connections were that far behind); counted, never dropped silently.
    pub backlog: u64,
    /// Iterations that found no file to work on (a delete with every file
    /// gone, a create with none left to make): counted, no operation issued.
    #[serde(default)]
    pub idle_iterations: u64,
    /// Connections that stopped on an error, by error kind.
    pub connections_failed: BTreeMap<String, u64>,
    /// `--verify`: blocks checked and mismatches found, over every connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<iomatrix_verify::Tally>,
    /// What did not go as the load said, the first few (a dbench replay's
    /// status mismatches: line, operation, path, expected and got).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Its operations over time, every connection's merged interval by interval (histograms
    /// kept, so that clients merge exactly); stored as the row's `series`.
    #[serde(default)]
    pub series: iomatrix_stats::ClientSeries,
    /// A point of a curve (`--curve`) past its maximum: the operations a second offered, every
    /// connection of every client together (each connection's Poisson rate, summed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_per_sec: Option<f64>,
    /// A point of a curve: the curve's figures up to and with this point (set at the leader as
    /// the point is merged; the last stored point of a curve holds the curve's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<iomatrix_harness::curve::CurveFigures>,
    /// A phase with a latency target (`--latency-target`): what its search found (set at the
    /// leader on the cell measured at that rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::target::TargetOutcome>,
}

impl CellFigures {
    /// Every operation's latency in one histogram (open loop: from each one's intended start).
    pub fn latency(&self) -> iomatrix_stats::Latency {
        let mut all = iomatrix_stats::Latency::new();
        self.ops.iter().for_each(|o| all.merge(&o.latency));
        all
    }

    /// Operations a second over the cell's wall time, every kind and connection (0 for no time).
    pub fn ops_per_sec(&self) -> f64 {
        match self.wall_ns {
            0 => 0.0,
            ns => self.ops_done() as f64 * 1e9 / ns as f64,
        }
    }

    /// %CPU of the cell: its connections' CPU over the time it was taken in (at least the wall).
    pub fn cpu_percent(&self) -> f64 {
        iomatrix_stats::cpu_percent(self.user_ns + self.sys_ns, self.wall_ns.max(self.cpu_span_ns))
    }

    /// Operations completed, over every kind.
    pub fn ops_done(&self) -> u64 {
        self.ops.iter().map(|o| o.count).sum()
    }

    /// Flow steps executed, over every kind, as filebench counts its flowops (its IO Summary's ops).
    pub fn flowops(&self) -> u64 {
        self.ops.iter().map(|o| o.flowops).sum()
    }

    /// Bytes read and written, over every kind.
    pub fn bytes(&self) -> u64 {
        self.ops.iter().map(|o| o.bytes).sum()
    }

    /// Connections that stopped on an error, of every kind.
    pub fn failed(&self) -> usize {
        self.connections_failed.values().sum::<u64>() as usize
    }

    /// Over the connections' completed operations.
    pub fn fairness(&self) -> Option<Fairness> {
        Fairness::of(&self.connections.iter().map(|c| c.ops).collect::<Vec<_>>())
    }

    /// Phase `phase` where no client finished: no operation, no connection's figures.
    pub fn none(phase: &str) -> CellFigures {
        CellFigures { phase: phase.to_string(), ..CellFigures::default() }
    }

    /// Every client's cell merged in order ([`merge`](Self::merge)); None for none.
    pub fn merged<'a>(cells: impl IntoIterator<Item = &'a CellFigures>) -> Option<CellFigures> {
        let mut cells = cells.into_iter();
        let mut all = cells.next()?.clone();
        for c in cells {
            all.merge(c);
        }
        Some(all)
    }

    /// Adds another client's cell: histograms exactly, counts added, its
    /// connections renumbered after these, the completion time the longer.
    pub fn merge(&mut self, other: &CellFigures) {
        merge_ops(&mut self.ops, &other.ops);
        let offset = self.connections.len();
        self.connections.extend(other.connections.iter().cloned().map(|mut c| {
            c.rank += offset;
            c
        }));
        self.wall_ns = self.wall_ns.max(other.wall_ns);
        self.cpu_span_ns = self.cpu_span_ns.max(other.cpu_span_ns);
        self.user_ns += other.user_ns;
        self.sys_ns += other.sys_ns;
        self.lost_ops += other.lost_ops;
        self.backlog += other.backlog;
        self.idle_iterations += other.idle_iterations;
        if let Some(theirs) = other.offered_per_sec {
            *self.offered_per_sec.get_or_insert(0.0) += theirs;
        }
        match (&mut self.verify, &other.verify) {
            (Some(mine), Some(theirs)) => mine.add(theirs),
            (None, Some(theirs)) => self.verify = Some(theirs.clone()),
            _ => {}
        }
        for (k, n) in &other.connections_failed {
            *self.connections_failed.entry(k.clone()).or_default() += n;
        }
        let room = EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.iter().take(room).cloned());
        self.series = iomatrix_stats::ClientSeries::merge(&[&self.series, &other.series]);
    }
}

/// Operations per second over the cell's wall time, every kind and connection.
pub const OPS_PER_SEC: Metric = Metric::new("per_sec", "ops/s", Direction::HigherIsBetter, 1);
/// Bytes over the cell's wall time.
pub const TOTAL_KIB_PER_SEC: Metric = Metric::new("total_kib_per_sec", "KiB/s", Direction::HigherIsBetter, 1);
/// Jain's index over the connections' operations: 1 when even.
pub const FAIRNESS_JAIN: Metric = Metric::new("fairness.jain", "index", Direction::HigherIsBetter, 3);
/// Operations planned for connections that failed and not done.
pub const LOST_OPS: Metric = Metric::new("lost_ops", "operations", Direction::LowerIsBetter, 0);
/// Open loop: arrivals due before the phase ended that were never issued.
pub const BACKLOG: Metric = Metric::new("backlog", "operations", Direction::LowerIsBetter, 0);
/// Connections that stopped on an error.
pub const CONNECTIONS_FAILED: Metric = Metric::new("connections_failed", "connections", Direction::LowerIsBetter, 0);
/// A replay's throughput as dbench itself counts it.
pub const DBENCH_MB_PER_S: Metric = Metric::new("dbench.mb_per_s", "MB/s", Direction::HigherIsBetter, 2);
const METRICS: &[Metric] =
    &[OPS_PER_SEC, TOTAL_KIB_PER_SEC, FAIRNESS_JAIN, LOST_OPS, BACKLOG, CONNECTIONS_FAILED, DBENCH_MB_PER_S];

/// A count as stored, 0 where the cell holds something else there.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
pub struct Count(#[serde(deserialize_with = "or_default")] pub u64);

/// One operation of a cell as its row stores it: the latency summary's figures beside the counts.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredOpFigures {
    /// Requests (one per `record` bytes of a read or write).
    #[serde(deserialize_with = "or_default")]
    pub count: u64,
    /// Flow steps executed, as filebench counts its flowops; None in cells stored before they
    /// were counted and in a dbench replay.
    #[serde(deserialize_with = "or_default")]
    pub flowops: Option<u64>,
    /// The requests' latency summed over each flow step, over the steps: filebench's ms/op.
    #[serde(deserialize_with = "or_default")]
    pub flowop_mean_ns: Option<f64>,
    /// Bytes read or written.
    #[serde(deserialize_with = "or_default")]
    pub bytes: u64,
    /// Over the cell's wall time.
    #[serde(deserialize_with = "or_default")]
    pub per_sec: f64,
    /// Failed operations by error kind.
    #[serde(deserialize_with = "or_default")]
    pub errors: BTreeMap<String, Count>,
    /// Operations whose status was not the expected one (a dbench replay).
    #[serde(deserialize_with = "or_default")]
    pub mismatches: u64,
    /// Open loop: operations started more than a millisecond late.
    #[serde(deserialize_with = "or_default")]
    pub late: u64,
    /// `lock` refused because another held the range.
    #[serde(deserialize_with = "or_default")]
    pub conflicts: u64,
    /// The requests' mean latency (ns).
    #[serde(deserialize_with = "or_default")]
    pub mean_ns: f64,
    /// Their median latency (ns).
    #[serde(deserialize_with = "or_default")]
    pub p50_ns: f64,
    /// Their 99th-percentile latency (ns).
    #[serde(deserialize_with = "or_default")]
    pub p99_ns: f64,
    /// Their 99.9th-percentile latency (ns).
    #[serde(deserialize_with = "or_default")]
    pub p99_9_ns: f64,
    /// Their longest latency (ns).
    #[serde(deserialize_with = "or_default")]
    pub max_ns: f64,
}

impl StoredOpFigures {
    /// Failed operations of every kind.
    pub fn errors(&self) -> u64 {
        self.errors.values().map(|c| c.0).sum()
    }
}

/// What a dbench load-file replay adds to its cell.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DbenchFigures {
    /// The replay's throughput as dbench counts it: MB (10^6 bytes) per second.
    #[serde(deserialize_with = "or_default")]
    pub mb_per_s: f64,
    /// Operations whose status was not the load file's.
    #[serde(deserialize_with = "or_default")]
    pub mismatches: u64,
    /// The first mismatches: line, operation, path, expected and got.
    #[serde(deserialize_with = "texts")]
    pub examples: Vec<String>,
}

/// One connection as the row's `client_figures` stores it: what stopped it, if anything did.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredConnection {
    /// The error that stopped it, if one did.
    #[serde(deserialize_with = "or_default")]
    pub error: Option<StoredError>,
}

/// A connection's error as stored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredError {
    /// The error's message; None where the stored value is not text.
    #[serde(deserialize_with = "or_default")]
    pub message: Option<String>,
}

impl StoredConnection {
    /// A row's connections; a stored value that is not a list of them reads as none, an entry
    /// that is not one as a connection without an error.
    pub fn read_all(client_figures: &serde_json::Value) -> Vec<StoredConnection> {
        let entries: Vec<serde_json::Value> = Vec::deserialize(client_figures).unwrap_or_default();
        entries.iter().map(|e| StoredConnection::deserialize(e).unwrap_or_default()).collect()
    }
}

/// The texts of a stored list; entries of another type are skipped, a value that is not a list is none.
fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let entries: Vec<serde_json::Value> = or_default(d)?;
    Ok(entries.into_iter().filter_map(|e| e.as_str().map(str::to_owned)).collect())
}

/// One personality (or dbench replay) cell's figures as its row's `metrics` stores them
/// (cli/suite.rs `row`). Every field reads leniently ([`or_default`]) so
/// runs of any age read; `Option`s are None where the stored value is absent or of another type.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredCellFigures {
    /// The phase's name (`run`, `write`, ...; a replay's `replay`).
    #[serde(deserialize_with = "or_default")]
    pub phase: Option<String>,
    /// The personality's name (or the load file's, for a replay).
    #[serde(deserialize_with = "or_default")]
    pub personality: Option<String>,
    /// `closed`, `open` or `replay`.
    #[serde(rename = "loop", deserialize_with = "or_default")]
    pub looped: Option<String>,
    /// Open loop: the operations per second each connection was to start.
    #[serde(deserialize_with = "or_default")]
    pub target_rate_per_connection: Option<f64>,
    /// By operation name.
    #[serde(deserialize_with = "or_default")]
    pub ops: Option<BTreeMap<String, StoredOpFigures>>,
    /// Operations per second over the cell's wall time.
    #[serde(deserialize_with = "or_default")]
    pub per_sec: f64,
    /// Flow steps executed over every operation and connection, as filebench's IO Summary counts
    /// its ops; None in cells stored before they were counted and in a dbench replay.
    #[serde(deserialize_with = "or_default")]
    pub flowops: Option<u64>,
    /// `flowops` over the cell's wall time: filebench's ops/s.
    #[serde(deserialize_with = "or_default")]
    pub flowops_per_sec: Option<f64>,
    /// Bytes over the cell's wall time, in KiB/s.
    #[serde(deserialize_with = "or_default")]
    pub total_kib_per_sec: f64,
    /// How evenly the connections were served.
    #[serde(deserialize_with = "or_default")]
    pub fairness: Option<Fairness>,
    /// Operations planned for connections that failed and not done.
    #[serde(deserialize_with = "or_default")]
    pub lost_ops: u64,
    /// Open loop: arrivals due that were never issued.
    #[serde(deserialize_with = "or_default")]
    pub backlog: u64,
    /// Iterations that found no file to work on.
    #[serde(deserialize_with = "or_default")]
    pub idle_iterations: u64,
    /// `lock` operations refused because another held the range.
    #[serde(deserialize_with = "or_default")]
    pub lock_conflicts: u64,
    /// Connections that stopped on an error.
    #[serde(deserialize_with = "or_default")]
    pub connections_failed: u64,
    /// Connections that stopped on an error, by error kind.
    #[serde(deserialize_with = "or_default")]
    pub errors: Option<BTreeMap<String, Count>>,
    /// A dbench replay's own figures; None for a personality.
    #[serde(deserialize_with = "or_default")]
    pub dbench: Option<DbenchFigures>,
    /// A point of a curve (`--curve`): its load (`max`, `50%`, `500/s`).
    #[serde(deserialize_with = "or_default")]
    pub load: Option<iomatrix_core::CurveLoad>,
    /// A point past a curve's maximum: the operations a second offered, all connections.
    #[serde(deserialize_with = "or_default")]
    pub offered_per_sec: Option<f64>,
    /// A point of a curve: the curve's figures up to and with it.
    #[serde(deserialize_with = "or_default")]
    pub curve: Option<iomatrix_harness::curve::CurveFigures>,
    /// A phase with a latency target: what its search found, every window judged.
    #[serde(deserialize_with = "or_default")]
    pub latency_target: Option<crate::target::TargetOutcome>,
}

impl StoredCellFigures {
    /// A row's `metrics`; a value that is not an object reads as no figures.
    pub fn read(metrics: &serde_json::Value) -> StoredCellFigures {
        StoredCellFigures::deserialize(metrics).unwrap_or_default()
    }
}

impl Figures for StoredCellFigures {
    fn metrics(&self) -> &'static [Metric] {
        METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        let v = match id {
            _ if id == OPS_PER_SEC.id => self.per_sec,
            _ if id == TOTAL_KIB_PER_SEC.id => self.total_kib_per_sec,
            _ if id == FAIRNESS_JAIN.id => self.fairness?.jain,
            _ if id == LOST_OPS.id => self.lost_ops as f64,
            _ if id == BACKLOG.id => self.backlog as f64,
            _ if id == CONNECTIONS_FAILED.id => self.connections_failed as f64,
            _ if id == DBENCH_MB_PER_S.id => self.dbench.as_ref()?.mb_per_s,
            _ => return None,
        };
        Some(v)
    }

    fn unit(&self) -> &'static str {
        OPS_PER_SEC.unit
    }

    /// "run of fileserver": the phase, and the personality it belongs to.
    fn cell_name(&self) -> String {
        format!("{} of {}", self.phase.as_deref().unwrap_or("?"), self.personality.as_deref().unwrap_or("?"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_is_one_when_fair_and_one_over_n_when_not() {
        let f = Fairness::of(&[10, 10, 10, 10]).unwrap();
        assert!((f.jain - 1.0).abs() < 1e-12 && (f.min_share - 0.25).abs() < 1e-12);
        let f = Fairness::of(&[40, 0, 0, 0]).unwrap();
        assert!((f.jain - 0.25).abs() < 1e-12 && f.min_share == 0.0 && f.max_share == 1.0);
        assert!(Fairness::of(&[]).is_none() && Fairness::of(&[0, 0]).is_none());
    }

    #[test]
    fn figures_merge_exactly_by_name() {
        let mut a = OpFigures::new("read");
        a.count = 2;
        a.bytes = 8192;
        a.latency.record(1000);
        a.latency.record(2000);
        a.errors_by_kind.insert("EIO".into(), 1);
        let mut b = OpFigures::new("read");
        b.count = 1;
        b.latency.record(3000);
        b.errors_by_kind.insert("EIO".into(), 2);
        let mut all = vec![a];
        merge_ops(&mut all, &[b, OpFigures::new("close")]);
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].count, all[0].bytes, all[0].errors(), all[0].latency.count()), (3, 8192, 3, 3));
        let back: OpFigures = serde_json::from_value(serde_json::to_value(&all[0]).unwrap()).unwrap();
        assert_eq!(back.latency.count(), 3);
    }

    #[test]
    fn a_stored_cell_reads_through_its_types_and_odd_fields_read_as_absent() {
        let stored = serde_json::json!({
            "phase": "run", "personality": "fileserver", "loop": "open", "target_rate_per_connection": 50,
            "ops": {"read": {"count": 4, "bytes": 8192, "per_sec": 2.5, "errors": {"EIO": 1, "ENOENT": "x"},
                             "late": 1, "mean_ns": 1500.5, "p99_ns": 3000, "max_ns": 4000}},
            "per_sec": 2.5, "fairness": {"connections": 2, "jain": 0.9},
            "lost_ops": "many", "errors": {"EIO": 2}, "connections_failed": 2,
            "dbench": {"mb_per_s": 1.25, "examples": ["line 3", 7, "line 9"]},
        });
        let m = StoredCellFigures::read(&stored);
        assert_eq!(
            (m.phase.as_deref(), m.looped.as_deref(), m.target_rate_per_connection),
            (Some("run"), Some("open"), Some(50.0))
        );
        let read = &m.ops.as_ref().unwrap()["read"];
        assert_eq!(
            (read.count, read.bytes, read.errors(), read.late, read.p99_ns, read.p50_ns),
            (4, 8192, 1, 1, 3000.0, 0.0)
        );
        let f = m.fairness.unwrap();
        assert_eq!((f.connections, f.jain, f.min_share), (2, 0.9, 0.0));
        assert_eq!((m.lost_ops, m.connections_failed, m.errors.as_ref().unwrap()["EIO"].0), (0, 2, 2));
        let d = m.dbench.as_ref().unwrap();
        assert_eq!(
            (d.mb_per_s, d.mismatches, d.examples.clone()),
            (1.25, 0, vec!["line 3".to_string(), "line 9".to_string()])
        );
        assert_eq!(m.value(FAIRNESS_JAIN.id), Some(0.9));
        assert_eq!(m.value(DBENCH_MB_PER_S.id), Some(1.25));
        assert_eq!(m.cell_name(), "run of fileserver");

        // Cells stored before flow steps were counted read without them.
        assert_eq!((m.flowops, m.flowops_per_sec, read.flowops, read.flowop_mean_ns), (None, None, None, None));
        let counted = StoredCellFigures::read(&serde_json::json!({
            "flowops": 180, "flowops_per_sec": 90.5,
            "ops": {"read": {"count": 342, "flowops": 60, "flowop_mean_ns": 7300.0}},
        }));
        let read = &counted.ops.as_ref().unwrap()["read"];
        assert_eq!((counted.flowops, counted.flowops_per_sec), (Some(180), Some(90.5)));
        assert_eq!((read.count, read.flowops, read.flowop_mean_ns), (342, Some(60), Some(7300.0)));

        let odd = StoredCellFigures::read(&serde_json::json!({"ops": 3, "fairness": null, "dbench": "no", "phase": 1}));
        assert!(odd.ops.is_none() && odd.fairness.is_none() && odd.dbench.is_none() && odd.phase.is_none());
        assert_eq!(odd.value(FAIRNESS_JAIN.id), None);
        assert_eq!(StoredCellFigures::read(&serde_json::json!(null)), StoredCellFigures::default());
    }

    #[test]
    fn stored_connections_read_their_errors_and_skip_what_is_not_one() {
        let stored = serde_json::json!([{"rank": 0, "error": {"message": "EIO on a/b"}}, 5, {"rank": 2, "error": "text"}, {"rank": 3}]);
        let messages: Vec<Option<String>> =
            StoredConnection::read_all(&stored).into_iter().map(|c| c.error.and_then(|e| e.message)).collect();
        assert_eq!(messages, vec![Some("EIO on a/b".to_string()), None, None, None]);
        assert!(StoredConnection::read_all(&serde_json::json!({"not": "a list"})).is_empty());
    }
}
