//! The report as one self-contained HTML page: inline CSS and SVG charts,
//! no script, nothing fetched (it opens offline and from a file).

use crate::document::{
    comparison_of, grid, is_baseline, is_matrix_suite, matrix_tests, matrix_verdicts, mean_change, not_complete,
    sides_table, size, verdict_of, verdict_words, Report, ReportGroup, PARTIAL_MARK,
};
use crate::svg::{
    bar_chart, escape, kib_rate_unit, short, Bar, Heatmap, LineChart, Scale, Series, Tone, XAxis, MAX_SERIES,
    SYSTEM_PALETTE,
};
use crate::svg_line::{swept_charts, Side};
use iomatrix_analysis::{CellKey, CellStats, Comparison, Judgement, ManyComparison};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#111;max-width:1300px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:36px}\
h3{font-size:15px;margin-top:22px}table{border-collapse:collapse;margin:8px 0;font-size:12px}\
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\
.note{color:#8a4b00}.charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}\
.muted{color:#666;font-size:12px}\
td.faster{background:#d9efdb;color:#0b5a2a}td.slower{background:#f9dcd9;color:#8a1a10}\
td.unjudged{background:#eeeeee;color:#555}";

/// The page's `<meta name="generator">`: how a later write tells a previous iomatrix report.
pub const GENERATOR: &str = "iomatrix report";

/// The whole report as one HTML page.
pub fn render(report: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"generator\" content=\"{GENERATOR}\"/><title>iomatrix report</title><style>{STYLE}</style></head><body>\n"
    );
    let _ = writeln!(h, "<h1>iomatrix report</h1>");
    let _ = writeln!(
        h,
        "<p class=\"muted\">Made by <code>{}</code> at {} UTC. Figures are medians over each group's runs (and repeats).</p>",
        escape(&report.made_by),
        escape(&report.made_at)
    );
    for (k, g) in report.groups.iter().enumerate() {
        group_html(&mut h, g, SYSTEM_PALETTE[k % SYSTEM_PALETTE.len()]);
    }
    configuration_bars(&mut h, report);
    crate::html_curve::curves_html(&mut h, report);
    if let Some(many) = &report.sides {
        sides_html(&mut h, many);
    }
    for c in &report.comparisons {
        comparison_html(&mut h, c);
    }
    h.push_str("</body></html>\n");
    h
}

/// One group: its runs, what is not complete, its caching flags and its figures, drawn in the
/// group's own `colour` where a chart shows its cells as bars.
fn group_html(h: &mut String, g: &ReportGroup, colour: &'static str) {
    let ids: Vec<String> = g.runs.iter().map(|r| format!("#{}", r.summary.id)).collect();
    let _ = writeln!(h, "<h2>{}: {} suite, run(s) {}</h2>", escape(&g.name), escape(&g.summary.suite), ids.join(", "));
    environment_html(h, g);
    let lines = not_complete(g);
    if !lines.is_empty() {
        let _ =
            writeln!(h, "<h3>Not complete</h3><p class=\"muted\">Clients or connections failed in these cells.</p>");
        for line in lines {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&line));
        }
    }
    if let Some(flags) = &g.flags {
        let _ = writeln!(h, "<h3>Caching</h3><p>Limit: {}.</p>", escape(&flags.limit));
        if flags.boundaries.is_empty() {
            let _ = writeln!(h, "<p>No cell above the limit.</p>");
        }
        for b in &flags.boundaries {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(b));
        }
        if flags.unchecked > 0 {
            let _ = writeln!(
                h,
                "<p class=\"muted\">{} cell(s) not checked: the limit run has no such cell.</p>",
                flags.unchecked
            );
        }
    }
    if is_matrix_suite(g) {
        for test in matrix_tests(g) {
            let (files, records, values, marked, partial) = grid(g, &test);
            // The scale's figures in the unit it names: 2.24 GB/s, never "2.24M KB/s".
            let largest = values.iter().flatten().flatten().copied().fold(0.0, f64::max);
            let (divisor, rate_unit) = kib_rate_unit(largest);
            let shown: Vec<Vec<Option<f64>>> =
                values.iter().map(|row| row.iter().map(|v| v.map(|v| v / divisor)).collect()).collect();
            let heat = Heatmap {
                title: &format!("{test}: {rate_unit}"),
                row_label: "file size",
                column_label: "record size",
                rows: files.iter().map(|f| size(*f)).collect(),
                columns: records.iter().map(|r| size(*r)).collect(),
                values: shown,
                marked,
                within_noise: Vec::new(),
                no_verdict: Vec::new(),
                partial,
                scale: Scale::Sequential,
                unit: rate_unit,
            };
            let series = records
                .iter()
                .enumerate()
                .map(|(j, r)| {
                    let points = files
                        .iter()
                        .enumerate()
                        .filter_map(|(i, f)| values[i][j].map(|v| (*f as f64, v / divisor)))
                        .collect();
                    Series::new(format!("record {}", size(*r)), points)
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            let sizes = |x: f64| size(x as u64);
            let lines = LineChart {
                title: &format!("{test}: {rate_unit} by file size, a line per record size"),
                x_label: "file size",
                y_label: rate_unit,
                x_text: &sizes,
                series,
                log_y: false,
                x_axis: XAxis::Log2,
                class: "lines",
            };
            let _ = writeln!(
                h,
                "<h3>{}</h3><div class=\"charts\">{}{}</div>",
                escape(&test),
                heat.render(),
                lines.render()
            );
        }
    } else {
        cell_charts(h, g, colour);
    }
    series_html(h, g);
    hosts_html(h, g);
    latency_html(h, g);
    noise_html(h, g);
}

/// The most charts of figures over time a group draws: a sweep of many cells says the rest.
const MAX_SERIES_CHARTS: usize = 48;

/// Each cell's figures over time (ops/s per interval), for the cells that store them.
fn series_html(h: &mut String, g: &ReportGroup) {
    let mut charts = Vec::new();
    let mut more = 0;
    for run in &g.runs {
        // A run's cells by the one ordering rule (queue depth 1 < 4 < 16), as every listing.
        let mut cells: Vec<_> = run.cell_results.iter().map(|c| (iomatrix_analysis::CellKey::of(c), c)).collect();
        cells.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.seq.cmp(&b.1.seq)));
        for (key, cell) in cells {
            let Some(series) = cell.series() else { continue };
            let title = format!("run #{} cell {} {}: ops/s over time", run.summary.id, cell.seq, key.describe());
            match crate::svg_series::series_chart(&title, &series) {
                Some(_) if charts.len() >= MAX_SERIES_CHARTS => more += 1,
                Some(svg) => charts.push(svg),
                None => {}
            }
        }
    }
    if charts.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h3>Over time</h3><p class=\"muted\">Each cell's operations per second, interval by interval; the last \
         interval, cut short by the cell's end, is a hollow point apart from the line: its count over its own, \
         shorter length (often only the requests that crossed the end). <code>iomatrix show RUN --series</code> \
         gives the figures.</p><div class=\"charts\">{}</div>",
        charts.concat()
    );
    if more > 0 {
        let _ = writeln!(h, "<p class=\"muted\">{more} more cell(s) over time not drawn: see show --series.</p>");
    }
}

/// A group's cells outside matrices: a line chart per swept parameter (queue depth, sizes), a
/// bar per other cell, in the group's `colour`, a chart per unit.
fn cell_charts(h: &mut String, g: &ReportGroup, colour: &'static str) {
    let side = Side { name: &g.name, cells: &g.summary.cells };
    let (lines, drawn) = swept_charts(&[side], |_| false);
    let mut by_unit: BTreeMap<&str, Vec<Bar>> = BTreeMap::new();
    for (k, s) in g.summary.cells.iter().filter(|(k, _)| !drawn.contains(*k)) {
        let mark = if s.partial_samples > 0 { PARTIAL_MARK } else { "" };
        by_unit.entry(s.unit).or_default().push(Bar {
            name: format!("{}{mark}", k.describe()),
            value: s.median,
            spread: spread(s),
            fill: colour,
            words: String::new(),
        });
    }
    let _ = writeln!(h, "<h3>Figures</h3><div class=\"charts\">");
    h.push_str(&lines.concat());
    for (unit, bars) in by_unit {
        let title = format!("{}: median of each cell", g.name);
        h.push_str(&bar_chart(&title, unit, &bars, &spread_note(&bars, false)));
    }
    h.push_str("</div>\n");
}

/// Runs whose clients ran on several hosts: each host's clients per cell, and the straggler.
fn hosts_html(h: &mut String, g: &ReportGroup) {
    for f in &g.hosts {
        let _ = writeln!(
            h,
            "<h3>Hosts of run #{}</h3><p class=\"muted\">Per cell and host, in {}: the host's clients' own rates \
             summed, its slowest and its fastest client.</p>",
            f.run,
            escape(&f.unit)
        );
        let _ = writeln!(
            h,
            "<table><tr><th class=\"l\">cell</th><th class=\"l\">host</th><th>clients</th><th>sum</th>\
             <th>slowest</th><th>fastest</th></tr>"
        );
        let rate = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
        for r in &f.rows {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.cell),
                escape(&r.host),
                r.clients,
                rate(r.sum),
                rate(r.slowest),
                rate(r.fastest)
            );
        }
        h.push_str("</table>\n");
        for s in &f.stragglers {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&s.sentence()));
        }
    }
}

fn environment_html(h: &mut String, g: &ReportGroup) {
    let _ = writeln!(
        h,
        "<table><tr><th class=\"l\">run</th><th class=\"l\">host</th><th class=\"l\">kernel</th><th class=\"l\">CPU</th>\
         <th>RAM</th><th class=\"l\">file system</th><th class=\"l\">mount options</th><th class=\"l\">backend</th>\
         <th class=\"l\">cache</th><th>clients</th><th class=\"l\">files vs RAM</th><th class=\"l\">labels</th></tr>"
    );
    for r in &g.runs {
        let e = r.environment_facts();
        let target = e.target.clone().unwrap_or_default();
        let c = r.conditions_facts();
        let labels: Vec<String> = r.summary.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let ram = e.ram_bytes.map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)).unwrap_or("unknown".into());
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">#{}{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{} x {}</td><td>{}</td>\
             <td class=\"l\">{} ({})</td><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td class=\"l\">{}</td><td>{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            r.summary.id,
            match r.summary.status {
                iomatrix_store::RunStatus::Complete => String::new(),
                status => format!(" ({})", status.as_str()),
            },
            escape(&r.summary.host),
            escape(&e.kernel.shown()),
            escape(&e.cpu_count.shown()),
            escape(&e.cpu_model.shown()),
            escape(&ram),
            escape(&target.fs_type.shown()),
            escape(&target.mount_source.shown()),
            escape(&target.mount_options.shown()),
            escape(&c.backend.shown()),
            if c.direct.is_true() { ", O_DIRECT" } else { "" },
            escape(&c.cache.shown()),
            escape(&c.clients.shown()),
            escape(&c.files_vs_ram.shown()),
            escape(&labels.join(" "))
        );
    }
    h.push_str("</table>\n");
}

fn latency_html(h: &mut String, g: &ReportGroup) {
    type Percentile = fn(&iomatrix_store::OpSummary) -> Option<f64>;
    const POINTS: [(Percentile, f64, &str); 5] = [
        (|s| s.p50_ns, 1.0, "p50"),
        (|s| s.p90_ns, 2.0, "p90"),
        (|s| s.p99_ns, 4.0, "p99"),
        (|s| s.p99_9_ns, 8.0, "p99.9"),
        (|s| s.p99_99_ns, 16.0, "p99.99"),
    ];
    let series: Vec<Series> = g
        .summary
        .latency
        .iter()
        .map(|((key, op), summaries)| {
            let points = POINTS
                .iter()
                .filter_map(|(field, x, _)| {
                    let v: Vec<f64> = summaries.iter().filter_map(field).collect();
                    let m = iomatrix_analysis::median(&v);
                    (m > 0.0).then_some((*x, m / 1e3))
                })
                .collect();
            Series::new(format!("{} {op}", key.describe()), points)
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return;
    }
    // Every cell's operations are drawn: a chart per MAX_SERIES lines, so colours stay apart.
    let charts = series.len().div_ceil(MAX_SERIES);
    let label = |x: f64| POINTS.iter().find(|p| p.1 == x).map_or(String::new(), |p| p.2.to_string());
    let _ = writeln!(h, "<h3>Latency</h3><div class=\"charts\">");
    let mut series = series.into_iter();
    for n in 1..=charts {
        let part: Vec<Series> = series.by_ref().take(MAX_SERIES).collect();
        let title = if charts > 1 {
            format!("Latency percentiles ({n} of {charts}; microseconds, log scale)")
        } else {
            "Latency percentiles (microseconds, log scale)".to_string()
        };
        let chart = LineChart {
            title: &title,
            x_label: "percentile",
            y_label: "us",
            x_text: &label,
            series: part,
            log_y: true,
            x_axis: XAxis::Log2,
            class: "lines",
        };
        h.push_str(&chart.render());
    }
    h.push_str("</div>\n");
}

fn noise_html(h: &mut String, g: &ReportGroup) {
    let mut noisy: Vec<(&CellKey, &iomatrix_analysis::CellStats)> =
        g.summary.cells.iter().filter(|(_, s)| s.values.len() > 1).collect();
    if noisy.is_empty() {
        return;
    }
    noisy.sort_by(|a, b| b.1.spread_pct.total_cmp(&a.1.spread_pct));
    let _ = writeln!(
        h,
        "<h3>Noise</h3><p class=\"muted\">Cells with several samples, noisiest first; spread = the sample furthest from the median, in % of it.</p>\
         <table><tr><th class=\"l\">cell</th><th>samples</th><th>median</th><th>min</th><th>max</th><th>spread</th></tr>"
    );
    for (k, s) in noisy.iter().take(15) {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.0}</td><td>{:.1}%</td></tr>",
            escape(&k.describe()),
            s.values.len(),
            s.median,
            s.min,
            s.max,
            s.spread_pct
        );
    }
    h.push_str("</table>\n");
}

/// The lowest and highest of a figure's samples, where it has more than one.
fn spread(s: &CellStats) -> Option<(f64, f64)> {
    (s.values.len() > 1).then_some((s.min, s.max))
}

/// A bar chart's note on its error bars: which bars have one and what it spans.
fn spread_note(bars: &[Bar], means: bool) -> String {
    let with = bars.iter().filter(|b| b.spread.is_some()).count();
    let none_for = if means { "a mean over cells" } else { "one sample" };
    match with {
        0 => format!("no error bars: {none_for}"),
        n if n == bars.len() => "error bars: lowest to highest sample".to_string(),
        _ => format!("error bars: lowest to highest sample; none for {none_for}"),
    }
}

/// What the colours of the side-by-side bars mean, above them.
const VERDICT_COLOURS: &str = "Colour is the verdict of the rank test of each side's samples against the \
                               baseline's (Mann-Whitney, two-sided, 5% level): green faster, red slower beyond the \
                               noise; grey within noise or no verdict (too few samples); slate the baseline. A mean \
                               over cells is coloured only where every cell has the same verdict beyond the noise.";

/// One bar per group for each figure, among the groups of one suite (two
/// or more): per matrix test the mean over the cells all those groups have,
/// for other suites each cell they all have. Where the groups were compared with the baseline,
/// each bar's colour is its verdict; otherwise each group has its own colour.
fn configuration_bars(h: &mut String, report: &Report) {
    let mut suites: Vec<(&str, Vec<(usize, &ReportGroup)>)> = Vec::new();
    for (k, g) in report.groups.iter().enumerate() {
        match suites.iter_mut().find(|(s, _)| *s == g.summary.suite) {
            Some((_, groups)) => groups.push((k, g)),
            None => suites.push((&g.summary.suite, vec![(k, g)])),
        }
    }
    let mut heading = false;
    for (suite, groups) in suites.iter().filter(|(_, groups)| groups.len() > 1) {
        let first = &groups[0].1.summary;
        let common: BTreeSet<&CellKey> =
            first.cells.keys().filter(|k| groups.iter().all(|(_, g)| g.summary.cells.contains_key(*k))).collect();
        if common.is_empty() {
            continue;
        }
        if !heading {
            let _ = writeln!(h, "<h2>Configurations side by side</h2>");
            heading = true;
        }
        let compared = groups.iter().any(|(_, g)| comparison_of(report, &g.name).is_some());
        let _ = writeln!(h, "<h3>{} suite</h3>", escape(suite));
        if compared {
            let _ = writeln!(h, "<p class=\"muted\">{VERDICT_COLOURS}</p>");
        }
        h.push_str("<div class=\"charts\">\n");
        let is_matrix = |k: &CellKey| {
            first.shape.matrix && k.variant.is_empty() && k.file_size.is_some() && k.record_size.is_some()
        };
        // A swept parameter is a line per group over its values; the other cells are bars.
        let sides: Vec<Side> = groups.iter().map(|(_, g)| Side { name: &g.name, cells: &g.summary.cells }).collect();
        let (lines, drawn) = swept_charts(&sides, is_matrix);
        h.push_str(&lines.concat());
        // In the cells' order (qd=4 before qd=16), not by the figure's name.
        let mut figures: Vec<(String, (String, Vec<&CellKey>))> = Vec::new();
        for k in common.iter().filter(|k| !drawn.contains(**k)) {
            let (name, unit) = if is_matrix(k) {
                let n = common.iter().filter(|c| c.test == k.test).count();
                (format!("{}: mean over {n} common cells", k.test), "KB/s".to_string())
            } else {
                (k.describe(), first.cells.get(*k).map_or("", |s| s.unit).to_string())
            };
            match figures.iter_mut().find(|(n, _)| *n == name) {
                Some((_, (_, keys))) => keys.push(k),
                None => figures.push((name, (unit, vec![k]))),
            }
        }
        for (name, (unit, keys)) in figures {
            let bars: Vec<Bar> = groups.iter().map(|(k, g)| side_bar(report, (*k, g), &keys, compared)).collect();
            h.push_str(&bar_chart(&name, &unit, &bars, &spread_note(&bars, keys.len() > 1)));
        }
        h.push_str("</div>\n");
    }
}

/// Group `g` (the `k`th) as one bar of a side-by-side chart of the figure of `keys` (the mean of
/// their medians where several): coloured by its verdict against the baseline where `compared`,
/// else in the group's own colour.
fn side_bar(report: &Report, (k, g): (usize, &ReportGroup), keys: &[&CellKey], compared: bool) -> Bar {
    let stats: Vec<&CellStats> = keys.iter().filter_map(|key| g.summary.cells.get(*key)).collect();
    let value = stats.iter().map(|s| s.median).sum::<f64>() / keys.len() as f64;
    let spread = match stats.as_slice() {
        [one] if keys.len() == 1 => spread(one),
        _ => None,
    };
    if !compared {
        let fill = SYSTEM_PALETTE[k % SYSTEM_PALETTE.len()];
        return Bar { name: g.name.clone(), value, spread, fill, words: String::new() };
    }
    let (tone, words) = if is_baseline(report, k) {
        (Tone::Baseline, "baseline".to_string())
    } else if let Some(c) = comparison_of(report, &g.name) {
        let verdicts: Vec<Option<&Judgement>> = keys.iter().map(|key| verdict_of(c, key)).collect();
        verdict_tone(&verdicts)
    } else {
        (Tone::Unjudged, "not compared".to_string())
    };
    Bar { name: g.name.clone(), value, spread, fill: tone.fill(), words }
}

/// The tone and words of a bar over the figures whose `verdicts` are given: one figure's verdict
/// as `compare` prints it; several figures' verdicts counted, coloured only where all agree.
fn verdict_tone(verdicts: &[Option<&Judgement>]) -> (Tone, String) {
    match verdicts {
        [Some(j)] => (Tone::of_verdict(j.verdict), j.describe()),
        [None] => (Tone::Unjudged, "not compared".to_string()),
        _ => {
            let count = |v: &str| verdicts.iter().flatten().filter(|j| j.verdict == v).count();
            let counted: Vec<String> = ["faster", "slower", "within noise", "no verdict"]
                .iter()
                .filter(|v| count(v) > 0)
                .map(|v| format!("{v} in {}", count(v)))
                .collect();
            let tone = match verdicts.iter().map(|j| j.map(|j| Tone::of_verdict(j.verdict))).collect::<BTreeSet<_>>() {
                one if one.len() == 1 => one.into_iter().next().flatten().unwrap_or(Tone::Unjudged),
                _ => Tone::Unjudged,
            };
            (tone, format!("cells: {}", counted.join(", ")))
        }
    }
}

/// Every side against the baseline in one table (three sides or more).
fn sides_html(h: &mut String, many: &ManyComparison) {
    let (header, rows) = sides_table(many);
    let base = &many.sides[many.baseline].letter;
    let _ = writeln!(
        h,
        "<h2>Every side against the baseline {base}</h2><p class=\"muted\">Each side's median, its % change from \
         {base}'s and the verdict of the rank test of the samples (Mann-Whitney, two-sided, 5% level); - where a \
         side has no such figure. The ratio maps of each pair follow.</p><table><tr>"
    );
    for (i, title) in header.iter().enumerate() {
        let class = if i == 0 { " class=\"l\"" } else { "" };
        let _ = write!(h, "<th{class}>{}</th>", escape(title));
    }
    h.push_str("</tr>\n");
    for row in rows {
        h.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = match i {
                0 => " class=\"l\"".to_string(),
                _ if header[i] == "verdict" => format!(" class=\"{}\"", verdict_class(cell)),
                _ => String::new(),
            };
            let _ = write!(h, "<td{class}>{}</td>", escape(cell));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

/// The class of a table cell that holds `verdict` (as `judge` words it, perhaps with its numbers
/// after it): its colour is the verdict's, grey unless beyond the noise.
pub(crate) fn verdict_class(verdict: &str) -> &'static str {
    match Tone::of_verdict(verdict.split(" (").next().unwrap_or(verdict)) {
        Tone::Faster => "faster",
        Tone::Slower => "slower",
        Tone::Unjudged | Tone::Baseline => "unjudged",
    }
}

/// One comparison of B against A: what differs, each ratio map coloured by its cells' verdicts,
/// and the other figures with their verdicts.
fn comparison_html(h: &mut String, c: &Comparison) {
    let _ = writeln!(h, "<h2>{} against {} (ratios B/A)</h2>", escape(&c.b), escape(&c.a));
    if c.condition_differences.is_empty() && c.plan_differences.is_empty() {
        let _ = writeln!(h, "<p class=\"muted\">Same conditions on both sides.</p>");
    }
    for (side, cells) in [("A", &c.left_out_a), ("B", &c.left_out_b)] {
        for l in cells {
            let _ = writeln!(h, "<p class=\"note\">Not complete, left out of {side}: {}</p>", escape(&l.describe()));
        }
    }
    for (what, list) in [("Plan", &c.plan_differences), ("Environment", &c.environment_differences)] {
        for d in list {
            let _ = writeln!(
                h,
                "<p class=\"note\">{what} differs: {}: {} vs {}</p>",
                escape(&d.name),
                escape(&d.a),
                escape(&d.b)
            );
        }
    }
    for d in &c.condition_differences {
        let _ = writeln!(h, "<p class=\"note\">Conditions differ: {}</p>", escape(d));
    }
    for (k, m) in c.matrices.iter().enumerate() {
        let cells_saying = |verdict: &str| -> Vec<Vec<bool>> {
            c.matrix_verdicts[k]
                .iter()
                .map(|row| row.iter().map(|v| v.as_ref().is_some_and(|j| j.verdict == verdict)).collect())
                .collect()
        };
        let heat = Heatmap {
            title: &format!("{}: {} / {}", m.test, c.b, c.a),
            row_label: "file size",
            column_label: "record size",
            rows: m.file_sizes.iter().map(|f| size(*f)).collect(),
            columns: m.record_sizes.iter().map(|r| size(*r)).collect(),
            values: m.ratios.clone(),
            marked: Vec::new(),
            within_noise: cells_saying("within noise"),
            no_verdict: cells_saying("no verdict"),
            partial: m.partial.clone(),
            scale: Scale::Diverging,
            unit: "ratio",
        };
        let views: Vec<String> = m.by_record.iter().map(|(r, v)| format!("{} {:.2}", size(*r), v)).collect();
        let rows: Vec<String> = m.by_file.iter().map(|(f, v)| format!("{} {:.2}", size(*f), v)).collect();
        let _ = writeln!(
            h,
            "<h3>{}</h3><div class=\"charts\">{}</div><p>Record-size view (mean ratio per record size): {}<br/>File-size view: {}<br/>\
             {}<br/>{}</p>",
            escape(&m.test),
            heat.render(),
            escape(&views.join(", ")),
            escape(&rows.join(", ")),
            escape(&mean_change(&m.overall)),
            escape(&matrix_verdicts(&c.matrix_verdicts[k]))
        );
        if let Some(t) = &m.region {
            let _ = writeln!(
                h,
                "<p>In the region asked for: mean change {:+.1}% over {} cells.</p>",
                t.mean_change_pct, t.cells
            );
        }
    }
    if !c.scalars.is_empty() {
        let _ = writeln!(
            h,
            "<table><tr><th class=\"l\">metric</th><th>A</th><th>B</th><th>change</th><th class=\"l\">verdict</th></tr>"
        );
        for s in &c.scalars {
            let verdict = verdict_words(&s.metric, &s.verdict);
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}{} ({})</td><td>{}</td><td>{}</td><td>{:+.1}%</td><td class=\"{}\">{}</td></tr>",
                escape(&s.metric),
                if s.partial { PARTIAL_MARK } else { "" },
                escape(s.unit),
                short(s.a),
                short(s.b),
                s.change_pct,
                verdict_class(s.verdict.verdict),
                escape(&verdict)
            );
        }
        h.push_str("</table>\n");
    }
    operations_html(h, c);
    for (side, cells) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !cells.is_empty() {
            let _ = writeln!(h, "<p class=\"muted\">Only in {side} (not compared): {}</p>", escape(&cells.join(", ")));
        }
    }
}

/// Each phase's per-operation figures (medians over the samples), their change and verdict.
fn operations_html(h: &mut String, c: &Comparison) {
    for t in &c.operations {
        let _ = writeln!(
            h,
            "<h3>{}: per operation</h3><table><tr><th class=\"l\">operation</th><th>A</th><th>B</th><th>change</th>\
             <th class=\"l\">verdict</th></tr>",
            escape(&t.phase)
        );
        for r in &t.rows {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{} {} ({}){}</td><td>{}</td><td>{}</td><td>{:+.1}%</td><td class=\"{}\">{}</td></tr>",
                escape(&r.operation),
                escape(r.figure),
                escape(r.unit),
                if r.partial { PARTIAL_MARK } else { "" },
                short(r.a),
                short(r.b),
                r.change_pct,
                verdict_class(r.verdict.verdict),
                escape(&r.verdict.describe())
            );
        }
        h.push_str("</table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::sample;
    use crate::svg::well_formed;

    #[test]
    fn the_page_is_well_formed_self_contained_and_holds_every_chart_and_value() {
        let report = sample::report();
        let page = render(&report);
        well_formed(&page).unwrap();
        for external in ["<script", "src=", "href=", "@import", "url(", "<link"] {
            assert!(!page.contains(external), "{external} in the page");
        }
        let count = |class: &str| page.matches(&format!("class=\"chart {class}\"")).count();
        assert_eq!(count("heatmap"), 2 * 2 + 2, "two tests of two IOzone groups, two ratio maps");
        // Four IOzone line charts; ten access cells' latency in two charts of at most eight lines;
        // access's figures over its swept queue depth (1 to 10), a line, not a bar per depth.
        assert_eq!(count("lines"), 4 + 2 + 1);
        assert!(page.contains("Latency percentiles (1 of 2;") && page.contains("Latency percentiles (2 of 2;"));
        assert!(page.contains("access 1m/4k read=100% random=100%: MB/s by queue depth"));
        // The two IOzone groups side by side (write and read means).
        assert_eq!(count("bars"), 2);
        assert!(page.contains("write: mean over 4 common cells"));
        // The medians in the cells, in the unit the map names (MB/s for figures of 10k to
        // 150k KB/s, never "150k KB/s"); those above 100 Mbit/s marked.
        let mb = |kib: f64| short(kib / 1024.0);
        assert!(page.contains(">write: MB/s<") && page.contains(">write: MB/s by file size"), "the charts' unit");
        assert!(!page.contains("write: KB/s"), "the charts' unit");
        assert!(page.contains(&format!(">{}<", mb(10e3))) && page.contains(&format!(">{} c<", mb(50e3))), "group 1");
        assert!(page.contains(&format!(">{} c<", mb(150e3))), "group 2,3: medians of 2x and 4x (3 x 50k)");
        // Ratios of 3 on the diverging maps.
        assert!(page.contains(">3.00<"));
        // Environment and conditions of every run, escaped.
        assert!(page.contains("lab&lt;1&gt;") && page.contains("Xeon &amp; co") && page.contains("rw,relatime"));
        assert!(page.contains("access &amp; &lt;co&gt;"));
        for id in ["#1", "#2", "#3", "#4"] {
            assert!(page.contains(&format!("<td class=\"l\">{id}</td>")), "run {id} in an environment table");
        }
        // The boundary sentences.
        for g in &report.groups {
            for b in g.flags.iter().flat_map(|f| &f.boundaries) {
                assert!(page.contains(&escape(b)), "{b}");
            }
        }
        assert!(report.groups[0].flags.as_ref().is_some_and(|f| !f.boundaries.is_empty()));
        // Run 1's hosts, escaped, and the straggler.
        assert!(page.contains("<h3>Hosts of run #1</h3>"));
        assert!(page
            .contains("<td class=\"l\">h&lt;2&gt; (10.0.0.2)</td><td>2</td><td>2000</td><td>1000</td><td>1000</td>"));
        assert!(page.contains("<p class=\"note\">straggler host: h&lt;2&gt; (10.0.0.2) at 0.400x the median host"));
    }

    /// The fills of the side-by-side bars and the classes of the verdict cells.
    fn colours(page: &str) -> (Vec<String>, Vec<String>) {
        let sides =
            page.split("Configurations side by side").nth(1).expect("side by side").split("<h2>").next().unwrap();
        let attr = |text: &str, name: &str| {
            text.split(&format!("{name}=\"")).nth(1).unwrap().split('"').next().unwrap().to_string()
        };
        let fills = sides.split("<rect class=\"bar\"").skip(1).map(|r| attr(r, "fill")).collect();
        let classes = page
            .split("<td class=\"")
            .skip(1)
            .map(|t| t.split('"').next().unwrap().to_string())
            .filter(|c| c != "l")
            .collect();
        (fills, classes)
    }

    #[test]
    fn colour_is_a_verdict_never_a_rank() {
        use crate::svg::{BASELINE_BAR, FASTER_BAR, SLOWER_BAR, UNJUDGED_BAR};
        // B 2% faster than A, the same spread: within noise, though B's bar is the longer one.
        let page = render(&sample::judged(1.02));
        well_formed(&page).unwrap();
        let (fills, classes) = colours(&page);
        assert_eq!(fills, [BASELINE_BAR, UNJUDGED_BAR], "no winner colour within noise");
        assert_eq!(classes, ["unjudged"], "{page}");
        assert!(page.contains(">within noise (p="), "the verdict in the table");
        assert!(page.contains(">1.02 within noise (p="), "the verdict beside the bar: {page}");
        // B at half A: slower beyond noise, red; and the verdict with its p-value.
        let page = render(&sample::judged(0.5));
        let (fills, classes) = colours(&page);
        assert_eq!(fills, [BASELINE_BAR, SLOWER_BAR]);
        assert_eq!(classes, ["slower"]);
        assert!(page.contains(">slower (p=0.008)</td>"), "{page}");
        let page = render(&sample::judged(2.0));
        assert_eq!(
            colours(&page),
            (vec![BASELINE_BAR.to_string(), FASTER_BAR.to_string()], vec!["faster".to_string()])
        );
        // The same runs given twice: the first is the baseline, the second judged against it.
        let mut twice = sample::judged(1.0);
        twice.groups[1].name = "a".into();
        twice.comparisons[0].b = "a".into();
        assert_eq!(colours(&render(&twice)).0, [BASELINE_BAR, UNJUDGED_BAR]);
        // Error bars over each side's five samples, said in the note.
        assert_eq!(page.matches("class=\"spread\"").count(), 2 + 2, "side by side, and each group's figures");
        assert!(page.contains("error bars: lowest to highest sample"));
    }

    #[test]
    fn without_a_comparison_each_system_has_its_colour_and_one_sample_has_no_error_bar() {
        let mut report = sample::report();
        report.comparisons.clear();
        // The access group's ten depths are a sweep (a line chart): one cell of it is a bar.
        let one = sample::cell("access", Some(1 << 20), Some(4096), 1000.0, serde_json::json!({"queue_depth": 1}));
        let runs = vec![sample::run(4, "access", &[], vec![one])];
        let summary = iomatrix_analysis::Group::of("access", &runs, iomatrix_analysis::SuiteShape::PLAIN);
        report.groups[2] =
            crate::document::ReportGroup { name: "access".into(), runs, summary, flags: None, hosts: Vec::new() };
        let page = render(&report);
        let (fills, _) = colours(&page);
        assert!(fills.iter().all(|f| f == SYSTEM_PALETTE[0] || f == SYSTEM_PALETTE[1]), "{fills:?}");
        assert!(fills.contains(&SYSTEM_PALETTE[1].to_string()), "the second group's colour: {fills:?}");
        assert!(page.contains("no error bars: a mean over cells") && page.contains("no error bars: one sample"));
        // Compared: one sample against two, no verdict anywhere: grey, also on the ratio maps.
        let page = render(&sample::report());
        let (fills, _) = colours(&page);
        assert!(fills.iter().all(|f| f == crate::svg::BASELINE_BAR || f == crate::svg::UNJUDGED_BAR), "{fills:?}");
        assert!(page.contains("grey within noise or no verdict"), "the ratio maps' legend");
        assert!(page.contains("cells: no verdict in 4"), "{page}");
    }

    #[test]
    fn a_group_without_cells_still_makes_a_page() {
        let mut report = sample::report();
        for g in &mut report.groups {
            g.runs.iter_mut().for_each(|r| {
                let plan = r.records().plan.clone();
                *r = iomatrix_store::StoredRun::new(
                    r.summary.clone(),
                    plan,
                    serde_json::json!(null),
                    serde_json::json!("odd"),
                    Vec::new(),
                );
            });
            g.summary = iomatrix_analysis::Group::of(&g.name, &g.runs, g.summary.shape);
        }
        report.comparisons.clear();
        let page = render(&report);
        well_formed(&page).unwrap();
        assert!(page.contains("unknown"));
    }
}
