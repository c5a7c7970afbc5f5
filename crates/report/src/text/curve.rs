//! Throughput-latency curves in `compare`'s text: one row per curve both sides ran, with the
//! curve's own figures A and B, the change and the verdict of each: the maximum within the
//! bound (higher is better) and SPEC SFS 2014's overall response time (lower is better).

use crate::table::{Column, Table};
use iomatrix_analysis::{CurveFigure, CurveRow, Judgement};
use iomatrix_core::human;
use std::fmt::Write;

/// The curves' table under its heading, and what the verdicts rest on; empty without curves.
/// `(a, b)` are the sides' letters.
pub fn curves(rows: &[CurveRow], (a, b): (&str, &str)) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nCurves: each curve's own figures, {a} and {b} (medians over each side's runs), % change and verdict; \
         the maximum within the bound (a second: requests, a personality's operations or the metadata suite's \
         items; higher is better), SPEC SFS 2014's overall response time (lower is better)"
    );
    let mut table = Table::new(vec![
        Column::fit_left("curve"),
        Column::fit_left("bound"),
        Column::fit_right(format!("max within {a}")),
        Column::fit_right(b),
        Column::fit_right("change"),
        Column::fit_left("verdict"),
        Column::fit_right(format!("overall RT {a}")),
        Column::fit_right(b),
        Column::fit_right("change"),
        Column::free("verdict"),
    ]);
    for r in rows {
        let (within, overall) = (&r.max_within_bound, &r.overall_response_time);
        let (wa, wb, wc, wv) = cells(within, human::significant);
        let (oa, ob, oc, ov) = cells(overall, human::nanos);
        table.row([r.curve.clone(), bound(r, (a, b)), wa, wb, wc, wv, oa, ob, oc, ov]);
    }
    out.push_str(&table.render());
    for r in rows.iter().filter(|r| !r.runs_left_out.is_empty()) {
        let runs: Vec<String> = r.runs_left_out.iter().map(|id| format!("#{id}")).collect();
        let _ = writeln!(
            out,
            "  {}: the curve of run(s) {} gives no sample: a point of it is not whole (left out above)",
            r.curve,
            runs.join(", ")
        );
    }
    for r in rows.iter().filter(|r| r.bound_a.is_some() && r.bound_a != r.bound_b) {
        let _ = writeln!(out, "  {}: the sides' bounds differ, so their maxima within them get no verdict", r.curve);
    }
    let verdicts = rows.iter().flat_map(|r| [&r.max_within_bound.verdict, &r.overall_response_time.verdict]);
    if let Some(k) = verdicts.flatten().filter_map(|j: &Judgement| j.repeats_needed).max() {
        let _ = writeln!(
            out,
            "  no verdict: a curve a side is one sample of each figure, with no noise estimate; {k} runs of each \
             curve a side give one (`compare 1,2,3 4,5,6`: --repeat is refused with --curve)"
        );
    }
    out
}

/// "p99 <= 1.00 ms", or each side's where they differ, or "none" (no `--stop-curve`).
fn bound(r: &CurveRow, (a, b): (&str, &str)) -> String {
    match (&r.bound_a, &r.bound_b) {
        (Some(x), Some(y)) if x == y => x.clone(),
        (None, None) => "none".into(),
        (x, y) => {
            let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
            format!("{a}: {}, {b}: {}", side(x), side(y))
        }
    }
}

/// A figure's A, B, change and verdict as the table writes them: `none` where a side has no
/// such figure (no bound, no point within it, fewer than two open-loop points).
fn cells(f: &CurveFigure, shown: impl Fn(f64) -> String) -> (String, String, String, String) {
    let value = |v: Option<f64>| v.map_or_else(|| "none".to_string(), &shown);
    (
        value(f.a),
        value(f.b),
        f.change_pct.map_or_else(|| "-".to_string(), human::signed_percent),
        f.verdict.as_ref().map_or_else(|| "-".to_string(), Judgement::describe),
    )
}
