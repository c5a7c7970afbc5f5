//! What every suite's run shares, done once: the [`Suite`] trait (the seam)
//! and [`run`] (the one harness function), the [`Target`] parsed from the
//! command line, the working folder here or on a server, the environment
//! record, clients as threads or MPI ranks ([`Ranks`]), repeats and
//! `--tolerance`, throughput-latency curves ([`curve`]: their points, bound and
//! figures, for every suite that runs them), the climb of fio's latency target search
//! ([`level_search`], over depths or rates), progress and the live line, signals, the plan-time check
//! of threads and memory ([`limits`]), and the flags every `run` takes
//! ([`CommonRunArgs`]). A library the suites' crates build on and the binary
//! runs them through: it names no suite, and no suite's crate is its dependency.
//! Beside the run it holds what the binary's other commands share with it: the
//! exit codes ([`exit`]), standard output ([`out`]) and where the results
//! database lives ([`db_path`]).

pub mod args;
pub mod clients;
pub mod curve;
pub mod data;
pub mod db_path;
pub mod disturbance;
pub mod exit;
mod job;
pub mod launcher_child;
pub mod level_search;
pub use launcher_child::dies_with_this_process;
pub mod limits;
pub mod live;
pub mod machine;
pub mod out;
pub mod outcome;
pub mod progress;
pub mod publish;
pub mod ranks;
pub mod raw_device;
pub mod repeat;
mod run;
pub mod series;
pub mod server_facts;
pub mod server_workdir;
mod session;
pub mod signals;
pub mod suite;
pub mod target;
pub mod timed;
pub mod workdir;

pub use args::CommonRunArgs;
pub use limits::{Cost, Demand};
pub use ranks::Ranks;
pub use run::{follow, run, run_in};
pub use session::Session;
pub use suite::{FrontEnd, LiveView, NoLive, NotStored, Prepared, RunOptions, RunSpec, Suite, Verdict};
pub use target::{Server, Target};
