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
//!   all clients before the next cell is due ([`lead_together`]: after a run
//!   of cells back to back, as mdtest runs an iteration's phases).
//! - [`OnClientError`]: whether a failing client ([`ClientFailure`]) ends
//!   the run ([`Ending::ClientFailed`]) or is recorded while the others go on
//!   ([`Ending::ClientsLost`]).
//! - [`make_client_dirs`]: each client's own folder in the working folder.
#![warn(missing_docs)]

mod client;
mod collect;
mod group;
mod hooks;
mod local;
#[cfg(feature = "mpi")]
pub mod mpi;

pub use client::ClientCell;
pub use client::{handled_before_next, ClientWork, Setup, Start};
pub use collect::Gathered;
pub use group::{fail_every_cell, lead, lead_together, Group};
pub use hooks::{HookError, Hooks};
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

/// The variable that carries a `--hosts` launch's id (iomatrix starting mpirun itself) to the
/// ranks: rank 0 records it with its run, by which the launcher finds the run once mpirun ended.
pub const LAUNCH_ID: &str = "IOMATRIX_LAUNCH_ID";

/// This process's `--hosts` launch id, where it has one (a short word of hex digits and '-').
pub fn launch_id() -> Option<String> {
    std::env::var(LAUNCH_ID)
        .ok()
        .filter(|id| !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
}

/// How this process was started as one task of a parallel job, as its
/// environment tells: by Open MPI's `mpirun`, by a PMI or PMIx launcher
/// (MPICH's Hydra, `prterun`, `srun --mpi=...`), or by Slurm's `srun`
/// (a job step's task, with or without a PMI plugin). Read before MPI is
/// initialised: it decides whether to initialise it, and what to say when
/// the MPI world then has one process though the launcher started more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// Who started it, in the words an error message uses ("mpirun", "srun", ...).
    pub by: &'static str,
    /// How many tasks the launcher started, where it says (a PMIx launcher
    /// alone does not: only this task's rank).
    pub tasks: Option<usize>,
    /// This task's place among them, where the launcher says.
    pub rank: Option<usize>,
    /// True when the launcher hands MPI a way to find the other tasks (Open
    /// MPI's own variables, PMI or PMIx); false for an `srun` step without a
    /// PMI plugin, whose tasks' MPI worlds would each be one process.
    pub wires_mpi: bool,
}

impl Launch {
    /// The launch this process's environment describes, or None when it was
    /// started as an ordinary process (or alone in a Slurm batch script).
    pub fn from_env() -> Option<Launch> {
        Launch::from_vars(|name| std::env::var(name).ok())
    }

    /// As [`Launch::from_env`], over any source of variables (for tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Launch> {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<usize>().ok());
        let pmi = ["PMI_SIZE", "PMI_RANK", "PMI_FD", "PMIX_RANK", "PMIX_NAMESPACE"].iter().any(|v| var(v).is_some());
        if var("OMPI_COMM_WORLD_SIZE").is_some() {
            return Some(Launch {
                by: "mpirun",
                tasks: number("OMPI_COMM_WORLD_SIZE"),
                rank: number("OMPI_COMM_WORLD_RANK"),
                wires_mpi: true,
            });
        }
        // A task of an srun step (not the batch script, whose step id is Slurm's reserved
        // 0xfffffffe, nor an interactive or extern step): Slurm says how many tasks the step has.
        let step = var("SLURM_STEP_ID").or_else(|| var("SLURM_STEPID"));
        let srun_step = step.is_some_and(|id| id.trim().parse::<u64>().is_ok_and(|id| id < 0xffff_fff0));
        if srun_step {
            let tasks =
                number("SLURM_STEP_NUM_TASKS").or_else(|| number("SLURM_NTASKS")).or_else(|| number("SLURM_NPROCS"));
            return Some(Launch { by: "srun", tasks, rank: number("SLURM_PROCID"), wires_mpi: pmi });
        }
        if var("PMI_SIZE").is_some() || var("PMI_RANK").is_some() {
            return Some(Launch {
                by: "a PMI launcher (PMI_SIZE)",
                tasks: number("PMI_SIZE"),
                rank: number("PMI_RANK"),
                wires_mpi: true,
            });
        }
        if var("PMIX_RANK").is_some() {
            let rank = number("PMIX_RANK");
            // Only the rank is told; a rank above 0 says there are more.
            let tasks = rank.filter(|r| *r > 0).map(|r| r + 1);
            return Some(Launch { by: "a PMIx launcher (PMIX_RANK)", tasks, rank, wires_mpi: true });
        }
        if let Some(n) = number("MPI_LOCALNRANKS") {
            return Some(Launch {
                by: "an MPI launcher (MPI_LOCALNRANKS)",
                tasks: Some(n),
                rank: None,
                wires_mpi: true,
            });
        }
        None
    }

    /// True when the launcher says it started more than this one task.
    pub fn many(&self) -> bool {
        self.tasks.is_some_and(|n| n > 1)
    }

    /// This task is the first (rank 0), or the launcher does not say.
    pub fn is_first(&self) -> bool {
        self.rank.is_none_or(|r| r == 0)
    }
}

/// True when this process was started by an MPI launcher (Open MPI, MPICH,
/// Slurm's PMI), whether or not this build can speak MPI.
pub fn launched_by_mpirun() -> bool {
    Launch::from_env().is_some()
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
    /// When the client reached the barrier (ns since the Unix epoch, see [`unix_ns`]).
    pub arrived_unix_ns: u64,
    /// When the barrier let it go (ns since the Unix epoch).
    pub left_unix_ns: u64,
}

/// How a run's clients wait for each other before each cell: threads of this process
/// ([`LocalCoordinator`]) or MPI ranks.
pub trait Coordinator {
    /// This client's rank (0-based); rank 0 leads.
    fn rank(&self) -> usize;
    /// How many clients the run has.
    fn size(&self) -> usize;
    /// Blocks until every client of the run has arrived. An error means the
    /// wait was given up: a signal came, or the group is broken (a client
    /// stayed away past the bound): the run must end.
    fn barrier(&self) -> Result<StartTimes, GaveUp>;
    /// The instant the last [`barrier`](Coordinator::barrier) let every client go, on this
    /// process's clock, where the clients share one (threads of one process): the common start
    /// of the cell, whenever each thread got a CPU to wake on. None where each client takes its
    /// own (an MPI rank, whose clock is its host's).
    fn released(&self) -> Option<std::time::Instant> {
        None
    }
}

/// Why a wait for the other clients was given up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GaveUp {
    /// A signal reached this process (Ctrl-C, or the launcher's SIGTERM):
    /// the client stops; this is not the client's failure.
    #[error("{0}")]
    Signalled(String),
    /// The others stayed away past the bound, or could not be reached: the
    /// group is broken.
    #[error("{0}")]
    Broken(String),
}

/// Why a client has no figures for a cell.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientFailure {
    /// The client's rank (0-based).
    pub rank: usize,
    /// One line: what failed, where, and the system's word for it.
    pub message: String,
    /// True when the client stopped because it was told to, not by an error.
    pub stopped: bool,
}

impl ClientFailure {
    /// Client `rank` failed with `message` (one line: what, where, the system's word).
    pub fn error(rank: usize, message: String) -> Self {
        ClientFailure { rank, message, stopped: false }
    }
    /// Client `rank` stopped because it was told to (a signal, or another client's failure).
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

/// `--on-client-error` given neither word (the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is neither 'continue' nor 'abort'")]
pub struct NotOnClientError(pub String);

impl std::str::FromStr for OnClientError {
    type Err = NotOnClientError;
    fn from_str(s: &str) -> Result<Self, NotOnClientError> {
        match s {
            "abort" => Ok(OnClientError::Abort),
            "continue" => Ok(OnClientError::Continue),
            other => Err(NotOnClientError(other.to_string())),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Every cell ran and every client finished it.
    Completed,
    /// The stop flag was raised from outside (Ctrl-C) with no client failing.
    Interrupted,
    /// A client failed in cell `cell` (an index); the others were stopped.
    ClientFailed {
        /// The index of the cell it failed.
        cell: usize,
        /// The failures in that cell, one per failed client.
        failures: Vec<ClientFailure>,
    },
    /// Every cell ran, but with `--on-client-error continue` some clients
    /// failed some cells: (cell, failure) pairs. Their figures are lost.
    ClientsLost(Vec<(usize, ClientFailure)>),
    /// The caller refused a cell (the database could not be written): its error, as the run's
    /// failure says it.
    SinkFailed(String),
}

#[cfg(test)]
mod tests {
    use super::Launch;

    fn launch(vars: &[(&str, &str)]) -> Option<Launch> {
        Launch::from_vars(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn a_launch_is_read_from_each_launchers_variables() {
        assert_eq!(launch(&[]), None);
        let ompi = launch(&[("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_RANK", "2")]).unwrap();
        assert_eq!((ompi.by, ompi.tasks, ompi.rank, ompi.wires_mpi), ("mpirun", Some(4), Some(2), true));
        assert!(ompi.many() && !ompi.is_first());
        let one = launch(&[("OMPI_COMM_WORLD_SIZE", "1"), ("OMPI_COMM_WORLD_RANK", "0")]).unwrap();
        assert!(!one.many() && one.is_first());
        // srun's step without a PMI plugin, and with one.
        let bare = launch(&[("SLURM_STEP_ID", "0"), ("SLURM_STEP_NUM_TASKS", "3"), ("SLURM_PROCID", "1")]).unwrap();
        assert_eq!((bare.by, bare.tasks, bare.rank, bare.wires_mpi), ("srun", Some(3), Some(1), false));
        let pmix = launch(&[("SLURM_STEP_ID", "5"), ("SLURM_NTASKS", "2"), ("PMIX_RANK", "0")]).unwrap();
        assert_eq!((pmix.by, pmix.tasks, pmix.wires_mpi), ("srun", Some(2), true));
        let old = launch(&[("SLURM_STEPID", "0"), ("SLURM_NPROCS", "8")]).unwrap();
        assert_eq!(old.tasks, Some(8));
        // A batch script (no step, or Slurm's batch step id) is no launch.
        assert_eq!(launch(&[("SLURM_NTASKS", "24"), ("SLURM_PROCID", "0")]), None);
        assert_eq!(launch(&[("SLURM_STEP_ID", "4294967294"), ("SLURM_NTASKS", "24")]), None);
        let pmi = launch(&[("PMI_SIZE", "2"), ("PMI_RANK", "1")]).unwrap();
        assert_eq!((pmi.tasks, pmi.rank), (Some(2), Some(1)));
        // PMIx alone says the rank only; a rank above 0 says there are more.
        assert!(!launch(&[("PMIX_RANK", "0")]).unwrap().many());
        assert!(launch(&[("PMIX_RANK", "3")]).unwrap().many());
    }
}
