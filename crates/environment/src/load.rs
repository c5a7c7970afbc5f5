//! What else the machine did while a cell ran: other processes' CPU time, steal, the load
//! average, pressure stall information and other processes' I/O on the target's device.
//!
//! A [`LoadReading`] is taken at a cell's start and end (never inside its timed loop); two of
//! them give a cell's [`MachineLoad`], which a cell stores, and [`BusyThresholds::judge`] says
//! whether the machine was busy enough to disturb it. Every part is `None` where its file could
//! not be read or made no sense (no PSI in a container, a remote target with no local device):
//! unknown stays unknown, never 0.
//!
//! The parsers take the files' text, so they are tested with fixed text. CPU times are compared
//! in the kernel's USER_HZ ticks, which `/proc/stat` and `/proc/self/stat` share, so no clock
//! rate is needed.

use serde::{Deserialize, Serialize};

/// Other processes' CPU use below this share of one CPU is never busy: the kernel's own
/// threads and the sampling's rounding (ticks against precise per-process times) are not load.
const OTHER_CPU_FLOOR: f64 = 0.10;
/// Steal below this share of one CPU is never busy (rounding of a few ticks).
const STEAL_CPU_FLOOR: f64 = 0.02;
/// A span shorter than this many ticks of each CPU gives no CPU shares (unknown).
const FEWEST_TICKS_PER_CPU: u64 = 10;
/// Other processes' I/O below this is never busy (a journal commit, an atime update).
const OTHER_IO_FLOOR_BYTES: u64 = 4 << 20;

/// The CPU times of `/proc/stat`'s first line (all CPUs), in USER_HZ ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time spent running anything: user, nice, system, irq and softirq (guest time is in user).
    pub busy: u64,
    /// Time with nothing to run: idle and iowait.
    pub idle: u64,
    /// Time the hypervisor ran another guest while this one had work.
    pub steal: u64,
    /// The CPUs' `cpuN` lines: how many CPUs the sums are over.
    pub cpus: u32,
}

/// One resource's pressure stall information (`/proc/pressure/cpu`, `io`, `memory`): its
/// `some` line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// The share of the last 10 s in which some task waited for the resource, in percent.
    pub some_avg10: f64,
    /// Microseconds some task waited for it since boot.
    pub some_total_us: u64,
}

/// The machine's counters at one moment, each None where unreadable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReading {
    /// `/proc/stat`'s CPU times.
    pub cpu: Option<CpuTimes>,
    /// This process's own CPU time (user and system, every thread, live or ended), in ticks.
    pub own_cpu: Option<u64>,
    /// The 1-minute load average.
    pub load_avg: Option<f64>,
    /// `/proc/pressure/cpu`.
    pub pressure_cpu: Option<Pressure>,
    /// `/proc/pressure/io`.
    pub pressure_io: Option<Pressure>,
    /// `/proc/pressure/memory`.
    pub pressure_memory: Option<Pressure>,
    /// Bytes read and written on the target's block device (`/proc/diskstats`, 512-byte sectors).
    pub device_bytes: Option<u64>,
    /// The target's block device's counters (`/proc/diskstats`).
    pub device_counters: Option<DiskCounters>,
    /// Bytes this process had the storage read or write for it (`/proc/self/io`).
    pub own_io_bytes: Option<u64>,
}

/// One block device's counters of `/proc/diskstats` (the kernel's Documentation/admin-guide/
/// iostats.rst): what fio's "Disk stats" are the differences of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskCounters {
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged with a neighbour before they reached the device.
    pub read_merges: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Milliseconds reads took, summed over the reads.
    pub read_ticks_ms: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
    /// Milliseconds writes took, summed.
    pub write_ticks_ms: u64,
    /// Milliseconds the device had at least one request in flight (fio's util is this over
    /// the time it watched).
    pub io_ticks_ms: u64,
    /// Milliseconds of requests in flight, weighted by their number (fio's in_queue).
    pub in_queue_ms: u64,
}

impl DiskCounters {
    /// Both spans' activity together (two jobs on one device, one after the other).
    #[must_use]
    pub fn plus(&self, other: &DiskCounters) -> DiskCounters {
        DiskCounters {
            read_ios: self.read_ios + other.read_ios,
            read_merges: self.read_merges + other.read_merges,
            read_sectors: self.read_sectors + other.read_sectors,
            read_ticks_ms: self.read_ticks_ms + other.read_ticks_ms,
            write_ios: self.write_ios + other.write_ios,
            write_merges: self.write_merges + other.write_merges,
            write_sectors: self.write_sectors + other.write_sectors,
            write_ticks_ms: self.write_ticks_ms + other.write_ticks_ms,
            io_ticks_ms: self.io_ticks_ms + other.io_ticks_ms,
            in_queue_ms: self.in_queue_ms + other.in_queue_ms,
        }
    }

    /// What the device did from `start` to `self`; None where a counter went back (the device
    /// was replaced, or its counters wrapped).
    pub fn since(&self, start: &DiskCounters) -> Option<DiskCounters> {
        Some(DiskCounters {
            read_ios: self.read_ios.checked_sub(start.read_ios)?,
            read_merges: self.read_merges.checked_sub(start.read_merges)?,
            read_sectors: self.read_sectors.checked_sub(start.read_sectors)?,
            read_ticks_ms: self.read_ticks_ms.checked_sub(start.read_ticks_ms)?,
            write_ios: self.write_ios.checked_sub(start.write_ios)?,
            write_merges: self.write_merges.checked_sub(start.write_merges)?,
            write_sectors: self.write_sectors.checked_sub(start.write_sectors)?,
            write_ticks_ms: self.write_ticks_ms.checked_sub(start.write_ticks_ms)?,
            io_ticks_ms: self.io_ticks_ms.checked_sub(start.io_ticks_ms)?,
            in_queue_ms: self.in_queue_ms.checked_sub(start.in_queue_ms)?,
        })
    }
}

impl LoadReading {
    /// Reads every counter now; `device` is the target's block device's name in
    /// `/proc/diskstats` ("sda1", "loop3"), None where the target has none here.
    pub fn now(device: Option<&str>) -> LoadReading {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let counters = device.and_then(|d| read("/proc/diskstats").and_then(|t| parse_disk_counters(&t, d)));
        LoadReading {
            cpu: read("/proc/stat").and_then(|t| parse_stat(&t)),
            own_cpu: read("/proc/self/stat").and_then(|t| parse_own_cpu(&t)),
            load_avg: read("/proc/loadavg").and_then(|t| parse_loadavg(&t)),
            pressure_cpu: read("/proc/pressure/cpu").and_then(|t| parse_pressure(&t)),
            pressure_io: read("/proc/pressure/io").and_then(|t| parse_pressure(&t)),
            pressure_memory: read("/proc/pressure/memory").and_then(|t| parse_pressure(&t)),
            device_bytes: counters.map(|c| c.read_sectors.saturating_add(c.write_sectors).saturating_mul(512)),
            device_counters: counters,
            own_io_bytes: read("/proc/self/io").and_then(|t| parse_own_io(&t)),
        }
    }
}

/// `/proc/stat`'s `cpu` line and the count of `cpuN` lines; None without a sane `cpu` line.
pub fn parse_stat(text: &str) -> Option<CpuTimes> {
    let mut lines = text.lines();
    let first = lines.next()?;
    let mut fields = first.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let n: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal: older kernels stop before steal.
    if n.len() < 4 {
        return None;
    }
    let at = |i: usize| n.get(i).copied().unwrap_or(0);
    let cpus = text
        .lines()
        .filter(|l| l.strip_prefix("cpu").is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())))
        .count() as u32;
    Some(CpuTimes { busy: at(0) + at(1) + at(2) + at(5) + at(6), idle: at(3) + at(4), steal: at(7), cpus: cpus.max(1) })
}

/// `/proc/self/stat`'s utime and stime (fields 14 and 15), counted after the command's name,
/// which may hold spaces and parentheses.
pub fn parse_own_cpu(text: &str) -> Option<u64> {
    let after_name = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The 1-minute load average, the first field of `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)
}

/// The `some` line of a `/proc/pressure/*` file: `some avg10=1.23 avg60=... total=12345`.
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let field = |name: &str| line.split_whitespace().find_map(|f| f.strip_prefix(name));
    let some_avg10: f64 = field("avg10=")?.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let some_total_us = field("total=")?.parse().ok()?;
    Some(Pressure { some_avg10, some_total_us })
}

/// Bytes read and written on `device` from `/proc/diskstats` (sectors are 512 bytes whatever
/// the device's block size).
pub fn parse_diskstats(text: &str, device: &str) -> Option<u64> {
    parse_disk_counters(text, device).map(|c| c.read_sectors.saturating_add(c.write_sectors).saturating_mul(512))
}

/// `device`'s line of `/proc/diskstats`: after major, minor and name, reads (completed, merged,
/// sectors, ms), writes (the same four), requests in flight, ms busy and weighted ms.
pub fn parse_disk_counters(text: &str, device: &str) -> Option<DiskCounters> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(2) != Some(&device) {
            return None;
        }
        let at = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        Some(DiskCounters {
            read_ios: at(3)?,
            read_merges: at(4)?,
            read_sectors: at(5)?,
            read_ticks_ms: at(6)?,
            write_ios: at(7)?,
            write_merges: at(8)?,
            write_sectors: at(9)?,
            write_ticks_ms: at(10)?,
            io_ticks_ms: at(12)?,
            in_queue_ms: at(13)?,
        })
    })
}

/// `read_bytes` and `write_bytes` of `/proc/self/io`: what this process had the storage do.
pub fn parse_own_io(text: &str) -> Option<u64> {
    let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok());
    Some(field("read_bytes:")?.saturating_add(field("write_bytes:")?))
}

/// What else the machine did during a cell, as the cell stores it. CPU shares are in CPUs
/// (1.6: 160% of one CPU); every field null where unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineLoad {
    /// CPUs the sums are over.
    pub cpus: Option<u32>,
    /// Other processes' CPU use: the machine's busy time less this process's own.
    pub other_cpu: Option<f64>,
    /// This process's own CPU use.
    pub own_cpu: Option<f64>,
    /// CPU time nothing ran (idle and iowait).
    pub idle_cpu: Option<f64>,
    /// The hypervisor's steal, in CPUs.
    pub steal_cpu: Option<f64>,
    /// The 1-minute load average at the cell's start ...
    pub load_avg_start: Option<f64>,
    /// ... and at its end.
    pub load_avg_end: Option<f64>,
    /// CPU pressure stall information at the start and end.
    pub pressure_cpu: Option<PressureSpan>,
    /// I/O pressure, likewise.
    pub pressure_io: Option<PressureSpan>,
    /// Memory pressure, likewise.
    pub pressure_memory: Option<PressureSpan>,
    /// The target's block device, where it has one here.
    pub device: Option<String>,
    /// Bytes this process had the storage read or write during the cell.
    pub own_io_bytes: Option<u64>,
    /// What the target's device did during the cell, everyone's requests together (fio's "Disk
    /// stats"); None where it has no device here or a counter went back.
    pub device_activity: Option<DiskCounters>,
    /// Bytes others read or wrote on the target's device during the cell, beyond what this
    /// process caused (its earlier writes reaching the device count as its own: [`IoLedger`]).
    pub other_io_bytes: Option<u64>,
    /// How long the run waited for the machine to settle before the cell (`--settle`).
    pub settle: Option<Settle>,
    /// The span the CPU figures are over, in ns: the cell's, or the last second for a shorter cell.
    pub window_ns: Option<u64>,
    /// Other processes' CPU use in each second of a cell that ran past a second (the last part
    /// cut short by the cell's end), null for a second it is unknown in; None for a shorter cell.
    pub other_cpu_per_second: Option<Vec<Option<f64>>>,
}

/// One resource's pressure over a cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PressureSpan {
    /// `some avg10` at the cell's start, in percent ...
    pub some_avg10_start: f64,
    /// ... and at its end.
    pub some_avg10_end: f64,
    /// Microseconds some task stalled on the resource during the cell.
    pub some_stall_us: u64,
}

/// What `--settle` did before a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settle {
    /// How long it waited, in ns.
    pub waited_ns: u64,
    /// Whether it gave up: the machine was still busy when the wait's limit came.
    pub gave_up: bool,
}

/// The run's I/O on the target's device against the device's own count, over the run: what this
/// process dirties reaches the device later (write-back), so a cell's other I/O is what the
/// device did beyond everything this process caused since the run began, not since the cell did.
#[derive(Debug, Clone, Default)]
pub struct IoLedger {
    /// The device's and this process's counts at the run's first reading.
    origin: Option<(u64, u64)>,
    /// The highest excess of the device's bytes over this process's seen so far.
    high_water: i128,
}

impl IoLedger {
    /// Bytes beyond everything this process caused that the device did between the last call
    /// and `end`; None where either count is unknown.
    pub fn other_bytes(&mut self, end: &LoadReading) -> Option<u64> {
        let (device, own) = (end.device_bytes?, end.own_io_bytes?);
        let (device0, own0) = *self.origin.get_or_insert((device, own));
        let excess = i128::from(device) - i128::from(device0) - (i128::from(own) - i128::from(own0));
        let other = (excess - self.high_water).max(0);
        self.high_water = self.high_water.max(excess);
        Some(other.min(i128::from(u64::MAX)) as u64)
    }
}

impl MachineLoad {
    /// The machine's load between two readings; `device` names the target's device.
    pub fn between(start: &LoadReading, end: &LoadReading, device: Option<&str>, ledger: &mut IoLedger) -> MachineLoad {
        let cpu = cpu_shares(start, end);
        let span = |a: Option<Pressure>, b: Option<Pressure>| {
            let (a, b) = (a?, b?);
            Some(PressureSpan {
                some_avg10_start: a.some_avg10,
                some_avg10_end: b.some_avg10,
                some_stall_us: b.some_total_us.checked_sub(a.some_total_us)?,
            })
        };
        MachineLoad {
            cpus: end.cpu.map(|c| c.cpus),
            other_cpu: cpu.map(|c| c.other),
            own_cpu: cpu.map(|c| c.own),
            idle_cpu: cpu.map(|c| c.idle),
            steal_cpu: cpu.map(|c| c.steal),
            load_avg_start: start.load_avg,
            load_avg_end: end.load_avg,
            pressure_cpu: span(start.pressure_cpu, end.pressure_cpu),
            pressure_io: span(start.pressure_io, end.pressure_io),
            pressure_memory: span(start.pressure_memory, end.pressure_memory),
            device: device.filter(|_| end.device_bytes.is_some()).map(str::to_string),
            own_io_bytes: end.own_io_bytes.zip(start.own_io_bytes).and_then(|(e, s)| e.checked_sub(s)),
            device_activity: end.device_counters.zip(start.device_counters).and_then(|(e, s)| e.since(&s)),
            other_io_bytes: ledger.other_bytes(end),
            settle: None,
            window_ns: None,
            other_cpu_per_second: None,
        }
    }
}

/// Other processes' CPU use between each two readings in turn (a cell's seconds), in CPUs.
pub fn other_cpu_series(readings: &[LoadReading]) -> Vec<Option<f64>> {
    readings.windows(2).map(|pair| cpu_shares(&pair[0], &pair[1]).map(|c| c.other)).collect()
}

/// CPU use between two readings, in CPUs.
#[derive(Debug, Clone, Copy)]
struct CpuShares {
    other: f64,
    own: f64,
    idle: f64,
    steal: f64,
}

/// None where a count is unknown, went backwards, or no time passed.
fn cpu_shares(start: &LoadReading, end: &LoadReading) -> Option<CpuShares> {
    let (a, b) = (start.cpu?, end.cpu?);
    let delta = |x: u64, y: u64| y.checked_sub(x);
    let (busy, idle, steal) = (delta(a.busy, b.busy)?, delta(a.idle, b.idle)?, delta(a.steal, b.steal)?);
    let own = delta(start.own_cpu?, end.own_cpu?)?;
    let total = busy + idle + steal;
    // Fewer ticks than this per CPU (100 ms at the usual 100 Hz) say nothing of a share.
    if total < u64::from(b.cpus.max(1)) * FEWEST_TICKS_PER_CPU {
        return None;
    }
    // Ticks of one CPU over the span: the machine's ticks shared over its CPUs.
    let span = total as f64 / f64::from(b.cpus.max(1));
    Some(CpuShares {
        other: busy.saturating_sub(own) as f64 / span,
        own: own as f64 / span,
        idle: idle as f64 / span,
        steal: steal as f64 / span,
    })
}

/// When the machine counts as busy: other processes' CPU against the idle CPU, steal against the
/// run's own CPU, other I/O against the run's own, each in percent; None turns that rule off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BusyThresholds {
    /// Other processes' CPU, in percent of the idle CPU.
    pub cpu_pct: Option<f64>,
    /// Steal, in percent of the run's own CPU.
    pub steal_pct: Option<f64>,
    /// Other I/O on the target's device, in percent of the run's own.
    pub io_pct: Option<f64>,
}

impl Default for BusyThresholds {
    /// Other processes used more CPU than was free, steal above 10% of the run's CPU time, other
    /// I/O above 10% of the run's.
    fn default() -> BusyThresholds {
        BusyThresholds { cpu_pct: Some(100.0), steal_pct: Some(10.0), io_pct: Some(10.0) }
    }
}

impl BusyThresholds {
    /// Every rule off.
    pub const OFF: BusyThresholds = BusyThresholds { cpu_pct: None, steal_pct: None, io_pct: None };

    /// `off`, or `cpu=100%,steal=10%,io=10%` with any of the three (the others keep their
    /// defaults), each a percentage or `off`. The error says what is wrong and how to write it.
    pub fn parse(text: &str) -> Result<BusyThresholds, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(BusyThresholds::OFF);
        }
        let mut thresholds = BusyThresholds::default();
        for part in text.split(',').map(str::trim) {
            let (name, value) = part.split_once('=').ok_or_else(|| format!("'{part}' is not NAME=PERCENT"))?;
            let value = parse_percent(value.trim())
                .ok_or_else(|| format!("'{part}': {} is not a percentage (write e.g. 50% or off)", value.trim()))?;
            match name.trim() {
                "cpu" => thresholds.cpu_pct = value,
                "steal" => thresholds.steal_pct = value,
                "io" => thresholds.io_pct = value,
                other => return Err(format!("'{other}' is not a threshold: the names are cpu, steal and io")),
            }
        }
        Ok(thresholds)
    }

    /// The rule as `--busy-threshold` takes it: "cpu=100%,steal=10%,io=10%", "off".
    pub fn describe(&self) -> String {
        if self.is_off() {
            return "off".into();
        }
        let one = |name: &str, pct: Option<f64>| match pct {
            Some(pct) => format!("{name}={pct}%"),
            None => format!("{name}=off"),
        };
        [one("cpu", self.cpu_pct), one("steal", self.steal_pct), one("io", self.io_pct)].join(",")
    }

    /// Whether every rule is off.
    pub fn is_off(&self) -> bool {
        *self == BusyThresholds::OFF
    }

    /// Why the machine was busy during a cell ("machine busy: other processes 160% of a CPU while
    /// 40% was free, steal 2%"), or None: by a rule that is on, over what is known.
    pub fn judge(&self, load: &MachineLoad) -> Option<String> {
        let mut said = Vec::new();
        if let (Some(pct), Some(other), Some(idle)) = (self.cpu_pct, load.other_cpu, load.idle_cpu) {
            if other > OTHER_CPU_FLOOR && other > idle * pct / 100.0 {
                said.push(format!("other processes {} of a CPU while {} was free", share(other), share(idle)));
            }
        }
        if let (Some(pct), Some(steal), Some(own)) = (self.steal_pct, load.steal_cpu, load.own_cpu) {
            if steal > STEAL_CPU_FLOOR && steal > own * pct / 100.0 {
                said.push(format!("the hypervisor stole {} of a CPU, the run used {}", share(steal), share(own)));
            }
        }
        if let (Some(pct), Some(other), Some(own)) = (self.io_pct, load.other_io_bytes, load.own_io_bytes) {
            if other > OTHER_IO_FLOOR_BYTES && other as f64 > own as f64 * pct / 100.0 {
                let device = load.device.as_deref().unwrap_or("the target's device");
                said.push(format!("other I/O on {device} {} beside the run's {}", mib(other), mib(own)));
            }
        }
        if said.is_empty() {
            return None;
        }
        // Steal is said beside a CPU cause where there was any: it is part of the picture.
        if let (Some(steal), 1) = (load.steal_cpu.filter(|s| *s > STEAL_CPU_FLOOR), said.len()) {
            if said[0].starts_with("other processes") {
                said[0] += &format!(", steal {}", share(steal));
            }
        }
        Some(format!("machine busy: {}", said.join("; ")))
    }
}

/// "100%", "10", "2.5%" as a percentage, or "off" as None; Err (None outside) for anything else.
fn parse_percent(text: &str) -> Option<Option<f64>> {
    if text.eq_ignore_ascii_case("off") {
        return Some(None);
    }
    let number: f64 = text.strip_suffix('%').unwrap_or(text).trim().parse().ok()?;
    (number.is_finite() && number >= 0.0).then_some(Some(number))
}

/// A share of one CPU as a percentage: "160%".
fn share(cpus: f64) -> String {
    format!("{:.0}%", cpus * 100.0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  1000 10 500 8000 200 5 5 30 0 0\n\
                        cpu0 500 5 250 4000 100 3 2 15 0 0\n\
                        cpu1 500 5 250 4000 100 2 3 15 0 0\n\
                        intr 12345\nctxt 999\n";

    #[test]
    fn proc_stat_gives_busy_idle_steal_and_the_cpu_count() {
        let cpu = parse_stat(STAT).expect("a sane cpu line");
        assert_eq!(cpu, CpuTimes { busy: 1000 + 10 + 500 + 5 + 5, idle: 8200, steal: 30, cpus: 2 });
        // A kernel without steal (four fields) reads it as 0 steal; anything odder is unknown.
        assert_eq!(parse_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").map(|c| (c.busy, c.idle, c.steal)), Some((6, 4, 0)));
        for odd in ["", "cpu0 1 2 3 4\n", "cpu 1 2 x 4\n", "intr 5\n", "cpu\n"] {
            assert_eq!(parse_stat(odd), None, "{odd:?}");
        }
    }

    #[test]
    fn own_cpu_is_read_past_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (iomatrix (x) y) R 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 9 0 1234 5678 90";
        assert_eq!(parse_own_cpu(stat), Some(325));
        assert_eq!(parse_own_cpu("4242 (short) R 1 2"), None);
        assert_eq!(parse_own_cpu("no name at all"), None);
    }

    #[test]
    fn loadavg_pressure_diskstats_and_own_io_parse_and_refuse_nothing() {
        assert_eq!(parse_loadavg("8.50 6.12 3.01 3/456 7890\n"), Some(8.5));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("nan 1 1"), None);
        let psi =
            "some avg10=12.34 avg60=5.00 avg300=1.00 total=987654\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure(psi), Some(Pressure { some_avg10: 12.34, some_total_us: 987_654 }));
        // The CPU file has no `full` line on older kernels; a file without `some` is unknown.
        assert_eq!(parse_pressure("full avg10=1.00 avg60=0 avg300=0 total=5\n"), None);
        assert_eq!(parse_pressure("some avg10=x total=5\n"), None);
        let disk = "   7       3 loop3 120 0 2048 10 80 0 4096 20 0 30 30\n   8       1 sda1 1 0 8 0 1 0 8 0 0 0 0\n";
        assert_eq!(parse_diskstats(disk, "loop3"), Some((2048 + 4096) * 512));
        assert_eq!(parse_diskstats(disk, "loop"), None, "a name is matched whole");
        assert_eq!(parse_diskstats("   7 3 loop3 1 0\n", "loop3"), None, "a short line is unknown");
        let counters = parse_disk_counters(disk, "loop3").unwrap();
        let want = DiskCounters {
            read_ios: 120,
            read_merges: 0,
            read_sectors: 2048,
            read_ticks_ms: 10,
            write_ios: 80,
            write_merges: 0,
            write_sectors: 4096,
            write_ticks_ms: 20,
            io_ticks_ms: 30,
            in_queue_ms: 30,
        };
        assert_eq!(counters, want);
        let later = DiskCounters { read_ios: 150, io_ticks_ms: 45, ..want };
        let done = later.since(&want).unwrap();
        assert_eq!((done.read_ios, done.write_ios, done.io_ticks_ms), (30, 0, 15));
        assert_eq!(want.plus(&done), later, "a span and the next add up to both");
        assert_eq!(want.since(&later), None, "a counter that went back is unknown, not a wrap to 2^64");
        let io =
            "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_own_io(io), Some(12288));
        assert_eq!(parse_own_io("rchar: 10\n"), None);
    }

    fn reading(busy: u64, idle: u64, steal: u64, own: u64) -> LoadReading {
        LoadReading { cpu: Some(CpuTimes { busy, idle, steal, cpus: 2 }), own_cpu: Some(own), ..LoadReading::default() }
    }

    #[test]
    fn a_cell_beside_a_hog_is_busy_and_a_quiet_one_is_not() {
        let mut ledger = IoLedger::default();
        // 200 ticks on 2 CPUs (100 ticks of one CPU): the run 37, others 160, steal 3, idle 0.
        let hog = MachineLoad::between(&reading(0, 0, 0, 0), &reading(197, 0, 3, 37), None, &mut ledger);
        assert_eq!(hog.other_cpu, Some(1.6));
        let cause = BusyThresholds::default().judge(&hog).expect("others 160% while nothing was free");
        assert_eq!(cause, "machine busy: other processes 160% of a CPU while 0% was free, steal 3%");
        let quiet = MachineLoad::between(&reading(0, 0, 0, 0), &reading(45, 155, 0, 40), None, &mut ledger);
        assert_eq!(BusyThresholds::default().judge(&quiet), None, "{quiet:?}");
        assert_eq!(BusyThresholds::OFF.judge(&hog), None, "off judges nothing");
        // Others 60% while 40% was free: they competed; at cpu=200% they must use twice the free.
        let half = MachineLoad::between(&reading(0, 0, 0, 0), &reading(160, 40, 0, 100), None, &mut ledger);
        assert!(BusyThresholds::default().judge(&half).is_some(), "{half:?}");
        assert_eq!(BusyThresholds::parse("cpu=200%").unwrap().judge(&half), None);
    }

    #[test]
    fn a_series_is_each_seconds_others_and_unknown_where_a_second_is() {
        let series = other_cpu_series(&[
            reading(0, 0, 0, 0),
            reading(150, 50, 0, 50),
            reading(160, 240, 0, 60),
            LoadReading::default(),
        ]);
        assert_eq!(series, [Some(1.0), Some(0.0), None]);
        assert!(other_cpu_series(&[reading(0, 0, 0, 0)]).is_empty());
    }

    #[test]
    fn unknown_stays_unknown_and_judges_nothing() {
        let unknown =
            MachineLoad::between(&LoadReading::default(), &LoadReading::default(), None, &mut IoLedger::default());
        assert_eq!(unknown, MachineLoad::default());
        assert_eq!(BusyThresholds::default().judge(&unknown), None);
        let json = serde_json::to_value(&unknown).unwrap();
        assert_eq!(json["other_cpu"], serde_json::Value::Null, "unknown is stored null, never 0");
        // A counter that went backwards (a CPU taken offline) is unknown too.
        let back =
            MachineLoad::between(&reading(100, 100, 0, 10), &reading(50, 200, 0, 20), None, &mut IoLedger::default());
        assert_eq!(back.other_cpu, None);
        // A few ticks (a millisecond's cell) are no share: 1 busy tick of 3 would read as 67% of a CPU.
        let short = MachineLoad::between(&reading(0, 0, 0, 0), &reading(1, 2, 0, 0), None, &mut IoLedger::default());
        assert_eq!(short.other_cpu, None);
    }

    #[test]
    fn steal_and_other_io_are_judged_against_the_runs_own() {
        let stolen = MachineLoad { own_cpu: Some(0.5), steal_cpu: Some(0.1), ..MachineLoad::default() };
        let cause = BusyThresholds::default().judge(&stolen).expect("20% of the run's CPU stolen");
        assert!(cause.contains("the hypervisor stole 10% of a CPU, the run used 50%"), "{cause}");
        assert_eq!(BusyThresholds::parse("steal=25%").unwrap().judge(&stolen), None);
        let io = |other: u64, own: u64| MachineLoad {
            other_io_bytes: Some(other),
            own_io_bytes: Some(own),
            device: Some("loop3".into()),
            ..MachineLoad::default()
        };
        let busy = BusyThresholds::default().judge(&io(20 << 20, 100 << 20)).expect("20% other I/O");
        assert!(busy.contains("other I/O on loop3 20.0 MiB beside the run's 100.0 MiB"), "{busy}");
        assert_eq!(BusyThresholds::default().judge(&io(5 << 20, 100 << 20)), None, "5%");
        assert_eq!(BusyThresholds::default().judge(&io(3 << 20, 0)), None, "below the floor");
    }

    #[test]
    fn the_runs_own_writes_reaching_the_device_later_are_not_others() {
        let at = |device: u64, own: u64| LoadReading {
            device_bytes: Some(device),
            own_io_bytes: Some(own),
            ..LoadReading::default()
        };
        let mut ledger = IoLedger::default();
        assert_eq!(ledger.other_bytes(&at(1000, 500)), Some(0), "the run's first reading");
        // Cell 1 dirties 100 MB, of which the device sees none yet; cell 2 writes them back.
        assert_eq!(ledger.other_bytes(&at(1000, 100_000_500)), Some(0));
        assert_eq!(ledger.other_bytes(&at(100_001_000, 100_000_500)), Some(0));
        // Then 7 MB the run did not cause.
        assert_eq!(ledger.other_bytes(&at(107_001_000, 100_000_500)), Some(7_000_000));
        assert_eq!(ledger.other_bytes(&LoadReading::default()), None);
    }

    #[test]
    fn thresholds_parse_and_a_bad_one_names_the_fix() {
        assert_eq!(BusyThresholds::parse("off"), Ok(BusyThresholds::OFF));
        let t = BusyThresholds::parse("cpu=50%, io=off").unwrap();
        assert_eq!(t, BusyThresholds { cpu_pct: Some(50.0), steal_pct: Some(10.0), io_pct: None });
        assert_eq!(BusyThresholds::parse("steal=5").unwrap().steal_pct, Some(5.0));
        assert_eq!(t.describe(), "cpu=50%,steal=10%,io=off");
        assert_eq!(BusyThresholds::default().describe(), "cpu=100%,steal=10%,io=10%");
        assert_eq!(BusyThresholds::parse(&BusyThresholds::OFF.describe()), Ok(BusyThresholds::OFF));
        for (bad, says) in [
            ("cpu", "not NAME=PERCENT"),
            ("cpu=lots", "not a percentage"),
            ("cpu=-5%", "not a percentage"),
            ("disk=10%", "the names are cpu, steal and io"),
            ("", "not NAME=PERCENT"),
        ] {
            let e = BusyThresholds::parse(bad).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn this_machine_reads_without_failing() {
        // Whatever this machine lacks (PSI in a container) reads as unknown, never as an error.
        let start = LoadReading::now(Some("no-such-device"));
        assert_eq!(start.device_bytes, None);
        let end = LoadReading::now(None);
        let load = MachineLoad::between(&start, &end, None, &mut IoLedger::default());
        assert!(load.other_cpu.is_none_or(|c| c >= 0.0), "{load:?}");
    }
}
