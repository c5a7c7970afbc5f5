//! The report's tables in Markdown: a matrix per test, the scalar figures,
//! the caching boundaries and the comparisons.

use crate::document::{
    grid, is_matrix_suite, matrix_tests, matrix_verdicts, mean_change, not_complete, sides_table, size, HostFigures,
    Report, ReportGroup, PARTIAL_MARK,
};
use iomatrix_analysis::{Comparison, ManyComparison, MatrixComparison};
use iomatrix_core::human;
use std::fmt::Write;

/// The first line of every markdown report: how a later write tells a previous one.
pub const TITLE: &str = "# iomatrix report";

/// The report's tables in Markdown: the title and who made it, each group, the table of every side
/// (three sides or more), then each comparison against the baseline.
pub fn render(report: &Report) -> String {
    let mut m = format!("{TITLE}\n\nMade by `{}` at {} UTC; figures are medians.\n", report.made_by, report.made_at);
    for g in &report.groups {
        group(&mut m, g);
    }
    if let Some(many) = &report.sides {
        sides(&mut m, many);
    }
    curves(&mut m, report);
    for c in &report.comparisons {
        comparison(&mut m, c);
    }
    m
}

/// Each throughput-latency curve: every system's points and its curve's own figures, then each
/// comparison's verdicts on them; nothing where no group ran a curve.
fn curves(m: &mut String, report: &Report) {
    let sides: Vec<_> = report.groups.iter().map(|g| (g.name.as_str(), &g.summary.curves)).collect();
    let ns = |v: Option<f64>| v.map_or_else(|| "-".to_string(), human::nanos);
    let figure = |v: Option<f64>, shown: fn(f64) -> String| v.map_or_else(|| "none".to_string(), shown);
    for (key, lines) in crate::svg_curve::curve_lines(&sides) {
        let _ = writeln!(m, "\n## Curve {}\n", key.describe());
        let _ = writeln!(
            m,
            "| system | load | achieved ops/s | mean | p99 | past the bound |\n|---|---|---:|---:|---:|---|"
        );
        for l in &lines {
            for p in &l.points {
                let past = if p.past_bound { "yes" } else { "no" };
                let rate = human::significant(p.achieved_per_sec);
                let _ = writeln!(
                    m,
                    "| {} | {} | {rate} | {} | {} | {past} |",
                    l.system,
                    p.load,
                    ns(p.mean_ns),
                    ns(p.p99_ns)
                );
            }
        }
        let _ = writeln!(
            m,
            "\n| system | bound | max within the bound (ops/s) | overall response time |\n|---|---|---:|---:|"
        );
        for l in &lines {
            let bound = l.bound.as_deref().unwrap_or("none");
            let within = figure(l.max_within_bound, human::significant);
            let _ = writeln!(m, "| {} | {bound} | {within} | {} |", l.system, ns(l.overall_response_time_ns));
        }
    }
    for c in report.comparisons.iter().filter(|c| !c.curves.is_empty()) {
        let _ = writeln!(m, "\n### Curves, {} against {}\n", c.b, c.a);
        let _ = writeln!(m, "| curve | figure | A | B | change | verdict |\n|---|---|---:|---:|---:|---|");
        for r in &c.curves {
            for (name, f, shown) in crate::svg_curve::figure_rows(r) {
                let change = f.change_pct.map_or_else(|| "-".to_string(), human::signed_percent);
                let verdict = f.verdict.as_ref().map_or_else(|| "-".to_string(), |j| j.describe());
                let (a, b) = (figure(f.a, shown), figure(f.b, shown));
                let _ = writeln!(m, "| {} | {name} | {a} | {b} | {change} | {verdict} |", r.curve);
            }
        }
    }
}

/// One group of runs: its runs' conditions, what is not complete, the caching boundaries, its
/// figures (a matrix per test, or a table of cells) and its hosts.
fn group(m: &mut String, g: &ReportGroup) {
    let ids: Vec<String> = g.runs.iter().map(|r| format!("#{}", r.summary.id)).collect();
    let _ = writeln!(m, "\n## {}: {} suite, run(s) {}\n", g.name, g.summary.suite, ids.join(", "));
    for r in &g.runs {
        let c = r.conditions_facts();
        let _ = writeln!(
            m,
            "- run #{} ({}) on {}: backend {}, direct {}, clients {}, files vs RAM: {}",
            r.summary.id,
            r.summary.status.as_str(),
            r.summary.host,
            c.backend.json(),
            c.direct.json(),
            c.clients.json(),
            c.files_vs_ram.json()
        );
    }
    let lines = not_complete(g);
    if !lines.is_empty() {
        let _ = writeln!(m, "\n**Not complete** (clients or connections failed in these cells):\n");
        for line in lines {
            let _ = writeln!(m, "- {line}");
        }
    }
    if let Some(f) = &g.flags {
        let _ = writeln!(m, "\nCaching limit {}:", f.limit);
        for b in &f.boundaries {
            let _ = writeln!(m, "- {b}");
        }
    }
    if is_matrix_suite(g) {
        matrices(m, g);
    } else {
        cells(m, g);
    }
    for f in &g.hosts {
        hosts(m, f);
    }
}

/// A matrix suite's group: a file-by-record table of KB/s per test.
fn matrices(m: &mut String, g: &ReportGroup) {
    for test in matrix_tests(g) {
        let (files, records, values, marked, partial) = grid(g, &test);
        let _ = writeln!(m, "\n### {test} (KB/s{})\n", if g.flags.is_some() { "; * = above the limit" } else { "" });
        let head: Vec<String> = records.iter().map(|r| size(*r)).collect();
        let _ = writeln!(m, "| file \\ record | {} |", head.join(" | "));
        let _ = writeln!(m, "|---|{}", "---:|".repeat(records.len()));
        for (i, f) in files.iter().enumerate() {
            let cells: Vec<String> = (0..records.len())
                .map(|j| match values[i][j] {
                    Some(v) => format!(
                        "{v:.0}{}{}",
                        if marked[i][j] { "*" } else { "" },
                        if partial[i][j] { PARTIAL_MARK } else { "" }
                    ),
                    None => "-".into(),
                })
                .collect();
            let _ = writeln!(m, "| {} | {} |", size(*f), cells.join(" | "));
        }
    }
}

/// Any other suite's group: one row per cell.
fn cells(m: &mut String, g: &ReportGroup) {
    let _ = writeln!(m, "\n| cell | median | unit | samples | spread |\n|---|---:|---|---:|---:|");
    for (k, s) in &g.summary.cells {
        let _ = writeln!(
            m,
            "| {}{} | {:.1} | {} | {} | {:.1}% |",
            k.describe(),
            if s.partial_samples > 0 { PARTIAL_MARK } else { "" },
            s.median,
            s.unit,
            s.values.len(),
            s.spread_pct
        );
    }
}

/// One run's clients by host, and its stragglers.
fn hosts(m: &mut String, f: &HostFigures) {
    let _ = writeln!(
        m,
        "\n### Hosts of run #{} ({}: each host's clients summed, its slowest and fastest client)\n",
        f.run, f.unit
    );
    let _ = writeln!(m, "| cell | host | clients | sum | slowest | fastest |\n|---|---|---:|---:|---:|---:|");
    let rate = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    for r in &f.rows {
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {} |",
            r.cell,
            r.host,
            r.clients,
            rate(r.sum),
            rate(r.slowest),
            rate(r.fastest)
        );
    }
    for s in &f.stragglers {
        let _ = writeln!(m, "\n{}", s.sentence());
    }
}

/// Every side against the baseline (`compare` with N sides).
fn sides(m: &mut String, many: &ManyComparison) {
    let (header, rows) = sides_table(many);
    let base = &many.sides[many.baseline].letter;
    let _ = writeln!(
        m,
        "\n## Every side against the baseline {base}\n\nEach side's median, its % change from {base}'s and the \
         verdict of the rank test of the samples (Mann-Whitney, two-sided, 5% level); - where a side has no such \
         figure.\n"
    );
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let align: String = header[1..].iter().map(|h| if h == "verdict" { "---|" } else { "---:|" }).collect();
    let _ = writeln!(m, "|---|{align}");
    for row in rows {
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
}

/// One comparison of B against A: what differs, the ratio matrices, the scalars, the cells only
/// one side has.
fn comparison(m: &mut String, c: &Comparison) {
    let _ = writeln!(m, "\n## {} against {} (B/A)\n", c.b, c.a);
    for (what, list) in [("plan", &c.plan_differences), ("environment", &c.environment_differences)] {
        for d in list {
            let _ = writeln!(m, "- {what} differs: {}: {} vs {}", d.name, d.a, d.b);
        }
    }
    for d in &c.condition_differences {
        let _ = writeln!(m, "- conditions differ: {d}");
    }
    for (side, cells) in [("A", &c.left_out_a), ("B", &c.left_out_b)] {
        for l in cells {
            let _ = writeln!(m, "- not complete, left out of {side}: {}", l.describe());
        }
    }
    for (k, x) in c.matrices.iter().enumerate() {
        ratio_matrix(m, c, k, x);
    }
    if !c.scalars.is_empty() {
        // The verdict of the rank test of the samples, as `compare` prints it.
        let _ = writeln!(m, "\n| metric | A | B | change | verdict |\n|---|---:|---:|---:|---|");
        for s in &c.scalars {
            let mark = if s.partial { PARTIAL_MARK } else { "" };
            let _ = writeln!(
                m,
                "| {}{mark} ({}) | {:.1} | {:.1} | {:+.1}% | {} |",
                s.metric,
                s.unit,
                s.a,
                s.b,
                s.change_pct,
                crate::document::verdict_words(&s.metric, &s.verdict)
            );
        }
    }
    for t in &c.operations {
        let _ = writeln!(m, "\n### {}: per operation\n", t.phase);
        let _ = writeln!(m, "| operation | A | B | change | verdict |\n|---|---:|---:|---:|---|");
        for r in &t.rows {
            let mark = if r.partial { PARTIAL_MARK } else { "" };
            let _ = writeln!(
                m,
                "| {} {}{mark} ({}) | {} | {} | {:+.1}% | {} |",
                r.operation,
                r.figure,
                r.unit,
                human::significant(r.a),
                human::significant(r.b),
                r.change_pct,
                r.verdict.describe()
            );
        }
    }
    for (side, cells) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !cells.is_empty() {
            let _ = writeln!(m, "\nOnly in {side}: {}", cells.join(", "));
        }
    }
}

/// The `k`th matrix of ratios B/A, its means and its verdicts.
fn ratio_matrix(m: &mut String, c: &Comparison, k: usize, x: &MatrixComparison) {
    let head: Vec<String> = x.record_sizes.iter().map(|r| size(*r)).collect();
    let _ = writeln!(m, "\n### {}\n\n| file \\ record | {} | mean |", x.test, head.join(" | "));
    let _ = writeln!(m, "|---|{}---:|", "---:|".repeat(x.record_sizes.len()));
    for (i, f) in x.file_sizes.iter().enumerate() {
        // "~": within the run-to-run noise (the comparison's verdict).
        let cells: Vec<String> = x.ratios[i]
            .iter()
            .zip(&c.matrix_verdicts[k][i])
            .map(|(r, v)| {
                let noise = v.as_ref().is_some_and(|j| j.verdict == "within noise");
                r.map_or("-".into(), |r| format!("{r:.2}{}", if noise { "~" } else { "" }))
            })
            .collect();
        let mean = x.by_file.iter().find(|(s, _)| s == f).map_or("-".into(), |(_, v)| format!("{v:.2}"));
        let _ = writeln!(m, "| {} | {} | {mean} |", size(*f), cells.join(" | "));
    }
    let means: Vec<String> = x
        .record_sizes
        .iter()
        .map(|r| x.by_record.iter().find(|(s, _)| s == r).map_or("-".into(), |(_, v)| format!("{v:.2}")))
        .collect();
    let _ = writeln!(m, "| mean | {} | |", means.join(" | "));
    let _ = writeln!(m, "\n{}", mean_change(&x.overall));
    let _ = writeln!(m, "{}", matrix_verdicts(&c.matrix_verdicts[k]));
}

#[cfg(test)]
mod tests {
    use crate::document::sample;

    #[test]
    fn tables_per_test_scalars_boundaries_and_ratios() {
        let report = sample::report();
        let md = super::render(&report);
        assert!(md.contains("### write (KB/s; * = above the limit)"), "{md}");
        assert!(md.contains("| file \\ record | 4k | 64k |"), "{md}");
        assert!(md.contains("| 64k | 10000 | 50000* |"), "{md}");
        assert!(md.contains("| 1m | 30000* | 70000* |"), "{md}");
        assert!(md.contains("| 64k | 30000* | 150000* |"), "group 2,3's medians: {md}");
        for b in report.groups.iter().flat_map(|g| g.flags.iter().flat_map(|f| &f.boundaries)) {
            assert!(md.contains(&format!("- {b}\n")), "{b}");
        }
        assert!(md.contains("## 2,3 against 1 (B/A)"), "{md}");
        assert!(md.contains("| 64k | 3.00 | 3.00 | 3.00 |"), "{md}");
        assert!(md.contains("| mean | 3.00 | 3.00 | |"), "{md}");
        assert!(md.contains("qd=10 read=100% random=100% | 10000.0 | KB/s | 1 | 0.0% |"), "{md}");
    }

    #[test]
    fn the_comparison_has_a_verdict_column() {
        let md = super::render(&sample::judged(0.5));
        assert!(md.contains("| metric | A | B | change | verdict |\n|---|---:|---:|---:|---|"), "{md}");
        assert!(md.contains("| -50.0% | slower (p=0.008) |"), "{md}");
        let md = super::render(&sample::judged(1.0));
        assert!(md.contains("| +0.0% | within noise (p=1.000) |"), "{md}");
    }

    #[test]
    fn a_runs_hosts_each_with_sum_slowest_fastest_and_the_straggler() {
        let md = super::render(&sample::report());
        assert!(md.contains("### Hosts of run #1 (KB/s: each host's clients summed"), "{md}");
        assert!(md.contains("| write 64k 4k | h1 (10.0.0.1) | 2 | 8000 | 4000 | 4000 |"), "{md}");
        assert!(md.contains("| write 64k 4k | h<2> (10.0.0.2) | 2 | 2000 | 1000 | 1000 |"), "{md}");
        assert!(
            md.contains("straggler host: h<2> (10.0.0.2) at 0.400x the median host (geometric mean over 1 cell(s))")
        );
    }
}
