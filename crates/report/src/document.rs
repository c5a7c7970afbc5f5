//! A report over groups of stored runs ([`Report`]), written as HTML (one
//! self-contained file: inline CSS and SVG, no script), Markdown, CSV or
//! JSON (schema "iomatrix.report/1").

use crate::svg::{bar_chart, escape, short, Heatmap, LineChart, Scale, Series};
use iomatrix_analysis::{CacheFlags, CellKey, Comparison, Group};
use iomatrix_core::ByteSize;
use iomatrix_store::StoredRun;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One group of runs (a RUNS argument) with its summary and caching flags.
pub struct ReportGroup {
    pub name: String,
    pub runs: Vec<StoredRun>,
    pub summary: Group,
    pub flags: Option<CacheFlags>,
}

/// What a report shows: the groups, and each later group against the first.
pub struct Report {
    /// The command that made it, and when (UTC).
    pub made_by: String,
    pub made_at: String,
    pub groups: Vec<ReportGroup>,
    pub comparisons: Vec<Comparison>,
}

fn size(bytes: u64) -> String {
    ByteSize(bytes).to_string()
}

/// IOzone's tests in its order, then any others by name.
fn test_order(tests: impl Iterator<Item = String>) -> Vec<String> {
    const IOZONE: [&str; 13] = [
        "write",
        "rewrite",
        "read",
        "reread",
        "random-read",
        "random-write",
        "backward-read",
        "record-rewrite",
        "stride-read",
        "fwrite",
        "refwrite",
        "fread",
        "refread",
    ];
    let set: BTreeSet<String> = tests.collect();
    let mut out: Vec<String> = IOZONE.iter().filter(|t| set.contains(**t)).map(|t| t.to_string()).collect();
    out.extend(set.into_iter().filter(|t| !IOZONE.contains(&t.as_str())));
    out
}

/// A matrix test's cells in one group: (file sizes, record sizes, medians, cached marks).
type Grid = (Vec<u64>, Vec<u64>, Vec<Vec<Option<f64>>>, Vec<Vec<bool>>);

fn grid(group: &ReportGroup, test: &str) -> Grid {
    let keys: Vec<&CellKey> = group
        .summary
        .cells
        .keys()
        .filter(|k| k.test == test && k.variant.is_empty() && k.file_size.is_some() && k.record_size.is_some())
        .collect();
    let files: Vec<u64> = keys.iter().filter_map(|k| k.file_size).collect::<BTreeSet<_>>().into_iter().collect();
    let records: Vec<u64> = keys.iter().filter_map(|k| k.record_size).collect::<BTreeSet<_>>().into_iter().collect();
    let mut values = vec![vec![None; records.len()]; files.len()];
    let mut marked = vec![vec![false; records.len()]; files.len()];
    for k in keys {
        let (Ok(i), Ok(j)) =
            (files.binary_search(&k.file_size.unwrap_or(0)), records.binary_search(&k.record_size.unwrap_or(0)))
        else {
            continue;
        };
        values[i][j] = group.summary.cells.get(k).map(|s| s.median);
        marked[i][j] = group.flags.as_ref().is_some_and(|f| f.is_flagged(k));
    }
    (files, records, values, marked)
}

fn is_matrix_suite(group: &ReportGroup) -> bool {
    group.summary.suite == "iozone"
}

fn matrix_tests(group: &ReportGroup) -> Vec<String> {
    test_order(
        group.summary.cells.keys().filter(|k| k.file_size.is_some() && k.record_size.is_some()).map(|k| k.test.clone()),
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#111;max-width:1300px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:36px}\
h3{font-size:15px;margin-top:22px}table{border-collapse:collapse;margin:8px 0;font-size:12px}\
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\
.note{color:#8a4b00}.charts{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}\
.muted{color:#666;font-size:12px}";

/// The whole report as one HTML page.
pub fn html(report: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iomatrix report</title><style>{STYLE}</style></head><body>\n"
    );
    let _ = writeln!(h, "<h1>iomatrix report</h1>");
    let _ = writeln!(
        h,
        "<p class=\"muted\">Made by <code>{}</code> at {} UTC. Figures are medians over each group's runs (and repeats).</p>",
        escape(&report.made_by),
        escape(&report.made_at)
    );
    for g in &report.groups {
        group_html(&mut h, g);
    }
    configuration_bars(&mut h, report);
    for c in &report.comparisons {
        comparison_html(&mut h, c);
    }
    h.push_str("</body></html>\n");
    h
}

fn group_html(h: &mut String, g: &ReportGroup) {
    let ids: Vec<String> = g.runs.iter().map(|r| format!("#{}", r.summary.id)).collect();
    let _ = writeln!(h, "<h2>{}: {} suite, run(s) {}</h2>", escape(&g.name), escape(&g.summary.suite), ids.join(", "));
    environment_html(h, g);
    if let Some(flags) = &g.flags {
        let _ = writeln!(h, "<h3>Caching</h3><p>Limit: {}.</p>", escape(&flags.limit));
        if flags.boundaries.is_empty() {
            let _ = writeln!(h, "<p>No cell above the limit.</p>");
        }
        for b in &flags.boundaries {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(b));
        }
    }
    if is_matrix_suite(g) {
        for test in matrix_tests(g) {
            let (files, records, values, marked) = grid(g, &test);
            let heat = Heatmap {
                title: &format!("{test}: KB/s"),
                row_label: "file size",
                column_label: "record size",
                rows: files.iter().map(|f| size(*f)).collect(),
                columns: records.iter().map(|r| size(*r)).collect(),
                values: values.clone(),
                marked,
                scale: Scale::Sequential,
                unit: "KB/s",
            };
            let series = records
                .iter()
                .enumerate()
                .map(|(j, r)| Series {
                    name: format!("record {}", size(*r)),
                    points: files
                        .iter()
                        .enumerate()
                        .filter_map(|(i, f)| values[i][j].map(|v| (*f as f64, v)))
                        .collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            let sizes = |x: f64| size(x as u64);
            let lines = LineChart {
                title: &format!("{test}: KB/s by file size, a line per record size"),
                x_label: "file size",
                y_label: "KB/s",
                x_text: &sizes,
                series,
                log_y: false,
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
        let mut by_unit: BTreeMap<&str, Vec<(String, f64)>> = BTreeMap::new();
        for (k, s) in &g.summary.cells {
            by_unit.entry(s.unit).or_default().push((k.describe(), s.median));
        }
        let _ = writeln!(h, "<h3>Figures</h3><div class=\"charts\">");
        for (unit, bars) in by_unit {
            h.push_str(&bar_chart(&g.name, unit, &bars));
        }
        h.push_str("</div>\n");
    }
    latency_html(h, g);
    noise_html(h, g);
}

fn environment_html(h: &mut String, g: &ReportGroup) {
    let _ = writeln!(
        h,
        "<table><tr><th class=\"l\">run</th><th class=\"l\">host</th><th class=\"l\">kernel</th><th class=\"l\">CPU</th>\
         <th>RAM</th><th class=\"l\">file system</th><th class=\"l\">mount options</th><th class=\"l\">backend</th>\
         <th class=\"l\">cache</th><th>clients</th><th class=\"l\">files vs RAM</th><th class=\"l\">labels</th></tr>"
    );
    for r in &g.runs {
        let e = &r.environment;
        let c = &r.conditions;
        let text = |v: &Value| match v {
            Value::Null => "unknown".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let labels: Vec<String> = r.summary.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let ram = e["ram_bytes"]
            .as_u64()
            .map(|b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64))
            .unwrap_or("unknown".into());
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">#{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{} x {}</td><td>{}</td>\
             <td class=\"l\">{} ({})</td><td class=\"l\">{}</td><td class=\"l\">{}{}</td><td class=\"l\">{}</td><td>{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            r.summary.id,
            escape(&r.summary.host),
            escape(&text(&e["kernel"])),
            escape(&text(&e["cpu_count"])),
            escape(&text(&e["cpu_model"])),
            escape(&ram),
            escape(&text(&e["target"]["fs_type"])),
            escape(&text(&e["target"]["mount_source"])),
            escape(&text(&e["target"]["mount_options"])),
            escape(&text(&c["backend"])),
            if c["direct"] == true { ", O_DIRECT" } else { "" },
            escape(&text(&c["cache"])),
            escape(&text(&c["clients"])),
            escape(&text(&c["files_vs_ram"])),
            escape(&labels.join(" "))
        );
    }
    h.push_str("</table>\n");
}

fn latency_html(h: &mut String, g: &ReportGroup) {
    const POINTS: [(&str, f64, &str); 5] = [
        ("p50_ns", 1.0, "p50"),
        ("p90_ns", 2.0, "p90"),
        ("p99_ns", 4.0, "p99"),
        ("p99_9_ns", 8.0, "p99.9"),
        ("p99_99_ns", 16.0, "p99.99"),
    ];
    let series: Vec<Series> = g
        .summary
        .latency
        .iter()
        .take(PALETTE_LIMIT)
        .map(|((key, op), summaries)| Series {
            name: format!("{} {op}", key.describe()),
            points: POINTS
                .iter()
                .filter_map(|(field, x, _)| {
                    let v: Vec<f64> = summaries.iter().filter_map(|s| s[*field].as_f64()).collect();
                    let m = iomatrix_analysis::median(&v);
                    (m > 0.0).then_some((*x, m / 1e3))
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return;
    }
    let label = |x: f64| POINTS.iter().find(|p| p.1 == x).map_or(String::new(), |p| p.2.to_string());
    let chart = LineChart {
        title: "Latency percentiles (microseconds, log scale)",
        x_label: "percentile",
        y_label: "us",
        x_text: &label,
        series,
        log_y: true,
    };
    let _ = writeln!(h, "<h3>Latency</h3><div class=\"charts\">{}</div>", chart.render());
}

/// Lines in one latency chart (beyond, the chart gets unreadable).
const PALETTE_LIMIT: usize = 8;

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

/// One bar per group for each figure all groups have: per matrix test the
/// mean over the cells every group has, elsewhere each cell.
fn configuration_bars(h: &mut String, report: &Report) {
    if report.groups.len() < 2 {
        return;
    }
    let common: BTreeSet<&CellKey> = report.groups[0]
        .summary
        .cells
        .keys()
        .filter(|k| report.groups.iter().all(|g| g.summary.cells.contains_key(*k)))
        .collect();
    if common.is_empty() {
        return;
    }
    let _ = writeln!(h, "<h2>Configurations side by side</h2><div class=\"charts\">");
    let mut figures: BTreeMap<String, (String, Vec<&CellKey>)> = BTreeMap::new();
    for k in &common {
        let matrix = k.variant.is_empty()
            && k.file_size.is_some()
            && k.record_size.is_some()
            && report.groups[0].summary.suite == "iozone";
        let (name, unit) = if matrix {
            (
                format!("{}: mean over {} common cells", k.test, common.iter().filter(|c| c.test == k.test).count()),
                "KB/s".to_string(),
            )
        } else {
            (k.describe(), report.groups[0].summary.cells[*k].unit.to_string())
        };
        figures.entry(name).or_insert((unit, Vec::new())).1.push(k);
    }
    for (name, (unit, keys)) in figures {
        let bars: Vec<(String, f64)> = report
            .groups
            .iter()
            .map(|g| (g.name.clone(), keys.iter().map(|k| g.summary.cells[*k].median).sum::<f64>() / keys.len() as f64))
            .collect();
        h.push_str(&bar_chart(&name, &unit, &bars));
    }
    h.push_str("</div>\n");
}

fn comparison_html(h: &mut String, c: &Comparison) {
    let _ = writeln!(h, "<h2>{} against {} (ratios B/A)</h2>", escape(&c.b), escape(&c.a));
    if c.condition_differences.is_empty() {
        let _ = writeln!(h, "<p class=\"muted\">Same conditions on both sides.</p>");
    }
    for d in &c.condition_differences {
        let _ = writeln!(h, "<p class=\"note\">Conditions differ: {}</p>", escape(d));
    }
    for m in &c.matrices {
        let heat = Heatmap {
            title: &format!("{}: {} / {}", m.test, c.b, c.a),
            row_label: "file size",
            column_label: "record size",
            rows: m.file_sizes.iter().map(|f| size(*f)).collect(),
            columns: m.record_sizes.iter().map(|r| size(*r)).collect(),
            values: m.ratios.clone(),
            marked: Vec::new(),
            scale: Scale::Diverging,
            unit: "ratio",
        };
        let views: Vec<String> = m.by_record.iter().map(|(r, v)| format!("{} {:.2}", size(*r), v)).collect();
        let rows: Vec<String> = m.by_file.iter().map(|(f, v)| format!("{} {:.2}", size(*f), v)).collect();
        let _ = writeln!(
            h,
            "<h3>{}</h3><div class=\"charts\">{}</div><p>Record-size view (mean ratio per record size): {}<br>File-size view: {}<br>\
             Mean change {:+.1}% over {} cells; A faster in {}, B faster in {}.</p>",
            escape(&m.test),
            heat.render(),
            escape(&views.join(", ")),
            escape(&rows.join(", ")),
            m.overall.mean_change_pct,
            m.overall.cells,
            m.overall.a_wins,
            m.overall.b_wins
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
        let _ = writeln!(h, "<table><tr><th class=\"l\">metric</th><th>A</th><th>B</th><th>change</th></tr>");
        for s in &c.scalars {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{} ({})</td><td>{}</td><td>{}</td><td>{:+.1}%</td></tr>",
                escape(&s.metric),
                escape(s.unit),
                short(s.a),
                short(s.b),
                s.change_pct
            );
        }
        h.push_str("</table>\n");
    }
    for (side, cells) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !cells.is_empty() {
            let _ = writeln!(h, "<p class=\"muted\">Only in {side} (not compared): {}</p>", escape(&cells.join(", ")));
        }
    }
}

/// The report's tables in Markdown.
pub fn markdown(report: &Report) -> String {
    let mut m =
        format!("# iomatrix report\n\nMade by `{}` at {} UTC; figures are medians.\n", report.made_by, report.made_at);
    for g in &report.groups {
        let ids: Vec<String> = g.runs.iter().map(|r| format!("#{}", r.summary.id)).collect();
        let _ = writeln!(m, "\n## {}: {} suite, run(s) {}\n", g.name, g.summary.suite, ids.join(", "));
        for r in &g.runs {
            let c = &r.conditions;
            let _ = writeln!(
                m,
                "- run #{} on {}: backend {}, direct {}, clients {}, files vs RAM: {}",
                r.summary.id, r.summary.host, c["backend"], c["direct"], c["clients"], c["files_vs_ram"]
            );
        }
        if let Some(f) = &g.flags {
            let _ = writeln!(m, "\nCaching limit {}:", f.limit);
            for b in &f.boundaries {
                let _ = writeln!(m, "- {b}");
            }
        }
        if is_matrix_suite(g) {
            for test in matrix_tests(g) {
                let (files, records, values, marked) = grid(g, &test);
                let _ = writeln!(
                    m,
                    "\n### {test} (KB/s{})\n",
                    if g.flags.is_some() { "; * = above the limit" } else { "" }
                );
                let head: Vec<String> = records.iter().map(|r| size(*r)).collect();
                let _ = writeln!(m, "| file \\ record | {} |", head.join(" | "));
                let _ = writeln!(m, "|---|{}", "---:|".repeat(records.len()));
                for (i, f) in files.iter().enumerate() {
                    let cells: Vec<String> = (0..records.len())
                        .map(|j| match values[i][j] {
                            Some(v) => format!("{v:.0}{}", if marked[i][j] { "*" } else { "" }),
                            None => "-".into(),
                        })
                        .collect();
                    let _ = writeln!(m, "| {} | {} |", size(*f), cells.join(" | "));
                }
            }
        } else {
            let _ = writeln!(m, "\n| cell | median | unit | samples | spread |\n|---|---:|---|---:|---:|");
            for (k, s) in &g.summary.cells {
                let _ = writeln!(
                    m,
                    "| {} | {:.1} | {} | {} | {:.1}% |",
                    k.describe(),
                    s.median,
                    s.unit,
                    s.values.len(),
                    s.spread_pct
                );
            }
        }
    }
    for c in &report.comparisons {
        let _ = writeln!(m, "\n## {} against {} (B/A)\n", c.b, c.a);
        for d in &c.condition_differences {
            let _ = writeln!(m, "- conditions differ: {d}");
        }
        for x in &c.matrices {
            let head: Vec<String> = x.record_sizes.iter().map(|r| size(*r)).collect();
            let _ = writeln!(m, "\n### {}\n\n| file \\ record | {} | mean |", x.test, head.join(" | "));
            let _ = writeln!(m, "|---|{}---:|", "---:|".repeat(x.record_sizes.len()));
            for (i, f) in x.file_sizes.iter().enumerate() {
                let cells: Vec<String> =
                    x.ratios[i].iter().map(|r| r.map_or("-".into(), |r| format!("{r:.2}"))).collect();
                let mean = x.by_file.iter().find(|(s, _)| s == f).map_or("-".into(), |(_, v)| format!("{v:.2}"));
                let _ = writeln!(m, "| {} | {} | {mean} |", size(*f), cells.join(" | "));
            }
            let means: Vec<String> = x
                .record_sizes
                .iter()
                .map(|r| x.by_record.iter().find(|(s, _)| s == r).map_or("-".into(), |(_, v)| format!("{v:.2}")))
                .collect();
            let _ = writeln!(m, "| mean | {} | |", means.join(" | "));
            let _ = writeln!(
                m,
                "\nMean change {:+.1}% over {} cells; A faster in {}, B faster in {}.",
                x.overall.mean_change_pct, x.overall.cells, x.overall.a_wins, x.overall.b_wins
            );
        }
        if !c.scalars.is_empty() {
            let _ = writeln!(m, "\n| metric | A | B | change |\n|---|---:|---:|---:|");
            for s in &c.scalars {
                let _ = writeln!(m, "| {} ({}) | {:.1} | {:.1} | {:+.1}% |", s.metric, s.unit, s.a, s.b, s.change_pct);
            }
        }
        for (side, cells) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
            if !cells.is_empty() {
                let _ = writeln!(m, "\nOnly in {side}: {}", cells.join(", "));
            }
        }
    }
    m
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per stored cell of every run: every sample, not medians.
pub fn csv(report: &Report) -> String {
    let mut out = String::from("run,group,suite,test,file_size,record_size,variant,figure,unit,cached,labels\n");
    for g in &report.groups {
        for r in &g.runs {
            let labels: Vec<String> = r.summary.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            for cell in &r.cell_results {
                let Some(f) = iomatrix_analysis::Figure::of(cell) else { continue };
                let key = CellKey::of(cell);
                let cached = g.flags.as_ref().map_or(String::new(), |fl| fl.is_flagged(&key).to_string());
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{}",
                    r.summary.id,
                    csv_field(&g.name),
                    csv_field(&r.summary.suite),
                    csv_field(&cell.test),
                    cell.file_size.map(|v| v.to_string()).unwrap_or_default(),
                    cell.record_size.map(|v| v.to_string()).unwrap_or_default(),
                    csv_field(&key.variant),
                    f.value,
                    f.unit,
                    cached,
                    csv_field(&labels.join(" "))
                );
            }
        }
    }
    out
}

/// The report as JSON, schema "iomatrix.report/1" (docs/json.md).
pub fn json(report: &Report) -> Value {
    let groups: Vec<Value> = report
        .groups
        .iter()
        .map(|g| {
            let cells: Vec<Value> = g
                .summary
                .cells
                .iter()
                .map(|(k, s)| {
                    json!({
                        "test": k.test, "file_size": k.file_size, "record_size": k.record_size, "variant": k.variant,
                        "median": s.median, "min": s.min, "max": s.max, "spread_pct": s.spread_pct,
                        "samples": s.values, "unit": s.unit,
                        "cached": g.flags.as_ref().map(|f| f.is_flagged(k)),
                    })
                })
                .collect();
            json!({
                "name": g.name,
                "suite": g.summary.suite,
                "runs": g.runs.iter().map(|r| json!({
                    "id": r.summary.id, "host": r.summary.host, "labels": r.summary.labels,
                    "started_at": r.summary.started_at, "conditions": r.conditions, "environment": r.environment,
                })).collect::<Vec<_>>(),
                "cells": cells,
                "cache_flags": g.flags,
            })
        })
        .collect();
    json!({
        "schema": "iomatrix.report/1",
        "made_by": report.made_by,
        "made_at": report.made_at,
        "groups": groups,
        "comparisons": report.comparisons,
    })
}
