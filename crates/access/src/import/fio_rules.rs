//! What fio's JSON says of a job's latency target (`latency_depth`, `latency_target`,
//! `latency_percentile`, `latency_window`) and steady state (its `steadystate` object), read into
//! the values iomatrix's own runs store ([`TargetOutcome`], [`SteadyVerdict`]), so `show` of an
//! imported fio run prints the same lines as a run of `--latency-target` or `--steady-state`.
//!
//! fio's JSON holds less than iomatrix stores, and what it lacks is left empty, not made up:
//! - the latency target's search: fio gives the depth the job ran at, not the depths it judged
//!   (the steps stay empty). fio reports depth 1 also where depth 1 missed the target (it keeps
//!   a failing depth 1 and runs on), so an imported depth is what fio ran at. fio ends a job one
//!   window after its search settles (unless `latency_run`): a job that ended before its
//!   `runtime` settled; one that ran its whole runtime is stored as not settled.
//! - the steady state: fio ends a job once the rule is attained, so its runtime is when; fio
//!   judges once a second from the first whole window on, so the windows judged are counted from
//!   its runtime, the ramp and the window (at least one where it was attained).
//!
//! fio's units (its stat.c): `latency_target` in ns, `latency_window` in us, steady-state samples
//! one a second, bandwidth in bytes a second.

use crate::target::{Judged, LatencyTarget, TargetOutcome};
use iomatrix_import::ImportError;
use iomatrix_stats::steady::{Criterion, Figure, Sample, SteadyRule, SteadyVerdict};
use serde_json::{Map, Value};

/// fio judges steady state on one sample a second.
const FIO_SAMPLE_NS: u64 = 1_000_000_000;

/// The job's latency target as fio reports it; None where the job had none (no `latency_depth`).
pub fn latency_target(
    job: &Map<String, Value>,
    opts: &Map<String, Value>,
    path: &str,
    wall_ns: u64,
) -> Result<Option<TargetOutcome>, ImportError> {
    if !job.contains_key("latency_depth") {
        return Ok(None);
    }
    let number = |key: &str| -> Result<f64, ImportError> {
        job.get(key)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| ImportError::in_field(format!("{path}.{key}"), "missing or not a number"))
    };
    let depth = number("latency_depth")? as u32;
    let percentile = number("latency_percentile")?;
    if !(percentile > 0.0 && percentile <= 100.0) {
        return Err(ImportError::in_field(
            format!("{path}.latency_percentile"),
            format!("{percentile} is not a percentile above 0 and at most 100"),
        ));
    }
    let keep_adjusting = option_is_true(opts, "latency_run");
    let target = LatencyTarget {
        target_ns: number("latency_target")? as u64,
        percentile_hundredths: (percentile * 100.0).round() as u32,
        window_ns: (number("latency_window")? as u64).saturating_mul(1_000),
        keep_adjusting,
    };
    let runtime_ms = super::fio::option_time_ms(opts, &["runtime", "timeout"]);
    let ended_early = runtime_ms.is_some_and(|ms| wall_ns < ms.saturating_mul(1_000_000));
    Ok(Some(TargetOutcome {
        target,
        judged: Judged::Total,
        depth: Some(depth),
        measured_depth: depth,
        settled: ended_early && !keep_adjusting,
        steps: Vec::new(),
    }))
}

/// The job's steady-state verdict as fio reports it; None where the job judged none (no
/// `steadystate` object).
pub fn steady_state(
    job: &Map<String, Value>,
    opts: &Map<String, Value>,
    path: &str,
    wall_ns: u64,
) -> Result<Option<SteadyVerdict>, ImportError> {
    let Some(ss) = job.get("steadystate") else { return Ok(None) };
    let here = format!("{path}.steadystate");
    let ss = ss.as_object().ok_or_else(|| ImportError::in_field(&here, "not an object"))?;
    let field = |key: &str| ss.get(key).ok_or_else(|| ImportError::in_field(format!("{here}.{key}"), "missing"));
    let number = |key: &str| -> Result<f64, ImportError> {
        field(key)?
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| ImportError::in_field(format!("{here}.{key}"), "not a number"))
    };
    let criterion = criterion_of(field("ss")?.as_str().unwrap_or(""), opts)
        .map_err(|why| ImportError::in_field(format!("{here}.ss"), why))?;
    let samples = number("duration")?.max(0.0) as u64;
    let ramp_ms = super::fio::option_time_ms(opts, &["steadystate_ramp_time", "ss_ramp"]).unwrap_or(0);
    let rule = SteadyRule {
        criterion,
        window_ns: samples.saturating_mul(FIO_SAMPLE_NS),
        ramp_ns: ramp_ms.saturating_mul(1_000_000),
    };
    let data = ss.get("data").and_then(Value::as_object);
    let list = |key: &str| -> Vec<u64> {
        data.and_then(|d| d.get(key))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect()
    };
    let window: Vec<Sample> = list("iops").into_iter().zip(list("bw")).map(|(iops, bw)| Sample { iops, bw }).collect();
    let figure = criterion.figure();
    let judged: Vec<u64> = window.iter().map(|s| if figure == Figure::Iops { s.iops } else { s.bw }).collect();
    let mean_key = if figure == Figure::Iops { "iops_mean" } else { "bw_mean" };
    let mean = data.and_then(|d| d.get(mean_key)).and_then(Value::as_f64).unwrap_or(0.0);
    let attained = number("attained")? != 0.0;
    let slope = number("slope")?;
    // fio counts whole seconds: one window judged each second from the first whole one on.
    let after_ramp_s = wall_ns.saturating_sub(rule.ramp_ns) / FIO_SAMPLE_NS;
    let windows = (after_ramp_s + 1).saturating_sub(samples);
    Ok(Some(SteadyVerdict {
        rule,
        sample_ns: FIO_SAMPLE_NS,
        window_samples: samples as usize,
        attained,
        attained_at_ns: attained.then_some(wall_ns),
        windows_judged: if attained { windows.max(1) } else { windows },
        mean,
        max_deviation: number("max_deviation")?.abs(),
        range: match (judged.iter().max(), judged.iter().min()) {
            (Some(max), Some(min)) => (max - min) as f64,
            _ => 0.0,
        },
        slope: slope.abs(),
        falling: slope < 0.0,
        criterion: criterion_number(field("criterion")?),
        window,
    }))
}

/// fio's rule from its JSON's `ss` (`iops:20.000000%`, `bw:1048576.000000`), else from the job's
/// options as given.
fn criterion_of(ss: &str, opts: &Map<String, Value>) -> Result<Criterion, String> {
    let whole = |t: &str| -> String {
        // fio prints an absolute limit with six decimals; the rule reads bytes as whole numbers.
        match t.split_once('.') {
            Some((int, frac)) if frac.trim_end_matches('%').chars().all(|c| c == '0') => {
                format!("{int}{}", if t.ends_with('%') { "%" } else { "" })
            }
            _ => t.to_string(),
        }
    };
    Criterion::parse(ss)
        .or_else(|_| Criterion::parse(&whole(ss)))
        .or_else(|e| super::fio::option(opts, &["steadystate", "ss"]).map_or(Err(e), Criterion::parse))
}

/// fio's criterion as a number: `"2.088080%"` is 2.08808 (its size: the slope's direction is
/// stored apart); None where it is no number.
fn criterion_number(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => s.trim().trim_end_matches('%').parse::<f64>().ok(),
        other => other.as_f64(),
    }
    .filter(|c| c.is_finite())
    .map(f64::abs)
}

/// Whether a boolean option of fio's is given true (fio writes a bare option as "").
fn option_is_true(opts: &Map<String, Value>, name: &str) -> bool {
    super::fio::option(opts, &[name]).is_some_and(|v| !matches!(v, "0" | "false" | "no" | "off"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_latency_target_reads_fios_units() {
        let job = object(json!({"latency_depth": 3, "latency_target": 100000, "latency_percentile": 99.0,
                                "latency_window": 200000}));
        let opts = object(json!({"runtime": "3"}));
        let t = latency_target(&job, &opts, "jobs[0]", 201_000_000).unwrap().unwrap();
        assert_eq!(
            (t.target.target_ns, t.target.window_ns, t.target.percentile_hundredths),
            (100_000, 200_000_000, 9900)
        );
        assert_eq!((t.depth, t.measured_depth, t.settled), (Some(3), 3, true));
        let whole = latency_target(&job, &opts, "jobs[0]", 3_000_000_000).unwrap().unwrap();
        assert!(!whole.settled, "a job that ran its whole runtime did not settle");
        assert_eq!(latency_target(&object(json!({})), &opts, "j", 1).unwrap(), None);
        let bad =
            object(json!({"latency_depth": 3, "latency_target": 1, "latency_percentile": 0, "latency_window": 1}));
        assert!(latency_target(&bad, &opts, "j", 1).unwrap_err().to_string().contains("latency_percentile"));
    }

    #[test]
    fn a_steady_state_keeps_fios_window_and_verdict() {
        let job = object(json!({"steadystate": {"ss": "iops_slope:0.001000%", "duration": 2, "attained": 0,
            "criterion": "-2.088080%", "max_deviation": 0.0, "slope": -4353.0,
            "data": {"bw_mean": 853892288, "iops_mean": 208469, "iops": [210646, 206293], "bw": [862806269, 844978308]}}}));
        let v = steady_state(&job, &object(json!({})), "jobs[1]", 4_003_000_000).unwrap().unwrap();
        assert_eq!(v.rule.criterion, Criterion::parse("iops_slope:0.001%").unwrap());
        assert_eq!((v.rule.window_ns, v.window_samples, v.attained, v.attained_at_ns), (2_000_000_000, 2, false, None));
        assert_eq!((v.slope, v.falling, v.criterion), (4353.0, true, Some(2.08808)));
        assert_eq!(v.signed_criterion(), Some(-2.08808));
        assert_eq!((v.mean, v.range, v.windows_judged), (208469.0, 4353.0, 3));
        assert_eq!(v.window[0], Sample { iops: 210646, bw: 862806269 });
        let absolute = criterion_of("bw:1048576.000000", &Map::new()).unwrap();
        assert_eq!(absolute, Criterion::parse("bw:1m").unwrap());
        assert!(steady_state(&object(json!({"steadystate": {"ss": "lat:5%"}})), &Map::new(), "j", 1).is_err());
    }
}
