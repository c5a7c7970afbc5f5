//! `--steady-state` while a cell runs: each client hands its whole intervals to one watch, which
//! adds the clients' counts interval by interval and feeds them to the rule
//! ([`iomatrix_stats::steady::Judge`]); when the rule is met every client stops issuing, and the
//! cell ends as a cell at its limit ends (the requests in flight complete).
//!
//! The clients are threads of this process. MPI ranks on other hosts share no counts while a cell
//! runs: under MPI each rank's watch judges its own client alone and stops it when its rule is
//! met ([`SteadyWatch::apart`]), as fio judges and stops each job apart without group_reporting;
//! the rank's verdict goes to the leader with its figures. An interval is judged once every client has
//! handed it over; a client hands over interval k at its first completion past k's end (or at the
//! end of its loop), counted as the series counts it (the interval that holds the completion's
//! time), so the window judged is the stored series' intervals.

use iomatrix_stats::steady::{Judge, SteadyRule, SteadyVerdict};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The run condition's sentence of `rule` judged over intervals of `interval_ns`.
pub fn describe(rule: &SteadyRule, interval_ns: u64) -> String {
    use crate::render::seconds;
    let ramp = match rule.ramp_ns {
        0 => String::new(),
        ns => format!(" after a ramp of {} from the timed part's start", seconds(ns)),
    };
    let how = match rule.criterion {
        iomatrix_stats::steady::Criterion::Fio { .. } => format!(
            "fio 3.33's steadystate={}, ss_dur={}: every whole {} interval judged once the window is full",
            rule.criterion,
            seconds(rule.window_ns),
            seconds(interval_ns)
        ),
        iomatrix_stats::steady::Criterion::Snia { .. } => format!(
            "SNIA PTS's rule: 5 rounds of {} each, range within 20% and the best-fit line's excursion within 10% of \
             their mean, judged at every round's end",
            seconds(rule.window_ns / 5)
        ),
    };
    format!(
        "{} over {}{ramp} ({how}), the clients' figures added (under mpirun each rank's own, judged apart); a \
         cell ends once it is met, else runs its limit and says it was not",
        rule.criterion,
        seconds(rule.window_ns)
    )
}

/// No cell has met its rule.
const NONE: usize = usize::MAX;

/// The run's watch: the rule, and the cell under way's intervals.
pub struct SteadyWatch {
    rule: Option<SteadyRule>,
    interval_ns: u64,
    clients: usize,
    cell: Mutex<Option<CellWatch>>,
    /// The index of the cell whose rule was met (each cell's index is its own, repeats too).
    attained: AtomicUsize,
    /// Under MPI: this rank's one client is judged alone, and its verdict is its own.
    apart: bool,
}

/// One cell's intervals not yet judged, and its judge.
struct CellWatch {
    cell: usize,
    /// The number of the first interval in `pending`.
    first: usize,
    /// Per interval: the clients that handed it over, and their requests and bytes.
    pending: VecDeque<(usize, u64, u64)>,
    judge: Judge,
}

impl SteadyWatch {
    /// The watch of a run of `clients` clients with `rule` (None: nothing is watched) over
    /// intervals of `interval_ns`.
    pub fn new(rule: Option<SteadyRule>, interval_ns: u64, clients: usize) -> SteadyWatch {
        SteadyWatch {
            rule,
            interval_ns,
            clients,
            cell: Mutex::new(None),
            attained: AtomicUsize::new(NONE),
            apart: false,
        }
    }

    /// The watch of one MPI rank's client, judged apart from the other ranks' (see the module).
    pub fn apart(rule: Option<SteadyRule>, interval_ns: u64) -> SteadyWatch {
        SteadyWatch { apart: true, ..SteadyWatch::new(rule, interval_ns, 1) }
    }

    /// Under MPI, this rank's verdict of cell `cell`, which its figures carry to the leader; None
    /// with threads (the leader's watch judged them together) or without a rule.
    pub fn own_verdict(&self, cell: usize) -> Option<SteadyVerdict> {
        self.apart.then(|| self.verdict(cell)).flatten()
    }

    /// A client's feed for the timed part of cell `cell`; None without a rule.
    pub fn feed(&self, cell: usize) -> Option<SteadyFeed<'_>> {
        self.rule.is_some().then_some(SteadyFeed {
            watch: self,
            cell,
            interval: 0,
            end_ns: self.interval_ns,
            ops: 0,
            bytes: 0,
        })
    }

    /// Whether cell `cell` met its rule: its clients stop issuing.
    #[inline]
    pub fn reached(&self, cell: usize) -> bool {
        self.rule.is_some() && self.attained.load(Ordering::Relaxed) == cell
    }

    /// The verdict of cell `cell`, once its clients are gathered (the leader handles a cell
    /// before any client starts the next); None without a rule.
    pub fn verdict(&self, cell: usize) -> Option<SteadyVerdict> {
        let rule = self.rule?;
        let held = self.cell.lock().unwrap_or_else(|p| p.into_inner());
        Some(match held.as_ref().filter(|w| w.cell == cell) {
            Some(w) => w.judge.verdict().clone(),
            // No client handed over a whole interval: nothing was judged.
            None => Judge::new(rule, self.interval_ns).verdict().clone(),
        })
    }

    /// A client hands over its interval `k` of cell `cell`: `ops` requests and `bytes` bytes.
    fn hand_over(&self, cell: usize, k: usize, ops: u64, bytes: u64) {
        let Some(rule) = self.rule else { return };
        let mut held = self.cell.lock().unwrap_or_else(|p| p.into_inner());
        if held.as_ref().is_none_or(|w| w.cell != cell) {
            let judge = Judge::new(rule, self.interval_ns);
            *held = Some(CellWatch { cell, first: 0, pending: VecDeque::new(), judge });
        }
        let w = held.as_mut().expect("set above");
        // Each client hands over its intervals in order, and one is judged only once all have.
        let Some(at) = k.checked_sub(w.first) else { return };
        if w.pending.len() <= at {
            w.pending.resize(at + 1, (0, 0, 0));
        }
        let slot = &mut w.pending[at];
        *slot = (slot.0 + 1, slot.1 + ops, slot.2 + bytes);
        while w.pending.front().is_some_and(|&(handed, _, _)| handed >= self.clients) {
            let (_, ops, bytes) = w.pending.pop_front().expect("looked at above");
            w.first += 1;
            if w.judge.push(ops, bytes) {
                self.attained.store(cell, Ordering::Relaxed);
            }
        }
    }
}

/// One client's intervals of one cell's timed part, handed to the watch as each closes.
pub struct SteadyFeed<'a> {
    watch: &'a SteadyWatch,
    cell: usize,
    /// The interval under way, from 0, and where it ends (ns since the loop's start).
    interval: usize,
    end_ns: u64,
    ops: u64,
    bytes: u64,
}

impl SteadyFeed<'_> {
    /// A completion of `bytes` at `now_ns`: the intervals it is past handed over first.
    #[inline]
    pub fn completed(&mut self, now_ns: u64, bytes: u64) {
        if now_ns >= self.end_ns {
            self.close_until(now_ns);
        }
        self.ops += 1;
        self.bytes += bytes;
    }

    /// Hands over every interval that ended at or before `now_ns` (an interval with no completion
    /// as zero): at a completion past them, and at the loop's end (the part-interval under way
    /// then is no whole interval: it is not judged).
    #[cold]
    pub fn close_until(&mut self, now_ns: u64) {
        while now_ns >= self.end_ns {
            self.watch.hand_over(self.cell, self.interval, self.ops, self.bytes);
            self.interval += 1;
            self.end_ns += self.watch.interval_ns;
            (self.ops, self.bytes) = (0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_stats::steady::Criterion;

    fn rule(text: &str, window_s: u64) -> SteadyRule {
        SteadyRule { criterion: Criterion::parse(text).unwrap(), window_ns: window_s * SECOND, ramp_ns: 0 }
    }

    const SECOND: u64 = 1_000_000_000;

    /// `n` completions spread over second `k`.
    fn second(feed: &mut SteadyFeed<'_>, k: u64, n: u64) {
        for i in 0..n {
            feed.completed(k * SECOND + i * SECOND / n, 4096);
        }
    }

    #[test]
    fn two_clients_are_judged_together_only_once_both_handed_an_interval_over() {
        // iops:10% over 2 s, two clients: client 0 does 1,000 a second, client 1 600 then 1,000.
        // Interval 0 sums 1,600, interval 1 2,000: [1600, 2000] is 200 / 1800 = 11.1% off its mean
        // (not met); interval 2, [2000, 2000]: 0%, met once client 1 handed it over.
        let watch = SteadyWatch::new(Some(rule("iops:10%", 2)), SECOND, 2);
        let (mut a, mut b) = (watch.feed(3).unwrap(), watch.feed(3).unwrap());
        for k in 0..3 {
            second(&mut a, k, 1_000);
        }
        a.close_until(3 * SECOND);
        assert!(!watch.reached(3), "client 1 has handed nothing over");
        second(&mut b, 0, 600);
        second(&mut b, 1, 1_000);
        second(&mut b, 2, 1_000);
        assert!(!watch.reached(3), "interval 2 of client 1 is still under way");
        b.close_until(3 * SECOND);
        assert!(watch.reached(3));
        assert!(!watch.reached(4), "only that cell");
        let v = watch.verdict(3).unwrap();
        assert_eq!(v.window.iter().map(|s| s.iops).collect::<Vec<_>>(), [2000, 2000]);
        assert_eq!(v.attained_at_ns, Some(3 * SECOND));
        assert_eq!(v.windows_judged, 2);
        // A cell nobody handed anything over: not attained, nothing judged.
        let none = watch.verdict(5).unwrap();
        assert_eq!((none.attained, none.windows_judged), (false, 0));
    }

    #[test]
    fn without_a_rule_nothing_is_fed_or_judged() {
        let watch = SteadyWatch::new(None, SECOND, 1);
        assert!(watch.feed(0).is_none());
        assert!(!watch.reached(NONE));
        assert!(watch.verdict(0).is_none());
    }
}
