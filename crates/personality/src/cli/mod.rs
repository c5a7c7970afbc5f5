//! Workload personalities: `iomatrix run personality NAME|FILE` ([`args`]),
//! the [`Personality`] suite the harness runs (one cell per phase), and its
//! tables ([`render`](crate::render): per-operation counts, rates and latency percentiles,
//! fairness over the connections, what was lost).

pub mod args;
mod suite;

pub use suite::Personality;
