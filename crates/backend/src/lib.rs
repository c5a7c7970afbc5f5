//! Local backends: how one client issues I/O to a file.
//!
//! - [`FileIo`]: the one trait at this seam. A suite opens a file through a
//!   backend type chosen once per cell and calls it generically
//!   (`run::<PsyncFile>()`), so the hot path has no per-I/O branching.
//! - [`SyncFile`], [`PsyncFile`], [`MmapFile`], [`StdioFile`]: the backends
//!   named by [`iomatrix_core::BackendKind`].
//! - [`AlignedBuf`]: the I/O buffer, aligned for O_DIRECT and filled with
//!   incompressible bytes so that compressing storage cannot flatter a result.
//! - [`probe_direct`]: asks a file system whether it accepts O_DIRECT.
//! - [`keep_on`], [`allow_on`], [`spread_pick`]: a client's thread kept on one CPU and let go (`--pin`).
//! - [`residency`], [`drop_cached`]: how much of a file the page cache holds
//!   (mincore), and dropping it (fdatasync + `posix_fadvise(DONTNEED)`).
//! - [`QueuedFile`]: the submit/reap seam on fio's model, for backends that
//!   keep requests in flight. [`QueuedFile::submit`] takes a [`Request`] (a
//!   slot naming one of the backend's own buffers, direction, offset, length)
//!   and answers [`Submitted`] `Done`, `Queued` or `Busy`;
//!   [`QueuedFile::reap`] hands back [`Completion`]s. [`open_queued`] opens one
//!   by [`iomatrix_core::BackendKind`].
//! - [`UringFile`]: Linux io_uring with registered buffers and file where the
//!   kernel allows; [`probe_io_uring`] reports at run time whether io_uring is
//!   usable and what it offers ([`UringSupport`]).
//! - [`Immediate`]: any [`FileIo`] behind the queued seam at depth 1.
//! - [`RecordIo`]: whole requests at offsets, what a pass needs of any file.
//! - [`RemoteFs`], [`RemoteFile`]: a server's files through iomatrix's own
//!   protocol clients (NFS, SMB), no mount in between. Queued:
//!   [`RemoteFs::open_queued`] where one session carries many requests (SMB),
//!   else [`OneAtATime`] (depth 1) or [`SessionPool`] (depth N: N sessions,
//!   one request in flight on each).
//! - [`Place`]: where a suite's clients keep their files, here or on a
//!   server ([`Connect`] makes each client's session).
//!
//! The [`FileIo`] backends complete every request before returning; queued
//! backends do not fit a synchronous call and do not pretend to.
#![warn(missing_docs)]

mod buffer;
mod cpu;
mod error_kind;
mod fd_limit;
mod mmap;
mod open;
mod page_cache;
mod place;
mod psync;
mod queued;
mod remote;
mod remote_queued;
mod stdio;
mod sync;
mod uring;

pub use buffer::AlignedBuf;
pub use cpu::{allow_on, allowed_cpus, current_cpu, keep_on, spread_pick};
pub use error_kind::{errno_name, error_kind};
pub use fd_limit::{raise_fd_limit, FdLimit};
pub use mmap::MmapFile;
pub use open::{probe_direct, OpenHow, DIRECT_ALIGN};
pub use page_cache::{drop_cached, residency, residency_answered, residency_of, residency_within};
pub use place::{below, client_folder, Connect, Place};
pub use psync::{pread_full, pwrite_all, PsyncFile};
pub use queued::{
    check_buffer_len, check_reap, check_request, open_queued, Completion, Immediate, QueuedFile, Request, Submitted,
};
pub use remote::{listing_too_long, RemoteEntry, RemoteFile, RemoteFs, RemoteKind, MAX_LISTED};
pub use remote_queued::{OneAtATime, SessionPool};
pub use stdio::StdioFile;
pub use sync::SyncFile;
pub use uring::{default_submit_batch, probe_io_uring, UringFile, UringSupport, UringUnavailable, IORING_MAX_ENTRIES};

use iomatrix_core::BackendKind;
use std::io;
use std::path::Path;

/// Whole requests at offsets: all a pass needs of a file, whichever way it
/// is reached (a local backend, or a protocol client's [`RemoteFile`]).
pub trait RecordIo {
    /// Fills `buf` from `offset`, or fails (a short file is `UnexpectedEof`).
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`.
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
}

impl<F: FileIo> RecordIo for F {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileIo::read_at(self, buf, offset)
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        FileIo::write_at(self, buf, offset)
    }
}

/// One open file of one backend. Requests are whole: `read_at` fills the
/// buffer or fails (a short file is `UnexpectedEof`), `write_at` writes it all.
pub trait FileIo: Sized + Send {
    /// Which backend this is.
    const KIND: BackendKind;

    /// Opens (or creates) `path` as `how` says.
    fn open(path: &Path, how: &OpenHow) -> io::Result<Self>;
    /// Fills `buf` from `offset`, or fails (a short file is `UnexpectedEof`).
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`.
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes written data durable: `fsync`, `msync`, or `fflush` + `fsync`.
    fn flush_to_storage(&mut self) -> io::Result<()>;
    /// Closes the file, reporting errors that a plain drop would hide
    /// (buffered data that cannot be written, a failing `close`).
    fn close(self) -> io::Result<()>;
}
