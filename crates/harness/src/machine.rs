//! The machine's state around each cell: read at the cell's start and end (where the
//! disturbance clocks are read, never in its timed loop), stored with the cell, and judged: a
//! cell run while other processes competed for the machine is stored disturbed ("machine busy:
//! ..."). `--busy-threshold` sets the rule, `--settle` waits for a quiet machine before each
//! cell. The readers and the rule are the environment crate's ([`iomatrix_environment::load`]).

use clap::Args;
use iomatrix_core::UsageError;
use iomatrix_environment::{BusyThresholds, IoLedger, LoadReading, MachineLoad, Settle};
use std::time::{Duration, Instant};

/// The environment variable that gives `--busy-threshold` where the flag is not given.
pub const BUSY_THRESHOLD_VAR: &str = "IOMATRIX_BUSY_THRESHOLD";

/// How long the machine must stay below the thresholds before `--settle` lets a cell start.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// The flags every `run` takes about the machine's load.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Machine load")]
pub struct MachineArgs {
    /// When a cell counts as disturbed by a busy machine: cpu=PCT (other processes' CPU use
    /// against the CPU left idle), steal=PCT (the hypervisor's steal against the run's own CPU
    /// time), io=PCT (other I/O on the target's device against the run's own), any of them, each
    /// a percentage or off; or off for none. Not yet across hosts: under MPI and --hosts only
    /// rank 0's host is read, and only its steal judged [default: cpu=100%,steal=10%,io=10%; or
    /// $IOMATRIX_BUSY_THRESHOLD]
    #[arg(long, value_name = "cpu=PCT,steal=PCT,io=PCT|off")]
    pub busy_threshold: Option<String>,

    /// Before each cell, wait until the machine has been below the busy thresholds for one
    /// second, at most this long (e.g. 30s); says how long it waited, or that it gave up
    #[arg(long, value_name = "DURATION")]
    pub settle: Option<String>,
}

/// What a run does about the machine's load.
#[derive(Debug, Clone, Default)]
pub struct MachinePlan {
    pub thresholds: BusyThresholds,
    /// `--settle`: the longest wait for a quiet machine before each cell.
    pub settle: Option<Duration>,
}

impl MachinePlan {
    /// From the flags, the thresholds from `$IOMATRIX_BUSY_THRESHOLD` where the flag is not given.
    pub fn from_args(args: &MachineArgs) -> Result<MachinePlan, UsageError> {
        let thresholds = match &args.busy_threshold {
            Some(text) => thresholds("--busy-threshold", text)?,
            None => thresholds_from_env()?,
        };
        let settle =
            match &args.settle {
                Some(text) => Some(iomatrix_core::parse_duration(text).map_err(|e| {
                    UsageError::new(format!("--settle {text}: {e}; write a duration such as 30s or 2m"))
                })?),
                None => None,
            };
        Ok(MachinePlan { thresholds, settle })
    }

    /// A tool's command line's run (`iomatrix iozone`), which has no flags for it: the
    /// environment's thresholds or the default, no settling.
    pub fn from_env() -> Result<MachinePlan, UsageError> {
        Ok(MachinePlan { thresholds: thresholds_from_env()?, settle: None })
    }
}

fn thresholds_from_env() -> Result<BusyThresholds, UsageError> {
    match std::env::var(BUSY_THRESHOLD_VAR) {
        Ok(text) if !text.trim().is_empty() => thresholds(BUSY_THRESHOLD_VAR, &text),
        _ => Ok(BusyThresholds::default()),
    }
}

fn thresholds(given_as: &str, text: &str) -> Result<BusyThresholds, UsageError> {
    BusyThresholds::parse(text).map_err(|why| {
        UsageError::new(format!(
            "{given_as} {}: {why}; write e.g. cpu=100%,steal=10%,io=10% (any of the three), or off",
            iomatrix_core::text::printable(text)
        ))
    })
}

/// A cell shorter than this is judged over this much before its end: the kernel counts CPU time in
/// ticks (10 ms), which over a millisecond's cell say nothing.
const SHORTEST_WINDOW: Duration = Duration::from_secs(1);
/// Readings kept for the windows of short cells, at most.
const READINGS_KEPT: usize = 4096;

/// The machine's load over the cell under way: the readings since a window ago, and the run's
/// I/O ledger.
pub struct CellWatch {
    device: Option<String>,
    /// The readings a thread takes every second while the run's cells run ([`sample_seconds`]).
    seconds: Seconds,
    /// Readings at cells' starts and ends, oldest first; the last is the cell under way's start.
    readings: std::collections::VecDeque<(Instant, LoadReading)>,
    ledger: IoLedger,
    settled: Option<Settle>,
}

impl CellWatch {
    /// Starts watching at the run's first cell; `device` is the target's block device here.
    pub fn new(device: Option<String>, seconds: Seconds) -> CellWatch {
        let start = LoadReading::now(device.as_deref());
        let mut ledger = IoLedger::default();
        // The run's own I/O is counted from here.
        let _ = ledger.other_bytes(&start);
        // No wait for a span here: a run of 10,000 `iomatrix fio` jobs would pay it 10,000 times.
        // The first cells of a run (milliseconds each in IOzone's matrix) may span fewer CPU ticks
        // than the shares need: their CPU shares are then unknown, never judged quiet.
        CellWatch { device, seconds, readings: [(Instant::now(), start)].into(), ledger, settled: None }
    }

    /// A cell begins now.
    pub fn begin(&mut self) {
        self.keep(LoadReading::now(self.device.as_deref()));
    }

    fn keep(&mut self, reading: LoadReading) {
        let now = Instant::now();
        // What no later window reaches is let go, the newest reading older than a window kept.
        while self.readings.len() > 1
            && (self.readings.len() >= READINGS_KEPT
                || self.readings.get(1).is_some_and(|(at, _)| now.duration_since(*at) > SHORTEST_WINDOW * 2))
        {
            self.readings.pop_front();
        }
        self.readings.push_back((now, reading));
    }

    /// The cell that began last ended now: what else the machine did meanwhile (over at least
    /// the last second, for a shorter cell), with what `--settle` did before it.
    pub fn end(&mut self) -> MachineLoad {
        let end = LoadReading::now(self.device.as_deref());
        let now = Instant::now();
        let latest = now.checked_sub(SHORTEST_WINDOW).unwrap_or(now);
        // The cell's own start where it ran a window or longer, else the newest reading a window old.
        let from = self
            .readings
            .iter()
            .rev()
            .find(|(at, _)| *at <= latest)
            .or(self.readings.front())
            .map(|(at, r)| (*at, r.clone()));
        let cell_start = self.readings.back().map_or(now, |(at, _)| *at);
        let (at, from) = match from {
            Some((at, r)) if at <= cell_start => (at, r),
            _ => (cell_start, self.readings.back().map(|(_, r)| r.clone()).unwrap_or_default()),
        };
        let mut load = MachineLoad::between(&from, &end, self.device.as_deref(), &mut self.ledger);
        // The I/O is the cell's own span: the ledger counts from its last reading.
        load.window_ns = Some(now.duration_since(at).as_nanos().min(u128::from(u64::MAX)) as u64);
        load.own_io_bytes = self.readings.back().and_then(|(_, s)| end.own_io_bytes?.checked_sub(s.own_io_bytes?));
        load.settle = self.settled.take();
        load.other_cpu_per_second = self.series(cell_start, &end);
        self.keep(end);
        load
    }

    /// Other processes' CPU in each second of the cell that began at `start` and ended at `end`,
    /// from the readings taken each second meanwhile; None for a cell within one second.
    fn series(&mut self, start: Instant, end: &LoadReading) -> Option<Vec<Option<f64>>> {
        let mut taken = self.seconds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let within: Vec<LoadReading> = taken.drain(..).filter(|(at, _)| *at > start).map(|(_, r)| r).collect();
        drop(taken);
        if within.is_empty() {
            return None;
        }
        let first = self.readings.back().map(|(_, r)| r.clone()).unwrap_or_default();
        let points: Vec<LoadReading> = std::iter::once(first).chain(within).chain([end.clone()]).collect();
        Some(iomatrix_environment::load::other_cpu_series(&points))
    }

    /// `--settle`: waits until the machine has been below `thresholds` for a second, at most
    /// `limit`, and says on stderr how long it waited or that it gave up.
    pub fn settle(&mut self, thresholds: &BusyThresholds, limit: Duration) {
        let began = Instant::now();
        let mut last_cause = None;
        let gave_up = loop {
            let from = LoadReading::now(self.device.as_deref());
            let remaining = limit.saturating_sub(began.elapsed());
            if remaining.is_zero() {
                break true;
            }
            // A whole second where one is left (within the few microseconds a reading takes).
            let whole = remaining + Duration::from_millis(10) >= QUIET_FOR;
            std::thread::sleep(if whole { QUIET_FOR } else { remaining });
            let to = LoadReading::now(self.device.as_deref());
            let load = MachineLoad::between(&from, &to, self.device.as_deref(), &mut self.ledger);
            last_cause = thresholds.judge(&load);
            if last_cause.is_none() && whole {
                break false;
            }
        };
        let waited = began.elapsed();
        let seconds = format!("{:.1} s", waited.as_secs_f64());
        if gave_up {
            let why = last_cause.unwrap_or_else(|| "the machine was not quiet for a whole second".into());
            eprintln!(
                "iomatrix: warning: --settle {:.1} s: gave up after {seconds}, the machine stayed busy ({why}): \
                 measuring the cell anyway",
                limit.as_secs_f64()
            );
        } else {
            eprintln!("iomatrix: --settle: the machine was quiet after {seconds}");
        }
        self.settled = Some(Settle { waited_ns: waited.as_nanos().min(u128::from(u64::MAX)) as u64, gave_up });
    }
}

/// The readings taken each second while a run's cells run, for the cells' per-second series.
pub type Seconds = std::sync::Arc<std::sync::Mutex<Vec<(Instant, LoadReading)>>>;

/// Takes a reading every second into `seconds` while `running` holds (the run's cells are under
/// way): a thread of its own, never a client's, reading a few small /proc files once a second.
pub fn sample_seconds((seconds, device): &(Seconds, Option<String>), running: &std::sync::atomic::AtomicBool) {
    let step = Duration::from_millis(100);
    let mut next = Instant::now() + QUIET_FOR;
    while running.load(std::sync::atomic::Ordering::Relaxed) {
        // Parked, not asleep: the run's end unparks it ([`spawn_sampler`]'s thread), so no run
        // waits out a step for it.
        std::thread::park_timeout(step);
        if Instant::now() < next {
            continue;
        }
        next += QUIET_FOR;
        let reading = LoadReading::now(device.as_deref());
        let mut taken = seconds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // A cell takes its seconds when it ends; bounded if none ends for long (a day of seconds).
        if taken.len() < 86_400 {
            taken.push((Instant::now(), reading));
        }
    }
}

/// Starts [`sample_seconds`] on a thread of `scope`; where no thread can be had (a process at its
/// thread limit), the cells go without their per-second series, said once on standard error.
/// Returns the thread, to unpark once `running` is lowered.
pub fn spawn_sampler<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    sampled: &'scope (Seconds, Option<String>),
    running: &'scope std::sync::atomic::AtomicBool,
) -> Option<std::thread::Thread> {
    let spawned = std::thread::Builder::new()
        .name("machine".into())
        .spawn_scoped(scope, move || sample_seconds(sampled, running));
    match spawned {
        Ok(handle) => Some(handle.thread().clone()),
        Err(e) => {
            eprintln!("iomatrix: warning: no thread for the machine's per-second readings ({e}): cells store none");
            None
        }
    }
}

/// Whether the machine is busy now, for the live line: judged over the last second, read once a
/// second by the thread that redraws the line (never a client's).
pub struct BusyNow {
    thresholds: BusyThresholds,
    device: Option<String>,
    last: (Instant, LoadReading),
    busy: Option<String>,
}

impl BusyNow {
    pub fn new(thresholds: BusyThresholds, device: Option<String>) -> BusyNow {
        let reading = LoadReading::now(device.as_deref());
        BusyNow { thresholds, device, last: (Instant::now(), reading), busy: None }
    }

    /// Why the machine is busy, as of the last whole second; None while it is not.
    pub fn poll(&mut self) -> Option<&str> {
        if self.thresholds.is_off() {
            return None;
        }
        if self.last.0.elapsed() >= QUIET_FOR {
            let now = LoadReading::now(self.device.as_deref());
            // I/O is the cells' to judge (the run's own write-back is credited there): CPU and steal here.
            let cpu_only = BusyThresholds { io_pct: None, ..self.thresholds };
            let load = MachineLoad::between(&self.last.1, &now, None, &mut IoLedger::default());
            self.busy = cpu_only.judge(&load);
            self.last = (Instant::now(), now);
        }
        self.busy.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_overrides_the_environment_and_a_bad_one_is_a_usage_error() {
        let args = |t: &str| MachineArgs { busy_threshold: Some(t.into()), settle: None };
        assert!(MachinePlan::from_args(&args("off")).unwrap().thresholds.is_off());
        let e = MachinePlan::from_args(&args("cpu=many")).unwrap_err().to_string();
        assert!(e.contains("--busy-threshold cpu=many") && e.contains("write e.g. cpu=100%"), "{e}");
        let settle = MachineArgs { busy_threshold: Some("off".into()), settle: Some("soon".into()) };
        let e = MachinePlan::from_args(&settle).unwrap_err().to_string();
        assert!(e.contains("--settle soon") && e.contains("such as 30s"), "{e}");
        let two = MachineArgs { busy_threshold: Some("off".into()), settle: Some("2s".into()) };
        assert_eq!(MachinePlan::from_args(&two).unwrap().settle, Some(Duration::from_secs(2)));
    }

    #[test]
    fn settle_of_a_second_on_a_quiet_rule_waits_that_second_and_is_done() {
        let mut watch = CellWatch::new(None, Seconds::default());
        let began = Instant::now();
        watch.settle(&BusyThresholds::OFF, Duration::from_secs(1));
        let settled = watch.end().settle.expect("the wait is recorded");
        assert!(!settled.gave_up, "a rule that is off is always met: {settled:?}");
        assert!(began.elapsed() < Duration::from_secs(2), "{:?}", began.elapsed());
    }

    #[test]
    fn settle_gives_up_within_its_limit() {
        // Every CPU rule at 0% of the idle CPU: any other process's use above the floor is busy,
        // so on a quiet machine it may settle; either way it returns within the limit.
        let mut watch = CellWatch::new(None, Seconds::default());
        let began = Instant::now();
        watch.settle(&BusyThresholds::default(), Duration::from_millis(300));
        assert!(began.elapsed() < Duration::from_secs(2), "{:?}", began.elapsed());
        let settled = watch.end().settle.expect("the wait is recorded with the next cell");
        assert!(settled.gave_up, "a 300 ms limit cannot hold a whole quiet second: {settled:?}");
    }
}
