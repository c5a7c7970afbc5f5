//! dbench/NetBench load files (`client.txt`, the format
//! dbench 3 and 4 read) replayed on a local folder or through iomatrix's
//! own NFS/SMB clients, with per-operation figures beside dbench's own.
//!
//! - [`LoadFile::parse`] / [`LoadFile::read`]: both formats, with or without
//!   a leading timestamp per line; a bad line is refused with its number and
//!   the fix (an unknown operation with the nearest valid name); input is
//!   bounded ([`parse::MAX_BYTES`], [`parse::MAX_LINE`], [`parse::MAX_OPS`]).
//! - [`ReplayFs`]: the file operations a load file names (NTCreateX's
//!   dispositions, ReadX/WriteX, FIND_FIRST's listing, QUERY_*, locks...),
//!   on [`LocalFs`] (a folder: std, rustix; OFD byte-range locks) or on
//!   [`RemoteReplayFs`] (one session of [`iomatrix_backend::RemoteFs`]).
//! - [`replay_connection`]`(load, files, opts, live, stop) -> `[`ReplayFigures`]:
//!   one connection's replay. Its paths are the file's with `client1` made
//!   `client<N>` (N its number from 0), below the replay's folder, as dbench
//!   does. Pacing ([`Pacing`]): by the file's timestamps (each operation
//!   waits until its second after the pass began; one started more than
//!   1 ms late is counted `late`), or as fast as possible. With a deadline
//!   the file is looped, as dbench's `-t`, and the replay ends at the
//!   deadline, mid-file. Each operation is timed alone (an HDR histogram per
//!   operation), its status compared with the line's: a mismatch (NT_STATUS_OK
//!   expected and an error got, NT_STATUS_OBJECT_NAME_NOT_FOUND expected and
//!   the file found...) is counted per operation and the first
//!   [`replay::EXAMPLES`] kept with line, path and both statuses; never
//!   fatal unless [`ReplayOptions::stop_on_mismatch`].
//! - [`ReplayFigures`]: per operation an [`crate::OpFigures`]
//!   (count, bytes, unexpected errors by kind, mismatches, late starts,
//!   latency), passes, wall time; [`ReplayFigures::mb_per_s`] is dbench's
//!   throughput (bytes read and written, 10^6 per MB).
//! - [`cleanup_connection`]: removes `clients/client<N>` afterwards, untimed.
//! - [`execute_clients`]: the replay through the harness (`iomatrix run
//!   personality --dbench-loadfile FILE`): every client's connections (threads;
//!   sessions on a server) let go together, one `replay` cell per repeat as
//!   personality phases are ([`crate::CellFigures`]).
//!
//! Where a file system cannot behave as the traced Windows server did, the
//! replay says so by mismatches rather than hiding them: NFSv3 has no locks
//! (LockX/UnlockX fail `Unsupported`).
#![warn(missing_docs)]

pub mod clients;
pub mod fs;
pub mod parse;
pub mod replay;

pub use crate::Live;
pub use clients::{execute_clients, load_for, LoadError};
pub use fs::{Disposition, LocalFs, RemoteReplayFs, ReplayFs, Want};
pub use parse::{Expect, LoadFile, Op, OpKind, ParseError, OP_NAMES};
pub use replay::{
    cleanup_connection, replay_connection, wildcard_match, Mismatch, Pacing, ReplayFigures, ReplayOptions,
};
