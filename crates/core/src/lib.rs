//! Shared vocabulary of iomatrix: the types every other crate speaks.
//!
//! - [`ByteSize`]: a byte count with the parser users type (`64k`, `1m`, `512m`)
//!   and the list/range forms (`64k,1m,512m`, `4k..16m`) behind [`parse_size_list`].
//! - [`BackendKind`]: how one client issues I/O (`sync`, `psync`, `mmap`, `stdio`).
//! - [`parse_duration`]: `10s`, `500ms`, `2m`, at most [`MAX_DURATION`] (30 days).
//! - [`short_flags`]: the one-letter-flag command lines of IOzone and bonnie++.
//! - [`UsageError`]: the user's mistake, reported in one line and exit code 2.
//! - [`FileError`]: a mistake in a file the user wrote, with its line and
//!   [`nearest`] valid name.
//! - [`text`]: control characters refused where text comes in, escaped where
//!   stored text goes out.
//!
//! - [`alloc`]: allocations of a user's size that fail with an error, not an abort.
//!
//! Nothing here does I/O.

pub mod alloc;
mod backend_kind;
mod duration;
mod file_error;
mod short_flags;
mod size;
pub mod text;
mod time;
mod usage;

pub use backend_kind::BackendKind;
pub use duration::{parse_duration, DurationError, MAX_DURATION, MAX_DURATION_TEXT};
pub use file_error::{did_you_mean, line_of, nearest, FileError};
pub use short_flags::{short_flags, unexpected_operand, ShortFlag};
pub use size::{parse_size_list, ByteSize, SizeError, GIB, KIB, MIB};
pub use time::format_utc;
pub use usage::UsageError;
