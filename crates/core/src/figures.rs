//! A cell's figures as types: each metric declared once, with the key it is stored under, its
//! unit, the direction that is better and the decimals it is shown with; the [`Figures`] trait
//! through which code outside a suite reads a cell's figures; and [`IoMix`], the request mix that
//! names an access cell, which the access suite and the fio and Iometer importers all store.

use serde::{Deserialize, Serialize};

/// A metric's identity: the key its value is stored under in a cell's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MetricId(pub &'static str);

impl MetricId {
    /// The key the value is stored under in a cell's figures.
    pub fn key(self) -> &'static str {
        self.0
    }
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// More is better: rates, throughput.
    HigherIsBetter,
    /// Less is better: latencies, CPU for the same work.
    LowerIsBetter,
}

/// One metric as a suite declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// The key its value is stored under.
    pub id: MetricId,
    /// The unit tables show beside it ("KB/s", "ns", "%CPU").
    pub unit: &'static str,
    /// Which way it improves, for compare's verdicts.
    pub direction: Direction,
    /// Decimals it is shown with.
    pub precision: usize,
}

impl Metric {
    /// A metric stored under `key`, shown in `unit` with `precision` decimals.
    pub const fn new(key: &'static str, unit: &'static str, direction: Direction, precision: usize) -> Metric {
        Metric { id: MetricId(key), unit, direction, precision }
    }
}

/// A cell's figures, read by their ids: what compare, sweep, report and show know of a cell
/// beyond its columns.
pub trait Figures {
    /// Every metric this kind of cell stores, each once.
    fn metrics(&self) -> &'static [Metric];
    /// The value of one metric; None where the cell has none (or the id is not one of
    /// [`Figures::metrics`]).
    fn value(&self, id: MetricId) -> Option<f64>;
    /// The unit of the cell's headline figure.
    fn unit(&self) -> &'static str;
    /// The cell's one name, as its tables show it.
    fn cell_name(&self) -> String;
}

/// The request mix of an access cell: reads in % of requests, random requests in %, requests
/// kept in flight. fio's jobs and Iometer's access specifications import into the same mix.
/// A part a stored cell lacks (an Iometer row without a queue depth) reads as 0, as tables show it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(default)]
pub struct IoMix {
    /// Reads, in % of requests (the rest are writes).
    #[serde(deserialize_with = "count_or_zero")]
    pub read_percent: u64,
    /// Requests at random offsets, in % (the rest are sequential).
    #[serde(deserialize_with = "count_or_zero")]
    pub random_percent: u64,
    /// Requests kept in flight by each worker.
    #[serde(deserialize_with = "count_or_zero")]
    pub queue_depth: u64,
    /// The load a point of a curve was offered (`--curve`); None for a cell of no curve (and in
    /// every run stored before curves), which keeps its name and key as before.
    #[serde(deserialize_with = "or_default", skip_serializing_if = "Option::is_none")]
    pub load: Option<CurveLoad>,
}

/// The load one point of a throughput-latency curve was offered (issue 52): the curve's
/// closed-loop maximum, measured first, a percentage of that maximum, or an absolute rate (all
/// clients' requests a second). Points at the same load of two curves are the same cell to
/// compare, as vdbench's curves are read point by point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveLoad {
    /// The maximum: as many requests as the queue depth keeps in flight (closed loop).
    Max,
    /// Open loop at this percentage of the curve's measured maximum.
    Percent(u32),
    /// Open loop at this many requests a second, all clients together.
    Rate(u64),
}

impl CurveLoad {
    /// Starts the load part of [`IoMix::name`].
    pub const KEY: &'static str = "load=";
}

impl std::fmt::Display for CurveLoad {
    /// `max`, `50%`, `500/s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CurveLoad::Max => f.write_str("max"),
            CurveLoad::Percent(p) => write!(f, "{p}%"),
            CurveLoad::Rate(r) => write!(f, "{r}/s"),
        }
    }
}

/// A whole number, or 0 for anything else a stored cell holds there (null, text).
fn count_or_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    or_default(d)
}

/// A stored figure of its declared type, or the type's default (absent, 0) where the cell
/// holds something else there: a stored run of any age reads, as its string-keyed reads did
/// before the figures were typed (`as_f64().unwrap_or(0.0)`). For `deserialize_with`.
pub fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored<T> {
        Declared(T),
        Other(serde::de::IgnoredAny),
    }
    Ok(match Stored::<T>::deserialize(d)? {
        Stored::Declared(v) => v,
        Stored::Other(_) => T::default(),
    })
}

/// How much of a cell's files the page cache held when the cell began: mincore over every
/// client's file just before the start barrier, summed. Absent where nobody could look (a
/// server's files through iomatrix's own clients, runs stored before it was recorded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CachedAtStart {
    /// Bytes of the files that were in the page cache.
    #[serde(deserialize_with = "or_default")]
    pub cached_bytes: u64,
    /// The files' sizes, summed (bytes): what could have been cached.
    #[serde(deserialize_with = "or_default")]
    pub file_bytes: u64,
}

impl CachedAtStart {
    /// The cached share in %, 0 to 100 (100 for no bytes: nothing was missing).
    pub fn percent(&self) -> f64 {
        if self.file_bytes == 0 {
            return 100.0;
        }
        (self.cached_bytes as f64 / self.file_bytes as f64 * 100.0).min(100.0)
    }

    /// Several clients' files as one: the sum over those that looked; None where none could.
    pub fn sum(looked: impl IntoIterator<Item = CachedAtStart>) -> Option<CachedAtStart> {
        looked.into_iter().fold(None, |total, c| {
            let t = total.unwrap_or_default();
            Some(CachedAtStart {
                cached_bytes: t.cached_bytes + c.cached_bytes,
                file_bytes: t.file_bytes + c.file_bytes,
            })
        })
    }

    /// The share of a dropped cache that may still stay and the figures still measure the
    /// storage: below 1%, a few pages (a file's last one, a folder's); from it, a part of the
    /// reads is served by the page cache, and a verdict says so rather than "the storage".
    pub const STAYED_PERCENT: f64 = 1.0;

    /// Whether a meaningful part stayed cached after a drop ([`CachedAtStart::STAYED_PERCENT`]).
    pub fn stayed(&self) -> bool {
        self.file_bytes > 0 && self.percent() >= Self::STAYED_PERCENT
    }

    /// What a test that creates its own file finds at its start.
    pub const CREATED_EMPTY: &'static str = "empty: the test created its file";

    /// [`CachedAtStart::describe`], or [`CachedAtStart::CREATED_EMPTY`] for no bytes.
    pub fn describe_at_start(&self) -> String {
        if self.file_bytes == 0 {
            return Self::CREATED_EMPTY.to_string();
        }
        self.describe()
    }

    /// "37% of 256 MiB": the one spelling in tables and conditions.
    pub fn describe(&self) -> String {
        format!("{}% of {}", crate::human::fixed(self.percent(), 0), crate::human::bytes_prose(self.file_bytes))
    }
}

/// CPU time (user + system) of the clients that issued a cell's I/O over its wall time, in % of
/// one core (bonnie++'s %CP, IOzone's CPU utilisation): stored beside every figure of a suite
/// that measures it. Less CPU for the same work is better.
pub const CPU_PERCENT: Metric = Metric::new("cpu_percent", "%CPU", Direction::LowerIsBetter, 1);

/// An access cell's [`IoMix::read_percent`], stored beside its figures.
pub const READ_PERCENT: Metric = Metric::new("read_percent", "%", Direction::HigherIsBetter, 0);
/// An access cell's [`IoMix::random_percent`], stored beside its figures.
pub const RANDOM_PERCENT: Metric = Metric::new("random_percent", "%", Direction::HigherIsBetter, 0);
/// An access cell's [`IoMix::queue_depth`], stored beside its figures.
pub const QUEUE_DEPTH: Metric = Metric::new("queue_depth", "requests", Direction::HigherIsBetter, 0);

impl IoMix {
    /// "qd=4 read=70% random=100%": the mix's one spelling, wherever an access cell is named
    /// (the plan, the live line, show's tables, compare, sweep, report and their JSON), after its
    /// block size ("4k qd=4 ...") or, across runs, after the test and sizes ("access 8m/4k qd=4
    /// ..."). One token per part, so `compare --metric read=100%` picks cells by their mix and
    /// never by a figure's operation ("read rate"); queue depth first, as compare and sweep have
    /// always keyed cells, so stored comparisons keep their order and names.
    pub fn name(&self) -> String {
        let load = self.load.map(|l| format!(" {}{l}", CurveLoad::KEY)).unwrap_or_default();
        format!(
            "{}{} {} {}{}%{load}",
            Self::QD_KEY,
            self.queue_depth,
            Self::read_part(self.read_percent),
            Self::RANDOM_KEY,
            self.random_percent
        )
    }

    /// "read=100%": the part of [`IoMix::name`] that says which share of the requests read
    /// (100% pairs with 0% as a read/write ratio).
    pub fn read_part(percent: u64) -> String {
        format!("{}{percent}%", Self::READ_KEY)
    }

    /// Starts the queue-depth part of [`IoMix::name`], which a sweep over `qd` drops.
    pub const QD_KEY: &'static str = "qd=";
    /// Starts the read-share part of [`IoMix::name`].
    pub const READ_KEY: &'static str = "read=";
    /// Starts the random-share part of [`IoMix::name`].
    pub const RANDOM_KEY: &'static str = "random=";
}

#[cfg(test)]
mod tests {
    #[test]
    fn cached_at_start_says_its_share_and_size() {
        let c = super::CachedAtStart { cached_bytes: 96 << 20, file_bytes: 256 << 20 };
        assert_eq!(c.describe(), format!("38% of {}", crate::human::bytes_prose(256 << 20)));
        assert_eq!(super::CachedAtStart::default().percent(), 100.0);
        let sum = super::CachedAtStart::sum([c, super::CachedAtStart { cached_bytes: 0, file_bytes: 256 << 20 }]);
        assert_eq!(sum, Some(super::CachedAtStart { cached_bytes: 96 << 20, file_bytes: 512 << 20 }));
        assert_eq!(super::CachedAtStart::sum([]), None);
        assert!(c.stayed() && !super::CachedAtStart::default().stayed());
        assert!(!super::CachedAtStart { cached_bytes: 4096, file_bytes: 256 << 20 }.stayed(), "a page is no part");
        assert_eq!(super::CachedAtStart::default().describe_at_start(), super::CachedAtStart::CREATED_EMPTY);
    }

    use super::*;

    #[test]
    fn a_mix_has_one_name() {
        let mix = IoMix { read_percent: 70, random_percent: 100, queue_depth: 4, load: None };
        assert_eq!(mix.name(), "qd=4 read=70% random=100%");
        let point = IoMix { load: Some(CurveLoad::Percent(50)), ..mix };
        assert_eq!(point.name(), "qd=4 read=70% random=100% load=50%");
        assert_eq!(serde_json::to_value(point).unwrap()["load"], serde_json::json!({"percent": 50}));
        assert_eq!(serde_json::from_value::<IoMix>(serde_json::to_value(point).unwrap()).unwrap(), point);
        assert_eq!(CurveLoad::Rate(500).to_string(), "500/s");
        assert_eq!(serde_json::to_value(CurveLoad::Max).unwrap(), "max");
        assert!(mix.name().starts_with(IoMix::QD_KEY) && mix.name().contains(&IoMix::read_part(70)));
        let stored = serde_json::to_value(mix).unwrap();
        assert_eq!(stored, serde_json::json!({"read_percent": 70, "random_percent": 100, "queue_depth": 4}));
        assert_eq!(serde_json::from_value::<IoMix>(stored).unwrap(), mix);
        let partial: IoMix =
            serde_json::from_value(serde_json::json!({"read_percent": 70, "queue_depth": null})).unwrap();
        assert_eq!(partial, IoMix { read_percent: 70, random_percent: 0, queue_depth: 0, load: None });
        #[derive(Deserialize, Debug, PartialEq)]
        struct Rates {
            #[serde(deserialize_with = "or_default")]
            rate: f64,
            #[serde(deserialize_with = "or_default")]
            stonewalled: Option<f64>,
        }
        let read = |v| serde_json::from_value::<Rates>(v).unwrap();
        assert_eq!(
            read(serde_json::json!({"rate": 3, "stonewalled": 2.5})),
            Rates { rate: 3.0, stonewalled: Some(2.5) }
        );
        assert_eq!(read(serde_json::json!({"rate": "x", "stonewalled": null})), Rates { rate: 0.0, stonewalled: None });
    }
}
