//! The figures of a stored cell that code outside its suite reads, as one type: the harness's
//! own (failed clients, errors, verification, extents, the repeat number), the access mix that
//! names a cell ([`IoMix`]), and the rates compare and sweep fall back on. Shared code reads a
//! cell through [`CellRow::figures`] and the [`Figures`] trait, never by a key into its JSON;
//! the keys are written here once, as serde's field names and [`MetricId`]s.
//!
//! Stored runs of every age read: a field that is missing or of another type reads as absent,
//! as the string-keyed reads it replaces did.

use crate::CellRow;
use iomatrix_core::figures::{or_default, CachedAtStart, Direction, Figures, IoMix, Metric, MetricId};
use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// An access cell's requests per second.
pub const IOPS: Metric = Metric::new("iops", "IOPS", Direction::HigherIsBetter, 0);
/// A suite's own rate where a cell's figure is no byte rate (Bonnie's seeks/s, files/s).
pub const PER_SEC: Metric = Metric::new("per_sec", "per second", Direction::HigherIsBetter, 0);
/// The slowest single operation of the cell, in ns.
pub const MAX_LATENCY_NS: Metric = Metric::new("max_latency_ns", "ns", Direction::LowerIsBetter, 0);
pub const KIB_PER_SEC: Metric = Metric::new("kib_per_sec", "KB/s", Direction::HigherIsBetter, 0);
const SHARED_METRICS: &[Metric] = &[
    KIB_PER_SEC,
    iomatrix_core::figures::CPU_PERCENT,
    IOPS,
    PER_SEC,
    MAX_LATENCY_NS,
    iomatrix_core::figures::READ_PERCENT,
    iomatrix_core::figures::RANDOM_PERCENT,
    iomatrix_core::figures::QUEUE_DEPTH,
];

/// What a stored cell's `metrics` holds that code outside its suite reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct CellFigures {
    /// An access cell's share of reads, in % ([`IoMix`]); None for other cells.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<u64>,
    /// An access cell's share of random offsets, in %; None for other cells.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<u64>,
    /// An access cell's queue depth; None for other cells.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
    /// The load an access cell of a curve was offered ([`IoMix::load`]); None for other cells.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub load: Option<iomatrix_core::CurveLoad>,
    /// A suite's or an importer's own phase name and repeat number, kept as stored.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub phase: Option<Value>,
    /// The repeat's number, kept as stored (Bonnie's `-x`).
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Value>,
    /// The unit of `per_sec` ("seeks/s", "files/s", ...), for cells whose figure is no byte rate.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The suite's own rate, in `unit`; None where the cell stores none.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub per_sec: Option<f64>,
    /// Requests per second ([`IOPS`]); None where not stored.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub iops: Option<f64>,
    /// The slowest single operation in ns; None where not stored (0 in older Bonnie runs: not measured).
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub max_latency_ns: Option<u64>,
    /// The clients that failed the cell, each with its rank and message; empty when none did.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub failed_clients: Vec<FailedClient>,
    /// Errors by kind ("ENOSPC": 3), in the order of their kinds.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub errors: Map<String, Value>,
    /// Connections that failed in the phase (the file server's and a personality's).
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub connections_failed: Option<u64>,
    /// Connections left out since an earlier phase failed them.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub connections_skipped: Option<u64>,
    /// `--verify`'s tally of the cell.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub verify: Option<iomatrix_verify::Tally>,
    /// The cell's extent summary (`--extents`), as stored.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub extents: Option<ExtentFigures>,
    /// What the imported source did not give ("cpu", ...).
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub not_in_source: Vec<Value>,
    /// Seed 003's headline figures of a phase of connections (the file-server load, a
    /// personality): the common start to the last connection's end, and the mean of the
    /// connections' own KB/s. Absent in runs stored before a suite kept them: unknown, never 0.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub completion_ns: Option<u64>,
    /// The mean of the connections' own KB/s; None where not stored.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub avg_connection_kib_per_sec: Option<f64>,
    /// Each operation's timing summary by name (the file-server's and a personality's `ops`).
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub ops: BTreeMap<String, OpMean>,
    /// A backup walk's files read, MiB/min and elapsed time (its `BackupResult`).
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub files: Option<u64>,
    /// A backup walk's rate in MiB per minute.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub mib_per_min: Option<f64>,
    /// A backup walk's elapsed time, in ns.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub wall_ns: Option<u64>,
    /// What the page cache held of the cell's files when it began, after a drop where the suite
    /// drops one (a cold backup walk, access after `--prepare`): counted with mincore.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub cached_at_start: Option<CachedAtStart>,
    /// Why a disturbed cell did not run for its time ([`crate::DISTURBED_KEY`]).
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub disturbed: Option<Disturbance>,
    /// A point of a throughput-latency curve: the curve's figures stored with it; None for a
    /// cell of no curve.
    #[serde(deserialize_with = "or_default", skip_serializing)]
    pub curve: Option<crate::CurvePoint>,
}

/// What a disturbed cell stores of its disturbance.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Disturbance {
    #[serde(deserialize_with = "or_default")]
    pub cause: Option<String>,
}

/// Where a cell stores its figures over time ([`CellRow::series`]): the serde name read there.
pub(crate) const SERIES_KEY: &str = "series";

/// Where the file-server's and a personality's operations are stored in a cell's figures: the
/// serde name of [`CellFigures::ops`] and of `latency_summaries`' own field.
const OPS_KEY: &str = "ops";

/// One operation's latency summary (a [`iomatrix_stats::LatencySummary`] as a cell stores it, or
/// a whole cell of a suite timed whole), with what compare reads beside it: the cell's wall time
/// and whether the cell was partial or disturbed. Every figure absent where not stored.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OpSummary {
    /// How many times the operation was timed.
    #[serde(deserialize_with = "or_default")]
    pub count: Option<f64>,
    /// The mean time, in ns.
    #[serde(deserialize_with = "or_default")]
    pub mean_ns: Option<f64>,
    /// The median time, in ns.
    #[serde(deserialize_with = "or_default")]
    pub p50_ns: Option<f64>,
    /// The 90th percentile, in ns.
    #[serde(deserialize_with = "or_default")]
    pub p90_ns: Option<f64>,
    /// The 99th percentile, in ns.
    #[serde(deserialize_with = "or_default")]
    pub p99_ns: Option<f64>,
    /// The 99.9th percentile, in ns.
    #[serde(deserialize_with = "or_default")]
    pub p99_9_ns: Option<f64>,
    /// The 99.99th percentile, in ns.
    #[serde(deserialize_with = "or_default")]
    pub p99_99_ns: Option<f64>,
    /// The slowest time, in ns.
    #[serde(deserialize_with = "or_default")]
    pub max_ns: Option<f64>,
    /// Whether the summary stores percentiles: a histogram's summary does (its `p50_ns`, even
    /// null); a cell timed whole (Bonnie's tests) does not.
    #[serde(skip)]
    pub percentiles: bool,
    /// The wall time of the cell the operation ran in, for its rate.
    #[serde(skip)]
    pub cell_wall_ns: Option<f64>,
    /// Whether the cell was partial (some clients or connections failed it).
    #[serde(skip)]
    pub partial: bool,
    /// Whether the cell was disturbed (it did not run for its time).
    #[serde(skip)]
    pub disturbed: bool,
}

impl OpSummary {
    /// A stored object that is a latency summary (a `p50_ns`, a count above 0), typed.
    fn stored(v: &Value) -> Option<OpSummary> {
        #[derive(Deserialize)]
        struct Summary {
            #[allow(dead_code)]
            p50_ns: serde::de::IgnoredAny,
            #[serde(default, deserialize_with = "or_default")]
            count: u64,
        }
        // Only an object with a `p50_ns` is looked at: every other value of every cell failed
        // the read below, each failure an error message written (a twentieth of a compare).
        if !v.as_object().is_some_and(|o| o.contains_key("p50_ns")) {
            return None;
        }
        if !Summary::deserialize(v).is_ok_and(|s| s.count > 0) {
            return None;
        }
        let summary = OpSummary::deserialize(v).ok()?;
        Some(OpSummary { percentiles: true, ..summary })
    }
}

/// An operation's count and mean time, as its summary stores them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OpMean {
    /// How many times the operation was done (0 where not stored).
    #[serde(deserialize_with = "or_default")]
    pub count: u64,
    /// The mean time, in ns; None where not stored.
    #[serde(deserialize_with = "or_default")]
    pub mean_ns: Option<f64>,
}

impl OpMean {
    /// The mean time in ns where the operation was timed: done at least once, or (a published
    /// table's figure) given without a count.
    pub fn timed_mean_ns(&self) -> Option<f64> {
        self.mean_ns.filter(|m| m.is_finite() && *m >= 0.0 && (self.count > 0 || *m > 0.0))
    }
}

/// A client that failed in a cell: its rank and what it said.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FailedClient {
    /// The client's rank, kept as stored.
    pub rank: Value,
    /// What it said when it failed.
    #[serde(deserialize_with = "or_default")]
    pub message: Option<String>,
}

/// An extent summary: how many files it counted, and the summary as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtentFigures {
    /// Files counted (0 where the summary does not say).
    pub files: u64,
    /// Extents over those files; None where the summary does not say.
    pub total_extents: Option<u64>,
    /// Files of more than one extent; None where the summary does not say (a published table).
    pub fragmented_files: Option<f64>,
    /// The summary as stored, for the text that shows it.
    pub summary: Value,
}

impl<'de> Deserialize<'de> for ExtentFigures {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Counted {
            #[serde(deserialize_with = "or_default")]
            files: u64,
            #[serde(deserialize_with = "or_default")]
            total_extents: Option<u64>,
            #[serde(deserialize_with = "or_default")]
            fragmented_files: Option<f64>,
        }
        let summary = Value::deserialize(d)?;
        let counted = Counted::deserialize(&summary).unwrap_or_default();
        Ok(ExtentFigures {
            files: counted.files,
            total_extents: counted.total_extents,
            fragmented_files: counted.fragmented_files,
            summary,
        })
    }
}

impl CellFigures {
    /// A cell's figures from its stored `metrics`; a `metrics` that is not an object has none.
    pub fn of(metrics: &Value) -> CellFigures {
        CellFigures::deserialize(metrics).unwrap_or_default()
    }

    /// The access mix, where the cell stores all of it.
    pub fn mix(&self) -> Option<IoMix> {
        Some(IoMix {
            read_percent: self.read_percent?,
            random_percent: self.random_percent?,
            queue_depth: self.queue_depth?,
            load: self.load,
        })
    }

    /// Whether the source had no CPU figure (an import of a file without one).
    pub fn cpu_not_in_source(&self) -> bool {
        self.not_in_source.iter().any(|v| v == "cpu" || v == "cpu_percent")
    }

    /// Only what names the cell (its mix, phase, repeat and unit), with `per_sec` in place of
    /// the stored one where the cell has one: the figures of a cell viewed from a part of its
    /// clients.
    pub fn naming(&self, per_sec: f64) -> Value {
        let named = CellFigures {
            read_percent: self.read_percent,
            random_percent: self.random_percent,
            queue_depth: self.queue_depth,
            load: self.load,
            phase: self.phase.clone(),
            repeat: self.repeat.clone(),
            unit: self.unit.clone(),
            per_sec: self.per_sec.map(|_| per_sec),
            ..CellFigures::default()
        };
        serde_json::to_value(named).unwrap_or_default()
    }
}

impl CellRow {
    /// The cell's figures that shared code reads, typed.
    pub fn figures(&self) -> CellFigures {
        CellFigures::of(&self.metrics)
    }

    /// The cell's figures over time, per interval, merged over its clients; None where its suite
    /// records none, and in cells stored before it did. Read apart from [`CellRow::figures`],
    /// which compare and sweep call for every cell: a series of an hour's cell holds 3,600
    /// intervals that they never read.
    pub fn series(&self) -> Option<iomatrix_stats::Series> {
        #[derive(Deserialize)]
        struct Stored {
            // SERIES_KEY
            #[serde(default, deserialize_with = "or_default")]
            series: Option<iomatrix_stats::Series>,
        }
        Stored::deserialize(&self.metrics).ok()?.series
    }

    /// The cell's per-operation latency summaries by name: every object of its figures, or
    /// of an object in them, with a `p50_ns` and a non-zero count (access's `read` and `write`,
    /// the file-server's and a personality's operations under `ops`, named by the operation
    /// alone), typed ([`OpSummary`]), in the order of their stored keys.
    pub fn latency_summaries(&self) -> Vec<(String, OpSummary)> {
        // Read in place (compare reads every cell of every run): the operations (`ops`, where it
        // is an object) apart from the figures' other keys.
        let Some(stored) = self.metrics.as_object() else { return Vec::new() };
        let no_ops = Map::new();
        let ops = stored.get(OPS_KEY).map_or(&no_ops, |ops| ops.as_object().unwrap_or(&no_ops));
        // Sorted by where each summary is stored (key, then inner key), as the figures' keys run.
        let mut found: Vec<((&str, &str), String, OpSummary)> = Vec::new();
        for (k, v) in stored.iter().filter(|(k, _)| k.as_str() != OPS_KEY) {
            found.extend(OpSummary::stored(v).map(|s| ((k.as_str(), ""), k.clone(), s)));
            for (k2, v2) in v.as_object().into_iter().flatten() {
                found.extend(OpSummary::stored(v2).map(|s| ((k.as_str(), k2.as_str()), format!("{k}.{k2}"), s)));
            }
        }
        for (k2, v2) in ops {
            found.extend(OpSummary::stored(v2).map(|s| ((OPS_KEY, k2.as_str()), k2.clone(), s)));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found.into_iter().map(|(_, name, summary)| (name, summary)).collect()
    }

    /// What else the machine did while the cell ran ([`crate::MACHINE_KEY`]); None in cells
    /// stored before it was recorded, in imported ones, and where it is null or of another
    /// shape. Read apart from [`CellRow::figures`], which every compare reads for every cell:
    /// it is the largest part of a cell's figures (read with them, a sixth of the time of a
    /// compare of 1,400 runs against 1,400).
    pub fn machine_load(&self) -> Option<iomatrix_environment::MachineLoad> {
        let stored = self.metrics.get(crate::MACHINE_KEY)?;
        Option::deserialize(stored).ok().flatten()
    }

    /// Stores what else the machine did while the cell ran, under [`crate::MACHINE_KEY`].
    pub fn set_machine(&mut self, load: &iomatrix_environment::MachineLoad) {
        if let (Value::Object(metrics), Ok(load)) = (&mut self.metrics, serde_json::to_value(load)) {
            metrics.insert(crate::MACHINE_KEY.into(), load);
        }
    }

    /// Sets the cell's repeat number where its suite stores one.
    pub fn set_repeat(&mut self, sample: usize) {
        if let Some(repeat) = self.metrics.get_mut("repeat") {
            *repeat = sample.into();
        }
    }

    /// Takes the cell's figures away (a failed cell is stored with none): its rates are 0.
    pub fn strip_rates(&mut self) {
        self.kib_per_sec = 0.0;
        self.cpu_percent = None;
        if let Some(per_sec) = self.metrics.get_mut(PER_SEC.id.key()) {
            *per_sec = 0.0.into();
        }
    }
}

impl Figures for CellRow {
    fn metrics(&self) -> &'static [Metric] {
        SHARED_METRICS
    }

    fn value(&self, id: MetricId) -> Option<f64> {
        let f = self.figures();
        let whole = |v: Option<u64>| v.map(|v| v as f64);
        match id {
            _ if id == KIB_PER_SEC.id => Some(self.kib_per_sec),
            // A source without a CPU figure (an import that says so) has none, whatever is stored.
            _ if id == iomatrix_core::figures::CPU_PERCENT.id => {
                self.cpu_percent.filter(|p| p.is_finite() && !f.cpu_not_in_source())
            }
            _ if id == IOPS.id => f.iops,
            _ if id == PER_SEC.id => f.per_sec,
            _ if id == MAX_LATENCY_NS.id => whole(f.max_latency_ns),
            _ if id == iomatrix_core::figures::READ_PERCENT.id => whole(f.read_percent),
            _ if id == iomatrix_core::figures::RANDOM_PERCENT.id => whole(f.random_percent),
            _ if id == iomatrix_core::figures::QUEUE_DEPTH.id => whole(f.queue_depth),
            _ => None,
        }
    }

    /// KB/s where the cell moved bytes at a rate, else the unit of its own rate (Bonnie's
    /// seeks/s and files/s).
    fn unit(&self) -> &'static str {
        if self.kib_per_sec > 0.0 && self.kib_per_sec.is_finite() {
            return KIB_PER_SEC.unit;
        }
        match self.figures().unit.as_deref() {
            Some("seeks/s") => "seeks/s",
            Some("files/s") => "files/s",
            Some("ops/s") => "ops/s",
            _ => PER_SEC.unit,
        }
    }

    /// "access 8m 4k qd=4 read=70% random=100%": test, sizes, and an access cell's mix.
    fn cell_name(&self) -> String {
        let size = |v: Option<u64>| v.map(|b| format!(" {}", iomatrix_core::ByteSize(b))).unwrap_or_default();
        let mut name = format!("{}{}{}", self.test, size(self.file_size), size(self.record_size));
        if let Some(mix) = self.figures().mix() {
            name += " ";
            name += &mix.name();
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn figures_of_another_type_read_as_absent_and_the_rest_still_read() {
        let f = CellFigures::of(&json!({
            "queue_depth": "four", "read_percent": 70, "random_percent": 100, "iops": 1200.5,
            "failed_clients": [{"rank": 1, "message": 7}], "errors": {"ENOSPC": 3}, "extents": {"files": 2},
        }));
        assert_eq!(f.queue_depth, None);
        assert_eq!(f.mix(), None);
        assert_eq!(f.read_percent, Some(70));
        assert_eq!(f.iops, Some(1200.5));
        assert_eq!(f.failed_clients, vec![FailedClient { rank: json!(1), message: None }]);
        assert_eq!(f.errors["ENOSPC"], json!(3));
        assert_eq!(f.extents.map(|e| e.files), Some(2));
        assert_eq!(CellFigures::of(&Value::Null), CellFigures::default());
    }

    #[test]
    fn a_part_of_the_clients_keeps_only_what_names_the_cell() {
        let f = CellFigures::of(
            &json!({"queue_depth": 4, "read_percent": 70, "random_percent": 0, "iops": 9.0, "per_sec": 5.0, "unit": "files/s"}),
        );
        assert_eq!(
            f.naming(2.5),
            json!({"queue_depth": 4, "read_percent": 70, "random_percent": 0, "per_sec": 2.5, "unit": "files/s"})
        );
    }

    #[test]
    fn latency_summaries_are_the_objects_with_a_median_and_a_count() {
        let row = |metrics: Value| CellRow { metrics, ..CellRow::blank("t", "psync") };
        let cell = row(json!({
            "read": {"p50_ns": 10, "count": 3},
            "write": {"p50_ns": 10, "count": 0},
            "ops": {"create": {"p50_ns": null, "count": 2}, "stat": {"count": 5}},
            "phase": {"inner": {"p50_ns": 1, "count": 1}},
        }));
        let summaries = cell.latency_summaries();
        let names: Vec<&str> = summaries.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["create", "phase.inner", "read"]);
        let read = &summaries[2].1;
        assert_eq!((read.p50_ns, read.count, read.percentiles), (Some(10.0), Some(3.0), true));
        assert_eq!(summaries[0].1.p50_ns, None, "a null percentile reads as absent, the summary still one");
        assert!(row(json!(null)).latency_summaries().is_empty());
    }
}
