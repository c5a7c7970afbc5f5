//! The one layer that writes the text `show`, `runs`, `compare`, `sweep` and `report` print:
//! the binary chooses what to print and prints what this layer returns. Every table is laid
//! out by [`crate::table::Table`] and every number written by [`iomatrix_core::human`].
//!
//! Stored runs, the parts every suite shares (a suite's own tables come from its folder in
//! the binary, through the same `Table`):
//! - [`run`]: a stored run's header, conditions, cell states and noise table, and its JSON
//!   document (`iomatrix.run/1`); [`runs`]: the list of stored runs and its JSON.
//! - [`clients`]: the clients table and the per-host figures, read through a suite's
//!   [`clients::ClientColumns`]; [`clients::on_host`] cuts a run down to one host's clients;
//!   [`connections`]: a load of connections (file server, personality) seen as clients.
//! - [`verify`]: `--verify`'s tallies; [`imported`]: where an imported run came from;
//!   [`extents`]: FIEMAP summaries and a walk's errors.
//! - [`series`]: each cell's figures over time (`show RUN --series`).
//!
//! - [`summary`]: the lines every run ends with (cells, best and worst, the cache verdict, where
//!   it is stored, the next commands), and what a CPU % means.
//!
//! Comparisons:
//! - [`compare`]: `compare`'s text: the conditions, the B/A matrices and their verdicts, the
//!   scalar and per-operation tables, noise, caching, and `--fail-if-slower`'s findings.
//! - [`curve`]: each throughput-latency curve's own figures in `compare`, judged.
//! - [`headline`]: seed 003's rows in `compare` (per phase of connections, per backup walk) and
//!   which side is a published table.
//! - [`sweep`]: `sweep`'s text: the levels' tables and rates of change, the summaries, the
//!   read/write ratios, the cells left out and the derived figures.
//! - [`derived`]: `compare --derive`'s figures, worked from A's and B's and marked derived.
//! - [`history`]: `history`'s text: one figure over time for the runs of one setup, a line per
//!   group of runs with the same labels, its median, band and verdict against the group before.
//!
//! Everything printed comes from the store, so `run` and `show` print the same thing, today or
//! next year.

pub mod clients;
pub mod compare;
pub mod compare_many;
pub mod connections;
pub mod curve;
pub mod derived;
pub mod extents;
pub mod headline;
pub mod history;
pub mod hosts;
pub mod imported;
pub mod run;
pub mod runs;
pub mod series;
pub mod summary;
pub mod sweep;
pub mod verify;
