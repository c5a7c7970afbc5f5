//! How the clients of a run stay in step, wherever they run.
//!
//! - [`Coordinator`]: the seam a client sees. It knows its `rank` among
//!   `size` clients and waits at a `barrier` before each cell, so that all
//!   begin together; the barrier says when the client arrived and left.
//! - [`Group`]: who the clients are: threads of this process
//!   ([`Group::Local`]) or, with the `mpi` feature, one MPI rank each.
//! - [`ClientWork`] and [`lead`]: a suite writes one client's work per cell;
//!   `lead` runs it on every client of the group, as the run's [`Setup`]
//!   says (cells, working folder, the `--before` and `--after` [`Hooks`],
//!   stop flag), and hands the leader each cell's [`Gathered`] figures from
//!   all clients before the next cell is due.
//! - [`OnClientError`]: whether a failing client ([`ClientFailure`]) ends
//!   the run ([`Ending::ClientFailed`]) or is recorded while the others go on
//!   ([`Ending::ClientsLost`]).
//! - [`make_client_dirs`]: each client's own folder in the working folder.

mod client;
mod collect;
mod group;
mod hooks;
mod local;
#[cfg(feature = "mpi")]
pub mod mpi;

pub use client::ClientCell;
pub use client::{ClientWork, Setup, Start};
pub use collect::Gathered;
pub use group::{lead, Group};
pub use hooks::Hooks;
pub use local::{local_group, LocalCoordinator};
use std::path::{Path, PathBuf};

/// The folder of client `rank` in a run's working folder.
pub fn client_dir(workdir: &Path, rank: usize) -> PathBuf {
    workdir.join(format!("client-{rank}"))
}

/// Makes each client's own folder, `workdir/client-N`, and returns them by
/// rank: clients never share a file name (seed 001's collisions).
pub fn make_client_dirs(workdir: &Path, clients: usize) -> std::io::Result<Vec<PathBuf>> {
    let dirs: Vec<PathBuf> = (0..clients).map(|rank| client_dir(workdir, rank)).collect();
    for dir in &dirs {
        std::fs::create_dir_all(dir)?;
    }
    Ok(dirs)
}

/// True when this process was started by an MPI launcher (Open MPI, MPICH,
/// Slurm's PMI), whether or not this build can speak MPI.
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"].iter().any(|v| std::env::var_os(v).is_some())
}

/// Wall-clock time in nanoseconds since the Unix epoch: comparable between
/// processes on one host (the barrier check), unlike `Instant`.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// When a client reached the barrier before a cell and when it was let go.
/// Every client's `left` is after every client's `arrived` if the barrier holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StartTimes {
    pub arrived_unix_ns: u64,
    pub left_unix_ns: u64,
}

pub trait Coordinator {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Blocks until every client of the run has arrived. An error means the
    /// group is broken (a client stayed away past the bound): the run must end.
    fn barrier(&self) -> Result<StartTimes, String>;
    /// The instant the last [`barrier`](Coordinator::barrier) let every client go, on this
    /// process's clock, where the clients share one (threads of one process): the common start
    /// of the cell, whenever each thread got a CPU to wake on. None where each client takes its
    /// own (an MPI rank, whose clock is its host's).
    fn released(&self) -> Option<std::time::Instant> {
        None
    }
}

/// Why a client has no figures for a cell.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientFailure {
    pub rank: usize,
    /// One line: what failed, where, and the system's word for it.
    pub message: String,
    /// True when the client stopped because it was told to, not by an error.
    pub stopped: bool,
}

impl ClientFailure {
    pub fn error(rank: usize, message: String) -> Self {
        ClientFailure { rank, message, stopped: false }
    }
    pub fn stopped(rank: usize) -> Self {
        ClientFailure { rank, message: "stopped".into(), stopped: true }
    }
}

/// What the run does when a client fails a cell (`--on-client-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnClientError {
    /// Stop every client and end the run; the cell is not kept.
    #[default]
    Abort,
    /// Record the failure and its lost samples, keep the other clients'
    /// figures for the cell, and go on with the next cell.
    Continue,
}

impl std::str::FromStr for OnClientError {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "abort" => Ok(OnClientError::Abort),
            "continue" => Ok(OnClientError::Continue),
            other => Err(format!("'{other}' is neither 'continue' nor 'abort'")),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Completed,
    /// The stop flag was raised from outside (Ctrl-C) with no client failing.
    Interrupted,
    /// A client failed in cell `cell` (an index); the others were stopped.
    ClientFailed {
        cell: usize,
        failures: Vec<ClientFailure>,
    },
    /// Every cell ran, but with `--on-client-error continue` some clients
    /// failed some cells: (cell, failure) pairs. Their figures are lost.
    ClientsLost(Vec<(usize, ClientFailure)>),
    /// The caller refused a cell (the database could not be written).
    SinkFailed(String),
}
