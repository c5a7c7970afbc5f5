//! The IOzone suite: IOzone's matrix of file size x record size x tests.
//!
//! - [`IozoneTest`]: IOzone's tests and their names, numbers and report titles.
//! - [`IozonePlan`]: a validated, serialisable plan; [`IozonePlan::cells`]
//!   lists every [`CellSpec`] in the order IOzone runs them, with IOzone's
//!   auto-mode rules in [`IozonePlan::pairs`].
//! - [`front::parse`]: IOzone's own command line turned into a plan.
//! - [`execute`]: runs a plan with local client threads and hands every
//!   finished [`CellResult`] to a [`CellSink`] at once.
//! - [`pass`]: one client's sweep over its file, the timed loop of every
//!   test: a [`pass::Pass`] (order, direction, record size) performed by
//!   [`pass::run_pass`] on any backend, what it moved ([`pass::Moved`]), its
//!   progress for stonewalling ([`pass::Marks`]), and why it stopped
//!   ([`pass::PassError`]).
//! - [`order`]: which record a pass touches next, [`order::Order`]
//!   (sequential, backward, strided, random, one hot record), with
//!   [`order::RandomPermutation`] (a seeded permutation without a table) and
//!   [`order::mixed_is_write`] (the mixed test's coin).
//!
//! What each test does (IOzone's definitions): write creates the file;
//! rewrite writes it again; read and reread read it start to end; random
//! read/write touch every record once in a seeded random order; backward
//! read goes from the last record to the first; record rewrite writes record
//! 0 again and again (a hot spot); stride read jumps 17 records at a time;
//! fwrite/frewrite/fread/freread do the same through buffered library I/O;
//! mixed reads or writes each record of a random order by a fair coin.
//! A test that needs a file finds one laid out (untimed) beforehand.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cli;
pub mod figures;
pub mod front;
pub mod import;
pub mod order;
pub mod pass;
mod plan;
pub mod render;
mod row;
mod runner;
mod test;

pub use figures::IozoneCellFigures;
pub use iomatrix_backend::Place;
pub use plan::{powers_of_two, CellSpec, IozonePlan, AUTO_MAX_FILE, AUTO_MAX_RECORD, AUTO_MIN_FILE, AUTO_MIN_RECORD};
pub use runner::{execute, execute_at, CellResult, CellSink, ClientFigures, STRIDE_RECORDS};
pub use test::IozoneTest;
