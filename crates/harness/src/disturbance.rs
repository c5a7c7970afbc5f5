//! Whether a cell ran for its time: a cell whose process was stopped (SIGSTOP, job control),
//! whose timed run went well past its duration, whose per-second figures show a whole second
//! without progress, or whose clocks disagree (time faked through LD_PRELOAD, a suspend) is
//! stored `disturbed` with its cause. Its figures are kept, marked, and left out of medians and
//! verdicts unless `--include-disturbed` (docs/measuring.md, "Disturbed cells").
//!
//! The clocks: CLOCK_MONOTONIC as the C library gives it (what every figure is timed with, and
//! what an LD_PRELOAD library such as faketime scales), against the same clock read by a raw
//! system call (which no preloaded library sees); and CLOCK_BOOTTIME against CLOCK_MONOTONIC,
//! both raw, which part only across a suspend.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// A timed cell may run past its duration by this share of it before it is disturbed ...
const OVERRUN_SHARE: f64 = 0.10;
/// ... or by this much, whichever is larger.
const OVERRUN_FLOOR_NS: u64 = 1_000_000_000;
/// Two clocks may disagree over a cell by this share of the longer elapsed time ...
const CLOCK_SHARE: f64 = 0.05;
/// ... or by this much, whichever is larger (a loaded machine reads two clocks apart).
const CLOCK_FLOOR_NS: u64 = 50_000_000;
/// A moment's clocks are read within this much of each other ...
const BRACKET_NS: u64 = 1_000_000;
/// ... or the narrowest of this many tries is taken.
const BRACKET_TRIES: usize = 8;
/// How often the heartbeat notes the time: a stop's length is known to this much.
const BEAT: Duration = Duration::from_millis(100);
/// A continue after less than this is not told from a SIGCONT without a stop.
const SHORTEST_STOP_NS: u64 = 2 * BEAT.as_nanos() as u64;
/// Stops remembered: a cell asks only for the ones during it.
const STOPS_KEPT: usize = 64;

/// What a suite knows of a cell's pace: its planned duration where it is timed, and the
/// requests it completed in each second where it keeps them (today access).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pace {
    pub duration: Option<Duration>,
    pub ops_per_second: Vec<u64>,
}

/// The three clocks at one moment, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clocks {
    /// CLOCK_MONOTONIC through the C library (what a preloaded library fakes).
    pub monotonic: u64,
    /// CLOCK_MONOTONIC by a raw system call.
    pub monotonic_raw: u64,
    /// CLOCK_BOOTTIME by a raw system call (counts a suspend, which MONOTONIC does not).
    pub boottime_raw: u64,
}

impl Clocks {
    /// The three clocks read as one moment: the C library's reading bracketed by two raw ones,
    /// tried again while a preemption (hundreds of busy threads on two CPUs) parted the bracket by
    /// more than `BRACKET_NS`, so a thread descheduled between two reads is not taken for disagreeing clocks.
    /// The narrowest of a few tries is kept.
    pub fn now() -> Clocks {
        let mut best = Clocks::bracketed();
        for _ in 1..BRACKET_TRIES {
            if best.0 <= BRACKET_NS {
                break;
            }
            let read = Clocks::bracketed();
            if read.0 < best.0 {
                best = read;
            }
        }
        best.1
    }

    /// One reading, with the width of its raw bracket.
    fn bracketed() -> (u64, Clocks) {
        let before = raw_clock(libc::CLOCK_MONOTONIC);
        let monotonic = libc_clock(libc::CLOCK_MONOTONIC);
        let boottime_raw = raw_clock(libc::CLOCK_BOOTTIME);
        let after = raw_clock(libc::CLOCK_MONOTONIC);
        let width = after.saturating_sub(before);
        (width, Clocks { monotonic, monotonic_raw: before + width / 2, boottime_raw })
    }
}

/// A clock read through the C library's clock_gettime(3), 0 if it fails.
fn libc_clock(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(3) writes one timespec into `ts`, which lives across the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc == 0 {
        nanos(&ts)
    } else {
        0
    }
}

/// A clock read by the clock_gettime system call itself, past any preloaded clock_gettime and
/// the vDSO; 0 if it fails.
fn raw_clock(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: the clock_gettime system call writes one timespec into `ts`, which lives across it.
    let rc = unsafe { libc::syscall(libc::SYS_clock_gettime, clock, std::ptr::from_mut::<libc::timespec>(&mut ts)) };
    if rc == 0 {
        nanos(&ts)
    } else {
        0
    }
}

fn nanos(ts: &libc::timespec) -> u64 {
    (ts.tv_sec.max(0) as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec.max(0) as u64)
}

/// One stop of the process: when it was continued (raw CLOCK_MONOTONIC) and how long it stood.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stop {
    pub continued_at: u64,
    pub stopped_ns: u64,
}

/// The heartbeat's last beat (raw CLOCK_MONOTONIC), and the longest pause it saw lately with
/// when that pause ended: whichever thread runs first after a SIGCONT, one of them holds the stop.
static LAST_BEAT: AtomicU64 = AtomicU64::new(0);
static LAST_PAUSE: Mutex<(u64, u64)> = Mutex::new((0, 0));
static STOPS: Mutex<Vec<Stop>> = Mutex::new(Vec::new());

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts noting the process's stops, once: a heartbeat thread that notes the time every
/// `BEAT`, and a thread that hears SIGCONT and records the stop that just ended with its length.
pub fn watch_stops() -> anyhow::Result<()> {
    static STARTED: Mutex<bool> = Mutex::new(false);
    let mut started = lock(&STARTED);
    if *started {
        return Ok(());
    }
    LAST_BEAT.store(raw_clock(libc::CLOCK_MONOTONIC), Ordering::SeqCst);
    std::thread::Builder::new().name("heartbeat".into()).spawn(|| loop {
        std::thread::sleep(BEAT);
        let now = raw_clock(libc::CLOCK_MONOTONIC);
        let gap = now.saturating_sub(LAST_BEAT.swap(now, Ordering::SeqCst));
        if gap > 2 * BEAT.as_nanos() as u64 {
            *lock(&LAST_PAUSE) = (gap, now);
        }
    })?;
    let mut continues = signal_hook::iterator::Signals::new([signal_hook::consts::SIGCONT])?;
    std::thread::Builder::new().name("sigcont".into()).spawn(move || {
        for _ in continues.forever() {
            let now = raw_clock(libc::CLOCK_MONOTONIC);
            let since_beat = now.saturating_sub(LAST_BEAT.load(Ordering::SeqCst));
            let (pause, pause_ended) = *lock(&LAST_PAUSE);
            // The heartbeat ran first after the continue: its pause is this stop.
            let noted = if now.saturating_sub(pause_ended) < 4 * BEAT.as_nanos() as u64 { pause } else { 0 };
            let stopped_ns = since_beat.max(noted);
            // A SIGCONT to a process that was not stopped (`kill -CONT` at a running one) finds
            // the heartbeat on time: a stop is told from none only past two beats.
            if stopped_ns < SHORTEST_STOP_NS {
                continue;
            }
            let mut stops = lock(&STOPS);
            if stops.len() == STOPS_KEPT {
                stops.remove(0);
            }
            stops.push(Stop { continued_at: now, stopped_ns });
        }
    })?;
    *started = true;
    Ok(())
}

/// The stops continued between `from` and `to` (raw CLOCK_MONOTONIC).
pub fn stops_between(from: u64, to: u64) -> Vec<Stop> {
    lock(&STOPS).iter().filter(|s| s.continued_at >= from && s.continued_at <= to).copied().collect()
}

/// Why a cell did not run for its time, or None: `start` and `end` are the clocks around it
/// (`start` no later than the cell's own start), `wall_ns` the cell's measured wall time,
/// `stops` the process's stops that ended during it.
pub fn cause(start: &Clocks, end: &Clocks, wall_ns: u64, pace: &Pace, stops: &[Stop]) -> Option<String> {
    let mut causes = Vec::new();
    if !stops.is_empty() {
        let stopped: u64 = stops.iter().map(|s| s.stopped_ns).sum();
        causes.push(format!(
            "the process was stopped for {} (SIGSTOP or job control; {} continue(s) by SIGCONT during the cell)",
            seconds(stopped),
            stops.len()
        ));
    }
    causes.extend(pace.duration.and_then(|d| overran(wall_ns, d)));
    causes.extend(idle_seconds(&pace.ops_per_second));
    causes.extend(clocks_disagree(start, end));
    (!causes.is_empty()).then(|| causes.join("; "))
}

/// A timed cell's wall time past its duration by more than 10% of it or 1 s, whichever is
/// larger: "ran 23.0 s for a 6 s cell: stopped for 17.0 s".
pub fn overran(wall_ns: u64, duration: Duration) -> Option<String> {
    let planned = duration.as_nanos().min(u128::from(u64::MAX)) as u64;
    let allowed = ((planned as f64 * OVERRUN_SHARE) as u64).max(OVERRUN_FLOOR_NS);
    let over = wall_ns.saturating_sub(planned);
    (over > allowed).then(|| {
        format!(
            "its wall time was {} for a {} cell: stopped for {} (more than the {} a timed cell may run over)",
            seconds(wall_ns),
            seconds(planned),
            seconds(over),
            seconds(allowed)
        )
    })
}

/// Whole seconds in which no request completed (the last second is cut short by the cell's end,
/// and not judged): "no request completed for 5 s (seconds 2 to 6 of the cell)".
pub fn idle_seconds(ops_per_second: &[u64]) -> Option<String> {
    let whole = &ops_per_second[..ops_per_second.len().saturating_sub(1)];
    let idle: Vec<usize> = whole.iter().enumerate().filter(|(_, &ops)| ops == 0).map(|(i, _)| i + 1).collect();
    let (first, last) = (idle.first()?, idle.last()?);
    let at = if first == last { format!("second {first}") } else { format!("seconds {first} to {last}") };
    Some(format!(
        "no request completed in {} whole second(s) ({at} of the cell): stopped for {} s",
        idle.len(),
        idle.len()
    ))
}

/// The clocks' elapsed times over a cell, compared: CLOCK_MONOTONIC through the C library against
/// the raw system call (a preloaded library fakes the one), and raw CLOCK_BOOTTIME against raw
/// CLOCK_MONOTONIC (a suspend parts them).
pub fn clocks_disagree(start: &Clocks, end: &Clocks) -> Option<String> {
    let elapsed = |from: u64, to: u64| to.saturating_sub(from);
    let libc_mono = elapsed(start.monotonic, end.monotonic);
    let raw_mono = elapsed(start.monotonic_raw, end.monotonic_raw);
    let raw_boot = elapsed(start.boottime_raw, end.boottime_raw);
    let mut said = Vec::new();
    if apart(libc_mono, raw_mono) {
        said.push(format!(
            "its clocks disagree: CLOCK_MONOTONIC through the C library counted {} where the kernel's own \
             (a raw clock_gettime system call) counted {} (time faked by a preloaded library such as faketime?)",
            seconds(libc_mono),
            seconds(raw_mono)
        ));
    }
    if apart(raw_boot, raw_mono) {
        said.push(format!(
            "its clocks disagree: CLOCK_BOOTTIME counted {} where CLOCK_MONOTONIC counted {} (the machine was \
             suspended during the cell)",
            seconds(raw_boot),
            seconds(raw_mono)
        ));
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// Whether two elapsed times differ by more than 5% of the longer, or 50 ms, whichever is larger.
fn apart(a: u64, b: u64) -> bool {
    let allowed = ((a.max(b) as f64 * CLOCK_SHARE) as u64).max(CLOCK_FLOOR_NS);
    a.abs_diff(b) > allowed
}

/// "20.0 s", "0.61 s".
fn seconds(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s >= 10.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.2} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn clocks(monotonic: u64, monotonic_raw: u64, boottime_raw: u64) -> Clocks {
        Clocks { monotonic, monotonic_raw, boottime_raw }
    }

    #[test]
    fn a_timed_cell_may_run_over_by_a_tenth_or_a_second_whichever_is_larger() {
        let six = Duration::from_secs(6);
        assert_eq!(overran(7 * S, six), None, "1 s over a 6 s cell: within the 1 s floor");
        let over = overran(7 * S + S / 10, six).expect("1.1 s over a 6 s cell");
        assert!(over.contains("stopped for 1.1 s") && over.contains("for a 6.0 s cell"), "{over}");
        let long = Duration::from_secs(60);
        assert_eq!(overran(65 * S, long), None, "5 s over a 60 s cell: within its tenth");
        assert!(overran(66 * S + 1, long).is_some(), "6 s and a little over a 60 s cell");
        let stopped = overran(23 * S, six).expect("the issue's 20 s stop");
        assert!(stopped.contains("stopped for 17 s") && stopped.contains("23 s"), "{stopped}");
        assert_eq!(overran(5 * S, six), None, "a cell that ended early did not overrun");
    }

    #[test]
    fn a_whole_second_without_progress_is_a_stall_and_the_last_second_is_not_judged() {
        assert_eq!(idle_seconds(&[]), None);
        assert_eq!(idle_seconds(&[5, 7, 9, 0]), None, "the last second is cut short");
        let one = idle_seconds(&[5, 0, 9]).expect("second 2 idle");
        assert!(one.contains("1 whole second(s) (second 2 of") && one.contains("stopped for 1 s"), "{one}");
        let five = idle_seconds(&[5, 0, 0, 0, 0, 0, 9, 3]).expect("seconds 2 to 6 idle");
        assert!(five.contains("seconds 2 to 6") && five.contains("stopped for 5 s"), "{five}");
    }

    #[test]
    fn clocks_part_beyond_a_twentieth_or_fifty_milliseconds() {
        let start = clocks(0, 0, 0);
        assert_eq!(clocks_disagree(&start, &clocks(6 * S, 6 * S, 6 * S)), None);
        assert_eq!(clocks_disagree(&start, &clocks(6 * S + S / 4, 6 * S, 6 * S)), None, "4% apart");
        assert_eq!(clocks_disagree(&start, &clocks(S / 10 + 40_000_000, S / 10, S / 10)), None, "40 ms apart");
        let faked = clocks_disagree(&start, &clocks(6 * S, 6 * S / 10, 6 * S / 10)).expect("faketime x10");
        assert!(
            faked.contains("CLOCK_MONOTONIC through the C library counted 6.0 s")
                && faked.contains("counted 0.60 s")
                && !faked.contains("BOOTTIME"),
            "{faked}"
        );
        let suspended = clocks_disagree(&start, &clocks(6 * S, 6 * S, 66 * S)).expect("a 60 s suspend");
        assert!(suspended.contains("CLOCK_BOOTTIME counted 66 s where CLOCK_MONOTONIC counted 6.0 s"), "{suspended}");
    }

    #[test]
    fn a_cell_is_disturbed_for_every_cause_at_once_and_not_without_one() {
        let (start, end) = (clocks(0, 0, 0), clocks(8 * S, 8 * S, 8 * S));
        let pace = Pace { duration: Some(Duration::from_secs(6)), ops_per_second: vec![9, 9, 9, 9, 9, 9, 3] };
        assert_eq!(cause(&start, &end, 6 * S, &pace, &[]), None, "a cell that ran for its time");
        let stops = [Stop { continued_at: 7 * S, stopped_ns: 5 * S }];
        let stopped = Pace { ops_per_second: vec![9, 0, 0, 0, 0, 0, 9, 3], ..pace };
        let cause = cause(&start, &end, 11 * S, &stopped, &stops).expect("stopped");
        assert!(cause.contains("the process was stopped for 5.0 s"), "{cause}");
        assert!(cause.contains("wall time was 11 s for a 6.0 s cell"), "{cause}");
        assert!(cause.contains("seconds 2 to 6"), "{cause}");
    }

    #[test]
    fn the_raw_clocks_read_and_agree_with_the_c_library_here() {
        let start = Clocks::now();
        std::thread::sleep(Duration::from_millis(20));
        let end = Clocks::now();
        assert!(end.monotonic_raw > start.monotonic_raw && end.boottime_raw > start.boottime_raw, "{start:?} {end:?}");
        assert_eq!(clocks_disagree(&start, &end), None, "{start:?} {end:?}");
    }
}
