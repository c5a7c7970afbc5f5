//! Shared vocabulary of iomatrix: the types every other crate speaks.
//!
//! - [`ByteSize`]: a byte count with the parser users type (`64k`, `1m`, `512m`)
//!   and the list/range forms (`64k,1m,512m`, `4k..16m`) behind [`parse_size_list`].
//! - [`BackendKind`]: how one client issues I/O (`sync`, `psync`, `mmap`, `stdio`).
//! - [`parse_duration`]: `10s`, `500ms`, `2m`, at most [`MAX_DURATION`] (30 days).
//! - [`short_flags`]: the one-letter-flag command lines of IOzone and bonnie++,
//!   and [`OwnFlags`], iomatrix's own long flags read beside them.
//! - [`UsageError`]: the user's mistake, reported in one line and exit code 2.
//! - [`FileError`]: a mistake in a file the user wrote, with its line and
//!   [`nearest`] valid name.
//! - [`text`]: control characters refused where text comes in, escaped where
//!   stored text goes out.
//!
//! - [`human`]: numbers for people, in one place: byte counts, durations,
//!   significant digits, signed percentages, compact chart figures.
//! - [`alloc`]: allocations of a user's size that fail with an error, not an abort.
//! - [`figures`]: a metric declared once (id, unit, better direction, precision), the
//!   [`Figures`] trait shared code reads a cell through, and the access cell's [`IoMix`].
//!
//! - [`walk_errors`]: the errors a walk over a tree met, counted by kind ([`walk_errors::ErrorTally`]).
//!
//! Nothing here does I/O.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod alloc;
mod backend_kind;
mod cell_state;
mod duration;
pub mod figures;
mod file_error;
pub mod human;
mod matrix;
pub mod order;
mod own_flags;
mod short_flags;
mod size;
pub mod text;
mod time;
mod usage;
pub mod walk_errors;

pub use backend_kind::BackendKind;
pub use cell_state::CellStateKind;
pub use duration::{parse_duration, DurationError, MAX_DURATION, MAX_DURATION_TEXT};
pub use figures::{CurveLoad, Direction, Figures, IoMix, Metric, MetricId};
pub use file_error::{did_you_mean, line_of, nearest, FileError};
pub use matrix::{Matrix, MatrixCell};
pub use own_flags::{parse_compressible, FrontEnd, OwnFlags};
pub use short_flags::{short_flags, unexpected_operand, ShortFlag};
pub use size::{parse_size_list, ByteSize, SizeError, GIB, KIB, MIB};
pub use time::format_utc;
pub use usage::UsageError;
