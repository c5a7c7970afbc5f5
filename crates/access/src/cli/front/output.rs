//! fio's normal output, written from the stored runs: the job line, the `read: IOPS=...,
//! BW=...` lines, slat (queued engines only, as fio), clat and lat and clat's percentiles, CPU,
//! fio's IO depths, submit and complete lines, the issued requests and the "Run status group"
//! lines, laid out as fio lays them out so a fio user reads them at once. What iomatrix does not
//! measure (context switches, page faults, short and dropped requests) is not printed as zeros:
//! one line of each job's block names it.

use super::measured::{latency_shares, FioSteady, JobFigures, LatencyUnit, SampleLines, Side, PERCENTILES};
use super::options::FioJob;
use crate::depths::{shares, QueueDepths, CALL_LABELS, LEVEL_LABELS};
use std::fmt::Write;

/// fio's names of [`PERCENTILES`], as its percentile block prints them.
const PERCENTILE_LABELS: [&str; 17] = [
    " 1.00", " 5.00", "10.00", "20.00", "30.00", "40.00", "50.00", "60.00", "70.00", "80.00", "90.00", "95.00",
    "99.00", "99.50", "99.90", "99.95", "99.99",
];

/// The line that names what fio's block has and this one leaves out, unmeasured.
const NOT_MEASURED: &str = "  not measured by iomatrix: ctx, majf, minf, short, dropped\n";
/// The same line for a run stored before its queue depths were counted.
const NOT_MEASURED_OLDER: &str =
    "  not measured by iomatrix: ctx, majf, minf, IO depths, submit, complete, short, dropped\n";

/// fio's line for one job before it starts.
pub fn job_line(group: usize, job: &FioJob) -> String {
    // fio prints each direction's smallest and largest size; trims take the writes' (fio's rule
    // for a list shorter than three).
    let range = |shares: Option<&[crate::bssplit::Share]>| {
        let sizes = || shares.into_iter().flatten().map(|s| s.size.bytes());
        let (low, high) = (sizes().min().unwrap_or(job.bs.bytes()), sizes().max().unwrap_or(job.bs.bytes()));
        format!("{}-{}", fio_size(low), fio_size(high))
    };
    let (reads, writes) = (job.bssplit.as_ref().map(|s| &s.reads[..]), job.bssplit.as_ref().map(|s| &s.writes[..]));
    let (r, w) = (range(reads), range(writes));
    let engine = match job.ioengine {
        Some(e) if e.fio_name() != e.backend() => format!("{} (run as {} by iomatrix)", e.fio_name(), e.backend()),
        Some(e) => e.fio_name().to_string(),
        None => "psync".to_string(),
    };
    format!(
        "{}: (g={group}): rw={}, bs=(R) {r}, (W) {w}, (T) {w}, ioengine={engine}, iodepth={}\n",
        job.name, job.mix.word, job.iodepth
    )
}

/// The lines fio prints after the job lines: the version and the process count.
pub fn starting(jobs: &[FioJob]) -> String {
    let processes: usize = jobs.iter().map(|j| j.numjobs).sum();
    format!(
        "iomatrix fio {} (fio's command line, run by iomatrix's engine)\nStarting {processes} {}\n",
        env!("CARGO_PKG_VERSION"),
        if processes == 1 { "process" } else { "processes" }
    )
}

/// A finished job's block, as fio prints it after the run (after a blank line).
pub fn job_text(f: &JobFigures) -> String {
    format!("\n{}", job_block(f))
}

/// The job's "Run status group" lines, which fio prints after every job's block.
pub fn group_status(group: usize, jobs: &[JobFigures]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nRun status group {group} (all jobs):");
    for (word, writes) in [("   READ", false), ("  WRITE", true)] {
        // fio's group line: the jobs' bytes over the longest job's time, then the slowest and
        // fastest job's bandwidth and the shortest and longest job's time.
        let sides: Vec<(&Side, u64)> = jobs
            .iter()
            .map(|f| (if writes { &f.write } else { &f.read }, f.wall_ns))
            .filter(|(side, _)| side.ios > 0)
            .collect();
        let Some(longest) = sides.iter().map(|(_, ns)| *ns).max() else { continue };
        let shortest = sides.iter().map(|(_, ns)| *ns).min().unwrap_or(longest);
        let bytes: u64 = sides.iter().map(|(side, _)| side.bytes).sum();
        let each: Vec<f64> = sides.iter().map(|(side, ns)| side.bytes_per_sec(*ns)).collect();
        let (low, high) = (each.iter().copied().fold(f64::MAX, f64::min), each.iter().copied().fold(0.0, f64::max));
        let aggregate = if longest == 0 { 0.0 } else { bytes as f64 * 1e9 / longest as f64 };
        let _ = writeln!(
            out,
            "{word}: bw={}/s ({}/s), {}/s-{}/s ({}/s-{}/s), io={} ({}), run={}-{}msec",
            binary(aggregate),
            decimal(aggregate),
            binary(low),
            binary(high),
            decimal(low),
            decimal(high),
            binary(bytes as f64),
            decimal(bytes as f64),
            shortest / 1_000_000,
            longest / 1_000_000,
        );
    }
    out
}

fn job_block(f: &JobFigures) -> String {
    let mut out = String::new();
    let err = if f.complete { " 0" } else { " 1" };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={err}: iomatrix run #{}",
        f.job.name, f.group, f.clients, f.run_id
    );
    for (word, side, writes) in [("read", &f.read, false), ("write", &f.write, true)] {
        if side.ios == 0 {
            continue;
        }
        out += &side_block(word, side, f.wall_ns);
        out += &sample_lines(f.samples(writes).as_ref(), side.bytes_per_sec(f.wall_ns) / 1024.0);
    }
    // fio's share lines: every bucket that holds a request, five to a line; a share under
    // 0.01% is printed as 0.01% (fio's stat_calc_lat).
    let all = f.all_latency();
    for unit in [LatencyUnit::Nsec, LatencyUnit::Usec, LatencyUnit::Msec] {
        let shares: Vec<String> = latency_shares(&all, unit)
            .into_iter()
            .filter(|(_, pct)| *pct > 0.0)
            .map(|(bound, pct)| format!("{bound}={:.2}%", pct.max(0.01)))
            .collect();
        for line in shares.chunks(5) {
            let _ = writeln!(out, "  lat ({})   : {}", unit.name(), line.join(", "));
        }
    }
    let (usr, sys) = f.cpu_percent();
    let _ = writeln!(out, "  cpu          : usr={usr:.2}%, sys={sys:.2}%");
    if let Some(d) = &f.depths {
        out += &depth_lines(d);
    }
    let _ = writeln!(out, "     issued rwts: total={},{},0,0", f.read.ios, f.write.ios);
    match &f.latency_target {
        Some(t) => out += &latency_target_lines(t),
        // fio prints the line for every job: no target, its whole depth.
        None => {
            let _ = writeln!(out, "     latency   : target=0, window=0, percentile=100.00%, depth={}", f.job.iodepth);
        }
    }
    if let Some(steady) = f.steady.as_ref().and_then(FioSteady::of) {
        out += &steady_line(&steady);
    }
    out += if f.depths.is_some() { NOT_MEASURED } else { NOT_MEASURED_OLDER };
    out
}

/// fio's three depth lines (its show_thread_status_normal): shares with one decimal, the
/// labels fio prints.
fn depth_lines(d: &QueueDepths) -> String {
    let line = |head: &str, counts: &[u64; 7], labels: &[&str; 7]| {
        let parts: Vec<String> =
            labels.iter().zip(shares(counts)).map(|(label, pct)| format!("{label}={pct:.1}%")).collect();
        format!("{head}: {}\n", parts.join(", "))
    };
    line("  IO depths    ", &d.level, &LEVEL_LABELS)
        + &line("     submit    ", &d.submit, &CALL_LABELS)
        + &line("     complete  ", &d.complete, &CALL_LABELS)
}

/// fio's `latency   :` line (its show_thread_status_normal): the target in nanoseconds, the window
/// in microseconds, the percentile, and the depth the job ran at; where no depth met the target,
/// iomatrix's line below it says so (fio's depth 1 there is where it ran, not a depth that met it).
fn latency_target_lines(t: &crate::TargetOutcome) -> String {
    let mut out = format!(
        "     latency   : target={}, window={}, percentile={:.2}%, depth={}\n",
        t.target.target_ns,
        t.target.window_ns / 1_000,
        t.target.percentile(),
        t.measured_depth
    );
    if t.depth.is_none() || !t.settled {
        out += &format!("  iomatrix: latency target: {}\n", t.describe());
    }
    out
}

/// fio's `steadystate  :` line (its show_ss_normal): the window's mean bandwidth in KiB/s (and
/// the same number with decimal prefixes, as fio prints it), its mean IOPS, and the criterion.
fn steady_line(s: &FioSteady) -> String {
    format!(
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}\n",
        if s.attained { "yes" } else { "no" },
        num2str_from(s.bw_mean / 1024, 4, 1, true, "B/s"),
        num2str_from(s.bw_mean / 1024, 4, 1, false, "B/s"),
        num2str(s.iops_mean, false, ""),
        s.figure,
        if s.slope_rule { " slope" } else { " mean dev" },
        s.criterion,
        if s.percent { "%" } else { "" }
    )
}

fn side_block(word: &str, s: &Side, wall_ns: u64) -> String {
    let mut out = String::new();
    let bw = s.bytes_per_sec(wall_ns);
    let _ = writeln!(
        out,
        "  {word}: IOPS={}, BW={}/s ({}/s)({}/{}msec)",
        count(s.iops(wall_ns)),
        binary(bw),
        decimal(bw),
        binary(s.bytes as f64),
        wall_ns / 1_000_000
    );
    // A queued request's submission apart (fio prints no slat for a synchronous engine).
    if let Some((slat, _)) = &s.split {
        out += &latency_line("slat", slat.min_ns, slat.max_ns, slat.mean_ns(), slat.stddev_ns());
    }
    let clat = s.clat();
    let c = clat.summary();
    out += &latency_line("clat", c.min_ns, c.max_ns, c.mean_ns, clat.stddev_ns());
    let l = s.latency.summary();
    out += &latency_line(" lat", l.min_ns, l.max_ns, l.mean_ns, s.latency.stddev_ns());
    let points: Vec<u64> = PERCENTILES.iter().map(|p| clat.quantile_ns(p / 100.0)).collect();
    out += &percentile_block(&points);
    out
}

/// fio's `bw (KiB/s):` and `iops :` lines (its show_ddir_status), from the samples of the job's
/// whole intervals; where it ran under one interval, the line that says there is none.
fn sample_lines(samples: Option<&SampleLines>, aggregate_kib: f64) -> String {
    let Some(SampleLines { bw_kib: bw, iops }) = samples else {
        return "   bw and iops: no sample (the job ran under one whole interval; iomatrix fio takes one each 500 ms, \
                as fio's bwavgtime)\n"
            .to_string();
    };
    // Past 1 GiB/s fio gives the bandwidth in MiB/s (its `mean > fkb_base * fkb_base`); the
    // unit in fio's `%5s`.
    let (unit, scale) = if bw.mean > 1024.0 * 1024.0 { ("  MiB", 1024) } else { ("  KiB", 1) };
    let mut out = format!(
        "   bw ({unit}/s): min={:5}, max={:5}, per={:3.2}%, avg={:5.02}, stdev={:5.02}, samples={}\n",
        bw.min / scale,
        bw.max / scale,
        super::json::share_of(bw.mean, aggregate_kib),
        bw.mean / scale as f64,
        bw.stdev / scale as f64,
        bw.count
    );
    let _ = writeln!(
        out,
        "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
        iops.min, iops.max, iops.mean, iops.stdev, iops.count
    );
    out
}

/// fio's `clat percentiles (UNIT):` block (its show_clat_percentiles): the unit from the
/// smallest and largest value, each value scaled up to whole units (fio rounds up), all in one
/// width (the largest value's digits, 5 at least), as many to a line as fit in 80 columns.
fn percentile_block(points: &[u64]) -> String {
    let (unit, scale) = percentile_unit(points);
    let largest = points.iter().max().copied().unwrap_or(0);
    let width = ((largest / scale).max(1).ilog10() as usize + 1).max(5);
    // fio's per_line: (80 - 7) / (precision + 10 + width), at its default precision of 2.
    let per_line = 73 / (12 + width);
    let cells: Vec<String> = PERCENTILE_LABELS
        .iter()
        .zip(points)
        // fio's `[%*llu]`: a number in fio's one width inside fio's line, not a column of an
        // iomatrix table (a number right-aligns in a width by itself).
        .map(|(p, &ns)| format!(" {p}th=[{:width$}]", ns.div_ceil(scale)))
        .collect();
    let mut out = format!("    clat percentiles ({unit}):\n");
    let lines = cells.len().div_ceil(per_line);
    for (i, line) in cells.chunks(per_line).enumerate() {
        let _ = writeln!(out, "     |{}{}", line.join(","), if i + 1 < lines { "," } else { "" });
    }
    out
}

/// One of fio's `slat`, `clat` and ` lat` lines (its display_lat): each line in its own unit,
/// micro- or milliseconds only where the minimum, maximum and deviation are all large enough
/// (fio's nsec_to_usec and nsec_to_msec), the extremes whole in 6 figures (`71621k`).
fn latency_line(name: &str, min_ns: u64, max_ns: u64, mean_ns: f64, stddev_ns: f64) -> String {
    let scale: u64 = if min_ns > 2_000_000 && max_ns > 99_999_999 && stddev_ns > 1_000_000.0 {
        1_000_000
    } else if min_ns > 2_000 && max_ns > 99_999 && stddev_ns > 1_000.0 {
        1_000
    } else {
        1
    };
    let unit = match scale {
        1 => "nsec",
        1_000 => "usec",
        _ => "msec",
    };
    format!(
        "    {name} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}\n",
        num2str_digits(min_ns / scale, 6, false, ""),
        num2str_digits(max_ns / scale, 6, false, ""),
        mean_ns / scale as f64,
        stddev_ns / scale as f64
    )
}

/// The unit of fio's percentile block: from the smallest and largest of its values (fio's
/// show_clat_percentiles), nanoseconds unless both are large.
fn percentile_unit(points: &[u64]) -> (&'static str, u64) {
    let low = points.iter().min().copied().unwrap_or(0);
    let high = points.iter().max().copied().unwrap_or(0);
    if low > 2_000_000 && high > 99_999_999 {
        ("msec", 1_000_000)
    } else if low > 2_000 && high > 99_999 {
        ("usec", 1_000)
    } else {
        ("nsec", 1)
    }
}

/// A count as fio prints IOPS: whole up to 4 digits, else in thousands (k, M, G) to 4 figures.
fn count(v: f64) -> String {
    num2str(v.round() as u64, false, "")
}

/// Bytes in powers of 1024, as fio's BW=...MiB.
fn binary(v: f64) -> String {
    num2str(v.round() as u64, true, "B")
}

/// Bytes in powers of 1000, as fio's (...MB).
fn decimal(v: f64) -> String {
    num2str(v.round() as u64, false, "B")
}

/// A size as fio's job line prints a block size (`4096B`, `9.77KiB`, `128KiB`, `1024KiB`).
pub fn fio_size(bytes: u64) -> String {
    num2str(bytes, true, "B")
}

/// fio's num2str (lib/num2str.c) at its default of 4 significant figures: the number divided by
/// 1000 (or 1024 with `pow2`) until it has 4 digits or fewer; then the fraction of the last
/// division fills what room is left after a point, or, with no room for two figures, rounds
/// the whole number (fio rounds up from half a unit).
fn num2str(num: u64, pow2: bool, unit: &str) -> String {
    num2str_digits(num, 4, pow2, unit)
}

/// fio's num2str at `max_digits` significant figures (4 for sizes and rates, 6 for latencies).
fn num2str_digits(num: u64, max_digits: usize, pow2: bool, unit: &str) -> String {
    num2str_from(num, max_digits, 0, pow2, unit)
}

/// fio's num2str of a number already in units of a prefix (its `base` argument): `first` is that
/// prefix's place (1 for kilo). fio finds it by dividing base by 1000 or 1024 as `pow2` says, so a
/// number of KiB printed with decimal prefixes keeps its digits and reads as kB (show_ss_normal's
/// `bw=7813KiB/s (7813kB/s)`).
fn num2str_from(mut num: u64, max_digits: usize, first: usize, pow2: bool, unit: &str) -> String {
    let prefixes: [&str; 6] = if pow2 { ["", "Ki", "Mi", "Gi", "Ti", "Pi"] } else { ["", "k", "M", "G", "T", "P"] };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut prefix = first;
    let mut last_remainder = None;
    while prefix < prefixes.len() && num.to_string().len() > max_digits {
        last_remainder = Some(num % thousand);
        num /= thousand;
        prefix += 1;
    }
    if prefix >= prefixes.len() {
        prefix = 0;
    }
    let Some(remainder) = last_remainder else {
        return format!("{num}{}{unit}", prefixes[prefix]);
    };
    let digits = num.to_string().len();
    if max_digits - digits <= 1 {
        let carry = u64::from(remainder >= thousand / 2);
        return format!("{}{}{unit}", num + carry, prefixes[prefix]);
    }
    // fio prints the fraction's own digits after the whole number's, as "%.Nf" writes them.
    let fraction = format!("{:.*}", max_digits - digits - 1, remainder as f64 / thousand as f64);
    format!("{num}.{}{}{unit}", &fraction[2..], prefixes[prefix])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's show_ss_normal from the same figures: bw_mean 8,192,000 B/s is 8000 KiB/s,
    /// printed with binary and (fio's quirk: the KiB count kept) decimal prefixes.
    #[test]
    fn the_steady_state_line_reads_as_fio_writes_it() {
        let steady = FioSteady {
            attained: true,
            ss: "iops:5.000000%".into(),
            duration: 3,
            iops: vec![2000, 2000, 2000],
            bw: vec![8_192_000; 3],
            iops_mean: 2000,
            bw_mean: 8_192_000,
            criterion: 0.0,
            percent: true,
            max_deviation: 0.0,
            slope: 0.0,
            figure: "iops",
            slope_rule: false,
        };
        assert_eq!(
            steady_line(&steady),
            "  steadystate  : attained=yes, bw=8000KiB/s (8000kB/s), iops=2000, iops mean dev=0.000%\n"
        );
        let slope = FioSteady { attained: false, slope_rule: true, criterion: -1.23456, bw_mean: 80 << 20, ..steady };
        assert_eq!(
            steady_line(&slope),
            "  steadystate  : attained=no, bw=80.0MiB/s (81.9MB/s), iops=2000, iops slope=-1.235%\n"
        );
    }

    #[test]
    fn numbers_read_as_fio_prints_them() {
        assert_eq!(count(7866.0), "7866");
        assert_eq!(count(15234.0), "15.2k");
        assert_eq!(count(180_000.0), "180k");
        assert_eq!(binary(703.0 * 1048576.0), "703MiB");
        assert_eq!(decimal(703.0 * 1048576.0), "737MB");
        assert_eq!(binary(6256.0 * 1024.0), "6256KiB");
        assert_eq!(binary(30.7 * 1048576.0), "30.7MiB");
        assert_eq!(count(11136.0), "11.1k");
    }

    /// fio 3.33's lines for one io_uring job on this machine, from the same figures.
    #[test]
    fn latency_lines_take_their_units_as_fio_3_33_chose_them() {
        assert_eq!(
            latency_line("slat", 3_100, 4_200_000, 17_200.0, 41_770.0),
            "    slat (usec): min=3, max=4200, avg=17.20, stdev=41.77\n"
        );
        assert_eq!(
            latency_line("clat", 191, 71_621_000, 166_977.67, 1_334_921.42),
            "    clat (nsec): min=191, max=71621k, avg=166977.67, stdev=1334921.42\n"
        );
        assert_eq!(
            latency_line("slat", 862, 5_126_000, 14_267.12, 124_306.78),
            "    slat (nsec): min=862, max=5126.0k, avg=14267.12, stdev=124306.78\n"
        );
        assert_eq!(
            latency_line(" lat", 5_000, 77_733_000, 149_310.0, 1_884_120.0),
            "     lat (usec): min=5, max=77733, avg=149.31, stdev=1884.12\n"
        );
        assert_eq!(
            latency_line("clat", 12, 40, 20.0, 0.0),
            "    clat (nsec): min=12, max=40, avg=20.00, stdev= 0.00\n"
        );
        assert_eq!(percentile_unit(&[724, 78_118_912]).0, "nsec");
        // fio 3.33's block for the reads of that job: four to a line in usec, three in nsec.
        let usec = [
            36_000, 53_000, 61_000, 72_000, 81_000, 90_000, 99_000, 109_000, 119_000, 130_000, 149_000, 167_000,
            1_909_000, 3_294_000, 4_424_000, 35_914_000, 53_740_000,
        ];
        assert_eq!(
            percentile_block(&usec),
            "    clat percentiles (usec):
     |  1.00th=[   36],  5.00th=[   53], 10.00th=[   61], 20.00th=[   72],
     | 30.00th=[   81], 40.00th=[   90], 50.00th=[   99], 60.00th=[  109],
     | 70.00th=[  119], 80.00th=[  130], 90.00th=[  149], 95.00th=[  167],
     | 99.00th=[ 1909], 99.50th=[ 3294], 99.90th=[ 4424], 99.95th=[35914],
     | 99.99th=[53740]
"
        );
        let nsec = [
            724, 1_320, 8_512, 21_632, 30_592, 36_096, 42_240, 48_896, 57_600, 69_120, 84_480, 101_888, 1_613_824,
            3_620_864, 26_869_760, 53_215_232, 78_118_912,
        ];
        assert_eq!(
            percentile_block(&nsec),
            "    clat percentiles (nsec):
     |  1.00th=[     724],  5.00th=[    1320], 10.00th=[    8512],
     | 20.00th=[   21632], 30.00th=[   30592], 40.00th=[   36096],
     | 50.00th=[   42240], 60.00th=[   48896], 70.00th=[   57600],
     | 80.00th=[   69120], 90.00th=[   84480], 95.00th=[  101888],
     | 99.00th=[ 1613824], 99.50th=[ 3620864], 99.90th=[26869760],
     | 99.95th=[53215232], 99.99th=[78118912]
"
        );
        assert_eq!(percentile_unit(&[36_000, 53_740_000]).0, "usec");
    }

    /// Every size here as fio 3.33 printed it in its job line (`bs=(R) ...`) on this machine.
    #[test]
    fn block_sizes_read_as_fio_3_33_printed_them() {
        let printed = [
            (512, "512B"),
            (1000, "1000B"),
            (4096, "4096B"),
            (8192, "8192B"),
            (10_000, "9.77KiB"),
            (16 << 10, "16.0KiB"),
            (64 << 10, "64.0KiB"),
            (100 << 10, "100KiB"),
            (128 << 10, "128KiB"),
            (1 << 20, "1024KiB"),
            (1536 << 10, "1536KiB"),
            (4 << 20, "4096KiB"),
            (10 << 20, "10.0MiB"),
            (100 << 20, "100MiB"),
            (1 << 30, "1024MiB"),
            (3 << 30, "3072MiB"),
        ];
        for (bytes, fio) in printed {
            assert_eq!(fio_size(bytes), fio, "{bytes} bytes");
        }
    }
}
