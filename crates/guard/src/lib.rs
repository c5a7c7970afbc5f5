//! The guards every file iomatrix touches at a user's word goes through, so
//! that nothing the user has is ever lost and no input costs unbounded
//! memory or time. One guard for each hazard; the next feature inherits it
//! by calling it.
//!
//! - [`read`](mod@read): the one reader of input files (studies, personalities, dbench
//!   load files, size profiles, hostfiles, imports): regular files of a
//!   bounded size and line length, no binary data; devices, FIFOs and
//!   sockets refused before they are opened.
//! - [`output`]: the one writer of output files (reports, workbooks, backups,
//!   profiles, study logs): never over the results database or its
//!   -wal/-shm by any path (name, symlink, hard link, bind mount), never over
//!   a file of another kind without `--force`, always through a temporary
//!   file in the same folder that is synced and renamed into place.
//! - [`remove`]: the one remover of trees (working folders at the end of a
//!   run and in `clean`, a replayed load file's deltree): relative to
//!   directory handles, never following a symlink, never crossing into
//!   another mount (mount id, not only the device: a bind mount of the same
//!   file system has the same device), naming what it left and why.
//! - [`live`]: whether the process that made a working folder still runs,
//!   across PID namespaces: a lock held on the folder's marker for the run's
//!   whole life, the boot and the PID namespace it ran in.
//!
//! Nothing here prints: callers say what happened, in their own words.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod live;
pub mod output;
pub mod read;
pub mod remove;

pub use live::{boot_id, pid_namespace, LockState};
pub use output::{database_file, Checked, Kind, Never, Output, OutputError};
pub use read::{read, read_stream, read_text, Input, ReadError};
pub use remove::{remove_tree, Left, Removal};
