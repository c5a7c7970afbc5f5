//! fio's JSON layout (`--output-format=json`), written from the stored runs: what fio-plot,
//! fio2gnuplot and iomatrix's own importer read (jobs[].read/write with io_bytes, bw, iops,
//! runtime, slat_ns, clat_ns with percentiles and lat_ns, usr_cpu, sys_cpu, latency_ns/us/ms).
//! A figure iomatrix does not measure is left out (ctx, majf, minf, the per-sample bw/iops
//! minima and maxima), never filled in. docs/fio.md lists which.

use super::measured::{latency_shares, FioSteady, JobFigures, LatencyUnit, SampleLines, Side, PERCENTILES};
use crate::depths::{shares, CALL_LABELS, LEVEL_LABELS};
use serde_json::{json, Map, Value};

/// The document's fields besides its jobs; `jobs` holds the jobs given.
fn document(jobs: Vec<Value>) -> Value {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    json!({
        "fio version": format!("iomatrix-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": now.as_secs(),
        "timestamp_ms": now.as_millis() as u64,
        "global options": {},
        "jobs": jobs,
    })
}

/// fio's JSON document written as its jobs end: [`Stream::opening`] before the first job,
/// [`Stream::job`] as each ends, [`Stream::closing`] after the last. Their texts together are
/// the document `serde_json::to_string_pretty` writes of the whole (the test below holds them
/// to it), but no job is held after its text is written.
pub struct Stream {
    /// The document's text after the jobs' list (its other keys, which sort after "jobs").
    tail: String,
    jobs_written: usize,
}

/// The empty list the document's opening and closing are cut at.
const NO_JOBS: &str = "\"jobs\": []";

impl Stream {
    /// The stream and the document's text up to its first job.
    pub fn opening() -> anyhow::Result<(Stream, String)> {
        let whole = serde_json::to_string_pretty(&document(Vec::new()))?;
        let (head, tail) = whole
            .split_once(NO_JOBS)
            .ok_or_else(|| anyhow::anyhow!("fio's JSON document has no jobs list to write into"))?;
        Ok((Stream { tail: tail.to_string(), jobs_written: 0 }, format!("{head}\"jobs\": [")))
    }

    /// A job's text, as it stands in the document's list (indented two levels).
    pub fn job(&mut self, f: &JobFigures) -> anyhow::Result<String> {
        let own = serde_json::to_string_pretty(&job(f))?;
        let mut text = String::from(if self.jobs_written == 0 { "\n" } else { ",\n" });
        // JSON strings hold no raw newline: every line of the text is the job's own.
        for (i, line) in own.lines().enumerate() {
            if i > 0 {
                text.push('\n');
            }
            text.push_str("    ");
            text.push_str(line);
        }
        self.jobs_written += 1;
        Ok(text)
    }

    /// The document's text after its last job; fio's `disk_util` list, where given, after the
    /// document's other keys (where fio writes it: after the jobs).
    pub fn closing(self, disk_util: Option<Value>) -> anyhow::Result<String> {
        let end = if self.jobs_written == 0 { "]" } else { "\n  ]" };
        let Some(disks) = disk_util else {
            return Ok(format!("{end}{}\n", self.tail));
        };
        let body = self
            .tail
            .strip_suffix("\n}")
            .ok_or_else(|| anyhow::anyhow!("fio's JSON document does not end with its closing brace"))?;
        let listed = serde_json::to_string_pretty(&disks)?.replace('\n', "\n  ");
        Ok(format!("{end}{body},\n  \"disk_util\": {listed}\n}}\n"))
    }
}

fn job(f: &JobFigures) -> Value {
    let options: Map<String, Value> =
        f.job.given.iter().filter(|(k, _)| k != "name").map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
    let (usr, sys) = f.cpu_percent();
    let all = f.all_latency();
    let mut entry = json!({
        "jobname": f.job.name,
        "groupid": f.group,
        "error": i32::from(!f.complete),
        "eta": 0,
        "elapsed": f.wall_ns.div_ceil(1_000_000_000),
        "job options": options,
        "read": side(&f.read, f.wall_ns, f.samples(false)),
        "write": side(&f.write, f.wall_ns, f.samples(true)),
        "trim": side(&Side { bytes: 0, ios: 0, latency: Default::default(), split: None }, f.wall_ns, None),
        "job_runtime": f.wall_ns / 1_000_000,
        "usr_cpu": usr,
        "sys_cpu": sys,
        "iodepth_level": depth_shares(f.depths.map(|d| d.level), &LEVEL_LABELS),
        "iodepth_submit": depth_shares(f.depths.map(|d| d.submit), &CALL_LABELS),
        "iodepth_complete": depth_shares(f.depths.map(|d| d.complete), &CALL_LABELS),
        "latency_ns": buckets(&all, LatencyUnit::Nsec),
        "latency_us": buckets(&all, LatencyUnit::Usec),
        "latency_ms": buckets(&all, LatencyUnit::Msec),
        "iomatrix": {
            "run": f.run_id,
            "clients": f.clients,
            "backend": f.backend,
            "ioengine": f.job.ioengine.map(|e| e.fio_name()),
        },
    });
    if let Some(t) = &f.latency_target {
        // fio's fields (its stat.c): the target in ns, the window in us, the depth the job ran at.
        entry["latency_depth"] = Value::from(t.measured_depth);
        entry["latency_target"] = Value::from(t.target.target_ns);
        entry["latency_percentile"] = Value::from(t.target.percentile());
        entry["latency_window"] = Value::from(t.target.window_ns / 1_000);
        entry["iomatrix"]["latency_target"] = json!({
            "depth_found": t.depth,
            "settled": t.settled,
            "judged": crate::target::JUDGED,
            "said": t.describe(),
        });
    }
    if let Some(steady) = f.steady.as_ref().and_then(FioSteady::of) {
        entry["steadystate"] = steadystate(&steady);
    }
    if let Some(engine) = f.job.ioengine.filter(|e| e.fio_name() != e.backend()) {
        entry["iomatrix"]["note"] =
            Value::from(format!("ioengine={} was run by iomatrix's {} backend", engine.fio_name(), engine.backend()));
    }
    entry
}

/// fio's "steadystate" object (its stat.c): the rule, ss_dur, whether it was attained (1 or 0),
/// the criterion as text, max_deviation and slope, and the window's samples with their means.
fn steadystate(s: &FioSteady) -> Value {
    json!({
        "ss": s.ss,
        "duration": s.duration,
        "attained": i32::from(s.attained),
        "criterion": format!("{:.6}{}", s.criterion, if s.percent { "%" } else { "" }),
        "max_deviation": s.max_deviation,
        "slope": s.slope,
        "data": {
            "bw_mean": s.bw_mean,
            "iops_mean": s.iops_mean,
            "iops": s.iops,
            "bw": s.bw,
        },
    })
}

/// One direction as fio writes it: slat_ns (a queued request's issue to its submission's
/// return; fio's zeros with N 0 for a synchronous engine, as fio writes them for psync),
/// clat_ns (to its completion, with fio's percentiles) and lat_ns (issue to completion, its
/// summary only, as fio writes it without lat_percentiles).
fn side(s: &Side, wall_ns: u64, samples: Option<SampleLines>) -> Value {
    let bw_bytes = s.bytes_per_sec(wall_ns);
    let mut v = json!({
        "io_bytes": s.bytes,
        "io_kbytes": s.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": s.iops(wall_ns),
        "runtime": if s.ios > 0 { wall_ns / 1_000_000 } else { 0 },
        "total_ios": s.ios,
        "slat_ns": submission(s),
        "clat_ns": latency(s.clat(), true),
        "lat_ns": latency(&s.latency, false),
    });
    match samples.filter(|_| s.ios > 0) {
        Some(SampleLines { bw_kib: bw, iops }) => {
            let fields = json!({
                "bw_min": bw.min, "bw_max": bw.max, "bw_agg": share_of(bw.mean, bw_bytes / 1024.0),
                "bw_mean": bw.mean, "bw_dev": bw.stdev, "bw_samples": bw.count,
                "iops_min": iops.min, "iops_max": iops.max, "iops_mean": iops.mean,
                "iops_stddev": iops.stdev, "iops_samples": iops.count,
            });
            if let (Value::Object(v), Value::Object(fields)) = (&mut v, fields) {
                v.extend(fields);
            }
        }
        // fio-plot reads iops_stddev of every job: null where it was not measured (the job ran
        // under one whole interval), 0 for a direction with no request.
        None => v["iops_stddev"] = if s.ios == 0 { Value::from(0.0) } else { Value::Null },
    }
    v
}

/// fio's `per=`: the mean sample's share of the direction's whole bandwidth, in percent, at
/// most 100 (fio's p_of_agg).
pub fn share_of(mean_kib: f64, aggregate_kib: f64) -> f64 {
    if aggregate_kib <= 0.0 {
        return 100.0;
    }
    (mean_kib * 100.0 / aggregate_kib).min(100.0)
}

/// A latency histogram's summary, with fio's percentiles where `percentiles`.
fn latency(l: &iomatrix_stats::Latency, percentiles: bool) -> Value {
    if l.count() == 0 {
        return json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 });
    }
    let summary = l.summary();
    let mut v = json!({
        "min": summary.min_ns,
        "max": summary.max_ns,
        "mean": summary.mean_ns,
        "stddev": l.stddev_ns(),
        "N": l.count(),
    });
    if percentiles {
        let points: Map<String, Value> =
            PERCENTILES.iter().map(|p| (format!("{p:.6}"), Value::from(l.quantile_ns(p / 100.0)))).collect();
        v["percentile"] = Value::Object(points);
    }
    v
}

/// fio's slat_ns: the queued requests' submission latency; zeros with N 0 where none was
/// queued apart from its completion.
fn submission(s: &Side) -> Value {
    let slat = s.split.as_ref().map(|(slat, _)| *slat).unwrap_or_default();
    json!({
        "min": slat.min_ns,
        "max": slat.max_ns,
        "mean": slat.mean_ns(),
        "stddev": slat.stddev_ns(),
        "N": slat.count,
    })
}

/// One of fio's depth distributions as its JSON holds it (each bucket's percent, by fio's
/// names); null in a run stored before they were counted, never zeros that look measured.
fn depth_shares(counts: Option<[u64; 7]>, labels: &[&str; 7]) -> Value {
    counts.map_or(Value::Null, |c| {
        Value::Object(labels.iter().zip(shares(&c)).map(|(l, pct)| (l.to_string(), Value::from(pct))).collect())
    })
}

/// fio's latency buckets of one unit: the percent of all requests in each.
fn buckets(all: &iomatrix_stats::Latency, unit: LatencyUnit) -> Value {
    Value::Object(
        latency_shares(all, unit).into_iter().map(|(bound, pct)| (bound.to_string(), Value::from(pct))).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::front::options::FioJob;

    fn figures(name: &str, group: usize, latencies_ns: &[u64]) -> JobFigures {
        let mut latency = iomatrix_stats::Latency::default();
        for &ns in latencies_ns {
            latency.record(ns);
        }
        let mut job = FioJob::new(name);
        job.given.push(("rw".into(), "randread".into()));
        JobFigures {
            job,
            group,
            run_id: group as i64 + 1,
            complete: true,
            wall_ns: 2_500_000_000,
            user_ns: 1_000_000,
            sys_ns: 2_000_000,
            clients: 1,
            read: Side {
                bytes: 4096 * latencies_ns.len() as u64,
                ios: latencies_ns.len() as u64,
                latency,
                split: None,
            },
            write: Side { bytes: 0, ios: 0, latency: Default::default(), split: None },
            series: None,
            backend: "psync".into(),
            disk: None,
            latency_target: None,
            steady: None,
            depths: None,
        }
    }

    /// The streamed text is the whole document's, byte for byte, for none, one and three jobs
    /// (the timestamps, taken when each is written, are set equal first).
    #[test]
    fn the_streamed_document_is_the_whole_documents_text() {
        for count in [0usize, 1, 3] {
            let jobs: Vec<JobFigures> =
                (0..count).map(|g| figures(&format!("j{g}"), g, &[900, 15_000, 2_000_000])).collect();
            let (mut stream, mut text) = Stream::opening().unwrap();
            for f in &jobs {
                text += &stream.job(f).unwrap();
            }
            text += &stream.closing(None).unwrap();
            let streamed: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            let mut whole = document(jobs.iter().map(job).collect());
            whole["timestamp"] = streamed["timestamp"].clone();
            whole["timestamp_ms"] = streamed["timestamp_ms"].clone();
            assert_eq!(text, format!("{}\n", serde_json::to_string_pretty(&whole).unwrap()), "{count} jobs");
        }
    }

    /// With a device, the document still parses, and `disk_util` holds fio's fields.
    #[test]
    fn disk_util_closes_the_document_as_fio_writes_it() {
        let (mut stream, mut text) = Stream::opening().unwrap();
        text += &stream.job(&figures("j", 0, &[900])).unwrap();
        let disks = json!([{"name": "loop0", "read_ios": 12, "write_ios": 0, "util": 50.0}]);
        text += &stream.closing(Some(disks.clone())).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(parsed["disk_util"], disks);
        assert_eq!(parsed["jobs"].as_array().map(Vec::len), Some(1));
        assert!(parsed["timestamp"].is_u64(), "{text}");
        assert!(text.find("\"disk_util\"") > text.find("\"jobs\""), "after the jobs, as fio: {text}");
    }
}
