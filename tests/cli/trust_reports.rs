//! Issue 50: a verdict wherever a difference is shown. Two stored groups of real access runs,
//! five repeats a side: one uncapped, one held to 200 IOPS by `--rate` (a real slowdown). Every
//! report format carries the verdicts `compare` gives; in Chromium, the HTML's colours are
//! verdicts: a group against itself (every figure within noise) shows no winner's colour, the
//! capped group against the uncapped one shows its slowdown in red.
//!
//! The runs' cells are kept clean of the other tests running beside them by taking disturbed
//! cells into the reports (`--include-disturbed`): what is tested here is how a report shows a
//! verdict, not whether the machine was quiet, and a cell left out would leave a side with too
//! few samples for one.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What `judge` gives five samples a side that do not overlap: the smallest two-sided p-value
/// of the exact rank test, 2 / C(10, 5).
const SLOWER: &str = "slower (p=0.008)";

/// The verdict colours the report draws with (crates/report/src/svg.rs), as Chromium computes them.
const GREEN: &str = "rgb(26, 152, 80)";
const RED: &str = "rgb(215, 48, 39)";
/// The fill of a table cell whose verdict is "slower".
const SLOWER_CELL: &str = "rgb(249, 220, 217)";

/// Stores the two groups: five repeats of one access cell uncapped (`side=free`) and held to
/// 200 IOPS (`side=capped`); the free run's id.
fn two_groups(sb: &Sandbox) -> String {
    let target = sb.target();
    let t = target.to_str().unwrap();
    let mut free = String::new();
    for (label, cap) in [("side=free", None), ("side=capped", Some("200"))] {
        let mut args = vec![
            "run",
            "access",
            "--target",
            t,
            "--bs",
            "4k",
            "--file-size",
            "1m",
            "--qd",
            "1",
            "--duration",
            "300ms",
            "--repeat",
            "5",
            "--label",
            label,
        ];
        if let Some(cap) = cap {
            args.extend(["--rate", cap]);
        }
        assert_success(&sb.run(&args));
        if cap.is_none() {
            free = sb.last_run()["run"]["id"].as_i64().unwrap().to_string();
        }
    }
    free
}

/// `iomatrix report A B -o NAME` (disturbed cells taken in); the file's path.
fn report(sb: &Sandbox, sides: [&str; 2], name: &str) -> PathBuf {
    let out = sb.dir.path().join(name);
    let o = out.to_str().unwrap();
    assert_success(&sb.run(&["report", sides[0], sides[1], "-o", o, "--include-disturbed"]));
    out
}

#[test]
fn every_format_carries_the_verdict_compare_gives() {
    let sb = Sandbox::new();
    two_groups(&sb);
    let compare =
        String::from_utf8_lossy(&sb.run(&["compare", "side=free", "side=capped", "--include-disturbed"]).stdout)
            .to_string();
    assert!(compare.contains(SLOWER), "compare calls the capped side slower: {compare}");
    let sides = ["side=free", "side=capped"];

    // Markdown: a verdict column beside metric | A | B | change.
    let md = std::fs::read_to_string(report(&sb, sides, "r.md")).unwrap();
    assert!(md.contains("| metric | A | B | change | verdict |"), "{md}");
    let kbs = md.lines().find(|l| l.contains("(KB/s) |")).unwrap_or_else(|| panic!("no KB/s row: {md}"));
    assert!(kbs.ends_with(&format!("| {SLOWER} |")), "{kbs}");

    // CSV: each stored sample's row names its figure's verdict; the baseline's says so.
    let csv = std::fs::read_to_string(report(&sb, sides, "r.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(",labels,verdict"), "{header}");
    let verdicts = |label: &str| -> Vec<String> {
        csv.lines().filter(|l| l.contains(label)).map(|l| l.rsplit(',').next().unwrap().to_string()).collect()
    };
    assert_eq!(verdicts("side=free"), vec!["baseline"; 5], "{csv}");
    assert_eq!(verdicts("side=capped"), vec![SLOWER; 5], "{csv}");

    // XLSX: a verdicts sheet, the verdict among its strings.
    let xlsx = report(&sb, sides, "r.xlsx");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(xlsx).unwrap()).unwrap();
    let mut read = |name: &str| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut text).unwrap();
        text
    };
    let workbook = read("xl/workbook.xml");
    assert!(workbook.contains("name=\"verdicts\""), "{workbook}");
    let strings = read("xl/sharedStrings.xml");
    for text in ["verdict", "p-value", "side=capped against side=free", SLOWER] {
        assert!(strings.contains(&format!(">{text}<")), "{text} not in the workbook: {strings}");
    }

    // HTML: the comparison's table and the side-by-side bar carry the verdict.
    let html = std::fs::read_to_string(report(&sb, sides, "r.html")).unwrap();
    assert!(html.contains(&format!("<td class=\"slower\">{SLOWER}</td>")), "the table's verdict");
    assert!(html.contains(&format!(" {SLOWER}</text>")), "the bar's verdict");
    assert!(html.contains("error bars: lowest to highest sample"), "five samples a side: error bars");
}

/// The page at `page` as Chromium draws it: a copy with a script that writes, into a `<pre>`,
/// each side-by-side bar's computed fill and each verdict cell's computed background, one a line
/// ("bar rgb(...)", "cell rgb(...)").
fn computed_colours(sb: &Sandbox, page: &Path) -> Vec<String> {
    const PROBE: &str = "<pre id=\"probe\"></pre><script>\
        const out = [];\
        for (const r of document.querySelectorAll('rect.bar')) out.push('bar ' + getComputedStyle(r).fill);\
        for (const c of document.querySelectorAll('td.faster, td.slower, td.unjudged'))\
          out.push('cell ' + getComputedStyle(c).backgroundColor);\
        document.getElementById('probe').textContent = out.join('\\n');\
        </script></body>";
    let html = std::fs::read_to_string(page).unwrap();
    assert!(!html.contains("<script"), "the report itself runs no script");
    let probed = page.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", PROBE)).unwrap();
    let mut dump = Command::new("chromium");
    dump.args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--dump-dom"])
        .arg(format!("--user-data-dir={}", sb.dir.path().join("chromium-profile").display()))
        .arg(format!("file://{}", probed.display()));
    let out = bounded_child(dump, Duration::from_secs(90));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = String::from_utf8_lossy(&out.stdout);
    let probe = dom.split("<pre id=\"probe\">").nth(1).and_then(|p| p.split("</pre>").next()).expect("the probe");
    probe.lines().map(str::to_string).collect()
}

#[test]
fn in_chromium_colour_is_a_verdict_never_a_rank() {
    if !have("chromium") {
        return skip("the verdict colours test needs Debian's chromium (apt-get install chromium)");
    }
    let sb = Sandbox::new();
    let free = two_groups(&sb);
    // A group against itself (named once by its label, once by its run): every figure within
    // noise, whichever bar is drawn longer.
    let same = computed_colours(&sb, &report(&sb, ["side=free", &free], "same.html"));
    println!("within noise: {same:?}");
    assert!(same.iter().filter(|c| c.starts_with("bar ")).count() >= 2, "the side-by-side bars: {same:?}");
    assert!(same.iter().any(|c| c.starts_with("cell ")), "the verdict cells: {same:?}");
    for colour in &same {
        assert!(!colour.ends_with(GREEN) && !colour.ends_with(RED), "a winner's colour within noise: {same:?}");
        assert!(colour.starts_with("bar") || colour.ends_with("rgb(238, 238, 238)"), "grey verdict cells: {same:?}");
    }
    // The capped group against the free one: slower beyond noise, in red.
    let slower = computed_colours(&sb, &report(&sb, ["side=free", "side=capped"], "slower.html"));
    println!("capped: {slower:?}");
    assert!(slower.contains(&format!("bar {RED}")), "the capped side's bar is red: {slower:?}");
    assert!(slower.contains(&format!("cell {SLOWER_CELL}")), "its verdict cell is red: {slower:?}");
}
