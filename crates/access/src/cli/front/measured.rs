//! What a fio job's stored run measured, read back from the results database as fio's outputs
//! need it: per direction its bytes, requests and latency histogram; the cell's wall time and
//! CPU. Every figure the outputs print comes from here, so from the stored run.

use super::options::FioJob;
use crate::split::Moments;
use crate::AccessCellFigures;
use iomatrix_stats::Latency;
use iomatrix_store::StoredRun;

/// One direction (reads or writes) of a job.
pub struct Side {
    pub bytes: u64,
    /// Requests completed (the histogram's count).
    pub ios: u64,
    /// Every request's latency, its issue to its completion (fio's lat).
    pub latency: Latency,
    /// Where the requests were queued: their submission (fio's slat) and completion (clat)
    /// latencies apart. None where one call issued and completed each (psync, sync): there
    /// clat is the request's latency, as fio's clat is for psync.
    pub split: Option<(Moments, Latency)>,
}

impl Side {
    fn of(bytes: u64, blob: Option<&[u8]>, slat: Option<Moments>, clat_blob: Option<&[u8]>) -> Side {
        let histogram = |b: Option<&[u8]>| b.and_then(|b| Latency::from_bytes(b).ok());
        let latency = histogram(blob).unwrap_or_default();
        let split = slat.zip(histogram(clat_blob));
        Side { bytes, ios: latency.count(), latency, split }
    }

    /// The completion latency: the queued requests' own histogram, else every request's.
    pub fn clat(&self) -> &Latency {
        self.split.as_ref().map_or(&self.latency, |(_, clat)| clat)
    }

    pub fn iops(&self, wall_ns: u64) -> f64 {
        per_second(self.ios as f64, wall_ns)
    }

    pub fn bytes_per_sec(&self, wall_ns: u64) -> f64 {
        per_second(self.bytes as f64, wall_ns)
    }
}

fn per_second(n: f64, wall_ns: u64) -> f64 {
    if wall_ns == 0 {
        0.0
    } else {
        n * 1e9 / wall_ns as f64
    }
}

/// One fio job as run and stored.
pub struct JobFigures {
    pub job: FioJob,
    pub group: usize,
    pub run_id: i64,
    /// The run ended complete (every cell, no client failed).
    pub complete: bool,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub clients: usize,
    pub read: Side,
    pub write: Side,
    /// iomatrix's backend that ran it (io_uring for fio's libaio).
    pub backend: String,
    /// The job's figures over time (fio's bw and iops samples come from its whole intervals).
    pub series: Option<iomatrix_stats::Series>,
    /// The target's block device and what it did while the job ran (everyone's requests: fio's
    /// "Disk stats"); None where the target has no device here (tmpfs, a server's folder).
    pub disk: Option<(String, iomatrix_environment::DiskCounters)>,
    /// Under latency_target: the last client's search (fio's group report holds its last job's
    /// depth); None without a target.
    pub latency_target: Option<crate::TargetOutcome>,
    /// What its steady-state rule found (fio's ss); None without one.
    pub steady: Option<iomatrix_stats::steady::SteadyVerdict>,
    /// fio's IO depths, submit and complete counts; None in runs stored before they were counted.
    pub depths: Option<crate::depths::QueueDepths>,
}

impl JobFigures {
    /// The job's figures from its stored run (its one cell); None when no cell was stored.
    pub fn of(job: &FioJob, group: usize, run: &StoredRun, cell: usize) -> Option<JobFigures> {
        let cell = run.cell_results.get(cell)?;
        let figures = AccessCellFigures::read(&cell.metrics, None).unwrap_or_default();
        let slat = figures.slat;
        let blob = |name: &str| cell.blobs.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice());
        Some(JobFigures {
            job: job.clone(),
            group,
            run_id: run.summary.id,
            complete: run.summary.status == iomatrix_store::RunStatus::Complete,
            wall_ns: cell.wall_ns,
            user_ns: cell.user_ns,
            sys_ns: cell.sys_ns,
            clients: cell.clients,
            read: Side::of(figures.read_bytes, blob("latency.read"), slat.map(|s| s[0]), blob("clat.read")),
            write: Side::of(figures.write_bytes, blob("latency.write"), slat.map(|s| s[1]), blob("clat.write")),
            backend: cell.backend.clone(),
            series: cell.series(),
            disk: cell.machine_load().and_then(|m| m.device.zip(m.device_activity)),
            latency_target: figures.latency_target.last().cloned(),
            steady: figures.steady,
            depths: figures.queue_depths,
        })
    }

    /// CPU time in user and system mode as a percent of the wall time (100 = one CPU busy).
    pub fn cpu_percent(&self) -> (f64, f64) {
        let pct = |ns: u64| if self.wall_ns == 0 { 0.0 } else { ns as f64 * 100.0 / self.wall_ns as f64 };
        (pct(self.user_ns), pct(self.sys_ns))
    }

    /// Both directions' completion latency in one histogram: fio's latency_* buckets count
    /// every request by its clat (fio's io_u_mark_latency is given clat).
    pub fn all_latency(&self) -> Latency {
        let mut all = self.read.clat().clone();
        all.merge(self.write.clat());
        all
    }
}

/// One direction's bandwidth (KiB/s) and IOPS samples, as fio's `bw (KiB/s):` and `iops :` lines
/// and its JSON's bw_* and iops_* fields give them.
pub struct SampleLines {
    pub bw_kib: Samples,
    pub iops: Samples,
}

/// The spread of per-interval figures: fio's calc_lat over its samples (whole numbers, as fio
/// keeps each sample; the deviation over n - 1, 0 for one sample).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Samples {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stdev: f64,
    pub count: u64,
}

impl Samples {
    fn of(values: &[u64]) -> Option<Samples> {
        let n = values.len();
        let (min, max) = (*values.iter().min()?, *values.iter().max()?);
        let mean = values.iter().sum::<u64>() as f64 / n as f64;
        let stdev = if n < 2 {
            0.0
        } else {
            (values.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        Some(Samples { min, max, mean, stdev, count: n as u64 })
    }
}

impl JobFigures {
    /// The reads' (or writes') samples: one per whole interval of the series (the last, cut
    /// short by the job's end, is no sample); None without a whole interval.
    pub fn samples(&self, writes: bool) -> Option<SampleLines> {
        let series = self.series.as_ref()?;
        let whole = series.intervals.iter().filter(|i| i.length_ns == series.interval_ns && i.length_ns > 0);
        let (bw, iops): (Vec<u64>, Vec<u64>) = whole
            .map(|i| {
                let (bytes, ops) = if writes { (i.write_bytes, i.writes) } else { (i.read_bytes, i.reads) };
                let per_sec = |x: f64| (x * 1e9 / i.length_ns as f64) as u64;
                (per_sec(bytes as f64 / 1024.0), per_sec(ops as f64))
            })
            .unzip();
        Some(SampleLines { bw_kib: Samples::of(&bw)?, iops: Samples::of(&iops)? })
    }
}

/// fio's steady-state figures of a job (stat.c's show_ss_normal and its JSON "steadystate"): the
/// window's samples as fio's ring holds them (`ss_dur` of them, oldest first, zeros where the job
/// ended before they were taken), their means (whole numbers, over all `ss_dur` slots, as fio's
/// steadystate_*_mean), and fio's criterion, max_deviation and slope (each 0 where its rule
/// does not compute it or no window was whole).
pub struct FioSteady {
    pub attained: bool,
    /// `ss` as fio's JSON writes it: `iops:5.000000%`.
    pub ss: String,
    pub duration: u64,
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
    pub iops_mean: u64,
    pub bw_mean: u64,
    pub criterion: f64,
    pub percent: bool,
    pub max_deviation: f64,
    pub slope: f64,
    /// fio's name of the judged figure: `iops` or `bw`.
    pub figure: &'static str,
    pub slope_rule: bool,
}

impl FioSteady {
    /// fio's figures of a verdict of one of fio's rules; None for SNIA's (fio has no such rule).
    pub fn of(v: &iomatrix_stats::steady::SteadyVerdict) -> Option<FioSteady> {
        use iomatrix_stats::steady::{Criterion, Measure, Sample};
        let Criterion::Fio { figure, measure, limit, percent } = v.rule.criterion else { return None };
        let slots = v.window_samples.max(1);
        let pad = |f: fn(&Sample) -> u64| {
            let mut xs: Vec<u64> = v.window.iter().map(f).collect();
            xs.resize(slots, 0);
            xs
        };
        let (iops, bw) = (pad(|s| s.iops), pad(|s| s.bw));
        let mean = |xs: &[u64]| xs.iter().sum::<u64>() / slots as u64;
        let slope_rule = measure == Measure::Slope;
        Some(FioSteady {
            attained: v.attained,
            ss: format!(
                "{}{}:{limit:.6}{}",
                figure.name(),
                if slope_rule { "_slope" } else { "" },
                if percent { "%" } else { "" }
            ),
            duration: slots as u64,
            iops_mean: mean(&iops),
            bw_mean: mean(&bw),
            iops,
            bw,
            criterion: v.signed_criterion().unwrap_or(0.0),
            percent,
            max_deviation: if slope_rule { 0.0 } else { v.max_deviation },
            slope: if slope_rule { v.signed_slope() } else { 0.0 },
            figure: figure.name(),
            slope_rule,
        })
    }
}

/// fio's completion-latency percentiles, in fio's order.
pub const PERCENTILES: &[f64] =
    &[1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// The units of fio's latency buckets (`latency_ns`, `latency_us`, `latency_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyUnit {
    Nsec,
    Usec,
    Msec,
}

impl LatencyUnit {
    pub fn name(self) -> &'static str {
        match self {
            LatencyUnit::Nsec => "nsec",
            LatencyUnit::Usec => "usec",
            LatencyUnit::Msec => "msec",
        }
    }

    fn ns(self) -> u64 {
        match self {
            LatencyUnit::Nsec => 1,
            LatencyUnit::Usec => 1_000,
            LatencyUnit::Msec => 1_000_000,
        }
    }

    fn bounds(self) -> &'static [&'static str] {
        match self {
            LatencyUnit::Nsec | LatencyUnit::Usec => &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"],
            LatencyUnit::Msec => &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"],
        }
    }
}

/// fio's latency buckets of `unit`: for each bound, the percent of all requests whose latency
/// lies above the previous bound and at most this one (">=2000" takes the rest), from the
/// histogram (bucket edges at its 3 significant digits).
pub fn latency_shares(all: &Latency, unit: LatencyUnit) -> Vec<(&'static str, f64)> {
    let total = all.count();
    let scale = unit.ns();
    // Shares are differences of counts at or below each bound, so a histogram bucket that
    // straddles a bound is counted once, under the first bound that takes it whole. The
    // nanosecond buckets start at 0; the micro- and millisecond ones where the finer ones end.
    let start = if unit == LatencyUnit::Nsec { 0 } else { scale };
    let bounds: Vec<u64> = unit.bounds().iter().map(|b| b.parse::<u64>().map_or(0, |n| n * scale)).collect();
    // Every count in one pass over the histogram (0 counts nothing: no request takes 0 ns).
    let counts = all.counts_at_most_ns(&std::iter::once(start).chain(bounds.iter().copied()).collect::<Vec<_>>());
    let mut below = counts[0];
    unit.bounds()
        .iter()
        .zip(&counts[1..])
        .map(|(&bound, &upto)| {
            let n = match bound.strip_prefix(">=") {
                Some(_) => total - below,
                None => {
                    let n = upto - below;
                    below = upto;
                    n
                }
            };
            (bound, if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 })
        })
        .collect()
}
