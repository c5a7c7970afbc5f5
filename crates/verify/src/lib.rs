//! What iomatrix writes when the data matters: stamped, checkable blocks.
//!
//! Written data is cut into blocks of [`UNIT`] bytes, aligned to file
//! offsets (so any record size that is a multiple of [`UNIT`] writes whole
//! blocks). Each block is two halves; each half opens with a [`Stamp`]:
//!
//! | bytes | field |
//! |-------|-------|
//! | 0..4   | magic `IOMV` |
//! | 4..8   | CRC-32 of the half's bytes 8.. |
//! | 8..16  | run stamp: random per run, so data of an earlier run is recognised |
//! | 16..24 | file id (a suite's client/file number) |
//! | 24..32 | the block's byte offset in its file |
//! | 32..40 | generation: which write put it there |
//!
//! The rest of each half is pseudo-random, seeded by the stamp (unique per
//! block and write, so neither compressible nor dedupable), with the last
//! `compressible`% of it zeros ([`ContentSpec::compressible`]).
//!
//! [`check_block`] classifies a block read back ([`Verdict`]): a half whose
//! magic or CRC fails is **wrong data**; two intact halves with different
//! stamps are **torn** (the block mixes two writes); an intact block of
//! another file or offset is **wrong offset** (a misdirected write or read);
//! an intact block of another run, or of a generation outside what the
//! reader expects, is **stale**. [`Tally`] counts them, with the first
//! [`MAX_EXAMPLES`] examples.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use iomatrix_random::{scramble, Generator};
use std::time::Instant;

/// The verify unit: blocks are this long, and records must be a multiple.
pub const UNIT: usize = 4096;
const HALF: usize = UNIT / 2;
const STAMP_LEN: usize = 40;
const MAGIC: [u8; 4] = *b"IOMV";
/// How many mismatches a tally keeps as examples.
pub const MAX_EXAMPLES: usize = 8;

/// Who wrote a block, where, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The run that wrote it ([`new_run_stamp`]): another run's block is stale.
    pub run: u64,
    /// The file it was written to (a suite's client or file number).
    pub file: u64,
    /// The byte offset it was written at.
    pub offset: u64,
    /// Which write of that place put it there, counting from 1.
    pub generation: u64,
}

/// What a reader expects of the block at `offset`: this run's stamp and file,
/// and a generation in `oldest..=newest` (the last write of the whole file
/// up to the latest write that may have touched the block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// This run's stamp.
    pub run: u64,
    /// The file being read (a suite's client or file number).
    pub file: u64,
    /// The block's byte offset in it.
    pub offset: u64,
    /// The oldest generation the block may carry: the last write of the whole file.
    pub oldest: u64,
    /// The newest generation the block may carry: the latest write that may have touched it.
    pub newest: u64,
}

/// How a block read back differs from what was written (see the crate's introduction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mismatch {
    /// A half's magic or CRC fails: the bytes are not what any write put there.
    WrongData,
    /// An intact block of another file or offset: a misdirected write or read.
    WrongOffset,
    /// An intact block of another run, or of a generation the reader does not expect: an
    /// old write came back.
    Stale,
    /// Two intact halves with different stamps: the block mixes two writes.
    Torn,
}

impl Mismatch {
    /// The name reports print: "wrong data", "wrong offset", "stale", "torn".
    pub fn name(self) -> &'static str {
        match self {
            Mismatch::WrongData => "wrong data",
            Mismatch::WrongOffset => "wrong offset",
            Mismatch::Stale => "stale",
            Mismatch::Torn => "torn",
        }
    }
}

/// What [`check_block`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The block is what the reader expects.
    Ok,
    /// The block is wrong in this way; the stamp it carried, when one survived.
    Bad(Mismatch, Option<Stamp>),
}

/// Fills one block (exactly [`UNIT`] bytes) as the write `stamp` puts it,
/// `compressible`% of each half's payload zeros.
///
/// # Panics
/// If `block` is not exactly [`UNIT`] bytes: the callers cut blocks of that size.
pub fn fill_block(block: &mut [u8], stamp: Stamp, compressible: u8) {
    assert_eq!(block.len(), UNIT, "a verify block is {UNIT} bytes");
    let payload = HALF - STAMP_LEN;
    let zeros = payload * compressible.min(100) as usize / 100;
    for (i, half) in block.chunks_exact_mut(HALF).enumerate() {
        half[..4].copy_from_slice(&MAGIC);
        half[8..16].copy_from_slice(&stamp.run.to_le_bytes());
        half[16..24].copy_from_slice(&stamp.file.to_le_bytes());
        half[24..32].copy_from_slice(&stamp.offset.to_le_bytes());
        half[32..40].copy_from_slice(&stamp.generation.to_le_bytes());
        let seed =
            scramble(stamp.run ^ scramble(stamp.file ^ scramble(stamp.offset ^ scramble(stamp.generation ^ i as u64))));
        let (random, zero) = half[STAMP_LEN..].split_at_mut(payload - zeros);
        Generator::seeded(seed).fill(random);
        zero.fill(0);
        let crc = crc32fast::hash(&half[8..]);
        half[4..8].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Classifies one block (exactly [`UNIT`] bytes) read back.
///
/// # Panics
/// If `block` is not exactly [`UNIT`] bytes: the callers cut blocks of that size.
pub fn check_block(block: &[u8], expect: &Expect) -> Verdict {
    assert_eq!(block.len(), UNIT, "a verify block is {UNIT} bytes");
    let first = intact_stamp(&block[..HALF]);
    let second = intact_stamp(&block[HALF..]);
    let stamp = match (first, second) {
        (Some(a), Some(b)) if a == b => a,
        (Some(a), Some(_)) => return Verdict::Bad(Mismatch::Torn, Some(a)),
        (a, b) => return Verdict::Bad(Mismatch::WrongData, a.or(b)),
    };
    if stamp.file != expect.file || stamp.offset != expect.offset {
        return Verdict::Bad(Mismatch::WrongOffset, Some(stamp));
    }
    if stamp.run != expect.run || !(expect.oldest..=expect.newest).contains(&stamp.generation) {
        return Verdict::Bad(Mismatch::Stale, Some(stamp));
    }
    Verdict::Ok
}

/// The half's stamp, if its magic and CRC hold.
fn intact_stamp(half: &[u8]) -> Option<Stamp> {
    if half[..4] != MAGIC || half[4..8] != crc32fast::hash(&half[8..]).to_le_bytes() {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(half[at..at + 8].try_into().expect("8 bytes"));
    Some(Stamp { run: word(8), file: word(16), offset: word(24), generation: word(32) })
}

/// One mismatch, as a cell reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Example {
    /// The file the block was read from.
    pub file: u64,
    /// The block's byte offset in that file.
    pub offset: u64,
    /// How it was wrong.
    pub kind: Mismatch,
    /// What the block carried, when a stamp survived.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub found: String,
}

/// Blocks checked and mismatches found by kind, with the first examples;
/// merged over clients by [`Tally::add`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Blocks read back and checked.
    pub checked_blocks: u64,
    /// Of those, blocks of wrong data ([`Mismatch::WrongData`]).
    pub wrong_data: u64,
    /// Blocks of another file or offset ([`Mismatch::WrongOffset`]).
    pub wrong_offset: u64,
    /// Blocks of another run or an unexpected generation ([`Mismatch::Stale`]).
    pub stale: u64,
    /// Blocks mixing two writes ([`Mismatch::Torn`]).
    pub torn: u64,
    /// The first [`MAX_EXAMPLES`] mismatches, for the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Blocks read but not checked: their read overlapped a write in flight
    /// (queue depth > 1), so either version, or a mix, is a right answer.
    #[serde(default)]
    pub unchecked_blocks: u64,
    /// Time spent stamping and checking, in nanoseconds.
    pub verify_ns: u64,
}

impl Tally {
    /// Mismatches of every kind together: 0 when the data came back intact.
    pub fn mismatches(&self) -> u64 {
        self.wrong_data + self.wrong_offset + self.stale + self.torn
    }

    /// Counts one mismatch, keeping it as an example while there is room.
    pub fn count(&mut self, kind: Mismatch, file: u64, offset: u64, found: Option<Stamp>) {
        *match kind {
            Mismatch::WrongData => &mut self.wrong_data,
            Mismatch::WrongOffset => &mut self.wrong_offset,
            Mismatch::Stale => &mut self.stale,
            Mismatch::Torn => &mut self.torn,
        } += 1;
        if self.examples.len() < MAX_EXAMPLES {
            let found = found.map_or(String::new(), |s| {
                format!("run {:016x} file {} offset {} generation {}", s.run, s.file, s.offset, s.generation)
            });
            self.examples.push(Example { file, offset, kind, found });
        }
    }

    /// The sum of some clients' tallies; None if none had one.
    pub fn sum<'a>(tallies: impl IntoIterator<Item = &'a Tally>) -> Option<Tally> {
        tallies.into_iter().fold(None, |all, t| {
            let mut all = all.unwrap_or_default();
            all.add(t);
            Some(all)
        })
    }

    /// Adds another tally (another client's): counts and times summed, its examples kept while
    /// there is room.
    pub fn add(&mut self, other: &Tally) {
        self.checked_blocks += other.checked_blocks;
        self.wrong_data += other.wrong_data;
        self.wrong_offset += other.wrong_offset;
        self.stale += other.stale;
        self.torn += other.torn;
        self.verify_ns += other.verify_ns;
        self.unchecked_blocks += other.unchecked_blocks;
        let room = MAX_EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.iter().take(room).cloned());
    }
}

/// What a suite asked for: stamped blocks (`verify` also checks reads), and
/// how compressible their payload is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ContentSpec {
    /// Random per run ([`new_run_stamp`]); 0 in a plan not yet started.
    pub run: u64,
    /// `--verify`: check every block read back, not only stamp the writes.
    pub verify: bool,
    /// 0..=100: % of each block's payload that is zeros.
    pub compressible: u8,
    /// Stamped blocks even without verifying (`--compressible` given, also 0).
    #[serde(default)]
    pub unique_blocks: bool,
}

impl ContentSpec {
    /// Whether written data is stamped blocks rather than one reused buffer.
    pub fn stamped(&self) -> bool {
        self.verify || self.unique_blocks || self.compressible > 0
    }
}

/// A fresh random run stamp (no RNG crate: the std hasher's random keys, the
/// clock and the process id).
pub fn new_run_stamp() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    h.write_u32(std::process::id());
    h.finish().max(1)
}

/// One file's writer and checker: stamps records before they are written and
/// checks records read back, counting into its [`Tally`] and timing itself.
#[derive(Debug, Clone)]
pub struct Content {
    /// What the suite asked for.
    pub spec: ContentSpec,
    /// This file's number in the stamps (a suite's client or file number).
    pub file: u64,
    /// The generation the next writes carry.
    pub generation: u64,
    /// The generation of the last write of the whole file: older is stale.
    pub oldest: u64,
    /// What the checks found so far, and the time they took.
    pub tally: Tally,
}

impl Content {
    /// The writer and checker of file `file`, at generation 1.
    pub fn new(spec: ContentSpec, file: u64) -> Content {
        Content { spec, file, generation: 1, oldest: 1, tally: Tally::default() }
    }

    /// Fills `record` (a multiple of [`UNIT`] long, at a multiple of [`UNIT`]) for a write at `offset`.
    pub fn stamp(&mut self, record: &mut [u8], offset: u64) {
        let started = Instant::now();
        for (i, block) in record.chunks_exact_mut(UNIT).enumerate() {
            let stamp = Stamp {
                run: self.spec.run,
                file: self.file,
                offset: offset + (i * UNIT) as u64,
                generation: self.generation,
            };
            fill_block(block, stamp, self.spec.compressible);
        }
        self.tally.verify_ns += started.elapsed().as_nanos() as u64;
    }

    /// Checks `record` read at `offset`, when verifying.
    pub fn check(&mut self, record: &[u8], offset: u64) {
        if !self.spec.verify {
            return;
        }
        let started = Instant::now();
        for (i, block) in record.chunks_exact(UNIT).enumerate() {
            let at = offset + (i * UNIT) as u64;
            let expect = Expect {
                run: self.spec.run,
                file: self.file,
                offset: at,
                oldest: self.oldest,
                newest: self.generation,
            };
            self.tally.checked_blocks += 1;
            if let Verdict::Bad(kind, found) = check_block(block, &expect) {
                self.tally.count(kind, self.file, at, found);
            }
        }
        self.tally.verify_ns += started.elapsed().as_nanos() as u64;
    }

    /// A read-modify-write of `record` at `offset`: checks what was read
    /// (generations `oldest..=generation`, when verifying), then stamps it
    /// anew as generation `generation + 1`, the write that follows.
    pub fn check_then_restamp(&mut self, record: &mut [u8], offset: u64) {
        self.check(record, offset);
        self.generation += 1;
        self.stamp(record, offset);
        self.generation -= 1;
    }

    /// Takes the tally so far (one per cell).
    pub fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }
}

/// What `--verify` and `--compressible` cannot take (the percentage itself is read by core's
/// `parse_compressible`, beside the front ends' other flags).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A record (in bytes) that is no whole number of stamped blocks.
    #[error(
        "record {0} bytes is not a multiple of the {UNIT}-byte verify block; --verify and --compressible need \
         records of {UNIT} bytes or a multiple"
    )]
    Record(u64),
}

/// Why a record size cannot carry stamped blocks, if it cannot.
pub fn check_record(record: u64) -> Result<(), VerifyError> {
    if record == 0 || record % UNIT as u64 != 0 {
        return Err(VerifyError::Record(record));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(offset: u64, generation: u64) -> Stamp {
        Stamp { run: 0xfeed, file: 3, offset, generation }
    }

    fn expect(offset: u64) -> Expect {
        Expect { run: 0xfeed, file: 3, offset, oldest: 2, newest: 4 }
    }

    fn block(s: Stamp) -> Vec<u8> {
        let mut b = vec![0u8; UNIT];
        fill_block(&mut b, s, 0);
        b
    }

    #[test]
    fn an_intact_block_of_an_expected_generation_is_ok() {
        for g in 2..=4 {
            assert_eq!(check_block(&block(stamp(8192, g)), &expect(8192)), Verdict::Ok);
        }
    }

    #[test]
    fn each_kind_of_damage_is_told_apart() {
        let kind = |b: &[u8], at: u64| match check_block(b, &expect(at)) {
            Verdict::Bad(k, _) => Some(k),
            Verdict::Ok => None,
        };
        let mut flipped = block(stamp(0, 3));
        flipped[3000] ^= 0x40;
        assert_eq!(kind(&flipped, 0), Some(Mismatch::WrongData));
        assert_eq!(kind(&vec![0u8; UNIT], 0), Some(Mismatch::WrongData));
        assert_eq!(kind(&block(stamp(4096, 3)), 0), Some(Mismatch::WrongOffset));
        assert_eq!(kind(&block(Stamp { file: 4, ..stamp(0, 3) }), 0), Some(Mismatch::WrongOffset));
        assert_eq!(kind(&block(stamp(0, 1)), 0), Some(Mismatch::Stale));
        assert_eq!(kind(&block(Stamp { run: 0xbeef, ..stamp(0, 3) }), 0), Some(Mismatch::Stale));
        let mut torn = block(stamp(0, 3));
        torn[HALF..].copy_from_slice(&block(stamp(0, 4))[HALF..]);
        assert_eq!(kind(&torn, 0), Some(Mismatch::Torn));
    }

    #[test]
    fn blocks_differ_and_compressible_payload_is_zeros() {
        let a = block(stamp(0, 3));
        let b = block(stamp(4096, 3));
        assert_ne!(a[STAMP_LEN..HALF], b[STAMP_LEN..HALF], "two blocks share a payload: dedupable");
        let mut half_zero = vec![0u8; UNIT];
        fill_block(&mut half_zero, stamp(0, 3), 50);
        let zeros = half_zero.iter().filter(|&&x| x == 0).count();
        assert!((UNIT * 48 / 100..UNIT * 52 / 100).contains(&zeros), "{zeros} zeros");
        assert_eq!(check_block(&half_zero, &expect(0)), Verdict::Ok);
    }

    #[test]
    fn a_content_counts_what_it_checks_and_merges() {
        let spec = ContentSpec { run: 0xfeed, verify: true, ..ContentSpec::default() };
        let mut c = Content::new(spec, 3);
        let mut rec = vec![0u8; 4 * UNIT];
        c.stamp(&mut rec, 8192);
        rec[UNIT + 100] ^= 1;
        c.check(&rec, 8192);
        let t = c.take_tally();
        assert_eq!((t.checked_blocks, t.wrong_data, t.mismatches()), (4, 1, 1));
        let example = &t.examples[0];
        assert_eq!((example.file, example.offset, example.kind), (3, 8192 + 4096, Mismatch::WrongData));
        // The intact half still says whose block it was.
        assert_eq!(example.found, "run 000000000000feed file 3 offset 12288 generation 1");
        let mut all = Tally::default();
        all.add(&t);
        all.add(&t);
        assert_eq!((all.checked_blocks, all.wrong_data, all.examples.len()), (8, 2, 2));
        assert!(check_record(6144).is_err() && check_record(8192).is_ok());
    }

    #[test]
    fn a_read_modify_write_checks_the_old_generation_and_writes_the_next() {
        let spec = ContentSpec { run: 0xfeed, verify: true, ..ContentSpec::default() };
        let mut c = Content::new(spec, 0);
        let mut rec = vec![0u8; 2 * UNIT];
        c.stamp(&mut rec, 0);
        c.check_then_restamp(&mut rec, 0);
        assert_eq!((c.tally.checked_blocks, c.tally.mismatches(), c.generation), (2, 0, 1));
        // What it wrote is generation 2: stale to a reader of generation 1, right for one of 2.
        c.check(&rec, 0);
        assert_eq!(c.tally.stale, 2);
        (c.oldest, c.generation) = (2, 2);
        c.check(&rec, 0);
        assert_eq!((c.tally.checked_blocks, c.tally.mismatches()), (6, 2));
    }
}
