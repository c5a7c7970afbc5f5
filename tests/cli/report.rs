//! `iomatrix report` over real stored runs: every format, and the HTML page
//! looked at in headless Chromium.

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Two small IOzone runs (labelled) and an access run; their ids.
fn runs(sb: &Sandbox) -> (i64, i64, i64) {
    let target = sb.target();
    let t = target.to_str().unwrap();
    let mut ids = Vec::new();
    for (label, direct) in [("io=cached", false), ("io=again", false)] {
        let mut args = vec![
            "run",
            "iozone",
            "--target",
            t,
            "--files",
            "64k,256k",
            "--records",
            "4k,64k",
            "--tests",
            "write,read",
            "--label",
            label,
        ];
        if direct {
            args.push("--direct");
        }
        assert_success(&sb.run(&args));
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap());
    }
    assert_success(&sb.run(&[
        "run",
        "access",
        "--target",
        t,
        "--bs",
        "4k",
        "--file-size",
        "1m",
        "--duration",
        "1s",
        "--qd",
        "1,2",
    ]));
    (ids[0], ids[1], sb.last_run()["run"]["id"].as_i64().unwrap())
}

fn report(sb: &Sandbox, args: &[&str]) -> std::path::PathBuf {
    let out = args.iter().position(|a| *a == "-o").map(|i| std::path::PathBuf::from(args[i + 1])).unwrap();
    assert_success(&sb.run(&[&["report"][..], args].concat()));
    assert!(out.is_file(), "{} not written", out.display());
    out
}

#[test]
fn every_format_holds_the_stored_cells() {
    let sb = Sandbox::new();
    let (a, b, access) = runs(&sb);
    let dir = sb.dir.path();
    let (a_s, b_s, acc_s) = (a.to_string(), b.to_string(), access.to_string());
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // CSV: a row per stored cell.
    let csv = report(&sb, &[&a_s, &b_s, &acc_s, "-o", &path("r.csv")]);
    let text = std::fs::read_to_string(csv).unwrap();
    let stored: usize = [a, b, access].iter().map(|id| cells(&sb.show_json(*id)).len()).sum();
    assert_eq!(text.lines().count(), 1 + stored, "{text}");
    assert!(text.starts_with(
        "run,group,suite,test,file_size,record_size,variant,figure,unit,cached,state,in_medians,labels,verdict\n"
    ));
    // JSON: the schema, the groups, the medians.
    let json = report(&sb, &[&a_s, &b_s, "-o", &path("r.json"), "--limit", "100Mbit"]);
    let doc: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "iomatrix.report/1");
    assert_eq!(doc["groups"].as_array().unwrap().len(), 2);
    assert_eq!(doc["groups"][0]["cells"].as_array().unwrap().len(), 8);
    assert_eq!(doc["comparisons"].as_array().unwrap().len(), 1);
    let first = &doc["groups"][0]["cells"][0];
    assert_eq!(first["cached"], first["median"].as_f64().unwrap() > 100e6 / 8.0 / 1024.0);
    // Markdown: a table per test and the comparison.
    let md = std::fs::read_to_string(report(&sb, &["io=cached", "io=again", "-o", &path("r.md")])).unwrap();
    assert!(md.contains("### write (KB/s)") && md.contains("### read (KB/s)"), "{md}");
    assert!(md.contains("## io=again against io=cached (B/A)"), "{md}");
    // XLSX: a zip with a sheet per test and the conditions.
    let xlsx = report(&sb, &[&a_s, &b_s, &acc_s, "-o", &path("r.xlsx")]);
    let mut zip = zip::ZipArchive::new(std::fs::File::open(xlsx).unwrap()).unwrap();
    let names: Vec<String> = (0..zip.len()).map(|i| zip.by_index(i).unwrap().name().unwrap().to_string()).collect();
    let sheets = names.iter().filter(|n| n.starts_with("xl/worksheets/sheet")).count();
    assert_eq!(
        sheets, 7,
        "write, read, figures (access), lines (its queue depths), over time (its cells' series), verdicts (b against \
         a), conditions: {names:?}"
    );
    assert!(names.iter().filter(|n| n.starts_with("xl/charts/chart")).count() >= 5, "native charts: {names:?}");
    // Bad input.
    assert_usage_error(&sb.run(&["report", &a_s, "-o", &path("r.pdf")]), ".html, .xlsx, .csv, .md or .json");
    assert_usage_error(&sb.run(&["report", "99", "-o", &path("x.html")]), "no run #99");
    let mixed = format!("{a},{access}");
    assert_usage_error(&sb.run(&["report", &mixed, "-o", &path("x.html")]), "a group holds repeats of one setup");
    assert!(!dir.join("x.html").exists());
}

fn chromium(profile: &Path) -> Command {
    let mut cmd = Command::new("chromium");
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

#[test]
fn the_html_report_loads_in_chromium_without_errors_and_shows_its_charts() {
    if !have("chromium") {
        return skip("the HTML report test needs Debian's chromium (apt-get install chromium)");
    }
    let sb = Sandbox::new();
    let (a, b, access) = runs(&sb);
    let page = sb.dir.path().join("report.html");
    let page_s = page.to_str().unwrap().to_string();
    report(&sb, &[&a.to_string(), &b.to_string(), &access.to_string(), "-o", &page_s, "--limit", "100Mbit"]);
    // Self-contained: nothing to fetch, no script.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("<link"), "external parts");
    let url = format!("file://{}", page.display());
    let profile = sb.dir.path().join("chromium-profile");
    // The rendered DOM: every chart is there after the page loaded.
    let mut dump = chromium(&profile);
    dump.args(["--enable-logging=stderr", "--v=0", "--dump-dom"]).arg(&url);
    let out = bounded_child(dump, Duration::from_secs(90));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_eq!(dom.matches("class=\"chart heatmap\"").count(), 2 + 2 + 2, "two tests x two runs, two ratio maps");
    let lines = dom.matches("class=\"chart lines\"").count();
    assert_eq!(lines, 4 + 1 + 1, "a line chart per test and run, latency, the access run's queue depths");
    assert!(dom.contains("Latency percentiles"), "the access run's latency plot");
    // Write and read of the two IOzone runs side by side (the access run's figures are its line).
    assert_eq!(dom.matches("class=\"chart bars\"").count(), 2);
    assert_eq!(dom.matches("<td class=\"l\">#").count(), 3, "the environment of every run");
    assert!(dom.contains("cache dominates") || dom.contains("No cell above the limit"), "the caching flags");
    // Console messages from the page (errors, failed loads) appear as CONSOLE lines.
    let console = |stderr: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(stderr)
            .lines()
            .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
            .map(str::to_string)
            .collect()
    };
    let messages = console(&out.stderr);
    assert!(messages.is_empty(), "console messages: {messages:?}");
    // The same flags do show a page's console errors: a page with one is caught.
    let bad = sb.dir.path().join("bad.html");
    std::fs::write(&bad, "<!DOCTYPE html><html><body><script>console.error('planted')</script></body></html>").unwrap();
    let mut control = chromium(&profile);
    control.args(["--enable-logging=stderr", "--v=0", "--dump-dom"]).arg(format!("file://{}", bad.display()));
    let out = bounded_child(control, Duration::from_secs(90));
    assert!(console(&out.stderr).iter().any(|l| l.contains("planted")), "chromium's log shows no console errors");
    // The screenshot shows the charts: many colours, not a blank page.
    let png = sb.dir.path().join("report.png");
    let mut shot = chromium(&profile);
    shot.arg(format!("--screenshot={}", png.display())).arg("--window-size=1300,2400").arg(&url);
    let out = bounded_child(shot, Duration::from_secs(90));
    assert!(out.status.success() && png.is_file(), "{}", String::from_utf8_lossy(&out.stderr));
    let ((width, height), colours) = png_colours(&png);
    assert!((width, height) == (1300, 2400), "{width}x{height}");
    assert!(colours.len() > 50, "{} colours: the page looks blank", colours.len());
    // Blue cells of the heatmaps are on the page.
    assert!(colours.iter().any(|c| c.len() == 3 && c[2] > 150 && c[0] < 90), "no heatmap blue");
}

/// Repeated runs: the ratio maps say which cells are within noise; a run against itself is all noise.
#[test]
fn ratio_maps_mark_the_cells_within_noise() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    for label in ["rep=a", "rep=b"] {
        assert_success(&sb.run(&[
            "run",
            "iozone",
            "--target",
            t,
            "--files",
            "64k",
            "--records",
            "4k,64k",
            "--tests",
            "write,read",
            "--repeat",
            "4",
            "--label",
            label,
        ]));
    }
    let path = |name: &str| sb.dir.path().join(name).to_str().unwrap().to_string();
    let md = std::fs::read_to_string(report(&sb, &["rep=a", "rep=b", "-o", &path("r.md")])).unwrap();
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("Beyond noise (Mann-Whitney, 5%)")).collect();
    assert_eq!(lines.len(), 2, "one per test: {md}");
    for line in lines {
        // "B faster in F, slower in S; within noise (~) W; no verdict (too few samples) 0."
        let numbers: Vec<usize> =
            line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
        assert_eq!(numbers[1..].iter().sum::<usize>(), 2, "two cells a test, 4 samples a side: {line}");
        assert_eq!(numbers.last(), Some(&0), "{line}");
    }
    // A run against itself: every cell within noise, marked in both formats.
    let md = std::fs::read_to_string(report(&sb, &["rep=a", "rep=a", "-o", &path("same.md")])).unwrap();
    assert!(md.contains("| 64k | 1.00~ | 1.00~ | 1.00 |"), "{md}");
    let html = std::fs::read_to_string(report(&sb, &["rep=a", "rep=a", "-o", &path("same.html")])).unwrap();
    assert!(html.contains("within noise (Mann-Whitney, 5%)") && html.contains(">1.00~<"), "the ratio map's mark");
}

/// The SVG elements of `class` in a page, each as its text.
fn charts<'a>(page: &'a str, class: &str) -> Vec<&'a str> {
    let open = format!("class=\"chart {class}\"");
    page.match_indices(&open).map(|(at, _)| &page[at..at + page[at..].find("</svg>").unwrap()]).collect()
}

/// A number as `iomatrix_core::human::compact` writes it, its suffix read back.
fn compact_value(text: &str) -> Option<f64> {
    let (number, factor) = match text.chars().last()? {
        'k' => (&text[..text.len() - 1], 1e3),
        'M' => (&text[..text.len() - 1], 1e6),
        'G' => (&text[..text.len() - 1], 1e9),
        _ => (text, 1.0),
    };
    number.parse::<f64>().ok().map(|v| v * factor)
}

/// Issue 32: a heatmap of GB/s said "2.24M" in KB/s, and the faster side's bars were red. Issue
/// 50: a bar's colour is its verdict, never its rank: one run a side gives no verdict, so no bar
/// is green or red however far apart they are.
#[test]
fn the_html_charts_speak_in_the_unit_they_name_and_no_side_wins_without_a_verdict() {
    let sb = Sandbox::new();
    let (a, b, _) = runs(&sb);
    let page = sb.dir.path().join("units.html");
    report(&sb, &[&a.to_string(), &b.to_string(), "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let heatmaps: Vec<&str> = charts(&html, "heatmap").into_iter().filter(|h| !h.contains(" / ")).collect();
    assert!(!heatmaps.is_empty());
    for map in heatmaps {
        let title = map.split("font-weight=\"bold\">").nth(1).unwrap().split('<').next().unwrap();
        let unit =
            ["KB/s", "MB/s", "GB/s"].into_iter().find(|u| title.ends_with(u)).unwrap_or_else(|| panic!("{title}"));
        // The scale's top end, "<figure> <unit>": a figure below 1024 in that unit, no k or M.
        let top = map.rsplit(&format!(" {unit}</text>")).nth(1).unwrap().rsplit('>').next().unwrap();
        let value = compact_value(top).unwrap_or_else(|| panic!("{top}"));
        assert!(!top.ends_with(['k', 'M', 'G']) && value < 1024.0, "{title}: scale ends at {top} {unit}");
        assert!(unit == "KB/s" || value >= 1.0, "{title}: {top} {unit} should be in the unit below");
    }
    // Side by side: the baseline's bar slate, the other grey with "no verdict (1 vs 1 samples)".
    let sides: Vec<&str> = charts(&html, "bars").into_iter().filter(|c| c.contains("common cells")).collect();
    assert_eq!(sides.len(), 2, "write and read of the two runs");
    for chart in sides {
        let bars: Vec<(f64, String)> = chart
            .split("<rect ")
            .skip(1)
            .map(|r| {
                let attr =
                    |name: &str| r.split(&format!("{name}=\"")).nth(1).unwrap().split('"').next().unwrap().to_string();
                (attr("width").parse().unwrap(), attr("fill"))
            })
            .collect();
        assert_eq!(bars.len(), 2, "{chart}");
        assert_eq!((bars[0].1.as_str(), bars[1].1.as_str()), ("#5b6b8c", "#a6a6a6"), "baseline, then grey: {chart}");
        assert!(chart.contains("cells: no verdict in 4"), "each cell's verdict counted: {chart}");
    }
}
