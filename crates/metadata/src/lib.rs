//! The metadata suite: mdtest's phases, each timed on its own between barriers, as mdtest
//! times them, from one client or many (threads, MPI ranks, hosts), on a local folder or a
//! server reached by iomatrix's own NFS and SMB clients.
//!
//! - [`plan`]: [`MetadataPlan`], the run resolved: items, tree, layout, phases, bytes, stonewall.
//! - [`limits`]: a plan checked at plan time against free inodes and space, open files and memory.
//! - [`result`]: [`PhaseResult`], a phase merged over the clients: both of mdtest's rates
//!   (every client's items over the slowest client's time; the slowest client's rate times the
//!   clients), each client's own, latency percentiles, failures by errno, the stonewall.
#![warn(missing_docs)]

pub mod limits;
pub mod plan;
pub mod result;

pub use plan::{ItemCount, ItemKinds, Layout, MetadataPlan, Neighbour, Phase, TreeShape};
pub use result::{ClientPhase, PhaseLatency, PhaseResult, StonewallFired};
