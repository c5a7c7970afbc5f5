//! The per-client loop: an access order, a backend, a buffer, a stop flag.
//!
//! - [`Pass`]: one sweep over a file: which records ([`Order`]), in which
//!   direction ([`Direction`]), at which record size.
//! - [`run_pass`]: performs a pass on any [`FileIo`], generic over both the
//!   backend and the order, so neither is looked up per request.
//! - [`Moved`]: what a pass actually did (bytes, reads, writes); a suite
//!   checks it against what it asked for.
//! - [`PassError`]: an I/O error with the request it happened at, or the stop
//!   flag (Ctrl-C, another client's failure).

use iomatrix_backend::{AlignedBuf, FileIo};
pub use iomatrix_workload::Order;
use iomatrix_workload::{mixed_is_write, RandomPermutation};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    /// Each request reads or writes by a seeded fair coin ([`mixed_is_write`]).
    Mixed {
        seed: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    pub order: Order,
    pub direction: Direction,
    pub record: u64,
    pub records: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Moved {
    pub bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

impl Moved {
    pub fn ops(&self) -> u64 {
        self.reads + self.writes
    }
    pub fn add(&mut self, other: Moved) {
        self.bytes += other.bytes;
        self.reads += other.reads;
        self.writes += other.writes;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("{op} of {len} bytes at offset {offset}: {source}")]
    Io { op: &'static str, offset: u64, len: u64, source: io::Error },
    #[error("stopped")]
    Stopped,
}

/// Performs `pass` on `file`, checking `stop` before every request.
/// `buf` must hold at least `pass.record` bytes.
pub fn run_pass<F: FileIo>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
) -> Result<Moved, PassError> {
    let n = pass.records;
    match pass.order {
        Order::Sequential => drive(file, pass, buf, stop, 0..n),
        Order::Backward => drive(file, pass, buf, stop, (0..n).rev()),
        Order::Random { seed } => drive(file, pass, buf, stop, RandomPermutation::new(n, seed)),
        // Stride and SameRecord are cheap either way; reuse the workload's iterator.
        order @ (Order::Stride(_) | Order::SameRecord) => drive(file, pass, buf, stop, order.iter(n)),
    }
}

fn drive<F: FileIo>(
    file: &mut F,
    pass: &Pass,
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    records: impl Iterator<Item = u64>,
) -> Result<Moved, PassError> {
    let len = pass.record as usize;
    let buf = &mut buf.as_mut_slice()[..len];
    let mut moved = Moved::default();
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
        let (op, result) =
            if write { ("write", file.write_at(buf, offset)) } else { ("read", file.read_at(buf, offset)) };
        result.map_err(|source| PassError::Io { op, offset, len: len as u64, source })?;
        moved.bytes += len as u64;
        if write {
            moved.writes += 1;
        } else {
            moved.reads += 1;
        }
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_backend::{OpenHow, PsyncFile};

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
}
