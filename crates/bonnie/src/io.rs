//! Small pieces the tests are made of: seeds per purpose, the
//! per-character writer and reader (what C's stdio gives bonnie++), and a
//! close that reports errors.

use crate::place::DataFile;
use crate::BonnieError;
use iomatrix_random::scramble;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::fs::MetadataExt;
use std::sync::{Condvar, Mutex};

/// A seed for one purpose in one repeat, so that the tests do not share streams.
pub(crate) fn derive_seed(seed: u64, repeat: u32, purpose: u64) -> u64 {
    scramble(seed ^ scramble(u64::from(repeat) << 32 | purpose))
}

/// The buffer C's stdio gives a regular file: its `st_blksize` (glibc asks
/// `fstat`), kept between 512 bytes and 1 MiB; 4 KiB if the file system
/// does not say.
pub(crate) fn stdio_buffer_size(file: &File) -> usize {
    match file.metadata() {
        Ok(m) if m.blksize() > 0 => (m.blksize() as usize).clamp(512, 1024 * 1024),
        _ => 4096,
    }
}

/// `putc` into a `FILE`: each byte is one call; the buffer goes to the
/// kernel (or the server) with one write(2) (one request) whenever it is full, and at [`PutcWriter::finish`].
pub(crate) struct PutcWriter {
    file: Box<dyn DataFile>,
    buf: Vec<u8>,
    fill: usize,
    /// Bytes handed to the kernel so far (where a failing flush failed).
    pub(crate) flushed: u64,
}

impl PutcWriter {
    pub(crate) fn new(file: Box<dyn DataFile>, capacity: usize) -> PutcWriter {
        PutcWriter { file, buf: vec![0; capacity.max(1)], fill: 0, flushed: 0 }
    }

    /// One byte, one call: never inlined, as C's `putc` is a library call.
    #[inline(never)]
    pub(crate) fn putc(&mut self, byte: u8) -> io::Result<()> {
        if self.fill >= self.buf.len() {
            self.flush_buffer()?;
        }
        if let Some(slot) = self.buf.get_mut(self.fill) {
            *slot = byte;
            self.fill += 1;
        }
        Ok(())
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        let data = self.buf.get(..self.fill).unwrap_or(&[]);
        self.file.write_all(data)?;
        self.flushed += data.len() as u64;
        self.fill = 0;
        Ok(())
    }

    /// `fflush`: what is left in the buffer goes to the kernel.
    pub(crate) fn finish(mut self) -> io::Result<Box<dyn DataFile>> {
        self.flush_buffer()?;
        Ok(self.file)
    }
}

/// `getc` from a `FILE`: each byte is one call; the buffer is refilled
/// with one read(2) whenever it is empty.
pub(crate) struct GetcReader {
    file: Box<dyn DataFile>,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// Bytes taken from the kernel so far.
    pub(crate) filled: u64,
}

impl GetcReader {
    pub(crate) fn new(file: Box<dyn DataFile>, capacity: usize) -> GetcReader {
        GetcReader { file, buf: vec![0; capacity.max(1)], pos: 0, len: 0, filled: 0 }
    }

    /// One byte, one call; `None` at the end of the file.
    #[inline(never)]
    pub(crate) fn getc(&mut self) -> io::Result<Option<u8>> {
        if self.pos >= self.len {
            let n = loop {
                match self.file.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                return Ok(None);
            }
            self.filled += n as u64;
            self.pos = 0;
            self.len = n;
        }
        let byte = self.buf.get(self.pos).copied();
        self.pos += 1;
        Ok(byte)
    }

    pub(crate) fn into_file(self) -> Box<dyn DataFile> {
        self.file
    }
}

/// Closes a file and reports what `close(2)` says, which a plain drop
/// ignores (on NFS, write errors can surface only here).
pub(crate) fn close_checked(file: File) -> io::Result<()> {
    let fd = file.into_raw_fd();
    // SAFETY: `fd` was just released from a File we owned, so nobody else closes it.
    if unsafe { libc::close(fd) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Runs a test on the data file as bonnie++'s single-threaded process
/// runs it: on a thread of its own whose file table is its own
/// (`unshare(CLONE_FILES)`), with the file opened there. The per-char
/// tests in bonnie++'s style and the block write, rewrite and block read
/// run this way (the seekers are threads in bonnie++ too).
///
/// Why: in a process whose threads share one file table (iomatrix's: the
/// harness, the clients), every read(2)/write(2)/lseek(2) of a regular
/// file takes a reference on the file and its position lock (the kernel's
/// fdget_pos); a single-threaded process skips both. That is ~100 ns per
/// call here, 12-20% of a one-byte read(2) or write(2) (measured with the
/// same C loop single-threaded, with an idle second thread, and after
/// unshare) and a few % of a chunk's, a cost bonnie++ does not pay. Where
/// unshare is refused the test runs anyway, on the shared table.
///
/// Why here as well as in coord (whose local clients each unshare their
/// table on their own thread): an MPI rank drives its client on the
/// process's main thread, beside MPI's and the signal handler's threads,
/// and must not unshare there (descriptors MPI's own threads open later
/// could be ones its calls on the main thread use), so a test that wants
/// a table of its own takes a thread.
/// For a local client it is a thread more per test, outside the timing.
///
/// `open` runs on the new thread (untimed); then the caller's `ready`
/// (the clients' barrier) gives the clock's origin, and `body` runs the
/// timed part there. A `ready` that fails calls the test off.
pub(crate) fn on_own_file_table<T: Send>(
    ready: &mut dyn FnMut() -> Result<std::time::Instant, BonnieError>,
    open: impl FnOnce() -> Result<Box<dyn DataFile>, BonnieError> + Send,
    body: impl FnOnce(Box<dyn DataFile>, std::time::Instant) -> Result<Option<T>, BonnieError> + Send,
) -> Result<Option<T>, BonnieError> {
    let (opened_tx, opened_rx) = std::sync::mpsc::channel::<()>();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<Option<std::time::Instant>>();
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("bonnie-per-char".into())
            .spawn_scoped(scope, move || {
                // SAFETY: unshare only gives this thread a private copy of the file table; the
                // descriptors it opens from here on are its own, and it closes them itself.
                let _ = unsafe { libc::unshare(libc::CLONE_FILES) };
                let file = open()?;
                if opened_tx.send(()).is_err() {
                    return Ok(None);
                }
                match go_rx.recv() {
                    Ok(Some(origin)) => body(file, origin),
                    _ => Ok(None),
                }
            })
            .map_err(|e| BonnieError(format!("starting the per-char thread: {e}")))?;
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<Option<T>, BonnieError>>| {
            h.join().unwrap_or_else(|_| Err(BonnieError("the per-char thread panicked".into())))
        };
        if opened_rx.recv().is_err() {
            return join(helper); // the open failed: its error
        }
        match ready() {
            Ok(origin) => {
                let _ = go_tx.send(Some(origin));
                join(helper)
            }
            Err(e) => {
                let _ = go_tx.send(None);
                let _ = join(helper);
                Err(e)
            }
        }
    })
}

/// A starting gate for the seeker threads: they wait until the leader
/// opens it (all threads are running) or calls the run off.
pub(crate) struct Gate {
    state: Mutex<Option<bool>>,
    cv: Condvar,
}

impl Gate {
    pub(crate) fn new() -> Gate {
        Gate { state: Mutex::new(None), cv: Condvar::new() }
    }

    /// `true`: go; `false`: the leader called it off.
    pub(crate) fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.cv.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    pub(crate) fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(go);
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_repeat_and_purpose_has_its_own_seed() {
        // (seed, repeat, purpose): each differs from the first in one place.
        let seeds: Vec<u64> =
            [(1, 1, 1), (1, 2, 1), (1, 1, 2), (2, 1, 1)].iter().map(|&(s, r, p)| derive_seed(s, r, p)).collect();
        assert_eq!(seeds[0], derive_seed(1, 1, 1), "the same seed each time");
        assert_eq!(seeds.iter().collect::<std::collections::HashSet<_>>().len(), seeds.len(), "{seeds:?}");
    }

    #[test]
    fn putc_and_getc_round_trip_through_small_buffers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut w = PutcWriter::new(Box::new(File::create(&path).unwrap()), 7);
        for i in 0..100u8 {
            w.putc(i).unwrap();
        }
        assert_eq!(w.flushed, 98);
        w.finish().unwrap().close().unwrap();
        let mut r = GetcReader::new(Box::new(File::open(&path).unwrap()), 7);
        let mut got = Vec::new();
        while let Some(b) = r.getc().unwrap() {
            got.push(b);
        }
        assert_eq!(got, (0..100u8).collect::<Vec<_>>());
        assert_eq!(r.filled, 100);
    }
}
