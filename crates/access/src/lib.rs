//! Access specs, as Iometer and fio describe work: block size, read %,
//! random %, outstanding I/Os per client, for a time or a number of bytes.
//!
//! - [`AccessPlan`]: lists in any parameter make a sweep; [`AccessPlan::cells`]
//!   is their cartesian product, each an [`AccessCell`].
//! - [`execute`]: runs a plan with local client threads, each keeping its
//!   queue full on its own file, and hands every merged [`AccessResult`]
//!   (IOPS, MiB/s, exact latency histograms for reads and writes, CPU, a
//!   per-second series) to the caller at once.
//! - [`execute_at`] with [`Place::Remote`]: the same on a server through
//!   iomatrix's own protocol client, each client with its own session(s).
//! - [`Live`]: counters the clients refresh every second, for a live display.
//! - [`LatencyTarget`]: the deepest queue whose requests meet a latency, searched as fio's
//!   latency_target searches, each client's [`TargetOutcome`] stored with its cell.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bssplit;
pub mod cli;
pub mod depths;
pub mod figures;
pub mod fio_words;
pub mod import;
mod plan;
pub mod render;
mod row;
mod runner;
pub mod split;
mod steady;
mod stored;
pub mod target;

pub use figures::AccessCellFigures;
pub use iomatrix_backend::Place;
pub use plan::{
    AccessCell, AccessPlan, CellSetting, Interleave, Limit, Pin, Prepare, Protocol, RequestNeeds, SharedFile,
    TogetherJob, LAY_OUT_PIECE,
};
pub use runner::{
    execute, execute_at, latency_clock, latency_clock_source, AccessFigures, AccessResult, Live, OpenLoop, Second,
};
pub use target::{LatencyTarget, SearchStep, TargetOutcome};
