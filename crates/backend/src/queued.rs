//! The submit/reap seam, on fio's model: a suite hands requests to
//! [`QueuedFile::submit`] and collects their outcomes with [`QueuedFile::reap`].
//! A synchronous backend finishes each request inside `submit` (depth 1,
//! through [`Immediate`]); io_uring keeps up to `depth` of them in flight.
//!
//! The backend owns the buffers, one per slot, so that it can align them for
//! O_DIRECT and register them with the kernel. A request names its buffer by
//! slot; the caller fills the buffer before a write and reads it after a read
//! completes.

use crate::{AlignedBuf, FileIo, OpenHow, PsyncFile, SyncFile, UringFile};
use iomatrix_core::BackendKind;
use std::io;
use std::path::Path;

/// One request of a queued backend. `slot` names one of the backend's own buffers (0..depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Whose buffer holds the data (0..depth).
    pub slot: usize,
    /// A write (else a read).
    pub write: bool,
    /// Where in the file (bytes).
    pub offset: u64,
    /// Bytes to move, 1..=the buffer size given at open. The data sits at the
    /// start of the slot's buffer.
    pub len: usize,
}

/// A finished request: the slot it used and its outcome (bytes moved, or the error).
///
/// A request is whole, as in [`FileIo`]: `Ok(n)` always has `n == len`. A read
/// that meets the end of the file is an `UnexpectedEof` error.
#[derive(Debug)]
pub struct Completion {
    /// The slot of the request that finished.
    pub slot: usize,
    /// Bytes moved (always the request's `len`), or the error.
    pub result: io::Result<usize>,
}

/// What [`QueuedFile::submit`] did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// Finished already; its completion is waiting for reap.
    Done,
    /// In flight.
    Queued,
    /// The queue is full: reap first. The request was not taken.
    Busy,
}

/// A file opened for queued I/O with up to `depth()` requests in flight.
///
/// A request counts as in flight from `submit` until `reap` hands back its
/// completion, and its slot may not be submitted again until then.
pub trait QueuedFile: Send {
    /// The backend underneath.
    fn kind(&self) -> BackendKind;
    /// How many requests may be in flight at once (the number of slots).
    fn depth(&self) -> usize;
    /// What the file runs on, for logs and reports: "io_uring depth 32,
    /// registered buffers, registered file, submitted in groups of up to 4", "psync depth 1".
    fn describe(&self) -> String;
    /// The buffer of a slot (aligned for O_DIRECT, length = the buffer size
    /// given at open). Fill it before a write; read it after a read completes.
    ///
    /// Panics if `slot` is out of range or (io_uring) the kernel still owns the
    /// buffer because its request is in flight.
    fn buffer(&mut self, slot: usize) -> &mut [u8];
    /// Queues (or, for synchronous backends, performs) one request. Requests
    /// may be batched: io_uring submits to the kernel in `reap` (or when its
    /// submission queue is full), so that one system call carries many requests.
    ///
    /// `Err` means misuse (a slot out of range or still in flight, a bad
    /// length) or a failing ring; the outcome of the I/O itself always arrives
    /// as a [`Completion`].
    fn submit(&mut self, req: Request) -> io::Result<Submitted>;
    /// Waits until at least `min` completions are available (`min <=
    /// in_flight()`, else `InvalidInput`), moves all available ones into `out`.
    /// `reap(0, ..)` waits for nothing but still hands queued requests to the kernel.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;
    /// [`reap`](Self::reap), but waits at most about `wait` for the `min` completions: an
    /// open-loop client waits for its next completion only until its next request is due. By
    /// default it asks for completions without waiting every 50 us (at most that much later
    /// than the completion, which the latency then holds); io_uring waits in the kernel with a
    /// timeout instead (IORING_ENTER_EXT_ARG).
    fn reap_within(&mut self, min: usize, wait: std::time::Duration, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        let until = std::time::Instant::now() + wait;
        let had = out.len();
        loop {
            self.reap(0, out)?;
            let now = std::time::Instant::now();
            if out.len() - had >= min || now >= until {
                return Ok(());
            }
            std::thread::sleep((until - now).min(std::time::Duration::from_micros(50)));
        }
    }
    /// Requests submitted and not yet reaped.
    fn in_flight(&self) -> usize;
    /// Has `reap` ask for completions without sleeping for up to `budget`
    /// before it waits (a polling application's view: no wake-up from sleep
    /// in the latency, a CPU spent on asking). io_uring only; the others
    /// answer `Unsupported`.
    fn poll_completions(&mut self, budget: std::time::Duration) -> io::Result<()> {
        let _ = budget;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: completions cannot be polled; only io_uring can", self.kind()),
        ))
    }
    /// Hands prepared requests to the kernel once `requests` are queued
    /// (fio's `iodepth_batch_submit`) instead of the default group size; the
    /// group that fills the queue still goes in with the wait. io_uring only
    /// (the others issue each request in its own system call and answer
    /// `Unsupported`); 0 is `InvalidInput`.
    fn submit_batch(&mut self, requests: usize) -> io::Result<()> {
        let _ = requests;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: each request is its own system call; only io_uring submits in groups", self.kind()),
        ))
    }
    /// Makes completed writes durable. Requests still in flight are waited for
    /// first (their completions stay for the next `reap`), then the file is
    /// `fsync`ed, so every write submitted before the call is covered.
    fn flush_to_storage(&mut self) -> io::Result<()>;
    /// Waits for requests in flight, then closes the file and reports what a
    /// drop would hide: a failing `close`, or an error among completions that
    /// were never reaped (those completions are otherwise discarded).
    fn close(self: Box<Self>) -> io::Result<()>;
}

/// Opens a file for queued I/O with the given backend kind: io_uring natively
/// ([`UringFile`]), psync and sync through [`Immediate`] (depth 1 only). mmap
/// and stdio cannot queue and are refused with `InvalidInput`, as are a bad
/// depth and a zero `buffer_len`. Every slot gets a buffer of `buffer_len` bytes.
pub fn open_queued(
    kind: BackendKind,
    path: &Path,
    how: &OpenHow,
    depth: usize,
    buffer_len: usize,
) -> io::Result<Box<dyn QueuedFile>> {
    match kind {
        BackendKind::IoUring => Ok(Box::new(UringFile::open(path, how, depth, buffer_len, true)?)),
        BackendKind::Psync | BackendKind::Sync => {
            if depth != 1 {
                return Err(invalid(format!(
                    "backend {kind} completes each request before returning, so its queue depth must be 1 \
                     (asked for {depth}); use io_uring for deeper queues"
                )));
            }
            if kind == BackendKind::Psync {
                Ok(Box::new(Immediate::<PsyncFile>::open(path, how, buffer_len)?))
            } else {
                Ok(Box::new(Immediate::<SyncFile>::open(path, how, buffer_len)?))
            }
        }
        BackendKind::Mmap | BackendKind::Stdio => {
            Err(invalid(format!("backend {kind} cannot queue; use psync, sync or io_uring")))
        }
    }
}

/// A synchronous [`FileIo`] behind the queued seam: depth 1, one buffer.
/// `submit` performs the I/O at once and returns [`Submitted::Done`]; `reap`
/// hands back the stored completion. No system call is added or deferred, so
/// a psync run through `Immediate` measures what `PsyncFile` measures.
pub struct Immediate<F: FileIo> {
    file: F,
    buf: AlignedBuf,
    done: Option<Completion>,
}

impl<F: FileIo> Immediate<F> {
    /// Opens `path` with backend `F` and allocates one aligned buffer of `buffer_len` bytes.
    pub fn open(path: &Path, how: &OpenHow, buffer_len: usize) -> io::Result<Self> {
        Self::new(F::open(path, how)?, buffer_len)
    }

    /// Wraps a file that is already open.
    pub fn new(file: F, buffer_len: usize) -> io::Result<Self> {
        check_buffer_len(buffer_len)?;
        Ok(Immediate { file, buf: AlignedBuf::try_new(buffer_len, "the request buffer")?, done: None })
    }
}

impl<F: FileIo> QueuedFile for Immediate<F> {
    fn kind(&self) -> BackendKind {
        F::KIND
    }
    fn depth(&self) -> usize {
        1
    }
    fn describe(&self) -> String {
        format!("{} depth 1", F::KIND)
    }
    fn buffer(&mut self, slot: usize) -> &mut [u8] {
        assert!(slot == 0, "slot {slot} is out of range: {} has one slot (0)", F::KIND);
        self.buf.as_mut_slice()
    }
    fn submit(&mut self, req: Request) -> io::Result<Submitted> {
        check_request(&req, 1, self.buf.len())?;
        if self.done.is_some() {
            return Ok(Submitted::Busy);
        }
        let data = &mut self.buf.as_mut_slice()[..req.len];
        let outcome =
            if req.write { self.file.write_at(data, req.offset) } else { self.file.read_at(data, req.offset) };
        self.done = Some(Completion { slot: req.slot, result: outcome.map(|()| req.len) });
        Ok(Submitted::Done)
    }
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        check_reap(min, self.in_flight())?;
        out.extend(self.done.take());
        Ok(())
    }
    fn in_flight(&self) -> usize {
        usize::from(self.done.is_some())
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        self.file.flush_to_storage()
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        let Immediate { file, done, .. } = *self;
        file.close()?;
        match done {
            Some(Completion { result: Err(e), .. }) => Err(e),
            _ => Ok(()),
        }
    }
}

pub(crate) fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Refuses a zero buffer size (for any queued backend, in this crate or outside).
pub fn check_buffer_len(buffer_len: usize) -> io::Result<()> {
    if buffer_len == 0 {
        return Err(invalid("queued I/O needs a buffer of at least one byte per slot".to_string()));
    }
    Ok(())
}

/// Checks what any backend (in this crate or outside) can check before taking a request.
pub fn check_request(req: &Request, depth: usize, buffer_len: usize) -> io::Result<()> {
    if req.slot >= depth {
        return Err(invalid(format!("slot {} is out of range: the file has {depth} slots (0..{depth})", req.slot)));
    }
    if req.len == 0 || req.len > buffer_len {
        return Err(invalid(format!("request length {} must be between 1 and the buffer size {buffer_len}", req.len)));
    }
    Ok(())
}

/// Refuses a reap that waits for more completions than there are requests in flight.
pub fn check_reap(min: usize, in_flight: usize) -> io::Result<()> {
    if min > in_flight {
        return Err(invalid(format!(
            "reap asked to wait for {min} completions but only {in_flight} requests are in flight"
        )));
    }
    Ok(())
}
