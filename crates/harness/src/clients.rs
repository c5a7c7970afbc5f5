//! The common client flags (`--clients`, `--before`, `--after`,
//! `--on-client-error`, `--client-timeout`) as a validated [`ClientPlan`].

use clap::Args;
use iomatrix_coord::{Hooks, OnClientError};
use iomatrix_core::{parse_duration, UsageError};
use std::time::Duration;

/// The client flags every suite takes: how many clients, their hooks, what
/// a failed one does to the run.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Clients")]
pub struct ClientArgs {
    /// Clients on this host (threads), each in its own folder `client-N` of the working folder,
    /// all starting every cell together; the threads and memory they need are checked against this
    /// machine's limits before the run starts. Under mpirun each rank is one client: leave this at 1
    #[arg(long, visible_alias = "numjobs", default_value_t = 1, value_name = "N")]
    pub clients: usize,

    /// Shell command each client runs before its first cell (e.g. to log in to the server),
    /// in its folder, with IOMATRIX_RANK, IOMATRIX_CLIENTS and IOMATRIX_CLIENT_DIR set;
    /// a failure fails that client
    #[arg(long, value_name = "CMD")]
    pub before: Option<String>,

    /// Shell command each client runs after its last cell (same environment as --before)
    #[arg(long, value_name = "CMD")]
    pub after: Option<String>,

    /// Shell command each client runs between two cells, untimed, before the next cell
    /// prepares (same environment as --before, plus IOMATRIX_CELL: the next cell's number
    /// from 0); a failure fails that client's next cell
    #[arg(long, value_name = "CMD")]
    pub between_cells: Option<String>,

    /// When a client fails a cell: abort (stop every client, end the run) or continue
    /// (record the failure and its lost samples, keep the others' figures, go on)
    #[arg(long, default_value = "abort", value_name = "WHAT")]
    pub on_client_error: String,

    /// Under mpirun: the longest rank 0 waits for another rank (the others wait twice as long for
    /// rank 0, so it stores the run first); a hung or dead rank ends the run with a message after
    /// this, naming it and keeping the finished cells; at most 720h (30 days)
    #[arg(long, default_value = "10m", value_name = "TIME", allow_hyphen_values = true)]
    pub client_timeout: String,

    /// Run on these hosts: starts `mpirun --hostfile FILE` (a line per host: HOST [slots=N]) or
    /// `mpirun --host a,b,c` (HOST[:N]) with this iomatrix as the ranks, one client per slot, and
    /// prints the command (a build with `--features mpi`); ignored by the ranks themselves
    #[arg(long, value_name = "FILE|HOST,...")]
    pub hosts: Option<String>,
}

impl Default for ClientArgs {
    fn default() -> ClientArgs {
        ClientArgs {
            clients: 1,
            before: None,
            after: None,
            between_cells: None,
            on_client_error: "abort".into(),
            client_timeout: "10m".into(),
            hosts: None,
        }
    }
}

/// The bound on any wait for another MPI rank, until the command line sets it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClientPlan {
    /// Clients in all: threads here, or MPI ranks.
    pub count: usize,
    pub hooks: Hooks,
    pub on_error: OnClientError,
    pub timeout: Duration,
}

impl ClientPlan {
    /// One client, no hooks, abort on failure: front ends without the flags.
    pub fn single() -> ClientPlan {
        ClientPlan { count: 1, hooks: Hooks::default(), on_error: OnClientError::Abort, timeout: DEFAULT_TIMEOUT }
    }

    /// `mpi_ranks` is the number of ranks when running under mpirun.
    pub fn from_args(common: &ClientArgs, mpi_ranks: Option<usize>) -> Result<ClientPlan, UsageError> {
        if common.clients == 0 {
            return Err(UsageError::new("--clients 0: a run needs at least one client; give --clients 1 or more"));
        }
        let count = match mpi_ranks {
            Some(_) if common.clients > 1 => {
                return Err(UsageError::new(format!(
                    "--clients {} under mpirun: each MPI rank is one client; leave --clients out and choose the \
                     number of clients with mpirun -np",
                    common.clients
                )))
            }
            Some(ranks) => ranks,
            None => common.clients,
        };
        let on_error = common
            .on_client_error
            .parse::<OnClientError>()
            .map_err(|e| UsageError::new(format!("--on-client-error: {e}")))?;
        let timeout = parse_duration(&common.client_timeout)
            .map_err(|e| UsageError::new(format!("--client-timeout {}: {e}", common.client_timeout)))?;
        let hook = |flag: &str, cmd: &Option<String>| match cmd {
            Some(c) if c.trim().is_empty() => Err(UsageError::new(format!("{flag} is empty: give a shell command"))),
            other => Ok(other.clone()),
        };
        let hooks = Hooks {
            before: hook("--before", &common.before)?,
            after: hook("--after", &common.after)?,
            between_cells: hook("--between-cells", &common.between_cells)?,
        };
        Ok(ClientPlan { count, hooks, on_error, timeout })
    }
}

/// One client's figures as a cell stores them in `client_figures`: its own
/// fields, and its rank.
pub fn figures_with_rank<T: serde::Serialize>(rank: usize, figures: &T) -> serde_json::Value {
    let mut v = serde_json::to_value(figures).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.insert("rank".into(), serde_json::json!(rank));
    }
    v
}

/// The many-client fields of a cell's `metrics`: the failed clients and
/// every client's arrival at and release from the start barrier.
pub fn add_client_metrics(
    metrics: &mut serde_json::Value,
    failures: &[iomatrix_coord::ClientFailure],
    starts: &[iomatrix_coord::StartTimes],
) {
    if let Some(m) = metrics.as_object_mut() {
        m.insert("failed_clients".into(), serde_json::json!(failures));
        m.insert("start_barrier".into(), serde_json::json!(starts));
    }
}
