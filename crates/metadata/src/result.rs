//! What one phase measured: both of mdtest's rates, each client's own, the merged latency
//! percentiles, failures by errno, and the stonewall when it fired.

use crate::plan::Phase;
use iomatrix_core::CurveLoad;
use iomatrix_harness::curve::CurveFigures;
use iomatrix_random::Arrival;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One client's part of a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientPhase {
    /// The client's rank (0-based).
    pub client: usize,
    /// Items it completed.
    pub items: u64,
    /// Its own time, from its start after the barrier to its last item (and the sync with -Y).
    pub seconds: f64,
}

/// Per-operation latency over every client, merged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhaseLatency {
    /// Mean, in seconds.
    pub mean: f64,
    /// Median, in seconds.
    pub p50: f64,
    /// 99th percentile, in seconds.
    pub p99: f64,
    /// 99.9th percentile, in seconds.
    pub p999: f64,
    /// Slowest operation, in seconds.
    pub max: f64,
}

/// The stonewall, when it fired in file creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StonewallFired {
    /// The stonewall's time, in seconds (mdtest -W).
    pub seconds: f64,
    /// The largest count any client reached when it fired: every client went on to it.
    pub count_reached: u64,
    /// The items of every client over the time to the stonewall (mdtest's "stonewall rate").
    pub rate_at_stonewall: f64,
    /// The fewest items any client had made when it fired (mdtest's `Continue stonewall hit min:`).
    #[serde(default)]
    pub count_min: u64,
    /// The mean of the items each client had made when it fired (that line's `avg:`).
    #[serde(default)]
    pub count_mean: f64,
}

/// A phase of one iteration, merged over the clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// The phase.
    pub phase: Phase,
    /// The iteration (0-based).
    pub iteration: u32,
    /// Items of every client.
    pub items: u64,
    /// mdtest's rule handed to IO500: every client's items over the slowest client's time,
    /// barrier included.
    pub rate_all_over_slowest: f64,
    /// mdtest's SUMMARY rule: the slowest client's own rate times the number of clients.
    pub rate_slowest_times_clients: f64,
    /// Each client's own items and time.
    pub clients: Vec<ClientPhase>,
    /// Per-operation latency, merged over the clients.
    pub latency: Option<PhaseLatency>,
    /// Failed operations by errno name (ENOSPC, EMFILE, EDQUOT, ESTALE, ...): a cell state,
    /// never a rate.
    pub failures: BTreeMap<String, u64>,
    /// Set when the stonewall fired in this phase.
    pub stonewall: Option<StonewallFired>,
    /// The find phase's matches ([`Phase::Find`]); None for the other phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<u64>,
    /// The load of a curve's point (`--curve`); None outside a curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<CurveLoad>,
    /// Open loop (`--rate`, a curve's point after its maximum): what was offered, and the items
    /// late and in backlog, of every client together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenLoad>,
    /// A curve's figures after this point (the last stored point of a phase's curve holds the
    /// curve's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<CurveFigures>,
    /// Under `--latency-target`: the level this round offered, whether it met the target, and
    /// on the round measured at the level found, what the search found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::target::TargetRound>,
}

/// An open-loop phase's load: each item arrived at an intended start and was timed from it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenLoad {
    /// How the arrivals were spaced.
    pub arrival: Arrival,
    /// Items a second offered (of a client, or of every client once merged).
    pub offered_per_sec: f64,
    /// Items issued more than 1 ms after their intended start (the item before them still
    /// running): still issued, and timed from their intended start.
    pub late: u64,
    /// Items not yet issued when the last arrival was due (issued more than 1 ms after it): the
    /// queue left once the offered load had all arrived. A phase issues every item, so its time
    /// grows by the backlog's.
    pub backlog: u64,
}

impl OpenLoad {
    /// The clients' loads together: their rates, late items and backlogs added.
    pub fn sum<'a>(each: impl Iterator<Item = &'a OpenLoad>) -> Option<OpenLoad> {
        each.copied().reduce(|a, b| OpenLoad {
            arrival: a.arrival,
            offered_per_sec: a.offered_per_sec + b.offered_per_sec,
            late: a.late + b.late,
            backlog: a.backlog + b.backlog,
        })
    }
}
