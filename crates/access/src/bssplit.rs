//! Mixed block sizes by share (`--bssplit`, fio's `bssplit`): each request's size drawn from a
//! list of sizes and the share of requests each takes (`4k/10:64k/50:32k/40`), one list for reads
//! and writes or one each (`READS,WRITES`). The draw is the client's own seeded generator's, so a
//! plan's requests are the same each time it runs; the cell stores how many requests of each size
//! it made.
//!
//! The shares follow fio 3.33's rule (its options.c): a size given without a share takes an even
//! part of what the given shares leave (here the last such size also takes what the even parts
//! leave over, so the shares add up to 100 as fio's draw does: it gives every draw past the last
//! share to its last size); fio refuses shares over 100 where more than one size has none. Where the
//! shares then do not add up to 100, fio runs anyway (the rest going to its last size, or the
//! later sizes getting less); iomatrix refuses that, so nothing is quietly given another share.

use iomatrix_core::ByteSize;
use serde::{Deserialize, Serialize};

/// fio's most sizes in one list (its BSSPLIT_MAX).
pub const MOST_SIZES: usize = 64;

/// One size and the share of requests it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    /// The request's size.
    pub size: ByteSize,
    /// Percent of the direction's requests, 1..=100.
    pub percent: u8,
}

/// The sizes of reads and of writes with their shares; both the same list where one was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSplit {
    /// Sizes of reads.
    pub reads: Vec<Share>,
    /// Sizes of writes.
    pub writes: Vec<Share>,
}

impl BlockSplit {
    /// Reads fio's `bssplit` value: `SIZE/PCT:SIZE/PCT...`, or `READS,WRITES`.
    pub fn parse(text: &str) -> Result<BlockSplit, String> {
        let lists: Vec<&str> = text.split(',').map(str::trim).collect();
        match lists.as_slice() {
            [one] => {
                let shares = shares(one)?;
                Ok(BlockSplit { reads: shares.clone(), writes: shares })
            }
            [reads, writes] => Ok(BlockSplit { reads: shares(reads)?, writes: shares(writes)? }),
            _ => Err(format!(
                "'{text}': give one list for reads and writes, or READS,WRITES (a third list is fio's trims, which \
                 iomatrix does not issue)"
            )),
        }
    }

    /// The largest size of either direction: what each request buffer holds.
    pub fn largest(&self) -> ByteSize {
        self.reads.iter().chain(&self.writes).map(|s| s.size).max().unwrap_or(ByteSize(0))
    }

    /// The smallest size of either direction: the offsets' granularity (fio's default blockalign).
    pub fn smallest(&self) -> ByteSize {
        self.reads.iter().chain(&self.writes).map(|s| s.size).min().unwrap_or(ByteSize(0))
    }

    /// Every size of either direction, each once, smallest first.
    pub fn sizes(&self) -> Vec<ByteSize> {
        let mut sizes: Vec<ByteSize> = self.reads.iter().chain(&self.writes).map(|s| s.size).collect();
        sizes.sort();
        sizes.dedup();
        sizes
    }

    /// `4k/10:64k/50:32k/40`, or the two lists with a comma where they differ.
    pub fn describe(&self) -> String {
        let list =
            |shares: &[Share]| shares.iter().map(|s| format!("{}/{}", s.size, s.percent)).collect::<Vec<_>>().join(":");
        if self.reads == self.writes {
            list(&self.reads)
        } else {
            format!("{},{}", list(&self.reads), list(&self.writes))
        }
    }

    /// The direction's shares as running totals (each size with the share up to and with it), for
    /// a draw of 0..100.
    pub fn thresholds(&self, write: bool) -> Vec<(u64, u64)> {
        let mut total = 0u64;
        let shares = if write { &self.writes } else { &self.reads };
        shares
            .iter()
            .map(|s| {
                total += u64::from(s.percent);
                (total, s.size.bytes())
            })
            .collect()
    }
}

/// One direction's list, by fio's rule (the module's comment).
fn shares(text: &str) -> Result<Vec<Share>, String> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    if text.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return Err(format!("'{text}': give SIZE/PERCENT entries separated by ':', e.g. 4k/10:64k/90"));
    }
    if parts.len() > MOST_SIZES {
        return Err(format!("'{text}': {} sizes; fio takes at most {MOST_SIZES}", parts.len()));
    }
    let mut given: Vec<(ByteSize, Option<u64>)> = Vec::new();
    for part in parts {
        let (size, share) = match part.split_once('/') {
            Some((s, p)) => (s.trim(), Some(p.trim())),
            None => (part, None),
        };
        let size = crate::cli::front::options::size(size)?;
        if size.bytes() == 0 {
            return Err(format!("'{part}': a block must hold at least one byte"));
        }
        if given.iter().any(|(s, _)| *s == size) {
            return Err(format!("'{text}': {size} is given twice; give each size once, with its whole share"));
        }
        let share = share
            .map(|p| p.parse::<u64>().map_err(|_| format!("'{part}': the share '{p}' is not a whole percentage")))
            .transpose()?;
        given.push((size, share));
    }
    let sum: u64 = given.iter().filter_map(|(_, p)| *p).sum();
    let missing = given.iter().filter(|(_, p)| p.is_none()).count() as u64;
    if sum > 100 && missing > 1 {
        return Err(format!("'{text}': the shares add up to {sum}%, more than 100 (fio refuses this too)"));
    }
    // fio: the sizes without a share split what is left evenly (one alone takes it all).
    let even = 100u64.saturating_sub(sum).checked_div(missing).unwrap_or(0);
    let last_missing = given.iter().rposition(|(_, p)| p.is_none());
    let filled: Vec<(ByteSize, u64)> = given
        .iter()
        .enumerate()
        .map(|(i, (size, p))| match p {
            Some(p) => (*size, *p),
            // The last size without a share takes what the even parts leave.
            None if Some(i) == last_missing => (*size, 100u64.saturating_sub(sum + even * (missing - 1))),
            None => (*size, even),
        })
        .collect();
    let total: u64 = filled.iter().map(|(_, p)| p).sum();
    if total != 100 {
        return Err(format!(
            "'{text}': the shares add up to {total}%, not 100. fio would run it anyway, giving {} to its last size; \
             iomatrix gives no share that was not asked for: make them add up to 100, or leave a size's share out \
             for it to take the rest",
            if total < 100 { "the rest" } else { "less than asked" }
        ));
    }
    if let Some((size, _)) = filled.iter().find(|(_, p)| *p == 0) {
        return Err(format!("'{text}': {size} takes no request (a share of 0); leave it out"));
    }
    Ok(filled.into_iter().map(|(size, p)| Share { size, percent: p as u8 }).collect())
}

/// How many requests of each size a cell made, reads and writes apart, merged over clients.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeCounts {
    /// (size in bytes, reads, writes), smallest size first.
    pub sizes: Vec<(u64, u64, u64)>,
}

impl SizeCounts {
    /// Counts of 0 for each of `sizes`.
    pub fn new(sizes: &[ByteSize]) -> SizeCounts {
        SizeCounts { sizes: sizes.iter().map(|s| (s.bytes(), 0, 0)).collect() }
    }

    /// One request of `bs` bytes done.
    #[inline]
    pub fn count(&mut self, write: bool, bs: u64) {
        if let Some(entry) = self.sizes.iter_mut().find(|(size, _, _)| *size == bs) {
            if write {
                entry.2 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }

    /// Adds another client's counts.
    pub fn merge(&mut self, other: &SizeCounts) {
        for &(size, reads, writes) in &other.sizes {
            match self.sizes.iter_mut().find(|(s, _, _)| *s == size) {
                Some(entry) => {
                    entry.1 += reads;
                    entry.2 += writes;
                }
                None => self.sizes.push((size, reads, writes)),
            }
        }
        self.sizes.sort_unstable();
    }

    /// Each size's share of the direction's requests, in percent (0 where there were none).
    pub fn shares(&self, write: bool) -> Vec<(u64, f64)> {
        let count = |e: &(u64, u64, u64)| if write { e.2 } else { e.1 };
        let total: u64 = self.sizes.iter().map(count).sum();
        self.sizes
            .iter()
            .map(|e| (e.0, if total == 0 { 0.0 } else { 100.0 * count(e) as f64 / total as f64 }))
            .collect()
    }
}

/// The split a cell ran and what it made of it, as the cell stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitDone {
    /// The shares asked.
    pub split: BlockSplit,
    /// The requests made of each size.
    pub counts: SizeCounts,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes_and_shares(split: &[Share]) -> Vec<(u64, u8)> {
        split.iter().map(|s| (s.size.bytes(), s.percent)).collect()
    }

    #[test]
    fn shares_follow_fios_rule() {
        let s = BlockSplit::parse("4k/10:64k/50:32k/40").unwrap();
        assert_eq!(sizes_and_shares(&s.reads), vec![(4096, 10), (65536, 50), (32768, 40)]);
        assert_eq!(s.reads, s.writes);
        assert_eq!((s.smallest(), s.largest()), (ByteSize(4096), ByteSize(65536)));
        assert_eq!(s.describe(), "4k/10:64k/50:32k/40");
        // Sizes without a share split the rest; the last takes what the even parts leave.
        let s = BlockSplit::parse("4k:8k:16k").unwrap();
        assert_eq!(sizes_and_shares(&s.reads), vec![(4096, 33), (8192, 33), (16384, 34)]);
        let s = BlockSplit::parse("4k/50:8k,16k/100").unwrap();
        assert_eq!(sizes_and_shares(&s.reads), vec![(4096, 50), (8192, 50)]);
        assert_eq!(sizes_and_shares(&s.writes), vec![(16384, 100)]);
        assert_eq!(s.thresholds(false), vec![(50, 4096), (100, 8192)]);
    }

    #[test]
    fn shares_not_adding_up_to_100_are_refused() {
        for (text, says) in [
            ("4k/10:64k/50", "add up to 60%, not 100"),
            ("4k/60:64k/50", "add up to 110%, not 100"),
            ("4k/60:64k/50:8k:16k", "more than 100 (fio refuses"),
            ("4k/100:8k", "takes no request"),
            ("4k/50:4k/50", "given twice"),
            ("4k/ten", "not a whole percentage"),
            ("4k/50::8k/50", "SIZE/PERCENT"),
            ("4k,4k,4k", "trims"),
        ] {
            let e = BlockSplit::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn counts_merge_by_size_and_give_shares() {
        let mut a = SizeCounts::new(&[ByteSize(4096), ByteSize(8192)]);
        a.count(false, 4096);
        a.count(false, 8192);
        a.count(true, 8192);
        let mut b = SizeCounts::new(&[ByteSize(4096), ByteSize(8192)]);
        b.count(false, 4096);
        b.count(false, 4096);
        a.merge(&b);
        assert_eq!(a.sizes, vec![(4096, 3, 0), (8192, 1, 1)]);
        assert_eq!(a.shares(false), vec![(4096, 75.0), (8192, 25.0)]);
        assert_eq!(a.shares(true), vec![(4096, 0.0), (8192, 100.0)]);
    }
}
