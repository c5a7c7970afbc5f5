//! The claim table of a shared fileset: per file its state (absent,
//! present, busy) and what the engine knows of it (its name's generation,
//! size, stamps). A connection claims a file for one iteration with one
//! compare-and-swap (absent -> busy for a create, present -> busy for
//! anything else), works on it with no lock held, and releases it at the
//! iteration's end with its new state (deleted: absent, created: present)
//! and its record, so the next claimer sees the name a rename gave it.
//! Two connections never act on one file at once (filebench's busy flag).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

const ABSENT: u8 = 0;
const PRESENT: u8 = 1;
const BUSY: u8 = 2;

/// One shared fileset's files: state and record `T` of each.
pub struct ClaimTable<T> {
    states: Vec<AtomicU8>,
    /// Touched by the file's claimer between its claim and its release,
    /// and by the connections that hold a file open outside any claim
    /// (`keep_open` on a shared fileset: webserver's log).
    records: Vec<Mutex<T>>,
    /// filebench's rotation (`pick = "rotation"`), shared by every connection: where the search
    /// for the next absent [0] and present [1] file begins. Held while a pick searches and claims,
    /// as filebench holds its fileset's pick lock, so that no two picks take the same place.
    rotors: [Mutex<usize>; 2],
}

impl<T: Clone> ClaimTable<T> {
    /// Files with (present, record), all unclaimed.
    pub fn new(files: impl IntoIterator<Item = (bool, T)>) -> ClaimTable<T> {
        let (states, records) = files
            .into_iter()
            .map(|(present, t)| (AtomicU8::new(if present { PRESENT } else { ABSENT }), Mutex::new(t)))
            .unzip();
        ClaimTable { states, records, rotors: [Mutex::new(0), Mutex::new(0)] }
    }

    /// Claims the next unclaimed present (or absent) file from the rotation's place on, wrapping
    /// around once, and moves the rotation past it: its index and record. None when there is none.
    /// As filebench's fileset_pick in rotation: the next file in the state asked for after the last
    /// one taken, a busy one passed over for the one after it.
    pub fn claim_in_rotation(&self, present: bool) -> Option<(usize, T)> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let mut rotor = self.rotors[usize::from(present)].lock().unwrap_or_else(|e| e.into_inner());
        let from = *rotor % n;
        let found = (0..n).map(|k| (from + k) % n).find_map(|i| {
            if self.looks(i, present) {
                self.claim(i, present).map(|r| (i, r))
            } else {
                None
            }
        })?;
        *rotor = found.0 + 1;
        Some(found)
    }

    /// How many files the table tracks.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether it tracks no file.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// Whether file `i` is unclaimed and present (or absent): worth a claim.
    pub fn looks(&self, i: usize, present: bool) -> bool {
        self.states[i].load(Ordering::Relaxed) == if present { PRESENT } else { ABSENT }
    }

    /// Claims file `i` if it is unclaimed and present (or absent): its record.
    pub fn claim(&self, i: usize, present: bool) -> Option<T> {
        let from = if present { PRESENT } else { ABSENT };
        self.states[i].compare_exchange(from, BUSY, Ordering::Acquire, Ordering::Relaxed).ok()?;
        Some(self.records[i].lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    /// Releases file `i`, claimed by the caller, with its new record and state.
    pub fn release(&self, i: usize, record: T, present: bool) {
        *self.records[i].lock().unwrap_or_else(|e| e.into_inner()) = record;
        let was = self.states[i].swap(if present { PRESENT } else { ABSENT }, Ordering::Release);
        debug_assert_eq!(was, BUSY, "released a file that was not claimed");
    }

    /// Releases file `i`, claimed by the caller, leaving its record as it is (the caller changed
    /// nothing; holders of the file outside any claim may have).
    pub fn release_unchanged(&self, i: usize, present: bool) {
        let was = self.states[i].swap(if present { PRESENT } else { ABSENT }, Ordering::Release);
        debug_assert_eq!(was, BUSY, "released a file that was not claimed");
    }

    /// Changes file `i`'s record under its lock, for a connection that holds the file open outside
    /// any claim (its appends take their places at the file's end one after another).
    pub fn update_held<R>(&self, i: usize, change: impl FnOnce(&mut T) -> R) -> R {
        change(&mut self.records[i].lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Files present now (unclaimed ones; for checks after a run).
    pub fn present(&self) -> usize {
        self.states.iter().filter(|s| s.load(Ordering::Relaxed) == PRESENT).count()
    }

    /// Whether a claim for a present (or absent) file may still succeed: some file is in that
    /// state now, or claimed by another and so on its way back. Read after a failed claim, it
    /// tells "wait and claim again" from "no file fits": a file released between the claim and
    /// this look is in the state asked for, not lost.
    pub fn may_be_claimed(&self, present: bool) -> bool {
        let wanted = if present { PRESENT } else { ABSENT };
        self.states.iter().map(|s| s.load(Ordering::Relaxed)).any(|state| state == BUSY || state == wanted)
    }

    /// Files claimed now.
    pub fn busy(&self) -> usize {
        self.states.iter().filter(|s| s.load(Ordering::Relaxed) == BUSY).count()
    }

    /// File `i`'s record (for checks when nothing is claimed).
    pub fn record(&self, i: usize) -> T {
        self.records[i].lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, AtomicUsize};

    #[test]
    fn the_rotation_takes_the_next_file_in_the_state_asked_and_passes_over_busy_ones() {
        let t = ClaimTable::new([(true, 0u32), (false, 1), (true, 2), (true, 3), (false, 4)]);
        assert_eq!(t.claim_in_rotation(true).map(|c| c.0), Some(0));
        assert_eq!(t.claim_in_rotation(true).map(|c| c.0), Some(2), "1 is absent");
        t.release(0, 0, true);
        assert_eq!(t.claim_in_rotation(true).map(|c| c.0), Some(3));
        assert_eq!(t.claim_in_rotation(true).map(|c| c.0), Some(0), "wrapped around past the absent 4");
        assert_eq!(t.claim_in_rotation(true), None, "every present file is busy");
        // The absent files have a rotation of their own.
        assert_eq!(t.claim_in_rotation(false).map(|c| c.0), Some(1));
        assert_eq!(t.claim_in_rotation(false).map(|c| c.0), Some(4));
        assert_eq!(t.claim_in_rotation(false), None);
    }

    #[test]
    fn a_file_is_claimed_once_until_released() {
        let t = ClaimTable::new([(true, 7u32), (false, 0)]);
        assert_eq!(t.claim(0, false), None, "present: no create");
        assert_eq!(t.claim(0, true), Some(7));
        assert_eq!(t.claim(0, true), None, "busy");
        assert_eq!(t.busy(), 1);
        t.release(0, 8, false);
        assert_eq!((t.present(), t.busy()), (0, 0));
        assert_eq!(t.claim(0, true), None, "deleted");
        assert_eq!(t.claim(0, false), Some(8), "the record follows the file");
        t.release(0, 9, true);
        assert_eq!(t.record(0), 9);
    }

    #[test]
    fn a_claim_may_succeed_while_a_file_is_busy_or_back_in_the_state_asked() {
        let t = ClaimTable::new([(true, 0u32)]);
        assert!(t.may_be_claimed(true) && !t.may_be_claimed(false), "present: only a present claim");
        assert_eq!(t.claim(0, true), Some(0));
        assert_eq!(t.claim(0, true), None, "busy: this claim fails ...");
        assert!(t.may_be_claimed(true), "... but the file comes back");
        // Released between a failed claim and the look: the look still says to claim again.
        t.release(0, 1, true);
        assert!(t.may_be_claimed(true));
        assert_eq!(t.claim(0, true), Some(1));
        t.release(0, 2, false);
        assert!(!t.may_be_claimed(true), "deleted: no present file will come back");
        assert!(t.may_be_claimed(false));
    }

    /// Threads claim files at random and create, delete or rename them; no
    /// file is ever held by two at once, every record (a generation) is
    /// seen as its last releaser left it, and what is present at the end
    /// is what was there plus creates minus deletes.
    #[test]
    fn many_threads_never_share_a_file_and_the_counts_add_up() {
        const FILES: usize = 16;
        let t = ClaimTable::new((0..FILES).map(|i| (i % 2 == 0, 0u64)));
        let holders: Vec<AtomicUsize> = (0..FILES).map(|_| AtomicUsize::new(0)).collect();
        // The generation each file's record must hold, kept by its claimer.
        let gens: Vec<AtomicU64> = (0..FILES).map(|_| AtomicU64::new(0)).collect();
        let (creates, deletes, idle) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|s| {
            for th in 0..8u64 {
                let (t, holders, gens, creates, deletes, idle) = (&t, &holders, &gens, &creates, &deletes, &idle);
                s.spawn(move || {
                    let mut rng = iomatrix_random::Generator::seeded(th);
                    for _ in 0..20_000 {
                        let x = rng.next_u64();
                        let i = (x % FILES as u64) as usize;
                        let create = x & 0x100 == 0;
                        let Some(gen) = t.claim(i, !create) else {
                            idle.fetch_add(1, Ordering::Relaxed);
                            continue;
                        };
                        assert_eq!(holders[i].fetch_add(1, Ordering::SeqCst), 0, "file {i} held twice");
                        assert_eq!(gen, gens[i].load(Ordering::SeqCst), "file {i}: a stale record");
                        let present = if create {
                            creates.fetch_add(1, Ordering::Relaxed);
                            true
                        } else if x & 0x200 == 0 {
                            deletes.fetch_add(1, Ordering::Relaxed);
                            false
                        } else {
                            true // a rename: the generation moves on
                        };
                        gens[i].store(gen + 1, Ordering::SeqCst);
                        holders[i].fetch_sub(1, Ordering::SeqCst);
                        t.release(i, gen + 1, present);
                    }
                });
            }
        });
        assert_eq!(t.busy(), 0);
        let (c, d) = (creates.load(Ordering::Relaxed), deletes.load(Ordering::Relaxed));
        assert_eq!(t.present() as u64, FILES as u64 / 2 + c - d);
        assert!(c > 1000 && d > 1000 && idle.load(Ordering::Relaxed) > 0, "{c} {d}");
        for (i, g) in gens.iter().enumerate() {
            assert_eq!(t.record(i), g.load(Ordering::SeqCst));
        }
    }
}
