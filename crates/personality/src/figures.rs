//! The figures a personality run (or a dbench load-file replay) stores per
//! operation and per connection: [`OpFigures`], [`ConnectionOps`],
//! [`Fairness`], merged exactly over connections and clients.

use iomatrix_stats::Latency;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One kind of operation over a cell: how many were done, the bytes they
/// moved, what failed and how, and their latencies in an HDR histogram
/// (merged exactly). `name` is the operation's own word: a personality's
/// (`create`, `read`, `append`, `rename`, ...) or a replayed load file's
/// (`NTCreateX`, `ReadX`, `WriteX`, `Close`, `Unlink`, `Rename`,
/// `FIND_FIRST`, `QUERY_PATH_INFORMATION`, `LockX`, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpFigures {
    pub name: String,
    /// Operations that completed (with or without the expected status).
    pub count: u64,
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
    pub fn new(name: impl Into<String>) -> OpFigures {
        OpFigures {
            name: name.into(),
            count: 0,
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
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Fairness {
    pub connections: usize,
    pub min_share: f64,
    pub max_share: f64,
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
    pub user_ns: u64,
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
}

impl CellFigures {
    /// %CPU of the cell: its connections' CPU over the time it was taken in (at least the wall).
    pub fn cpu_percent(&self) -> f64 {
        iomatrix_stats::cpu_percent(self.user_ns + self.sys_ns, self.wall_ns.max(self.cpu_span_ns))
    }

    /// Operations completed, over every kind.
    pub fn ops_done(&self) -> u64 {
        self.ops.iter().map(|o| o.count).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.ops.iter().map(|o| o.bytes).sum()
    }

    pub fn failed(&self) -> usize {
        self.connections_failed.values().sum::<u64>() as usize
    }

    /// Over the connections' completed operations.
    pub fn fairness(&self) -> Option<Fairness> {
        Fairness::of(&self.connections.iter().map(|c| c.ops).collect::<Vec<_>>())
    }

    /// Every client's cell merged in order ([`merge`](Self::merge)); None for none.
    /// Phase `phase` where no client finished: no operation, no connection's figures.
    pub fn none(phase: &str) -> CellFigures {
        CellFigures { phase: phase.to_string(), ..CellFigures::default() }
    }

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
}
