//! fio's options as `iomatrix fio` takes them: one table of the names it runs (with fio's
//! aliases), how each value is read (fio's size and time suffixes), and the job each set of
//! options makes. Every other option is refused by its name: nothing is ignored.

use crate::fio_words;
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_random::Distribution;
use std::path::PathBuf;
use std::time::Duration;

/// The options `iomatrix fio` runs, as fio names them (aliases after the name), for the help
/// and for the refusal of any other.
pub const ACCEPTED: &[&str] = &[
    "name",
    "rw (readwrite)",
    "rwmixread",
    "rwmixwrite",
    "bs (blocksize)",
    "bsrange (blocksize_range)",
    "bssplit",
    "size",
    "filename",
    "directory",
    "iodepth",
    "ioengine",
    "numjobs",
    "runtime (timeout)",
    "time_based",
    "ramp_time",
    "direct",
    "buffered",
    "invalidate",
    "random_distribution",
    "rate_iops",
    "rate",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "group_reporting",
    "stonewall (wait_for_previous)",
    "steadystate (ss)",
    "steadystate_duration (ss_dur)",
    "steadystate_ramp_time (ss_ramp)",
    "output-format (command line)",
];

/// The options that are booleans: given bare, they are true (`--time_based`).
pub const BOOLEANS: &[&str] = &[
    "time_based",
    "group_reporting",
    "stonewall",
    "wait_for_previous",
    "direct",
    "buffered",
    "invalidate",
    "latency_run",
];

/// fio's I/O engines that iomatrix's own backends run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// fio's psync: pread/pwrite.
    Psync,
    /// fio's sync: read/write at the file position, seeking only when the next offset is elsewhere.
    Sync,
    /// io_uring, a queue of `iodepth` requests.
    IoUring,
    /// fio's libaio, run by iomatrix's io_uring backend (the output says so).
    Libaio,
}

impl Engine {
    /// The engine's name as fio writes it (`ioengine=`).
    pub fn fio_name(self) -> &'static str {
        match self {
            Engine::Psync => "psync",
            Engine::Sync => "sync",
            Engine::IoUring => "io_uring",
            Engine::Libaio => "libaio",
        }
    }

    /// iomatrix's backend that runs it.
    pub fn backend(self) -> &'static str {
        match self {
            Engine::Psync => "psync",
            Engine::Sync => "sync",
            Engine::IoUring | Engine::Libaio => "io_uring",
        }
    }

    /// Whether the engine keeps a queue of requests in flight (`iodepth` above 1 means something).
    pub fn is_queued(self) -> bool {
        matches!(self, Engine::IoUring | Engine::Libaio)
    }
}

/// What fio's `rw` asks for: the share of reads and of random offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mix {
    /// fio's word: read, write, randread, randwrite, rw, readwrite, randrw.
    pub word: String,
    /// Whether the offsets are random (the `rand` words).
    pub random: bool,
    /// Reads, for read and write (100, 0); for a mixed job, rwmixread.
    pub pure_read: Option<bool>,
}

/// One fio job with every option it runs, global ones folded in.
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    /// The job's name (its section name, or `--name`).
    pub name: String,
    /// What the job reads and writes, and whether at random offsets (`rw`).
    pub mix: Mix,
    /// rwmixread: percent of a mixed job's requests that read (fio's default 50).
    pub rwmixread: u8,
    /// The size of each request (`bs`).
    pub bs: ByteSize,
    /// `bssplit` of more than one size: each request's size drawn by share (fio takes it over
    /// `bs`); None: every request is `bs`.
    pub bssplit: Option<crate::bssplit::BlockSplit>,
    /// The file's size (`size`); None when not given, which the plan refuses.
    pub size: Option<ByteSize>,
    /// `filename`: iomatrix lays out its own file beside it, never opening it; None when not given.
    pub filename: Option<PathBuf>,
    /// `directory`: the folder the job runs in; None when not given.
    pub directory: Option<PathBuf>,
    /// Requests kept in flight (`iodepth`, fio's default 1).
    pub iodepth: u32,
    /// `ioengine`; None when not given (fio's default, psync).
    pub ioengine: Option<Engine>,
    /// Clients running the job at once (`numjobs`, fio's default 1).
    pub numjobs: usize,
    /// `runtime`; None when not given (the job then moves `size` bytes).
    pub runtime: Option<Duration>,
    /// `time_based`: run for `runtime` rather than for `size` bytes.
    pub time_based: bool,
    /// `ramp_time`: a warm-up whose figures are not counted; None when not given.
    pub ramp_time: Option<Duration>,
    /// `direct`: O_DIRECT, around the page cache.
    pub direct: bool,
    /// fio's invalidate (true by default): the file dropped from the page cache at the job's
    /// open, as `--prepare dropped`; false keeps it cached, as `--prepare cached`.
    pub invalidate: bool,
    /// `random_distribution`: where random offsets fall (fio's default, uniform).
    pub distribution: Distribution,
    /// `rate_iops` (or `rate` in bytes, as requests of `bs`): at most this many requests per
    /// second per process, paced as fio's default rate_process=linear paces them; None: unpaced.
    pub rate_iops: Option<u64>,
    /// `rate` as given in bytes per second, kept until the job's `bs` is known (see
    /// [`FioJob::paced_iops`]).
    pub rate_bytes: Option<u64>,
    /// `latency_target` (microseconds unless a unit says): the deepest queue, up to `iodepth`,
    /// whose requests' total latency meets it; None: run at `iodepth`.
    pub latency_target: Option<Duration>,
    /// `latency_window`: how long each depth runs before it is judged; None: not given (fio's 0).
    pub latency_window: Option<Duration>,
    /// `latency_percentile`: the share of a window's requests that must meet the target (fio's
    /// default 100).
    pub latency_percentile: Option<f64>,
    /// `latency_run`: keep adjusting the depth for the whole job.
    pub latency_run: bool,
    /// `group_reporting` was given; iomatrix reports a job's clients as one group either way and says so
    /// on stderr when it was not.
    pub group_reporting: bool,
    /// `stonewall` (or `wait_for_previous`): the job waits for the jobs before it.
    pub stonewall: bool,
    /// `steadystate` (`ss`) as given; fio's default `iops_slope:0.01%` where only `ss_dur` is.
    pub steadystate: Option<String>,
    /// `ss_dur` in whole seconds; None (fio's 0): no steady state is judged, whatever `ss` says.
    pub ss_dur: Option<u64>,
    /// `ss_ramp`; None: 0.
    pub ss_ramp: Option<Duration>,
    /// The options as given (global ones first), for fio's "job options" in the JSON output.
    pub given: Vec<(String, String)>,
}

impl FioJob {
    /// A job with fio's defaults.
    pub fn new(name: &str) -> FioJob {
        FioJob {
            name: name.to_string(),
            mix: Mix { word: "read".into(), random: false, pure_read: Some(true) },
            rwmixread: 50,
            bs: ByteSize(4096),
            bssplit: None,
            size: None,
            filename: None,
            directory: None,
            iodepth: 1,
            ioengine: None,
            numjobs: 1,
            runtime: None,
            time_based: false,
            ramp_time: None,
            direct: false,
            invalidate: true,
            distribution: Distribution::Uniform,
            rate_iops: None,
            rate_bytes: None,
            latency_target: None,
            latency_window: None,
            latency_percentile: None,
            latency_run: false,
            group_reporting: false,
            stonewall: false,
            steadystate: None,
            ss_dur: None,
            ss_ramp: None,
            given: Vec::new(),
        }
    }

    /// The memory the job holds while it waits to run: itself, its name, paths and options as given.
    pub fn footprint(&self) -> u64 {
        let path = |p: &Option<PathBuf>| p.as_ref().map_or(0, |p| p.as_os_str().len());
        let given: usize =
            self.given.iter().map(|(k, v)| std::mem::size_of::<(String, String)>() + k.len() + v.len()).sum();
        (std::mem::size_of::<FioJob>()
            + self.name.len()
            + self.mix.word.len()
            + path(&self.filename)
            + path(&self.directory)
            + self.steadystate.as_ref().map_or(0, String::len)
            + given) as u64
    }

    /// The requests per second the job is paced at: `rate_iops`, or `rate` over `bs` (with one
    /// block size, fio's byte rate paces requests of `bs` alike). Both given: the slower, as fio
    /// holds a job to every rate it is given. A byte rate that is no whole number of blocks, or
    /// under one block a second, is refused with the fix.
    pub fn paced_iops(&self) -> Result<Option<u64>, String> {
        let from_bytes = match self.rate_bytes {
            None => None,
            Some(bytes) if self.bssplit.is_some() => {
                return Err(format!(
                    "rate={bytes} with bssplit: requests of mixed sizes make no one request rate of a byte rate; give rate_iops"
                ))
            }
            Some(bytes) if bytes % self.bs.bytes() != 0 || bytes < self.bs.bytes() => {
                return Err(format!(
                    "rate={bytes} is not a whole number of {}-byte requests a second; iomatrix paces requests: give \
                     rate as a multiple of bs, or rate_iops",
                    self.bs.bytes()
                ))
            }
            Some(bytes) => Some(bytes / self.bs.bytes()),
        };
        Ok(match (self.rate_iops, from_bytes) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// Percent of requests that read.
    pub fn read_percent(&self) -> u8 {
        match self.mix.pure_read {
            Some(true) => 100,
            Some(false) => 0,
            None => self.rwmixread,
        }
    }

    /// Sets one option; `value` is None for a bare word (`time_based`). `at` says where it was
    /// given ("line 4 of job.fio", "the command line"), for the message.
    pub fn set(&mut self, key: &str, value: Option<&str>, at: &str) -> Result<(), UsageError> {
        let key = key.trim();
        let bad = |why: String| UsageError::new(format!("fio option {key} ({at}): {why}"));
        let text =
            || value.map(str::trim).filter(|v| !v.is_empty()).ok_or_else(|| bad(format!("give a value: {key}=...")));
        match key {
            "name" => self.name = text()?.to_string(),
            "rw" | "readwrite" => self.mix = mix(text()?).map_err(bad)?,
            "rwmixread" => self.rwmixread = percent(text()?).map_err(bad)?,
            "rwmixwrite" => self.rwmixread = 100 - percent(text()?).map_err(bad)?,
            "bs" | "blocksize" => self.bs = block_size(text()?).map_err(bad)?,
            "bsrange" | "blocksize_range" => self.bs = one_size_range(text()?).map_err(bad)?,
            "bssplit" => match one_split(text()?) {
                Some(one) => (self.bs, self.bssplit) = (one, None),
                None => self.bssplit = Some(crate::bssplit::BlockSplit::parse(text()?).map_err(bad)?),
            },
            "size" => self.size = Some(size(text()?).map_err(bad)?),
            "filename" => {
                let name = text()?;
                if name.contains(':') {
                    return Err(bad(format!(
                        "'{name}' names several files (fio separates them with ':'); iomatrix fio runs one file per \
                         job: give one filename, or use directory= and numjobs="
                    )));
                }
                self.filename = Some(PathBuf::from(name));
            }
            "directory" => {
                let dir = text()?;
                if dir.contains(':') {
                    return Err(bad(format!("'{dir}' names several folders (fio separates them with ':'); give one")));
                }
                self.directory = Some(PathBuf::from(dir));
            }
            "iodepth" => {
                self.iodepth = whole(text()?)
                    .and_then(|n| u32::try_from(n).ok().filter(|&n| n >= 1).ok_or_else(|| "give 1 or more".into()))
                    .map_err(bad)?;
            }
            "ioengine" => self.ioengine = Some(engine(text()?).map_err(bad)?),
            "numjobs" => {
                self.numjobs = whole(text()?)
                    .and_then(|n| usize::try_from(n).ok().filter(|&n| n >= 1).ok_or_else(|| "give 1 or more".into()))
                    .map_err(bad)?;
            }
            "runtime" | "timeout" => self.runtime = Some(fio_words::time(text()?).map_err(bad)?),
            "time_based" => self.time_based = boolean(value).map_err(bad)?,
            "ramp_time" => self.ramp_time = Some(fio_words::time(text()?).map_err(bad)?),
            "direct" => self.direct = boolean(value).map_err(bad)?,
            "buffered" => self.direct = !boolean(value).map_err(bad)?,
            "invalidate" => self.invalidate = boolean(value).map_err(bad)?,
            "random_distribution" => {
                self.distribution = Distribution::parse(text()?).map_err(|e| bad(e.to_string()))?;
            }
            "rate_iops" => self.rate_iops = Some(rate(text()?, "requests").map_err(bad)?),
            "rate" => self.rate_bytes = Some(rate(text()?, "bytes").map_err(bad)?),
            "latency_target" => self.latency_target = Some(fio_words::time_us(text()?).map_err(bad)?),
            "latency_window" => self.latency_window = Some(fio_words::time_us(text()?).map_err(bad)?),
            "latency_percentile" => self.latency_percentile = Some(latency_percentile(text()?).map_err(bad)?),
            "latency_run" => self.latency_run = boolean(value).map_err(bad)?,
            "group_reporting" => self.group_reporting = boolean(value).map_err(bad)?,
            "stonewall" | "wait_for_previous" => self.stonewall = boolean(value).map_err(bad)?,
            "steadystate" | "ss" => {
                let rule = text()?;
                iomatrix_stats::steady::Criterion::parse(rule).map_err(bad)?;
                if rule.starts_with("snia") {
                    return Err(bad(format!(
                        "'{rule}' is iomatrix's own rule; fio's are iops, iops_slope, bw, bw_slope"
                    )));
                }
                self.steadystate = Some(rule.to_string());
            }
            "steadystate_duration" | "ss_dur" => self.ss_dur = Some(whole_seconds(text()?).map_err(bad)?),
            "steadystate_ramp_time" | "ss_ramp" => self.ss_ramp = Some(fio_words::time(text()?).map_err(bad)?),
            _ => return Err(refused(key, at)),
        }
        self.given.push((key.to_string(), value.unwrap_or("").trim().to_string()));
        Ok(())
    }
}

impl FioJob {
    /// fio's steady-state rule of the job: `steadystate` (fio's default `iops_slope:0.01%`) over
    /// `ss_dur` seconds after `ss_ramp`; None where `ss_dur` is not given or 0, as fio then judges
    /// nothing.
    pub fn steady(&self) -> Option<(String, u64, Duration)> {
        let dur = self.ss_dur.filter(|&d| d > 0)?;
        let rule = self.steadystate.clone().unwrap_or_else(|| "iops_slope:0.01%".to_string());
        Some((rule, dur, self.ss_ramp.unwrap_or_default()))
    }
}

/// fio's `ss_dur`, which fio counts in whole seconds: a time (seconds unless a unit says) of
/// whole seconds.
fn whole_seconds(text: &str) -> Result<u64, String> {
    let d = fio_words::time(text)?;
    if d.subsec_nanos() != 0 {
        return Err(format!("'{text}': fio counts ss_dur in whole seconds; give a whole number of seconds"));
    }
    Ok(d.as_secs())
}

/// An option iomatrix fio does not run, refused by its name.
pub fn refused(key: &str, at: &str) -> UsageError {
    let shown = iomatrix_core::text::printable(key);
    UsageError::new(format!(
        "fio option {shown} ({at}) is not run by iomatrix fio, and none is ignored; leave it out, or run real fio for \
         it. iomatrix fio runs: {}",
        ACCEPTED.join(", ")
    ))
}

/// fio's `rw` word, through the access suite's one reading of fio's names (which refuses
/// trims and `:N` holes with what to use instead).
fn mix(text: &str) -> Result<Mix, String> {
    let (read, random) = fio_words::rw_mix(text, None).map_err(|e| e.to_string())?;
    let pure_read = (!fio_words::is_mixed(text)).then_some(read == 100);
    Ok(Mix { word: text.to_string(), random: random == 100, pure_read })
}

fn percent(text: &str) -> Result<u8, String> {
    whole(text)?.try_into().ok().filter(|p: &u8| *p <= 100).ok_or_else(|| format!("'{text}': give a percentage 0..100"))
}

fn whole(text: &str) -> Result<u64, String> {
    text.parse::<u64>().map_err(|_| format!("'{text}' is not a whole number"))
}

/// A size as fio reads it by default (kb_base=1024): 4k and 4KiB are 4096 bytes, as are 4kb
/// and 4KB (fio's compatibility mode); a bare number is bytes; suffixes k, m, g, t, p.
pub fn size(text: &str) -> Result<ByteSize, String> {
    let t = text.trim();
    if t.ends_with('%') {
        return Err(format!("'{t}': a size as a share of the file or device is not run; give bytes, e.g. 1g"));
    }
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(format!("'{t}' is not a size; give e.g. 4k, 64m, 1g (k = 1024, as fio counts by default)"));
    }
    let number: u64 = t[..digits].parse().map_err(|_| format!("'{t}' is too large"))?;
    let unit = t[digits..].to_ascii_lowercase();
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        "p" => 50,
        _ => return Err(format!("'{t}': unknown unit '{}'; give k, m, g, t or p (powers of 1024)", &t[digits..])),
    };
    number.checked_mul(1u64 << shift).map(ByteSize).ok_or_else(|| format!("'{t}' is larger than 16 EiB"))
}

fn block_size(text: &str) -> Result<ByteSize, String> {
    if text.contains(',') {
        let parts: Vec<&str> = text.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        if parts.windows(2).all(|w| size(w[0]).ok() == size(w[1]).ok()) && !parts.is_empty() {
            return size(parts[0]);
        }
        return Err(format!(
            "'{text}' gives reads and writes different block sizes; iomatrix issues one block size per job: give one"
        ));
    }
    size(text)
}

/// `bsrange=4k-4k`: run where both ends are one size (the engine issues one size per cell).
fn one_size_range(text: &str) -> Result<ByteSize, String> {
    let (low, high) = text.split_once('-').ok_or_else(|| format!("'{text}': write LOW-HIGH, e.g. 4k-4k"))?;
    let (low, high) = (size(low)?, size(high)?);
    if low != high {
        return Err(format!(
            "'{text}': a range of block sizes is not run (iomatrix issues one block size per job); give bs={low}, \
             or one job per size"
        ));
    }
    Ok(low)
}

/// `bssplit=4k/100` (or `4k`): the one size that takes every request; None for a mix of sizes
/// (or an unreadable value, which the split's own reading refuses with why).
fn one_split(text: &str) -> Option<ByteSize> {
    match crate::bssplit::BlockSplit::parse(text).ok()?.reads.as_slice() {
        [one] if text.split(',').count() == 1 => Some(one.size),
        _ => None,
    }
}

/// A rate as fio's `rate` and `rate_iops` take one for every direction: a whole number (with
/// fio's k, m, g suffixes for bytes), above 0. fio's `read,write` split form is refused: the
/// access engine paces a job's requests together.
fn rate(text: &str, what: &str) -> Result<u64, String> {
    if text.contains(',') {
        return Err(format!(
            "'{text}' gives reads and writes their own rates; iomatrix paces a job's requests together: give one rate"
        ));
    }
    let n = if what == "bytes" { size(text)?.bytes() } else { whole(text)? };
    if n == 0 {
        return Err(format!("'{text}': give a rate of 1 or more {what} a second (leave it out for no pacing)"));
    }
    Ok(n)
}

/// fio's booleans: a bare word is true; 1/0, true/false, yes/no.
/// fio's latency_percentile: a number above 0 and at most 100 (fio's own bounds).
fn latency_percentile(text: &str) -> Result<f64, String> {
    text.trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| format!("'{text}': give a percentage above 0 and at most 100, e.g. 99"))
}

fn boolean(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "1" | "true" | "yes" | "on") => Ok(true),
        Some("0" | "false" | "no" | "off") => Ok(false),
        Some(other) => Err(format!("'{other}' is not 0 or 1")),
    }
}

fn engine(text: &str) -> Result<Engine, String> {
    Ok(match text {
        "psync" => Engine::Psync,
        "sync" => Engine::Sync,
        "io_uring" => Engine::IoUring,
        "libaio" => Engine::Libaio,
        other => {
            return Err(format!(
                "'{other}' is not run by iomatrix's engine; give psync, sync, io_uring, or libaio (run as io_uring)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_k_as_1024_as_fio_does() {
        assert_eq!(size("4k").unwrap(), ByteSize(4096));
        assert_eq!(size("4KiB").unwrap(), ByteSize(4096));
        assert_eq!(size("16m").unwrap(), ByteSize(16 << 20));
        assert_eq!(size("512").unwrap(), ByteSize(512));
        assert!(size("50%").unwrap_err().contains("share"));
        assert!(size("4x").unwrap_err().contains("unknown unit"));
        assert!(size("99999999999p").unwrap_err().contains("16 EiB"));
    }

    #[test]
    fn latency_options_count_microseconds_unless_a_unit_says() {
        let mut job = FioJob::new("j");
        job.set("latency_target", Some("1000"), "t").unwrap();
        job.set("latency_window", Some("2s"), "t").unwrap();
        job.set("latency_percentile", Some("99.9"), "t").unwrap();
        job.set("latency_run", None, "t").unwrap();
        assert_eq!(job.latency_target, Some(Duration::from_millis(1)));
        assert_eq!(job.latency_window, Some(Duration::from_secs(2)));
        assert_eq!((job.latency_percentile, job.latency_run), (Some(99.9), true));
        assert!(job.set("latency_percentile", Some("0"), "t").unwrap_err().to_string().contains("above 0"));
        assert!(job.set("latency_percentile", Some("101"), "t").is_err());
    }

    #[test]
    fn times_are_seconds_unless_a_unit_says() {
        assert_eq!(fio_words::time("30").unwrap(), Duration::from_secs(30));
        assert_eq!(fio_words::time("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(fio_words::time("2m").unwrap(), Duration::from_secs(120));
        assert!(fio_words::time("soon").is_err());
    }

    #[test]
    fn rw_gives_reads_and_randomness() {
        let mut job = FioJob::new("j");
        job.set("rw", Some("randrw"), "t").unwrap();
        job.set("rwmixwrite", Some("30"), "t").unwrap();
        assert_eq!((job.read_percent(), job.mix.random), (70, true));
        job.set("readwrite", Some("write"), "t").unwrap();
        assert_eq!((job.read_percent(), job.mix.random), (0, false));
        assert!(job.set("rw", Some("randread:8"), "t").unwrap_err().to_string().contains(":N"));
        assert!(job.set("rw", Some("trim"), "t").unwrap_err().to_string().contains("trims"));
    }

    #[test]
    fn block_size_mixes_run_only_where_one_size_takes_all() {
        let mut job = FioJob::new("j");
        job.set("bsrange", Some("8k-8k"), "t").unwrap();
        assert_eq!(job.bs, ByteSize(8192));
        job.set("bssplit", Some("16k/100"), "t").unwrap();
        assert_eq!((job.bs, job.bssplit.is_none()), (ByteSize(16384), true));
        job.set("bssplit", Some("4k/50:64k/50"), "t").unwrap();
        assert_eq!(job.bssplit.as_ref().map(|s| s.largest()), Some(ByteSize(65536)));
        let e = job.set("bssplit", Some("4k/10:64k/50"), "t").unwrap_err().to_string();
        assert!(e.contains("add up to 60%, not 100"), "{e}");
        assert!(job.set("bsrange", Some("4k-64k"), "t").unwrap_err().to_string().contains("bsrange"));
        assert!(job.set("bs", Some("4k,64k"), "t").unwrap_err().to_string().contains("different block sizes"));
    }

    #[test]
    fn rate_iops_and_rate_in_bytes_pace_requests() {
        let mut job = FioJob::new("j");
        job.set("bs", Some("4k"), "t").unwrap();
        assert_eq!(job.paced_iops(), Ok(None));
        job.set("rate", Some("400k"), "t").unwrap();
        assert_eq!(job.paced_iops(), Ok(Some(100)));
        job.set("rate_iops", Some("50"), "t").unwrap();
        assert_eq!(job.paced_iops(), Ok(Some(50)), "the slower of the two");
        job.set("rate", Some("6000"), "t").unwrap();
        assert!(job.paced_iops().unwrap_err().contains("multiple of bs"));
        assert!(job.set("rate_iops", Some("0"), "t").unwrap_err().to_string().contains("1 or more"));
        assert!(job.set("rate_iops", Some("100,50"), "t").unwrap_err().to_string().contains("one rate"));
    }

    #[test]
    fn random_distribution_is_read_by_the_access_plans_own_parser() {
        let mut job = FioJob::new("t");
        job.set("random_distribution", Some("zipf:1.2"), "t").unwrap();
        assert_eq!(job.distribution, Distribution::Zipf(1.2));
        assert!(job.set("random_distribution", Some("zipf:1"), "t").is_err());
        assert!(job.set("random_distribution", Some("zoned:50/5:50/95"), "t").is_err());
    }

    #[test]
    fn any_other_option_is_refused_by_name() {
        let e = FioJob::new("j").set("verify", Some("md5"), "line 3 of x.fio").unwrap_err().to_string();
        assert!(e.starts_with("fio option verify (line 3 of x.fio) is not run by iomatrix fio"), "{e}");
    }
}
