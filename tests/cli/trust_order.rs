//! Issue 50, natural order and the right chart: cells listed by their parameters' values (queue
//! depth 1, 4, 16, 32, never 1, 16, 32, 4 as text sorts them; block sizes 4k < 64k < 1m) by
//! `compare` (two and N sides) and every report format, and a swept queue depth drawn as a line
//! chart, a line per system, not as a bar per depth. Small cells (512k of 4k requests each), so
//! a run of four takes about a second.

use crate::helpers::*;
use crate::stored::json_of;
use std::io::Read;

/// The queue depths the runs sweep, in their order by value.
const DEPTHS: [u64; 4] = [1, 4, 16, 32];

/// An access run over the queue depths 1, 4, 16, 32 (the issue's `run access --qd 1,4,16,32`,
/// which text order lists 1, 16, 32, 4), labelled; its id.
fn depth_run(sb: &Sandbox, label: &str) -> i64 {
    depth_run_in(sb, label, "1,4,16,32")
}

/// As [`depth_run`], the depths measured in the order `depths` gives them.
fn depth_run_in(sb: &Sandbox, label: &str, depths: &str) -> i64 {
    let target = sb.target();
    let t = target.to_str().unwrap();
    let args = ["run", "access", "--target", t, "--bs", "4k", "--file-size", "1m", "--bytes", "512k"];
    assert_success(&sb.run(&[&args[..], &["--qd", depths, "--label", label]].concat()));
    sb.last_run()["run"]["id"].as_i64().unwrap()
}

/// The queue depths named ("qd=N") in `text`, in the order they appear, a depth named on
/// consecutive lines (a cell's rate, then its %CPU) counted once.
fn depths_named(text: &str) -> Vec<u64> {
    let mut named: Vec<u64> = Vec::new();
    for (at, _) in text.match_indices("qd=") {
        let digits: String = text[at + 3..].chars().take_while(char::is_ascii_digit).collect();
        let Ok(depth) = digits.parse::<u64>() else { continue };
        if named.last() != Some(&depth) {
            named.push(depth);
        }
    }
    named
}

/// Every listing of cells in `text` names the depths 1, 4, 16, 32 in that order (once or once
/// per table).
fn assert_listed_in_order(what: &str, text: &str) {
    let named = depths_named(text);
    assert!(!named.is_empty() && named.len() % DEPTHS.len() == 0, "{what}: depths named {named:?} in:\n{text}");
    for listing in named.chunks(DEPTHS.len()) {
        assert_eq!(listing, DEPTHS, "{what}: every listing 1, 4, 16, 32 (named {named:?}) in:\n{text}");
    }
}

/// `report RUNS -o NAME` in the sandbox; the written file's bytes.
fn report(sb: &Sandbox, runs: &[&str], name: &str) -> Vec<u8> {
    let out = sb.dir.path().join(name);
    assert_success(&sb.run(&[&["report"][..], runs, &["-o", out.to_str().unwrap()]].concat()));
    std::fs::read(&out).unwrap_or_else(|e| panic!("{name} not written: {e}"))
}

/// The SVG charts of an HTML page, each from `<svg` to `</svg>`.
fn svgs(page: &str) -> Vec<&str> {
    page.match_indices("<svg").map(|(at, _)| &page[at..at + page[at..].find("</svg>").unwrap() + 6]).collect()
}

#[test]
fn compare_lists_queue_depths_by_value_on_two_and_n_sides() {
    let sb = Sandbox::new();
    let ids: Vec<String> = ["fs=a", "fs=b", "fs=c"].iter().map(|l| depth_run(&sb, l).to_string()).collect();
    let two = sb.run(&["compare", &ids[0], &ids[1]]);
    assert_success(&two);
    assert_listed_in_order("compare, 2 sides", &text(&two).0);
    let doc = json_of(&sb.run(&["compare", &ids[0], &ids[1], "--json"]));
    let metrics: Vec<&str> =
        doc["comparison"]["scalars"].as_array().unwrap().iter().map(|s| s["metric"].as_str().unwrap()).collect();
    assert_listed_in_order("compare --json's scalars", &metrics.join("\n"));
    let many = sb.run(&["compare", &ids[0], &ids[1], &ids[2]]);
    assert_success(&many);
    assert_listed_in_order("compare, 3 sides", &text(&many).0);
}

#[test]
fn every_report_format_lists_queue_depths_by_value() {
    let sb = Sandbox::new();
    // B measured its depths from 32 down: no format lists them in the order measured.
    let (a, b) = (depth_run(&sb, "fs=a").to_string(), depth_run_in(&sb, "fs=b", "32,16,4,1").to_string());
    let runs = [a.as_str(), b.as_str()];
    let markdown = String::from_utf8(report(&sb, &runs, "r.md")).unwrap();
    assert_listed_in_order("Markdown", &markdown);
    let csv = String::from_utf8(report(&sb, &runs, "r.csv")).unwrap();
    assert_listed_in_order("CSV", &csv);
    let json = String::from_utf8(report(&sb, &runs, "r.json")).unwrap();
    assert_listed_in_order("JSON", &json);
    let html = String::from_utf8(report(&sb, &runs, "r.html")).unwrap();
    // The noise table lists the noisiest cells first, by design: every other listing by depth.
    let (before_noise, _) = html.split_once("<h3>Noise").unwrap_or((&html, ""));
    assert_listed_in_order("HTML", before_noise);
    let xlsx = report(&sb, &runs, "r.xlsx");
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(xlsx)).unwrap();
    let mut strings = String::new();
    zip.by_name("xl/sharedStrings.xml").unwrap().read_to_string(&mut strings).unwrap();
    // The figures sheet writes its rows first: its strings, in their order, are the cells'.
    assert_listed_in_order("XLSX", &strings);
    // Its chart of the depths: Excel's lines, a series per group, no bar per depth.
    let charts: Vec<String> = (0..zip.len())
        .filter_map(|i| {
            let mut entry = zip.by_index(i).unwrap();
            let chart = entry.name().unwrap().starts_with("xl/charts/chart");
            let mut xml = String::new();
            (chart && entry.read_to_string(&mut xml).is_ok()).then_some(xml)
        })
        .collect();
    // Beside the "over time" sheet's chart a cell (issue 52), one chart of the depths.
    let (depths, over_time): (Vec<&String>, Vec<&String>) = charts.iter().partition(|c| c.contains("by queue depth"));
    assert_eq!(depths.len(), 1, "one chart, the depths' lines: {charts:?}");
    assert!(over_time.iter().all(|c| c.contains("ops/s over time")), "{over_time:?}");
    assert!(depths[0].contains("<c:lineChart>") && depths[0].matches("<c:ser>").count() == 2, "{}", depths[0]);
    assert!(strings.contains("by queue depth"), "{strings}");
}

/// The line charts over the queue depth among `svgs`: each has `systems` lines, a point per
/// depth, and the depths as its x axis's ticks, left to right; how many there are.
fn depth_lines(what: &str, svgs: &[&str], systems: usize) -> usize {
    let lines: Vec<&&str> = svgs.iter().filter(|s| s.contains("by queue depth")).collect();
    for chart in &lines {
        assert!(chart.contains("class=\"chart lines\""), "{what}: a line chart, not bars:\n{chart}");
        assert_eq!(chart.matches("<polyline").count(), systems, "{what}: a line per system:\n{chart}");
        assert_eq!(chart.matches("<circle").count(), systems * DEPTHS.len(), "{what}: a point per depth:\n{chart}");
        let ticks: Vec<usize> = DEPTHS.iter().filter_map(|d| chart.find(&format!(">{d}</text>"))).collect();
        assert_eq!(ticks.len(), DEPTHS.len(), "{what}: a tick per depth:\n{chart}");
        assert!(ticks.windows(2).all(|w| w[0] < w[1]), "{what}: ticks 1, 4, 16, 32 left to right:\n{chart}");
    }
    let bars_by_depth = svgs.iter().filter(|s| s.contains("chart bars") && s.contains("qd=")).count();
    assert_eq!(bars_by_depth, 0, "{what}: no bar per depth beside the lines");
    lines.len()
}

#[test]
fn a_swept_queue_depth_is_a_line_chart_a_line_per_system() {
    let sb = Sandbox::new();
    let (a, b) = (depth_run(&sb, "fs=a").to_string(), depth_run(&sb, "fs=b").to_string());
    let one = String::from_utf8(report(&sb, &[&a], "one.html")).unwrap();
    assert_eq!(depth_lines("one run", &svgs(&one), 1), 1, "one chart of the run's depths:\n{one}");
    let both = String::from_utf8(report(&sb, &[&a, &b], "both.html")).unwrap();
    let (groups, side_by_side) = both.split_once("Configurations side by side").expect("two groups side by side");
    assert_eq!(depth_lines("each group", &svgs(groups), 1), 2, "a chart per group:\n{both}");
    assert_eq!(depth_lines("side by side", &svgs(side_by_side), 2), 1, "one chart, both systems:\n{both}");
}

#[test]
fn compare_lists_block_sizes_by_bytes() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let mut ids = Vec::new();
    for label in ["fs=a", "fs=b"] {
        let args = ["run", "access", "--target", t, "--bs", "1m,4k,64k", "--file-size", "2m", "--bytes", "1m"];
        assert_success(&sb.run(&[&args[..], &["--label", label]].concat()));
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap().to_string());
    }
    let out = sb.run(&["compare", &ids[0], &ids[1]]);
    assert_success(&out);
    let stdout = text(&out).0;
    let sizes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("access 2m/") && l.contains("(KB/s)"))
        .map(|l| l["access 2m/".len()..].split(' ').next().unwrap())
        .collect();
    assert_eq!(sizes, ["4k", "64k", "1m"], "by bytes, not as text:\n{stdout}");
}

#[test]
fn sweep_by_a_label_of_sizes_orders_its_levels_by_bytes() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let mut ids = Vec::new();
    for bs in ["64k", "4k", "1m"] {
        let args = ["run", "access", "--target", t, "--bs", bs, "--file-size", "2m", "--bytes", "1m"];
        assert_success(&sb.run(&[&args[..], &["--label", &format!("bs={bs}")]].concat()));
        ids.push(sb.last_run()["run"]["id"].as_i64().unwrap().to_string());
    }
    let out = sb.run(&[&["sweep"][..], &ids.iter().map(String::as_str).collect::<Vec<_>>(), &["--by", "bs"]].concat());
    assert_success(&out);
    let stdout = text(&out).0;
    let header: Vec<&str> = stdout.lines().find(|l| l.starts_with("cell ")).unwrap().split_whitespace().collect();
    assert_eq!(header, ["cell", "4k", "64k", "1m"], "levels by bytes, not as text:\n{stdout}");
}
