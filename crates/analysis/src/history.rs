//! One figure over time for the runs of one setup on one target (`iomatrix history RUN`): the
//! runs in groups of consecutive runs with the same labels (repeats of one setup), each group's
//! median with its spread, and between consecutive groups compare's verdict from the same rank
//! test ([`judge`]) on the same samples ([`gate_candidates`]): disturbed and partial cells left
//! out and named as compare leaves them out.

use crate::cells::{Admit, CellStats, Group};
use crate::compare::{compare, gate_candidates, Region};
use crate::gate::{Candidate, Family};
use crate::noise::{judge, Judgement};
use crate::row::change_pct;
use crate::{BadFlag, SuiteShape};
use iomatrix_store::StoredRun;
use serde::Serialize;

/// The label whose value is a note on a run: shown on the time axis, never a reason to start a
/// new group (every run may carry its own).
pub const NOTE_LABEL: &str = "note";

/// A run of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryRun {
    /// The run's id.
    pub id: i64,
    /// When it started, UTC (`2026-11-22T04:11:03Z`).
    pub started_at: String,
    /// When it started, ms since the Unix epoch: the time axis.
    pub started_at_ms: i64,
    /// "complete" or "partial".
    pub status: String,
    /// Its `note` label, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One group of consecutive runs with the same labels: one point of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryPoint {
    /// Its runs, oldest first.
    pub runs: Vec<HistoryRun>,
    /// The labels its runs share (the note aside), in key order.
    pub labels: Vec<(String, String)>,
    /// The figure's samples: every admitted cell of every run (repeats within a run each count).
    pub samples: Vec<f64>,
    /// The samples' median, minimum and maximum, and the sample furthest from the median in % of
    /// it (compare's spread); None where no sample was admitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<PointStats>,
    /// Why there is no sample, where there is none (the cell left out, not in these runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_samples: Option<String>,
    /// The cells left out of its samples (partial, failed, disturbed), each named with its run.
    pub left_out: Vec<String>,
    /// Against the previous point: compare's verdict on the two groups' samples; None for the
    /// first point or where either has no sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Judgement>,
    /// The median's change from the previous point's, in %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_pct: Option<f64>,
}

/// A point's median and band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointStats {
    /// The median sample.
    pub median: f64,
    /// The lowest sample: the band's bottom.
    pub low: f64,
    /// The highest sample: the band's top.
    pub high: f64,
    /// The sample furthest from the median, in % of it (compare's "spread").
    pub spread_pct: f64,
}

/// One figure over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    /// The run asked about.
    pub run: i64,
    /// Its suite.
    pub suite: String,
    /// Its target as given; None where the run does not say.
    pub target: Option<String>,
    /// The figure, named as compare names its row.
    pub figure: String,
    /// Its unit.
    pub unit: String,
    /// Rates: true; times: false.
    pub higher_is_better: bool,
    /// Every figure of the run, by name, that `--figure` can pick.
    pub figures: Vec<String>,
    /// The groups, oldest first.
    pub points: Vec<HistoryPoint>,
}

impl History {
    /// The number of runs over all points.
    pub fn run_count(&self) -> usize {
        self.points.iter().map(|p| p.runs.len()).sum()
    }
}

/// The history of one figure of run `run` over `runs` (the runs of its setup on its target,
/// oldest first, `run` among them; `started_at_ms`: when each started, ms since the epoch). `figure`: a name as compare's `--metric` takes it (a unit,
/// a percentile or part of a figure's name) that must pick exactly one figure of the run; None:
/// the run's first headline figure. A name that picks none or several is refused, listing the
/// figures.
pub fn history(
    run: i64,
    runs: &[StoredRun],
    started_at_ms: &[i64],
    shape: SuiteShape,
    figure: Option<&str>,
) -> Result<History, BadFlag> {
    let Some(own) = runs.iter().find(|r| r.summary.id == run) else {
        return Err(BadFlag(format!(
            "run #{run} is not among the runs of its setup: only complete and partial runs have a history"
        )));
    };
    let own_group = Group::with(&format!("#{run}"), std::slice::from_ref(own), shape, Admit::default());
    let candidates = candidates_of(&own_group, &own_group);
    let chosen = choose(figure, &candidates)?;
    let mut points: Vec<HistoryPoint> = Vec::new();
    for part in consecutive_groups(runs) {
        let (part, times) = (&runs[part.clone()], &started_at_ms[part]);
        let group = Group::with(&labels_name(&part[0]), part, shape, Admit::default());
        let mut point = point_of(part, times, &group, &chosen);
        if let Some(before) = points.last() {
            verdict_against(&mut point, before, &chosen);
        }
        points.push(point);
    }
    Ok(History {
        run,
        suite: own.summary.suite.clone(),
        target: own.conditions_facts().target.text().map(str::to_string),
        figure: chosen.name.clone(),
        unit: chosen.unit.to_string(),
        higher_is_better: chosen.higher_is_better,
        figures: names(&candidates),
        points,
    })
}

/// The figures compare holds between two groups, in its order, with IOPS where `chosen` asks.
fn candidates_of(a: &Group, b: &Group) -> Vec<Candidate> {
    gate_candidates(&compare(a, b, Region::default()), a, b)
}

/// The figures' names, each once, in compare's order.
fn names(candidates: &[Candidate]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        if !out.contains(&c.name) {
            out.push(c.name.clone());
        }
    }
    out
}

/// The figure `--figure` names (as `--metric` reads a name), or the first headline rate.
fn choose(figure: Option<&str>, candidates: &[Candidate]) -> Result<Candidate, BadFlag> {
    let listed = || names(candidates).join("; ");
    let Some(name) = figure.map(str::trim) else {
        return candidates.iter().find(|c| c.higher_is_better).cloned().ok_or_else(|| {
            BadFlag(format!("the run has no headline rate to draw; give --figure, one of: {}", listed()))
        });
    };
    if let Some(exact) = candidates.iter().find(|c| c.name.eq_ignore_ascii_case(name)) {
        return Ok(exact.clone());
    }
    let family = Family::choose(Some(name), candidates)
        .map_err(|e| BadFlag(format!("--figure {}; the run's figures: {}", without_metric(&e.0, name), listed())))?;
    let picked: Vec<&Candidate> = candidates.iter().filter(|c| family.takes(c)).collect();
    match picked.as_slice() {
        [one] => {
            let mut one = (*one).clone();
            if family == Family::Iops {
                one.as_iops();
            }
            Ok(one)
        }
        _ => Err(BadFlag(format!(
            "--figure {name} names {} figures of the run, and a history draws one: give one of: {}",
            picked.len(),
            picked.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join("; ")
        ))),
    }
}

/// `--metric`'s refusal said of `--figure`: "NAME: why; give ...".
fn without_metric(refusal: &str, name: &str) -> String {
    let why = refusal.strip_prefix(&format!("--metric {name}: ")).unwrap_or(refusal);
    let why = why.split("; give a unit").next().unwrap_or(why);
    format!("{name}: {why}")
}

/// The labels that make a group (the note aside), in key order.
fn group_labels(run: &StoredRun) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> =
        run.summary.labels.iter().filter(|(k, _)| k != NOTE_LABEL).cloned().collect();
    labels.sort();
    labels
}

fn labels_name(run: &StoredRun) -> String {
    let labels = group_labels(run);
    if labels.is_empty() {
        return "(no labels)".to_string();
    }
    labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// Runs in order cut where the labels (the note aside) change.
fn consecutive_groups(runs: &[StoredRun]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=runs.len() {
        if i == runs.len() || group_labels(&runs[i]) != group_labels(&runs[start]) {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// The chosen figure among a group's own candidates (the group against itself): its samples,
/// or why it has none.
fn samples_of(group: &Group, chosen: &Candidate) -> Result<Vec<f64>, String> {
    let mut found = candidates_of(group, group)
        .into_iter()
        .find(|c| c.name == chosen.name && c.figure == chosen.figure)
        .ok_or_else(|| "not in these runs".to_string())?;
    if chosen.unit == "IOPS" {
        found.as_iops();
    }
    match found.samples {
        Ok((samples, _)) => Ok(samples),
        Err(why) => Err(why.replace("A's cell left out", "cell left out")),
    }
}

fn point_of(part: &[StoredRun], times: &[i64], group: &Group, chosen: &Candidate) -> HistoryPoint {
    let runs = part
        .iter()
        .zip(times)
        .map(|(r, ms)| HistoryRun {
            id: r.summary.id,
            started_at: r.summary.started_at.clone(),
            started_at_ms: *ms,
            status: r.summary.status.as_str().to_string(),
            note: r.summary.labels.iter().find(|(k, _)| k == NOTE_LABEL).map(|(_, v)| v.clone()),
        })
        .collect();
    let left_out = group
        .left_out
        .iter()
        .filter(|l| chosen.name == l.cell || chosen.name.starts_with(&format!("{} ", l.cell)))
        .map(crate::cells::LeftOut::describe)
        .collect();
    let (samples, no_samples) = match samples_of(group, chosen) {
        Ok(s) if !s.is_empty() => (s, None),
        Ok(_) => (Vec::new(), Some("no sample".to_string())),
        Err(why) => (Vec::new(), Some(why)),
    };
    let stats = (!samples.is_empty()).then(|| {
        let s = CellStats::of(samples.clone(), "");
        PointStats { median: s.median, low: s.min, high: s.max, spread_pct: s.spread_pct }
    });
    HistoryPoint {
        runs,
        labels: group_labels(&part[0]),
        samples,
        stats,
        no_samples,
        left_out,
        verdict: None,
        change_pct: None,
    }
}

/// `point` against the one before: compare's verdict on the two groups' samples.
fn verdict_against(point: &mut HistoryPoint, before: &HistoryPoint, chosen: &Candidate) {
    let (Some(now), Some(then)) = (point.stats, before.stats) else { return };
    point.verdict = Some(judge(&before.samples, &point.samples, chosen.higher_is_better));
    point.change_pct = Some(change_pct(then.median, now.median));
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_store::{CellRow, CellState, RunStatus, RunSummary};

    /// A run of the setup and when it started (ms since the epoch).
    type TimedRun = (StoredRun, i64);

    fn history(run: i64, runs: &[TimedRun], shape: SuiteShape, figure: Option<&str>) -> Result<History, BadFlag> {
        let (stored, times): (Vec<StoredRun>, Vec<i64>) = runs.iter().cloned().unzip();
        super::history(run, &stored, &times, shape, figure)
    }

    const MATRIX: SuiteShape = SuiteShape { matrix: true, whole_cell_latency: None, ..SuiteShape::PLAIN };

    /// A stored run of one IOzone cell (read 64/4) sampled once per value, labelled.
    fn run(id: i64, values: &[f64], labels: &[(&str, &str)], state: CellState) -> TimedRun {
        let cells = values
            .iter()
            .enumerate()
            .map(|(seq, v)| CellRow {
                kib_per_sec: *v,
                file_size: Some(64),
                record_size: Some(4),
                metrics: serde_json::json!({"repeat": seq + 1}),
                state: state.clone(),
                seq,
                ..CellRow::blank("read", "psync")
            })
            .collect();
        let summary = RunSummary {
            id,
            suite: "iozone".into(),
            status: RunStatus::Complete,
            started_at: iomatrix_core::format_utc(id * 60_000),
            ended_at: None,
            host: "h".into(),
            command_line: String::new(),
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            cells: values.len(),
            total_cells: values.len(),
            disturbed_cells: 0,
            error: None,
            iomatrix_version: "0".into(),
            pid: 0,
            pid_start: None,
        };
        let conditions = serde_json::json!({"target": "/mnt/t"});
        (StoredRun::new(summary, serde_json::json!({}), serde_json::json!({}), conditions, cells), id * 60_000)
    }

    fn whole(id: i64, values: &[f64], labels: &[(&str, &str)]) -> TimedRun {
        run(id, values, labels, CellState::complete(1))
    }

    #[test]
    fn groups_follow_the_labels_and_verdicts_are_compares_on_the_groups_samples() {
        let runs = vec![
            whole(1, &[100.0, 102.0], &[("build", "1")]),
            whole(2, &[98.0, 101.0], &[("build", "1"), ("note", "first of the new disks")]),
            // The same setup again: its samples interleave with the group before's.
            whole(3, &[99.0, 103.0, 100.5, 97.0], &[("build", "2")]),
            whole(4, &[60.0, 61.0, 59.0, 62.0], &[("build", "3")]),
            whole(5, &[60.5], &[("build", "4")]),
        ];
        let h = history(4, &runs, MATRIX, None).unwrap();
        assert_eq!((h.figure.as_str(), h.unit.as_str(), h.target.as_deref()), ("read 64/4", "KB/s", Some("/mnt/t")));
        let ids: Vec<Vec<i64>> = h.points.iter().map(|p| p.runs.iter().map(|r| r.id).collect()).collect();
        assert_eq!(ids, [vec![1, 2], vec![3], vec![4], vec![5]], "a note does not start a group");
        assert_eq!(h.points[0].runs[1].note.as_deref(), Some("first of the new disks"));
        assert_eq!(h.points[0].samples, [100.0, 102.0, 98.0, 101.0]);
        let s = h.points[0].stats.unwrap();
        assert_eq!((s.median, s.low, s.high), (100.5, 98.0, 102.0));
        assert!(h.points[0].verdict.is_none());
        let verdicts: Vec<String> = h.points[1..].iter().map(|p| p.verdict.as_ref().unwrap().describe()).collect();
        // 4 vs 4 samples: the exact rank test; all four of B below all four of A is p = 2/70.
        assert_eq!(verdicts[0], "within noise (p=0.886)");
        assert_eq!(verdicts[1], "slower (p=0.029)");
        assert_eq!(verdicts[2], "no verdict (4 vs 1 samples)");
        let change = h.points[2].change_pct.unwrap();
        assert!((change - (60.5 / 99.75 - 1.0) * 100.0).abs() < 1e-9, "the medians 99.75 and 60.5: {change}");
    }

    #[test]
    fn disturbed_cells_are_left_out_and_named_and_a_group_without_samples_says_why() {
        let disturbed = CellState::complete(1).disturbed("machine busy".into());
        let runs = vec![
            whole(1, &[100.0, 101.0], &[("build", "1")]),
            run(2, &[300.0], &[("build", "1")], disturbed.clone()),
            run(3, &[50.0], &[("build", "2")], disturbed),
            whole(4, &[99.0], &[("build", "3")]),
        ];
        let h = history(1, &runs, MATRIX, None).unwrap();
        assert_eq!(h.points[0].samples, [100.0, 101.0], "the disturbed sample is no sample");
        assert_eq!(h.points[0].left_out.len(), 1);
        assert!(h.points[0].left_out[0].contains("run #2") && h.points[0].left_out[0].contains("machine busy"));
        assert!(h.points[1].stats.is_none() && h.points[1].verdict.is_none());
        assert!(h.points[1].no_samples.as_deref().unwrap().contains("left out"), "{:?}", h.points[1].no_samples);
        assert!(h.points[2].verdict.is_none(), "no verdict against a group without samples");
    }

    #[test]
    fn a_figure_must_name_exactly_one_of_the_runs_figures() {
        let runs = vec![whole(1, &[100.0], &[])];
        let refused = history(1, &runs, MATRIX, Some("zzz")).unwrap_err().0;
        assert!(refused.starts_with("--figure zzz: ") && refused.contains("the run's figures: read 64/4"), "{refused}");
        assert_eq!(history(1, &runs, MATRIX, Some("READ 64/4")).unwrap().figure, "read 64/4");
        let iops = history(1, &runs, MATRIX, Some("IOPS")).unwrap();
        assert_eq!((iops.unit.as_str(), iops.points[0].samples[0]), ("IOPS", 100.0 * 1024.0 / 4.0));
        assert!(history(7, &runs, MATRIX, None).is_err(), "a run not among them");
    }
}
