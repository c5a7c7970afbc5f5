//! Throughput-latency curves in the HTML report (issue 52): per curve, the mean and p99 latency
//! over the achieved rate with every system on one chart, the curve table (each system's points
//! and the curve's own figures), and each comparison's verdicts on the curve's figures.

use crate::document::Report;
use crate::svg::escape;
use crate::svg_curve::{curve_charts, curve_lines, CurveLine};
use iomatrix_analysis::Comparison;
use iomatrix_core::human;
use std::fmt::Write;

/// The report's curves section; nothing where no group ran a curve.
pub(crate) fn curves_html(h: &mut String, report: &Report) {
    let sides: Vec<_> = report.groups.iter().map(|g| (g.name.as_str(), &g.summary.curves)).collect();
    let curves = curve_lines(&sides);
    if curves.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>Curves</h2><p class=\"muted\">Each curve's points: latency over the rate each point achieved, a line \
         per system (medians over its runs). The maximum (closed loop) counts latency from each request's issue; \
         the open-loop points from each request's intended start. <code>iomatrix show RUN</code> gives every \
         point's figures.</p>"
    );
    for (key, lines) in &curves {
        let curve = key.describe();
        let _ = writeln!(h, "<h3>{}</h3>", escape(&curve));
        if lines.iter().all(|l| l.points.is_empty()) {
            h.push_str(
                "<p class=\"note\">No point of this curve gives samples: every one is left out (not whole: see \
                 each group's cells), so there is nothing to draw.</p>\n",
            );
        } else {
            let _ = writeln!(h, "<div class=\"charts\">{}</div>", curve_charts(&curve, lines).concat());
        }
        curve_table(h, lines);
    }
    for c in report.comparisons.iter().filter(|c| !c.curves.is_empty()) {
        verdicts_html(h, c);
    }
}

/// Each system's points and its curve's own figures.
fn curve_table(h: &mut String, lines: &[CurveLine]) {
    h.push_str(
        "<table class=\"curve\"><tr><th class=\"l\">system</th><th>load</th><th>achieved ops/s</th><th>mean</th>\
         <th>p99</th><th class=\"l\">bound</th></tr>\n",
    );
    let ns = |v: Option<f64>| v.map_or_else(|| "-".to_string(), human::nanos);
    for l in lines {
        if l.points.is_empty() {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td colspan=\"5\" class=\"l\">every point left out (not whole)</td></tr>",
                escape(&l.system)
            );
        }
        for p in &l.points {
            let judged = match (&l.bound, p.past_bound) {
                (None, _) => "-",
                (Some(_), true) => "past",
                (Some(_), false) => "within",
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{judged}</td></tr>",
                escape(&l.system),
                p.load,
                human::significant(p.achieved_per_sec),
                ns(p.mean_ns),
                ns(p.p99_ns)
            );
        }
    }
    h.push_str("</table>\n<table class=\"curve\"><tr><th class=\"l\">system</th><th class=\"l\">bound</th><th>max within the bound (ops/s)</th><th>overall response time</th></tr>\n");
    for l in lines {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&l.system),
            escape(l.bound.as_deref().unwrap_or("none")),
            l.max_within_bound.map_or_else(|| "none".to_string(), human::significant),
            ns(l.overall_response_time_ns)
        );
    }
    h.push_str("</table>\n");
}

/// A comparison's verdicts on its curves' own figures.
fn verdicts_html(h: &mut String, c: &Comparison) {
    let _ = writeln!(
        h,
        "<h3>Curves, {} against {}</h3><table class=\"curve\"><tr><th class=\"l\">curve</th><th class=\"l\">figure</th>\
         <th>A</th><th>B</th><th>change</th><th class=\"l\">verdict</th></tr>",
        escape(&c.b),
        escape(&c.a)
    );
    for r in &c.curves {
        for (figure, f, shown) in crate::svg_curve::figure_rows(r) {
            let value = |v: Option<f64>| v.map_or_else(|| "none".to_string(), shown);
            let verdict = f.verdict.as_ref().map_or_else(|| "-".to_string(), |j| j.describe());
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{figure}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l {}\">{}</td></tr>",
                escape(&r.curve),
                value(f.a),
                value(f.b),
                f.change_pct.map_or_else(|| "-".to_string(), human::signed_percent),
                crate::html::verdict_class(&verdict),
                escape(&verdict)
            );
        }
    }
    h.push_str("</table>\n");
}
