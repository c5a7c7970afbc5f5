//! The metadata suite: mdtest's phases, each timed on its own between barriers, as mdtest
//! times them, from one client or many (threads, MPI ranks, hosts), on a local folder or a
//! server reached by iomatrix's own NFS and SMB clients.
//!
//! - [`plan`]: [`MetadataPlan`], the run resolved: items, tree, layout, phases, bytes, stonewall.
//! - [`curve`]: a run's throughput-latency curves (`--curve`), judged as their points come.
//! - [`find`]: IO500's find phase, a timed walk matching name, size and newer-than.
//! - [`limits`]: a plan checked at plan time against free inodes and space, open files and memory.
//! - [`result`]: [`PhaseResult`], a phase merged over the clients: both of mdtest's rates
//!   (every client's items over the slowest client's time; the slowest client's rate times the
//!   clients), each client's own, latency percentiles, failures by errno, the stonewall.
//! - [`layout`]: the tree's counts and the items' names, as mdtest lays them out.
//! - [`fs`]: the seam to a file system (local system calls, or a protocol client).
//! - [`runner`]: one client's phases; [`merge`]: a phase merged at the leader; [`pace`]: an
//!   open-loop phase's arrivals (`--rate`, `--curve`).
//! - [`cli`]: `iomatrix run metadata` and the [`cli::Metadata`] suite; [`stored`]: a stored
//!   run's phases read back; [`render`]: its tables.
//! - [`target`]: `--latency-target`, the highest rate whose items meet a target, per phase.
//! - [`front`]: `iomatrix mdtest`, mdtest's command line as a plan, and mdtest's output layout.
//! - [`import`]: mdtest's output read (`iomatrix import`).
#![warn(missing_docs)]

pub mod cli;
pub mod curve;
pub mod find;
pub mod front;
pub mod fs;
pub mod import;
pub mod layout;
pub mod limits;
pub mod merge;
pub mod pace;
pub mod plan;
pub mod render;
pub mod result;
pub mod runner;
pub mod stored;
pub mod target;

pub use plan::{ItemCount, ItemKinds, Layout, MetaCurve, MetadataPlan, Neighbour, OpenRate, Phase, TreeShape};
pub use result::{ClientPhase, OpenLoad, PhaseLatency, PhaseResult, StonewallFired};
