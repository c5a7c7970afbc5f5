//! The per-client loop: an access order, a backend, a buffer, a stop flag.
//!
//! - [`Pass`]: one sweep over a file: which records ([`Order`]), in which
//!   direction ([`Direction`]), at which record size.
//! - [`run_pass`]: performs a pass on any
//!   [`FileIo`](iomatrix_backend::FileIo), generic over both the backend and
//!   the order, so neither is looked up per request.
//! - [`Moved`]: what a pass actually did (bytes, reads, writes); a suite
//!   checks it against what it asked for.
//! - [`Marks`]: bytes done at moments of a pass, so the figures can be cut
//!   at the instant the first client finished (stonewalling).
//! - [`run_pass_content`]: a pass whose writes carry stamped blocks and whose
//!   reads are checked ([`iomatrix_verify::Content`]); stamping and checking
//!   run between the requests, so inside a pass's timing.
//! - [`PassError`]: an I/O error with the request it happened at, or the stop
//!   flag (Ctrl-C, another client's failure).

use crate::order::{mixed_is_write, Order, RandomPermutation};
use iomatrix_backend::{AlignedBuf, RecordIo};
use iomatrix_stats::SeriesRecorder;
use iomatrix_verify::Content;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// At most this many marks per pass: a cut misses less than 1/1024 of a pass.
pub const MAX_MARKS: u64 = 1024;

/// Progress through a pass: (nanoseconds since the cell's common start,
/// bytes completed), taken after every `every`-th request and after the
/// last. The clock is read at most [`MAX_MARKS`] times per pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Marks {
    /// (ns since the cell's common start, bytes completed), in time order.
    pub points: Vec<(u64, u64)>,
}

impl Marks {
    /// Whether no mark was taken.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Bytes completed at or before `ns`: those of the last mark not later than it.
    pub fn bytes_by(&self, ns: u64) -> u64 {
        self.points.iter().take_while(|(t, _)| *t <= ns).last().map_or(0, |(_, b)| *b)
    }
}

/// Where [`run_pass_marked`] records its marks.
pub struct Marker<'a> {
    /// The cell's common start, which marks count from.
    pub origin: Instant,
    /// Where the marks go.
    pub marks: &'a mut Marks,
}

/// Where a timed pass puts its records over time: each record at its end, ns from `origin` (the
/// pass's start), with the time from the end of the record before (IOzone times no record on its
/// own: records run back to back, so one clock read per record gives each its time, the loop's
/// own few ns included).
pub struct Timeline<'a> {
    /// The pass's start.
    pub origin: Instant,
    /// Where the records go.
    pub series: &'a mut SeriesRecorder,
}

/// Whether a pass reads, writes, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Every request reads.
    Read,
    /// Every request writes.
    Write,
    /// Each request reads or writes by a seeded fair coin ([`mixed_is_write`]).
    Mixed {
        /// Fixes the coin's throws: the same seed mixes the same way.
        seed: u64,
    },
}

/// One pass over a file: `records` requests of `record` bytes in `order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Which record comes next.
    pub order: Order,
    /// Read, write, or mixed.
    pub direction: Direction,
    /// Bytes per request.
    pub record: u64,
    /// Requests in the pass (the file size over the record size).
    pub records: u64,
}

/// What a pass moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Moved {
    /// Bytes read and written.
    pub bytes: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
}

impl Moved {
    /// Requests of both kinds.
    pub fn ops(&self) -> u64 {
        self.reads + self.writes
    }
    /// Adds another pass's (or client's) counts.
    pub fn add(&mut self, other: Moved) {
        self.bytes += other.bytes;
        self.reads += other.reads;
        self.writes += other.writes;
    }
}

/// Why a pass ended before its last record.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// A request failed.
    #[error("{op} of {len} bytes at offset {offset}: {source}")]
    Io {
        /// Which: "read" or "write".
        op: &'static str,
        /// Where in the file (bytes).
        offset: u64,
        /// How many bytes it asked for.
        len: u64,
        /// The system's error.
        source: io::Error,
    },
    /// The stop flag was raised (a signal, or another client's failure).
    #[error("stopped")]
    Stopped,
}

/// Performs `pass` on `file`, checking `stop` before every request.
/// `buf` must hold at least `pass.record` bytes.
pub fn run_pass<F: RecordIo + ?Sized>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
) -> Result<Moved, PassError> {
    run_pass_inner(file, pass, buf, stop, (None, None), &mut Unchanged)
}

/// [`run_pass`], its records over time on `timeline`, and [`Marks`] of its progress where a
/// `marker` is given.
pub fn run_pass_timed<F: RecordIo + ?Sized>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    marker: Option<Marker<'_>>,
    timeline: Option<Timeline<'_>>,
) -> Result<Moved, PassError> {
    run_pass_inner(file, pass, buf, stop, (marker, timeline), &mut Unchanged)
}

/// [`run_pass`], also recording [`Marks`] of its progress.
pub fn run_pass_marked<F: RecordIo + ?Sized>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    marker: Marker<'_>,
) -> Result<Moved, PassError> {
    run_pass_inner(file, pass, buf, stop, (Some(marker), None), &mut Unchanged)
}

/// [`run_pass_timed`] whose writes put `content`'s stamped blocks and whose reads `content`
/// checks. The record must be a multiple of [`iomatrix_verify::UNIT`].
pub fn run_pass_content<F: RecordIo + ?Sized>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    (marker, timeline): (Option<Marker<'_>>, Option<Timeline<'_>>),
    content: &mut Content,
) -> Result<Moved, PassError> {
    run_pass_inner(file, pass, buf, stop, (marker, timeline), content)
}

/// What goes into a record before it is written and what is done with one
/// read: generic, so a plain pass pays nothing for verification.
trait Records {
    fn before_write(&mut self, record: &mut [u8], offset: u64);
    fn after_read(&mut self, record: &[u8], offset: u64);
}

/// The buffer as it is: one pseudo-random fill reused by every write.
struct Unchanged;

impl Records for Unchanged {
    #[inline(always)]
    fn before_write(&mut self, _: &mut [u8], _: u64) {}
    #[inline(always)]
    fn after_read(&mut self, _: &[u8], _: u64) {}
}

impl Records for Content {
    fn before_write(&mut self, record: &mut [u8], offset: u64) {
        self.stamp(record, offset);
    }
    fn after_read(&mut self, record: &[u8], offset: u64) {
        self.check(record, offset);
    }
}

/// A pass's marks and its timeline, each where asked.
type Watch<'a> = (Option<Marker<'a>>, Option<Timeline<'a>>);

fn run_pass_inner<F: RecordIo + ?Sized, C: Records>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    watch: Watch<'_>,
    content: &mut C,
) -> Result<Moved, PassError> {
    let n = pass.records;
    match pass.order {
        Order::Sequential => drive(file, pass, buf, stop, watch, content, 0..n),
        Order::Backward => drive(file, pass, buf, stop, watch, content, (0..n).rev()),
        Order::Random { seed } => drive(file, pass, buf, stop, watch, content, RandomPermutation::new(n, seed)),
        // Stride and SameRecord are cheap either way; reuse the order's iterator.
        order @ (Order::Stride(_) | Order::SameRecord) => drive(file, pass, buf, stop, watch, content, order.iter(n)),
    }
}

fn drive<F: RecordIo + ?Sized, C: Records>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    (mut marker, mut timeline): Watch<'_>,
    content: &mut C,
    records: impl Iterator<Item = u64>,
) -> Result<Moved, PassError> {
    // The end of the record before, ns from the pass's start: where the next record's time begins.
    let mut last_ns = 0u64;
    let len = pass.record as usize;
    let buf = &mut buf.as_mut_slice()[..len];
    let mut moved = Moved::default();
    // No marker: the modulo never hits (u64::MAX requests are never reached).
    let every = if marker.is_some() { pass.records.div_ceil(MAX_MARKS).max(1) } else { u64::MAX };
    for (i, record) in records.enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Err(PassError::Stopped);
        }
        let offset = record * pass.record;
        let write = match pass.direction {
            Direction::Read => false,
            Direction::Write => true,
            Direction::Mixed { seed } => mixed_is_write(seed, i as u64),
        };
        let (op, result) = if write {
            content.before_write(buf, offset);
            ("write", file.write_at(buf, offset))
        } else {
            ("read", file.read_at(buf, offset))
        };
        result.map_err(|source| PassError::Io { op, offset, len: len as u64, source })?;
        if !write {
            content.after_read(buf, offset);
        }
        moved.bytes += len as u64;
        if write {
            moved.writes += 1;
        } else {
            moved.reads += 1;
        }
        if let Some(t) = timeline.as_mut() {
            let now_ns = t.origin.elapsed().as_nanos() as u64;
            t.series.record(now_ns, now_ns.saturating_sub(last_ns), len as u64, write);
            last_ns = now_ns;
        }
        let done = i as u64 + 1;
        if done % every == 0 || done == pass.records {
            if let Some(m) = marker.as_mut() {
                m.marks.points.push((m.origin.elapsed().as_nanos() as u64, moved.bytes));
            }
        }
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_backend::{FileIo, OpenHow, PsyncFile};

    #[test]
    fn a_pass_moves_exactly_the_file_and_stops_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut buf = AlignedBuf::new(4096);
        let stop = AtomicBool::new(false);
        let mut f = PsyncFile::open(&path, &OpenHow::create(64 * 4096, false)).unwrap();
        let write = Pass { order: Order::Sequential, direction: Direction::Write, record: 4096, records: 64 };
        let m = run_pass(&mut f, &write, &mut buf, &stop).unwrap();
        assert_eq!(m, Moved { bytes: 64 * 4096, reads: 0, writes: 64 });
        let mixed = Pass { order: Order::Random { seed: 3 }, direction: Direction::Mixed { seed: 3 }, ..write };
        let m = run_pass(&mut f, &mixed, &mut buf, &stop).unwrap();
        assert_eq!(m.bytes, 64 * 4096);
        assert!(m.reads > 10 && m.writes > 10, "{m:?}");
        stop.store(true, Ordering::Relaxed);
        assert!(matches!(run_pass(&mut f, &write, &mut buf, &stop), Err(PassError::Stopped)));
    }

    #[test]
    fn marks_count_the_bytes_done_by_a_moment() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = PsyncFile::open(&dir.path().join("f"), &OpenHow::create(3000 * 512, false)).unwrap();
        let mut buf = AlignedBuf::new(512);
        let mut marks = Marks::default();
        let pass = Pass { order: Order::Sequential, direction: Direction::Write, record: 512, records: 3000 };
        let marker = Marker { origin: Instant::now(), marks: &mut marks };
        run_pass_marked(&mut f, &pass, &mut buf, &AtomicBool::new(false), marker).unwrap();
        // 3000 requests, a mark every 3: 1000 marks, the last one at the end.
        assert_eq!(marks.points.len(), 1000);
        assert_eq!(marks.points.last().unwrap().1, 3000 * 512);
        assert!(marks.points.windows(2).all(|w| w[0].0 <= w[1].0 && w[1].1 == w[0].1 + 3 * 512));
        let (t, b) = marks.points[499];
        assert_eq!(marks.bytes_by(t), b);
        assert_eq!(marks.bytes_by(u64::MAX), 3000 * 512);
    }

    #[test]
    fn reading_past_the_end_names_the_request() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let mut f = PsyncFile::open(&path, &OpenHow::read(4096, false)).unwrap();
        let mut buf = AlignedBuf::new(4096);
        let pass = Pass { order: Order::Sequential, direction: Direction::Read, record: 4096, records: 2 };
        let err = run_pass(&mut f, &pass, &mut buf, &AtomicBool::new(false)).unwrap_err();
        assert_eq!(err.to_string().split(':').next().unwrap(), "read of 4096 bytes at offset 4096");
    }

    #[test]
    fn a_content_pass_writes_stamped_blocks_and_checks_them_on_read() {
        use iomatrix_verify::{ContentSpec, UNIT};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut buf = AlignedBuf::new(2 * UNIT);
        let stop = AtomicBool::new(false);
        let mut content = Content::new(ContentSpec { run: 7, verify: true, ..ContentSpec::default() }, 0);
        let write =
            Pass { order: Order::Random { seed: 1 }, direction: Direction::Write, record: 2 * UNIT as u64, records: 8 };
        let mut f = PsyncFile::open(&path, &OpenHow::create(16 * UNIT as u64, false)).unwrap();
        run_pass_content(&mut f, &write, &mut buf, &stop, (None, None), &mut content).unwrap();
        f.close().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[5 * UNIT + 9] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let mut f = PsyncFile::open(&path, &OpenHow::read(16 * UNIT as u64, false)).unwrap();
        let read = Pass { direction: Direction::Read, order: Order::Backward, ..write };
        run_pass_content(&mut f, &read, &mut buf, &stop, (None, None), &mut content).unwrap();
        let tally = content.take_tally();
        assert_eq!((tally.checked_blocks, tally.wrong_data, tally.mismatches()), (16, 1, 1));
        assert_eq!(tally.examples[0].offset, 5 * UNIT as u64);
    }
}
