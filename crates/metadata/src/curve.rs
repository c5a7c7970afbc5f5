//! A run's throughput-latency curves (`--curve`) judged at the leader as their points come: a
//! curve per item phase, each point a round of every phase at one load. The curve's figures go
//! with each point ([`iomatrix_harness::curve::Judge`]); the run ends at the first round where
//! every phase's curve is past `--stop-curve`'s bound, because a round's phases need each
//! other's items (file-stat stats what file-create made), so a phase past its bound sooner keeps
//! running at the later points, stored and marked past.

use crate::merge::MetadataCell;
use crate::plan::{MetadataPlan, Phase};
use iomatrix_harness::curve::{Bound, Judge};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

/// The curves of a run, at the leader.
pub struct Curves {
    /// Whether the run is a curve (`--curve`): a latency target's rounds have loads too.
    curved: bool,
    bound: Option<Bound>,
    phases: usize,
    judges: BTreeMap<Phase, Judge>,
    /// Each phase whose curve ended, with how (its first point past the bound).
    ended: BTreeMap<Phase, String>,
}

impl Curves {
    /// The curves of `plan` (none without `--curve`).
    pub fn new(plan: &MetadataPlan) -> Curves {
        Curves {
            curved: plan.curve.is_some(),
            bound: plan.curve.as_ref().and_then(|c| c.curve.stop),
            phases: plan.phases.len(),
            judges: BTreeMap::new(),
            ended: BTreeMap::new(),
        }
    }

    /// A phase's point just merged: the curve's figures so far go with it. Once every phase's
    /// curve has ended, the rounds after this one are left out (`last_round`).
    pub fn see(&mut self, cell: &mut MetadataCell, last_round: &AtomicU32) {
        let r = &mut cell.result;
        let Some(load) = r.load.filter(|_| self.curved) else { return };
        let judge = self.judges.entry(r.phase).or_insert_with(|| Judge::new(self.bound));
        let (mut figures, ends) = judge.see(load, r.rate_all_over_slowest, &cell.latency);
        if ends {
            let first = self.ended.entry(r.phase).or_insert_with(|| figures.ended.clone().unwrap_or_default());
            figures.ended = Some(first.clone());
        }
        r.curve = Some(figures);
        if self.ended.len() == self.phases {
            last_round.fetch_min(r.iteration, Ordering::SeqCst);
        }
    }
}
