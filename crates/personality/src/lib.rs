//! Workload personalities: a file-server load described as filesets and
//! flows of operations (filebench's idea), run by many connections at once
//! in closed loop (think time) or open loop (Poisson arrivals at a target
//! rate, latency from the intended start), on a local folder or a server
//! through iomatrix's own NFS/SMB clients.
//!
//! - [`figures`]: what a run stores, shared with the dbench load-file
//!   replay: [`OpFigures`] (one operation kind: count, bytes, errors by
//!   kind, status mismatches, late starts, HDR latency), [`ConnectionOps`]
//!   (one connection's share), [`Fairness`] (min/max share, Jain's index)
//!   and [`CellFigures`] (one cell merged over connections and clients).
#![warn(missing_docs)]

pub mod cli;
pub mod dbench;
pub mod figures;
pub mod import;
pub mod render;

pub use figures::{merge_ops, CellFigures, ConnectionOps, Fairness, OpFigures};
pub mod schema;
pub mod sizes;
mod stored;

pub use schema::{parse, FileError, Fileset, Flow, OpKind, Personality, Phase, PhaseEnd, Pick, Scale, SizeDist, Step};
pub mod builtin;
pub mod claims;
pub mod engine;
pub mod files;

pub mod target;

pub use engine::{execute_clients, ClientCell, Footprint, Live, LoadFileReplay, RunPlan, Steering, TargetStage};
