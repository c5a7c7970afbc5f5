//! Progress on stderr: a bar with cells done / total and ETA on a terminal,
//! one plain line per cell otherwise (logs, CI, pipes). The ETA comes from
//! the work the plan gives each cell ([`CellWork`]: a duration, or bytes at
//! the rate the run has shown so far), not from the count of cells
//! ([`Estimator`]).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Live figures of the running cell.
#[derive(Clone)]
pub struct LiveLine {
    bar: Option<ProgressBar>,
    /// Without a terminal: when the last plain line went out.
    printed: Arc<Mutex<Option<Instant>>>,
}

impl LiveLine {
    /// Without a terminal a cell's live figures go out every this often.
    const PLAIN_EVERY: Duration = Duration::from_secs(5);

    pub fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
            return;
        }
        let mut printed = self.printed.lock().unwrap_or_else(|e| e.into_inner());
        // The first figures of a run are often from its first instants: wait one interval.
        let last = *printed.get_or_insert_with(Instant::now);
        if last.elapsed() >= Self::PLAIN_EVERY {
            *printed = Some(Instant::now());
            let _ = writeln!(std::io::stderr(), "  live: {message}");
        }
    }
}

/// The work a cell's plan gives it, for the ETA.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellWork {
    /// It lasts this long (a time-based access cell, a personality's timed phase).
    Timed(Duration),
    /// It moves this many bytes, at a rate the run's earlier byte cells show.
    Bytes(u64),
    /// Its plan does not say: as long as the run's other such cells took on average.
    Unknown,
}

/// What a cell costs beyond its bytes (its barrier, opening and closing its file, storing it:
/// a few milliseconds), counted as the bytes the page cache moves in that time: without it a run
/// of many small cells, whose time is mostly that cost, would take its small cells' rate for the
/// big ones' and promise hours for seconds. On slower storage the rate the run shows scales it.
const PER_CELL_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// The seconds a kind of cell has taken per unit of its work (a planned second, a byte, a cell).
/// The run's first cell of the kind also carries the run's one-time costs (threads started, the
/// first file made): it counts only until a second cell of the kind has finished.
#[derive(Default)]
struct Tally {
    first: Option<(f64, f64)>,
    /// Units and seconds of every later cell.
    units: f64,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, units: f64, seconds: f64) {
        if self.first.is_none() {
            self.first = Some((units, seconds));
        } else {
            self.units += units;
            self.seconds += seconds;
        }
    }

    /// Seconds per unit; None until a cell of the kind has finished.
    fn per_unit(&self) -> Option<f64> {
        let (units, seconds) = if self.units > 0.0 { (self.units, self.seconds) } else { self.first? };
        (units > 0.0).then(|| seconds / units)
    }
}

/// The time left of a run, from its cells' planned work and what the finished cells took. While
/// nothing runs slower than its estimate the time left only falls: a cell's own estimate is
/// counted down as it runs and stops at zero, and a finished cell changes the others' estimates
/// only through the rate it showed (slower than estimated raises them, faster lowers them).
pub struct Estimator {
    /// Every planned cell's work, in order.
    work: Vec<CellWork>,
    done: usize,
    /// Timed cells: real seconds per planned second (setup and the last requests make a cell a
    /// little longer than planned).
    timed: Tally,
    /// Byte cells: seconds per byte (with [`PER_CELL_BYTES`]).
    bytes: Tally,
    /// Cells of unknown work: seconds per cell.
    unknown: Tally,
    /// When the cell under way began.
    cell_began: Instant,
}

impl Estimator {
    pub fn new(work: Vec<CellWork>, now: Instant) -> Estimator {
        Estimator {
            work,
            done: 0,
            timed: Tally::default(),
            bytes: Tally::default(),
            unknown: Tally::default(),
            cell_began: now,
        }
    }

    /// More cells planned (noisy cells measured again).
    pub fn add(&mut self, more: impl IntoIterator<Item = CellWork>) {
        self.work.extend(more);
    }

    /// The first cell begins at `now`: the run's setup before it is no cell's work.
    pub fn begin(&mut self, now: Instant) {
        if self.done == 0 {
            self.cell_began = now;
        }
    }

    /// The cell under way finished at `now`.
    pub fn cell_done(&mut self, now: Instant) {
        let taken = now.saturating_duration_since(self.cell_began).as_secs_f64();
        match self.work.get(self.done).copied().unwrap_or(CellWork::Unknown) {
            CellWork::Timed(d) => self.timed.add(d.as_secs_f64(), taken),
            CellWork::Bytes(b) => self.bytes.add(b as f64 + PER_CELL_BYTES, taken),
            CellWork::Unknown => self.unknown.add(1.0, taken),
        }
        self.done += 1;
        self.cell_began = now;
    }

    /// Seconds a cell of `work` is expected to take; None until the run has shown a rate for it.
    fn seconds(&self, work: CellWork) -> Option<f64> {
        match work {
            CellWork::Timed(d) => Some(d.as_secs_f64() * self.timed.per_unit().unwrap_or(1.0).max(1.0)),
            CellWork::Bytes(b) => self.bytes.per_unit().map(|s| (b as f64 + PER_CELL_BYTES) * s),
            CellWork::Unknown => self.unknown.per_unit(),
        }
    }

    /// The time left at `now`: None while some cell's work has no rate to go by yet.
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        let mut left = 0.0;
        for (i, work) in self.work.iter().enumerate().skip(self.done) {
            let mut seconds = self.seconds(*work)?;
            if i == self.done {
                let running = now.saturating_duration_since(self.cell_began).as_secs_f64();
                seconds = (seconds - running).max(0.0);
            }
            left += seconds;
        }
        Some(Duration::from_secs_f64(left))
    }
}

/// A duration as the progress lines show it: `45s`, `3m 05s`, `2h 10m`.
pub fn short(d: Duration) -> String {
    let s = d.as_secs_f64().ceil() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The ETA as the bar and the plain lines show it.
fn eta_text(estimator: &Mutex<Estimator>) -> String {
    let estimator = estimator.lock().unwrap_or_else(|e| e.into_inner());
    match estimator.remaining(Instant::now()) {
        Some(left) => short(left),
        None => "not known yet".into(),
    }
}

pub struct Progress {
    bar: Option<ProgressBar>,
    estimator: Arc<Mutex<Estimator>>,
    began: Instant,
    total: usize,
    done: usize,
    /// Keep a line per finished cell above the bar (for runs of few, long cells).
    keep_lines: bool,
    /// Nothing shown ([`Progress::silence`]).
    silent: bool,
}

impl Progress {
    /// Progress over cells of `work`, one item a cell, in order.
    pub fn new(work: Vec<CellWork>) -> Progress {
        let total = work.len();
        let began = Instant::now();
        let estimator = Arc::new(Mutex::new(Estimator::new(work, began)));
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            let eta = Arc::clone(&estimator);
            if let Ok(style) =
                ProgressStyle::with_template("{bar:30} {pos}/{len} cells, {elapsed} elapsed, ETA {work_eta}  {msg}")
            {
                bar.set_style(style.with_key(
                    "work_eta",
                    move |_: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                        let _ = out.write_str(&eta_text(&eta));
                    },
                ));
            }
            // Redraw while a long cell runs, so elapsed time and ETA keep moving.
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            bar
        });
        Progress { bar, estimator, began, total, done: 0, keep_lines: false, silent: false }
    }

    /// Finished cells stay on the screen, one line each, above the bar.
    #[must_use]
    pub fn keep_lines(mut self) -> Progress {
        self.keep_lines = true;
        self
    }

    /// No bar and no lines from here on (standard error kept for the
    /// tables and messages, as bonnie++'s `-q` keeps it).
    pub fn silence(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.silent = true;
    }

    /// A handle to show live figures of the running cell: on the bar on a
    /// terminal, else a plain line at most every five seconds (logs, CI).
    pub fn live_line(&self) -> Option<LiveLine> {
        (!self.silent).then(|| LiveLine { bar: self.bar.clone(), printed: Arc::new(Mutex::new(None)) })
    }

    pub fn cell_done(&mut self, what: &str) {
        self.done += 1;
        self.estimator.lock().unwrap_or_else(|e| e.into_inner()).cell_done(Instant::now());
        match &self.bar {
            Some(bar) => {
                if self.keep_lines {
                    bar.println(what);
                    bar.set_message("");
                } else {
                    bar.set_message(what.to_string());
                }
                bar.inc(1);
            }
            None if self.silent => {}
            // A closed stderr (a pipe into `head`) must not stop a run.
            None => {
                let _ = writeln!(
                    std::io::stderr(),
                    "[{}/{}] {what} ({} elapsed, ETA {})",
                    self.done,
                    self.total,
                    short(self.began.elapsed()),
                    eta_text(&self.estimator)
                );
            }
        }
    }

    /// The estimator behind the ETA, for the run's published live state.
    pub fn estimator(&self) -> Arc<Mutex<Estimator>> {
        Arc::clone(&self.estimator)
    }

    /// The clients are about to start the first cell.
    pub fn begin_cells(&self) {
        self.estimator.lock().unwrap_or_else(|e| e.into_inner()).begin(Instant::now());
    }

    /// More cells than planned at the start (noisy cells measured again).
    pub fn add(&mut self, more: Vec<CellWork>) {
        let count = more.len();
        self.estimator.lock().unwrap_or_else(|e| e.into_inner()).add(more);
        self.total += count;
        if let Some(bar) = &self.bar {
            bar.inc_length(count as u64);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, seconds: f64) -> Instant {
        start + Duration::from_secs_f64(seconds)
    }

    fn secs(d: Option<Duration>) -> f64 {
        d.map_or(f64::NAN, |d| d.as_secs_f64())
    }

    /// A mixed plan: timed cells, byte cells and cells of unknown work, each run as long as
    /// planned (byte cells at 100 MB/s). Sampled every 100 ms, the time left never grows, and
    /// is known from the moment each kind has shown its rate.
    #[test]
    fn the_eta_of_a_mixed_plan_never_grows_while_cells_take_what_they_were_given() {
        let mb = 1_000_000;
        let plan = vec![
            CellWork::Bytes(200 * mb),
            CellWork::Timed(Duration::from_secs(3)),
            CellWork::Unknown,
            CellWork::Bytes(50 * mb),
            CellWork::Timed(Duration::from_secs(1)),
            CellWork::Unknown,
            CellWork::Bytes(300 * mb),
        ];
        // What each cell really takes: byte cells at 100 MB/s, unknown ones 1.5 s each.
        let takes = [2.0, 3.0, 1.5, 0.5, 1.0, 1.5, 3.0];
        let start = Instant::now();
        let mut estimator = Estimator::new(plan.clone(), start);
        assert_eq!(estimator.remaining(start), None, "no byte rate yet: unknown, never 0s");
        let (mut t, mut last) = (0.0, f64::INFINITY);
        for (i, take) in takes.iter().enumerate() {
            let end = t + take;
            while t < end {
                if let Some(left) = estimator.remaining(at(start, t)) {
                    let left = left.as_secs_f64();
                    assert!(left <= last + 1e-9, "cell {i} at {t:.1}s: ETA grew from {last:.3}s to {left:.3}s");
                    last = left;
                }
                t += 0.1;
            }
            t = end;
            estimator.cell_done(at(start, t));
        }
        assert_eq!(secs(estimator.remaining(at(start, t))), 0.0);
        // Once every kind has shown its rate, the ETA is the time the rest really takes.
        let mut estimator = Estimator::new(plan, start);
        let mut t = 0.0;
        for take in &takes[..3] {
            t += take;
            estimator.cell_done(at(start, t));
        }
        // (Within the 8 MiB each byte cell counts beyond its bytes: 80 ms at 100 MB/s.)
        assert!((secs(estimator.remaining(at(start, t))) - takes[3..].iter().sum::<f64>()).abs() < 0.2);
    }

    #[test]
    fn a_cell_that_overruns_its_estimate_raises_the_eta_and_a_faster_one_lowers_it() {
        let start = Instant::now();
        let plan = vec![CellWork::Bytes(100), CellWork::Bytes(100), CellWork::Bytes(100)];
        let mut estimator = Estimator::new(plan, start);
        estimator.cell_done(at(start, 1.0));
        assert!((secs(estimator.remaining(at(start, 1.0))) - 2.0).abs() < 1e-9);
        // The second cell takes 3 s where 1 s was expected: the last is now expected to take as
        // long (the first cell, which carried the run's one-time costs, no longer counts).
        assert_eq!(secs(estimator.remaining(at(start, 2.5))), 1.0, "the running cell's estimate stops at 0");
        estimator.cell_done(at(start, 4.0));
        assert!((secs(estimator.remaining(at(start, 4.0))) - 3.0).abs() < 1e-9);
        // A first cell slowed by the run's setup: the second, faster, sets the rate alone.
        let plan = vec![CellWork::Bytes(100), CellWork::Bytes(100), CellWork::Bytes(100)];
        let mut estimator = Estimator::new(plan, start);
        estimator.cell_done(at(start, 5.0));
        assert!((secs(estimator.remaining(at(start, 5.0))) - 10.0).abs() < 1e-9);
        estimator.cell_done(at(start, 6.0));
        assert!((secs(estimator.remaining(at(start, 6.0))) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn durations_read_short() {
        assert_eq!(short(Duration::from_millis(400)), "1s");
        assert_eq!(short(Duration::from_secs(185)), "3m 05s");
        assert_eq!(short(Duration::from_secs(7800)), "2h 10m");
    }
}
