//! Throughput-latency curves in `compare` and `report` (issue 52): two real curves on a tmpfs file
//! (no throttled device: the figures' values do not matter here, only that what is shown is what
//! was stored), then compare's verdicts on the curves' own figures, the HTML report's curve chart
//! looked at in Debian's chromium (every system a line, a legend entry each, no two labels
//! overlapping), and the workbook's native scatter chart whose series hold the stored rates.
use crate::helpers::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The curve's name in compare and the reports: the points' cell without the load.
const CURVE: &str = "access 8m/4k qd=4 read=100% random=100%";

/// Every comparison and report here takes disturbed cells in: beside the other tests on 2 CPUs
/// the machine is busy in most cells (a disturbed state), and what is checked is that what is
/// shown is what was stored, not the storage's figures.
const DISTURBED: &str = "--include-disturbed";

/// Curves of `labels.len()` systems (a run each, labelled `fs=NAME`) on a tmpfs file: the
/// maximum, then 10, 50 and 90% of it, half a second each, bound p99 <= 1 s. Their ids, and the
/// mount, which must outlive nothing but the runs.
fn curves(sb: &Sandbox, labels: &[&str]) -> Option<Vec<i64>> {
    let tmpfs = Mount::virtual_fs("tmpfs", "size=64m")?;
    let target = tmpfs.point.to_str().unwrap().to_string();
    let mut ids = Vec::new();
    for label in labels {
        let label = format!("fs={label}");
        let args = ["run", "access", "--target", &target, "--bs", "4k", "--file-size", "8m", "--qd", "4"];
        let curve = ["--read", "100", "--random", "100", "--curve", "10,50,90", "--stop-curve", "p99:1s"];
        let out = sb.run(&[&args[..], &curve, &["--duration", "500ms", "--label", &label]].concat());
        assert_success(&out);
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap());
    }
    Some(ids)
}

/// Each stored point of run `id`: (its achieved IOPS, its curve figures), in the order stored.
fn points(sb: &Sandbox, id: i64) -> Vec<(f64, Value)> {
    cells(&sb.show_json(id))
        .iter()
        .map(|c| (c["metrics"]["iops"].as_f64().unwrap(), c["metrics"]["curve"].clone()))
        .collect()
}

#[test]
fn compare_gives_each_curves_own_figures_a_verdict_in_text_json_and_n_sides() {
    let sb = Sandbox::new();
    let Some(ids) = curves(&sb, &["a", "b", "c"]) else { return };
    let [a, b, c] = [ids[0], ids[1], ids[2]].map(|id| id.to_string());
    let out = sb.run(&["compare", &a, &b, DISTURBED]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    let at = stdout.find("\nCurves:").unwrap_or_else(|| panic!("no curves table:\n{stdout}"));
    let rows: Vec<&str> = stdout[at..].lines().filter(|l| l.starts_with(CURVE)).collect();
    eprintln!("{}", &stdout[at..]);
    assert_eq!(rows.len(), 1, "one row for the one curve (not one per point):\n{stdout}");
    let row = rows[0];
    assert!(row.contains("p99 <= 1.00 s"), "the bound: {row}");
    assert_eq!(row.matches("no verdict (1 vs 1 samples)").count(), 2, "a verdict for each figure: {row}");
    assert!(stdout[at..].contains("a curve a side is one sample of each figure, with no noise estimate"), "{stdout}");
    // The JSON's figures are the stored ones: each side's last point holds its curve's own.
    let json = sb.run(&["compare", &a, &b, "--json", DISTURBED]);
    assert_success(&json);
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let row = &doc["comparison"]["curves"][0];
    assert_eq!(row["curve"], CURVE);
    for (side, id) in [("a", ids[0]), ("b", ids[1])] {
        let stored = points(&sb, id);
        let last = &stored.last().unwrap().1;
        assert_eq!(row["max_within_bound"][side], last["max_within_bound_iops"], "{side}: {row}");
        assert_eq!(row["overall_response_time"][side], last["overall_response_time_ns"], "{side}: {row}");
        let highest = stored.iter().map(|p| p.0).fold(0.0, f64::max);
        assert_eq!(last["max_within_bound_iops"].as_f64(), Some(highest), "every point is within 1 s at p99");
    }
    assert_eq!(row["max_within_bound"]["verdict"]["verdict"], "no verdict");
    assert!(row["overall_response_time"]["verdict"]["repeats_needed"].as_u64() > Some(1), "{row}");
    // N sides: the curve's figures are rows of the one table, a column per side.
    let out = sb.run(&["compare", &a, &b, &c, DISTURBED]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    for figure in [format!("{CURVE}: max within p99 <= 1.00 s (IOPS)"), format!("{CURVE}: overall response time (ns)")]
    {
        let line = stdout.lines().find(|l| l.starts_with(&figure)).unwrap_or_else(|| panic!("{figure}:\n{stdout}"));
        assert_eq!(line.matches("no verdict").count(), 2, "B and C against A: {line}");
    }
}

fn chromium(profile: &Path) -> Command {
    let mut cmd = Command::new("chromium");
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// Measures every text box of each curve chart on the page as Chromium lays it out, and writes
/// the pairs of one chart that overlap (and how many boxes it measured) into the page, for
/// `--dump-dom`.
const MEASURE: &str = r"<script>
const hits = [];
let measured = 0;
for (const chart of document.querySelectorAll('svg.chart.curve')) {
  const boxes = [...chart.querySelectorAll('text')].map(t => [t.textContent, t.getBoundingClientRect()]);
  measured += boxes.length;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, p] = boxes[i], [b, q] = boxes[j];
    if (p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom) hits.push(a + ' / ' + b);
  }
}
document.getElementById('result').textContent = JSON.stringify({measured, overlaps: hits});
</script>";

/// Every `<svg class="chart curve"...>...</svg>` of `html`, in order.
fn curve_charts(html: &str) -> Vec<&str> {
    let open = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart curve\"";
    html.match_indices(open).map(|(start, _)| &html[start..start + html[start..].find("</svg>").unwrap() + 6]).collect()
}

#[test]
fn the_html_report_draws_every_system_on_one_curve_chart_with_no_labels_overlapping() {
    if !have("chromium") {
        return skip("the HTML curve chart test needs Debian's chromium (apt-get install chromium)");
    }
    let sb = Sandbox::new();
    let Some(ids) = curves(&sb, &["a", "b"]) else { return };
    let page = sb.dir.path().join("report.html");
    assert_success(&sb.run(&["report", "fs=a", "fs=b", "-o", page.to_str().unwrap(), DISTURBED]));
    let html = std::fs::read_to_string(&page).unwrap();
    let charts = curve_charts(&html);
    assert_eq!(charts.len(), 2, "one curve: its mean and its p99 chart");
    assert!(charts[1].contains(&format!("{CURVE}: p99 latency by achieved ops/s")), "{}", charts[1]);
    let chart = charts[0];
    assert!(chart.contains(&format!("{CURVE}: mean latency by achieved ops/s")), "{chart}");
    assert_eq!(chart.matches("<polyline").count(), 2, "a line per system: {chart}");
    for name in ["fs=a", "fs=b"] {
        assert!(chart.contains("class=\"legend\" x=") && chart.contains(&format!(">{name}</text>")), "{name}");
    }
    // The points sit at the rates stored: each system's data-x values are its points' IOPS.
    for (name, id) in [("fs=a", ids[0]), ("fs=b", ids[1])] {
        let mut drawn: Vec<f64> = chart
            .split("<circle")
            .skip(1)
            .filter(|c| c.contains(&format!("<title>{name} at load")))
            .map(|c| c.split("data-x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
            .collect();
        let mut stored: Vec<f64> = points(&sb, id).iter().map(|p| p.0).collect();
        drawn.sort_by(f64::total_cmp);
        stored.sort_by(f64::total_cmp);
        assert_eq!(drawn, stored, "{name}: the chart's rates are the stored ones");
    }
    assert!(html.contains("<table class=\"curve\">") && html.contains("max within the bound"), "the curve table");
    assert!(html.contains("Curves, fs=b against fs=a"), "the comparison's verdicts on the curve");
    // Chromium lays the page out without a console message, and the chart's labels apart.
    let profile = sb.dir.path().join("chromium-profile");
    let mut load = chromium(&profile);
    load.args(["--enable-logging=stderr", "--v=0", "--dump-dom"]).arg(format!("file://{}", page.display()));
    let out = bounded_child(load, Duration::from_secs(90));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let console: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let measured = sb.dir.path().join("measure.html");
    let both = charts.concat();
    let body = format!("<!DOCTYPE html><html><body>{both}<pre id=\"result\">not run</pre>{MEASURE}</body></html>");
    std::fs::write(&measured, body).unwrap();
    let mut dump = chromium(&profile);
    dump.arg("--dump-dom").arg(format!("file://{}", measured.display()));
    let out = bounded_child(dump, Duration::from_secs(90));
    let dom = String::from_utf8_lossy(&out.stdout);
    let result = dom.split("<pre id=\"result\">").nth(1).and_then(|r| r.split("</pre>").next()).unwrap_or("");
    let result: Value = serde_json::from_str(&result.replace("&quot;", "\"")).unwrap_or_else(|e| panic!("{e}: {dom}"));
    eprintln!("text boxes: {result}");
    assert!(result["measured"].as_u64().unwrap() >= 24, "two charts' titles, axes, ticks, legends: {result}");
    assert_eq!(result["overlaps"], serde_json::json!([]), "labels that overlap");
    screenshot(&sb, &profile, chart);
}

/// The chart alone as a PNG, looked at: many colours, not a blank page. With
/// IOMATRIX_SCREENSHOT=write it is copied to docs/curve-chart.png (docs/curves.md shows it).
fn screenshot(sb: &Sandbox, profile: &Path, chart: &str) {
    let alone = sb.dir.path().join("chart.html");
    std::fs::write(&alone, format!("<!DOCTYPE html><html><body style=\"margin:0\">{chart}</body></html>")).unwrap();
    let png = sb.dir.path().join("chart.png");
    let mut shot = chromium(profile);
    let width: f64 = chart.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    shot.arg(format!("--screenshot={}", png.display())).arg(format!("--window-size={},330", width.ceil()));
    shot.arg(format!("file://{}", alone.display()));
    let out = bounded_child(shot, Duration::from_secs(90));
    assert!(out.status.success() && png.is_file(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, colours) = png_colours(&png);
    assert!(colours.len() > 20, "the screenshot is nearly blank: {} colours", colours.len());
    // The first system's line, the palette's blue (#1f77b4), is drawn.
    assert!(colours.contains(&vec![0x1f, 0x77, 0xb4]), "no line of the first system's colour");
    if std::env::var("IOMATRIX_SCREENSHOT").as_deref() == Ok("write") {
        std::fs::copy(&png, Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/curve-chart.png")).unwrap();
    }
}

/// Every number of a chart series' cache under `tag` (`c:xVal`, `c:yVal`), in order.
fn cached(series: &str, tag: &str) -> Vec<f64> {
    let part = series.split(&format!("<{tag}>")).nth(1).unwrap().split(&format!("</{tag}>")).next().unwrap();
    part.split("<c:v>").skip(1).map(|v| v.split("</c:v>").next().unwrap().parse().unwrap()).collect()
}

#[test]
fn the_workbook_charts_each_curve_as_one_scatter_chart_of_every_system() {
    let sb = Sandbox::new();
    let Some(ids) = curves(&sb, &["a", "b"]) else { return };
    let book = sb.dir.path().join("report.xlsx");
    assert_success(&sb.run(&["report", "fs=a", "fs=b", "-o", book.to_str().unwrap(), DISTURBED]));
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&book).unwrap()).unwrap();
    let names: Vec<String> = (0..zip.len()).map(|i| zip.by_index(i).unwrap().name().unwrap().to_string()).collect();
    let mut charts = Vec::new();
    for name in names.iter().filter(|n| n.starts_with("xl/charts/chart")) {
        let mut xml = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut xml).unwrap();
        charts.push(xml);
    }
    let curve: Vec<&String> = charts.iter().filter(|x| x.contains("mean latency by achieved ops/s")).collect();
    assert_eq!(curve.len(), 1, "one chart for the one curve");
    let chart = curve[0];
    assert!(chart.contains("<c:scatterChart>"), "a native scatter chart: {chart}");
    let series: Vec<&str> = chart.split("<c:ser>").skip(1).collect();
    assert_eq!(series.len(), 2, "a series per system: {chart}");
    for (s, (name, id)) in series.iter().zip([("fs=a", ids[0]), ("fs=b", ids[1])]) {
        assert!(s.contains(&format!("<c:v>{name}</c:v>")), "the series is {name}'s: {s}");
        assert!(s.contains("<c:f>curves!$C$"), "x from the curves sheet's achieved column: {s}");
        let stored: Vec<f64> = points(&sb, id).iter().map(|p| p.0).collect();
        let mut x = cached(s, "c:xVal");
        let mut want = stored.clone();
        x.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        assert_eq!(x, want, "{name}: the chart's rates are the stored ones");
        let means: Vec<f64> =
            points(&sb, id).iter().map(|p| p.1["latency"]["mean_ns"].as_f64().unwrap() / 1e6).collect();
        assert_eq!(cached(s, "c:yVal").len(), means.len(), "{name}: a mean latency per point");
    }
    // The Markdown report: every system's points at their stored rates, and the verdicts.
    let md = sb.dir.path().join("report.md");
    assert_success(&sb.run(&["report", "fs=a", "fs=b", "-o", md.to_str().unwrap(), DISTURBED]));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains(&format!("## Curve {CURVE}")) && md.contains("### Curves, fs=b against fs=a"), "{md}");
    for (name, id) in [("fs=a", ids[0]), ("fs=b", ids[1])] {
        for (rate, _) in points(&sb, id) {
            let row = format!("| {name} | ");
            let shown = format!(" | {} | ", iomatrix_core::human::significant(rate));
            assert!(md.lines().any(|l| l.starts_with(&row) && l.contains(&shown)), "{name} at {rate}: {md}");
        }
    }
    // The figures over time: a scatter chart per cell that stored them (4 points x 2 runs).
    let over_time = charts.iter().filter(|x| x.contains("ops/s over time")).count();
    assert_eq!(over_time, 8, "a chart over time per cell");
}

#[test]
fn compare_reads_the_metadata_suites_curves_as_a_curve_per_phase() {
    let sb = Sandbox::new();
    let Some(tmpfs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let mut ids = Vec::new();
    for label in ["fs=a", "fs=b"] {
        let target = tmpfs.point.join(&label[3..]);
        std::fs::create_dir(&target).unwrap();
        let args = ["run", "metadata", "--target", target.to_str().unwrap(), "--files-only", "--label", label];
        let curve = ["--phases", "file-create,file-stat", "--items", "1000", "--curve", "20,60"];
        assert_success(&sb.run(&[&args[..], &curve].concat()));
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap());
    }
    let json = sb.run(&["compare", "fs=a", "fs=b", "--json", DISTURBED]);
    assert_success(&json);
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let curves = doc["comparison"]["curves"].as_array().unwrap();
    let names: Vec<&str> = curves.iter().map(|c| c["curve"].as_str().unwrap()).collect();
    assert_eq!(names, ["file-create", "file-stat"], "a curve per phase, its points' load left out: {doc}");
    // Each side's overall response time is its last stored point's, as the phase stores it.
    for (side, id) in [("a", ids[0]), ("b", ids[1])] {
        let run = sb.show_json(id);
        let last = cells(&run).iter().rev().find(|c| c["test"].as_str().unwrap().starts_with("file-create")).cloned();
        let stored = &last.unwrap()["metrics"]["phase"]["curve"]["overall_response_time_ns"];
        assert!(stored.as_f64().is_some_and(|ns| ns > 0.0), "two open-loop points give one: {stored}");
        assert_eq!(&curves[0]["overall_response_time"][side], stored, "{side}");
    }
}

#[test]
fn the_personalities_curves_are_drawn_at_their_operations_a_second() {
    let sb = Sandbox::new();
    let Some(tmpfs) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let target = tmpfs.point.to_str().unwrap();
    let mut ids = Vec::new();
    for label in ["fs=a", "fs=b"] {
        let args = ["run", "personality", "varmail", "--scale", "small", "--target", target, "--label", label];
        assert_success(&sb.run(&[&args[..], &["--curve", "10,50", "--duration", "1s"]].concat()));
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap());
    }
    let json = sb.run(&["compare", "fs=a", "fs=b", "--json", DISTURBED]);
    assert_success(&json);
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["comparison"]["curves"][0]["curve"], "run", "the phase's curve, its load left out: {doc}");
    let page = sb.dir.path().join("report.html");
    assert_success(&sb.run(&["report", "fs=a", "fs=b", "-o", page.to_str().unwrap(), DISTURBED]));
    let html = std::fs::read_to_string(&page).unwrap();
    let chart = curve_charts(&html)[0];
    // A personality stores no rate of its own: a point sits at its operations over its wall time.
    let mut drawn: Vec<f64> = chart
        .split("<circle")
        .skip(1)
        .filter(|c| c.contains("<title>fs=a at load"))
        .map(|c| c.split("data-x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
        .collect();
    let mut stored: Vec<f64> = cells(&sb.show_json(ids[0]))
        .iter()
        .map(|c| c["ops"].as_f64().unwrap() * 1e9 / c["wall_ns"].as_f64().unwrap())
        .collect();
    drawn.sort_by(f64::total_cmp);
    stored.sort_by(f64::total_cmp);
    // Within a rounding of the division's last bit (the test divides in another order).
    let same = drawn.len() == stored.len() && drawn.iter().zip(&stored).all(|(d, s)| (d - s).abs() <= s * 1e-12);
    assert!(same, "fs=a's points at their ops/s: drawn {drawn:?}, stored {stored:?}");
}
